// One bulk TCP flow vs six through a lossy long link, per congestion control: the table in docs/net.md.
// 100 ms RTT, 100 Mbit/s, 1% i.i.d. loss on the data (server → client) direction. Each cell is the
// median of --runs runs of --seconds each (after 2 s of warm-up).
// Run as root: node --import tsx bench/net-tcp.ts [--runs 3] [--seconds 10]
import { parseArgs } from 'node:util';
import { medianInterpolated as median } from '../src/core/index.ts';
import { createLink } from '../src/net/index.ts';
import { bulkDownload, startPeer } from '../test/net/helpers.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' } },
});
const runs = Number(values.runs);
const durationMs = Number(values.seconds) * 1000;

async function once(cc: 'reno' | 'cubic' | 'bbr', flows: number, seed: number): Promise<number> {
  const link = await createLink({
    profile: { rttMs: 100, rateBitsPerSec: 100e6, lossDown: 0.01 },
    congestionControl: cc,
    seed,
  });
  const peer = await startPeer(link);
  try {
    return (await bulkDownload(link.serverAddress, peer.tcpPort, { flows, durationMs, warmupMs: 2000 }))
      .totalBitsPerSec;
  } finally {
    await peer.stop();
    await link.close();
  }
}

const mathis = ((1448 * 8) / 0.1) * (1.22 / Math.sqrt(0.01));
const m = (x: number) => `${(x / 1e6).toFixed(2)}`;
console.log(
  `100 ms RTT, 100 Mbit/s, 1% loss server → client; median of ${runs} × ${values.seconds} s; Mathis estimate for one flow ${m(mathis)} Mbit/s\n`,
);
console.log(
  '| congestion control | 1 flow, Mbit/s | 6 flows (total), Mbit/s | 6 flows / 1 flow | 1 flow / Mathis |',
);
console.log('|---|---|---|---|---|');
for (const cc of ['reno', 'cubic', 'bbr'] as const) {
  const one: number[] = [];
  const six: number[] = [];
  for (let i = 0; i < runs; i++) {
    // The pair of a run side by side: the same moment of a busy host for both.
    const [a, b] = await Promise.all([once(cc, 1, 100 + i), once(cc, 6, 200 + i)]);
    one.push(a);
    six.push(b);
  }
  const o = median(one);
  const s = median(six);
  console.log(
    `| ${cc} | ${m(o)} (${one.map(m).join(', ')}) | ${m(s)} (${six.map(m).join(', ')}) | ${(s / o).toFixed(2)} | ${cc === 'bbr' ? '—' : (o / mathis).toFixed(2)} |`,
  );
}
