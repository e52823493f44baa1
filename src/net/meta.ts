/**
 * The network's light face (docs/design.md, "Start-up: what a command's help loads"): the link flags,
 * the link conditions' declarations and the presets' names, loading no link, no namespace code and no
 * zod. A command's flags import this; what makes a link imports src/net/index.ts.
 */
export { linkSpecKeys } from './conditions/index.ts';
export type { LinkKey } from './conditions/types.ts';
export {
  CAPTURE_ALL_FLAG,
  CAPTURE_DEFAULTS,
  CAPTURE_FLAG,
  CAPTURE_MAX_FLAG,
  CAPTURE_SNAP_FLAG,
  CC_FLAG,
  captureNoLinkError,
  conditionFlag,
  INITCWND_FLAG,
  NET_BACKEND_FLAG,
  NET_FLAG,
  parseConditionValue,
  SLOW_START_AFTER_IDLE_FLAG,
} from './link-flags.ts';
export {
  CONGESTION_CONTROLS,
  type CongestionControl,
  NO_LINK,
  presetNamed,
  profileNames,
} from './presets.ts';
