/*
 * plugin.c — the entry point of the custom_ops plugin: ct_plugin_init says
 * who the plugin is, registers its two ops (bias_gelu, gemm_relu) and one
 * kernel table on the CPU that runs them. Everything the plugin knows of
 * ctensor comes through the CTHost table it is handed here.
 */
#include "internal.h"

/* The ABI this plugin was built against, readable before any of its code
 * runs: a host of another major refuses the file without calling init. */
CT_PLUGIN_EXPORT const uint32_t ct_plugin_abi_version = CT_PLUGIN_ABI_VERSION;

const CTHost* co_host = NULL;
int32_t co_bias_gelu_id = -1;
int32_t co_gemm_relu_id = -1;

static const char* op_name(int32_t op) {
  CTOpInfo info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  return co_host->op_info(op, &info) == CT_OK && info.name ? info.name : "?";
}

/* Yes only for this plugin's own ops and dtypes. Core asks the CPU's own
 * tables first; it asks this one for ops they refused, so the answer for
 * anything else is a plain no with the reason. */
static CTStatus co_supports(const CTSupportQuery* q) {
  if (q->op == co_bias_gelu_id && q->op >= 0 && (q->dt == CT_DT_FLOAT32 || q->dt == CT_DT_FLOAT64) &&
      (q->out_dt < 0 || q->out_dt == q->dt))
    return CT_OK;
  if (q->op == co_gemm_relu_id && q->op >= 0 && q->dt == CT_DT_FLOAT32) return CT_OK;
  return co_host->set_error(CT_ERR_UNSUPPORTED,
                            "%s: the custom_ops plugin runs only bias_gelu (float32, float64) and gemm_relu "
                            "(float32), not %s on %s",
                            q->fn, op_name(q->op), co_host->dtype_name(q->dt));
}

static CTStatus co_binary(const CTElementwiseCall* call) {
  if (call->op == co_bias_gelu_id) return co_bias_gelu_kernel(call);
  return co_host->set_error(CT_ERR_INTERNAL, "%s: custom_ops: binary kernel called for op %d", call->fn,
                            (int)call->op);
}

static CTStatus co_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives) {
  if (call->op == co_gemm_relu_id) return co_gemm_relu_plan_create(call, plan, workspace_bytes, primitives);
  return co_host->set_error(CT_ERR_INTERNAL, "%s: custom_ops: nn_plan_create called for op %d", call->fn,
                            (int)call->op);
}

/* Only gemm_relu makes plans, so its execute and destroy need no dispatch. */

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  static CTKernelInterface kern;
  CTStatus s;
  /* The host must be of our major, and new enough to have register_op (1.1). */
  if ((host_version >> 16) != CT_PLUGIN_ABI_MAJOR ||
      host->struct_size < offsetof(CTHost, register_op) + sizeof host->register_op)
    return host->set_error(CT_ERR_ABI_VERSION, "custom_ops needs plugin ABI %d.1 or a later 1.x; the host is %u.%u",
                           CT_PLUGIN_ABI_MAJOR, (unsigned)(host_version >> 16), (unsigned)(host_version & 0xffffu));
  co_host = host;
  co_bias_gelu_id = co_gemm_relu_id = -1;
  info->abi_version = CT_PLUGIN_ABI_VERSION;
  info->name = CUSTOM_OPS_NAME;
  info->version = CUSTOM_OPS_VERSION;

  if ((s = co_register_bias_gelu()) != CT_OK) return s;
  /* NN-kind plugin ops are newer than register_op: a host that refuses the
   * kind (CT_ERR_UNSUPPORTED) still gets bias_gelu; anything else fails the load. */
  s = co_register_gemm_relu();
  if (s == CT_ERR_UNSUPPORTED) co_gemm_relu_id = -1;
  else if (s != CT_OK) return s;

  memset(&kern, 0, sizeof kern);
  kern.struct_size = sizeof kern;
  kern.abi_version = CT_PLUGIN_ABI_VERSION;
  kern.device_type = CT_CPU;
  kern.name = "custom_ops";
  kern.supports = &co_supports;
  kern.binary = &co_binary;
  if (co_gemm_relu_id >= 0) {
    kern.nn_plan_create = &co_plan_create;
    kern.nn_plan_execute = &co_gemm_relu_plan_execute;
    kern.nn_plan_destroy = &co_gemm_relu_plan_destroy;
  }
  return host->register_backend(NULL, &kern);
}
