/**
 * The echo study's side experiments: a session's lifetime at both ends (idle timeouts, maximum age)
 * and the mTLS handshakes, with their tables and paragraph.
 */
import { medianInterpolated } from '../../core/index.ts';
import { type LoadOptionsInput, runLoad } from '../../load/index.ts';
import type { ConnectionLifetime, RunResult, StudySection } from '../../model/index.ts';
import { type FixtureTarget, startFixtureTarget } from '../../server/index.ts';
import type { Strategy as TransportStrategy } from '../../transport/index.ts';
import type { StudyContext } from '../study.ts';
import { rounded } from '../table.ts';
import type { EchoOptions } from './options.ts';
import { apiHeaders, type CertFiles, fixtureFor, roles } from './plan.ts';

/** One connection lifetime case: a run, and the lives of its sessions. */
export interface LifetimeCase {
  id: string;
  /** The case in a few words, for the table. */
  label: string;
  configured: string;
  run?: RunResult;
  lives: ConnectionLifetime[];
}

export function lifetimeSection(cases: LifetimeCase[]): StudySection {
  return {
    id: 'lifetime',
    title: 'Connection lifetime at both ends (HTTP/2 over mTLS, timestamps on the run clock)',
    note: "Each row is one session (#) of one run: when it was ready, when its last response ended, when the server's GOAWAY arrived, when it closed (ms since the run began), and who ended it. idle = GOAWAY (else close) − last response; age = close − opened. server idle: one request every 2× the longer timeout, the server's --h2-idle-timeout on; client idle: the same with the client's --idle-timeout, shorter than the server's; max age: 4 requests in flight without a pause, the client's --max-age on.",
    table: {
      columns: [
        { key: 'case', label: 'case' },
        { key: 'id', label: '#' },
        { key: 'opened', label: 'opened', unit: 'ms' },
        { key: 'last', label: 'last', unit: 'ms' },
        { key: 'goaway', label: 'GOAWAY', unit: 'ms' },
        { key: 'closed', label: 'closed', unit: 'ms' },
        { key: 'idle', label: 'idle', unit: 'ms' },
        { key: 'age', label: 'age', unit: 'ms' },
        { key: 'requests', label: 'req.' },
        { key: 'by', label: 'ended by' },
      ],
      rows: cases.flatMap((c) =>
        c.lives.map((l) => ({
          case: c.label,
          id: l.id,
          opened: rounded(l.openedMs),
          last: rounded(l.lastActiveMs),
          goaway: l.goawayMs !== undefined ? rounded(l.goawayMs) : null,
          closed: rounded(l.closedMs),
          idle: rounded((l.goawayMs ?? l.closedMs) - l.lastActiveMs),
          age: rounded(l.closedMs - l.openedMs),
          requests: l.requests,
          by: l.closedBy,
        })),
      ),
    },
    reference: {
      source: 'report 003, conclusions 2 and 4',
      table: {
        columns: [
          { key: 'control', label: 'control' },
          { key: 'report', label: 'what the report found' },
        ],
        rows: [
          {
            control: 'server idle timeout',
            report: 'the only bound (Tomcat Http2Protocol keepAliveTimeout)',
          },
          {
            control: 'client idle timeout / max age',
            report: 'none in Apache HttpClient 5: a session lives until the client closes',
          },
          { control: 'browser', report: 'idle connections closed after about 1 minute' },
        ],
      },
    },
  };
}

export function explainLifetime(cases: LifetimeCase[]): string {
  const parts: string[] = [];
  const byId = (id: string) => cases.find((c) => c.id === id);
  const server = byId('server-idle');
  const goaways = (server?.lives ?? []).filter((l) => l.closedBy === 'goaway' && l.goawayMs !== undefined);
  if (server && goaways.length > 0) {
    const idle = medianInterpolated(goaways.map((l) => l.goawayMs! - l.lastActiveMs));
    parts.push(
      `The server ended ${goaways.length} idle session${goaways.length > 1 ? 's' : ''} with GOAWAY(${goaways[0]!.goawayCode ?? '?'}) a median ${idle.toFixed(0)} ms after the last response (${server.configured}); ${server.run ? `the client needed ${server.lives.length} sessions for ${server.run.counts.ok} requests.` : ''}`,
    );
  } else if (server) {
    parts.push(
      `No session was ended by the server's idle timeout (${server.configured}): ${server.lives.map((l) => l.closedBy).join(', ') || 'no session closed'}.`,
    );
  }
  const idleCase = byId('client-idle');
  const retiredIdle = (idleCase?.lives ?? []).filter((l) => l.closedBy === 'idle-timeout');
  if (idleCase) {
    parts.push(
      retiredIdle.length > 0
        ? `The client's --idle-timeout (${idleCase.configured}) closed ${retiredIdle.length} session${retiredIdle.length > 1 ? 's' : ''} itself, a median ${medianInterpolated(retiredIdle.map((l) => l.closedMs - l.lastActiveMs)).toFixed(0)} ms after its last response and before the server's timeout: the control the report could not find in its client library.`
        : `The client's --idle-timeout (${idleCase.configured}) closed no session: ${idleCase.lives.map((l) => l.closedBy).join(', ') || 'none closed'}.`,
    );
  }
  const ageCase = byId('client-max-age');
  const retiredOld = (ageCase?.lives ?? []).filter((l) => l.closedBy === 'max-age');
  if (ageCase?.run) {
    const failed = ageCase.run.counts.failed;
    parts.push(
      retiredOld.length > 0
        ? `Under steady load, --max-age (${ageCase.configured}) retired ${retiredOld.length} session${retiredOld.length > 1 ? 's' : ''} at a median age of ${medianInterpolated(retiredOld.map((l) => l.closedMs - l.openedMs)).toFixed(0)} ms, each drained before it closed, with ${failed} of ${ageCase.run.counts.total} requests failed.`
        : `Under steady load --max-age (${ageCase.configured}) retired no session (${ageCase.run.counts.total} requests).`,
    );
  }
  return parts.join(' ');
}

/** The mTLS and ALPN facts: what each client negotiated, and that a client without a certificate is refused. */
export interface HandshakeCase {
  client: string;
  certificate: boolean;
  offered: string;
  negotiated: string;
  ok: number;
  outcome: string;
}

export function handshakeSection(rows: HandshakeCase[]): StudySection {
  return {
    id: 'mtls',
    title: 'mTLS and ALPN: what each client got from the echo server',
    note: 'One POST /echo per client against the fixture with client certificates required.',
    table: {
      columns: [
        { key: 'client', label: 'client' },
        { key: 'cert', label: 'client cert' },
        { key: 'offered', label: 'ALPN offered' },
        { key: 'negotiated', label: 'negotiated' },
        { key: 'ok', label: 'responses' },
        { key: 'outcome', label: 'outcome' },
      ],
      rows: rows.map((r) => ({
        client: r.client,
        cert: r.certificate ? 'yes' : 'no',
        offered: r.offered,
        negotiated: r.negotiated,
        ok: r.ok,
        outcome: r.outcome,
      })),
    },
    reference: {
      source: 'report 003, `curl -v` against its two endpoints',
      table: {
        columns: [
          { key: 'endpoint', label: 'endpoint' },
          { key: 'curl', label: 'curl -v said' },
        ],
        rows: [
          { endpoint: 'HTTP/1.1 (port 8443)', curl: 'ALPN, server did not agree to a protocol' },
          { endpoint: 'HTTP/2 (port 9443)', curl: 'ALPN, server accepted to use h2' },
        ],
      },
    },
  };
}

export async function handshakes(target: FixtureTarget, certs: CertFiles): Promise<HandshakeCase[]> {
  const s = roles();
  const cases: Array<{ strategy: TransportStrategy; cert: boolean }> = [
    { strategy: s.h1, cert: true },
    { strategy: s.one, cert: true },
    { strategy: s.one, cert: false },
  ];
  const out: HandshakeCase[] = [];
  for (const c of cases) {
    const r = await runLoad({
      url: `${target.tlsUrl}/echo`,
      protocol: c.strategy.name,
      method: 'POST',
      bodySizeBytes: 64,
      requests: 2,
      concurrency: 1,
      ca: certs.caFile,
      ...(c.cert ? { cert: certs.certFile, key: certs.keyFile } : {}),
      timeoutMs: 5000,
      connectTimeoutMs: 5000,
    }).done;
    const failures = Object.entries(r.counts.byFailure ?? {})
      .filter(([, n]) => (n as number) > 0)
      .map(([k, n]) => `${k} ×${n}`);
    out.push({
      client: `${c.strategy.name} (${c.strategy.summary})`,
      certificate: c.cert,
      offered: c.strategy.requests.tls,
      negotiated: r.protocol.negotiated,
      ok: r.counts.ok,
      outcome: r.error
        ? `refused: ${r.error.code}`
        : r.counts.ok > 0
          ? 'answered'
          : `no response (${failures.join(', ') || 'nothing sent'})`,
    });
  }
  return out;
}

export async function lifetimes(
  ctx: StudyContext,
  certs: CertFiles,
  o: EchoOptions,
): Promise<LifetimeCase[]> {
  const s = roles();
  const target = await startFixtureTarget(
    fixtureFor(certs, 'browser', { h2IdleTimeoutMs: o.serverIdleMs }),
    'thread',
  );
  const cases: LifetimeCase[] = [];
  const base: LoadOptionsInput = {
    url: `${target.tlsUrl}/echo`,
    protocol: s.one.name,
    method: 'POST',
    bodySizeBytes: 1024,
    headers: apiHeaders(o.headerBytes),
    ca: certs.caFile,
    cert: certs.certFile,
    key: certs.keyFile,
  };
  // Three requests a gap apart, the gap twice the longer idle timeout: each session goes idle.
  const gapMs = 2 * Math.max(o.serverIdleMs, o.clientIdleMs);
  const sparse = { rateRps: 1000 / gapMs, durationMs: 2 * gapMs + 1 };
  const run = async (id: string, label: string, configured: string, opts: LoadOptionsInput) => {
    const r = await ctx.cell(
      `lifetime-${id}`,
      async () => {
        const res = await runLoad({ ...base, ...opts }).done;
        if (res.error) throw new Error(`${res.error.code}: ${res.error.message}`);
        return res;
      },
      { weight: 4 },
    );
    cases.push({
      id,
      label,
      configured,
      ...(r ? { run: r } : {}),
      lives: r?.connections.lifetimes?.connections ?? [],
    });
  };
  try {
    const sIdle = `server --h2-idle-timeout ${o.serverIdleMs} ms`;
    await run('server-idle', `server idle ${o.serverIdleMs} ms`, sIdle, sparse);
    await run(
      'client-idle',
      `client idle ${o.clientIdleMs} ms`,
      `--idle-timeout ${o.clientIdleMs} ms, ${sIdle}`,
      {
        ...sparse,
        idleTimeoutMs: o.clientIdleMs,
      },
    );
    await run('client-max-age', `max age ${o.maxAgeMs} ms`, `--max-age ${o.maxAgeMs} ms, 4 in flight`, {
      concurrency: 4,
      durationMs: 4 * o.maxAgeMs,
      maxAgeMs: o.maxAgeMs,
    });
  } finally {
    await target.close();
  }
  return cases;
}
