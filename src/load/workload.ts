/**
 * Workloads: what each request asks for. One URL, a list of paths, or a template with ranges
 * (`/tiles/12/{2200..2210}/{1300..1310}`, `/chunks/{0..63}`), with a method, headers and a body.
 */

import type { Rng } from '../core/index.ts';
import { H2labError, invalidOption } from '../core/index.ts';
import type { RequestSpec } from '../model/index.ts';

/** Most paths a template may expand to (a typo like {0..99999999} must not eat memory). */
const MAX_TEMPLATE_PATHS = 1_000_000;

/** A resolved workload. */
interface RequestSource {
  /** `http(s)://host:port` every request goes to. */
  origin: string;
  /** The expanded paths. */
  paths: string[];
  /** The spec of request number `seq`. */
  specAt(seq: number): RequestSpec;
}

/**
 * Splits a target URL into origin and path without letting URL parsing percent-encode `{a..b}`.
 * @example splitUrl('http://h:1/tiles/{1..2}') → { origin: 'http://h:1', path: '/tiles/{1..2}' }
 */
function splitUrl(raw: string): { origin: string; path: string } {
  const m = /^(https?:\/\/[^/?#]+)([^#]*)/i.exec(raw.trim());
  if (!m)
    throw invalidOption(
      'URL',
      raw,
      'use an absolute http:// or https:// URL, e.g. https://127.0.0.1:8443/bytes/1024',
    );
  let origin: string;
  try {
    origin = new URL(m[1]!).origin;
  } catch {
    throw invalidOption(
      'URL',
      raw,
      'use an absolute http:// or https:// URL, e.g. https://127.0.0.1:8443/bytes/1024',
    );
  }
  const path = m[2] || '/';
  return { origin, path: path.startsWith('/') ? path : `/${path}` };
}

const RANGE = /\{(\d+)\.\.(\d+)\}/g;

/**
 * How many paths `template` expands to: the product of its ranges' lengths, computed without
 * expanding anything (a float: `{0..999999}/{0..999999}` is 1e12, not an allocation).
 * @example templatePathCount('/t/{0..9}/{1..2}') === 20
 */
function templatePathCount(template: string): number {
  let total = 1;
  for (const m of template.matchAll(RANGE)) total *= Math.abs(Number(m[2]) - Number(m[1])) + 1;
  return total;
}

function tooManyPaths(option: string, value: string, count: number): H2labError {
  return new H2labError(
    'H2LAB_ERR_TEMPLATE_TOO_LARGE',
    `${option} ${JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value)} expands to ${count.toLocaleString('en-US')} paths, more than the ${MAX_TEMPLATE_PATHS.toLocaleString('en-US')} h2lab expands: narrow the ranges (each {a..b} multiplies the count)`,
    { option, count, cap: MAX_TEMPLATE_PATHS },
  );
}

/**
 * Expands `{a..b}` ranges (inclusive, ascending or descending, zero-padding kept when `a` is padded)
 * into every combination, leftmost range varying slowest. The count is checked before anything is
 * allocated: H2LAB_ERR_TEMPLATE_TOO_LARGE above {@link MAX_TEMPLATE_PATHS}.
 * @example expandTemplate('/chunks/{0..2}') → ['/chunks/0', '/chunks/1', '/chunks/2']
 */
function expandTemplate(template: string, option = 'URL template'): string[] {
  const count = templatePathCount(template);
  if (count > MAX_TEMPLATE_PATHS) throw tooManyPaths(option, template, count);
  const parts: Array<string | string[]> = [];
  let last = 0;
  for (const m of template.matchAll(RANGE)) {
    parts.push(template.slice(last, m.index));
    const [a, b] = [m[1]!, m[2]!];
    const lo = Number(a);
    const hi = Number(b);
    const step = lo <= hi ? 1 : -1;
    const width = a.length > 1 && a.startsWith('0') ? a.length : 0;
    const values: string[] = [];
    for (let v = lo, i = 0; i <= Math.abs(hi - lo); v += step, i++)
      values.push(width ? String(v).padStart(width, '0') : String(v));
    parts.push(values);
    last = m.index + m[0].length;
  }
  parts.push(template.slice(last));
  let out = [''];
  for (const p of parts) {
    if (typeof p === 'string') out = out.map((s) => s + p);
    else out = out.flatMap((s) => p.map((v) => s + v));
  }
  return out;
}

/**
 * Refuses, before anything is expanded or connected, a URL path or `--urls` list whose templates
 * expand to more than {@link MAX_TEMPLATE_PATHS} paths in all (H2LAB_ERR_TEMPLATE_TOO_LARGE naming
 * the count and the cap). `urlPath` counts only when `paths` is empty, as in {@link buildRequestSource}.
 */
export function checkWorkloadSize(urlPath: string, paths: readonly string[] | undefined): void {
  const list = paths && paths.length > 0;
  const sources = list ? paths : [urlPath];
  let total = 0;
  for (const p of sources) total += templatePathCount(p);
  if (total > MAX_TEMPLATE_PATHS)
    throw tooManyPaths(
      list ? '--urls' : 'URL',
      sources.length === 1 ? sources[0]! : `${sources.length} entries`,
      total,
    );
}

/** Inputs of {@link buildRequestSource}. */
interface RequestSourceInput {
  url: string;
  paths?: string[];
  pick: 'sequential' | 'random';
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  rng: Rng;
}

/** Builds the workload; paths given as full URLs must share the target's origin. */
export function buildRequestSource(input: RequestSourceInput): RequestSource {
  const { origin, path } = splitUrl(input.url);
  const sources = input.paths && input.paths.length > 0 ? input.paths : [path];
  const expanded: string[] = [];
  const paths: string[] = [];
  for (const src of sources) {
    let p = src.trim();
    if (/^https?:\/\//i.test(p)) {
      const u = splitUrl(p);
      if (u.origin !== origin) {
        throw new H2labError(
          'H2LAB_ERR_INVALID_OPTION',
          `--urls entry ${JSON.stringify(src)} is on ${u.origin}, not on the target ${origin}: one run drives one origin`,
          { option: '--urls', value: src },
        );
      }
      p = u.path;
    }
    if (!p.startsWith('/')) p = `/${p}`;
    expanded.push(p);
  }
  checkWorkloadSize(path, input.paths);
  for (const p of expanded) for (const e of expandTemplate(p)) paths.push(e);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers)) headers[k.toLowerCase()] = v;
  const hasHeaders = Object.keys(headers).length > 0;
  const specs: RequestSpec[] = paths.map((p) => ({
    method: input.method,
    path: p,
    ...(hasHeaders ? { headers } : {}),
    ...(input.body ? { body: input.body } : {}),
  }));
  const n = specs.length;
  const rng = input.rng;
  return {
    origin,
    paths,
    specAt:
      n === 1
        ? () => specs[0]!
        : input.pick === 'random'
          ? () => specs[rng.int(0, n - 1)]!
          : (seq) => specs[seq % n]!,
  };
}
