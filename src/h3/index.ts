/**
 * HTTP/3: the binding h2lab drives QUIC through (client and server), behind one thin interface so
 * that `node:quic` can replace it (docs/performance.md,
 * "HTTP/3 (src/h3, strategies h3 and h3-pool, the fixture's QUIC listener)").
 */
export {
  BINDING_FACTS,
  H3_BINDING_ENV,
  H3_PACKAGE,
  type H3Connection,
  type H3Listener,
  type H3ServerConnection,
  type H3ServerStream,
  loadBinding,
  unavailable,
} from './binding.ts';
export { jsonSeqRecords, qlogSenderFacts, readQlogSenderFacts } from './qlog.ts';
