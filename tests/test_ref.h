// test_ref.h — the Catch2 suites' bridge to the one reference library
// (tests/reference, ctref): HostTensor values in, ctref::Array results out.
// An op without a reference, or a reference that refuses the call, fails the
// test case: a missing reference is never a pass.
#ifndef CTENSOR_TESTS_TEST_REF_H_
#define CTENSOR_TESTS_TEST_REF_H_

#include <catch2/catch.hpp>
#include <reference.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace ctt {

// The logical values of t (any layout) in the reference domain; bool 0 / 1.
inline ctref::Array ref_in(const HostTensor& t) {
  ctref::Array a(dtype(t.d).dt, t.shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (a.is_float()) a.f[(size_t)i] = t.get(i);
    else a.i[(size_t)i] = t.d == DT_BOOL ? (int64_t)(t.get_i(i) != 0) : t.get_i(i);
  }
  return a;
}

// The same array with every value replaced by its magnitude (the reference
// of an op on |inputs| bounds the rounding error of any summation order).
inline ctref::Array ref_abs(ctref::Array a) {
  for (double& v : a.f) v = std::fabs(v);
  for (int64_t& v : a.i) v = v < 0 ? -v : v;
  return a;
}

// An output of the call: dtype index d and shape; d < 0: not requested.
struct RefOut {
  int d;
  std::vector<int64_t> shape;
};

// Runs the reference of c.op on `ins` (nullptr: an absent optional input)
// into outputs shaped as `outs`, and returns them; a failure fails the test.
// reference_of takes reference arrays, reference the suites' HostTensors.
inline std::vector<ctref::Array> reference_of(ctref::Call c, const std::vector<const ctref::Array*>& ins,
                                              const std::vector<RefOut>& outs) {
  c.inputs = ins;
  std::vector<ctref::Array> out(outs.size());
  std::vector<ctref::Array*> ptrs;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (outs[k].d >= 0) out[k].reset(dtype(outs[k].d).dt, outs[k].shape);
    ptrs.push_back(outs[k].d >= 0 ? &out[k] : nullptr);
  }
  std::string why;
  if (!ctref::run(c, ptrs, &why))
    FAIL("the reference of op '" << ctref::op_name(c.op) << "' (id " << c.op << "): " << why);
  return out;
}

inline std::vector<ctref::Array> reference(const ctref::Call& c, const std::vector<const HostTensor*>& ins,
                                           const std::vector<RefOut>& outs) {
  std::vector<ctref::Array> arrays(ins.size());
  std::vector<const ctref::Array*> ptrs;
  for (size_t k = 0; k < ins.size(); ++k) {
    if (ins[k]) arrays[k] = ref_in(*ins[k]);
    ptrs.push_back(ins[k] ? &arrays[k] : nullptr);
  }
  return reference_of(c, ptrs, outs);
}

// A call of op with a descriptor (NN ops) or nothing else set.
inline ctref::Call ref_call(int32_t op, const void* desc = nullptr) {
  ctref::Call c;
  c.op = op;
  c.desc = desc;
  return c;
}

}  // namespace ctt

#endif  // CTENSOR_TESTS_TEST_REF_H_
