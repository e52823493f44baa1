/**
 * What `h2lab study NAME` writes (results.json of a study): the tables in the shape of the field
 * report the study reruns, each beside the report's own numbers, the explanation derived from the
 * measurements, and the measurements themselves (the comparisons and browser sessions it ran, and the
 * study's own figures under `data`).
 */
import { z } from 'zod';
import { compareResultSchema } from './compare.ts';
import { publishedJsonSchema, resultErrorSchema } from './fields.ts';

/** Bump when a study result written before would no longer parse or would mean something else. */
export const STUDY_RESULT_VERSION = 1;

const cellValueSchema = z
  .union([z.string(), z.number(), z.null()])
  .describe('a number in the column’s unit, a word, or null where nothing was measured');

const studyTableSchema = z.object({
  columns: z
    .array(
      z.object({
        key: z.string().describe('the key of this column in every row'),
        label: z.string().describe('the column heading'),
        unit: z.string().optional().describe('the unit of the numbers in this column (ms, KiB, ×, %)'),
      }),
    )
    .min(1),
  rows: z.array(z.record(z.string(), cellValueSchema)).describe('one object per row, keyed by column'),
});

const studySectionSchema = z.object({
  id: z.string().describe('stable identifier of the section within the study'),
  title: z.string(),
  note: z.string().optional().describe('how the numbers were measured, in one or two sentences'),
  table: studyTableSchema.describe('what h2lab measured here'),
  reference: z
    .object({
      source: z.string().describe('where the numbers come from: the field report and its table'),
      note: z.string().optional(),
      table: studyTableSchema,
    })
    .optional()
    .describe('the field report’s own numbers for the same table, shown beside h2lab’s'),
});

const studyFindingSchema = z.object({
  id: z.string().describe('stable identifier of the finding within the study'),
  section: z.string().optional().describe('the section whose tables the finding reads'),
  row: z.string().describe('the field report’s row or claim this finding answers'),
  report: z.string().describe('what the report measured, in its own figures'),
  measured: z
    .string()
    .describe('what this run measured for the same row, or why it has no figure ("not measured: …")'),
  verdict: z
    .enum(['agrees', 'differs', 'not-measured'])
    .describe('agrees: within the stated tolerance; differs: outside it; not-measured: no clean figure'),
  difference: z.string().optional().describe('by how much, when it differs'),
  explanation: z
    .string()
    .describe(
      'the mechanism with this run’s numbers, or a sentence that begins "Not explained" when the run cannot tell',
    ),
  explained: z.boolean().describe('false when the explanation says plainly that the run cannot tell'),
  evidence: z
    .record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()]))
    .describe('every figure the sentences quote, by name: what a reader (and the tests) check them against'),
});

const studyCellSchema = z.object({
  id: z.string(),
  status: z.enum(['done', 'failed', 'skipped']),
  durationMs: z.number().describe('wall time of the cell, ms'),
  reason: z.string().optional().describe('why it failed or was skipped'),
});

const studyResultSchema = z.object({
  kind: z.literal('h2lab.study'),
  version: z.literal(STUDY_RESULT_VERSION),
  study: z.string().describe('the study’s name, as in `h2lab study NAME`'),
  title: z.string(),
  source: z.string().describe('the field report the study reruns'),
  question: z.string().describe('the question the study answers, in one sentence'),
  mode: z.enum(['quick', 'full']),
  status: z
    .enum(['running', 'complete', 'interrupted', 'failed'])
    .describe('`running` in a file means the process died before it could write its last state.'),
  options: z.record(z.string(), z.unknown()).describe('the resolved options of the study'),
  environment: z.object({
    h2labVersion: z.string(),
    node: z.string(),
    platform: z.string(),
    cpus: z.number(),
    startedAt: z.string(),
    loadAverage: z
      .object({ start: z.number(), end: z.number().optional() })
      .optional()
      .describe('the machine’s 1-minute load average when the study started and ended'),
  }),
  finishedAt: z.string().optional(),
  durationMs: z.number().optional().describe('wall time of the whole study, ms'),
  cells: z.array(studyCellSchema).describe('every unit of work the study ran, in order'),
  sections: z.array(studySectionSchema),
  explanation: z
    .array(z.string())
    .describe('paragraphs derived from the measurements above; a different outcome gives other words'),
  findings: z
    .array(studyFindingSchema)
    .default([])
    .describe('one per row of the field report’s tables: agrees or differs, by how much, and why'),
  warnings: z.array(z.string()),
  compares: z
    .array(z.object({ id: z.string(), result: compareResultSchema }))
    .describe('the comparisons the study ran, whole'),
  data: z.record(z.string(), z.unknown()).describe('the study’s own measurements, by name'),
  error: resultErrorSchema.optional(),
});

export type StudyTable = z.infer<typeof studyTableSchema>;
export type StudySection = z.infer<typeof studySectionSchema>;
export type StudyFinding = z.infer<typeof studyFindingSchema>;
export type StudyCell = z.infer<typeof studyCellSchema>;
export type StudyResult = z.infer<typeof studyResultSchema>;

/** The JSON Schema of a study's results.json (published as docs/study-result.schema.json). */
export function studyResultJsonSchema(): Record<string, unknown> {
  return publishedJsonSchema('h2lab study result', studyResultSchema);
}

/** Checks that a value read from JSON is a study result of this version; throws a ZodError if not. */
export function parseStudyResult(value: unknown): StudyResult {
  return studyResultSchema.parse(value);
}
