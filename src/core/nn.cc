// nn.cc — category 3: NN ops with a workspace query, plans and the plan
// cache. Core validates the call (descriptor, shapes, dtypes, layouts), then
// the backend builds a plan for that call shape once; direct calls find it
// in a thread-safe LRU cache keyed by everything the plan depends on.
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/debug.h"
#include "core/backends.h"
#include "core/error.h"
#include "core/library.h"
#include "core/registry.h"
#include "core/nn_internal.h"
#include "core/validate.h"


struct CTPlan {
  CTKernelInterface kern;  // a copy: the registry's backends may be replaced while the plan lives
  void* impl = nullptr;  // nullptr when every output is empty: nothing to run
  bool k_zero = false;   // a matmul with K = 0: out = act(bias or 0), no backend plan
  ct::NNCall call;       // descriptors; t[] point into sig below
  size_t workspace = 0;
  struct Sig {
    bool present;
    CTensor view;
    int64_t shape[CT_MAX_NDIM];
    int64_t strides[CT_MAX_NDIM];
  } sig[8];
  const ct::Library* owner = nullptr;  // pinned while the plan lives (a plugin's plan keeps its code loaded)
  ~CTPlan() {
    if (impl) kern.nn_plan_destroy(impl);
    if (owner) ct::unpin(owner);
  }
};

namespace ct {
namespace {

// Nothing to compute when every output is empty: the call succeeds at once.
// A matmul with K = 0 sums nothing: out = act(bias) or act(0), through the
// library's own ct_cast and ct_unary (k_zero_matmul below). Any other empty
// input with a non-empty output goes to the backend's plan, which writes
// what PyTorch gives there (a sum over nothing is 0; see SEMANTICS.md): core
// never writes device memory itself.
void empty_case(const NNCall* c, bool* all_empty, bool* k_zero) {
  const Names& n = names_of(c->op);
  bool any_in = false, all_out = true;
  for (int i = 0; i < n.count; ++i) {
    if (!c->t[i]) continue;
    bool e = false;  // a zero extent (a product of the extents could overflow int64 first)
    for (int32_t d = 0; d < c->t[i]->ndim; ++d) e = e || c->t[i]->shape[d] == 0;
    if (i < n.inputs) any_in = any_in || e;
    else all_out = all_out && e;
  }
  *all_empty = all_out;
  *k_zero = c->op == CT_OP_MATMUL && any_in && !all_out;
}

// ---- plans and the cache ----------------------------------------------------

std::atomic<int64_t> g_primitives{0}, g_hits{0}, g_misses{0};

CTStatus make_plan(const NNCall& c, const CTKernelInterface* k, void* stream, std::unique_ptr<CTPlan>* out) {
  if (c.owner && !pin(c.owner)) return library_gone(c.fn, c.owner);
  std::unique_ptr<CTPlan> p(new CTPlan);
  p->owner = c.owner;
  p->kern = *k;
  p->call = c;
  for (int i = 0; i < kMaxTensors; ++i) {
    CTPlan::Sig& s = p->sig[i];
    s.present = i < c.num_tensors && c.t[i];
    p->call.t[i] = nullptr;
    if (!s.present) continue;
    const CTensor* t = c.t[i];
    s.view = *t;
    s.view.data = nullptr;
    s.view.byte_offset = 0;
    for (int32_t d = 0; d < t->ndim; ++d) {
      s.shape[d] = t->shape[d];
      s.strides[d] = ct_stride_of(t, d);
    }
    s.view.shape = s.shape;
    s.view.strides = s.strides;
    p->call.t[i] = &s.view;
  }
  bool empty = false;
  empty_case(&p->call, &empty, &p->k_zero);
  if (!empty && !p->k_zero) {
    int64_t prims = 0;
    const CTNNCall kc = backend_call(p->call, p->call.t, stream);
    CTStatus s = k->nn_plan_create(&kc, &p->impl, &p->workspace, &prims);
    g_primitives += prims;
    if (s) return s;
  }
  *out = std::move(p);
  return CT_OK;
}

// The cache key: everything a plan depends on, as bytes.
void append(std::string* k, const void* p, size_t n) { k->append(static_cast<const char*>(p), n); }
void make_key(const NNCall& c, std::string* k) {
  k->clear();
  append(k, &c.op, sizeof c.op);
  append(k, &c.variant, sizeof c.variant);
  size_t dsize = 0;
  const void* d = desc_of(c, &dsize);
  if (d) append(k, d, dsize);
  for (int i = 0; i < c.num_tensors; ++i) {
    const CTensor* t = c.t[i];
    const int32_t nd = t ? t->ndim : -1;
    append(k, &nd, sizeof nd);
    if (!t) continue;
    append(k, &t->dtype, sizeof t->dtype);
    append(k, &t->device, sizeof t->device);
    for (int32_t d = 0; d < t->ndim; ++d) {
      const int64_t v[2] = {t->shape[d], ct_stride_of(t, d)};
      append(k, v, sizeof v);
    }
  }
}

class PlanCache {
 public:
  std::shared_ptr<CTPlan> find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return it->second.first;
  }
  std::shared_ptr<CTPlan> insert(const std::string& key, std::shared_ptr<CTPlan> p) {
    std::lock_guard<std::mutex> lock(mu_);
    if (capacity_ == 0) return p;
    auto it = map_.find(key);
    if (it != map_.end()) return it->second.first;  // another thread made it first
    lru_.push_front(key);
    map_.emplace(key, std::make_pair(p, lru_.begin()));
    evict();
    return p;
  }
  void set_capacity(int64_t c) {
    std::lock_guard<std::mutex> lock(mu_);
    capacity_ = c;
    evict();
  }
  void drop_owner(const Library* lib) {
    std::vector<std::shared_ptr<CTPlan>> gone;  // destroyed after the lock (their destroy calls plugin code)
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = lru_.begin(); it != lru_.end();) {
        auto m = map_.find(*it);
        if (m->second.first->owner == lib) {
          gone.push_back(m->second.first);
          map_.erase(m);
          it = lru_.erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  void info(int64_t* entries, int64_t* capacity) {
    std::lock_guard<std::mutex> lock(mu_);
    *entries = (int64_t)map_.size();
    *capacity = capacity_;
  }

 private:
  void evict() {
    while ((int64_t)map_.size() > capacity_) {
      map_.erase(lru_.back());
      lru_.pop_back();
    }
  }
  std::mutex mu_;
  int64_t capacity_ = 1024;
  std::list<std::string> lru_;
  std::unordered_map<std::string, std::pair<std::shared_ptr<CTPlan>, std::list<std::string>::iterator>> map_;
};

PlanCache& cache() {
  static PlanCache* c = new PlanCache;  // never destroyed: plans may be in use at exit
  return *c;
}

}  // namespace

void drop_cached_plans(const Library* lib) { cache().drop_owner(lib); }

namespace {

CTStatus cached_plan(const NNCall& c, const CTKernelInterface* b, std::shared_ptr<CTPlan>* out) {
  thread_local std::string key;
  make_key(c, &key);
  if ((*out = cache().find(key))) {
    ++g_hits;
    return CT_OK;
  }
  ++g_misses;
  std::unique_ptr<CTPlan> p;
  if (CTStatus s = make_plan(c, b, nullptr, &p)) return s;
  *out = cache().insert(key, std::shared_ptr<CTPlan>(std::move(p)));
  // A plugin unloaded since validate: its unload may have emptied the cache
  // of its plans before this one went in, which would then keep the
  // library's code loaded (and the file in the process, so that it cannot
  // load again) until evicted. This call still runs its plan.
  if (c.owner && !c.owner->loaded.load(std::memory_order_acquire)) drop_cached_plans(c.owner);
  return CT_OK;
}

// out = act(bias broadcast to out), or act(0), through the library's own
// ops on out's device: a cast from a stride-0 view of bias (or a copy from a
// host zero viewed with stride 0), then the activation in place.
CTStatus k_zero_matmul(const CTPlan* p, const CTensor* const* t, void* stream) {
  const CTensor* bias = t[2];
  CTensor* out = const_cast<CTensor*>(t[3]);
  const int32_t nd = out->ndim;
  int64_t strides[CT_MAX_NDIM] = {0};
  static const uint64_t kZero = 0;  // static: an asynchronous copy may read it after we return
  CTensor src = *out;
  src.byte_offset = 0;
  src.strides = strides;
  CTStatus s;
  if (bias) {
    src.data = bias->data;
    src.byte_offset = bias->byte_offset;
    src.device = bias->device;
    src.dtype = bias->dtype;
    for (int32_t i = 0; i < nd; ++i) {
      const int32_t j = i - (nd - bias->ndim);
      strides[i] = j < 0 || bias->shape[j] == 1 ? 0 : ct_stride_of(bias, j);
    }
    s = ct_cast(&src, out, stream);
  } else {
    src.data = const_cast<uint64_t*>(&kZero);  // zero bits are 0 in every dtype
    src.device.device_type = CT_CPU;
    src.device.device_id = 0;
    s = ct_copy(&src, out, stream);
  }
  if (s) return s;
  static const int32_t act_op[] = {-1, CT_OP_RELU, CT_OP_GELU, CT_OP_GELU_TANH, CT_OP_SIGMOID, CT_OP_TANH};
  const int32_t a = p->call.matmul.activation;
  return a == CT_ACTIVATION_NONE ? CT_OK : ct_unary(act_op[a], out, out, stream);
}

CTStatus run_plan(const char* fn, const CTPlan* p, const CTensor* const* t, void* ws, size_t ws_bytes, void* stream) {
  if (ws_bytes < p->workspace || (p->workspace && !ws))
    return fail(CT_ERR_WORKSPACE_TOO_SMALL, "%s: %s needs a workspace of %zu bytes, got %zu bytes at %p (ask %s_workspace_size)",
                fn, op_def_any(p->call.op)->name, p->workspace, ws ? ws_bytes : (size_t)0, ws, fn);
  if (p->k_zero) return k_zero_matmul(p, t, stream);
  if (!p->impl) return CT_OK;
  CTNNCall kc = backend_call(p->call, t, stream);
  kc.fn = fn;
  return p->kern.nn_plan_execute(p->impl, &kc, ws, ws_bytes);
}

CTStatus nn_direct(const char* fn, int32_t op, const void* desc, const CTensor* const* t, int32_t num, void* ws,
                   size_t ws_bytes, void* stream) {
  NNCall c;
  const CTKernelInterface* b = nullptr;
  if (CTStatus s = validate(fn, op, desc, t, num, stream, true, &c, &b)) return s;
  std::shared_ptr<CTPlan> p;
  if (CTStatus s = cached_plan(c, b, &p)) return s;
  return run_plan(fn, p.get(), t, ws, ws_bytes, stream);
}

CTStatus nn_query(const char* fn, int32_t op, const void* desc, const CTensor* const* t, int32_t num, size_t* bytes) {
  if (!bytes) return fail(CT_ERR_INVALID_ARGUMENT, "%s: bytes is NULL", fn);
  NNCall c;
  const CTKernelInterface* b = nullptr;
  if (CTStatus s = validate(fn, op, desc, t, num, nullptr, false, &c, &b)) return s;
  std::shared_ptr<CTPlan> p;
  if (CTStatus s = cached_plan(c, b, &p)) return s;
  *bytes = p->workspace;
  return CT_OK;
}

}  // namespace
}  // namespace ct

extern "C" {

// The two entry points of every NN op differ only in their tensor arguments.
#define CT_NN_QUERY(op, ...)                                                           \
  CT_API_BEGIN(__func__)                                                               \
  const CTensor* t[] = {__VA_ARGS__};                                                  \
  return ct::nn_query(__func__, op, desc, t, (int32_t)(sizeof t / sizeof t[0]), bytes); \
  CT_API_END()
#define CT_NN_RUN(op, ...)                                                                 \
  CT_API_BEGIN(__func__)                                                                   \
  const CTensor* t[] = {__VA_ARGS__};                                                      \
  return ct::debug_perturb_nn(op, t, (int32_t)(sizeof t / sizeof t[0]),                    \
                              ct::nn_direct(__func__, op, desc, t, (int32_t)(sizeof t / sizeof t[0]), \
                                            workspace, workspace_bytes, stream));            \
  CT_API_END()

CT_API CTStatus ct_matmul_workspace_size(const CTMatmulDesc* desc, const CTensor* a, const CTensor* b,
                                         const CTensor* bias, const CTensor* out, size_t* bytes) {
  CT_NN_QUERY(CT_OP_MATMUL, a, b, bias, out)
}
CT_API CTStatus ct_matmul(const CTMatmulDesc* desc, const CTensor* a, const CTensor* b, const CTensor* bias,
                          CTensor* out, void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_MATMUL, a, b, bias, out)
}

CT_API CTStatus ct_conv2d_workspace_size(const CTConv2dDesc* desc, const CTensor* x, const CTensor* w,
                                         const CTensor* bias, const CTensor* y, size_t* bytes) {
  CT_NN_QUERY(CT_OP_CONV2D, x, w, bias, y)
}
CT_API CTStatus ct_conv2d(const CTConv2dDesc* desc, const CTensor* x, const CTensor* w, const CTensor* bias,
                          CTensor* y, void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_CONV2D, x, w, bias, y)
}

CT_API CTStatus ct_conv2d_backward_data_workspace_size(const CTConv2dDesc* desc, const CTensor* dy,
                                                       const CTensor* w, const CTensor* dx, size_t* bytes) {
  CT_NN_QUERY(CT_OP_CONV2D_BACKWARD_DATA, dy, w, dx)
}
CT_API CTStatus ct_conv2d_backward_data(const CTConv2dDesc* desc, const CTensor* dy, const CTensor* w,
                                        CTensor* dx, void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_CONV2D_BACKWARD_DATA, dy, w, dx)
}

CT_API CTStatus ct_conv2d_backward_weight_workspace_size(const CTConv2dDesc* desc, const CTensor* x,
                                                         const CTensor* dy, const CTensor* dw,
                                                         const CTensor* dbias, size_t* bytes) {
  CT_NN_QUERY(CT_OP_CONV2D_BACKWARD_WEIGHT, x, dy, dw, dbias)
}
CT_API CTStatus ct_conv2d_backward_weight(const CTConv2dDesc* desc, const CTensor* x, const CTensor* dy,
                                          CTensor* dw, CTensor* dbias, void* workspace, size_t workspace_bytes,
                                          void* stream) {
  CT_NN_RUN(CT_OP_CONV2D_BACKWARD_WEIGHT, x, dy, dw, dbias)
}

CT_API CTStatus ct_max_pool2d_workspace_size(const CTPool2dDesc* desc, const CTensor* x, const CTensor* y,
                                             const CTensor* indices, size_t* bytes) {
  CT_NN_QUERY(CT_OP_MAX_POOL2D, x, y, indices)
}
CT_API CTStatus ct_max_pool2d(const CTPool2dDesc* desc, const CTensor* x, CTensor* y, CTensor* indices,
                              void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_MAX_POOL2D, x, y, indices)
}

CT_API CTStatus ct_max_pool2d_backward_workspace_size(const CTPool2dDesc* desc, const CTensor* dy,
                                                      const CTensor* indices, const CTensor* dx, size_t* bytes) {
  CT_NN_QUERY(CT_OP_MAX_POOL2D_BACKWARD, dy, indices, dx)
}
CT_API CTStatus ct_max_pool2d_backward(const CTPool2dDesc* desc, const CTensor* dy, const CTensor* indices,
                                       CTensor* dx, void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_MAX_POOL2D_BACKWARD, dy, indices, dx)
}

CT_API CTStatus ct_avg_pool2d_workspace_size(const CTPool2dDesc* desc, const CTensor* x, const CTensor* y,
                                             size_t* bytes) {
  CT_NN_QUERY(CT_OP_AVG_POOL2D, x, y)
}
CT_API CTStatus ct_avg_pool2d(const CTPool2dDesc* desc, const CTensor* x, CTensor* y, void* workspace,
                              size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_AVG_POOL2D, x, y)
}

CT_API CTStatus ct_avg_pool2d_backward_workspace_size(const CTPool2dDesc* desc, const CTensor* dy,
                                                      const CTensor* dx, size_t* bytes) {
  CT_NN_QUERY(CT_OP_AVG_POOL2D_BACKWARD, dy, dx)
}
CT_API CTStatus ct_avg_pool2d_backward(const CTPool2dDesc* desc, const CTensor* dy, CTensor* dx, void* workspace,
                                       size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_AVG_POOL2D_BACKWARD, dy, dx)
}

CT_API CTStatus ct_batch_norm_workspace_size(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* mean,
                                             const CTensor* var, const CTensor* scale, const CTensor* shift,
                                             const CTensor* y, size_t* bytes) {
  CT_NN_QUERY(CT_OP_BATCH_NORM, x, mean, var, scale, shift, y)
}
CT_API CTStatus ct_batch_norm(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* mean,
                              const CTensor* var, const CTensor* scale, const CTensor* shift, CTensor* y,
                              void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_BATCH_NORM, x, mean, var, scale, shift, y)
}

CT_API CTStatus ct_batch_norm_training_workspace_size(const CTBatchNormDesc* desc, const CTensor* x,
                                                      const CTensor* scale, const CTensor* shift,
                                                      const CTensor* y, const CTensor* mean,
                                                      const CTensor* invstd, size_t* bytes) {
  CT_NN_QUERY(CT_OP_BATCH_NORM_TRAINING, x, scale, shift, y, mean, invstd)
}
CT_API CTStatus ct_batch_norm_training(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* scale,
                                       const CTensor* shift, CTensor* y, CTensor* mean, CTensor* invstd,
                                       void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_BATCH_NORM_TRAINING, x, scale, shift, y, mean, invstd)
}

CT_API CTStatus ct_batch_norm_backward_workspace_size(const CTBatchNormDesc* desc, const CTensor* x,
                                                      const CTensor* dy, const CTensor* mean,
                                                      const CTensor* invstd, const CTensor* scale,
                                                      const CTensor* dx, const CTensor* dscale,
                                                      const CTensor* dshift, size_t* bytes) {
  CT_NN_QUERY(CT_OP_BATCH_NORM_BACKWARD, x, dy, mean, invstd, scale, dx, dscale, dshift)
}
CT_API CTStatus ct_batch_norm_backward(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* dy,
                                       const CTensor* mean, const CTensor* invstd, const CTensor* scale,
                                       CTensor* dx, CTensor* dscale, CTensor* dshift, void* workspace,
                                       size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_BATCH_NORM_BACKWARD, x, dy, mean, invstd, scale, dx, dscale, dshift)
}

CT_API CTStatus ct_layer_norm_workspace_size(const CTLayerNormDesc* desc, const CTensor* x, const CTensor* scale,
                                             const CTensor* shift, const CTensor* y, const CTensor* mean,
                                             const CTensor* rstd, size_t* bytes) {
  CT_NN_QUERY(CT_OP_LAYER_NORM, x, scale, shift, y, mean, rstd)
}
CT_API CTStatus ct_layer_norm(const CTLayerNormDesc* desc, const CTensor* x, const CTensor* scale,
                              const CTensor* shift, CTensor* y, CTensor* mean, CTensor* rstd, void* workspace,
                              size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_LAYER_NORM, x, scale, shift, y, mean, rstd)
}

CT_API CTStatus ct_layer_norm_backward_workspace_size(const CTLayerNormDesc* desc, const CTensor* x,
                                                      const CTensor* dy, const CTensor* mean,
                                                      const CTensor* rstd, const CTensor* scale,
                                                      const CTensor* dx, const CTensor* dscale,
                                                      const CTensor* dshift, size_t* bytes) {
  CT_NN_QUERY(CT_OP_LAYER_NORM_BACKWARD, x, dy, mean, rstd, scale, dx, dscale, dshift)
}
CT_API CTStatus ct_layer_norm_backward(const CTLayerNormDesc* desc, const CTensor* x, const CTensor* dy,
                                       const CTensor* mean, const CTensor* rstd, const CTensor* scale,
                                       CTensor* dx, CTensor* dscale, CTensor* dshift, void* workspace,
                                       size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_LAYER_NORM_BACKWARD, x, dy, mean, rstd, scale, dx, dscale, dshift)
}

CT_API CTStatus ct_scaled_dot_product_attention_workspace_size(const CTAttentionDesc* desc, const CTensor* q,
                                                               const CTensor* k, const CTensor* v,
                                                               const CTensor* mask, const CTensor* out,
                                                               size_t* bytes) {
  CT_NN_QUERY(CT_OP_SCALED_DOT_PRODUCT_ATTENTION, q, k, v, mask, out)
}
CT_API CTStatus ct_scaled_dot_product_attention(const CTAttentionDesc* desc, const CTensor* q, const CTensor* k,
                                                const CTensor* v, const CTensor* mask, CTensor* out,
                                                void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_SCALED_DOT_PRODUCT_ATTENTION, q, k, v, mask, out)
}

// ---- any NN op by id ---------------------------------------------------------

namespace ct {
namespace {
// "ct_nn(matmul)", "ct_nn_workspace_size(conv2d)": static, since plans keep
// the name they were made under.
const char* generic_name(bool query, int32_t op) {
  static const struct Names {
    std::vector<std::string> q, r;
    Names() {
      for (int32_t i = 0; i < builtin_op_count(); ++i) {  // plugin ops: the plain names
        q.push_back(std::string("ct_nn_workspace_size(") + op_def(i)->name + ")");
        r.push_back(std::string("ct_nn(") + op_def(i)->name + ")");
      }
    }
  } names;
  if (op < 0 || op >= (int32_t)names.q.size()) return query ? "ct_nn_workspace_size" : "ct_nn";
  return query ? names.q[op].c_str() : names.r[op].c_str();
}
}  // namespace
}  // namespace ct

CT_API CTStatus ct_nn_workspace_size(int32_t op, const void* desc, const CTensor* const* tensors,
                                     int32_t num_tensors, size_t* bytes) {
  CT_API_BEGIN("ct_nn_workspace_size")
  if (!tensors) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_nn_workspace_size: tensors is NULL");
  return ct::nn_query(ct::generic_name(true, op), op, desc, tensors, num_tensors, bytes);
  CT_API_END()
}

CT_API CTStatus ct_nn(int32_t op, const void* desc, const CTensor* const* tensors, int32_t num_tensors,
                      void* workspace, size_t workspace_bytes, void* stream) {
  CT_API_BEGIN("ct_nn")
  if (!tensors) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_nn: tensors is NULL");
  return ct::debug_perturb_nn(op, tensors, num_tensors,
                              ct::nn_direct(ct::generic_name(false, op), op, desc, tensors, num_tensors, workspace,
                                            workspace_bytes, stream));
  CT_API_END()
}

// ---- plans ------------------------------------------------------------------

CT_API CTStatus ct_plan_create(int32_t op, const void* desc, const CTensor* const* tensors, int32_t num_tensors,
                               void* stream, CTPlan** plan) {
  CT_API_BEGIN("ct_plan_create")
  if (!plan) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_create: plan is NULL");
  if (!tensors) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_create: tensors is NULL");
  ct::NNCall c;
  const CTKernelInterface* b = nullptr;
  if (CTStatus s = ct::validate(ct_fn_name_, op, desc, tensors, num_tensors, stream, false, &c, &b)) return s;
  std::unique_ptr<CTPlan> p;
  if (CTStatus s = ct::make_plan(c, b, stream, &p)) return s;
  *plan = p.release();
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_plan_workspace_size(const CTPlan* plan, size_t* bytes) {
  CT_API_BEGIN("ct_plan_workspace_size")
  if (!plan) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_workspace_size: plan is NULL");
  if (!bytes) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_workspace_size: bytes is NULL");
  *bytes = plan->workspace;
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_plan_execute(const CTPlan* plan, const CTensor* const* tensors, int32_t num_tensors,
                                void* workspace, size_t workspace_bytes, void* stream) {
  CT_API_BEGIN("ct_plan_execute")
  if (!plan) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_execute: plan is NULL");
  if (!tensors) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_execute: tensors is NULL");
  // The same validation as a direct call (bad data pointers, overlaps), then
  // the layout must be the plan's.
  ct::NNCall c;
  const CTKernelInterface* b = nullptr;
  const ct::NNCall& pc = plan->call;
  size_t desc_size = 0;
  const void* desc = ct::desc_of(pc, &desc_size);
  if (CTStatus s = ct::validate(ct_fn_name_, pc.op, desc, tensors, num_tensors, stream, true, &c, &b)) return s;
  const ct::Names& n = ct::names_of(pc.op);
  for (int i = 0; i < num_tensors; ++i) {
    const CTPlan::Sig& sg = plan->sig[i];
    const CTensor* t = tensors[i];
    if (!t != !sg.present)
      return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_execute: %s is %s but the plan was made %s it", n.name[i],
                      t ? "given" : "NULL", sg.present ? "with" : "without");
    if (!t) continue;
    bool same = t->ndim == sg.view.ndim && t->dtype.code == sg.view.dtype.code && t->dtype.bits == sg.view.dtype.bits &&
                t->device.device_type == sg.view.device.device_type && t->device.device_id == sg.view.device.device_id;
    for (int32_t d = 0; same && d < t->ndim; ++d)
      same = t->shape[d] == sg.shape[d] && (t->shape[d] == 1 || ct::ct_stride_of(t, d) == sg.strides[d]);
    if (!same) {
      ct::Shape a, bb, sa, sb;
      return ct::fail(CT_ERR_SHAPE_MISMATCH,
                      "ct_plan_execute: %s (shape %s, strides %s) differs from the plan's (shape %s, strides %s, same dtype "
                      "and device): make a plan per layout",
                      n.name[i], ct::format_shape(a, sizeof a, t->ndim, t->shape),
                      ct::format_shape(sa, sizeof sa, t->ndim, t->strides ? t->strides : t->shape),
                      ct::format_shape(bb, sizeof bb, sg.view.ndim, sg.shape),
                      ct::format_shape(sb, sizeof sb, sg.view.ndim, sg.strides));
    }
  }
  return ct::run_plan(ct_fn_name_, plan, tensors, workspace, workspace_bytes, stream);
  CT_API_END()
}

CT_API void ct_plan_destroy(CTPlan* plan) { delete plan; }

CT_API CTStatus ct_plan_cache_info(CTPlanCacheInfo* info) {
  CT_API_BEGIN("ct_plan_cache_info")
  if (CTStatus s = ct::check_struct_size("ct_plan_cache_info", "info", info, sizeof(uint32_t))) return s;
  CTPlanCacheInfo full;
  std::memset(&full, 0, sizeof full);
  ct::cache().info(&full.entries, &full.capacity);
  full.hits = ct::g_hits.load();
  full.misses = ct::g_misses.load();
  full.primitives_created = ct::g_primitives.load();
  ct::copy_struct_out(info, full);
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_plan_cache_set_capacity(int64_t capacity) {
  CT_API_BEGIN("ct_plan_cache_set_capacity")
  if (capacity < 0)
    return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_cache_set_capacity: capacity=%" PRId64 " is negative", capacity);
  ct::cache().set_capacity(capacity);
  return CT_OK;
  CT_API_END()
}

}  // extern "C"
