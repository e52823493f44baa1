/**
 * `GET /page/tiles.html?n=64&z=12&abort=MS`: a page that fires `n` tile fetches at once, each with a
 * cache-busting query so the browser cache never answers. Results land in `window.h2lab` and the
 * title becomes `done` when every fetch has settled, so a driver (Chromium over CDP) can wait for it.
 *
 * - `n`     number of tiles (1–10000, default 64)
 * - `z`     zoom level in the tile URLs (default 12)
 * - `abort` abort every unfinished fetch after this many milliseconds (cancellation experiments)
 */
interface TilesPageParams {
  n: number;
  z: number;
  abortMs: number | undefined;
}

/** Reads the page's query; out-of-range values are clamped rather than refused (it is a fixture). */
export function tilesPageParams(query: URLSearchParams): TilesPageParams {
  const int = (name: string, dflt: number, lo: number, hi: number): number => {
    const v = Number.parseInt(query.get(name) ?? '', 10);
    return Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : dflt;
  };
  const abort = query.get('abort');
  return {
    n: int('n', 64, 1, 10_000),
    z: int('z', 12, 0, 30),
    abortMs: abort === null ? undefined : int('abort', 0, 0, 3_600_000),
  };
}

/** The page's HTML. Only integers from the query reach it. */
export function tilesPageHtml(p: TilesPageParams): string {
  const side = Math.ceil(Math.sqrt(p.n));
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>h2lab tiles</title>
<style>body{font:14px system-ui;margin:1em}#grid{display:grid;grid-template-columns:repeat(${side},12px);gap:1px}
#grid i{width:12px;height:12px;background:#ddd}#grid i.ok{background:#3a3}#grid i.err{background:#c33}</style></head>
<body>
<p id="status">loading ${p.n} tiles…</p>
<div id="grid"></div>
<script>
(() => {
  const n = ${p.n}, z = ${p.z}, side = ${side}, abortMs = ${p.abortMs ?? 'undefined'};
  const cb = Date.now().toString(36) + Math.random().toString(36).slice(2);
  const grid = document.getElementById('grid');
  const cells = [];
  for (let i = 0; i < n; i++) { const c = document.createElement('i'); grid.appendChild(c); cells.push(c); }
  const ctl = new AbortController();
  const state = { n, cacheBust: cb, startedMs: performance.now(), finishedMs: undefined, done: false, results: [] };
  window.h2lab = state;
  if (abortMs !== undefined) setTimeout(() => ctl.abort(), abortMs);
  const one = async (i) => {
    const x = i % side, y = Math.floor(i / side);
    const url = '/tiles/' + z + '/' + x + '/' + y + '?cb=' + cb + '-' + i;
    const r = { i, url, startMs: performance.now(), endMs: undefined, status: 0, bytes: 0, error: undefined };
    try {
      const res = await fetch(url, { signal: ctl.signal, cache: 'no-store' });
      r.status = res.status;
      r.bytes = (await res.arrayBuffer()).byteLength;
      cells[i].className = res.ok ? 'ok' : 'err';
    } catch (e) {
      r.error = String(e && e.name || e);
      cells[i].className = 'err';
    }
    r.endMs = performance.now();
    state.results[i] = r;
  };
  Promise.all(Array.from({ length: n }, (_, i) => one(i))).then(() => {
    state.finishedMs = performance.now();
    state.done = true;
    const ok = state.results.filter((r) => r.status === 200).length;
    document.getElementById('status').textContent = ok + '/' + n + ' tiles in ' + Math.round(state.finishedMs - state.startedMs) + ' ms';
    document.title = 'done';
  });
})();
</script>
</body>
</html>
`;
}
