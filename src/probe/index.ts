// Its renderer lives in src/report (probe-text.ts) with the others; re-exported for the CLI's import.
export { renderProbeText } from '../report/index.ts';
export { EXPECTATIONS, evaluateExpectations } from './expect.ts';
export { findingsFor } from './findings.ts';
export { type ProbeOptionsInput, ProbeOptionsSchema } from './options.ts';
export { parseAltSvc, parseTarget } from './parse.ts';
export { probe } from './probe.ts';
