/**
 * What every folder needs and no subsystem owns: the error type and its codes, the CSV writer, units and their
 * parsing, the seeded random generator, the header-field check, the rank-test floor, option metadata, the version, the named
 * quantiles, atomic file writes, the socket-failure table and the launcher of h2lab's own modules.
 */

export { type CsvValue, csvField, toCsv } from './csv.ts';
export {
  ERROR_CODES,
  type ErrorCode,
  type ErrorDetails,
  EXIT_FAILURE,
  EXIT_USAGE,
  H2labError,
  invalidOption,
  isH2labError,
} from './errors.ts';
export {
  checkOutputPath,
  INPUT_FILE_CAPS,
  type InputFileKind,
  type OutputKind,
  type ReadOptionFileOptions,
  readOptionFile,
  readOptionText,
  type WriteFileAtomicOptions,
  type WrittenFile,
  writeFileAtomic,
  writeWithFallback,
} from './files.ts';
export { headerFieldProblem } from './header-field.ts';
export { appendKeyLog, KEY_LOG_UNLOCKS } from './keylog.ts';
export { h2labModule, type ModuleEntry, nodeArgv, startThread, stopChildProcess } from './launch.ts';
export { type HdrHistogramLib, hdrHistogram, lazyModule } from './lazy-module.ts';
export { checkOpenFiles, OPEN_FILES_RESERVE, openFileLimit, openFilesExhausted } from './open-files.ts';
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
  type OptionKind,
  type OptionMeta,
  optionMeta,
  parseOptions,
  QLOG_FLAG,
  QUIC_RETRY_FLAG,
  RENAMED_OPTIONS,
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
export {
  SOCKET_ERROR_CODES,
  type SocketFailureKind,
  socketFailureOf,
  type TlsHint,
  tlsFailureHint,
  tlsHintError,
} from './socket-failure.ts';
export {
  type BareDurationUnit,
  formatBitRate,
  formatBytes,
  formatMs,
  MAX_DURATION_MS,
  parseBitRate,
  parseBytes,
  parseBytesOrUndefined,
  parseDurationMs,
  parseDurationMsOrUndefined,
  parseFraction,
  parseInteger,
  parseList,
} from './units.ts';
export { hostFacts, VERSION } from './version.ts';
