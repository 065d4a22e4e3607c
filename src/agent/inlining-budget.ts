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

/** V8's defaults of the budgets scaled (not readable at run time): TurboFan's, the same on Node 22, 24 and 26 */
const TURBOFAN = { 'max-inlined-bytecode-size': 460, 'max-inlined-bytecode-size-cumulative': 920 };
/** Maglev's per-callee limit by V8 major version (Node 22, 24, 26); its cumulative one is 920 on each */
const MAGLEV_PER_CALLEE: Record<number, number> = { 12: 100, 13: 460, 14: 100 };

/** how much larger the budgets are made; PARANODE_INLINING_SCALE overrides (1: V8's own) */
export const INLINING_SCALE = 2;

/**
 * Scale V8's inlining budgets for a program prepared from its first line (main
 * thread: V8's flags are the process's). Where they are left as they are (the
 * program sets its own inlining flags, or this V8's defaults are not known
 * here), `note` is told why.
 */
export function scaleInliningBudgets(note: (text: string) => void, env: NodeJS.ProcessEnv = process.env): void {
  const skipped = scale(env);
  if (skipped) note(`V8's inlining budgets left as they are (${skipped}): the prepared program inlines less than the plain one`);
}

/** Set the scaled flags; or why not. */
function scale(env: NodeJS.ProcessEnv): string | null {
  const factor = env.PARANODE_INLINING_SCALE === undefined ? INLINING_SCALE : Number(env.PARANODE_INLINING_SCALE);
  if (!(factor > 0) || factor === 1) return `PARANODE_INLINING_SCALE=${env.PARANODE_INLINING_SCALE}`;
  const own = [...process.execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].find((f) => /^--(no-)?(turbo|maglev)[-_]inlining\b|inlined[-_]bytecode[-_]size|inline[-_]depth/.test(f));
  if (own) return `the program sets ${own}`;
  const maglev = MAGLEV_PER_CALLEE[Number(process.versions.v8.split('.')[0])];
  if (maglev === undefined) return `V8 ${process.versions.v8}: its inlining budgets are not known to this paranode`;
  const defaults = { ...TURBOFAN, 'max-maglev-inlined-bytecode-size': maglev, 'max-maglev-inlined-bytecode-size-cumulative': 920 };
  for (const [name, value] of Object.entries(defaults)) v8.setFlagsFromString(`--${name}=${Math.round(value * factor)}`);
  return null;
}
