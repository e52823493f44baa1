/**
 * The command registry: one line per command file. Keep it sorted by how often users run them.
 */
import type { Command } from 'commander';
import { register as bench } from './bench.ts';
import { register as browser } from './browser.ts';
import { register as certs } from './certs.ts';
import { register as compare } from './compare.ts';
import { register as net } from './net.ts';
import { register as probe } from './probe.ts';
import { register as report } from './report.ts';
import { register as serve } from './serve.ts';
import { register as study } from './study.ts';

export const COMMANDS: Array<(program: Command) => void> = [
  compare,
  study,
  serve,
  bench,
  report,
  net,
  browser,
  probe,
  certs,
];
