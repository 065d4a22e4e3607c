// `--probe '<point>: <snippet>'` requests: a function resource (or glob) with
// a point selector, optional placement words, then the snippet.
//   /Code/app.js/f.entry: c++
//   /Code/lib/*.js/*.calls postInsn append: stopTimer(t)
//   /Code/app.js/main.call(parse): n++

import { compileSnippet, PointClass } from './snippet';

export interface ProbeRequest {
  text: string;
  /** the resource glob, e.g. /Code/lib/*.js/parse */
  resource: string;
  /** entry | exit | throw (exits by exception) | calls | call:<callee> | await | resume | loops (each loop's entry) | trips (each iteration) */
  point: string;
  where: 'preInsn' | 'postInsn';
  order: 'append' | 'prepend';
  snippet: string;
}

/** A probe that cannot be read; line and column are in the probe's text (1-based). */
export class ProbeSyntaxError extends Error {
  constructor(message: string, readonly line = 1, readonly column = 1) {
    super(`${message} (probe line ${line}, column ${column})`);
  }
}

const PROBE_RE = /^\s*(\/Code\/.+?)\.(entry|exit|throw|calls|await|resume|loops|trips|call\(([^)]*)\))((?:\s+(?:preInsn|postInsn|append|prepend))*)\s*:(.*)$/s;
/** the same shape, loosely: to say which part of a probe that does not match is wrong */
const LOOSE_RE = /^(\s*)(\S+?)\.([^\s.:(]*)(\([^)]*\)?)?((?:\s+[^\s:]+)*)\s*:/s;
const POINT_WORDS = ['entry', 'exit', 'throw', 'calls', 'await', 'resume', 'loops', 'trips'];
const PLACEMENT_WORDS = ['preInsn', 'postInsn', 'append', 'prepend'];
const EXPECTED = "expected '/Code/<module>/<function>.(entry|exit|throw|calls|call(<callee>)|await|resume|loops|trips) [preInsn|postInsn] [append|prepend]: <snippet>'";

/**
 * Read a probe: its resource, point, placement and snippet, the snippet
 * compiled for its point. Every error a probe's text can have is raised here
 * (ProbeSyntaxError, located in the probe; SnippetError, located in the
 * snippet), so a probe can be checked before any process is touched.
 * `timerKinds` carries the timers' kinds (wall or CPU) across probes.
 */
export function parseProbe(text: string, timerKinds?: Map<string, 'wall' | 'cpu'>): ProbeRequest {
  const m = PROBE_RE.exec(text);
  if (!m) throw whyNot(text);
  const words = m[4].trim().split(/\s+/).filter(Boolean);
  const where = words.includes('postInsn') ? 'postInsn' : 'preInsn';
  const order = words.includes('prepend') ? 'prepend' : 'append';
  const point = m[2].startsWith('call(') ? `call:${m[3].trim()}` : m[2];
  if (point === 'call:') throw located(text, text.indexOf('.call(', m.index + m[1].length) + 1, '.call() needs a callee name');
  const snippet = m[5].trim();
  if (!snippet) throw located(text, text.length, "the snippet after ':' is empty");
  try {
    new RegExp(codeGlobToRegex(m[1]));
  } catch {
    throw located(text, text.indexOf('/Code/'), `cannot match functions by "${m[1]}"`);
  }
  compileSnippet(snippet, { point: pointClass(point), timerKinds });
  return { text, resource: m[1], point, where, order, snippet };
}

/** Read several probes as one request: a timer is the same kind (wall or CPU) in all of them. */
export function parseProbes(texts: string[]): ProbeRequest[] {
  const kinds = new Map<string, 'wall' | 'cpu'>();
  return texts.map((t) => parseProbe(t, kinds));
}

/** The error of a probe PROBE_RE does not match, at the part that is wrong. */
function whyNot(text: string): ProbeSyntaxError {
  const first = text.search(/\S/);
  if (first < 0) return located(text, 0, `empty probe: ${EXPECTED}`);
  if (!text.startsWith('/Code/', first)) return located(text, first, `a probe starts with a /Code/ resource: ${EXPECTED}`);
  const m = LOOSE_RE.exec(text);
  if (!m) {
    if (!text.includes(':', first)) return located(text, text.length, `expected ':' and a snippet: ${EXPECTED}`);
    return located(text, first, EXPECTED);
  }
  const pointAt = m[1].length + m[2].length + 1;
  if (m[3] === 'call') {
    if (!m[4]?.endsWith(')')) return located(text, pointAt + 4, "expected call(<callee>) with ')'");
  } else if (!POINT_WORDS.includes(m[3]) || m[4]) {
    return located(text, pointAt, `unknown point "${m[3]}${m[4] ?? ''}" (known: ${POINT_WORDS.join(', ')}, call(<callee>))`);
  }
  let at = pointAt + m[3].length + (m[4]?.length ?? 0);
  for (const w of m[5].split(/(\s+)/)) {
    if (w && !/^\s+$/.test(w) && !PLACEMENT_WORDS.includes(w)) return located(text, at, `unknown placement "${w}" (known: ${PLACEMENT_WORDS.join(', ')})`);
    at += w.length;
  }
  return located(text, first, EXPECTED);
}

/** An error at character `i` of the probe text. */
function located(text: string, i: number, message: string): ProbeSyntaxError {
  const before = text.slice(0, Math.max(0, i));
  const line = before.split('\n').length;
  return new ProbeSyntaxError(message, line, before.length - before.lastIndexOf('\n'));
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
export function pointClass(point: string): PointClass {
  if (point === 'calls' || point === 'outercalls' || point.startsWith('call:') || point.startsWith('inner:')) return 'call';
  if (point === 'outerawait' || point.startsWith('innerawait:')) return 'await';
  if (point === 'outerresume' || point.startsWith('innerresume:')) return 'resume';
  if (/^(loop|loopexit|trip):/.test(point) || point === 'trips' || point === 'loops') return 'loop';
  if (point.startsWith('loopawait:')) return 'await';
  if (point.startsWith('loopresume:')) return 'resume';
  if (point === 'throw') return 'exit';
  return point as 'entry' | 'exit' | 'await' | 'resume';
}
