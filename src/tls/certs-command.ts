/**
 * The library side of `h2lab certs`: generate a set and write it, refusing to overwrite.
 */
import { z } from 'zod';
import { optionMeta, parseList, parseOptions } from '../core/index.ts';
import { writeCertificateSet } from './files.ts';
import { DEFAULT_CERT_HOSTS, generateCertificates, validateHosts } from './generate.ts';

/** Options of {@link writeCertificates} (and the flags of `h2lab certs`). */
export const CertsOptionsSchema = z.strictObject({
  out: z
    .string()
    .min(1)
    .meta(optionMeta('out', 'string', 'directory to write ca.pem, server.pem, client.pem and their keys to')),
  hosts: z
    .string()
    .default(DEFAULT_CERT_HOSTS.join(','))
    .meta(
      optionMeta('hosts', 'string', 'comma-separated DNS names and IP addresses for the server certificate'),
    ),
  force: z
    .boolean()
    .default(false)
    .meta(optionMeta('force', 'bool', 'overwrite existing files')),
});

/**
 * Generates a CA, a server certificate for `hosts` and a client certificate, and writes them to
 * `out` (keys 0600). Returns the paths written and the hosts.
 */
export async function writeCertificates(
  opts: z.input<typeof CertsOptionsSchema>,
): Promise<{ files: string[]; hosts: string[] }> {
  const o = parseOptions(CertsOptionsSchema, opts, 'writeCertificates');
  const hosts = validateHosts(parseList(o.hosts));
  const set = await generateCertificates({ hosts, caName: 'h2lab CA' });
  return { files: writeCertificateSet(o.out, set, { force: o.force }), hosts };
}
