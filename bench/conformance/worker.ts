// A worker process: runs the tests it is sent, one at a time, every run of a
// test in this process (original, slots-off, slots-on, per mode), and reports
// each run as it ends. The runner kills it if it stops answering (a hung test).
import * as fs from 'fs';
import { modesOf, TestRun, type RunOutcome } from './execute';
import { MetadataError, parseMetadata, type TestMeta } from './metadata';
import { VARIANTS } from './prepare';
import type { TaskMsg, WorkerMsg } from './protocol';

// a test's own stray rejections and exceptions are not the runner's
process.on('unhandledRejection', () => undefined);
process.on('uncaughtException', () => undefined);
// the runner went away (killed, crashed): so do we
process.on('disconnect', () => process.exit(0));

const send = (m: WorkerMsg): Promise<void> => new Promise((resolve) => { process.send!(m, undefined, undefined, () => resolve()); });
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

async function runTask(t: TaskMsg): Promise<void> {
  const source = fs.readFileSync(t.file, 'utf8');
  let meta: TestMeta;
  try {
    meta = parseMetadata(source, t.rel);
  } catch (e) {
    await send({ type: 'end', id: t.id, metaError: e instanceof MetadataError ? e.message : String(e), rss: process.memoryUsage.rss() });
    return;
  }
  // a worker process's main thread can block (Atomics.wait): tests for hosts that cannot do not apply
  if (meta.flags.includes('CanBlockIsFalse')) {
    await send({ type: 'end', id: t.id, meta, skipped: 'CanBlockIsFalse (this host can block)', rss: process.memoryUsage.rss() });
    return;
  }
  for (const mode of modesOf(meta)) {
    let originalOk = t.decided[`${mode}/original`];
    for (const variant of VARIANTS) {
      const run = `${mode}/${variant}`;
      if (t.decided[run] !== undefined) continue;
      if (variant !== 'original' && !originalOk) break;
      await send({ type: 'begin', id: t.id, run });
      let outcome: RunOutcome;
      try {
        outcome = await new TestRun({ file: t.file, rel: t.rel, source, meta, mode, variant, harnessDir: t.harnessDir, asyncTimeoutMs: t.asyncTimeoutMs }).run();
      } catch (e) {
        outcome = { ok: false, phase: 'crash', error: `runner error: ${String((e as Error)?.stack ?? e)}` };
      }
      // let the run's leftover jobs finish before the next run starts
      await turn();
      if (variant === 'original') originalOk = outcome.ok;
      await send({ type: 'result', id: t.id, run, outcome });
    }
  }
  await send({ type: 'end', id: t.id, meta, rss: process.memoryUsage.rss() });
}

let chain = Promise.resolve();
process.on('message', (m: TaskMsg | { type: 'exit' }) => {
  if (m.type === 'exit') { chain = chain.then(() => process.exit(0)); return; }
  chain = chain.then(() => runTask(m)).catch((e) => { process.stderr.write(`worker: ${String(e?.stack ?? e)}\n`); process.exit(70); });
});
