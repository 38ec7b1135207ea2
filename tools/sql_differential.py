#!/usr/bin/env python3
"""Differential SQL testing: random typed expressions, filters and
aggregates over one small table with NULLs, run on Brewric and on
PostgreSQL; every difference in the printed result or in the SQLSTATE is
reported with the statement, so it can become a case in sql-tests/.

    python3 tools/sql_differential.py --brewric 'host=127.0.0.1 port=5432 user=brewric dbname=brewric' \\
        --postgres 'host=/tmp port=5499 user=postgres dbname=postgres' [--queries 2000] [--seed 1]

Both servers must be running (tools/tests_on_postgres.sh shows how to start
a throw-away PostgreSQL 15); the table `diff_t` is created on both. Values
are compared as the text each server prints (TimeZone UTC, DateStyle ISO),
so a float printed differently is a difference too. Known differences are
listed in KNOWN and skipped, each with the reason.
"""

import argparse
import random
import sys

import psycopg2
import psycopg2.extensions

ROWS = [
    # id, a int, b bigint, c float8, d numeric, e text, f timestamptz, g bool, h interval, r real
    (1, 0, 0, 0.0, "0", "", "2024-01-01 00:00:00+00", True, "0", 0.0),
    (2, 1, -1, 1.5, "1.25", "abc", "2024-02-29 12:34:56.789+00", False, "1 day", -0.5),
    (3, -7, 9223372036854775807, -2.75, "-3.125", "Hello World", "1999-12-31 23:59:59.999999+00", True, "-2 hours", 3.25),
    (4, 2147483647, -9223372036854775808, 1.5e25, "123456789.123456789", "ümlaut ß", "2038-01-19 03:14:08+00", None, "1 mon 2 days 03:04:05", 1e-30),
    (5, None, None, None, None, None, None, None, None, None),
    (6, 42, 1000000, float("nan"), "NaN", "  padded  ", "1970-01-01 00:00:00+00", False, "-1 year", float("inf")),
    (7, -2147483648, 3, float("-inf"), "0.000001", "a%b_c", "2200-04-11 23:47:16+00", True, "00:00:00.000001", -0.0),
    (8, 5, 5, 5.0, "5", "5", "2024-06-15 08:00:00+00", False, "5 minutes", 5.0),
]

COLUMNS = {"a": "int", "b": "bigint", "c": "float8", "d": "numeric", "e": "text", "f": "timestamptz",
           "g": "bool", "h": "interval", "r": "real"}

# Differences that are known and documented (README, Known gaps), skipped by
# a substring of the statement. The rows stay inside the documented ranges
# (timestamps before 2262, numeric within 28 digits) so that those gaps do
# not drown the rest.
KNOWN = []


# No NULL literals in expressions: PostgreSQL folds a strict call with a NULL
# constant argument to NULL while planning, so an error in its other
# arguments never happens there; NULLs come from row 5 instead.
class Gen:
    def __init__(self, rng):
        self.rng = rng

    def pick(self, *options):
        return self.rng.choice(options)

    def lit(self, ty):
        r = self.rng
        if ty == "int":
            return self.pick("0", "1", "-1", "3", "2147483647", "-2147483648", "100")
        if ty == "bigint":
            return self.pick("0::bigint", "7::bigint", "-9223372036854775808::bigint", "9223372036854775807::bigint")
        if ty == "float8":
            return self.pick("0.5::float8", "-1.0e10::float8", "'NaN'::float8", "'Infinity'::float8", "3::float8", "'1e-310'::float8")
        if ty == "real":
            return self.pick("1.5::real", "'-Infinity'::real", "0.1::real")
        if ty == "numeric":
            return self.pick("0.1", "2.50", "-1", "'NaN'::numeric", "1e20::numeric", "0.000")
        if ty == "text":
            return self.pick("'x'", "''", "'Abc'", "'a b'", "'%'", "'12'", "'ß'")
        if ty == "bool":
            return self.pick("true", "false")
        if ty == "timestamptz":
            return self.pick("'2024-03-10 02:30:00+00'::timestamptz", "'2000-01-01'::timestamptz")
        if ty == "interval":
            return self.pick("'1 hour'::interval", "'-3 days'::interval", "'1 mon'::interval", "'1.5 seconds'::interval")
        raise ValueError(ty)

    def col(self, ty):
        names = [c for c, t in COLUMNS.items() if t == ty]
        return self.rng.choice(names) if names else self.lit(ty)

    def expr(self, ty, depth=0):
        if depth > 3 or self.rng.random() < 0.3:
            return self.col(ty) if self.rng.random() < 0.7 else self.lit(ty)
        d = depth + 1
        e = lambda t=ty: self.expr(t, d)  # noqa: E731
        if ty in ("int", "bigint"):
            return self.pick(
                f"({e()} {self.pick('+', '-', '*', '/', '%')} {e()})",
                f"abs({e()})", f"(-{e()})", f"length({e('text')})",
                f"coalesce({e()}, {e()})", f"nullif({e()}, {e()})",
                f"greatest({e()}, {e()})", f"least({e()}, {e()})",
                f"CASE WHEN {e('bool')} THEN {e()} ELSE {e()} END",
                f"({e('float8')})::{ty}", f"({e('numeric')})::{ty}", f"({e('text')})::{ty}",
                f"sign({e()})", f"({e()} & {e()})", f"({e()} | {e()})", f"({e()} # {e()})",
                f"({e()} << 3)", f"({e()} >> 1)", f"strpos({e('text')}, {e('text')})",
                f"extract(year from {e('timestamptz')})::{ty}", f"ascii({e('text')})",
            )
        if ty in ("float8", "real"):
            return self.pick(
                f"({e()} {self.pick('+', '-', '*', '/')} {e()})", f"abs({e()})", f"(-{e()})",
                f"sqrt(abs({e()}))", f"floor({e()})", f"ceil({e()})", f"round({e()})", f"trunc({e()})",
                f"({e('int')})::{ty}", f"({e('numeric')})::{ty}", f"({e('text')})::{ty}",
                f"coalesce({e()}, {e()})", f"greatest({e()}, {e()})", f"sign({e()})",
                f"CASE WHEN {e('bool')} THEN {e()} END", f"({e('float8' if ty == 'real' else 'real')})::{ty}",
                f"extract(epoch from {e('timestamptz')})::{ty}", f"power({e()}, 2)",
                f"ln(abs({e()}) + 1)", f"exp(least({e()}, 10))", f"cbrt({e()})",
            )
        if ty == "numeric":
            return self.pick(
                f"({e()} {self.pick('+', '-', '*', '/', '%')} {e()})", f"abs({e()})", f"(-{e()})",
                f"round({e()}, {self.pick('0', '1', '2', '-1')})", f"trunc({e()}, {self.pick('0', '1', '3')})",
                f"floor({e()})", f"ceil({e()})", f"({e('int')})::numeric", f"({e('float8')})::numeric",
                f"({e('text')})::numeric", f"coalesce({e()}, {e()})", f"greatest({e()}, {e()})", f"sign({e()})",
                f"({e()})::numeric(10,2)", f"extract(epoch from {e('timestamptz')})", f"scale({e()})::numeric",
                f"mod({e()}, {e()})", f"div({e()}, {e()})",
            )
        if ty == "text":
            return self.pick(
                f"({e()} || {e()})", f"upper({e()})", f"lower({e()})", f"substr({e()}, {e('int')})",
                f"substr({e()}, {e('int')}, {e('int')})", f"replace({e()}, {e()}, {e()})", f"trim({e()})",
                f"left({e()}, {e('int')})", f"right({e()}, {e('int')})", f"concat({e()}, {e('int')}, {e('bool')})",
                f"({e('int')})::text", f"({e('float8')})::text", f"({e('numeric')})::text", f"({e('bool')})::text",
                f"({e('timestamptz')})::text", f"({e('interval')})::text", f"({e('real')})::text",
                f"lpad({e()}, {self.pick('0', '3', '8')}, 'xy')", f"rpad({e()}, 5)", f"reverse({e()})",
                f"repeat({e()}, {self.pick('0', '2', '-1')})", f"md5({e()})", f"initcap({e()})",
                f"coalesce({e()}, {e()})", f"split_part({e()}, ' ', {self.pick('1', '2', '-1')})",
                f"to_char({e('timestamptz')}, 'YYYY-MM-DD HH24:MI:SS.US Dy Mon')", 
                f"btrim({e()}, 'a ')", f"translate({e()}, 'abc', 'xy')", f"quote_literal({e()})",
                f"chr(abs({e('int')}) % 200 + 32)", f"format('%s-%s', {e()}, {e('int')})",
            )
        if ty == "bool":
            t = self.pick("int", "bigint", "float8", "numeric", "text", "timestamptz", "interval", "real", "bool")
            return self.pick(
                f"({e(t)} {self.pick('=', '<>', '<', '<=', '>', '>=')} {e(t)})",
                f"({e()} AND {e()})", f"({e()} OR {e()})", f"(NOT {e()})",
                f"({e(t)} IS NULL)", f"({e(t)} IS DISTINCT FROM {e(t)})", f"({e(t)} IS NOT DISTINCT FROM {e(t)})",
                f"({e(t)} BETWEEN {e(t)} AND {e(t)})", f"({e(t)} IN ({e(t)}, {e(t)}, {e(t)}))",
                f"({e('text')} LIKE {self.pick(repr('a%'), repr('%b_c'), repr('_'), repr('%'), repr('A%'))})",
                f"({e('text')} ILIKE 'h%')", f"({e()} IS TRUE)", f"({e()} IS NOT FALSE)",
                f"({e('text')} ~ '^[a-z]+$')", f"starts_with({e('text')}, 'a')",
            )
        if ty == "timestamptz":
            return self.pick(
                f"({e()} + {e('interval')})", f"({e()} - {e('interval')})", f"date_trunc('{self.pick('hour', 'day', 'month', 'year', 'week', 'minute')}', {e()})",
                f"coalesce({e()}, {e()})", f"greatest({e()}, {e()})", f"to_timestamp({e('int')})",
                f"({e('text')})::timestamptz", f"date_bin('15 minutes', {e()}, '2000-01-01')",
            )
        if ty == "interval":
            return self.pick(
                f"({e()} + {e()})", f"({e()} - {e()})", f"({e()} * {e('int')})", f"({e()} * {e('float8')})",
                f"({e()} / {e('int')})", f"({e('timestamptz')} - {e('timestamptz')})", f"(-{e()})",
                f"justify_hours({e()})", f"justify_days({e()})", f"make_interval(days => {e('int')})",
                f"({e('text')})::interval",
            )
        raise ValueError(ty)

    def statement(self):
        ty = self.pick(*sorted(set(COLUMNS.values())))
        kind = self.rng.random()
        if kind < 0.6:
            return f"SELECT id, {self.expr(ty)} FROM diff_t ORDER BY id"
        if kind < 0.8:
            return f"SELECT id FROM diff_t WHERE {self.expr('bool')} ORDER BY id"
        agg_ty = self.pick("int", "bigint", "float8", "numeric", "real", "interval")
        agg = self.pick("sum", "avg", "min", "max", "count")
        if agg in ("min", "max"):
            agg_ty = self.pick(*sorted(set(COLUMNS.values()) - {"bool"}))
        return (f"SELECT g, {agg}({self.expr(agg_ty)}), count(*) FROM diff_t GROUP BY g ORDER BY g NULLS LAST")


def connect(dsn):
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SET TimeZone = 'UTC'")
        cur.execute("SET DateStyle = 'ISO, MDY'")
    return conn


def raw_text(value, _cur):
    return value


def run(conn, sql):
    """(sqlstate, rows) with every value as the server's text."""
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return None, cur.fetchall()
    except psycopg2.Error as e:
        return e.pgcode or "?", None


def setup(conn):
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS diff_t")
        cur.execute("CREATE TABLE diff_t (id int, " + ", ".join(f"{c} {t}" for c, t in COLUMNS.items()) + ")")
        for row in ROWS:
            values = []
            for v, ty in zip(row, ["int"] + list(COLUMNS.values())):
                if v is None:
                    values.append("NULL")
                elif isinstance(v, float):
                    values.append(f"'{v!r}'::{ty}".replace("'nan'", "'NaN'").replace("'inf'", "'Infinity'").replace("'-inf'", "'-Infinity'"))
                elif isinstance(v, bool):
                    values.append("true" if v else "false")
                else:
                    values.append(f"'{v}'::{ty}" if isinstance(v, str) else str(v))
            cur.execute(f"INSERT INTO diff_t VALUES ({', '.join(values)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--brewric", required=True)
    ap.add_argument("--postgres", required=True)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    # Every type as text: what psql shows, compared exactly.
    oids = tuple(range(16, 5000))
    psycopg2.extensions.register_type(psycopg2.extensions.new_type(oids, "RAW", raw_text))
    psycopg2.extensions.register_type(psycopg2.extensions.new_array_type(oids, "RAW[]", psycopg2.extensions.new_type(oids, "R", raw_text)))
    brewric, postgres = connect(args.brewric), connect(args.postgres)
    setup(brewric)
    setup(postgres)
    gen = Gen(random.Random(args.seed))
    differences = 0
    seen = set()
    for _ in range(args.queries):
        sql = gen.statement()
        if any(k in sql for k in KNOWN):
            continue
        ours, theirs = run(brewric, sql), run(postgres, sql)
        if ours == theirs:
            continue
        # Both failed: the SQLSTATE class must agree ("22" data exception, …).
        if ours[0] and theirs[0] and ours[0][:2] == theirs[0][:2]:
            continue
        key = (ours[0], theirs[0])
        differences += 1
        print(f"--- {sql}\n  brewric:    {ours[0] or ours[1]}\n  postgresql: {theirs[0] or theirs[1]}", flush=True)
        seen.add(key)
    print(f"{differences} differences in {args.queries} statements (seed {args.seed})")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
