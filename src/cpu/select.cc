// select.cc — the order statistics on the CPU: median, nanmedian, quantile,
// nanquantile and kthvalue (category 2, the reduce kind; cpu_reduce passes
// them here).
//
// Each output's element of a given rank is found by a radix select over the
// monotone unsigned keys sort.cc orders by (floats by their bits, NaN above
// +inf, -0 equal to 0): one pass over the output's elements per 8-bit digit
// of the key, from the top, counting the elements whose higher digits match
// the prefix found so far. The passes read x where it lies: no scratch, no
// allocation (nothing fails for want of memory), no reordering, and the
// element returned is one of x's own (the first in index order with the
// selected key, so a NaN keeps its payload). The GPUs run the same algorithm
// with 4-bit digits (src/gpu/ops.cc).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cpu/host.h"

#include "cpu/engine.h"
#include "cpu/half.h"
#include "cpu/reduce_internal.h"

namespace ct {
namespace cpu {
namespace {

// The elements one output reduces: red's dims from base (count n >= 1).
template <class T> struct Line {
  const T* base;
  const Dims* red;
  int64_t n;
  template <class F> void each(F&& f) const {
    if (red->n == 0) {
      f(load_u(base));
      return;
    }
    const int last = red->n - 1;
    const int64_t inner = red->ext[last], st = red->xs[last];
    for (int64_t r = 0; r < n; r += inner) {
      const T* p = base + offset_of(*red, r);
      if (st == 1)
        for (int64_t j = 0; j < inner; ++j) f(load_u(p + j));
      else
        for (int64_t j = 0; j < inner; ++j) f(load_u(p + j * st));
    }
  }
};

template <class T> struct Select {
  using KT = Key<T>;
  using K = typename KT::K;
  // Key bits that vary: every bit for floats, the dtype's width for integers.
  static constexpr int kBits = kFloat<T> ? int(8 * sizeof(K)) : int(8 * sizeof(T));

  // The element of rank r (0-based, in key order) of the line; *less and
  // *equal: how many elements have a smaller key and its key.
  static T rank(const Line<T>& line, int64_t r, int64_t* less, int64_t* equal) {
    if (line.n <= kSmall) return rank_small(line, r, less, equal);
    K prefix = 0;
    int64_t below = 0;
    for (int shift = kBits - 8;; shift -= 8) {
      const K high = shift + 8 >= int(8 * sizeof(K)) ? K(0) : K(~K(0) << (shift + 8));
      int64_t hist[256] = {0};
      if (shift > 0) {
        line.each([&](T v) {
          const K k = KT::key(v);
          if ((k & high) == prefix) ++hist[(k >> shift) & 255u];
        });
      } else {
        T first[256];
        line.each([&](T v) {
          const K k = KT::key(v);
          if ((k & high) == prefix) {
            const unsigned d = unsigned(k & 255u);
            if (hist[d]++ == 0) first[d] = v;
          }
        });
        unsigned d = 0;
        while (below + hist[d] <= r) below += hist[d++];
        *less = below;
        *equal = hist[d];
        return first[d];
      }
      unsigned d = 0;
      while (below + hist[d] <= r) below += hist[d++];
      prefix |= K(d) << shift;
    }
  }

  // A short line (many small reductions): a stable insertion sort of its
  // keys on the stack, the same answer as the passes (the first element in
  // index order among those with the key of rank r).
  static constexpr int64_t kSmall = 32;
  static T rank_small(const Line<T>& line, int64_t r, int64_t* less, int64_t* equal) {
    K keys[kSmall];
    T vals[kSmall];
    int64_t n = 0;
    line.each([&](T v) {
      const K k = KT::key(v);
      int64_t j = n++;
      for (; j > 0 && keys[j - 1] > k; --j) {
        keys[j] = keys[j - 1];
        vals[j] = vals[j - 1];
      }
      keys[j] = k;
      vals[j] = v;
    });
    int64_t lo = r, hi = r;
    while (lo > 0 && keys[lo - 1] == keys[r]) --lo;
    while (hi + 1 < n && keys[hi + 1] == keys[r]) ++hi;
    *less = lo;
    *equal = hi - lo + 1;
    return vals[lo];
  }

  // The first element in index order with the smallest key above k
  // (one exists: the caller counted the elements at or below k).
  static T next_above(const Line<T>& line, K k) {
    K best = ~K(0);
    T v0{};
    bool have = false;
    line.each([&](T v) {
      const K kv = KT::key(v);
      if (kv > k && (!have || kv < best)) {
        best = kv;
        v0 = v;
        have = true;
      }
    });
    return v0;
  }

  static int64_t nans(const Line<T>& line) {
    int64_t c = 0;
    if constexpr (kFloat<T>) line.each([&](T v) { c += ld<float>(v) != ld<float>(v); });
    return c;
  }
};

// The quantile's arithmetic: float for float32 and the narrow floats, double
// for float64 and the integers (whose result is float64).
template <class T> using QC = typename std::conditional<kFloat<T> && sizeof(T) < 8, float, double>::type;
template <class T> using QO = typename std::conditional<kFloat<T>, T, double>::type;

template <class T> QO<T> quantile_of(const Line<T>& line, double q, bool skip_nan) {
  using C = QC<T>;
  using S = Select<T>;
  const int64_t nan = S::nans(line);
  const int64_t n = skip_nan ? line.n - nan : line.n;
  if ((!skip_nan && nan > 0) || n == 0) return Convert<QO<T>>::from(std::numeric_limits<double>::quiet_NaN());
  // q * (n - 1) in double: exact enough for any count (NumPy's index arithmetic)
  const double pos = q * double(n - 1);
  const int64_t lo = (int64_t)std::floor(pos);
  int64_t less = 0, equal = 0;
  const T vlo = S::rank(line, lo, &less, &equal);
  const C a = ld<C>(vlo);
  if (double(lo) == pos) return Convert<QO<T>>::from(a);
  const T vhi = less + equal > lo + 1 ? vlo : S::next_above(line, Key<T>::key(vlo));
  const C b = ld<C>(vhi), w = C(pos - double(lo));
  // PyTorch's and NumPy's lerp: from the nearer end
  const C d = b - a;
  return Convert<QO<T>>::from(w < C(0.5) ? a + w * d : b - d * (C(1) - w));
}

struct SelCtx {
  const CTReduceCall* call;
  Dims kept, red;
  int64_t count;
};

template <class T> void select_body(void* vctx, int64_t b, int64_t e) {
  auto* c = static_cast<SelCtx*>(vctx);
  const CTReduceCall* call = c->call;
  const T* xb = reinterpret_cast<const T*>(static_cast<const char*>(call->x->data) + call->x->byte_offset);
  char* ob = static_cast<char*>(call->out->data) + call->out->byte_offset;
  using S = Select<T>;
  for (int64_t i = b; i < e; ++i) {
    const Line<T> line{xb + offset_of(c->kept, i), &c->red, c->count};
    const int64_t oo = out_offset_of(c->kept, i);
    if (call->op == CT_OP_QUANTILE || call->op == CT_OP_NANQUANTILE) {
      store_u(reinterpret_cast<QO<T>*>(ob) + oo, quantile_of<T>(line, call->params[0], call->op == CT_OP_NANQUANTILE));
      continue;
    }
    int64_t less = 0, equal = 0, r = 0;
    if (call->op == CT_OP_KTHVALUE) {
      r = (int64_t)call->params[0] - 1;
    } else {  // median and nanmedian: the lower median, NaN (the first) if any / if nothing but NaN
      const int64_t nan = S::nans(line);
      const int64_t n = call->op == CT_OP_NANMEDIAN ? c->count - nan : c->count;
      r = nan > 0 && (call->op == CT_OP_MEDIAN || n == 0) ? c->count - nan : (n - 1) / 2;
    }
    store_u(reinterpret_cast<T*>(ob) + oo, S::rank(line, r, &less, &equal));
  }
}

template <class T> struct SelectF {
  static CTStatus run(const CTReduceCall* call, const CTCpuStream* s) {
    SelCtx ctx;
    ctx.call = call;
    ctx.count = call->count;
    const CTensor* x = call->x;
    int64_t outer = 1;
    for (int32_t d = 0; d < x->ndim; ++d) {
      if (x->shape[d] == 1) continue;
      if (call->reduce_mask & (1u << d)) {
        ctx.red.ext[ctx.red.n] = x->shape[d];
        ctx.red.xs[ctx.red.n++] = ct_stride_of(x, d);
      } else {
        ctx.kept.ext[ctx.kept.n] = x->shape[d];
        ctx.kept.xs[ctx.kept.n] = ct_stride_of(x, d);
        ctx.kept.os[ctx.kept.n++] = call->out_strides[d];
        outer *= x->shape[d];
      }
    }
    if (call->count == 0) {  // quantile of nothing is NaN (core refuses the others)
      for (int64_t i = 0; i < outer; ++i)
        store_u(reinterpret_cast<QO<T>*>(static_cast<char*>(call->out->data) + call->out->byte_offset) +
                    out_offset_of(ctx.kept, i),
                Convert<QO<T>>::from(std::numeric_limits<double>::quiet_NaN()));
      return CT_OK;
    }
    // about one pass per key byte, plus one
    const int64_t per = std::max<int64_t>(1, ctx.count * int64_t(sizeof(T) + 2));
    parallel_for(s, outer, std::max<int64_t>(1, (int64_t(1) << 16) / per), &select_body<T>, &ctx);
    return CT_OK;
  }
};

}  // namespace

CTStatus cpu_select(const CTReduceCall* call) {
  if (call->x_dt == CT_DT_BOOL) return fail(CT_ERR_INTERNAL, "cpu backend: %s of bool", call->fn);
  return run_by_dtype<SelectF>(call);
}

}  // namespace cpu
}  // namespace ct
