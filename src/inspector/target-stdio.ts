// The stdout and stderr a launched program gets, as the tool was given them.
// Launched with the tool's own descriptors, a pipe's (or socket's) open file
// description is shared, and Node makes it non-blocking the first time the
// tool uses process.stdout. The program's blocking writes then write short or
// fail with EAGAIN when its reader lags: 1 MB written with fs.writeSync(1, ...)
// arrived as 64 KB, and V8's --trace-* output (written by C code) lost its tail
// (inlining-budget.test failed so on Node 26). A plain start from the shell has
// neither. So a pipe is opened anew for the program (a description of its own,
// in the mode the tool was given); a socket, which cannot be opened anew, is
// set back to blocking, the tool's writes to it included.
import * as fs from 'fs';

const { O_NONBLOCK, O_RDWR, O_WRONLY } = fs.constants;

/** Whether `fd`'s description is non-blocking; undefined where /proc cannot say. */
function nonBlocking(fd: number): boolean | undefined {
  try {
    const flags = /^flags:\s*([0-7]+)/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    return flags ? (parseInt(flags[1], 8) & O_NONBLOCK) !== 0 : undefined;
  } catch {
    return undefined;
  }
}

/** fd 1 and 2 as given to this process: read at import, so imported before anything writes (cli/main.ts) */
const given = new Map<number, boolean | undefined>([1, 2].map((fd) => [fd, nonBlocking(fd)]));

/** A blocking description of its own for the pipe on `fd`. */
function reopenPipe(fd: number): number {
  const self = `/proc/self/fd/${fd}`;
  // opening a pipe write-only waits for a reader, for good if its reader has just
  // gone: a read-write guard is one, held only while the writer opens
  const guard = fs.openSync(self, O_RDWR);
  try {
    return fs.openSync(self, O_WRONLY);
  } finally {
    fs.closeSync(guard);
  }
}

function setBlocking(fd: number): void {
  const stream = fd === 1 ? process.stdout : process.stderr;
  (stream as unknown as { _handle?: { setBlocking?(b: boolean): number } })._handle?.setBlocking?.(true);
}

/**
 * The stdio for a program launched with the tool's: each of fd 1 and 2 that
 * was given blocking is passed blocking and stays so whatever the tool does.
 * `close()` after the spawn closes what was opened for it.
 */
export function targetStdio(): { stdio: ('inherit' | number)[]; close(): void } {
  const opened: number[] = [];
  const stdio: ('inherit' | number)[] = ['inherit', 'inherit', 'inherit'];
  for (const fd of [1, 2]) {
    if (given.get(fd) !== false) continue;
    let st: fs.Stats;
    try { st = fs.fstatSync(fd); } catch { continue; }
    if (st.isSocket()) setBlocking(fd);
    if (!st.isFIFO()) continue;
    try {
      const own = reopenPipe(fd);
      opened.push(own);
      stdio[fd] = own;
    } catch { /* /proc cannot open it: as given */ }
  }
  return { stdio, close: () => { for (const fd of opened) fs.closeSync(fd); } };
}
