//! Binding of set-returning functions (generate_series) and LATERAL.
//!
//! In FROM, a function call is a `Plan::TableFunction`; when it (or a
//! `LATERAL (subquery)`) refers to FROM items on its left, it is bound with
//! their columns as its outer row and joined by `Plan::Lateral`. In a select
//! list, set-returning calls are collected per SELECT and run as a lateral
//! `TableFunction` over the SELECT's input (PostgreSQL's ProjectSet: calls
//! side by side, a row dropped when they return none).
//! Must not: evaluate anything (`exec/table_function.rs` does).

use sqlparser::ast;

use super::window::SelectCall;
use super::{ident_name, object_name_parts, rename_columns, AggContext, Binder, Scope, WindowsHere};
use crate::error::{sqlstate, DbError, DbResult};
use crate::sql::plan::*;
use crate::types::DataType;

/// Placeholder columns for select-list set-returning calls start here.
const SRF_COLUMN_BASE: usize = 1 << 41;

pub(super) fn is_set_returning(name: &str) -> bool {
    matches!(name, "generate_series" | "unnest" | "generate_subscripts" | "show_chunks")
}

/// `e` moved one query level down: columns of the current input become
/// references to the outer row, outer references reach one level further.
fn as_lateral_argument(e: Expr) -> Expr {
    e.transform(&mut |x| match x {
        Expr::Column(index, data_type) => Expr::Outer {
            level: 1,
            index,
            data_type,
        },
        Expr::Outer {
            level,
            index,
            data_type,
        } => Expr::Outer {
            level: level + 1,
            index,
            data_type,
        },
        other => other,
    })
}

fn no_subqueries(args: &[Expr], name: &str) -> DbResult<()> {
    if args.iter().any(|a| a.has_subquery()) {
        return Err(DbError::unsupported(format!("subqueries in the arguments of {name}")));
    }
    Ok(())
}

impl Binder<'_> {
    /// A set-returning call with its arguments coerced to the chosen signature.
    pub(super) fn bind_table_func_call(&mut self, name: &str, args: Vec<Expr>) -> DbResult<TableFuncCall> {
        no_subqueries(&args, name)?;
        match name {
            "generate_series" => self.bind_generate_series(args),
            "unnest" | "generate_subscripts" => self.bind_array_series(name, args),
            // Its arguments were made the array of its chunk names (`show_chunks_array`).
            "show_chunks" => self.bind_array_series("unnest", args),
            _ => Err(DbError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {name} does not exist"))),
        }
    }

    /// unnest(array) and generate_subscripts(array, dim [, reverse]).
    fn bind_array_series(&mut self, name: &str, args: Vec<Expr>) -> DbResult<TableFuncCall> {
        let types: Vec<String> = args.iter().map(|a| a.data_type().name()).collect();
        let no_function = || {
            DbError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {name}({}) does not exist", types.join(", ")))
        };
        let Some(DataType::Array(e)) = args.first().map(|a| a.data_type()) else {
            return Err(no_function());
        };
        if name == "unnest" {
            if args.len() != 1 {
                return Err(DbError::unsupported("unnest of several arrays"));
            }
            return Ok(TableFuncCall {
                func: TableFunc::Unnest,
                args,
                result_type: e.data_type(),
            });
        }
        if !(2..=3).contains(&args.len()) {
            return Err(no_function());
        }
        let mut bound = vec![args[0].clone()];
        bound.push(self.coerce(args[1].clone(), DataType::Int32, name)?);
        if let Some(r) = args.get(2) {
            bound.push(self.coerce(r.clone(), DataType::Bool, name)?);
        }
        Ok(TableFuncCall {
            func: TableFunc::GenerateSubscripts,
            args: bound,
            result_type: DataType::Int32,
        })
    }

    fn bind_generate_series(&mut self, args: Vec<Expr>) -> DbResult<TableFuncCall> {
        use DataType as T;
        let types: Vec<DataType> = args.iter().map(|a| a.data_type()).collect();
        let signature = || types.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ");
        if !(2..=3).contains(&args.len()) {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function generate_series({}) does not exist", signature()),
            ));
        }
        let is_time = |t: &DataType| matches!(t, T::Timestamp | T::TimestampTz | T::Date);
        let result = if types[..2].iter().any(is_time) || types.get(2) == Some(&T::Interval) {
            if args.len() != 3 {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_FUNCTION,
                    format!("function generate_series({}) does not exist", signature()),
                ));
            }
            if types[..2].contains(&T::Timestamp) && !types[..2].contains(&T::TimestampTz) {
                T::Timestamp
            } else {
                T::TimestampTz
            }
        } else if types.contains(&T::Int16) && !types.iter().any(|t| matches!(t, T::Int32 | T::Int64 | T::Numeric)) {
            return Err(DbError::new(
                sqlstate::AMBIGUOUS_FUNCTION,
                format!("function generate_series({}) is not unique", signature()),
            ));
        } else if types.iter().all(|t| matches!(t, T::Int16 | T::Int32 | T::Int64 | T::Numeric | T::Unknown)) {
            if types.contains(&T::Numeric) {
                T::Numeric
            } else if types.contains(&T::Int64) {
                T::Int64
            } else {
                T::Int32
            }
        } else {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function generate_series({}) does not exist", signature()),
            ));
        };
        let step_type = if matches!(result, T::Timestamp | T::TimestampTz) { T::Interval } else { result };
        let mut bound = Vec::new();
        for (i, a) in args.into_iter().enumerate() {
            bound.push(self.coerce(a, if i < 2 { result } else { step_type }, "generate_series")?);
        }
        Ok(TableFuncCall {
            func: TableFunc::GenerateSeries,
            args: bound,
            result_type: result,
        })
    }

    /// A function call in FROM: `name(args) [WITH ORDINALITY] [AS alias[(columns)]]`.
    fn bind_from_function(
        &mut self,
        name: &ast::ObjectName,
        args: &[ast::FunctionArg],
        ordinality: bool,
        alias: Option<&ast::TableAlias>,
    ) -> DbResult<Plan> {
        let fname = object_name_parts(name).pop().unwrap_or_default();
        if !is_set_returning(&fname) {
            return self.bind_scalar_function_in_from(name, args, ordinality, alias, &fname);
        }
        let mut bound = Vec::new();
        if fname == "show_chunks" {
            bound.push(self.bind_in_clause("functions in FROM", |b| b.show_chunks_array(args))?);
        }
        for a in args.iter().filter(|_| fname != "show_chunks") {
            let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = a else {
                return Err(DbError::unsupported(format!("this argument form in a call of {fname}")));
            };
            bound.push(self.bind_in_clause("functions in FROM", |b| b.bind_expr(x, &Scope::default(), None))?);
        }
        let call = self.bind_table_func_call(&fname, bound)?;
        let mut fields = vec![Field::new(fname.clone(), call.result_type)];
        if ordinality {
            fields.push(Field::new("ordinality", DataType::Int64));
        }
        let plan = Plan::TableFunction {
            calls: vec![call],
            ordinality,
            fields,
        };
        // A function returning one column takes the alias as its column name too.
        let qualifier = alias.map(|a| ident_name(&a.name)).unwrap_or(fname);
        let columns = single_column_alias(alias);
        rename_columns(plan, &qualifier, &columns)
    }

    /// A scalar function in FROM (`FROM string_to_array(…) s`): one row holding
    /// its value (and 1, WITH ORDINALITY), bound as the subquery `SELECT f(…)`.
    fn bind_scalar_function_in_from(
        &mut self,
        name: &ast::ObjectName,
        args: &[ast::FunctionArg],
        ordinality: bool,
        alias: Option<&ast::TableAlias>,
        fname: &str,
    ) -> DbResult<Plan> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        // The column is named after the function, or after its OUT parameter.
        let column = match fname {
            "pg_partition_ancestors" => "relid",
            other => other,
        };
        // WITH ORDINALITY numbers the one row.
        let sql = format!(
            "SELECT {name}({}) AS {}{}",
            args.join(", "),
            crate::catalog::quote_ident(column),
            if ordinality { ", CAST(1 AS bigint) AS ordinality" } else { "" }
        );
        let query = match crate::sql::parse(&sql)?.pop() {
            Some(ast::Statement::Query(q)) => q,
            _ => return Err(DbError::internal("a function in FROM")),
        };
        let plan = self.bind_query(&query)?;
        let qualifier = alias.map(|a| ident_name(&a.name)).unwrap_or_else(|| fname.to_string());
        let columns = single_column_alias(alias);
        rename_columns(plan, &qualifier, &columns)
    }

    /// A FROM item, bound so that it may refer to the columns `left` of it when
    /// it is a function or a LATERAL subquery. True when it does (a lateral join is needed).
    pub(super) fn bind_from_item(&mut self, factor: &ast::TableFactor, left: Option<Vec<Field>>) -> DbResult<(Plan, bool)> {
        let may_refer_left = matches!(
            factor,
            ast::TableFactor::Derived { lateral: true, .. }
                | ast::TableFactor::Function { .. }
                | ast::TableFactor::UNNEST { .. }
                | ast::TableFactor::Table { args: Some(_), .. }
        );
        let Some(left) = left.filter(|_| may_refer_left) else {
            return Ok((self.bind_table_factor(factor)?, false));
        };
        self.outer.push(Scope { fields: left });
        self.correlated_depths.push(false);
        let plan = self.bind_table_factor(factor);
        self.outer.pop();
        let lateral = self.correlated_depths.pop().unwrap_or(false);
        Ok((plan?, lateral))
    }

    /// FROM items that name a function: `generate_series(…)` and `LATERAL f(…)`.
    pub(super) fn bind_function_factor(&mut self, factor: &ast::TableFactor) -> DbResult<Option<Plan>> {
        match factor {
            ast::TableFactor::Table {
                name,
                alias,
                args: Some(args),
                with_ordinality,
                ..
            } => Ok(Some(self.bind_from_function(name, &args.args, *with_ordinality, alias.as_ref())?)),
            ast::TableFactor::Function {
                name,
                args,
                with_ordinality,
                alias,
                ..
            } => Ok(Some(self.bind_from_function(name, args, *with_ordinality, alias.as_ref())?)),
            ast::TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_ordinality,
                ..
            } => {
                let args: Vec<ast::FunctionArg> = array_exprs
                    .iter()
                    .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e.clone())))
                    .collect();
                let name = ast::ObjectName::from(vec![ast::Ident::new("unnest")]);
                Ok(Some(self.bind_from_function(&name, &args, *with_ordinality, alias.as_ref())?))
            }
            _ => Ok(None),
        }
    }

    /// `left [LEFT] JOIN LATERAL right ON …`, or a lateral item in a FROM list (`on` None).
    pub(super) fn lateral_join(&mut self, left: Plan, right: Plan, op: Option<&ast::JoinOperator>) -> DbResult<Plan> {
        use ast::JoinOperator as J;
        let (kind, constraint) = match op {
            None => (JoinKind::Inner, None),
            Some(J::Join(c) | J::Inner(c)) => (JoinKind::Inner, Some(c)),
            Some(J::CrossJoin(c)) => (JoinKind::Inner, Some(c)),
            Some(J::Left(c) | J::LeftOuter(c)) => (JoinKind::Left, Some(c)),
            Some(_) => {
                return Err(DbError::new(
                    sqlstate::INVALID_COLUMN_REFERENCE,
                    "the combining JOIN type must be INNER or LEFT for a LATERAL reference",
                ))
            }
        };
        let mut fields = left.fields().to_vec();
        fields.extend(right.fields().iter().cloned());
        let on = match constraint {
            None | Some(ast::JoinConstraint::None) => None,
            Some(ast::JoinConstraint::On(e)) => {
                let scope = Scope { fields: fields.clone() };
                let bound = self.bind_in_clause("JOIN conditions", |b| b.bind_expr(e, &scope, None))?;
                Some(self.coerce(bound, DataType::Bool, "JOIN/ON")?)
            }
            Some(_) => return Err(DbError::unsupported("USING or NATURAL with a LATERAL item")),
        };
        Ok(Plan::Lateral {
            left: Box::new(left),
            right: Box::new(right),
            kind,
            on,
            fields,
            unread_left: Vec::new(),
        })
    }

    /// A set-returning call in a select list: a placeholder for its column.
    pub(super) fn bind_select_list_srf(
        &mut self,
        name: &str,
        f: &ast::Function,
        scope: &Scope,
        mut agg: Option<&mut AggContext>,
    ) -> DbResult<Expr> {
        self.check_select_call_allowed(SelectCall::SetReturning)?;
        let arg_asts = match &f.args {
            ast::FunctionArguments::List(l) => l.args.clone(),
            _ => vec![],
        };
        let mut args = Vec::new();
        if name == "show_chunks" {
            args.push(self.show_chunks_array(&arg_asts)?);
        }
        for a in arg_asts.iter().filter(|_| name != "show_chunks") {
            let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = a else {
                return Err(DbError::unsupported(format!("this argument form in a call of {name}")));
            };
            // No set-returning calls nested in the arguments.
            let here = self.windows_here();
            self.set_windows_here(WindowsHere::NotAllowed);
            // In a grouped query the arguments read the aggregate's row (the
            // calls run after grouping, as PostgreSQL runs them).
            let bound = self.bind_expr(x, scope, agg.as_deref_mut());
            self.set_windows_here(here);
            args.push(bound?);
        }
        let call = self.bind_table_func_call(name, args)?;
        let t = call.result_type;
        let Some(calls) = self.windows.last_mut().map(|w| &mut w.set_returning) else {
            return Err(DbError::internal("set-returning call outside a SELECT"));
        };
        calls.push(call);
        Ok(Expr::Column(SRF_COLUMN_BASE + calls.len() - 1, t))
    }

    /// Runs the SELECT's set-returning calls over `plan` as a lateral join;
    /// returns the plan and where their columns start (for `place_srf_columns`).
    pub(super) fn lateral_set_returning_calls(&mut self, plan: Plan) -> DbResult<(Plan, Option<usize>)> {
        let calls = self.windows.last_mut().map(|w| std::mem::take(&mut w.set_returning)).unwrap_or_default();
        if calls.is_empty() {
            return Ok((plan, None));
        }
        let base = plan.fields().len();
        let calls: Vec<TableFuncCall> = calls
            .into_iter()
            .map(|c| TableFuncCall {
                args: c.args.into_iter().map(as_lateral_argument).collect(),
                ..c
            })
            .collect();
        let fields = calls.iter().enumerate().map(|(i, c)| Field::new(format!("srf{i}"), c.result_type)).collect();
        let right = Plan::TableFunction {
            calls,
            ordinality: false,
            fields,
        };
        Ok((self.lateral_join(plan, right, None)?, Some(base)))
    }
}

/// Renumbers set-returning placeholders in `e` to columns `base + k`.
pub(super) fn place_srf_columns(e: Expr, base: usize) -> Expr {
    e.transform(&mut |x| match x {
        Expr::Column(i, t) if i >= SRF_COLUMN_BASE => Expr::Column(base + (i - SRF_COLUMN_BASE), t),
        other => other,
    })
}

/// The column names an alias gives a one-column function in FROM: its column
/// list, else the alias itself (PostgreSQL names the column after the alias).
fn single_column_alias(alias: Option<&ast::TableAlias>) -> Vec<ast::TableAliasColumnDef> {
    match alias {
        Some(a) if !a.columns.is_empty() => a.columns.clone(),
        Some(a) => vec![ast::TableAliasColumnDef {
            name: a.name.clone(),
            data_type: None,
        }],
        None => vec![],
    }
}
