#!/usr/bin/env python3
"""Grafana's PostgreSQL datasource: the exact SQL it sends (run by tools/clients/run.sh).

Grafana itself (pgx v5 `PgConn.Exec`, or lib/pq) sends every query as a simple
Query with text results; the panel SQL below is also run over the extended
protocol, with text and with binary results, as other dashboards' drivers do.
The SQL is verbatim: the health check (`-- ping`), the datasource setup and
query builder's metadata queries (public/app/plugins/datasource/
grafana-postgresql-datasource, postgresMetaQuery.ts) and the panel queries
with their macros expanded as pkg/tsdb/grafana-postgresql-datasource/macros.go
expands them (time range 2024-01-01T00:00:00Z .. 2024-01-01T06:00:00Z, RFC3339
in UTC). Expected values are computed here from the rows inserted, so the
checks hold for any server that answers PostgreSQL's way.

Prints `ok grafana <check>` / `FAIL grafana <check>: <why>` per check.
"""
import datetime as dt
import math
import os
import sys

import psycopg
from psycopg import pq

HOST = os.environ.get("CLIENTS_HOST", "127.0.0.1")
PORT = int(os.environ.get("CLIENTS_PORT", "5432"))
USER = os.environ.get("CLIENTS_USER", "brewric")
DB = os.environ.get("CLIENTS_DB", "brewric")
UTC = dt.timezone.utc

FROM = "2024-01-01T00:00:00Z"
TO = "2024-01-01T06:00:00Z"
FROM_S, TO_S = 1704067200, 1704088800
T0 = dt.datetime(2024, 1, 1, tzinfo=UTC)
HOSTS = ["web-1", "web-2", "db-1"]
STEP_S = 150  # a row every 2.5 minutes per host, from 23:00 the day before to 07:00


def rows():
    out = []
    t = T0 - dt.timedelta(hours=1)
    while t <= T0 + dt.timedelta(hours=7):
        e = int(t.timestamp())
        for i, h in enumerate(HOSTS):
            v = ((e // STEP_S) % 17) * 0.5 + i
            out.append((t, h, v, e))
        t += dt.timedelta(seconds=STEP_S)
    return out


DATA = rows()


def fail(msg):
    raise AssertionError(msg)


def as_num(v):
    """A time or number column value as a float (epoch seconds for times)."""
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=UTC)
        return v.timestamp()
    if isinstance(v, dt.date):
        return dt.datetime(v.year, v.month, v.day, tzinfo=UTC).timestamp()
    return float(v)


def same(got, want, what):
    if len(got) != len(want):
        fail(f"{what}: {len(got)} rows, want {len(want)}; first got {got[:3]!r}, want {want[:3]!r}")
    for i, (g, w) in enumerate(zip(got, want)):
        if len(g) != len(w):
            fail(f"{what} row {i}: {g!r}, want {w!r}")
        for a, b in zip(g, w):
            if isinstance(b, float):
                if a is None or not math.isclose(as_num(a), b, rel_tol=1e-9, abs_tol=1e-9):
                    fail(f"{what} row {i}: got {g!r}, want {w!r}")
            elif a != b:
                fail(f"{what} row {i}: got {g!r}, want {w!r}")


def in_range(r):
    return FROM_S <= r[3] <= TO_S


def bucket(e, s):
    return float(math.floor(e / s) * s)


def group_avg(key, sel=in_range):
    acc = {}
    for r in DATA:
        if sel(r):
            acc.setdefault(key(r), []).append(r[2])
    return {k: sum(v) / len(v) for k, v in acc.items()}


# (name, SQL, expected rows, whether row order matters, column names)
def panel_queries():
    q = []
    g = group_avg(lambda r: bucket(r[3], 300))
    q.append(("timeGroupAlias avg (time series)",
              "SELECT floor(extract(epoch from ts)/300)*300 AS \"time\", avg(value) AS \"value\" "
              f"FROM cc_gf WHERE ts BETWEEN '{FROM}' AND '{TO}' GROUP BY 1 ORDER BY 1",
              [(k, v) for k, v in sorted(g.items())], True, ["time", "value"]))
    g = group_avg(lambda r: (bucket(r[3], 300), r[1]))
    q.append(("timeGroupAlias with metric column",
              "SELECT floor(extract(epoch from ts)/300)*300 AS \"time\", avg(value) AS \"value\", host AS metric "
              f"FROM cc_gf WHERE ts BETWEEN '{FROM}' AND '{TO}' GROUP BY 1, host ORDER BY 1",
              sorted([(k[0], v, k[1]) for k, v in g.items()], key=lambda x: (x[0], x[2])), False,
              ["time", "value", "metric"]))
    g = group_avg(lambda r: bucket(r[3], 60))
    q.append(("query builder shape, LIMIT 50",
              "SELECT floor(extract(epoch from ts)/60)*60 AS \"time\", avg(value) AS \"value\" "
              f"FROM cc_gf WHERE ts BETWEEN '{FROM}' AND '{TO}' GROUP BY 1 ORDER BY 1 LIMIT 50 ",
              [(k, v) for k, v in sorted(g.items())][:50], True, ["time", "value"]))
    sel = sorted([r for r in DATA if in_range(r)], key=lambda r: (-r[3], r[1]))[:50]
    q.append(("$__time table format",
              f"SELECT ts AS \"time\", host, value FROM cc_gf WHERE ts BETWEEN '{FROM}' AND '{TO}' "
              "ORDER BY ts DESC, host LIMIT 50",
              [(float(r[3]), r[1], r[2]) for r in sel], True, ["time", "host", "value"]))
    sel = sorted([r for r in DATA if in_range(r) and r[1] == "web-1"], key=lambda r: r[3])
    q.append(("$__timeEpoch",
              "SELECT extract(epoch from ts) as \"time\", value FROM cc_gf "
              f"WHERE ts BETWEEN '{FROM}' AND '{TO}' AND host = 'web-1' ORDER BY 1",
              [(float(r[3]), r[2]) for r in sel], True, ["time", "value"]))
    q.append(("$__unixEpochFilter",
              "SELECT epoch AS \"time\", value FROM cc_gf "
              f"WHERE epoch >= {FROM_S} AND epoch <= {TO_S} AND host = 'web-1' ORDER BY 1",
              [(float(r[3]), r[2]) for r in sel], True, ["time", "value"]))
    q.append(("$__unixEpochNanoFilter",
              "SELECT epoch_ns AS \"time\", value FROM cc_gf "
              f"WHERE epoch_ns >= {FROM_S}000000000 AND epoch_ns <= {TO_S}000000000 AND host = 'web-1' ORDER BY 1",
              [(float(r[3] * 10**9), r[2]) for r in sel], True, ["time", "value"]))
    g = group_avg(lambda r: bucket(r[3], 900))
    q.append(("$__unixEpochGroupAlias",
              "SELECT floor((epoch)/900)*900 AS \"time\", avg(value) AS \"value\" FROM cc_gf "
              f"WHERE epoch >= {FROM_S} AND epoch <= {TO_S} GROUP BY 1 ORDER BY 1",
              [(k, v) for k, v in sorted(g.items())], True, ["time", "value"]))
    cnt = sum(1 for r in DATA if FROM_S <= r[3] < TO_S)
    q.append(("$__timeFrom() and $__timeTo()",
              f"SELECT count(*) AS \"count\" FROM cc_gf WHERE ts >= '{FROM}' AND ts < '{TO}'",
              [(cnt,)], True, ["count"]))
    g = group_avg(lambda r: bucket(r[3], 3600))
    q.append(("$__timeFilter and $__timeGroupAlias on timestamp without time zone",
              "SELECT floor(extract(epoch from ts_naive)/3600)*3600 AS \"time\", avg(value) AS \"value\" "
              f"FROM cc_gf WHERE ts_naive BETWEEN '{FROM}' AND '{TO}' GROUP BY 1 ORDER BY 1",
              [(k, v) for k, v in sorted(g.items())], True, ["time", "value"]))
    days = sorted({r[0].date() for r in DATA if r[0].date() == T0.date()})
    q.append(("$__timeFilter on date",
              f"SELECT d AS \"time\", count(*) AS n FROM cc_gf WHERE d BETWEEN '{FROM}' AND '{TO}' "
              "GROUP BY 1 ORDER BY 1",
              [(as_num(dd), sum(1 for r in DATA if r[0].date() == dd)) for dd in days], True,
              ["time", "n"]))
    sel = sorted([r for r in DATA if r[1] in ("web-1", "db-1")
                  and FROM_S + 0.5 <= r[3] <= FROM_S + 1800.25], key=lambda r: (r[3], r[1]))
    q.append(("$__timeFilter with fractional seconds and a multi-value variable",
              "SELECT ts AS \"time\", value, host AS metric FROM cc_gf "
              "WHERE ts BETWEEN '2024-01-01T00:00:00.5Z' AND '2024-01-01T00:30:00.25Z' "
              "AND host IN ('web-1','db-1') ORDER BY 1, 3",
              [(float(r[3]), r[2], r[1]) for r in sel], True, ["time", "value", "metric"]))
    g = {}
    for r in DATA:
        if in_range(r):
            k = bucket(r[3], 60 * 60)
            a = g.setdefault(k, [0, 0.0, None, None])
            a[0] += 1
            a[1] += r[2]
            a[2] = r[2] if a[2] is None else min(a[2], r[2])
            a[3] = r[2] if a[3] is None else max(a[3], r[2])
    q.append(("$__timeGroupAlias with count/sum/min/max",
              "SELECT floor(extract(epoch from ts)/3600)*3600 AS \"time\", count(value) AS \"count\", "
              "sum(value) AS \"sum\", min(value) AS \"min\", max(value) AS \"max\" "
              f"FROM cc_gf WHERE ts BETWEEN '{FROM}' AND '{TO}' GROUP BY 1 ORDER BY 1",
              [(k, a[0], a[1], a[2], a[3]) for k, a in sorted(g.items())], True,
              ["time", "count", "sum", "min", "max"]))
    q.append(("template variable query",
              "SELECT DISTINCT host FROM cc_gf ORDER BY 1",
              [(h,) for h in sorted(HOSTS)], True, ["host"]))
    return q


SEARCH_PATH_CONSTRAINT = """quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )"""

TABLES_SQL = f"""SELECT
    CASE WHEN
          {SEARCH_PATH_CONSTRAINT}
      THEN quote_ident(table_name)
      ELSE quote_ident(table_schema) || '.' || quote_ident(table_name)
    END AS "table"
    FROM information_schema.tables
    WHERE quote_ident(table_schema) NOT IN ('information_schema',
                             'pg_catalog',
                             '_timescaledb_cache',
                             '_timescaledb_catalog',
                             '_timescaledb_internal',
                             '_timescaledb_config',
                             'timescaledb_information',
                             'timescaledb_experimental')
    ORDER BY CASE WHEN {SEARCH_PATH_CONSTRAINT} THEN 0 ELSE 1 END, 1"""

COLUMNS_SQL = f"""SELECT quote_ident(column_name) AS "column", data_type AS "type"
    FROM information_schema.columns
    WHERE
      CASE WHEN array_length(parse_ident('cc_gf'),1) = 2
        THEN quote_ident(table_schema) = (parse_ident('cc_gf'))[1]
          AND quote_ident(table_name) = (parse_ident('cc_gf'))[2]
        ELSE quote_ident(table_name) = 'cc_gf'
          AND
          {SEARCH_PATH_CONSTRAINT}
      END"""

COLUMNS_QUALIFIED_SQL = """SELECT quote_ident(column_name) AS "column", data_type AS "type"
    FROM information_schema.columns
    WHERE
      CASE WHEN array_length(parse_ident('public.cc_gf'),1) = 2
        THEN quote_ident(table_schema) = (parse_ident('public.cc_gf'))[1]
          AND quote_ident(table_name) = (parse_ident('public.cc_gf'))[2]
        ELSE quote_ident(table_name) = 'public.cc_gf'
      END"""

SCHEMAS_SQL = """SELECT schema_name AS "name" FROM information_schema.schemata WHERE schema_name NOT IN ('information_schema','pg_catalog','pg_toast','_timescaledb_cache','_timescaledb_catalog','_timescaledb_internal','_timescaledb_config','timescaledb_information','timescaledb_experimental') ORDER BY schema_name"""

COLUMNS = [("ts", "timestamp with time zone"), ("ts_naive", "timestamp without time zone"),
           ("d", "date"), ("epoch", "bigint"), ("epoch_ns", "bigint"), ("host", "text"),
           ("hostv", "character varying"), ("value", "double precision"), ("reqs", "integer"),
           ("amount", "numeric"), ("up", "boolean")]


class Runner:
    def check(self, name, fn):
        try:
            fn()
        except Exception as e:
            why = f"{type(e).__name__}: {e}".replace("\n", " | ")
            print(f"FAIL grafana {name}: {why[:500]}", flush=True)
            return False
        print(f"ok grafana {name}", flush=True)
        return True


def main():
    r = Runner()
    state = {}

    def connect():
        state["conn"] = psycopg.connect(host=HOST, port=PORT, user=USER, dbname=DB,
                                        autocommit=True, connect_timeout=10)
    if not r.check("connect", connect):
        return
    conn = state["conn"]
    pg = conn.pgconn

    # -- health check: pgx v5 Ping sends "-- ping"; lib/pq's Ping sends ";"
    for label, sql in [("-- ping", "-- ping"), (";", ";"), ("empty string", ""),
                       ("block comment", "/* grafana */"), ("comment lines", "-- a\n-- b\n")]:
        def empty(sql=sql):
            res = pg.exec_(sql.encode())
            if res.status != pq.ExecStatus.EMPTY_QUERY:
                fail(f"simple protocol: status {res.status.name}, want EMPTY_QUERY "
                     f"({res.error_message.decode(errors='replace')})")
            res = pg.exec_params(sql.encode(), [])
            if res.status != pq.ExecStatus.EMPTY_QUERY:
                fail(f"extended protocol: status {res.status.name}, want EMPTY_QUERY "
                     f"({res.error_message.decode(errors='replace')})")
            if conn.execute("SELECT 1").fetchone() != (1,):
                fail("next query")
        r.check(f"health check {label!r} is an empty query", empty)

    def setup():
        conn.execute("DROP TABLE IF EXISTS cc_gf")
        conn.execute("CREATE TABLE cc_gf (ts timestamptz, ts_naive timestamp, d date, epoch bigint, "
                     "epoch_ns bigint, host text, hostv varchar(20), value double precision, "
                     "reqs integer, amount numeric(10,2), up boolean)")
        vals = []
        for t, h, v, e in DATA:
            s = t.strftime("%Y-%m-%d %H:%M:%S")
            vals.append(f"('{s}+00', '{s}', '{t.date()}', {e}, {e}000000000, '{h}', '{h}', {v!r}, "
                        f"{e % 1000}, {e % 997}.25, {'true' if e % 2 else 'false'})")
        conn.execute("INSERT INTO cc_gf VALUES " + ", ".join(vals))
        n = conn.execute("SELECT count(*) FROM cc_gf").fetchone()[0]
        if n != len(DATA):
            fail(f"{n} rows")
    if not r.check("create and fill the panel table", setup):
        return

    # -- datasource setup and query builder metadata (simple protocol, as Grafana)
    def version():
        row = conn.execute("SELECT current_setting('server_version_num')::int/100 as version").fetchone()
        if not isinstance(row[0], int) or row[0] < 906:
            fail(f"version {row!r}: Grafana wants an integer, >= 906 enables its TimescaleDB check")
    r.check("datasource setup: server_version_num", version)

    def timescale():
        cur = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'")
        cur.fetchall()
        if cur.description[0].name != "extversion":
            fail(f"column {cur.description[0].name}")
    r.check("datasource setup: timescaledb extension lookup", timescale)

    def schemas():
        names = [x[0] for x in conn.execute(SCHEMAS_SQL).fetchall()]
        if "public" not in names:
            fail(f"schemas {names}")
        if names != sorted(names):
            fail(f"not sorted: {names}")
    r.check("query builder: schemas", schemas)

    def tables():
        names = [x[0] for x in conn.execute(TABLES_SQL).fetchall()]
        if "cc_gf" not in names:
            fail(f"cc_gf not among {names[:20]}")
        if any(n.startswith(("pg_catalog.", "information_schema.")) for n in names):
            fail(f"system tables listed: {names[:20]}")
    r.check("query builder: tables (search_path)", tables)

    def tables_schema():
        names = [x[0] for x in conn.execute(
            "SELECT quote_ident(table_name) AS \"table\" FROM information_schema.tables "
            "WHERE quote_ident(table_schema) = 'public' ORDER BY 1").fetchall()]
        if "cc_gf" not in names or names != sorted(names):
            fail(f"tables {names[:20]}")
    r.check("query builder: tables of a schema", tables_schema)

    def columns(sql):
        def f():
            cur = conn.execute(sql)
            got = sorted(cur.fetchall())
            if [d.name for d in cur.description] != ["column", "type"]:
                fail(f"columns {[d.name for d in cur.description]}")
            if got != sorted(COLUMNS):
                fail(f"got {got}, want {sorted(COLUMNS)}")
        return f
    r.check("query builder: columns with types", columns(COLUMNS_SQL))
    r.check("query builder: columns of schema.table", columns(COLUMNS_QUALIFIED_SQL))

    # -- panel queries, three ways
    modes = [("simple", dict(binary=False, prepare=False)),
             ("extended text", dict(binary=False, prepare=True)),
             ("extended binary", dict(binary=True, prepare=False))]
    for name, sql, want, ordered, cols in panel_queries():
        for mode, kw in modes:
            def panel(sql=sql, want=want, ordered=ordered, cols=cols, kw=kw, mode=mode):
                cur = conn.cursor(binary=kw["binary"])
                # no parameters and text: psycopg sends a simple Query; prepare=True:
                # Parse/Bind/Execute with text results; a binary cursor: Parse/Bind/Execute
                # asking for binary results
                cur.execute(sql, prepare=kw["prepare"])
                got = cur.fetchall()
                names = [d.name for d in cur.description]
                if names != cols:
                    fail(f"column names {names}, want {cols}")
                if not ordered:
                    got = sorted(got, key=lambda x: (as_num(x[0]), x[2]))
                same(got, want, "rows")
                if cols[0] == "time":
                    times = [as_num(x[0]) for x in got]
                    if ordered and times != sorted(times) and "DESC" not in sql:
                        fail("time column not ascending")
            r.check(f"{name} ({mode})", panel)

    def cleanup():
        conn.execute("DROP TABLE IF EXISTS cc_gf")
        conn.close()
    r.check("drop table, close", cleanup)


if __name__ == "__main__":
    main()
    sys.exit(0)
