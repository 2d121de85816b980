// ctensor check: every op x dtype x device on random inputs, in several
// layouts (dense, strided with a reversed dim, broadcast, 0-d), against the
// one reference library (tests/reference, double precision, looked up by op
// id) under per-dtype tolerances (check_cases.cc). Values cross between the
// reference domain (double / int64) and a tensor of any dtype with ct_cast,
// so inputs of half types are exactly the values the op sees. Output shapes
// and dtypes come from the library's shape query (ct_op_output_info). An op
// a plugin added is compared with the reference that plugin registered
// (ct_op_reference, on host tensors of the dtypes under test); an NN op a
// plugin added runs on the example calls its plugin gives (ct_op_example),
// since the tool cannot invent its descriptor. An op without a reference,
// or an NN op without cases, is a failure, never a pass.
#include <ctensor/ctensor.h>
#include <ctensor/plugin.h>
#include <reference.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "check_cases.h"
#include "check_data.h"
#include "probes.h"
#include "tool.h"

namespace ctool {
namespace {

using ctref::Array;
using namespace chk;  // NOLINT: the tool's tensors, uploads and comparison (check_data.h)

// ---- one op's cases ------------------------------------------------------------

struct Result {
  std::string device, op, dtype;
  int cases = 0;
  Verdict v;
  std::string status;  // PASS, FAIL, ERROR, SKIP
  std::string message;
};

// The dtype and shape op `info` writes for these inputs (the library's shape
// query), or false with *why set.
bool output_of(const CTOpInfo& info, const CTOpArgs& args, const std::vector<const CTensor*>& inputs,
               CTDataType* dt, std::vector<int64_t>* shape, std::string* why) {
  CTOutputInfo oi;
  std::memset(&oi, 0, sizeof oi);
  const CTStatus s = ct_op_output_info(info.op, &args, inputs.data(), (int32_t)inputs.size(), &oi, 1);
  if (s != CT_OK) {
    *why = std::string("ct_op_output_info: ") + ct_status_string(s) + ": " + ct_last_error();
    return false;
  }
  *dt = oi.dtype;
  shape->assign(oi.shape, oi.shape + oi.ndim);
  return true;
}

CTOpArgs op_args() {
  CTOpArgs a;
  std::memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  return a;
}

// The scalar parameters of a call; an op not named here gets num_params
// values 0.5, 1.5, ... (integer dtypes: 1, 2, ...).
std::vector<double> params_for(const std::string& name, int num_params, CTDataType dt) {
  const bool fl = ct_dtype_index(dt) >= 0 && ((CT_DTS_FLOAT >> ct_dtype_index(dt)) & 1u);
  const bool u8 = dt.code == CT_UINT;
  if (name == "leaky_relu") return {0.125};
  if (name == "elu") return {1.0};
  if (name == "clamp") return fl ? std::vector<double>{-1.0, 1.5} : (u8 ? std::vector<double>{2, 12} : std::vector<double>{-3, 7});
  if (name == "pow_scalar") return {fl ? 1.5 : 2.0};
  if (name == "add_scalar") return {3.0};
  if (name == "mul_scalar") return {2.0};
  if (name == "var" || name == "std") return {1.0};
  if (name == "round_decimals") return {2.0};  // an integer: 0.5 is refused
  if (name == "polygamma") return {2.0};       // a count, as mvlgamma's
  if (name == "mvlgamma") return {3.0};
  if (name == "quantile" || name == "nanquantile") return {0.37};
  if (name == "kthvalue") return {1.0};  // any count has a first
  std::vector<double> p;
  for (int k = 0; k < num_params; ++k) p.push_back(fl ? k + 0.5 : k + 1.0);
  return p;
}

// Runs one call on the device and the reference, compares the outputs.
class Checker {
 public:
  // plugin: the op is a plugin's, compared with that plugin's reference
  Checker(const Device& dev, const CTOpInfo& info, CTDataType dt, uint64_t seed, bool quick, bool plugin)
      : dev_(dev), info_(info), dt_(dt), rng_(seed * 1000003u + (uint64_t)info.op * 131u + dt.code * 17u + dt.bits),
        quick_(quick), plugin_(plugin) {}

  Result run() {
    Result r;
    r.device = dev_.label;
    r.op = info_.name;
    r.dtype = dtype_name(dt_);
    switch (info_.kind) {
      case CT_KIND_UNARY:
      case CT_KIND_UNARY_PARAM:
        // small shapes (vector tails), a 0-d one, and one big enough for the
        // SIMD main loops and the threaded path
        for (Layout l : {kDense, kStrided}) elementwise(r, {{7, 13}}, l);
        elementwise(r, {{}}, kDense);
        elementwise(r, {{quick_ ? 64 : 100, 1001}}, kDense);
        break;
      case CT_KIND_CAST:
        for (const auto& target : kDtypes) {
          // a device may convert between some pairs only: those it refuses are not run
          if (ct_cast_supported(dev_.info.device, dt_, target.dt) != CT_OK) continue;
          cast_target_ = target.dt;
          for (Layout l : {kDense, kStrided}) elementwise(r, {{5, 11}}, l);
          if (!quick_) elementwise(r, {{50, 1001}}, kDense);
        }
        break;
      case CT_KIND_TERNARY:
        for (Layout l : {kDense, kStrided}) elementwise(r, {{7, 13}, {7, 13}, {7, 13}}, l);
        elementwise(r, {{7, 1}, {1, 13}, {13}}, kDense);  // broadcast
        if (!quick_) elementwise(r, {{100, 1001}, {100, 1001}, {100, 1001}}, kDense);
        break;
      case CT_KIND_BINARY:
        for (Layout l : {kDense, kStrided}) elementwise(r, {{7, 13}, {7, 13}}, l);
        elementwise(r, {{7, 1}, {1, 13}}, kDense);    // broadcast both ways
        elementwise(r, {{3, 4, 5}, {}}, kStrided);    // a 0-d operand
        if (!quick_) {
          elementwise(r, {{2, 1, 6}, {5, 1}}, kDense);  // rank extension
          elementwise(r, {{100, 1001}, {100, 1001}}, kStrided);
          elementwise(r, {{100, 1001}, {1, 1001}}, kDense);
        }
        break;
      case CT_KIND_REDUCE: {
        struct AxisCase { std::vector<int32_t> axes; bool all, keep; };
        std::vector<AxisCase> cases = {{{}, true, false}, {{1}, false, false}, {{0, 2}, false, true}, {{-1}, false, true}};
        if (quick_) cases.resize(3);
        for (const AxisCase& c : cases)
          for (Layout l : {kDense, kStrided}) reduce(r, {5, 6, 7}, c.axes, c.all, c.keep, l);
        if (!quick_)
          for (const AxisCase& c : cases) reduce(r, {32, 65, 33}, c.axes, c.all, c.keep, kDense);
        break;
      }
      case CT_KIND_ALONG_AXIS:
        for (int32_t axis : {0, -1})
          for (Layout l : {kDense, kStrided}) along_axis(r, {6, 9}, axis, l);
        if (!quick_) along_axis(r, {129, 513}, -1, kDense);
        break;
      case CT_KIND_NN:
        nn(r);
        break;
      case CT_KIND_INDEX:  // x (5, 6); indices random in [-n, n), repeats included (the scatters' order)
        for (Layout l : {kDense, kStrided}) {
          if (info_.op == CT_OP_TAKE) {
            index(r, {{5, 6}, {3, 4}}, 1, l);
            index(r, {{5, 6}, {7}}, 0, l);
          } else if (info_.op == CT_OP_GATHER) {
            index(r, {{5, 6}, {5, 4}}, -1, l);
            index(r, {{5, 6}, {3, 6}}, 0, l);
          } else if (info_.op == CT_OP_INDEX_ADD) {
            index(r, {{5, 6}, {9}, {5, 9}}, 1, l);
            index(r, {{5, 6}, {7}, {7, 6}}, 0, l);
          } else {
            index(r, {{5, 6}, {5, 4}, {5, 6}}, 1, l);
            index(r, {{5, 6}, {8, 6}, {9, 6}}, 0, l);
          }
        }
        break;
      default:
        fail(std::string("no checker for kind ") + kind_name(info_.kind) + " (op not checked)");
        break;
    }
    // an error (no reference among them) is a failure: an op is never passed unchecked
    r.status = !error_.empty() ? "ERROR" : (r.v.ok ? "PASS" : "FAIL");
    r.message = !error_.empty() ? error_ : r.v.detail;
    return r;
  }

 private:
  // Input k's dtype: a condition (where's cond) is bool, any other the dtype under test.
  CTDataType input_dtype(int k) const {
    if (info_.tensor_roles && info_.tensor_roles[k] == CT_ROLE_COND) return {CT_BOOL, 8, 1};
    return dt_;
  }

  bool prepare_input(const std::vector<int64_t>& shape, int k, Layout l, Tensor& t, Array& ref_in) {
    const CTDataType dt = input_dtype(k);
    t = make_tensor(dev_.info.device, dt, shape, shape.empty() ? kDense : l);
    if (!t.mem->p) return fail("ct_malloc failed");
    Array gen;
    gen.reset(dt, shape);
    fill_random(gen, info_.name, k, dt, rng_);
    if (CTStatus s = upload(gen, t)) return fail(std::string("ct_cast (upload) failed: ") + ct_last_error(), s);
    if (CTStatus s = download(t, ref_in)) return fail(std::string("ct_cast (download) failed: ") + ct_last_error(), s);
    return true;
  }

  bool fail(const std::string& m, CTStatus = CT_OK) {
    if (error_.empty()) error_ = m;
    return false;
  }

  // A plugin op's reference (ct_op_reference), in place of ctref::run and
  // with its arguments: call.inputs (nullptr: an optional one left out) and
  // one Array per output (nullptr: not requested) with dtype and shape set.
  // The reference gets dense row-major host copies of the inputs in their
  // dtypes (those under test), host outputs of those dtypes and shapes, the
  // call's params, and its axes, keepdims, axis and descriptor as CTOpArgs
  // (the library validates them and hands broadcasting ops' inputs to the
  // reference as views of out's shape).
  bool plugin_reference(const ctref::Call& call, const std::vector<Array*>& outputs, std::string* why) {
    const CTDevice host = {CT_CPU, 0};
    const std::vector<const Array*>& ins = call.inputs;
    CTOpArgs args;
    std::memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.axes = call.all_axes ? nullptr : call.axes.data();
    args.num_axes = call.all_axes ? 0 : (int32_t)call.axes.size();
    args.keepdims = info_.kind == CT_KIND_REDUCE && !ins.empty() && ins[0] && !outputs.empty() && outputs[0] &&
                            outputs[0]->shape.size() == ins[0]->shape.size()
                        ? 1
                        : 0;
    args.axis = call.axis;
    args.desc = call.desc;
    std::vector<Tensor> t(ins.size() + outputs.size());
    std::vector<const CTensor*> ptrs(t.size(), nullptr);
    for (size_t k = 0; k < ins.size(); ++k) {
      if (!ins[k]) continue;
      Array& a = const_cast<Array&>(*ins[k]);
      t[k] = make_tensor(host, a.dtype, a.shape, kDense);
      CTensor src = host_view(a);
      if (!t[k].mem->p || ct_cast(&src, &t[k].t, nullptr) != CT_OK) {
        *why = std::string("the plugin reference's input ") + std::to_string(k) + ": " + ct_last_error();
        return false;
      }
      ptrs[k] = &t[k].t;
    }
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (!outputs[j]) continue;
      Tensor& o = t[ins.size() + j];
      o = make_tensor(host, outputs[j]->dtype, outputs[j]->shape, kDense);
      if (!o.mem->p) {
        *why = "ct_malloc (host) failed";
        return false;
      }
      ptrs[ins.size() + j] = &o.t;
    }
    const CTStatus s = ct_op_reference(info_.op, ptrs.data(), (int32_t)ptrs.size(),
                                       call.params.empty() ? nullptr : call.params.data(), &args);
    if (s != CT_OK) {
      *why = std::string("the plugin's reference (ct_op_reference): ") + ct_status_string(s) + ": " + ct_last_error();
      return false;
    }
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (!outputs[j]) continue;
      if (download(t[ins.size() + j], *outputs[j]) != CT_OK) {
        *why = std::string("ct_cast (reference download) failed: ") + ct_last_error();
        return false;
      }
    }
    return true;
  }

  // The reference of `call` on `ins` into an array like out, compared with out.
  void finish(Result& r, Tensor& out, std::vector<const Array*> ins, ctref::Call& call, const std::string& what) {
    Array got, ref;
    if (CTStatus s = download(out, got)) {
      fail(std::string("ct_cast (download) failed: ") + ct_last_error(), s);
      return;
    }
    ref.dtype = out.t.dtype;
    ref.shape = out.shape;
    call.op = info_.op;
    call.inputs = ins;
    std::string why;
    std::vector<Array*> outs = {&ref};
    if (plugin_ ? !plugin_reference(call, outs, &why) : !ctref::run(call, outs, &why)) {
      fail(what + ": " + why);
      return;
    }
    ++r.cases;
    compare(got, ref, ctcheck::tolerance(info_.name, info_.kind, out.t.dtype), what, r.v);
  }

  std::string describe(const std::vector<std::vector<int64_t>>& shapes, Layout l) const {
    std::string s = dtype_name(dt_) + " ";
    for (size_t k = 0; k < shapes.size(); ++k) {
      s += k ? "," : "";
      s += "(";
      for (size_t d = 0; d < shapes[k].size(); ++d) s += (d ? "," : "") + std::to_string(shapes[k][d]);
      s += ")";
    }
    return s + (l == kStrided ? " strided" : " dense");
  }

  // A dense output tensor of the dtype and shape the op writes for `in` (the shape query).
  bool make_output(const CTOpArgs& args, const std::vector<Tensor>& in, Tensor* out) {
    std::vector<const CTensor*> ptrs;
    for (const Tensor& t : in) ptrs.push_back(&t.t);
    CTDataType odt;
    std::vector<int64_t> oshape;
    std::string why;
    if (!output_of(info_, args, ptrs, &odt, &oshape, &why)) return fail(why);
    *out = make_tensor(dev_.info.device, odt, oshape, kDense);
    if (!out->mem->p) return fail("ct_malloc failed");
    return true;
  }

  void elementwise(Result& r, const std::vector<std::vector<int64_t>>& shapes, Layout l) {
    if (!error_.empty()) return;
    std::vector<Tensor> in(shapes.size());
    std::vector<Array> ref_in(shapes.size());
    for (size_t k = 0; k < shapes.size(); ++k)
      if (!prepare_input(shapes[k], (int)k, l, in[k], ref_in[k])) return;
    CTOpArgs args = op_args();
    args.dtype = cast_target_;
    Tensor out;
    if (!make_output(args, in, &out)) return;
    const std::vector<double> params = params_for(info_.name, info_.num_params, dt_);
    CTStatus s = CT_OK;
    switch (info_.kind) {
      case CT_KIND_UNARY: s = ct_unary(info_.op, &in[0].t, &out.t, nullptr); break;
      case CT_KIND_UNARY_PARAM:
        s = ct_unary_param(info_.op, &in[0].t, params.data(), (int32_t)params.size(), &out.t, nullptr);
        break;
      case CT_KIND_CAST: s = ct_cast(&in[0].t, &out.t, nullptr); break;
      case CT_KIND_TERNARY:
        s = ct_ternary_param(info_.op, &in[0].t, &in[1].t, &in[2].t, params.data(), (int32_t)params.size(), &out.t,
                             nullptr);
        break;
      case CT_KIND_BINARY: s = ct_binary(info_.op, &in[0].t, &in[1].t, &out.t, nullptr); break;
    }
    std::string what = describe(shapes, l) + (info_.kind == CT_KIND_CAST ? " -> " + dtype_name(out.t.dtype) : "");
    if (s != CT_OK) {
      fail(what + ": " + ct_status_string(s) + ": " + ct_last_error(), s);
      return;
    }
    ctref::Call call;
    call.params = params;
    std::vector<const Array*> ins;
    for (Array& a : ref_in) ins.push_back(&a);
    finish(r, out, ins, call, what);
  }

  void reduce(Result& r, const std::vector<int64_t>& shape, const std::vector<int32_t>& axes, bool all, bool keep,
              Layout l) {
    if (!error_.empty()) return;
    std::vector<Tensor> in(1);
    Array ref_in;
    if (!prepare_input(shape, 0, l, in[0], ref_in)) return;
    CTOpArgs args = op_args();
    args.axes = all ? nullptr : axes.data();
    args.num_axes = all ? 0 : (int32_t)axes.size();
    args.keepdims = keep;
    Tensor out;
    if (!make_output(args, in, &out)) return;
    const std::vector<double> params = params_for(info_.name, info_.num_params, dt_);
    CTStatus s = ct_reduce(info_.op, &in[0].t, args.axes, args.num_axes, keep, params.empty() ? nullptr : params.data(),
                           (int32_t)params.size(), &out.t, nullptr);
    std::string what = describe({shape}, l) + " axes=";
    if (all) what += "all";
    for (size_t k = 0; k < axes.size(); ++k) what += (k ? "," : "") + std::to_string(axes[k]);
    what += keep ? " keepdims" : "";
    if (s != CT_OK) {
      fail(what + ": " + ct_status_string(s) + ": " + ct_last_error(), s);
      return;
    }
    ctref::Call call;
    call.params = params;
    call.axes = axes;
    call.all_axes = all;
    finish(r, out, {&ref_in}, call, what);
  }

  void along_axis(Result& r, const std::vector<int64_t>& shape, int32_t axis, Layout l) {
    if (!error_.empty()) return;
    std::vector<Tensor> in(1);
    Array ref_in;
    if (!prepare_input(shape, 0, l, in[0], ref_in)) return;
    CTOpArgs args = op_args();
    args.axis = axis;
    Tensor out;
    if (!make_output(args, in, &out)) return;
    CTStatus s = ct_along_axis(info_.op, &in[0].t, axis, &out.t, nullptr);
    const std::string what = describe({shape}, l) + " axis=" + std::to_string(axis);
    if (s != CT_OK) {
      fail(what + ": " + ct_status_string(s) + ": " + ct_last_error(), s);
      return;
    }
    ctref::Call call;
    call.axis = axis;
    finish(r, out, {&ref_in}, call, what);
  }

  // An index op: input 1 is the int64 index, random in [-n, n) for the axis's extent n.
  void index(Result& r, const std::vector<std::vector<int64_t>>& shapes, int32_t axis, Layout l) {
    if (!error_.empty()) return;
    std::vector<Tensor> in(shapes.size());
    std::vector<Array> ref_in(shapes.size());
    const int32_t ax = axis < 0 ? axis + (int32_t)shapes[0].size() : axis;
    const int64_t n = shapes[0][(size_t)ax];
    for (size_t k = 0; k < shapes.size(); ++k) {
      if (k != 1) {
        if (!prepare_input(shapes[k], (int)k, l, in[k], ref_in[k])) return;
        continue;
      }
      const CTDataType i64 = {CT_INT, 64, 1};
      in[k] = make_tensor(dev_.info.device, i64, shapes[k], l);
      if (!in[k].mem->p) return (void)fail("ct_malloc failed");
      Array gen(i64, shapes[k]);
      std::uniform_int_distribution<int64_t> u(-n, n - 1);
      for (int64_t& v : gen.i) v = u(rng_);
      if (CTStatus s = upload(gen, in[k])) return (void)fail(std::string("upload failed: ") + ct_last_error(), s);
      if (CTStatus s = download(in[k], ref_in[k])) return (void)fail(std::string("download: ") + ct_last_error(), s);
    }
    CTOpArgs args = op_args();
    args.axis = axis;
    Tensor out;
    if (!make_output(args, in, &out)) return;
    const double alpha = 1.5;
    const bool with_alpha = info_.num_params > 0 && ctref::is_float(dt_);
    CTStatus s = ct_index(info_.op, &in[0].t, axis, &in[1].t, in.size() > 2 ? &in[2].t : nullptr,
                          with_alpha ? &alpha : nullptr, with_alpha ? 1 : 0, &out.t, nullptr);
    const std::string what = describe(shapes, l) + " axis=" + std::to_string(axis);
    if (s != CT_OK) {
      fail(what + ": " + ct_status_string(s) + ": " + ct_last_error(), s);
      return;
    }
    ctref::Call call;
    call.axis = axis;
    for (int32_t p = 0; p < info_.num_params; ++p) call.params.push_back(with_alpha ? alpha : 1.0);
    std::vector<const Array*> ins;
    for (const Array& a : ref_in) ins.push_back(&a);
    finish(r, out, ins, call, what);
  }

  // Indices for max_pool2d_backward (tensors dy, indices, dx): those the
  // reference max_pool2d gives for random values of dx's shape, one tap of
  // each window (positions h * W + w inside x).
  bool pool_indices(const ctcheck::NNCase& c, Array* idx) {
    Array x(CTDataType{CT_FLOAT, 64, 1}, c.shapes[2]), y(CTDataType{CT_FLOAT, 64, 1}, c.shapes[0]);
    std::uniform_real_distribution<double> u(-1, 1);
    for (double& v : x.f) v = u(rng_);
    ctref::Call call;
    call.op = CT_OP_MAX_POOL2D;
    call.desc = c.desc.data();
    call.inputs = {&x};
    std::string why;
    if (!ctref::run(call, {&y, idx}, &why)) return fail(c.label + ": indices from the reference max_pool2d: " + why);
    for (int64_t i : idx->i)
      if (i < 0) return fail(c.label + ": a pooling window without a tap inside x");
    return true;
  }

  // The dtype kind (ctcheck::NNCase::dtype_kind) of a tensor of role r.
  static int role_dtype_kind(int32_t r) {
    return r == CT_ROLE_STAT || r == CT_ROLE_PARAM ? 1 : r == CT_ROLE_INDEX ? 2 : r == CT_ROLE_COND ? 3 : 0;
  }
  CTDataType kind_dtype(int kind) const {
    return kind == 1 ? CTDataType{CT_FLOAT, 32, 1} : kind == 2 ? CTDataType{CT_INT, 64, 1}
           : kind == 3 ? CTDataType{CT_BOOL, 8, 1} : dt_;
  }

  // The cases of an NN op the tool has none for (a plugin's): its plugin's
  // small examples (ct_op_example, size 0; --quick: the first 2, else at
  // most 16), outputs shaped by ct_op_output_info for the dtypes under test.
  // False (with error_ set) when the op has none or one is unusable.
  bool example_cases(std::vector<ctcheck::NNCase>* cases) {
    const int32_t nin = info_.num_inputs, nt = info_.num_tensors;
    const int limit = quick_ ? 2 : 16;
    for (int32_t i = 0; i < limit; ++i) {
      ctcheck::NNCase c;
      c.desc.assign((size_t)std::max<int32_t>(info_.desc_size, 0), 0);  // none for an op without a descriptor
      int32_t nd[CT_NN_MAX_TENSORS];
      int64_t shp[CT_NN_MAX_TENSORS][CT_MAX_NDIM];
      const CTStatus s = ct_op_example(info_.op, i, 0, c.desc.empty() ? nullptr : c.desc.data(), c.desc.size(), nin,
                                       nd, shp);
      if (s == CT_ERR_NOT_FOUND && i > 0) break;
      if (s != CT_OK)
        return fail(std::string("no NN cases for ") + info_.name + ": not in tools/check_cases.cc, and ct_op_example " +
                        (s == CT_ERR_NOT_FOUND ? "gives none: " : "failed: ") + ct_status_string(s) + ": " +
                        ct_last_error() + " (op not checked)",
                    s);
      c.num_inputs = nin;
      c.label = "example " + std::to_string(i) + ":";
      c.shapes.reserve((size_t)nt);  // stand[k] points into c.shapes[k]
      std::vector<CTensor> stand(nin);
      std::vector<const CTensor*> ptr(nin, nullptr);
      for (int32_t k = 0; k < nin; ++k) {
        c.absent.push_back(nd[k] < 0);
        c.dtype_kind.push_back(role_dtype_kind(info_.tensor_roles[k]));
        c.shapes.push_back(nd[k] < 0 ? std::vector<int64_t>{} : std::vector<int64_t>(shp[k], shp[k] + nd[k]));
        c.label += " " + arg_name((size_t)k) + (nd[k] < 0 ? " -" : " (" + join(c.shapes.back()) + ")");
        if (nd[k] < 0) continue;
        stand[k] = CTensor{nullptr, {CT_CPU, 0}, nd[k], kind_dtype(c.dtype_kind.back()), c.shapes.back().data(),
                           nullptr, 0};
        ptr[k] = &stand[k];
      }
      CTOpArgs args = op_args();
      args.desc = c.desc.empty() ? nullptr : c.desc.data();
      std::vector<CTOutputInfo> outs(nt - nin);
      if (CTStatus st = ct_op_output_info(info_.op, &args, ptr.data(), nin, outs.data(), nt - nin))
        return fail(c.label + ": ct_op_output_info: " + ct_status_string(st) + ": " + ct_last_error(), st);
      for (int32_t j = 0; j < nt - nin; ++j) {
        const CTDataType odt = outs[j].dtype;
        int kind = 0;
        while (kind < 3 && !(kind_dtype(kind).code == odt.code && kind_dtype(kind).bits == odt.bits)) ++kind;
        if (!(kind_dtype(kind).code == odt.code && kind_dtype(kind).bits == odt.bits))
          return fail(c.label + ": output " + arg_name((size_t)(nin + j)) + " is " + dtype_name(odt) +
                      ", a dtype the check has no place for");
        c.absent.push_back(false);
        c.dtype_kind.push_back(kind);
        c.shapes.emplace_back(outs[j].shape, outs[j].shape + outs[j].ndim);
      }
      cases->push_back(std::move(c));
    }
    return true;
  }

  static std::string join(const std::vector<int64_t>& v) {
    std::string s;
    for (size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
    return s;
  }

  void nn(Result& r) {
    std::vector<ctcheck::NNCase> cases = ctcheck::nn_cases(info_.name, quick_);
    if (cases.empty() && plugin_ && !example_cases(&cases)) return;
    if (cases.empty()) {
      fail(std::string("no NN cases for ") + info_.name + " in tools/check_cases.cc (op not checked)");
      return;
    }
    for (const ctcheck::NNCase& c : cases) {
      if (!error_.empty()) return;
      const size_t n = c.shapes.size();
      std::vector<Tensor> t(n);
      std::vector<Array> ref_in(n);
      std::vector<const CTensor*> ptr(n, nullptr);
      for (size_t k = 0; k < n; ++k) {
        if (c.absent[k]) continue;
        const CTDataType dt = kind_dtype(c.dtype_kind[k]);
        const std::vector<int64_t> perm = k < c.perm.size() ? c.perm[k] : std::vector<int64_t>{};
        t[k] = make_tensor(dev_.info.device, dt, c.shapes[k], kDense, perm);
        if (!t[k].mem->p) return (void)fail("ct_malloc failed");
        ptr[k] = &t[k].t;
        if ((int)k < c.num_inputs) {
          Array gen(dt, c.shapes[k]);
          if (info_.tensor_roles && info_.tensor_roles[k] == CT_ROLE_INDEX) {
            if (plugin_)  // valid indices depend on what the op does with them
              return (void)fail(c.label + ": input " + arg_name(k) + " holds indices, which the check cannot make "
                                "for a plugin's op");
            if (!pool_indices(c, &gen)) return;
          } else if (!gen.is_float()) {  // a plugin op's bool or integer input: 0/1, or small integers
            std::uniform_int_distribution<int64_t> u(dt.code == CT_BOOL || dt.code == CT_UINT ? 0 : -3,
                                                     dt.code == CT_BOOL ? 1 : 3);
            for (int64_t& v : gen.i) v = u(rng_);
          } else {
            const ctcheck::Domain dom = ctcheck::nn_domain(info_.name, (int)k);
            std::uniform_real_distribution<double> u(dom.lo, dom.hi);
            for (double& v : gen.f) v = u(rng_);
          }
          CTensor h = host_view(gen);
          if (CTStatus s = ct_cast(&h, &t[k].t, nullptr)) return (void)fail(std::string("upload: ") + ct_last_error(), s);
          if (CTStatus s = download(t[k], ref_in[k])) return (void)fail(std::string("download: ") + ct_last_error(), s);
        }
      }
      // the generic NN pair: the workspace query, then the run
      const void* desc = c.desc.empty() ? nullptr : c.desc.data();  // empty: an op without a descriptor
      size_t bytes = 0;
      CTStatus s = ct_nn_workspace_size(info_.op, desc, ptr.data(), (int32_t)n, &bytes);
      std::shared_ptr<Memory> ws;
      if (s == CT_OK && bytes) {
        ws = std::make_shared<Memory>(dev_.info.device, bytes);
        if (!ws->p) return (void)fail("ct_malloc (workspace) failed");
      }
      if (s == CT_OK) s = ct_nn(info_.op, desc, ptr.data(), (int32_t)n, ws ? ws->p : nullptr, bytes, nullptr);
      const std::string what = dtype_name(dt_) + " " + c.label;
      if (s != CT_OK) return (void)fail(what + ": " + ct_status_string(s) + ": " + ct_last_error(), s);
      ctref::Call call;
      call.op = info_.op;
      call.desc = desc;
      for (int k = 0; k < c.num_inputs; ++k) call.inputs.push_back(c.absent[k] ? nullptr : &ref_in[k]);
      std::vector<Array> ref_out(n);
      std::vector<Array*> outs;
      for (size_t k = c.num_inputs; k < n; ++k) {
        if (c.absent[k]) {
          outs.push_back(nullptr);
          continue;
        }
        ref_out[k].dtype = t[k].t.dtype;
        ref_out[k].shape = t[k].shape;
        outs.push_back(&ref_out[k]);
      }
      std::string why;
      if (plugin_ ? !plugin_reference(call, outs, &why) : !ctref::run(call, outs, &why))
        return (void)fail(what + ": " + why);
      ++r.cases;
      for (size_t k = c.num_inputs; k < n; ++k) {
        if (c.absent[k]) continue;
        Array got;
        if (CTStatus st = download(t[k], got)) return (void)fail(std::string("download: ") + ct_last_error(), st);
        const std::string nm = arg_name(k);
        compare(got, ref_out[k], ctcheck::tolerance(info_.name, info_.kind, t[k].t.dtype), what + " " + nm, r.v);
      }
    }
  }

  // The name of tensor argument k of the entry point ("x", "w", "bias", ...), from the registry.
  std::string arg_name(size_t k) const {
    std::stringstream ss(info_.tensor_names ? info_.tensor_names : "");
    std::string name;
    for (size_t i = 0; std::getline(ss, name, ','); ++i)
      if (i == k) return name.empty() || name.back() != '?' ? name : name.substr(0, name.size() - 1);
    return std::to_string(k);
  }

  const Device& dev_;
  const CTOpInfo& info_;
  CTDataType dt_;
  std::mt19937_64 rng_;
  bool quick_;
  bool plugin_;
  CTDataType cast_target_{};
  std::string error_;
};

}  // namespace

int cmd_check(const Options& o) {
  const std::vector<Device> devs = select_devices(o);
  const std::vector<CTOpInfo> reg = registry();
  const std::map<int32_t, std::string> owner = plugin_of_ops();  // a plugin's op: its own reference
  CTDataType only{};
  const bool one_dtype = !o.dtype.empty() && dtype_from_name(o.dtype, &only);
  const auto t0 = ctprobe::Clock::now();

  // the work list, for the progress bar. A pair the op's rule defines but the
  // device refuses (ct_op_supported) is not run: it is counted and listed.
  struct Item { const Device* dev; const CTOpInfo* info; std::vector<CTDataType> dts; };
  struct Refusal { std::string device, op, dtype, message; };
  std::vector<Item> items;
  std::vector<Refusal> refused;
  std::map<std::string, std::pair<size_t, size_t>> per_device;  // label -> (pairs run, pairs refused)
  size_t total = 0;
  for (const Device& d : devs)
    for (const CTOpInfo& info : reg) {
      if (!selected_op(o, info)) continue;
      Item it{&d, &info, {}};
      for (size_t k = 0; k < sizeof kDtypes / sizeof kDtypes[0]; ++k) {
        const auto& e = kDtypes[k];  // kDtypes is in CTDtypeIndex order
        if (one_dtype && !(e.dt.code == only.code && e.dt.bits == only.bits)) continue;
        if (ct_op_supported(info.op, d.info.device, e.dt) == CT_OK) {
          it.dts.push_back(e.dt);
          ++per_device[d.label].first;
        } else if ((info.dtype_mask >> k) & 1u) {
          refused.push_back({d.label, info.name, e.name, ct_last_error()});
          ++per_device[d.label].second;
        }
      }
      total += it.dts.size();
      items.push_back(it);
    }

  std::printf("%-24s %-8s %-60s %6s %10s  %s\n", "op", "device", "dtypes", "cases", "worst/tol", "status");
  Progress progress(total);
  std::vector<Result> results;
  std::map<std::string, int> ops_checked;
  int failed = 0, passed = 0, skipped = 0;
  for (const Item& it : items) {
    std::vector<Result> rows;
    for (CTDataType dt : it.dts) {
      Checker c(*it.dev, *it.info, dt, o.seed, o.quick, owner.count(it.info->op) != 0);
      rows.push_back(c.run());
      progress.step(std::string(it.info->name) + " " + dtype_name(dt));
    }
    progress.finish();
    // one line per op and device; failures in detail below it
    std::string dts, status = "PASS";
    int cases = 0;
    double worst = 0;
    for (const Result& r : rows) {
      dts += (dts.empty() ? "" : " ") + r.dtype;
      cases += r.cases;
      worst = std::max(worst, r.v.worst);
      if (r.status == "FAIL" || r.status == "ERROR") status = "FAIL";
      else if (r.status == "SKIP" && status == "PASS") status = "SKIP";
    }
    if (rows.empty()) {
      dts = "(no dtype runs here)";
      status = "SKIP";
    }
    std::printf("%-24s %-8s %-60s %6d %10.3g  %s\n", it.info->name, it.dev->label.c_str(), dts.c_str(), cases, worst,
                status.c_str());
    for (const Result& r : rows)
      if (r.status != "PASS") std::printf("    %s %s: %s\n", r.dtype.c_str(), r.status.c_str(), r.message.c_str());
    std::fflush(stdout);
    if (status == "FAIL") ++failed;
    else if (status == "SKIP") ++skipped;
    else ++passed;
    ops_checked[it.info->name] = 1;
    for (Result& r : rows) results.push_back(std::move(r));
  }
  size_t pairs = results.size(), pairs_failed = 0;
  for (const Result& r : results) pairs_failed += r.status == "FAIL" || r.status == "ERROR";
  const double secs = ctprobe::since(t0);
  std::printf("\n");
  for (const Device& d : devs) {
    const auto& c = per_device[d.label];
    std::printf("%s: %zu op x dtype pairs ran; %zu that the ops' rules define were refused by ct_op_supported and "
                "skipped%s\n",
                d.label.c_str(), c.first, c.second, c.second ? (o.json.empty() ? " (each with its reason in --json)" : " (listed in the JSON)") : "");
    for (const Refusal& r : refused)
      if (r.device == d.label) {  // one example of the device's reason
        std::printf("    e.g. %s %s: %s\n", r.op.c_str(), r.dtype.c_str(), r.message.c_str());
        break;
      }
  }
  std::printf("checked %zu ops of ct_op_count() = %d on %zu device(s): %zu op x dtype pairs, %zu failed, %zu refused "
              "by their device; %d ops passed, %d failed, %d skipped (%.1f s)\n",
              ops_checked.size(), ct_op_count(), devs.size(), pairs, pairs_failed, refused.size(), passed, failed,
              skipped, secs);
  if (pairs == 0) std::printf("no op x dtype pair ran: nothing was checked\n");
  if (!o.json.empty()) {
    std::ostringstream js;
    js << "{\n  \"tool\": \"ctensor check\",\n  \"version\": \"" << ct_version_string() << "\",\n  \"seed\": "
       << o.seed << ",\n  \"quick\": " << (o.quick ? "true" : "false") << ",\n  \"op_count\": " << ct_op_count()
       << ",\n  \"ops_checked\": " << ops_checked.size() << ",\n  \"pairs\": " << pairs << ",\n  \"pairs_failed\": "
       << pairs_failed << ",\n  \"pairs_refused\": " << refused.size() << ",\n  \"seconds\": " << json_num(secs)
       << ",\n  \"refused\": [";
    for (size_t k = 0; k < refused.size(); ++k)
      js << (k ? "," : "") << "\n    {\"device\": \"" << json_escape(refused[k].device) << "\", \"op\": \""
         << json_escape(refused[k].op) << "\", \"dtype\": \"" << refused[k].dtype << "\", \"message\": \""
         << json_escape(refused[k].message) << "\"}";
    js << "\n  ],\n  \"results\": [";
    for (size_t k = 0; k < results.size(); ++k) {
      const Result& r = results[k];
      js << (k ? "," : "") << "\n    {\"device\": \"" << json_escape(r.device) << "\", \"op\": \"" << json_escape(r.op)
         << "\", \"dtype\": \"" << r.dtype << "\", \"cases\": " << r.cases << ", \"worst_over_tolerance\": "
         << json_num(r.v.worst) << ", \"worst_abs_error\": " << json_num(r.v.worst_abs) << ", \"status\": \""
         << r.status << "\", \"message\": \"" << json_escape(r.message) << "\"}";
    }
    js << "\n  ]\n}\n";
    if (!write_file(o.json, js.str())) return 1;
  }
  return failed || pairs == 0 ? 1 : 0;
}

}  // namespace ctool
