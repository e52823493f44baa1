// A page replay through a 150 ms link with --capture: the median load of each setting carries the
// time-sequence graphs of its capture (read by the reader compare uses), report.html draws them
// at 1280 and 800 px without widening the page or drawing anything over anything, and report.md
// names each setting's graphs and its capture file.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { missingPrerequisite } from '../../src/net/index.ts';
import { medianLoad } from '../../src/report/index.ts';
import { chromiumMissing } from '../browser/helpers.ts';
import { sequenceLayoutAt } from '../helpers/ts-layout.ts';
import { recordAndReplay } from './helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
const dir = mkdtempSync(join(tmpdir(), 'h2lab-page-tseq-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const skip = chromiumMissing() ?? missingPrerequisite(true);
if (skip) console.log(`# page replay time-sequence test skipped: ${skip}`);

test('page replay --capture through 150 ms: graphs of each setting’s median load', { skip }, async () => {
  const result = await recordAndReplay(
    dir,
    'origins=2,resources=30',
    ['--runs', '2', '--rtt', '150ms', '--bandwidth', '20mbit', '--capture', join(dir, 'cap')],
    CHROMIUM,
  );
  const out = join(dir, 'out');
  let drawn = 0;
  const connections = new Map<string, number>();
  for (const protocol of ['http/1.1', 'h2'] as const) {
    const shown = medianLoad(result, protocol)!;
    const ts = shown.capture?.timeSequence;
    assert.ok(ts, `${protocol}: the median load's capture has graphs`);
    const tcp = ts.connections.filter((c) => c.transport === 'tcp' && c.rounds.length > 0);
    connections.set(protocol, tcp.length + ts.connectionsNotDrawn);
    // Only this setting's listeners: the other setting's idle connections closing are left out.
    const ports = new Set(ts.connections.map((c) => c.server.split(':')[1]));
    assert.ok(ports.size <= 2, `${protocol}: ${[...ports]}`);
    for (const c of tcp) {
      assert.ok(c.slowStartRounds >= 1, JSON.stringify(c.rounds));
      // Rounds begin an RTT apart at least (150 ms, less the relay's scheduling).
      for (let i = 1; i < c.rounds.length; i++)
        assert.ok(c.rounds[i]!.startMs - c.rounds[i - 1]!.startMs >= 140, JSON.stringify(c.rounds));
    }
    drawn += Math.min(8, ts.connections.length);
    // The other kept load of the setting was captured but not read back (results.json stays small).
    const other = result.loads.find((l) => l.protocol === protocol && !l.discarded && l !== shown);
    assert.ok(other?.capture, `${protocol}: every kept load is captured`);
    assert.equal(other.capture.timeSequence, undefined);
  }
  // Two origins: h2 needs a connection or two each (Chromium keeps requests without credentials on a
  // connection of their own); HTTP/1.1 opens more for 30 resources.
  const [h1, h2] = [connections.get('http/1.1')!, connections.get('h2')!];
  assert.ok(h2 >= 2 && h2 < h1, `h1 ${h1} connections, h2 ${h2}`);
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(html, /<h2 id="ts">Time-sequence graphs/);
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  for (const [protocol, label, anchor] of [
    ['http/1.1', 'HTTP/1.1', 'ts-http_1_1'],
    ['h2', 'h2', 'ts-h2'],
  ] as const) {
    const shown = medianLoad(result, protocol)!;
    const ts = shown.capture!.timeSequence!;
    assert.match(html, new RegExp(`<h3 id="${anchor}">${label}, load ${shown.round}</h3>`));
    const line = `- ${label}, load ${shown.round} (the median load): open report.html#${anchor}, under “Time-sequence graphs (median load of each setting, from its capture)”; its capture ${shown.capture!.file} (${ts.connections.length + ts.connectionsNotDrawn} connection`;
    assert.ok(md.includes(line), `report.md lacks\n${line}\n${md}`);
  }
  for (const width of [1280, 800]) {
    const seen = await sequenceLayoutAt(CHROMIUM, join(out, 'report.html'), width);
    assert.ok(seen.overflow <= 0, `${width} px: the page is ${seen.overflow} px too wide`);
    assert.equal(seen.plots, drawn, `${width} px`);
    assert.ok(seen.canvases >= drawn, `${width} px: ${seen.canvases} canvases`);
    assert.equal(seen.outside, 0, `${width} px`);
    assert.deepEqual(seen.overlaps, [], `${width} px`);
  }
});
