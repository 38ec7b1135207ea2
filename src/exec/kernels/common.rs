//! Shared machinery of the kernels: typed access to operands (a column
//! slice or one constant), validity combination by bitmap words, the generic
//! column/scalar loop drivers (`map1`, `map2` and their overflow-checked
//! variants) and operands coerced to a kernel's input type (`Held`).
//! Must not: know any SQL operator or function semantics; every loop here is
//! dispatched on types once per call by the caller.


use crate::error::{DbError, DbResult};
use crate::exec::vector::{Bitmap, BytesColumn, Column, ColumnData};
use crate::exec::{EvalContext, Operand};
use crate::types::{DataType, Datum, Interval, Numeric, PhysicalType};

/// Which rows of a result are NULL, combined from the inputs' validity.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Nulls {
    /// Every row valid.
    AllValid,
    /// Every row NULL (a NULL constant among strict inputs).
    AllNull,
    /// Bit set = valid.
    Mask(Bitmap),
}

impl Nulls {
    /// The validity of one operand of `len` rows.
    pub fn of(op: &Operand, len: usize) -> DbResult<Nulls> {
        match op {
            Operand::Column(c) => {
                if c.len() != len {
                    return Err(DbError::internal(format!(
                        "kernel operand has {} rows, expected {len}",
                        c.len()
                    )));
                }
                Ok(match &c.validity {
                    None => Nulls::AllValid,
                    Some(b) => Nulls::Mask(b.clone()),
                })
            }
            Operand::Scalar(d, _) => Ok(if d.is_null() {
                Nulls::AllNull
            } else {
                Nulls::AllValid
            }),
        }
    }

    pub fn of2(a: &Operand, b: &Operand, len: usize) -> DbResult<Nulls> {
        Ok(Nulls::of(a, len)?.and(Nulls::of(b, len)?))
    }

    pub fn of_all(ops: &[Operand], len: usize) -> DbResult<Nulls> {
        let mut n = Nulls::AllValid;
        for op in ops {
            n = n.and(Nulls::of(op, len)?);
        }
        Ok(n)
    }

    /// Row valid in both (word-wise AND).
    pub fn and(self, other: Nulls) -> Nulls {
        match (self, other) {
            (Nulls::AllNull, _) | (_, Nulls::AllNull) => Nulls::AllNull,
            (Nulls::AllValid, x) | (x, Nulls::AllValid) => x,
            (Nulls::Mask(a), Nulls::Mask(b)) => Nulls::Mask(a.and(&b)),
        }
    }

    pub fn all_null(&self) -> bool {
        matches!(self, Nulls::AllNull)
    }

    #[inline]
    pub fn is_valid(&self, i: usize) -> bool {
        match self {
            Nulls::AllValid => true,
            Nulls::AllNull => false,
            Nulls::Mask(b) => b.get(i),
        }
    }

    /// The result column's validity bitmap (`None` when no NULLs).
    pub fn into_validity(self, len: usize) -> Option<Bitmap> {
        match self {
            Nulls::AllValid => None,
            Nulls::AllNull => Some(Bitmap::new_unset(len)),
            Nulls::Mask(b) => {
                if b.all_set() {
                    None
                } else {
                    Some(b)
                }
            }
        }
    }
}

/// `len` NULLs of type `ty`.
pub(crate) fn null_column(ty: DataType, len: usize) -> Column {
    Column::new(
        ty,
        default_data(ty.physical(), len),
        Some(Bitmap::new_unset(len)),
    )
}

/// `len` default slots (0, empty) of a physical type.
pub(crate) fn default_data(p: PhysicalType, len: usize) -> ColumnData {
    match p {
        PhysicalType::Bool => ColumnData::Bool(vec![false; len]),
        PhysicalType::Int16 => ColumnData::Int16(vec![0; len]),
        PhysicalType::Int32 => ColumnData::Int32(vec![0; len]),
        PhysicalType::Int64 => ColumnData::Int64(vec![0; len]),
        PhysicalType::Float32 => ColumnData::Float32(vec![0.0; len]),
        PhysicalType::Float64 => ColumnData::Float64(vec![0.0; len]),
        PhysicalType::Numeric => ColumnData::Numeric(vec![Numeric::ZERO; len]),
        PhysicalType::Interval => ColumnData::Interval(vec![Interval::default(); len]),
        PhysicalType::Bytes => ColumnData::Bytes(BytesColumn {
            offsets: vec![0; len + 1],
            data: Vec::new(),
        }),
    }
}

/// A fixed-width value type a column can hold.
pub(crate) trait Prim: Copy + Default + 'static {
    fn slice(d: &ColumnData) -> Option<&[Self]>;
    fn from_datum(d: &Datum) -> Option<Self>;
    fn into_data(v: Vec<Self>) -> ColumnData;
}

macro_rules! prim {
    ($t:ty, $v:ident) => {
        impl Prim for $t {
            #[inline]
            fn slice(d: &ColumnData) -> Option<&[Self]> {
                match d {
                    ColumnData::$v(v) => Some(v),
                    _ => None,
                }
            }
            #[inline]
            fn from_datum(d: &Datum) -> Option<Self> {
                match d {
                    Datum::$v(v) => Some(*v),
                    _ => None,
                }
            }
            #[inline]
            fn into_data(v: Vec<Self>) -> ColumnData {
                ColumnData::$v(v)
            }
        }
    };
}
prim!(bool, Bool);
prim!(i16, Int16);
prim!(i32, Int32);
prim!(i64, Int64);
prim!(f32, Float32);
prim!(f64, Float64);
prim!(Numeric, Numeric);
prim!(Interval, Interval);

/// A fixed-width operand: a column slice of exactly `len` rows, or one value for every row.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a, T: Copy> {
    Col(&'a [T]),
    Const(T),
}

impl<'a, T: Copy> Arg<'a, T> {
    #[inline(always)]
    pub fn get(&self, i: usize) -> T {
        match self {
            Arg::Col(s) => s[i],
            Arg::Const(v) => *v,
        }
    }
}

fn kind_mismatch(op: &Operand, want: &str) -> DbError {
    DbError::internal(format!(
        "kernel expected a {want} operand, got type {}",
        op.data_type().name()
    ))
}

/// Typed access to a fixed-width operand (a NULL constant reads as the default value).
pub(crate) fn prim<'a, T: Prim>(op: Operand<'a>, len: usize) -> DbResult<Arg<'a, T>> {
    match op {
        Operand::Column(c) => {
            let s =
                T::slice(&c.data).ok_or_else(|| kind_mismatch(&op, std::any::type_name::<T>()))?;
            if s.len() < len {
                return Err(DbError::internal("kernel operand shorter than the batch"));
            }
            Ok(Arg::Col(&s[..len]))
        }
        Operand::Scalar(Datum::Null, _) => Ok(Arg::Const(T::default())),
        Operand::Scalar(d, _) => T::from_datum(d)
            .map(Arg::Const)
            .ok_or_else(|| kind_mismatch(&op, std::any::type_name::<T>())),
    }
}

/// A variable-length operand (text, bytea, jsonb ...).
#[derive(Debug, Clone, Copy)]
pub(crate) enum BArg<'a> {
    Col(&'a BytesColumn),
    Const(&'a [u8]),
}

impl<'a> BArg<'a> {
    #[inline(always)]
    pub fn get(&self, i: usize) -> &'a [u8] {
        match self {
            BArg::Col(c) => c.get(i),
            BArg::Const(v) => v,
        }
    }
    /// The value as text (text columns only ever hold UTF-8; invalid bytes read as "").
    #[inline(always)]
    pub fn get_str(&self, i: usize) -> &'a str {
        std::str::from_utf8(self.get(i)).unwrap_or("")
    }
}

pub(crate) fn bytes<'a>(op: Operand<'a>, len: usize) -> DbResult<BArg<'a>> {
    match op {
        Operand::Column(c) => match &c.data {
            ColumnData::Bytes(b) if b.len() >= len => Ok(BArg::Col(b)),
            _ => Err(kind_mismatch(&op, "bytes")),
        },
        Operand::Scalar(Datum::Null, _) => Ok(BArg::Const(&[])),
        Operand::Scalar(Datum::Bytes(b), _) => Ok(BArg::Const(b)),
        Operand::Scalar(..) => Err(kind_mismatch(&op, "bytes")),
    }
}

/// Applies `f` to every row of one operand (a constant is computed once).
#[inline(always)]
pub(crate) fn map1<A: Copy, O: Clone>(a: Arg<A>, len: usize, mut f: impl FnMut(A) -> O) -> Vec<O> {
    match a {
        Arg::Col(x) => x[..len].iter().map(|&p| f(p)).collect(),
        Arg::Const(p) => vec![f(p); len],
    }
}

/// Applies `f` to every row pair, with dedicated column-column,
/// column-constant and constant-column loops.
#[inline(always)]
pub(crate) fn map2<A: Copy, B: Copy, O: Clone>(
    a: Arg<A>,
    b: Arg<B>,
    len: usize,
    mut f: impl FnMut(A, B) -> O,
) -> Vec<O> {
    match (a, b) {
        (Arg::Col(x), Arg::Col(y)) => {
            let (x, y) = (&x[..len], &y[..len]);
            x.iter().zip(y).map(|(&p, &q)| f(p, q)).collect()
        }
        (Arg::Col(x), Arg::Const(q)) => x[..len].iter().map(|&p| f(p, q)).collect(),
        (Arg::Const(p), Arg::Col(y)) => y[..len].iter().map(|&q| f(p, q)).collect(),
        (Arg::Const(p), Arg::Const(q)) => vec![f(p, q); len],
    }
}

/// `map2` for operations that can fail: `f` returns the (wrapped) value and
/// a failure flag; the flags are OR-ed over the whole vector and only when
/// one is set does a second pass look for the first failing valid row and
/// report `err` for it (failures on NULL rows are ignored).
#[inline(always)]
pub(crate) fn map2_checked<A: Copy, B: Copy, O: Clone>(
    a: Arg<A>,
    b: Arg<B>,
    len: usize,
    nulls: &Nulls,
    f: impl Fn(A, B) -> (O, bool),
    err: impl Fn(A, B) -> DbError,
) -> DbResult<Vec<O>> {
    let mut bad = false;
    let out = map2(a, b, len, |p, q| {
        let (r, e) = f(p, q);
        bad |= e;
        r
    });
    if bad {
        for i in 0..len {
            if nulls.is_valid(i) {
                let (p, q) = (a.get(i), b.get(i));
                if f(p, q).1 {
                    return Err(err(p, q));
                }
            }
        }
    }
    Ok(out)
}

/// One-operand `map2_checked`.
#[inline(always)]
pub(crate) fn map1_checked<A: Copy, O: Clone>(
    a: Arg<A>,
    len: usize,
    nulls: &Nulls,
    f: impl Fn(A) -> (O, bool),
    err: impl Fn(A) -> DbError,
) -> DbResult<Vec<O>> {
    let mut bad = false;
    let out = map1(a, len, |p| {
        let (r, e) = f(p);
        bad |= e;
        r
    });
    if bad {
        for i in 0..len {
            if nulls.is_valid(i) && f(a.get(i)).1 {
                return Err(err(a.get(i)));
            }
        }
    }
    Ok(out)
}

/// Row-at-a-time fallible map for slow kernels (numeric, calendar): `f` is
/// only called on valid rows; NULL rows get the default value.
#[inline(always)]
pub(crate) fn map2_try<A: Copy, B: Copy, O: Default + Clone>(
    a: Arg<A>,
    b: Arg<B>,
    len: usize,
    nulls: &Nulls,
    mut f: impl FnMut(A, B) -> DbResult<O>,
) -> DbResult<Vec<O>> {
    let mut out = Vec::with_capacity(len);
    match nulls {
        Nulls::AllValid => {
            if let (Arg::Const(p), Arg::Const(q)) = (a, b) {
                let v = if len > 0 { f(p, q)? } else { O::default() };
                return Ok(vec![v; len]);
            }
            for i in 0..len {
                out.push(f(a.get(i), b.get(i))?);
            }
        }
        _ => {
            for i in 0..len {
                out.push(if nulls.is_valid(i) {
                    f(a.get(i), b.get(i))?
                } else {
                    O::default()
                });
            }
        }
    }
    Ok(out)
}

/// One-operand `map2_try`.
#[inline(always)]
pub(crate) fn map1_try<A: Copy, O: Default + Clone>(
    a: Arg<A>,
    len: usize,
    nulls: &Nulls,
    mut f: impl FnMut(A) -> DbResult<O>,
) -> DbResult<Vec<O>> {
    map2_try(a, Arg::Const(()), len, nulls, |p, ()| f(p))
}

/// A result column of a fixed-width type.
pub(crate) fn prim_column<T: Prim>(ty: DataType, v: Vec<T>, nulls: Nulls) -> Column {
    let len = v.len();
    Column::new(ty, T::into_data(v), nulls.into_validity(len))
}

/// A result column of a variable-length type.
pub(crate) fn bytes_column(ty: DataType, v: BytesColumn, nulls: Nulls) -> Column {
    let len = v.len();
    Column::new(ty, ColumnData::Bytes(v), nulls.into_validity(len))
}

/// An operand converted to the type a kernel runs on: borrowed when it
/// already has that type (or only a typmod / string-kind relabel differs),
/// otherwise cast once per call.
pub(crate) enum Held<'a> {
    Borrowed(Operand<'a>),
    Col(Column),
    Scalar(Datum, DataType),
}

/// Whether values of `from` can be used as `to` without touching the data.
pub(crate) fn same_representation(from: DataType, to: DataType) -> bool {
    use DataType::*;
    if from == to {
        return true;
    }
    match (from, to) {
        (Bpchar(_), Bpchar(None)) => true,
        (Text | Varchar(_) | Unknown, Text | Varchar(None) | Bpchar(None)) => true,
        (Name | Char, Text | Varchar(None) | Bpchar(None)) | (Oid, Int64) => true,
        _ => from.same_family(to) && !matches!(to, Varchar(Some(_)) | Bpchar(Some(_))),
    }
}

impl<'a> Held<'a> {
    pub fn coerce(op: Operand<'a>, to: DataType, ctx: &EvalContext) -> DbResult<Held<'a>> {
        let from = op.data_type();
        if same_representation(from, to) {
            return Ok(Held::Borrowed(op));
        }
        Ok(match op {
            Operand::Column(c) => Held::Col(super::cast::cast_column(c, to, ctx)?),
            Operand::Scalar(Datum::Null, _) => Held::Scalar(Datum::Null, to),
            Operand::Scalar(d, t) => Held::Scalar(super::cast::cast_datum(d, t, to, ctx)?, to),
        })
    }

    pub fn operand(&self) -> Operand<'_> {
        match self {
            Held::Borrowed(op) => *op,
            Held::Col(c) => Operand::Column(c),
            Held::Scalar(d, t) => Operand::Scalar(d, *t),
        }
    }
}

/// 22003 "value out of range: overflow" (float results).
pub(crate) fn float_overflow() -> DbError {
    DbError::new(
        crate::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "value out of range: overflow",
    )
}

/// 22003 "value out of range: underflow" (float results).
pub(crate) fn float_underflow() -> DbError {
    DbError::new(
        crate::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "value out of range: underflow",
    )
}

/// 22003 "value overflows numeric format".
pub(crate) fn numeric_overflow() -> DbError {
    DbError::new(
        crate::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "value overflows numeric format",
    )
}

/// 22003 "integer out of range" & co. for an integer type.
pub(crate) fn int_out_of_range(ty: DataType) -> DbError {
    DbError::out_of_range(match ty {
        DataType::Int16 => "smallint",
        DataType::Int64 => "bigint",
        _ => "integer",
    })
}

/// The PostgreSQL type name with any length modifier dropped (what
/// "operator does not exist: ..." messages print).
pub(crate) fn bare_name(t: DataType) -> String {
    match t {
        DataType::Varchar(_) => "character varying".into(),
        DataType::Bpchar(_) => "character".into(),
        t => t.name(),
    }
}
