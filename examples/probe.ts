// What does a server speak? Probe the fixture's TLS listener (ALPN, SETTINGS, TLS versions, keep-alive).
import { probe, render, startServer } from 'h2lab';

const server = await startServer({ port: 0, tlsPort: 0 });
try {
  const result = await probe(server.tlsUrl ?? '', { ca: server.caFile });
  console.log(render(result, 'text'));
  console.log(`alpn: ${result.tls?.negotiated.alpn ?? 'none'}`);
} finally {
  await server.close();
}
