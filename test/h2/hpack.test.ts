/**
 * HPACK: the RFC 7541 Appendix C examples, round trips of the encoder and Huffman code, malformed
 * input, and a real encoder — nghttp2 inside node:http2's server — whose dynamic-table and Huffman
 * choices the decoder must follow exactly.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  encodeHeaderBlock,
  HpackDecoder,
  HpackError,
  huffmanDecode,
  huffmanEncode,
  RequestEncoder,
} from '../../src/h2/hpack.ts';
import { createTransport } from '../../src/transport/index.ts';
import { get, serve, session } from './helpers.ts';

const hex = (s: string): Buffer => Buffer.from(s, 'hex');

const REQ = (scheme: string, path: string, extra: Array<[string, string]>): Array<[string, string]> => [
  [':method', 'GET'],
  [':scheme', scheme],
  [':path', path],
  [':authority', 'www.example.com'],
  ...extra,
];
const REQUESTS: Array<[string, Array<[string, string]>, number]> = [
  ['C.3.1 / C.4.1', REQ('http', '/', []), 57],
  ['C.3.2 / C.4.2', REQ('http', '/', [['cache-control', 'no-cache']]), 110],
  ['C.3.3 / C.4.3', REQ('https', '/index.html', [['custom-key', 'custom-value']]), 164],
];

for (const [name, blocks] of [
  [
    'RFC 7541 C.3: requests without Huffman coding',
    [
      '828684410f7777772e6578616d706c652e636f6d',
      '828684be58086e6f2d6361636865',
      '828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565',
    ],
  ],
  [
    'RFC 7541 C.4: requests with Huffman coding',
    [
      '828684418cf1e3c2e5f23a6ba0ab90f4ff',
      '828684be5886a8eb10649cbf',
      '828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf',
    ],
  ],
] as const) {
  test(name, () => {
    const d = new HpackDecoder();
    blocks.forEach((b, i) => {
      const [label, want, size] = REQUESTS[i]!;
      const got = d.decode(hex(b), true);
      assert.deepEqual(got.headers, want, label);
      assert.equal(got.status, -1);
      assert.equal(d.tableBytes, size, `${label}: dynamic table size`);
    });
  });
}

const RESPONSES: Array<[Array<[string, string]>, number]> = [
  [
    [
      [':status', '302'],
      ['cache-control', 'private'],
      ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
      ['location', 'https://www.example.com'],
    ],
    222,
  ],
  [
    [
      [':status', '307'],
      ['cache-control', 'private'],
      ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
      ['location', 'https://www.example.com'],
    ],
    222,
  ],
  [
    [
      [':status', '200'],
      ['cache-control', 'private'],
      ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'],
      ['location', 'https://www.example.com'],
      ['content-encoding', 'gzip'],
      ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'],
    ],
    215,
  ],
];

for (const [name, blocks] of [
  [
    'RFC 7541 C.5: responses with evictions, without Huffman coding',
    [
      '4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d',
      '4803333037c1c0bf',
      '88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b2076657273696f6e3d31',
    ],
  ],
  [
    'RFC 7541 C.6: responses with evictions and Huffman coding',
    [
      '488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3',
      '4883640effc1c0bf',
      '88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007',
    ],
  ],
] as const) {
  test(name, () => {
    // The examples use a 256-byte table; the status-only decoder must keep the same table.
    const full = new HpackDecoder(256);
    const lean = new HpackDecoder(256);
    blocks.forEach((b, i) => {
      const [want, size] = RESPONSES[i]!;
      assert.deepEqual(full.decode(hex(b), true).headers, want);
      assert.equal(full.tableBytes, size);
      assert.equal(lean.decode(hex(b), false).status, Number(want[0]![1]));
      assert.equal(lean.tableBytes, size);
    });
  });
}

test('Huffman coding round-trips any byte string (RFC 7541 §5.2)', () => {
  assert.equal(huffmanEncode('www.example.com').toString('hex'), 'f1e3c2e5f23a6ba0ab90f4ff');
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      const s = Buffer.from(bytes).toString('latin1');
      const e = huffmanEncode(s);
      assert.equal(huffmanDecode(e, 0, e.length), s);
    }),
    { numRuns: 500 },
  );
});

test('one decoder over many blocks: Huffman strings seen before (cached by their bytes) decode as the first time', () => {
  // Issue 29: the decoder keeps decoded Huffman strings by their encoded bytes. Values that repeat
  // (hits), values seen once (misses) and more distinct values than the cache has slots (evictions,
  // hash collisions) must all decode exactly; one decoder reads every block, as on a connection.
  const repeated = ['nginx/1.22.1', 'Wed, 02 Dec 2026 12:33:18 GMT', 'text/plain', '"6b10100e-400"', 'bytes'];
  const value = fc.oneof(fc.constantFrom(...repeated), fc.stringMatching(/^[a-z0-9 ,:"-]{1,70}$/));
  const d = new HpackDecoder();
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom('server', 'x-a', 'etag'), value), { maxLength: 12 }),
      (fields) => {
        const list: Array<[string, string]> = [[':status', '200'], ...fields];
        assert.deepEqual(d.decode(encodeHeaderBlock(list), true).headers, list);
      },
    ),
    { numRuns: 2000 },
  );
});

test('the encoder writes blocks the decoder reads back, static indexes and literals alike', () => {
  const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
  const value = fc.string({ maxLength: 200 }).map((s) => Buffer.from(s, 'utf8').toString('latin1'));
  fc.assert(
    fc.property(fc.array(fc.tuple(name, value), { maxLength: 20 }), (fields) => {
      const list: Array<[string, string]> = [[':method', 'GET'], [':path', '/'], ...fields];
      const d = new HpackDecoder();
      assert.deepEqual(d.decode(encodeHeaderBlock(list), true).headers, list);
      assert.equal(d.entries, 0, 'the encoder never indexes');
    }),
    { numRuns: 300 },
  );
  // :method GET, :scheme https and :path / are single-byte static indexes (RFC 7541 Appendix A).
  assert.deepEqual(
    [
      ...encodeHeaderBlock([
        [':method', 'GET'],
        [':scheme', 'https'],
        [':path', '/'],
      ]),
    ],
    [0x82, 0x87, 0x84],
  );
});

test('malformed blocks are COMPRESSION_ERRORs, not guesses', () => {
  const bad: Array<[string, string]> = [
    ['index 0', '80'],
    ['an index beyond both tables', 'be'],
    ['a table size update above the limit', '3fe21f'],
    ['a table size update after a field', '823f01'],
    ['a string running past the block', '400a637573746f6d'],
    ['Huffman padding that is not all ones', '418100'],
    ['an EOS symbol inside a Huffman string', '4184ffffffff'],
    ['a truncated integer', '7fff'],
  ];
  for (const [what, b] of bad) {
    assert.throws(() => new HpackDecoder().decode(hex(b), true), HpackError, what);
  }
});

/**
 * A real encoder: node:http2's server (nghttp2's deflater, with incremental indexing, Huffman and
 * evictions) sends 300 responses whose headers repeat, vary and overflow the 4 KiB table; the
 * client session decodes every one of them exactly.
 */
test('decodes what nghttp2 encodes over 300 responses on one connection', async () => {
  const rnd = fc.sample(fc.string({ minLength: 0, maxLength: 120 }), { numRuns: 400, seed: 7 });
  const srv = await serve((stream, h) => {
    const i = Number(String(h[':path']).slice(1));
    stream.respond({
      ':status': 200 + (i % 5),
      'x-fixed': 'always the same value',
      'x-seq': String(i),
      'x-rand': encodeURIComponent(rnd[i % rnd.length]!),
      'x-big': 'b'.repeat((i * 37) % 1500),
      'cache-control': i % 2 ? 'no-cache' : 'private, max-age=60',
    });
    stream.end();
  });
  const s = await session(srv.port);
  try {
    const got: Array<Array<[string, string]>> = [];
    for (let i = 0; i < 300; i += 30) {
      const batch = await Promise.all(Array.from({ length: 30 }, (_, k) => get(s, srv.port, `/${i + k}`)));
      batch.forEach((g, k) => {
        assert.equal(g.reason, 'end', `/${i + k}`);
        got[i + k] = g.headers;
      });
    }
    for (let i = 0; i < 300; i++) {
      const m = new Map(got[i]);
      assert.equal(m.get(':status'), String(200 + (i % 5)));
      assert.equal(m.get('x-fixed'), 'always the same value');
      assert.equal(m.get('x-seq'), String(i));
      assert.equal(m.get('x-rand'), encodeURIComponent(rnd[i % rnd.length]!));
      assert.equal(m.get('x-big'), 'b'.repeat((i * 37) % 1500));
      assert.equal(m.get('cache-control'), i % 2 ? 'no-cache' : 'private, max-age=60');
    }
  } finally {
    s.close();
    await srv.close();
  }
});

test('the request encoder indexes :authority and user-agent once, then refers to them', () => {
  const enc = new RequestEncoder('https', 'example.com:8443', 'h2lab/test');
  const d = new HpackDecoder();
  const first = enc.encode('GET /a', 'GET', '/a', [], 4096);
  const second = enc.encode('GET /b', 'GET', '/b', [['accept', '*/*']], 4096);
  const third = enc.encode('GET /a', 'GET', '/a', [], 4096);
  const want = (path: string, extra: Array<[string, string]> = []) => [
    [':method', 'GET'],
    [':scheme', 'https'],
    [':authority', 'example.com:8443'],
    [':path', path],
    ['user-agent', 'h2lab/test'],
    ...extra,
  ];
  assert.deepEqual(d.decode(first, true).headers, want('/a'));
  assert.equal(d.entries, 2, 'the first block inserted two entries');
  assert.deepEqual(d.decode(second, true).headers, want('/b', [['accept', '*/*']]));
  assert.deepEqual(d.decode(third, true).headers, want('/a'));
  // 1 byte each for :method, :scheme, :authority, user-agent; 4 for the literal path "/a".
  assert.equal(third.length, 8);
  assert.equal(d.entries, 2, 'nothing else is ever inserted');
});

test('the request encoder shrinks its table to 0 when the server allows less than 4,096 bytes', () => {
  // From the start: the first block opens with a size update and inserts nothing.
  const a = new RequestEncoder('http', 'h:1', 'ua');
  const da = new HpackDecoder(0);
  const b0 = a.encode('k', 'GET', '/', [], 0);
  assert.equal(b0[0], 0x20, 'dynamic table size update to 0 (RFC 7541 §6.3)');
  assert.equal(da.decode(b0, true).headers?.[2]?.[1], 'h:1');
  assert.equal(da.decode(a.encode('k', 'GET', '/', [], 0), true).headers?.[4]?.[1], 'ua');
  assert.equal(da.entries, 0);
  // Midway: indexed first, then the server lowers its limit; the next block must not refer to it.
  const b = new RequestEncoder('http', 'h:1', 'ua');
  const db = new HpackDecoder();
  db.decode(b.encode('k', 'GET', '/', [], 4096), true);
  db.decode(b.encode('k', 'GET', '/', [], 4096), true);
  const after = b.encode('k', 'GET', '/', [], 256);
  assert.equal(after[0], 0x20);
  assert.deepEqual(
    db.decode(after, true).headers?.map(([n]) => n),
    [':method', ':scheme', ':authority', ':path', 'user-agent'],
  );
  assert.equal(db.entries, 0, 'the size update emptied the table');
  assert.notEqual(b.encode('k', 'GET', '/', [], 256)[0], 0x20, 'only once');
});

test('a Host override is a literal :authority and disables indexing', () => {
  const e = new RequestEncoder('http', 'h:1', 'ua');
  const d = new HpackDecoder();
  assert.equal(
    new Map(d.decode(e.encode('k', 'GET', '/', [], 4096, 'other'), true).headers).get(':authority'),
    'other',
  );
  assert.equal(d.entries, 0);
});

test('servers whose table is 0, or shrinks to 0 mid-connection, still decode every request', async () => {
  for (const midway of [false, true]) {
    const server = http2.createServer({ settings: { headerTableSize: midway ? 4096 : 0 } });
    let n = 0;
    server.on('stream', (stream, h) => {
      n++;
      if (midway && n === 3) stream.session!.settings({ headerTableSize: 0 });
      stream.respond({ ':status': 200, 'x-ua': String(h['user-agent']), 'x-auth': String(h[':authority']) });
      stream.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const tr = createTransport('h2', { url: `http://127.0.0.1:${port}`, connections: 1 });
    await tr.open();
    try {
      for (let i = 0; i < 10; i++) {
        const now = performance.now();
        const sm = await tr.request(
          { method: 'GET', path: `/${i}` },
          { seq: i, intendedMs: now, queuedMs: now },
        );
        assert.equal(sm.error, undefined, `${midway ? 'midway' : 'from the start'} #${i}: ${sm.errorDetail}`);
        assert.equal(sm.status, 200);
        if (midway && i === 3) await new Promise((r) => setTimeout(r, 50)); // let the SETTINGS arrive
      }
      assert.equal(tr.stats().opened, 1, 'no COMPRESSION_ERROR ended the session');
    } finally {
      await tr.close();
      await new Promise((r) => server.close(r));
    }
  }
});
