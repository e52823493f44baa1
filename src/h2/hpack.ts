/**
 * HPACK (RFC 7541) for h2lab's own HTTP/2 client.
 *
 * - {@link HpackDecoder}: the full decoder — static and dynamic table, table size updates, Huffman —
 *   because the server's encoder decides what it sends. It can skip decoding the strings of fields
 *   that do not enter the dynamic table when the caller only wants `:status` (a load generator reads
 *   a response's status, not its `etag`), which is where most of a decoder's time goes.
 * - {@link encodeHeaderBlock}: a stateless encoder. Every field is a static-table index or a literal
 *   *without indexing* (§6.2.2), so the block never depends on connection state.
 * - {@link RequestEncoder}: the request encoder of one connection. The two fields every request
 *   repeats (`:authority`, `user-agent`) enter the server's dynamic table with the first request and
 *   are one-byte indexes after that, as browsers and h2load do, so the server decodes what it would
 *   decode from a real client; everything else is stateless, so blocks stay cacheable per request.
 */
import { HUFFMAN_BITS, HUFFMAN_CODES, STATIC_TABLE } from './hpack-tables.ts';

/** The decoder's dynamic table limit before SETTINGS say otherwise (RFC 7541 §4.2; RFC 9113 §6.5.2). */
export const DEFAULT_HEADER_TABLE_BYTES = 4096;
/** Per-entry overhead counted in a dynamic table's size (RFC 7541 §4.1). */
const ENTRY_OVERHEAD = 32;

/** A malformed header block: the connection must end with COMPRESSION_ERROR (RFC 9113 §4.3). */
export class HpackError extends Error {}

// ---- Huffman ---------------------------------------------------------------------------------------

/**
 * A 4-bit-at-a-time decoding automaton built from the code table at load time. A state is an internal
 * node of the code tree; for each (state, nibble) it stores the next state, the symbol completed on the
 * way (at most one: no code is shorter than 5 bits) and whether ending there is valid padding (the
 * path from the root is at most 7 one-bits, RFC 7541 §5.2).
 */
const HUFF_NEXT = new Uint16Array(256 * 16);
const HUFF_SYM = new Int16Array(256 * 16);
/** Per state: 1 when a string may end in it (all-ones path of ≤ 7 bits from the root). */
const HUFF_ACCEPT = new Uint8Array(256);
const HUFF_EOS = 256;
const HUFF_ERR = -2;
{
  // Build the tree: node 0 is the root; children[2n], children[2n+1]; a leaf stores -(symbol + 1).
  const left: number[] = [0];
  const right: number[] = [0];
  const depthOnes: number[] = [0]; // bits from the root if the path is all ones, else -1
  for (let sym = 0; sym <= 256; sym++) {
    const code = HUFFMAN_CODES[sym]!;
    const bits = HUFFMAN_BITS[sym]!;
    let node = 0;
    for (let i = bits - 1; i >= 0; i--) {
      const bit = (code >>> i) & 1;
      const arr = bit ? right : left;
      if (i === 0) {
        arr[node] = -(sym + 1);
      } else {
        let next = arr[node]!;
        if (next === 0) {
          next = left.length;
          left.push(0);
          right.push(0);
          const d = depthOnes[node]!;
          depthOnes.push(bit === 1 && d >= 0 ? d + 1 : -1);
          arr[node] = next;
        }
        node = next;
      }
    }
  }
  if (left.length !== 256) throw new Error(`Huffman tree has ${left.length} internal nodes, expected 256`);
  for (let s = 0; s < 256; s++) {
    const d = depthOnes[s]!;
    HUFF_ACCEPT[s] = d >= 0 && d <= 7 ? 1 : 0;
    for (let nib = 0; nib < 16; nib++) {
      let node = s;
      let sym = -1;
      for (let i = 3; i >= 0; i--) {
        const child = ((nib >>> i) & 1 ? right : left)[node]!;
        if (child < 0) {
          const found = -child - 1;
          sym = found === HUFF_EOS ? HUFF_ERR : found;
          node = 0;
          if (sym === HUFF_ERR) break;
        } else {
          node = child;
        }
      }
      HUFF_NEXT[s * 16 + nib] = node;
      HUFF_SYM[s * 16 + nib] = sym;
    }
  }
}

/** Decodes a Huffman-coded string (RFC 7541 §5.2) from `buf[start, end)` as latin1 text. */
export function huffmanDecode(buf: Uint8Array, start: number, end: number): string {
  let state = 0;
  let out = '';
  for (let i = start; i < end; i++) {
    const byte = buf[i]!;
    let k = state * 16 + (byte >>> 4);
    let sym = HUFF_SYM[k]!;
    if (sym >= 0) out += String.fromCharCode(sym);
    else if (sym === HUFF_ERR) throw new HpackError('Huffman string contains EOS');
    state = HUFF_NEXT[k]!;
    k = state * 16 + (byte & 15);
    sym = HUFF_SYM[k]!;
    if (sym >= 0) out += String.fromCharCode(sym);
    else if (sym === HUFF_ERR) throw new HpackError('Huffman string contains EOS');
    state = HUFF_NEXT[k]!;
  }
  if (!HUFF_ACCEPT[state]) throw new HpackError('Huffman string has invalid padding');
  return out;
}

/** The Huffman-coded length of `s` in bytes (latin1 code units). */
function huffmanLength(s: string): number {
  let bits = 0;
  for (let i = 0; i < s.length; i++) bits += HUFFMAN_BITS[s.charCodeAt(i) & 0xff]!;
  return (bits + 7) >>> 3;
}

/** Huffman-encodes `s` (RFC 7541 §5.2), padding with the EOS prefix (ones). */
export function huffmanEncode(s: string): Buffer {
  const out = Buffer.allocUnsafe(huffmanLength(s));
  let cur = 0;
  let nbits = 0;
  let o = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) & 0xff;
    const code = HUFFMAN_CODES[c]!;
    for (let b = HUFFMAN_BITS[c]! - 1; b >= 0; b--) {
      cur = (cur << 1) | ((code >>> b) & 1);
      if (++nbits === 8) {
        out[o++] = cur;
        cur = 0;
        nbits = 0;
      }
    }
  }
  if (nbits > 0) out[o++] = (cur << (8 - nbits)) | ((1 << (8 - nbits)) - 1);
  return out;
}

// ---- integers and strings ------------------------------------------------------------------------

/** Appends an HPACK integer with an N-bit prefix (RFC 7541 §5.1); `first` holds the pattern bits. */
function pushInt(out: number[], first: number, prefixBits: number, value: number): void {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out.push(first | value);
    return;
  }
  out.push(first | max);
  let v = value - max;
  while (v >= 128) {
    out.push((v % 128) + 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

function pushString(out: number[], s: string): void {
  const h = huffmanLength(s);
  if (h < s.length) {
    pushInt(out, 0x80, 7, h);
    for (const b of huffmanEncode(s)) out.push(b);
  } else {
    pushInt(out, 0, 7, s.length);
    for (let i = 0; i < s.length; i++) out.push(s.charCodeAt(i) & 0xff);
  }
}

const STATIC_EXACT = new Map<string, number>();
const STATIC_NAME = new Map<string, number>();
STATIC_TABLE.forEach(([name, value], i) => {
  const key = `${name}\0${value}`;
  if (!STATIC_EXACT.has(key)) STATIC_EXACT.set(key, i + 1);
  if (!STATIC_NAME.has(name)) STATIC_NAME.set(name, i + 1);
});

/**
 * Encodes a header list (names lower case, pseudo-headers first) without touching any dynamic table:
 * an exact static match is an indexed field (§6.1), anything else a literal without indexing (§6.2.2)
 * with a static name index where there is one, strings Huffman-coded when that is shorter (§5.2).
 */
export function encodeHeaderBlock(headers: ReadonlyArray<readonly [string, string]>): Buffer {
  const out: number[] = [];
  for (const [name, value] of headers) pushField(out, name, value, false);
  return Buffer.from(out);
}

/** Encodes one field (static index, or literal with or without indexing) onto `out`. */
function pushField(out: number[], name: string, value: string, index: boolean): void {
  const exact = STATIC_EXACT.get(`${name}\0${value}`);
  if (exact !== undefined) {
    pushInt(out, 0x80, 7, exact);
    return;
  }
  const nameIdx = STATIC_NAME.get(name);
  const [pattern, prefix] = index ? [0x40, 6] : [0x00, 4];
  if (nameIdx !== undefined) {
    pushInt(out, pattern, prefix, nameIdx);
  } else {
    out.push(pattern);
    pushString(out, name);
  }
  pushString(out, value);
}

/** The size a field takes in a dynamic table (RFC 7541 §4.1). */
function entryBytes(name: string, value: string): number {
  return name.length + value.length + ENTRY_OVERHEAD;
}

/** The dynamic-table indexes of the two entries the first request inserts (newest is 62, §2.3.3). */
const DYN_USER_AGENT = STATIC_TABLE.length + 1;
const DYN_AUTHORITY = STATIC_TABLE.length + 2;
const MAX_CACHED_BLOCKS = 8192;

/**
 * The request encoder of one connection (see the module comment). Blocks come out in the order the
 * requests are sent, which is the order the server decodes them — the first one inserts the entries
 * the later ones refer to. If the server's SETTINGS_HEADER_TABLE_SIZE is, or becomes, smaller than
 * the initial 4,096 bytes, the next block starts with a table size update to 0 (RFC 7541 §4.2, §6.3)
 * and every block after it is stateless.
 */
export class RequestEncoder {
  private state: 'fresh' | 'indexed' | 'plain' = 'fresh';
  private sizeUpdatePending = false;
  private readonly cache = new Map<string, Buffer>();

  constructor(
    private readonly scheme: string,
    private readonly authority: string,
    private readonly userAgent: string,
  ) {}

  /**
   * The block for a request. `key` identifies the request's varying part (method, path, extra
   * fields) for the cache; `extra` are regular fields after `user-agent` (lower-case names).
   * `peerTableBytes` is the server's current SETTINGS_HEADER_TABLE_SIZE. `authority` replaces the
   * connection's `:authority` in this block (a literal, never indexed).
   */
  encode(
    key: string,
    method: string,
    path: string,
    extra: ReadonlyArray<readonly [string, string]>,
    peerTableBytes: number,
    authority?: string,
  ): Buffer {
    if (peerTableBytes < DEFAULT_HEADER_TABLE_BYTES && this.state !== 'plain') {
      // Our table may not stay at the initial 4,096 bytes: shrink it to 0 and stop indexing.
      this.sizeUpdatePending = true;
      this.state = 'plain';
      this.cache.clear();
    }
    if (
      this.state === 'fresh' &&
      ((authority !== undefined && authority !== this.authority) ||
        entryBytes(':authority', this.authority) + entryBytes('user-agent', this.userAgent) >
          DEFAULT_HEADER_TABLE_BYTES)
    ) {
      // Nothing to insert that later blocks would use (another authority), or it would not fit.
      this.state = 'plain';
    }
    if (this.state === 'fresh') {
      this.state = 'indexed';
      return this.build(method, path, extra, 'insert', authority);
    }
    let block = this.cache.get(key);
    if (block === undefined) {
      block = this.build(method, path, extra, this.state === 'indexed' ? 'indexed' : 'plain', authority);
      if (this.cache.size >= MAX_CACHED_BLOCKS) this.cache.clear();
      this.cache.set(key, block);
    }
    if (this.sizeUpdatePending) {
      this.sizeUpdatePending = false;
      return Buffer.concat([Buffer.from([0x20]), block]); // table size update to 0
    }
    return block;
  }

  private build(
    method: string,
    path: string,
    extra: ReadonlyArray<readonly [string, string]>,
    mode: 'insert' | 'indexed' | 'plain',
    authority: string | undefined,
  ): Buffer {
    const out: number[] = [];
    pushField(out, ':method', method, false);
    pushField(out, ':scheme', this.scheme, false);
    if (authority !== undefined && authority !== this.authority)
      pushField(out, ':authority', authority, false);
    else if (mode === 'indexed') pushInt(out, 0x80, 7, DYN_AUTHORITY);
    else pushField(out, ':authority', this.authority, mode === 'insert');
    pushField(out, ':path', path, false);
    if (mode === 'indexed') pushInt(out, 0x80, 7, DYN_USER_AGENT);
    else pushField(out, 'user-agent', this.userAgent, mode === 'insert');
    for (const [n, v] of extra) pushField(out, n, v, false);
    return Buffer.from(out);
  }
}

// ---- the decoder ---------------------------------------------------------------------------------

/** What one header block said. `headers` is filled only when the caller asked for every field. */
interface DecodedBlock {
  /** `:status` as a number, or -1 when absent (a request block, or trailers). */
  status: number;
  /**
   * `content-length` in bytes when the block carries one; -2 when it is not a valid length or two
   * values differ (a malformed message, RFC 9110 §8.6). A client checks the body against it
   * (RFC 9113 §8.1.1).
   */
  contentLength?: number;
  headers?: Array<[string, string]>;
}

/**
 * The HPACK decoder of one connection (RFC 7541 §3–§6). Its dynamic table lives as long as the
 * connection: every header block the peer sends must pass through it, in order, even for streams the
 * client no longer cares about (RFC 9113 §4.3).
 */
export class HpackDecoder {
  /** Newest entry last. */
  private names: string[] = [];
  private values: string[] = [];
  private head = 0;
  private size = 0;
  private maxSize: number;
  /** The limit this side announced in SETTINGS_HEADER_TABLE_SIZE (updates may not exceed it). */
  private readonly settingsMax: number;
  /** Huffman strings decoded before, by their encoded bytes ({@link HuffmanCache}). */
  private readonly huffman = new HuffmanCache();

  constructor(settingsMaxBytes = DEFAULT_HEADER_TABLE_BYTES) {
    this.settingsMax = settingsMaxBytes;
    this.maxSize = settingsMaxBytes;
  }

  /** Entries in the dynamic table now. */
  get entries(): number {
    return this.names.length - this.head;
  }

  /** The dynamic table's size as RFC 7541 §4.1 counts it, bytes. */
  get tableBytes(): number {
    return this.size;
  }

  /**
   * Decodes one complete header block. With `all` false only `:status` is materialised: strings of
   * fields that do not enter the dynamic table are skipped, not decoded. Throws {@link HpackError}.
   */
  decode(block: Uint8Array, all: boolean): DecodedBlock {
    const res: DecodedBlock = { status: -1 };
    if (all) res.headers = [];
    let p = 0;
    const n = block.length;
    let fieldSeen = false;
    while (p < n) {
      const b = block[p]!;
      if (b & 0x80) {
        // Indexed field (§6.1).
        const idx = readInt(block, p, 7);
        p = at;
        if (idx === 0) throw new HpackError('indexed field with index 0');
        fieldSeen = true;
        this.emit(res, idx, all);
        continue;
      }
      if ((b & 0xe0) === 0x20) {
        // Dynamic table size update (§6.3): only at the start of a block (§4.2).
        if (fieldSeen) throw new HpackError('table size update after a header field');
        const size = readInt(block, p, 5);
        p = at;
        if (size > this.settingsMax)
          throw new HpackError(`table size update to ${size} exceeds the ${this.settingsMax} allowed`);
        this.maxSize = size;
        this.evict(0);
        continue;
      }
      // Literal: with incremental indexing (01, §6.2.1), without (0000, §6.2.2), never (0001, §6.2.3).
      const indexing = (b & 0xc0) === 0x40;
      const prefix = indexing ? 6 : 4;
      const nameIdx = readInt(block, p, prefix);
      p = at;
      fieldSeen = true;
      let name: string;
      if (nameIdx === 0) {
        name = readString(block, p, true, this.huffman)!;
        p = at;
      } else {
        name = this.nameAt(nameIdx);
      }
      const need = indexing || all || name === ':status' || name === 'content-length';
      const value = readString(block, p, need, this.huffman);
      p = at;
      if (indexing) this.insert(name, value!);
      if (name === ':status') res.status = parseStatus(value!);
      else if (name === 'content-length') noteLength(res, value!);
      if (all) res.headers!.push([name, value!]);
    }
    return res;
  }

  private emit(res: DecodedBlock, idx: number, all: boolean): void {
    let name: string;
    let value: string;
    if (idx <= STATIC_TABLE.length) {
      const e = STATIC_TABLE[idx - 1]!;
      name = e[0];
      value = e[1];
    } else {
      const i = this.dynIndex(idx);
      name = this.names[i]!;
      value = this.values[i]!;
    }
    if (name === ':status') res.status = parseStatus(value);
    else if (name === 'content-length') noteLength(res, value);
    if (all) res.headers!.push([name, value]);
  }

  private nameAt(idx: number): string {
    if (idx <= STATIC_TABLE.length) return STATIC_TABLE[idx - 1]![0];
    return this.names[this.dynIndex(idx)]!;
  }

  /** Array position of dynamic index `idx` (62 = newest, §2.3.3). */
  private dynIndex(idx: number): number {
    const k = idx - STATIC_TABLE.length - 1;
    if (k >= this.entries) throw new HpackError(`index ${idx} is beyond the dynamic table`);
    return this.names.length - 1 - k;
  }

  private insert(name: string, value: string): void {
    const sz = name.length + value.length + ENTRY_OVERHEAD;
    if (sz > this.maxSize) {
      // An entry larger than the table empties it and is not added (§4.4).
      this.evict(this.maxSize + 1);
      return;
    }
    this.evict(sz);
    this.names.push(name);
    this.values.push(value);
    this.size += sz;
  }

  /** Evicts oldest entries until `room` more bytes fit. */
  private evict(room: number): void {
    while (this.size + room > this.maxSize && this.head < this.names.length) {
      this.size -= this.names[this.head]!.length + this.values[this.head]!.length + ENTRY_OVERHEAD;
      this.head++;
    }
    // Compact now and then so the arrays do not grow without bound.
    if (this.head > 64 && this.head * 2 > this.names.length) {
      this.names = this.names.slice(this.head);
      this.values = this.values.slice(this.head);
      this.head = 0;
    }
  }
}

function noteLength(res: DecodedBlock, v: string): void {
  // 1 to 15 ASCII digits, without a regular expression per response (8.5 ms of a 200k-request
  // profile against nginx).
  let n = v.length > 0 && v.length <= 15 ? 0 : -2;
  for (let i = 0; i < v.length && n >= 0; i++) {
    const d = v.charCodeAt(i) - 48;
    n = d >= 0 && d <= 9 ? n * 10 + d : -2;
  }
  res.contentLength = res.contentLength === undefined || res.contentLength === n ? n : -2;
}

function parseStatus(v: string): number {
  const s = Number(v);
  if (!(v.length === 3 && s >= 100 && s <= 999)) throw new HpackError(`invalid :status "${v}"`);
  return s;
}

/**
 * Where the last {@link readInt} or {@link readString} stopped. One module-level cursor instead of a
 * `[value, offset]` pair per call: a response's block is read with ~15 such calls, and the pairs were
 * garbage on every response. Decoding is synchronous, so no two reads interleave.
 */
let at = 0;

/** Reads an integer with an N-bit prefix at `p`; returns it and leaves the next offset in {@link at}. */
function readInt(buf: Uint8Array, p: number, prefixBits: number): number {
  const max = (1 << prefixBits) - 1;
  let v = buf[p]! & max;
  p++;
  if (v < max) {
    at = p;
    return v;
  }
  let m = 1;
  for (;;) {
    if (p >= buf.length) throw new HpackError('truncated integer');
    const b = buf[p++]!;
    v += (b & 0x7f) * m;
    m *= 128;
    if ((b & 0x80) === 0) break;
    if (m > 2 ** 28) throw new HpackError('integer too large');
  }
  at = p;
  return v;
}

/**
 * Reads a string literal at `p`; decodes it only when `need` (else returns undefined, checked length).
 * The next offset is left in {@link at}.
 */
function readString(buf: Uint8Array, p: number, need: boolean, cache: HuffmanCache): string | undefined {
  if (p >= buf.length) throw new HpackError('truncated string');
  const huff = (buf[p]! & 0x80) !== 0;
  const len = readInt(buf, p, 7);
  const q = at;
  const end = q + len;
  if (end > buf.length) throw new HpackError('string runs past the end of the block');
  at = end;
  if (!need) return undefined;
  return cache.decode(buf, q, end, huff);
}

/** Slots of a {@link HuffmanCache}: a power of two. */
const HUFFMAN_CACHE_SLOTS = 256;
/** Longer encoded strings are decoded every time (long values rarely repeat byte for byte). */
const HUFFMAN_CACHE_MAX_BYTES = 64;

/**
 * Decoded strings by their encoded bytes (Huffman or raw), direct-mapped on a hash of those bytes. A server
 * that does not use the dynamic table for a field sends the same Huffman bytes with every response
 * (nginx 1.22: `server`, `date`, `content-type`, `last-modified`, `etag`, `accept-ranges` as literals
 * with indexing, 108 bytes a response), and decoding them bit by bit was the largest item of h2lab's
 * own code in a profile against it. A hit compares the bytes, so a collision costs one
 * decode, never a wrong string; a hit allocates nothing.
 */
class HuffmanCache {
  private readonly bytes: Array<Uint8Array | undefined> = new Array(HUFFMAN_CACHE_SLOTS).fill(undefined);
  private readonly huffman: boolean[] = new Array(HUFFMAN_CACHE_SLOTS).fill(false);
  private readonly strings: string[] = new Array(HUFFMAN_CACHE_SLOTS).fill('');

  /** The string encoded at [start, end), Huffman-coded when `huff` (RFC 7541 §5.2). */
  decode(buf: Uint8Array, start: number, end: number, huff: boolean): string {
    const len = end - start;
    if (len > HUFFMAN_CACHE_MAX_BYTES) return decodeString(buf, start, end, huff);
    // FNV-1a over the encoded bytes.
    let h = huff ? 0x811c9dc5 : 0x050c5d1f;
    for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    const slot = (h ^ (h >>> 16)) & (HUFFMAN_CACHE_SLOTS - 1);
    const seen = this.bytes[slot];
    if (seen !== undefined && seen.length === len && this.huffman[slot] === huff) {
      let i = 0;
      while (i < len && seen[i] === buf[start + i]) i++;
      if (i === len) return this.strings[slot]!;
    }
    const s = decodeString(buf, start, end, huff);
    // A copy (Uint8Array's slice; Buffer's is a view that would keep the whole read chunk alive).
    this.bytes[slot] = Uint8Array.prototype.slice.call(buf, start, end);
    this.huffman[slot] = huff;
    this.strings[slot] = s;
    return s;
  }
}

function decodeString(buf: Uint8Array, start: number, end: number, huff: boolean): string {
  if (huff) return huffmanDecode(buf, start, end);
  return Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString('latin1');
}
