/**
 * What every folder needs and no subsystem owns: the error type and its codes, the CSV writer, units and their
 * parsing, the seeded random generator, the header-field check, the rank-test floor, option metadata, the version, the named
 * quantiles, atomic file writes, the socket-failure table and the launcher of h2lab's own modules.
 */

export { type CsvValue, csvField, toCsv } from './csv.ts';
export {
  ERROR_CODES,
  type ErrorCode,
  EXIT_FAILURE,
  EXIT_USAGE,
  H2labError,
  invalidOption,
  isH2labError,
} from './errors.ts';
export {
  checkOutputPath,
  INPUT_FILE_CAPS,
  readOptionFile,
  readOptionText,
  writeFileAtomic,
  writeWithFallback,
} from './files.ts';
export { headerFieldProblem } from './header-field.ts';
export { appendKeyLog, KEY_LOG_UNLOCKS } from './keylog.ts';
export { nodeArgv, startThread, stopChildProcess } from './launch.ts';
export { hdrHistogram, lazyModule } from './lazy-module.ts';
export { checkOpenFiles, openFilesExhausted } from './open-files.ts';
export {
  CA_FLAG,
  CERT_FLAG,
  convertOptionValue,
  type DescribedOption,
  declaredFlags,
  declareFlag,
  describeOptions,
  type FlagDeclaration,
  type FlagGrammar,
  type FlagRef,
  type FlagUse,
  FRAMES_FLAG,
  flagMeta,
  flagUse,
  INSECURE_FLAG,
  KEY_FLAG,
  KEYLOG_FLAG,
  optionMeta,
  parseOptions,
  QLOG_FLAG,
  QUIC_RETRY_FLAG,
  readFlag,
  TIMEOUT_FLAG,
  unknownOptionError,
} from './option-meta.ts';
export {
  medianInterpolated,
  medianNearestRank,
  quantileInterpolated,
  quantileNearestRank,
} from './quantile.ts';
export { minRunsForRankTest } from './rank.ts';
export { createRng, type Rng } from './rng.ts';
export { Slots, type Slotted } from './slots.ts';
export { socketFailureOf, tlsFailureHint, tlsHintError } from './socket-failure.ts';
export {
  formatBitRate,
  formatBytes,
  formatMs,
  MAX_DURATION_MS,
  parseBitRate,
  parseBytes,
  parseBytesOrUndefined,
  parseDurationMs,
  parseFraction,
  parseInteger,
  parseList,
} from './units.ts';
export { hostFacts, VERSION } from './version.ts';
