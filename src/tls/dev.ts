/**
 * The development CA and certificates: generated once, cached, reused by every `h2lab serve` without
 * `--cert`, so a browser or curl trusts one CA across runs.
 *
 * Cache directory: `$H2LAB_HOME`, else `$XDG_CACHE_HOME/h2lab`, else `~/.cache/h2lab`; the set lives in
 * `<dir>/dev-certs/`. Several processes may start at once (parallel tests): the set is generated into a
 * temporary directory and renamed into place, so a reader sees a whole set or none.
 */

import { X509Certificate as Cert } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CERT_FILES, writeCertificateSet } from './files.ts';
import { type CertificateSet, DEFAULT_CERT_HOSTS, generateCertificates } from './generate.ts';

/** The cache directory h2lab uses for generated material. */
function h2labHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.H2LAB_HOME) return env.H2LAB_HOME;
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'h2lab');
}

/** The development certificate set, with where its files are. */
interface DevCertificates extends CertificateSet {
  /** Directory holding the files. */
  dir: string;
  /** Path of the CA certificate (give it to `curl --cacert`, or trust it in a browser). */
  caFile: string;
  /** True when this call generated the set (first use, or the cached one had expired). */
  generated: boolean;
}

function readSet(dir: string): CertificateSet | undefined {
  try {
    const set = Object.fromEntries(
      Object.entries(CERT_FILES).map(([k, f]) => [k, readFileSync(join(dir, f), 'utf8')]),
    ) as Omit<CertificateSet, 'hosts'>;
    const server = new Cert(set.serverPem);
    // Regenerate a week before expiry rather than fail in the middle of a study.
    if (Date.parse(server.validTo) - Date.now() < 7 * 86_400_000) return undefined;
    if (!server.verify(new Cert(set.caPem).publicKey)) return undefined;
    return { ...set, hosts: [...DEFAULT_CERT_HOSTS] };
  } catch {
    return undefined;
  }
}

/**
 * Returns the cached development certificates, generating them on first use (or when they are about
 * to expire). The server certificate covers localhost, 127.0.0.1 and ::1.
 */
export async function ensureDevCertificates(env: NodeJS.ProcessEnv = process.env): Promise<DevCertificates> {
  const home = h2labHome(env);
  const dir = join(home, 'dev-certs');
  const cached = readSet(dir);
  if (cached) return { ...cached, dir, caFile: join(dir, CERT_FILES.caPem), generated: false };
  mkdirSync(home, { recursive: true });
  const set = await generateCertificates({ hosts: DEFAULT_CERT_HOSTS, caName: 'h2lab development CA' });
  const tmp = mkdtempSync(join(home, '.dev-certs-'));
  writeCertificateSet(tmp, set, { force: true });
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(tmp, dir);
  } catch {
    // Another process renamed its set into place first: use that one, so every process agrees.
    rmSync(tmp, { recursive: true, force: true });
    const theirs = readSet(dir);
    if (theirs) return { ...theirs, dir, caFile: join(dir, CERT_FILES.caPem), generated: false };
    throw new Error(`could not install development certificates in ${dir}`);
  }
  return { ...set, dir, caFile: join(dir, CERT_FILES.caPem), generated: true };
}
