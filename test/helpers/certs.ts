// Certificates for tests, from src/tls (no openssl): a CA with a server certificate (localhost,
// 127.0.0.1, ::1 unless other hosts are named) and a client certificate, as PEM text and as files in a
// temporary directory, for the options that take paths (--ca, --cert, --key). test/server/certs.test.ts
// checks with openssl that what src/tls makes is what openssl accepts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CERT_FILES,
  type CertificateSet,
  type GenerateCertificatesOptions,
  generateCertificates,
  writeCertificateSet,
} from '../../src/tls/index.ts';

/** A certificate set with the files it was written to. */
export interface TestCerts extends CertificateSet {
  /** The directory holding the files (`CERT_FILES` names). */
  dir: string;
  /** The file of each PEM, e.g. `path.caPem` for --ca, `path.clientPem`/`path.clientKeyPem` for mTLS. */
  path: { readonly [K in keyof typeof CERT_FILES]: string };
  /** Removes the directory. */
  cleanup(): void;
}

/**
 * Generates a fresh set (ECDSA P-256, a few ms) and writes it into a new temporary directory.
 *
 * @example const certs = await testCerts({ leafDays: 20 }); … certs.cleanup();
 */
export async function testCerts(opts: GenerateCertificatesOptions = {}): Promise<TestCerts> {
  const set = await generateCertificates({ caName: 'h2lab test CA', ...opts });
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-test-certs-'));
  writeCertificateSet(dir, set, { force: true });
  const path = Object.fromEntries(
    Object.entries(CERT_FILES).map(([k, f]) => [k, join(dir, f)]),
  ) as TestCerts['path'];
  return { ...set, dir, path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A server certificate and key whose chain (leaf, then its self-signed CA, in one PEM, as a server
 * sends it) ends at a CA no client has been told about: untrusted however it is verified.
 */
export async function untrustedServerCert(): Promise<{ cert: string; key: string }> {
  const other = await generateCertificates({ caName: 'self-signed test CA' });
  return { cert: `${other.serverPem.trimEnd()}\n${other.caPem}`, key: other.serverKeyPem };
}
