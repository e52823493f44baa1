/**
 * Findings: what the probe's numbers mean for someone about to benchmark or deploy, in words.
 * Each rule reads the result and returns zero or more findings with a stable id.
 */

import { formatBytes, formatMs } from '../core/index.ts';
import { DEFAULT_WINDOW_BYTES } from '../h2/index.ts';
import type { Finding, ProbeResult } from '../model/index.ts';
import { H3_ALPN } from './parse.ts';

/** A window-limited flow sends at most one window per round trip; this RTT makes that concrete. */
const REFERENCE_RTT_MS = 100;

function capMbit(windowBytes: number): string {
  return ((windowBytes * 8) / (REFERENCE_RTT_MS / 1000) / 1e6).toFixed(1);
}

const TEXTY = /^(text\/|application\/(json|javascript|xml|[\w.+-]+\+(json|xml))|image\/svg)/i;

type Rule = (r: ProbeResult) => Finding[];

const rules: Rule[] = [
  (r) =>
    r.keepAlive && !r.keepAlive.honoured
      ? [
          {
            id: 'keepalive-not-honoured',
            level: 'warn',
            text: `HTTP/1.1 keep-alive is not honoured: ${r.keepAlive.requests} requests in a row needed ${r.keepAlive.connections} connections${r.keepAlive.connectionHeaders.includes('close') ? ' (Connection: close)' : ''}. Every HTTP/1.1 request pays a new TCP${r.target.scheme === 'https' ? ' and TLS' : ''} handshake — the connection churn that made one study's HTTP/1.1 numbers 6× worse. Fix keep-alive before comparing protocols.`,
          },
        ]
      : [],
  (r) => {
    const up = r.keepAlive?.upstream;
    if (!up) return [];
    return [
      up.reused
        ? {
            id: 'upstream-keepalive',
            level: 'info',
            text: `The h2lab origin accepted ${up.connections} new connection${up.connections === 1 ? '' : 's'} while ${r.keepAlive!.requests} requests came over one client connection: nothing on the way opens a connection per request (reached directly, or through a proxy that reuses its upstream connections).`,
          }
        : {
            id: 'upstream-keepalive-off',
            level: 'warn',
            text: `The h2lab origin behind this target accepted ${up.connections} connections for ${r.keepAlive!.requests} requests that came over one client connection: the proxy in front opens a new upstream connection per request (nginx without \`keepalive\` in its upstream block, \`proxy_http_version 1.1\` and an empty Connection header). Every request then pays a TCP handshake to the backend — the fault behind one study's 6×.`,
          },
    ];
  },
  (r) => {
    if (r.target.scheme !== 'https' || r.protocols.h2.supported !== false) return [];
    return [
      {
        id: 'h2-not-offered',
        level: 'warn',
        text: 'h2 is not offered over TLS (ALPN): browsers use HTTP/1.1 here, with up to 6 connections per origin.',
      },
    ];
  },
  (r) => {
    if (!r.h2 || r.h2.goaway) return [];
    const out: Finding[] = [];
    const mcs = r.h2.effective.MAX_CONCURRENT_STREAMS;
    const proto = r.h2.via;
    if (mcs === null || mcs === undefined) {
      out.push({
        id: 'h2-streams-unlimited',
        level: 'warn',
        text: `${proto} is offered without MAX_CONCURRENT_STREAMS: the protocol then sets no limit, so one client can open thousands of streams at once. Advertise a limit (100–256 is usual).`,
      });
    } else {
      out.push({
        id: 'h2-max-concurrent-streams',
        level: mcs < 100 ? 'warn' : 'info',
        text: `${proto} is offered with MAX_CONCURRENT_STREAMS ${mcs}: a browser queues requests beyond ${mcs} on its one connection${mcs < 100 ? ' (below the 100 RFC 9113 §6.5.2 recommends as a minimum)' : ''}.`,
      });
    }
    const iws = r.h2.effective.INITIAL_WINDOW_SIZE ?? 65_535;
    if (iws <= 65_535) {
      out.push({
        id: 'h2-small-stream-window',
        level: 'info',
        text: `The server's INITIAL_WINDOW_SIZE is ${iws} bytes${r.h2.notSent.includes('INITIAL_WINDOW_SIZE') ? ' (not sent: the protocol default)' : ''}: a request body (upload) on one stream can have at most ${formatBytes(iws)} in flight, ≈ ${capMbit(iws)} Mbit/s per stream at ${REFERENCE_RTT_MS} ms RTT.`,
      });
    }
    if (r.h2.connectionWindowUpdateBytes === null) {
      out.push({
        id: 'h2-no-connection-window-update',
        level: 'info',
        text: `The server sends no connection-level WINDOW_UPDATE at the start: its connection window stays at ${DEFAULT_WINDOW_BYTES} bytes until it reads data, so all uploads on one connection together start capped at ≈ ${capMbit(DEFAULT_WINDOW_BYTES)} Mbit/s at ${REFERENCE_RTT_MS} ms RTT.`,
      });
    } else {
      out.push({
        id: 'h2-connection-window-update',
        level: 'info',
        text: `The server enlarges its connection window by ${formatBytes(r.h2.connectionWindowUpdateBytes)} at once (WINDOW_UPDATE on stream 0).`,
      });
    }
    if (r.h2.effective.HEADER_TABLE_SIZE === 0) {
      out.push({
        id: 'h2-hpack-table-disabled',
        level: 'info',
        text: 'HEADER_TABLE_SIZE is 0: the HPACK dynamic table is off, so request headers are not compressed across requests.',
      });
    }
    if (r.h2.effective.ENABLE_CONNECT_PROTOCOL === 1) {
      out.push({
        id: 'h2-extended-connect',
        level: 'info',
        text: 'ENABLE_CONNECT_PROTOCOL is 1: WebSockets over HTTP/2 (RFC 8441) are accepted.',
      });
    }
    return out;
  },
  (r) =>
    r.h2?.goaway
      ? [
          {
            id: 'h2-goaway-at-start',
            level: 'warn',
            text: `The server sent GOAWAY ${r.h2.goaway.errorName} at the start of the HTTP/2 connection${r.h2.goaway.debug ? ` ("${r.h2.goaway.debug}")` : ''}.`,
          },
        ]
      : [],
  (r) => {
    if (r.target.scheme !== 'http') return [];
    const pk = r.protocols.h2c.supported;
    const up = r.protocols.h2cUpgrade.supported;
    if (pk === true && up === false) {
      return [
        {
          id: 'h2c-prior-knowledge-only',
          level: 'info',
          text: 'h2c works with prior knowledge only: clients that try Upgrade: h2c (curl --http2) stay on HTTP/1.1; use prior knowledge (curl --http2-prior-knowledge, h2lab bench h2c).',
        },
      ];
    }
    if (pk === false && up === false) {
      return [
        {
          id: 'no-h2c',
          level: 'info',
          text: 'No cleartext HTTP/2 on this port: an HTTP/2 comparison needs the TLS port (https://). Browsers never use h2c anyway.',
        },
      ];
    }
    return [];
  },
  (r) => {
    const t = r.tls;
    if (!t) return [];
    const out: Finding[] = [];
    const legacy = (['TLSv1', 'TLSv1.1'] as const).filter((v) => t.versions[v].supported === true);
    if (legacy.length) {
      out.push({
        id: 'legacy-tls-accepted',
        level: 'warn',
        text: `${legacy.join(' and ')} ${legacy.length > 1 ? 'are' : 'is'} accepted: deprecated since 2021 (RFC 8996) and refused by current browsers; allow TLS 1.2 and 1.3 only.`,
      });
    }
    if (t.versions['TLSv1.3'].supported === false) {
      out.push({
        id: 'tls13-not-accepted',
        level: 'warn',
        text: 'TLS 1.3 is not accepted: every new connection spends two round trips in the handshake instead of one before the first request.',
      });
    }
    const leaf = t.certificate.chain[0];
    if (leaf && leaf.daysLeft < 0) {
      out.push({
        id: 'cert-expired',
        level: 'warn',
        text: `The certificate expired ${-leaf.daysLeft} days ago (${leaf.validTo}).`,
      });
    } else if (leaf && leaf.daysLeft < 30) {
      out.push({
        id: 'cert-expires-soon',
        level: 'warn',
        text: `The certificate expires in ${leaf.daysLeft} days (${leaf.validTo}).`,
      });
    }
    if (t.certificate.trusted === false) {
      out.push({
        id: 'cert-untrusted',
        level: 'warn',
        text: `The certificate is not trusted (${t.certificate.verifyError}); probed with --insecure. Clients and load tools need the issuing CA (--ca) to connect.`,
      });
    }
    if (t.clientCertificate.required === true) {
      out.push({
        id: 'mtls-required',
        level: 'info',
        text: `A client certificate is required (mTLS): browsers and load tools must present one${t.clientCertificate.presented ? '' : '. HTTP was not probed past the handshake: pass --cert FILE --key FILE'}.`,
      });
    } else if (t.clientCertificate.requested) {
      out.push({
        id: 'mtls-optional',
        level: 'info',
        text: 'A client certificate is requested but not required: browsers may prompt the user to pick one.',
      });
    }
    if (!t.ocspStapled && leaf?.ocspResponder) {
      out.push({
        id: 'ocsp-not-stapled',
        level: 'info',
        text: `No OCSP response is stapled although the certificate names a responder (${leaf.ocspResponder}): clients that check revocation ask it themselves, one more connection on a cold start.`,
      });
    }
    if (t.alpn['http/1.1'].supported === false && t.alpn['http/1.1'].detail.includes('refused')) {
      out.push({
        id: 'http1-refused-over-tls',
        level: 'info',
        text: 'ALPN http/1.1 is refused: clients without HTTP/2 cannot use this port.',
      });
    }
    return out;
  },
  (r) => {
    // Uploads over h2 and h3 are bounded by the server's receive windows: its SETTINGS
    // INITIAL_WINDOW_SIZE against its initial_max_stream_data_bidi_remote (the limit on streams the
    // client opens, RFC 9000 §18.2). When they differ much, h2 against h3 on uploads compares them.
    const tp = r.quic?.transportParameters;
    const h3Window = tp?.initial_max_stream_data_bidi_remote;
    if (!r.h2 || typeof h3Window !== 'number') return [];
    const h2Window = r.h2.effective.INITIAL_WINDOW_SIZE ?? 65_535;
    const ratio = h3Window / h2Window;
    if (ratio < 4 && ratio > 1 / 4) return [];
    return [
      {
        id: 'h2-h3-window-asymmetry',
        level: 'info',
        text: `The server lets a client send ${formatBytes(h3Window)} per stream before an acknowledgement over HTTP/3 (initial_max_stream_data_bidi_remote) and ${formatBytes(h2Window)} over HTTP/2 (INITIAL_WINDOW_SIZE): ${Math.max(ratio, 1 / ratio).toFixed(0)}× apart, so h2 against h3 on uploads compares these windows as much as the protocols.`,
      },
    ];
  },
  (r) => {
    const h3 = r.protocols.altSvc?.protocols.filter((p) => H3_ALPN.test(p)) ?? [];
    return h3.length
      ? [
          {
            id: 'alt-svc-h3',
            level: 'info',
            text: `The server advertises ${h3.join(', ')} by Alt-Svc: browsers may move to HTTP/3 (QUIC). h2lab measures over TCP, which browsers might then not use here.`,
          },
        ]
      : [];
  },
  (r) => {
    const encoded = r.responses.filter((x) => x.contentEncoding);
    if (encoded.length) {
      return [
        {
          id: 'compression',
          level: 'info',
          text: `Responses are compressed (${[...new Set(encoded.map((x) => x.contentEncoding))].join(', ')}) when the client accepts it.`,
        },
      ];
    }
    const text = r.responses.find((x) => x.contentType && TEXTY.test(x.contentType) && x.bodyBytes > 1024);
    return text
      ? [
          {
            id: 'no-compression',
            level: 'warn',
            text: `${text.path} (${text.contentType}, ${formatBytes(text.bodyBytes)}) is sent uncompressed although the client offered gzip, br and zstd.`,
          },
        ]
      : [];
  },
  (r) =>
    r.large
      ? [
          {
            id:
              r.large.verdict === 'late'
                ? 'large-late'
                : r.large.verdict === 'streamed'
                  ? 'large-streams'
                  : 'large-too-fast',
            level: r.large.verdict === 'late' ? 'warn' : 'info',
            text: `${r.large.path} over ${r.large.protocol}: ${r.large.detail}.${r.large.verdict === 'late' ? ' A proxy that spools responses hides streaming and cancellation from the backend: HTTP/2 multiplexing cannot start what the proxy holds back.' : ''}`,
          },
        ]
      : [],
  (r) =>
    (r.idle ?? []).map((i) => ({
      id: `idle-${i.protocol === 'http/1.1' ? 'http1' : 'h2'}`,
      level: 'info' as const,
      text:
        i.closedAfterMs === null
          ? `An idle ${i.protocol} connection was still open after ${formatMs(i.waitedMs)}.`
          : `The server closes an idle ${i.protocol} connection after ≈ ${formatMs(i.closedAfterMs)} (${i.how === 'goaway' ? 'GOAWAY' : i.how === 'close' ? 'TCP close' : 'reset'}).`,
    })),
];

/** All findings for a result, warnings first. */
export function findingsFor(r: ProbeResult): Finding[] {
  const all = rules.flatMap((rule) => rule(r));
  return [...all.filter((f) => f.level === 'warn'), ...all.filter((f) => f.level === 'info')];
}
