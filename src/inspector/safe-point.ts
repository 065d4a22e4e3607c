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

/** where the target keeps the ids of the tool's last requests that ran (non-enumerable), and how many */
const RAN = `Symbol.for('paranode.ran')`;
const RAN_KEPT = 1024;

/**
 * A statement that ends the enclosing function where request `id` has run in
 * this thread before, and else notes that it runs now. The copy answers `dup`,
 * or with `kept`, what the first run gave (its promise: see once). Node 26
 * dispatched one request to a busy main thread twice (CI, and by hand in
 * attach after attach to a program busy in 200-ms callbacks): the script's
 * registration ran twice, its probe was placed twice over, and every call
 * counted two and three times. The ids of the last RAN_KEPT requests are
 * kept: a copy comes within milliseconds.
 */
function runOnce(dup: string): string {
  return `const g_ = globalThis; let r_ = g_[${RAN}]; ` +
    `if (!r_) Object.defineProperty(g_, ${RAN}, { value: r_ = { ids: new Set(), kept: new Map(), ring: [], at: 0 }, configurable: true }); ` +
    `if (r_.ids.has(id)) return r_.kept.has(id) ? r_.kept.get(id) : ${dup}; ` +
    `const old_ = r_.ring[r_.at]; if (old_ !== undefined) { r_.ids.delete(old_); r_.kept.delete(old_); } ` +
    `r_.ring[r_.at] = id; r_.at = (r_.at + 1) % ${RAN_KEPT}; r_.ids.add(id); `;
}

/**
 * The thread forgets the requests that ran: the tool's last request to it at
 * detach, so that the program's global object is left as it was (a copy of an
 * earlier request arriving later would run again: after the runtime's
 * deactivation, to no effect on the program's counts). With them go the
 * queued expressions that ran and were never read: the attach's bootstrap
 * request, queued, starts the agent, which closes the port and its session,
 * so its reader may never arrive (CI's soak on Node 22 found the queue left
 * after one of 150 sessions).
 */
export const FORGET_REQUESTS = `void (() => { delete globalThis[${RAN}]; const g = globalThis, k = ${QUEUE}, q = g[k]; ` +
  `if (!q) return; q.forEach((e, id) => { if (e.done) q.delete(id); }); if (!q.size) delete g[k]; })()`;

/**
 * `expression` run once under `id`, a request's own: a copy of the request
 * runs nothing. Its answer is dropped (the first copy's was the request's),
 * but V8 answers an awaited request when its promise settles, so a copy that
 * answered at once would answer first, and V8 loses the first's promise when
 * a second request with its id awaits another ("Promise was collected", Node
 * 22): with `kept` (awaited requests) the copy gives the first's promise again.
 */
export function once(id: string, expression: string, kept = false): string {
  return `((id, f) => { ${runOnce('undefined')}${kept ? 'const v_ = f(); r_.kept.set(id, v_); return v_;' : 'return f();'} })(${JSON.stringify(id)}, () => (${expression}))`;
}

/**
 * `expression` wrapped to run at once where no JavaScript is below it (the
 * request arrived at the event loop, or at a thread held before its first
 * line): `{ v }`, its value. Else it is queued for the event loop and the
 * answer is `{ deferred: 1 }`: its value comes from awaiting `settled(id)`.
 * No promise is awaited on the first answer: a thread held at its start runs
 * no microtask, and an awaited answer would never come. Free of regular
 * expressions, and the program's Error.prepareStackTrace is not called.
 */
export function atSafePoint(id: string, expression: string, guarded = true): string {
  return `((id, f) => { ${guarded ? runOnce('{ deferred: 1 }') : ''}const E = Error, lim = E.stackTraceLimit, prep = E.prepareStackTrace; let depth = 3; ` +
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
