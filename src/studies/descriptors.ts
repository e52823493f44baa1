/**
 * The studies `h2lab study` offers, in the order it lists them: each one's descriptor (its folder's
 * `descriptor.ts`: name, title, source, question, flags), read without loading the study, and how to
 * load the study itself (its folder's `index.ts`) when it runs. A study is its folder and one line
 * here (docs/design.md, "Add a study").
 */
import { CHUNKS_STUDY } from './chunks/descriptor.ts';
import type { StudyDescriptor } from './describe.ts';
import { ECHO_STUDY } from './echo/descriptor.ts';
import { PROXY_STUDY } from './proxy/descriptor.ts';
import type { Study } from './study.ts';
import { TILES_STUDY } from './tiles/descriptor.ts';

/** One registered study: what it declares, and its whole self on demand. */
export interface StudyEntry {
  descriptor: StudyDescriptor;
  load: () => Promise<Study>;
}

/** The built-in studies. */
export const BUILT_IN_STUDIES: readonly StudyEntry[] = [
  { descriptor: CHUNKS_STUDY, load: async () => (await import('./chunks/index.ts')).chunksStudy },
  { descriptor: ECHO_STUDY, load: async () => (await import('./echo/index.ts')).echoStudy },
  { descriptor: PROXY_STUDY, load: async () => (await import('./proxy/index.ts')).proxyStudy },
  { descriptor: TILES_STUDY, load: async () => (await import('./tiles/index.ts')).tilesStudy },
];
