/**
 * The few pcapng blocks h2lab writes (the pcapng specification, draft-ietf-opsawg-pcapng): a Section
 * Header Block, one Interface Description Block per direction of the link, and one Enhanced Packet
 * Block per packet with its fate as `opt_comment`. Little-endian, timestamps in microseconds (the
 * default `if_tsresol`), link type LINKTYPE_RAW (101: the packet starts with its IPv4/IPv6 header,
 * which is what a TUN device without packet information hands the relay).
 *
 * ```
 *   block: type u32 │ total length u32 │ body … │ options (code u16, length u16, value padded to 4) │ total length u32
 * ```
 * Wireshark, tshark and editcap open the result as is.
 */

/** LINKTYPE_RAW: raw IPv4 or IPv6, no link-layer header. */
export const LINKTYPE_RAW = 101;

/** Block types: Section Header, Interface Description, Enhanced Packet. */
const SHB = 0x0a0d0d0a;
export const IDB = 0x00000001;
export const EPB = 0x00000006;
const BYTE_ORDER_MAGIC = 0x1a2b3c4d;
/** Option codes of every block: the end of the options, a comment. */
export const OPT_END = 0;
export const OPT_COMMENT = 1;
const SHB_USERAPPL = 4;
const IF_NAME = 2;
const IF_DESCRIPTION = 3;

const pad4 = (n: number): number => (n + 3) & ~3;

/** Bytes one option takes: code, length, value padded to 32 bits. */
function optionBytes(valueBytes: number): number {
  return 4 + pad4(valueBytes);
}

/** Writes a block around `body` (already laid out with its options) and returns it. */
function block(type: number, body: Buffer): Buffer {
  const total = 12 + body.length;
  const b = Buffer.alloc(total);
  b.writeUInt32LE(type, 0);
  b.writeUInt32LE(total, 4);
  body.copy(b, 8);
  b.writeUInt32LE(total, total - 4);
  return b;
}

/** Text options (code → UTF-8 value), each padded, then opt_endofopt. */
function textOptions(options: ReadonlyArray<readonly [number, string]>): Buffer {
  const values = options.map(([code, text]) => [code, Buffer.from(text, 'utf8')] as const);
  const size = values.reduce((n, [, v]) => n + optionBytes(v.length), 0) + 4;
  const b = Buffer.alloc(size);
  let o = 0;
  for (const [code, v] of values) {
    b.writeUInt16LE(code, o);
    b.writeUInt16LE(v.length, o + 2);
    v.copy(b, o + 4);
    o += optionBytes(v.length);
  }
  b.writeUInt16LE(OPT_END, o);
  return b;
}

/** The Section Header Block: byte order, version 1.0, unknown section length, the writer and a comment. */
export function sectionHeader(application: string, comment?: string): Buffer {
  const head = Buffer.alloc(16);
  head.writeUInt32LE(BYTE_ORDER_MAGIC, 0);
  head.writeUInt16LE(1, 4);
  head.writeUInt16LE(0, 6);
  head.writeBigInt64LE(-1n, 8);
  const opts: Array<readonly [number, string]> = [[SHB_USERAPPL, application]];
  if (comment) opts.push([OPT_COMMENT, comment]);
  return block(SHB, Buffer.concat([head, textOptions(opts)]));
}

/** An Interface Description Block: raw IP, the snap length, a name and a description. */
export function interfaceDescription(snapBytes: number, name: string, description: string): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16LE(LINKTYPE_RAW, 0);
  head.writeUInt32LE(snapBytes, 4);
  return block(
    IDB,
    Buffer.concat([
      head,
      textOptions([
        [IF_NAME, name],
        [IF_DESCRIPTION, description],
      ]),
    ]),
  );
}

/** Bytes of an Enhanced Packet Block holding `captured` packet bytes and an ASCII comment of `commentBytes`. */
export function packetBlockBytes(captured: number, commentBytes: number): number {
  return 28 + pad4(captured) + (commentBytes > 0 ? optionBytes(commentBytes) : 0) + 4 + 4;
}

/**
 * Lays out an Enhanced Packet Block in `out` at `at` without allocating: the packet's first
 * `captured` bytes from `src`, its original length, the timestamp in µs since the epoch, and the
 * comment already written at `out[commentAt, commentAt + commentBytes)` (the caller formats it in
 * place, see `capture.ts`) moved to its position. Returns the block's length.
 */
export function writePacketBlock(
  out: Buffer,
  at: number,
  iface: number,
  epochUs: number,
  src: Buffer,
  offset: number,
  captured: number,
  original: number,
  commentAt: number,
  commentBytes: number,
): number {
  const total = packetBlockBytes(captured, commentBytes);
  const data = at + 28;
  const opt = data + pad4(captured);
  // The comment was formatted after the block's end (scratch room): move it into the option first.
  if (commentBytes > 0) {
    out.copyWithin(opt + 4, commentAt, commentAt + commentBytes);
    out.writeUInt16LE(OPT_COMMENT, opt);
    out.writeUInt16LE(commentBytes, opt + 2);
    out.fill(0, opt + 4 + commentBytes, opt + optionBytes(commentBytes));
  }
  const end = opt + (commentBytes > 0 ? optionBytes(commentBytes) : 0);
  out.writeUInt32LE(OPT_END, end);
  out.writeUInt32LE(EPB, at);
  out.writeUInt32LE(total, at + 4);
  out.writeUInt32LE(iface, at + 8);
  out.writeUInt32LE(Math.floor(epochUs / 0x100000000), at + 12);
  out.writeUInt32LE((epochUs % 0x100000000) >>> 0, at + 16);
  out.writeUInt32LE(captured, at + 20);
  out.writeUInt32LE(original, at + 24);
  src.copy(out, data, offset, offset + captured);
  out.fill(0, data + captured, opt);
  out.writeUInt32LE(total, at + total - 4);
  return total;
}
