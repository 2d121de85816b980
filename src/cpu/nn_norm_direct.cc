// nn_norm_direct.cc — batch normalisation of float32 without oneDNN, where
// each (n, c) plane of the data tensors is one contiguous run (NCHW and
// its views with any batch and channel strides): oneDNN 2.6 runs that
// layout through its plain C++ kernels, several times slower than memory
// (and than PyTorch). Per channel, on the plan's threads:
//   batch_norm           y = x * a + b, a = scale / sqrt(var + eps),
//                        b = shift - mean * a                      (1 read, 1 write)
//   batch_norm_training  mean, then the biased variance about it (two
//                        passes: no cancellation), then y           (3 reads, 1 write)
//   batch_norm_backward  sum(dy), sum(dy * (x - mean)), then
//                        dx = scale * invstd * (dy - dshift / M - xhat * dscale / M),
//                        dscale = sum(dy * xhat), dshift = sum(dy)   (2 + 2 reads, 1 write)
// Sums run in float over one plane (vector lanes, omp simd) and in double
// across planes; every channel is one thread's, so results do not depend on
// the thread count.
//
// And layer normalisation of rows longer than oneDNN's JIT kernel can take
// (layer_norm_direct: oneDNN's arguments on dense float32 buffers), per row
// of D elements: the mean, the biased variance about it (two passes), then
// y; backward: sum(g), sum(g * xhat) with g = dy * scale, then dx, after
// the column sums dscale = sum(dy * xhat), dshift = sum(dy) over the rows.
// A row is split into a fixed number of parts for the threads; chunks sum
// in float lanes, parts and chunks in double, so again the result does not
// depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu/nn_onednn_internal.h"

namespace ct {
namespace cpu {
namespace onednn {

namespace {

// A data tensor seen as (N, C, S) with each (n, c) plane of S elements contiguous.
struct Planes {
  char* base;
  int64_t sn, sc;  // byte strides of n and c
};

bool planes_of(const CTensor* t, int64_t S, Planes* v) {
  if (!t || t->dtype.code != CT_FLOAT || t->dtype.bits != 32 || t->dtype.lanes != 1 || t->ndim < 2) return false;
  int64_t want = 1;  // the row-major stride of dim i, for the dims after C
  for (int32_t i = t->ndim - 1; i >= 2; --i) {
    if (t->shape[i] != 1 && ct_stride_of(t, i) != want) return false;
    want *= t->shape[i];
  }
  if (want != S) return false;
  v->base = data_of(t);
  v->sn = ct_byte_stride_of(t, 0, 4);
  v->sc = ct_byte_stride_of(t, 1, 4);
  return true;
}

// A plane's first byte. Its elements are read and written through
// load_at / store_at (any address).
inline char* plane(const Planes& v, int64_t n, int64_t c) { return v.base + n * v.sn + c * v.sc; }
inline float ld(const char* p, int64_t i) { return load_at<float>(p + i * 4); }
inline void st(char* p, int64_t i, float v) { store_at(p + i * 4, v); }

// A (C,) float32 vector (statistics, scale, shift): element c, or `dflt` when absent.
float vec_at(const CTensor* t, int64_t c, float dflt) {
  if (!t) return dflt;
  return load_at<float>(data_of(t) + c * ct_byte_stride_of(t, 0, 4));
}
void vec_set(const CTensor* t, int64_t c, float v) {
  if (t) store_at(data_of(t) + c * ct_byte_stride_of(t, 0, 4), v);
}

// Plane sums: sum(x), sum((x - m)^2), sum(dy), sum(dy * (x - m)).
inline float plane_sum(const char* x, int64_t S) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < S; ++i) s += ld(x, i);
  return s;
}
inline float plane_dev2(const char* x, float m, int64_t S) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < S; ++i) s += (ld(x, i) - m) * (ld(x, i) - m);
  return s;
}
inline void plane_dy(const char* x, const char* dy, float m, int64_t S, float* sdy, float* sdyx) {
  float a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
  for (int64_t i = 0; i < S; ++i) {
    a += ld(dy, i);
    b += ld(dy, i) * (ld(x, i) - m);
  }
  *sdy = a;
  *sdyx = b;
}
// y = x * a + b (y may be x).
inline void plane_affine(const char* x, char* y, float a, float b, int64_t S) {
#pragma omp simd
  for (int64_t i = 0; i < S; ++i) st(y, i, ld(x, i) * a + b);
}

}  // namespace

bool build_batch_norm_direct(const CTNNCall* c, Plan* p) {
  const CTensor* x = c->t[0];
  if (!x || x->ndim < 2) return false;
  const int64_t N = x->shape[0], C = x->shape[1];
  int64_t S = 1;
  for (int32_t i = 2; i < x->ndim; ++i) S *= x->shape[i];
  if (S < 16) return false;  // short planes: oneDNN's channel-inner kernels do better
  const float eps = (float)static_cast<const CTBatchNormDesc*>(c->desc)->epsilon;
  Planes vx;
  if (!planes_of(x, S, &vx)) return false;
  // Roles: batch_norm (x, mean, var, scale?, shift?, y); batch_norm_training
  // (x, scale?, shift?, y, mean?, invstd?); batch_norm_backward
  // (x, dy, mean, invstd, scale?, dx, dscale?, dshift?).
  const int32_t op = c->op;
  const int out = op == CT_OP_BATCH_NORM ? 5 : op == CT_OP_BATCH_NORM_TRAINING ? 3 : 5;
  Planes vo, vdy{};
  if (!planes_of(c->t[out], S, &vo)) return false;
  if (op == CT_OP_BATCH_NORM_BACKWARD && !planes_of(c->t[1], S, &vdy)) return false;
  p->has_prim = false;
  const double M = (double)N * (double)S;
  if (op == CT_OP_BATCH_NORM) {
    p->post.push_back([N, C, S, eps](const Exec& e) {
      Planes x, y;
      planes_of(e.t[0], S, &x);
      planes_of(e.t[5], S, &y);
#pragma omp parallel for schedule(static)
      for (int64_t ch = 0; ch < C; ++ch) {
        const float a = vec_at(e.t[3], ch, 1.0f) / std::sqrt(vec_at(e.t[2], ch, 0) + eps);
        const float b = vec_at(e.t[4], ch, 0.0f) - vec_at(e.t[1], ch, 0) * a;
        for (int64_t n = 0; n < N; ++n) plane_affine(plane(x, n, ch), plane(y, n, ch), a, b, S);
      }
    });
    return true;
  }
  if (op == CT_OP_BATCH_NORM_TRAINING) {
    p->post.push_back([N, C, S, M, eps](const Exec& e) {
      Planes x, y;
      planes_of(e.t[0], S, &x);
      planes_of(e.t[3], S, &y);
#pragma omp parallel for schedule(static)
      for (int64_t ch = 0; ch < C; ++ch) {
        double s = 0;
        for (int64_t n = 0; n < N; ++n) s += plane_sum(plane(x, n, ch), S);
        const float mean = (float)(s / M);
        double d = 0;
        for (int64_t n = 0; n < N; ++n) d += plane_dev2(plane(x, n, ch), mean, S);
        const float invstd = (float)(1.0 / std::sqrt(d / M + (double)eps));
        const float a = vec_at(e.t[1], ch, 1.0f) * invstd, b = vec_at(e.t[2], ch, 0.0f) - mean * a;
        // Statistics first: y may share memory with nothing the sums still read.
        vec_set(e.t[4], ch, mean);
        vec_set(e.t[5], ch, invstd);
        for (int64_t n = 0; n < N; ++n) plane_affine(plane(x, n, ch), plane(y, n, ch), a, b, S);
      }
    });
    return true;
  }
  p->post.push_back([N, C, S, M](const Exec& e) {
    Planes x, dy, dx;
    planes_of(e.t[0], S, &x);
    planes_of(e.t[1], S, &dy);
    planes_of(e.t[5], S, &dx);
#pragma omp parallel for schedule(static)
    for (int64_t ch = 0; ch < C; ++ch) {
      const float mean = vec_at(e.t[2], ch, 0), invstd = vec_at(e.t[3], ch, 0), scale = vec_at(e.t[4], ch, 1.0f);
      double sdy = 0, sdyx = 0;
      for (int64_t n = 0; n < N; ++n) {
        float a, b;
        plane_dy(plane(x, n, ch), plane(dy, n, ch), mean, S, &a, &b);
        sdy += a;
        sdyx += b;
      }
      const double dscale = sdyx * invstd;
      // dx = k * (dy - (x - mean) * kx - kc): k = scale * invstd,
      // kx = invstd * dscale / M, kc = dshift / M.
      const float k = scale * invstd, kx = (float)(invstd * dscale / M), kc = (float)(sdy / M);
      vec_set(e.t[6], ch, (float)dscale);
      vec_set(e.t[7], ch, (float)sdy);
      for (int64_t n = 0; n < N; ++n) {
        const char* px = plane(x, n, ch);
        const char* pdy = plane(dy, n, ch);
        char* pdx = plane(dx, n, ch);
#pragma omp simd
        for (int64_t i = 0; i < S; ++i) st(pdx, i, k * (ld(pdy, i) - (ld(px, i) - mean) * kx - kc));
      }
    }
  });
  return true;
}

namespace {

constexpr int kParts = 64;         // parts of a row, whatever the thread count
constexpr int64_t kChunk = 2048;   // elements summed in float lanes

// The part k of [0, D) in kParts parts: [lo, hi).
inline void part_of(int64_t D, int k, int64_t* lo, int64_t* hi) {
  *lo = D / kParts * k + std::min<int64_t>(D % kParts, k);
  *hi = D / kParts * (k + 1) + std::min<int64_t>(D % kParts, k + 1);
}

// Sums of f(i) and g(i) over [0, D) in one pass: float lanes per chunk,
// double across chunks and parts.
template <class F, class G>
void row_sums(int64_t D, F f, G g, double* sf, double* sg) {
  double part[kParts][2];
#pragma omp parallel for schedule(static)
  for (int k = 0; k < kParts; ++k) {
    int64_t lo, hi;
    part_of(D, k, &lo, &hi);
    double s = 0, t = 0;
    for (int64_t c = lo; c < hi; c += kChunk) {
      const int64_t e = std::min(hi, c + kChunk);
      float a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
      for (int64_t i = c; i < e; ++i) {
        a += f(i);
        b += g(i);
      }
      s += a;
      t += b;
    }
    part[k][0] = s;
    part[k][1] = t;
  }
  *sf = *sg = 0;
  for (int k = 0; k < kParts; ++k) *sf += part[k][0], *sg += part[k][1];
}

// Mean and sum of squared deviations of a row, reading it once: per chunk
// (in L1) its sum, then the squares about the chunk's own mean; chunks and
// parts combined by Chan's formula in double.
void row_moments(const char* x, int64_t D, double* mean, double* m2) {
  double part[kParts][3];  // count, mean, m2
#pragma omp parallel for schedule(static)
  for (int k = 0; k < kParts; ++k) {
    int64_t lo, hi;
    part_of(D, k, &lo, &hi);
    double n = 0, mu = 0, q = 0;
    for (int64_t c = lo; c < hi; c += kChunk) {
      const int64_t e = std::min(hi, c + kChunk);
      float a = 0;
#pragma omp simd reduction(+ : a)
      for (int64_t i = c; i < e; ++i) a += ld(x, i);
      const float cm = a / (float)(e - c);
      float b = 0;
#pragma omp simd reduction(+ : b)
      for (int64_t i = c; i < e; ++i) b += (ld(x, i) - cm) * (ld(x, i) - cm);
      const double nb = (double)(e - c), d = (double)a / nb - mu;
      // b is about cm, not the exact chunk mean a / nb: add the difference's share.
      const double dc = (double)a / nb - (double)cm, qb = (double)b - nb * dc * dc;
      const double nn = n + nb;
      mu += d * nb / nn;
      q += qb + d * d * n * nb / nn;
      n = nn;
    }
    part[k][0] = n;
    part[k][1] = mu;
    part[k][2] = q;
  }
  double n = 0, mu = 0, q = 0;
  for (int k = 0; k < kParts; ++k) {
    const double nb = part[k][0];
    if (nb == 0) continue;
    const double d = part[k][1] - mu, nn = n + nb;
    mu += d * nb / nn;
    q += part[k][2] + d * d * n * nb / nn;
    n = nn;
  }
  *mean = mu;
  *m2 = q;
}

// Arg index of a DNNL_ARG_* in the plan, -1 when absent.
int arg_of(const Plan& p, int darg) {
  for (size_t i = 0; i < p.args.size(); ++i)
    if (p.args[i].darg == darg) return (int)i;
  return -1;
}

}  // namespace

Hook layer_norm_direct(const Plan& p, int64_t M, int64_t D, float eps, bool backward) {
  const int src = arg_of(p, DNNL_ARG_SRC), mean = arg_of(p, DNNL_ARG_MEAN), var = arg_of(p, DNNL_ARG_VARIANCE),
            scale = arg_of(p, DNNL_ARG_SCALE), shift = arg_of(p, DNNL_ARG_SHIFT);
  const double inv_d = 1.0 / (double)D;
  if (!backward) {
    const int dst = arg_of(p, DNNL_ARG_DST);
    return [=](const Exec& e) {
      char* P = e.prim_ptr(0);  // an unused pointer for absent arguments
      const char* X = e.prim_ptr(src);
      char* Y = e.prim_ptr(dst);
      const char* S = scale >= 0 ? e.prim_ptr(scale) : P;
      const char* B = shift >= 0 ? e.prim_ptr(shift) : P;
      for (int64_t m = 0; m < M; ++m) {
        const char* x = X + m * D * 4;
        char* y = Y + m * D * 4;
        double mean_d, m2;
        row_moments(x, D, &mean_d, &m2);
        const float mu = (float)mean_d;
        const double v = m2 * inv_d;
        if (mean >= 0) st(e.prim_ptr(mean), m, mu);
        if (var >= 0) st(e.prim_ptr(var), m, (float)v);
        const float r = (float)(1.0 / std::sqrt(v + (double)eps));
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < D; c += kChunk) {
          const int64_t end = std::min(D, c + kChunk);
          if (scale >= 0 && shift >= 0) {
#pragma omp simd
            for (int64_t i = c; i < end; ++i) st(y, i, (ld(x, i) - mu) * r * ld(S, i) + ld(B, i));
          } else if (scale >= 0) {
#pragma omp simd
            for (int64_t i = c; i < end; ++i) st(y, i, (ld(x, i) - mu) * r * ld(S, i));
          } else if (shift >= 0) {
#pragma omp simd
            for (int64_t i = c; i < end; ++i) st(y, i, (ld(x, i) - mu) * r + ld(B, i));
          } else {
#pragma omp simd
            for (int64_t i = c; i < end; ++i) st(y, i, (ld(x, i) - mu) * r);
          }
        }
      }
    };
  }
  const int dy_a = arg_of(p, DNNL_ARG_DIFF_DST), dx_a = arg_of(p, DNNL_ARG_DIFF_SRC),
            dsc = arg_of(p, DNNL_ARG_DIFF_SCALE), dsh = arg_of(p, DNNL_ARG_DIFF_SHIFT);
  return [=](const Exec& e) {
    const char* X = e.prim_ptr(src);
    const char* DY = e.prim_ptr(dy_a);
    char* DX = e.prim_ptr(dx_a);
    const char* MU = e.prim_ptr(mean);
    const char* V = e.prim_ptr(var);
    const char* S = scale >= 0 ? e.prim_ptr(scale) : nullptr;
    auto rstd = [&](int64_t m) { return (float)(1.0 / std::sqrt((double)ld(V, m) + (double)eps)); };
    // Column sums first: dx may share memory with x or dy.
    if (dsc >= 0 || dsh >= 0) {
      char* GS = dsc >= 0 ? e.prim_ptr(dsc) : nullptr;
      char* GB = dsh >= 0 ? e.prim_ptr(dsh) : nullptr;
#pragma omp parallel for schedule(static)
      for (int64_t c = 0; c < D; c += kChunk) {
        const int64_t n = std::min(D, c + kChunk) - c;
        double sx[kChunk], sb[kChunk];
        std::fill(sx, sx + n, 0.0);
        std::fill(sb, sb + n, 0.0);
        for (int64_t m = 0; m < M; ++m) {
          const char* x = X + (m * D + c) * 4;
          const char* dy = DY + (m * D + c) * 4;
          const float mu = ld(MU, m), r = rstd(m);
#pragma omp simd
          for (int64_t i = 0; i < n; ++i) {
            sb[i] += ld(dy, i);
            sx[i] += ld(dy, i) * ((ld(x, i) - mu) * r);
          }
        }
        for (int64_t i = 0; i < n; ++i) {
          if (GS) st(GS, c + i, (float)sx[i]);
          if (GB) st(GB, c + i, (float)sb[i]);
        }
      }
    }
    for (int64_t m = 0; m < M; ++m) {
      const char* x = X + m * D * 4;
      const char* dy = DY + m * D * 4;
      char* dx = DX + m * D * 4;
      const float mu = ld(MU, m), r = rstd(m);
      double sg, sgx;
      if (S)
        row_sums(
            D, [=](int64_t i) { return ld(dy, i) * ld(S, i); },
            [=](int64_t i) { return ld(dy, i) * ld(S, i) * ((ld(x, i) - mu) * r); }, &sg, &sgx);
      else
        row_sums(
            D, [=](int64_t i) { return ld(dy, i); }, [=](int64_t i) { return ld(dy, i) * ((ld(x, i) - mu) * r); },
            &sg, &sgx);
      const float kg = (float)(sg * inv_d), kx = (float)(sgx * inv_d);
#pragma omp parallel for schedule(static)
      for (int64_t c = 0; c < D; c += kChunk) {
        const int64_t end = std::min(D, c + kChunk);
        if (S) {
#pragma omp simd
          for (int64_t i = c; i < end; ++i) st(dx, i, r * (ld(dy, i) * ld(S, i) - kg - (ld(x, i) - mu) * r * kx));
        } else {
#pragma omp simd
          for (int64_t i = c; i < end; ++i) st(dx, i, r * (ld(dy, i) - kg - (ld(x, i) - mu) * r * kx));
        }
      }
    }
  };
}

}  // namespace onednn
}  // namespace cpu
}  // namespace ct
