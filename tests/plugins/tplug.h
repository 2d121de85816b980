/*
 * tplug.h — what the test plugins (the .c files of tests/plugins, each its own shared
 * library loaded by tests/test_library.cpp) share: an op description of
 * the binary float32 kind, and a float32 elementwise walk over operands of
 * out's shape at any strides, and the init of a one-op plugin. C99, <ctensor/plugin.h> and <string.h> only.
 */
#ifndef CTENSOR_TESTS_PLUGINS_TPLUG_H_
#define CTENSOR_TESTS_PLUGINS_TPLUG_H_

#include <ctensor/plugin.h>
#include <string.h>

/* A float32 op of `kind` (unary or binary) named `name`. */
static inline void tplug_op_desc(CTOpDesc* d, const char* name, int32_t kind) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->name = name;
  d->summary = "a test plugin's op";
  d->kind = kind;
  d->param_names = "";
  d->tensors = kind == CT_KIND_BINARY ? "a,b|out" : "x|out";
  d->dtype_mask = 1u << CT_DT_FLOAT32;
  d->dtype_rule = "float32 only";
  d->output_dtype = CT_OUTPUT_SAME;
  d->inplace = 1;
  d->shape_rule = kind == CT_KIND_BINARY ? CT_SHAPE_BROADCAST : CT_SHAPE_SAME;
  d->desc_type = CT_DESC_NONE;
}

static inline char* tplug_elem(const CTensor* t, const int64_t* coord) {
  char* p = (char*)t->data + t->byte_offset;
  int64_t s = 1;
  int32_t d;
  for (d = t->ndim - 1; d >= 0; --d) {
    p += coord[d] * (t->strides ? t->strides[d] : s) * 4;
    s *= t->shape[d];
  }
  return p;
}

/* out[i] = f(in0[i], in1[i]) over out's shape (in1 may be NULL). */
static inline void tplug_map(const CTElementwiseCall* c, float (*f)(float, float)) {
  int64_t coord[CT_MAX_NDIM];
  int64_t n = 1, i;
  int32_t d;
  for (d = 0; d < c->out->ndim; ++d) {
    coord[d] = 0;
    n *= c->out->shape[d];
  }
  for (i = 0; i < n; ++i) {
    float x, y = 0.0f, r;
    memcpy(&x, tplug_elem(c->in[0], coord), 4);
    if (c->in[1]) memcpy(&y, tplug_elem(c->in[1], coord), 4);
    r = f(x, y);
    memcpy(tplug_elem(c->out, coord), &r, 4);
    for (d = c->out->ndim - 1; d >= 0; --d) {
      if (++coord[d] < c->out->shape[d]) break;
      coord[d] = 0;
    }
  }
}

/* The whole init of a plugin with one binary float32 op `name` and one CPU
 * kernel table (supports, binary): fills info, registers the op (its id in
 * *op) and the table (kept in *k, which must outlive the library's load). */
static inline CTStatus tplug_init_binary(const CTHost* host, CTPluginInfo* info, const char* name, int32_t* op,
                                         CTKernelInterface* k, CTStatus (*supports)(const CTSupportQuery*),
                                         CTStatus (*binary)(const CTElementwiseCall*)) {
  CTOpDesc d;
  CTStatus s;
  info->abi_version = CT_PLUGIN_ABI_VERSION;
  info->name = name;
  info->version = "1.0.0";
  tplug_op_desc(&d, name, CT_KIND_BINARY);
  if ((s = host->register_op(&d, op)) != CT_OK) return s;
  memset(k, 0, sizeof *k);
  k->struct_size = sizeof *k;
  k->abi_version = CT_PLUGIN_ABI_VERSION;
  k->device_type = CT_CPU;
  k->name = name;
  k->supports = supports;
  k->binary = binary;
  return host->register_backend(NULL, k);
}

#endif /* CTENSOR_TESTS_PLUGINS_TPLUG_H_ */
