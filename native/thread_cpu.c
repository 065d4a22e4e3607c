// The calling thread's CPU time, for process-time timers. Node 20 has no
// per-thread CPU clock (process.cpuUsage() is the whole process's and costs a
// getrusage call); CLOCK_THREAD_CPUTIME_ID is the thread's own, in ns.
#include <node_api.h>
#include <time.h>

static napi_value ThreadCpuMs(napi_env env, napi_callback_info info) {
  (void)info;
  struct timespec ts;
  double ms = -1;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) ms = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  napi_value out;
  napi_create_double(env, ms, &out);
  return out;
}

// context-aware: loadable in every worker thread
NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "threadCpuMs", NAPI_AUTO_LENGTH, ThreadCpuMs, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "threadCpuMs", fn) != napi_ok) return NULL;
  return exports;
}
