// Test certificates for the probe tests, from src/tls (no openssl): a CA with a server certificate
// for localhost/127.0.0.1/::1 (20 days, so the "expires soon" finding shows) and a client
// certificate, plus a chain from a self-signed CA the probe is not told about (server + its CA).
import { generateCertificates } from '../../src/tls/index.ts';

export interface Pem {
  cert: string;
  key: string;
}

export interface TestCerts {
  ca: Pem;
  server: Pem;
  client: Pem;
  /** Leaf and its self-signed CA in one PEM (the server sends both): untrusted without that CA. */
  untrusted: Pem;
}

let cached: Promise<TestCerts> | undefined;

/** Generates (once per process) the certificate set. */
export function testCerts(): Promise<TestCerts> {
  cached ??= (async () => {
    const [set, other] = await Promise.all([
      generateCertificates({ leafDays: 20, caName: 'h2lab probe test CA' }),
      generateCertificates({ caName: 'self-signed test CA' }),
    ]);
    return {
      ca: { cert: set.caPem, key: set.caKeyPem },
      server: { cert: set.serverPem, key: set.serverKeyPem },
      client: { cert: set.clientPem, key: set.clientKeyPem },
      untrusted: { cert: `${other.serverPem.trimEnd()}\n${other.caPem}`, key: other.serverKeyPem },
    };
  })();
  return cached;
}
