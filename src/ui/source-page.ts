// A program's source file as a page, its lines numbered and one marked: where
// the report's links lead. Also the few lines around one, kept with the report.
import * as fs from 'fs';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** "<module>:<line>" -> its parts (a module name may hold ':' itself, as node:fs does) */
export function parseSourceAt(at: string): { module: string; line: number } | null {
  const m = /^(.+):(\d+)$/.exec(at);
  return m ? { module: m[1], line: Number(m[2]) } : null;
}

export function sourcePage(file: string, module: string, line: number): string {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const rows = lines.map((l, k) => `<tr id="L${k + 1}"${k + 1 === line ? ' class="at"' : ''}><td>${k + 1}</td><td>${escape(l)}</td></tr>`).join('\n');
  return `<!doctype html><meta charset="utf-8"><title>${escape(module)}:${line}</title>
<style>body{font:13px ui-monospace,monospace;margin:0}h1{font:600 14px system-ui;padding:8px 12px;margin:0;background:#f4f4f4}
table{border-collapse:collapse}td{white-space:pre;padding:0 8px}td:first-child{color:#999;text-align:right;user-select:none}
tr.at{background:#fff3b0}</style>
<h1>${escape(module)}, line ${line}</h1><table>${rows}</table>`;
}

/** the lines from `line - around` to `line + around` (null: the file cannot be read) */
export function excerpt(file: string, line: number, around = 5): { first: number; lines: string[] } | null {
  try {
    const all = fs.readFileSync(file, 'utf8').split('\n');
    const first = Math.max(1, line - around);
    return { first, lines: all.slice(first - 1, line + around) };
  } catch {
    return null;
  }
}
