// A real HTTP server for the loaded-server benchmark (issue #15): Fastify, and in
// its article route marked (Markdown), sanitize-html (htmlparser2) and a
// Handlebars layout; an order route validates its JSON body with Fastify's
// schema (ajv). Listens on 127.0.0.1, on the port given (0: any), and prints
// "listening <port>". Every response is computed afresh: no cache.
'use strict';
const fastify = require('fastify');
const { marked } = require('marked');
const sanitizeHtml = require('sanitize-html');
const Handlebars = require('handlebars');

const layout = Handlebars.compile(`<!doctype html>
<html><head><title>{{title}}</title></head>
<body><nav>{{#each links}}<a href="{{href}}">{{text}}</a> {{/each}}</nav>
<article>{{{body}}}</article>
<footer>{{author}} · {{words}} words</footer></body></html>`);

/** The Markdown of article `id`: headings, lists, a table, code, links and some inline HTML. */
function articleSource(id) {
  const parts = [`# Article ${id}\n`];
  for (let s = 0; s < 6; s++) {
    parts.push(`## Section ${s}\n\nSome *emphasis*, some **strong** text and \`code\` in paragraph ${s} of article ${id}. ` +
      `A [link](https://example.com/${id}/${s}) and <span class="note" onclick="x()">inline HTML</span>.\n`);
    parts.push(`- item one of ${s}\n- item two with <b>bold</b>\n- item three\n`);
    parts.push(`| a | b | c |\n|---|---|---|\n| ${id} | ${s} | ${id * s} |\n| x | y | z |\n`);
    parts.push('```js\nfunction f(x) { return x * ' + s + '; }\n```\n');
    parts.push(`<script>alert(${s})</script><img src="a.png" onerror="y()">\n`);
  }
  return parts.join('\n');
}

function cleanHtml(html) {
  return sanitizeHtml(html, {
    allowedTags: sanitizeHtml.defaults.allowedTags.concat(['img', 'span']),
    allowedAttributes: { a: ['href'], img: ['src'], span: ['class'] },
  });
}

function renderArticle(id) {
  const body = cleanHtml(marked.parse(articleSource(id)));
  const links = [];
  for (let i = 0; i < 8; i++) links.push({ href: `/article/${id + i}`, text: `Article ${id + i}` });
  return layout({ title: `Article ${id}`, links, body, author: 'paranode', words: body.split(/\s+/).length });
}

const orderSchema = {
  body: {
    type: 'object',
    required: ['customer', 'items'],
    properties: {
      customer: { type: 'string', minLength: 1 },
      items: { type: 'array', minItems: 1, items: { type: 'object', required: ['sku', 'qty'], properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } } } },
    },
  },
};

const app = fastify({ logger: false });
app.get('/article/:id', async (req, reply) => {
  reply.type('text/html');
  return renderArticle(Number(req.params.id) || 1);
});
app.post('/order', { schema: orderSchema }, async (req) => {
  let total = 0;
  for (const it of req.body.items) total += it.qty;
  return { ok: true, customer: req.body.customer, total };
});

app.listen({ host: '127.0.0.1', port: Number(process.argv[2] ?? 0) }).then(() => {
  console.log(`listening ${app.server.address().port}`);
});
process.on('SIGTERM', () => { app.close().then(() => process.exit(0)); });
