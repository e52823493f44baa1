// A page replay over HTTP/3 through a 40 ms link with --capture and Chromium's --keylog: Debian's
// tshark decrypts the capture's QUIC in both directions with that key log, the HTTP/3 requests it
// shows are the load's requests, and the rounds h2lab counts without the keys are the ones the
// decrypted ACKs give.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { missingPrerequisite } from '../../src/net/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';
import { h3SkipReason } from '../h3/helpers.ts';
import { tsharkFields, tsharkSkipReason } from '../net/helpers.ts';
import { recordAndReplay } from './helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
const dir = mkdtempSync(join(tmpdir(), 'h2lab-page-quic-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const skip = chromiumMissing() ?? missingPrerequisite(true) ?? tsharkSkipReason() ?? (await h3SkipReason());
if (skip) console.log(`# page replay QUIC capture test skipped: ${skip}`);

/** QUIC frame types 0x08–0x0f are STREAM frames (RFC 9000 §19.8); HTTP/3's HEADERS is 0x01. */
const isStream = (t: string): boolean => Number(t) >= 8 && Number(t) <= 15;
const HEADERS = '1';

/**
 * Rounds of each QUIC connection's server data counted from the decrypted packets, TCP's way: a
 * round begins with the server's first 1-RTT data datagram (more than 64 bytes of UDP payload) sent
 * after the client's ACK of the round's first packet number reached the server (the ACK's time plus
 * its delay through the link, from its comment). By client port: [start ms, datagrams] per round.
 */
function ackRounds(file: string, keys: string): Map<string, Array<[number, number]>> {
  const rows = tsharkFields(
    file,
    [
      'frame.time_epoch',
      'frame.interface_name',
      'udp.srcport',
      'udp.dstport',
      'udp.length',
      'quic.header_form',
      'quic.packet_number',
      'quic.ack.largest_acknowledged',
      'frame.comment',
    ],
    ['-o', `tls.keylog_file:${keys}`],
  );
  const flows = new Map<string, { marker: number; ackAt: number; rounds: Array<[number, number]> }>();
  let t0: number | undefined;
  for (const [time, dir, sport, dport, length, forms, pns, acks, comment] of rows) {
    const [sec, frac = ''] = time!.split('.');
    const us = Number(sec) * 1e6 + Number(frac.padEnd(6, '0').slice(0, 6));
    t0 ??= us;
    const ms = (us - t0) / 1000;
    if (!length) continue;
    const port = dir === 'up' ? sport! : dport!;
    const f = flows.get(port) ?? flows.set(port, { marker: -1, ackAt: Infinity, rounds: [] }).get(port)!;
    const form = (forms ?? '').split(',');
    const delay = Number(/delay ([\d.]+) ms/.exec(comment ?? '')?.[1]);
    if (dir === 'up') {
      // Datagrams of 1-RTT packets only: their ACKs are of the server's 1-RTT packet numbers.
      if (!form.every((x) => x === '0') || !acks || Number.isNaN(delay)) continue;
      const largest = Math.max(...acks.split(',').map(Number));
      if (f.marker >= 0 && largest >= f.marker && f.ackAt === Infinity) f.ackAt = ms + delay;
      continue;
    }
    const short = form.indexOf('0');
    if (Number(length) - 8 <= 64 || short < 0) continue;
    if (f.marker < 0 || ms + 0.5 >= f.ackAt) {
      f.rounds.push([ms, 0]);
      f.marker = Number((pns ?? '').split(',')[short]);
      f.ackAt = Infinity;
    }
    f.rounds.at(-1)![1]++;
  }
  return new Map([...flows].filter(([, f]) => f.rounds.length > 0).map(([k, f]) => [k, f.rounds]));
}

test("page replay --protocols h3 --capture --keylog: tshark decrypts the capture with Chromium's key log", {
  skip,
}, async () => {
  const keys = join(dir, 'keys.log');
  const result = await recordAndReplay(
    dir,
    'origins=1,resources=8',
    ['--protocols', 'h3', '--runs', '1', '--rtt', '40ms', '--capture', join(dir, 'cap'), '--keylog', keys],
    CHROMIUM,
  );
  const load = result.loads.find((l) => !l.discarded)!;
  const requests = load.requests.filter((q) => q.protocol === 'h3' && !q.failed).length;
  assert.equal(requests, load.requests.length, JSON.stringify(load.requests.map((q) => [q.url, q.protocol])));
  assert.ok(load.capture, 'the kept load was captured');
  // Chromium's key log holds the QUIC connections' secrets (the warm-up's and the kept load's).
  assert.match(readFileSync(keys, 'utf8'), /^SERVER_TRAFFIC_SECRET_0 /m);

  const rows = tsharkFields(
    load.capture.file,
    ['frame.interface_name', 'quic.frame_type', 'quic.stream.stream_id', 'http3.frame_type'],
    ['-o', `tls.keylog_file:${keys}`, '-Y', 'quic'],
  );
  // Datagrams fit the link's 1,500-byte MTU: a QUIC listener bound to the link's address would take
  // loopback's MTU as its ceiling and send 16 KB datagrams in IP fragments.
  const big = tsharkFields(
    load.capture.file,
    ['frame.number'],
    ['-Y', 'udp.length > 1480 || ip.frag_offset > 0'],
  );
  assert.equal(big.length, 0, `${big.length} datagrams larger than the link's MTU, or their fragments`);
  const list = (v: string | undefined): string[] => (v ? v.split(',') : []);
  // No datagram's zero padding (quiche pads its first flight past its packets) is read as a packet
  // of its own: that one fails to decrypt, and Wireshark 4.0 then decrypts none of the server's
  // 1-RTT packets whenever its garbage key-phase bit reads as 1 (about every other capture).
  const garbage = tsharkFields(load.capture.file, ['frame.number'], ['-Y', 'quic.fixed_bit == 0']);
  assert.deepEqual(garbage, [], 'packets without QUIC’s fixed bit');
  // Every packet decrypts, the server's 1-RTT ones included: each shows its frames.
  const opaque = rows.filter((row) => list(row[1]).length === 0);
  assert.equal(opaque.length, 0, `${opaque.length} of ${rows.length} QUIC packets not decrypted`);
  for (const dir of ['up', 'down'])
    assert.ok(
      rows.some((row) => row[0] === dir && list(row[1]).some(isStream)),
      `${dir}: STREAM frames decrypted`,
    );
  // One client-initiated bidirectional stream per request (stream id ≡ 0 mod 4), each with the
  // client's HEADERS and the server's.
  const streams = new Set(
    rows.filter((row) => row[0] === 'up').flatMap((row) => list(row[2]).filter((id) => Number(id) % 4 === 0)),
  );
  const headers = (d: string): number =>
    rows
      .filter((row) => row[0] === d)
      .reduce((n, row) => n + list(row[3]).filter((t) => t === HEADERS).length, 0);
  assert.equal(streams.size, requests, `request streams ${[...streams]}`);
  assert.equal(headers('up'), requests, 'the requests’ HEADERS');
  assert.equal(headers('down'), requests, 'the responses’ HEADERS');

  // The rounds h2lab counts without the keys (from the link's one-way delays) are the ones the
  // decrypted ACKs give.
  const ts = load.capture.timeSequence;
  assert.ok(ts, 'the median load has its graphs');
  const byAcks = ackRounds(load.capture.file, keys);
  const quic = ts.connections.filter((c) => c.transport === 'udp');
  assert.ok(quic.length >= 1);
  for (const c of quic) {
    const seen = byAcks.get(c.client.split(':')[1]!) ?? [];
    assert.ok(c.roundCount >= 2 && c.handshakeSegments >= 1, JSON.stringify(c.rounds));
    assert.deepEqual(
      c.rounds.map((r) => r.segments),
      seen.map(([, n]) => n),
      `${c.client}: h2lab ${JSON.stringify(c.rounds)}, ACKs ${JSON.stringify(seen)}`,
    );
    for (const [i, r] of c.rounds.entries())
      assert.ok(Math.abs(r.startMs - seen[i]![0]) < 0.01, `round ${i + 1}`);
  }
});
