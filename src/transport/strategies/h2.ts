/**
 * `h2`: one HTTP/2 session; concurrency becomes streams on it, capped by the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §5.1.2). The session machinery is
 * src/transport/h2-session.ts.
 */
import { createH2Session } from '../h2-session.ts';
import type { Strategy } from '../strategy.ts';

export const h2: Strategy = {
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
  create: (b) =>
    createH2Session({
      name: b.name,
      target: b.target,
      authority: b.authority,
      window: b.window,
      client: b.h2Client,
      pool: b.pool,
    }),
};
