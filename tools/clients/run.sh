#!/usr/bin/env bash
# The client compatibility suite: real PostgreSQL clients against brewricd.
#
#   bash tools/clients/run.sh                 # against brewricd (started here)
#   bash tools/clients/run.sh --postgres      # the same checks against a throw-away PostgreSQL 15
#   bash tools/clients/run.sh --server HOST:PORT   # against a server that is already running
#   bash tools/clients/run.sh --only psycopg,grafana   # some drivers only
#
# brewricd comes from $BREWRICD, else target/release/brewricd, else
# target/debug/brewricd; it is started on a free port with 2 shards and a temp
# data dir, and stopped at exit. Drivers: tokio-postgres (tests/clients.rs, run
# through cargo unless --skip tokio-postgres), psycopg (3), psycopg2,
# node-postgres (tools/clients/node_modules: `npm ci` here), pgjdbc
# (/usr/share/java/postgresql.jar + javac/java), pgx v4 (Go, Debian's
# golang-github-jackc-pgx-v4-dev), and Grafana's PostgreSQL datasource SQL
# (through psycopg). Prints `ok|FAIL <driver> <check>` per check and
# `N passed, M failed`; exits 1 on any failure. A driver that is not installed
# is skipped with a message, or is a failure when CI is set (or
# BREWRIC_CLIENTS_REQUIRE_ALL=1).
set -uo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

MODE=brewric
SERVER=""
ONLY=""
SKIP=""
while [ $# -gt 0 ]; do
  case "$1" in
    --postgres) MODE=postgres ;;
    --server) MODE=external; SERVER="$2"; shift ;;
    --only) ONLY=",$2,"; shift ;;
    --skip) SKIP=",$2,"; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

REQUIRE_ALL="${BREWRIC_CLIENTS_REQUIRE_ALL:-}"
if [ -n "${CI:-}" ] && [ "${CI}" != "false" ] && [ -z "$REQUIRE_ALL" ]; then REQUIRE_ALL=1; fi
[ "$REQUIRE_ALL" = 0 ] && REQUIRE_ALL=""

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

TMP=$(mktemp -d /tmp/brewric-clients-XXXXXX)
SERVER_PID=""
PG_BIN=""
PG_AS=()
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
  if [ -n "$PG_BIN" ]; then "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$TMP/pg" -m immediate stop >/dev/null 2>&1; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

export CLIENTS_HOST=127.0.0.1 CLIENTS_USER=brewric CLIENTS_DB=brewric
case "$MODE" in
  brewric)
    BIN="${BREWRICD:-}"
    if [ -z "$BIN" ]; then
      for b in "$ROOT/target/release/brewricd" "$ROOT/target/debug/brewricd"; do
        [ -x "$b" ] && { BIN="$b"; break; }
      done
    fi
    if [ -z "$BIN" ]; then
      echo "building brewricd (cargo build --release)" >&2
      (cd "$ROOT" && cargo build --release --bin brewricd) >&2 || exit 1
      BIN="$ROOT/target/release/brewricd"
    fi
    CLIENTS_PORT=$(free_port)
    mkdir -p "$TMP/data"
    "$BIN" --listen "127.0.0.1:$CLIENTS_PORT" --http off --ilp off --shards 2 \
      --data-dir "$TMP/data" >"$TMP/brewricd.out" 2>"$TMP/brewricd.err" &
    SERVER_PID=$!
    for _ in $(seq 1 300); do
      grep -q "^brewricd listening on " "$TMP/brewricd.out" 2>/dev/null && break
      kill -0 "$SERVER_PID" 2>/dev/null || { echo "brewricd exited:" >&2; cat "$TMP/brewricd.err" >&2; exit 1; }
      sleep 0.1
    done
    echo "brewricd ($BIN) on 127.0.0.1:$CLIENTS_PORT"
    ;;
  postgres)
    for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && PG_BIN="$d"; done
    [ -n "$PG_BIN" ] || { echo "PostgreSQL server binaries not found (apt-get install -y postgresql)" >&2; exit 1; }
    CLIENTS_PORT=$(free_port)
    if [ "$(id -u)" = 0 ]; then chown postgres "$TMP"; PG_AS=(runuser -u postgres --); fi
    "${PG_AS[@]}" "$PG_BIN/initdb" -D "$TMP/pg" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null || exit 1
    "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$TMP/pg" -w -l "$TMP/pg.log" \
      -o "-p $CLIENTS_PORT -k $TMP -c listen_addresses=127.0.0.1 -c timezone=UTC" start >/dev/null || exit 1
    "$PG_BIN/psql" -h 127.0.0.1 -p "$CLIENTS_PORT" -U postgres -d postgres -X -q \
      -c "CREATE ROLE brewric SUPERUSER LOGIN" -c "CREATE DATABASE brewric" || exit 1
    echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$CLIENTS_PORT"
    ;;
  external)
    CLIENTS_HOST="${SERVER%:*}"; CLIENTS_PORT="${SERVER##*:}"
    echo "server $CLIENTS_HOST:$CLIENTS_PORT"
    ;;
esac
export CLIENTS_PORT
export TZ=UTC PGTZ=UTC

PASSED=0
FAILED=0
FAILS=()
LOG="$TMP/lines"

# run_driver NAME COMMAND...: runs one driver's checks, echoing and counting its lines.
run_driver() {
  local name="$1"; shift
  : >"$LOG"
  timeout 300 "$@" 2>"$TMP/stderr" | tee -a "$LOG"
  local rc=${PIPESTATUS[0]}
  local ok fail
  ok=$(grep -c '^ok ' "$LOG")
  fail=$(grep -c '^FAIL ' "$LOG")
  PASSED=$((PASSED + ok))
  FAILED=$((FAILED + fail))
  while IFS= read -r l; do FAILS+=("$l"); done < <(grep '^FAIL ' "$LOG")
  if [ "$rc" != 0 ] || [ "$ok$fail" = 00 ]; then
    echo "FAIL $name run (exit code $rc): $(tail -c 600 "$TMP/stderr" | tr '\n' ' ')"
    FAILED=$((FAILED + 1)); FAILS+=("FAIL $name run (exit code $rc)")
  fi
}

missing() {
  if [ -n "$REQUIRE_ALL" ]; then
    echo "FAIL $1 installed: $2"
    FAILED=$((FAILED + 1)); FAILS+=("FAIL $1 installed: $2")
  else
    echo "skip $1: $2"
  fi
}

wanted() {
  if [ -n "$ONLY" ] && [[ "$ONLY" != *",$1,"* ]]; then return 1; fi
  if [ -n "$SKIP" ] && [[ "$SKIP" == *",$1,"* ]]; then return 1; fi
  return 0
}

if wanted tokio-postgres; then
  if command -v cargo >/dev/null 2>&1; then
    run_driver tokio-postgres bash -c "cd '$ROOT' && BREWRIC_CLIENTS_TOKIO_ONLY=1 BREWRIC_TEST_SERVER=$CLIENTS_HOST:$CLIENTS_PORT \
      cargo test -q --test clients -- --nocapture --test-threads 1 2>&1 | grep -E '^(ok|FAIL) tokio-postgres '"
  else
    missing tokio-postgres "cargo not found"
  fi
fi

if wanted psycopg; then
  if python3 -c 'import psycopg' 2>/dev/null; then
    run_driver psycopg python3 "$HERE/checks_python.py" psycopg
  else
    missing psycopg "python3 -m pip install 'psycopg[binary]'"
  fi
fi

if wanted psycopg2; then
  if python3 -c 'import psycopg2' 2>/dev/null; then
    run_driver psycopg2 python3 "$HERE/checks_python.py" psycopg2
  else
    missing psycopg2 "python3 -m pip install psycopg2-binary"
  fi
fi

if wanted grafana; then
  if python3 -c 'import psycopg' 2>/dev/null; then
    run_driver grafana python3 "$HERE/checks_grafana.py"
  else
    missing grafana "needs psycopg: python3 -m pip install 'psycopg[binary]'"
  fi
fi

if wanted node-postgres; then
  if command -v node >/dev/null 2>&1 && [ -d "$HERE/node_modules/pg" ]; then
    run_driver node-postgres node "$HERE/checks_node.js"
  else
    missing node-postgres "needs node and (cd tools/clients && npm ci)"
  fi
fi

if wanted pgjdbc; then
  JAR=/usr/share/java/postgresql.jar
  if [ -f "$JAR" ] && command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1; then
    mkdir -p "$TMP/java"
    if javac -d "$TMP/java" -cp "$JAR" "$HERE/JdbcChecks.java" 2>"$TMP/javac.err"; then
      run_driver pgjdbc java -Duser.timezone=UTC -XX:TieredStopAtLevel=1 -cp "$TMP/java:$JAR" JdbcChecks
    else
      echo "FAIL pgjdbc compile: $(head -c 600 "$TMP/javac.err" | tr '\n' ' ')"
      FAILED=$((FAILED + 1)); FAILS+=("FAIL pgjdbc compile")
    fi
  else
    missing pgjdbc "apt-get install libpostgresql-jdbc-java default-jdk-headless"
  fi
fi

if wanted pgx; then
  PGX_SRC=/usr/share/gocode/src/github.com/jackc/pgx/v4
  if command -v go >/dev/null 2>&1 && [ -d "$PGX_SRC" ]; then
    mkdir -p "$TMP/go"
    cp "$HERE/checks_pgx.go" "$TMP/go/main.go"
    if (cd "$TMP/go" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="${GOCACHE:-${HOME:-/tmp}/.cache/go-build}" \
        GOFLAGS= go build -o pgx_checks main.go) 2>"$TMP/go.err"; then
      run_driver pgx "$TMP/go/pgx_checks"
    else
      echo "FAIL pgx compile: $(head -c 600 "$TMP/go.err" | tr '\n' ' ')"
      FAILED=$((FAILED + 1)); FAILS+=("FAIL pgx compile")
    fi
  else
    missing pgx "apt-get install golang-go golang-github-jackc-pgx-v4-dev"
  fi
fi

if [ "$MODE" = brewric ] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
  echo "FAIL brewricd alive: the server exited during the run"; tail -c 2000 "$TMP/brewricd.err"
  FAILED=$((FAILED + 1)); FAILS+=("FAIL brewricd alive")
fi

if [ "$FAILED" -gt 0 ]; then
  echo "--- failures ---"
  printf '%s\n' "${FAILS[@]}"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
