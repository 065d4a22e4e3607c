// TypeScript run by Node itself (`node app.ts`: type stripping, Node 22.6+
// behind a flag, on by default in 24 and 26): its load step answers the
// module's TypeScript text with format "commonjs-typescript" or
// "module-typescript", and Node strips the types after every hook has run, so
// paranode's preparer (a JavaScript parser) never saw it and the program ran
// unprepared. Here the types are stripped first, by amaro, the library Node
// strips them with, in the same mode (each type replaced by whitespace: every
// line and column stays where it was, so stack traces and resource lines are
// the .ts file's), and the JavaScript is prepared as any other. It is handed
// back as TypeScript: Node strips it again (nothing is left to strip) and names
// the script as it names TypeScript (a file: URL in stack traces on 24 and 26).
// module.stripTypeScriptTypes would do the same but prints an
// ExperimentalWarning into the program's stderr (Node 22, 24, 26).
import { forgetOwnModules, ownCodeDirs } from './own-code';

type Amaro = { transformSync(source: string, opts: { mode: 'strip-only' }): { code: string } };
let amaro: Amaro | null | undefined;

/** The JavaScript format a TypeScript format becomes, or null for any other. */
export function strippedFormat(format: string | undefined): 'commonjs' | 'module' | null {
  return format === 'commonjs-typescript' ? 'commonjs' : format === 'module-typescript' ? 'module' : null;
}

/** The source with its types replaced by whitespace; throws where amaro cannot (Node then strips it itself, or reports the error). */
export function stripTypes(source: string): string {
  if (amaro === undefined) {
    try {
      amaro = require('amaro') as Amaro;
    } catch {
      amaro = null;
    } finally {
      // loaded in the program's thread: out of its require.cache, as paranode's other modules
      forgetOwnModules(ownCodeDirs());
    }
  }
  if (!amaro) throw new Error('amaro (the TypeScript type stripper) is not installed beside paranode');
  return amaro.transformSync(source, { mode: 'strip-only' }).code;
}
