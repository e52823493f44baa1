/**
 * The one table from a socket's error code (errno names from libuv, Node's stream and TLS codes) to
 * what went wrong, in the few kinds a user can act on. The load engine's transports and the probe
 * each speak their own vocabulary (FailureClass, FailureKind) and error codes, and translate from
 * these kinds; the codes are read here only.
 */

/**
 * What went wrong with a socket: no TCP connection (`unreachable`), the kernel gave up waiting
 * (`timeout`), the peer reset or closed it (`reset`), or TLS failed (`tls`).
 */
export type SocketFailureKind = 'unreachable' | 'timeout' | 'reset' | 'tls';

/** Error codes with a kind of their own. Codes starting `ERR_SSL` or `ERR_TLS` are `tls`. */
export const SOCKET_ERROR_CODES: Readonly<Record<string, SocketFailureKind>> = Object.freeze({
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
