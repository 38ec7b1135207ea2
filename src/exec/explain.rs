//! EXPLAIN and EXPLAIN ANALYZE: the plan as PostgreSQL-style indented text
//! lines, showing what runs on the shards (filters, partial aggregates, the
//! zone-map ranges that prune segments) and, under ANALYZE, each operator's
//! actual rows and time and each scan's segments and block groups read.
//! `Profile` collects those numbers while the statement runs: `operators::build`
//! wraps every operator of a profiled query in `ProfiledOp`, keyed by the
//! address of its plan node, and fragments count what they read in `ScanStats`.
//! Must not: change how a plan runs (profiling only observes).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::exec::operators::{fold_constants, BatchFuture, BoxedOperator, Operator, QueryContext};
use crate::sql::plan::*;
use crate::storage::scan::Pruning;
use crate::types::{DataType, FormatContext};

/// What one scan read, summed over shards (atomics: fragments run on every shard).
#[derive(Debug, Default)]
pub struct ScanStats {
    pub shards: AtomicU64,
    pub segments: AtomicU64,
    pub segments_read: AtomicU64,
    pub groups: AtomicU64,
    pub groups_read: AtomicU64,
    pub rows_in_memory: AtomicU64,
}

impl ScanStats {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

#[derive(Debug, Default, Clone, Copy)]
pub struct NodeProfile {
    pub rows: u64,
    pub nanos: u64,
    pub started: bool,
}

/// The numbers of one EXPLAIN ANALYZE run, by plan node address.
#[derive(Default)]
pub struct Profile {
    nodes: RefCell<HashMap<usize, NodeProfile>>,
    scans: RefCell<HashMap<usize, Arc<ScanStats>>>,
}

fn node_key(plan: &Plan) -> usize {
    plan as *const Plan as usize
}

impl Profile {
    /// The scan counters of `plan`'s node (created on first use).
    pub fn scan_stats(&self, plan: &Plan) -> Arc<ScanStats> {
        self.scans.borrow_mut().entry(node_key(plan)).or_default().clone()
    }

    pub fn wrap(self: &Rc<Self>, plan: &Plan, inner: BoxedOperator) -> BoxedOperator {
        Box::new(ProfiledOp {
            inner,
            key: node_key(plan),
            profile: self.clone(),
        })
    }
}

struct ProfiledOp {
    inner: BoxedOperator,
    key: usize,
    profile: Rc<Profile>,
}

impl Operator for ProfiledOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            let start = Instant::now();
            let out = self.inner.next().await;
            let mut nodes = self.profile.nodes.borrow_mut();
            let node = nodes.entry(self.key).or_default();
            node.started = true;
            node.nanos += start.elapsed().as_nanos() as u64;
            if let Ok(Some(b)) = &out {
                node.rows += b.len as u64;
            }
            out
        })
    }
}

/// The plan as EXPLAIN's lines (ANALYZE numbers where `profile` has them).
pub fn explain_lines(plan: &Plan, profile: Option<&Profile>, ctx: &QueryContext, shards: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut w = Writer {
        out: &mut out,
        profile,
        format: &ctx.eval.format,
        ctx,
        shards,
    };
    w.node(plan, 0, true);
    out
}

struct Writer<'a> {
    out: &'a mut Vec<String>,
    profile: Option<&'a Profile>,
    format: &'a FormatContext,
    /// The statement's context: bounds computed from constants (`now() -
    /// interval …`) are shown pruning as the scan computes them.
    ctx: &'a QueryContext,
    shards: usize,
}

impl Writer<'_> {
    fn head(&mut self, plan: &Plan, depth: usize, top: bool, title: String) -> usize {
        let indent = if top { String::new() } else { format!("{}->  ", " ".repeat(depth.saturating_sub(1) * 6 + 2)) };
        let mut line = format!("{indent}{title}");
        if let Some(p) = self.profile {
            match p.nodes.borrow().get(&node_key(plan)) {
                Some(n) if n.started => {
                    line.push_str(&format!("  (actual rows={} time={:.3} ms)", n.rows, n.nanos as f64 / 1e6))
                }
                // A scan merged into its parent (filter or partial aggregate) reports under it.
                _ if p.scans.borrow().contains_key(&node_key(plan)) => {}
                _ => line.push_str("  (never executed)"),
            }
        }
        self.out.push(line);
        // Detail lines sit under the title's text.
        if top {
            2
        } else {
            (depth.saturating_sub(1) * 6 + 2) + 6
        }
    }

    fn detail(&mut self, col: usize, text: String) {
        self.out.push(format!("{}{text}", " ".repeat(col)));
    }

    fn exprs(&self, es: &[Expr], fields: &[Field]) -> String {
        es.iter().map(|e| fmt_expr(e, fields, self.format)).collect::<Vec<_>>().join(", ")
    }

    fn node(&mut self, plan: &Plan, depth: usize, top: bool) {
        let child = depth + 1;
        match plan {
            Plan::Scan { .. } | Plan::Filter { .. } if scan_with_filter(plan).is_some() => {
                let Some((table, projection, filter)) = scan_with_filter(plan) else { return };
                self.scan(plan, depth, top, table, projection, filter, None, projection);
            }
            Plan::Filter { input, predicate } => {
                let col = self.head(plan, depth, top, "Filter".into());
                self.detail(col, format!("Filter: {}", fmt_expr(predicate, input.fields(), self.format)));
                self.node(input, child, false);
            }
            Plan::Scan { .. } => {}
            Plan::Values { rows, .. } => {
                self.head(plan, depth, top, format!("Values  ({} rows)", rows.len()));
            }
            Plan::Project { input, exprs, .. } => {
                // A renaming projection (every column in order) says nothing: show its input.
                let identity = exprs.len() == input.fields().len()
                    && exprs.iter().enumerate().all(|(i, e)| matches!(e, Expr::Column(j, _) if *j == i));
                if identity {
                    return self.node(input, depth, top);
                }
                let col = self.head(plan, depth, top, "Project".into());
                self.detail(col, format!("Output: {}", self.exprs(exprs, input.fields())));
                self.node(input, child, false);
            }
            Plan::Aggregate { input, group_by, aggs, .. } => {
                let pushed = aggregate_runs_on_shards(input, group_by, aggs);
                let title = match (group_by.is_empty(), pushed.is_some()) {
                    (true, true) => "Final Aggregate".to_string(),
                    (true, false) => "Aggregate".to_string(),
                    (false, true) => "Final HashAggregate".to_string(),
                    (false, false) => "HashAggregate".to_string(),
                };
                let col = self.head(plan, depth, top, title);
                if !group_by.is_empty() {
                    self.detail(col, format!("Group Key: {}", self.exprs(group_by, input.fields())));
                }
                let calls: Vec<String> = aggs.iter().map(|a| fmt_agg(a, input.fields(), self.format)).collect();
                self.detail(col, format!("Aggregates: {}", calls.join(", ")));
                match pushed {
                    Some((table, projection, filter)) => {
                        let partial = format!("Partial Aggregate on each shard: {}", calls.join(", "));
                        // The shards read what the aggregate and the filter use (`fragment::Narrowed`).
                        let mut used = Vec::new();
                        crate::exec::fragment::aggregate_inputs(group_by, aggs, &mut used);
                        if let Plan::Filter { predicate, .. } = input.as_ref() {
                            predicate.columns_used(&mut used);
                        }
                        used.sort_unstable();
                        used.dedup();
                        let mut reads: Vec<usize> = used.iter().filter_map(|&i| projection.get(i).copied()).collect();
                        if let Plan::Scan { filter: Some(f), .. } = input.as_ref() {
                            // A scan's own filter is over the table's columns.
                            f.columns_used(&mut reads);
                        }
                        reads.sort_unstable();
                        reads.dedup();
                        self.scan(input, child, false, table, projection, filter, Some(partial), &reads);
                    }
                    None => self.node(input, child, false),
                }
            }
            Plan::Sort { input, keys } => {
                let col = self.head(plan, depth, top, "Sort".into());
                let keys: Vec<String> = keys.iter().map(|k| fmt_sort_key(k, input.fields(), self.format)).collect();
                self.detail(col, format!("Sort Key: {}", keys.join(", ")));
                self.node(input, child, false);
            }
            Plan::Limit { input, limit, offset } => {
                let col = self.head(plan, depth, top, "Limit".into());
                if let Some(l) = limit {
                    self.detail(col, format!("Count: {}", fmt_expr(l, &[], self.format)));
                }
                if let Some(o) = offset {
                    self.detail(col, format!("Offset: {}", fmt_expr(o, &[], self.format)));
                }
                self.node(input, child, false);
            }
            Plan::GapFill { input, gapfill, .. } => {
                let col = self.head(plan, depth, top, "Custom Scan (GapFill)".into());
                self.detail(col, format!("Bucket: {}", field_name(input.fields(), gapfill.bucket)));
                if !gapfill.partitions.is_empty() {
                    let names: Vec<String> = gapfill.partitions.iter().map(|&i| field_name(input.fields(), i)).collect();
                    self.detail(col, format!("Partitions: {}", names.join(", ")));
                }
                self.node(input, child, false);
            }
            Plan::Distinct { input, on } => {
                let col = self.head(plan, depth, top, "HashDistinct".into());
                if let Some(on) = on {
                    let names: Vec<String> = on.iter().map(|&i| field_name(input.fields(), i)).collect();
                    self.detail(col, format!("Distinct On: {}", names.join(", ")));
                }
                self.node(input, child, false);
            }
            Plan::Join { left, right, kind, on, fields } => {
                let word = match kind {
                    JoinKind::Inner => "Inner",
                    JoinKind::Left => "Left",
                    JoinKind::Right => "Right",
                    JoinKind::Full => "Full",
                    JoinKind::Cross => "Cross",
                };
                let col = self.head(plan, depth, top, format!("{word} Join"));
                if let Some(on) = on {
                    self.detail(col, format!("Join Cond: {}", fmt_expr(on, fields, self.format)));
                }
                self.node(left, child, false);
                self.node(right, child, false);
            }
            Plan::SetOp { kind, all, left, right, .. } => {
                let word = match kind {
                    SetOpKind::Union => "Union",
                    SetOpKind::Intersect => "Intersect",
                    SetOpKind::Except => "Except",
                };
                self.head(plan, depth, top, format!("{word}{}", if *all { " All" } else { "" }));
                self.node(left, child, false);
                self.node(right, child, false);
            }
            Plan::Window { input, calls, .. } => {
                let col = self.head(plan, depth, top, "WindowAgg".into());
                for c in calls {
                    let mut text = format!("{:?}", c.func);
                    if !c.partition_by.is_empty() {
                        text.push_str(&format!(" PARTITION BY {}", self.exprs(&c.partition_by, input.fields())));
                    }
                    if !c.order_by.is_empty() {
                        let keys: Vec<String> =
                            c.order_by.iter().map(|k| fmt_sort_key(k, input.fields(), self.format)).collect();
                        text.push_str(&format!(" ORDER BY {}", keys.join(", ")));
                    }
                    self.detail(col, format!("Window: {text}"));
                }
                self.node(input, child, false);
            }
            Plan::TableFunction { calls, .. } => {
                let names: Vec<String> = calls
                    .iter()
                    .map(|c| format!("{}({})", snake(&format!("{:?}", c.func)), self.exprs(&c.args, &[])))
                    .collect();
                self.head(plan, depth, top, format!("Function Scan on {}", names.join(", ")));
            }
            Plan::Lateral { left, right, kind, on, fields, .. } => {
                let word = if *kind == JoinKind::Left { "Left" } else { "Inner" };
                let col = self.head(plan, depth, top, format!("Nested Loop {word} (lateral)"));
                if let Some(on) = on {
                    self.detail(col, format!("Join Cond: {}", fmt_expr(on, fields, self.format)));
                }
                self.node(left, child, false);
                self.node(right, child, false);
            }
            Plan::RecursiveCte { anchor, recursive, union_all, .. } => {
                let title = if *union_all { "Recursive Union All" } else { "Recursive Union" };
                self.head(plan, depth, top, title.into());
                self.node(anchor, child, false);
                self.node(recursive, child, false);
            }
            Plan::WorkTable { .. } => {
                self.head(plan, depth, top, "WorkTable Scan".into());
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn scan(
        &mut self,
        plan: &Plan,
        depth: usize,
        top: bool,
        table: &crate::catalog::TableDef,
        projection: &[usize],
        filter: Option<&Expr>,
        partial: Option<String>,
        reads: &[usize],
    ) {
        let title = format!("Shard Scan on {}  ({} shards)", table.name, self.shards);
        let col = self.head(plan, depth, top, title);
        let table_fields: Vec<Field> = table.columns.iter().map(|c| Field::new(c.name.clone(), c.data_type)).collect();
        let names: Vec<String> = reads.iter().map(|&i| field_name(&table_fields, i)).collect();
        if names.is_empty() {
            self.detail(col, "Columns: none (rows are only counted)".into());
        } else {
            self.detail(col, format!("Columns: {}", names.join(", ")));
        }
        if let Some(f) = filter {
            // Scan filters are written over the projection; show them over the table.
            let over_table = f.clone().transform(&mut |e| match e {
                Expr::Column(i, t) => Expr::Column(projection.get(i).copied().unwrap_or(i), t),
                other => other,
            });
            self.detail(col, format!("Filter on each shard: {}", fmt_expr(&over_table, &table_fields, self.format)));
            let pruning = Pruning::from_filter(Some(&fold_constants(over_table.clone(), self.ctx)));
            let described = pruning.describe(&table_fields, self.format);
            if !described.is_empty() {
                self.detail(col, format!("Pruning by zone maps and series index: {}", described.join(" AND ")));
            }
        }
        if let Some(p) = partial {
            self.detail(col, p);
        }
        if let Some(profile) = self.profile {
            if let Some(s) = profile.scans.borrow().get(&node_key(plan)) {
                let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
                self.detail(
                    col,
                    format!(
                        "Read: segments {} of {}, block groups {} of {}, {} rows from memtables",
                        get(&s.segments_read),
                        get(&s.segments),
                        get(&s.groups_read),
                        get(&s.groups),
                        get(&s.rows_in_memory)
                    ),
                );
            }
        }
    }
}

/// A scan, or a filter over one, as the executor runs it: the filter on the shards.
fn scan_with_filter(plan: &Plan) -> Option<(&crate::catalog::TableDef, &[usize], Option<&Expr>)> {
    match plan {
        Plan::Scan { table, projection, filter, .. } => Some((table, projection, filter.as_ref())),
        Plan::Filter { input, predicate } if runs_on_shards(predicate) => match input.as_ref() {
            Plan::Scan { table, projection, filter: None, .. } => Some((table, projection, Some(predicate))),
            _ => None,
        },
        _ => None,
    }
}

/// The scan under an aggregate that runs partially on the shards (as `operators::build_aggregate` decides).
fn aggregate_runs_on_shards<'a>(
    input: &'a Plan,
    group_by: &[Expr],
    aggs: &[AggCall],
) -> Option<(&'a crate::catalog::TableDef, &'a [usize], Option<&'a Expr>)> {
    let pushable = group_by.iter().all(runs_on_shards)
        && aggs.iter().all(|a| {
            !a.distinct
                && !a.func.collects_values()
                && a.arg.as_ref().is_none_or(runs_on_shards)
                && a.filter.as_ref().is_none_or(runs_on_shards)
        });
    if !pushable {
        return None;
    }
    scan_with_filter(input)
}

/// Whether `e` runs on the shards once parameters are replaced by their
/// values (`QueryContext::resolve` does that before `Expr::is_shard_pure`).
fn runs_on_shards(e: &Expr) -> bool {
    let mut pure = true;
    e.walk(&mut |x| pure &= !matches!(x, Expr::Subquery(_) | Expr::Outer { .. } | Expr::NextVal(_) | Expr::CurrVal(_) | Expr::LastVal(_) | Expr::SetVal { .. } | Expr::SignalBackend { .. }));
    pure
}

fn field_name(fields: &[Field], i: usize) -> String {
    match fields.get(i) {
        Some(f) => match &f.qualifier {
            Some(q) => format!("{q}.{}", f.name),
            None => f.name.clone(),
        },
        None => format!("${i}"),
    }
}

fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

fn fmt_sort_key(k: &SortKey, fields: &[Field], format: &FormatContext) -> String {
    let mut s = fmt_expr(&k.expr, fields, format);
    if k.descending {
        s.push_str(" DESC");
    }
    if k.nulls_first != k.descending {
        s.push_str(if k.nulls_first { " NULLS FIRST" } else { " NULLS LAST" });
    }
    s
}

fn fmt_agg(a: &AggCall, fields: &[Field], format: &FormatContext) -> String {
    let name = match a.func {
        AggFunc::CountStar => return "count(*)".into(),
        AggFunc::PercentileCont { .. } => "percentile_cont".to_string(),
        AggFunc::PercentileDisc { .. } => "percentile_disc".to_string(),
        f => snake(&format!("{f:?}")),
    };
    let arg = a.arg.as_ref().map(|e| fmt_expr(e, fields, format)).unwrap_or_default();
    let distinct = if a.distinct { "DISTINCT " } else { "" };
    let mut s = format!("{name}({distinct}{arg})");
    if let Some(f) = &a.filter {
        s.push_str(&format!(" FILTER (WHERE {})", fmt_expr(f, fields, format)));
    }
    s
}

/// An expression as SQL-like text over `fields`.
pub fn fmt_expr(e: &Expr, fields: &[Field], format: &FormatContext) -> String {
    match e {
        Expr::Column(i, _) => field_name(fields, *i),
        Expr::Outer { level, index, .. } => format!("outer{level}.${}", index + 1),
        Expr::Param(i, _) => format!("${}", i + 1),
        Expr::Literal(d, t) => {
            if d.is_null() {
                return "NULL".into();
            }
            let mut buf = Vec::new();
            let t = if *t == DataType::Unknown { DataType::Text } else { *t };
            crate::types::text::format_text(t, d, format, &mut buf);
            let text = String::from_utf8_lossy(&buf).into_owned();
            match t {
                DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Float32 | DataType::Float64 | DataType::Numeric | DataType::Bool => text,
                _ => format!("'{}'::{}", text.replace('\'', "''"), t.name()),
            }
        }
        Expr::Binary { sig, left, right } => format!(
            "({} {} {})",
            fmt_expr(left, fields, format),
            sig.op.pg_name(),
            fmt_expr(right, fields, format)
        ),
        Expr::Unary { op, arg, .. } => {
            let a = fmt_expr(arg, fields, format);
            match op {
                crate::exec::kernels::UnaryOp::Neg => format!("(-{a})"),
                crate::exec::kernels::UnaryOp::Plus => format!("(+{a})"),
                crate::exec::kernels::UnaryOp::Not => format!("(NOT {a})"),
            }
        }
        Expr::Func { sig, args } => {
            let args: Vec<String> = args.iter().map(|a| fmt_expr(a, fields, format)).collect();
            format!("{}({})", snake(&format!("{:?}", sig.func)), args.join(", "))
        }
        Expr::Cast { expr, to } => format!("({})::{}", fmt_expr(expr, fields, format), to.name()),
        Expr::IsNull { expr, negated } => {
            format!("({} IS {}NULL)", fmt_expr(expr, fields, format), if *negated { "NOT " } else { "" })
        }
        Expr::InList { expr, list, negated, .. } => {
            let items: Vec<String> = list.iter().map(|a| fmt_expr(a, fields, format)).collect();
            format!("({} {}IN ({}))", fmt_expr(expr, fields, format), if *negated { "NOT " } else { "" }, items.join(", "))
        }
        Expr::Subquery(s) => format!("(SubPlan {})", s.id + 1),
        Expr::Case { .. } => "CASE … END".into(),
        other => {
            let mut cols = Vec::new();
            other.columns_used(&mut cols);
            let names: Vec<String> = cols.iter().map(|&i| field_name(fields, i)).collect();
            format!("expr({})", names.join(", "))
        }
    }
}
