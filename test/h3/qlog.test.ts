// `--qlog DIR`: the HTTP/3 client's qlog, one JSON-SEQ file per QUIC connection, as qvis reads it:
// every record parses, the first says it is the client's trace, and the transport parameters both
// ends set are in it, those of the server with the cipher TLS chose.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runLoad } from '../../src/load/index.ts';
import { startFixture } from '../helpers/fixture.ts';
import { h3SkipReason } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'h2lab-qlog-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('one qlog per QUIC connection, JSON-SEQ, naming both ends’ transport parameters', async (t) => {
  const skip = await h3SkipReason();
  if (skip) return t.skip(skip);
  const server = await startFixture({ h3: true });
  try {
    const qlogDir = join(dir, 'qlog');
    const result = await runLoad({
      url: `${server.tlsUrl}/bytes/2000`,
      ca: server.caFile!,
      protocol: 'h3',
      requests: 8,
      qlogDir,
    }).done;
    assert.equal(result.counts.ok, 8);
    assert.equal(result.evidence?.qlog?.dir, qlogDir);
    const files = readdirSync(qlogDir).filter((f) => f.endsWith('.qlog'));
    assert.equal(files.length, result.connections.opened);
    // JSON-SEQ (RFC 7464): each record is RS (0x1e), JSON, LF.
    const records = readFileSync(join(qlogDir, files[0]!), 'utf8')
      .split('\x1e')
      .filter((r) => r.trim() !== '')
      .map(
        (r) =>
          JSON.parse(r) as {
            name?: string;
            trace?: { vantage_point?: { type?: string } };
            data?: Record<string, unknown>;
          },
      );
    assert.equal(records[0]?.trace?.vantage_point?.type, 'client');
    const params = records.filter((r) => r.name === 'quic:parameters_set');
    assert.deepEqual(params.map((r) => r.data?.initiator).sort(), ['local', 'remote']);
    assert.ok(
      params.some((r) => typeof r.data?.tls_cipher === 'string'),
      'the cipher TLS chose',
    );
    assert.ok(records.some((r) => r.name === 'quic:packet_received'));
    assert.ok(records.some((r) => r.name?.startsWith('http3:')));
  } finally {
    await server.close(0);
  }
});
