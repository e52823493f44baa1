// `h2lab page` as a user runs it: bad input is a usage error (exit 2) with a stable code that names
// the option or file, checked before Chromium starts (so these need no browser).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseProtocols } from '../../src/cli/page.ts';
import { h2lab } from '../helpers/cli.ts';
import { oneEntryHar } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'h2lab-page-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const har = join(dir, 'one.har');
writeFileSync(har, JSON.stringify(oneEntryHar('https://www.example.test/')));

const notHar = join(dir, 'notes.txt');
writeFileSync(notHar, 'not a HAR\n');

const cases: Array<{ name: string; args: string[]; code: string; says: RegExp }> = [
  {
    name: 'record without a URL or --generate',
    args: ['page', 'record', '-o', join(dir, 'x.har')],
    code: 'H2LAB_ERR_USAGE',
    says: /--generate/,
  },
  {
    name: 'a bad --generate key',
    args: ['page', 'record', '--generate', 'pages=3', '-o', join(dir, 'x.har')],
    code: 'H2LAB_ERR_INVALID_OPTION',
    says: /origins=N/,
  },
  {
    name: 'an unwritable --output',
    args: ['page', 'record', '--generate', 'default', '-o', '/proc/x.har'],
    code: 'H2LAB_ERR_OUTPUT',
    says: /--output/,
  },
  {
    name: 'a missing HAR',
    args: ['page', 'replay', join(dir, 'none.har')],
    code: 'H2LAB_ERR_FILE_UNREADABLE',
    says: /none\.har/,
  },
  {
    name: 'a file that is not a HAR',
    args: ['page', 'replay', notHar],
    code: 'H2LAB_ERR_HAR_INVALID',
    says: /not a HAR/,
  },
  {
    name: 'an unknown protocol',
    args: ['page', 'replay', har, '--protocols', 'h1,spdy'],
    code: 'H2LAB_ERR_INVALID_OPTION',
    says: /--protocols/,
  },
  {
    name: '--h2-origins naming a host the HAR lacks',
    args: ['page', 'replay', har, '--h2-origins', 'cdn.example.test'],
    code: 'H2LAB_ERR_INVALID_OPTION',
    says: /www\.example\.test/,
  },
];

for (const c of cases) {
  test(`page: ${c.name} → exit 2, ${c.code}`, async () => {
    const r = await h2lab(c.args, { timeoutMs: 30_000 });
    assert.equal(r.code, 2, `exit status; stderr: ${r.stderr}`);
    assert.ok(r.stderr.includes(c.code), `stderr names ${c.code}: ${r.stderr}`);
    assert.match(r.stderr, c.says, 'the message names what to fix');
  });
}

test('--protocols: hN is HTTP/N, the wire protocols are taken as themselves, the settings are named by them', () => {
  assert.deepEqual(parseProtocols('h1,h2,h3'), ['http/1.1', 'h2', 'h3'], 'the flag values users type');
  assert.deepEqual(parseProtocols('http/1.1,h2'), ['http/1.1', 'h2'], 'the ids a result names them by');
  assert.deepEqual(parseProtocols('h1,http/1.1'), ['http/1.1'], 'one setting once');
  for (const bad of ['h4', 'h2c', 'h2-pool', ''])
    assert.throws(() => parseProtocols(bad), /--protocols/, `${JSON.stringify(bad)} is refused`);
});
