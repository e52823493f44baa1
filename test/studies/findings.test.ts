// The findings of every study, checked against the saved result of a real --quick run
// (test/fixtures/studies/, scripts/gen-study-fixtures.ts): one finding per row of the report's tables,
// every figure in the words carried by an evidence field, each study's own checks (the finding's
// figures are the tables' and data's, no cause the run's data contradict) silent. Then the checks are
// shown to bite: a finding changed the way the examples were wrong is caught.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parseStudyResult, type StudyResult } from '../../src/model/index.ts';
import { renderStudyHtml, renderStudyMarkdown, renderStudyText } from '../../src/report/index.ts';
import { NO_RUNS } from '../../src/studies/claims.ts';
import { checkFindings } from '../../src/studies/findings.ts';
import { listStudies, loadStudy, rederived, type Study } from '../../src/studies/index.ts';

const ROOT = new URL('../fixtures/studies/', import.meta.url);

function load(name: string, full = false): StudyResult {
  return parseStudyResult(
    JSON.parse(readFileSync(new URL(`${full ? 'full/' : ''}${name}.json`, ROOT), 'utf8')),
  );
}

/**
 * The saved runs: every study's --quick run, its full run where one is saved (docs/findings.md's), and
 * the flag combinations the studies document (NAME.VARIANT.json, e.g. proxy.upstream-rtt).
 */
const SAVED = [
  ...readdirSync(ROOT)
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ name: f.slice(0, -5), full: false })),
  ...readdirSync(new URL('full/', ROOT))
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ name: f.slice(0, -5), full: true })),
];

/** The report rows each study must answer (ids of its findings). */
const ROWS: Record<string, string[]> = {
  tiles: [
    'burst-h1',
    'burst-h2',
    'burst-ratio',
    'cancel-abort',
    'cancel-h2',
    'cancel-h1',
    'cancel-load',
    'cancel-ignore',
    'pool-size',
  ],
  echo: [
    ...['small', 'large'].flatMap((b) =>
      ['one', 'shared', 'independent'].flatMap((v) => [`${b}-${v}-latency`, `${b}-${v}-throughput`]),
    ),
    'report-factors',
    'lifetime-server',
    'lifetime-client',
    'lifetime-browser',
    'mtls-alpn',
  ],
  proxy: [
    'before-h1',
    'before-h2',
    'before-gap',
    'fix-speedup',
    'after-parity',
    'tcp-nodelay',
    'spool-large-buffers',
  ],
  chunks: ['sweep-c1', 'sweep-c4', 'sweep-c8', 'sweep-c16', 'client-cpu', 'decision'],
};

/** Every study, loaded: each one's `verify` reads its saved results. */
const STUDIES = new Map<string, Study>();
for (const { name } of listStudies()) {
  const study = await loadStudy(name);
  if (study) STUDIES.set(name, study);
}

const problemsOf = (r: StudyResult) => [...checkFindings(r), ...(STUDIES.get(r.study)?.verify?.(r) ?? [])];

/** A saved run with its findings and paragraphs as today's code words them from its saved data. */
const today = (r: StudyResult) => rederived(STUDIES.get(r.study)!, r);

/** A tiles sweep point as saved, with the runs a step is decided over. */
type SweepRuns = {
  pool: number;
  http?: { wallMs: number };
  https?: { wallMs: number };
  walls?: Record<string, number[]>;
};

/**
 * Gives each sweep point five bursts a target around `medians` (HTTP/1.1's; h2 the same), spread by
 * `spread` (±2% unless given), the medians printed being theirs.
 */
function withWalls(points: SweepRuns[], medians: number[], spread = [0.98, 0.99, 1, 1.01, 1.02]): void {
  points.forEach((p, k) => {
    const runs = spread.map((f) => medians[k]! * f);
    p.walls = { http: runs, https: runs };
    p.http!.wallMs = medians[k]!;
    p.https!.wallMs = medians[k]!;
  });
}

for (const { name, full } of SAVED) {
  describe(`study ${name}: the saved ${full ? 'full' : '--quick'} run's findings`, () => {
    const saved = load(name, full);
    const r = today(saved);
    test('one finding per row of the report, each printed in terminal, Markdown and HTML', () => {
      const ids = r.findings.map((f) => f.id);
      // A saved run this code cannot word again (proxy runs saved without their per-cell times)
      // carries the rows of the code that saved it.
      const rows =
        r === saved && r.study === 'proxy'
          ? ROWS.proxy!.filter((x) => !/after-|tcp-/.test(x))
          : ROWS[r.study]!;
      for (const id of rows) assert.ok(ids.includes(id), `${id} missing from ${ids.join(', ')}`);
      const text = renderStudyText(r, { width: 10_000 });
      const md = renderStudyMarkdown(r);
      const html = renderStudyHtml(r);
      for (const f of r.findings) {
        assert.ok(text.includes(f.explanation), `${f.id}: not in the terminal text`);
        assert.ok(md.includes(f.explanation), `${f.id}: not in report.md`);
        assert.ok(html.includes(`id="f-${f.id}"`), `${f.id}: not in report.html`);
      }
    });
    test('every sentence agrees with the fields and tables of the result', () => {
      const problems = problemsOf(r);
      assert.deepEqual(problems, [], problems.join('\n'));
      for (const f of r.findings)
        if (!f.explained)
          assert.match(f.explanation, /^Not explained: /, `${f.id}: unexplained must say so plainly`);
    });
  });
}

describe('the checks catch what the issue found wrong', () => {
  test('a figure written into the words by hand', () => {
    const r = structuredClone(load('proxy'));
    const f = r.findings.find((x) => x.id === 'fix-speedup')!;
    f.explanation += ' The report saw 7.5× for the same reason.';
    assert.ok(
      problemsOf(r).some((p) =>
        p.startsWith('fix-speedup: figures in the words with no evidence field: 7.5'),
      ),
      problemsOf(r).join('\n'),
    );
  });

  test('a cancellation conclusion from legs that abandoned different work', () => {
    const r = structuredClone(load('tiles'));
    const f = r.findings.find((x) => x.id === 'cancel-ignore')!;
    f.verdict = 'agrees';
    f.evidence.honourReachedPerRun = 79;
    f.evidence.ignoreReachedPerRun = 4;
    assert.ok(
      problemsOf(r).some((p) => p.startsWith('cancel-ignore: a conclusion from legs')),
      problemsOf(r).join('\n'),
    );
  });

  test('a pool-size answer whose walls its own words misstate', () => {
    const r = structuredClone(load('tiles'));
    const f = r.findings.find((x) => x.id === 'pool-size')!;
    f.verdict = 'agrees';
    f.evidence.gain = 0.44;
    f.explanation = 'No: workers beyond the cores only share them while the burst’s wall stayed within 10%';
    assert.ok(
      problemsOf(r).some((p) => p.startsWith("pool-size: the wall 'stayed within' 10% but changed by 44%")),
      problemsOf(r).join('\n'),
    );
  });

  test('a sweep cell printed from bursts with failed requests', () => {
    const r = structuredClone(load('tiles'));
    const sweep = r.data.sweep as Record<string, Array<{ https?: { failures: Record<string, number> } }>>;
    const point = Object.values(sweep)[0]![0]!;
    point.https!.failures = { 'net::ERR_NETWORK_CHANGED': 216 };
    assert.ok(
      problemsOf(r).some((p) => p.includes('printed from bursts with 216 failed requests')),
      problemsOf(r).join('\n'),
    );
  });

  test('a burst row whose excluded count leaves out the repeated attempts', () => {
    const r = structuredClone(load('tiles'));
    type Burst = {
      burst: { runs: Array<{ target: string; discarded: boolean; stats: object }>; repeated?: unknown[] };
    };
    const b = (r.data.burst as Record<string, Burst>).loopback!.burst;
    const kept = b.runs.find((x) => x.target === 'https' && !x.discarded)!;
    b.repeated = [{ ...structuredClone(kept), stats: { ...kept.stats, failed: 3 } }];
    assert.ok(
      problemsOf(r).some((p) => /^burst-h2: 0 runs said excluded, 1 had failures/.test(p)),
      problemsOf(r).join('\n'),
    );
  });

  test('flow control named when the largest windows gave the same ratio', () => {
    const r = structuredClone(load('echo'));
    const f = r.findings.find((x) => x.evidence.nodeRatio !== undefined)!;
    f.evidence.maxRatio = f.evidence.nodeRatio!;
    f.explanation = `${f.explanation} flow control decides part of it`;
    assert.ok(
      problemsOf(r).some((p) => p.startsWith(`${f.id}: flow control named`)),
      problemsOf(r).join('\n'),
    );
  });

  test('a paragraph naming flow control when an unstalled preset gave the most stalled one’s ratio', () => {
    const r = structuredClone(load('echo'));
    type R = {
      body: number;
      variant: string;
      concurrency: number;
      h2: { stalledShare?: number };
      throughput?: { interval: { ratio: number } };
    };
    const rows = (r.data.rows as R[]).filter((x) => x.body > 65536 && x.variant === 'one' && x.throughput);
    assert.ok(rows.length >= 2, 'the fixture has two window presets for 1 MiB');
    rows[0]!.h2.stalledShare = 0.78;
    rows[1]!.h2.stalledShare = 0;
    rows[1]!.throughput!.interval.ratio = rows[0]!.throughput!.interval.ratio;
    const i = r.explanation.findIndex((p) => p.startsWith('1.00 MiB bodies'));
    r.explanation[i] +=
      ' Larger windows gave 31% more throughput: the direction of flow control, not yet a result.';
    assert.ok(
      problemsOf(r).some((p) => p.includes('flow control named although')),
      problemsOf(r).join('\n'),
    );
  });

  test('a bottleneck named on a side whose event loop was not busy', () => {
    const r = structuredClone(load('echo'));
    const f = r.findings.find((x) => x.evidence.h1ServerElu !== undefined)!;
    f.evidence.bottleneck = 'server';
    f.evidence.busyLoop = 0.8;
    f.evidence.h1ServerElu = 0.4;
    f.explanation += " The server's event loop was the bottleneck.";
    assert.ok(
      problemsOf(r).some((p) =>
        p.startsWith(`${f.id}: the server loop named the bottleneck, but it was busy 0.4`),
      ),
      problemsOf(r).join('\n'),
    );
  });

  test("the machine's cores named the limit although the two sides kept different cores busy", () => {
    const r = structuredClone(load('echo'));
    const f = r.findings.find((x) => x.evidence.h1TotalCpuUs !== undefined)!;
    f.evidence.h1Cores = 0.4;
    f.evidence.h2Cores = 0.9;
    f.explanation += " The machine's cores were the limit, so throughput follows CPU per request.";
    assert.ok(
      problemsOf(r).some((p) => p.startsWith(`${f.id}: the machine's cores named the limit`)),
      problemsOf(r).join('\n'),
    );
  });

  test("latency said to follow throughput (Little's law) when the medians do not", () => {
    const r = structuredClone(load('echo'));
    const f = r.findings.find((x) => x.evidence.littlePredicted !== undefined)!;
    f.evidence.medianLatencyRatio = Number(f.evidence.littlePredicted) * 1.5;
    f.explanation += ' So latency follows throughput.';
    assert.ok(
      problemsOf(r).some((p) => p.startsWith(`${f.id}: latency said to follow throughput`)),
      problemsOf(r).join('\n'),
    );
  });

  test('a session opened after its last response', () => {
    const r = structuredClone(load('echo'));
    const life = r.sections.find((s) => s.id === 'lifetime')!;
    const row = life.table.rows.find((x) => x.requests !== 0)!;
    row.opened = Number(row.last) + 5;
    assert.ok(
      problemsOf(r).some((p) => p.includes('after its last response')),
      problemsOf(r).join('\n'),
    );
  });
});

describe('sentences against their own numbers (the runs of the issue, as saved)', () => {
  test('proxy --upstream-rtt: the link the findings name is a recorded figure', () => {
    const r = today(load('proxy.upstream-rtt'));
    const f = r.findings.find((x) => x.id === 'before-h1')!;
    assert.match(f.measured, /the fixture behind a 20 ms link/);
    assert.equal(f.evidence.upstreamRttMs, 20);
    assert.deepEqual(checkFindings(r), []);
  });

  test('echo: "agrees" for a report ratio on the other side of 1 is caught', () => {
    const r = today(load('echo'));
    const f = r.findings.find((x) => x.id === 'large-independent-throughput')!;
    f.verdict = 'agrees';
    f.evidence.ratio = 0.95;
    f.evidence.tolerance = 0.2;
    f.evidence.change = 0.95 / Number(f.evidence.reportRatio) - 1;
    const problems = problemsOf(r);
    assert.ok(
      problems.some((p) =>
        p.startsWith('large-independent-throughput: agrees, yet 0.95 is on the other side'),
      ),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.includes('as wide as the report')),
      problems.join('\n'),
    );
  });

  test("echo: the paragraphs' queue, connection-window and preset words against the rows", () => {
    const r = today(load('echo', true));
    const i = r.explanation.findIndex((p) => p.startsWith('1.00 MiB bodies'));
    r.explanation[i] =
      `${r.explanation[i]!.replace('(windows "node")', '(windows "browser")')} HTTP/1.1 waited: that queue is the latency HTTP/2's streams avoid. While one stream waited for credit the others' data kept the connection busy.`;
    const problems = problemsOf(r);
    for (const p of [
      '1.00 MiB: the paragraph headlines windows "browser", the findings "node"',
      `1.00 MiB: "that queue is the latency HTTP/2's streams avoid", but HTTP/2's latency ratio was`,
      `1.00 MiB: "the others' data kept the connection busy", with`,
    ])
      assert.ok(
        problems.some((x) => x.startsWith(p)),
        `${p} not in:\n${problems.join('\n')}`,
      );
  });

  test("echo: Little's law named where the means do not follow throughput", () => {
    const r = today(load('echo'));
    const f = r.findings.find((x) => x.evidence.littlePredicted !== undefined)!;
    f.evidence.littlePredicted = 0.66;
    f.evidence.medianLatencyRatio = 0.7;
    f.evidence.meanLatencyRatio = 0.83;
    f.explanation += ' So latency follows throughput.';
    assert.ok(
      problemsOf(r).some((p) => p === `${f.id}: latency said to follow throughput, but 0.83 against 0.66`),
      problemsOf(r).join('\n'),
    );
  });

  test('chunks: slow start named for 150 ms of extra round trips against a measured 96 ms', () => {
    const r = today(load('chunks', true));
    const f = r.findings.find((x) => x.id === 'sweep-c8')!;
    f.explanation = 'Slow start: 3 more round trips of 50 ms, 150 ms against the measured 96 ms';
    Object.assign(f.evidence, { extraMs: 150, gapMs: 96, extraRounds: 3, rttMs: 50 });
    assert.ok(
      problemsOf(r).some(
        (p) => p === 'sweep-c8: slow start named, but 150 ms predicted against 96 ms measured',
      ),
      problemsOf(r).join('\n'),
    );
  });

  test('chunks: a ratio the summary prints rounded twice (0.826 beside 0.82)', () => {
    const r = today(load('chunks', true));
    const f = r.findings.find((x) => x.id === 'sweep-c8')!;
    const summary = r.sections.find((s) => s.id === 'summary')!;
    const row = summary.table.rows.find((x) => x.c === 8)!;
    const v = Number(row[String(f.evidence.link)]);
    assert.equal(v, Number(v.toFixed(2)), 'rounded once, to two decimals');
    row[String(f.evidence.link)] = v + 0.006;
    assert.ok(
      problemsOf(r).some((p) => p === `sweep-c8: the words say ${v.toFixed(2)}, the summary ${v + 0.006}`),
      problemsOf(r).join('\n'),
    );
  });

  test('tiles: cancellation is judged on the extra over idle, not on absolute times', () => {
    const t = today(load('tiles', true));
    const f = t.findings.find((x) => x.id === 'cancel-h2')!;
    // 124 ms against 25 ms idle: 4.95× the idle time, against the report's 86/59 = 1.46×.
    assert.equal(f.evidence.reportRatio, 86 / 59);
    assert.equal(f.evidence.ratio, Number(f.evidence.wantedMs) / Number(f.evidence.baselineMs));
    assert.equal(f.verdict, 'differs');
  });

  test('tiles: the "worth about 9%" row carries every environment the run burst on', () => {
    const r = structuredClone(load('tiles'));
    const burst = r.data.burst as Record<string, unknown>;
    burst.wan = structuredClone(burst.loopback);
    const t = today(r);
    assert.deepEqual(problemsOf(t), []);
    const f = t.findings.find((x) => x.id === 'burst-ratio')!;
    assert.match(
      f.measured,
      /^h1\/h2 (\d\.\d\d)× \(loopback\); wan \1×; loopback: undecided: 1 kept run a side/,
    );
    assert.equal(f.evidence['ratio-wan'], f.evidence.ratio);
  });
});

describe("every direction is compare's decision over the runs (decide())", () => {
  test('proxy: "no difference" for both fixes beside an interval below 1 is caught', () => {
    const r = today(load('proxy.upstream-rtt'));
    const summary = r.sections.find((s) => s.id === 'summary')!;
    const c = Math.max(...summary.table.rows.map((x) => Number(x.c)));
    const row = summary.table.rows.find((x) => x.c === c && x.protocol === 'h1')!;
    row.speedup = 0.36;
    row.ci = '0.19–0.74';
    const i = r.explanation.findIndex((p) => p.startsWith('The report saw 6×'));
    r.explanation[i] = r.explanation[i]!.replace(
      /Both fixes together, over HTTP\/1\.1: [^(]*/,
      'Both fixes together, over HTTP/1.1: no difference the runs could show ',
    );
    const problems = problemsOf(r);
    // The words against compare's decision over the saved runs, and the table's cells too.
    assert.ok(
      problems.some((p) =>
        /^the paragraph on both fixes says "no difference the runs could show ": the words say same, the runs decided undecided/.test(
          p,
        ),
      ),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.startsWith('summary: the interval printed is 0.19–0.74, the saved runs give')),
      problems.join('\n'),
    );
  });

  test('chunks: a saved decision that is not decide() over the saved times, and words that follow it', () => {
    const r = today(load('chunks', true));
    type L = {
      link: { id: string };
      rows: Array<{
        concurrency: number;
        h1: { times?: number[] };
        h2: { times?: number[] };
        h2VsH1?: { outcome: string };
      }>;
    };
    const link = (r.data.links as L[])[0]!;
    const row = link.rows.at(-1)!;
    row.h1.times = [300, 310, 305, 302, 308];
    row.h2.times = [600, 610, 620, 605, 615];
    row.h2VsH1!.outcome = 'undecided';
    const problems = problemsOf(r);
    assert.ok(
      problems.some((p) =>
        p.startsWith(
          `${link.link.id} c=${row.concurrency} h2VsH1: saved undecided, decide() over the saved runs worse`,
        ),
      ),
      problems.join('\n'),
    );
    // The paragraph says HTTP/1.1 fetched faster: against an undecided row that is a second decision.
    assert.ok(
      problems.some((p) =>
        p.startsWith(`${link.link.id} paragraph at c=${row.concurrency}: the words say below`),
      ),
      problems.join('\n'),
    );
  });

  test('chunks --quick: a finding explaining a direction the runs did not decide is caught', () => {
    const r = today(load('chunks'));
    const f = r.findings.find((x) => x.id === 'sweep-c16')!;
    assert.equal(f.evidence.outcome, 'undecided');
    f.explanation =
      "HTTP/1.1's 16 connections ended their runs with more window: more in flight per round trip, the report's own explanation, measured";
    assert.ok(
      problemsOf(r).some((p) =>
        p.startsWith('sweep-c16: the explanation says below, the runs decided undecided'),
      ),
      problemsOf(r).join('\n'),
    );
  });

  test('echo: "the same direction as the report" beside an undecided row is caught', () => {
    const r = today(load('echo'));
    const f = r.findings.find((x) => x.id === 'large-one-throughput')!;
    assert.match(
      f.measured,
      /the runs decide no direction: 2 kept runs a side; the rank test decides nothing with fewer than 4/,
    );
    f.measured = f.measured.replace(
      /the runs decide no direction[^)]*/,
      'the runs decided the same direction as the report',
    );
    assert.ok(
      problemsOf(r).some((p) =>
        p.startsWith('large-one-throughput: the words say "the runs decided the same direction'),
      ),
      problemsOf(r).join('\n'),
    );
  });

  test('echo: the presets are compared by decide() over their runs, and the words follow it', () => {
    const saved = load('echo', true);
    type R = {
      body: number;
      window: string;
      variant: string;
      concurrency: number;
      h1: { rpsRuns?: number[] };
      h2: { rpsRuns?: number[]; stalledShare?: number };
    };
    const rows = saved.data.rows as R[];
    const big = Math.max(...rows.map((x) => x.body));
    const top = Math.max(...rows.map((x) => x.concurrency));
    const one = rows.filter((x) => x.body === big && x.variant === 'one' && x.concurrency === top);
    assert.ok(one.length >= 2);
    // The most stalled preset's runs give h2/h1 about 0.5, every other's about 1: decided higher.
    const stalled = (x: R) => x.h2.stalledShare ?? 0;
    const most = one.reduce((a, b) => (stalled(b) > stalled(a) ? b : a));
    for (const x of one) {
      x.h1.rpsRuns = [100, 101, 99, 100, 102];
      x.h2.rpsRuns = x === most ? [50, 51, 49, 52, 50] : [100, 102, 98, 101, 99];
      if (x !== most) x.h2.stalledShare = Math.max(stalled(x), 0.06);
    }
    const r = today(saved);
    const p = r.explanation.find((x) => x.startsWith('1.00 MiB bodies'))!;
    assert.match(p, /decided higher by the runs, \d\.\d×/);
    assert.deepEqual(problemsOf(r), []);
    const i = r.explanation.indexOf(p);
    r.explanation[i] = p.replace(
      /Larger windows gave .*$/,
      'The windows stalled the server without costing throughput (+0%, the same by the runs).',
    );
    assert.ok(
      problemsOf(r).some((x) => x.startsWith('1.00 MiB presets: the words say same, the runs decided above')),
      problemsOf(r).join('\n'),
    );
  });
});

describe('tiles: the sweep and the cancellation legs say only what their runs decide', () => {
  test('tiles: a sweep of 1, 4, 16 workers where HTTP/1.1 got 21% slower is no "doubling"', () => {
    const r = structuredClone(load('tiles'));
    const points = (r.data.sweep as Record<string, SweepRuns[]>).loopback!;
    assert.deepEqual(
      points.map((p) => p.pool),
      [1, 4, 16],
    );
    // Five bursts a point: 4 workers decided faster than 1, 16 decided 21% slower than 4.
    withWalls(points, [3500, 2000, 2420]);
    const t = today(r);
    const p = t.explanation.find((x) => x.startsWith('On loopback, from '))!;
    assert.match(
      p,
      /HTTP\/1\.1 stopped gaining at 4 workers \(\d+ ms; 16 workers \(4× as many\): wall time 1\.2× longer \(1\.21×, interval [\d.–]+\)\)/,
    );
    assert.deepEqual(problemsOf(t), []);
    const old = structuredClone(t);
    const i = old.explanation.indexOf(p);
    old.explanation[i] = p.replace(
      /; 16 workers \(4× as many\): wall time 1\.2× longer/,
      '; a doubling gave less',
    );
    assert.ok(
      problemsOf(old).some((x) => x === 'sweep loopback: "a doubling" on a grid of 1, 4, 16 workers'),
    );
  });

  test('tiles: a sweep claims no gain its runs do not decide', () => {
    // The saved sweep has one median a pool size, falling 3494 → 1813 ms: no runs behind a gain.
    const saved = load('tiles');
    const t = today(saved);
    const p = t.explanation.find((x) => x.startsWith('On loopback, from '))!;
    assert.doesNotMatch(p, /gaining/);
    assert.ok(p.includes(`HTTP/1.1, each pool size: ${NO_RUNS}.`), p);
    const pool = t.findings.find((x) => x.id === 'pool-size')!;
    assert.equal(pool.verdict, 'not-measured');
    assert.ok(pool.measured.endsWith(NO_RUNS), pool.measured);
    // The words a single figure a point gave ("kept gaining up to 16 workers") are caught.
    const old = structuredClone(t);
    old.explanation[old.explanation.indexOf(p)] = p.replace(
      `HTTP/1.1, each pool size: ${NO_RUNS}.`,
      'HTTP/1.1 kept gaining up to 16 workers.',
    );
    assert.ok(
      problemsOf(old).includes('sweep loopback: "HTTP/1.1 kept gaining" from one figure a pool size'),
      problemsOf(old).join('\n'),
    );
    // Runs whose medians fall 20% a step but overlap decide nothing: no gain is claimed.
    const r = structuredClone(saved);
    const points = (r.data.sweep as Record<string, SweepRuns[]>).loopback!;
    withWalls(points, [3000, 2400, 1920], [0.6, 0.8, 1, 1.2, 1.4]);
    const u = today(r);
    const q = u.explanation.find((x) => x.startsWith('On loopback, from '))!;
    assert.match(
      q,
      /Whether HTTP\/1\.1 gained beyond 1 worker the runs do not decide \(4 workers \(4× as many\): undecided/,
    );
    assert.doesNotMatch(q, /kept gaining|stopped gaining/);
    assert.deepEqual(problemsOf(u), []);
  });

  test('tiles: "ignoring cancellation cost it" only where the runs decide it', () => {
    type Leg = { target: string; serverMode: string; index: number };
    const saved = load('tiles', true);
    const legsOf = (r: typeof saved) => (r.data.burst as Record<string, { cancel: Leg[] }>).loopback!.cancel;
    const runs = (r: typeof saved, m: string) =>
      legsOf(r).filter((x) => x.target === 'https' && x.serverMode === m).length;
    // The saved full run keeps 4 runs a leg, the fewest the rank test decides with.
    assert.equal(runs(saved, 'honour'), 4);
    assert.equal(runs(saved, 'ignore'), 4);
    const t = today(saved);
    assert.match(
      t.explanation.find((x) => x.startsWith('On loopback, abandoning '))!,
      /ignoring cancellation made the wanted tile \d+\.\d× later/,
    );
    assert.equal(t.findings.find((x) => x.id === 'cancel-ignore')!.verdict, 'agrees');
    assert.deepEqual(problemsOf(t), []);
    // Three runs a leg, the same figures otherwise: the rank test cannot decide, and nothing is claimed.
    const r = structuredClone(saved);
    const burst = (r.data.burst as Record<string, { cancel: Leg[] }>).loopback!;
    burst.cancel = burst.cancel.filter((x) => x.target !== 'https' || x.index < 3);
    assert.equal(runs(r, 'ignore'), 3);
    const u = today(r);
    const p = u.explanation.find((x) => x.startsWith('On loopback, abandoning '))!;
    assert.match(p, /whether ignoring cancellation made the wanted tile later the runs do not decide/);
    assert.doesNotMatch(p, /cost it/);
    const f = u.findings.find((x) => x.id === 'cancel-ignore')!;
    assert.equal(f.verdict, 'not-measured');
    assert.equal(f.evidence.outcome, 'undecided');
    assert.deepEqual(problemsOf(u), []);
  });
});

describe("tiles: which target was faster is compare's decision over the bursts", () => {
  test('tiles: "h2 faster" where the runs decided nothing is caught', () => {
    const r = today(load('tiles', true));
    const i = r.explanation.findIndex((x) => x.startsWith('On loopback, over http://'));
    assert.ok(i >= 0);
    r.explanation[i] = r.explanation[i]!.replace(
      /over h2 \([^)]*\)/,
      'over h2 (h2 9% faster, decided by the runs)',
    );
    assert.ok(
      problemsOf(r).some((p) =>
        /^burst loopback paragraph: the words say above, the runs decided (undecided|same)/.test(p),
      ),
      problemsOf(r).join('\n'),
    );
  });
  test('tiles: TLS alone "the same as plain HTTP/1.1" where the runs set it apart is caught', () => {
    const r = today(load('tiles', true));
    const i = r.explanation.findIndex((x) => x.startsWith('On loopback, over http://'));
    assert.match(r.explanation[i]!, /the runs decided it apart from plain HTTP\/1\.1/);
    r.explanation[i] = r.explanation[i]!.replace(
      /the runs decided it apart from plain HTTP\/1\.1[^.]*/,
      'the runs decided it the same as plain HTTP/1.1, so TLS is not what the protocols differ by',
    );
    assert.ok(
      problemsOf(r).some((p) =>
        /^burst loopback, TLS alone: the words say same, the runs decided (above|below)/.test(p),
      ),
      problemsOf(r).join('\n'),
    );
  });
});

describe('--quick runs say what they cannot decide', () => {
  test('chunks --quick says in one line why it has no row at concurrency 1 and 8', () => {
    const r = today(load('chunks'));
    for (const c of [1, 8]) {
      const f = r.findings.find((x) => x.id === `sweep-c${c}`)!;
      assert.equal(f.verdict, 'not-measured');
      assert.match(
        f.measured,
        new RegExp(
          `^not measured here, because --quick runs concurrency 4 and 16 only, .*--concurrency ${c} or a full run measures it$`,
        ),
      );
      assert.doesNotMatch(f.measured, /\n/);
    }
  });

  test('a --quick run never estimates the runs that would tell: the rank test cannot decide with 2', () => {
    for (const { name, full } of SAVED.filter((x) => !x.full)) {
      const saved = load(name, full);
      const r = today(saved);
      // A saved run this code cannot word again (proxy runs saved without their per-cell times).
      if (r === saved) continue;
      const text = renderStudyText(r, { width: 10_000 });
      assert.doesNotMatch(text, /about \d+ runs a side would|~\d+ runs\)/, name);
      assert.match(text, /Quick: /, `${name}: the up-front line`);
    }
  });
});

describe("echo: the client-queue sentence follows compare's latency decision", () => {
  test('an undecided latency is not "did not turn that queue into lower latency"', () => {
    const queue = (r: StudyResult) =>
      today(r).explanation.flatMap((p) =>
        [...p.matchAll(/HTTP\/1\.1 had \d+ connections for [^;:]*[;,:][^.]*\./g)].map((m) => m[0]),
      );
    // --quick keeps 2 runs a side: the rank test decides nothing, and the words say so.
    const quick = queue(load('echo'));
    assert.ok(quick.length > 0);
    for (const s of quick) {
      assert.match(s, /the runs do not decide/);
      assert.doesNotMatch(s, /did not turn that queue/);
    }
    // The full run decided 1 MiB's latency higher over HTTP/2: there the streams did not help.
    assert.ok(queue(load('echo', true)).some((s) => /the runs decided HTTP\/2's latency higher/.test(s)));
  });
});
