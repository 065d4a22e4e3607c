// Minified bundle: lodash's own minified build (lodash.min.js: comma returns,
// `a&&b()` statements, one-letter names, 70 KB on a few lines) on a fixed
// data set; prints every result.
'use strict';
const _ = require('lodash/lodash.min.js');

// a fixed pseudo-random data set (LCG), the same on every run
let seed = 12345;
const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
const cities = ['Oslo', 'Lima', 'Pune', 'Kyiv', 'Baku', 'Suva', 'Riga', 'Doha'];
const people = _.times(1500, (i) => ({
  id: i,
  name: `${['ada', 'bo', 'cy', 'di', 'ed', 'flo'][i % 6]}-${i}`,
  city: cities[Math.floor(rnd() * cities.length)],
  age: 18 + Math.floor(rnd() * 60),
  score: Math.round(rnd() * 10000) / 100,
  tags: _.uniq(_.times(1 + Math.floor(rnd() * 4), () => ['a', 'b', 'c', 'd', 'e'][Math.floor(rnd() * 5)])),
  nested: { deep: { value: i % 7, list: _.range(i % 5) } },
}));

const out = [];
const show = (label, v) => out.push(`${label}: ${JSON.stringify(v)}`);

const byCity = _.groupBy(people, 'city');
show('cities', _.mapValues(byCity, (g) => g.length));
show('meanAgeByCity', _.mapValues(byCity, (g) => _.round(_.meanBy(g, 'age'), 3)));
show('top10', _.map(_.take(_.orderBy(people, ['score', 'id'], ['desc', 'asc']), 10), 'name'));
show('partition', _.map(_.partition(people, (p) => p.age >= 40), (l) => l.length));
show('tagCounts', _.countBy(_.flatMap(people, 'tags')));
show('chunks', _.chunk(_.map(people.slice(0, 40), 'id'), 7));
show('zip', _.zip(_.range(5), _.map(people.slice(0, 5), 'city'), _.map(people.slice(0, 5), 'age')));
show('keyBy', _.keys(_.keyBy(people.slice(0, 30), (p) => `${p.city}:${p.id}`)));
show('merge', _.merge({}, { a: { b: [1, 2], c: 'x' } }, { a: { b: [3], d: { e: 1 } } }, { f: null }));
show('defaultsDeep', _.defaultsDeep({ a: { b: 2 } }, { a: { b: 1, c: 3 }, d: 4 }));
show('cloneDeepEq', _.isEqual(_.cloneDeep(people), people));
show('difference', _.difference(_.range(0, 60, 3), _.range(0, 60, 4)));
show('intersectionBy', _.intersectionBy(people.slice(0, 200), people.slice(100, 300), 'id').length);
show('sortedUniq', _.sortedUniq(_.sortBy(_.map(people, 'age'))).length);
show('strings', people.slice(0, 40).map((p) => [_.camelCase(`${p.name} lives in ${p.city}`), _.kebabCase(p.city + 'Town'), _.snakeCase(p.name), _.startCase(p.name), _.padStart(String(p.id), 6, '0'), _.truncate(`${p.name} ${p.city} ${p.tags.join(' ')}`, { length: 16 })]));
show('template', _.template('<% _.forEach(rows, function(r) { %><li><%- r.name %> (<%= r.age %>)</li><% }); %>')({ rows: people.slice(0, 25) }));
const fib = _.memoize((n) => (n < 2 ? n : fib(n - 1) + fib(n - 2)));
show('fib', _.range(0, 70, 7).map(fib));
show('curry', _.map(_.range(10), _.curry((a, b, c) => a * b + c)(3)(4)));
show('flow', _.flow([_.compact, _.flattenDeep, _.uniq, (l) => _.sortBy(l, _.identity), _.reverse])([0, 1, [2, [3, [4, 2]], 1], null, 5, '', [6]]));
show('chain', _.chain(people).filter((p) => p.tags.includes('a')).sortBy('age').map((p) => _.pick(p, ['id', 'age'])).take(12).value());
show('transform', _.transform(byCity, (acc, g, city) => { acc[city.toUpperCase()] = _.sumBy(g, 'score').toFixed(2); }, {}));
show('get/set', (() => { const o = {}; _.set(o, 'a[0].b.c', 7); _.set(o, ['x', 'y'], [1]); return [o, _.get(o, 'a[0].b.c'), _.get(o, 'q.r', 'dflt'), _.has(o, 'x.y[0]')]; })());
show('invert', _.invertBy({ a: 1, b: 2, c: 1, d: 3 }));
show('random-free', _.shuffle.length + _.sampleSize.length);
for (const p of people) out.push(`${_.padEnd(p.name, 10)}|${_.pad(p.city, 8)}|${_.repeat('*', Math.floor(p.score / 10))}|${_.escape(`<${p.tags}>&`)}`);
process.stdout.write(out.join('\n') + '\n');
process.stderr.write(`lodash ${_.VERSION}: ${out.length} lines\n`);
