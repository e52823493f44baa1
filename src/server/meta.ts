/**
 * The fixture server's light face (docs/design.md, "Start-up: what a command's help loads"): the flags
 * other commands take from it, loading no server.
 */
export { METRICS_URL_FLAG } from './flags.ts';
