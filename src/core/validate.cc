#include "core/validate.h"

#include <algorithm>
#include <cinttypes>
#include <cstdlib>

#include "core/error.h"
#include "core/registry.h"

namespace ct {

CTStatus check_tensor(const char* fn, const char* arg, const CTensor* t, TensorFacts* f) {
  if (!t) return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, arg);
  if (t->ndim < 0 || t->ndim > CT_MAX_NDIM)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.ndim=%d is outside 0..%d", fn, arg, t->ndim, CT_MAX_NDIM);
  if (t->ndim > 0 && !t->shape)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.shape is NULL with ndim=%d", fn, arg, t->ndim);
  int64_t numel = 1;
  bool overflow = false;
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0)
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.shape[%d]=%" PRId64 " is negative", fn, arg, i, t->shape[i]);
    overflow = overflow || __builtin_mul_overflow(numel, t->shape[i], &numel);
  }
  char dbuf[64];
  const int32_t dt = dtype_index(t->dtype);
  if (dt < 0)
    return fail(CT_ERR_UNSUPPORTED, "%s: %s.dtype=%s is not supported (lanes must be 1; bool, int8/16/32/64, uint8, float16, bfloat16, float32, float64)",
                fn, arg, describe_dtype(dbuf, sizeof dbuf, t->dtype));
  const int64_t itemsize = t->dtype.bits / 8;
  if (overflow) {
    numel = 1;  // report only if the tensor is not empty: a 0 extent makes any product 0
    for (int32_t i = 0; i < t->ndim; ++i)
      if (t->shape[i] == 0) numel = 0;
    if (numel != 0) {
      char sbuf[24 * CT_MAX_NDIM + 4];
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.shape=%s has more than 2^63-1 elements", fn, arg,
                  format_shape(sbuf, sizeof sbuf, t->ndim, t->shape));
    }
  }
  f->dt = dt;
  f->itemsize = itemsize;
  f->numel = numel;
  f->lo = f->hi = 0;
  if (numel == 0) return CT_OK;
  if (!t->data)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.data is NULL but %s has %" PRId64 " elements", fn, arg, arg, numel);
  // Byte span: lowest and highest element offsets, all in int64 without overflow.
  int64_t neg = 0, pos = 0;
  if (!t->strides) {  // compact: the span is the elements themselves
    if (__builtin_mul_overflow(numel - 1, itemsize, &pos))
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s has %" PRId64 " elements of %" PRId64 " bytes: more than 2^63 bytes",
                  fn, arg, numel, itemsize);
  }
  for (int32_t i = 0; t->strides && i < t->ndim; ++i) {
    int64_t s = ct_stride_of(t, i), ext;
    if (__builtin_mul_overflow(s, t->shape[i] - 1, &ext) || __builtin_mul_overflow(ext, itemsize, &ext) ||
        __builtin_add_overflow(ext < 0 ? neg : pos, ext, ext < 0 ? &neg : &pos))
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.strides[%d]=%" PRId64 " with shape[%d]=%" PRId64 " spans more than 2^63 bytes",
                  fn, arg, i, s, i, t->shape[i]);
  }
  const uintptr_t base = (uintptr_t)t->data;
  uintptr_t start, lo, hi;
  if (__builtin_add_overflow(base, t->byte_offset, &start) ||
      __builtin_sub_overflow(start, (uintptr_t)0 - (uintptr_t)neg, &lo) ||
      __builtin_add_overflow(start, (uintptr_t)pos + (uintptr_t)itemsize, &hi))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.data=%p with byte_offset=%" PRIu64 " and strides addresses memory outside the address space",
                fn, arg, t->data, t->byte_offset);
  if (start & (uintptr_t)(itemsize - 1))  // element sizes are powers of two
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.data + byte_offset (%p + %" PRIu64 ") is not aligned to its %" PRId64 "-byte elements",
                fn, arg, t->data, t->byte_offset, itemsize);
  f->lo = lo;
  f->hi = hi;
  return CT_OK;
}

CTStatus check_same_shape(const char* fn, const char* arg_a, const CTensor* a, const char* arg_b, const CTensor* b) {
  bool same = a->ndim == b->ndim;
  for (int32_t i = 0; same && i < a->ndim; ++i) same = a->shape[i] == b->shape[i];
  if (same) return CT_OK;
  char sa[24 * CT_MAX_NDIM + 4], sb[24 * CT_MAX_NDIM + 4];
  return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s differs from %s.shape=%s", fn, arg_b,
              format_shape(sb, sizeof sb, b->ndim, b->shape), arg_a, format_shape(sa, sizeof sa, a->ndim, a->shape));
}

CTStatus check_output_layout(const char* fn, const char* arg, const CTensor* out) {
  if (!out->strides) return CT_OK;  // compact
  for (int32_t i = 0; i < out->ndim; ++i)
    if (out->shape[i] == 0) return CT_OK;  // nothing is written: any strides will do
  int32_t dims[CT_MAX_NDIM], n = 0;
  for (int32_t i = 0; i < out->ndim; ++i) {
    if (out->shape[i] == 1) continue;
    if (out->strides[i] == 0)
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.strides[%d]=0 with shape[%d]=%" PRId64 ": an output cannot broadcast",
                  fn, arg, i, i, out->shape[i]);
    dims[n++] = i;
  }
  // Sufficient test for no self-overlap: sorted by |stride|, each stride
  // exceeds the span of all smaller ones.
  std::sort(dims, dims + n, [&](int32_t x, int32_t y) {
    return std::llabs(out->strides[x]) < std::llabs(out->strides[y]);
  });
  int64_t span = 0;
  for (int32_t k = 0; k < n; ++k) {
    const int32_t i = dims[k];
    const int64_t s = std::llabs(out->strides[i]);
    if (s <= span)
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.strides[%d]=%" PRId64 " makes elements of %s overlap each other",
                  fn, arg, i, out->strides[i], arg);
    span += s * (out->shape[i] - 1);
  }
  return CT_OK;
}

CTStatus check_overlap(const char* fn, const char* out_arg, const CTensor* out, const TensorFacts& of,
                       const char* in_arg, const CTensor* in, const TensorFacts& inf) {
  if (of.numel == 0 || inf.numel == 0) return CT_OK;
  if (of.hi <= inf.lo || inf.hi <= of.lo) return CT_OK;
  bool exact = (uintptr_t)out->data + out->byte_offset == (uintptr_t)in->data + in->byte_offset &&
               of.itemsize == inf.itemsize && out->ndim == in->ndim;
  for (int32_t i = 0; exact && i < out->ndim; ++i)
    exact = out->shape[i] == in->shape[i] && (out->shape[i] == 1 || ct_stride_of(out, i) == ct_stride_of(in, i));
  if (exact) return CT_OK;
  return fail(CT_ERR_INVALID_ARGUMENT,
              "%s: %s (bytes [%p, %p)) overlaps %s (bytes [%p, %p)) without being exactly %s; "
              "in-place needs the same data, byte_offset, element size, shape and strides",
              fn, out_arg, (void*)of.lo, (void*)of.hi, in_arg, (void*)inf.lo, (void*)inf.hi, in_arg);
}

}  // namespace ct
