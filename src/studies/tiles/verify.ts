/** The tiles study's self-check: its findings and words read back against the result's own data. */
import { medianNearestRank } from '../../core/index.ts';
import type { BrowserResult, StudyResult } from '../../model/index.ts';
import { direction, directionProblem } from '../claims.ts';
import { evidenceNumber } from '../findings.ts';
import { failedBurst } from './options.ts';
import { targetLabel } from './plan.ts';
import { burstDecision, cleanBursts, type SweepPoint, sweepStep } from './tables.ts';

/**
 * The contradictions a referee would look for, read from the result's own tables and data: a burst
 * row or ratio whose figures are not the clean bursts' medians, a sweep cell built on a burst with a
 * failed request, a conclusion about ignoring cancellation from legs that abandoned different amounts
 * of work, a pool-size answer its own walls contradict.
 */
export function verifyTiles(r: StudyResult): string[] {
  const problems: string[] = [];
  // A sweep paragraph that calls a step "a doubling" on a grid whose steps are not.
  for (const [id, points] of Object.entries((r.data.sweep ?? {}) as Record<string, SweepPoint[]>)) {
    const p = r.explanation.find((x) => x.startsWith(`On ${id}, from `));
    const pools = points.map((x) => x.pool);
    if (p && /a doubling/.test(p) && pools.some((x, k) => k > 0 && x !== 2 * pools[k - 1]!))
      problems.push(`sweep ${id}: "a doubling" on a grid of ${pools.join(', ')} workers`);
    if (p) problems.push(...sweepWordsProblems(id, p, points));
  }
  const f = (id: string) => r.findings.find((x) => x.id === id);
  const burst = (r.data.burst ?? {}) as Record<string, BrowserResult>;
  // Which target was faster, in the paragraphs and the ratio row, against compare's decision.
  for (const [env, b] of Object.entries(burst)) {
    const d = burstDecision(
      cleanBursts(
        b.burst,
        b.targets.map((t) => t.id),
      ),
    );
    if (!d) continue;
    const p = r.explanation.find((x) => x.startsWith(`On ${env}, over http://`));
    const said = p?.match(/over h2 \((h2 \d+% faster|HTTP\/1\.1 \d+% faster|the same|neither decided)/)?.[1];
    if (p && !said) problems.push(`burst ${env}: the paragraph does not word the runs' decision`);
    if (said) {
      const q = directionProblem(
        `burst ${env} paragraph`,
        said.startsWith('h2')
          ? 'above'
          : said.startsWith('HTTP')
            ? 'below'
            : said === 'the same'
              ? 'same'
              : 'undecided',
        d,
      );
      if (q) problems.push(q);
    }
    const tls = burstDecision(
      cleanBursts(
        b.burst,
        b.targets.map((t) => t.id),
      ),
      'http',
      'https-h1',
    );
    const tlsSaid = p?.match(/the runs (decided it the same|do not decide|decided it apart)/)?.[1];
    if (tls && tlsSaid) {
      const q = directionProblem(
        `burst ${env}, TLS alone`,
        tlsSaid === 'decided it the same'
          ? 'same'
          : tlsSaid === 'do not decide'
            ? 'undecided'
            : direction(tls) === 'same' || direction(tls) === 'undecided'
              ? 'above'
              : direction(tls),
        tls,
      );
      if (q) problems.push(q);
    }
    const row = f('burst-ratio');
    if (row?.section === `burst-${env}` && row.evidence.outcome !== d.outcome)
      problems.push(`burst-ratio: ${String(row.evidence.outcome)} said, the runs decided ${d.outcome}`);
  }
  const close = (a: number | undefined, b: number | undefined, tol = 1) =>
    a !== undefined && b !== undefined && Math.abs(a - b) <= tol;
  for (const [id, target] of [
    ['burst-h1', 'http'],
    ['burst-h2', 'https'],
  ] as const) {
    const x = f(id);
    if (!x || x.verdict === 'not-measured') continue;
    const env = x.section?.replace(/^burst-/, '') ?? '';
    const runs = burst[env]?.burst.runs.filter((b) => b.target === target && !b.discarded) ?? [];
    if (runs.length === 0) {
      problems.push(`${id}: no burst data for ${env}`);
      continue;
    }
    const clean = runs.filter((b) => !failedBurst(b)).map((b) => b.stats.wallMs);
    if (!close(evidenceNumber(x, 'wallMs'), clean.length ? medianNearestRank(clean) : undefined))
      problems.push(`${id}: wall ${evidenceNumber(x, 'wallMs')} ms is not the median of the clean bursts`);
    const repeated = (burst[env]?.burst.repeated ?? []).filter((b) => b.target === target && !b.discarded);
    const failed = runs.length - clean.length + repeated.length;
    if (evidenceNumber(x, 'excludedRuns') !== failed)
      problems.push(`${id}: ${evidenceNumber(x, 'excludedRuns')} runs said excluded, ${failed} had failures`);
    const row = r.sections
      .find((s) => s.id === x.section)
      ?.table.rows.find((q) => q.target === targetLabel(target));
    if (!close(evidenceNumber(x, 'wallMs'), typeof row?.wall === 'number' ? row.wall : undefined))
      problems.push(`${id}: the finding's wall is not the table's`);
  }
  const ratio = f('burst-ratio');
  if (ratio) {
    const w1 = evidenceNumber(f('burst-h1'), 'wallMs');
    const w2 = evidenceNumber(f('burst-h2'), 'wallMs');
    if (w1 === undefined || w2 === undefined || !close(evidenceNumber(ratio, 'ratio'), w1 / w2, 0.005))
      problems.push('burst-ratio: the ratio is not the two rows’ walls');
    if (ratio.explained && /Explained by/.test(ratio.explanation)) {
      const p = evidenceNumber(ratio, 'predictedRatio');
      const m = evidenceNumber(ratio, 'ratio');
      if (p === undefined || m === undefined || Math.abs(m / p - 1) > 0.15)
        problems.push('burst-ratio: explained by the floors, yet the floors predict another ratio');
    }
  }
  for (const [env, points] of Object.entries((r.data.sweep ?? {}) as Record<string, SweepPoint[]>))
    for (const p of points)
      for (const side of ['http', 'https'] as const) {
        const n = Object.values(p[side]?.failures ?? {}).reduce((a, b) => a + b, 0);
        if (n > 0)
          problems.push(`sweep ${env} pool ${p.pool} ${side}: printed from bursts with ${n} failed requests`);
      }
  const ig = f('cancel-ignore');
  if (ig && ig.verdict !== 'not-measured') {
    const a = evidenceNumber(ig, 'honourReachedPerRun');
    const b = evidenceNumber(ig, 'ignoreReachedPerRun');
    if (a === undefined || b === undefined || Math.min(a, b) < 10 || Math.max(a, b) / Math.min(a, b) > 1.5)
      problems.push(`cancel-ignore: a conclusion from legs that abandoned ${a} and ${b} tiles a run`);
  }
  const pool = f('pool-size');
  if (pool && pool.verdict !== 'not-measured') {
    const g = evidenceNumber(pool, 'gain');
    if (g === undefined) problems.push('pool-size: no gain recorded');
    const points = (r.data.sweep as Record<string, SweepPoint[]> | undefined)?.[
      pool.section?.replace(/^sweep-/, '') ?? ''
    ];
    const at = (k: string) => points?.find((x) => x.pool === evidenceNumber(pool, k));
    const base = at('basePool');
    const last = at('lastPool');
    const d = base && last ? sweepStep(base, last, 'https') : undefined;
    const side = d ? direction(d) : 'undecided';
    if (side === 'undecided')
      problems.push(`pool-size: verdict ${pool.verdict} where the runs decide no direction`);
    else if ((pool.verdict === 'differs') !== (side === 'below'))
      problems.push(`pool-size: verdict ${pool.verdict}, the runs decided ${side}`);
    if (g !== undefined && /stayed within/.test(pool.explanation) && Math.abs(g) > 0.1)
      problems.push(`pool-size: the wall 'stayed within' 10% but changed by ${Math.round(g * 100)}%`);
    if (r.data.model && (r.data.model as { render?: string }).render !== 'cpu')
      problems.push('pool-size: answered from a pool that does not burn CPU');
  }
  return problems;
}

/**
 * A sweep paragraph's "kept gaining" or "stopped gaining" for a target against compare's decision
 * over each step's bursts: none where a step has no runs, "kept" only where every step decided less
 * wall time.
 */
function sweepWordsProblems(env: string, p: string, points: SweepPoint[]): string[] {
  const out: string[] = [];
  const full = points.filter((x) => x.http && x.https);
  for (const [side, name] of [
    ['http', 'HTTP/1.1'],
    ['https', 'h2'],
  ] as const) {
    const said = p.includes(`${name} kept gaining`)
      ? 'kept'
      : p.includes(`${name} stopped gaining`)
        ? 'stopped'
        : undefined;
    if (!said) continue;
    const steps = full.slice(1).map((to, i) => ({ to, d: sweepStep(full[i]!, to, side) }));
    if (steps.some((x) => !x.d)) {
      out.push(`sweep ${env}: "${name} ${said} gaining" from one figure a pool size`);
      continue;
    }
    const off = steps.find((x) => direction(x.d!) !== 'below');
    if (said === 'kept' && off)
      out.push(
        `sweep ${env}: "${name} kept gaining", the runs decided ${direction(off.d!)} at ${off.to.pool} workers`,
      );
  }
  return out;
}
