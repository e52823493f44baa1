// The study harness (src/studies/study.ts) with a study defined here that measures the real fixture
// server through runLoad: cells that succeed and fail are recorded, a stop keeps what was measured,
// a usage error ends the study, and the renderers show h2lab's table beside the report's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { H2labError } from '../../src/core/index.ts';
import { runLoad } from '../../src/load/index.ts';
import { parseStudyResult, type StudyCell, type StudyResult } from '../../src/model/index.ts';
import { renderStudyHtml, renderStudyMarkdown, renderStudyText } from '../../src/report/index.ts';
import { type FixtureTarget, startFixtureTarget } from '../../src/server/index.ts';
import { compareCell } from '../../src/studies/compare-cell.ts';
import { type Study, startStudy } from '../../src/studies/index.ts';

let target: FixtureTarget;
before(async () => {
  target = await startFixtureTarget({ host: '127.0.0.1', port: 0, tlsPort: 0 }, 'in-process');
});
after(async () => {
  await target.close();
});

/** A study of request counts against the fixture: one good cell per count, then one dead target. */
function countingStudy(counts: number[], opts: { dead?: boolean; usageError?: boolean } = {}): Study {
  return {
    name: 'counting',
    title: 'Counting <requests>',
    source: 'report 999 (a test)',
    question: 'Does the harness keep what was measured?',
    async run(ctx) {
      ctx.plan(counts.length + (opts.dead ? 1 : 0));
      const rows: Array<Record<string, number | string | null>> = [];
      for (const n of counts) {
        const r = await ctx.cell(
          `n=${n}`,
          async () =>
            runLoad({ url: `${target.plainUrl}/bytes/100`, protocol: 'h1', requests: n, concurrency: 1 })
              .done,
        );
        if (opts.usageError) throw new H2labError('H2LAB_ERR_INVALID_OPTION', '--count 0 is not valid');
        rows.push({ n, ok: r?.counts.ok ?? null });
        ctx.section({
          id: 'counts',
          title: 'Requests that came back',
          table: {
            columns: [
              { key: 'n', label: 'asked' },
              { key: 'ok', label: 'ok' },
            ],
            rows: [...rows],
          },
          reference: {
            source: 'report 999 table 1',
            table: { columns: [{ key: 'n', label: 'asked' }], rows: [{ n: 42 }] },
          },
        });
      }
      if (opts.dead) {
        await ctx.cell('dead', async () =>
          runLoad({ url: 'http://127.0.0.1:1/', protocol: 'h1', requests: 1, durationMs: 2000 }).done.then(
            (r) => {
              if (r.error)
                throw new H2labError(r.error.code as 'H2LAB_ERR_TARGET_UNREACHABLE', r.error.message);
              return r;
            },
          ),
        );
      }
      const total = rows.reduce((a, r) => a + (typeof r.ok === 'number' ? r.ok : 0), 0);
      ctx.explain(`${total} requests came back of ${counts.reduce((a, b) => a + b, 0)} asked.`);
    },
  };
}

describe('the study harness', () => {
  test('cells, sections, explanation and a failed cell are all in a valid result', async () => {
    const h = startStudy(countingStudy([3, 5], { dead: true }), { quick: true });
    const ends: StudyCell[] = [];
    const updates: StudyResult[] = [];
    h.events.on('cell-end', (e) => ends.push(e.cell));
    h.events.on('update', (r) => updates.push(structuredClone(r)));
    const r = await h.done;
    assert.equal(r.status, 'complete');
    parseStudyResult(JSON.parse(JSON.stringify(r)));
    assert.deepEqual(
      r.cells.map((c) => [c.id, c.status]),
      [
        ['n=3', 'done'],
        ['n=5', 'done'],
        ['dead', 'failed'],
      ],
    );
    assert.match(r.cells[2]!.reason ?? '', /H2LAB_ERR_/);
    assert.deepEqual(
      ends.map((c) => c.id),
      ['n=3', 'n=5', 'dead'],
    );
    assert.deepEqual(r.sections[0]!.table.rows, [
      { n: 3, ok: 3 },
      { n: 5, ok: 5 },
    ]);
    assert.deepEqual(r.explanation, ['8 requests came back of 8 asked.']);
    assert.equal(r.mode, 'quick');
    // The result was written after the first cell already, with the section it had then.
    const early = updates.find((u) => u.cells.length === 1);
    assert.ok(early, 'an update after the first cell');
    assert.equal(early.status, 'running');
  });

  test('a stop skips the cells not begun, keeps the finished ones, and says interrupted', async () => {
    const h = startStudy(countingStudy([2, 2, 2, 2]));
    h.events.once('cell-end', () => h.stop());
    const r = await h.done;
    assert.equal(r.status, 'interrupted');
    assert.equal(r.error?.code, 'H2LAB_ERR_INTERRUPTED');
    assert.equal(r.cells[0]!.status, 'done');
    assert.ok(
      r.cells.slice(1).every((c) => c.status === 'skipped'),
      JSON.stringify(r.cells),
    );
    assert.equal(r.sections[0]!.table.rows[0]!.ok, 2);
  });

  test('a stop during a comparison cell keeps its run in progress, whole', async () => {
    let stopAfterFirstRun: (() => void) | undefined;
    const study: Study = {
      name: 'one-comparison',
      title: 'One comparison',
      source: 'report 999 (a test)',
      question: 'Does a stop keep the run in progress?',
      async run(ctx) {
        ctx.plan(1);
        await compareCell(
          ctx,
          'c',
          {
            url: `${target.plainUrl}/`,
            protocols: ['h1'],
            concurrency: [1],
            runs: 4,
            durationMs: 800,
            workloads: [{ id: 'w', label: 'w', paths: ['/bytes/100'] }],
          },
          {
            onUpdate: (r) => {
              if (r.cells[0]!.runs.length === 1) stopAfterFirstRun?.();
            },
          },
        );
      },
    };
    const h = startStudy(study);
    // 300 ms into the second run of 800 ms: it is in progress when the stop comes.
    stopAfterFirstRun = () => {
      stopAfterFirstRun = undefined;
      setTimeout(() => h.stop(), 300);
    };
    const r = await h.done;
    assert.equal(r.status, 'interrupted');
    const runs = r.compares[0]!.result.cells[0]!.runs;
    assert.equal(runs.length, 2, 'the run in progress at the stop was kept');
    assert.ok(runs[1]!.durationMs >= 750, `the kept run measured ${runs[1]!.durationMs} ms of its 800`);
  });

  test("an error of the user's input ends the study as failed, with its code", async () => {
    const r = await startStudy(countingStudy([1], { usageError: true })).done;
    assert.equal(r.status, 'failed');
    assert.equal(r.error?.code, 'H2LAB_ERR_INVALID_OPTION');
  });

  test('the renderers show both tables, the explanation, and escape HTML', async () => {
    const r = await startStudy(countingStudy([2], { dead: true })).done;
    const text = renderStudyText(r, { width: 80 });
    assert.match(text, /h2lab, measured here:/);
    assert.match(text, /report 999 table 1:/);
    assert.match(text, /2 requests came back of 2 asked\./);
    assert.match(text, /Cells not measured[\s\S]*dead: failed/);
    for (const line of text.split('\n')) assert.ok(line.length <= 80, `over 80 columns: ${line}`);
    const md = renderStudyMarkdown(r);
    assert.match(md, /\| asked \| ok \|/);
    const html = renderStudyHtml(r);
    assert.ok(html.includes('Counting &#60;requests&#62;'), 'title escaped');
    assert.ok(!html.includes('<requests>'));
  });
});
