// nn_conv.cc — conv2d and its backward ops on OpenCL devices: im2col / col2im
// kernels of the module's own and CLBlast's GEMM, per image and group:
//   forward:         col = im2col(x[n]);  y[n, g] = w[g] @ col[g]
//   backward data:   col[g] = w[g]^T @ dy[n, g];  dx[n] = col2im(col)
//   backward weight: dw[g] (+)= dy[n, g] @ col[g]^T over n in order; dbias =
//                    the module's sum of dy over (N, P, Q)
// Any layout of x, dy, dx and y (NCHW, NHWC, views) by strides: the im2col and
// col2im kernels gather and scatter by strides; w and dy when not compact
// NCHW, and y, dx, dw when not, go through the workspace. col2im is a gather
// (each dx element sums its window positions in a fixed order) and the
// weight gradient accumulates images in order on the queue: deterministic.
#include <algorithm>
#include <cstring>
#include <memory>

#include "nn_internal.h"

#ifdef CT_HAVE_CLBLAST

namespace ctcl {
namespace {

const char kConvSource[] = R"CL(
typedef struct {
  long N, C, H, W, K, R, S, P, Q, G, Cg;
  long sh, sw, ph, pw, dh, dw;
  long xs[4];
} CGeo;
// col[g][c][r][s][p][q] (compact) of image n of x (strides xs, element offset xo)
__kernel void im2col(__global float* col, __global const float* x, ulong xo, long n, CGeo g) {
  long i = get_global_id(0);
  const long total = g.C * g.R * g.S * g.P * g.Q;
  if (i >= total) return;
  long t = i;
  const long q = t % g.Q; t /= g.Q;
  const long p = t % g.P; t /= g.P;
  const long s = t % g.S; t /= g.S;
  const long r = t % g.R; t /= g.R;
  const long ch = t;  /* g * Cg + c: the col order above is the channel order */
  const long h = p * g.sh - g.ph + r * g.dh, w = q * g.sw - g.pw + s * g.dw;
  __global const float* px = (__global const float*)((__global const char*)x + xo);
  col[i] = (h >= 0 && h < g.H && w >= 0 && w < g.W) ? px[n * g.xs[0] + ch * g.xs[1] + h * g.xs[2] + w * g.xs[3]] : 0.0f;
}
// dx[n] (strides xs, element offset xo) from col: each element sums the window
// positions that read it, in order of (r, s)
__kernel void col2im(__global float* x, ulong xo, __global const float* col, long n, CGeo g) {
  long i = get_global_id(0);
  if (i >= g.C * g.H * g.W) return;
  long t = i;
  const long w = t % g.W; t /= g.W;
  const long h = t % g.H; t /= g.H;
  const long ch = t;
  float acc = 0.0f;
  for (long r = 0; r < g.R; ++r) {
    const long hp = h + g.ph - r * g.dh;
    if (hp < 0 || hp % g.sh != 0) continue;
    const long p = hp / g.sh;
    if (p >= g.P) continue;
    for (long s = 0; s < g.S; ++s) {
      const long wq = w + g.pw - s * g.dw;
      if (wq < 0 || wq % g.sw != 0) continue;
      const long q = wq / g.sw;
      if (q >= g.Q) continue;
      acc += col[(((ch * g.R + r) * g.S + s) * g.P + p) * g.Q + q];
    }
  }
  __global float* px = (__global float*)((__global char*)x + xo);
  px[n * g.xs[0] + ch * g.xs[1] + h * g.xs[2] + w * g.xs[3]] = acc;
}
)CL";

struct CGeo {
  int64_t N, C, H, W, K, R, S, P, Q, G, Cg;
  int64_t sh, sw, ph, pw, dh, dw;
  int64_t xs[4];
};

struct ConvPlan : NNPlan {
  CGeo g{};
  int64_t Kg = 0, CRS = 0, PQ = 0;  // per group: K/G, Cg*R*S; P*Q
  // workspace regions (bytes): CLBlast's temp at 0, then col, then packed tensors
  size_t temp_bytes = 0, col_off = 0, w_off = 0, dy_off = 0, out_off = 0, ws_bytes = 0;
  bool pack_w = false, pack_dy = false, pack_out = false;
  int32_t act = CT_ACTIVATION_NONE;
};

bool nchw_compact(const CTensor* t) { return ct_is_compact(t) != 0; }

CTStatus enqueue_im2col(const char* fn, Program* prog, const Queue& q, cl_mem col, const CTensor* x, int64_t n,
                        const CGeo& g, const char* name) {
  cl_kernel k = nullptr;
  if (CTStatus s = prog->take(fn, name, &k)) return s;
  CTStatus st = CT_OK;
  cl_mem xm = mem_of(x);
  cl_ulong xo = x->byte_offset;
  cl_long nn = n;
  CGeo gg = g;
  for (int i = 0; i < 4; ++i) gg.xs[i] = stride_of(x, i);
  const bool args = std::strcmp(name, "im2col") == 0
                        ? set_arg(fn, k, 0, sizeof col, &col, &st) && set_arg(fn, k, 1, sizeof xm, &xm, &st) &&
                              set_arg(fn, k, 2, sizeof xo, &xo, &st)
                        : set_arg(fn, k, 0, sizeof xm, &xm, &st) && set_arg(fn, k, 1, sizeof xo, &xo, &st) &&
                              set_arg(fn, k, 2, sizeof col, &col, &st);
  if (args && set_arg(fn, k, 3, sizeof nn, &nn, &st) && set_arg(fn, k, 4, sizeof gg, &gg, &st)) {
    const int64_t items = std::strcmp(name, "im2col") == 0 ? g.C * g.R * g.S * g.P * g.Q : g.C * g.H * g.W;
    st = launch(fn, q, k, items, name);
  }
  prog->give(name, k);
  return st;
}

// A sub-buffer-free view of float32 element `off` of a compact region: CLBlast takes offsets.
size_t elem_off(const CTensor* t) { return (size_t)(t->byte_offset / 4); }

CTStatus gemm(const char* fn, const Queue& q, bool ta, bool tb, int64_t m, int64_t n, int64_t k, cl_mem a, size_t ao,
              size_t lda, cl_mem b, size_t bo, size_t ldb, float beta, cl_mem c, size_t co, size_t ldc, cl_mem temp) {
  cl_command_queue qq = q.q;
  const auto st = clblast::Gemm<float>(clblast::Layout::kRowMajor, ta ? clblast::Transpose::kYes : clblast::Transpose::kNo,
                                       tb ? clblast::Transpose::kYes : clblast::Transpose::kNo, (size_t)m, (size_t)n,
                                       (size_t)k, 1.0f, a, ao, lda, b, bo, ldb, beta, c, co, ldc, &qq, nullptr, temp);
  return st == clblast::StatusCode::kSuccess ? CT_OK : blast_fail(fn, "Gemm", st);
}

// The (m, n, k, transposes, lds) of the op's one GEMM shape.
struct GemmShape {
  bool ta, tb;
  int64_t m, n, k;
  size_t lda, ldb, ldc;
};
GemmShape gemm_shape(const ConvPlan& p) {
  switch (p.op) {
    case CT_OP_CONV2D: return {false, false, p.Kg, p.PQ, p.CRS, (size_t)p.CRS, (size_t)p.PQ, (size_t)p.PQ};
    case CT_OP_CONV2D_BACKWARD_DATA: return {true, false, p.CRS, p.PQ, p.Kg, (size_t)p.CRS, (size_t)p.PQ, (size_t)p.PQ};
    default: return {false, true, p.Kg, p.CRS, p.PQ, (size_t)p.PQ, (size_t)p.PQ, (size_t)p.CRS};
  }
}

}  // namespace

CTStatus conv_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives) {
  const char* fn = call->fn;
  auto p = std::make_unique<ConvPlan>();
  p->op = call->op;
  const CTensor *x, *w, *y;  // the forward's roles: x (N,C,H,W), w (K,Cg,R,S), y (N,K,P,Q)
  if (call->op == CT_OP_CONV2D) x = call->t[0], w = call->t[1], y = call->t[3];
  else if (call->op == CT_OP_CONV2D_BACKWARD_DATA) y = call->t[0], w = call->t[1], x = call->t[2];
  else x = call->t[0], y = call->t[1], w = call->t[2];
  p->device_id = y->device.device_id;
  Device* d = device(p->device_id);
  const CTConv2dDesc* desc = static_cast<const CTConv2dDesc*>(call->desc);
  CGeo& g = p->g;
  g.N = x->shape[0], g.C = x->shape[1], g.H = x->shape[2], g.W = x->shape[3];
  g.K = w->shape[0], g.R = w->shape[2], g.S = w->shape[3];
  g.P = y->shape[2], g.Q = y->shape[3];
  g.G = desc->groups > 0 ? desc->groups : 1;
  g.Cg = g.C / g.G;
  g.sh = desc->stride[0], g.sw = desc->stride[1], g.ph = desc->pad_begin[0], g.pw = desc->pad_begin[1];
  g.dh = desc->dilation[0], g.dw = desc->dilation[1];
  p->act = call->op == CT_OP_CONV2D ? desc->activation : CT_ACTIVATION_NONE;
  p->Kg = g.K / g.G;
  p->CRS = g.Cg * g.R * g.S;
  p->PQ = g.P * g.Q;
  p->pack_w = !nchw_compact(w) && call->op != CT_OP_CONV2D_BACKWARD_WEIGHT;
  const CTensor* dy = call->op == CT_OP_CONV2D ? nullptr : y;
  p->pack_dy = dy && !nchw_compact(dy);
  const CTensor* out = call->op == CT_OP_CONV2D ? y : call->op == CT_OP_CONV2D_BACKWARD_WEIGHT ? w : nullptr;
  p->pack_out = out && !nchw_compact(out);  // dx is written by col2im through its strides
  Queue q;
  if (CTStatus s = queue_of(fn, d, call->stream, &q)) return s;
  const GemmShape gs = gemm_shape(*p);
  if (gs.m > 0 && gs.n > 0 && gs.k > 0) {
    size_t temp = 0;
    const auto st = clblast::GemmTempBufferSize<float>(
        clblast::Layout::kRowMajor, gs.ta ? clblast::Transpose::kYes : clblast::Transpose::kNo,
        gs.tb ? clblast::Transpose::kYes : clblast::Transpose::kNo, (size_t)gs.m, (size_t)gs.n, (size_t)gs.k, 0,
        gs.lda, 0, gs.ldb, 0, gs.ldc, &q.q, temp);
    if (st != clblast::StatusCode::kSuccess) return blast_fail(fn, "GemmTempBufferSize", st);
    p->temp_bytes = temp;
  }
  size_t off = align_up(p->temp_bytes);
  p->col_off = off;
  off = align_up(off + (size_t)(g.C * g.R * g.S * g.P * g.Q) * 4);
  if (p->pack_w) {
    p->w_off = off;
    off = align_up(off + (size_t)numel_of(w) * 4);
  }
  if (p->pack_dy) {
    p->dy_off = off;
    off = align_up(off + (size_t)numel_of(dy) * 4);
  }
  if (p->pack_out) {
    p->out_off = off;
    off = align_up(off + (size_t)numel_of(out) * 4);
  }
  p->ws_bytes = off;
  *workspace_bytes = off;
  *primitives = 1;
  *plan = p.release();
  return CT_OK;
}

CTStatus conv_plan_execute(const NNPlan* plan, const CTNNCall* call, void* ws) {
  const ConvPlan& p = *static_cast<const ConvPlan*>(plan);
  const char* fn = call->fn;
  Device* d = device(p.device_id);
  Queue q;
  if (CTStatus s = queue_of(fn, d, call->stream, &q)) return s;
  Program* prog = nullptr;
  if (CTStatus s = get_program(fn, d, q.ctx, kConvSource, "conv2d im2col/col2im float32", &prog)) return s;
  const CGeo& g = p.g;
  cl_mem wsm = static_cast<cl_mem>(ws);
  cl_mem temp = p.temp_bytes ? wsm : nullptr;
  const size_t col0 = p.col_off / 4;
  const GemmShape gs = gemm_shape(p);
  const bool empty_sum = gs.k == 0;
  if (call->op == CT_OP_CONV2D) {
    const CTensor *x = call->t[0], *w = call->t[1], *bias = call->t[2], *y = call->t[3];
    CTensor wp = *w, yp = *y;
    if (p.pack_w) {
      wp = ws_tensor(w, ws, p.w_off);
      if (CTStatus s = device_copy(fn, d, q, CT_DT_FLOAT32, w, &wp)) return s;
    }
    if (p.pack_out) yp = ws_tensor(y, ws, p.out_off);
    if (numel_of(y) == 0) return CT_OK;
    if (empty_sum) {
      if (CTStatus s = zero_fill(fn, d, q, &yp, call->stream)) return s;
    } else {
      for (int64_t n = 0; n < g.N; ++n) {
        if (CTStatus s = enqueue_im2col(fn, prog, q, wsm, x, n, g, "im2col")) return s;
        for (int64_t gi = 0; gi < g.G; ++gi)
          if (CTStatus s = gemm(fn, q, false, false, p.Kg, p.PQ, p.CRS, mem_of(&wp), elem_off(&wp) + (size_t)(gi * p.Kg * p.CRS),
                                (size_t)p.CRS, wsm, col0 + (size_t)(gi * p.CRS * p.PQ), (size_t)p.PQ, 0.0f, mem_of(&yp),
                                elem_off(&yp) + (size_t)((n * g.K + gi * p.Kg) * p.PQ), (size_t)p.PQ, temp))
            return s;
      }
    }
    if (p.pack_out)
      if (CTStatus s = device_copy(fn, d, q, CT_DT_FLOAT32, &yp, y)) return s;
    int64_t bstr[4] = {0, 0, 0, 0};  // bias over (N, P, Q): its K values along dim 1
    CTensor bv;
    if (bias) {
      for (int32_t i = 0; i < bias->ndim; ++i)
        if (bias->shape[i] == g.K) bstr[1] = stride_of(bias, i);
      bv = *bias;
      bv.ndim = 4;
      bv.shape = y->shape;
      bv.strides = bstr;
    }
    return bias_and_activation(fn, y, bias ? &bv : nullptr, p.act, call->stream);
  }
  if (call->op == CT_OP_CONV2D_BACKWARD_DATA) {
    const CTensor *dy = call->t[0], *w = call->t[1], *dx = call->t[2];
    if (numel_of(dx) == 0) return CT_OK;
    CTensor wp = *w, dyp = *dy;
    if (p.pack_w) {
      wp = ws_tensor(w, ws, p.w_off);
      if (CTStatus s = device_copy(fn, d, q, CT_DT_FLOAT32, w, &wp)) return s;
    }
    if (p.pack_dy) {
      dyp = ws_tensor(dy, ws, p.dy_off);
      if (CTStatus s = device_copy(fn, d, q, CT_DT_FLOAT32, dy, &dyp)) return s;
    }
    if (empty_sum || p.PQ == 0) return zero_fill(fn, d, q, dx, call->stream);
    for (int64_t n = 0; n < g.N; ++n) {
      for (int64_t gi = 0; gi < g.G; ++gi)
        if (CTStatus s = gemm(fn, q, true, false, p.CRS, p.PQ, p.Kg, mem_of(&wp), elem_off(&wp) + (size_t)(gi * p.Kg * p.CRS),
                              (size_t)p.CRS, mem_of(&dyp), elem_off(&dyp) + (size_t)((n * g.K + gi * p.Kg) * p.PQ),
                              (size_t)p.PQ, 0.0f, wsm, col0 + (size_t)(gi * p.CRS * p.PQ), (size_t)p.PQ, temp))
          return s;
      if (CTStatus s = enqueue_im2col(fn, prog, q, wsm, dx, n, g, "col2im")) return s;
    }
    return CT_OK;
  }
  // backward weight
  const CTensor *x = call->t[0], *dy = call->t[1], *dw = call->t[2], *dbias = call->t[3];
  CTensor dyp = *dy, dwp = *dw;
  if (p.pack_dy) {
    dyp = ws_tensor(dy, ws, p.dy_off);
    if (CTStatus s = device_copy(fn, d, q, CT_DT_FLOAT32, dy, &dyp)) return s;
  }
  if (p.pack_out) dwp = ws_tensor(dw, ws, p.out_off);
  if (numel_of(dw) > 0) {
    if (g.N == 0 || p.PQ == 0) {
      if (CTStatus s = zero_fill(fn, d, q, &dwp, call->stream)) return s;
    } else {
      for (int64_t n = 0; n < g.N; ++n) {
        if (CTStatus s = enqueue_im2col(fn, prog, q, wsm, x, n, g, "im2col")) return s;
        for (int64_t gi = 0; gi < g.G; ++gi)
          if (CTStatus s = gemm(fn, q, false, true, p.Kg, p.CRS, p.PQ, mem_of(&dyp),
                                elem_off(&dyp) + (size_t)((n * g.K + gi * p.Kg) * p.PQ), (size_t)p.PQ, wsm,
                                col0 + (size_t)(gi * p.CRS * p.PQ), (size_t)p.PQ, n == 0 ? 0.0f : 1.0f, mem_of(&dwp),
                                elem_off(&dwp) + (size_t)(gi * p.Kg * p.CRS), (size_t)p.CRS, temp))
            return s;
      }
    }
    if (p.pack_out)
      if (CTStatus s = device_copy(fn, d, q, CT_DT_FLOAT32, &dwp, dw)) return s;
  }
  if (dbias && numel_of(dbias) > 0) {  // the module's sum over (N, P, Q)
    CTReduceCall r;
    std::memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.op = CT_OP_SUM;
    r.fn = fn;
    r.x = dy;
    r.out = dbias;
    r.x_dt = r.out_dt = CT_DT_FLOAT32;
    r.reduce_mask = 1u | 4u | 8u;
    r.count = g.N * g.P * g.Q;
    for (int32_t i = 0; i < dbias->ndim; ++i)
      if (dbias->shape[i] == g.K) r.out_strides[1] = stride_of(dbias, i);
    r.stream = call->stream;
    if (CTStatus s = cl_reduce(&r)) return s;
  }
  return CT_OK;
}

}  // namespace ctcl

#endif  // CT_HAVE_CLBLAST
