// backend.h — the OpenCL backend's slots, shared between its files.
#ifndef CTENSOR_SRC_OPENCL_BACKEND_H_
#define CTENSOR_SRC_OPENCL_BACKEND_H_

#include <string>

#include "gpu/plan.h"
#include "gpu/program_index.h"
#include "runtime.h"

namespace ctcl {

// Kernel slots (kernels.cc).
CTStatus cl_supports(const CTSupportQuery* q);
CTStatus cl_elementwise(const CTElementwiseCall* call);
CTStatus cl_reduce(const CTReduceCall* call);
CTStatus cl_along_axis(const CTAlongAxisCall* call);
CTStatus cl_index(const CTIndexCall* call);

// Device slots (copy.cc).
CTStatus cl_malloc(int32_t id, size_t bytes, void** ptr);
void cl_free(int32_t id, void* ptr);
CTStatus cl_copy(const CTCopyCall* call);
CTStatus cl_synchronize(int32_t id, void* stream);
CTStatus cl_check_stream(const char* fn, int32_t id, void* stream);
CTStatus cl_temp_alloc(void* user, CTDevice device, size_t bytes, void* stream, void** ptr);
void cl_temp_free(void* user, CTDevice device, void* ptr, void* stream);

// NN plans (nn.cc): matmul through CLBlast where it was built in.
bool nn_supported(int32_t op, int32_t dt, std::string* why);
CTStatus cl_nn_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives);
CTStatus cl_nn_plan_execute(void* plan, const CTNNCall* call, void* workspace, size_t workspace_bytes);
void cl_nn_plan_destroy(void* plan);

// The program of a (kind, dtypes) signature in the queue's context, built on
// first use (kernels.cc).
CTStatus elementwise_program(const char* fn, Device* d, cl_context ctx, int kind, const int32_t* in_dt, int n,
                             int32_t out_dt, Program** prog);

// A strided copy within one device (the cast kernel with equal dtypes):
// dst = src, both on device d, same shape (kernels.cc).
CTStatus device_copy(const char* fn, Device* d, const Queue& q, int32_t dt, const CTensor* src, const CTensor* dst);

// Drops the index of programs by signature (before runtime.cc's shutdown frees them).
void forget_programs();
// Drops the strided copies to host still pending (copy.cc; at unload: a
// caller that never synchronized gets no unpacking).
void forget_staged();

// Enqueues kernel k over exactly n work-items: whole groups of up to
// max_local, then the rest in groups of one.
CTStatus launch(const char* fn, const Queue& q, cl_kernel k, int64_t n, const char* name, size_t max_local = 256);

// Sets argument i; returns false after recording the error.
bool set_arg(const char* fn, cl_kernel k, cl_uint i, size_t size, const void* value, CTStatus* st);

inline cl_mem mem_of(const CTensor* t) { return static_cast<cl_mem>(t->data); }
// A compact row-major tensor with like's shape and dtype over `data` (a
// cl_mem, or host memory with dev CT_CPU) at byte offset off.
inline CTensor compact_view(const CTensor* like, void* data, uint64_t off, CTDevice dev) {
  CTensor c = *like;
  c.data = data;
  c.device = dev;
  c.strides = nullptr;
  c.byte_offset = off;
  return c;
}

}  // namespace ctcl

#endif  // CTENSOR_SRC_OPENCL_BACKEND_H_
