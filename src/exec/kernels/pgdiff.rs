//! TEMPORARY differential check against PostgreSQL outputs in /tmp/diff/cases.txt.
use crate::exec::{EvalContext, Operand};
use crate::types::text::format_text;
use crate::types::{DataType, Datum};
use super::*;

fn ty(s: &str) -> DataType {
    use DataType::*;
    if let Some(n) = s.strip_prefix("character varying(") { return Varchar(Some(n.trim_end_matches(')').parse().unwrap())); }
    if let Some(n) = s.strip_prefix("character(") { return Bpchar(Some(n.trim_end_matches(')').parse().unwrap())); }
    match s { "smallint" => Int16, "integer" => Int32, "bigint" => Int64, "real" => Float32, "double precision" => Float64,
        "numeric" => Numeric, "text" => Text, "character varying" => Varchar(None), "bytea" => Bytea, "date" => Date,
        "timestamp" => Timestamp, "timestamptz" => TimestampTz, "interval" => Interval, "boolean" => Bool, "jsonb" => Jsonb,
        _ => panic!("type {s}") }
}
fn op(s: &str) -> BinaryOp {
    use BinaryOp::*;
    match s { "+" => Plus, "-" => Minus, "*" => Multiply, "/" => Divide, "%" => Modulo, "=" => Eq, "<>" => NotEq, "<" => Lt, "<=" => LtEq, ">" => Gt, ">=" => GtEq,
        "||" => Concat, "~~" => Like, "!~~" => NotLike, "~~*" => ILike, "!~~*" => NotILike, "~" => RegexMatch, "!~" => RegexNotMatch, "~*" => RegexIMatch, "!~*" => RegexNotIMatch, _ => panic!("op {s}") }
}
fn show(r: crate::error::DbResult<(Datum, DataType)>) -> String {
    match r {
        Ok((Datum::Null, _)) => "OK\t".into(),
        Ok((d, t)) => { let mut o = Vec::new(); let off: i32 = std::env::var("PGDIFF_OFFSET").ok().and_then(|v| v.parse().ok()).unwrap_or(0); format_text(t, &d, &crate::types::FormatContext { utc_offset_secs: off, ..Default::default() }, &mut o); format!("OK\t{}", String::from_utf8_lossy(&o)) }
        Err(e) => format!("ERR\t{}: {}", e.code, e.message),
    }
}
fn lit(t: DataType, v: &str, ctx: &EvalContext) -> crate::error::DbResult<Datum> {
    cast_datum(&Datum::text(v), DataType::Unknown, t, ctx)
}

#[test]
#[ignore]
fn pg_diff() {
    let off: i32 = std::env::var("PGDIFF_OFFSET").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    let ctx = EvalContext { format: crate::types::FormatContext { utc_offset_secs: off, ..Default::default() }, statement_time_ns: 0 };
    let path = std::env::var("PGDIFF_FILE").unwrap_or("/tmp/diff/cases.txt".into());
    let text = std::fs::read_to_string(path).unwrap();
    let (mut bad, mut n) = (0, 0);
    for line in text.lines() {
        let (case, expect) = line.split_once('\t').unwrap();
        let f: Vec<&str> = case.split('\x1f').collect();
        n += 1;
        let got = match f[0] {
            "op" => (|| {
                let (lt, rt) = (ty(f[2]), ty(f[4]));
                let (l, r) = (lit(lt, f[3], &ctx)?, lit(rt, f[5], &ctx)?);
                let sig = resolve_binary(op(f[1]), lt, rt)?;
                let c = eval_binary(&sig, Operand::Scalar(&l, lt), Operand::Scalar(&r, rt), 1, &ctx)?;
                Ok((c.datum(0), sig.result))
            })(),
            "un" => (|| {
                let t = ty(f[2]);
                let v = lit(t, f[3], &ctx)?;
                let (at, rt) = resolve_unary(UnaryOp::Neg, t)?;
                let c = eval_unary(UnaryOp::Neg, at, Operand::Scalar(&v, t), 1)?;
                Ok((c.datum(0), rt))
            })(),
            "fn" => (|| {
                let mut types = vec![]; let mut vals = vec![];
                for a in &f[2..] { let (t, v) = a.split_once('\x1e').unwrap(); let t = ty(t); types.push(t); vals.push(lit(t, v, &ctx)?); }
                let sig = resolve_function(f[1], &types)?;
                let ops: Vec<Operand> = vals.iter().zip(&types).map(|(d, t)| Operand::Scalar(d, *t)).collect();
                let c = eval_function(&sig, &ops, 1, &ctx)?;
                Ok((c.datum(0), sig.result))
            })(),
            _ => (|| {
                let (from, to) = (ty(f[1]), ty(f[3]));
                let v = lit(from, f[2], &ctx)?;
                Ok((cast_datum(&v, from, to, &ctx)?, to))
            })(),
        };
        let got = show(got);
        if got != expect {
            bad += 1;
            println!("MISMATCH {}\n   pg:  {expect}\n   us:  {got}", case.replace('\x1f', " | ").replace('\x1e', ":"));
        }
    }
    println!("{bad} of {n} differ");
}
