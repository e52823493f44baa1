/**
 * `h2lab certs --out DIR [--hosts …] [--force]`: a CA, a server and a client certificate, written
 * with a TypeScript X.509 library (no openssl needed).
 */
import type { Command } from 'commander';
import { describeOptions, H2labError } from '../core/index.ts';
import { CertsOptionsSchema, writeCertificates } from '../tls/index.ts';
import { addSchemaFlags, optionsFromFlags } from './schema-flags.ts';

export function register(program: Command): void {
  const meta = describeOptions(CertsOptionsSchema);
  const cmd = program.command('certs');
  addSchemaFlags(cmd, meta, false).action(async () => {
    const opts = optionsFromFlags(cmd, meta);
    if (typeof opts.out !== 'string') {
      throw new H2labError(
        'H2LAB_ERR_USAGE',
        'h2lab certs needs --out DIR, the directory to write the files to',
        { option: '--out' },
      );
    }
    const r = await writeCertificates(opts as { out: string });
    for (const f of r.files) process.stdout.write(`wrote ${f}\n`);
    process.stdout.write(
      `server certificate for ${r.hosts.join(', ')}; trust ca.pem (curl --cacert ${r.files[0]})\n`,
    );
  });
}
