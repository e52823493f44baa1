/**
 * The strategy registry is the one owner of strategies (docs/design.md, "Add a strategy"):
 * (a) no file above src/transport compares a strategy's name to a string literal, switches on it or
 * keys a record by it — it asks the registry; (b) a fourth strategy defined here, in this file, and
 * registered at run time runs end to end against the real fixture server: `runLoad`, compare's option
 * parsing, a comparison and the rendered report, with nothing else changed.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { compareOptionsFromFlags } from '../../src/cli/compare.ts';
import { COMPARE_DEFAULTS, resolveCompareOptions, runComparison } from '../../src/compare/index.ts';
import { isH2labError } from '../../src/core/index.ts';
import { resolveLoadOptions, runLoad } from '../../src/load/index.ts';
import { loadHtmlAssets, renderHtml, renderMarkdown, renderTerminal } from '../../src/report/index.ts';
import type { RunningServer } from '../../src/server/index.ts';
import {
  getStrategy,
  listStrategies,
  registerStrategy,
  type Strategy,
  strategyLabel,
  strategyNames,
} from '../../src/transport/index.ts';
import { startFixture } from '../helpers/fixture.ts';

// ---------------------------------------------------------------------------------------------------
// (a) The grep: strategy names used as strategy names above src/transport.

/** Wire-protocol ids (ALPN, and h2c). A strategy name that is also one (`h2`, `h3`) is ambiguous. */
const WIRE_PROTOCOLS = ['http/1.1', 'h2', 'h2c', 'h3'];

/**
 * Operands that hold a wire protocol, not a strategy: comparing them to `'h2'` is a protocol
 * question. Each is a TLS/ALPN or negotiated-protocol value:
 * - `alpnProtocol`: node's TLSSocket / Http2Session ALPN result (src/server);
 * - `alpn`: the probe's negotiated ALPN (src/probe/tls-probe.ts);
 * - `negotiated`, `requested`: a run's or an error's wire protocols (RunResult.protocol);
 * - `wire`: what a replay origin speaks (src/server/origins.ts; `h2lab page`'s settings are named by
 *   the wire protocol, `ReplayProtocol` in src/model/page.ts).
 */
const WIRE_OPERAND = /(?:\balpnProtocol|\.alpn|\bnegotiated|\brequested|\bwire)$/;

/** `text` with comments blanked (newlines kept, so line numbers hold); strings are kept. */
function stripComments(text: string): string {
  let out = '';
  let i = 0;
  let quote: string | undefined;
  while (i < text.length) {
    const c = text[i]!;
    if (quote) {
      out += c;
      if (c === '\\') {
        out += text[i + 1] ?? '';
        i += 2;
        continue;
      }
      if (c === quote) quote = undefined;
      i++;
    } else if (c === "'" || c === '"' || c === '`') {
      quote = c;
      out += c;
      i++;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/**
 * Where `source` uses a strategy name as a strategy name, as `line: code — why` strings.
 * - A name that is not a wire protocol (`h1`, `h2-pool`, any later one) may not appear as a string
 *   literal at all, nor as an object key: above src/transport it can only be a strategy's name.
 * - An ambiguous name (`h2`) may not be compared with `===`/`!==`/`==`/`!=` unless the other operand
 *   is a wire-protocol value ({@link WIRE_OPERAND}), nor be a `case` label.
 */
export function strategyNameUses(source: string, names: readonly string[]): string[] {
  const code = stripComments(source);
  const lines = source.split('\n');
  const found: Array<[number, string]> = [];
  const at = (index: number, why: string) => {
    const line = code.slice(0, index).split('\n').length;
    found.push([line, `${line}: ${lines[line - 1]!.trim()} — ${why}`]);
  };
  for (const name of names) {
    const n = esc(name);
    if (!WIRE_PROTOCOLS.includes(name)) {
      for (const m of code.matchAll(new RegExp(`(['"\`])${n}\\1`, 'g'))) at(m.index, `the literal '${name}'`);
      // An unquoted key with a literal value: `{ h1: '#d9730d' }` (a quoted key is a literal above;
      // `h1: boolean` in a signature is a parameter, HTTP/1.1 in the probe's words).
      for (const m of code.matchAll(
        new RegExp(`(?:^|[{,])\\s*${n}\\s*:\\s*(?=['"\`\\d\\[-]|true|false)`, 'gm'),
      ))
        at(m.index + m[0].indexOf(name), `the key ${name}`);
      continue;
    }
    const lit = `(?<q>['"])${n}\\k<q>`;
    const operand = '(?<x>[\\w$.?!\\]\\)]+)';
    for (const m of code.matchAll(new RegExp(`${operand}\\s*[!=]==?\\s*${lit}`, 'g'))) {
      const x = m.groups!.x!.replace(/[?!]+$/, '');
      if (!WIRE_OPERAND.test(x)) at(m.index, `${x} compared with '${name}'`);
    }
    for (const m of code.matchAll(new RegExp(`${lit}\\s*[!=]==?\\s*(?<x>[\\w$.?!(\\[]+)`, 'g'))) {
      if (!WIRE_OPERAND.test(m.groups!.x!)) at(m.index, `'${name}' compared with ${m.groups!.x}`);
    }
    for (const m of code.matchAll(new RegExp(`\\bcase\\s+${lit}\\s*:`, 'g'))) at(m.index, `case '${name}'`);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, s]) => s);
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : n.endsWith('.ts') ? [p] : [];
  });
}

describe('no strategy name above src/transport', () => {
  test('the scan finds a reintroduced name compare, switch or record, and passes wire protocols', () => {
    const names = ['h1', 'h2', 'h2-pool'];
    const flagged = (snippet: string) => strategyNameUses(snippet, names);
    assert.equal(
      flagged("if (o.protocol === 'h1') return 6;").length,
      1,
      'the compare the registry replaced',
    );
    assert.equal(flagged("const c = o.protocol !== 'h2' ? n : 1;").length, 1);
    assert.equal(flagged("if ('h2' === cell.protocol) x();").length, 1);
    assert.equal(flagged("switch (p) {\n  case 'h2':\n    break;\n}").length, 1);
    assert.equal(flagged("const c = { h1: '#d9730d', h2: '#2f6fde', 'h2-pool': '#1e9e6a' };").length, 2);
    assert.equal(flagged("runLoad({ url, protocol: 'h2-pool' });").length, 1);
    assert.deepEqual(flagged("const isH2 = socket.alpnProtocol === 'h2';"), []);
    assert.deepEqual(flagged("if (negotiated.alpn === 'h2') ok();"), []);
    assert.deepEqual(flagged("if (r.protocol.negotiated !== 'h2') no();"), []);
    assert.deepEqual(
      flagged("// if (o.protocol === 'h1')\n/* case 'h2-pool': */ const s = 'use h1 or h2';"),
      [],
    );
    assert.deepEqual(flagged("const table = { 'http/1.1': 0, h2: 0, h2c: 0 };"), []);
  });

  test('src/ outside src/transport compares no strategy name to a string', () => {
    const src = resolve('src');
    const transport = join(src, 'transport') + sep;
    const bad = sources(src)
      .filter((f) => !f.startsWith(transport))
      .flatMap((f) =>
        strategyNameUses(readFileSync(f, 'utf8'), strategyNames()).map((s) => `${relative('.', f)}:${s}`),
      );
    assert.deepEqual(bad, [], 'ask the registry (src/transport/index.ts) instead of naming a strategy');
  });
});

// ---------------------------------------------------------------------------------------------------
// (b) The extension point: a fourth strategy, defined only here.

/** One HTTP/1.1 connection whatever --connections says: the client that never opened a second. */
const h1Single: Strategy = {
  name: 'h1-single',
  http: 'HTTP/1.1',
  requests: { tls: 'http/1.1', cleartext: 'http/1.1' },
  http2: false,
  multiplexed: false,
  connections: { unit: 'connection', fixed: 1 },
  summary: 'one HTTP/1.1 connection',
  describe: () => 'HTTP/1.1, a single connection',
  colour: '#8e44ad',
  // The connection machinery is h1's; the fixed count reaches it as `connections`.
  create: (b) => getStrategy('h1').create(b),
};

describe('a fourth strategy registered at run time', () => {
  let server: RunningServer;
  let unregister: () => void;
  before(async () => {
    unregister = registerStrategy(h1Single);
    server = await startFixture();
  });
  after(async () => {
    await server.close(0);
    unregister();
  });

  test('the registry lists it after the built-ins and refuses a clash', () => {
    assert.deepEqual(strategyNames(), ['h1', 'h2', 'h2-pool', 'h3', 'h3-pool', 'h1-single']);
    assert.equal(listStrategies().at(-1), h1Single);
    assert.equal(strategyLabel('h1-single'), 'h1-single (one HTTP/1.1 connection)');
    const invalid = (e: unknown) => isH2labError(e) && e.code === 'H2LAB_ERR_INVALID_OPTION';
    assert.throws(() => registerStrategy(h1Single), invalid, 'a name is registered once');
    assert.throws(() => registerStrategy({ ...h1Single, name: 'H1 Single' }), invalid, 'a CLI-safe name');
    assert.throws(
      () => registerStrategy({ ...h1Single, name: 'h1-b', baseline: true }),
      invalid,
      'one baseline',
    );
  });

  test('runLoad drives it against the fixture server: one connection, and the server saw one', async () => {
    const seen = () => {
      const m = server.metrics();
      return { connections: m.connections.total.plain['http/1.1'], requests: m.requests.bytes['http/1.1'] };
    };
    const before = seen();
    const r = await runLoad({
      url: `${server.plainUrl}/bytes/1000`,
      protocol: 'h1-single',
      connections: 6, // ignored: the strategy's count is fixed
      concurrency: 4,
      requests: 40,
    }).done;
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.transport.name, 'h1-single');
    assert.equal(r.transport.connections, 1);
    assert.equal(r.transport.window, undefined, 'not HTTP/2: no windows recorded');
    assert.deepEqual(r.protocol, { requested: 'http/1.1', negotiated: 'http/1.1' });
    assert.equal(r.counts.ok, 40);
    assert.equal(r.connections.opened, 1);
    const after = seen();
    assert.equal(after.requests - before.requests, 40, 'the server answered every request');
    assert.equal(after.connections - before.connections, 1, 'the server accepted one connection');
    assert.ok(r.clientQueueMs.p50 > 0, '4 in flight on one connection queue in the client');
  });

  test('load options accept it (default concurrency = its one connection) and name it in errors', () => {
    const o = resolveLoadOptions({ url: 'http://127.0.0.1:1/', protocol: 'h1-single' });
    assert.equal(o.connections, 1);
    assert.equal(o.concurrency, 1, 'one request per connection: concurrency defaults to the pool size');
    assert.throws(
      () => resolveLoadOptions({ protocol: 'h1-single', workers: 2, concurrency: 2 }),
      (e: unknown) => isH2labError(e) && /--workers 2 cannot run --protocol h1-single/.test(e.message),
      'worker threads load the registry afresh: they would not know it',
    );
    assert.throws(
      () => resolveLoadOptions({ protocol: 'h9' }),
      (e: unknown) => isH2labError(e) && /h9/.test(e.message) && /h1-single/.test(e.message),
    );
  });

  test("compare's options and flags take it, and its default matrix includes it", () => {
    assert.deepEqual(COMPARE_DEFAULTS.protocols, ['h1', 'h2', 'h2-pool', 'h1-single']);
    assert.equal(COMPARE_DEFAULTS.baseline, 'h1');
    const flags = compareOptionsFromFlags(undefined, {
      out: 'unused',
      protocols: 'h1,h1-single',
      baseline: 'h1-single',
    });
    const o = resolveCompareOptions(flags);
    assert.deepEqual(o.protocols, ['h1', 'h1-single']);
    assert.equal(o.baseline, 'h1-single');
    assert.throws(
      () => compareOptionsFromFlags(undefined, { out: 'unused', protocols: 'h1,h9' }),
      (e: unknown) => isH2labError(e) && /h1-single/.test(e.message),
    );
    assert.throws(() => resolveCompareOptions({ protocols: ['h9'] }), isH2labError);
  });

  test('a comparison runs it against the fixture server and the reports draw it', async () => {
    const c = await runComparison({
      url: `${server.plainUrl}/`,
      protocols: ['h1', 'h1-single'],
      concurrency: [4],
      runs: 2,
      warmupRuns: 0,
      requests: 40,
      workloads: [{ id: 'small', label: '1 KiB responses', paths: ['/bytes/1024'] }],
    });
    const result = await c.done;
    assert.equal(result.status, 'complete', JSON.stringify(result.error));
    const cell = result.cells.find((x) => x.protocol === 'h1-single')!;
    assert.equal(cell.status, 'done', cell.note);
    assert.deepEqual(
      cell.runs.map((r) => [r.transport.name, r.transport.connections, r.connections.opened]),
      [
        ['h1-single', 1, 1],
        ['h1-single', 1, 1],
      ],
    );
    const html = renderHtml(result, loadHtmlAssets());
    assert.match(html, /<i style="background:#8e44ad"><\/i>h1-single — HTTP\/1\.1, a single connection/);
    assert.match(html, /"h1-single":"#8e44ad"/, 'the charts colour it');
    assert.match(renderMarkdown(result), /h1-single/);
    assert.match(renderTerminal(result), /h1-single/);
  });
});
