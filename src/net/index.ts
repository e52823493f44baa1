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
export { type LinkAxes, LinkAxesSchema, type PlannedLink, planLinks } from './axes.ts';
export { type CaptureOptions, type CaptureSummary, LinkCapture } from './capture.ts';
export { buildStages, LINK_CONDITIONS, linkSpecKeys } from './conditions/index.ts';
export {
  type ConditionDeclaration,
  DROP,
  type DropReason,
  type LinkCondition,
  type LinkKey,
  type LinkKeyGrammar,
} from './conditions/types.ts';
export { type FlowDrops, FlowDropTable } from './flows.ts';
export {
  measureBaseRtt,
  missingGatewayPrerequisite,
  placementOf,
  type TargetPlacement,
  targetAddress,
} from './gateway.ts';
export {
  type BrowserNetwork,
  browserNetwork,
  hostNetworkLine,
  linkPlace,
  type ServerPlace,
} from './isolation.ts';
export {
  checkNetAvailable,
  createLink,
  type Link,
  type LinkOptions,
  LinkOptionsSchema,
  type LinkStats,
  linkWarnings,
  sweepLinks,
} from './link.ts';
// The light face's names (the link flags, the presets' names), loaded with it.
export * from './meta.ts';
export { netemAvailable } from './netem.ts';
export {
  createPrivateNamespace,
  missingPrerequisite,
  type PrivateNamespace,
  readSysctl,
  sweepNamespaces,
} from './netns.ts';
export {
  createLinkPipeline,
  DirectionPipeline,
  type DirectionStats,
  PacketQueue,
} from './pipeline.ts';
export {
  type DirectionSpec,
  defaultQueueBytes,
  type LinkProfile,
  type LinkSpec,
  type LinkSpecInput,
  LinkSpecSchema,
  PROFILES,
  resolveProfile,
} from './profiles.ts';
export {
  DOWN,
  PACKET_FIELDS,
  type RelayTraceData,
  UP,
  WAKE_FIELDS,
  WAKE_READ,
  WAKE_TIMER,
} from './relay-trace.ts';
export {
  attachLinkDrops,
  attachQuicLinkDrops,
  linkDropsFor,
  matchServerReadings,
  readTcpInfo,
  summarizeTcp,
  TcpLog,
  type TcpReading,
  tcpInfoAvailable,
  udpClientPorts,
} from './tcp-info.ts';
