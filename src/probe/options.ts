/**
 * The options of `probe(url, opts)`: one zod schema gives the types, the defaults and the validation;
 * the CLI maps its flags onto it.
 */
import { z } from 'zod';

/** Defaults, with their units in their names. */
export const PROBE_DEFAULTS = Object.freeze({
  /** Each step (connect, handshake, one exchange) must answer within this, ms. */
  timeoutMs: 5000,
  /** Requests sent one after another to see whether HTTP/1.1 keep-alive is honoured. */
  keepAliveRequests: 3,
  /** A large response arriving faster than this cannot be told streamed from spooled, ms. */
  largeMinDurationMs: 50,
  /** Largest body the probe reads from any response, bytes (the rest is abandoned). */
  maxBodyBytes: 256 * 1024 * 1024,
});

export const ProbeOptionsSchema = z
  .object({
    /** PEM file of CA certificates to trust in addition to the system's (`--ca`). */
    caPath: z.string().min(1).optional(),
    /** PEM client certificate to present (`--cert`, with `--key`). */
    certPath: z.string().min(1).optional(),
    /** PEM private key of the client certificate (`--key`). */
    keyPath: z.string().min(1).optional(),
    /** Go on when the server's certificate is not trusted (it is still reported). */
    insecure: z.boolean().default(false),
    timeoutMs: z.number().positive().max(600_000).default(PROBE_DEFAULTS.timeoutMs),
    /** Expectations that turn the probe into a gate (see `EXPECTATIONS`). */
    expect: z.array(z.string()).default([]),
    /** A path on the same origin whose large response is timed for streaming vs spooling. */
    largePath: z.string().startsWith('/').optional(),
    /** Hold idle connections open up to this long to see when the server closes them, ms (0: off). */
    waitIdleMs: z.number().min(0).max(3_600_000).default(0),
    keepAliveRequests: z.number().int().min(2).max(20).default(PROBE_DEFAULTS.keepAliveRequests),
    largeMinDurationMs: z.number().min(0).default(PROBE_DEFAULTS.largeMinDurationMs),
    maxBodyBytes: z.number().int().positive().default(PROBE_DEFAULTS.maxBodyBytes),
  })
  .strict();

/** Options as a caller passes them (everything optional). */
export type ProbeOptionsInput = z.input<typeof ProbeOptionsSchema>;
/** Options with defaults applied. */
export type ProbeOptions = z.output<typeof ProbeOptionsSchema>;
