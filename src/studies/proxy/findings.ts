/** The proxy study's findings against the report's, and their verification. */
import { sizeWorkload } from '../../compare/index.ts';
import { parseBytes } from '../../core/index.ts';
import type { StudyFinding, StudyResult } from '../../model/index.ts';
import { baselineStrategy, multiplexedStrategy } from '../../transport/index.ts';
import { type Direction, directionProblem, wouldTell } from '../claims.ts';
import { Evidence, evidenceNumber, makeFinding, notMeasured } from '../findings.ts';
import { outcomeWord } from '../table.ts';
import {
  BROKEN,
  BUFFERS,
  FIXED,
  LARGE_BYTES,
  PROXY_REPORT,
  type ProxyConfig,
  type ProxyOptions,
} from './options.ts';
import type { Spool } from './plan.ts';
import { type Churn, type ConfigResult, med, p50s, speedup, whereOf } from './tables.ts';

// --- row by row against the report ----------------------------------------------------------

/** Bytes nginx can hold in memory for one response: proxy_buffers plus proxy_buffer_size. */
function memoryFor(b: keyof typeof BUFFERS): number {
  const x = BUFFERS[b];
  return x.memoryBytes + parseBytes(x.bufferSize, 'proxy_buffer_size');
}

/**
 * After both fixes, HTTP/1.1 against HTTP/2 ("0.22 s against 0.24 s": parity), and the report's
 * other nginx settings this study does not vary.
 */
function afterFixRows(f1: number | undefined, f2: number | undefined): StudyFinding[] {
  const out: StudyFinding[] = [];
  {
    const ev = new Evidence();
    const reportGap = PROXY_REPORT.afterS / PROXY_REPORT.afterH2S;
    out.push(
      f1 !== undefined && f2 !== undefined
        ? makeFinding({
            id: 'after-parity',
            section: 'summary',
            row: 'After both fixes, HTTP/1.1 against HTTP/2 (“0.22 s against 0.24 s”)',
            report: `h1/h2 ${ev.x('reportRatio', reportGap)} (${ev.s('reportH1S', PROXY_REPORT.afterS)} against ${ev.s('reportH2S', PROXY_REPORT.afterH2S)})`,
            measured: `h1/h2 ${ev.x('ratio', f1 / f2)} (${ev.ms('h1Ms', f1)} against ${ev.ms('h2Ms', f2)})`,
            reference: reportGap,
            value: f1 / f2,
            tolerance: 0.15,
            ratio: true,
            explain: () => undefined,
            unexplained:
              'the report’s parity is a client over the internet; here both protocols end at the same nginx on this machine, and what separates them is each client’s CPU per byte, which this row does not break down',
            ev,
          })
        : notMeasured(
            {
              id: 'after-parity',
              section: 'summary',
              row: 'After both fixes, HTTP/1.1 against HTTP/2',
              report: 'h1/h2 0.22 s against 0.24 s',
              ev,
            },
            'not measured: the fixed configuration did not finish',
          ),
    );
  }
  out.push(
    notMeasured(
      {
        id: 'tcp-nodelay',
        row: 'tcp_nodelay / tcp_nopush (the report’s other nginx settings)',
        report: 'named among the settings checked',
        ev: new Evidence(),
      },
      'not measured here, because the four configurations vary upstream keep-alive and proxy buffers only; nginx’s own defaults (tcp_nodelay on, tcp_nopush off) stay as they are in all of them',
      'no configuration varies them',
    ),
  );
  return out;
}

/** The report's figures, each answered with this run's at the largest concurrency. */
export function proxyFindings(results: ConfigResult[], o: ProxyOptions, seed: number): StudyFinding[] {
  const out: StudyFinding[] = [];
  const by = (id: string) => results.find((r) => r.config.id === id);
  const big = sizeWorkload(LARGE_BYTES).id;
  const c = o.concurrency.at(-1)!;
  const h1 = baselineStrategy().name;
  const h2 = multiplexedStrategy('one')!.name;
  const broken = by(BROKEN.id);
  const fixed = by(FIXED.id);
  const t = (r: ConfigResult | undefined, p: string) => med(p50s(r, big, c, p));
  const where = (ev: Evidence) => whereOf(o, ev);
  const churn = (ev: Evidence) =>
    broken?.churn && fixed?.churn
      ? `nginx opened ${ev.d2('brokenConnsPerRequest', broken.churn.perRequest)} upstream connections a request before the fix and ${ev.d2('fixedConnsPerRequest', fixed.churn.perRequest)} after`
      : 'the upstream connections were not counted';
  // 1. The before-fix times and the protocol gap.
  const b1 = t(broken, h1);
  const b2 = t(broken, h2);
  for (const [id, p, ref, value] of [
    ['before-h1', 'HTTP/1.1', PROXY_REPORT.beforeS, b1],
    ['before-h2', 'HTTP/2', PROXY_REPORT.beforeH2S, b2],
  ] as const) {
    const ev = new Evidence();
    out.push(
      makeFinding({
        id,
        section: 'summary',
        row: `Before the fix, ${p}: one 2.7 MB response`,
        report: ev.s('reportS', ref),
        measured:
          value === undefined
            ? 'not measured'
            : `${ev.ms('ms', value)} (${where(ev)}, ${ev.n('concurrency', c)} in flight)`,
        ...(value !== undefined ? { reference: ref * 1000, value } : {}),
        explain: () => undefined,
        unexplained: `the report's time is a client over the internet to a production proxy, whose round trip and bandwidth it did not record; this run has no such path (${where(ev)}), so its absolute times say nothing about the report's`,
        ev,
      }),
    );
  }
  if (b1 !== undefined && b2 !== undefined) {
    const ev = new Evidence();
    const gap = b1 / b2;
    const reportGap = PROXY_REPORT.beforeS / PROXY_REPORT.beforeH2S;
    out.push(
      makeFinding({
        id: 'before-gap',
        section: 'summary',
        row: 'Before the fix, HTTP/1.1 against HTTP/2 (“HTTP/1.1 ~4.3× slower”)',
        report: `h1/h2 ${ev.x('reportGap', reportGap)} (${ev.s('reportH1S', PROXY_REPORT.beforeS)} against ${ev.s('reportH2S', PROXY_REPORT.beforeH2S)})`,
        measured: `h1/h2 ${ev.x('gap', gap)} (${ev.ms('h1Ms', b1)} against ${ev.ms('h2Ms', b2)})`,
        reference: reportGap,
        value: gap,
        tolerance: 0.2,
        ratio: true,
        explain: () => undefined,
        unexplained: `both faults are on nginx's upstream side, which is the same whatever the client speaks (${churn(ev)}; HTTP/1.0 with Connection: close upstream for either protocol), and here they cost HTTP/1.1 ${ev.x('gap', gap)} what they cost HTTP/2; what made the report's HTTP/1.1 client ${ev.x('reportGap', reportGap)} slower lies on its client's side over the internet, which the report did not record and this run does not have`,
        ev,
      }),
    );
  }
  // 2. The fix, split into its two parts by the two middle configurations.
  const f1 = t(fixed, h1);
  if (b1 !== undefined && f1 !== undefined) {
    const ev = new Evidence();
    const ka = t(by('ka-on+small'), h1);
    const buf = t(by('ka-off+large'), h1);
    const s = speedup(p50s(broken, big, c, h1), p50s(fixed, big, c, h1), seed);
    out.push(
      makeFinding({
        id: 'fix-speedup',
        section: 'summary',
        row: 'Both fixes, HTTP/1.1 (“1.36 s → 0.22 s, 6×”)',
        report: `${ev.s('reportBeforeS', PROXY_REPORT.beforeS)} → ${ev.s('reportAfterS', PROXY_REPORT.afterS)}, ${ev.x('reportSpeedup', PROXY_REPORT.beforeS / PROXY_REPORT.afterS)}`,
        measured: `${ev.ms('beforeMs', b1)} → ${ev.ms('afterMs', f1)}, ${ev.x('speedup', b1 / f1)}${s ? ` (${ev.pct('confidence', 0.95)} interval ${ev.x('lo', s.interval.lo)}–${ev.x('hi', s.interval.hi)}; ${s.outcome === 'better' ? 'decided faster' : s.outcome === 'worse' ? 'decided slower' : s.outcome === 'no-clear-difference' ? 'decided the same' : `undecided: ${wouldTell(s, ev)}`})` : ''}`,
        reference: PROXY_REPORT.beforeS / PROXY_REPORT.afterS,
        value: b1 / f1,
        tolerance: 0.25,
        ratio: true,
        ...(s ? { decision: s } : {}),
        explain: () =>
          ka !== undefined && buf !== undefined
            ? `Each fix alone, from the two middle configurations: upstream keep-alive ${ev.ms('kaMs', ka)} (${ev.x('kaSpeedup', b1 / ka)}), the large buffers ${ev.ms('bufMs', buf)} (${ev.x('bufSpeedup', b1 / buf)}); ${churn(ev)}. ${o.upstream === 'unix' && o.upstreamRttMs === 0 ? 'A new connection over a Unix socket on the same host costs no round trip — the report’s topology too — so neither fix has a round trip to save here: what each can save is this machine’s CPU per upstream connection and per temp-file write, and the times above say how much that was. In the report’s own topology, then, its 6× stays unexplained: this run has no mechanism that gives it' : o.upstreamRttMs > 0 ? `With the backend ${ev.ms('upstreamRttMs', o.upstreamRttMs)} away each new upstream connection costs its handshake's round trip, which keep-alive saves` : 'A new TCP connection on loopback costs no round trip; what each fix can save is this machine’s CPU per upstream connection and per temp-file write'}`
            : undefined,
        unexplained: 'the middle configurations were not measured, so the fix cannot be split',
        ev,
      }),
    );
  }
  out.push(...afterFixRows(f1, t(fixed, h2)));
  // 3. "2 MB in-memory buffers … without disk I/O".
  const large = results.filter((r) => r.config.buffers === 'large' && r.spool && r.churn);
  if (large.length) {
    const ev = new Evidence();
    const spooled = large.reduce((a, r) => a + r.spool!.responses.bytes, 0);
    const of = large.reduce((a, r) => a + r.churn!.large, 0);
    const files = large.reduce((a, r) => a + r.spool!.files, 0);
    const bytes = large.reduce((a, r) => a + r.spool!.bytesSeen, 0);
    const memory = memoryFor('large');
    const excess = LARGE_BYTES - memory;
    const perFile = files > 0 ? bytes / files : 0;
    ev.set('reportSliceMB', 2.68).set('reportBuffersMB', 2).set('buffers', 16).set('bufferKiB', 128);
    ev.set('busyKiB', 256).set('responseMB', 2.7).set('maxTempFileGiB', 1);
    out.push(
      makeFinding({
        id: 'spool-large-buffers',
        section: 'configurations',
        row: 'proxy_buffers 16 128k, proxy_busy_buffers_size 256k: “stream directly from RAM … without disk I/O”',
        report: 'no spooling of the 2.68 MB slice with 2 MB of buffers',
        measured: `${ev.n('spooled', spooled)} of ${ev.n('responses', of)} 2.7 MB responses spooled (${ev.pct('share', of > 0 ? spooled / of : Number.NaN)}), ${ev.n('files', files)} temp files seen holding ${ev.n('kibPerFile', perFile / 1024)} KiB each on average`,
        verdict: of === 0 ? 'not-measured' : spooled === 0 ? 'agrees' : 'differs',
        explain: () =>
          spooled === 0
            ? `The client drained each response before nginx's ${ev.n('memoryKiB', memory / 1024)} KiB of buffers filled`
            : perFile <= excess * 1.1
              ? `A ${ev.n('responseBytes', LARGE_BYTES)}-byte response does not fit nginx's ${ev.n('memoryBytes', memory)} bytes for it (proxy_buffers 16 × 128 KiB plus proxy_buffer_size 128 KiB): while the client drains more slowly than the backend sends (nginx's send buffer ${ev.n('sndbufKiB', o.sndbufBytes / 1024)} KiB), the other ${ev.n('excessKiB', excess / 1024)} KiB go to proxy_temp_path (proxy_max_temp_file_size is 1 GiB by default), and the temp files held ${ev.n('kibPerFile', perFile / 1024)} KiB each — no more than that excess. The report's 2.68 MB slice did not fit its 2 MB either; its “without disk I/O” holds only for a client that drained as fast as uvicorn sent`
              : undefined,
        unexplained: `the temp files held ${ev.n('kibPerFile', perFile / 1024)} KiB each, more than the ${ev.n('excessKiB', excess / 1024)} KiB the buffers could not hold`,
        ev,
      }),
    );
  }
  return out;
}

/** The proxy findings checked against the result's own tables and data. */
export function verifyProxy(r: StudyResult): string[] {
  const problems: string[] = [];
  const f = (id: string) => r.findings.find((x) => x.id === id);
  const summary = r.sections.find((s) => s.id === 'summary');
  const c = Math.max(...summary!.table.rows.map((x) => Number(x.c)).filter(Number.isFinite));
  const row = (p: string) => summary?.table.rows.find((x) => x.c === c && x.protocol === p);
  for (const [id, p] of [
    ['before-h1', baselineStrategy().name],
    ['before-h2', multiplexedStrategy('one')!.name],
  ] as const) {
    const ms = evidenceNumber(f(id), 'ms');
    const cell = row(p)?.before;
    if (ms !== undefined && typeof cell === 'number' && Math.abs(cell - ms) > 0.06)
      problems.push(`${id}: ${ms} ms is not the summary's ${cell} ms`);
  }
  const spool = f('spool-large-buffers');
  const configs = (r.data.configurations ?? []) as Array<{
    config: ProxyConfig;
    spool?: Spool;
    churn?: Churn;
  }>;
  if (spool) {
    const large = configs.filter((x) => x.config.buffers === 'large' && x.spool);
    const n = large.reduce((a, x) => a + x.spool!.responses.bytes, 0);
    if (evidenceNumber(spool, 'spooled') !== n)
      problems.push(
        `spool-large-buffers: ${evidenceNumber(spool, 'spooled')} spooled said, ${n} in the data`,
      );
    if (spool.verdict === 'agrees' && n > 0)
      problems.push('spool-large-buffers: “no spooling” with spooled responses');
  }
  // The paragraph on both fixes and the summary's cells against compare's decision over the saved
  // runs at the same concurrency.
  const seed = Number(r.options.seed ?? 1);
  const by = (id: string) => configs.find((x) => x.config.id === id) as ConfigResult | undefined;
  const h1 = baselineStrategy().name;
  const big = sizeWorkload(LARGE_BYTES).id;
  const d = speedup(p50s(by(BROKEN.id), big, c, h1), p50s(by(FIXED.id), big, c, h1), seed);
  const both = r.explanation
    .find((p) => p.startsWith('The report saw 6×'))
    ?.match(/Both fixes together, over HTTP\/1\.1: ([^(]*)/)?.[1];
  if (d && both) {
    const said: Direction = /no difference|^the same/.test(both)
      ? 'same'
      : /undecided/.test(both)
        ? 'undecided'
        : /slower/.test(both)
          ? 'below'
          : 'above';
    const p = directionProblem(`the paragraph on both fixes says "${both}"`, said, d);
    if (p) problems.push(p);
  }
  const cell = row(h1);
  if (d && cell) {
    const ci = `${d.interval.lo.toFixed(2)}–${d.interval.hi.toFixed(2)}`;
    if (cell.ci !== undefined && cell.ci !== ci)
      problems.push(`summary: the interval printed is ${String(cell.ci)}, the saved runs give ${ci}`);
    const word = outcomeWord(d, { better: 'fix faster', worse: 'fix slower' });
    if (cell.outcome !== undefined && cell.outcome !== word)
      problems.push(`summary: "${String(cell.outcome)}" printed, the runs decided "${word}"`);
  }
  const gap = f('before-gap');
  if (gap?.explained)
    problems.push('before-gap: explained, though this run has no client path like the report’s');
  return problems;
}
