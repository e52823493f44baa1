/**
 * `recordPage()`: Chromium loads a page once over CDP and the load becomes a HAR with bodies,
 * initiators, priorities and timings. The page is a URL of the user's (reached as Chromium would,
 * with `--trust-cert` for a private CA) or a page h2lab generates and serves itself
 * (src/server/site.ts), which is how tests and the worked example get a page without the internet.
 */

import { launchChromium, spkiPins, trustPins, verifiedPin } from '../browser/index.ts';
import { H2labError, VERSION } from '../core/index.ts';
import { browserNetwork, hostNetworkLine } from '../net/index.ts';
import { resolverRules, type SiteSpec } from '../server/index.ts';
import { ensureDevCertificates, readPemFile } from '../tls/index.ts';
import { type Har, harOf } from './har.ts';
import { type SiteOrigins, startSiteOrigins } from './origins-host.ts';
import { capturePageLoad, NETWORK_CHANGED_RETRIES, networkChanged } from './page-load.ts';

/** Options of {@link recordPage}. */
interface RecordOptions {
  /** The page to record; ignored with `generate`. */
  url?: string;
  /** Record a generated page instead (served by h2lab on loopback). */
  generate?: SiteSpec;
  chromiumPath: string;
  /** Bound on the load, ms. */
  timeoutMs: number;
  /** PEM files (a server certificate or its CA) Chromium trusts, as `h2lab browser --trust-cert`. */
  trustCert?: readonly string[];
  /**
   * Accept whatever certificate the page's origin presents (`-k`, as bench and compare): it is
   * fetched once and pinned, so Chromium ignores certificate errors for that origin only.
   */
  insecure?: boolean;
}

/** What {@link recordPage} returns. */
interface Recording {
  har: Har;
  url: string;
  requests: number;
  origins: string[];
  /** The network namespace Chromium ran in (a generated page as root); absent: the host's. */
  netns?: string;
  /** Why Chromium ran in the host's network namespace, when it did. */
  hostNetwork?: string;
  warnings: string[];
}

/**
 * Records one load of a page as a HAR.
 *
 * @example const { har } = await recordPage({ generate: parseSiteSpec('origins=3'), chromiumPath: '/usr/bin/chromium', timeoutMs: 60_000 });
 */
export async function recordPage(opts: RecordOptions): Promise<Recording> {
  const trusted = (opts.trustCert ?? []).map((f) => readPemFile(f, '--trust-cert'));
  let servers: SiteOrigins | undefined;
  let url = opts.url ?? '';
  const flags: string[] = [];
  const pins: string[] = [];
  // A generated page goes where Chromium does (its own namespace as root); a URL is reached through
  // the host's network.
  const net = await browserNetwork(
    undefined,
    opts.generate ? undefined : "the page is reached through the host's network",
  );
  try {
    if (opts.generate) {
      const dev = await ensureDevCertificates();
      servers = await startSiteOrigins(opts.generate, dev, net.serverNamespace);
      url = servers.url;
      flags.push(`--host-resolver-rules=${resolverRules(servers.listeners, servers.address)}`);
      pins.push(...servers.certPems.flatMap(spkiPins));
    } else {
      let u: URL;
      try {
        u = new URL(url);
      } catch {
        u = new URL('invalid:');
      }
      if (u.protocol !== 'https:' && u.protocol !== 'http:')
        throw new H2labError(
          'H2LAB_ERR_INVALID_OPTION',
          `URL ${JSON.stringify(url)} is not an http(s) URL: name the page, e.g. https://www.example.com/, or record a generated one with --generate origins=3`,
          { option: 'URL', value: url },
        );
      pins.push(...(await trustPins(trusted, [u.origin])));
      if (opts.insecure && u.protocol === 'https:') pins.push(await verifiedPin(u.origin, [], 10_000, true));
    }
    const browser = await launchChromium({
      executablePath: opts.chromiumPath,
      spki: pins,
      extraFlags: flags,
      ...(net.netns ? { netns: net.netns } : {}),
    });
    try {
      const b = browser.context.browser();
      if (!b)
        throw new H2labError('H2LAB_ERR_BROWSER_LAUNCH', 'Chromium started without a browser handle', {});
      const warnings: string[] = net.hostReason ? [hostNetworkLine(net.hostReason)] : [];
      let load = await capturePageLoad(b, url, { bodies: true, timeoutMs: opts.timeoutMs });
      for (let retry = 0; retry < NETWORK_CHANGED_RETRIES && networkChanged(load); retry++) {
        warnings.push(
          'the load was repeated: Chromium reported net::ERR_NETWORK_CHANGED (the host network changed)',
        );
        load = await capturePageLoad(b, url, { bodies: true, timeoutMs: opts.timeoutMs });
      }
      const doc = load.requests[0];
      if (load.error && (!doc || doc.status === undefined)) {
        throw new H2labError(
          'H2LAB_ERR_PAGE_LOAD',
          `Chromium could not load ${url}: ${load.error}. Check the URL opens in a browser; for a private CA pass --trust-cert CA.pem, or -k to accept the certificate the origin presents`,
          { url, error: load.error },
        );
      }
      if (load.error)
        warnings.push(`the load did not finish cleanly (${load.error}); what arrived is recorded`);
      const failed = load.requests.filter((r) => r.failed);
      if (failed.length)
        warnings.push(
          `${failed.length} requests failed while recording (${failed
            .slice(0, 3)
            .map((r) => `${r.url.slice(0, 60)}: ${r.failed}`)
            .join('; ')}); they are left out of the HAR`,
        );
      const har = harOf(load, VERSION, url);
      return {
        har,
        url,
        requests: har.log.entries.length,
        origins: [...new Set(har.log.entries.map((e) => new URL(e.request.url).origin))],
        ...(net.netns ? { netns: net.netns } : {}),
        ...(net.hostReason ? { hostNetwork: net.hostReason } : {}),
        warnings,
      };
    } finally {
      await browser.close();
    }
  } finally {
    await servers?.close();
    await net.close();
  }
}
