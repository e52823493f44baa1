// The one progress display: a redrawn bar on a terminal, plain lines elsewhere at most one per
// PLAIN_EVERY_MS (a log or CI shows a long compare is alive), and lines that stay in both.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { formatEta, PLAIN_EVERY_MS, progressBar } from '../../src/cli/progress.ts';

function stream(tty: boolean): { s: NodeJS.WriteStream; text: () => string } {
  const p = new PassThrough();
  let out = '';
  p.on('data', (c: Buffer) => {
    out += c;
  });
  Object.assign(p, { isTTY: tty, columns: 60 });
  return { s: p as unknown as NodeJS.WriteStream, text: () => out };
}

test('not a terminal: a plain line at once, then none until PLAIN_EVERY_MS has passed; lines stay', () => {
  const { s, text } = stream(false);
  const bar = progressBar(s);
  bar.update(0, 10, 'runs', 'h1 c=1 run 1');
  bar.update(1, 10, 'runs', 'h2 c=1 run 1');
  bar.line('  cell x: not offered by the server');
  assert.equal(text(), '0/10 runs · ETA … · h1 c=1 run 1\n  cell x: not offered by the server\n');
  assert.doesNotMatch(text(), /\r|\x1b/);
  assert.ok(PLAIN_EVERY_MS >= 5000 && PLAIN_EVERY_MS <= 30_000);
});

test('a terminal: the bar is redrawn in place and cut to the width; clear() removes it', () => {
  const { s, text } = stream(true);
  const bar = progressBar(s);
  bar.update(5, 10, 'runs', 'a label long enough to be cut at the terminal width of sixty');
  assert.match(text(), /^\r\x1b\[2K\[#{12}-{12}\] 5\/10 runs · ETA /);
  assert.ok(text().length - '\r\x1b[2K'.length <= 59);
  bar.clear();
  assert.ok(text().endsWith('\r\x1b[2K'));
  assert.equal(formatEta(65_000), '1m05s');
  assert.equal(formatEta(Number.NaN), '…');
});
