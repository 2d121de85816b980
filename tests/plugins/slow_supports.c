/*
 * slow_supports.c — a plugin op (tplug_slow_supports, binary, float32)
 * whose kernel table's supports() takes a while (about 0.3 s of CPU time)
 * before saying yes: long enough for another thread to unload the plugin
 * while core is inside it. Core must keep the code loaded until supports()
 * returns (the call then fails with CT_ERR_NOT_FOUND or runs), never close
 * it under the running function.
 *
 * Its kernel calls tplug_slow_supports_hook when a test sets it (through
 * dlsym): a kernel that calls back into the library, e.g. to unload this
 * plugin from inside its own call.
 */
#include <time.h>

#include "tplug.h"

static const CTHost* g_host;
static int32_t g_op = -1;

static float add(float a, float b) { return a + b; }

static CTStatus supports(const CTSupportQuery* q) {
  const clock_t start = clock();
  volatile unsigned long spins = 0;
  while (clock() - start < CLOCKS_PER_SEC * 3 / 10) ++spins;
  if (q->op == g_op && q->dt == CT_DT_FLOAT32) return CT_OK;
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: tplug_slow_supports runs only its own op", q->fn);
}

CT_PLUGIN_EXPORT void (*tplug_slow_supports_hook)(void) = 0;

static CTStatus binary(const CTElementwiseCall* c) {
  if (tplug_slow_supports_hook) tplug_slow_supports_hook();
  tplug_map(c, add);
  return CT_OK;
}

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  static CTKernelInterface k;
  (void)host_version;
  g_host = host;
  return tplug_init_binary(host, info, "tplug_slow_supports", &g_op, &k, &supports, &binary);
}
