/**
 * `probe(url, opts)`: what does this server speak, and how is it configured for HTTP/2?
 *
 *   https://  TLS step (tls-probe.ts) ─┬─ HTTP/2 preface over ALPN h2 ─ SETTINGS, WINDOW_UPDATE
 *                                      └─ versions / ALPN ids alone, chain, mTLS, OCSP
 *   http://   h2c prior knowledge (raw preface) · Upgrade: h2c (raw) · "is this a TLS port?"
 *   both      HTTP/1.1 keep-alive (N requests, count connections) · one response per protocol
 *             (compression, Server, Alt-Svc, TTFB) · --large PATH timing · --wait-idle
 *           → findings in words → --expect gate
 *
 * Each step has its own deadline (`timeoutMs`); a step that fails is recorded in `problems` and the
 * probe goes on, except for what makes the rest meaningless (unreachable, wrong scheme, untrusted
 * certificate), which throws an H2labError with its own code.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { H2labError, parseOptions, VERSION } from '../core/index.ts';
import { SETTING_DEFAULTS, SETTING_NAMES } from '../h2/index.ts';
import {
  type Availability,
  type Failure,
  type H2Report,
  PROBE_RESULT_VERSION,
  type ProbeResult,
} from '../model/index.ts';
import { strip, timeLarge, watchIdleConnections } from './behaviour.ts';
import { evaluateExpectations } from './expect.ts';
import { findingsFor } from './findings.ts';
import { exchangePreface, type ServerPreface, tryUpgrade } from './h2.ts';
import { checkKeepAlive, fetchH2, type Origin, openH2Session } from './http.ts';
import { type ProbeOptions, type ProbeOptionsInput, ProbeOptionsSchema } from './options.ts';
import { loadTlsMaterial, parseAltSvc, parseTarget } from './parse.ts';
import { altSvcH3Port, probeH3, quicTransportParameters } from './quic.ts';
import { probeTls } from './tls-probe.ts';
import { classifyFailure, connectTcp, connectTls, Inbox } from './wire.ts';

function validateOptions(input: ProbeOptionsInput): ProbeOptions {
  return parseOptions(ProbeOptionsSchema, input, 'probe');
}

const no = (detail: string): Availability => ({ supported: false, detail });
const yes = (detail: string): Availability => ({ supported: true, detail });
const unknown = (detail: string): Availability => ({ supported: null, detail });

function h2Report(via: 'h2' | 'h2c', p: ServerPreface): H2Report {
  const sent = Object.fromEntries(p.settings.map((s) => [s.name, s.value]));
  const known = Object.values(SETTING_NAMES);
  return {
    via,
    settingsSent: p.settings,
    effective: Object.fromEntries(
      known.map((n) => [n, n in sent ? sent[n]! : (SETTING_DEFAULTS[n] ?? null)]),
    ),
    notSent: known.filter((n) => !(n in sent)),
    connectionWindowUpdateBytes:
      p.connectionWindowIncrementBytes > 0 ? p.connectionWindowIncrementBytes : null,
    pingRttMs: p.pingRttMs,
    ...(p.goaway ? { goaway: { errorName: p.goaway.errorName, debug: p.goaway.debug } } : {}),
  };
}

function failureText(f: Failure): string {
  return `${f.code ? `${f.code}: ` : ''}${f.detail.split('\n')[0]}`;
}

/**
 * Probes `url` and returns what the server speaks and how it is configured, with findings in words.
 *
 * @example
 * const result = await probe('https://127.0.0.1:8443/', { ca: 'ca.pem', expect: ['h2', 'tls1.3'] });
 * if (result.expectations?.unmet.length) process.exitCode = 1;
 */
export async function probe(url: string, input: ProbeOptionsInput = {}): Promise<ProbeResult> {
  const opts = validateOptions(input);
  const target = parseTarget(url);
  const material = loadTlsMaterial(opts);
  // Validate --expect before any traffic.
  evaluateExpectations(opts.expect, undefined);
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const address = await resolveAddress(target.host);
  const origin: Origin = {
    scheme: target.scheme,
    ep: { host: target.host, port: target.port, ...(isIP(target.host) ? {} : { servername: target.host }) },
    authority: target.authority,
    material,
  };
  const problems: ProbeResult['problems'] = [];
  const result: ProbeResult = {
    kind: 'h2lab.probe',
    version: PROBE_RESULT_VERSION,
    h2labVersion: VERSION,
    url,
    target: { scheme: target.scheme, host: target.host, port: target.port, address },
    startedAt,
    durationMs: 0,
    options: { ...opts },
    protocols: {
      'http/1.1': unknown('not probed'),
      h2: unknown('not probed'),
      h2c: unknown('not probed'),
      h2cUpgrade: unknown('not probed'),
      altSvc: null,
    },
    responses: [],
    problems,
    findings: [],
  };
  const p: Probing = {
    url,
    opts,
    target,
    origin,
    result,
    problem: (step, err) => {
      const f = classifyFailure(err);
      problems.push({ step, ...f, detail: f.detail.split('\n')[0]! });
      return f;
    },
  };
  const { h2Via, httpBlocked } = target.scheme === 'https' ? await probeTlsStep(p) : await probeCleartext(p);
  if (!httpBlocked) await probeHttp1(p);
  await refuseNonHttpPort(p);
  if (h2Via && !httpBlocked) await fetchOverH2(p, h2Via);
  await probeAltSvc(p);
  if (!httpBlocked) await probeBehaviour(p, h2Via);
  result.findings = findingsFor(result);
  if (opts.expect.length) result.expectations = evaluateExpectations(opts.expect, result);
  result.durationMs = performance.now() - t0;
  return result;
}

/** What the steps of one probe share. */
interface Probing {
  url: string;
  opts: ProbeOptions;
  target: ReturnType<typeof parseTarget>;
  origin: Origin;
  result: ProbeResult;
  /** Records a failed step in `problems` and returns its classification. */
  problem(step: string, err: unknown): Failure;
}

/** What the protocol steps found that the later ones depend on. */
interface Reached {
  /** How HTTP/2 was reached, if it was. */
  h2Via: 'h2' | 'h2c' | null;
  /** Why HTTP cannot be probed further (a client certificate is required), else null. */
  httpBlocked: string | null;
}

/** The host's address: as given, or resolved (a name that does not resolve is unreachable). */
async function resolveAddress(host: string): Promise<string> {
  if (isIP(host)) return host;
  try {
    return (await lookup(host)).address;
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_PROBE_UNREACHABLE',
      `cannot resolve ${host} (${(err as NodeJS.ErrnoException).code}): check the host name in the URL`,
      { host, code: (err as NodeJS.ErrnoException).code },
    );
  }
}

/** https://: the TLS step (tls-probe.ts) and what its HTTP/2 preface says. */
async function probeTlsStep(p: Probing): Promise<Reached> {
  const { result, opts, target } = p;
  const tlsOut = await probeTls(p.origin, {
    timeoutMs: opts.timeoutMs,
    insecure: opts.insecure,
    path: target.path,
  });
  result.tls = tlsOut.report;
  const httpBlocked = tlsOut.httpBlocked;
  let h2Via: Reached['h2Via'] = null;
  const alpnH2 = tlsOut.report.alpn.h2;
  if (tlsOut.preface && !tlsOut.preface.goaway) {
    result.h2 = h2Report('h2', tlsOut.preface);
    result.protocols.h2 = yes('ALPN selects h2; the server sent its SETTINGS');
    h2Via = 'h2';
  } else if (tlsOut.preface?.goaway) {
    result.h2 = h2Report('h2', tlsOut.preface);
    result.protocols.h2 = no(`ALPN selects h2 but the server sent GOAWAY ${tlsOut.preface.goaway.errorName}`);
  } else if (tlsOut.prefaceFailure) {
    result.problems.push({ step: 'h2 preface over TLS', ...tlsOut.prefaceFailure });
    result.protocols.h2 = unknown(
      `ALPN selects h2 but the preface exchange failed: ${failureText(tlsOut.prefaceFailure)}`,
    );
  } else {
    result.protocols.h2 =
      alpnH2.supported === true
        ? unknown(`ALPN h2: ${alpnH2.detail}`)
        : { ...alpnH2, detail: `ALPN h2: ${alpnH2.detail}` };
  }
  if (alpnH2.supported === true && result.protocols.h2.supported === null && httpBlocked) {
    result.protocols.h2 = yes('ALPN selects h2 (HTTP not probed further: a client certificate is required)');
  }
  result.protocols.h2c = no('not applicable to https:// (cleartext only)');
  result.protocols.h2cUpgrade = no('not applicable to https:// (cleartext only)');
  const alpnH1 = tlsOut.report.alpn['http/1.1'];
  if (httpBlocked) result.protocols['http/1.1'] = { ...alpnH1, detail: `ALPN http/1.1: ${alpnH1.detail}` };
  return { h2Via, httpBlocked };
}

/** http://: reachable at all, then h2c by prior knowledge and by Upgrade. */
async function probeCleartext(p: Probing): Promise<Reached> {
  await assertReachable(p);
  const h2Via = (await probeH2cPriorKnowledge(p)) ? 'h2c' : null;
  await probeH2cUpgrade(p);
  return { h2Via, httpBlocked: null };
}

/** Reachability first: a refused port is a clear error, not three failed steps. */
async function assertReachable(p: Probing): Promise<void> {
  const { target } = p;
  const { timeoutMs } = p.opts;
  try {
    (await connectTcp(p.origin.ep, timeoutMs)).destroy();
  } catch (err) {
    const f = classifyFailure(err);
    throw f.kind === 'timeout'
      ? new H2labError(
          'H2LAB_ERR_PROBE_TIMEOUT',
          `${target.host}:${target.port} did not accept a connection within ${timeoutMs} ms: check the address, or raise --timeout`,
          { ...f },
        )
      : new H2labError(
          'H2LAB_ERR_PROBE_UNREACHABLE',
          `cannot connect to ${target.host}:${target.port} (${f.code ?? f.detail}): check the host and port in the URL and that the server is running`,
          { ...f },
        );
  }
}

/** h2c with prior knowledge (RFC 9113 §3.3). True when the server answered the preface with SETTINGS. */
async function probeH2cPriorKnowledge(p: Probing): Promise<boolean> {
  const { result } = p;
  const { timeoutMs } = p.opts;
  try {
    const sock = await connectTcp(p.origin.ep, timeoutMs);
    try {
      const pre = await exchangePreface(sock, new Inbox(sock), performance.now() + timeoutMs);
      result.h2 = h2Report('h2c', pre);
      if (pre.goaway && pre.settings.length === 0) {
        result.protocols.h2c = no(`the server sent GOAWAY ${pre.goaway.errorName} instead of SETTINGS`);
        return false;
      }
      result.protocols.h2c = yes('prior knowledge: the server answered the preface with SETTINGS');
      return true;
    } finally {
      sock.destroy();
    }
  } catch (err) {
    const f = classifyFailure(err);
    const code = (err as { code?: string }).code;
    result.protocols.h2c =
      code === 'PROBE_NOT_H2'
        ? no((err as Error).message)
        : f.kind === 'reset'
          ? no(`the server closed the connection on the HTTP/2 preface (${f.code ?? f.kind})`)
          : unknown(failureText(p.problem('h2c prior knowledge', err)));
    return false;
  }
}

/** Upgrade: h2c (RFC 7540 §3.2). */
async function probeH2cUpgrade(p: Probing): Promise<void> {
  const { result, target } = p;
  const { timeoutMs } = p.opts;
  try {
    const sock = await connectTcp(p.origin.ep, timeoutMs);
    try {
      const up = await tryUpgrade(
        sock,
        new Inbox(sock),
        target.authority,
        target.path,
        performance.now() + timeoutMs,
      );
      result.protocols.h2cUpgrade = up.upgraded
        ? yes(`"${up.statusLine}", then the server's SETTINGS`)
        : no(`the server answered the upgrade request with "${up.statusLine}" and stayed on HTTP/1.1`);
      if (up.upgraded && up.preface && !result.h2) result.h2 = h2Report('h2c', up.preface);
    } finally {
      sock.destroy();
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    result.protocols.h2cUpgrade =
      code === 'PROBE_ONLY_H2' || code === 'PROBE_NOT_H1' || code === 'PROBE_NOT_H2'
        ? no((err as Error).message)
        : unknown(failureText(p.problem('h2c upgrade', err)));
  }
}

/** HTTP/1.1: keep-alive and the first response. */
async function probeHttp1(p: Probing): Promise<void> {
  const { result, opts, target } = p;
  const tlsRefusesH1 =
    result.tls?.alpn['http/1.1'].supported === false &&
    result.tls.alpn['http/1.1'].detail.includes('refused');
  if (tlsRefusesH1) {
    result.protocols['http/1.1'] = no(`ALPN http/1.1 ${result.tls!.alpn['http/1.1'].detail}`);
    return;
  }
  try {
    const ka = await checkKeepAlive(
      p.origin,
      target.path,
      opts.keepAliveRequests,
      opts.timeoutMs,
      opts.maxBodyBytes,
    );
    result.keepAlive = ka.report;
    result.protocols['http/1.1'] = yes(`GET ${target.path} answered ${ka.first.status}`);
    result.responses.push(strip(ka.first));
    const cc = result.tls?.clientCertificate;
    if (cc?.requested && !cc.presented && cc.required === false && ka.first.status === 400) {
      // nginx's `ssl_verify_client on` completes the handshake without a certificate and then
      // answers every request "400 No required SSL certificate was sent".
      cc.required = true;
      cc.detail =
        'required: the handshake completed without a client certificate, but the server answers HTTP 400 (as nginx does with ssl_verify_client on)';
    }
  } catch (err) {
    const f = classifyFailure(err);
    result.protocols['http/1.1'] =
      f.kind === 'protocol' && result.protocols.h2c.supported === true
        ? no(
            `the answer to an HTTP/1.1 request was not HTTP/1.1 (${f.code ?? f.kind}): this port speaks only HTTP/2`,
          )
        : f.kind === 'protocol' || f.kind === 'reset'
          ? no(`no HTTP/1.1 response: ${failureText(f)}`)
          : unknown(failureText(p.problem('HTTP/1.1 keep-alive', err)));
  }
}

/**
 * An http:// URL on which nothing spoke HTTP, or only a 400 came back (nginx answers plain HTTP on
 * its TLS port with "400 The plain HTTP request was sent to HTTPS port"): is it a TLS port? Throws
 * what the port is instead.
 */
async function refuseNonHttpPort(p: Probing): Promise<void> {
  const { result, target, url } = p;
  const { timeoutMs } = p.opts;
  const nothingSpoke =
    result.protocols['http/1.1'].supported !== true &&
    result.protocols.h2c.supported !== true &&
    result.protocols.h2cUpgrade.supported !== true;
  const only400 = result.protocols.h2c.supported !== true && result.responses[0]?.status === 400;
  if (target.scheme !== 'http' || !(nothingSpoke || only400)) return;
  let tlsAnswered = false;
  try {
    const c = await connectTls(p.origin.ep, p.origin.material, { presentClientCert: false }, timeoutMs);
    c.socket.destroy();
    tlsAnswered = true;
  } catch (err) {
    const tap = (err as { tap?: { records: Array<{ dir: string }> } }).tap;
    tlsAnswered = Boolean(tap?.records.some((r) => r.dir === 'in'));
  }
  const { problems } = result;
  const allTimedOut = problems.length >= 3 && problems.every((x) => x.kind === 'timeout');
  if (!tlsAnswered && nothingSpoke && allTimedOut) {
    throw new H2labError(
      'H2LAB_ERR_PROBE_TIMEOUT',
      `${target.host}:${target.port} accepts connections but answered nothing within ${timeoutMs} ms (HTTP/1.1, HTTP/2 preface, TLS): check that the URL names an HTTP server, or raise --timeout`,
      { url, problems },
    );
  }
  if (tlsAnswered || nothingSpoke)
    throw tlsAnswered
      ? new H2labError(
          'H2LAB_ERR_PROBE_TLS_PORT',
          `${target.host}:${target.port} speaks TLS, not plain HTTP: use https://${target.authority}${target.path}`,
          { url },
        )
      : new H2labError(
          'H2LAB_ERR_PROBE_NO_HTTP',
          `${target.host}:${target.port} accepts connections but answered neither HTTP/1.1 nor HTTP/2 (${result.protocols['http/1.1'].detail}): check that the URL names an HTTP server`,
          { url },
        );
}

/** HTTP/2: one response (Server, compression, Alt-Svc over h2 may differ from HTTP/1.1). */
async function fetchOverH2(p: Probing, h2Via: 'h2' | 'h2c'): Promise<void> {
  const { opts, target } = p;
  try {
    const session = await openH2Session(p.origin, opts.timeoutMs);
    try {
      p.result.responses.push(
        strip(await fetchH2(session, h2Via, target.path, opts.timeoutMs, opts.maxBodyBytes)),
      );
    } finally {
      session.destroy();
    }
  } catch (err) {
    p.problem(`GET ${target.path} over ${h2Via}`, err);
  }
}

/** Alt-Svc as the responses advertised it, and (https://) HTTP/3 where it points or on the URL's port. */
async function probeAltSvc(p: Probing): Promise<void> {
  const { result, target, opts } = p;
  const altSvc = result.responses.map((r) => r.altSvc).find((a) => a);
  if (altSvc) result.protocols.altSvc = { header: altSvc, protocols: parseAltSvc(altSvc) };
  if (target.scheme !== 'https') return;
  const h3Port = altSvcH3Port(altSvc ?? undefined);
  result.protocols.h3 = await probeH3(
    target.host,
    h3Port ?? target.port,
    h3Port !== undefined ? 'from Alt-Svc' : "the URL's port; no Alt-Svc h3",
    { ...p.origin.material, insecure: opts.insecure },
    Math.min(opts.timeoutMs, 3000),
  );
  if (result.protocols.h3.supported === true)
    result.quic = await quicTransportParameters(
      target.host,
      h3Port ?? target.port,
      target.path,
      Math.min(opts.timeoutMs, 3000),
    );
}

/** `--large PATH` timing and `--wait-idle`: how the server behaves, not what it speaks. */
async function probeBehaviour(p: Probing, h2Via: Reached['h2Via']): Promise<void> {
  const { result, opts, target } = p;
  if (opts.largePath) {
    try {
      result.large = await timeLarge(p.origin, h2Via, opts.largePath, opts);
    } catch (err) {
      p.problem(`--large ${opts.largePath}`, err);
    }
  }
  if (opts.waitIdleMs > 0) {
    result.idle = await watchIdleConnections(
      p.origin,
      h2Via,
      result.protocols['http/1.1'].supported === true,
      target.path,
      opts,
      p.problem,
    );
  }
}
