// The verdict names each side's congestion control when QUIC and TCP strategies are compared and
// the controllers differ (QUIC's is the binding's, in user space; TCP's the kernel's).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compare } from '../../src/compare/engine.ts';
import { syntheticRunner } from '../../src/compare/synthetic.ts';
import { BINDING_FACTS } from '../../src/h3/index.ts';
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
