// check_cases.h — the plan of `ctensor check` besides the references: where
// random inputs come from, how close results must be, and the NN ops' cases.
// The expected values themselves come from tests/reference (ctref).
#pragma once
#include <ctensor/ctensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ctcheck {

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

// How close ctensor's result must be to the reference for op `name` of kind
// `kind` (CT_KIND_*) with output dtype `dt`: |got - ref| <= atol + rtol *
// |ref| (floats); integers and bools must be equal. NaN matches NaN.
struct Tolerance {
  double rtol = 0, atol = 0;
};
Tolerance tolerance(const std::string& name, int kind, CTDataType dt);

// One call of an NN op: the descriptor and every tensor argument of ct_<op>.
struct NNCase {
  std::string label;                        // "conv2d 3x3 s2 p(1,0)/(0,2) g2 NHWC bias gelu"
  std::vector<unsigned char> desc;          // the descriptor bytes (struct_size set), e.g. a CTConv2dDesc
  std::vector<std::vector<int64_t>> shapes; // one per tensor argument of ct_<op>, in order; empty for an absent one
  std::vector<bool> absent;                 // true: pass NULL for this argument
  std::vector<std::vector<int64_t>> perm;   // per tensor: memory order as a permutation of the logical dims,
                                            // outermost first (empty = row-major); {0,2,3,1} = NHWC of (N,C,H,W)
  std::vector<int> dtype_kind;              // per tensor: 0 = the data dtype under test, 1 = float32
                                            // (stats, scale, shift, some bias/dbias), 2 = int64 (indices),
                                            // 3 = bool (a plugin op's condition)
  int num_inputs = 0;                       // the first num_inputs tensors are inputs, the rest outputs
};

// 3-6 small cases for NN op `op` (registry name); quick: the first 2.
// Empty for an op that is not an NN op.
std::vector<NNCase> nn_cases(const std::string& op, bool quick);

// Where random float inputs of NN op `op` should come from, by input index
// (the position among the ct_<op> tensor arguments): data in [-2, 2];
// batch_norm var in [0.25, 2]; invstd/rstd of the backward ops in [0.5, 2];
// means in [-1, 1]; scale in [-1.5, 1.5]; shift in [-1, 1].
Domain nn_domain(const std::string& op, int input);

}  // namespace ctcheck
