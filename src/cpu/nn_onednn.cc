// nn_onednn.cc — category 3 (NN ops) on the CPU through oneDNN.
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
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpu/host.h"

#include "cpu/engine.h"
#include "cpu/half.h"

namespace ct {
namespace cpu {
namespace {

using dnnl::memory;
using dims = memory::dims;
using mdt = memory::data_type;

dnnl::engine& eng() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

mdt dnnl_dt(int32_t d) {
  switch (d) {
    case CT_DT_FLOAT32: return mdt::f32;
    case CT_DT_BFLOAT16: return mdt::bf16;
    case CT_DT_FLOAT16: return mdt::f16;
    case CT_DT_INT32: return mdt::s32;
    case CT_DT_UINT8: return mdt::u8;
    default: return mdt::undef;
  }
}

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

char* data_of(const CTensor* t) { return static_cast<char*>(t->data) + t->byte_offset; }

// ---- views ------------------------------------------------------------------

// Strides (elements) that show t with the dims `nd` (same element count,
// row-major order) without copying, as NumPy's reshape does; false when no
// such view exists. Size-1 dims get the outermost stride, so a dense layout
// stays recognisably dense to oneDNN whatever the caller put there.
bool view_strides(const CTensor* t, const dims& nd, dims* out) {
  std::vector<int64_t> od, os;
  int64_t outer = 1;
  for (int32_t i = 0; i < t->ndim; ++i) {
    const int64_t s = ct_stride_of(t, i);
    if (t->shape[i] != 1) {
      od.push_back(t->shape[i]);
      os.push_back(s);
      outer = std::max<int64_t>(outer, (int64_t)std::llabs(s) * t->shape[i]);
    }
  }
  out->assign(nd.size(), 0);
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nd.size() && oi < od.size()) {
    int64_t np = nd[ni], op = od[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= nd.size()) return false;
        np *= nd[nj++];
      } else {
        if (oj >= od.size()) return false;
        op *= od[oj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (os[k] != od[k + 1] * os[k + 1]) return false;
    (*out)[nj - 1] = os[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) (*out)[k - 1] = (*out)[k] * nd[k];
    ni = nj++;
    oi = oj++;
  }
  for (size_t k = 0; k < nd.size(); ++k)
    if (nd[k] == 1) (*out)[k] = outer;
  return true;
}

// Whether oneDNN takes these strides as a memory descriptor: positive on
// every dim of extent > 1 and, sorted by stride, each at least the extent
// times the stride of the one below (oneDNN's own check, which refuses some
// layouts whose elements do not overlap, such as (2, 2) with strides (3, 2):
// those are copied to a dense buffer instead).
bool describable(const dims& d, const dims& s) {
  std::vector<std::pair<int64_t, int64_t>> order;  // (stride, extent)
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] <= 1) continue;
    if (s[i] <= 0) return false;
    order.emplace_back(s[i], d[i]);
  }
  std::sort(order.begin(), order.end());
  int64_t need = 1;
  for (const auto& o : order) {
    if (o.first < need) return false;
    if (__builtin_mul_overflow(o.first, o.second, &need)) return false;
  }
  return true;
}

// No gaps: the elements fill [0, numel) in some order (a permuted dense layout).
bool is_dense(const memory::desc& md) {
  const dims d = md.dims();
  const dims s = md.data.format_kind == dnnl_blocked ? dims(md.data.format_desc.blocking.strides,
                                                            md.data.format_desc.blocking.strides + d.size())
                                                     : dims();
  if (s.empty()) return false;
  int64_t n = 1, span = 1;
  for (size_t i = 0; i < d.size(); ++i) {
    n *= d[i];
    span += (d[i] - 1) * s[i];
  }
  return n == span;
}

dims dense_strides(const dims& d) {
  dims s(d.size());
  int64_t acc = 1;
  for (size_t i = d.size(); i-- > 0;) {
    s[i] = acc;
    acc *= std::max<int64_t>(d[i], 1);
  }
  return s;
}

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
  memory::desc prim_scratch;
  std::vector<Arg> args;
  size_t scratch_off = 0, total = 0;
  std::vector<Check> checks;
  std::vector<Hook> pre, post;
  int64_t primitives = 0;
  std::mutex mu;
  std::vector<std::unique_ptr<Ctx>> pool;
};

char* Exec::user_ptr(size_t i) const {
  const Arg& a = plan->args[i];
  if (a.tensor < 0 || a.copy) return base + a.user_off;
  return data_of(t[a.tensor]);
}

memory::desc user_md(const dims& d, mdt type, const dims& strides) { return memory::desc(d, type, strides); }

// The argument for call tensor `ti` seen with dims `d`: direct when its
// strides can describe that view, else through a dense copy.
Arg tensor_arg(const CTNNCall* c, int ti, int darg, bool output, const dims& d) {
  Arg a;
  a.tensor = ti;
  a.darg = darg;
  a.output = output;
  const CTensor* t = c->t[ti];
  const mdt type = dnnl_dt(dtype_index(t->dtype));
  dims s;
  if (!view_strides(t, d, &s) || !describable(d, s)) {
    a.copy = true;
    s = dense_strides(d);
  }
  a.user = user_md(d, type, s);
  a.prim = a.user;
  return a;
}

Arg internal_arg(int darg, bool output, const memory::desc& md) {
  Arg a;
  a.darg = darg;
  a.output = output;
  a.user = a.prim = md;
  return a;
}

dims tdims(const CTensor* t) { return dims(t->shape, t->shape + t->ndim); }

size_t align64(size_t n) { return (n + 63) & ~size_t(63); }

dnnl::primitive_attr scratch_attr() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

// Lays out the workspace and creates the reorders once the primitive is known.
void finish(Plan* p, const dnnl::primitive& prim, const memory::desc& scratch) {
  p->prim = prim;
  p->prim_scratch = scratch;
  ++p->primitives;
  size_t off = 0, scr = scratch.get_size();
  for (Arg& a : p->args) {
    if (a.copy || a.tensor < 0) {
      a.user_off = off;
      off += align64(a.user.get_size());
    }
    a.reorder = a.user != a.prim;
    if (a.reorder) {
      a.prim_off = off;
      off += align64(a.prim.get_size());
      dnnl::reorder::primitive_desc rpd = a.output
          ? dnnl::reorder::primitive_desc(eng(), a.prim, eng(), a.user, scratch_attr())
          : dnnl::reorder::primitive_desc(eng(), a.user, eng(), a.prim, scratch_attr());
      a.re = dnnl::reorder(rpd);
      a.re_scratch = rpd.scratchpad_desc();
      scr = std::max(scr, a.re_scratch.get_size());
      ++p->primitives;
    }
  }
  p->scratch_off = off;
  off += align64(scr);
  p->total = off ? off + 64 : 0;  // + slack to align the caller's pointer
}

std::unique_ptr<Ctx> make_ctx(const Plan* p) {
  std::unique_ptr<Ctx> c(new Ctx);
  c->strm = dnnl::stream(eng());
  const size_t n = p->args.size();
  c->user_mem.resize(n);
  c->prim_mem.resize(n);
  c->re_scr.resize(n);
  c->re_args.resize(n);
  c->user_at.assign(n, nullptr);
  c->prim_at.assign(n, nullptr);
  if (p->prim_scratch.get_size()) {
    c->scratch = memory(p->prim_scratch, eng(), DNNL_MEMORY_NONE);
    c->args[DNNL_ARG_SCRATCHPAD] = c->scratch;
  }
  for (size_t i = 0; i < n; ++i) {
    const Arg& a = p->args[i];
    c->user_mem[i] = memory(a.user, eng(), DNNL_MEMORY_NONE);
    if (a.reorder) {
      c->prim_mem[i] = memory(a.prim, eng(), DNNL_MEMORY_NONE);
      if (a.re_scratch.get_size()) c->re_scr[i] = memory(a.re_scratch, eng(), DNNL_MEMORY_NONE);
      auto& ra = c->re_args[i];
      ra[DNNL_ARG_FROM] = a.output ? c->prim_mem[i] : c->user_mem[i];
      ra[DNNL_ARG_TO] = a.output ? c->user_mem[i] : c->prim_mem[i];
      if (a.re_scratch.get_size()) ra[DNNL_ARG_SCRATCHPAD] = c->re_scr[i];
    }
    if (a.darg) c->args[a.darg] = a.reorder ? c->prim_mem[i] : c->user_mem[i];
  }
  return c;
}

// A failed copy inside an execution: its message is already set.
struct CopyFailed {
  CTStatus status;
};

// A copy between a caller's tensor and its dense buffer.
void copy_dense(const Exec& e, size_t i, bool to_user) {
  const Arg& a = e.plan->args[i];
  const CTensor* t = e.t[a.tensor];
  CTensor d = *t;
  d.data = e.base + a.user_off;
  d.byte_offset = 0;
  d.strides = nullptr;
  CTCpuStream s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  s.num_threads = e.plan->nthreads;
  const int32_t dt = dtype_index(t->dtype);
  const CTStatus st = to_user ? copy_tensor("copy_dense", &d, t, dt, &s) : copy_tensor("copy_dense", t, &d, dt, &s);
  if (st != CT_OK) throw CopyFailed{st};  // the message is set; nn_plan_execute returns the status
}

CTStatus execute(Plan* p, const char* fn, const CTensor* const* t, void* workspace) {
  ThreadScope threads(p->nthreads);
  Exec e;
  e.fn = fn;
  e.plan = p;
  e.t = t;
  e.base = reinterpret_cast<char*>(((uintptr_t)workspace + 63) & ~uintptr_t(63));
  if (!p->has_prim) {
    for (const Hook& h : p->post) h(e);
    return CT_OK;
  }
  std::unique_ptr<Ctx> c;
  {
    std::lock_guard<std::mutex> lock(p->mu);
    if (!p->pool.empty()) {
      c = std::move(p->pool.back());
      p->pool.pop_back();
    }
  }
  if (!c) c = make_ctx(p);
  const size_t n = p->args.size();
  for (size_t i = 0; i < n; ++i) {
    const Arg& a = p->args[i];
    char* u = e.user_ptr(i);
    if (u != c->user_at[i]) c->user_mem[i].set_data_handle(c->user_at[i] = u);
    if (a.reorder && e.base + a.prim_off != c->prim_at[i]) {
      c->prim_mem[i].set_data_handle(c->prim_at[i] = e.base + a.prim_off);
      if (a.re_scratch.get_size()) c->re_scr[i].set_data_handle(e.base + p->scratch_off);
    }
  }
  if (p->prim_scratch.get_size() && e.base + p->scratch_off != c->scratch_at)
    c->scratch.set_data_handle(c->scratch_at = e.base + p->scratch_off);
  for (const Check& k : p->checks)
    if (CTStatus s = k(e)) {
      std::lock_guard<std::mutex> lock(p->mu);
      p->pool.push_back(std::move(c));
      return s;
    }
  for (const Hook& h : p->pre) h(e);
  for (size_t i = 0; i < n; ++i) {
    const Arg& a = p->args[i];
    if (a.output) continue;
    if (a.copy) copy_dense(e, i, false);
    if (a.reorder) a.re.execute(c->strm, c->re_args[i]);
  }
  p->prim.execute(c->strm, c->args);
  for (size_t i = 0; i < n; ++i) {
    const Arg& a = p->args[i];
    if (!a.output) continue;
    if (a.reorder) a.re.execute(c->strm, c->re_args[i]);
  }
  c->strm.wait();
  for (size_t i = 0; i < n; ++i)
    if (p->args[i].output && p->args[i].copy) copy_dense(e, i, true);
  for (const Hook& h : p->post) h(e);
  std::lock_guard<std::mutex> lock(p->mu);
  p->pool.push_back(std::move(c));
  return CT_OK;
}

// ---- ops --------------------------------------------------------------------

// Whether oneDNN's kernel for the caller's own layout is worth keeping (else
// the plan lets oneDNN choose its blocked layouts and reorders around them).
// Measured here: the im2col "gemm" kernels lose to blocked ones plus
// reorders, except for a 1x1, stride-1, unpadded conv, which is a plain GEMM
// on NCHW data (0.55 ms against 1.15 ms for ResNet's C256 56x56 1x1).
bool keep_user_layout(const char* impl, const CTConv2dDesc& d, const CTensor* w) {
  if (std::strstr(impl, "ref")) return false;
  if (!std::strstr(impl, "gemm")) return true;
  return w->shape[2] == 1 && w->shape[3] == 1 && d.stride[0] == 1 && d.stride[1] == 1 && d.pad_begin[0] == 0 &&
         d.pad_begin[1] == 0 && d.pad_end[0] == 0 && d.pad_end[1] == 0;
}

bool post_op(int32_t act, dnnl::post_ops* po) {
  dnnl::algorithm alg;
  switch (act) {
    case CT_ACTIVATION_NONE: return false;
    case CT_ACTIVATION_RELU: alg = dnnl::algorithm::eltwise_relu; break;
    case CT_ACTIVATION_GELU: alg = dnnl::algorithm::eltwise_gelu_erf; break;
    case CT_ACTIVATION_GELU_TANH: alg = dnnl::algorithm::eltwise_gelu_tanh; break;
    case CT_ACTIVATION_SIGMOID: alg = dnnl::algorithm::eltwise_logistic; break;
    default: alg = dnnl::algorithm::eltwise_tanh; break;
  }
  po->append_eltwise(1.f, alg, 0.f, 0.f);
  return true;
}

memory::desc dense_like(const memory::desc& md) {
  return memory::desc(md.dims(), md.data_type(), dense_strides(md.dims()));
}

memory::desc any_like(const memory::desc& md) {
  return memory::desc(md.dims(), md.data_type(), memory::format_tag::any);
}

// float32: oneDNN 2.6's sgemm-based matmul ("gemm:jit") beats its brgemm one
// by ~15% at large sizes on this kind of CPU; prefer it when it applies.
dnnl::matmul::primitive_desc prefer_gemm(const dnnl::matmul::desc& d, const dnnl::primitive_attr& attr, bool f32) {
  dnnl::matmul::primitive_desc pd(d, attr, eng());
  if (!f32) return pd;
  do {
    if (std::strstr(pd.impl_info_str(), "gemm:jit")) return pd;
  } while (pd.next_impl());
  return dnnl::matmul::primitive_desc(d, attr, eng());
}

void build_matmul(const CTNNCall* c, Plan* p) {
  const CTensor *A = c->t[0], *B = c->t[1], *bias = c->t[2], *O = c->t[3];
  const int nd = O->ndim;
  const int64_t K = A->shape[A->ndim - 1], N = O->shape[nd - 1];
  auto padded = [&](const CTensor* t) {
    dims d(nd, 1);
    for (int32_t i = 0; i < t->ndim; ++i) d[nd - t->ndim + i] = t->shape[i];
    return d;
  };
  // When b has no batch of its own, a batched product is one large GEMM,
  // (batch * M, K) @ (K, N): far faster in oneDNN than a batch of small ones.
  // It needs a and out viewable as 2-d without copies and a bias that is one row.
  int64_t rows = 1, a_rows = 1;
  for (int i = 0; i < nd - 1; ++i) rows *= O->shape[i];
  for (int i = 0; i < A->ndim - 1; ++i) a_rows *= A->shape[i];
  bool flat = nd > 2 && a_rows == rows;
  for (int i = 0; flat && i < B->ndim - 2; ++i) flat = B->shape[i] == 1;
  if (flat && bias) {
    int64_t n = 1;
    for (int32_t i = 0; i < bias->ndim; ++i) n *= bias->shape[i];
    flat = n == N;
  }
  dims as, os;
  const dims ad{rows, K}, od{rows, N};
  flat = flat && view_strides(A, ad, &as) && describable(ad, as) && view_strides(O, od, &os) && describable(od, os);
  if (flat) {
    p->args.push_back(tensor_arg(c, 0, DNNL_ARG_SRC, false, ad));
    p->args.push_back(tensor_arg(c, 1, DNNL_ARG_WEIGHTS, false, dims{K, N}));
    if (bias) p->args.push_back(tensor_arg(c, 2, DNNL_ARG_BIAS, false, dims{1, N}));
    p->args.push_back(tensor_arg(c, 3, DNNL_ARG_DST, true, od));
  } else {
    // A batch dim the caller broadcast with stride 0 is a size-1 dim to
    // oneDNN, which broadcasts it itself.
    auto operand = [&](int ti, int darg) {
      const CTensor* t = c->t[ti];
      dims d = padded(t), s;
      if (!view_strides(t, d, &s)) return tensor_arg(c, ti, darg, false, d);  // a dense copy
      for (int i = 0; i < nd - 2; ++i)
        if (d[i] > 1 && s[i] == 0) d[i] = 1;
      if (!describable(d, s)) return tensor_arg(c, ti, darg, false, padded(t));
      Arg a;
      a.tensor = ti;
      a.darg = darg;
      a.user = a.prim = memory::desc(d, dnnl_dt(dtype_index(t->dtype)), s);
      return a;
    };
    p->args.push_back(operand(0, DNNL_ARG_SRC));
    p->args.push_back(operand(1, DNNL_ARG_WEIGHTS));
    if (bias) p->args.push_back(tensor_arg(c, 2, DNNL_ARG_BIAS, false, padded(bias)));
    p->args.push_back(tensor_arg(c, 3, DNNL_ARG_DST, true, tdims(O)));
  }
  // oneDNN 2.6's matmul reads a strided bias as if it were dense: it gets
  // a dense one, reordered from the caller's layout in the workspace.
  if (bias) p->args[2].prim = dense_like(p->args[2].user);
  dnnl::primitive_attr attr = scratch_attr();
  dnnl::post_ops po;
  if (post_op(static_cast<const CTMatmulDesc*>(c->desc)->activation, &po)) attr.set_post_ops(po);
  Arg& src = p->args[0];
  Arg& wei = p->args[1];
  Arg& dst = p->args.back();
  auto make = [&]() {
    return bias ? dnnl::matmul::desc(src.prim, wei.prim, p->args[2].prim, dst.prim)
                : dnnl::matmul::desc(src.prim, wei.prim, dst.prim);
  };
  const bool f32 = c->dt == CT_DT_FLOAT32;
  dnnl::matmul::primitive_desc pd;
  try {
    pd = prefer_gemm(make(), attr, f32);
  } catch (const dnnl::error&) {
    // Layouts the fast kernels cannot take: dense copies (reorders) instead.
    for (Arg& a : p->args) a.prim = memory::desc(a.prim.dims(), a.prim.data_type(), dense_strides(a.prim.dims()));
    pd = prefer_gemm(make(), attr, f32);
  }
  finish(p, dnnl::matmul(pd), pd.scratchpad_desc());
}

struct ConvGeom {
  dims strides, dilates, pl, pr;
};
// make(false) builds the primitive desc on the caller's data layout,
// make(true) lets oneDNN choose (blocked); the first is kept when allowed and
// keep_user_layout approves of the kernel oneDNN picked for it.
template <class PD, class Make>
PD user_layout_or_blocked(bool try_user, const Make& make, const CTConv2dDesc& d, const CTensor* w) {
  if (try_user) try {
      PD pd = make(false);
      if (keep_user_layout(pd.impl_info_str(), d, w)) return pd;
    } catch (const dnnl::error&) {
    }
  return make(true);
}

ConvGeom conv_geom(const CTConv2dDesc& d) {
  return ConvGeom{{d.stride[0], d.stride[1]},
                  {d.dilation[0] - 1, d.dilation[1] - 1},
                  {d.pad_begin[0], d.pad_begin[1]},
                  {d.pad_end[0], d.pad_end[1]}};
}

dims weight_dims(const CTensor* w, int64_t g) {
  if (g == 1) return tdims(w);
  return dims{g, w->shape[0] / g, w->shape[1], w->shape[2], w->shape[3]};
}

// conv2d forward (x, w, bias?, y), backward data (dy, w, dx), backward
// weight (x, dy, dw, dbias?). Data layouts: the caller's when oneDNN has a
// fast kernel for them, else oneDNN's choice; weights always oneDNN's choice.
void build_conv(const CTNNCall* c, Plan* p) {
  const CTConv2dDesc& d = *static_cast<const CTConv2dDesc*>(c->desc);
  const ConvGeom g = conv_geom(d);
  const auto alg = dnnl::algorithm::convolution_direct;
  const int64_t G = d.groups;
  dnnl::primitive_attr attr = scratch_attr();
  if (c->op == CT_OP_CONV2D) {
    dnnl::post_ops po;
    if (post_op(d.activation, &po)) attr.set_post_ops(po);
    p->args.push_back(tensor_arg(c, 0, DNNL_ARG_SRC, false, tdims(c->t[0])));
    p->args.push_back(tensor_arg(c, 1, DNNL_ARG_WEIGHTS, false, weight_dims(c->t[1], G)));
    if (c->t[2]) p->args.push_back(tensor_arg(c, 2, DNNL_ARG_BIAS, false, tdims(c->t[2])));
    p->args.push_back(tensor_arg(c, 3, DNNL_ARG_DST, true, tdims(c->t[3])));
    Arg &src = p->args[0], &wei = p->args[1], &dst = p->args.back();
    Arg* b = c->t[2] ? &p->args[2] : nullptr;
    if (b) b->prim = dense_like(b->user);  // as matmul's: a strided bias would be read as dense
    auto make = [&](bool any_data) {
      const memory::desc s = any_data ? any_like(src.user) : src.user, o = any_data ? any_like(dst.user) : dst.user;
      auto desc = b ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, s, any_like(wei.user),
                                                      b->prim, o, g.strides, g.dilates, g.pl, g.pr)
                    : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, s, any_like(wei.user), o,
                                                      g.strides, g.dilates, g.pl, g.pr);
      return dnnl::convolution_forward::primitive_desc(desc, attr, eng());
    };
    // A first layer (few input channels) runs faster blocked whatever the
    // caller's layout (ResNet's C3 7x7 NHWC: 1.28 ms blocked, 1.41 ms NHWC).
    auto pd = user_layout_or_blocked<dnnl::convolution_forward::primitive_desc>(
        !src.copy && !dst.copy && c->t[1]->shape[1] >= 8, make, d, c->t[1]);
    src.prim = pd.src_desc();
    wei.prim = pd.weights_desc();
    dst.prim = pd.dst_desc();
    finish(p, dnnl::convolution_forward(pd), pd.scratchpad_desc());
    return;
  }
  if (c->op == CT_OP_CONV2D_BACKWARD_DATA) {  // dy, w, dx
    p->args.push_back(tensor_arg(c, 0, DNNL_ARG_DIFF_DST, false, tdims(c->t[0])));
    p->args.push_back(tensor_arg(c, 1, DNNL_ARG_WEIGHTS, false, weight_dims(c->t[1], G)));
    p->args.push_back(tensor_arg(c, 2, DNNL_ARG_DIFF_SRC, true, tdims(c->t[2])));
    Arg &dy = p->args[0], &wei = p->args[1], &dx = p->args[2];
    auto make = [&](bool any_data) {
      const memory::desc s = any_data ? any_like(dx.user) : dx.user, o = any_data ? any_like(dy.user) : dy.user;
      dnnl::convolution_forward::primitive_desc hint(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, s, any_like(wei.user), o, g.strides,
                                          g.dilates, g.pl, g.pr),
          eng());
      return dnnl::convolution_backward_data::primitive_desc(
          dnnl::convolution_backward_data::desc(alg, s, any_like(wei.user), o, g.strides, g.dilates, g.pl, g.pr), attr,
          eng(), hint);
    };
    auto pd = user_layout_or_blocked<dnnl::convolution_backward_data::primitive_desc>(!dy.copy && !dx.copy, make,
                                                                                        d, c->t[1]);
    dy.prim = pd.diff_dst_desc();
    wei.prim = pd.weights_desc();
    dx.prim = pd.diff_src_desc();
    finish(p, dnnl::convolution_backward_data(pd), pd.scratchpad_desc());
    return;
  }
  // backward weight: x, dy, dw, dbias?
  p->args.push_back(tensor_arg(c, 0, DNNL_ARG_SRC, false, tdims(c->t[0])));
  p->args.push_back(tensor_arg(c, 1, DNNL_ARG_DIFF_DST, false, tdims(c->t[1])));
  p->args.push_back(tensor_arg(c, 2, DNNL_ARG_DIFF_WEIGHTS, true, weight_dims(c->t[2], G)));
  if (c->t[3]) p->args.push_back(tensor_arg(c, 3, DNNL_ARG_DIFF_BIAS, true, tdims(c->t[3])));
  Arg &x = p->args[0], &dy = p->args[1], &dw = p->args[2];
  Arg* db = c->t[3] ? &p->args[3] : nullptr;
  if (db) db->prim = dense_like(db->user);  // a strided dbias would be written as dense: reordered out instead
  auto make = [&](bool any_data) {
    const memory::desc s = any_data ? any_like(x.user) : x.user, o = any_data ? any_like(dy.user) : dy.user;
    const memory::desc w = any_like(dw.user);
    auto fwd = db ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, s, w, db->prim, o,
                                                    g.strides, g.dilates, g.pl, g.pr)
                  : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, s, w, o, g.strides,
                                                    g.dilates, g.pl, g.pr);
    dnnl::convolution_forward::primitive_desc hint(fwd, eng());
    auto bwd = db ? dnnl::convolution_backward_weights::desc(alg, s, w, db->prim, o, g.strides, g.dilates, g.pl, g.pr)
                  : dnnl::convolution_backward_weights::desc(alg, s, w, o, g.strides, g.dilates, g.pl, g.pr);
    return dnnl::convolution_backward_weights::primitive_desc(bwd, attr, eng(), hint);
  };
  auto pd = user_layout_or_blocked<dnnl::convolution_backward_weights::primitive_desc>(!x.copy && !dy.copy, make, d,
                                                                                        c->t[2]);
  x.prim = pd.src_desc();
  dy.prim = pd.diff_dst_desc();
  dw.prim = pd.diff_weights_desc();
  if (db) db->prim = pd.diff_bias_desc();
  finish(p, dnnl::convolution_backward_weights(pd), pd.scratchpad_desc());
}

// Max pooling's oneDNN workspace holds, per output, the offset kh * KW + kw
// of the max in its window; the caller sees int64 positions h * W + w.
struct PoolIndex {
  int64_t N, C, H, W, P, Q, KH, KW, SH, SW, PT, PL, DH, DW;
};
PoolIndex pool_index(const CTPool2dDesc& d, const CTensor* x, const CTensor* y) {
  return PoolIndex{x->shape[0], x->shape[1], x->shape[2],   x->shape[3],   y->shape[2],     y->shape[3],     d.kernel[0],
                   d.kernel[1], d.stride[0], d.stride[1], d.pad_begin[0], d.pad_begin[1], d.dilation[0], d.dilation[1]};
}

void build_pool(const CTNNCall* c, Plan* p) {
  const CTPool2dDesc& d = *static_cast<const CTPool2dDesc*>(c->desc);
  const bool maxp = c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_MAX_POOL2D_BACKWARD;
  const bool fwd = c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_AVG_POOL2D;
  const auto alg = maxp ? dnnl::algorithm::pooling_max
                        : d.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                              : dnnl::algorithm::pooling_avg_exclude_padding;
  const dims strides{d.stride[0], d.stride[1]}, kernel{d.kernel[0], d.kernel[1]},
      dil{d.dilation[0] - 1, d.dilation[1] - 1}, pl{d.pad_begin[0], d.pad_begin[1]}, pr{d.pad_end[0], d.pad_end[1]};
  dnnl::primitive_attr attr = scratch_attr();
  // Tensor roles: forward (x, y, indices?); max backward (dy, indices, dx); avg backward (dy, dx).
  const int xi = fwd ? 0 : (maxp ? 2 : 1), yi = fwd ? 1 : 0;
  const int ii = c->op == CT_OP_MAX_POOL2D ? 2 : c->op == CT_OP_MAX_POOL2D_BACKWARD ? 1 : -1;
  const bool with_ws = ii >= 0 && c->t[ii];
  p->args.push_back(tensor_arg(c, xi, fwd ? DNNL_ARG_SRC : DNNL_ARG_DIFF_SRC, !fwd, tdims(c->t[xi])));
  p->args.push_back(tensor_arg(c, yi, fwd ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST, fwd, tdims(c->t[yi])));
  const auto prop = fwd && !with_ws ? dnnl::prop_kind::forward_inference : dnnl::prop_kind::forward_training;
  auto fwd_pd = [&](const memory::desc& s, const memory::desc& o) {
    return dnnl::pooling_v2_forward::primitive_desc(
        dnnl::pooling_v2_forward::desc(prop, alg, s, o, strides, kernel, dil, pl, pr), attr, eng());
  };
  Arg &X = p->args[0], &Y = p->args[1];
  memory::desc ws_md;
  if (fwd) {
    dnnl::pooling_v2_forward::primitive_desc pd;
    bool ok = false;
    if (!X.copy && !Y.copy) try {
        pd = fwd_pd(X.user, Y.user);
        ok = std::strstr(pd.impl_info_str(), "ref") == nullptr;
      } catch (const dnnl::error&) {
      }
    if (!ok) pd = fwd_pd(dense_like(X.user), dense_like(Y.user));  // pooling takes no "any" source
    X.prim = pd.src_desc();
    Y.prim = pd.dst_desc();
    if (with_ws) {
      ws_md = pd.workspace_desc();
      // The offsets land in a dense int32 buffer, then become positions.
      p->args.push_back(internal_arg(DNNL_ARG_WORKSPACE, true,
                                     memory::desc(tdims(c->t[yi]), mdt::s32, memory::format_tag::abcd)));
      p->args.back().prim = ws_md;
      const size_t wi = p->args.size() - 1;
      const PoolIndex g = pool_index(d, c->t[xi], c->t[yi]);
      p->post.push_back([g, wi, ii](const Exec& e) {
        const int32_t* off = reinterpret_cast<const int32_t*>(e.user_ptr(wi));
        const int64_t PQ = g.P * g.Q;
        for_each_elem(e.t[ii], [&](int64_t l, char* ptr) {
          const int64_t pq = l % PQ, pp = pq / g.Q, q = pq % g.Q, o = off[l];
          const int64_t h = pp * g.SH - g.PT + (o / g.KW) * g.DH, w = q * g.SW - g.PL + (o % g.KW) * g.DW;
          const int64_t v = h * g.W + w;
          std::memcpy(ptr, &v, sizeof v);
        });
      });
    }
    finish(p, dnnl::pooling_v2_forward(pd), pd.scratchpad_desc());
    return;
  }
  auto bwd_pd = [&](const memory::desc& s, const memory::desc& o) {
    auto hint = fwd_pd(s, o);
    return std::make_pair(dnnl::pooling_v2_backward::primitive_desc(
                              dnnl::pooling_v2_backward::desc(alg, s, o, strides, kernel, dil, pl, pr), attr, eng(),
                              hint),
                          hint);
  };
  std::pair<dnnl::pooling_v2_backward::primitive_desc, dnnl::pooling_v2_forward::primitive_desc> pds;
  bool ok = false;
  if (!X.copy && !Y.copy) try {
      pds = bwd_pd(X.user, Y.user);
      ok = std::strstr(pds.first.impl_info_str(), "ref") == nullptr;
    } catch (const dnnl::error&) {
    }
  if (!ok) pds = bwd_pd(dense_like(X.user), dense_like(Y.user));
  auto& pd = pds.first;
  X.prim = pd.diff_src_desc();
  Y.prim = pd.diff_dst_desc();
  if (maxp) {
    ws_md = pd.workspace_desc();
    p->args.push_back(internal_arg(DNNL_ARG_WORKSPACE, false,
                                   memory::desc(tdims(c->t[yi]), mdt::s32, memory::format_tag::abcd)));
    p->args.back().prim = ws_md;
    const size_t wi = p->args.size() - 1;
    const PoolIndex g = pool_index(d, c->t[xi], c->t[yi]);
    // Positions -> window offsets, refusing a position outside its own
    // window (oneDNN would route that gradient elsewhere or drop it).
    p->checks.push_back([g, wi, ii](const Exec& e) -> CTStatus {
      int32_t* off = reinterpret_cast<int32_t*>(e.user_ptr(wi));
      const int64_t PQ = g.P * g.Q;
      int64_t bad = -1, bad_v = 0;
      for_each_elem(e.t[ii], [&](int64_t l, char* ptr) {
        int64_t v;
        std::memcpy(&v, ptr, sizeof v);
        const int64_t pq = l % PQ, pp = pq / g.Q, q = pq % g.Q;
        // Any int64 may come here: the offsets are formed only for a position inside x.
        int64_t dh = -1, dw = -1;
        if (v >= 0 && v < g.H * g.W) dh = v / g.W - (pp * g.SH - g.PT), dw = v % g.W - (q * g.SW - g.PL);
        const bool inside = dh >= 0 && dw >= 0 && dh % g.DH == 0 && dw % g.DW == 0 && dh / g.DH < g.KH &&
                            dw / g.DW < g.KW;
        if (!inside) {
          if (bad < 0) bad = l, bad_v = v;
          off[l] = 0;
          return;
        }
        off[l] = (int32_t)((dh / g.DH) * g.KW + dw / g.DW);
      });
      if (bad < 0) return CT_OK;
      const int64_t pq = bad % PQ;
      return fail(CT_ERR_INVALID_ARGUMENT,
                  "%s: indices element %" PRId64 " (output row %" PRId64 ", column %" PRId64
                  " of its plane) is %" PRId64 ", which is not a position h * W + w inside that output's window "
                  "(W=%" PRId64 "); max_pool2d writes only such positions",
                  e.fn, bad, pq / g.Q, pq % g.Q, bad_v, g.W);
    });
  }
  finish(p, dnnl::pooling_v2_backward(pd), pd.scratchpad_desc());
}

// Per-channel / per-row statistics: oneDNN keeps the variance, the caller
// the inverse standard deviation.
Hook var_to_inv(size_t vi, int ti, float eps) {
  return [vi, ti, eps](const Exec& e) {
    const float* v = reinterpret_cast<const float*>(e.user_ptr(vi));
    for_each_elem(e.t[ti], [&](int64_t l, char* ptr) {
      const float r = 1.0f / std::sqrt(v[l] + eps);
      std::memcpy(ptr, &r, sizeof r);
    });
  };
}
Hook inv_to_var(size_t vi, int ti, float eps) {
  return [vi, ti, eps](const Exec& e) {
    float* v = reinterpret_cast<float*>(e.user_ptr(vi));
    for_each_elem(e.t[ti], [&](int64_t l, char* ptr) {
      float r;
      std::memcpy(&r, ptr, sizeof r);
      v[l] = 1.0f / (r * r) - eps;
    });
  };
}
Hook fill(size_t vi, int64_t n, float value) {
  return [vi, n, value](const Exec& e) {
    float* v = reinterpret_cast<float*>(e.user_ptr(vi));
    std::fill(v, v + n, value);
  };
}

// batch_norm (x, mean, var, scale?, shift?, y), batch_norm_training
// (x, scale?, shift?, y, mean, invstd), batch_norm_backward
// (x, dy, mean, invstd, scale?, dx, dscale?, dshift?); layer_norm
// (x, scale?, shift?, y, mean?, rstd?), layer_norm_backward
// (x, dy, mean, rstd, scale?, dx, dscale?, dshift?).
void build_norm(const CTNNCall* c, Plan* p) {
  const bool ln = c->op == CT_OP_LAYER_NORM || c->op == CT_OP_LAYER_NORM_BACKWARD;
  const CTensor* x = c->t[0];
  const float eps = (float)(ln ? static_cast<const CTLayerNormDesc*>(c->desc)->epsilon : static_cast<const CTBatchNormDesc*>(c->desc)->epsilon);
  // The data view: (M, D) for layer norm, x's own dims for batch norm.
  dims data_dims = tdims(x), stat_dims;
  if (ln) {
    int64_t M = 1, D = 1;
    const int k = static_cast<const CTLayerNormDesc*>(c->desc)->normalized_ndim;
    for (int32_t i = 0; i < x->ndim; ++i) (i < x->ndim - k ? M : D) *= x->shape[i];
    data_dims = dims{M, D};
    stat_dims = dims{M};
  } else {
    stat_dims = dims{x->shape[1]};
  }
  const int64_t C = ln ? data_dims[1] : x->shape[1];
  const dims ch_dims{C};
  // Roles per op: indices of x, dy, y, dx, mean, var-or-invstd, scale, shift, dscale, dshift.
  int ix = 0, idy = -1, iy = -1, idx_ = -1, imean = -1, ivar = -1, iscale = -1, ishift = -1, idsc = -1, idsh = -1;
  bool inv = false;  // the caller's stats tensor is an inverse std (else a variance)
  bool training = false, backward = false;
  switch (c->op) {
    case CT_OP_BATCH_NORM: imean = 1, ivar = 2, iscale = 3, ishift = 4, iy = 5; break;
    case CT_OP_BATCH_NORM_TRAINING: iscale = 1, ishift = 2, iy = 3, imean = 4, ivar = 5, inv = training = true; break;
    case CT_OP_LAYER_NORM:
      iscale = 1, ishift = 2, iy = 3, imean = 4, ivar = 5, inv = true;
      training = c->t[4] || c->t[5];
      break;
    default:  // the two backward ops share a signature
      idy = 1, imean = 2, ivar = 3, iscale = 4, idx_ = 5, idsc = 6, idsh = 7, inv = backward = true;
  }
  const CTensor* scale = c->t[iscale];
  const bool use_scale = scale || (idsc >= 0 && c->t[idsc]);
  const bool use_shift = (ishift >= 0 && c->t[ishift]) || (idsh >= 0 && c->t[idsh]);
  auto flags = dnnl::normalization_flags::none;
  if (use_scale) flags = flags | dnnl::normalization_flags::use_scale;
  if (use_shift) flags = flags | dnnl::normalization_flags::use_shift;
  if (!ln && c->op == CT_OP_BATCH_NORM) flags = flags | dnnl::normalization_flags::use_global_stats;
  dnnl::primitive_attr attr = scratch_attr();

  p->args.push_back(tensor_arg(c, ix, DNNL_ARG_SRC, false, data_dims));
  if (backward) p->args.push_back(tensor_arg(c, idy, DNNL_ARG_DIFF_DST, false, data_dims));
  const int iout = backward ? idx_ : iy;
  p->args.push_back(tensor_arg(c, iout, backward ? DNNL_ARG_DIFF_SRC : DNNL_ARG_DST, true, data_dims));
  const size_t ax = 0, aout = p->args.size() - 1, ady = backward ? 1 : 0;
  // oneDNN's normalisations use one layout for x, dy, y and dx: x's when it
  // has a fast kernel, else dense.
  const memory::desc f32_stat(stat_dims, mdt::f32, memory::format_tag::a);
  const bool stats = training || backward || c->op == CT_OP_BATCH_NORM;
  const bool stats_in = backward || c->op == CT_OP_BATCH_NORM;
  if (stats) {
    if (imean >= 0 && c->t[imean])
      p->args.push_back(tensor_arg(c, imean, DNNL_ARG_MEAN, !stats_in, stat_dims));
    else
      p->args.push_back(internal_arg(DNNL_ARG_MEAN, !stats_in, f32_stat));
    if (!inv) {
      p->args.push_back(tensor_arg(c, ivar, DNNL_ARG_VARIANCE, false, stat_dims));
    } else {
      p->args.push_back(internal_arg(DNNL_ARG_VARIANCE, !stats_in, f32_stat));
      const size_t vi = p->args.size() - 1;
      if (c->t[ivar]) {
        if (stats_in) p->pre.push_back(inv_to_var(vi, ivar, eps));
        else p->post.push_back(var_to_inv(vi, ivar, eps));
      }
    }
  }
  if (use_scale) {
    if (scale) {
      p->args.push_back(tensor_arg(c, iscale, DNNL_ARG_SCALE, false, ch_dims));
    } else {
      p->args.push_back(internal_arg(DNNL_ARG_SCALE, false, memory::desc(ch_dims, mdt::f32, memory::format_tag::a)));
      p->pre.push_back(fill(p->args.size() - 1, C, 1.0f));  // scale NULL means 1
    }
  }
  if (use_shift && !backward) p->args.push_back(tensor_arg(c, ishift, DNNL_ARG_SHIFT, false, ch_dims));
  if (use_shift && backward) {  // oneDNN 2.6 wants a shift argument, which the gradient does not read
    p->args.push_back(internal_arg(DNNL_ARG_SHIFT, false, memory::desc(ch_dims, mdt::f32, memory::format_tag::a)));
    p->pre.push_back(fill(p->args.size() - 1, C, 0.0f));
  }
  auto diff_arg = [&](int ti, int darg) {
    if (ti >= 0 && c->t[ti])
      p->args.push_back(tensor_arg(c, ti, darg, true, ch_dims));
    else
      p->args.push_back(internal_arg(darg, true, memory::desc(ch_dims, mdt::f32, memory::format_tag::a)));
  };
  if (backward && use_scale) diff_arg(idsc, DNNL_ARG_DIFF_SCALE);
  if (backward && use_shift) diff_arg(idsh, DNNL_ARG_DIFF_SHIFT);

  Arg& X = p->args[ax];
  const dims dense = dense_strides(data_dims);
  const memory::desc dense_md(data_dims, X.user.data_type(), dense);
  auto prop = c->op == CT_OP_BATCH_NORM || (!training && !backward) ? dnnl::prop_kind::forward_inference
                                                                     : dnnl::prop_kind::forward_training;
  // allow_ref = false rejects oneDNN's reference kernels, so that a layout
  // with only those falls back to the dense one.
  auto create = [&](const memory::desc& md, bool allow_ref) -> std::pair<dnnl::primitive, memory::desc> {
    auto check = [&](const char* impl) {
      if (!allow_ref && std::strstr(impl, "ref")) throw std::string(impl);
    };
    const dnnl::primitive_attr fattr = backward ? dnnl::primitive_attr() : attr;
    const auto bprop = (use_scale || use_shift) ? dnnl::prop_kind::backward : dnnl::prop_kind::backward_data;
    if (ln) {
      dnnl::layer_normalization_forward::primitive_desc fpd(
          dnnl::layer_normalization_forward::desc(prop, md, f32_stat, eps, flags), fattr, eng());
      if (!backward) {
        check(fpd.impl_info_str());
        return {dnnl::layer_normalization_forward(fpd), fpd.scratchpad_desc()};
      }
      dnnl::layer_normalization_backward::primitive_desc bpd(
          dnnl::layer_normalization_backward::desc(bprop, md, md, f32_stat, eps, flags), attr, eng(), fpd);
      check(bpd.impl_info_str());
      return {dnnl::layer_normalization_backward(bpd), bpd.scratchpad_desc()};
    }
    dnnl::batch_normalization_forward::primitive_desc fpd(dnnl::batch_normalization_forward::desc(prop, md, eps, flags),
                                                          fattr, eng());
    if (!backward) {
      check(fpd.impl_info_str());
      return {dnnl::batch_normalization_forward(fpd), fpd.scratchpad_desc()};
    }
    dnnl::batch_normalization_backward::primitive_desc bpd(
        dnnl::batch_normalization_backward::desc(bprop, md, md, eps, flags), attr, eng(), fpd);
    check(bpd.impl_info_str());
    return {dnnl::batch_normalization_backward(bpd), bpd.scratchpad_desc()};
  };
  std::pair<dnnl::primitive, memory::desc> made;
  bool ok = false;
  // oneDNN 2.6's normalisation kernels assume the data has no gaps (padded
  // rows give wrong results, not an error): anything else goes dense.
  const bool user_ok = !X.copy && is_dense(X.user);
  if (user_ok) try {
      made = create(X.user, false);
      ok = true;
    } catch (const std::string&) {
    } catch (const dnnl::error&) {
    }
  const memory::desc data_md = ok ? X.user : dense_md;
  if (!ok) made = create(dense_md, true);
  X.prim = data_md;
  p->args[aout].prim = data_md;
  if (backward) p->args[ady].prim = data_md;
  // Stats, scale and shift: oneDNN wants them dense float32 (reorders otherwise).
  for (size_t i = 0; i < p->args.size(); ++i)
    if (i != ax && i != aout && !(backward && i == ady)) {
      Arg& a = p->args[i];
      a.prim = memory::desc(a.user.dims(), mdt::f32, dense_strides(a.user.dims()));
    }
  finish(p, made.first, made.second);
}

// ---- empty inputs -----------------------------------------------------------

bool has_zero_extent(const CTensor* t) {
  for (int32_t i = 0; i < t->ndim; ++i)
    if (t->shape[i] == 0) return true;
  return false;
}

double load_value(const char* ptr, int32_t dt) {
  uint16_t h;
  float f;
  switch (dt) {
    case CT_DT_BFLOAT16: std::memcpy(&h, ptr, 2); return bf16_to_float(h);
    case CT_DT_FLOAT16: std::memcpy(&h, ptr, 2); return f16_to_float(h);
    default: std::memcpy(&f, ptr, 4); return f;
  }
}
void store_value(char* ptr, int32_t dt, double v) {
  uint16_t h;
  float f;
  switch (dt) {
    case CT_DT_BFLOAT16: h = double_to_bf16(v); std::memcpy(ptr, &h, 2); break;
    case CT_DT_FLOAT16: h = double_to_f16(v); std::memcpy(ptr, &h, 2); break;
    default: f = (float)v; std::memcpy(ptr, &f, 4); break;
  }
}
// v rounded to dtype dt, as a store and a load would.
double round_to(int32_t dt, double v) {
  char b[4];
  store_value(b, dt, v);
  return load_value(b, dt);
}

// Every element of t (any strides; the bytes between elements untouched) set to v.
Hook fill_tensor(int ti, double v) {
  return [ti, v](const Exec& e) {
    const CTensor* t = e.t[ti];
    const int32_t dt = dtype_index(t->dtype);
    for_each_elem(t, [&](int64_t, char* ptr) { store_value(ptr, dt, v); });
  };
}

// The activations of CTActivation on one value, in double.
double activate(int32_t act, double v) {
  switch (act) {
    case CT_ACTIVATION_RELU: return v > 0 ? v : 0.0;
    case CT_ACTIVATION_GELU: return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case CT_ACTIVATION_GELU_TANH:
      return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case CT_ACTIVATION_SIGMOID: return 1.0 / (1.0 + std::exp(-v));
    case CT_ACTIVATION_TANH: return std::tanh(v);
    default: return v;
  }
}

// out = act(bias) broadcast to out (conv2d: bias along dim 1; matmul: bias
// aligned at the last dims), or act(0): bias rounded to out's dtype (as a
// cast), the activation in double, rounded once. The backend's own loop: it
// calls no public entry point.
Hook bias_activation(int bi, int oi, bool channel_dim1, int32_t act) {
  return [bi, oi, channel_dim1, act](const Exec& e) {
    const CTensor* bias = bi >= 0 ? e.t[bi] : nullptr;
    const CTensor* out = e.t[oi];
    const int32_t ot = dtype_index(out->dtype), bt = bias ? dtype_index(bias->dtype) : ot;
    const int32_t nd = out->ndim;
    int64_t bstride[CT_MAX_NDIM] = {0};  // bias's stride (elements) along each dim of out, 0 where it broadcasts
    if (bias)
      for (int32_t i = 0; i < nd; ++i) {
        const int32_t j = channel_dim1 ? (i == 1 ? 0 : -1) : i - (nd - bias->ndim);
        bstride[i] = j < 0 || bias->shape[j] == 1 ? 0 : ct_stride_of(bias, j);
      }
    const char* bbase = bias ? data_of(bias) : nullptr;
    const int64_t bsz = bias ? bias->dtype.bits / 8 : 0;
    for_each_elem(out, [&](int64_t l, char* ptr) {
      double v = 0.0;
      if (bias) {
        int64_t off = 0, rest = l;
        for (int32_t i = nd - 1; i >= 0; --i) {
          off += (rest % out->shape[i]) * bstride[i];
          rest /= out->shape[i];
        }
        v = round_to(ot, load_value(bbase + off * bsz, bt));
      }
      store_value(ptr, ot, activate(act, v));
    });
  };
}

// dbias[k] = the sum of dy[n, k, p, q] over (n, p, q), in double, rounded once.
Hook channel_sums(int dyi, int oi) {
  return [dyi, oi](const Exec& e) {
    const CTensor *dy = e.t[dyi], *out = e.t[oi];
    const int64_t K = dy->shape[1], PQ = dy->shape[2] * dy->shape[3];
    std::vector<double> sum((size_t)K, 0.0);
    const int32_t dt = dtype_index(dy->dtype), ot = dtype_index(out->dtype);
    for_each_elem(dy, [&](int64_t l, char* ptr) { sum[(size_t)((l / PQ) % K)] += load_value(ptr, dt); });
    for_each_elem(out, [&](int64_t l, char* ptr) { store_value(ptr, ot, sum[(size_t)l]); });
  };
}

// Calls with an empty input and a non-empty output, which core hands on (it
// skips only calls whose every output is empty, and does matmul's K = 0
// itself). oneDNN takes no empty tensors, so such a plan has no primitive:
// its hooks write what PyTorch does, a sum over nothing being 0:
//   matmul (K = 0) and conv2d (C = 0)  out = act(bias), or act(0) (torch's linear)
//   conv2d_backward_data (K = 0)       dx = 0
//   conv2d_backward_weight             dw = 0 (N = 0), dbias = dy summed over (N, P, Q)
//   batch_norm_training (N*H*W = 0)    mean = 0, invstd = NaN  } torch's layer_norm: Welford's mean of
//   layer_norm (normalized size 0)     mean = 0, rstd = NaN    } nothing is 0, its variance 0/0
//   batch_norm_backward, layer_norm_backward   dscale = dshift = 0
// *handled is false when no input is empty (the ordinary plan); *why says
// why not when a case has no rule.
CTStatus build_empty(const CTNNCall* c, Plan* p, bool* handled, std::string* why) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (!host() || host()->op_info(c->op, &info) != CT_OK) {
    *why = "the host does not describe this op";
    return CT_ERR_INTERNAL;
  }
  const int32_t count = c->num_tensors, inputs = info.num_inputs;
  bool any_in = false;
  for (int i = 0; i < inputs && i < count; ++i) any_in = any_in || (c->t[i] && has_zero_extent(c->t[i]));
  *handled = any_in;
  if (!any_in) return CT_OK;
  p->has_prim = false;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int i = inputs; i < count; ++i) {
    if (!c->t[i] || has_zero_extent(c->t[i])) continue;
    switch (c->op * 8 + i) {
      case CT_OP_MATMUL * 8 + 3:
        p->post.push_back(bias_activation(c->t[2] ? 2 : -1, 3, false,
                                          static_cast<const CTMatmulDesc*>(c->desc)->activation));
        break;
      case CT_OP_CONV2D * 8 + 3:
        p->post.push_back(bias_activation(c->t[2] ? 2 : -1, 3, true,
                                          static_cast<const CTConv2dDesc*>(c->desc)->activation));
        break;
      case CT_OP_CONV2D_BACKWARD_DATA * 8 + 2:
      case CT_OP_CONV2D_BACKWARD_WEIGHT * 8 + 2:
      case CT_OP_BATCH_NORM_BACKWARD * 8 + 6:
      case CT_OP_BATCH_NORM_BACKWARD * 8 + 7:
      case CT_OP_LAYER_NORM_BACKWARD * 8 + 6:
      case CT_OP_LAYER_NORM_BACKWARD * 8 + 7: p->post.push_back(fill_tensor(i, 0.0)); break;
      case CT_OP_CONV2D_BACKWARD_WEIGHT * 8 + 3: p->post.push_back(channel_sums(1, 3)); break;
      case CT_OP_BATCH_NORM_TRAINING * 8 + 4:
      case CT_OP_LAYER_NORM * 8 + 4: p->post.push_back(fill_tensor(i, 0.0)); break;
      case CT_OP_BATCH_NORM_TRAINING * 8 + 5:
      case CT_OP_LAYER_NORM * 8 + 5: p->post.push_back(fill_tensor(i, nan)); break;
      default: {  // no such shapes pass core's checks (an empty input makes these outputs empty too)
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s with an empty input and a non-empty output %d (of %s) has no rule",
                      info.name, i, info.tensor_names);
        *why = buf;
        return CT_ERR_INTERNAL;
      }
    }
  }
  return CT_OK;
}

// ---- geometry oneDNN takes --------------------------------------------------

// oneDNN 2.6 refuses (invalid_arguments) convolution and pooling descriptors
// with a stride, dilation, padding or (dilated) kernel above 2^31 - 1, and an
// average without the padding whose dilation is larger than the input. Core
// accepts any int64 whose arithmetic fits: here a stride that leaves one
// output window and the dilation of a one-tap kernel, which change nothing,
// are first made small (in the plan's own copy of the descriptor, *conv or
// *pool); what is still too large is CT_ERR_UNSUPPORTED naming the field
// (not CT_ERR_BACKEND from a descriptor oneDNN refuses).
CTStatus fit_geometry(const CTNNCall* c, CTConv2dDesc* conv_d, CTPool2dDesc* pool_d, std::string* why) {
  const bool conv = c->op == CT_OP_CONV2D || c->op == CT_OP_CONV2D_BACKWARD_DATA || c->op == CT_OP_CONV2D_BACKWARD_WEIGHT;
  const bool pool = c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_MAX_POOL2D_BACKWARD || c->op == CT_OP_AVG_POOL2D ||
                    c->op == CT_OP_AVG_POOL2D_BACKWARD;
  if (!conv && !pool) return CT_OK;
  const int64_t kMax = INT32_MAX;
  int64_t *stride, *dilation, *pb, *pe;
  const CTensor *x, *y, *w = nullptr;
  if (conv) {
    const int ix = c->op == CT_OP_CONV2D_BACKWARD_DATA ? 2 : 0,
              iy = c->op == CT_OP_CONV2D ? 3 : c->op == CT_OP_CONV2D_BACKWARD_DATA ? 0 : 1;
    const int iw = c->op == CT_OP_CONV2D_BACKWARD_WEIGHT ? 2 : 1;
    x = c->t[ix], y = c->t[iy], w = c->t[iw];
    std::memcpy(conv_d, c->desc, sizeof *conv_d);
    stride = conv_d->stride, dilation = conv_d->dilation, pb = conv_d->pad_begin, pe = conv_d->pad_end;
  } else {
    const bool fwd = c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_AVG_POOL2D;
    x = c->t[fwd ? 0 : c->op == CT_OP_MAX_POOL2D_BACKWARD ? 2 : 1], y = c->t[fwd ? 1 : 0];
    std::memcpy(pool_d, c->desc, sizeof *pool_d);
    stride = pool_d->stride, dilation = pool_d->dilation, pb = pool_d->pad_begin, pe = pool_d->pad_end;
  }
  for (int i = 0; i < 2; ++i) {
    const int64_t H = x->shape[2 + i], P = y->shape[2 + i], k = conv ? w->shape[2 + i] : pool_d->kernel[i];
    if (k == 1) dilation[i] = 1;
    const int64_t ext = dilation[i] * (k - 1) + 1, given_stride = stride[i];  // core checked that these fit in int64
    if (P == 1 && stride[i] > kMax) stride[i] = H + pb[i] + pe[i] - ext + 1;  // any stride past the span will do
    struct {
      const char* what;
      int64_t v;
      bool ok;
    } const f[] = {{"desc->pad_begin", pb[i], pb[i] <= kMax},
                   {"desc->pad_end", pe[i], pe[i] <= kMax},
                   {conv ? "the kernel's extent" : "desc->kernel", k, k <= kMax},
                   {"desc->dilation", dilation[i], dilation[i] <= kMax},
                   {"the dilated window", ext, ext <= kMax},
                   {"desc->stride", given_stride, stride[i] <= kMax}};
    for (const auto& e : f)
      if (!e.ok) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "%s[%d]=%" PRId64 " is beyond oneDNN %d.%d, which takes strides, dilations, paddings and "
                      "(dilated) kernels up to 2^31-1",
                      e.what, i, e.v, DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR);
        *why = buf;
        return CT_ERR_UNSUPPORTED;
      }
    if (pool && pool_d->count_include_pad == 0 &&
        (c->op == CT_OP_AVG_POOL2D || c->op == CT_OP_AVG_POOL2D_BACKWARD) && dilation[i] > H) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "oneDNN %d.%d has no average pooling without the padding (count_include_pad=0) whose "
                    "desc->dilation[%d]=%" PRId64 " exceeds the input's extent %" PRId64 " (x.shape[%d])",
                    DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR, i, dilation[i], H, 2 + i);
      *why = buf;
      return CT_ERR_UNSUPPORTED;
    }
  }
  return CT_OK;
}

// ---- the backend slots ------------------------------------------------------

// Why oneDNN failed, as the message's tail ("oneDNN 2.6 has no ... (...)").
CTStatus backend_reason(const char* what, const dnnl::error& e, std::string* why) {
  char buf[512];
  if (e.status == dnnl_unimplemented) {
    std::snprintf(buf, sizeof buf, "oneDNN %d.%d has no %s implementation for this case on this CPU (%s)",
                  DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR, what, e.what());
    *why = buf;
    return CT_ERR_UNSUPPORTED;
  }
  std::snprintf(buf, sizeof buf, "oneDNN failed in %s: %s (status %d)", what, e.what(), (int)e.status);
  *why = buf;
  return CT_ERR_BACKEND;
}

// Builds the plan, or says why not (without setting the thread's message).
CTStatus create(const CTNNCall* c, std::unique_ptr<Plan>* out, int64_t* primitives, std::string* why) {
  std::unique_ptr<Plan> p(new Plan);
  p->op = c->op;
  p->nthreads = (int)c->variant;
  bool empty = false;
  if (CTStatus s = build_empty(c, p.get(), &empty, why)) return s;
  if (empty) {  // no primitive, no workspace: the hooks write the outputs
    *out = std::move(p);
    return CT_OK;
  }
  // The geometry oneDNN takes, in the plan's copy of the descriptor.
  CTConv2dDesc conv_d;
  CTPool2dDesc pool_d;
  if (CTStatus s = fit_geometry(c, &conv_d, &pool_d, why)) return s;
  CTNNCall fitted = *c;
  if (c->op == CT_OP_CONV2D || c->op == CT_OP_CONV2D_BACKWARD_DATA || c->op == CT_OP_CONV2D_BACKWARD_WEIGHT)
    fitted.desc = &conv_d;
  else if (c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_MAX_POOL2D_BACKWARD || c->op == CT_OP_AVG_POOL2D ||
           c->op == CT_OP_AVG_POOL2D_BACKWARD)
    fitted.desc = &pool_d;
  c = &fitted;
  try {
    ThreadScope threads(p->nthreads);
    switch (c->op) {
      case CT_OP_MATMUL: build_matmul(c, p.get()); break;
      case CT_OP_CONV2D:
      case CT_OP_CONV2D_BACKWARD_DATA:
      case CT_OP_CONV2D_BACKWARD_WEIGHT: build_conv(c, p.get()); break;
      case CT_OP_MAX_POOL2D:
      case CT_OP_MAX_POOL2D_BACKWARD:
      case CT_OP_AVG_POOL2D:
      case CT_OP_AVG_POOL2D_BACKWARD: build_pool(c, p.get()); break;
      case CT_OP_BATCH_NORM:
      case CT_OP_BATCH_NORM_TRAINING:
      case CT_OP_BATCH_NORM_BACKWARD:
      case CT_OP_LAYER_NORM:
      case CT_OP_LAYER_NORM_BACKWARD: build_norm(c, p.get()); break;
      default:
        *why = "the cpu backend has no NN kernel for this op";
        return CT_ERR_INTERNAL;
    }
  } catch (const dnnl::error& e) {
    *primitives = p->primitives;
    return backend_reason(op_name(c->op), e, why);
  }
  *primitives = p->primitives;
  *out = std::move(p);
  return CT_OK;
}

// The ops this file implements, by name (a new NN op is not one of them).
bool known_nn_op(int32_t op) {
  switch (op) {
    case CT_OP_MATMUL: case CT_OP_CONV2D: case CT_OP_CONV2D_BACKWARD_DATA: case CT_OP_CONV2D_BACKWARD_WEIGHT:
    case CT_OP_MAX_POOL2D: case CT_OP_MAX_POOL2D_BACKWARD: case CT_OP_AVG_POOL2D: case CT_OP_AVG_POOL2D_BACKWARD:
    case CT_OP_BATCH_NORM: case CT_OP_BATCH_NORM_TRAINING: case CT_OP_BATCH_NORM_BACKWARD: case CT_OP_LAYER_NORM:
    case CT_OP_LAYER_NORM_BACKWARD:
      return true;
    default:
      return false;
  }
}

// Whether oneDNN runs op for dtype dt here: asked once per pair with a tiny
// problem, since the answer depends on the CPU's ISA, not on shapes.
bool probe(int32_t op, int32_t dt, std::string* why) {
  const CTDataType types[CT_DT_COUNT] = {{CT_BOOL, 8, 1},   {CT_INT, 8, 1},     {CT_INT, 16, 1},   {CT_INT, 32, 1},
                                         {CT_INT, 64, 1},   {CT_UINT, 8, 1},    {CT_FLOAT, 16, 1}, {CT_BFLOAT, 16, 1},
                                         {CT_FLOAT, 32, 1}, {CT_FLOAT, 64, 1}};
  const CTDataType f32 = types[CT_DT_FLOAT32], i64 = types[CT_DT_INT64];
  int64_t s4[4] = {2, 4, 6, 6}, w4[4] = {4, 4, 3, 3}, o4[4] = {2, 4, 4, 4}, p4[4] = {2, 4, 3, 3}, c1[1] = {4},
          m2[2] = {8, 8};
  auto T = [&](int nd, int64_t* shape, CTDataType type) {
    CTensor t;
    std::memset(&t, 0, sizeof t);
    t.device.device_type = CT_CPU;
    t.ndim = nd;
    t.shape = shape;
    t.dtype = type;
    return t;
  };
  const CTDataType x = types[dt];
  CTensor ts[8];
  CTNNCall c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.fn = "probe";
  c.op = op;
  c.dt = dt;
  c.variant = 1;
  CTMatmulDesc mm = {sizeof(CTMatmulDesc), 0};
  CTConv2dDesc conv;
  std::memset(&conv, 0, sizeof conv);
  conv.struct_size = sizeof conv;
  conv.groups = 1;
  conv.stride[0] = conv.stride[1] = conv.dilation[0] = conv.dilation[1] = 1;
  CTPool2dDesc pool;
  std::memset(&pool, 0, sizeof pool);
  pool.struct_size = sizeof pool;
  pool.kernel[0] = pool.kernel[1] = pool.stride[0] = pool.stride[1] = 2;
  pool.dilation[0] = pool.dilation[1] = 1;
  CTBatchNormDesc bn = {sizeof(CTBatchNormDesc), 0, 1e-5};
  CTLayerNormDesc ln = {sizeof(CTLayerNormDesc), 1, 1e-5};
  auto set = [&](int i, CTensor t) {
    ts[i] = t;
    c.t[i] = &ts[i];
  };
  switch (op) {
    case CT_OP_MATMUL: c.desc = &mm, set(0, T(2, m2, x)), set(1, T(2, m2, x)), set(3, T(2, m2, x)); break;
    case CT_OP_CONV2D: c.desc = &conv, set(0, T(4, s4, x)), set(1, T(4, w4, x)), set(3, T(4, o4, x)); break;
    case CT_OP_CONV2D_BACKWARD_DATA:
      c.desc = &conv, set(0, T(4, o4, x)), set(1, T(4, w4, x)), set(2, T(4, s4, x));
      break;
    case CT_OP_CONV2D_BACKWARD_WEIGHT:
      c.desc = &conv, set(0, T(4, s4, x)), set(1, T(4, o4, x)), set(2, T(4, w4, x));
      break;
    case CT_OP_MAX_POOL2D: c.desc = &pool, set(0, T(4, s4, x)), set(1, T(4, p4, x)), set(2, T(4, p4, i64)); break;
    case CT_OP_MAX_POOL2D_BACKWARD:
      c.desc = &pool, set(0, T(4, p4, x)), set(1, T(4, p4, i64)), set(2, T(4, s4, x));
      break;
    case CT_OP_AVG_POOL2D: c.desc = &pool, set(0, T(4, s4, x)), set(1, T(4, p4, x)); break;
    case CT_OP_AVG_POOL2D_BACKWARD: c.desc = &pool, set(0, T(4, p4, x)), set(1, T(4, s4, x)); break;
    case CT_OP_BATCH_NORM:
      c.desc = &bn, set(0, T(4, s4, x)), set(1, T(1, c1, f32)), set(2, T(1, c1, f32)), set(5, T(4, s4, x));
      break;
    case CT_OP_BATCH_NORM_TRAINING:
      c.desc = &bn, set(0, T(4, s4, x)), set(3, T(4, s4, x)), set(4, T(1, c1, f32)), set(5, T(1, c1, f32));
      break;
    case CT_OP_BATCH_NORM_BACKWARD:
      c.desc = &bn, set(0, T(4, s4, x)), set(1, T(4, s4, x)), set(2, T(1, c1, f32)), set(3, T(1, c1, f32)),
      set(5, T(4, s4, x));
      break;
    case CT_OP_LAYER_NORM: c.desc = &ln, set(0, T(2, m2, x)), set(3, T(2, m2, x)); break;
    case CT_OP_LAYER_NORM_BACKWARD:
      c.desc = &ln, set(0, T(2, m2, x)), set(1, T(2, m2, x)), set(2, T(1, m2, f32)), set(3, T(1, m2, f32)),
      set(5, T(2, m2, x));
      break;
    default: *why = "not an NN op of the cpu backend"; return false;
  }
  c.num_tensors = 8;
  std::unique_ptr<Plan> p;
  int64_t prims = 0;
  return create(&c, &p, &prims, why) == CT_OK;
}

}  // namespace

CTStatus nn_supports(const CTSupportQuery* q) {
  const int32_t op = q->op, dt = q->dt;
  if (!known_nn_op(op) || !((CT_DTS_NN >> dt) & 1u))
    return fail(CT_ERR_UNSUPPORTED, "%s: the cpu backend has no %s kernel for %s", q->fn, op_name(op), dtype_name(dt));
  if (dt == CT_DT_FLOAT32) return CT_OK;
  static std::once_flag once[CT_OP_END_][CT_DT_COUNT];
  static std::string why[CT_OP_END_][CT_DT_COUNT];
  static bool ok[CT_OP_END_][CT_DT_COUNT];
  std::call_once(once[op][dt], [&] { ok[op][dt] = probe(op, dt, &why[op][dt]); });
  if (ok[op][dt]) return CT_OK;
  return fail(CT_ERR_UNSUPPORTED, "%s: %s is not available for %s on this CPU: %s", q->fn, op_name(op),
              dtype_name(dt), why[op][dt].c_str());
}

// The workspace queries take no stream and answer for the default thread
// count, which is therefore also the most a call uses (scratch grows with
// threads): a stream may ask for fewer, never more.
CTStatus nn_variant(const char* fn, int32_t, void* stream, int64_t* variant) {
  CTCpuStream copy;
  const CTCpuStream* s = nullptr;
  if (CTStatus st = resolve_stream(fn, stream, &copy, &s)) return st;
  const int dflt = default_threads();
  *variant = s && s->num_threads > 0 && s->num_threads < dflt ? s->num_threads : dflt;
  return CT_OK;
}

CTStatus nn_plan_create(const CTNNCall* c, void** impl, size_t* workspace_bytes, int64_t* primitives) {
  std::unique_ptr<Plan> p;
  std::string why;
  *primitives = 0;
  if (CTStatus s = create(c, &p, primitives, &why)) return fail(s, "%s: %s", c->fn, why.c_str());
  *workspace_bytes = p->total;
  *impl = p.release();
  return CT_OK;
}

CTStatus nn_plan_execute(void* impl, const CTNNCall* call, void* workspace, size_t) {
  Plan* p = static_cast<Plan*>(impl);
  try {
    return execute(p, call->fn, call->t, workspace);
  } catch (const dnnl::error& e) {
    return fail(CT_ERR_BACKEND, "%s: oneDNN failed while running %s: %s (status %d)", call->fn, op_name(p->op),
                e.what(), (int)e.status);
  } catch (const CopyFailed& f) {
    return f.status;
  } catch (const std::bad_alloc&) {
    return fail(CT_ERR_OUT_OF_MEMORY, "%s: out of memory in the cpu backend", call->fn);
  } catch (const std::exception& e) {
    return fail(CT_ERR_INTERNAL, "%s: the cpu backend failed: %s", call->fn, e.what());
  }
}

void nn_plan_destroy(void* impl) { delete static_cast<Plan*>(impl); }

}  // namespace cpu
}  // namespace ct
