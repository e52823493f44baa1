/**
 * `h3`: one HTTP/3 connection over QUIC; concurrency becomes streams on it (src/transport/descriptors.ts
 * says what it declares and why). The connection machinery is src/transport/h3-conn.ts; QUIC itself
 * is src/h3.
 */
import { H3 } from '../descriptors.ts';
import { createH3 } from '../h3-conn.ts';
import type { Strategy } from '../strategy.ts';

export const h3: Strategy = {
  ...H3,
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
