/**
 * `--samples FILE.csv`: one CSV record per request, every Sample field a column in the schema's
 * order, the same requests as the NDJSON form carries — in one thread and with worker threads,
 * against the fixture server over real sockets.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { sampleSchema } from '../../src/model/index.ts';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';

let server: RunningServer;
const dir = mkdtempSync(join(tmpdir(), 'h2lab-samples-csv-'));
before(async () => {
  server = await startFixture();
});
after(async () => {
  await server.close(0);
  rmSync(dir, { recursive: true, force: true });
});

/** RFC 4180 records of a CSV document: quoted fields may hold commas, quotes and line breaks. */
function records(text: string): string[][] {
  assert.ok(text.endsWith('\r\n'), 'records end with CRLF');
  const out: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      out.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  return out;
}

for (const workers of [1, 2]) {
  test(`${workers} thread(s): a row per request, the NDJSON run's columns and counts`, async () => {
    const csvFile = join(dir, `w${workers}.csv`);
    const ndjsonFile = join(dir, `w${workers}.ndjson`);
    const common = {
      url: `${server.tlsUrl}/bytes/512`,
      ca: server.caFile!,
      protocol: 'h2',
      requests: 60,
      workers,
    };
    const r = await runLoad({ ...common, samplesFile: csvFile }).done;
    await runLoad({ ...common, samplesFile: ndjsonFile }).done;
    assert.equal(r.error, undefined);
    const [header, ...rows] = records(readFileSync(csvFile, 'utf8'));
    assert.deepEqual(header, Object.keys(sampleSchema.shape));
    assert.equal(rows.length, r.counts.total, 'one row per request');
    for (const row of rows) assert.equal(row.length, header!.length, row.join(','));
    const col = (name: string) => rows.map((row) => row[header!.indexOf(name)]);
    assert.equal(new Set(col('seq')).size, rows.length, 'every seq once');
    assert.ok(
      col('status').every((s) => s === '200'),
      'every status 200',
    );
    assert.ok(
      col('protocol').every((p) => p === 'h2'),
      'protocol h2',
    );
    const lines = readFileSync(ndjsonFile, 'utf8').trim().split('\n');
    assert.equal(lines.length, rows.length, 'as many requests as the NDJSON form');
    assert.deepEqual(
      Object.keys(JSON.parse(lines[0]!)).filter((k) => !header!.includes(k)),
      [],
    );
  });
}
