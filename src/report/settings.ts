/**
 * The settings that can decide an outcome besides the protocol, read back from what the runs
 * recorded (not from the options asked for), so a report states what was actually in force: pool
 * sizes, HTTP/2 windows and client, Nagle, TCP congestion control and initial window, the server's
 * stream limit, the TLS version, whether handshakes fell inside the timed period, and the link.
 * Pure: `(result) → rows`; the renderers print them under their header.
 */
import { dirname } from 'node:path';
import { formatBytes, formatMs } from '../core/index.ts';
import type { CompareResult, LinkInfo, PathInfo, RunResult } from '../model/index.ts';
import { findStrategy, strategyNames } from '../transport/index.ts';
import { MIN_RUN_REQUESTS, MIN_RUN_ROUND_TRIPS } from './run-length.ts';
import { wrapText } from './text.ts';

/** One setting: a short name and what was in force, in words with units. */
interface SettingRow {
  name: string;
  value: string;
}

const WINDOW_WHO: Record<string, string> = {
  browser: "Chromium's",
  node: "node:http2's and RFC 9113's initial 64 KiB",
  max: 'flow control effectively off, as h2load',
  custom: 'explicit sizes',
};

/** "rtt 200 ms, 10 Mbit/s, loss 1%, queue 250 KiB, seed 1, relay". */
function describeLink(l: LinkInfo): string {
  const parts = [`rtt ${formatMs(l.rttMs)}`];
  if (l.jitterMs) parts.push(`jitter ±${formatMs(l.jitterMs)}`);
  if (l.rateBitsPerSec) parts.push(`${+(l.rateBitsPerSec / 1e6).toPrecision(4)} Mbit/s`);
  if (l.loss) parts.push(`loss ${+(l.loss * 100).toPrecision(4)}%`);
  const loss = l.loss ?? 0;
  if ((l.lossUp ?? loss) !== loss || (l.lossDown ?? loss) !== loss)
    parts.push(
      `loss up ${+((l.lossUp ?? 0) * 100).toPrecision(4)}% / down ${+((l.lossDown ?? 0) * 100).toPrecision(4)}%`,
    );
  if (l.queueBytes) parts.push(`queue ${formatBytes(l.queueBytes)}`);
  if (l.seed !== undefined) parts.push(`seed ${l.seed}`);
  parts.push(l.backend);
  return parts.join(', ');
}

const LOCALITY_WORDS = {
  loopback: "on this host's loopback",
  host: "on one of this host's addresses",
  remote: 'on another host',
} as const;

/** The path to the target as the comparison's runs recorded it (a target h2lab did not start). */
export function comparePath(result: CompareResult): PathInfo | undefined {
  for (const c of result.cells) for (const r of c.runs) if (r.environment.path) return r.environment.path;
  return undefined;
}

/**
 * A network axis name for a header: `loopback` means "no emulated link", which is loopback only when
 * the target is on this host's loopback (or is the embedded fixture server).
 */
export function netLabel(result: CompareResult, name: string): string {
  if (name !== 'loopback') return name;
  const p = comparePath(result);
  return p && p.placement !== 'loopback' ? `no emulated link (base RTT ${formatMs(p.baseRttMs)})` : name;
}

/**
 * What every network of the comparison shares, and what sets each apart: link names are their
 * conditions joined by `+` (`rtt200ms+loss1%+10mbit+reno`), so a grid's names differ in a few of
 * them. `common` is the shared conditions (`rtt200ms+10mbit`), `short(net)` the rest (`loss1%+reno`;
 * the full name when nothing is shared, or the name is a preset).
 *
 * @example netParts(r).short('rtt200ms+loss1%+10mbit+reno') // 'loss1%+reno'
 */
export function netParts(result: CompareResult): { common: string; short: (net: string) => string } {
  const nets = result.axes.net;
  const tokens = nets.map((n) => n.split('+'));
  const shared =
    nets.length > 1 ? tokens[0]!.filter((t) => tokens.every((ts) => ts.includes(t))) : ([] as string[]);
  const short = (net: string): string => {
    const rest = net.split('+').filter((t) => !shared.includes(t));
    return rest.length > 0 && shared.length > 0 ? rest.join('+') : netLabel(result, net);
  };
  return { common: shared.join('+'), short };
}

/**
 * What a comparison compared, for its title: the HTTP versions of its strategies against the
 * baseline's ("HTTP/3 vs HTTP/2", "HTTP/2, HTTP/3 vs HTTP/1.1"), or the strategies by name when they
 * all speak one version ("h2-pool vs h2 (HTTP/2)").
 */
export function comparedTitle(result: CompareResult): string {
  const http = (n: string) => findStrategy(n)?.http ?? n;
  const base = http(result.baseline);
  const others = distinct(result.axes.protocols.map(http)).filter((h) => h !== base);
  if (others.length > 0) return `${others.join(', ')} vs ${base}`;
  const names = result.axes.protocols.filter((p) => p !== result.baseline);
  return `${names.join(', ') || result.baseline} vs ${result.baseline} (${base})`;
}

/** The path to a target h2lab did not start, as measured without a link. */
function pathText(p: PathInfo): string {
  const where = p.placement ? `${LOCALITY_WORDS[p.placement]}, ` : '';
  return `${p.target} ${where}base RTT ${formatMs(p.baseRttMs)} (median of ${p.samples} TCP handshakes without a link, fastest ${formatMs(p.baseRttMinMs)})`;
}

/**
 * A link as the settings show it: what it emulates, the kernel's pins, and, for a server h2lab did
 * not start, that the link leads to it through a gateway, which end's TCP was pinned, and the round
 * trip the runs then had (the path's own plus the link's).
 */
function linkSettingText(l: LinkInfo, path?: PathInfo): string {
  const tcp = `TCP ${l.congestionControl ?? 'host default'}, initial cwnd ${l.initialCwnd ?? 10}, slow start after idle ${l.slowStartAfterIdle === false ? 'off' : 'on'}`;
  const g = l.gateway;
  if (!g)
    return `${describeLink(l)}; ${tcp}${l.noMetricsSave ? ', no metrics carried between connections' : ''}`;
  const ends = g.serverPinned
    ? "on both ends (the server's by its route)"
    : "on h2lab's end only (the remote server keeps its own)";
  const total = path
    ? `; round trip ≈ ${formatMs(path.baseRttMs + l.rttMs)} (path ${formatMs(path.baseRttMs)} + link ${formatMs(l.rttMs)})`
    : '';
  return `${describeLink(l)}, to ${g.target} through a gateway (NAT) in the link's namespace; ${tcp} ${ends}${total}`;
}

function distinct<T>(xs: Iterable<T>): T[] {
  return [...new Set(xs)];
}

/** "c=1: 1, c=8: 6, c=64: 6" (an open-loop run's level reads "500 req/s"), or "6" when all had the same. */
function perLevel(runs: RunResult[], value: (r: RunResult) => number): string {
  const level = (r: RunResult) =>
    r.schedule.rateRps !== undefined ? `${r.schedule.rateRps} req/s` : `c=${r.schedule.concurrency ?? 0}`;
  const order = (r: RunResult) => r.schedule.rateRps ?? r.schedule.concurrency ?? 0;
  const by = new Map<string, number>();
  for (const r of [...runs].sort((a, b) => order(a) - order(b))) by.set(level(r), value(r));
  const values = distinct(by.values());
  if (values.length === 1) return String(values[0]);
  return [...by].map(([l, v]) => `${l}: ${v}`).join(', ');
}

function handshakes(runs: RunResult[]): string {
  const said = distinct(
    runs.map((r) => {
      if (r.schedule.mode !== 'burst') {
        return 'outside: connections are opened before the clock (reconnections during a run are timed)';
      }
      return r.schedule.handshakes === 'exclude'
        ? 'outside (burst): connections are opened before t0'
        : 'inside (burst): each burst opens its connections in the timed period (TCP, TLS, then the requests)';
    }),
  );
  return said.join('; ');
}

/** What the options of a run said about its requests (the load engine's resolved options). */
interface RequestOptionsSeen {
  method?: string;
  headers?: Record<string, string>;
  bodyFile?: string;
  bodySizeBytes?: number;
  timeoutMs?: number;
  connectTimeoutMs?: number;
  arrivals?: string;
}

/**
 * The request each run sent (when it is not a bare GET), the open-loop schedule, and the timeouts:
 * a timeout shorter than the tail turns slow responses into failures that leave the latency figures.
 */
function requestSettings(runs: RunResult[]): SettingRow[] {
  const rows: SettingRow[] = [];
  const opts = runs.map((r) => r.options as RequestOptionsSeen);
  const requests = distinct(
    opts.map((o) => {
      const parts = [o.method ?? 'GET'];
      const names = Object.keys(o.headers ?? {});
      if (names.length > 0) parts.push(`headers ${names.join(', ')}`);
      if (o.bodyFile) parts.push(`body from ${o.bodyFile}`);
      else if (o.bodySizeBytes !== undefined) parts.push(`body ${formatBytes(o.bodySizeBytes)} generated`);
      return parts.join(', ');
    }),
  );
  if (requests.some((x) => x !== 'GET')) rows.push({ name: 'requests', value: requests.join('; ') });
  const open = runs.filter((r) => r.schedule.mode === 'open');
  if (open.length > 0) {
    const rates = distinct(open.map((r) => r.schedule.rateRps ?? 0)).sort((a, b) => a - b);
    const arrivals = distinct(open.map((r) => r.schedule.arrivals ?? 'even')).join('/');
    rows.push({
      name: 'schedule',
      value: `open loop at ${rates.join(', ')} req/s (${arrivals} arrivals): latency from the intended send time${open.length < runs.length ? '; the other runs closed loop' : ''}`,
    });
  }
  const timeouts = distinct(
    opts.map(
      (o) =>
        `request ${o.timeoutMs === undefined ? 'default' : formatMs(o.timeoutMs)}, connect ${o.connectTimeoutMs === undefined ? 'default' : formatMs(o.connectTimeoutMs)}`,
    ),
  );
  rows.push({ name: 'timeouts', value: timeouts.join('; ') });
  return rows;
}

/** Settings of one run (bench). */
export function runSettings(run: RunResult): SettingRow[] {
  return settingsOf([run], run.target.embedded);
}

/** Settings of a comparison: over every run of every cell, per strategy where they differ. */
export function compareSettings(result: CompareResult): SettingRow[] {
  const rows = settingsOf(
    result.cells.flatMap((c) => c.runs),
    result.target.embedded,
  );
  const sh = result.sharding;
  if (sh) {
    // A fixed count (h2: one session) is per shard: N shards hold N of them.
    const fixed = result.axes.protocols.filter((p) => findStrategy(p)?.connections.fixed !== undefined);
    const each = fixed
      .map((p) => {
        const s = findStrategy(p)!;
        return `${p}: ${s.connections.fixed} ${s.connections.unit ?? 'connection'} per shard, ${s.connections.fixed! * sh.shards} in all`;
      })
      .join('; ');
    rows.unshift({
      name: 'shards',
      value: `${sh.shards} load processes, every run split among them and merged exactly (run ${sh.runId}, a run every ${formatMs(sh.slotMs)})${each ? `; ${each}` : ''}`,
    });
  }
  const lengths = runLengthText(result);
  if (lengths) rows.push({ name: 'run length', value: lengths });
  return rows;
}

/**
 * The timed runs' length over each link whose runs compare lengthened beyond --duration (the runs
 * record their own duration option): "500 ms asked; over rtt200ms 4 s at c=8, 64 and 6.6 s at c=1
 * (20 round trips and 30 requests a run at least, lengthened by default)", or undefined.
 */
function runLengthText(result: CompareResult): string | undefined {
  const asked = Number(result.options.durationMs);
  const by = new Map<string, Map<number, number[]>>();
  for (const c of result.cells)
    for (const r of c.runs) {
      const d = Number((r.options as { durationMs?: number }).durationMs);
      if (r.burst !== undefined || !(d > asked)) continue;
      const net = by.get(c.net) ?? new Map<number, number[]>();
      net.set(
        d,
        [...new Set([...(net.get(d) ?? []), c.concurrency])].sort((a, b) => a - b),
      );
      by.set(c.net, net);
    }
  if (by.size === 0) return undefined;
  const nets = [...by].map(
    ([net, ds]) =>
      `over ${net} ${[...ds].map(([d, levels]) => `${formatMs(d)} at c=${levels.join(', ')}`).join(' and ')}`,
  );
  return `${formatMs(asked)} asked; ${nets.join('; ')} (lengthened by default to ${MIN_RUN_ROUND_TRIPS} round trips of the link and ${MIN_RUN_REQUESTS} requests a run; --duration sets it)`;
}

function settingsOf(runs: RunResult[], embedded: boolean): SettingRow[] {
  const rows: SettingRow[] = [];
  if (runs.length === 0) return rows;
  // One row per strategy whose size is a setting (not a fixed count), in the registry's order; a
  // strategy this process has not registered comes last, its size called connections.
  const registered = strategyNames();
  const rank = (n: string) => (registered.includes(n) ? registered.indexOf(n) : registered.length);
  const names = distinct(runs.map((r) => r.transport.name)).sort((a, b) => rank(a) - rank(b));
  for (const name of names) {
    const s = findStrategy(name);
    if (s?.connections.fixed !== undefined) continue;
    const mine = runs.filter((r) => r.transport.name === name);
    const policy = mine[0]!.transport.policy;
    rows.push({
      name: `${name} ${s?.connections.unit ?? 'connection'}s`,
      value: `${perLevel(mine, (r) => r.transport.connections)}${policy ? ` (${policy})` : ''}`,
    });
  }
  const h2 = runs.filter((r) => r.transport.window);
  if (h2.length > 0) {
    rows.push({
      name: 'HTTP/2 windows',
      value: distinct(
        h2.map((r) => {
          const w = r.transport.window!;
          return `${w.preset} (${WINDOW_WHO[w.preset] ?? w.preset}): stream ${formatBytes(w.streamWindowBytes)}, connection ${formatBytes(w.connectionWindowBytes)}`;
        }),
      ).join('; '),
    });
    rows.push({
      name: 'HTTP/2 client',
      value: distinct(h2.map((r) => (r.transport.client === 'node' ? 'node:http2' : "h2lab's own"))).join(
        ', ',
      ),
    });
    const limits = distinct(h2.map((r) => r.connections.serverMaxConcurrentStreams));
    rows.push({
      name: 'server stream limit',
      value: limits
        .map((l) => (l === undefined ? 'none announced' : `SETTINGS_MAX_CONCURRENT_STREAMS ${l}`))
        .join(', '),
    });
  }
  // Nagle is TCP's: a run of QUIC strategies only has none.
  if (runs.some((r) => !r.transport.quic)) {
    rows.push({
      name: 'Nagle',
      value: embedded
        ? "off (TCP_NODELAY) on h2lab's sockets and on the fixture server's"
        : "off (TCP_NODELAY) on h2lab's sockets; the server's own setting is not visible from here",
    });
  }
  const quic = quicSetting(runs);
  if (quic) rows.push(quic);
  // What the runs recorded; an https:// run without a version (QUIC's handshake, or no connection
  // completed) is TLS all the same, never "cleartext".
  const tls = distinct(
    runs.map(
      (r) =>
        r.connections.tlsVersion ??
        (!/^https:/i.test(r.target.url)
          ? 'cleartext'
          : r.transport.quic
            ? 'TLSv1.3 (QUIC, RFC 9001)'
            : 'TLS (version not recorded: no connection completed)'),
    ),
  );
  rows.push({ name: 'TLS', value: tls.join(', ') });
  rows.push({ name: 'handshakes', value: handshakes(runs) });
  rows.push(...requestSettings(runs));
  const links = new Map<string, LinkInfo>();
  for (const r of runs) if (r.environment.link) links.set(r.environment.link.profile, r.environment.link);
  const path = runs.find((r) => r.environment.path)?.environment.path;
  if (path) rows.push({ name: 'path', value: pathText(path) });
  // The kernel's controller is TCP's: a QUIC run's is in its own line.
  const unlinkedCc = distinct(
    runs.filter((r) => !r.environment.link && !r.transport.quic).map((r) => r.environment.congestionControl),
  );
  if (unlinkedCc.length > 0 && unlinkedCc.some((x) => x !== undefined)) {
    const why =
      path === undefined || path.placement === 'loopback'
        ? 'loopback, so it hardly matters'
        : `no emulated link: the real path to the target, base RTT ${formatMs(path.baseRttMs)}`;
    rows.push({
      name: 'congestion control',
      value: `TCP ${unlinkedCc.filter(Boolean).join(', ')} (the host's default; ${why})`,
    });
  }
  for (const [name, l] of links) {
    rows.push({ name: `link ${name}`, value: linkSettingText(l, path) });
  }
  rows.push(...evidenceRows(runs));
  return rows;
}

/** Where the runs' evidence files are (`--capture`, `--keylog`, `--frames`) and what they hold. */
function evidenceRows(runs: RunResult[]): SettingRow[] {
  const rows: SettingRow[] = [];
  const captures = runs.flatMap((r) => (r.evidence?.capture ? [r.evidence.capture] : []));
  if (captures.length > 0) {
    const dirs = distinct(captures.map((c) => dirname(c.file)));
    const cut = captures.reduce((n, c) => n + c.truncatedPackets + c.packetsNotRecorded, 0);
    const dropped = captures.reduce((n, c) => n + c.dropped.loss + c.dropped.queue, 0);
    rows.push({
      name: 'packet captures',
      value: `${captures.length} pcapng ${captures.length === 1 ? 'file' : 'files'} in ${dirs.join(', ')}: the link as its relay saw it, each packet's fate in its comment (${dropped} marked dropped); ${cut === 0 ? 'nothing cut' : `${cut} packets cut by the snap length or the size cap`}`,
    });
  }
  const keyLogs = distinct(runs.flatMap((r) => (r.evidence?.keyLog ? [r.evidence.keyLog.file] : [])));
  if (keyLogs.length > 0) {
    rows.push({
      name: 'TLS key log',
      value: `${keyLogs.join(', ')}: decrypts the runs' TLS (tshark or Wireshark -o tls.keylog_file:FILE); anyone holding it can read that traffic`,
    });
  }
  const frames = distinct(runs.flatMap((r) => (r.evidence?.frames ? [r.evidence.frames.file] : [])));
  if (frames.length > 0)
    rows.push({
      name: 'HTTP/2 frame log',
      value: `${frames.join(', ')}: one JSON line per frame of h2lab's client`,
    });
  const qlogs = distinct(runs.flatMap((r) => (r.evidence?.qlog ? [r.evidence.qlog.dir] : [])));
  // The fixture's server wrote its side too where its readings carry what only its qlog has.
  const serverWrote = runs.some((r) =>
    r.connections.quic?.server?.perConnection.some((c) => c.initialCwndBytes !== undefined),
  );
  if (qlogs.length > 0)
    rows.push({
      name: 'qlog',
      value: `${qlogs.join(', ')}: one JSON-SEQ file per QUIC connection (qvis reads them)${serverWrote ? "; the fixture's server wrote its side while sending, which slows it, so h3's times include that cost" : ''}`,
    });
  return rows;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * QUIC as the runs recorded it: the binding; Retry as h2lab's own server reported it, and the
 * handshake's round trips as the client's stack timed them (handshake time over smoothed RTT, where
 * the RTT is long enough to count in); the congestion controller and how it is known, beside TCP's
 * on the links; the client's receive windows; the server's stream limit.
 */
function quicSetting(runs: RunResult[]): SettingRow | undefined {
  const q = runs.filter((r) => r.transport.quic);
  if (q.length === 0) return undefined;
  const t = q[0]!.transport.quic!;
  const servers = q.map((r) => r.connections.quic?.server).filter((x) => x !== undefined);
  const parts = [t.binding];
  const retry = distinct(servers.map((x) => x.retry));
  if (retry.length === 1)
    parts.push(
      retry[0]
        ? 'Retry on (--quic-retry): 2 round trips to set up each connection, like TCP + TLS 1.3'
        : 'no Retry: 1 round trip to set up each connection (QUIC + TLS 1.3; --quic-retry adds one), against 2 for TCP + TLS 1.3',
    );
  else if (retry.length === 0) parts.push("Retry: the server's choice (not h2lab's server: not visible)");
  // Over the link's RTT where there is one (a bulk transfer's queue inflates the smoothed RTT read at
  // the end), else the stack's own. The client's time includes the binding's set-up before its
  // first packet; the server's starts at the Initial it accepted (after a Retry, the second).
  const trips = q.flatMap((r) =>
    (r.connections.quic?.perConnection ?? [])
      .map((c) => ({ c, rtt: r.environment.link?.rttMs ?? c.rttMs }))
      .filter(({ rtt }) => rtt >= 5)
      .map(({ c, rtt }) => c.handshakeMs / rtt),
  );
  const own = q.flatMap((r) => r.connections.quic?.perConnection ?? []).map((c) => c.handshakeMs);
  if (own.length > 0) {
    const serverMs = servers.flatMap((x) => x.perConnection.map((c) => c.handshakeMs));
    parts.push(
      `handshake median ${formatMs(median(own))} by the client's stack${trips.length > 0 ? ` (${median(trips).toFixed(1)} round trips)` : ''}${serverMs.length > 0 ? `, ${formatMs(median(serverMs))} by the server's from the Initial it accepted` : ''}`,
    );
  }
  const cc = servers[0]?.congestionControl ?? t.congestionControl;
  const source = servers[0]?.congestionControlSource ?? t.congestionControlSource;
  const tcp = distinct(
    runs
      .filter((r) => r.environment.link)
      .map((r) => r.environment.link!.congestionControl ?? 'host default'),
  ).filter((c) => c !== cc);
  parts.push(
    `congestion control ${cc}${source ? ` (${source})` : ''}; --cc pins TCP only${tcp.length > 0 ? `: TCP ran ${tcp.join(', ')} on the links, so the two protocols did not run the same controller` : ''}`,
  );
  // Read from the server's qlog, where it wrote one: the sender's starting window, against TCP's 10.
  const initial = distinct(servers.flatMap((x) => x.perConnection.flatMap((c) => c.initialCwndBytes ?? [])));
  if (initial.length > 0)
    parts.push(
      `server's initial congestion window ${initial.map((b) => formatBytes(b)).join(', ')} (read from its qlog; TCP starts at 10 segments)`,
    );
  if (t.window)
    parts.push(
      `client windows stream ${formatBytes(t.window.streamWindowBytes)}, connection ${formatBytes(t.window.connectionWindowBytes)}`,
    );
  const streams = distinct(servers.map((x) => x.maxStreams));
  if (streams.length > 0) parts.push(`server stream limit initial_max_streams_bidi ${streams.join(', ')}`);
  return { name: 'QUIC', value: parts.join('; ') };
}

/** The rows as aligned text lines, each prefixed by `indent`. */
export function settingsText(rows: SettingRow[], indent = '  ', width = Number.POSITIVE_INFINITY): string[] {
  const w = Math.max(0, ...rows.map((r) => r.name.length));
  const hang = ' '.repeat(indent.length + w + 2);
  return rows.map((r) => {
    const line = `${indent}${r.name.padEnd(w)}  ${r.value}`;
    if (line.length <= width) return line;
    // The value wraps under itself, its name alone in the first column.
    return `${indent}${r.name.padEnd(w)}  ${wrapText(r.value, width, hang).slice(hang.length)}`;
  });
}
