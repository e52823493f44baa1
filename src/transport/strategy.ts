/**
 * What a client strategy declares about itself (docs/performance.md, "Strategies: the registry"). Every
 * folder above src/transport reads these fields instead of comparing a strategy's name to a string:
 * the CLI's `--protocol` choices, the load options, compare's matrix and baseline, the synthetic
 * results and the report's labels, colours and settings all come from here.
 */
import type { WireProtocol } from '../model/index.ts';
import type { ConnectTarget } from './connect.ts';
import type { WindowSizes } from './h2-connect.ts';
import type { PoolSettings } from './pool-conn.ts';
import type { H2ClientImpl, PoolPolicy } from './presets.ts';
import type { Transport } from './types.ts';

/** What `create()` receives: the target resolved once by `createTransport`, and the run's sizes. */
export interface StrategyBuild {
  /** The registry key; the transport reports it as its `name`. */
  name: string;
  target: ConnectTarget;
  /** `host:port`, for the Host header or `:authority`. */
  authority: string;
  /** Timeouts, clock, on-demand opening and the TCP log every pool shares. */
  pool: Omit<PoolSettings, 'name' | 'requested' | 'policy' | 'openAtStart' | 'size'>;
  /** Connections (sessions) asked for; a strategy with a fixed count ignores it. */
  connections: number;
  /** Session choice policy (strategies with `connections.policy`). */
  policy: PoolPolicy;
  /** HTTP/2 strategies: the windows to advertise and the client implementation. */
  window: WindowSizes;
  h2Client: H2ClientImpl;
}

/** How a strategy turns a run's `connections` and concurrency into sockets. */
interface ConnectionModel {
  /** What one connection is called in reports: `connection` (h1) or `session` (HTTP/2). */
  unit: 'connection' | 'session';
  /**
   * A count that no option changes (h2: one session). Each worker thread then opens this many, and
   * the run records this count.
   */
  fixed?: number;
  /** The load engine's default when `connections` is not given and the count is not fixed. */
  default?: number;
  /** Takes a named session choice policy (`--policy`), recorded in every result. */
  policy?: boolean;
}

/**
 * A client strategy: its descriptor in src/transport/descriptors.ts, its `create` in one file in
 * src/transport/strategies/ (the file name is `name`), and one entry in the registry's list
 * (src/transport/registry.ts).
 */
export interface Strategy {
  /** The registry key: the `--protocol` value, the result's `transport.name`, the file name. */
  readonly name: string;
  /** The HTTP version in words (`HTTP/1.1`, `HTTP/2`), as in "HTTP/2 not offered by the server". */
  readonly http: string;
  /** The wire protocol it insists on over TLS (the ALPN id) and over cleartext. */
  readonly requests: { readonly tls: WireProtocol; readonly cleartext: WireProtocol };
  /** Speaks HTTP/2: takes the flow-control windows (`--window`) and the client choice (`--h2-client`). */
  readonly http2: boolean;
  /**
   * Several requests in flight on one connection (streams). When false, one request per connection:
   * the load engine's default concurrency is then the pool size (more would only queue in the
   * client), and compare sizes its pool with `--h1-connections`; a multiplexed pool is sized with
   * `--h2-pool-sessions`.
   */
  readonly multiplexed: boolean;
  readonly connections: ConnectionModel;
  /** Reports: what it is in a few words, after its name ("one HTTP/2 session"). */
  readonly summary: string;
  /**
   * Reports (the HTML legend): how it was built, given its size in the comparison (a number, a list
   * per concurrency joined with `/`, or `concurrency`); ignored by a fixed count.
   * @example describe('6') // "HTTP/1.1, up to 6 connections"
   */
  describe(size: string): string;
  /** Reports: its colour in every chart, a CSS colour. */
  readonly colour: string;
  /**
   * HTTP/3 strategies: what carries QUIC (the binding, its congestion controller), recorded in every
   * result as `transport.quic`. QUIC's congestion control is in user space, not the kernel's `--cc`.
   */
  readonly quic?: { readonly binding: string; readonly congestionControl: string };
  /**
   * Left out of compare's default matrix, run only when named in `--protocols` (HTTP/3: its binding
   * is optional and it needs the server's UDP listener).
   */
  readonly optIn?: boolean;
  /** The strategy the others are measured against when `--baseline` is not given (exactly one). */
  readonly baseline?: boolean;
  /** Builds the transport. */
  create(b: StrategyBuild): Transport;
}

/**
 * A strategy without its `create`: what the registry, the flags' help and the reports read. The
 * built-ins' descriptors are src/transport/descriptors.ts, light to load; their `create` functions
 * load with the transports (src/transport/index.ts).
 */
export type StrategyDescriptor = Omit<Strategy, 'create'>;
