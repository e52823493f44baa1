/** What the proxy study declares (light: `h2lab study --help` reads it): its name, question, flags. */
import { declareFlag, invalidOption } from '../../core/index.ts';
import { CONCURRENCY_FLAG, DURATION_FLAG } from '../../load/meta.ts';
import { describeStudy } from '../describe.ts';
import { STUDY_RUNS } from '../flags.ts';

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

/** `h2lab study proxy`: nginx's upstream keep-alive and proxy buffers (src/studies/proxy/). */
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
