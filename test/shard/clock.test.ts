/**
 * The NTP-style offset against a coordinator on loopback: the same machine's clock on both sides, so
 * the offset it finds must lie within half the round trip of zero; a coordinator that is not there
 * or answers something else is named.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { isH2labError } from '../../src/core/index.ts';
import { measureClockOffset, startClockServer } from '../../src/shard/index.ts';

test('same clock on both ends: |offset| ≤ rtt / 2', async () => {
  const c = await startClockServer();
  try {
    const r = await measureClockOffset(c.url, 8);
    assert.equal(r.samples, 8);
    assert.ok(r.rttMs > 0 && r.rttMs < 1000, `rtt ${r.rttMs}`);
    // Both readings come from one clock; only the asymmetry of one exchange can show as an offset.
    assert.ok(Math.abs(r.offsetMs) <= r.rttMs / 2 + 0.01, `offset ${r.offsetMs} ms, rtt ${r.rttMs} ms`);
  } finally {
    await c.close();
  }
});

test('no coordinator, or one that answers no epochMs: H2LAB_ERR_CLOCK', async () => {
  const other = createServer((_q, s) => s.end('{"time": 1}'));
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  const { port } = other.address() as AddressInfo;
  try {
    await assert.rejects(
      measureClockOffset(`http://127.0.0.1:${port}/`, 2),
      (e) => isH2labError(e, 'H2LAB_ERR_CLOCK') && /epochMs/.test(e.message),
    );
  } finally {
    await new Promise((r) => other.close(r));
  }
  await assert.rejects(measureClockOffset(`http://127.0.0.1:${port}/`, 1, 500), (e) =>
    isH2labError(e, 'H2LAB_ERR_CLOCK'),
  );
});
