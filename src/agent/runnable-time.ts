// The time a thread could run: the wall time of a window less the time the
// thread was ready to run and waited for a CPU (Linux schedstat; 0 elsewhere).
// A thread that gets half a core, from a neighbour or a container's CPU quota,
// pays for paranode's work out of the time it runs: judged against wall time, a
// 5 % limit let the tool take 10 % of that. (A loaded server sharing its core
// with a twin: diagnose's observed cost read 2.4-2.7 % while the server answered
// 0.93 of the twin's requests.) A thread with a core of its own waits for none,
// and the time it could run is the wall time. In the agent (the samples' budget)
// and the tool (the observed cost against the limit) alike.

/** the least share of a window a thread is taken to have run for (a thread starved to nothing) */
const LEAST_RUN = 0.1;

/** The time a thread could run in a window of `wall` in which it waited `waited` for a CPU (any one unit). */
export function runnableTime(wall: number, waited: number): number {
  return Math.max(wall - Math.max(0, waited), LEAST_RUN * wall);
}
