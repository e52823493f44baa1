/**
 * The typed messages between a fixture target's owner and the fixture server it runs elsewhere — in
 * a worker thread (over its MessagePort) or in a child process inside a network namespace (over the
 * IPC channel of `child_process`). One protocol for both channels, so the two placements cannot
 * drift apart; the owner never reads the child's stdout.
 *
 * ```
 *   owner                                   thread / child (target-entry.ts)
 *   ── { type:'start', options } ─────────▶  startServer(options)
 *   ◀──────── { type:'ready', plainUrl, tlsUrl, caPem?, caFile?, certPem }
 *          or { type:'error', error: { code, message, details } }
 *   ── { type:'metrics', reset? } ────────▶  server.metrics() (after resetMetrics())
 *   ◀──────────────────── { type:'metrics', snapshot }
 *   ── { type:'stop' } ───────────────────▶  server.close(0)
 *   ◀──────────────────────── { type:'stopped' }
 * ```
 * A child whose channel closes (the owner died) closes its server and exits.
 */
import type { MetricsSnapshot } from './metrics.ts';
import type { ServerOptionsInput } from './options.ts';

/**
 * Owner → server. `metrics` is for an owner that cannot reach the server's address (a server in a
 * namespace of its own, on 127.0.0.1 there): the snapshot `/metrics?format=json` would give.
 */
export type ToTarget =
  | { type: 'start'; options: ServerOptionsInput }
  | { type: 'metrics'; reset?: boolean }
  | { type: 'stop' };

/** Server → owner. */
export type FromTarget =
  | {
      type: 'ready';
      plainUrl?: string;
      tlsUrl?: string;
      h3Url?: string;
      h3Unavailable?: string;
      caPem?: string;
      caFile?: string;
      certPem: string;
    }
  | { type: 'error'; error: { code: string; message: string; details: Record<string, unknown> } }
  | { type: 'metrics'; snapshot: MetricsSnapshot }
  | { type: 'stopped' };
