/**
 * `h2lab study tiles`: the map tile server (report 000). A backend pool with a render-time model
 * (light and heavy tiles) behind the fixture server, and real Chromium as the client:
 *
 * - the synthetic burst (121 tiles at once) over http:// (HTTP/1.1), https:// (h2) and the
 *   HTTP/1.1-over-TLS control, and the cancellation experiment with the server honouring and
 *   ignoring cancellation (src/browser's measureBrowser, as `h2lab browser` runs it);
 * - MapLibre GL map sessions whose pans and zooms issue and abandon the tile requests themselves
 *   (src/browser/map-session.ts), on real vector tiles;
 * - the open tuning question: a backend pool-size sweep for HTTP/1.1 and h2, with the time to the
 *   last tile and where the queue sat (the browser's stall or the server's pool);
 *
 * on loopback and behind emulated links (`--net`). The explanation is derived from the numbers.
 */
import os from 'node:os';
import {
  type ChromiumHandle,
  CollectedPage,
  checkChromium,
  MAP_MOVES,
  MAP_MOVES_QUICK,
  measureBrowser,
  runBurstRepeated,
  runMapSession,
  spkiPins,
  summarizeBurst,
} from '../../browser/index.ts';
import type { BrowserResult, BurstRun, BurstSummary, MapSession, StudyResult } from '../../model/index.ts';
import { browserNetwork, checkNetAvailable, createLink, type Link } from '../../net/index.ts';
import {
  type FixtureTarget,
  otherCpus,
  pinThisProcess,
  renderCpuList,
  serverViewOf,
  startFixtureTarget,
} from '../../server/index.ts';
import { defineStudy, type Rederived, type StudyContext } from '../study.ts';
import { TILES_REPORT_CORES as REPORT_CORES, TILES_STUDY } from './descriptor.ts';
import { explainBurst, explainCancel, explainMap, explainSweep } from './explain.ts';
import { tilesFindings } from './findings.ts';
import {
  BURST,
  BURST_REPEAT,
  failedBurst,
  GRID,
  resolve,
  type TilesGiven,
  type TilesOptions,
  WARM_UP,
} from './options.ts';
import { type Env, fixtureOptions, launchFor, meanTileMs, medNearestRank, targetsOf } from './plan.ts';
import {
  burstSection,
  type CleanBursts,
  cancelSection,
  cleanBursts,
  exclude,
  type MapRow,
  mapSection,
  type SweepPoint,
  sweepSection,
} from './tables.ts';
import { verifyTiles } from './verify.ts';

async function mapCell(ctx: StudyContext, env: Env, o: TilesOptions): Promise<MapRow[]> {
  const modes = ctx.quick ? GRID.quick.mapModes : GRID.full.mapModes;
  const fixtures = new Map<MapSession['serverMode'], FixtureTarget>();
  const rows: MapRow[] = [];
  let chromium: ChromiumHandle | undefined;
  try {
    for (const m of modes)
      fixtures.set(m, await env.start(fixtureOptions(o, { ignoreCancel: m === 'ignore' })));
    chromium = await launchFor(o, env, [...fixtures.values()], true);
    for (const [mode, f] of fixtures) {
      // The first vector tile loads the geodata (about 0.3 s): not part of any session. Asked by
      // Chromium, which reaches the fixture wherever it runs (this process may not).
      const warm = await CollectedPage.open(chromium.context, new URL(f.plainUrl!).origin);
      try {
        await warm.page.evaluate(
          (u) => fetch(u).then((r) => r.arrayBuffer().then(() => r.status)),
          '/vector-tiles/0/0/0.mvt',
        );
      } finally {
        await warm.close();
      }
      for (const t of targetsOf(f)) rows.push({ target: t.id, mode, sessions: [] });
    }
    for (let i = 0; i < o.sessions; i++) {
      for (const [mode, f] of fixtures) {
        for (const t of targetsOf(f)) {
          if (ctx.signal.aborted) return rows;
          const page = await CollectedPage.open(chromium.context, t.origin);
          try {
            await page.page.setViewportSize({ width: 1024, height: 768 });
            const s = await runMapSession({
              page,
              target: t,
              index: i,
              serverMode: mode,
              moves: ctx.quick ? MAP_MOVES_QUICK : MAP_MOVES,
              idleTimeoutMs: 30_000,
              runTimeoutMs: 180_000,
              metrics: f.metrics,
            });
            rows.find((r) => r.target === t.id && r.mode === mode)!.sessions.push(s);
            ctx.log(`map ${env.id} ${t.id} ${mode}: ${s.tilesRequested} tiles, ${s.tilesCanceled} cancelled`);
          } finally {
            await page.close();
          }
        }
      }
    }
    return rows;
  } finally {
    await chromium?.close();
    for (const f of fixtures.values()) await f.close();
  }
}

/**
 * One pool size: a warm-up burst per target (discarded), then `runs` bursts a target, alternating. A
 * burst with a failed request is repeated ({@link BURST_REPEAT}) and counted, never summarised. The
 * pool's mean service time a tile is read from /metrics around each burst.
 */
async function sweepBursts(
  chromium: ChromiumHandle,
  f: FixtureTarget,
  runs: number,
): Promise<Omit<SweepPoint, 'pool'>> {
  const all: BurstRun[] = [];
  const excluded: SweepPoint['excluded'] = {};
  const service: Record<string, number[]> = {};
  const walls: Record<string, number[]> = {};
  const targets = targetsOf(f);
  const pages = await Promise.all(targets.map((t) => CollectedPage.open(chromium.context, t.origin)));
  const burst = (j: number, count: number, index: number) =>
    runBurstRepeated(
      {
        page: pages[j]!,
        target: targets[j]!,
        count,
        pathTemplate: '/tiles/7/{x}/{y}',
        index,
        runTimeoutMs: 60_000,
        metrics: f.metrics,
      },
      BURST_REPEAT,
    );
  try {
    // Index 0 is discarded: a small burst that opens the connections.
    for (let j = 0; j < targets.length; j++) all.push((await burst(j, WARM_UP, 0)).run);
    for (let i = 1; i <= runs; i++)
      for (let j0 = 0; j0 < targets.length; j0++) {
        const j = (i + j0) % targets.length;
        const id = targets[j]!.id;
        const { run, repeated } = await burst(j, BURST, i);
        // runBurst reset the fixture's counters before the last attempt: what they hold is that burst.
        const after = await f.metrics?.tryRead();
        const failed = failedBurst(run) ? [...repeated, run] : repeated;
        if (failed.length > 0) exclude(excluded, id, failed);
        if (failedBurst(run)) continue;
        all.push(run);
        walls[id] = [...(walls[id] ?? []), run.stats.wallMs];
        const view = after ? serverViewOf(after) : undefined;
        if (view?.poolServiceMs) service[id] = [...(service[id] ?? []), view.poolServiceMs.mean];
      }
  } finally {
    for (const p of pages) await p.close();
  }
  const has = (t: string) => all.some((r) => r.target === t && !r.discarded);
  return {
    ...(has('http') ? { http: summarizeBurst('http', all) } : {}),
    ...(has('https') ? { https: summarizeBurst('https', all) } : {}),
    excluded,
    serviceMs: Object.fromEntries(Object.entries(service).map(([k, v]) => [k, medNearestRank(v)])),
    walls,
    serviceRuns: service,
  };
}

async function sweepCell(
  ctx: StudyContext,
  env: Env,
  o: TilesOptions,
  progress: (f: number) => void,
): Promise<SweepPoint[]> {
  const points: SweepPoint[] = [];
  const runs = ctx.quick ? GRID.quick.sweepRuns : GRID.full.sweepRuns;
  let chromium: ChromiumHandle | undefined;
  let pinned = '';
  try {
    for (const [k, pool] of o.pools.entries()) {
      if (ctx.signal.aborted) break;
      const f = await env.start(fixtureOptions(o, { poolSize: pool }));
      try {
        // In this process every fixture has the same development certificate; behind a link each
        // start issues its own, and Chromium trusts only the pins it started with.
        const pins = [...spkiPins(f.certPem), ...(f.caPem ? spkiPins(f.caPem) : [])].join(',');
        if (pins !== pinned) {
          await chromium?.close();
          chromium = await launchFor(o, env, [f], false);
          pinned = pins;
        }
        points.push({ pool, ...(await sweepBursts(chromium!, f, runs)) });
        const p = points.at(-1)!;
        const w = (x: BurstSummary | undefined) => (x ? `${Math.round(x.wallMs)} ms` : 'no clean burst');
        ctx.log(`sweep ${env.id} pool ${pool}: h1 ${w(p.http)}, h2 ${w(p.https)}`);
      } finally {
        await f.close();
      }
      progress((k + 1) / o.pools.length);
    }
  } finally {
    await chromium?.close();
  }
  return points;
}

/**
 * The rows and the sweep paragraphs of a saved run, from its data: each environment's bursts (their
 * runs' statistics; a saved run drops only their per-request lists), the cancellation legs' summaries
 * and the sweep's points.
 */
function rederiveTiles(r: StudyResult): Rederived | undefined {
  const burst = r.data.burst as Record<string, BrowserResult> | undefined;
  const sweep = (r.data.sweep ?? {}) as Record<string, SweepPoint[]>;
  if (!burst || Object.keys(burst).length === 0) return undefined;
  const o = resolve(r.options as TilesGiven, r.mode === 'quick');
  const clean = Object.fromEntries(
    Object.entries(burst).map(([id, b]) => [
      id,
      cleanBursts(
        b.burst,
        b.targets.map((t) => t.id),
      ),
    ]),
  );
  const envs = Object.keys(burst);
  const env = envs.includes('loopback') ? 'loopback' : envs[0]!;
  return {
    findings: tilesFindings(env, clean[env], burst[env], sweep[env], o, clean),
    explanation: r.explanation.map((p) => {
      const id = Object.keys(sweep).find((x) => p.startsWith(`On ${x}, from `));
      const b = envs.find((x) => p.startsWith(`On ${x}, over http://`) || p.startsWith(`On ${x} the burst`));
      const c = envs.find((x) => p.startsWith(`On ${x}, abandoning `));
      return (
        (id && explainSweep(id, sweep[id]!, o)) ||
        (b && explainBurst(b, clean[b]!, o)) ||
        (c && explainCancel(c, burst[c]!)) ||
        p
      );
    }),
  };
}

export const tilesStudy = defineStudy<TilesOptions, TilesGiven>({
  ...TILES_STUDY,
  verify: verifyTiles,
  rederive: rederiveTiles,
  quickLimits: (o) =>
    o.runs - 1 < 3
      ? `Quick: ${o.runs - 1} kept burst(s) a target (${o.runs}, the first discarded), ${GRID.quick.cancelRuns} run(s) a cancellation leg and ${GRID.quick.sweepRuns} a pool size: every figure is one run's, with no spread to tell noise from a difference; the verdicts against the report compare single runs. A full run keeps ${GRID.full.runs - 1} bursts a target.`
      : undefined,
  resolve,
  check(o) {
    checkChromium(o.chromiumPath);
    if (o.render === 'cpu') renderCpuList(o.renderCores);
    if (o.net.some((n) => n !== 'loopback')) checkNetAvailable('relay');
  },
  async run(ctx) {
    const o = ctx.options;
    ctx.setData('model', {
      poolSize: o.poolSize,
      tileMs: o.tileMs,
      tileHeavyMs: o.tileHeavyMs,
      tileHeavyFraction: o.tileHeavyFraction,
      render: o.render,
      renderCores: o.render === 'cpu' ? o.renderCores : null,
      meanTileMs: meanTileMs(o),
      reportCores: REPORT_CORES,
    });
    // The render cores are the server's alone: this process, Chromium (started later, inheriting it)
    // and the fixture's own threads run on the other CPUs; on a machine with no other CPU, they share.
    const others = o.render === 'cpu' ? otherCpus(o.renderCores) : [];
    const restore = others.length > 0 ? pinThisProcess(others) : () => {};
    ctx.setData('cpus', {
      render: o.render === 'cpu' ? renderCpuList(o.renderCores) : null,
      others: others.length > 0 ? others : null,
      loadAverageAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
    });
    try {
      await runTiles(ctx, o);
    } finally {
      restore();
    }
  },
});

async function runTiles(ctx: StudyContext, o: TilesOptions): Promise<void> {
  {
    const quick = ctx.quick;
    // Weights: about the seconds each cell takes on two cores.
    const wBurst = quick ? 15 : 60;
    const wMap = quick ? 25 : 120;
    const wSweep = quick ? 15 : 90;
    const envs = o.net;
    // The quick grid keeps only the burst behind a link: the 2-minute bound.
    for (const id of envs) ctx.plan(wBurst + (id === 'loopback' || !quick ? wMap + wSweep : 0));
    const burstData: Record<string, BrowserResult> = {};
    const cleanData: Record<string, CleanBursts> = {};
    const mapData: Record<string, MapRow[]> = {};
    const sweepData: Record<string, SweepPoint[]> = {};
    for (const id of envs) {
      if (ctx.signal.aborted) break;
      const loop = id === 'loopback';
      let link: Link | undefined;
      if (!loop) {
        // Its client side a namespace of its own, where Chromium runs (net/isolation.ts).
        link = await createLink({ profile: id, clientNamespace: true });
      }
      const network = await browserNetwork(link);
      const serverNs = network.serverNamespace;
      const env: Env = {
        id,
        ...(link ? { link } : {}),
        network,
        start: (so) => startFixtureTarget(so, serverNs ? { namespace: serverNs } : 'in-process'),
      };
      try {
        const b = await ctx.cell(
          `burst-${id}`,
          async () =>
            measureBrowser(
              {
                chromiumPath: o.chromiumPath,
                count: BURST,
                runs: o.runs,
                cancel: loop || !quick,
                cancelRuns: quick ? GRID.quick.cancelRuns : GRID.full.cancelRuns,
                // Legs comparable by construction: each aborts once every tile its protocol can
                // deliver has reached the server (121 over h2, 6 over HTTP/1.1), honouring or not.
                cancelWhenReached: BURST,
                control: loop || !quick,
                fixture: { poolSize: o.poolSize, tileMs: o.tileMs, maxConcurrentStreams: 256 },
              },
              {
                startFixture: (fo) =>
                  env.start(fixtureOptions(o, { poolSize: fo.poolSize, ignoreCancel: fo.ignoreCancel })),
                network,
                signal: ctx.signal,
                burstRepeat: BURST_REPEAT,
              },
            ),
          { weight: wBurst },
        );
        if (b) {
          burstData[id] = b;
          const clean = cleanBursts(
            b.burst,
            b.targets.map((t) => t.id),
          );
          cleanData[id] = clean;
          ctx.setData('burst', burstData);
          ctx.setData(
            'burstExcluded',
            Object.fromEntries(Object.entries(cleanData).map(([k, c]) => [k, c.excluded])),
          );
          ctx.section(burstSection(id, b, clean, o));
          if (b.cancelSummaries.length) ctx.section(cancelSection(id, b));
          for (const w of b.warnings) ctx.warn(`${id}: ${w}`);
        }
        if (quick && !loop) continue;
        const rows = await ctx.cell(`map-${id}`, () => mapCell(ctx, env, o), { weight: wMap });
        if (rows) {
          mapData[id] = rows;
          ctx.setData('map', mapData);
          ctx.section(mapSection(id, rows, quick));
        }
        const points = await ctx.cell(`sweep-${id}`, (p) => sweepCell(ctx, env, o, p), { weight: wSweep });
        if (points) {
          sweepData[id] = points;
          ctx.setData('sweep', sweepData);
          ctx.section(sweepSection(id, points, o));
        }
      } finally {
        await network.close();
        await link?.close();
      }
    }
    for (const id of envs) {
      const b = burstData[id];
      if (b) {
        ctx.explain(explainBurst(id, cleanData[id]!, o));
        const c = explainCancel(id, b);
        if (c) ctx.explain(c);
      }
      const m = mapData[id] && explainMap(id, mapData[id]);
      if (m) ctx.explain(m);
      const s = sweepData[id] && explainSweep(id, sweepData[id], o);
      if (s) ctx.explain(s);
    }
    // The report measured on loopback: its rows are answered by this run's loopback numbers.
    const env = envs.includes('loopback') ? 'loopback' : envs[0]!;
    for (const f of tilesFindings(env, cleanData[env], burstData[env], sweepData[env], o, cleanData))
      ctx.finding(f);
  }
}
