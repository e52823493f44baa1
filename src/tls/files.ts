/**
 * Reading, checking and writing certificate/key files. Each way a file can be wrong has its own error
 * code, so a user learns which option to fix.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { H2labError, readOptionText, writeFileAtomic } from '../core/index.ts';
import type { CertificateSet } from './generate.ts';

/**
 * Reads a PEM file named by an option (a certificate, a key or a CA bundle, server or client side):
 * H2LAB_ERR_FILE_UNREADABLE when it cannot be read, H2LAB_ERR_TLS_BAD_PEM when it holds no
 * `-----BEGIN …-----` block. What the block must be is checked by {@link parseCertificatePem} and
 * {@link parsePrivateKeyPem}, or by Node's TLS when the context is made.
 *
 * @example readPemFile('ca.pem', '--ca')
 */
export function readPemFile(path: string, option: string): string {
  const pem = readOptionText(path, option, { kind: 'pem' });
  if (!pem.includes('-----BEGIN ')) throw badPem(option, path, 'no "-----BEGIN ...-----" block');
  return pem;
}

/**
 * `--cert` and `--key` are given together or not at all: H2LAB_ERR_TLS_KEY_MISSING or
 * H2LAB_ERR_TLS_CERT_MISSING names the one that is missing. `neither` says what giving neither
 * does, for the message (e.g. "to use the development certificate").
 */
export function checkCertKeyPair(
  opts: { cert?: string | undefined; key?: string | undefined },
  neither: string,
): void {
  if (opts.cert && !opts.key) {
    throw new H2labError(
      'H2LAB_ERR_TLS_KEY_MISSING',
      `--cert ${opts.cert} was given without --key: pass --key FILE too, or neither ${neither}`,
      { option: '--key' },
    );
  }
  if (opts.key && !opts.cert) {
    throw new H2labError(
      'H2LAB_ERR_TLS_CERT_MISSING',
      `--key ${opts.key} was given without --cert: pass --cert FILE too, or neither ${neither}`,
      { option: '--cert' },
    );
  }
}

/** Parses PEM certificate text (the first certificate of a chain is the leaf). */
function parseCertificatePem(pem: string, option: string, path: string): X509Certificate {
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw badPem(option, path, 'no "-----BEGIN CERTIFICATE-----" block');
  }
  try {
    return new X509Certificate(pem);
  } catch (err) {
    throw badPem(option, path, (err as Error).message);
  }
}

/** Parses a PEM private key (PKCS#8, SEC1 or PKCS#1). */
function parsePrivateKeyPem(pem: string, option: string, path: string): KeyObject {
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) {
    throw badPem(option, path, 'no "-----BEGIN PRIVATE KEY-----" block (encrypted keys are not supported)');
  }
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw badPem(option, path, (err as Error).message);
  }
}

function badPem(option: string, path: string, why: string): H2labError {
  return new H2labError(
    'H2LAB_ERR_TLS_BAD_PEM',
    `${option} ${path} is not valid PEM: ${why}; give a PEM file, or run \`h2lab certs --out DIR\` for a working set`,
    { option, path },
  );
}

/** Paths as given by the user (`--cert`, `--key`, `--ca`). */
interface TlsFileOptions {
  cert?: string | undefined;
  key?: string | undefined;
  ca?: string | undefined;
}

/**
 * Loads `--cert`/`--key` (both or neither) and `--ca`, and checks that the key belongs to the
 * certificate. Returns undefined for cert and key when neither is given (the caller uses the dev CA).
 */
export function loadTlsFiles(opts: TlsFileOptions): { certPem?: string; keyPem?: string; caPem?: string } {
  const pem = readTlsFiles(opts, 'to use the development certificate');
  return {
    ...(pem.cert !== undefined ? { certPem: pem.cert } : {}),
    ...(pem.key !== undefined ? { keyPem: pem.key } : {}),
    ...(pem.ca !== undefined ? { caPem: pem.ca } : {}),
  };
}

/**
 * Reads `--ca`, `--cert` and `--key` (the last two both or neither; `neither` says what giving
 * neither does) and checks each the way Node's TLS will use it, so a mistake in a file is the
 * user's error naming the option — H2LAB_ERR_TLS_BAD_PEM, H2LAB_ERR_TLS_KEY_MISMATCH, exit 2 — and
 * never an OpenSSL message from deep inside the first connection. Server and client alike.
 *
 * @example const { ca, cert, key } = readTlsFiles({ cert: 'c.pem', key: 'k.pem' }, 'to send no client certificate')
 */
export function readTlsFiles(
  opts: TlsFileOptions,
  neither: string,
): { ca?: string; cert?: string; key?: string } {
  checkCertKeyPair(opts, neither);
  const out: { ca?: string; cert?: string; key?: string } = {};
  if (opts.cert && opts.key) {
    const certPem = readPemFile(opts.cert, '--cert');
    const keyPem = readPemFile(opts.key, '--key');
    const cert = parseCertificatePem(certPem, '--cert', opts.cert);
    const key = parsePrivateKeyPem(keyPem, '--key', opts.key);
    if (!cert.checkPrivateKey(key)) {
      throw new H2labError(
        'H2LAB_ERR_TLS_KEY_MISMATCH',
        `--key ${opts.key} does not belong to --cert ${opts.cert}: pair the certificate with the key it was issued for`,
        { cert: opts.cert, key: opts.key },
      );
    }
    contextOf({ cert: certPem, key: keyPem }, '--cert', opts.cert);
    out.cert = certPem;
    out.key = keyPem;
  }
  if (opts.ca) {
    const caPem = readPemFile(opts.ca, '--ca');
    parseCertificatePem(caPem, '--ca', opts.ca);
    contextOf({ ca: caPem }, '--ca', opts.ca);
    out.ca = caPem;
  }
  return out;
}

/** What the checks above do not see (a damaged later block of a chain or bundle), as Node's TLS sees it. */
function contextOf(o: { ca?: string; cert?: string; key?: string }, option: string, path: string): void {
  try {
    createSecureContext(o);
  } catch (err) {
    throw badPem(option, path, (err as Error).message.replace(/^error:[0-9A-F]+:/, ''));
  }
}

/** File names `h2lab certs` writes, and the dev cache uses. */
export const CERT_FILES = {
  caPem: 'ca.pem',
  caKeyPem: 'ca-key.pem',
  serverPem: 'server.pem',
  serverKeyPem: 'server-key.pem',
  clientPem: 'client.pem',
  clientKeyPem: 'client-key.pem',
} as const satisfies Record<Exclude<keyof CertificateSet, 'hosts'>, string>;

/**
 * Writes a certificate set into `dir` (created if needed); keys are 0600. Refuses to overwrite
 * existing files unless `force`. Returns the paths written.
 */
export function writeCertificateSet(
  dir: string,
  set: CertificateSet,
  opts: { force?: boolean } = {},
): string[] {
  const entries = Object.entries(CERT_FILES) as Array<[keyof typeof CERT_FILES, string]>;
  const existing = entries.map(([, f]) => join(dir, f)).filter((p) => existsSync(p));
  if (existing.length > 0 && !opts.force) {
    throw new H2labError(
      'H2LAB_ERR_CERTS_EXIST',
      `--out ${dir} already holds ${existing.length} of the files (${existing.map((p) => p.slice(dir.length + 1)).join(', ')}): choose another --out directory or pass --force`,
      { option: '--out', existing },
    );
  }
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new H2labError(
      'H2LAB_ERR_FILE_UNREADABLE',
      `--out ${dir}: cannot create the directory (${(err as NodeJS.ErrnoException).code})`,
      {
        option: '--out',
        path: dir,
      },
    );
  }
  const written: string[] = [];
  for (const [k, f] of entries) {
    const p = join(dir, f);
    writeFileAtomic(p, set[k], { mode: k.endsWith('KeyPem') ? 0o600 : 0o644 });
    written.push(p);
  }
  return written;
}
