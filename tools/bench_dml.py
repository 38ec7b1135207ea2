#!/usr/bin/env python3
"""What DELETE and UPDATE cost on a month of metrics: Brewric vs PostgreSQL 15, in one run.

This is a benchmark DRIVER, not a test. A table of --days days (default 30)
of --hosts hosts (default 20) reporting every 10 seconds (5.18M rows by
default; filled by INSERT … SELECT generate_series on the server, then
CHECKPOINT) takes three statements, each run --runs times (default 3) on a
different hour or host, after a CHECKPOINT (not timed), timed from the client:

  1. DELETE of one hour of every host (7,200 rows: one day is touched);
  2. UPDATE of one host's readings for one hour (360 rows: one day);
  3. DELETE of one host over the whole month (all days are touched: the
     cost of a statement that reaches every partition).

Brewric rewrites the time partitions (days) holding the rows a statement
hits, so 1 and 2 cost one day's rows and 3 the whole table's. PostgreSQL has
an index on time (TimescaleDB makes one on every hypertable), which its
DELETE and UPDATE use for 1 and 2; 3 reads the table whole on both.
Medians are printed with Brewric / PostgreSQL ratios (above 1: Brewric
faster) and the environment (git SHA, rustc, CPU, cores, RAM).

Usage (from the repository root):

    python3 tools/bench_dml.py [--days 30] [--hosts 20] [--runs 3]
        [--systems brewric,postgres] [--skip-build] [--brewric-bin PATH] [--shards N]

Needs what tools/bench_spine.py needs (it reuses its server and driver
helpers): cargo, PostgreSQL 15's server binaries, psycopg. Both systems keep
fsync and synchronous_commit on.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_spine as spine  # noqa: E402

START = "2026-01-01 00:00:00+00"


def fill(conn, days, hosts, postgres):
    conn.execute("DROP TABLE IF EXISTS metrics")
    conn.execute("CREATE TABLE metrics (time timestamptz NOT NULL, host text, usage double precision, note text)")
    if postgres:
        conn.execute("CREATE INDEX ON metrics (time)")
    t0 = time.perf_counter()
    conn.execute(
        "INSERT INTO metrics SELECT t, 'host_' || h, (extract(epoch FROM t)::bigint % 1000) / 10.0 + h, 'ok' "
        f"FROM generate_series(timestamptz '{START}', timestamptz '{START}' + interval '{days} days' - interval '10 seconds', "
        f"interval '10 seconds') AS t, generate_series(0, {hosts - 1}) AS h"
    )
    conn.execute("CHECKPOINT")
    return time.perf_counter() - t0


def timed(conn, sql):
    t0 = time.perf_counter()
    cur = conn.execute(sql)
    return time.perf_counter() - t0, cur.rowcount


def measure(system, days, hosts, runs):
    results = {"delete_hour": [], "update_hour": [], "delete_host": []}
    counts = {}
    with spine.connect(system.dsn) as conn:
        load = fill(conn, days, hosts, isinstance(system, spine.Postgres))
        print(f"  {system.name}: {days * 8640 * hosts:,} rows loaded in {load:.1f} s", flush=True)
        for run in range(runs):
            day = 10 + run
            hour = f"timestamptz '{START}' + interval '{day} days {run + 3} hours'"
            sqls = {
                "delete_hour": f"DELETE FROM metrics WHERE time >= {hour} AND time < {hour} + interval '1 hour'",
                "update_hour": (
                    f"UPDATE metrics SET usage = usage + 1, note = 'fixed' WHERE host = 'host_{run}' "
                    f"AND time >= {hour} + interval '5 hours' AND time < {hour} + interval '6 hours'"
                ),
                "delete_host": f"DELETE FROM metrics WHERE host = 'host_{hosts - 1 - run}'",
            }
            for kind, sql in sqls.items():
                # Each statement starts from flushed tables: not timed, and a
                # flush the previous statement started does not run beside it.
                conn.execute("CHECKPOINT")
                seconds, n = timed(conn, sql)
                results[kind].append(seconds)
                counts[kind] = n
            print(f"  {system.name} run {run + 1}: " + ", ".join(
                f"{k} {v[-1] * 1000:.0f} ms ({counts[k]} rows)" for k, v in results.items()), flush=True)
        (n,) = conn.execute("SELECT count(*) FROM metrics").fetchone()
        (fixed,) = conn.execute("SELECT count(*) FROM metrics WHERE note = 'fixed'").fetchone()
        conn.execute("DROP TABLE metrics")
    return {k: statistics.median(v) for k, v in results.items()}, counts, (n, fixed)


def main():
    spine.ensure_psycopg()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--hosts", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--systems", default="brewric,postgres")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--brewric-bin", default=os.path.join(spine.ROOT, "target", "release", "brewricd"))
    ap.add_argument("--shards", type=int, default=0)
    args = ap.parse_args()
    if args.runs > min(args.hosts, args.days - 10):
        ap.error("--runs must not exceed --hosts or --days - 10 (each run takes its own hour and host)")
    systems = args.systems.split(",")
    if "brewric" in systems and not args.skip_build:
        subprocess.check_call(["cargo", "build", "--release", "--bin", "brewricd"], cwd=spine.ROOT)
    medians, ends = {}, {}
    for name in systems:
        system = spine.Brewric(args.brewric_bin, args.shards, False) if name == "brewric" else spine.Postgres(False)
        try:
            print(f"{name}:", flush=True)
            medians[name], counts, ends[name] = measure(system, args.days, args.hosts, args.runs)
        finally:
            system.stop()
    if len(set(ends.values())) > 1:
        print(f"WARNING: the systems end with different tables (rows, updated rows): {ends}")
    print()
    rows = args.days * 8640 * args.hosts
    print(f"{rows:,} rows ({args.days} days, {args.hosts} hosts, every 10 s), medians of {args.runs} runs, milliseconds")
    labels = {
        "delete_hour": "DELETE one hour (1 day touched)",
        "update_hour": "UPDATE one host's hour (1 day)",
        "delete_host": f"DELETE one host ({args.days} days)",
    }
    print(f"{'statement':<36}" + "".join(f"{n:>12}" for n in medians) + ("   ratio" if len(medians) == 2 else ""))
    for kind, label in labels.items():
        line = f"{label:<36}" + "".join(f"{m[kind] * 1000:>12.0f}" for m in medians.values())
        if "brewric" in medians and "postgres" in medians:
            line += f"   {medians['postgres'][kind] / medians['brewric'][kind]:.2f}x"
        print(line)
    if "brewric" in medians and "postgres" in medians:
        print("ratio: PostgreSQL's time / Brewric's (above 1: Brewric faster)")
    print()
    for k, v in spine.environment().items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
