// ES-module-only package: micromark (pure ESM, ~20 small ES modules, a
// state machine of closures) compiles fixed Markdown to HTML, whole and as a
// stream; imported from an .mjs driver.
import { readFileSync } from 'node:fs';
import { micromark } from 'micromark';
import { stream } from 'micromark/stream';

const notes = readFileSync(new URL('./inputs/notes.md', import.meta.url), 'utf8');
// a larger fixed document: the notes, then generated sections of every construct
const parts = [notes];
for (let i = 0; i < 60; i++) {
  parts.push(`\n## Section ${i} *with* \`code ${i}\`\n\n${'word '.repeat(i % 9)}[link ${i}](https://example.com/${i}?q=${i}&x "t${i}") **bold _nested ${i}_**\n\n` +
    `${i % 2 ? '- item\n- item [x]\n  continued\n' : '1. one\n2. two\n\n   para in item\n'}\n> quote ${i}\n> > nested\n\n` +
    `\`\`\`lang${i}\nfenced ${i} <not html>\n\`\`\`\n\n    indented code ${i}\n\n<div class="c${i}">\n*raw* html\n</div>\n\n` +
    `Autolink <mailto:a${i}@b.c> and &amp; &#${65 + i}; \\* escaped \\_\n***\n`);
}
const doc = parts.join('');
const html = micromark(doc);
const unsafe = micromark(doc, { allowDangerousHtml: true, allowDangerousProtocol: true });
process.stdout.write(`==== safe (${html.length})\n${html}\n==== dangerous html allowed (${unsafe.length})\n${unsafe}\n`);

// the same document as a stream of small chunks: the result is the same
const s = stream();
let streamed = '';
s.on('data', (d) => { streamed += d; });
await new Promise((resolve) => {
  s.on('end', resolve);
  for (let i = 0; i < doc.length; i += 97) s.write(doc.slice(i, i + 97));
  s.end();
});
process.stdout.write(`streamed equals whole: ${streamed === html}\n`);
process.stderr.write(`micromark: ${doc.length} characters in, ${html.length} out\n`);
