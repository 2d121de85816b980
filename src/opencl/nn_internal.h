// nn_internal.h — what the OpenCL NN plans share (nn.cc: matmul and the
// dispatch; nn_conv.cc: conv2d and its backward ops; nn_pool.cc, nn_norm.cc,
// nn_attention.cc: pooling, norms and attention through the kernels shared
// with CUDA, src/gpu/nn_kernels.h).
#ifndef CTENSOR_SRC_OPENCL_NN_INTERNAL_H_
#define CTENSOR_SRC_OPENCL_NN_INTERNAL_H_

#ifdef CT_HAVE_CLBLAST
#include <clblast.h>

#include "backend.h"
#include "gpu/nn_geometry.h"

namespace ctcl {

// Every plan starts with its op.
struct NNPlan {
  int32_t op = 0;
  int32_t device_id = 0;
  virtual ~NNPlan() = default;
};

CTStatus blast_fail(const char* fn, const char* what, clblast::StatusCode s);
// A compact row-major tensor like `like` over the workspace at byte offset off.
inline CTensor ws_tensor(const CTensor* like, void* ws, size_t off) { return compact_view(like, ws, off, like->device); }
// out = op(a) or op(a, b) through the module's own elementwise kernels (float32).
CTStatus elementwise_on(const char* fn, int32_t op, const CTensor* a, const CTensor* b, const CTensor* out,
                        void* stream);
size_t align_up(size_t v);
// out = act(out + bias_view) (bias_view: the bias as a view of out's shape, or NULL),
// by the module's add and activation kernels.
CTStatus bias_and_activation(const char* fn, const CTensor* out, const CTensor* bias_view, int32_t act, void* stream);
// Zeros into t (any layout).
CTStatus zero_fill(const char* fn, Device* d, const Queue& q, const CTensor* t, void* stream);

CTStatus conv_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives);
CTStatus conv_plan_execute(const NNPlan* plan, const CTNNCall* call, void* workspace);
// The start of a pooling, norm or attention execution: the plan's device,
// the call's queue, and the program of the shared NN kernels `body`
// (src/gpu/nn_kernels.h; label "<what> <dtype>") for the call's dtype,
// compiled or found.
CTStatus shared_kernels(const NNPlan* plan, const CTNNCall* call, const char* body, const char* what, Device** d,
                        Queue* q, Program** prog);
CTStatus pool_plan_execute(const NNPlan* plan, const CTNNCall* call);
CTStatus norm_plan_execute(const NNPlan* plan, const CTNNCall* call);
CTStatus attention_plan_execute(const NNPlan* plan, const CTNNCall* call);
// (is_pool, is_norm and is_attention: src/gpu/nn_geometry.h, with the shared host side of their kernels)

}  // namespace ctcl

#endif
#endif  // CTENSOR_SRC_OPENCL_NN_INTERNAL_H_
