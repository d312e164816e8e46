// The append-only JSON-lines journal (core/infra/json-journal.ts): what append() acknowledged is read
// back at open, a line cut short by a crash is cut off (and what follows it is whole), and a
// compaction replaces the file with the live state in order with the appends around it.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JsonJournal } from '../../core/infra/json-journal.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test.after(() => cleanupTmp());

test('appends made together are all read back, in order', async () => {
  const file = path.join(tmpDir(), 'j', 'journal.jsonl');
  const { journal, records } = await JsonJournal.open<{ n: number }>(file);
  assert.equal(records, []);
  await Promise.all(Array.from({ length: 50 }, (_, n) => journal.append([{ n }])));
  await journal.close();
  const again = await JsonJournal.open<{ n: number }>(file);
  assert.equal(
    again.records.map((r) => r.n),
    Array.from({ length: 50 }, (_, n) => n),
  );
  assert.is(again.journal.lines, 50);
  await again.journal.close();
});

test('a torn last line is cut off at open; lines appended after it are whole', async () => {
  const file = path.join(tmpDir(), 'journal.jsonl');
  fs.writeFileSync(file, '{"n":1}\n{"n":2}\n{"n":');
  const { journal, records, tornBytes } = await JsonJournal.open<{ n: number }>(file);
  assert.equal(records, [{ n: 1 }, { n: 2 }]);
  assert.is(tornBytes, 5);
  await journal.append([{ n: 3 }]);
  await journal.close();
  assert.is(fs.readFileSync(file, 'utf8'), '{"n":1}\n{"n":2}\n{"n":3}\n');
});

test('a compaction keeps the appends queued after it, and not those before', async () => {
  const file = path.join(tmpDir(), 'journal.jsonl');
  const { journal } = await JsonJournal.open<{ n: number }>(file);
  const before = journal.append([{ n: 1 }, { n: 2 }]);
  const compacted = journal.compact([{ n: 12 }]);
  const after = journal.append([{ n: 3 }]);
  await Promise.all([before, compacted, after]);
  assert.is(journal.lines, 2);
  await journal.close();
  assert.is(fs.readFileSync(file, 'utf8'), '{"n":12}\n{"n":3}\n');
  const again = await JsonJournal.open<{ n: number }>(file);
  assert.equal(again.records, [{ n: 12 }, { n: 3 }]);
  await again.journal.close();
});

test.run();
