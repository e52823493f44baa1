/**
 * What each study declares about itself, apart from how it runs: its name, title, the report it
 * reruns, its question and its flags (a {@link StudyDescriptor}). `h2lab study --help` and
 * `h2lab study NAME --help` read these without loading a study's implementation, and with it the
 * comparison engine, the load engine, Chromium's driver and the renderers (issue 29; docs/design.md,
 * "Start-up: what a command's help loads"). Each study's `resolve`, `run`, `verify` and `rederive` are
 * in its file, which builds its `Study` from the descriptor here; the registry loads that file
 * when the study runs. A study's own flags are declared here, once.
 */
import { CHROMIUM_FLAG, POOL_FLAG } from '../browser/meta.ts';
import {
  BANDWIDTH_FLAG,
  CC_FLAG,
  H1_CONNECTIONS_FLAG,
  H2_SESSIONS_FLAG,
  LOSS_FLAG,
  RTT_FLAG,
} from '../compare/meta.ts';
import { declareFlag, type FlagUse, invalidOption, parseBytes, parseInteger } from '../core/index.ts';
import {
  CONCURRENCY_FLAG,
  DURATION_FLAG,
  IDLE_TIMEOUT_FLAG,
  MAX_AGE_FLAG,
  WINDOW_FLAG,
} from '../load/meta.ts';
import { NET_FLAG, profileNames } from '../net/meta.ts';
import { LOOPBACK_FLAG, listOf, STUDY_RUNS } from './flags.ts';

/**
 * A flag of one study, added by `h2lab study NAME`: the use of a declared flag (docs/design.md,
 * "Options": a shared one such as `--runs`, narrowed with its reason, or the study's own) and the key
 * of the study's options it fills.
 */
export interface StudyFlag<K extends string = string> extends FlagUse {
  readonly key: K;
}

/**
 * What `h2lab study` needs to list a study and print its help: everything about it but its code. `K`
 * is the keys its flags fill; the study's file checks them against its options' type when it builds
 * the `Study` (`defineStudy<ChunksOptions>({ ...CHUNKS_STUDY, resolve, run })`).
 */
export interface StudyDescriptor<K extends string = string> {
  /** `h2lab study NAME`. */
  name: string;
  title: string;
  /** The field report it reruns, e.g. `report 000 (the map tile server)`. */
  source: string;
  /** The question it answers, one sentence. */
  question: string;
  flags?: readonly StudyFlag<K>[];
}

/**
 * A descriptor, with the keys its flags fill kept as a union of literals (so the study's options
 * type can check them), not widened to `string`.
 *
 * @example export const CHUNKS_STUDY = describeStudy({ name: 'chunks', title, source, question, flags });
 */
export function describeStudy<K extends string>(d: StudyDescriptor<K>): StudyDescriptor<K> {
  return d;
}

// --- chunks (report 001) ---------------------------------------------------------------------------

/** The chunks a chunk study's run fetches: the report's 64. */
export const CHUNKS = 64;

/** `h2lab study chunks`: pooled HTTP/1.1 against HTTP/2 for bulk chunk fetches (src/studies/chunks.ts). */
export const CHUNKS_STUDY = describeStudy({
  name: 'chunks',
  title: 'Chunked array storage: pooled HTTP/1.1 against HTTP/2 for bulk chunk fetches over a WAN',
  source: 'report 001 (chunked array storage)',
  question:
    'Fetching 64 chunks of 20–50 KiB with N requests in flight over a WAN, is pooled HTTP/1.1 or HTTP/2 faster, and why?',
  flags: [
    {
      of: RTT_FLAG,
      key: 'rttMs',
      list: true,
      description: 'link round-trip times, one link each',
      defaultText: '50ms; quick 20ms',
    },
    {
      of: LOSS_FLAG,
      key: 'loss',
      list: true,
      description: 'packet loss each way, one link each',
      defaultText: '0,1%',
    },
    {
      of: CC_FLAG,
      key: 'cc',
      list: true,
      description: 'TCP congestion control on both ends, one link each',
      defaultText: 'cubic,bbr; quick cubic',
    },
    {
      of: BANDWIDTH_FLAG,
      key: 'bandwidth',
      list: true,
      description: 'bottleneck rates, one link each',
      defaultText: 'none',
    },
    {
      of: CONCURRENCY_FLAG,
      key: 'concurrency',
      list: true,
      max: CHUNKS,
      why: `more than the ${CHUNKS} chunks would never be in flight`,
      description: 'requests in flight',
      defaultText: '1,4,8,16; quick 4,16',
    },
    { ...STUDY_RUNS, description: 'runs per cell, the first discarded', defaultText: '7; quick 3' },
    {
      of: H2_SESSIONS_FLAG,
      key: 'h2Sessions',
      max: CHUNKS,
      why: `a session per chunk at most: more would stay idle`,
      description: 'sessions of the HTTP/2 pool',
      defaultText: '4',
    },
    { of: LOOPBACK_FLAG, key: 'loopback' },
  ],
});

// --- echo (report 003) -----------------------------------------------------------------------------

/**
 * The echo study's pools by default (HTTP/1.1 connections, leased HTTP/2 sessions): Apache HttpClient
 * 5's pooling connection managers default to 5 connections per route (25 in all).
 */
export const LIBRARY_POOL_SESSIONS = 5;

/** `--bodies`: body sizes echoed, one comparison each; an empty echo measures no body at all. */
const BODIES_FLAG = declareFlag({
  flag: 'bodies',
  grammar: 'bytes',
  arg: 'list',
  min: 1,
  description: 'body sizes echoed, one comparison each',
  defaultText: '1KiB,1MiB',
  parse: (v, f) =>
    listOf(v, f, (x) => {
      const n = parseBytes(x, f);
      // An empty echo measures no body at all: the study's question is the bodies'.
      if (n < 1) throw invalidOption(f, v, 'give body sizes of at least 1 byte, e.g. 1KiB,1MiB');
      return n;
    }),
});
/** `--windows`: the presets of `--window` (src/load), one comparison each, on both ends. */
const WINDOWS_FLAG = declareFlag({
  flag: 'windows',
  grammar: 'enum',
  arg: 'list',
  choices: WINDOW_FLAG.choices,
  description: `HTTP/2 window presets of both ends: ${WINDOW_FLAG.choices?.join(', ')}`,
  defaultText: 'all; quick node,max',
  sweep: 'one comparison each',
});
const HEADER_BYTES_FLAG = declareFlag({
  flag: 'header-bytes',
  grammar: 'bytes',
  arg: 'size',
  max: 16 * 1024,
  description: 'extra request headers per request, as HTTP/1.1 writes them',
  defaultText: '300',
  parse: (v, f) => {
    const n = parseBytes(v, f);
    if (n > 16 * 1024)
      throw invalidOption(f, v, 'use at most 16KiB (the fixture refuses larger header lists)');
    return n;
  },
});
const SERVER_IDLE_TIMEOUT_FLAG = declareFlag({
  flag: 'server-idle-timeout',
  grammar: 'seconds',
  arg: 'time',
  description: "the server's HTTP/2 idle timeout in the lifetime cells (a bare number is seconds)",
  defaultText: '3s; quick 600ms',
});

/** `h2lab study echo`: the mTLS echo behind HTTP/1.1 and HTTP/2 pools (src/studies/echo.ts). */
export const ECHO_STUDY = describeStudy({
  name: 'echo',
  title: 'Request/response echo behind mTLS: HTTP/1.1 pool, one HTTP/2 session, and pools of HTTP/2 sessions',
  source: 'report 003 (mTLS echo, Spring Boot / Tomcat, Apache HttpClient 5)',
  question:
    'Echoing 1 KiB and 1 MiB bodies over mutual TLS, what do one HTTP/2 session, a shared pool of sessions and a pool of independent sessions give against pooled HTTP/1.1, why, and who can bound a session’s life?',
  flags: [
    { of: BODIES_FLAG, key: 'bodies' },
    { of: WINDOWS_FLAG, key: 'windows', list: true },
    {
      of: CONCURRENCY_FLAG,
      key: 'concurrency',
      list: true,
      max: 1024,
      why: 'a pool of independent sessions opens one per request in flight',
      description: 'requests in flight',
      defaultText: '32; quick 8',
    },
    {
      ...STUDY_RUNS,
      min: 3,
      why: "the first run is discarded and the lifetime cells' medians need two kept",
      description: 'runs per cell, the first discarded',
      defaultText: '7; quick 3',
    },
    {
      of: DURATION_FLAG,
      key: 'durationMs',
      description: 'measured time of one run (a bare number is seconds)',
      defaultText: '1s; quick 300ms',
    },
    {
      of: H1_CONNECTIONS_FLAG,
      key: 'h1Connections',
      description: "HTTP/1.1 connections: a number (capped at the concurrency) or 'concurrency'",
      defaultText: `${LIBRARY_POOL_SESSIONS}, Apache HttpClient 5's per-route default`,
    },
    {
      of: H2_SESSIONS_FLAG,
      key: 'h2Sessions',
      max: 256,
      why: 'each session is a client of its own on this machine',
      description: 'sessions of the leased HTTP/2 pool, one exchange each at a time',
      defaultText: String(LIBRARY_POOL_SESSIONS),
    },
    { of: HEADER_BYTES_FLAG, key: 'headerBytes' },
    { of: SERVER_IDLE_TIMEOUT_FLAG, key: 'serverIdleMs' },
    {
      of: IDLE_TIMEOUT_FLAG,
      key: 'clientIdleMs',
      description: "the client's idle timeout in the lifetime cells",
      defaultText: '1s; quick 300ms',
    },
    {
      of: MAX_AGE_FLAG,
      key: 'maxAgeMs',
      description: "the client's maximum session age in the lifetime cells",
      defaultText: '1s; quick 300ms',
    },
    {
      of: RTT_FLAG,
      key: 'rttMs',
      description: 'an emulated link of this round-trip time for the comparisons (needs root)',
      defaultText: 'loopback',
    },
  ],
});

// --- proxy (report 001, the reverse-proxy audit) ---------------------------------------------------

const SNDBUF_FLAG = declareFlag({
  flag: 'sndbuf',
  grammar: 'bytes',
  arg: 'size',
  description:
    "nginx's send buffer towards the client, listen sndbuf= (a WAN client's pace; 0: the kernel's, which on loopback takes most of a response at once)",
  defaultText: '64KiB',
});
const UPSTREAM_RTT_FLAG = declareFlag({
  flag: 'upstream-rtt',
  grammar: 'duration',
  arg: 'time',
  description:
    'put the fixture behind an emulated link of this round trip, nginx and the client on the host (root)',
  defaultText: 'none: loopback',
});
const UPSTREAM_FLAG = declareFlag({
  flag: 'upstream',
  grammar: 'enum',
  arg: 'kind',
  choices: ['unix', 'tcp'],
  description:
    "how nginx reaches the fixture: unix (a Unix domain socket, the report's) or tcp (127.0.0.1; implied by --upstream-rtt)",
  defaultText: 'unix',
  parse: (v, f) => {
    if (v !== 'unix' && v !== 'tcp') throw invalidOption(f, v, 'use unix or tcp');
    return v;
  },
});
const NGINX_FLAG = declareFlag({
  flag: 'nginx',
  grammar: 'string',
  arg: 'path',
  description: 'the nginx binary',
  defaultText: '/usr/sbin/nginx, else nginx on PATH',
});

/** `h2lab study proxy`: nginx's upstream keep-alive and proxy buffers (src/studies/proxy.ts). */
export const PROXY_STUDY = describeStudy({
  name: 'proxy',
  title: 'The reverse proxy in front: upstream keep-alive and proxy buffers',
  source: 'report 001 (chunked array storage: the reverse-proxy audit)',
  question:
    'What do a reverse proxy without upstream keep-alive and with small proxy buffers cost a 2.7 MB response and small chunks, and can h2lab see both faults?',
  flags: [
    {
      of: CONCURRENCY_FLAG,
      key: 'concurrency',
      list: true,
      max: 256,
      why: 'every request in flight is a connection through nginx on this machine',
      description: 'requests in flight',
      defaultText: '1,8; quick 4',
    },
    {
      ...STUDY_RUNS,
      min: 3,
      why: 'the first run is discarded and an interval needs two kept',
      description: 'runs per cell, the first discarded',
      defaultText: '7; quick 3',
    },
    {
      of: DURATION_FLAG,
      key: 'durationMs',
      description: 'measured time of one run; a bare number is seconds',
      defaultText: '1s; quick 400ms',
    },
    { of: SNDBUF_FLAG, key: 'sndbufBytes' },
    { of: UPSTREAM_RTT_FLAG, key: 'upstreamRttMs' },
    { of: UPSTREAM_FLAG, key: 'upstream' },
    { of: NGINX_FLAG, key: 'nginx' },
  ],
});

// --- tiles (report 000) ----------------------------------------------------------------------------

/** The report's server: 8 cores, a pool of 8 database connections, "a tile is single-threaded CPU". */
export const TILES_REPORT_CORES = 8;

/**
 * The render-time model. The report: ~250 ms for a heavy tile, a pool of 8 database connections on 8
 * cores; its 121-tile burst took 1.2 s on h2, i.e. about 80 ms of pool time per tile on average,
 * which is what 60 ms light tiles with 10% of 250 ms heavy ones give (60 + 0.1 × 190 = 79 ms).
 *
 * By default (`--render cpu`) a tile burns CPU on render threads pinned to `--render-cores` (default
 * 1, leaving the other core of a small machine to Chromium), each tile's CPU time scaled by
 * cores / 8 so that the pool's capacity in tiles per second is the report's 8 cores'; `--render sleep`
 * is the timer pool (the report's times unscaled), where more workers always help.
 */
export const TILES_MODEL = {
  poolSize: 8,
  tileMs: 60,
  tileHeavyMs: 250,
  tileHeavyFraction: 0.1,
  renderCores: 1,
};

const POOLS_FLAG = declareFlag({
  flag: 'pools',
  grammar: 'int',
  arg: 'list',
  min: 1,
  max: 1024,
  description: 'backend pool sizes of the sweep',
  defaultText: '1,2,4,8,16,32; quick 1,4,16',
  parse: (v, f) => listOf(v, f, (x) => parseInteger(x, f, 1, 1024)),
});
const RENDER_FLAG = declareFlag({
  flag: 'render',
  grammar: 'enum',
  arg: 'mode',
  choices: ['cpu', 'sleep'],
  description:
    'how a tile is rendered: cpu (burns CPU on --render-cores pinned cores, the report’s CPU-bound tiles) or sleep (a timer, no CPU)',
  defaultText: 'cpu',
  parse: (v, f) => {
    if (v !== 'cpu' && v !== 'sleep') throw invalidOption(f, v, 'use cpu or sleep');
    return v;
  },
});
const RENDER_CORES_FLAG = declareFlag({
  flag: 'render-cores',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 1024,
  description: `cores the render threads are pinned to with --render cpu (the tile CPU time is scaled by cores/${TILES_REPORT_CORES})`,
  defaultText: String(TILES_MODEL.renderCores),
});
const SESSIONS_FLAG = declareFlag({
  flag: 'sessions',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 20,
  description: 'map sessions per target and server mode',
  defaultText: '2; quick 1',
});

/** `h2lab study tiles`: the map tile server in Chromium (src/studies/tiles.ts). */
export const TILES_STUDY = describeStudy({
  name: 'tiles',
  title: 'The map tile server: HTTP/2 moves the queue, does it shorten it?',
  source: 'report 000 (the map tile server)',
  question:
    'For a map whose tiles come from a bounded backend pool, what does HTTP/2 change against HTTP/1.1 in a real browser — where the queue sits, what abandoned tiles cost, and how many workers are worth having?',
  flags: [
    {
      of: NET_FLAG,
      key: 'net',
      list: true,
      description: `network conditions: loopback and link profiles (${profileNames().join(', ')})`,
      defaultText: 'loopback,wan',
    },
    { of: LOOPBACK_FLAG, key: 'loopback', description: 'loopback only (no emulated link, no root needed)' },
    { of: POOLS_FLAG, key: 'pools' },
    { of: RENDER_FLAG, key: 'render' },
    { of: RENDER_CORES_FLAG, key: 'renderCores' },
    {
      of: POOL_FLAG,
      key: 'poolSize',
      description: 'backend workers for the burst and the map sessions',
      defaultText: `${TILES_MODEL.poolSize}, as the report's`,
    },
    { ...STUDY_RUNS, description: 'bursts per target, the first discarded', defaultText: '6; quick 2' },
    { of: SESSIONS_FLAG, key: 'sessions' },
    { of: CHROMIUM_FLAG, key: 'chromiumPath' },
  ],
});
