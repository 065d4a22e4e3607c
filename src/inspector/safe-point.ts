// The tool's JavaScript in a target runs at a safe point: not on top of the
// program's own JavaScript. An inspector request reaches a busy thread by
// interrupt, in the middle of whatever runs there, also inside one of the
// program's regular expressions; and a regexp run by the interrupt corrupts
// the one it interrupted (V8's irregexp keeps one backtrack stack per
// isolate): Node 22 and 26 segfault or abort in malloc, and Node 24 as well
// under an attach (docs/BENCHMARKS.md section 16, "A crash found"). So an
// expression that finds the program's frames below it does not run there:
// it runs from the event loop (setImmediate), the thread's next safe point,
// and answers then. A thread that stays busy past a wait is asked again to
// run it at once (the old way), so a program that never yields is still
// served; see Cdp.evaluate.

/** how long a busy thread is given to reach its event loop before the tool's expression runs on top of it */
export const SAFE_POINT_WAIT_MS = 200;

/** where the target keeps expressions waiting for a safe point, by id (non-enumerable, as the runtime's own) */
const QUEUE = `Symbol.for('paranode.deferred')`;

/**
 * `expression` wrapped to run at once where no JavaScript is below it (the
 * request arrived at the event loop, or at a thread held before its first
 * line): `{ v }`, its value. Else it is queued for the event loop and the
 * answer is `{ deferred: 1 }`: its value comes from awaiting `settled(id)`.
 * No promise is awaited on the first answer: a thread held at its start runs
 * no microtask, and an awaited answer would never come. Free of regular
 * expressions, and the program's Error.prepareStackTrace is not called.
 */
export function atSafePoint(id: string, expression: string): string {
  return `((id, f) => { const E = Error, lim = E.stackTraceLimit, prep = E.prepareStackTrace; let depth = 3; ` +
    `try { E.stackTraceLimit = 3; E.prepareStackTrace = (_, cs) => cs.length; const o = {}; E.captureStackTrace(o); depth = o.stack; } catch { depth = 3; } ` +
    `finally { E.stackTraceLimit = lim; E.prepareStackTrace = prep; } ` +
    // this arrow and the evaluated script: nothing of the program's below
    `if (typeof depth === 'number' && depth <= 2) return { now: 1, v: f() }; ` +
    `const g = globalThis, k = ${QUEUE}; ` +
    `if (!g[k]) Object.defineProperty(g, k, { value: new Map(), configurable: true }); ` +
    `const e = { done: false }; ` +
    `e.promise = new Promise((res, rej) => { e.run = () => { e.done = true; try { const v = f(); res(v); return v; } catch (x) { rej(x); throw x; } }; }); ` +
    // handled from the start: a failure waiting for its reader is no unhandled rejection of the program's
    `e.promise.catch(() => undefined); ` +
    `g[k].set(id, e); ` +
    `setImmediate(() => { if (!e.done) try { e.run(); } catch {} }); ` +
    `return { deferred: 1 }; })(${JSON.stringify(id)}, () => (${expression}))`;
}

/** The value of the queued expression `id`, once it ran (evaluate with awaitPromise). */
export function settled(id: string): string {
  return `(() => { const q = globalThis[${QUEUE}], e = q && q.get(${JSON.stringify(id)}); ` +
    `if (!e) throw new Error('paranode: no deferred expression ${id}'); ` +
    // the queue goes with its last expression: the program's global object is left as it was
    `return e.promise.finally(() => { q.delete(${JSON.stringify(id)}); if (!q.size && globalThis[${QUEUE}] === q) delete globalThis[${QUEUE}]; }); })()`;
}

/** Run the queued expression `id` now: `{ ok: 1, v }`, or null where it ran already (its value is on its way). */
export function runNow(id: string): string {
  return `(() => { const q = globalThis[${QUEUE}], e = q && q.get(${JSON.stringify(id)}); return e && !e.done ? { ok: 1, v: e.run() } : null; })()`;
}
