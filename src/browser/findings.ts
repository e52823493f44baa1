/**
 * Conclusions in words from a browser result: what the peaks mean, whether the queue moved, what TLS
 * costs, what honouring cancellation is worth. Pure: reads the result, returns sentences.
 */
import { formatMs } from '../core/index.ts';
import type { BrowserResult, BurstSummary, CancelSummary } from '../model/index.ts';

const MODE = {
  honour: 'server honours cancellation',
  ignore: 'server ignores cancellation',
  unknown: 'server behaviour unknown',
} as const;

/** Tolerance for the CDP ↔ Resource Timing cross-check, ms. */
const RESOURCE_TIMING_TOLERANCE_MS = 1;

function pick(result: BrowserResult, protocol: 'http/1.1' | 'h2', tls: boolean): BurstSummary | undefined {
  return result.burst.summaries.find((s) => {
    const t = result.targets.find((x) => x.id === s.target);
    if (!t || t.origin.startsWith('https:') !== tls) return false;
    const total = Object.values(s.protocols).reduce((a, b) => a + b, 0);
    return total > 0 && (s.protocols[protocol] ?? 0) === total;
  });
}

/** Findings and warnings derived from the measured numbers. */
export function deriveFindings(result: BrowserResult): { findings: string[]; warnings: string[] } {
  const findings: string[] = [];
  const warnings: string[] = [];
  const label = (id: string) => result.targets.find((t) => t.id === id)?.label ?? id;

  for (const s of result.burst.summaries) {
    const p = s.peakInFlight;
    const c = s.connections;
    const range = (x: { median: number; min: number; max: number }) =>
      x.min === x.max ? `${x.median}` : `${x.median} (${x.min}–${x.max})`;
    findings.push(
      `${label(s.target)}: peak ${range(p)} requests in flight on ${range(c)} connection${c.median === 1 ? '' : 's'} (median of ${s.runs} runs).`,
    );
    const failed = Object.entries(s.failures);
    if (failed.length) {
      warnings.push(
        `${label(s.target)}: requests failed: ${failed.map(([k, v]) => `${k} ×${v}`).join(', ')}.`,
      );
      const tooLarge = failed
        .filter(([k]) => k.includes('QUIC_PACKET_TOO_LARGE'))
        .reduce((a, [, v]) => a + v, 0);
      if (tooLarge) warnings.push(quicTooLarge(label(s.target), tooLarge));
    }
    if (s.incompleteRuns > 0) {
      warnings.push(
        `${label(s.target)}: ${s.incompleteRuns} run${s.incompleteRuns > 1 ? 's' : ''} left out because CDP delivered no response event for some requests the page completed.`,
      );
    }
    const w = s.resourceTimingWireMaxDiffMs;
    const st = s.resourceTimingStartMaxDiffMs;
    if (w !== undefined && w > RESOURCE_TIMING_TOLERANCE_MS) {
      warnings.push(
        `${label(s.target)}: CDP and the page's Resource Timing disagree on the time on the wire by up to ${formatMs(w)} (more than ${RESOURCE_TIMING_TOLERANCE_MS} ms).`,
      );
    }
    if (st !== undefined && st > RESOURCE_TIMING_TOLERANCE_MS) {
      warnings.push(
        `${label(s.target)}: CDP and Resource Timing place the start of requests up to ${formatMs(st)} apart (more than ${RESOURCE_TIMING_TOLERANCE_MS} ms): the page's main thread was busy issuing fetch() calls, so "stalled" and "total" carry that much uncertainty; the time on the wire does not.`,
      );
    }
    const t = result.targets.find((x) => x.id === s.target);
    const total = Object.values(s.protocols).reduce((a, b) => a + b, 0);
    if (t?.expectedProtocol && (s.protocols[t.expectedProtocol] ?? 0) !== total) {
      warnings.push(
        `${label(s.target)}: expected ${t.expectedProtocol} but requests negotiated ${Object.entries(
          s.protocols,
        )
          .map(([k, v]) => `${k} ×${v}`)
          .join(', ')}.`,
      );
    }
  }
  const wire = result.burst.summaries.flatMap((s) => s.resourceTimingWireMaxDiffMs ?? []);
  const start = result.burst.summaries.flatMap((s) => s.resourceTimingStartMaxDiffMs ?? []);
  if (wire.length) {
    const mw = Math.max(...wire);
    const ms = Math.max(...start);
    findings.push(
      mw <= RESOURCE_TIMING_TOLERANCE_MS && ms <= RESOURCE_TIMING_TOLERANCE_MS
        ? `CDP and the page's Resource Timing agree within ${formatMs(Math.max(mw, ms))} on every request.`
        : `CDP and the page's Resource Timing: time on the wire agrees within ${formatMs(mw)}, request start within ${formatMs(ms)}.`,
    );
  }
  if (result.fixture) {
    const h2 = pick(result, 'h2', true);
    if (h2) {
      const lim = result.fixture.maxConcurrentStreams;
      const server = h2.serverInFlightPeak;
      findings.push(
        `h2 against SETTINGS_MAX_CONCURRENT_STREAMS ${lim}: browser peak ${h2.peakInFlight.max}${server !== undefined ? `, server peak ${server} requests in its handlers` : ''}` +
          (server !== undefined && server >= lim
            ? ' — the server limit was the bound.'
            : h2.peakInFlight.max >= lim
              ? ' — the limit was reached (the browser count trails stream closes by a few ms).'
              : ' — below the limit.'),
      );
    }
  }

  const h1 = pick(result, 'http/1.1', false);
  const h2 = pick(result, 'h2', true);
  if (h1 && h2) {
    const moved = h2.stalledP50Ms < h1.stalledP50Ms && h2.wireP50Ms > h1.wireP50Ms;
    const q = (s: BurstSummary) =>
      s.serverPoolQueueP50Ms !== undefined
        ? `, server pool queue p50 ${formatMs(s.serverPoolQueueP50Ms)}`
        : '';
    const detail = `HTTP/1.1 stalled p50 ${formatMs(h1.stalledP50Ms)}, on the wire p50 ${formatMs(h1.wireP50Ms)}${q(h1)}; h2 stalled p50 ${formatMs(h2.stalledP50Ms)}, on the wire p50 ${formatMs(h2.wireP50Ms)}${q(h2)}`;
    findings.push(
      moved
        ? `The queue moved: over HTTP/1.1 requests waited in the browser (stalled), over h2 they were sent at once and waited on the wire — in the server — instead (${detail}).`
        : `The queue did not move between HTTP/1.1 and h2 (${detail}).`,
    );
    findings.push(
      `Wall time for the burst: HTTP/1.1 ${formatMs(h1.wallMs)}, h2 ${formatMs(h2.wallMs)} (the page took ${formatMs(h1.issueLoopMs)} and ${formatMs(h2.issueLoopMs)} to issue its fetch() calls).`,
    );
  }
  const ctl = pick(result, 'http/1.1', true);
  if (h1 && ctl) {
    findings.push(
      `TLS without the protocol change (HTTP/1.1 over TLS): wall ${formatMs(ctl.wallMs)} against ${formatMs(h1.wallMs)} in cleartext; peak ${ctl.peakInFlight.median} on ${ctl.connections.median} connections.`,
    );
  }

  const byTarget = new Map<string, CancelSummary[]>();
  for (const c of result.cancelSummaries) byTarget.set(c.target, [...(byTarget.get(c.target) ?? []), c]);
  for (const [id, runs] of byTarget) {
    for (const c of runs) {
      const s = c.server;
      const abort = Number.isNaN(c.actualAbortMs)
        ? 'never (all finished first)'
        : `at ${formatMs(c.actualAbortMs)}`;
      const server = s
        ? `; the server saw ${s.reachedHandler} reach a handler, ${s.cancellations.queued ?? 0} cancelled while queued, ${s.cancellations.running ?? 0} while running, ${s.jobs.unwanted ?? 0} rendered for nothing${s.drained ? '' : ' (pool still busy when read)'}`
        : '; no server metrics';
      findings.push(
        `Cancellation, ${label(id)}, ${MODE[c.serverMode]}${c.runs > 1 ? ` (${c.runs} runs: median times, total counts)` : ''}: ${c.count} fired each time, aborted ${abort}; the wanted tile took ${formatMs(c.wantedMs)} against ${formatMs(c.baselineMs)} idle${server}.`,
      );
      if (s && !s.drained)
        warnings.push(
          `${label(id)} (${c.serverMode}): the server pool had not drained when its metrics were read.`,
        );
    }
    const honour = runs.find((c) => c.serverMode === 'honour');
    const ignore = runs.find((c) => c.serverMode === 'ignore');
    if (honour && ignore) {
      findings.push(
        `Honouring cancellation on ${label(id)}: ${honour.server ? `of ${honour.server.reachedHandler} abandoned requests that reached the server, ${honour.server.jobs.unwanted ?? 0} were rendered for nothing; ` : ''}ignoring it: ${ignore.server ? `${ignore.server.jobs.unwanted ?? 0} of ${ignore.server.reachedHandler}` : '?'} (totals over ${honour.runs} and ${ignore.runs} runs). The wanted tile took ${formatMs(honour.wantedMs)} honoured against ${formatMs(ignore.wantedMs)} ignored (medians).`,
      );
    }
  }
  return { findings, warnings };
}

/**
 * Chromium accepts QUIC datagrams of at most 1472 bytes (its kMaxIncomingPacketSize) and closes the
 * connection with QUIC_PACKET_TOO_LARGE when a bigger one decrypts. The HTTP/3 binding sets its
 * server's path-MTU probe ceiling from the route to the address it is bound to — the route to a local
 * address is loopback's (MTU 65536) — so it probes with datagrams of up to 16383 bytes, and without DF
 * the kernel fragments them across a 1500-byte link, where they arrive whole. Bound to the unspecified
 * address it falls back to 1472. Measured: on loopback and behind a `lan` link, one QUIC connection in
 * three to five closed under load; with the server on 0.0.0.0 inside the link's namespace, none in 12.
 */
function quicTooLarge(target: string, n: number): string {
  return (
    `${target}: Chromium closed the QUIC connection under ${n} request${n === 1 ? '' : 's'} with QUIC_PACKET_TOO_LARGE: ` +
    'the server sent datagrams over 1472 bytes, the most Chromium accepts. An HTTP/3 server on quiche bound to ' +
    'one address probes the path MTU with datagrams up to 16383 bytes (the route to its own address is ' +
    "loopback's), which no 1500-byte network would deliver unfragmented. These are failures of that setup, " +
    "not of HTTP/3: run the server behind an emulated link and bound to all of its namespace's addresses " +
    '(`h2lab net run --profile lan -- h2lab serve --h3 --host 0.0.0.0`), where its ceiling is 1472.'
  );
}
