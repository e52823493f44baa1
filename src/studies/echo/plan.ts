/** The echo study's fixture: mTLS certificates, the API client's request headers, the strategies' roles. */
import type { ServerOptionsInput } from '../../server/index.ts';
import { CERT_FILES, generateCertificates, writeCertificateSet } from '../../tls/index.ts';
import {
  baselineStrategy,
  multiplexedStrategy,
  resolveWindow,
  type Strategy as TransportStrategy,
} from '../../transport/index.ts';
import type { WindowName } from './options.ts';

/**
 * About `bytes` of request headers as an API client sends them, counted as HTTP/1.1 writes them
 * (`name: value` CRLF): a JSON content type, an accept, a request id and a bearer token padded to
 * the size.
 */
export function apiHeaders(bytes: number): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'x-request-id': '6f1c2a9e-4b7d-4e0a-9a51-2c8d3f7b1e64',
  };
  const line = (k: string, v: string) => k.length + 2 + v.length + 2;
  const used = Object.entries(h).reduce((n, [k, v]) => n + line(k, v), 0);
  const room = Math.max(16, bytes - used - line('authorization', 'Bearer '));
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let token = '';
  for (let i = 0; i < room; i++) token += alphabet[(i * 37 + 11) % alphabet.length];
  h.authorization = `Bearer ${token}`;
  return h;
}

/** Σ `name: value` CRLF: the size the headers have on an HTTP/1.1 wire. */
export function headerWireBytes(h: Record<string, string>): number {
  return Object.entries(h).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
}

/** The strategies by role; the registry names them. */
export function roles(): { h1: TransportStrategy; one: TransportStrategy; pool: TransportStrategy } {
  const one = multiplexedStrategy('one');
  const pool = multiplexedStrategy('pool');
  if (!one || !pool) throw new Error('the registry has no single-session or pooled HTTP/2 strategy');
  return { h1: baselineStrategy(), one, pool };
}

/** Certificates as `h2lab certs` makes them: a CA, a server certificate, a client certificate. */
export interface CertFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
  serverCert: string;
  serverKey: string;
}

export async function makeCertificates(dir: string): Promise<CertFiles> {
  const set = await generateCertificates({ caName: 'h2lab echo study CA' });
  writeCertificateSet(dir, set, { force: true });
  const at = (f: string) => `${dir}/${f}`;
  return {
    caFile: at(CERT_FILES.caPem),
    certFile: at(CERT_FILES.clientPem),
    keyFile: at(CERT_FILES.clientKeyPem),
    serverCert: at(CERT_FILES.serverPem),
    serverKey: at(CERT_FILES.serverKeyPem),
  };
}

/** The fixture with client certificates required, and both ends' windows set to one preset. */
export function fixtureFor(
  certs: CertFiles,
  window: WindowName,
  extra: ServerOptionsInput = {},
): ServerOptionsInput {
  const w = resolveWindow(window);
  return {
    cert: certs.serverCert,
    key: certs.serverKey,
    ca: certs.caFile,
    clientAuth: 'require',
    // The upload direction: the server's receive windows, the same preset as the client's.
    initialWindowSizeBytes: Math.min(w.streamWindowBytes, 2 ** 31 - 1),
    connectionWindowSizeBytes: Math.max(65_535, w.connectionWindowBytes),
    ...extra,
  };
}
