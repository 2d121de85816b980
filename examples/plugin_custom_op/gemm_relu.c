/*
 * gemm_relu.c — y = relu(alpha * a @ b + bias), float32: an NN-kind op
 * (ct_nn, ct_nn_workspace_size, ct_plan_create). The plugin gives core
 * the output shape (output_shape, which also refuses a mismatched K), and
 * its kernel table makes plans: nn_plan_create sizes a workspace (b packed
 * row-major, plus one row of accumulators), nn_plan_execute packs b into
 * it and multiplies, nn_plan_destroy frees the plan. Its examples (ABI 1.2)
 * give `ctensor check` and `ctensor bench` valid calls to make.
 */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

/* The descriptor's alpha: 1 when desc is NULL or too old to have it. */
static float alpha_of(const void* desc) {
  const CTGemmReluDesc* g = (const CTGemmReluDesc*)desc;
  if (!g || g->struct_size < offsetof(CTGemmReluDesc, alpha) + sizeof g->alpha) return 1.0f;
  return g->alpha;
}

/* a (M, K), b (K, N), bias (N,) or NULL: y (M, N). Core puts the entry point
 * and the op's name in front of these messages ("ct_nn: gemm_relu: ..."). */
CTStatus co_gemm_relu_output_shape(const void* desc, const CTensor* const* inputs, int32_t num_inputs,
                                   int32_t output, int64_t* shape, int32_t* ndim) {
  const CTensor *a, *b, *bias;
  const CTGemmReluDesc* g = (const CTGemmReluDesc*)desc;
  if (num_inputs != 3 || output != 0)
    return co_host->set_error(CT_ERR_INVALID_ARGUMENT, "takes inputs a, b, bias? and one output (asked for %d of %d)",
                              (int)output, (int)num_inputs);
  if (g && g->struct_size < sizeof g->struct_size)
    return co_host->set_error(CT_ERR_INVALID_ARGUMENT, "desc->struct_size=%u; set it to sizeof(CTGemmReluDesc)=%u",
                              (unsigned)g->struct_size, (unsigned)sizeof(CTGemmReluDesc));
  a = inputs[0];
  b = inputs[1];
  bias = inputs[2];
  if (!a || !b) return co_host->set_error(CT_ERR_INVALID_ARGUMENT, "a and b are required");
  if (a->ndim != 2 || b->ndim != 2)
    return co_host->set_error(CT_ERR_SHAPE_MISMATCH, "a and b must be matrices, got a.ndim=%d b.ndim=%d",
                              (int)a->ndim, (int)b->ndim);
  if (a->shape[1] != b->shape[0])
    return co_host->set_error(CT_ERR_SHAPE_MISMATCH,
                              "a is (%lld, %lld) and b is (%lld, %lld): a's columns must equal b's rows (K)",
                              (long long)a->shape[0], (long long)a->shape[1], (long long)b->shape[0],
                              (long long)b->shape[1]);
  if (bias && (bias->ndim != 1 || bias->shape[0] != b->shape[1]))
    return co_host->set_error(CT_ERR_SHAPE_MISMATCH, "bias must be (N,) = (%lld,), got ndim=%d extent %lld",
                              (long long)b->shape[1], (int)bias->ndim, (long long)(bias->ndim ? bias->shape[0] : 1));
  shape[0] = a->shape[0];
  shape[1] = b->shape[1];
  *ndim = 2;
  return CT_OK;
}

/* ---- plans ------------------------------------------------------------------ */

typedef struct {
  int64_t m, k, n;
  float alpha;
  int has_bias;
  size_t workspace; /* bytes: packed b (k * n floats), then one row of n accumulators */
} Plan;

CTStatus co_gemm_relu_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives) {
  const int64_t m = call->t[0]->shape[0], k = call->t[0]->shape[1], n = call->t[1]->shape[1];
  Plan* p;
  if (call->dt != CT_DT_FLOAT32)
    return co_host->set_error(CT_ERR_INTERNAL, "%s: gemm_relu: called for %s, which supports() refused", call->fn,
                              co_host->dtype_name(call->dt));
  /* k * n + n floats: check the product (extents are only known to fit int64). */
  if (n > 0 && k > ((int64_t)(SIZE_MAX / sizeof(float)) - n) / n)
    return co_host->set_error(CT_ERR_INVALID_ARGUMENT, "%s: gemm_relu: K=%lld by N=%lld needs too large a workspace",
                              call->fn, (long long)k, (long long)n);
  p = (Plan*)malloc(sizeof *p);
  if (!p) return co_host->set_error(CT_ERR_OUT_OF_MEMORY, "%s: gemm_relu: no memory for a plan", call->fn);
  p->m = m;
  p->k = k;
  p->n = n;
  p->alpha = alpha_of(call->desc);
  p->has_bias = call->t[2] != NULL;
  p->workspace = (size_t)(k * n + n) * sizeof(float);
  *plan = p;
  *workspace_bytes = p->workspace;
  *primitives = 0; /* nothing but this struct: no backend library objects */
  return CT_OK;
}

CTStatus co_gemm_relu_plan_execute(void* plan, const CTNNCall* call, void* workspace, size_t workspace_bytes) {
  const Plan* p = (const Plan*)plan;
  const CTensor *a = call->t[0], *b = call->t[1], *bias = call->t[2], *y = call->t[3];
  float* packed = (float*)workspace; /* core's workspace: the caller's, aligned as they gave it */
  float* acc;
  const int64_t sa0 = co_stride(a, 0) * 4, sa1 = co_stride(a, 1) * 4;
  const int64_t sb0 = co_stride(b, 0) * 4, sb1 = co_stride(b, 1) * 4;
  const int64_t sy0 = co_stride(y, 0) * 4, sy1 = co_stride(y, 1) * 4;
  const int64_t sbias = bias ? co_stride(bias, 0) * 4 : 0;
  int64_t i, kk, j;
  if (workspace_bytes < p->workspace)
    return co_host->set_error(CT_ERR_WORKSPACE_TOO_SMALL, "%s: gemm_relu: workspace_bytes=%zu, the plan needs %zu",
                              call->fn, workspace_bytes, p->workspace);
  if (p->m == 0 || p->n == 0) return CT_OK;
  acc = packed + p->k * p->n;
  /* b, at any strides, packed row-major: the inner loop below reads it contiguously. */
  for (kk = 0; kk < p->k; ++kk)
    for (j = 0; j < p->n; ++j) packed[kk * p->n + j] = co_ld_f32(co_base(b) + kk * sb0 + j * sb1);
  for (i = 0; i < p->m; ++i) {
    const char* arow = co_base(a) + i * sa0;
    char* yrow = co_base(y) + i * sy0;
    for (j = 0; j < p->n; ++j) acc[j] = 0.0f;
    for (kk = 0; kk < p->k; ++kk) {
      const float av = co_ld_f32(arow + kk * sa1);
      const float* brow = packed + kk * p->n;
      for (j = 0; j < p->n; ++j) acc[j] += av * brow[j];
    }
    for (j = 0; j < p->n; ++j) {
      float v = p->alpha * acc[j];
      if (p->has_bias) v += co_ld_f32(co_base(bias) + j * sbias);
      co_st_f32(yrow + j * sy1, v > 0.0f ? v : 0.0f); /* relu; NaN gives 0 as fmaxf(v, 0) would */
    }
  }
  return CT_OK;
}

void co_gemm_relu_plan_destroy(void* plan) { free(plan); }

/* ---- the reference: plain loops in double ----------------------------------- */

CTStatus co_gemm_relu_reference(const CTensor* const* tensors, int32_t num_tensors, const double* params,
                                const CTOpArgs* args) {
  const char* fn = "gemm_relu reference";
  const void* desc = args ? args->desc : NULL;
  const CTensor *a, *b, *bias, *y;
  int64_t shape[2], i, j, kk;
  int32_t nd, t;
  const double alpha = alpha_of(desc);
  CTStatus s;
  (void)params;
  if (num_tensors != 4) return co_host->set_error(CT_ERR_INVALID_ARGUMENT, "%s: takes a, b, bias?, y", fn);
  a = tensors[0];
  b = tensors[1];
  bias = tensors[2];
  y = tensors[3];
  for (t = 0; t < 4; ++t)
    if (tensors[t] && (tensors[t]->dtype.code != CT_FLOAT || tensors[t]->dtype.bits != 32))
      return co_host->set_error(CT_ERR_DTYPE_MISMATCH, "%s: every tensor must be float32", fn);
  if ((s = co_gemm_relu_output_shape(desc, tensors, 3, 0, shape, &nd)) != CT_OK) return s;
  if (!y || y->ndim != 2 || y->shape[0] != shape[0] || y->shape[1] != shape[1])
    return co_host->set_error(CT_ERR_SHAPE_MISMATCH, "%s: y must be (%lld, %lld)", fn, (long long)shape[0],
                              (long long)shape[1]);
  for (i = 0; i < shape[0]; ++i)
    for (j = 0; j < shape[1]; ++j) {
      double v = 0.0;
      for (kk = 0; kk < a->shape[1]; ++kk)
        v += (double)co_ld_f32(co_base(a) + (i * co_stride(a, 0) + kk * co_stride(a, 1)) * 4) *
             (double)co_ld_f32(co_base(b) + (kk * co_stride(b, 0) + j * co_stride(b, 1)) * 4);
      v *= alpha;
      if (bias) v += (double)co_ld_f32(co_base(bias) + j * co_stride(bias, 0) * 4);
      co_st_f32(co_base(y) + (i * co_stride(y, 0) + j * co_stride(y, 1)) * 4, (float)(v > 0.0 ? v : 0.0));
    }
  return CT_OK;
}

/* ---- examples: valid calls for tools that cannot invent them ----------------- */

/* What one example call is: a (M, K), b (K, N), bias (N,) or left out, alpha. */
typedef struct {
  int64_t m, k, n;
  int bias;
  float alpha;
} Example;

/* Size 0: small calls for `ctensor check` (a few hundred elements each: with
 * and without bias, one row, a negative alpha); size 1: one call for `ctensor
 * bench` whose output (16 MiB) is beyond the caches. The host zeroed desc
 * and checks what is written here (ct_op_example). */
static const Example co_small[] = {{5, 7, 6, 1, 1.0f}, {8, 16, 4, 0, 0.5f}, {1, 33, 9, 1, -1.5f}};
static const Example co_large[] = {{4096, 64, 1024, 1, 1.0f}};

CTStatus co_gemm_relu_example(int32_t index, int32_t size, void* desc, int32_t* ndim, int64_t (*shape)[CT_MAX_NDIM]) {
  const Example* e;
  CTGemmReluDesc g;
  if (size == 0 && index >= 0 && index < (int32_t)(sizeof co_small / sizeof co_small[0])) e = &co_small[index];
  else if (size == 1 && index >= 0 && index < (int32_t)(sizeof co_large / sizeof co_large[0])) e = &co_large[index];
  else return CT_ERR_NOT_FOUND; /* past the last example of this size */
  g.struct_size = sizeof g;
  g.alpha = e->alpha;
  memcpy(desc, &g, sizeof g); /* desc_size bytes */
  ndim[0] = 2;                /* a */
  shape[0][0] = e->m;
  shape[0][1] = e->k;
  ndim[1] = 2;                /* b */
  shape[1][0] = e->k;
  shape[1][1] = e->n;
  if (e->bias) {              /* bias, optional */
    ndim[2] = 1;
    shape[2][0] = e->n;
  } else {
    ndim[2] = -1;
  }
  return CT_OK;
}

/* ---- registration ----------------------------------------------------------- */

CTStatus co_register_gemm_relu(void) {
  CTOpDesc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.name = CUSTOM_OPS_GEMM_RELU;
  d.summary = "relu(alpha * a @ b + bias), a (M,K), b (K,N), bias (N,) (custom_ops plugin)";
  d.kind = CT_KIND_NN;
  d.num_params = 0;
  d.param_names = "";
  d.tensors = "a,b,bias?:bias|y";
  d.dtype_mask = 1u << CT_DT_FLOAT32;
  d.dtype_rule = "float32 only";
  d.output_dtype = CT_OUTPUT_SAME;
  d.inplace = 0;
  d.shape_rule = CT_SHAPE_CUSTOM;
  d.desc_type = CT_DESC_CUSTOM;
  d.desc_size = sizeof(CTGemmReluDesc);
  d.output_shape = &co_gemm_relu_output_shape;
  d.reference = &co_gemm_relu_reference;
  d.example = &co_gemm_relu_example; /* ABI 1.2: a 1.1 host reads only up to reference (struct_size) */
  return co_host->register_op(&d, &co_gemm_relu_id);
}
