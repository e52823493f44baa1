// Every sentence h2lab prints is true of its own data. Saved results of real comparisons
// (test/fixtures/report/, written by scripts/gen-report-fixtures.ts: the fixture server, nginx with
// its defaults, the same nginx behind a 50 ms link losing 2%, a burst of 8 × 10 KiB through 200 ms
// and 10 Mbit/s, the same at 64 over a grid of four links (loss 0 and 2%, cubic and reno), a 404 target, a refused port, 5% reset
// requests) are re-analysed with this code and
// rendered as terminal text, Markdown and HTML; the assertions hold each rendering to the fields it
// came from and to the settings the runs recorded.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { diffResults, reanalyze } from '../../src/compare/index.ts';
import { formatMs } from '../../src/core/index.ts';
import type { CompareResult } from '../../src/model/index.ts';
import { ANSWER_MAX_LINES, answerLines, buildAnswer } from '../../src/report/answer.ts';
import { cellFailures, statusText } from '../../src/report/failures.ts';
import {
  loadHtmlAssets,
  renderDiffMarkdown,
  renderDiffTerminal,
  renderHtml,
  renderMarkdown,
  renderTerminal,
} from '../../src/report/index.ts';
import { lengthenedDurationMs } from '../../src/report/run-length.ts';
import { compareSettings } from '../../src/report/settings.ts';
import { levelText } from '../../src/report/verdict.ts';

const NAMES = ['fixture', 'nginx', 'lossy', 'burst-200ms', 'grid', 'not-found', 'refused', 'resets'] as const;

/** A saved result, analysed again by this code (its verdict as this code words it). */
function load(name: (typeof NAMES)[number]): CompareResult {
  const raw = JSON.parse(
    readFileSync(new URL(`../fixtures/report/${name}.json`, import.meta.url), 'utf8'),
  ) as CompareResult;
  return reanalyze(raw);
}

const assets = loadHtmlAssets();

/** Terminal, Markdown and the HTML's text (tags out, entities back), each as one string. */
function renderings(r: CompareResult): Record<'terminal' | 'markdown' | 'html', string> {
  const html = renderHtml(r, assets)
    .replace(/<script[\s\S]*?<\/script>/g, '')
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
  return { terminal: renderTerminal(r, { width: 80 }), markdown: renderMarkdown(r), html };
}

/** Text with line breaks and repeated spaces as single spaces (wrapping does not split a claim). */
const flat = (s: string) => s.replace(/\s+/g, ' ');

describe('the answer block', () => {
  for (const name of NAMES) {
    it(`${name}: fits ${ANSWER_MAX_LINES} lines at 80 columns, comes first, and is the same in all three renderings`, () => {
      const r = load(name);
      const lines = answerLines(buildAnswer(r), 80);
      assert.ok(lines.length > 0 && lines.length <= ANSWER_MAX_LINES, lines.join('\n'));
      for (const l of lines) assert.ok(l.length <= 80, `${l.length} columns: ${l}`);
      const term = renderTerminal(r, { width: 80 });
      // First: after the title (and a status line), before the settings and the tables.
      const at = term.indexOf(lines[0]!);
      assert.ok(at >= 0 && at < term.indexOf('Settings that can decide'), term.slice(0, 600));
      // --brief is the title and the answer alone.
      const brief = renderTerminal(r, { width: 80, brief: true });
      assert.ok(brief.includes(lines.join('\n')));
      assert.doesNotMatch(brief, /Settings that can decide|Verdict/);
      // Every decision line is in report.md and report.html, word for word.
      const { markdown, html } = renderings(r);
      for (const g of buildAnswer(r).groups)
        for (const l of g.lines) {
          assert.ok(markdown.includes(l.text), `report.md lacks: ${l.text}`);
          for (const part of [l.level, l.verdict, l.effect, l.others, l.why, l.failures].filter(Boolean))
            assert.ok(flat(html).includes(flat(part)), `report.html lacks: ${part}`);
        }
      assert.ok(markdown.indexOf('## Answer') < markdown.indexOf('Settings that can decide'));
      assert.ok(html.indexOf('Answer') < html.indexOf('Settings that can decide'));
    });
  }

  it('numbers in the answer are the comparisons and runs they came from', () => {
    const r = load('fixture');
    for (const g of buildAnswer(r).groups)
      for (const l of g.lines) {
        for (const c of l.comparisons) {
          const saved = r.comparisons.find(
            (x) =>
              x.workload === c.workload &&
              x.concurrency === c.concurrency &&
              x.protocol === c.protocol &&
              x.metric === c.metric,
          );
          assert.deepEqual(c.interval, saved?.interval);
          if (l.comparisons.length === 1)
            assert.ok(
              l.effect.includes(`${c.interval.ratio.toFixed(2)}×`),
              `${l.effect} vs ${c.interval.ratio}`,
            );
        }
        // "h1's N connections" is the pool h1's runs recorded (the settings table's number).
        const m = /h1's (\d+) connections for (\d+)/.exec(l.why);
        if (m) {
          const cell = r.cells.find((c) => c.protocol === 'h1' && c.concurrency === Number(m[2]));
          assert.ok(cell?.runs.slice(cell.warmupRuns).every((x) => x.transport.connections === Number(m[1])));
        }
        if (l.decision === 'undecided') assert.match(l.why, /about \d+ runs would tell|cannot tell/);
      }
  });
  for (const name of NAMES)
    it(`${name}: a line quotes, at each of its levels, a strategy that carried its decision there`, () => {
      const r = load(name);
      for (const g of buildAnswer(r).groups)
        for (const l of g.lines) {
          if (l.decision !== 'undecided') continue;
          // "c=8, 64 undecided — h2-pool …" must not quote h2-pool at c=8 when h2 was the one undecided.
          for (const c of l.comparisons)
            assert.equal(
              c.outcome,
              'undecided',
              `${l.text}: ${c.protocol} at ${c.concurrency} was ${c.outcome}`,
            );
        }
    });
});

describe("the load client's saturation is part of the answer", () => {
  it('a line whose cells had a saturated client is marked *, and the note says what it means, in all three renderings', () => {
    const raw = JSON.parse(
      readFileSync(new URL('../fixtures/report/fixture.json', import.meta.url), 'utf8'),
    ) as CompareResult;
    const h2 = raw.cells.find((c) => c.protocol === 'h2' && c.concurrency === 64)!;
    for (const x of h2.runs) x.client.saturated = true;
    const r = reanalyze(raw);
    const answer = buildAnswer(r);
    const line = answer.groups.flatMap((g) => g.lines).find((l) => l.levels.includes(64))!;
    assert.equal(line.saturated, true);
    assert.match(line.verdict, / \*$/);
    const clean = answer.groups.flatMap((g) => g.lines).filter((l) => !l.levels.includes(64));
    assert.ok(
      clean.every((l) => !l.saturated && !l.verdict.endsWith('*')),
      'only the saturated cells are marked',
    );
    assert.ok(answer.note, 'a note');
    const lines = answerLines(answer, 80);
    assert.ok(lines.length <= ANSWER_MAX_LINES, lines.join('\n'));
    for (const [kind, text] of Object.entries(renderings(r)))
      assert.ok(flat(text).includes(flat(answer.note)), `${kind} lacks the note`);
    // Without saturation, neither mark nor note.
    assert.equal(buildAnswer(load('fixture')).note, undefined);
  });
});

describe('no sentence contradicts a recorded setting', () => {
  for (const name of NAMES) {
    it(`${name}: no Nagle blame where it is not the cause, no cleartext over https, counts as recorded`, () => {
      const r = load(name);
      for (const [kind, text] of Object.entries(renderings(r))) {
        const t = flat(text);
        // The fixture records TCP_NODELAY on both ends, nginx has tcp_nodelay on by default: neither
        // is told its socket has Nagle's algorithm on.
        assert.doesNotMatch(t, /probably has Nagle/, `${name} ${kind}`);
        // https:// targets are TLS, whatever was recorded of the version.
        if (/^https:/.test(r.target.url)) assert.doesNotMatch(t, /\bcleartext\b/, `${name} ${kind}`);
        // "X's N connections": N is what the runs of X recorded as their pool.
        for (const m of t.matchAll(/\b(h1|h2|h2-pool)'s (\w+) connections? (held|\(|for)/g)) {
          const words = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
          const n = words.includes(m[2]!) ? words.indexOf(m[2]!) : Number(m[2]);
          const pools = new Set(
            r.cells
              .filter((c) => c.protocol === m[1])
              .flatMap((c) => c.runs.map((x) => x.transport.connections)),
          );
          assert.ok(pools.has(n), `${name} ${kind}: "${m[0]}" but ${m[1]} recorded ${[...pools].join(', ')}`);
        }
        // "about N runs would tell" is more than the runs that could not tell.
        const kept = r.runsPerCell - r.warmupRuns;
        for (const m of t.matchAll(/(?:about|~)(\d+) (?:kept )?runs (?:a side |per strategy )?would tell/g))
          assert.ok(Number(m[1]) > kept, `${name} ${kind}: "${m[0]}" after ${kept} kept runs`);
        // A stream limit is named as the cause only when a connection reached it.
        for (const m of t.matchAll(/SETTINGS_MAX_CONCURRENT_STREAMS \((\d+)\) was reached/g)) {
          const peaks = r.cells.flatMap((c) =>
            c.runs.map((x) => x.connections.peakStreamsPerConnection ?? 0),
          );
          assert.ok(
            Math.max(...peaks) >= Number(m[1]),
            `${name} ${kind}: ${m[0]} with peak ${Math.max(...peaks)}`,
          );
        }
        if (/beyond the first 100/.test(t)) {
          const peaks = r.cells.flatMap((c) =>
            c.runs.map((x) => x.connections.peakStreamsPerConnection ?? 0),
          );
          assert.ok(
            Math.max(...peaks) >= 100,
            `${name} ${kind}: "beyond the first 100" at peak ${Math.max(...peaks)}`,
          );
        }
      }
    });
  }

  it('nginx: the stream-slot waits at c=8 are its GOAWAYs (keepalive_requests), not a stream limit', () => {
    const r = load('nginx');
    const h2 = r.cells.find((c) => c.protocol === 'h2')!;
    const run = h2.runs[h2.runs.length - 1]!;
    const t = flat(renderTerminal(r));
    if ((run.connections.streamCapHits ?? 0) === 0) return;
    assert.ok(
      (run.connections.peakStreamsPerConnection ?? 0) < (run.connections.serverMaxConcurrentStreams ?? 0),
    );
    assert.doesNotMatch(t, /SETTINGS_MAX_CONCURRENT_STREAMS \(\d+\) (was reached|made requests wait)/);
    assert.match(t, /ended \d+ sessions? with GOAWAY/);
  });

  it('the fixture: the settings say TCP_NODELAY on both ends, and no sentence blames Nagle', () => {
    const r = load('fixture');
    const nagle = compareSettings(r).find((s) => s.name === 'Nagle')!;
    assert.match(nagle.value, /fixture server's/);
    assert.doesNotMatch(flat(renderTerminal(r)), /Nagle's algorithm on/);
  });
});

describe('a lossy link (nginx behind 50 ms and 2% loss)', () => {
  it('the link is named as recorded, nothing says loopback, and the loss counts add up', () => {
    const r = load('lossy');
    const link = r.cells[0]!.runs[0]!.environment.link!;
    for (const [kind, text] of Object.entries(renderings(r))) {
      const t = flat(text);
      assert.match(t, /rtt50ms\+loss2%/, kind);
      assert.doesNotMatch(t, /Measured over loopback|loopback, so it hardly matters/, kind);
      // "retransmitted N segments on h1's six connections (a, b, …)": the list sums to N, one per
      // connection; the same for the packets the link dropped.
      for (const m of t.matchAll(
        /retransmitted (\d+) segments? on (h1|h2)'s (\w+) connections \(([\d, ]+)\)/g,
      )) {
        const each = m[4]!.split(', ').map(Number);
        assert.equal(
          each.reduce((a, b) => a + b, 0),
          Number(m[1]),
          `${kind}: ${m[0]}`,
        );
      }
      for (const m of t.matchAll(/(\d+) packets? of (h1|h2)'s (\w+) connections \(([\d, ]+)\)/g)) {
        const each = m[4]!.split(', ').map(Number);
        assert.equal(
          each.reduce((a, b) => a + b, 0),
          Number(m[1]),
          `${kind}: ${m[0]}`,
        );
      }
    }
    assert.equal(link.rttMs, 50);
    assert.ok(Math.abs((link.loss ?? 0) - 0.02) < 1e-9, `loss ${link.loss}`);
    assert.match(
      flat(renderTerminal(r)),
      new RegExp(`rtt ${link.rttMs.toFixed(1)} ms, loss ${(link.loss! * 100).toFixed(0)}%`),
    );
  });
});

describe('a burst of 8 × 10 KiB through 200 ms (handshakes inside)', () => {
  it('h2 slower: the answer names the initial windows with the recorded counts; the recommendation names who was worse and who tied', () => {
    const r = load('burst-200ms');
    const answer = buildAnswer(r);
    const line = answer.groups[0]!.lines[0]!;
    const h2 = r.comparisons.find((c) => c.protocol === 'h2')!;
    if (h2.outcome !== 'worse') return; // the saved runs decided otherwise: nothing to check here
    assert.equal(line.decision, 'keep');
    const h1Run = r.cells.find((c) => c.protocol === 'h1')!.runs.at(-1)!;
    const iw = h1Run.environment.link?.initialCwnd ?? 10;
    const conns = h1Run.burst?.connectionsOpened ?? h1Run.transport.connections;
    assert.match(
      line.why,
      new RegExp(
        `h1's ${conns} connections start with ${conns * iw} segments in the first round trip, h2's 1 with ${iw}`,
      ),
    );
    const rec = flat(renderTerminal(r)).split('Recommendation')[1]!;
    assert.match(rec, /h2 was worse|worse than h1: h2 at N=8/);
    for (const c of r.comparisons.filter((x) => x.outcome === 'no-clear-difference'))
      assert.ok(rec.includes(`or ${c.protocol}, no clear difference`), rec);
    assert.doesNotMatch(rec, /the others were worse/);
  });
});

describe('a grid of links (64 × 10 KiB, 200 ms, 10 Mbit/s, loss 0 and 2%, cubic and reno)', () => {
  it('the answer has a line per link under one heading; the recommendation counts every strategy’s cells as the comparisons say', () => {
    const r = load('grid');
    const answer = buildAnswer(r);
    assert.equal(answer.groups.length, 1);
    const lines = answer.groups[0]!.lines;
    assert.equal(lines.length, r.axes.net.length, lines.map((l) => l.text).join('\n'));
    for (const [i, net] of r.axes.net.entries()) {
      // The line leads with what sets its link apart, and its numbers are that link's.
      const l = lines.find((x) => x.net === net)!;
      const apart = net.split('+').filter((t) => !r.axes.net.every((n) => n.split('+').includes(t)));
      assert.ok(l.level.startsWith(apart.join('+')), `${i}: ${l.level} for ${net}`);
      for (const c of l.comparisons) assert.equal(c.net, net);
    }
    const rec = flat(renderTerminal(r)).split('Recommendation')[1]!.split('What could distort')[0]!;
    const cmp = r.comparisons.filter((c) => c.metric === 'burstCompletionMs');
    for (const p of ['h2', 'h2-pool']) {
      const mine = cmp.filter((c) => c.protocol === p);
      const undecided = mine.filter((c) => c.outcome === 'undecided').length;
      const better = mine.filter((c) => c.outcome === 'better').length;
      // Whichever is recommended or among "the others", its counts are the comparisons'.
      const said = new RegExp(
        `${p === 'h2' ? '(?<!-)h2(?!-)' : 'h2-pool'}[^.]*?better (?:than h1 [^.]*?)?in ${better} of ${mine.length}`,
      );
      if (rec.includes('use ') || rec.includes('The others')) assert.match(rec, said, `${p}: ${rec}`);
      if (undecided > 0) assert.match(rec, new RegExp(`undecided in ${undecided}`), rec);
    }
  });
});

describe('failed requests and statuses are shown with their counts', () => {
  it('a 404 target: the status and the path, in all three renderings, with the runs’ counts', () => {
    const r = load('not-found');
    const path = r.axes.workloads[0]!.paths[0]!;
    for (const [kind, text] of Object.entries(renderings(r))) {
      const t = flat(text);
      assert.match(t, /404 Not Found/, kind);
      assert.ok(t.includes(`for ${path}`), `${kind}: no path`);
    }
    // The table's count is the runs' counts.byStatus.
    const cell = r.cells.find((c) => c.protocol === 'h1')!;
    const f = cellFailures(cell)!;
    const recorded = cell.runs.reduce((n, x) => n + (x.counts.byStatus['404'] ?? 0), 0);
    assert.equal(f.statuses[0]![1], recorded);
    assert.ok(flat(renderTerminal(r)).includes(`${statusText('404')} ×${recorded.toLocaleString('en-US')}`));
  });

  it('a refused port: every cell says no request completed and why, in all three renderings', () => {
    const r = load('refused');
    for (const [kind, text] of Object.entries(renderings(r))) {
      assert.match(flat(text), /no request completed: the target could not be reached \(ECONNREFUSED/, kind);
    }
  });

  it('5% reset requests: the failed count and its class, in the answer, the table and the HTML', () => {
    const r = load('resets');
    for (const c of r.cells) {
      const f = cellFailures(c)!;
      const kept = c.runs.slice(c.warmupRuns);
      assert.equal(
        f.failed,
        kept.reduce((n, x) => n + x.counts.failed, 0),
      );
      assert.ok(
        f.classes.some(([k]) => k === 'reset'),
        JSON.stringify(f),
      );
      for (const [kind, text] of Object.entries(renderings(r))) {
        assert.ok(flat(text).includes(f.table), `${kind} lacks ${f.table}`);
        assert.match(flat(text), /of requests failed \(reset\)/, kind);
      }
    }
  });
});

describe('before/after of the same setup', () => {
  it('is drift, never "improved"; a changed option makes it a change', () => {
    const before = load('fixture');
    const after = structuredClone(before);
    // The after file's throughput three times the before's, nothing else changed: the machine drifted.
    for (const c of after.cells)
      for (const x of c.runs) {
        x.throughput.rps *= 3;
      }
    const scaled = reanalyze(after);
    const d = diffResults(before, scaled);
    assert.equal(d.sameSetup, true);
    const text = renderDiffTerminal(d) + renderDiffMarkdown(d);
    assert.doesNotMatch(text, /improved/);
    assert.match(text, /drift/);
    const changed = structuredClone(scaled);
    changed.options.durationMs = 1000;
    const d2 = diffResults(before, changed);
    assert.equal(d2.sameSetup, false);
    assert.match(renderDiffTerminal(d2), /improved/);
    // The level names the diff uses are the result's own.
    assert.equal(levelText(before, 'bytes-1024', 64), 'c=64');
  });
});

/** A saved result with some of its runs changed, analysed again by this code. */
function derived(name: (typeof NAMES)[number], change: (r: CompareResult) => void): CompareResult {
  const raw = JSON.parse(
    readFileSync(new URL(`../fixtures/report/${name}.json`, import.meta.url), 'utf8'),
  ) as CompareResult;
  change(raw);
  return reanalyze(raw);
}

describe('one decision rule, worded the same everywhere', () => {
  for (const name of NAMES)
    it(`${name}: "no clear difference" only where the whole interval lies within ±min-effect`, () => {
      const r = load(name);
      const band = Math.log(1 + Number(r.options.minEffect ?? 0.05)) + 1e-12;
      for (const c of r.comparisons.filter((x) => x.outcome === 'no-clear-difference'))
        assert.ok(
          Math.abs(Math.log(c.interval.lo)) <= band && Math.abs(Math.log(c.interval.hi)) <= band,
          `${c.protocol} ${c.net} ${c.concurrency} ${c.metric}: ${c.interval.lo}–${c.interval.hi}`,
        );
      // And no sentence says "no difference" beside an interval reaching beyond it.
      for (const l of buildAnswer(r).groups.flatMap((g) => g.lines))
        if (l.decision === 'same')
          for (const c of l.comparisons)
            assert.ok(
              Math.abs(Math.log(c.interval.hi)) <= band && Math.abs(Math.log(c.interval.lo)) <= band,
              l.text,
            );
    });

  it('a wide interval around 1 is undecided: the grid at loss 2% with reno, h2 1.03× (0.44–2.45)', () => {
    const r = load('grid');
    const c = r.comparisons.find((x) => x.protocol === 'h2' && x.net === 'rtt200ms+loss2%+10mbit+reno')!;
    assert.ok(c.interval.lo < 0.5 && c.interval.hi > 2, `${c.interval.lo}–${c.interval.hi}`);
    assert.equal(c.outcome, 'undecided');
  });

  it('every run of one side beyond the other: one slow run does not make "about N runs" out of a spread', () => {
    // Three kept runs a side of the 200 ms burst (the rank test's best p is 0.10, so undecided), one h2
    // run made three times slower: what tells is the rank test's 4 a side, not a spread.
    const r = derived('burst-200ms', (raw) => {
      raw.runsPerCell = 4;
      for (const cell of raw.cells) cell.runs = cell.runs.slice(0, 4);
      const h2 = raw.cells.find((c) => c.protocol === 'h2')!;
      h2.runs[3]!.burst!.completionMs *= 3;
    });
    const c = r.comparisons.find((x) => x.protocol === 'h2')!;
    assert.equal(c.outcome, 'undecided');
    assert.equal(c.runsNeeded, 4);
    const t = flat(renderTerminal(r, { width: 80 }));
    assert.match(t, /about 4 runs would tell/);
  });
});

/**
 * A burst sweep N = 2–128 over the grid's four links, built from the saved grid (64 × 10 KiB at
 * 200 ms, 10 Mbit/s): each N's cells are the saved ones with h2's completion times set to h1's run
 * for run × 1.25 at N ≤ 16 (one connection's initial window against six: h2 15–33% slower, as
 * measured with h2lab and h2load) and h2-pool's within a percent of h1's; above 16 as measured.
 */
function burstSweep(): CompareResult {
  const levels = [2, 8, 16, 32, 64, 128];
  return derived('grid', (raw) => {
    const cells = raw.cells;
    raw.cells = levels.flatMap((n) =>
      cells.map((c) => {
        const x = structuredClone(c);
        x.concurrency = n;
        x.id = x.id.replace('/c64/', `/c${n}/`);
        const h1 = cells.find((y) => y.net === c.net && y.protocol === 'h1')!;
        if (n <= 16 && x.protocol !== 'h1') {
          // h2: one connection, 25% slower; h2-pool: four, within a percent of h1.
          const [f, first] = x.protocol === 'h2' ? [1.25, 1.6] : [0.99, 1];
          x.runs.forEach((r, i) => {
            const b = h1.runs[i]!.burst!;
            r.burst!.completionMs = b.completionMs * (f + 0.01 * i);
            r.burst!.firstResponseMs = (b.firstResponseMs ?? b.completionMs) * first;
          });
        }
        return x;
      }),
    );
    raw.axes.concurrency = levels;
    for (const w of raw.axes.workloads) w.burst = levels;
  });
}

describe('answer lines: every strategy, never opposite directions, every link on the terminal', () => {
  it('a burst sweep N=2–128 over four links: no line joins opposite directions, every strategy appears', () => {
    const r = burstSweep();
    for (const l of buildAnswer(r).groups.flatMap((g) => g.lines)) {
      // Every strategy other than the baseline is named on every line.
      for (const p of r.axes.protocols.filter((x) => x !== r.baseline))
        assert.match(l.text, new RegExp(`(^|[^-\\w])${p}(?![-\\w])`), `${p} missing: ${l.text}`);
      // Each strategy's levels on the line went one way: one outcome, one side of 1.
      for (const p of r.axes.protocols.filter((x) => x !== r.baseline)) {
        const mine = l.levels.map(
          (n) => r.comparisons.find((c) => c.protocol === p && c.concurrency === n && c.net === l.net)!,
        );
        assert.equal(new Set(mine.map((c) => c.outcome)).size, 1, `${p}: ${l.text}`);
        assert.equal(
          new Set(mine.map((c) => Math.sign(Math.log(c.interval.ratio)))).size,
          1,
          `${p}: ${l.text}`,
        );
      }
    }
  });

  it('where h2 loses at small N the line names the initial windows and the slow-start round trips', () => {
    const r = burstSweep();
    const lines = buildAnswer(r).groups.flatMap((g) => g.lines);
    const lost = lines.filter((l) => l.decision === 'keep' && l.levels.every((n) => n <= 16));
    assert.ok(lost.length > 0, lines.map((l) => l.text).join('\n'));
    for (const l of lost)
      assert.match(
        l.why,
        /h1's \d+ connections start with \d+ segments in the first round trip, h2's 1 with 10 .*round trips of slow start from 10, and h2's first response ended at/,
        l.text,
      );
  });

  it('the terminal shows an answer for every link, at most 12 lines a workload, never "more lines" alone', () => {
    const r = burstSweep();
    const answer = buildAnswer(r);
    const lines = answerLines(answer, 80);
    for (const l of lines) assert.ok(l.length <= 80, l);
    assert.ok(lines.length <= ANSWER_MAX_LINES * answer.groups.length, lines.join('\n'));
    assert.doesNotMatch(lines.join('\n'), /more answer lines? in the detail below/);
    const body = lines.join(' ');
    for (const l of answer.groups[0]!.lines) {
      const short = l.level.split(' ')[0]!;
      assert.ok(body.includes(short), `${short} not on the terminal:\n${lines.join('\n')}`);
    }
  });
});

describe("the README's example on an 80-column terminal", () => {
  it('four links (rtt 20/200 ms × loss 0/2%) of h1 and h2 at c=1, 8 and 64: an answer line per link', () => {
    // The saved loopback comparison of the fixture at c=1 and 64 (c=8 a copy of 64), as if run over
    // the README's four links: h2's runs scaled per link and level so that no two levels share a line.
    const nets = ['rtt20ms', 'rtt200ms', 'rtt20ms+loss2%', 'rtt200ms+loss2%'];
    const scale = [0.7, 0.62, 1.3, 1.9];
    const perLevel = new Map([
      [1, 1.6],
      [8, 0.5],
      [64, 1],
    ]);
    const r = derived('fixture', (raw) => {
      const at8 = raw.cells
        .filter((c) => c.concurrency === 64)
        .map((c) => ({ ...structuredClone(c), concurrency: 8, id: c.id.replace('/c64/', '/c8/') }));
      const cells = [...raw.cells, ...at8];
      raw.cells = nets.flatMap((net, k) =>
        cells.map((c) => {
          const x = structuredClone(c);
          x.net = net;
          x.id = x.id.replace('/loopback/', `/${net}/`);
          if (x.protocol === 'h2')
            for (const run of x.runs) run.throughput.rps *= scale[k]! * perLevel.get(c.concurrency)!;
          return x;
        }),
      );
      raw.axes.net = nets;
      raw.axes.concurrency = [1, 8, 64];
    });
    const lines = answerLines(buildAnswer(r), 80);
    for (const l of lines) assert.ok(l.length <= 80, l);
    assert.ok(lines.length <= ANSWER_MAX_LINES, lines.join('\n'));
    assert.doesNotMatch(lines.join('\n'), /more answer lines? in the detail below/);
    // Every link is named on a line of its own answer.
    const text = lines.join('\n');
    for (const short of ['rtt20ms ', 'rtt200ms ', 'rtt20ms+loss2%', 'rtt200ms+loss2%'])
      assert.ok(text.includes(short.trim()), `${short} missing:\n${text}`);
  });
});

/**
 * A loss sweep 0 / 1 / 2% at 200 ms and 10 Mbit/s (cubic), h1 against h2, built from the saved grid:
 * loss 0 as measured (h2 0.62×, better); loss 1% and 2% from the grid's loss-2% cells with h2's runs
 * set to h1's times `factors[i]` (per run) — a loss where h2 went 2.19× slower, as measured.
 */
function lossSweep(factors: Record<string, number[]>): CompareResult {
  const nets = ['rtt200ms+10mbit+cubic', 'rtt200ms+loss1%+10mbit+cubic', 'rtt200ms+loss2%+10mbit+cubic'];
  return derived('grid', (raw) => {
    const cells = raw.cells.filter((c) => c.net.endsWith('+cubic') && c.protocol !== 'h2-pool');
    raw.cells = nets.flatMap((net) =>
      cells
        .filter((c) => c.net === (net.includes('loss') ? nets[2] : net))
        .map((c) => {
          const x = structuredClone(c);
          x.net = net;
          x.id = `${x.workload}/c${x.concurrency}/${net}/${x.protocol}`;
          const f = factors[net];
          const h1 = cells.find((y) => y.net === c.net && y.protocol === 'h1')!;
          if (x.protocol === 'h2' && f)
            x.runs.forEach((r, i) => {
              r.burst!.completionMs = h1.runs[i]!.burst!.completionMs * f[i % f.length]!;
            });
          return x;
        }),
    );
    raw.axes.net = nets;
    raw.axes.protocols = ['h1', 'h2'];
    raw.options.protocols = ['h1', 'h2'];
  });
}

describe('recommendations count every cell (loss 0 / 1 / 2% at 200 ms)', () => {
  it('h2 decided worse at 1% and 2%: never "use h2"; every worse cell is named', () => {
    const r = lossSweep({
      'rtt200ms+loss1%+10mbit+cubic': [1.3, 1.32, 1.34, 1.36, 1.38],
      'rtt200ms+loss2%+10mbit+cubic': [2.19, 2.21, 2.23, 2.25, 2.27],
    });
    const rec = flat(renderTerminal(r, { width: 80 }))
      .split('Recommendation')[1]!
      .split('What could distort')[0]!;
    assert.doesNotMatch(rec, /use h2\b/, rec);
    for (const c of r.comparisons.filter((x) => x.outcome === 'worse'))
      assert.ok(rec.includes(`(${c.net}) ${c.interval.ratio.toFixed(2)}×`), `${c.net}: ${rec}`);
  });

  it('h2 better at 0% and undecided elsewhere: "it depends on the link", each link by its own label and way', () => {
    const r = lossSweep({
      'rtt200ms+loss1%+10mbit+cubic': [1, 0.7, 1.5, 1.1, 1.4],
      'rtt200ms+loss2%+10mbit+cubic': [1, 0.75, 2.4, 1.05, 2.19],
    });
    const cmps = r.comparisons.filter((c) => c.protocol === 'h2');
    assert.deepEqual(
      cmps.map((c) => c.outcome),
      ['better', 'undecided', 'undecided'],
    );
    for (const rec of r.verdict!.recommendations) {
      assert.match(rec.text, /it depends on the link/, rec.text);
      for (const c of cmps)
        assert.ok(
          rec.text.includes(`over ${c.net} ${c.outcome}`),
          `${c.net} ${c.outcome} not said: ${rec.text}`,
        );
    }
  });
});

describe('runs long enough for the link', () => {
  /** The saved lossy comparison (c=8), as if its runs had been 500 ms through a 200 ms link. */
  const shortRuns = () =>
    derived('lossy', (raw) => {
      raw.options.durationMs = 500;
      for (const c of raw.cells)
        for (const r of c.runs) {
          r.environment.link!.rttMs = 200;
          r.durationMs = 500;
          (r.options as { durationMs?: number }).durationMs = 500;
          if (c.protocol === 'h2') r.counts.ok = Math.min(r.counts.ok, 11);
        }
    });

  it('a 500 ms run through 200 ms (2.5 round trips, 11 requests) decides nothing and names the fix', () => {
    const r = shortRuns();
    for (const c of r.comparisons) {
      assert.equal(c.outcome, 'undecided', `${c.metric}`);
      assert.equal(c.runsNeeded, undefined, 'more runs of the same length would not tell');
    }
    const line = buildAnswer(r).groups[0]!.lines[0]!;
    assert.match(
      line.why,
      /runs too short for the link \(h2: 11 requests in 500 ms, 2\.5 round trips of 200 ms\): --duration \d+s would tell/,
    );
    const t = flat(renderTerminal(r, { width: 80 }));
    assert.match(
      t,
      /runs too short to decide .* use --duration \d+s, or leave --duration and --requests unset/,
    );
  });

  it('runs compare lengthened itself that still fall short name a duration from their own rate', () => {
    // 12 requests in 9.75 s through 200 ms: the length compare plans (9.6 s at c=1) was given, and
    // at 1.23 requests a second 30 need 24.4 s; "leave --duration unset" would change nothing.
    const r = derived('lossy', (raw) => {
      for (const c of raw.cells)
        for (const run of c.runs) {
          run.environment.link!.rttMs = 200;
          run.durationMs = 9750;
          if (c.protocol === 'h2') run.counts.ok = Math.min(run.counts.ok, 12);
        }
    });
    const line = buildAnswer(r).groups[0]!.lines[0]!;
    assert.match(
      line.why,
      /\(h2: 12 requests in 9\.75 s, 48\.\d round trips of 200 ms\): --duration 27s would tell/,
    );
    const t = flat(renderTerminal(r, { width: 80 }));
    assert.match(t, /runs too short to decide .* use --duration 27s(?!, or leave)/);
    assert.doesNotMatch(t, /use --duration 27s, or leave --duration and --requests unset/);
  });

  it('lengthened runs are said in the settings, with the minimums', () => {
    const r = derived('lossy', (raw) => {
      raw.options.durationMs = 500;
    });
    const row = compareSettings(r).find((s) => s.name === 'run length');
    assert.ok(row, 'a run length row');
    assert.match(
      row.value,
      /500 ms asked; over rtt50ms\+loss2% 1\.50 s at c=8 \(lengthened by default to 20 round trips/,
    );
  });

  it('the minimums: 20 round trips and 30 requests a run', () => {
    assert.equal(lengthenedDurationMs(500, 200, { concurrency: 8 }), 4000);
    assert.equal(lengthenedDurationMs(500, 200, { concurrency: 1 }), 9600);
    assert.equal(lengthenedDurationMs(500, 0, { concurrency: 1 }), 500);
    assert.equal(lengthenedDurationMs(10_000, 200, { concurrency: 8 }), 10_000);
  });
});

describe('mechanism sentences only with their evidence', () => {
  it('grid: the rate bound only where it is most of the time, loss recovery in loss cells, the table medians', () => {
    const r = load('grid');
    const t = flat(renderTerminal(r, { width: 80 }));
    const toMs = (v: string, u: string) => Number(v) * (u === 's' ? 1000 : 1);
    // "take at least 524 ms of its median 1.80 s": claimed as the bound only at half or more.
    for (const m of t.matchAll(
      /rate bounds it instead: [^:]*? take at least ([\d.]+) (ms|s) of its median ([\d.]+) (ms|s)/g,
    ))
      assert.ok(toMs(m[1]!, m[2]!) >= toMs(m[3]!, m[4]!) / 2, m[0]);
    // Every "What bounds" paragraph of a lossy link names its loss recovery.
    for (const net of r.axes.net.filter((n) => n.includes('loss'))) {
      const para = t.split(`On ${net}: What bounds`)[1]?.split(' On ')[0] ?? '';
      assert.match(
        para,
        /loss recovery: the link dropped \d+ packets? and the endpoints retransmitted \d+/,
        net,
      );
    }
    // The figures are the table's medians.
    for (const c of r.cells.filter((x) => x.stats?.burstCompletionMs)) {
      const med = c.stats!.burstCompletionMs!.median;
      const para = t.split(`On ${c.net}: What bounds`)[1]?.split(' On ')[0] ?? '';
      const who = c.protocol === 'h1' ? `${c.protocol}'s` : `${c.protocol} sent`;
      const at = para.indexOf(who);
      if (at < 0) continue;
      assert.ok(
        para.slice(at).includes(`median ${formatMs(med)}`),
        `${c.protocol} ${c.net}: ${formatMs(med)}`,
      );
    }
    // The answer names loss recovery on the lossy links.
    for (const l of buildAnswer(r).groups[0]!.lines.filter((x) => x.net.includes('loss')))
      assert.match(l.why, /loss recovery for [\w-]+: the link dropped \d+ packets?/, l.text);
  });
});

describe('one source per fact', () => {
  for (const name of NAMES)
    it(`${name}: the fixture's TCP_NODELAY, once recorded, is never "not visible"; a quoted round trip is a recorded one`, () => {
      const r = load(name);
      const nagle = compareSettings(r).find((s) => s.name === 'Nagle');
      const recorded = r.cells.flatMap((c) =>
        c.runs.flatMap((x) => [x.environment.link?.rttMs, x.connections.tcp?.client?.rttMs?.median]),
      );
      for (const [kind, text] of Object.entries(renderings(r))) {
        const t = flat(text);
        if (nagle && /fixture server's/.test(nagle.value))
          assert.doesNotMatch(
            t,
            /TCP_NODELAY is not visible|setting is not visible from here/,
            `${name} ${kind}`,
          );
        for (const m of t.matchAll(/one round trip is ([\d.]+ (?:ms|s))/g))
          assert.ok(
            recorded.some((x) => x !== undefined && formatMs(x) === m[1]),
            `${name} ${kind}: ${m[0]} is none of the recorded round trips`,
          );
      }
    });

  it('late first responses against the fixture behind a link and on loopback: no "not visible", the recorded round trip', () => {
    // First responses 3 s later on new connections than on warm ones, no small body: the sentence that
    // weighs Nagle speaks. Behind the 200 ms link (burst-200ms) the fixture's TCP_NODELAY is recorded;
    // on loopback (fixture) the round trip it quotes is the kernel's, as the TCP facts quote it.
    for (const name of ['burst-200ms', 'fixture'] as const) {
      const r = derived(name, (raw) => {
        for (const c of raw.cells)
          for (const x of c.runs) {
            const g = {
              count: 10,
              ttfbP50Ms: 5,
              responseP50Ms: 5,
              smallBodyCount: 0,
              bodyAfterHeadersP50Ms: 0,
            };
            x.connectionAge = { newConnection: { ...g, ttfbP50Ms: 3005 }, warmConnection: g };
            if (x.connections.connectMs) x.connections.connectMs.p50 = 9.49;
          }
      });
      const recorded = r.cells.flatMap((c) =>
        c.runs.flatMap((x) => [x.environment.link?.rttMs, x.connections.tcp?.client?.rttMs?.median]),
      );
      const t = flat(renderTerminal(r, { width: 80 }));
      assert.match(t, /first responses on new connections reached their headers/, name);
      assert.doesNotMatch(t, /not visible from here/, name);
      const quoted = [...t.matchAll(/one round trip is ([\d.]+ (?:ms|s))/g)].map((m) => m[1]);
      assert.ok(quoted.length > 0, name);
      for (const q of quoted)
        assert.ok(
          recorded.some((x) => x !== undefined && formatMs(x) === q),
          `${name}: ${q}`,
        );
    }
  });
});

describe('labels in lists name workload and link', () => {
  it('two workloads, h2 worse on both at c=64: each entry of a recommendation names its workload', () => {
    const r = derived('fixture', (raw) => {
      const second = raw.cells.map((c) => {
        const x = structuredClone(c);
        x.workload = 'bytes-2048';
        x.id = x.id.replace('bytes-1024', 'bytes-2048');
        return x;
      });
      raw.cells = [...raw.cells, ...second];
      raw.axes.workloads = [
        ...raw.axes.workloads,
        { ...structuredClone(raw.axes.workloads[0]!), id: 'bytes-2048', label: '2 KiB responses' },
      ];
      for (const c of raw.cells)
        if (c.protocol === 'h2')
          for (const x of c.runs) {
            x.throughput.rps *= c.workload === 'bytes-2048' ? 0.15 : 0.08;
            x.latencyMs.p50 /= c.workload === 'bytes-2048' ? 0.15 : 0.08;
          }
    });
    for (const rec of r.verdict!.recommendations) {
      const tags = [
        ...rec.text.matchAll(/\b(h2(?:-pool)?) at (c=\d+)( on [^,;()]+?)?( \([^)]*\))? [\d.]+×/g),
      ].map((m) => m.slice(1, 5).join('|'));
      assert.ok(tags.length >= 2, rec.text);
      assert.equal(new Set(tags).size, tags.length, `the same label twice: ${rec.text}`);
    }
  });
});
