/**
 * The one check of a request header field a user supplies (`-H name: value`), used where options are
 * parsed and again by every transport before a field reaches the wire: a CR or LF in a value would
 * end the field on HTTP/1.1 and let the rest become a header or a request of its own (RFC 9112 §2.2
 * calls bare CR/LF in a field invalid; RFC 9113 §8.2.1 makes them malformed in HTTP/2).
 */

/** RFC 9110 §5.6.2 `token`: what a field name may be made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** CR, LF and NUL: never valid in a field value (RFC 9110 §5.5). */
const FORBIDDEN_IN_VALUE = /[\r\n\0]/;

/**
 * Why a request header field may not be sent, in words naming it, or undefined when it may.
 * `name` as given; `value` without surrounding whitespace is not required.
 */
export function headerFieldProblem(name: string, value: string): string | undefined {
  if (!TOKEN.test(name)) return `header name ${JSON.stringify(name)} is not an HTTP token (RFC 9110 §5.6.2)`;
  if (FORBIDDEN_IN_VALUE.test(value))
    return `header ${name} has a CR, LF or NUL in its value ${JSON.stringify(value)} (RFC 9110 §5.5): it would split the field on the wire`;
  return undefined;
}
