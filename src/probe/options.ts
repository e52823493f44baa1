/**
 * The options of `probe(url, opts)`: one zod schema gives the types, the defaults and the validation;
 * the CLI maps its flags onto it.
 */
import { z } from 'zod';
import {
  CA_FLAG,
  CERT_FLAG,
  flagMeta,
  INSECURE_FLAG,
  KEY_FLAG,
  optionMeta as m,
  TIMEOUT_FLAG,
} from '../core/index.ts';

/** Defaults, with their units in their names. */
const PROBE_DEFAULTS = Object.freeze({
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
    ca: z
      .string()
      .min(1)
      .optional()
      .meta(flagMeta(CA_FLAG, 'PEM CA certificate(s) to trust in addition to the system ones')),
    cert: z
      .string()
      .min(1)
      .optional()
      .meta(flagMeta(CERT_FLAG, 'PEM client certificate to present (with --key)')),
    key: z.string().min(1).optional().meta(flagMeta(KEY_FLAG, 'PEM private key of --cert')),
    insecure: z
      .boolean()
      .default(false)
      .meta(
        flagMeta(INSECURE_FLAG, 'probe even if the certificate is not trusted (trust is still reported)'),
      ),
    timeoutMs: z
      .number()
      .positive()
      .max(600_000)
      .default(PROBE_DEFAULTS.timeoutMs)
      .meta(flagMeta(TIMEOUT_FLAG, 'deadline of each step (a connect, a handshake, one exchange)')),
    expect: z
      .array(z.string())
      .default([])
      .meta(
        m(
          'expect',
          'list',
          'comma-separated gate, e.g. h2,tls1.3,keepalive,no-tls1.0: exit 1 when one is not met',
        ),
      ),
    largePath: z
      .string()
      .startsWith('/')
      .optional()
      .meta(
        m('large', 'string', 'time a large response on this path (from /): does it stream or arrive late?'),
      ),
    waitIdleMs: z
      .number()
      .min(0)
      .max(3_600_000)
      .default(0)
      .meta(
        m(
          'wait-idle',
          'duration',
          'hold idle HTTP/1.1 and HTTP/2 connections this long to see when the server closes them (0: off)',
        ),
      ),
    keepAliveRequests: z
      .number()
      .int()
      .min(2)
      .max(20)
      .default(PROBE_DEFAULTS.keepAliveRequests)
      .meta(
        m(
          'keep-alive-requests',
          'int',
          'requests sent in a row to see whether HTTP/1.1 keep-alive is honoured',
        ),
      ),
    largeMinDurationMs: z
      .number()
      .min(0)
      .default(PROBE_DEFAULTS.largeMinDurationMs)
      .meta(
        m(
          'large-min-duration',
          'duration',
          'a --large response faster than this is too fast to tell streaming from spooling',
        ),
      ),
    maxBodyBytes: z
      .number()
      .int()
      .positive()
      .default(PROBE_DEFAULTS.maxBodyBytes)
      .meta(m('max-body', 'bytes', 'largest response body the probe reads (the rest is abandoned)')),
  })
  .strict();

/** Options as a caller passes them (everything optional). */
export type ProbeOptionsInput = z.input<typeof ProbeOptionsSchema>;
/** Options with defaults applied. */
export type ProbeOptions = z.output<typeof ProbeOptionsSchema>;
