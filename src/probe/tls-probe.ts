/**
 * The TLS side of the probe: versions and ALPN protocols each offered alone, the negotiated cipher,
 * the certificate chain, whether a client certificate is requested or required (mTLS), OCSP stapling.
 */
import { performance } from 'node:perf_hooks';
import type tls from 'node:tls';
import { H2labError } from '../core/index.ts';
import {
  type Availability,
  type CertificateSummary,
  type Failure,
  TLS_VERSIONS,
  type TlsReport,
} from '../model/index.ts';
import { exchangePreface, readResponseHead, type ServerPreface } from './h2.ts';
import type { Origin } from './http.ts';
import { classifyFailure, connectTls, Inbox, type TlsAttempt, type TlsRecordTap } from './wire.ts';

const HANDSHAKE_SERVER_HELLO = 2;
const HANDSHAKE_CERTIFICATE_REQUEST = 13;
const DAY_MS = 86_400_000;

/** What the TLS step hands to the rest of the probe. */
interface TlsOutcome {
  report: TlsReport;
  /** The server's HTTP/2 preface over TLS, when ALPN chose h2 and the exchange worked. */
  preface?: ServerPreface;
  prefaceFailure?: Failure;
  /** Set when HTTP cannot be probed past the handshake (client certificate required, none given). */
  httpBlocked: string | null;
}

function formatName(name: tls.Certificate | undefined): string {
  if (!name) return '';
  return Object.entries(name)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : v}`)
    .join(', ');
}

/** The verified chain as Node reports it (leaf first), summarised. */
function summariseChain(leaf: tls.DetailedPeerCertificate, nowMs = Date.now()): CertificateSummary[] {
  const out: CertificateSummary[] = [];
  const seen = new Set<string>();
  for (let c: tls.DetailedPeerCertificate | undefined = leaf; c?.fingerprint256; c = c.issuerCertificate) {
    if (seen.has(c.fingerprint256)) break; // a self-signed root points at itself
    seen.add(c.fingerprint256);
    const subject = formatName(c.subject);
    const issuer = formatName(c.issuer);
    out.push({
      subject,
      issuer,
      subjectAltNames: (c.subjectaltname ?? '')
        .split(/,\s*/)
        .filter(Boolean)
        .map((s) => s.replace(/^IP Address:/, 'IP:')),
      validFrom: new Date(c.valid_from).toISOString(),
      validTo: new Date(c.valid_to).toISOString(),
      daysLeft: Math.floor((Date.parse(c.valid_to) - nowMs) / DAY_MS),
      selfSigned: subject === issuer,
      fingerprint256: c.fingerprint256,
      ocspResponder: c.infoAccess?.['OCSP - URI']?.[0] ?? null,
    });
  }
  return out;
}

function tapOf(err: unknown): TlsRecordTap | undefined {
  return (err as { tap?: TlsRecordTap }).tap;
}

function throwForFailure(origin: Origin, f: Failure): never {
  const where = `${origin.ep.host}:${origin.ep.port}`;
  switch (f.kind) {
    case 'unreachable':
      throw new H2labError(
        'H2LAB_ERR_PROBE_UNREACHABLE',
        `cannot connect to ${where} (${f.code ?? f.detail}): check the host and port in the URL and that the server is running`,
        { ...f },
      );
    case 'timeout':
      throw new H2labError(
        'H2LAB_ERR_PROBE_TIMEOUT',
        `${where} did not answer in time (${f.detail}): check the address, or raise --timeout`,
        { ...f },
      );
    case 'not-tls':
      throw new H2labError(
        'H2LAB_ERR_PROBE_NOT_TLS',
        `${where} does not speak TLS (${f.detail}): use an http:// URL for a plain-text port`,
        { ...f },
      );
    default:
      throw new H2labError(
        'H2LAB_ERR_PROBE_TLS_HANDSHAKE',
        `the TLS handshake with ${where} failed (${f.code ?? f.kind}: ${f.detail.split('\n')[0]}): check the port, --cert/--key, and the TLS versions the server allows`,
        { ...f },
      );
  }
}

/** Offers one thing alone (a version or an ALPN id) and says whether the server took it. */
async function tryAlone(
  origin: Origin,
  attempt: TlsAttempt,
  timeoutMs: number,
  judge: (
    conn: tls.TLSSocket | undefined,
    failure: Failure | undefined,
    tap: TlsRecordTap | undefined,
  ) => Availability,
): Promise<Availability> {
  try {
    const conn = await connectTls(origin.ep, origin.material, attempt, timeoutMs);
    const verdict = judge(conn.socket, undefined, conn.tap);
    conn.socket.destroy();
    return verdict;
  } catch (err) {
    return judge(undefined, classifyFailure(err), tapOf(err));
  }
}

function certBlocked(f: Failure | undefined, tap: TlsRecordTap | undefined): boolean {
  return (
    f?.kind === 'client-cert-required' ||
    (f?.kind === 'tls-handshake' &&
      (tap?.serverHandshakeTypes.includes(HANDSHAKE_CERTIFICATE_REQUEST) ?? false))
  );
}

/**
 * Runs the TLS part of the probe. Throws H2labError for what ends a probe: unreachable, timeout, not
 * TLS, a handshake that fails for a reason other than a missing client certificate, and an untrusted
 * certificate without `insecure`.
 */
export async function probeTls(
  origin: Origin,
  opts: { timeoutMs: number; insecure: boolean; path: string },
): Promise<TlsOutcome> {
  const { timeoutMs } = opts;
  const hasCert = Boolean(origin.material.cert && origin.material.key);
  const cc: ClientCertState = { requested: false, required: null, detail: '' };
  // 1. Everything offered, no client certificate: what is negotiated, and is a certificate required?
  const conn = await firstHandshake(origin, hasCert, timeoutMs, cc);
  // 2. What the connection negotiated, and what the server says on it.
  const seen = conn ? await readConnection(conn, origin, opts, cc) : nothingNegotiated();
  // With the user's certificate, get the HTTP/2 preface the first connection could not.
  if (cc.required && hasCert && !seen.preface && seen.negotiated.alpn === 'h2') {
    Object.assign(seen, await prefaceWithCertificate(origin, timeoutMs));
  }
  // 3. Each version and each ALPN id alone (in parallel: independent connections).
  const alone = await offerEachAlone(origin, hasCert, timeoutMs);
  const report: TlsReport = {
    negotiated: seen.negotiated,
    versions: alone.versions,
    alpn: alone.alpn,
    certificate: { trusted: seen.trusted, verifyError: seen.verifyError, chain: seen.chain },
    clientCertificate: clientCertificateReport(cc, hasCert),
    ocspStapled: seen.ocspStapled,
  };
  const httpBlocked =
    cc.required === true && !hasCert
      ? 'the server requires a client certificate: pass --cert FILE --key FILE'
      : null;
  return {
    report,
    ...(seen.preface ? { preface: seen.preface } : {}),
    ...(seen.prefaceFailure ? { prefaceFailure: seen.prefaceFailure } : {}),
    httpBlocked,
  };
}

/** What the probe learns about the client certificate (mTLS) as it goes. */
interface ClientCertState {
  requested: boolean;
  /** null: not told (yet). */
  required: boolean | null;
  /** How it was told, in words. */
  detail: string;
}

const EVERYTHING: TlsAttempt = { alpn: ['h2', 'http/1.1'], requestOCSP: true, presentClientCert: false };

/**
 * The first handshake with everything offered and no client certificate; when it fails for want of
 * one, again with the user's certificate (if given). Undefined when no handshake completed.
 */
async function firstHandshake(
  origin: Origin,
  hasCert: boolean,
  timeoutMs: number,
  cc: ClientCertState,
): Promise<TlsConnection | undefined> {
  try {
    return await connectTls(origin.ep, origin.material, EVERYTHING, timeoutMs);
  } catch (err) {
    const f = classifyFailure(err);
    if (!certBlocked(f, tapOf(err))) throwForFailure(origin, f);
    // TLS 1.2: the server sent CertificateRequest, then refused our empty Certificate.
    cc.requested = true;
    cc.required = true;
    cc.detail = `the handshake failed without a client certificate (${f.code ?? f.kind})`;
  }
  if (!hasCert) return undefined;
  try {
    return await connectTls(
      origin.ep,
      origin.material,
      { ...EVERYTHING, presentClientCert: true },
      timeoutMs,
    );
  } catch (err) {
    throwForFailure(origin, classifyFailure(err));
  }
}

type TlsConnection = Awaited<ReturnType<typeof connectTls>>;

/** What one completed handshake showed, and the HTTP/2 preface over it. */
interface Negotiated {
  negotiated: TlsReport['negotiated'];
  chain: CertificateSummary[];
  trusted: boolean | null;
  verifyError: string | null;
  ocspStapled: boolean;
  preface?: ServerPreface | undefined;
  prefaceFailure?: Failure | undefined;
}

function nothingNegotiated(): Negotiated {
  return {
    negotiated: {
      version: null,
      cipher: null,
      cipherStandardName: null,
      alpn: null,
      handshakeMs: Number.NaN,
    },
    chain: [],
    trusted: null,
    verifyError: null,
    ocspStapled: false,
  };
}

/**
 * Reads what the connection negotiated (refusing an untrusted certificate without `insecure`), then
 * talks on it: a TLS 1.3 server that requires a client certificate says so only now, with a
 * certificate_required alert (RFC 8446 §4.4.2.4) after our Finished.
 */
async function readConnection(
  conn: TlsConnection,
  origin: Origin,
  opts: { timeoutMs: number; insecure: boolean; path: string },
  cc: ClientCertState,
): Promise<Negotiated> {
  const s = conn.socket;
  const cipher = s.getCipher();
  const seen: Negotiated = {
    negotiated: {
      version: s.getProtocol(),
      cipher: cipher?.name ?? null,
      cipherStandardName: cipher?.standardName ?? null,
      alpn: s.alpnProtocol || null,
      handshakeMs: conn.handshakeMs,
    },
    chain: summariseChain(s.getPeerCertificate(true)),
    trusted: s.authorized,
    verifyError: s.authorized ? null : String(s.authorizationError ?? 'not verified'),
    ocspStapled: Boolean(conn.ocspResponse && conn.ocspResponse.length > 0),
  };
  cc.requested ||= conn.tap.certificateRequested(seen.negotiated.version, conn.outRecordsAtHandshake);
  if (!seen.trusted && !opts.insecure) {
    s.destroy();
    const leaf = seen.chain[0];
    throw new H2labError(
      'H2LAB_ERR_PROBE_UNTRUSTED',
      `the certificate of ${origin.ep.host}:${origin.ep.port} is not trusted (${seen.verifyError}; subject ${leaf?.subject ?? '?'}, issuer ${leaf?.issuer ?? '?'}): pass --ca FILE with the CA that issued it, or --insecure to probe anyway`,
      { verifyError: seen.verifyError, subject: leaf?.subject, issuer: leaf?.issuer },
    );
  }
  const deadline = performance.now() + opts.timeoutMs;
  const inbox = new Inbox(s);
  try {
    if (seen.negotiated.alpn === 'h2') {
      seen.preface = await exchangePreface(s, inbox, deadline);
    } else {
      s.write(`HEAD ${opts.path} HTTP/1.1\r\nHost: ${origin.authority}\r\nUser-Agent: h2lab-probe\r\n\r\n`);
      await readResponseHead(inbox, deadline);
    }
    if (cc.requested && cc.required === null) {
      // This connection presented no certificate, and the server talked on.
      cc.required = false;
      cc.detail = 'the server went on without a client certificate';
    }
  } catch (err) {
    const f = classifyFailure(err);
    if (f.kind === 'client-cert-required' || (cc.requested && f.kind === 'reset')) {
      cc.requested = true;
      cc.required = true;
      cc.detail = `the server ended the connection after the handshake without a client certificate (${f.code ?? f.kind})`;
    } else {
      seen.prefaceFailure = f;
    }
  } finally {
    s.destroy();
  }
  return seen;
}

/** The HTTP/2 preface on a connection that presents the user's certificate. */
async function prefaceWithCertificate(
  origin: Origin,
  timeoutMs: number,
): Promise<Pick<Negotiated, 'preface' | 'prefaceFailure'>> {
  try {
    const c2 = await connectTls(
      origin.ep,
      origin.material,
      { ...EVERYTHING, presentClientCert: true },
      timeoutMs,
    );
    try {
      return {
        preface: await exchangePreface(c2.socket, new Inbox(c2.socket), performance.now() + timeoutMs),
        prefaceFailure: undefined,
      };
    } finally {
      c2.socket.destroy();
    }
  } catch (err) {
    return { prefaceFailure: classifyFailure(err) };
  }
}

/** Whether the server took one TLS version offered alone. */
function versionJudge(v: string) {
  return (
    s: tls.TLSSocket | undefined,
    f: Failure | undefined,
    tap: TlsRecordTap | undefined,
  ): Availability => {
    if (s) return { supported: true, detail: `handshake completed with ${v} only` };
    if (tap?.serverHandshakeTypes.includes(HANDSHAKE_SERVER_HELLO)) {
      return {
        supported: true,
        detail: `the server answered ${v} with ServerHello (then: ${f?.code ?? f?.kind})`,
      };
    }
    if (f?.kind === 'tls-version') return { supported: false, detail: `refused (${f.code ?? f.detail})` };
    // Any other alert before a ServerHello (nginx answers a TLS 1.0 offer it cannot serve with
    // internal_error): no client gets a connection with this version.
    if (f?.code && /ALERT/.test(f.code))
      return { supported: false, detail: `refused with an alert (${f.code})` };
    // Closed after the ClientHello without a ServerHello or an alert (h2o for TLS 1.0/1.1): the same
    // server completed a handshake in step 1, so this version alone is what it turned away.
    if (f?.kind === 'reset' && tap && tap.serverHandshakeTypes.length === 0)
      return {
        supported: false,
        detail: `refused: the server closed the connection after a ${v}-only ClientHello, without a ServerHello or an alert`,
      };
    return { supported: null, detail: `could not tell: ${f?.code ?? f?.kind}` };
  };
}

/** Whether the server selected one ALPN id offered alone. */
function alpnJudge(id: string) {
  return (
    s: tls.TLSSocket | undefined,
    f: Failure | undefined,
    tap: TlsRecordTap | undefined,
  ): Availability => {
    if (s) {
      if (s.alpnProtocol === id) return { supported: true, detail: `selected when offered alone` };
      return {
        supported: false,
        detail: `handshake completed without selecting ${id} (the server ignores it)`,
      };
    }
    if (f?.kind === 'tls-alpn')
      return { supported: false, detail: 'refused with a no_application_protocol alert' };
    if (certBlocked(f, tap))
      return {
        supported: null,
        detail: 'could not tell: a client certificate is required (pass --cert/--key)',
      };
    return { supported: null, detail: `could not tell: ${f?.code ?? f?.kind}` };
  };
}

/** Each ALPN id and each TLS version offered alone, in parallel (independent connections). */
async function offerEachAlone(
  origin: Origin,
  hasCert: boolean,
  timeoutMs: number,
): Promise<Pick<TlsReport, 'alpn' | 'versions'>> {
  const alone = { presentClientCert: hasCert };
  const [alpnH2, alpnH1, ...versionResults] = await Promise.all([
    tryAlone(origin, { ...alone, alpn: ['h2'] }, timeoutMs, alpnJudge('h2')),
    tryAlone(origin, { ...alone, alpn: ['http/1.1'] }, timeoutMs, alpnJudge('http/1.1')),
    ...TLS_VERSIONS.map((v) =>
      tryAlone(
        origin,
        {
          ...alone,
          minVersion: v,
          maxVersion: v,
          // OpenSSL 3 will not offer TLS 1.0/1.1 suites above security level 0.
          ...(v === 'TLSv1' || v === 'TLSv1.1' ? { ciphers: 'DEFAULT:@SECLEVEL=0' } : {}),
        },
        timeoutMs,
        versionJudge(v),
      ),
    ),
  ]);
  const versions = Object.fromEntries(
    TLS_VERSIONS.map((v, i) => [v, versionResults[i]!]),
  ) as TlsReport['versions'];
  return { versions, alpn: { h2: alpnH2!, 'http/1.1': alpnH1! } };
}

function clientCertificateReport(cc: ClientCertState, hasCert: boolean): TlsReport['clientCertificate'] {
  return {
    requested: cc.requested,
    required: cc.requested ? cc.required : null,
    presented: hasCert,
    detail: !cc.requested
      ? 'not requested'
      : cc.required === true
        ? `required: ${cc.detail}`
        : cc.required === false
          ? `requested but optional: ${cc.detail}`
          : 'requested; whether it is required could not be told with a certificate presented',
  };
}
