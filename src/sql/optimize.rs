//! Rewrites of bound plans that keep their results and cut their work.
//!
//! `filter` places a WHERE clause's conjuncts as deep as they can go: a
//! conjunct over one side of an inner or cross join moves into that side (a
//! scan's filter then runs on the shards, pruning blocks), and one over both
//! sides becomes the join's condition, so `FROM a, b WHERE a.x = b.y` is a
//! hash join instead of a cross product filtered afterwards. A FROM list of
//! three or more tables is first put in an order where each table joins one
//! already taken by a condition, where there is one (the written order
//! otherwise), so that no step is a cross product it need not be; a
//! projection restores the written column order. A conjunct over a lateral
//! join's left columns alone moves into its left side.
//!
//! `prune_lateral_left` blanks the left columns of a lateral join
//! (`FROM scan, unnest(ranges) AS r`) that nothing above reads: the
//! lateral join repeats each left row once per returned row, and a wide
//! array column repeated per element is most of such a query's work.
//!
//! `narrow_scan` cuts a scan under a SELECT list down to the columns the
//! list and the filters read: shards then decode and send only those
//! (a query naming 2 of an `imu` table's 19 columns skipped none of them).
//!
//! Must not: move a conjunct with a subquery, an outer reference or a
//! sequence call (those stay above the joins, evaluated where they were
//! written), or move anything across an outer join.

use crate::exec::kernels::BinaryOp;
use crate::sql::bind::cross_join;
use crate::sql::plan::{Expr, JoinKind, Plan};
use crate::types::Datum;

/// `input` filtered by `predicate` (a boolean over `input`'s columns), with
/// the predicate's conjuncts pushed down where they apply.
pub fn filter(input: Plan, predicate: Expr) -> Plan {
    let mut conjuncts = Vec::new();
    flatten_and(predicate, &mut conjuncts);
    let (movable, fixed): (Vec<Expr>, Vec<Expr>) = conjuncts.into_iter().partition(movable);
    let placed = if join_leaves(&input).is_some_and(|n| n >= 3) {
        reorder(input, movable)
    } else {
        place(input, movable)
    };
    wrap(placed, fixed)
}

/// The number of relations under a tree of inner and cross joins whose
/// conditions can all move, or `None` when `plan` is not such a join.
fn join_leaves(plan: &Plan) -> Option<usize> {
    match plan {
        Plan::Join {
            left,
            right,
            kind: JoinKind::Inner | JoinKind::Cross,
            on,
            ..
        } => {
            if on.as_ref().is_some_and(|e| !movable(e)) {
                return None;
            }
            // an outer join below is one relation, taken as it is
            let side = |p: &Plan| match p {
                Plan::Join {
                    kind: JoinKind::Inner | JoinKind::Cross,
                    ..
                } => join_leaves(p),
                _ => Some(1),
            };
            Some(side(left)? + side(right)?)
        }
        _ => None,
    }
}

/// The relations under a tree of inner/cross joins, left to right, and its
/// join conditions over the tree's columns (`offset`: where `plan`'s
/// columns start).
fn flatten_joins(plan: Plan, offset: usize, leaves: &mut Vec<Plan>, conditions: &mut Vec<Expr>) {
    match plan {
        Plan::Join {
            left,
            right,
            kind: JoinKind::Inner | JoinKind::Cross,
            on,
            ..
        } => {
            let width = left.fields().len();
            flatten_joins(*left, offset, leaves, conditions);
            flatten_joins(*right, offset + width, leaves, conditions);
            if let Some(on) = on {
                flatten_and(renumber(on, &|i| i + offset), conditions);
            }
        }
        other => leaves.push(other),
    }
}

/// A join tree (see `join_leaves`) rebuilt left-deep in a connected order,
/// `conjuncts` placed in it, under a projection giving the written order.
fn reorder(plan: Plan, conjuncts: Vec<Expr>) -> Plan {
    let fields = plan.fields().to_vec();
    let (mut leaves, mut conditions) = (Vec::new(), conjuncts);
    flatten_joins(plan, 0, &mut leaves, &mut conditions);
    let mut starts = Vec::with_capacity(leaves.len());
    let mut at = 0;
    for l in &leaves {
        starts.push(at);
        at += l.fields().len();
    }
    let leaf_of = |col: usize| starts.partition_point(|&s| s <= col) - 1;
    let touched: Vec<Vec<usize>> = conditions
        .iter()
        .map(|c| {
            let mut cols = Vec::new();
            c.columns_used(&mut cols);
            let mut ls: Vec<usize> = cols.into_iter().map(leaf_of).collect();
            ls.sort_unstable();
            ls.dedup();
            ls
        })
        .collect();
    // Greedy: the first relation not yet taken that a condition joins to
    // those taken (and no others), else the first not yet taken.
    let mut order = vec![0usize];
    let mut taken = vec![false; leaves.len()];
    taken[0] = true;
    while order.len() < leaves.len() {
        let joins = |l: usize| {
            touched.iter().any(|ls| {
                ls.contains(&l) && ls.len() > 1 && ls.iter().all(|&x| x == l || taken[x])
            })
        };
        let next = (0..leaves.len())
            .find(|&l| !taken[l] && joins(l))
            .or_else(|| (0..leaves.len()).find(|&l| !taken[l]))
            .unwrap_or(0);
        taken[next] = true;
        order.push(next);
    }
    // Where each written column lands in the new order.
    let mut new_start = vec![0; leaves.len()];
    let mut at = 0;
    for &l in &order {
        new_start[l] = at;
        at += leaves[l].fields().len();
    }
    let moved = |col: usize| {
        let l = leaf_of(col);
        new_start[l] + (col - starts[l])
    };
    let mut slots: Vec<Option<Plan>> = leaves.into_iter().map(Some).collect();
    let mut tree: Option<Plan> = None;
    for &l in &order {
        let Some(leaf) = slots[l].take() else { continue };
        tree = Some(match tree {
            None => leaf,
            Some(left) => cross_join(left, leaf),
        });
    }
    let Some(tree) = tree else {
        unreachable!("a join has at least two relations")
    };
    let conditions = conditions.into_iter().map(|c| renumber(c, &moved)).collect();
    let exprs = fields
        .iter()
        .enumerate()
        .map(|(i, f)| Expr::Column(moved(i), f.data_type))
        .collect();
    Plan::Project {
        input: Box::new(place(tree, conditions)),
        exprs,
        fields,
    }
}

fn movable(e: &Expr) -> bool {
    let mut ok = true;
    e.walk(&mut |x| {
        if matches!(x, Expr::Subquery(_) | Expr::Outer { .. } | Expr::NextVal(_) | Expr::CurrVal(_) | Expr::LastVal(_) | Expr::SetVal { .. } | Expr::SignalBackend { .. }) {
            ok = false;
        }
    });
    ok
}

/// `plan` with `conjuncts` (movable, over its columns) placed inside it.
fn place(plan: Plan, conjuncts: Vec<Expr>) -> Plan {
    match plan {
        Plan::Join {
            left,
            right,
            kind: kind @ (JoinKind::Inner | JoinKind::Cross),
            on,
            fields,
        } => {
            let split = left.fields().len();
            let mut all = conjuncts;
            let mut fixed_on = Vec::new();
            if let Some(on) = on {
                let mut own = Vec::new();
                flatten_and(on, &mut own);
                for c in own {
                    if movable(&c) {
                        all.push(c);
                    } else {
                        fixed_on.push(c);
                    }
                }
            }
            let (mut to_left, mut to_right, mut both) = (Vec::new(), Vec::new(), fixed_on);
            for c in all {
                let mut cols = Vec::new();
                c.columns_used(&mut cols);
                if cols.is_empty() {
                    both.push(c);
                } else if cols.iter().all(|&i| i < split) {
                    to_left.push(c);
                } else if cols.iter().all(|&i| i >= split) {
                    to_right.push(shift_columns(c, split));
                } else {
                    both.push(c);
                }
            }
            let on = and_all(both);
            let kind = match (&on, kind) {
                (None, _) => JoinKind::Cross,
                (Some(_), _) => JoinKind::Inner,
            };
            Plan::Join {
                left: Box::new(place(*left, to_left)),
                right: Box::new(place(*right, to_right)),
                kind,
                on,
                fields,
            }
        }
        // A conjunct over the left columns alone filters the left rows
        // before the right side runs for them (for LEFT too: a left row's
        // fate does not depend on its right rows there).
        Plan::Lateral {
            left,
            right,
            kind,
            on,
            fields,
            unread_left,
        } => {
            let split = left.fields().len();
            let (to_left, above): (Vec<Expr>, Vec<Expr>) = conjuncts.into_iter().partition(|c| {
                let mut cols = Vec::new();
                c.columns_used(&mut cols);
                !cols.is_empty() && cols.iter().all(|&i| i < split)
            });
            wrap(
                Plan::Lateral {
                    left: Box::new(place(*left, to_left)),
                    right,
                    kind,
                    on,
                    fields,
                    unread_left,
                },
                above,
            )
        }
        other => wrap(other, conjuncts),
    }
}

fn wrap(plan: Plan, conjuncts: Vec<Expr>) -> Plan {
    match and_all(conjuncts) {
        Some(predicate) => Plan::Filter {
            input: Box::new(plan),
            predicate,
        },
        None => plan,
    }
}

/// Column `i` becomes column `i - by` (an expression over a join's right side).
fn shift_columns(e: Expr, by: usize) -> Expr {
    renumber(e, &|i| i - by)
}

fn renumber(e: Expr, to: &dyn Fn(usize) -> usize) -> Expr {
    e.transform(&mut |x| match x {
        Expr::Column(i, t) => Expr::Column(to(i), t),
        other => other,
    })
}

fn flatten_and(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Binary { sig, left, right } if sig.op == BinaryOp::And => {
            flatten_and(*left, out);
            flatten_and(*right, out);
        }
        other => out.push(other),
    }
}

fn and_all(conjuncts: Vec<Expr>) -> Option<Expr> {
    conjuncts.into_iter().reduce(Expr::and)
}

/// `input` (the input of an operator that reads only the columns `used` of
/// it) with the left columns of a lateral join below it that neither `used`,
/// the join's condition nor a filter in between read marked unread (paired
/// as NULLs). `None`: nothing to blank.
pub fn prune_lateral_left(input: &Plan, used: &[usize]) -> Option<Plan> {
    match input {
        Plan::Filter { input: inner, predicate } if !predicate.has_subquery() => {
            let mut used = used.to_vec();
            predicate.columns_used(&mut used);
            Some(Plan::Filter {
                input: Box::new(prune_lateral_left(inner, &used)?),
                predicate: predicate.clone(),
            })
        }
        Plan::Lateral {
            left,
            right,
            kind,
            on,
            fields,
            unread_left,
        } => {
            let mut needed = used.to_vec();
            if let Some(on) = on {
                if on.has_subquery() {
                    return None;
                }
                on.columns_used(&mut needed);
            }
            // The right side reads the left row before pairing (as its outer
            // row), so its references do not count.
            let unread: Vec<usize> = (0..left.fields().len()).filter(|i| !needed.contains(i)).collect();
            if unread.is_empty() || unread == *unread_left {
                return None;
            }
            let narrowed = outer_columns_read(right).and_then(|reads| {
                let read = |i: &usize| !unread.contains(i) || reads.contains(i);
                read_only(left, &(0..left.fields().len()).filter(read).collect::<Vec<_>>())
            });
            Some(Plan::Lateral {
                left: Box::new(narrowed.unwrap_or_else(|| left.as_ref().clone())),
                right: right.clone(),
                kind: *kind,
                on: on.clone(),
                fields: fields.clone(),
                unread_left: unread,
            })
        }
        _ => None,
    }
}

/// The columns of its outer row (level 1) a lateral join's right side reads,
/// when it is a table function (under a projection of its columns) over
/// outer columns and constants; None for anything else (a subquery may read
/// its outer row anywhere).
fn outer_columns_read(right: &Plan) -> Option<Vec<usize>> {
    let right = match right {
        Plan::Project { input, exprs, .. } if exprs.iter().all(|e| matches!(e, Expr::Column(..))) => input.as_ref(),
        other => other,
    };
    let Plan::TableFunction { calls, .. } = right else { return None };
    let mut reads = Vec::new();
    for arg in calls.iter().flat_map(|c| &c.args) {
        if arg.has_subquery() {
            return None;
        }
        arg.walk(&mut |e| {
            if let Expr::Outer { level: 1, index, .. } = e {
                reads.push(*index);
            }
        });
    }
    Some(reads)
}

/// `input` (a scan, or a filter over a scan) scanning only the columns
/// `keep` and the filter read, under a projection that puts NULLs in the
/// others' places, so its output keeps its shape; None when it is no such
/// plan or would scan nothing less.
fn read_only(input: &Plan, keep: &[usize]) -> Option<Plan> {
    let columns: Vec<Expr> = keep.iter().map(|&i| Expr::Column(i, input.fields()[i].data_type)).collect();
    let (scan, kept) = narrow_scan(input, &columns)?;
    let exprs = input
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| match keep.iter().position(|&k| k == i) {
            Some(k) => kept[k].clone(),
            None => Expr::Literal(Datum::Null, f.data_type),
        })
        .collect();
    Some(Plan::Project { input: Box::new(scan), exprs, fields: input.fields().to_vec() })
}

/// `input` (a scan, or a filter over a scan) reading only the columns that
/// `exprs` and its filters use, and `exprs` renumbered onto it; `None` when
/// it already reads nothing more. A subquery in `exprs` may read the row
/// as its outer row, so the scan is then left whole.
pub fn narrow_scan(input: &Plan, exprs: &[Expr]) -> Option<(Plan, Vec<Expr>)> {
    let (scan, predicate) = match input {
        Plan::Filter { input: inner, predicate } if matches!(inner.as_ref(), Plan::Scan { .. }) => (inner.as_ref(), Some(predicate)),
        Plan::Scan { .. } => (input, None),
        _ => return None,
    };
    let Plan::Scan { table, projection, filter, fields } = scan else { return None };
    // A scan's own filter is over the table's columns (the shards evaluate
    // it there), so it neither needs a projected column nor is renumbered.
    let reads = exprs.iter().chain(predicate);
    let mut used = Vec::new();
    for e in reads {
        if e.has_subquery() {
            return None;
        }
        e.columns_used(&mut used);
    }
    used.sort_unstable();
    used.dedup();
    if used.is_empty() {
        // Rows without values (`SELECT 1 FROM t`): one column still counts them.
        used.push(0);
    }
    if used.len() >= projection.len() || used.iter().any(|&i| i >= projection.len()) {
        return None;
    }
    let renumber_onto = |e: &Expr| renumber(e.clone(), &|i| used.binary_search(&i).unwrap_or(i));
    let narrowed = Plan::Scan {
        table: table.clone(),
        projection: used.iter().map(|&i| projection[i]).collect(),
        filter: filter.clone(),
        fields: used.iter().map(|&i| fields[i].clone()).collect(),
    };
    let plan = match predicate {
        Some(p) => Plan::Filter {
            input: Box::new(narrowed),
            predicate: renumber_onto(p),
        },
        None => narrowed,
    };
    Some((plan, exprs.iter().map(renumber_onto).collect()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::catalog::{ColumnDef, TableDef};
    use crate::sql::plan::{Field, TableFunc, TableFuncCall};
    use crate::types::array::ArrayElem;
    use crate::types::DataType;

    /// `scan(recording, time, effort float8[], name text[], position float8[])`
    /// laterally joined with `unnest(outer.effort) AS e`.
    fn lateral_unnest_of_effort(right_is_function: bool) -> Plan {
        let columns: Vec<(&str, DataType)> = vec![
            ("recording", DataType::Text),
            ("time", DataType::TimestampTz),
            ("effort", DataType::Array(ArrayElem::Float64)),
            ("name", DataType::Array(ArrayElem::Text)),
            ("position", DataType::Array(ArrayElem::Float64)),
        ];
        let table = Arc::new(TableDef {
            oid: 1,
            name: "joint_states".into(),
            schema: "fleet".into(),
            columns: columns
                .iter()
                .map(|(n, t)| ColumnDef::plain(*n, *t))
                .collect(),
            time_column: Some(1),
            frame_files: vec![],
            checks: Vec::new(),
            foreign_keys: Vec::new(),
        });
        let fields: Vec<Field> = columns.iter().map(|(n, t)| Field::new(*n, *t)).collect();
        let left = Plan::Scan { table, projection: (0..5).collect(), filter: None, fields: fields.clone() };
        let effort = Expr::Outer { level: 1, index: 2, data_type: DataType::Array(ArrayElem::Float64) };
        let unnest = Plan::TableFunction {
            calls: vec![TableFuncCall { func: TableFunc::Unnest, args: vec![effort], result_type: DataType::Float64 }],
            ordinality: false,
            fields: vec![Field::new("unnest", DataType::Float64)],
        };
        let right = Plan::Project {
            input: Box::new(unnest),
            exprs: vec![Expr::Column(0, DataType::Float64)],
            fields: vec![Field::new("e", DataType::Float64)],
        };
        let right = if right_is_function { right } else { Plan::Limit { input: Box::new(right), limit: None, offset: None } };
        let mut all = fields;
        all.push(Field::new("e", DataType::Float64));
        Plan::Lateral { left: Box::new(left), right: Box::new(right), kind: JoinKind::Inner, on: None, fields: all, unread_left: vec![] }
    }

    /// The scan under a lateral unnest reads the columns read above and the
    /// array the function unnests, the others given as NULLs in place; a
    /// right side that is not a plain table function leaves the scan whole.
    #[test]
    fn a_lateral_unnest_scans_only_what_is_read() {
        let scanned = |plan: &Plan| -> (Vec<usize>, bool) {
            let Plan::Lateral { left, .. } = plan else { panic!("{plan:?}") };
            match left.as_ref() {
                Plan::Project { input, exprs, .. } => {
                    let Plan::Scan { projection, .. } = input.as_ref() else { panic!("{input:?}") };
                    assert_eq!(exprs.len(), 5, "the left keeps its shape");
                    (projection.clone(), true)
                }
                Plan::Scan { projection, .. } => (projection.clone(), false),
                other => panic!("{other:?}"),
            }
        };
        // count(*): only the unnested array.
        let pruned = prune_lateral_left(&lateral_unnest_of_effort(true), &[]).expect("pruned");
        assert_eq!(scanned(&pruned), (vec![2], true));
        // recording and the unnested element read above.
        let pruned = prune_lateral_left(&lateral_unnest_of_effort(true), &[0, 5]).expect("pruned");
        assert_eq!(scanned(&pruned), (vec![0, 2], true));
        let Plan::Lateral { left, .. } = &pruned else { unreachable!() };
        let Plan::Project { exprs, .. } = left.as_ref() else { unreachable!() };
        assert!(matches!(exprs[3], Expr::Literal(Datum::Null, DataType::Array(ArrayElem::Text))));
        // Any other right side may read the outer row anywhere.
        let pruned = prune_lateral_left(&lateral_unnest_of_effort(false), &[]).expect("pruned");
        assert_eq!(scanned(&pruned), ((0..5).collect(), false));
    }
}
