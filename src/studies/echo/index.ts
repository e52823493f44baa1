/**
 * The echo study (`h2lab study echo`), whole: its descriptor, the study the registry loads, and what
 * the tests feed their own rows and headers through.
 */
export { ECHO_STUDY } from './descriptor.ts';
export { apiHeaders, type EchoOptions, echoFindings, echoStudy, type Row } from './run.ts';
