/**
 * What the probe is pointed at: the URL (scheme, host, port, path), the TLS material named by
 * --ca/--cert/--key, and the Alt-Svc header's protocol ids.
 */
import { readFileSync } from 'node:fs';
import { H2labError } from '../core/index.ts';
import type { ProbeOptions } from './options.ts';
import type { TlsMaterial } from './wire.ts';

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

function readPem(option: string, path: string | undefined): Buffer | undefined {
  if (path === undefined) return undefined;
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_FILE_UNREADABLE',
      `${option} ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): check the path and its permissions`,
      { option, path },
    );
  }
  if (!buf.toString('latin1').includes('-----BEGIN ')) {
    throw new H2labError(
      'H2LAB_ERR_TLS_BAD_PEM',
      `${option} ${path} is not a PEM file: give a file with -----BEGIN ...----- blocks`,
      {
        option,
        path,
      },
    );
  }
  return buf;
}

/** Reads --ca/--cert/--key. */
export function loadTlsMaterial(opts: Pick<ProbeOptions, 'caPath' | 'certPath' | 'keyPath'>): TlsMaterial {
  if (opts.certPath && !opts.keyPath) {
    throw new H2labError(
      'H2LAB_ERR_TLS_KEY_MISSING',
      '--cert was given without --key: pass --key FILE with the private key of the certificate',
      {
        option: '--key',
      },
    );
  }
  if (opts.keyPath && !opts.certPath) {
    throw new H2labError(
      'H2LAB_ERR_TLS_CERT_MISSING',
      '--key was given without --cert: pass --cert FILE too, or neither',
      {
        option: '--cert',
      },
    );
  }
  const ca = readPem('--ca', opts.caPath);
  const cert = readPem('--cert', opts.certPath);
  const key = readPem('--key', opts.keyPath);
  return { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
}

/** Parses `Alt-Svc` (RFC 7838 §3) into the protocol ids it advertises; `clear` advertises none. */
export function parseAltSvc(header: string): string[] {
  if (header.trim() === 'clear') return [];
  return [...header.matchAll(/(?:^|,)\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=/g)].map((m) =>
    decodeURIComponent(m[1]!),
  );
}
