/**
 * Field builders the model's schemas share, so every duration's JSON Schema description ends with its
 * unit. Internal to src/model (not re-exported by its index.ts).
 */
import { z } from 'zod';

/** `what`, in milliseconds: a number whose JSON Schema description carries the unit. */
export const ms = (what: string) => z.number().describe(`${what}, milliseconds`);

/** A whole count of something, described. */
export const count = (what: string) => z.number().int().describe(what);

/** What a failed or interrupted run (or measurement) records: its stable error code and message. */
export const resultErrorSchema = z.strictObject({
  code: z.string().describe('stable error code (docs/errors.md), e.g. H2LAB_ERR_INVALID_OPTION'),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/**
 * A number that may be NaN in memory (e.g. "never happened"). JSON has no NaN: `JSON.stringify`
 * writes it as null, so a file holds null and parsing turns it back into NaN. Published as
 * `number | null` (see {@link publishedJsonSchema}).
 */
export const nanAsNull = z.preprocess((v) => (v === null ? Number.NaN : v), z.union([z.number(), z.nan()]));

/**
 * The JSON Schema (draft 2020-12) of what a result file holds: the parsed (output) side, with
 * defaults applied, so a field with a default is required; NaN is published as null (what
 * `JSON.stringify` writes); what JSON cannot express (a custom check) is left open.
 */
export function publishedJsonSchema(title: string, schema: z.ZodType): Record<string, unknown> {
  return {
    title,
    ...(z.toJSONSchema(schema, {
      io: 'output',
      unrepresentable: 'any',
      override: (ctx) => {
        if (ctx.zodSchema._zod.def.type !== 'nan') return;
        for (const k of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[k];
        ctx.jsonSchema.type = 'null';
      },
    }) as Record<string, unknown>),
  };
}
