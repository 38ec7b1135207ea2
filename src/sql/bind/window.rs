//! Binding of window function calls (`f(…) OVER (…)`, `WINDOW w AS (…)`).
//!
//! A call found in a SELECT's list or ORDER BY is bound against that
//! SELECT's input (or its aggregate, when it groups), appended to the
//! SELECT's `WindowScope`, and stands in the expression as a placeholder
//! column; `bind_select` then puts a `Plan::Window` above the aggregate and
//! renumbers the placeholders to the window operator's output columns.
//! Must not: evaluate anything (the executor's `exec/window.rs` does).

use sqlparser::ast;

use super::{aggregate_signature, ident_name, object_name_parts, AggContext, Binder, Scope};
use crate::error::{sqlstate, DbError, DbResult};
use crate::sql::plan::*;
use crate::types::DataType;

/// Placeholder columns for window results start here, far above any real input width.
const WINDOW_COLUMN_BASE: usize = 1 << 40;

/// The window calls and named windows of one SELECT, and its select list's
/// set-returning calls (`table_function.rs`).
pub(super) struct WindowScope {
    calls: Vec<WindowCall>,
    pub(super) set_returning: Vec<TableFuncCall>,
    /// time_bucket_gapfill and its locf/interpolate calls (`gapfill.rs`).
    pub(super) gapfill: Option<super::gapfill::GapfillCall>,
    pub(super) fills: Vec<(Expr, GapFillKind)>,
    named: Vec<(String, ast::WindowSpec)>,
    /// Whether a window call may stand where the binder is now.
    here: WindowsHere,
}

/// The calls a SELECT collects while its list is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SelectCall {
    Window,
    SetReturning,
}

/// Window calls may stand only in a SELECT's list and ORDER BY, and not
/// inside an aggregate's or another window call's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WindowsHere {
    Allowed,
    NotAllowed,
    InAggregate,
    InWindowCall,
}

impl WindowScope {
    pub(super) fn new(named: &[ast::NamedWindowDefinition]) -> DbResult<WindowScope> {
        let mut out: Vec<(String, ast::WindowSpec)> = Vec::new();
        for def in named {
            let name = ident_name(&def.0);
            if out.iter().any(|(n, _)| *n == name) {
                return Err(windowing(format!("window \"{name}\" is already defined")));
            }
            let spec = match &def.1 {
                ast::NamedWindowExpr::WindowSpec(spec) => spec.clone(),
                ast::NamedWindowExpr::NamedWindow(other) => ast::WindowSpec {
                    window_name: Some(other.clone()),
                    partition_by: vec![],
                    order_by: vec![],
                    window_frame: None,
                },
            };
            out.push((name, spec));
        }
        Ok(WindowScope {
            calls: Vec::new(),
            set_returning: Vec::new(),
            gapfill: None,
            fills: Vec::new(),
            named: out,
            here: WindowsHere::NotAllowed,
        })
    }
}

fn windowing(msg: impl Into<String>) -> DbError {
    DbError::new(sqlstate::WINDOWING_ERROR, msg)
}

/// `input` with the window calls' results appended as columns.
pub(super) fn window_plan(input: Plan, calls: Vec<WindowCall>) -> Plan {
    let mut fields = input.fields().to_vec();
    for (i, c) in calls.iter().enumerate() {
        fields.push(Field::new(format!("window{i}"), c.result_type));
    }
    Plan::Window {
        input: Box::new(input),
        calls,
        fields,
    }
}

/// Renumbers window placeholders in `e` to columns `base + k` of the window operator's output.
pub(super) fn place_window_columns(e: Expr, base: usize) -> Expr {
    e.transform(&mut |x| match x {
        Expr::Column(i, t) if (WINDOW_COLUMN_BASE..2 * WINDOW_COLUMN_BASE).contains(&i) => {
            Expr::Column(base + (i - WINDOW_COLUMN_BASE), t)
        }
        other => other,
    })
}

impl Binder<'_> {
    pub(super) fn allow_windows(&mut self, allowed: bool) {
        self.set_windows_here(if allowed { WindowsHere::Allowed } else { WindowsHere::NotAllowed });
    }

    pub(super) fn set_windows_here(&mut self, here: WindowsHere) {
        if let Some(w) = self.windows.last_mut() {
            w.here = here;
        }
    }

    pub(super) fn windows_here(&self) -> WindowsHere {
        self.windows.last().map_or(WindowsHere::NotAllowed, |w| w.here)
    }

    /// How many window and set-returning calls the SELECT being bound has collected.
    pub(super) fn select_call_counts(&self) -> (usize, usize) {
        self.windows.last().map_or((0, 0), |w| (w.calls.len(), w.set_returning.len()))
    }

    pub(super) fn truncate_select_calls(&mut self, (windows, set_returning): (usize, usize)) {
        if let Some(w) = self.windows.last_mut() {
            w.calls.truncate(windows);
            w.set_returning.truncate(set_returning);
        }
    }

    pub(super) fn take_window_calls(&mut self) -> Vec<WindowCall> {
        self.windows.last_mut().map(|w| std::mem::take(&mut w.calls)).unwrap_or_default()
    }

    /// Whether a window or set-returning call may stand where the binder is:
    /// PostgreSQL's error for each place it may not.
    pub(super) fn check_select_call_allowed(&self, call: SelectCall) -> DbResult<()> {
        let (what, not_allowed_code) = match call {
            SelectCall::Window => ("window function", sqlstate::WINDOWING_ERROR),
            SelectCall::SetReturning => ("set-returning function", sqlstate::FEATURE_NOT_SUPPORTED),
        };
        match (self.windows_here(), call) {
            (WindowsHere::Allowed, _) => Ok(()),
            (WindowsHere::NotAllowed, _) => {
                Err(DbError::new(not_allowed_code, format!("{what}s are not allowed in {}", self.clause)))
            }
            (WindowsHere::InAggregate, _) => Err(DbError::new(
                sqlstate::GROUPING_ERROR,
                format!("aggregate function calls cannot contain {what} calls"),
            )),
            (WindowsHere::InWindowCall, SelectCall::Window) => Err(windowing("window function calls cannot be nested")),
            (WindowsHere::InWindowCall, SelectCall::SetReturning) => {
                Err(windowing("window function calls cannot contain set-returning function calls"))
            }
        }
    }

    /// The OVER clause's specification, with a named window (`OVER w`, `OVER (w ORDER BY …)`) merged in.
    fn window_spec(&self, over: &ast::WindowType) -> DbResult<ast::WindowSpec> {
        let named = self.windows.last().map(|w| w.named.as_slice()).unwrap_or(&[]);
        let lookup = |id: &ast::Ident| -> DbResult<ast::WindowSpec> {
            let name = ident_name(id);
            named
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, s)| s.clone())
                .ok_or_else(|| DbError::new(sqlstate::UNDEFINED_OBJECT, format!("window \"{name}\" does not exist")))
        };
        let mut spec = match over {
            ast::WindowType::NamedWindow(id) => lookup(id)?,
            ast::WindowType::WindowSpec(spec) => spec.clone(),
        };
        // Resolve references to other windows: PARTITION BY and ORDER BY come
        // from the referenced window; a frame may not be copied.
        let mut depth = 0;
        while let Some(base_name) = spec.window_name.take() {
            depth += 1;
            if depth > named.len() + 1 {
                return Err(windowing("window definitions refer to each other in a cycle"));
            }
            let base = lookup(&base_name)?;
            if !spec.partition_by.is_empty() {
                return Err(windowing(format!(
                    "cannot override PARTITION BY clause of window \"{}\"",
                    ident_name(&base_name)
                )));
            }
            if !spec.order_by.is_empty() && !base.order_by.is_empty() {
                return Err(windowing(format!(
                    "cannot override ORDER BY clause of window \"{}\"",
                    ident_name(&base_name)
                )));
            }
            if base.window_frame.is_some() {
                return Err(windowing(format!("cannot copy window \"{}\" because it has a frame clause", ident_name(&base_name))));
            }
            spec.partition_by = base.partition_by;
            if spec.order_by.is_empty() {
                spec.order_by = base.order_by;
            }
            spec.window_name = base.window_name;
        }
        Ok(spec)
    }

    /// Binds `f(…) OVER (…)`; returns the placeholder column of its result.
    pub(super) fn bind_window_call(
        &mut self,
        f: &ast::Function,
        scope: &Scope,
        agg: Option<&mut AggContext>,
    ) -> DbResult<Expr> {
        self.check_select_call_allowed(SelectCall::Window)?;
        let Some(over) = &f.over else {
            return Err(DbError::internal("window call without OVER"));
        };
        let name = object_name_parts(&f.name).pop().unwrap_or_default();
        let spec = self.window_spec(over)?;
        let (arg_asts, distinct) = match &f.args {
            ast::FunctionArguments::List(list) => (
                list.args.clone(),
                matches!(list.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct)),
            ),
            ast::FunctionArguments::None => (vec![], false),
            ast::FunctionArguments::Subquery(_) => return Err(DbError::unsupported("window function over a subquery")),
        };
        if distinct {
            return Err(DbError::unsupported("DISTINCT is not implemented for window functions"));
        }
        let star = matches!(arg_asts.as_slice(), [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)]);

        // Arguments, partition and order keys: no window calls inside them.
        self.set_windows_here(WindowsHere::InWindowCall);
        let bound = self.bind_window_parts(f, &name, &spec, &arg_asts, star, scope, agg);
        self.allow_windows(true);
        let (func, args, filter, partition_by, order_by, result_type) = bound?;
        let frame = self.bind_frame(spec.window_frame.as_ref(), &order_by)?;
        let call = WindowCall {
            func,
            args,
            filter,
            partition_by,
            order_by,
            frame,
            result_type,
        };
        let Some(w) = self.windows.last_mut() else {
            return Err(DbError::internal("window call outside a SELECT"));
        };
        let pos = match w.calls.iter().position(|c| *c == call) {
            Some(p) => p,
            None => {
                w.calls.push(call);
                w.calls.len() - 1
            }
        };
        Ok(Expr::Column(WINDOW_COLUMN_BASE + pos, result_type))
    }

    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn bind_window_parts(
        &mut self,
        f: &ast::Function,
        name: &str,
        spec: &ast::WindowSpec,
        arg_asts: &[ast::FunctionArg],
        star: bool,
        scope: &Scope,
        mut agg: Option<&mut AggContext>,
    ) -> DbResult<(WindowFunc, Vec<Expr>, Option<Expr>, Vec<Expr>, Vec<SortKey>, DataType)> {
        let mut args = Vec::new();
        if !star {
            for a in arg_asts {
                match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => {
                        args.push(self.bind_expr(x, scope, agg.as_deref_mut())?)
                    }
                    _ => return Err(DbError::unsupported(format!("this argument form in a call of {name}"))),
                }
            }
        }
        for a in args.iter_mut() {
            if a.data_type() == DataType::Unknown {
                *a = self.coerce(a.clone(), DataType::Text, name)?;
            }
        }
        let wrong_args = || {
            DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function {name} with {} argument(s) does not exist", arg_asts.len()),
            )
        };
        let (func, result_type) = match (name, args.len()) {
            ("row_number", 0) => (WindowFunc::RowNumber, DataType::Int64),
            ("rank", 0) => (WindowFunc::Rank, DataType::Int64),
            ("dense_rank", 0) => (WindowFunc::DenseRank, DataType::Int64),
            ("percent_rank", 0) => (WindowFunc::PercentRank, DataType::Float64),
            ("cume_dist", 0) => (WindowFunc::CumeDist, DataType::Float64),
            ("ntile", 1) => {
                args[0] = self.coerce(args[0].clone(), DataType::Int32, name)?;
                (WindowFunc::Ntile, DataType::Int32)
            }
            ("lag" | "lead", 1..=3) => {
                let t = args[0].data_type();
                if args.len() > 1 {
                    args[1] = self.coerce(args[1].clone(), DataType::Int32, name)?;
                }
                if args.len() > 2 {
                    args[2] = self.coerce(args[2].clone(), t, name)?;
                }
                (if name == "lag" { WindowFunc::Lag } else { WindowFunc::Lead }, t)
            }
            ("first_value", 1) => (WindowFunc::FirstValue, args[0].data_type()),
            ("last_value", 1) => (WindowFunc::LastValue, args[0].data_type()),
            ("nth_value", 2) => {
                args[1] = self.coerce(args[1].clone(), DataType::Int32, name)?;
                (WindowFunc::NthValue, args[0].data_type())
            }
            ("count", 0) if star || arg_asts.is_empty() => (WindowFunc::Aggregate(AggFunc::CountStar), DataType::Int64),
            (n, 1) if super::is_aggregate_name(n) => {
                let n = if n == "every" { "bool_and" } else { n };
                let (func, t) = aggregate_signature(n, args[0].data_type())?;
                (WindowFunc::Aggregate(func), t)
            }
            ("row_number" | "rank" | "dense_rank" | "percent_rank" | "cume_dist" | "ntile" | "lag" | "lead", _)
            | ("first_value" | "last_value" | "nth_value", _) => return Err(wrong_args()),
            (n, _) if super::is_aggregate_name(n) => return Err(wrong_args()),
            (n, _) => {
                return Err(DbError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!("OVER specified, but {n} is not a window function nor an aggregate function"),
                ))
            }
        };
        let filter = match &f.filter {
            Some(x) if matches!(func, WindowFunc::Aggregate(_)) => {
                let b = self.bind_expr(x, scope, agg.as_deref_mut())?;
                Some(self.coerce(b, DataType::Bool, "FILTER")?)
            }
            Some(_) => {
                return Err(DbError::unsupported("FILTER is not implemented for non-aggregate window functions"))
            }
            None => None,
        };
        let mut partition_by = Vec::new();
        for p in &spec.partition_by {
            let e = self.bind_expr(p, scope, agg.as_deref_mut())?;
            partition_by.push(if e.data_type() == DataType::Unknown { self.coerce(e, DataType::Text, "PARTITION BY")? } else { e });
        }
        let mut order_by = Vec::new();
        for ob in &spec.order_by {
            let descending = matches!(ob.options.sort, Some(ast::OrderBySort::Desc));
            let e = self.bind_expr(&ob.expr, scope, agg.as_deref_mut())?;
            let e = if e.data_type() == DataType::Unknown { self.coerce(e, DataType::Text, "ORDER BY")? } else { e };
            order_by.push(SortKey {
                expr: e,
                descending,
                nulls_first: ob.options.nulls_first.unwrap_or(descending),
            });
        }
        Ok((func, args, filter, partition_by, order_by, result_type))
    }

    fn bind_frame(&mut self, frame: Option<&ast::WindowFrame>, order_by: &[SortKey]) -> DbResult<WindowFrame> {
        let Some(frame) = frame else {
            return Ok(WindowFrame::default_frame());
        };
        let units = match frame.units {
            ast::WindowFrameUnits::Rows => FrameUnits::Rows,
            ast::WindowFrameUnits::Range => FrameUnits::Range,
            ast::WindowFrameUnits::Groups => FrameUnits::Groups,
        };
        if units == FrameUnits::Groups && order_by.is_empty() {
            return Err(windowing("GROUPS mode requires an ORDER BY clause"));
        }
        let end_ast = frame.end_bound.clone().unwrap_or(ast::WindowFrameBound::CurrentRow);
        let start = self.bind_frame_bound(&frame.start_bound, units, order_by, "starting")?;
        let end = self.bind_frame_bound(&end_ast, units, order_by, "ending")?;
        use FrameBound as B;
        match (&start, &end) {
            (B::UnboundedFollowing, _) => return Err(windowing("frame start cannot be UNBOUNDED FOLLOWING")),
            (_, B::UnboundedPreceding) => return Err(windowing("frame end cannot be UNBOUNDED PRECEDING")),
            (B::CurrentRow, B::Preceding(_)) => {
                return Err(windowing("frame starting from current row cannot have preceding rows"))
            }
            (B::Following(_), B::Preceding(_) | B::CurrentRow) => {
                return Err(windowing("frame starting from following row cannot have preceding rows"))
            }
            _ => {}
        }
        Ok(WindowFrame { units, start, end })
    }

    fn bind_frame_bound(
        &mut self,
        bound: &ast::WindowFrameBound,
        units: FrameUnits,
        order_by: &[SortKey],
        which: &str,
    ) -> DbResult<FrameBound> {
        let offset = |b: &mut Self, e: &ast::Expr| -> DbResult<Expr> {
            // Offsets are constants: no columns of the query.
            let bound = b.bind_expr(e, &Scope::default(), None)?;
            match units {
                FrameUnits::Rows | FrameUnits::Groups => b.coerce(bound, DataType::Int64, "window frame"),
                FrameUnits::Range => {
                    let [key] = order_by else {
                        return Err(windowing("RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column"));
                    };
                    let key_type = key.expr.data_type();
                    let offset_type = match key_type {
                        DataType::Int16 | DataType::Int32 | DataType::Int64 => {
                            if matches!(bound.data_type(), DataType::Numeric | DataType::Float64 | DataType::Float32) {
                                bound.data_type()
                            } else {
                                DataType::Int64
                            }
                        }
                        DataType::Float32 | DataType::Float64 => DataType::Float64,
                        DataType::Numeric => DataType::Numeric,
                        DataType::Date | DataType::Timestamp | DataType::TimestampTz | DataType::Interval => {
                            DataType::Interval
                        }
                        t => {
                            return Err(DbError::new(
                                sqlstate::FEATURE_NOT_SUPPORTED,
                                format!(
                                    "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {}",
                                    t.name()
                                ),
                            ))
                        }
                    };
                    let _ = which;
                    b.coerce(bound, offset_type, "window frame")
                }
            }
        };
        Ok(match bound {
            ast::WindowFrameBound::CurrentRow => FrameBound::CurrentRow,
            ast::WindowFrameBound::Preceding(None) => FrameBound::UnboundedPreceding,
            ast::WindowFrameBound::Following(None) => FrameBound::UnboundedFollowing,
            ast::WindowFrameBound::Preceding(Some(e)) => FrameBound::Preceding(offset(self, e)?),
            ast::WindowFrameBound::Following(Some(e)) => FrameBound::Following(offset(self, e)?),
        })
    }
}
