// Input of tsc-check.js (deliberate type errors are marked ERR)
export interface Shape { kind: 'circle' | 'square'; size: number }
export type Named<T> = T & { name: string };
export function area(s: Shape): number {
  switch (s.kind) {
    case 'circle': return Math.PI * s.size ** 2;
    case 'square': return s.size * s.size;
  }
}
export function describe(s: Named<Shape>): string {
  return `${s.name}: ${area(s).toFixed(2)} ${s.colour}`; // ERR: no property colour
}
export const unit: Shape = { kind: 'triangle', size: 1 }; // ERR: not assignable
export class Registry<T extends Shape> {
  private items = new Map<string, T>();
  add(name: string, item: T): this { this.items.set(name, item); return this; }
  get(name: string): T | undefined { return this.items.get(name); }
  total(): number { let t = 0; for (const v of this.items.values()) t += area(v); return t; }
}
