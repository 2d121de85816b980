// nn_kernels.cc — the pooling, norm and attention kernels both GPU modules run (see
// nn_kernels.h): OpenCL C, compiled as such by the OpenCL module and through
// the CUDA dialect's prelude (source.cc's kCudaCompat: __kernel, __global,
// get_global_id, INFINITY, NAN, atomic_xchg, CT_INL) by the CUDA module. Only
// what both dialects compile: helpers are CT_INL (a plain `inline` function
// is host code in CUDA), no OpenCL-only built-ins the prelude lacks, and every
// kernel returns for work-items past its extent (CUDA launches whole blocks).
#include "nn_kernels.h"

namespace ctgpu {

namespace {

// max_pool2d, avg_pool2d and their backward ops, on DS data (float16,
// bfloat16, float32) summed in float: any strides (NCHW, NHWC,
// views), one work-item per output element. The backward ops gather: each
// dx element sums, in window order, the outputs whose window holds it (max:
// those whose index names it), so they need no atomics and are
// deterministic. An index outside its output's window contributes nothing to
// dx; pool_ind_check, run before the backward, sets the module's error flag
// for it (reported by the next ct_synchronize).
const char kPool[] = R"CL(
typedef struct {
  long N, C, H, W, P, Q, kh, kw, sh, sw, ph, pw, dh, dw;
  long xs[4], ys[4], is[4];
  int cip, has_ind;
} PGeo;
CT_INL long ct_taps(const PGeo* g, long p, long q) {
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
CT_INL float ct_divisor(const PGeo* g, long p, long q) { return g->cip ? (float)(g->kh * g->kw) : (float)ct_taps(g, p, q); }
// (n, c, a, b) of element i of an (N, C, A, B) index space
CT_INL void ct_split(long i, long A, long B, long C, long* n, long* c, long* a, long* b) {
  *b = i % B; i /= B; *a = i % A; i /= A; *c = i % C; *n = i / C;
}
__kernel void pool_fwd(__global DS* y, ulong yo, __global long* ind, ulong io, __global const DS* x, ulong xo,
                       int is_max, PGeo g) {
  const long i = get_global_id(0);
  if (i >= g.N * g.C * g.P * g.Q) return;
  long n, c, p, q;
  ct_split(i, g.P, g.Q, g.C, &n, &c, &p, &q);
  __global const DS* px = (__global const DS*)((__global const char*)x + xo) + n * g.xs[0] + c * g.xs[1];
  float best = -INFINITY, sum = 0.0f;
  long bi = -1;
  for (long r = 0; r < g.kh; ++r) {
    const long h = p * g.sh - g.ph + r * g.dh;
    if (h < 0 || h >= g.H) continue;
    for (long s = 0; s < g.kw; ++s) {
      const long w = q * g.sw - g.pw + s * g.dw;
      if (w < 0 || w >= g.W) continue;
      const float v = ld(px, h * g.xs[2] + w * g.xs[3]);
      if (bi < 0 || v > best || isnan(v)) { best = v; bi = h * g.W + w; }  /* a NaN wins, the last (PyTorch) */
      sum += v;
    }
  }
  __global DS* py = (__global DS*)((__global char*)y + yo);
  const long oy = n * g.ys[0] + c * g.ys[1] + p * g.ys[2] + q * g.ys[3];
  st(py, oy, is_max ? best : sum / ct_divisor(&g, p, q));
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
__kernel void pool_bwd(__global DS* dx, ulong xo, __global const DS* dy, ulong yo, __global const long* ind,
                       ulong io, int is_max, PGeo g) {
  const long i = get_global_id(0);
  if (i >= g.N * g.C * g.H * g.W) return;
  long n, c, h, w;
  ct_split(i, g.H, g.W, g.C, &n, &c, &h, &w);
  __global const DS* pdy = (__global const DS*)((__global const char*)dy + yo) + n * g.ys[0] + c * g.ys[1];
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
      const float v = ld(pdy, p * g.ys[2] + q * g.ys[3]);
      if (is_max) {
        if (pi[p * g.is[2] + q * g.is[3]] == h * g.W + w) acc += v;
      } else {
        acc += v / ct_divisor(&g, p, q);
      }
    }
  }
  __global DS* px = (__global DS*)((__global char*)dx + xo);
  st(px, n * g.xs[0] + c * g.xs[1] + h * g.xs[2] + w * g.xs[3], acc);
}
)CL";

// batch_norm (inference, training, backward) and layer_norm (forward,
// backward): DS data (float16, bfloat16, float32; read as float, each
// result rounded once), float32 statistics and parameters. Statistics are one
// work-item per channel (batch norm) or row (layer norm), two passes in AF
// (double where the device has it) in element order; the parameter gradients
// of layer_norm are one work-item per column over the rows in order. So
// every result is deterministic. Data tensors take any strides (NG.st); the
// vector tensors (per channel, row or column) an element stride each (NG.vs).
const char kNorm[] = R"CL(
typedef struct {
  long shape[8]; long st[4][8];   /* the data tensors' shape; strides of up to four of them */
  long C, inner, M, R, D;         /* batch norm: channels, elements per (n, c), per channel; layer norm: rows, row length */
  long vs[8];                     /* element strides of the vector tensors, by slot */
  int nd, flags;
  float eps; int pad;
} NG;
CT_INL long ng_off(const NG* g, int t, long i) {
  long o = 0;
  for (int d = g->nd - 1; d >= 0; --d) { const long e = g->shape[d]; o += (i % e) * g->st[t][d]; i /= e; }
  return o;
}
/* the n extent of batch norm's (n, c, j) walk; 0 for an empty spatial dim (inner = 0) */
CT_INL long ct_batches(const NG* g) { return g->inner ? g->M / g->inner : 0; }
#define F(p, o) ((__global float*)((__global char*)(p) + (o)))
#define DP(p, o) ((__global DS*)((__global char*)(p) + (o)))
#define V(k, i) vp##k[(i) * g.vs[k]]
/* batch norm statistics: per channel c, mean and 1/sqrt(biased var + eps) */
__kernel void bn_stats(__global const DS* x, ulong xo, __global float* v0, ulong o0, __global float* v1, ulong o1, NG g) {
  const long c = get_global_id(0);
  if (c >= g.C) return;
  __global const DS* px = DP(x, xo);
  __global float* vp0 = F(v0, o0); __global float* vp1 = F(v1, o1);
  AF s = 0;
  for (long n = 0; n < ct_batches(&g); ++n)
    for (long j = 0; j < g.inner; ++j) s += ld(px, ng_off(&g, 0, (n * g.C + c) * g.inner + j));
  const AF m = g.M ? s / (AF)g.M : (AF)0;  /* no data: mean 0, invstd NaN (0 / 0), as the CPU */
  AF v = 0;
  for (long n = 0; n < ct_batches(&g); ++n)
    for (long j = 0; j < g.inner; ++j) { const AF t = ld(px, ng_off(&g, 0, (n * g.C + c) * g.inner + j)) - m; v += t * t; }
  V(0, c) = (float)m;
  V(1, c) = (float)((AF)1 / sqrt(v / (AF)g.M + (AF)g.eps));
}
/* y = (x - mean) * invstd * scale + shift (flags & 16: v1 holds var, not invstd) */
__kernel void bn_apply(__global const DS* x, ulong xo, __global DS* y, ulong yo, __global const float* v0, ulong o0,
                       __global const float* v1, ulong o1, __global const float* v2, ulong o2, __global const float* v3,
                       ulong o3, NG g) {
  const long i = get_global_id(0);
  if (i >= g.C * g.M) return;
  const long c = (i / g.inner) % g.C;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1);
  __global const float* vp2 = F(v2, o2); __global const float* vp3 = F(v3, o3);
  const float is = (g.flags & 16) ? 1.0f / sqrt(V(1, c) + g.eps) : V(1, c);
  const float sc = (g.flags & 1) ? V(2, c) : 1.0f, sh = (g.flags & 2) ? V(3, c) : 0.0f;
  st(DP(y, yo), ng_off(&g, 1, i), (ld(DP(x, xo), ng_off(&g, 0, i)) - V(0, c)) * is * sc + sh);
}
/* batch norm backward, per channel: sum dy -> v2 (dshift slot), sum dy * xhat -> v3 */
__kernel void bn_bwd_stats(__global const DS* x, ulong xo, __global const DS* dy, ulong dyo,
                           __global const float* v0, ulong o0, __global const float* v1, ulong o1,
                           __global float* v2, ulong o2, __global float* v3, ulong o3, NG g) {
  const long c = get_global_id(0);
  if (c >= g.C) return;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1);
  __global float* vp2 = F(v2, o2); __global float* vp3 = F(v3, o3);
  const AF m = V(0, c), is = V(1, c);
  AF sdy = 0, sdyx = 0;
  for (long n = 0; n < ct_batches(&g); ++n)
    for (long j = 0; j < g.inner; ++j) {
      const long i = (n * g.C + c) * g.inner + j;
      const AF d = ld(DP(dy, dyo), ng_off(&g, 1, i));
      sdy += d;
      sdyx += d * (((AF)ld(DP(x, xo), ng_off(&g, 0, i)) - m) * is);
    }
  V(2, c) = (float)sdy;
  V(3, c) = (float)sdyx;
}
/* dx = scale * invstd * (dy - sdy / M - xhat * sdyx / M) */
__kernel void bn_bwd_dx(__global const DS* x, ulong xo, __global const DS* dy, ulong dyo, __global DS* dx,
                        ulong dxo, __global const float* v0, ulong o0, __global const float* v1, ulong o1,
                        __global const float* v2, ulong o2, __global const float* v3, ulong o3,
                        __global const float* v4, ulong o4, NG g) {
  const long i = get_global_id(0);
  if (i >= g.C * g.M) return;
  const long c = (i / g.inner) % g.C;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1);
  __global const float* vp2 = F(v2, o2); __global const float* vp3 = F(v3, o3); __global const float* vp4 = F(v4, o4);
  const float is = V(1, c), xh = (ld(DP(x, xo), ng_off(&g, 0, i)) - V(0, c)) * is;
  const float sc = (g.flags & 1) ? V(4, c) : 1.0f;
  st(DP(dx, dxo), ng_off(&g, 2, i), sc * is * (ld(DP(dy, dyo), ng_off(&g, 1, i)) - V(2, c) / (float)g.M - xh * V(3, c) / (float)g.M));
}
/* layer norm, per row: mean, rstd (flags & 4, 8: write them), y */
__kernel void ln_fwd(__global const DS* x, ulong xo, __global DS* y, ulong yo, __global const float* v0, ulong o0,
                     __global const float* v1, ulong o1, __global float* v2, ulong o2, __global float* v3, ulong o3, NG g) {
  const long r = get_global_id(0);
  if (r >= g.R) return;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1);
  __global float* vp2 = F(v2, o2); __global float* vp3 = F(v3, o3);
  __global const DS* px = DP(x, xo);
  AF s = 0;
  for (long j = 0; j < g.D; ++j) s += ld(px, ng_off(&g, 0, r * g.D + j));
  const AF m = g.D ? s / (AF)g.D : (AF)0;  /* no data: mean 0, rstd NaN (0 / 0), as the CPU */
  AF v = 0;
  for (long j = 0; j < g.D; ++j) { const AF t = ld(px, ng_off(&g, 0, r * g.D + j)) - m; v += t * t; }
  const AF rs = (AF)1 / sqrt(v / (AF)g.D + (AF)g.eps);
  for (long j = 0; j < g.D; ++j) {
    const float sc = (g.flags & 1) ? V(0, j) : 1.0f, sh = (g.flags & 2) ? V(1, j) : 0.0f;
    st(DP(y, yo), ng_off(&g, 1, r * g.D + j), (float)(((AF)ld(px, ng_off(&g, 0, r * g.D + j)) - m) * rs) * sc + sh);
  }
  if (g.flags & 4) V(2, r) = (float)m;
  if (g.flags & 8) V(3, r) = (float)rs;
}
/* layer norm backward, per row: dx = rstd * (gj - mean(g) - xhat * mean(g * xhat)), g = dy * scale */
__kernel void ln_bwd_dx(__global const DS* x, ulong xo, __global const DS* dy, ulong dyo, __global DS* dx,
                        ulong dxo, __global const float* v0, ulong o0, __global const float* v1, ulong o1,
                        __global const float* v2, ulong o2, NG g) {
  const long r = get_global_id(0);
  if (r >= g.R) return;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1); __global const float* vp2 = F(v2, o2);
  const AF m = V(0, r), rs = V(1, r);
  AF mg = 0, mgx = 0;
  for (long j = 0; j < g.D; ++j) {
    const long i = r * g.D + j;
    const AF xh = ((AF)ld(DP(x, xo), ng_off(&g, 0, i)) - m) * rs;
    const AF gj = (AF)ld(DP(dy, dyo), ng_off(&g, 1, i)) * ((g.flags & 1) ? (AF)V(2, j) : (AF)1);
    mg += gj;
    mgx += gj * xh;
  }
  mg /= (AF)g.D;
  mgx /= (AF)g.D;
  for (long j = 0; j < g.D; ++j) {
    const long i = r * g.D + j;
    const AF xh = ((AF)ld(DP(x, xo), ng_off(&g, 0, i)) - m) * rs;
    const AF gj = (AF)ld(DP(dy, dyo), ng_off(&g, 1, i)) * ((g.flags & 1) ? (AF)V(2, j) : (AF)1);
    st(DP(dx, dxo), ng_off(&g, 2, i), (float)(rs * (gj - mg - xh * mgx)));
  }
}
/* layer norm backward, per column j: dscale = sum over rows dy * xhat, dshift = sum dy (flags & 4, 8) */
__kernel void ln_bwd_params(__global const DS* x, ulong xo, __global const DS* dy, ulong dyo,
                            __global const float* v0, ulong o0, __global const float* v1, ulong o1,
                            __global float* v3, ulong o3, __global float* v4, ulong o4, NG g) {
  const long j = get_global_id(0);
  if (j >= g.D) return;
  __global const float* vp0 = F(v0, o0); __global const float* vp1 = F(v1, o1);
  __global float* vp3 = F(v3, o3); __global float* vp4 = F(v4, o4);
  AF ds = 0, dsh = 0;
  for (long r = 0; r < g.R; ++r) {
    const long i = r * g.D + j;
    const AF d = ld(DP(dy, dyo), ng_off(&g, 1, i));
    ds += d * (((AF)ld(DP(x, xo), ng_off(&g, 0, i)) - (AF)V(0, r)) * (AF)V(1, r));
    dsh += d;
  }
  if (g.flags & 4) V(3, j) = (float)ds;
  if (g.flags & 8) V(4, j) = (float)dsh;
}
)CL";


// scaled_dot_product_attention, forward: DS q, k, v and out; the mask bool
// (uchar), DS or float32 (AttnGeo.mkind); scores, softmax and the weighted sum
// in float. One work-item per (batch entry, query row, block of AB output
// columns) makes two passes over the keys its row keeps (all, or the causal
// rule's prefix): the max of the scores, then e^(s - max), its sum and the
// weighted values, recomputing the scores: no (L, S) matrix, no workspace.
// A NaN score makes its row NaN; a row with no key left (every score -inf)
// gives 0, as the CPU and PyTorch. Any strides; batch dims broadcast (stride
// 0). Every sum in key order: deterministic.
const char kAttn[] = R"CL(
#define AB 32
typedef struct {
  long bs[14];       /* out's batch dims */
  long st[5][16];    /* element strides of q, k, v, mask, out on out's batch dims, then on their own last two; 0: broadcast */
  long B, L, S, E, Ev;
  int nb, causal, mkind;  /* causal: 0 none, 1 top-left, 2 bottom-right; mkind: 0 no mask, 1 bool, 2 DS, 3 float32 */
  float scale;
} AttnGeo;
CT_INL float attn_score(const AttnGeo* g, __global const DS* pq, __global const DS* pk, __global const uchar* pm, long i,
                        long j) {
  const int r = g->nb, c = g->nb + 1;
  float dot = 0.0f;
  for (long e = 0; e < g->E; ++e) dot += ld(pq, i * g->st[0][r] + e * g->st[0][c]) * ld(pk, j * g->st[1][r] + e * g->st[1][c]);
  float s = dot * g->scale;
  if (g->mkind) {
    const long o = i * g->st[3][r] + j * g->st[3][c];
    if (g->mkind == 1) s += pm[o] ? 0.0f : -INFINITY;
    else if (g->mkind == 2) s += ld((__global const DS*)pm, o);
    else s += ((__global const float*)pm)[o];
  }
  return s;
}
__kernel void attn_fwd(__global DS* out, ulong oo, __global const DS* q, ulong qo, __global const DS* k, ulong ko,
                       __global const DS* v, ulong vo, __global const uchar* m, ulong mo, AttnGeo g) {
  const long nblk = (g.Ev + AB - 1) / AB, id = get_global_id(0);
  if (id >= g.B * g.L * nblk) return;
  const long blk = id % nblk, i = (id / nblk) % g.L;
  long b = id / nblk / g.L, off[5] = {0, 0, 0, 0, 0};
  for (int d = g.nb - 1; d >= 0; --d) {
    const long c = b % g.bs[d];
    b /= g.bs[d];
    for (int t = 0; t < 5; ++t) off[t] += c * g.st[t][d];
  }
  __global const DS* pq = (__global const DS*)((__global const char*)q + qo) + off[0];
  __global const DS* pk = (__global const DS*)((__global const char*)k + ko) + off[1];
  __global const DS* pv = (__global const DS*)((__global const char*)v + vo) + off[2];
  const long msize = g.mkind == 1 ? 1 : g.mkind == 2 ? (long)sizeof(DS) : 4;
  __global const uchar* pm = (__global const uchar*)m + mo + off[3] * msize;
  __global DS* po = (__global DS*)((__global char*)out + oo) + off[4];
  long end = g.S;  /* the keys row i keeps: [0, end) */
  if (g.causal == 1) end = i + 1 < g.S ? i + 1 : g.S;
  if (g.causal == 2) { end = i + g.S - g.L + 1; end = end < 0 ? 0 : end > g.S ? g.S : end; }
  float mx = -INFINITY;
  for (long j = 0; j < end; ++j) {
    const float s = attn_score(&g, pq, pk, pm, i, j);
    if (!isnan(mx) && !(s <= mx)) mx = s;  /* a NaN stays the max */
  }
  const long c0 = blk * AB, nc = g.Ev - c0 < AB ? g.Ev - c0 : AB;
  const int r = g.nb, c = g.nb + 1;
  float acc[AB];
  for (int t = 0; t < AB; ++t) acc[t] = 0.0f;
  float sum = 0.0f;
  if (mx != -INFINITY)
    for (long j = 0; j < end; ++j) {
      const float p = exp(attn_score(&g, pq, pk, pm, i, j) - mx);
      sum += p;
      for (int t = 0; t < AB; ++t)
        if (t < nc) acc[t] += p * ld(pv, j * g.st[2][r] + (c0 + t) * g.st[2][c]);
    }
  for (int t = 0; t < AB; ++t)
    if (t < nc) st(po, i * g.st[4][r] + (c0 + t) * g.st[4][c], mx == -INFINITY ? 0.0f : acc[t] / sum);
}
)CL";

}  // namespace

const char* pool_kernels() { return kPool; }
const char* norm_kernels() { return kNorm; }
const char* attention_kernels() { return kAttn; }

}  // namespace ctgpu
