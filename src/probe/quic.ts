/**
 * Does the server speak HTTP/3? A QUIC handshake offering ALPN h3 (RFC 9114 §3.1) to the UDP port
 * its Alt-Svc names (RFC 7838 §3: `h3=":PORT"`, the same host), else to the URL's port, through
 * src/h3's binding. The binding does not expose the peer's transport parameters (RFC 9000 §18):
 * the report gives what it does measure (handshake time, smoothed RTT) and says that.
 */
import { H2labError } from '../core/index.ts';
import { loadBinding } from '../h3/index.ts';
import type { Availability } from '../model/index.ts';
import type { TlsMaterial } from './wire.ts';

/** The UDP port an Alt-Svc header offers h3 on for the same host, or undefined. */
export function altSvcH3Port(header: string | undefined): number | undefined {
  // An alternative on another host (`h3="alt.example:443"`) is not this server's: not probed.
  const m = header ? /(?:^|,)\s*h3=":(\d+)"/.exec(header) : null;
  return m ? Number(m[1]) : undefined;
}

/** One QUIC handshake; never rejects (the binding missing is `supported: null`, with why). */
export async function probeH3(
  host: string,
  port: number,
  via: string,
  tls: TlsMaterial & { insecure: boolean },
  timeoutMs: number,
): Promise<Availability> {
  let binding: Awaited<ReturnType<typeof loadBinding>>;
  try {
    binding = await loadBinding();
  } catch (err) {
    return { supported: null, detail: err instanceof H2labError ? err.message : String(err) };
  }
  const t0 = performance.now();
  try {
    const c = await binding.connect({
      host,
      port,
      ...(tls.ca ? { ca: String(tls.ca) } : {}),
      ...(tls.insecure ? { insecure: true } : {}),
      timeoutMs,
    });
    const ms = performance.now() - t0;
    const f = c.facts();
    await c.close();
    if (c.alpn !== 'h3')
      return { supported: false, detail: `QUIC to UDP ${port} chose ALPN ${c.alpn || 'none'}` };
    return {
      supported: true,
      detail: `QUIC handshake to UDP ${port} (${via}) chose h3 in ${ms.toFixed(1)} ms${f ? `, smoothed RTT ${f.rttMs.toFixed(2)} ms` : ''}; transport parameters not exposed by ${binding.id}`,
    };
  } catch (err) {
    return {
      supported: false,
      detail: `no QUIC handshake with UDP ${port} (${via}) within ${timeoutMs} ms: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}
