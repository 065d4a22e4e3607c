// 5. A real workload whose every module is prepared with slots but has nothing
// switched on (Session.launch with no probes), against the plain run; plain and
// launched runs alternate.
import { spawn } from 'child_process';
import { createHash } from 'crypto';
import { Session } from '../src/api';
import { BenchOptions, FIXTURES, fmt, median, Proc, progress, ratio, Section, table, TARGETS, timeMs } from './lib';

interface Run { wallMs: number; out: string }

type Mode = 'plain' | 'launch' | 'slots' | 'attached';
const WORK_MODES: Mode[] = ['plain', 'launch', 'slots', 'attached'];

async function runPlain(script: string, cwd: string, args: string[] = [], nodeArgs: string[] = []): Promise<Run> {
  const t0 = timeMs();
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (d: Buffer) => chunks.push(d));
  const code = await new Promise<number | null>((r) => child.once('close', (c) => r(c)));
  const wallMs = timeMs() - t0;
  if (code !== 0) throw new Error(`node ${script} exited with ${code}`);
  return { wallMs, out: Buffer.concat(chunks).toString('utf8') };
}

async function runLaunched(script: string, cwd: string, args: string[] = []): Promise<Run & { session: Session }> {
  const t0 = timeMs();
  const session = await Session.launch([process.execPath, script, ...args], [], { stdio: 'pipe', cwd });
  const chunks: Buffer[] = [];
  session.child!.stdout!.on('data', (d: Buffer) => chunks.push(d));
  session.child!.stdin!.end();
  const closed = new Promise<void>((r) => session.child!.once('close', () => r()));
  await session.waitForExit();
  await closed;
  const wallMs = timeMs() - t0;
  if (session.exitCode !== 0) throw new Error(`launched node ${script} exited with ${session.exitCode}`);
  return { wallMs, out: Buffer.concat(chunks).toString('utf8'), session };
}

/** Attach to a plain work.js that waits, then let it work: the agent runs, nothing is prepared. */
async function runAttached(args: string[]): Promise<string> {
  const p = Proc.spawn('work.js', [...args, 'wait']);
  await p.waitFor(/loaded/, 0);
  const s = await Session.attach(p.pid);
  const m = await p.request('go', /work \S+ \S+ \S+\n/);
  await s.waitForExit();
  await p.exited;
  return m[0];
}

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12);

export async function benchWorkload(opts: BenchOptions): Promise<Section> {
  const runs = opts.quick ? 3 : 5;
  const wallRuns = opts.quick ? 2 : 3;
  const reps: Record<string, number> = { esprima: opts.quick ? 8 : 20, marked: opts.quick ? 30 : 60 };
  const body: string[] = [];
  const inRows: string[][] = [];
  const diagRows: string[][] = [];
  const wallRows: string[][] = [];
  const checks: string[] = [];

  for (const lib of ['esprima', 'marked']) {
    // prepared at all? look once at a held launched target
    const held = await Session.launch([process.execPath, 'work.js', lib, '1', 'hold'], [], { stdio: 'pipe', cwd: TARGETS });
    const hp = new Proc(held.child!, `work.js ${lib} (held)`);
    await hp.waitFor(/work /, 0);
    const res = await held.resources('/Code/**');
    const byModule = new Map<string, number>();
    for (const r of res) if (r.prepared === 'load') byModule.set(r.module, (byModule.get(r.module) ?? 0) + 1);
    const libModules = [...byModule].filter(([m]) => m.includes(`node_modules/${lib}/`));
    checks.push(`${lib}: prepared at load time: ${[...byModule].map(([m, n]) => `\`${m}\` ${n} functions`).join(', ')}` +
      (held.notes.length ? `; notes: ${held.notes.join('; ')}` : ''));
    if (libModules.length === 0) checks.push(`**${lib}: the library module was NOT prepared**`);
    await hp.stop();
    await held.waitForExit();

    const work: Record<Mode, number[]> = { plain: [], launch: [], slots: [], attached: [] };
    const plainWall: number[] = [];
    const launchWall: number[] = [];
    const lens = new Set<string>();
    const outs = new Set<string>();
    const args = [lib, String(reps[lib])];
    for (let r = 0; r < runs; r++) {
      progress(`workload: ${lib}: run ${r + 1}/${runs} (in-program timing, ${WORK_MODES.length} kinds, rotating order)`);
      const order = WORK_MODES.map((_m, i) => WORK_MODES[(i + r) % WORK_MODES.length]);
      for (const mode of order) {
        let out: string;
        if (mode === 'plain') out = (await runPlain('work.js', TARGETS, args)).out;
        else if (mode === 'launch') out = (await runLaunched('work.js', TARGETS, args)).out;
        else if (mode === 'slots') out = (await runPlain('work.js', TARGETS, args, ['-r', './slots-only.js'])).out;
        else out = await runAttached(args);
        const m = out.match(/work (\S+) (\S+) (\S+)/);
        if (!m) throw new Error(`work.js ${lib} (${mode}) printed ${JSON.stringify(out.slice(0, 200))}`);
        work[mode].push(Number(m[1]));
        lens.add(m[3]);
      }
      if (r >= wallRuns) continue;
      progress(`workload: ${lib}: run ${r + 1}/${wallRuns} (whole process: test/fixtures/${lib}-run.js)`);
      for (const mode of r % 2 === 0 ? ['plain', 'launch'] : ['launch', 'plain']) {
        const run = mode === 'plain' ? await runPlain(`${lib}-run.js`, FIXTURES) : await runLaunched(`${lib}-run.js`, FIXTURES);
        (mode === 'plain' ? plainWall : launchWall).push(run.wallMs);
        outs.add(hash(run.out));
      }
    }
    const pw = median(work.plain);
    const cellOf = (xs: number[]) => `${fmt(median(xs), 1)} (${fmt(Math.min(...xs), 1)}-${fmt(Math.max(...xs), 1)})`;
    const over = (xs: number[]) => `${ratio(median(xs), pw)} (${((median(xs) / pw - 1) * 100).toFixed(1)} %)`;
    inRows.push([lib, `${reps[lib]} × ${lib === 'esprima' ? 'parse esprima.js (283 KB) with ranges, locations, tokens, comments' : 'render marked README × 20'}`,
      cellOf(work.plain), cellOf(work.launch), over(work.launch)]);
    diagRows.push([lib, cellOf(work.plain), `${cellOf(work.slots)}: ${over(work.slots)}`, `${cellOf(work.attached)}: ${over(work.attached)}`]);
    const pwl = median(plainWall), lwl = median(launchWall);
    wallRows.push([`test/fixtures/${lib}-run.js`,
      `${fmt(pwl, 0)} (${fmt(Math.min(...plainWall), 0)}-${fmt(Math.max(...plainWall), 0)})`,
      `${fmt(lwl, 0)} (${fmt(Math.min(...launchWall), 0)}-${fmt(Math.max(...launchWall), 0)})`,
      ratio(lwl, pwl), fmt(lwl - pwl, 0)]);
    checks.push(`${lib}: ${outs.size === 1 && lens.size === 1 ? `every in-program run gave the same result size (${[...lens][0]}), and plain and launched whole-process runs the same output (sha256 ${[...outs][0]}…)` : `**outputs differ** (${[...lens, ...outs].join(', ')})`}`);
  }
  body.push(`${runs} runs of each kind for the in-program timing (the kinds take turns, the order rotates every run), ` +
    `${wallRuns} of each for the whole-process timing (plain and launched alternate, the order flips every run). ` +
    '"Launched" is `Session.launch([node, script], [])` with no probe: the preload agent is running and every module the ' +
    'program loads is prepared at load time (slots at every point, all switched off).', '');
  body.push('Work timed inside the program (`bench/targets/work.js`: module loading and preparation happen before; untimed ' +
    'warm-up repetitions first, 5 for esprima and 30 for marked, then the timed ones), ms per repetition: for each run the median of its repetitions; ' +
    'median of those over the runs (min-max).', '');
  body.push(table(['library', 'work per run', 'plain', 'launched, nothing on', 'ratio (overhead)'], inRows), '');
  body.push('Diagnosis, same runs (the four kinds rotate): "slots only" runs the program with `-r bench/targets/slots-only.js`, a ' +
    'preload that installs paranode\'s runtime and load hook from `dist/` without the agent, its relay thread or an inspector ' +
    'session, so every module is prepared exactly as under launch; "attached, nothing prepared" is `Session.attach` to the ' +
    'plain program after it loaded its modules and before its work (agent, relay and `Debugger.enable` present, no slots). ' +
    'ms per repetition, median (min-max): ratio to plain (overhead).', '');
  body.push(table(['library', 'plain', 'slots only, no agent', 'attached, nothing prepared'], diagRows), '');
  body.push('Whole process, wall time from spawn to exit as seen by the tool (includes node start-up, for the launched run ' +
    'the agent start-up and connection, and the load-time preparation of every module), ms: median (min-max).', '');
  body.push(table(['program', 'plain', 'launched, nothing on', 'ratio', 'difference ms'], wallRows), '');
  body.push('Goal: the prepared program, nothing switched on, within 2 % of the unprepared one (in-program work).', '');
  body.push(`Checks: ${checks.join('. ')}.`);
  return { title: '5. A real workload prepared with nothing switched on', body };
}
