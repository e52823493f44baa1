// How long the HTTP/3 client's first request waits after its handshake, from the client's own qlog:
// the time from its Finished (its first Handshake packet sent) to its first packet on request stream
// 0. Two clients, each on N fresh connections to the fixture server:
//   binding   @currentspace/http3 alone on loopback: connectAsync, then request() at once
//   h2lab     h2lab's h3 transport through a relay link (one cold GET a burst, handshakes included)
// The gap is the binding's: its native worker tells JS the handshake is complete, and JS's request
// crosses back to the worker (docs/design.md, "HTTP/3: what the binding tells").
//
// Run as root for the link (the binding's line needs no root):
//   node --import tsx bench/h3-first-request.ts [--n 8] [--rtt 100]
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { H3_PACKAGE, jsonSeqRecords } from '../src/h3/index.ts';
import { runLoadThroughLink } from '../src/load/index.ts';
import { startFixture } from '../test/helpers/fixture.ts';
import { median, scratch } from './common.ts';

const { values } = parseArgs({
  options: { n: { type: 'string', default: '8' }, rtt: { type: 'string', default: '100' } },
});
const n = Number(values.n);
const rttMs = Number(values.rtt);
const { dir } = scratch('h2lab-h3-first-request-');

interface Rec {
  name?: string;
  data?: { header?: { packet_type?: string }; frames?: { frame_type?: string; stream_id?: number }[] };
  time?: number;
}
/** Finished → first packet on stream 0, ms, of each client qlog in `d`. */
function gaps(d: string): number[] {
  return readdirSync(d)
    .filter((f) => f.startsWith('client-'))
    .flatMap((f) => {
      const recs = jsonSeqRecords(readFileSync(join(d, f), 'utf8')) as Rec[];
      const sent = recs.filter((r) => r.name === 'quic:packet_sent');
      const fin = sent.find((r) => r.data?.header?.packet_type === 'handshake');
      const req = sent.find((r) =>
        r.data?.frames?.some((x) => x.frame_type === 'stream' && x.stream_id === 0),
      );
      return fin && req ? [req.time! - fin.time!] : [];
    });
}
const line = (name: string, xs: number[]): string =>
  `${name.padEnd(8)} n=${xs.length} median ${median(xs).toFixed(2)} ms; ${[...xs]
    .sort((a, b) => a - b)
    .map((x) => x.toFixed(2))
    .join(' ')}`;

console.log(`# HTTP/3 first request after the handshake — ${new Date().toISOString()}`);
console.log(
  `machine: ${cpus().length} cores, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);

const m = (await import(H3_PACKAGE)) as {
  connectAsync(
    a: string,
    o: Record<string, unknown>,
  ): Promise<{
    request(h: Record<string, string>, o: { endStream: boolean }): NodeJS.EventEmitter & { resume(): void };
    close(): Promise<void>;
  }>;
};
const srv = await startFixture({ h3: true });
const bindingDir = join(dir, 'binding');
try {
  for (let i = 0; i < n; i++) {
    const c = await m.connectAsync(`127.0.0.1:${new URL(srv.tlsUrl!).port}`, {
      ca: readFileSync(srv.caFile!),
      servername: 'localhost',
      qlogDir: bindingDir,
    });
    const st = c.request(
      { ':method': 'GET', ':path': '/bytes/1024', ':authority': 'localhost', ':scheme': 'https' },
      { endStream: true },
    );
    st.resume();
    await new Promise((r) => st.once('end', r));
    await c.close();
  }
} finally {
  await srv.close(0);
}
console.log(line('binding', gaps(bindingDir)), '(loopback)');

const linkDir = join(dir, 'h2lab');
await runLoadThroughLink(
  {
    protocol: 'h3',
    burst: 1,
    bursts: n,
    burstHandshakes: 'include',
    url: '/bytes/1024',
    qlogDir: linkDir,
    seed: 1,
  },
  { profile: { rttMs }, backend: 'relay' },
).done;
console.log(line('h2lab', gaps(linkDir)), `(through a ${rttMs} ms relay link)`);
console.log(`reproduce: node --import tsx bench/h3-first-request.ts --n ${n} --rtt ${rttMs}`);
process.exit(0);
