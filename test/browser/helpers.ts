// Shared pieces of the browser tests: whether Chromium is here, and a tiny tile server of our own
// (HTTP/1.1 on a plain port, h2 + HTTP/1.1 by ALPN on a TLS port) for tests that need no backend pool.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CHROMIUM_PATH } from '../../src/model/index.ts';

/** The reason to skip, or undefined when Chromium can run here. */
export function chromiumMissing(): string | undefined {
  try {
    accessSync(DEFAULT_CHROMIUM_PATH, constants.X_OK);
    return undefined;
  } catch {
    return `${DEFAULT_CHROMIUM_PATH} is not installed (apt-get install chromium)`;
  }
}

/** A self-signed certificate for 127.0.0.1 made with openssl (tests only). */
export function selfSigned(): { certPem: string; keyPem: string } {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-test-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'k.pem'),
        '-out',
        join(dir, 'c.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    return {
      certPem: readFileSync(join(dir, 'c.pem'), 'utf8'),
      keyPem: readFileSync(join(dir, 'k.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Tiles after a fixed delay, no pool; counts requests it saw. */
export async function startTinyTiles(tileMs: number, maxConcurrentStreams = 1000) {
  const { certPem, keyPem } = selfSigned();
  let seen = 0;
  const handler = (
    req: http.IncomingMessage | http2.Http2ServerRequest,
    res: http.ServerResponse | http2.Http2ServerResponse,
  ) => {
    if (req.url?.includes('h2lab=')) seen++;
    const t = setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(Buffer.alloc(512));
    }, tileMs);
    req.on('close', () => clearTimeout(t));
  };
  const plain = http.createServer(handler);
  const tls = http2.createSecureServer(
    { cert: certPem, key: keyPem, allowHTTP1: true, settings: { maxConcurrentStreams } },
    handler,
  );
  await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
  return {
    plainUrl: `http://127.0.0.1:${(plain.address() as AddressInfo).port}`,
    tlsUrl: `https://127.0.0.1:${(tls.address() as AddressInfo).port}`,
    certPem,
    seen: () => seen,
    async close() {
      plain.closeAllConnections();
      await new Promise((r) => plain.close(r));
      await new Promise((r) => tls.close(r));
    },
  };
}
