// How long `h2lab --help` and `h2lab bench --help` take to start: from the compiled package (a
// `dist/` built into a scratch copy of this checkout, run as an installed package runs it) and from
// the sources through tsx (this checkout, as a fresh clone runs it). The two alternate within every
// round so machine load hits both alike, beside Node starting an empty module (the floor). Prints the
// medians and the ratios. The goal is `bench --help` under 0.2 s from an installed
// package; this is a benchmark, not a timed test. --node PATH runs the commands under another Node.
// --baseline DIR (repeatable) times another build beside them, DIR/bin/h2lab.js with its dist/ built
// (e.g. `git archive main | tar -x -C DIR`, node_modules linked, `tsc -p tsconfig.build.json` there),
// the runs interleaved with the others: a before/after of a change. --command "ARGS"
// (repeatable) times those command lines instead of the three above, e.g. --command "study --help".
// Usage: node --import tsx bench/startup.ts [--runs 15] [--baseline DIR] [--node PATH] [--command ARGS]
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, scratch } from './common.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '15' },
    baseline: { type: 'string', multiple: true },
    node: { type: 'string' },
    command: { type: 'string', multiple: true },
  },
});
// The Node that runs the commands (not the one running this harness): --node /path/to/node.
const nodeBin = values.node ?? process.execPath;
const nodeVersion = spawnSync(nodeBin, ['--version'], { encoding: 'utf8' }).stdout.trim();
const runs = Number(values.runs);
const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
if (existsSync(join(repo, 'dist'))) {
  console.error('this checkout has a dist/: remove it, so that "sources" measures the sources');
  process.exit(2);
}
const { dir } = scratch('h2lab-startup-');
const copy = join(dir, 'pkg');
for (const f of ['bin', 'src', 'native', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
  cpSync(join(repo, f), join(copy, f), { recursive: true });
}
mkdirSync(join(copy, 'node_modules'), { recursive: true });
// The copy resolves its dependencies from this checkout's node_modules, as an install resolves them
// from its own: link every top-level package.
const modules = join(repo, 'node_modules');
for (const name of spawnSync('ls', ['-A', modules], { encoding: 'utf8' })
  .stdout.split('\n')
  .filter(Boolean)) {
  if (name !== '.bin' && !existsSync(join(copy, 'node_modules', name))) {
    symlinkSync(join(modules, name), join(copy, 'node_modules', name));
  }
}
const build = spawnSync(
  process.execPath,
  [join(modules, 'typescript/bin/tsc'), '-p', join(copy, 'tsconfig.build.json')],
  {
    encoding: 'utf8',
  },
);
if (build.status !== 0) {
  console.error(build.stdout, build.stderr);
  process.exit(1);
}

// An installed package has no src/ (package.json's "files"): without it the launcher takes dist/ at
// once, as it does there, instead of first comparing every source's time with the build's.
rmSync(join(copy, 'src'), { recursive: true });
// The floor: Node itself starting an empty module.
const empty = join(dir, 'empty.mjs');
writeFileSync(empty, '');

const kinds: Record<string, string> = {
  package: join(copy, 'bin', 'h2lab.js'),
  sources: join(repo, 'bin', 'h2lab.js'),
};
for (const b of values.baseline ?? []) kinds[`baseline ${b}`] = join(b, 'bin', 'h2lab.js');
const commands: readonly (readonly string[])[] = values.command?.map((c) => c.split(' ').filter(Boolean)) ?? [
  ['--help'],
  ['bench', '--help'],
  ['compare', '--help'],
];

function timeMs(bin: string, args: readonly string[]): number {
  const t0 = performance.now();
  const r = spawnSync(nodeBin, [bin, ...args], { encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const times: Record<string, number[]> = {};
const loads = [loadavg()[0]!];
for (let i = 0; i < runs; i++) {
  times['node, an empty module'] = [...(times['node, an empty module'] ?? []), timeMs(empty, [])];
  for (const args of commands) {
    for (const [kind, bin] of Object.entries(kinds)) {
      const key = `${kind} h2lab ${args.join(' ')}`;
      times[key] = [...(times[key] ?? []), timeMs(bin, args)];
    }
  }
}
loads.push(loadavg()[0]!);
console.log(
  `Node ${nodeVersion}, ${runs} runs each, load average ${loads.map((l) => l.toFixed(1)).join(' → ')}`,
);
const fmt = (ms: number) => `${(ms / 1000).toFixed(3)} s`;
for (const [key, t] of Object.entries(times)) {
  console.log(
    `${key.padEnd(32)} median ${fmt(median(t))}  min ${fmt(Math.min(...t))}  max ${fmt(Math.max(...t))}`,
  );
}
for (const args of commands) {
  const a = args.join(' ');
  const ratio = median(times[`sources h2lab ${a}`]!) / median(times[`package h2lab ${a}`]!);
  console.log(`sources / package, h2lab ${a}: ${ratio.toFixed(2)}×`);
  for (const b of values.baseline ?? []) {
    const r = median(times[`package h2lab ${a}`]!) / median(times[`baseline ${b} h2lab ${a}`]!);
    console.log(`package / baseline ${b}, h2lab ${a}: ${r.toFixed(2)}×`);
  }
}
process.exit(0);
