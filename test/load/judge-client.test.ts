// When is the load client the bottleneck, and when was it only starved of CPU by other processes?
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { judgeClient } from '../../src/load/index.ts';

test('a busy loop that has the CPU is saturated; a busy loop without it was starved, not saturated', () => {
  assert.deepEqual(judgeClient(0.5, 0.4, 1, 2, 1), { saturated: false });
  const busy = judgeClient(0.97, 0.95, 1, 2, 1);
  assert.equal(busy.saturated, true);
  assert.match(busy.note!, /may measure h2lab.*--workers 2/);
  assert.equal(judgeClient(0.95, 0.7, 1, 2, 1).saturated, true);
  const starved = judgeClient(0.98, 0.3, 1, 2, 9.5);
  assert.equal(starved.saturated, false);
  assert.match(starved.note!, /not the CPU.*load average 9\.5 on 2 cores/);
  // Two worker threads: 1.9 cores is saturated; 1.0 core with busy loops is starved.
  assert.equal(judgeClient(0.95, 1.9, 2, 2, 1).saturated, true);
  assert.equal(judgeClient(0.95, 1.0, 2, 2, 6).saturated, false);
  assert.doesNotMatch(judgeClient(0.95, 1.9, 2, 2, 1).note!, /--workers/, 'no more threads to suggest');
});

test('with the embedded server in the process, CPU is not the client alone: only the event loop decides', () => {
  assert.deepEqual(judgeClient(0.3, 0.95, 1, 2, 1, true), { saturated: false });
  const busy = judgeClient(0.95, 1.2, 1, 2, 1, true);
  assert.equal(busy.saturated, true);
  assert.match(busy.note!, /with the embedded server/);
});
