/**
 * `compare(options)` as a user calls it: picks the target (a URL, or the embedded fixture server on
 * free loopback ports), the default workloads for it, the metrics reader and the real runner, then
 * runs the matrix. The embedded server is stopped when the comparison ends.
 */

import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkOpenFiles, H2labError, readOptionFile } from '../core/index.ts';
import {
  type CaptureRequest,
  capturedRun,
  measurePath,
  observe,
  preflightQuic,
  preflightTarget,
} from '../load/index.ts';
import type { CompareResult, PathInfo, RunResult, WorkloadInput } from '../model/index.ts';
import {
  captureNoLinkError,
  checkNetAvailable,
  createLink,
  type Link,
  missingGatewayPrerequisite,
  type PlannedLink,
  planLinks,
  targetAddress,
  udpClientPorts,
} from '../net/index.ts';
import { lengthenedDurationMs, representativeCapture } from '../report/index.ts';
import {
  type FixtureTarget,
  type MetricsSnapshot,
  metricsClient,
  type ServerOptionsInput,
  startFixtureTarget,
} from '../server/index.ts';
import { getStrategy, usesQuic } from '../transport/index.ts';
import { type CellRunner, type CompareDeps, type CompareHandle, compare } from './engine.ts';
import { loadRunner, loadRunnerOptionsOf } from './load-runner.ts';
import {
  type CompareOptions,
  type CompareOptionsInput,
  cellConnections,
  resolveCompareOptions,
} from './options.ts';
import { defaultFixtureWorkloads, urlWorkloads } from './workloads.ts';

/**
 * The embedded fixture server as the default comparison wants it: a backend pool of 8 workers (the
 * tile study's 8 database connections), tiles fast enough that a 500 ms run holds hundreds of them,
 * and a few heavy tiles so the tail is not flat.
 */
const COMPARE_FIXTURE = Object.freeze({
  host: '127.0.0.1',
  port: 0,
  tlsPort: 0,
  poolSize: 8,
  tileMs: 4,
  tileHeavyFraction: 0.05,
  tileHeavyMs: 40,
});

/** Hooks of {@link runComparison}. */
export interface RunComparisonHooks {
  onUpdate?: CompareDeps['onUpdate'];
  /** Replace the load engine (tests, what-if). */
  runCell?: CellRunner;
  /** Embedded target only: fixture server options over {@link COMPARE_FIXTURE} (e.g. a slower pool). */
  fixture?: ServerOptionsInput;
  /**
   * The fixture server to compare against when no URL is given, instead of starting one in a worker
   * thread (the caller owns it and closes it). Links still get their own copy behind each link.
   */
  target?: FixtureTarget;
  /**
   * Record each linked run's packets into `capture.dir` (src/net/capture.ts): the representative run
   * of each cell is kept (the median of its measured runs by latency p50), every measured run with
   * `all`. Warm-up runs are never captured.
   */
  capture?: CaptureRequest & {
    all?: boolean;
    /** Without any link, capture nothing instead of refusing (a study's loopback comparisons). */
    linkOptional?: boolean;
  };
}

/** A started comparison and what it runs against. */
export interface StartedComparison extends CompareHandle {
  target: { url: string; embedded: boolean };
}

/**
 * The largest pool any cell will open must fit in the process's open files (an embedded fixture,
 * in a thread of this process, holds the other end of each connection): said before the first run,
 * naming the option that sized it, not as EMFILE in the middle of the matrix.
 */
function checkPoolsFit(asked: CompareOptions, input: CompareOptionsInput): void {
  const levels = [
    ...asked.concurrency,
    ...(asked.burst ?? []),
    ...(input.workloads ?? []).flatMap((w) => (w.burst === undefined ? [] : [w.burst].flat())),
  ];
  let most = { sockets: 1, option: '--h1-connections', value: String(asked.h1Connections) };
  for (const name of asked.protocols) {
    const s = getStrategy(name);
    const sized = (n: number | undefined) => {
      const sockets = n ?? s.connections.fixed ?? 1;
      if (sockets <= most.sockets) return;
      const option = s.multiplexed ? '--h2-sessions' : '--h1-connections';
      const value = s.multiplexed ? String(asked.h2PoolSessions) : String(asked.h1Connections);
      most = { sockets, option, value: value === 'concurrency' ? `concurrency (${sockets})` : value };
    };
    for (const c of levels) sized(cellConnections({ ...asked, concurrencies: asked.concurrency }, s, c));
    // Open-loop pools are not capped by a level.
    if (asked.rateRps && s.connections.fixed === undefined)
      sized(
        s.multiplexed
          ? asked.h2PoolSessions
          : typeof asked.h1Connections === 'number'
            ? asked.h1Connections
            : 1,
      );
  }
  checkOpenFiles(most.sockets * (input.url ? 1 : 2), most.option, most.value);
}

/**
 * Starts a comparison: against `options.url`, or against the embedded fixture server (over TLS, so
 * every strategy negotiates by ALPN exactly as a browser or a production client would).
 *
 * @example
 * const c = await runComparison({ concurrency: [1, 8, 64] });
 * c.events.on('run-end', (e) => console.error(`${e.done}/${e.total}`));
 * const result = await c.done;
 */
export async function runComparison(
  input: CompareOptionsInput,
  hooks: RunComparisonHooks = {},
): Promise<StartedComparison> {
  // Fail on bad options before a server starts; the fixture serves HTTP/3 when a strategy needs it.
  const asked = resolveCompareOptions(input);
  const h3 = {
    ...(usesQuic(asked.protocols) ? { h3: true, quicRetry: asked.quicRetry } : {}),
    // Absolute: the copy of the fixture behind a link runs in a process of its own.
    ...(asked.tls?.keyLogFile ? { keyLogFile: resolve(asked.tls.keyLogFile) } : {}),
    ...(asked.qlogDir && usesQuic(asked.protocols) ? { qlogDir: resolve(asked.qlogDir) } : {}),
  };
  // A body that cannot be read would fail every cell one by one: say so once, before any run.
  if (asked.bodyFile) readOptionFile(asked.bodyFile, '--body', { kind: 'body' });
  checkPoolsFit(asked, input);
  let server: FixtureTarget | undefined;
  let url = input.url;
  let ca = input.tls?.ca;
  let metricsUrl = input.metricsUrl;
  let workloads: WorkloadInput[] | undefined = input.workloads;
  const insecure = input.tls?.insecure ?? false;
  if (!url) {
    // In a thread of its own: the load client must not share its event loop with the server.
    server =
      hooks.target ?? (await startFixtureTarget({ ...COMPARE_FIXTURE, ...h3, ...hooks.fixture }, 'thread'));
    url = `${server.tlsUrl}/`;
    // Trust the embedded server the way a real client would: through the CA that signed it.
    ca ??= server.caFile;
    metricsUrl ??= server.metrics.url;
    workloads ??= defaultFixtureWorkloads();
  }
  workloads ??= urlWorkloads(url);
  let options = resolveCompareOptions({ ...input, url, workloads, ...(metricsUrl ? { metricsUrl } : {}) });
  const target = { url, embedded: server !== undefined };
  // A target the caller gave stays theirs to close.
  const closeServer = async () => {
    if (server !== hooks.target) await server?.close();
  };
  let plan: Map<string, PlannedLink>;
  let path: PathInfo | undefined;
  let gatewayTo: string | undefined;
  let gatewayPort = 0;
  let noQuic: string | undefined;
  try {
    plan = planComparisonLinks(options, server !== undefined);
    if (hooks.capture && plan.size === 0 && !hooks.capture.linkOptional)
      throw captureNoLinkError(hooks.capture.dir);
    // A server h2lab did not start: the round trip to it without any link, measured once, goes into
    // every run (what a link's delay adds to); behind a link it is reached through a gateway.
    if (!server) {
      // Trust settings that cannot work fail here, once, with the fix: not in every cell.
      await preflightTarget(url, input.tls ?? {}, asked.connectTimeoutMs);
      // A server without HTTP/3 ignores QUIC: said once within a probe's timeout, not by every h3
      // cell after its connect timeout.
      if (usesQuic(asked.protocols) && plan.size === 0) noQuic = await preflightQuic(url, input.tls ?? {});
      const u = new URL(url);
      const port = Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
      gatewayPort = port;
      gatewayTo = await targetAddress(u.hostname, plan.size > 0 ? '--net' : 'URL').catch((err) => {
        if (plan.size > 0) throw err;
        return undefined;
      });
      // Behind a link a target that does not answer on TCP fails here, before any link is made
      // (unless every strategy speaks QUIC); without one, each run says it for itself.
      const quietly = plan.size === 0 || options.protocols.every((p) => usesQuic([p]));
      if (gatewayTo) path = await measurePath(gatewayTo, port, quietly);
    }
  } catch (err) {
    await closeServer();
    throw err;
  }
  // The net axis names every link of the plan; `loopback` stays when it was asked for (or when no
  // link condition was given at all).
  if (plan.size > 0) {
    const keepLoopback = input.net === undefined ? false : options.net.includes('loopback');
    options = resolveCompareOptions({
      ...input,
      url,
      workloads,
      ...(metricsUrl ? { metricsUrl } : {}),
      net: [...(keepLoopback ? ['loopback'] : []), ...plan.keys()],
    });
  }
  // Behind each link the same fixture as on loopback, in the link's server namespace.
  const {
    host: _h,
    port: _p,
    tlsPort: _t,
    ...linkedFixture
  } = { ...COMPARE_FIXTURE, ...h3, ...hooks.fixture };
  const linked = new LinkSequence(
    plan,
    server
      ? { fixture: linkedFixture }
      : {
          gateway: {
            target: gatewayTo!,
            targetPort: gatewayPort,
            targetUdp: options.protocols.some((p) => usesQuic([p])),
          },
        },
  );
  const baseRunCell =
    hooks.runCell ??
    loadRunner(
      loadRunnerOptionsOf(options, {
        ...(ca ? { ca } : {}),
        ...(insecure ? { insecure: true } : {}),
        ...(server ? { serverInProcess: true } : {}),
      }),
    );
  // Timed runs over a long link are lengthened to the link unless the user chose their length.
  const lengthen = input.durationMs === undefined && input.requests === undefined;
  const offered: CellRunner = noQuic
    ? async (cell, ctx) => {
        if (!usesQuic([cell.protocol])) return baseRunCell(cell, ctx);
        throw new H2labError(
          'H2LAB_ERR_PROTOCOL_MISMATCH',
          `requested h3 but the server did not answer QUIC (${noQuic}): it does not offer HTTP/3 on this port`,
          { requested: 'h3', negotiated: 'none', target: url },
        );
      }
    : baseRunCell;
  const linkedOrNot =
    plan.size === 0
      ? offered
      : throughLinks(offered, linked, url, lengthen, hooks.capture && { ...hooks.capture, options });
  const runCell: CellRunner = path
    ? async (cell, ctx) => {
        const run = await linkedOrNot(cell, ctx);
        run.environment.path = path;
        return run;
      }
    : linkedOrNot;
  const closeLinks = () => linked.close();
  let handle: CompareHandle;
  try {
    handle = compare(options, {
      runCell,
      target,
      ...(options.metricsUrl
        ? { metrics: metricsClient(options.metricsUrl, { owned: server !== undefined, timeoutMs: 2000 }) }
        : {}),
      ...(hooks.onUpdate ? { onUpdate: hooks.onUpdate } : {}),
    });
  } catch (err) {
    await closeServer();
    await closeLinks();
    throw err;
  }
  const done = handle.done
    .finally(async () => {
      await closeLinks();
      await closeServer();
    })
    .then((r) => {
      if (hooks.capture && !hooks.capture.all) keepRepresentativeCaptures(r);
      return r;
    });
  return { ...handle, done, target };
}

/**
 * The links of a comparison, brought up one at a time: the matrix runs every cell of one link before
 * the next (src/compare/engine.ts plans `net` outermost), so only one link (and its copy of the
 * fixture server) exists at once — a grid of 12 link conditions does not mean 12 relays and 12
 * servers sharing two cores. Behind each link: a copy of the fixture server in the link's namespace,
 * or, for a server h2lab did not start, a gateway to it (src/net/gateway.ts).
 */
class LinkSequence {
  private current: { name: string; link: Link; fixture?: FixtureTarget } | undefined;
  constructor(
    private readonly plan: Map<string, PlannedLink>,
    private readonly behind:
      | { fixture: ServerOptionsInput }
      | { gateway: { target: string; targetPort: number; targetUdp: boolean } },
  ) {}

  has(name: string): boolean {
    return this.plan.has(name);
  }

  async get(name: string): Promise<{ link: Link; fixture?: FixtureTarget }> {
    if (this.current?.name === name) return this.current;
    await this.close();
    const planned = this.plan.get(name)!;
    if ('gateway' in this.behind) {
      this.current = { name, link: await createLink({ ...planned.options, ...this.behind.gateway }) };
      return this.current;
    }
    const link = await createLink(planned.options);
    try {
      this.current = { name, link, fixture: await startFixtureTarget(this.behind.fixture, { link }) };
    } catch (err) {
      await link.close();
      throw err;
    }
    return this.current;
  }

  async close(): Promise<void> {
    const c = this.current;
    this.current = undefined;
    if (!c) return;
    await c.fixture?.close();
    await c.link.close();
  }
}

/**
 * Plans the links (named profiles crossed with the link axes) and checks they can be made: emulation
 * needs root and the native addon, and a link to a server h2lab did not start needs nftables.
 */
function planComparisonLinks(options: CompareOptions, embedded: boolean): Map<string, PlannedLink> {
  const plan = planLinks(options.net, options.links, options.seed);
  if (plan.length === 0) return new Map();
  checkNetAvailable(plan[0]!.options.backend === 'netem' ? 'netem' : 'relay');
  const missing = embedded ? undefined : missingGatewayPrerequisite();
  if (missing) {
    throw new H2labError(
      'H2LAB_ERR_NET_UNAVAILABLE',
      `network emulation is not available here: missing ${missing}`,
      {
        missing,
      },
    );
  }
  return new Map(plan.map((l) => [l.name, l]));
}

/**
 * Runs cells of a linked profile through that link: against the link's fixture server (same paths,
 * its metrics read around the run), or through the link's gateway to the comparison's own target;
 * records the link, its warnings and drops, and the server's side of TCP where it can be read.
 */
function throughLinks(
  inner: CellRunner,
  links: LinkSequence,
  loopbackUrl: string,
  lengthen: boolean,
  capture?: CaptureRequest & { options: CompareOptions },
): CellRunner {
  return async (cell, given) => {
    if (!links.has(cell.net)) {
      const run = await inner(cell, given);
      if (capture) run.evidence = { ...run.evidence, noCapture: NO_LINK_NO_CAPTURE };
      return run;
    }
    const l = await links.get(cell.net);
    // A timed run lasts at least MIN_RUN_ROUND_TRIPS round trips of the link and long enough for
    // MIN_RUN_REQUESTS requests (src/report/run-length.ts); a burst's length is its N.
    const ctx =
      lengthen && !cell.workload.burst
        ? {
            ...given,
            durationMs: lengthenedDurationMs(given.durationMs, l.link.info.rttMs, {
              concurrency: cell.concurrency,
              ...(cell.workload.rateRps ? { rateRps: cell.concurrency } : {}),
            }),
          }
        : given;
    // What the last run's losses taught the host's TCP about this link is forgotten before each run.
    await l.link.forgetTcpMetrics();
    // The link's UDP flows so far belong to earlier cells (QUIC's client ports are not exposed).
    const udpBefore = usesQuic([cell.protocol]) ? udpClientPorts(await l.link.stats()) : undefined;
    let run: RunResult;
    let before: MetricsSnapshot | undefined;
    let go: () => Promise<RunResult>;
    if (l.fixture) {
      const base = new URL(loopbackUrl);
      const url = new URL(`${base.pathname}${base.search}`, l.fixture.tlsUrl).toString();
      await l.fixture.metrics.reset();
      before = await l.fixture.metrics.tryRead();
      go = () => inner(cell, { ...ctx, url, ca: l.fixture!.caFile! });
    } else {
      go = () => inner(cell, { ...ctx, connectTo: l.link.serverAddress });
    }
    // Warm-up runs are discarded: never captured.
    if (capture && ctx.run >= capture.options.warmupRuns)
      run = await capturedRun(l.link, capture, `${cell.id}/run${ctx.run}`, go);
    else run = await go();
    await observe(run, {
      link: { link: l.link, profile: cell.net, ...(udpBefore ? { udpBefore } : {}) },
      ...(l.fixture ? { metrics: { client: l.fixture.metrics, ...(before ? { before } : {}) } } : {}),
    });
    return run;
  };
}

const NO_LINK_NO_CAPTURE =
  'loopback: no emulated link, so no packet passes the relay and there is nothing to capture';

/**
 * Of each cell's captured runs, keeps the capture of the representative one (`representativeCapture`:
 * the median of its measured runs by latency p50, the lower middle of an even count, the run the
 * verdict quotes) and deletes the others' files, saying so on those runs.
 */
function keepRepresentativeCaptures(result: CompareResult): void {
  for (const cell of result.cells) {
    const captured = cell.runs.filter((r) => r.evidence?.capture !== undefined);
    if (captured.length < 2) continue;
    const keep = representativeCapture(cell);
    for (const r of captured) {
      if (r === keep || !r.evidence?.capture) continue;
      rmSync(r.evidence.capture.file, { force: true });
      const { capture: _dropped, ...rest } = r.evidence;
      r.evidence = {
        ...rest,
        noCapture:
          "not the cell's representative run: its capture was deleted (--capture-all keeps every run's)",
      };
    }
  }
}
