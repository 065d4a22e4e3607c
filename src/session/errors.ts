// What the tool could not do in a target (an unknown resource, a LiveEdit V8
// did not apply): thrown to the program that uses the session.
export class ParanodeError extends Error {}

/** A request stopped between scripts because its session's signal ended it (a run's --duration): what was placed stays until detach. */
export class Interrupted extends ParanodeError {}
