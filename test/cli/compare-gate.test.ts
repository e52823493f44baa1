// `h2lab compare` as a CI job runs it, as a child process against the embedded fixture server: the
// --expect gate (exit 1 after every output is written, each condition printed and in the JSON),
// bad conditions and flag clashes refused before any load (exit 2), --csv (a file, or stdout with
// the table on stderr), --config with the long flag names, and bench --csv.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { COMPARE_CSV_COLUMNS, RUN_CSV_COLUMNS } from '../../src/report/index.ts';
import { h2lab } from '../helpers/cli.ts';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'h2lab-compare-gate-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]) => h2lab(args, { timeoutMs: 120_000 });
const fast = ['--runs', '3', '--duration', '200ms', '--protocols', 'h1,h2', '--sizes', '1KiB'];

test('a bad --expect is a usage error before any load, naming the condition and the forms', async () => {
  const t0 = Date.now();
  const r = await run(['compare', ...fast, '--expect', 'h2 beats h1', '--out', join(dir, 'bad')]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /H2LAB_ERR_COMPARE_BAD_EXPECT: --expect "h2 beats h1": not a condition; use CAND OP REF/,
  );
  assert.match(r.stderr, /h2<=h1:p99@64/);
  // Nothing started: no target line, no results.
  assert.doesNotMatch(r.stderr, /embedded fixture server/);
  const level = await run(['compare', ...fast, '--concurrency', '1,8', '--expect', 'h2<=h1:p99@64']);
  assert.equal(level.code, 2, level.stderr);
  assert.match(
    level.stderr,
    /H2LAB_ERR_COMPARE_BAD_EXPECT: --expect "h2<=h1:p99@64": no cell at 64 \(the levels: 1, 8\)/,
  );
  assert.doesNotMatch(level.stderr, /embedded fixture server/);
  assert.ok(Date.now() - t0 < 30_000);
});

test('--rate with --concurrency, and --csv - with --json -, are refused before any load', async () => {
  const a = await run(['compare', ...fast, '--rate', '100', '--concurrency', '4']);
  assert.equal(a.code, 2, a.stderr);
  assert.match(
    a.stderr,
    /H2LAB_ERR_INVALID_OPTION: --rate "100" is not valid: --rate replaces --concurrency 4/,
  );
  const b = await run(['compare', ...fast, '--rate', '1.5']);
  assert.equal(b.code, 2, b.stderr);
  assert.match(b.stderr, /--rate "1.5" is not valid: use whole requests per second/);
  const c = await run(['compare', ...fast, '--csv', '-', '--json', '-']);
  assert.equal(c.code, 2, c.stderr);
  const d = await run(['compare', ...fast, '--csv', '/proc/x.csv']);
  assert.equal(d.code, 2, d.stderr);
  assert.match(d.stderr, /H2LAB_ERR_OUTPUT: --csv \/proc\/x.csv/);
});

test('open loop with a gate: the CSV and the JSON are written, the failed condition exits 1', async () => {
  const out = join(dir, 'gate');
  const csv = join(dir, 'cells.csv');
  const r = await run([
    'compare',
    ...fast,
    '--rate',
    '150',
    '-H',
    'x-h2lab-ci: 1',
    '--expect',
    'h2~h1:rps',
    '--expect',
    'h2 better than h1 on rps at 150',
    '--csv',
    csv,
    '--json',
    '-',
    '--out',
    out,
  ]);
  assert.equal(r.code, 1, r.stderr);
  // The table and the conditions on stderr (stdout is the JSON), then the gate's error.
  assert.match(r.stderr, /rate\s+strategy/);
  assert.match(r.stderr, /Expectations \(--expect; undecided does not fail the gate\)/);
  assert.match(r.stderr, /met: h2~h1:rps/);
  assert.match(
    r.stderr,
    /FAILED: h2 better than h1 on rps at 150 —\s+bytes-1024\s+at\s+150:\s+h2\/h1\s+[\d.]+×/,
  );
  assert.match(r.stderr, /H2LAB_ERR_COMPARE_EXPECT_FAILED: 1 of 2 --expect condition\(s\) failed/);
  assert.match(r.stderr, /timeouts\s+request 30\.00 s, connect 10\.00 s/);
  assert.match(r.stderr, /schedule\s+open loop at 150 req\/s/);
  assert.match(r.stderr, /requests\s+GET, headers x-h2lab-ci/);
  const json = JSON.parse(r.stdout);
  assert.deepEqual(
    json.expectations.map((e: { condition: string; status: string }) => [e.condition, e.status]),
    [
      ['h2~h1:rps', 'met'],
      ['h2 better than h1 on rps at 150', 'failed'],
    ],
  );
  assert.deepEqual(json.options.rateRps, [150]);
  assert.equal(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')).expectations.length, 2);
  const lines = readFileSync(csv, 'utf8').split('\r\n');
  assert.equal(lines[0], COMPARE_CSV_COLUMNS.join(','));
  assert.equal(lines.length, 4, 'header, two cells, and the final CRLF');
  const row = Object.fromEntries(COMPARE_CSV_COLUMNS.map((k, i) => [k, lines[2]!.split(',')[i]]));
  assert.equal(row.level_kind, 'rate');
  assert.equal(row.level, '150');
  assert.equal(row.strategy, 'h2');
  assert.ok(Math.abs(Number(row.rps_median) / 150 - 1) < 0.1, row.rps_median);
  assert.ok(
    Number(row.rps_ratio_lo) <= Number(row.rps_ratio) && Number(row.rps_ratio) <= Number(row.rps_ratio_hi),
  );
});

test('--config: keys are the long flag names; a flag given wins; an unknown key is named', async () => {
  const cfg = join(dir, 'compare.yaml');
  writeFileSync(
    cfg,
    [
      'protocols: [h1, h2]',
      'sizes: 1KiB',
      'runs: 3',
      'duration: 200ms',
      'concurrency: 2',
      'header:',
      '  - "x-a: 1"',
    ].join('\n'),
  );
  const r = await run([
    'compare',
    '--config',
    cfg,
    '--concurrency',
    '3',
    '--csv',
    '-',
    '--out',
    join(dir, 'cfg'),
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rows = r.stdout.trim().split('\r\n').slice(1);
  assert.deepEqual(
    rows.map((l) => l.split(',').slice(3, 6).join(' ')),
    ['3 loopback h1', '3 loopback h2'],
  );
  assert.match(r.stderr, /requests\s+GET, headers x-a/);
  writeFileSync(cfg, 'concurency: 2\n');
  const bad = await run(['compare', '--config', cfg]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /H2LAB_ERR_CONFIG_FILE: --config .*unknown key "concurency"/);
});

test('bench --csv -: one summary row on stdout, the table on stderr', async () => {
  const r = await run(['bench', '/bytes/1024', '-n', '30', '-c', '2', '--csv', '-']);
  assert.equal(r.code, 0, r.stderr);
  const [header, row, end] = r.stdout.split('\r\n');
  assert.equal(header, RUN_CSV_COLUMNS.join(','));
  assert.equal(end, '');
  const v = Object.fromEntries(RUN_CSV_COLUMNS.map((k, i) => [k, row!.split(',')[i]]));
  assert.equal(v.requests, '30');
  assert.equal(v.ok, '30');
  assert.equal(v.strategy, 'h2');
  assert.match(r.stderr, /p99/);
});
