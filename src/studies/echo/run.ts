/**
 * `h2lab study echo`: request/response echo behind mutual TLS (report 003). The fixture's `POST /echo`
 * with client certificates required (a CA, a server and a client certificate, as `h2lab certs` makes
 * them), 1 KiB and 1 MiB bodies plus ~300 B of request headers, driven by
 *
 *   h1           a pool of HTTP/1.1 connections (one per request in flight by default)
 *   h2           one HTTP/2 session carrying every request as a stream
 *   h2 leased    a pool of K sessions opened at the start, each carrying one exchange at a time
 *                (h2-pool's `lease` policy; a request waits for an idle session): the report's
 *                "library pool" as Apache HttpClient 5's pooling manager had it — an HTTP/2
 *                connection leased like an HTTP/1.1 one (sharing one connection between concurrent
 *                exchanges came to that library only later, as an experimental pool), K = 5, its
 *                default per route
 *   h2 indep.    as many sessions as requests in flight, opened before the run, each request on one
 *                with nothing in flight: the steady state of the report's pool of independent HTTP/2
 *                clients ("each caller takes a free one or creates one"). Not `first-free`: that
 *                policy opens its sessions on demand inside the timed period, and h2lab's runs are
 *                short and open their connections afresh, so it would be charged handshakes that the
 *                report's long-lived pool paid once (mTLS handshakes took 75–180 ms at the median on
 *                a loaded two-core machine).
 *
 * with the HTTP/2 flow-control windows of both ends (node / browser / max) as an axis, so the 1 MiB
 * result comes with the stalls the client measured; then the lifetime of a session at both ends: the
 * server's idle timeout (GOAWAY) and the client's `--idle-timeout` / `--max-age`, with timestamps.
 */
import os from 'node:os';
import { invalidOption } from '../../core/index.ts';
import type { StudyResult, WorkloadInput } from '../../model/index.ts';
import { checkNetAvailable } from '../../net/index.ts';
import { startFixtureTarget } from '../../server/index.ts';
import { quickCaveat } from '../caveats.ts';
import { compareCell } from '../compare-cell.ts';
import { defineStudy, type Rederived } from '../study.ts';
import { ECHO_STUDY } from './descriptor.ts';
import { explainBody } from './explain.ts';
import { echoFindings, echoUnmeasured, lifetimeFindings, verifyEcho } from './findings.ts';
import {
  explainLifetime,
  type HandshakeCase,
  handshakeSection,
  handshakes,
  lifetimeSection,
  lifetimes,
} from './lifetime.ts';
import { assumptions, type EchoOptions, resolve } from './options.ts';
import { apiHeaders, fixtureFor, headerWireBytes, makeCertificates, roles } from './plan.ts';
import { bodyLabel, cellSection, type Row, rowsOf, summarySection, windowSection } from './rows.ts';

/**
 * The findings and paragraphs of a saved run from its rows (data.rows keeps each row's comparisons):
 * the comparisons' findings and paragraphs as this code words them; the lifetime and mTLS findings
 * and the lifetime paragraph as saved, since the rows do not carry their runs.
 */
function rederiveEcho(r: StudyResult): Rederived | undefined {
  const rows = r.data.rows as Row[] | undefined;
  const machine = r.data.machine as
    | { cpus: number; loadAverage1m: { before: number; after: number } }
    | undefined;
  if (!rows?.length || !machine) return undefined;
  const o = resolve(r.options as Partial<EchoOptions>, r.mode === 'quick');
  const top = Math.max(...o.concurrency);
  const bodies = o.bodies.filter((b) => rows.some((x) => x.body === b));
  const m = {
    cpus: machine.cpus,
    loadAverage: Math.min(machine.loadAverage1m.before, machine.loadAverage1m.after),
  };
  const fresh = [...echoFindings(rows, o, top, m), ...echoUnmeasured(o, top)];
  const ids = new Set(fresh.map((f) => f.id));
  const paragraphs = [
    assumptions(o, top),
    ...bodies.map((b) =>
      explainBody(
        b,
        rows.filter((x) => x.body === b),
        o.windows,
        top,
        o,
      ),
    ),
  ];
  return {
    findings: [...fresh, ...r.findings.filter((f) => !ids.has(f.id))],
    explanation: [...paragraphs, ...r.explanation.slice(paragraphs.length)],
  };
}

export const echoStudy = defineStudy<EchoOptions>({
  ...ECHO_STUDY,
  verify: verifyEcho,
  rederive: rederiveEcho,
  quickLimits: (o) => quickCaveat(o.runs - 1, o.runs),
  resolve,
  check(o) {
    if (o.rttMs !== undefined) checkNetAvailable('relay');
    if (o.clientIdleMs >= o.serverIdleMs)
      throw invalidOption(
        '--idle-timeout',
        `${o.clientIdleMs}ms`,
        `use less than --server-idle-timeout (${o.serverIdleMs} ms), or the server closes the session first and the client's timeout is never seen`,
      );
  },
  async run(ctx) {
    const o = ctx.options;
    const loadBefore = os.loadavg()[0]!;
    const s = roles();
    const headers = apiHeaders(o.headerBytes);
    const certs = await makeCertificates(ctx.tmpDir);
    const perComparison = (n: number) => n * o.concurrency.length * o.runs;
    ctx.plan(2 + o.windows.length * o.bodies.length * (perComparison(3) + perComparison(2)) + 3 * 4);
    ctx.setData('settings', {
      headers,
      headerWireBytes: headerWireBytes(headers),
      h1Connections: o.h1Connections,
      sharedPool: { sessions: o.h2Sessions, policy: 'lease', streamsPerSession: 1 },
      independentPool: {
        sessions: 'concurrency (capped per cell)',
        policy: 'least-busy',
        openedBeforeRun: true,
      },
      clientAuth: 'require',
      ...(o.rttMs !== undefined ? { rttMs: o.rttMs } : { link: 'loopback' }),
    });
    ctx.log(
      `mTLS: a CA, a server and a client certificate generated; ${headerWireBytes(headers)} B of extra headers per request`,
    );

    ctx.explain(assumptions(o, Math.max(...o.concurrency)));
    const rows: Row[] = [];
    let handshakeDone = false;
    let handshakeData: HandshakeCase[] | undefined;
    for (const window of o.windows) {
      const fixture = fixtureFor(certs, window);
      const target = await startFixtureTarget(fixture, 'thread');
      try {
        if (!handshakeDone) {
          handshakeDone = true;
          const hs = await ctx.cell('mtls', () => handshakes(target, certs), { weight: 2 });
          if (hs) {
            handshakeData = hs;
            ctx.section(handshakeSection(hs));
            ctx.setData('mtls', hs);
          }
        }
        for (const body of o.bodies) {
          const workload: WorkloadInput = {
            id: `echo-${body}`,
            label: `echo ${bodyLabel(body)}`,
            paths: ['/echo'],
            method: 'POST',
            bodySizeBytes: body,
            responseSizeBytes: body,
            headers,
          };
          const common = {
            concurrency: o.concurrency,
            h1Connections: o.h1Connections,
            runs: o.runs,
            durationMs: o.durationMs,
            window,
            workloads: [workload],
            tls: { ca: certs.caFile, cert: certs.certFile, key: certs.keyFile },
            ...(o.rttMs !== undefined ? { links: { rttMs: [o.rttMs] } } : {}),
          };
          const hooks = { target, fixture };
          const shared = await compareCell(
            ctx,
            `${bodyLabel(body).replace(' ', '')}-${window}-shared`,
            {
              ...common,
              protocols: [s.h1.name, s.one.name, s.pool.name],
              h2PoolPolicy: 'lease',
              h2PoolSessions: o.h2Sessions,
            },
            hooks,
            perComparison(3),
          );
          const independent = await compareCell(
            ctx,
            `${bodyLabel(body).replace(' ', '')}-${window}-independent`,
            {
              ...common,
              protocols: [s.h1.name, s.pool.name],
              h2PoolPolicy: 'least-busy',
              h2PoolSessions: Math.max(...o.concurrency),
            },
            hooks,
            perComparison(2),
          );
          const these: Row[] = [
            ...(shared
              ? rowsOf(
                  shared,
                  body,
                  window,
                  [
                    ['one', s.one.name],
                    ['shared', s.pool.name],
                  ],
                  o.concurrency,
                )
              : []),
            ...(independent
              ? rowsOf(independent, body, window, [['independent', s.pool.name]], o.concurrency)
              : []),
          ];
          rows.push(...these);
          for (const c of [shared, independent])
            for (const cell of c?.cells ?? [])
              if (cell.stats && cell.stats.saturatedRuns > 0)
                ctx.warn(
                  `${cell.id}: the load client was probably the bottleneck in ${cell.stats.saturatedRuns} of ${cell.stats.runsKept} runs (the client and the server share this machine's cores)`,
                );
          if (these.length > 0) ctx.section(cellSection(body, window, these, o));
        }
      } finally {
        await target.close();
      }
    }
    ctx.setData('rows', rows);
    const top = Math.max(...o.concurrency);
    for (const body of o.bodies) {
      const mine = rows.filter((r) => r.body === body);
      if (mine.length === 0) continue;
      ctx.section(summarySection(body, mine, o.windows, top));
      ctx.section(windowSection(body, mine, o.windows, top));
      ctx.explain(explainBody(body, mine, o.windows, top, o));
    }
    // The machine's cores and load feed the CPU mechanisms (the load warning is the harness's).
    const loadAfter = os.loadavg()[0]!;
    const cpus = os.availableParallelism();
    for (const f of echoFindings(rows, o, top, { cpus, loadAverage: Math.min(loadBefore, loadAfter) }))
      ctx.finding(f);
    for (const f of echoUnmeasured(o, top)) ctx.finding(f);
    ctx.setData('machine', { cpus, loadAverage1m: { before: loadBefore, after: loadAfter } });
    const cases = await lifetimes(ctx, certs, o);
    ctx.setData(
      'lifetime',
      cases.map(({ run: _run, ...c }) => c),
    );
    if (cases.some((c) => c.lives.length > 0)) {
      ctx.section(lifetimeSection(cases));
      ctx.explain(explainLifetime(cases));
    }
    for (const f of lifetimeFindings(cases, handshakeData, o)) ctx.finding(f);
  },
});
