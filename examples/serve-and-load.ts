// Start the fixture server on free ports, load it over HTTP/2 for one second, print what came back.
import { render, runLoad, startServer } from 'h2lab';

const server = await startServer({ port: 0, tlsPort: 0 });
try {
  const run = runLoad({
    url: `${server.tlsUrl ?? server.plainUrl}/bytes/1024`,
    protocol: 'h2',
    concurrency: 8,
    durationMs: 1000,
    ca: server.caFile,
  });
  const result = await run.done;
  console.log(render(result, 'text'));
  console.log(`ok ${result.counts.ok} of ${result.counts.total} over ${result.protocol.negotiated}`);
} finally {
  await server.close();
}
