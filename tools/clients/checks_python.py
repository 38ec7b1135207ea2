#!/usr/bin/env python3
"""Driver checks for psycopg 3 and psycopg2 (tools/clients/run.sh runs them).

    python3 tools/clients/checks_python.py psycopg|psycopg2

Connects to CLIENTS_HOST:CLIENTS_PORT as CLIENTS_USER to CLIENTS_DB and prints
one line per check, `ok <driver> <check>` or `FAIL <driver> <check>: <why>`.
Every check must pass against PostgreSQL 15 (`run.sh --postgres`): values are
compared as the driver decodes them, never as one server happens to print them.
"""
import datetime as dt
import os
import sys
from decimal import Decimal

HOST = os.environ.get("CLIENTS_HOST", "127.0.0.1")
PORT = int(os.environ.get("CLIENTS_PORT", "5432"))
USER = os.environ.get("CLIENTS_USER", "brewric")
DB = os.environ.get("CLIENTS_DB", "brewric")

UTC = dt.timezone.utc


class Runner:
    def __init__(self, driver):
        self.driver = driver

    def check(self, name, fn):
        try:
            fn()
        except Exception as e:  # every failure is reported, the run goes on
            why = f"{type(e).__name__}: {e}".replace("\n", " | ")
            print(f"FAIL {self.driver} {name}: {why[:400]}", flush=True)
            return False
        print(f"ok {self.driver} {name}", flush=True)
        return True


def expect(got, want, what="value"):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


# (check name, SQL type, Python value, expected decoded value)
def values():
    return [
        ("bool", "bool", True, True),
        ("int2", "int2", 12345, 12345),
        ("int4", "int4", -1234567, -1234567),
        ("int8", "int8", 9007199254740993, 9007199254740993),
        ("float4", "float4", 1.5, 1.5),
        ("float8", "float8", 0.1, 0.1),
        ("numeric", "numeric", Decimal("12345.678900"), Decimal("12345.678900")),
        ("text", "text", "h\u00e9llo 'q' \"d\" \\ tab\t", "h\u00e9llo 'q' \"d\" \\ tab\t"),
        ("varchar", "varchar", "v\u00e4rchar", "v\u00e4rchar"),
        ("bytea", "bytea", b"\x00\x01\xfe\xff'\\", b"\x00\x01\xfe\xff'\\"),
        ("date", "date", dt.date(2024, 2, 29), dt.date(2024, 2, 29)),
        ("timestamp", "timestamp", dt.datetime(2024, 1, 2, 3, 4, 5, 678901),
         dt.datetime(2024, 1, 2, 3, 4, 5, 678901)),
        ("timestamptz", "timestamptz", dt.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
         dt.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)),
        ("interval", "interval", dt.timedelta(days=1, hours=2, seconds=3.5),
         dt.timedelta(days=1, hours=2, seconds=3.5)),
        ("jsonb", "jsonb", {"a": [1, 2, None], "b": "x"}, {"a": [1, 2, None], "b": "x"}),
        ("int8[]", "int8[]", [1, -2, 3000000000], [1, -2, 3000000000]),
        ("float8[]", "float8[]", [1.5, -0.25, 1e20], [1.5, -0.25, 1e20]),
        ("text[]", "text[]", ["a", "b c", 'd"e', "{x}"], ["a", "b c", 'd"e', "{x}"]),
    ]


TABLE_COLS = [
    ("c_bool", "bool"), ("c_int2", "int2"), ("c_int4", "int4"), ("c_int8", "int8"),
    ("c_float4", "float4"), ("c_float8", "float8"), ("c_numeric", "numeric"),
    ("c_text", "text"), ("c_varchar", "varchar(40)"), ("c_bytea", "bytea"), ("c_date", "date"),
    ("c_timestamp", "timestamp"), ("c_timestamptz", "timestamptz"), ("c_interval", "interval"),
    ("c_jsonb", "jsonb"), ("c_int8a", "int8[]"), ("c_float8a", "float8[]"), ("c_texta", "text[]"),
]


def norm(v):
    """A tz-aware datetime in UTC (servers may answer in another offset)."""
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(UTC)
    return v


# ----------------------------------------------------------------------------- psycopg 3

def run_psycopg():
    import psycopg
    from psycopg import errors, pq
    from psycopg.types.json import Jsonb
    from psycopg.types.numeric import Int2, Int4, Int8, Float4

    r = Runner("psycopg")
    state = {}

    def connect():
        state["conn"] = psycopg.connect(host=HOST, port=PORT, user=USER, dbname=DB,
                                        autocommit=True, connect_timeout=10)
        expect(state["conn"].info.parameter_status("client_encoding"), "UTF8", "client_encoding")
        ver = state["conn"].info.server_version
        if ver < 100000:
            raise AssertionError(f"server_version {ver} < 10")

    if not r.check("connect", connect):
        return
    conn = state["conn"]

    def wrap(name, v):
        return {"int2": Int2, "int4": Int4, "int8": Int8, "float4": Float4,
                "jsonb": Jsonb}.get(name, lambda x: x)(v)

    def simple():
        conn.execute("DROP TABLE IF EXISTS cc_py3")
        conn.execute("CREATE TABLE cc_py3 (id int8, name text, v float8)")
        cur = conn.execute("INSERT INTO cc_py3 VALUES (1, 'one', 1.5), (2, 'two', NULL)")
        expect(cur.rowcount, 2, "rowcount")
        rows = conn.execute("SELECT id, name, v FROM cc_py3 ORDER BY id").fetchall()
        expect(rows, [(1, "one", 1.5), (2, "two", None)], "rows")
        # several statements in one simple Query
        conn.execute("SELECT 1; SELECT 2")
    r.check("simple statements", simple)

    for name, typ, pyval, want in values():
        for binary in (False, True):
            def one(name=name, typ=typ, pyval=pyval, want=want, binary=binary):
                cur = conn.cursor(binary=binary)
                cur.execute(f"SELECT %s::{typ} AS v, %s::{typ} IS NULL AS n",
                            (wrap(name, pyval), None))
                row = cur.fetchone()
                expect(norm(row[0]), want)
                expect(row[1], True, "NULL parameter")
                ti = conn.adapters.types[typ.removesuffix("[]")]
                expect(cur.description[0].type_code,
                       ti.array_oid if typ.endswith("[]") else ti.oid, "result type oid")
            r.check(f"param {name}{' binary' if binary else ''}", one)

    def table_roundtrip(binary):
        conn.execute("DROP TABLE IF EXISTS cc_py3_types")
        conn.execute("CREATE TABLE cc_py3_types (id int4, "
                     + ", ".join(f"{c} {t}" for c, t in TABLE_COLS) + ")")
        vals = [wrap(n, v) for n, _, v, _ in values()]
        cols = ", ".join(c for c, _ in TABLE_COLS)
        ph = ", ".join(["%s"] * (len(vals) + 1))
        # no casts: the parameter types come from the target columns
        conn.execute(f"INSERT INTO cc_py3_types (id, {cols}) VALUES ({ph})", [1] + vals)
        conn.execute(f"INSERT INTO cc_py3_types (id) VALUES (%s)", [2])
        cur = conn.cursor(binary=binary)
        cur.execute(f"SELECT {cols} FROM cc_py3_types WHERE id = %s", [1])
        row = cur.fetchone()
        for (n, _, _, want), got in zip(values(), row):
            expect(norm(got), want, n)
        cur.execute(f"SELECT {cols} FROM cc_py3_types WHERE id = 2")
        expect(list(cur.fetchone()), [None] * len(TABLE_COLS), "NULL row")
    r.check("table of every type, text results", lambda: table_roundtrip(False))
    r.check("table of every type, binary results", lambda: table_roundtrip(True))

    def prepared():
        # psycopg prepares (named _pg3_N) from the 6th execution on (prepare_threshold 5)
        conn.execute("DROP TABLE IF EXISTS cc_py3_prep")
        conn.execute("CREATE TABLE cc_py3_prep (ts timestamptz, v float8, tag text)")
        t0 = dt.datetime(2024, 1, 1, tzinfo=UTC)
        for i in range(8):
            conn.execute("INSERT INTO cc_py3_prep VALUES (%s, %s, %s)",
                         (t0 + dt.timedelta(minutes=i), i * 0.5, f"t{i % 2}"))
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            for i in range(7):
                cur.execute("SELECT count(*), sum(v) FROM cc_py3_prep WHERE ts >= %s AND tag = %s",
                            (t0 + dt.timedelta(minutes=i), "t0"))
                want = [j for j in range(i, 8) if j % 2 == 0]
                expect(cur.fetchone(), (len(want), sum(j * 0.5 for j in want) if want else None),
                       f"execution {i}")
        cur = conn.execute("SELECT v FROM cc_py3_prep WHERE ts = %s", (t0,), prepare=True)
        expect(cur.fetchall(), [(0.0,)])
    r.check("prepared statements", prepared)

    def executemany():
        conn.execute("DROP TABLE IF EXISTS cc_py3_many")
        conn.execute("CREATE TABLE cc_py3_many (id int8, v text)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO cc_py3_many VALUES (%s, %s)",
                            [(i, f"v{i}") for i in range(50)])  # pipeline mode
        expect(conn.execute("SELECT count(*), max(id) FROM cc_py3_many").fetchone(), (50, 49))
    r.check("executemany (pipeline)", executemany)

    def copy_text():
        conn.execute("DROP TABLE IF EXISTS cc_py3_copy")
        conn.execute("CREATE TABLE cc_py3_copy (ts timestamptz, host text, v float8, n int8)")
        t0 = dt.datetime(2024, 1, 1, tzinfo=UTC)
        with conn.cursor() as cur:
            with cur.copy("COPY cc_py3_copy (ts, host, v, n) FROM STDIN") as cp:
                for i in range(100):
                    cp.write_row((t0 + dt.timedelta(seconds=i), f"h{i % 3}", i / 4,
                                  None if i == 7 else i))
            expect(cur.rowcount, 100, "COPY count")
        expect(conn.execute("SELECT count(*), count(n), sum(v) FROM cc_py3_copy").fetchone(),
               (100, 99, sum(i / 4 for i in range(100))))
    r.check("copy from stdin (text)", copy_text)

    def copy_binary():
        t0 = dt.datetime(2024, 1, 2, tzinfo=UTC)
        with conn.cursor() as cur:
            with cur.copy("COPY cc_py3_copy (ts, host, v, n) FROM STDIN (FORMAT BINARY)") as cp:
                cp.set_types(["timestamptz", "text", "float8", "int8"])
                for i in range(10):
                    cp.write_row((t0 + dt.timedelta(seconds=i), "bin", 1.25, i))
        expect(conn.execute("SELECT count(*), sum(n) FROM cc_py3_copy WHERE host = 'bin'")
               .fetchone(), (10, 45))
    r.check("copy from stdin (binary)", copy_binary)

    def copy_out():
        with conn.cursor() as cur:
            with cur.copy("COPY (SELECT n, host FROM cc_py3_copy WHERE n < 3 ORDER BY n) TO STDOUT") as cp:
                rows = list(cp.rows())
        expect(sorted(rows), sorted([("0", "h0"), ("0", "bin"), ("1", "h1"), ("1", "bin"),
                                     ("2", "h2"), ("2", "bin")]))
    r.check("copy to stdout", copy_out)

    def copy_out_binary():
        with conn.cursor() as cur:
            with cur.copy("COPY (SELECT ts, n FROM cc_py3_copy WHERE host = 'bin' ORDER BY n) "
                          "TO STDOUT (FORMAT BINARY)") as cp:
                cp.set_types(["timestamptz", "int8"])
                rows = list(cp.rows())
        t0 = dt.datetime(2024, 1, 2, tzinfo=UTC)
        expect([(norm(a), b) for a, b in rows], [(t0 + dt.timedelta(seconds=i), i) for i in range(10)])
    r.check("copy to stdout (binary)", copy_out_binary)

    def copy_error():
        try:
            with conn.cursor() as cur:
                with cur.copy("COPY cc_py3_copy (ts, host, v, n) FROM STDIN") as cp:
                    cp.write(b"2024-01-01 00:00:00+00\tx\tnot-a-number\t1\n")
            raise AssertionError("bad COPY data was accepted")
        except psycopg.errors.InvalidTextRepresentation:
            pass
        expect(conn.execute("SELECT count(*) FROM cc_py3_copy WHERE host = 'x'").fetchone(), (0,))
    r.check("copy error 22P02, connection usable", copy_error)

    def error(sql, params, cls, state_):
        def f():
            try:
                conn.execute(sql, params)
                raise AssertionError("no error")
            except cls as e:
                expect(e.sqlstate, state_, "sqlstate")
            expect(conn.execute("SELECT 1").fetchone(), (1,), "next statement")
        return f

    conn.execute("DROP TABLE IF EXISTS cc_py3_pk")
    conn.execute("CREATE TABLE cc_py3_pk (id int4 PRIMARY KEY, v text)")
    conn.execute("INSERT INTO cc_py3_pk VALUES (1, 'a')")
    r.check("error 42P01 undefined table",
            error("SELECT * FROM cc_no_such_table", None, errors.UndefinedTable, "42P01"))
    r.check("error 22012 division by zero",
            error("SELECT %s::int4 / 0", (Int4(1),), errors.DivisionByZero, "22012"))
    r.check("error 23505 unique violation",
            error("INSERT INTO cc_py3_pk VALUES (%s, %s)", (Int4(1), "b"),
                  errors.UniqueViolation, "23505"))
    r.check("error 42601 syntax error",
            error("SELEC 1", None, errors.SyntaxError, "42601"))

    def transaction():
        tx = psycopg.connect(host=HOST, port=PORT, user=USER, dbname=DB)  # not autocommit
        try:
            tx.execute("INSERT INTO cc_py3_pk VALUES (%s, %s)", (Int4(10), "in tx"))
            expect(tx.info.transaction_status, pq.TransactionStatus.INTRANS, "status")
            try:
                tx.execute("SELECT 1 / 0")
                raise AssertionError("no error")
            except errors.DivisionByZero:
                pass
            expect(tx.info.transaction_status, pq.TransactionStatus.INERROR, "status after error")
            try:
                tx.execute("SELECT 1")
                raise AssertionError("statement ran in a failed transaction")
            except errors.InFailedSqlTransaction:
                pass
            tx.rollback()
            expect(tx.execute("SELECT count(*) FROM cc_py3_pk WHERE id = 10").fetchone(), (0,),
                   "rolled back row")
            tx.execute("INSERT INTO cc_py3_pk VALUES (%s, %s)", (Int4(11), "committed"))
            tx.commit()
            expect(conn.execute("SELECT v FROM cc_py3_pk WHERE id = 11").fetchone(),
                   ("committed",))
        finally:
            tx.close()
    r.check("transaction: error, ROLLBACK, continue", transaction)

    def server_params():
        expect(conn.info.parameter_status("DateStyle")[:3], "ISO", "DateStyle")
        expect(conn.info.parameter_status("standard_conforming_strings"), "on", "scs")
        expect(conn.info.parameter_status("integer_datetimes"), "on", "integer_datetimes")
        conn.execute("SET application_name = 'cc-psycopg'")
        expect(conn.info.parameter_status("application_name"), "cc-psycopg", "ParameterStatus")
        expect(conn.execute("SHOW application_name").fetchone(), ("cc-psycopg",))
    r.check("parameter status and SET/SHOW", server_params)

    def time_zone():
        # a fixed offset: the instant read back is the same, text or binary
        tz = psycopg.connect(host=HOST, port=PORT, user=USER, dbname=DB, autocommit=True)
        try:
            tz.execute("SET TIME ZONE '+02:00'")
            want = dt.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
            for binary in (False, True):
                cur = tz.cursor(binary=binary)
                cur.execute("SELECT %s::timestamptz, '2024-01-02 05:04:05.678901+02'::timestamptz", (want,))
                a, b = cur.fetchone()
                expect((norm(a), norm(b)), (want, want), f"binary={binary}")
            expect(tz.execute("SELECT '2024-01-02 03:04:05+00'::timestamptz::text").fetchone()[0][:19],
                   "2024-01-02 01:04:05", "text in the session zone (POSIX: '+02:00' is 2 hours west)")
        finally:
            tz.close()
    r.check("SET TIME ZONE to an offset: timestamptz text and binary", time_zone)

    def cleanup():
        for t in ("cc_py3", "cc_py3_types", "cc_py3_prep", "cc_py3_many", "cc_py3_copy", "cc_py3_pk"):
            conn.execute(f"DROP TABLE IF EXISTS {t}")
        conn.close()
    r.check("drop tables, close", cleanup)


# ----------------------------------------------------------------------------- psycopg2

def run_psycopg2():
    import psycopg2
    import psycopg2.errorcodes
    import psycopg2.extensions as ext
    import psycopg2.extras

    r = Runner("psycopg2")
    state = {}

    def connect():
        c = psycopg2.connect(host=HOST, port=PORT, user=USER, dbname=DB, connect_timeout=10)
        c.autocommit = True
        state["conn"] = c
        if c.server_version < 100000:
            raise AssertionError(f"server_version {c.server_version}")
    if not r.check("connect", connect):
        return
    conn = state["conn"]

    def py2(name, v):
        if name == "jsonb":
            return psycopg2.extras.Json(v)
        if name == "bytea":
            return psycopg2.Binary(v)
        return v

    def simple():
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS cc_py2")
            cur.execute("CREATE TABLE cc_py2 (id int8, name text, v float8)")
            cur.execute("INSERT INTO cc_py2 VALUES (1, 'one', 1.5), (2, 'two', NULL)")
            expect(cur.rowcount, 2, "rowcount")
            cur.execute("SELECT id, name, v FROM cc_py2 ORDER BY id")
            expect(cur.fetchall(), [(1, "one", 1.5), (2, "two", None)])
    r.check("simple statements", simple)

    for name, typ, pyval, want in values():
        def one(name=name, typ=typ, pyval=pyval, want=want):
            with conn.cursor() as cur:
                cur.execute(f"SELECT %s::{typ}, %s::{typ} IS NULL", (py2(name, pyval), None))
                got, isnull = cur.fetchone()
                if name == "bytea":
                    got = bytes(got)
                expect(norm(got), want)
                expect(isnull, True, "NULL")
        r.check(f"param {name}", one)

    def table_roundtrip():
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS cc_py2_types")
            cur.execute("CREATE TABLE cc_py2_types (id int4, "
                        + ", ".join(f"{c} {t}" for c, t in TABLE_COLS) + ")")
            cols = ", ".join(c for c, _ in TABLE_COLS)
            vals = [py2(n, v) for n, _, v, _ in values()]
            cur.execute(f"INSERT INTO cc_py2_types (id, {cols}) VALUES (%s, "
                        + ", ".join(["%s"] * len(vals)) + ")", [1] + vals)
            cur.execute(f"SELECT {cols} FROM cc_py2_types WHERE id = %s", (1,))
            for (n, _, _, want), got in zip(values(), cur.fetchone()):
                if n == "bytea":
                    got = bytes(got)
                expect(norm(got), want, n)
    r.check("table of every type", table_roundtrip)

    def copy_expert():
        import io
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS cc_py2_copy")
            cur.execute("CREATE TABLE cc_py2_copy (ts timestamptz, host text, v float8)")
            data = "".join(f"2024-01-01 00:00:{i:02d}+00\th{i % 2}\t{i}.5\n" for i in range(60))
            data += "2024-01-01 00:01:00+00\t\\N\t\\N\n"
            cur.copy_expert("COPY cc_py2_copy (ts, host, v) FROM STDIN", io.StringIO(data))
            expect(cur.rowcount, 61, "COPY count")
            csv = "ts,host,v\n2024-01-02 00:00:00+00,\"a,b\",1\n"
            cur.copy_expert("COPY cc_py2_copy FROM STDIN WITH (FORMAT csv, HEADER true)",
                            io.StringIO(csv))
            cur.execute("SELECT count(*), count(host), count(v) FROM cc_py2_copy")
            expect(cur.fetchone(), (62, 61, 61))
            out = io.StringIO()
            cur.copy_expert("COPY (SELECT host, v FROM cc_py2_copy WHERE host = 'a,b') "
                            "TO STDOUT WITH (FORMAT csv)", out)
            expect(out.getvalue(), '"a,b",1\n', "COPY TO csv")
    r.check("copy_expert in and out", copy_expert)

    def error(sql, code):
        def f():
            with conn.cursor() as cur:
                try:
                    cur.execute(sql)
                    raise AssertionError("no error")
                except psycopg2.Error as e:
                    expect(e.pgcode, code, "pgcode")
                cur.execute("SELECT 1")
                expect(cur.fetchone(), (1,), "next statement")
        return f

    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS cc_py2_pk")
        cur.execute("CREATE TABLE cc_py2_pk (id int4 PRIMARY KEY, v text)")
        cur.execute("INSERT INTO cc_py2_pk VALUES (1, 'a')")
    r.check("error 42P01 undefined table", error("SELECT * FROM cc_no_such_table", "42P01"))
    r.check("error 22012 division by zero", error("SELECT 1 / 0", "22012"))
    r.check("error 23505 unique violation", error("INSERT INTO cc_py2_pk VALUES (1, 'b')", "23505"))

    def transaction():
        tx = psycopg2.connect(host=HOST, port=PORT, user=USER, dbname=DB)
        try:
            cur = tx.cursor()
            cur.execute("INSERT INTO cc_py2_pk VALUES (%s, %s)", (10, "in tx"))
            expect(tx.get_transaction_status(), ext.TRANSACTION_STATUS_INTRANS, "status")
            try:
                cur.execute("INSERT INTO cc_py2_pk VALUES (1, 'dup')")
                raise AssertionError("no error")
            except psycopg2.errors.UniqueViolation:
                pass
            expect(tx.get_transaction_status(), ext.TRANSACTION_STATUS_INERROR, "status")
            try:
                cur.execute("SELECT 1")
                raise AssertionError("statement ran in a failed transaction")
            except psycopg2.errors.InFailedSqlTransaction:
                pass
            tx.rollback()
            cur.execute("SELECT count(*) FROM cc_py2_pk WHERE id = 10")
            expect(cur.fetchone(), (0,), "rolled back")
            cur.execute("INSERT INTO cc_py2_pk VALUES (%s, %s)", (11, "committed"))
            tx.commit()
            with conn.cursor() as c2:
                c2.execute("SELECT v FROM cc_py2_pk WHERE id = 11")
                expect(c2.fetchone(), ("committed",))
        finally:
            tx.close()
    r.check("transaction: error, ROLLBACK, continue", transaction)

    def cleanup():
        with conn.cursor() as cur:
            for t in ("cc_py2", "cc_py2_types", "cc_py2_copy", "cc_py2_pk"):
                cur.execute(f"DROP TABLE IF EXISTS {t}")
        conn.close()
    r.check("drop tables, close", cleanup)


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if which == "psycopg":
        run_psycopg()
    elif which == "psycopg2":
        run_psycopg2()
    else:
        sys.exit("usage: checks_python.py psycopg|psycopg2")
