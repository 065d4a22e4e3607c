// Bytes and file reads that never take memory from Buffer's shared pool. The
// agent's code can run inside the program's own Buffer.from(string): a tool
// request arrives by inspector interrupt at any function entry, and Node's
// fromStringFast reads the pool's offset again after writing the string, so an
// allocation from the pool made in between hands the program a buffer of the
// right length over other bytes (a CSV the program had just written came back
// unparseable, corpus csv-stream.js; a start-up cache entry held its text 200
// bytes late under a valid checksum). The agent's own buffers come from
// allocUnsafeSlow, which has no pool, and its small reads from one buffer of
// its own; the fs functions are taken before the runtime may wrap them.
import * as fs from 'fs';

const { openSync, readSync, closeSync, fstatSync } = fs;

/** `s` as UTF-8 in memory of its own. */
export function utf8(s: string): Buffer {
  const b = Buffer.allocUnsafeSlow(Buffer.byteLength(s, 'utf8'));
  b.write(s, 0, 'utf8');
  return b;
}

/** The parts one after the other, in memory of its own. */
export function joined(parts: Uint8Array[]): Buffer {
  const out = Buffer.allocUnsafeSlow(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.byteLength; }
  return out;
}

/** A whole file's bytes, in memory of their own. */
export function fileBytes(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const out = Buffer.allocUnsafeSlow(fstatSync(fd).size);
    for (let done = 0; done < out.length;) {
      const n = readSync(fd, out, done, out.length - done, done);
      if (n <= 0) return out.subarray(0, done);
      done += n;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/** where small /proc files are read (one per thread: each thread has this module of its own) */
const small = Buffer.allocUnsafeSlow(4096);

/** A small file of /proc (its size reads 0) as Latin-1 text: up to 4 KB. */
export function procText(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const n = readSync(fd, small, 0, small.length, 0);
    return small.toString('latin1', 0, n);
  } finally {
    closeSync(fd);
  }
}
