/**
 * `h2lab net`: packet-level network emulation.
 *   net run [--profile P | --rtt … --loss … --rate …] -- CMD [ARGS…]   CMD runs in the server namespace
 *   net profiles                                                      the presets
 *   net check                                                         what this machine can do
 *   net clean [--all]                                                 remove namespaces left by crashes
 * Each action loads src/net when it runs; the flags need only its light face.
 */
import type { ChildProcess } from 'node:child_process';
import type { Command } from 'commander';
import { formatBitRate, formatBytes, formatMs, H2labError } from '../core/index.ts';
import type { Link } from '../net/index.ts';
import { addLinkOptions, type LinkFlags, linkOptionsFromFlags } from './net-options.ts';
import { exitWithError } from './output.ts';

/** One line describing a link, for people. */
export function linkSummary(link: Link): string {
  const i = link.info;
  const parts = [`profile ${i.profile}`, `backend ${i.backend}`, `rtt ${formatMs(i.rttMs)}`];
  if (i.jitterMs) parts.push(`jitter ±${formatMs(i.jitterMs)}`);
  if (i.lossUp || i.lossDown)
    parts.push(
      `loss ${pct(i.lossUp ?? 0)} up / ${pct(i.lossDown ?? 0)} down${(i.burstPackets ?? 1) > 1 ? ` in bursts of ${i.burstPackets}` : ''}`,
    );
  if (i.rateBitsPerSec)
    parts.push(
      `rate ${formatBitRate(i.rateBitsPerSec)}${i.rateUpBitsPerSec && i.rateUpBitsPerSec !== i.rateBitsPerSec ? ` (up ${formatBitRate(i.rateUpBitsPerSec)})` : ''}`,
    );
  if (i.queueBytes) parts.push(`queue ${formatBytes(i.queueBytes)}`);
  parts.push(
    `cc ${i.congestionControl}`,
    `initcwnd ${i.initialCwnd}`,
    `slow-start-after-idle ${i.slowStartAfterIdle ? 'on' : 'off'}`,
  );
  return parts.join(', ');
}

function pct(x: number): string {
  return `${+(x * 100).toFixed(3)}%`;
}

export function register(program: Command): void {
  const net = program.command('net');

  addLinkOptions(
    net
      .command('run')
      .description(
        'run CMD in a server network namespace behind an emulated link; the client side is this host',
      )
      .argument('<cmd...>', 'the command (after --) and its arguments')
      .option('--json', 'print the link as JSON on stderr instead of a line'),
    { profile: '--profile', rate: '--rate', seed: true },
  ).action(async (cmd: string[], flags: LinkFlags & { profile?: string; json?: boolean }) => {
    const { createLink } = await import('../net/index.ts');
    const link = await createLink(linkOptionsFromFlags(flags, '--rate'));
    process.stderr.write(
      flags.json
        ? `${JSON.stringify(link.info)}\n`
        : `h2lab net: ${linkSummary(link)}\nh2lab net: server ${link.serverAddress} (namespace ${link.namespace}), client ${link.clientAddress}\n`,
    );
    const child: ChildProcess = link.spawnInServer(cmd[0]!, cmd.slice(1), {
      stdio: 'inherit',
      env: {
        ...process.env,
        H2LAB_NET_SERVER: link.serverAddress,
        H2LAB_NET_CLIENT: link.clientAddress,
        H2LAB_NET_NS: link.namespace,
      },
    });
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const onInt = forward('SIGINT');
    const onTerm = forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    const code = await new Promise<number>((resolve) => {
      child.once('error', (err) => {
        process.stderr.write(`h2lab net: cannot run ${cmd[0]}: ${err.message}\n`);
        resolve(127);
      });
      child.once('exit', (c, sig) => resolve(c ?? (sig ? 128 + (sigNum[sig] ?? 1) : 1)));
    });
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    await link.close();
    process.exit(code);
  });

  net
    .command('profiles')
    .description('list the link presets')
    .option('--json', 'as JSON')
    .action(async (flags: { json?: boolean }) => {
      const { PROFILES, resolveProfile } = await import('../net/index.ts');
      const rows = Object.entries(PROFILES).map(([name, p]) => ({
        name,
        description: p.description,
        resolved: resolveProfile(name),
      }));
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify(
            rows.map((r) => r.resolved),
            null,
            2,
          )}\n`,
        );
        return;
      }
      const width = Math.max(...rows.map((r) => r.name.length));
      for (const r of rows) process.stdout.write(`${r.name.padEnd(width)}  ${r.description}\n`);
    });

  net
    .command('check')
    .description('what network emulation can do on this machine')
    .action(async () => {
      const { checkNetAvailable, missingPrerequisite, netemAvailable, readSysctl } = await import(
        '../net/index.ts'
      );
      const lines: Array<[string, string]> = [];
      const missing = missingPrerequisite(true);
      lines.push(['prerequisites', missing ? `missing ${missing}` : 'Linux, root, ip, /dev/net/tun: ok']);
      let relayOk = false;
      try {
        checkNetAvailable('relay');
        relayOk = true;
        lines.push(['relay backend', 'available (native addon loaded)']);
      } catch (err) {
        lines.push(['relay backend', `unavailable: ${(err as Error).message}`]);
      }
      const netem = missing ? false : await netemAvailable();
      lines.push([
        'netem backend',
        netem ? 'available' : 'unavailable (kernel has no sch_netem); auto uses the relay',
      ]);
      lines.push([
        'congestion control',
        `default ${readSysctl('net.ipv4.tcp_congestion_control')}; available ${readSysctl('net.ipv4.tcp_available_congestion_control')}; allowed ${readSysctl('net.ipv4.tcp_allowed_congestion_control')}`,
      ]);
      for (const [k, v] of lines) process.stdout.write(`${k.padEnd(20)} ${v}\n`);
      if (!relayOk && !netem) {
        throw new H2labError(
          'H2LAB_ERR_NET_UNAVAILABLE',
          `network emulation is not available here: ${missing ?? 'no backend works'}`,
          {},
        );
      }
    });

  net
    .command('clean')
    .description('delete network namespaces left by h2lab runs that crashed (their owner process is gone)')
    .option('--all', 'delete every h2lab namespace, also those of running h2lab processes')
    .action(async (flags: { all?: boolean }) => {
      const { missingPrerequisite, sweepLinks } = await import('../net/index.ts');
      const missing = missingPrerequisite(false);
      if (missing)
        exitWithError(new H2labError('H2LAB_ERR_NET_UNAVAILABLE', `h2lab net clean needs ${missing}`, {}));
      const deleted = await sweepLinks({ all: flags.all === true });
      process.stdout.write(deleted.length === 0 ? 'nothing to clean\n' : `deleted ${deleted.join(', ')}\n`);
    });
}

const sigNum: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 2, SIGTERM: 15, SIGKILL: 9, SIGHUP: 1 };
