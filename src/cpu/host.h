// host.h — what the CPU backend takes from the host through plugin.h (error
// messages, op names, dtype names) and its small shared helpers. The CPU
// backend includes nothing from src/core: it is a backend like any plugin.
#ifndef CTENSOR_SRC_CPU_HOST_H_
#define CTENSOR_SRC_CPU_HOST_H_

#include <ctensor/plugin.h>

namespace ct {
namespace cpu {

// The host table, set when the backend registers.
const CTHost* host();

// Sets this thread's message through the host (printf format); returns status.
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
CTStatus fail(CTStatus status, const char* fmt, ...);

// The op's name ("exp"), or "op?" for an id the host does not know.
const char* op_name(int32_t op);
// A CTDtypeIndex's name ("float32").
const char* dtype_name(int32_t dt);
// The CTDtypeIndex of a dtype, -1 if ctensor has none.
inline int32_t dtype_index(CTDataType dt) { return ct_dtype_index(dt); }

// Stride of dim i in elements; NULL strides mean compact row-major.
inline int64_t ct_stride_of(const CTensor* t, int32_t i) {
  int64_t s = 1;
  if (t->strides) return t->strides[i];
  for (int32_t j = t->ndim - 1; j > i; --j) s *= t->shape[j];
  return s;
}

// Stride of dim i in bytes of `size`-byte elements; 0 for a dim of extent 1,
// which is never stepped and may have any stride (INT64_MAX included, which
// times the size would overflow).
inline int64_t ct_byte_stride_of(const CTensor* t, int32_t i, int64_t size) {
  return t->shape[i] == 1 ? 0 : ct_stride_of(t, i) * size;
}

}  // namespace cpu
}  // namespace ct

// Registers the CPU device and its kernels with the host (builtin_backends.cc).
CTStatus ct_cpu_backend_register(const CTHost* host);

#endif  // CTENSOR_SRC_CPU_HOST_H_
