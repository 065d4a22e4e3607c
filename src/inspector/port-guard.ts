// A guard for the attach handshake: SIGUSR1 opens the target's inspector port,
// and if the tool dies before it has closed it again (SIGKILL, Ctrl-C at that
// moment), nothing in the target would. The guard is a small detached process
// that holds the read end of a pipe from the tool: when the pipe ends without
// "done" (the kernel closes it whatever killed the tool), it closes the port of
// that pid, if and when it opens, and exits.
import { ChildProcess, spawn } from 'child_process';
import * as path from 'path';

export class PortGuard {
  private constructor(private readonly child: ChildProcess) {}

  /** Started before the signal is sent (it needs no time to be ready: the pipe's end waits for it). */
  static start(pid: number, port: number): PortGuard {
    const child = spawn(process.execPath, [path.join(__dirname, 'port-guard-process.js'), String(pid), String(port)], {
      detached: true, stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.on('error', () => { /* no guard: the attach goes on as before */ });
    child.stdin!.on('error', () => undefined);
    child.unref();
    (child.stdin as any).unref?.();
    return new PortGuard(child);
  }

  /** The port is closed (or was never ours): the guard may go. */
  done(): void {
    this.child.stdin!.end('done\n');
  }
}
