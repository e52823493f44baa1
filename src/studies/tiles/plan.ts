/**
 * The tiles study's render-time model on this machine, the fixture it starts and the targets
 * Chromium loads, with the small formatters its tables share.
 */
import { type ChromiumHandle, launchChromium, spkiPins } from '../../browser/index.ts';
import type { BrowserTarget } from '../../model/index.ts';
import type { BrowserNetwork, Link } from '../../net/index.ts';
import type { FixtureTarget, ServerOptionsInput } from '../../server/index.ts';
import { medianOf, rounded } from '../table.ts';
import { TILES_REPORT_CORES as REPORT_CORES } from './descriptor.ts';
import type { TilesOptions } from './options.ts';

/**
 * Where the fixture and Chromium run for one network condition (net/isolation.ts): behind a link,
 * the fixture in its server namespace and Chromium on its client side; on loopback, both in a
 * private namespace when root, else the fixture in this process and Chromium in the host's.
 */
export interface Env {
  id: string;
  link?: Link;
  network: BrowserNetwork;
  start: (o: ServerOptionsInput) => Promise<FixtureTarget>;
}

/** Mean pool time of one tile under the model, ms: the backend's work per tile (CPU time for cpu). */
export function meanTileMs(o: TilesOptions): number {
  return o.tileMs + o.tileHeavyFraction * (o.tileHeavyMs - o.tileMs);
}

/** Tiles that render at once with `inFlight` requests at the server and `pool` workers. */
export function rendering(o: TilesOptions, pool: number, inFlight = Number.POSITIVE_INFINITY): number {
  return Math.min(pool, inFlight, o.render === 'cpu' ? o.renderCores : Number.POSITIVE_INFINITY);
}

/** The backend's floor for `n` tiles on `pool` workers with `inFlight` requests, ms (no network). */
export function floorMs(o: TilesOptions, n: number, pool: number, inFlight?: number): number {
  return (n * meanTileMs(o)) / rendering(o, pool, inFlight);
}

/** The model in words, for the notes of every table. */
export function modelWords(o: TilesOptions): string {
  return o.render === 'cpu'
    ? `Tiles burn CPU (--render cpu): ${fmt1(o.tileMs)} ms of CPU a tile, ${Math.round(o.tileHeavyFraction * 100)}% heavy at ${fmt1(o.tileHeavyMs)} ms (the report's 60/250 ms × ${o.renderCores}/${REPORT_CORES} cores), on render threads pinned to ${o.renderCores} core(s)`
    : `Tiles wait on a timer (--render sleep): ${o.tileMs} ms a tile, ${Math.round(o.tileHeavyFraction * 100)}% heavy at ${o.tileHeavyMs} ms`;
}

export const fmt1 = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

export const r0 = (x: number | undefined) => rounded(x);
export const r2 = (x: number | undefined) => rounded(x, 2);
/** Nearest-rank, as the burst summaries beside these figures (src/browser/burst.ts); NaN for none. */
export const medNearestRank = (xs: number[]) => medianOf(xs, 'nearest-rank') ?? Number.NaN;

export function targetLabel(id: string): string {
  return id === 'http' ? 'HTTP/1.1 (http://)' : id === 'https' ? 'HTTP/2 (TLS)' : 'HTTP/1.1 over TLS';
}

// --- running it --------------------------------------------------------------------------------

export function fixtureOptions(o: TilesOptions, extra: ServerOptionsInput = {}): ServerOptionsInput {
  return {
    poolSize: o.poolSize,
    tileMs: o.tileMs,
    tileHeavyMs: o.tileHeavyMs,
    tileHeavyFraction: o.tileHeavyFraction,
    tileRender: o.render,
    ...(o.render === 'cpu' ? { renderCores: o.renderCores } : {}),
    // Chrome stops at 100 streams when the server announces none (browser-notes): room for 121.
    maxConcurrentStreams: 256,
    ...extra,
  };
}

export async function launchFor(
  o: TilesOptions,
  env: Env,
  fixtures: FixtureTarget[],
  webgl: boolean,
): Promise<ChromiumHandle> {
  const spki = fixtures.flatMap((f) => [...spkiPins(f.certPem), ...(f.caPem ? spkiPins(f.caPem) : [])]);
  const netns = env.network.netns;
  return launchChromium({
    executablePath: o.chromiumPath,
    spki: [...new Set(spki)],
    webgl,
    ...(netns ? { netns } : {}),
  });
}

export function targetsOf(f: FixtureTarget): BrowserTarget[] {
  return [
    {
      id: 'http',
      label: 'http:// HTTP/1.1',
      origin: new URL(f.plainUrl!).origin,
      h2Disabled: false,
      expectedProtocol: 'http/1.1',
    },
    {
      id: 'https',
      label: 'https:// h2',
      origin: new URL(f.tlsUrl!).origin,
      h2Disabled: false,
      expectedProtocol: 'h2',
    },
  ];
}
