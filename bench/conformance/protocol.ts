// Messages between the runner and its worker processes.
import type { RunOutcome } from './execute';
import type { TestMeta } from './metadata';

export interface TaskMsg {
  type: 'task';
  id: number;
  file: string;
  rel: string;
  harnessDir: string;
  asyncTimeoutMs: number;
  /** runs already decided (by an earlier worker that was killed): run id -> passed */
  decided: Record<string, boolean>;
}

/** run id: "<mode>/<variant>", e.g. "strict/slots-on" */
export type WorkerMsg =
  | { type: 'begin'; id: number; run: string }
  | { type: 'result'; id: number; run: string; outcome: RunOutcome }
  | { type: 'end'; id: number; meta?: TestMeta; metaError?: string; skipped?: string; rss: number };
