/**
 * The load client under faults of the server itself: a fixture server killed mid-run and
 * started again, nginx rotating its connections, a server resetting every N-th stream, and mTLS
 * refusals in a loop. Every request is accounted for (`total = responses by status + Σ failures by
 * class`) and, where the server counts its handlers, `attempts − unprocessed` is that count. Real
 * sockets on loopback; every run bounded in count and time.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runLoad } from '../../src/load/index.ts';
import type { RunResult } from '../../src/model/index.ts';
import { testCerts } from '../helpers/certs.ts';
import { scrape, spawnFixtureProcess, startFixture } from '../helpers/fixture.ts';
import { freePort, haveNginx, startNginx } from '../helpers/nginx.ts';

type Counts = RunResult['counts'];

const sum = (o: Partial<Record<string, number>>): number =>
  Object.values(o).reduce<number>((a, b) => a + (b ?? 0), 0);

/** `total = responses by status + Σ failures by class`, and ok + failed = total. */
function assertAccounted(c: Counts, label: string): void {
  assert.equal(c.total, sum(c.byStatus) + sum(c.byFailure), `responses + failures: ${label}`);
  assert.equal(c.ok + c.failed, c.total, `ok + failed: ${label}`);
}

/** Handler runs the fixture counted for one route, all protocols (its /metrics). */
function handled(m: Awaited<ReturnType<typeof scrape>>, route: string): number {
  return sum((m.requests as Record<string, Record<string, number>>)[route] ?? {});
}

/**
 * The most connection attempts one pool slot can make in an outage of `ms`: the first, then one
 * after each backoff delay at its shortest (equal jitter: half of 50 ms × 2^k, at most 1 s).
 */
function maxAttempts(ms: number): number {
  let n = 1;
  let t = 0;
  for (let k = 0; ; k++) {
    t += Math.min(1000, 50 * 2 ** k) / 2;
    if (t > ms) return n;
    n++;
  }
}

test('a server SIGKILLed mid-run and started again 1 s later on the same port: every request accounted, the run ends on schedule', async () => {
  const first = spawnFixtureProcess();
  // Loaded now, so starting it later costs only the listen.
  const second = spawnFixtureProcess();
  try {
    const { plainUrl } = await first.start({ tls: false });
    const port = Number(new URL(plainUrl!).port);
    const durationMs = 4000;
    const runs = (
      [
        ['h1', 4],
        ['h2', 1],
        ['h2-pool', 2],
      ] as const
    ).map(([protocol, connections]) => ({
      protocol,
      connections,
      run: runLoad({
        url: `${plainUrl}/bytes/100`,
        protocol,
        connections,
        concurrency: 8,
        durationMs,
        maxErrorRate: 1,
      }).done,
    }));
    const t0 = performance.now();
    await sleep(1000);
    const killingMs = performance.now() - t0;
    await first.kill();
    const killedMs = performance.now() - t0;
    await sleep(1000);
    await second.start({ tls: false, port });
    const upMs = performance.now() - t0;
    for (const { protocol, connections, run } of runs) {
      const r = await run;
      const tookMs = performance.now() - t0;
      const c = r.counts;
      const label = `${protocol}: ${JSON.stringify(c)}; killed at ${Math.round(killedMs)} ms, up again at ${Math.round(upMs)} ms`;
      console.log(`# kill+restart ${label}`);
      assertAccounted(c, label);
      assert.equal(r.error, undefined, `the run is not ended by the outage: ${JSON.stringify(r.error)}`);
      for (const cls of Object.keys(c.byFailure))
        assert.ok(cls === 'connect' || cls === 'reset', `failure class ${cls}: ${label}`);
      // Cut: the requests in flight at the kill, and those a lane sent on a session whose end the
      // client had not read yet (h2-pool: the second session) or on a connection the dying
      // listener still accepted: at most one per lane and connection.
      assert.ok((c.byFailure.reset ?? 0) <= 8 * (connections + 1), `resets: ${label}`);
      // Each backoff round is at most one attempt per connection slot (one more for the timing of
      // the restart as the client sees it): about 7 per slot for a 1.1 s outage.
      const connect = c.byFailure.connect ?? 0;
      const bound = connections * (maxAttempts(upMs - killingMs) + 1);
      assert.ok(connect >= 1 && connect <= bound, `connect failures ${connect} (bound ${bound}): ${label}`);
      assert.ok(c.ok > 0, label);
      assert.ok(tookMs < durationMs + 2000, `ended on schedule: ${Math.round(tookMs)} ms`);
    }
    // The restarted server served every protocol: the runs reconnected, not just ended.
    const m = await (await fetch(`${plainUrl}/metrics?format=json`)).json();
    const row = (m as { requests: Record<string, Record<string, number>> }).requests.bytes!;
    console.log(`# restarted server handled ${JSON.stringify(row)}`);
    assert.ok((row['http/1.1'] ?? 0) > 0 && (row.h2c ?? 0) > 0, JSON.stringify(row));
  } finally {
    await first.kill();
    await second.kill();
  }
});

test('nginx rotating connections (keepalive_requests 100): every request accounted, rotations cost retries not failures, its access log = attempts − unprocessed', {
  skip: haveNginx() ? false : 'nginx is not installed (apt-get install nginx)',
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-nginx-rotate-'));
  const [h1Port, h2Port] = [await freePort(), await freePort()];
  // nginx 1.19.7+ ends HTTP/2 connections after keepalive_requests too (http2_max_requests is
  // obsolete there); the GOAWAY's last-stream-id names the 100th stream.
  const server = (port: number, http2: string, log: string) =>
    `server { listen 127.0.0.1:${port}${http2}; keepalive_requests 100; access_log ${join(dir, log)}; location / { return 200 "ok\\n"; } }`;
  const nginx = await startNginx(
    dir,
    `${server(h1Port, '', 'h1.log')}\n${server(h2Port, ' http2', 'h2.log')}`,
    [h1Port, h2Port],
  );
  const lines = (log: string): number => {
    try {
      return readFileSync(join(dir, log), 'utf8').split('\n').filter(Boolean).length;
    } catch {
      return 0;
    }
  };
  try {
    for (const [protocol, port, log, connections] of [
      ['h1', h1Port, 'h1.log', 4],
      ['h2', h2Port, 'h2.log', 1],
      ['h2-pool', h2Port, 'h2.log', 4],
    ] as const) {
      const before = lines(log);
      const r = await runLoad({
        url: `http://127.0.0.1:${port}/`,
        protocol,
        connections,
        concurrency: 16,
        requests: 1000,
        maxErrorRate: 1,
      }).done;
      const c = r.counts;
      // nginx writes the access log line when a request ends; give the last ones a moment.
      let logged = lines(log) - before;
      for (let i = 0; i < 20 && logged < (c.attempts ?? 0) - (c.unprocessed ?? 0); i++) {
        await sleep(25);
        logged = lines(log) - before;
      }
      const rotations = (r.connections.lifetimes?.connections ?? []).filter(
        (l) => l.closedBy === 'goaway',
      ).length;
      const label = `${protocol}: ${JSON.stringify(c)}, nginx logged ${logged}, connections opened ${r.connections.opened}, ended by GOAWAY ${rotations}`;
      console.log(`# nginx ${label}`);
      assertAccounted(c, label);
      assert.equal(c.total, 1000, label);
      assert.equal(c.ok, 1000, `rotations are not failures: ${label}`);
      assert.deepEqual(c.byFailure, {}, label);
      assert.equal((c.attempts ?? 0) - (c.unprocessed ?? 0), logged, label);
      // 1000 requests on connections of 100: at least 10 connections.
      assert.ok(r.connections.opened >= 10, label);
      if (protocol !== 'h1') {
        // 1000 requests over sessions of 100: every session but those open at the end got a GOAWAY.
        assert.ok(rotations >= 10 - connections, label);
        // One session: the streams past the GOAWAY's last id are retried. A pool may route around a
        // rotating session entirely (while a replacement opens, the others take their share only).
        if (connections === 1) assert.ok((c.retried ?? 0) > 0 && (c.unprocessed ?? 0) > 0, label);
      }
    }
  } finally {
    await nginx.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a server resetting every 10th stream: exactly count/10 failures, all classed reset, the server ran every attempt', async () => {
  const srv = await startFixture({ tls: false });
  try {
    for (const protocol of ['h1', 'h2', 'h2-pool'] as const) {
      const before = handled(await scrape(srv), 'reset');
      const r = await runLoad({
        url: `${srv.plainUrl}/reset?every=10`,
        protocol,
        connections: protocol === 'h2' ? 1 : 4,
        concurrency: 8,
        requests: 1000,
        maxErrorRate: 1,
      }).done;
      const ran = handled(await scrape(srv), 'reset') - before;
      const c = r.counts;
      const label = `${protocol}: ${JSON.stringify(c)}, server ran ${ran}`;
      console.log(`# every-10th ${label}`);
      assertAccounted(c, label);
      assert.equal(c.total, 1000, label);
      assert.deepEqual(c.byFailure, { reset: 100 }, label);
      assert.deepEqual(c.byStatus, { 200: 900 }, label);
      assert.equal((c.attempts ?? 0) - (c.unprocessed ?? 0), ran, label);
    }
  } finally {
    await srv.close();
  }
});

/** Open file descriptors of this process (the server runs in it). */
const fds = (): number => readdirSync('/proc/self/fd').length;

test('mTLS refusals in a loop (--client-auth require): 200 handshakes without a certificate and 200 with another CA’s, each refused and named, no fd left, bounded RSS', async () => {
  const good = await testCerts();
  const other = await testCerts();
  const srv = await startFixture({
    plain: false,
    cert: good.path.serverPem,
    key: good.path.serverKeyPem,
    ca: good.path.caPem,
    clientAuth: 'require',
  });
  try {
    const refusedByServer = async () => (await srv.metrics()).connections.total.tls.unknown;
    const fd0 = fds();
    const rss0 = process.memoryUsage().rss;
    for (const [label, cert, cls, hint] of [
      // TLS 1.3 alert 116 (certificate_required) after the client's Finished.
      ['no certificate', undefined, 'tls', 'client-cert-required'],
      // Node's TLS server verifies the chain in JavaScript and destroys the socket: no alert, so the
      // client sees a close under its first request; the diagnosis names the cause.
      ['another CA', other, 'reset', 'client-cert-refused'],
    ] as const) {
      const t0 = performance.now();
      let refusedAll = 0;
      let runs = 0;
      const seen: Record<string, number> = {};
      // A run asks what is wrong after 20 failures without a success and stops with the hint, so
      // the loop is of runs: until the server has refused 200 handshakes (about 8 runs), at most 30.
      while (refusedAll < 200 && runs < 30) {
        runs++;
        const refused0 = await refusedByServer();
        const r = await runLoad({
          url: `${srv.tlsUrl}/healthz`,
          protocol: 'h1',
          connections: 4,
          concurrency: 4,
          requests: 200,
          ca: good.path.caPem,
          ...(cert ? { cert: cert.path.clientPem, key: cert.path.clientKeyPem } : {}),
          maxErrorRate: 1,
        }).done;
        const c = r.counts;
        const refused = (await refusedByServer()) - refused0;
        refusedAll += refused;
        for (const [k, v] of Object.entries(c.byFailure)) seen[k] = (seen[k] ?? 0) + (v ?? 0);
        const what = `${label} run ${runs}: ${JSON.stringify(c)}, server refused ${refused}, ${JSON.stringify(r.error)}`;
        assertAccounted(c, what);
        assert.equal(c.ok, 0, what);
        assert.equal(r.error?.code, 'H2LAB_ERR_TLS_HANDSHAKE', what);
        assert.equal(r.error?.details?.hint, hint, what);
        // Refused in the handshake, or aborted by the stop (in flight or still being set up).
        for (const k of Object.keys(c.byFailure)) assert.ok(k === cls || k === 'aborted', what);
        assert.ok((c.byFailure[cls] ?? 0) >= 20, what);
        assert.ok((c.byFailure.aborted ?? 0) <= 4, what);
        // Every request that was refused was a handshake the server refused; beyond them, only the
        // connections opened before the run or being set up when it stopped.
        assert.ok(refused >= (c.byFailure[cls] ?? 0) && refused <= c.total + 4, what);
      }
      console.log(
        `# mTLS ${label}: ${runs} runs, the server refused ${refusedAll} handshakes, failures ${JSON.stringify(seen)}, ${Math.round(performance.now() - t0)} ms`,
      );
      assert.ok(refusedAll >= 200, `${label}: ${refusedAll} in ${runs} runs`);
    }
    // h2 and h2-pool open their sessions before the run: refused, the run ends with the TLS code
    // naming the fix (no certificate: alert 116; another CA's: the close right after the handshake).
    for (const protocol of ['h2', 'h2-pool'] as const) {
      for (const h2Client of ['h2lab', 'node'] as const) {
        for (const [cert, hint] of [
          [undefined, 'client-cert-required'],
          [other, 'client-cert-refused'],
        ] as const) {
          const t0 = performance.now();
          const r = await runLoad({
            url: `${srv.tlsUrl}/healthz`,
            protocol,
            h2Client,
            requests: 10,
            ca: good.path.caPem,
            ...(cert ? { cert: cert.path.clientPem, key: cert.path.clientKeyPem } : {}),
            maxErrorRate: 1,
          }).done;
          const took = performance.now() - t0;
          const what = `${protocol}/${h2Client} ${hint}: ${JSON.stringify(r.error)} in ${Math.round(took)} ms`;
          assert.equal(r.counts.ok, 0, what);
          assert.equal(r.error?.code, 'H2LAB_ERR_TLS_HANDSHAKE', what);
          assert.equal(r.error?.details?.hint, hint, what);
          // node:http2 did not see the alert and waited for SETTINGS until the 10 s connect timeout.
          assert.ok(took < 3000, what);
        }
      }
    }
    let fd = fds();
    for (let i = 0; i < 40 && fd > fd0; i++) {
      await sleep(50);
      fd = fds();
    }
    const rssMiB = (process.memoryUsage().rss - rss0) / 2 ** 20;
    console.log(`# mTLS fds ${fd0} → ${fd}, RSS +${rssMiB.toFixed(1)} MiB`);
    assert.ok(fd <= fd0, `fds ${fd0} → ${fd}`);
    assert.ok(rssMiB < 64, `RSS +${rssMiB.toFixed(1)} MiB`);
  } finally {
    await srv.close(0);
    good.cleanup();
    other.cleanup();
  }
});
