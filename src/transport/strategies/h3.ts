/**
 * `h3`: one HTTP/3 connection over QUIC; concurrency becomes streams on it, capped by the peer's
 * initial_max_streams_bidi (RFC 9000 §4.6). A lost packet stalls only the streams whose data it
 * carried (RFC 9000 §2.2), where on one HTTP/2 connection it stalls every stream behind TCP's
 * in-order delivery. The connection machinery is src/transport/h3-conn.ts; QUIC itself is src/h3.
 */
import { BINDING_FACTS } from '../../h3/index.ts';
import { createH3 } from '../h3-conn.ts';
import type { Strategy } from '../strategy.ts';

export const h3: Strategy = {
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
  create: (b) =>
    createH3({
      name: b.name,
      target: b.target,
      authority: b.authority,
      window: b.window,
      pool: b.pool,
      connections: 1,
      policy: 'least-busy',
    }),
};
