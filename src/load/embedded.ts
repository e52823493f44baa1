/**
 * The embedded target: `h2lab bench` with no URL starts the fixture server on free loopback ports.
 */
import { H2labError } from '../errors.ts';
import type { ResolvedLoadOptions } from './options.ts';

/** A started embedded target. */
export interface EmbeddedTarget {
  url: string;
  caPem?: string;
  close(): Promise<void>;
}

/** Starts the fixture server and returns the URL of the listener the options ask for. */
export async function startEmbeddedServer(_o: ResolvedLoadOptions): Promise<EmbeddedTarget> {
  throw new H2labError(
    'H2LAB_ERR_USAGE',
    'no URL given and the embedded fixture server is not available: pass a URL',
    {},
  );
}
