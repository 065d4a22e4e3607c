// Input of tsc-check.js
import { Registry, describe, Shape } from './shapes';
import { largest, parse, first, missing } from './util'; // ERR: no export 'missing'

const r = new Registry<Shape>().add('a', { kind: 'circle', size: 2 }).add('b', { kind: 'square', size: 3 });
const big = largest([r.get('a')!, r.get('b')!]);
console.log(describe({ ...big!, name: 'biggest' }));
const n: string = parse('1,2,3').length; // ERR: number to string
first<number>(['x']); // ERR: string[] to readonly number[]
r.add('c', { kind: 'circle' }); // ERR: missing size
function twice(f: (x: number) => number, x: number) { return f(f(x)); }
twice((x: string) => x, 1); // ERR: parameter types
let u: undefined = void 0; u.toString(); // ERR: possibly undefined
export { n };
