/**
 * The request and schedule flags `bench` and `compare` share: one definition of each flag (name, help)
 * and one parser, so `-H`, `-m`, `--body`, `--timeout`, `--connect-timeout` and `-r/--rate` read the
 * same on both commands. Validation past the text (an upper-case method, header fields that cannot
 * split on the wire) is the load engine's schema (src/load/options.ts), which compare reuses.
 */
import { type Command, Option } from 'commander';
import { H2labError, parseDurationMs, parseList } from '../core/index.ts';

/** The text of the shared flags as commander hands it over. */
export interface RequestFlags {
  method?: string;
  header: string[];
  body?: string;
  timeout?: string;
  connectTimeout?: string;
}

/** What the shared request flags become (LoadOptions keys, also compare's). */
export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  bodyFile?: string;
  timeoutMs?: number;
  connectTimeoutMs?: number;
}

/** Commander accumulator of a repeatable flag. */
export const collect = (v: string, acc: string[]): string[] => [...acc, v];

/** Adds `-m`, `-H` (repeatable), `--body`, `--timeout` and `--connect-timeout` (bare numbers: seconds). */
export function addRequestFlags(cmd: Command): Command {
  return cmd
    .option('-m, --method <method>', 'HTTP method')
    .option('-H, --header <name:value>', 'request header (repeatable)', collect, [])
    .option('--body <file>', 'request body from a file')
    .option('--timeout <time>', 'per-request timeout (default 30s)')
    .option('--connect-timeout <time>', 'connection setup timeout (default 10s)');
}

/**
 * `-r/--rate`: open loop. `list` (compare): one cell per rate, as `--concurrency` gives one per value.
 */
export function rateOption(list: boolean): Option {
  return list
    ? new Option(
        '-r, --rate <list>',
        'open loop: requests per second, one cell per value, instead of --concurrency (latency from the intended send time)',
      )
    : new Option('-r, --rate <rps>', 'open loop: requests per second (latency from the intended send time)');
}

/**
 * One `--rate` value: requests per second above 0.
 *
 * @example parseRate('500') // 500
 */
export function parseRate(text: string, whole = false): number {
  const r = Number(text);
  if (!(r > 0) || !Number.isFinite(r) || (whole && !Number.isInteger(r)))
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--rate ${JSON.stringify(text)} is not valid: use ${whole ? 'whole ' : ''}requests per second above 0, e.g. 500${whole ? ' (a list: 200,500)' : ''}`,
      { option: '--rate', value: text },
    );
  return r;
}

/** `--rate 200,500` (compare): whole requests per second, each a cell of its own. */
export function parseRateList(text: string): number[] {
  return parseList(text).map((x) => parseRate(x, true));
}

/**
 * `-H name:value` lines → a header record (names lower-cased, values trimmed). The field check
 * (token names, no CR/LF/NUL) is the load engine's, applied where the options are resolved.
 */
export function parseHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of lines) {
    const i = h.indexOf(':');
    if (i <= 0) {
      throw new H2labError(
        'H2LAB_ERR_INVALID_OPTION',
        `--header ${JSON.stringify(h)} is not valid: use name:value, e.g. -H 'accept: */*'`,
        { option: '--header', value: h },
      );
    }
    headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
  }
  return headers;
}

/** The shared request flags → options (only the ones given). */
export function requestOptionsFromFlags(f: RequestFlags): RequestOptions {
  const o: RequestOptions = {};
  if (f.method) o.method = f.method.toUpperCase();
  if (f.header.length > 0) o.headers = parseHeaders(f.header);
  if (f.body) o.bodyFile = f.body;
  if (f.timeout) o.timeoutMs = parseDurationMs(f.timeout, '--timeout', 's');
  if (f.connectTimeout) o.connectTimeoutMs = parseDurationMs(f.connectTimeout, '--connect-timeout', 's');
  return o;
}
