// nn_internal.h — what the NN files of the CUDA module share: nn.cc (the
// NN slots: nn_why and the plans' dispatch by op; matmul through cuBLASLt),
// nn_conv.cc (conv2d and its backward ops through cuDNN), nn_pool.cc and
// nn_norm.cc (pooling and norms through the kernels the OpenCL module runs,
// src/gpu/nn_kernels.h), and memory.cc (ct_synchronize reads the error flag).
#ifndef CTENSOR_SRC_CUDA_NN_INTERNAL_H_
#define CTENSOR_SRC_CUDA_NN_INTERNAL_H_

#include <string>

#include "backend.h"
#include "gpu/nn_geometry.h"

namespace ctcu {

// The head of every NN plan of the module: its op, by which
// cu_nn_plan_execute dispatches, and the virtual destructor
// cu_nn_plan_destroy deletes it through.
struct NNPlan {
  int32_t op = 0;
  virtual ~NNPlan() = default;
};

// nn_why's answer for an op a library loaded at first use runs (cuBLASLt,
// cuDNN): nullptr when it loaded, else "<what> cannot be used: <why>" (kept
// per thread; copied into *buf when buf is not null).
inline const char* unusable(bool loaded, const char* what, const std::string& why, std::string* buf) {
  if (loaded) return nullptr;
  static thread_local std::string msg;
  msg = std::string(what) + " cannot be used: " + why;
  if (buf) *buf = msg;
  return msg.c_str();
}

// The pieces of an NN plan's workspace start at multiples of this: a plan
// asks for up to kWsAlign - 1 bytes more than its pieces, so that any
// workspace pointer the caller passes serves.
constexpr size_t kWsAlign = 256;
inline size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// The start of an NN plan's execution: the plan's device made current for
// the scope, and the workspace's aligned base (nullptr without one). check()
// refuses a workspace smaller than the plan asked for, naming `what` and the
// sizes, and a device that is gone.
struct PlanRun : CallDevice {
  char* ws;
  PlanRun(int32_t device_id, void* workspace)
      : CallDevice(device_id),
        ws(workspace ? reinterpret_cast<char*>(align_up(reinterpret_cast<uintptr_t>(workspace), kWsAlign)) : nullptr) {}
  CTStatus check(const char* fn, const char* what, size_t need, const void* workspace, size_t bytes) const {
    if (bytes < need || (need && !workspace))
      return g_host->set_error(CT_ERR_WORKSPACE_TOO_SMALL,
                               "%s: %s on cuda:%d needs a workspace of %zu bytes, got %zu bytes at %p", fn, what,
                               (int)id, need, workspace ? bytes : (size_t)0, workspace);
    return CallDevice::check(fn);
  }
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

// ---- pooling (nn_pool.cc) and norms (nn_norm.cc) --------------------------------
// The OpenCL module's kernels (src/gpu/nn_kernels.cc) in the CUDA dialect,
// with the host geometry both modules share (src/gpu/nn_geometry.h: is_pool,
// is_norm, pool_call, norm_call).

// nullptr when the module runs pooling, norms and attention for data dtype dt, else why not.
const char* pool_norm_why(int32_t dt);
// The start of a pooling or norm plan: the dtype refused as pool_norm_why
// says, the call's device (*device_id), and the program of the shared NN
// kernels `body` (pool_kernels() or norm_kernels(); label "<what> <dtype>")
// for the call's dtype, compiled or found.
CTStatus pool_norm_program(const CTNNCall* call, const char* body, const char* what, int32_t* device_id,
                           Program** prog);
CTStatus pool_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives);
CTStatus pool_plan_execute(const NNPlan* plan, const CTNNCall* call);
CTStatus norm_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives);
CTStatus norm_plan_execute(const NNPlan* plan, const CTNNCall* call, void* workspace, size_t workspace_bytes);
// scaled_dot_product_attention (nn_attention.cc): the shared attn_fwd kernel.
CTStatus attention_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives);
CTStatus attention_plan_execute(const NNPlan* plan, const CTNNCall* call);

// The device's sticky error flag (nn_pool.cc): one int, 0 while no kernel has
// found bad input it could not report when its op returned (the indices of
// max_pool2d_backward live in device memory: checking them before returning
// would synchronise). Mapped, page-locked host memory (cudaHostAlloc with
// cudaHostAllocMapped): kernels write it through *device_ptr, and
// ct_synchronize reads and clears it on the host after the stream has
// finished (take_error_flag), with no copy and no device call, as OpenCL's
// cl_synchronize does. Made at the first max_pool2d_backward plan of the
// device (plan creation may allocate; execution never does), freed by
// pool_shutdown.
constexpr int kFlagPoolIndex = 1;  // max_pool2d_backward: an index outside its window
CTStatus error_flag(const char* fn, int32_t device_id, int** device_ptr);
// The flag's value of device id, cleared (0: none, or no flag yet).
int take_error_flag(int32_t device_id);
// Frees the error flags (from nn_shutdown).
void pool_shutdown();

}  // namespace ctcu

#endif  // CTENSOR_SRC_CUDA_NN_INTERNAL_H_
