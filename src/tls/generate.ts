/**
 * Certificate generation with a TypeScript X.509 library (no openssl subprocess): a CA, a server
 * certificate for the given hosts and a client certificate for mTLS, all ECDSA P-256 / SHA-256.
 */
import { createHash, X509Certificate as NodeX509, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import type * as X509 from '@peculiar/x509';
import { invalidOption } from '../core/index.ts';

/**
 * `@peculiar/x509` and its ASN.1 stack, loaded on the first generation: evaluating them took about
 * 0.3 s, which every command paid at start-up while most never generate a certificate.
 */
let x509Module: Promise<typeof X509> | undefined;
function loadX509(): Promise<typeof X509> {
  x509Module ??= (async () => {
    await import('./reflect-shim.ts');
    const m = await import('@peculiar/x509');
    m.cryptoProvider.set(webcrypto as unknown as Crypto);
    return m;
  })();
  return x509Module;
}

const ALG: EcKeyGenParams & EcdsaParams = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 86_400_000;
/** Hosts a development certificate covers when none are named. */
export const DEFAULT_CERT_HOSTS: readonly string[] = Object.freeze(['localhost', '127.0.0.1', '::1']);

/** Options of {@link generateCertificates}. */
export interface GenerateCertificatesOptions {
  /** DNS names and IP addresses the server certificate is valid for. Default `localhost,127.0.0.1,::1`. */
  hosts?: readonly string[];
  /** Validity of the server and client certificates in days. Default 397 (the browsers' maximum + margin-free). */
  leafDays?: number;
  /** Validity of the CA in days. Default 3650. */
  caDays?: number;
  /** Common name of the CA. Default `h2lab development CA`. */
  caName?: string;
}

/** A CA with a server and a client certificate it signed. All values are PEM text. */
export interface CertificateSet {
  caPem: string;
  caKeyPem: string;
  serverPem: string;
  serverKeyPem: string;
  clientPem: string;
  clientKeyPem: string;
  /** The hosts in the server certificate's subjectAltName. */
  hosts: string[];
}

async function keyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyPem(x509: typeof X509, key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

function serial(): string {
  // RFC 5280 §4.1.2.2: positive, at most 20 octets; a leading 0x01 keeps it positive.
  const b = webcrypto.getRandomValues(new Uint8Array(16));
  return `01${Buffer.from(b).toString('hex')}`;
}

function dnEscape(s: string): string {
  return s.replace(/[,+"\\<>;=]/g, (c) => `\\${c}`);
}

/** Checks a host list: DNS names or IP literals, at least one. */
export function validateHosts(hosts: readonly string[], option = '--hosts'): string[] {
  const out = hosts.map((h) => h.trim()).filter((h) => h.length > 0);
  if (out.length === 0)
    throw invalidOption(option, hosts.join(','), 'name at least one host, e.g. localhost,127.0.0.1,::1');
  for (const h of out) {
    if (
      isIP(h) === 0 &&
      !/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*$/.test(h)
    ) {
      throw invalidOption(
        option,
        h,
        'each host must be a DNS name (e.g. localhost) or an IP address (e.g. 127.0.0.1, ::1)',
      );
    }
  }
  return out;
}

/**
 * Generates a fresh CA, a server certificate (serverAuth, SANs = `hosts`) and a client certificate
 * (clientAuth), all signed by that CA.
 *
 * @example const set = await generateCertificates({ hosts: ['localhost', '127.0.0.1'] });
 */
export async function generateCertificates(opts: GenerateCertificatesOptions = {}): Promise<CertificateSet> {
  const hosts = validateHosts(opts.hosts ?? DEFAULT_CERT_HOSTS);
  const x509 = await loadX509();
  const now = Date.now();
  // Back-date by a day so a clock a little behind still accepts the certificates.
  const notBefore = new Date(now - DAY_MS);
  const caKeys = await keyPair();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${dnEscape(opts.caName ?? 'h2lab development CA')}, O=h2lab`,
    notBefore,
    notAfter: new Date(now + (opts.caDays ?? 3650) * DAY_MS),
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const leaf = (cn: string, usage: string, san: X509.JsonGeneralNames | undefined) =>
    signLeaf(x509, {
      ca,
      caKey: caKeys.privateKey,
      cn,
      usage,
      san,
      notBefore,
      notAfter: now + (opts.leafDays ?? 397) * DAY_MS,
    });
  const server = await leaf(hosts[0]!, x509.ExtendedKeyUsage.serverAuth, sanOf(hosts));
  const client = await leaf('h2lab client', x509.ExtendedKeyUsage.clientAuth, undefined);
  return {
    caPem: ca.toString('pem'),
    caKeyPem: await keyPem(x509, caKeys.privateKey),
    serverPem: server.pem,
    serverKeyPem: server.keyPem,
    clientPem: client.pem,
    clientKeyPem: client.keyPem,
    hosts,
  };
}

function sanOf(hosts: readonly string[]): X509.JsonGeneralNames {
  return hosts.map((h) => ({ type: isIP(h) ? ('ip' as const) : ('dns' as const), value: h }));
}

/** One leaf certificate signed by `ca`. */
async function signLeaf(
  x509: typeof X509,
  o: {
    ca: X509.X509Certificate;
    caKey: CryptoKey;
    cn: string;
    usage: string;
    san: X509.JsonGeneralNames | undefined;
    notBefore: Date;
    notAfter: number;
  },
): Promise<{ pem: string; keyPem: string }> {
  const keys = await keyPair();
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([o.usage]),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    await x509.AuthorityKeyIdentifierExtension.create(o.ca),
  ];
  if (o.san) extensions.push(new x509.SubjectAlternativeNameExtension(o.san, false));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${dnEscape(o.cn)}, O=h2lab`,
    issuer: o.ca.subject,
    notBefore: o.notBefore,
    notAfter: new Date(o.notAfter),
    signingKey: o.caKey,
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions,
  });
  return { pem: cert.toString('pem'), keyPem: await keyPem(x509, keys.privateKey) };
}

/**
 * A server certificate for `hosts` signed by an existing CA (e.g. the development CA of
 * {@link ensureDevCertificates}), valid for `days` (default 30): what a replay server presents for
 * each recorded hostname, so a browser that trusts the CA's certificates trusts every origin.
 *
 * @example const { pem, keyPem } = await issueServerCertificate(dev.caPem, dev.caKeyPem, ['www.example.com']);
 */
export async function issueServerCertificate(
  caPem: string,
  caKeyPem: string,
  hosts: readonly string[],
  days = 30,
): Promise<{ pem: string; keyPem: string }> {
  const names = validateHosts(hosts);
  const x509 = await loadX509();
  const ca = new x509.X509Certificate(caPem);
  const der = x509.PemConverter.decode(caKeyPem)[0]!;
  const caKey = await webcrypto.subtle.importKey('pkcs8', der, ALG, false, ['sign']);
  const now = Date.now();
  return signLeaf(x509, {
    ca,
    caKey: caKey as CryptoKey,
    cn: names[0]!,
    usage: x509.ExtendedKeyUsage.serverAuth,
    san: sanOf(names),
    notBefore: new Date(now - DAY_MS),
    notAfter: now + days * DAY_MS,
  });
}

/**
 * Base64 SHA-256 of a certificate's SubjectPublicKeyInfo: the form Chromium's
 * `--ignore-certificate-errors-spki-list` expects.
 */
export function spkiSha256Base64(certPem: string): string {
  const spki = new NodeX509(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}
