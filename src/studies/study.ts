/**
 * The study harness. A study (one folder each in this folder) reruns one field report with h2lab's own
 * pieces — comparisons, browser sessions, probes, the fixture server, links — and has no engine logic
 * of its own. The harness gives it a {@link StudyContext}: units of work ("cells") with progress and an
 * ETA, tables beside the report's numbers, the explanation, and a result that is valid JSON after every
 * cell, so a failed or interrupted study still leaves what it measured.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { H2labError, hostFacts, isH2labError } from '../core/index.ts';
import type { CaptureRequest } from '../load/index.ts';
import {
  type CompareResult,
  STUDY_RESULT_VERSION,
  type StudyCell,
  type StudyFinding,
  type StudyResult,
  type StudySection,
} from '../model/index.ts';
import { loadCaveat } from './caveats.ts';
import type { StudyDescriptor } from './describe.ts';
import { checkFindings } from './findings.ts';

/**
 * What a study does (its descriptor, what it declares, is in its folder's descriptor.ts): `O` is its
 * resolved options (what `run` reads, typed), `G` the options a caller gives (the flags' values):
 * `resolve` fills in the defaults of the mode.
 */
interface StudyImplementation<O extends object = Record<string, unknown>, G extends object = Partial<O>> {
  /** The options from what was given and the mode (`quick`): every default filled in. */
  resolve?: (given: Readonly<G>, quick: boolean) => O;
  /**
   * Checks what the study needs (root for links, Chromium, nginx) before anything runs, so a missing
   * part fails at once with its error code rather than after minutes.
   */
  check?: (options: Readonly<O>, quick: boolean) => void | Promise<void>;
  run: (ctx: StudyContext<O>) => Promise<void>;
  /**
   * The decisions this study cannot make with these options in `--quick` mode (too few runs for its
   * test), said up front; undefined when it can make them all (caveats.ts words the common case).
   */
  quickLimits?: (options: Readonly<O>) => string | undefined;
  /**
   * Checks the findings of a result against its own tables and data (the contradictions a referee
   * would look for); returns one line per problem. Run at the end of every study (problems become
   * warnings) and by the tests over saved results.
   */
  verify?: (r: StudyResult) => string[];
  /**
   * The findings (and, where the study can, the explanation's paragraphs) of a saved result, derived
   * again by this code from what the result kept: its comparisons when they were kept whole, else the
   * study's own data (rows, links, times). How a saved run is brought up to date without rerunning it
   * (scripts/gen-study-fixtures.ts), and how the tests check today's sentences against saved runs
   * ({@link rederived}). Undefined when the result lacks what the study needs; absent: the saved
   * findings stand.
   */
  rederive?: (r: StudyResult) => Rederived | undefined;
}

/**
 * One study: what it declares (name, title, the report it reruns, its question, its flags, whose keys
 * must be keys of `G`) and what it does. Built in the study's run.ts from its descriptor:
 * `defineStudy<ChunksOptions>({ ...CHUNKS_STUDY, resolve, run })`.
 */
export interface Study<O extends object = Record<string, unknown>, G extends object = Partial<O>>
  extends StudyDescriptor<keyof G & string>,
    StudyImplementation<O, G> {}

/** What {@link StudyImplementation.rederive} gives back. */
export interface Rederived {
  findings: StudyFinding[];
  /** The explanation's paragraphs, when the study derives them all from the saved data. */
  explanation?: string[];
  /** Tables the study builds again from the same data (each replaces the saved one of its id). */
  sections?: StudySection[];
  /** Data the study keeps from comparisons that a saved result may later lose (merged into `data`). */
  data?: Record<string, unknown>;
}

/** The start of the warning the self-check adds for each problem it finds. */
const DEFECT = "a finding disagrees with this run's data (a defect of h2lab): ";

/** The self-check of a result's words: the generic checks, then the study's own. */
function selfCheck(study: Pick<StudyImplementation, 'verify'>, r: StudyResult): string[] {
  return [...checkFindings(r), ...(study.verify?.(r) ?? [])];
}

/**
 * A saved result with its findings and paragraphs as this code derives them (the study's `rederive`)
 * and the self-check's warnings redone on them; as saved when the study cannot derive them from it.
 */
export function rederived(
  study: Pick<StudyImplementation, 'rederive' | 'verify'> & Partial<Pick<Study, 'quickLimits' | 'resolve'>>,
  r: StudyResult,
): StudyResult {
  const d = study.rederive?.(r);
  if (!d) return r;
  const out = structuredClone(r);
  // What a quick run cannot decide, said up front as this code words it (the load line as saved).
  if (r.mode === 'quick' && study.quickLimits) {
    const limits = study.quickLimits(study.resolve ? study.resolve(r.options, true) : r.options);
    const saved = ((r.data.upFront ?? []) as string[]).filter((u) => !u.startsWith('Quick: '));
    out.data.upFront = limits ? [limits, ...saved] : saved;
  }
  out.findings = JSON.parse(JSON.stringify(d.findings)) as StudyFinding[];
  if (d.explanation) out.explanation = d.explanation;
  for (const s of d.sections ?? []) {
    const i = out.sections.findIndex((x) => x.id === s.id);
    if (i >= 0) out.sections[i] = s;
  }
  Object.assign(out.data, d.data);
  out.warnings = [
    ...out.warnings.filter((w) => !w.startsWith(DEFECT)),
    ...selfCheck(study, out).map((p) => `${DEFECT}${p}`),
  ];
  return out;
}

/** What a study works with. */
export interface StudyContext<O extends object = Record<string, unknown>> {
  readonly quick: boolean;
  readonly seed: number;
  /** The study's options, resolved (`Study.resolve`). */
  readonly options: Readonly<O>;
  /**
   * Aborted when the user stops the study (Ctrl-C): end the cell in progress after its run in
   * progress (`compareCell` does), keeping what it measured.
   */
  readonly signal: AbortSignal;
  /** A private temporary directory, removed when the study ends (generated configs, certificates). */
  readonly tmpDir: string;
  /** The capture asked for (`--capture`), for the study's comparisons ({@link StartStudyInput.capture}). */
  readonly capture?: CaptureRequest & { all?: boolean };
  /** Adds `weight` units to the planned work (the ETA's denominator). Call before the cells run. */
  plan: (weight: number) => void;
  /**
   * Runs one unit of work. A cell that throws is recorded as failed with the reason and the study
   * goes on (it gets `undefined`); once the study is stopped, cells are skipped. Errors of the user's
   * input (exit 2) are not cells' failures: they end the study.
   */
  cell: <T>(
    id: string,
    fn: (progress: (fraction: number) => void) => Promise<T>,
    options?: { weight?: number },
  ) => Promise<T | undefined>;
  /** Adds a table (h2lab's numbers, and the report's beside them). Written at once. */
  section: (s: StudySection) => void;
  /** Adds a paragraph of the explanation; derive it from the measurements, never canned. */
  explain: (paragraph: string) => void;
  /** Adds the finding for one row of the report's tables (see findings.ts). */
  finding: (f: StudyFinding) => void;
  warn: (text: string) => void;
  /** Keeps a comparison the study ran, whole, in the result. */
  addCompare: (id: string, result: CompareResult) => void;
  /** Keeps a study-specific measurement under `data[key]`. */
  setData: (key: string, value: unknown) => void;
  /** A line of progress text for the user (above the progress bar on a terminal). */
  log: (text: string) => void;
}

/** Progress events of a running study. */
interface StudyEvents {
  'cell-start': [{ id: string; done: number; total: number }];
  /** Progress inside a long cell (a comparison's runs): `done` counts its finished share too. */
  'cell-progress': [{ id: string; done: number; total: number }];
  'cell-end': [{ cell: StudyCell; done: number; total: number }];
  log: [string];
  /** The result changed (a cell ended, a section was added): write it. */
  update: [StudyResult];
}

/** A running study. */
interface StudyHandle {
  events: EventEmitter<StudyEvents>;
  /** Stops after the cell in progress; the result's status becomes `interrupted`. */
  stop: () => void;
  /** The result at its end (complete, interrupted or failed): never rejects for a study's failure. */
  done: Promise<StudyResult>;
}

/** Input of {@link startStudy}. */
interface StartStudyInput {
  quick?: boolean;
  seed?: number;
  options?: Record<string, unknown>;
  /**
   * Capture the linked runs of the study's comparisons (`--capture`): each comparison cell into
   * `dir/<cell id>/`, as compare does (src/compare/run.ts). Comparisons without a link capture nothing.
   */
  capture?: CaptureRequest & { all?: boolean };
}

/**
 * A study as the registry and the harness hold it, whatever its options: its flags fill a record that
 * its own `resolve` types. The one place the options' type is erased; each study is written against
 * its own `O` and `G`.
 *
 * @example export const chunksStudy = defineStudy<ChunksOptions>({ ...CHUNKS_STUDY, resolve, run, … });
 */
export function defineStudy<O extends object, G extends object = Partial<O>>(study: Study<O, G>): Study {
  return study as unknown as Study;
}

/** Starts a study; progress arrives as events, the result through `done`. */
export function startStudy(study: Study, input: StartStudyInput = {}): StudyHandle {
  const quick = input.quick ?? false;
  const given = { ...input.options };
  const options = study.resolve ? study.resolve(given, quick) : given;
  const seed = input.seed ?? 1;
  const events = new EventEmitter<StudyEvents>();
  const controller = new AbortController();
  const t0 = performance.now();
  const result: StudyResult = {
    kind: 'h2lab.study',
    version: STUDY_RESULT_VERSION,
    study: study.name,
    title: study.title,
    source: study.source,
    question: study.question,
    mode: quick ? 'quick' : 'full',
    status: 'running',
    options: { ...given, quick, seed },
    environment: {
      ...hostFacts(),
      startedAt: new Date().toISOString(),
      loadAverage: { start: round2(os.loadavg()[0]!) },
    },
    cells: [],
    sections: [],
    explanation: [],
    findings: [],
    warnings: [],
    compares: [],
    data: {},
  };
  // Said before any figure (the renderers print them under the title): what quick cannot decide and,
  // at the end, the load-average rule.
  const upFront: string[] = [];
  const limits = quick ? study.quickLimits?.(options) : undefined;
  if (limits) upFront.push(limits);
  result.data.upFront = upFront;
  let planned = 0;
  let doneWeight = 0;
  const update = () => events.emit('update', result);
  const tmpDir = mkdtempSync(join(os.tmpdir(), `h2lab-study-${study.name}-`));
  const ctx: StudyContext = {
    quick,
    seed,
    options,
    signal: controller.signal,
    tmpDir,
    ...(input.capture ? { capture: input.capture } : {}),
    plan(weight) {
      planned += weight;
    },
    async cell(id, fn, o = {}) {
      const weight = o.weight ?? 1;
      if (controller.signal.aborted) {
        result.cells.push({ id, status: 'skipped', durationMs: 0, reason: 'stopped by the user' });
        doneWeight += weight;
        update();
        return undefined;
      }
      events.emit('cell-start', { id, done: doneWeight, total: Math.max(planned, doneWeight + weight) });
      const c0 = performance.now();
      let cell: StudyCell;
      let value: Awaited<ReturnType<typeof fn>> | undefined;
      try {
        value = await fn((fraction) =>
          events.emit('cell-progress', {
            id,
            done: doneWeight + weight * Math.min(1, Math.max(0, fraction)),
            total: Math.max(planned, doneWeight + weight),
          }),
        );
        cell = { id, status: 'done', durationMs: performance.now() - c0 };
      } catch (err) {
        if (isH2labError(err) && err.exitCode === 2) throw err;
        cell = { id, status: 'failed', durationMs: performance.now() - c0, reason: reasonOf(err) };
      }
      doneWeight += weight;
      result.cells.push(cell);
      events.emit('cell-end', { cell, done: doneWeight, total: Math.max(planned, doneWeight) });
      update();
      return value;
    },
    section(s) {
      const i = result.sections.findIndex((x) => x.id === s.id);
      if (i >= 0) result.sections[i] = s;
      else result.sections.push(s);
      update();
    },
    explain(p) {
      result.explanation.push(p);
    },
    finding(f) {
      const i = result.findings.findIndex((x) => x.id === f.id);
      if (i >= 0) result.findings[i] = f;
      else result.findings.push(f);
    },
    warn(w) {
      if (!result.warnings.includes(w)) result.warnings.push(w);
    },
    addCompare(id, r) {
      result.compares.push({ id, result: r });
      update();
    },
    setData(key, value) {
      result.data[key] = value;
    },
    log(text) {
      events.emit('log', text);
    },
  };
  const done = (async () => {
    // Let the caller attach its listeners before the first event.
    await new Promise((r) => setImmediate(r));
    try {
      await study.check?.(options, quick);
      await study.run(ctx);
      for (const p of selfCheck(study, result)) ctx.warn(`${DEFECT}${p}`);
      result.status = controller.signal.aborted ? 'interrupted' : 'complete';
    } catch (err) {
      result.status = controller.signal.aborted ? 'interrupted' : 'failed';
      result.error = isH2labError(err)
        ? { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) }
        : { code: 'H2LAB_ERR_INTERNAL', message: reasonOf(err) };
    } finally {
      rmSync(tmpDir, { recursive: true, force: true });
    }
    if (result.status === 'interrupted' && !result.error)
      result.error = {
        code: 'H2LAB_ERR_INTERRUPTED',
        message: 'the study was stopped; finished cells are kept',
      };
    result.finishedAt = new Date().toISOString();
    result.environment.loadAverage = {
      start: result.environment.loadAverage?.start ?? 0,
      end: round2(os.loadavg()[0]!),
    };
    const load = loadCaveat(
      result.environment.loadAverage.start,
      result.environment.loadAverage.end,
      result.environment.cpus,
    );
    if (load) {
      upFront.push(load);
      ctx.warn(load);
    }
    result.durationMs = performance.now() - t0;
    update();
    return result;
  })();
  return { events, stop: () => controller.abort(), done };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

function reasonOf(err: unknown): string {
  if (err instanceof H2labError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
