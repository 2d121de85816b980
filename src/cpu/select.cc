// select.cc — the order statistics on the CPU: median, nanmedian, quantile,
// nanquantile, kthvalue and mode (category 2, the reduce kind; cpu_reduce
// passes them here). mode sorts the gathered keys and counts their runs (or,
// without scratch, counts each element's equals: quadratic, the fallback).
//
// Each output's element of a given rank is found by a radix select over the
// monotone unsigned keys sort.cc orders by (floats by their bits, NaN above
// +inf, -0 equal to 0), 8 bits at a time from the top:
//   - the output's keys are gathered once into the task's scratch (counting
//     the NaNs on the way); each pass histograms the next digit of the keys
//     that share the prefix found so far and moves them to the front, so a
//     pass reads only the survivors of the last (a few of them are sorted);
//     the key found is decoded (or, for NaN and zero, the first element in
//     index order with it is fetched: its payload and sign kept);
//   - without scratch (its allocation failed, or CT_CPU_SELECT_SCRATCH=0 for
//     the tests), one pass over x where it lies per digit: nothing fails for
//     want of memory, and the answer is the same element;
//   - a short line (many small reductions) is insertion-sorted on the stack;
//   - kthvalue of one of the 16 smallest or largest ranks keeps those keys
//     in a small sorted buffer during one pass (extreme_rank).
// The GPUs run the allocation-free algorithm with 4-bit digits (src/gpu/ops.cc).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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

// Testing: CT_CPU_SELECT_SCRATCH=0 takes the allocation-free passes over x
// everywhere (the path an allocation failure takes), so the tests run it.
bool scratch_allowed() {
  static const bool allowed = [] {
    const char* e = std::getenv("CT_CPU_SELECT_SCRATCH");
    return !(e && e[0] == '0');
  }();
  return allowed;
}

// The element of line with key k: the key decoded (integers; floats but
// NaN and zero), else the first element in index order with it (a NaN's
// payload, the sign of a zero).
template <class T> T element_with_key(const Line<T>& line, typename Key<T>::K k) {
  using KT = Key<T>;
  using K = typename KT::K;
  constexpr K kNanKey = ~K(0);
  if constexpr (!kFloat<T>) {
    using U = typename std::make_unsigned<T>::type;
    const U u = std::is_signed<T>::value ? U(U(k) ^ (U(1) << (sizeof(T) * 8 - 1))) : U(k);
    T v;
    std::memcpy(&v, &u, sizeof v);
    return v;
  } else {
    if (k != kNanKey && k != KT::key(T{})) {
      const K bits = (k >> (8 * sizeof(K) - 1)) ? K(k ^ (K(1) << (8 * sizeof(K) - 1))) : K(~k);
      if constexpr (std::is_same<T, double>::value) {
        double v;
        std::memcpy(&v, &bits, 8);
        return v;
      } else {
        const uint32_t b32 = uint32_t(bits);
        float f;
        std::memcpy(&f, &b32, 4);
        if constexpr (std::is_same<T, float>::value) return f;
        else return Convert<T>::from(f);  // exact: the key was the element's own value widened
      }
    }
    T found{};
    bool have = false;
    line.each([&](T v) {
      if (!have && KT::key(v) == k) {
        found = v;
        have = true;
      }
    });
    return found;
  }
}

template <class T> struct Select {
  using KT = Key<T>;
  using K = typename KT::K;
  // Key bits that vary: every bit for floats, the dtype's width for integers.
  static constexpr int kBits = kFloat<T> ? int(8 * sizeof(K)) : int(8 * sizeof(T));
  static constexpr K kNanKey = ~K(0);
  static constexpr int64_t kSmall = 32;

  const Line<T>& line;
  Scratch& sc;
  K* keys = nullptr;  // the line's keys, gathered (n > kSmall and the scratch came)
  int64_t nan = 0;    // NaN elements (floats)

  Select(const Line<T>& l, Scratch& s) : line(l), sc(s) {
    if (line.n > kSmall && scratch_allowed()) keys = static_cast<K*>(sc.get(size_t(line.n) * sizeof(K)));
    if (keys) {  // one pass: the keys and the NaN count
      int64_t i = 0, c = 0;
      line.each([&](T v) {
        const K k = KT::key(v);
        keys[i++] = k;
        if constexpr (kFloat<T>) c += k == kNanKey;
      });
      nan = c;
    } else if constexpr (kFloat<T>) {
      int64_t c = 0;
      line.each([&](T v) { c += ld<float>(v) != ld<float>(v); });
      nan = c;
    }
  }

  // The element of rank r (0-based, in key order; once per line); *less and
  // *equal: how many elements have a smaller key and its key.
  T rank(int64_t r, int64_t* less, int64_t* equal) {
    if (line.n <= kSmall) return rank_small(r, less, equal);
    if (keys) return value_of(select_keys(r, less, equal));
    return rank_passes(r, less, equal);
  }

  // The most frequent key's element, the smallest key among those as
  // frequent: the gathered keys sorted, then their runs; without scratch,
  // each element's count by a pass over the line (quadratic: the fallback).
  T mode() {
    if (keys && line.n > kSmall) {
      std::sort(keys, keys + line.n);
      K best = keys[0];
      int64_t best_n = 0;
      for (int64_t i = 0; i < line.n;) {
        int64_t j = i + 1;
        while (j < line.n && keys[j] == keys[i]) ++j;
        if (j - i > best_n) {
          best_n = j - i;
          best = keys[i];
        }
        i = j;
      }
      return value_of(best);
    }
    K best = 0;
    T v_best{};
    int64_t best_n = 0;
    line.each([&](T v) {
      const K k = KT::key(v);
      if (best_n > 0 && k == best) return;  // counted
      int64_t c = 0;
      line.each([&](T w) { c += KT::key(w) == k; });
      if (c > best_n || (c == best_n && k < best)) {
        best_n = c;
        best = k;
        v_best = v;
      }
    });
    return v_best;
  }

  // The element with the smallest key above k, the key of the last rank():
  // one exists, as the caller counted the elements at or below k. The
  // gathered keys' select noted it on the way; else a pass over x.
  T next_above(K k) const {
    if (keys && line.n > kSmall && has_next_) return value_of(next_);
    return scan_above(k);
  }

 private:
  K next_ = 0;  // select_keys: the smallest key above the one found, if has_next_
  bool has_next_ = false;

  // The first element in index order with the smallest key above k.
  T scan_above(K k) const {
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

  // A short line (many small reductions): a stable insertion sort of its
  // keys on the stack (the first element in index order with the key).
  T rank_small(int64_t r, int64_t* less, int64_t* equal) const {
    K ks[kSmall];
    T vals[kSmall];
    int64_t n = 0;
    line.each([&](T v) {
      const K k = KT::key(v);
      int64_t j = n++;
      for (; j > 0 && ks[j - 1] > k; --j) {
        ks[j] = ks[j - 1];
        vals[j] = vals[j - 1];
      }
      ks[j] = k;
      vals[j] = v;
    });
    int64_t lo = r, hi = r;
    while (lo > 0 && ks[lo - 1] == ks[r]) --lo;
    while (hi + 1 < n && ks[hi + 1] == ks[r]) ++hi;
    *less = lo;
    *equal = hi - lo + 1;
    return vals[lo];
  }

  // The key of rank r among the gathered keys: a histogram of the next 8
  // bits of the keys that share the prefix so far (four interleaved
  // histograms: no chain of increments to one counter), then those keys
  // moved to the front, so each pass reads only the survivors of the last.
  // On the way it notes the smallest key above the one found (quantile's
  // upper neighbour): the least key of the first non-empty bucket above the
  // chosen one at the deepest pass that has one.
  K select_keys(int64_t r, int64_t* less, int64_t* equal) {
    K prefix = 0;
    int64_t below = 0, m = line.n;
    has_next_ = false;
    for (int shift = kBits - 8;; shift -= 8) {
      if (m <= kSmall) {  // few left: sort them
        std::sort(keys, keys + m);
        const K k = keys[r - below];
        int64_t lo = r - below, hi = r - below;
        while (lo > 0 && keys[lo - 1] == k) --lo;
        while (hi + 1 < m && keys[hi + 1] == k) ++hi;
        *less = below + lo;
        *equal = hi - lo + 1;
        if (hi + 1 < m) {
          next_ = keys[hi + 1];
          has_next_ = true;
        }
        return k;
      }
      int64_t h[4][256];
      std::memset(h, 0, sizeof h);
      int64_t i = 0;
      for (; i + 4 <= m; i += 4) {
        ++h[0][(keys[i] >> shift) & 255u];
        ++h[1][(keys[i + 1] >> shift) & 255u];
        ++h[2][(keys[i + 2] >> shift) & 255u];
        ++h[3][(keys[i + 3] >> shift) & 255u];
      }
      for (; i < m; ++i) ++h[0][(keys[i] >> shift) & 255u];
      unsigned d = 0;
      int64_t c = 0;
      for (;; ++d) {
        c = h[0][d] + h[1][d] + h[2][d] + h[3][d];
        if (below + c > r) break;
        below += c;
      }
      unsigned up = d + 1;  // the first non-empty bucket above d, 256 if none
      while (up < 256 && h[0][up] + h[1][up] + h[2][up] + h[3][up] == 0) ++up;
      prefix |= K(d) << shift;
      if (shift == 0) {
        *less = below;
        *equal = c;
        if (up < 256) {
          next_ = K(prefix ^ d) | K(up);
          has_next_ = true;
        }
        return prefix;
      }
      if (c == m) continue;  // every survivor shares the digit (the top bytes of small integers): nothing moves
      int64_t j = 0;  // without a branch: which keys survive is data, not a pattern the predictor learns
      K least_up = ~K(0);
      for (i = 0; i < m; ++i) {
        const K k = keys[i];
        const unsigned kd = unsigned((k >> shift) & 255u);
        keys[j] = k;
        j += kd == d;
        least_up = std::min(least_up, kd == up ? k : ~K(0));
      }
      if (up < 256) {
        next_ = least_up;
        has_next_ = true;
      }
      m = j;
    }
  }

  T value_of(K k) const { return element_with_key(line, k); }

  // Without scratch: one pass over x per 8-bit digit of the key, from the
  // top, counting the elements whose higher digits match the prefix found so
  // far; the last pass keeps the first element of each bucket.
  T rank_passes(int64_t r, int64_t* less, int64_t* equal) const {
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
};

// The element of rank r (0-based, in key order) where r is among the kFew
// smallest ranks or the kFew largest: one pass keeping the r + 1 smallest
// keys (kLow) or the n - r largest, in order, each key compared with the
// worst one kept and inserted only when it beats it (rare once the buffer
// is full, for any order but an adversarial one, which costs kFew moves an
// element). The radix select gathers the keys and makes three passes over
// them, ~45 instructions an element: kthvalue(k = 1) ran at 0.4x NumPy's
// partition, which scans like this for its first ranks.
constexpr int64_t kFew = 16;
template <class T, bool kLow> T extreme_rank(const Line<T>& line, int64_t m) {
  using K = typename Key<T>::K;
  m = std::min(std::max(m, int64_t(1)), kFew);  // 1 <= m <= kFew already (extreme()): said to the compiler
  K kept[kFew];  // kLow: ascending, else descending; kept[m - 1] the worst
  int64_t have = 0;
  line.each([&](T v) {
    const K k = Key<T>::key(v);
    if (have == m) {
      if (kLow ? k >= kept[m - 1] : k <= kept[m - 1]) return;
      --have;  // the worst one goes
    }
    int64_t j = have++;
    for (; j > 0 && (kLow ? kept[j - 1] > k : kept[j - 1] < k); --j) kept[j] = kept[j - 1];
    kept[j] = k;
  });
  return element_with_key(line, kept[m - 1]);
}
template <class T> bool extreme(const Line<T>& line, int64_t r) { return r < kFew || line.n - 1 - r < kFew; }
template <class T> T extreme_rank(const Line<T>& line, int64_t r) {
  return r < kFew ? extreme_rank<T, true>(line, r + 1) : extreme_rank<T, false>(line, line.n - r);
}

// The quantile's arithmetic: float for float32 and the narrow floats, double
// for float64 and the integers (whose result is float64).
template <class T> using QC = typename std::conditional<kFloat<T> && sizeof(T) < 8, float, double>::type;
template <class T> using QO = typename std::conditional<kFloat<T>, T, double>::type;

template <class T> QO<T> quantile_of(const Line<T>& line, Scratch& sc, double q, bool skip_nan) {
  using C = QC<T>;
  Select<T> sel(line, sc);
  const int64_t n = skip_nan ? line.n - sel.nan : line.n;
  if ((!skip_nan && sel.nan > 0) || n == 0) return Convert<QO<T>>::from(std::numeric_limits<double>::quiet_NaN());
  // q * (n - 1) in double: exact enough for any count (NumPy's index arithmetic)
  const double pos = q * double(n - 1);
  const int64_t lo = (int64_t)std::floor(pos);
  int64_t less = 0, equal = 0;
  const T vlo = sel.rank(lo, &less, &equal);
  const C a = ld<C>(vlo);
  if (double(lo) == pos) return Convert<QO<T>>::from(a);
  const T vhi = less + equal > lo + 1 ? vlo : sel.next_above(Key<T>::key(vlo));
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
  Scratch sc;
  for (int64_t i = b; i < e; ++i) {
    const Line<T> line{xb + offset_of(c->kept, i), &c->red, c->count};
    const int64_t oo = out_offset_of(c->kept, i);
    if (call->op == CT_OP_QUANTILE || call->op == CT_OP_NANQUANTILE) {
      store_u(reinterpret_cast<QO<T>*>(ob) + oo,
              quantile_of<T>(line, sc, call->params[0], call->op == CT_OP_NANQUANTILE));
      continue;
    }
    if (call->op == CT_OP_KTHVALUE && line.n > Select<T>::kSmall && extreme(line, (int64_t)call->params[0] - 1)) {
      store_u(reinterpret_cast<T*>(ob) + oo, extreme_rank(line, (int64_t)call->params[0] - 1));
      continue;
    }
    Select<T> sel(line, sc);
    if (call->op == CT_OP_MODE) {
      store_u(reinterpret_cast<T*>(ob) + oo, sel.mode());
      continue;
    }
    int64_t less = 0, equal = 0, r = 0;
    if (call->op == CT_OP_KTHVALUE) {
      r = (int64_t)call->params[0] - 1;
    } else {  // median and nanmedian: the lower median, NaN (the first) if any / if nothing but NaN
      const int64_t n = call->op == CT_OP_NANMEDIAN ? c->count - sel.nan : c->count;
      r = sel.nan > 0 && (call->op == CT_OP_MEDIAN || n == 0) ? c->count - sel.nan : (n - 1) / 2;
    }
    store_u(reinterpret_cast<T*>(ob) + oo, sel.rank(r, &less, &equal));
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
