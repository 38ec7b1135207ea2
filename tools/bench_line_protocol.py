#!/usr/bin/env python3
"""Line protocol ingest, end to end: TSBS cpu data as InfluxDB line protocol
loaded into brewricd three ways, each on a fresh server, rows/s measured from
the first byte sent until `SELECT count(*)` returns every row:

  http   TSBS's influx loader's shape: 4 workers, each one keep-alive
         connection, POST /write?db=benchmark&consistency=all with gzip bodies
         of 10,000 lines (bodies are gzipped before the clock starts).
  ilp    ILP over TCP, QuestDB's loader's shape: 4 connections, each writes its
         10,000-line batches with one sendall, never reads.
  copy   COPY public FROM STDIN WITH (FORMAT line_protocol) through psql's
         \\copy, 4 in parallel, one part of the file each.

Target (issue 7): ILP/TCP >= 800,000 rows/s with the loader on the same machine.

Usage: python3 tools/bench_line_protocol.py [--hosts 200] [--hours 24]
       [--workers 4] [--batch 10000] [--shards 2] [--modes http,ilp,copy]
       [--brewricd target/release/brewricd]
Needs: a release build (built here when missing), psql.
Data: TSBS's cpu-only devops shape (10 tags, 10 integer fields with the `i`
suffix, 10 s interval from 2016-01-01, ~340 bytes a line), seeded.
"""

import argparse
import gzip
import http.client
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import bench_spine as spine  # noqa: E402
import bench_tsbs as tsbs  # noqa: E402

ROOT = spine.ROOT
FIELDS = ["usage_user", "usage_system", "usage_idle", "usage_nice", "usage_iowait", "usage_irq",
          "usage_softirq", "usage_steal", "usage_guest", "usage_guest_nice"]
START_NS = 1451606400 * 10**9  # 2016-01-01T00:00:00Z
TARGET_ILP = 800_000


def generate(hosts, hours, seed):
    """TSBS cpu lines (a list of bytes lines, time-major as TSBS emits them)."""
    rng = random.Random(seed)
    tags = tsbs.make_tags(hosts, seed)
    prefixes = []
    for t in tags:
        pairs = ",".join(f"{k}={v}" for k, v in zip(tsbs.TAG_COLS, t))
        prefixes.append(f"cpu,{pairs} ")
    state = [[rng.random() * 100 for _ in FIELDS] for _ in range(hosts)]
    lines = []
    for e in range(hours * 360):
        ts = START_NS + e * 10 * 10**9
        for h in range(hosts):
            s = state[h]
            fields = ",".join(f"{k}={int(v)}i" for k, v in zip(FIELDS, s))
            lines.append(f"{prefixes[h]}{fields} {ts}\n".encode())
            for i in range(len(s)):
                s[i] = min(100.0, max(0.0, s[i] + rng.gauss(0, 1)))
    return lines


def batches(lines, size):
    return [b"".join(lines[i:i + size]) for i in range(0, len(lines), size)]


class Server:
    """A brewricd on fresh data with its PostgreSQL, HTTP and ILP ports."""

    def __init__(self, binary, shards):
        self.dir = tempfile.mkdtemp(prefix="brewric-lp-bench-")
        cmd = [binary, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--ilp", "127.0.0.1:0",
               "--shards", str(shards), "--data-dir", os.path.join(self.dir, "data")]
        self.log = open(os.path.join(self.dir, "brewricd.log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True)
        addrs = {}
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if line.startswith("brewricd ") and " on " in line:
                what, addr = line.strip()[len("brewricd "):].split(" on ", 1)
                addrs[what] = addr
                if what == "listening":
                    break
            if line == "" and self.proc.poll() is not None:
                raise RuntimeError(f"brewricd exited; see {self.log.name}")
        threading.Thread(target=lambda: self.proc.stdout.read(), daemon=True).start()
        self.pg = addrs["listening"].rsplit(":", 1)
        self.http = addrs["http"].rsplit(":", 1)
        self.ilp = addrs["ilp"].rsplit(":", 1)

    def psql(self, sql):
        return subprocess.run(["psql", "-X", "-At", "-h", self.pg[0], "-p", self.pg[1], "-U", "brewric",
                               "-d", "brewric", "-c", sql], capture_output=True, text=True).stdout.strip()

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_count(server, table, rows, deadline_s=600):
    """Polls until table holds `rows` rows; returns the time it did."""
    end = time.time() + deadline_s
    while time.time() < end:
        got = server.psql(f"SELECT count(*) FROM {table}")
        if got.isdigit() and int(got) >= rows:
            return time.perf_counter()
        time.sleep(0.02)
    raise RuntimeError(f"{table} did not reach {rows} rows (last count {got})")


def load_http(server, bodies, workers):
    host, port = server.http
    errors = []

    def worker(part):
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        for body in part:
            while True:
                conn.request("POST", "/write?consistency=all&db=benchmark", body=body,
                             headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"})
                r = conn.getresponse()
                text = r.read()
                if r.status == 503:
                    time.sleep(0.05)
                    continue
                if r.status != 204:
                    errors.append(f"{r.status} {text[:200]!r}")
                break
        conn.close()

    threads = [threading.Thread(target=worker, args=(bodies[w::workers],)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError("HTTP write failed: " + errors[0])


def load_ilp(server, bodies, workers):
    host, port = server.ilp

    def worker(part):
        s = socket.create_connection((host, int(port)))
        for body in part:
            s.sendall(body)
        s.shutdown(socket.SHUT_WR)
        s.recv(1)  # the server closes once it has written everything
        s.close()

    threads = [threading.Thread(target=worker, args=(bodies[w::workers],)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def load_copy(server, files):
    procs = [subprocess.Popen(["psql", "-X", "-v", "ON_ERROR_STOP=1", "-h", server.pg[0], "-p", server.pg[1],
                               "-U", "brewric", "-d", "brewric", "-c",
                               f"\\copy public from '{f}' with (format line_protocol)"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for f in files]
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError("COPY failed: " + err.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--hours", type=int, default=24)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3, help="runs per mode; the median is reported")
    ap.add_argument("--modes", default="http,ilp,copy")
    ap.add_argument("--seed", type=int, default=123)
    ap.add_argument("--brewricd", default=os.path.join(ROOT, "target", "release", "brewricd"))
    args = ap.parse_args()

    if not os.path.exists(args.brewricd):
        print("no release build: cargo build --release ...", flush=True)
        subprocess.check_call(["cargo", "build", "--release", "--bin", "brewricd"], cwd=ROOT)
    t0 = time.perf_counter()
    lines = generate(args.hosts, args.hours, args.seed)
    raw = batches(lines, args.batch)
    total = len(lines)
    nbytes = sum(len(b) for b in raw)
    print(f"data: {total:,} TSBS cpu lines ({args.hosts} hosts x {args.hours} h), {nbytes / 1e6:.0f} MB, "
          f"{nbytes / total:.0f} B/line; generated in {time.perf_counter() - t0:.1f} s", flush=True)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    gz = [gzip.compress(b, 1) for b in raw] if "http" in modes else []
    tmp = tempfile.mkdtemp(prefix="brewric-lp-copy-")
    files = []
    if "copy" in modes:
        for w in range(args.workers):
            path = os.path.join(tmp, f"part{w}.lp")
            with open(path, "wb") as f:
                for b in raw[w::args.workers]:
                    f.write(b)
            files.append(path)

    results = {}
    for mode in modes:
        rates = []
        for run in range(args.runs):
            server = Server(args.brewricd, args.shards)
            try:
                table = "benchmark.cpu" if mode == "http" else "public.cpu"
                start = time.perf_counter()
                if mode == "http":
                    load_http(server, gz, args.workers)
                elif mode == "ilp":
                    load_ilp(server, raw, args.workers)
                elif mode == "copy":
                    load_copy(server, files)
                else:
                    sys.exit(f"unknown mode {mode}")
                done = wait_count(server, table, total)
                rate = total / (done - start)
                rates.append(rate)
                check = server.psql(f"SELECT count(DISTINCT hostname), sum(usage_user) FROM {table}")
                print(f"  {mode:5} run {run + 1}: {rate:12,.0f} rows/s  ({done - start:.2f} s; hosts|sum(usage_user) {check})",
                      flush=True)
            finally:
                server.stop()
        results[mode] = statistics.median(rates)
    shutil.rmtree(tmp, ignore_errors=True)

    print()
    print("environment:")
    for k, v in spine.environment().items():
        print(f"  {k:8} {v}")
    print()
    print(f"{'path':6} {'rows/s (median)':>16} {'vs COPY':>8}")
    for mode, rate in results.items():
        ratio = f"{rate / results['copy']:.2f}x" if "copy" in results else "-"
        print(f"{mode:6} {rate:16,.0f} {ratio:>8}")
    if "ilp" in results:
        verdict = "MET" if results["ilp"] >= TARGET_ILP else "NOT MET"
        print(f"\ntarget: ILP/TCP >= {TARGET_ILP:,} rows/s: {verdict} ({results['ilp']:,.0f})")


if __name__ == "__main__":
    main()
