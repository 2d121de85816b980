/*
 * kernel_error.c — a plugin op (tplug_kernel_error, binary, float32) whose
 * kernel fails: CT_ERR_BACKEND with a message, output untouched. The call
 * must return that status and message.
 */
#include "tplug.h"

static const CTHost* g_host;
static int32_t g_op = -1;

static CTStatus supports(const CTSupportQuery* q) {
  if (q->op == g_op && q->dt == CT_DT_FLOAT32) return CT_OK;
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: tplug_kernel_error runs only its own op", q->fn);
}

static CTStatus binary(const CTElementwiseCall* c) {
  return g_host->set_error(CT_ERR_BACKEND, "%s: tplug_kernel_error: the device fell over (code 42)", c->fn);
}

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  static CTKernelInterface k;
  (void)host_version;
  g_host = host;
  return tplug_init_binary(host, info, "tplug_kernel_error", &g_op, &k, &supports, &binary);
}
