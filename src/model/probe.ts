/**
 * The result of `probe(url)`: versioned data, rendered by {@link renderProbeText} or written as JSON.
 * Every field carries its unit in its name. A `null` means "could not be told" (with the reason in a
 * nearby `detail`); an absent optional section means "not probed".
 *
 * Bump {@link PROBE_RESULT_VERSION} on any incompatible change and say what changed in docs/design.md.
 */

/** One SETTINGS parameter as sent: the identifier, its name when known, and the value. */
export interface SettingEntry {
  id: number;
  name: string;
  value: number;
}

/** Why a connection attempt or an exchange did not complete. */
export type FailureKind =
  | 'unreachable' // no TCP connection: refused, no route, name not found
  | 'timeout' // no answer before the deadline
  | 'reset' // the peer reset or closed the connection unexpectedly
  | 'not-tls' // the peer answered a ClientHello with something that is not TLS
  | 'tls-version' // the peer refused the TLS version offered
  | 'tls-alpn' // the peer refused every ALPN protocol offered (no_application_protocol alert)
  | 'client-cert-required' // the peer requires a client certificate and none (or a rejected one) was given
  | 'tls-handshake' // any other TLS handshake failure
  | 'protocol'; // the peer broke the protocol being probed

/** A failure with the kind, the system/TLS error code when there is one, and a human detail. */
export interface Failure {
  kind: FailureKind;
  /** e.g. `ECONNREFUSED`, `ERR_SSL_WRONG_VERSION_NUMBER`. */
  code?: string;
  detail: string;
}

export const PROBE_RESULT_VERSION = 1;

/** Whether a protocol or feature works, and in words how that was established. */
export interface Availability {
  /** `true` works, `false` does not, `null` could not be told (see `detail`). */
  supported: boolean | null;
  detail: string;
}

/** The TLS versions the probe offers one at a time. */
export const TLS_VERSIONS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
export type TlsVersionName = (typeof TLS_VERSIONS)[number];

/** One certificate of the chain the server sent, summarised. */
export interface CertificateSummary {
  subject: string;
  issuer: string;
  /** DNS names and IP addresses from subjectAltName. */
  subjectAltNames: string[];
  validFrom: string;
  validTo: string;
  /** Whole days until `validTo` (negative once expired). */
  daysLeft: number;
  selfSigned: boolean;
  fingerprint256: string;
  /** The OCSP responder named in Authority Information Access, if any. */
  ocspResponder: string | null;
}

export interface TlsReport {
  /** The handshake with everything offered (ALPN h2 + http/1.1, every version Node allows). */
  negotiated: {
    version: string | null;
    cipher: string | null;
    /** The IANA name of the cipher suite. */
    cipherStandardName: string | null;
    alpn: string | null;
    handshakeMs: number;
  };
  /**
   * Each version offered alone. TLS 1.0 and 1.1 are offered with OpenSSL's security level 0 (their
   * SHA-1 era cipher suites are refused by default); they are deprecated (RFC 8996).
   */
  versions: Record<TlsVersionName, Availability>;
  /** Each ALPN protocol offered alone. */
  alpn: Record<'h2' | 'http/1.1', Availability>;
  certificate: {
    /** Chain verified against the system CAs or `--ca`, and the name matched. */
    /**
     * `null` when no handshake completed to check it on (a TLS 1.2 server that requires a client
     * certificate, probed without `--cert`).
     */
    trusted: boolean | null;
    /** OpenSSL/Node verification error code when not trusted, e.g. `DEPTH_ZERO_SELF_SIGNED_CERT`. */
    verifyError: string | null;
    chain: CertificateSummary[];
  };
  clientCertificate: {
    /** The server sent a CertificateRequest. */
    requested: boolean;
    /** The server refused to go on without one; `null` when not requested or not told. */
    required: boolean | null;
    /** A client certificate (`--cert`) was presented for the rest of the probe. */
    presented: boolean;
    detail: string;
  };
  /** A stapled OCSP response came back when asked for (status_request, RFC 6066 §8). */
  ocspStapled: boolean;
}

/** The HTTP/2 parameters the server announced at the start of a connection. */
export interface H2Report {
  /** How the connection was made: `h2` (TLS + ALPN) or `h2c` (cleartext, prior knowledge). */
  via: 'h2' | 'h2c';
  /** The server's first SETTINGS frame as sent. */
  settingsSent: SettingEntry[];
  /** Each known setting: the value sent, else the RFC 9113 §6.5.2 initial value (`null`: unlimited). */
  effective: Record<string, number | null>;
  /** Known settings the server did not send. */
  notSent: string[];
  /**
   * The connection-level WINDOW_UPDATE increment the server sent right after its SETTINGS, bytes;
   * `null` when it sent none (the connection window then stays at 65,535 bytes, RFC 9113 §6.9.2).
   */
  connectionWindowUpdateBytes: number | null;
  pingRttMs: number;
  goaway?: { errorName: string; debug: string };
}

/** HTTP/1.1 keep-alive: several requests in a row, on how many connections. */
export interface KeepAliveReport {
  requests: number;
  /** Connections the requests needed (1 when keep-alive is honoured). */
  connections: number;
  honoured: boolean;
  /** `Connection` response header values seen, e.g. `["close"]`. */
  connectionHeaders: string[];
  /** The `Keep-Alive` response header, e.g. `timeout=5`. */
  keepAliveHeader: string | null;
}

/** One response, as a client saw it. Times are ms from writing the request. */
export interface ResponseReport {
  protocol: 'http/1.1' | 'h2' | 'h2c';
  path: string;
  status: number;
  /** Response headers arrived. */
  ttfbMs: number;
  totalMs: number;
  bodyBytes: number;
  server: string | null;
  contentType: string | null;
  /** `Content-Encoding` of a response to `Accept-Encoding: gzip, deflate, br, zstd`; null when none. */
  contentEncoding: string | null;
  altSvc: string | null;
}

/** How a large response arrived: streamed from the start, or late as if spooled by a proxy. */
export interface LargeReport extends ResponseReport {
  /** First body byte, ms from the request. */
  firstBodyByteMs: number;
  /** Half the body had arrived, ms from the request. */
  halfBodyMs: number;
  verdict: 'streamed' | 'late' | 'too-fast-to-tell';
  detail: string;
}

/** How long the server keeps an idle connection open (`--wait-idle`). */
export interface IdleReport {
  protocol: 'http/1.1' | 'h2' | 'h2c';
  waitedMs: number;
  /** When the server closed it, ms after it went idle; `null` when still open after `waitedMs`. */
  closedAfterMs: number | null;
  /** How: `goaway` (HTTP/2 GOAWAY), `close` (TCP FIN), `reset`. */
  how: 'goaway' | 'close' | 'reset' | null;
}

export type FindingLevel = 'info' | 'warn';

/** One thing worth knowing, in words, with a stable id to match on. */
export interface Finding {
  id: string;
  level: FindingLevel;
  text: string;
}

/** The `--expect` gate. */
export interface ExpectationReport {
  asked: string[];
  met: string[];
  unmet: Array<{ expectation: string; reason: string }>;
}

export interface ProbeResult {
  kind: 'h2lab.probe';
  version: typeof PROBE_RESULT_VERSION;
  h2labVersion: string;
  url: string;
  target: { scheme: 'http' | 'https'; host: string; port: number; address: string | null };
  startedAt: string;
  durationMs: number;
  /** The resolved options (file paths, not their contents). */
  options: Record<string, unknown>;
  protocols: {
    'http/1.1': Availability;
    /** HTTP/2 over TLS, by ALPN. */
    h2: Availability;
    /** Cleartext HTTP/2 with prior knowledge (RFC 9113 §3.3). */
    h2c: Availability;
    /** Cleartext HTTP/2 by `Upgrade: h2c` (RFC 7540 §3.2). */
    h2cUpgrade: Availability;
    /** `Alt-Svc` as advertised (reported, not used); protocol ids such as `h3`. */
    altSvc: { header: string; protocols: string[] } | null;
  };
  tls?: TlsReport;
  h2?: H2Report;
  keepAlive?: KeepAliveReport;
  responses: ResponseReport[];
  large?: LargeReport;
  idle?: IdleReport[];
  /** Steps that failed without ending the probe, with why. */
  problems: Array<{ step: string } & Failure>;
  findings: Finding[];
  expectations?: ExpectationReport;
}
