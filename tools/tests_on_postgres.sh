#!/usr/bin/env bash
# Run the integration tests (sql-tests/*.slt over both protocols, tests/wire_protocol.rs,
# tests/psql.rs) against a throw-away PostgreSQL 15 instead of brewricd, to check
# that every expected result in them is what PostgreSQL prints.
#
#   bash tools/tests_on_postgres.sh                 # all three test files
#   bash tools/tests_on_postgres.sh --test sqllogictest
#   BREWRIC_SLT_FILTER=types bash tools/tests_on_postgres.sh --test sqllogictest
#
# Needs the PostgreSQL 15 server binaries (apt-get install -y postgresql). The
# cluster runs as the `postgres` user when started by root, on a free port, with
# trust auth, TimeZone=UTC, locale C.UTF-8, a superuser role `brewric` and a
# database `brewric`; it is stopped and removed at exit.
set -euo pipefail

cd "$(dirname "$0")/.."

BIN=""
for d in /usr/lib/postgresql/*/bin; do
  [ -x "$d/initdb" ] && BIN="$d"
done
if [ -z "$BIN" ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
    for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && BIN="$d"; done
  fi
fi
[ -n "$BIN" ] || { echo "PostgreSQL server binaries not found (apt-get install -y postgresql)" >&2; exit 1; }

DIR=$(mktemp -d /tmp/pg-slt-XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
AS=()
if [ "$(id -u)" = 0 ]; then
  chown postgres "$DIR"
  AS=(runuser -u postgres --)
fi
cleanup() {
  "${AS[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$DIR"
}
trap cleanup EXIT

"${AS[@]}" "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
"${AS[@]}" "$BIN/pg_ctl" -D "$DIR/data" -w -l "$DIR/pg.log" \
  -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c timezone=UTC" start >/dev/null
"$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -X -q \
  -c "CREATE ROLE brewric SUPERUSER CREATEDB CREATEROLE REPLICATION BYPASSRLS LOGIN" -c "CREATE DATABASE brewric"
echo "PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT"

if [ "$#" -eq 0 ]; then
  set -- --test sqllogictest --test wire_protocol --test psql
fi
BREWRIC_TEST_SERVER="127.0.0.1:$PORT" cargo test "$@"
