/**
 * The probe's public face: `probe(url, opts)` → {@link ProbeResult}, its renderer, its options and
 * the expectation names `--expect` accepts. The frame codec is exported for tests and tools that
 * want to read raw HTTP/2 frames.
 */

export {
  decodeSettingsPayload,
  encodeFrame,
  encodeSettingsPayload,
  type Frame,
  FrameReader,
  FrameType,
  SETTING_DEFAULTS,
  SETTING_NAMES,
} from '../h2/index.ts';
export { EXPECTATIONS, evaluateExpectations } from './expect.ts';
export { findingsFor } from './findings.ts';
export { PROBE_DEFAULTS, type ProbeOptions, type ProbeOptionsInput, ProbeOptionsSchema } from './options.ts';
export { probe } from './probe.ts';
export { renderProbeText } from './render.ts';
export { loadTlsMaterial, parseAltSvc, parseTarget } from './target.ts';
