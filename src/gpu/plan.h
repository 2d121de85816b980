// plan.h — what a GPU module computes on the host before it launches a
// generated kernel, the same for OpenCL and CUDA: whether it has a kernel
// for an op and dtype (supports), the walk over a call's dims (Geo, RGeo,
// AGeo), the kernel's name, and its scalar parameters' bytes.
#ifndef CTENSOR_SRC_GPU_PLAN_H_
#define CTENSOR_SRC_GPU_PLAN_H_

#include <ctensor/ctensor_nn.h>

#include <string>

#include "source.h"

namespace ctgpu {

inline int64_t numel_of(const CTensor* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}
inline int64_t stride_of(const CTensor* t, int32_t d) {
  if (t->strides) return t->strides[d];
  int64_t s = 1;
  for (int32_t k = t->ndim - 1; k > d; --k) s *= t->shape[k];
  return s;
}

inline size_t itemsize_of(const CTensor* t) { return (t->dtype.bits * t->dtype.lanes + 7) / 8; }

// Host tensor <-> compact host buffer (element by element, any strides):
// to_buf packs t into buf, else unpacks buf into t.
void host_pack(const CTensor* t, unsigned char* buf, bool to_buf);

// The module's answer to a support query for the elementwise, reduction and
// along-axis kinds (and casts) from the rows and the registry, for device d
// (nullptr: no such device): CT_OK, or
// CT_ERR_UNSUPPORTED with a message naming fn, op, dtype and
// "<device_name>:<id>". NN ops: nn_why (the module's own rule) gives the
// reason it refuses, or nullptr.
CTStatus supports(const Target* d, const CTSupportQuery* q, const char* device_name,
                  const char* (*nn_why)(int32_t op, int32_t dt, std::string* buf));

// The unary op that applies a CTActivation (CT_OP_RELU, ...) after an NN
// op's product, -1 for CT_ACTIVATION_NONE or an unknown value: the GPU
// modules run the op's own kernel, not a second formula.
inline int32_t activation_op(int32_t act) {
  switch (act) {
    case CT_ACTIVATION_RELU: return CT_OP_RELU;
    case CT_ACTIVATION_GELU: return CT_OP_GELU;
    case CT_ACTIVATION_GELU_TANH: return CT_OP_GELU_TANH;
    case CT_ACTIVATION_SIGMOID: return CT_OP_SIGMOID;
    case CT_ACTIVATION_TANH: return CT_OP_TANH;
    default: return -1;
  }
}

// A row-major walk over `ndim` dims shared by up to 4 tensors, with dims of
// extent 1 dropped and neighbours merged where every tensor is contiguous
// across them.
// False when more than CTGPU_MAXD dims remain after merging (g is then not
// to be used: the caller refuses the call with too_many_dims).
bool coalesce(Geo* g, const CTensor* const* t, int nt, int32_t ndim, const int64_t* shape);
// CT_ERR_UNSUPPORTED: the call's layout needs more dims than the kernels walk.
CTStatus too_many_dims(const char* fn, const char* device_name);

// An elementwise call (out, inputs in ts, which have its shape) whose dims
// do not merge into CTGPU_MAXD, run as one call of run per index of dim 0.
template <class F>
CTStatus split_call(const CTElementwiseCall* call, const CTensor* const* ts, int n_in, F run);

// f(views) for each index of dim 0 of the n tensors t (one shape): views
// one dim shorter, so that a call whose dims do not merge into CTGPU_MAXD
// runs as several calls on fewer dims (each of which may split again).
template <class F>
CTStatus for_each_outer(const CTensor* const* t, int n, F f) {
  int64_t st[4][CT_MAX_NDIM];
  CTensor v[4];
  const CTensor* p[4];
  for (int k = 0; k < n; ++k) {
    for (int32_t d = 0; d < t[k]->ndim; ++d) st[k][d] = stride_of(t[k], d);
    v[k] = *t[k];
    v[k].ndim = t[k]->ndim - 1;
    v[k].shape = t[k]->shape + 1;
    v[k].strides = st[k] + 1;
    p[k] = &v[k];
  }
  for (int64_t i = 0; i < t[0]->shape[0]; ++i) {
    for (int k = 0; k < n; ++k)
      v[k].byte_offset = (uint64_t)((int64_t)t[k]->byte_offset + i * st[k][0] * (int64_t)itemsize_of(t[k]));
    if (CTStatus s = f(p)) return s;
  }
  return CT_OK;
}

// Whether an elementwise call is one contiguous run (core's CT_CALL_DENSE),
// and its kernel's name: "<op>_c" / "<op>_s", "cast_c" / "cast_s" (and
// "cast_sat_*" for a saturating cast to float8).
bool dense_call(const CTElementwiseCall* call);
std::string elementwise_kernel(const Target* d, const CTElementwiseCall* call, int kind, bool dense);

// The bytes of a scalar parameter in the kernel's parameter type (PT, or AF
// for reductions: type_info of float64 or float32).
struct Param {
  size_t size;
  unsigned char bytes[8];
};
Param param_of(const TypeInfo& t, double v);

// A reduction's walk: kept and reduced dims, and how each output's elements
// split into P partials of `chunk` (P fixed by the shapes and `items`, the
// work-items the device wants busy, so the result depends on nothing else).
// Returns M, the outputs (0: nothing to do; -1: more than CTGPU_MAXD kept or
// reduced dims after merging).
int64_t reduce_geometry(const CTReduceCall* call, int64_t items, RGeo* g);
// Bytes of one partial state (the St struct of reduce_source).
size_t state_size(const Target* d);

// An along-axis op's walk: the lines and their stride. Returns the lines
// (0 when there is nothing to do; -1 when more than CTGPU_MAXD other dims).
int64_t along_geometry(const CTAlongAxisCall* call, AGeo* g);

template <class F>
CTStatus split_call(const CTElementwiseCall* call, const CTensor* const* ts, int n_in, F run) {
  return for_each_outer(ts, 1 + n_in, [&](const CTensor* const* v) {
    CTElementwiseCall sub = *call;
    sub.out = v[0];
    for (int i = 0; i < n_in; ++i) sub.in[i] = v[1 + i];
    sub.flags = 0;
    sub.numel = numel_of(v[0]);
    return sub.numel == 0 ? CT_OK : run(&sub);
  });
}

}  // namespace ctgpu

#endif  // CTENSOR_SRC_GPU_PLAN_H_
