// The verdict names each side's congestion control when QUIC and TCP strategies are compared and
// the controllers differ (QUIC's is the binding's, in user space; TCP's the kernel's).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compare } from '../../src/compare/engine.ts';
import { syntheticRunner } from '../../src/compare/synthetic.ts';
import { BINDING_FACTS } from '../../src/h3/index.ts';
import type { RunResult } from '../../src/model/index.ts';
import { handshakeSentence } from '../../src/report/handshakes.ts';
import { buildVerdict, renderMarkdown } from '../../src/report/index.ts';
import { comparedTitle } from '../../src/report/settings.ts';
import { congestionControlCaveat } from '../../src/report/verdict.ts';

const workloads = [{ id: 'small', label: '1 KiB', paths: ['/bytes/1024'], kind: 'interactive' as const }];

async function run(tcpCc: string) {
  const inner = syntheticRunner({ h2: { latencyMs: 6 }, h3: { latencyMs: 5 } });
  return compare(
    { protocols: ['h2', 'h3'], baseline: 'h2', concurrency: [8], workloads, runs: 3 },
    {
      target: { url: 'https://127.0.0.1:8443/', embedded: true },
      runCell: async (cell, ctx) => {
        const r = await inner(cell, ctx);
        // What runLoad records: QUIC's controller for a QUIC strategy, the kernel's for TCP.
        if (cell.protocol === 'h3') r.transport.quic = { ...BINDING_FACTS };
        r.environment.congestionControl = tcpCc;
        return r;
      },
    },
  ).done;
}

test('QUIC cubic against TCP bbr: the caveat names both and says what it may mean', async () => {
  const result = await run('bbr');
  const c = congestionControlCaveat(result);
  assert.ok(c);
  assert.match(c, /h3: cubic \(@currentspace\/http3@0\.9\.0, user space\)/);
  assert.match(c, /h2: TCP bbr/);
  assert.match(c, /congestion controllers', not the protocols'/);
  assert.ok(buildVerdict(result).caveats.includes(c), 'it is among the verdict caveats');
});

test('the same controller on both sides: no caveat', async () => {
  assert.equal(congestionControlCaveat(await run('cubic')), undefined);
});

test('the report says what was compared: HTTP/3 vs HTTP/2', async () => {
  const result = await run('cubic');
  assert.equal(comparedTitle(result), 'HTTP/3 vs HTTP/2');
  assert.match(renderMarkdown(result), /^# HTTP\/3 vs HTTP\/2 — h2lab compare/);
});

test("the burst's bounds name each side's set-up round trips, beside what each measured", () => {
  const lat = (p50: number) => ({
    p50,
    p90: p50,
    p99: p50,
    p999: p50,
    max: p50,
    min: p50,
    mean: p50,
    count: 1,
  });
  const side = (quic: boolean, retry?: boolean) =>
    ({
      schedule: { mode: 'burst', handshakes: 'include' },
      transport: quic ? { quic: { ...BINDING_FACTS } } : {},
      connections: quic
        ? { connectMs: lat(0), tlsMs: lat(retry ? 205 : 108), quic: { server: { retry } } }
        : { connectMs: lat(101), tlsMs: lat(103) },
    }) as unknown as RunResult;
  const s = handshakeSentence(
    [
      { strategy: 'h2', run: side(false) },
      { strategy: 'h3', run: side(true, false) },
    ],
    100,
  );
  assert.match(s ?? '', /h2: TCP then TLS 1\.3, 2 round trips \(measured 204 ms, 2\.0 RTT\)/);
  assert.match(s ?? '', /h3: QUIC with TLS 1\.3 together, 1 round trip \(measured 108 ms, 1\.1 RTT\)/);
  const r = handshakeSentence(
    [
      { strategy: 'h2', run: side(false) },
      { strategy: 'h3', run: side(true, true) },
    ],
    100,
  );
  assert.match(r ?? '', /h3: a Retry, then QUIC with TLS 1\.3, 2 round trips .*--quic-retry/);
  assert.equal(handshakeSentence([{ strategy: 'h2', run: side(false) }], 100), undefined, 'no QUIC side');
});
