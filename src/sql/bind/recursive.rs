//! Binding of WITH RECURSIVE: `name AS (anchor UNION [ALL] recursive-term)`.
//! The anchor is bound first; its columns define the CTE's, and while the
//! recursive term is bound the name stands for a `Plan::WorkTable` (the
//! previous round's rows). A term that never names the CTE is an ordinary
//! UNION. Must not: evaluate anything (`exec/recursive.rs` does).

use sqlparser::ast;

use super::{ident_name, rename_columns, Binder};
use crate::error::{sqlstate, DbError, DbResult};
use crate::sql::plan::*;
use crate::types::DataType;

impl Binder<'_> {
    /// One CTE of a WITH RECURSIVE list.
    pub(super) fn bind_recursive_cte(&mut self, cte: &ast::Cte) -> DbResult<Plan> {
        let name = ident_name(&cte.alias.name);
        let query = &cte.query;
        let ast::SetExpr::SetOperation {
            op: ast::SetOperator::Union,
            set_quantifier,
            left,
            right,
        } = query.body.as_ref()
        else {
            let plan = self.bind_query(query)?;
            return rename_columns(plan, &name, &cte.alias.columns);
        };
        if query.order_by.is_some() || query.limit_clause.is_some() || query.with.is_some() {
            return Err(DbError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("ORDER BY, LIMIT or WITH in the recursive query \"{name}\" is not implemented"),
            ));
        }
        let anchor = self.bind_set_expr(left)?;
        let anchor_types: Vec<DataType> = anchor
            .types()
            .into_iter()
            .map(|t| if t == DataType::Unknown { DataType::Text } else { t })
            .collect();
        let anchor = self.cast_plan(anchor, &anchor_types, "recursive query")?;
        let anchor = rename_columns(anchor, &name, &cte.alias.columns)?;
        let fields = anchor.fields().to_vec();
        let id = self.next_subquery_id;
        self.next_subquery_id += 1;
        let work = Plan::WorkTable {
            id,
            fields: fields.clone(),
        };
        if let Some(scope) = self.ctes.last_mut() {
            scope.insert(name.clone(), work);
        }
        let uses_before = self.work_table_uses;
        let recursive = self.bind_set_expr(right);
        if let Some(scope) = self.ctes.last_mut() {
            scope.remove(&name);
        }
        let recursive = recursive?;
        let union_all = matches!(set_quantifier, ast::SetQuantifier::All);
        if self.work_table_uses == uses_before {
            // Not recursive after all: a plain UNION.
            let plan = self.bind_set_op(SetOpKind::Union, union_all, anchor, recursive)?;
            return rename_columns(plan, &name, &[]);
        }
        if recursive.fields().len() != fields.len() {
            return Err(DbError::syntax("each UNION query must have the same number of columns"));
        }
        let recursive = self.cast_plan(recursive, &anchor_types, "recursive query")?;
        Ok(Plan::RecursiveCte {
            id,
            anchor: Box::new(anchor),
            recursive: Box::new(recursive),
            union_all,
            fields,
        })
    }
}
