#!/usr/bin/env bash
# What ALTER TABLE … ADD COLUMN costs on a table holding rows in segment files
# and in the memtable: starts the given brewricd builds in turn on a fresh
# data directory, loads ROWS rows (two fifths flushed by a CHECKPOINT, the
# rest in memory), then times three ADD COLUMNs of a nullable column without
# a default (psql's round trip included) and checks the rows read NULL there.
#
#   bash tools/add_column_cost.sh [ROWS] BREWRICD [BREWRICD…]
#   e.g. bash tools/add_column_cost.sh 5000000 /tmp/brewricd-old target/release/brewricd
set -euo pipefail
ROWS=${1:?rows}; shift
PORT=55433
for BIN in "$@"; do
  D=$(mktemp -d /tmp/brewric-add-column-XXXXXX)
  "$BIN" --listen 127.0.0.1:$PORT --data-dir "$D" > "$D.log" 2>&1 &
  PID=$!
  P="psql -h 127.0.0.1 -p $PORT -U brewric -d postgres -Atq"
  for _ in $(seq 50); do $P -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.2; done
  FLUSHED=$((ROWS * 2 / 5))
  $P -c "CREATE TABLE t (time timestamptz, host integer, v double precision, s text)"
  $P -c "INSERT INTO t SELECT timestamptz '2026-01-01' + g * interval '1 second', g % 100, g * 0.5, 'host ' || (g % 100) FROM generate_series(1, $FLUSHED) g"
  $P -c "CHECKPOINT"
  $P -c "INSERT INTO t SELECT timestamptz '2026-03-01' + g * interval '1 second', g % 100, g * 0.5, 'host ' || (g % 100) FROM generate_series(1, $((ROWS - FLUSHED))) g"
  for c in a b c; do
    s=$(date +%s%N); $P -c "ALTER TABLE t ADD COLUMN $c integer"; e=$(date +%s%N)
    echo "$BIN: ADD COLUMN $c on $ROWS rows: $(( (e - s) / 1000000 )) ms"
  done
  echo "$BIN: rows, non-NULL a: $($P -c "SELECT count(*) || ', ' || count(a) FROM t")"
  kill "$PID"; wait "$PID" 2>/dev/null || true
  rm -rf "$D" "$D.log"
done
echo "git SHA: $(git rev-parse HEAD 2>/dev/null || echo unknown); $(rustc -V); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); cores: $(nproc); RAM: $(free -g | awk '/Mem:/{print $2}') GiB"
