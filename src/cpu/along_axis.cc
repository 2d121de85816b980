// along_axis.cc — along-axis ops (category 2) on the CPU: softmax,
// log_softmax, softmin, cumsum, cumprod and logcumsumexp walk lines along
// the axis, or blocks of lines side by side when the axis is not
// contiguous; sort and argsort are in sort.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <hwy/cache_control.h>

#include "cpu/host.h"

#include "cpu/engine.h"
#include "cpu/half.h"
#include "cpu/kernels.h"
#include "cpu/reduce_internal.h"
#include "math/scalar.h"

namespace ct {
namespace cpu {
namespace {

// Lines up to this long stage e^(x - m) in a buffer on the stack when the
// output is streamed, so that y is written once, with streaming stores.
constexpr int64_t kStagedLine = 4096;

// Softmax / log_softmax of one line of n float values (A = float or double)
// already in a contiguous buffer or in place: y may equal x. stream: the
// output will not stay in cache (write it once, bypassing the cache; the
// caller orders the streaming stores, hwy::FlushStream, after its last line).
// neg: softmin, the softmax of -x with -x never stored: e^(min(x) - x), the
// very values softmax gives for a negated copy (negation is exact); never
// with log (there is no log_softmin op; log ignores neg).
template <class A> void softmax_line(const A* x, A* y, int64_t n, bool log, bool stream = false, bool neg = false) {
  const KernelTable& kt = kernel_table();
  A m;  // the max of x, or of -x
  if constexpr (std::is_same<A, float>::value) m = neg ? -rk().min_f32(x, n) : rk().max_f32(x, n);
  else m = neg ? -rk().min_f64(x, n) : rk().max_f64(x, n);
  if (m != m) {  // NaN in the line: NaN everywhere
    for (int64_t i = 0; i < n; ++i) y[i] = m;
    return;
  }
  const A shift = std::isinf(m) ? (m > 0 ? m : A(0)) : m;  // all -inf: e^(x-0) = 0, 0/0 = NaN as NumPy
  const int which = std::is_same<A, float>::value ? 0 : 1;
  // sum(e^(x - shift)), or of e^(-x - shift) = e^((-shift) - x)
  const auto exp_sum = [&](const A* from, A* to, int64_t k) {
    return neg ? kt.exp_neg_shift_sum[which](from, to, k, -(double)shift) : kt.exp_shift_sum[which](from, to, k, (double)shift);
  };
  A buf[kStagedLine];
  if (log) {
    // the sum of e^(x - m) without keeping it (y may be x), then y = x - m - log(sum):
    // (x - m) - log(sum), in that order: x - (m + log(sum)) would round
    // m + log(sum) at m's magnitude (x = 1e4 keeps only ~3 digits in float32).
    double s = 0;
    for (int64_t i = 0; i < n; i += kStagedLine)
      s += kt.exp_shift_sum[which](x + i, buf, std::min<int64_t>(kStagedLine, n - i), (double)shift);
    kt.softmax_finish[which](x, y, n, -(double)shift, -std::log(s), 1, stream ? 2 : 0);
    return;
  }
  A* e = stream && n <= kStagedLine ? buf : y;  // y written once, or staged in y itself
  const double s = exp_sum(x, e, n);
  kt.softmax_finish[which](e, y, n, 1.0 / s, 0.0, 0, e == buf ? 2 : 0);
}

// Lines longer than this are done online in two passes over memory
// (running max and rescaled sum, then the output) instead of in cache.
constexpr int64_t kCachedLine = int64_t(1) << 15;

// Reads/writes chunk [i, i+m) of a line of T with stride st into an A buffer
// (negated when neg: softmin is softmax of -x).
template <class T, class A> void load_chunk(const T* x, int64_t st, int64_t i, int64_t m, A* buf, bool neg = false) {
  for (int64_t k = 0; k < m; ++k) buf[k] = ld<A>(load_u(x + (i + k) * st));  // x may be unaligned
  if (neg)
    for (int64_t k = 0; k < m; ++k) buf[k] = -buf[k];
}
template <class T, class A> void store_chunk(T* y, int64_t st, int64_t i, int64_t m, const A* buf) {
  for (int64_t k = 0; k < m; ++k) store_u(y + (i + k) * st, Convert<T>::from(buf[k]));
}

template <class T>
void softmax_strided(const T* x, int64_t xs, T* y, int64_t ys, int64_t n, bool log, bool stream, bool neg = false) {
  using A = typename std::conditional<std::is_same<T, double>::value, double, float>::type;
  const KernelTable& kt = kernel_table();
  const int which = std::is_same<A, float>::value ? 0 : 1;
  constexpr int64_t kChunk = 2048;
  A buf[kChunk];
  if constexpr (std::is_same<T, A>::value) {
    if (xs == 1 && ys == 1 && n <= kCachedLine && is_aligned<T>(x) && is_aligned<T>(y)) {
      return softmax_line<A>(x, y, n, log, stream, neg);
    }
  }
  if (n <= kChunk) {
    load_chunk(x, xs, 0, n, buf, neg);
    softmax_line<A>(buf, buf, n, log);
    store_chunk(y, ys, 0, n, buf);
    return;
  }
  // Online: pass 1 keeps the running max m and sum s of e^(x - m).
  A m = -std::numeric_limits<A>::infinity();
  double s = 0;
  bool nan = false;
  for (int64_t i = 0; i < n && !nan; i += kChunk) {
    const int64_t k = std::min(kChunk, n - i);
    load_chunk(x, xs, i, k, buf, neg);
    const A cm = std::is_same<A, float>::value ? (A)rk().max_f32((const float*)(const void*)buf, k)
                                               : (A)rk().max_f64((const double*)(const void*)buf, k);
    if (cm != cm) { nan = true; break; }
    if (cm > m) {
      if (std::isfinite((double)m)) s *= std::exp((double)m - (double)cm);
      m = cm;
    }
    if (!std::isfinite((double)m)) continue;  // -inf so far (nothing to add) or +inf (handled below)
    s += kt.exp_shift_sum[which](buf, buf, k, (double)m);
  }
  const double qnan = std::numeric_limits<double>::quiet_NaN();
  // Pass 2: y = e^(x - m) / s, or x - m - log(s).
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t k = std::min(kChunk, n - i);
    if (nan || std::isinf((double)m)) {
      // A NaN in the line; a +inf max (inf - inf); all -inf (0 / 0): NaN,
      // as NumPy's expression and the in-cache path give.
      for (int64_t t = 0; t < k; ++t) buf[t] = (A)qnan;
      store_chunk(y, ys, i, k, buf);
      continue;
    }
    load_chunk(x, xs, i, k, buf, neg);
    if (log) {
      kt.softmax_finish[which](buf, buf, k, -(double)m, -std::log(s), 1, 0);  // as in softmax_line
    } else {
      kt.exp_shift_sum[which](buf, buf, k, (double)m);
      kt.softmax_finish[which](buf, buf, k, 1.0 / s, 0.0, 0, 0);
    }
    store_chunk(y, ys, i, k, buf);
  }
}

// The running folds: cumsum, cumprod, logcumsumexp (log(e^acc + e^x) in A).
enum Scan { kScanSum, kScanProd, kScanLogAddExp, kScanMax, kScanMin };

template <class A> constexpr A lowest() {
  return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
}
template <class A> constexpr A highest() {
  return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max();
}

// A scan of K lines of the same length side by side, accumulating in A: K
// independent chains of adds (or multiplies), so the latency of one does not
// bound the loop; each line's results are those of a lone line (K = 1).
template <class T, class O, class A, Scan kOp, int K>
void scan_lines(const T* const* x, int64_t xs, O* const* y, int64_t ys, int64_t n) {
  A acc[K];
  A init;
  if constexpr (kOp == kScanMax || kOp == kScanMin) init = kOp == kScanMax ? lowest<A>() : highest<A>();
  else init = kOp == kScanProd ? A(1) : kOp == kScanSum ? A(0) : -std::numeric_limits<A>::infinity();
  for (int k = 0; k < K; ++k) acc[k] = init;
  for (int64_t i = 0; i < n; ++i)
    for (int k = 0; k < K; ++k) {
      const A v = ld<A>(load_u(x[k] + i * xs));
      // the running max/min: a NaN, once met, stays (acc != acc)
      if constexpr (kOp == kScanMax) acc[k] = (acc[k] == acc[k]) && (v != v || v > acc[k]) ? v : acc[k];
      else if constexpr (kOp == kScanMin) acc[k] = (acc[k] == acc[k]) && (v != v || v < acc[k]) ? v : acc[k];
      else if constexpr (std::is_integral<A>::value) acc[k] = kOp == kScanProd ? wmul(acc[k], v) : wadd(acc[k], v);
      else if constexpr (kOp == kScanLogAddExp) acc[k] = math::logaddexp(acc[k], v);
      else acc[k] = kOp == kScanProd ? acc[k] * v : acc[k] + v;
      store_u(y[k] + i * ys, Convert<O>::from(acc[k]));
    }
}
template <class T, class O, int K> void scan_by_op(int32_t op, const T* const* x, int64_t xs, O* const* y, int64_t ys, int64_t n) {
  using A = typename std::conditional<kFloat<T>, double, int64_t>::type;
  // max and min compare in x's own type (float for the narrow floats): uint64 does not fit int64
  using E = typename std::conditional<kHalf<T>, float, T>::type;
  if (op == CT_OP_CUMMAX) scan_lines<T, O, E, kScanMax, K>(x, xs, y, ys, n);
  else if (op == CT_OP_CUMMIN) scan_lines<T, O, E, kScanMin, K>(x, xs, y, ys, n);
  else if (op == CT_OP_CUMPROD) scan_lines<T, O, A, kScanProd, K>(x, xs, y, ys, n);
  else if (op == CT_OP_CUMSUM) scan_lines<T, O, A, kScanSum, K>(x, xs, y, ys, n);
  else if constexpr (kFloat<T>) scan_lines<T, O, A, kScanLogAddExp, K>(x, xs, y, ys, n);
}

struct LineCtx {
  const CTAlongAxisCall* call;
  Dims lines;      // the other dims (xs = x strides, os = out strides)
  int64_t n, xs, ys;
  bool stream;     // the output is too large to stay in cache: softmax streams its stores
};

template <class T, class O> void lines_body(void* ctx, int64_t b, int64_t e) {
  auto* c = static_cast<LineCtx*>(ctx);
  const CTensor* x = c->call->x;
  const CTensor* out = c->call->out;
  const T* xb = reinterpret_cast<const T*>(static_cast<const char*>(x->data) + x->byte_offset);
  O* yb = reinterpret_cast<O*>(static_cast<char*>(out->data) + out->byte_offset);
  const int32_t op = c->call->op;
  const bool softmax = op == CT_OP_SOFTMAX || op == CT_OP_LOG_SOFTMAX || op == CT_OP_SOFTMIN;
  if (!softmax) {
    constexpr int K = 4;
    for (; b + K <= e; b += K) {
      const T* xl[K];
      O* yl[K];
      for (int k = 0; k < K; ++k) {
        xl[k] = xb + offset_of(c->lines, b + k);
        yl[k] = yb + out_offset_of(c->lines, b + k);
      }
      scan_by_op<T, O, K>(op, xl, c->xs, yl, c->ys, c->n);
    }
  }
  for (int64_t i = b; i < e; ++i) {
    const T* xl = xb + offset_of(c->lines, i);
    O* yl = yb + out_offset_of(c->lines, i);
    if (softmax) {
      if constexpr (kFloat<T> && std::is_same<T, O>::value)
        softmax_strided<T>(xl, c->xs, yl, c->ys, c->n, op == CT_OP_LOG_SOFTMAX, c->stream, op == CT_OP_SOFTMIN);
    } else {
      scan_by_op<T, O, 1>(op, &xl, c->xs, &yl, c->ys, c->n);
    }
  }
  if (softmax && c->stream) hwy::FlushStream();  // the lines' streaming stores, ordered once
}

template <class T, class O> CTStatus along_typed(const CTAlongAxisCall* c, const CTCpuStream* s) {
  LineCtx ctx;
  ctx.call = c;
  const int64_t lines = along_lines(c, &ctx.lines, &ctx.n, &ctx.xs, &ctx.ys);
  int64_t numel = 1;
  for (int32_t d = 0; d < c->out->ndim; ++d) numel *= c->out->shape[d];
  ctx.stream = numel * int64_t(sizeof(O)) >= (int64_t(8) << 20);  // as binary ops decide
  const int64_t cost = c->op == CT_OP_SOFTMAX || c->op == CT_OP_LOG_SOFTMAX || c->op == CT_OP_SOFTMIN ? 8
                       : c->op == CT_OP_LOGCUMSUMEXP ? 16 : 1;
  parallel_for(s, lines, std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(ctx.n * cost, 1)),
               &lines_body<T, O>, &ctx);
  return CT_OK;
}

// cumsum / cumprod of integers and bool write int64 or uint64 (the ACCUM rule).
template <class T> CTStatus along_in(const CTAlongAxisCall* c, const CTCpuStream* s) {
  if constexpr (!kFloat<T>) {
    if (c->out_dt == CT_DT_INT64 && !std::is_same<T, int64_t>::value) return along_typed<T, int64_t>(c, s);
    if (c->out_dt == CT_DT_UINT64 && !std::is_same<T, uint64_t>::value) return along_typed<T, uint64_t>(c, s);
  }
  return along_typed<T, T>(c, s);
}

template <class T> struct AlongF {
  static CTStatus run(const CTAlongAxisCall* c, const CTCpuStream* s) { return along_in<T>(c, s); }
};

}  // namespace

CTStatus cpu_along_axis(const CTAlongAxisCall* call) {
  if (call->op == CT_OP_SORT || call->op == CT_OP_ARGSORT) return cpu_sort(call);
  return run_by_dtype<AlongF>(call);
}

}  // namespace cpu
}  // namespace ct
