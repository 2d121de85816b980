// Plain double-precision reference implementations of every ctensor op, for
// `ctensor check`. Nothing here calls ctensor: the references use libm and
// loops only, so they are an independent opinion of what each op computes
// (notes/SEMANTICS.md is the contract).
#pragma once
#include <ctensor/ctensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ctref {

// A dense row-major host array in the reference domain: values of float
// dtypes (float16/32/64, bfloat16) as double in `f`; integer, uint8 and bool
// values as exact int64 in `i` (bool: 0 or 1). Only one of f/i is used.
struct Array {
  CTDataType dtype{};
  std::vector<int64_t> shape;
  std::vector<double> f;
  std::vector<int64_t> i;

  int64_t numel() const;
  bool is_float() const { return dtype.code == CT_FLOAT || dtype.code == CT_BFLOAT; }
  // Allocate f or i for `shape` and `dtype` (zero-filled).
  void reset(CTDataType dt, const std::vector<int64_t>& shp);
  double get(int64_t k) const { return is_float() ? f[k] : (double)i[k]; }
};

// One op call. Fields are used by the op's kind:
//   unary / unary_param / ternary / cast / binary: inputs, params
//   reduce: inputs[0], axes (empty + all_axes = every axis), keepdims, params
//   along_axis: inputs[0], axis
//   nn: desc (CTMatmulDesc*, CTConv2dDesc*, CTPool2dDesc*, CTBatchNormDesc*,
//       CTLayerNormDesc*) and inputs = every tensor argument of ct_<op> that is
//       an input, in the entry point's order (nullptr for an absent optional).
struct Call {
  int32_t op = -1;                    // registry id (CT_OP_*)
  std::string name;                   // registry name ("exp")
  std::vector<const Array*> inputs;
  std::vector<double> params;
  std::vector<int32_t> axes;
  bool all_axes = false;
  bool keepdims = false;
  int32_t axis = 0;
  const void* desc = nullptr;
};

// Compute the reference outputs. `outputs` holds one Array per output of the
// entry point (for NN ops: the tensor arguments after the inputs, in order;
// nullptr for an output the call does not request), each with dtype and shape
// already set by the caller (reset() to the right size is done here). Results
// of integer/bool dtypes are exact (wrapped to the output dtype as ctensor
// wraps); float results are the exact (double) value, not rounded to the
// output dtype. Returns false and sets *why when the op has no reference.
bool run(const Call& c, const std::vector<Array*>& outputs, std::string* why);

// Where random float inputs for op `name` should come from, so that the op is
// well defined and well conditioned there (log: (0.1, 10), ...); for integer
// dtypes the range is [ilo, ihi] clipped to the dtype. `input` is the input
// index (pow's exponent, shift counts and divisors get their own ranges).
struct Domain {
  double lo = -4, hi = 4;
  int64_t ilo = -20, ihi = 20;
  bool nonzero = false;  // avoid 0 (divisors)
};
Domain domain(const std::string& name, int input, CTDataType dt);

// How close ctensor's result must be to the reference for op `name` with
// output dtype `dt`: |got - ref| <= atol + rtol * |ref| (floats); integers
// and bools must be equal. NaN matches NaN.
struct Tolerance {
  double rtol = 0, atol = 0;
};
Tolerance tolerance(const std::string& name, CTDataType dt);

}  // namespace ctref
