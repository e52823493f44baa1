// The h2lab CLI as a user runs it, for every test that needs the real command: started the way the
// library starts its own children (src/core's launcher: a fresh dist/ build, else the sources through
// tsx), bounded in time, and never rejecting, so a test asserts on the exit status and output.
import { type ChildProcess, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import { nodeArgv } from '../../src/core/index.ts';

/** How one CLI run ended. */
export interface CliRun {
  /** Exit status; null when a signal ended it (see `signal`). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the run was killed for passing `timeoutMs`. */
  timedOut: boolean;
}

/** Options of {@link h2lab}. */
export interface CliOptions {
  env?: NodeJS.ProcessEnv;
  /** Killed (SIGKILL) after this long, ms. Default 60 s. */
  timeoutMs?: number;
  /** Called with the child once it is spawned (to signal it mid-run). */
  onStart?: (child: ChildProcess) => void;
  /** Called with each chunk of stdout, and of stderr, as it arrives. */
  onStdout?: (chunk: string, child: ChildProcess) => void;
  onStderr?: (chunk: string, child: ChildProcess) => void;
  /** Run as this user and group (e.g. 65534, nobody, to see what h2lab says without root). */
  uid?: number;
  gid?: number;
  /** Working directory of the run (default the test's). */
  cwd?: string;
  /**
   * RLIMIT_FSIZE of the run, bytes (through util-linux `prlimit`): a write past it fails with EFBIG
   * (Node ignores SIGXFSZ), a real full-disk failure without a file system to fill.
   */
  fileSizeLimitBytes?: number;
  /** RLIMIT_NOFILE of the run (`prlimit --nofile`): how many files, sockets included, it may open. */
  openFilesLimit?: number;
  /**
   * Run in a process group of its own, as a shell runs a foreground job: `process.kill(-pid, SIG)`
   * then signals the CLI and every process it started, as Ctrl-C in a terminal does.
   */
  processGroup?: boolean;
  /** Run inside this network namespace (`ip netns exec NS …`), e.g. one playing another host. */
  netns?: string;
}

const running = new Set<ChildProcess>();
// A test that fails mid-run must not leave an h2lab process behind (and holding a port).
process.once('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

/** `node … cli/main`: the argv of the CLI. */
export const H2LAB_ARGV: readonly string[] = nodeArgv('cli/main');

/**
 * Runs `h2lab ...args` to its end; asynchronous, so a server in the test's own process keeps
 * answering while the CLI talks to it.
 *
 * @example const r = await h2lab(['probe', url]); assert.equal(r.code, 0, r.stderr);
 */
export function h2lab(args: readonly string[], opts: CliOptions = {}): Promise<CliRun> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  return new Promise((resolve) => {
    const argv = [...H2LAB_ARGV, ...args];
    if (opts.fileSizeLimitBytes !== undefined)
      argv.unshift('prlimit', `--fsize=${opts.fileSizeLimitBytes}`, '--');
    if (opts.openFilesLimit !== undefined) argv.unshift('prlimit', `--nofile=${opts.openFilesLimit}`, '--');
    if (opts.netns !== undefined) argv.unshift('ip', 'netns', 'exec', opts.netns);
    const child = spawn(argv[0]!, argv.slice(1), {
      env: opts.env ?? process.env,
      ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(opts.processGroup ? { detached: true } : {}),
      ...(opts.uid === undefined ? {} : { uid: opts.uid }),
      ...(opts.gid === undefined ? {} : { gid: opts.gid }),
    });
    running.add(child);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      opts.onStdout?.(d, child);
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      opts.onStderr?.(d, child);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    let ended = false;
    const end = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      running.delete(child);
      if (timedOut) stderr += `\n[test helper: h2lab ${args.join(' ')} killed after ${timeoutMs} ms]`;
      resolve({ code, signal, stdout, stderr, timedOut });
    };
    // 'close' waits for stdout and stderr to end as well, which a command h2lab started (`net run --
    // sleep 30`) and that outlives it keeps open: after the exit, give the pipes a second, no more.
    child.once('exit', (code, signal) => {
      setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
        end(code, signal);
      }, 1000);
    });
    child.once('close', end);
    opts.onStart?.(child);
  });
}

/**
 * Why the CLI cannot run as another user here, or undefined when it can: every directory on the way
 * to the Node binary and to the repository must be searchable by others, and the binary executable
 * (a Node kept under /root is not). CI installs its Node under /opt for this (.ci/run).
 */
export function otherUserSkipReason(): string | undefined {
  const script = resolvePath(H2LAB_ARGV[H2LAB_ARGV.length - 1] ?? '.');
  // The binary must be executable by others, the script readable, and every directory above searchable.
  const needs: [string, number][] = [
    [process.execPath, 0o001],
    [script, 0o004],
  ];
  for (const [target, leafBit] of needs) {
    for (let p = target, bit = leafBit; ; p = dirname(p), bit = 0o001) {
      let mode: number;
      try {
        mode = statSync(p).mode;
      } catch {
        break;
      }
      if ((mode & bit) === 0)
        return `${p} (mode ${(mode & 0o777).toString(8)}) is out of other users' reach; run with a Node and a clone they can read`;
      if (p === dirname(p)) break;
    }
  }
  return undefined;
}

/** `h2lab serve` running, after it printed its listening lines. */
export interface ServeProcess {
  child: ChildProcess;
  lines: string[];
  plainUrl?: string | undefined;
  tlsUrl?: string | undefined;
  /** Sends `signal` (default SIGTERM) and resolves with how the process ended. */
  stop(signal?: NodeJS.Signals): Promise<CliRun>;
}

/**
 * Starts `h2lab serve ...args`; resolves once the listening line of each listener it expects is
 * printed (by default both unless `--no-plain` / `--no-tls`), rejects if it exits first or prints
 * none within `timeoutMs`.
 */
export async function h2labServe(
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; plain?: boolean; tls?: boolean } = {},
): Promise<ServeProcess> {
  const wantPlain = opts.plain ?? !args.includes('--no-plain');
  const wantTls = opts.tls ?? !args.includes('--no-tls');
  const startMs = opts.timeoutMs ?? 60_000;
  let out = '';
  let child: ChildProcess | undefined;
  let ready: () => void = () => {};
  const listening = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const done = h2lab(['serve', ...args], {
    ...(opts.env ? { env: opts.env } : {}),
    timeoutMs: 600_000,
    onStart: (c) => {
      child = c;
    },
    onStdout: (d) => {
      out += d;
      if ((!wantPlain || /listening http:/.test(out)) && (!wantTls || /listening https:/.test(out))) ready();
    },
  });
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    listening.then(() => 'listening' as const),
    done.then((r) => r),
    new Promise<'slow'>((r) => {
      timer = setTimeout(() => r('slow'), startMs);
    }),
  ]);
  clearTimeout(timer);
  if (outcome !== 'listening') {
    child?.kill('SIGKILL');
    const r = await done;
    throw new Error(
      outcome === 'slow'
        ? `h2lab serve printed no listening lines in ${startMs} ms: ${out}${r.stderr}`
        : `h2lab serve exited with ${r.code ?? r.signal}: ${r.stderr}`,
    );
  }
  return {
    child: child!,
    lines: out.trim().split('\n'),
    plainUrl: /listening (http:\/\/\S+)/.exec(out)?.[1],
    tlsUrl: /listening (https:\/\/\S+)/.exec(out)?.[1],
    async stop(signal = 'SIGTERM') {
      if (child!.exitCode === null && child!.signalCode === null) child!.kill(signal);
      return done;
    },
  };
}

/** How one in-process CLI run ({@link h2labInProcess}) ended. */
export interface InProcessRun {
  /** The status of the first `process.exit` (0 when the command returned, or `process.exitCode`). */
  code: number;
  /** What the command wrote to stderr before it exited (stdout is dropped). */
  stderr: string;
  /** Peak `rss` seen during the run (sampled every 10 ms), bytes. */
  peakRssBytes: number;
}

class ExitCalled extends Error {
  constructor(readonly status: number) {
    super(`process.exit(${status})`);
  }
}

/**
 * Runs `h2lab ...args` in this process through the CLI's own `main` (1–2 s faster per case than a
 * process): `process.exit` is replaced for the run by a throw, and the first exit status is the
 * result, as it would end a real process there; stderr is captured, the command's stdout text is
 * dropped. For commands that end by themselves (not `serve` with valid options).
 *
 * @example const r = await h2labInProcess(['bench', 'http://127.0.0.1:1/', '-d', '999999h']);
 */
export async function h2labInProcess(args: readonly string[]): Promise<InProcessRun> {
  const { main } = await import('../../src/cli/main.ts');
  const exit = process.exit;
  const out = process.stdout.write;
  const err = process.stderr.write;
  let status: number | undefined;
  let stderr = '';
  let peak = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, process.memoryUsage.rss());
    } catch {
      // EMFILE: a case that opened every descriptor; its own error is what the test reports.
    }
  }, 10);
  process.exit = ((code?: number) => {
    status ??= code ?? 0;
    throw new ExitCalled(code ?? 0);
  }) as typeof process.exit;
  // Strings are h2lab's output; node:test's own reports to the runner are Buffers and pass through.
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) =>
    typeof chunk === 'string'
      ? true
      : out.call(process.stdout, chunk as Buffer, ...(rest as []))) as typeof out;
  process.stderr.write = ((chunk: unknown) => {
    if (status === undefined) stderr += String(chunk);
    return true;
  }) as typeof err;
  const exitCode = process.exitCode;
  process.exitCode = undefined;
  try {
    await main(['node', 'h2lab', ...args]);
  } catch (e) {
    if (!(e instanceof ExitCalled)) {
      status ??= 1;
      stderr += `[test helper: main threw ${e instanceof Error ? (e.stack ?? e.message) : String(e)}]`;
    }
  } finally {
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());
    process.exit = exit;
    process.stdout.write = out;
    process.stderr.write = err;
    status ??= typeof process.exitCode === 'number' ? process.exitCode : 0;
    process.exitCode = exitCode;
  }
  return { code: status, stderr, peakRssBytes: peak };
}
