// No input crashes the CLI: devices, FIFOs, directories and huge files given to every
// option that reads a file; config files that bomb or nest; URL templates that expand to millions;
// durations past Node's timer limit; saved results that are truncated, of the wrong kind or deeply
// nested. Each ends in a coded error (exit 2 for usage, 1 for the target), never a stack trace, never
// H2LAB_ERR_INTERNAL, with memory bounded. In process through the CLI's own `main` (fast), a few as
// processes. Targets are closed loopback ports: no load is generated.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { compare, resultsJson, syntheticRunner } from '../../src/compare/index.ts';
import { INPUT_FILE_CAPS, MAX_DURATION_MS } from '../../src/core/index.ts';
import { h2lab, h2labInProcess, type InProcessRun } from '../helpers/cli.ts';
import { billionLaughsYaml, nestedArrays } from '../helpers/hostile-files.ts';

const DEAD = 'http://127.0.0.1:1';
const MiB = 1024 ** 2;
/** compare's --out in cases built before `dir` exists (it is never written: each case fails first). */
const OUT = join(tmpdir(), `h2lab-hostile-out-${process.pid}`);
/** RSS growth one hostile case may cost, bytes: the largest cap (64 MiB) read once, plus slack. */
const RSS_BOUND = 200 * MiB;

let dir: string;
let fifo: string;
let big: string;
let sub: string;
let saved: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'h2lab-hostile-input-'));
  fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  // Sparse: 100 MB by its size, nothing on disk; a reader that reads it whole allocates 100 MB.
  big = join(dir, 'big');
  writeFileSync(big, '');
  truncateSync(big, 100 * 1000 * 1000);
  sub = join(dir, 'a-dir');
  mkdirSync(sub);
  const result = await compare(
    {
      protocols: ['h1', 'h2'],
      concurrency: [4],
      workloads: [{ id: 'small', label: 'small', paths: ['/a'], kind: 'interactive' }],
      runs: 3,
    },
    {
      target: { url: `${DEAD}/`, embedded: false },
      runCell: syntheticRunner({
        h1: { latencyMs: 12, runNoise: 0.05 },
        h2: { latencyMs: 4, runNoise: 0.05 },
      }),
    },
  ).done;
  saved = resultsJson(result);
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(OUT, { recursive: true, force: true });
});

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** The promises every case keeps: a coded error with its status, no stack trace, bounded memory. */
function assertCoded(r: InProcessRun, what: string, codes: RegExp, exits: number[] = [2]): void {
  const at = `${what}: exit ${r.code}: ${r.stderr}`;
  assert.ok(exits.includes(r.code), at);
  assert.match(r.stderr, /^h2lab: H2LAB_ERR_[A-Z0-9_]+: /m, at);
  assert.match(r.stderr, codes, at);
  assert.doesNotMatch(r.stderr, /H2LAB_ERR_INTERNAL|\n\s+at |Unhandled/, at);
}

describe('files named by options: a device, a FIFO, a directory, a 100 MB file', () => {
  // [what, argv around the file, the code a file that cannot be read gets, the cap's kind]
  const readers: Array<[string, (f: string) => string[], string, keyof typeof INPUT_FILE_CAPS]> = [
    ['bench --urls', (f) => ['bench', DEAD, '-p', 'h1', '-n', '1', '--urls', f], 'FILE_UNREADABLE', 'urls'],
    ['bench --body', (f) => ['bench', DEAD, '-p', 'h1', '-n', '1', '--body', f], 'FILE_UNREADABLE', 'body'],
    ['bench --ca', (f) => ['bench', DEAD, '-n', '1', '--ca', f], 'FILE_UNREADABLE', 'pem'],
    ['bench --cert', (f) => ['bench', DEAD, '-n', '1', '--cert', f, '--key', f], 'FILE_UNREADABLE', 'pem'],
    [
      'compare --urls',
      (f) => ['compare', DEAD, '--out', join(dir, 'c'), '--urls', f],
      'FILE_UNREADABLE',
      'urls',
    ],
    ['serve --config', (f) => ['serve', '--port', '0', '--no-tls', '--config', f], 'CONFIG_FILE', 'config'],
    [
      'serve --cert',
      (f) => ['serve', '--port', '0', '--tls-port', '0', '--cert', f, '--key', f],
      'FILE_UNREADABLE',
      'pem',
    ],
    ['probe --config', (f) => ['probe', DEAD, '--config', f], 'CONFIG_FILE', 'config'],
    ['probe --ca', (f) => ['probe', 'https://127.0.0.1:1', '--ca', f], 'FILE_UNREADABLE', 'pem'],
    [
      'browser --trust-cert',
      (f) => ['browser', 'https://127.0.0.1:1', '--trust-cert', f],
      'FILE_UNREADABLE',
      'pem',
    ],
    ['report', (f) => ['report', f, '--out', join(dir, 'r')], 'RESULT_FILE', 'result'],
    ['merge', (f) => ['merge', f], 'FILE_UNREADABLE', 'result'],
    ['shard run --plan', (f) => ['shard', 'run', '--plan', f, '--index', '0'], 'FILE_UNREADABLE', 'result'],
  ];
  const files: Array<[string, () => string, string]> = [
    ['/dev/zero', () => '/dev/zero', 'a character device'],
    ['a FIFO without a writer', () => fifo, 'a FIFO'],
    ['a directory', () => sub, 'a directory'],
  ];
  for (const [what, argv, code, kind] of readers) {
    for (const [name, path, reason] of files) {
      test(`${what} ${name}: ${code}, naming the option, the file and why`, async () => {
        const f = path();
        const r = await h2labInProcess(argv(f));
        assertCoded(r, `${what} ${f}`, new RegExp(`H2LAB_ERR_${code}: .*${f}.*${reason}`));
        assert.ok(r.peakRssBytes < process.memoryUsage.rss() + RSS_BOUND);
      });
    }
    test(`${what} a 100 MB file: FILE_TOO_LARGE, naming the file and the ${INPUT_FILE_CAPS[kind] / MiB} MiB cap`, async () => {
      const rss0 = process.memoryUsage.rss();
      const r = await h2labInProcess(argv(big));
      assertCoded(
        r,
        `${what} big`,
        new RegExp(
          `H2LAB_ERR_FILE_TOO_LARGE: \\S+ ${big}: the file is 100000000 bytes, more than the ${INPUT_FILE_CAPS[kind] / MiB} MiB`,
        ),
      );
      assert.ok(
        r.peakRssBytes - rss0 < 50 * MiB,
        `refused from its size: +${(r.peakRssBytes - rss0) / MiB} MiB`,
      );
    });
  }
});

describe('--config files that bomb, nest, or hold the wrong things', () => {
  const serve = (f: string) => ['serve', '--port', '0', '--no-tls', '--config', f];
  const cases: Array<[string, () => string, RegExp]> = [
    [
      'billion laughs (10 levels of anchors, 10 aliases each: 10^10 nodes)',
      () => file('laughs.yaml', billionLaughsYaml()),
      /CONFIG_FILE: .*Excessive alias count/,
    ],
    [
      '100,000 levels of nesting',
      () => file('deep.yaml', `port: ${nestedArrays(100_000)}\n`),
      /CONFIG_FILE: .*nested too deeply/,
    ],
    [
      'a wrong type (a list for a port)',
      () => file('type.yaml', 'port: [1, 2]\n'),
      /CONFIG_FILE: .*key "port"/,
    ],
    ['a mapping for a duration', () => file('map.yaml', 'tile-ms: {a: 1}\n'), /CONFIG_FILE: .*key "tile-ms"/],
    ['an unknown key', () => file('unknown.yaml', 'turbo: true\n'), /CONFIG_FILE: .*unknown key "turbo"/],
    ['a list at the top', () => file('list.yaml', '- port\n- 8080\n'), /CONFIG_FILE: .*expected a mapping/],
    ['a duplicate key', () => file('dup.yaml', 'port: 1\nport: 2\n'), /CONFIG_FILE: .*not valid YAML/],
    ['binary garbage', () => file('garbage.yaml', '\u0000\u0001\u00ff{{[[::'), /CONFIG_FILE/],
    ['a duration past the timer limit', () => file('dur.yaml', 'grace: 999999h\n'), /CONFIG_FILE: .*596h/],
    [
      'a 2 MiB config (over the 1 MiB cap)',
      () => file('huge.yaml', `# ${'x'.repeat(2 * MiB)}\nport: 0\n`),
      /FILE_TOO_LARGE: --config \S+: the file is \d+ bytes, more than the 1 MiB/,
    ],
  ];
  for (const [name, make, code] of cases) {
    test(name, async () => {
      const rss0 = process.memoryUsage.rss();
      const r = await h2labInProcess(serve(make()));
      assertCoded(r, name, code);
      assert.ok(r.peakRssBytes - rss0 < RSS_BOUND, `+${(r.peakRssBytes - rss0) / MiB} MiB`);
    });
  }
});

describe('URL templates that expand to millions are refused before anything is expanded', () => {
  const cases: Array<[string, string[], string]> = [
    [
      'bench /tiles/{0..999999}/{0..999999}',
      ['bench', `${DEAD}/tiles/{0..999999}/{0..999999}`, '-n', '1'],
      '1,000,000,000,000',
    ],
    [
      'bench, seven nested ranges of 10',
      ['bench', `${DEAD}/${'{0..9}/'.repeat(7)}`, '-n', '1'],
      '10,000,000',
    ],
    [
      'bench {0..99999999999999999999}',
      ['bench', `${DEAD}/{0..99999999999999999999}`, '-n', '1'],
      '100,000,000,000,000,000,000',
    ],
    [
      'compare --paths /t/{0..9999}/{0..9999}',
      ['compare', DEAD, '--out', OUT, '--paths', '/t/{0..9999}/{0..9999}'],
      '100,000,000',
    ],
  ];
  for (const [name, argv, count] of cases) {
    test(name, async () => {
      const rss0 = process.memoryUsage.rss();
      const r = await h2labInProcess(argv);
      assertCoded(
        r,
        name,
        new RegExp(`TEMPLATE_TOO_LARGE: .*expands to ${count} paths, more than the 1,000,000`),
      );
      assert.ok(
        r.peakRssBytes - rss0 < 50 * MiB,
        `refused before expanding: +${(r.peakRssBytes - rss0) / MiB} MiB`,
      );
    });
  }
  test('bench --urls: 2 lines of 600,000 paths each are counted together', async () => {
    const f = file('urls.txt', '/a/{0..599999}\n/b/{0..599999}\n');
    const r = await h2labInProcess(['bench', DEAD, '-n', '1', '--urls', f]);
    assertCoded(r, '--urls', /TEMPLATE_TOO_LARGE: --urls "2 entries" expands to 1,200,000 paths/);
  });
});

describe(`durations past ${MAX_DURATION_MS} ms (setTimeout's limit) are refused, not fired after 1 ms`, () => {
  const cases: Array<[string, string[]]> = [
    ['bench --duration', ['bench', DEAD, '-d', '999999h']],
    ['bench --warmup', ['bench', DEAD, '--warmup', '999999h']],
    ['bench --timeout', ['bench', DEAD, '-n', '1', '--timeout', '999999h']],
    ['bench --connect-timeout', ['bench', DEAD, '-n', '1', '--connect-timeout', '597h']],
    ['bench --idle-timeout', ['bench', DEAD, '-n', '1', '--idle-timeout', '999999h']],
    ['bench --max-age', ['bench', DEAD, '-n', '1', '--max-age', '999999h']],
    ['compare --duration', ['compare', DEAD, '--out', OUT, '--duration', '999999h']],
    ['serve --grace', ['serve', '--port', '0', '--no-tls', '--grace', '999999h']],
    ['probe --timeout', ['probe', DEAD, '--timeout', '999999h']],
    ['plan --duration', ['plan', DEAD, '--shards', '2', '-d', '999999h']],
  ];
  for (const [name, argv] of cases) {
    test(name, async () => {
      const r = await h2labInProcess(argv);
      assertCoded(r, name, /INVALID_OPTION: .*999999h|597h.*at most 596h \(2147483647 ms/);
    });
  }
  test('--warmup 300h plus --duration 300h is over the limit together', async () => {
    const r = await h2labInProcess(['bench', DEAD, '-p', 'h1', '--warmup', '300h', '-d', '300h']);
    assertCoded(r, 'sum', /INVALID_OPTION: --warmup .* plus --duration .* more than 596h/);
  });
});

describe('sizes and outputs', () => {
  test('bench --body-size 1TiB: refused with the 64 MiB cap (was H2LAB_ERR_INTERNAL from Buffer.allocUnsafe)', async () => {
    const r = await h2labInProcess(['bench', DEAD, '-p', 'h1', '-n', '1', '--body-size', '1TiB']);
    assertCoded(
      r,
      '--body-size',
      /INVALID_OPTION: --body-size "1TiB" is not valid: use at most 67108864 bytes \(64 MiB\)/,
    );
  });
  test('bench --samples /dev/full: H2LAB_ERR_OUTPUT before any load', async () => {
    const r = await h2labInProcess(['bench', DEAD, '-n', '1', '--samples', '/dev/full']);
    assertCoded(r, '--samples', /OUTPUT: --samples \/dev\/full: is not a regular file/);
  });
});

describe('saved results for report: truncated, of the wrong kind, deeply nested', () => {
  const report = (f: string) => ['report', f, '--out', join(dir, 'r'), '-q'];
  test('the saved result itself renders (exit 0), so the cases below fail for their own reason', async () => {
    const r = await h2labInProcess(report(file('ok.json', saved)));
    assert.equal(r.code, 0, r.stderr);
  });
  const cases: Array<[string, () => string, RegExp]> = [
    ['truncated at half', () => saved.slice(0, saved.length / 2), /RESULT_FILE: .*is not JSON/],
    ['truncated by one byte', () => saved.slice(0, -2), /RESULT_FILE: .*is not JSON/],
    ['empty', () => '', /RESULT_FILE: .*is not JSON/],
    [
      'a bench result (kind h2lab.run) without its fields',
      () => JSON.stringify({ kind: 'h2lab.run', version: 1 }),
      /RESULT_FILE: .*field options: /,
    ],
    [
      'a page result (kind h2lab.page)',
      () => JSON.stringify({ kind: 'h2lab.page', version: 1 }),
      /RESULT_FILE: .*not a result h2lab report renders \(kind "h2lab.page"/,
    ],
    ['a JSON number', () => '42', /RESULT_FILE: .*not a result h2lab report renders/],
    ['null', () => 'null', /RESULT_FILE: .*not a result h2lab report renders/],
    ['1,000,000 nested arrays', () => nestedArrays(1e6), /RESULT_FILE/],
    [
      'a compare result with 1,000,000 nested arrays in its options',
      () => {
        const j = JSON.parse(saved) as Record<string, unknown>;
        return JSON.stringify({ ...j, options: '@' }).replace('"@"', nestedArrays(1e6));
      },
      /RESULT_FILE: .*field options/,
    ],
    [
      'a compare result with 100,000 nested objects in a run',
      () => {
        const j = JSON.parse(saved) as { cells: Array<Record<string, unknown>> };
        j.cells[0]!.stats = '@';
        return JSON.stringify(j).replace('"@"', `${'{"a":'.repeat(1e5)}1${'}'.repeat(1e5)}`);
      },
      /RESULT_FILE: .*field cells\.0\.stats/,
    ],
    [
      'a compare result whose cells are a string',
      () => JSON.stringify({ ...(JSON.parse(saved) as object), cells: 'many' }),
      /RESULT_FILE: .*field cells/,
    ],
  ];
  for (const [name, make, code] of cases) {
    test(name, async () => {
      const rss0 = process.memoryUsage.rss();
      const r = await h2labInProcess(report(file('bad.json', make())));
      assertCoded(r, name, code);
      assert.ok(r.peakRssBytes - rss0 < RSS_BOUND, `+${(r.peakRssBytes - rss0) / MiB} MiB`);
    });
  }
});

describe('as a user runs it (processes)', () => {
  test('bench --urls /dev/zero, serve --config on a FIFO, report on a 100 MB file: exit 2 with one line each', async () => {
    for (const args of [
      ['bench', DEAD, '-p', 'h1', '-n', '1', '--urls', '/dev/zero'],
      ['serve', '--port', '0', '--no-tls', '--config', fifo],
      ['report', big],
      ['bench', `${DEAD}/tiles/{0..999999}/{0..999999}`, '-n', '1'],
      ['bench', DEAD, '-p', 'h1', '-d', '999999h'],
    ]) {
      const r = await h2lab(args, { timeoutMs: 60_000 });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(
        r.stderr,
        /^h2lab: H2LAB_ERR_(FILE_UNREADABLE|CONFIG_FILE|FILE_TOO_LARGE|TEMPLATE_TOO_LARGE|INVALID_OPTION): /,
      );
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });
});
