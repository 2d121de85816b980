// nn_norm.cc — batch_norm (inference, training, backward) and layer_norm
// (forward, backward) on CUDA: the OpenCL module's kernels
// (src/gpu/nn_kernels.cc: bn_stats, bn_apply, bn_bwd_stats, bn_bwd_dx,
// ln_fwd, ln_bwd_dx, ln_bwd_params) in the generator's CUDA dialect, with the
// host side both modules share (src/gpu/nn_geometry.cc: norm_call says which
// kernels run over how many threads with which tensors). float16, bfloat16
// or float32 data (read as float, each result rounded once), float32
// statistics and parameters; statistics accumulate in double (every CUDA
// device has it), one thread per channel (batch norm) or row (layer norm)
// in element order, the parameter gradients of layer_norm one thread per
// column over the rows in order: deterministic, as on OpenCL.
//
//  - Data tensors take any strides. A per-channel, per-row or per-column
//    tensor is used in place when it is 1-d or compact; otherwise the
//    kernels use a compact copy in the workspace (inputs copied in by the
//    module's copy kernel before them, outputs copied out after them).
//    batch_norm_backward without dscale or dshift keeps those sums (which
//    dx needs) in the workspace too.
//  - workspace_bytes: those pieces, from the workspace rounded up to 256
//    bytes (hence up to 255 bytes of slack); 0 when none is needed.
//  - The plan compiles (or finds) the program and its kernels at creation;
//    execution launches them on the call's stream and uses the caller's
//    workspace only: it never allocates or synchronises.
#include <cstdint>
#include <memory>

#include "gpu/nn_kernels.h"
#include "nn_internal.h"

namespace ctcu {

namespace {

struct NormPlan : NNPlan {
  int32_t device_id = 0;
  cudaKernel_t k[2] = {nullptr, nullptr};  // norm_call's launches
  size_t slot_off[8] = {0};                // the compact copies of the vector slots (NormSlot::copy)
  size_t scratch_off = 0;                  // the scratch sums (NormCall::scratch_floats)
  size_t ws_bytes = 0;
};

}  // namespace

CTStatus norm_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives) {
  const char* fn = call->fn;
  auto p = std::make_unique<NormPlan>();
  p->op = call->op;
  Program* prog = nullptr;
  if (CTStatus s = pool_norm_program(call, norm_kernels(), "norms", &p->device_id, &prog)) return s;
  NormCall nc;
  norm_call(call, &nc);
  for (int i = 0; i < nc.nlaunch; ++i)
    if (CTStatus s = prog->kernel(fn, nc.launch[i].name, &p->k[i])) return s;
  size_t off = 0;
  for (int k = 0; k < 8; ++k) {
    const NormSlot& s = nc.slot[k];
    if (!s.used || !s.copy) continue;
    p->slot_off[k] = off;
    off = align_up(off + (size_t)numel_of(s.t) * sizeof(float), kWsAlign);
  }
  if (nc.scratch_floats > 0) {
    p->scratch_off = off;
    off = align_up(off + (size_t)nc.scratch_floats * sizeof(float), kWsAlign);
  }
  p->ws_bytes = off ? off + (kWsAlign - 1) : 0;
  *workspace_bytes = p->ws_bytes;
  *primitives = 1;
  *plan = static_cast<NNPlan*>(p.release());
  return CT_OK;
}

CTStatus norm_plan_execute(const NNPlan* plan, const CTNNCall* call, void* workspace, size_t workspace_bytes) {
  const NormPlan& P = *static_cast<const NormPlan*>(plan);
  const char* fn = call->fn;
  const PlanRun run(P.device_id, workspace);
  if (CTStatus s = run.check(fn, op_name(P.op).c_str(), P.ws_bytes, workspace, workspace_bytes)) return s;
  Device* d = run.d;
  const cudaStream_t stream = stream_of(call->stream);
  char* ws = run.ws;
  NormCall nc;
  norm_call(call, &nc);  // the plan's shapes and strides: the same slots, copies and launches
  const CTensor* x = call->t[0];

  // The vector slots: (address, byte offset) as the kernels take them.
  void* ptr[8];
  unsigned long long off[8];
  CTensor copy[8];
  for (int k = 0; k < 8; ++k) {
    const NormSlot& s = nc.slot[k];
    ptr[k] = x->data;  // absent: any buffer (not touched)
    off[k] = 0;
    if (!s.used) continue;
    if (s.scratch >= 0) {
      ptr[k] = ws;
      off[k] = P.scratch_off + (size_t)s.scratch * (size_t)nc.g.C * sizeof(float);
    } else if (s.t && s.copy) {
      copy[k] = compact_view(s.t, ws, P.slot_off[k], s.t->device);
      ptr[k] = ws;
      off[k] = P.slot_off[k];
      if (!s.out)
        if (CTStatus e = device_copy(fn, d, stream, CT_DT_FLOAT32, s.t, &copy[k])) return e;
    } else if (s.t) {
      ptr[k] = s.t->data;
      off[k] = s.t->byte_offset;
    }
  }
  // The kernels, in order on the stream (a later one reads what an earlier one wrote).
  for (int i = 0; i < nc.nlaunch; ++i) {
    const NormLaunch& l = nc.launch[i];
    if (l.items <= 0) continue;
    NG g = nc.g;
    g.flags = l.flags;
    void* dptr[3];
    unsigned long long doff[3];
    void* args[3 * 2 + 5 * 2 + 1];
    int a = 0;
    for (int j = 0; j < l.ndata; ++j) {
      const CTensor* t = call->t[l.data[j]];
      dptr[j] = t->data;
      doff[j] = t->byte_offset;
      args[a++] = &dptr[j];
      args[a++] = &doff[j];
    }
    for (int j = 0; j < l.nslots; ++j) {
      args[a++] = &ptr[l.slots[j]];
      args[a++] = &off[l.slots[j]];
    }
    args[a++] = &g;
    if (CTStatus e = launch(fn, stream, P.k[i], l.items, args, l.name)) return e;
  }
  // Outputs computed in compact copies go to their tensors.
  for (int k = 0; k < 8; ++k) {
    const NormSlot& s = nc.slot[k];
    if (s.used && s.t && s.copy && s.out)
      if (CTStatus e = device_copy(fn, d, stream, CT_DT_FLOAT32, &copy[k], s.t)) return e;
  }
  return CT_OK;
}

}  // namespace ctcu
