// Private to the reference implementations (tools/reference*.cc): the seam
// between the elementwise/broadcast/reduce references (reference.cc) and the
// NN ones (reference_nn.cc).
#pragma once
#include <string>
#include <vector>

#include "reference.h"

namespace ctref {

// Reference for an op of kind CT_KIND_NN (matmul, conv2d, pooling, norms):
// the same contract as run() (outputs[k] null for an output not requested;
// reset() to its dtype and shape is done by the callee). Implemented in
// reference_nn.cc.
bool run_nn(const Call& c, const std::vector<Array*>& outputs, std::string* why);

// ---- NN cases for `ctensor check` (implemented in reference_nn.cc) --------

// One call of an NN op: the descriptor and every tensor argument of ct_<op>.
struct NNCase {
  std::string label;                        // "conv2d 3x3 s2 p(1,0)/(0,2) g2 NHWC bias gelu"
  std::vector<unsigned char> desc;          // the descriptor bytes (struct_size set), e.g. a CTConv2dDesc
  std::vector<std::vector<int64_t>> shapes; // one per tensor argument of ct_<op>, in order; empty for an absent one
  std::vector<bool> absent;                 // true: pass NULL for this argument
  std::vector<std::vector<int64_t>> perm;   // per tensor: memory order as a permutation of the logical dims,
                                            // outermost first (empty = row-major); {0,2,3,1} = NHWC of (N,C,H,W)
  std::vector<int> dtype_kind;              // per tensor: 0 = the data dtype under test, 1 = float32
                                            // (stats, scale, shift, some bias/dbias), 2 = int64 (indices)
  int num_inputs = 0;                       // the first num_inputs tensors are inputs, the rest outputs
};

// 3-6 small cases for NN op `op` (registry name); quick: the first 2.
// Empty for an op that is not an NN op.
std::vector<NNCase> nn_cases(const std::string& op, bool quick);

// For max_pool2d_backward cases (tensors dy, indices, dx): fill `idx` with
// one valid position h * W + w per element of indices, in the logical
// row-major order of indices (N, C, P, Q): a random tap of that output's
// window that lies inside x (deterministic in seed). False when the case is
// not a pooling backward geometry or a window has no tap inside x.
bool fill_pool_indices(const NNCase& c, std::vector<int64_t>& idx, uint64_t seed);

// Where random float inputs of NN op `op` should come from, by input index
// (the position among the ct_<op> tensor arguments): data in [-2, 2];
// batch_norm var in [0.25, 2]; invstd/rstd of the backward ops in [0.5, 2];
// means in [-1, 1]; scale in [-1.5, 1.5]; shift in [-1, 1].
Domain nn_domain(const std::string& op, int input);

}  // namespace ctref
