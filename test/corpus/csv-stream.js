// Async and streams: a fixed data set from an async generator goes through
// csv-stringify and csv-parse (Transform streams) with stream.pipeline, a
// Transform of the driver's own, for await over the parser, and
// async-generator stages; prints every row and aggregates, progress on stderr.
'use strict';
const { Readable, Transform, Writable } = require('stream');
const { pipeline } = require('stream/promises');
const { stringify } = require('csv-stringify');
const { parse } = require('csv-parse');
const { parse: parseSync } = require('csv-parse/sync');
const { stringify: stringifySync } = require('csv-stringify/sync');

const N = 3000;
let seed = 99;
const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
const products = ['widget', 'gadget, large', 'sprocket "pro"', 'gizmo\nmulti-line', 'doohickey'];

async function* records() {
  for (let i = 0; i < N; i++) {
    if (i % 250 === 0) await new Promise((r) => setImmediate(r));
    yield { id: i, product: products[Math.floor(rnd() * products.length)], qty: 1 + Math.floor(rnd() * 20), price: (Math.floor(rnd() * 100000) / 100).toFixed(2), day: `2024-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}` };
  }
}

async function* enrich(source) {
  for await (const row of source) {
    const total = (Number(row.qty) * Number(row.price)).toFixed(2);
    yield { ...row, total };
  }
}

async function main() {
  const lines = [];
  let csvBytes = 0;
  const csvChunks = [];
  // 1. objects -> CSV text
  await pipeline(
    Readable.from(records()),
    stringify({ header: true, columns: ['id', 'product', 'qty', 'price', 'day'], quoted_match: /"/ }),
    new Writable({ write(chunk, enc, cb) { csvBytes += chunk.length; csvChunks.push(chunk); cb(); } }),
  );
  const csv = Buffer.concat(csvChunks).toString('utf8');
  process.stderr.write(`stringified ${csvBytes} bytes\n`);
  lines.push(`csv head:\n${csv.split('\n').slice(0, 6).join('\n')}`);

  // 2. CSV text in small chunks -> parser -> own Transform -> for await
  const parser = parse({ columns: true, cast: (v, ctx) => (ctx.column === 'id' || ctx.column === 'qty' ? Number(v) : v) });
  const chunks = [];
  for (let i = 0; i < csv.length; i += 1013) chunks.push(csv.slice(i, i + 1013));
  const upper = new Transform({
    objectMode: true,
    transform(row, enc, cb) { setImmediate(() => cb(null, { ...row, product: row.product.toUpperCase() })); },
  });
  const byProduct = new Map();
  let count = 0;
  const sink = (async () => {
    for await (const row of enrich(upper)) {
      count++;
      const p = byProduct.get(row.product) ?? { n: 0, qty: 0, total: 0 };
      p.n++; p.qty += row.qty; p.total += Number(row.total);
      byProduct.set(row.product, p);
      if (row.id % 37 === 0) lines.push(`row ${row.id} ${JSON.stringify(row)}`);
      if (count % 1000 === 0) process.stderr.write(`parsed ${count} rows\n`);
    }
  })();
  await pipeline(Readable.from(chunks), parser, upper);
  await sink;
  for (const [k, v] of [...byProduct].sort()) lines.push(`product ${JSON.stringify(k)}: n=${v.n} qty=${v.qty} total=${v.total.toFixed(2)}`);
  lines.push(`parser info: ${JSON.stringify({ records: parser.info.records, lines: parser.info.lines, invalid: parser.info.invalid_field_length })}`);

  // 3. a malformed input: the parser's error reaches pipeline's promise
  try {
    await pipeline(Readable.from(['a,b\n1,"unterminated\n2,3\n']), parse(), new Writable({ objectMode: true, write(c, e, cb) { cb(); } }));
  } catch (e) {
    lines.push(`error: ${e.code}: ${e.message}`);
  }

  // 4. the sync APIs agree with the streams
  const again = parseSync(csv, { columns: true });
  lines.push(`sync rows: ${again.length}, same text: ${stringifySync(again, { header: true, columns: ['id', 'product', 'qty', 'price', 'day'], quoted_match: /"/ }) === csv}`);

  // 5. concurrency: several parsers at once, results in order
  const results = await Promise.all([0, 1, 2, 3].map(async (k) => {
    const rows = [];
    const part = stringifySync(again.slice(k * 200, k * 200 + 200 + k * 50), { delimiter: ';' });
    for await (const r of Readable.from([part]).pipe(parse({ delimiter: ';', skip_empty_lines: true }))) rows.push(r.join('').length);
    return `${k}:${rows.length}:${rows.reduce((a, b) => a + b, 0)}`;
  }));
  lines.push(`parallel: ${results.join(' ')}`);
  process.stdout.write(lines.join('\n') + '\n');
}
main().then(() => process.stderr.write('done\n'));
