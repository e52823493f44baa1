/**
 * How long a timed run must be for the link it crosses. A run shorter than a few round trips measures
 * its handshakes and slow start, not the protocol: at 200 ms a 500 ms run is 2.5 round trips, and
 * one connection's TCP + TLS handshakes (2 round trips) and the slow start to a 10 Mbit/s × 200 ms
 * window (from 10 segments to 170, about 5 more) are the whole of it.
 *
 * - {@link MIN_RUN_ROUND_TRIPS} (20): the handshakes and slow start then take at most about a third
 *   of the run, and one retransmission timeout (≥ 1 round trip, 200 ms minimum on Linux) moves the
 *   run's throughput by a few percent rather than by half.
 * - {@link MIN_RUN_REQUESTS} (30): a run's median is read from at least 30 completions (its 95%
 *   interval then spans about the 32nd to the 68th percentile); with 11, as such a run measured,
 *   one request's retransmission moves the run's p50.
 *
 * compare lengthens timed runs over a link to both by default ({@link lengthenedDurationMs}); a cell
 * whose kept runs fall short anyway (the user's --duration or --requests) is undecided, with a
 * warning naming the fix ({@link runShortfall}). Here rather than in src/compare because the answer
 * words the same shortfall the analysis decides on, and src/compare already builds on src/report.
 */
import { formatMs } from '../core/index.ts';
import type { RunResult } from '../model/index.ts';

/** Fewest round trips of the link a timed run lasts for its comparison to decide anything. */
export const MIN_RUN_ROUND_TRIPS = 20;

/** Fewest completed requests a timed run measures for its comparison to decide anything. */
export const MIN_RUN_REQUESTS = 30;

/** Round trips a new connection spends before its first request is answered (TCP, TLS 1.3, request). */
const HANDSHAKE_ROUND_TRIPS = 3;

/**
 * Round trips one request takes in a closed loop, for the planning: its own plus its response's
 * transfer. Measured through 200 ms at c=1 with 10 KiB: 27–28 requests in 6.6 s, 240 ms each.
 */
const REQUEST_ROUND_TRIPS = 1.5;

/**
 * The duration a timed run over a link of `rttMs` gets: at least {@link MIN_RUN_ROUND_TRIPS} round
 * trips, and long enough for {@link MIN_RUN_REQUESTS} requests at 1.5 round trips each over
 * `concurrency` in flight after the handshakes (an open-loop cell's level is its rate: `rateRps`).
 * Never shorter than `durationMs`.
 *
 * @example lengthenedDurationMs(500, 200, { concurrency: 8 }) // 4000: 20 round trips
 * @example lengthenedDurationMs(500, 200, { concurrency: 1 }) // 9600: 30 requests one at a time + 3
 */
export function lengthenedDurationMs(
  durationMs: number,
  rttMs: number,
  level: { concurrency?: number; rateRps?: number },
): number {
  if (!(rttMs > 0)) return durationMs;
  const byRequests = level.rateRps
    ? (MIN_RUN_REQUESTS / level.rateRps) * 1000
    : (Math.ceil((REQUEST_ROUND_TRIPS * MIN_RUN_REQUESTS) / Math.max(1, level.concurrency ?? 1)) +
        HANDSHAKE_ROUND_TRIPS) *
      rttMs;
  return Math.max(durationMs, MIN_RUN_ROUND_TRIPS * rttMs, Math.ceil(byRequests));
}

/** The round trip a run crossed: its link's, plus the path's own to a server h2lab did not start. */
export function runRttMs(run: RunResult): number {
  return (run.environment.link?.rttMs ?? 0) + (run.environment.path?.baseRttMs ?? 0);
}

/**
 * Why a timed run is too short for its link to decide a comparison, or undefined when it is long
 * enough (or is a burst, whose length is its N): fewer than {@link MIN_RUN_REQUESTS} completed
 * requests, or fewer than {@link MIN_RUN_ROUND_TRIPS} round trips.
 */
export function runShortfall(run: RunResult): string | undefined {
  if (run.burst !== undefined) return undefined;
  const rtt = runRttMs(run);
  const trips = rtt > 0 ? run.durationMs / rtt : Number.POSITIVE_INFINITY;
  const ok = run.counts.ok;
  if (ok >= MIN_RUN_REQUESTS && trips >= MIN_RUN_ROUND_TRIPS) return undefined;
  const len = rtt > 0 ? `, ${trips.toFixed(1)} round trips of ${formatMs(rtt)}` : '';
  return `${ok} request${ok === 1 ? '' : 's'} in ${formatMs(run.durationMs)}${len}`;
}

/**
 * The `--duration` that would give `run`'s cell runs long enough to decide: the length compare
 * plans for the link ({@link lengthenedDurationMs}), or longer where the run completed requests more
 * slowly than that plan assumes (1 MiB responses under loss take several round trips each) — enough
 * for {@link MIN_RUN_REQUESTS} at the run's own rate, with a tenth to spare. Undefined when the run
 * completed nothing to take a rate from and has no link to plan for.
 *
 * @example durationToDecide(run of 12 requests in 9,750 ms over 200 ms, 1) // 26,813: 30 at 1.23/s
 */
function durationToDecide(run: RunResult, concurrency: number): number | undefined {
  const planned = lengthenedDurationMs(0, runRttMs(run), { concurrency });
  const ok = run.counts.ok;
  const byRate = ok > 0 && run.durationMs > 0 ? Math.ceil((MIN_RUN_REQUESTS / ok) * run.durationMs * 1.1) : 0;
  const need = Math.max(planned, byRate);
  return need > 0 ? need : undefined;
}

/** "--duration 27s" for {@link durationToDecide}, or a plain request for longer runs. */
export function durationFix(run: RunResult, concurrency: number): string {
  const need = durationToDecide(run, concurrency);
  return need !== undefined ? `--duration ${Math.ceil(need / 1000)}s` : '--duration or --requests larger';
}

/**
 * The warning of a cell whose kept runs are too short, naming the fix: a `--duration` long enough
 * for the link and the rate the run measured. Leaving --duration and --requests unset is offered
 * only where the run was shorter than compare would have made it by itself.
 */
export function shortRunsWarning(
  who: string,
  shortfall: string,
  run: RunResult,
  concurrency: number,
): string {
  const planned = lengthenedDurationMs(0, runRttMs(run), { concurrency });
  const unset =
    run.durationMs < planned * 0.95
      ? ', or leave --duration and --requests unset and compare lengthens runs over long links'
      : '';
  return `${who}: runs too short to decide (${shortfall}; a run needs ${MIN_RUN_REQUESTS} requests and ${MIN_RUN_ROUND_TRIPS} round trips of its link): undecided; use ${durationFix(run, concurrency)}${unset}`;
}
