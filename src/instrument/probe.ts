// `--probe '<point>: <snippet>'` requests: a function resource (or glob) with
// a point selector, optional placement words, then the snippet.
//   /Code/app.js/f.entry: c++
//   /Code/lib/*.js/*.calls postInsn append: stopTimer(t)
//   /Code/app.js/main.call(parse): n++

export interface ProbeRequest {
  text: string;
  /** the resource glob, e.g. /Code/lib/*.js/parse */
  resource: string;
  /** entry | exit | throw (exits by exception) | calls | call:<callee> | await | resume */
  point: string;
  where: 'preInsn' | 'postInsn';
  order: 'append' | 'prepend';
  snippet: string;
}

export class ProbeSyntaxError extends Error {}

const PROBE_RE = /^\s*(\/Code\/.+?)\.(entry|exit|throw|calls|await|resume|call\(([^)]*)\))((?:\s+(?:preInsn|postInsn|append|prepend))*)\s*:(.*)$/s;

export function parseProbe(text: string): ProbeRequest {
  const m = PROBE_RE.exec(text);
  if (!m) {
    throw new ProbeSyntaxError(`cannot read probe "${text}": expected '/Code/<module>/<function>.(entry|exit|throw|calls|call(<callee>)|await|resume) [preInsn|postInsn] [append|prepend]: <snippet>'`);
  }
  const words = m[4].trim().split(/\s+/).filter(Boolean);
  const where = words.includes('postInsn') ? 'postInsn' : 'preInsn';
  const order = words.includes('prepend') ? 'prepend' : 'append';
  const point = m[2].startsWith('call(') ? `call:${m[3].trim()}` : m[2];
  if (point === 'call:') throw new ProbeSyntaxError(`probe "${text}": .call() needs a callee name`);
  const snippet = m[5].trim();
  if (!snippet) throw new ProbeSyntaxError(`probe "${text}": the snippet after ':' is empty`);
  return { text, resource: m[1], point, where, order, snippet };
}

/** Glob over "<module>/<function>" (the part after /Code/): * within a path component, ** across. */
export function codeGlobToRegex(resource: string): string {
  if (!resource.startsWith('/Code/')) throw new ProbeSyntaxError(`"${resource}" is not a code resource (it must start with /Code/)`);
  return `^${pathGlobToRegex(resource.slice('/Code/'.length))}$`;
}

/** A path glob as regular expression source, unanchored: * within a path component, ** across, ? one character. */
export function pathGlobToRegex(glob: string): string {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') { re += '.*'; i++; } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return re;
}

/** The snippet context of a point selector. */
export function pointClass(point: string): 'entry' | 'exit' | 'call' | 'await' | 'resume' {
  if (point === 'calls' || point.startsWith('call:') || point.startsWith('inner:')) return 'call';
  if (point === 'throw') return 'exit';
  return point as 'entry' | 'exit' | 'await' | 'resume';
}
