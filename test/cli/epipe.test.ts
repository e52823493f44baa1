// `h2lab … | head`: the reader closes the pipe before h2lab has written everything. h2lab stops
// quietly (as Unix tools do) instead of dying on an unhandled EPIPE with a stack trace.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { nodeArgv } from '../../src/core/index.ts';

test('a closed stdout pipe (| head) ends the command quietly, with no stack trace', async () => {
  const [node, ...args] = nodeArgv('cli/main');
  // The profiles as JSON are a few KiB; the pipe is closed before the first byte is read.
  const child = spawn(node!, [...args, 'net', 'profiles', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.doesNotMatch(stderr, /EPIPE|Unhandled| {4}at /, stderr);
  assert.equal(code, 0, stderr);
});
