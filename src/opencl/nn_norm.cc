// nn_norm.cc — batch_norm (inference, training, backward) and layer_norm
// (forward, backward) on OpenCL devices, float16, bfloat16 or float32 data
// with float32 statistics and parameters: the kernels and host geometry both GPU modules
// share (src/gpu/nn_kernels.cc, nn_geometry.cc). Statistics are one
// work-item per channel (batch norm) or row (layer norm), two passes in
// double where the device has it, in element order; the parameter gradients
// of layer_norm are one work-item per column over the rows in order. So
// every result is deterministic. Data tensors take any strides; the small
// per-channel, per-row and per-column tensors are used in place when they
// are 1-d or compact, and go through a temporary otherwise.
#include "gpu/nn_kernels.h"
#include "nn_internal.h"

#ifdef CT_HAVE_CLBLAST

namespace ctcl {
namespace {

// A vector slot (nn_geometry.h's NormSlot) as the kernels take it: buffer,
// byte offset. A multi-dim one that is not compact goes through a compact
// temporary (copied in for inputs, out for outputs).
struct Vec {
  cl_mem m = nullptr;
  cl_ulong off = 0;
  const CTensor* orig = nullptr;
  void* tmp = nullptr;
  bool out = false;
};

class Vecs {
 public:
  Vecs(const char* fn, Device* d, const Queue& q, void* stream, cl_mem dummy, void* scratch, int64_t C)
      : fn_(fn), d_(d), q_(q), stream_(stream), dummy_(dummy), scratch_(scratch), C_(C) {}
  ~Vecs() {
    for (Vec& v : v_)
      if (v.tmp) g_host->temp_free(v.orig->device, v.tmp, stream_);
  }
  // slot k <- s
  CTStatus set(int k, const NormSlot& s) {
    Vec& v = v_[k];
    v = Vec();
    if (s.scratch >= 0) {
      v.m = static_cast<cl_mem>(scratch_);
      v.off = (cl_ulong)(s.scratch * C_ * 4);
      return CT_OK;
    }
    const CTensor* t = s.t;
    if (!t) {
      v.m = dummy_;
      return CT_OK;
    }
    v.orig = t;
    v.out = s.out;
    if (!s.copy) {
      v.m = mem_of(t);
      v.off = t->byte_offset;
      return CT_OK;
    }
    const size_t bytes = (size_t)numel_of(t) * 4;
    if (CTStatus st = g_host->temp_alloc(t->device, bytes ? bytes : 4, stream_, &v.tmp)) return st;
    v.m = static_cast<cl_mem>(v.tmp);
    if (!s.out) {
      const CTensor c = ws_tensor(t, v.tmp, 0);
      return device_copy(fn_, d_, q_, CT_DT_FLOAT32, t, &c);
    }
    return CT_OK;
  }
  // After the kernels: temporaries of outputs go to their tensors.
  CTStatus finish() {
    for (Vec& v : v_)
      if (v.tmp && v.out) {
        const CTensor c = ws_tensor(v.orig, v.tmp, 0);
        if (CTStatus s = device_copy(fn_, d_, q_, CT_DT_FLOAT32, &c, v.orig)) return s;
      }
    return CT_OK;
  }
  const Vec& operator[](int k) const { return v_[k]; }

 private:
  const char* fn_;
  Device* d_;
  Queue q_;
  void* stream_;
  cl_mem dummy_;
  void* scratch_;
  int64_t C_;
  Vec v_[8];
};

// Runs launch l of the call: its data tensors (buffer, offset pairs), its
// vector slots, and g with the launch's flags.
CTStatus run(const char* fn, Program* prog, const Queue& q, const CTNNCall* call, const NormLaunch& l, const Vecs& v,
             NG g) {
  if (l.items <= 0) return CT_OK;
  g.flags = l.flags;
  cl_kernel k = nullptr;
  if (CTStatus s = prog->take(fn, l.name, &k)) return s;
  CTStatus st = CT_OK;
  cl_uint a = 0;
  bool ok = true;
  for (int i = 0; i < l.ndata; ++i) {
    const CTensor* t = call->t[l.data[i]];
    cl_mem m = mem_of(t);
    cl_ulong o = t->byte_offset;
    ok = ok && set_arg(fn, k, a++, sizeof m, &m, &st) && set_arg(fn, k, a++, sizeof o, &o, &st);
  }
  for (int i = 0; i < l.nslots; ++i) {
    cl_mem m = v[l.slots[i]].m;
    cl_ulong o = v[l.slots[i]].off;
    ok = ok && set_arg(fn, k, a++, sizeof m, &m, &st) && set_arg(fn, k, a++, sizeof o, &o, &st);
  }
  if (ok && set_arg(fn, k, a++, sizeof g, &g, &st)) st = launch(fn, q, k, l.items, l.name);
  prog->give(l.name, k);
  return st;
}

}  // namespace

CTStatus norm_plan_execute(const NNPlan* plan, const CTNNCall* call) {
  const char* fn = call->fn;
  Device* d = nullptr;
  Queue q;
  Program* prog = nullptr;
  if (CTStatus s = shared_kernels(plan, call, norm_kernels(), "norms", &d, &q, &prog)) return s;
  NormCall nc;
  norm_call(call, &nc);
  const CTensor* x = call->t[0];
  // batch_norm_backward without dscale or dshift: their sums in a temporary
  void* scratch = nullptr;
  if (nc.scratch_floats > 0)
    if (CTStatus s = g_host->temp_alloc(x->device, (size_t)nc.scratch_floats * 4, call->stream, &scratch)) return s;
  CTStatus s = CT_OK;
  {
    Vecs v(fn, d, q, call->stream, mem_of(x), scratch, nc.g.C);
    for (int k = 0; k < 8 && s == CT_OK; ++k)
      if (nc.slot[k].used) s = v.set(k, nc.slot[k]);
    // in order: a later kernel reads the sums an earlier one left in their compact temporaries
    for (int i = 0; i < nc.nlaunch && s == CT_OK; ++i) s = run(fn, prog, q, call, nc.launch[i], v, nc.g);
    if (s == CT_OK) s = v.finish();
  }
  if (scratch) g_host->temp_free(x->device, scratch, call->stream);
  return s;
}

}  // namespace ctcl

#endif  // CT_HAVE_CLBLAST
