// Micro benchmark: what a snippet's property read costs now that it runs no
// program code (agent/safe-read: descriptors, Proxy check), next to the plain
// read snippets compiled to before ((o)?.k). Handlers are built as the runtime
// builds them (buildHandler) and called in a loop over 64 argument objects of
// one shape; ns per handler call, median of 7 batches, minus nothing.
//   npm run build && node dist/bench/safe-read.js [--quick]
import { performance } from 'perf_hooks';
import { buildHandler } from '../src/agent/runtime';
import { compileSnippet } from '../src/instrument/snippet';
import { median, table } from './lib';

const quick = process.argv.includes('--quick');
const N = quick ? 2_000_000 : 10_000_000;
const BATCHES = quick ? 3 : 7;

const env = {
  C: new Float64Array(8), U: new Uint32Array(8), F: new Float64Array(8), L: new Uint32Array(8), T: new Float64Array(32),
  now: () => 0, cpu: () => 0, cell: () => -1, start: () => undefined, stop: () => undefined, queue: () => undefined,
};

/** a snippet as the runtime installs it (counter n, cell 0) */
const safe = (snippet: string) => buildHandler(`try{${compileSnippet(snippet, { point: 'entry' }).body.replace(/__c_\w+/g, '0')}}catch(e){}`, env);
/** the same read as snippets compiled it before: a plain property access */
const plain = (body: string) => buildHandler(`try{${body}}catch(e){}`, env);

const proto = { inherited: 3 };
const rows: [string, string, (i: number) => unknown, string, string][] = [
  ['$arg[0] > 10 (number)', 'if ($arg[0] > 10) n++', (i) => i, 'if(($0>10))U[0]++;', 'number'],
  ['$arg[0].length (own data)', 'n += $arg[0].length', (i) => ({ length: i }), 'C[0]+=($0)?.length;', 'object'],
  ['$arg[0].body.length (two own data)', 'n += $arg[0].body.length', (i) => ({ body: { length: i } }), 'C[0]+=(($0)?.body)?.length;', 'object'],
  ['$arg[0].inherited (prototype data)', 'n += $arg[0].inherited', (i) => Object.assign(Object.create(proto), { i }), 'C[0]+=($0)?.inherited;', 'object'],
  ['$arg[0].length (string)', 'n += $arg[0].length', (i) => 'x'.repeat(i % 8), 'C[0]+=($0)?.length;', 'string'],
  ['$arg[0].length (Buffer: built-in getter)', 'n += $arg[0].length', (i) => Buffer.alloc(i % 8), 'C[0]+=($0)?.length;', 'Buffer'],
];

function time(h: (...a: unknown[]) => void, args: unknown[]): number {
  // a loop of its own per handler: a shared call site would see every handler and stop inlining them
  const loop = new Function('h', 'args', 'n', 'for (let i = 0; i < n; i++) h(args[i & 63]);') as (h: unknown, a: unknown[], n: number) => void;
  const per: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const t0 = performance.now();
    loop(h, args, N);
    per.push(((performance.now() - t0) * 1e6) / N);
  }
  return median(per);
}

const out: string[][] = [];
for (const [label, snippet, make, old] of rows) {
  const args = Array.from({ length: 64 }, (_, i) => make(i));
  const p = time(plain(old), args);
  const s = time(safe(snippet), args);
  out.push([label, p.toFixed(1), s.toFixed(1), `+${(s - p).toFixed(1)}`]);
}
process.stdout.write(`Node ${process.version}, ${N.toLocaleString('en')} calls × ${BATCHES} batches, ns per handler call (median)\n\n`);
process.stdout.write(table(['snippet', 'plain read (before)', 'safe read (now)', 'difference'], out) + '\n');
