/**
 * A comparison as one cell of a study: runs `runComparison` (src/compare), stops it after its run in
 * progress when the study is stopped, keeps the whole result in the study's, and hands it back for
 * the study's tables.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type CompareOptionsInput, type RunComparisonHooks, runComparison } from '../compare/index.ts';
import type { CompareResult } from '../model/index.ts';
import type { StudyContext } from './study.ts';

/**
 * Runs one comparison as the cell `id` (weight: its share of the ETA). Returns undefined when the cell
 * failed (the reason is in the study's cells) or the study was stopped before it began.
 */
export async function compareCell(
  ctx: StudyContext,
  id: string,
  input: CompareOptionsInput,
  hooks: RunComparisonHooks = {},
  weight = 1,
): Promise<CompareResult | undefined> {
  return ctx.cell(
    id,
    async (progress) => {
      const capture = ctx.capture && {
        ...ctx.capture,
        dir: join(ctx.capture.dir, id.replace(/[^A-Za-z0-9._-]+/g, '_')),
        linkOptional: true,
      };
      if (capture) mkdirSync(capture.dir, { recursive: true });
      const c = await runComparison(
        { seed: ctx.seed, ...input },
        { ...hooks, ...(capture ? { capture } : {}) },
      );
      c.events.on('run-end', ({ done, total }) => progress(done / total));
      // A stop lets the run in progress end and keeps it, as compare's first Ctrl-C does.
      const stop = () => c.finish();
      ctx.signal.addEventListener('abort', stop, { once: true });
      try {
        const result = await c.done;
        ctx.addCompare(id, result);
        if (result.status === 'failed' && result.error)
          throw new Error(`${result.error.code}: ${result.error.message}`);
        return result;
      } finally {
        ctx.signal.removeEventListener('abort', stop);
      }
    },
    { weight },
  );
}
