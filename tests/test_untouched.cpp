// test_untouched.cpp — "on failure, outputs are untouched", for every op of
// the registry and every way its validation can fail: each op's valid call
// (guard_util.h) is broken one thing at a time (a tensor's dtype, ndim,
// shape, strides, data, byte_offset, device; an output overlapping an input;
// parameters, axes, the descriptor, num_tensors, the workspace, the stream),
// and each broken call, through every entry point that runs the op, must
// fail with a message that starts with that entry point, leaving every byte
// of every buffer (outputs, inputs and the margins around them) as it was.
// On the CPU and on every other registered device (the loopback test device).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "guard_util.h"
#include "loopback.h"

using namespace ctt;
using namespace ctg;

namespace {

enum Expect {
  MUST_FAIL,
  // an input's extent changed: fails unless ct_op_output_info says the
  // outputs still fit (gather's x may grow off the axis)
  FAIL_UNLESS_OUTPUTS_FIT
};

struct Variant {
  std::string what;
  std::function<void(Args&)> apply;
  unsigned entries;
  Expect expect;
};

// What the variants need from outside the call.
struct Context {
  bool have_other = false;
  CTDevice other;          // a device of another type (mixing devices)
  void* bad_stream;        // a stream argument the call's device refuses
  std::vector<std::unique_ptr<HostTensor>> keep;  // buffers variants point at
};

const int64_t kBig = (int64_t)1 << 62;

bool outputs_fit(OpCall& c, const Args& a0) {
  Args a = a0;
  a.bind();
  CTOpArgs oa;
  std::memset(&oa, 0, sizeof oa);
  oa.struct_size = sizeof oa;
  oa.axes = a.axes_null ? nullptr : a.axes;
  oa.num_axes = a.num_axes;
  oa.keepdims = a.keepdims;
  oa.axis = a.axis;
  oa.desc = a.desc_size ? a.desc : nullptr;
  oa.extent[0] = c.extent[0];
  oa.extent[1] = c.extent[1];
  if (c.f.info.kind == CT_KIND_CAST) oa.dtype = a.t[1].dtype;
  std::vector<const CTensor*> in(c.f.nin);
  for (int32_t i = 0; i < c.f.nin; ++i) in[i] = a.in(i);
  std::vector<CTOutputInfo> out(c.f.nout);
  if (ct_op_output_info(c.f.op, &oa, in.data(), c.f.nin, out.data(), c.f.nout) != CT_OK) return false;
  for (int32_t k = 0; k < c.f.nout; ++k) {
    const int32_t i = c.f.nin + k;
    if (a.null_t[i]) continue;
    if (out[k].ndim != a.t[i].ndim) return false;
    for (int32_t d = 0; d < out[k].ndim; ++d)
      if (out[k].shape[d] != a.t[i].shape[d]) return false;
  }
  return true;
}

int64_t numel_of(const Args& a, int32_t i) {
  int64_t n = 1;
  for (int32_t d = 0; d < a.t[i].ndim; ++d) n *= a.shape[i][d];
  return n;
}

// A valid dtype the call must refuse for tensor i, or -1 when there is none
// that is wrong whatever the others are.
int wrong_dtype(const OpCall& c, int32_t i) {
  const CTOpInfo& info = c.f.info;
  const int32_t role = info.tensor_roles[i];
  const int have = ct_dtype_index(c.valid.t[i].dtype);
  switch (role) {
    case CT_ROLE_COND: case CT_ROLE_INDEX: return DT_F32;
    case CT_ROLE_STAT: case CT_ROLE_PARAM: case CT_ROLE_BIAS: return DT_F64;
    case CT_ROLE_ANY: return -1;
    default: break;
  }
  if (c.is_output(i)) return dtype(have).size == 8 ? DT_I8 : DT_F64;
  // A data input: a dtype the op is not defined for, else one that no longer
  // matches another data tensor (when the output rule keeps the dtype).
  for (int d = 0; d < CT_DT_COUNT; ++d)
    if (!((info.dtype_mask >> d) & 1u)) return d;
  int data_inputs = 0;
  for (int32_t k = 0; k < c.f.nin; ++k) data_inputs += info.tensor_roles[k] == CT_ROLE_DATA;
  const bool rule_keeps = info.output_dtype == CT_OUTPUT_SAME || info.output_dtype == CT_OUTPUT_ACCUM ||
                          info.output_dtype == CT_OUTPUT_FLOAT;
  if (data_inputs < 2 && !rule_keeps) return -1;
  return have == DT_F32 ? DT_I8 : DT_F32;
}

std::vector<Variant> variants_of(OpCall& c, Context& ctx) {
  std::vector<Variant> v;
  const CTOpInfo& info = c.f.info;
  const Args& base = c.valid;
  auto add = [&](std::string what, std::function<void(Args&)> f, unsigned entries, Expect e = MUST_FAIL) {
    v.push_back({std::move(what), std::move(f), entries, e});
  };
  // ---- every tensor argument ----
  for (int32_t i = 0; i < base.n; ++i) {
    if (!c.present(i)) continue;
    const std::string nm = c.f.names[i];
    const int32_t nd = base.t[i].ndim;
    const bool out = c.is_output(i);
    if (!c.f.optional[i]) add(nm + " NULL", [i](Args& a) { a.null_t[i] = true; }, kAllEntries);
    add(nm + ".dtype.code=200", [i](Args& a) { a.t[i].dtype.code = 200; }, kAllEntries);
    add(nm + ".dtype.lanes=2", [i](Args& a) { a.t[i].dtype.lanes = 2; }, kAllEntries);
    add(nm + ".dtype.bits=24", [i](Args& a) { a.t[i].dtype.bits = 24; }, kAllEntries);
    add(nm + ".dtype=opaque handle", [i](Args& a) { a.t[i].dtype = {CT_OPAQUE_HANDLE, 64, 1}; }, kAllEntries);
    add(nm + ".dtype=complex64", [i](Args& a) { a.t[i].dtype = {CT_COMPLEX, 64, 1}; }, kAllEntries);
    const int wd = wrong_dtype(c, i);
    if (wd >= 0 && wd != ct_dtype_index(base.t[i].dtype))
      add(nm + ".dtype=" + dtype(wd).name, [i, wd](Args& a) { a.t[i].dtype = dtype(wd).dt; }, kAllEntries);
    add(nm + ".ndim=-1", [i](Args& a) { a.t[i].ndim = -1; }, kAllEntries);
    add(nm + ".ndim=17", [i](Args& a) { a.t[i].ndim = CT_MAX_NDIM + 1; }, kAllEntries);
    if (nd >= 1) {
      add(nm + ".shape=NULL", [i](Args& a) { a.shape_null[i] = true; }, kAllEntries);
      add(nm + ".shape[0]=-1", [i](Args& a) { a.shape[i][0] = -1; }, kAllEntries);
      add(nm + ".shape[0]=5", [i](Args& a) { a.shape[i][0] = 5; }, kAllEntries, out ? MUST_FAIL : FAIL_UNLESS_OUTPUTS_FIT);
      if (nd >= 2)
        add(nm + ".shape[0..1]=2^32 (element count overflows)",
            [i](Args& a) { a.shape[i][0] = a.shape[i][1] = (int64_t)1 << 32; }, kAllEntries);
      else
        add(nm + ".shape[0]=2^62 (byte count overflows)", [i](Args& a) { a.shape[i][0] = kBig; }, kAllEntries);
      add(nm + ".shape[0]=INT64_MAX", [i](Args& a) { a.shape[i][0] = INT64_MAX; }, kAllEntries);
      int32_t wide = -1;  // a dim of extent >= 2
      for (int32_t d = 0; d < nd && wide < 0; ++d)
        if (base.shape[i][d] >= 2) wide = d;
      if (wide >= 0) {
        // A stride whose byte span, (extent - 1) * stride * itemsize, overflows int64
        // (a span that fits 64 bits may be real memory as far as a library can tell).
        const int64_t reach = (base.shape[i][wide] - 1) * dtype(ct_dtype_index(base.t[i].dtype)).size;
        if (reach >= 2) {
          const int64_t s = INT64_MAX / reach + 1;
          add(nm + ".strides[" + std::to_string(wide) + "]=" + std::to_string(s) + " (byte span overflows)",
              [i, wide, s](Args& a) { a.strides[i][wide] = s; }, kAllEntries);
          add(nm + ".strides[" + std::to_string(wide) + "]=" + std::to_string(-s) + " (byte span overflows)",
              [i, wide, s](Args& a) { a.strides[i][wide] = -s; }, kAllEntries);
        }
        add(nm + ".strides[" + std::to_string(wide) + "]=INT64_MIN",
            [i, wide](Args& a) { a.strides[i][wide] = INT64_MIN; }, kAllEntries);
        if (out)
          add(nm + ".strides[" + std::to_string(wide) + "]=0 (overlaps itself)",
              [i, wide](Args& a) { a.strides[i][wide] = 0; }, kRunEntries);
      }
    }
    if (numel_of(base, i) > 0)
      add(nm + ".data=NULL", [i](Args& a) { a.t[i].data = nullptr; a.t[i].byte_offset = 0; }, kRunEntries);
    add(nm + ".byte_offset=2^64-8 (address wraps)", [i](Args& a) { a.t[i].byte_offset = ~(uint64_t)0 - 7; },
        kRunEntries);
    add(nm + ".device.device_type=99", [i](Args& a) { a.t[i].device.device_type = 99; }, kAllEntries);
    add(nm + ".device.device_id=9", [i](Args& a) { a.t[i].device.device_id = 9; }, kAllEntries);
    add(nm + ".device.device_id=-1", [i](Args& a) { a.t[i].device.device_id = -1; }, kAllEntries);
    if (ctx.have_other && info.kind != CT_KIND_CAST) {
      const CTDevice o = ctx.other;
      add(nm + " on another device", [i, o](Args& a) { a.t[i].device = o; }, kAllEntries);
    }
  }
  // ---- an output overlapping an input ----
  for (int32_t o = c.f.nin; o < base.n; ++o) {
    if (!c.present(o)) continue;
    const int osz = dtype(ct_dtype_index(base.t[o].dtype)).size;
    for (int32_t i = 0; i < c.f.nin; ++i) {
      if (!c.present(i)) continue;
      const int isz = dtype(ct_dtype_index(base.t[i].dtype)).size;
      const int64_t ospan = numel_of(base, o) * osz, ispan = numel_of(base, i) * isz;
      if (ospan >= 2 * osz && ospan + osz <= ispan + kMarginBytes)
        add(c.f.names[o] + " overlaps " + c.f.names[i] + " (one element further)",
            [o, i, osz](Args& a) {
              a.t[o].data = a.t[i].data;
              a.t[o].byte_offset = a.t[i].byte_offset + (uint64_t)osz;
            },
            kRunEntries);
      bool same = base.t[o].ndim == base.t[i].ndim && ct_dtype_index(base.t[o].dtype) == ct_dtype_index(base.t[i].dtype);
      for (int32_t d = 0; same && d < base.t[o].ndim; ++d) same = base.shape[o][d] == base.shape[i][d];
      if (same && !info.inplace && info.kind != CT_KIND_CAST)
        add(c.f.names[o] + " is exactly " + c.f.names[i] + " (the op does not run in place)",
            [o, i](Args& a) {
              a.t[o].data = a.t[i].data;
              a.t[o].byte_offset = a.t[i].byte_offset;
            },
            kRunEntries);
    }
  }
  // ---- the stream ----
  void* bs = ctx.bad_stream;
  if (bs) add("a stream the device refuses", [bs](Args& a) { a.stream = bs; }, kRunEntries | entry_bit(E_PLAN_CREATE));
  // ---- parameters, axes, mode ----
  const int32_t np = info.num_params;
  switch (info.kind) {
    case CT_KIND_UNARY_PARAM:
      add("num_params=" + std::to_string(np + 1), [np](Args& a) { a.num_params = np + 1; }, kAllEntries);
      add("num_params=" + std::to_string(np - 1), [np](Args& a) { a.num_params = np - 1; }, kAllEntries);
      add("params=NULL", [](Args& a) { a.params_null = true; }, kAllEntries);
      break;
    case CT_KIND_TERNARY:
      add("ct_ternary_param, num_params=" + std::to_string(np + 1),
          [np](Args& a) { a.ternary_param = true; a.num_params = np + 1; }, kAllEntries);
      if (np > 0)
        add("ct_ternary_param, params=NULL", [](Args& a) { a.ternary_param = true; a.params_null = true; }, kAllEntries);
      break;
    case CT_KIND_REDUCE:
      add("num_params=" + std::to_string(np + 1), [np](Args& a) { a.num_params = np + 1; }, kAllEntries);
      add("axes={2}", [](Args& a) { a.axes[0] = 2; }, kAllEntries);
      add("axes={-3}", [](Args& a) { a.axes[0] = -3; }, kAllEntries);
      add("axes={1,1}", [](Args& a) { a.axes[0] = a.axes[1] = 1; a.num_axes = 2; }, kAllEntries);
      add("axes={1,-1}", [](Args& a) { a.axes[0] = 1; a.axes[1] = -1; a.num_axes = 2; }, kAllEntries);
      add("num_axes=-1", [](Args& a) { a.num_axes = -1; }, kAllEntries);
      add("num_axes=17", [](Args& a) { a.num_axes = 17; }, kAllEntries);
      add("axes=NULL, num_axes=1", [](Args& a) { a.axes_null = true; }, kAllEntries);
      break;
    case CT_KIND_ALONG_AXIS:
      add("axis=2", [](Args& a) { a.axis = 2; }, kAllEntries);
      add("axis=-3", [](Args& a) { a.axis = -3; }, kAllEntries);
      add("axis=INT32_MIN", [](Args& a) { a.axis = INT32_MIN; }, kAllEntries);
      break;
    case CT_KIND_INDEX:
      add("axis=2", [](Args& a) { a.axis = 2; }, kAllEntries);
      add("axis=-3", [](Args& a) { a.axis = -3; }, kAllEntries);
      add("num_params=" + std::to_string(np + 1), [np](Args& a) { a.num_params = np + 1; }, kAllEntries);
      if (c.dev.device_type == CT_CPU) {
        // the same index, every entry 99 (outside [-3, 3))
        HostTensor* h = new HostTensor(c.host(1));
        ctx.keep.emplace_back(h);
        for (int64_t e = 0; e < h->numel(); ++e) h->set_i(e, 99);
        const CTensor hv = h->view();
        add("index holds 99 (out of range)", [hv](Args& a) { a.t[1].data = hv.data; a.t[1].byte_offset = hv.byte_offset; },
            kRunEntries);
      }
      break;
    case CT_KIND_CAST:
      add("ct_cast_ex, mode=99", [](Args& a) { a.cast_ex = true; a.cast_mode = 99; }, kAllEntries);
      add("ct_cast_ex, mode=-1", [](Args& a) { a.cast_ex = true; a.cast_mode = -1; }, kAllEntries);
      break;
    default: break;
  }
  if (!c.is_nn()) return v;
  // ---- NN: the descriptor, num_tensors, the workspace ----
  const unsigned desc_entries = kAllEntries & ~entry_bit(E_PLAN_EXECUTE);
  if (info.desc_size > 0) add("desc=NULL", [](Args& a) { a.desc_null = true; }, desc_entries);
  auto field = [&](const std::string& what, std::function<void(unsigned char*)> f) {
    add("desc->" + what, [f](Args& a) { f(a.desc); }, desc_entries);
  };
  if (info.desc_type != CT_DESC_NONE && info.desc_type != CT_DESC_CUSTOM) {
    const uint32_t sz = (uint32_t)info.desc_size;
    field("struct_size=0", [](unsigned char* d) { std::memset(d, 0, 4); });
    field("struct_size=" + std::to_string(sz - 1), [sz](unsigned char* d) {
      const uint32_t s = sz - 1;
      std::memcpy(d, &s, 4);
    });
  }
  typedef std::function<void(unsigned char*)> Edit;
  auto conv = [](std::function<void(CTConv2dDesc&)> g) -> Edit {
    return [g](unsigned char* d) { CTConv2dDesc x; std::memcpy(&x, d, sizeof x); g(x); std::memcpy(d, &x, sizeof x); };
  };
  auto pool = [](std::function<void(CTPool2dDesc&)> g) -> Edit {
    return [g](unsigned char* d) { CTPool2dDesc x; std::memcpy(&x, d, sizeof x); g(x); std::memcpy(d, &x, sizeof x); };
  };
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  switch (info.desc_type) {
    case CT_DESC_MATMUL:
      for (int32_t act : {99, -1})
        field("activation=" + std::to_string(act), [act](unsigned char* d) {
          CTMatmulDesc x; std::memcpy(&x, d, sizeof x); x.activation = act; std::memcpy(d, &x, sizeof x); });
      break;
    case CT_DESC_CONV2D: {
      field("groups=-1", conv([](CTConv2dDesc& x) { x.groups = -1; }));
      field("groups=3 (does not divide the channels)", conv([](CTConv2dDesc& x) { x.groups = 3; }));
      field("stride[0]=-1", conv([](CTConv2dDesc& x) { x.stride[0] = -1; }));
      field("stride[1]=INT64_MIN", conv([](CTConv2dDesc& x) { x.stride[1] = INT64_MIN; }));
      field("pad_begin[0]=-1", conv([](CTConv2dDesc& x) { x.pad_begin[0] = -1; }));
      field("pad_end[1]=-1", conv([](CTConv2dDesc& x) { x.pad_end[1] = -1; }));
      field("pad_begin[0]=INT64_MAX", conv([](CTConv2dDesc& x) { x.pad_begin[0] = INT64_MAX; }));
      field("pad_end[1]=2^62", conv([](CTConv2dDesc& x) { x.pad_begin[1] = x.pad_end[1] = kBig; }));
      field("dilation[0]=-1", conv([](CTConv2dDesc& x) { x.dilation[0] = -1; }));
      field("dilation[1]=INT64_MAX", conv([](CTConv2dDesc& x) { x.dilation[1] = INT64_MAX; }));
      field("activation=99", conv([](CTConv2dDesc& x) { x.activation = 99; }));
      if (info.op != CT_OP_CONV2D)
        field("activation=relu (a backward op)", conv([](CTConv2dDesc& x) { x.activation = CT_ACTIVATION_RELU; }));
      break;
    }
    case CT_DESC_POOL2D:
      field("kernel[0]=0", pool([](CTPool2dDesc& x) { x.kernel[0] = 0; }));
      field("kernel[1]=-1", pool([](CTPool2dDesc& x) { x.kernel[1] = -1; }));
      field("kernel[0]=INT64_MAX", pool([](CTPool2dDesc& x) { x.kernel[0] = INT64_MAX; }));
      field("stride[0]=-1", pool([](CTPool2dDesc& x) { x.stride[0] = -1; }));
      field("pad_begin[0]=-1", pool([](CTPool2dDesc& x) { x.pad_begin[0] = -1; }));
      field("pad_end[1]=-1", pool([](CTPool2dDesc& x) { x.pad_end[1] = -1; }));
      field("pad_begin[0]=INT64_MAX", pool([](CTPool2dDesc& x) { x.pad_begin[0] = INT64_MAX; }));
      field("dilation[1]=-1", pool([](CTPool2dDesc& x) { x.dilation[1] = -1; }));
      field("dilation[0]=INT64_MAX", pool([](CTPool2dDesc& x) { x.dilation[0] = INT64_MAX; }));
      break;
    case CT_DESC_BATCH_NORM:
      for (double e : {-1.0, nan, inf})
        field("epsilon=" + fmt(e), [e](unsigned char* d) {
          CTBatchNormDesc x; std::memcpy(&x, d, sizeof x); x.epsilon = e; std::memcpy(d, &x, sizeof x); });
      break;
    case CT_DESC_LAYER_NORM:
      for (int32_t k : {-1, 4, INT32_MAX})
        field("normalized_ndim=" + std::to_string(k), [k](unsigned char* d) {
          CTLayerNormDesc x; std::memcpy(&x, d, sizeof x); x.normalized_ndim = k; std::memcpy(d, &x, sizeof x); });
      for (double e : {-1.0, nan})
        field("epsilon=" + fmt(e), [e](unsigned char* d) {
          CTLayerNormDesc x; std::memcpy(&x, d, sizeof x); x.epsilon = e; std::memcpy(d, &x, sizeof x); });
      break;
    case CT_DESC_ATTENTION:
      for (int32_t k : {3, -1})
        field("causal=" + std::to_string(k), [k](unsigned char* d) {
          CTAttentionDesc x; std::memcpy(&x, d, sizeof x); x.causal = k; std::memcpy(d, &x, sizeof x); });
      for (double s : {nan, inf, -inf})
        field("scale=" + fmt(s), [s](unsigned char* d) {
          CTAttentionDesc x; std::memcpy(&x, d, sizeof x); x.scale = s; std::memcpy(d, &x, sizeof x); });
      break;
    default: break;
  }
  const unsigned nt_entries = entry_bit(E_NN) | entry_bit(E_PLAN_CREATE) | entry_bit(E_PLAN_EXECUTE) | entry_bit(E_NN_WS);
  add("num_tensors one short", [](Args& a) { a.num_tensors_delta = -1; }, nt_entries);
  add("num_tensors one more", [](Args& a) { a.num_tensors_delta = 1; }, nt_entries);
  add("num_tensors=-1", [](Args& a) { a.num_tensors_delta = -a.n - 1; }, nt_entries);
  if (c.ws_need > 0) {
    const unsigned ws_entries = entry_bit(E_NN) | entry_bit(E_NN_NAMED) | entry_bit(E_PLAN_EXECUTE);
    add("workspace one byte short", [](Args& a) { a.ws_delta = -1; }, ws_entries);
    add("workspace_bytes=0", [&c](Args& a) { a.ws_delta = -(int64_t)c.ws_need; }, ws_entries);
    add("workspace=NULL", [](Args& a) { a.ws_null = true; }, ws_entries);
  }
  return v;
}

struct Tally {
  int64_t cases = 0;         // (op, variant, entry) calls checked
  int64_t op_variants = 0;   // (op, variant) pairs with at least one entry checked
  int64_t still_valid = 0;   // shape variants ct_op_output_info accepts (gather's x growing off the axis)
  int64_t ops = 0;
  std::vector<std::string> problems;
};

const char* const kEntryLabel[E_COUNT] = {"direct", "ct_nn", "named", "ct_plan_create", "ct_plan_execute",
                                           "ct_nn_workspace_size", "named workspace query"};

void check_op(OpCall& c, Context& ctx, const std::string& dev_label, Tally* t) {
  const std::string opn = c.f.info.name;
  // The valid call first, through every entry point: it must run.
  for (int e = 0; e < E_COUNT; ++e) {
    if (!c.entry_applies((Entry)e)) continue;
    size_t bytes = 0;
    const CTStatus s = c.invoke((Entry)e, c.valid, &bytes);
    if (s != CT_OK)
      t->problems.push_back(dev_label + " " + opn + " [" + kEntryLabel[e] + "]: the valid call failed: " +
                            ct_status_string(s) + ": " + ct_last_error());
  }
  if (!c.reset_outputs()) {
    t->problems.push_back(dev_label + " " + opn + ": cannot reset the outputs");
    return;
  }
  std::vector<std::vector<unsigned char>> guard;
  if (!c.snapshot(&guard)) {
    t->problems.push_back(dev_label + " " + opn + ": cannot read the buffers back");
    return;
  }
  // The guard sees a write: the valid call changes an output (and the
  // guard puts the bytes back).
  const Entry run = c.is_nn() ? E_NN : E_DIRECT;
  if (c.invoke(run, c.valid) != CT_OK || c.changed_since(guard).empty())
    t->problems.push_back(dev_label + " " + opn + ": the guard did not see the valid call write its outputs");
  ++t->ops;
  CTPlan* const plan_sentinel = reinterpret_cast<CTPlan*>(static_cast<uintptr_t>(0x5A5A5A50));
  const size_t bytes_sentinel = 0xDEADBEEF;
  for (const Variant& v : variants_of(c, ctx)) {
    Args a = c.valid;
    v.apply(a);
    bool any = false;
    for (int ei = 0; ei < E_COUNT; ++ei) {
      const Entry e = (Entry)ei;
      if (!c.entry_applies(e) || !(v.entries & entry_bit(e))) continue;
      if (v.expect == FAIL_UNLESS_OUTPUTS_FIT && e != E_PLAN_EXECUTE && outputs_fit(c, a)) {
        ++t->still_valid;
        continue;
      }
      // CT_UNTOUCHED_TRACE=1: each case before it runs (to find one that crashes).
      static const bool trace = std::getenv("CT_UNTOUCHED_TRACE") != nullptr;
      if (trace) std::fprintf(stderr, "%s %s [%s] %s\n", dev_label.c_str(), opn.c_str(), kEntryLabel[e], v.what.c_str());
      size_t bytes = bytes_sentinel;
      CTPlan* plan = plan_sentinel;
      const CTStatus s = c.invoke(e, a, &bytes, &plan);
      const std::string msg = ct_last_error();
      const std::string changed = c.changed_since(guard);
      const std::string fn = c.entry_name(e, a);
      ++t->cases;
      any = true;
      std::string bad;
      if (s == CT_OK) bad += " returned CT_OK;";
      if (msg.empty() && s != CT_OK) bad += " set no message;";
      else if (s != CT_OK && msg.compare(0, fn.size(), fn) != 0) bad += " message does not start with " + fn + ";";
      if (!changed.empty()) bad += " changed " + changed + ";";
      if (bytes != bytes_sentinel) bad += " wrote *bytes;";
      if (plan != plan_sentinel && e == E_PLAN_CREATE) bad += " wrote *plan;";
      if (!bad.empty() && trace) std::fprintf(stderr, "  PROBLEM:%s (%s: %s)\n", bad.c_str(), ct_status_string(s), msg.c_str());
      if (!bad.empty())
        t->problems.push_back(dev_label + " " + opn + " [" + kEntryLabel[e] + "] " + v.what + ":" + bad + " (" +
                              ct_status_string(s) + ": \"" + msg + "\")");
      if (s == CT_OK && e == E_PLAN_CREATE) ct_plan_destroy(plan);
    }
    t->op_variants += any;
  }
}

void run_device(const TestDevice& d, Tally* t) {
  Context ctx;
  static CTCpuStream bad_cpu;
  std::memset(&bad_cpu, 0, sizeof bad_cpu);  // struct_size 0
  static CTLoopbackStream bad_lb;
  bad_lb.magic = 0;
  bad_lb.device_id = d.dev.device_id;
  bad_lb.ops = 0;
  // A stream each device can tell is not its own: a CTCpuStream with
  // struct_size 0, a CTLoopbackStream without its magic; none for the others
  // (an OpenCL stream is a cl_command_queue: not something to forge).
  ctx.bad_stream = d.cpu ? (void*)&bad_cpu : d.dev.device_type == CT_EXT_DEV ? (void*)&bad_lb : nullptr;
  for (const TestDevice& o : all_devices())
    if (o.dev.device_type != d.dev.device_type) {
      ctx.have_other = true;
      ctx.other = o.dev;
      break;
    }
  for (int32_t op = 0; op < ct_op_count(); ++op) {
    if (unloaded_plugin_op(op)) continue;
    OpCall c;
    std::string why;
    if (!c.build(op, d.dev, nullptr, &why)) {
      // Every op has a valid call on the CPU; other devices run some ops only.
      if (d.cpu) t->problems.push_back(d.label + " op " + std::to_string(op) + ": no valid call: " + why);
      continue;
    }
    check_op(c, ctx, d.label, t);
  }
}

void report(const char* where, const Tally& t) {
  std::printf("untouched (%s): %lld ops, %lld (op, variant) pairs, %lld (op, variant, entry point) calls checked; "
              "%lld shape variants still valid\n",
              where, (long long)t.ops, (long long)t.op_variants, (long long)t.cases, (long long)t.still_valid);
  for (size_t i = 0; i < t.problems.size() && i < 60; ++i) UNSCOPED_INFO(t.problems[i]);
  CHECK(t.problems.empty());
}

}  // namespace

TEST_CASE("untouched: every op x every broken argument x every entry point, on the CPU", "[untouched]") {
  Tally t;
  for (const TestDevice& d : all_devices())
    if (d.cpu) run_device(d, &t);
  report("cpu", t);
  CHECK(t.ops >= CT_OP_END_);
  CHECK(t.cases > 10000);
}

TEST_CASE("untouched: the same on every other device (the loopback; OpenCL where present)", "[untouched]") {
  Tally t;
  int devices = 0;
  for (const TestDevice& d : all_devices())
    if (!d.cpu) {
      run_device(d, &t);
      ++devices;
    }
  REQUIRE(devices >= 1);  // the runner registers the loopback
  report("other devices", t);
  CHECK(t.ops >= 2 * devices);
}

// ---------------------------------------------------------------------------
// The public functions without tensors: their out-parameters on failure
// ---------------------------------------------------------------------------

namespace {

// A failed call: not CT_OK, a message that starts with fn, and the
// out-parameter's bytes (`before`) as they were.
template <class T>
void expect_untouched(CTStatus s, const char* fn, const T& now, const T& before) {
  const std::string msg = last_error();
  INFO(fn << ": " << ct_status_string(s) << ": \"" << msg << "\"");
  CHECK(s != CT_OK);
  CHECK(msg.compare(0, std::strlen(fn), fn) == 0);
  CHECK(std::memcmp(&now, &before, sizeof(T)) == 0);
}

}  // namespace

TEST_CASE("untouched: libraries, references, casts and the host table on failure", "[untouched]") {
  // ct_version, ct_version_string: the header's numbers.
  CHECK(ct_version() == (uint32_t)CT_VERSION);
  CHECK(std::string(ct_version_string()) == std::to_string(CT_VERSION_MAJOR) + "." +
                                                std::to_string(CT_VERSION_MINOR) + "." +
                                                std::to_string(CT_VERSION_PATCH));
  // ct_cast_supported: a dtype that is none, a device type that is none.
  const CTDataType f32 = dtype(DT_F32).dt, f64 = dtype(DT_F64).dt, none = {200, 32, 1};
  const CTDevice cpu = {CT_CPU, 0}, nodev = {99, 0};
  CHECK(ct_cast_supported(cpu, f32, f64) == CT_OK);
  int dummy = 0;
  expect_untouched(ct_cast_supported(cpu, none, f64), "ct_cast_supported", dummy, dummy);
  expect_untouched(ct_cast_supported(cpu, f32, none), "ct_cast_supported", dummy, dummy);
  expect_untouched(ct_cast_supported(nodev, f32, f64), "ct_cast_supported", dummy, dummy);
  // ct_library_load: NULL, a missing file, a library already in the process.
  CTLibrary* const lib_sentinel = reinterpret_cast<CTLibrary*>(static_cast<uintptr_t>(0x5A5A5A50));
  CTLibrary* lib = lib_sentinel;
  expect_untouched(ct_library_load(nullptr, &lib), "ct_library_load", lib, lib_sentinel);
  expect_untouched(ct_library_load("/nonexistent/libctensor_nothing.so", &lib), "ct_library_load", lib, lib_sentinel);
  expect_untouched(ct_library_load(CT_LOOPBACK_PATH, &lib), "ct_library_load", lib, lib_sentinel);  // linked in
  CHECK(ct_library_load(CT_DOC_PLUGIN_PATH, nullptr) == CT_ERR_INVALID_ARGUMENT);
  // ct_library_get / ct_library_failure past their counts.
  expect_untouched(ct_library_get(-1, &lib), "ct_library_get", lib, lib_sentinel);
  expect_untouched(ct_library_get(ct_library_count(), &lib), "ct_library_get", lib, lib_sentinel);
  CHECK(ct_library_get(0, nullptr) == CT_ERR_INVALID_ARGUMENT);
  CTLibraryFailure lf;
  std::memset(&lf, 0x5A, sizeof lf);
  lf.struct_size = sizeof lf;
  const CTLibraryFailure lf0 = lf;
  expect_untouched(ct_library_failure(ct_library_failure_count(), &lf), "ct_library_failure", lf, lf0);
  expect_untouched(ct_library_failure(-1, &lf), "ct_library_failure", lf, lf0);
  lf.struct_size = 0;
  const CTLibraryFailure lf1 = lf;
  expect_untouched(ct_library_failure(0, &lf), "ct_library_failure", lf, lf1);
  // A loaded library: info, op and unload with bad arguments, then the plugin op's reference.
  REQUIRE(ct_library_load(CT_DOC_PLUGIN_PATH, &lib) == CT_OK);
  CTLibraryInfo li;
  std::memset(&li, 0x5A, sizeof li);
  li.struct_size = 3;
  const CTLibraryInfo li0 = li;
  expect_untouched(ct_library_info(lib, &li), "ct_library_info", li, li0);
  li.struct_size = sizeof li;
  const CTLibraryInfo li1 = li;
  expect_untouched(ct_library_info(nullptr, &li), "ct_library_info", li, li1);
  REQUIRE(ct_library_info(lib, &li) == CT_OK);
  int32_t op = -7;
  const int32_t op0 = op;
  expect_untouched(ct_library_op(lib, li.num_ops, &op), "ct_library_op", op, op0);
  expect_untouched(ct_library_op(lib, -1, &op), "ct_library_op", op, op0);
  expect_untouched(ct_library_op(nullptr, 0, &op), "ct_library_op", op, op0);
  expect_untouched(ct_library_op(reinterpret_cast<const CTLibrary*>(&dummy), 0, &op), "ct_library_op", op, op0);
  CHECK(ct_library_op(lib, 0, nullptr) == CT_ERR_INVALID_ARGUMENT);
  REQUIRE(ct_library_op(lib, 0, &op) == CT_OK);
  {
    // ct_op_reference validates as ct_unary does: out untouched on a bad shape.
    HostTensor x = HostTensor::compact(DT_F32, {2, 3}), out = HostTensor::compact(DT_F32, {2, 3}),
               bad = HostTensor::compact(DT_F32, {3, 2});
    for (int i = 0; i < 6; ++i) x.set(i, i - 3);
    bad.fill_bytes(kPattern);
    const std::vector<unsigned char> b0 = bad.bytes();
    CTensor xv = x.view(), ov = out.view(), bv = bad.view();
    const CTensor* ok[2] = {&xv, &ov};
    const CTensor* wrong[2] = {&xv, &bv};
    CHECK(ct_op_reference(op, ok, 2, nullptr, nullptr) == CT_OK);
    expect_untouched(ct_op_reference(op, wrong, 2, nullptr, nullptr), "ct_op_reference", dummy, dummy);
    CHECK(bad.bytes() == b0);
    expect_untouched(ct_op_reference(op, ok, 1, nullptr, nullptr), "ct_op_reference", dummy, dummy);
    expect_untouched(ct_op_reference(CT_OP_EXP, ok, 2, nullptr, nullptr), "ct_op_reference", dummy, dummy);  // a built-in: none
    expect_untouched(ct_op_reference(9999, ok, 2, nullptr, nullptr), "ct_op_reference", dummy, dummy);
  }
  expect_untouched(ct_library_unload(nullptr), "ct_library_unload", dummy, dummy);
  expect_untouched(ct_library_unload(reinterpret_cast<CTLibrary*>(&dummy)), "ct_library_unload", dummy, dummy);
  CHECK(ct_library_unload(lib) == CT_OK);
  // ct_plugin_host: the host table's error paths.
  const CTHost* h = ct_plugin_host();
  REQUIRE(h != nullptr);
  REQUIRE(h->struct_size >= sizeof(CTHost));
  CHECK(h->set_error(CT_ERR_BACKEND, "my_backend: failed with %d", 42) == CT_ERR_BACKEND);
  CHECK(last_error() == "my_backend: failed with 42");
  void* p = lib_sentinel;
  CHECK(h->temp_alloc(nodev, 64, nullptr, &p) != CT_OK);
  CHECK(p == lib_sentinel);
  CHECK(h->register_backend(nullptr, nullptr) == CT_ERR_INVALID_ARGUMENT);
  CHECK(h->register_op(nullptr, &op) == CT_ERR_INVALID_ARGUMENT);
  CHECK(h->op_info(9999, nullptr) != CT_OK);
  CHECK(std::string(h->dtype_name(-1)) == "?");
}
