// What the tool could not do in a target (an unknown resource, a LiveEdit V8
// did not apply): thrown to the program that uses the session.
export class ParanodeError extends Error {}
