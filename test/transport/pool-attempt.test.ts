// A retried request starts from the fields declared per attempt beside Sample
// (SAMPLE_ATTEMPT_FIELDS, src/model/sample.ts): every Sample field is declared either per attempt or
// per request, and a field added to the per-attempt list is reset on retry with no edit to the pool.
// The pool runs with a connection that refuses a request's first attempt (REFUSED_STREAM) and
// answers the second: the pool's retry is the code under test, not a socket.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  SAMPLE_ATTEMPT_FIELDS,
  SAMPLE_REQUEST_FIELDS,
  type Sample,
  sampleSchema,
} from '../../src/model/index.ts';
import { PoolTransport } from '../../src/transport/pool.ts';
import { type PoolConn, PoolConnBase } from '../../src/transport/pool-conn.ts';

test('every Sample field is declared per attempt or per request, not both', () => {
  const attempt = Object.keys(SAMPLE_ATTEMPT_FIELDS);
  const request: string[] = [...SAMPLE_REQUEST_FIELDS];
  assert.deepEqual(
    attempt.filter((k) => request.includes(k)),
    [],
    'declared in both lists',
  );
  assert.deepEqual([...attempt, ...request].sort(), Object.keys(sampleSchema.shape).sort());
});

/** One connection: the first attempt of each request is refused after writing `marker`, the next answered. */
class RefuseOnce extends PoolConnBase implements PoolConn {
  private readonly seen = new Set<number>();
  usable(): boolean {
    return true;
  }
  capacity(): number {
    return 1;
  }
  announcedLimit(): number | undefined {
    return undefined;
  }
  async send(_spec: unknown, sample: Sample): Promise<Sample> {
    const probe = sample as Sample & { marker?: string };
    sample.sentMs = this.now();
    sample.endMs = this.now();
    if (!this.seen.has(sample.seq)) {
      this.seen.add(sample.seq);
      probe.marker = 'first attempt';
      sample.streamId = 1;
      sample.error = 'refused-stream';
      return sample;
    }
    this.requests++;
    sample.status = 200;
    return sample;
  }
  expire(): void {}
  close(): void {
    this.onClose(this);
  }
}

async function retried(): Promise<Sample & { marker?: string }> {
  const now = () => performance.now();
  const pool = new PoolTransport(
    {
      name: 'h1',
      requested: 'http/1.1',
      size: 1,
      policy: 'least-busy',
      openAtStart: 1,
      timeoutMs: 5000,
      idleTimeoutMs: 0,
      maxAgeMs: 0,
      now,
    },
    async (id, onClose) => new RefuseOnce(id, 'http/1.1', now, 0, undefined, onClose),
  );
  await pool.open();
  try {
    return await pool.request({ method: 'GET', path: '/' }, { seq: 7, intendedMs: 0, queuedMs: 0 });
  } finally {
    await pool.close();
  }
}

test('a field added to SAMPLE_ATTEMPT_FIELDS is reset when the request is retried', async () => {
  const fields = SAMPLE_ATTEMPT_FIELDS as Record<string, unknown>;
  // Not declared: the refused attempt's value survives the retry (the test can fail).
  const kept = await retried();
  assert.equal(kept.retries, 1);
  assert.equal(kept.status, 200);
  assert.equal(kept.error, undefined, 'a declared field is reset');
  assert.equal(kept.streamId, undefined, 'a declared field is reset');
  assert.equal(kept.marker, 'first attempt');
  fields.marker = undefined;
  try {
    const reset = await retried();
    assert.equal(reset.retries, 1);
    assert.equal(reset.status, 200);
    assert.ok(!('marker' in reset), `marker kept: ${JSON.stringify(reset)}`);
  } finally {
    delete fields.marker;
  }
});
