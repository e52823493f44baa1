// An emulated WAN link (needs root: network namespaces and a TUN relay): the fixture server runs in
// the link's server namespace and h2lab loads it through 100 ms of round trip.
import { runLoad, withLinkedTarget } from 'h2lab';

await withLinkedTarget({ profile: 'wan', overrides: { rttMs: 100 } }, async ({ link, target }) => {
  const result = await runLoad({
    url: `${target.tlsUrl}/bytes/10240`,
    protocol: 'h2',
    concurrency: 4,
    durationMs: 1500,
    ca: target.caFile,
  }).done;
  console.log(`link ${link.info.rttMs} ms RTT: p50 ${result.latencyMs.p50.toFixed(1)} ms`);
});
