export { echoFindings } from './findings.ts';
export type { EchoOptions } from './options.ts';
export { apiHeaders } from './plan.ts';
export type { Row } from './rows.ts';
export { echoStudy } from './run.ts';
