/**
 * Deterministic response bodies, computed once at start so the hot path only slices buffers.
 *
 * - `/bytes/:n`: text-like bytes (a seeded 64-symbol alphabet, so gzip has something to do, about
 *   6 bits per byte) built from one 64 KiB block repeated; bodies up to that size are zero-copy slices.
 * - `/chunks/:i`: incompressible bytes (seeded random), sizes drawn per chunk from a seeded uniform
 *   distribution; a chunk is a slice of one random block at a per-chunk offset.
 * - `/tiles`: a fixed random body of the configured size.
 */
import { gzipSync } from 'node:zlib';
import { createRng } from '../core/index.ts';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n.,';
/** Size of the precomputed text block; larger bodies repeat it. */
export const TEXT_BLOCK_BYTES = 64 * 1024;

/** The `/bytes` body source. */
export class TextBytes {
  readonly block: Buffer;
  private gzipCache = new Map<number, Buffer>();
  constructor(seed: number) {
    const rng = createRng(seed ^ 0x6279746573);
    this.block = Buffer.alloc(TEXT_BLOCK_BYTES);
    for (let i = 0; i < TEXT_BLOCK_BYTES; i++)
      this.block[i] = ALPHABET.charCodeAt(Math.floor(rng.next() * 64));
  }

  /** The body of `/bytes/n` when n ≤ {@link TEXT_BLOCK_BYTES} (a view, no copy). */
  small(n: number): Buffer {
    return this.block.subarray(0, n);
  }

  /** Yields the body of `/bytes/n` in blocks, for any n. */
  *blocks(n: number): Generator<Buffer> {
    let left = n;
    while (left > 0) {
      const k = Math.min(left, TEXT_BLOCK_BYTES);
      yield this.block.subarray(0, k);
      left -= k;
    }
  }

  /** Gzipped body of `/bytes/n` for n ≤ 1 MiB, cached (at most 64 sizes). */
  gzipped(n: number): Buffer | undefined {
    if (n > 1024 * 1024) return undefined;
    let z = this.gzipCache.get(n);
    if (!z) {
      z = gzipSync(Buffer.concat([...this.blocks(n)]));
      if (this.gzipCache.size >= 64) this.gzipCache.clear();
      this.gzipCache.set(n, z);
    }
    return z;
  }
}

/** The `/chunks` dataset: `count` chunks with sizes uniform in [minBytes, maxBytes]. */
export class ChunkSet {
  readonly sizes: Uint32Array;
  private readonly offsets: Uint32Array;
  private readonly random: Buffer;
  constructor(seed: number, count: number, minBytes: number, maxBytes: number) {
    const lo = Math.min(minBytes, maxBytes);
    const hi = Math.max(minBytes, maxBytes);
    const rng = createRng(seed ^ 0x63686e6b);
    this.random = randomBuffer(createRng(seed ^ 0x72616e64), hi * 2 + 4096);
    this.sizes = new Uint32Array(count);
    this.offsets = new Uint32Array(count);
    for (let i = 0; i < count; i++) {
      this.sizes[i] = rng.int(lo, hi);
      this.offsets[i] = rng.int(0, this.random.length - this.sizes[i]!);
    }
  }
  get count(): number {
    return this.sizes.length;
  }
  /** The body of chunk i (a view, no copy); undefined when out of range. */
  chunk(i: number): Buffer | undefined {
    if (!(i >= 0 && i < this.sizes.length)) return undefined;
    return this.random.subarray(this.offsets[i]!, this.offsets[i]! + this.sizes[i]!);
  }
}

/** `n` seeded random bytes. */
export function randomBuffer(rng: ReturnType<typeof createRng>, n: number): Buffer {
  const b = Buffer.alloc(n);
  let i = 0;
  for (; i + 4 <= n; i += 4) b.writeUInt32LE(Math.floor(rng.next() * 4294967296), i);
  for (; i < n; i++) b[i] = Math.floor(rng.next() * 256);
  return b;
}

/** FNV-1a of a tile's coordinates and the seed → [0, 1): the same tile is always heavy or light. */
export function tileUniform(seed: number, z: number, x: number, y: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (const v of [z, x, y]) {
    h = Math.imul(h ^ (v & 0xffff), 0x01000193);
    h = Math.imul(h ^ (v >>> 16), 0x01000193);
  }
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return (h >>> 0) / 4294967296;
}
