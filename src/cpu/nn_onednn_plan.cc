// nn_onednn_plan.cc — the machinery of the oneDNN NN plans (nn_onednn_internal.h):
// views of the caller's tensors as memory descriptors, the workspace
// layout with its reorders and dense copies, and running a plan. What the
// other files use is declared, with its comment, in that header.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "cpu/engine.h"
#include "cpu/nn_onednn_internal.h"

namespace ct {
namespace cpu {
namespace onednn {

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

// ---- views ------------------------------------------------------------------

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

memory::desc dense_like(const memory::desc& md) {
  return memory::desc(md.dims(), md.data_type(), dense_strides(md.dims()));
}

// ---- plans ------------------------------------------------------------------

char* Exec::user_ptr(size_t i) const {
  const Arg& a = plan->args[i];
  if (a.tensor < 0 || a.copy) return base + a.user_off;
  return data_of(t[a.tensor]);
}
char* Exec::prim_ptr(size_t i) const { return plan->args[i].reorder ? base + plan->args[i].prim_off : user_ptr(i); }

namespace {

memory::desc user_md(const dims& d, mdt type, const dims& strides) { return memory::desc(d, type, strides); }

size_t align64(size_t n) { return (n + 63) & ~size_t(63); }

}  // namespace

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

dnnl::primitive_attr scratch_attr() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

void finish(Plan* p, const dnnl::primitive& prim, const memory::desc& scratch) {
  p->prim = prim;
  p->prim_scratch = scratch;
  if (prim) ++p->primitives;
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

namespace {

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

}  // namespace

CTStatus execute(Plan* p, const char* fn, const CTensor* const* t, void* workspace) {
  ThreadScope threads(p->nthreads);
  Exec e;
  e.fn = fn;
  e.plan = p;
  e.t = t;
  e.base = reinterpret_cast<char*>(((uintptr_t)workspace + 63) & ~uintptr_t(63));
  if (!p->has_prim) {
    for (const Check& k : p->checks)
      if (CTStatus s = k(e)) return s;
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
  if (!c) {
    // Room in the pool for this context's return, made before anything is
    // written: a push_back that allocated after the outputs were written
    // would fail the call (CT_ERR_OUT_OF_MEMORY) with its outputs changed.
    c = make_ctx(p);
    std::lock_guard<std::mutex> lock(p->mu);
    p->pool.reserve(p->contexts + 1);
    ++p->contexts;
  }
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
  if (p->body) {
    c->strm.wait();
    p->body(e);
  } else {
    p->prim.execute(c->strm, c->args);
  }
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

}  // namespace onednn
}  // namespace cpu
}  // namespace ct
