/**
 * The field studies, one command each (`h2lab study NAME`): each reruns one of the field reports with
 * h2lab's pieces and prints its tables beside the report's numbers, with an explanation derived from
 * the measurements. One folder per study (its descriptor in its descriptor.ts, listed in
 * descriptors.ts); the harness is study.ts.
 */
export { compareCell } from './compare-cell.ts';
export {
  findStudy,
  listStudies,
  loadStudy,
  registerStudy,
  type StudyDescriptor,
  type StudyFlag,
} from './meta.ts';
export {
  type Rederived,
  rederived,
  type StartStudyInput,
  type Study,
  type StudyContext,
  type StudyEvents,
  type StudyHandle,
  type StudyImplementation,
  startStudy,
} from './study.ts';
