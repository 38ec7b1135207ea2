#!/usr/bin/env python3
"""TSBS DevOps (cpu-only) benchmark driver: query latency, ingest rate and
write-to-queryable latency, Brewric vs PostgreSQL 15, DuckDB and ClickHouse (chDB).

This is a benchmark DRIVER, not a test. In one run on the same machine it

  1. generates TSBS cpu-only data (default 1000 hosts x 48 hours, one point per
     host every 10 s from 2016-01-01T00:00:00Z = 17,280,000 rows) once into a CSV
     file in a work directory with bench_compression.py's generate_csv (time,
     tags_id, the 10 usage_* fields as integers; TSBS's clamped random walk, numpy
     standing in for Go's math/rand), and the `tags` rows by TSBS's tag rules
     (shared/reference/tsbs.md, section 1: hostname host_i; region, datacenter,
     rack, arch, os, service, service_version, service_environment and team drawn
     in that order with Python's random.Random(seed)); tags_id i+1 <-> host_i;
  2. loads it into each system, one system at a time:
       brewric   brewricd (--brewricd, --shards): TSBS's loader DDL exactly as
                 tsbs_load_timescaledb sends it (tags with SERIAL PRIMARY KEY, the
                 uniq1 unique index and the hostname index, cpu with its two
                 indexes, CREATE EXTENSION timescaledb and create_hypertable),
                 the tags as INSERT ... ON CONFLICT DO NOTHING RETURNING *, then
                 --workers psycopg connections in threads sending
                 COPY cpu(time,tags_id,usage_user,...) FROM STDIN WITH (FORMAT csv)
                 of --batch-size rows each (the CSV cut into line-aligned chunks;
                 worker k sends chunks k, k+W, ...), then CHECKPOINT (timed apart:
                 the rows are queryable before it; it writes the memtables into
                 segments, the state a loaded table settles in);
       postgres  a throwaway PostgreSQL 15 cluster (bench_spine.py's launcher):
                 the same DDL less the two TimescaleDB statements, time_bucket
                 defined as date_bin with TimescaleDB's origin 2000-01-03, the same
                 COPY loader, then VACUUM ANALYZE (timed apart);
       duckdb    a database file in the work directory: the tables, the tags,
                 COPY cpu FROM '<csv>' (DuckDB has time_bucket built in);
       chdb      in-process ClickHouse: MergeTree ORDER BY (tags_id, time), a tags
                 table, INSERT INTO cpu SELECT FROM file('<csv>');
     ingest rate = rows / seconds from the first COPY until SELECT count(*) FROM cpu
     returns every row (a progress line every few seconds for the COPY loaders);
  3. runs the 10 DevOps query types (single-groupby-1-1-1, single-groupby-1-1-12,
     single-groupby-5-1-1, cpu-max-all-1, double-groupby-1, double-groupby-all,
     high-cpu-1, high-cpu-all, groupby-orderby-limit, lastpoint), generated as
     TSBS's TimescaleDB generator writes them (tsbs.md, section 3: whitespace,
     Go's '2006-01-02 15:04:05.999999 -0700' literals, distinct random hosts,
     random windows) from a seeded RNG, one instance per type per set: 2 warm-up
     sets, then --sets sets x --reps repetitions. Brewric and PostgreSQL get the
     byte-identical SQL over the extended protocol (default: a psycopg binary
     cursor, i.e. an unnamed statement, Parse/Bind/Execute, binary results, each
     execution parsed and planned anew; --protocol prepare: psycopg's named
     prepared statements (prepare=True) with text results, reused by the repeated
     executions of one query, as TSBS's pgx statement cache would); DuckDB the
     same text with the literals' ' +0000' written '+0000' (DuckDB reads ' +0000'
     as a time zone name; checked at run time and printed); chDB the ClickHouse
     dialect of each type (TSBS's ClickHouse templates on our column names:
     toStartOfMinute/toStartOfHour, literals without the ' +0000' (the
     microseconds kept, so the windows are exactly the same), a plain INNER JOIN
     instead of ANY INNER JOIN, lastpoint via max(time) per tags_id). Latency per
     execution = execute + fetch every row into Python; p50 per type and system,
     and the geometric mean of the 10 p50s;
  4. checks the results: for set 1 of each type every system's rows are reduced to
     a digest (times as UTC epoch microseconds, numbers rounded to 6 significant
     digits, NULL as a marker, row order kept where the query has an ORDER BY,
     sorted otherwise; high-cpu's and lastpoint's SELECT * projected by column
     name to (time, tags_id, usage_*) / (hostname, time, tags_id, usage_*)) and
     compared with PostgreSQL's; mismatches are listed with the SQL;
  5. write-to-queryable (Brewric only; --no-latency skips it): while a
     second client process COPYs about --bg-rate rows/s into cpu, a connection inserts
     a marker row every --marker-interval-ms (single-row INSERT, tags_id
     1000000+n) and polls SELECT 1 FROM cpu WHERE tags_id = <marker> until it
     returns the row; latency = from just before the INSERT until the SELECT first
     returns it; --markers markers, p50/p99 (INSERT and SELECT parts apart) and
     the background rate achieved; 50 markers without the background load first,
     as a baseline;
  6. prints a table per query type (p50 ms per system, Brewric / best other,
     fastest), the geometric means with Brewric's ratio against the best of DuckDB
     and chDB (target <= 0.25), ingest rows/s (target Brewric >= 1,000,000 rows/s
     at full scale with 2 shards), write-to-queryable p50/p99 (target p99 <= 5 ms)
     and the environment, and writes the same text to
     tools/results/bench_tsbs-<date>.txt (-quick.txt for --quick; --out PATH) and
     an SVG chart of the p50s (grouped horizontal bars, log scale) beside it
     (same name, .svg).

A system that fails (an error in its load or in a query) gets its error printed
and the others go on; a query error counts as a failed type for that system.

Usage (from the repository root):

    python3 tools/bench_tsbs.py                        # full size, all systems
    python3 tools/bench_tsbs.py --quick                # 100 hosts x 6 h: checks the driver
    python3 tools/bench_tsbs.py --hosts 200 --hours 12 --skip chdb
    python3 tools/bench_tsbs.py --systems brewric,postgres --sets 5 --reps 1 --no-latency

Options: --hosts N (1000), --hours H (48), --seed S (1), --quick (100 hosts x 6 h),
--systems LIST (brewric,postgres,duckdb,chdb), --skip LIST, --brewricd PATH
(default target/release/brewricd; built with cargo build --release when that
default is missing), --shards N (2), --workers N (COPY connections, 2),
--batch-size N (rows per COPY, 10000 as TSBS), --sets N (10), --reps N (2),
--warmup-sets N (2), --protocol binary|prepare, --slow-cutoff S (an execution
slower than this ends the measurements of that type on that system, 60),
--query-timeout S (cancel a query after this long, 600), --no-latency,
--markers N (300), --marker-interval-ms MS (100), --bg-rate ROWS/S (100000),
--work-dir DIR (default a new temporary directory, removed at the end unless
--keep), --keep (also keeps brewricd's and PostgreSQL's data directories),
--out PATH.

What it needs: Python 3.11 with numpy, psycopg[binary], duckdb and chdb (a failed
import runs pip install, bench_compression.ensure_packages), PostgreSQL 15 server
binaries (bench_spine.Postgres: apt-get install -y postgresql when missing and
root), cargo for brewricd, and disk for the CSV (~1 GiB at full size) plus each
system's copy (PostgreSQL ~3.5 GiB with its indexes and WAL). Windows longer than
the data (with --quick: the 8 h and 12 h ones over 6 h of data) are the whole data
span; TSBS's generator would refuse them; the output says which types that hit.

Fairness notes (printed with the results):
  * Every system loads the same CSV and the same tags; row counts are checked.
  * Brewric and PostgreSQL get TSBS's DDL with both cpu indexes in place during
    the load; DuckDB and chDB have no secondary indexes (chDB sorts by its ORDER BY
    (tags_id, time)); the loaders differ (COPY over the wire from Python threads vs
    in-process file readers), so ingest rates are comparable only between Brewric
    and PostgreSQL.
  * Each query's latency includes receiving every row in Python: psycopg's
    fetchall (binary results decoded in C), DuckDB's fetchall, and for chDB the
    whole result as JSONCompact parsed with json.loads (times stay strings; chDB's
    DB-API cursor parses row by row in Python and is ~10x slower on large results).
  * Everything shares one machine; systems run one after the other, each alone.
"""

import argparse
import datetime
import decimal
import hashlib
import importlib.util
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_module(name):
    sys.dont_write_bytecode = True  # leave no tools/__pycache__ behind
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bc = _load_module("bench_compression")
# ensure_packages re-executes its module's __file__ when a fresh install is still not
# importable: point it at this driver (HERE in that module was computed at import).
bc.__file__ = os.path.abspath(__file__)
spine = bc.spine
ROOT = spine.ROOT
out, fmt_s, ensure_packages = bc.out, bc.fmt_s, bc.ensure_packages
generate_csv, short_error = bc.generate_csv, bc.short_error
FIELDS, COLUMNS = bc.FIELDS, bc.COLUMNS
TSBS_CREATE, TSBS_INDEXES = bc.TSBS_CREATE, bc.TSBS_INDEXES
START, INTERVAL_S = bc.START, bc.INTERVAL_S

SYSTEMS = ("brewric", "postgres", "duckdb", "chdb")
NEEDS = {"brewric": ["psycopg"], "postgres": ["psycopg"], "duckdb": ["duckdb"], "chdb": ["chdb"]}
OTHERS = ("duckdb", "chdb")      # Brewric's geometric-mean target is against the best of these
TARGET_GEOMEAN_RATIO = 0.25
TARGET_INGEST = 1_000_000
TARGET_W2Q_P99_MS = 5.0

COPY_SQL = f"COPY cpu({','.join(COLUMNS)}) FROM STDIN WITH (FORMAT csv)"

# --------------------------------------------------------------------------
# tags: TSBS's host tags (tsbs.md section 1), drawn with random.Random(seed)

TAG_COLS = ["hostname", "region", "datacenter", "rack", "os", "arch", "team", "service", "service_version",
            "service_environment"]
REGIONS = [
    ("us-east-1", ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1e"]),
    ("us-west-1", ["us-west-1a", "us-west-1b"]),
    ("us-west-2", ["us-west-2a", "us-west-2b", "us-west-2c"]),
    ("eu-west-1", ["eu-west-1a", "eu-west-1b", "eu-west-1c"]),
    ("eu-central-1", ["eu-central-1a", "eu-central-1b"]),
    ("ap-southeast-1", ["ap-southeast-1a", "ap-southeast-1b"]),
    ("ap-southeast-2", ["ap-southeast-2a", "ap-southeast-2b"]),
    ("ap-northeast-1", ["ap-northeast-1a", "ap-northeast-1c"]),
    ("sa-east-1", ["sa-east-1a", "sa-east-1b", "sa-east-1c"]),
]
OSES = ["Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10"]
ARCHS = ["x64", "x86"]
TEAMS = ["SF", "NYC", "LON", "CHI"]
ENVS = ["production", "staging", "test"]


def make_tags(hosts, seed):
    """One tuple per host in TAG_COLS order; draw order as TSBS's host.go: region,
    datacenter, rack, arch, os, service, service_version, service_environment, team."""
    rng = random.Random(seed)
    rows = []
    for i in range(hosts):
        region, dcs = rng.choice(REGIONS)
        dc = rng.choice(dcs)
        rack = str(rng.randrange(100))
        arch = rng.choice(ARCHS)
        os_ = rng.choice(OSES)
        service = str(rng.randrange(20))
        service_version = str(rng.randrange(2))
        env = rng.choice(ENVS)
        team = rng.choice(TEAMS)
        rows.append((f"host_{i}", region, dc, rack, os_, arch, team, service, service_version, env))
    return rows


def tags_values(rows):
    return ",".join("(" + ",".join(f"'{v}'" for v in r) + ")" for r in rows)


# TSBS's creator.go with its defaults (tsbs.md section 2), less DROP/CREATE DATABASE
# (each server here is new and has one database).
TSBS_TAGS_DDL = [
    "DROP TABLE IF EXISTS tags",
    "CREATE TABLE tags(id SERIAL PRIMARY KEY, " + ", ".join(f"{c} TEXT" for c in TAG_COLS) + ")",
    f"CREATE UNIQUE INDEX uniq1 ON tags({','.join(TAG_COLS)})",
    "CREATE INDEX ON tags(hostname)",
    "DROP TABLE IF EXISTS cpu",
]
TIMESCALE_DDL = [
    "CREATE EXTENSION IF NOT EXISTS timescaledb CASCADE",
    "SELECT create_hypertable('cpu'::regclass, 'time'::name, replication_factor => NULL, "
    "chunk_time_interval => 43200000000, create_default_indexes=>FALSE)",
]
PG_TIME_BUCKET = ("CREATE FUNCTION time_bucket(interval, timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE "
                  "AS $$SELECT date_bin($1, $2, timestamptz '2000-01-03 00:00:00+00')$$")


# --------------------------------------------------------------------------
# queries: TSBS's TimescaleDB devops.go (and its ClickHouse dialect for chDB)

TYPES = ["single-groupby-1-1-1", "single-groupby-1-1-12", "single-groupby-5-1-1", "cpu-max-all-1",
         "double-groupby-1", "double-groupby-all", "high-cpu-1", "high-cpu-all", "groupby-orderby-limit",
         "lastpoint"]
UNORDERED = {"high-cpu-1", "high-cpu-all"}     # no ORDER BY: compared as sorted rows
PROJECT = {  # SELECT * results projected by column name before comparing
    "high-cpu-1": ["time", "tags_id"] + FIELDS,
    "high-cpu-all": ["time", "tags_id"] + FIELDS,
    "lastpoint": ["hostname", "time", "tags_id"] + FIELDS,
}
NL8 = "\n        "  # the generator's line breaks and indentation
NL10 = "\n          "


def go_time(ns, zone=True):
    """Go's "2006-01-02 15:04:05.999999 -0700" in UTC: microseconds truncated, trailing
    zeros (and a bare dot) dropped."""
    sec, frac = divmod(ns, 1_000_000_000)
    s = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    us = frac // 1000
    if us:
        s += "." + f"{us:06d}".rstrip("0")
    return s + (" +0000" if zone else "")


class Query:
    def __init__(self, qtype, pg, ch):
        self.type = qtype
        self.pg = pg    # TSBS's TimescaleDB text: Brewric and PostgreSQL (and DuckDB, literals adapted)
        self.ch = ch    # ClickHouse dialect: chDB


class QueryGen:
    def __init__(self, hosts, hours, seed):
        self.hosts = hosts
        self.rng = random.Random(f"bench_tsbs queries {seed}")
        self.start_ns = int(START.timestamp()) * 1_000_000_000
        self.end_ns = self.start_ns + hours * 3600 * 1_000_000_000
        self.capped = set()

    def window(self, seconds, qtype):
        """TSBS's RandWindow: start = data_start + rand in [0, data_end - window - data_start)."""
        w = seconds * 1_000_000_000
        span = self.end_ns - self.start_ns
        if w >= span:  # TSBS would refuse; use the whole data span
            self.capped.add(qtype)
            return self.start_ns, self.end_ns
        s = self.start_ns + self.rng.randrange(span - w)
        return s, s + w

    def host_list(self, n):
        """GetRandomSubsetPerm: distinct hosts by rejection."""
        picked = []
        while len(picked) < min(n, self.hosts):
            h = self.rng.randrange(self.hosts)
            if h not in picked:
                picked.append(h)
        return [f"host_{h}" for h in picked]

    @staticmethod
    def host_where(hostnames):
        return "tags_id IN (SELECT id FROM tags WHERE hostname IN (%s))" % ",".join(f"'{h}'" for h in hostnames)

    def make(self, qtype):
        return getattr(self, qtype.replace("-", "_"))() if not qtype.startswith("single-groupby") else \
            self.single_groupby(qtype)

    def single_groupby(self, qtype):
        metrics, nhosts, hours = (int(x) for x in qtype.rsplit("-", 3)[1:])
        s, e = self.window(hours * 3600, qtype)
        hosts = self.host_list(nhosts)
        m = FIELDS[:metrics]
        pg = ("SELECT time_bucket('60 seconds', time) AS minute," + NL8
              + ", ".join(f"max({f}) as max_{f}" for f in m) + NL8
              + "FROM cpu" + NL8
              + f"WHERE {self.host_where(hosts)} AND time >= '{go_time(s)}' AND time < '{go_time(e)}'" + NL8
              + "GROUP BY minute ORDER BY minute ASC")
        ch = ("SELECT toStartOfMinute(time) AS minute, " + ", ".join(f"max({f}) AS max_{f}" for f in m)
              + f" FROM cpu WHERE {self.host_where(hosts)} AND (time >= '{go_time(s, False)}') "
              f"AND (time < '{go_time(e, False)}') GROUP BY minute ORDER BY minute ASC")
        return Query(qtype, pg, ch)

    def cpu_max_all_1(self):
        s, e = self.window(8 * 3600, "cpu-max-all-1")
        hosts = self.host_list(1)
        pg = ("SELECT time_bucket('3600 seconds', time) AS hour," + NL8
              + ", ".join(f"max({f}) as max_{f}" for f in FIELDS) + NL8
              + "FROM cpu" + NL8
              + f"WHERE {self.host_where(hosts)} AND time >= '{go_time(s)}' AND time < '{go_time(e)}'" + NL8
              + "GROUP BY hour ORDER BY hour")
        ch = ("SELECT toStartOfHour(time) AS hour, " + ", ".join(f"max({f}) AS max_{f}" for f in FIELDS)
              + f" FROM cpu WHERE {self.host_where(hosts)} AND (time >= '{go_time(s, False)}') "
              f"AND (time < '{go_time(e, False)}') GROUP BY hour ORDER BY hour ASC")
        return Query("cpu-max-all-1", pg, ch)

    def _double_groupby(self, qtype, nmetrics):
        s, e = self.window(12 * 3600, qtype)
        m = FIELDS[:nmetrics]
        pg = (NL8 + "WITH cpu_avg AS (" + NL10
              + "SELECT time_bucket('3600 seconds', time) as hour, tags_id," + NL10
              + ", ".join(f"avg({f}) as mean_{f}" for f in m) + NL10
              + "FROM cpu" + NL10
              + f"WHERE time >= '{go_time(s)}' AND time < '{go_time(e)}'" + NL10
              + "GROUP BY 1, 2" + NL8
              + ")" + NL8
              + "SELECT hour, tags.hostname, " + ", ".join(f"mean_{f}" for f in m) + NL8
              + "FROM cpu_avg" + NL8
              + "JOIN tags ON cpu_avg.tags_id = tags.id" + NL8
              + "ORDER BY hour, tags.hostname")
        ch = ("SELECT hour, hostname, " + ", ".join(f"mean_{f}" for f in m)
              + " FROM (SELECT toStartOfHour(time) AS hour, tags_id AS id, "
              + ", ".join(f"avg({f}) AS mean_{f}" for f in m)
              + f" FROM cpu WHERE (time >= '{go_time(s, False)}') AND (time < '{go_time(e, False)}') "
              "GROUP BY hour, id) AS cpu_avg INNER JOIN tags USING (id) ORDER BY hour ASC, hostname")
        return Query(qtype, pg, ch)

    def double_groupby_1(self):
        return self._double_groupby("double-groupby-1", 1)

    def double_groupby_all(self):
        return self._double_groupby("double-groupby-all", len(FIELDS))

    def _high_cpu(self, qtype, nhosts):
        hosts = self.host_list(nhosts) if nhosts else []   # hosts before the window, as TSBS
        s, e = self.window(12 * 3600, qtype)
        where = f"AND {self.host_where(hosts)}" if hosts else ""
        pg = (f"SELECT * FROM cpu WHERE usage_user > 90.0 and time >= '{go_time(s)}' AND time < '{go_time(e)}' "
              + where)
        ch = (f"SELECT * FROM cpu PREWHERE (usage_user > 90.0) AND (time >= '{go_time(s, False)}') "
              f"AND (time < '{go_time(e, False)}')" + (f" AND ({self.host_where(hosts)})" if hosts else ""))
        return Query(qtype, pg, ch)

    def high_cpu_1(self):
        return self._high_cpu("high-cpu-1", 1)

    def high_cpu_all(self):
        return self._high_cpu("high-cpu-all", 0)

    def groupby_orderby_limit(self):
        _s, e = self.window(3600, "groupby-orderby-limit")
        pg = ("SELECT time_bucket('60 seconds', time) AS minute, max(usage_user)" + NL8
              + "FROM cpu" + NL8
              + f"WHERE time < '{go_time(e)}'" + NL8
              + "GROUP BY minute" + NL8
              + "ORDER BY minute DESC" + NL8
              + "LIMIT 5")
        ch = (f"SELECT toStartOfMinute(time) AS minute, max(usage_user) FROM cpu WHERE time < '{go_time(e, False)}' "
              "GROUP BY minute ORDER BY minute DESC LIMIT 5")
        return Query("groupby-orderby-limit", pg, ch)

    def lastpoint(self):
        pg = ("SELECT DISTINCT ON (t.hostname) * FROM tags t INNER JOIN LATERAL(SELECT * FROM cpu c "
              "WHERE c.tags_id = t.id ORDER BY time DESC LIMIT 1) AS b ON true ORDER BY t.hostname, b.time DESC")
        ch = ("SELECT * FROM (SELECT * FROM cpu WHERE (tags_id, time) IN (SELECT tags_id, max(time) FROM cpu "
              "GROUP BY tags_id)) AS c INNER JOIN tags AS t ON c.tags_id = t.id ORDER BY t.hostname ASC, c.time DESC")
        return Query("lastpoint", pg, ch)


def make_query_sets(hosts, hours, seed, nsets):
    gen = QueryGen(hosts, hours, seed)
    sets = [[gen.make(t) for t in TYPES] for _ in range(nsets)]
    return sets, gen.capped


# --------------------------------------------------------------------------
# result digests

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def norm_value(v):
    if v is None:
        return "NULL"
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=datetime.timezone.utc)
        d = v - EPOCH
        return f"t{(d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds}"
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float, decimal.Decimal)):
        return float(f"{float(v):.6g}") + 0.0  # + 0.0: -0.0 -> 0.0
    return str(v)


def normalize(qtype, cols, rows):
    if qtype in PROJECT:
        names = [str(c).split(".")[-1].lower() for c in cols]
        idx = [names.index(k) for k in PROJECT[qtype]]
        rows = [tuple(r[i] for i in idx) for r in rows]
    norm = [tuple(norm_value(v) for v in r) for r in rows]
    if qtype in UNORDERED:
        norm.sort(key=repr)
    return norm


def digest(norm):
    return hashlib.sha1(repr(norm).encode()).hexdigest()[:12]


# --------------------------------------------------------------------------
# loading helpers

def chunk_offsets(path, batch):
    """Line-aligned byte chunks of `batch` lines: [(offset, length, rows)]."""
    import numpy as np
    bounds = [0]
    lines = pos = 0
    with open(path, "rb") as f:
        while True:
            buf = f.read(64 << 20)
            if not buf:
                break
            nl = np.flatnonzero(np.frombuffer(buf, np.uint8) == 10)
            first = batch - 1 - lines % batch
            bounds.extend((nl[first::batch] + pos + 1).tolist())
            lines += len(nl)
            pos += len(buf)
    if bounds[-1] != pos:
        bounds.append(pos)
    chunks = []
    for i in range(len(bounds) - 1):
        chunks.append((bounds[i], bounds[i + 1] - bounds[i], min(batch, lines - i * batch)))
    return chunks, lines


class Progress:
    """A text progress bar printed every few seconds (not written to the results file)."""

    def __init__(self, label, total, every=3.0):
        self.label, self.total, self.every = label, total, every
        self.done = 0
        self.lock = threading.Lock()
        self.stop_evt = threading.Event()
        self.t0 = time.perf_counter()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def add(self, n):
        with self.lock:
            self.done += n

    def _loop(self):
        while not self.stop_evt.wait(self.every):
            self.print_line()

    def print_line(self):
        el = max(time.perf_counter() - self.t0, 1e-9)
        n = self.done
        w = 30
        k = int(w * n / max(self.total, 1))
        print(f"[{self.label}]   [{'#' * k}{'-' * (w - k)}] {n:,}/{self.total:,} rows "
              f"({100 * n / max(self.total, 1):.0f}%), {n / el:,.0f} rows/s, {el:.0f} s", flush=True)

    def stop(self):
        self.stop_evt.set()
        self.thread.join()


def copy_load(label, dsn, csv_path, chunks, total_rows, workers):
    """TSBS-style parallel COPY: worker k sends chunks k, k+W, ... Returns seconds from the
    first COPY until SELECT count(*) FROM cpu returns every row."""
    conns = [spine.connect(dsn) for _ in range(workers)]
    errors = []
    failed = threading.Event()
    start = threading.Barrier(workers + 1)
    prog = None

    def worker(k):
        conn = conns[k]
        try:
            start.wait()
            with open(csv_path, "rb") as f:
                for off, length, nrows in chunks[k::workers]:
                    if failed.is_set():
                        return
                    data = os.pread(f.fileno(), length, off)
                    with conn.cursor() as cur:
                        with cur.copy(COPY_SQL) as cp:
                            cp.write(data)
                    prog.add(nrows)
        except Exception as e:
            errors.append(e)
            failed.set()

    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(workers)]
    for t in threads:
        t.start()
    try:
        prog = Progress(label, total_rows)
        t0 = time.perf_counter()
        prog.t0 = t0
        start.wait()
        for t in threads:
            t.join()
        copy_s = time.perf_counter() - t0
        prog.stop()
        prog.print_line()
        if errors:
            raise RuntimeError(f"COPY failed: {short_error(errors[0])}")
        deadline = time.time() + 600
        with spine.connect(dsn) as conn:
            while True:
                n = conn.execute("SELECT count(*) FROM cpu").fetchone()[0]
                if n >= total_rows or time.time() > deadline:
                    break
                time.sleep(0.01)
        total_s = time.perf_counter() - t0
        if n != total_rows:
            raise RuntimeError(f"SELECT count(*) FROM cpu = {n:,}, expected {total_rows:,}")
        return total_s, copy_s
    finally:
        if prog is not None:
            prog.stop()
        for c in conns:
            try:
                c.close()
            except Exception:
                pass


def insert_tags_tsbs(conn, tags, batch):
    """TSBS's loader inserts each batch's new tag sets; with time-major data every host is new in the
    first ceil(hosts / batch) batches: hosts in groups of `batch`. Checks the ids it gets back."""
    ids = {}
    cols = ",".join(TAG_COLS)
    for i in range(0, len(tags), batch):
        part = tags[i:i + batch]
        cur = conn.execute(f"INSERT INTO tags({cols}) VALUES {tags_values(part)} ON CONFLICT DO NOTHING RETURNING *")
        names = [d.name for d in cur.description]
        for row in cur.fetchall():
            ids[row[names.index("hostname")]] = row[names.index("id")]
    bad = [h for i, (h, *_r) in enumerate(tags) if ids.get(h) != i + 1]
    if bad:
        return f"WARNING: tags ids differ from host_i -> i+1 for {len(bad)} hosts (first {bad[0]} -> {ids.get(bad[0])})"
    return None


# --------------------------------------------------------------------------
# systems

class SysResult:
    def __init__(self, name):
        self.name = name
        self.error = None            # load error (the system measured nothing)
        self.ingest_s = None
        self.ingest_note = ""
        self.extra = []              # lines for the details section
        self.lat = {t: [] for t in TYPES}   # ms
        self.qerror = {}             # type -> error text
        self.partial = {}            # type -> note (cut short by --slow-cutoff)
        self.norm = {}               # type -> normalized rows of set 1
        self.sql = {}                # type -> the SQL text of set 1 as sent to this system
        self.w2q = None


class PgWire:
    """Brewric or PostgreSQL through psycopg; queries over the extended protocol."""

    def __init__(self, name, dsn, protocol, timeout_s):
        self.name, self.dsn, self.protocol, self.timeout_s = name, dsn, protocol, timeout_s
        self.conn = spine.connect(dsn)
        if protocol == "prepare":
            self.conn.prepared_max = 100_000  # no DEALLOCATE in the middle of the run

    def sql_for(self, q):
        return q.pg

    def run(self, sql):
        timer = threading.Timer(self.timeout_s, self._cancel)
        timer.start()
        try:
            if self.protocol == "binary":
                cur = self.conn.cursor(binary=True)
                cur.execute(sql)
            else:
                cur = self.conn.execute(sql, prepare=True)
            rows = cur.fetchall()
            return [d.name for d in cur.description], rows
        finally:
            timer.cancel()

    def _cancel(self):
        try:
            self.conn.cancel_safe(timeout=5)
        except Exception:
            pass

    def close(self):
        try:
            self.conn.close()
        except Exception:
            pass


class DuckDB:
    def __init__(self, conn, adapt):
        self.name, self.conn, self.adapt = "duckdb", conn, adapt

    def sql_for(self, q):
        return q.pg.replace(" +0000'", "+0000'") if self.adapt else q.pg

    def run(self, sql):
        cur = self.conn.execute(sql)
        cols = [d[0] for d in cur.description]
        return cols, cur.fetchall()

    def close(self):
        self.conn.close()


class ChDB:
    def __init__(self, conn):
        self.name, self.conn = "chdb", conn

    def sql_for(self, q):
        return q.ch

    def run(self, sql):
        # The whole result as JSONCompact, parsed by json.loads: rows of Python values (times as
        # strings). chDB's DB-API cursor parses row by row in Python, ~10x slower on large results.
        res = json.loads(self.conn.query(sql, "JSONCompact").bytes())
        self.meta = res["meta"]
        return [m["name"] for m in self.meta], res["data"]

    def convert(self, cols, rows):
        """Times (DateTime strings in UTC) to datetimes, for the digest only."""
        idx = [i for i, m in enumerate(self.meta) if "DateTime" in m["type"]]
        if not idx:
            return rows
        rows = [list(r) for r in rows]
        for r in rows:
            for i in idx:
                if r[i] is not None:
                    r[i] = datetime.datetime.fromisoformat(r[i]).replace(tzinfo=datetime.timezone.utc)
        return rows

    def close(self):
        self.conn.close()


def tsbs_ddl(conn, with_timescale):
    stmts = TSBS_TAGS_DDL + [TSBS_CREATE] + TSBS_INDEXES + (TIMESCALE_DDL if with_timescale else [PG_TIME_BUCKET])
    for s in stmts:
        try:
            conn.execute(s)
        except Exception as e:
            raise RuntimeError(f"{s}: {short_error(e)}") from e


def ddl_tags_and_copy(name, dsn, timescale, args, ctx):
    """The loader's DDL, the tags, then the cpu rows by COPY: (ingest s, COPYs done s)."""
    with spine.connect(dsn) as conn:
        tsbs_ddl(conn, timescale)
        warn = insert_tags_tsbs(conn, ctx["tags"], args.batch_size)
        if warn:
            out(f"[{name}]   {warn}")
    out(f"[{name}] COPY cpu FROM STDIN (csv), {args.workers} workers x batches of {args.batch_size:,} rows ...")
    return copy_load(name, dsn, ctx["csv"], ctx["chunks"], ctx["rows"], args.workers)


def load_brewric(args, ctx, res):
    b = spine.Brewric(args.brewricd, args.shards, args.keep)
    ctx["brewric_server"] = b
    out(f"[brewric] brewricd --shards {args.shards} on {b.host}:{b.port} (data {b.dir})")
    res.ingest_s, copy_s = ddl_tags_and_copy("brewric", b.dsn, True, args, ctx)
    out(f"[brewric]   {ctx['rows']:,} rows in {fmt_s(res.ingest_s)} = {ctx['rows'] / res.ingest_s:,.0f} rows/s "
        f"(COPYs done after {copy_s:.2f} s)")
    # Like PostgreSQL's VACUUM ANALYZE after its load: the rows are queryable
    # (and durable in the WAL) already; CHECKPOINT writes them into segments so
    # that the queries measure the state a loaded table settles in, not
    # whatever part of the background flush the query phase happens to overlap.
    with spine.connect(b.dsn) as conn:
        t0 = time.perf_counter()
        conn.execute("CHECKPOINT")
        ck = time.perf_counter() - t0
    res.ingest_note = (f"{args.workers} x COPY FROM STDIN csv, {args.batch_size:,}-row batches, TSBS indexes; "
                       f"then CHECKPOINT {ck:.1f} s (not in the rate)")
    out(f"[brewric] CHECKPOINT (memtables into segments): {fmt_s(ck)}")
    return PgWire("brewric", b.dsn, args.protocol, args.query_timeout)


def load_postgres(args, ctx, res):
    pg = spine.Postgres(args.keep)
    ctx["postgres_server"] = pg
    ctx["postgres_version"] = pg.version
    out(f"[postgres] {pg.version} on {pg.host}:{pg.port}")
    res.ingest_s, copy_s = ddl_tags_and_copy("postgres", pg.dsn, False, args, ctx)
    out(f"[postgres]   {ctx['rows']:,} rows in {fmt_s(res.ingest_s)} = {ctx['rows'] / res.ingest_s:,.0f} rows/s")
    with spine.connect(pg.dsn) as conn:
        t0 = time.perf_counter()
        conn.execute("VACUUM ANALYZE")
        va = time.perf_counter() - t0
        ctx["postgres_settings"] = ", ".join(
            f"{k}={conn.execute(f'SHOW {k}').fetchone()[0]}"
            for k in ("shared_buffers", "max_parallel_workers_per_gather", "jit", "TimeZone"))
    res.ingest_note = (f"{args.workers} x COPY FROM STDIN csv, {args.batch_size:,}-row batches, TSBS indexes; "
                       f"then VACUUM ANALYZE {va:.1f} s (not in the rate)")
    out(f"[postgres] VACUUM ANALYZE: {fmt_s(va)}")
    return PgWire("postgres", pg.dsn, args.protocol, args.query_timeout)


def load_duckdb(args, ctx, res):
    import duckdb
    ctx["duckdb_version"] = duckdb.__version__
    path = os.path.join(ctx["work"], "tsbs.duckdb")
    for p in (path, path + ".wal"):
        if os.path.exists(p):
            os.remove(p)
    conn = duckdb.connect(path)
    conn.execute("SET TimeZone = 'UTC'")
    try:
        conn.execute("SELECT TIMESTAMPTZ '2016-01-01 05:17:33.123456 +0000'").fetchall()
        adapt = False
        ctx["duckdb_literals"] = "TSBS's literals ('2016-01-01 05:17:33.123456 +0000') parse as they are"
    except Exception as e:
        adapt = True
        ctx["duckdb_literals"] = (f"TSBS's literal '2016-01-01 05:17:33.123456 +0000' does not parse in DuckDB "
                                  f"({short_error(e).splitlines()[0][:90]}): literals sent as "
                                  "'2016-01-01 05:17:33.123456+0000' (the space removed); the SQL is otherwise as is")
    out(f"[duckdb] {ctx['duckdb_literals']}")
    conn.execute("CREATE TABLE tags(id INTEGER PRIMARY KEY, " + ", ".join(f"{c} TEXT" for c in TAG_COLS) + ")")
    conn.execute("INSERT INTO tags VALUES " + ",".join(
        f"({i + 1}," + ",".join(f"'{v}'" for v in r) + ")" for i, r in enumerate(ctx["tags"])))
    conn.execute("CREATE TABLE cpu (time TIMESTAMPTZ, tags_id INTEGER, "
                 + ", ".join(f"{f} DOUBLE" for f in FIELDS) + ", additional_tags JSON DEFAULT NULL)")
    out("[duckdb] COPY cpu FROM '<csv>' ...")
    t0 = time.perf_counter()
    conn.execute(f"COPY cpu({','.join(COLUMNS)}) FROM '{ctx['csv']}' (FORMAT csv, HEADER false)")
    n = conn.execute("SELECT count(*) FROM cpu").fetchone()[0]
    res.ingest_s = time.perf_counter() - t0
    if n != ctx["rows"]:
        raise RuntimeError(f"SELECT count(*) FROM cpu = {n:,}, expected {ctx['rows']:,}")
    res.ingest_note = "in-process COPY FROM '<csv>', no indexes"
    ctx["duckdb_settings"] = "threads=%s, memory_limit=%s" % conn.execute(
        "SELECT current_setting('threads'), current_setting('memory_limit')").fetchone()
    out(f"[duckdb]   {n:,} rows in {fmt_s(res.ingest_s)} = {n / res.ingest_s:,.0f} rows/s")
    return DuckDB(conn, adapt)


def load_chdb(args, ctx, res):
    import chdb
    path = os.path.join(ctx["work"], "chdb")
    shutil.rmtree(path, ignore_errors=True)
    conn = chdb.connect(path)
    ctx["chdb_version"] = f"chdb {chdb.__version__}, ClickHouse " + \
        conn.query("SELECT version()", "CSV").bytes().decode().strip().strip('"')
    conn.query("CREATE TABLE tags (id Int32, " + ", ".join(f"{c} String" for c in TAG_COLS)
               + ") ENGINE = MergeTree ORDER BY id")
    conn.query("INSERT INTO tags VALUES " + ",".join(
        f"({i + 1}," + ",".join(f"'{v}'" for v in r) + ")" for i, r in enumerate(ctx["tags"])))
    conn.query("CREATE TABLE cpu (time DateTime64(6, 'UTC'), tags_id Int32, "
               + ", ".join(f"{f} Float64" for f in FIELDS)
               + ", additional_tags Nullable(String) DEFAULT NULL) ENGINE = MergeTree ORDER BY (tags_id, time)")
    structure = "time DateTime64(6, ''UTC''), tags_id Int32, " + ", ".join(f"{f} Float64" for f in FIELDS)
    out("[chdb] INSERT INTO cpu SELECT FROM file('<csv>', CSV) ...")
    t0 = time.perf_counter()
    conn.query(f"INSERT INTO cpu ({','.join(COLUMNS)}) SELECT * FROM file('{ctx['csv']}', 'CSV', '{structure}') "
               "SETTINGS date_time_input_format = 'best_effort'")
    n = int(conn.query("SELECT count() FROM cpu", "CSV").bytes().decode().strip())
    res.ingest_s = time.perf_counter() - t0
    if n != ctx["rows"]:
        raise RuntimeError(f"SELECT count() FROM cpu = {n:,}, expected {ctx['rows']:,}")
    parts = conn.query("SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = 'cpu' "
                       "AND active", "CSV").bytes().decode().strip()
    res.ingest_note = f"in-process INSERT SELECT FROM file('<csv>'), MergeTree ORDER BY (tags_id, time), {parts} parts"
    out(f"[chdb]   {n:,} rows in {fmt_s(res.ingest_s)} = {n / res.ingest_s:,.0f} rows/s")
    return ChDB(conn)


LOADERS = {"brewric": load_brewric, "postgres": load_postgres, "duckdb": load_duckdb, "chdb": load_chdb}


# --------------------------------------------------------------------------
# query runs

def run_queries(args, db, qsets, res):
    warm = args.warmup_sets
    for qtype_i, qtype in enumerate(TYPES):
        t_type = time.perf_counter()
        for si, qset in enumerate(qsets):
            q = qset[qtype_i]
            sql = db.sql_for(q)
            measured = si >= warm
            reps = args.reps if measured else 1
            stop = False
            for rep in range(reps):
                t0 = time.perf_counter()
                try:
                    cols, rows = db.run(sql)
                except Exception as e:
                    res.qerror[qtype] = short_error(e)
                    res.sql[qtype] = sql
                    stop = True
                    break
                ms = (time.perf_counter() - t0) * 1000
                if measured:
                    res.lat[qtype].append(ms)
                    if si == warm and rep == 0:
                        res.sql[qtype] = sql
                        try:
                            if hasattr(db, "convert"):
                                rows = db.convert(cols, rows)
                            res.norm[qtype] = normalize(qtype, cols, rows)
                        except Exception as e:
                            res.norm[qtype] = None
                            res.extra.append(f"{qtype}: cannot normalize the result ({short_error(e)}); "
                                             f"columns {cols}")
                if ms > args.slow_cutoff * 1000:
                    res.partial[qtype] = (f"one execution took {ms / 1000:.1f} s > --slow-cutoff "
                                          f"{args.slow_cutoff:g} s: stopped after {len(res.lat[qtype])} measured")
                    stop = True
                    break
            if stop:
                break
        dt = time.perf_counter() - t_type
        if qtype in res.qerror:
            out(f"[{res.name}]   {qtype}: ERROR {res.qerror[qtype]}")
        elif res.lat[qtype]:
            print(f"[{res.name}]   {qtype:22} p50 {statistics.median(res.lat[qtype]):10.2f} ms "
                  f"({len(res.lat[qtype])} runs, {dt:.1f} s)"
                  + (" (cut short)" if qtype in res.partial else ""), flush=True)
        else:
            print(f"[{res.name}]   {qtype:22} no measurement ({res.partial.get(qtype, '')})", flush=True)


def p50(res, qtype):
    if res is None or res.error or qtype in res.qerror or not res.lat[qtype]:
        return None
    return statistics.median(res.lat[qtype])


# --------------------------------------------------------------------------
# write-to-queryable (Brewric)

def measure_markers(mc, first, count, interval, end, state=None, label=""):
    """Marker rows tags_id first..first+count-1, one every `interval` s: INSERT, then SELECT until seen.
    Returns per-marker (total, insert, select) ms, SELECTs per marker and the timeouts (> 10 s)."""
    cols = ",".join(COLUMNS)
    vals = ",".join(["1"] * len(FIELDS))
    lat, ins_ms, sel_ms, polls, timeouts = [], [], [], [], 0
    next_t = time.perf_counter()
    for n in range(first, first + count):
        if state is not None and state["error"]:
            break
        tid = 1_000_000 + n
        ts = (end + datetime.timedelta(days=30, milliseconds=n)).strftime("%Y-%m-%d %H:%M:%S.%f+00")
        ins = f"INSERT INTO cpu({cols}) VALUES ('{ts}', {tid}, {vals})"
        sel = f"SELECT 1 FROM cpu WHERE tags_id = {tid}"
        t0 = time.perf_counter()
        mc.execute(ins)
        t_ins = time.perf_counter()
        k = 0
        while True:
            k += 1
            if mc.execute(sel).fetchone() is not None:
                t1 = time.perf_counter()
                lat.append((t1 - t0) * 1000)
                ins_ms.append((t_ins - t0) * 1000)
                sel_ms.append((t1 - t_ins) * 1000)
                polls.append(k)
                break
            if time.perf_counter() - t0 > 10:  # counted in the percentiles with the time waited
                timeouts += 1
                t1 = time.perf_counter()
                lat.append((t1 - t0) * 1000)
                ins_ms.append((t_ins - t0) * 1000)
                sel_ms.append((t1 - t_ins) * 1000)
                polls.append(k)
                break
        if label and (n - first + 1) % 50 == 0 and lat:
            print(f"[brewric]   {n - first + 1}/{count} markers, p50 so far {statistics.median(lat):.2f} ms"
                  + (f", background {state['rows']:,} rows" if state else ""), flush=True)
        next_t += interval
        delay = next_t - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
    return lat, ins_ms, sel_ms, polls, timeouts


def marker_stats(lat, ins_ms, sel_ms, polls, timeouts):
    import numpy as np
    r = {"markers": len(lat), "timeouts": timeouts, "polls_mean": statistics.mean(polls) if polls else 0}
    if lat:
        for key, xs in (("", lat), ("ins_", ins_ms), ("sel_", sel_ms)):
            r[key + "p50"] = float(np.percentile(xs, 50))
            r[key + "p99"] = float(np.percentile(xs, 99))
        r["max"] = max(lat)
    return r


def background_copy(dsn, hosts, end, rate, counters, stop):
    """The write-to-queryable background load, run in its own process (a second client, as in
    production; in a thread it would hold the marker thread behind Python's GIL while it builds
    its batches): COPY batches of rate/10 rows, paced to `rate` rows/s. counters: shared
    [rows, t0, t1, failed]."""
    try:
        suffix = [f",{h + 1}," + ",".join(str((h * 7 + k * 13) % 101) for k in range(len(FIELDS))) + "\n"
                  for h in range(hosts)]
        batch = max(1, rate // 10)
        with spine.connect(dsn) as conn:
            r = 0
            counters[1] = t0 = time.perf_counter()
            next_t = t0
            while not stop.is_set():
                parts, stamp_epoch, stamp = [], -1, ""
                for i in range(r, r + batch):
                    e, h = divmod(i, hosts)
                    if e != stamp_epoch:  # one timestamp per epoch of `hosts` rows
                        stamp_epoch = e
                        stamp = (end + datetime.timedelta(seconds=e * INTERVAL_S)).strftime("%Y-%m-%d %H:%M:%S+00")
                    parts.append(stamp + suffix[h])
                with conn.cursor() as cur:
                    with cur.copy(COPY_SQL) as cp:
                        cp.write("".join(parts).encode())
                r += batch
                counters[0] = r
                next_t += batch / rate
                delay = next_t - time.perf_counter()
                if delay > 0:
                    stop.wait(delay)
            counters[2] = time.perf_counter()
    except Exception as e:
        print(f"[brewric] background COPY failed: {short_error(e)}", file=sys.stderr, flush=True)
        counters[3] = 1
        counters[2] = time.perf_counter()


def write_to_queryable(args, ctx, dsn):
    import multiprocessing
    hosts, end = ctx["hosts"], START + datetime.timedelta(hours=ctx["hours"])
    rate = max(1, args.bg_rate)
    interval = args.marker_interval_ms / 1000
    idle_n = min(50, args.markers)

    # baseline: a few markers with no background load
    with spine.connect(dsn) as mc:
        idle = marker_stats(*measure_markers(mc, 0, idle_n, interval, end))

    out(f"[brewric] write-to-queryable: {args.markers} markers every {args.marker_interval_ms:g} ms, "
        f"background COPY at ~{rate:,} rows/s from a second process ({idle_n} markers first without it) ...")
    mp = multiprocessing.get_context("fork")
    counters = mp.Array("d", 4)  # rows, t0, t1, failed
    stop = mp.Event()
    bg = mp.Process(target=background_copy, args=(dsn, hosts, end, rate, counters, stop), daemon=True)
    bg.start()
    time.sleep(1.0)  # let the background load settle
    state = {"rows": 0, "error": None}

    class Live(dict):  # measure_markers reads the background's progress and failure as it goes
        def __getitem__(self, k):
            if k == "rows":
                return int(counters[0])
            if k == "error":
                return "background COPY failed" if counters[3] else None
            return dict.__getitem__(self, k)
    state = Live(state)
    try:
        with spine.connect(dsn) as mc:
            r = marker_stats(*measure_markers(mc, idle_n, args.markers, interval, end, state, "markers"))
    finally:
        stop.set()
        bg.join(timeout=60)
    t0, t1 = counters[1], counters[2] or time.perf_counter()
    el = t1 - t0 if t0 else 0
    rows = int(counters[0])
    r.update({"bg_rows": rows, "bg_rate": rows / el if el > 0 else 0,
              "bg_error": "background COPY failed (see stderr)" if counters[3] else None, "idle": idle})
    return r


# --------------------------------------------------------------------------
# report

def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt_ms(x):
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 100 else f"{x:,.0f}"


def report(args, ctx, results, env, capped, total_s):
    names = [r.name for r in results]
    by = {r.name: r for r in results}
    rows = ctx["rows"]
    out()
    out(f"TSBS DevOps cpu-only: {args.hosts:,} hosts x {args.hours} h = {rows:,} rows; queries: "
        f"{args.warmup_sets} warm-up sets, then {args.sets} sets x {args.reps} reps (p50 of "
        f"{args.sets * args.reps} executions per type); latency = execute + fetch all rows")
    if capped:
        out("Windows longer than the data, run over the whole data span instead: " + ", ".join(
            t for t in TYPES if t in capped))
    out()
    out("Query latency p50 (ms)")
    hdr = f"{'query type':24}" + "".join(f"{n:>14}" for n in names)
    if "brewric" in by:
        hdr += f"{'brewric/best':>14}"
    hdr += f"  {'fastest':10}{'same result':>12}"
    out(hdr)
    out("-" * len(hdr))
    for t in TYPES:
        vals = {n: p50(by[n], t) for n in names}
        line = f"{t:24}"
        for n in names:
            v = vals[n]
            if v is None:
                r = by[n]
                line += f"{('ERROR' if (r.error or t in r.qerror) else '-'):>14}"
            else:
                line += f"{fmt_ms(v) + ('*' if t in by[n].partial else ''):>14}"
        if "brewric" in by:
            others = [vals[n] for n in names if n != "brewric" and vals[n] is not None]
            if vals["brewric"] is not None and others:
                line += f"{vals['brewric'] / min(others):>13.2f}x"
            else:
                line += f"{'-':>14}"
        ok = {n: v for n, v in vals.items() if v is not None}
        line += f"  {(min(ok, key=ok.get) if ok else '-'):10}"
        line += f"{ctx['same'].get(t, '-'):>12}"
        out(line)
    out("-" * len(hdr))
    gm = {}
    line = f"{'geometric mean':24}"
    for n in names:
        vs = [p50(by[n], t) for t in TYPES]
        got = [v for v in vs if v is not None]
        gm[n] = geomean(got)
        note = "" if len(got) == len(TYPES) else f" ({len(got)}/10)"
        line += f"{(fmt_ms(gm[n]) + note) if gm[n] else '-':>14}"
    out(line)
    out("* = cut short by --slow-cutoff (fewer executions); ERROR: see below; brewric/best: Brewric's p50 divided")
    out("by the best other system's (below 1 = Brewric fastest); same result: set 1's digest equal on every system.")

    out()
    out(f"Target: Brewric's geometric mean <= {TARGET_GEOMEAN_RATIO} x the best of DuckDB and chDB")
    if "brewric" in by and gm.get("brewric"):
        best = None
        for o in OTHERS:
            if o not in by:
                continue
            common = [t for t in TYPES if p50(by["brewric"], t) is not None and p50(by[o], t) is not None]
            if not common:
                continue
            gb = geomean([p50(by["brewric"], t) for t in common])
            go = geomean([p50(by[o], t) for t in common])
            ratio = gb / go
            out(f"  brewric / {o}: {ratio:.3f} (geometric means over {len(common)} common types: "
                f"{fmt_ms(gb)} ms vs {fmt_ms(go)} ms)")
            if best is None or ratio > best[1]:
                best = (o, ratio)
        if best:
            out(f"  vs the best of DuckDB/chDB ({best[0]}): {best[1]:.3f} -> "
                f"{'MET' if best[1] <= TARGET_GEOMEAN_RATIO else 'NOT MET'}")
        else:
            out("  no DuckDB or chDB result to compare with")
    else:
        out("  Brewric not measured")

    out()
    out("Correctness (set 1 of each type; digest of the rows vs PostgreSQL's)")
    for ln in ctx["correct_lines"]:
        out("  " + ln)

    out()
    out("Ingest")
    for r in results:
        if r.ingest_s:
            out(f"  {r.name:9} {rows / r.ingest_s:>14,.0f} rows/s  ({rows:,} rows in {r.ingest_s:.2f} s; "
                f"{r.ingest_note})")
        else:
            out(f"  {r.name:9} {'-':>14}  ({r.error or 'not loaded'})")
    if "brewric" in by:
        b = by["brewric"]
        full = args.hosts >= 1000 and args.hours >= 48
        if b.ingest_s:
            rate = rows / b.ingest_s
            out(f"  target Brewric >= {TARGET_INGEST:,} rows/s (full scale, 2 shards): {rate:,.0f} rows/s -> "
                + ("MET" if rate >= TARGET_INGEST else "NOT MET")
                + ("" if full else " (not full scale: indicative only)"))

    out()
    out("Write-to-queryable (Brewric)")
    w = by["brewric"].w2q if "brewric" in by else None
    if w is None:
        out("  not measured" + (" (--no-latency)" if args.no_latency else ""))
    elif "error" in w:
        out(f"  ERROR {w['error']}")
    else:
        if w.get("p50") is not None:
            out(f"  {w['markers']} markers: p50 {w['p50']:.2f} ms, p99 {w['p99']:.2f} ms, max {w['max']:.2f} ms "
                f"(mean {w['polls_mean']:.2f} SELECTs per marker); markers never seen within 10 s: "
                f"{w['timeouts']} (counted as 10 s)")
            out(f"  of which the INSERT: p50 {w['ins_p50']:.2f} ms, p99 {w['ins_p99']:.2f} ms; the SELECT(s) "
                f"until the row is seen: p50 {w['sel_p50']:.2f} ms, p99 {w['sel_p99']:.2f} ms")
            i = w["idle"]
            if i.get("p50") is not None:
                out(f"  without the background load ({i['markers']} markers): p50 {i['p50']:.2f} ms, "
                    f"p99 {i['p99']:.2f} ms (INSERT p50 {i['ins_p50']:.2f} ms, SELECT p50 {i['sel_p50']:.2f} ms)")
            out(f"  target p99 <= {TARGET_W2Q_P99_MS:g} ms -> {'MET' if w['p99'] <= TARGET_W2Q_P99_MS else 'NOT MET'}")
        else:
            out(f"  no marker measured (timeouts {w['timeouts']})")
        out(f"  background COPY: {w['bg_rows']:,} rows at {w['bg_rate']:,.0f} rows/s achieved (asked "
            f"{args.bg_rate:,})" + (f"; background ERROR {w['bg_error']}" if w["bg_error"] else ""))

    errs = [(r.name, t, r.qerror[t], r.sql.get(t)) for r in results for t in TYPES if t in r.qerror]
    load_errs = [r for r in results if r.error]
    if errs or load_errs or any(r.partial for r in results):
        out()
        out("Errors")
        for r in load_errs:
            out(f"  {r.name}: load/setup failed: {r.error}")
        for n, t, e, sql in errs:
            out(f"  {n} {t}: {e}")
            if sql:
                out("    SQL: " + " ".join(sql.split()))
        for r in results:
            for t, note in r.partial.items():
                out(f"  {r.name} {t}: {note}")
    details = [(r.name, d) for r in results for d in r.extra]
    if details:
        out()
        out("Details")
        for n, d in details:
            out(f"  {n}: {d}")

    out()
    out(f"Environment (run took {fmt_s(total_s)})")
    for k, v in env.items():
        out(f"  {k:9} {v}")
    if "brewric" in by:
        b = args.brewricd
        if os.path.exists(b):
            mtime = datetime.datetime.fromtimestamp(os.path.getmtime(b)).strftime("%Y-%m-%d %H:%M")
            release = os.sep + "release" + os.sep in b
            out(f"  {'brewricd':9} {b} ({'release' if release else 'NOT a release build'}, built {mtime}), "
                f"--shards {args.shards}" + (f"; {ctx['brewric_end']}" if ctx.get("brewric_end") else ""))
    if "postgres_version" in ctx:
        out(f"  {'postgres':9} {ctx['postgres_version']}; {ctx.get('postgres_settings', '')}")
    if "duckdb_version" in ctx:
        out(f"  {'duckdb':9} {ctx['duckdb_version']}; {ctx.get('duckdb_settings', '')}")
        out(f"  {'':9} {ctx.get('duckdb_literals', '')}")
    if "chdb_version" in ctx:
        out(f"  {'chdb':9} {ctx['chdb_version']}")
    vers = []
    for m in ("numpy", "psycopg"):
        try:
            vers.append(f"{m} {__import__(m).__version__}")
        except ImportError:
            pass
    out(f"  {'packages':9} " + ", ".join(vers) + f"; protocol for Brewric/PostgreSQL: {args.protocol}")
    out(f"  {'data':9} TSBS cpu-only: {args.hosts:,} hosts x {args.hours} h every {INTERVAL_S} s from "
        f"{START:%Y-%m-%dT%H:%M:%SZ}, seed {args.seed}: {rows:,} rows; CSV {ctx['csv_bytes']:,} bytes")
    out()
    out("Fairness: one CSV and one tags list for all; Brewric and PostgreSQL get TSBS's DDL (both cpu indexes in place")
    out("during the load) and byte-identical query text over the extended protocol; DuckDB the same text (literals")
    out("adapted only if needed, see above), chDB TSBS's ClickHouse dialect (same windows, microseconds kept, plain")
    out("INNER JOIN). Latency includes receiving all rows in Python (psycopg and DuckDB fetchall, chDB JSONCompact")
    out("+ json.loads). Ingest: Brewric and PostgreSQL through the same Python COPY loader; DuckDB and chDB read the")
    out("file in-process (not comparable).")
    out("Systems ran one after the other on one shared machine.")


def correctness(results):
    """Lines for the report and {type: 'yes'/'NO'/'-'}."""
    lines, same = [], {}
    ok_res = [r for r in results if not r.error]
    ref_name = "postgres" if any(r.name == "postgres" for r in ok_res) else (ok_res[0].name if ok_res else None)
    if ref_name is None:
        return ["no system produced results"], same
    if ref_name != "postgres":
        lines.append(f"(PostgreSQL not measured: compared with {ref_name})")
    by = {r.name: r for r in ok_res}
    ref = by[ref_name]
    for t in TYPES:
        exp = ref.norm.get(t)
        if exp is None:
            lines.append(f"{t:24} no reference result ({ref_name}: {ref.qerror.get(t, 'not measured')})")
            same[t] = "-"
            continue
        bad, missing = [], []
        for r in ok_res:
            if r.name == ref_name:
                continue
            got = r.norm.get(t)
            if got is None:
                missing.append(f"{r.name} ({'error' if t in r.qerror else 'no result'})")
            elif digest(got) != digest(exp):
                bad.append((r, got))
        same[t] = "NO" if bad else ("partly" if missing else "yes")
        lines.append(f"{t:24} {'MISMATCH' if bad else 'equal'}: {ref_name} {digest(exp)} ({len(exp)} rows)"
                     + "".join(f", {r.name} {digest(r.norm[t])}" for r in ok_res
                               if r.name != ref_name and r.norm.get(t) is not None)
                     + (f"; not compared: {', '.join(missing)}" if missing else ""))
        for r, got in bad:
            k = next((i for i in range(min(len(got), len(exp))) if got[i] != exp[i]), min(len(got), len(exp)))
            lines.append(f"    {r.name}: {len(got)} rows vs {len(exp)}; first difference at row {k}: "
                         f"got {got[k] if k < len(got) else '(none)'}, expected "
                         f"{exp[k] if k < len(exp) else '(none)'}")
            lines.append("    SQL: " + " ".join(r.sql.get(t, "").split()))
            if r.sql.get(t) != ref.sql.get(t):
                lines.append(f"    {ref_name} SQL: " + " ".join(ref.sql.get(t, "").split()))
            lines.append(f"    expected ({ref_name}, first 5 rows): {exp[:5]}")
    lines.append("Digest: times as UTC epoch microseconds (t...), numbers rounded to 6 significant digits, NULL as")
    lines.append("'NULL'; high-cpu sorted (no ORDER BY); SELECT * projected to (time, tags_id, usage_*) for high-cpu")
    lines.append("and (hostname, time, tags_id, usage_*) for lastpoint.")
    return lines, same


SVG_COLORS = {"brewric": "#d9480f", "postgres": "#336791", "duckdb": "#e0b400", "chdb": "#4c9a2a"}


def write_svg(path, args, results, rows):
    names = [r.name for r in results]
    by = {r.name: r for r in results}
    vals = [p50(by[n], t) for t in TYPES for n in names]
    good = [v for v in vals if v]
    if not good:
        return False
    lo = 10 ** math.floor(math.log10(min(good)))
    hi = 10 ** math.ceil(math.log10(max(good)))
    if hi <= lo:
        hi = lo * 10
    bar_h, gap, label_w, plot_w, top = 12, 14, 180, 620, 70
    group_h = bar_h * len(names) + gap
    height = top + group_h * len(TYPES) + 40
    width = label_w + plot_w + 90

    def x(v):
        return label_w + plot_w * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         f'font-family="sans-serif" font-size="11">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">TSBS DevOps '
         f'cpu-only, p50 latency per query (ms, log scale, lower is better)</text>',
         f'<text x="{width / 2}" y="34" text-anchor="middle" fill="#555">{args.hosts:,} hosts x {args.hours} h = '
         f'{rows:,} rows; {args.sets} sets x {args.reps} reps; {datetime.date.today().isoformat()}</text>']
    lx = label_w
    for n in names:
        s.append(f'<rect x="{lx}" y="44" width="12" height="12" fill="{SVG_COLORS.get(n, "#888")}"/>')
        s.append(f'<text x="{lx + 16}" y="54">{n}</text>')
        lx += 90
    d = lo
    while d <= hi * 1.0001:
        xx = x(d)
        s.append(f'<line x1="{xx:.1f}" y1="{top - 4}" x2="{xx:.1f}" y2="{top + group_h * len(TYPES)}" '
                 'stroke="#ddd"/>')
        s.append(f'<text x="{xx:.1f}" y="{top + group_h * len(TYPES) + 14}" text-anchor="middle" fill="#555">'
                 f'{d:g}</text>')
        d *= 10
    s.append(f'<text x="{label_w + plot_w / 2}" y="{top + group_h * len(TYPES) + 30}" text-anchor="middle" '
             'fill="#555">ms</text>')
    for i, t in enumerate(TYPES):
        y0 = top + i * group_h
        s.append(f'<text x="{label_w - 6}" y="{y0 + bar_h * len(names) / 2 + 4}" text-anchor="end">{t}</text>')
        for j, n in enumerate(names):
            v = p50(by[n], t)
            y = y0 + j * bar_h
            if v is None:
                s.append(f'<text x="{label_w + 4}" y="{y + bar_h - 2}" fill="{SVG_COLORS.get(n, "#888")}">'
                         f'{n}: {"error" if t in by[n].qerror or by[n].error else "n/a"}</text>')
                continue
            w = max(x(v) - label_w, 1)
            s.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" '
                     f'fill="{SVG_COLORS.get(n, "#888")}"><title>{n} {t}: {v:.3f} ms</title></rect>')
            s.append(f'<text x="{label_w + w + 4:.1f}" y="{y + bar_h - 3}" font-size="9" fill="#333">'
                     f'{fmt_ms(v)}</text>')
    s.append('</svg>')
    with open(path, "w") as f:
        f.write("\n".join(s) + "\n")
    return True


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--hours", type=int, default=48)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="100 hosts x 6 hours (216,000 rows)")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--skip", default="")
    default_bin = os.path.join(ROOT, "target", "release", "brewricd")
    ap.add_argument("--brewricd", default=default_bin)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2, help="COPY connections for Brewric and PostgreSQL")
    ap.add_argument("--batch-size", type=int, default=10_000, help="rows per COPY (TSBS: 10000)")
    ap.add_argument("--sets", type=int, default=10)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--warmup-sets", type=int, default=2)
    ap.add_argument("--protocol", choices=("binary", "prepare"), default="binary",
                    help="binary: unnamed extended-protocol statements with binary results (default); "
                         "prepare: named prepared statements, text results")
    ap.add_argument("--slow-cutoff", type=float, default=60.0)
    ap.add_argument("--query-timeout", type=float, default=600.0)
    ap.add_argument("--no-latency", action="store_true", help="skip the write-to-queryable measurement")
    ap.add_argument("--markers", type=int, default=300)
    ap.add_argument("--marker-interval-ms", type=float, default=100.0)
    ap.add_argument("--bg-rate", type=int, default=100_000, help="background COPY rows/s during the markers")
    ap.add_argument("--work-dir", default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.quick:
        args.hosts, args.hours = 100, 6
    if args.hosts < 1 or args.hours < 1 or args.sets < 1 or args.reps < 1 or args.workers < 1 or args.batch_size < 1:
        sys.exit("--hosts, --hours, --sets, --reps, --workers and --batch-size must be at least 1")
    skip = bc.parse_list(args.skip, "--skip", SYSTEMS)
    systems = [s for s in bc.parse_list(args.systems, "--systems", SYSTEMS) if s not in skip]
    if not systems:
        sys.exit("no system left to measure")
    args.brewricd = os.path.abspath(args.brewricd)

    ensure_packages(["numpy"] + [p for s in systems for p in NEEDS[s]])

    if "brewric" in systems and not os.path.exists(args.brewricd):
        if args.brewricd == default_bin:
            print("no target/release/brewricd: cargo build --release ...", flush=True)
            subprocess.check_call(["cargo", "build", "--release"], cwd=ROOT)
        # else: load_brewric fails with the path in its error

    started = time.time()
    env = spine.environment()
    env["load"] = "load average at start %.2f %.2f %.2f (1/5/15 min)" % os.getloadavg()
    out(f"$ python3 tools/bench_tsbs.py {' '.join(sys.argv[1:])}")

    work = args.work_dir or tempfile.mkdtemp(prefix="bench-tsbs-")
    os.makedirs(work, exist_ok=True)
    work = os.path.abspath(work)
    csv_path = os.path.join(work, "cpu.csv")
    ctx = {"work": work, "csv": csv_path, "hosts": args.hosts, "hours": args.hours}
    results = []
    capped = set()
    try:
        expected = args.hours * 3600 // INTERVAL_S * args.hosts
        out(f"[data] generating {args.hosts:,} hosts x {args.hours} h = {expected:,} rows (seed {args.seed}) ...")
        t0 = time.perf_counter()
        rows = generate_csv(csv_path, args.hosts, args.hours, args.seed)[0]
        ctx["chunks"], lines = chunk_offsets(csv_path, args.batch_size)
        if lines != rows:
            sys.exit(f"CSV has {lines} lines, expected {rows}")
        ctx["rows"] = rows
        ctx["csv_bytes"] = os.path.getsize(csv_path)
        ctx["tags"] = make_tags(args.hosts, args.seed)
        out(f"[data]   {rows:,} rows, {ctx['csv_bytes']:,} bytes in {fmt_s(time.perf_counter() - t0)}; "
            f"{len(ctx['chunks'])} COPY batches; tags: {ctx['tags'][0]}")
        nsets = args.warmup_sets + args.sets
        qsets, capped = make_query_sets(args.hosts, args.hours, args.seed, nsets)
        if capped:
            out(f"[data]   windows longer than the {args.hours} h of data (whole span used): "
                + ", ".join(t for t in TYPES if t in capped))

        for name in systems:
            res = SysResult(name)
            results.append(res)
            db = None
            t_sys = time.perf_counter()
            try:
                db = LOADERS[name](args, ctx, res)
            except Exception as e:
                res.error = short_error(e)
                out(f"[{name}] ERROR (load): {res.error}")
                if not isinstance(e, RuntimeError):
                    traceback.print_exc()
            try:
                if db is not None:
                    out(f"[{name}] queries: {args.warmup_sets} warm-up sets, then {args.sets} sets x {args.reps} reps")
                    run_queries(args, db, qsets, res)
                    if name == "brewric" and not args.no_latency:
                        try:
                            res.w2q = write_to_queryable(args, ctx, ctx["brewric_server"].dsn)
                        except Exception as e:
                            res.w2q = {"error": short_error(e)}
                            out(f"[brewric] write-to-queryable ERROR: {res.w2q['error']}")
            except Exception as e:
                res.extra.append(f"driver error: {short_error(e)}")
                traceback.print_exc()
            finally:
                if db is not None:
                    db.close()
                stop_server(name, ctx, res)
            out(f"[{name}] done in {fmt_s(time.perf_counter() - t_sys)}")
    finally:
        for key in ("brewric_server", "postgres_server"):
            if ctx.get(key) is not None:
                try:
                    ctx[key].stop()
                except Exception:
                    pass
        if not args.keep:
            if args.work_dir:
                for p in ("cpu.csv", "tsbs.duckdb", "tsbs.duckdb.wal"):
                    if os.path.exists(os.path.join(work, p)):
                        os.remove(os.path.join(work, p))
                shutil.rmtree(os.path.join(work, "chdb"), ignore_errors=True)
            else:
                shutil.rmtree(work, ignore_errors=True)

    ctx["correct_lines"], ctx["same"] = correctness(results)
    report(args, ctx, results, env, capped, time.time() - started)

    path = args.out or os.path.join(ROOT, "tools", "results", "bench_tsbs-%s%s.txt" % (
        datetime.date.today().isoformat(), "-quick" if args.quick else ""))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(bc.LOG) + "\n")
    svg = os.path.splitext(path)[0] + ".svg"
    print(f"\nwritten to {path}" + (f" and {svg}" if write_svg(svg, args, results, ctx["rows"]) else ""))


def stop_server(name, ctx, res):
    key = {"brewric": "brewric_server", "postgres": "postgres_server"}.get(name)
    srv = ctx.get(key) if key else None
    if srv is None:
        return
    if name == "brewric":
        if srv.proc.poll() is not None:
            res.extra.append(f"brewricd exited with code {srv.proc.returncode} during the run; log {srv.log.name}")
        rss = bc.proc_rss(srv.proc.pid)
        if rss:
            ctx["brewric_end"] = f"resident memory at the end {bc.human(rss)}"
        try:
            srv.log.flush()
            with open(srv.log.name) as f:
                tail = [ln.rstrip() for ln in f if ln.strip()][-5:]
            if any("panic" in ln.lower() or "error" in ln.lower() for ln in tail):
                res.extra.extend("log: " + ln for ln in tail)
        except OSError:
            pass
    try:
        srv.stop()
    except Exception as e:
        out(f"WARNING: stopping {name}: {e}")
    ctx[key] = None


if __name__ == "__main__":
    main()
