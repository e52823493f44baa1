/**
 * Re-analysis of a saved comparison: the statistics, the comparisons against the baseline and the
 * verdict computed again from the runs a results file holds — what `h2lab report results.json` does,
 * for a script that wants the numbers under another smallest effect.
 */
import type { CompareResult } from '../model/index.ts';
import { buildVerdict } from '../report/index.ts';
import { analyze } from './analyze.ts';
import { DEFAULT_MIN_EFFECT } from './inference.ts';

/** Options of {@link reanalyze}; each defaults to what the result was saved with. */
interface ReanalyzeOptions {
  /** Smallest relative difference called a difference (0.05 = 5 %). */
  minEffect?: number;
  /** Confidence of the bootstrap intervals (0.95 = 95 %). */
  confidence?: number;
}

/**
 * Recomputes `result`'s cell statistics, comparisons and verdict from its runs, and records the
 * `minEffect` used in its options. Returns a new result; the given one is not changed.
 *
 * @example
 * const saved = loadCompareResult('h2lab-report/results.json');
 * const strict = reanalyze(saved, { minEffect: 0.02 });
 * console.log(strict.verdict?.workloads[0]?.headline);
 */
export function reanalyze(result: CompareResult, options: ReanalyzeOptions = {}): CompareResult {
  const out = structuredClone(result);
  const minEffect = options.minEffect ?? Number(result.options.minEffect ?? DEFAULT_MIN_EFFECT);
  const confidence = options.confidence ?? Number(result.options.confidence ?? 0.95);
  analyze(out, { minEffect, confidence });
  out.options.minEffect = minEffect;
  out.verdict = buildVerdict(out);
  return out;
}
