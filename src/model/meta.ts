/**
 * The model's light face (docs/design.md, "Start-up: what a command's help loads"): facts a command's
 * flags need without loading the schemas (and zod with them).
 */

/** A client strategy's name: a CLI value and a file name (src/transport/registry.ts checks it). */
export const STRATEGY_NAME_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

/** Where Debian's `chromium` package installs its launcher (`--chromium`'s default). */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';
