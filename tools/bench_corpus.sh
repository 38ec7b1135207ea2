#!/usr/bin/env bash
# The sqllogictest corpus as a benchmark: the same runner (tests/sqllogictest.rs),
# the same files, each in a fresh database, against brewricd (release, 2 shards)
# and against a throw-away PostgreSQL 15 on this machine (tools/tests_on_postgres.sh),
# over the simple protocol. Prints each system's passed/failed records and
# records per second (statements and queries executed, skipped ones excluded),
# the ratio, and the environment.
#
#   bash tools/bench_corpus.sh                      # the whole ../shared/sqllogictest corpus
#   BREWRIC_SLT_FILTER=select bash tools/bench_corpus.sh   # files whose path contains "select"
#
# Needs the PostgreSQL 15 server binaries (apt-get install -y postgresql; the
# script installs them when run as root). Records/s includes each file's
# CREATE DATABASE and connection set-up, the same for both systems.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${BREWRIC_SLT_DIR:-$(cd .. && pwd)/shared/sqllogictest}
export BREWRIC_SLT_DIR=$CORPUS
OUT=$(mktemp -d /tmp/bench-corpus-XXXXXX)
trap 'rm -rf "$OUT"' EXIT

echo "corpus: $CORPUS ${BREWRIC_SLT_FILTER:+(files matching \"$BREWRIC_SLT_FILTER\")}"
cargo build --release --quiet --bin brewricd
cargo test --release --quiet --test sqllogictest --no-run 2>/dev/null

echo "[brewric] running ..."
cargo test --release --quiet --test sqllogictest sql_tests_simple_protocol -- --nocapture >"$OUT/brewric.log" 2>&1 || true
echo "[postgres] running ..."
bash tools/tests_on_postgres.sh --release --quiet --test sqllogictest sql_tests_simple_protocol -- --nocapture >"$OUT/postgres.log" 2>&1 || true

summary() { grep -m1 -E "^simple protocol: " "$1" || echo "simple protocol: (no summary; see the log)"; }
rate() { summary "$1" | sed -nE 's/.* ([0-9]+) records\/s.*/\1/p'; }
B=$(summary "$OUT/brewric.log"); P=$(summary "$OUT/postgres.log")
echo
echo "brewric   : ${B#simple protocol: }"
echo "postgres  : ${P#simple protocol: }"
RB=$(rate "$OUT/brewric.log"); RP=$(rate "$OUT/postgres.log")
if [ -n "$RB" ] && [ -n "$RP" ] && [ "$RP" -gt 0 ]; then
  python3 -c "print(f'records/s: brewric {int(\"$RB\"):,} vs postgres {int(\"$RP\"):,} = {int(\"$RB\")/int(\"$RP\"):.2f}x (target >= 1.00x)')"
fi
grep -E "^\[simple\].*FAILED" "$OUT/brewric.log" | sed "s|$CORPUS/||" | head -40 || true

echo
echo "Environment"
echo "  git SHA   $(git rev-parse HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"
echo "  rustc     $(rustc -V)"
echo "  CPU       $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "  cores     $(nproc)"
echo "  RAM       $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
echo "  postgres  $(grep -m1 '^PostgreSQL' "$OUT/postgres.log" || echo '?')"
echo "  brewricd  release build, 2 shards (tests/common), data in a temporary directory"
