/**
 * `--workers N`: N worker threads, each running a {@link LoadPart} with its share of the concurrency,
 * rate, request count and connections. Their histograms come back encoded and are added exactly.
 */
import type { EventEmitter } from 'node:events';
import { H2labError } from '../errors.ts';
import type { Sample } from '../transport/types.ts';
import type { ResolvedLoadOptions } from './options.ts';
import type { PartInput, PartResult } from './part.ts';

export async function runWorkerParts(
  _inputs: PartInput[],
  _o: ResolvedLoadOptions,
  _events: EventEmitter,
  _onStopHook: (hook: (e: H2labError) => void) => void,
  _onSample: ((s: Sample) => void) | undefined,
): Promise<PartResult[]> {
  throw new H2labError('H2LAB_ERR_INVALID_OPTION', '--workers above 1 is not available yet', {
    option: '--workers',
  });
}
