// validate.h — the checks every entry point runs before the first write.
#ifndef CTENSOR_SRC_CORE_VALIDATE_H_
#define CTENSOR_SRC_CORE_VALIDATE_H_

#include <cstdint>

#include <ctensor/ctensor.h>

namespace ct {

// Stride of dim i in elements; NULL strides mean compact row-major.
inline int64_t ct_stride_of(const CTensor* t, int32_t i) {
  int64_t s = 1;
  if (t->strides) return t->strides[i];
  for (int32_t j = t->ndim - 1; j > i; --j) s *= t->shape[j];
  return s;
}

// The data address the shape-only checks (workspace and shape queries) give
// a tensor: mid-range, so that any span the strides describe, negative ones
// included, fits around it.
constexpr uintptr_t kStandInData = uintptr_t(1) << 62;

// What validation learnt about one tensor.
struct TensorFacts {
  int32_t dt = -1;       // CT_DT_* index
  int64_t itemsize = 0;
  int64_t numel = 0;
  // Byte range [lo, hi) the tensor can touch (empty when numel == 0): an
  // address range where the device's data is an address, else a range of
  // offsets within the buffer `handle` (an OpenCL cl_mem).
  uintptr_t lo = 0, hi = 0;
  uintptr_t handle = 0;  // 0 where data is an address
};

// True when a and b may share bytes: both non-empty, in the same buffer,
// with intersecting byte ranges.
inline bool ranges_meet(const TensorFacts& a, const TensorFacts& b) {
  return a.numel != 0 && b.numel != 0 && a.handle == b.handle && a.lo < b.hi && b.lo < a.hi;
}

// Null pointers, ndim, extents, dtype, element count and byte span overflow,
// data pointer and alignment. `arg` names the tensor in messages ("x", "out").
CTStatus check_tensor(const char* fn, const char* arg, const CTensor* t, TensorFacts* facts);

// Same ndim and extents, else CT_ERR_SHAPE_MISMATCH naming both shapes.
CTStatus check_same_shape(const char* fn, const char* arg_a, const CTensor* a, const char* arg_b,
                          const CTensor* b);

// An output must not have zero strides on an extent > 1, nor overlap itself.
CTStatus check_output_layout(const char* fn, const char* arg, const CTensor* out);

// out and in may share bytes only if out is exactly in (in-place).
CTStatus check_overlap(const char* fn, const char* out_arg, const CTensor* out, const TensorFacts& of,
                       const char* in_arg, const CTensor* in, const TensorFacts& inf);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_VALIDATE_H_
