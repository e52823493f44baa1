/**
 * h2lab's programmatic API. Everything the CLI does, a script can do through these exports.
 */
export { ERROR_CODES, H2labError, isH2labError, type ErrorCode } from './errors.ts';
export * from './report/model.ts';
export type * from './transport/types.ts';
export { VERSION } from './version.ts';
