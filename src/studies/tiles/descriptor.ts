/** What the tiles study declares (light: `h2lab study --help` reads it): its name, question, flags. */
import { CHROMIUM_FLAG, POOL_FLAG } from '../../browser/meta.ts';
import { declareFlag, invalidOption, parseInteger } from '../../core/index.ts';
import { NET_FLAG, profileNames } from '../../net/meta.ts';
import { describeStudy } from '../describe.ts';
import { LOOPBACK_FLAG, listOf, STUDY_RUNS } from '../flags.ts';

/** The report's server: 8 cores, a pool of 8 database connections, "a tile is single-threaded CPU". */
export const TILES_REPORT_CORES = 8;

/**
 * The render-time model. The report: ~250 ms for a heavy tile, a pool of 8 database connections on 8
 * cores; its 121-tile burst took 1.2 s on h2, i.e. about 80 ms of pool time per tile on average,
 * which is what 60 ms light tiles with 10% of 250 ms heavy ones give (60 + 0.1 × 190 = 79 ms).
 *
 * By default (`--render cpu`) a tile burns CPU on render threads pinned to `--render-cores` (default
 * 1, leaving the other core of a small machine to Chromium), each tile's CPU time scaled by
 * cores / 8 so that the pool's capacity in tiles per second is the report's 8 cores'; `--render sleep`
 * is the timer pool (the report's times unscaled), where more workers always help.
 */
export const TILES_MODEL = {
  poolSize: 8,
  tileMs: 60,
  tileHeavyMs: 250,
  tileHeavyFraction: 0.1,
  renderCores: 1,
};

const POOLS_FLAG = declareFlag({
  flag: 'pools',
  grammar: 'int',
  arg: 'list',
  min: 1,
  max: 1024,
  description: 'backend pool sizes of the sweep',
  defaultText: '1,2,4,8,16,32; quick 1,4,16',
  parse: (v, f) => listOf(v, f, (x) => parseInteger(x, f, 1, 1024)),
});
const RENDER_FLAG = declareFlag({
  flag: 'render',
  grammar: 'enum',
  arg: 'mode',
  choices: ['cpu', 'sleep'],
  description:
    'how a tile is rendered: cpu (burns CPU on --render-cores pinned cores, the report’s CPU-bound tiles) or sleep (a timer, no CPU)',
  defaultText: 'cpu',
  parse: (v, f) => {
    if (v !== 'cpu' && v !== 'sleep') throw invalidOption(f, v, 'use cpu or sleep');
    return v;
  },
});
const RENDER_CORES_FLAG = declareFlag({
  flag: 'render-cores',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 1024,
  description: `cores the render threads are pinned to with --render cpu (the tile CPU time is scaled by cores/${TILES_REPORT_CORES})`,
  defaultText: String(TILES_MODEL.renderCores),
});
const SESSIONS_FLAG = declareFlag({
  flag: 'sessions',
  grammar: 'int',
  arg: 'n',
  min: 1,
  max: 20,
  description: 'map sessions per target and server mode',
  defaultText: '2; quick 1',
});

/** `h2lab study tiles`: the map tile server in Chromium (src/studies/tiles/). */
export const TILES_STUDY = describeStudy({
  name: 'tiles',
  title: 'The map tile server: HTTP/2 moves the queue, does it shorten it?',
  source: 'report 000 (the map tile server)',
  question:
    'For a map whose tiles come from a bounded backend pool, what does HTTP/2 change against HTTP/1.1 in a real browser — where the queue sits, what abandoned tiles cost, and how many workers are worth having?',
  flags: [
    {
      of: NET_FLAG,
      key: 'net',
      list: true,
      description: `network conditions: loopback and link profiles (${profileNames().join(', ')})`,
      defaultText: 'loopback,wan',
    },
    { of: LOOPBACK_FLAG, key: 'loopback', description: 'loopback only (no emulated link, no root needed)' },
    { of: POOLS_FLAG, key: 'pools' },
    { of: RENDER_FLAG, key: 'render' },
    { of: RENDER_CORES_FLAG, key: 'renderCores' },
    {
      of: POOL_FLAG,
      key: 'poolSize',
      description: 'backend workers for the burst and the map sessions',
      defaultText: `${TILES_MODEL.poolSize}, as the report's`,
    },
    { ...STUDY_RUNS, description: 'bursts per target, the first discarded', defaultText: '6; quick 2' },
    { of: SESSIONS_FLAG, key: 'sessions' },
    { of: CHROMIUM_FLAG, key: 'chromiumPath' },
  ],
});
