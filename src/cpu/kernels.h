// kernels.h — the CPU kernel table: one contiguous-loop function per op and
// dtype. The strided engine (cpu_backend.cc) feeds them contiguous runs.
#ifndef CTENSOR_SRC_CPU_KERNELS_H_
#define CTENSOR_SRC_CPU_KERNELS_H_

#include <cstdint>

#include "core/backend.h"

namespace ct {
namespace cpu {

// p[0] = out, p[1..] = inputs; all contiguous, n elements.
typedef void (*ContigKernel)(char* const* p, int64_t n, const double* params);

struct KernelTable {
  ContigKernel op[CT_OP_END_][CT_DT_COUNT];   // by data dtype (cast: unused)
  ContigKernel cast[CT_DT_COUNT][CT_DT_COUNT];  // [from][to]
  const char* target;  // the SIMD target chosen at run time ("AVX2", ...)
};

// Fills the table for the best SIMD target of this CPU (run-time dispatch).
void fill_kernels(KernelTable* table);

}  // namespace cpu
}  // namespace ct

#endif  // CTENSOR_SRC_CPU_KERNELS_H_
