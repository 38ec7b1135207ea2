//! Boolean kernels: Kleene three-valued AND / OR (NULL AND false = false,
//! NULL OR true = true) and NOT.
//! Must not: coerce non-boolean operands (the resolver rejects them with 42804).

use crate::error::DbResult;
use crate::exec::vector::{Bitmap, Column, ColumnData};
use crate::exec::Operand;
use crate::types::DataType;

use super::common::{map1, prim, prim_column, Nulls};

/// `a AND b` (is_and) or `a OR b`, three-valued.
pub(crate) fn and_or(is_and: bool, a: Operand, b: Operand, len: usize) -> DbResult<Column> {
    let (na, nb) = (Nulls::of(&a, len)?, Nulls::of(&b, len)?);
    let (x, y) = (prim::<bool>(a, len)?, prim::<bool>(b, len)?);
    if matches!((&na, &nb), (Nulls::AllValid, Nulls::AllValid)) {
        let v = if is_and {
            super::common::map2(x, y, len, |p, q| p & q)
        } else {
            super::common::map2(x, y, len, |p, q| p | q)
        };
        return Ok(prim_column(DataType::Bool, v, Nulls::AllValid));
    }
    let mut values = Vec::with_capacity(len);
    let mut validity = Bitmap::new_unset(len);
    let mut any_null = false;
    for i in 0..len {
        let (av, bv) = (na.is_valid(i), nb.is_valid(i));
        let (p, q) = (x.get(i), y.get(i));
        // The value that decides the result on its own: false for AND, true for OR.
        let decisive = if is_and {
            (av && !p) || (bv && !q)
        } else {
            (av && p) || (bv && q)
        };
        let valid = decisive || (av && bv);
        let value = if decisive {
            !is_and
        } else if is_and {
            p && q
        } else {
            p || q
        };
        values.push(valid && value);
        if valid {
            validity.set(i);
        } else {
            any_null = true;
        }
    }
    Ok(Column::new(
        DataType::Bool,
        ColumnData::Bool(values),
        any_null.then_some(validity),
    ))
}

/// `NOT a`.
pub(crate) fn not(a: Operand, len: usize) -> DbResult<Column> {
    let nulls = Nulls::of(&a, len)?;
    let v = map1(prim::<bool>(a, len)?, len, |p| !p);
    Ok(prim_column(DataType::Bool, v, nulls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Datum;

    fn tri(v: Option<bool>) -> Datum {
        v.map_or(Datum::Null, Datum::Bool)
    }

    #[test]
    fn kleene_truth_tables_all_operand_shapes() {
        let vals = [Some(true), Some(false), None];
        for is_and in [true, false] {
            for &p in &vals {
                for &q in &vals {
                    let expect = if is_and {
                        match (p, q) {
                            (Some(false), _) | (_, Some(false)) => Some(false),
                            (Some(true), Some(true)) => Some(true),
                            _ => None,
                        }
                    } else {
                        match (p, q) {
                            (Some(true), _) | (_, Some(true)) => Some(true),
                            (Some(false), Some(false)) => Some(false),
                            _ => None,
                        }
                    };
                    let (dp, dq) = (tri(p), tri(q));
                    let cp = Column::from_datums(DataType::Bool, &[dp.clone(), dp.clone()]);
                    let cq = Column::from_datums(DataType::Bool, &[dq.clone(), dq.clone()]);
                    let shapes = [
                        (Operand::Column(&cp), Operand::Column(&cq)),
                        (Operand::Column(&cp), Operand::Scalar(&dq, DataType::Bool)),
                        (Operand::Scalar(&dp, DataType::Bool), Operand::Column(&cq)),
                        (
                            Operand::Scalar(&dp, DataType::Bool),
                            Operand::Scalar(&dq, DataType::Bool),
                        ),
                    ];
                    for (a, b) in shapes {
                        let r = and_or(is_and, a, b, 2).unwrap();
                        assert_eq!(r.datum(1), tri(expect), "{is_and} {p:?} {q:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn not_keeps_nulls() {
        let c = Column::from_datums(
            DataType::Bool,
            &[Datum::Bool(true), Datum::Null, Datum::Bool(false)],
        );
        let r = not(Operand::Column(&c), 3).unwrap();
        assert_eq!(r.datum(0), Datum::Bool(false));
        assert_eq!(r.datum(1), Datum::Null);
        assert_eq!(r.datum(2), Datum::Bool(true));
    }
}
