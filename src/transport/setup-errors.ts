/**
 * The errors that end a run whose connections could not be set up, each naming the fix: a TLS
 * problem, a server that refused every protocol offered, no file descriptors left, an unreachable
 * target.
 */
import { H2labError, openFilesExhausted, tlsFailureHint, tlsHintError } from '../core/index.ts';
import type { FailureClass, StrategyName } from '../model/index.ts';
import { ConnectError } from './connect.ts';

/** Turns the first connection's failure into the error that ends the run before it starts. */
export function toOpenError(reason: unknown, strategy: StrategyName): H2labError {
  if (reason instanceof H2labError) return reason;
  if (reason instanceof ConnectError) return setupFailureError(reason.failure, reason.message, strategy);
  return setupFailureError('connect', String(reason), strategy);
}

/**
 * A TLS server that answered the client's ALPN offer with the no_application_protocol alert (RFC 7301
 * §3.2): the handshake worked as far as the protocol, and the server speaks none of those offered —
 * H2LAB_ERR_PROTOCOL_MISMATCH (compare: the cell is not offered), not a certificate problem.
 */
function alpnRefused(strategy: StrategyName, cause: string): H2labError {
  // By the name's version (strategies are named h1…, h2…, h3…).
  const http = strategy.startsWith('h1') ? 'HTTP/1.1' : strategy.startsWith('h3') ? 'HTTP/3' : 'HTTP/2';
  return new H2labError(
    'H2LAB_ERR_PROTOCOL_MISMATCH',
    `the server refused ${http} in the TLS handshake (ALPN: no_application_protocol alert): it does not offer ${http} on this port; measure the protocols it offers (h2lab probe URL lists them), or enable ${http} on the server`,
    {
      transport: strategy,
      requested: strategy,
      negotiated: 'none',
      cause: /ERR_SSL_[A-Z0-9_]+/.exec(cause)?.[0] ?? cause,
    },
  );
}

/**
 * A handshake the server ended by closing the connection (a reset or an end of stream, no alert and
 * no certificate verdict): the client's trust settings played no part in it.
 */
const closedInHandshake = (cause: string) =>
  /ECONNRESET|EPIPE|socket disconnected before secure TLS|socket hang up/i.test(cause) &&
  !/certificate|CERT_|self[- ]signed|UNABLE_TO_|altnames/i.test(cause);

/**
 * The error that ends a run whose connections could not be set up: H2LAB_ERR_TLS_HANDSHAKE for a
 * `tls` failure, else H2LAB_ERR_TARGET_UNREACHABLE, each naming the fix. Also used when connections
 * are opened on demand (a burst with handshakes included) and none of them could be.
 */
export function setupFailureError(failure: FailureClass, cause: string, strategy: StrategyName): H2labError {
  const hint = tlsFailureHint(cause);
  if (hint) return tlsHintError(hint, cause, { transport: strategy, cause });
  if (/NO_APPLICATION_PROTOCOL|no application protocol/i.test(cause)) return alpnRefused(strategy, cause);
  const fds = openFilesExhausted(cause, { transport: strategy });
  if (fds) return fds;
  if (failure === 'tls' && closedInHandshake(cause)) {
    return new H2labError(
      'H2LAB_ERR_TLS_HANDSHAKE',
      `the server closed the connection during the TLS handshake (${cause}), before any certificate was checked, so neither --ca nor -k changes it: check that the port speaks TLS (else use http://), pass --cert/--key if the server asks for a client certificate, and see the server's log for why it refused`,
      { transport: strategy, cause, hint: 'closed-in-handshake' },
    );
  }
  if (failure === 'tls') {
    return new H2labError(
      'H2LAB_ERR_TLS_HANDSHAKE',
      `the TLS handshake with the target failed (${cause}): pass --ca FILE with the server's CA, --cert/--key if it asks for a client certificate, or -k (--insecure) to skip verification`,
      { transport: strategy, cause },
    );
  }
  return new H2labError(
    'H2LAB_ERR_TARGET_UNREACHABLE',
    `the target could not be reached (${cause}): check the URL's host and port and that the server is running`,
    { transport: strategy, cause },
  );
}
