//! Bound expressions and logical plans: what the binder produces and the
//! executor builds operators from. Every expression carries its result type;
//! every plan node knows its output fields.
//! Must not: refer to sqlparser's AST (binding is over) or run anything.

use std::sync::Arc;

use crate::catalog::{Sequence, TableDef};
use crate::exec::kernels::{BinarySignature, FunctionSignature, UnaryOp};
use crate::types::{DataType, Datum};

/// One output column of a plan node.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub data_type: DataType,
    /// The relation name or alias that qualifies this column (`t` in `t.a`).
    pub qualifier: Option<String>,
    /// Hidden from `*` and from unqualified lookup (the right side of USING).
    pub hidden: bool,
    /// pg_attribute identity for RowDescription (0 when computed).
    pub table_oid: u32,
    pub column_id: i16,
}

impl Field {
    pub fn new(name: impl Into<String>, data_type: DataType) -> Field {
        Field {
            name: name.into(),
            data_type,
            qualifier: None,
            hidden: false,
            table_oid: 0,
            column_id: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Avg,
    Min,
    Max,
    BoolAnd,
    BoolOr,
    /// string_agg(text, delimiter): values joined in arrival order (the
    /// aggregate's input is sorted first when the call has ORDER BY).
    StringAgg,
    /// percentile_cont / percentile_disc(fraction) WITHIN GROUP (ORDER BY x).
    PercentileCont { descending: bool },
    PercentileDisc { descending: bool },
    /// array_agg(x [ORDER BY …]): every value, NULLs too, in arrival order.
    ArrayAgg,
    /// TimescaleDB's first(value, time) / last(value, time); the argument is ROW(time, value).
    First,
    Last,
}

impl AggFunc {
    /// Aggregates that keep every value of a group: they run on the
    /// coordinator only (no partial states on shards).
    pub fn collects_values(self) -> bool {
        matches!(
            self,
            AggFunc::StringAgg | AggFunc::ArrayAgg | AggFunc::PercentileCont { .. } | AggFunc::PercentileDisc { .. }
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AggCall {
    pub func: AggFunc,
    pub arg: Option<Expr>,
    pub distinct: bool,
    /// Only rows where this is true are aggregated (`FILTER (WHERE …)`).
    pub filter: Option<Expr>,
    pub result_type: DataType,
    /// `agg(x ORDER BY …)`: the order values arrive in (the binder sorts the aggregate's input).
    pub order_by: Vec<SortKey>,
    /// A constant argument: string_agg's delimiter, a percentile's fraction (a literal).
    pub constant_arg: Option<Expr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubqueryKind {
    /// `(SELECT x …)`: one value, 21000 if more than one row.
    Scalar,
    /// `EXISTS (…)`.
    Exists,
    /// `expr [NOT] IN (SELECT …)`; the left operand is `Subquery::left`.
    In { negated: bool },
    /// `ARRAY(SELECT x …)`: the column's values as an array.
    Array,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Subquery {
    /// Unique within a statement: results are cached by it.
    pub id: usize,
    pub kind: SubqueryKind,
    pub plan: Arc<Plan>,
    /// References columns of an enclosing query (re-run per outer row).
    pub correlated: bool,
    pub left: Option<Box<Expr>>,
    /// For IN: the equality used to compare `left` with the subquery's column.
    pub eq: Option<BinarySignature>,
    pub data_type: DataType,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Column `index` of the input.
    Column(usize, DataType),
    /// Column `index` of the row of an enclosing query, `level` scopes up (1 = parent).
    Outer {
        level: usize,
        index: usize,
        data_type: DataType,
    },
    Literal(Datum, DataType),
    /// `$n` (0-based here).
    Param(usize, DataType),
    Binary {
        sig: BinarySignature,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    Unary {
        op: UnaryOp,
        arg_type: DataType,
        result: DataType,
        arg: Box<Expr>,
    },
    Func {
        sig: Arc<FunctionSignature>,
        args: Vec<Expr>,
    },
    Cast {
        expr: Box<Expr>,
        to: DataType,
    },
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// `IS [NOT] TRUE` / `IS [NOT] FALSE` (never NULL).
    IsBool {
        expr: Box<Expr>,
        value: bool,
        negated: bool,
    },
    /// `IS [NOT] DISTINCT FROM`.
    IsDistinct {
        left: Box<Expr>,
        right: Box<Expr>,
        eq: BinarySignature,
        negated: bool,
    },
    /// Searched CASE; simple CASE is bound to this with equality tests.
    Case {
        whens: Vec<(Expr, Expr)>,
        otherwise: Box<Expr>,
        data_type: DataType,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        eq: BinarySignature,
        negated: bool,
    },
    Subquery(Subquery),
    NextVal(Arc<SequenceRef>),
    /// currval(sequence): the session's value of it (55000 before nextval).
    CurrVal(Arc<SequenceRef>),
    /// lastval(): the value of the session's last nextval.
    LastVal(Arc<SessionSequences>),
    /// setval(sequence, value [, is_called]): `args` are the value and, when
    /// given, is_called.
    SetVal { sequence: Arc<SequenceRef>, args: Vec<Expr> },
    /// pg_cancel_backend(pid) / pg_terminate_backend(pid): signals per row
    /// (a side effect, like nextval), true when the pid was a session.
    SignalBackend {
        pid: Box<Expr>,
        signal: Arc<BackendSignal>,
    },
    /// A numeric value rounded to `scale` and checked against `precision` (numeric(p, s)).
    NumericTypmod {
        expr: Box<Expr>,
        precision: u32,
        scale: u32,
    },
}

/// A sequence as an expression operand (compared by identity), with the
/// server whose catalog holds its reservations (`catalog/sequence.rs`).
pub struct SequenceRef {
    pub sequence: Arc<Sequence>,
    /// None where nothing persists (a binder without a server).
    pub server: Option<Arc<crate::server::Server>>,
    /// The calling session's currval()/lastval() values (None: no session).
    pub session: Option<Arc<SessionSequences>>,
}

/// A session's currval()/lastval() values as an expression operand
/// (compared by identity).
#[derive(Debug, Default)]
pub struct SessionSequences(pub crate::catalog::SessionSequenceValues);

impl PartialEq for SessionSequences {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl SequenceRef {
    /// Saves the catalog so that it covers `need`, then lets the sequence
    /// hand out what it covers without saving again.
    pub fn save(&self, need: crate::catalog::SaveNeeded) -> crate::error::DbResult<()> {
        if let Some(server) = &self.server {
            server.catalog.update(|_| Ok(()))?;
        }
        self.sequence.mark_durable(need);
        Ok(())
    }
}

impl std::fmt::Debug for SequenceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SequenceRef({})", self.sequence.name)
    }
}

impl PartialEq for SequenceRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.sequence, &other.sequence)
    }
}

/// Who sends which signal through which server's registry (compared by identity).
pub struct BackendSignal {
    pub server: Arc<crate::server::Server>,
    /// The calling session's role: the permission check's subject.
    pub caller: String,
    pub reason: crate::exec::cancel::StopReason,
}

impl std::fmt::Debug for BackendSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BackendSignal({:?} by {})", self.reason, self.caller)
    }
}

impl PartialEq for BackendSignal {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Expr {
    pub fn data_type(&self) -> DataType {
        match self {
            Expr::Column(_, t) | Expr::Literal(_, t) | Expr::Param(_, t) => *t,
            Expr::Outer { data_type, .. } => *data_type,
            Expr::Binary { sig, .. } => sig.result,
            Expr::Unary { result, .. } => *result,
            Expr::Func { sig, .. } => sig.result,
            Expr::Cast { to, .. } => *to,
            Expr::IsNull { .. }
            | Expr::IsBool { .. }
            | Expr::IsDistinct { .. }
            | Expr::InList { .. } => DataType::Bool,
            Expr::Case { data_type, .. } => *data_type,
            Expr::Subquery(s) => s.data_type,
            Expr::NextVal(_) | Expr::CurrVal(_) | Expr::LastVal(_) | Expr::SetVal { .. } => DataType::Int64,
            Expr::SignalBackend { .. } => DataType::Bool,
            Expr::NumericTypmod { .. } => DataType::Numeric,
        }
    }

    pub fn null() -> Expr {
        Expr::Literal(Datum::Null, DataType::Unknown)
    }

    /// Visits this expression and every sub-expression (not into subquery plans).
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Binary { left, right, .. } | Expr::IsDistinct { left, right, .. } => {
                left.walk(f);
                right.walk(f);
            }
            Expr::Unary { arg: e, .. }
            | Expr::Cast { expr: e, .. }
            | Expr::IsNull { expr: e, .. }
            | Expr::IsBool { expr: e, .. }
            | Expr::NumericTypmod { expr: e, .. }
            | Expr::SignalBackend { pid: e, .. } => e.walk(f),
            Expr::Func { args, .. } | Expr::SetVal { args, .. } => args.iter().for_each(|a| a.walk(f)),
            Expr::Case {
                whens, otherwise, ..
            } => {
                for (w, t) in whens {
                    w.walk(f);
                    t.walk(f);
                }
                otherwise.walk(f);
            }
            Expr::InList { expr, list, .. } => {
                expr.walk(f);
                list.iter().for_each(|a| a.walk(f));
            }
            Expr::Subquery(s) => {
                if let Some(l) = &s.left {
                    l.walk(f);
                }
            }
            _ => {}
        }
    }

    /// Rewrites this expression bottom-up (not into subquery plans).
    pub fn transform(self, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
        let mapped = match self {
            Expr::Binary { sig, left, right } => Expr::Binary {
                sig,
                left: Box::new(left.transform(f)),
                right: Box::new(right.transform(f)),
            },
            Expr::IsDistinct {
                left,
                right,
                eq,
                negated,
            } => Expr::IsDistinct {
                left: Box::new(left.transform(f)),
                right: Box::new(right.transform(f)),
                eq,
                negated,
            },
            Expr::Unary {
                op,
                arg_type,
                result,
                arg,
            } => Expr::Unary {
                op,
                arg_type,
                result,
                arg: Box::new(arg.transform(f)),
            },
            Expr::Cast { expr, to } => Expr::Cast {
                expr: Box::new(expr.transform(f)),
                to,
            },
            Expr::NumericTypmod {
                expr,
                precision,
                scale,
            } => Expr::NumericTypmod {
                expr: Box::new(expr.transform(f)),
                precision,
                scale,
            },
            Expr::IsNull { expr, negated } => Expr::IsNull {
                expr: Box::new(expr.transform(f)),
                negated,
            },
            Expr::SignalBackend { pid, signal } => Expr::SignalBackend {
                pid: Box::new(pid.transform(f)),
                signal,
            },
            Expr::IsBool {
                expr,
                value,
                negated,
            } => Expr::IsBool {
                expr: Box::new(expr.transform(f)),
                value,
                negated,
            },
            Expr::Func { sig, args } => Expr::Func {
                sig,
                args: args.into_iter().map(|a| a.transform(f)).collect(),
            },
            Expr::SetVal { sequence, args } => Expr::SetVal {
                sequence,
                args: args.into_iter().map(|a| a.transform(f)).collect(),
            },
            Expr::Case {
                whens,
                otherwise,
                data_type,
            } => Expr::Case {
                whens: whens
                    .into_iter()
                    .map(|(w, t)| (w.transform(f), t.transform(f)))
                    .collect(),
                otherwise: Box::new(otherwise.transform(f)),
                data_type,
            },
            Expr::InList {
                expr,
                list,
                eq,
                negated,
            } => Expr::InList {
                expr: Box::new(expr.transform(f)),
                list: list.into_iter().map(|a| a.transform(f)).collect(),
                eq,
                negated,
            },
            Expr::Subquery(mut s) => {
                s.left = s.left.map(|l| Box::new(l.transform(f)));
                Expr::Subquery(s)
            }
            other => other,
        };
        f(mapped)
    }

    /// True when the expression can run on a shard by itself: no subqueries,
    /// outer references, parameters or sequences.
    /// `a AND b`.
    pub fn and(a: Expr, b: Expr) -> Expr {
        Expr::Binary {
            sig: BinarySignature {
                op: crate::exec::kernels::BinaryOp::And,
                left: DataType::Bool,
                right: DataType::Bool,
                result: DataType::Bool,
            },
            left: Box::new(a),
            right: Box::new(b),
        }
    }

    pub fn is_shard_pure(&self) -> bool {
        let mut pure = true;
        self.walk(&mut |e| {
            if matches!(
                e,
                Expr::Subquery(_) | Expr::Outer { .. } | Expr::Param(..) | Expr::NextVal(_) | Expr::CurrVal(_) | Expr::LastVal(_) | Expr::SetVal { .. } | Expr::SignalBackend { .. }
            ) {
                pure = false;
            }
        });
        pure
    }

    /// Whether evaluating this expression changes something besides its
    /// value (a sequence advanced, a backend signalled): such an expression
    /// must run only on the rows that reach it.
    pub fn has_side_effects(&self) -> bool {
        let mut found = false;
        self.walk(&mut |e| found |= matches!(e, Expr::NextVal(_) | Expr::SetVal { .. } | Expr::SignalBackend { .. }));
        found
    }

    pub fn has_subquery(&self) -> bool {
        let mut found = false;
        self.walk(&mut |e| found |= matches!(e, Expr::Subquery(_)));
        found
    }

    /// Column indexes of the input this expression reads.
    pub fn columns_used(&self, out: &mut Vec<usize>) {
        self.walk(&mut |e| {
            if let Expr::Column(i, _) = e {
                out.push(*i);
            }
        });
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    pub expr: Expr,
    pub descending: bool,
    pub nulls_first: bool,
}

/// A set-returning function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFunc {
    /// generate_series(start, stop [, step]) over integers, numeric and timestamps.
    GenerateSeries,
    /// unnest(array): its elements, all dimensions flattened.
    Unnest,
    /// generate_subscripts(array, dim [, reverse]).
    GenerateSubscripts,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableFuncCall {
    pub func: TableFunc,
    pub args: Vec<Expr>,
    pub result_type: DataType,
}

/// A window function: a ranking or value function, or an aggregate over a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
    Aggregate(AggFunc),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
    Rows,
    Range,
    Groups,
}

/// One end of a window frame; offsets are constant expressions.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Expr),
    CurrentRow,
    Following(Expr),
    UnboundedFollowing,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WindowFrame {
    pub units: FrameUnits,
    pub start: FrameBound,
    pub end: FrameBound,
}

impl WindowFrame {
    /// PostgreSQL's default: RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW.
    pub fn default_frame() -> WindowFrame {
        WindowFrame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
        }
    }
}

/// One window function call: `func(args) [FILTER (WHERE filter)] OVER (PARTITION BY … ORDER BY … frame)`.
/// Every expression reads the window operator's input row.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCall {
    pub func: WindowFunc,
    pub args: Vec<Expr>,
    pub filter: Option<Expr>,
    pub partition_by: Vec<Expr>,
    pub order_by: Vec<SortKey>,
    pub frame: WindowFrame,
    pub result_type: DataType,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
    Cross,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOpKind {
    Union,
    Intersect,
    Except,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Rows of a table, columns `projection` of it, optionally filtered.
    Scan {
        table: Arc<TableDef>,
        projection: Vec<usize>,
        filter: Option<Expr>,
        fields: Vec<Field>,
    },
    /// Rows computed from expressions that read no input (VALUES, SELECT without FROM).
    Values {
        rows: Vec<Vec<Expr>>,
        fields: Vec<Field>,
    },
    Filter {
        input: Box<Plan>,
        predicate: Expr,
    },
    Project {
        input: Box<Plan>,
        exprs: Vec<Expr>,
        fields: Vec<Field>,
    },
    /// Output: the group-by values, then one column per aggregate.
    Aggregate {
        input: Box<Plan>,
        group_by: Vec<Expr>,
        aggs: Vec<AggCall>,
        fields: Vec<Field>,
    },
    Sort {
        input: Box<Plan>,
        keys: Vec<SortKey>,
    },
    Limit {
        input: Box<Plan>,
        limit: Option<Expr>,
        offset: Option<Expr>,
    },
    /// Rows with distinct values (of all columns, or of the `on` columns:
    /// DISTINCT ON keeps the first row of each).
    Distinct {
        input: Box<Plan>,
        on: Option<Vec<usize>>,
    },
    Join {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        on: Option<Expr>,
        fields: Vec<Field>,
    },
    /// Rows of set-returning functions run side by side (PostgreSQL's ROWS
    /// FROM: as many rows as the longest, the shorter padded with NULLs), then
    /// the row number when `ordinality`. Arguments are evaluated once.
    TableFunction {
        calls: Vec<TableFuncCall>,
        ordinality: bool,
        fields: Vec<Field>,
    },
    /// For each left row, the rows of `right` evaluated with that row as its
    /// outer row (`Expr::Outer` level 1): LATERAL subqueries and functions.
    Lateral {
        left: Box<Plan>,
        right: Box<Plan>,
        /// Inner or Left.
        kind: JoinKind,
        on: Option<Expr>,
        fields: Vec<Field>,
        /// Left columns nothing above reads (`optimize::prune_lateral_left`):
        /// paired as NULLs instead of repeated per right row.
        unread_left: Vec<usize>,
    },
    /// WITH RECURSIVE: the anchor's rows, then the rows of `recursive` run
    /// over the previous round's rows (its `WorkTable { id }`) until a round
    /// adds none; UNION (not ALL) drops rows already returned.
    RecursiveCte {
        id: usize,
        anchor: Box<Plan>,
        recursive: Box<Plan>,
        union_all: bool,
        fields: Vec<Field>,
    },
    /// The previous round's rows of the recursive CTE `id`.
    WorkTable {
        id: usize,
        fields: Vec<Field>,
    },
    /// Output: the input's columns, then one column per window call.
    Window {
        input: Box<Plan>,
        calls: Vec<WindowCall>,
        fields: Vec<Field>,
    },
    SetOp {
        kind: SetOpKind,
        all: bool,
        left: Box<Plan>,
        right: Box<Plan>,
        fields: Vec<Field>,
    },
    /// time_bucket_gapfill over an aggregate's rows: per partition (the other
    /// group columns), the missing buckets in [start, finish) are added with
    /// NULL aggregates. Output: the input's columns, then one column per fill.
    GapFill {
        input: Box<Plan>,
        gapfill: Arc<GapFill>,
        fields: Vec<Field>,
    },
}

/// What a GapFill node needs (bound by `sql/bind/gapfill.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct GapFill {
    /// The input column holding the bucket.
    pub bucket: usize,
    /// The bucket function over one value, `Column(0)` (time_bucket(width, $0 [, zone])).
    pub bucket_of: Expr,
    /// The bucket width: an interval, or an integer for integer time columns.
    pub width: Expr,
    /// Constant expressions (no column references).
    pub start: Expr,
    pub finish: Expr,
    /// `time <= finish` in WHERE: the finish bucket itself is included.
    pub finish_inclusive: bool,
    /// Buckets on a time zone's wall clock (their length varies with DST).
    pub zoned: bool,
    /// The other group columns.
    pub partitions: Vec<usize>,
    /// locf(e) / interpolate(e): `e` over the input's row.
    pub fills: Vec<(Expr, GapFillKind)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapFillKind {
    /// The previous real row's value.
    Locf,
    /// Linear between the previous and the next real rows' values.
    Interpolate,
}

impl Plan {
    pub fn fields(&self) -> &[Field] {
        match self {
            Plan::Scan { fields, .. }
            | Plan::Values { fields, .. }
            | Plan::Project { fields, .. }
            | Plan::Aggregate { fields, .. }
            | Plan::Join { fields, .. }
            | Plan::Window { fields, .. }
            | Plan::TableFunction { fields, .. }
            | Plan::RecursiveCte { fields, .. }
            | Plan::WorkTable { fields, .. }
            | Plan::Lateral { fields, .. }
            | Plan::GapFill { fields, .. }
            | Plan::SetOp { fields, .. } => fields,
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. }
            | Plan::Distinct { input, .. } => input.fields(),
        }
    }

    pub fn types(&self) -> Vec<DataType> {
        self.fields().iter().map(|f| f.data_type).collect()
    }
}
