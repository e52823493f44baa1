/**
 * The workloads a comparison makes of its flags (`--sizes`) and runs by default: plain data from the
 * fixture server's routes, which the flags' parsing uses without loading the options' schema.
 */
import { formatBytes } from '../core/index.ts';
import type { WorkloadInput } from '../model/index.ts';

/**
 * The fixture server's routes used by the default matrix. Kept in one place so a route change in
 * src/server is a one-line change here.
 */
export const FIXTURE_ROUTES = {
  bytes: (sizeBytes: number) => `/bytes/${sizeBytes}`,
  /** `n` distinct tiles of one zoom level (a 16-wide block), so no two requests in a row are alike. */
  tiles: (n: number) =>
    Array.from({ length: n }, (_, i) => `/tiles/12/${2048 + (i % 16)}/${1360 + Math.floor(i / 16)}`),
};

/** 1024 → "1 KiB", 1536 → "1.50 KiB". */
function sizeLabel(n: number): string {
  for (const [unit, f] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (n >= f && n % f === 0) return `${n / f} ${unit}`;
  }
  return formatBytes(n);
}

/** A workload that fetches responses of one size from the fixture server. */
export function sizeWorkload(sizeBytes: number): WorkloadInput {
  return {
    id: `bytes-${sizeBytes}`,
    label: `${sizeLabel(sizeBytes)} responses`,
    paths: [FIXTURE_ROUTES.bytes(sizeBytes)],
    responseSizeBytes: sizeBytes,
    kind: sizeBytes >= 256 * 1024 ? 'bulk' : 'interactive',
  };
}

/** The embedded default: small responses, 1 MiB responses, tiles behind the backend pool. */
export function defaultFixtureWorkloads(): WorkloadInput[] {
  return [
    sizeWorkload(1024),
    sizeWorkload(1024 * 1024),
    {
      id: 'tiles',
      label: 'tiles behind the backend pool',
      paths: FIXTURE_ROUTES.tiles(64),
      kind: 'backend',
    },
  ];
}

/** Workloads for a user's URL when none are named: the URL itself. */
export function urlWorkloads(url: string): WorkloadInput[] {
  return [{ id: 'url', label: url, paths: [url], kind: 'interactive' }];
}
