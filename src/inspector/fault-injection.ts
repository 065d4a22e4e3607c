// Fault injection for the tests: PARANODE_FAULT_HANG=<phase> makes the tool
// stop for good at that phase (handshake, placement, detach; at sampling it goes
// on, only saying it got there), so a test can signal it there and check the target.
export type FaultPhase = 'handshake' | 'placement' | 'sampling' | 'detach';

export async function faultPoint(phase: FaultPhase): Promise<void> {
  if (process.env.PARANODE_FAULT_HANG !== phase) return;
  process.stderr.write(`paranode: fault injection: ${phase === 'sampling' ? 'reached' : 'hanging at'} ${phase}\n`);
  if (phase === 'sampling') return;
  await new Promise(() => { setInterval(() => undefined, 1 << 30); });
}
