/*
 * bias_gelu.c — out = gelu(a + b), erf form, float32 and float64: a binary
 * op (ct_binary), so core validates the call, broadcasts (the kernel sees
 * a and b as views with out's shape, stride 0 on broadcast dims) and
 * checks overlaps; the kernel walks any strides and may run in place.
 */
#include <math.h>

#include "internal.h"

#define CO_MAX_DIMS CT_MAX_NDIM

/* out, a, b walked together: dims of extent 1 dropped, dims that are
 * contiguous in all three merged, strides in bytes. */
typedef struct {
  int32_t nd;
  int64_t ext[CO_MAX_DIMS];
  int64_t st[3][CO_MAX_DIMS];
} Walk;

static void walk_init(Walk* w, const CTensor* const t[3], int64_t itemsize) {
  int32_t d, k;
  w->nd = 0;
  for (d = 0; d < t[0]->ndim; ++d) {
    const int64_t e = t[0]->shape[d];
    if (e == 1) continue;
    if (w->nd > 0) { /* merge into the previous (outer) dim when contiguous for all */
      const int32_t p = w->nd - 1;
      int merge = 1;
      for (k = 0; k < 3; ++k) merge = merge && w->st[k][p] == co_stride(t[k], d) * itemsize * e;
      if (merge) {
        w->ext[p] *= e;
        for (k = 0; k < 3; ++k) w->st[k][p] = co_stride(t[k], d) * itemsize;
        continue;
      }
    }
    w->ext[w->nd] = e;
    for (k = 0; k < 3; ++k) w->st[k][w->nd] = co_stride(t[k], d) * itemsize;
    ++w->nd;
  }
}

/* gelu(x) = x / 2 * (1 + erf(x / sqrt 2)), computed as x / 2 * erfc(-x / sqrt 2): the same
 * function, without 1 + erf's cancellation for negative x (whose results
 * would lose every digit below x = -4 or so). float32 goes through double:
 * in float, the rounding of x / sqrt 2 alone costs up to ~100 ulp in the
 * tail (erfc's condition number there is ~x^2); in double it is invisible. */
static double gelu_f64(double x) { return 0.5 * x * erfc(x * -0.70710678118654752440); }
static float gelu_f32(float x) { return (float)gelu_f64((double)x); }

/* The innermost dim: n elements at byte strides so, sa, sb. */
static void row_f32(char* o, const char* a, const char* b, int64_t n, int64_t so, int64_t sa, int64_t sb) {
  int64_t i;
  for (i = 0; i < n; ++i, o += so, a += sa, b += sb) co_st_f32(o, gelu_f32(co_ld_f32(a) + co_ld_f32(b)));
}

static void row_f64(char* o, const char* a, const char* b, int64_t n, int64_t so, int64_t sa, int64_t sb) {
  int64_t i;
  for (i = 0; i < n; ++i, o += so, a += sa, b += sb) co_st_f64(o, gelu_f64(co_ld_f64(a) + co_ld_f64(b)));
}

CTStatus co_bias_gelu_kernel(const CTElementwiseCall* call) {
  const CTensor* const t[3] = {call->out, call->in[0], call->in[1]};
  const int f64 = call->out_dt == CT_DT_FLOAT64;
  Walk w;
  int64_t idx[CO_MAX_DIMS];
  char* p[3];
  int32_t d, k;
  if (call->out_dt != CT_DT_FLOAT32 && !f64) /* supports() said no to anything else */
    return co_host->set_error(CT_ERR_INTERNAL, "%s: bias_gelu: called for %s, which supports() refused", call->fn,
                              co_host->dtype_name(call->out_dt));
  walk_init(&w, t, f64 ? 8 : 4);
  for (k = 0; k < 3; ++k) p[k] = co_base(t[k]);
  if (w.nd == 0) { /* one element */
    if (f64) row_f64(p[0], p[1], p[2], 1, 0, 0, 0);
    else row_f32(p[0], p[1], p[2], 1, 0, 0, 0);
    return CT_OK;
  }
  for (d = 0; d < w.nd; ++d) idx[d] = 0;
  for (;;) {
    const int32_t in = w.nd - 1;
    if (f64) row_f64(p[0], p[1], p[2], w.ext[in], w.st[0][in], w.st[1][in], w.st[2][in]);
    else row_f32(p[0], p[1], p[2], w.ext[in], w.st[0][in], w.st[1][in], w.st[2][in]);
    /* next row: an odometer over the outer dims */
    for (d = in - 1; d >= 0; --d) {
      for (k = 0; k < 3; ++k) p[k] += w.st[k][d];
      if (++idx[d] < w.ext[d]) break;
      for (k = 0; k < 3; ++k) p[k] -= w.st[k][d] * w.ext[d];
      idx[d] = 0;
    }
    if (d < 0) return CT_OK;
  }
}

/* ---- the reference: plain loops in double ---------------------------------
 * Core validates its arguments as ct_binary would and passes a and b as
 * views of out's shape; the loops below broadcast by themselves all the
 * same (extent-1 dims read element 0), so they hold for either form. */

static int is_float_dt(CTDataType t, int bits) { return t.code == CT_FLOAT && t.bits == bits && t.lanes == 1; }

static double load_any(const CTensor* t, const int64_t* coord_out, int32_t out_nd) {
  const int32_t lead = out_nd - t->ndim;
  char* p = co_base(t);
  int32_t d;
  for (d = 0; d < t->ndim; ++d)
    if (t->shape[d] != 1) p += coord_out[lead + d] * co_stride(t, d) * (t->dtype.bits / 8);
  return t->dtype.bits == 64 ? co_ld_f64(p) : (double)co_ld_f32(p);
}

CTStatus co_bias_gelu_reference(const CTensor* const* tensors, int32_t num_tensors, const double* params,
                                const CTOpArgs* args) {
  const char* fn = "bias_gelu reference";
  const CTensor *a, *b, *out;
  int64_t coord[CO_MAX_DIMS], n, i;
  int32_t d, k, bits;
  (void)params;
  (void)args;
  if (num_tensors != 3 || !tensors[0] || !tensors[1] || !tensors[2])
    return co_host->set_error(CT_ERR_INVALID_ARGUMENT, "%s: takes a, b, out", fn);
  a = tensors[0];
  b = tensors[1];
  out = tensors[2];
  bits = out->dtype.bits;
  if (!(is_float_dt(out->dtype, 32) || is_float_dt(out->dtype, 64)) || !is_float_dt(a->dtype, bits) ||
      !is_float_dt(b->dtype, bits))
    return co_host->set_error(CT_ERR_DTYPE_MISMATCH, "%s: a, b and out must all be float32 or all float64", fn);
  for (k = 0; k < 2; ++k) { /* each input broadcasts to out's shape */
    const CTensor* t = tensors[k];
    if (t->ndim > out->ndim)
      return co_host->set_error(CT_ERR_SHAPE_MISMATCH, "%s: %s has more dims than out", fn, k ? "b" : "a");
    for (d = 0; d < t->ndim; ++d) {
      const int64_t e = t->shape[d], want = out->shape[out->ndim - t->ndim + d];
      if (e != 1 && e != want)
        return co_host->set_error(CT_ERR_SHAPE_MISMATCH, "%s: %s dim %d has extent %lld, out %lld", fn,
                                  k ? "b" : "a", (int)d, (long long)e, (long long)want);
    }
  }
  n = co_numel(out);
  for (d = 0; d < out->ndim; ++d) coord[d] = 0;
  for (i = 0; i < n; ++i) {
    /* the sum as the dtype stores it, then gelu in double */
    const double s = load_any(a, coord, out->ndim) + load_any(b, coord, out->ndim);
    const double x = bits == 32 ? (double)(float)s : s;
    const double y = 0.5 * x * erfc(-x / sqrt(2.0));
    char* po = co_base(out);
    for (d = 0; d < out->ndim; ++d) po += coord[d] * co_stride(out, d) * (bits / 8);
    if (bits == 64) co_st_f64(po, y);
    else co_st_f32(po, (float)y);
    for (d = out->ndim - 1; d >= 0; --d) { /* row-major odometer */
      if (++coord[d] < out->shape[d]) break;
      coord[d] = 0;
    }
  }
  return CT_OK;
}

/* ---- registration ----------------------------------------------------------- */

CTStatus co_register_bias_gelu(void) {
  CTOpDesc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.name = CUSTOM_OPS_BIAS_GELU;
  d.summary = "gelu(a + b), erf form, NumPy broadcasting (custom_ops plugin)";
  d.kind = CT_KIND_BINARY;
  d.num_params = 0;
  d.param_names = "";
  d.tensors = "a,b|out";
  d.dtype_mask = (1u << CT_DT_FLOAT32) | (1u << CT_DT_FLOAT64);
  d.dtype_rule = "float32 and float64 only";
  d.output_dtype = CT_OUTPUT_SAME;
  d.inplace = 1;
  d.shape_rule = CT_SHAPE_BROADCAST;
  d.desc_type = CT_DESC_NONE;
  d.reference = &co_bias_gelu_reference;
  return co_host->register_op(&d, &co_bias_gelu_id);
}
