// Whether the HTTP/3 binding loads here: every test that needs it skips with this reason when not.
import { loadBinding } from '../../src/h3/index.ts';

/**
 * The reason to skip (H2LAB_ERR_H3_UNAVAILABLE's message: the loader's words and the install
 * script to run), or undefined when the binding loads.
 */
export function h3SkipReason(): Promise<string | undefined> {
  return loadBinding().then(
    () => undefined,
    (err: Error) => err.message,
  );
}
