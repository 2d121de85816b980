// nn_onednn_internal.h — what the oneDNN NN files (nn_onednn*.cc) share: the
// plan and its arguments, the hooks run around its primitive, the layout
// helpers the build functions use, and the build functions themselves.
//
// A plan is one oneDNN primitive plus what it takes to run it on the
// caller's layout: per tensor argument, the caller's memory descriptor (its
// strides, viewed with the dims the primitive wants), the primitive's own
// descriptor (a blocked layout when oneDNN prefers one) and, where they
// differ, a reorder through a buffer in the caller's workspace. Layouts
// oneDNN cannot describe (negative or zero strides, strides that do not nest)
// are first copied to a dense buffer (copy_tensor). Scratch memory comes from the workspace too
// (oneDNN's user scratchpad mode): the library allocates nothing per call.
// Small conversions oneDNN does not do (variance <-> inverse std, max-pool
// window offsets <-> int64 positions) are hooks run before or after it.
#ifndef CTENSOR_SRC_CPU_NN_ONEDNN_INTERNAL_H_
#define CTENSOR_SRC_CPU_NN_ONEDNN_INTERNAL_H_

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cpu/host.h"

namespace ct {
namespace cpu {
namespace onednn {

using dnnl::memory;
using dims = memory::dims;
using mdt = memory::data_type;

dnnl::engine& eng();

mdt dnnl_dt(int32_t d);

// oneDNN reads its thread count from OpenMP: a plan fixes it at creation
// (where oneDNN decides how to split the work) and at every execution.
struct ThreadScope {
  int old;
  explicit ThreadScope(int n) : old(omp_get_max_threads()) {
    if (n != old) omp_set_num_threads(n);
  }
  ~ThreadScope() {
    if (omp_get_max_threads() != old) omp_set_num_threads(old);
  }
};

// The first element's address, added as integers: an empty tensor's data
// may be NULL or anything and its byte_offset anything (nothing of it is
// read), where pointer arithmetic would be undefined.
inline char* data_of(const CTensor* t) {
  return reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(t->data) + t->byte_offset);
}

// An element read or written at any address (the own kernels' access to the
// caller's tensors: a NumPy array may sit at an odd address); loops of them
// still vectorise.
template <class T> inline T load_at(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T> inline void store_at(char* p, T v) { std::memcpy(p, &v, sizeof v); }

// ---- views ------------------------------------------------------------------

// Strides (elements) that show t with the dims `nd` (same element count,
// row-major order) without copying, as NumPy's reshape does; false when no
// such view exists. Size-1 dims get the outermost stride, so a dense layout
// stays recognisably dense to oneDNN whatever the caller put there.
bool view_strides(const CTensor* t, const dims& nd, dims* out);

// Whether oneDNN takes these strides as a memory descriptor: positive on
// every dim of extent > 1 and, sorted by stride, each at least the extent
// times the stride of the one below (oneDNN's own check, which refuses some
// layouts whose elements do not overlap, such as (2, 2) with strides (3, 2):
// those are copied to a dense buffer instead).
bool describable(const dims& d, const dims& s);

// No gaps: the elements fill [0, numel) in some order (a permuted dense layout).
bool is_dense(const memory::desc& md);

dims dense_strides(const dims& d);
memory::desc dense_like(const memory::desc& md);

// Calls f(linear index, element pointer) over t in row-major order.
template <class F>
void for_each_elem(const CTensor* t, F f) {
  int64_t n = 1, idx[CT_MAX_NDIM] = {0};
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  const int64_t isz = t->dtype.bits / 8;
  char* base = data_of(t);
  int64_t off = 0;
  for (int64_t l = 0; l < n; ++l) {
    f(l, base + off * isz);
    for (int32_t i = t->ndim - 1; i >= 0; --i) {
      const int64_t s = ct_stride_of(t, i);
      if (++idx[i] < t->shape[i]) {
        off += s;
        break;
      }
      off -= s * (t->shape[i] - 1);
      idx[i] = 0;
    }
  }
}

// ---- plans ------------------------------------------------------------------

// One memory argument of the plan.
struct Arg {
  int tensor = -1;      // index into the call's tensors; -1 = internal buffer
  int darg = 0;         // DNNL_ARG_* of the main primitive (0: a helper buffer only)
  bool output = false;
  bool copy = false;    // ct_copy between the caller's tensor and a dense buffer
  bool reorder = false; // oneDNN reorder between `user` and `prim`
  memory::desc user;    // the caller's layout (or the dense copy's; internal: the buffer's)
  memory::desc prim;    // the primitive's layout
  size_t user_off = 0;  // workspace offset of the dense copy / internal buffer
  size_t prim_off = 0;  // workspace offset of the primitive-layout buffer
  dnnl::primitive re;
  memory::desc re_scratch;
};

struct Plan;
struct Exec {
  const char* fn;                                  // the entry point called (ct_plan_execute, ct_max_pool2d_backward, ...)
  const Plan* plan;
  const CTensor* const* t;
  char* base;                                      // the aligned workspace
  char* user_ptr(size_t i) const;                  // where arg i's user-layout bytes are
  char* prim_ptr(size_t i) const;                  // where arg i's primitive-layout bytes are
};
using Hook = std::function<void(const Exec&)>;
// A step that may refuse the call (bad data the validation could not see,
// such as max-pool indices outside their windows); runs first, before
// anything the caller sees is written.
using Check = std::function<CTStatus(const Exec&)>;

// Memory objects for one execution at a time; a plan keeps a pool of them so
// concurrent executions never share one and repeated ones allocate nothing.
struct Ctx {
  std::vector<memory> user_mem, prim_mem, re_scr;
  std::vector<void*> user_at, prim_at;  // the handles set last: setting one is not free
  void* scratch_at = nullptr;
  std::vector<std::unordered_map<int, memory>> re_args;
  std::unordered_map<int, memory> args;
  memory scratch;
  dnnl::stream strm;
};

struct Plan {
  int32_t op = 0;
  int32_t nthreads = 1;
  bool has_prim = true;  // false: an empty input, the outputs written by the post hooks alone
  dnnl::primitive prim;
  Hook body;             // when set, run in the primitive's place (own loops on the primitive-layout buffers)
  memory::desc prim_scratch;
  std::vector<Arg> args;
  size_t scratch_off = 0, total = 0;
  std::vector<Check> checks;
  std::vector<Hook> pre, post;
  int64_t primitives = 0;
  std::mutex mu;
  std::vector<std::unique_ptr<Ctx>> pool;
  size_t contexts = 0;  // Ctx made for this plan: pool's capacity is at least this (execute's last push never allocates)
};

// A failed copy inside an execution: its message is already set.
struct CopyFailed {
  CTStatus status;
};

// The argument for call tensor `ti` seen with dims `d`: direct when its
// strides can describe that view, else through a dense copy.
Arg tensor_arg(const CTNNCall* c, int ti, int darg, bool output, const dims& d);
Arg internal_arg(int darg, bool output, const memory::desc& md);
dims tdims(const CTensor* t);
dnnl::primitive_attr scratch_attr();

// Lays out the workspace and creates the reorders once the primitive is known.
void finish(Plan* p, const dnnl::primitive& prim, const memory::desc& scratch);

// Runs the plan on the call's tensors (fn: the entry point called, for
// messages); throws dnnl::error, and CopyFailed when a dense copy fails.
CTStatus execute(Plan* p, const char* fn, const CTensor* const* t, void* workspace);

// oneDNN 2.6's forward convolution for channels-last and blocked layouts
// (brgconv) holds code and tables per output column, ~1.3 KB each, made
// when its plan is created: 200000 columns took 130-200 MB and 0.3-0.7 s,
// 11 M columns more than 4 GB (fuzz_nn). A forward conv with more output
// columns than this runs on plain NCHW buffers, where oneDNN takes its GEMM
// kernel (im2col in blocks: no per-column cost; 1-3x brgconv's time).
constexpr int64_t kConvWideOW = (int64_t)1 << 15;

// The build functions: each adds the arguments, hooks and primitive of its
// ops to the plan, then calls finish. They throw dnnl::error.
void build_matmul(const CTNNCall* c, Plan* p);  // nn_onednn_matmul_conv.cc
void build_conv(const CTNNCall* c, Plan* p);    // nn_onednn_matmul_conv.cc
void build_pool(const CTNNCall* c, Plan* p);    // nn_onednn_pool.cc
void build_norm(const CTNNCall* c, Plan* p);    // nn_onednn_norm.cc
void build_attention(const CTNNCall* c, Plan* p);  // nn_attention.cc (own loops around two matmuls)
// Batch norm of float32 with contiguous (n, c) planes, without oneDNN; false
// (nothing built) for other layouts and dtypes (nn_norm_direct.cc).
bool build_batch_norm_direct(const CTNNCall* c, Plan* p);
// Layer norm of (M, D) rows in oneDNN's place, with its arguments (found in
// p's args by DNNL_ARG_*, all dense float32) and semantics: forward (src,
// dst, mean and variance when given, scale?, shift?) or backward (src,
// diff_dst, mean, variance, scale?, diff_src, diff_scale?, diff_shift?). For
// the normalized sizes whose JIT code oneDNN 2.6 cannot afford (nn_norm_direct.cc).
Hook layer_norm_direct(const Plan& p, int64_t M, int64_t D, float eps, bool backward);

}  // namespace onednn
}  // namespace cpu
}  // namespace ct

#endif  // CTENSOR_SRC_CPU_NN_ONEDNN_INTERNAL_H_
