// The figures the study charts draw, read from saved runs: each line of a table's dot plot carries
// h2lab's figure (with the interval its cell prints) and the field report's for the same row, in
// one unit; the findings' figures come from their evidence, seconds turned into ms.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseStudyResult, type StudyResult } from '../../src/model/index.ts';
import { findingLines, tableLines } from '../../src/report/study-charts.ts';

function saved(file: string): StudyResult {
  return parseStudyResult(
    JSON.parse(readFileSync(new URL(`../fixtures/studies/${file}`, import.meta.url), 'utf8')),
  );
}

test("proxy's summary: h2lab's speedup with its CI beside the report's, h1 read as HTTP/1.1", () => {
  const r = saved('full/proxy.json');
  const s = r.sections.find((x) => x.id === 'summary')!;
  const { unit, lines } = tableLines(s);
  assert.equal(unit, '×');
  const row = s.table.rows.find((x) => x.protocol === 'h1' && x.c === 1)!;
  const [lo, hi] = String(row.ci).split('–').map(Number);
  const line = lines.find((l) => l.label.includes('h1') && l.label.includes('concurrency 1'))!;
  assert.deepEqual(line.ours, { v: row.speedup, lo, hi });
  const ref = s.reference!.table.rows.find((x) => x.protocol === 'HTTP/1.1')!;
  assert.deepEqual(line.report, { v: ref.speedup });
  const h2 = lines.find((l) => l.label.includes('h2') && l.label.includes('concurrency 1'))!;
  assert.deepEqual(h2.report, { v: s.reference!.table.rows.find((x) => x.protocol === 'HTTP/2')!.speedup });
});

test("echo's summary: each variant's latency ratio beside the report's (lat-node reads lat)", () => {
  const r = saved('full/echo.json');
  const s = r.sections.find((x) => x.id === 'summary-1024')!;
  const { lines } = tableLines(s);
  for (const row of s.table.rows) {
    const ref = s.reference!.table.rows.find((x) => x.variant === row.variant)!;
    const line = lines.find(
      (l) => l.label.startsWith(`${row.variant} ·`) && l.label.endsWith('latency node'),
    )!;
    assert.equal(line.ours?.v, row['lat-node']);
    assert.equal(line.report?.v, ref.lat);
  }
});

test("tiles' burst: the report's HTTP/1.1 row is plain HTTP/1.1's, not HTTP/1.1 over TLS's", () => {
  const s = saved('full/tiles.json').sections.find((x) => x.id === 'burst-loopback')!;
  const { unit, lines } = tableLines(s);
  assert.equal(unit, 'ms');
  const plain = lines.find((l) => l.label.startsWith('HTTP/1.1 (http://)') && l.label.endsWith('wall'))!;
  assert.equal(plain.report?.v, s.reference!.table.rows.find((x) => x.target === 'HTTP/1.1')!.wall);
  const tls = lines.find((l) => l.label.startsWith('HTTP/1.1 over TLS') && l.label.endsWith('wall'))!;
  assert.equal(tls.report, undefined);
});

test("the findings' figures: ratios with their interval, the report's seconds as ms", () => {
  const r = saved('proxy.upstream-rtt.json');
  const { ratio, ms } = findingLines(r.findings);
  const fix = r.findings.find((f) => f.id === 'fix-speedup')!;
  const line = ratio.find((l) => l.label === fix.row)!;
  assert.deepEqual(line.ours, { v: fix.evidence.speedup, lo: fix.evidence.lo, hi: fix.evidence.hi });
  assert.equal(line.report?.v, fix.evidence.reportSpeedup);
  const h1 = r.findings.find((f) => f.id === 'before-h1')!;
  const t = ms.find((l) => l.label === h1.row)!;
  assert.equal(t.report?.v, (h1.evidence.reportS as number) * 1000);
  assert.equal(t.ours?.v, h1.evidence.ms);
});
