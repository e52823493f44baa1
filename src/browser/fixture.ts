/**
 * Starting h2lab's fixture server for the browser experiments: both listeners on free loopback
 * ports, with the development certificates (their SPKI is pinned in Chromium).
 */
import { startServer } from '../server/index.ts';
import type { FixtureHandle, FixtureStartOptions } from './measure.ts';

/** Starts the fixture server on free loopback ports; `close()` does not wait for in-flight work. */
export async function startFixture(opts: FixtureStartOptions): Promise<FixtureHandle> {
  const s = await startServer({
    host: '127.0.0.1',
    port: 0,
    tlsPort: 0,
    poolSize: opts.poolSize,
    tileMs: opts.tileMs,
    ignoreCancel: opts.ignoreCancel,
    maxConcurrentStreams: opts.maxConcurrentStreams,
  });
  return {
    plainUrl: s.plainUrl!,
    tlsUrl: s.tlsUrl!,
    certPem: s.certPem,
    ...(s.caPem ? { caPem: s.caPem } : {}),
    close: () => s.close(0),
  };
}
