// The fixture's QUIC server side: its qlog (`serve --qlog DIR`), one JSON-SEQ file per connection as
// qvis reads it, and the sender's facts read from it — packets lost and retransmitted, bytes in
// flight, the initial window — beside the binding's own metrics, per connection. Through a lossy link
// the server, the sender of the download, declares losses and retransmits, and its counts follow the
// link's drops on its direction.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BINDING_FACTS, jsonSeqRecords, qlogSenderFacts } from '../../src/h3/index.ts';
import { runLoad, runLoadThroughLink } from '../../src/load/index.ts';
import { type CompareResult, parseRunResult } from '../../src/model/index.ts';
import { renderRunText } from '../../src/report/index.ts';
import { runSettings } from '../../src/report/settings.ts';
import { h2lab } from '../helpers/cli.ts';
import { scrape, startFixture, testHome } from '../helpers/fixture.ts';
import { netSkipReason } from '../net/helpers.ts';
import { h3SkipReason } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'h2lab-server-qlog-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Rec {
  name?: string;
  trace?: { vantage_point?: { type?: string }; event_schemas?: string[] };
  data?: { header?: { version?: string; packet_type?: string } };
}

test('the server writes one qlog per connection; its sender facts are read from it', async (t) => {
  const skip = await h3SkipReason();
  if (skip) return t.skip(skip);
  const qlogDir = join(dir, 'loopback');
  const server = await startFixture({ h3: true, qlogDir });
  try {
    const result = await runLoad({
      url: `${server.tlsUrl}/bytes/300000`,
      ca: server.caFile!,
      protocol: 'h3',
      requests: 4,
      connections: 2,
    }).done;
    assert.equal(result.counts.ok, 4);
    const quic = (await scrape(server)).quic!;
    const mine = quic.connections;
    assert.equal(mine.length, result.connections.opened);
    for (const c of mine) {
      // The server sent the bodies: its bytes out exceed the 2 × 300 kB it served on its connection.
      assert.ok(c.bytesSent > c.bytesReceived, `server sent ${c.bytesSent}, received ${c.bytesReceived}`);
      // Declared lost, not necessarily dropped: on loopback the binding's client hands quiche some
      // datagrams out of order, and the server's packet threshold (RFC 9002 §6.1.1) fires on them.
      assert.equal(typeof c.packetsLost, 'number');
      assert.ok(c.packetsRetransmitted! <= c.packetsSent);
      assert.ok(c.bytesInFlightMax! > 100_000, `in flight at most ${c.bytesInFlightMax}`);
      // Read, not asserted: the binding's own tuning (1000 packets of 1,200 B), not TCP's 10 segments.
      assert.ok(c.initialCwndBytes! >= 100 * 1200, `initial window ${c.initialCwndBytes}`);
      // Loopback's 64 KiB MTU: path MTU discovery climbs past QUIC's 1,200-byte floor.
      assert.ok(c.pmtuBytes! > 1200, `path MTU ${c.pmtuBytes}`);
    }
    const files = readdirSync(qlogDir).filter((f) => /^server-[0-9a-f]+\.qlog$/.test(f));
    assert.equal(files.length, mine.length, files.join(', '));
    for (const f of files) {
      const records = jsonSeqRecords(readFileSync(join(qlogDir, f), 'utf8')) as Rec[];
      assert.equal(records[0]?.trace?.vantage_point?.type, 'server');
      const versions = new Set(records.flatMap((r) => r.data?.header?.version ?? []));
      assert.deepEqual([...versions], ['1'], 'QUIC version 1 (RFC 9000) in every long header');
      // quiche's qlog does not name the ALPN; the HTTP/3 events it writes are what h3 negotiated.
      assert.ok(records[0]?.trace?.event_schemas?.some((s) => s.includes('http3')));
      assert.ok(
        records.some((r) => r.name === 'http3:frame_created'),
        'HTTP/3 frames sent: ALPN h3',
      );
    }
  } finally {
    await server.close(0);
  }
});

test('the controller is recorded as not read, with its source; the window is read', () => {
  // The binding has no getter nor setter for quiche's controller: what a result records must say so
  // and name its source, never pass a constant off as a reading.
  assert.match(
    BINDING_FACTS.congestionControlSource,
    /^not readable from the binding \(no setter or getter\): the binding's documented default, /,
  );
  const text = (events: object[]) => events.map((e) => `\x1e${JSON.stringify(e)}\n`).join('');
  const sent = (type: string, offset: number, len: number) => ({
    name: 'quic:packet_sent',
    data: {
      header: { packet_type: '1RTT' },
      frames: [{ frame_type: type, stream_id: 0, offset, raw: { payload_length: len } }],
    },
  });
  const m = (data: object) => ({ name: 'quic:recovery_metrics_updated', data });
  const f = qlogSenderFacts(
    text([
      m({ congestion_window: 16383000, cf_lost_packets: { total: 0 } }),
      sent('stream', 0, 1000),
      m({ congestion_window: 1200000, bytes_in_flight: 1040 }),
      sent('stream', 1000, 1000),
      m({ bytes_in_flight: 2080, cf_lost_packets: { total: 1 } }),
      sent('stream', 0, 1000),
      m({ congestion_window: 840000, bytes_in_flight: 2080 }),
    ]),
  );
  assert.deepEqual(f, {
    packetsSent: 3,
    packetsRetransmitted: 1,
    packetsLost: 1,
    initialCwndBytes: 1200000,
    bytesInFlightMax: 2080,
  });
});

const linkSkip = netSkipReason() ?? (await h3SkipReason());

test('through a lossy link the server declares losses and retransmits', { skip: linkSkip }, async () => {
  testHome();
  const qlogDir = join(dir, 'link');
  // 40 ms, 3 % loss on the download direction only: the sender's losses are the server's.
  const r = parseRunResult(
    JSON.parse(
      JSON.stringify(
        await runLoadThroughLink(
          { protocol: 'h3', requests: 4, concurrency: 1, seed: 5, url: '/bytes/400000', qlogDir },
          { profile: { rttMs: 40, lossDown: 0.03 }, backend: 'relay' },
        ).done,
      ),
    ),
  );
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.equal(r.counts.ok, 4);
  const q = r.connections.quic!;
  const s = q.server;
  assert.ok(s, "the server's side of the run's connections");
  const dropped = q.linkDrops!.downPackets;
  assert.ok(dropped > 0, 'the link dropped packets on the way down');
  assert.ok(s.packetsLost! > 0, `server declared ${s.packetsLost} lost; the link dropped ${dropped}`);
  // quiche declares lost what the link dropped (RFC 9002 §6), plus what it thought lost too early.
  assert.ok(s.packetsLost! >= dropped * 0.5, `declared ${s.packetsLost} of ${dropped} dropped`);
  assert.ok(s.packetsRetransmitted! > 0, `retransmitted ${s.packetsRetransmitted}`);
  assert.ok(s.packetsSent > q.packetsSent, 'the server, not the client, sent the download');
  // The link's 1,500-byte MTU bounds the server's datagrams: 1,472 B of UDP payload over IPv4.
  for (const c of s.perConnection) assert.ok(c.pmtuBytes! <= 1472, `server path MTU ${c.pmtuBytes}`);
  // --qlog: the client's files and, from the fixture behind the link, the server's.
  const files = readdirSync(qlogDir);
  assert.ok(
    files.some((f) => f.startsWith('client-')) && files.some((f) => f.startsWith('server-')),
    files.join(),
  );
  // The report says it: bench's QUIC lines, and the read initial window in the settings.
  const text = renderRunText(r, { width: 400 });
  assert.ok(text.includes(`${s.packetsLost} declared lost`), text);
  const quicRow = runSettings(r).find((row) => row.name === 'QUIC')?.value ?? '';
  assert.match(quicRow, /server's initial congestion window [\d.,]+ [KM]?i?B \(read from its qlog/);
});

test('compare --qlog: the embedded fixture writes its side; results and report carry what it read', {
  skip: await h3SkipReason(),
}, async () => {
  const out = join(dir, 'compare-out');
  const qlogDir = join(dir, 'compare-qlog');
  const r = await h2lab(
    [
      'compare',
      ...['--protocols', 'h2,h3', '--baseline', 'h2', '--sizes', '64KiB', '--concurrency', '2'],
      ...['--runs', '3', '--duration', '300ms', '--qlog', qlogDir, '--out', out],
    ],
    { timeoutMs: 180_000 },
  );
  assert.equal(r.code, 0, r.stderr);
  const files = readdirSync(qlogDir);
  assert.ok(
    files.some((f) => f.startsWith('client-')) && files.some((f) => f.startsWith('server-')),
    files.join(),
  );
  const result = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as CompareResult;
  const servers = result.cells.flatMap((c) => c.runs).flatMap((run) => run.connections.quic?.server ?? []);
  assert.ok(servers.length > 0, "the h3 runs carry the server's side");
  for (const s of servers) {
    assert.equal(typeof s.packetsLost, 'number');
    for (const c of s.perConnection) assert.ok(c.initialCwndBytes! > 0 && c.bytesInFlightMax! > 0);
  }
  assert.match(
    readFileSync(join(out, 'report.md'), 'utf8'),
    /initial congestion window [^;]+ \(read from its qlog/,
  );
});
