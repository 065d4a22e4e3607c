// Call-path profiles (TAU's dynamic call-path profiling, issue #13): one
// profile per distinct path of instrumented functions, made the first time the
// path is seen. The thread keeps a shadow stack of the instrumented functions
// it is in; each frame stands at a node of a tree of folded full paths, so an
// entry costs a map lookup whatever the depth, and the tool cuts any length k
// from the full paths when it reads them (k is chosen per read, not per run).
//
// Recursion folds as Li and Zhang's statistics records do (no record of its
// own): a function entered while it is already on the stack goes back to the
// node it is active at, so no function is active at two nodes, and only the
// outermost activation of a node adds to its inclusive time.
//
// Async functions: an `await` ends the activation's segment and its frame
// leaves the stack; the resumption continues the same path (found through an
// AsyncLocalStorage store set at the await, which V8 carries to the
// continuation), and the time between is the path's waiting time. A generator
// resumed by next() runs each segment under the path of whoever resumed it.
import { AsyncLocalStorage } from 'async_hooks';

/**
 * The thread's CPU clock is a system call (0.4-0.9 µs a read on this project's
 * machines, against ~20 ns for the wall clock): it is read when this much wall
 * time has passed since its last read, and in between the thread counts as
 * running. So a wait shorter than this counts as CPU time; a longer one is
 * always seen (the read at its end finds the clock stopped).
 */
export const CPU_READ_GAP_MS = 0.02;

/** how a function suspends: an async function's awaits resume by themselves, a generator's yields by next() */
export type SuspendKind = 'await' | 'yield' | 'both' | 'none';

/** a function of the paths: its name ("<module>/<function>"), file, line (1-based) and column (0-based) */
export type PathFunction = [name: string, file: string, line: number, column: number];

/** per path (its functions' names joined by NUL, outermost first): calls, then ms: inclusive wall, exclusive wall, inclusive CPU, exclusive CPU, waiting */
export type PathRecord = [path: string, calls: number, inclWall: number, exclWall: number, inclCpu: number, exclCpu: number, wait: number,
  /** the same four times less the profile's own (intrusion compensation, see Overhead) */
  vInclWall: number, vExclWall: number, vInclCpu: number, vExclCpu: number,
  /** the path's own number in the thread (two functions of one name, a module loaded twice, give one path name twice); `path` is '' after its first record */
  id: number];

/**
 * What the profile's own work adds to the times it measures, in ms (Li and
 * Zhang's virtual time: real time less the instrumentation's): `own` inside
 * each segment of a frame (the work after the clock read that starts it and
 * before the one that ends it), `perChild` inside the caller's segment for each
 * segment of a callee (the work before the callee's first read and after its
 * last). Calibrated, and measured where the profile runs (see timed()).
 */
export interface Overhead { own: number; perChild: number }

/**
 * One operation in TIMED_EVERY is timed around from inside (see timed()): the
 * work before and after its boundary read, measured on the program's own paths
 * (its map lookups, its cache misses, its CPU clock reads), where the
 * calibration times one path of a small loop. Three more wall-clock reads per
 * TIMED_EVERY operations: about 1 ns an operation.
 */
export const TIMED_EVERY = 256;
/**
 * a timed operation longer than this (ms) was interrupted: dropped (one that reads the CPU
 * clock takes 0.5-1 µs with the timing's reads; an interrupt of 10 µs would move a window's
 * price by 20 ns)
 */
const TIMED_MAX_MS = 0.003;
/**
 * timed operations in a window: each window's price replaces the last (what the
 * profile's work costs changes as V8 optimizes it and as the program's paths do)
 */
export const TIMED_WINDOW = 512;

interface PathNode {
  fn: number;
  parent: PathNode | null;
  /** function id -> the node its entry here goes to (a folded ancestor for recursion) */
  next: Map<number, PathNode>;
  /** the last entry here, before the map: a loop calls the same function again and again */
  lastFn: number;
  lastNext: PathNode | null;
  /** frames on the stack at this node now: only the outermost adds inclusive time */
  active: number;
  path: string;
  v: Float64Array;
  dirty: boolean;
  /** its path name went to the tool: later records carry '' for it */
  sent: boolean;
}

/**
 * a frame's numbers in the stack's Float64Array: segment start (wall, CPU), its
 * callees' time (wall, CPU) and virtual time (wall, CPU), and the profile's own
 * work priced into the segments ended when it started (see `priced`)
 */
const WALL0 = 0, CPU0 = 1, CHILD_WALL = 2, CHILD_CPU = 3, CHILD_VWALL = 4, CHILD_VCPU = 5, PRICED0 = 6, FRAME = 7;
/** a node's values: calls, then ms: inclusive and exclusive wall, CPU, waiting, and the virtual four */
const VALUES = 10;

/** a suspended activation, as the await left it */
interface Suspended { node: PathNode; fn: number; at: number; resumed: boolean }

export class CallPaths {
  private root = CallPaths.rootNode();
  private nodes: PathNode[] = [];
  /**
   * The shadow stack, as arrays (no object per call): per frame its node, its
   * function, whether it is its node's outermost, and FRAME numbers
   */
  private depth = 0;
  private sNode: PathNode[] = [];
  private sFn = new Int32Array(64);
  private sOuter = new Uint8Array(64);
  private sNum = new Float64Array(64 * FRAME);
  /**
   * the profile's own work priced into every segment ended so far, ms, each its own and its
   * share of its caller's at the price when it ended (a frame's descendants are those ended
   * while it is on the stack: their price is what this grew by meanwhile, whatever the price
   * is when the frame ends, as their virtual times were)
   */
  private priced = 0;
  /** the profile's own cost: the starting price until a window is measured here, then the window's, never under the floor */
  overhead: Overhead = { own: 0, perChild: 0 };
  private floor: Overhead = { own: 0, perChild: 0 };
  /**
   * operations until the next timed one: gaps drawn at random, TIMED_EVERY on
   * average (a fixed gap would time the same point of a loop that makes a
   * multiple of it every turn); and the boundaries read (a timed operation that
   * read none, or two, says nothing)
   */
  private untilTimed = TIMED_EVERY;
  private rand = 0x2545f491;
  private boundaries = 0;
  /**
   * the timed operations' sums, ms, each with its count: of operations that
   * start a segment (enter, resume) the work before the boundary read (where
   * there is a caller) and after it; of those that end one (exit, await) the
   * work before it and after it (where there is a caller); a clock read's cost
   */
  private readonly timedSums = new Float64Array(10);
  /** operations timed so far in windows whose price was taken (0: not measured yet) */
  measuredFrom = 0;
  private store: AsyncLocalStorage<Suspended> | null = null;
  /** functions that appeared in a path since the last take (their ids), and all that have */
  private freshFns: number[] = [];
  private readonly seenFns = new Set<number>();
  /** the last read of the CPU clock, and the wall clock then */
  private cpuRead = 0;
  private cpuReadWall = -Infinity;
  /** the wall and CPU clocks at the latest boundary (see clocks()) */
  private wallNow = 0;
  private cpuNow = 0;
  /** per function id: its frames on the stack, and the node they all stand at */
  private fnActive = new Int32Array(256);
  private fnNode: (PathNode | undefined)[] = [];
  /** a check at the end of the current job is queued (see turnEnd) */
  private checkQueued = false;

  constructor(
    private readonly nameOf: (fn: number) => string,
    private readonly kindOf: (fn: number) => SuspendKind,
    private readonly now: () => number,
    private readonly cpu: () => number,
  ) {}

  /**
   * The price the profile starts from: calibrated (a floor: its own work is never priced
   * under it), or measured as it started (cold, an overestimate: replaced by the first window's).
   */
  startFrom(o: Overhead, floor: boolean): void {
    this.floor = floor ? { ...o } : { own: 0, perChild: 0 };
    this.overhead = { ...o };
  }

  enter(fn: number): void {
    if (--this.untilTimed === 0) this.timed(0, fn); else this.enterOp(fn);
  }

  exit(fn: number): void {
    if (--this.untilTimed === 0) this.timed(1, fn); else this.exitOp(fn);
  }

  suspend(fn: number): void {
    if (--this.untilTimed === 0) this.timed(2, fn); else this.suspendOp(fn);
  }

  resume(fn: number): void {
    if (--this.untilTimed === 0) this.timed(3, fn); else this.resumeOp(fn);
  }

  /**
   * An operation timed from inside (the seed's intrusion, measured as it
   * happens): t0 before it, its boundary read t1, t3 after it, t4 right after
   * t3, so r = t4 - t3 is a read's cost. A read takes the clock a fraction a
   * into it: the work counted into the segment before the boundary is
   * (t1 - t0) - (1 - a) r, into the one after it (t3 - t1) - a r. `own` and
   * `perChild` each take one side of an operation that starts a segment and
   * the other of one that ends one, so a cancels: (t1 - t0) + (t3 - t1) - r.
   */
  private timed(op: number, fn: number): void {
    // xorshift32: a gap in 1 .. 2 TIMED_EVERY - 1
    let x = this.rand;
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    this.rand = x;
    this.untilTimed = 1 + ((x >>> 0) % (2 * TIMED_EVERY - 1));
    const b = this.boundaries, d0 = this.depth;
    const t0 = this.now();
    if (op === 0) this.enterOp(fn); else if (op === 1) this.exitOp(fn); else if (op === 2) this.suspendOp(fn); else this.resumeOp(fn);
    const t3 = this.now();
    const t4 = this.now();
    // no boundary read, or two; or longer than any operation takes: the thread was preempted or collected garbage inside (not the profile's work)
    if (this.boundaries !== b + 1 || t4 - t0 > TIMED_MAX_MS) return;
    const s = this.timedSums, before = this.wallNow - t0, after = t3 - this.wallNow;
    // a side in the caller's segment counts only where there is a caller (an outermost
    // call's lookup, or a resumption's from the event loop, is in no segment)
    if (op === 0 || op === 3) {
      if (d0 > 0) { s[0] += before; s[1]++; }
      s[2] += after; s[3]++;
    } else {
      s[4] += before; s[5]++;
      if (this.depth > 0) { s[6] += after; s[7]++; }
    }
    s[8] += t4 - t3;
    s[9]++;
    if (s[9] >= TIMED_WINDOW && s[3] > 0 && s[5] > 0) this.measured();
  }

  /**
   * A window's price replaces the last, never under the floor (what the timed
   * span leaves out, the handler's call, a calibrated price has). Where no
   * timed operation had a caller, the caller's part stays as it was.
   */
  private measured(): void {
    const s = this.timedSums;
    const r = s[8] / s[9];
    // own: after the read that starts a segment, before the one that ends it; perChild: the other sides, in the caller's segment
    const own = s[2] / s[3] + s[4] / s[5] - r;
    const perChild = s[1] > 0 && s[7] > 0 ? Math.max(this.floor.perChild, s[0] / s[1] + s[6] / s[7] - r) : this.overhead.perChild;
    this.overhead = { own: Math.max(this.floor.own, own), perChild };
    this.measuredFrom += s[9];
    s.fill(0);
  }

  private enterOp(fn: number): void {
    // a function already on the stack (recursion, direct or not) goes back to its own node:
    // no function is ever active at two nodes, so no time is counted twice in any cut
    const node = fn < this.fnActive.length && this.fnActive[fn] > 0 ? this.fnNode[fn]! : this.child(this.depth ? this.sNode[this.depth - 1] : this.root, fn);
    node.v[0]++;
    node.dirty = true;
    this.push(node, fn);
  }

  private exitOp(fn: number): void {
    // frames above this function's own left without an exit (a function whose throw has no
    // slot): they end here; an exit with no frame (the call began before the profile) is not counted
    let i = this.depth - 1;
    while (i >= 0 && this.sFn[i] !== fn) i--;
    if (i < 0) return;
    this.clocks();
    while (this.depth > i) this.end();
  }

  private suspendOp(fn: number): void {
    if (!this.depth || this.sFn[this.depth - 1] !== fn) return;
    const node = this.sNode[this.depth - 1];
    this.clocks();
    this.end();
    if (this.kindOf(fn) === 'yield') return;
    this.store ??= new AsyncLocalStorage();
    // the await's continuation runs with the store as it is now: it finds this activation there
    this.store.enterWith({ node, fn, at: this.wallNow, resumed: false });
  }

  private resumeOp(fn: number): void {
    const s = this.kindOf(fn) === 'yield' ? undefined : this.store?.getStore();
    if (s && s.fn === fn && !s.resumed) {
      s.resumed = true;
      this.push(s.node, fn);
      s.node.v[5] += this.wallNow - s.at;
      s.node.dirty = true;
      return;
    }
    // a yield's resumption (or one whose await was not seen): under whoever resumed it
    this.push(this.child(this.depth ? this.sNode[this.depth - 1] : this.root, fn), fn);
  }

  /** The ids of the functions that appeared in a path since the last call (all: every one so far). */
  takeFunctions(all = false): number[] {
    const out = all ? [...this.seenFns] : this.freshFns;
    this.freshFns = [];
    return out;
  }

  /**
   * The paths that changed since the last take, with their totals so far; all:
   * every path, named (the values written at exit: a sample whose answer the
   * tool never got, the program ending, must not lose what it took)
   */
  take(all = false): PathRecord[] {
    const out: PathRecord[] = [];
    for (let i = 0; i < this.nodes.length; i++) {
      const n = this.nodes[i];
      if (!n.dirty && !all) continue;
      n.dirty = false;
      const v = n.v;
      // a deep path's name is long: sent once
      out.push([n.sent && !all ? '' : n.path, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], i]);
      n.sent = true;
    }
    return out;
  }

  get size(): number { return this.nodes.length; }

  /** Forget every path (a later session starts from zero); suspended activations resumed later start anew. */
  reset(): void {
    this.root = CallPaths.rootNode();
    this.nodes = [];
    this.fnActive.fill(0);
    this.fnNode = [];
    this.freshFns = [];
    this.seenFns.clear();
    this.depth = 0;
    this.sNode = [];
    this.store?.disable();
    this.store = null;
    // measured anew from the next session's starting price
    this.timedSums.fill(0);
    this.priced = 0;
    this.measuredFrom = 0;
  }

  private static rootNode(): PathNode {
    return { fn: -1, parent: null, next: new Map(), lastFn: -1, lastNext: null, active: 0, path: '', v: new Float64Array(VALUES), dirty: false, sent: false };
  }

  /**
   * The node an entry of fn under `parent` goes to, fn not being on the stack:
   * made on first sight; folded back to fn's node if fn is on parent's path
   * (only after an await's resumption, whose path is not on the stack below it).
   */
  private child(parent: PathNode, fn: number): PathNode {
    if (parent.lastFn === fn) return parent.lastNext!;
    let node = parent.next.get(fn);
    if (node) { parent.lastFn = fn; parent.lastNext = node; return node; }
    for (let a: PathNode | null = parent; a && a !== this.root; a = a.parent) if (a.fn === fn) { node = a; break; }
    if (!node) {
      const name = this.nameOf(fn);
      if (!this.seenFns.has(fn)) { this.seenFns.add(fn); this.freshFns.push(fn); }
      node = { fn, parent, next: new Map(), lastFn: -1, lastNext: null, active: 0, path: parent === this.root ? name : `${parent.path}\0${name}`, v: new Float64Array(VALUES), dirty: true, sent: false };
      this.nodes.push(node);
    }
    parent.next.set(fn, node);
    parent.lastFn = fn;
    parent.lastNext = node;
    return node;
  }

  private push(node: PathNode, fn: number): void {
    this.clocks();
    if (fn >= this.fnActive.length) { const a = new Int32Array(Math.max(fn + 1, 2 * this.fnActive.length)); a.set(this.fnActive); this.fnActive = a; }
    if (this.fnActive[fn]++ === 0) this.fnNode[fn] = node;
    if (this.depth === 0 && !this.checkQueued) {
      this.checkQueued = true;
      queueMicrotask(this.turnEnd);
    }
    const d = this.depth++;
    if (d === this.sFn.length) this.grow();
    this.sNode[d] = node;
    this.sFn[d] = fn;
    this.sOuter[d] = node.active++ === 0 ? 1 : 0;
    const b = d * FRAME;
    this.sNum[b + WALL0] = this.wallNow;
    this.sNum[b + CPU0] = this.cpuNow;
    this.sNum[b + CHILD_WALL] = 0;
    this.sNum[b + CHILD_CPU] = 0;
    this.sNum[b + CHILD_VWALL] = 0;
    this.sNum[b + CHILD_VCPU] = 0;
    this.sNum[b + PRICED0] = this.priced;
  }

  private grow(): void {
    const n = this.sFn.length * 2;
    const fns = new Int32Array(n), outer = new Uint8Array(n), num = new Float64Array(n * FRAME);
    fns.set(this.sFn);
    outer.set(this.sOuter);
    num.set(this.sNum);
    this.sFn = fns;
    this.sOuter = outer;
    this.sNum = num;
  }

  /** Read the clocks for a boundary: the wall clock always, the CPU clock every CPU_READ_GAP_MS. */
  private clocks(): void {
    this.boundaries++;
    const w = this.now();
    if (w - this.cpuReadWall >= CPU_READ_GAP_MS) {
      this.cpuRead = this.cpu();
      this.cpuReadWall = w;
      this.cpuNow = this.cpuRead;
    } else {
      // running since the last read, as far as it is known; never back past the last boundary
      this.cpuNow = Math.max(this.cpuNow, this.cpuRead + (w - this.cpuReadWall));
    }
    this.wallNow = w;
  }

  /**
   * Runs once the job that began with an empty stack has ended: every frame
   * still on the stack then is stale, its function suspended where no point
   * says so (for await, yield*) or left without its exit or resumption (an
   * await whose promise rejected): its segment ends at the job's end.
   */
  private readonly turnEnd = (): void => {
    this.checkQueued = false;
    if (!this.depth) return;
    this.clocks();
    while (this.depth) this.end();
  };

  /** The top frame's segment ends (exit or await) at the latest boundary: its time goes to its node and to the segment of the frame below. */
  private end(): void {
    const d = --this.depth;
    const node = this.sNode[d];
    this.sNode[d] = this.root;
    const fn = this.sFn[d];
    if (--this.fnActive[fn] === 0) this.fnNode[fn] = undefined;
    const b = d * FRAME, num = this.sNum;
    const wall = this.wallNow - num[b + WALL0];
    // a segment's CPU time is within its wall time: an estimate between two reads of the clock may be over it
    const cpu = Math.min(wall, Math.max(0, this.cpuNow - num[b + CPU0]));
    // virtual time: less the profile's own work in the segment, its own and that of every
    // callee segment inside it (each its own work and its share of this one's)
    const o = this.overhead;
    const inside = o.own + (this.priced - num[b + PRICED0]);
    const vwall = Math.max(0, wall - inside), vcpu = Math.max(0, cpu - inside);
    const v = node.v;
    if (this.sOuter[d]) { v[1] += wall; v[3] += cpu; v[6] += vwall; v[8] += vcpu; }
    v[2] += wall - num[b + CHILD_WALL];
    v[4] += Math.max(0, cpu - num[b + CHILD_CPU]);
    v[7] += Math.max(0, vwall - num[b + CHILD_VWALL]);
    v[9] += Math.max(0, vcpu - num[b + CHILD_VCPU]);
    node.active--;
    node.dirty = true;
    this.priced += o.own + o.perChild;
    if (d > 0) {
      const p = b - FRAME;
      num[p + CHILD_WALL] += wall;
      num[p + CHILD_CPU] += cpu;
      num[p + CHILD_VWALL] += vwall;
      num[p + CHILD_VCPU] += vcpu;
    }
  }
}
