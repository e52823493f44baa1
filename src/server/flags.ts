/**
 * The fixture server's flags that other commands declare (compare, browser): what their help needs,
 * without the server's schema and zod (docs/design.md, "Start-up: what a command's help loads").
 */
import { declareFlag } from '../core/index.ts';

/**
 * `--metrics-url`: a fixture server's `/metrics`, which compare and browser read around each run
 * (docs/design.md, "The fixture server's metrics contract"); declared with the server that serves it.
 */
export const METRICS_URL_FLAG = declareFlag({
  flag: 'metrics-url',
  grammar: 'string',
  arg: 'url',
  description: "an h2lab fixture server's /metrics to read around each run",
  defaultText: "the embedded server's",
});
