/**
 * One load run through an emulated link: the fixture server in the link's server namespace (a
 * {@link FixtureTarget} placed there), the load engine here in the host namespace, and the link
 * recorded in the result — what `h2lab bench --net …` does, for a library user too.
 */
import { EventEmitter } from 'node:events';
import { H2labError } from '../core/index.ts';
import type { RunResult } from '../model/index.ts';
import {
  attachLinkDrops,
  attachQuicLinkDrops,
  type Link,
  type LinkOptions,
  linkWarnings,
} from '../net/index.ts';
import { type FixtureTarget, type ServerOptionsInput, withLinkedTarget } from '../server/index.ts';
import { DEFAULT_STRATEGY, usesQuic } from '../transport/index.ts';
import { isEmbedded, type LoadRun, runLoad } from './engine.ts';
import { type LoadOptionsInput, resolveLoadOptions } from './options.ts';

/** Hooks of {@link runLoadThroughLink}. */
export interface LinkedLoadHooks {
  /** Called once the link and its fixture server are up, before the run (e.g. to print the link). */
  onLink?: (link: Link, target: FixtureTarget) => void;
  /** Fixture server options (its host, ports and certificate are the link's). */
  server?: ServerOptionsInput;
}

/**
 * Runs `input` against the fixture server behind a link made from `link`. `input.url` may be a path
 * on the fixture server (default `/bytes/1024`), never another server's URL: that server cannot be
 * moved into the namespace (run it behind a link with `h2lab net run` and bench its address). The
 * link's seed is the load's `seed` when given. The server's metrics are read unless
 * `serverMetrics: false`.
 *
 * Throws H2LAB_ERR_INVALID_OPTION synchronously for a full URL or bad options; `done` rejects when
 * the link or the server cannot be set up (H2LAB_ERR_NET_UNAVAILABLE, H2LAB_ERR_NET_SETUP) and
 * otherwise resolves with the result, `environment.link` set, the link's warnings and per-connection
 * drops attached.
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
  if (!isEmbedded(input.url)) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `--net needs the embedded fixture server (give a path such as /bytes/1024, not the URL ${JSON.stringify(input.url)}); for your own server run it behind a link with \`h2lab net run --profile P -- CMD\` and bench the address it prints`,
      { option: '--net', value: input.url },
    );
  }
  resolveLoadOptions(input); // fail on bad options before a link exists
  const events = new EventEmitter();
  let inner: LoadRun | undefined;
  let stopped = false;
  const linkOptions: LinkOptions = { ...link, ...(input.seed !== undefined ? { seed: input.seed } : {}) };
  const done = withLinkedTarget(
    linkOptions,
    async ({ link: l, target }): Promise<RunResult> => {
      hooks.onLink?.(l, target);
      inner = runLoad({ ...input, serverMetrics: input.serverMetrics ?? true }, { target });
      inner.events.on('progress', (p) => events.emit('progress', p));
      if (stopped) inner.stop();
      const result = await inner.done;
      result.environment.link = l.info;
      if (l.info.congestionControl) result.environment.congestionControl = l.info.congestionControl;
      const stats = await l.stats();
      result.warnings.push(...linkWarnings(stats));
      attachLinkDrops(result, stats);
      attachQuicLinkDrops(result, stats);
      return result;
    },
    usesQuic([input.protocol ?? DEFAULT_STRATEGY]) ? { ...hooks.server, h3: true } : hooks.server,
  );
  return {
    done,
    events,
    stop() {
      stopped = true;
      inner?.stop();
    },
  };
}
