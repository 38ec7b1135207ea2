//! Rewrites of bound plans that keep their results and cut their work.
//!
//! `filter` places a WHERE clause's conjuncts as deep as they can go: a
//! conjunct over one side of an inner or cross join moves into that side (a
//! scan's filter then runs on the shards, pruning blocks), and one over both
//! sides becomes the join's condition, so `FROM a, b WHERE a.x = b.y` is a
//! hash join instead of a cross product filtered afterwards.
//! Must not: move a conjunct with a subquery, an outer reference or a
//! sequence call (those stay above the joins, evaluated where they were
//! written), or move anything across an outer join.

use crate::exec::kernels::{BinaryOp, BinarySignature};
use crate::sql::plan::{Expr, JoinKind, Plan};
use crate::types::DataType;

/// `input` filtered by `predicate` (a boolean over `input`'s columns), with
/// the predicate's conjuncts pushed down where they apply.
pub fn filter(input: Plan, predicate: Expr) -> Plan {
    let mut conjuncts = Vec::new();
    flatten_and(predicate, &mut conjuncts);
    let (movable, fixed): (Vec<Expr>, Vec<Expr>) = conjuncts.into_iter().partition(movable);
    wrap(place(input, movable), fixed)
}

fn movable(e: &Expr) -> bool {
    let mut ok = true;
    e.walk(&mut |x| {
        if matches!(x, Expr::Subquery(_) | Expr::Outer { .. } | Expr::NextVal(_)) {
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
    e.transform(&mut |x| match x {
        Expr::Column(i, t) => Expr::Column(i - by, t),
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
    conjuncts.into_iter().reduce(|a, b| Expr::Binary {
        sig: BinarySignature {
            op: BinaryOp::And,
            left: DataType::Bool,
            right: DataType::Bool,
            result: DataType::Bool,
        },
        left: Box::new(a),
        right: Box::new(b),
    })
}
