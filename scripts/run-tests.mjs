#!/usr/bin/env node
// Runs the whole suite with node:test (TAP-like spec output that CI reads), TypeScript through tsx.
// Usage: npm test [-- FILTER...]   (FILTER = substrings of test file paths)
// The whole suite (no FILTER) begins with `npm run lint` (biome, and the strict type-check of sources,
// tests, benches and scripts) and `npm run build`, and stops there when either fails: `npm ci && npm test` is all CI runs
// (.ci/run), so the lint is part of the README's test command (docs/design.md, "Toolchain").
// Test files run one at a time: timing assertions on a 2-core machine must not share it.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.test.ts') ? [p] : [];
  });
}

const filters = process.argv.slice(2);
const files = walk('test')
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
if (filters.length === 0) {
  const lint = spawnSync('npm', ['run', 'lint'], { stdio: 'inherit' });
  if (lint.status !== 0) {
    console.error('npm run lint failed: the suite did not run');
    process.exit(lint.status || 1);
  }
  // The build too: the processes h2lab starts (the link's relay, a fixture server behind a link,
  // worker threads, shards) start from dist/ when it is fresh, ≈0.3 s instead of ≈2 s through tsx
  // (src/core/launch.ts) — the speed a user of the package gets, and less start-up on 2 cores.
  const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  if (build.status !== 0) {
    console.error('npm run build failed: the suite did not run');
    process.exit(build.status || 1);
  }
}
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=300000', ...files],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
