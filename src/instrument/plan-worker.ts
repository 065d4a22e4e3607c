// Worker thread entry: plans LiveEdits (analysis and the model of V8's diff can
// take many seconds on a large script) off the tool's own thread, so sampling and
// other sessions go on meanwhile. One worker serves every plan of the tool (see
// planLiveEditOffThread): starting one and loading the parser took 230-490 ms a
// script, more than planning a small script at all.
import { parentPort } from 'worker_threads';
import { planLiveEdit } from './liveedit';

interface PlanRequest { id: number; source: string; scriptNo: number; heapBytes: number; naming: { filename?: string; cwd: string } }

parentPort!.on('message', ({ id, source, scriptNo, heapBytes, naming }: PlanRequest) => {
  try {
    parentPort!.postMessage({ id, plan: planLiveEdit(source, scriptNo, heapBytes, naming) });
  } catch (e) {
    parentPort!.postMessage({ id, error: (e as Error).message ?? String(e) });
  }
});
