/**
 * Packet-level network emulation: the public face of `src/net`.
 *
 * @example
 * import { createLink } from 'h2lab';
 * const link = await createLink({ profile: 'wan', congestionControl: 'cubic' });
 * const child = link.spawnInServer('nginx', ['-c', conf]);
 * // … traffic to link.serverAddress from this process …
 * await link.close();
 */
export { LinkAxesSchema, type PlannedLink, planLinks } from './axes.ts';
export type { CaptureSummary } from './capture.ts';
export type { FlowDrops } from './flows.ts';
export { localityOf, measureBaseRtt, missingGatewayPrerequisite, targetAddress } from './gateway.ts';
export {
  type BrowserNetwork,
  browserNetwork,
  hostNetworkLine,
  linkServerNamespace,
  type ServerNamespace,
} from './isolation.ts';
export {
  checkNetAvailable,
  createLink,
  type Link,
  type LinkOptions,
  type LinkStats,
  linkWarnings,
  sweepLinks,
} from './link.ts';
// The light face's names (the link flags, the presets' names), loaded with it.
export { CONGESTION_CONTROLS, captureNoLinkError, NO_LINK, profileNames } from './meta.ts';
export { netemAvailable } from './netem.ts';
export { missingPrerequisite, readSysctl, sweepNamespaces } from './netns.ts';
export { type LinkSpecInput, PROFILES, resolveProfile } from './profiles.ts';
export { PACKET_FIELDS, type RelayTraceData, WAKE_FIELDS, WAKE_READ, WAKE_TIMER } from './relay-trace.ts';
export {
  attachLinkDrops,
  attachQuicLinkDrops,
  matchServerReadings,
  summarizeTcp,
  TcpLog,
  type TcpReading,
  udpClientPorts,
} from './tcp-info.ts';
export { timeSequenceFrom } from './time-sequence.ts';
