/**
 * The link's flags, declared once (docs/design.md, "Options"): each condition key of the registry
 * (src/net/conditions) that has a flag becomes a declaration with the key's grammar, range and help —
 * `--rtt`, `--loss`, `--queue`, … (the link rate is `--bandwidth`, since `--rate` is requests per
 * second on bench and compare; `h2lab net run` offers it as `--rate`) — and the link's other settings
 * are declared here beside them. `bench`, `net` and `page` use them with one value, `compare` and the
 * studies sweep the keys that are axes (one link per value).
 */
import {
  declareFlag,
  type FlagDeclaration,
  type FlagGrammar,
  H2labError,
  invalidOption,
  parseBitRate,
  parseBytes,
  parseDurationMs,
  parseFraction,
} from '../core/index.ts';
import { linkSpecKeys } from './conditions/index.ts';
import type { LinkKey } from './conditions/types.ts';
import { CONGESTION_CONTROLS, NO_LINK, profileNames } from './presets.ts';

/** The name a condition key's flag is declared under (`rate` is `--bandwidth` outside `net run`). */
function conditionFlagName(k: LinkKey): string {
  return k.flag === 'rate' ? 'bandwidth' : k.flag;
}

function declareCondition(k: LinkKey): FlagDeclaration {
  const number = k.type === 'number' ? k : undefined;
  const name = conditionFlagName(k);
  return declareFlag({
    flag: name,
    grammar: k.grammar as FlagGrammar,
    ...(k.arg ? { arg: k.arg } : {}),
    description: k.help,
    ...(number?.min !== undefined ? { min: number.min } : {}),
    ...(number?.max !== undefined ? { max: number.max } : {}),
    ...(number?.axisTag ? { sweep: 'one link each' } : {}),
    // A key with its own fix says it where its range is broken, in its words.
    ...(k.fix !== undefined
      ? { parse: (text: string, flag: string) => parseConditionValue(k, flag, text) }
      : {}),
  });
}

/**
 * A condition flag's value in its key's grammar; with a declared `fix`, out of the key's range is an
 * error naming the flag (the rest is checked with the whole link). Bench, net and compare read them so.
 */
export function parseConditionValue(k: LinkKey, flag: string, text: string): number {
  const v =
    k.grammar === 'duration'
      ? parseDurationMs(text, flag)
      : k.grammar === 'fraction'
        ? parseFraction(text, flag)
        : k.grammar === 'bitrate'
          ? parseBitRate(text, flag)
          : k.grammar === 'bytes'
            ? parseBytes(text, flag)
            : Number(text);
  if (k.fix !== undefined && !inKeyRange(k, v)) throw invalidOption(flag, text, k.fix);
  return v;
}

function inKeyRange(k: LinkKey, v: number): boolean {
  if (k.type !== 'number' || !Number.isFinite(v)) return false;
  return (
    (k.min === undefined || v >= k.min) &&
    (k.max === undefined || v <= k.max) &&
    (!k.positive || v > 0) &&
    (!k.int || Number.isInteger(v))
  );
}

/** Each condition key's declaration, by the key's own flag name (`rate` included). */
const CONDITION_FLAGS: ReadonlyMap<string, FlagDeclaration> = new Map(
  linkSpecKeys().map(([, k]) => [k.flag, declareCondition(k)]),
);

/** The declaration of the condition key whose flag is `flag` (`rtt`, `loss`, `rate` → `--bandwidth`). */
export function conditionFlag(flag: string): FlagDeclaration {
  const d = CONDITION_FLAGS.get(flag);
  if (!d) throw new Error(`no link condition declares --${flag}`);
  return d;
}

export const CC_FLAG = declareFlag({
  flag: 'cc',
  grammar: 'enum',
  arg: 'algorithm',
  description: `TCP congestion control pinned on both ends of the link: ${CONGESTION_CONTROLS.join(', ')}`,
  choices: CONGESTION_CONTROLS,
  sweep: 'one link each',
  defaultText: 'the host default',
});
export const INITCWND_FLAG = declareFlag({
  flag: 'initcwnd',
  grammar: 'int',
  arg: 'segments',
  min: 1,
  max: 1000,
  description: 'initial congestion window on both ends of the link',
  defaultText: '10',
});
export const SLOW_START_AFTER_IDLE_FLAG = declareFlag({
  flag: 'slow-start-after-idle',
  grammar: 'bool',
  negatable: true,
  description: 'set net.ipv4.tcp_slow_start_after_idle=0 in the server namespace of the link',
});
export const NET_BACKEND_FLAG = declareFlag({
  flag: 'net-backend',
  grammar: 'enum',
  arg: 'name',
  description: 'emulation backend',
  choices: ['auto', 'relay', 'netem'],
  defaultText: 'auto',
});

/**
 * `--net`: the network, `loopback` (no link: the target reached directly) or a link preset; compare
 * and the studies take a list (one cell each).
 */
export const NET_FLAG = declareFlag({
  flag: 'net',
  grammar: 'string',
  arg: 'profile',
  description: `the network: ${NO_LINK} (no link, the default) or a link preset: ${profileNames().join(', ')}`,
  sweep: 'one cell each, e.g. loopback,wan,lossy',
  parse: (text, flag, inList) => {
    if (text !== NO_LINK && !profileNames().includes(text))
      throw invalidOption(
        flag,
        text,
        `use ${inList ? 'a list' : 'one'} of ${NO_LINK}, ${profileNames().join(', ')}`,
      );
    return text;
  },
});

/**
 * The capture of a link (`capture.ts`): where each run's pcapng goes and its bounds. Defaults: whole
 * packets (a TLS record cut short cannot be decrypted) and 64 MiB per run (the relay holds a run's
 * capture in memory until the run ends).
 */
export const CAPTURE_DEFAULTS = Object.freeze({ snapBytes: 65_535, maxBytes: 64 * 1024 * 1024 });
export const CAPTURE_FLAG = declareFlag({
  flag: 'capture',
  grammar: 'string',
  arg: 'dir',
  description:
    "write a pcapng of each run's link, as its relay saw it (both directions, each packet's fate as its comment), into this directory",
});
export const CAPTURE_SNAP_FLAG = declareFlag({
  flag: 'capture-snap',
  grammar: 'bytes',
  arg: 'bytes',
  description: 'bytes kept of each captured packet (less than a packet cannot be decrypted)',
  min: 64,
  max: 65_535,
  defaultText: '65535 (whole packets)',
});
export const CAPTURE_MAX_FLAG = declareFlag({
  flag: 'capture-max',
  grammar: 'bytes',
  arg: 'bytes',
  description: 'size cap of one run’s capture; packets beyond it are counted, not kept',
  min: 64 * 1024,
  max: 4 * 1024 * 1024 * 1024,
  defaultText: '64MiB',
});

/** `--capture` on a run or comparison without a link: loopback never passes the relay. */
export function captureNoLinkError(dir: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_CAPTURE_NO_LINK',
    `--capture ${dir}: no emulated link, so no packet passes h2lab's relay and nothing can be captured on loopback; add a link (--rtt 0ms, --net lan, …) or capture loopback yourself (tcpdump -i lo)`,
    { option: '--capture', value: dir },
  );
}
export const CAPTURE_ALL_FLAG = declareFlag({
  flag: 'capture-all',
  grammar: 'bool',
  description: "with --capture: keep every measured run's capture, not only each cell's representative run",
});
