// Before a process is signalled: is it a live Node.js process of ours that
// will open its inspector on SIGUSR1 (and not die of it)? A process is taken
// for Node by its executable, never by its name: `node_exporter` is not Node.
import * as fs from 'fs';
import * as os from 'os';

/** The target cannot be attached to (the message says why). */
export class AttachError extends Error {}

/** Symbols only a Node.js binary (or libnode) defines for native addons. */
const NODE_SYMBOLS = ['\0node_module_register\0', '\0napi_module_register\0'];

/** Check that pid is a live Node.js process of ours. */
export function checkNodeProcess(pid: number): void {
  if (!Number.isInteger(pid) || pid <= 0) throw new AttachError(`"${pid}" is not a process id`);
  if (pid === process.pid) throw new AttachError('paranode cannot attach to itself');
  try {
    process.kill(pid, 0);
  } catch (e: any) {
    if (e.code === 'ESRCH') throw new AttachError(`no process with pid ${pid}`);
    if (e.code === 'EPERM') throw new AttachError(`not allowed to attach to pid ${pid} (it belongs to another user)`);
    throw e;
  }
  if (os.platform() !== 'linux') return;
  const name = readOr(`/proc/${pid}/comm`, '').trim() || `pid ${pid}`;
  if (!isNodeExecutable(pid)) throw new AttachError(`process ${pid} (${name}) is not a Node.js process: its executable defines no Node.js symbols`);
}

/** Check that SIGUSR1 will open pid's inspector, not kill it. */
export function checkSignalable(pid: number): void {
  if (os.platform() !== 'linux') return;
  const name = readOr(`/proc/${pid}/comm`, '').trim() || `pid ${pid}`;
  // a Node started with --disable-sigusr1 (or a program that reset the handler) would be killed by the signal
  const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readOr(`/proc/${pid}/status`, ''));
  if (caught && (BigInt('0x' + caught[1]) & (1n << BigInt(os.constants.signals.SIGUSR1 - 1))) === 0n) {
    throw new AttachError(`process ${pid} (${name}) does not handle SIGUSR1 (started with --disable-sigusr1?): signalling it would kill it. ` +
      'Start it with --import paranode/agent to attach without a signal');
  }
}

function readOr(file: string, fallback: string): string {
  try { return fs.readFileSync(file, 'utf8'); } catch { return fallback; }
}

/** The process's executable defines Node's addon symbols, or it has libnode mapped. */
function isNodeExecutable(pid: number): boolean {
  if (/\/libnode\.so[^\n]*$/m.test(readOr(`/proc/${pid}/maps`, ''))) return true;
  let fd: number;
  try { fd = fs.openSync(`/proc/${pid}/exe`, 'r'); } catch { return false; }
  try {
    const dynstr = elfSection(fd, '.dynstr');
    if (!dynstr) return false;
    const text = dynstr.toString('latin1');
    return NODE_SYMBOLS.some((s) => text.includes(s));
  } finally {
    fs.closeSync(fd);
  }
}

/** The bytes of a named section of a 64-bit little-endian ELF file (null if not such a file). */
function elfSection(fd: number, wanted: string): Buffer | null {
  const read = (pos: number, len: number): Buffer => {
    const b = Buffer.alloc(len);
    const n = fs.readSync(fd, b, 0, len, pos);
    if (n !== len) throw new Error('short read');
    return b;
  };
  try {
    const h = read(0, 64);
    if (h.readUInt32BE(0) !== 0x7f454c46 || h[4] !== 2 || h[5] !== 1) return null;
    const shoff = Number(h.readBigUInt64LE(0x28));
    const shentsize = h.readUInt16LE(0x3a);
    const shnum = h.readUInt16LE(0x3c);
    const shstrndx = h.readUInt16LE(0x3e);
    if (!shoff || shentsize < 64 || shnum > 4096 || shstrndx >= shnum) return null;
    const table = read(shoff, shentsize * shnum);
    const section = (i: number) => ({
      name: table.readUInt32LE(i * shentsize),
      offset: Number(table.readBigUInt64LE(i * shentsize + 0x18)),
      size: Number(table.readBigUInt64LE(i * shentsize + 0x20)),
    });
    const names = section(shstrndx);
    if (names.size > 1 << 20) return null;
    const strtab = read(names.offset, names.size);
    for (let i = 0; i < shnum; i++) {
      const s = section(i);
      const end = strtab.indexOf(0, s.name);
      if (strtab.toString('latin1', s.name, end) !== wanted) continue;
      return s.size > 64 << 20 ? null : read(s.offset, s.size);
    }
    return null;
  } catch {
    return null;
  }
}

/**
 * Is process `pid` still running? A process that has ended but whose parent has
 * not reaped it yet (a zombie) still answers signal 0: on Linux its state in
 * /proc/<pid>/stat tells (Z or X: it has ended).
 */
export function processAlive(pid: number): boolean {
  try { process.kill(pid, 0); } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
  if (os.platform() !== 'linux') return true;
  let stat: string;
  try { stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return false; }
  // "<pid> (<comm>) <state> ...": comm may hold spaces and parentheses, the state follows the last ')'
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}
