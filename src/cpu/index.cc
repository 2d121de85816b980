// index.cc — the CPU's index slot (take, gather, scatter, scatter_add,
// index_add as core lowers them: plugin.h, CTIndexCall).
//
// A gather is a loop over out's elements, split among threads anywhere; a
// scatter is a loop over lines (every dim but the last) with the indexed
// axis last, so threads split the lines and each line's writes happen in
// order of k: results never depend on the thread count. Copies move bytes
// (any dtype of that size); adds follow the dtype: integers wrap, float32
// and float64 add in their own precision, the narrow floats in float32 and
// round once per add (PyTorch's order for scatter_add and index_add).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu/host.h"

#include "cpu/engine.h"
#include "cpu/half.h"
#include "cpu/reduce_internal.h"

namespace ct {
namespace cpu {
namespace {

struct Loop {
  const CTIndexCall* c;
  int32_t nd;
  int64_t ext[CT_MAX_NDIM];
  int64_t ds[CT_MAX_NDIM], is[CT_MAX_NDIM], os[CT_MAX_NDIM];  // bytes
  const char* data;
  const char* index;
  char* out;
  int64_t esize, isize, axis_bytes;
};

template <class I> inline int64_t read_index(const char* p) {
  I v;
  std::memcpy(&v, p, sizeof v);
  return (int64_t)v;
}

// The element offsets of flat position `e` of the first `nd` dims.
inline void locate(const Loop& L, int32_t nd, int64_t e, int64_t* pos, int64_t* od, int64_t* oi, int64_t* oo) {
  *od = *oi = *oo = 0;
  for (int32_t k = nd - 1; k >= 0; --k) {
    pos[k] = e % L.ext[k];
    e /= L.ext[k];
    *od += pos[k] * L.ds[k];
    *oi += pos[k] * L.is[k];
    *oo += pos[k] * L.os[k];
  }
}

inline void step(const Loop& L, int32_t nd, int64_t* pos, int64_t* od, int64_t* oi, int64_t* oo) {
  for (int32_t k = nd - 1; k >= 0; --k) {
    *od += L.ds[k], *oi += L.is[k], *oo += L.os[k];
    if (++pos[k] < L.ext[k]) return;
    *od -= L.ds[k] * L.ext[k], *oi -= L.is[k] * L.ext[k], *oo -= L.os[k] * L.ext[k];
    pos[k] = 0;
  }
}

// Elements [begin, end) of a gather, a run of the innermost dim at a time:
// where the index does not vary along it (take of rows, embedding) one read
// of the index serves the run, and a unit-stride run is one memcpy.
template <int64_t E, class I> void gather_body(void* ctx, int64_t begin, int64_t end) {
  const Loop& L = *static_cast<const Loop*>(ctx);
  const int64_t n = L.c->axis_extent, inner = L.ext[L.nd - 1];
  const int64_t dsi = L.ds[L.nd - 1], isi = L.is[L.nd - 1], osi = L.os[L.nd - 1];
  int64_t pos[CT_MAX_NDIM], od, oi, oo;
  for (int64_t e = begin; e < end;) {
    locate(L, L.nd, e, pos, &od, &oi, &oo);
    const int64_t len = std::min(inner - pos[L.nd - 1], end - e);
    char* out = L.out + oo;
    if (isi == 0) {
      int64_t i = read_index<I>(L.index + oi);
      if (i < 0) i += n;
      if (i < 0 || i >= n) {  // core checked host indices; never reached from ct_index
        for (int64_t k = 0; k < len; ++k) std::memset(out + k * osi, 0, E);
      } else {
        const char* src = L.data + od + i * L.axis_bytes;
        if (dsi == E && osi == E) std::memcpy(out, src, (size_t)(len * E));
        else
          for (int64_t k = 0; k < len; ++k) std::memcpy(out + k * osi, src + k * dsi, E);
      }
    } else {
      const char* idx = L.index + oi;
      const char* src = L.data + od;
      for (int64_t k = 0; k < len; ++k) {
        int64_t i = read_index<I>(idx + k * isi);
        if (i < 0) i += n;
        if (i >= 0 && i < n) std::memcpy(out + k * osi, src + k * dsi + i * L.axis_bytes, E);
        else std::memset(out + k * osi, 0, E);  // core checked host indices; never reached from ct_index
      }
    }
    e += len;
  }
}

template <class T> inline T add_scaled(T o, T v, double alpha) {
  if constexpr (kHalf<T>) {
    const float a = (float)alpha;
    const float s = (float)to_double(o) + (alpha == 1.0 ? (float)to_double(v) : a * (float)to_double(v));
    return Convert<T>::from((double)s);
  } else if constexpr (std::is_floating_point<T>::value) {
    return alpha == 1.0 ? (T)(o + v) : (T)(o + (T)alpha * v);
  } else {  // integers wrap, as NumPy's and PyTorch's
    // In uint64_t: a 16-bit U would promote to int, where the product overflows (UB).
    using U = typename std::make_unsigned<T>::type;
    const uint64_t a = (U)(T)(int64_t)alpha;
    return (T)(U)((uint64_t)(U)o + a * (uint64_t)(U)v);
  }
}

// One element of a scatter: *dst = *src, or *dst += alpha * *src (any alignment).
template <class T, bool Add> inline void put(char* dst, const char* src, double alpha) {
  if constexpr (Add) {
    T a, b;
    std::memcpy(&a, dst, sizeof(T));
    std::memcpy(&b, src, sizeof(T));
    a = add_scaled(a, b, alpha);
    std::memcpy(dst, &a, sizeof(T));
  } else {
    std::memcpy(dst, src, sizeof(T));
  }
}

// Lines [begin, end) of a scatter: each line's K elements in order.
template <class T, bool Add, class I> void scatter_body(void* ctx, int64_t begin, int64_t end) {
  const Loop& L = *static_cast<const Loop*>(ctx);
  const int64_t n = L.c->axis_extent, K = L.ext[L.nd - 1];
  const int64_t dk = L.ds[L.nd - 1], ik = L.is[L.nd - 1];
  const double alpha = L.c->alpha;
  if (L.nd == 2 && L.os[0] == L.esize && L.ds[0] == L.esize) {
    // Lines side by side in out and data (index_add of rows, a scatter into the leading axis): k outer, the
    // block of lines inner, so each k touches one contiguous run; each line still takes its k in order.
    const int64_t is0 = L.is[0];
    for (int64_t k = 0; k < K; ++k) {
      const char* idx = L.index + k * ik;
      const char* data = L.data + k * dk;
      for (int64_t line = begin; line < end; ++line) {
        int64_t i = read_index<I>(idx + line * is0);
        if (i < 0) i += n;
        if (i < 0 || i >= n) continue;  // core checked host indices; never reached from ct_index
        put<T, Add>(L.out + line * L.esize + i * L.axis_bytes, data + line * L.esize, alpha);
      }
    }
    return;
  }
  int64_t pos[CT_MAX_NDIM], od, oi, oo;
  locate(L, L.nd - 1, begin, pos, &od, &oi, &oo);
  for (int64_t line = begin; line < end; ++line) {
    const char* idx = L.index + oi;
    const char* data = L.data + od;
    char* out = L.out + oo;
    for (int64_t k = 0; k < K; ++k) {
      int64_t i = read_index<I>(idx + k * ik);
      if (i < 0) i += n;
      if (i < 0 || i >= n) continue;  // core checked host indices; never reached from ct_index
      put<T, Add>(out + i * L.axis_bytes, data + k * dk, alpha);
    }
    if (L.nd > 1) step(L, L.nd - 1, pos, &od, &oi, &oo);
  }
}

template <class T> struct Run {
  template <class I> static CTStatus go(Loop* L, const CTCpuStream* s) {
    const CTIndexCall* c = L->c;
    if (c->mode == CT_INDEX_GATHER) {
      parallel_for(s, c->numel, 1 << 14, &gather_body<(int64_t)sizeof(T), I>, L);
      return CT_OK;
    }
    int64_t lines = 1;
    for (int32_t k = 0; k + 1 < L->nd; ++k) lines *= L->ext[k];
    const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(L->ext[L->nd - 1], 1));
    if (c->mode == CT_INDEX_SCATTER) parallel_for(s, lines, grain, &scatter_body<T, false, I>, L);
    else parallel_for(s, lines, grain, &scatter_body<T, true, I>, L);
    return CT_OK;
  }
  static CTStatus run(Loop* L, const CTCpuStream* s) {
    return L->isize == 8 ? go<int64_t>(L, s) : go<int32_t>(L, s);
  }
};

// Copies need only the element size; adds the dtype.
template <class T> struct Bytes {
  static CTStatus run(Loop* L, const CTCpuStream* s) {
    switch (sizeof(T)) {
      case 1: return Run<uint8_t>::run(L, s);
      case 2: return Run<uint16_t>::run(L, s);
      case 4: return Run<uint32_t>::run(L, s);
      default: return Run<uint64_t>::run(L, s);
    }
  }
};

}  // namespace

CTStatus cpu_index(const CTIndexCall* c) {
  CTCpuStream copy;
  const CTCpuStream* s = nullptr;
  if (CTStatus st = resolve_stream(c->fn, c->stream, &copy, &s)) return st;
  Loop L;
  L.c = c;
  L.nd = c->out->ndim;
  L.esize = (int64_t)(ct_dtype_of_index(c->dt).bits / 8);
  L.isize = c->index_dt == CT_DT_INT64 ? 8 : 4;
  for (int32_t k = 0; k < L.nd; ++k) {
    L.ext[k] = c->out->shape[k];
    L.ds[k] = ct_byte_stride_of(c->data, k, L.esize);
    L.is[k] = ct_byte_stride_of(c->index, k, L.isize);
    L.os[k] = ct_byte_stride_of(c->out, k, L.esize);
  }
  L.data = static_cast<const char*>(c->data->data) + c->data->byte_offset;
  L.index = static_cast<const char*>(c->index->data) + c->index->byte_offset;
  L.out = static_cast<char*>(c->out->data) + c->out->byte_offset;
  // Unsigned: a data dim of extent 1 may have any stride (only index 0 reaches it), so the product may wrap.
  L.axis_bytes = (int64_t)((uint64_t)c->axis_stride * (uint64_t)L.esize);
  if (c->mode == CT_INDEX_SCATTER_ADD) return by_dtype<Run>(c->dt, &L, s);
  return by_dtype<Bytes>(c->dt, &L, s);
}

}  // namespace cpu
}  // namespace ct
