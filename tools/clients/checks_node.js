// node-postgres (npm `pg`) checks, run by tools/clients/run.sh.
// node-postgres sends values as text (Buffers as binary bytea) in a Parse
// without parameter types, and reads text results decoded by type OID.
// Prints `ok node-postgres <check>` / `FAIL node-postgres <check>: <why>`.
'use strict';
const { Client } = require('pg');
const assert = require('assert');

const cfg = {
  host: process.env.CLIENTS_HOST || '127.0.0.1',
  port: Number(process.env.CLIENTS_PORT || 5432),
  user: process.env.CLIENTS_USER || 'brewric',
  database: process.env.CLIENTS_DB || 'brewric',
  connectionTimeoutMillis: 10000,
};

async function check(name, fn) {
  try {
    await fn();
    console.log(`ok node-postgres ${name}`);
    return true;
  } catch (e) {
    const why = `${e.code ? e.code + ' ' : ''}${e.message}`.replace(/\n/g, ' | ');
    console.log(`FAIL node-postgres ${name}: ${why.slice(0, 400)}`);
    return false;
  }
}

const ts = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678));
// [check name, SQL type, parameter value, what pg decodes the result to]
const VALUES = [
  ['bool', 'bool', true, true],
  ['int2', 'int2', 12345, 12345],
  ['int4', 'int4', -1234567, -1234567],
  ['int8', 'int8', '9007199254740993', '9007199254740993'],
  ['float4', 'float4', 1.5, 1.5],
  ['float8', 'float8', 0.1, 0.1],
  ['numeric', 'numeric', '12345.678900', '12345.678900'],
  ['text', 'text', "h\u00e9llo 'q' \"d\" \\ tab\t", "h\u00e9llo 'q' \"d\" \\ tab\t"],
  ['varchar', 'varchar', 'v\u00e4rchar', 'v\u00e4rchar'],
  ['bytea', 'bytea', Buffer.from([0, 1, 0xfe, 0xff, 39, 92]), Buffer.from([0, 1, 0xfe, 0xff, 39, 92])],
  ['date', 'date', '2024-02-29', new Date(2024, 1, 29)],
  ['timestamp', 'timestamp', '2024-01-02 03:04:05.678', new Date(2024, 0, 2, 3, 4, 5, 678)],
  ['timestamptz', 'timestamptz', ts, ts],
  ['interval', 'interval', '1 day 02:00:03.5', { days: 1, hours: 2, seconds: 3, milliseconds: 500 }],
  ['jsonb', 'jsonb', { a: [1, 2, null], b: 'x' }, { a: [1, 2, null], b: 'x' }],
  ['int8[]', 'int8[]', ['1', '-2', '3000000000'], ['1', '-2', '3000000000']],
  ['float8[]', 'float8[]', [1.5, -0.25, 1e20], [1.5, -0.25, 1e20]],
  ['text[]', 'text[]', ['a', 'b c', 'd"e', '{x}'], ['a', 'b c', 'd"e', '{x}']],
];

function norm(name, v) {
  if (name === 'interval' && v && typeof v === 'object') {
    const o = {};
    for (const k of ['years', 'months', 'days', 'hours', 'minutes', 'seconds', 'milliseconds']) {
      if (v[k]) o[k] = v[k];
    }
    return o;
  }
  if (v instanceof Date) return v.toISOString();
  return v;
}

function expectValue(name, got, want) {
  assert.deepStrictEqual(norm(name, got), norm(name, want));
}

async function main() {
  const client = new Client(cfg);
  if (!(await check('connect', () => client.connect()))) return;
  const q = (text, values) => client.query(text, values);

  await check('simple statements', async () => {
    await q('DROP TABLE IF EXISTS cc_node');
    await q('CREATE TABLE cc_node (id int8, name text, v float8)');
    const r = await q("INSERT INTO cc_node VALUES (1, 'one', 1.5), (2, 'two', NULL)");
    assert.strictEqual(r.rowCount, 2);
    const s = await q('SELECT id, name, v FROM cc_node ORDER BY id');
    assert.deepStrictEqual(s.rows, [{ id: '1', name: 'one', v: 1.5 }, { id: '2', name: 'two', v: null }]);
    const multi = await q('SELECT 1 AS a; SELECT 2 AS b');
    assert.strictEqual(multi.length, 2);
  });

  for (const [name, typ, val, want] of VALUES) {
    await check(`param ${name}`, async () => {
      const r = await q(`SELECT $1::${typ} AS v, $2::${typ} IS NULL AS n`, [val, null]);
      expectValue(name, r.rows[0].v, want);
      assert.strictEqual(r.rows[0].n, true);
    });
  }

  await check('table of every type (parameter types from the target columns)', async () => {
    await q('DROP TABLE IF EXISTS cc_node_types');
    const cols = VALUES.map(([n, t]) => `c_${n.replace('[]', 'a')} ${t}`);
    await q(`CREATE TABLE cc_node_types (id int4, ${cols.join(', ')})`);
    const names = VALUES.map(([n]) => `c_${n.replace('[]', 'a')}`);
    const ph = VALUES.map((_, i) => `$${i + 2}`).join(', ');
    await q(`INSERT INTO cc_node_types (id, ${names.join(', ')}) VALUES ($1, ${ph})`,
      [1, ...VALUES.map(v => v[2])]);
    const r = await q(`SELECT ${names.join(', ')} FROM cc_node_types WHERE id = $1`, [1]);
    VALUES.forEach(([n, , , want], i) => {
      try { expectValue(n, r.rows[0][names[i]], want); } catch (e) { throw new Error(`${n}: ${e.message}`); }
    });
  });

  await check('named prepared statement', async () => {
    await q('DROP TABLE IF EXISTS cc_node_prep');
    await q('CREATE TABLE cc_node_prep (ts timestamptz, v float8)');
    for (let i = 0; i < 5; i++) {
      await client.query({ name: 'cc_ins', text: 'INSERT INTO cc_node_prep VALUES ($1, $2)',
        values: [new Date(Date.UTC(2024, 0, 1, 0, i)), i * 1.5] });
    }
    for (let i = 0; i < 3; i++) {
      const r = await client.query({ name: 'cc_sel', text: 'SELECT count(*) AS n, sum(v) AS s FROM cc_node_prep WHERE ts >= $1',
        values: [new Date(Date.UTC(2024, 0, 1, 0, i))] });
      const want = [0, 1, 2, 3, 4].filter(j => j >= i);
      assert.deepStrictEqual(r.rows[0], { n: String(want.length), s: want.reduce((a, j) => a + j * 1.5, 0) });
    }
  });

  await check('binary results (binary: true)', async () => {
    const r = await client.query({
      // (pg-types' binary parsers misread negative int4, float8, timestamptz
      // and bytea even from PostgreSQL: those are not checked here)
      text: 'SELECT $1::bool AS b, $2::int2 AS i2, $3::int4 AS i4, $4::int8 AS i8, $5::text AS t',
      values: [true, 12345, 1234567, '9007199254740993', 'x\u00e9'],
      binary: true,
    });
    const row = r.rows[0];
    assert.strictEqual(row.b, true);
    assert.strictEqual(row.i2, 12345);
    assert.strictEqual(row.i4, 1234567);
    assert.strictEqual(String(row.i8), '9007199254740993');
    assert.strictEqual(row.t, 'x\u00e9');
  });

  await check('rows as arrays (rowMode array)', async () => {
    const r = await client.query({ text: 'SELECT 1::int4, $1::text', values: ['x'], rowMode: 'array' });
    assert.deepStrictEqual(r.rows, [[1, 'x']]);
    assert.deepStrictEqual(r.fields.map(f => f.dataTypeID), [23, 25]);
  });

  const expectError = (sql, values, code) => async () => {
    let err = null;
    try { await q(sql, values); } catch (e) { err = e; }
    assert.ok(err, 'no error');
    assert.strictEqual(err.code, code);
    const r = await q('SELECT 1 AS one');
    assert.deepStrictEqual(r.rows, [{ one: 1 }]);
  };
  await q('DROP TABLE IF EXISTS cc_node_pk');
  await q('CREATE TABLE cc_node_pk (id int4 PRIMARY KEY, v text)');
  await q("INSERT INTO cc_node_pk VALUES (1, 'a')");
  await check('error 42P01 undefined table', expectError('SELECT * FROM cc_no_such_table', undefined, '42P01'));
  await check('error 22012 division by zero', expectError('SELECT $1::int4 / 0', [1], '22012'));
  await check('error 23505 unique violation', expectError('INSERT INTO cc_node_pk VALUES ($1, $2)', [1, 'b'], '23505'));
  await check('error 22P02 bad parameter text', expectError('SELECT $1::int4', ['abc'], '22P02'));

  await check('transaction: error, ROLLBACK, continue', async () => {
    await q('BEGIN');
    await q('INSERT INTO cc_node_pk VALUES ($1, $2)', [10, 'in tx']);
    let err = null;
    try { await q('SELECT 1 / 0'); } catch (e) { err = e; }
    assert.strictEqual(err && err.code, '22012');
    err = null;
    try { await q('SELECT 1'); } catch (e) { err = e; }
    assert.strictEqual(err && err.code, '25P02');
    await q('ROLLBACK');
    const r = await q('SELECT count(*)::int4 AS n FROM cc_node_pk WHERE id = 10');
    assert.strictEqual(r.rows[0].n, 0);
    await q('BEGIN');
    await q('INSERT INTO cc_node_pk VALUES ($1, $2)', [11, 'committed']);
    await q('COMMIT');
    const c = await q('SELECT v FROM cc_node_pk WHERE id = $1', [11]);
    assert.deepStrictEqual(c.rows, [{ v: 'committed' }]);
  });

  await check('drop tables, close', async () => {
    for (const t of ['cc_node', 'cc_node_types', 'cc_node_prep', 'cc_node_pk']) await q(`DROP TABLE IF EXISTS ${t}`);
    await client.end();
  });
}

main().catch(e => { console.log(`FAIL node-postgres run: ${e.message}`); process.exitCode = 1; });
