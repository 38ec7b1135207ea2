#!/usr/bin/env python3
"""Compression benchmark driver for the storage issue: bytes on disk per row of
TSBS cpu-only data, Brewric vs PostgreSQL 15, DuckDB, ClickHouse (chDB) and Parquet.

This is a benchmark DRIVER, not a test. In one run on the same machine it

  1. generates TSBS DevOps cpu-only data (default 1000 hosts x 48 hours, one
     point per host every 10 s from 2016-01-01T00:00:00Z = 17,280,000 rows)
     deterministically with numpy (--seed) into one CSV file in a work
     directory: columns time (`2016-01-01 00:00:10+00`), tags_id (1..N, host_0
     -> 1), then the 10 usage_* fields written as integers (`58`), rows ordered
     by time then host as TSBS emits them. Each field is TSBS's clamped random
     walk CWD(ND(0,1), 0, 100, U[0,100)) truncated to an integer 0..100
     (shared/reference/tsbs.md, section 1); numpy's PCG64 stands in for Go's
     math/rand, so the values are not TSBS's own, only generated the same way;
  2. loads that same file into each system and measures the bytes on disk:
       brewric     brewricd (--brewricd, already built), TSBS's CREATE TABLE (and its
                   two CREATE INDEX, kept if accepted), COPY cpu(...) FROM STDIN
                   WITH (FORMAT csv) streamed through psycopg, CHECKPOINT; reports
                   SELECT pg_total_relation_size('cpu') and the bytes of the files
                   under the data directory outside wal/ (both)
       postgres    a throwaway PostgreSQL 15 cluster (bench_spine.py's launcher):
                   TSBS's CREATE TABLE and CREATE INDEX statements (before the load,
                   as tsbs_load_timescaledb does; plain table, no TimescaleDB),
                   server-side COPY ... FROM '<file>' CSV, VACUUM ANALYZE;
                   pg_total_relation_size('cpu') (heap + indexes + TOAST)
       duckdb      a database file: CREATE TABLE, COPY ... FROM '<file>', CHECKPOINT,
                   close; the size of the file (plus any .wal left)
       chdb        in-process ClickHouse (pip chdb): MergeTree ORDER BY (tags_id, time),
                   INSERT ... SELECT FROM file('<file>', CSV), OPTIMIZE TABLE FINAL;
                   sum(bytes_on_disk) of the active parts in system.parts
       parquet     pyarrow: the CSV read into Arrow, sorted by (tags_id, time),
                   written with compression='zstd' (other options pyarrow's defaults)
     with the load time (and rows/s) of each as extra information;
  3. prints a side-by-side table (bytes on disk, bytes/row, compression vs 92 raw
     bytes/row = time 8 + tags_id 4 + 10 float8 x 8, and how many times smaller
     Brewric is than each), the target of the issue (Brewric <= 4 bytes/row), the
     per-step timings and the environment (git SHA, rustc -V, CPU, cores, RAM,
     versions), and writes the same text to tools/results/bench_compression-<date>.txt
     (-quick.txt for --quick; --out PATH to choose).

A system that fails (e.g. a Brewric that does not support CHECKPOINT or
pg_total_relation_size yet) gets its error printed in its row; the others go on.

Usage (from the repository root; build brewricd first with cargo build --release):

    python3 tools/bench_compression.py                       # full size, all systems
    python3 tools/bench_compression.py --quick               # 100 hosts x 6 h: checks the driver
    python3 tools/bench_compression.py --skip brewric        # everything but Brewric
    python3 tools/bench_compression.py --systems brewric,postgres --hosts 200 --hours 24
    python3 tools/bench_compression.py --brewricd target/release/brewricd --keep

Options: --hosts N (1000), --hours H (48), --seed S (1), --quick (100 hosts x 6 hours),
--systems LIST (brewric,postgres,duckdb,chdb,parquet), --skip LIST, --brewricd PATH
(alias --brewric-bin; default target/release/brewricd), --shards N (brewricd
--shards), --work-dir DIR (where the CSV and the databases go; default a new
temporary directory, removed at the end unless --keep), --keep, --out PATH,
--copy-chunk-kib N (CopyData chunk size for Brewric, default 1024).

What it needs: numpy, duckdb, chdb, pyarrow and psycopg (a failed import runs
`pip install --user` for what is missing, or a plain pip install inside a
virtualenv), PostgreSQL 15 server binaries under /usr/lib/postgresql (as
bench_spine.py: `apt-get install -y postgresql` when missing and root), and
about 10x the CSV's size free on disk for the full run (CSV ~1 GiB,
PostgreSQL ~3.5 GiB + its WAL, the others less). Peak memory: Parquet's
sort holds the table twice in Arrow (~4 GiB at full size); brewricd holds what
its memtable holds.

Fairness notes (printed with the results):
  * Every system loads the same CSV file; row counts are checked after loading.
  * Logical types as TSBS's TimescaleDB schema: time timestamptz (microseconds),
    tags_id integer, 10 x DOUBLE PRECISION, additional_tags jsonb (all NULL).
    DuckDB: TIMESTAMPTZ, INTEGER, DOUBLE, JSON. chDB: DateTime64(6, 'UTC'), Int32,
    Float64, Nullable(String), default codecs (LZ4). Parquet: timestamp[us, UTC],
    int32, double, string (null).
  * Row order: PostgreSQL, DuckDB and Brewric get the rows in file order (time,
    then host, as TSBS's loader sends them); chDB sorts by its ORDER BY
    (tags_id, time) and Parquet is sorted by (tags_id, time) before writing.
  * PostgreSQL: plain heap table with TSBS's two B-tree indexes, created before
    the load as the TSBS loader does, so index pages split as in a TSBS load.
    No TimescaleDB (not installed; it does not compress by default either).
  * Bytes are apparent file sizes (st_size), after each system's own flush
    (VACUUM ANALYZE / CHECKPOINT / OPTIMIZE FINAL / file close).
  * Load times are information only: the systems load differently (server-side
    COPY, COPY FROM STDIN through Python, in-process readers) on a shared 2-core VM.
"""

import argparse
import datetime
import importlib
import importlib.util
import os
import threading
import shutil
import site
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_spine():
    sys.dont_write_bytecode = True  # leave no tools/__pycache__ behind
    spec = importlib.util.spec_from_file_location("bench_spine", os.path.join(HERE, "bench_spine.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


spine = _load_spine()
ROOT = spine.ROOT

SYSTEMS = ("brewric", "postgres", "duckdb", "chdb", "parquet")
FIELDS = ["usage_user", "usage_system", "usage_idle", "usage_nice", "usage_iowait", "usage_irq",
          "usage_softirq", "usage_steal", "usage_guest", "usage_guest_nice"]
COLUMNS = ["time", "tags_id"] + FIELDS
COPY_COLS = ", ".join(COLUMNS)
RAW_BYTES_PER_ROW = 8 + 4 + 8 * len(FIELDS)  # 92
TARGET_BYTES_PER_ROW = 4.0
START = datetime.datetime(2016, 1, 1, tzinfo=datetime.timezone.utc)
INTERVAL_S = 10

# tsbs_load_timescaledb's DDL with its defaults (shared/reference/tsbs.md, section 2),
# less the TimescaleDB extension and create_hypertable.
TSBS_CREATE = ("CREATE TABLE cpu (time timestamptz, tags_id integer, "
               + ",".join(f"{f} DOUBLE PRECISION" for f in FIELDS)
               + ", additional_tags JSONB DEFAULT NULL)")
TSBS_INDEXES = ['CREATE INDEX ON cpu(tags_id, "time" DESC)',  # --partition-index
                'CREATE INDEX ON cpu("time" DESC)']           # --time-index

PACKAGES = {  # import name -> pip requirement
    "numpy": "numpy",
    "duckdb": "duckdb",
    "chdb": "chdb",
    "pyarrow": "pyarrow",
    "psycopg": "psycopg[binary]",
}
NEEDS = {
    "brewric": ["psycopg"],
    "postgres": ["psycopg"],
    "duckdb": ["duckdb"],
    "chdb": ["chdb"],
    "parquet": ["pyarrow"],
}


# --------------------------------------------------------------------------
# output: printed and kept for the results file

LOG = []


def out(line=""):
    print(line, flush=True)
    LOG.append(line)


def fmt_s(s):
    return f"{s:.1f} s" if s < 600 else f"{s / 60:.1f} min"


# --------------------------------------------------------------------------
# Python packages

def _importable(name):
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        return False


def ensure_packages(names):
    missing = [n for n in dict.fromkeys(names) if not _importable(n)]
    if not missing:
        return
    in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
    cmd = [sys.executable, "-m", "pip", "install", "-q"] + ([] if in_venv else ["--user"]) + \
        [PACKAGES[n] for n in missing]
    print(f"missing Python packages {', '.join(missing)}: {' '.join(cmd[2:])}", flush=True)
    subprocess.check_call(cmd)
    importlib.invalidate_caches()
    if not in_venv:
        user_site = site.getusersitepackages()
        if user_site not in sys.path:
            site.addsitedir(user_site)
    still = [n for n in missing if not _importable(n)]
    if still:
        if os.environ.get("BREWRIC_BENCH_REEXEC"):
            sys.exit(f"still not importable after pip install: {', '.join(still)}")
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:],
                  dict(os.environ, BREWRIC_BENCH_REEXEC="1"))


# --------------------------------------------------------------------------
# data: TSBS cpu-only, generated with numpy straight into CSV bytes

def generate_csv(path, hosts, hours, seed, block_rows=100_000):
    """Writes hosts x (hours * 360) rows; returns the checksum of what it wrote
    (see CHECK_SQL): (rows, sum(usage_user), sum(usage_guest_nice), first and
    last time in Unix seconds).

    Per host and field: initial state U[0,100), each point emits int64(state)
    (truncation), then state += N(0,1) and is clamped to [0, 100] (TSBS's CWD).
    Draw order: the 10 initial states of host 0, of host 1, ...; then per epoch
    one normal per (host, field) in that order.
    """
    import numpy as np

    epochs = hours * 3600 // INTERVAL_S
    rng = np.random.default_rng(seed)
    state = rng.random((hosts, len(FIELDS))) * 100.0

    width = len(str(max(hosts, 100))) + 1  # widest number + its separator

    def lut(values, sep):
        b = np.zeros((len(values), width), np.uint8)
        n = np.zeros(len(values), np.int64)
        for i, v in enumerate(values):
            s = (str(v) + sep).encode()
            b[i, :len(s)] = np.frombuffer(s, np.uint8)
            n[i] = len(s)
        return b, n

    val_b, val_n = lut(range(101), ",")      # fields 1..9
    last_b, last_n = lut(range(101), "\n")   # usage_guest_nice ends the line
    tid_b, tid_n = lut(range(1, hosts + 1), ",")
    ts_len = len("2016-01-01 00:00:00+00,")
    col = np.arange(width)
    tid_mask = col < tid_n[:, None]                                   # (hosts, width)

    block = max(1, block_rows // hosts)  # epochs per block
    rows = sum_first = sum_last = 0
    with open(path, "wb", buffering=1 << 22) as f:
        for e0 in range(0, epochs, block):
            b = min(block, epochs - e0)
            normals = rng.standard_normal((b, hosts, len(FIELDS)))
            vals = np.empty((b, hosts, len(FIELDS)), np.int64)
            for k in range(b):
                vals[k] = state.astype(np.int64)  # truncation; state is in [0, 100]
                state += normals[k]
                np.clip(state, 0.0, 100.0, out=state)
            ts = np.frombuffer(b"".join(
                (START + datetime.timedelta(seconds=(e0 + k) * INTERVAL_S)).strftime("%Y-%m-%d %H:%M:%S+00,").encode()
                for k in range(b)), np.uint8).reshape(b, ts_len)
            line_w = ts_len + (1 + len(FIELDS)) * width
            buf = np.empty((b, hosts, line_w), np.uint8)
            mask = np.empty((b, hosts, line_w), bool)
            buf[:, :, :ts_len] = ts[:, None, :]
            mask[:, :, :ts_len] = True
            o = ts_len
            buf[:, :, o:o + width] = tid_b[None, :, :]
            mask[:, :, o:o + width] = tid_mask[None, :, :]
            o += width
            nf = len(FIELDS) - 1
            buf[:, :, o:o + nf * width] = val_b[vals[:, :, :nf]].reshape(b, hosts, nf * width)
            mask[:, :, o:o + nf * width] = (col < val_n[vals[:, :, :nf]][..., None]).reshape(b, hosts, nf * width)
            o += nf * width
            buf[:, :, o:o + width] = last_b[vals[:, :, nf]]
            mask[:, :, o:o + width] = col < last_n[vals[:, :, nf]][..., None]
            f.write(buf[mask].tobytes())
            rows += b * hosts
            sum_first += int(vals[:, :, 0].sum())
            sum_last += int(vals[:, :, -1].sum())
    t0 = int(START.timestamp())
    return (rows, sum_first, sum_last, t0, t0 + (epochs - 1) * INTERVAL_S)


# --------------------------------------------------------------------------
# sizes

def tree_bytes(path, exclude_top=()):
    """Sum of st_size of the regular files under path (not following links),
    skipping the top-level entries named in exclude_top; (bytes, files)."""
    total = files = 0
    for dirpath, dirnames, filenames in os.walk(path):
        if dirpath == path:
            dirnames[:] = [d for d in dirnames if d not in exclude_top]
            filenames = [f for f in filenames if f not in exclude_top]
        for fn in filenames:
            try:
                st = os.lstat(os.path.join(dirpath, fn))
            except OSError:
                continue
            if not os.path.islink(os.path.join(dirpath, fn)):
                total += st.st_size
                files += 1
    return total, files


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def short_error(e):
    text = str(e).strip() or repr(e)
    first = text.splitlines()[0]
    return f"{type(e).__name__}: {first}"[:300]


# count, sum(usage_user), sum(usage_guest_nice), min(time) and max(time) as Unix seconds
CHECK_SQL = {
    "postgres": "SELECT count(*), sum(usage_user), sum(usage_guest_nice), extract(epoch FROM min(time)), "
                "extract(epoch FROM max(time)) FROM cpu",
    "duckdb": "SELECT count(*), sum(usage_user), sum(usage_guest_nice), epoch(min(time)), epoch(max(time)) FROM cpu",
    "chdb": "SELECT count(), sum(usage_user), sum(usage_guest_nice), toUnixTimestamp(min(time)), "
            "toUnixTimestamp(max(time)) FROM tsbs.cpu",
}
CHECK_SQL["brewric"] = CHECK_SQL["postgres"]


def check_content(r, got, expect):
    """Compares a system's (count, sums, min/max time) with what was generated."""
    try:
        got = tuple(int(round(float(x))) for x in got)
    except (TypeError, ValueError) as e:
        r.details.append(f"content check: cannot read {got!r}: {e}")
        return
    r.rows = got[0]
    if got == tuple(expect):
        r.details.append("content check OK (count, sum(usage_user), sum(usage_guest_nice), min/max(time) "
                         "equal the generated data)")
    else:
        names = ("count", "sum(usage_user)", "sum(usage_guest_nice)", "min(time)", "max(time)")
        diff = ", ".join(f"{n} {g} (expected {e})" for n, g, e in zip(names, got, expect) if g != e)
        r.details.append(f"WARNING: content differs from the generated data: {diff}")
        r.content_ok = False


class Result:
    """One row of the table (a system may give two: Brewric's two measures)."""

    def __init__(self, label, system):
        self.label = label
        self.system = system
        self.bytes = None
        self.error = None
        self.load_s = None   # the load itself
        self.finish_s = None  # VACUUM ANALYZE / CHECKPOINT / OPTIMIZE FINAL
        self.rows = None
        self.content_ok = True
        self.details = []


# --------------------------------------------------------------------------
# the systems

def copy_stdin(conn, csv_path, chunk):
    with conn.cursor() as cur:
        with cur.copy(f"COPY cpu({COPY_COLS}) FROM STDIN WITH (FORMAT csv)") as cp:
            with open(csv_path, "rb") as f:
                while True:
                    data = f.read(chunk)
                    if not data:
                        break
                    cp.write(data)


def run_brewric(args, csv_path, expected_rows, ctx):
    files = Result("brewric (files outside wal/)", "brewric")
    rel = Result("brewric (pg_total_relation_size)", "brewric")
    results = [files, rel]
    if not os.path.exists(args.brewricd):
        for r in results:
            r.error = f"no brewricd at {args.brewricd} (cargo build --release first)"
        return results
    b = None
    try:
        b = spine.Brewric(args.brewricd, args.shards, args.keep)
        data_dir = os.path.join(b.dir, "data")
        ctx["brewric_dir"] = data_dir
        with spine.connect(b.dsn) as conn:
            conn.execute(TSBS_CREATE)
            for stmt in TSBS_INDEXES:
                try:
                    conn.execute(stmt)
                    files.details.append(f"{stmt}: accepted")
                except Exception as e:
                    files.details.append(f"{stmt}: {short_error(e)} (table loaded without it)")
            out(f"[brewric] COPY cpu FROM STDIN (csv, {args.copy_chunk_kib} KiB CopyData chunks) ...")
            t0 = time.perf_counter()
            try:
                copy_stdin(conn, csv_path, args.copy_chunk_kib * 1024)
            except Exception as e:
                for r in results:
                    r.error = f"COPY failed: {short_error(e)}"
                return results
            files.load_s = rel.load_s = time.perf_counter() - t0
            out(f"[brewric]   {fmt_s(files.load_s)} ({expected_rows / files.load_s:,.0f} rows/s)")
            t0 = time.perf_counter()
            try:
                conn.execute("CHECKPOINT")
                files.finish_s = rel.finish_s = time.perf_counter() - t0
                out(f"[brewric] CHECKPOINT: {fmt_s(files.finish_s)}")
            except Exception as e:
                err = f"CHECKPOINT failed: {short_error(e)}"
                out(f"[brewric]   {err}")
                for r in results:
                    r.error = err
            try:
                check_content(files, conn.execute(CHECK_SQL["brewric"]).fetchone(), ctx["expect"])
            except Exception as e:
                files.details.append(f"content check query failed: {short_error(e)}")
                try:
                    files.rows = conn.execute("SELECT count(*) FROM cpu").fetchone()[0]
                except Exception as e2:
                    files.details.append(f"SELECT count(*) failed: {short_error(e2)}")
            rel.rows = files.rows
            try:
                size = conn.execute("SELECT pg_total_relation_size('cpu')").fetchone()[0]
                if rel.error is None:
                    rel.bytes = int(size)
                else:
                    rel.details.append(f"pg_total_relation_size('cpu') = {int(size):,} (without a CHECKPOINT)")
            except Exception as e:
                if rel.error is None:
                    rel.error = f"pg_total_relation_size failed: {short_error(e)}"
                else:
                    rel.details.append(f"pg_total_relation_size failed: {short_error(e)}")
        if files.error is None and args.cold_scan:
            try:
                cold_scan(args, b, data_dir, files)
            except Exception as e:
                files.details.append(f"cold scan failed: {short_error(e)}")
        nbytes, nfiles = tree_bytes(data_dir, exclude_top=("wal",))
        wal_bytes, wal_files = tree_bytes(os.path.join(data_dir, "wal")) if os.path.isdir(
            os.path.join(data_dir, "wal")) else (0, 0)
        if files.error is None:
            files.bytes = nbytes
        files.details.append(f"data dir outside wal/: {nbytes:,} bytes in {nfiles} files; wal/: {wal_bytes:,} bytes "
                             f"in {wal_files} files (not counted)")
        top = sorted(os.listdir(data_dir))
        files.details.append("data dir entries: " + ", ".join(top[:20]) + (" ..." if len(top) > 20 else ""))
        if b.proc.poll() is not None:
            files.details.append(f"brewricd exited with code {b.proc.returncode}")
        rss = proc_rss(b.proc.pid)
        if rss:
            files.details.append(f"brewricd resident memory at the end: {human(rss)}")
    except Exception as e:
        for r in results:
            if r.error is None and r.bytes is None:
                r.error = short_error(e)
        if b is not None and b.proc.poll() is not None:
            files.details.append(f"brewricd exited with code {b.proc.returncode}; log {b.log.name}")
    finally:
        if b is not None:
            try:
                b.log.flush()
                with open(b.log.name) as f:
                    lines = [ln.rstrip() for ln in f if ln.strip()]
                ctx["brewric_log"] = lines
            except OSError:
                pass
            try:
                b.stop()
            except Exception as e:
                out(f"WARNING: stopping brewricd: {e}")
    return results


def read_proc_io(pid):
    """/proc/<pid>/io as a dict (read_bytes: bytes the process caused to be fetched from storage)."""
    try:
        with open(f"/proc/{pid}/io") as f:
            return {k: int(v) for k, v in (ln.split(":") for ln in f)}
    except OSError:
        return {}


def cold_scan(args, b, data_dir, files):
    """Restarts brewricd on the loaded data (empty block cache), drops the OS page
    cache if allowed, and times a full scan of the ten float columns: MB/s read
    from disk through io_uring (the process's read_bytes) and segment bytes/s."""
    b.proc.kill()
    b.proc.wait()
    dropped = False
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        dropped = True
    except OSError:
        pass
    cmd = [args.brewricd, "--listen", "127.0.0.1:0", "--http", "off", "--ilp", "off", "--data-dir", data_dir]
    if args.shards:
        cmd += ["--shards", str(args.shards)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=b.log, text=True)
    b.proc = proc
    line = ""
    deadline = time.time() + 300
    while time.time() < deadline:
        line = proc.stdout.readline()
        if line.startswith("brewricd listening on "):
            break
        if line == "" and proc.poll() is not None:
            raise RuntimeError(f"brewricd exited with {proc.returncode} on restart")
    threading.Thread(target=lambda: proc.stdout.read(), daemon=True).start()
    host, port = line.strip().rsplit(" ", 1)[1].rsplit(":", 1)
    dsn = f"host={host} port={port} user=brewric dbname=brewric"
    cols = ", ".join(f"sum({c})" for c in FIELDS)
    with spine.connect(dsn) as conn:
        seg_bytes = conn.execute("SELECT pg_total_relation_size('cpu')").fetchone()[0]
        io0 = read_proc_io(proc.pid)
        t0 = time.perf_counter()
        conn.execute(f"SELECT count(*), {cols} FROM cpu").fetchone()
        cold = time.perf_counter() - t0
        io1 = read_proc_io(proc.pid)
        t0 = time.perf_counter()
        conn.execute(f"SELECT count(*), {cols} FROM cpu").fetchone()
        warm = time.perf_counter() - t0
    disk = io1.get("read_bytes", 0) - io0.get("read_bytes", 0)
    rows = files.rows or 0
    files.details.append(
        f"cold scan (restart{', page cache dropped' if dropped else ', page cache NOT dropped (no permission)'}): "
        f"count(*) + sum of 10 float8 columns in {cold:.2f} s = {rows / cold / 1e6:.1f} M rows/s; "
        f"{disk / 1e6:.1f} MB read from disk = {disk / 1e6 / cold:.0f} MB/s; "
        f"segment bytes {seg_bytes / 1e6:.1f} MB / {cold:.2f} s = {seg_bytes / 1e6 / cold:.0f} MB/s")
    files.details.append(f"warm scan (block cache): {warm:.2f} s = {rows / warm / 1e6:.1f} M rows/s")
    out(f"[brewric] {files.details[-2]}")
    out(f"[brewric] {files.details[-1]}")


def proc_rss(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def run_postgres(args, csv_path, expected_rows, ctx):
    r = Result("postgresql 15 (table + indexes)", "postgres")
    heap = Result("postgresql 15 (heap only)", "postgres")
    pg = None
    try:
        pg = spine.Postgres(args.keep)
        ctx["postgres_version"] = pg.version
        # the server runs as the postgres user when we are root: let it read the CSV
        os.chmod(os.path.dirname(csv_path), 0o755)
        os.chmod(csv_path, 0o644)
        with spine.connect(pg.dsn) as conn:
            conn.execute(TSBS_CREATE)
            for stmt in TSBS_INDEXES:
                conn.execute(stmt)
            out("[postgres] COPY cpu FROM '<csv>' (server-side, indexes in place) ...")
            t0 = time.perf_counter()
            conn.execute(f"COPY cpu({COPY_COLS}) FROM '{csv_path}' WITH (FORMAT csv)")
            r.load_s = heap.load_s = time.perf_counter() - t0
            out(f"[postgres]   {fmt_s(r.load_s)} ({expected_rows / r.load_s:,.0f} rows/s)")
            t0 = time.perf_counter()
            conn.execute("VACUUM ANALYZE cpu")
            r.finish_s = heap.finish_s = time.perf_counter() - t0
            out(f"[postgres] VACUUM ANALYZE: {fmt_s(r.finish_s)}")
            total, rel, idx = conn.execute(
                "SELECT pg_total_relation_size('cpu'), pg_relation_size('cpu'), pg_indexes_size('cpu')").fetchone()
            check_content(r, conn.execute(CHECK_SQL["postgres"]).fetchone(), ctx["expect"])
            n = heap.rows = r.rows
            r.bytes, heap.bytes = int(total), int(rel)
            for name, size in conn.execute(
                    "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index "
                    "WHERE indrelid = 'cpu'::regclass ORDER BY 1").fetchall():
                r.details.append(f"index {name}: {int(size):,} bytes ({int(size) / max(n, 1):.1f} B/row)")
            r.details.append(f"heap {int(rel):,} bytes, indexes {int(idx):,}, other (TOAST, FSM, VM) "
                             f"{int(total) - int(rel) - int(idx):,}")
            ctx["postgres_settings"] = ", ".join(
                f"{k}={conn.execute(f'SHOW {k}').fetchone()[0]}"
                for k in ("shared_buffers", "max_wal_size", "block_size", "server_version"))
    except Exception as e:
        for x in (r, heap):
            if x.bytes is None:
                x.error = short_error(e)
    finally:
        if pg is not None:
            try:
                pg.stop()
            except Exception as e:
                out(f"WARNING: stopping PostgreSQL: {e}")
    return [r, heap]


def run_duckdb(args, csv_path, expected_rows, ctx):
    r = Result("duckdb (database file)", "duckdb")
    try:
        import duckdb
        ctx["duckdb_version"] = duckdb.__version__
        path = os.path.join(ctx["work"], "tsbs.duckdb")
        for p in (path, path + ".wal"):
            if os.path.exists(p):
                os.remove(p)
        conn = duckdb.connect(path)
        try:
            conn.execute("CREATE TABLE cpu (time TIMESTAMPTZ, tags_id INTEGER, "
                         + ", ".join(f"{f} DOUBLE" for f in FIELDS) + ", additional_tags JSON DEFAULT NULL)")
            out("[duckdb] COPY cpu FROM '<csv>' ...")
            t0 = time.perf_counter()
            conn.execute(f"COPY cpu({COPY_COLS}) FROM '{csv_path}' (FORMAT csv, HEADER false)")
            r.load_s = time.perf_counter() - t0
            out(f"[duckdb]   {fmt_s(r.load_s)} ({expected_rows / r.load_s:,.0f} rows/s)")
            t0 = time.perf_counter()
            conn.execute("CHECKPOINT")
            r.finish_s = time.perf_counter() - t0
            check_content(r, conn.execute(CHECK_SQL["duckdb"]).fetchone(), ctx["expect"])
            ctx["duckdb_settings"] = "threads=%s, memory_limit=%s" % conn.execute(
                "SELECT current_setting('threads'), current_setting('memory_limit')").fetchone()
            db = conn.execute("PRAGMA database_size").fetchone()
            r.details.append(f"PRAGMA database_size: block_size {db[2]}, total_blocks {db[3]}, used_blocks {db[4]}, "
                             f"free_blocks {db[5]} (used blocks alone: {db[2] * db[4] / max(r.rows, 1):.2f} B/row)")
        finally:
            conn.close()
        size = os.path.getsize(path)
        wal = os.path.getsize(path + ".wal") if os.path.exists(path + ".wal") else 0
        r.bytes = size + wal
        r.details.append(f"file {size:,} bytes" + (f" + .wal {wal:,}" if wal else ", no .wal left"))
    except Exception as e:
        r.error = short_error(e)
    return [r]


def run_chdb(args, csv_path, expected_rows, ctx):
    r = Result("chdb (MergeTree, OPTIMIZE FINAL)", "chdb")
    sess = None
    try:
        from chdb import session
        path = os.path.join(ctx["work"], "chdb")
        shutil.rmtree(path, ignore_errors=True)
        sess = session.Session(path)
        ctx["chdb_version"] = sess.query("SELECT version()", "CSV").bytes().decode().strip().strip('"')
        sess.query("CREATE DATABASE IF NOT EXISTS tsbs")
        sess.query("CREATE TABLE tsbs.cpu (time DateTime64(6, 'UTC'), tags_id Int32, "
                   + ", ".join(f"{f} Float64" for f in FIELDS)
                   + ", additional_tags Nullable(String) DEFAULT NULL) ENGINE = MergeTree ORDER BY (tags_id, time)")
        structure = "time DateTime64(6, ''UTC''), tags_id Int32, " + ", ".join(f"{f} Float64" for f in FIELDS)
        out("[chdb] INSERT INTO cpu SELECT FROM file('<csv>', CSV) ...")
        t0 = time.perf_counter()
        sess.query(f"INSERT INTO tsbs.cpu ({COPY_COLS}) SELECT * FROM file('{csv_path}', 'CSV', '{structure}') "
                   "SETTINGS date_time_input_format = 'best_effort'")
        r.load_s = time.perf_counter() - t0
        out(f"[chdb]   {fmt_s(r.load_s)} ({expected_rows / r.load_s:,.0f} rows/s)")
        parts_before = int(sess.query("SELECT count() FROM system.parts WHERE database = 'tsbs' AND table = 'cpu' "
                                      "AND active", "CSV").bytes().decode().strip())
        t0 = time.perf_counter()
        sess.query("OPTIMIZE TABLE tsbs.cpu FINAL")
        r.finish_s = time.perf_counter() - t0
        out(f"[chdb] OPTIMIZE TABLE FINAL: {fmt_s(r.finish_s)}")
        line = sess.query("SELECT sum(bytes_on_disk), count(), sum(rows) FROM system.parts "
                          "WHERE database = 'tsbs' AND table = 'cpu' AND active", "CSV").bytes().decode().strip()
        nbytes, nparts, _prow = (int(x) for x in line.split(","))
        r.bytes = nbytes
        check_content(r, sess.query(CHECK_SQL["chdb"], "CSV").bytes().decode().strip().split(","), ctx["expect"])
        r.details.append(f"active parts: {nparts} after OPTIMIZE FINAL ({parts_before} before)")
        cols = sess.query("SELECT name, data_compressed_bytes, data_uncompressed_bytes FROM system.columns "
                          "WHERE database = 'tsbs' AND table = 'cpu' ORDER BY position", "CSV").bytes().decode()
        per = []
        for ln in cols.strip().splitlines():
            name, comp, _unc = ln.split(",")
            per.append(f"{name.strip(chr(34))} {int(comp) / max(r.rows, 1):.2f}")
        r.details.append("compressed B/row per column (system.columns): " + ", ".join(per))
    except Exception as e:
        r.error = short_error(e)
    finally:
        if sess is not None:
            try:
                sess.close()
            except Exception:
                pass
    return [r]


def run_parquet(args, csv_path, expected_rows, ctx):
    r = Result("parquet (pyarrow, zstd)", "parquet")
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq
        ctx["pyarrow_version"] = pa.__version__
        path = os.path.join(ctx["work"], "tsbs.parquet")
        types = {"time": pa.timestamp("us", tz="UTC"), "tags_id": pa.int32()}
        types.update({f: pa.float64() for f in FIELDS})
        out("[parquet] read CSV, sort by (tags_id, time), write zstd ...")
        t0 = time.perf_counter()
        table = pacsv.read_csv(csv_path, read_options=pacsv.ReadOptions(column_names=COLUMNS, block_size=1 << 24),
                               convert_options=pacsv.ConvertOptions(column_types=types))
        t_read = time.perf_counter() - t0
        table = table.sort_by([("tags_id", "ascending"), ("time", "ascending")])
        table = table.append_column("additional_tags", pa.nulls(table.num_rows, pa.string()))
        import pyarrow.compute as pcomp
        tsec = table.column("time").cast(pa.int64())
        got = (table.num_rows, pcomp.sum(table.column("usage_user")).as_py(),
               pcomp.sum(table.column("usage_guest_nice")).as_py(),
               pcomp.min(tsec).as_py() // 1_000_000, pcomp.max(tsec).as_py() // 1_000_000)
        t_sort = time.perf_counter() - t0 - t_read
        pq.write_table(table, path, compression="zstd")
        r.load_s = time.perf_counter() - t0
        del table, tsec
        out(f"[parquet]   {fmt_s(r.load_s)} (read {t_read:.1f} s, sort {t_sort:.1f} s, write "
            f"{r.load_s - t_read - t_sort:.1f} s; {expected_rows / r.load_s:,.0f} rows/s)")
        r.bytes = os.path.getsize(path)
        check_content(r, got, ctx["expect"])
        md = pq.ParquetFile(path).metadata
        r.details.append(f"{md.num_row_groups} row groups of up to {md.row_group(0).num_rows:,} rows; "
                         f"pyarrow {pa.__version__} defaults (dictionary encoding on, zstd default level)")
        per = {}
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            for c in range(rg.num_columns):
                cc = rg.column(c)
                per[cc.path_in_schema] = per.get(cc.path_in_schema, 0) + cc.total_compressed_size
        r.details.append("compressed B/row per column: "
                         + ", ".join(f"{k} {v / max(r.rows, 1):.2f}" for k, v in per.items()))
    except Exception as e:
        r.error = short_error(e)
    return [r]


RUNNERS = {
    "brewric": run_brewric,
    "postgres": run_postgres,
    "duckdb": run_duckdb,
    "chdb": run_chdb,
    "parquet": run_parquet,
}


# --------------------------------------------------------------------------

def parse_list(text, what, known=SYSTEMS):
    items = [s.strip() for s in text.split(",") if s.strip()]
    for s in items:
        if s not in known:
            sys.exit(f"unknown system {s!r} in {what} (known: {', '.join(known)})")
    return items


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--hours", type=int, default=48)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="100 hosts x 6 hours (216,000 rows)")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--skip", default="", help="systems to leave out, e.g. brewric")
    ap.add_argument("--brewricd", "--brewric-bin", dest="brewricd",
                    default=os.path.join(ROOT, "target", "release", "brewricd"))
    ap.add_argument("--shards", type=int, default=0, help="brewricd --shards (default: its own default)")
    ap.add_argument("--work-dir", default=None, help="where the CSV and databases go (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="leave the work and data directories behind")
    ap.add_argument("--no-cold-scan", dest="cold_scan", action="store_false",
                    help="skip restarting brewricd for a cold-cache scan of the loaded table")
    ap.add_argument("--out", default=None, help="results file (default tools/results/bench_compression-<date>.txt)")
    ap.add_argument("--copy-chunk-kib", type=int, default=1024)
    args = ap.parse_args()
    if args.quick:
        args.hosts, args.hours = 100, 6
    if args.hosts < 1 or args.hours < 1:
        sys.exit("--hosts and --hours must be at least 1")
    skip = parse_list(args.skip, "--skip")
    systems = [s for s in parse_list(args.systems, "--systems") if s not in skip]
    if not systems:
        sys.exit("no system left to measure")
    args.brewricd = os.path.abspath(args.brewricd)

    ensure_packages(["numpy"] + [p for s in systems for p in NEEDS[s]])
    import numpy as np

    started = time.time()
    env = spine.environment()
    env["load"] = "load average at start %.2f %.2f %.2f (1/5/15 min)" % os.getloadavg()
    out(f"$ python3 tools/bench_compression.py {' '.join(sys.argv[1:])}")

    work = args.work_dir or tempfile.mkdtemp(prefix="bench-compression-")
    os.makedirs(work, exist_ok=True)
    work = os.path.abspath(work)
    ctx = {"work": work}
    csv_path = os.path.join(work, "cpu.csv")
    epochs = args.hours * 3600 // INTERVAL_S
    expected = epochs * args.hosts
    steps = []  # (step, seconds)
    results = []
    try:
        out(f"[data] generating {args.hosts:,} hosts x {args.hours} h = {expected:,} rows (seed {args.seed}) "
            f"into {csv_path} ...")
        t0 = time.perf_counter()
        expect = generate_csv(csv_path, args.hosts, args.hours, args.seed)
        rows = expect[0]
        ctx["expect"] = expect
        dt = time.perf_counter() - t0
        csv_bytes = os.path.getsize(csv_path)
        steps.append(("generate CSV", dt))
        out(f"[data]   {rows:,} rows, {human(csv_bytes)} ({csv_bytes / rows:.1f} B/row as CSV) in {fmt_s(dt)}")
        with open(csv_path, "rb") as f:
            head = [f.readline().decode().rstrip() for _ in range(2)]
        out(f"[data]   first lines: {head[0]} | {head[1]}")

        for s in systems:
            t0 = time.perf_counter()
            try:
                rs = RUNNERS[s](args, csv_path, rows, ctx)
            except Exception as e:  # a runner's own bug: keep going with the others
                traceback.print_exc()
                rs = [Result(s, s)]
                rs[0].error = short_error(e)
            dt = time.perf_counter() - t0
            steps.append((s, dt))
            for r in rs:
                if r.error:
                    out(f"[{s}]   {r.label}: ERROR {r.error}")
                elif r.bytes is not None:
                    out(f"[{s}]   {r.label}: {r.bytes:,} bytes = {r.bytes / rows:.2f} B/row")
                if r.rows is not None and r.rows != rows and r.content_ok:
                    r.details.append(f"WARNING: {r.rows:,} rows loaded, expected {rows:,}")
                for d in r.details:
                    if d.startswith("WARNING"):
                        out(f"[{s}]   {d}")
            out(f"[{s}]   step took {fmt_s(dt)}")
            results.extend(rs)
    finally:
        if not args.keep and not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
        elif not args.keep and args.work_dir:
            for p in ("cpu.csv", "tsbs.duckdb", "tsbs.duckdb.wal", "tsbs.parquet"):
                if os.path.exists(os.path.join(work, p)):
                    os.remove(os.path.join(work, p))
            shutil.rmtree(os.path.join(work, "chdb"), ignore_errors=True)

    report(args, env, ctx, results, rows, csv_bytes, steps, time.time() - started, np)

    path = args.out or os.path.join(ROOT, "tools", "results", "bench_compression-%s%s.txt" % (
        datetime.date.today().isoformat(), "-quick" if args.quick else ""))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(LOG) + "\n")
    print(f"\nwritten to {path}")


def report(args, env, ctx, results, rows, csv_bytes, steps, total_s, np):
    out()
    out(f"Environment (run took {fmt_s(total_s)})")
    for k, v in env.items():
        out(f"  {k:9} {v}")
    out(f"  {'packages':9} numpy {np.__version__}"
        + "".join(f", {n} {ctx[k]}" for n, k in (("duckdb", "duckdb_version"), ("pyarrow", "pyarrow_version"))
                  if k in ctx)
        + (f", chdb {ctx['chdb_version']} (ClickHouse engine)" if "chdb_version" in ctx else ""))
    try:
        import psycopg
        out(f"  {'psycopg':9} {psycopg.__version__}")
    except ImportError:
        pass
    if any(r.system == "brewric" for r in results):
        b = args.brewricd
        if os.path.exists(b):
            mtime = datetime.datetime.fromtimestamp(os.path.getmtime(b)).strftime("%Y-%m-%d %H:%M")
            release = os.sep + "release" + os.sep in b
            out(f"  {'brewricd':9} {b} ({'release' if release else 'NOT a release build'}, built {mtime}), "
                f"shards={args.shards or 'default'}")
        for ln in ctx.get("brewric_log", [])[:10]:
            out(f"  {'':9} log: {ln}")
    if "postgres_version" in ctx:
        out(f"  {'postgres':9} {ctx['postgres_version']}; {ctx.get('postgres_settings', '')}")
    if "duckdb_settings" in ctx:
        out(f"  {'duckdb':9} {ctx['duckdb_settings']}")
    import resource
    out(f"  {'memory':9} this driver's peak RSS {human(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)} "
        "(includes in-process DuckDB, chDB and pyarrow)")
    out(f"  {'data':9} TSBS cpu-only: {args.hosts:,} hosts x {args.hours} h every {INTERVAL_S} s from "
        f"{START:%Y-%m-%dT%H:%M:%SZ}, seed {args.seed}: {rows:,} rows; CSV {csv_bytes:,} bytes")

    out()
    out("Step timings")
    for name, s in steps:
        out(f"  {name:14} {fmt_s(s)}")
    out(f"  {'load / finish':14} per system below (finish = VACUUM ANALYZE, CHECKPOINT or OPTIMIZE FINAL)")

    # Brewric's reference size for the ratios: its files outside wal/ (bytes that are on disk)
    ref = next((r for r in results if r.system == "brewric" and r.bytes and not r.error), None)
    out()
    out(f"Bytes on disk per row, TSBS cpu-only, {rows:,} rows (raw: {RAW_BYTES_PER_ROW} B/row = time 8 + "
        f"tags_id 4 + 10 x float8)")
    hdr = (f"{'system':34}{'bytes on disk':>16}{'B/row':>9}{'vs raw':>9}{'brewric x':>11}"
           f"{'load s':>9}{'rows/s':>12}{'finish s':>10}")
    out(hdr)
    out("-" * len(hdr))
    for r in results:
        if r.error or r.bytes is None:
            out(f"{r.label:34}  ERROR: {r.error or 'no size'}")
            if r.load_s:
                out(f"{'':34}{'':16}{'':9}{'':9}{'':11}{r.load_s:>9.1f}{rows / r.load_s:>12,.0f}"
                    + (f"{r.finish_s:>10.1f}" if r.finish_s is not None else ""))
            continue
        bpr = r.bytes / rows
        line = (f"{r.label:34}{r.bytes:>16,}{bpr:>9.2f}{RAW_BYTES_PER_ROW / bpr:>8.1f}x"
                + (f"{r.bytes / ref.bytes:>10.2f}x" if ref else f"{'-':>11}"))
        line += f"{r.load_s:>9.1f}{rows / r.load_s:>12,.0f}" if r.load_s else f"{'':>9}{'':>12}"
        line += f"{r.finish_s:>10.1f}" if r.finish_s is not None else ""
        out(line)
    out()
    out("vs raw: 92 B/row divided by the system's B/row (compression factor). brewric x: the system's bytes")
    out("divided by Brewric's files outside wal/ (how many times smaller Brewric is; above 1 = Brewric smaller).")
    out("load s / rows/s: the load alone (information only; different loaders); finish s: the flush after it.")

    details = [r for r in results if r.details]
    if details:
        out()
        out("Details")
        for r in details:
            for d in r.details:
                out(f"  {r.label}: {d}")

    out()
    out(f"Target (storage issue): Brewric <= {TARGET_BYTES_PER_ROW:g} B/row (>= {RAW_BYTES_PER_ROW / TARGET_BYTES_PER_ROW:.0f}x "
        f"vs {RAW_BYTES_PER_ROW} raw bytes)")
    brew = [r for r in results if r.system == "brewric"]
    if not brew:
        out("  Brewric not measured in this run")
    for r in brew:
        if r.error or r.bytes is None:
            out(f"  {r.label}: not measured ({r.error})")
        else:
            bpr = r.bytes / rows
            out(f"  {r.label}: {bpr:.2f} B/row -> {'MET' if bpr <= TARGET_BYTES_PER_ROW else 'NOT MET'}")

    out()
    out("Fairness: one CSV for all, its content checked in each system (see Details); TSBS's logical types")
    out("(timestamptz, integer, 10 x float8, jsonb all NULL); PostgreSQL, DuckDB and Brewric get the rows in TSBS's")
    out("time-then-host order, chDB sorts by its ORDER BY (tags_id, time), Parquet is sorted by (tags_id, time);")
    out("PostgreSQL has TSBS's two indexes, built during the load; chDB uses default codecs (LZ4), Parquet pyarrow's")
    out("defaults with zstd. Sizes are st_size after each system's flush. Load times are information only (shared")
    out("2-core VM).")


if __name__ == "__main__":
    main()
