// Prepared code is larger than the program's: its slots take prettier's
// traverseDoc from 433 bytes of bytecode to 884, and `return x + 1` from 6 to
// 88 (Node 24). V8 decides what to inline by bytecode size (TurboFan and Maglev
// inline a callee up to 460 bytes, 920 in all per function), so with its
// budgets unchanged a prepared program inlines far less than the plain one:
// most of the dormant program's extra work (issue #15: esprima +21 % of
// instructions), and a profile that is not the plain run's (issue #12:
// traverseDoc no longer inlined into prettier's propagateBreaks). Where every
// module is prepared from the program's first line (a launch, the dormant
// agent), the agent scales V8's per-callee and cumulative inlining budgets by
// about the slots' growth before any of the program is compiled. Measured
// (callgrind, esprima's work per repetition, Node 24): ×2 brings the dormant
// program from +21 % to +6 % of plain; ×1.5 and ×3 do less; scaling the
// small-function limit adds nothing. Not on attach: the program's code is
// already compiled plain there.
import * as v8 from 'v8';

/** V8's defaults of the budgets scaled, by V8 major version (not readable at run time) */
const DEFAULTS: Record<number, Record<string, number>> = {
  // Node 22
  12: { 'max-inlined-bytecode-size': 460, 'max-inlined-bytecode-size-cumulative': 920, 'max-maglev-inlined-bytecode-size': 100, 'max-maglev-inlined-bytecode-size-cumulative': 920 },
  // Node 24
  13: { 'max-inlined-bytecode-size': 460, 'max-inlined-bytecode-size-cumulative': 920, 'max-maglev-inlined-bytecode-size': 460, 'max-maglev-inlined-bytecode-size-cumulative': 920 },
  // Node 26
  14: { 'max-inlined-bytecode-size': 460, 'max-inlined-bytecode-size-cumulative': 920, 'max-maglev-inlined-bytecode-size': 100, 'max-maglev-inlined-bytecode-size-cumulative': 920 },
};

/** how much larger the budgets are made; PARANODE_INLINING_SCALE overrides (1: V8's own) */
export const INLINING_SCALE = 2;

/**
 * Scale V8's inlining budgets for a program prepared from its first line (main
 * thread: V8's flags are the process's). Returns the flags set, or why none
 * were, also told to `note`: the program's own inlining flags are left as they
 * are, and so is a V8 whose defaults are not known here.
 */
export function scaleInliningBudgets(note: (text: string) => void, env: NodeJS.ProcessEnv = process.env): { flags: string[] } | { skipped: string } {
  const r = scaled(env);
  if ('skipped' in r) note(`V8's inlining budgets left as they are (${r.skipped}): the prepared program inlines less than the plain one`);
  return r;
}

function scaled(env: NodeJS.ProcessEnv): { flags: string[] } | { skipped: string } {
  const scale = env.PARANODE_INLINING_SCALE === undefined ? INLINING_SCALE : Number(env.PARANODE_INLINING_SCALE);
  if (!(scale > 0) || scale === 1) return { skipped: `PARANODE_INLINING_SCALE=${env.PARANODE_INLINING_SCALE}` };
  const own = [...process.execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].find((f) => /^--(no-)?(turbo|maglev)[-_]inlining\b|inlined[-_]bytecode[-_]size|inline[-_]depth/.test(f));
  if (own) return { skipped: `the program sets ${own}` };
  const major = Number(process.versions.v8.split('.')[0]);
  const defaults = DEFAULTS[major];
  if (!defaults) return { skipped: `V8 ${process.versions.v8}: its inlining budgets are not known to this paranode` };
  const flags = Object.entries(defaults).map(([name, value]) => `--${name}=${Math.round(value * scale)}`);
  for (const f of flags) v8.setFlagsFromString(f);
  return { flags };
}
