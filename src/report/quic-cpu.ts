/**
 * What HTTP/3 cost in CPU against HTTP/2 in this comparison, client and server side: per request, the
 * median over each side's kept runs in every cell where both ran, and the median of those cells'
 * ratios. The QUIC stack runs in user space (the binding), TCP in the kernel, so a client or server
 * that needs several times the CPU per request can bound a result on a small machine.
 */
import { type CompareResult, cpuApart, type RunResult } from '../model/index.ts';

/** One run's CPU per request, µs: the load client's (without an in-process server) and the server's. */
function perRequestUs(r: RunResult): { client?: number; server?: number } {
  const apart = cpuApart(r);
  const out: { client?: number; server?: number } = {};
  if (apart) out.server = apart.serverMsPerRequest * 1000;
  if (apart?.clientMsPerRequest !== undefined) out.client = apart.clientMsPerRequest * 1000;
  else {
    const inProcess = r.target.embedded || r.options.serverInProcess === true;
    const secs = r.client.cpuSeconds;
    if (!inProcess && secs !== undefined && r.counts.total > 0) out.client = (secs / r.counts.total) * 1e6;
  }
  return out;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** The medians of one side's runs in a cell, where that side recorded them. */
function sideOf(runs: RunResult[]): { client?: number; server?: number } {
  const us = runs.map(perRequestUs);
  const c = us.flatMap((u) => (u.client === undefined ? [] : [u.client]));
  const s = us.flatMap((u) => (u.server === undefined ? [] : [u.server]));
  return { ...(c.length ? { client: median(c) } : {}), ...(s.length ? { server: median(s) } : {}) };
}

/** HTTP/3's CPU per request against HTTP/2's, measured in `result`; undefined when not both ran. */
export function quicCpuCaveat(result: CompareResult): string | undefined {
  const cells = new Map<string, { h3: RunResult[]; h2: RunResult[] }>();
  for (const cell of result.cells) {
    const runs = cell.runs.slice(cell.warmupRuns).filter((r) => r.counts.ok > 0);
    const key = `${cell.workload}/${cell.concurrency}/${cell.net}`;
    const entry = cells.get(key) ?? { h3: [], h2: [] };
    for (const r of runs) {
      if (r.transport.quic) entry.h3.push(r);
      else if (r.protocol.negotiated === 'h2') entry.h2.push(r);
    }
    cells.set(key, entry);
  }
  const ratios = { client: [] as number[], server: [] as number[] };
  const us = {
    client: { h3: [] as number[], h2: [] as number[] },
    server: { h3: [] as number[], h2: [] as number[] },
  };
  for (const { h3, h2 } of cells.values()) {
    if (h3.length === 0 || h2.length === 0) continue;
    const a = sideOf(h3);
    const b = sideOf(h2);
    for (const side of ['client', 'server'] as const) {
      const x = a[side];
      const y = b[side];
      if (x === undefined || y === undefined || y <= 0) continue;
      ratios[side].push(x / y);
      us[side].h3.push(x);
      us[side].h2.push(y);
    }
  }
  const part = (side: 'client' | 'server', who: string) =>
    ratios[side].length
      ? `${who} ${median(ratios[side]).toFixed(1)}× (${median(us[side].h3).toFixed(0)} µs against ${median(us[side].h2).toFixed(0)} µs a request)`
      : undefined;
  const parts = [
    part('client', "h2lab's HTTP/3 client"),
    part('server', "the fixture's HTTP/3 server"),
  ].filter((p): p is string => p !== undefined);
  if (parts.length === 0) return undefined;
  const n = Math.max(ratios.client.length, ratios.server.length);
  return `CPU per request, HTTP/3 against HTTP/2 in this comparison (median of ${n} cell${n === 1 ? '' : 's'} where both ran): ${parts.join('; ')}. QUIC runs in user space (the binding), TCP in the kernel: where a side was busy, HTTP/3's figures may be bounded by its CPU rather than by the protocol.`;
}
