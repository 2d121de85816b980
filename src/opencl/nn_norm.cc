// nn_norm.cc — batch_norm (inference, training, backward) and layer_norm
// (forward, backward) on OpenCL devices, float32 data with float32
// statistics and parameters: the module's own kernels. Statistics are one
// work-item per channel (batch norm) or row (layer norm), two passes in
// double where the device has it, in element order; the parameter gradients
// of layer_norm are one work-item per column over the rows in order. So
// every result is deterministic. Data tensors take any strides; the small
// per-channel, per-row and per-column tensors are used in place when they
// are 1-d or compact, and go through a temporary otherwise.
#include <cstring>
#include <memory>
#include <vector>

#include "nn_internal.h"

#ifdef CT_HAVE_CLBLAST

namespace ctcl {
namespace {

const char kNormSource[] = R"CL(
typedef struct {
  long shape[8]; long st[4][8];   /* the data tensors' shape; strides of up to four of them */
  long C, inner, M, R, D;         /* batch norm: channels, elements per (n, c), per channel; layer norm: rows, row length */
  long vs[8];                     /* element strides of the vector tensors, by slot */
  int nd, flags;
  float eps; int pad;
} NG;
inline long ng_off(const NG* g, int t, long i) {
  long o = 0;
  for (int d = g->nd - 1; d >= 0; --d) { const long e = g->shape[d]; o += (i % e) * g->st[t][d]; i /= e; }
  return o;
}
#define F(p, o) ((__global float*)((__global char*)(p) + (o)))
#define V(k, i) vp##k[(i) * g.vs[k]]
/* batch norm statistics: per channel c, mean and 1/sqrt(biased var + eps) */
__kernel void bn_stats(__global const float* x, ulong xo, __global float* v0, ulong o0, __global float* v1, ulong o1, NG g) {
  const long c = get_global_id(0);
  if (c >= g.C) return;
  __global const float* px = F(x, xo);
  __global float* vp0 = F(v0, o0); __global float* vp1 = F(v1, o1);
  AF s = 0;
  for (long n = 0; n < g.M / g.inner; ++n)
    for (long j = 0; j < g.inner; ++j) s += px[ng_off(&g, 0, (n * g.C + c) * g.inner + j)];
  const AF m = g.M ? s / (AF)g.M : (AF)NAN;
  AF v = 0;
  for (long n = 0; n < g.M / g.inner; ++n)
    for (long j = 0; j < g.inner; ++j) { const AF t = px[ng_off(&g, 0, (n * g.C + c) * g.inner + j)] - m; v += t * t; }
  V(0, c) = (float)m;
  V(1, c) = (float)((AF)1 / sqrt(v / (AF)g.M + (AF)g.eps));
}
/* y = (x - mean) * invstd * scale + shift (flags & 16: v1 holds var, not invstd) */
__kernel void bn_apply(__global const float* x, ulong xo, __global float* y, ulong yo, __global const float* v0, ulong o0,
                       __global const float* v1, ulong o1, __global const float* v2, ulong o2, __global const float* v3,
                       ulong o3, NG g) {
  const long i = get_global_id(0);
  if (i >= g.C * g.M) return;
  const long c = (i / g.inner) % g.C;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1);
  __global const float* vp2 = F(v2, o2); __global const float* vp3 = F(v3, o3);
  const float is = (g.flags & 16) ? 1.0f / sqrt(V(1, c) + g.eps) : V(1, c);
  const float sc = (g.flags & 1) ? V(2, c) : 1.0f, sh = (g.flags & 2) ? V(3, c) : 0.0f;
  F(y, yo)[ng_off(&g, 1, i)] = (F(x, xo)[ng_off(&g, 0, i)] - V(0, c)) * is * sc + sh;
}
/* batch norm backward, per channel: sum dy -> v2 (dshift slot), sum dy * xhat -> v3 */
__kernel void bn_bwd_stats(__global const float* x, ulong xo, __global const float* dy, ulong dyo,
                           __global const float* v0, ulong o0, __global const float* v1, ulong o1,
                           __global float* v2, ulong o2, __global float* v3, ulong o3, NG g) {
  const long c = get_global_id(0);
  if (c >= g.C) return;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1);
  __global float* vp2 = F(v2, o2); __global float* vp3 = F(v3, o3);
  const AF m = V(0, c), is = V(1, c);
  AF sdy = 0, sdyx = 0;
  for (long n = 0; n < g.M / g.inner; ++n)
    for (long j = 0; j < g.inner; ++j) {
      const long i = (n * g.C + c) * g.inner + j;
      const AF d = F(dy, dyo)[ng_off(&g, 1, i)];
      sdy += d;
      sdyx += d * (((AF)F(x, xo)[ng_off(&g, 0, i)] - m) * is);
    }
  V(2, c) = (float)sdy;
  V(3, c) = (float)sdyx;
}
/* dx = scale * invstd * (dy - sdy / M - xhat * sdyx / M) */
__kernel void bn_bwd_dx(__global const float* x, ulong xo, __global const float* dy, ulong dyo, __global float* dx,
                        ulong dxo, __global const float* v0, ulong o0, __global const float* v1, ulong o1,
                        __global const float* v2, ulong o2, __global const float* v3, ulong o3,
                        __global const float* v4, ulong o4, NG g) {
  const long i = get_global_id(0);
  if (i >= g.C * g.M) return;
  const long c = (i / g.inner) % g.C;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1);
  __global const float* vp2 = F(v2, o2); __global const float* vp3 = F(v3, o3); __global const float* vp4 = F(v4, o4);
  const float is = V(1, c), xh = (F(x, xo)[ng_off(&g, 0, i)] - V(0, c)) * is;
  const float sc = (g.flags & 1) ? V(4, c) : 1.0f;
  F(dx, dxo)[ng_off(&g, 2, i)] = sc * is * (F(dy, dyo)[ng_off(&g, 1, i)] - V(2, c) / (float)g.M - xh * V(3, c) / (float)g.M);
}
/* layer norm, per row: mean, rstd (flags & 4, 8: write them), y */
__kernel void ln_fwd(__global const float* x, ulong xo, __global float* y, ulong yo, __global const float* v0, ulong o0,
                     __global const float* v1, ulong o1, __global float* v2, ulong o2, __global float* v3, ulong o3, NG g) {
  const long r = get_global_id(0);
  if (r >= g.R) return;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1);
  __global float* vp2 = F(v2, o2); __global float* vp3 = F(v3, o3);
  __global const float* px = F(x, xo);
  AF s = 0;
  for (long j = 0; j < g.D; ++j) s += px[ng_off(&g, 0, r * g.D + j)];
  const AF m = s / (AF)g.D;
  AF v = 0;
  for (long j = 0; j < g.D; ++j) { const AF t = px[ng_off(&g, 0, r * g.D + j)] - m; v += t * t; }
  const AF rs = (AF)1 / sqrt(v / (AF)g.D + (AF)g.eps);
  for (long j = 0; j < g.D; ++j) {
    const float sc = (g.flags & 1) ? V(0, j) : 1.0f, sh = (g.flags & 2) ? V(1, j) : 0.0f;
    F(y, yo)[ng_off(&g, 1, r * g.D + j)] = (float)(((AF)px[ng_off(&g, 0, r * g.D + j)] - m) * rs) * sc + sh;
  }
  if (g.flags & 4) V(2, r) = (float)m;
  if (g.flags & 8) V(3, r) = (float)rs;
}
/* layer norm backward, per row: dx = rstd * (gj - mean(g) - xhat * mean(g * xhat)), g = dy * scale */
__kernel void ln_bwd_dx(__global const float* x, ulong xo, __global const float* dy, ulong dyo, __global float* dx,
                        ulong dxo, __global const float* v0, ulong o0, __global const float* v1, ulong o1,
                        __global const float* v2, ulong o2, NG g) {
  const long r = get_global_id(0);
  if (r >= g.R) return;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1); __global const float* vp2 = F(v2, o2);
  const AF m = V(0, r), rs = V(1, r);
  AF mg = 0, mgx = 0;
  for (long j = 0; j < g.D; ++j) {
    const long i = r * g.D + j;
    const AF xh = ((AF)F(x, xo)[ng_off(&g, 0, i)] - m) * rs;
    const AF gj = (AF)F(dy, dyo)[ng_off(&g, 1, i)] * ((g.flags & 1) ? (AF)V(2, j) : (AF)1);
    mg += gj;
    mgx += gj * xh;
  }
  mg /= (AF)g.D;
  mgx /= (AF)g.D;
  for (long j = 0; j < g.D; ++j) {
    const long i = r * g.D + j;
    const AF xh = ((AF)F(x, xo)[ng_off(&g, 0, i)] - m) * rs;
    const AF gj = (AF)F(dy, dyo)[ng_off(&g, 1, i)] * ((g.flags & 1) ? (AF)V(2, j) : (AF)1);
    F(dx, dxo)[ng_off(&g, 2, i)] = (float)(rs * (gj - mg - xh * mgx));
  }
}
/* layer norm backward, per column j: dscale = sum over rows dy * xhat, dshift = sum dy (flags & 4, 8) */
__kernel void ln_bwd_params(__global const float* x, ulong xo, __global const float* dy, ulong dyo,
                            __global const float* v0, ulong o0, __global const float* v1, ulong o1,
                            __global float* v3, ulong o3, __global float* v4, ulong o4, NG g) {
  const long j = get_global_id(0);
  if (j >= g.D) return;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1);
  __global float* vp3 = F(v3, o3); __global float* vp4 = F(v4, o4);
  AF ds = 0, dsh = 0;
  for (long r = 0; r < g.R; ++r) {
    const long i = r * g.D + j;
    const AF d = F(dy, dyo)[ng_off(&g, 1, i)];
    ds += d * (((AF)F(x, xo)[ng_off(&g, 0, i)] - (AF)V(0, r)) * (AF)V(1, r));
    dsh += d;
  }
  if (g.flags & 4) V(3, j) = (float)ds;
  if (g.flags & 8) V(4, j) = (float)dsh;
}
)CL";

struct NG {
  int64_t shape[8];
  int64_t st[4][8];
  int64_t C, inner, M, R, D;
  int64_t vs[8];
  int32_t nd, flags;
  float eps;
  int32_t pad;
};

// A per-channel/row/column tensor as the kernels take it: buffer, byte
// offset, element stride. A multi-dim one that is not compact goes through
// a compact temporary (copied in for inputs, out for outputs).
struct Vec {
  cl_mem m = nullptr;
  cl_ulong off = 0;
  int64_t stride = 1;
  const CTensor* orig = nullptr;
  void* tmp = nullptr;
  bool out = false;
};

class Vecs {
 public:
  Vecs(const char* fn, Device* d, const Queue& q, void* stream, cl_mem dummy)
      : fn_(fn), d_(d), q_(q), stream_(stream), dummy_(dummy) {}
  ~Vecs() {
    for (Vec& v : v_)
      if (v.tmp) g_host->temp_free(v.orig->device, v.tmp, stream_);
  }
  // slot k <- t (NULL: absent, a dummy buffer)
  CTStatus set(int k, const CTensor* t, bool is_out) {
    Vec& v = v_[k];
    v = Vec();
    if (!t) {
      v.m = dummy_;
      return CT_OK;
    }
    v.orig = t;
    v.out = is_out;
    if (t->ndim <= 1) {
      v.m = mem_of(t);
      v.off = t->byte_offset;
      v.stride = t->ndim == 1 ? stride_of(t, 0) : 1;
      return CT_OK;
    }
    if (ct_is_compact(t)) {
      v.m = mem_of(t);
      v.off = t->byte_offset;
      return CT_OK;
    }
    const size_t bytes = (size_t)numel_of(t) * 4;
    if (CTStatus s = g_host->temp_alloc(t->device, bytes ? bytes : 4, stream_, &v.tmp)) return s;
    v.m = static_cast<cl_mem>(v.tmp);
    if (!is_out) {
      const CTensor c = ws_tensor(t, v.tmp, 0);
      return device_copy(fn_, d_, q_, CT_DT_FLOAT32, t, &c);
    }
    return CT_OK;
  }
  // After the kernels: temporaries of outputs go to their tensors.
  CTStatus finish() {
    for (Vec& v : v_)
      if (v.tmp && v.out) {
        const CTensor c = ws_tensor(v.orig, v.tmp, 0);
        if (CTStatus s = device_copy(fn_, d_, q_, CT_DT_FLOAT32, &c, v.orig)) return s;
      }
    return CT_OK;
  }
  const Vec& operator[](int k) const { return v_[k]; }
  void strides(int64_t* vs) const {
    for (int k = 0; k < 8; ++k) vs[k] = v_[k].stride;
  }

 private:
  const char* fn_;
  Device* d_;
  Queue q_;
  void* stream_;
  cl_mem dummy_;
  Vec v_[8];
};

// Runs kernel `name` over `items` work-items with the data tensors (buffer,
// offset pairs), the vector slots listed, and g.
CTStatus run(const char* fn, Program* prog, const Queue& q, const char* name, int64_t items,
             std::vector<const CTensor*> data, const Vecs& v, std::vector<int> slots, const NG& g) {
  if (items <= 0) return CT_OK;
  cl_kernel k = nullptr;
  if (CTStatus s = prog->take(fn, name, &k)) return s;
  CTStatus st = CT_OK;
  cl_uint a = 0;
  bool ok = true;
  for (const CTensor* t : data) {
    cl_mem m = mem_of(t);
    cl_ulong o = t->byte_offset;
    ok = ok && set_arg(fn, k, a++, sizeof m, &m, &st) && set_arg(fn, k, a++, sizeof o, &o, &st);
  }
  for (int s : slots) {
    cl_mem m = v[s].m;
    cl_ulong o = v[s].off;
    ok = ok && set_arg(fn, k, a++, sizeof m, &m, &st) && set_arg(fn, k, a++, sizeof o, &o, &st);
  }
  if (ok && set_arg(fn, k, a++, sizeof g, &g, &st)) st = launch(fn, q, k, items, name);
  prog->give(name, k);
  return st;
}

void set_data(NG* g, int slot, const CTensor* t) {
  for (int32_t d = 0; d < t->ndim; ++d) g->st[slot][d] = stride_of(t, d);
}

}  // namespace

CTStatus norm_plan_execute(const NNPlan* plan, const CTNNCall* call) {
  const char* fn = call->fn;
  Device* d = device(plan->device_id);
  Queue q;
  if (CTStatus s = queue_of(fn, d, call->stream, &q)) return s;
  Program* prog = nullptr;
  const std::string src = std::string(d->fp64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define AF double\n"
                                              : "#define AF float\n") +
                          kNormSource;
  if (CTStatus s = get_program(fn, d, q.ctx, src, "norms float32", &prog)) return s;
  const CTensor* const* t = call->t;
  const CTensor* x = t[0];
  NG g;
  std::memset(&g, 0, sizeof g);
  g.nd = x->ndim;
  for (int32_t i = 0; i < x->ndim; ++i) g.shape[i] = x->shape[i];
  const bool bn = call->op == CT_OP_BATCH_NORM || call->op == CT_OP_BATCH_NORM_TRAINING ||
                  call->op == CT_OP_BATCH_NORM_BACKWARD;
  if (bn) {
    const CTBatchNormDesc* desc = static_cast<const CTBatchNormDesc*>(call->desc);
    g.eps = (float)desc->epsilon;
    g.C = x->shape[1];
    g.inner = 1;
    for (int32_t i = 2; i < x->ndim; ++i) g.inner *= x->shape[i];
    g.M = g.C ? numel_of(x) / g.C : 0;
  } else {
    const CTLayerNormDesc* desc = static_cast<const CTLayerNormDesc*>(call->desc);
    g.eps = (float)desc->epsilon;
    const int32_t k = desc->normalized_ndim > 0 ? desc->normalized_ndim : 1;
    g.D = 1;
    g.R = 1;
    for (int32_t i = 0; i < x->ndim; ++i) (i >= x->ndim - k ? g.D : g.R) *= x->shape[i];
  }
  Vecs v(fn, d, q, call->stream, mem_of(x));
  CTStatus s = CT_OK;
  switch (call->op) {
    case CT_OP_BATCH_NORM: {  // x, mean, var, scale?, shift? | y
      if ((s = v.set(0, t[1], false)) || (s = v.set(1, t[2], false)) || (s = v.set(2, t[3], false)) ||
          (s = v.set(3, t[4], false)))
        return s;
      g.flags = (t[3] ? 1 : 0) | (t[4] ? 2 : 0) | 16;
      set_data(&g, 0, x);
      set_data(&g, 1, t[5]);
      v.strides(g.vs);
      s = run(fn, prog, q, "bn_apply", g.C * g.M, {x, t[5]}, v, {0, 1, 2, 3}, g);
      break;
    }
    case CT_OP_BATCH_NORM_TRAINING: {  // x, scale?, shift? | y, mean, invstd
      if ((s = v.set(0, t[4], true)) || (s = v.set(1, t[5], true)) || (s = v.set(2, t[1], false)) ||
          (s = v.set(3, t[2], false)))
        return s;
      g.flags = (t[1] ? 1 : 0) | (t[2] ? 2 : 0);
      set_data(&g, 0, x);
      set_data(&g, 1, t[3]);
      v.strides(g.vs);
      s = run(fn, prog, q, "bn_stats", g.C, {x}, v, {0, 1}, g);
      if (s == CT_OK) s = run(fn, prog, q, "bn_apply", g.C * g.M, {x, t[3]}, v, {0, 1, 2, 3}, g);
      break;
    }
    case CT_OP_BATCH_NORM_BACKWARD: {  // x, dy, mean, invstd, scale? | dx, dscale?, dshift?
      // slot 2: dshift (or a temporary), 3: dscale (or a temporary): the sums dx needs
      void* sums = nullptr;
      const bool need_tmp = !t[6] || !t[7];
      if (need_tmp && (s = g_host->temp_alloc(x->device, (size_t)(2 * (g.C ? g.C : 1)) * 4, call->stream, &sums)))
        return s;
      int64_t cshape[1] = {g.C};
      CTensor t_dshift{sums, x->device, 1, {CT_FLOAT, 32, 1}, cshape, nullptr, 0};
      CTensor t_dscale{sums, x->device, 1, {CT_FLOAT, 32, 1}, cshape, nullptr, (uint64_t)(g.C * 4)};
      if (!(s = v.set(0, t[2], false)) && !(s = v.set(1, t[3], false)) &&
          !(s = v.set(2, t[7] ? t[7] : &t_dshift, true)) && !(s = v.set(3, t[6] ? t[6] : &t_dscale, true)) &&
          !(s = v.set(4, t[4], false))) {
        g.flags = t[4] ? 1 : 0;
        set_data(&g, 0, x);
        set_data(&g, 1, t[1]);
        set_data(&g, 2, t[5]);
        v.strides(g.vs);
        s = run(fn, prog, q, "bn_bwd_stats", g.C, {x, t[1]}, v, {0, 1, 2, 3}, g);
        // the sums must be in their compact temporaries' places before dx reads them
        if (s == CT_OK) s = run(fn, prog, q, "bn_bwd_dx", g.C * g.M, {x, t[1], t[5]}, v, {0, 1, 2, 3, 4}, g);
      }
      if (s == CT_OK) s = v.finish();
      if (sums) g_host->temp_free(x->device, sums, call->stream);
      return s;
    }
    case CT_OP_LAYER_NORM: {  // x, scale?, shift? | y, mean?, rstd?
      if ((s = v.set(0, t[1], false)) || (s = v.set(1, t[2], false)) || (s = v.set(2, t[4], true)) ||
          (s = v.set(3, t[5], true)))
        return s;
      g.flags = (t[1] ? 1 : 0) | (t[2] ? 2 : 0) | (t[4] ? 4 : 0) | (t[5] ? 8 : 0);
      set_data(&g, 0, x);
      set_data(&g, 1, t[3]);
      v.strides(g.vs);
      s = run(fn, prog, q, "ln_fwd", g.R, {x, t[3]}, v, {0, 1, 2, 3}, g);
      break;
    }
    default: {  // layer_norm_backward: x, dy, mean, rstd, scale? | dx, dscale?, dshift?
      if ((s = v.set(0, t[2], false)) || (s = v.set(1, t[3], false)) || (s = v.set(2, t[4], false)) ||
          (s = v.set(3, t[6], true)) || (s = v.set(4, t[7], true)))
        return s;
      g.flags = t[4] ? 1 : 0;
      set_data(&g, 0, x);
      set_data(&g, 1, t[1]);
      set_data(&g, 2, t[5]);
      v.strides(g.vs);
      s = run(fn, prog, q, "ln_bwd_dx", g.R, {x, t[1], t[5]}, v, {0, 1, 2}, g);
      if (s == CT_OK && (t[6] || t[7])) {
        g.flags = (t[6] ? 4 : 0) | (t[7] ? 8 : 0);
        s = run(fn, prog, q, "ln_bwd_params", g.D, {x, t[1]}, v, {0, 1, 3, 4}, g);
      }
      break;
    }
  }
  if (s == CT_OK) s = v.finish();
  return s;
}

}  // namespace ctcl

#endif  // CT_HAVE_CLBLAST
