// The messages between `paranode ui`'s server and its page, over one WebSocket
// (JSON, one message per frame). Types only: the server (src/ui) and the page
// (src/ui/client, bundled for the browser) both import them.

/** a thread of a target process, as the page labels it */
export interface ThreadInfo {
  /** 'main' or a worker's thread id */
  id: string;
  /** /Thread/<pid>/<id> */
  focus: string;
}

export interface ProcessInfo {
  pid: number;
  /** /Process/<host>:<pid> */
  focus: string;
  /** e.g. "node demo/cpu-bound.js 60 (pid 1234)" */
  label: string;
  threads: ThreadInfo[];
  /** null while it runs; else how it ended ("exited with code 0", "detached") */
  ended: string | null;
}

export interface MetricInfo {
  name: string;
  title: string;
  units: string;
  /** the resource hierarchies a focus of this metric may name (e.g. '/Code/*\/*', '/Thread', '/SyncObject/*'); none: the whole program only */
  hierarchies: string[];
}

/** One resource of a hierarchy, a node of the tree (its parent is the path up to its last '/'-part, as built by the page). */
export interface ResourceNode {
  /** the focus that names it, e.g. /Code/lib/parse.js/parseLine, /Code/lib/parse.js/parseLine/split(), /Code/lib/parse.js/parseLine/loop@12, /Thread/1234/main */
  path: string;
  kind: 'module' | 'function' | 'callsite' | 'loop' | 'process' | 'thread' | 'syncobject';
  /** what the tree shows (source-mapped where the code has a map); default: the last part of path */
  label?: string;
  /** "<module>:<line>" where it is in the source (functions and call sites) */
  source?: string;
  /** which process it belongs to */
  pid: number;
}

export interface InstanceData {
  /** "<metric>@<focus>": unique; what 'disable' names */
  key: string;
  metric: string;
  /** '' for the whole program */
  focus: string;
  units: string;
  /** the integral since enabled (calls, seconds, ...); for observed_cost the high bound */
  total: number;
  /** seconds per bucket: doubles when the histogram folds */
  bucketSeconds: number;
  /** per bucket, in the metric's units, a rate (calls/s, CPU s/s) (bucket k covers [k, k+1) × bucketSeconds since the session started) */
  buckets: number[];
  /** the cost predicted when it was enabled from the page (s/s, a share of one thread's time) */
  predictedCost?: number;
  /** enabled by the session itself (the command line, the consultant) rather than from the page */
  internal?: boolean;
  /** set where the value cannot be real (see MetricInstanceValue.implausible) */
  implausible?: string;
  /** set where the request was taken out (its price over --max-overhead): why; the value is what it measured until then */
  stopped?: string;
}

/** A node of the Performance Consultant's search history graph. */
export interface SearchNodeData {
  id: number;
  parent: number | null;
  hypothesis: string;
  focus: string;
  state: 'unknown' | 'waiting' | 'testing' | 'true' | 'false' | 'too costly' | 'not testable';
  value?: number;
  threshold: number;
  thread?: string;
  predictedCost?: number;
  tests: { from: number; to: number; value: number; verdict: boolean }[];
  /** "<module>:<line>" */
  source?: string;
  note?: string;
}

export interface CostPoint { t: number; observed: number; predicted: number; tests: number }

export interface BottleneckData {
  hypothesis: string;
  focus: string;
  value: number;
  threshold: number;
  /** "<module>:<line>" or null */
  source: string | null;
  thread: string | null;
  /** the source lines around it (read when the report was made: shown after the session has ended too) */
  excerpt?: { file: string; first: number; line: number; lines: string[] };
}

/** A node of a flame graph: a function on a call path, its inclusive and exclusive (self) values. */
export interface FlameNode {
  name: string;
  /** inclusive, in `units` of the FlameGraph */
  value: number;
  self: number;
  calls?: number;
  children: FlameNode[];
}

export interface FlameGraph {
  /** e.g. "process 1234, thread main: call paths (wall time)" */
  label: string;
  /** 'seconds' (a call-path profile) or 'samples' (stack samples) */
  units: 'seconds' | 'samples';
  root: FlameNode;
}

// ---- server -> page

export interface HelloMsg {
  type: 'hello';
  /** what the session is, e.g. "paranode diagnose -- node demo/cpu-bound.js 60" */
  title: string;
  processes: ProcessInfo[];
  metrics: MetricInfo[];
  /** a Performance Consultant search runs in this session */
  consultant: boolean;
  /** seconds since the session started, by the server's clock (times in other messages count from the same start) */
  t: number;
}

export interface ProcessesMsg { type: 'processes'; processes: ProcessInfo[] }
export interface ResourcesMsg { type: 'resources'; nodes: ResourceNode[] }
/** the values of every enabled metric instance (sent whole each time: the histograms are bounded) */
export interface InstancesMsg { type: 'instances'; t: number; instances: InstanceData[] }
/** the search: nodes that changed since the last message (all of them in the first), cost points added since */
export interface ConsultantMsg {
  type: 'consultant';
  t: number;
  nodes: SearchNodeData[];
  cost: CostPoint[];
  /** the perturbation limit, null: none */
  limit: number | null;
  complete: boolean;
}
export interface ReportMsg { type: 'report'; bottlenecks: BottleneckData[]; text: string }
export interface FlameMsg { type: 'flame'; graphs: FlameGraph[] }
/** the answer to a request of the page (same id) */
export interface ReplyMsg {
  type: 'reply';
  id: number;
  /** a prediction: the cost (s/s) and points */
  prediction?: { cost: number; points: number };
  /** an enable: the instance's key */
  key?: string;
  /** a listing asked for (Refresh): the resources now, whether or not a broadcast carried them */
  resources?: ResourceNode[];
  /** what went wrong, said as the command line says it */
  error?: string;
}
/** the session is over: the server stops listening after this */
export interface EndedMsg { type: 'ended'; why: string }

export type ServerMsg = HelloMsg | ProcessesMsg | ResourcesMsg | InstancesMsg | ConsultantMsg | ReportMsg | FlameMsg | ReplyMsg | EndedMsg;

// ---- page -> server

export type ClientMsg =
  | { type: 'predict'; id: number; metric: string; focus: string }
  | { type: 'enable'; id: number; metric: string; focus: string }
  | { type: 'disable'; id: number; key: string }
  /** list the resources again (code loaded since) */
  | { type: 'resources'; id: number };
