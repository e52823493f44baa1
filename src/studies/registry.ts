/**
 * The studies `h2lab study` offers: each one's descriptor (its folder's descriptor.ts, listed in
 * descriptors.ts), read without loading it, and how to load the study itself. `h2lab study --help`
 * lists and describes them from the descriptors alone; a study's folder — and with it the comparison
 * engine, Chromium's driver, nginx's driver — is loaded by {@link loadStudy} when the study runs or a
 * saved result's findings are derived again (docs/performance.md, "Studies (src/studies)").
 */

import type { StudyDescriptor } from './describe.ts';
import { BUILT_IN_STUDIES, type StudyEntry } from './descriptors.ts';
import type { Study } from './study.ts';

const STUDIES: StudyEntry[] = [...BUILT_IN_STUDIES];

/**
 * Adds a study, whole (tests and scripts add their own; the built-in ones are listed in
 * descriptors.ts). Throws when the name is taken.
 */
export function registerStudy(study: Study): void {
  if (STUDIES.some((s) => s.descriptor.name === study.name))
    throw new Error(`study ${study.name} is registered twice`);
  STUDIES.push({ descriptor: study, load: async () => study });
}

/** What every registered study declares, in the order they were registered. Loads no study. */
export function listStudies(): readonly StudyDescriptor[] {
  return STUDIES.map((s) => s.descriptor);
}

/** What the study of this name declares, or undefined. Loads no study. */
export function findStudy(name: string): StudyDescriptor | undefined {
  return STUDIES.find((s) => s.descriptor.name === name)?.descriptor;
}

/**
 * The study of this name, whole (`resolve`, `run`, `verify`, `rederive`), loading its folder; undefined
 * when no study has the name.
 *
 * @example const study = await loadStudy('chunks'); startStudy(study!, { quick: true });
 */
export async function loadStudy(name: string): Promise<Study | undefined> {
  return STUDIES.find((s) => s.descriptor.name === name)?.load();
}
