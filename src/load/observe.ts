/**
 * What was seen around a finished run, recorded on it in one place: the link it went through (its
 * description, warnings, what it dropped on each connection) and the server's view (its metrics'
 * difference over the run, its side of each TCP connection). The load engine reads the fixture
 * server's metrics itself when it owns the target; the callers that run the load inside a link or
 * beside a server they own (runLoadThroughLink, compare's engine and its linked cells) call
 * {@link observe} on the result.
 */

import { join } from 'node:path';
import type { RunResult } from '../model/index.ts';
import {
  attachLinkDrops,
  attachQuicLinkDrops,
  type CaptureSummary,
  type Link,
  linkWarnings,
  timeSequenceFrom,
} from '../net/index.ts';
import type { MetricsSnapshot, ServerMetricsClient } from '../server/index.ts';
import { attachServerQuic } from './quic.ts';
import { attachServerTcp, attachServerTcpFromLink } from './tcp.ts';

/** What was around the run. */
interface Observed {
  /**
   * The link: `profile` names it in the result (compare's net axis); `udpBefore` are the client ports
   * of UDP flows that belong to earlier runs on the same link (QUIC drops are matched by port).
   */
  link?: { link: Link; profile?: string; udpBefore?: ReadonlySet<number> };
  /** The server's metrics, read now; `before`, read before the run, gives the server's view. */
  metrics?: { client: ServerMetricsClient; before?: MetricsSnapshot };
}

/**
 * Records on `run` what `seen` holds. Never throws for a metrics endpoint that does not answer: the
 * run keeps what it had.
 * @example await observe(run, { link: { link }, metrics: { client: target.metrics, before } });
 */
export async function observe(run: RunResult, seen: Observed): Promise<void> {
  if (seen.metrics) {
    const after = await seen.metrics.client.tryRead();
    const { before } = seen.metrics;
    if (before && after && !run.server) {
      // The server's modules load with a run, not with the engine (engine.ts, loadRunModules).
      const { metricsDelta, serverViewOf } = await import('../server/index.ts');
      run.server = serverViewOf(metricsDelta(before, after));
    }
    // A run through a link has its server's side from that link's server already.
    if (after && !run.connections.tcp?.server) attachServerTcp(run, after);
    if (after) attachServerQuic(run, after);
  }
  if (seen.link) {
    const { link, profile, udpBefore } = seen.link;
    run.environment.link = profile !== undefined ? { ...link.info, profile } : link.info;
    if (link.info.congestionControl) run.environment.congestionControl = link.info.congestionControl;
    const stats = await link.stats();
    run.warnings.push(...linkWarnings(stats));
    // The mechanism's numbers: what the link dropped on each connection.
    attachLinkDrops(run, stats);
    attachQuicLinkDrops(run, stats, udpBefore);
    // The server's side of TCP through the link's gateway, where the metrics did not give it.
    if (!run.connections.tcp?.server) await attachServerTcpFromLink(run, link);
  }
}

/** A capture asked for (`--capture DIR`, `--capture-snap`, `--capture-max`). */
export interface CaptureRequest {
  /** Directory of the pcapng files (checked, and made, before any load runs). */
  dir: string;
  snapBytes: number;
  maxBytes: number;
}

/** A run's name as a file name: `10k.bin/c32/wan/h2` → `10k.bin_c32_wan_h2`. */
function captureFileName(name: string): string {
  return `${name.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '')}.pcapng`;
}

/**
 * Runs `body` with the link's capture stage recording, then writes `<dir>/<name>.pcapng` and records
 * it on the run (`evidence.capture`), or why there is none (`evidence.noCapture`: a netem link has no
 * relay to see packets). A run that throws still leaves its capture on disk.
 * @example const run = await capturedRun(link, { dir: 'cap', snapBytes: 65535, maxBytes: 64 << 20 }, 'h2', () => start());
 */
export async function capturedRun(
  link: Link,
  capture: CaptureRequest,
  name: string,
  body: () => Promise<RunResult>,
): Promise<RunResult> {
  const started = await link.startCapture({ snapBytes: capture.snapBytes, maxBytes: capture.maxBytes });
  const file = join(capture.dir, captureFileName(name));
  let summary: CaptureSummary | undefined;
  let run: RunResult;
  try {
    run = await body();
  } finally {
    if (started) summary = await link.stopCapture(file).catch(() => undefined);
  }
  const noCapture = !started
    ? `the ${link.info.backend} backend has no relay that sees the packets: use --net-backend relay`
    : summary === undefined
      ? 'the link relay did not write its capture (it stopped or did not answer)'
      : undefined;
  run.evidence = {
    ...run.evidence,
    ...(summary ? { capture: { file, ...summary, ...timeSequenceFrom(file) } } : {}),
    ...(noCapture ? { noCapture } : {}),
  };
  return run;
}
