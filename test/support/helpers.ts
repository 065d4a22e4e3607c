// Helpers for tests that drive real target processes.
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as path from 'path';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const FIXTURES = path.join(ROOT, 'test', 'fixtures');
export const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

/** A target process that speaks line by line on stdin/stdout. */
export class Target {
  readonly child: ChildProcess;
  out = '';
  err = '';
  private waiters: { re: RegExp; from: number; resolve: (m: RegExpMatchArray) => void }[] = [];
  private readonly exited: Promise<number | null>;

  constructor(script: string, args: string[] = []) {
    this.child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'], cwd: FIXTURES });
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => { this.out += d; this.check(); });
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => { this.err += d; });
    this.exited = new Promise((r) => this.child.once('exit', (c) => r(c)));
  }

  get pid(): number { return this.child.pid!; }

  send(line: string): void { this.child.stdin!.write(line + '\n'); }

  /** Resolves when stdout (after the current position) matches. */
  waitFor(re: RegExp): Promise<RegExpMatchArray> {
    return new Promise((resolve) => { this.waiters.push({ re, from: this.out.length, resolve }); this.check(); });
  }

  async request(line: string, re: RegExp): Promise<RegExpMatchArray> {
    const p = this.waitFor(re);
    this.send(line);
    return p;
  }

  private check(): void {
    this.waiters = this.waiters.filter((w) => {
      // look only at the tail that can hold a new match (outputs can be megabytes)
      const m = this.out.slice(Math.max(w.from, this.out.length - (1 << 16))).match(w.re);
      if (m) w.resolve(m);
      return !m;
    });
  }

  waitExit(): Promise<number | null> { return this.exited; }

  kill(): void { this.child.kill(); }
}

export function runNode(args: string[], cwd = FIXTURES): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

/** Output of a program launched by Session.launch(..., { stdio: 'pipe' }), awaitable by pattern. */
export function programOutput(child: ChildProcess): { until: (re: RegExp) => Promise<void>; send: (line: string) => void } {
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  return {
    until: async (re) => { while (!re.test(out)) await new Promise((r) => child.stdout!.once('data', r)); },
    send: (line) => { child.stdin!.write(line + '\n'); },
  };
}
