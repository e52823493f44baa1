/**
 * `h2lab serve`: the fixture server in the foreground. Prints one `listening URL (protocols)` line per
 * listener, then where the development CA is when it is used; SIGINT/SIGTERM close it gracefully.
 */
import type { Command } from 'commander';
import { type RunningServer, resolveServerOptions, serverOptionMeta, startServer } from '../server/index.ts';
import { spkiSha256Base64 } from '../tls/index.ts';
import { addSchemaFlags, optionsFromFlags } from './schema-flags.ts';

/** The startup lines, exactly as printed (other tools parse `listening <url>`). */
export function listeningLines(srv: RunningServer): string[] {
  const lines: string[] = [];
  if (srv.plainUrl) lines.push(`listening ${srv.plainUrl} (http/1.1, h2c)`);
  if (srv.tlsUrl) lines.push(`listening ${srv.tlsUrl} (h2, http/1.1)`);
  if (srv.h3Url) lines.push(`listening ${srv.h3Url} (h3)`);
  if (srv.h3Unavailable) lines.push(`h3 not served: ${srv.h3Unavailable}`);
  if (srv.tlsUrl && srv.options.clientAuth !== 'none')
    lines.push(`client certificates: ${srv.options.clientAuth} (CA ${srv.options.ca})`);
  if (srv.devCertificates && srv.caFile) {
    lines.push(
      `development CA ${srv.caFile} (curl --cacert ${srv.caFile}; Chromium --ignore-certificate-errors-spki-list=${spkiSha256Base64(srv.certPem)})`,
    );
  }
  return lines;
}

export function register(program: Command): void {
  const meta = serverOptionMeta();
  const cmd = program.command('serve');
  addSchemaFlags(cmd, meta).action(async () => {
    const opts = resolveServerOptions(optionsFromFlags(cmd, meta));
    const srv = await startServer(opts);
    // Client certificates are a TLS feature: the plain port serves anyone. Said, not refused, because
    // a lab may want both (mTLS on one port, a control run on the other).
    if (srv.plainUrl && srv.tlsUrl && opts.clientAuth === 'require') {
      process.stderr.write(
        `h2lab serve: warning: --client-auth require applies to ${srv.tlsUrl} only; ${srv.plainUrl} serves clients without a certificate (pass --no-plain to close it)\n`,
      );
    }
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(130); // a second signal: do not wait
      stopping = true;
      process.stderr.write(`${signal}: closing (in-flight requests get ${opts.graceMs} ms)\n`);
      srv.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    // Last: whoever waits for these lines may signal at once, and must find the handlers installed.
    process.stdout.write(`${listeningLines(srv).join('\n')}\n`);
  });
}
