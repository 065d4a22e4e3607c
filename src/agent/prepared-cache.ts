// Start-up cache of prepared code, as Node's compile cache does for bytecode:
// the preparation of a script (its prepared text, the analysis the runtime
// needs, the unslotted points, the layout) is stored under a hash of everything
// it depends on, so a program started again skips parsing and rewriting.
//
// Key: the source text, paranode's version and a hash of the preparing code
// itself (so a rebuilt paranode never takes an old entry), the Node version, the kind (script or
// ES module), the file name, URL and working directory (module names), and the
// number of digits of the script's number. The source is checked as Node's compile
// cache checks it, by its CRC-32 and its length (with zlib, which a warm start reads
// entries with anyway; SHA-256 took loading `crypto`, 2-6 ms, and 6.4 ms over
// typescript.js's 8.7 MB, where CRC-32 takes 1.9): the rest of the key is compared
// whole, from the entry's head. The text names the script number in
// its slot globals ($pn<no>_<fn>) and an ES module's preamble; it is stored with
// the number it was first prepared with and renumbered on use to one of the same
// width (a program loading its modules in the same order needs none), so the
// layout (offsets in the prepared text) stays exact.
//
// Directory: cache-dir.ts (owner-only, checked before use; PARANODE_CACHE=off
// turns it off). Entries are written to a temporary file and renamed into place
// (atomic: a concurrent reader sees a whole entry or none); an entry that does
// not check out (length, checksum, JSON) is ignored and replaced. Only the prepared
// text and a small head are read at load; the analysis and the layout (about half
// of an entry) are read from the file when first needed, checked by their own sum,
// and decoded (see prepared-codec.ts). If by then the entry is gone or damaged, the
// source, read again, is prepared again if it still hashes to the key; else the
// script keeps running with no function records and its own columns in stack traces.
import * as fs from 'fs';
import * as path from 'path';
import type { PreparedScript } from '../instrument/transform';
import { openCacheDir } from './cache-dir';
import { identityAtStart, preparingFiles } from './preparing-code';
import { decodeRest, encodeRest, type RestBytes } from './prepared-codec';
import { fileBytes, joined, utf8 } from './unpooled';

const FORMAT = 'pnc7';

// Each taken once: a require() per call would go through the program's own require hooks,
// three times for every module it loads
/** `crypto`, loaded only where a warm start does not need it (a new build's hash, an old Node without zlib's CRC-32). */
let cryptoModule: typeof import('crypto') | undefined;
const crypto = (): typeof import('crypto') => (cryptoModule ??= require('crypto') as typeof import('crypto'));

type Crc32 = (data: string | Uint8Array, value?: number) => number;
/** zlib's CRC-32 (Node 20.15, 22.2 and later), or null. */
let crcFn: Crc32 | null | undefined;
const crc32 = (): Crc32 | null => (crcFn ??= (require('zlib') as { crc32?: Crc32 }).crc32 ?? null);

/** A short name for a text (file names): its CRC-32 and length in hex, or where Node has no CRC-32, its SHA-256. */
function shortHash(text: string): string {
  const crc = crc32();
  return crc ? `${crc(text).toString(16).padStart(8, '0')}${text.length.toString(16)}` : crypto().createHash('sha256').update(text).digest('hex');
}

/** A temporary file's name beside `file`, unique to this process and call (opened with 'wx'). */
let temps = 0;
const tempName = (file: string): string => `${file}.${process.pid}.${(temps++).toString(36)}.${process.hrtime.bigint().toString(36)}.tmp`;

/**
 * A hash of the code that prepares, of acorn and of the Node version: an entry is only valid for
 * the build and the Node that made it. Hashing those files' contents at every start costs a few
 * ms, so the hash is kept in the cache directory under their identity (preparing-code.ts), compared
 * whole, and computed again when that moves.
 */
function buildId(dir: string): string {
  const identity = `${FORMAT} ${identityAtStart()}`;
  // one memo per identity: installs or Node versions sharing the directory do not take turns
  const memo = path.join(dir, `build-id-${shortHash(identity)}`);
  try {
    const [known, id] = fs.readFileSync(memo, 'utf8').split('\n');
    if (known === identity && /^[0-9a-f]{64}$/.test(id)) return id;
  } catch { /* none yet */ }
  const h = crypto().createHash('sha256');
  h.update(FORMAT);
  for (const f of preparingFiles()) {
    if (f.endsWith('package.json')) { try { h.update(JSON.parse(fs.readFileSync(f, 'utf8')).version); } catch { /* unreadable: the rest still moves */ } }
    else h.update(path.basename(f)).update(fileBytes(f));
  }
  // what is parsed depends on the V8 that runs it (the import phases it compiles)
  h.update(process.version);
  const id = h.digest('hex');
  const tmp = tempName(memo);
  try {
    fs.writeFileSync(tmp, `${identity}\n${id}\n`, { mode: 0o600, flag: 'wx' });
    fs.renameSync(tmp, memo);
  } catch {
    try { fs.unlinkSync(tmp); } catch { /* not written */ }
  }
  return id;
}

/** An entry's checksum: it finds a damaged entry, not a forged one (the directory is the owner's alone). CRC-32 reads the TypeScript compiler's 35 MB entry in 13 ms, SHA-1 in 22. */
function checksum(...parts: Uint8Array[]): string {
  const crc = crc32();
  if (crc) return parts.reduce((sum, p) => crc(p, sum), 0).toString(16);
  const h = crypto().createHash('sha1');
  for (const p of parts) h.update(p);
  return h.digest('hex');
}

/** Read `length` bytes at `position` of `fd` into `into` (a short read is read on). */
function readFully(fd: number, into: Uint8Array, position: number): void {
  for (let done = 0; done < into.length;) {
    const n = fs.readSync(fd, into, done, into.length - done, position + done);
    if (n <= 0) throw new Error('short entry');
    done += n;
  }
}

/** The script number an entry's text was prepared with, under its checksum (renumbering trusts it). */
const numbered = (no: number): Uint8Array => utf8(String(no));

/** An entry's first line. `code` and `meta` are read at load (`sum`, which covers `no` too), `json` and `ints` when first needed (`rest`). */
interface EntryHead { format: string; key: string; no: number; code: number; meta: number; json: number; ints: number; sum: string; rest: string }

/** What must match between an entry read at load and the file its rest is read from later (an entry renumbered by another process matches). */
const shapeOf = (h: EntryHead): string => JSON.stringify([h.key, h.code, h.meta, h.json, h.ints, h.rest]);

/** The first line of the entry open as `fd`, checked against the file's length; the offset of what follows it. */
function readHead(fd: number): { head: EntryHead; body: number } {
  const st = fs.fstatSync(fd);
  // the directory was found owner-only when opened; the file itself is checked at each read too
  if (typeof process.getuid === 'function' && (st.uid !== process.getuid() || (st.mode & 0o077) !== 0)) throw new Error('not the owner\'s alone');
  const size = st.size;
  // (the head names the file, the working directory and the URL: room for long paths)
  const first = Buffer.alloc(Math.min(65536, size));
  readFully(fd, first, 0);
  const nl = first.indexOf(10);
  if (nl < 0) throw new Error('no head');
  const head = JSON.parse(first.toString('utf8', 0, nl)) as EntryHead;
  if (head.format !== FORMAT || size !== nl + 1 + head.code + head.meta + head.json + head.ints * 4) throw new Error('corrupt');
  return { head, body: nl + 1 };
}

/** What the lazily read part of an entry is when neither the entry nor its source can give it: no functions, no layout. */
let lost: RestBytes | undefined;
const LOST = (): RestBytes => {
  if (!lost) {
    const r = encodeRest({ analysis: { sourceType: 'script', functions: [] }, unslotted: [], layout: { at: [], lines: {}, texts: [] } });
    lost = { json: new Uint8Array(0), ints: r.ints.slice(), calls: [] };
  }
  return lost;
};

export interface PrepareRequest {
  kind: 'script' | 'module';
  source: string;
  no: number;
  filename: string;
  cwd: string;
  url?: string;
  /**
   * The source read again, as the load hook had it (or null): if an entry's part read after load
   * (its functions, its layout) is gone or damaged by then, the source that still hashes to the
   * entry's key is prepared again for it.
   */
  reread?: () => string | null;
}

/** Prepares `source` as script number `no` (given the source, so that an entry's closures do not hold it). */
export type Prepare = (no: number, source: string) => PreparedScript;

export class PreparedCache {
  private readonly id: string;
  /**
   * entries found, prepared and stored, skipped (placeholder in the source), unusable (corrupt);
   * parts read after load that were gone or damaged: made again from the source, or lost
   */
  readonly stats = { hits: 0, misses: 0, bypassed: 0, corrupt: 0, recovered: 0, lost: 0 };

  private constructor(readonly dir: string) { this.id = buildId(dir); }

  /** The cache for this process's environment, or null (turned off, or its directory cannot be made owner-only). */
  static open(env: NodeJS.ProcessEnv = process.env): PreparedCache | null {
    const dir = openCacheDir(env);
    return dir ? new PreparedCache(dir) : null;
  }

  /** `prepare(no, source)` done once per key; the entry is renumbered to `req.no`. */
  prepared(req: PrepareRequest, prepare: Prepare): PreparedScript {
    const width = String(req.no).length;
    // the source already holds text that renumbering would replace: not cacheable
    if ((req.source.includes('$pn') || req.source.includes('registerModule(')) && /\$pn\d+_|registerModule\(\d+,/.test(req.source)) { this.stats.bypassed++; return prepare(req.no, req.source); }
    // the whole key, kept in the entry's head and compared there; the file is named by its hashes
    const keyOf = (source: string) => JSON.stringify([this.id, req.kind, width, req.filename, req.cwd, req.url ?? '', shortHash(source)]);
    const key = keyOf(req.source);
    const file = path.join(this.dir, `${shortHash(key)}.pnc`);
    // what the entry's lazily read part needs: not `req`, which holds the source
    const { no: wanted, reread } = req;
    const again = (): RestBytes | null => {
      try {
        const source = reread?.();
        if (source == null || keyOf(source) !== key) return null;
        const fresh = prepare(wanted, source);
        // the damaged or missing entry replaced, so that later starts and attaches find it whole
        this.write(file, key, fresh, wanted);
        const r = encodeRest(fresh);
        // (a copy: the encoder's buffer is 256 KB at least)
        return { json: utf8(r.json), ints: r.ints.slice(), calls: (JSON.parse(r.head) as { calls: number[] }).calls };
      } catch {
        return null;
      }
    };
    const hit = this.read(file, key, width, again);
    if (!hit) {
      this.stats.misses++;
      const fresh = prepare(req.no, req.source);
      this.write(file, key, fresh, req.no);
      return fresh;
    }
    this.stats.hits++;
    const { entry, no } = hit;
    if (no === req.no) return entry;
    const code = entry.code.split(`$pn${no}_`).join(`$pn${req.no}_`).split(`registerModule(${no},`).join(`registerModule(${req.no},`);
    return { ...entry, code };
  }

  /**
   * An entry's prepared text and head, checked; the rest (functions, layout) read from the same
   * file when first needed, checked by its own sum, else made `again` from the source, else lost.
   */
  private read(file: string, key: string, width: number, again: () => RestBytes | null): { entry: PreparedScript; no: number } | null {
    let fd: number;
    try { fd = fs.openSync(file, 'r'); } catch { return null; }
    try {
      const { head, body } = readHead(fd);
      // another key whose hashes name the same file: not this source's entry (nor damaged)
      if (head.key !== key) return null;
      if (String(head.no).length !== width) throw new Error('corrupt');
      const loaded = Buffer.allocUnsafeSlow(head.code + head.meta);
      readFully(fd, loaded, body);
      if (checksum(loaded, numbered(head.no)) !== head.sum) throw new Error('corrupt');
      const code = loaded.toString('utf8', 0, head.code);
      const meta = loaded.toString('utf8', head.code);
      const load = (): RestBytes => {
        const r = this.readRest(file, shapeOf(head)) ?? again();
        if (r) {
          if (r.calls) this.stats.recovered++;
          return r;
        }
        this.stats.lost++;
        return LOST();
      };
      return { entry: { code, ...decodeRest(meta, load) }, no: head.no };
    } catch {
      this.stats.corrupt++;
      return null;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** The part of an entry read after load, if the file still holds an entry of `shape` whose part checks out. */
  private readRest(file: string, shape: string): RestBytes | null {
    let fd: number;
    try { fd = fs.openSync(file, 'r'); } catch { return null; }
    try {
      const { head, body } = readHead(fd);
      if (shapeOf(head) !== shape) return null;
      // read into their own buffers: nothing else of the file is kept
      const json = new Uint8Array(head.json);
      const ints = new Int32Array(head.ints);
      const intBytes = new Uint8Array(ints.buffer);
      readFully(fd, json, body + head.code + head.meta);
      readFully(fd, intBytes, body + head.code + head.meta + head.json);
      return checksum(json, intBytes) === head.rest ? { json, ints } : null;
    } catch {
      return null;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Store an entry; a failure (a full disk, a vanished directory, anything) costs the cache, never the program. */
  private write(file: string, key: string, p: PreparedScript, no: number): void {
    const tmp = tempName(file);
    try {
      const code = utf8(p.code);
      const rest = encodeRest(p);
      const meta = utf8(rest.head);
      const json = utf8(rest.json);
      const ints = Buffer.from(rest.ints.buffer, rest.ints.byteOffset, rest.ints.byteLength);
      const head = utf8(JSON.stringify({ format: FORMAT, key, no, code: code.length, meta: meta.length, json: json.length, ints: rest.ints.length, sum: checksum(code, meta, numbered(no)), rest: checksum(json, ints) } satisfies EntryHead) + '\n');
      fs.writeFileSync(tmp, joined([head, code, meta, json, ints]), { mode: 0o600, flag: 'wx' });
      fs.renameSync(tmp, file);
    } catch {
      try { fs.unlinkSync(tmp); } catch { /* not written */ }
    }
  }
}
