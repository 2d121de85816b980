// nn_attention.cc — scaled_dot_product_attention on CUDA: the OpenCL
// module's kernel (src/gpu/nn_kernels.cc attn_fwd) in the generator's CUDA
// dialect, with the host geometry both modules share (src/gpu/nn_geometry.cc
// attention_call). float16, bfloat16 or float32 data, a bool, data-dtype or
// float32 mask; one thread per (batch entry, query row, block of 32 output
// columns), the keys in order: deterministic, no workspace, any strides,
// batch dims broadcast. The plan compiles (or finds) the program at
// creation; execution launches on the call's stream and never allocates or
// synchronises. (A tiled kernel and cuDNN's fused attention are the fast
// paths still to come; this one is the correct baseline every device runs.)
#include <memory>

#include "gpu/nn_kernels.h"
#include "nn_internal.h"

namespace ctcu {

namespace {

struct AttnPlan : NNPlan {
  int32_t device_id = 0;
  cudaKernel_t k = nullptr;
};

}  // namespace

CTStatus attention_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives) {
  auto p = std::make_unique<AttnPlan>();
  p->op = call->op;
  Program* prog = nullptr;
  if (CTStatus s = pool_norm_program(call, attention_kernels(), "attention", &p->device_id, &prog)) return s;
  if (CTStatus s = prog->kernel(call->fn, "attn_fwd", &p->k)) return s;
  *workspace_bytes = 0;
  *primitives = 1;
  *plan = static_cast<NNPlan*>(p.release());
  return CT_OK;
}

CTStatus attention_plan_execute(const NNPlan* plan, const CTNNCall* call) {
  const AttnPlan& P = *static_cast<const AttnPlan*>(plan);
  const char* fn = call->fn;
  AttnCall ac;
  attention_call(call, &ac);
  if (ac.items == 0) return CT_OK;
  DeviceGuard guard(P.device_id);
  if (guard.error() != cudaSuccess) return cuda_fail(fn, "cudaSetDevice", guard.error());
  const CTensor* ts[5] = {ac.out, ac.q, ac.k, ac.v, ac.mask};
  void* ptr[5];
  unsigned long long off[5];
  void* args[11];
  for (int i = 0; i < 5; ++i) {
    ptr[i] = ts[i] ? ts[i]->data : ac.q->data;  // an absent mask: q's buffer at offset 0 (not read)
    off[i] = ts[i] ? ts[i]->byte_offset : 0;
    args[2 * i] = &ptr[i];
    args[2 * i + 1] = &off[i];
  }
  AttnGeo g = ac.g;
  args[10] = &g;
  return launch(fn, stream_of(call->stream), P.k, ac.items, args, "attn_fwd");
}

}  // namespace ctcu
