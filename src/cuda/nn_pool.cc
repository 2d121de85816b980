// nn_pool.cc — max_pool2d, avg_pool2d and their backward ops on CUDA: the
// OpenCL module's kernels (src/gpu/nn_kernels.cc: pool_fwd, pool_bwd,
// pool_ind_check) in the generator's CUDA dialect, with the host geometry
// both modules share (src/gpu/nn_geometry.cc: pool_call), float16, bfloat16
// and float32 (summed in float, each result rounded once). Any
// strides (NCHW, NHWC, views), one thread per output element; the backward
// ops gather in window order, without atomics, so every result is
// deterministic and has the OpenCL module's bits.
//
//  - The plan compiles (or finds) the program and its kernels at creation;
//    execution launches them on the call's stream with no workspace: it
//    never allocates, synchronises or compiles.
//  - max_pool2d_backward: an index outside its output's window (which the
//    CPU refuses after reading it) contributes nothing to dx. pool_ind_check
//    runs before pool_bwd and sets the device's error flag for it (below),
//    which the next ct_synchronize on the device reports (memory.cc), as on
//    OpenCL: the indices are in device memory, and reading them before the
//    call returns would synchronise.
#include <memory>
#include <mutex>
#include <vector>

#include "gpu/nn_kernels.h"
#include "nn_internal.h"

namespace ctcu {

const char* pool_norm_why(int32_t dt) {
  if (dt == CT_DT_FLOAT32 || dt == CT_DT_FLOAT16 || dt == CT_DT_BFLOAT16) return nullptr;
  return "pooling, batch_norm, layer_norm and attention on CUDA run float16, bfloat16 and float32";
}

CTStatus pool_norm_program(const CTNNCall* call, const char* body, const char* what, int32_t* device_id,
                           Program** prog) {
  const char* fn = call->fn;
  if (const char* why = pool_norm_why(call->dt)) return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: %s", fn, why);
  CallDevice cd(call->t[0]);
  if (CTStatus s = cd.check(fn)) return s;
  *device_id = cd.id;
  std::string label;
  const std::string src = nn_program(cd.d, call->dt, body, what, &label);
  return get_program(fn, cd.d, src, label, prog);
}

// ---- the error flags: one per device, made at the first plan that needs one -----

namespace {

struct Flag {
  int* host = nullptr;    // cudaHostAlloc's (mapped, page-locked)
  int* device = nullptr;  // the same int as kernels address it
};

std::mutex g_flag_mu;
std::vector<Flag>* g_flags = nullptr;  // by device id; freed by pool_shutdown (no static destructor)

}  // namespace

CTStatus error_flag(const char* fn, int32_t id, int** device_ptr) {
  std::lock_guard<std::mutex> lock(g_flag_mu);
  if (!g_flags) g_flags = new std::vector<Flag>((size_t)device_count());
  if (id < 0 || (size_t)id >= g_flags->size())
    return g_host->set_error(CT_ERR_NOT_FOUND, "%s: there is no CUDA device %d", fn, (int)id);
  Flag& f = (*g_flags)[(size_t)id];
  if (!f.host) {
    DeviceGuard guard(id);
    if (guard.error() != cudaSuccess) return cuda_fail(fn, "cudaSetDevice", guard.error());
    void* h = nullptr;
    cudaError_t e = cudaHostAlloc(&h, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return cuda_fail(fn, "cudaHostAlloc (the device's error flag)", e);
    }
    *static_cast<volatile int*>(h) = 0;
    void* dptr = nullptr;
    e = cudaHostGetDevicePointer(&dptr, h, 0);
    if (e != cudaSuccess) {
      cudaGetLastError();
      cudaFreeHost(h);
      return cuda_fail(fn, "cudaHostGetDevicePointer (the device's error flag)", e);
    }
    f.host = static_cast<int*>(h);
    f.device = static_cast<int*>(dptr);
  }
  *device_ptr = f.device;
  return CT_OK;
}

int take_error_flag(int32_t id) {
  int* h = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_flag_mu);
    if (!g_flags || id < 0 || (size_t)id >= g_flags->size()) return 0;
    h = (*g_flags)[(size_t)id].host;
  }
  if (!h) return 0;
  // Read and cleared in one exchange: a kernel of another stream may set it meanwhile.
  return __atomic_exchange_n(h, 0, __ATOMIC_SEQ_CST);
}

void pool_shutdown() {
  std::lock_guard<std::mutex> lock(g_flag_mu);
  if (!g_flags) return;
  for (Flag& f : *g_flags)
    if (f.host) cudaFreeHost(f.host);
  delete g_flags;
  g_flags = nullptr;
}

// ---- the plan -------------------------------------------------------------------

namespace {

struct PoolPlan : NNPlan {
  int32_t device_id = 0;
  cudaKernel_t main = nullptr;   // pool_fwd or pool_bwd
  cudaKernel_t check = nullptr;  // pool_ind_check (max_pool2d_backward)
  int* flag = nullptr;           // the device's error flag, as kernels address it (max_pool2d_backward)
};

}  // namespace

CTStatus pool_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives) {
  const char* fn = call->fn;
  auto p = std::make_unique<PoolPlan>();
  p->op = call->op;
  Program* prog = nullptr;
  if (CTStatus s = pool_norm_program(call, pool_kernels(), "pool2d", &p->device_id, &prog)) return s;
  PoolCall pc;
  pool_call(call, &pc);
  if (CTStatus s = prog->kernel(fn, pc.kernel, &p->main)) return s;
  if (call->op == CT_OP_MAX_POOL2D_BACKWARD) {
    if (CTStatus s = prog->kernel(fn, "pool_ind_check", &p->check)) return s;
    if (CTStatus s = error_flag(fn, p->device_id, &p->flag)) return s;
  }
  *workspace_bytes = 0;
  *primitives = 1;
  *plan = static_cast<NNPlan*>(p.release());
  return CT_OK;
}

CTStatus pool_plan_execute(const NNPlan* plan, const CTNNCall* call) {
  const PoolPlan& P = *static_cast<const PoolPlan*>(plan);
  const char* fn = call->fn;
  PoolCall pc;
  pool_call(call, &pc);
  if (pc.items == 0) return CT_OK;
  DeviceGuard guard(P.device_id);
  if (guard.error() != cudaSuccess) return cuda_fail(fn, "cudaSetDevice", guard.error());
  const cudaStream_t stream = stream_of(call->stream);
  PGeo g = pc.g;
  void* xm = pc.x->data;
  void* ym = pc.y->data;
  void* im = pc.ind ? pc.ind->data : pc.y->data;  // absent: any buffer, at offset 0 (not read)
  unsigned long long xo = pc.x->byte_offset, yo = pc.y->byte_offset, io = pc.ind ? pc.ind->byte_offset : 0;
  int is_max = pc.is_max;
  if (pc.check_items > 0) {  // the indices, checked on the device first
    int* flag = P.flag;
    int code = kFlagPoolIndex;
    void* args[] = {&im, &io, &g, &flag, &code};
    if (CTStatus s = launch(fn, stream, P.check, pc.check_items, args, "pool_ind_check")) return s;
  }
  if (pc.fwd) {
    void* args[] = {&ym, &yo, &im, &io, &xm, &xo, &is_max, &g};
    return launch(fn, stream, P.main, pc.items, args, pc.kernel);
  }
  void* args[] = {&xm, &xo, &ym, &yo, &im, &io, &is_max, &g};
  return launch(fn, stream, P.main, pc.items, args, pc.kernel);
}

}  // namespace ctcu
