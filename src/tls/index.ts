/**
 * Certificates for h2lab: a cached development CA, `h2lab certs` sets, and loading/checking the
 * files a user names.
 */

export { CertsOptionsSchema, writeCertificates } from './certs-command.ts';
export { ensureDevCertificates } from './dev.ts';
export {
  CERT_FILES,
  checkCertKeyPair,
  loadTlsFiles,
  readPemFile,
  readTlsFiles,
  writeCertificateSet,
} from './files.ts';
export {
  type CertificateSet,
  type GenerateCertificatesOptions,
  generateCertificates,
  issueServerCertificate,
  spkiSha256Base64,
} from './generate.ts';
