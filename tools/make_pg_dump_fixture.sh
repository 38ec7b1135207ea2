#!/usr/bin/env bash
# Writes tests/fixtures/pg_dump_15.sql: what `pg_dump` of PostgreSQL 15 writes
# for a small database with the objects a migration from PostgreSQL brings —
# a schema, a composite primary key, an identity column, serial columns, a
# standalone sequence, a unique constraint, an index, a view, comments, and
# rows of many types (tabs and newlines in text, bytea, arrays, jsonb,
# numeric). `cargo test --test psql pg_dump` restores it into brewricd with
# psql. The `\restrict`/`\unrestrict` lines of pg_dump >= 15.14 are taken
# out so that older psql clients can read the file too.
#
#   bash tools/make_pg_dump_fixture.sh
#
# Needs the PostgreSQL 15 server binaries and pg_dump (apt-get install -y postgresql).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=""
for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && BIN="$d"; done
[ -n "$BIN" ] || { echo "PostgreSQL server binaries not found (apt-get install -y postgresql)" >&2; exit 1; }
DIR=$(mktemp -d /tmp/pg-dump-fixture-XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
AS=()
if [ "$(id -u)" = 0 ]; then chown postgres "$DIR"; AS=(runuser -u postgres --); fi
cleanup() { "${AS[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$DIR"; }
trap cleanup EXIT
"${AS[@]}" "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
"${AS[@]}" "$BIN/pg_ctl" -D "$DIR/data" -w -l "$DIR/pg.log" \
  -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c timezone=UTC" start >/dev/null
PSQL=("$BIN/psql" -h 127.0.0.1 -p "$PORT" -X -q -v ON_ERROR_STOP=1)
"${PSQL[@]}" -U postgres -d postgres -c "CREATE ROLE brewric SUPERUSER LOGIN" -c "CREATE DATABASE fleet OWNER brewric"
"${PSQL[@]}" -U brewric -d fleet <<'SQL'
CREATE SCHEMA metrics;
CREATE TABLE metrics.cpu (time timestamptz NOT NULL, host text NOT NULL, usage double precision, cores smallint DEFAULT 4, tags jsonb, PRIMARY KEY (host, time));
CREATE INDEX cpu_time_idx ON metrics.cpu (time DESC);
CREATE TABLE public.devices (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text UNIQUE NOT NULL, added date DEFAULT CURRENT_DATE, price numeric(10,2), flags boolean[], note varchar(40));
CREATE TABLE public.events (id bigserial PRIMARY KEY, device_id integer, at timestamp without time zone, payload bytea, kind char(3));
CREATE SEQUENCE public.standalone START 100 INCREMENT 5;
SELECT nextval('public.standalone');
CREATE VIEW public.busy AS SELECT host, avg(usage) AS avg_usage FROM metrics.cpu GROUP BY host;
COMMENT ON TABLE metrics.cpu IS 'CPU samples';
COMMENT ON COLUMN metrics.cpu.usage IS 'percent';
INSERT INTO metrics.cpu VALUES ('2024-01-01 00:00:00+00', 'a', 12.5, 8, '{"rack": 1}'), ('2024-01-01 00:00:10+00', 'a', NULL, DEFAULT, NULL), ('2024-01-01 00:00:00+00', 'b', 99.9, 2, '[1,2]');
INSERT INTO public.devices (name, added, price, flags, note) VALUES ('x', '2024-02-02', 10.25, '{t,f}', E'tab\tand\nnewline'), ('y''q', NULL, NULL, NULL, NULL);
INSERT INTO public.events (device_id, at, payload, kind) VALUES (1, '2024-03-03 10:00:00', '\x00ff10', 'abc'), (2, NULL, NULL, NULL);
SQL
"$BIN/pg_dump" -h 127.0.0.1 -p "$PORT" -U brewric -d fleet | grep -v '^\\\(un\)\?restrict ' > tests/fixtures/pg_dump_15.sql
echo "wrote tests/fixtures/pg_dump_15.sql ($("$BIN/pg_dump" --version))"
