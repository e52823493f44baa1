/**
 * h2lab's own HTTP/2 client (RFC 9113, RFC 7541): frames, HPACK, the session with its flow control and
 * the stall accounting of its receive windows. Entered only through this file.
 */
export { mergeFlowControl } from './flow-stalls.ts';
export { FrameLog, flushFrameLogs } from './frame-log.ts';
export {
  CLIENT_PREFACE,
  DEFAULT_WINDOW_BYTES,
  decodeGoaway,
  decodeSettingsPayload,
  decodeWindowUpdate,
  encodeFrame,
  encodeSettingsPayload,
  FLAG_ACK,
  FrameReader,
  FrameType,
  H2_ERROR_NAMES,
  MAX_WINDOW_BYTES,
  SETTING_DEFAULTS,
  SETTING_NAMES,
} from './frames.ts';
export { encodeHeaderBlock, RequestEncoder } from './hpack.ts';
export type { H2Stream, StreamEndReason, StreamHandler } from './session.ts';
export { H2ClientSession, H2Code, H2SetupError, UNLIMITED_STREAMS } from './session.ts';
