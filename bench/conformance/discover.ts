// Finding the tests: every .js file under <test262>/test/language except the
// fixtures other tests import (*_FIXTURE.js), filtered by substring or glob.
import * as fs from 'fs';
import * as path from 'path';
import { pathGlobToRegex } from '../../src/instrument/probe';

export class UsageError extends Error {}

export interface Suite {
  root: string;
  harnessDir: string;
  languageDir: string;
}

/** Check that `dir` is a test262 checkout (harness/ and test/language/) and say what is missing if not. */
export function locateSuite(dir: string): Suite {
  const root = path.resolve(dir);
  if (!fs.existsSync(root)) throw new UsageError(`${root}: no such directory (expected a test262 checkout with harness/ and test/language/)`);
  if (!fs.statSync(root).isDirectory()) throw new UsageError(`${root} is not a directory (expected a test262 checkout with harness/ and test/language/)`);
  const harnessDir = path.join(root, 'harness');
  const languageDir = path.join(root, 'test', 'language');
  const missing = [
    !fs.existsSync(path.join(harnessDir, 'assert.js')) && 'harness/assert.js',
    !fs.existsSync(path.join(harnessDir, 'doneprintHandle.js')) && 'harness/doneprintHandle.js',
    !fs.existsSync(languageDir) && 'test/language/',
  ].filter(Boolean);
  if (missing.length) throw new UsageError(`${root} does not look like a test262 checkout: ${missing.join(', ')} missing`);
  return { root, harnessDir, languageDir };
}

export function findTests(suite: Suite): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && e.name.endsWith('.js') && !e.name.includes('_FIXTURE')) out.push(path.relative(suite.root, p).split(path.sep).join('/'));
    }
  };
  walk(suite.languageDir);
  return out.sort();
}

/** A filter with * or ? is a glob over the path from the test262 root (** crosses /), otherwise a substring. */
export function makeFilter(pattern: string | undefined): (rel: string) => boolean {
  if (!pattern) return () => true;
  if (!/[*?]/.test(pattern)) return (rel) => rel.includes(pattern);
  // a glob may name the path from the root or any tail of it
  const rx = new RegExp(`(^|/)${pathGlobToRegex(pattern)}$`);
  return (rel) => rx.test(rel);
}
