// Whether Chromium can run here (the browser tests skip with the reason when not).
import { accessSync, constants } from 'node:fs';
import { DEFAULT_CHROMIUM_PATH } from '../../src/model/index.ts';

/** The reason to skip, or undefined when Chromium can run here. */
export function chromiumMissing(): string | undefined {
  try {
    accessSync(DEFAULT_CHROMIUM_PATH, constants.X_OK);
    return undefined;
  } catch {
    return `${DEFAULT_CHROMIUM_PATH} is not installed (apt-get install chromium)`;
  }
}
