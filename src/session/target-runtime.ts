// The agent's runtime in a target thread, as the expression the tool evaluates
// there (R.addProbe(...), R.sample(), ...): see src/agent/runtime.ts.
export const R = `globalThis[Symbol.for('paranode.runtime')]`;
