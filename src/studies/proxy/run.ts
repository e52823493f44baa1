/**
 * `h2lab study proxy`: the reverse-proxy audit of report 001. Debian's nginx, started by h2lab with a
 * config generated into the study's temp dir, in front of the fixture server — over a Unix domain
 * socket on the same host by default, as the report's nginx reached its uvicorn (`--upstream tcp`:
 * over TCP on 127.0.0.1, or behind an emulated link with `--upstream-rtt`) — in four configurations — upstream keep-alive off/on × proxy
 * buffers small (nginx's defaults) / large. Through each: a 2.7 MB response and small chunks, driven
 * by h2lab's own load engine over HTTP/1.1 and HTTP/2 to nginx. Shown per configuration: the
 * upstream connections the fixture accepted per request (its /metrics), the responses nginx spooled
 * to its proxy_temp_path (its own "buffered to a temporary file" warnings, and the bytes seen in the
 * files), the time of one response and the speedup of the fixed configuration, and what `h2lab probe`
 * says about each.
 */
import { mkdirSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { bootstrapRatio, decide, keptRuns, sizeWorkload } from '../../compare/index.ts';
import { formatBytes, invalidOption, medianInterpolated, parseBytes } from '../../core/index.ts';
import type {
  CellResult,
  CompareResult,
  ProbeResult,
  StudyFinding,
  StudyResult,
  StudySection,
} from '../../model/index.ts';
import { checkNetAvailable, createLink } from '../../net/index.ts';
import { probe } from '../../probe/index.ts';
import { type MetricsSnapshot, startFixtureTarget } from '../../server/index.ts';
import { CERT_FILES, generateCertificates, writeCertificateSet } from '../../tls/index.ts';
import { baselineStrategy, multiplexedStrategy } from '../../transport/index.ts';
import { agreement, type Direction, direction, directionText } from '../claims.ts';
import { compareCell } from '../compare-cell.ts';
import { Evidence, evidenceNumber, makeFinding, notMeasured } from '../findings.ts';
import { checkNginx, freePort, startNginx } from '../nginx.ts';
import { defineStudy, type Rederived } from '../study.ts';
import { intervalText, medianOf, rounded } from '../table.ts';
import { PROXY_STUDY } from './descriptor.ts';

/** The report's response: 2.7 MB (taken as MiB: 2.7 × 2^20 bytes). */
const LARGE_BYTES = 2_831_155;
const CHUNKS = 64;

/**
 * The report's numbers: before the fix one slice took 1.36 s over HTTP/1.1 and 0.32 s over HTTP/2
 * (4.3×); both fixes took HTTP/1.1 to 0.22 s (6×), with HTTP/2 at 0.24 s.
 */
const REPORT = { beforeS: 1.36, afterS: 0.22, beforeH2S: 0.32, afterH2S: 0.24 };

/** nginx's buffers, as the two configurations set them. */
const BUFFERS = {
  /** nginx's defaults on x86-64 (a memory page each): 32 KiB in memory per response. */
  small: { buffers: '8 4k', bufferSize: '4k', busy: '8k', memoryBytes: 8 * 4096 },
  /** 2 MiB in memory per response: most, not all, of the 2.7 MB response. */
  large: { buffers: '16 128k', bufferSize: '128k', busy: '256k', memoryBytes: 16 * 128 * 1024 },
} as const;

/** One nginx configuration of the four. */
interface ProxyConfig {
  id: string;
  keepalive: boolean;
  buffers: keyof typeof BUFFERS;
}

const CONFIGS: readonly ProxyConfig[] = [
  { id: 'ka-off+small', keepalive: false, buffers: 'small' },
  { id: 'ka-on+small', keepalive: true, buffers: 'small' },
  { id: 'ka-off+large', keepalive: false, buffers: 'large' },
  { id: 'ka-on+large', keepalive: true, buffers: 'large' },
];
/** The report's broken configuration and its fix. */
const BROKEN = CONFIGS[0]!;
const FIXED = CONFIGS[3]!;

/** The grid: full mode, and the quick one the tests run (under two minutes on two cores). */
const GRID = {
  full: { concurrency: [1, 8], runs: 7, durationMs: 1000 },
  quick: { concurrency: [4], runs: 3, durationMs: 400 },
} as const;

/**
 * nginx's socket send buffer towards the client (`listen … sndbuf=`), bytes. On loopback the
 * kernel's autotuned send buffer (up to net.ipv4.tcp_wmem's 4 MiB maximum) takes most of a 2.7 MB
 * response at once, so nginx seldom has to hold it: seen here, no spooling for 36 such responses
 * fetched one at a time with curl, and 5–19% of them spooled under the quick grid's 4 in flight,
 * against 90–100% with 64 KiB. A client at the far end of a WAN drains the socket at the path's
 * rate; a 64 KiB buffer stands in for that path.
 */
const DEFAULT_SNDBUF_BYTES = 64 * 1024;

/** Upstream connections nginx keeps idle per worker (`keepalive` in the upstream block). */
const UPSTREAM_KEEPALIVE = 32;

interface ProxyOptions {
  concurrency: number[];
  runs: number;
  durationMs: number;
  sndbufBytes: number;
  /** An emulated link between nginx and the fixture (root): its round trip, ms; 0 = loopback. */
  upstreamRttMs: number;
  /** How nginx reaches the fixture: a Unix domain socket (the report's) or TCP. */
  upstream: 'unix' | 'tcp';
  nginx?: string;
}

function resolve(o: Partial<ProxyOptions>, quick: boolean): ProxyOptions {
  const g = quick ? GRID.quick : GRID.full;
  return {
    concurrency: o.concurrency ?? [...g.concurrency],
    runs: o.runs ?? g.runs,
    durationMs: o.durationMs ?? g.durationMs,
    sndbufBytes: o.sndbufBytes ?? DEFAULT_SNDBUF_BYTES,
    upstreamRttMs: o.upstreamRttMs ?? 0,
    upstream: o.upstream ?? ((o.upstreamRttMs ?? 0) > 0 ? 'tcp' : 'unix'),
    ...(o.nginx ? { nginx: o.nginx } : {}),
  };
}

/** The `server { … }` of one configuration, listening with TLS for HTTP/1.1 and h2 by ALPN. */
function serverBlock(
  c: ProxyConfig,
  port: number,
  dir: string,
  sndbufBytes: number,
  upstream: string,
): string {
  const b = BUFFERS[c.buffers];
  const sndbuf = sndbufBytes > 0 ? ` sndbuf=${sndbufBytes}` : '';
  // Without `keepalive` in an upstream block nginx speaks HTTP/1.0 with "Connection: close" to the
  // backend: one TCP connection per request. Reuse needs the pool, HTTP/1.1 and an empty
  // Connection header (nginx's own documentation of ngx_http_upstream_module `keepalive`).
  const pass = c.keepalive
    ? `proxy_pass http://fixture_ka; proxy_http_version 1.1; proxy_set_header Connection "";`
    : `proxy_pass http://${upstream.startsWith('unix:') ? 'fixture_plain' : upstream};`;
  return `
  server {
    listen 127.0.0.1:${port} ssl http2${sndbuf};
    error_log ${join(dir, `${c.id}.error.log`)} warn;
    proxy_temp_path ${join(dir, `${c.id}.temp`)};
    proxy_buffers ${b.buffers}; proxy_buffer_size ${b.bufferSize}; proxy_busy_buffers_size ${b.busy};
    location / { ${pass} }
  }`;
}

/** What nginx spooled for one configuration while a cell ran. */
interface Spool {
  /**
   * nginx's "an upstream response is buffered to a temporary file" warnings: one per spooled
   * response, by the fixture route it asked for.
   */
  responses: { bytes: number; chunks: number };
  /** Temp files seen open in nginx's workers, and the bytes seen in them (see {@link watchSpool}). */
  files: number;
  bytesSeen: number;
  /** The first `[error]` line nginx logged for this configuration, if any. */
  firstError?: string;
}

/** How often the workers' open temp files are sampled, ms. */
const SPOOL_SAMPLE_MS = 10;

/**
 * Watches one configuration's spooling from now on: its error log (nginx warns once per response it
 * buffers to a temporary file), and the temp files open in nginx's workers. nginx unlinks a proxy
 * temp file as soon as it creates it and keeps only the descriptor, so the directory is always
 * empty; the files are read through /proc/PID/fd every {@link SPOOL_SAMPLE_MS} ms, keeping each
 * one's largest size seen — a lower bound of what was written, as the last writes of a file can
 * fall between two samples.
 */
function watchSpool(dir: string, c: ProxyConfig, workers: () => number[]): { stop: () => Spool } {
  const temp = `${join(dir, `${c.id}.temp`)}/`;
  const log = join(dir, `${c.id}.error.log`);
  const logAt = sizeOf(log);
  const seen = new Map<string, number>();
  const sample = () => {
    for (const pid of workers()) {
      let fds: string[];
      try {
        fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        try {
          const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
          if (!target.startsWith(temp)) continue;
          const size = statSync(`/proc/${pid}/fd/${fd}`).size;
          seen.set(target, Math.max(seen.get(target) ?? 0, size));
        } catch {
          // Closed between the listing and the read.
        }
      }
    }
  };
  const timer = setInterval(sample, SPOOL_SAMPLE_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      let text = '';
      try {
        text = readFileSync(log).subarray(logAt).toString('utf8');
      } catch {
        // No log yet: nginx wrote nothing for this configuration.
      }
      const lines = text.split('\n');
      const spooled = lines.filter((l) => l.includes('buffered to a temporary file'));
      const firstError = lines.find((l) => l.includes('[error]'));
      return {
        responses: {
          bytes: spooled.filter((l) => l.includes('GET /bytes/')).length,
          chunks: spooled.filter((l) => l.includes('GET /chunks/')).length,
        },
        files: seen.size,
        bytesSeen: [...seen.values()].reduce((a, b) => a + b, 0),
        ...(firstError ? { firstError } : {}),
      };
    },
  };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

const sum = (row: Record<string, number>) => Object.values(row).reduce((a, b) => a + b, 0);

/** Connections the fixture accepted (every listener, every protocol). */
const accepted = (m: MetricsSnapshot) => sum(m.connections.total.plain) + sum(m.connections.total.tls);
/** Requests for the study's routes (not /metrics, which the study reads itself). */
const served = (m: MetricsSnapshot) => sum(m.requests.bytes) + sum(m.requests.chunks);

/** Upstream churn of one configuration over its load cell. */
interface Churn {
  requests: number;
  /** Of which for the 2.7 MB response, and for chunks. */
  large: number;
  chunks: number;
  connections: number;
  perRequest: number;
}

/** The probe's account of one configuration. */
interface ProbeView {
  keepAliveHonoured: boolean | null;
  /** Connections the fixture accepted for the probe's keep-alive requests (probe's upstream check). */
  upstreamConnections: number | null;
  upstreamRequests: number | null;
  upstreamReused: boolean | null;
  large: string | null;
  largeDetail: string | null;
  /** Findings at level warn, by id. */
  warnings: string[];
}

function probeView(r: ProbeResult): ProbeView {
  const up = r.keepAlive?.upstream;
  return {
    keepAliveHonoured: r.keepAlive?.honoured ?? null,
    upstreamConnections: up?.connections ?? null,
    upstreamRequests: up?.requests ?? null,
    upstreamReused: up?.reused ?? null,
    large: r.large?.verdict ?? null,
    largeDetail: r.large?.detail ?? null,
    warnings: r.findings.filter((f) => f.level === 'warn').map((f) => f.id),
  };
}

/** Everything measured for one configuration. */
interface ConfigResult {
  config: ProxyConfig;
  url: string;
  churn?: Churn;
  spool?: Spool;
  probe?: ProbeView;
  /**
   * The per-run p50 latencies (ms) of each cell's kept runs, by {@link timesKey}: what every time,
   * speedup and sentence of the study is computed from (kept in the result's data, so a saved run's
   * words can be derived again without its comparisons).
   */
  times?: Record<string, number[]>;
}

/** The key of one cell's times: workload, concurrency, protocol. */
const timesKey = (workload: string, concurrency: number, protocol: string) =>
  `${workload}/c${concurrency}/${protocol}`;

/** Each cell's per-run p50s (ms) over its kept runs, from a comparison. */
function timesOf(compare: CompareResult): Record<string, number[]> {
  return Object.fromEntries(
    compare.cells.map((cell: CellResult) => [
      timesKey(cell.workload, cell.concurrency, cell.protocol),
      keptRuns(cell).map((r) => r.latencyMs.p50),
    ]),
  );
}

/** The per-run p50 latencies (ms) of one configuration's cell; none when it was not measured. */
function p50s(
  r: ConfigResult | undefined,
  workload: string,
  concurrency: number,
  protocol: string,
): number[] {
  return r?.times?.[timesKey(workload, concurrency, protocol)] ?? [];
}

const med = (xs: number[]) => medianOf(xs);
const round = (x: number | undefined, d = 1) => rounded(x, d);

/** Broken over fixed p50 (above 1: the fix is faster), with its bootstrap interval. */
function speedup(broken: number[], fixed: number[], seed: number) {
  const i = bootstrapRatio(broken, fixed, { seed });
  if (!Number.isFinite(i.ratio)) return undefined;
  const { outcome } = decide(broken, fixed, i, { higherIsBetter: true });
  const decided: Direction = outcome === 'better' ? 'above' : outcome === 'worse' ? 'below' : 'either';
  return { ...i, decided };
}

const ratioText = (i: ReturnType<typeof speedup>) => intervalText(i, { unit: '×' });

function configSection(results: ConfigResult[], o: ProxyOptions): StudySection {
  return {
    id: 'configurations',
    title: 'nginx in front of the fixture: upstream churn, spooling, and what the probe flags',
    note: `Connections per request: connections the fixture accepted over requests it served during the load cell (/metrics before and after, the after-read's own connection subtracted). Spooled: nginx's "buffered to a temporary file" warnings (one per response written to proxy_temp_path) over the responses of that kind; temp files and bytes seen: the files open in nginx's worker sampled every ${SPOOL_SAMPLE_MS} ms through /proc, each at its largest size seen (a lower bound). nginx: 1 worker, TLS with h2 by ALPN, listen sndbuf=${o.sndbufBytes > 0 ? formatBytes(o.sndbufBytes) : 'kernel default'}, upstream keepalive ${UPSTREAM_KEEPALIVE}. Probe: h2lab probe --large /bytes/${LARGE_BYTES} against each configuration.`,
    table: {
      columns: [
        { key: 'config', label: 'configuration' },
        { key: 'keepalive', label: 'upstream keep-alive' },
        { key: 'buffers', label: 'proxy_buffers' },
        { key: 'perRequest', label: 'conns/request' },
        { key: 'requests', label: 'requests' },
        { key: 'spooledLarge', label: 'spooled 2.7 MB' },
        { key: 'spooledChunks', label: 'spooled chunks' },
        { key: 'spoolFiles', label: 'temp files seen' },
        { key: 'spoolBytes', label: 'bytes seen', unit: 'MiB' },
        { key: 'probeUpstream', label: 'probe: upstream' },
        { key: 'probeLarge', label: 'probe: --large' },
        { key: 'probeFlags', label: 'probe warns' },
      ],
      rows: results.map((r) => ({
        config: r.config.id,
        keepalive: r.config.keepalive ? 'on' : 'off',
        buffers: BUFFERS[r.config.buffers].buffers,
        perRequest: round(r.churn?.perRequest, 2),
        requests: r.churn?.requests ?? null,
        spooledLarge: r.spool && r.churn ? `${r.spool.responses.bytes}/${r.churn.large}` : null,
        spooledChunks: r.spool && r.churn ? `${r.spool.responses.chunks}/${r.churn.chunks}` : null,
        spoolFiles: r.spool?.files ?? null,
        spoolBytes: r.spool ? round(r.spool.bytesSeen / 2 ** 20, 1) : null,
        probeUpstream: r.probe
          ? r.probe.upstreamReused === null
            ? 'not seen'
            : `${r.probe.upstreamConnections} conns/${r.probe.upstreamRequests} req`
          : null,
        probeLarge: r.probe?.large ?? null,
        probeFlags: r.probe ? r.probe.warnings.join(', ') || 'none' : null,
      })),
    },
  };
}

function timeSection(
  results: ConfigResult[],
  workload: { id: string; label: string },
  o: ProxyOptions,
  seed: number,
): StudySection {
  const h1 = baselineStrategy().name;
  const h2 = multiplexedStrategy('one')!.name;
  const broken = results.find((r) => r.config.id === BROKEN.id);
  const rows = [];
  for (const c of o.concurrency)
    for (const r of results) {
      const a = p50s(r, workload.id, c, h1);
      const b = p50s(r, workload.id, c, h2);
      const base1 = p50s(broken, workload.id, c, h1);
      const base2 = p50s(broken, workload.id, c, h2);
      rows.push({
        c,
        config: r.config.id,
        http1: round(med(a)),
        http2: round(med(b)),
        h1Speedup: r === broken ? null : ratioText(speedup(base1, a, seed)),
        h2Speedup: r === broken ? null : ratioText(speedup(base2, b, seed)),
      });
    }
  return {
    id: `time-${workload.id}`,
    title: `${workload.label}: time of one response through each configuration`,
    note: `Median over ${o.runs - 1} kept runs (the first discarded) of each run's p50 response time, ${o.durationMs} ms runs, HTTP/1.1 with a connection per request in flight, HTTP/2 on one session. Speedup: ${BROKEN.id}'s time over this configuration's, with its 95% bootstrap interval (above 1: faster than the broken configuration).`,
    table: {
      columns: [
        { key: 'c', label: 'concurrency' },
        { key: 'config', label: 'configuration' },
        { key: 'http1', label: 'HTTP/1.1', unit: 'ms' },
        { key: 'http2', label: 'HTTP/2', unit: 'ms' },
        { key: 'h1Speedup', label: 'h1 speedup (95% CI)' },
        { key: 'h2Speedup', label: 'h2 speedup (95% CI)' },
      ],
      rows,
    },
  };
}

function summarySection(results: ConfigResult[], o: ProxyOptions, seed: number): StudySection {
  const h1 = baselineStrategy().name;
  const h2 = multiplexedStrategy('one')!.name;
  const broken = results.find((r) => r.config.id === BROKEN.id);
  const fixed = results.find((r) => r.config.id === FIXED.id);
  const big = sizeWorkload(LARGE_BYTES).id;
  const rows = [];
  for (const c of o.concurrency)
    for (const p of [h1, h2]) {
      const a = p50s(broken, big, c, p);
      const b = p50s(fixed, big, c, p);
      const s = speedup(a, b, seed);
      rows.push({
        c,
        protocol: p,
        before: round(med(a), 1),
        after: round(med(b), 1),
        speedup: s ? round(s.ratio, 2) : null,
        ci: s ? `${s.lo.toFixed(2)}–${s.hi.toFixed(2)}` : null,
      });
    }
  return {
    id: 'summary',
    title: `The fix, beside the report: ${BROKEN.id} → ${FIXED.id}, one 2.7 MB response`,
    note: `Before: no upstream keep-alive and nginx’s default buffers; after: both fixed. Medians of per-run p50s, ${whereOf(o)}. The report measured its production proxy (nginx → uvicorn over a Unix socket) from a client over the internet; its client and RTT were not recorded.`,
    table: {
      columns: [
        { key: 'c', label: 'concurrency' },
        { key: 'protocol', label: 'client → nginx' },
        { key: 'before', label: 'before', unit: 'ms' },
        { key: 'after', label: 'after', unit: 'ms' },
        { key: 'speedup', label: 'speedup', unit: '×' },
        { key: 'ci', label: '95% CI' },
      ],
      rows,
    },
    reference: {
      source: 'report 001, reverse-proxy audit (one 2.68 MB slice from cat2.cloud)',
      table: {
        columns: [
          { key: 'protocol', label: 'client → nginx' },
          { key: 'before', label: 'before', unit: 's' },
          { key: 'after', label: 'after', unit: 's' },
          { key: 'speedup', label: 'speedup', unit: '×' },
        ],
        rows: [
          {
            protocol: 'HTTP/1.1',
            before: REPORT.beforeS,
            after: REPORT.afterS,
            speedup: Math.round((REPORT.beforeS / REPORT.afterS) * 10) / 10,
          },
          {
            protocol: 'HTTP/2',
            before: REPORT.beforeH2S,
            after: REPORT.afterH2S,
            speedup: Math.round((REPORT.beforeH2S / REPORT.afterH2S) * 10) / 10,
          },
        ],
      },
      note: 'Its causes: no upstream keep-alive (a new upstream socket per request) and small proxy buffers (the 2.7 MB response spooled to disk).',
    },
  };
}

/** Where the fixture was, for the notes; its round trip recorded in `ev` when a finding says it. */
const whereOf = (o: ProxyOptions, ev?: Evidence) =>
  o.upstreamRttMs > 0
    ? `the fixture behind a ${ev ? ev.ms('upstreamRttMs', o.upstreamRttMs) : `${o.upstreamRttMs} ms`} link`
    : o.upstream === 'unix'
      ? 'the client on loopback, nginx → the fixture over a Unix socket'
      : 'on loopback';

/** Broken over this configuration in words, from the interval: "2.7× faster", "2.8× slower", or neither. */
function speedWords(i: NonNullable<ReturnType<typeof speedup>>): string {
  return directionText(i, {
    above: (x) => `${x} faster`,
    below: (x) => `${x} slower`,
    either: 'not distinguishable',
  });
}

const share = (n: number, of: number) => (of > 0 ? `${Math.round((100 * n) / of)}%` : '–');

/** The explanation's paragraphs, from what was measured: churn, spooling, each fix's speedup, the probe. */
function explain(results: ConfigResult[], o: ProxyOptions, seed: number): string[] {
  const out: string[] = [];
  const by = (id: string) => results.find((r) => r.config.id === id);
  const off = results.filter((r) => !r.config.keepalive && r.churn);
  const on = results.filter((r) => r.config.keepalive && r.churn);
  if (off.length && on.length) {
    const offPer = medianInterpolated(off.map((r) => r.churn!.perRequest));
    const onPer = medianInterpolated(on.map((r) => r.churn!.perRequest));
    const counts = (rs: ConfigResult[]) =>
      rs.map((r) => `${r.churn!.connections} for ${r.churn!.requests}`).join(', ');
    out.push(
      offPer > 0.5 && onPer < 0.5
        ? `Without upstream keep-alive nginx opened ${offPer.toFixed(2)} connections to the fixture per request (${counts(off)}): it speaks HTTP/1.0 with "Connection: close" upstream, so every request pays a TCP handshake and a new socket at the backend, however long the client keeps its own connection. With keepalive ${UPSTREAM_KEEPALIVE}, HTTP/1.1 and an empty Connection header it opened ${onPer.toFixed(2)} per request (${counts(on)}): the pool is reused.`
        : `The upstream connections do not show the expected split: ${offPer.toFixed(2)} per request without keep-alive (${counts(off)}), ${onPer.toFixed(2)} with it (${counts(on)}); read the counters before the times.`,
    );
  }
  const spooled = results.filter((r) => r.spool && r.churn);
  if (spooled.length) {
    const words = spooled.map(
      (r) =>
        `${r.config.id} ${share(r.spool!.responses.bytes, r.churn!.large)} of the 2.7 MB responses and ${share(r.spool!.responses.chunks, r.churn!.chunks)} of the chunks (${r.spool!.files} temp files, ≥ ${formatBytes(r.spool!.bytesSeen)} seen)`,
    );
    const rate = (b: keyof typeof BUFFERS) => {
      const rs = spooled.filter((r) => r.config.buffers === b);
      const n = rs.reduce((a, r) => a + r.spool!.responses.bytes, 0);
      const of = rs.reduce((a, r) => a + r.churn!.large, 0);
      return of > 0 ? n / of : 0;
    };
    const small = rate('small');
    const large = rate('large');
    const total = spooled.reduce((a, r) => a + r.spool!.responses.bytes + r.spool!.responses.chunks, 0);
    const whole = `${formatBytes(BUFFERS.large.memoryBytes)} in memory does not hold 2.7 MB whole`;
    const compared =
      large === 0 && small > 0
        ? `the large buffers kept every 2.7 MB response in memory (${share(small, 1)} spooled with the defaults)`
        : large < small * 0.9
          ? `the large buffers cut the share of spooled 2.7 MB responses from ${share(small, 1)} to ${share(large, 1)}, not to none: ${whole}`
          : `the large buffers did not cut it (${share(small, 1)} of the 2.7 MB responses with the defaults, ${share(large, 1)} with them): ${whole} either`;
    out.push(
      total === 0
        ? `nginx spooled nothing to its temp path in any configuration (${words.join('; ')}): the client drained each response faster than the backend filled nginx's buffers${o.sndbufBytes > 0 ? `, even through a ${formatBytes(o.sndbufBytes)} socket send buffer` : ' (the kernel’s socket buffers took the whole response)'}, so buffer sizes did not matter.`
        : `nginx spooled responses to disk: ${words.join('; ')}. A response larger than nginx's in-memory buffers (${formatBytes(BUFFERS.small.memoryBytes)} with the defaults, ${formatBytes(BUFFERS.large.memoryBytes)} with the large ones) that the client drains slower than the backend sends is written to proxy_temp_path and read back; ${compared}.`,
    );
  }
  const big = sizeWorkload(LARGE_BYTES).id;
  const broken = by(BROKEN.id);
  const c = o.concurrency.at(-1)!;
  if (broken?.times) {
    const parts: string[] = [];
    for (const p of [baselineStrategy().name, multiplexedStrategy('one')!.name]) {
      const base = p50s(broken, big, c, p);
      const each = results
        .filter((r) => r !== broken && r.times)
        .map((r) => {
          const t = p50s(r, big, c, p);
          const s = speedup(base, t, seed);
          return s ? `${r.config.id} ${med(t)!.toFixed(1)} ms, ${speedWords(s)}` : undefined;
        })
        .filter(Boolean);
      if (each.length && base.length)
        parts.push(`over ${p}, from ${med(base)!.toFixed(1)} ms with ${BROKEN.id}: ${each.join(', ')}`);
    }
    const fixedS = speedup(
      p50s(broken, big, c, baselineStrategy().name),
      p50s(by(FIXED.id), big, c, baselineStrategy().name),
      seed,
    );
    const where =
      o.upstreamRttMs > 0
        ? `with the backend ${o.upstreamRttMs} ms away, where each new upstream connection adds its handshake's round trip`
        : o.upstream === 'unix'
          ? "with nginx reaching the fixture over a Unix socket on the same host, as the report's did, where a new upstream connection and a temp-file write cost only what this machine's CPU and page cache charge"
          : "on loopback, where a backend handshake and a temp-file write cost only what this machine's CPU and page cache charge";
    const reportX = REPORT.beforeS / REPORT.afterS;
    const both = fixedS
      ? ` Both fixes together, over HTTP/1.1: ${directionText(fixedS, {
          above: (x) =>
            `${x} faster, ${agreement(reportX, fixedS.ratio, 0.25).verdict === 'agrees' ? 'close to' : fixedS.ratio < reportX ? 'less than' : 'more than'} the report’s 6×`,
          below: (x) => `${x} slower, the opposite of the report’s 6×`,
          either: 'no difference the runs could show',
        })}, ${where}.`
      : '';
    if (parts.length)
      out.push(
        `The report saw 6× (1.36 s → 0.22 s) from both fixes. One 2.7 MB response at concurrency ${c} here, ${parts.join('; ')}.${both}`,
      );
  }
  const fixedR = by(FIXED.id);
  if (broken?.churn && fixedR?.churn && broken.churn.requests > 0) {
    // Every configuration ran the same cells for the same measured time: requests served is its
    // throughput over all of them.
    const x = fixedR.churn.requests / broken.churn.requests;
    out.push(
      `In the same measured time (${o.runs} runs of ${o.durationMs} ms per cell, the same cells) nginx served ${broken.churn.requests} requests through ${BROKEN.id} and ${fixedR.churn.requests} through ${FIXED.id}: ${x >= 1 ? `${x.toFixed(1)}× the throughput` : `${(1 / x).toFixed(1)}× less`} with both fixes, all workloads and protocols together.`,
    );
  }
  const probed = results.filter((r) => r.probe);
  if (probed.length) {
    const flagged = (r: ConfigResult) => r.probe!.upstreamReused === false;
    const noKa = probed.filter((r) => !r.config.keepalive);
    const caught = noKa.filter(flagged).length;
    const falseAlarms = probed.filter((r) => r.config.keepalive && flagged(r)).length;
    const unseen = probed.filter((r) => r.probe!.upstreamReused === null).length;
    const clientKa = probed.every((r) => r.probe!.keepAliveHonoured === true);
    const lates = probed.filter((r) => r.probe!.large === 'late').map((r) => r.config.id);
    const spooledAny = results.some((r) => (r.spool?.responses.bytes ?? 0) > 0);
    out.push(
      `h2lab probe: its HTTP/1.1 keep-alive check ${clientKa ? 'passed against every configuration — nginx keeps the client’s connection whatever it does upstream, so that check alone cannot see the fault' : 'failed against some configuration (see the table)'}; its upstream check (the h2lab origin’s connection counter, read through the proxy) flagged ${caught} of ${noKa.length} configurations without upstream keep-alive${falseAlarms ? ` and, wrongly, ${falseAlarms} with it` : ' and none with it'}${unseen ? `, and could not read the origin's counters in ${unseen}` : ''}. Its --large timing called the 2.7 MB response ${[...new Set(probed.map((r) => r.probe!.large ?? 'not timed'))].join(' / ')}${lates.length ? ` (late through ${lates.join(', ')})` : ''}: ${lates.length ? 'a late first body byte is what a proxy holding the response looks like from the client' : spooledAny ? 'nginx spools the part of a response its buffers cannot hold while it already sends the start, so the first byte is not late and the client cannot tell; only nginx’s side (its warnings and temp files, above) shows the spooling' : 'nothing was late, and nothing was spooled for it to see'}.`,
    );
  }
  return out;
}

// --- row by row against the report ----------------------------------------------------------

/** Bytes nginx can hold in memory for one response: proxy_buffers plus proxy_buffer_size. */
function memoryFor(b: keyof typeof BUFFERS): number {
  const x = BUFFERS[b];
  return x.memoryBytes + parseBytes(x.bufferSize, 'proxy_buffer_size');
}

/**
 * After both fixes, HTTP/1.1 against HTTP/2 ("0.22 s against 0.24 s": parity), and the report's
 * other nginx settings this study does not vary.
 */
function afterFixRows(f1: number | undefined, f2: number | undefined): StudyFinding[] {
  const out: StudyFinding[] = [];
  {
    const ev = new Evidence();
    const reportGap = REPORT.afterS / REPORT.afterH2S;
    out.push(
      f1 !== undefined && f2 !== undefined
        ? makeFinding({
            id: 'after-parity',
            section: 'summary',
            row: 'After both fixes, HTTP/1.1 against HTTP/2 (“0.22 s against 0.24 s”)',
            report: `h1/h2 ${ev.x('reportRatio', reportGap)} (${ev.s('reportH1S', REPORT.afterS)} against ${ev.s('reportH2S', REPORT.afterH2S)})`,
            measured: `h1/h2 ${ev.x('ratio', f1 / f2)} (${ev.ms('h1Ms', f1)} against ${ev.ms('h2Ms', f2)})`,
            reference: reportGap,
            value: f1 / f2,
            tolerance: 0.15,
            ratio: true,
            explain: () => undefined,
            unexplained:
              'the report’s parity is a client over the internet; here both protocols end at the same nginx on this machine, and what separates them is each client’s CPU per byte, which this row does not break down',
            ev,
          })
        : notMeasured(
            {
              id: 'after-parity',
              section: 'summary',
              row: 'After both fixes, HTTP/1.1 against HTTP/2',
              report: 'h1/h2 0.22 s against 0.24 s',
              ev,
            },
            'not measured: the fixed configuration did not finish',
          ),
    );
  }
  out.push(
    notMeasured(
      {
        id: 'tcp-nodelay',
        row: 'tcp_nodelay / tcp_nopush (the report’s other nginx settings)',
        report: 'named among the settings checked',
        ev: new Evidence(),
      },
      'not measured here, because the four configurations vary upstream keep-alive and proxy buffers only; nginx’s own defaults (tcp_nodelay on, tcp_nopush off) stay as they are in all of them',
      'no configuration varies them',
    ),
  );
  return out;
}

/** The report's figures, each answered with this run's at the largest concurrency. */
function proxyFindings(results: ConfigResult[], o: ProxyOptions, seed: number): StudyFinding[] {
  const out: StudyFinding[] = [];
  const by = (id: string) => results.find((r) => r.config.id === id);
  const big = sizeWorkload(LARGE_BYTES).id;
  const c = o.concurrency.at(-1)!;
  const h1 = baselineStrategy().name;
  const h2 = multiplexedStrategy('one')!.name;
  const broken = by(BROKEN.id);
  const fixed = by(FIXED.id);
  const t = (r: ConfigResult | undefined, p: string) => med(p50s(r, big, c, p));
  const where = (ev: Evidence) => whereOf(o, ev);
  const churn = (ev: Evidence) =>
    broken?.churn && fixed?.churn
      ? `nginx opened ${ev.d2('brokenConnsPerRequest', broken.churn.perRequest)} upstream connections a request before the fix and ${ev.d2('fixedConnsPerRequest', fixed.churn.perRequest)} after`
      : 'the upstream connections were not counted';
  // 1. The before-fix times and the protocol gap.
  const b1 = t(broken, h1);
  const b2 = t(broken, h2);
  for (const [id, p, ref, value] of [
    ['before-h1', 'HTTP/1.1', REPORT.beforeS, b1],
    ['before-h2', 'HTTP/2', REPORT.beforeH2S, b2],
  ] as const) {
    const ev = new Evidence();
    out.push(
      makeFinding({
        id,
        section: 'summary',
        row: `Before the fix, ${p}: one 2.7 MB response`,
        report: ev.s('reportS', ref),
        measured:
          value === undefined
            ? 'not measured'
            : `${ev.ms('ms', value)} (${where(ev)}, ${ev.n('concurrency', c)} in flight)`,
        ...(value !== undefined ? { reference: ref * 1000, value } : {}),
        explain: () => undefined,
        unexplained: `the report's time is a client over the internet to a production proxy, whose round trip and bandwidth it did not record; this run has no such path (${where(ev)}), so its absolute times say nothing about the report's`,
        ev,
      }),
    );
  }
  if (b1 !== undefined && b2 !== undefined) {
    const ev = new Evidence();
    const gap = b1 / b2;
    const reportGap = REPORT.beforeS / REPORT.beforeH2S;
    out.push(
      makeFinding({
        id: 'before-gap',
        section: 'summary',
        row: 'Before the fix, HTTP/1.1 against HTTP/2 (“HTTP/1.1 ~4.3× slower”)',
        report: `h1/h2 ${ev.x('reportGap', reportGap)} (${ev.s('reportH1S', REPORT.beforeS)} against ${ev.s('reportH2S', REPORT.beforeH2S)})`,
        measured: `h1/h2 ${ev.x('gap', gap)} (${ev.ms('h1Ms', b1)} against ${ev.ms('h2Ms', b2)})`,
        reference: reportGap,
        value: gap,
        tolerance: 0.2,
        ratio: true,
        explain: () => undefined,
        unexplained: `both faults are on nginx's upstream side, which is the same whatever the client speaks (${churn(ev)}; HTTP/1.0 with Connection: close upstream for either protocol), and here they cost HTTP/1.1 ${ev.x('gap', gap)} what they cost HTTP/2; what made the report's HTTP/1.1 client ${ev.x('reportGap', reportGap)} slower lies on its client's side over the internet, which the report did not record and this run does not have`,
        ev,
      }),
    );
  }
  // 2. The fix, split into its two parts by the two middle configurations.
  const f1 = t(fixed, h1);
  if (b1 !== undefined && f1 !== undefined) {
    const ev = new Evidence();
    const ka = t(by('ka-on+small'), h1);
    const buf = t(by('ka-off+large'), h1);
    const s = speedup(p50s(broken, big, c, h1), p50s(fixed, big, c, h1), seed);
    out.push(
      makeFinding({
        id: 'fix-speedup',
        section: 'summary',
        row: 'Both fixes, HTTP/1.1 (“1.36 s → 0.22 s, 6×”)',
        report: `${ev.s('reportBeforeS', REPORT.beforeS)} → ${ev.s('reportAfterS', REPORT.afterS)}, ${ev.x('reportSpeedup', REPORT.beforeS / REPORT.afterS)}`,
        measured: `${ev.ms('beforeMs', b1)} → ${ev.ms('afterMs', f1)}, ${ev.x('speedup', b1 / f1)}${s ? ` (${ev.pct('confidence', 0.95)} interval ${ev.x('lo', s.lo)}–${ev.x('hi', s.hi)})` : ''}`,
        reference: REPORT.beforeS / REPORT.afterS,
        value: b1 / f1,
        tolerance: 0.25,
        ratio: true,
        explain: () =>
          ka !== undefined && buf !== undefined
            ? `Each fix alone, from the two middle configurations: upstream keep-alive ${ev.ms('kaMs', ka)} (${ev.x('kaSpeedup', b1 / ka)}), the large buffers ${ev.ms('bufMs', buf)} (${ev.x('bufSpeedup', b1 / buf)}); ${churn(ev)}. ${o.upstream === 'unix' && o.upstreamRttMs === 0 ? 'A new connection over a Unix socket on the same host costs no round trip — the report’s topology too — so neither fix has a round trip to save here: what each can save is this machine’s CPU per upstream connection and per temp-file write, and the times above say how much that was. In the report’s own topology, then, its 6× stays unexplained: this run has no mechanism that gives it' : o.upstreamRttMs > 0 ? `With the backend ${ev.ms('upstreamRttMs', o.upstreamRttMs)} away each new upstream connection costs its handshake's round trip, which keep-alive saves` : 'A new TCP connection on loopback costs no round trip; what each fix can save is this machine’s CPU per upstream connection and per temp-file write'}`
            : undefined,
        unexplained: 'the middle configurations were not measured, so the fix cannot be split',
        ev,
      }),
    );
  }
  out.push(...afterFixRows(f1, t(fixed, h2)));
  // 3. "2 MB in-memory buffers … without disk I/O".
  const large = results.filter((r) => r.config.buffers === 'large' && r.spool && r.churn);
  if (large.length) {
    const ev = new Evidence();
    const spooled = large.reduce((a, r) => a + r.spool!.responses.bytes, 0);
    const of = large.reduce((a, r) => a + r.churn!.large, 0);
    const files = large.reduce((a, r) => a + r.spool!.files, 0);
    const bytes = large.reduce((a, r) => a + r.spool!.bytesSeen, 0);
    const memory = memoryFor('large');
    const excess = LARGE_BYTES - memory;
    const perFile = files > 0 ? bytes / files : 0;
    ev.set('reportSliceMB', 2.68).set('reportBuffersMB', 2).set('buffers', 16).set('bufferKiB', 128);
    ev.set('busyKiB', 256).set('responseMB', 2.7).set('maxTempFileGiB', 1);
    out.push(
      makeFinding({
        id: 'spool-large-buffers',
        section: 'configurations',
        row: 'proxy_buffers 16 128k, proxy_busy_buffers_size 256k: “stream directly from RAM … without disk I/O”',
        report: 'no spooling of the 2.68 MB slice with 2 MB of buffers',
        measured: `${ev.n('spooled', spooled)} of ${ev.n('responses', of)} 2.7 MB responses spooled (${ev.pct('share', of > 0 ? spooled / of : Number.NaN)}), ${ev.n('files', files)} temp files seen holding ${ev.n('kibPerFile', perFile / 1024)} KiB each on average`,
        verdict: of === 0 ? 'not-measured' : spooled === 0 ? 'agrees' : 'differs',
        explain: () =>
          spooled === 0
            ? `The client drained each response before nginx's ${ev.n('memoryKiB', memory / 1024)} KiB of buffers filled`
            : perFile <= excess * 1.1
              ? `A ${ev.n('responseBytes', LARGE_BYTES)}-byte response does not fit nginx's ${ev.n('memoryBytes', memory)} bytes for it (proxy_buffers 16 × 128 KiB plus proxy_buffer_size 128 KiB): while the client drains more slowly than the backend sends (nginx's send buffer ${ev.n('sndbufKiB', o.sndbufBytes / 1024)} KiB), the other ${ev.n('excessKiB', excess / 1024)} KiB go to proxy_temp_path (proxy_max_temp_file_size is 1 GiB by default), and the temp files held ${ev.n('kibPerFile', perFile / 1024)} KiB each — no more than that excess. The report's 2.68 MB slice did not fit its 2 MB either; its “without disk I/O” holds only for a client that drained as fast as uvicorn sent`
              : undefined,
        unexplained: `the temp files held ${ev.n('kibPerFile', perFile / 1024)} KiB each, more than the ${ev.n('excessKiB', excess / 1024)} KiB the buffers could not hold`,
        ev,
      }),
    );
  }
  return out;
}

/** The proxy findings checked against the result's own tables and data. */
export function verifyProxy(r: StudyResult): string[] {
  const problems: string[] = [];
  const f = (id: string) => r.findings.find((x) => x.id === id);
  const summary = r.sections.find((s) => s.id === 'summary');
  const c = Math.max(...summary!.table.rows.map((x) => Number(x.c)).filter(Number.isFinite));
  const row = (p: string) => summary?.table.rows.find((x) => x.c === c && x.protocol === p);
  for (const [id, p] of [
    ['before-h1', baselineStrategy().name],
    ['before-h2', multiplexedStrategy('one')!.name],
  ] as const) {
    const ms = evidenceNumber(f(id), 'ms');
    const cell = row(p)?.before;
    if (ms !== undefined && typeof cell === 'number' && Math.abs(cell - ms) > 0.06)
      problems.push(`${id}: ${ms} ms is not the summary's ${cell} ms`);
  }
  const spool = f('spool-large-buffers');
  const configs = (r.data.configurations ?? []) as Array<{
    config: ProxyConfig;
    spool?: Spool;
    churn?: Churn;
  }>;
  if (spool) {
    const large = configs.filter((x) => x.config.buffers === 'large' && x.spool);
    const n = large.reduce((a, x) => a + x.spool!.responses.bytes, 0);
    if (evidenceNumber(spool, 'spooled') !== n)
      problems.push(
        `spool-large-buffers: ${evidenceNumber(spool, 'spooled')} spooled said, ${n} in the data`,
      );
    if (spool.verdict === 'agrees' && n > 0)
      problems.push('spool-large-buffers: “no spooling” with spooled responses');
  }
  // The paragraph on both fixes against the summary's interval at the same concurrency.
  const both = r.explanation
    .find((p) => p.startsWith('The report saw 6×'))
    ?.match(/Both fixes together[^.]*/)?.[0];
  const ci = String(row(baselineStrategy().name)?.ci ?? '')
    .split('–')
    .map(Number);
  if (both && ci.length === 2 && ci.every(Number.isFinite)) {
    const side = direction({ lo: ci[0]!, hi: ci[1]! });
    const said = /no difference/.test(both) ? 'either' : /slower/.test(both) ? 'below' : 'above';
    if (side !== said)
      problems.push(
        `the paragraph on both fixes says "${both}", but the summary's interval is ${ci.join('–')}`,
      );
  }
  const gap = f('before-gap');
  if (gap?.explained)
    problems.push('before-gap: explained, though this run has no client path like the report’s');
  return problems;
}

/**
 * The findings and paragraphs of a saved run, from its data: the configurations' counts and each
 * cell's times (from the comparisons when the result kept them whole).
 */
function rederiveProxy(r: StudyResult): Rederived | undefined {
  const o = r.data.settings as ProxyOptions | undefined;
  const results = structuredClone((r.data.configurations ?? []) as ConfigResult[]);
  for (const x of results) {
    const compare = r.compares.find((c) => c.id === x.config.id)?.result;
    if (compare) x.times = timesOf(compare);
  }
  if (!o || results.length === 0 || results.some((x) => !x.times)) return undefined;
  const seed = Number(r.options.seed ?? 1);
  return {
    findings: proxyFindings(results, o, seed),
    explanation: explain(results, o, seed),
    data: { configurations: results },
  };
}

export const proxyStudy = defineStudy<ProxyOptions>({
  ...PROXY_STUDY,
  verify: verifyProxy,
  rederive: rederiveProxy,
  quickLimits: (o) =>
    o.runs - 1 < 4
      ? `Quick: ${o.runs - 1} kept run(s) a side (${o.runs} a cell, the first discarded). "Faster" and "slower" here come from a bootstrap interval of the per-run times, which with so few runs is too narrow and has no rank test behind it: read them as directions. A full run keeps ${GRID.full.runs - 1} a side.`
      : undefined,
  resolve,
  check(o) {
    checkNginx(o.nginx);
    if (o.upstreamRttMs > 0 && o.upstream === 'unix')
      throw invalidOption(
        '--upstream',
        'unix',
        'a Unix socket does not cross a link: use --upstream tcp with --upstream-rtt',
      );
    if (o.upstreamRttMs > 0) checkNetAvailable('relay');
  },
  async run(ctx) {
    const o = ctx.options;
    const { binary, version } = checkNginx(o.nginx);
    const h1 = baselineStrategy();
    const h2 = multiplexedStrategy('one');
    if (!h2) throw new Error('the registry has no single-session HTTP/2 strategy');
    const workloads = [
      sizeWorkload(LARGE_BYTES),
      {
        id: 'chunks',
        label: `${CHUNKS} chunks of 20–50 KiB`,
        paths: Array.from({ length: CHUNKS }, (_, i) => `/chunks/${i}`),
      },
    ];
    const runsPerConfig = workloads.length * o.concurrency.length * 2 * o.runs;
    ctx.plan(CONFIGS.length * (runsPerConfig + 1));
    ctx.setData('settings', {
      nginx: {
        binary,
        version,
        workers: 1,
        sndbufBytes: o.sndbufBytes,
        upstreamKeepalive: UPSTREAM_KEEPALIVE,
      },
      buffers: BUFFERS,
      upstreamPath:
        o.upstreamRttMs > 0
          ? `TCP over an emulated link of ${o.upstreamRttMs} ms RTT to the fixture in its own namespace`
          : o.upstream === 'unix'
            ? 'a Unix domain socket on the same host (the report’s nginx → uvicorn)'
            : 'TCP 127.0.0.1',
      fixture: o.upstreamRttMs > 0 ? 'namespace' : 'thread',
      largeBytes: LARGE_BYTES,
      ...o,
    });
    ctx.log(
      `nginx ${version} (${binary}) in front of the fixture server ${o.upstream === 'unix' ? 'over a Unix domain socket' : `over TCP ${o.upstreamRttMs > 0 ? `across a ${o.upstreamRttMs} ms link` : 'on 127.0.0.1'}`}`,
    );

    // The report's nginx reached its backend over a Unix domain socket on the same host (the default
    // here). With --upstream-rtt the fixture runs behind an emulated link (its own namespace) while
    // nginx and the client stay on the host: a backend elsewhere, where an upstream handshake costs
    // a round trip — a what-if, not the report's topology.
    const link =
      o.upstreamRttMs > 0
        ? await createLink({ profile: { rttMs: o.upstreamRttMs }, backend: 'relay', seed: ctx.seed })
        : undefined;
    let fixture: Awaited<ReturnType<typeof startFixtureTarget>>;
    try {
      fixture = await startFixtureTarget(
        o.upstream === 'unix' ? { unixSocket: join(ctx.tmpDir, 'fixture.sock') } : {},
        link ? { link } : 'thread',
      );
    } catch (err) {
      await link?.close();
      throw err;
    }
    const certs = await generateCertificates({ hosts: ['127.0.0.1', 'localhost'] });
    writeCertificateSet(ctx.tmpDir, certs, { force: true });
    const caFile = join(ctx.tmpDir, CERT_FILES.caPem);
    const upstream =
      o.upstream === 'unix' ? `unix:${join(ctx.tmpDir, 'fixture.sock')}` : new URL(fixture.plainUrl!).host;
    const ports = await Promise.all(CONFIGS.map(() => freePort()));
    const nginxDir = join(ctx.tmpDir, 'nginx');
    const http = `
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_certificate ${join(ctx.tmpDir, CERT_FILES.serverPem)};
  ssl_certificate_key ${join(ctx.tmpDir, CERT_FILES.serverKeyPem)};
  upstream fixture_ka { server ${upstream}; keepalive ${UPSTREAM_KEEPALIVE}; }
  upstream fixture_plain { server ${upstream}; }
${CONFIGS.map((c, i) => serverBlock(c, ports[i]!, nginxDir, o.sndbufBytes, upstream)).join('\n')}`;
    let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
    try {
      // nginx creates none of its temp directories itself.
      for (const c of CONFIGS) mkdirSync(join(nginxDir, `${c.id}.temp`), { recursive: true });
      nginx = await startNginx(nginxDir, http, ports, { binary });
      ctx.setData('nginxConfig', nginx.config);
      const results: ConfigResult[] = [];
      for (const [i, config] of CONFIGS.entries()) {
        const url = `https://127.0.0.1:${ports[i]}`;
        const r: ConfigResult = { config, url };
        results.push(r);
        const p = await ctx.cell(`${config.id}/probe`, () =>
          probe(`${url}/`, { ca: caFile, largePath: `/bytes/${LARGE_BYTES}` }),
        );
        if (p) r.probe = probeView(p);
        const before = await fixture.metrics.read();
        const spool = watchSpool(nginxDir, config, () => nginx!.workerPids());
        const compare = await compareCell(
          ctx,
          config.id,
          {
            url,
            tls: { ca: caFile },
            protocols: [h1.name, h2.name],
            baseline: h1.name,
            concurrency: o.concurrency,
            h1Connections: 'concurrency',
            runs: o.runs,
            durationMs: o.durationMs,
            workloads,
          },
          {},
          runsPerConfig,
        );
        r.spool = spool.stop();
        const after = await fixture.metrics.read();
        const requests = served(after) - served(before);
        // The after-read's connection is counted in `after`; the before-read's was in `before`.
        const connections = accepted(after) - accepted(before) - 1;
        r.churn = {
          requests,
          large: sum(after.requests.bytes) - sum(before.requests.bytes),
          chunks: sum(after.requests.chunks) - sum(before.requests.chunks),
          connections,
          perRequest: requests > 0 ? connections / requests : 0,
        };
        if (r.spool.firstError) ctx.warn(`nginx (${config.id}): ${r.spool.firstError}`);
        if (compare) r.times = timesOf(compare);
        ctx.setData('configurations', results);
        ctx.section(configSection(results, o));
      }
      for (const w of workloads) ctx.section(timeSection(results, w, o, ctx.seed));
      ctx.section(summarySection(results, o, ctx.seed));
      for (const p of explain(results, o, ctx.seed)) ctx.explain(p);
      for (const f of proxyFindings(results, o, ctx.seed)) ctx.finding(f);
      const failure = fixture.failure();
      if (failure) ctx.warn(failure);
    } finally {
      // nginx's own complaints (its warnings of spooling are counted above, not repeated here).
      const serious = (nginx?.errorLog() ?? '')
        .split('\n')
        .filter((l) => /\[(emerg|alert|crit|error)\]/.test(l));
      if (serious.length) ctx.warn(`nginx logged ${serious.length} error(s), the first: ${serious[0]}`);
      await nginx?.stop();
      await fixture.close();
      await link?.close();
    }
  },
});
