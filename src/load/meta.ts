/**
 * The load engine's light face (docs/design.md, "Start-up: what a command's help loads"): the flags of
 * a load run and their defaults, loading no zod, no schema and no transport. A command's `register()`
 * imports this; its action imports src/load/index.ts when it runs.
 */
export {
  BODY_FLAG,
  BODY_SIZE_FLAG,
  BURST_FLAG,
  BURST_HANDSHAKES_FLAG,
  CONCURRENCY_FLAG,
  CONNECT_TIMEOUT_FLAG,
  DURATION_FLAG,
  HEADER_FLAG,
  IDLE_TIMEOUT_FLAG,
  LOAD_DEFAULTS,
  LOAD_FLAGS,
  MAX_AGE_FLAG,
  METHOD_FLAG,
  RATE_FLAG,
  REQUESTS_FLAG,
  SEED_FLAG,
  URLS_FLAG,
  WINDOW_FLAG,
  WORKERS_FLAG,
} from './flags.ts';
