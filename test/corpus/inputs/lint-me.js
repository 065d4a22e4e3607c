// Input of eslint-lint.js: code with deliberate problems
var unused = 1
function f(a, a2) {
  if (a == null) return undefined;
  else { return a2 }
  debugger
}
const obj = { x: 1, x: 2 }
let y = 5; y = y
for (var i = 0; i < 10; i--) { console.log(i) }
if (typeof obj === 'strnig') {}
async function g() { return await Promise.resolve(1) }
switch (y) { case 1: f(1); case 2: break; default: }
try { g() } catch (e) { e = 1 }
const re = /a  b[]/
label: while (false) {}
new Promise(async (resolve) => resolve(1))
export default function () { return this }
class A { constructor() { return 1 } m() {} m() {} }
const s = "it's" + 'a' + `b`;
x = 7
