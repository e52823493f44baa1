// The error for an option key the library does not know: renamed keys name their new name, a typo
// names the key it resembles, nested keys are named where they sit — through the real entry points.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isH2labError, probe, runComparison, runLoad, startServer } from '../../src/index.ts';

async function refusal(f: () => Promise<unknown>): Promise<string> {
  try {
    await f();
  } catch (err) {
    assert.ok(isH2labError(err), String(err));
    assert.equal(err.code, 'H2LAB_ERR_INVALID_OPTION');
    return err.message;
  }
  assert.fail('the options were accepted');
}

test('a renamed key names its new name, in every entry point that takes a CA', async () => {
  assert.equal(
    await refusal(async () => runLoad({ url: 'https://127.0.0.1:1/', caFile: 'ca.pem' } as never).done),
    'runLoad: unknown option "caFile": it is called "ca" now (a PEM file\'s path, as the --ca flag)',
  );
  assert.match(
    await refusal(() => probe('https://127.0.0.1:1/', { caPath: 'ca.pem' } as never)),
    /"caPath": it is called "ca"/,
  );
  assert.match(
    await refusal(() => startServer({ caPath: 'ca.pem' } as never)),
    /^startServer: unknown option "caPath"/,
  );
  assert.match(
    await refusal(async () => runComparison({ tls: { certFile: 'c.pem' } } as never)),
    /^runComparison: unknown option "tls\.certFile": it is called "cert" now/,
  );
});

test('a misspelt key names the one it resembles; a key like nothing points to the docs', async () => {
  assert.match(
    await refusal(async () => runLoad({ url: 'http://127.0.0.1:1/', concurency: 3 } as never).done),
    /unknown option "concurency": did you mean "concurrency"\?/,
  );
  assert.match(
    await refusal(async () => runLoad({ url: 'http://127.0.0.1:1/', zzzzzz: 1 } as never).done),
    /unknown option "zzzzzz": see docs\/api\.md/,
  );
});
