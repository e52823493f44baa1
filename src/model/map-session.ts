/**
 * A scripted MapLibre pan-and-zoom session (src/browser/map-session.ts): what the map itself asked
 * for and abandoned, what reached the server and what it rendered for nobody, and how long the
 * viewport took to be complete after each move. Times are milliseconds.
 */
import { z } from 'zod';
import { spreadSchema } from './browser.ts';
import { count, ms, nanAsNull } from './fields.ts';

const counts = z.record(z.string(), z.number());

/** One step of a move: where the camera goes, and how. */
const mapStepSchema = z.strictObject({
  center: z.tuple([z.number(), z.number()]).describe('longitude, latitude (degrees)'),
  zoom: z.number(),
  how: z
    .enum(['jump', 'ease', 'fly'])
    .describe(
      'MapLibre jumpTo (no animation), easeTo or flyTo (animated: intermediate frames ask for tiles)',
    ),
  durationMs: ms('animation length (ease, fly)').default(0),
});
/** One step of a move (see {@link mapStepSchema}). */
export type MapStep = z.input<typeof mapStepSchema>;

/**
 * One move of the script: each step waits for its first tile request (at most 1 s), then `gapMs`,
 * and the next step starts without waiting for the tiles (a drag, a fling, a flick); after the last
 * step the session waits for MapLibre's `idle` (every tile of the viewport loaded and drawn).
 */
export const mapMoveSchema = z.strictObject({
  name: z.string(),
  steps: z.array(mapStepSchema).min(1),
  gapMs: ms("from a step's first tile request to the next step").default(0),
});
/** One move of the script (see {@link mapMoveSchema}). */
export type MapMove = z.input<typeof mapMoveSchema>;

/** What one move cost. */
const mapMoveResultSchema = z.strictObject({
  name: z.string(),
  tilesRequested: count('tile requests the map issued during the move, until its idle'),
  tilesAborted: count("MapLibre's dataabort events for tiles during the move"),
  completeMs: nanAsNull.describe(
    "from the move's last step to MapLibre's idle (the viewport complete), milliseconds; null when idle did not come within the bound",
  ),
});
/** What one move cost (see {@link mapMoveResultSchema}). */
export type MapMoveResult = z.infer<typeof mapMoveResultSchema>;

/** What the server saw of a session (from the fixture's metrics delta, on `/vector-tiles`). */
const mapServerViewSchema = z.strictObject({
  reachedHandler: count('tile requests whose handler started'),
  cancellations: counts.describe(
    'tiles whose client went away, by where their job was: queued (dropped), running (aborted), after (rendered, response not delivered)',
  ),
  jobs: counts.describe('pool jobs by outcome (completed, dropped, aborted, unwanted)'),
  renderedForNothing: count(
    'tiles rendered to the end for a client that had gone: jobs unwanted (a server ignoring cancellation) plus cancellations after the render',
  ),
  rstStreamByCode: counts.describe('RST_STREAM frames from the client by error code; 8 is CANCEL'),
  poolQueueMs: z
    .strictObject({ p50: z.number(), p90: z.number() })
    .optional()
    .describe('time tiles waited for a backend worker (pool histogram), milliseconds'),
  inFlightPeak: count('highest number of requests in handlers at once').optional(),
  connectionsOpened: count('connections the server accepted during the session'),
  drained: z.boolean().describe('true when the pool was idle again before the numbers were read'),
});
/** What the server saw of a session (see {@link mapServerViewSchema}). */
export type MapServerView = z.infer<typeof mapServerViewSchema>;

/** One session on one target. */
const mapSessionSchema = z.strictObject({
  target: z.string().describe('browser target id (http, https, https-h1)'),
  index: z.number().int().describe('0-based repetition'),
  serverMode: z.enum(['honour', 'ignore', 'unknown']),
  webgl: z.string().describe("the page's WebGL renderer (UNMASKED_RENDERER_WEBGL)"),
  loadMs: ms('from navigation to the map load event'),
  firstIdleMs: nanAsNull.describe(
    'from navigation to the first idle (initial viewport complete), milliseconds',
  ),
  moves: z.array(mapMoveResultSchema),
  tilesRequested: count('tile requests the map issued (counted in its transformRequest)'),
  tilesCompleted: count('tile requests CDP saw finish with a response body'),
  tilesCanceled: count('tile requests CDP reported as loadingFailed with canceled (the map aborted them)'),
  tilesFailed: counts.describe('other failed tile requests by CDP error text'),
  mapAborted: count("MapLibre's dataabort events for tiles (tiles dropped before they were drawn)"),
  cdpMissing: count('tile requests the page issued that CDP never reported'),
  peakInFlight: count(
    'most completed tile requests on the wire at once (CDP send → end; a canceled request has no send time in CDP)',
  ),
  connections: count('distinct connections carrying tiles (CDP connectionId)'),
  protocols: counts.describe('completed tile requests by negotiated protocol'),
  stalledMs: spreadSchema.describe(
    'in the browser before the request was sent (queued for a socket or stream)',
  ),
  wireMs: spreadSchema.describe('from send to the end (network + server queue + render)'),
  mapErrors: z.array(z.string()).describe("MapLibre's error events"),
  server: mapServerViewSchema.optional(),
});
/** One map session (see {@link mapSessionSchema}). */
export type MapSession = z.infer<typeof mapSessionSchema>;
