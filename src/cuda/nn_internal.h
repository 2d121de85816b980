// nn_internal.h — what the NN files of the CUDA module share: nn.cc (the
// NN slots: nn_why and the plans' dispatch by op; matmul through cuBLASLt)
// and nn_conv.cc (conv2d and its backward ops through cuDNN).
#ifndef CTENSOR_SRC_CUDA_NN_INTERNAL_H_
#define CTENSOR_SRC_CUDA_NN_INTERNAL_H_

#include <string>

#include "backend.h"

namespace ctcu {

// The head of every NN plan of the module: its op, by which
// cu_nn_plan_execute dispatches, and the virtual destructor
// cu_nn_plan_destroy deletes it through.
struct NNPlan {
  int32_t op = 0;
  virtual ~NNPlan() = default;
};

// One call of the module's elementwise kernels (cu_elementwise): op on x
// (and y, for a binary op) into out, every tensor with out's shape (a
// broadcast input as a view with stride 0), on the caller's stream; dense:
// the call is one contiguous run (CT_CALL_DENSE). (nn.cc)
CTStatus elementwise(const char* fn, int32_t op, const CTensor* x, int32_t xdt, const CTensor* y, int32_t ydt,
                     const CTensor* out, int32_t odt, void* stream, bool dense);

// activation_op (the unary op of a CTActivation) is src/gpu/plan.h's.

// ---- conv2d, conv2d_backward_data, conv2d_backward_weight (nn_conv.cc) ----------

inline bool is_conv(int32_t op) {
  return op == CT_OP_CONV2D || op == CT_OP_CONV2D_BACKWARD_DATA || op == CT_OP_CONV2D_BACKWARD_WEIGHT;
}
// nullptr when the module runs conv op `op` for dtype dt (cuDNN loads here,
// at the first such question), else why not (in *buf too when given).
const char* conv_why(int32_t op, int32_t dt, std::string* buf);
CTStatus conv_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives);
CTStatus conv_plan_execute(const NNPlan* plan, const CTNNCall* call, void* workspace, size_t workspace_bytes);
// Destroys the cuDNN handles (from nn_shutdown).
void conv_shutdown();

}  // namespace ctcu

#endif  // CTENSOR_SRC_CUDA_NN_INTERNAL_H_
