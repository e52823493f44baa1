/**
 * The flags of everything that drives Chromium (`browser`, `page`, the tiles study), declared once
 * (docs/design.md, "Options"), in a file that loads neither Playwright nor the model's schemas: the
 * tiles study's help reads them (docs/design.md, "Start-up: what a command's help loads").
 */
import { declareFlag } from '../core/index.ts';
import { DEFAULT_CHROMIUM_PATH } from '../model/meta.ts';

export const CHROMIUM_FLAG = declareFlag({
  flag: 'chromium',
  grammar: 'string',
  arg: 'path',
  description: 'Chromium executable',
  defaultText: DEFAULT_CHROMIUM_PATH,
});
export const TRUST_CERT_FLAG = declareFlag({
  flag: 'trust-cert',
  grammar: 'string',
  arg: 'file',
  description: 'PEM certificate (or CA) whose key Chromium trusts by SPKI pin; repeatable',
  repeatable: true,
  gather: (texts) => [...texts],
});
export const MAX_STREAMS_FLAG = declareFlag({
  flag: 'max-streams',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 2 ** 31 - 1,
  description: 'SETTINGS_MAX_CONCURRENT_STREAMS each served origin advertises',
});
export const POOL_FLAG = declareFlag({
  flag: 'pool',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 1024,
  description: 'fixture: backend pool workers (small, so that the pool is the bottleneck)',
});
