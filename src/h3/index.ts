/**
 * HTTP/3: the binding h2lab drives QUIC through (client and server), behind one thin interface so
 * that `node:quic` can replace it (docs/design.md, "HTTP/3").
 */
export {
  BINDING_FACTS,
  H3_BINDING_ENV,
  H3_PACKAGE,
  H3_PACKAGE_VERSION,
  type H3Binding,
  type H3Connection,
  type H3ConnectOptions,
  type H3Listener,
  type H3ListenOptions,
  type H3ResponseHandler,
  type H3ServerConnection,
  type H3ServerStream,
  h3UnavailableReason,
  loadBinding,
  unavailable,
} from './binding.ts';
export { jsonSeqRecords, type QlogSenderFacts, qlogSenderFacts, readQlogSenderFacts } from './qlog.ts';
