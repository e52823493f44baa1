/**
 * Starting h2lab's fixture server for the browser experiments.
 */
import { H2labError } from '../errors.ts';
import type { FixtureHandle, FixtureStartOptions } from './measure.ts';

/** Starts the fixture server on free loopback ports. */
export async function startFixture(_opts: FixtureStartOptions): Promise<FixtureHandle> {
  throw new H2labError(
    'H2LAB_ERR_INVALID_OPTION',
    'h2lab browser needs ORIGIN arguments until the fixture server is available',
    {
      option: 'ORIGIN',
    },
  );
}
