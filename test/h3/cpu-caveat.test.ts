// The verdict's CPU caveat for HTTP/3 gives the ratio measured in this comparison, client and server
// side, from the runs' own CPU readings — not a figure from the docs.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type CompareResult, cpuApart } from '../../src/model/index.ts';
import { h2lab } from '../helpers/cli.ts';
import { h3SkipReason } from './helpers.ts';

const skip = await h3SkipReason();
const dir = mkdtempSync(join(tmpdir(), 'h2lab-h3-cpu-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('h2 against h3 on the fixture: the CPU caveat quotes this run’s per-request CPU of each side', {
  skip,
}, async () => {
  const out = join(dir, 'out');
  const r = await h2lab(
    [
      'compare',
      '--protocols',
      'h2,h3',
      '--baseline',
      'h2',
      '--sizes',
      '1KiB',
      '--concurrency',
      '8',
      '--runs',
      '3',
      '--duration',
      '400ms',
      '--out',
      out,
    ],
    { timeoutMs: 180_000 },
  );
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as CompareResult;
  const caveat = (result.verdict?.caveats ?? []).find((c) =>
    c.startsWith('CPU per request, HTTP/3 against HTTP/2'),
  );
  assert.ok(caveat, `no CPU caveat among: ${(result.verdict?.caveats ?? []).join(' | ')}`);
  const m = /HTTP\/3 client ([\d.]+)× \((\d+) µs against (\d+) µs a request\)/.exec(caveat);
  assert.ok(m, caveat);
  const [ratio, h3Us, h2Us] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // The ratio is the one of the figures beside it (one cell: the medians' ratio).
  assert.ok(Math.abs(ratio - h3Us / h2Us) <= 0.06 + 0.02 * ratio, `${ratio} against ${h3Us}/${h2Us}`);
  // Each figure lies within the side's own runs' readings (their median).
  const clientUs = (quic: boolean) =>
    result.cells
      .flatMap((c) => c.runs.slice(c.warmupRuns))
      .filter((run) => Boolean(run.transport.quic) === quic)
      .map((run) => (cpuApart(run)?.clientMsPerRequest ?? Number.NaN) * 1000);
  for (const [us, runs] of [
    [h3Us, clientUs(true)],
    [h2Us, clientUs(false)],
  ] as const) {
    assert.ok(
      us >= Math.min(...runs) - 1 && us <= Math.max(...runs) + 1,
      `${us} µs is outside the runs' ${runs.map((x) => x.toFixed(0)).join(', ')}`,
    );
  }
  // The fixture's own server side is there too, and no run note quotes a fixed ratio from the docs.
  assert.match(caveat, /the fixture's HTTP\/3 server [\d.]+× \(\d+ µs against \d+ µs a request\)/);
  for (const c of result.cells)
    for (const run of c.runs) assert.doesNotMatch(run.client.note ?? '', /about 7×/);
});
