/**
 * What a study declares about itself, apart from how it runs: its name, title, the report it reruns,
 * its question and its flags (a {@link StudyDescriptor}). Each study's folder holds its own
 * (`descriptor.ts`); `h2lab study --help` and `h2lab study NAME --help` read them without loading a
 * study's implementation, and with it the comparison engine, the load engine, Chromium's driver and
 * the renderers (docs/design.md, "Start-up: what a command's help loads"). A study's `run.ts` builds
 * its `Study` from its descriptor; a study's own flags are declared in its descriptor, once.
 */
import type { FlagUse } from '../core/index.ts';

/**
 * A flag of one study, added by `h2lab study NAME`: the use of a declared flag (docs/design.md,
 * "Options": a shared one such as `--runs`, narrowed with its reason, or the study's own) and the key
 * of the study's options it fills.
 */
interface StudyFlag<K extends string = string> extends FlagUse {
  readonly key: K;
}

/**
 * What `h2lab study` needs to list a study and print its help: everything about it but its code. `K`
 * is the keys its flags fill; the study's run.ts checks them against its options' type when it builds
 * the `Study` (`defineStudy<ChunksOptions>({ ...CHUNKS_STUDY, resolve, run })`).
 */
export interface StudyDescriptor<K extends string = string> {
  /** `h2lab study NAME`. */
  name: string;
  title: string;
  /** The field report it reruns, e.g. `report 000 (the map tile server)`. */
  source: string;
  /** The question it answers, one sentence. */
  question: string;
  flags?: readonly StudyFlag<K>[];
}

/**
 * A descriptor, with the keys its flags fill kept as a union of literals (so the study's options
 * type can check them), not widened to `string`.
 *
 * @example export const CHUNKS_STUDY = describeStudy({ name: 'chunks', title, source, question, flags });
 */
export function describeStudy<K extends string>(d: StudyDescriptor<K>): StudyDescriptor<K> {
  return d;
}
