// Input of tsc-check.js
import { Shape, area } from './shapes';
export function largest(xs: Shape[]): Shape | undefined {
  return xs.reduce<Shape | undefined>((a, b) => (a === undefined || area(b) > area(a) ? b : a), undefined);
}
export function sum(xs: number[]): number { return xs.reduce((a, b) => a + b, 0); }
export function parse(text: string): number[] {
  return text.split(',').map((t) => parseInt(t)).filter((n) => !isNaN(n));
}
export const ratio: number = sum([1, 2]) / '3'; // ERR: arithmetic on a string
export function first<T>(xs: readonly T[]): T { return xs[0]; }
export function unused(a: number, b: string) { return a + b.lenght; } // ERR: misspelt property
