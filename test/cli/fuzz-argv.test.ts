// A quick fuzz of the command line: random flags from each command's own option list
// (read from the commander definition, so a new option is fuzzed without touching this file) with
// random values (numbers, units, overflows, unicode, control characters, hostile paths), in process
// through the CLI's own `main`. Every case must end with status 0, 1 or 2; when not 0, with one coded
// error (`h2lab: H2LAB_ERR_…`), never H2LAB_ERR_INTERNAL nor a stack trace; within seconds; and the
// whole run within a bounded RSS. No load is generated: targets are a closed loopback port, and options
// that start something beyond the CLI (emulated links in namespaces, worker threads, listening
// sockets) are left out or pinned, as listed in `PINNED` and `LEFT_OUT`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Command } from 'commander';
import fc from 'fast-check';
import { buildProgram } from '../../src/cli/main.ts';
import { addLinkOptions } from '../../src/cli/net-options.ts';
import { h2lab, h2labInProcess } from '../helpers/cli.ts';
import { billionLaughsYaml, nestedArrays } from '../helpers/hostile-files.ts';

const DEAD = 'http://127.0.0.1:1';
const MiB = 1024 ** 2;
/** How long one case may take, ms: a closed port fails the first connection at once. */
const CASE_MS = 15_000;
/** Seed and case multiplier: fixed in CI; H2LAB_FUZZ_SEED / H2LAB_FUZZ_RUNS explore further by hand. */
const SEED = Number(process.env.H2LAB_FUZZ_SEED ?? 17);
const RUNS_FACTOR = Number(process.env.H2LAB_FUZZ_RUNS ?? 1);
/** RSS growth the whole fuzz may cost, bytes. */
const RSS_BOUND = 400 * MiB;

/** Options that would start what a CLI fuzz must not: emulated links (namespaces), worker threads. */
const LEFT_OUT = new Set([
  ...addLinkOptions(new Command()).options.map((o) => o.long),
  '--net',
  '--rtt',
  '--jitter',
  '--loss',
  '--bandwidth',
  '--cc',
  '--queue',
  '--initcwnd',
  '--no-slow-start-after-idle',
  '--net-backend',
  '--workers',
  // serve: its listeners are pinned to ports in use (PINNED), so that no valid case keeps listening.
  '--port',
  '--tls-port',
  '--host',
  '--h3',
  '--h3-port',
  '--no-plain',
  '--no-tls',
  // Help and version print and exit 0 by design.
  '--help',
  '--version',
]);

let dir: string;
let cwd: string;
let used: Server;
let usedPort: number;
let hostileFiles: string[];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'h2lab-fuzz-argv-'));
  cwd = process.cwd();
  // Outputs a random value names (`--out h1`, `--json x`) land in the scratch directory.
  process.chdir(dir);
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const big = join(dir, 'big');
  writeFileSync(big, '');
  truncateSync(big, 100 * 1000 * 1000);
  mkdirSync(join(dir, 'a-dir'));
  const put = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  hostileFiles = [
    '/dev/zero',
    '/dev/null',
    '/dev/full',
    fifo,
    big,
    join(dir, 'a-dir'),
    join(dir, 'missing'),
    put('laughs.yaml', billionLaughsYaml()),
    put('deep.json', nestedArrays(200_000)),
    put('truncated.json', '{"kind":"h2lab.compare","version":'),
    put('wrong-kind.json', '{"kind":"h2lab.run","version":1}'),
    put('types.yaml', 'port: [1, 2]\ngrace: {a: 1}\n'),
    put('urls.txt', '/a/{0..999}\n/b/{0..999999}\n'),
    put('pem.pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
  ];
  used = createServer();
  await new Promise<void>((r) => used.listen(0, '127.0.0.1', r));
  usedPort = (used.address() as { port: number }).port;
});
after(() => {
  process.chdir(cwd);
  used.close();
  rmSync(dir, { recursive: true, force: true });
});

const valueArb = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(
      '0',
      '1',
      '2',
      '-1',
      '8',
      '65536',
      '1000000',
      '1e9',
      '99999999999999999999',
      '9'.repeat(400),
      'NaN',
      'Infinity',
      '',
      ' ',
      '10ms',
      '1s',
      '999999h',
      '597h',
      '0ms',
      '500us',
      '1TiB',
      '1KiB',
      '1%',
      '150%',
      '0.5',
      'h1',
      'h2',
      'h2-pool',
      'GET',
      'x: y',
      'a\r\nb: c',
      '\u0000',
      '{0..999999}/{0..999999}',
      '/tiles/{0..9}',
      '-',
      DEAD,
      `${DEAD}/{0..9999}/{0..9999}`,
      'https://127.0.0.1:1',
      'not a url',
      '1,2,3',
      'h1,h2,nope',
    ),
    fc.constantFrom(...hostileFiles),
    fc.string({ maxLength: 12 }),
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.integer({ min: -5, max: 10_000_000 }).map(String),
  );

interface FlagSpec {
  flag: string;
  takesValue: boolean;
  /** The value's placeholder in the help (`<time>`, `<size>`, `<file>` …). */
  placeholder: string;
  choices?: readonly string[];
}

/** Edge values by the kind of value a flag takes (its placeholder), where bugs of that kind live. */
const EDGES: Array<[RegExp, string[]]> = [
  [
    /^(time|duration|dur|t)$/,
    ['999999h', '597h', '596h', '0', '0ms', '1us', '1e3s', '99999999999999999999h'],
  ],
  [/^(size|bytes)$/, ['1TiB', '16384TiB', '5GiB', '64MiB', '0', '99999999999999999999', '1.5KiB']],
  [
    /^(n|int|concurrency|segments|packets|x|rps)$/,
    ['0', '-1', '1000001', '100001', '1e9', '9007199254740993', '2.5'],
  ],
  [/^(fraction)$/, ['-1%', '101%', '1e-9', '1', 'NaN']],
  [/^(file|dir|path|list\|file)$/, []],
  [/^(list|n\|list|profiles)$/, ['1,,2', ',', '1,2,3,4,5,6,7,8,9,10', 'h1,h1']],
  [/^(url)$/, ['http://127.0.0.1:1/{0..999999}/{0..999999}', 'http://[::1', 'ftp://x']],
];

function edgeValues(f: FlagSpec): string[] {
  for (const [re, values] of EDGES)
    if (re.test(f.placeholder)) return values.length > 0 ? values : hostileFiles;
  return [];
}

/** The options `name` (or `name sub`) declares, minus LEFT_OUT. */
async function flagsOf(path: string[]): Promise<FlagSpec[]> {
  let cmd: Command | undefined = await buildProgram();
  for (const p of path) cmd = cmd?.commands.find((c) => c.name() === p);
  assert.ok(cmd, path.join(' '));
  return cmd.options
    .filter((o) => o.long && !LEFT_OUT.has(o.long))
    .map((o) => ({
      flag: o.long!,
      takesValue: o.required || o.optional,
      placeholder: /<([^>]+)>|\[([^\]]+)\]/.exec(o.flags)?.slice(1).find(Boolean) ?? '',
      ...(o.argChoices ? { choices: o.argChoices } : {}),
    }));
}

function argvArb(flags: FlagSpec[], maxFlags = 3): fc.Arbitrary<string[]> {
  const one: fc.Arbitrary<string[]> = fc.constantFrom(...flags).chain((f) => {
    if (!f.takesValue) return fc.constant([f.flag]);
    const edges = edgeValues(f);
    const own = f.choices ?? edges;
    const value =
      own.length > 0
        ? fc.oneof({ arbitrary: fc.constantFrom(...own), weight: 3 }, { arbitrary: valueArb(), weight: 1 })
        : valueArb();
    return value.map((v) => [f.flag, v]);
  });
  return fc.array(one, { minLength: 1, maxLength: maxFlags }).map((xs) => xs.flat());
}

/** The commands fuzzed: the words before the random flags, and how many cases each gets. */
const COMMANDS: Array<{ path: string[]; head: () => string[]; tail?: () => string[]; runs: number }> = [
  { path: ['bench'], head: () => ['bench', DEAD], runs: 50 },
  { path: ['bench'], head: () => ['bench', `${DEAD}/{0..9}`, '-p', 'h1'], runs: 15 },
  // compare: one cell of two runs unless the flags say otherwise; --out in the scratch directory.
  {
    path: ['compare'],
    head: () => ['compare', DEAD, '--protocols', 'h1', '--concurrency', '1', '--runs', '2'],
    tail: () => [],
    runs: 30,
  },
  { path: ['probe'], head: () => ['probe', DEAD], runs: 25 },
  { path: ['plan'], head: () => ['plan', DEAD, '--shards', '2'], runs: 20 },
  {
    path: ['serve'],
    head: () => ['serve'],
    tail: () => ['--port', String(usedPort), '--tls-port', String(usedPort)],
    runs: 25,
  },
  { path: ['report'], head: () => ['report', hostileFiles[0]!], runs: 15 },
  { path: ['merge'], head: () => ['merge', hostileFiles[8]!], runs: 10 },
  { path: ['certs'], head: () => ['certs'], runs: 10 },
];

describe('random argv for each command: a status in {0,1,2}, a coded error, no stack trace, bounded memory', () => {
  let rss0 = 0;
  let peak = 0;
  const seen = new Map<string, number>();
  before(() => {
    rss0 = process.memoryUsage.rss();
  });
  for (const c of COMMANDS) {
    test(`${c.head().slice(0, 2).join(' ')} … (${c.runs} cases)`, async () => {
      const flags = await flagsOf(c.path);
      // A file as the first argument varies too for report and merge.
      const lead =
        c.path[0] === 'report' || c.path[0] === 'merge'
          ? fc.constantFrom(...hostileFiles).map((f) => [c.path[0]!, f])
          : fc.constant(c.head());
      await fc.assert(
        fc.asyncProperty(lead, argvArb(flags), async (head, random) => {
          const argv = [...head, ...random, ...(c.tail?.() ?? [])];
          const t0 = performance.now();
          const r = await h2labInProcess(argv);
          const ms = performance.now() - t0;
          peak = Math.max(peak, r.peakRssBytes);
          const code = /H2LAB_ERR_[A-Z0-9_]+/.exec(r.stderr)?.[0] ?? `exit ${r.code}`;
          seen.set(code, (seen.get(code) ?? 0) + 1);
          const at = `h2lab ${JSON.stringify(argv)} → exit ${r.code} in ${ms.toFixed(0)} ms: ${r.stderr}`;
          assert.ok([0, 1, 2].includes(r.code), at);
          if (r.code !== 0) assert.match(r.stderr, /^h2lab: H2LAB_ERR_[A-Z0-9_]+: /m, at);
          assert.doesNotMatch(r.stderr, /H2LAB_ERR_INTERNAL|\n\s+at |Unhandled/, at);
          assert.ok(ms < CASE_MS, at);
          assert.ok(
            r.peakRssBytes - rss0 < RSS_BOUND,
            `${at}\nRSS +${((r.peakRssBytes - rss0) / MiB).toFixed(0)} MiB`,
          );
        }),
        { numRuns: c.runs * RUNS_FACTOR, seed: SEED, endOnFailure: true },
      );
      // What the cases reached, so a fuzz that only ever meets the argument parser shows it.
      process.stderr.write(
        `# ${c.head().slice(0, 2).join(' ')}: ${[...seen].map(([k, n]) => `${k} ${n}`).join(', ')}\n`,
      );
      seen.clear();
    });
  }
  test('the whole fuzz stayed within the RSS bound', () => {
    assert.ok(peak - rss0 < RSS_BOUND, `peak RSS +${((peak - rss0) / MiB).toFixed(0)} MiB`);
    process.stderr.write(
      `# fuzz: peak RSS ${(peak / MiB).toFixed(0)} MiB (+${((peak - rss0) / MiB).toFixed(0)} MiB)\n`,
    );
  });
});

describe('a few generated command lines as processes (exit status and stderr as a user sees them)', () => {
  test('3 bench and 2 serve command lines', async () => {
    const bench = fc.sample(argvArb(await flagsOf(['bench'])), { numRuns: 3, seed: 170 });
    const serve = fc.sample(argvArb(await flagsOf(['serve'])), { numRuns: 2, seed: 171 });
    for (const argv of [
      ...bench.map((a) => ['bench', DEAD, ...a]),
      ...serve.map((a) => ['serve', ...a, '--port', String(usedPort), '--tls-port', String(usedPort)]),
    ]) {
      const r = await h2lab(argv, { timeoutMs: 60_000, cwd: dir });
      const at = `h2lab ${JSON.stringify(argv)} → exit ${r.code}: ${r.stderr}`;
      assert.ok(r.code === 1 || r.code === 2, at);
      assert.match(r.stderr, /^h2lab: H2LAB_ERR_[A-Z0-9_]+: /m, at);
      assert.doesNotMatch(r.stderr, /H2LAB_ERR_INTERNAL|\n\s+at |Unhandled/, at);
    }
  });
});
