// validate.h — the checks every entry point runs before the first write.
#ifndef CTENSOR_SRC_CORE_VALIDATE_H_
#define CTENSOR_SRC_CORE_VALIDATE_H_

#include <cstdint>

#include <ctensor/ctensor.h>

#include "core/error.h"

namespace ct {

// ct_dtype_index as a table lookup (the table is filled from it when the
// library loads): every tensor of every call is classified here. An entry
// holds the index + 1; 0 (not a dtype, or the table not filled yet: a call
// from another library's static initialiser) asks ct_dtype_index itself.
struct DtypeTable {
  uint8_t idx1[32][9];  // [code][bits / 8]
};
extern const DtypeTable g_dtype_table;
inline int32_t fast_dtype_index(CTDataType d) {
  if (d.lanes == 1 && d.code < 32 && !(d.bits & 7) && d.bits <= 64)
    if (const uint8_t v = g_dtype_table.idx1[d.code][d.bits >> 3]) return v - 1;
  return ct_dtype_index(d);
}

// Stride of dim i in elements; NULL strides mean compact row-major. The
// product wraps (unsigned) rather than overflow: only an empty tensor's
// extents can multiply past 2^63, and its strides address nothing.
inline int64_t ct_stride_of(const CTensor* t, int32_t i) {
  uint64_t s = 1;
  if (t->strides) return t->strides[i];
  for (int32_t j = t->ndim - 1; j > i; --j) s *= (uint64_t)t->shape[j];
  return (int64_t)s;
}

// The data address the shape-only checks (workspace and shape queries) give
// a tensor: mid-range, so that any span the strides describe, negative ones
// included, fits around it.
constexpr uintptr_t kStandInData = uintptr_t(1) << 62;

// What validation learnt about one tensor.
struct TensorFacts {
  // TensorFacts(kUnset) leaves every field to check_tensor, which sets
  // them all (the per-call paths skip the stores); the default constructor
  // gives the values each comment names.
  enum Unset { kUnset };
  TensorFacts()
      : dt(-1), itemsize(0), numel(0), lo(0), hi(0), handle(0), not_address(false), aligned(true), compact(true) {}
  explicit TensorFacts(Unset) {}

  int32_t dt;        // CT_DT_* index (-1)
  int64_t itemsize;  // (0)
  int64_t numel;     // (0)
  // Byte range [lo, hi) the tensor can touch (empty when numel == 0): an
  // address range where the device's data is an address, else a range of
  // offsets within the buffer `handle` (an OpenCL cl_mem). (0, 0)
  uintptr_t lo, hi;
  uintptr_t handle;  // the data pointer (a buffer handle where the device's data is not an address) (0)
  bool not_address;  // set once the device is known to hand out handles (false)
  // data + byte_offset is a multiple of itemsize (then so is every element's
  // address: strides are whole elements). Not required: the CPU backend
  // takes unaligned data (NumPy arrays at odd addresses); a backend that
  // cannot would refuse on this fact.
  bool aligned;  // (true)
  bool compact;  // ct_is_compact: NULL strides or those of the compact row-major layout (true)
};

// True when a and b may share bytes: both non-empty, in the same address
// space or buffer, with intersecting byte ranges.
inline bool ranges_meet(const TensorFacts& a, const TensorFacts& b) {
  if (a.numel == 0 || b.numel == 0) return false;
  if ((a.not_address || b.not_address) && a.handle != b.handle) return false;
  return a.lo < b.hi && b.lo < a.hi;
}

// Null pointers, ndim, extents, dtype, element count and byte span overflow,
// data pointer. Alignment is recorded, not checked. `arg` names the tensor
// in messages ("x", "out").
CT_COLD CTStatus check_tensor_full(const char* fn, const char* arg, const CTensor* t, TensorFacts* facts);

// The same, with the common case inline: a compact tensor (NULL strides or
// compact ones) of a known dtype with data and no zero extent, whose span
// fits. Anything else, and every message, is check_tensor_full's; both give
// the same facts.
inline CTStatus check_tensor(const char* fn, const char* arg, const CTensor* t, TensorFacts* f) {
  if (!t || !t->data || t->ndim < 0 || t->ndim > CT_MAX_NDIM || (t->ndim > 0 && !t->shape))
    return check_tensor_full(fn, arg, t, f);
  int64_t numel = 1;
  bool bad = false;
  for (int32_t i = 0; i < t->ndim; ++i)
    bad |= t->shape[i] <= 0 || __builtin_mul_overflow(numel, t->shape[i], &numel);
  // Compact strides: an overflow-free product of positive extents bounds
  // every stride the check compares, so the test below cannot overflow.
  if (bad || !ct_is_compact(t)) return check_tensor_full(fn, arg, t, f);
  const int32_t dt = fast_dtype_index(t->dtype);
  const int64_t itemsize = t->dtype.bits / 8;
  int64_t pos;
  uintptr_t start, hi;
  if (dt < 0 || __builtin_mul_overflow(numel - 1, itemsize, &pos) || t->byte_offset > (uint64_t)INT64_MAX ||
      (int64_t)t->byte_offset > INT64_MAX - itemsize - pos ||  // more than 2^63-1 bytes from data
      __builtin_add_overflow((uintptr_t)t->data, t->byte_offset, &start) ||
      __builtin_add_overflow(start, (uintptr_t)pos + (uintptr_t)itemsize, &hi))
    return check_tensor_full(fn, arg, t, f);
  f->dt = dt;
  f->itemsize = itemsize;
  f->numel = numel;
  f->lo = start;
  f->hi = hi;
  f->handle = (uintptr_t)t->data;
  f->not_address = false;
  f->aligned = (start & (uintptr_t)(itemsize - 1)) == 0;
  f->compact = true;
  return CT_OK;
}

// Same ndim and extents, else CT_ERR_SHAPE_MISMATCH naming both shapes
// (the message: shape_mismatch). Inline: every elementwise call runs it.
CT_COLD CTStatus shape_mismatch(const char* fn, const char* arg_a, const CTensor* a, const char* arg_b,
                                const CTensor* b);
inline bool same_shape(const CTensor* a, const CTensor* b) {
  bool same = a->ndim == b->ndim;
  for (int32_t i = 0; same && i < a->ndim; ++i) same = a->shape[i] == b->shape[i];
  return same;
}
inline CTStatus check_same_shape(const char* fn, const char* arg_a, const CTensor* a, const char* arg_b,
                                 const CTensor* b) {
  return same_shape(a, b) ? CT_OK : shape_mismatch(fn, arg_a, a, arg_b, b);
}

// The overlap tests below are exact (NumPy's solve_may_share_memory /
// solve_may_have_internal_overlap: a bounded Diophantine search) up to this
// many steps; past it they refuse, saying that overlap could not be ruled
// out within the bound. Documented in ctensor.h and notes/SEMANTICS.md.
constexpr int64_t kOverlapMaxWork = 20000;

// An output must not have zero strides on an extent > 1, nor two elements
// at one address.
// Inline for a compact output (the common case: nothing to check).
CTStatus check_strided_output_layout(const char* fn, const char* arg, const CTensor* out);
inline CTStatus check_output_layout(const char* fn, const char* arg, const CTensor* out) {
  return ct_is_compact(out) ? CT_OK : check_strided_output_layout(fn, arg, out);
}
// The same where check_tensor has already said whether out is compact.
inline CTStatus check_output_layout(const char* fn, const char* arg, const CTensor* out, const TensorFacts& of) {
  return of.compact ? CT_OK : check_strided_output_layout(fn, arg, out);
}

// out and in may share bytes only if out is exactly in (in-place). Inline
// for disjoint byte ranges (the common case).
CTStatus check_meeting_overlap(const char* fn, const char* out_arg, const CTensor* out, const TensorFacts& of,
                               const char* in_arg, const CTensor* in, const TensorFacts& inf);
inline CTStatus check_overlap(const char* fn, const char* out_arg, const CTensor* out, const TensorFacts& of,
                              const char* in_arg, const CTensor* in, const TensorFacts& inf) {
  return ranges_meet(of, inf) ? check_meeting_overlap(fn, out_arg, out, of, in_arg, in, inf) : CT_OK;
}

// out and in share no byte at all; `rule` ends the message when they may.
CTStatus check_no_shared_bytes(const char* fn, const char* out_arg, const CTensor* out, const TensorFacts& of,
                               const char* in_arg, const CTensor* in, const TensorFacts& inf, const char* rule);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_VALIDATE_H_
