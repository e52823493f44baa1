/**
 * Saves the results of real `--quick` study runs under test/fixtures/studies/, for the findings'
 * consistency tests (test/studies/findings.test.ts) and the HTML layout test
 * (test/report/study-html.test.ts): every sentence is checked against what a real run recorded, not
 * against numbers written by hand. Regenerate with
 *
 *   node --import tsx scripts/gen-study-fixtures.ts [tiles|echo|proxy|chunks…]
 *   npx biome check --write test/fixtures/studies && node --import tsx scripts/gen-findings-doc.ts
 *
 * (a few minutes each on two cores: Chromium for tiles, nginx for proxy; tiles on loopback only), or
 * make one from a results.json a study already wrote with `NAME=FILE`. A documented flag combination
 * is saved beside them as `NAME.VARIANT=FILE` (proxy.upstream-rtt: `h2lab study proxy --quick
 * --upstream-rtt 20ms`); the tests check every file there. Each file is the study result
 * made smaller and nothing else: the comparisons kept whole in `compares` and the per-request lists of
 * the burst runs are dropped (the findings, tables and the data the checks read stay as written), and
 * the removed keys are listed under `data.fixtureTrimmed`.
 *
 * `--full` runs the full study instead (tens of minutes each; on a quiet machine) and saves it under
 * test/fixtures/studies/full/, from which docs/findings.md's block for that study is then generated;
 * `--full NAME=FILE` saves a full run a study already wrote.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseStudyResult, type StudyResult } from '../src/model/index.ts';
import { loadStudy, rederived, startStudy } from '../src/studies/index.ts';

const full = process.argv.includes('--full');
const OUT = new URL(full ? '../test/fixtures/studies/full/' : '../test/fixtures/studies/', import.meta.url);
const OPTIONS: Record<string, Record<string, unknown>> = {
  tiles: { loopback: true },
};

function trim(r: StudyResult): StudyResult {
  const out = structuredClone(r);
  // What an earlier trim removed stays listed when a saved fixture is saved again.
  const trimmed: string[] = [...((out.data.fixtureTrimmed as string[] | undefined) ?? [])];
  if (out.compares.length) {
    out.compares = [];
    if (!trimmed.includes('compares')) trimmed.push('compares');
  }
  type Runs = Array<{ requests: unknown[] }>;
  const burst = out.data.burst as Record<string, { burst: { runs: Runs; repeated?: Runs } }> | undefined;
  if (burst) {
    for (const b of Object.values(burst))
      for (const run of [...b.burst.runs, ...(b.burst.repeated ?? [])]) run.requests = [];
    const add = (k: string) => {
      if (!trimmed.includes(k)) trimmed.push(k);
    };
    add('data.burst.*.burst.runs[].requests');
    if (Object.values(burst).some((b) => b.burst.repeated?.length))
      add('data.burst.*.burst.repeated[].requests');
  }
  out.data.fixtureTrimmed = trimmed;
  // No path of the machine that made it.
  return JSON.parse(
    JSON.stringify(out)
      .replace(/"\/tmp\/[^"]*"/g, '"TMP"')
      .replace(/\/tmp\/h2lab-[A-Za-z0-9_-]+/g, 'TMP'),
  ) as StudyResult;
}

async function save(name: string, r: StudyResult): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  // A saved run's findings as this code derives them (Study.rederive), before the comparisons are
  // trimmed away.
  const study = await loadStudy(r.study);
  if (study?.rederive?.(r)) {
    r = rederived(study, r);
    r.data.findingsRederived = true;
  }
  const file = new URL(`${name}.json`, OUT);
  writeFileSync(file, `${JSON.stringify(trim(r))}\n`);
  console.log(`wrote ${file.pathname} (${r.findings.length} findings, status ${r.status})`);
}

for (const arg of process.argv.slice(2)) {
  const [name, from] = arg.split('=');
  if (!name || name === '--full') continue;
  if (from) {
    await save(name, parseStudyResult(JSON.parse(readFileSync(from, 'utf8'))));
    continue;
  }
  const study = await loadStudy(name);
  if (!study) throw new Error(`no study ${name}`);
  const h = startStudy(study, { quick: !full, options: OPTIONS[name] ?? {} });
  h.events.on('log', (t) => console.log(`  ${t}`));
  await save(name, await h.done);
}
