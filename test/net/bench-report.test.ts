// `h2lab report run.json` of a real `h2lab bench` through an emulated link with --capture: one graph
// per captured connection, the slow-start rounds each sentence states equal to what tshark counts in
// the same pcapng, every sentence linking to its graph, drawn in Chromium at 1280 and 800 px without
// overflow, the drops each states equal to the segments the pcapng marks dropped; `bench --report DIR`
// writes the same report; a run without a capture gets the report without graphs and the line that
// says how to get them; a wrong file is refused with its code.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { RunResult } from '../../src/model/index.ts';
import { slowStartOf } from '../../src/net/time-sequence.ts';
import { h2lab } from '../helpers/cli.ts';
import { netSkipReason, tsharkFields, tsharkRounds, tsharkSkipReason } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'h2lab-bench-report-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const CHROMIUM = process.env.H2LAB_CHROMIUM ?? '/usr/bin/chromium';

/** One connection's line of report.md: its graph's id, whether it is the run's, its rounds. */
interface StatedConnection {
  chartId: string;
  ofRun: boolean;
  /** The segments of each round as stated; `cut` when the line ends in "…". */
  segments: number[];
  cut: boolean;
  rounds: number;
  slowStart: number;
  /** Segments the line says the link dropped. */
  dropped: number;
}

/** The per-connection lines of a bench report.md. */
function statedConnections(md: string): StatedConnection[] {
  const out: StatedConnection[] = [];
  const re =
    /^- \[connection \d+ \(client port \d+\)\]\(report\.html#([\w-]+)\): (not one of the run's[^:]*: )?([\d, …]+) segments in (\d+) rounds?, (\d+) of slow start[^;\n]*(?:; the link dropped (\d+) segments?)?/gm;
  for (const m of md.matchAll(re)) {
    const list = m[3]!.split(', ');
    const cut = list.at(-1) === '…';
    out.push({
      chartId: m[1]!,
      ofRun: m[2] === undefined,
      segments: list.filter((x) => x !== '…').map(Number),
      cut,
      rounds: Number(m[4]),
      slowStart: Number(m[5]),
      dropped: Number(m[6] ?? 0),
    });
  }
  return out;
}

/** What Chromium lays out of report.html at `width` px. */
async function layout(file: string, widths: number[]) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const seen = [];
  try {
    for (const width of widths) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      await page.goto(`file://${file}`);
      await page.waitForSelector('body[data-ts="drawn"]', { timeout: 15_000 });
      seen.push(
        await page.evaluate(() => {
          const d = document.documentElement;
          const plots = Array.from(document.querySelectorAll('.chart.ts .uplot'));
          const links = Array.from(document.querySelectorAll('a[href^="#ts-"]')).map((a) =>
            a.getAttribute('href'),
          );
          return {
            width: d.clientWidth,
            scroll: d.scrollWidth,
            plots: plots.length,
            outside: plots.filter((p) => p.getBoundingClientRect().right > d.clientWidth + 0.5).length,
            // Pairs of graphs drawn over one another (the grid's columns and rows keep them apart).
            overlapping: plots.flatMap((p, i) =>
              plots.slice(i + 1).filter((q) => {
                const a = p.getBoundingClientRect();
                const b = q.getBoundingClientRect();
                return (
                  a.left < b.right - 0.5 &&
                  b.left < a.right - 0.5 &&
                  a.top < b.bottom - 0.5 &&
                  b.top < a.bottom - 0.5
                );
              }),
            ).length,
            clipped: Array.from(document.querySelectorAll('.chart.ts .u-title, .chart.ts .u-label'))
              .filter(
                (el) =>
                  el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > d.clientWidth,
              )
              .map((el) => el.textContent),
            links: links.length,
            // Every link lands on a drawn chart, a connection's on the chart of its client port.
            dangling: links.filter((h) => !document.querySelector(`${h} .uplot`)),
            misplaced: Array.from(document.querySelectorAll('ul.rounds a'))
              .filter((a) => {
                const port = /\(client port \d+\)/.exec(a.textContent ?? '')?.[0];
                const title = document.querySelector(`${a.getAttribute('href')} .u-title`)?.textContent;
                return !port || !title?.includes(port);
              })
              .map((a) => a.textContent),
          };
        }),
      );
      await page.close();
    }
  } finally {
    await browser.close();
  }
  return seen;
}

const skip = netSkipReason() ?? tsharkSkipReason();
if (skip) console.log(`# bench report through a link skipped: ${skip}`);

describe('h2lab report of a bench run captured through a link', { skip }, () => {
  const cases: Array<[string, string[]]> = [
    ['h2: a burst of 16 × 20 KiB on one connection', ['/bytes/20480', '--burst', '16', '--protocol', 'h2']],
    ['h1: a burst of 32 × 10 KiB on 6 connections', ['/bytes/10240', '--burst', '32', '--protocol', 'h1']],
    [
      'h2 with 2% loss: a burst of 8 × 100 KiB on one connection',
      ['/bytes/102400', '--burst', '8', '--protocol', 'h2', '--loss', '2%'],
    ],
  ];
  for (const [i, [name, load]] of cases.entries()) {
    it(`${name}, 100 ms / 10 Mbit/s: a graph per connection, tshark's rounds, 1280 and 800 px`, async (t) => {
      const out = join(dir, `case-${i}`);
      const json = join(out, 'run.json');
      mkdirSync(out, { recursive: true });
      // Paths as a user types them, relative to where bench runs: the report names them absolute.
      const bench = await h2lab(
        [
          'bench',
          ...load,
          ...['--rtt', '100ms', '--bandwidth', '10mbit', '--capture', 'cap', '--keylog', 'cap/keys.log'],
          ...['--json', 'run.json', '--report', 'direct', '-q'],
        ],
        { timeoutMs: 120_000, cwd: out },
      );
      assert.equal(bench.code, 0, bench.stderr);
      const run = JSON.parse(readFileSync(json, 'utf8')) as RunResult;
      const ts = run.evidence!.capture!.timeSequence!;
      const pcapng = run.evidence!.capture!.file;

      const r = await h2lab(['report', json], { timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^h2lab bench {2}https:\/\/.*\/bytes\//, 'the table bench prints');
      const md = readFileSync(join(out, 'report.md'), 'utf8');
      const html = readFileSync(join(out, 'report.html'), 'utf8');
      // bench --report wrote the same report of the same result.
      assert.equal(readFileSync(join(out, 'direct', 'report.md'), 'utf8'), md);
      assert.equal(readFileSync(join(out, 'direct', 'report.html'), 'utf8'), html);

      // The evidence, with the command lines that open it.
      assert.ok(md.includes(`tshark -r ${pcapng} -o tls.keylog_file:${join(out, 'cap', 'keys.log')} -Y`), md);
      assert.ok(md.includes(`wireshark -o tls.keylog_file:`), md);

      // One graph per connection the capture kept, each stated once.
      assert.ok(ts.connections.length > 0 && ts.connectionsNotDrawn === 0);
      assert.equal(html.match(/class="chart ts"/g)?.length, ts.connections.length, 'one graph each');
      const stated = statedConnections(md);
      assert.equal(stated.length, ts.connections.length, md);
      assert.equal(new Set(stated.map((c) => c.chartId)).size, stated.length, 'each links to its own graph');
      for (const c of stated) assert.ok(html.includes(`<div id="${c.chartId}" class="chart ts">`), c.chartId);

      // The rounds each line states are the ones tshark counts in the same pcapng, connection for
      // connection (matched as multisets: tshark numbers streams, the report client ports).
      const counted = [...tsharkRounds(pcapng).values()];
      assert.equal(counted.length, stated.length, `tshark: ${JSON.stringify(counted)}`);
      const key = (segments: number[], rounds: number, ss: number) =>
        `${segments.join(',')} / ${rounds} / ${ss}`;
      const fromReport = stated.map((c) => key(c.segments, c.rounds, c.slowStart)).sort();
      const fromTshark = counted
        .map((rounds) => {
          const [ss] = slowStartOf(rounds.map((s) => ({ segments: s, retransmitted: 0, dropped: 0 })));
          // Beyond 8 rounds a line states the slow-start rounds and the one that ended them.
          const shown = rounds.length <= 8 ? rounds : rounds.slice(0, Math.max(3, ss + 1));
          return key(shown, rounds.length, ss);
        })
        .sort();
      assert.deepEqual(fromReport, fromTshark);
      // The drops each line states are the server's data segments the pcapng marks dropped.
      const dropped = tsharkFields(
        pcapng,
        ['tcp.stream'],
        ['-Y', 'frame.interface_name == "down" and tcp.len > 0 and frame.comment contains "dropped"'],
      ).length;
      assert.equal(
        stated.reduce((n, c) => n + c.dropped, 0),
        dropped,
        md,
      );
      if (load.includes('--loss')) assert.ok(dropped > 0, 'a 2% loss dropped some of ~600 segments');

      // The sentence over the run's connections states their slow-start rounds and links to the graphs.
      const mine = stated.filter((c) => c.ofRun).map((c) => c.slowStart);
      const lo = Math.min(...mine);
      const hi = Math.max(...mine);
      const n =
        run.protocol.negotiated === 'h2' ? "the run's one connection" : `each of the run's 6 connections`;
      const rounds = lo === hi ? `${lo} round${lo === 1 ? '' : 's'}` : `${lo}–${hi} rounds`;
      assert.match(md, new RegExp(`Slow start lasted ${rounds} on ${n} \\(`), md);
      assert.match(html, /Slow start lasted [^<]+ \(<a href="#ts-0-0">time-sequence graphs<\/a>\)/);

      if (!existsSync(CHROMIUM)) {
        t.diagnostic(`Chromium not found at ${CHROMIUM}: layout not checked`);
        return;
      }
      for (const seen of await layout(join(out, 'report.html'), [1280, 800])) {
        assert.ok(
          seen.scroll <= seen.width,
          `${seen.width} px: the page is ${seen.scroll - seen.width} px too wide`,
        );
        assert.equal(seen.plots, ts.connections.length, `${seen.width} px`);
        assert.equal(seen.outside, 0, `${seen.width} px`);
        assert.equal(seen.overlapping, 0, `${seen.width} px`);
        assert.deepEqual(seen.clipped, [], `${seen.width} px`);
        assert.equal(seen.links, stated.length + 1, 'a link per connection and the sentence');
        assert.deepEqual(seen.dangling, [], `${seen.width} px`);
        assert.deepEqual(seen.misplaced, [], `${seen.width} px`);
      }
    });
  }
});

describe('h2lab report of a bench run without a capture, and of wrong files', () => {
  const json = join(dir, 'loopback', 'run.json');

  it('loopback: the report without graphs, and the line that says how to draw them', async () => {
    const secret = ['-H', 'authorization: Bearer s3cret-token'];
    const bench = await h2lab(
      ['bench', '/bytes/1024', '-n', '20', '-c', '2', ...secret, '--json', json, '-q'],
      {
        timeoutMs: 60_000,
      },
    );
    assert.equal(bench.code, 0, bench.stderr);
    const r = await h2lab(['report', json, '--out', join(dir, 'loopback', 'rep'), '-q']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    const md = readFileSync(join(dir, 'loopback', 'rep', 'report.md'), 'utf8');
    const html = readFileSync(join(dir, 'loopback', 'rep', 'report.html'), 'utf8');
    assert.match(md, /^# h2lab bench: https:\/\/127\.0\.0\.1:\d+\/bytes\/1024 \(embedded fixture server\)/);
    assert.match(md, /```text\nh2lab bench {2}https:/, 'the summary as bench prints it');
    assert.match(
      md,
      /No time-sequence graphs: this run was not captured; `--capture DIR` with an emulated link \(`--rtt 100ms --bandwidth 10mbit`, or `--net`\) would draw one per connection here\./,
    );
    assert.doesNotMatch(html, /class="chart ts"|uPlot/);
    assert.match(html, /<code>--capture DIR<\/code>.* <a href="#evidence">Evidence<\/a>/);
    assert.match(html, /<h2 id="evidence">/);
    assert.match(md, /No TLS key log: `--keylog FILE`/);
    // A header's value stays in the result file: it may be a credential, and a report is shared.
    assert.match(md, /\| headers \| authorization \(values in the result file, not here\) \|/);
    assert.ok(!md.includes('s3cret') && !html.includes('s3cret'));
  });

  it('a file report does not render: H2LAB_ERR_RESULT_FILE naming it, its kind and the fix', async () => {
    const bad = (name: string, text: string): string => {
      const p = join(dir, 'bad', name);
      mkdirSync(join(dir, 'bad'), { recursive: true });
      writeFileSync(p, text);
      return p;
    };
    // The run the test above wrote, spoiled one way at a time.
    const run = JSON.parse(readFileSync(json, 'utf8')) as Record<string, unknown>;
    const cases: Array<[string, string, RegExp]> = [
      [
        'not JSON',
        bad('text.json', 'h2lab bench  https://127.0.0.1/\n'),
        /H2LAB_ERR_RESULT_FILE: .*text\.json is not JSON \(.*\); pass the results\.json written by h2lab compare or the --json file of h2lab bench/,
      ],
      [
        'a page result',
        bad('page.json', JSON.stringify({ kind: 'h2lab.page', version: 3 })),
        /H2LAB_ERR_RESULT_FILE: .*page\.json is not a result h2lab report renders \(kind "h2lab\.page", expected "h2lab\.compare" or "h2lab\.run"\); pass the results\.json/,
      ],
      [
        'a run of another version',
        bad('v9.json', JSON.stringify({ ...run, version: 9 })),
        /H2LAB_ERR_RESULT_FILE: .*v9\.json has result version 9; this h2lab reads version 1: re-run the bench with this version/,
      ],
      [
        'a run with a negative count',
        bad('neg.json', JSON.stringify({ ...run, counts: { ...(run.counts as object), ok: -1 } })),
        /H2LAB_ERR_RESULT_FILE: .*neg\.json: field counts\.ok: /,
      ],
    ];
    for (const [name, file, message] of cases) {
      const out = join(dir, 'bad', `out-${name.replace(/\W+/g, '-')}`);
      const r = await h2lab(['report', file, '--out', out]);
      assert.equal(r.code, 2, `${name}: ${r.stderr}`);
      assert.match(r.stderr, message, name);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${name}: one line`);
      assert.ok(!existsSync(join(out, 'report.md')), `${name}: nothing written`);
    }
    // Two files are a before/after of comparisons; a bench run is reported alone.
    const two = await h2lab(['report', json, json, '--out', join(dir, 'bad', 'two')]);
    assert.equal(two.code, 2, two.stderr);
    assert.match(
      two.stderr,
      /H2LAB_ERR_RESULT_FILE: .*run\.json is not an h2lab compare result \(kind "h2lab\.run", expected "h2lab\.compare"\): a bench run's file is reported alone \(h2lab report .*run\.json\)/,
    );
    // bench --report where nothing can be written: refused before any load.
    const b = await h2lab(['bench', '/bytes/1', '-n', '1', '--report', '/proc/h2lab-x']);
    assert.equal(b.code, 2, b.stderr);
    assert.match(
      b.stderr,
      /H2LAB_ERR_OUTPUT: --report \/proc\/h2lab-x: .*choose a path in a writable directory \(e\.g\. --report \.\/bench-report\)/,
    );
    const r = await h2lab(['report', json, '--min-effect', '5%', '--out', join(dir, 'bad', 'me')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /H2LAB_ERR_INVALID_OPTION: --min-effect "5%" is not valid: a bench run has no comparison: leave it out/,
    );
  });
});
