/**
 * The flags of a plan split into shards (`h2lab plan`, `compare --shards`) and their parsing: light to
 * load, so that a command's help does not load the shards' machinery.
 */
import type { Command } from 'commander';
import { H2labError, parseDurationMs, parseInteger, readFlag } from '../core/index.ts';
import type { PlanInput } from '../shard/index.ts';
import { MAX_SKEW_FLAG, RUN_ID_FLAG } from './common-flags.ts';
import { optionOf } from './flags.ts';

/** The plan's own flags, beside the load flags. */
export interface PlanFlags {
  shards?: string;
  startIn?: string;
  startAt?: string;
  startGrace?: string;
  clockUrl?: string;
  clockSamples?: string;
  runId?: string;
  maxSkew?: string;
}

/** Adds the flags of a plan (shards, start, clock) to a command; `--shards` is required unless `optional`. */
export function addPlanFlags(cmd: Command, optional = false): Command {
  const shards = '--shards <n>';
  return (
    optional
      ? cmd.option(shards, 'split the run into this many shards (load processes or pods)')
      : cmd.requiredOption(shards, 'load processes (pods) to split the run into')
  )
    .option('--start-in <time>', 'start every shard this long from now (default 60s)')
    .option('--start-at <iso>', 'start every shard at this time (ISO 8601), instead of --start-in')
    .option(
      '--start-grace <time>',
      'a shard released later than this after the start refuses to run (default 1s)',
    )
    .option(
      '--clock-url <url>',
      'coordinator answering {"epochMs": n} (h2lab clock serve): the reference clock',
    )
    .option('--clock-samples <n>', 'NTP-style exchanges per shard (default 8)')
    .addOption(optionOf(RUN_ID_FLAG))
    .addOption(optionOf(MAX_SKEW_FLAG));
}

/** The plan's own input from parsed flags (the start from --start-at or --start-in, default 60 s). */
export function planInputFromFlags(f: PlanFlags, now = Date.now()): PlanInput {
  let startAtEpochMs: number;
  if (f.startAt !== undefined) {
    startAtEpochMs = Date.parse(f.startAt);
    if (!Number.isFinite(startAtEpochMs)) {
      throw new H2labError(
        'H2LAB_ERR_INVALID_OPTION',
        `--start-at ${JSON.stringify(f.startAt)} is not valid: give an ISO 8601 time, e.g. 2026-12-01T15:00:00Z`,
        { option: '--start-at', value: f.startAt },
      );
    }
  } else {
    startAtEpochMs = now + (f.startIn ? parseDurationMs(f.startIn, '--start-in', 's') : 60_000);
  }
  const p: PlanInput = { shards: parseInteger(f.shards ?? '', '--shards', 1, 10_000), startAtEpochMs };
  if (f.startGrace) p.startGraceMs = parseDurationMs(f.startGrace, '--start-grace', 's');
  if (f.clockUrl) p.clockUrl = f.clockUrl;
  if (f.clockSamples) p.clockSamples = parseInteger(f.clockSamples, '--clock-samples', 1, 1000);
  if (f.runId) p.runId = f.runId;
  if (f.maxSkew) p.maxSkewMs = readFlag(MAX_SKEW_FLAG, f.maxSkew) as number;
  return p;
}
