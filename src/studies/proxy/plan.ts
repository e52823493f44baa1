/**
 * What the proxy study sets up and watches: nginx's server block per configuration, the responses
 * nginx spools to its temp path, and the fixture's counters of upstream connections.
 */
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { MetricsSnapshot } from '../../server/index.ts';
import { BUFFERS, type ProxyConfig } from './options.ts';

/** The `server { … }` of one configuration, listening with TLS for HTTP/1.1 and h2 by ALPN. */
export function serverBlock(
  c: ProxyConfig,
  port: number,
  dir: string,
  sndbufBytes: number,
  upstream: string,
): string {
  const b = BUFFERS[c.buffers];
  const sndbuf = sndbufBytes > 0 ? ` sndbuf=${sndbufBytes}` : '';
  // Without `keepalive` in an upstream block nginx speaks HTTP/1.0 with "Connection: close" to the
  // backend: one TCP connection per request. Reuse needs the pool, HTTP/1.1 and an empty
  // Connection header (nginx's own documentation of ngx_http_upstream_module `keepalive`).
  const pass = c.keepalive
    ? `proxy_pass http://fixture_ka; proxy_http_version 1.1; proxy_set_header Connection "";`
    : `proxy_pass http://${upstream.startsWith('unix:') ? 'fixture_plain' : upstream};`;
  return `
  server {
    listen 127.0.0.1:${port} ssl http2${sndbuf};
    error_log ${join(dir, `${c.id}.error.log`)} warn;
    proxy_temp_path ${join(dir, `${c.id}.temp`)};
    proxy_buffers ${b.buffers}; proxy_buffer_size ${b.bufferSize}; proxy_busy_buffers_size ${b.busy};
    location / { ${pass} }
  }`;
}

/** What nginx spooled for one configuration while a cell ran. */
export interface Spool {
  /**
   * nginx's "an upstream response is buffered to a temporary file" warnings: one per spooled
   * response, by the fixture route it asked for.
   */
  responses: { bytes: number; chunks: number };
  /** Temp files seen open in nginx's workers, and the bytes seen in them (see {@link watchSpool}). */
  files: number;
  bytesSeen: number;
  /** The first `[error]` line nginx logged for this configuration, if any. */
  firstError?: string;
}

/** How often the workers' open temp files are sampled, ms. */
export const SPOOL_SAMPLE_MS = 10;

/**
 * Watches one configuration's spooling from now on: its error log (nginx warns once per response it
 * buffers to a temporary file), and the temp files open in nginx's workers. nginx unlinks a proxy
 * temp file as soon as it creates it and keeps only the descriptor, so the directory is always
 * empty; the files are read through /proc/PID/fd every {@link SPOOL_SAMPLE_MS} ms, keeping each
 * one's largest size seen — a lower bound of what was written, as the last writes of a file can
 * fall between two samples.
 */
export function watchSpool(dir: string, c: ProxyConfig, workers: () => number[]): { stop: () => Spool } {
  const temp = `${join(dir, `${c.id}.temp`)}/`;
  const log = join(dir, `${c.id}.error.log`);
  const logAt = sizeOf(log);
  const seen = new Map<string, number>();
  const sample = () => {
    for (const pid of workers()) {
      let fds: string[];
      try {
        fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        try {
          const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
          if (!target.startsWith(temp)) continue;
          const size = statSync(`/proc/${pid}/fd/${fd}`).size;
          seen.set(target, Math.max(seen.get(target) ?? 0, size));
        } catch {
          // Closed between the listing and the read.
        }
      }
    }
  };
  const timer = setInterval(sample, SPOOL_SAMPLE_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      let text = '';
      try {
        text = readFileSync(log).subarray(logAt).toString('utf8');
      } catch {
        // No log yet: nginx wrote nothing for this configuration.
      }
      const lines = text.split('\n');
      const spooled = lines.filter((l) => l.includes('buffered to a temporary file'));
      const firstError = lines.find((l) => l.includes('[error]'));
      return {
        responses: {
          bytes: spooled.filter((l) => l.includes('GET /bytes/')).length,
          chunks: spooled.filter((l) => l.includes('GET /chunks/')).length,
        },
        files: seen.size,
        bytesSeen: [...seen.values()].reduce((a, b) => a + b, 0),
        ...(firstError ? { firstError } : {}),
      };
    },
  };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export const sum = (row: Record<string, number>) => Object.values(row).reduce((a, b) => a + b, 0);

/** Connections the fixture accepted (every listener, every protocol). */
export const accepted = (m: MetricsSnapshot) => sum(m.connections.total.plain) + sum(m.connections.total.tls);
/** Requests for the study's routes (not /metrics, which the study reads itself). */
export const served = (m: MetricsSnapshot) => sum(m.requests.bytes) + sum(m.requests.chunks);
