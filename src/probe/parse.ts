/**
 * What the probe is pointed at: the URL (scheme, host, port, path), the TLS material named by
 * --ca/--cert/--key, and the Alt-Svc header's protocol ids.
 */
import { H2labError } from '../core/index.ts';
import { readTlsFiles } from '../tls/index.ts';
import type { ProbeOptions } from './options.ts';
import type { ClientTlsMaterial } from './wire.ts';

/** Parses and validates the URL to probe. */
export function parseTarget(url: string): {
  scheme: 'http' | 'https';
  host: string;
  port: number;
  path: string;
  authority: string;
} {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new H2labError(
      'H2LAB_ERR_PROBE_BAD_URL',
      `${JSON.stringify(url)} is not a URL: give one such as https://example.com/ or http://127.0.0.1:8080/`,
      { url },
    );
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) {
    throw new H2labError(
      'H2LAB_ERR_PROBE_BAD_URL',
      `${JSON.stringify(url)} is not an http:// or https:// URL with a host: give one such as https://example.com/`,
      { url },
    );
  }
  const scheme = u.protocol === 'https:' ? 'https' : 'http';
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    scheme,
    host,
    port: u.port ? Number(u.port) : scheme === 'https' ? 443 : 80,
    path: `${u.pathname || '/'}${u.search}`,
    authority: u.host,
  };
}

/** Reads --ca/--cert/--key. */
export function loadTlsMaterial(opts: Pick<ProbeOptions, 'ca' | 'cert' | 'key'>): ClientTlsMaterial {
  return readTlsFiles({ ca: opts.ca, cert: opts.cert, key: opts.key }, 'to send no client certificate');
}

/** An Alt-Svc protocol id of HTTP/3: `h3` (RFC 9114 §3.1) or a draft's `h3-NN`. */
export const H3_ALPN = /^h3(?:-|$)/;

/** Parses `Alt-Svc` (RFC 7838 §3) into the protocol ids it advertises; `clear` advertises none. */
export function parseAltSvc(header: string): string[] {
  if (header.trim() === 'clear') return [];
  return [...header.matchAll(/(?:^|,)\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=/g)].map((m) =>
    decodeURIComponent(m[1]!),
  );
}
