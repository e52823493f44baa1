/**
 * The report subsystem: result models and their schemas, the verdict, and renderers (pure functions
 * returning strings).
 */

export { loadHtmlAssets } from './assets.ts';
export { renderBrowserHtml } from './browser-html.ts';
export { renderBrowserText } from './browser-text.ts';
export { confoundersOf } from './confounders.ts';
export {
  COMPARE_CSV_COLUMNS,
  compareCsv,
  RUN_CSV_COLUMNS,
  runCsv,
  SAMPLE_CSV_COLUMNS,
  sampleCsvHeader,
  sampleCsvRow,
} from './csv.ts';
export { capturedRunOf, representativeCapture, TIME_SEQUENCE_PHRASE } from './evidence-graphs.ts';
export { escapeHtml, scriptJson } from './html.ts';
export { renderMergedText } from './merged-text.ts';
export { medianLoad, renderPageHtml, renderPageMarkdown } from './page.ts';
export { pageVerdict, type VerdictPair } from './page-verdict.ts';
export { renderProbeText } from './probe-text.ts';
export {
  RENDER_FORMATS,
  type RenderableResult,
  type RenderFormat,
  type RenderOptions,
  render,
  renderFormatsOf,
} from './render.ts';
export { renderDiffHtml, renderDiffMarkdown, renderDiffTerminal } from './render-diff.ts';
export {
  breakdownSvg,
  type HtmlAssets,
  latencyCurve,
  ratioSvg,
  renderHtml,
} from './render-html.ts';
export { renderMarkdown, renderTerminal, resultRows } from './render-text.ts';
export {
  lengthenedDurationMs,
  MIN_RUN_REQUESTS,
  MIN_RUN_ROUND_TRIPS,
  runRttMs,
  runShortfall,
  shortRunsWarning,
} from './run-length.ts';
export { renderRunHtml, renderRunMarkdown } from './run-report.ts';
export { renderRunText } from './run-text.ts';
export {
  formatStudyValue,
  renderStudyHtml,
  renderStudyMarkdown,
  renderStudyText,
  studyFindingsBlock,
  studyTablesBlock,
} from './study.ts';
export { alignTable, fitTable, wrapText } from './text.ts';
export {
  buildVerdict,
  comparisonOf,
  formatInterval,
  formatRatio,
  formatRps,
  levelsText,
  levelText,
} from './verdict.ts';
