/**
 * What `--trust-cert FILE` pins. Chromium's `--ignore-certificate-errors-spki-list` matches the
 * certificates the server sends, and a server sends its own certificate, rarely its root: pinning a
 * CA's key therefore trusts nothing (every request failed with ERR_CERT_AUTHORITY_INVALID). So a
 * server certificate is pinned as it is, and for a CA h2lab does the verification Chromium cannot:
 * it connects to each https:// origin with Node's TLS, checks the chain and the name against that CA,
 * and pins the certificate that verified. A CA that did not sign the origin's certificate is an error
 * before Chromium starts, not a run of failed requests.
 */
import { X509Certificate } from 'node:crypto';
import * as tls from 'node:tls';
import { H2labError, socketFailureOf, tlsFailureHint, tlsHintError } from '../core/index.ts';
import { spkiPins } from './chromium.ts';

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Certificates of the PEM files split into server certificates (pinned as they are) and CAs. */
function split(pems: readonly string[]): { leaves: string[]; cas: string[] } {
  const leaves: string[] = [];
  const cas: string[] = [];
  for (const b of pems.flatMap((p) => p.match(CERT_BLOCK) ?? []))
    (new X509Certificate(b).ca ? cas : leaves).push(b);
  return { leaves, cas };
}

/**
 * The pin of the certificate `origin` presents, verified against `cas` (chain and name), or, with
 * `insecure` (`-k`), whatever it presents: Chromium then accepts that certificate from that origin
 * only, not every certificate of every site the page loads. Rejects with
 * H2LAB_ERR_TARGET_UNREACHABLE when the origin cannot be reached, H2LAB_ERR_TLS_HANDSHAKE when the
 * handshake fails or the certificate does not verify.
 */
export function verifiedPin(
  origin: string,
  cas: readonly string[],
  timeoutMs = 10_000,
  insecure = false,
): Promise<string> {
  const u = new URL(origin);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = Number(u.port || 443);
  return new Promise((resolve, reject) => {
    const s = tls.connect({
      host,
      port,
      ca: [...cas],
      ...(/^[\d.]+$|:/.test(host) ? {} : { servername: host }),
      ALPNProtocols: ['h2', 'http/1.1'],
      rejectUnauthorized: false,
    });
    const done = (f: () => void) => {
      clearTimeout(timer);
      s.destroy();
      f();
    };
    const timer = setTimeout(
      () =>
        done(() =>
          reject(
            new H2labError(
              'H2LAB_ERR_TARGET_UNREACHABLE',
              `${origin} did not complete a TLS handshake within ${timeoutMs} ms, so its certificate could not be checked against --trust-cert: check the server is running and speaks TLS on that port`,
              { origin, option: '--trust-cert' },
            ),
          ),
        ),
      timeoutMs,
    );
    s.once('secureConnect', () => {
      const cert = s.getPeerX509Certificate();
      // Node checked the chain and, for a verified chain, the name (checkServerIdentity).
      const why = s.authorized ? undefined : String(s.authorizationError);
      done(() => {
        if (!cert)
          return reject(
            new H2labError('H2LAB_ERR_TLS_HANDSHAKE', `${origin} sent no certificate`, { origin }),
          );
        if (why === undefined || insecure) return resolve(spkiPins(cert.toString())[0]!);
        reject(
          new H2labError(
            'H2LAB_ERR_TLS_HANDSHAKE',
            `the certificate ${origin} presents does not verify against the CA of --trust-cert (${why}): pass the CA that signed it, or the server's certificate itself (--trust-cert server.pem)`,
            { origin, option: '--trust-cert', cause: why, subject: cert.subject },
          ),
        );
      });
    });
    s.once('error', (err: NodeJS.ErrnoException) =>
      done(() => {
        const hint = tlsFailureHint(`${err.code ?? ''} ${err.message}`);
        if (hint) return reject(tlsHintError(hint, `${err.code ?? ''} ${err.message}`, { origin }));
        const kind = socketFailureOf(err);
        reject(
          new H2labError(
            kind === 'unreachable' || kind === 'timeout'
              ? 'H2LAB_ERR_TARGET_UNREACHABLE'
              : 'H2LAB_ERR_TLS_HANDSHAKE',
            `cannot check the certificate of ${origin} against --trust-cert: ${err.code ?? err.message}${kind === 'unreachable' ? ': check the server is running and the address and port are right' : ''}`,
            { origin, option: '--trust-cert', cause: err.code ?? err.message },
          ),
        );
      }),
    );
  });
}

/**
 * The SPKI pins `--trust-cert` stands for: each server certificate's own, and for the CAs, the pin
 * of each https:// origin's certificate once it verified against them.
 *
 * @example const pins = await trustPins([readFileSync('ca.pem', 'utf8')], ['https://127.0.0.1:8443']);
 */
export async function trustPins(pems: readonly string[], origins: readonly string[]): Promise<string[]> {
  const { leaves, cas } = split(pems);
  const pins = leaves.flatMap(spkiPins);
  if (cas.length) {
    for (const o of origins.filter((x) => x.startsWith('https:'))) pins.push(await verifiedPin(o, cas));
  }
  return pins;
}
