/**
 * `h2lab study chunks`: the chunked-array storage study (report 001). 64 chunks of 20–50 KiB fetched
 * with 1 to 16 requests in flight by pooled HTTP/1.1 (a connection per request in flight, as the
 * report's client), one HTTP/2 session and a pool of HTTP/2 sessions, over emulated WAN links with and
 * without loss and with the congestion control pinned. The table is the report's (H1, H2, H1/H2 per
 * concurrency) with intervals; the explanation names the congestion windows and the losses measured on
 * each side's connections, and where the answer changes from one link to another.
 */
import { checkNetAvailable } from '../../net/index.ts';
import { quickCaveat } from '../caveats.ts';
import { compareCell } from '../compare-cell.ts';
import { defineStudy } from '../study.ts';
import { CHUNKS, CHUNKS_STUDY } from './descriptor.ts';
import { explainAll } from './explain.ts';
import { chunksFindings, verifyChunks } from './findings.ts';
import { type ChunksOptions, QUICK_CONCURRENCY, resolve } from './options.ts';
import { type LinkCase, linkCases, strategies } from './plan.ts';
import { type ChunksRow, chunksRowsOf, linkSection, referenceSection } from './rows.ts';

export const chunksStudy = defineStudy<ChunksOptions>({
  ...CHUNKS_STUDY,
  verify: verifyChunks,
  quickLimits: (o) => quickCaveat(o.runs - 1, o.runs),
  resolve,
  check(options) {
    if (!options.loopback) checkNetAvailable('relay');
  },
  async run(ctx) {
    const o = ctx.options;
    const links = linkCases(o, ctx.seed);
    const s = strategies();
    const runsPerLink = o.concurrency.length * 3 * o.runs;
    ctx.plan(links.length * runsPerLink);
    const paths = Array.from({ length: CHUNKS }, (_, i) => `/chunks/${i}`);
    const perLink: Array<{ link: LinkCase; rows: ChunksRow[] }> = [];
    for (const { link, input } of links) {
      const result = await compareCell(
        ctx,
        link.id,
        {
          ...input,
          protocols: [s.h1.name, s.h2.name, s.pool.name],
          concurrency: o.concurrency,
          h1Connections: 'concurrency',
          h2PoolSessions: o.h2Sessions,
          requests: CHUNKS,
          runs: o.runs,
          workloads: [{ id: 'chunks', label: `${CHUNKS} chunks`, paths }],
        },
        {},
        runsPerLink,
      );
      if (!result) continue;
      const rows = chunksRowsOf(result, result.axes.net[0] ?? 'loopback', o.concurrency);
      perLink.push({ link, rows });
      ctx.section(linkSection(link, rows, o.h2Sessions));
      ctx.setData('links', perLink);
    }
    if (perLink.length === 0) return;
    ctx.section(referenceSection(perLink, o.concurrency));
    for (const p of explainAll(perLink)) ctx.explain(p);
    for (const f of chunksFindings(perLink, ctx.quick && o.concurrency.join() === QUICK_CONCURRENCY.join()))
      ctx.finding(f);
  },
  rederive(r) {
    const links = (r.data.links ?? []) as Array<{ link: LinkCase; rows: ChunksRow[] }>;
    // From the comparisons when they were kept whole, else from the rows the run saved.
    const perLink = r.compares.length
      ? r.compares.flatMap(({ id, result }) => {
          const link = links.find((l) => l.link.id === id)?.link;
          return link
            ? [
                {
                  link,
                  rows: chunksRowsOf(result, result.axes.net[0] ?? 'loopback', result.axes.concurrency),
                },
              ]
            : [];
        })
      : links;
    if (perLink.length === 0) return undefined;
    const o = resolve(r.options as Partial<ChunksOptions>, r.mode === 'quick');
    return {
      findings: chunksFindings(
        perLink,
        r.mode === 'quick' && o.concurrency.join() === QUICK_CONCURRENCY.join(),
      ),
      explanation: explainAll(perLink),
      sections: [
        ...perLink.map(({ link, rows }) => linkSection(link, rows, o.h2Sessions)),
        referenceSection(perLink, o.concurrency),
      ],
      // The rows as derived again (their captured rounds included): what the self-check reads.
      data: { links: perLink },
    };
  },
});
