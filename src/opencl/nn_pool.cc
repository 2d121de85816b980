// nn_pool.cc — max_pool2d, avg_pool2d and their backward ops on OpenCL
// devices: the module's own kernels, any strides (NCHW, NHWC, views), one
// work-item per output element. The backward ops gather: each dx element
// sums, in window order, the outputs whose window holds it (max: those whose
// index names it), so they need no atomics and are deterministic. An index
// outside its output's window (which the CPU refuses after reading it)
// contributes nothing to dx; a check kernel run before the backward sets
// the device's error flag for it, which the next ct_synchronize reports
// (reading device memory before the call returns would block).
#include <cstring>
#include <memory>

#include "nn_internal.h"

#ifdef CT_HAVE_CLBLAST

namespace ctcl {
namespace {

const char kPoolSource[] = R"CL(
typedef struct {
  long N, C, H, W, P, Q, kh, kw, sh, sw, ph, pw, dh, dw;
  long xs[4], ys[4], is[4];
  int cip, has_ind;
} PGeo;
inline long ct_taps(const PGeo* g, long p, long q) {
  long n = 0;
  for (long r = 0; r < g->kh; ++r) {
    const long h = p * g->sh - g->ph + r * g->dh;
    if (h < 0 || h >= g->H) continue;
    for (long s = 0; s < g->kw; ++s) {
      const long w = q * g->sw - g->pw + s * g->dw;
      if (w >= 0 && w < g->W) ++n;
    }
  }
  return n;
}
inline float ct_divisor(const PGeo* g, long p, long q) { return g->cip ? (float)(g->kh * g->kw) : (float)ct_taps(g, p, q); }
// (n, c, a, b) of element i of an (N, C, A, B) index space
inline void ct_split(long i, long A, long B, long C, long* n, long* c, long* a, long* b) {
  *b = i % B; i /= B; *a = i % A; i /= A; *c = i % C; *n = i / C;
}
__kernel void pool_fwd(__global float* y, ulong yo, __global long* ind, ulong io, __global const float* x, ulong xo,
                       int is_max, PGeo g) {
  const long i = get_global_id(0);
  if (i >= g.N * g.C * g.P * g.Q) return;
  long n, c, p, q;
  ct_split(i, g.P, g.Q, g.C, &n, &c, &p, &q);
  __global const float* px = (__global const float*)((__global const char*)x + xo) + n * g.xs[0] + c * g.xs[1];
  float best = -INFINITY, sum = 0.0f;
  long bi = -1;
  for (long r = 0; r < g.kh; ++r) {
    const long h = p * g.sh - g.ph + r * g.dh;
    if (h < 0 || h >= g.H) continue;
    for (long s = 0; s < g.kw; ++s) {
      const long w = q * g.sw - g.pw + s * g.dw;
      if (w < 0 || w >= g.W) continue;
      const float v = px[h * g.xs[2] + w * g.xs[3]];
      if (bi < 0 || v > best) { best = v; bi = h * g.W + w; }
      sum += v;
    }
  }
  __global float* py = (__global float*)((__global char*)y + yo);
  const long oy = n * g.ys[0] + c * g.ys[1] + p * g.ys[2] + q * g.ys[3];
  py[oy] = is_max ? best : sum / ct_divisor(&g, p, q);
  if (is_max && g.has_ind) {
    __global long* pi = (__global long*)((__global char*)ind + io);
    pi[n * g.is[0] + c * g.is[1] + p * g.is[2] + q * g.is[3]] = bi;
  }
}
// One work-item per output: whether its index is one of its window's taps
// inside x (dilation included); sets *err to code (kFlagPoolIndex) if not.
__kernel void pool_ind_check(__global const long* ind, ulong io, PGeo g, __global int* err, int code) {
  const long i = get_global_id(0);
  if (i >= g.N * g.C * g.P * g.Q) return;
  long n, c, p, q;
  ct_split(i, g.P, g.Q, g.C, &n, &c, &p, &q);
  const long v = ((__global const long*)((__global const char*)ind + io))[n * g.is[0] + c * g.is[1] + p * g.is[2] + q * g.is[3]];
  int ok = 0;
  if (v >= 0 && v < g.H * g.W) {
    const long rh = v / g.W - (p * g.sh - g.ph), rw = v % g.W - (q * g.sw - g.pw);
    ok = rh >= 0 && rw >= 0 && rh % g.dh == 0 && rw % g.dw == 0 && rh / g.dh < g.kh && rw / g.dw < g.kw;
  }
  if (!ok) atomic_xchg(err, code);
}
__kernel void pool_bwd(__global float* dx, ulong xo, __global const float* dy, ulong yo, __global const long* ind,
                       ulong io, int is_max, PGeo g) {
  const long i = get_global_id(0);
  if (i >= g.N * g.C * g.H * g.W) return;
  long n, c, h, w;
  ct_split(i, g.H, g.W, g.C, &n, &c, &h, &w);
  __global const float* pdy = (__global const float*)((__global const char*)dy + yo) + n * g.ys[0] + c * g.ys[1];
  __global const long* pi = (__global const long*)((__global const char*)ind + io) + n * g.is[0] + c * g.is[1];
  float acc = 0.0f;
  for (long r = 0; r < g.kh; ++r) {
    const long hp = h + g.ph - r * g.dh;
    if (hp < 0 || hp % g.sh != 0 || hp / g.sh >= g.P) continue;
    const long p = hp / g.sh;
    for (long s = 0; s < g.kw; ++s) {
      const long wq = w + g.pw - s * g.dw;
      if (wq < 0 || wq % g.sw != 0 || wq / g.sw >= g.Q) continue;
      const long q = wq / g.sw;
      const float v = pdy[p * g.ys[2] + q * g.ys[3]];
      if (is_max) {
        if (pi[p * g.is[2] + q * g.is[3]] == h * g.W + w) acc += v;
      } else {
        acc += v / ct_divisor(&g, p, q);
      }
    }
  }
  __global float* px = (__global float*)((__global char*)dx + xo);
  px[n * g.xs[0] + c * g.xs[1] + h * g.xs[2] + w * g.xs[3]] = acc;
}
)CL";

struct PGeo {
  int64_t N, C, H, W, P, Q, kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t xs[4], ys[4], is[4];
  int32_t cip, has_ind;
};

}  // namespace

CTStatus pool_plan_execute(const NNPlan* plan, const CTNNCall* call) {
  const char* fn = call->fn;
  Device* d = device(plan->device_id);
  Queue q;
  if (CTStatus s = queue_of(fn, d, call->stream, &q)) return s;
  Program* prog = nullptr;
  if (CTStatus s = get_program(fn, d, q.ctx, kPoolSource, "pool2d float32", &prog)) return s;
  const bool fwd = call->op == CT_OP_MAX_POOL2D || call->op == CT_OP_AVG_POOL2D;
  const cl_int is_max = call->op == CT_OP_MAX_POOL2D || call->op == CT_OP_MAX_POOL2D_BACKWARD;
  // x-side and y-side tensors, and the indices (NULL when absent)
  const CTensor *xt, *yt, *it = nullptr;
  switch (call->op) {
    case CT_OP_MAX_POOL2D: xt = call->t[0], yt = call->t[1], it = call->t[2]; break;
    case CT_OP_AVG_POOL2D: xt = call->t[0], yt = call->t[1]; break;
    case CT_OP_MAX_POOL2D_BACKWARD: yt = call->t[0], it = call->t[1], xt = call->t[2]; break;
    default: yt = call->t[0], xt = call->t[1]; break;
  }
  const CTPool2dDesc* desc = static_cast<const CTPool2dDesc*>(call->desc);
  PGeo g;
  std::memset(&g, 0, sizeof g);
  g.N = xt->shape[0], g.C = xt->shape[1], g.H = xt->shape[2], g.W = xt->shape[3];
  g.P = yt->shape[2], g.Q = yt->shape[3];
  g.kh = desc->kernel[0], g.kw = desc->kernel[1];
  g.sh = desc->stride[0], g.sw = desc->stride[1];
  g.ph = desc->pad_begin[0], g.pw = desc->pad_begin[1];
  g.dh = desc->dilation[0] > 0 ? desc->dilation[0] : 1, g.dw = desc->dilation[1] > 0 ? desc->dilation[1] : 1;
  g.cip = desc->count_include_pad != 0;
  g.has_ind = it != nullptr;
  for (int i = 0; i < 4; ++i) {
    g.xs[i] = stride_of(xt, i);
    g.ys[i] = stride_of(yt, i);
    g.is[i] = it ? stride_of(it, i) : 0;
  }
  const int64_t items = fwd ? numel_of(yt) : numel_of(xt);
  if (items == 0) return CT_OK;
  if (call->op == CT_OP_MAX_POOL2D_BACKWARD && numel_of(yt) > 0) {  // the indices, checked on the device first
    cl_mem flag = nullptr, im = mem_of(it);
    cl_ulong io = it->byte_offset;
    if (CTStatus s = error_flag(fn, d, q.ctx, &flag)) return s;
    cl_kernel kc = nullptr;
    if (CTStatus s = prog->take(fn, "pool_ind_check", &kc)) return s;
    CTStatus st = CT_OK;
    if (set_arg(fn, kc, 0, sizeof im, &im, &st) && set_arg(fn, kc, 1, sizeof io, &io, &st) &&
        set_arg(fn, kc, 2, sizeof g, &g, &st) && set_arg(fn, kc, 3, sizeof flag, &flag, &st) &&
        set_arg(fn, kc, 4, sizeof kFlagPoolIndex, &kFlagPoolIndex, &st))
      st = launch(fn, q, kc, numel_of(yt), "pool_ind_check");
    prog->give("pool_ind_check", kc);
    if (st) return st;
  }
  const char* name = fwd ? "pool_fwd" : "pool_bwd";
  cl_kernel k = nullptr;
  if (CTStatus s = prog->take(fn, name, &k)) return s;
  CTStatus st = CT_OK;
  cl_mem xm = mem_of(xt), ym = mem_of(yt), im = it ? mem_of(it) : mem_of(yt);
  cl_ulong xo = xt->byte_offset, yo = yt->byte_offset, io = it ? it->byte_offset : 0;
  const bool ok = fwd ? set_arg(fn, k, 0, sizeof ym, &ym, &st) && set_arg(fn, k, 1, sizeof yo, &yo, &st) &&
                            set_arg(fn, k, 2, sizeof im, &im, &st) && set_arg(fn, k, 3, sizeof io, &io, &st) &&
                            set_arg(fn, k, 4, sizeof xm, &xm, &st) && set_arg(fn, k, 5, sizeof xo, &xo, &st)
                      : set_arg(fn, k, 0, sizeof xm, &xm, &st) && set_arg(fn, k, 1, sizeof xo, &xo, &st) &&
                            set_arg(fn, k, 2, sizeof ym, &ym, &st) && set_arg(fn, k, 3, sizeof yo, &yo, &st) &&
                            set_arg(fn, k, 4, sizeof im, &im, &st) && set_arg(fn, k, 5, sizeof io, &io, &st);
  if (ok && set_arg(fn, k, 6, sizeof is_max, &is_max, &st) && set_arg(fn, k, 7, sizeof g, &g, &st))
    st = launch(fn, q, k, items, name);
  prog->give(name, k);
  return st;
}

}  // namespace ctcl

#endif  // CT_HAVE_CLBLAST
