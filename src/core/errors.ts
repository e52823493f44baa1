/**
 * Every error a user can meet in h2lab has a stable code, a message that names the option, the value
 * received and what to do, and a `toJSON()` so it can be written into a result.
 *
 * Codes are never reused or renamed. Each one is documented in `docs/errors.md` (a test enforces it).
 * Add a code here, in its subsystem's block, and a row in docs/errors.md in the same commit.
 */

/** Exit status for a usage or configuration error (bad flag, bad value, missing file). */
export const EXIT_USAGE = 2;
/** Exit status for a run that started but failed (protocol mismatch, target unreachable, …). */
export const EXIT_FAILURE = 1;

/**
 * The registry of codes. `exit` is the process exit status the CLI uses when the error ends a command.
 */
export const ERROR_CODES = {
  // --- generic / CLI ---
  H2LAB_ERR_USAGE: { exit: EXIT_USAGE, summary: 'The command line could not be parsed.' },
  H2LAB_ERR_INVALID_OPTION: { exit: EXIT_USAGE, summary: 'An option has a value that is not valid.' },
  H2LAB_ERR_CONFIG_FILE: { exit: EXIT_USAGE, summary: 'A config file could not be read or is not valid.' },
  H2LAB_ERR_INTERNAL: { exit: EXIT_FAILURE, summary: 'An unexpected internal error (a bug in h2lab).' },
  H2LAB_ERR_INTERRUPTED: { exit: 130, summary: 'The run was interrupted (SIGINT/SIGTERM).' },
  H2LAB_ERR_OUTPUT: {
    exit: EXIT_USAGE,
    summary: 'An output path (--json, --samples, --out) cannot be written.',
  },

  // --- TLS material (src/tls) ---
  H2LAB_ERR_TLS_KEY_MISSING: { exit: EXIT_USAGE, summary: '--cert was given without --key.' },
  H2LAB_ERR_TLS_CERT_MISSING: { exit: EXIT_USAGE, summary: '--key was given without --cert.' },
  H2LAB_ERR_FILE_UNREADABLE: { exit: EXIT_USAGE, summary: 'A file named by an option cannot be read.' },
  H2LAB_ERR_FILE_TOO_LARGE: {
    exit: EXIT_USAGE,
    summary: 'A file named by an option is larger than h2lab reads for its kind.',
  },
  H2LAB_ERR_TLS_BAD_PEM: { exit: EXIT_USAGE, summary: 'A certificate or key file is not valid PEM.' },
  H2LAB_ERR_TLS_KEY_MISMATCH: {
    exit: EXIT_USAGE,
    summary: 'The private key does not belong to the certificate.',
  },
  H2LAB_ERR_CERTS_EXIST: { exit: EXIT_USAGE, summary: '`h2lab certs` would overwrite existing files.' },

  // --- server (src/server) ---
  H2LAB_ERR_PORT_IN_USE: { exit: EXIT_USAGE, summary: 'A listener port is already in use.' },
  H2LAB_ERR_LISTEN: {
    exit: EXIT_USAGE,
    summary: 'A listener could not be opened (address not available, permission).',
  },
  H2LAB_ERR_NO_LISTENER: { exit: EXIT_USAGE, summary: 'Both listeners were disabled.' },

  // --- browser (src/browser) ---
  H2LAB_ERR_BROWSER_MISSING: {
    exit: EXIT_USAGE,
    summary: 'The Chromium executable named by --chromium is not there.',
  },
  H2LAB_ERR_BROWSER_LAUNCH: { exit: EXIT_FAILURE, summary: 'Chromium was found but did not start.' },
  H2LAB_ERR_BROWSER_PAGE: { exit: EXIT_FAILURE, summary: 'The experiment page failed inside Chromium.' },
  H2LAB_ERR_BROWSER_TIMEOUT: {
    exit: EXIT_FAILURE,
    summary: 'A browser run did not finish within --run-timeout.',
  },
  H2LAB_ERR_SERVER_METRICS: { exit: EXIT_FAILURE, summary: "The target's h2lab /metrics could not be read." },
  H2LAB_ERR_PEER_MISSING: {
    exit: EXIT_USAGE,
    summary: 'A program a study runs beside h2lab (nginx) is not installed or does not run.',
  },
  // --- network emulation (src/net) ---
  H2LAB_ERR_NET_UNAVAILABLE: {
    exit: EXIT_USAGE,
    summary: 'Network emulation cannot run here (root, TUN, iproute2 or the native addon is missing).',
  },
  H2LAB_ERR_NET_BACKEND: {
    exit: EXIT_USAGE,
    summary: 'The requested emulation backend is not supported by this kernel.',
  },
  H2LAB_ERR_CAPTURE_NO_LINK: {
    exit: EXIT_USAGE,
    summary: '--capture was asked for a run without an emulated link: only the link relay sees packets.',
  },
  H2LAB_ERR_NET_SETUP: {
    exit: EXIT_FAILURE,
    summary: 'Setting up the emulated link failed (a namespace, device, address or sysctl step).',
  },
  // --- probe (src/probe): a bad URL (2); the target could not be probed or did not meet --expect (1),
  // the status bench and compare give a target problem ---
  H2LAB_ERR_PROBE_BAD_URL: {
    exit: EXIT_USAGE,
    summary: 'The URL to probe is not an http:// or https:// URL.',
  },
  H2LAB_ERR_PROBE_UNREACHABLE: {
    exit: EXIT_FAILURE,
    summary: 'No TCP connection to the target (refused, no route, unknown host).',
  },
  H2LAB_ERR_PROBE_TIMEOUT: { exit: EXIT_FAILURE, summary: 'The target did not answer within --timeout.' },
  H2LAB_ERR_PROBE_NOT_TLS: {
    exit: EXIT_FAILURE,
    summary: 'An https:// URL names a port that does not speak TLS.',
  },
  H2LAB_ERR_PROBE_TLS_PORT: { exit: EXIT_FAILURE, summary: 'An http:// URL names a port that speaks TLS.' },
  H2LAB_ERR_PROBE_UNTRUSTED: {
    exit: EXIT_FAILURE,
    summary: "The server's certificate is not trusted (and --insecure was not given).",
  },
  H2LAB_ERR_PROBE_TLS_HANDSHAKE: {
    exit: EXIT_FAILURE,
    summary: 'The TLS handshake failed for a reason other than trust.',
  },
  H2LAB_ERR_PROBE_NO_HTTP: {
    exit: EXIT_FAILURE,
    summary: 'The target accepts connections but speaks neither HTTP/1.1 nor HTTP/2.',
  },
  H2LAB_ERR_PROBE_EXPECT_UNMET: {
    exit: EXIT_FAILURE,
    summary: 'The target does not meet the --expect list.',
  },

  // --- compare and report (src/compare, src/report) ---
  H2LAB_ERR_COMPARE_NO_RESULTS: {
    exit: EXIT_FAILURE,
    summary: 'A comparison produced no measurement at all.',
  },
  H2LAB_ERR_COMPARE_BAD_EXPECT: {
    exit: EXIT_USAGE,
    summary: 'A compare --expect condition cannot be parsed or does not fit the matrix.',
  },
  H2LAB_ERR_COMPARE_EXPECT_FAILED: {
    exit: EXIT_FAILURE,
    summary: 'One or more compare --expect conditions failed.',
  },
  H2LAB_ERR_COMPARE_CELLS_FAILED: {
    exit: EXIT_FAILURE,
    summary: 'One or more compare cells failed (the target refused, reset or stopped answering).',
  },
  H2LAB_ERR_RESULT_FILE: {
    exit: EXIT_USAGE,
    summary: 'A results file given to `h2lab report` cannot be read or is not valid.',
  },
  H2LAB_ERR_RENDER_FORMAT: {
    exit: EXIT_USAGE,
    summary: '`render(result, format)` was given a result kind or a format it has no rendering for.',
  },

  // --- load engine and transports (src/load, src/transport) ---
  H2LAB_ERR_TEMPLATE_TOO_LARGE: {
    exit: EXIT_USAGE,
    summary: 'URL templates expand to more paths than h2lab expands (MAX_TEMPLATE_PATHS).',
  },
  H2LAB_ERR_PROTOCOL_MISMATCH: {
    exit: EXIT_FAILURE,
    summary: 'The server negotiated another protocol than the one requested (no silent fallback).',
  },
  // --- shards, merge, Kubernetes (src/shard, src/k8s) ---
  H2LAB_ERR_SHARD_TOO_SMALL: {
    exit: EXIT_USAGE,
    summary: 'A closed-loop run has less concurrency, connections or requests than shards.',
  },
  H2LAB_ERR_SHARD_UNSUPPORTED: { exit: EXIT_USAGE, summary: 'These options cannot be split into shards.' },
  H2LAB_ERR_PLAN_INVALID: {
    exit: EXIT_USAGE,
    summary: 'A plan file is not a valid h2lab plan, or its hash does not match its content.',
  },
  H2LAB_ERR_PLAN_TOO_LARGE: {
    exit: EXIT_USAGE,
    summary: 'A plan is larger than the ConfigMap that carries it to the pods may be (1 MiB).',
  },
  H2LAB_ERR_SHARD_MISSED_START: {
    exit: 3,
    summary: "A shard reached the start barrier after the plan's start time plus its grace.",
  },
  H2LAB_ERR_CLOCK: {
    exit: EXIT_FAILURE,
    summary: "The reference clock (the plan's clock URL) could not be read.",
  },
  H2LAB_ERR_SHARD_MISSING: {
    exit: EXIT_FAILURE,
    summary: 'Shards of the plan are missing from what was collected.',
  },
  H2LAB_ERR_SHARD_DUPLICATE: {
    exit: EXIT_FAILURE,
    summary: 'A shard index (or one of its chunks) arrived twice.',
  },
  H2LAB_ERR_SHARD_CORRUPT: {
    exit: EXIT_FAILURE,
    summary: "A shard's output does not match its checksums or its digest.",
  },
  H2LAB_ERR_SHARD_MISMATCH: {
    exit: EXIT_USAGE,
    summary: 'Shard results come from different plans or histogram settings.',
  },
  H2LAB_ERR_KUBECTL: { exit: EXIT_FAILURE, summary: 'kubectl is missing or a kubectl command failed.' },
  H2LAB_ERR_TARGET_UNREACHABLE: { exit: EXIT_FAILURE, summary: 'The first connection to the target failed.' },
  H2LAB_ERR_FD_LIMIT: {
    exit: EXIT_USAGE,
    summary: 'The run needs more open files (sockets) than this process may open (ulimit -n).',
  },
  H2LAB_ERR_TLS_HANDSHAKE: { exit: EXIT_FAILURE, summary: 'The TLS handshake with the target failed.' },
  H2LAB_ERR_ERROR_RATE: {
    exit: EXIT_FAILURE,
    summary: 'The share of failed requests exceeded --max-error-rate.',
  },
  H2LAB_ERR_H3_UNAVAILABLE: {
    exit: EXIT_FAILURE,
    summary: 'HTTP/3 was asked for but its binding (@currentspace/http3) is not installed or failed to load.',
  },
  H2LAB_ERR_HAR_INVALID: {
    exit: EXIT_USAGE,
    summary: 'The HAR given to `h2lab page replay` is not JSON, has no entries, or no entry h2lab can serve.',
  },
  H2LAB_ERR_HAR_TOO_LARGE: {
    exit: EXIT_USAGE,
    summary:
      'The HAR given to `h2lab page replay` exceeds a cap: a body, all bodies together, or its origins.',
  },
  H2LAB_ERR_PAGE_LOAD: {
    exit: EXIT_FAILURE,
    summary: 'Chromium could not load the page being recorded or replayed (every load failed).',
  },
} as const satisfies Record<string, { exit: number; summary: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Structured, serialisable details attached to an error (option name, value, paths, protocols…). */
type ErrorDetails = Record<string, unknown>;

/**
 * The one error class of h2lab. `message` is written for a person: what was wrong (naming the option
 * and the value) and what to do about it.
 *
 * @example
 * throw new H2labError('H2LAB_ERR_TLS_KEY_MISSING', '--cert was given without --key: pass --key FILE too', { option: '--key' });
 */
export class H2labError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  /** Process exit status when this error ends a CLI command. */
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'H2labError';
    this.code = code;
    this.details = details;
    this.exitCode = ERROR_CODES[code].exit;
  }

  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** True when `err` is an H2labError, optionally with the given code. */
export function isH2labError(err: unknown, code?: ErrorCode): err is H2labError {
  return err instanceof H2labError && (code === undefined || err.code === code);
}

/** Convenience for the most common case: an option whose value is invalid. */
export function invalidOption(option: string, value: unknown, fix: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_INVALID_OPTION',
    `${option} ${JSON.stringify(value)} is not valid: ${fix}`,
    { option, value },
  );
}
