// The probe's pure parts: URL parsing, Alt-Svc, expectations (names, negation, "could not tell"),
// findings on hand-made results, and the renderer's sections.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isH2labError } from '../../src/core/errors.ts';
import { PROBE_RESULT_VERSION, type ProbeResult } from '../../src/model/index.ts';
import {
  evaluateExpectations,
  findingsFor,
  parseAltSvc,
  parseTarget,
  renderProbeText,
} from '../../src/probe/index.ts';

test('parseTarget: default ports, IPv6 literals, path and query kept', () => {
  assert.deepEqual(parseTarget('https://example.test'), {
    scheme: 'https',
    host: 'example.test',
    port: 443,
    path: '/',
    authority: 'example.test',
  });
  const v6 = parseTarget('http://[::1]:8080/a/b?c=1');
  assert.equal(v6.host, '::1');
  assert.equal(v6.port, 8080);
  assert.equal(v6.path, '/a/b?c=1');
  assert.equal(v6.authority, '[::1]:8080');
  assert.throws(
    () => parseTarget('ws://x/'),
    (e: unknown) => isH2labError(e, 'H2LAB_ERR_PROBE_BAD_URL'),
  );
});

test('parseAltSvc: protocol ids in order, "clear" advertises none', () => {
  assert.deepEqual(parseAltSvc('h3=":443"; ma=86400, h3-29=":443"; ma=86400'), ['h3', 'h3-29']);
  assert.deepEqual(parseAltSvc('h2="alt.example.test:443", h3=":8443"'), ['h2', 'h3']);
  assert.deepEqual(parseAltSvc('clear'), []);
});

function base(over: Partial<ProbeResult> = {}): ProbeResult {
  const na = { supported: null, detail: 'not probed' };
  return {
    kind: 'h2lab.probe',
    version: PROBE_RESULT_VERSION,
    h2labVersion: '0',
    url: 'http://127.0.0.1:1/',
    target: { scheme: 'http', host: '127.0.0.1', port: 1, address: '127.0.0.1' },
    startedAt: new Date(0).toISOString(),
    durationMs: 1,
    options: {},
    protocols: { 'http/1.1': na, h2: na, h2c: na, h2cUpgrade: na, altSvc: null },
    responses: [],
    problems: [],
    findings: [],
    ...over,
  };
}

test('expectations: met, unmet with the reason, negation, and "could not be told" counts as unmet', () => {
  const r = base({
    protocols: {
      'http/1.1': { supported: true, detail: 'ok' },
      h2: { supported: false, detail: 'n/a' },
      h2c: { supported: false, detail: 'HTTP/1.1 400' },
      h2cUpgrade: { supported: null, detail: 'timeout' },
      altSvc: null,
    },
  });
  const e = evaluateExpectations(['http1.1', 'no-h2c', 'h2c', 'h2c-upgrade', 'streaming'], r);
  assert.deepEqual(e.met, ['http1.1', 'no-h2c']);
  assert.deepEqual(
    e.unmet.map((u) => u.expectation),
    ['h2c', 'h2c-upgrade', 'streaming'],
  );
  assert.match(e.unmet[1]!.reason, /could not be told/);
  assert.throws(
    () => evaluateExpectations(['H2', 'quic'], undefined),
    (err: unknown) => isH2labError(err, 'H2LAB_ERR_INVALID_OPTION') && /"quic"/.test((err as Error).message),
  );
});

test('findings: warnings first; a small stream limit and an unlimited one read differently', () => {
  const h2 = (mcs: number | null) =>
    base({
      h2: {
        via: 'h2c',
        settingsSent: [],
        effective: { MAX_CONCURRENT_STREAMS: mcs, INITIAL_WINDOW_SIZE: 1 << 20, HEADER_TABLE_SIZE: 4096 },
        notSent: [],
        connectionWindowUpdateBytes: 1 << 20,
        pingRttMs: 1,
      },
      keepAlive: {
        requests: 3,
        connections: 3,
        honoured: false,
        connectionHeaders: [],
        keepAliveHeader: null,
      },
    });
  const limited = findingsFor(h2(10));
  assert.equal(limited[0]?.id, 'keepalive-not-honoured', 'warnings come first');
  const mcs = limited.find((f) => f.id === 'h2-max-concurrent-streams');
  assert.equal(mcs?.level, 'warn');
  assert.match(mcs?.text ?? '', /queues requests beyond 10/);
  assert.ok(findingsFor(h2(null)).some((f) => f.id === 'h2-streams-unlimited'));
  assert.ok(!limited.some((f) => f.id === 'h2-small-stream-window'), 'a 1 MiB window is not small');
});

test('renderProbeText: one section per part that was probed, findings and expectations last', () => {
  const r = base({
    findings: [{ id: 'x', level: 'warn', text: 'something to fix' }],
    expectations: { asked: ['h2c'], met: [], unmet: [{ expectation: 'h2c', reason: 'no' }] },
  });
  const text = renderProbeText(r);
  assert.match(text, /^h2lab probe http:\/\/127\.0\.0\.1:1\//);
  assert.match(text, /Protocols\n {2}HTTP\/1\.1 +\? +not probed/);
  assert.doesNotMatch(text, /^TLS$/m, 'no TLS section for http://');
  assert.match(text, /Findings\n {2}! something to fix/);
  assert.match(text, /Expectations: 1 of 1 NOT met\n {2}NOT met: h2c — no/);
});
