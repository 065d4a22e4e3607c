// Every script of the project's own node_modules, prepared as paranode's load
// hooks prepare it, must still compile: a CommonJS file (.cjs, or .js outside
// a "type": "module" package) as Node compiles it (a function body, through
// vm.compileFunction) after prepareForLoad, as the CommonJS hook does; an ES
// module (.mjs, .js in a "type": "module" package, or a .js file that only
// compiles as a module, as Node's syntax detection loads it) as a module
// (vm.SourceTextModule) after prepareModuleForLoad, as the ESM hook does.
// Compile only, never run. Files V8 does not compile in either goal as
// written are not counted (they are never loaded by Node as they are).
//
// Left out: the node22/node24/node26 packages (whole Node binaries with an
// npm inside, not this project's code). Nothing is left out for size: with
// TypeScript's typescript.js (9 MB) and _tsc.js (6 MB) the scan took 9.9 s on
// Node 24 (2 cores).
//
// Two child processes (started with --experimental-vm-modules, which
// vm.SourceTextModule needs) share the files.
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as vm from 'node:vm';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as acorn from 'acorn';
import { prepareForLoad, prepareModuleForLoad } from '../src/instrument/transform';

const ROOT = path.resolve(__dirname, '..', '..');
const NODE_MODULES = path.join(ROOT, 'node_modules');
const SKIP_PACKAGES = new Set(['node22', 'node24', 'node26']);
const CJS_PARAMS = ['exports', 'require', 'module', '__filename', '__dirname'];
const CHILD_FLAG = '--paranode-scan-child';

type Goal = 'commonjs' | 'module';

interface FileJob { file: string; goal: Goal; bytes: number }

interface FileResult {
  file: string;
  goal?: Goal;
  /** V8 does not compile the original in either goal */
  invalid?: string;
  /** paranode's parser rejects a file V8 compiles (the hook leaves it unprepared) */
  rejected?: string;
  /** the prepared text does not compile: V8's error and the text around it */
  broken?: { error: string; site?: string };
  ms: number;
}

/** The goal Node gives a file by its name and the nearest package.json. */
function goalOf(file: string, typeCache: Map<string, Goal>): Goal {
  if (file.endsWith('.mjs')) return 'module';
  if (file.endsWith('.cjs')) return 'commonjs';
  const lookup = (dir: string): Goal => {
    const known = typeCache.get(dir);
    if (known) return known;
    let goal: Goal = 'commonjs';
    const pj = path.join(dir, 'package.json');
    let found = false;
    if (fs.existsSync(pj)) {
      try {
        const type = JSON.parse(fs.readFileSync(pj, 'utf8')).type;
        goal = type === 'module' ? 'module' : 'commonjs';
        found = true;
      } catch { /* unreadable: keep looking up */ }
    }
    if (!found) goal = dir === NODE_MODULES || path.dirname(dir) === dir ? 'commonjs' : lookup(path.dirname(dir));
    typeCache.set(dir, goal);
    return goal;
  };
  return lookup(path.dirname(file));
}

function listFiles(): FileJob[] {
  const jobs: FileJob[] = [];
  const typeCache = new Map<string, Goal>();
  const walk = (dir: string, top: boolean): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (top && SKIP_PACKAGES.has(e.name)) continue;
        walk(p, false);
      } else if (e.isFile() && /\.(c|m)?js$/.test(e.name)) {
        jobs.push({ file: p, goal: goalOf(p, typeCache), bytes: fs.statSync(p).size });
      }
    }
  };
  walk(NODE_MODULES, true);
  return jobs;
}

// ---- child side ------------------------------------------------------------

function compileError(code: string, goal: Goal, file: string): unknown {
  try {
    if (goal === 'module') new (vm as any).SourceTextModule(code, { identifier: pathToFileURL(file).href });
    else vm.compileFunction(code, CJS_PARAMS, { filename: file });
    return null;
  } catch (e) {
    return e ?? new Error('thrown undefined');
  }
}

const text = (e: unknown): string => {
  const err = e as { name?: string; message?: string };
  return `${err?.name ?? 'Error'}: ${err?.message ?? String(e)}`;
};

/**
 * The prepared text around a compile error: V8 puts "file:line\n<line>\n   ^"
 * on the stack of a script's compile error; a module's has no position, so
 * there acorn's, when acorn finds the error too.
 */
function siteOf(e: unknown, code: string, goal: Goal): string | undefined {
  const stack = String((e as { stack?: string })?.stack ?? '');
  let lineNo = 0;
  let at = 0;
  const m = /^.*:(\d+)\n.*\n(\s*)\^/.exec(stack);
  if (m) { lineNo = Number(m[1]); at = m[2].length; } else {
    try {
      acorn.parse(code, { ecmaVersion: 'latest', sourceType: goal === 'module' ? 'module' : 'script', allowReturnOutsideFunction: goal === 'commonjs', allowHashBang: true });
      return undefined;
    } catch (ae) {
      const loc = (ae as { loc?: { line: number; column: number } }).loc;
      if (!loc) return undefined;
      lineNo = loc.line;
      at = loc.column;
    }
  }
  const line = code.split(/\r\n|[\n\r\u2028\u2029]/)[lineNo - 1];
  if (line === undefined) return undefined;
  return `line ${lineNo}: ${line.slice(Math.max(0, at - 80), at)}⟪HERE⟫${line.slice(at, at + 60)}`;
}

function scanOne(job: FileJob): FileResult {
  const t0 = performance.now();
  const source = fs.readFileSync(job.file, 'utf8');
  const rel = path.relative(ROOT, job.file);
  const done = (r: Omit<FileResult, 'file' | 'ms'>): FileResult => ({ file: rel, ms: performance.now() - t0, ...r });
  let goal = job.goal;
  const first = compileError(source, goal, job.file);
  if (first) {
    // Node loads a .js file that only compiles as an ES module as one (syntax detection)
    if (goal === 'commonjs' && !job.file.endsWith('.cjs') && !compileError(source, 'module', job.file)) goal = 'module';
    else return done({ goal, invalid: text(first) });
  }
  let code: string;
  try {
    code = goal === 'module'
      ? prepareModuleForLoad(source, 1, pathToFileURL(job.file).href).code
      : prepareForLoad(source, 1, 'script').code;
  } catch (e) {
    return done({ goal, rejected: text(e) });
  }
  const err = compileError(code, goal, job.file);
  if (err) return done({ goal, broken: { error: text(err), site: siteOf(err, code, goal) } });
  return done({ goal });
}

if (process.argv.includes(CHILD_FLAG)) {
  process.on('message', (jobs: FileJob[]) => {
    const results = jobs.map(scanOne);
    process.send!(results, undefined, {}, () => process.exit(0));
  });
} else {
  test('every node_modules script V8 compiles still compiles once paranode has prepared it', { timeout: 600_000 }, async (t) => {
    const t0 = Date.now();
    const jobs = listFiles();
    assert.ok(jobs.length > 100, `expected the project's node_modules at ${NODE_MODULES} (npm ci), found ${jobs.length} scripts`);
    // two shares of about equal size, largest files first
    const shares: FileJob[][] = [[], []];
    const load = [0, 0];
    for (const j of [...jobs].sort((a, b) => b.bytes - a.bytes)) {
      const k = load[0] <= load[1] ? 0 : 1;
      shares[k].push(j);
      load[k] += j.bytes;
    }
    const results = (await Promise.all(shares.map((share) => new Promise<FileResult[]>((resolve, reject) => {
      const child = fork(__filename, [CHILD_FLAG], { execArgv: ['--experimental-vm-modules', '--no-warnings'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      let got: FileResult[] | null = null;
      child.on('message', (m: FileResult[]) => { got = m; });
      child.on('exit', (code, signal) => (got ? resolve(got) : reject(new Error(`scan child exited (${signal ?? `code ${code}`}) without results`))));
      child.send(share);
    })))).flat();

    const counted = results.filter((r) => !r.invalid);
    const rejected = results.filter((r) => r.rejected);
    const broken = results.filter((r) => r.broken);
    const byGoal = (g: Goal) => counted.filter((r) => r.goal === g).length;
    const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 3).map((r) => `${r.file} ${Math.round(r.ms)} ms`).join(', ');
    t.diagnostic(`scanned ${results.length} scripts in ${((Date.now() - t0) / 1000).toFixed(1)} s on Node ${process.version}: ` +
      `${counted.length} compile as written (${byGoal('commonjs')} CommonJS, ${byGoal('module')} ES modules), ` +
      `${results.length - counted.length} do not (not counted); slowest: ${slowest}`);

    const lines: string[] = [];
    if (broken.length) {
      // grouped by V8's message with names blanked, largest group first
      const groups = new Map<string, FileResult[]>();
      for (const r of broken) {
        const key = r.broken!.error.replace(/'[^']*'/g, "'…'");
        groups.set(key, [...(groups.get(key) ?? []), r]);
      }
      lines.push(`${broken.length} of ${counted.length} scripts no longer compile once prepared:`);
      for (const [key, rs] of [...groups].sort((a, b) => b[1].length - a[1].length)) {
        lines.push(`  ${key} — ${rs.length} file(s)`);
        for (const r of rs) lines.push(`    ${r.file} [${r.goal}]: ${r.broken!.error}${r.broken!.site ? `\n      at ${r.broken!.site}` : ''}`);
      }
    }
    if (rejected.length) {
      lines.push(`${rejected.length} scripts that V8 compiles are rejected by paranode's parser (left unprepared):`);
      for (const r of rejected) lines.push(`    ${r.file} [${r.goal}]: ${r.rejected}`);
    }
    if (lines.length) t.diagnostic(lines.join('\n'));
    assert.equal(broken.length + rejected.length, 0, lines.join('\n'));
  });
}
