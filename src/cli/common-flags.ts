/**
 * Flags of several commands that no library option owns, declared once (docs/design.md, "Options"):
 * the outputs (what is written differs by command, so each use says it in `description`; the name,
 * the grammar and `-` for stdout are these declarations'), and a plan's and a cluster's names.
 */
import { declareFlag } from '../core/index.ts';

export const JSON_FLAG = declareFlag({
  flag: 'json',
  grammar: 'string',
  arg: 'file',
  description: 'write the result (versioned JSON) to this file; - for stdout (the table goes to stderr)',
});
export const CSV_FLAG = declareFlag({
  flag: 'csv',
  grammar: 'string',
  arg: 'file',
  description: 'write the result as CSV; - for stdout',
});
export const QUIET_FLAG = declareFlag({
  flag: 'quiet',
  short: 'q',
  grammar: 'bool',
  description: 'print nothing but errors',
});
export const OUT_FLAG = declareFlag({
  flag: 'out',
  grammar: 'string',
  arg: 'path',
  description: 'where the output goes',
});

export const PLAN_FLAG = declareFlag({
  flag: 'plan',
  grammar: 'string',
  arg: 'file',
  description: 'the plan (h2lab plan)',
});
export const RUN_ID_FLAG = declareFlag({
  flag: 'run-id',
  grammar: 'string',
  arg: 'id',
  description: 'names the run (a DNS label; default from the plan’s hash)',
});
export const MAX_SKEW_FLAG = declareFlag({
  flag: 'max-skew',
  grammar: 'duration',
  arg: 'time',
  description: 'the merge warns when shards started further apart',
  defaultText: '10ms',
});
export const NAMESPACE_FLAG = declareFlag({
  flag: 'namespace',
  grammar: 'string',
  arg: 'ns',
  description: 'namespace of the objects',
});
export const CONTEXT_FLAG = declareFlag({
  flag: 'context',
  grammar: 'string',
  arg: 'name',
  description: 'kubectl context',
});
export const KUBECTL_FLAG = declareFlag({
  flag: 'kubectl',
  grammar: 'string',
  arg: 'path',
  description: 'kubectl executable',
  defaultText: 'kubectl',
});
