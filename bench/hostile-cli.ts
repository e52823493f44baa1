// Hostile input to the CLI, the numbers of docs/reliability.md ("Hostile input"): each case runs the
// CLI of a checkout as a process, samples its RSS every 20 ms, kills it (SIGKILL) past 2 GiB or 20 s,
// and prints one line: exit status, peak RSS, time and the first line of stderr. Targets are closed
// loopback ports (nothing is loaded). Pass another checkout to measure it (the "before" column).
// Usage: node --import tsx bench/hostile-cli.ts [path/to/checkout]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { billionLaughsYaml, nestedArrays } from '../test/helpers/hostile-files.ts';

const root = resolve(process.argv[2] ?? '.');
const dir = mkdtempSync(join(tmpdir(), 'h2lab-hostile-cli-'));
const RSS_LIMIT_KB = 2 * 1024 * 1024;
const TIME_LIMIT_MS = 20_000;
// Resolved from this checkout: the CLI runs in a scratch directory (compare writes into its cwd).
const tsx = pathToFileURL(resolve('node_modules/tsx/dist/loader.mjs')).href;

const fifo = join(dir, 'fifo');
spawn('mkfifo', [fifo], { stdio: 'ignore' });
const big = join(dir, 'big');
writeFileSync(big, Buffer.alloc(100 * 1024 * 1024, 'a'));
const sub = join(dir, 'a-dir');
mkdirSync(sub);
const laughs = join(dir, 'laughs.yaml');
writeFileSync(laughs, billionLaughsYaml());
const deepYaml = join(dir, 'deep.yaml');
writeFileSync(deepYaml, `port: ${nestedArrays(100_000)}\n`);
const deepJson = join(dir, 'deep.json');
writeFileSync(deepJson, nestedArrays(1_000_000));

const dead = 'http://127.0.0.1:1';
const files: Array<[string, string]> = [
  ['/dev/zero', '/dev/zero'],
  ['100 MB', big],
  ['FIFO', fifo],
  ['directory', sub],
];
const cases: Array<[string, string[]]> = [];
for (const [what, f] of files) {
  cases.push([`bench --urls ${what}`, ['bench', dead, '-p', 'h1', '-n', '1', '--urls', f]]);
  cases.push([`bench --body ${what}`, ['bench', dead, '-p', 'h1', '-n', '1', '--body', f]]);
  cases.push([`bench --ca ${what}`, ['bench', dead, '-p', 'h1', '-n', '1', '--ca', f]]);
  cases.push([`compare --urls ${what}`, ['compare', dead, '--runs', '2', '--urls', f]]);
  cases.push([`serve --config ${what}`, ['serve', '--port', '0', '--no-tls', '--config', f]]);
  cases.push([`serve --cert ${what}`, ['serve', '--port', '0', '--cert', f, '--key', f]]);
  cases.push([`report ${what}`, ['report', f]]);
  cases.push([`browser --trust-cert ${what}`, ['browser', 'https://127.0.0.1:1', '--trust-cert', f]]);
}
cases.push(['serve --config billion laughs', ['serve', '--port', '0', '--no-tls', '--config', laughs]]);
cases.push(['serve --config 100k deep', ['serve', '--port', '0', '--no-tls', '--config', deepYaml]]);
cases.push(['report 1M-deep JSON', ['report', deepJson]]);
cases.push(['bench {0..999999}/{0..999999}', ['bench', `${dead}/t/{0..999999}/{0..999999}`, '-n', '1']]);
cases.push(['bench --duration 999999h', ['bench', dead, '-p', 'h1', '-d', '999999h']]);
cases.push(['bench --body-size 1TiB', ['bench', dead, '-p', 'h1', '-n', '1', '--body-size', '1TiB']]);

interface Outcome {
  code: number | string;
  peakKb: number;
  ms: number;
  line: string;
}

function run(args: string[]): Promise<Outcome> {
  return new Promise((done) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--import', tsx, join(root, 'src/cli/main.ts'), ...args], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    let peakKb = 0;
    let killed = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (err.length < 4096) err += d;
    });
    const poll = setInterval(() => {
      try {
        const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        peakKb = Math.max(peakKb, Number(m?.[1] ?? 0));
      } catch {}
      if (peakKb > RSS_LIMIT_KB) killed = 'killed >2GiB';
      else if (performance.now() - t0 > TIME_LIMIT_MS) killed = 'killed >20s';
      if (killed) child.kill('SIGKILL');
    }, 20);
    child.on('close', (code, signal) => {
      clearInterval(poll);
      const first = err.split('\n').find((l) => l.trim() !== '') ?? '';
      const stack = /\n\s+at /.test(err) ? ' [stack trace]' : '';
      done({
        code: killed || (code ?? signal ?? '?'),
        peakKb,
        ms: performance.now() - t0,
        line: `${first.slice(0, 150)}${stack}`,
      });
    });
  });
}

try {
  for (const [name, args] of cases) {
    const o = await run(args);
    console.log(
      `${name.padEnd(34)} exit ${String(o.code).padEnd(13)} rss ${String(Math.round(o.peakKb / 1024)).padStart(5)} MiB ${String(Math.round(o.ms)).padStart(6)} ms  ${o.line}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
