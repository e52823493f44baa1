// What the fixture's server-side qlog costs a bulk HTTP/3 download: one SIZE download at a time by
// h2lab's h3 client (a fresh connection each, handshake included), from two fixtures — one writing a
// qlog per connection, one not — alternating over ROUNDS rounds, on loopback or through an emulated
// link (relay backend; needs root). Prints each side's median and range and the ratio of medians.
//
//   node --import tsx bench/h3-qlog-cost.ts [--size 2MiB] [--rounds 8] [--rtt 40 --bandwidth 50]
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseBytes } from '../src/core/units.ts';
import { runLoad } from '../src/load/index.ts';
import { createLink, type Link } from '../src/net/index.ts';
import { type FixtureTarget, startFixtureTarget } from '../src/server/index.ts';
import { median, scratch } from './common.ts';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '2MiB' },
    rounds: { type: 'string', default: '8' },
    rtt: { type: 'string' },
    bandwidth: { type: 'string' },
  },
});
const size = parseBytes(values.size, '--size');
const rounds = Number(values.rounds);
const { dir, cleanup } = scratch('h2lab-h3-qlog-cost-');

async function start(qlog: boolean): Promise<{ fixture: FixtureTarget; link?: Link }> {
  const h3 = { h3: true, ...(qlog ? { qlogDir: join(dir, 'qlog') } : {}) };
  if (values.rtt === undefined) return { fixture: await startFixtureTarget(h3, 'thread') };
  const link = await createLink({
    profile: { rttMs: Number(values.rtt), rateBitsPerSec: Number(values.bandwidth ?? 50) * 1e6 },
    backend: 'relay',
    congestionControl: 'cubic',
  });
  return { fixture: await startFixtureTarget(h3, { link }), link };
}

async function download(f: FixtureTarget): Promise<number> {
  const r = await runLoad({
    url: `${f.h3Url}/bytes/${size}`,
    ca: f.caFile!,
    protocol: 'h3',
    burst: 1,
    bursts: 1,
    burstHandshakes: 'include',
    timeoutMs: 120_000,
    serverMetrics: false,
  }).done;
  if (r.error || r.throughput.bytesIn !== size)
    throw new Error(`download: ${r.error?.message ?? r.throughput.bytesIn}`);
  return r.burst!.completionMs;
}

const sides = { without: [] as number[], with: [] as number[] };
try {
  for (let i = 0; i < rounds; i++)
    for (const qlog of i % 2 === 0 ? [false, true] : [true, false]) {
      // One fixture (and link) per download, so neither side inherits the other's queue or state.
      const { fixture, link } = await start(qlog);
      try {
        sides[qlog ? 'with' : 'without'].push(await download(fixture));
      } finally {
        await fixture.close();
        await link?.close();
      }
    }
} finally {
  cleanup();
}
const where = values.rtt === undefined ? 'loopback' : `${values.rtt} ms, ${values.bandwidth ?? 50} Mbit/s`;
const line = (xs: number[]) =>
  `median ${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
console.log(`${values.size} over h3, ${where}, ${rounds} rounds, load average ${loadavg()[0]!.toFixed(1)}`);
console.log(`  without server qlog: ${line(sides.without)}`);
console.log(`  with server qlog:    ${line(sides.with)}`);
console.log(`  with / without: ${(median(sides.with) / median(sides.without)).toFixed(2)}`);
