#!/usr/bin/env python3
"""End-to-end benchmark driver for issue 2 (the spine): Brewric vs PostgreSQL 15.

This is a benchmark DRIVER, not a test. It measures, side by side in one run on
the same machine:

  1. multi-row INSERT throughput: 1,000,000 rows (readings-like: ts timestamptz,
     robot text with 100 robots, battery float8, ok bool) sent as INSERT
     statements of 1,000 rows each, one connection, autocommit -> rows/s;
  2. SELECTs on a 10,000,000-row table, each run 5 times after one warm-up run,
     median reported:
        SELECT count(*) FROM readings10m
        SELECT sum(battery) FROM readings10m
        SELECT robot, count(*), avg(battery) FROM readings10m GROUP BY robot

and prints a table (median ms per system, and the speed ratio pg/brewric: above
1 means Brewric is faster), plus the environment: git SHA, `rustc -V`, CPU
model, core count, RAM. Answers are compared between the systems; a mismatch is
printed as a WARNING.

Usage (from the repository root):

    python3 tools/bench_spine.py                 # full run (builds brewricd --release)
    python3 tools/bench_spine.py --quick         # small sizes, to check the driver works
    python3 tools/bench_spine.py --systems postgres --quick
    python3 tools/bench_spine.py --insert-rows 200000 --select-rows 2000000 --runs 3

Options: --insert-rows N, --batch N (rows per INSERT), --select-rows N,
--load-batch N (rows per INSERT when loading Brewric's big table), --load-conns N,
--runs N, --systems brewric,postgres, --skip-build, --shards N, --keep (leave the
temporary data directories behind), --brewric-bin PATH.

What it needs: cargo (to build brewricd), PostgreSQL 15 server binaries (initdb,
pg_ctl, postgres; `apt-get install -y postgresql` is run when they are missing
and we are root), and the `psycopg` driver (installed with pip into a private
virtualenv under ~/.cache/brewric-bench when it cannot be imported).

Fairness notes (printed with the results):
  * PostgreSQL runs with its defaults except shared_buffers=1GB (so the 10M-row
    table is cached as Brewric's memtable is), listen_addresses=127.0.0.1 and
    TimeZone=UTC. fsync and synchronous_commit stay ON: PostgreSQL's INSERT
    numbers include its WAL flushes. Brewric has no WAL yet (issue 3), so its
    INSERTs are not durable: the INSERT ratio flatters Brewric until the WAL lands.
  * PostgreSQL's big table is loaded with INSERT ... SELECT generate_series and
    then VACUUM ANALYZE (what a PostgreSQL user would do); Brewric's with
    multi-row INSERTs of 10,000 rows over 4 connections. Load times are shown
    but are not comparable and are not part of the ratios.
  * Both systems get byte-identical SQL text; battery values are multiples of
    1/16, so float sums are exact in any summation order and answers must match
    exactly.
  * The machines are shared and noisy: read the medians and ratios, not single
    times.
"""

import argparse
import datetime
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(os.path.expanduser("~"), ".cache", "brewric-bench", "venv")


# --------------------------------------------------------------------------
# psycopg: import it, or install it into a private virtualenv and re-run

def ensure_psycopg():
    try:
        import psycopg  # noqa: F401
        return
    except ImportError:
        pass
    if os.environ.get("BREWRIC_BENCH_REEXEC"):
        sys.exit("psycopg is still not importable after installing it into " + VENV)
    print(f"psycopg not found: installing psycopg[binary] into {VENV}", flush=True)
    if not os.path.exists(os.path.join(VENV, "bin", "python")):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    subprocess.check_call([os.path.join(VENV, "bin", "python"), "-m", "pip", "install", "-q",
                           "psycopg[binary]>=3.1"])
    env = dict(os.environ, BREWRIC_BENCH_REEXEC="1")
    os.execve(os.path.join(VENV, "bin", "python"),
              [os.path.join(VENV, "bin", "python"), os.path.abspath(__file__)] + sys.argv[1:], env)


# --------------------------------------------------------------------------
# environment

def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True, **kw).stdout.strip()


def environment():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = "unknown"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                    break
    except OSError:
        pass
    dirty = sh(f"git -C {ROOT} status --porcelain --untracked-files=no")
    return {
        "git SHA": (sh(f"git -C {ROOT} rev-parse HEAD") or "unknown") + (" (with uncommitted changes)" if dirty else ""),
        "rustc": sh("rustc -V") or "unknown",
        "CPU": cpu,
        "cores": str(os.cpu_count()),
        "RAM": ram,
        "OS": platform.platform(),
        "python": platform.python_version(),
    }


# --------------------------------------------------------------------------
# data: identical rows for both systems

ROBOTS = 100
EPOCH = datetime.datetime(2026, 1, 1)


def row_sql(i):
    """One row of the readings tables as SQL text; a pure function of i."""
    ts = (EPOCH + datetime.timedelta(seconds=i)).strftime("%Y-%m-%d %H:%M:%S+00")
    battery = 50 + (i % 1000) / 16  # a multiple of 1/16: exact in binary
    ok = "false" if i % 7 == 0 else "true"
    return f"('{ts}','r{i % ROBOTS}',{battery!r},{ok})"


def insert_sql(table, start, count):
    return f"INSERT INTO {table} VALUES " + ",".join(row_sql(i) for i in range(start, start + count))


CREATE = "CREATE TABLE {t} (ts timestamptz NOT NULL, robot text, battery double precision, ok boolean)"

# the same rows, generated inside PostgreSQL
PG_GENERATE = """INSERT INTO {t}
SELECT timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second',
       'r' || (i % {robots}),
       50 + (i % 1000) / 16.0,
       i % 7 <> 0
FROM generate_series(0, {n} - 1) AS i"""

QUERIES = [
    ("count(*)", "SELECT count(*) FROM readings10m"),
    ("sum(battery)", "SELECT sum(battery) FROM readings10m"),
    ("group by robot", "SELECT robot, count(*), avg(battery) FROM readings10m GROUP BY robot"),
]


# --------------------------------------------------------------------------
# servers

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Brewric:
    name = "brewric"

    def __init__(self, binary, shards, keep):
        self.dir = tempfile.mkdtemp(prefix="brewric-bench-")
        self.keep = keep
        cmd = [binary, "--listen", "127.0.0.1:0", "--http", "off", "--ilp", "off", "--data-dir", os.path.join(self.dir, "data")]
        if shards:
            cmd += ["--shards", str(shards)]
        self.log = open(os.path.join(self.dir, "brewricd.log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True)
        deadline = time.time() + 60
        line = ""
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if line.startswith("brewricd listening on "):
                break
            if line == "" and self.proc.poll() is not None:
                raise RuntimeError(f"brewricd exited with {self.proc.returncode}; see {self.log.name}")
        else:
            raise RuntimeError("brewricd did not print its listening line within 60 s")
        host, port = line.strip().rsplit(" ", 1)[1].rsplit(":", 1)
        self.host, self.port = host, int(port)
        # keep draining stdout
        threading.Thread(target=lambda: self.proc.stdout.read(), daemon=True).start()
        self.dsn = f"host={self.host} port={self.port} user=brewric dbname=brewric"

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def pg_bindir():
    candidates = []
    for base in ("/usr/lib/postgresql",):
        if os.path.isdir(base):
            for v in sorted(os.listdir(base), reverse=True):
                candidates.append(os.path.join(base, v, "bin"))
    for d in candidates:
        if os.path.exists(os.path.join(d, "initdb")) and os.path.exists(os.path.join(d, "pg_ctl")):
            return d
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return os.path.dirname(os.path.realpath(initdb))
    return None


class Postgres:
    name = "postgres"

    def __init__(self, keep):
        bindir = pg_bindir()
        if bindir is None:
            if os.geteuid() != 0:
                raise RuntimeError("PostgreSQL server binaries not found; run: apt-get install -y postgresql")
            print("PostgreSQL not found: apt-get install -y postgresql", flush=True)
            subprocess.check_call("apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql",
                                  shell=True)
            bindir = pg_bindir()
            if bindir is None:
                raise RuntimeError("PostgreSQL still not found after apt-get install")
        self.bindir = bindir
        self.version = sh(f"{bindir}/postgres --version")
        self.keep = keep
        self.dir = tempfile.mkdtemp(prefix="pg-bench-")
        self.port = free_port()
        self.host = "127.0.0.1"
        # PostgreSQL refuses to run as root: run it as the `postgres` user
        self.as_user = []
        if os.geteuid() == 0:
            subprocess.check_call(["chown", "-R", "postgres", self.dir])
            os.chmod(self.dir, 0o755)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        data = os.path.join(self.dir, "data")
        subprocess.check_call(self.as_user + [f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth=trust",
                                              "-E", "UTF8", "--locale=C.UTF-8"], stdout=subprocess.DEVNULL)
        opts = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c shared_buffers=1GB "
                f"-c timezone=UTC")
        subprocess.check_call(self.as_user + [f"{bindir}/pg_ctl", "-D", data, "-o", opts, "-l",
                                              os.path.join(self.dir, "pg.log"), "-w", "start"],
                              stdout=subprocess.DEVNULL)
        self.data = data
        self.dsn = f"host={self.host} port={self.port} user=postgres dbname=postgres"

    def stop(self):
        subprocess.call(self.as_user + [f"{self.bindir}/pg_ctl", "-D", self.data, "-m", "fast", "stop"],
                        stdout=subprocess.DEVNULL)
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


# --------------------------------------------------------------------------
# measurements

def connect(dsn):
    import psycopg
    return psycopg.connect(dsn, autocommit=True)


def measure_insert(system, rows, batch):
    with connect(system.dsn) as conn:
        conn.execute("DROP TABLE IF EXISTS readings_ins")
        conn.execute(CREATE.format(t="readings_ins"))
        statements = [insert_sql("readings_ins", s, min(batch, rows - s)) for s in range(0, rows, batch)]
        t0 = time.perf_counter()
        for stmt in statements:
            conn.execute(stmt)
        elapsed = time.perf_counter() - t0
        (n,) = conn.execute("SELECT count(*) FROM readings_ins").fetchone()
        if n != rows:
            print(f"WARNING: {system.name}: readings_ins has {n} rows, expected {rows}")
        conn.execute("DROP TABLE readings_ins")
    return rows / elapsed, elapsed


def load_big_brewric(system, rows, batch, conns):
    with connect(system.dsn) as conn:
        conn.execute("DROP TABLE IF EXISTS readings10m")
        conn.execute(CREATE.format(t="readings10m"))
    chunks = [(s, min(batch, rows - s)) for s in range(0, rows, batch)]
    errors = []

    def worker(k):
        try:
            with connect(system.dsn) as c:
                for (s, n) in chunks[k::conns]:
                    c.execute(insert_sql("readings10m", s, n))
        except Exception as e:  # reported below
            errors.append(e)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"loading brewric failed: {errors[0]}")
    return time.perf_counter() - t0


def load_big_postgres(system, rows):
    with connect(system.dsn) as conn:
        conn.execute("DROP TABLE IF EXISTS readings10m")
        conn.execute(CREATE.format(t="readings10m"))
        t0 = time.perf_counter()
        conn.execute(PG_GENERATE.format(t="readings10m", robots=ROBOTS, n=rows))
        conn.execute("VACUUM ANALYZE readings10m")
        return time.perf_counter() - t0


def normalize(rows):
    """Rows as comparable tuples: floats rounded to 9 significant digits, sorted."""
    out = []
    for r in rows:
        t = []
        for v in r:
            if isinstance(v, float):
                t.append(float(f"{v:.9g}"))
            elif v is not None and type(v).__name__ == "Decimal":
                t.append(float(f"{float(v):.9g}"))
            else:
                t.append(v)
        out.append(tuple(t))
    return sorted(out, key=repr)


def run_queries(system, runs):
    results = {}
    with connect(system.dsn) as conn:
        for label, sql in QUERIES:
            answer = conn.execute(sql).fetchall()  # warm-up
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                answer = conn.execute(sql).fetchall()
                times.append((time.perf_counter() - t0) * 1000)
            results[label] = (statistics.median(times), times, normalize(answer))
    return results


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--insert-rows", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=1_000, help="rows per INSERT in the throughput test")
    ap.add_argument("--select-rows", type=int, default=10_000_000)
    ap.add_argument("--load-batch", type=int, default=10_000, help="rows per INSERT when loading Brewric's big table")
    ap.add_argument("--load-conns", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--systems", default="brewric,postgres")
    ap.add_argument("--shards", type=int, default=0, help="brewricd --shards (default: its own default)")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--brewric-bin", default=os.path.join(ROOT, "target", "release", "brewricd"))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--quick", action="store_true", help="20k INSERT rows, 200k SELECT rows, 3 runs")
    args = ap.parse_args()
    if args.quick:
        args.insert_rows, args.select_rows, args.runs = 20_000, 200_000, 3
    systems_wanted = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems_wanted:
        if s not in ("brewric", "postgres"):
            sys.exit(f"unknown system {s!r}")

    ensure_psycopg()
    env = environment()

    if "brewric" in systems_wanted and not args.skip_build:
        print("building brewricd (cargo build --release) ...", flush=True)
        subprocess.check_call(["cargo", "build", "--release", "--bin", "brewricd"], cwd=ROOT)

    systems = []
    try:
        if "brewric" in systems_wanted:
            systems.append(Brewric(args.brewric_bin, args.shards, args.keep))
        if "postgres" in systems_wanted:
            systems.append(Postgres(args.keep))

        insert = {}
        load = {}
        queries = {}
        for s in systems:
            print(f"[{s.name}] INSERT throughput: {args.insert_rows:,} rows, {args.batch:,} rows per statement ...",
                  flush=True)
            insert[s.name] = measure_insert(s, args.insert_rows, args.batch)
            print(f"[{s.name}]   {insert[s.name][0]:,.0f} rows/s", flush=True)
            print(f"[{s.name}] loading readings10m: {args.select_rows:,} rows ...", flush=True)
            if s.name == "brewric":
                load[s.name] = load_big_brewric(s, args.select_rows, args.load_batch, args.load_conns)
            else:
                load[s.name] = load_big_postgres(s, args.select_rows)
            print(f"[{s.name}]   loaded in {load[s.name]:.1f} s", flush=True)
            print(f"[{s.name}] queries: 1 warm-up + {args.runs} runs each ...", flush=True)
            queries[s.name] = run_queries(s, args.runs)
    finally:
        for s in systems:
            try:
                s.stop()
            except Exception as e:  # keep stopping the others
                print(f"WARNING: stopping {s.name}: {e}")

    # ---- report
    names = [s.name for s in systems]
    print()
    print("Environment")
    for k, v in env.items():
        print(f"  {k:8} {v}")
    for s in systems:
        if s.name == "postgres":
            print(f"  {'postgres':8} {s.version}; shared_buffers=1GB, fsync on, synchronous_commit on")
        if s.name == "brewric":
            build = "release" if os.sep + "release" + os.sep in os.path.abspath(args.brewric_bin) else "NOT a release build"
            print(f"  {'brewric':8} {args.brewric_bin} ({build}), shards={args.shards or 'default'}; no WAL yet (issue 3)")
    print(f"  sizes    INSERT {args.insert_rows:,} rows in statements of {args.batch:,}; "
          f"SELECT table {args.select_rows:,} rows; median of {args.runs} runs after 1 warm-up")
    print()
    both = "brewric" in names and "postgres" in names
    header = f"{'measurement':28}" + "".join(f"{n + ' median':>18}" for n in names)
    if both:
        header += f"{'ratio pg/brewric':>18}"
    print(header)
    print("-" * len(header))
    line = f"{'INSERT rows/s (higher=better)':28}" + "".join(f"{insert[n][0]:>18,.0f}" for n in names)
    if both:
        line += f"{insert['brewric'][0] / insert['postgres'][0]:>17.2f}x"
    print(line)
    for label, _sql in QUERIES:
        line = f"{(label + ' ms'):28}" + "".join(f"{queries[n][label][0]:>18.1f}" for n in names)
        if both:
            line += f"{queries['postgres'][label][0] / queries['brewric'][label][0]:>17.2f}x"
        print(line)
    print(f"{'load big table s (info)':28}" + "".join(f"{load[n]:>18.1f}" for n in names))
    print()
    print("ratio: how many times faster Brewric is (for INSERT: brewric rows/s / postgres rows/s;")
    print("for queries: postgres median / brewric median). Above 1 = Brewric faster.")

    # ---- answers must agree
    if both:
        for label, sql in QUERIES:
            a = queries["brewric"][label][2]
            b = queries["postgres"][label][2]
            if a != b:
                print(f"WARNING: answers differ for {sql!r}:\n  brewric:  {a[:5]}{' ...' if len(a) > 5 else ''}"
                      f"\n  postgres: {b[:5]}{' ...' if len(b) > 5 else ''}")
            else:
                print(f"answers agree: {label} ({len(a)} row{'s' if len(a) != 1 else ''})")


if __name__ == "__main__":
    main()
