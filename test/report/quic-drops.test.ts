// The QUIC drop sentence's rules on hand-made runs (test/h3/queue-drops.test.ts covers a real link):
// the cause is claimed only when the server's initial window was read and exceeds both TCP's and the
// link's recorded queue; a queue that could hold it, or a window no larger than TCP's, is said so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunResult } from '../../src/model/index.ts';
import { quicQueueDropsSentence } from '../../src/report/quic-drops.ts';

function run(queuePackets: number, initialCwndBytes?: number, queueBytes = 250_000, packetsLost = 1_700) {
  return {
    environment: { link: { profile: 'x', backend: 'relay', rttMs: 40, rateBitsPerSec: 50e6, queueBytes } },
    connections: {
      quic: {
        linkDrops: { flows: 1, lossPackets: 0, queuePackets, upPackets: 0, downPackets: queuePackets },
        server: {
          ...(initialCwndBytes !== undefined ? { packetsLost } : {}),
          perConnection: [initialCwndBytes !== undefined ? { initialCwndBytes } : {}],
        },
      },
    },
  } as unknown as RunResult;
}

test('drops with the window read: the numbers and the cause', () => {
  const s = quicQueueDropsSentence([run(1_497, 1_200_000)], 'h3', 1448);
  assert.match(s ?? '', /full queue dropped 1,497 of h3's UDP packets, 1,497 of them server → client/);
  assert.match(s ?? '', /declared 1,700 packets lost/);
  assert.match(
    s ?? '',
    /83× TCP's 10 segments \(14\.1 KiB\) on the same link and more than the link's queue/,
  );
  assert.match(s ?? '', /so its first round trip overran the queue/);
});

test('a queue that holds the window: the drops, no cause', () => {
  const s = quicQueueDropsSentence([run(40, 1_200_000, 2_000_000)], 'h3');
  assert.match(s ?? '', /does not by itself exceed the link's queue/);
  assert.doesNotMatch(s ?? '', /overran/);
});

test('no qlog: the drops, --qlog suggested, no cause', () => {
  const s = quicQueueDropsSentence([run(1_200)], 'h3');
  assert.match(s ?? '', /was not read: .*--qlog DIR/);
  assert.doesNotMatch(s ?? '', /declared|so its first round trip/);
});

test('nothing (or next to nothing) dropped: nothing said', () => {
  assert.equal(quicQueueDropsSentence([run(0, 1_200_000)], 'h3'), undefined);
  assert.equal(quicQueueDropsSentence([run(4, 1_200_000)], 'h3'), undefined);
});
