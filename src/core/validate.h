// validate.h — the checks every entry point runs before the first write.
#ifndef CTENSOR_SRC_CORE_VALIDATE_H_
#define CTENSOR_SRC_CORE_VALIDATE_H_

#include <cstdint>

#include "core/backend.h"

namespace ct {

// What validation learnt about one tensor.
struct TensorFacts {
  int32_t dt = -1;       // CT_DT_* index
  int64_t itemsize = 0;
  int64_t numel = 0;
  uintptr_t lo = 0, hi = 0;  // byte range [lo, hi) the tensor can touch (empty when numel == 0)
  // data + byte_offset is a multiple of itemsize (then so is every element's
  // address: strides are whole elements). Not required: the CPU backend
  // takes unaligned data (NumPy arrays at odd addresses); a backend that
  // cannot would refuse on this fact.
  bool aligned = true;
};

// Null pointers, ndim, extents, dtype, element count and byte span overflow,
// data pointer. Alignment is recorded, not checked. `arg` names the tensor
// in messages ("x", "out").
CTStatus check_tensor(const char* fn, const char* arg, const CTensor* t, TensorFacts* facts);

// Same ndim and extents, else CT_ERR_SHAPE_MISMATCH naming both shapes.
CTStatus check_same_shape(const char* fn, const char* arg_a, const CTensor* a, const char* arg_b,
                          const CTensor* b);

// The overlap tests below are exact (NumPy's solve_may_share_memory /
// solve_may_have_internal_overlap: a bounded Diophantine search) up to this
// many steps; past it they refuse, saying that overlap could not be ruled
// out within the bound. Documented in ctensor.h and notes/SEMANTICS.md.
constexpr int64_t kOverlapMaxWork = 20000;

// An output must not have zero strides on an extent > 1, nor two elements
// at one address.
CTStatus check_output_layout(const char* fn, const char* arg, const CTensor* out);

// out and in may share bytes only if out is exactly in (in-place).
CTStatus check_overlap(const char* fn, const char* out_arg, const CTensor* out, const TensorFacts& of,
                       const char* in_arg, const CTensor* in, const TensorFacts& inf);

// out and in share no byte at all; `rule` ends the message when they may.
CTStatus check_no_shared_bytes(const char* fn, const char* out_arg, const CTensor* out, const TensorFacts& of,
                               const char* in_arg, const CTensor* in, const TensorFacts& inf, const char* rule);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_VALIDATE_H_
