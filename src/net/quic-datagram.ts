/**
 * What h2lab reads of a QUIC datagram without its keys (RFC 9000 §17.2, RFC 9369 §3.2): where its
 * coalesced long-header packets end, from their unencrypted Length fields.
 *
 * ```
 *   IPv4/IPv6 │ UDP │ long header (Initial, Handshake …) │ long header … │ short header (1-RTT) or zeros
 *                   └── type, version, CIDs, [token], Length ───────────┘
 * ```
 * The capture stage leaves out the zero padding after them (see `capture.ts`); the time-sequence
 * reader tells the handshake's datagrams (long-header packets only) from those carrying 1-RTT data.
 */

/** QUIC versions 1 (RFC 9000) and 2 (RFC 9369): the long-header type bits of their Initial and Retry. */
const QUIC_V1 = 0x00000001;
const QUIC_V2 = 0x6b3343cf;
const INITIAL = new Map([
  [QUIC_V1, 0],
  [QUIC_V2, 1],
]);
const RETRY = new Map([
  [QUIC_V1, 3],
  [QUIC_V2, 0],
]);

/** A QUIC variable-length integer at `at` (RFC 9000 §16): [value, bytes], or undefined past `end`. */
function varint(b: Buffer, at: number, end: number): [number, number] | undefined {
  if (at >= end) return undefined;
  const n = 1 << (b[at]! >> 6);
  if (at + n > end) return undefined;
  let v = b[at]! & 0x3f;
  for (let i = 1; i < n; i++) v = v * 256 + b[at + i]!;
  return [v, n];
}

/** Where the UDP payload of the IPv4 or IPv6 packet `b[at, end)` begins, or -1 when it is not UDP. */
function udpPayloadAt(b: Buffer, at: number, end: number): number {
  const v = b[at]! >> 4;
  if (v === 4 && end - at >= 28 && b[at + 9] === 17) return at + (b[at]! & 15) * 4 + 8;
  if (v === 6 && end - at >= 48 && b[at + 6] === 17) return at + 48;
  return -1;
}

/**
 * The end of the long-header packets from `p` (`p` itself when a short header or nothing begins
 * there), or -1 when one cannot be read: a version other than 1 and 2, a Retry (no Length), a
 * packet running past `end`.
 */
function longHeadersEnd(b: Buffer, p: number, end: number): number {
  while (p < end && b[p]! & 0x80) {
    if (p + 6 > end) return -1;
    const version = b.readUInt32BE(p + 1);
    const type = (b[p]! >> 4) & 3;
    if (!INITIAL.has(version) || type === RETRY.get(version)) return -1;
    let q = p + 6 + b[p + 5]!;
    if (q >= end) return -1;
    q += 1 + b[q]!;
    if (type === INITIAL.get(version)) {
      const token = varint(b, q, end);
      if (!token) return -1;
      q += token[1] + token[0];
    }
    const length = varint(b, q, end);
    if (!length) return -1;
    p = q + length[1] + length[0];
  }
  return p > end ? -1 : p;
}

const zeros = (b: Buffer, from: number, end: number): boolean => {
  for (let i = from; i < end; i++) if (b[i] !== 0) return false;
  return true;
};

/**
 * Where the zero bytes after the QUIC long-header packets of the UDP datagram in `b[at, end)` (an
 * IPv4 or IPv6 packet) begin, or `end` when the datagram is not that: not UDP, no long header, a
 * packet that cannot be read, or anything but zeros after the packets (a coalesced short-header
 * packet).
 */
export function quicPaddingAt(b: Buffer, at: number, end: number): number {
  const p = udpPayloadAt(b, at, end);
  if (p < 0 || p >= end || !(b[p]! & 0x80)) return end;
  const e = longHeadersEnd(b, p, end);
  return e < 0 || e >= end || !zeros(b, e, end) ? end : e;
}

/**
 * Whether the UDP datagram in `b[at, end)` holds QUIC long-header packets only (the handshake's:
 * Initial, Handshake, 0-RTT), zero padding aside; a datagram cut short of its packets counts as one.
 */
export function quicHandshakeOnly(b: Buffer, at: number, end: number): boolean {
  const p = udpPayloadAt(b, at, end);
  if (p < 0 || p >= end || !(b[p]! & 0x80)) return false;
  const e = longHeadersEnd(b, p, end);
  return e < 0 || zeros(b, e, end);
}
