/** The proxy study's explanation, derived from the numbers. */
import { sizeWorkload } from '../../compare/index.ts';
import { formatBytes, medianInterpolated } from '../../core/index.ts';
import { baselineStrategy, multiplexedStrategy } from '../../transport/index.ts';
import { agreement, directionText } from '../claims.ts';
import {
  BROKEN,
  BUFFERS,
  FIXED,
  LARGE_BYTES,
  PROXY_REPORT,
  type ProxyOptions,
  UPSTREAM_KEEPALIVE,
} from './options.ts';
import { type ConfigResult, med, p50s, share, speedup, speedWords } from './tables.ts';

/** The explanation's paragraphs, from what was measured: churn, spooling, each fix's speedup, the probe. */
export function explain(results: ConfigResult[], o: ProxyOptions, seed: number): string[] {
  const out: string[] = [];
  const by = (id: string) => results.find((r) => r.config.id === id);
  const off = results.filter((r) => !r.config.keepalive && r.churn);
  const on = results.filter((r) => r.config.keepalive && r.churn);
  if (off.length && on.length) {
    const offPer = medianInterpolated(off.map((r) => r.churn!.perRequest));
    const onPer = medianInterpolated(on.map((r) => r.churn!.perRequest));
    const counts = (rs: ConfigResult[]) =>
      rs.map((r) => `${r.churn!.connections} for ${r.churn!.requests}`).join(', ');
    out.push(
      offPer > 0.5 && onPer < 0.5
        ? `Without upstream keep-alive nginx opened ${offPer.toFixed(2)} connections to the fixture per request (${counts(off)}): it speaks HTTP/1.0 with "Connection: close" upstream, so every request pays a TCP handshake and a new socket at the backend, however long the client keeps its own connection. With keepalive ${UPSTREAM_KEEPALIVE}, HTTP/1.1 and an empty Connection header it opened ${onPer.toFixed(2)} per request (${counts(on)}): the pool is reused.`
        : `The upstream connections do not show the expected split: ${offPer.toFixed(2)} per request without keep-alive (${counts(off)}), ${onPer.toFixed(2)} with it (${counts(on)}); read the counters before the times.`,
    );
  }
  const spooled = results.filter((r) => r.spool && r.churn);
  if (spooled.length) {
    const words = spooled.map(
      (r) =>
        `${r.config.id} ${share(r.spool!.responses.bytes, r.churn!.large)} of the 2.7 MB responses and ${share(r.spool!.responses.chunks, r.churn!.chunks)} of the chunks (${r.spool!.files} temp files, ≥ ${formatBytes(r.spool!.bytesSeen)} seen)`,
    );
    const rate = (b: keyof typeof BUFFERS) => {
      const rs = spooled.filter((r) => r.config.buffers === b);
      const n = rs.reduce((a, r) => a + r.spool!.responses.bytes, 0);
      const of = rs.reduce((a, r) => a + r.churn!.large, 0);
      return of > 0 ? n / of : 0;
    };
    const small = rate('small');
    const large = rate('large');
    const total = spooled.reduce((a, r) => a + r.spool!.responses.bytes + r.spool!.responses.chunks, 0);
    const whole = `${formatBytes(BUFFERS.large.memoryBytes)} in memory does not hold 2.7 MB whole`;
    const compared =
      large === 0 && small > 0
        ? `the large buffers kept every 2.7 MB response in memory (${share(small, 1)} spooled with the defaults)`
        : large < small * 0.9
          ? `the large buffers cut the share of spooled 2.7 MB responses from ${share(small, 1)} to ${share(large, 1)}, not to none: ${whole}`
          : `the large buffers did not cut it (${share(small, 1)} of the 2.7 MB responses with the defaults, ${share(large, 1)} with them): ${whole} either`;
    out.push(
      total === 0
        ? `nginx spooled nothing to its temp path in any configuration (${words.join('; ')}): the client drained each response faster than the backend filled nginx's buffers${o.sndbufBytes > 0 ? `, even through a ${formatBytes(o.sndbufBytes)} socket send buffer` : ' (the kernel’s socket buffers took the whole response)'}, so buffer sizes did not matter.`
        : `nginx spooled responses to disk: ${words.join('; ')}. A response larger than nginx's in-memory buffers (${formatBytes(BUFFERS.small.memoryBytes)} with the defaults, ${formatBytes(BUFFERS.large.memoryBytes)} with the large ones) that the client drains slower than the backend sends is written to proxy_temp_path and read back; ${compared}.`,
    );
  }
  const big = sizeWorkload(LARGE_BYTES).id;
  const broken = by(BROKEN.id);
  const c = o.concurrency.at(-1)!;
  if (broken?.times) {
    const parts: string[] = [];
    for (const p of [baselineStrategy().name, multiplexedStrategy('one')!.name]) {
      const base = p50s(broken, big, c, p);
      const each = results
        .filter((r) => r !== broken && r.times)
        .map((r) => {
          const t = p50s(r, big, c, p);
          const s = speedup(base, t, seed);
          return s ? `${r.config.id} ${med(t)!.toFixed(1)} ms, ${speedWords(s)}` : undefined;
        })
        .filter(Boolean);
      if (each.length && base.length)
        parts.push(`over ${p}, from ${med(base)!.toFixed(1)} ms with ${BROKEN.id}: ${each.join(', ')}`);
    }
    const fixedS = speedup(
      p50s(broken, big, c, baselineStrategy().name),
      p50s(by(FIXED.id), big, c, baselineStrategy().name),
      seed,
    );
    const where =
      o.upstreamRttMs > 0
        ? `with the backend ${o.upstreamRttMs} ms away, where each new upstream connection adds its handshake's round trip`
        : o.upstream === 'unix'
          ? "with nginx reaching the fixture over a Unix socket on the same host, as the report's did, where a new upstream connection and a temp-file write cost only what this machine's CPU and page cache charge"
          : "on loopback, where a backend handshake and a temp-file write cost only what this machine's CPU and page cache charge";
    const reportX = PROXY_REPORT.beforeS / PROXY_REPORT.afterS;
    const both = fixedS
      ? ` Both fixes together, over HTTP/1.1: ${directionText(fixedS, {
          above: (x) =>
            `${x} faster, ${agreement(reportX, fixedS.interval.ratio, 0.25).verdict === 'agrees' ? 'close to' : fixedS.interval.ratio < reportX ? 'less than' : 'more than'} the report’s 6×`,
          below: (x) => `${x} slower, the opposite of the report’s 6×`,
          same: 'the same time, against the report’s 6×',
          undecided: 'undecided',
        })}, ${where}.`
      : '';
    if (parts.length)
      out.push(
        `The report saw 6× (1.36 s → 0.22 s) from both fixes. One 2.7 MB response at concurrency ${c} here, ${parts.join('; ')}.${both}`,
      );
  }
  const fixedR = by(FIXED.id);
  if (broken?.churn && fixedR?.churn && broken.churn.requests > 0) {
    // Every configuration ran the same cells for the same measured time: requests served is its
    // throughput over all of them.
    const x = fixedR.churn.requests / broken.churn.requests;
    out.push(
      `In the same measured time (${o.runs} runs of ${o.durationMs} ms per cell, the same cells) nginx served ${broken.churn.requests} requests through ${BROKEN.id} and ${fixedR.churn.requests} through ${FIXED.id}: ${x >= 1 ? `${x.toFixed(1)}× the throughput` : `${(1 / x).toFixed(1)}× less`} with both fixes, all workloads and protocols together.`,
    );
  }
  const probed = results.filter((r) => r.probe);
  if (probed.length) {
    const flagged = (r: ConfigResult) => r.probe!.upstreamReused === false;
    const noKa = probed.filter((r) => !r.config.keepalive);
    const caught = noKa.filter(flagged).length;
    const falseAlarms = probed.filter((r) => r.config.keepalive && flagged(r)).length;
    const unseen = probed.filter((r) => r.probe!.upstreamReused === null).length;
    const clientKa = probed.every((r) => r.probe!.keepAliveHonoured === true);
    const lates = probed.filter((r) => r.probe!.large === 'late').map((r) => r.config.id);
    const spooledAny = results.some((r) => (r.spool?.responses.bytes ?? 0) > 0);
    out.push(
      `h2lab probe: its HTTP/1.1 keep-alive check ${clientKa ? 'passed against every configuration — nginx keeps the client’s connection whatever it does upstream, so that check alone cannot see the fault' : 'failed against some configuration (see the table)'}; its upstream check (the h2lab origin’s connection counter, read through the proxy) flagged ${caught} of ${noKa.length} configurations without upstream keep-alive${falseAlarms ? ` and, wrongly, ${falseAlarms} with it` : ' and none with it'}${unseen ? `, and could not read the origin's counters in ${unseen}` : ''}. Its --large timing called the 2.7 MB response ${[...new Set(probed.map((r) => r.probe!.large ?? 'not timed'))].join(' / ')}${lates.length ? ` (late through ${lates.join(', ')})` : ''}: ${lates.length ? 'a late first body byte is what a proxy holding the response looks like from the client' : spooledAny ? 'nginx spools the part of a response its buffers cannot hold while it already sends the start, so the first byte is not late and the client cannot tell; only nginx’s side (its warnings and temp files, above) shows the spooling' : 'nothing was late, and nothing was spooled for it to see'}.`,
    );
  }
  return out;
}
