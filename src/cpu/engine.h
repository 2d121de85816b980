// engine.h — what the CPU backend's files share: threads, the stream
// argument, and the category-2 drivers (reduce.cc).
#ifndef CTENSOR_SRC_CPU_ENGINE_H_
#define CTENSOR_SRC_CPU_ENGINE_H_

#include <cstdint>

#include "core/backend.h"
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

// reduce.cc
CTStatus cpu_reduce(const CTReduceCall* call);
CTStatus cpu_along_axis(const CTAlongAxisCall* call);
uint32_t reduce_dtypes(int32_t op);  // dtypes with a kernel, for reductions and along-axis ops

// nn_onednn.cc: fills the NN slots and dtype masks (the masks say what may
// run; nn_supported asks oneDNN whether it does on this CPU).
void fill_nn(CTBackend* b);

}  // namespace cpu
}  // namespace ct

#endif  // CTENSOR_SRC_CPU_ENGINE_H_
