// guard_util.h — one valid call of any registered op (built from the
// registry: ct_op_info, ct_op_output_info, and ct_op_example or the table
// below for NN ops), the entry points that can run it, and the byte guards
// around its tensors: shared by test_untouched.cpp (every argument broken one
// at a time) and test_exhaustion.cpp (allocation failures, small workspaces).
// Every tensor lives in a buffer with a margin on each side; the guard is a
// copy of every buffer (inputs and outputs, margins included) taken before a
// call, compared byte for byte after it.
#ifndef CTENSOR_TESTS_GUARD_UTIL_H_
#define CTENSOR_TESTS_GUARD_UTIL_H_

#include <ctensor/plugin.h>

#include <memory>
#include <string>
#include <vector>

#include "test_util.h"

namespace ctg {

using ctt::DeviceMirror;
using ctt::HostTensor;

// The pattern every output (and its margins) holds before a call.
const unsigned char kPattern = 0xA5;
// Bytes of margin before and after every tensor's elements.
const int64_t kMarginBytes = 64;

// The ways to run an op. Direct: the entry point of the op's kind (ct_unary,
// ct_binary, ..., ct_cast or ct_cast_ex). NN ops: ct_nn, ct_<op>, a plan
// created from the arguments (ct_plan_create), the arguments run through a
// plan of the valid call (ct_plan_execute), and the two workspace queries,
// whose output is the size_t they write.
enum Entry { E_DIRECT, E_NN, E_NN_NAMED, E_PLAN_CREATE, E_PLAN_EXECUTE, E_NN_WS, E_NN_WS_NAMED, E_COUNT };
inline unsigned entry_bit(Entry e) { return 1u << e; }
const unsigned kAllEntries = (1u << E_COUNT) - 1;
const unsigned kRunEntries = (1u << E_DIRECT) | (1u << E_NN) | (1u << E_NN_NAMED) | (1u << E_PLAN_EXECUTE);
const unsigned kQueryEntries = (1u << E_PLAN_CREATE) | (1u << E_NN_WS) | (1u << E_NN_WS_NAMED);

// Everything an entry point takes besides the op id, as plain values: the
// valid call, or a copy with one thing broken. bind() points each tensor's
// shape and strides at this copy's arrays (call it after copying).
struct Args {
  int32_t n = 0;  // tensor arguments (inputs, then outputs)
  CTensor t[CT_NN_MAX_TENSORS];
  bool null_t[CT_NN_MAX_TENSORS] = {};
  bool shape_null[CT_NN_MAX_TENSORS] = {};
  int64_t shape[CT_NN_MAX_TENSORS][CT_MAX_NDIM + 1];
  int64_t strides[CT_NN_MAX_TENSORS][CT_MAX_NDIM + 1];
  double params[4] = {0, 0, 0, 0};
  int32_t num_params = 0;
  bool params_null = false;
  bool ternary_param = false;  // ternary ops: ct_ternary_param rather than ct_ternary
  int32_t axes[4] = {0, 0, 0, 0};
  int32_t num_axes = 0;
  bool axes_null = false;
  int32_t keepdims = 0;
  int32_t axis = 0;
  int32_t cast_mode = CT_CAST_DEFAULT;
  bool cast_ex = false;  // casts: ct_cast_ex rather than ct_cast
  alignas(8) unsigned char desc[256];  // a descriptor struct is read in place: its alignment
  size_t desc_size = 0;
  bool desc_null = false;
  int32_t num_tensors_delta = 0;  // ct_nn, the queries and plans: num_tensors off by this
  int64_t ws_delta = 0;           // workspace bytes passed: the query's answer plus this
  bool ws_null = false;
  void* stream = nullptr;

  Args() {
    std::memset(t, 0, sizeof t);
    std::memset(shape, 0, sizeof shape);
    std::memset(strides, 0, sizeof strides);
    std::memset(desc, 0, sizeof desc);
  }
  void bind() {
    for (int32_t i = 0; i < n; ++i) {
      t[i].shape = shape_null[i] ? nullptr : shape[i];
      t[i].strides = strides[i];
    }
  }
  const CTensor* in(int32_t i) const { return null_t[i] ? nullptr : &t[i]; }
  CTensor* out(int32_t i) { return null_t[i] ? nullptr : &t[i]; }
};

// The tensor pointers of a, NULL where absent.
inline std::vector<const CTensor*> tensor_list(const Args& a) {
  std::vector<const CTensor*> v(a.n);
  for (int32_t i = 0; i < a.n; ++i) v[i] = a.in(i);
  return v;
}

// The registry's facts about an op, with its tensor arguments split.
struct OpFacts {
  int32_t op = -1;
  CTOpInfo info;
  std::vector<std::string> names;  // tensor argument names, without '?'
  std::vector<bool> optional;
  int32_t nin = 0, nout = 0;
};

inline bool op_facts(int32_t op, OpFacts* f) {
  std::memset(&f->info, 0, sizeof f->info);
  f->info.struct_size = sizeof f->info;
  if (ct_op_info(op, &f->info) != CT_OK) return false;
  f->op = op;
  f->names.clear();
  f->optional.clear();
  std::string all = f->info.tensor_names;
  size_t p = 0;
  while (p <= all.size()) {
    size_t q = all.find(',', p);
    if (q == std::string::npos) q = all.size();
    std::string n = all.substr(p, q - p);
    const bool opt = !n.empty() && n.back() == '?';
    if (opt) n.pop_back();
    f->names.push_back(n);
    f->optional.push_back(opt);
    p = q + 1;
  }
  f->nin = f->info.num_inputs;
  f->nout = f->info.num_outputs;
  return (int32_t)f->names.size() == f->info.num_tensors && f->nin + f->nout == f->info.num_tensors;
}

// The first default of param_names ("alpha=1"), or 1: a value every op with
// parameters accepts (polygamma's n, mvlgamma's p, kthvalue's k, quantile's q).
inline std::vector<double> default_params(const CTOpInfo& info) {
  std::vector<double> v;
  std::string s = info.param_names;
  size_t p = 0;
  for (int32_t i = 0; i < info.num_params; ++i) {
    size_t q = s.find(',', p);
    if (q == std::string::npos) q = s.size();
    const std::string one = s.substr(p, q - p);
    const size_t eq = one.find('=');
    v.push_back(eq == std::string::npos ? 1.0 : std::atof(one.c_str() + eq + 1));
    p = q + 1;
  }
  return v;
}

// The dtype index a tensor argument of role `role` has in a call whose data dtype is dt.
inline int role_dtype(int32_t role, int dt) {
  switch (role) {
    case CT_ROLE_COND: return ctt::DT_BOOL;
    case CT_ROLE_STAT: case CT_ROLE_PARAM: return ctt::DT_F32;
    case CT_ROLE_INDEX: return ctt::DT_I64;
    case CT_ROLE_ANY: return ctt::DT_F64;  // cast's out: another dtype than x's
    default: return dt;
  }
}

// A valid NN call: the descriptor, each input's shape (absent: optional
// input left out), and the extents ct_op_output_info cannot infer.
struct NNExample {
  std::vector<unsigned char> desc;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<bool> absent;
  int64_t extent[2] = {0, 0};
};

template <class D>
std::vector<unsigned char> desc_bytes(const D& d) {
  std::vector<unsigned char> b(sizeof d);
  std::memcpy(b.data(), &d, sizeof d);
  return b;
}

// The built-in NN ops' calls (ct_op_example has none for them: the tool
// keeps its own cases). Extents of 2 in dim 0 everywhere, never 5: the
// shape variants of test_untouched.cpp set dim 0 to 5.
inline bool builtin_nn_example(const std::string& name, NNExample* e) {
  typedef std::vector<int64_t> S;
  CTConv2dDesc conv;
  std::memset(&conv, 0, sizeof conv);
  conv.struct_size = sizeof conv;
  conv.groups = 2;
  CTPool2dDesc pool;
  std::memset(&pool, 0, sizeof pool);
  pool.struct_size = sizeof pool;
  pool.kernel[0] = pool.kernel[1] = 2;
  CTBatchNormDesc bn = {sizeof(CTBatchNormDesc), 0, 1e-5};
  CTLayerNormDesc ln = {sizeof(CTLayerNormDesc), 1, 1e-5};
  CTMatmulDesc mm = {sizeof(CTMatmulDesc), CT_ACTIVATION_RELU};
  CTAttentionDesc at = {sizeof(CTAttentionDesc), CT_CAUSAL_NONE, 0.0};
  const S x4 = {2, 4, 5, 5}, w4 = {4, 2, 3, 3}, y4 = {2, 4, 3, 3};
  const S p_in = {2, 3, 4, 4}, p_out = {2, 3, 2, 2}, c3 = {3};
  if (name == "matmul") {
    e->desc = desc_bytes(mm);
    e->shapes = {S{2, 3}, S{3, 4}, S{4}};
  } else if (name == "conv2d") {
    e->desc = desc_bytes(conv);
    e->shapes = {x4, w4, S{4}};
  } else if (name == "conv2d_backward_data") {
    e->desc = desc_bytes(conv);
    e->shapes = {y4, w4};
    e->extent[0] = e->extent[1] = 5;
  } else if (name == "conv2d_backward_weight") {
    e->desc = desc_bytes(conv);
    e->shapes = {x4, y4};
    e->extent[0] = e->extent[1] = 3;
  } else if (name == "max_pool2d" || name == "avg_pool2d") {
    e->desc = desc_bytes(pool);
    e->shapes = {p_in};
  } else if (name == "max_pool2d_backward") {
    e->desc = desc_bytes(pool);
    e->shapes = {p_out, p_out};
    e->extent[0] = e->extent[1] = 4;
  } else if (name == "avg_pool2d_backward") {
    e->desc = desc_bytes(pool);
    e->shapes = {p_out};
    e->extent[0] = e->extent[1] = 4;
  } else if (name == "batch_norm") {
    e->desc = desc_bytes(bn);
    e->shapes = {p_in, c3, c3, c3, c3};
  } else if (name == "batch_norm_training") {
    e->desc = desc_bytes(bn);
    e->shapes = {p_in, c3, c3};
  } else if (name == "batch_norm_backward") {
    e->desc = desc_bytes(bn);
    e->shapes = {p_in, p_in, c3, c3, c3};
  } else if (name == "layer_norm") {
    e->desc = desc_bytes(ln);
    e->shapes = {S{2, 3, 4}, S{4}, S{4}};
  } else if (name == "layer_norm_backward") {
    e->desc = desc_bytes(ln);
    e->shapes = {S{2, 3, 4}, S{2, 3, 4}, S{2, 3}, S{2, 3}, S{4}};
  } else if (name == "scaled_dot_product_attention") {
    e->desc = desc_bytes(at);
    e->shapes = {S{2, 3, 4}, S{2, 6, 4}, S{2, 6, 4}, S{}};
    e->absent = {false, false, false, true};
  } else {
    return false;
  }
  if (e->absent.empty()) e->absent.assign(e->shapes.size(), false);
  return true;
}

// An NN op's example: the plugin's (ct_op_example), else the table above.
inline bool nn_example(const OpFacts& f, NNExample* e) {
  alignas(8) unsigned char desc[256];
  int32_t ndim[CT_NN_MAX_TENSORS];
  int64_t shape[CT_NN_MAX_TENSORS][CT_MAX_NDIM];
  std::memset(desc, 0, sizeof desc);
  if (ct_op_example(f.op, 0, 0, desc, sizeof desc, f.nin, ndim, shape) == CT_OK) {
    e->desc.assign(desc, desc + f.info.desc_size);
    for (int32_t i = 0; i < f.nin; ++i) {
      e->absent.push_back(ndim[i] < 0);
      e->shapes.push_back(ndim[i] < 0 ? std::vector<int64_t>() : std::vector<int64_t>(shape[i], shape[i] + ndim[i]));
    }
    return true;
  }
  return builtin_nn_example(f.info.name, e);
}

// The NN ops by id through their own entry points (the named ones).
inline CTStatus nn_named(int32_t op, const void* d, Args& a, void* ws, size_t wsb, void* st) {
  const CTensor* i0 = a.in(0); const CTensor* i1 = a.in(1); const CTensor* i2 = a.in(2);
  const CTensor* i3 = a.in(3); const CTensor* i4 = a.in(4);
  switch (op) {
    case CT_OP_MATMUL: return ct_matmul((const CTMatmulDesc*)d, i0, i1, i2, a.out(3), ws, wsb, st);
    case CT_OP_CONV2D: return ct_conv2d((const CTConv2dDesc*)d, i0, i1, i2, a.out(3), ws, wsb, st);
    case CT_OP_CONV2D_BACKWARD_DATA:
      return ct_conv2d_backward_data((const CTConv2dDesc*)d, i0, i1, a.out(2), ws, wsb, st);
    case CT_OP_CONV2D_BACKWARD_WEIGHT:
      return ct_conv2d_backward_weight((const CTConv2dDesc*)d, i0, i1, a.out(2), a.out(3), ws, wsb, st);
    case CT_OP_MAX_POOL2D: return ct_max_pool2d((const CTPool2dDesc*)d, i0, a.out(1), a.out(2), ws, wsb, st);
    case CT_OP_MAX_POOL2D_BACKWARD:
      return ct_max_pool2d_backward((const CTPool2dDesc*)d, i0, i1, a.out(2), ws, wsb, st);
    case CT_OP_AVG_POOL2D: return ct_avg_pool2d((const CTPool2dDesc*)d, i0, a.out(1), ws, wsb, st);
    case CT_OP_AVG_POOL2D_BACKWARD: return ct_avg_pool2d_backward((const CTPool2dDesc*)d, i0, a.out(1), ws, wsb, st);
    case CT_OP_BATCH_NORM: return ct_batch_norm((const CTBatchNormDesc*)d, i0, i1, i2, i3, i4, a.out(5), ws, wsb, st);
    case CT_OP_BATCH_NORM_TRAINING:
      return ct_batch_norm_training((const CTBatchNormDesc*)d, i0, i1, i2, a.out(3), a.out(4), a.out(5), ws, wsb, st);
    case CT_OP_BATCH_NORM_BACKWARD:
      return ct_batch_norm_backward((const CTBatchNormDesc*)d, i0, i1, i2, i3, i4, a.out(5), a.out(6), a.out(7), ws,
                                    wsb, st);
    case CT_OP_LAYER_NORM:
      return ct_layer_norm((const CTLayerNormDesc*)d, i0, i1, i2, a.out(3), a.out(4), a.out(5), ws, wsb, st);
    case CT_OP_LAYER_NORM_BACKWARD:
      return ct_layer_norm_backward((const CTLayerNormDesc*)d, i0, i1, i2, i3, i4, a.out(5), a.out(6), a.out(7), ws,
                                    wsb, st);
    case CT_OP_SCALED_DOT_PRODUCT_ATTENTION:
      return ct_scaled_dot_product_attention((const CTAttentionDesc*)d, i0, i1, i2, i3, a.out(4), ws, wsb, st);
    default: return CT_ERR_NOT_FOUND;  // a plugin's NN op has no named entry point
  }
}

inline CTStatus nn_named_ws(int32_t op, const void* d, Args& a, size_t* b) {
  const CTensor* i0 = a.in(0); const CTensor* i1 = a.in(1); const CTensor* i2 = a.in(2);
  const CTensor* i3 = a.in(3); const CTensor* i4 = a.in(4); const CTensor* i5 = a.in(5);
  const CTensor* i6 = a.in(6); const CTensor* i7 = a.in(7);
  switch (op) {
    case CT_OP_MATMUL: return ct_matmul_workspace_size((const CTMatmulDesc*)d, i0, i1, i2, i3, b);
    case CT_OP_CONV2D: return ct_conv2d_workspace_size((const CTConv2dDesc*)d, i0, i1, i2, i3, b);
    case CT_OP_CONV2D_BACKWARD_DATA: return ct_conv2d_backward_data_workspace_size((const CTConv2dDesc*)d, i0, i1, i2, b);
    case CT_OP_CONV2D_BACKWARD_WEIGHT:
      return ct_conv2d_backward_weight_workspace_size((const CTConv2dDesc*)d, i0, i1, i2, i3, b);
    case CT_OP_MAX_POOL2D: return ct_max_pool2d_workspace_size((const CTPool2dDesc*)d, i0, i1, i2, b);
    case CT_OP_MAX_POOL2D_BACKWARD: return ct_max_pool2d_backward_workspace_size((const CTPool2dDesc*)d, i0, i1, i2, b);
    case CT_OP_AVG_POOL2D: return ct_avg_pool2d_workspace_size((const CTPool2dDesc*)d, i0, i1, b);
    case CT_OP_AVG_POOL2D_BACKWARD: return ct_avg_pool2d_backward_workspace_size((const CTPool2dDesc*)d, i0, i1, b);
    case CT_OP_BATCH_NORM: return ct_batch_norm_workspace_size((const CTBatchNormDesc*)d, i0, i1, i2, i3, i4, i5, b);
    case CT_OP_BATCH_NORM_TRAINING:
      return ct_batch_norm_training_workspace_size((const CTBatchNormDesc*)d, i0, i1, i2, i3, i4, i5, b);
    case CT_OP_BATCH_NORM_BACKWARD:
      return ct_batch_norm_backward_workspace_size((const CTBatchNormDesc*)d, i0, i1, i2, i3, i4, i5, i6, i7, b);
    case CT_OP_LAYER_NORM: return ct_layer_norm_workspace_size((const CTLayerNormDesc*)d, i0, i1, i2, i3, i4, i5, b);
    case CT_OP_LAYER_NORM_BACKWARD:
      return ct_layer_norm_backward_workspace_size((const CTLayerNormDesc*)d, i0, i1, i2, i3, i4, i5, i6, i7, b);
    case CT_OP_SCALED_DOT_PRODUCT_ATTENTION:
      return ct_scaled_dot_product_attention_workspace_size((const CTAttentionDesc*)d, i0, i1, i2, i3, i4, b);
    default: return CT_ERR_NOT_FOUND;
  }
}

// One valid call of an op on one device: its tensors (host copies, mirrored
// on the device), the arguments, the workspace, and for NN ops a plan of it.
class OpCall {
 public:
  OpFacts f;
  CTDevice dev = {CT_CPU, 0};
  int dt = ctt::DT_F32;  // the data dtype
  Args valid;
  size_t ws_need = 0;
  int64_t extent[2] = {0, 0};

  OpCall() = default;
  OpCall(const OpCall&) = delete;
  OpCall& operator=(const OpCall&) = delete;
  ~OpCall() {
    ct_plan_destroy(plan_);
    if (ws_dev_) ct_free(dev, ws_dev_);
  }

  // Builds the call; false (with *why) when the op has no valid call here:
  // not on this device for any dtype tried, or no example.
  bool build(int32_t op, CTDevice device, void* stream, std::string* why);
  bool is_nn() const { return f.info.kind == CT_KIND_NN; }
  // max_pool2d_backward's indices: the top-left position of each output's
  // window, h * W + w (max_pool2d writes only positions inside the window).
  int64_t pool_index(int64_t e, const std::vector<int64_t>& shp) const {
    CTPool2dDesc p;
    std::memcpy(&p, valid.desc, sizeof p);
    const int64_t Q = shp.back(), P = shp[shp.size() - 2];
    const int64_t sh = p.stride[0] ? p.stride[0] : p.kernel[0], sw = p.stride[1] ? p.stride[1] : p.kernel[1];
    return (e / Q % P) * sh * extent[1] + (e % Q) * sw;
  }
  bool is_output(int32_t i) const { return i >= f.nin; }

  // The entry point's name, as messages start with it.
  std::string entry_name(Entry e, const Args& a) const;
  bool entry_applies(Entry e) const {
    if (!is_nn()) return e == E_DIRECT;
    if (e == E_DIRECT) return false;
    if (e == E_NN_NAMED || e == E_NN_WS_NAMED) return f.op < CT_OP_END_;
    return true;
  }
  // Runs a (bound here) through entry e; *bytes receives what the queries write.
  CTStatus invoke(Entry e, Args a, size_t* bytes = nullptr, CTPlan** plan_out = nullptr);

  // Fills every output buffer with kPattern (and uploads it to the device).
  bool reset_outputs();
  // Every buffer as it is now (fetched from the device).
  bool snapshot(std::vector<std::vector<unsigned char>>* s);
  // The buffers that differ from s: "" when none.
  std::string changed_since(const std::vector<std::vector<unsigned char>>& s);
  HostTensor& host(int32_t i) { return *host_[i]; }
  bool present(int32_t i) const { return !absent_[i]; }
  // The plan of the valid call (created at the first ask).
  const CTPlan* plan();

 private:
  std::vector<std::unique_ptr<HostTensor>> host_;
  std::vector<std::unique_ptr<DeviceMirror>> mirror_;
  std::vector<bool> absent_;
  std::vector<unsigned char> ws_;
  void* ws_dev_ = nullptr;
  void* ws_ptr_ = nullptr;
  CTPlan* plan_ = nullptr;
};

inline bool OpCall::build(int32_t op, CTDevice device, void* stream, std::string* why) {
  dev = device;
  if (!op_facts(op, &f)) {
    *why = "ct_op_info failed or its tensor_names do not split";
    return false;
  }
  const CTOpInfo& info = f.info;
  if (f.info.num_tensors > CT_NN_MAX_TENSORS) {
    *why = "more tensors than CT_NN_MAX_TENSORS";
    return false;
  }
  // The data dtype: float32 where the op has it, else int32, else bool.
  const int prefer[] = {ctt::DT_F32, ctt::DT_I32, ctt::DT_BOOL, ctt::DT_F64, ctt::DT_F16};
  dt = -1;
  for (int d : prefer)
    if ((info.dtype_mask >> d) & 1u) {
      if (ct_op_supported(op, dev, ctt::dtype(d).dt) != CT_OK) continue;
      dt = d;
      break;
    }
  if (dt < 0) {
    *why = "not supported on this device for float32, int32, bool, float64 or float16";
    return false;
  }
  Args& a = valid;
  a.n = info.num_tensors;
  a.stream = stream;
  // Input shapes.
  std::vector<std::vector<int64_t>> shapes(f.nin, std::vector<int64_t>{2, 3});
  absent_.assign(a.n, false);
  NNExample ex;
  if (is_nn()) {
    if (!nn_example(f, &ex) || (int32_t)ex.shapes.size() != f.nin) {
      *why = "no example call";
      return false;
    }
    shapes = ex.shapes;
    for (int32_t i = 0; i < f.nin; ++i) absent_[i] = ex.absent[i];
    std::memcpy(a.desc, ex.desc.data(), ex.desc.size());
    a.desc_size = ex.desc.size();
    extent[0] = ex.extent[0];
    extent[1] = ex.extent[1];
  } else if (info.kind == CT_KIND_INDEX) {
    a.axis = 1;
    const std::string name = info.name;
    if (info.shape_rule == CT_SHAPE_TAKE) shapes[1] = {2};
    if (name == "index_add") shapes[1] = {3};
  } else if (info.kind == CT_KIND_REDUCE) {
    a.axes[0] = 1;
    a.num_axes = 1;
  } else if (info.kind == CT_KIND_ALONG_AXIS) {
    a.axis = 1;
  }
  const std::vector<double> p = default_params(info);
  for (size_t i = 0; i < p.size() && i < 4; ++i) a.params[i] = p[i];
  a.num_params = info.num_params;
  a.ternary_param = info.kind == CT_KIND_TERNARY && info.num_params > 0;
  // Outputs: ct_op_output_info.
  std::vector<CTensor> inv(f.nin);
  std::vector<const CTensor*> inp(f.nin);
  for (int32_t i = 0; i < f.nin; ++i) {
    std::memset(&inv[i], 0, sizeof inv[i]);
    inv[i].ndim = (int32_t)shapes[i].size();
    inv[i].shape = shapes[i].data();
    inv[i].dtype = ctt::dtype(role_dtype(info.tensor_roles[i], dt)).dt;
    inv[i].device = dev;
    inp[i] = absent_[i] ? nullptr : &inv[i];
  }
  CTOpArgs oa;
  std::memset(&oa, 0, sizeof oa);
  oa.struct_size = sizeof oa;
  oa.axes = a.axes;
  oa.num_axes = a.num_axes;
  oa.keepdims = a.keepdims;
  oa.axis = a.axis;
  oa.dtype = ctt::dtype(ctt::DT_F64).dt;
  oa.desc = a.desc_size ? a.desc : nullptr;
  oa.extent[0] = extent[0];
  oa.extent[1] = extent[1];
  std::vector<CTOutputInfo> outs(f.nout);
  if (CTStatus s = ct_op_output_info(op, &oa, inp.data(), f.nin, outs.data(), f.nout)) {
    *why = std::string("ct_op_output_info failed: ") + ct_status_string(s) + ": " + ct_last_error();
    return false;
  }
  // The tensors, each with a margin, compact strides written out.
  host_.clear();
  mirror_.clear();
  for (int32_t i = 0; i < a.n; ++i) {
    int d;
    std::vector<int64_t> shp;
    if (i < f.nin) {
      d = role_dtype(info.tensor_roles[i], dt);
      shp = shapes[i];
    } else {
      const CTOutputInfo& o = outs[i - f.nin];
      d = ct_dtype_index(o.dtype);
      shp.assign(o.shape, o.shape + o.ndim);
    }
    std::vector<int64_t> st(shp.size(), 1);
    for (size_t k = shp.size(); k-- > 1;) st[k - 1] = st[k] * std::max<int64_t>(shp[k], 1);
    const int64_t pad = kMarginBytes / ctt::dtype(d).size;
    host_.emplace_back(new HostTensor(HostTensor::strided(d, shp, st, pad)));
    HostTensor& h = *host_.back();
    // Inputs: values every op accepts (positive floats; index 0; true).
    if (i < f.nin) {
      for (int64_t e = 0; e < h.numel(); ++e) {
        if (info.tensor_roles[i] == CT_ROLE_INDEX) h.set_i(e, is_nn() ? pool_index(e, shp) : 0);
        else if (ctt::dtype(d).is_float()) h.set(e, 0.5);
        else h.set_i(e, 1);
      }
    } else {
      h.fill_bytes(kPattern);
    }
    mirror_.emplace_back(new DeviceMirror(dev, h));
    if (mirror_.back()->status() != CT_OK) {
      *why = std::string("cannot mirror a tensor on the device: ") + ct_last_error();
      return false;
    }
    CTensor v = mirror_.back()->view();
    a.t[i] = v;
    a.null_t[i] = absent_[i];
    for (size_t k = 0; k < shp.size(); ++k) {
      a.shape[i][k] = shp[k];
      a.strides[i][k] = st[k];
    }
    for (int k = (int)shp.size(); k <= CT_MAX_NDIM; ++k) a.shape[i][k] = a.strides[i][k] = 1;
  }
  a.bind();
  if (is_nn()) {
    Args q = a;
    q.bind();
    size_t need = 0;
    if (CTStatus s = ct_nn_workspace_size(op, a.desc_size ? q.desc : nullptr, tensor_list(q).data(), q.n, &need)) {
      *why = std::string("ct_nn_workspace_size failed: ") + ct_status_string(s) + ": " + ct_last_error();
      return false;
    }
    ws_need = need;
    // The workspace lives on the call's device (an OpenCL one is a cl_mem).
    if (dev.device_type == CT_CPU) {
      ws_.assign(need + 64, 0);
      ws_ptr_ = ws_.data();
    } else if (need > 0 && ct_malloc(dev, need, &ws_dev_) == CT_OK) {
      ws_ptr_ = ws_dev_;
    } else if (need > 0) {
      *why = std::string("cannot allocate the workspace on the device: ") + ct_last_error();
      return false;
    }
  }
  return true;
}

inline std::string OpCall::entry_name(Entry e, const Args& a) const {
  switch (e) {
    case E_DIRECT:
      switch (f.info.kind) {
        case CT_KIND_UNARY: return "ct_unary";
        case CT_KIND_UNARY_PARAM: return "ct_unary_param";
        case CT_KIND_TERNARY: return a.ternary_param ? "ct_ternary_param" : "ct_ternary";
        case CT_KIND_CAST: return a.cast_ex ? "ct_cast_ex" : "ct_cast";
        case CT_KIND_BINARY: return "ct_binary";
        case CT_KIND_REDUCE: return "ct_reduce";
        case CT_KIND_ALONG_AXIS: return "ct_along_axis";
        case CT_KIND_INDEX: return "ct_index";
        default: return "?";
      }
    case E_NN: return "ct_nn";
    case E_NN_NAMED: return std::string("ct_") + f.info.name;
    case E_PLAN_CREATE: return "ct_plan_create";
    case E_PLAN_EXECUTE: return "ct_plan_execute";
    case E_NN_WS: return "ct_nn_workspace_size";
    case E_NN_WS_NAMED: return std::string("ct_") + f.info.name + "_workspace_size";
    default: return "?";
  }
}

inline const CTPlan* OpCall::plan() {
  if (!plan_ && is_nn()) {
    Args a = valid;
    a.bind();
    size_t need = 0;
    if (ct_plan_create(f.op, a.desc_size ? a.desc : nullptr, tensor_list(a).data(), a.n, a.stream, &plan_) != CT_OK ||
        ct_plan_workspace_size(plan_, &need) != CT_OK || need > ws_need) {
      ct_plan_destroy(plan_);
      plan_ = nullptr;
    }
  }
  return plan_;
}

inline CTStatus OpCall::invoke(Entry e, Args a, size_t* bytes, CTPlan** plan_out) {
  a.bind();
  const int32_t op = f.op;
  const double* p = a.params_null ? nullptr : a.params;
  const void* d = a.desc_null ? nullptr : a.desc_size ? a.desc : nullptr;
  const int64_t wsb64 = (int64_t)ws_need + a.ws_delta;
  const size_t wsb = wsb64 < 0 ? 0 : (size_t)wsb64;
  void* ws = a.ws_null ? nullptr : ws_ptr_;
  const int32_t nt = a.n + a.num_tensors_delta;
  // No allocation here: test_exhaustion.cpp counts the library's.
  const CTensor* ts[CT_NN_MAX_TENSORS + 1] = {};  // num_tensors_delta > 0 reads past the op's count
  for (int32_t i = 0; i < a.n; ++i) ts[i] = a.in(i);
  switch (e) {
    case E_DIRECT:
      switch (f.info.kind) {
        case CT_KIND_UNARY: return ct_unary(op, a.in(0), a.out(1), a.stream);
        case CT_KIND_UNARY_PARAM: return ct_unary_param(op, a.in(0), p, a.num_params, a.out(1), a.stream);
        case CT_KIND_TERNARY:
          if (a.ternary_param) return ct_ternary_param(op, a.in(0), a.in(1), a.in(2), p, a.num_params, a.out(3), a.stream);
          return ct_ternary(op, a.in(0), a.in(1), a.in(2), a.out(3), a.stream);
        case CT_KIND_CAST:
          if (a.cast_ex) return ct_cast_ex(a.in(0), a.out(1), a.cast_mode, a.stream);
          return ct_cast(a.in(0), a.out(1), a.stream);
        case CT_KIND_BINARY: return ct_binary(op, a.in(0), a.in(1), a.out(2), a.stream);
        case CT_KIND_REDUCE:
          return ct_reduce(op, a.in(0), a.axes_null ? nullptr : a.axes, a.num_axes, a.keepdims,
                           a.num_params || a.params_null ? p : nullptr, a.num_params, a.out(1), a.stream);
        case CT_KIND_ALONG_AXIS: return ct_along_axis(op, a.in(0), a.axis, a.out(1), a.stream);
        case CT_KIND_INDEX:
          return ct_index(op, a.in(0), a.axis, a.in(1), f.nin > 2 ? a.in(2) : nullptr,
                          a.num_params || a.params_null ? p : nullptr, a.num_params, a.out(f.nin), a.stream);
        default: return CT_ERR_INTERNAL;
      }
    case E_NN: return ct_nn(op, d, ts, nt, ws, wsb, a.stream);
    case E_NN_NAMED: return nn_named(op, d, a, ws, wsb, a.stream);
    case E_PLAN_CREATE: {
      CTPlan* pl = nullptr;
      const CTStatus s = ct_plan_create(op, d, ts, nt, a.stream, plan_out ? plan_out : &pl);
      ct_plan_destroy(pl);
      return s;
    }
    case E_PLAN_EXECUTE: {
      const CTPlan* pl = plan();
      if (!pl) return CT_ERR_INTERNAL;
      return ct_plan_execute(pl, ts, nt, ws, wsb, a.stream);
    }
    case E_NN_WS: return ct_nn_workspace_size(op, d, ts, nt, bytes);
    case E_NN_WS_NAMED: return nn_named_ws(op, d, a, bytes);
    default: return CT_ERR_INTERNAL;
  }
}

inline bool OpCall::reset_outputs() {
  for (int32_t i = f.nin; i < valid.n; ++i) {
    host_[i]->fill_bytes(kPattern);
    if (mirror_[i]->upload() != CT_OK) return false;
  }
  return true;
}

inline bool OpCall::snapshot(std::vector<std::vector<unsigned char>>* s) {
  s->clear();
  for (int32_t i = 0; i < valid.n; ++i) {
    if (mirror_[i]->fetch() != CT_OK) return false;
    s->push_back(host_[i]->bytes());
  }
  return true;
}

inline std::string OpCall::changed_since(const std::vector<std::vector<unsigned char>>& s) {
  std::string r;
  for (int32_t i = 0; i < valid.n; ++i) {
    if (mirror_[i]->fetch() != CT_OK) return "(cannot fetch " + f.names[i] + ")";
    const std::vector<unsigned char> now = host_[i]->bytes();
    if (now == s[i]) continue;
    size_t first = 0;
    while (first < now.size() && now[first] == s[i][first]) ++first;
    r += (r.empty() ? "" : ", ") + f.names[i] + " (first changed byte " + std::to_string(first) + " of " +
         std::to_string(now.size()) + ", margin " + std::to_string(kMarginBytes) + ")";
    // Put it back so that the next case starts from the guarded state.
    std::memcpy(host_[i]->buf(), s[i].data(), s[i].size());
    mirror_[i]->upload();
  }
  return r;
}

}  // namespace ctg

#endif  // CTENSOR_TESTS_GUARD_UTIL_H_
