/**
 * Workloads: what each request asks for. One URL, a list of paths, or a template with ranges
 * (`/tiles/12/{2200..2210}/{1300..1310}`, `/chunks/{0..63}`), with a method, headers and a body.
 */

import type { Rng } from '../core/index.ts';
import { H2labError, invalidOption } from '../core/index.ts';
import type { RequestSpec } from '../model/index.ts';

/** Most paths a template may expand to (a typo like {0..99999999} must not eat memory). */
export const MAX_TEMPLATE_PATHS = 1_000_000;

/** A resolved workload. */
export interface Workload {
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
export function splitUrl(raw: string): { origin: string; path: string } {
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

/**
 * Expands `{a..b}` ranges (inclusive, ascending or descending, zero-padding kept when `a` is padded)
 * into every combination, leftmost range varying slowest.
 * @example expandTemplate('/chunks/{0..2}') → ['/chunks/0', '/chunks/1', '/chunks/2']
 */
export function expandTemplate(template: string): string[] {
  const re = /\{(\d+)\.\.(\d+)\}/g;
  const parts: Array<string | string[]> = [];
  let last = 0;
  let total = 1;
  for (let m = re.exec(template); m !== null; m = re.exec(template)) {
    parts.push(template.slice(last, m.index));
    const [a, b] = [m[1]!, m[2]!];
    const lo = Number(a);
    const hi = Number(b);
    const step = lo <= hi ? 1 : -1;
    const width = a.length > 1 && a.startsWith('0') ? a.length : 0;
    const count = Math.abs(hi - lo) + 1;
    total *= count;
    if (total > MAX_TEMPLATE_PATHS) {
      throw invalidOption(
        'URL template',
        template,
        `ranges expand to more than ${MAX_TEMPLATE_PATHS} paths; narrow them`,
      );
    }
    const values: string[] = [];
    for (let v = lo, i = 0; i < count; v += step, i++)
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

/** Inputs of {@link buildWorkload}. */
export interface WorkloadInput {
  url: string;
  paths?: string[];
  pick: 'sequential' | 'random';
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  rng: Rng;
}

/** Builds the workload; paths given as full URLs must share the target's origin. */
export function buildWorkload(input: WorkloadInput): Workload {
  const { origin, path } = splitUrl(input.url);
  const sources = input.paths && input.paths.length > 0 ? input.paths : [path];
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
    for (const e of expandTemplate(p)) {
      paths.push(e);
      if (paths.length > MAX_TEMPLATE_PATHS) {
        throw invalidOption('--urls', `${sources.length} entries`, `use at most ${MAX_TEMPLATE_PATHS} paths`);
      }
    }
  }
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
