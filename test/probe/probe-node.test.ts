// probe() against real servers on loopback (Node's http, http2 and TLS stacks): the matrix of what
// they speak, mTLS required/optional, keep-alive churn, h2c by Upgrade, streaming vs spooled
// responses, idle timeouts, and every error case with its own code.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isH2labError } from '../../src/core/errors.ts';
import { probe } from '../../src/probe/index.ts';
import { type TestCerts, testCerts, untrustedServerCert } from '../helpers/certs.ts';
import { listen, type Running } from '../helpers/servers.ts';
import { churningServer, routes, upgradingServer } from './servers.ts';

let certs: TestCerts;
let untrusted: { cert: string; key: string };
let dir: string;
const file = (name: string) => join(dir, name);

before(async () => {
  certs = await testCerts({ leafDays: 20 });
  untrusted = await untrustedServerCert();
  dir = mkdtempSync(join(tmpdir(), 'h2lab-probe-'));
  writeFileSync(file('ca.pem'), certs.caPem);
  writeFileSync(file('client.pem'), certs.clientPem);
  writeFileSync(file('client.key'), certs.clientKeyPem);
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
  certs.cleanup();
});

async function withServer<T>(start: () => Promise<Running>, fn: (port: number) => Promise<T>): Promise<T> {
  const s = await start();
  try {
    return await fn(s.port);
  } finally {
    await s.close();
  }
}

function tlsServer(opts: http2.SecureServerOptions = {}) {
  return () =>
    listen(
      http2.createSecureServer(
        {
          cert: certs.serverPem,
          key: certs.serverKeyPem,
          ca: certs.caPem,
          allowHTTP1: true,
          settings: { maxConcurrentStreams: 100, initialWindowSize: 1 << 20 },
          ...opts,
        },
        (req, res) => {
          res.setHeader('alt-svc', 'h3=":443"; ma=86400');
          routes(req, res);
        },
      ),
    );
}

async function expectError(p: Promise<unknown>, code: Parameters<typeof isH2labError>[1], message: RegExp) {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(isH2labError(err, code), `expected ${code}, got ${(err as Error)?.stack ?? err}`);
    assert.match((err as Error).message, message);
    return true;
  });
}

describe('TLS target (node:http2 secure server, ALPN h2 + http/1.1): protocols and a required client certificate', () => {
  test('reports h2 by ALPN, both versions, the SETTINGS it sent, keep-alive and Alt-Svc', async () => {
    await withServer(tlsServer(), async (port) => {
      const r = await probe(`https://127.0.0.1:${port}/text`, {
        ca: file('ca.pem'),
        expect: ['h2', 'tls1.3', 'keepalive', 'h3', 'no-mtls'],
      });
      assert.equal(r.kind, 'h2lab.probe');
      assert.equal(r.protocols.h2.supported, true);
      assert.equal(r.protocols['http/1.1'].supported, true);
      assert.equal(r.tls?.negotiated.alpn, 'h2');
      assert.equal(r.tls?.versions['TLSv1.2'].supported, true);
      assert.equal(r.tls?.versions['TLSv1.3'].supported, true);
      assert.equal(r.tls?.versions.TLSv1.supported, false, r.tls?.versions.TLSv1.detail);
      assert.equal(r.tls?.versions['TLSv1.1'].supported, false);
      assert.equal(r.tls?.alpn.h2.supported, true);
      assert.equal(r.tls?.alpn['http/1.1'].supported, true);
      assert.equal(r.tls?.certificate.trusted, true);
      assert.match(r.tls?.certificate.chain[0]?.subject ?? '', /^CN=localhost\b/);
      assert.ok(r.tls?.certificate.chain[0]?.subjectAltNames.includes('IP:127.0.0.1'));
      assert.ok(Math.abs((r.tls?.certificate.chain[0]?.daysLeft ?? 0) - 19) <= 1);
      assert.equal(r.tls?.clientCertificate.requested, false);
      assert.equal(r.h2?.via, 'h2');
      assert.equal(r.h2?.effective.MAX_CONCURRENT_STREAMS, 100);
      assert.equal(r.h2?.effective.INITIAL_WINDOW_SIZE, 1 << 20);
      assert.ok(r.h2?.notSent.includes('MAX_HEADER_LIST_SIZE'));
      assert.deepEqual(r.keepAlive && [r.keepAlive.connections, r.keepAlive.honoured], [1, true]);
      assert.deepEqual(r.protocols.altSvc?.protocols, ['h3']);
      assert.deepEqual(
        r.responses.map((x) => [x.protocol, x.status]),
        [
          ['http/1.1', 200],
          ['h2', 200],
        ],
      );
      assert.deepEqual(r.expectations?.unmet, []);
      const ids = r.findings.map((f) => f.id);
      assert.ok(
        ids.includes('cert-expires-soon') && ids.includes('alt-svc-h3') && ids.includes('no-compression'),
        ids.join(),
      );
    });
  });

  test('a server without h2 (http/1.1 only): h2 not offered, and the gate says so', async () => {
    const start = () =>
      listen(
        // A plain TLS + HTTP/1.1 server: https.createServer, no ALPN h2.
        https.createServer(
          { cert: certs.serverPem, key: certs.serverKeyPem },
          routes,
        ) as unknown as http.Server,
      );
    await withServer(start, async (port) => {
      const r = await probe(`https://localhost:${port}/`, { ca: file('ca.pem'), expect: ['h2'] });
      assert.equal(r.protocols.h2.supported, false);
      assert.equal(r.protocols['http/1.1'].supported, true);
      assert.equal(r.h2, undefined);
      assert.equal(r.expectations?.unmet[0]?.expectation, 'h2');
      assert.ok(r.findings.some((f) => f.id === 'h2-not-offered'));
    });
  });

  test('an h2-only TLS server (no HTTP/1.1 fallback): ALPN http/1.1 refused, keep-alive not probed', async () => {
    await withServer(tlsServer({ allowHTTP1: false }), async (port) => {
      const r = await probe(`https://127.0.0.1:${port}/`, {
        ca: file('ca.pem'),
        expect: ['h2', 'no-http1.1'],
      });
      assert.equal(r.tls?.alpn['http/1.1'].supported, false);
      assert.match(r.tls?.alpn['http/1.1'].detail ?? '', /no_application_protocol/);
      assert.equal(r.keepAlive, undefined);
      assert.deepEqual(
        r.responses.map((x) => x.protocol),
        ['h2'],
      );
      assert.ok(r.findings.some((f) => f.id === 'http1-refused-over-tls'));
      assert.deepEqual(r.expectations?.unmet, []);
    });
  });

  test('mTLS required: detected without a certificate (HTTP not probed), and fully probed with --cert/--key', async () => {
    await withServer(tlsServer({ requestCert: true, rejectUnauthorized: true }), async (port) => {
      const url = `https://127.0.0.1:${port}/`;
      const bare = await probe(url, { ca: file('ca.pem'), expect: ['mtls'] });
      assert.equal(bare.tls?.clientCertificate.requested, true);
      assert.equal(bare.tls?.clientCertificate.required, true);
      assert.equal(bare.h2, undefined);
      assert.equal(bare.protocols.h2.supported, true, 'ALPN h2 is still known from the handshake');
      assert.deepEqual(bare.expectations?.unmet, []);
      assert.ok(bare.findings.some((f) => f.id === 'mtls-required' && /--cert/.test(f.text)));

      const withCert = await probe(url, {
        ca: file('ca.pem'),
        cert: file('client.pem'),
        key: file('client.key'),
      });
      assert.equal(withCert.tls?.clientCertificate.required, true);
      assert.equal(withCert.tls?.clientCertificate.presented, true);
      assert.equal(withCert.h2?.effective.MAX_CONCURRENT_STREAMS, 100);
      assert.equal(withCert.keepAlive?.honoured, true);
    });
  });

  test('mTLS required over TLS 1.2 only (the refusal comes as a handshake_failure alert)', async () => {
    await withServer(
      tlsServer({ requestCert: true, rejectUnauthorized: true, maxVersion: 'TLSv1.2' }),
      async (port) => {
        const r = await probe(`https://127.0.0.1:${port}/`, { ca: file('ca.pem') });
        assert.equal(r.tls?.clientCertificate.required, true);
        assert.equal(r.tls?.versions['TLSv1.2'].supported, true);
        assert.equal(r.tls?.versions['TLSv1.3'].supported, false);
        assert.ok(r.findings.some((f) => f.id === 'tls13-not-accepted'));
        // No handshake completed without a certificate: trust is unknown, not "untrusted".
        assert.equal(r.tls?.certificate.trusted, null);
        assert.ok(!r.findings.some((f) => f.id === 'cert-untrusted'));
        const withCert = await probe(`https://127.0.0.1:${port}/`, {
          ca: file('ca.pem'),
          cert: file('client.pem'),
          key: file('client.key'),
        });
        assert.equal(withCert.tls?.certificate.trusted, true);
        assert.equal(withCert.tls?.negotiated.version, 'TLSv1.2');
        assert.equal(withCert.h2?.effective.MAX_CONCURRENT_STREAMS, 100);
      },
    );
  });
});

describe('TLS target (node:http2 secure server): OCSP, old TLS versions, an optional client certificate, trust', () => {
  test('OCSP stapling: reported when the server staples a response (status_request)', async () => {
    await withServer(
      () =>
        listen(
          (() => {
            const s = http2.createSecureServer(
              { cert: certs.serverPem, key: certs.serverKeyPem, allowHTTP1: true },
              routes,
            );
            // Node hands the bytes to OpenSSL as the stapled response; the probe only asks whether one came.
            s.on(
              'OCSPRequest',
              (_cert: Buffer, _issuer: Buffer, cb: (err: Error | null, resp?: Buffer) => void) =>
                cb(null, Buffer.from('stapled OCSP response')),
            );
            return s;
          })(),
        ),
      async (port) => {
        const r = await probe(`https://127.0.0.1:${port}/`, { ca: file('ca.pem'), expect: ['ocsp'] });
        assert.equal(r.tls?.ocspStapled, true);
        assert.deepEqual(r.expectations?.unmet, []);
      },
    );
    // And without stapling: not reported.
    await withServer(tlsServer(), async (port) => {
      const r = await probe(`https://127.0.0.1:${port}/`, { ca: file('ca.pem') });
      assert.equal(r.tls?.ocspStapled, false);
    });
  });

  test('a server that still accepts TLS 1.0 and 1.1 is flagged', async () => {
    await withServer(tlsServer({ minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' }), async (port) => {
      const r = await probe(`https://127.0.0.1:${port}/`, { ca: file('ca.pem'), expect: ['no-tls1.0'] });
      assert.equal(r.tls?.versions.TLSv1.supported, true, r.tls?.versions.TLSv1.detail);
      assert.equal(r.tls?.versions['TLSv1.1'].supported, true);
      assert.match(
        r.findings.find((f) => f.id === 'legacy-tls-accepted')?.text ?? '',
        /TLSv1 and TLSv1\.1 are accepted/,
      );
      assert.equal(r.expectations?.unmet[0]?.expectation, 'no-tls1.0');
    });
  });

  test('a server that closes on a TLS 1.0/1.1 ClientHello without an alert (as h2o does) refuses them', async () => {
    const start = tlsServer();
    const inner = await start();
    // In front of it: a ClientHello whose client_version is below TLS 1.2 (bytes 9–10) is answered
    // by closing the connection; any other is handed to the TLS server unchanged.
    const front = net.createServer((sock) => {
      sock.once('data', (b: Buffer) => {
        const version = b.length > 10 ? b.readUInt16BE(9) : 0;
        if (version < 0x0303) {
          sock.destroy();
          return;
        }
        const up = net.connect(inner.port, '127.0.0.1', () => {
          up.write(b);
          sock.pipe(up).pipe(sock);
        });
        up.on('error', () => sock.destroy());
        sock.on('error', () => up.destroy());
      });
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const port = (front.address() as net.AddressInfo).port;
    try {
      const r = await probe(`https://127.0.0.1:${port}/`, { ca: file('ca.pem'), expect: ['no-tls1.0'] });
      assert.equal(r.tls?.versions['TLSv1.3'].supported, true, r.tls?.versions['TLSv1.3'].detail);
      for (const v of ['TLSv1', 'TLSv1.1'] as const) {
        assert.equal(r.tls?.versions[v].supported, false, r.tls?.versions[v].detail);
        assert.match(
          r.tls?.versions[v].detail ?? '',
          /closed the connection .* without a ServerHello or an alert/,
        );
      }
      assert.equal(r.expectations?.unmet.length, 0, JSON.stringify(r.expectations));
    } finally {
      front.close();
      await inner.close();
    }
  });

  test('client certificate requested but optional', async () => {
    await withServer(tlsServer({ requestCert: true, rejectUnauthorized: false }), async (port) => {
      const r = await probe(`https://127.0.0.1:${port}/`, {
        ca: file('ca.pem'),
        expect: ['client-cert', 'no-mtls'],
      });
      assert.equal(r.tls?.clientCertificate.requested, true);
      assert.equal(r.tls?.clientCertificate.required, false);
      assert.ok(r.h2);
      assert.deepEqual(r.expectations?.unmet, []);
    });
  });

  test('a self-signed CA without --ca: H2LAB_ERR_PROBE_UNTRUSTED; with --insecure: probed, reported untrusted', async () => {
    await withServer(tlsServer({ cert: untrusted.cert, key: untrusted.key }), async (port) => {
      const url = `https://127.0.0.1:${port}/`;
      await expectError(
        probe(url),
        'H2LAB_ERR_PROBE_UNTRUSTED',
        /not trusted \(SELF_SIGNED_CERT_IN_CHAIN.*--ca FILE.*--insecure/,
      );
      // Another CA does not help either.
      await expectError(
        probe(url, { ca: file('ca.pem') }),
        'H2LAB_ERR_PROBE_UNTRUSTED',
        /SELF_SIGNED_CERT_IN_CHAIN/,
      );
      const r = await probe(url, { insecure: true, expect: ['trusted'] });
      assert.equal(r.tls?.certificate.trusted, false);
      assert.equal(r.tls?.certificate.verifyError, 'SELF_SIGNED_CERT_IN_CHAIN');
      assert.equal(r.tls?.certificate.chain.at(-1)?.selfSigned, true);
      assert.equal(r.expectations?.unmet[0]?.expectation, 'trusted');
      assert.ok(r.findings.some((f) => f.id === 'cert-untrusted'));
    });
  });
});

describe('cleartext targets', () => {
  test('h2c-only server (node:http2 createServer): prior knowledge yes, Upgrade no, HTTP/1.1 no', async () => {
    await withServer(
      () => listen(http2.createServer({}, routes)),
      async (port) => {
        const r = await probe(`http://127.0.0.1:${port}/`, { expect: ['h2c', 'no-h2c-upgrade'] });
        assert.equal(r.protocols.h2c.supported, true);
        assert.equal(r.protocols.h2cUpgrade.supported, false);
        assert.match(r.protocols.h2cUpgrade.detail, /only HTTP\/2/);
        assert.equal(r.protocols['http/1.1'].supported, false);
        assert.equal(r.h2?.via, 'h2c');
        assert.deepEqual(r.h2?.settingsSent, [], 'Node 20 sends an empty SETTINGS frame by default');
        assert.equal(r.h2?.effective.MAX_CONCURRENT_STREAMS, null);
        assert.ok(r.findings.some((f) => f.id === 'h2-streams-unlimited'));
        assert.deepEqual(r.expectations?.unmet, []);
      },
    );
  });

  test('an IPv6 literal URL (http://[::1]:port/)', async (t) => {
    const server = http2.createServer({}, routes);
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(0, '::1', () => resolve(true));
    });
    if (!bound) {
      t.skip('::1 is not available on this machine');
      return;
    }
    try {
      const { port } = server.address() as net.AddressInfo;
      const r = await probe(`http://[::1]:${port}/`, { expect: ['h2c'] });
      assert.equal(r.target.address, '::1');
      assert.deepEqual(r.expectations?.unmet, []);
    } finally {
      server.close();
    }
  });

  test('HTTP/1.1-only server with keep-alive: no h2c either way', async () => {
    await withServer(
      () => listen(http.createServer(routes)),
      async (port) => {
        const r = await probe(`http://127.0.0.1:${port}/`, { expect: ['keepalive', 'h2c'] });
        assert.equal(r.protocols['http/1.1'].supported, true);
        assert.equal(r.protocols.h2c.supported, false);
        assert.equal(r.protocols.h2cUpgrade.supported, false);
        assert.equal(r.keepAlive?.honoured, true);
        assert.deepEqual(
          r.expectations?.unmet.map((u) => u.expectation),
          ['h2c'],
        );
      },
    );
  });

  test('a churning server (closes every HTTP/1.1 connection after one response) is reported as such', async () => {
    await withServer(churningServer, async (port) => {
      const r = await probe(`http://127.0.0.1:${port}/`, { keepAliveRequests: 4 });
      assert.deepEqual(r.keepAlive && [r.keepAlive.requests, r.keepAlive.connections, r.keepAlive.honoured], [
        4,
        4,
        false,
      ]);
      assert.ok(r.keepAlive?.connectionHeaders.includes('close'));
      const f = r.findings.find((x) => x.id === 'keepalive-not-honoured');
      assert.equal(f?.level, 'warn');
      assert.match(f?.text ?? '', /4 requests in a row needed 4 connections/);
    });
  });

  test('h2c by Upgrade (a server that answers 101 and then speaks HTTP/2)', async () => {
    await withServer(upgradingServer, async (port) => {
      const r = await probe(`http://127.0.0.1:${port}/`, { expect: ['h2c-upgrade', 'http1.1'] });
      assert.equal(r.protocols.h2cUpgrade.supported, true);
      assert.match(r.protocols.h2cUpgrade.detail, /101/);
      assert.equal(r.protocols.h2c.supported, false, 'prior knowledge goes to the HTTP/1.1 parser');
      assert.equal(r.h2?.effective.MAX_CONCURRENT_STREAMS, 64, 'SETTINGS read after the 101');
      assert.deepEqual(r.expectations?.unmet, []);
    });
  });
});

describe('response behaviour', () => {
  test('--large: a streamed body and a spooled body are told apart', async () => {
    await withServer(
      () => listen(http.createServer(routes)),
      async (port) => {
        const streamed = await probe(`http://127.0.0.1:${port}/`, {
          largePath: '/stream',
          expect: ['streaming'],
        });
        assert.equal(streamed.large?.verdict, 'streamed', streamed.large?.detail);
        assert.equal(streamed.large?.bodyBytes, 8 * 64 * 1024);
        assert.deepEqual(streamed.expectations?.unmet, []);
        const spooled = await probe(`http://127.0.0.1:${port}/`, { largePath: '/spooled' });
        assert.equal(spooled.large?.verdict, 'late', spooled.large?.detail);
        assert.ok(
          (spooled.large?.firstBodyByteMs ?? 0) >= 250,
          `first byte at ${spooled.large?.firstBodyByteMs} ms, expected ≥ 250 (300 ms delay)`,
        );
        assert.ok(spooled.findings.some((f) => f.id === 'large-late'));
      },
    );
  });

  test('--wait-idle: the server closes idle HTTP/1.1 and HTTP/2 connections after its timeout', async () => {
    const h1 = http.createServer(routes);
    h1.keepAliveTimeout = 300;
    const h2 = http2.createServer({}, routes);
    h2.setTimeout(300);
    for (const [server, proto] of [
      [h1, 'http/1.1'],
      [h2, 'h2c'],
    ] as const) {
      await withServer(
        () => listen(server),
        async (port) => {
          const r = await probe(`http://127.0.0.1:${port}/`, { waitIdleMs: 3000 });
          const idle = r.idle?.find((i) => i.protocol === proto);
          assert.ok(
            idle,
            `an idle report for ${proto}: ${JSON.stringify(r.idle)} ${JSON.stringify(r.problems)}`,
          );
          assert.ok(
            idle.closedAfterMs !== null && idle.closedAfterMs >= 200 && idle.closedAfterMs < 2500,
            `closed after ${idle.closedAfterMs} ms (timeout 300 ms)`,
          );
        },
      );
    }
  });
});

test('--wait-idle on HTTP/2 measures the idle timer after a response, not the one before any request (Apache: 5 s against 60 s)', async () => {
  // A server that keeps a connection without requests open, and closes one 300 ms after its last
  // stream: the probe's idle connection carries one request first, as a client's has.
  const h2 = http2.createServer({}, routes);
  h2.on('session', (session) => {
    session.on('stream', (stream) => {
      stream.on('close', () => {
        session.setTimeout(300, () => session.close());
      });
    });
  });
  await withServer(
    () => listen(h2),
    async (port) => {
      const r = await probe(`http://127.0.0.1:${port}/`, { waitIdleMs: 3000 });
      const idle = r.idle?.find((i) => i.protocol === 'h2c');
      assert.ok(idle, `an idle report: ${JSON.stringify(r.idle)} ${JSON.stringify(r.problems)}`);
      assert.ok(
        idle.closedAfterMs !== null && idle.closedAfterMs >= 200 && idle.closedAfterMs < 2500,
        `closed after ${idle.closedAfterMs} ms (300 ms after the last stream)`,
      );
    },
  );
});

describe('errors: each a clear message with its own code', () => {
  test('unreachable port', async () => {
    const free = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
    });
    await expectError(
      probe(`http://127.0.0.1:${free}/`),
      'H2LAB_ERR_PROBE_UNREACHABLE',
      /ECONNREFUSED.*check the host and port/,
    );
    await expectError(probe(`https://127.0.0.1:${free}/`), 'H2LAB_ERR_PROBE_UNREACHABLE', /ECONNREFUSED/);
  });

  test('unknown host', async () => {
    await expectError(
      probe('https://no-such-host.invalid/'),
      'H2LAB_ERR_PROBE_UNREACHABLE',
      /cannot resolve no-such-host\.invalid/,
    );
  });

  test('TLS to a plain port', async () => {
    await withServer(
      () => listen(http.createServer(routes)),
      async (port) => {
        await expectError(
          probe(`https://127.0.0.1:${port}/`),
          'H2LAB_ERR_PROBE_NOT_TLS',
          /does not speak TLS.*HTTP\/1\.1 400.*use an http:\/\/ URL/,
        );
      },
    );
  });

  test('plain HTTP to a TLS port', async () => {
    await withServer(tlsServer(), async (port) => {
      await expectError(
        probe(`http://127.0.0.1:${port}/`),
        'H2LAB_ERR_PROBE_TLS_PORT',
        new RegExp(`use https://127\\.0\\.0\\.1:${port}/`),
      );
    });
  });

  test('a port that accepts and never answers: timeout (https:// and http://, not "no HTTP")', async () => {
    const silent = net.createServer(() => {});
    await withServer(
      () => listen(silent as unknown as http.Server),
      async (port) => {
        await expectError(
          probe(`https://127.0.0.1:${port}/`, { timeoutMs: 300 }),
          'H2LAB_ERR_PROBE_TIMEOUT',
          /did not answer in time.*--timeout/,
        );
        await expectError(
          probe(`http://127.0.0.1:${port}/`, { timeoutMs: 300 }),
          'H2LAB_ERR_PROBE_TIMEOUT',
          /answered nothing within 300 ms/,
        );
      },
    );
  });

  test('bad URL, bad --expect, unreadable --ca, --cert without --key: usage errors before any traffic', async () => {
    await expectError(probe('ftp://example.com/'), 'H2LAB_ERR_PROBE_BAD_URL', /http:\/\/ or https:\/\//);
    await expectError(probe('not a url'), 'H2LAB_ERR_PROBE_BAD_URL', /not a URL/);
    await expectError(
      probe('http://127.0.0.1:1/', { expect: ['h4'] }),
      'H2LAB_ERR_INVALID_OPTION',
      /--expect "h4".*h2c/,
    );
    await expectError(
      probe('https://127.0.0.1:1/', { ca: file('missing.pem') }),
      'H2LAB_ERR_FILE_UNREADABLE',
      /--ca .*missing\.pem/,
    );
    await expectError(
      probe('https://127.0.0.1:1/', { cert: file('client.pem') }),
      'H2LAB_ERR_TLS_KEY_MISSING',
      /--key/,
    );
  });
});
