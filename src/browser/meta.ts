/**
 * The browser subsystem's light face (docs/design.md, "Start-up: what a command's help loads"): the
 * flags of everything that drives Chromium, loading no Playwright, no schema and no zod. A command's
 * flags import this; what launches Chromium imports src/browser/index.ts.
 */
export { CHROMIUM_FLAG, MAX_STREAMS_FLAG, POOL_FLAG, TRUST_CERT_FLAG } from './flags.ts';
