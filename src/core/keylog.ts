/**
 * The NSS key log (the `SSLKEYLOGFILE` format: one `LABEL <client random> <secret>` line per
 * secret) of every TLS connection h2lab makes or accepts, on request: Wireshark and tshark decrypt a
 * capture of those connections with it (`-o tls.keylog_file:FILE`). Node hands each line to the
 * socket's (client) or the server's `keylog` event.
 *
 * Lines are appended with one `write()` each on a descriptor opened once per file and thread
 * (O_APPEND: lines from several threads or processes never interleave). A handshake produces five
 * lines under TLS 1.3; the writes cost microseconds, made between a handshake's flights.
 */
import { openSync, writeSync } from 'node:fs';

const open = new Map<string, number>();

/**
 * Appends one key-log line (as node's `keylog` event gives it, newline included) to `path`. Never
 * throws: a key log that cannot be written costs the user the decryption, not the run.
 */
export function appendKeyLog(path: string, line: Buffer): void {
  try {
    let fd = open.get(path);
    if (fd === undefined) {
      fd = openSync(path, 'a', 0o600);
      open.set(path, fd);
    }
    writeSync(fd, line);
  } catch {}
}

/** What a key log unlocks, for results and reports. */
export const KEY_LOG_UNLOCKS =
  "the TLS secrets of every connection h2lab made or accepted: with them Wireshark or tshark (-o tls.keylog_file:FILE) decrypts the run's capture to HTTP/1.1 and HTTP/2; anyone holding the file can read that traffic";
