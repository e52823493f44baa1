/**
 * Response behaviour over time: `--large PATH` (streamed, or late as if spooled) and `--wait-idle`
 * (when does the server close an idle connection).
 */
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import { encodeFrame, encodeHeaderBlock, FrameReader, FrameType } from '../h2/index.ts';
import type { Failure, IdleReport, LargeReport, ResponseReport } from '../model/index.ts';
import { exchangePreface, readResponseHead } from './h2.ts';
import { fetchH1, fetchH2, type Origin, openH2Session, type TimedResponse, watchIdle } from './http.ts';
import type { ProbeOptions } from './options.ts';
import { connectTcp, connectTls, Inbox } from './wire.ts';

/** A timed response without the fields that only serve the probe itself. */
export function strip(r: TimedResponse): ResponseReport {
  const { socket: _s, headers: _h, firstBodyByteMs: _f, halfBodyMs: _hb, ...rest } = r;
  return rest;
}

/** GETs `path` (over HTTP/2 when the server speaks it) and says whether the body streamed. */
export async function timeLarge(
  origin: Origin,
  h2Via: 'h2' | 'h2c' | null,
  path: string,
  opts: ProbeOptions,
): Promise<LargeReport> {
  let r: TimedResponse;
  if (h2Via) {
    const session = await openH2Session(origin, opts.timeoutMs);
    try {
      r = await fetchH2(session, h2Via, path, opts.timeoutMs, opts.maxBodyBytes);
    } finally {
      session.destroy();
    }
  } else {
    const agent = new (origin.scheme === 'https' ? https.Agent : http.Agent)({ keepAlive: false });
    try {
      r = await fetchH1(origin, path, agent, opts.timeoutMs, opts.maxBodyBytes);
    } finally {
      agent.destroy();
    }
  }
  const base = strip(r);
  let verdict: LargeReport['verdict'];
  let detail: string;
  const pct = (ms: number) => `${Math.round((100 * ms) / r.totalMs)}%`;
  if (r.totalMs < opts.largeMinDurationMs) {
    verdict = 'too-fast-to-tell';
    detail = `${r.bodyBytes} bytes in ${r.totalMs.toFixed(1)} ms: too fast to tell streaming from buffering (under ${opts.largeMinDurationMs} ms)`;
  } else if (r.firstBodyByteMs >= 0.5 * r.totalMs) {
    // The client waited longer for the first body byte than the whole body then took to arrive: the
    // bytes were held somewhere (a proxy spooling the response, or a backend that renders it whole)
    // before any was sent. A streamed body starts early and arrives over the rest of the time.
    verdict = 'late';
    detail = `the first body byte came ${r.firstBodyByteMs.toFixed(0)} ms after the request (${pct(r.firstBodyByteMs)} of ${r.totalMs.toFixed(0)} ms): the body arrived late, as if buffered or spooled`;
  } else {
    verdict = 'streamed';
    detail = `the first body byte came ${r.firstBodyByteMs.toFixed(0)} ms after the request and half the body by ${r.halfBodyMs.toFixed(0)} ms (${pct(r.halfBodyMs)} of ${r.totalMs.toFixed(0)} ms): it streams`;
  }
  return { ...base, firstBodyByteMs: r.firstBodyByteMs, halfBodyMs: r.halfBodyMs, verdict, detail };
}

/** Holds an idle HTTP/1.1 and an idle HTTP/2 connection open until the server closes them. */
export async function watchIdleConnections(
  origin: Origin,
  h2Via: 'h2' | 'h2c' | null,
  h1: boolean,
  path: string,
  opts: ProbeOptions,
  problem: (step: string, err: unknown) => Failure,
): Promise<IdleReport[]> {
  const open = async (alpn: string): Promise<Duplex> =>
    origin.scheme === 'https'
      ? (
          await connectTls(
            origin.ep,
            origin.material,
            { alpn: [alpn], presentClientCert: true },
            opts.timeoutMs,
          )
        ).socket
      : await connectTcp(origin.ep, opts.timeoutMs);
  /** Opens a connection, makes it idle with `start`, then waits for the server to close it. */
  const watch = async (
    label: IdleReport['protocol'],
    alpn: string,
    start: (s: Duplex, inbox: Inbox) => Promise<(chunk: Buffer) => boolean>,
  ): Promise<IdleReport | undefined> => {
    let s: Duplex | undefined;
    try {
      s = await open(alpn);
      const inbox = new Inbox(s);
      const isGoaway = await start(s, inbox);
      return await watchIdle(label, inbox, opts.waitIdleMs, isGoaway);
    } catch (err) {
      problem(`idle ${label} connection`, err);
      return undefined;
    } finally {
      s?.destroy();
    }
  };
  const watchers: Array<Promise<IdleReport | undefined>> = [];
  if (h1) {
    watchers.push(
      watch('http/1.1', 'http/1.1', async (s, inbox) => {
        // HEAD: a response without a body, so the connection is idle as soon as the head is read.
        s.write(`HEAD ${path} HTTP/1.1\r\nHost: ${origin.authority}\r\nUser-Agent: h2lab-probe\r\n\r\n`);
        await readResponseHead(inbox, performance.now() + opts.timeoutMs);
        return () => false;
      }),
    );
  }
  if (h2Via) {
    watchers.push(
      watch(h2Via, 'h2', async (s, inbox) => {
        const reader = new FrameReader();
        const deadline = performance.now() + opts.timeoutMs;
        await exchangePreface(s, inbox, deadline, { reader, leaveOpen: true });
        // One request first, as a client's connection has had: servers time out a connection that
        // never carried a request by another timer (Apache: Timeout, 60 s) than an idle one after
        // a response (KeepAliveTimeout, 5 s), and the second is what clients meet.
        await headRequestH2(s, inbox, reader, path, origin, deadline);
        return (chunk) => reader.push(chunk).some((f) => f.type === FrameType.GOAWAY);
      }),
    );
  }
  return (await Promise.all(watchers)).filter((r): r is IdleReport => r !== undefined);
}

/**
 * HEAD `path` on stream 1 of a connection past its preface, read until the response ends (END_STREAM
 * or RST_STREAM on stream 1); PINGs are answered. A GOAWAY or a close meanwhile ends it too: the idle
 * watch that follows reports that.
 */
async function headRequestH2(
  s: Duplex,
  inbox: Inbox,
  reader: FrameReader,
  path: string,
  origin: Origin,
  deadlineMs: number,
): Promise<void> {
  const block = encodeHeaderBlock([
    [':method', 'HEAD'],
    [':scheme', origin.scheme],
    [':authority', origin.authority],
    [':path', path],
    ['user-agent', 'h2lab-probe'],
  ]);
  // END_STREAM | END_HEADERS.
  s.write(encodeFrame(FrameType.HEADERS, 0x5, 1, block));
  for (;;) {
    const chunk = await inbox.next(deadlineMs, 'waiting for the response to HEAD');
    if (chunk === null) return;
    for (const f of reader.push(chunk)) {
      if (f.type === FrameType.PING && !(f.flags & 0x1))
        s.write(encodeFrame(FrameType.PING, 0x1, 0, f.payload));
      if (f.type === FrameType.GOAWAY) return;
      if (f.streamId !== 1) continue;
      if (f.type === FrameType.RST_STREAM) return;
      if ((f.type === FrameType.HEADERS || f.type === FrameType.DATA) && f.flags & 0x1) return;
    }
  }
}
