/**
 * Entry point of the relay child process (spawned by `link.ts` with an IPC channel).
 *
 * Protocol (IPC messages): parent → `{type:'start', clientName, serverName, up, down, seed, slackMs}`;
 * child → `{type:'ready', client, server}` once both TUN devices are open (the parent then moves the
 * server one into its namespace). `{type:'stats'}` → `{type:'stats', stats, cpuUs, uptimeMs}`.
 * `{type:'stop'}` or a closed channel (the parent died) → exit; the kernel then destroys both TUN
 * devices because they are not persistent.
 */
import { stat } from 'node:fs/promises';
import { createLinkModel } from './model.ts';
import { loadNative } from './native.ts';
import type { DirectionSpec } from './profiles.ts';
import { Relay } from './relay.ts';

export interface StartMessage {
  type: 'start';
  clientName: string;
  serverName: string;
  up: DirectionSpec;
  down: DirectionSpec;
  seed: number;
  slackMs?: number;
}

function send(msg: unknown): void {
  process.send?.(msg);
}

let relay: Relay | undefined;
const fds: number[] = [];
const cpuStart = process.cpuUsage();
const started = performance.now();

function stop(code: number): never {
  try {
    relay?.close();
    const native = loadNative();
    for (const fd of fds) native.closeFd(fd);
  } catch {}
  process.exit(code);
}

process.on('disconnect', () => stop(0));
process.on('message', async (raw) => {
  const msg = raw as { type: string };
  try {
    if (msg.type === 'start') {
      // Start libuv's thread pool now, while this process still has ordinary priority: the parent
      // then makes only this main thread realtime, and threads created later would inherit that.
      await stat(process.execPath);
      const m = msg as StartMessage;
      const native = loadNative();
      const client = native.openTun(m.clientName);
      fds.push(client.fd);
      const server = native.openTun(m.serverName);
      fds.push(server.fd);
      const model = createLinkModel({ up: m.up, down: m.down }, m.seed);
      relay = new Relay(native, {
        clientFd: client.fd,
        serverFd: server.fd,
        up: model.up,
        down: model.down,
        ...(m.slackMs === undefined ? {} : { slackMs: m.slackMs }),
      });
      send({ type: 'ready', client: client.name, server: server.name });
    } else if (msg.type === 'stats') {
      const cpu = process.cpuUsage(cpuStart);
      send({
        type: 'stats',
        stats: relay?.stats(),
        cpuUs: cpu.user + cpu.system,
        uptimeMs: performance.now() - started,
      });
    } else if (msg.type === 'stop') {
      stop(0);
    }
  } catch (err) {
    const e = err as Error & { code?: string; details?: unknown };
    send({ type: 'error', code: e.code, message: e.message, details: e.details });
  }
});
