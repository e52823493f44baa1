// What one `h2lab probe` costs: wall time and the connections it opens on the target, against the
// fixture server's plain and TLS ports (the server counts connections by listener and protocol).
// Usage: node --import tsx bench/probe.ts [runs=7]  (the figures in docs/performance.md: runs=5)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { medianInterpolated as median } from '../src/core/index.ts';
import { probe } from '../src/probe/index.ts';
import { startServer } from '../src/server/index.ts';
import { generateCertificates } from '../src/tls/index.ts';

const runs = Number(process.argv[2] ?? 7);
const dir = mkdtempSync(join(tmpdir(), 'h2lab-bench-probe-'));
const certs = await generateCertificates();
for (const [name, pem] of [
  ['ca.pem', certs.caPem],
  ['server.pem', certs.serverPem],
  ['server.key', certs.serverKeyPem],
] as const) {
  writeFileSync(join(dir, name), pem);
}
const server = await startServer({
  host: '127.0.0.1',
  port: 0,
  tlsPort: 0,
  cert: join(dir, 'server.pem'),
  key: join(dir, 'server.key'),
});

const connections = () => {
  const total = server.metrics().connections.total as Record<string, Record<string, number>>;
  return Object.values(total).reduce((n, row) => n + Object.values(row).reduce((a, b) => a + b, 0), 0);
};

try {
  console.log(`probe cost, ${runs} runs each (first run excluded as warm-up)`);
  console.log('target           median ms   min ms   max ms   connections per probe');
  for (const [label, url, opts] of [
    ['plain (http://)', `${server.plainUrl}/`, {}],
    ['TLS (https://)', `${server.tlsUrl}/`, { ca: join(dir, 'ca.pem') }],
  ] as const) {
    await probe(url, opts);
    const times: number[] = [];
    const before = connections();
    for (let i = 0; i < runs; i++) times.push((await probe(url, opts)).durationMs);
    const perProbe = (connections() - before) / runs;
    console.log(
      `${label.padEnd(16)} ${median(times).toFixed(1).padStart(9)} ${Math.min(...times)
        .toFixed(1)
        .padStart(8)} ${Math.max(...times)
        .toFixed(1)
        .padStart(8)}   ${perProbe}`,
    );
  }
} finally {
  await server.close(0);
  rmSync(dir, { recursive: true, force: true });
}
