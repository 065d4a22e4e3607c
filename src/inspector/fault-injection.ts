// Fault injection for the tests: PARANODE_FAULT_HANG=<phase> makes the tool
// stop for good at that phase (handshake, placement, detach; at sampling it goes
// on, only saying it got there), so a test can signal it there and check the target.
// PARANODE_FAULT_DUPLICATE=1 sends every expression the tool evaluates twice, as
// Node 26 once dispatched a request to a busy thread (see safe-point.ts once).
export type FaultPhase = 'handshake' | 'placement' | 'sampling' | 'detach';

export async function faultPoint(phase: FaultPhase): Promise<void> {
  if (process.env.PARANODE_FAULT_HANG !== phase) return;
  process.stderr.write(`paranode: fault injection: ${phase === 'sampling' ? 'reached' : 'hanging at'} ${phase}\n`);
  if (phase === 'sampling') return;
  await new Promise(() => { setInterval(() => undefined, 1 << 30); });
}

/** Whether each Runtime.evaluate goes to the target twice (the same message, the same id). */
export const duplicateEvaluations = (): boolean => process.env.PARANODE_FAULT_DUPLICATE === '1';
