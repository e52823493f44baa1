/**
 * A shard's result on its way out of a pod: stdout lines that survive a log pipeline, and a digest
 * small enough for a Kubernetes termination message (the kubelet keeps at most 4096 bytes of it).
 *
 *   ShardResult ─JSON─gzip─base64─▶ payload ─cut─▶ "h2lab-shard <run> <index> <seq>/<n> <sha16> <piece>"
 *                                      └─ sha256, length, counts ─▶ digest (termination message)
 *
 * Lines stay well under 16 KiB: container runtimes split longer log lines (CRI-O and containerd at
 * 16 KiB), and a split line would reach the collector as two. Each line carries the checksum of its
 * piece, so a damaged line is named; the digest's sha256 over the whole payload catches a missing or
 * reordered piece and a log that holds another run's output.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { H2labError } from '../core/index.ts';
import {
  type AnyShardResult,
  anyShardResultSchema,
  type ShardDigest,
  shardDigestSchema,
} from '../model/index.ts';

/** The first word of every chunk line. */
const CHUNK_PREFIX = 'h2lab-shard';
/** Characters of payload per line; with its header a line stays under 12.2 KiB. */
export const CHUNK_PAYLOAD_CHARS = 12_000;
/** What a local runner's child writes on stderr once loaded, before it reads its plan on stdin. */
export const READY_LINE = 'h2lab-shard-ready';
/** The kubelet's limit on a termination message, bytes. */
export const DIGEST_MAX_BYTES = 4096;

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** A shard result as chunk lines (without newlines) and its digest. */
export function encodeShardOutput(r: AnyShardResult): { lines: string[]; digest: ShardDigest } {
  const results = r.kind === 'h2lab.shard' ? [r.result] : r.runs.map((x) => x.result);
  const error = r.kind === 'h2lab.shard' ? r.result.error?.code : r.stopped?.code;
  const payload = gzipSync(JSON.stringify(r)).toString('base64');
  const n = Math.max(1, Math.ceil(payload.length / CHUNK_PAYLOAD_CHARS));
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const piece = payload.slice(i * CHUNK_PAYLOAD_CHARS, (i + 1) * CHUNK_PAYLOAD_CHARS);
    lines.push(`${CHUNK_PREFIX} ${r.runId} ${r.index} ${i + 1}/${n} ${sha256(piece).slice(0, 16)} ${piece}`);
  }
  const digest: ShardDigest = {
    kind: 'h2lab.shard-digest',
    runId: r.runId,
    planHash: r.planHash,
    index: r.index,
    chunks: n,
    bytes: payload.length,
    sha256: sha256(payload),
    total: results.reduce((n, x) => n + x.counts.total, 0),
    failed: results.reduce((n, x) => n + x.counts.failed, 0),
    ...(error ? { error } : {}),
  };
  return { lines, digest };
}

interface Pieces {
  n: number;
  pieces: Map<number, string>;
}

/**
 * Gathers the chunk lines and digests of one run, from any number of sources (pod logs, files), and
 * hands back the shards' results once every one is complete and checked; otherwise it names every
 * shard that is missing, duplicated or damaged.
 */
export class ShardCollector {
  private readonly runId: string;
  private readonly shards: number;
  private readonly chunks = new Map<number, Pieces>();
  private readonly digests = new Map<number, ShardDigest>();
  private readonly duplicate: string[] = [];
  private readonly corrupt: string[] = [];

  /** `runId` and `shards`: the plan's; lines of other runs are ignored. */
  constructor(runId: string, shards: number) {
    this.runId = runId;
    this.shards = shards;
  }

  /** Feeds one line; true when it was a chunk of this run. Anything else (log noise) is ignored. */
  addLine(line: string): boolean {
    const l = line.replace(/\r?\n$/, '');
    if (!l.startsWith(`${CHUNK_PREFIX} `)) return false;
    const m = /^h2lab-shard (\S+) (\d+) (\d+)\/(\d+) ([0-9a-f]{16}) (\S*)$/.exec(l);
    if (!m) {
      this.corrupt.push(`a chunk line is malformed (${l.slice(0, 60)}…)`);
      return false;
    }
    if (m[1] !== this.runId) return false;
    const index = Number(m[2]);
    const seq = Number(m[3]);
    const n = Number(m[4]);
    const piece = m[6]!;
    if (index >= this.shards) {
      this.corrupt.push(`shard ${index}: not a shard of this plan (0 to ${this.shards - 1})`);
      return true;
    }
    if (sha256(piece).slice(0, 16) !== m[5]) {
      this.corrupt.push(`shard ${index}: chunk ${seq}/${n} does not match its checksum`);
      return true;
    }
    const got = this.chunks.get(index) ?? { n, pieces: new Map<number, string>() };
    this.chunks.set(index, got);
    if (got.n !== n) {
      this.duplicate.push(`shard ${index}: chunks of two outputs (${got.n} and ${n} chunks)`);
      return true;
    }
    if (got.pieces.has(seq)) {
      this.duplicate.push(`shard ${index}: chunk ${seq}/${n} came twice`);
      return true;
    }
    got.pieces.set(seq, piece);
    return true;
  }

  /** Feeds every line of a text (a pod's log). */
  addText(text: string): void {
    for (const line of text.split('\n')) this.addLine(line);
  }

  /** Feeds a digest: a termination message (JSON text) or the parsed object. */
  addDigest(d: string | unknown, source = 'a termination message'): void {
    let v: unknown = d;
    if (typeof d === 'string') {
      try {
        v = JSON.parse(d);
      } catch {
        this.corrupt.push(`${source} is not a digest (not JSON)`);
        return;
      }
    }
    const r = shardDigestSchema.safeParse(v);
    if (!r.success) {
      this.corrupt.push(`${source} is not a shard digest`);
      return;
    }
    const dg = r.data;
    if (dg.runId !== this.runId) return;
    if (this.digests.has(dg.index)) {
      this.duplicate.push(`shard ${dg.index}: two digests`);
      return;
    }
    this.digests.set(dg.index, dg);
  }

  /**
   * The results, by index. Throws H2LAB_ERR_SHARD_MISSING, H2LAB_ERR_SHARD_DUPLICATE or
   * H2LAB_ERR_SHARD_CORRUPT (in that order of precedence) naming every problem found.
   */
  results(): AnyShardResult[] {
    const missing: number[] = [];
    const corrupt = [...this.corrupt];
    const out: AnyShardResult[] = [];
    for (let i = 0; i < this.shards; i++) {
      const c = this.chunks.get(i);
      const d = this.digests.get(i);
      if (!c && !d) {
        missing.push(i);
        continue;
      }
      if (!d) {
        corrupt.push(`shard ${i}: no digest (its termination message) to check its ${c!.n} chunks against`);
        continue;
      }
      if (!c) {
        corrupt.push(`shard ${i}: its digest names ${d.chunks} chunks and none reached the collector`);
        continue;
      }
      const absent = Array.from({ length: c.n }, (_, k) => k + 1).filter((k) => !c.pieces.has(k));
      if (absent.length > 0) {
        corrupt.push(
          `shard ${i}: chunk${absent.length > 1 ? 's' : ''} ${absent.join(', ')} of ${c.n} missing`,
        );
        continue;
      }
      const payload = Array.from({ length: c.n }, (_, k) => c.pieces.get(k + 1)!).join('');
      if (c.n !== d.chunks || payload.length !== d.bytes || sha256(payload) !== d.sha256) {
        corrupt.push(`shard ${i}: its chunks do not match its digest (another run's output, or reordered)`);
        continue;
      }
      let parsed: AnyShardResult;
      try {
        parsed = anyShardResultSchema.parse(
          JSON.parse(gunzipSync(Buffer.from(payload, 'base64')).toString('utf8')),
        );
      } catch (err) {
        corrupt.push(
          `shard ${i}: its payload is not a shard result (${(err as Error).message.slice(0, 120)})`,
        );
        continue;
      }
      if (parsed.index !== i || parsed.planHash !== d.planHash) {
        corrupt.push(
          `shard ${i}: its payload names shard ${parsed.index} of plan ${parsed.planHash.slice(0, 12)}…`,
        );
        continue;
      }
      out.push(parsed);
    }
    const named = (xs: string[]): string => xs.join('; ');
    if (missing.length > 0) {
      throw new H2labError(
        'H2LAB_ERR_SHARD_MISSING',
        `run ${this.runId}: shard${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of ${this.shards} missing (no chunk, no digest)${corrupt.length + this.duplicate.length > 0 ? `; also: ${named([...this.duplicate, ...corrupt])}` : ''}: collect their logs again or rerun the plan`,
        { runId: this.runId, missing, duplicate: this.duplicate, corrupt },
      );
    }
    if (this.duplicate.length > 0) {
      throw new H2labError(
        'H2LAB_ERR_SHARD_DUPLICATE',
        `run ${this.runId}: ${named(this.duplicate)}: give each shard's output once`,
        { runId: this.runId, duplicate: this.duplicate, corrupt },
      );
    }
    if (corrupt.length > 0) {
      throw new H2labError(
        'H2LAB_ERR_SHARD_CORRUPT',
        `run ${this.runId}: ${named(corrupt)}: collect the logs again without truncation (kubectl logs --tail=-1)`,
        { runId: this.runId, corrupt },
      );
    }
    return out;
  }
}
