/**
 * `--expect LIST`: turns the probe into a gate for a deployment pipeline. Each name is a yes/no
 * question about the result; `no-NAME` expects the opposite (e.g. `no-tls1.2`).
 */
import { invalidOption } from '../core/index.ts';
import type { Availability, ExpectationReport, ProbeResult } from '../model/index.ts';
import { H3_ALPN } from './parse.ts';

type Check = (r: ProbeResult) => { value: boolean | null; why: string };

const fromAvailability = (a: Availability | undefined, what: string) => ({
  value: a ? a.supported : null,
  why: a ? `${what}: ${a.detail}` : `${what}: not probed`,
});

/** The names `--expect` accepts, what each asks, and how it is read from a result. */
export const EXPECTATIONS: Readonly<Record<string, { describe: string; check: Check }>> = Object.freeze({
  'http1.1': {
    describe: 'HTTP/1.1 is served',
    check: (r) => fromAvailability(r.protocols['http/1.1'], 'HTTP/1.1'),
  },
  keepalive: {
    describe: 'HTTP/1.1 keep-alive is honoured (several requests on one connection)',
    check: (r) =>
      r.keepAlive
        ? {
            value: r.keepAlive.honoured,
            why: `${r.keepAlive.requests} requests needed ${r.keepAlive.connections} connection(s)`,
          }
        : { value: null, why: 'keep-alive: not probed (no HTTP/1.1)' },
  },
  'upstream-keepalive': {
    describe: 'an h2lab origin behind a proxy sees its requests on reused connections',
    check: (r) =>
      r.keepAlive?.upstream
        ? {
            value: r.keepAlive.upstream.reused,
            why: `the origin accepted ${r.keepAlive.upstream.connections} connection(s) for ${r.keepAlive.requests} keep-alive requests`,
          }
        : { value: null, why: 'the origin is not an h2lab fixture server (no /metrics?format=json)' },
  },
  h2: {
    describe: 'HTTP/2 over TLS (ALPN h2)',
    check: (r) =>
      r.target.scheme === 'https'
        ? fromAvailability(r.protocols.h2, 'h2')
        : { value: false, why: 'h2 is HTTP/2 over TLS and this is an http:// URL (expect h2c instead)' },
  },
  h2c: {
    describe: 'cleartext HTTP/2 with prior knowledge',
    check: (r) => fromAvailability(r.protocols.h2c, 'h2c'),
  },
  'h2c-upgrade': {
    describe: 'cleartext HTTP/2 by Upgrade: h2c',
    check: (r) => fromAvailability(r.protocols.h2cUpgrade, 'h2c upgrade'),
  },
  'tls1.0': {
    describe: 'TLS 1.0 is accepted (deprecated: expect no-tls1.0)',
    check: (r) => fromAvailability(r.tls?.versions.TLSv1, 'TLS 1.0'),
  },
  'tls1.1': {
    describe: 'TLS 1.1 is accepted (deprecated: expect no-tls1.1)',
    check: (r) => fromAvailability(r.tls?.versions['TLSv1.1'], 'TLS 1.1'),
  },
  'tls1.2': {
    describe: 'TLS 1.2 is accepted',
    check: (r) => fromAvailability(r.tls?.versions['TLSv1.2'], 'TLS 1.2'),
  },
  'tls1.3': {
    describe: 'TLS 1.3 is accepted',
    check: (r) => fromAvailability(r.tls?.versions['TLSv1.3'], 'TLS 1.3'),
  },
  trusted: {
    describe: "the server's certificate verifies (system CAs or --ca) and matches the host",
    check: (r) =>
      r.tls
        ? {
            value: r.tls.certificate.trusted,
            why: `certificate: ${r.tls.certificate.trusted === null ? 'not checked (no handshake completed)' : (r.tls.certificate.verifyError ?? 'trusted')}`,
          }
        : { value: null, why: 'no TLS' },
  },
  mtls: {
    describe: 'a client certificate is required',
    check: (r) =>
      r.tls
        ? {
            // Not requested means not required; requested-but-unknown stays unknown.
            value: r.tls.clientCertificate.requested ? r.tls.clientCertificate.required : false,
            why: `client certificate: ${r.tls.clientCertificate.detail}`,
          }
        : { value: false, why: 'no TLS, so no client certificate' },
  },
  'client-cert': {
    describe: 'a client certificate is requested (required or optional)',
    check: (r) =>
      r.tls
        ? {
            value: r.tls.clientCertificate.requested,
            why: `client certificate: ${r.tls.clientCertificate.detail}`,
          }
        : { value: false, why: 'no TLS, so no client certificate' },
  },
  ocsp: {
    describe: 'an OCSP response is stapled',
    check: (r) =>
      r.tls
        ? { value: r.tls.ocspStapled, why: `OCSP stapling: ${r.tls.ocspStapled ? 'yes' : 'none sent'}` }
        : { value: null, why: 'no TLS' },
  },
  h3: {
    describe: 'HTTP/3 is advertised by Alt-Svc',
    check: (r) => ({
      value: r.protocols.altSvc?.protocols.some((p) => H3_ALPN.test(p)) ?? false,
      why: `Alt-Svc: ${r.protocols.altSvc?.header ?? 'none'}`,
    }),
  },
  compression: {
    describe: 'responses are compressed when the client accepts it',
    check: (r) =>
      r.responses.length
        ? {
            value: r.responses.some((x) => x.contentEncoding),
            why: `Content-Encoding: ${r.responses.map((x) => `${x.protocol} ${x.contentEncoding ?? 'none'}`).join(', ')}`,
          }
        : { value: null, why: 'no response' },
  },
  streaming: {
    describe: 'the --large response streams (does not arrive late as if spooled)',
    check: (r) =>
      r.large
        ? {
            value: r.large.verdict === 'too-fast-to-tell' ? null : r.large.verdict === 'streamed',
            why: r.large.detail,
          }
        : { value: null, why: '--large PATH was not given or failed' },
  },
});

/**
 * Checks `names` against `result`. With `result` undefined only validates the names (so a typo
 * fails before any traffic). Unknown names throw H2LAB_ERR_INVALID_OPTION listing the accepted ones.
 */
export function evaluateExpectations(names: string[], result: ProbeResult | undefined): ExpectationReport {
  const report: ExpectationReport = { asked: [...names], met: [], unmet: [] };
  for (const raw of names) {
    const name = raw.trim().toLowerCase();
    const negated = name.startsWith('no-');
    const key = negated ? name.slice(3) : name;
    const e = EXPECTATIONS[key];
    if (!e) {
      throw invalidOption(
        '--expect',
        raw,
        `use a comma-separated list of ${Object.keys(EXPECTATIONS).join(', ')} (each may be prefixed with no-)`,
      );
    }
    if (!result) continue;
    const { value, why } = e.check(result);
    if (value === null) report.unmet.push({ expectation: raw, reason: `could not be told: ${why}` });
    else if (value !== negated) report.met.push(raw);
    else report.unmet.push({ expectation: raw, reason: why });
  }
  return report;
}
