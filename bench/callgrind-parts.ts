// A callgrind count split by who executed the instructions: the program
// itself (V8's generated code, its builtins, the interpreter and the runtime
// functions they call), V8's compilers and parser, and the garbage collector.
// Under --predictable V8 compiles and collects on the program's thread, and
// those two parts move with *when* a collection or a tier-up falls, not with
// what the program runs: a dormant build with an entry slot only, whose own
// instructions read 0.1 % under plain, read +17 % in all (section 57).
import { spawnSync } from 'child_process';

export interface InstructionParts {
  /** every instruction of the process */
  total: number;
  /** the program's own: generated code, builtins (the interpreter's handlers among them), runtime */
  program: number;
  /** V8's compilers (Sparkplug, Maglev, TurboFan), its parser and code (de)serializer */
  compiler: number;
  /** the garbage collector: marking, sweeping, scavenging, evacuation, write barriers' slow paths */
  gc: number;
}

const COMPILER = /compiler::|maglev::|turboshaft|baseline::|Pipeline|Compil|Serializer|Deserializ|CodeGenerator|Assembler|Scanner|Parser|AstValue|Zone::|Scope::/;
const GC = /Mark|Sweep|Scaveng|Evacuat|RecordWrite|RecordMigrated|IteratePointers|BodyDescriptor|heap::|Heap::|HeapObject::SizeFromMap|LiveObject|Worklist|SlotSet|Remembered|Flush/;

/** Split `callgrind_annotate --threshold=100 --auto=no <out>`'s function list. */
export function instructionParts(annotated: string): InstructionParts {
  const parts: InstructionParts = { total: 0, program: 0, compiler: 0, gc: 0 };
  let inList = false;
  for (const line of annotated.split('\n')) {
    const m = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (!m) continue;
    const n = Number(m[1].replace(/,/g, ''));
    const name = m[2];
    if (name === 'PROGRAM TOTALS') { parts.total = n; inList = true; continue; }
    if (!inList) continue;
    if (GC.test(name)) parts.gc += n;
    else if (COMPILER.test(name)) parts.compiler += n;
    else parts.program += n;
  }
  return parts;
}

/** The parts of a callgrind output file (callgrind_annotate comes with valgrind). */
export function partsOfFile(out: string): InstructionParts {
  const r = spawnSync('callgrind_annotate', ['--threshold=100', '--auto=no', out], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`callgrind_annotate ${out} failed (${r.status}): ${(r.stderr ?? '').slice(-300)}`);
  const parts = instructionParts(r.stdout);
  if (!parts.total) throw new Error(`callgrind_annotate ${out}: no totals in its output`);
  return parts;
}
