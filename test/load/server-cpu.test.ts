// The fixture server's own CPU and event loop, read apart from the load client's (src/server/metrics.ts
// `loop`, the run result's server view, cpuApart): real runs over TLS on 127.0.0.1 against the
// fixture in a worker thread of this process, and in this thread (where it has no figure of its own).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { cpuApart, type RunResult } from '../../src/model/index.ts';
import { renderRunText } from '../../src/report/index.ts';
import {
  type FixtureTarget,
  metricsDelta,
  serverViewOf,
  startFixtureTarget,
} from '../../src/server/index.ts';

const run = (target: FixtureTarget, requests: number): Promise<RunResult> =>
  runLoad({ url: '/bytes/16384', protocol: 'h2', requests, concurrency: 8 }, { target }).done;

describe('server CPU and event loop, fixture in its own thread', () => {
  let target: FixtureTarget;
  before(async () => {
    target = await startFixtureTarget({}, 'thread');
  });
  after(() => target.close());

  it('records the thread CPU and ELU in the server view, growing with the requests, apart from the client', async () => {
    const small = await run(target, 200);
    const large = await run(target, 1600);
    for (const r of [small, large]) {
      assert.equal(r.error, undefined);
      const s = r.server!;
      assert.equal(s.cpuScope, 'thread');
      assert.ok(s.cpuSeconds! > 0, `server CPU ${s.cpuSeconds}`);
      assert.ok(s.eventLoopUtilization! > 0 && s.eventLoopUtilization! <= 1, `ELU ${s.eventLoopUtilization}`);
      // The thread's own CPU, not the process's: the client's share of the process stays visible.
      const a = cpuApart(r)!;
      assert.ok(
        a.clientSeconds! > 0.2 * r.client.cpuSeconds!,
        `client ${a.clientSeconds} of ${r.client.cpuSeconds}`,
      );
      assert.ok(a.serverSeconds < r.client.cpuSeconds!, 'the server thread is part of the process');
    }
    // Eight times the requests: well over twice the server's CPU (per-run costs aside).
    assert.ok(
      large.server!.cpuSeconds! > 2 * small.server!.cpuSeconds!,
      `server CPU ${small.server!.cpuSeconds} s for 200 requests, ${large.server!.cpuSeconds} s for 1600`,
    );
    const text = renderRunText(large, { width: 200 });
    assert.match(
      text,
      /\n {2}server {16}event loop \d+% busy, \d+\.\d{3} CPU s on its own thread \([\d.]+ µs per request\); the client without it \d+\.\d{3} CPU s/,
    );
  });

  it('an idle server: its event loop mostly waits, and a reset starts its figures again', async () => {
    await target.metrics.reset();
    const before = await target.metrics.read();
    await new Promise((r) => setTimeout(r, 300));
    const view = serverViewOf(metricsDelta(before, await target.metrics.read()));
    assert.ok(view.eventLoopUtilization! < 0.5, `idle ELU ${view.eventLoopUtilization}`);
    assert.ok(view.cpuSeconds! < 0.15, `idle CPU ${view.cpuSeconds} s in 300 ms`);
    assert.ok(before.loop!.cpuSeconds < 0.1, `CPU since the reset ${before.loop!.cpuSeconds} s`);
    const prometheus = await (await fetch(`${target.plainUrl!}/metrics`)).text();
    assert.match(prometheus, /\nh2lab_cpu_seconds_total\{scope="thread"\} \d/);
    assert.match(prometheus, /\nh2lab_event_loop_active_seconds_total\{scope="thread"\} \d/);
  });
});

describe('server CPU, fixture in the client’s thread', () => {
  it('has no figure of its own: the server view leaves CPU and ELU out', async () => {
    const target = await startFixtureTarget({}, 'in-process');
    try {
      const r = await run(target, 50);
      assert.equal(r.error, undefined);
      assert.equal(r.server?.requests, 50);
      assert.equal(r.server?.cpuSeconds, undefined);
      assert.equal(r.server?.eventLoopUtilization, undefined);
      assert.equal(cpuApart(r), undefined);
      assert.doesNotMatch(renderRunText(r), /CPU s on its own/);
    } finally {
      await target.close();
    }
  });
});
