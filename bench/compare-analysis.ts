// What compare's own bookkeeping costs: analysis (bootstrap intervals for every comparison), the
// verdict, and each renderer, on the default matrix's shape (3 workloads × 3 concurrency × 3
// strategies × 5 runs) filled by the synthetic runner. These run after every run of a comparison
// (analysis + verdict) and after every finished cell (Markdown + HTML), so they must stay small
// against a 500 ms run.
// Usage: node --import tsx bench/compare-analysis.ts [repetitions=7]
import { analyze, keptRuns } from '../src/compare/analyze.ts';
import { compare } from '../src/compare/engine.ts';
import { bootstrapRatio } from '../src/compare/inference.ts';
import { syntheticRunner } from '../src/compare/synthetic.ts';
import { defaultFixtureWorkloads } from '../src/compare/workloads.ts';
import { medianInterpolated as median } from '../src/core/index.ts';
import { loadHtmlAssets } from '../src/report/assets.ts';
import { renderHtml } from '../src/report/render-html.ts';
import { renderMarkdown, renderTerminal } from '../src/report/render-text.ts';
import { buildVerdict } from '../src/report/verdict.ts';

const reps = Number(process.argv[2] ?? 7);
const result = await compare(
  { workloads: defaultFixtureWorkloads(), runs: 5 },
  {
    target: { url: 'https://127.0.0.1:8443/', embedded: true },
    runCell: syntheticRunner({
      h1: { latencyMs: 5, contention: 0.1, clientQueueShare: 0.5, serverQueueShare: 0.05 },
      h2: { latencyMs: 5, contention: 0.04, serverQueueShare: 0.5 },
      'h2-pool': { latencyMs: 5, contention: 0.03, serverQueueShare: 0.3 },
    }),
  },
).done;
const assets = loadHtmlAssets();
const cases: Array<[string, () => unknown]> = [
  [
    'bootstrapRatio × 54 (cold, 2000 resamples)',
    () => {
      const rps = result.cells.map((c) => keptRuns(c).map((r) => r.throughput.rps));
      for (let i = 0; i < 54; i++)
        bootstrapRatio(rps[i % rps.length]!, rps[(i + 1) % rps.length]!, { seed: i });
    },
  ],
  [
    'analyze after a run (intervals of unchanged groups cached)',
    () => analyze(result, { minEffect: 0.05, confidence: 0.95 }),
  ],
  ['buildVerdict', () => buildVerdict(result)],
  ['renderTerminal', () => renderTerminal(result)],
  ['renderMarkdown', () => renderMarkdown(result)],
  ['renderHtml (decodes and merges 108 histograms)', () => renderHtml(result, assets)],
  ['JSON.stringify(results.json)', () => JSON.stringify(result, null, 1)],
];
console.log(
  `cells ${result.cells.length}, runs ${result.cells.reduce((n, c) => n + c.runs.length, 0)}, comparisons ${result.comparisons.length}`,
);
console.log(
  `results.json ${(JSON.stringify(result, null, 1).length / 1024).toFixed(0)} KiB, report.html ${(renderHtml(result, assets).length / 1024).toFixed(0)} KiB`,
);
for (const [name, f] of cases) {
  f();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    f();
    times.push(performance.now() - t0);
  }
  console.log(
    `${name.padEnd(48)} median ${median(times).toFixed(1)} ms  (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)})`,
  );
}
