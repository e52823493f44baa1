/**
 * What every folder needs and no subsystem owns: the error type and its codes, the CSV writer, units and their
 * parsing, the seeded random generator, the header-field check, the rank-test floor, option metadata, the version, the named
 * quantiles, atomic file writes, the socket-failure table and the launcher of h2lab's own modules.
 */

export * from './csv.ts';
export * from './errors.ts';
export * from './files.ts';
export * from './header-field.ts';
export * from './keylog.ts';
export * from './launch.ts';
export * from './lazy-module.ts';
export * from './open-files.ts';
export * from './option-meta.ts';
export * from './quantile.ts';
export * from './rank.ts';
export * from './rng.ts';
export * from './slots.ts';
export * from './socket-failure.ts';
export * from './units.ts';
export * from './version.ts';
