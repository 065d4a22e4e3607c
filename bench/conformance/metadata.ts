// test262 metadata: the YAML frontmatter between /*--- and ---*/ at the top of
// every test. Only the subset test262 writes is read: scalars, inline lists
// ([a, b]), block lists ("- a" lines), one level of mapping (negative:), and
// block scalars (| and >, skipped).

export interface Negative {
  phase: 'parse' | 'resolution' | 'runtime';
  type: string;
}

export interface TestMeta {
  includes: string[];
  flags: string[];
  features: string[];
  negative?: Negative;
}

export class MetadataError extends Error {}

const FRONT = /\/\*---\r?\n?([\s\S]*?)---\*\//;

export function parseMetadata(source: string, file: string): TestMeta {
  const m = FRONT.exec(source);
  if (!m) throw new MetadataError(`${file}: no /*--- ... ---*/ metadata block`);
  const raw = parseYamlSubset(m[1]);
  const list = (k: string): string[] => {
    const v = raw[k];
    if (v === undefined || v === '') return [];
    if (Array.isArray(v)) return v;
    if (typeof v === 'string') return [v];
    throw new MetadataError(`${file}: '${k}' is not a list`);
  };
  const meta: TestMeta = { includes: list('includes'), flags: list('flags'), features: list('features') };
  const neg = raw.negative;
  if (neg !== undefined) {
    if (typeof neg !== 'object' || Array.isArray(neg)) throw new MetadataError(`${file}: 'negative' is not a mapping`);
    const phase = neg.phase;
    if (phase !== 'parse' && phase !== 'resolution' && phase !== 'runtime') throw new MetadataError(`${file}: negative.phase '${String(phase)}' is not parse, resolution or runtime`);
    if (typeof neg.type !== 'string' || !neg.type) throw new MetadataError(`${file}: negative.type is missing`);
    meta.negative = { phase, type: neg.type };
  }
  return meta;
}

type Value = string | string[] | Record<string, string>;

function inlineList(v: string): string[] {
  return v.slice(1, v.lastIndexOf(']')).split(',').map((s) => unquote(s.trim())).filter(Boolean);
}

function unquote(s: string): string {
  const c = s[0];
  if ((c === '"' || c === "'") && s.endsWith(c) && s.length >= 2) return s.slice(1, -1);
  return s.replace(/\s+#.*$/, '');
}

export function parseYamlSubset(text: string): Record<string, any> {
  const lines = text.split(/\r?\n/);
  const out: Record<string, Value> = {};
  for (let i = 0; i < lines.length; i++) {
    const km = /^([A-Za-z_][\w-]*):\s*(.*?)\s*$/.exec(lines[i]);
    if (!km) continue;
    const [, key, value] = km;
    if (value === '|' || value === '>' || /^[|>][-+]?$/.test(value)) {
      // block scalar: skip its indented lines
      while (i + 1 < lines.length && (/^\s/.test(lines[i + 1]) || lines[i + 1] === '')) i++;
      out[key] = '';
      continue;
    }
    if (value.startsWith('[')) { out[key] = inlineList(value); continue; }
    if (value !== '') { out[key] = unquote(value); continue; }
    // block list or mapping
    const items: string[] = [];
    const map: Record<string, string> = {};
    let isMap = false;
    while (i + 1 < lines.length && /^\s+\S/.test(lines[i + 1])) {
      const l = lines[++i].trim();
      if (l.startsWith('- ')) items.push(unquote(l.slice(2).trim()));
      else {
        const mm = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(l);
        if (mm) { isMap = true; map[mm[1]] = unquote(mm[2].trim()); }
      }
    }
    out[key] = isMap ? map : items;
  }
  return out;
}
