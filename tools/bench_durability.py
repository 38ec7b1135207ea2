#!/usr/bin/env python3
"""Durability benchmark driver for issue 3 (WAL, group commit): Brewric vs PostgreSQL 15.

This is a benchmark DRIVER, not a test. It measures, side by side in one run on
the same machine, with both servers started fresh by this script:

  1. Commit rate and commit latency. W concurrent writers (W = 1, 8, 64 by
     default), one connection and one thread each, every writer running
     autocommit statements

         INSERT INTO t VALUES (...),(...),...      -- 10 rows (--batch)

     in a loop for a fixed time (--duration, 5 s by default), with
     `SET synchronous_commit = on` and, separately, `= off` in every session.
     Reported per system and configuration: commits/s, rows/s, commit latency
     p50/p99/max (the time one INSERT takes, as the client sees it), errors, the
     spread of commits between writers, and the CPU the server and this client
     used; plus the ratios Brewric/PostgreSQL.
     Target (issue 3): with 64 writers and synchronous_commit on, Brewric commits
     at least 3x PostgreSQL's rate at a lower p99.

     1b. Cross-check of part 1 with pgbench (PostgreSQL's C client, -M simple):
     the same INSERT text, writer counts, duration and session setting. On a
     2-core machine one Python process with 64 threads cannot issue statements
     much faster than ~5,000/s, so the psycopg numbers at 8 and 64 writers can
     measure the client more than the server; the driver prints the CPU the
     client used, and the target is judged for both clients. Skipped with
     --no-pgbench or when pgbench is not installed; --pgbench-mode extended
     (or prepared) runs it over the extended query protocol instead.
     (psycopg sends these INSERTs with the simple query protocol: every
     statement's text differs, so psycopg never auto-prepares one.)

  2. Durability overhead for big batches. One writer, INSERT statements of
     10,000 rows each (--big-rows; one multi-row VALUES list: Brewric's literal
     fast path), synchronous_commit on vs off: median time per batch for each
     and the ratio on/off per system.
     Target (issue 3): Brewric's on/off ratio stays under 2x.

It prints one table per part, the verdict on each target, and the environment
(git SHA, rustc -V, CPU, cores, RAM, the file system of the data directories,
the PostgreSQL settings that matter for commits, and brewricd's own log).

Usage (from the repository root):

    python3 tools/bench_durability.py                    # full run (builds brewricd --release)
    python3 tools/bench_durability.py --quick --skip-build
    python3 tools/bench_durability.py --writers 64 --duration 10 --systems brewric,postgres
    python3 tools/bench_durability.py --brewric-bin target/release/brewricd --skip-build

Options: --duration S (per configuration of part 1; default 5), --writers 1,8,64,
--batch N (rows per INSERT in part 1; default 10), --big-rows N (rows per INSERT
in part 2; default 10000), --big-batches N (timed batches per mode in part 2;
default 20, after 1 untimed warm-up per mode), --systems brewric,postgres,
--quick (1 s per configuration, 5 big batches), --no-pgbench, --pgbench-mode
simple|extended|prepared (default simple), --skip-build, --brewric-bin PATH,
--shards N (brewricd --shards; default: its own default, one per core), --keep
(leave the temporary data directories behind), --stall S (a writer still inside
a statement S seconds after the end is reported as a stall; default 120).

What it needs: as tools/bench_spine.py, whose helpers it imports (environment
block, the brewricd and PostgreSQL 15 launchers, psycopg in a private venv):
cargo, PostgreSQL 15 server binaries (and pgbench, shipped with them),
psycopg.

Fairness notes (a short form is printed with the results):
  * fsync stays ON for both. PostgreSQL runs with its defaults except what
    bench_spine.py sets (shared_buffers=1GB, listen_addresses, TimeZone=UTC):
    wal_sync_method, commit_delay, wal_buffers etc. are its defaults and are
    printed. Brewric runs with its default shards (one per core) and a fresh
    temporary data directory that holds its WAL. Both data directories are
    under the same temporary directory, on the same file system (`df -T`
    printed).
  * Both systems get byte-identical SQL text, and the same session setting
    (`SET synchronous_commit = on|off`, checked with SHOW before the run). The
    table t (ts timestamptz, writer int, seq int, v double precision) is
    dropped and created fresh for every configuration and system; after each
    run its row count is checked against the acknowledged INSERTs.
  * Both servers are up for the whole run and the configurations are
    interleaved (brewric, postgres, then postgres, brewric for the next
    configuration ...), so slow drift of a shared machine hits both alike.
    In part 2 the on and off batches alternate on one connection, for the
    same reason.
  * The client (Python threads; psycopg releases the GIL while it waits) runs
    on the same cores as the server. Its CPU use is printed: near 1 core means
    the client itself is the limit, for both systems, and the ratios then
    understate the faster one. Latencies include the client's own scheduling
    delay. pgbench (part 1b) costs the machine far less per statement. Its
    script runs `SET synchronous_commit = ...` once per connection, inside its
    first transaction (pgbench has no per-connection setup; Brewric ignores
    PGOPTIONS), which counts that one transaction's latency with two statements.
  * The machine is a shared 2-core VM: quote the medians and ratios, not
    single numbers, and rerun before believing a small difference.
"""

import argparse
import importlib.util
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_spine():
    sys.dont_write_bytecode = True  # leave no tools/__pycache__ behind
    spec = importlib.util.spec_from_file_location("bench_spine", os.path.join(HERE, "bench_spine.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


spine = _load_spine()
ROOT = spine.ROOT

CREATE = "CREATE TABLE t (ts timestamptz, writer int, seq int, v double precision)"


def ensure_psycopg():
    try:
        import psycopg  # noqa: F401
        return
    except ImportError:
        pass
    venv_python = os.path.join(spine.VENV, "bin", "python")
    if not os.environ.get("BREWRIC_BENCH_REEXEC") and os.path.exists(venv_python) and subprocess.call(
            [venv_python, "-c", "import psycopg"], stderr=subprocess.DEVNULL) == 0:
        # bench_spine's venv already has it: run this driver there
        os.execve(venv_python, [venv_python, os.path.abspath(__file__)] + sys.argv[1:],
                  dict(os.environ, BREWRIC_BENCH_REEXEC="1"))
    # bench_spine.ensure_psycopg installs it and re-executes the file its
    # module's __file__ names: point that at this driver.
    spine.__file__ = os.path.abspath(__file__)
    spine.ensure_psycopg()


# --------------------------------------------------------------------------
# SQL text: a pure function of (writer, seq, rows), identical for both systems

def insert_sql(writer, seq, rows):
    """INSERT of `rows` rows; ts spreads over a day, v is a multiple of 1/16."""
    sec = seq % 86400
    base = f"2026-01-01 {sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"
    parts = []
    for i in range(rows):
        parts.append(f"('{base}.{i % 1000:03d}+00',{writer},{seq},{(seq % 1000) + (i % 16) / 16!r})")
    return "INSERT INTO t VALUES " + ",".join(parts)


# --------------------------------------------------------------------------
# helpers

def connect(dsn):
    return spine.connect(dsn)


def percentile(sorted_values, q):
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[k]


def fresh_table(system):
    with connect(system.dsn) as conn:
        conn.execute("DROP TABLE IF EXISTS t")
        conn.execute(CREATE)


def count_rows(system):
    with connect(system.dsn) as conn:
        return conn.execute("SELECT count(*) FROM t").fetchone()[0]


def set_sync(conn, mode):
    conn.execute(f"SET synchronous_commit = {mode}")
    got = conn.execute("SHOW synchronous_commit").fetchone()[0]
    if got != mode:
        raise RuntimeError(f"SET synchronous_commit = {mode} did not take: SHOW says {got!r}")


CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """utime+stime of one process (all its threads), in seconds; 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return 0.0


def server_pids(system):
    """The server's processes: brewricd, or the postmaster and all its children."""
    if system.name == "brewric":
        return [system.proc.pid]
    try:
        with open(os.path.join(system.data, "postmaster.pid")) as f:
            master = int(f.readline())
    except (OSError, ValueError):
        return []
    pids = [master]
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == master:
                pids.append(int(d))
    return pids


def server_cpu(system):
    return {pid: proc_cpu(pid) for pid in server_pids(system)}


def cpu_delta(before, after):
    return sum(max(0.0, after.get(pid, 0.0) - t0) for pid, t0 in before.items()) + \
        sum(t for pid, t in after.items() if pid not in before)


def alive(system):
    return system.name != "brewric" or system.proc.poll() is None


def fs_of(path):
    out = spine.sh(f"df -T {path}")
    lines = out.splitlines()
    if len(lines) < 2:
        return "unknown"
    f = lines[-1].split()
    if len(f) < 7:
        return lines[-1]
    return f"{f[1]} ({f[0]} mounted on {f[-1]}, {int(f[4]) / 1024 / 1024:.0f} GiB free)  [df -T]"


# --------------------------------------------------------------------------
# part 1: W writers, small autocommit INSERTs, for a fixed time

class Writer(threading.Thread):
    def __init__(self, system, w, mode, batch, ready, go, stop_at):
        super().__init__(daemon=True)
        self.system, self.w, self.mode, self.batch = system, w, mode, batch
        self.ready, self.go, self.stop_at = ready, go, stop_at
        self.latencies = []  # ms, acknowledged statements only
        self.errors = []     # (sqlstate, message)
        self.setup_error = None
        self.finished = None
        self.conn = None

    def run(self):
        import psycopg
        try:
            self.conn = connect(self.system.dsn)
            set_sync(self.conn, self.mode)
            cur = self.conn.cursor()
        except Exception as e:
            self.setup_error = e
            self.ready.release()
            return
        # the first statement's text is made before the clock starts, the
        # next ones between statements (part of the client's cost, as in a real client)
        sql = insert_sql(self.w, 0, self.batch)
        self.ready.release()
        self.go.wait()
        seq = 0
        stop_at = self.stop_at[0]
        clock = time.perf_counter
        while True:
            t0 = clock()
            if t0 >= stop_at:
                break
            try:
                cur.execute(sql)
                self.latencies.append((clock() - t0) * 1000)
            except psycopg.Error as e:
                text = str(e).strip()
                self.errors.append((getattr(e, "sqlstate", None), text.splitlines()[0] if text else repr(e)))
                if self.conn.closed or isinstance(e, psycopg.OperationalError) and self.conn.broken:
                    break
            seq += 1
            sql = insert_sql(self.w, seq, self.batch)
        self.finished = clock()

    def close(self):
        try:
            if self.conn is not None:
                self.conn.close()
        except Exception:
            pass


def run_writers(system, writers, mode, batch, duration, stall_s):
    fresh_table(system)
    ready = threading.Semaphore(0)
    go = threading.Event()
    stop_at = [0.0]
    threads = [Writer(system, w, mode, batch, ready, go, stop_at) for w in range(writers)]
    for t in threads:
        t.start()
    for _ in threads:
        if not ready.acquire(timeout=60):
            raise RuntimeError(f"{system.name}: writers could not connect within 60 s")
    bad = [t.setup_error for t in threads if t.setup_error]
    if bad:
        go.set()
        for t in threads:
            t.close()
        raise RuntimeError(f"{system.name}: a writer could not start: {bad[0]}")
    cpu0 = server_cpu(system)
    client0 = time.process_time()
    start = time.perf_counter()
    stop_at[0] = start + duration
    go.set()
    deadline = start + duration + stall_s
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.perf_counter()))
    stuck = [t for t in threads if t.is_alive()]
    end = max([t.finished for t in threads if t.finished] or [time.perf_counter()])
    if stuck:
        end = time.perf_counter()
    cpu1 = server_cpu(system)
    client1 = time.process_time()
    wall = end - start
    for t in threads:
        if not t.is_alive():
            t.close()
    lat = sorted(x for t in threads for x in t.latencies)
    per_writer = [len(t.latencies) for t in threads]
    errors = [e for t in threads for e in t.errors]
    commits = len(lat)
    r = {
        "commits": commits,
        "wall": wall,
        "commits_s": commits / wall if wall > 0 else 0.0,
        "rows_s": commits * batch / wall if wall > 0 else 0.0,
        "p50": percentile(lat, 0.50),
        "p99": percentile(lat, 0.99),
        "max": lat[-1] if lat else float("nan"),
        "errors": errors,
        "per_writer_min": min(per_writer),
        "per_writer_max": max(per_writer),
        "stuck": len(stuck),
        "server_cores": cpu_delta(cpu0, cpu1) / wall if wall > 0 else 0.0,
        "client_cores": (client1 - client0) / wall if wall > 0 else 0.0,
        "count_ok": None,
    }
    if not stuck and alive(system):
        try:
            n = count_rows(system)
            r["count_ok"] = n >= commits * batch and n <= (commits + len(errors)) * batch
            r["count"] = n
        except Exception as e:
            r["count_error"] = str(e)
    return r


# --------------------------------------------------------------------------
# part 1, cross-check: the same workload from pgbench (a C client)

def pgbench_binary():
    d = spine.pg_bindir()
    if d and os.path.exists(os.path.join(d, "pgbench")):
        return os.path.join(d, "pgbench")
    return shutil.which("pgbench")


def pgbench_script(mode, batch):
    """The same INSERT text as the psycopg writers (writer = pgbench's client id,
    seq = 0), preceded once per connection by the session's SET: pgbench has no
    per-connection setup, and Brewric ignores PGOPTIONS."""
    return ("\\if :synced = 0\n"
            f"SET synchronous_commit = {mode};\n"
            "\\set synced 1\n"
            "\\endif\n"
            + insert_sql(":client_id", 0, batch) + ";\n")


def run_pgbench(system, binary, writers, mode, batch, duration, stall_s, mode_protocol="simple"):
    fresh_table(system)
    work = tempfile.mkdtemp(prefix="bench-durability-pgbench-")
    try:
        script = os.path.join(work, "insert.sql")
        with open(script, "w") as f:
            f.write(pgbench_script(mode, batch))
        cmd = [binary, "-n", "-M", mode_protocol, "-f", script, "-c", str(writers),
               "-j", str(min(writers, os.cpu_count() or 1)), "-T", f"{max(1, round(duration))}",
               "-D", "synced=0", "-l", f"--log-prefix={os.path.join(work, 'log')}", system.dsn]
        cpu0 = server_cpu(system)
        child0 = os.times()
        t0 = time.perf_counter()
        # PostgreSQL's backends for pgbench's connections come and go within the
        # run: sample the server's CPU while it runs (the last ~0.2 s of each
        # backend is missed, and a backend's start-up is counted).
        seen = dict(cpu0)
        with open(os.path.join(work, "out.txt"), "w+") as outf:
            p = subprocess.Popen(cmd, stdout=outf, stderr=subprocess.STDOUT, text=True, cwd=work)
            while p.poll() is None:
                if time.perf_counter() - t0 > duration + stall_s:
                    p.kill()
                    p.wait()
                    return {"stuck": writers,
                            "errors": [("pgbench", f"did not finish within {duration + stall_s:g} s")]}
                for pid, t in server_cpu(system).items():
                    seen[pid] = max(t, seen.get(pid, 0.0))
                time.sleep(0.2)
            wall = time.perf_counter() - t0
            for pid, t in server_cpu(system).items():
                seen[pid] = max(t, seen.get(pid, 0.0))
            cpu1 = seen
            child1 = os.times()
            outf.seek(0)
            out = outf.read()
        tps = processed = failed = None
        for ln in out.splitlines():
            ln = ln.strip()
            if ln.startswith("tps = ") and "without initial connection" in ln:
                tps = float(ln.split()[2])
            elif ln.startswith("number of transactions actually processed:"):
                processed = int(ln.split(":")[1].split("/")[0].strip())
            elif ln.startswith("number of failed transactions:"):
                failed = int(ln.split(":")[1].split()[0])
        lat, per_client = [], {}
        for name in os.listdir(work):
            if name.startswith("log."):
                with open(os.path.join(work, name)) as f:
                    for ln in f:
                        fields = ln.split()
                        if len(fields) >= 3:
                            lat.append(int(fields[2]) / 1000)
                            per_client[fields[0]] = per_client.get(fields[0], 0) + 1
        lat.sort()
        errors = [("pgbench", ln.strip()) for ln in out.splitlines()
                  if "error" in ln.lower() or "abort" in ln.lower() or "FATAL" in ln]
        if p.returncode != 0 and not errors:
            last = out.strip().splitlines()[-1] if out.strip() else ""
            errors.append(("pgbench", f"exit code {p.returncode}: {last}"))
        if failed:
            errors.append(("pgbench", f"{failed} failed transactions"))
        if tps is None:
            raise RuntimeError(f"pgbench gave no result (exit {p.returncode}): {out.strip()[-400:]}")
        counts = [per_client.get(str(c), 0) for c in range(writers)]
        elapsed = (processed / tps) if processed and tps else wall
        r = {
            "commits": processed or 0,
            "wall": elapsed,
            "commits_s": tps,
            "rows_s": tps * batch,
            "p50": percentile(lat, 0.50),
            "p99": percentile(lat, 0.99),
            "max": lat[-1] if lat else float("nan"),
            "errors": errors,
            "per_writer_min": min(counts),
            "per_writer_max": max(counts),
            "stuck": 0,
            "server_cores": cpu_delta(cpu0, cpu1) / wall,
            "client_cores": ((child1.children_user + child1.children_system)
                             - (child0.children_user + child0.children_system)) / wall,
            "count_ok": None,
        }
        if alive(system) and processed is not None:
            try:
                n = count_rows(system)
                r["count"] = n
                r["count_ok"] = n == processed * batch
            except Exception as e:
                r["count_error"] = str(e)
        return r
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------
# part 2: one writer, big batches, on and off alternating

def run_big(system, rows, batches):
    fresh_table(system)
    # every batch has its own text (distinct seq); made before timing starts
    stmts = {m: [insert_sql(0 if m == "on" else 1, k, rows) for k in range(batches + 1)] for m in ("on", "off")}
    times = {"on": [], "off": []}
    with connect(system.dsn) as conn:
        cur = conn.cursor()
        for k in range(batches + 1):  # k == 0: warm-up, not timed
            order = ("on", "off") if k % 2 == 0 else ("off", "on")
            for m in order:
                set_sync(conn, m)
                t0 = time.perf_counter()
                cur.execute(stmts[m][k])
                dt = (time.perf_counter() - t0) * 1000
                if k > 0:
                    times[m].append(dt)
        n = conn.execute("SELECT count(*) FROM t").fetchone()[0]
    expected = 2 * (batches + 1) * rows
    out = {}
    for m in ("on", "off"):
        ts = sorted(times[m])
        out[m] = {"median": statistics.median(ts), "min": ts[0], "max": ts[-1], "times": times[m]}
    out["ratio"] = out["on"]["median"] / out["off"]["median"]
    out["count_ok"] = n == expected
    out["count"], out["expected"] = n, expected
    return out


# --------------------------------------------------------------------------
# report

def fmt(x, spec):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, spec)


def ratio(a, b):
    if a is None or b is None or b == 0 or (isinstance(a, float) and math.isnan(a)) or \
            (isinstance(b, float) and math.isnan(b)):
        return float("nan")
    return a / b


def print_part1(title, part1, names, writer_counts, both, client_note):
    print()
    print(title)
    hdr = (f"{'writers':>7} {'sync':>4}  {'system':10}{'commits/s':>11}{'rows/s':>11}{'p50 ms':>9}{'p99 ms':>9}"
           f"{'max ms':>9}{'errors':>7}{'min/max per writer':>20}{'server':>8}{'client':>8}")
    print(hdr)
    print("-" * len(hdr))
    for mode in ("on", "off"):
        for w in writer_counts:
            res = part1.get((w, mode))
            if res is None:
                continue
            for n in names:
                r = res.get(n)
                if r is None:
                    print(f"{w:>7} {mode:>4}  {n:10}{'(no result)':>11}")
                    continue
                spread = f"{r['per_writer_min']}/{r['per_writer_max']}"
                print(f"{w:>7} {mode:>4}  {n:10}{r['commits_s']:>11,.0f}{r['rows_s']:>11,.0f}{fmt(r['p50'], '>9.2f')}"
                      f"{fmt(r['p99'], '>9.2f')}{fmt(r['max'], '>9.1f')}{len(r['errors']):>7}{spread:>20}"
                      f"{r['server_cores']:>8.2f}{r['client_cores']:>8.2f}")
            if both and "brewric" in res and "postgres" in res:
                b, p = res["brewric"], res["postgres"]
                print(f"{'':>7} {'':>4}  {'ratio b/pg':10}{ratio(b['commits_s'], p['commits_s']):>10.2f}x"
                      f"{ratio(b['rows_s'], p['rows_s']):>10.2f}x{ratio(b['p50'], p['p50']):>8.2f}x"
                      f"{ratio(b['p99'], p['p99']):>8.2f}x{ratio(b['max'], p['max']):>8.2f}x")
    print(f"server/client: CPU cores used during the run by the server's processes / by {client_note}.")
    print("ratio b/pg: Brewric / PostgreSQL; above 1 is better for commits/s and rows/s, below 1 for latencies.")


def verdict_64(label, part1, client_bound_at=0.9):
    res = part1.get((64, "on"), {})
    if "brewric" not in res or "postgres" not in res:
        print(f"  [{label}] 64 writers, synchronous_commit on: not measured in this run")
        return
    b, p = res["brewric"], res["postgres"]
    rate_ok = b["commits_s"] >= 3 * p["commits_s"]
    p99_ok = b["p99"] < p["p99"]
    print(f"  [{label}] 64 writers, synchronous_commit on: Brewric commits/s = "
          f"{ratio(b['commits_s'], p['commits_s']):.2f}x PostgreSQL (need >= 3x: {'yes' if rate_ok else 'no'}); "
          f"p99 {b['p99']:.2f} ms vs {p['p99']:.2f} ms (need lower: {'yes' if p99_ok else 'no'}) "
          f"-> {'MET' if rate_ok and p99_ok else 'NOT MET'}")
    bound = [n for n, r in (("brewric", b), ("postgres", p)) if r["client_cores"] >= client_bound_at]
    if bound:
        print(f"      caution: the client used >= {client_bound_at} core during the {' and '.join(bound)} run: "
              f"client-bound, the rate measures the client as much as the server")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=5.0, help="seconds per configuration of part 1")
    ap.add_argument("--writers", default="1,8,64", help="comma-separated writer counts")
    ap.add_argument("--batch", type=int, default=10, help="rows per INSERT in part 1")
    ap.add_argument("--big-rows", type=int, default=10_000, help="rows per INSERT in part 2")
    ap.add_argument("--big-batches", type=int, default=20, help="timed batches per mode in part 2")
    ap.add_argument("--systems", default="brewric,postgres")
    ap.add_argument("--no-pgbench", action="store_true", help="skip the pgbench cross-check of part 1")
    ap.add_argument("--pgbench-mode", default="simple", choices=("simple", "extended", "prepared"),
                    help="pgbench -M: the query protocol of the cross-check")
    ap.add_argument("--shards", type=int, default=0, help="brewricd --shards (default: its own default)")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--brewric-bin", default=os.path.join(ROOT, "target", "release", "brewricd"))
    ap.add_argument("--keep", action="store_true", help="leave the temporary data directories behind")
    ap.add_argument("--stall", type=float, default=120.0,
                    help="seconds past --duration after which writers still inside a statement are reported stuck")
    ap.add_argument("--quick", action="store_true", help="1 s per configuration, 5 big batches per mode")
    args = ap.parse_args()
    if args.quick:
        args.duration, args.big_batches = 1.0, 5
    try:
        writer_counts = [int(x) for x in args.writers.split(",") if x.strip()]
    except ValueError:
        sys.exit(f"--writers must be comma-separated numbers, got {args.writers!r}")
    if not writer_counts or min(writer_counts) < 1:
        sys.exit("--writers needs at least one count of 1 or more")
    systems_wanted = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems_wanted:
        if s not in ("brewric", "postgres"):
            sys.exit(f"unknown system {s!r}")
    if max(writer_counts) > 90 and "postgres" in systems_wanted:
        sys.exit("PostgreSQL's default max_connections is 100: use at most 90 writers")

    ensure_psycopg()
    env = spine.environment()
    env["load"] = "load average at start %.2f %.2f %.2f (1/5/15 min; other work on the machine skews both systems)" \
        % os.getloadavg()
    if "brewric" in systems_wanted and not args.skip_build:
        print("building brewricd (cargo build --release) ...", flush=True)
        subprocess.check_call(["cargo", "build", "--release", "--bin", "brewricd"], cwd=ROOT)
    if "brewric" in systems_wanted and not os.path.exists(args.brewric_bin):
        sys.exit(f"no brewricd at {args.brewric_bin}; build it or drop --skip-build")
    pgbench = None if args.no_pgbench else pgbench_binary()
    if not args.no_pgbench and pgbench is None:
        print("pgbench not found: skipping the pgbench cross-check", flush=True)
    clients = ["psycopg"] + (["pgbench"] if pgbench else [])

    systems = []
    part1 = {c: {} for c in clients}  # client -> (writers, mode) -> {system: result}
    part2 = {}  # system -> result
    failures = []
    extra = {}
    brewric_log = []
    started = time.time()
    try:
        if "brewric" in systems_wanted:
            systems.append(spine.Brewric(args.brewric_bin, args.shards, args.keep))
        if "postgres" in systems_wanted:
            systems.append(spine.Postgres(args.keep))
        for s in systems:
            extra[s.name] = {"fs": fs_of(s.dir), "dir": s.dir}
        pg = next((s for s in systems if s.name == "postgres"), None)
        if pg is not None:
            with connect(pg.dsn) as c:
                extra["postgres"]["settings"] = ", ".join(
                    f"{k}={c.execute(f'SHOW {k}').fetchone()[0]}"
                    for k in ("fsync", "synchronous_commit", "wal_sync_method", "full_page_writes",
                              "commit_delay", "wal_buffers", "shared_buffers", "max_wal_size"))

        dead = set()
        configs = [(w, m) for m in ("on", "off") for w in writer_counts]
        k = 0
        for (w, mode) in configs:
            for client in clients:
                part1[client][(w, mode)] = {}
                order = systems if k % 2 == 0 else list(reversed(systems))
                k += 1
                for s in order:
                    if s.name in dead:
                        continue
                    tag = f"[{s.name}/{client}]"
                    print(f"{tag} {w} writer{'s' if w != 1 else ''}, synchronous_commit={mode}, "
                          f"{args.batch} rows per INSERT, {args.duration:g} s ...", flush=True)
                    try:
                        if client == "psycopg":
                            r = run_writers(s, w, mode, args.batch, args.duration, args.stall)
                        else:
                            r = run_pgbench(s, pgbench, w, mode, args.batch, args.duration, args.stall,
                                            args.pgbench_mode)
                    except Exception as e:
                        failures.append(f"{s.name} {client} {w} writers sync={mode}: {e}")
                        print(f"{tag}   FAILED: {e}", flush=True)
                        if not alive(s):
                            failures.append(f"{s.name} exited (code {s.proc.returncode})")
                            dead.add(s.name)
                        continue
                    if r["stuck"]:
                        failures.append(f"{s.name} {client} {w} writers sync={mode}: {r['stuck']} writer(s) still "
                                        f"inside a statement {args.stall:g} s after the end; no further runs on "
                                        f"{s.name}")
                        print(f"{tag}   STALL: {r['stuck']} writer(s) did not return", flush=True)
                        dead.add(s.name)
                        if "commits_s" not in r:
                            continue
                    part1[client][(w, mode)][s.name] = r
                    print(f"{tag}   {r['commits_s']:,.0f} commits/s, p50 {r['p50']:.2f} ms, p99 {r['p99']:.2f} ms, "
                          f"max {r['max']:.1f} ms, {len(r['errors'])} errors, server {r['server_cores']:.2f} cores, "
                          f"client {r['client_cores']:.2f} cores", flush=True)
                    if r["errors"]:
                        print(f"{tag}   first error: {r['errors'][0]}", flush=True)
                    if not alive(s):
                        failures.append(f"{s.name} exited (code {s.proc.returncode}) during {client} {w} writers "
                                        f"sync={mode}")
                        dead.add(s.name)
                    if r["count_ok"] is False:
                        failures.append(f"{s.name} {client} {w} writers sync={mode}: t has {r['count']} rows after "
                                        f"{r['commits']} acknowledged INSERTs of {args.batch} rows "
                                        f"({len(r['errors'])} errors)")

        for s in (systems if k % 2 == 0 else list(reversed(systems))):
            if s.name in dead:
                continue
            print(f"[{s.name}] one writer, {args.big_rows:,} rows per INSERT, synchronous_commit on/off "
                  f"alternating, {args.big_batches} timed batches each ...", flush=True)
            try:
                r = run_big(s, args.big_rows, args.big_batches)
            except Exception as e:
                failures.append(f"{s.name} big batches: {e}")
                print(f"[{s.name}]   FAILED: {e}", flush=True)
                continue
            part2[s.name] = r
            print(f"[{s.name}]   on {r['on']['median']:.1f} ms, off {r['off']['median']:.1f} ms per batch "
                  f"(median); on/off {r['ratio']:.2f}x", flush=True)
            if not r["count_ok"]:
                failures.append(f"{s.name} big batches: t has {r['count']} rows, expected {r['expected']}")
    finally:
        for s in systems:
            if s.name == "brewric":
                try:
                    s.log.flush()
                    with open(s.log.name) as f:
                        brewric_log = f.read().splitlines()
                except OSError:
                    pass
                if s.proc.poll() is not None:
                    failures.append(f"brewricd had exited (code {s.proc.returncode}) before the end of the run")
            try:
                s.stop()
            except Exception as e:  # keep stopping the others
                print(f"WARNING: stopping {s.name}: {e}")

    # ---- environment
    names = [s.name for s in systems]
    both = "brewric" in names and "postgres" in names
    print()
    print(f"Environment (run took {time.time() - started:.0f} s)")
    for key, v in env.items():
        print(f"  {key:8} {v}")
    for s in systems:
        if s.name == "brewric":
            release = os.sep + "release" + os.sep in os.path.abspath(args.brewric_bin)
            build = "release" if release else "NOT a release build"
            shards = next((ln.split(":", 1)[1].split("shards")[0].strip() for ln in brewric_log
                           if ln.startswith("brewricd: ") and " shards, data in " in ln), "?")
            print(f"  {'brewric':8} {args.brewric_bin} ({build}), shards={shards}"
                  f"{'' if args.shards else ' (default)'}; WAL in its data dir")
        if s.name == "postgres":
            print(f"  {'postgres':8} {s.version}")
            print(f"  {'':8} {extra['postgres'].get('settings', '')}")
        print(f"  {'':8} data dir {extra[s.name]['dir']}: {extra[s.name]['fs']}")
    if pgbench:
        print(f"  {'pgbench':8} {spine.sh(pgbench + ' --version')} ({pgbench}), -M {args.pgbench_mode}, "
              f"-j min(writers, cores)")
    print(f"  {'sizes':8} part 1: {args.batch} rows per INSERT, {args.duration:g} s per configuration, writers "
          f"{','.join(map(str, writer_counts))}; part 2: {args.big_rows:,} rows per INSERT, median of "
          f"{args.big_batches} per mode after 1 warm-up")
    if brewric_log:
        shown = [ln for ln in brewric_log if ln.strip()]
        print(f"  brewricd log ({len(shown)} line{'s' if len(shown) != 1 else ''}):")
        for ln in shown[:20]:
            print(f"    {ln}")
        if len(shown) > 20:
            print(f"    ... {len(shown) - 20} more")

    # ---- part 1 tables
    print_part1(f"Part 1: commit rate and latency, autocommit INSERT of {args.batch} rows, one connection per "
                f"writer, psycopg (Python threads)", part1["psycopg"], names, writer_counts, both,
                "this driver (all its threads)")
    if "pgbench" in part1:
        print_part1(f"Part 1b (cross-check): the same INSERT text from pgbench -M {args.pgbench_mode} (C client), "
                    f"one connection per writer", part1["pgbench"], names, writer_counts, both, "pgbench")

    # ---- part 2 table
    if part2:
        print()
        print(f"Part 2: one writer, {args.big_rows:,} rows per INSERT, time per batch (median of {args.big_batches})")
        hdr = (f"{'system':10}{'on ms':>10}{'off ms':>10}{'on/off':>9}{'on rows/s':>12}{'off rows/s':>12}"
               f"{'on min..max':>18}{'off min..max':>18}")
        print(hdr)
        print("-" * len(hdr))
        for n in names:
            r = part2.get(n)
            if r is None:
                print(f"{n:10}{'(no result)':>10}")
                continue
            on, off = r["on"], r["off"]
            print(f"{n:10}{on['median']:>10.1f}{off['median']:>10.1f}{r['ratio']:>8.2f}x"
                  f"{args.big_rows / on['median'] * 1000:>12,.0f}{args.big_rows / off['median'] * 1000:>12,.0f}"
                  f"{on['min']:>9.1f}..{on['max']:<7.1f}{off['min']:>9.1f}..{off['max']:<7.1f}")
        if both and "brewric" in part2 and "postgres" in part2:
            b, p = part2["brewric"], part2["postgres"]
            print(f"{'ratio b/pg':10}{ratio(b['on']['median'], p['on']['median']):>9.2f}x"
                  f"{ratio(b['off']['median'], p['off']['median']):>9.2f}x"
                  "   (time per batch: below 1 = Brewric faster)")

    # ---- targets
    print()
    print("Targets (issue 3)")
    for c in clients:
        verdict_64(c, part1[c])
    if "brewric" in part2:
        r = part2["brewric"]
        print(f"  one writer, {args.big_rows:,}-row batches: Brewric on/off = {r['ratio']:.2f}x "
              f"(need < 2x) -> {'MET' if r['ratio'] < 2 else 'NOT MET'}"
              + (f"   [PostgreSQL on/off = {part2['postgres']['ratio']:.2f}x]" if "postgres" in part2 else ""))
        if args.big_rows != 10_000:
            print("  (note: the target is stated for 10,000-row batches)")
    else:
        print("  one writer, big batches: Brewric not measured in this run")

    # ---- problems
    print()
    if failures:
        print("PROBLEMS")
        for f in failures:
            print(f"  {f}")
    else:
        print("no failed runs, stalls or row-count mismatches")
    errs = {}
    for c in clients:
        for res in part1[c].values():
            for n, r in res.items():
                for e in r["errors"]:
                    errs[(c, n, e)] = errs.get((c, n, e), 0) + 1
    for (c, n, e), cnt in errs.items():
        print(f"  {n}/{c}: {cnt} x {e[0]}: {e[1]}")
    print()
    print("Fairness: fsync on for both; PostgreSQL defaults + shared_buffers=1GB; identical SQL text; fresh table per")
    print("configuration; systems interleaved; the client shares the 2 cores with the server (see its CPU column).")
    print("Shared VM: quote medians and ratios.")


if __name__ == "__main__":
    main()
