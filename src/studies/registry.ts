/** The studies `h2lab study` offers, one line each (one file per study in this folder). */
import { chunksStudy } from './chunks.ts';
import { echoStudy } from './echo.ts';
import { proxyStudy } from './proxy.ts';
import type { Study } from './study.ts';
import { tilesStudy } from './tiles.ts';

const STUDIES: Study[] = [chunksStudy, echoStudy, proxyStudy, tilesStudy];

/** Adds a study (the built-in ones register at import; tests may add their own). */
export function registerStudy(study: Study): void {
  if (STUDIES.some((s) => s.name === study.name)) throw new Error(`study ${study.name} is registered twice`);
  STUDIES.push(study);
}

/** Every registered study, in the order they were registered. */
export function listStudies(): readonly Study[] {
  return STUDIES;
}

/** The study of this name, or undefined. */
export function findStudy(name: string): Study | undefined {
  return STUDIES.find((s) => s.name === name);
}
