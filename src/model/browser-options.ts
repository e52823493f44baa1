/**
 * Options of a browser measurement as data: one zod schema is the single source of truth for their
 * types, defaults and validation, and it is stored in every BrowserResult.
 */
import { z } from 'zod';
import { DEFAULT_CHROMIUM_PATH } from './meta.ts';

export { DEFAULT_CHROMIUM_PATH };

/**
 * Default request path of the burst. `{x}` and `{y}` walk a square grid (side = ceil(sqrt(count))),
 * `{i}` is the request's index. A cache-busting query parameter is always appended.
 */
export const DEFAULT_PATH_TEMPLATE = '/tiles/7/{x}/{y}';

/** The fixture server's knobs, used only when h2lab starts the fixture itself (no origin given). */
const FixtureOptionsSchema = z
  .object({
    /**
     * Backend pool workers. Small on purpose: the pool must be the bottleneck for the queue to move
     * from the browser (HTTP/1.1) to the server (h2). Default 4.
     */
    poolSize: z.number().int().min(1).max(1024).default(4),
    /** Time one tile holds a pool worker, ms. Default 20. */
    tileMs: z.number().min(0).max(60_000).default(20),
    /**
     * SETTINGS_MAX_CONCURRENT_STREAMS the fixture announces (RFC 9113 §6.5.2). Chrome stops at 100
     * streams when a server announces nothing, so the default leaves room for the 121-tile burst.
     */
    maxConcurrentStreams: z
      .number()
      .int()
      .min(1)
      .max(2 ** 31 - 1)
      .default(256),
  })
  .strict();

/** Options of one browser measurement. Times in ms. */
export const BrowserOptionsSchema = z
  .object({
    /**
     * Origins to measure (`http://host:port`, `https://host:port`). Empty (default): h2lab starts its
     * fixture server and measures its `http://` and `https://` listeners.
     */
    origins: z.array(z.string()).default([]),
    /** The Chromium executable. Default {@link DEFAULT_CHROMIUM_PATH}. */
    chromiumPath: z.string().min(1).default(DEFAULT_CHROMIUM_PATH),
    /** Chromium's NSS key log (its `SSLKEYLOGFILE`): the secrets of every connection it makes. */
    keyLogFile: z.string().optional(),
    /** Requests fired at once by the burst (and by the cancellation experiment). Default 121. */
    count: z.number().int().min(1).max(2000).default(121),
    /** Burst repetitions per target, alternating targets; the first one is discarded. Default 6. */
    runs: z.number().int().min(2).max(200).default(6),
    /** Request path template (see {@link DEFAULT_PATH_TEMPLATE}). */
    pathTemplate: z.string().startsWith('/').default(DEFAULT_PATH_TEMPLATE),
    /** Run the burst experiment. Default true. */
    burst: z.boolean().default(true),
    /** Run the cancellation experiment. Default true. */
    cancel: z.boolean().default(true),
    /** Repetitions of every cancellation leg (target × server mode); medians are reported. Default 3. */
    cancelRuns: z.number().int().min(1).max(50).default(3),
    /** The cancellation experiment aborts every request this long after the first was issued, ms. */
    cancelAfterMs: z.number().min(0).max(60_000).default(60),
    /**
     * Abort instead when this many of the burst's requests have reached the server's handlers (its
     * metrics, polled every few ms; needs a metrics URL), so that legs against servers that honour
     * and ignore cancellation abandon the same work. Capped per target by what it can have in
     * flight: Chromium's 6 connections for HTTP/1.1. Unset: the timer (`cancelAfterMs`).
     */
    cancelWhenReached: z.number().int().min(1).max(100_000).optional(),
    /**
     * For every `https://` origin, also measure HTTP/1.1 over TLS (a second Chromium with HTTP/2
     * disabled), which separates the cost of TLS from the effect of the protocol. Default true.
     */
    control: z.boolean().default(true),
    /**
     * For every `https://` origin, also measure HTTP/3: a Chromium of its own told to speak QUIC to
     * that origin (`--origin-to-force-quic-on`; Alt-Svc alone keeps a local origin on h2), with the
     * certificate pinned. The embedded fixture then serves HTTP/3 on its TLS port. Default false.
     */
    h3: z.boolean().default(false),
    /**
     * PEM files Chromium trusts (`--trust-cert`): a server's own certificate is pinned as it is; a CA
     * is checked against each https origin's certificate, which is then pinned.
     */
    trustCert: z.array(z.string()).default([]),
    /** Extra SPKI pins (base64 of the SHA-256 of a SubjectPublicKeyInfo). */
    trustSpki: z.array(z.string()).default([]),
    /**
     * Where to read the target's h2lab metrics (the fixture server's `/metrics`). Defaults to the
     * fixture's when h2lab starts it; otherwise no server view unless given.
     */
    metricsUrl: z.string().optional(),
    /** Fixture server knobs (only when no origin is given). */
    fixture: FixtureOptionsSchema.default(FixtureOptionsSchema.parse({})),
    /** Bound on one burst or cancellation run, ms. Default 60 000. */
    runTimeoutMs: z.number().int().min(100).max(600_000).default(60_000),
  })
  .strict();

/** Options as a caller writes them (every key optional). */
export type BrowserOptionsInput = z.input<typeof BrowserOptionsSchema>;
/** Options with every default applied; stored in the result. */
export type BrowserOptions = z.output<typeof BrowserOptionsSchema>;
