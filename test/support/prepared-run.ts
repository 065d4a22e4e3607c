// Runs a piece of JavaScript three ways in this process: as written, prepared
// with every slot off, and prepared with a counter at every point (entry,
// exit, each call before and after, await and resume, each loop's entry, exit and iterations) through the real
// in-target runtime. The program's observable results must not differ.
import * as util from 'util';
import * as vm from 'vm';
import { install, ProbeSpec } from '../../src/agent/runtime';
import { prepareForLoad } from '../../src/instrument/transform';
import { compileSnippet } from '../../src/instrument/snippet';

const rt = install();
let nextNo = 1_500_000;
let probesOn = false;

/** Counters at every point of every module whose name starts with "on-". */
function placeProbes(): void {
  if (probesOn) return;
  probesOn = true;
  const at: [string, 'preInsn' | 'postInsn', string, 'entry' | 'exit' | 'call' | 'await' | 'resume' | 'loop'][] = [
    ['entry', 'preInsn', 'pn_entry++', 'entry'], ['exit', 'preInsn', 'pn_exit++', 'exit'],
    ['calls', 'preInsn', 'pn_call++', 'call'], ['calls', 'postInsn', 'pn_ret++', 'call'],
    ['await', 'preInsn', 'pn_await++', 'await'], ['resume', 'preInsn', 'pn_resume++', 'resume'],
    ['loops', 'preInsn', 'pn_loop++', 'loop'], ['loops', 'postInsn', 'pn_loopexit++', 'loop'], ['trips', 'preInsn', 'pn_trip++', 'loop'],
  ];
  at.forEach(([point, where, text, cls], i) => {
    const spec: ProbeSpec = { id: 900_000 + i, match: '^on-.*$', point, where, order: 'append', snippet: compileSnippet(text, { point: cls }) };
    rt.addProbe(spec);
  });
}

export function count(name: string): number {
  const i = rt.counterIndex.get(name);
  return i === undefined ? 0 : rt.C[i] + rt.U[i];
}

export type Variant = 'original' | 'off' | 'on';

/**
 * Evaluate `body` as the body of `async function(out, id)` and give back what
 * it pushed to `out` (inspected), or the error it threw.
 */
export async function runVariant(body: string, variant: Variant): Promise<string> {
  const source = `(async function(out, id){${body}\n})`;
  let code = source;
  let filename = 'original.js';
  if (variant !== 'original') {
    placeProbes();
    const no = nextNo++;
    filename = `${variant}-${no}.js`;
    const prepared = prepareForLoad(source, no, 'script');
    rt.defineGlobals(no, prepared.analysis.functions.length);
    rt.registerScript(no, filename, prepared.analysis, undefined, filename, 'load', prepared.unslotted.map((u) => [u.fn, u.point]), prepared.layout);
    code = prepared.code;
  }
  const out: unknown[] = [];
  try {
    const fn = vm.runInThisContext(code, { filename }) as (out: unknown[], id: (x: unknown) => unknown) => Promise<void>;
    await fn(out, (x) => x);
  } catch (e) {
    out.push(`threw ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`);
  }
  return util.inspect(out, { depth: 5 });
}

/** The prepared text of `body` (as runVariant prepares it), for messages. */
export function preparedText(body: string): string {
  return prepareForLoad(`(async function(out, id){${body}\n})`, 1, 'script').code;
}
