// What every study says before its figures (src/studies/caveats.ts): the decisions a --quick run
// cannot make, from the study's own options, and one load-average rule with the same threshold and
// words for every study (echo warned at load 7.5 with its own words, proxy at 13 said nothing).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { renderStudyHtml, renderStudyMarkdown, renderStudyText } from '../../src/report/index.ts';
import { loadCaveat, quickCaveat } from '../../src/studies/caveats.ts';
import { listStudies, loadStudy, type Study, startStudy } from '../../src/studies/index.ts';

describe('study caveats', () => {
  test('quick: 2 kept runs a side cannot decide by the rank test, 4 can', () => {
    assert.match(
      quickCaveat(2, 3)!,
      /^Quick: 2 kept runs a side .* needs at least 4 a side at 95%, so no comparison/,
    );
    assert.equal(quickCaveat(4, 5), undefined);
    assert.equal(quickCaveat(6, 7), undefined);
  });

  test('load: one threshold (the cores) and the same words for 7.5 and 13', () => {
    const a = loadCaveat(7.5, 7.91, 2)!;
    const b = loadCaveat(13, 12.1, 2)!;
    assert.equal(a.replace(/[\d.]+/g, 'N'), b.replace(/[\d.]+/g, 'N'));
    assert.equal(loadCaveat(1.5, 1.9, 2), undefined);
    assert.ok(loadCaveat(0.5, 2.5, 2));
  });

  test("every study's quick mode says which decisions it cannot make", async () => {
    for (const { name } of listStudies()) {
      const study = (await loadStudy(name))!;
      const o = study.resolve!({}, true);
      assert.match(String(study.quickLimits?.(o)), /^Quick: /, name);
      assert.equal(study.quickLimits?.(study.resolve!({}, false)), undefined, `${name}: full decides`);
    }
  });

  test('no study words a load warning of its own: the harness adds the one rule', () => {
    for (const { name } of listStudies()) {
      const dir = new URL(`../../src/studies/${name}/`, import.meta.url);
      const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
      assert.ok(files.length > 0, `${name}: its folder has its files`);
      for (const f of files)
        assert.doesNotMatch(readFileSync(new URL(f, dir), 'utf8'), /ctx\.warn\([^)]*load average/s, f);
    }
  });

  test('the harness records them up front and every renderer prints them before the tables', async () => {
    const study: Study = {
      name: 'caveat',
      title: 'Caveats',
      source: 'report 999 (a test)',
      question: 'Are the caveats said first?',
      resolve: (g: Record<string, unknown>, quick: boolean) => ({ runs: quick ? 3 : 7, ...g }),
      quickLimits: (o: Record<string, unknown>) => quickCaveat(Number(o.runs) - 1, Number(o.runs)),
      async run(ctx) {
        ctx.section({
          id: 't',
          title: 'A table',
          table: { columns: [{ key: 'n', label: 'n' }], rows: [{ n: 1 }] },
        });
      },
    };
    const r = await startStudy(study, { quick: true }).done;
    const up = r.data.upFront as string[];
    assert.match(up[0]!, /^Quick: 2 kept runs a side/);
    const text = renderStudyText(r, { width: 10_000 });
    assert.ok(text.indexOf('! Quick: 2 kept runs') < text.indexOf('A table'), text);
    const md = renderStudyMarkdown(r);
    assert.ok(md.indexOf('> **Read first:** Quick') < md.indexOf('## A table'), md);
    assert.ok(renderStudyHtml(r).includes('<b>Read first:</b> Quick: 2 kept runs'));
    const full = await startStudy(study, { quick: false }).done;
    assert.ok(!(full.data.upFront as string[]).some((u) => u.startsWith('Quick')));
  });
});
