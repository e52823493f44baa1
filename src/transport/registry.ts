/**
 * The strategy registry: the one list of client strategies. Everything above src/transport asks it
 * (through src/transport/index.ts) what a strategy is called, what it requests, how it sizes its
 * connections and how reports draw it; nothing there compares a strategy's name to a string
 * (test/transport/registry.test.ts holds that).
 *
 * To add a strategy: declare it in descriptors.ts (and add it to `BUILT_IN_STRATEGIES` there), write
 * `strategies/<name>.ts` exporting the {@link Strategy} (the descriptor with its `create`), and hand it
 * over in src/transport/index.ts. A library user (or a test) can also {@link registerStrategy} one at
 * run time.
 *
 * This module loads no transport (docs/design.md, "Start-up: what a command's help loads"): the flags
 * of `bench` and `compare` read it through src/transport/meta.ts.
 */
import { invalidOption } from '../core/index.ts';
import { STRATEGY_NAME_PATTERN } from '../model/meta.ts';
import { BUILT_IN_STRATEGIES, H2 } from './descriptors.ts';
import type { Strategy, StrategyDescriptor } from './strategy.ts';

/**
 * The strategy `h2lab bench` (and `runLoad`) uses when none is named: one HTTP/2 session, what a
 * browser opens to an HTTP/2 origin — the thing h2lab is built to measure.
 */
export const DEFAULT_STRATEGY = H2.name;

const strategies = new Map<string, Strategy>();

/**
 * Adds a strategy. Its name must be new and a short lower-case id (it is a CLI value and a file
 * name); at most one strategy may be the baseline. Returns a function that removes it again.
 * It is registered in this thread only: `--workers` threads load the registry afresh and know the
 * built-ins alone, so a run-time strategy runs with one worker (a built-in one in `BUILT_IN_STRATEGIES`).
 * @example
 * // One HTTP/1.1 connection, whatever --connections says (not a second baseline).
 * const remove = registerStrategy({
 *   ...getStrategy('h1'), name: 'h1-single', baseline: false, connections: { unit: 'connection', fixed: 1 },
 * });
 */
export function registerStrategy(s: Strategy): () => void {
  if (!STRATEGY_NAME_PATTERN.test(s.name)) {
    throw invalidOption('strategy name', s.name, 'use lower-case letters, digits and dashes, e.g. h1-single');
  }
  if (strategies.has(s.name)) {
    throw invalidOption(
      'strategy name',
      s.name,
      'a strategy of that name is registered already: choose another',
    );
  }
  if (s.baseline && baselineStrategy(false)) {
    throw invalidOption(
      'strategy baseline',
      s.name,
      `${baselineStrategy().name} is the baseline already: drop baseline`,
    );
  }
  strategies.set(s.name, s);
  return () => {
    if (strategies.get(s.name) === s) strategies.delete(s.name);
  };
}

/**
 * The built-ins' `create` functions, by name: handed over by src/transport/index.ts when the
 * transports load ({@link provideBuiltIns}). The registry itself loads only their descriptors, so
 * that a command's flags can list the strategies without loading a transport.
 */
const builtInCreate = new Map<string, Strategy['create']>();

/** A built-in strategy: its descriptor, with a `create` that calls the implementation handed over. */
function builtIn(d: StrategyDescriptor): Strategy {
  return {
    ...d,
    create: (b) => {
      const create = builtInCreate.get(d.name);
      // Unreachable through createTransport, whose module hands the implementations over.
      if (!create) throw new Error(`strategy ${d.name}: import src/transport/index.ts to build it`);
      return create(b);
    },
  };
}

/**
 * Hands the built-in strategies' implementations to the registry (src/transport/index.ts does, as it
 * loads them). A strategy that is not a built-in is refused: register it with {@link registerStrategy}.
 */
export function provideBuiltIns(list: readonly Pick<Strategy, 'name' | 'create'>[]): void {
  for (const s of list) {
    if (!isBuiltInStrategy(s.name)) throw new Error(`strategy ${s.name} is not a built-in`);
    builtInCreate.set(s.name, s.create);
  }
}

for (const d of BUILT_IN_STRATEGIES) registerStrategy(builtIn(d));

/** Names of every registered strategy, in registration order (the built-ins first). */
export function strategyNames(): string[] {
  return [...strategies.keys()];
}

/** Every registered strategy, in registration order. */
export function listStrategies(): Strategy[] {
  return [...strategies.values()];
}

/** Whether `name` is one of {@link BUILT_IN_STRATEGIES}: known to every thread, worker threads included. */
export function isBuiltInStrategy(name: string): boolean {
  return BUILT_IN_STRATEGIES.some((s) => s.name === name);
}

/** The strategy registered as `name`, or undefined (e.g. a result file written with an extension). */
export function findStrategy(name: string): Strategy | undefined {
  return strategies.get(name);
}

/**
 * The strategy registered as `name`. Throws H2LAB_ERR_INVALID_OPTION naming `option` and the choices.
 */
export function getStrategy(name: string, option = '--protocol'): Strategy {
  const s = strategies.get(name);
  if (!s) throw invalidOption(option, name, `use one of ${strategyNames().join(', ')}`);
  return s;
}

/** The baseline strategy (the one that declares `baseline`). */
export function baselineStrategy(): Strategy;
export function baselineStrategy(required: false): Strategy | undefined;
export function baselineStrategy(required = true): Strategy | undefined {
  const s = listStrategies().find((x) => x.baseline);
  if (!s && required) throw new Error('no registered strategy declares baseline: true');
  return s;
}

/**
 * Whether any of the named strategies speaks QUIC: an embedded fixture server must then listen for
 * HTTP/3 too (`h3: true` in its options).
 */
export function usesQuic(names: readonly string[]): boolean {
  return names.some((n) => findStrategy(n)?.quic !== undefined);
}

/**
 * Compare's default matrix: every registered strategy but the opt-in ones (HTTP/3 needs an optional
 * binding and a UDP listener: a comparison run without naming it stays what it was).
 */
export function defaultMatrixStrategies(): string[] {
  return listStrategies()
    .filter((s) => !s.optIn)
    .map((s) => s.name);
}

/** The wire protocol `s` requests from a target at `url` (`https:` = TLS with ALPN). */
export function requestedWire(s: Strategy, url: string | URL): Strategy['requests']['tls'] {
  const tls = (typeof url === 'string' ? url : url.href).startsWith('https:');
  return tls ? s.requests.tls : s.requests.cleartext;
}

/** "h1 (HTTP/1.1 connection pool)": a strategy's name with its summary; the bare name if unknown. */
export function strategyLabel(name: string): string {
  const s = findStrategy(name);
  return s ? `${s.name} (${s.summary})` : name;
}

/**
 * The multiplexed strategy of a shape over one wire protocol: `one` session, or a `pool` of sessions
 * (a strategy that takes a session policy). `wire` defaults to the default strategy's ALPN id, so
 * `multiplexedStrategy('one')` is the default strategy itself. For callers that need a role, not a
 * name (a study comparing a pool with a single session).
 */
export function multiplexedStrategy(
  shape: 'one' | 'pool',
  wire: Strategy['requests']['tls'] = getStrategy(DEFAULT_STRATEGY).requests.tls,
): Strategy | undefined {
  return listStrategies().find(
    (s) =>
      s.multiplexed &&
      s.requests.tls === wire &&
      (shape === 'one' ? s.connections.fixed === 1 : s.connections.policy === true),
  );
}
