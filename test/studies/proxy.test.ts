// `h2lab study proxy --quick` end to end through the CLI: Debian's nginx in front of the fixture
// server in four configurations, over real loopback sockets. Asserts the shape of the result and the
// invariants of the issue (the configurations without upstream keep-alive open more upstream
// connections than requests / 2, those with it far fewer; the probe flags exactly the former) —
// never which configuration is faster: that is the study's output.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseStudyResult } from '../../src/model/index.ts';
import { h2lab } from '../helpers/cli.ts';
import { haveNginx } from '../helpers/nginx.ts';
import { netSkipReason } from '../net/helpers.ts';

const available = haveNginx();
let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'h2lab-study-proxy-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Configuration {
  config: { id: string; keepalive: boolean; buffers: string };
  churn: { requests: number; large: number; chunks: number; connections: number; perRequest: number };
  spool: { responses: { bytes: number; chunks: number }; files: number; bytesSeen: number };
  probe: { keepAliveHonoured: boolean | null; upstreamReused: boolean | null; warnings: string[] };
}

test('study proxy --quick: four nginx configurations, churn where keep-alive is off, the probe flags it', {
  skip: available ? false : 'nginx is not installed (apt-get install nginx)',
}, async () => {
  const out = join(dir, 'quick');
  const r = await h2lab(['study', 'proxy', '--quick', '--out', out], { timeoutMs: 180_000 });
  assert.equal(r.code, 0, `${r.stderr}\n${r.stdout}`);
  const result = parseStudyResult(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')));
  assert.equal(result.status, 'complete', JSON.stringify(result.error));
  assert.deepEqual(
    result.cells.filter((c) => c.status !== 'done'),
    [],
    'every probe and load cell ran',
  );
  assert.deepEqual(
    result.sections.map((s) => s.id),
    ['configurations', 'time-bytes-2831155', 'time-chunks', 'summary'],
  );
  const summary = result.sections.find((s) => s.id === 'summary')!;
  assert.equal(summary.reference?.table.rows[0]?.before, 1.36, "the report's numbers beside ours");
  const configs = result.data.configurations as Configuration[];
  assert.equal(configs.length, 4);
  for (const c of configs) {
    const why = `${c.config.id}: ${JSON.stringify(c.churn)}`;
    assert.ok(c.churn.large > 0 && c.churn.chunks > 0, `both workloads went through nginx: ${why}`);
    if (c.config.keepalive) {
      assert.ok(c.churn.connections < c.churn.requests / 10, `the upstream pool is reused: ${why}`);
      assert.equal(c.probe.upstreamReused, true, `${c.config.id}: the probe sees reuse`);
      assert.ok(!c.probe.warnings.includes('upstream-keepalive-off'), c.config.id);
    } else {
      // The invariant: the broken configuration shows more upstream connections than requests / 2.
      assert.ok(c.churn.connections > c.churn.requests / 2, `a connection per request: ${why}`);
      assert.equal(c.probe.upstreamReused, false, `${c.config.id}: the probe sees no reuse`);
      assert.ok(c.probe.warnings.includes('upstream-keepalive-off'), c.config.id);
    }
    // nginx keeps the client's own connection in every configuration: the client-side check passes.
    assert.equal(c.probe.keepAliveHonoured, true, c.config.id);
    assert.ok(c.spool.files >= 0 && c.spool.responses.bytes <= c.churn.large, c.config.id);
  }
  assert.ok(result.explanation.length >= 3, result.explanation.join('\n'));
  assert.match(r.stdout, /report 001/);
  const settings = result.data.settings as { nginx: { version: string; sndbufBytes: number } };
  assert.match(settings.nginx.version, /^\d+\.\d+/);
  assert.equal(settings.nginx.sndbufBytes, 64 * 1024);
});

test('study proxy with --nginx naming no binary fails at once with H2LAB_ERR_PEER_MISSING', async () => {
  const out = join(dir, 'missing');
  const r = await h2lab(['study', 'proxy', '--quick', '--nginx', join(dir, 'no-nginx'), '--out', out], {
    timeoutMs: 30_000,
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(`${r.stderr}${r.stdout}`, /H2LAB_ERR_PEER_MISSING/);
  assert.match(`${r.stderr}${r.stdout}`, /--nginx/);
});

const netSkip = available ? netSkipReason() : 'nginx is not installed (apt-get install nginx)';
if (netSkip) console.log(`# skipped: h2lab study proxy --upstream-rtt: ${netSkip}`);

test('study proxy --upstream-rtt: the fixture behind a link, nginx on the host; the same invariants', {
  skip: netSkip ?? false,
}, async () => {
  const out = join(dir, 'rtt');
  const r = await h2lab(
    [
      'study',
      'proxy',
      '--quick',
      '--upstream-rtt',
      '10ms',
      '--runs',
      '3',
      '--duration',
      '200ms',
      '--out',
      out,
    ],
    { timeoutMs: 180_000 },
  );
  assert.equal(r.code, 0, `${r.stderr}\n${r.stdout}`);
  const result = parseStudyResult(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')));
  assert.equal(result.status, 'complete', JSON.stringify(result.error));
  const settings = result.data.settings as { fixture: string; upstreamRttMs: number };
  assert.equal(settings.fixture, 'namespace');
  assert.equal(settings.upstreamRttMs, 10);
  for (const c of result.data.configurations as Configuration[]) {
    const why = `${c.config.id}: ${JSON.stringify(c.churn)}`;
    if (c.config.keepalive) assert.ok(c.churn.connections < c.churn.requests / 2, why);
    else assert.ok(c.churn.connections > c.churn.requests / 2, why);
    assert.equal(c.probe.upstreamReused, c.config.keepalive, c.config.id);
  }
  assert.match(r.stdout, /behind a 10 ms link/);
});
