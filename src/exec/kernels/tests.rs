//! Test support shared by the kernel files: seeded random columns with
//! NULLs, a row-at-a-time reference checker run over every operand shape
//! (column/column, column/constant, constant/column, constant/constant,
//! NULL constant), and one-call helpers for operators and functions.
//! Must not: be compiled outside `cfg(test)`.

use rust_decimal::Decimal;

use crate::error::DbResult;
use crate::exec::vector::Column;
use crate::exec::{EvalContext, Operand};
use crate::types::{DataType, Datum};

use super::BinaryOp;

/// A small deterministic generator (PCG-style LCG).
pub(crate) struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E3779B97F4A7C15).wrapping_add(12345))
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let x = self.0;
        (x ^ (x >> 29)).wrapping_mul(0xBF58476D1CE4E5B9) >> 7
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

/// One random non-NULL value of `ty`; `small` keeps values where arithmetic cannot overflow.
pub(crate) fn rand_datum(ty: DataType, rng: &mut Rng, small: bool) -> Datum {
    use DataType::*;
    match ty {
        Bool => Datum::Bool(rng.below(2) == 1),
        Int16 | Int32 | Int64 => {
            let v: i64 = if small || rng.below(3) > 0 {
                rng.range(-100, 100)
            } else {
                let (lo, hi) = match ty {
                    Int16 => (i16::MIN as i64, i16::MAX as i64),
                    Int32 => (i32::MIN as i64, i32::MAX as i64),
                    _ => (i64::MIN, i64::MAX),
                };
                match rng.below(5) {
                    0 => lo,
                    1 => hi,
                    2 => -1,
                    3 => 0,
                    _ => lo.wrapping_add((rng.next() as i64).rem_euclid(hi / 2 + 1)),
                }
            };
            match ty {
                Int16 => Datum::Int16(v as i16),
                Int32 => Datum::Int32(v as i32),
                _ => Datum::Int64(v),
            }
        }
        Float32 | Float64 => {
            let v = if small || rng.below(3) > 0 {
                rng.range(-400, 400) as f64 / 4.0
            } else {
                [
                    0.0,
                    f64::NAN,
                    f64::INFINITY,
                    -f64::INFINITY,
                    1e300,
                    -1e300,
                    1e-300,
                    3e38,
                    1e-40,
                ][rng.below(9) as usize]
            };
            if ty == Float32 {
                Datum::Float32(v as f32)
            } else {
                Datum::Float64(v)
            }
        }
        Numeric => {
            if small || rng.below(3) > 0 {
                Datum::Numeric(
                    Decimal::new(rng.range(-100_000, 100_000), rng.below(4) as u32).into(),
                )
            } else {
                let big = Decimal::MAX / Decimal::from(rng.range(1, 3));
                Datum::Numeric(if rng.below(2) == 0 { big.into() } else { crate::types::Numeric::ZERO })
            }
        }
        Oid => Datum::Int64(rng.range(0, u32::MAX as i64)),
        Text | Varchar(_) | Bpchar(_) | Name | Char | Unknown => {
            let alphabet = ["a", "b", "B", "é", " ", "%", "z"];
            let n = rng.below(5);
            Datum::text(
                (0..n)
                    .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                    .collect::<String>(),
            )
        }
        Bytea | Jsonb => Datum::Bytes((0..rng.below(4)).map(|_| rng.below(4) as u8 * 60).collect()),
        Date => Datum::Int32(rng.range(-20_000, 20_000) as i32),
        Timestamp | TimestampTz => {
            Datum::Int64(rng.range(-4_000_000_000_000_000, 4_000_000_000_000_000) * 1000)
        }
        DataType::Interval => Datum::Interval(crate::types::Interval {
            months: rng.range(-30, 30) as i32,
            days: rng.range(-40, 40) as i32,
            micros: rng.range(-100_000_000_000, 100_000_000_000),
        }),
        Record => Datum::Bytes(crate::types::record::encode(&[(Int32, Datum::Int32(rng.range(-5, 5) as i32))])),
        Array(e) => {
            let n = rng.below(4) as usize;
            let elems = (0..n).map(|_| rand_datum(e.data_type(), rng, small)).collect();
            Datum::Bytes(crate::types::array::ArrayValue::of(elems).encode(e))
        }
    }
}

/// A random column of `len` rows, about a fifth NULL.
pub(crate) fn rand_column(ty: DataType, len: usize, seed: u64, small: bool) -> Column {
    let mut rng = Rng::new(seed);
    let vals: Vec<Datum> = (0..len)
        .map(|_| {
            if rng.below(5) == 0 {
                Datum::Null
            } else {
                rand_datum(ty, &mut rng, small)
            }
        })
        .collect();
    Column::from_datums(ty, &vals)
}

/// Value equality where NaN equals NaN.
pub(crate) fn datum_eq(a: &Datum, b: &Datum) -> bool {
    match (a, b) {
        (Datum::Float64(x), Datum::Float64(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Datum::Float32(x), Datum::Float32(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

/// Runs `op` over random `lt`/`rt` data in every operand shape and compares
/// each row with `reference` (None = that row must raise an error).
pub(crate) fn check_binary_against_reference(
    op: BinaryOp,
    lt: DataType,
    rt: DataType,
    seed: u64,
    reference: impl Fn(&Datum, &Datum) -> Option<Datum>,
) {
    let sig = super::resolve_binary(op, lt, rt).unwrap();
    assert_eq!((sig.left, sig.right), (lt, rt), "test expects kernel types");
    let ctx = EvalContext::default();
    let len = 67;
    for trial in 0..8u64 {
        let small = trial % 2 == 0;
        let a = rand_column(lt, len, seed * 1000 + trial * 2, small);
        let b = rand_column(rt, len, seed * 1000 + trial * 2 + 1, small);
        let (sa, sb) = (a.datum(3), b.datum(5));
        let null = Datum::Null;
        let shapes: [(Operand, Operand, &str); 6] = [
            (Operand::Column(&a), Operand::Column(&b), "col-col"),
            (Operand::Column(&a), Operand::Scalar(&sb, rt), "col-const"),
            (Operand::Scalar(&sa, lt), Operand::Column(&b), "const-col"),
            (
                Operand::Scalar(&sa, lt),
                Operand::Scalar(&sb, rt),
                "const-const",
            ),
            (Operand::Column(&a), Operand::Scalar(&null, rt), "col-null"),
            (Operand::Scalar(&null, lt), Operand::Column(&b), "null-col"),
        ];
        for (x, y, shape) in shapes {
            let xc = x.to_column(len);
            let yc = y.to_column(len);
            let mut expect = Vec::with_capacity(len);
            let mut fails = false;
            for i in 0..len {
                let (p, q) = (xc.datum(i), yc.datum(i));
                if p.is_null() || q.is_null() {
                    expect.push(Datum::Null);
                    continue;
                }
                match reference(&p, &q) {
                    Some(v) => expect.push(v),
                    None => {
                        fails = true;
                        expect.push(Datum::Null);
                    }
                }
            }
            let got = super::eval_binary(&sig, x, y, len, &ctx);
            match (fails, got) {
                (true, Ok(_)) => {
                    panic!("{op:?} {lt:?} {rt:?} {shape} trial {trial}: expected an error")
                }
                (true, Err(_)) => {}
                (false, Err(e)) => {
                    panic!("{op:?} {lt:?} {rt:?} {shape} trial {trial}: unexpected {e:?}")
                }
                (false, Ok(c)) => {
                    assert_eq!(c.len(), len);
                    assert_eq!(c.data_type, sig.result);
                    if let Some(v) = &c.validity {
                        assert!(!v.all_set(), "validity present without NULLs");
                    }
                    for (i, e) in expect.iter().enumerate() {
                        assert!(
                            datum_eq(&c.datum(i), e),
                            "{op:?} {lt:?} {rt:?} {shape} trial {trial} row {i}: {:?} {:?} -> {:?}, expected {:?}",
                            xc.datum(i),
                            yc.datum(i),
                            c.datum(i),
                            e
                        );
                    }
                }
            }
        }
    }
}

/// Resolves and evaluates `a op b` on constants and on one-row columns; both must agree.
pub(crate) fn eval_bin(
    op: BinaryOp,
    a: (Datum, DataType),
    b: (Datum, DataType),
) -> DbResult<Datum> {
    let sig = super::resolve_binary(op, a.1, b.1)?;
    let ctx = EvalContext::default();
    let scalar = super::eval_binary(
        &sig,
        Operand::Scalar(&a.0, a.1),
        Operand::Scalar(&b.0, b.1),
        2,
        &ctx,
    );
    let (ca, cb) = (
        Column::from_datum(a.1, &a.0, 1),
        Column::from_datum(b.1, &b.0, 1),
    );
    let column = super::eval_binary(&sig, Operand::Column(&ca), Operand::Column(&cb), 1, &ctx);
    match (scalar, column) {
        (Ok(s), Ok(c)) => {
            assert!(
                datum_eq(&s.datum(1), &c.datum(0)),
                "scalar {:?} vs column {:?}",
                s.datum(1),
                c.datum(0)
            );
            Ok(c.datum(0))
        }
        (Err(e), Err(_)) => Err(e),
        (s, c) => panic!("scalar and column paths disagree: {s:?} vs {c:?}"),
    }
}

/// Resolves and evaluates `name(args)` on constants and on one-row columns; both must agree.
pub(crate) fn call(name: &str, args: &[(Datum, DataType)]) -> DbResult<Datum> {
    let types: Vec<DataType> = args.iter().map(|a| a.1).collect();
    let sig = super::resolve_function(name, &types)?;
    let ctx = EvalContext::default();
    let ops: Vec<Operand> = args.iter().map(|(d, t)| Operand::Scalar(d, *t)).collect();
    let scalar = super::eval_function(&sig, &ops, 2, &ctx);
    let cols: Vec<Column> = args
        .iter()
        .map(|(d, t)| Column::from_datum(*t, d, 1))
        .collect();
    let cops: Vec<Operand> = cols.iter().map(Operand::Column).collect();
    let column = super::eval_function(&sig, &cops, 1, &ctx);
    match (scalar, column) {
        (Ok(s), Ok(c)) => {
            assert_eq!(c.data_type, sig.result);
            if name != "random" {
                assert!(
                    datum_eq(&s.datum(1), &c.datum(0)),
                    "scalar {:?} vs column {:?}",
                    s.datum(1),
                    c.datum(0)
                );
            }
            Ok(c.datum(0))
        }
        (Err(e), Err(_)) => Err(e),
        (s, c) => panic!("scalar and column paths disagree: {s:?} vs {c:?}"),
    }
}

/// Datum shorthands.
pub(crate) mod d {
    use super::*;
    pub fn i32(v: i32) -> Datum {
        Datum::Int32(v)
    }
    pub fn num(s: &str) -> Datum {
        Datum::Numeric(crate::types::text::parse_numeric(s).unwrap())
    }
}

#[test]
fn public_api_smoke() {
    let sig = super::resolve_binary(BinaryOp::Gt, DataType::Int64, DataType::Unknown).unwrap();
    assert_eq!(sig.right, DataType::Int64);
    let col = Column::from_datums(
        DataType::Int64,
        &[Datum::Int64(3), Datum::Null, Datum::Int64(9)],
    );
    let five = Datum::Int64(5);
    let r = super::eval_binary(
        &sig,
        Operand::Column(&col),
        Operand::Scalar(&five, DataType::Int64),
        3,
        &EvalContext::default(),
    )
    .unwrap();
    assert_eq!(r.datum(0), Datum::Bool(false));
    assert_eq!(r.datum(1), Datum::Null);
    assert_eq!(r.datum(2), Datum::Bool(true));
    assert!(super::can_coerce(DataType::Int32, DataType::Int64, false));
    assert_eq!(
        super::common_type(&[DataType::Int16, DataType::Int32], "CASE").unwrap(),
        DataType::Int32
    );
}

/// Paths that go through the types' text I/O (parse_text / format_text).
mod text_io {
    use super::*;

    fn cast(v: Datum, from: DataType, to: DataType) -> DbResult<Datum> {
        super::super::cast_datum(&v, from, to, &EvalContext::default())
    }

    #[test]
    fn unknown_literals_adopt_the_other_type() {
        let r = eval_bin(
            BinaryOp::Eq,
            (Datum::Int32(5), DataType::Int32),
            (Datum::text("5"), DataType::Unknown),
        )
        .unwrap();
        assert_eq!(r, Datum::Bool(true));
        let e = eval_bin(
            BinaryOp::Eq,
            (Datum::Int32(5), DataType::Int32),
            (Datum::text("x"), DataType::Unknown),
        )
        .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22P02", "invalid input syntax for type integer: \"x\"")
        );
        let hour = 3_600_000_000_000i64;
        let r = eval_bin(
            BinaryOp::Plus,
            (Datum::Int64(0), DataType::Timestamp),
            (Datum::text("1 hour"), DataType::Unknown),
        )
        .unwrap();
        assert_eq!(r, Datum::Int64(hour));
        let r = eval_bin(
            BinaryOp::Lt,
            (Datum::Int64(0), DataType::TimestampTz),
            (Datum::text("1970-01-01 00:00:01+00"), DataType::Unknown),
        )
        .unwrap();
        assert_eq!(r, Datum::Bool(true));
    }

    #[test]
    fn casts_through_text() {
        use DataType::*;
        assert_eq!(
            cast(Datum::Int32(42), Int32, Text).unwrap(),
            Datum::text("42")
        );
        assert_eq!(
            cast(Datum::Float64(0.1), Float64, Text).unwrap(),
            Datum::text("0.1")
        );
        assert_eq!(
            cast(Datum::Int32(1), Date, Text).unwrap(),
            Datum::text("1970-01-02")
        );
        assert_eq!(
            cast(super::d::num("1.50"), Numeric, Varchar(Some(3))).unwrap(),
            Datum::text("1.5")
        );
        assert_eq!(
            cast(Datum::text(" 12 "), Text, Int64).unwrap(),
            Datum::Int64(12)
        );
        let e = cast(Datum::text("12abc"), Text, Int32).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22P02", "invalid input syntax for type integer: \"12abc\"")
        );
        assert_eq!(
            cast(Datum::text("99999"), Unknown, Int16).unwrap_err().code,
            "22003"
        );
        assert_eq!(
            cast(Datum::text("t"), Text, Bool).unwrap(),
            Datum::Bool(true)
        );
        assert_eq!(
            cast(Datum::text("{\"b\":1,  \"a\":2}"), Text, Jsonb).unwrap(),
            Datum::text("{\"a\": 2, \"b\": 1}")
        );
        assert_eq!(
            cast(Datum::Bytes(vec![0xde, 0xad]), Bytea, Text).unwrap(),
            Datum::text("\\xdead")
        );
        assert_eq!(
            cast(Datum::text("\\x0102"), Text, Bytea).unwrap(),
            Datum::Bytes(vec![1, 2])
        );
        let iv = cast(Datum::text("1 day 02:00:00"), Text, DataType::Interval).unwrap();
        assert_eq!(
            cast(iv, DataType::Interval, Text).unwrap(),
            Datum::text("1 day 02:00:00")
        );
    }

    #[test]
    fn concat_formats_like_postgres() {
        // 'a' || true casts with booltext; concat() uses the output function.
        let r = eval_bin(
            BinaryOp::Concat,
            (Datum::text("a"), DataType::Unknown),
            (Datum::Bool(true), DataType::Bool),
        )
        .unwrap();
        assert_eq!(r, Datum::text("atrue"));
        let r = eval_bin(
            BinaryOp::Concat,
            (Datum::Int32(1), DataType::Int32),
            (Datum::text("a"), DataType::Unknown),
        )
        .unwrap();
        assert_eq!(r, Datum::text("1a"));
        let r = call(
            "concat",
            &[
                (Datum::Bool(true), DataType::Bool),
                (super::d::num("1.50"), DataType::Numeric),
                (Datum::Null, DataType::Int32),
                (Datum::text("x"), DataType::Unknown),
            ],
        )
        .unwrap();
        assert_eq!(r, Datum::text("t1.50x"));
    }

    #[test]
    fn function_args_from_literals() {
        let f = |s: &str| (Datum::text(s), DataType::Unknown);
        let day = crate::types::datetime::NANOS_PER_DAY;
        let r = call(
            "time_bucket",
            &[f("1 day"), (Datum::Int64(day + 5), DataType::Timestamp)],
        )
        .unwrap();
        // Buckets align to 2000-01-03; one-day buckets still start at midnight.
        assert_eq!(r, Datum::Int64(day));
        let r = call("date_part", &[f("year"), (Datum::Int32(0), DataType::Date)]).unwrap();
        assert_eq!(r, Datum::Float64(1970.0));
        let r = call(
            "extract",
            &[
                f("epoch"),
                (Datum::Int64(1_500_000_000), DataType::TimestampTz),
            ],
        )
        .unwrap();
        assert_eq!(r, super::d::num("1.500000"));
        assert_eq!(call("round", &[f("2.5")]).unwrap(), Datum::Float64(2.0));
    }
}
