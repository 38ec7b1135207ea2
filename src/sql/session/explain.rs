//! EXPLAIN [ANALYZE] of a query: the plan's lines (see `exec/explain.rs`) as
//! rows of one text column "QUERY PLAN"; ANALYZE runs the query to the end,
//! discarding its rows, and adds each operator's actual rows and time.
//! Must not: explain statements that change data (ANALYZE would run them).

use std::time::Instant;

use super::*;
use crate::exec::explain::{explain_lines, Profile};

impl Session {
    pub(super) async fn explain(
        &mut self,
        analyze: bool,
        options: Option<&[ast::UtilityOption]>,
        statement: &Statement,
        params: Vec<Datum>,
        param_types: &[DataType],
    ) -> DbResult<StatementResult> {
        let mut analyze = analyze;
        for o in options.unwrap_or(&[]) {
            let off_word = |w: &str| matches!(w.to_ascii_lowercase().as_str(), "off" | "false" | "0");
            let on = match &o.arg {
                None => true,
                Some(ast::Expr::Value(v)) => match &v.value {
                    ast::Value::Boolean(b) => *b,
                    ast::Value::Number(n, _) => !off_word(n),
                    ast::Value::SingleQuotedString(w) => !off_word(w),
                    _ => true,
                },
                Some(ast::Expr::Identifier(id)) => !off_word(&id.value),
                Some(_) => true,
            };
            match ident_name(&o.name).as_str() {
                "analyze" => analyze = on,
                "verbose" | "costs" | "timing" | "summary" | "buffers" | "settings" | "wal" => {}
                "format" => match &o.arg {
                    Some(ast::Expr::Identifier(id)) if id.value.eq_ignore_ascii_case("text") => {}
                    _ => return Err(DbError::unsupported("EXPLAIN formats other than TEXT")),
                },
                other => {
                    return Err(DbError::syntax(format!("unrecognized EXPLAIN option \"{other}\"")));
                }
            }
        }
        let Statement::Query(q) = statement else {
            return Err(DbError::unsupported("EXPLAIN of statements other than queries"));
        };
        let (plan, eval) = self.plan_query_with(q, &params, param_types, analyze).await?;
        let shards = self.server.shards.len();
        let lines = if analyze {
            let mut ctx = self.query_context(params, eval);
            let profile = Rc::new(Profile::default());
            match Rc::get_mut(&mut ctx) {
                Some(c) => c.profile = Some(profile.clone()),
                None => return Err(DbError::internal("query context shared before EXPLAIN ANALYZE")),
            }
            let started = Instant::now();
            let mut op = operators::build(&plan, &ctx)?;
            while op.next().await?.is_some() {}
            let elapsed = started.elapsed();
            let mut lines = explain_lines(&plan, Some(&profile), &ctx, shards);
            lines.push(format!("Execution Time: {:.3} ms", elapsed.as_secs_f64() * 1e3));
            lines
        } else {
            explain_lines(&plan, None, &self.query_context(params, eval), shards)
        };
        let values: Vec<Datum> = lines.into_iter().map(Datum::text).collect();
        Ok(StatementResult::Batches {
            fields: vec![Field::new("QUERY PLAN", DataType::Text)],
            batches: vec![Batch::from_columns(vec![Column::from_datums(DataType::Text, &values)])],
            tag: "EXPLAIN".into(),
        })
    }
}
