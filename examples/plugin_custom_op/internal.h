/*
 * internal.h — what the files of the custom_ops plugin share: the host
 * table they were given, the ids the host gave their ops, tensor helpers,
 * and each op's callbacks. Not installed; callers include custom_ops.h.
 */
#ifndef CTENSOR_EXAMPLE_CUSTOM_OPS_INTERNAL_H_
#define CTENSOR_EXAMPLE_CUSTOM_OPS_INTERNAL_H_

#include <ctensor/plugin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "custom_ops.h"

/* Set by ct_plugin_init (plugin.c) before anything else runs. */
extern const CTHost* co_host;
extern int32_t co_bias_gelu_id; /* -1 until registered */
extern int32_t co_gemm_relu_id; /* -1 when the host has no NN-kind plugin ops */

/* ---- tensors (CTensor is DLPack's DLTensor) ---------------------------- */

/* Address of element [0, ..., 0]. */
static inline char* co_base(const CTensor* t) { return (char*)t->data + t->byte_offset; }

/* Element stride of dim d: the given one, or compact row-major's when
 * strides is NULL. */
static inline int64_t co_stride(const CTensor* t, int32_t d) {
  int64_t s = 1;
  int32_t i;
  if (t->strides) return t->strides[d];
  for (i = t->ndim - 1; i > d; --i) s *= t->shape[i];
  return s;
}

static inline int64_t co_numel(const CTensor* t) {
  int64_t n = 1;
  int32_t i;
  for (i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

/* Element loads and stores through memcpy: ctensor accepts CPU data at any
 * byte address (a NumPy array at an odd offset), so a kernel must not
 * dereference a float* that may be unaligned. Compilers turn these into
 * plain moves. */
static inline float co_ld_f32(const char* p) { float v; memcpy(&v, p, sizeof v); return v; }
static inline double co_ld_f64(const char* p) { double v; memcpy(&v, p, sizeof v); return v; }
static inline void co_st_f32(char* p, float v) { memcpy(p, &v, sizeof v); }
static inline void co_st_f64(char* p, double v) { memcpy(p, &v, sizeof v); }

/* ---- the ops ------------------------------------------------------------- */

/* bias_gelu.c */
CTStatus co_bias_gelu_kernel(const CTElementwiseCall* call);
CTStatus co_bias_gelu_reference(const CTensor* const* tensors, int32_t num_tensors, const double* params,
                                const CTOpArgs* args);
CTStatus co_register_bias_gelu(void);

/* gemm_relu.c */
CTStatus co_gemm_relu_output_shape(const void* desc, const CTensor* const* inputs, int32_t num_inputs,
                                   int32_t output, int64_t* shape, int32_t* ndim);
CTStatus co_gemm_relu_reference(const CTensor* const* tensors, int32_t num_tensors, const double* params,
                                const CTOpArgs* args);
CTStatus co_gemm_relu_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives);
CTStatus co_gemm_relu_plan_execute(void* plan, const CTNNCall* call, void* workspace, size_t workspace_bytes);
void co_gemm_relu_plan_destroy(void* plan);
CTStatus co_gemm_relu_example(int32_t index, int32_t size, void* desc, int32_t* ndim, int64_t (*shape)[CT_MAX_NDIM]);
CTStatus co_register_gemm_relu(void);

#endif /* CTENSOR_EXAMPLE_CUSTOM_OPS_INTERNAL_H_ */
