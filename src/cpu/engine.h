// engine.h — what the CPU backend's files share: threads, the stream
// argument, and the category-2 drivers (reduce.cc, along_axis.cc).
#ifndef CTENSOR_SRC_CPU_ENGINE_H_
#define CTENSOR_SRC_CPU_ENGINE_H_

#include <cstdint>

#include "cpu/host.h"
#include "cpu/kernels.h"

namespace ct {
namespace cpu {

// The elementwise and binary kernels for this CPU's SIMD target.
const KernelTable& kernel_table();

// Threads an op uses when the stream does not say.
int default_threads();

// Calls body over [0, n) in chunks of at least `grain`, on the caller's pool
// (CTCpuStream.parallel_for), on OpenMP threads, or inline when n < 2 grains.
void parallel_for(const CTCpuStream* s, int64_t n, int64_t grain, CTParallelBody body, void* ctx);

// Checks a CPU op's stream argument; an older, smaller CTCpuStream is copied
// into *copy, zero-extended. *out is NULL for the default.
CTStatus resolve_stream(const char* fn, void* stream, CTCpuStream* copy, const CTCpuStream** out);

// Host memory to host memory, any strides (the engine's copy).
CTStatus copy_tensor(const char* fn, const CTensor* src, const CTensor* dst, int32_t dt, const CTCpuStream* s);

// reduce.cc (cpu_reduce, has_reduce_kernel) and along_axis.cc (cpu_along_axis)
CTStatus cpu_reduce(const CTReduceCall* call);
CTStatus cpu_along_axis(const CTAlongAxisCall* call);
// sort.cc: sort and argsort (cpu_along_axis passes them on)
CTStatus cpu_sort(const CTAlongAxisCall* call);
// select.cc: median, nanmedian, quantile, nanquantile, kthvalue, mode (cpu_reduce passes them on)
CTStatus cpu_select(const CTReduceCall* call);
bool has_reduce_kernel(int32_t op, int32_t dt);  // reductions and along-axis ops with a kernel here
// index.cc: the index slot (take, gather, scatter, scatter_add, index_add)
CTStatus cpu_index(const CTIndexCall* call);

// nn_onednn.cc: the NN slots of the kernel table. nn_supports knows the ops
// it has and asks oneDNN once per op and dtype whether it runs on this CPU.
CTStatus nn_supports(const CTSupportQuery* q);
CTStatus nn_variant(const char* fn, int32_t device_id, void* stream, int64_t* variant);
CTStatus nn_plan_create(const CTNNCall* call, void** impl, size_t* workspace_bytes, int64_t* primitives);
CTStatus nn_plan_execute(void* impl, const CTNNCall* call, void* workspace, size_t workspace_bytes);
void nn_plan_destroy(void* impl);

}  // namespace cpu
}  // namespace ct

#endif  // CTENSOR_SRC_CPU_ENGINE_H_
