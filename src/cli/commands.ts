/**
 * The command registry: one entry per command file, sorted by how often users run them. A command's
 * module is loaded only when the command line names it (or all of them, for tests), so `h2lab --help`
 * and `h2lab serve` do not load Playwright, the load engine and the studies.
 */
import type { Command } from 'commander';

/** One command: its name and one-line summary (the help lists it without loading it) and its module. */
interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<{ register: (program: Command) => void }>;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'compare',
    summary:
      'Compare HTTP/1.1, HTTP/2 and HTTP/3 client strategies against a target (default: the embedded fixture server) and explain the difference',
    load: () => import('./compare.ts'),
  },
  {
    name: 'study',
    summary:
      'Rerun one of the field studies (map tiles, chunked storage, mTLS echo, reverse proxy) and explain the answer',
    load: () => import('./study.ts'),
  },
  {
    name: 'serve',
    summary: 'Run the fixture server: HTTP/1.1 + h2c on --port, h2 + HTTP/1.1 (ALPN) on --tls-port',
    load: () => import('./serve.ts'),
  },
  {
    name: 'bench',
    summary:
      'One load run against URL (or the embedded fixture server) with one client strategy (--protocol)',
    load: () => import('./bench.ts'),
  },
  {
    name: 'report',
    summary:
      'Re-render a saved comparison or render a bench run (--json), or compare two saved comparisons (before/after)',
    load: () => import('./report.ts'),
  },
  {
    name: 'net',
    summary: 'packet-level network emulation (RTT, jitter, loss, rate) with kernel TCP end to end',
    load: () => import('./net.ts'),
  },
  {
    name: 'browser',
    summary:
      'Real Chromium over CDP: a burst of fetch() calls (peak in flight, stalled vs on the wire, connections) and a cancellation experiment, over http:// (HTTP/1.1), https:// (h2) and HTTP/1.1 over TLS. With no ORIGIN, starts the fixture server.',
    load: () => import('./browser.ts'),
  },
  {
    name: 'page',
    summary:
      'Record a page as a HAR (or take one from DevTools) and replay it from one listener per origin under HTTP/1.1, h2 and h3 through the same link; say why it loaded faster or slower',
    load: () => import('./page.ts'),
  },
  {
    name: 'probe',
    summary:
      'What a server speaks (HTTP/1.1 keep-alive, h2 by ALPN, h2c, Upgrade), its HTTP/2 SETTINGS, TLS and response behaviour',
    load: () => import('./probe.ts'),
  },
  {
    name: 'certs',
    summary: 'Write a CA, a server certificate (for --hosts) and a client certificate (clientAuth) to --out',
    load: () => import('./certs.ts'),
  },
  {
    name: 'plan',
    summary: 'Split one load run into shards for many load machines (JSON plan on stdout or --out)',
    load: () => import('./plan-command.ts'),
  },
  {
    name: 'shard',
    summary:
      'Run one shard of a plan (chunk lines on stdout, a digest as termination message), or all of them here',
    load: async () => ({ register: (await import('./plan.ts')).registerShard }),
  },
  {
    name: 'merge',
    summary: 'Merge the shard results of one plan exactly (counts, HdrHistograms), each shard beside it',
    load: () => import('./merge.ts'),
  },
  {
    name: 'k8s',
    summary: 'Run a plan as a Kubernetes Indexed Job: render the manifests, run and collect, clean up',
    load: () => import('./k8s.ts'),
  },
  {
    name: 'clock',
    summary: 'The reference clock of a plan: answer every GET with {"epochMs": n}',
    load: async () => ({ register: (await import('./plan.ts')).registerClock }),
  },
];
