/**
 * `replayPage()`: a recorded page (HAR) served from this host, one listener per recorded origin, and
 * loaded by Chromium under each protocol setting, alternating, through the same link.
 *
 * ```
 *   HAR ──▶ origins ──▶ per setting (h1 | h2 | h3): one listener per origin (127.0.0.1, port 0),
 *                        a certificate for its host from the dev CA, ALPN / QUIC per origin
 *   Chromium per setting: --host-resolver-rules MAP host → A:port, SPKI pins, (h3) force QUIC
 *   A = 127.0.0.1 on loopback; behind a link the listeners run in the link's server namespace and
 *       A is its address, so every connection crosses the emulated link both ways (origins-host.ts)
 *   round 0 (discarded), 1..runs: each setting once per round, the order rotating
 * ```
 * Each load is a new browser context (no socket, ticket or cache carried over) and, behind a link,
 * follows `forgetTcpMetrics()`, so every load is a first visit.
 *
 * Chromium's isolation (net/isolation.ts): on loopback, when root, Chromium and the origins run in a
 * private namespace holding only `lo` (one per replay), where no other run's interfaces appear;
 * behind a link the link's client side gets a namespace of its own (`clientNamespace`) and Chromium
 * runs there. Without root (loopback only) Chromium stays in the host's namespace (a warning says
 * so), and a load that meets a change is repeated (at most twice, with a warning).
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import type { ChromiumHandle } from '../browser/index.ts';
import { launchChromium, spkiPins } from '../browser/index.ts';
import { H2labError, hostFacts, isH2labError } from '../core/index.ts';
import { BINDING_FACTS } from '../h3/index.ts';
import {
  PAGE_RESULT_VERSION,
  type PageLoad,
  type PageReplayOptions,
  type PageReplayOptionsInput,
  PageReplayOptionsSchema,
  type PageRequest,
  type PageResult,
  type ReplayProtocol,
  replayProtocolLabel,
} from '../model/index.ts';
import {
  browserNetwork,
  createLink,
  type FlowDrops,
  hostNetworkLine,
  type Link,
  type LinkOptions,
  timeSequenceFrom,
} from '../net/index.ts';
import { medianLoad } from '../report/index.ts';
import { resolverRules } from '../server/index.ts';
import { ensureDevCertificates } from '../tls/index.ts';
import { analyzePage, originProtocols } from './analyze.ts';
import { type HarLimits, type ReplaySite, readHar } from './har.ts';
import { startReplayOrigins } from './origins-host.ts';
import { type CapturedLoad, capturePageLoad, NETWORK_CHANGED_RETRIES, networkChanged } from './page-load.ts';

/** Hooks of {@link replayPage}. */
export interface ReplayHooks {
  /** Run every load through a link made from these options (its namespace forwards to this host). */
  link?: LinkOptions;
  onProgress?: (message: string, step: number, of: number) => void;
  /** Stops between loads; the loads so far are kept and the result carries H2LAB_ERR_INTERRUPTED. */
  signal?: AbortSignal;
  /** With a link: capture each kept load into `capture.dir/<protocol>_round<N>.pcapng`. */
  capture?: { dir: string; snapBytes: number; maxBytes: number };
}

/** Validates options; H2LAB_ERR_INVALID_OPTION names the first bad one. */
function resolvePageReplayOptions(input: PageReplayOptionsInput): PageReplayOptions {
  const r = PageReplayOptionsSchema.safeParse(input);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const key = issue.path.join('.') || '(options)';
    throw new H2labError('H2LAB_ERR_INVALID_OPTION', `page replay option ${key}: ${issue.message}`, {
      option: key,
    });
  }
  return r.data;
}

/** A captured load as the result keeps it: times in ms from the document's requestWillBeSent. */
function pageRequestsOf(load: CapturedLoad): PageRequest[] {
  const ms = (s: number) => (s - load.t0S) * 1000;
  const out: PageRequest[] = load.requests.map((r) => {
    const t = r.timing;
    const q: PageRequest = {
      url: r.url,
      host: new URL(r.url).hostname,
      status: r.status ?? 0,
      protocol: r.protocol ?? '',
      startMs: ms(r.willBeSentS),
      endMs: ms(r.endS ?? r.willBeSentS),
      bytes: r.encodedBytes ?? 0,
    };
    if (r.connectionId !== undefined) q.connectionId = r.connectionId;
    if (t && t.sendStart >= 0) {
      q.sendMs = ms(t.requestTime) + t.sendStart;
      q.stalledMs = Math.max(0, q.sendMs - q.startMs);
      q.wireMs = Math.max(0, q.endMs - q.sendMs);
      if (t.receiveHeadersEnd >= 0) q.waitMs = Math.max(0, t.receiveHeadersEnd - t.sendEnd);
      if (t.connectStart >= 0 && t.connectEnd >= t.connectStart) q.connectMs = t.connectEnd - t.connectStart;
      if (t.sslStart >= 0 && t.sslEnd >= t.sslStart) q.tlsMs = t.sslEnd - t.sslStart;
    }
    if (r.initiator.url) q.initiator = r.initiator.url;
    if (r.failed) q.failed = r.failed;
    return q;
  });
  // Head-of-line on an HTTP/1.1 connection (one request at a time, RFC 9112 §9.3): another request
  // held it (sent before, not finished) when this one was discovered, and this one was sent only
  // after it finished. Over h2 and h3 a request waiting to be sent waits for something else (the
  // handshake, Chromium's scheduler), so only HTTP/1.1 requests are counted.
  const byConn = new Map<string, PageRequest[]>();
  for (const q of out) {
    if (q.protocol !== 'http/1.1') continue;
    if (q.connectionId === undefined || q.sendMs === undefined || q.connectionId === '0') continue;
    byConn.set(q.connectionId, [...(byConn.get(q.connectionId) ?? []), q]);
  }
  for (const list of byConn.values()) {
    for (const q of list) {
      let waited = 0;
      for (const p of list) {
        if (p === q || p.sendMs! >= q.sendMs! || p.endMs <= q.startMs) continue;
        if (q.sendMs! + 0.5 < p.endMs) continue; // sent while p was in flight: multiplexed
        waited = Math.max(waited, Math.min(p.endMs, q.sendMs!) - Math.max(q.startMs, p.sendMs!));
      }
      if (waited > 0) q.waitedBehindMs = waited;
    }
  }
  return out;
}

/**
 * Packets the link dropped during one load on the flows to this setting's listeners (the relay
 * counts drops per flow since the link was made; a load's are the difference), by cause, and the
 * connections (flows) that lost any.
 */
function dropsOf(
  before: readonly FlowDrops[],
  after: readonly FlowDrops[],
  ports: ReadonlySet<number>,
): NonNullable<PageLoad['linkDrops']> {
  const key = (f: FlowDrops) => `${f.protocol}:${f.clientPort}:${f.serverPort}`;
  const old = new Map(before.map((f) => [key(f), f]));
  const out = { loss: 0, queue: 0, connections: 0 };
  for (const f of after) {
    if (!ports.has(f.serverPort)) continue;
    const o = old.get(key(f));
    const loss = f.lossUp + f.lossDown - (o ? o.lossUp + o.lossDown : 0);
    const queue = f.queueUp + f.queueDown - (o ? o.queueUp + o.queueDown : 0);
    if (loss + queue > 0) out.connections++;
    out.loss += loss;
    out.queue += queue;
  }
  return out;
}

/**
 * Kept loads whose requests failed, or spoke another protocol than their origin was served with in
 * that setting: both change what the load time means, so each is a warning with its count.
 */
function protocolWarnings(
  loads: readonly PageLoad[],
  hosts: readonly string[],
  h2Origins: readonly string[] | undefined,
): string[] {
  const out: string[] = [];
  for (const setting of [...new Set(loads.map((l) => l.protocol))]) {
    const map = originProtocols(setting, hosts, h2Origins);
    const kept = loads.filter((l) => l.protocol === setting && !l.discarded);
    const reqs = kept.flatMap((l) => l.requests);
    const failed = reqs.filter((q) => q.failed);
    const wrong = reqs.filter((q) => !q.failed && map[q.host] && q.protocol !== map[q.host]);
    if (failed.length)
      out.push(
        `${replayProtocolLabel(setting)}: ${failed.length} requests failed in ${kept.length} kept loads (${[...new Set(failed.map((q) => q.failed))].join(', ')}); a load with failed requests can look faster than it was.`,
      );
    if (wrong.length)
      out.push(
        `${replayProtocolLabel(setting)}: ${wrong.length} requests did not speak the protocol their origin was served with (${[...new Set(wrong.map((q) => q.protocol || 'none'))].join(', ')}).`,
      );
  }
  return out;
}

/**
 * HTTP/3 served on this host's loopback (no link, no root): bound to 127.0.0.1, as every replay
 * listener binds the address it reports, quiche probes the path MTU up to loopback's and Chromium
 * refuses datagrams over 1472 bytes. The binding's maximum UDP payload does not bound the probes
 * (measured), so only a namespace helps.
 */
const H3_ON_HOST_LOOPBACK =
  "h3 on this host's loopback: the QUIC server binds 127.0.0.1 and probes the path MTU up to loopback's 65536, and Chromium closes a connection that meets a datagram over 1472 bytes (net::ERR_QUIC_PROTOCOL_ERROR.QUIC_PACKET_TOO_LARGE); run as root (a namespace of its own, where the probes stop at 1472) or behind a link (--net) for h3 without it.";

function interrupted(): H2labError {
  return new H2labError('H2LAB_ERR_INTERRUPTED', 'page replay interrupted; the loads so far are kept', {});
}

/**
 * One page load of one protocol setting: the link's counters around it, a capture when asked, and
 * the load repeated when Chromium saw the host's interfaces change mid-load.
 */
async function measureLoad(
  b: Browser,
  site: ReplaySite,
  timeoutMs: number,
  s: { protocol: ReplayProtocol; ports: Set<number>; round: number },
  link: Link | undefined,
  recording: ReplayHooks['capture'],
  warnings: string[],
): Promise<PageLoad> {
  const round = s.round;
  const before = link ? await link.stats() : undefined;
  if (recording) await link!.startCapture(recording);
  let captured = await capturePageLoad(b, site.url, { timeoutMs });
  // Chromium aborts what is in flight when the host's interfaces change (another link or
  // container starting: net::ERR_NETWORK_CHANGED): that load measured the host. Redo it.
  for (let retry = 0; retry < NETWORK_CHANGED_RETRIES && networkChanged(captured); retry++) {
    warnings.push(
      `${replayProtocolLabel(s.protocol)}: load ${round} was repeated because Chromium reported net::ERR_NETWORK_CHANGED (the host's network interfaces changed during it).`,
    );
    captured = await capturePageLoad(b, site.url, { timeoutMs });
  }
  const l: PageLoad = {
    protocol: s.protocol,
    round,
    discarded: round === 0,
    requests: pageRequestsOf(captured),
  };
  if (recording) {
    const file = join(recording.dir, `${s.protocol.replace(/[^A-Za-z0-9.-]+/g, '_')}_round${round}.pcapng`);
    const summary = await link!.stopCapture(file);
    if (summary) l.capture = { file, ...summary };
  }
  if (captured.metrics) l.metrics = captured.metrics;
  if (captured.error) l.error = captured.error;
  if (link && before?.flows) {
    const after = await link.stats();
    if (after.flows) l.linkDrops = dropsOf(before.flows, after.flows, s.ports);
  }
  return l;
}

/**
 * The time-sequence graphs of the load report.html draws for each setting (its median load, see
 * {@link medianLoad}), read back from that load's capture, of the connections to that setting's
 * listeners (`ports`); only that load's, to keep results.json small.
 */
function graphRepresentativeLoads(out: PageResult, ports: ReadonlyMap<ReplayProtocol, Set<number>>): void {
  for (const [protocol, p] of ports) {
    const capture = medianLoad(out, protocol)?.capture;
    if (capture) Object.assign(capture, timeSequenceFrom(capture.file, p));
  }
}

/** Refuses an `--h2-origins` host the HAR does not have, naming the ones it does. */
function checkH2Origins(
  h2Origins: readonly string[] | undefined,
  har: string,
  hosts: readonly string[],
): void {
  for (const h of h2Origins ?? []) {
    if (!hosts.includes(h))
      throw new H2labError(
        'H2LAB_ERR_INVALID_OPTION',
        `--h2-origins ${h} is not an origin of ${har}: name hostnames it has (${hosts.slice(0, 6).join(', ')}${hosts.length > 6 ? ', …' : ''})`,
        { option: '--h2-origins', value: h },
      );
  }
}

/**
 * Replays a HAR under each protocol setting and explains the difference.
 *
 * @example const r = await replayPage({ har: 'site.har', protocols: ['http/1.1', 'h2'], runs: 5 });
 */
export async function replayPage(
  input: PageReplayOptionsInput,
  hooks: ReplayHooks = {},
): Promise<PageResult> {
  const opts = resolvePageReplayOptions(input);
  const limits: HarLimits = {
    maxBodyBytes: opts.harMaxBodyBytes,
    maxTotalBytes: opts.harMaxTotalBytes,
    maxThinkMs: opts.loadTimeoutMs,
  };
  const site: ReplaySite = readHar(opts.har, limits);
  const hosts = [...site.origins.keys()];
  checkH2Origins(opts.h2Origins, opts.har, hosts);
  const startedAt = new Date().toISOString();
  const load1 = loadavg().map((v) => Math.round(v * 100) / 100);
  const cleanups: Array<() => Promise<void>> = [];
  const warnings: string[] = [...site.skipped.map((s) => `skipped HAR ${s}`), ...site.warnings];
  const loads: PageLoad[] = [];
  /** Each setting's listener ports: its connections in a capture. */
  const listenerPorts = new Map<ReplayProtocol, Set<number>>();
  let link: Link | undefined;
  let chromium: { path: string; version: string; flags: string[]; netns?: string; hostNetwork?: string } = {
    path: opts.chromiumPath,
    version: 'unknown',
    flags: [],
  };
  // Where the origins run, once browserNetwork has decided (docs/design.md's glossary: placement).
  let placement: PageResult['replayServer']['placement'] = 'in-process';
  const result = (): PageResult => {
    const r: PageResult = {
      kind: 'h2lab.page',
      version: PAGE_RESULT_VERSION,
      options: opts,
      environment: {
        ...hostFacts(),
        loadAverage: load1,
        chromium,
        ...(opts.protocols.includes('h3') ? { h3Binding: BINDING_FACTS.binding } : {}),
        startedAt,
      },
      har: {
        file: opts.har,
        creator: site.creator,
        source: site.source,
        url: site.url,
        entries: site.entries,
        origins: hosts,
        bytes: site.bytes,
        shared: site.shared,
        inferred: site.inferred,
      },
      replayServer: {
        placement,
        maxConcurrentStreams: opts.maxConcurrentStreams,
        quicRetry: false,
      },
      loads,
      summaries: [],
      comparisons: [],
      verdict: [],
      misses: [],
      warnings,
    };
    if (link) r.link = link.info;
    return r;
  };
  try {
    const dev = await ensureDevCertificates();
    if (hooks.link) {
      hooks.onProgress?.('creating the link', 0, 1);
      // The client side gets a namespace of its own, and Chromium runs there (see the file's doc).
      link = await createLink({ ...hooks.link, clientNamespace: true });
      const l = link;
      cleanups.push(() => l.close());
    }
    const net = await browserNetwork(link);
    cleanups.push(() => net.close());
    const { serverNamespace: serverNs, netns } = net;
    if (link) placement = { link: link.info.profile };
    else if (serverNs) placement = { namespace: serverNs.namespace };
    if (net.hostReason) warnings.push(hostNetworkLine(net.hostReason));
    if (!serverNs && opts.protocols.includes('h3')) warnings.push(H3_ON_HOST_LOOPBACK);
    const origins = await startReplayOrigins(
      site,
      { file: opts.har, limits },
      opts.protocols.map((protocol) => ({ protocol, map: originProtocols(protocol, hosts, opts.h2Origins) })),
      dev,
      opts.maxConcurrentStreams,
      serverNs,
    );
    cleanups.push(() => origins.close());
    const settings: Array<{ protocol: ReplayProtocol; browser: ChromiumHandle; ports: Set<number> }> = [];
    for (const o of origins.settings) {
      const quic = o.listeners
        .filter((l) => l.wire === 'h3')
        .map((l) => `${l.host}:${site.ports.get(l.host) ?? 443}`);
      const browser = await launchChromium({
        executablePath: opts.chromiumPath,
        spki: o.certPems.flatMap(spkiPins),
        extraFlags: [`--host-resolver-rules=${resolverRules(o.listeners, origins.address)}`],
        ...(quic.length ? { forceQuicOn: quic.join(',') } : {}),
        ...(opts.keyLogFile ? { keyLogFile: opts.keyLogFile } : {}),
        ...(netns ? { netns } : {}),
      });
      cleanups.push(() => browser.close());
      if (settings.length === 0)
        chromium = {
          path: opts.chromiumPath,
          version: browser.version,
          flags: browser.flags,
          ...(netns ? { netns } : {}),
          ...(net.hostReason ? { hostNetwork: net.hostReason } : {}),
        };
      const ports = new Set(o.listeners.map((l) => l.port));
      listenerPorts.set(o.protocol, ports);
      settings.push({ protocol: o.protocol, browser, ports });
    }
    const total = (opts.runs + 1) * settings.length;
    let step = 0;
    for (let round = 0; round <= opts.runs; round++) {
      for (let k = 0; k < settings.length; k++) {
        if (hooks.signal?.aborted) throw interrupted();
        const s = settings[(round + k) % settings.length]!;
        hooks.onProgress?.(
          `${round === 0 ? 'warm-up' : `run ${round}/${opts.runs}`} ${replayProtocolLabel(s.protocol)}`,
          step++,
          total,
        );
        await link?.forgetTcpMetrics();
        const b = s.browser.context.browser();
        if (!b)
          throw new H2labError('H2LAB_ERR_BROWSER_LAUNCH', 'Chromium started without a browser handle', {});
        const recording = hooks.capture && link && round > 0 ? hooks.capture : undefined;
        loads.push(
          await measureLoad(
            b,
            site,
            opts.loadTimeoutMs,
            { protocol: s.protocol, ports: s.ports, round },
            link,
            recording,
            warnings,
          ),
        );
      }
    }
    warnings.push(...protocolWarnings(loads, hosts, opts.h2Origins));
    const out = result();
    graphRepresentativeLoads(out, listenerPorts);
    out.misses = (await origins.misses()).slice(0, 50);
    Object.assign(out, analyzePage(out, site));
    if (loads.every((l) => l.discarded || l.error)) {
      out.error = new H2labError(
        'H2LAB_ERR_PAGE_LOAD',
        `no load of ${site.url} completed: ${loads.find((l) => l.error)?.error ?? 'unknown'}`,
        { url: site.url },
      ).toJSON();
    }
    return out;
  } catch (caught) {
    // Ctrl-C on a terminal reaches Chromium too: whatever failed after a stop was asked for, the
    // replay was interrupted, not broken.
    const err = hooks.signal?.aborted ? interrupted() : caught;
    if (!isH2labError(err) || loads.length === 0) throw err;
    const out = result();
    graphRepresentativeLoads(out, listenerPorts);
    Object.assign(out, analyzePage(out, site));
    out.error = err.toJSON();
    return out;
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  }
}
