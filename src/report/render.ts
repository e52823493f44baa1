/**
 * One entry for every renderer: `render(result, format)` reads the result's `kind` and hands it to
 * the renderer of that kind and format. The renderers stay where they are (the CLI calls them by
 * name); this is the package's one face for them (docs/api.md, "Renderers").
 */
import { H2labError } from '../core/index.ts';
import type {
  BrowserResult,
  CompareResult,
  DiffResult,
  MergedResult,
  PageResult,
  ProbeResult,
  RunResult,
  StudyResult,
} from '../model/index.ts';
import { loadHtmlAssets } from './assets.ts';
import { renderBrowserHtml } from './browser-html.ts';
import { renderBrowserText } from './browser-text.ts';
import { renderMergedText } from './merged-text.ts';
import { renderPageHtml, renderPageMarkdown } from './page.ts';
import { renderProbeText } from './probe-text.ts';
import { renderDiffHtml, renderDiffMarkdown, renderDiffTerminal } from './render-diff.ts';
import { renderHtml } from './render-html.ts';
import { renderMarkdown, renderTerminal } from './render-text.ts';
import { renderRunHtml, renderRunMarkdown } from './run-report.ts';
import { renderRunText } from './run-text.ts';
import { renderStudyHtml, renderStudyMarkdown, renderStudyText } from './study.ts';

/** What a result can be rendered as: text for a terminal, Markdown, or a self-contained HTML page. */
export const RENDER_FORMATS = ['text', 'markdown', 'html'] as const;
export type RenderFormat = (typeof RENDER_FORMATS)[number];

/** Every result `render` knows, told apart by `kind`. */
export type RenderableResult =
  | RunResult
  | CompareResult
  | DiffResult
  | BrowserResult
  | ProbeResult
  | PageResult
  | StudyResult
  | MergedResult;

export interface RenderOptions {
  /** Line width of the text format (compare 80, run and browser their own, study 100 by default). */
  width?: number;
  /** compare, text: the title and the answer alone (`compare --brief`). */
  brief?: boolean;
}

type Renderer<R> = (result: R, options: RenderOptions) => string;
type RenderersOf<R> = Partial<Record<RenderFormat, Renderer<R>>>;
type ByKind = { [K in RenderableResult['kind']]: RenderersOf<Extract<RenderableResult, { kind: K }>> };

const width = (o: RenderOptions): { width?: number } => (o.width === undefined ? {} : { width: o.width });

/** The renderers by kind and format; a pair not listed has no rendering. */
const RENDERERS: ByKind = {
  'h2lab.run': {
    text: (r, o) => renderRunText(r, width(o)),
    markdown: renderRunMarkdown,
    html: (r) => renderRunHtml(r, loadHtmlAssets()),
  },
  'h2lab.compare': {
    text: (r, o) => renderTerminal(r, { ...width(o), ...(o.brief ? { brief: true } : {}) }),
    markdown: (r) => renderMarkdown(r),
    html: (r) => renderHtml(r, loadHtmlAssets()),
  },
  'h2lab.compare-diff': { text: renderDiffTerminal, markdown: renderDiffMarkdown, html: renderDiffHtml },
  'h2lab.browser': { text: (r, o) => renderBrowserText(r, width(o)), html: renderBrowserHtml },
  'h2lab.probe': { text: renderProbeText },
  'h2lab.page': { markdown: renderPageMarkdown, html: (r) => renderPageHtml(r, loadHtmlAssets()) },
  'h2lab.study': {
    text: (r, o) => renderStudyText(r, width(o)),
    markdown: renderStudyMarkdown,
    html: (r) => renderStudyHtml(r, loadHtmlAssets()),
  },
  // A merged run: the run's own table, then its shards (as `h2lab shard merge` prints it).
  'h2lab.merged': { text: (m, o) => `${renderRunText(m.result, width(o))}\n${renderMergedText(m)}` },
};

/** The formats `render` has for a kind of result (`[]` for a kind it does not know). */
export function renderFormatsOf(kind: string): RenderFormat[] {
  const byFormat: RenderersOf<never> | undefined = (RENDERERS as Record<string, RenderersOf<never>>)[kind];
  return byFormat ? RENDER_FORMATS.filter((f) => byFormat[f] !== undefined) : [];
}

/**
 * Renders a result as `format`: a pure function returning the string the CLI prints or writes.
 * Throws `H2LAB_ERR_RENDER_FORMAT` for a kind it does not know or a format that kind has no rendering
 * in, naming the formats it has.
 * @example
 * console.log(render(await runLoad({ url: '/bytes/100', protocol: 'h1', requests: 200 }).done, 'text'));
 */
export function render(result: RenderableResult, format: RenderFormat, options: RenderOptions = {}): string {
  const kind: string = result.kind;
  const formats = renderFormatsOf(kind);
  if (formats.length === 0) {
    throw new H2labError(
      'H2LAB_ERR_RENDER_FORMAT',
      `render: ${JSON.stringify(kind)} is not a result kind it renders; give one of ${Object.keys(RENDERERS).join(', ')}`,
      { kind, kinds: Object.keys(RENDERERS) },
    );
  }
  if (!formats.includes(format)) {
    throw new H2labError(
      'H2LAB_ERR_RENDER_FORMAT',
      `render: a ${kind} result has no ${JSON.stringify(format)} rendering; use format ${formats.map((f) => `'${f}'`).join(' or ')}`,
      { kind, format, formats },
    );
  }
  const renderer = (RENDERERS as Record<string, RenderersOf<RenderableResult>>)[kind]![format]!;
  return renderer(result, options);
}
