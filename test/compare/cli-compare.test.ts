// `h2lab compare` end to end, as a child process over real loopback sockets: against the embedded
// fixture server (the table is printed, results.json and the reports are written), against a TLS
// server that offers only HTTP/1.1 (h2 cells "not offered by the server", h1 cells still run), and
// killed with SIGINT mid-run (a parseable results.json with the finished runs).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type CompareResult, compareResultSchema } from '../../src/model/compare.ts';
import { testCerts } from '../helpers/certs.ts';
import { h2lab } from '../helpers/cli.ts';

let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'h2lab-compare-cli-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** `h2lab ...args`, with the time a comparison needs. */
const run = (args: string[], onStart?: (c: ChildProcess) => void) =>
  h2lab(args, { timeoutMs: 240_000, ...(onStart ? { onStart } : {}) });

/**
 * Calls `act(child)` once results.json at `path` holds at least `runs` finished runs (polled every
 * 50 ms until the child exits).
 */
function onceRunsOnDisk(path: string, runs: number, act: (c: ChildProcess) => void) {
  return (c: ChildProcess) => {
    const poll = setInterval(() => {
      try {
        const res = JSON.parse(readFileSync(path, 'utf8')) as CompareResult;
        if (res.cells.reduce((n, x) => n + x.runs.length, 0) < runs) return;
        clearInterval(poll);
        act(c);
      } catch {
        // not written yet, or mid-rename
      }
    }, 50);
    c.on('exit', () => clearInterval(poll));
  };
}

/** Two 100 ms runs a cell, none discarded, written to the directory that follows. */
const SHORT_RUNS = ['--runs', '2', '--warmup-runs', '0', '--duration', '100ms', '--out'];

function readResult(path: string): CompareResult {
  return compareResultSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
}

test('compare against the embedded fixture server prints the table and writes results and reports', async () => {
  const out = join(dir, 'embedded');
  const r = await run([
    'compare',
    '--sizes',
    '1KiB',
    '--concurrency',
    '1,8',
    '--runs',
    '3',
    '--duration',
    '200ms',
    '--window',
    'node',
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /h2lab compare — https:\/\/127\.0\.0\.1:\d+\/ \(embedded fixture server\)/);
  assert.match(r.stdout, /1 KiB responses/);
  for (const s of ['h1', 'h2', 'h2-pool']) assert.match(r.stdout, new RegExp(`\\s${s}\\s+[\\d,.]+ \\(`));
  assert.match(r.stdout, /Verdict/);
  // The settings that can decide the outcome, as the runs recorded them, under the header.
  assert.match(r.stdout, /Settings that can decide the outcome/);
  assert.match(
    r.stdout.replace(/\s+/g, ' '),
    /HTTP\/2 windows node \(node:http2's and RFC 9113's initial 64 KiB\): stream 64\.0 KiB/,
  );
  assert.match(r.stdout, /h1 connections\s+c=1: 1, c=8: 6/);
  assert.match(r.stdout, /TLS\s+TLSv1\.[23]/);
  assert.match(r.stdout, /server stream limit\s+SETTINGS_MAX_CONCURRENT_STREAMS \d+/);
  assert.match(readFileSync(join(out, 'report.html'), 'utf8'), /<th>HTTP\/2 windows<\/th><td>node/);
  const result = readResult(join(out, 'results.json'));
  assert.equal(result.status, 'complete');
  assert.equal(result.cells.length, 6);
  for (const c of result.cells) {
    assert.equal(c.status, 'done', `${c.id}: ${c.note}`);
    assert.equal(c.runs.length, 3);
    assert.equal(c.runs[0]!.protocol.negotiated, c.protocol === 'h1' ? 'http/1.1' : 'h2');
    // --window is the stated window of every HTTP/2 run, carried by h2lab's own client.
    if (c.protocol !== 'h1') {
      assert.equal(c.runs[0]!.transport.window?.preset, 'node');
      assert.equal(c.runs[0]!.transport.client, 'h2lab');
    }
    // The server's own view was read around every run.
    assert.ok((c.runs[1]!.server?.requests ?? 0) > 0, `${c.id} has no server view`);
  }
  assert.ok(result.comparisons.length > 0);
  assert.ok(existsSync(join(out, 'report.html')) && existsSync(join(out, 'report.md')));
});

test('against a TLS server that offers only HTTP/1.1, h2 cells are "not offered" and h1 cells run', async () => {
  const certs = await testCerts();
  // node:https offers no ALPN protocol but http/1.1: a client asking for h2 is refused it.
  const server = https.createServer(
    { cert: certs.serverPem, key: certs.serverKeyPem, ALPNProtocols: ['http/1.1'] },
    (req, res) => {
      req.resume();
      res.end('hello');
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    const out = join(dir, 'h1only');
    const r = await run([
      'compare',
      `https://127.0.0.1:${port}/`,
      '--insecure',
      '--concurrency',
      '1,4',
      '--runs',
      '2',
      '--warmup-runs',
      '0',
      '--duration',
      '200ms',
      '--out',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /not offered by the server/);
    const result = readResult(join(out, 'results.json'));
    for (const c of result.cells) {
      if (c.protocol === 'h1') {
        assert.equal(c.status, 'done', `${c.id}: ${c.note}`);
        assert.ok(c.stats && c.stats.rps.median > 0);
      } else {
        assert.equal(c.status, 'not-offered', `${c.id}: ${c.status} ${c.note}`);
        assert.match(c.note ?? '', /HTTP\/2 not offered by the server/);
      }
    }
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    certs.cleanup();
  }
});

test('a dead target fails every cell, still writes the files and exits 1', async () => {
  const out = join(dir, 'dead');
  const r = await run(['compare', 'https://127.0.0.1:1/', '--concurrency', '1', ...SHORT_RUNS, out]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /H2LAB_ERR_COMPARE_NO_RESULTS/);
  const result = readResult(join(out, 'results.json'));
  assert.equal(result.status, 'failed');
  for (const c of result.cells) {
    assert.equal(c.status, 'failed');
    assert.equal(c.runs.length, 1, 'a failed cell is not retried');
    assert.match(c.note ?? '', /ECONNREFUSED|unreachable/i);
  }
});

test('a target that stops after the first run: its cells failed, every file written, exit 1', async () => {
  // An HTTP/1.1 server that stops listening when the first run's connection closes (the end of that
  // run; connections that served no request, the path's handshakes before the runs, do not count):
  // the first run is measured, every later one meets a refused port.
  const served = new WeakSet<object>();
  const server = http.createServer((req, res) => {
    if (!served.has(req.socket)) {
      served.add(req.socket);
      req.socket.once('close', () => server.close());
    }
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const out = join(dir, 'stops');
  try {
    const r = await run([
      'compare',
      `http://127.0.0.1:${port}/`,
      '--protocols',
      'h1',
      '--h1-connections',
      '1',
      '--concurrency',
      '1,8',
      ...SHORT_RUNS,
      out,
    ]);
    const result = readResult(join(out, 'results.json'));
    assert.ok(
      result.cells.some((c) => c.runs.some((x) => x.counts.ok > 0)),
      'the first run was measured',
    );
    assert.ok(result.cells.every((c) => c.status === 'failed'));
    assert.equal(result.error, undefined, 'not "no cell produced a measurement"');
    assert.ok(existsSync(join(out, 'report.html')) && existsSync(join(out, 'report.md')));
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /H2LAB_ERR_COMPARE_CELLS_FAILED: 2 of 2 cells failed \(first: url\/c1\/loopback\/h1: the target could not be reached \(ECONNREFUSED/,
    );
  } finally {
    server.close();
  }
});

test('SIGINT mid-run: the run in progress ends at its own duration and is kept, as the words say; exit 130', async (t) => {
  const out = join(dir, 'interrupted');
  const resultsPath = join(out, 'results.json');
  let onDisk = 0;
  let signalledAt = 0;
  const r = await run(
    [
      'compare',
      '--sizes',
      '1KiB',
      '--concurrency',
      '1,8',
      '--runs',
      '5',
      '--duration',
      '2s',
      '--out',
      out,
      '-q',
    ],
    // Interrupt once at least two runs are on disk: the third is then in progress, with up to 2 s to go.
    onceRunsOnDisk(resultsPath, 2, (c) => {
      onDisk = readResult(resultsPath).cells.reduce((n, x) => n + x.runs.length, 0);
      signalledAt = performance.now();
      c.kill('SIGINT');
    }),
  );
  const exitMs = performance.now() - signalledAt;
  t.diagnostic(`${onDisk} runs on disk at SIGINT; exit ${exitMs.toFixed(0)} ms after it`);
  assert.equal(r.code, 130, r.stderr);
  assert.match(
    r.stderr,
    /stopping after the run in progress, which ends at its own --duration or --requests; it and the finished runs are kept/,
  );
  const result = readResult(resultsPath);
  assert.equal(result.status, 'interrupted');
  assert.equal(result.error?.code, 'H2LAB_ERR_INTERRUPTED');
  // What the words promise: the run in progress at the signal was finished and kept, whole.
  const runs = result.cells.flatMap((c) => c.runs);
  assert.equal(runs.length, onDisk + 1, `${runs.length} runs kept, ${onDisk} on disk at the signal`);
  const last = runs.reduce((a, b) =>
    Date.parse(b.environment.startedAt) > Date.parse(a.environment.startedAt) ? b : a,
  );
  assert.ok(last.durationMs >= 1900, `the run in progress measured ${last.durationMs} ms of its 2 s`);
  assert.ok(last.counts.ok > 0);
  // Bounded by that run's own length (2 s), plus its warm-up and the writes.
  assert.ok(exitMs < 2000 + 8000, `exited ${exitMs.toFixed(0)} ms after SIGINT`);
  assert.ok(result.cells.some((c) => c.status === 'interrupted'));
  assert.ok(existsSync(join(out, 'report.html')));
});

test('a second SIGINT quits at once and still writes results.json as "interrupted", with the reports, and says so', async (t) => {
  const out = join(dir, 'interrupted-twice');
  const resultsPath = join(out, 'results.json');
  let secondAt = 0;
  let firstSaid = false;
  const r = await h2lab(
    [
      'compare',
      '--sizes',
      '1KiB',
      '--concurrency',
      '1,8',
      '--runs',
      '5',
      '--duration',
      '3s',
      '--out',
      out,
      '-q',
    ],
    {
      timeoutMs: 240_000,
      // The first once a run is on disk and the next one has 3 s to go; the second as soon as the
      // first was answered, while the stop it started (the run's end, the writes) is under way.
      onStart: onceRunsOnDisk(resultsPath, 1, (c) => c.kill('SIGINT')),
      onStderr: (chunk, c) => {
        if (firstSaid || !/Ctrl-C again to quit now/.test(chunk)) return;
        firstSaid = true;
        secondAt = performance.now();
        c.kill('SIGINT');
      },
    },
  );
  const quitMs = performance.now() - secondAt;
  t.diagnostic(`exit ${r.code} ${quitMs.toFixed(0)} ms after the second SIGINT`);
  assert.equal(r.code, 130, r.stderr);
  assert.ok(secondAt > 0 && quitMs < 2000, `exited ${quitMs.toFixed(0)} ms after the second SIGINT`);
  assert.match(
    r.stderr,
    /interrupted again: quitting now; wrote \S+results\.json \(status "interrupted", the runs finished so far\), report\.md and report\.html/,
  );
  const result = readResult(resultsPath);
  assert.equal(result.status, 'interrupted');
  assert.equal(result.error?.code, 'H2LAB_ERR_INTERRUPTED');
  assert.ok(result.cells.reduce((n, c) => n + c.runs.length, 0) >= 1, 'the finished run is kept');
  assert.ok(result.cells.every((c) => c.status !== 'running' && c.status !== 'pending'));
  assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /interrupted/i);
  assert.ok(existsSync(join(out, 'report.html')));
});
