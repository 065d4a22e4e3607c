// The Metric Description Language as parsed: lists, constraints and metrics
// (MDL paper, section 2), with JavaScript's points (entry, exit, calls, await,
// resume) and snippets in the core's snippet language.

export interface Pos { file: string; line: number; column: number }

export type Aggregate = 'sum' | 'avg' | 'min' | 'max';
export type Style = 'EventCounter' | 'SampledFunction';
/** what a metric's value is: a counter, a timer, a value the runtime measures for a whole thread, or a call path's statistic */
export type BaseType = 'counter' | 'wallTimer' | 'processTimer' | 'thread' | 'path';

/** the statistics of a call path a `base is path "<stat>"` metric can read */
export const PATH_STATS = ['calls', 'wall', 'wall_exclusive', 'cpu', 'cpu_exclusive', 'wait'] as const;

export interface ListDecl {
  kind: 'list';
  name: string;
  /** procedure: items are functions (or globs) under /Code; string: items are plain values */
  type: 'procedure' | 'module' | 'string';
  flavor: string[];
  items: string[];
  pos: Pos;
}

export interface ConstraintDecl {
  kind: 'constraint';
  name: string;
  /**
   * the hierarchy of the resources it applies to: '/Code' (modules), '/Code/*'
   * (functions), '/Thread', '/Process', '/Machine', '/SyncObject/...'
   */
  hierarchy: string;
  /**
   * counter: its code keeps a flag that is true while the resource is active
   * (combined with "and" into `constrained` snippets); replace: its code drives
   * the metric's own counter or timer instead of the base; placement: nothing
   * is inserted, the metric's code is placed only in the selected thread/process
   */
  type: 'counter' | 'replace' | 'placement';
  body: Stmt[];
  pos: Pos;
}

export interface MetricDecl {
  kind: 'metric';
  name: string;
  title: string;
  units: string;
  aggregate: Aggregate;
  style: Style;
  flavor: string[];
  constraints: { name: string; pos: Pos }[];
  base: { type: BaseType; body: Stmt[]; source?: string; pos: Pos };
  pos: Pos;
}

export type Decl = ListDecl | ConstraintDecl | MetricDecl;

/** a list: a declared one, $procedures, or an attribute of $constraint[i] / a foreach variable */
export type ListRef =
  | { kind: 'name'; name: string; pos: Pos }
  | { kind: 'procedures'; pos: Pos }
  | { kind: 'attr'; of: ResourceRef; attr: 'funcs'; pos: Pos };

/** a resource: $constraint[i] or a foreach variable */
export type ResourceRef = { kind: 'constraint'; index: number; pos: Pos } | { kind: 'var'; name: string; pos: Pos };

/** a function's loops (each loop's entry) and trips (each iteration of each loop); a loop's entry, exit, trips, await and resume (the function's, inside the loop) */
export type PointAttr = 'entry' | 'exit' | 'throw' | 'calls' | 'inner' | 'innerawait' | 'innerresume' | 'await' | 'resume' | 'outercalls' | 'outerawait' | 'outerresume' | 'loops' | 'trips';

export interface PointRef { of: ResourceRef; attr: PointAttr; callee?: string; pos: Pos }

export type Stmt =
  | { kind: 'foreach'; variable: string; list: ListRef; body: Stmt[]; pos: Pos }
  | { kind: 'insert'; order: 'append' | 'prepend'; where: 'preInsn' | 'postInsn'; point: PointRef; constrained: boolean; snippet: string; snippetPos: Pos; pos: Pos };
