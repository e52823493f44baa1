/**
 * `h2lab study echo --quick` end to end through the CLI: the shape of its result and the invariants
 * of what it measured (mTLS enforced, every body echoed whole with its headers, one session for the
 * single-session strategy, one stream per session for the independent pool, the lifetime timers),
 * never who wins.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ConnectionLifetime, StudyResult } from '../../src/model/index.ts';
import { parseStudyResult } from '../../src/model/index.ts';
import { apiHeaders } from '../../src/studies/echo/index.ts';
import { multiplexedStrategy } from '../../src/transport/index.ts';
import { h2lab } from '../helpers/cli.ts';
import { testHome } from '../helpers/fixture.ts';

test('apiHeaders: ~N bytes as HTTP/1.1 writes them', () => {
  for (const n of [300, 1000]) {
    const h = apiHeaders(n);
    const wire = Object.entries(h).reduce((s, [k, v]) => s + k.length + v.length + 4, 0);
    assert.equal(wire, n);
    assert.ok(Object.keys(h).every((k) => k === k.toLowerCase()));
  }
});

test('--idle-timeout not below --server-idle-timeout is refused before anything runs', async () => {
  testHome();
  const out = mkdtempSync(join(tmpdir(), 'h2lab-echo-bad-'));
  try {
    const r = await h2lab(
      ['study', 'echo', '--quick', '--out', out, '--idle-timeout', '2s', '--server-idle-timeout', '1s'],
      { timeoutMs: 30_000 },
    );
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--idle-timeout/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('an empty body is refused before anything runs (exit 2, nothing written)', async () => {
  const out = join(tmpdir(), `h2lab-echo-zero-${process.pid}`);
  const r = await h2lab(['study', 'echo', '--bodies', '0', '--out', out], { timeoutMs: 30_000 });
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /H2LAB_ERR_INVALID_OPTION: --bodies "0" is not valid: give body sizes of at least 1 byte/,
  );
  assert.equal(existsSync(out), false);
});

test('h2lab study echo --quick: mTLS echo, the report’s table shape, windows, lifetimes', async () => {
  testHome();
  const out = mkdtempSync(join(tmpdir(), 'h2lab-echo-'));
  try {
    const r = await h2lab(['study', 'echo', '--quick', '--out', out], { timeoutMs: 240_000 });
    assert.equal(r.code, 0, `${r.stderr}\n${r.stdout.slice(-2000)}`);
    const result: StudyResult = parseStudyResult(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')));
    assert.equal(result.status, 'complete');
    assert.deepEqual(
      result.cells.filter((c) => c.status !== 'done').map((c) => `${c.id}: ${c.reason}`),
      [],
    );
    const ids = result.sections.map((s) => s.id);
    for (const id of [
      'mtls',
      'echo-1024-node',
      'echo-1048576-max',
      'summary-1024',
      'summary-1048576',
      'windows-1048576',
      'lifetime',
    ])
      assert.ok(ids.includes(id), `section ${id} in ${ids.join(', ')}`);
    for (const s of result.sections.filter((x) => x.id.startsWith('summary-'))) {
      assert.ok(s.reference, `${s.id} has the report's table beside it`);
      assert.equal(s.table.rows.length, s.reference.table.rows.length);
    }

    // mTLS: the server refuses a client without a certificate; ALPN as each strategy asked.
    const mtls = result.data.mtls as Array<{
      certificate: boolean;
      offered: string;
      negotiated: string;
      ok: number;
    }>;
    assert.equal(mtls.length, 3);
    for (const m of mtls) {
      if (m.certificate) {
        assert.ok(m.ok > 0);
        assert.equal(m.negotiated, m.offered);
      } else assert.equal(m.ok, 0, 'a client without a certificate got no response');
    }

    // Every run echoed every body whole, with the extra headers and the client certificate.
    const one = multiplexedStrategy('one')!.name;
    const pool = multiplexedStrategy('pool')!.name;
    assert.equal(result.compares.length, 8);
    for (const { id, result: c } of result.compares) {
      const body = c.axes.workloads[0]!.bodySizeBytes!;
      for (const cell of c.cells) {
        assert.equal(cell.status, 'done', `${id} ${cell.id}: ${cell.note}`);
        for (const run of cell.runs) {
          assert.ok(run.counts.ok > 0, `${cell.id}: no response`);
          assert.equal(run.throughput.bytesIn, run.counts.ok * body, `${cell.id}: echoed whole`);
          assert.equal(run.throughput.bytesOut, (run.counts.attempts ?? run.counts.total) * body);
          const h = run.options.headers as Record<string, string>;
          assert.ok(Object.keys(h).length >= 3 && 'authorization' in h);
          assert.ok(run.options.cert, 'a client certificate');
          if (cell.protocol === one) assert.equal(run.connections.opened, 1);
          if (cell.protocol !== one && cell.protocol !== pool) assert.equal(run.flowControl, undefined);
          else assert.ok(run.flowControl, `${cell.id}: h2lab's client measured its windows`);
          if (id.endsWith('-independent') && cell.protocol === pool)
            assert.equal(run.connections.peakStreamsPerConnection, 1, 'one stream per session at a time');
        }
      }
    }

    // Lifetimes: each timer ended sessions as configured (quick: server 600 ms, client 300 ms, age 300 ms).
    const lifetime = result.data.lifetime as Array<{ id: string; lives: ConnectionLifetime[] }>;
    const lives = (id: string) => lifetime.find((c) => c.id === id)?.lives ?? [];
    const goaway = lives('server-idle').filter((l) => l.closedBy === 'goaway');
    assert.ok(goaway.length >= 1, JSON.stringify(lives('server-idle')));
    for (const l of goaway) {
      const idle = l.goawayMs! - l.lastActiveMs;
      assert.ok(idle >= 500 && idle < 1600, `GOAWAY ${idle} ms after the last response (600 ms)`);
    }
    const idle = lives('client-idle').filter((l) => l.closedBy === 'idle-timeout');
    assert.ok(idle.length >= 1, JSON.stringify(lives('client-idle')));
    for (const l of idle) assert.ok(l.closedMs - l.lastActiveMs >= 300);
    assert.ok(!lives('client-idle').some((l) => l.closedBy === 'goaway'), 'the client closed first');
    // 4 in flight for 4 × 300 ms: the busy session is replaced while the load goes on, not kept to the end.
    const old = lives('client-max-age').filter((l) => l.closedBy === 'max-age');
    assert.ok(old.length >= 2, JSON.stringify(lives('client-max-age')));
    for (const l of old) assert.ok(l.closedMs - l.openedMs >= 300);

    assert.ok(result.explanation.length >= 3, 'one paragraph per body and one on lifetimes');
    assert.match(readFileSync(join(out, 'report.html'), 'utf8'), /report 003/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
