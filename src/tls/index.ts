/**
 * Certificates for h2lab: a cached development CA, `h2lab certs` sets, and loading/checking the
 * files a user names.
 */

export { type CertsOptions, CertsOptionsSchema, writeCertificates } from './certs-command.ts';
export { type DevCertificates, ensureDevCertificates, h2labHome } from './dev.ts';
export {
  CERT_FILES,
  checkCertKeyPair,
  loadTlsFiles,
  parseCertificatePem,
  parsePrivateKeyPem,
  readPemFile,
  type TlsFileOptions,
  type TlsMaterial,
  writeCertificateSet,
} from './files.ts';
export {
  type CertificateSet,
  DEFAULT_CERT_HOSTS,
  type GenerateCertificatesOptions,
  generateCertificates,
  issueServerCertificate,
  spkiSha256Base64,
  validateHosts,
} from './generate.ts';
