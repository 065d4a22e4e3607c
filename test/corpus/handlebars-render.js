// Template engine: handlebars compiles fixed templates (helpers, partials,
// block helpers, each/with/if, whitespace control) to JavaScript it builds
// with new Function, renders them over a fixed data set, prints the
// precompiled source of one template and a template parse error.
'use strict';
const Handlebars = require('handlebars');

const hb = Handlebars.create();
hb.registerHelper('upper', (s) => String(s).toUpperCase());
hb.registerHelper('money', (n) => `$${Number(n).toFixed(2)}`);
hb.registerHelper('eq', (a, b) => a === b);
hb.registerHelper('list', function (items, options) {
  return `<ul class="${options.hash.cls || 'l'}">\n${items.map((it, i) => `  <li>${options.fn(it, { data: { index: i } })}</li>`).join('\n')}\n</ul>`;
});
hb.registerHelper('times', function (n, options) { let s = ''; for (let i = 0; i < n; i++) s += options.fn({ i, odd: i % 2 === 1 }); return s; });
hb.registerPartial('address', '{{street}}, {{city}} {{#if zip}}({{zip}}){{/if}}');
hb.registerPartial('row', '<tr class="{{#if @odd}}odd{{else}}even{{/if}}"><td>{{@index}}</td><td>{{name}}</td><td>{{money total}}</td></tr>');

const page = hb.compile(`<h1>{{upper title}}</h1>
{{!-- a comment --}}
{{#each customers}}
<section id="c{{id}}">
  <h2>{{name}}{{#if vip}} <b>VIP</b>{{/if}}</h2>
  <p>{{> address address}}</p>
  {{#list orders cls="orders"}}{{@index}}: {{item}} x{{qty}} = {{money (lookup this "total")}}{{/list}}
  {{~#with stats}} [{{count}} orders, {{money sum}}]{{/with~}}
  {{#unless orders.length}}<i>no orders</i>{{/unless}}
  {{#each tags as |tag idx|}}{{#if @first}}tags: {{/if}}{{tag}}{{#unless @last}}, {{/unless}}{{/each}}
  {{{raw}}} {{raw}}
</section>
{{else}}<p>nobody</p>
{{/each}}
<table>{{#each customers}}{{> row}}{{/each}}</table>
{{#times 5}}[{{i}}{{#if odd}}*{{/if}}]{{/times}}
{{#if (eq title "Report")}}equal{{else if false}}never{{else}}different{{/if}}
`, { strict: false });

let seed = 3;
const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
const customers = Array.from({ length: 120 }, (_, i) => {
  const orders = Array.from({ length: Math.floor(rnd() * 5) }, (_, j) => { const qty = 1 + Math.floor(rnd() * 9); const price = Math.floor(rnd() * 5000) / 100; return { item: `item-${i}-${j}`, qty, total: qty * price }; });
  const sum = orders.reduce((a, o) => a + o.total, 0);
  return { id: i, name: `Customer <${i}> & "co"`, vip: i % 11 === 0, address: { street: `${i} Main St`, city: ['Oslo', 'Lima', 'Pune'][i % 3], zip: i % 2 ? `0${i}` : '' }, orders, stats: { count: orders.length, sum }, total: sum, tags: ['a', 'b', 'c'].slice(0, i % 4), raw: `<em>${i}</em>` };
});
const html = page({ title: 'Report', customers });
process.stdout.write(html);
process.stdout.write(`\n==== empty\n${page({ title: 'Empty', customers: [] })}`);
const pre = Handlebars.precompile('{{#each items}}<li>{{this}}</li>{{/each}}');
process.stdout.write(`==== precompiled\n${pre}\n`);
const runtime = Handlebars.template((0, eval)(`(${pre})`));
process.stdout.write(`==== from precompiled\n${runtime({ items: ['x', 'y', '<z>'] })}\n`);
try {
  hb.compile('{{#each x}}{{/with}}')({});
} catch (e) {
  process.stdout.write(`==== error\n${e.message}\n`);
}
process.stderr.write(`handlebars ${Handlebars.VERSION}: ${html.length} characters\n`);
