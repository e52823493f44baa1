/**
 * Saves the results of real comparisons under test/fixtures/report/, for the report's consistency
 * tests (test/report/consistency.test.ts): every renderer is checked against what real
 * runs recorded, not against numbers written by hand. Regenerate with
 *
 *   node --import tsx scripts/gen-report-fixtures.ts [name…]
 *
 * (about a minute; nginx for `nginx`). Each file is a compare result as `h2lab compare` writes it,
 * made smaller: the runs' histograms, per-connection lists and options' repeated paths are what the
 * renderers read, so they stay; nothing is edited.
 *
 * - fixture: the embedded fixture server, 1 KiB responses, h1 and h2 at c=1 and 64;
 * - nginx: Debian's nginx over TLS (h2 and http/1.1 by ALPN), its defaults (tcp_nodelay on);
 * - lossy: the same nginx behind an emulated link, 50 ms round trip, 2% loss each way (root);
 * - burst-200ms: the fixture server, a burst of 8 × 10 KiB through 200 ms and 10 Mbit/s (root);
 * - grid: the same burst at 64 through 200 ms and 10 Mbit/s, loss 0 and 2%, cubic and reno (root);
 * - not-found: a fixture server asked for a path it does not have (every response 404);
 * - refused: a port nothing listens on (every request fails to connect);
 * - resets: every 20th request reset by the fixture server's /reset?every=20 (5% failed).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { type CompareOptionsInput, runComparison } from '../src/compare/index.ts';
import type { CompareResult } from '../src/model/index.ts';
import { startFixtureTarget } from '../src/server/index.ts';
import { freePort, startNginx } from '../src/studies/nginx.ts';
import { CERT_FILES, generateCertificates, writeCertificateSet } from '../src/tls/index.ts';

const OUT = new URL('../test/fixtures/report/', import.meta.url);

/** Small but decided: 4 kept runs a side is what the rank test needs at 95%. */
const SMALL = { runs: 5, durationMs: 300, protocols: ['h1', 'h2'], baseline: 'h1' };

async function compare(input: CompareOptionsInput): Promise<CompareResult> {
  const c = await runComparison(input);
  return c.done;
}

function save(name: string, r: CompareResult): void {
  mkdirSync(OUT, { recursive: true });
  const file = new URL(`${name}.json`, OUT);
  // No path of the machine that made them: the home directory's dev CA becomes a relative name,
  // and so do the files of a temporary directory (nginx's, the fixture server's dev CA).
  const text = JSON.stringify(r)
    .replace(/"(?:[^"\\]*\/)?\.cache\/h2lab\/dev-certs\/([^"]+)"/g, '"dev-certs/$1"')
    .replace(/"[^"\\]*\/h2lab-(?:fixtures-nginx|target)-[^"\\/]+\/([^"]+)"/g, '"$1"');
  writeFileSync(file, `${text}\n`);
  console.log(`wrote ${file.pathname} (${r.cells.length} cells, status ${r.status})`);
}

/** Debian's nginx over TLS (h2 and http/1.1 by ALPN) with its defaults, serving 1 KiB at `url`. */
async function withNginx(run: (url: string, ca: string) => Promise<CompareResult>): Promise<CompareResult> {
  const dir = mkdtempSync(join(os.tmpdir(), 'h2lab-fixtures-nginx-'));
  const certs = await generateCertificates({ hosts: ['127.0.0.1', 'localhost'] });
  writeCertificateSet(dir, certs, { force: true });
  const port = await freePort();
  mkdirSync(join(dir, 'www'), { recursive: true });
  writeFileSync(join(dir, 'www', 'small.txt'), 'a'.repeat(1024));
  const nginx = await startNginx(
    join(dir, 'nginx'),
    `server {
    listen 127.0.0.1:${port} ssl http2;
    ssl_certificate ${join(dir, CERT_FILES.serverPem)};
    ssl_certificate_key ${join(dir, CERT_FILES.serverKeyPem)};
    root ${join(dir, 'www')};
  }`,
    [port],
  );
  try {
    return await run(`https://127.0.0.1:${port}/small.txt`, join(dir, CERT_FILES.caPem));
  } finally {
    await nginx.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 10 KiB responses from the fixture server: the burst fixtures' workload. */
const TEN_KIB = {
  id: 'burst-10k',
  label: '10 KiB responses',
  paths: ['/bytes/10240'],
  responseSizeBytes: 10240,
  kind: 'interactive' as const,
};

const cases: Record<string, () => Promise<CompareResult>> = {
  fixture: () =>
    compare({
      ...SMALL,
      concurrency: [1, 64],
      workloads: [
        {
          id: 'bytes-1024',
          label: '1 KiB responses',
          paths: ['/bytes/1024'],
          responseSizeBytes: 1024,
          kind: 'interactive',
        },
      ],
    }),
  nginx: () => withNginx((url, ca) => compare({ ...SMALL, url, tls: { ca }, concurrency: [8] })),
  // The same nginx behind an emulated 50 ms link losing 2% each way (needs root: a namespace).
  lossy: () =>
    withNginx((url, ca) =>
      compare({
        ...SMALL,
        url,
        tls: { ca },
        concurrency: [8],
        durationMs: 1500,
        links: { rttMs: [50], loss: [0.02] },
      }),
    ),
  // A page-like burst over a long thin link, handshakes inside the timed period (needs root).
  'burst-200ms': () =>
    compare({
      ...SMALL,
      protocols: ['h1', 'h2', 'h2-pool'],
      runs: 6,
      workloads: [TEN_KIB],
      burst: [8],
      links: { rttMs: [200], rateBitsPerSec: [10_000_000] },
    }),
  // A grid of links (a smaller grid of the conditions a user compares): 64 × 10 KiB through 200 ms and
  // 10 Mbit/s, loss 0 and 2%, cubic and reno (root; about 8 minutes).
  grid: () =>
    compare({
      ...SMALL,
      protocols: ['h1', 'h2', 'h2-pool'],
      runs: 5,
      workloads: [TEN_KIB],
      burst: [64],
      links: {
        rttMs: [200],
        rateBitsPerSec: [10_000_000],
        loss: [0, 0.02],
        congestionControl: ['cubic', 'reno'],
      },
    }),
  'not-found': async () => {
    const server = await startFixtureTarget({}, 'thread');
    try {
      return await compare({
        ...SMALL,
        runs: 3,
        url: `${server.tlsUrl}/nothing-here`,
        tls: { ca: server.caFile },
        concurrency: [8],
      });
    } finally {
      await server.close();
    }
  },
  refused: async () => {
    const port = await freePort();
    return compare({ ...SMALL, runs: 3, url: `https://127.0.0.1:${port}/`, concurrency: [8] });
  },
  resets: async () => {
    const server = await startFixtureTarget({}, 'thread');
    try {
      return await compare({
        ...SMALL,
        url: `${server.tlsUrl}/reset?every=20`,
        tls: { ca: server.caFile },
        concurrency: [8],
      });
    } finally {
      await server.close();
    }
  },
};

const names = process.argv.slice(2);
for (const name of names.length > 0 ? names : Object.keys(cases)) {
  const make = cases[name];
  if (!make) throw new Error(`no fixture ${name}: one of ${Object.keys(cases).join(', ')}`);
  save(name, await make());
}
