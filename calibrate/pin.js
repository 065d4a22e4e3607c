// The program `paranode calibrate` measures interpreter pinning in: a function
// holding a breakpoint is never optimized (nor inlined into its callers) while
// the breakpoint is set, even where the breakpoint is never reached. Three
// shapes of function (an arithmetic loop, string and array work, calls into a
// small helper) run plain, then with a never-reached conditional breakpoint set
// through this process's own inspector session, then plain again; the ratio of
// their times per call is how much slower the function's own code runs pinned.
// Prints one line: JSON { shape: factor }.
'use strict';
const inspector = require('inspector');
const { pathToFileURL } = require('url');

const TAGS = ['a', 'b', 'p', 'div', 'span', 'em', 'strong', 'ul', 'li', 'ol', 'img', 'h1', 'h2', 'h3'];
function arith(a) { if (a === null) { return -1; } let s = 0; for (let i = 0; i < 50; i++) s += (a[i & 7] * i) | 0; return s; }
function strings(a) { if (a === null) { return -1; } const name = a.t; return (TAGS.indexOf(name) !== -1 && !a.attrs.class) ? name.length : 0; }
function helper(o) { return o.x + o.y; }
function calls(a) { if (a === null) { return -1; } let s = 0; for (let i = 0; i < 4; i++) s += helper(a.pts[i]); return s; }

const SHAPES = {
  arith: [arith, [1, 2, 3, 4, 5, 6, 7, 8]],
  strings: [strings, { t: 'span', attrs: {} }],
  calls: [calls, { pts: [{ x: 1, y: 2 }, { x: 3, y: 4 }, { x: 5, y: 6 }, { x: 7, y: 8 }] }],
};

/** ns per call of n calls */
function time(f, a, n) {
  let x = 0;
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) x += f(a);
  const ns = Number(process.hrtime.bigint() - t) / n;
  return x === -1 ? NaN : ns;
}

const s = new inspector.Session();
s.connect();
const post = (m, p) => new Promise((resolve, reject) => s.post(m, p, (e, r) => (e ? reject(e) : resolve(r))));

(async () => {
  await post('Debugger.enable');
  const lines = require('fs').readFileSync(__filename, 'utf8').split('\n');
  const out = {};
  for (const [name, [f, a]] of Object.entries(SHAPES)) {
    // about 20 ms a plain run
    for (let i = 0; i < 3; i++) time(f, a, 100000);
    const n = Math.max(1000, Math.round(2e7 / time(f, a, 100000)));
    const plain = () => Math.min(time(f, a, n), time(f, a, n), time(f, a, n));
    const before = plain();
    const line = lines.findIndex((l) => l.startsWith(`function ${name}(`));
    const bp = await post('Debugger.setBreakpointByUrl', { url: pathToFileURL(__filename).href, lineNumber: line, columnNumber: lines[line].indexOf('return -1'), condition: 'false' });
    const m = Math.max(100, Math.round(n / 10));
    time(f, a, m);
    const pinned = Math.min(time(f, a, m), time(f, a, m));
    await post('Debugger.removeBreakpoint', { breakpointId: bp.breakpointId });
    for (let i = 0; i < 3; i++) time(f, a, n);
    out[name] = pinned / Math.min(before, plain());
  }
  await post('Debugger.disable');
  s.disconnect();
  console.log(JSON.stringify(out));
})();
