// Worker thread entry: plans a LiveEdit (analysis and the model of V8's diff
// can take many seconds on a large script) off the tool's own thread, so
// sampling and other sessions go on meanwhile.
import { parentPort, workerData } from 'worker_threads';
import { planLiveEdit } from './liveedit';

const { source, scriptNo, heapBytes, naming } = workerData as { source: string; scriptNo: number; heapBytes: number; naming: { filename?: string; cwd: string } };
try {
  parentPort!.postMessage({ plan: planLiveEdit(source, scriptNo, heapBytes, naming) });
} catch (e) {
  parentPort!.postMessage({ error: (e as Error).message ?? String(e) });
}
