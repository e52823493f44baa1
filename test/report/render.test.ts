// render(result, format): the package's one renderer gives, for every kind and format it lists,
// exactly what that kind's own renderer gives (the CLI's output), and refuses every other pair with
// H2LAB_ERR_RENDER_FORMAT naming the formats the kind has. Results are saved ones of real runs
// (test/fixtures/) and a probe of the fixture server.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { diffResults, reanalyze } from '../../src/compare/index.ts';
import { isH2labError } from '../../src/core/index.ts';
import {
  type BrowserResult,
  type CompareResult,
  type ProbeResult,
  parseBrowserResult,
  parseStudyResult,
  type RunResult,
  type StudyResult,
} from '../../src/model/index.ts';
import { probe } from '../../src/probe/index.ts';
import {
  loadHtmlAssets,
  type RenderableResult,
  type RenderFormat,
  render,
  renderBrowserHtml,
  renderBrowserText,
  renderDiffHtml,
  renderDiffMarkdown,
  renderDiffTerminal,
  renderFormatsOf,
  renderHtml,
  renderMarkdown,
  renderProbeText,
  renderRunHtml,
  renderRunMarkdown,
  renderRunText,
  renderStudyHtml,
  renderStudyMarkdown,
  renderStudyText,
  renderTerminal,
} from '../../src/report/index.ts';
import type { RunningServer } from '../../src/server/index.ts';
import { startFixture } from '../helpers/fixture.ts';

const json = (path: string): unknown => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));
const compare = reanalyze(json('../fixtures/report/fixture.json') as CompareResult);
const nginx = reanalyze(json('../fixtures/report/nginx.json') as CompareResult);
const study: StudyResult = parseStudyResult(json('../fixtures/studies/tiles.json'));
const browser: BrowserResult = parseBrowserResult(
  (study.data as { burst: { loopback: unknown } }).burst.loopback,
);
const run: RunResult = compare.cells[0]!.runs[0]!;

/** An H2labError with code H2LAB_ERR_RENDER_FORMAT whose message names every one of `words`. */
function refused(words: string[]): (e: unknown) => boolean {
  return (e) => {
    assert.ok(isH2labError(e), `an H2labError, not ${String(e)}`);
    assert.equal(e.code, 'H2LAB_ERR_RENDER_FORMAT');
    for (const w of words) assert.ok(e.message.includes(w), `the message names ${w}: ${e.message}`);
    return true;
  };
}

describe('render gives what each kind’s renderer gives', () => {
  let server: RunningServer;
  let probed: ProbeResult;
  before(async () => {
    server = await startFixture();
    probed = await probe(server.tlsUrl ?? '', { ca: server.caFile });
  });
  after(() => server.close());

  test('a comparison: text (width and brief passed on), markdown, html', () => {
    assert.equal(render(compare, 'text'), renderTerminal(compare));
    assert.equal(render(compare, 'text', { width: 120 }), renderTerminal(compare, { width: 120 }));
    assert.equal(render(compare, 'text', { brief: true }), renderTerminal(compare, { brief: true }));
    assert.equal(render(compare, 'markdown'), renderMarkdown(compare));
    assert.equal(render(compare, 'html'), renderHtml(compare, loadHtmlAssets()));
  });

  test('a diff of two comparisons: text, markdown, html', () => {
    const d = diffResults(compare, nginx);
    assert.equal(render(d, 'text'), renderDiffTerminal(d));
    assert.equal(render(d, 'markdown'), renderDiffMarkdown(d));
    assert.equal(render(d, 'html'), renderDiffHtml(d));
  });

  test('a run, a browser result, a study, a probe', () => {
    assert.equal(render(run, 'text'), renderRunText(run));
    assert.equal(render(run, 'text', { width: 60 }), renderRunText(run, { width: 60 }));
    assert.equal(render(run, 'markdown'), renderRunMarkdown(run));
    assert.equal(render(run, 'html'), renderRunHtml(run, loadHtmlAssets()));
    assert.equal(render(browser, 'text'), renderBrowserText(browser));
    assert.equal(render(browser, 'html'), renderBrowserHtml(browser));
    assert.equal(render(study, 'text'), renderStudyText(study));
    assert.equal(render(study, 'markdown'), renderStudyMarkdown(study));
    assert.equal(render(study, 'html'), renderStudyHtml(study));
    assert.equal(render(probed, 'text'), renderProbeText(probed));
  });
});

test('renderFormatsOf lists each kind’s formats; an unknown kind has none', () => {
  assert.deepEqual(renderFormatsOf('h2lab.compare'), ['text', 'markdown', 'html']);
  assert.deepEqual(renderFormatsOf('h2lab.run'), ['text', 'markdown', 'html']);
  assert.deepEqual(renderFormatsOf('h2lab.page'), ['markdown', 'html']);
  assert.deepEqual(renderFormatsOf('h2lab.merged'), ['text']);
  assert.deepEqual(renderFormatsOf('h2lab.plan'), []);
});

test('a format the kind has no rendering in is refused, naming the ones it has', () => {
  // Refused before any rendering: the kind alone decides.
  const merged = { kind: 'h2lab.merged' } as unknown as RenderableResult;
  assert.throws(() => render(merged, 'html'), refused(['h2lab.merged', '"html"', "'text'"]));
  assert.throws(() => render(browser, 'markdown'), refused(['h2lab.browser', "'text' or 'html'"]));
  assert.throws(
    () => render(compare, 'pdf' as RenderFormat),
    refused(['"pdf"', "'text' or 'markdown' or 'html'"]),
  );
});

test('a result kind render does not know is refused, naming the kinds it knows', () => {
  const plan = { kind: 'h2lab.plan' } as unknown as RenderableResult;
  assert.throws(() => render(plan, 'text'), refused(['"h2lab.plan"', 'h2lab.run', 'h2lab.page']));
});
