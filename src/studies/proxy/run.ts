/**
 * `h2lab study proxy`: the reverse-proxy audit of report 001. Debian's nginx, started by h2lab with a
 * config generated into the study's temp dir, in front of the fixture server — over a Unix domain
 * socket on the same host by default, as the report's nginx reached its uvicorn (`--upstream tcp`:
 * over TCP on 127.0.0.1, or behind an emulated link with `--upstream-rtt`) — in four configurations — upstream keep-alive off/on × proxy
 * buffers small (nginx's defaults) / large. Through each: a 2.7 MB response and small chunks, driven
 * by h2lab's own load engine over HTTP/1.1 and HTTP/2 to nginx. Shown per configuration: the
 * upstream connections the fixture accepted per request (its /metrics), the responses nginx spooled
 * to its proxy_temp_path (its own "buffered to a temporary file" warnings, and the bytes seen in the
 * files), the time of one response and the speedup of the fixed configuration, and what `h2lab probe`
 * says about each.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { sizeWorkload } from '../../compare/index.ts';
import { invalidOption } from '../../core/index.ts';
import type { StudyResult } from '../../model/index.ts';
import { checkNetAvailable, createLink } from '../../net/index.ts';
import { probe } from '../../probe/index.ts';
import { startFixtureTarget } from '../../server/index.ts';
import { CERT_FILES, generateCertificates, writeCertificateSet } from '../../tls/index.ts';
import { baselineStrategy, multiplexedStrategy } from '../../transport/index.ts';
import { quickCaveat } from '../caveats.ts';
import { compareCell } from '../compare-cell.ts';
import { checkNginx, freePort, startNginx } from '../nginx.ts';
import { defineStudy, type Rederived } from '../study.ts';
import { PROXY_STUDY } from './descriptor.ts';
import { explain } from './explain.ts';
import { proxyFindings, verifyProxy } from './findings.ts';
import {
  BUFFERS,
  CONFIGS,
  LARGE_BYTES,
  type ProxyOptions,
  resolve,
  SLICE_CHUNKS,
  UPSTREAM_KEEPALIVE,
} from './options.ts';
import { accepted, served, serverBlock, sum, watchSpool } from './plan.ts';
import {
  type ConfigResult,
  configSection,
  probeView,
  proxySummarySection,
  timeSection,
  timesOf,
} from './tables.ts';

/**
 * The findings and paragraphs of a saved run, from its data: the configurations' counts and each
 * cell's times (from the comparisons when the result kept them whole).
 */
function rederiveProxy(r: StudyResult): Rederived | undefined {
  const o = r.data.settings as ProxyOptions | undefined;
  const results = structuredClone((r.data.configurations ?? []) as ConfigResult[]);
  for (const x of results) {
    const compare = r.compares.find((c) => c.id === x.config.id)?.result;
    if (compare) x.times = timesOf(compare);
  }
  if (!o || results.length === 0 || results.some((x) => !x.times)) return undefined;
  const seed = Number(r.options.seed ?? 1);
  return {
    findings: proxyFindings(results, o, seed),
    explanation: explain(results, o, seed),
    sections: [proxySummarySection(results, o, seed)],
    data: { configurations: results },
  };
}

export const proxyStudy = defineStudy<ProxyOptions>({
  ...PROXY_STUDY,
  verify: verifyProxy,
  rederive: rederiveProxy,
  quickLimits: (o) => quickCaveat(o.runs - 1, o.runs),
  resolve,
  check(o) {
    checkNginx(o.nginx);
    if (o.upstreamRttMs > 0 && o.upstream === 'unix')
      throw invalidOption(
        '--upstream',
        'unix',
        'a Unix socket does not cross a link: use --upstream tcp with --upstream-rtt',
      );
    if (o.upstreamRttMs > 0) checkNetAvailable('relay');
  },
  async run(ctx) {
    const o = ctx.options;
    const { binary, version } = checkNginx(o.nginx);
    const h1 = baselineStrategy();
    const h2 = multiplexedStrategy('one');
    if (!h2) throw new Error('the registry has no single-session HTTP/2 strategy');
    const workloads = [
      sizeWorkload(LARGE_BYTES),
      {
        id: 'chunks',
        label: `${SLICE_CHUNKS} chunks of 20–50 KiB`,
        paths: Array.from({ length: SLICE_CHUNKS }, (_, i) => `/chunks/${i}`),
      },
    ];
    const runsPerConfig = workloads.length * o.concurrency.length * 2 * o.runs;
    ctx.plan(CONFIGS.length * (runsPerConfig + 1));
    ctx.setData('settings', {
      nginx: {
        binary,
        version,
        workers: 1,
        sndbufBytes: o.sndbufBytes,
        upstreamKeepalive: UPSTREAM_KEEPALIVE,
      },
      buffers: BUFFERS,
      upstreamPath:
        o.upstreamRttMs > 0
          ? `TCP over an emulated link of ${o.upstreamRttMs} ms RTT to the fixture in its own namespace`
          : o.upstream === 'unix'
            ? 'a Unix domain socket on the same host (the report’s nginx → uvicorn)'
            : 'TCP 127.0.0.1',
      fixture: o.upstreamRttMs > 0 ? 'namespace' : 'thread',
      largeBytes: LARGE_BYTES,
      ...o,
    });
    ctx.log(
      `nginx ${version} (${binary}) in front of the fixture server ${o.upstream === 'unix' ? 'over a Unix domain socket' : `over TCP ${o.upstreamRttMs > 0 ? `across a ${o.upstreamRttMs} ms link` : 'on 127.0.0.1'}`}`,
    );

    // The report's nginx reached its backend over a Unix domain socket on the same host (the default
    // here). With --upstream-rtt the fixture runs behind an emulated link (its own namespace) while
    // nginx and the client stay on the host: a backend elsewhere, where an upstream handshake costs
    // a round trip — a what-if, not the report's topology.
    const link =
      o.upstreamRttMs > 0
        ? await createLink({ profile: { rttMs: o.upstreamRttMs }, backend: 'relay', seed: ctx.seed })
        : undefined;
    let fixture: Awaited<ReturnType<typeof startFixtureTarget>>;
    try {
      fixture = await startFixtureTarget(
        o.upstream === 'unix' ? { unixSocket: join(ctx.tmpDir, 'fixture.sock') } : {},
        link ? { link } : 'thread',
      );
    } catch (err) {
      await link?.close();
      throw err;
    }
    const certs = await generateCertificates({ hosts: ['127.0.0.1', 'localhost'] });
    writeCertificateSet(ctx.tmpDir, certs, { force: true });
    const caFile = join(ctx.tmpDir, CERT_FILES.caPem);
    const upstream =
      o.upstream === 'unix' ? `unix:${join(ctx.tmpDir, 'fixture.sock')}` : new URL(fixture.plainUrl!).host;
    const ports = await Promise.all(CONFIGS.map(() => freePort()));
    const nginxDir = join(ctx.tmpDir, 'nginx');
    const http = `
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_certificate ${join(ctx.tmpDir, CERT_FILES.serverPem)};
  ssl_certificate_key ${join(ctx.tmpDir, CERT_FILES.serverKeyPem)};
  upstream fixture_ka { server ${upstream}; keepalive ${UPSTREAM_KEEPALIVE}; }
  upstream fixture_plain { server ${upstream}; }
${CONFIGS.map((c, i) => serverBlock(c, ports[i]!, nginxDir, o.sndbufBytes, upstream)).join('\n')}`;
    let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
    try {
      // nginx creates none of its temp directories itself.
      for (const c of CONFIGS) mkdirSync(join(nginxDir, `${c.id}.temp`), { recursive: true });
      nginx = await startNginx(nginxDir, http, ports, { binary });
      ctx.setData('nginxConfig', nginx.config);
      const results: ConfigResult[] = [];
      for (const [i, config] of CONFIGS.entries()) {
        const url = `https://127.0.0.1:${ports[i]}`;
        const r: ConfigResult = { config, url };
        results.push(r);
        const p = await ctx.cell(`${config.id}/probe`, () =>
          probe(`${url}/`, { ca: caFile, largePath: `/bytes/${LARGE_BYTES}` }),
        );
        if (p) r.probe = probeView(p);
        const before = await fixture.metrics.read();
        const spool = watchSpool(nginxDir, config, () => nginx!.workerPids());
        const compare = await compareCell(
          ctx,
          config.id,
          {
            url,
            tls: { ca: caFile },
            protocols: [h1.name, h2.name],
            baseline: h1.name,
            concurrency: o.concurrency,
            h1Connections: 'concurrency',
            runs: o.runs,
            durationMs: o.durationMs,
            workloads,
          },
          {},
          runsPerConfig,
        );
        r.spool = spool.stop();
        const after = await fixture.metrics.read();
        const requests = served(after) - served(before);
        // The after-read's connection is counted in `after`; the before-read's was in `before`.
        const connections = accepted(after) - accepted(before) - 1;
        r.churn = {
          requests,
          large: sum(after.requests.bytes) - sum(before.requests.bytes),
          chunks: sum(after.requests.chunks) - sum(before.requests.chunks),
          connections,
          perRequest: requests > 0 ? connections / requests : 0,
        };
        if (r.spool.firstError) ctx.warn(`nginx (${config.id}): ${r.spool.firstError}`);
        if (compare) r.times = timesOf(compare);
        ctx.setData('configurations', results);
        ctx.section(configSection(results, o));
      }
      for (const w of workloads) ctx.section(timeSection(results, w, o, ctx.seed));
      ctx.section(proxySummarySection(results, o, ctx.seed));
      for (const p of explain(results, o, ctx.seed)) ctx.explain(p);
      for (const f of proxyFindings(results, o, ctx.seed)) ctx.finding(f);
      const failure = fixture.failure();
      if (failure) ctx.warn(failure);
    } finally {
      // nginx's own complaints (its warnings of spooling are counted above, not repeated here).
      const serious = (nginx?.errorLog() ?? '')
        .split('\n')
        .filter((l) => /\[(emerg|alert|crit|error)\]/.test(l));
      if (serious.length) ctx.warn(`nginx logged ${serious.length} error(s), the first: ${serious[0]}`);
      await nginx?.stop();
      await fixture.close();
      await link?.close();
    }
  },
});
