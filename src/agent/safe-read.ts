// What a snippet's reads compile to: reads that run no program code. A
// snippet's `$arg[0].body.length` must not call the program's getters, Proxy
// traps or valueOf/toString/Symbol.toPrimitive. Properties are read through
// their descriptors, walking the prototype chain; an accessor (a getter the
// program defined) or a Proxy anywhere on the way reads as undefined. Every
// built-in used is taken when this module loads (when the agent starts), so a
// program that replaces Object.getOwnPropertyDescriptor later is not called.
import { types } from 'util';

const isProxy = types.isProxy;
const getOwn = Object.getOwnPropertyDescriptor;
const protoOf = Object.getPrototypeOf;
const hasOwn = Object.hasOwn;
const apply = Reflect.apply;

/**
 * Getters of the built-ins that run no program code on their own instances
 * (sizes and lengths a snippet wants to compare): called, not refused. Taken
 * now, so a getter the program puts in their place later is not one of them.
 */
const PURE_GETTERS: unknown[] = [];
{
  const typedArray = protoOf(Uint8Array.prototype);
  const getters: [object, string[]][] = [
    [typedArray, ['length', 'byteLength', 'byteOffset']],
    [ArrayBuffer.prototype, ['byteLength']],
    [SharedArrayBuffer.prototype, ['byteLength']],
    [DataView.prototype, ['byteLength', 'byteOffset']],
    [Map.prototype, ['size']],
    [Set.prototype, ['size']],
  ];
  for (const [proto, keys] of getters) {
    for (const k of keys) {
      const g = getOwn(proto, k)?.get;
      if (g) PURE_GETTERS.push(g);
    }
  }
}

/** (a loop, not Set.prototype.has, which the program can replace) */
function isPureGetter(g: unknown): boolean {
  for (let i = 0; i < PURE_GETTERS.length; i++) if (PURE_GETTERS[i] === g) return true;
  return false;
}

/** How many prototypes a read walks at most (chains are finite; this only bounds the cost). */
const MAX_DEPTH = 10000;

/**
 * o[k] when it runs no program code, else undefined: own and inherited data
 * properties, string lengths and characters, the PURE_GETTERS; never a
 * Proxy, another getter, or a key that is an object (its toString).
 */
export function safeRead(o: unknown, k: unknown): unknown {
  if (o === null || o === undefined) return undefined;
  if (typeof k === 'object' || typeof k === 'function') return undefined;
  const t = typeof o;
  if (t === 'string') {
    // a string's length and characters are its own; anything else comes from String.prototype
    if (k === 'length') return (o as string).length;
    if (typeof k === 'number' && k >= 0 && k < (o as string).length && k % 1 === 0) return (o as string)[k];
  }
  let cur: unknown = o;
  try {
    if (t !== 'object' && t !== 'function') cur = protoOf(o);
    for (let depth = 0; cur !== null && depth < MAX_DEPTH; depth++) {
      if (isProxy(cur)) return undefined;
      const d = getOwn(cur, k as PropertyKey);
      if (d !== undefined) {
        if (hasOwn(d, 'value')) return d.value;
        // an accessor: only a pure built-in getter is called, with the object read as receiver
        return isPureGetter(d.get) ? apply(d.get as () => unknown, o, []) : undefined;
      }
      cur = protoOf(cur);
    }
  } catch {
    // an exotic object that throws on inspection (a module namespace before its binding is set)
  }
  return undefined;
}

/**
 * A snippet operand for arithmetic and comparisons: an object (or function)
 * becomes NaN instead of running its valueOf / toString / Symbol.toPrimitive.
 */
export function safePrimitive(v: unknown): unknown {
  return (typeof v === 'object' && v !== null) || typeof v === 'function' ? NaN : v;
}

/** A snippet's ==: loose equality of primitives; an object equals only itself (no coercion). */
export function safeLooseEqual(a: unknown, b: unknown): boolean {
  const ao = (typeof a === 'object' && a !== null) || typeof a === 'function';
  const bo = (typeof b === 'object' && b !== null) || typeof b === 'function';
  return ao || bo ? a === b : a == b;
}

/** A value handed to $file(x) / $channel(x): undefined if a Proxy is it or on its prototype chain (instanceof would trap). */
export function safeInstanceArg(x: unknown): unknown {
  if ((typeof x !== 'object' || x === null) && typeof x !== 'function') return x;
  let cur: unknown = x;
  try {
    for (let depth = 0; cur !== null && depth < MAX_DEPTH; depth++) {
      if (isProxy(cur)) return undefined;
      cur = protoOf(cur);
    }
  } catch {
    return undefined;
  }
  return cur === null ? x : undefined;
}
