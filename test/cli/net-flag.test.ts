// `--net`: one declaration and one grammar for bench and compare (src/cli/net-options.ts), and one
// meaning of `loopback` — no link — everywhere; a link with no impairment is the preset `relay`.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareOptionsFromFlags } from '../../src/cli/compare.ts';
import { linkOptionsFromFlags, parseNet, wantsLink } from '../../src/cli/net-options.ts';
import { resolveCompareOptions } from '../../src/compare/index.ts';
import { planLinks, resolveProfile } from '../../src/net/index.ts';
import { h2lab } from '../helpers/cli.ts';

test('one grammar: a comma list of loopback and presets; bench takes exactly one', () => {
  assert.deepEqual(parseNet('loopback, wan', true), ['loopback', 'wan']);
  assert.deepEqual(parseNet('relay', false), ['relay']);
  assert.throws(
    () => parseNet('loopback,wan', false),
    /--net "loopback,wan" is not valid: bench runs over one network/,
  );
  assert.throws(() => parseNet('moon', true), /--net "moon" is not a known profile: use one of relay, lan/);
  assert.throws(() => parseNet(',', true), /--net "," is not valid/);
});

test('loopback is no link in bench as in compare; relay is the link without impairment', () => {
  assert.equal(wantsLink({ net: 'loopback' }), false);
  assert.equal(wantsLink({ net: 'relay' }), true);
  assert.deepEqual(planLinks(['loopback'], undefined, 1), []);
  assert.deepEqual(
    planLinks(['relay'], undefined, 1).map((l) => l.name),
    ['relay'],
  );
  const relay = resolveProfile('relay');
  assert.equal(relay.rttMs + relay.loss, 0);
  assert.equal(relay.rateBitsPerSec, undefined);
  assert.throws(() => resolveProfile('loopback'), /--net loopback means no link .* use --net relay/);
  // With an explicit link on top, loopback adds nothing to it (as compare plans `--net loopback --rtt`).
  assert.deepEqual(linkOptionsFromFlags({ net: 'loopback', rtt: '10ms' }).profile, { rttMs: 10 });
  assert.equal(linkOptionsFromFlags({ net: 'wan', rtt: '10ms' }).profile, 'wan');
});

test("compare's links receive --seed, --cc and --initcwnd", () => {
  const o = resolveCompareOptions(
    compareOptionsFromFlags(undefined, {
      out: 'x',
      net: 'loopback,wan',
      seed: '7',
      cc: 'bbr',
      initcwnd: '4',
    }),
  );
  const [wan, ...rest] = planLinks(o.net, o.links, o.seed);
  assert.equal(rest.length, 0);
  assert.equal(wan!.name, 'wan+bbr');
  assert.equal(wan!.options.seed, 7);
  assert.equal(wan!.options.congestionControl, 'bbr');
  assert.equal(wan!.options.initialCwnd, 4);
});

test('bench --net loopback runs direct against the embedded server; two names exit 2', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-net-flag-'));
  const run = (args: string[]) => h2lab(['bench', ...args]);
  try {
    const out = join(dir, 'r.json');
    const r = await run(['--net', 'loopback', '-n', '50', '-c', '2', '-q', '--json', out]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(result.environment.link, undefined, 'no link was made');
    assert.match(result.target.url, /^https:\/\/127\.0\.0\.1:\d+\/bytes\/1024$/);
    assert.equal(result.counts.ok, 50);
    const two = await run(['--net', 'loopback,wan', '-n', '1']);
    assert.equal(two.code, 2);
    assert.match(two.stderr, /--net "loopback,wan" is not valid: bench runs over one network/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
