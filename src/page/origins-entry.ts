/**
 * A page's origin listeners in a child process (inside a link's server namespace, or Chromium's
 * private one): told what to serve over IPC ({@link ToOrigins}) — a replay's settings, for which it
 * reads the HAR itself (bodies never cross the channel), or a generated page — it starts the
 * listeners on the namespace's address and answers with their ports.
 */
import { isH2labError } from '../core/index.ts';
import type { OriginServers } from '../server/index.ts';
import { readHar } from './har.ts';
import { type FromOrigins, startSettings, startSiteHere, type ToOrigins } from './origins-host.ts';

if (!process.send) throw new Error('origins-entry: started without an IPC channel');
const send = (m: FromOrigins) => process.send!(m);
let servers: OriginServers[] = [];
const stop = async () => {
  for (const s of servers) await s.close();
  process.exit(0);
};
const failed = (err: unknown) =>
  send({
    type: 'error',
    error: isH2labError(err)
      ? { code: err.code, message: err.message }
      : { code: 'H2LAB_ERR_INTERNAL', message: String(err) },
  });
// The owner died or closed the channel: nothing else stops these listeners.
process.on('disconnect', () => void stop());
process.on('message', async (raw) => {
  const msg = raw as ToOrigins;
  if (msg.type === 'start') {
    try {
      const site = readHar(msg.har.file, msg.har.limits);
      const started = await startSettings(
        site,
        msg.settings,
        msg.ca,
        msg.maxStreams,
        msg.address,
        msg.quicAddress,
      );
      servers = started.servers;
      send({ type: 'ready', settings: started.settings });
    } catch (err) {
      failed(err);
    }
  } else if (msg.type === 'start-site') {
    try {
      const o = await startSiteHere(msg.spec, msg.ca, msg.address, msg.quicAddress);
      servers = [o];
      send({ type: 'site-ready', url: o.url, listeners: [...o.listeners], certPems: [...o.certPems] });
    } catch (err) {
      failed(err);
    }
  } else if (msg.type === 'misses') {
    send({ type: 'misses', misses: [...new Set(servers.flatMap((s) => s.tally().misses))] });
  } else await stop();
});
