// Call-path profiles (TAU's dynamic call-path profiling, issue #13): one
// profile per distinct path of instrumented functions, made the first time the
// path is seen. The thread keeps a shadow stack of the instrumented functions
// it is in; each frame stands at a node of a tree of folded full paths, so an
// entry costs a map lookup whatever the depth, and the tool cuts any length k
// from the full paths when it reads them (k is chosen per read, not per run).
//
// Recursion folds as Li and Zhang's statistics records do (no record of its
// own): a function entered while it is already on the path goes back to that
// path's node, so a path names each function at most once, and only the
// outermost activation of a node adds to its inclusive time.
//
// Async functions: an `await` ends the activation's segment and its frame
// leaves the stack; the resumption continues the same path (found through an
// AsyncLocalStorage store set at the await, which V8 carries to the
// continuation), and the time between is the path's waiting time. A generator
// resumed by next() runs each segment under the path of whoever resumed it.
import { AsyncLocalStorage } from 'async_hooks';

/** how a function suspends: an async function's awaits resume by themselves, a generator's yields by next() */
export type SuspendKind = 'await' | 'yield' | 'both' | 'none';

/** per path (its functions' names joined by NUL, outermost first): calls, then ms: inclusive wall, exclusive wall, inclusive CPU, exclusive CPU, waiting */
export type PathRecord = [path: string, calls: number, inclWall: number, exclWall: number, inclCpu: number, exclCpu: number, wait: number];

interface PathNode {
  fn: number;
  parent: PathNode | null;
  /** function id -> the node its entry here goes to (a folded ancestor for recursion) */
  next: Map<number, PathNode>;
  /** frames on the stack at this node now: only the outermost adds inclusive time */
  active: number;
  path: string;
  v: Float64Array;
  dirty: boolean;
}

interface Frame {
  node: PathNode;
  fn: number;
  wall0: number;
  cpu0: number;
  /** time of this segment's callees */
  childWall: number;
  childCpu: number;
  outer: boolean;
}

/** a suspended activation, as the await left it */
interface Suspended { node: PathNode; fn: number; at: number; resumed: boolean }

export class CallPaths {
  private root = CallPaths.rootNode();
  private nodes: PathNode[] = [];
  private stack: Frame[] = [];
  private store: AsyncLocalStorage<Suspended> | null = null;
  private readonly kinds = new Map<number, SuspendKind>();

  constructor(
    private readonly nameOf: (fn: number) => string,
    private readonly kindOf: (fn: number) => SuspendKind,
    private readonly now: () => number,
    private readonly cpu: () => number,
  ) {}

  enter(fn: number): void {
    const node = this.child(this.top()?.node ?? this.root, fn);
    node.v[0]++;
    node.dirty = true;
    this.push(node, fn);
  }

  exit(fn: number): void {
    // frames above this function's own left without an exit (a function whose throw has no
    // slot): they end here; an exit with no frame (the call began before the profile) is not counted
    const i = this.stack.findLastIndex((f) => f.fn === fn);
    if (i < 0) return;
    while (this.stack.length > i) this.end(this.stack.pop()!);
  }

  suspend(fn: number): void {
    const top = this.top();
    if (!top || top.fn !== fn) return;
    this.end(this.stack.pop()!);
    if (this.kind(fn) === 'yield') return;
    this.store ??= new AsyncLocalStorage();
    // the await's continuation runs with the store as it is now: it finds this activation there
    this.store.enterWith({ node: top.node, fn, at: this.now(), resumed: false });
  }

  resume(fn: number): void {
    const s = this.kind(fn) === 'yield' ? undefined : this.store?.getStore();
    if (s && s.fn === fn && !s.resumed) {
      s.resumed = true;
      s.node.v[5] += this.now() - s.at;
      s.node.dirty = true;
      this.push(s.node, fn);
      return;
    }
    // a yield's resumption (or one whose await was not seen): under whoever resumed it
    this.push(this.child(this.top()?.node ?? this.root, fn), fn);
  }

  /** The paths that changed since the last take, with their totals so far. */
  take(): PathRecord[] {
    const out: PathRecord[] = [];
    for (const n of this.nodes) {
      if (!n.dirty) continue;
      n.dirty = false;
      out.push([n.path, n.v[0], n.v[1], n.v[2], n.v[3], n.v[4], n.v[5]]);
    }
    return out;
  }

  get size(): number { return this.nodes.length; }

  /** Forget every path (a later session starts from zero); suspended activations resumed later start anew. */
  reset(): void {
    this.root = CallPaths.rootNode();
    this.nodes = [];
    this.stack = [];
    this.store?.disable();
    this.store = null;
  }

  private static rootNode(): PathNode {
    return { fn: -1, parent: null, next: new Map(), active: 0, path: '', v: new Float64Array(6), dirty: false };
  }

  private top(): Frame | undefined { return this.stack[this.stack.length - 1]; }

  private kind(fn: number): SuspendKind {
    let k = this.kinds.get(fn);
    if (k === undefined) this.kinds.set(fn, (k = this.kindOf(fn)));
    return k;
  }

  /** The node an entry of fn under `parent` goes to: made on first sight, folded back to fn's own node on the path if it is there. */
  private child(parent: PathNode, fn: number): PathNode {
    let node = parent.next.get(fn);
    if (node) return node;
    for (let a: PathNode | null = parent; a && a !== this.root; a = a.parent) if (a.fn === fn) { node = a; break; }
    if (!node) {
      const name = this.nameOf(fn);
      node = { fn, parent, next: new Map(), active: 0, path: parent === this.root ? name : `${parent.path}\0${name}`, v: new Float64Array(6), dirty: true };
      this.nodes.push(node);
    }
    parent.next.set(fn, node);
    return node;
  }

  private push(node: PathNode, fn: number): void {
    this.stack.push({ node, fn, wall0: this.now(), cpu0: this.cpu(), childWall: 0, childCpu: 0, outer: node.active++ === 0 });
  }

  /** A segment ends (exit or await): its time goes to its node and to the segment of the frame below. */
  private end(f: Frame): void {
    const wall = this.now() - f.wall0;
    const cpu = this.cpu() - f.cpu0;
    const v = f.node.v;
    if (f.outer) { v[1] += wall; v[3] += cpu; }
    v[2] += wall - f.childWall;
    v[4] += cpu - f.childCpu;
    f.node.active--;
    f.node.dirty = true;
    const below = this.top();
    if (below) { below.childWall += wall; below.childCpu += cpu; }
  }
}
