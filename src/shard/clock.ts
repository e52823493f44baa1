/**
 * The reference clock of a sharded run. Every shard asks one coordinator for its time, NTP-style
 * (RFC 5905 §8, reduced to one server and no drift): with t0 and t1 this machine's clock around the
 * request and T the coordinator's answer, offset = T − (t0 + t1) / 2, good to ±(t1 − t0) / 2. Of
 * several exchanges the one with the shortest round trip is kept: queueing only ever adds delay, so the
 * fastest exchange is the least asymmetric one.
 *
 * This machine's clock is `performance.timeOrigin + performance.now()`: the load engine's origin is
 * taken on it, and unlike Date.now() it does not step while the run goes on.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { H2labError } from '../core/index.ts';

/** This machine's clock, ms since the epoch. */
export const localNow = (): number => performance.timeOrigin + performance.now();

/** One offset measurement. */
export interface ClockReading {
  /** Reference minus local, ms. */
  offsetMs: number;
  /** Round trip of the exchange the offset came from, ms. */
  rttMs: number;
  samples: number;
}

/**
 * Measures this machine's offset to the coordinator at `url`, which answers GET with `{"epochMs": n}`.
 * Throws H2LAB_ERR_CLOCK when it does not answer so within `timeoutMs` per exchange.
 * @example const { offsetMs } = await measureClockOffset('http://coordinator:7070/', 8);
 */
export async function measureClockOffset(
  url: string,
  samples: number,
  timeoutMs = 2000,
): Promise<ClockReading> {
  let best: { offsetMs: number; rttMs: number } | undefined;
  for (let i = 0; i < samples; i++) {
    const t0 = localNow();
    let epochMs: unknown;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
      epochMs = ((await res.json()) as { epochMs?: unknown }).epochMs;
    } catch (err) {
      throw new H2labError(
        'H2LAB_ERR_CLOCK',
        `--clock-url ${url} did not answer (${(err as Error).message}): start h2lab clock serve there, or plan without --clock-url`,
        { option: '--clock-url', value: url },
      );
    }
    const t1 = localNow();
    if (typeof epochMs !== 'number' || !Number.isFinite(epochMs)) {
      throw new H2labError(
        'H2LAB_ERR_CLOCK',
        `--clock-url ${url} answered without a number epochMs: it must answer GET with {"epochMs": n} (h2lab clock serve does)`,
        { option: '--clock-url', value: url },
      );
    }
    const rttMs = t1 - t0;
    if (!best || rttMs < best.rttMs) best = { offsetMs: epochMs - (t0 + t1) / 2, rttMs };
  }
  return { ...best!, samples };
}

/** A running coordinator clock. */
interface ClockServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves this machine's clock as `{"epochMs": n}` on every GET: the reference clock of a plan.
 * @example const c = await startClockServer({ host: '127.0.0.1', port: 0 }); planShards(o, { …, clockUrl: c.url });
 */
export async function startClockServer(opts: { host?: string; port?: number } = {}): Promise<ClockServer> {
  const server = createServer((_req, res) => {
    const body = JSON.stringify({ epochMs: localNow() });
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(body);
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Sleeps until this machine's clock reads `localMs`: a timer to 2 ms before, then turns of the event
 * loop, so the release is late by the loop's latency rather than the timer's (about 1 ms coarser).
 */
export async function sleepUntil(localMs: number): Promise<void> {
  const coarse = localMs - localNow() - 2;
  if (coarse > 0) await new Promise((r) => setTimeout(r, coarse));
  while (localNow() < localMs) await new Promise((r) => setImmediate(r));
}
