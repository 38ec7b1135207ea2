//! Binding of TimescaleDB's `time_bucket_gapfill(width, time [, timezone]
//! [, start, finish])` and its `locf(e)` / `interpolate(e)` companions.
//!
//! The gapfill call groups like `time_bucket(width, time [, timezone])` and
//! is remembered in the SELECT's scope; locf/interpolate calls stand in the
//! select list as placeholder columns. `bind_select` then puts a
//! `Plan::GapFill` above the aggregate (and HAVING), with start and finish
//! from the call's arguments or, as TimescaleDB does, from the WHERE
//! clause's bounds on the time column.
//! Must not: evaluate anything (`exec/gapfill.rs` does).

use super::Binder;
use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::kernels::BinaryOp;
use crate::sql::plan::*;
use crate::types::{DataType, Datum};

/// Placeholder columns for locf/interpolate results start here (above the
/// window placeholders' range).
const GAPFILL_COLUMN_BASE: usize = 1 << 42;

/// One time_bucket_gapfill call, as bound.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct GapfillCall {
    /// time_bucket(width, time [, timezone]) over the SELECT's input.
    bucket: Expr,
    time: Expr,
    width: Expr,
    zone: Option<Expr>,
    start: Option<Expr>,
    finish: Option<Expr>,
}

fn unsupported_argument(what: &str) -> DbError {
    DbError::new(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!("invalid time_bucket_gapfill argument: {what} must be a simple expression"),
    )
}

/// No column of the row (nor a subquery): a value fixed for the whole statement.
fn is_constant(e: &Expr) -> bool {
    let mut constant = true;
    e.walk(&mut |x| {
        if matches!(x, Expr::Column(..) | Expr::Outer { .. } | Expr::Subquery(_)) {
            constant = false;
        }
    });
    constant
}

fn is_null_literal(e: &Expr) -> bool {
    matches!(e, Expr::Literal(Datum::Null, _))
}

fn conjuncts<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match e {
        Expr::Binary { sig, left, right } if sig.op == BinaryOp::And => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        other => out.push(other),
    }
}

impl Binder<'_> {
    /// `time_bucket_gapfill(…)`: binds as the time_bucket it groups by and
    /// records the call in the SELECT's scope.
    pub(super) fn bind_time_bucket_gapfill(&mut self, args: Vec<Expr>, named: Vec<(String, Expr)>) -> DbResult<Expr> {
        let mut args = args.into_iter();
        let (Some(width), Some(time)) = (args.next(), args.next()) else {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                "function time_bucket_gapfill needs a bucket width and a time column",
            ));
        };
        let mut rest: Vec<Expr> = args.collect();
        let mut zone = None;
        // (width, time, timezone [, start, finish]): a text (or untyped, as
        // PostgreSQL resolves it) third argument is the zone; NULL is a start.
        let text = matches!(rest.first().map(Expr::data_type), Some(DataType::Text | DataType::Unknown | DataType::Varchar(_)));
        if text && !rest.first().is_some_and(is_null_literal) {
            zone = Some(rest.remove(0));
        }
        let mut rest = rest.into_iter();
        let (mut start, mut finish) = (rest.next(), rest.next());
        if rest.next().is_some() {
            return Err(DbError::new(sqlstate::UNDEFINED_FUNCTION, "too many arguments to time_bucket_gapfill"));
        }
        for (name, value) in named {
            match name.as_str() {
                "start" => start = Some(value),
                "finish" => finish = Some(value),
                "timezone" => zone = Some(value),
                "bucket_width" | "ts" | "time" => {
                    return Err(DbError::unsupported(format!("time_bucket_gapfill's {name} by name")))
                }
                other => {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("time_bucket_gapfill has no argument \"{other}\""),
                    ))
                }
            }
        }
        let time_type = time.data_type();
        let bound = |e: Option<Expr>, what: &str, b: &mut Self| -> DbResult<Option<Expr>> {
            match e {
                None => Ok(None),
                Some(e) if is_null_literal(&e) => Ok(None),
                Some(e) if !is_constant(&e) => Err(unsupported_argument(what)),
                Some(e) => b.coerce(e, time_type, "time_bucket_gapfill").map(Some),
            }
        };
        let start = bound(start, "start", self)?;
        let finish = bound(finish, "finish", self)?;
        let mut bucket_args = vec![width.clone(), time.clone()];
        bucket_args.extend(zone.clone());
        let bucket = self.bind_function_call("time_bucket", bucket_args)?;
        // The width as the bucket function took it (a literal is typed there).
        let width = match &bucket {
            Expr::Func { args, .. } => args.first().cloned().unwrap_or(width),
            _ => width,
        };
        let call = GapfillCall {
            bucket: bucket.clone(),
            time,
            width,
            zone,
            start,
            finish,
        };
        if let Some(scope) = self.windows.last_mut() {
            match &scope.gapfill {
                Some(earlier) if *earlier != call => {
                    return Err(DbError::new(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "multiple time_bucket_gapfill calls not allowed",
                    ))
                }
                _ => scope.gapfill = Some(call),
            }
        }
        Ok(bucket)
    }

    /// `locf(e)` / `interpolate(e)`: a placeholder for the filled column.
    pub(super) fn bind_gapfill_fill(&mut self, name: &str, arg: Expr) -> DbResult<Expr> {
        let kind = if name == "locf" { GapFillKind::Locf } else { GapFillKind::Interpolate };
        let t = arg.data_type();
        if kind == GapFillKind::Interpolate
            && !matches!(t, DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Float32 | DataType::Float64 | DataType::Numeric)
        {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function interpolate({}) does not exist", t.name()),
            ));
        }
        let Some(scope) = self.windows.last_mut() else {
            return Err(DbError::unsupported(format!("{name}() outside a SELECT")));
        };
        scope.fills.push((arg, kind));
        Ok(Expr::Column(GAPFILL_COLUMN_BASE + scope.fills.len() - 1, t))
    }

    /// The SELECT's gapfill call and fills, taken out of its scope.
    pub(super) fn take_gapfill(&mut self) -> (Option<GapfillCall>, Vec<(Expr, GapFillKind)>) {
        match self.windows.last_mut() {
            Some(scope) => (scope.gapfill.take(), std::mem::take(&mut scope.fills)),
            None => (None, Vec::new()),
        }
    }
}

/// Puts a GapFill node over `aggregate` (whose first columns are `group_exprs`).
/// `where_pred` supplies start/finish when the call does not.
pub(super) fn gapfill_plan(
    aggregate: Plan,
    call: GapfillCall,
    fills: Vec<(Expr, GapFillKind)>,
    group_exprs: &[Expr],
    where_pred: Option<&Expr>,
) -> DbResult<Plan> {
    let Some(bucket) = group_exprs.iter().position(|g| *g == call.bucket) else {
        return Err(DbError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "no top level time_bucket_gapfill in group by clause",
        ));
    };
    let (mut start, mut finish, mut finish_inclusive) = (call.start.clone(), call.finish.clone(), false);
    if let Some(pred) = where_pred {
        let mut parts = Vec::new();
        conjuncts(pred, &mut parts);
        for part in parts {
            let Expr::Binary { sig, left, right } = part else { continue };
            // `time op bound`, or `bound op time` read the other way round.
            let (op, bound) = if **left == call.time && is_constant(right) {
                (sig.op, right.as_ref())
            } else if **right == call.time && is_constant(left) {
                let flipped = match sig.op {
                    BinaryOp::Lt => BinaryOp::Gt,
                    BinaryOp::LtEq => BinaryOp::GtEq,
                    BinaryOp::Gt => BinaryOp::Lt,
                    BinaryOp::GtEq => BinaryOp::LtEq,
                    other => other,
                };
                (flipped, left.as_ref())
            } else {
                continue;
            };
            match op {
                BinaryOp::Gt | BinaryOp::GtEq if start.is_none() => start = Some(bound.clone()),
                BinaryOp::Lt | BinaryOp::LtEq if call.finish.is_none() && finish.is_none() => {
                    finish = Some(bound.clone());
                    finish_inclusive = op == BinaryOp::LtEq;
                }
                _ => {}
            }
        }
    }
    let missing = |what: &str| {
        DbError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("missing time_bucket_gapfill argument: could not infer {what} from WHERE clause"),
        )
        .with_hint("Specify start and finish as arguments or in the WHERE clause.")
    };
    let start = start.ok_or_else(|| missing("start"))?;
    let finish = finish.ok_or_else(|| missing("finish"))?;
    let time_type = call.time.data_type();
    // The bucket function over one value: the same call with the time as Column(0).
    let bucket_of = call.bucket.clone().transform(&mut |x| if x == call.time { Expr::Column(0, time_type) } else { x });
    let partitions = (0..group_exprs.len()).filter(|&i| i != bucket).collect();
    let mut fields = aggregate.fields().to_vec();
    for (i, (e, _)) in fills.iter().enumerate() {
        fields.push(Field::new(format!("fill{i}"), e.data_type()));
    }
    Ok(Plan::GapFill {
        input: Box::new(aggregate),
        gapfill: std::sync::Arc::new(GapFill {
            bucket,
            bucket_of,
            width: call.width,
            start,
            finish,
            finish_inclusive,
            zoned: call.zone.is_some(),
            partitions,
            fills,
        }),
        fields,
    })
}

/// Renumbers locf/interpolate placeholders to the GapFill node's columns after `base`.
pub(super) fn place_fill_columns(e: Expr, base: usize) -> Expr {
    e.transform(&mut |x| match x {
        Expr::Column(i, t) if i >= GAPFILL_COLUMN_BASE => Expr::Column(base + (i - GAPFILL_COLUMN_BASE), t),
        other => other,
    })
}

/// Whether an expression still holds a locf/interpolate placeholder (used outside a gapfill query).
pub(super) fn has_fill_placeholder(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if matches!(x, Expr::Column(i, _) if *i >= GAPFILL_COLUMN_BASE) {
            found = true;
        }
    });
    found
}
