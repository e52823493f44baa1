/**
 * One finding per row of a field report's table: what the report measured, what this run measured,
 * whether they agree (within a stated tolerance) and the mechanism, with this run's numbers — or
 * "Not explained" said plainly. Every figure a sentence quotes is written through an {@link Evidence}
 * so it is recorded under a name beside the sentence; {@link unbackedNumbers} then finds any figure in
 * the words that no recorded field carries (a canned number, a stale constant), and each study's
 * `verify` checks the recorded fields against the tables and data of the same result.
 */
import type { StudyFinding, StudyResult } from '../model/index.ts';
import { agreement, type ClaimDecision, direction, ratio2 } from './claims.ts';

type EvidenceValue = number | string | boolean | null;

/** Formats a figure and records it under a name: the sentence and its evidence cannot drift apart. */
export class Evidence {
  readonly fields: Record<string, EvidenceValue> = {};

  /** Records any value (a setting, a word) without formatting it. */
  set(key: string, v: EvidenceValue): this {
    this.fields[key] = typeof v === 'number' && !Number.isFinite(v) ? null : v;
    return this;
  }

  /** A whole number, with thousands separators: `1,324`. */
  n(key: string, v: number): string {
    this.set(key, v);
    return Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '?';
  }

  /** Milliseconds: `1,324 ms` (below 10 ms with one decimal). */
  ms(key: string, v: number): string {
    this.set(key, v);
    if (!Number.isFinite(v)) return '? ms';
    return Math.abs(v) < 10 ? `${v.toFixed(1)} ms` : `${Math.round(v).toLocaleString('en-US')} ms`;
  }

  /** Seconds with two decimals: `1.36 s`. */
  s(key: string, seconds: number): string {
    this.set(key, seconds);
    return Number.isFinite(seconds) ? `${seconds.toFixed(2)} s` : '? s';
  }

  /** A plain number with two decimals: `1.00`. */
  d2(key: string, v: number): string {
    this.set(key, v);
    return Number.isFinite(v) ? v.toFixed(2) : '?';
  }

  /** A ratio with two decimals, rounded once as every table cell of it is (claims.ts): `0.61×`. */
  x(key: string, v: number): string {
    this.set(key, v);
    return Number.isFinite(v) ? `${ratio2(v).toFixed(2)}×` : '?×';
  }

  /** A fraction as a whole percentage: 0.273 → `27%`. */
  pct(key: string, fraction: number): string {
    this.set(key, fraction);
    return Number.isFinite(fraction) ? `${Math.round(fraction * 100)}%` : '?%';
  }

  /** A signed relative change of `measured` against `reference`: `+10%`, `−27%`. */
  change(key: string, measured: number, reference: number): string {
    const c = measured / reference - 1;
    this.set(key, c);
    if (!Number.isFinite(c)) return '?';
    const p = Math.round(c * 100);
    return p === 0 ? '±0%' : `${p > 0 ? '+' : '−'}${Math.abs(p)}%`;
  }
}

/** Input of {@link makeFinding}. */
interface FindingInput {
  id: string;
  section?: string;
  row: string;
  /** The report's figure in words (quote it through `ev`). */
  report: string;
  /** This run's figure in words, or why there is none (then `reference`/`value` are left out). */
  measured: string;
  /** The report's figure and this run's, for the verdict; undefined value → not measured. */
  reference?: number;
  value?: number;
  /** Relative difference still called agreement, as a fraction (default 0.15). */
  tolerance?: number;
  /**
   * The two figures are ratios (1: no difference): agreement then needs the same side of 1 and a
   * tolerance below the report's effect (claims.ts, `agreement`).
   */
  ratio?: boolean;
  /**
   * compare's decision over the runs behind `value` (a ratio), when there are runs: an "agrees" the
   * runs cannot back with a direction says it is a closeness of figures only.
   */
  decision?: ClaimDecision;
  /** The verdict when the row is a claim, not a figure (no reference/value to compare). */
  verdict?: StudyFinding['verdict'];
  /** Builds the explanation once the verdict is known. Return undefined for "not explained". */
  explain: (verdict: StudyFinding['verdict']) => string | undefined;
  /** What the run cannot tell, when `explain` returns undefined. */
  unexplained?: string;
  ev: Evidence;
}

/** Builds a finding: the verdict from the two figures and the tolerance, the difference in words. */
export function makeFinding(i: FindingInput): StudyFinding {
  const tol = i.tolerance ?? 0.15;
  let verdict: StudyFinding['verdict'] = i.verdict ?? 'not-measured';
  let difference: string | undefined;
  if (i.reference !== undefined && i.value !== undefined && Number.isFinite(i.value)) {
    const a = i.ratio
      ? agreement(i.reference, i.value, tol)
      : {
          verdict: Math.abs(i.value / i.reference - 1) <= tol ? ('agrees' as const) : ('differs' as const),
          tolerance: tol,
        };
    i.ev.set('tolerance', a.tolerance);
    verdict = a.verdict;
    const against =
      'sameDirection' in a && a.sameDirection === false ? ', the other side of 1 from the report' : '';
    const figuresOnly =
      verdict === 'agrees' && i.ratio && i.decision && direction(i.decision) === 'undecided'
        ? '; figures only: the runs decide no direction'
        : '';
    difference = `${i.ev.change('change', i.value, i.reference)} against the report (tolerance ±${Math.round(a.tolerance * 100)}%${against}${figuresOnly})`;
  }
  const text = i.explain(verdict);
  return {
    id: i.id,
    ...(i.section ? { section: i.section } : {}),
    row: i.row,
    report: i.report,
    measured: i.measured,
    verdict,
    ...(difference ? { difference } : {}),
    explanation: text ?? `Not explained: ${i.unexplained ?? 'this run’s measurements do not tell why'}.`,
    explained: text !== undefined,
    evidence: i.ev.fields,
  };
}

/** What every finding of one report row starts from: which row, the report's figure, the evidence. */
type FindingBase = Pick<FindingInput, 'id' | 'section' | 'row' | 'report' | 'ev'>;

/**
 * The finding of a report row this run has no figure for: `measured` says why ("not measured: …"),
 * `unexplained` what the run lacks (default: its measurements do not tell why).
 */
export function notMeasured(base: FindingBase, measured: string, unexplained?: string): StudyFinding {
  return makeFinding({
    ...base,
    measured,
    explain: () => undefined,
    ...(unexplained !== undefined ? { unexplained } : {}),
  });
}

const NUMBER = /(?<![\w/.\-#])[+−-]?\d[\d,]*(?:\.\d+)?(?![\w/])/g;

/** The renderings of a recorded number a sentence may show. */
function renderings(v: number): Set<string> {
  const out = new Set<string>();
  for (const x of [v, v * 100, (v - 1) * 100, -v, -v * 100, (1 - v) * 100]) {
    if (!Number.isFinite(x)) continue;
    for (const d of [0, 1, 2]) {
      const f = x.toFixed(d);
      out.add(f);
      out.add(Number(f).toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));
    }
    out.add(Math.round(x).toLocaleString('en-US'));
  }
  return out;
}

/**
 * Figures in a finding's words that no evidence field carries (a number written into the text by hand,
 * or computed and not recorded). Identifiers such as HTTP/1.1, h2 or report 000 are not figures.
 */
function unbackedNumbers(f: StudyFinding): string[] {
  const shown = new Set<string>();
  for (const v of Object.values(f.evidence))
    if (typeof v === 'number') for (const r of renderings(v)) shown.add(r);
  const text = [f.report, f.measured, f.difference ?? '', f.explanation].join(' \n ');
  const bad: string[] = [];
  for (const m of text.matchAll(NUMBER)) {
    const tok = m[0].replace(/^[+−-]/, '');
    if (/^0+$/.test(tok) && /report 0/.test(text.slice(Math.max(0, m.index - 8), m.index + 4))) continue;
    if (!shown.has(tok) && !shown.has(tok.replace(/,/g, ''))) bad.push(tok);
  }
  return bad;
}

/** The number a finding recorded under `key`, or undefined. */
export function evidenceNumber(f: StudyFinding | undefined, key: string): number | undefined {
  const v = f?.evidence[key];
  return typeof v === 'number' ? v : undefined;
}

/** Every problem of every finding of a result that the generic checks find (the studies add theirs). */
export function checkFindings(r: StudyResult): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const f of r.findings) {
    if (ids.has(f.id)) problems.push(`${f.id}: the id is used twice`);
    ids.add(f.id);
    const bad = unbackedNumbers(f);
    if (bad.length) problems.push(`${f.id}: figures in the words with no evidence field: ${bad.join(', ')}`);
    if (!f.explained && !f.explanation.startsWith('Not explained'))
      problems.push(`${f.id}: unexplained but does not say so`);
    if (f.verdict === 'not-measured' && f.difference)
      problems.push(`${f.id}: not measured, yet a difference is given`);
    if (f.section && !r.sections.some((s) => s.id === f.section))
      problems.push(`${f.id}: refers to section ${f.section}, which the result does not have`);
    problems.push(...checkAgreement(f));
  }
  return problems;
}

/**
 * An "agrees" that its own figures contradict: a change outside the tolerance, a ratio on the other
 * side of 1 from the report's, or a tolerance as wide as the report's effect (claims.ts).
 */
function checkAgreement(f: StudyFinding): string[] {
  if (f.verdict !== 'agrees') return [];
  const problems: string[] = [];
  const tol = evidenceNumber(f, 'tolerance');
  const change = evidenceNumber(f, 'change');
  if (tol !== undefined && change !== undefined && Math.abs(change) > tol + 1e-9)
    problems.push(`${f.id}: agrees, yet ${change.toFixed(3)} is outside its tolerance ±${tol}`);
  const ref = evidenceNumber(f, 'reportRatio');
  const value = evidenceNumber(f, 'ratio');
  if (ref !== undefined && value !== undefined && Math.abs(ref - 1) >= 0.05) {
    if (value > 1 !== ref > 1)
      problems.push(`${f.id}: agrees, yet ${value} is on the other side of 1 from the report's ${ref}`);
    if (tol !== undefined && tol >= Math.abs(ref - 1))
      problems.push(`${f.id}: agrees within ±${tol}, as wide as the report's effect (${ref})`);
  }
  return problems;
}
