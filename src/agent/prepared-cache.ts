// Start-up cache of prepared code, as Node's compile cache does for bytecode:
// the preparation of a script (its prepared text, the analysis the runtime
// needs, the unslotted points, the layout) is stored under a hash of everything
// it depends on, so a program started again skips parsing and rewriting.
//
// Key: the source text, paranode's version and a hash of the preparing code
// itself (so a rebuilt paranode never takes an old entry), the Node version, the kind (script or
// ES module), the file name, URL and working directory (module names), and the
// number of digits of the script's number. The text names the script number in
// its slot globals ($pn<no>_<fn>) and an ES module's preamble; it is stored with
// the number it was first prepared with and renumbered on use to one of the same
// width (a program loading its modules in the same order needs none), so the
// layout (offsets in the prepared text) stays exact.
//
// Directory: cache-dir.ts (owner-only, checked before use; PARANODE_CACHE=off
// turns it off). Entries are written to a temporary file and renamed into place
// (atomic: a concurrent reader sees a whole entry or none); an entry that does
// not check out (length, checksum, JSON) is ignored and replaced. An entry's analysis is
// decoded when first read (see prepared-codec.ts).
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { PreparedScript } from '../instrument/transform';
import { openCacheDir } from './cache-dir';
import { decodeRest, encodeRest } from './prepared-codec';

const FORMAT = 'pnc4';

/** A hash of the code that prepares (dist/src/instrument and analysis), of acorn and of the Node version: an entry is only valid for the build and the Node that made it. */
function buildId(): string {
  const h = crypto.createHash('sha256');
  h.update(FORMAT);
  const src = path.resolve(__dirname, '..');
  for (const d of ['instrument', 'analysis']) {
    const dir = path.join(src, d);
    for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.js')).sort()) h.update(f).update(fs.readFileSync(path.join(dir, f)));
  }
  try { h.update(JSON.parse(fs.readFileSync(require.resolve('acorn/package.json'), 'utf8')).version); } catch { /* not found: the hash above still moves */ }
  // what is parsed depends on the V8 that runs it (the import phases it compiles)
  h.update(process.version);
  return h.digest('hex');
}

const digest = (algo: string, data: crypto.BinaryLike): string => crypto.createHash(algo).update(data).digest('hex');
/** An entry's checksum: it finds a damaged entry, not a forged one (the directory is the owner's alone). CRC-32 reads the TypeScript compiler's 35 MB entry in 13 ms, SHA-1 in 22. */
function checksum(data: Uint8Array): string {
  const zlib = require('zlib') as typeof import('zlib');
  return typeof zlib.crc32 === 'function' ? zlib.crc32(data).toString(16) : digest('sha1', data);
}

export interface PrepareRequest {
  kind: 'script' | 'module';
  source: string;
  no: number;
  filename: string;
  cwd: string;
  url?: string;
}

export class PreparedCache {
  private readonly id: string;
  /** entries found, prepared and stored, skipped (placeholder in the source), unusable (corrupt) */
  readonly stats = { hits: 0, misses: 0, bypassed: 0, corrupt: 0 };

  private constructor(readonly dir: string) { this.id = buildId(); }

  /** The cache for this process's environment, or null (turned off, or its directory cannot be made owner-only). */
  static open(env: NodeJS.ProcessEnv = process.env): PreparedCache | null {
    const dir = openCacheDir(env);
    return dir ? new PreparedCache(dir) : null;
  }

  /** `prepare(no)` done once per key; the entry is renumbered to `req.no`. */
  prepared(req: PrepareRequest, prepare: (no: number) => PreparedScript): PreparedScript {
    const width = String(req.no).length;
    // the source already holds text that renumbering would replace: not cacheable
    if ((req.source.includes('$pn') || req.source.includes('registerModule(')) && /\$pn\d+_|registerModule\(\d+,/.test(req.source)) { this.stats.bypassed++; return prepare(req.no); }
    const key = digest('sha256', JSON.stringify([this.id, req.kind, width, req.filename, req.cwd, req.url ?? '']) + '\0' + req.source);
    const file = path.join(this.dir, `${key}.pnc`);
    const hit = this.read(file, width);
    if (!hit) {
      this.stats.misses++;
      const fresh = prepare(req.no);
      this.write(file, fresh, req.no);
      return fresh;
    }
    this.stats.hits++;
    const { entry, no } = hit;
    if (no === req.no) return entry;
    const code = entry.code.split(`$pn${no}_`).join(`$pn${req.no}_`).split(`registerModule(${no},`).join(`registerModule(${req.no},`);
    return { ...entry, code };
  }

  private read(file: string, width: number): { entry: PreparedScript; no: number } | null {
    let buf: Buffer;
    try { buf = fs.readFileSync(file); } catch { return null; }
    try {
      const nl = buf.indexOf(10);
      const head = JSON.parse(buf.subarray(0, nl).toString('utf8')) as { format: string; no: number; code: number; meta: number; json: number; ints: number; sum: string };
      const body = buf.subarray(nl + 1);
      if (head.format !== FORMAT || String(head.no).length !== width || body.length !== head.code + head.meta + head.json + head.ints * 4 || checksum(body) !== head.sum) throw new Error('corrupt');
      let at = 0;
      const code = body.toString('utf8', at, at += head.code);
      const meta = body.toString('utf8', at, at += head.meta);
      // copies (Uint8Array's slice, not Buffer's): the file's buffer is let go
      const json = Uint8Array.prototype.slice.call(body, at, at += head.json);
      const ints = new Int32Array(head.ints);
      new Uint8Array(ints.buffer).set(body.subarray(at, at + head.ints * 4));
      return { entry: { code, ...decodeRest(meta, json, ints) }, no: head.no };
    } catch {
      this.stats.corrupt++;
      return null;
    }
  }

  /** Store an entry; a failure (a full disk, a vanished directory, anything) costs the cache, never the program. */
  private write(file: string, p: PreparedScript, no: number): void {
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`;
    try {
      const code = Buffer.from(p.code, 'utf8');
      const rest = encodeRest(p);
      const meta = Buffer.from(rest.head, 'utf8');
      const json = Buffer.from(rest.json, 'utf8');
      const ints = Buffer.from(rest.ints.buffer, rest.ints.byteOffset, rest.ints.byteLength);
      const body = Buffer.concat([code, meta, json, ints]);
      const head = Buffer.from(JSON.stringify({ format: FORMAT, no, code: code.length, meta: meta.length, json: json.length, ints: rest.ints.length, sum: checksum(body) }) + '\n');
      fs.writeFileSync(tmp, Buffer.concat([head, body]), { mode: 0o600, flag: 'wx' });
      fs.renameSync(tmp, file);
    } catch {
      try { fs.unlinkSync(tmp); } catch { /* not written */ }
    }
  }
}
