/** The echo study's findings against the report's conclusions, and their verification. */
import { medianInterpolated } from '../../core/index.ts';
import type { StudyFinding, StudyResult } from '../../model/index.ts';
import { accounts, type Direction, direction, directionProblem, wouldTell } from '../claims.ts';
import { Evidence, evidenceNumber, makeFinding, notMeasured } from '../findings.ts';
import { LITTLE_TOLERANCE, type Machine, machineBusy, mechanisms, reportWindow } from './explain.ts';
import type { HandshakeCase, LifetimeCase } from './lifetime.ts';
import { type EchoOptions, REPORT, VARIANT_LABEL, type Variant } from './options.ts';
import { bodyLabel, latencyRatio, presetDecision, type Row, throughputRatio } from './rows.ts';

/**
 * One finding per row of the report's conclusions 5 and 6: each variant's latency and throughput, from
 * the rows of a run (exported for the tests that feed it rows of other machines).
 */
export function echoFindings(
  rows: readonly Row[],
  o: EchoOptions,
  top: number,
  machine: Machine,
): StudyFinding[] {
  const out: StudyFinding[] = [];
  const w = reportWindow(o.windows);
  for (const body of o.bodies) {
    const large = body >= 64 * 1024;
    const ref = large ? REPORT.large : REPORT.small;
    for (const rr of ref) {
      const v = rr.variant as Variant;
      const r = rows.find(
        (x) => x.body === body && x.window === w && x.variant === v && x.concurrency === top,
      );
      for (const metric of ['latency', 'throughput'] as const) {
        const ev = new Evidence();
        ev.set('bodyBytes', body).set('window', w).set('concurrency', top);
        const refValue = metric === 'latency' ? rr.latency : rr.throughput;
        const value = r && (metric === 'latency' ? latencyRatio(r) : throughputRatio(r));
        const what = metric === 'latency' ? 'latency h1/h2' : 'throughput h2/h1';
        const row = `${large ? '1 MB' : '1 KB'} bodies, ${VARIANT_LABEL[v]}: ${what}`;
        const common = {
          id: `${large ? 'large' : 'small'}-${v}-${metric}`,
          section: `summary-${body}`,
          row,
          report: ev.x('reportRatio', refValue),
          ev,
        };
        if (!r || value === undefined) {
          out.push(notMeasured(common, 'not measured: the comparison did not finish'));
          continue;
        }
        const m = mechanisms(r, metric, rows, o, machine, ev);
        const decision = metric === 'latency' ? r.latency : r.throughput;
        // The decision's side in the finding's orientation: latency is shown h1/h2, decided h2/h1.
        const decided = decision ? direction(decision) : 'undecided';
        const side =
          metric === 'latency' && (decided === 'above' || decided === 'below')
            ? decided === 'above'
              ? 'below'
              : 'above'
            : decided;
        if (decision) ev.set('outcome', decision.outcome);
        const wentReport = refValue >= 1 ? 'above' : 'below';
        const way =
          side === 'undecided'
            ? `the runs decide no direction: ${decision ? wouldTell(decision, ev) : 'not compared'}`
            : Math.abs(refValue - 1) < 0.05
              ? side === 'same'
                ? 'the runs decided no clear difference, as the report saw none'
                : 'the runs decided a difference, the report saw none'
              : side === 'same'
                ? 'the runs decided no clear difference, where the report saw one'
                : side === wentReport
                  ? 'the runs decided the same direction as the report'
                  : 'the runs decided the opposite direction to the report';
        out.push(
          makeFinding({
            ...common,
            measured: `${ev.x('ratio', value)} (windows ${w}, ${top} in flight; ${way})`,
            reference: refValue,
            value,
            tolerance: 0.2,
            ratio: true,
            ...(decision ? { decision } : {}),
            explain: () => (m.accounts ? `${capital(m.text.join('; '))}.` : undefined),
            unexplained: `${m.text.join('; ') || 'this run measured nothing that bears on it'} — none of which accounts for the ${ev.x('ratio', value)}`,
          }),
        );
      }
    }
  }
  return out;
}

/** The report's rows this run does not measure, each with its reason in one line. */
export function echoUnmeasured(o: EchoOptions, top: number): StudyFinding[] {
  const ev = new Evidence();
  const h1 = o.h1Connections === 'concurrency' ? top : Math.min(o.h1Connections, top);
  const factors = notMeasured(
    {
      id: 'report-factors',
      row: '1 KB bodies: HTTP/2 6.8× lower latency, 12.7× (one session) and 22.9× (independent clients) the throughput',
      report: `${ev.x('reportOne', 12.7)} and ${ev.x('reportIndependent', 22.9)} the throughput`,
      ev,
    },
    `not reproduced as a controlled cell, because the report's HTTP/1.1 pool size and concurrency are not recorded: the rows above run the likeliest cause, ${ev.n('h1Connections', h1)} HTTP/1.1 connections (Apache HttpClient 5's default per route) for ${ev.n('inFlight', top)} callers, and show what remains of it here`,
    'the report did not record the client settings that would make its factors a cell to rerun',
  );
  const bev = new Evidence();
  const browser = notMeasured(
    {
      id: 'lifetime-browser',
      row: 'Browsers close idle connections after about a minute',
      report: `idle connections closed after about ${bev.n('reportIdleMinutes', 1)} minute`,
      ev: bev,
    },
    'not measured here, because this study drives no browser (the tiles study does, in bursts that never leave a connection idle for a minute)',
    'no browser idles a connection in this study',
  );
  return [factors, browser];
}

/** The report's conclusions 2 and 4 (who can bound a session's life) and its curl -v ALPN lines. */
export function lifetimeFindings(
  cases: readonly LifetimeCase[],
  hs: readonly HandshakeCase[] | undefined,
  o: EchoOptions,
): StudyFinding[] {
  const out: StudyFinding[] = [];
  const server = cases.find((c) => c.id === 'server-idle');
  if (server) {
    const ev = new Evidence();
    const g = server.lives.filter((l) => l.closedBy === 'goaway' && l.goawayMs !== undefined);
    const idle = g.length ? medianInterpolated(g.map((l) => l.goawayMs! - l.lastActiveMs)) : Number.NaN;
    out.push(
      makeFinding({
        id: 'lifetime-server',
        section: 'lifetime',
        row: 'The server can bound an HTTP/2 connection’s life (Tomcat Http2Protocol keepAliveTimeout)',
        report: 'the only bound the report found',
        measured: g.length
          ? `the server's idle timeout ended ${ev.n('goaways', g.length)} session(s) with GOAWAY a median ${ev.ms('idleMs', idle)} after the last response (server --h2-idle-timeout ${ev.ms('serverIdleMs', o.serverIdleMs)})`
          : `no session was ended by the server's idle timeout (${ev.ms('serverIdleMs', o.serverIdleMs)})`,
        verdict: g.length ? 'agrees' : 'differs',
        explain: () =>
          g.length
            ? 'A server’s idle timeout closes an idle HTTP/2 session with GOAWAY whatever the client does, as the report found'
            : undefined,
        unexplained: 'no GOAWAY arrived within the idle case',
        ev,
      }),
    );
  }
  const idleCase = cases.find((c) => c.id === 'client-idle');
  const ageCase = cases.find((c) => c.id === 'client-max-age');
  if (idleCase || ageCase) {
    const ev = new Evidence();
    const idleClosed = (idleCase?.lives ?? []).filter((l) => l.closedBy === 'idle-timeout').length;
    const aged = (ageCase?.lives ?? []).filter((l) => l.closedBy === 'max-age').length;
    out.push(
      makeFinding({
        id: 'lifetime-client',
        section: 'lifetime',
        row: 'The client cannot bound a session’s life (no idle timeout or TTL in Apache HttpClient 5)',
        report: 'no client-side control found; only closing the client instance closed its connection',
        measured: `h2lab's client closed ${ev.n('idleClosed', idleClosed)} idle session(s) itself (--idle-timeout) and retired ${ev.n('aged', aged)} by age under load (--max-age)`,
        verdict: idleClosed + aged > 0 ? 'differs' : 'agrees',
        explain: () =>
          idleClosed + aged > 0
            ? 'Nothing in HTTP/2 stops a client from closing its own sessions: the limit the report met was its client library’s, not the protocol’s'
            : undefined,
        unexplained: 'h2lab’s client controls closed no session in this run',
        ev,
      }),
    );
  }
  if (hs) {
    const ev = new Evidence();
    const h1 = hs.find((h) => h.offered === 'http/1.1' && h.certificate);
    const h2 = hs.find((h) => h.offered.includes('h2') && h.certificate);
    const noCert = hs.find((h) => !h.certificate);
    const ok = h1?.negotiated === 'http/1.1' && h2?.negotiated === 'h2' && noCert?.ok === 0;
    out.push(
      makeFinding({
        id: 'mtls-alpn',
        section: 'mtls',
        row: 'curl -v: “server did not agree to a protocol” (HTTP/1.1 endpoint), “server accepted to use h2” (HTTP/2 endpoint), both behind mTLS',
        report: 'two endpoints, one offering only HTTP/1.1, one h2, client certificates required',
        measured: `HTTP/1.1 client: ${h1?.negotiated ?? 'not measured'}; HTTP/2 client: ${h2?.negotiated ?? 'not measured'}; without a client certificate: ${noCert?.outcome ?? 'not measured'}`,
        verdict: ok ? 'agrees' : 'differs',
        explain: () =>
          ok
            ? `ALPN (RFC ${ev.n('rfc', 7301)}) gives each client the protocol it offered that the server accepts, after the client certificate is verified; one listener here serves both, where the report ran two endpoints`
            : undefined,
        unexplained: 'the handshakes did not come out as the report’s',
        ev,
      }),
    );
  }
  return out;
}

const capital = (t: string) => t.charAt(0).toUpperCase() + t.slice(1);

/** The echo findings checked against the result's own rows and tables. */
export function verifyEcho(r: StudyResult): string[] {
  const problems: string[] = [];
  for (const f of r.findings) {
    // The presets' words against compare's decision between them (node's runs against max's).
    const preset = f.evidence.presetOutcome;
    if (evidenceNumber(f, 'nodeRatio') !== undefined && evidenceNumber(f, 'maxRatio') !== undefined) {
      if (/flow control decides/.test(f.explanation) && preset !== 'better')
        problems.push(`${f.id}: flow control named although the runs decided ${String(preset ?? 'nothing')}`);
      if (/flow control did not decide/.test(f.explanation) && preset !== 'no-clear-difference')
        problems.push(
          `${f.id}: flow control ruled out although the runs decided ${String(preset ?? 'nothing')}`,
        );
      if (/larger windows did worse/.test(f.explanation) && preset !== 'worse')
        problems.push(`${f.id}: larger windows said worse, the runs decided ${String(preset ?? 'nothing')}`);
    }
    // The direction the measured words give against the row's own decision.
    if (f.evidence.outcome !== undefined) {
      const way = f.measured.match(/the runs (decided [^;)]*|decide no direction)/)?.[1] ?? '';
      const o = f.evidence.outcome;
      const ok =
        o === 'undecided' || o === 'insufficient'
          ? way === 'decide no direction'
          : o === 'no-clear-difference'
            ? way.startsWith('decided no clear difference')
            : way.startsWith('decided the same direction') ||
              way.startsWith('decided the opposite') ||
              way.startsWith('decided a difference');
      if (!ok) problems.push(`${f.id}: the words say "the runs ${way}", the runs decided ${String(o)}`);
    }
    if (/follows CPU per request/.test(f.explanation)) {
      const p = evidenceNumber(f, 'cpuPredictedRatio');
      const m = evidenceNumber(f, 'throughputRatio');
      if (p === undefined || m === undefined || Math.abs(m / p - 1) > 0.2)
        problems.push(`${f.id}: CPU named, but CPU per request predicts ${p} against ${m}`);
    }
    problems.push(...verifyLoopAndLittle(f, r.findings));
    const section = r.sections.find((s) => s.id === f.section);
    const ratio = evidenceNumber(f, 'ratio');
    if (section && ratio !== undefined) {
      const v = (Object.keys(VARIANT_LABEL) as Variant[]).find((k) => f.row.includes(VARIANT_LABEL[k]));
      const row = section.table.rows.find((x) => x.variant === (v && VARIANT_LABEL[v]));
      const key = `${f.id.endsWith('latency') ? 'lat' : 'thr'}-${String(f.evidence.window)}`;
      const cell = row?.[key];
      if (typeof cell === 'number' && Math.abs(cell - ratio) > 0.006)
        problems.push(`${f.id}: ratio ${ratio} is not the table's ${cell}`);
    }
  }
  // The paragraphs too: flow control named for a body whose unstalled preset did no better.
  const rows = (r.data.rows ?? []) as Row[];
  for (const body of new Set(rows.map((x) => x.body))) {
    const top = Math.max(...rows.filter((x) => x.body === body).map((x) => x.concurrency));
    const one = rows.filter(
      (x) => x.body === body && x.variant === 'one' && x.concurrency === top && x.throughput,
    );
    if (one.length < 2) continue;
    const stalled = (x: Row) => x.h2.stalledShare ?? 0;
    const most = one.reduce((a, b) => (stalled(b) > stalled(a) ? b : a));
    const least = one.reduce((a, b) => (stalled(b) < stalled(a) ? b : a));
    const paragraph = r.explanation.find((p) => p.startsWith(`${bodyLabel(body)} bodies`));
    // What the paragraph says of the presets, against compare's decision over their runs.
    const d = presetDecision(most, least);
    const unstalledSame = one.find((x) => {
      const y = x !== most && stalled(x) <= 0.05 ? presetDecision(most, x) : undefined;
      return y !== undefined && (direction(y) === 'same' || direction(y) === 'below');
    });
    const names = paragraph && /flow control decides|the direction of flow control/.test(paragraph);
    if (names && (unstalledSame || !d))
      problems.push(
        `${bodyLabel(body)}: flow control named although ${unstalledSame ? `an unstalled preset ("${unstalledSame.window}") was decided no better` : 'the runs of the presets decide nothing (none kept)'}`,
      );
    if (paragraph && d && !unstalledSame) {
      const said: Direction | undefined = /flow control decides part of this result/.test(paragraph)
        ? 'above'
        : /the direction of flow control, not yet a result/.test(paragraph)
          ? 'undecided'
          : /without costing throughput/.test(paragraph)
            ? 'same'
            : /flow control does not explain that/.test(paragraph)
              ? 'below'
              : undefined;
      const q = said && directionProblem(`${bodyLabel(body)} presets`, said, d);
      if (q) problems.push(q);
    }
    if (paragraph) problems.push(...verifyBodyParagraph(body, paragraph, one, rows));
  }
  const life = r.sections.find((s) => s.id === 'lifetime');
  for (const row of life?.table.rows ?? [])
    if (
      typeof row.opened === 'number' &&
      typeof row.last === 'number' &&
      row.requests !== 0 &&
      row.opened > row.last
    )
      problems.push(
        `lifetime ${String(row.case)} #${String(row.id)}: opened ${row.opened} ms after its last response ${row.last} ms`,
      );
  return problems;
}

/**
 * A body's paragraph against its rows: it headlines the findings' window preset; "that queue is the
 * latency HTTP/2's streams avoid" only where one session's latency was lower by its interval; "the
 * others' data kept the connection busy" only where the connection's window never stalled.
 */
function verifyBodyParagraph(
  body: number,
  paragraph: string,
  one: readonly Row[],
  rows: readonly Row[],
): string[] {
  const problems: string[] = [];
  const label = bodyLabel(body);
  const windows = [...new Set(rows.map((x) => x.window))];
  const w = reportWindow(windows);
  const said = paragraph.match(/\(windows "(\w+)"\)/)?.[1];
  if (said && said !== w)
    problems.push(`${label}: the paragraph headlines windows "${said}", the findings "${w}"`);
  const head = one.find((x) => x.window === (said ?? w));
  if (/that queue is the latency HTTP\/2's streams avoid/.test(paragraph) && head?.latency) {
    const i = head.latency.interval;
    if (direction(head.latency) !== 'below')
      problems.push(
        `${label}: "that queue is the latency HTTP/2's streams avoid", but HTTP/2's latency ratio was ${i.ratio.toFixed(2)} (${i.lo.toFixed(2)}–${i.hi.toFixed(2)})`,
      );
  }
  if (/others' data kept the connection busy/.test(paragraph)) {
    const stalls = Math.max(...one.map((x) => x.h2.connectionStalls ?? 0));
    if (stalls > 0)
      problems.push(
        `${label}: "the others' data kept the connection busy", with ${Math.round(stalls)} connection-window stalls`,
      );
  }
  return problems;
}

/**
 * A finding that names a bottleneck loop must show it busy in both runs; one that says latency
 * follows throughput (Little's law) must show the medians within 20% of the throughput ratio, and
 * when it calls that an explanation, the same variant's throughput row must be explained too.
 */
function verifyLoopAndLittle(f: StudyFinding, all: readonly StudyFinding[]): string[] {
  const problems: string[] = [];
  const side = f.evidence.bottleneck;
  if (/was the bottleneck/.test(f.explanation)) {
    const key = side === 'server' ? 'ServerElu' : 'ClientElu';
    const floor = evidenceNumber(f, 'busyLoop') ?? 1;
    const busy = [evidenceNumber(f, `h1${key}`), evidenceNumber(f, `h2${key}`)];
    if (typeof side !== 'string' || busy.some((u) => u === undefined || u < floor))
      problems.push(
        `${f.id}: the ${String(side)} loop named the bottleneck, but it was busy ${busy.join(' and ')}`,
      );
  }
  if (/cores were the limit, so throughput follows/.test(f.explanation)) {
    const m = { cpus: evidenceNumber(f, 'cpus') ?? 0, loadAverage: evidenceNumber(f, 'loadAverage') ?? 0 };
    const cores = [evidenceNumber(f, 'h1Cores'), evidenceNumber(f, 'h2Cores')];
    const same = cores[0] !== undefined && cores[1] !== undefined && Math.abs(cores[1] / cores[0] - 1) <= 0.2;
    if (m.cpus <= 0 || !machineBusy(m, cores) || !same)
      problems.push(
        `${f.id}: the machine's cores named the limit, but load ${m.loadAverage} on ${m.cpus} cores and the process at ${cores.join(' and ')}`,
      );
  }
  if (/latency follows throughput/.test(f.explanation)) {
    const p = evidenceNumber(f, 'littlePredicted');
    const m = evidenceNumber(f, 'medianLatencyRatio');
    const mean = evidenceNumber(f, 'meanLatencyRatio');
    for (const x of [m, mean])
      if (p === undefined || x === undefined || !accounts(p, x, { tolerance: LITTLE_TOLERANCE, ratio: true }))
        problems.push(`${f.id}: latency said to follow throughput, but ${x} against ${p}`);
    const sibling = all.find((x) => x.id === f.id.replace(/-latency$/, '-throughput'));
    if (f.explained && !/whose own ratio/.test(f.explanation) && sibling && !sibling.explained)
      problems.push(`${f.id}: explained through a throughput ratio its own row leaves unexplained`);
  }
  return problems;
}
