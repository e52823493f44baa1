// Chromium's key log (its SSLKEYLOGFILE, `browser --keylog`, `page replay --keylog`): a page load
// over TLS leaves the secrets of Chromium's connections, and the fixture server's own key log holds
// the same connections' (the client randoms match).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { launchChromium, spkiPins } from '../../src/browser/index.ts';
import { DEFAULT_CHROMIUM_PATH } from '../../src/model/index.ts';
import { startFixtureTarget } from '../../src/server/index.ts';
import { testHome } from '../helpers/fixture.ts';
import { chromiumMissing } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'h2lab-chromium-keylog-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const randoms = (file: string): Set<string> =>
  new Set(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('CLIENT_TRAFFIC_SECRET_0 '))
      .map((l) => l.split(' ')[1]!),
  );

describe("Chromium's key log", { skip: chromiumMissing() }, () => {
  test('a TLS page load writes the secrets the fixture server logged for the same connections', async () => {
    testHome();
    const serverKeys = join(dir, 'server.log');
    const browserKeys = join(dir, 'chromium.log');
    const fixture = await startFixtureTarget({ keyLogFile: serverKeys }, 'in-process');
    const chromium = await launchChromium({
      executablePath: DEFAULT_CHROMIUM_PATH,
      spki: [...spkiPins(fixture.certPem), ...spkiPins(fixture.caPem!)],
      keyLogFile: browserKeys,
    });
    try {
      const page = await chromium.context.newPage();
      const r = await page.goto(`${fixture.tlsUrl}/healthz`);
      assert.equal(r?.status(), 200);
    } finally {
      await chromium.close();
      await fixture.close();
    }
    const browser = randoms(browserKeys);
    assert.ok(browser.size >= 1, 'Chromium logged at least one connection');
    const server = randoms(serverKeys);
    assert.ok(server.size >= 1, 'the server logged the connection it accepted');
    assert.ok(
      [...server].every((r) => browser.has(r)),
      'every connection the server accepted is in the log',
    );
  });
});
