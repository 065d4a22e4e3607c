// The corpus of real npm programs (test/corpus/*): what each one is, how to
// run it plain and under `paranode run`. Used by test/corpus.test.ts and
// bench/startup.ts.
import { spawn } from 'child_process';
import * as path from 'path';
import { CLI, ROOT } from './helpers';

export const CORPUS_DIR = path.join(ROOT, 'test', 'corpus');

export interface CorpusProgram {
  /** driver file in test/corpus */
  driver: string;
  /** the shape of code it covers */
  shape: string;
  /** exit code of a plain run */
  status: number;
  /** glob of the package's own code (module names are relative to the working directory, ROOT) */
  lib: string;
  /**
   * Programs that leave generator activations suspended (entered, never
   * exited: a generator slot counts no exit when it is closed by return() or
   * dropped). The functions named here are counted apart, and the test checks
   * that they are exactly the difference between entries and exits.
   * Undefined: every call finishes, entries == exits.
   */
  unbalanced?: { why: string; generators: string[] };
}

export const CORPUS: CorpusProgram[] = [
  { driver: 'lodash-min.js', shape: 'minified bundle (lodash.min.js: comma returns, one-line functions)', status: 0, lib: '/Code/node_modules/lodash/**' },
  { driver: 'dayjs-dates.js', shape: 'minified date library, minified UMD plugins and locales', status: 0, lib: '/Code/node_modules/dayjs/**' },
  { driver: 'prettier-format.js', shape: 'formatter (CommonJS entry importing ES-module core and minified ES-module plugins)', status: 0, lib: '/Code/node_modules/prettier/**' },
  { driver: 'sucrase-transpile.js', shape: 'transpiler (TypeScript/JSX/ESM to CommonJS)', status: 0, lib: '/Code/node_modules/sucrase/**' },
  { driver: 'eslint-lint.js', shape: "linter (ESLint's Linter class, recommended and style rules, autofix)", status: 1, lib: '/Code/node_modules/eslint/**' },
  { driver: 'tsc-check.js', shape: 'type checker (TypeScript createProgram over a 3-file project with errors; 9 MB script)', status: 2, lib: '/Code/node_modules/typescript/**',
    unbalanced: {
      why: 'the checker takes only the first item of some generators and leaves them suspended: getUnmatchedProperty() is firstOrUndefinedIterator(getUnmatchedProperties(...))',
      generators: ['arrayReverseIterator', 'flatMapIterator', 'generateJsxAttributes', 'generateJsxChildren', 'generateLimitedTupleElements', 'generateObjectLiteralElements',
        'getElementIterator', 'getUnmatchedProperties', 'mapDefinedIterator', 'mapIterator', 'singleIterator'].map((g) => `/Code/node_modules/typescript/lib/typescript.js/${g}`),
    } },
  { driver: 'micromark-esm.mjs', shape: 'ES-module-only package imported from an .mjs driver', status: 0, lib: '/Code/node_modules/micromark*/**' },
  { driver: 'lru-classes.js', shape: 'classes: private fields and methods, static blocks, accessors (minified lru-cache and own code)', status: 0, lib: '/Code/node_modules/lru-cache/**' },
  { driver: 'csv-stream.js', shape: 'async and streams: pipeline, Transform, for await, async generators', status: 0, lib: '/Code/node_modules/csv-*/**' },
  { driver: 'yaml-errors.js', shape: 'Error.stack of errors thrown in library code; an uncaught one at the end', status: 1, lib: '/Code/node_modules/js-yaml/**' },
  { driver: 'awilix-tostring.js', shape: 'Function.prototype.toString (awilix CLASSIC injection parses sources; printed sources)', status: 0, lib: '/Code/node_modules/awilix/**' },
  { driver: 'sass-compile.js', shape: 'dart2js output (sass.dart.js, 5.8 MB), logger callbacks to stderr', status: 0, lib: '/Code/node_modules/sass/**' },
  { driver: 'handlebars-render.js', shape: 'template engine generating code with new Function, helpers and partials', status: 0, lib: '/Code/node_modules/handlebars/**' },
];

export interface Run { stdout: string; stderr: string; status: number | null; signal: string | null; ms: number; pid: number }

/** Run a command to its end, collecting everything it prints. */
export function run(cmd: string, args: string[], opts: { cwd?: string; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: opts.timeoutMs ?? 240_000, env: opts.env ? { ...process.env, ...opts.env } : process.env,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({
      stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'),
      status, signal, ms: Number(process.hrtime.bigint() - t0) / 1e6, pid: child.pid!,
    }));
  });
}

export const driverPath = (p: CorpusProgram) => path.join(CORPUS_DIR, p.driver);

/** The program alone, on the Node that runs this (process.execPath), from ROOT. */
export function runPlain(p: CorpusProgram, node = process.execPath): Promise<Run> {
  return run(node, [driverPath(p)]);
}

/** The program launched by `paranode run -q [options] -- <node> <driver>`, the tool on the same Node. */
export function runUnder(p: CorpusProgram, options: string[] = [], node = process.execPath): Promise<Run> {
  return run(node, [CLI, 'run', '-q', ...options, '--', node, driverPath(p)]);
}

/** Where two texts first differ, with a few lines around it. */
export function firstDifference(actual: string, expected: string): string {
  if (actual === expected) return '';
  const a = actual.split('\n');
  const e = expected.split('\n');
  let i = 0;
  while (i < a.length && i < e.length && a[i] === e[i]) i++;
  const clip = (s: string | undefined) => (s === undefined ? '<none>' : JSON.stringify(s.length > 300 ? s.slice(0, 300) + '…' : s));
  const lines = [`${expected.length} chars expected, ${actual.length} got; first difference at line ${i + 1}:`];
  for (let j = Math.max(0, i - 1); j <= i + 2 && (j < a.length || j < e.length); j++) {
    if (a[j] === e[j]) lines.push(`    ${clip(e[j])}`);
    else lines.push(`  - ${clip(e[j])}`, `  + ${clip(a[j])}`);
  }
  return lines.join('\n');
}
