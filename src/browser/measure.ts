/**
 * `measureBrowser(opts)`: the same question asked by a real Chromium. Starts the fixture server when
 * no origin is given, launches Chromium (a second one with HTTP/2 disabled for the HTTP/1.1-over-TLS
 * control), runs the burst experiment alternating targets, then the cancellation experiment with the
 * server honouring and ignoring cancellation, and returns a {@link BrowserResult}.
 *
 * Why the control uses a browser flag rather than a server option: it works for any https:// origin a
 * user names, not only for h2lab's fixture, and keeps the server and its TLS setup identical.
 */
import { cpus } from 'node:os';
import { H2labError, hostFacts, isH2labError } from '../core/index.ts';
import {
  BROWSER_RESULT_VERSION,
  type BrowserOptions,
  type BrowserOptionsInput,
  type BrowserRequest,
  type BrowserResult,
  type BrowserTarget,
  type BurstRun,
  type CancelRun,
} from '../model/index.ts';
import { type BrowserNetwork, browserNetwork, hostNetworkLine, type ServerNamespace } from '../net/index.ts';
import {
  type FixtureTarget,
  metricsClient,
  type ServerMetricsClient,
  startFixtureTarget,
} from '../server/index.ts';
import { readPemFile } from '../tls/index.ts';
import { type BurstRepeat, runBurstRepeated, summarizeBurst } from './burst.ts';
import { runCancel, summarizeCancel } from './cancel.ts';
import { type ChromiumHandle, launchChromium, spkiPins } from './chromium.ts';
import { CollectedPage } from './collector.ts';
import { deriveFindings } from './findings.ts';
import { parseOrigin, resolveBrowserOptions } from './options.ts';
import { trustPins } from './trust.ts';

/** Knobs passed to the fixture server. */
interface FixtureStartOptions {
  poolSize: number;
  tileMs: number;
  maxConcurrentStreams: number;
  ignoreCancel: boolean;
  h3?: boolean;
}

/**
 * Starts a fixture server with both listeners (injected so that the library can run against a server
 * placed anywhere: in-process, in a thread, behind a link). Its certificate's SPKI, and its CA's, are
 * pinned in Chromium; its metrics give the server's view. `serverNs`: the namespace Chromium runs in,
 * where the fixture must be reachable ({@link MeasureBrowserHooks.network}).
 */
type StartFixture = (opts: FixtureStartOptions, serverNs?: ServerNamespace) => Promise<FixtureTarget>;

/**
 * The default {@link StartFixture}: the fixture server in this process on free loopback ports, with
 * the development certificates; given a server namespace (Chromium's private namespace), a child process there.
 */
export const startFixtureInProcess: StartFixture = (opts, serverNs) =>
  startFixtureTarget(
    {
      poolSize: opts.poolSize,
      tileMs: opts.tileMs,
      ignoreCancel: opts.ignoreCancel,
      maxConcurrentStreams: opts.maxConcurrentStreams,
      ...(opts.h3 ? { h3: true } : {}),
    },
    serverNs ? { namespace: serverNs } : 'in-process',
  );

/** One progress event, for a CLI to show. The library never prints. */
interface BrowserProgress {
  phase: 'start' | 'burst' | 'cancel' | 'done';
  message: string;
  /** Completed and total steps of the phase, when known. */
  step?: number;
  of?: number;
}

/** Hooks of {@link measureBrowser}. */
export interface MeasureBrowserHooks {
  /** How to start the fixture server when no origin is given. Default {@link startFixtureInProcess}. */
  startFixture?: StartFixture;
  /**
   * Where Chromium runs, when the caller placed the fixture (its `startFixture` starts it where
   * Chromium reaches it); the caller closes it. Default: with origins given, the host's namespace;
   * else {@link browserNetwork} (a private namespace when root).
   */
  network?: BrowserNetwork;
  onProgress?: (e: BrowserProgress) => void;
  /** Stops between runs; what was measured is returned with error H2LAB_ERR_INTERRUPTED. */
  signal?: AbortSignal;
  /**
   * Which bursts are repeated. Default: a burst hit by a host network change
   * (net::ERR_NETWORK_CHANGED), at most twice. The attempts repeated are in `burst.repeated`.
   */
  burstRepeat?: BurstRepeat;
}

/**
 * The bursts repeated by default: Chromium aborts requests in flight when the host's interfaces change
 * (net::ERR_NETWORK_CHANGED, e.g. a VPN or a container starting): that run measured the host, not the
 * server. Redo it, at most twice.
 */
const NETWORK_CHANGED_REPEAT: BurstRepeat = { retries: 2, repeat: (r) => networkChanged(r.requests) };
/** Chromium's connections per origin for HTTP/1.1: what an HTTP/1.1 target can have in flight. */
const CHROMIUM_H1_CONNECTIONS = 6;
/** With `cancelWhenReached`, the page's own timer only bounds the wait for the server, ms. */
const CANCEL_BOUND_MS = 5000;

function networkChanged(requests: readonly BrowserRequest[]): boolean {
  return requests.some((r) => r.failed === 'net::ERR_NETWORK_CHANGED');
}

function targetsFor(origins: readonly string[], control: boolean, h3 = false): BrowserTarget[] {
  const out: BrowserTarget[] = [];
  const ids = new Map<string, number>();
  const id = (base: string) => {
    const n = (ids.get(base) ?? 0) + 1;
    ids.set(base, n);
    return n === 1 ? base : `${base}-${n}`;
  };
  for (const origin of origins) {
    if (origin.startsWith('http:')) {
      out.push({
        id: id('http'),
        label: `http:// HTTP/1.1`,
        origin,
        h2Disabled: false,
        expectedProtocol: 'http/1.1',
      });
    } else {
      out.push({ id: id('https'), label: `https:// h2`, origin, h2Disabled: false, expectedProtocol: 'h2' });
      if (h3) {
        out.push({
          id: id('https-h3'),
          label: `https:// h3`,
          origin,
          h2Disabled: false,
          quic: new URL(origin).host,
          expectedProtocol: 'h3',
        });
      }
      if (control) {
        out.push({
          id: id('https-h1'),
          label: `https:// HTTP/1.1 (control)`,
          origin,
          h2Disabled: true,
          expectedProtocol: 'http/1.1',
        });
      }
    }
  }
  // Name the origin only when two targets would otherwise read the same.
  if (new Set(out.map((t) => t.label)).size < out.length) {
    for (const t of out) t.label = `${t.label} ${t.origin}`;
  }
  return out;
}

/** The fixture's two listeners: the experiments compare http:// with https://, so both must be there. */
function bothListeners(f: FixtureTarget): { plainUrl: string; tlsUrl: string } {
  if (!f.plainUrl || !f.tlsUrl) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      'measureBrowser: the started fixture server must serve both its plain and its TLS listener',
      { option: 'startFixture' },
    );
  }
  return { plainUrl: f.plainUrl, tlsUrl: f.tlsUrl };
}

/**
 * Measures what a real Chromium does against the origins (or h2lab's fixture server): the origins
 * (fixtures started when none is given), the browsers, the burst runs, the cancellation runs, and
 * the findings.
 *
 * @example
 * const result = await measureBrowser({ count: 121, runs: 6 }); // against the fixture server
 * console.log(result.findings.join('\n'));
 */
export async function measureBrowser(
  input: BrowserOptionsInput = {},
  hooks: MeasureBrowserHooks = {},
): Promise<BrowserResult> {
  const opts: BrowserOptions = resolveBrowserOptions(input);
  // Read before anything starts: an unreadable --trust-cert is a usage error, not a failed run.
  const trusted = opts.trustCert.map((f) => readPemFile(f, '--trust-cert'));
  const progress = (e: BrowserProgress) => hooks.onProgress?.(e);
  const cleanups: Array<() => Promise<void>> = [];
  const startedAt = new Date().toISOString();
  try {
    const net = hooks.network ?? (await ownNetwork(opts));
    if (!hooks.network) cleanups.push(() => net.close());
    const origins = await resolveOrigins(opts, hooks, progress, cleanups, net.serverNamespace);
    // A server certificate is pinned as given; a CA stands for the verified certificate of each origin
    // given (a started fixture's are pinned already, and this process may not reach it to verify).
    const verify = origins.fixture ? [] : origins.origins;
    const pins = [...new Set([...origins.spki, ...(await trustPins(trusted, verify))])];
    const targets = targetsFor(origins.origins, opts.control, opts.h3);
    progress({
      phase: 'start',
      message: `launching Chromium (${opts.chromiumPath}) in ${net.netns ? `namespace ${net.netns}` : "the host's namespace"}`,
    });
    const browsers = await launchBrowsers(
      { executablePath: opts.chromiumPath, pins, keyLogFile: opts.keyLogFile, netns: net.netns },
      targets,
      cleanups,
    );
    const main = browsers.main;
    const result: BrowserResult = {
      kind: 'h2lab.browser',
      version: BROWSER_RESULT_VERSION,
      options: opts,
      environment: {
        ...hostFacts(),
        chromium: {
          path: opts.chromiumPath,
          version: main.version,
          flags: main.flags,
          ...(net.netns ? { netns: net.netns } : {}),
          ...(net.hostReason ? { hostNetwork: net.hostReason } : {}),
        },
        startedAt,
      },
      trust: { method: pins.length ? 'spki-pin' : 'system', spki: pins },
      targets,
      burst: { runs: [], summaries: [] },
      cancel: [],
      cancelSummaries: [],
      findings: [],
      warnings: net.hostReason ? [hostNetworkLine(net.hostReason)] : [],
    };
    if (origins.fixture) result.fixture = origins.fixture;
    const session: Session = {
      opts,
      targets,
      origins,
      pageFor: browsers.pageFor,
      progress,
      burstRepeat: hooks.burstRepeat ?? NETWORK_CHANGED_REPEAT,
      check: () => {
        if (hooks.signal?.aborted)
          throw new H2labError('H2LAB_ERR_INTERRUPTED', 'browser measurement interrupted', {});
      },
    };
    try {
      if (opts.burst) await runBursts(session, result);
      if (opts.cancel) await runCancels(session, result);
    } catch (caught) {
      keepWhatRan(session, result, caught, hooks.signal);
    }
    conclude(result);
    progress({ phase: 'done', message: 'done' });
    return result;
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  }
}

/**
 * Where Chromium runs when the caller did not say: origins given are reached through the host's
 * network (a private namespace has only its loopback); the fixture h2lab starts goes wherever
 * Chromium does.
 */
function ownNetwork(opts: BrowserOptions): Promise<BrowserNetwork> {
  return browserNetwork(
    undefined,
    opts.origins.length > 0 ? "the origins given are reached through the host's network" : undefined,
  );
}

/** Where the runs go: the origins given, or the fixture servers started for them. */
interface Origins {
  origins: string[];
  /** SPKI pins: the `--trust-spki` given and the started fixtures' certificates. */
  spki: string[];
  fixture?: BrowserResult['fixture'];
  /** The server's view of the main origin (`--metrics-url`, or the fixture's). */
  metrics?: ServerMetricsClient;
  /** The fixture that ignores cancellation (with `cancel`, when h2lab started the fixtures). */
  ignoreFixture?: FixtureTarget;
}

/** The origins as given, or (none given) a fixture server and, for cancellation, one that ignores it. */
async function resolveOrigins(
  opts: BrowserOptions,
  hooks: MeasureBrowserHooks,
  progress: (e: BrowserProgress) => void,
  cleanups: Array<() => Promise<void>>,
  serverNs: ServerNamespace | undefined,
): Promise<Origins> {
  const given: Origins = {
    origins: opts.origins.map(parseOrigin),
    spki: [...opts.trustSpki],
    ...(opts.metricsUrl ? { metrics: metricsClient(opts.metricsUrl) } : {}),
  };
  if (given.origins.length > 0) return given;
  const startFixture = hooks.startFixture ?? startFixtureInProcess;
  progress({ phase: 'start', message: 'starting the fixture server' });
  const f = await startFixture(
    { ...opts.fixture, ignoreCancel: false, ...(opts.h3 ? { h3: true } : {}) },
    serverNs,
  );
  cleanups.push(() => f.close());
  const spki = [...given.spki, ...spkiPins(f.certPem)];
  const listeners = bothListeners(f);
  const started: Origins = {
    origins: [new URL(listeners.plainUrl).origin, new URL(listeners.tlsUrl).origin],
    spki,
    metrics: f.metrics,
    fixture: { ...listeners, ...opts.fixture },
  };
  if (opts.cancel) {
    const g = await startFixture({ ...opts.fixture, ignoreCancel: true }, serverNs);
    cleanups.push(() => g.close());
    spki.push(...spkiPins(g.certPem));
    started.ignoreFixture = g;
  }
  return started;
}

/** One Chromium per way of reaching an origin (as is, with HTTP/2 disabled, or forcing QUIC). */
async function launchBrowsers(
  how: { executablePath: string; pins: string[]; keyLogFile: string | undefined; netns: string | undefined },
  targets: readonly BrowserTarget[],
  cleanups: Array<() => Promise<void>>,
): Promise<{ main: ChromiumHandle; pageFor: Session['pageFor'] }> {
  const { executablePath, pins, keyLogFile, netns } = how;
  const browsers = new Map<string, ChromiumHandle>();
  const mode = (t: BrowserTarget) => `${t.h2Disabled}|${t.quic ?? ''}`;
  for (const t of targets) {
    if (browsers.has(mode(t))) continue;
    const b = await launchChromium({
      executablePath,
      spki: pins,
      disableHttp2: t.h2Disabled,
      ...(t.quic ? { forceQuicOn: t.quic } : {}),
      ...(keyLogFile ? { keyLogFile } : {}),
      ...(netns ? { netns } : {}),
    });
    cleanups.push(() => b.close());
    browsers.set(mode(t), b);
  }
  const pages = new Map<string, CollectedPage>();
  const pageFor = async (t: BrowserTarget, origin = t.origin): Promise<CollectedPage> => {
    const key = `${mode(t)}|${origin}`;
    let p = pages.get(key);
    if (!p) {
      p = await CollectedPage.open(browsers.get(mode(t))!.context, origin);
      pages.set(key, p);
    }
    return p;
  };
  return { main: browsers.get(mode(targets[0]!))!, pageFor };
}

/** What the experiments share. */
interface Session {
  opts: BrowserOptions;
  targets: BrowserTarget[];
  origins: Origins;
  /** The page of a target's browser on an origin (the target's own by default), opened once. */
  pageFor(t: BrowserTarget, origin?: string): Promise<CollectedPage>;
  progress(e: BrowserProgress): void;
  /** Throws H2LAB_ERR_INTERRUPTED once a stop was asked for. */
  check(): void;
  /** Which bursts are repeated ({@link MeasureBrowserHooks.burstRepeat}). */
  burstRepeat: BurstRepeat;
}

/** The burst experiment: every target `runs` times, alternating, then its summaries and trust states. */
async function runBursts(s: Session, result: BrowserResult): Promise<void> {
  const { opts, targets } = s;
  const total = opts.runs * targets.length;
  let step = 0;
  for (let i = 0; i < opts.runs; i++) {
    // Alternate targets and rotate who goes first, so no target always follows the same one.
    for (let k = 0; k < targets.length; k++) {
      s.check();
      const t = targets[(i + k) % targets.length]!;
      s.progress({
        phase: 'burst',
        message: `burst ${i + 1}/${opts.runs} ${t.label}`,
        step: step++,
        of: total,
      });
      const spec = {
        page: await s.pageFor(t),
        target: t,
        count: opts.count,
        pathTemplate: opts.pathTemplate,
        index: i,
        runTimeoutMs: opts.runTimeoutMs,
        ...(s.origins.metrics && { metrics: s.origins.metrics }),
      };
      const { run, repeated } = await runBurstRepeated(spec, s.burstRepeat);
      for (const r of repeated)
        result.warnings.push(
          `${t.label}: burst ${i + 1} was repeated because ${
            networkChanged(r.requests)
              ? "Chromium reported net::ERR_NETWORK_CHANGED (the host's network interfaces changed during the run)"
              : r.stats.failed > 0
                ? `Chromium reported ${r.stats.failed} failed request(s)`
                : 'the caller’s burstRepeat policy rejected it'
          }.`,
        );
      if (repeated.length > 0) result.burst.repeated = [...(result.burst.repeated ?? []), ...repeated];
      result.burst.runs.push(run);
    }
  }
  result.burst.summaries = targets.map((t) => summarizeBurst(t.id, result.burst.runs));
  await recordSecureContext(s, result);
}

/** Whether every https:// request of the bursts ran in a secure context. */
async function recordSecureContext(s: Session, result: BrowserResult): Promise<void> {
  const states: Record<string, number> = {};
  for (const t of s.targets.filter((x) => x.origin.startsWith('https:'))) {
    const p = await s.pageFor(t);
    const urls = result.burst.runs
      .filter((r) => r.target === t.id)
      .flatMap((r) => r.requests.map((q) => q.url));
    for (const [k, v] of Object.entries(p.securityStates(urls))) states[k] = (states[k] ?? 0) + v;
  }
  if (Object.keys(states).length)
    result.trust.secureContext = Object.keys(states).every((x) => x === 'secure');
}

/** One target against one server mode in the cancellation experiment. */
interface CancelLeg {
  t: BrowserTarget;
  mode: CancelRun['serverMode'];
  origin: string;
  m?: ServerMetricsClient;
}

/** Each target against the server honouring cancellation and (started fixtures) ignoring it. */
function cancelLegs(s: Session): CancelLeg[] {
  const { metrics, fixture, ignoreFixture } = s.origins;
  const legs: CancelLeg[] = [];
  for (const t of s.targets) {
    legs.push({ t, mode: fixture ? 'honour' : 'unknown', origin: t.origin, ...(metrics && { m: metrics }) });
    // Not for the HTTP/3 target: its Chromium forces QUIC to the main fixture's origin only.
    if (ignoreFixture && !t.quic) {
      const l = bothListeners(ignoreFixture);
      const base = new URL(t.origin.startsWith('https:') ? l.tlsUrl : l.plainUrl).origin;
      legs.push({ t, mode: 'ignore', origin: base, m: ignoreFixture.metrics });
    }
  }
  return legs;
}

/**
 * The cancellation experiment: every leg repeated, alternating honour and ignore (and who goes first),
 * so that both server modes see the same machine.
 */
async function runCancels(s: Session, result: BrowserResult): Promise<void> {
  const { opts } = s;
  const legs = cancelLegs(s);
  const order: Array<{ leg: CancelLeg; index: number }> = [];
  for (let i = 0; i < opts.cancelRuns; i++) {
    const round = i % 2 === 0 ? legs : [...legs].reverse();
    for (const leg of round) order.push({ leg, index: i });
  }
  let step = 0;
  for (const { leg, index } of order) {
    s.check();
    s.progress({
      phase: 'cancel',
      message: `cancel ${index + 1}/${opts.cancelRuns} ${leg.t.label} (server ${leg.mode})`,
      step: step++,
      of: order.length,
    });
    const spec = {
      index,
      page: await s.pageFor(leg.t, leg.origin),
      target: leg.t,
      serverMode: leg.mode,
      count: opts.count,
      pathTemplate: opts.pathTemplate,
      cancelAfterMs: opts.cancelWhenReached !== undefined ? CANCEL_BOUND_MS : opts.cancelAfterMs,
      ...(opts.cancelWhenReached !== undefined && leg.m
        ? {
            abortWhenReached: Math.min(
              opts.cancelWhenReached,
              opts.count,
              leg.t.expectedProtocol === 'http/1.1' ? CHROMIUM_H1_CONNECTIONS : opts.count,
            ),
          }
        : {}),
      runTimeoutMs: opts.runTimeoutMs,
      ...(leg.m && { metrics: leg.m }),
    };
    let run = await runCancel(spec);
    for (
      let retry = 0;
      retry < NETWORK_CHANGED_REPEAT.retries && run.browserFailures['net::ERR_NETWORK_CHANGED'];
      retry++
    ) {
      result.warnings.push(
        `${leg.t.label}: cancellation run ${index + 1} (server ${leg.mode}) was repeated because Chromium reported net::ERR_NETWORK_CHANGED.`,
      );
      run = await runCancel(spec);
    }
    result.cancel.push(run);
  }
}

/**
 * A run that failed (or was stopped) keeps what ran: the error on the result, the summaries of the
 * runs that finished. An error that is not h2lab's is thrown on.
 */
function keepWhatRan(s: Session, result: BrowserResult, caught: unknown, signal?: AbortSignal): void {
  // A stop closes pages and Ctrl-C on a terminal reaches Chromium too: whatever failed after
  // the stop was asked for, the run was interrupted, not broken.
  const err = signal?.aborted
    ? new H2labError(
        'H2LAB_ERR_INTERRUPTED',
        'browser measurement interrupted; the runs finished so far are kept',
        {},
      )
    : caught;
  if (!isH2labError(err)) throw err;
  result.error = err.toJSON();
  result.cancelSummaries = summarizeCancel(result.cancel);
  if (s.opts.burst && result.burst.summaries.length === 0 && result.burst.runs.some((r) => !r.discarded)) {
    result.burst.summaries = s.targets
      .filter((t) => result.burst.runs.some((r) => r.target === t.id && !r.discarded))
      .map((t) => summarizeBurst(t.id, result.burst.runs));
  }
}

/** The cancellation summaries, a target that never answered, the findings and the host's warnings. */
function conclude(result: BrowserResult): void {
  if (!result.error) result.cancelSummaries = summarizeCancel(result.cancel);
  if (!result.error) {
    const dead = failedTargets(result.burst.runs, result.targets);
    if (dead) result.error = dead;
  }
  const { findings, warnings } = deriveFindings(result);
  result.findings = findings;
  result.warnings.push(...warnings);
  if (cpus().length < 4) {
    result.warnings.push(
      `Only ${cpus().length} CPUs: Chromium, the server and h2lab share them, so issuing the fetch() calls and timers can be late (see issue-loop and actual abort times).`,
    );
  }
}

/**
 * A target of which every request of every burst run failed: the measurement says nothing about it,
 * so the result carries an error (exit 1) naming the target and what Chromium reported.
 */
function failedTargets(
  runs: readonly BurstRun[],
  targets: readonly BrowserTarget[],
): { code: string; message: string; details: Record<string, unknown> } | undefined {
  const byTarget = new Map<string, BurstRun[]>();
  for (const r of runs) byTarget.set(r.target, [...(byTarget.get(r.target) ?? []), r]);
  const dead: string[] = [];
  const reasons = new Map<string, number>();
  for (const [target, rs] of byTarget) {
    if (rs.length === 0 || rs.some((r) => r.stats.ok > 0)) continue;
    dead.push(targets.find((t) => t.id === target)?.label ?? target);
    for (const r of rs)
      for (const q of r.requests) if (q.failed) reasons.set(q.failed, (reasons.get(q.failed) ?? 0) + 1);
  }
  if (dead.length === 0) return undefined;
  const why =
    [...reasons]
      .sort((a, b) => b[1] - a[1])
      .map(([t, n]) => `${t} ×${n}`)
      .join(', ') || 'no response';
  const cert = [...reasons.keys()].some((t) => t.includes('CERT'));
  return {
    code: 'H2LAB_ERR_TARGET_UNREACHABLE',
    message: `every request to ${dead.join(', ')} failed in Chromium (${why})${cert ? ': Chromium does not trust the certificate — pass the CA with --trust-cert CA.pem or a pin with --trust-spki' : ': check the URL and that the server is running'}`,
    details: { targets: dead, failures: Object.fromEntries(reasons) },
  };
}
