/**
 * The server's own view of a run: h2lab reads the fixture server's `/metrics?format=json`
 * (docs/design.md, "The fixture server's metrics contract") before and after, and keeps the difference.
 */
import http from 'node:http';
import https from 'node:https';
import type { ServerView } from '../model/index.ts';

/** Fetches `/metrics?format=json` from the target's origin; undefined when it is not there. */
export function fetchServerMetrics(
  url: string,
  tls: { ca?: string; cert?: string; key?: string; insecure?: boolean },
): Promise<Record<string, unknown> | undefined> {
  const u = new URL('/metrics?format=json', url);
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const req = mod.get(
      u,
      {
        agent: false,
        timeout: 5000,
        ...(u.protocol === 'https:'
          ? { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: !tls.insecure }
          : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode !== 200) return resolve(undefined);
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
          } catch {
            resolve(undefined);
          }
        });
        res.on('error', () => resolve(undefined));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

type Table = Record<string, Record<string, number>>;

/** Sums a route × protocol table, leaving out the metrics route itself. */
function sumTable(t: unknown): number {
  if (!t || typeof t !== 'object') return 0;
  let n = 0;
  for (const [route, row] of Object.entries(t as Table)) {
    if (route === 'metrics') continue;
    for (const v of Object.values(row)) if (typeof v === 'number') n += v;
  }
  return n;
}

interface Hist {
  sum: number;
  count: number;
}

function hist(x: unknown): Hist | undefined {
  if (!x || typeof x !== 'object') return undefined;
  const h = x as Partial<Hist>;
  return typeof h.sum === 'number' && typeof h.count === 'number'
    ? { sum: h.sum, count: h.count }
    : undefined;
}

/** The difference between two snapshots, as the result's ServerView (`requests` excludes /metrics). */
export function serverViewDelta(before: Record<string, unknown>, after: Record<string, unknown>): ServerView {
  const view: ServerView = {
    requests: sumTable(after.requests) - sumTable(before.requests),
    bytesOut: sumTable(after.responseBytes) - sumTable(before.responseBytes),
  };
  if (typeof after.inFlightPeak === 'number') view.peakInFlight = after.inFlightPeak;
  const pa = after.pool as Record<string, unknown> | undefined;
  const pb = before.pool as Record<string, unknown> | undefined;
  if (pa && typeof pa.size === 'number') view.poolSize = pa.size;
  const qa = hist(pa?.queueSeconds);
  const qb = hist(pb?.queueSeconds);
  if (qa && qb && qa.count > qb.count)
    view.poolQueueMs = { mean: ((qa.sum - qb.sum) / (qa.count - qb.count)) * 1000 };
  const sa = hist(pa?.serviceSeconds);
  const sb = hist(pb?.serviceSeconds);
  if (sa && sb && sa.count > sb.count)
    view.poolServiceMs = { mean: ((sa.sum - sb.sum) / (sa.count - sb.count)) * 1000 };
  const sumCancel = (x: unknown): number => sumTable(x);
  view.cancellations = sumCancel(after.cancellations) - sumCancel(before.cancellations);
  return view;
}
