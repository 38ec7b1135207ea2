#!/usr/bin/env python3
"""What FOREIGN KEY constraints cost: Brewric vs PostgreSQL 15, in one run.

This is a benchmark DRIVER, not a test. A metrics table whose rows reference a
`hosts` table of 1,000 rows (`host_id int REFERENCES hosts`, the shape of a
TimescaleDB schema with a metadata table) is loaded with COPY, with and
without the constraint, and then one referenced host is deleted (ON DELETE
CASCADE takes its rows):

  1. COPY of --rows rows (default 1,000,000; psycopg's COPY FROM STDIN, text
     format, one connection) into `readings_plain` (no constraint) and
     `readings_fk` (the constraint): rows/s, and the constraint's cost as the
     ratio of the two times;
  2. DELETE FROM hosts WHERE id = … on the constrained table (ON DELETE
     CASCADE: --rows / 1,000 rows go with it): milliseconds.

Each is run --runs times (default 3) on a fresh table; medians are printed,
with Brewric / PostgreSQL ratios (above 1: Brewric faster) and the
environment (git SHA, rustc, CPU, cores, RAM).

Usage (from the repository root):

    python3 tools/bench_foreign_keys.py [--rows 1000000] [--runs 3]
        [--systems brewric,postgres] [--skip-build] [--brewric-bin PATH] [--shards N]

Needs what tools/bench_spine.py needs (it reuses its server and driver
helpers): cargo, PostgreSQL 15's server binaries, psycopg.

Fairness: PostgreSQL has an index on neither table's host_id (a PostgreSQL
user deleting hosts would add one: its DELETE then is an index lookup per
referencing table, where Brewric reads the referencing table whole, see
README "Known gaps"); both keep fsync and synchronous_commit on.
"""

import argparse
import io
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_spine as spine  # noqa: E402

HOSTS = 1000


def rows_text(rows):
    out = io.StringIO()
    for i in range(rows):
        sec = i // 100
        out.write(f"2026-01-01 00:00:{sec % 60:02d}+00\t{i % HOSTS}\t{(i % 997) / 16}\n")
    return out.getvalue()


def setup(conn, table, constrained):
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    ref = " REFERENCES hosts ON DELETE CASCADE" if constrained else ""
    conn.execute(f"CREATE TABLE {table} (time timestamptz NOT NULL, host_id int{ref}, v float8)")


def copy_rows(conn, table, data):
    t0 = time.perf_counter()
    with conn.cursor() as cur:
        with cur.copy(f"COPY {table} FROM STDIN") as copy:
            copy.write(data)
    return time.perf_counter() - t0


def measure(system, rows, runs, data):
    results = {"plain": [], "fk": [], "delete": []}
    with spine.connect(system.dsn) as conn:
        conn.execute("DROP TABLE IF EXISTS readings_plain")
        conn.execute("DROP TABLE IF EXISTS readings_fk")
        conn.execute("DROP TABLE IF EXISTS hosts")
        conn.execute("CREATE TABLE hosts (id int PRIMARY KEY, name text)")
        conn.execute("INSERT INTO hosts SELECT g, 'host' || g FROM generate_series(0, %d) g" % (HOSTS - 1))
        for run in range(runs):
            for kind, table in (("plain", "readings_plain"), ("fk", "readings_fk")):
                setup(conn, table, kind == "fk")
                results[kind].append(copy_rows(conn, table, data))
                (n,) = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
                if n != rows:
                    print(f"WARNING: {system.name}: {table} has {n} rows, expected {rows}")
            victim = run + 1
            t0 = time.perf_counter()
            conn.execute(f"DELETE FROM hosts WHERE id = {victim}")
            results["delete"].append(time.perf_counter() - t0)
            (n,) = conn.execute(f"SELECT count(*) FROM readings_fk WHERE host_id = {victim}").fetchone()
            if n != 0:
                print(f"WARNING: {system.name}: the cascade left {n} rows of host {victim}")
            conn.execute(f"INSERT INTO hosts VALUES ({victim}, 'host{victim}')")
            print(f"  {system.name} run {run + 1}: COPY plain {results['plain'][-1]:.2f} s, "
                  f"with the constraint {results['fk'][-1]:.2f} s, DELETE of a host {results['delete'][-1] * 1000:.0f} ms",
                  flush=True)
        conn.execute("DROP TABLE readings_plain")
        conn.execute("DROP TABLE readings_fk")
        conn.execute("DROP TABLE hosts")
    return {k: statistics.median(v) for k, v in results.items()}


def main():
    spine.ensure_psycopg()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--systems", default="brewric,postgres")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--brewric-bin", default=os.path.join(spine.ROOT, "target", "release", "brewricd"))
    ap.add_argument("--shards", type=int, default=0)
    args = ap.parse_args()
    systems = args.systems.split(",")
    if "brewric" in systems and not args.skip_build:
        subprocess.check_call(["cargo", "build", "--release", "--bin", "brewricd"], cwd=spine.ROOT)
    data = rows_text(args.rows)
    medians = {}
    for name in systems:
        system = spine.Brewric(args.brewric_bin, args.shards, False) if name == "brewric" else spine.Postgres(False)
        try:
            print(f"{name}:", flush=True)
            medians[name] = measure(system, args.rows, args.runs, data)
        finally:
            system.stop()
    print()
    print(f"{args.rows:,} rows by COPY, medians of {args.runs} runs")
    print(f"{'system':<10} {'plain rows/s':>14} {'with FK rows/s':>16} {'FK cost':>9} {'DELETE host ms':>15}")
    for name, m in medians.items():
        print(f"{name:<10} {args.rows / m['plain']:>14,.0f} {args.rows / m['fk']:>16,.0f} "
              f"{m['fk'] / m['plain']:>8.2f}x {m['delete'] * 1000:>15.0f}")
    if "brewric" in medians and "postgres" in medians:
        b, p = medians["brewric"], medians["postgres"]
        print(f"brewric / postgres: COPY with the constraint {p['fk'] / b['fk']:.2f}x, "
              f"DELETE of a host {p['delete'] / b['delete']:.2f}x (above 1: Brewric faster)")
    print()
    for k, v in spine.environment().items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
