// backend.h — the CUDA backend's slots, shared between its files.
#ifndef CTENSOR_SRC_CUDA_BACKEND_H_
#define CTENSOR_SRC_CUDA_BACKEND_H_

#include <string>

#include "runtime.h"

namespace ctcu {

// Kernel slots (kernels.cc).
CTStatus cu_supports(const CTSupportQuery* q);
CTStatus cu_elementwise(const CTElementwiseCall* call);
CTStatus cu_reduce(const CTReduceCall* call);
CTStatus cu_along_axis(const CTAlongAxisCall* call);
CTStatus cu_index(const CTIndexCall* call);

// Device slots (memory.cc).
CTStatus cu_malloc(int32_t id, size_t bytes, void** ptr);
void cu_free(int32_t id, void* ptr);
CTStatus cu_copy(const CTCopyCall* call);
CTStatus cu_synchronize(int32_t id, void* stream);
CTStatus cu_check_stream(const char* fn, int32_t id, void* stream);
CTStatus cu_temp_alloc(void* user, CTDevice device, size_t bytes, void* stream, void** ptr);
void cu_temp_free(void* user, CTDevice device, void* ptr, void* stream);

// NN ops (nn.cc): which ones run here, and their plans.
const char* nn_why(int32_t op, int32_t dt, std::string* buf);
CTStatus cu_nn_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives);
CTStatus cu_nn_plan_execute(void* plan, const CTNNCall* call, void* workspace, size_t workspace_bytes);
void cu_nn_plan_destroy(void* plan);
// Destroys the cuBLASLt and cuDNN handles (nn.cc); for ct_plugin_fini, before shutdown().
void nn_shutdown();

// A strided copy within one device (the cast kernel with equal dtypes):
// dst = src, both on device d (current), same shape (kernels.cc).
CTStatus device_copy(const char* fn, Device* d, cudaStream_t s, int32_t dt, const CTensor* src, const CTensor* dst);

// Drops the index of programs by signature (before runtime.cc's shutdown frees them).
void forget_programs();

// Launches k over n threads (blocks of 256) on stream s of the current
// device; args as cudaLaunchKernel takes them.
CTStatus launch(const char* fn, cudaStream_t s, cudaKernel_t k, int64_t n, void** args, const std::string& name);
// `blocks` blocks of `block` threads (kernels that use their block: the "_b" along-axis ones).
CTStatus launch_blocks(const char* fn, cudaStream_t s, cudaKernel_t k, int64_t blocks, int block, void** args,
                       const std::string& name);

// The device of a call (of tensor t), made current for the call's scope.
struct CallDevice {
  int32_t id;
  Device* d;
  DeviceGuard guard;
  explicit CallDevice(int32_t device_id) : id(device_id), d(device(id)), guard(id) {}
  explicit CallDevice(const CTensor* t) : CallDevice(t->device.device_id) {}
  CTStatus check(const char* fn) const {
    if (!d) return g_host->set_error(CT_ERR_NOT_FOUND, "%s: there is no CUDA device %d", fn, (int)id);
    if (guard.error() != cudaSuccess) return cuda_fail(fn, "cudaSetDevice", guard.error());
    return CT_OK;
  }
};

inline cudaStream_t stream_of(void* s) { return static_cast<cudaStream_t>(s); }
// A compact row-major tensor with like's shape and dtype over `data` at byte offset off.
inline CTensor compact_view(const CTensor* like, void* data, uint64_t off, CTDevice dev) {
  CTensor c = *like;
  c.data = data;
  c.device = dev;
  c.strides = nullptr;
  c.byte_offset = off;
  return c;
}

}  // namespace ctcu

#endif  // CTENSOR_SRC_CUDA_BACKEND_H_
