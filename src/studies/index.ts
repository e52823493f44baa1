export { findStudy, listStudies, loadStudy, registerStudy, type StudyDescriptor } from './meta.ts';
export { rederived, type Study, startStudy } from './study.ts';
