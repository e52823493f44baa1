// The chunks study's slow-start sentence over hand-made rows: with both sides captured the rounds the
// capture shows decide it and are stated (every figure an evidence field), the arithmetic is quoted
// where it disagrees, and a capture that contradicts slow start stops the claim. The self-check then
// catches words that do not state the row's capture.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { StudyResult } from '../../src/model/index.ts';
import { chunksFindings, verifyChunks } from '../../src/studies/chunks/findings.ts';
import type { LinkCase } from '../../src/studies/chunks/plan.ts';
import { type ChunksRow, referenceSection, timeDecision } from '../../src/studies/chunks/rows.ts';
import { checkFindings } from '../../src/studies/findings.ts';

const link: LinkCase = { id: 'rtt150ms+cubic', rttMs: 150, loss: 0, cc: 'cubic' };
const MSS = 1448;
const K = 4;

/** One captured side: each connection's rounds of slow start (segments doubling from 10), then one that did not grow. */
function captured(rounds: number[]) {
  return {
    file: 'cap/run1.pcapng',
    connections: rounds.map((n) => ({
      slowStartRounds: n,
      roundCount: n + 6,
      slowStartEnd: 'no-growth' as const,
      segments: [...Array.from({ length: n }, (_, i) => 10 * 2 ** i), 10 * 2 ** (n - 1)],
    })),
  };
}

/**
 * A row at concurrency 4 on a 150 ms link where HTTP/1.1 took 1.0 s and HTTP/2 1.3 s: 150 segments per
 * HTTP/1.1 connection (4 rounds from IW 10 by the arithmetic) and 600 on HTTP/2's (6 rounds), so the
 * arithmetic's 2 more round trips, 300 ms, account for the 300 ms measured.
 */
function row(h1Rounds?: number[], h2Rounds?: number[]): ChunksRow {
  const h1Times = [1000, 1004, 996, 1002, 998, 1001];
  const h2Times = [1300, 1304, 1296, 1302, 1298, 1301];
  const side = (times: number[], connections: number, rounds?: number[]) => ({
    runs: times.length,
    times,
    seconds: [...times].sort((a, b) => a - b)[3]! / 1000,
    connections,
    bytesIn: 600 * MSS,
    mssBytes: MSS,
    initialCwnd: 10,
    linkRttMs: 150,
    drops: 0,
    ...(rounds ? { capture: captured(rounds) } : {}),
  });
  return {
    concurrency: 4,
    net: link.id,
    h1: side(h1Times, K, h1Rounds),
    h2: side(h2Times, 1, h2Rounds),
    pool: { runs: 0 },
    h2VsH1: timeDecision(link.id, 4, 'h2VsH1', h1Times, h2Times),
  };
}

const sweepC4 = (r: ChunksRow) => chunksFindings([{ link, rows: [r] }]).find((f) => f.id === 'sweep-c4')!;

/** The findings as a result the self-checks read. */
function resultOf(r: ChunksRow, findings = chunksFindings([{ link, rows: [r] }])): StudyResult {
  const perLink = [{ link, rows: [r] }];
  return {
    findings,
    data: { links: perLink },
    sections: [referenceSection(perLink, [4])],
    explanation: [],
  } as unknown as StudyResult;
}

describe('chunks: the slow-start sentence and the capture', () => {
  test('the decision and the arithmetic the rows are built for', () => {
    assert.equal(row().h2VsH1!.outcome, 'worse', 'HTTP/1.1 decided faster');
    const f = sweepC4(row());
    assert.match(
      f.explanation,
      /^Slow start: .* 2 more round trips of 150 ms, 300 ms against the measured 300 ms$/,
    );
    assert.doesNotMatch(f.explanation, /capture/);
  });

  test('a capture that agrees: its rounds stated, the arithmetic not repeated', () => {
    const r = row([4, 4, 4, 4], [6]);
    const f = sweepC4(r);
    assert.match(
      f.explanation,
      /^Slow start: HTTP\/1\.1's 4 connections start with 40 segments in the first round trip \(10 each\), HTTP\/2's one connection with 10; the capture of each side's representative run \(time-sequence graphs in report\.html\) shows HTTP\/1\.1's 4 connections 4 rounds of slow start each \(the next round did not grow\) and HTTP\/2's one connection 6 rounds of slow start \(10 to 320 segments a round; the next round did not grow\), as the arithmetic of the runs' bytes gives — 2 more round trips of 150 ms, 300 ms against the measured 300 ms$/,
    );
    assert.equal(f.evidence.http2CapturedRoundsHi, 6);
    assert.equal(f.evidence.capturedExtraMs, 300);
    assert.deepEqual(checkFindings(resultOf(r)), []);
    assert.deepEqual(verifyChunks(resultOf(r)), []);
  });

  test('a capture that disagrees with the arithmetic but still accounts: both stated', () => {
    const r = row([1, 2, 2, 1], [4]);
    const f = sweepC4(r);
    assert.match(
      f.explanation,
      /shows HTTP\/1\.1's 4 connections 1–2 rounds of slow start each \(the next round did not grow\) and HTTP\/2's one connection 4 rounds of slow start \(10 to 80 segments a round; the next round did not grow\), where the arithmetic of the runs' bytes gives at least 4 round trips for each HTTP\/1\.1 connection's 150 segments and 6 for HTTP\/2's 600 — 2 more round trips of 150 ms, 300 ms against the measured 300 ms$/,
    );
    assert.deepEqual(checkFindings(resultOf(r)), []);
    assert.deepEqual(verifyChunks(resultOf(r)), []);
  });

  test('a capture that contradicts slow start: no claim, and the words say why', () => {
    const r = row([3, 3, 3, 3], [3]);
    const f = sweepC4(r);
    assert.equal(f.explained, false);
    assert.doesNotMatch(f.explanation, /^Slow start/);
    assert.match(
      f.explanation,
      /nor does slow start, though the arithmetic of the runs' bytes gives at least 4 round trips for each HTTP\/1\.1 connection's 150 segments and 6 for HTTP\/2's 600 \(2 more round trips, 300 ms against the measured 300 ms\): the capture of each side's representative run \(time-sequence graphs in report\.html\) shows HTTP\/1\.1's 4 connections 3 rounds of slow start each \(the next round did not grow\) and HTTP\/2's one connection 3 rounds of slow start \(10 to 40 segments a round; the next round did not grow\), 0 more on HTTP\/2\.$/,
    );
    assert.deepEqual(checkFindings(resultOf(r)), []);
    assert.deepEqual(verifyChunks(resultOf(r)), []);
  });

  test('one extra captured round (150 ms) does not account for 300 ms: no claim', () => {
    const f = sweepC4(row([3, 3, 3, 3], [4]));
    assert.doesNotMatch(f.explanation, /^Slow start/);
    assert.match(f.explanation, /1 more on HTTP\/2\.$/);
  });

  test("a first round below the initial window is not the window's growth", () => {
    // HTTP/2's first round: the server's SETTINGS and session tickets, 1 segment, before any
    // response. Counted, its 5 rounds less HTTP/1.1's 3 would claim 300 ms of slow start for the
    // 300 ms measured; the window grew over 4, one more than HTTP/1.1's: no claim.
    const r = row([3, 3, 3, 3]);
    r.h2.capture = {
      file: 'cap/run1.pcapng',
      connections: [
        { slowStartRounds: 5, roundCount: 9, slowStartEnd: 'no-growth', segments: [1, 10, 20, 40, 80, 70] },
      ],
    };
    const f = sweepC4(r);
    assert.doesNotMatch(f.explanation, /^Slow start/);
    assert.match(
      f.explanation,
      /HTTP\/2's one connection 5 rounds of slow start \(1 to 80 segments a round, the first below the initial window, so 4 of the window's growth; the next round did not grow\), 1 more on HTTP\/2\.$/,
    );
    assert.equal(f.evidence.http2WindowRounds, 4);
    assert.deepEqual(checkFindings(resultOf(r)), []);
    assert.deepEqual(verifyChunks(resultOf(r)), []);
    // HTTP/1.1 at 2 rounds: the window's 2 more rounds on HTTP/2 account for it.
    r.h1.capture = captured([2, 2, 2, 2]);
    assert.match(
      sweepC4(r).explanation,
      /^Slow start: .* — 2 more round trips of 150 ms, 300 ms against the measured 300 ms$/,
    );
    assert.deepEqual(verifyChunks(resultOf(r)), []);
  });

  test('another mechanism keeps its words, and the captured rounds follow them', () => {
    const r = row([2, 2, 2, 2], [4]);
    // HTTP/2 decided faster, both windows read: the "kept up" sentence.
    [r.h1.times, r.h2.times] = [r.h2.times!, r.h1.times!];
    [r.h1.seconds, r.h2.seconds] = [r.h2.seconds, r.h1.seconds];
    Object.assign(r.h1, { cwndSum: 120 });
    Object.assign(r.h2, { cwndSum: 100 });
    r.h2VsH1 = timeDecision(link.id, 4, 'h2VsH1', r.h1.times!, r.h2.times!);
    const f = sweepC4(r);
    assert.match(
      f.explanation,
      /^HTTP\/2 kept up: .*unlike the report's path\. The capture of each side's representative run \(time-sequence graphs in report\.html\) shows HTTP\/1\.1's 4 connections 2 rounds of slow start each \(the next round did not grow\) and HTTP\/2's one connection 4 rounds of slow start \(10 to 80 segments a round; the next round did not grow\)$/,
    );
    assert.deepEqual(checkFindings(resultOf(r)), []);
    assert.deepEqual(verifyChunks(resultOf(r)), []);
  });

  test('the self-check catches rounds the row’s capture does not show, and a claim it contradicts', () => {
    const r = row([4, 4, 4, 4], [6]);
    const findings = chunksFindings([{ link, rows: [r] }]);
    const f = findings.find((x) => x.id === 'sweep-c4')!;
    f.evidence.http2CapturedRoundsLo = 5;
    f.evidence.http2CapturedRoundsHi = 5;
    f.evidence.capturedExtraRounds = 1;
    assert.deepEqual(verifyChunks(resultOf(r, findings)), [
      'sweep-c4: the words give HTTP/2 5–5 captured rounds of slow start, its capture 6–6',
      'sweep-c4: slow start named with 1 extra rounds, the capture shows 2',
    ]);
  });
});
