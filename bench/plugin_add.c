/*
 * plugin_add.c — the benchmark's plugin: one binary op, bench_add (float32,
 * out = a + b, NumPy broadcasting), whose kernel does what the built-in add
 * kernel does for one thread. bench_plugin.cpp times ct_binary(bench_add)
 * against ct_binary(CT_OP_ADD): the same entry point, so the difference is
 * what a plugin op costs over a built-in one. C99, plugin.h only.
 */
#include <ctensor/plugin.h>
#include <string.h>

static const CTHost* g_host;
static int32_t g_op = -1;

static CTStatus supports(const CTSupportQuery* q) {
  if (q->op == g_op && q->dt == CT_DT_FLOAT32) return CT_OK;
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: bench_add runs float32 only", q->fn);
}

/* The element at coord of t (4-byte elements, strides in elements or NULL). */
static char* elem(const CTensor* t, const int64_t* coord) {
  char* p = (char*)t->data + t->byte_offset;
  int64_t s = 1;
  int32_t d;
  for (d = t->ndim - 1; d >= 0; --d) {
    p += coord[d] * (t->strides ? t->strides[d] : s) * 4;
    s *= t->shape[d];
  }
  return p;
}

static CTStatus binary(const CTElementwiseCall* c) {
  const CTensor* t[3];
  int64_t n = 1, i, coord[CT_MAX_NDIM];
  int32_t d;
  t[0] = c->out;
  t[1] = c->in[0];
  t[2] = c->in[1];
  for (d = 0; d < c->out->ndim; ++d) n *= c->out->shape[d];
  if (!t[0]->strides && !t[1]->strides && !t[2]->strides) {
    /* Compact operands of out's shape (the host hands broadcast inputs as
     * strided views): one contiguous loop, vectorised by the compiler. */
    float* o = (float*)((char*)t[0]->data + t[0]->byte_offset);
    const float* a = (const float*)((const char*)t[1]->data + t[1]->byte_offset);
    const float* b = (const float*)((const char*)t[2]->data + t[2]->byte_offset);
    if (((size_t)o | (size_t)a | (size_t)b) % 4 == 0) {
      for (i = 0; i < n; ++i) o[i] = a[i] + b[i];
      return CT_OK;
    }
  }
  for (d = 0; d < c->out->ndim; ++d) coord[d] = 0;
  for (i = 0; i < n; ++i) {
    float x, y;
    memcpy(&x, elem(t[1], coord), 4);
    memcpy(&y, elem(t[2], coord), 4);
    x += y;
    memcpy(elem(t[0], coord), &x, 4);
    for (d = c->out->ndim - 1; d >= 0; --d) {
      if (++coord[d] < c->out->shape[d]) break;
      coord[d] = 0;
    }
  }
  return CT_OK;
}

CT_PLUGIN_EXPORT const uint32_t ct_plugin_abi_version = CT_PLUGIN_ABI_VERSION;

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  static CTKernelInterface k;
  CTOpDesc op;
  CTStatus s;
  (void)host_version;
  g_host = host;
  info->abi_version = CT_PLUGIN_ABI_VERSION;
  info->name = "bench_add";
  info->version = "1.0.0";
  memset(&op, 0, sizeof op);
  op.struct_size = sizeof op;
  op.name = "bench_add";
  op.summary = "a + b, from a plugin (the benchmark's)";
  op.kind = CT_KIND_BINARY;
  op.param_names = "";
  op.tensors = "a,b|out";
  op.dtype_mask = 1u << CT_DT_FLOAT32;
  op.dtype_rule = "float32 only";
  op.output_dtype = CT_OUTPUT_SAME;
  op.inplace = 1;
  op.shape_rule = CT_SHAPE_BROADCAST;
  op.desc_type = CT_DESC_NONE;
  if ((s = host->register_op(&op, &g_op)) != CT_OK) return s;
  memset(&k, 0, sizeof k);
  k.struct_size = sizeof k;
  k.abi_version = CT_PLUGIN_ABI_VERSION;
  k.device_type = CT_CPU;
  k.name = "bench_add";
  k.supports = supports;
  k.binary = binary;
  return host->register_backend(NULL, &k);
}
