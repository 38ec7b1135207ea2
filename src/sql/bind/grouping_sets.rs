//! GROUP BY with GROUPING SETS, ROLLUP and CUBE (alone or beside plain
//! keys): the sets are expanded into lists of grouping keys, and the query
//! aggregates once per set — keys outside a set stand as typed NULLs — with
//! the results appended by UNION ALL. Every per-set aggregate has the same
//! columns (all keys, then the aggregates), so HAVING and the select list
//! bind over them as over one aggregate.
//! Must not: change plain GROUP BY (no sets → no rewrite).

use sqlparser::ast;

use crate::error::{DbError, DbResult};
use crate::sql::plan::*;
use crate::types::Datum;

/// Most grouping sets one GROUP BY may expand to (CUBE of 12 keys).
const MAX_SETS: usize = 4096;

/// GROUP BY's distinct key expressions and its grouping sets as indexes into them.
pub(super) type GroupingKeys = (Vec<ast::Expr>, Option<Vec<Vec<usize>>>);

/// The distinct key expressions of `group_by`, and when it has grouping
/// sets, each set as indexes into them (None for a plain GROUP BY).
pub(super) fn expand(group_by: &[ast::Expr]) -> DbResult<GroupingKeys> {
    let has_sets = group_by
        .iter()
        .any(|e| matches!(e, ast::Expr::Rollup(_) | ast::Expr::Cube(_) | ast::Expr::GroupingSets(_)));
    if !has_sets {
        return Ok((group_by.to_vec(), None));
    }
    let mut keys: Vec<ast::Expr> = Vec::new();
    let mut index = |e: &ast::Expr| -> usize {
        match keys.iter().position(|k| k == e) {
            Some(i) => i,
            None => {
                keys.push(e.clone());
                keys.len() - 1
            }
        }
    };
    // Each GROUP BY item is a list of sets; the sets of the whole clause are their cross product.
    let mut sets: Vec<Vec<usize>> = vec![vec![]];
    for item in group_by {
        let item_sets: Vec<Vec<usize>> = match item {
            ast::Expr::Rollup(lists) => {
                let lists: Vec<Vec<usize>> = lists.iter().map(|l| l.iter().map(&mut index).collect()).collect();
                (0..=lists.len()).rev().map(|k| lists[..k].concat()).collect()
            }
            ast::Expr::Cube(lists) => {
                let lists: Vec<Vec<usize>> = lists.iter().map(|l| l.iter().map(&mut index).collect()).collect();
                if lists.len() > 12 {
                    return Err(DbError::new("54001", "CUBE is limited to 12 elements"));
                }
                let n = lists.len();
                let mut out: Vec<Vec<usize>> = (0..1usize << n)
                    .map(|mask| (0..n).filter(|b| mask & (1 << (n - 1 - b)) != 0).flat_map(|b| lists[b].clone()).collect())
                    .collect();
                out.reverse();
                out
            }
            ast::Expr::GroupingSets(lists) => lists.iter().map(|l| l.iter().map(&mut index).collect()).collect(),
            plain => vec![vec![index(plain)]],
        };
        let mut next = Vec::new();
        for s in &sets {
            for t in &item_sets {
                let mut u = s.clone();
                for k in t {
                    if !u.contains(k) {
                        u.push(*k);
                    }
                }
                next.push(u);
            }
        }
        if next.len() > MAX_SETS {
            return Err(DbError::new("54001", format!("too many grouping sets present (maximum {MAX_SETS})")));
        }
        sets = next;
    }
    Ok((keys, Some(sets)))
}

/// One aggregate per grouping set over `input`, appended with UNION ALL.
pub(super) fn grouping_sets_plan(
    input: Plan,
    group_by: Vec<Expr>,
    aggs: Vec<AggCall>,
    fields: Vec<Field>,
    sets: &[Vec<usize>],
) -> Plan {
    let mut out: Option<Plan> = None;
    for set in sets {
        let part = if set.is_empty() {
            // The empty set: one row even over no input, its keys NULL.
            let inner = Plan::Aggregate {
                input: Box::new(input.clone()),
                group_by: vec![],
                aggs: aggs.clone(),
                fields: fields[group_by.len()..].to_vec(),
            };
            let mut exprs: Vec<Expr> = group_by.iter().map(|g| Expr::Literal(Datum::Null, g.data_type())).collect();
            exprs.extend(aggs.iter().enumerate().map(|(i, a)| Expr::Column(i, a.result_type)));
            Plan::Project {
                input: Box::new(inner),
                exprs,
                fields: fields.clone(),
            }
        } else {
            let keys = group_by
                .iter()
                .enumerate()
                .map(|(i, g)| if set.contains(&i) { g.clone() } else { Expr::Literal(Datum::Null, g.data_type()) })
                .collect();
            Plan::Aggregate {
                input: Box::new(input.clone()),
                group_by: keys,
                aggs: aggs.clone(),
                fields: fields.clone(),
            }
        };
        out = Some(match out {
            None => part,
            Some(left) => Plan::SetOp {
                kind: SetOpKind::Union,
                all: true,
                left: Box::new(left),
                right: Box::new(part),
                fields: fields.clone(),
            },
        });
    }
    out.unwrap_or(input)
}
