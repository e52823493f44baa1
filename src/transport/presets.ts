/**
 * The transports' named choices — pool policies, HTTP/2 client implementations, window presets — as
 * plain lists: the flags' help and the load options' schema read them without loading a transport
 * (`bench --help`). The windows behind each preset are src/transport/index.ts's.
 */
/** h2-pool session choice policies: each one a file in src/transport/policies/. */
export const POOL_POLICIES = ['least-busy', 'round-robin', 'first-free', 'lease'] as const;
/** How a pool chooses a connection for a request (one of {@link POOL_POLICIES}). */
export type PoolPolicy = (typeof POOL_POLICIES)[number];
/** HTTP/2 client implementations: h2lab's own (default) or node:http2. */
export const H2_CLIENTS = ['h2lab', 'node'] as const;
/** Which HTTP/2 client implementation carries the sessions (one of {@link H2_CLIENTS}). */
export type H2ClientImpl = (typeof H2_CLIENTS)[number];
/** Flow-control window presets. */
export const WINDOW_PRESETS = ['node', 'browser', 'max', 'custom'] as const;
export type WindowPreset = (typeof WINDOW_PRESETS)[number];
/**
 * The default preset: what a browser advertises. Not `node`: with 64 KiB per connection one HTTP/2
 * session carries at most 64 KiB per round trip, which on a delayed link decides an h1-vs-h2 result by
 * h2lab's own setting (128 × 10 KiB at 200 ms RTT took 8.0 s with it, 2.1 s with Chromium's
 * windows) — and no real client advertises so little (Chromium 6/15 MiB, curl and h2load far more).
 */
export const DEFAULT_WINDOW_PRESET = 'browser' satisfies WindowPreset;
