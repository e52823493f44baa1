/**
 * The one table from a socket's error code (errno names from libuv, Node's stream and TLS codes) to
 * what went wrong, in the few kinds a user can act on. The load engine's transports and the probe
 * each speak their own vocabulary (FailureClass, FailureKind) and error codes, and translate from
 * these kinds; the codes are read here only.
 */

import { H2labError } from './errors.ts';

/**
 * What went wrong with a socket: no TCP connection (`unreachable`), the kernel gave up waiting
 * (`timeout`), the peer reset or closed it (`reset`), or TLS failed (`tls`).
 */
type SocketFailureKind = 'unreachable' | 'timeout' | 'reset' | 'tls';

/** Error codes with a kind of their own. Codes starting `ERR_SSL` or `ERR_TLS` are `tls`. */
const SOCKET_ERROR_CODES: Readonly<Record<string, SocketFailureKind>> = Object.freeze({
  ECONNREFUSED: 'unreachable',
  ENOTFOUND: 'unreachable',
  EAI_AGAIN: 'unreachable',
  EAI_NONAME: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  EADDRNOTAVAIL: 'unreachable',
  ETIMEDOUT: 'timeout',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ERR_STREAM_PREMATURE_CLOSE: 'reset',
});

/**
 * The kind of a socket error (an error with a `code`, or the code itself); undefined when the code
 * is not in the table (the caller decides from where in the exchange it happened).
 *
 * @example socketFailureOf(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })) // 'unreachable'
 */
export function socketFailureOf(err: unknown): SocketFailureKind | undefined {
  const code = typeof err === 'string' ? err : (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  if (Object.hasOwn(SOCKET_ERROR_CODES, code)) return SOCKET_ERROR_CODES[code];
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS')) return 'tls';
  return undefined;
}

/**
 * Two TLS failures whose fix is not in the TLS settings, told apart by the OpenSSL reason: the port
 * does not speak TLS at all (`not-tls`: the first bytes back were no TLS record, e.g. an HTTP/1.1
 * answer to the ClientHello), or the server demands a client certificate (`client-cert-required`:
 * TLS 1.3 alert 116, RFC 8446 §6.2, or a TLS 1.2 handshake failure after a CertificateRequest).
 *
 * @example tlsFailureHint('ERR_SSL_WRONG_VERSION_NUMBER') // 'not-tls'
 */
export function tlsFailureHint(codeOrMessage: string): 'not-tls' | 'client-cert-required' | undefined {
  if (/WRONG_VERSION_NUMBER|wrong version number|PACKET_LENGTH_TOO_LONG|HTTP_REQUEST/i.test(codeOrMessage))
    return 'not-tls';
  if (/CERTIFICATE_REQUIRED|certificate required|PEER_DID_NOT_RETURN_A_CERTIFICATE/i.test(codeOrMessage))
    return 'client-cert-required';
  return undefined;
}

/**
 * A TLS failure named by a diagnosis rather than by OpenSSL: `client-cert-refused`, a server that
 * closed the connection right after a handshake in which the client sent its certificate, before
 * any request and without an alert — how Node's TLS server refuses a certificate it cannot verify
 * (it checks the chain in JavaScript after the handshake and destroys the socket).
 */
type TlsHint = ReturnType<typeof tlsFailureHint> | 'client-cert-refused';

const TLS_HINT_FIX: Record<NonNullable<TlsHint>, (code: string | undefined) => string> = {
  'not-tls': (code) =>
    `the https:// URL names a port that does not speak TLS (${code}: the answer was not a TLS record): use http:// for this port, or the server's TLS port`,
  'client-cert-required': (code) =>
    `the server requires a client certificate (${code}): pass --cert FILE --key FILE with a certificate signed by a CA the server trusts`,
  'client-cert-refused': () =>
    'the server closed the connection right after the TLS handshake, before any request and without a TLS alert, as a server that refuses the client certificate does: pass --cert FILE --key FILE with a certificate signed by a CA the server trusts (check its --ca)',
};

/**
 * The error for a {@link TlsHint}: H2LAB_ERR_TLS_HANDSHAKE with the fix that applies (use http://,
 * or pass a client certificate the server trusts), without OpenSSL's raw text (its code is kept in
 * details).
 */
export function tlsHintError(
  hint: NonNullable<TlsHint>,
  cause: string,
  details: Record<string, unknown> = {},
): H2labError {
  const code = /ERR_SSL_[A-Z0-9_]+/.exec(cause)?.[0] ?? cause.split(/\s/)[0];
  return new H2labError('H2LAB_ERR_TLS_HANDSHAKE', TLS_HINT_FIX[hint](code), {
    ...details,
    hint,
    cause: code,
  });
}
