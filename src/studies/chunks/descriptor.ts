/** What the chunks study declares (light: `h2lab study --help` reads it): its name, question, flags. */
import { BANDWIDTH_FLAG, CC_FLAG, H2_SESSIONS_FLAG, LOSS_FLAG, RTT_FLAG } from '../../compare/meta.ts';
import { CONCURRENCY_FLAG } from '../../load/meta.ts';
import { describeStudy } from '../describe.ts';
import { LOOPBACK_FLAG, STUDY_RUNS } from '../flags.ts';

/** The chunks a chunk study's run fetches: the report's 64. */
export const CHUNKS = 64;

/** `h2lab study chunks`: pooled HTTP/1.1 against HTTP/2 for bulk chunk fetches (src/studies/chunks/). */
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
