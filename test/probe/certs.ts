// Test certificates for the probe tests, made in-process with @peculiar/x509 (no openssl): a CA, a
// server certificate for 127.0.0.1/localhost signed by it, a client certificate signed by it, and a
// self-signed server certificate that no CA vouches for.
import { webcrypto } from 'node:crypto';
import './reflect-shim.ts';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface Pem {
  cert: string;
  key: string;
}

export interface TestCerts {
  ca: Pem;
  server: Pem;
  client: Pem;
  selfSigned: Pem;
}

async function keyPem(keys: CryptoKeyPair): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as webcrypto.CryptoKey);
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n');
  return `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n`;
}

async function keys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
}

const DAY = 86_400_000;

function serverExtensions(names: string[], ips: string[]): x509.Extension[] {
  return [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    new x509.SubjectAlternativeNameExtension([
      ...names.map((value) => ({ type: 'dns' as const, value })),
      ...ips.map((value) => ({ type: 'ip' as const, value })),
    ]),
  ];
}

let cached: Promise<TestCerts> | undefined;

/** Generates (once per process) the certificate set. `validDays`: server certificate lifetime. */
export function testCerts(): Promise<TestCerts> {
  cached ??= make();
  return cached;
}

async function make(): Promise<TestCerts> {
  const now = Date.now();
  const caKeys = await keys();
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    name: 'CN=h2lab probe test CA',
    keys: caKeys,
    serialNumber: '01',
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + 365 * DAY),
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  const issue = async (subject: string, extensions: x509.Extension[], serial: string, days: number) => {
    const k = await keys();
    const cert = await x509.X509CertificateGenerator.create({
      subject,
      issuer: caCert.subject,
      publicKey: k.publicKey,
      signingKey: caKeys.privateKey,
      serialNumber: serial,
      notBefore: new Date(now - DAY),
      notAfter: new Date(now + days * DAY),
      signingAlgorithm: ALG,
      extensions,
    });
    return { cert: cert.toString('pem'), key: await keyPem(k) };
  };
  const server = await issue('CN=localhost', serverExtensions(['localhost'], ['127.0.0.1', '::1']), '02', 20);
  const client = await issue(
    'CN=h2lab probe test client',
    [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
    ],
    '03',
    30,
  );
  const ssKeys = await keys();
  const ss = await x509.X509CertificateGenerator.createSelfSigned({
    name: 'CN=self-signed.test',
    keys: ssKeys,
    serialNumber: '04',
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + 90 * DAY),
    signingAlgorithm: ALG,
    extensions: serverExtensions(['localhost'], ['127.0.0.1']),
  });
  return {
    ca: { cert: caCert.toString('pem'), key: await keyPem(caKeys) },
    server,
    client,
    selfSigned: { cert: ss.toString('pem'), key: await keyPem(ssKeys) },
  };
}
