//! Refreshing a continuous aggregate: its buckets inside a window (aligned
//! inward to whole buckets, either side possibly unbounded) computed again
//! from the hypertable and swapped in, in one transaction of an internal
//! session run as the bootstrap superuser: `DELETE` the table's buckets in
//! the window, then `INSERT` the view's query with the window added to its
//! WHERE as bounds on the hypertable's time column (so only those rows are
//! read and aggregated). `CALL refresh_continuous_aggregate` and the
//! continuous aggregate policy's job both run it.
//! Must not: decide what a continuous aggregate is (the session checks the
//! definition when it is made) or when to refresh (policies and callers do).

use std::sync::Arc;

use sqlparser::ast;

use crate::catalog::timescale::ContinuousAggregate;
use crate::catalog::{quote_ident, TableDef, BOOTSTRAP_ROLE};
use crate::error::{sqlstate, DbError, DbResult};
use crate::server::Server;
use crate::sql::session::Session;
use crate::types::datetime::{time_bucket, timestamp_add_interval};
use crate::types::zone::Zone;
use crate::types::Interval;

fn window_too_small() -> DbError {
    DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "refresh window too small")
        .with_detail("The refresh window must cover at least one bucket of data.")
        .with_hint("Align the refresh window with the bucket time zone or use at least two buckets.")
}

/// The whole buckets inside `[start, end)`: start rounded up, end down to a bucket boundary.
pub fn aligned_window(width: Interval, (start, end): (Option<i64>, Option<i64>)) -> DbResult<(Option<i64>, Option<i64>)> {
    let start = match start {
        Some(t) => {
            let b = time_bucket(width, t, None)?;
            Some(if b < t { timestamp_add_interval(b, width)? } else { b })
        }
        None => None,
    };
    let end = end.map(|t| time_bucket(width, t, None)).transpose()?;
    if let (Some(s), Some(e)) = (start, end) {
        if s >= e {
            return Err(window_too_small());
        }
    }
    Ok((start, end))
}

fn timestamptz_literal(ns: i64) -> String {
    format!("'{}'::timestamptz", crate::sql::jobs::timestamptz_text(ns, Zone::Fixed(0)))
}

/// `bound >= start AND bound < end` (the sides given), or None.
fn window_condition(bound: &str, (start, end): (Option<i64>, Option<i64>)) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(s) = start {
        parts.push(format!("{bound} >= {}", timestamptz_literal(s)));
    }
    if let Some(e) = end {
        parts.push(format!("{bound} < {}", timestamptz_literal(e)));
    }
    (!parts.is_empty()).then(|| parts.join(" AND "))
}

/// The refresh's statements: DELETE the window's buckets, INSERT them computed again.
fn refresh_statements(mat: &TableDef, cagg: &ContinuousAggregate, window: (Option<i64>, Option<i64>)) -> DbResult<Vec<String>> {
    let table = format!("{}.{}", quote_ident(&mat.schema), quote_ident(&mat.name));
    let bucket = quote_ident(&mat.columns[cagg.bucket_column].name);
    let mut query = match crate::sql::parse(&cagg.query)?.pop() {
        Some(ast::Statement::Query(q)) => q,
        _ => return Err(DbError::internal("a continuous aggregate's query did not parse")),
    };
    if let Some(condition) = window_condition(&cagg.time_expr, window) {
        let ast::SetExpr::Select(select) = query.body.as_mut() else {
            return Err(DbError::internal("a continuous aggregate's query is not a SELECT"));
        };
        let condition = crate::sql::bind::sql_function::parse_expr(&condition)?;
        select.selection = Some(match select.selection.take() {
            Some(w) => ast::Expr::BinaryOp {
                left: Box::new(ast::Expr::Nested(Box::new(w))),
                op: ast::BinaryOperator::And,
                right: Box::new(condition),
            },
            None => condition,
        });
    }
    let delete = match window_condition(&bucket, window) {
        Some(c) => format!("DELETE FROM {table} WHERE {c}"),
        None => format!("DELETE FROM {table}"),
    };
    Ok(vec![delete, format!("INSERT INTO {table} {query}")])
}

/// Refreshes continuous aggregate `table` (its table's OID) of `database`
/// over `window` (ns; None: unbounded), as one transaction. `shard`: the
/// shard the caller runs on.
pub async fn refresh(
    server: &Arc<Server>,
    database: &str,
    table: u32,
    window: (Option<i64>, Option<i64>),
    shard: usize,
) -> DbResult<()> {
    let catalog = server.catalog.snapshot();
    let db = catalog.database(database)?;
    let (Some(cagg), Some(mat)) = (db.timescale.continuous.get(&table), db.table_by_oid(table)) else {
        return Err(DbError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("relation with OID {table} is not a continuous aggregate"),
        ));
    };
    let window = aligned_window(cagg.bucket_width, window)?;
    let statements = refresh_statements(mat, cagg, window)?;
    // One transaction of a session of its own.
    let mut session = Session::new(server.clone(), database.to_string(), BOOTSTRAP_ROLE.to_string(), shard);
    session.run_generated(&statements, &[], &[]).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3_600_000_000_000;

    #[test]
    fn a_window_keeps_only_whole_buckets() {
        let day = Interval { months: 0, days: 1, micros: 0 };
        // 2024-01-01 00:00 UTC.
        let jan1 = 1_704_067_200_000_000_000;
        assert_eq!(aligned_window(day, (Some(jan1 + HOUR), Some(jan1 + 50 * HOUR))).unwrap(), (Some(jan1 + 24 * HOUR), Some(jan1 + 48 * HOUR)));
        assert_eq!(aligned_window(day, (Some(jan1), None)).unwrap(), (Some(jan1), None));
        assert_eq!(aligned_window(day, (None, Some(jan1 + HOUR))).unwrap(), (None, Some(jan1)));
        let err = aligned_window(day, (Some(jan1 + HOUR), Some(jan1 + 30 * HOUR))).unwrap_err();
        assert_eq!(err.message, "refresh window too small");
    }
}
