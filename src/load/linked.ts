/**
 * One load run through an emulated link — what `h2lab bench --net …` does, for a library user too.
 * Against the embedded fixture server, the server runs in the link's namespace (a
 * {@link FixtureTarget} placed there); against any other URL the namespace is a gateway to that
 * server (src/net/gateway.ts) and the engine dials the link's address. Either way the load engine
 * stays here in the host namespace and the link is recorded in the result.
 */

import { EventEmitter } from 'node:events';
import { resolve } from 'node:path';
import { H2labError } from '../core/index.ts';
import type { PathInfo, RunResult } from '../model/index.ts';
import {
  createLink,
  type Link,
  type LinkOptions,
  localityOf,
  measureBaseRtt,
  targetAddress,
} from '../net/index.ts';
import type { FixtureTarget, ServerOptionsInput } from '../server/index.ts';
import { DEFAULT_STRATEGY, usesQuic } from '../transport/index.ts';
import { isEmbedded, type LoadRun, runLoad } from './engine.ts';
import { type CaptureRequest, capturedRun, observe } from './observe.ts';
import { type LoadOptionsInput, resolveLoadOptions } from './options.ts';

/** Hooks of {@link runLoadThroughLink}. */
interface LinkedLoadHooks {
  /**
   * Called once the link is up, before the run (e.g. to print the link); `target` is the fixture
   * server behind it, undefined when the link leads to the URL's own server.
   */
  onLink?: (link: Link, target: FixtureTarget | undefined) => void;
  /** Fixture server options (its host, ports and certificate are the link's). */
  server?: ServerOptionsInput;
  /** Record the link's packets into `capture.dir` (`bench-<protocol>.pcapng`). */
  capture?: CaptureRequest;
}

/**
 * Runs `input` through a link made from `link`: against the fixture server behind it when
 * `input.url` is a path on the fixture server (default `/bytes/1024`), or against the URL's own
 * server — on this host (127.0.0.1 included) or another — through the link's gateway. The base RTT
 * to such a server is measured first (`environment.path`). The link's seed is the load's `seed`
 * when given. The fixture server's metrics are read unless `serverMetrics: false`.
 *
 * Throws H2LAB_ERR_INVALID_OPTION synchronously for bad options; `done` rejects when the link, the
 * server or the path cannot be set up (H2LAB_ERR_NET_UNAVAILABLE, H2LAB_ERR_NET_SETUP,
 * H2LAB_ERR_TARGET_UNREACHABLE) and otherwise resolves with the result, `environment.link` set, the
 * link's warnings and per-connection drops attached.
 *
 * @example
 * const run = runLoadThroughLink({ protocol: 'h2', durationMs: 2000 }, { profile: 'wan' });
 * const result = await run.done; // result.environment.link.rttMs === 40
 */
export function runLoadThroughLink(
  input: LoadOptionsInput,
  link: LinkOptions,
  hooks: LinkedLoadHooks = {},
): LoadRun {
  resolveLoadOptions(input); // fail on bad options before a link exists
  const seed = input.seed !== undefined ? { seed: input.seed } : {};
  if (!isEmbedded(input.url)) {
    // The URL's own server: measure the path without the link, make a link whose namespace forwards
    // to the server, and dial the link's address (the URL still names the server: authority, SNI,
    // certificate).
    const url = new URL(input.url!);
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    const quic = usesQuic([input.protocol ?? DEFAULT_STRATEGY]);
    return linkedLoadRun(hooks, async (start, stopped) => {
      const address = await targetAddress(url.hostname);
      const path = await measurePath(address, port, quic);
      if (stopped())
        throw new H2labError('H2LAB_ERR_INTERRUPTED', 'interrupted before the link was set up', {});
      const l = await createLink({ ...link, ...seed, target: address, targetPort: port, targetUdp: quic });
      try {
        const result = await start(l, undefined, { ...input, connectTo: l.serverAddress });
        if (path) result.environment.path = path;
        return result;
      } finally {
        await l.close();
      }
    });
  }
  return linkedLoadRun(hooks, async (start) =>
    // The server's modules load with a run, not with the engine (engine.ts, loadRunModules).
    (await import('../server/index.ts')).withLinkedTarget(
      { ...link, ...seed },
      ({ link: l, target }) => start(l, target, { ...input, serverMetrics: input.serverMetrics ?? true }),
      usesQuic([input.protocol ?? DEFAULT_STRATEGY])
        ? {
            // The fixture writes its side of each connection beside the client's qlog.
            ...(input.qlogDir ? { qlogDir: resolve(input.qlogDir) } : {}),
            ...hooks.server,
            h3: true,
            quicRetry: input.quicRetry ?? false,
          }
        : hooks.server,
    ),
  );
}

type StartLinked = (l: Link, target: FixtureTarget | undefined, load: LoadOptionsInput) => Promise<RunResult>;

/**
 * A {@link LoadRun} whose load starts once `body` has its link up: `start` runs the load (progress
 * forwarded, a stop asked for earlier honoured) and records the link in the result.
 */
function linkedLoadRun(
  hooks: LinkedLoadHooks,
  body: (start: StartLinked, stopped: () => boolean) => Promise<RunResult>,
): LoadRun {
  const events = new EventEmitter();
  let inner: LoadRun | undefined;
  let stopped = false;
  const start: StartLinked = async (l, target, load) => {
    hooks.onLink?.(l, target);
    const go = (): Promise<RunResult> => {
      inner = runLoad(load, target ? { target } : {});
      inner.events.on('progress', (p) => events.emit('progress', p));
      if (stopped) inner.stop();
      return inner.done;
    };
    const { capture } = hooks;
    const name = `bench-${load.protocol ?? DEFAULT_STRATEGY}`;
    const result = capture ? await capturedRun(l, capture, name, go) : await go();
    await observe(result, { link: { link: l } });
    return result;
  };
  return {
    done: body(start, () => stopped),
    events,
    stop() {
      stopped = true;
      inner?.stop();
    },
  };
}

/**
 * The path to a server h2lab did not start, without a link: TCP handshakes from here. An h3-only
 * target may have nothing on TCP: its path is then unknown (undefined), not an error.
 */
export async function measurePath(
  address: string,
  port: number,
  quic = false,
): Promise<PathInfo | undefined> {
  try {
    const [locality, rtt] = await Promise.all([localityOf(address), measureBaseRtt(address, port)]);
    return {
      target: `${address}:${port}`,
      placement: locality,
      baseRttMs: rtt.medianMs,
      baseRttMinMs: rtt.minMs,
      samples: rtt.samplesMs.length,
    };
  } catch (err) {
    if (quic) return undefined;
    throw err;
  }
}
