/** What the echo study declares (light: `h2lab study --help` reads it): its name, question, flags. */
import { H1_CONNECTIONS_FLAG, H2_SESSIONS_FLAG, RTT_FLAG } from '../../compare/meta.ts';
import { declareFlag, invalidOption, parseBytes } from '../../core/index.ts';
import {
  CONCURRENCY_FLAG,
  DURATION_FLAG,
  IDLE_TIMEOUT_FLAG,
  MAX_AGE_FLAG,
  WINDOW_FLAG,
} from '../../load/meta.ts';
import { describeStudy } from '../describe.ts';
import { listOf, STUDY_RUNS } from '../flags.ts';

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

/** `h2lab study echo`: the mTLS echo behind HTTP/1.1 and HTTP/2 pools (src/studies/echo/). */
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
