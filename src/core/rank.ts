/**
 * What the exact Mann–Whitney rank test can show with few runs: shared by the statistics
 * (src/compare/inference.ts) and the verdict's wording (src/report/verdict.ts), which must agree.
 */

/** C(n, k) as a float (exact for the small n used here). */
function choose(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/**
 * The fewest runs per side for which the exact two-sided Mann–Whitney test can reach p < alpha at all
 * (every run of one side beyond every run of the other gives p = 2 / C(2n, n)): 4 for alpha 0.05
 * (p = 0.029); with 3 runs a side the best possible p is 0.10.
 *
 * @example minRunsForRankTest(0.05) // 4
 */
export function minRunsForRankTest(alpha: number): number {
  let n = 2;
  while (2 / choose(2 * n, n) >= alpha && n < 50) n++;
  return n;
}
