/**
 * Does the server speak HTTP/3? A QUIC handshake offering ALPN h3 (RFC 9114 §3.1) to the UDP port
 * its Alt-Svc names (RFC 7838 §3: `h3=":PORT"`, the same host), else to the URL's port, through
 * src/h3's binding. The binding does not expose the peer's transport parameters (RFC 9000 §18):
 * when Debian's ngtcp2-client is installed, its client reads them in a second handshake
 * ({@link quicTransportParameters}); else the report says how to get them.
 */
import { execFile } from 'node:child_process';
import { H2labError } from '../core/index.ts';
import { loadBinding } from '../h3/index.ts';
import type { Availability } from '../model/index.ts';
import type { ClientTlsMaterial } from './wire.ts';

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
  tls: ClientTlsMaterial & { insecure: boolean },
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
      detail: `QUIC handshake to UDP ${port} (${via}) chose h3 in ${ms.toFixed(1)} ms${f ? `, smoothed RTT ${f.rttMs.toFixed(2)} ms` : ''}`,
    };
  } catch (err) {
    return {
      supported: false,
      detail: `no QUIC handshake with UDP ${port} (${via}) within ${timeoutMs} ms: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

/** What the server told a QUIC client in its transport parameters, and who read them. */
interface QuicTransportReport {
  transportParameters: Record<string, number | string> | null;
  via: string;
}

/**
 * The lines of ngtcp2's example client (`gtlsclient`, Debian's ngtcp2-client) that carry the peer's
 * transport parameters, `… cry remote transport_parameters NAME=VALUE`: decimal values as numbers,
 * connection ids (hex) as text.
 */
export function parseNgtcp2TransportParameters(log: string): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const m of log.matchAll(/ cry remote transport_parameters ([a-z0-9_]+)=(\S+)/g)) {
    const v = m[2]!;
    out[m[1]!] = /^\d+$/.test(v) ? Number(v) : v;
  }
  return out;
}

/**
 * The server's transport parameters, read by ngtcp2's client when it is installed: the HTTP/3
 * binding does not expose them. One GET of `path` over h3 (about 0.1 s on loopback), bounded by
 * `timeoutMs`; never rejects.
 */
export function quicTransportParameters(
  host: string,
  port: number,
  path: string,
  timeoutMs: number,
  client = 'gtlsclient',
): Promise<QuicTransportReport> {
  const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve) => {
    execFile(
      client,
      [
        '--exit-on-all-streams-close',
        '--no-http-dump',
        '--no-quic-dump',
        `--handshake-timeout=${Math.max(1, Math.round(timeoutMs / 1000))}s`,
        '--timeout=2s',
        host,
        String(port),
        `https://${authority}${path}`,
      ],
      { timeout: timeoutMs + 1000, maxBuffer: 4 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
          resolve({
            transportParameters: null,
            via: `not read: the HTTP/3 binding does not expose them and ngtcp2's client (${client}) is not installed (Debian/Ubuntu: apt-get install ngtcp2-client)`,
          });
          return;
        }
        const params = parseNgtcp2TransportParameters(`${stdout}\n${stderr}`);
        if (Object.keys(params).length === 0) {
          resolve({
            transportParameters: null,
            via: `not read: ngtcp2's client (${client}) ended without them (${err ? (err.killed ? `no answer within ${timeoutMs} ms` : `exit ${(err as { code?: unknown }).code ?? '?'}`) : 'no handshake'})`,
          });
          return;
        }
        resolve({ transportParameters: params, via: `ngtcp2's client (${client})` });
      },
    );
  });
}
