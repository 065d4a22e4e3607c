// Class-heavy code: lru-cache 11 (a minified ES2022 class with private
// fields and methods, getters, static members, generators) driven through a
// fixed access pattern, and the driver's own classes using #private fields,
// private methods, static blocks, accessors, `#x in obj`, super and new.target.
'use strict';
const { LRUCache } = require('lru-cache');

const out = [];
const log = (...a) => out.push(a.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(' '));

const disposed = [];
const cache = new LRUCache({
  max: 64,
  maxSize: 4000,
  sizeCalculation: (v, k) => String(v).length + k.length,
  dispose: (v, k, reason) => { disposed.push(`${k}:${reason}`); },
  updateAgeOnGet: false,
  allowStale: false,
});
let seed = 7;
const rnd = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
let hits = 0, misses = 0;
for (let i = 0; i < 6000; i++) {
  const k = `k${Math.floor(rnd() * rnd() * 150)}`;
  if (cache.has(k)) { hits++; cache.get(k); } else { misses++; cache.set(k, `value-${k}-${i}`.repeat(1 + (i % 4))); }
  if (i % 997 === 0) cache.delete(`k${i % 13}`);
  if (i % 500 === 0) log('step', i, cache.size, cache.calculatedSize, [...cache.keys()].slice(0, 8));
}
log('hits', hits, 'misses', misses, 'size', cache.size, 'calculatedSize', cache.calculatedSize);
log('keys', [...cache.keys()]);
log('rkeys', [...cache.rkeys()].slice(0, 20));
log('entries', [...cache.entries()].slice(0, 10));
log('peek', cache.peek('k1'), cache.peek('nope'));
log('find', cache.find((v) => v.includes('-9')));
log('dump', cache.dump().slice(0, 5).map(([k, e]) => [k, e.value.length, e.size]));
log('disposed', disposed.length, disposed.slice(0, 30));
const other = new LRUCache({ max: 10, maxSize: 100000, sizeCalculation: (v) => v.length });
other.load(cache.dump().slice(0, 10));
log('loaded', [...other.keys()]);
log('info', cache.info('k2') ? Object.keys(cache.info('k2')) : null, String(cache[Symbol.toStringTag]));
cache.forEach((v, k) => { if (k.endsWith('7')) log('forEach', k, v.length); });
log('purgeStale', cache.purgeStale(), 'pop', cache.pop() !== undefined);

// fetchMethod: async fetches deduplicated while in flight
const fetched = new LRUCache({ max: 5, fetchMethod: async (k, stale, { signal }) => { await null; return `fetched:${k}:${signal.aborted}:${stale}`; } });

// the driver's own class shapes
class Account {
  static #count = 0;
  static registry = new Map();
  static { Account.kinds = Object.freeze(['basic', 'gold']); }
  #balance = 0;
  #history = [];
  owner;
  constructor(owner, opening = 0) {
    if (new.target === Account && owner === 'abstract') throw new TypeError('no');
    this.owner = owner;
    this.#deposit(opening, 'open');
    Account.#count++;
    Account.registry.set(owner, this);
  }
  #deposit(n, why) { this.#balance += n; this.#history.push([why, n]); return this; }
  deposit(n) { return this.#deposit(n, 'deposit'); }
  withdraw(n) {
    if (n > this.#balance) throw new RangeError(`${this.owner}: insufficient funds for ${n}`);
    return this.#deposit(-n, 'withdraw');
  }
  get balance() { return this.#balance; }
  set balance(_) { throw new Error('read only'); }
  get history() { return this.#history.map(([w, n]) => `${w}${n >= 0 ? '+' : ''}${n}`); }
  static get count() { return Account.#count; }
  static isAccount(o) { return #balance in o; }
  *[Symbol.iterator]() { yield* this.#history; }
  toJSON() { return { owner: this.owner, balance: this.#balance }; }
}
class Gold extends Account {
  #rate;
  static { this.kind = 'gold'; }
  constructor(owner, opening, rate) { super(owner, opening); this.#rate = rate; }
  accrue() { return this.deposit(Math.round(this.balance * this.#rate)); }
  get balance() { return super.balance; }
  withdraw = (n) => super.withdraw(n + 1);
}
const Anon = class extends Gold { static { this.anon = true; } };

const accounts = [];
for (let i = 0; i < 300; i++) {
  const a = i % 3 === 0 ? new Gold(`g${i}`, i * 10, 0.05) : i % 7 === 0 ? new Anon(`a${i}`, i, 0.1) : new Account(`p${i}`, i);
  for (let j = 0; j < 5; j++) a.deposit((i * j) % 17);
  try { a.withdraw((i * 13) % 200); } catch (e) { log('error', e.name, e.message); }
  if (a instanceof Gold) a.accrue();
  accounts.push(a);
}
for (const a of accounts.slice(0, 60)) log(a.owner, a.balance, a.history, [...a].length, Account.isAccount(a), a.constructor.name);
log('count', Account.count, Account.kinds, Gold.kind, Anon.anon, Anon.kind, Account.isAccount({}));
try { accounts[0].balance = 5; } catch (e) { log('setter', e.message); }
try { new Account('abstract'); } catch (e) { log('new.target', e.message); }
log('json', JSON.stringify(accounts.slice(0, 20)));

(async () => {
  const got = await Promise.all(['x', 'y', 'x', 'z'].map((k) => fetched.fetch(k)));
  log('fetch', got, [...fetched.keys()]);
  process.stdout.write(out.join('\n') + '\n');
  process.stderr.write(`lru-cache: ${out.length} lines\n`);
})();
