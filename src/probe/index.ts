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
// Its renderer lives in src/report (probe-text.ts) with the others; re-exported for the CLI's import.
export { renderProbeText } from '../report/index.ts';
export { EXPECTATIONS, evaluateExpectations } from './expect.ts';
export { findingsFor } from './findings.ts';
export { PROBE_DEFAULTS, type ProbeOptions, type ProbeOptionsInput, ProbeOptionsSchema } from './options.ts';
export { probe } from './probe.ts';
export { loadTlsMaterial, parseAltSvc, parseTarget } from './target.ts';
