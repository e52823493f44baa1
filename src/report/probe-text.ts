/**
 * The probe's terminal report: a pure function from a result to text (the CLI prints it).
 */
import { formatBytes, formatMs } from '../core/index.ts';
import type { Availability, ProbeResult } from '../model/index.ts';

function table(rows: string[][], indent = '  '): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, c.length);
    });
  }
  return rows
    .map((row) =>
      `${indent}${row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}`.trimEnd(),
    )
    .join('\n');
}

function word(a: Availability): string {
  return a.supported === true ? 'yes' : a.supported === false ? 'no' : '?';
}

function avail(label: string, a: Availability): string[] {
  return [label, word(a), a.detail];
}

/**
 * Renders a probe result for a terminal, sections in the order a reader asks: what does it speak,
 * TLS, HTTP/2 settings, HTTP/1.1 keep-alive, responses, findings, expectations.
 */
export function renderProbeText(r: ProbeResult): string {
  const out: string[] = [];
  out.push(
    `h2lab probe ${r.url}  (${r.target.address ?? r.target.host}:${r.target.port}, ${formatMs(r.durationMs)})`,
  );

  const p = r.protocols;
  out.push('', 'Protocols');
  const protoRows = [avail('HTTP/1.1', p['http/1.1'])];
  if (r.target.scheme === 'https') protoRows.push(avail('h2 (TLS, ALPN)', p.h2));
  else protoRows.push(avail('h2c (prior knowledge)', p.h2c), avail('h2c (Upgrade)', p.h2cUpgrade));
  protoRows.push([
    'Alt-Svc',
    p.altSvc ? p.altSvc.protocols.join(', ') || 'clear' : 'none',
    p.altSvc?.header ?? '',
  ]);
  if (p.h3) protoRows.push(avail('h3 (QUIC)', p.h3));
  out.push(table(protoRows));

  if (r.quic) {
    const tp = r.quic.transportParameters;
    out.push('', `QUIC transport parameters sent by the server (${tp ? r.quic.via : 'not read'})`);
    if (!tp) out.push(`  ${r.quic.via}`);
    else {
      // Connection ids are per connection, not the server's settings: left to the JSON.
      const rows = [['parameter', 'value']];
      for (const [k, v] of Object.entries(tp)) if (!k.endsWith('connection_id')) rows.push([k, String(v)]);
      out.push(table(rows));
    }
  }

  if (r.tls) {
    const t = r.tls;
    const n = t.negotiated;
    out.push('', 'TLS');
    const rows: string[][] = [
      [
        'negotiated',
        n.version ?? '?',
        `${n.cipherStandardName ?? n.cipher ?? '?'}, ALPN ${n.alpn ?? 'none'}${Number.isFinite(n.handshakeMs) ? `, handshake ${formatMs(n.handshakeMs)}` : ''}`,
      ],
      ...Object.entries(t.versions).map(([v, a]) => avail(`${v} alone`, a)),
      avail('ALPN h2 alone', t.alpn.h2),
      avail('ALPN http/1.1 alone', t.alpn['http/1.1']),
      [
        'certificate',
        t.certificate.trusted === null ? '?' : t.certificate.trusted ? 'trusted' : 'NOT trusted',
        t.certificate.trusted === null
          ? 'not checked: no handshake completed without a client certificate (pass --cert/--key)'
          : (t.certificate.verifyError ?? ''),
      ],
      [
        'client certificate',
        t.clientCertificate.required ? 'required' : t.clientCertificate.requested ? 'requested' : 'no',
        t.clientCertificate.detail,
      ],
      ['OCSP stapling', t.ocspStapled ? 'yes' : 'no', ''],
    ];
    out.push(table(rows));
    t.certificate.chain.forEach((c, i) => {
      out.push(
        `    [${i}] ${c.subject}  issued by ${c.issuer}${c.selfSigned ? ' (self-signed)' : ''}`,
        `        ${c.subjectAltNames.length ? `SAN ${c.subjectAltNames.join(', ')}; ` : ''}valid to ${c.validTo.slice(0, 10)} (${c.daysLeft} days left)`,
      );
    });
  }

  if (r.h2) {
    const h = r.h2;
    out.push('', `HTTP/2 settings sent by the server (${h.via})`);
    const sent = new Map(h.settingsSent.map((s) => [s.name, s.value]));
    const rows = [['setting', 'sent', 'in effect']];
    for (const [name, value] of Object.entries(h.effective)) {
      rows.push([
        name,
        sent.has(name) ? String(sent.get(name)) : 'not sent',
        value === null ? 'unlimited' : String(value),
      ]);
    }
    for (const s of h.settingsSent) if (!(s.name in h.effective)) rows.push([s.name, String(s.value), '']);
    rows.push([
      'connection WINDOW_UPDATE',
      h.connectionWindowUpdateBytes === null ? 'none' : `+${h.connectionWindowUpdateBytes}`,
      h.connectionWindowUpdateBytes === null ? '65535' : String(65_535 + h.connectionWindowUpdateBytes),
    ]);
    rows.push(['PING round trip', formatMs(h.pingRttMs), '']);
    if (h.goaway) rows.push(['GOAWAY', h.goaway.errorName, h.goaway.debug]);
    out.push(table(rows));
  }

  if (r.keepAlive) {
    const k = r.keepAlive;
    out.push(
      '',
      `HTTP/1.1 keep-alive: ${k.honoured ? 'honoured' : 'NOT honoured'} — ${k.requests} requests, ${k.connections} connection${k.connections === 1 ? '' : 's'}${k.connectionHeaders.length ? `; Connection: ${[...new Set(k.connectionHeaders)].join(', ')}` : ''}${k.keepAliveHeader ? `; Keep-Alive: ${k.keepAliveHeader}` : ''}`,
    );
    if (k.upstream)
      out.push(
        `upstream (the h2lab origin's count): ${k.upstream.reused ? 'reused' : 'NOT reused'} — ${k.upstream.connections} connection${k.upstream.connections === 1 ? '' : 's'} accepted for ${k.requests} requests`,
      );
  }

  if (r.responses.length || r.large) {
    out.push('', 'Responses');
    const rows = [['protocol', 'path', 'status', 'TTFB', 'total', 'body', 'encoding', 'server']];
    for (const x of [...r.responses, ...(r.large ? [r.large] : [])]) {
      rows.push([
        x.protocol,
        x.path,
        String(x.status),
        formatMs(x.ttfbMs),
        formatMs(x.totalMs),
        formatBytes(x.bodyBytes),
        x.contentEncoding ?? '-',
        x.server ?? '-',
      ]);
    }
    out.push(table(rows));
    if (r.large) out.push(`  large response: ${r.large.verdict} — ${r.large.detail}`);
  }

  if (r.idle?.length) {
    out.push('', 'Idle connections');
    out.push(
      table(
        r.idle.map((i) => [
          i.protocol,
          i.closedAfterMs === null
            ? `still open after ${formatMs(i.waitedMs)}`
            : `closed after ${formatMs(i.closedAfterMs)} (${i.how})`,
        ]),
      ),
    );
  }

  if (r.problems.length) {
    out.push('', 'Steps that failed');
    out.push(table(r.problems.map((x) => [x.step, x.kind, `${x.code ? `${x.code}: ` : ''}${x.detail}`])));
  }

  out.push('', 'Findings');
  if (r.findings.length === 0) out.push('  (none)');
  for (const f of r.findings) out.push(`  ${f.level === 'warn' ? '!' : '-'} ${f.text}`);

  if (r.expectations) {
    const e = r.expectations;
    out.push(
      '',
      `Expectations: ${e.unmet.length === 0 ? 'all met' : `${e.unmet.length} of ${e.asked.length} NOT met`}`,
    );
    if (e.met.length) out.push(`  met: ${e.met.join(', ')}`);
    for (const u of e.unmet) out.push(`  NOT met: ${u.expectation} — ${u.reason}`);
  }
  return `${out.join('\n')}\n`;
}
