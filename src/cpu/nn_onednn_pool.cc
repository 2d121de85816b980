// nn_onednn_pool.cc — the oneDNN plans of max and average pooling, forward and
// backward, with the conversion between oneDNN's window offsets and the
// int64 positions max-pool indices hold; max-pool backward of float32 and
// float64 runs without oneDNN (a checked scatter at memory speed), and so do
// the forwards of float32 and float64 on x with contiguous rows (where
// oneDNN 2.6 has only its reference kernel).
#include <cinttypes>
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>
#include <utility>

#include "cpu/half.h"
#include "cpu/nn_onednn_internal.h"

namespace ct {
namespace cpu {
namespace onednn {

namespace {

// Max pooling's oneDNN workspace holds, per output, the offset kh * KW + kw
// of the max in its window; the caller sees int64 positions h * W + w.
struct PoolIndex {
  int64_t N, C, H, W, P, Q, KH, KW, SH, SW, PT, PL, DH, DW;
};
PoolIndex pool_index(const CTPool2dDesc& d, const CTensor* x, const CTensor* y) {
  // A zero stride is the kernel, a zero dilation 1 (as the descriptor says).
  auto or_k = [](int64_t v, int64_t k) { return v > 0 ? v : k; };
  return PoolIndex{x->shape[0],     x->shape[1],          x->shape[2],          x->shape[3],
                   y->shape[2],     y->shape[3],          d.kernel[0],          d.kernel[1],
                   or_k(d.stride[0], d.kernel[0]), or_k(d.stride[1], d.kernel[1]), d.pad_begin[0], d.pad_begin[1],
                   or_k(d.dilation[0], 1),         or_k(d.dilation[1], 1)};
}

// Where position v (h * W + w in its plane) of output (pp, q) lies: inside
// that output's window or not, its row and column in x, and its offset
// kh * KW + kw in the window. Any int64 may come as v. h = v / W is a
// multiplication by 1/W corrected by one step (exact: v < H * W < 2^52),
// so the common undilated case divides by nothing.
struct Tap {
  bool inside;
  int64_t h, w, off;
};
inline Tap tap_of(const PoolIndex& g, double inv_w, int64_t v, int64_t pp, int64_t q) {
  Tap t{false, 0, 0, 0};
  if (v < 0 || v >= g.H * g.W) return t;
  int64_t h = (int64_t)((double)v * inv_w);
  if (h * g.W > v) --h;
  else if ((h + 1) * g.W <= v) ++h;
  t.h = h;
  t.w = v - h * g.W;
  int64_t dh = h - (pp * g.SH - g.PT), dw = t.w - (q * g.SW - g.PL);
  if (dh < 0 || dw < 0) return t;
  if (g.DH != 1 || g.DW != 1) {
    if (dh % g.DH != 0 || dw % g.DW != 0) return t;
    dh /= g.DH;
    dw /= g.DW;
  }
  t.inside = dh < g.KH && dw < g.KW;
  t.off = dh * g.KW + dw;
  return t;
}

// One window row of indices: o[q] |= whether index q's column (v - hw) is
// among the window's columns inside x. Locals only, so that the loop
// vectorises (o's stores would alias g's fields); an AVX2 clone where the
// CPU has it (64-bit compares: SSE2, the library's baseline, has none).
template <int64_t S3>
inline void row_in_window_t(const char* row, int64_t s3, int64_t Q, int64_t hw, int64_t SW, int64_t PL, int64_t KW,
                            int64_t W, int64_t* o) {
  const int64_t st = S3 > 0 ? S3 : s3;
  for (int64_t q = 0; q < Q; ++q) {
    const int64_t v = load_at<int64_t>(row + q * st);
    const int64_t w0 = q * SW - PL;  // v itself is compared: any int64 may come (v - hw could overflow)
    const int64_t wl = w0 < 0 ? 0 : w0, wh = w0 + KW > W ? W : w0 + KW;
    o[q] |= (int64_t)((v >= hw + wl) & (v < hw + wh));
  }
}
// Not under ThreadSanitizer: GCC instruments the ifunc resolver that
// target_clones makes, and the dynamic loader runs it while relocating
// libctensor, before TSan is initialised (a crash at load, before main).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("avx2", "default")))
#endif
void row_in_window(const char* row, int64_t s3, int64_t Q, int64_t hw, int64_t SW, int64_t PL, int64_t KW, int64_t W,
                   int64_t* o) {
  if (s3 == 8) row_in_window_t<8>(row, s3, Q, hw, SW, PL, KW, W, o);
  else row_in_window_t<0>(row, s3, Q, hw, SW, PL, KW, W, o);
}

// Planes whose indices are one dense run (P * Q int64): each output l's
// window as tables over the plane, built once per call: lo[l], the position
// of its first tap inside x, and wid[k][l], the taps inside x of its k-th
// row inside x (0 past the last). Index v of output l is inside its window
// exactly when (v - lo[l] - k W) mod 2^64 < wid[k][l] for some k (the
// wrap-around cannot turn a bad v into a good one: the difference is a
// tap's offset only when v is that tap's position), so a plane checks as KH
// flat vector loops over its P * Q indices, with no per-row loop overhead
// (rows are short: Q = 28 in a ResNet's first pooling).
struct WindowTables {
  int64_t PQ = 0, KH = 0;
  std::vector<int64_t> lo;
  std::vector<uint64_t> wid;  // KH x PQ
};
WindowTables window_tables(const PoolIndex& g) {
  WindowTables t;
  t.PQ = g.P * g.Q;
  t.KH = g.KH;
  t.lo.assign((size_t)t.PQ, 0);
  t.wid.assign((size_t)(t.KH * t.PQ), 0);
  for (int64_t pp = 0; pp < g.P; ++pp) {
    const int64_t h0 = pp * g.SH - g.PT;
    const int64_t dlo = std::max<int64_t>(0, -h0), dhi = std::min<int64_t>(g.KH, g.H - h0);
    for (int64_t q = 0; q < g.Q; ++q) {
      const int64_t l = pp * g.Q + q, w0 = q * g.SW - g.PL;
      const int64_t wl = std::max<int64_t>(w0, 0), wh = std::min<int64_t>(w0 + g.KW, g.W);
      t.lo[(size_t)l] = (h0 + dlo) * g.W + wl;
      for (int64_t k = 0; k < g.KH && dlo + k < dhi && wh > wl; ++k) t.wid[(size_t)(k * t.PQ + l)] = uint64_t(wh - wl);
    }
  }
  return t;
}
// One plane: whether every index of v[0, PQ) is inside its window, in one
// pass with the row tests in registers (KH a template argument up to 4, the
// kernel sizes pooling uses; 0: kh rows, a runtime count).
template <int KH>
inline bool plane_in_windows_t(const int64_t* v, const int64_t* lo, const uint64_t* wid, int64_t PQ, int64_t kh,
                               int64_t W) {
  const int64_t rows = KH > 0 ? KH : kh;
  uint64_t all = 1;
  for (int64_t l = 0; l < PQ; ++l) {
    const uint64_t u = uint64_t(v[l]) - uint64_t(lo[l]);
    uint64_t in = 0;
    for (int64_t k = 0; k < rows; ++k) in |= uint64_t(u - uint64_t(k) * uint64_t(W) < wid[k * PQ + l]);
    all &= in;
  }
  return all != 0;
}
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("avx2", "default")))
#endif
bool plane_in_windows(const int64_t* v, const int64_t* lo, const uint64_t* wid, int64_t PQ, int64_t KH, int64_t W) {
  switch (KH) {
    case 1: return plane_in_windows_t<1>(v, lo, wid, PQ, KH, W);
    case 2: return plane_in_windows_t<2>(v, lo, wid, PQ, KH, W);
    case 3: return plane_in_windows_t<3>(v, lo, wid, PQ, KH, W);
    case 4: return plane_in_windows_t<4>(v, lo, wid, PQ, KH, W);
    default: return plane_in_windows_t<0>(v, lo, wid, PQ, KH, W);
  }
}

// True when every index of t lies in its output's window, for undilated
// windows: dense planes through plane_in_windows, others rows of outputs at
// a time, as vector loops over q (per window row, the index's column must
// fall in the window's columns inside x). The exact first bad element, when
// there is one, comes from the slower element-wise pass (tap_of), which runs
// only then.
bool all_in_windows(const PoolIndex& g, const CTensor* t) {
  const int64_t s0 = ct_byte_stride_of(t, 0, 8), s1 = ct_byte_stride_of(t, 1, 8), s2 = ct_byte_stride_of(t, 2, 8),
                s3 = ct_byte_stride_of(t, 3, 8);
  const char* base = data_of(t);
  const int64_t planes = g.N * g.C, Q = g.Q, SW = g.SW, PL = g.PL, KW = g.KW, W = g.W;
  if ((s3 == 8 || g.Q == 1) && (s2 == Q * 8 || g.P == 1) && reinterpret_cast<uintptr_t>(base) % 8 == 0 &&
      s0 % 8 == 0 && s1 % 8 == 0) {
    const WindowTables tab = window_tables(g);
    int all = 1;
#pragma omp parallel for schedule(static) reduction(& : all)
    for (int64_t plane = 0; plane < planes; ++plane) {
      if (!all) continue;
      const char* p = base + (plane / g.C) * s0 + (plane % g.C) * s1;
      const int64_t* v = reinterpret_cast<const int64_t*>(p);  // 8-aligned: checked above
      all &= (int)plane_in_windows(v, tab.lo.data(), tab.wid.data(), tab.PQ, tab.KH, W);
    }
    return all != 0;
  }
  int all = 1;
#pragma omp parallel reduction(& : all)
  {
    std::vector<int64_t> ok((size_t)Q);
#pragma omp for schedule(static)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const int64_t n = plane / g.C, ch = plane % g.C;
      for (int64_t pp = 0; pp < g.P; ++pp) {
        const char* row = base + n * s0 + ch * s1 + pp * s2;
        const int64_t h0 = pp * g.SH - g.PT;
        const int64_t dlo = std::max<int64_t>(0, -h0), dhi = std::min<int64_t>(g.KH, g.H - h0);
        int64_t* o = ok.data();
        std::fill(o, o + Q, 0);
        for (int64_t dh = dlo; dh < dhi; ++dh) {
          row_in_window(row, s3, Q, (h0 + dh) * W, SW, PL, KW, W, o);
        }
        int64_t acc = 1;
        for (int64_t q = 0; q < Q; ++q) acc &= o[q];
        all &= (int)acc;
      }
    }
  }
  return all != 0;
}

// Calls f(l, plane, pp, q, v) for the indices tensor t (N, C, P, Q), any
// strides, planes [p0, p1) (plane = n * C + c), l the row-major element.
template <class F> void for_each_index(const PoolIndex& g, const CTensor* t, int64_t p0, int64_t p1, F&& f) {
  const int64_t s0 = ct_byte_stride_of(t, 0, 8), s1 = ct_byte_stride_of(t, 1, 8), s2 = ct_byte_stride_of(t, 2, 8),
                s3 = ct_byte_stride_of(t, 3, 8);
  const char* base = data_of(t);
  for (int64_t plane = p0; plane < p1; ++plane) {
    const int64_t n = plane / g.C, ch = plane % g.C;
    for (int64_t pp = 0; pp < g.P; ++pp) {
      const char* row = base + n * s0 + ch * s1 + pp * s2;
      int64_t l = (plane * g.P + pp) * g.Q;
      for (int64_t q = 0; q < g.Q; ++q, ++l) {
        int64_t v;
        std::memcpy(&v, row + q * s3, sizeof v);
        f(l, plane, pp, q, v);
      }
    }
  }
}

// The message for indices element `bad` (value v): not a position inside its output's window.
CTStatus bad_index(const Exec& e, const PoolIndex& g, int64_t bad, int64_t v) {
  const int64_t pq = bad % (g.P * g.Q);
  return fail(CT_ERR_INVALID_ARGUMENT,
              "%s: indices element %" PRId64 " (output row %" PRId64 ", column %" PRId64
              " of its plane) is %" PRId64 ", which is not a position h * W + w inside that output's window "
              "(W=%" PRId64 "); max_pool2d writes only such positions",
              e.fn, bad, pq / g.Q, pq % g.Q, v, g.W);
}

// max_pool2d_backward of float32 and float64 on the caller's tensors, any
// strides, without oneDNN: every index is checked first (nothing written
// if one is outside its window), then per (n, c) plane, on the plan's
// threads, dx's plane is zeroed and each dy element added at its index, in
// row-major order of dy (the same sums whatever the thread count). One
// pass over dy and the indices and one over dx: memory speed, where the
// index conversion and oneDNN's own backward took several times longer.
template <class T> void build_pool_backward_direct(const PoolIndex& g, Plan* p) {
  p->has_prim = false;
  p->checks.push_back([g](const Exec& e) -> CTStatus {
    if (g.DH == 1 && g.DW == 1 && all_in_windows(g, e.t[1])) return CT_OK;
    const double inv_w = 1.0 / (double)g.W;
    const int64_t planes = g.N * g.C;
    int64_t bad = INT64_MAX;  // the first bad element: the same answer on any number of threads
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (int64_t plane = 0; plane < planes; ++plane) {
      if (bad != INT64_MAX) continue;  // this thread found one already: its later planes cannot be first
      for_each_index(g, e.t[1], plane, plane + 1, [&](int64_t l, int64_t, int64_t pp, int64_t q, int64_t v) {
        if (l < bad && !tap_of(g, inv_w, v, pp, q).inside) bad = l;
      });
    }
    if (bad == INT64_MAX) return CT_OK;
    int64_t bad_v = 0;
    for_each_index(g, e.t[1], bad / (g.P * g.Q), bad / (g.P * g.Q) + 1,
                   [&](int64_t l, int64_t, int64_t, int64_t, int64_t v) {
                     if (l == bad) bad_v = v;
                   });
    return bad_index(e, g, bad, bad_v);
  });
  p->post.push_back([g](const Exec& e) {
    const CTensor *dy = e.t[0], *idx = e.t[1], *dx = e.t[2];
    // Byte strides, and elements read and written through memcpy: dy and dx
    // may sit at any address (an unaligned NumPy array), as everywhere else.
    constexpr int64_t z = (int64_t)sizeof(T);
    auto bs = ct_byte_stride_of;
    const int64_t y0 = bs(dy, 0, z), y1 = bs(dy, 1, z), y2 = bs(dy, 2, z), y3 = bs(dy, 3, z);
    const int64_t x0 = bs(dx, 0, z), x1 = bs(dx, 1, z), x2 = bs(dx, 2, z), x3 = bs(dx, 3, z);
    const int64_t i0 = bs(idx, 0, 8), i1 = bs(idx, 1, 8), i2 = bs(idx, 2, 8), i3 = bs(idx, 3, 8);
    const char *ybase = data_of(dy), *ibase = data_of(idx);
    char* xbase = data_of(dx);
    const double inv_w = 1.0 / (double)g.W;
    const int64_t planes = g.N * g.C;
#pragma omp parallel for schedule(static)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const int64_t n = plane / g.C, ch = plane % g.C;
      char* xp = xbase + n * x0 + ch * x1;
      const char* yp = ybase + n * y0 + ch * y1;
      const bool dense = x3 == z && x2 == g.W * z;  // v is then the element's offset in dx's plane
      if (dense) {
        std::memset(xp, 0, (size_t)(g.H * g.W * z));
      } else {
        const T zero = T(0);
        for (int64_t h = 0; h < g.H; ++h)
          for (int64_t w = 0; w < g.W; ++w) std::memcpy(xp + h * x2 + w * x3, &zero, sizeof zero);
      }
      if (dense && i3 == 8 && y3 == z) {  // rows of indices and dy contiguous: the plain loop
        const char* ip = ibase + n * i0 + ch * i1;
        for (int64_t pp = 0; pp < g.P; ++pp) {
          const char *ir = ip + pp * i2, *yr = yp + pp * y2;
          for (int64_t q = 0; q < g.Q; ++q) {
            char* px = xp + load_at<int64_t>(ir + q * 8) * z;
            store_at(px, load_at<T>(px) + load_at<T>(yr + q * z));
          }
        }
        continue;
      }
      for_each_index(g, idx, plane, plane + 1, [&](int64_t, int64_t, int64_t pp, int64_t q, int64_t v) {
        char* px;
        if (dense) {
          px = xp + v * z;
        } else {
          const Tap t = tap_of(g, inv_w, v, pp, q);  // inside: checked above
          px = xp + t.h * x2 + t.w * x3;
        }
        store_at(px, load_at<T>(px) + load_at<T>(yp + pp * y2 + q * y3));
      });
    }
  });
}

// max_pool2d and avg_pool2d of float32 and float64 without oneDNN, for x
// whose rows are contiguous (NCHW and its views): oneDNN 2.6 runs that
// layout with its reference kernels (max_pool2d of (8, 64, 56, 56), k3 s2
// pad 1: 17 ms). Per (n, c) plane on the plan's threads, per output row:
// the outputs whose windows lie inside x along w run as vector loops over
// q, one window tap at a time (max: v > best selects, without branches;
// avg: a sum), the few at the edges tap by tap. Taps go in row-major
// window order, the first tap inside x starts the max, and a strictly
// greater one or a NaN replaces it (PyTorch's rule: a NaN propagates, the
// last NaN in window order giving the index); a window without taps gives
// -inf and index -1. avg
// divides by the window's area (count_include_pad) or its taps inside x.
enum class PoolMode { kMax, kMaxIndex, kAvg };

// The 2x2 window of stride 2 without padding or dilation (the common
// downsampling pool), for an output row whose windows all lie inside x: one
// pass, the four taps of each output in registers, in row-major window
// order with the general loop's rules (the same sums, the same winners: a
// later tap that is greater, or a NaN, takes over). Written for the
// vectoriser: the float select is a plain ?:, the winner's position (an I,
// int32 beside float where it fits) moves through a mask (GCC does not
// if-convert two selects on one compare), and the int64 indices are widened
// in a second loop.
template <class T, PoolMode M, class I>
void pool_row_2x2(const PoolIndex& g, const char* xp, int64_t xs2, int64_t pp, T* __restrict best,
                  int64_t* __restrict bi, I* __restrict bb) {
  constexpr int64_t z = (int64_t)sizeof(T);
  const int64_t h = 2 * pp, Q = g.Q;
  const I W = (I)g.W, i0 = (I)(h * g.W);
  const char *r0 = xp + h * xs2, *r1 = r0 + xs2;
  for (int64_t q = 0; q < Q; ++q) {
    const T a = load_at<T>(r0 + 2 * q * z), b = load_at<T>(r0 + (2 * q + 1) * z), c = load_at<T>(r1 + 2 * q * z),
            d = load_at<T>(r1 + (2 * q + 1) * z);
    if (M == PoolMode::kAvg) {
      best[q] = (((a + b) + c) + d) / T(4);
    } else {
      const I ka = i0 + (I)(2 * q);
      T m = a;
      I k = ka;
      const auto take = [&m, &k](T v, I at) {
        const bool t = (v > m) | (v != v);  // both compares, no short circuit
        const I msk = -(I)t;
        m = t ? v : m;
        k = (at & msk) | (k & ~msk);
      };
      take(b, ka + 1);
      take(c, ka + W);
      take(d, ka + W + 1);
      best[q] = m;
      if (M == PoolMode::kMaxIndex) bb[q] = k;
    }
  }
  if (M == PoolMode::kMaxIndex)
    for (int64_t q = 0; q < Q; ++q) bi[q] = (int64_t)bb[q];
}

// kMaxIndex: an interior output's winning tap is kept as its row base
// h * W + kw * DW - PL, an integer of T's width (I: int32 beside float when
// the plane's positions fit), so the select vectorises with the compare;
// the int64 index base + q * sw is formed once per output after the taps.
template <class T, PoolMode M, int64_t SW, class I>
void pool_row(const PoolIndex& g, const char* xp, int64_t xs2, int64_t pp, bool cip, T* best, int64_t* bi, I* bb) {
  constexpr int64_t z = (int64_t)sizeof(T);
  if (SW == 2 && g.KH == 2 && g.KW == 2 && g.SH == 2 && g.DH == 1 && g.DW == 1 && g.PT == 0 && g.PL == 0 &&
      2 * pp + 1 < g.H && 2 * g.Q <= g.W)
    return pool_row_2x2<T, M, I>(g, xp, xs2, pp, best, bi, bb);
  const int64_t sw = SW > 0 ? SW : g.SW;
  const int64_t h0 = pp * g.SH - g.PT;
  // Interior outputs along w: [q0, q1) have every w tap inside x.
  const int64_t span = (g.KW - 1) * g.DW;
  int64_t q0 = g.PL > 0 ? (g.PL + sw - 1) / sw : 0, q1 = g.W - 1 - span + g.PL >= 0 ? (g.W - 1 - span + g.PL) / sw + 1 : 0;
  q1 = std::min(q1, g.Q);
  q0 = std::min(q0, q1);
  int64_t taps_h = 0;
  bool first = true;
  for (int64_t kh = 0; kh < g.KH; ++kh) {
    const int64_t h = h0 + kh * g.DH;
    if (h < 0 || h >= g.H) continue;
    ++taps_h;
    const char* row = xp + h * xs2;
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const int64_t off = kw * g.DW - g.PL;  // w = q * sw + off
      const char* r = row + off * z;
      if (first) {
        for (int64_t q = q0; q < q1; ++q) best[q] = load_at<T>(r + q * sw * z);
        if (M == PoolMode::kMaxIndex)
          for (int64_t q = q0; q < q1; ++q) bb[q] = (I)(h * g.W + off);
      } else if (M == PoolMode::kAvg) {
        for (int64_t q = q0; q < q1; ++q) best[q] += load_at<T>(r + q * sw * z);
      } else if (M == PoolMode::kMax) {
        for (int64_t q = q0; q < q1; ++q) {
          const T v = load_at<T>(r + q * sw * z);
          best[q] = (v > best[q] || v != v) ? v : best[q];
        }
      } else {
        const I base = (I)(h * g.W + off);
        T* __restrict b = best;  // apart from x and each other: the loop vectorises
        I* __restrict t = bb;
        for (int64_t q = q0; q < q1; ++q) {
          const T v = load_at<T>(r + q * sw * z), o = b[q];
          const I ot = t[q];
          const bool take = v > o || v != v;  // greater, or a NaN
          const I m = -(I)take;                // a mask: GCC does not if-convert two selects on one compare
          b[q] = take ? v : o;
          t[q] = (base & m) | (ot & ~m);
        }
      }
      first = false;
    }
  }
  if (M == PoolMode::kMaxIndex)
    for (int64_t q = q0; q < q1; ++q) bi[q] = (int64_t)bb[q] + q * sw;
  if (M == PoolMode::kAvg) {
    const T div = cip ? T(g.KH * g.KW) : T(taps_h * g.KW);
    for (int64_t q = q0; q < q1; ++q) best[q] = taps_h ? best[q] / div : best[q];
  }
  if (taps_h == 0)  // no row of the window inside x: a max of nothing, or 0 / the divisor
    for (int64_t q = q0; q < q1; ++q) {
      best[q] = M != PoolMode::kAvg ? -std::numeric_limits<T>::infinity()
                : cip               ? T(0)
                                    : std::numeric_limits<T>::quiet_NaN();
      bi[q] = -1;
    }
  // The edges, tap by tap.
  for (int64_t q = 0; q < g.Q; ++q) {
    if (q == q0) q = q1;
    if (q >= g.Q) break;
    const int64_t w0 = q * sw - g.PL;
    bool found = false;
    T acc = M == PoolMode::kAvg ? T(0) : -std::numeric_limits<T>::infinity();
    int64_t idx = -1, n = 0;
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      const int64_t h = h0 + kh * g.DH;
      if (h < 0 || h >= g.H) continue;
      const char* row = xp + h * xs2;
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        const int64_t w = w0 + kw * g.DW;
        if (w < 0 || w >= g.W) continue;
        const T v = load_at<T>(row + w * z);
        ++n;
        if (M == PoolMode::kAvg) acc += v;
        else if (!found || v > acc || v != v) found = true, acc = v, idx = h * g.W + w;
      }
    }
    if (M == PoolMode::kAvg) acc = acc / (cip ? T(g.KH * g.KW) : T(n));
    best[q] = acc;
    bi[q] = idx;
  }
}

template <class T, PoolMode M, int64_t SW, class I> void pool_direct_run(const PoolIndex& g, bool cip, const Exec& e) {
  const CTensor *x = e.t[0], *y = e.t[1], *ind = M == PoolMode::kMaxIndex ? e.t[2] : nullptr;
  constexpr int64_t z = (int64_t)sizeof(T);
  const int64_t xs0 = ct_byte_stride_of(x, 0, z), xs1 = ct_byte_stride_of(x, 1, z), xs2 = ct_byte_stride_of(x, 2, z);
  const int64_t ys0 = ct_byte_stride_of(y, 0, z), ys1 = ct_byte_stride_of(y, 1, z), ys2 = ct_byte_stride_of(y, 2, z),
                ys3 = ct_byte_stride_of(y, 3, z);
  int64_t is[4] = {0, 0, 0, 0};
  for (int i = 0; ind && i < 4; ++i) is[i] = ct_byte_stride_of(ind, i, 8);
  const char* xb = data_of(x);
  char* yb = data_of(y);
  char* ib = ind ? data_of(ind) : nullptr;
  const int64_t planes = g.N * g.C;
  // Each thread's row scratch, allocated before the parallel region: a
  // std::bad_alloc thrown inside one would terminate the process (OpenMP
  // lets no exception leave a region), and here it reaches the entry point
  // as CT_ERR_OUT_OF_MEMORY before anything is written.
  const int nt = omp_get_max_threads();
  const size_t q = (size_t)g.Q;
  std::vector<T> best_all(q * (size_t)nt);
  std::vector<int64_t> bi_all(q * (size_t)nt);
  std::vector<I> bb_all(M == PoolMode::kMaxIndex ? q * (size_t)nt : 0);
#pragma omp parallel num_threads(nt)
  {
    const size_t me = (size_t)omp_get_thread_num();
    T* const best = best_all.data() + me * q;
    int64_t* const bi = bi_all.data() + me * q;
    I* const bb = M == PoolMode::kMaxIndex ? bb_all.data() + me * q : nullptr;
#pragma omp for schedule(static)
    for (int64_t pl = 0; pl < planes; ++pl) {
      const int64_t n = pl / g.C, ch = pl % g.C;
      const char* xp = xb + n * xs0 + ch * xs1;
      for (int64_t pp = 0; pp < g.P; ++pp) {
        pool_row<T, M, SW, I>(g, xp, xs2, pp, cip, best, bi, bb);
        char* yr = yb + n * ys0 + ch * ys1 + pp * ys2;
        if (ys3 == z) std::memcpy(yr, best, (size_t)(g.Q * z));
        else
          for (int64_t k = 0; k < g.Q; ++k) std::memcpy(yr + k * ys3, &best[k], sizeof(T));
        if (!ib) continue;
        char* ir = ib + n * is[0] + ch * is[1] + pp * is[2];
        if (is[3] == 8) std::memcpy(ir, bi, (size_t)(g.Q * 8));
        else
          for (int64_t k = 0; k < g.Q; ++k) std::memcpy(ir + k * is[3], &bi[k], sizeof(int64_t));
      }
    }
  }
}

template <class T, PoolMode M, class I> void build_pool_direct_width(const PoolIndex& g, bool cip, Plan* p) {
  p->has_prim = false;
  if (g.SW == 1) p->post.push_back([g, cip](const Exec& e) { pool_direct_run<T, M, 1, I>(g, cip, e); });
  else if (g.SW == 2) p->post.push_back([g, cip](const Exec& e) { pool_direct_run<T, M, 2, I>(g, cip, e); });
  else p->post.push_back([g, cip](const Exec& e) { pool_direct_run<T, M, 0, I>(g, cip, e); });
}
// I: the winning taps' integer (pool_row); int32 for float32 while every
// row base of the plane, -PL .. H * W, fits.
template <class T, PoolMode M> void build_pool_direct_mode(const PoolIndex& g, bool cip, Plan* p) {
  if constexpr (M == PoolMode::kMaxIndex && sizeof(T) == 4) {
    if (g.H * g.W < std::numeric_limits<int32_t>::max() - g.PL) return build_pool_direct_width<T, M, int32_t>(g, cip, p);
  }
  build_pool_direct_width<T, M, int64_t>(g, cip, p);
}

// oneDNN's max passes a NaN over where PyTorch's (and the direct kernel
// above) propagates it, and a window whose taps are all -inf gets oneDNN's
// start value (the lowest finite) and a padding offset. After oneDNN's
// forward and the index conversion, per (n, c) plane: a scan for a NaN or a
// -inf and, only in a plane that has one, its windows redone in window
// order as the direct kernel does them (the first tap inside x starts the
// max, a greater one or a NaN replaces it; y gets the winner's bytes). A
// plane without either costs one read.
template <class T> inline bool special_at(const char* p) {
  const T v = load_at<T>(p);
  return v != v || v == -std::numeric_limits<T>::infinity();
}
template <> inline bool special_at<f16>(const char* p) {
  const uint16_t b = load_at<uint16_t>(p);
  return (b & 0x7fff) > 0x7c00 || b == 0xfc00;
}
template <> inline bool special_at<bf16>(const char* p) {
  const uint16_t b = load_at<uint16_t>(p);
  return (b & 0x7fff) > 0x7f80 || b == 0xff80;
}
template <class T> inline double value_at(const char* p) { return to_double(load_at<T>(p)); }

template <class T> void pool_special_fixup(const PoolIndex& g, const Exec& e, int ii) {
  const CTensor *x = e.t[0], *y = e.t[1], *ind = ii >= 0 ? e.t[ii] : nullptr;
  constexpr int64_t z = (int64_t)sizeof(T);
  int64_t xs[4], ys[4], is[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) xs[i] = ct_byte_stride_of(x, i, z), ys[i] = ct_byte_stride_of(y, i, z);
  for (int i = 0; ind && i < 4; ++i) is[i] = ct_byte_stride_of(ind, i, 8);
  const char* xb = data_of(x);
  char* yb = data_of(y);
  char* ib = ind ? data_of(ind) : nullptr;
  const int64_t planes = g.N * g.C;
#pragma omp parallel for schedule(static)
  for (int64_t pl = 0; pl < planes; ++pl) {
    const int64_t n = pl / g.C, ch = pl % g.C;
    const char* xp = xb + n * xs[0] + ch * xs[1];
    bool any = false;
    for (int64_t h = 0; h < g.H && !any; ++h)
      for (int64_t w = 0; w < g.W; ++w) any |= special_at<T>(xp + h * xs[2] + w * xs[3]);
    if (!any) continue;
    for (int64_t pp = 0; pp < g.P; ++pp)
      for (int64_t q = 0; q < g.Q; ++q) {
        const char* win = nullptr;
        double best = 0;
        int64_t bi = -1;
        for (int64_t kh = 0; kh < g.KH; ++kh) {
          const int64_t h = pp * g.SH - g.PT + kh * g.DH;
          if (h < 0 || h >= g.H) continue;
          for (int64_t kw = 0; kw < g.KW; ++kw) {
            const int64_t w = q * g.SW - g.PL + kw * g.DW;
            if (w < 0 || w >= g.W) continue;
            const char* t = xp + h * xs[2] + w * xs[3];
            const double v = value_at<T>(t);
            if (!win || v > best || v != v) win = t, best = v, bi = h * g.W + w;
          }
        }
        if (!win) continue;
        std::memcpy(yb + n * ys[0] + ch * ys[1] + pp * ys[2] + q * ys[3], win, sizeof(T));
        if (ib) store_at<int64_t>(ib + n * is[0] + ch * is[1] + pp * is[2] + q * is[3], bi);
      }
  }
}

// Whether the direct forward takes this call: float32/float64, x's rows
// contiguous.
bool pool_direct_fits(const CTNNCall* c) {
  const CTDataType dt = c->t[0]->dtype;
  return dt.code == CT_FLOAT && dt.bits >= 32 && dt.lanes == 1 && ct_stride_of(c->t[0], 3) == 1;
}

template <class T> void build_pool_direct(const CTNNCall* c, const PoolIndex& g, Plan* p) {
  const CTPool2dDesc& d = *static_cast<const CTPool2dDesc*>(c->desc);
  if (c->op == CT_OP_AVG_POOL2D) build_pool_direct_mode<T, PoolMode::kAvg>(g, d.count_include_pad != 0, p);
  else if (c->t[2]) build_pool_direct_mode<T, PoolMode::kMaxIndex>(g, false, p);
  else build_pool_direct_mode<T, PoolMode::kMax>(g, false, p);
}

}  // namespace

void build_pool(const CTNNCall* c, Plan* p) {
  const CTPool2dDesc& d = *static_cast<const CTPool2dDesc*>(c->desc);
  if ((c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_AVG_POOL2D) && pool_direct_fits(c)) {
    const PoolIndex g = pool_index(d, c->t[0], c->t[1]);
    if (c->t[0]->dtype.bits == 32) build_pool_direct<float>(c, g, p);
    else build_pool_direct<double>(c, g, p);
    return;
  }
  if (c->op == CT_OP_MAX_POOL2D_BACKWARD && c->t[0]->dtype.code == CT_FLOAT && c->t[0]->dtype.bits >= 32) {
    const PoolIndex g = pool_index(d, c->t[2], c->t[0]);
    if (c->t[0]->dtype.bits == 32) build_pool_backward_direct<float>(g, p);
    else build_pool_backward_direct<double>(g, p);
    return;
  }
  const bool maxp = c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_MAX_POOL2D_BACKWARD;
  const bool fwd = c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_AVG_POOL2D;
  const auto alg = maxp ? dnnl::algorithm::pooling_max
                        : d.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                              : dnnl::algorithm::pooling_avg_exclude_padding;
  const dims strides{d.stride[0], d.stride[1]}, kernel{d.kernel[0], d.kernel[1]},
      dil{d.dilation[0] - 1, d.dilation[1] - 1}, pl{d.pad_begin[0], d.pad_begin[1]}, pr{d.pad_end[0], d.pad_end[1]};
  dnnl::primitive_attr attr = scratch_attr();
  // Tensor roles: forward (x, y, indices?); max backward (dy, indices, dx); avg backward (dy, dx).
  const int xi = fwd ? 0 : (maxp ? 2 : 1), yi = fwd ? 1 : 0;
  const int ii = c->op == CT_OP_MAX_POOL2D ? 2 : c->op == CT_OP_MAX_POOL2D_BACKWARD ? 1 : -1;
  const bool with_ws = ii >= 0 && c->t[ii];
  p->args.push_back(tensor_arg(c, xi, fwd ? DNNL_ARG_SRC : DNNL_ARG_DIFF_SRC, !fwd, tdims(c->t[xi])));
  p->args.push_back(tensor_arg(c, yi, fwd ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST, fwd, tdims(c->t[yi])));
  const auto prop = fwd && !with_ws ? dnnl::prop_kind::forward_inference : dnnl::prop_kind::forward_training;
  auto fwd_pd = [&](const memory::desc& s, const memory::desc& o) {
    return dnnl::pooling_v2_forward::primitive_desc(
        dnnl::pooling_v2_forward::desc(prop, alg, s, o, strides, kernel, dil, pl, pr), attr, eng());
  };
  Arg &X = p->args[0], &Y = p->args[1];
  memory::desc ws_md;
  if (fwd) {
    dnnl::pooling_v2_forward::primitive_desc pd;
    bool ok = false;
    if (!X.copy && !Y.copy) try {
        pd = fwd_pd(X.user, Y.user);
        ok = std::strstr(pd.impl_info_str(), "ref") == nullptr;
      } catch (const dnnl::error&) {
      }
    if (!ok) pd = fwd_pd(dense_like(X.user), dense_like(Y.user));  // pooling takes no "any" source
    X.prim = pd.src_desc();
    Y.prim = pd.dst_desc();
    if (with_ws) {
      ws_md = pd.workspace_desc();
      // The offsets land in a dense int32 buffer, then become positions.
      p->args.push_back(internal_arg(DNNL_ARG_WORKSPACE, true,
                                     memory::desc(tdims(c->t[yi]), mdt::s32, memory::format_tag::abcd)));
      p->args.back().prim = ws_md;
      const size_t wi = p->args.size() - 1;
      const PoolIndex g = pool_index(d, c->t[xi], c->t[yi]);
      p->post.push_back([g, wi, ii](const Exec& e) {
        const int32_t* off = reinterpret_cast<const int32_t*>(e.user_ptr(wi));
        const int64_t PQ = g.P * g.Q;
        for_each_elem(e.t[ii], [&](int64_t l, char* ptr) {
          const int64_t pq = l % PQ, pp = pq / g.Q, q = pq % g.Q, o = off[l];
          const int64_t h = pp * g.SH - g.PT + (o / g.KW) * g.DH, w = q * g.SW - g.PL + (o % g.KW) * g.DW;
          const int64_t v = h * g.W + w;
          std::memcpy(ptr, &v, sizeof v);
        });
      });
    }
    if (maxp) {
      const PoolIndex g = pool_index(d, c->t[xi], c->t[yi]);
      const int wi = with_ws ? ii : -1;
      const CTDataType dt = c->t[xi]->dtype;
      if (dt.code == CT_BFLOAT) p->post.push_back([g, wi](const Exec& e) { pool_special_fixup<bf16>(g, e, wi); });
      else if (dt.bits == 16) p->post.push_back([g, wi](const Exec& e) { pool_special_fixup<f16>(g, e, wi); });
      else if (dt.bits == 32) p->post.push_back([g, wi](const Exec& e) { pool_special_fixup<float>(g, e, wi); });
      else p->post.push_back([g, wi](const Exec& e) { pool_special_fixup<double>(g, e, wi); });
    }
    finish(p, dnnl::pooling_v2_forward(pd), pd.scratchpad_desc());
    return;
  }
  auto bwd_pd = [&](const memory::desc& s, const memory::desc& o) {
    auto hint = fwd_pd(s, o);
    return std::make_pair(dnnl::pooling_v2_backward::primitive_desc(
                              dnnl::pooling_v2_backward::desc(alg, s, o, strides, kernel, dil, pl, pr), attr, eng(),
                              hint),
                          hint);
  };
  std::pair<dnnl::pooling_v2_backward::primitive_desc, dnnl::pooling_v2_forward::primitive_desc> pds;
  bool ok = false;
  if (!X.copy && !Y.copy) try {
      pds = bwd_pd(X.user, Y.user);
      ok = std::strstr(pds.first.impl_info_str(), "ref") == nullptr;
    } catch (const dnnl::error&) {
    }
  if (!ok) pds = bwd_pd(dense_like(X.user), dense_like(Y.user));
  auto& pd = pds.first;
  X.prim = pd.diff_src_desc();
  Y.prim = pd.diff_dst_desc();
  if (maxp) {
    ws_md = pd.workspace_desc();
    p->args.push_back(internal_arg(DNNL_ARG_WORKSPACE, false,
                                   memory::desc(tdims(c->t[yi]), mdt::s32, memory::format_tag::abcd)));
    p->args.back().prim = ws_md;
    const size_t wi = p->args.size() - 1;
    const PoolIndex g = pool_index(d, c->t[xi], c->t[yi]);
    // Positions -> window offsets (half types; float32 and float64 take the
    // direct path above), refusing a position outside its own window
    // (oneDNN would route that gradient elsewhere or drop it).
    p->checks.push_back([g, wi, ii](const Exec& e) -> CTStatus {
      int32_t* off = reinterpret_cast<int32_t*>(e.user_ptr(wi));
      const double inv_w = 1.0 / (double)g.W;
      int64_t bad = -1, bad_v = 0;
      for_each_index(g, e.t[ii], 0, g.N * g.C, [&](int64_t l, int64_t, int64_t pp, int64_t q, int64_t v) {
        const Tap t = tap_of(g, inv_w, v, pp, q);
        if (!t.inside && bad < 0) bad = l, bad_v = v;
        off[l] = t.inside ? (int32_t)t.off : 0;
      });
      return bad < 0 ? CT_OK : bad_index(e, g, bad, bad_v);
    });
  }
  finish(p, dnnl::pooling_v2_backward(pd), pd.scratchpad_desc());
}

}  // namespace onednn
}  // namespace cpu
}  // namespace ct
