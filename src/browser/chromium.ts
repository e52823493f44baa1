/**
 * Launching Debian's Chromium through playwright-core (no browser download), headless, with a fresh
 * profile per launch that is deleted on close, and trusting h2lab's certificates by SPKI pin.
 *
 * Why a pin and not `--ignore-certificate-errors`: the pin makes the certificate count as valid, so
 * the page is a secure context exactly as on a real site; the blanket flag marks the page insecure.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { H2labError } from '../core/index.ts';

/**
 * Flags every launch uses. Without the background-networking group Chromium keeps trying to reach
 * the internet from the measured process; QUIC is off so HTTP/3 never replaces the protocol under
 * test (and an Alt-Svc from a real origin cannot move requests to UDP mid-run).
 */
const BASE_CHROMIUM_FLAGS: readonly string[] = Object.freeze([
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--metrics-recording-only',
]);

/**
 * Flags that replace `--disable-gpu` when a page needs WebGL (MapLibre): WebGL through ANGLE on
 * SwiftShader, the CPU Vulkan implementation Chromium ships, so it works headless on a machine
 * without a GPU. Chromium 156 here renders MapLibre even with `--disable-gpu` (it falls back to the
 * same SwiftShader device), but Chromium has announced the end of that silent fallback, so the map
 * asks for it explicitly. Measured here: with `--disable-gpu --disable-software-rasterizer` there is
 * no WebGL2 and MapLibre throws "WebGL2 is required"; with these flags it renders even then.
 */
const WEBGL_CHROMIUM_FLAGS: readonly string[] = Object.freeze([
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
]);

/**
 * Base64 SHA-256 of the SubjectPublicKeyInfo of every certificate in `pem` (a bundle is fine), the
 * form `--ignore-certificate-errors-spki-list` takes.
 */
export function spkiPins(pem: string): string[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => {
    const der = new X509Certificate(b).publicKey.export({ type: 'spki', format: 'der' });
    return createHash('sha256').update(der).digest('base64');
  });
}

/** What {@link launchChromium} needs. */
interface ChromiumLaunchOptions {
  /** Executable path. */
  executablePath: string;
  /** SPKI pins to trust (base64 SHA-256). */
  spki?: readonly string[];
  /** Start with HTTP/2 disabled (the HTTP/1.1-over-TLS control). */
  disableHttp2?: boolean;
  /** Keep WebGL (software, {@link WEBGL_CHROMIUM_FLAGS}) instead of `--disable-gpu`: the map page. */
  webgl?: boolean;
  /**
   * `HOST:PORT` to speak HTTP/3 to: QUIC on (no `--disable-quic`) and
   * `--origin-to-force-quic-on`, since Chromium ignores Alt-Svc from a local root and
   * `--ignore-certificate-errors` makes QUIC fail (ERR_QUIC_PROTOCOL_ERROR): the SPKI pin is what
   * lets the handshake verify.
   */
  forceQuicOn?: string;
  /**
   * More flags, appended last: e.g. `--host-resolver-rules=MAP www.example.com 127.0.0.1:8443` to send
   * a recorded origin to a replay listener without touching DNS.
   */
  extraFlags?: readonly string[];
  /**
   * Chromium appends the TLS secrets of its connections (TLS and QUIC) to this NSS key log: its
   * `SSLKEYLOGFILE` variable. Default none.
   */
  keyLogFile?: string;
  /**
   * A network namespace (by `ip netns` name) to run Chromium in, so that it sees that namespace's
   * interfaces only: Chromium aborts what is in flight with net::ERR_NETWORK_CHANGED whenever an
   * address or link of its namespace changes, as every other link's veth does in the host's.
   */
  netns?: string;
}

/** A running Chromium with its own throw-away profile. */
export interface ChromiumHandle {
  context: BrowserContext;
  version: string;
  /** Every flag passed, for the result. */
  flags: string[];
  /** The namespace it runs in, when not the host's. */
  netns?: string;
  /** Closes the browser and deletes the profile directory. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * A launcher script in `dir` that starts `executable` inside namespace `ns` with the arguments it is
 * given (Playwright runs one executable with its own arguments, so the `ip netns exec` prefix goes in
 * a script). Returns its path.
 */
function netnsLauncher(dir: string, ns: string, executable: string): string {
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const path = join(dir, 'chromium-in-netns');
  writeFileSync(path, `#!/bin/sh\nexec ip netns exec ${quote(ns)} ${quote(executable)} "$@"\n`, {
    mode: 0o755,
  });
  return path;
}

/** Throws H2LAB_ERR_BROWSER_MISSING unless `executablePath` is an executable (checked before a run). */
export function checkChromium(executablePath: string): void {
  try {
    accessSync(executablePath, constants.X_OK);
  } catch {
    throw new H2labError(
      'H2LAB_ERR_BROWSER_MISSING',
      `--chromium ${executablePath} is not an executable: install Debian's chromium (apt-get install chromium) or pass --chromium PATH`,
      { option: '--chromium', value: executablePath },
    );
  }
}

/**
 * Starts Chromium. Throws H2LAB_ERR_BROWSER_MISSING when the executable is not there and
 * H2LAB_ERR_BROWSER_LAUNCH when it does not start.
 */
export async function launchChromium(opts: ChromiumLaunchOptions): Promise<ChromiumHandle> {
  checkChromium(opts.executablePath);
  let flags = opts.webgl
    ? [...BASE_CHROMIUM_FLAGS.filter((f) => f !== '--disable-gpu'), ...WEBGL_CHROMIUM_FLAGS]
    : [...BASE_CHROMIUM_FLAGS];
  if (opts.forceQuicOn) {
    flags = [...flags.filter((f) => f !== '--disable-quic'), `--origin-to-force-quic-on=${opts.forceQuicOn}`];
  }
  if (opts.spki && opts.spki.length > 0)
    flags.push(`--ignore-certificate-errors-spki-list=${opts.spki.join(',')}`);
  if (opts.disableHttp2) flags.push('--disable-http2');
  if (opts.extraFlags) flags.push(...opts.extraFlags);
  const profile = mkdtempSync(join(tmpdir(), 'h2lab-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(join(profile, 'profile'), {
      executablePath: opts.netns
        ? netnsLauncher(profile, opts.netns, opts.executablePath)
        : opts.executablePath,
      headless: true,
      args: flags,
      ...(opts.keyLogFile ? { env: { ...process.env, SSLKEYLOGFILE: resolve(opts.keyLogFile) } } : {}),
      timeout: 60_000,
      // h2lab handles Ctrl-C itself (stop after the run, keep what was measured, close Chromium);
      // Playwright's own handlers would kill Chromium and exit 130 before the result is written.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw new H2labError(
      'H2LAB_ERR_BROWSER_LAUNCH',
      `Chromium at --chromium ${opts.executablePath} did not start: ${(err as Error).message.split('\n')[0]}`,
      { option: '--chromium', value: opts.executablePath },
      { cause: err },
    );
  }
  let closed = false;
  return {
    context,
    version: context.browser()?.version() ?? 'unknown',
    flags,
    ...(opts.netns ? { netns: opts.netns } : {}),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await context.close();
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
    },
  };
}
