/**
 * The echo study (`h2lab study echo`), whole: its descriptor, the study the registry loads, and what
 * the tests feed their own rows and headers through.
 */
export { ECHO_STUDY } from './descriptor.ts';
export { echoFindings } from './findings.ts';
export type { EchoOptions } from './options.ts';
export { apiHeaders } from './plan.ts';
export type { Row } from './rows.ts';
export { echoStudy } from './run.ts';
