// Does HTTP/3 0-RTT resumption work against the fixture? Through one relay link of --rtt ms
// (100 Mbit/s, no loss), the fixture with h3 on (no Retry) in the link's server namespace:
//   1. the binding's own client (@currentspace/http3, as src/h3/binding.ts loads it): a cold
//      connection keeps its `sessionTicket`; then, --rounds times, a cold connection and one given
//      the ticket with `allow0RTT`, whose GET is tried from the moment the connection exists.
//      Prints time to the whole 1 KiB response, when `request()` first succeeded, and whether the
//      handshake had completed by then (0-RTT means it had not, and the response comes ~1 RTT sooner).
//   2. ngtcp2's gtlsclient twice with --session-file/--tp-file: its log says whether the server
//      accepted its early data.
// Run as root: node --import tsx bench/h3-resume.ts [--rtt 100] [--rounds 3]
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect } from '@currentspace/http3';
import { createLink } from '../src/net/index.ts';
import { startFixtureTarget } from '../src/server/index.ts';
import { requireTools, runTool, scratch } from './common.ts';

const { values } = parseArgs({
  options: { rtt: { type: 'string', default: '100' }, rounds: { type: 'string', default: '3' } },
});
const rttMs = Number(values.rtt);
const rounds = Number(values.rounds);
requireTools([['gtlsclient', '--help']]);
const { dir } = scratch('h2lab-h3-resume-');

/** The binding's client session, with the members this probe reads beyond its typed surface. */
type Session = ReturnType<typeof connect> & { _eventLoop?: unknown; _handshakeComplete?: boolean };
interface Fetch {
  ms: number;
  requestAtMs: number;
  refusals: number;
  handshakeDoneAtRequest: boolean;
  ticket?: Buffer;
  firstRefusal?: string;
}

const link = await createLink({
  profile: { rttMs, loss: 0, rateBitsPerSec: 100e6 },
  backend: 'relay',
  seed: 1,
});
const fixture = await startFixtureTarget({ h3: true }, { link });
const u = new URL(fixture.h3Url!);

async function fetchOnce(ticket?: Buffer): Promise<Fetch> {
  const t0 = performance.now();
  const s = connect(`${u.hostname}:${u.port}`, {
    ca: fixture.caPem!,
    servername: 'localhost',
    ...(ticket ? { sessionTicket: ticket, allow0RTT: true } : {}),
  }) as Session;
  let got: Buffer | undefined;
  s.on('sessionTicket', (t: Buffer) => {
    got = t;
  });
  s.on('error', () => {});
  if (ticket) while (!s._eventLoop) await new Promise((r) => setImmediate(r));
  else await s.ready();
  let refusals = 0;
  let firstRefusal: string | undefined;
  let st: ReturnType<Session['request']>;
  for (;;) {
    try {
      st = s.request(
        { ':method': 'GET', ':path': '/bytes/1024', ':authority': 'localhost', ':scheme': 'https' },
        { endStream: true },
      );
      break;
    } catch (err) {
      refusals++;
      firstRefusal ??= (err as Error).message;
      if (performance.now() - t0 > 10_000) throw err;
      await new Promise((r) => setTimeout(r, 1));
    }
  }
  const requestAtMs = performance.now() - t0;
  const handshakeDoneAtRequest = s._handshakeComplete === true;
  let bytes = 0;
  await new Promise<void>((resolve, reject) => {
    st.on('data', (d: Buffer) => {
      bytes += d.length;
    });
    st.on('end', resolve);
    st.on('error', reject);
  });
  const ms = performance.now() - t0;
  if (bytes !== 1024) throw new Error(`${bytes} of 1024 bytes`);
  // The ticket arrives after the handshake; give it a moment before closing.
  await new Promise((r) => setTimeout(r, 200));
  await s.close().catch(() => {});
  return {
    ms,
    requestAtMs,
    refusals,
    handshakeDoneAtRequest,
    ...(got ? { ticket: got } : {}),
    ...(firstRefusal ? { firstRefusal } : {}),
  };
}

const line = (f: Fetch): string =>
  `${f.ms.toFixed(1)} ms (request() succeeded at ${f.requestAtMs.toFixed(1)} ms after ${f.refusals} refusals; handshake complete then: ${f.handshakeDoneAtRequest})`;
try {
  console.log(`# HTTP/3 resumption through ${rttMs} ms, 100 Mbit/s, against ${fixture.h3Url}`);
  const first = await fetchOnce();
  if (!first.ticket) throw new Error('the first connection received no session ticket');
  console.log(`first connection: ${line(first)}; session ticket ${first.ticket.length} B`);
  for (let r = 0; r < rounds; r++) {
    const cold = await fetchOnce();
    const resumed = await fetchOnce(first.ticket);
    console.log(`r${r + 1} cold    ${line(cold)}`);
    console.log(`r${r + 1} resumed ${line(resumed)}`);
    if (resumed.firstRefusal) console.log(`   first refusal: ${resumed.firstRefusal}`);
  }
  const files = mkdtempSync(join(dir, 'gtls-'));
  for (const run of ['first', 'resumed']) {
    const out = await runTool(
      'sh',
      [
        '-c',
        `gtlsclient --exit-on-all-streams-close --no-quic-dump --no-http-dump --session-file=${files}/session --tp-file=${files}/tp ${u.hostname} ${u.port} https://localhost:${u.port}/bytes/1024 2>&1`,
      ],
      30_000,
    );
    const said = out.split('\n').filter((l) => /early data|0RTT STREAM|Handshake CRYPTO/i.test(l));
    console.log(`gtlsclient ${run}:\n  ${said.join('\n  ')}`);
  }
} finally {
  await fixture.close();
  await link.close();
}
process.exit(0);
