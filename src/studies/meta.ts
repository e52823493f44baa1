/**
 * The studies' light face (docs/design.md, "Start-up: what a command's help loads"): what each study
 * declares — name, title, source, question, flags — and the registry that lists them and loads a study
 * when it runs, loading no study, no engine, no browser and no renderer. `h2lab study`'s `register()`
 * imports this; what runs a study imports src/studies/index.ts.
 */
export type { StudyDescriptor } from './describe.ts';
export { findStudy, listStudies, loadStudy, registerStudy } from './registry.ts';
