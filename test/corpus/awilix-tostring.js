// Function.prototype.toString: awilix resolves constructor and factory
// parameters in CLASSIC mode by parsing each function's source text; the
// driver also prints the source text, name and length of library functions
// and of its own functions of every shape.
'use strict';
const awilix = require('awilix');
const { createContainer, asClass, asFunction, asValue, InjectionMode, Lifetime, aliasTo } = awilix;

const out = [];
const log = (...a) => out.push(a.join(' '));

class Logger { constructor(prefix) { this.prefix = prefix; this.lines = []; } log(m) { this.lines.push(`${this.prefix}${m}`); } }
class Database {
  constructor(logger, connectionString, /* a comment */ poolSize = 4) { this.logger = logger; this.cs = connectionString; this.poolSize = poolSize; this.queries = 0; }
  query(q) { this.queries++; this.logger.log(`query ${this.queries}: ${q}`); return [q.length, this.poolSize]; }
}
const makeRepo = (database, logger) => ({ find: (id) => { logger.log(`find ${id}`); return database.query(`select ${id}`); } });
function makeService(repo, clock, { strict } = {}) { return { run: (n) => Array.from({ length: n }, (_, i) => `${clock()}:${repo.find(i)}:${strict}`) }; }
async function asyncFactory(logger) { logger.log('async'); return 42; }
function* genFactory(prefix) { yield prefix; }

const container = createContainer({ injectionMode: InjectionMode.CLASSIC, strict: false });
let tick = 0;
container.register({
  prefix: asValue('[app] '),
  connectionString: asValue('db://fixed'),
  logger: asClass(Logger).singleton(),
  database: asClass(Database, { lifetime: Lifetime.SCOPED }),
  repo: asFunction(makeRepo),
  clock: asValue(() => `t${tick++}`),
  service: asFunction(makeService),
  db: aliasTo('database'),
  answer: asFunction(asyncFactory),
});
const svc = container.resolve('service');
for (const line of svc.run(40)) log('service', line);
for (let i = 0; i < 300; i++) container.resolve(i % 2 ? 'service' : 'repo');
const scope = container.createScope();
scope.register({ connectionString: asValue('db://scoped') });
log('scoped db', scope.resolve('database').cs, container.resolve('db').cs, scope.resolve('db') === scope.resolve('database'));
log('registrations', Object.keys(container.registrations).sort().join(','));
container.resolve('answer').then((v) => log('async factory', v));
try { container.resolve('nope'); } catch (e) { log('resolve error', e.name, e.message.split('\n')[0]); }
try {
  const c2 = createContainer({ injectionMode: InjectionMode.CLASSIC, strict: true });
  c2.register({ a: asFunction((b) => b), b: asFunction((a) => a) });
  c2.resolve('a');
} catch (e) { log('cycle error', e.name, e.message.replace(/\s+/g, ' ')); }
for (const l of container.resolve('logger').lines) log('logged', l);

// source text, name and length, as a DI library or a serializer sees them
const own = { Logger, Database, makeRepo, makeService, asyncFactory, genFactory, arrow: (x) => x * 2, method: { m(a, b) { return a + b; } }.m, getter: Object.getOwnPropertyDescriptor({ get g() { return 1; } }, 'g').get };
for (const [k, f] of Object.entries(own)) log(`own ${k} (${f.name}/${f.length}):`, String(f));
for (const k of ['asValue', 'asFunction', 'aliasTo', 'createContainer']) log(`awilix ${k} (${awilix[k].name}/${awilix[k].length}):`, Function.prototype.toString.call(awilix[k]));
log('bound', String(makeRepo.bind(null)), 'native', String(Math.max));
// a serializer that ships functions as text and revives them
const shipped = Object.entries({ makeRepo, makeService, arrow: own.arrow }).map(([k, f]) => [k, f.toString()]);
const revived = shipped.map(([k, src]) => [k, (0, eval)(`(${src})`)]);
log('revived', revived.map(([k, f]) => `${k}:${f.length}`).join(' '), revived[2][1](21));

setImmediate(() => {
  process.stdout.write(out.join('\n') + '\n');
  process.stderr.write(`awilix: ${out.length} lines\n`);
});
