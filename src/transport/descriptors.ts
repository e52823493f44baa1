/**
 * What each built-in strategy declares about itself, apart from how it is built: its name, wire
 * protocols, connection model and report labels (a {@link StrategyDescriptor}). The registry and the
 * flags' help read these without loading a transport (`bench --help`); each strategy's
 * `create` is in its file under strategies/, handed to the registry by src/transport/index.ts.
 */
import { BINDING_FACTS } from '../h3/index.ts';
import type { StrategyDescriptor } from './strategy.ts';

/**
 * `h1`: a pool of N keep-alive HTTP/1.1 connections, one request in flight on each — what browsers
 * (six per host) and most clients do.
 */
export const H1: StrategyDescriptor = {
  name: 'h1',
  http: 'HTTP/1.1',
  // Offer only http/1.1 over TLS: offering h2 too would let the server pick it.
  requests: { tls: 'http/1.1', cleartext: 'http/1.1' },
  http2: false,
  multiplexed: false,
  // Six: the browsers' per-host limit.
  connections: { unit: 'connection', default: 6 },
  summary: 'HTTP/1.1 connection pool',
  describe: (size) =>
    size === 'concurrency'
      ? 'HTTP/1.1, one connection per request in flight'
      : `HTTP/1.1, up to ${size} connections`,
  colour: '#e69f00',
  // What HTTP/2 has to beat: the protocol every server and client already speaks.
  baseline: true,
};

/**
 * `h2`: one HTTP/2 session; concurrency becomes streams on it, capped by the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §5.1.2).
 */
export const H2: StrategyDescriptor = {
  name: 'h2',
  http: 'HTTP/2',
  // h2c with prior knowledge over cleartext (RFC 9113 §3.3); ALPN h2 over TLS.
  requests: { tls: 'h2', cleartext: 'h2c' },
  http2: true,
  multiplexed: true,
  connections: { unit: 'session', fixed: 1 },
  summary: 'one HTTP/2 session',
  describe: () => 'one HTTP/2 session',
  colour: '#0072b2',
};

/**
 * `h2-pool`: K independent HTTP/2 sessions, each request sent on the session a named policy chooses
 * (least-busy, round-robin, first-free).
 */
export const H2_POOL: StrategyDescriptor = {
  name: 'h2-pool',
  http: 'HTTP/2',
  requests: { tls: 'h2', cleartext: 'h2c' },
  http2: true,
  multiplexed: true,
  connections: { unit: 'session', default: 4, policy: true },
  summary: 'pool of HTTP/2 sessions',
  describe: (size) => `up to ${size} HTTP/2 sessions`,
  colour: '#009e73',
};

/**
 * `h3`: one HTTP/3 connection over QUIC; concurrency becomes streams on it, capped by the peer's
 * initial_max_streams_bidi (RFC 9000 §4.6). A lost packet stalls only the streams whose data it
 * carried (RFC 9000 §2.2), where on one HTTP/2 connection it stalls every stream behind TCP's
 * in-order delivery.
 */
export const H3: StrategyDescriptor = {
  name: 'h3',
  http: 'HTTP/3',
  // QUIC is always encrypted: there is no cleartext HTTP/3 (createH3 refuses an http:// URL).
  requests: { tls: 'h3', cleartext: 'h3' },
  http2: false,
  multiplexed: true,
  connections: { unit: 'connection', fixed: 1 },
  summary: 'one HTTP/3 connection (QUIC)',
  describe: () => 'one HTTP/3 connection over QUIC',
  colour: '#cc79a7',
  quic: BINDING_FACTS,
  optIn: true,
};

/**
 * `h3-pool`: K independent HTTP/3 connections, each request sent on the one a named policy chooses,
 * as `h2-pool` does with HTTP/2 sessions.
 */
export const H3_POOL: StrategyDescriptor = {
  name: 'h3-pool',
  http: 'HTTP/3',
  requests: { tls: 'h3', cleartext: 'h3' },
  http2: false,
  multiplexed: true,
  connections: { unit: 'connection', default: 4, policy: true },
  summary: 'pool of HTTP/3 connections (QUIC)',
  describe: (size) => `up to ${size} HTTP/3 connections over QUIC`,
  colour: '#56b4e9',
  quic: BINDING_FACTS,
  optIn: true,
};

/** The built-in strategies, in the order they are documented, listed and compared. */
export const BUILT_IN_STRATEGIES: readonly StrategyDescriptor[] = [H1, H2, H2_POOL, H3, H3_POOL];
