/**
 * Why a run where no request succeeded failed, when the answer is in how the port speaks rather than
 * in what it answered: one extra connection to the target, after the run, so a wrong scheme or a
 * missing client certificate is named instead of reported as an error rate.
 */
import { isIP } from 'node:net';
import { connect } from 'node:tls';
import { H2labError, tlsFailureHint, tlsHintError } from '../core/index.ts';
import { readPemFile, readTlsFiles } from '../tls/index.ts';
import { createTransport, DEFAULT_STRATEGY } from '../transport/index.ts';

/** TLS material of the run, as the transports get it. */
interface DiagnoseTls {
  ca?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
}

/** How long the extra connection may take, ms (loopback or LAN targets answer in far less). */
const DIAGNOSE_TIMEOUT_MS = 2000;
/**
 * In TLS 1.3 the client's handshake completes before the server has checked the client's
 * certificate (RFC 8446 §4.4.2: the client's Certificate follows the server's Finished), so the
 * server's "certificate required" alert arrives after secureConnect: wait this long for it, ms.
 */
const ALERT_WAIT_MS = 300;

/**
 * The error that explains a run without one success, or undefined when this connection finds
 * nothing to say: an http:// URL on a port that completes a TLS handshake is
 * H2LAB_ERR_PROTOCOL_MISMATCH; an https:// URL whose server demands a client certificate, or that
 * does not speak TLS, or that closes the connection right after a handshake with the client's
 * certificate (refused, without an alert), is H2LAB_ERR_TLS_HANDSHAKE with that fix. With
 * `h1Unanswered` (an HTTP/1.1 run whose requests were all closed without a byte of answer), an
 * https:// server that selects h2 when offered is H2LAB_ERR_PROTOCOL_MISMATCH: it speaks only HTTP/2.
 */
export function diagnoseNoSuccess(
  url: string,
  tls: DiagnoseTls,
  timeoutMs = DIAGNOSE_TIMEOUT_MS,
  h1Unanswered = false,
): Promise<H2labError | undefined> {
  const u = new URL(url);
  const https = u.protocol === 'https:';
  const port = Number(u.port || (https ? 443 : 80));
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    let settled = false;
    const done = (e: H2labError | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(e);
    };
    const socket = connect({
      host,
      port,
      ALPNProtocols: ['h2', 'http/1.1'],
      // SNI names a host, never an address (RFC 6066 §3; Node warns DEP0123 on stderr otherwise).
      ...(https && !isIP(host) ? { servername: host } : {}),
      rejectUnauthorized: https ? !tls.insecure : false,
      ...(https && tls.ca ? { ca: tls.ca } : {}),
      ...(https && tls.cert ? { cert: tls.cert, key: tls.key } : {}),
    });
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.once('secureConnect', () => {
      if (!https) {
        done(
          new H2labError(
            'H2LAB_ERR_PROTOCOL_MISMATCH',
            `the http:// URL names a port that speaks TLS (the port completed a TLS handshake): use https://${u.host}${u.pathname}${u.search}, with --ca FILE or --insecure`,
            { requested: 'cleartext', negotiated: 'tls', url },
          ),
        );
        return;
      }
      // HTTP/1.1 requests closed without a byte of answer, by a server that picks h2 when it is
      // offered (and nothing for http/1.1 alone, as nghttpd does), and that keeps this connection
      // past the alert wait (a refused client certificate closes it first: that is said instead):
      // it speaks only HTTP/2 here. Without this an HTTP/1.1 pool reconnected into it until the
      // error rate ended the run (2,004 connections in 6 s).
      setTimeout(
        () =>
          done(
            h1Unanswered && socket.alpnProtocol === 'h2'
              ? new H2labError(
                  'H2LAB_ERR_PROTOCOL_MISMATCH',
                  `requested http/1.1 but the server closed every HTTP/1.1 request without an answer, and it selects h2 in ALPN when h2 is offered: it speaks only HTTP/2 at ${u.host}; measure it with --protocol h2`,
                  { requested: 'http/1.1', negotiated: 'h2', url },
                )
              : undefined,
          ),
        ALERT_WAIT_MS,
      );
      if (tls.cert)
        socket.once('close', () =>
          done(tlsHintError('client-cert-refused', 'closed after the handshake', { url })),
        );
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const text = `${err.code ?? ''} ${err.message}`;
      const hint = https ? tlsFailureHint(text) : undefined;
      done(hint ? tlsHintError(hint, text, { url }) : undefined);
    });
  });
}

/** How long compare's check of an http:// URL's scheme may wait for a handshake, ms. */
const PREFLIGHT_SCHEME_MS = 1000;

/** TLS options as a user gives them: PEM files' paths (see {@link preflightTarget}). */
interface PreflightTls {
  ca?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
}

/**
 * Before a comparison spends its runs on a target h2lab did not start: the PEM files named by `--ca`,
 * `--cert` and `--key` are read (a missing or invalid one is H2LAB_ERR_FILE_UNREADABLE /
 * H2LAB_ERR_TLS_BAD_PEM naming the option, exit 2), and for an https:// URL one connection is set up
 * as the transports would: a certificate the client does not trust (or one the server refuses) is
 * H2LAB_ERR_TLS_HANDSHAKE with the fix, instead of the same failure in every cell; an http:// URL
 * naming a port that completes a TLS handshake is H2LAB_ERR_PROTOCOL_MISMATCH saying to use https://.
 * Anything else
 * (refused, a protocol the server does not speak) is left for the runs to report.
 */
export async function preflightTarget(
  url: string,
  tls: PreflightTls,
  connectTimeoutMs = 10_000,
): Promise<void> {
  const pem = {
    ...readTlsFiles(tls, 'to send no client certificate'),
    ...(tls.insecure ? { insecure: true } : {}),
  };
  if (new URL(url).protocol !== 'https:') {
    // An http:// URL naming a TLS port fails every request of every strategy, each in its own words
    // (h1 "not offered", h2 "closed by the server"): one TLS handshake tells, before any run. A
    // cleartext server answers the ClientHello with an error at once; a silent one costs the bound.
    const named = await diagnoseNoSuccess(url, {}, PREFLIGHT_SCHEME_MS);
    if (named) throw named;
    return;
  }
  // The default strategy's first connection: a TLS failure is the same for every strategy over TCP.
  const t = createTransport(DEFAULT_STRATEGY, { url, connections: 1, tls: pem, connectTimeoutMs });
  try {
    await t.open();
  } catch (err) {
    if (err instanceof H2labError && err.code === 'H2LAB_ERR_TLS_HANDSHAKE') throw err;
  } finally {
    await t.close().catch(() => {});
  }
}

/**
 * How long compare waits for a QUIC handshake before it calls HTTP/3 not offered, ms: `h2lab probe`'s
 * own timeout, so a server without HTTP/3 costs one probe's wait, not every h3 cell's connect
 * timeout.
 */
export const PREFLIGHT_QUIC_MS = 5000;

/**
 * Before a comparison runs an HTTP/3 strategy against a server h2lab did not start: one QUIC
 * handshake with the user's trust settings. Resolves with the reason HTTP/3 is not offered when
 * nothing answered on UDP within `timeoutMs` (a server without HTTP/3 ignores QUIC's Initial), else
 * undefined — any other failure is left for the runs to report in their own words.
 */
export async function preflightQuic(
  url: string,
  tls: PreflightTls,
  timeoutMs = PREFLIGHT_QUIC_MS,
): Promise<string | undefined> {
  const pem = {
    ...(tls.ca ? { ca: readPemFile(tls.ca, '--ca') } : {}),
    ...(tls.insecure ? { insecure: true } : {}),
  };
  const t = createTransport('h3', { url, connections: 1, tls: pem, connectTimeoutMs: timeoutMs });
  try {
    await t.open();
    return undefined;
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (!/timed out/i.test(msg)) return undefined;
    const u = new URL(url);
    return `no answer to a QUIC handshake on UDP ${u.port || 443} of ${u.hostname} within ${timeoutMs} ms`;
  } finally {
    await t.close().catch(() => {});
  }
}
