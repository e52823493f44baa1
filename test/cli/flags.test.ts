/**
 * One declaration per option (docs/design.md, "Options"): every flag is declared once — a
 * `declareFlag` (src/*\/options.ts, src/cli/common-flags.ts, a study's own), a schema field's
 * `optionMeta` (serve, certs, probe), or a commander `.option()` of a flag only one command has — and
 * commands and studies compose the declarations. This test counts the declarations in the sources and
 * fails when a flag name is declared at two places (a second grammar, range, default or help for one
 * name). Where a name is still declared twice for a reason, EXEMPT says why and who removes it; an
 * entry that no longer needs to be there fails too, so the list only shrinks.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { addFlags, valuesOf } from '../../src/cli/flags.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { RUNS_FLAG } from '../../src/compare/index.ts';
import { declaredFlags, declareFlag, readFlag } from '../../src/core/index.ts';
import { CONCURRENCY_FLAG } from '../../src/load/index.ts';

const SRC = new URL('../../src/', import.meta.url).pathname;

/**
 * Names declared at more than one place today, each with its reason. `files` are the files that may
 * hold them; the test fails when a declaration appears elsewhere or the duplicate is gone.
 */
const EXEMPT: Record<string, { files: string[]; why: string }> = {
  seed: {
    files: ['cli/net-options.ts', 'load/flags.ts'],
    why: "`h2lab net run --seed` (the link's loss and jitter draws) is declared with `net run`'s own flags; SEED_FLAG is the load's: one name for two seeds until `net run` takes SEED_FLAG's use",
  },
  json: {
    files: ['cli/common-flags.ts', 'cli/net.ts', 'cli/probe.ts'],
    why: '`probe --json` and `net … --json` are switches (print JSON instead of the table), `--json FILE` elsewhere writes a file: two grammars under one name, kept because a `--json [file]` would swallow the argument after it (`probe --json HOST`); issue #27 item 4 (one name per concept) renames one',
  },
  protocols: {
    files: ['compare/flags.ts', 'cli/page.ts'],
    why: "page replay's --protocols are the wire protocols of Chromium's settings (h1, h2, h3: ReplayProtocol), not the load strategies compare takes: two vocabularies under one flag name, until one is renamed",
  },

  out: {
    files: ['cli/common-flags.ts', 'tls/certs-command.ts'],
    why: "certs' --out is a field of its schema (src/tls, which cannot import src/cli); it becomes OUT_FLAG's use when the output flags move to src/core",
  },
  // The second declaration system: serve's and probe's zod schemas declare their fields' flags with
  // optionMeta (src/cli/schema-flags.ts builds those commands from them). Where a name is also a
  // declared flag, the field becomes a use of the declaration (`flagMeta(CA_FLAG, …)`, as --ca,
  // --cert, --key and --insecure are) once the declaration sits where its schema can see it.
  ...Object.fromEntries(
    (
      [
        [
          'expect',
          ['compare/flags.ts', 'probe/options.ts'],
          "probe's --expect (what the target must offer) is not compare's CI gate: item 4 of #27 names them apart",
        ],
        [
          'seed',
          ['cli/net-options.ts', 'load/flags.ts', 'server/options.ts'],
          "serve's --seed (the fixture's random bodies); net run's (see above)",
        ],
        [
          'pool',
          ['browser/flags.ts', 'server/options.ts'],
          "serve's backend pool: browser and the tiles study pass it to the fixture they start",
        ],
        [
          'render-cores',
          ['server/options.ts', 'studies/tiles/descriptor.ts'],
          "serve's render cores: the tiles study passes it to the fixture",
        ],
        [
          'plain',
          ['cli/bench.ts', 'server/options.ts'],
          "bench's --plain picks the embedded fixture's cleartext listener; serve's --plain is the listener itself",
        ],
        [
          'h3',
          ['cli/browser.ts', 'server/options.ts'],
          "browser's --h3 also measures HTTP/3; serve's --h3 serves it",
        ],
        [
          'tile-ms',
          ['cli/browser.ts', 'server/options.ts'],
          'browser passes --tile-ms to the fixture it starts',
        ],
        ['host', ['cli/plan.ts', 'server/options.ts'], "clock serve's listen address, serve's"],
        ['port', ['cli/plan.ts', 'server/options.ts'], "clock serve's listen port, serve's"],
      ] as const
    ).map(([f, files, why]) => [
      f,
      { files: [...files], why: `${why}; one declaration once the field is its flagMeta use` },
    ]),
  ),
};

/** Every .ts file under src/. */
function sources(dir = SRC): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/**
 * The code without its comments (a declaration in a doc comment's example is not one); strings are
 * kept whole, so a string holding a comment's opening (an accept header, a URL) starts no comment.
 */
function code(text: string): string {
  let out = '';
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === quote) quote = '';
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else {
      if (c === "'" || c === '"' || c === '`') quote = c;
      out += c;
    }
  }
  return out;
}

/**
 * Declaration sites: flag name → files (one entry per site). A commander option keeps `no-` in its
 * name (`--no-cancel` is not `--cancel`); `--X` and `--no-X` on one command are one tri-state flag.
 */
function declarationSites(): Map<string, string[]> {
  const sites = new Map<string, string[]>();
  const add = (name: string, file: string) => sites.set(name, [...(sites.get(name) ?? []), file]);
  const kinds = 'string|int|bytes|duration|fraction|bool|enum|list';
  for (const f of sources()) {
    const text = code(readFileSync(f, 'utf8'));
    const file = relative(SRC, f);
    const seen: string[] = [];
    const commander = /(?:\.option|\.requiredOption|new Option)\(\s*(['"`])([^'"`]*)\1/g;
    for (const m of text.matchAll(commander)) {
      const long = /--([a-z0-9-]+)/.exec(m[2]!)?.[1];
      if (!long) continue;
      // `--server-metrics` and `--no-server-metrics` declared together: one flag.
      if (long.startsWith('no-') && seen.includes(long.slice(3))) continue;
      seen.push(long);
      add(long, file);
    }
    // A flag's syntax as a string of its own (`many ? '--net <profiles>' : '--net <profile>'`).
    for (const m of text.matchAll(/['"`]--([a-z0-9-]+) <[^>'"`]+>['"`]/g)) {
      if (seen.includes(m[1]!)) continue;
      seen.push(m[1]!);
      add(m[1]!, file);
    }
    // A link condition's key declares its flag (src/net/link-flags.ts makes the declaration of it;
    // the link rate is --bandwidth, since --rate is requests per second).
    if (file.startsWith('net/conditions/'))
      for (const m of text.matchAll(/\bflag:\s*'([a-z0-9-]+)'/g))
        add(m[1] === 'rate' ? 'bandwidth' : m[1]!, file);
    for (const m of text.matchAll(/declareFlag\(\{\s*flag:\s*'([a-z0-9-]+)'/g))
      add(/negatable:\s*true/.test(text.slice(m.index, m.index + 400)) ? `no-${m[1]}` : m[1]!, file);
    for (const m of text.matchAll(
      new RegExp(`(?:optionMeta|\\bm)\\(\\s*'([a-z0-9-]+)',\\s*'(?:${kinds})'`, 'g'),
    ))
      add(m[1]!, file);
  }
  return sites;
}

describe('one declaration per option', () => {
  const sites = declarationSites();

  test('the count of declarations (what the review counted: 211 of 125 flags, 46 declared 2–10 times)', () => {
    const total = [...sites.values()].reduce((n, s) => n + s.length, 0);
    const twice = [...sites].filter(([, s]) => s.length > 1);
    process.stdout.write(
      `# ${total} flag declarations of ${sites.size} flags; declared more than once: ${twice.map(([n, s]) => `${n}×${s.length}`).join(', ') || 'none'}\n`,
    );
    assert.ok(sites.size > 100, `the scan finds the flags (found ${sites.size}): it must be able to fail`);
    assert.ok(sites.has('runs') && sites.has('concurrency'), 'the scan sees declareFlag');
    assert.ok(sites.has('tls-port'), "the scan sees a schema's optionMeta (serve's --tls-port)");
    assert.deepEqual(sites.get('rtt'), ['net/conditions/delay.ts'], 'the scan sees a link condition’s key');
  });

  test('no flag is declared at two places, except the listed ones for their reason', () => {
    const bad = [...sites]
      .filter(([name, files]) => {
        if (files.length < 2) return false;
        const ex = EXEMPT[name];
        return !ex || files.some((f) => !ex.files.includes(f));
      })
      .map(([name, files]) => `--${name}: ${files.join(', ')}`);
    assert.deepEqual(
      bad,
      [],
      'declare a flag once (declareFlag beside the options it fills) and compose it: addFlags / optionOf, a FlagUse that narrows the range with its reason',
    );
  });

  test('the exemptions are still needed (the list only shrinks)', () => {
    const stale = Object.keys(EXEMPT).filter((n) => (sites.get(n)?.length ?? 0) < 2);
    assert.deepEqual(stale, [], 'these flags are declared once now: remove them from EXEMPT');
  });

  test('every command builds: each narrowed use says why, each list use is of a sweep', async () => {
    const program = await buildProgram();
    assert.ok(program.commands.length > 10, 'the commands are registered');
    const names = declaredFlags().map((d) => d.flag);
    assert.equal(new Set(names).size, names.length, 'declareFlag keeps one declaration per name');
  });
});

describe('declarations and uses', () => {
  test('declareFlag refuses a second declaration of a name', () => {
    assert.throws(
      () => declareFlag({ flag: 'runs', grammar: 'int', description: 'again' }),
      /--runs is declared twice/,
    );
  });

  test('a use narrows the range with its reason; a list is read item by item', () => {
    const use = { of: RUNS_FLAG, key: 'runs', min: 2, max: 100, why: 'a test' } as const;
    assert.equal(readFlag(use, '7'), 7);
    assert.throws(() => readFlag(use, '101'), /--runs "101" is not valid: use a whole number from 2 to 100/);
    assert.deepEqual(readFlag({ of: CONCURRENCY_FLAG, list: true }, '1,8,64'), [1, 8, 64]);
    assert.throws(() => readFlag({ of: CONCURRENCY_FLAG, list: true }, '1,0'), /--concurrency "0"/);
  });

  test('a narrowed use without a reason, and a list of a single-value flag, are refused', async () => {
    const { Command } = await import('commander');
    assert.throws(() => addFlags(new Command('x'), [{ of: RUNS_FLAG, max: 5 }]), /needs its reason/);
    assert.throws(
      () => addFlags(new Command('x'), [{ of: RUNS_FLAG, list: true }]),
      /not declared as a sweep/,
    );
  });

  test('values fill the keys of the uses, dotted keys nest, absent flags stay absent', () => {
    const o = valuesOf({ runs: '5', concurrency: '1,8' }, [
      { of: RUNS_FLAG, key: 'stats.runs' },
      { of: CONCURRENCY_FLAG, key: 'concurrency', list: true },
      { of: RUNS_FLAG, key: 'never' },
    ]);
    assert.deepEqual(o, { stats: { runs: 5 }, concurrency: [1, 8], never: 5 });
    assert.deepEqual(valuesOf({}, [{ of: RUNS_FLAG, key: 'runs' }]), {}, 'a flag not given sets nothing');
  });
});

describe("a study's flags", () => {
  test('fill its typed options through the declarations, with its narrowed ranges', async () => {
    const { studyOptionsFromFlags } = await import('../../src/cli/study.ts');
    const { findStudy } = await import('../../src/studies/index.ts');
    const chunks = findStudy('chunks');
    const echo = findStudy('echo');
    assert.ok(chunks && echo, 'the chunks and echo studies are registered');
    assert.deepEqual(
      studyOptionsFromFlags(chunks, { rtt: '20ms,50ms', runs: '7', loopback: true, cc: 'bbr' }),
      {
        rttMs: [20, 50],
        runs: 7,
        loopback: true,
        cc: ['bbr'],
      },
    );
    assert.throws(
      () => studyOptionsFromFlags(chunks, { runs: '101' }),
      /--runs "101" is not valid: use a whole number from 2 to 100/,
    );
    assert.throws(
      () => studyOptionsFromFlags(chunks, { concurrency: '8,65' }),
      /--concurrency "65" is not valid: use a whole number from 1 to 64/,
    );
    // A bare number is seconds, as on every command (echo read ms before).
    assert.deepEqual(studyOptionsFromFlags(echo, { duration: '2', windows: 'node,max' }), {
      durationMs: 2000,
      windows: ['node', 'max'],
    });
    assert.throws(
      () => studyOptionsFromFlags(echo, { windows: 'custom' }),
      /--windows "custom".*node, browser, max/,
    );
  });
});
