// sort.cc — sort and argsort along an axis on the CPU (category 2, the
// along-axis kind; cpu_along_axis passes them here).
//
// Every dtype sorts through one order: a monotone unsigned key per element
// (integers with the sign bit flipped; floats, the narrow ones widened to
// float32 exactly, by their bits with NaN as the largest key and -0 as 0).
// argsort sorts (key, index) pairs as one wider unsigned integer with
// Highway's vqsort, so equal keys keep their index order: stable, as NumPy's
// kind="stable" and torch's stable=True, with every NaN after +inf in its
// original order. sort of float32/float64 and the 16- to 64-bit integers
// sorts the values themselves with vqsort (floats as the unsigned integers
// of a monotone map of their bits, NaN last); the other dtypes gather x by
// the argsort.
//
// Scratch: none when the output line is contiguous and the pairs fit in it
// (values of float32/float64 and the 16- to 64-bit integers; pairs of keys
// up to 32 bits in int64 indices); otherwise one buffer per task, allocated
// here. If that allocation fails, the line is heap-sorted in the output
// instead (the same result, slower): an op never fails for want of scratch.
#include <hwy/contrib/sort/vqsort.h>

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

// T whose values vqsort sorts directly.
template <class T> constexpr bool kVqValues =
    std::is_same<T, float>::value || std::is_same<T, double>::value ||
    (std::is_integral<T>::value && sizeof(T) >= 2);

// ---- the allocation-free fallback: heapsort in the output ---------------------

// Sorts n items in place at p[i * st] (any alignment) by less(a, b), a
// strict weak order; with a total order (argsort's (key, index)) the result
// is unique.
template <class V, class Less> void heap_sort(V* p, int64_t st, int64_t n, Less less) {
  auto get = [&](int64_t i) { return load_u(p + i * st); };
  auto swap = [&](int64_t i, int64_t j) {
    const V a = get(i), b = get(j);
    store_u(p + i * st, b);
    store_u(p + j * st, a);
  };
  auto sift = [&](int64_t i, int64_t m) {
    for (;;) {
      int64_t c = 2 * i + 1;
      if (c >= m) return;
      if (c + 1 < m && less(get(c), get(c + 1))) ++c;
      if (!less(get(i), get(c))) return;
      swap(i, c);
      i = c;
    }
  };
  for (int64_t i = n / 2 - 1; i >= 0; --i) sift(i, n);
  for (int64_t m = n - 1; m > 0; --m) {
    swap(0, m);
    sift(0, m);
  }
}

// ---- one line ---------------------------------------------------------------------

struct SortCtx {
  const CTAlongAxisCall* call;
  Dims lines;
  int64_t n, xs, os;
};

hwy::Sorter& sorter() {
  static thread_local hwy::Sorter s;
  return s;
}

// Indices of the stable order of x's line into idx (int64, stride is).
template <class T> void argsort_line(const T* x, int64_t xs, int64_t* idx, int64_t is, int64_t n, Scratch& sc) {
  using KT = Key<T>;
  if (!KT::kWide && n <= int64_t(0xffffffff)) {
    // (key << 32 | index) as uint64: in the output itself when it is contiguous and aligned
    uint64_t* c = is == 1 && is_aligned<int64_t>(idx) ? reinterpret_cast<uint64_t*>(idx)
                                                       : static_cast<uint64_t*>(sc.get(size_t(n) * 8));
    if (c) {
      for (int64_t i = 0; i < n; ++i) c[i] = (uint64_t(KT::key(load_u(x + i * xs))) << 32) | uint64_t(i);
      sorter()(c, size_t(n), hwy::SortAscending());
      for (int64_t i = 0; i < n; ++i) store_u(idx + i * is, int64_t(c[i] & 0xffffffffu));
      return;
    }
  } else if (auto* c = static_cast<hwy::uint128_t*>(sc.get(size_t(n) * sizeof(hwy::uint128_t)))) {
    for (int64_t i = 0; i < n; ++i) {
      c[i].hi = uint64_t(KT::key(load_u(x + i * xs)));
      c[i].lo = uint64_t(i);
    }
    sorter()(c, size_t(n), hwy::SortAscending());
    for (int64_t i = 0; i < n; ++i) store_u(idx + i * is, int64_t(c[i].lo));
    return;
  }
  // no scratch: heapsort the indices by (key, index)
  for (int64_t i = 0; i < n; ++i) store_u(idx + i * is, i);
  heap_sort(idx, is, n, [&](int64_t a, int64_t b) {
    const auto ka = KT::key(load_u(x + a * xs)), kb = KT::key(load_u(x + b * xs));
    return ka < kb || (ka == kb && a < b);
  });
}

template <class T> void sort_line(const T* x, int64_t xs, T* y, int64_t ys, int64_t n, Scratch& sc) {
  using KT = Key<T>;
  if constexpr (kVqValues<T>) {
    T* b = ys == 1 && is_aligned<T>(y) ? y : static_cast<T*>(sc.get(size_t(n) * sizeof(T)));
    if (b) {
      if (!kFloat<T> && (b != x || xs != 1))
        for (int64_t i = 0; i < n; ++i) b[i] = load_u(x + i * xs);
      if constexpr (kFloat<T>) {
        // As the unsigned integers of a monotone bijection of the bits (hwy
        // 1.0's float vqsort turns an infinity into the largest finite value):
        // NaNs with the sign bit clear map above +inf, so they end up last
        // already; those with it set map below -inf, and move from the front
        // to the end afterwards. Payloads are kept.
        using U = typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type;
        constexpr U kSign = U(1) << (sizeof(T) * 8 - 1);
        U* u = reinterpret_cast<U*>(b);
        int64_t neg_nan = 0;
        for (int64_t i = 0; i < n; ++i) {
          const T v = b == x ? b[i] : load_u(x + i * xs);
          U w;
          std::memcpy(&w, &v, sizeof w);
          neg_nan += (v != v) & ((w & kSign) != 0);
          u[i] = (w & kSign) ? ~w : (w | kSign);
        }
        sorter()(u, size_t(n), hwy::SortAscending());
        for (int64_t i = 0; i < n; ++i) u[i] = (u[i] & kSign) ? (u[i] & ~kSign) : ~u[i];
        if (neg_nan) std::rotate(b, b + neg_nan, b + n);
      } else {
        sorter()(b, size_t(n), hwy::SortAscending());
      }
      if (b != y)
        for (int64_t i = 0; i < n; ++i) store_u(y + i * ys, b[i]);
      return;
    }
  } else {
    // gather x by the stable order: (key << 32 | index) pairs in scratch
    if (auto* c = static_cast<uint64_t*>(sc.get(size_t(n) * 8))) {
      if (n <= int64_t(0xffffffff)) {
        for (int64_t i = 0; i < n; ++i) c[i] = (uint64_t(KT::key(load_u(x + i * xs))) << 32) | uint64_t(i);
        sorter()(c, size_t(n), hwy::SortAscending());
        // read every value before writing any (y may be x): its bits replace the index
        for (int64_t i = 0; i < n; ++i) {
          const T v = load_u(x + int64_t(c[i] & 0xffffffffu) * xs);
          uint64_t bits = 0;
          std::memcpy(&bits, &v, sizeof(T));
          c[i] = bits;
        }
        for (int64_t i = 0; i < n; ++i) {
          T v;
          std::memcpy(&v, &c[i], sizeof(T));
          store_u(y + i * ys, v);
        }
        return;
      }
    }
  }
  // no scratch: copy into y, heapsort there by key
  if (y != x || ys != xs)
    for (int64_t i = 0; i < n; ++i) store_u(y + i * ys, load_u(x + i * xs));
  heap_sort(y, ys, n, [](const T& a, const T& b) { return KT::key(a) < KT::key(b); });
}

template <class T> void sort_body(void* vctx, int64_t b, int64_t e) {
  auto* c = static_cast<SortCtx*>(vctx);
  const CTensor* x = c->call->x;
  const CTensor* out = c->call->out;
  const T* xb = reinterpret_cast<const T*>(static_cast<const char*>(x->data) + x->byte_offset);
  char* ob = static_cast<char*>(out->data) + out->byte_offset;
  Scratch sc;
  for (int64_t i = b; i < e; ++i) {
    const T* xl = xb + offset_of(c->lines, i);
    if (c->call->op == CT_OP_ARGSORT)
      argsort_line<T>(xl, c->xs, reinterpret_cast<int64_t*>(ob) + out_offset_of(c->lines, i), c->os, c->n, sc);
    else
      sort_line<T>(xl, c->xs, reinterpret_cast<T*>(ob) + out_offset_of(c->lines, i), c->os, c->n, sc);
  }
}

template <class T> struct SortF {
  static CTStatus run(const CTAlongAxisCall* call, const CTCpuStream* s) {
    SortCtx ctx;
    ctx.call = call;
    const int64_t lines = along_lines(call, &ctx.lines, &ctx.n, &ctx.xs, &ctx.os);
    // ~ n log n: a line of 2^15 is worth a task of its own
    const int64_t per_line = std::max<int64_t>(1, ctx.n * (64 - __builtin_clzll(uint64_t(ctx.n) | 1)));
    parallel_for(s, lines, std::max<int64_t>(1, (int64_t(1) << 19) / per_line), &sort_body<T>, &ctx);
    return CT_OK;
  }
};

}  // namespace

CTStatus cpu_sort(const CTAlongAxisCall* call) { return run_by_dtype<SortF>(call); }

}  // namespace cpu
}  // namespace ct
