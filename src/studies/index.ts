/**
 * The field studies, one command each (`h2lab study NAME`): each reruns one of the field reports with
 * h2lab's pieces and prints its tables beside the report's numbers, with an explanation derived from
 * the measurements. One file per study; the harness is study.ts.
 */
export { compareCell } from './compare-cell.ts';
export { findStudy, listStudies, registerStudy } from './registry.ts';
export {
  type StartStudyInput,
  type Study,
  type StudyContext,
  type StudyEvents,
  type StudyFlag,
  type StudyHandle,
  startStudy,
} from './study.ts';
