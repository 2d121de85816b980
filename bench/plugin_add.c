/*
 * plugin_add.c — the benchmark's plugin: one binary op, bench_add (float32,
 * out = a + b, NumPy broadcasting), whose kernel does what the built-in add
 * kernel does for one thread. bench_plugin.cpp times ct_binary(bench_add)
 * against ct_binary(CT_OP_ADD): the same entry point, so the difference is
 * what a plugin op costs over a built-in one. C99, plugin.h and the test
 * plugins' tplug.h (the op description, the strided walk, the init).
 */
#include "tplug.h"

static const CTHost* g_host;
static int32_t g_op = -1;

static CTStatus supports(const CTSupportQuery* q) {
  if (q->op == g_op && q->dt == CT_DT_FLOAT32) return CT_OK;
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: bench_add runs float32 only", q->fn);
}

static float add(float a, float b) { return a + b; }

static CTStatus binary(const CTElementwiseCall* c) {
  const CTensor *o = c->out, *a = c->in[0], *b = c->in[1];
  if (!o->strides && !a->strides && !b->strides) {
    /* Compact operands of out's shape (the host hands broadcast inputs as
     * strided views): one contiguous loop, vectorised by the compiler. */
    float* y = (float*)((char*)o->data + o->byte_offset);
    const float* x0 = (const float*)((const char*)a->data + a->byte_offset);
    const float* x1 = (const float*)((const char*)b->data + b->byte_offset);
    if (((size_t)y | (size_t)x0 | (size_t)x1) % 4 == 0) {
      int64_t n = 1, i;
      int32_t d;
      for (d = 0; d < o->ndim; ++d) n *= o->shape[d];
      for (i = 0; i < n; ++i) y[i] = x0[i] + x1[i];
      return CT_OK;
    }
  }
  tplug_map(c, add);  /* any strides, any alignment */
  return CT_OK;
}

CT_PLUGIN_EXPORT const uint32_t ct_plugin_abi_version = CT_PLUGIN_ABI_VERSION;

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  static CTKernelInterface k;
  (void)host_version;
  g_host = host;
  return tplug_init_binary(host, info, "bench_add", &g_op, &k, &supports, &binary);
}
