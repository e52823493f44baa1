// The main job from a script: h1 against h2 against the embedded fixture server, the verdict, and the
// same runs judged again with a stricter smallest effect that counts.
import { reanalyze, render, runComparison } from 'h2lab';

const comparison = await runComparison({
  concurrency: [8],
  protocols: ['h1', 'h2'],
  runs: 3,
  durationMs: 300,
});
comparison.events.on('run-end', ({ done, total }) => console.error(`run ${done}/${total}`));
const result = await comparison.done;
console.log(render(result, 'text'));

const strict = reanalyze(result, { minEffect: 0.5 });
console.log(`with --min-effect 50%: ${strict.verdict?.workloads[0]?.headline}`);
for (const r of result.verdict?.recommendations ?? []) {
  console.log(`${r.client}: ${r.decision ?? '?'}${r.strategy ? ` ${r.strategy}` : ''}`);
}
