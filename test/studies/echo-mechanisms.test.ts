// Echo's mechanisms on machines other than the one that made the saved --quick run: the rows of
// test/fixtures/studies/echo.json given to echoFindings with a quiet machine (cores to spare) and
// with a server event loop busy in both runs. Each branch must name its mechanism only when its
// figures hold, quote only recorded numbers, and pass echo's own verify.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parseStudyResult, type StudyResult } from '../../src/model/index.ts';
import { type EchoOptions, echoFindings, echoStudy, type Row } from '../../src/studies/echo/index.ts';
import { checkFindings } from '../../src/studies/findings.ts';
import { rederived } from '../../src/studies/index.ts';

const saved = parseStudyResult(
  JSON.parse(readFileSync(new URL('../fixtures/studies/echo.json', import.meta.url), 'utf8')),
);
const options = echoStudy.resolve!({}, true) as unknown as EchoOptions;
const top = Math.max(...options.concurrency);

/** The saved result with its echo findings and paragraphs rebuilt from `rows` on `machine`. */
function rebuilt(rows: Row[], machine: { cpus: number; loadAverage: number }): StudyResult {
  const r = structuredClone(saved);
  r.data.rows = rows;
  const load = machine.loadAverage;
  r.data.machine = { cpus: machine.cpus, loadAverage1m: { before: load, after: load } };
  const out = rederived(echoStudy, r);
  assert.deepEqual(
    out.findings.filter((f) => /^(small|large)-/.test(f.id)),
    JSON.parse(JSON.stringify(echoFindings(rows, options, top, machine))),
  );
  return out;
}

const problems = (r: StudyResult) => [...checkFindings(r), ...(echoStudy.verify?.(r) ?? [])];
const rowsOf = () => structuredClone(saved.data.rows) as Row[];

describe('echo mechanisms on other machines', () => {
  test('a quiet machine: no CPU bound is named, the reason carries its numbers', () => {
    const rows = rowsOf();
    for (const r of rows)
      for (const s of [r.h1, r.h2]) Object.assign(s, { cpu: 0.3, serverElu: 0.3, clientElu: 0.3 });
    const r = rebuilt(rows, { cpus: 16, loadAverage: 0.5 });
    assert.deepEqual(problems(r), []);
    const rowsFindings = r.findings.filter((f) => /^(small|large)-.*-throughput$/.test(f.id));
    assert.ok(rowsFindings.length > 0);
    for (const f of rowsFindings) {
      assert.equal(f.explained, false, `${f.id}: ${f.explanation}`);
      assert.match(
        f.explanation,
        /the machine had cores to spare \(1-minute load average 0\.50 on 16 cores, the process at 0\.30 and 0\.30 cores\)/,
      );
    }
  });

  test('a server loop busy in both runs whose CPU per request gives the ratio: named, and verify agrees', () => {
    const rows = rowsOf();
    const row = rows.find(
      (x) => x.variant === 'one' && x.body === 1024 && x.window === 'node' && x.throughput,
    )!;
    const ratio = row.throughput!.interval.ratio;
    Object.assign(row.h1, { serverElu: 0.95, serverCpuMsPerRequest: 0.2 * ratio });
    Object.assign(row.h2, { serverElu: 0.9, serverCpuMsPerRequest: 0.2 });
    const r = rebuilt(rows, { cpus: 2, loadAverage: 0.5 });
    assert.deepEqual(problems(r), []);
    const f = r.findings.find((x) => x.id === 'small-one-throughput')!;
    assert.equal(f.explained, true, f.explanation);
    assert.match(
      f.explanation,
      /the server's event loop was the bottleneck \(at least 80% busy in both runs\), so throughput follows CPU per request on its side/,
    );
    assert.equal(f.evidence.bottleneck, 'server');

    // The same row with the server's CPU per request no longer giving the ratio: not named.
    Object.assign(row.h2, { serverCpuMsPerRequest: 0.2 * ratio * 3 });
    const g = rebuilt(rows, { cpus: 2, loadAverage: 0.5 }).findings.find(
      (x) => x.id === 'small-one-throughput',
    )!;
    assert.doesNotMatch(g.explanation, /was the bottleneck/);
    assert.match(
      g.explanation,
      /the server's event loop was busy in both runs, yet its CPU per request predicts/,
    );
  });
});
