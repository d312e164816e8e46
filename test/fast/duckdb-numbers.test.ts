// The typed-array paths into and out of DuckDB (core/infra/duckdb.ts: numbers, appendNumbers) that the
// pipeline's map stages read and write a million rows through: values, NULLs and refusals.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDuckDB } from '../../core/infra/duckdb.ts';

test('numbers: typed columns equal the values columns() reads, across many vectors; NULL is NaN in a float column', async () => {
  const db = await openDuckDB();
  try {
    await db.run(`CREATE TABLE t AS SELECT i::INTEGER AS i, (i * 0.5)::DOUBLE AS d, (i % 3)::UTINYINT AS u,
      CASE WHEN i % 5 = 0 THEN NULL ELSE i / 7 END::FLOAT AS f FROM range(10000) r(i)`);
    const got = await db.numbers(`SELECT * FROM t ORDER BY i`);
    const want = await db.columns(`SELECT * FROM t ORDER BY i`);
    assert.instance(got.i, Int32Array);
    assert.instance(got.d, Float64Array);
    assert.instance(got.u, Uint8Array);
    assert.instance(got.f, Float32Array);
    assert.is(got.i!.length, 10000);
    for (let k = 0; k < 10000; k++) {
      assert.is(got.i![k], want.i![k]);
      assert.is(got.d![k], want.d![k]);
      assert.is(got.u![k], want.u![k]);
      const f = want.f![k] as number | null;
      if (f === null) assert.ok(Number.isNaN(got.f![k]), `row ${k}: NULL reads as NaN`);
      else assert.is(got.f![k], Math.fround(f));
    }
    assert.is((await db.numbers(`SELECT i FROM t WHERE false`)).i!.length, 0);
  } finally {
    db.close();
  }
});

test('numbers refuses what it cannot copy: a NULL in an integer column, a BIGINT, a string', async () => {
  const db = await openDuckDB();
  try {
    await db.run(`CREATE TABLE t AS SELECT i::INTEGER AS i FROM range(5000) r(i)`);
    for (const [sql, message] of [
      [`SELECT CASE WHEN i = 4097 THEN NULL ELSE i END AS i FROM t`, /has a NULL/],
      [`SELECT i::BIGINT AS b FROM t`, /not a numeric column/],
      [`SELECT i::VARCHAR AS s FROM t`, /not a numeric column/],
    ] as const) {
      let error: Error | null = null;
      try {
        await db.numbers(sql);
      } catch (e) {
        error = e as Error;
      }
      assert.ok(error && message.test(error.message), `${sql}: ${error?.message}`);
    }
  } finally {
    db.close();
  }
});

test('appendNumbers: columns go in whole and read back equal; unequal lengths and other arrays are refused', async () => {
  const db = await openDuckDB();
  try {
    const n = 5000;
    const a = Int32Array.from({ length: n }, (_, i) => i * 3 - 7);
    const b = Float32Array.from({ length: n }, (_, i) => Math.sin(i));
    const c = Float64Array.from({ length: n }, (_, i) => i / 3);
    const d = Uint8Array.from({ length: n }, (_, i) => i % 256);
    await db.run(`CREATE TABLE m (a INTEGER, b FLOAT, c DOUBLE, d UTINYINT)`);
    await db.appendNumbers('m', [a, b, c, d]);
    const back = await db.numbers(`SELECT * FROM m`);
    assert.equal(Array.from(back.a!), Array.from(a));
    assert.equal(Array.from(back.b!), Array.from(b));
    assert.equal(Array.from(back.c!), Array.from(c));
    assert.equal(Array.from(back.d!), Array.from(d));
    assert.not.ok(
      await db.appendNumbers('m', [a, b.subarray(1), c, d]).then(
        () => true,
        () => false,
      ),
      'unequal lengths',
    );
    assert.not.ok(
      await db.appendNumbers('m', [new Int16Array(n), b, c, d]).then(
        () => true,
        () => false,
      ),
      'an Int16Array',
    );
    assert.is(Number((await db.all<{ n: bigint }>(`SELECT count(*)::INTEGER AS n FROM m`))[0]!.n), n, 'nothing appended by a refused call');
  } finally {
    db.close();
  }
});

test.run();
