/**
 * `h2`: one HTTP/2 session; concurrency becomes streams on it, capped by the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §5.1.2). What it declares is
 * src/transport/descriptors.ts; the session machinery is src/transport/h2-session.ts.
 */
import { H2 } from '../descriptors.ts';
import { createH2Session } from '../h2-session.ts';
import type { Strategy } from '../strategy.ts';

export const h2: Strategy = {
  ...H2,
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
