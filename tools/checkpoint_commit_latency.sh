#!/usr/bin/env bash
# Commit latency while a checkpoint writes segments: a 1-shard brewricd loads an
# MCAP fleet (tools/mcap_fleet.rs) into memtables, then one session INSERTs a
# row at a time (each commit fsynced, 4 ms apart) while CHECKPOINT writes the
# fleet's segments. Prints the checkpoint's time and the INSERTs' latency
# percentiles, per round; with two binaries the rounds alternate them, so that
# a comparison pairs runs made in the same phase of a noisy host.
#
#   bash tools/checkpoint_commit_latency.sh FLEET_DIR [ROUNDS] [BREWRICD ...]
#
# FLEET_DIR holds the *.mcap files (e.g. /tmp/fleet24 from
# `cargo run --release --example mcap_fleet -- --out /tmp/fleet24`);
# BREWRICD defaults to target/release/brewricd. Needs psql.
set -euo pipefail
cd "$(dirname "$0")/.."
FLEET=${1:?usage: checkpoint_commit_latency.sh FLEET_DIR [ROUNDS] [BREWRICD ...]}
ROUNDS=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=(target/release/brewricd)
PORT=5597
echo "git $(git rev-parse --short HEAD) | $(rustc -V) | $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) | $(nproc) cores | $(free -g | awk '/Mem:/{print $2}') GiB"

one_round() {
    local bin=$1 dir
    dir=$(mktemp -d /tmp/brewric-ckpt-lat-XXXXXX)
    "$bin" --listen 127.0.0.1:$PORT --http off --ilp off --shards 1 --data-dir "$dir/data" >"$dir/out.log" 2>&1 &
    local pid=$!
    for _ in $(seq 100); do grep -q listening "$dir/out.log" && break; sleep 0.1; done
    local psql=(psql -X -q -h 127.0.0.1 -p $PORT -U brewric -d brewric)
    "${psql[@]}" -c "CREATE TABLE t (ts timestamptz, v int)"
    local copies=()
    for f in "$FLEET"/*.mcap; do copies+=(-c "COPY fleet FROM '$f' WITH (FORMAT mcap)"); done
    "${psql[@]}" "${copies[@]}"
    { echo '\timing on'; for i in $(seq 400); do echo "INSERT INTO t VALUES (now(), $i);"; echo "SELECT pg_sleep(0.004);"; done; } >"$dir/inserts.sql"
    "${psql[@]}" -f "$dir/inserts.sql" >"$dir/inserts.out" 2>&1 &
    local inserts=$!
    sleep 0.3
    local start end
    start=$(date +%s.%N)
    "${psql[@]}" -c CHECKPOINT
    end=$(date +%s.%N)
    wait $inserts
    python3 - "$dir/inserts.out" "$start" "$end" "$bin" <<'PY'
import re, sys
times = [float(t) for t in re.findall(r"Time: ([\d.]+) ms", open(sys.argv[1]).read())]
ins = sorted(times[0::2])
n = len(ins)
print(f"{sys.argv[4]}: checkpoint {float(sys.argv[3]) - float(sys.argv[2]):.2f} s; {n} INSERTs: "
      f"p50 {ins[n // 2]:.2f} ms, p90 {ins[n * 9 // 10]:.2f}, p99 {ins[n * 99 // 100]:.2f}, max {ins[-1]:.2f}")
PY
    kill $pid
    wait $pid 2>/dev/null || true
    rm -rf "$dir"
}

for _ in $(seq "$ROUNDS"); do
    for bin in "${BINS[@]}"; do one_round "$bin"; done
done
