// ops.cpp — the functions generated from the op registry: categories 1 and 2, one native function per op.
//
// One function per op (plus array-API aliases), so a call costs one nanobind
// dispatch, the imports and the C call. Outputs without out= are allocated
// from the library's shape query (ct_op_output_info): the bindings hold no
// op's shape or dtype rule. Python scalars become 0-d tensors of the first
// array operand's dtype (NEP 50's weak scalars); broadcasting, including of
// 0-d operands, is the library's.
#include "common.h"

#include <array>
#include <cstring>
#include <algorithm>
#include <cstdlib>
#include <deque>
#include <unordered_map>

namespace ctpy {
namespace {

// ---------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------

struct OpCtx {
  int32_t op;
  const char* name;   // the Python name, for messages
  const char* entry;  // the entry point, as the library's messages name it
};

CTOpArgs op_args() {
  CTOpArgs a{};
  a.struct_size = sizeof a;
  return a;
}

nb::object call_unary(const OpCtx& c, nb::handle x, const double* params, int np, nb::handle out) {
  Arg xa;
  import_arg(xa, x.ptr(), false, false, c.name, "x");
  const CTensor* in[1] = {&xa.t};
  Out o;
  make_out(o, out, c.op, op_args(), in, 1, xa.t.device, c.name, c.entry);
  void* stream = stream_for(xa);
  check(run_kernel(xa.numel(), [&] {
    return params ? ct_unary_param(c.op, &xa.t, params, np, o.t, stream) : ct_unary(c.op, &xa.t, o.t, stream);
  }));
  return o.result;
}

// The dtype and device Python scalars among `args` take: those of the first array.
const Arg* first_array(Arg* const* args, int n) {
  for (int i = 0; i < n; ++i)
    if (!args[i]->is_scalar) return args[i];
  return nullptr;
}

void fill_scalars(Arg* const* args, const char* const* names, int n, const Arg* like, const char* fn) {
  for (int i = 0; i < n; ++i)
    if (args[i]->is_scalar) fill_scalar(*args[i], like->t.dtype, like->t.device, fn, names[i]);
}

// Python scalars only: take them as NumPy would (bool, int64 or float64).
void scalars_only(Arg* const* args, const char* const* names, int n, const char* fn) {
  CTDataType dt{CT_BOOL, 8, 1};
  for (int i = 0; i < n; ++i) {
    if (PyFloat_Check(args[i]->obj)) dt = {CT_FLOAT, 64, 1};
    else if (!PyBool_Check(args[i]->obj) && dt.code == CT_BOOL) dt = {CT_INT, 64, 1};
  }
  for (int i = 0; i < n; ++i) fill_scalar(*args[i], dt, {CT_CPU, 0}, fn, names[i]);
}

nb::object call_binary(const OpCtx& c, nb::handle a, nb::handle b, nb::handle out) {
  Arg aa, ba;
  import_arg(aa, a.ptr(), false, true, c.name, "x1");
  import_arg(ba, b.ptr(), false, true, c.name, "x2");
  Arg* args[2] = {&aa, &ba};
  const char* names[2] = {"x1", "x2"};
  if (const Arg* like = first_array(args, 2)) fill_scalars(args, names, 2, like, c.name);
  else scalars_only(args, names, 2, c.name);
  const CTensor* in[2] = {&aa.t, &ba.t};
  Out o;
  make_out(o, out, c.op, op_args(), in, 2, aa.t.device, c.name, c.entry);
  check(run_kernel(numel_of(*o.t), [&] { return ct_binary(c.op, &aa.t, &ba.t, o.t, stream_for(aa)); }));
  return o.result;
}

// where(condition, x1, x2), fma(a, b, c), lerp(a, b, weight): any operand may
// be 0-d or broadcast (the library's NumPy rules); Python scalars for the
// data operands.
// names: the Python names of the three operands, for messages.
nb::object call_ternary(const OpCtx& c, nb::handle a, nb::handle b, nb::handle cc, nb::handle out,
                        const char* const* names, const double* params = nullptr, int32_t num_params = 0) {
  const bool is_where = c.op == CT_OP_WHERE;
  Arg aa, ba, ca;
  import_arg(aa, a.ptr(), false, !is_where, c.name, names[0]);
  import_arg(ba, b.ptr(), false, true, c.name, names[1]);
  import_arg(ca, cc.ptr(), false, true, c.name, names[2]);
  Arg* args[3] = {&aa, &ba, &ca};
  Arg* data_args[2] = {&ba, &ca};
  const Arg* like = is_where ? first_array(data_args, 2) : first_array(args, 3);
  if (!like) {
    if (is_where) scalars_only(data_args, names + 1, 2, c.name);
    else scalars_only(args, names, 3, c.name);
  } else {
    fill_scalars(args, names, 3, like, c.name);
  }
  const CTensor* in[3] = {&aa.t, &ba.t, &ca.t};
  Out o;
  make_out(o, out, c.op, op_args(), in, 3, ba.t.device, c.name, c.entry);
  check(run_kernel(numel_of(*o.t), [&] {
    return num_params ? ct_ternary_param(c.op, &aa.t, &ba.t, &ca.t, params, num_params, o.t, stream_for(ba))
                      : ct_ternary(c.op, &aa.t, &ba.t, &ca.t, o.t, stream_for(ba));
  }));
  return o.result;
}

bool is_number(nb::handle h) {
  return PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr());  // bool is an int
}

nb::object call_cast(nb::handle x, nb::handle dtype, nb::handle out, bool saturate) {
  const char* fn = "cast";
  Arg xa;
  import_arg(xa, x.ptr(), false, false, fn, "x");
  if (dtype.is_none() && out.is_none()) raise(PyExc_TypeError, "cast: give dtype, out, or both");
  CTOpArgs args = op_args();
  if (!dtype.is_none()) args.dtype = parse_dtype(dtype, fn, "dtype");
  const CTensor* in[1] = {&xa.t};
  Out o;
  make_out(o, out, CT_OP_CAST, args, in, 1, xa.t.device, fn, "ct_cast");
  if (!out.is_none() && !dtype.is_none() && !same_dtype(o.t->dtype, args.dtype))
    raise(PyExc_TypeError, "cast: dtype=%s but out.dtype=%s", dtype_name(args.dtype).c_str(),
          dtype_name(o.t->dtype).c_str());
  const int32_t mode = saturate ? CT_CAST_SATURATE : CT_CAST_DEFAULT;
  check(run_kernel(xa.numel(), [&] { return ct_cast_ex(&xa.t, o.t, mode, stream_for(xa)); }));
  return o.result;
}

// axis: None (every axis), an int, or a sequence of ints.
struct Axes {
  int32_t v[CT_MAX_NDIM];
  int32_t n = 0;
  bool all = true;
};

Axes parse_axes(nb::handle axis, const char* fn) {
  Axes a;
  if (axis.is_none()) return a;
  a.all = false;
  auto one = [&](nb::handle h) {
    if (!PyLong_Check(h.ptr()) || PyBool_Check(h.ptr()))
      raise(PyExc_TypeError, "%s: axis must be None, an int or a tuple of ints, not %s", fn, Py_TYPE(h.ptr())->tp_name);
    if (a.n >= CT_MAX_NDIM) raise(PyExc_ValueError, "%s: more than %d axes", fn, CT_MAX_NDIM);
    a.v[a.n++] = to_int32(h, fn, "axis");
  };
  if (PyTuple_Check(axis.ptr()) || PyList_Check(axis.ptr())) {
    for (nb::handle h : axis) one(h);
  } else {
    one(axis);
  }
  return a;
}

nb::object call_reduce(const OpCtx& c, nb::handle x, nb::handle axis, bool keepdims, const double* params, int np,
                       nb::handle out) {
  Arg xa;
  import_arg(xa, x.ptr(), false, false, c.name, "x");
  const Axes ax = parse_axes(axis, c.name);
  CTOpArgs args = op_args();
  args.axes = ax.all ? nullptr : ax.v;
  args.num_axes = ax.n;
  args.keepdims = keepdims;
  const CTensor* in[1] = {&xa.t};
  Out o;
  make_out(o, out, c.op, args, in, 1, xa.t.device, c.name, c.entry);
  check(run_kernel(xa.numel(), [&] {
    return ct_reduce(c.op, &xa.t, args.axes, ax.n, keepdims, params, np, o.t, stream_for(xa));
  }));
  return o.result;
}

nb::object call_along_axis(const OpCtx& c, nb::handle x, nb::handle axis, nb::handle out) {
  Arg xa;
  import_arg(xa, x.ptr(), false, false, c.name, "x");
  CTOpArgs args = op_args();
  if (axis.is_none()) {  // the array API's cumulative_sum: axis=None only for x.ndim <= 1
    if (xa.t.ndim > 1)
      raise(PyExc_ValueError, "%s: axis=None needs x.ndim <= 1 (x.shape=%s): name the axis", c.name,
            shape_str(xa.t.ndim, xa.t.shape).c_str());
  } else {
    if (!PyLong_Check(axis.ptr()) || PyBool_Check(axis.ptr()))
      raise(PyExc_TypeError, "%s: axis must be an int, not %s", c.name, Py_TYPE(axis.ptr())->tp_name);
    args.axis = to_int32(axis, c.name, "axis");
  }
  const CTensor* in[1] = {&xa.t};
  Out o;
  make_out(o, out, c.op, args, in, 1, xa.t.device, c.name, c.entry);
  check(run_kernel(xa.numel(), [&] { return ct_along_axis(c.op, &xa.t, args.axis, o.t, stream_for(xa)); }));
  return o.result;
}

// _index(op, x, axis, index, src, params, out): ct_index on any arrays; the
// functions users call (take, gather, scatter, index_add, ...) are
// ctensor/_index.py, which gives them NumPy's and PyTorch's signatures.
nb::object call_index(int32_t op, nb::handle x, int32_t axis, nb::handle index, nb::handle src, nb::handle params,
                      nb::handle out) {
  CTOpInfo info{};
  info.struct_size = sizeof info;
  check(ct_op_info(op, &info));
  if (info.kind != CT_KIND_INDEX) raise(PyExc_ValueError, "_index: op %d (%s) is not an index op", op, info.name);
  const char* fn = info.name;
  Arg xa, ia, sa;
  import_arg(xa, x.ptr(), false, false, fn, "x");
  import_arg(ia, index.ptr(), false, false, fn, "index");
  const CTensor* in[3] = {&xa.t, &ia.t, nullptr};
  int32_t nin = 2;
  if (!src.is_none()) {
    import_arg(sa, src.ptr(), false, false, fn, "src");
    in[2] = &sa.t;
    nin = 3;
  }
  std::vector<double> ps;
  for (nb::handle p : params) ps.push_back(to_double(p, fn, "params"));
  CTOpArgs args = op_args();
  args.axis = axis;
  Out o;
  make_out(o, out, op, args, in, info.num_inputs, xa.t.device, fn, "ct_index");
  const int64_t work = std::max(numel_of(*o.t), ia.numel());
  check(run_kernel(work, [&] {
    return ct_index(op, &xa.t, axis, &ia.t, nin == 3 ? &sa.t : nullptr, ps.empty() ? nullptr : ps.data(),
                    (int32_t)ps.size(), o.t, stream_for(xa));
  }));
  return o.result;
}

// clamp(x, min=None, max=None): a missing bound is no bound.
nb::object call_clamp(const OpCtx& c, nb::handle x, nb::handle lo, nb::handle hi, nb::handle out) {
  if (!lo.is_none() && !hi.is_none() && !(is_number(lo) && is_number(hi))) {
    // array bounds (a number with an array: the array's dtype): clamp_tensor, broadcasting
    static const char* const names[3] = {"x", "min", "max"};
    return call_ternary(OpCtx{CT_OP_CLAMP_TENSOR, c.name, "ct_ternary"}, x, lo, hi, out, names);
  }
  if (!lo.is_none() && !hi.is_none()) {
    double p[2] = {to_double(lo, c.name, "min"), to_double(hi, c.name, "max")};
    return call_unary(c, x, p, 2, out);
  }
  if (lo.is_none() && hi.is_none()) {  // nothing to clamp: a copy (the array API allows both None)
    Arg xa;
    import_arg(xa, x.ptr(), false, false, c.name, "x");
    const CTensor* in[1] = {&xa.t};
    Out o;
    CTOpArgs args = op_args();
    args.dtype = xa.t.dtype;
    make_out(o, out, CT_OP_CAST, args, in, 1, xa.t.device, c.name, "ct_copy");
    check(run_kernel(xa.numel(), [&] { return ct_copy(&xa.t, o.t, stream_for(xa)); }));
    return o.result;
  }
  // One bound: maximum(x, lo) or minimum(x, hi), both NaN-propagating as clamp.
  OpCtx b{lo.is_none() ? (int32_t)CT_OP_MINIMUM : (int32_t)CT_OP_MAXIMUM, c.name, "ct_binary"};
  return call_binary(b, x, lo.is_none() ? hi : lo, out);
}

// ---------------------------------------------------------------------------
// Registering the ops
// ---------------------------------------------------------------------------

std::deque<std::string> g_strings;  // names, signatures and docs outlive the module's functions
const char* keep(std::string s) {
  g_strings.push_back(std::move(s));
  return g_strings.back().c_str();
}

// Array-API (and torch) names for ops whose C name differs.
const std::unordered_map<std::string, std::vector<std::string>> kAliases = {
    {"neg", {"negative"}},
    {"sign", {"sgn"}},
    {"bitwise_not", {"bitwise_invert"}},
    {"clamp", {"clip"}},
    {"sub", {"subtract"}},
    {"mul", {"multiply"}},
    {"div", {"divide"}},
    {"floor_div", {"floor_divide"}},
    {"mod", {"remainder"}},
    {"left_shift", {"bitwise_left_shift"}},
    {"right_shift", {"bitwise_right_shift"}},
    {"cumsum", {"cumulative_sum"}},
    {"cumprod", {"cumulative_prod"}},
    {"modified_bessel_i0", {"i0"}},  // torch.i0, numpy.i0
    {"modified_bessel_i1", {"i1"}},  // torch.special.i1
    {"igamma", {"gammainc"}},        // torch.special.gammainc, scipy.special.gammainc
    {"igammac", {"gammaincc"}},
};

const char* kind_name(int32_t k) {
  switch (k) {
    case CT_KIND_UNARY: return "unary";
    case CT_KIND_UNARY_PARAM: return "unary_param";
    case CT_KIND_TERNARY: return "ternary";
    case CT_KIND_CAST: return "cast";
    case CT_KIND_BINARY: return "binary";
    case CT_KIND_REDUCE: return "reduce";
    case CT_KIND_ALONG_AXIS: return "along_axis";
    case CT_KIND_NN: return "nn";
    case CT_KIND_INDEX: return "index";
    default: return "unknown";
  }
}

// One parameter of a row's param_names ("name" or "name=default").
struct RowParam {
  std::string name;
  bool has_default;
  double dflt;
};
std::vector<RowParam> row_params(const char* names) {
  std::vector<RowParam> ps;
  std::string all = names ? names : "";
  for (size_t at = 0; !all.empty() && at <= all.size();) {
    const size_t end = std::min(all.find(',', at), all.size());
    const std::string item = all.substr(at, end - at);
    const size_t eq = item.find('=');
    ps.push_back({item.substr(0, eq), eq != std::string::npos,
                  eq != std::string::npos ? std::strtod(item.c_str() + eq + 1, nullptr) : 0.0});
    at = end + 1;
  }
  return ps;
}

std::string output_doc(int32_t rule) {
  switch (rule) {
    case CT_OUTPUT_BOOL: return "The result is bool.";
    case CT_OUTPUT_INT64: return "The result is int64.";
    case CT_OUTPUT_ACCUM:
      return "The result has x's dtype for floats, uint64 for unsigned integers, int64 for signed integers and bool.";
    case CT_OUTPUT_FLOAT: return "The result has x's dtype for floats, float64 for integers and bool.";
    default: return "The result has the input's dtype.";
  }
}

const char* kOutDoc =
    "out: an array to write into (same device, the result's shape and dtype; any strides). Without it a new "
    "ctensor.Tensor on the inputs' device is returned.";

// Defines the function(s) of op `op` in `m` (its registry name, plus the
// array-API aliases) and records the names in bound[op]. Every op of
// categories 1 and 2 goes through here: the built-ins when the module is
// imported, a plugin's ops when its library is loaded (_bind_ops).
void bind_op(nb::module_& m, int32_t op, nb::dict bound) {
  {
    CTOpInfo info{};
    info.struct_size = sizeof info;
    if (ct_op_info(op, &info) != CT_OK) return;
    if (info.kind == CT_KIND_NN || info.kind == CT_KIND_CAST || info.kind == CT_KIND_INDEX)
      return;  // _nn.py and _index.py; cast/astype below
    std::vector<std::string> names = {info.name};
    auto al = kAliases.find(info.name);
    if (al != kAliases.end()) names.insert(names.end(), al->second.begin(), al->second.end());
    if (std::string(info.name) == "gelu") names = {"gelu"};
    nb::list pynames;
    for (const std::string& pyname : names) {
      pynames.append(pyname);
      const OpCtx c{op, keep(pyname), keep(entry_name(info))};
      const std::string head = std::string(info.summary) + ".\n\n";
      const std::string tail = "\n\n" + output_doc(info.output_dtype) + "\n" + kOutDoc + "\n\nctensor op '" +
                               info.name + "' (category " + std::to_string(info.category) + ", " +
                               kind_name(info.kind) + ").";
      const char* nm = c.name;
      switch (info.kind) {
        case CT_KIND_UNARY: {
          if (std::string(info.name) == "gelu") {
            const char* doc = keep(head + "approximate: 'none' (erf form) or 'tanh' (as torch.nn.functional.gelu)." + tail);
            const OpCtx tanh_c{CT_OP_GELU_TANH, nm, c.entry};
            m.def(nm, [c, tanh_c](nb::handle x, const std::string& approximate, nb::handle out) {
                if (approximate == "none") return call_unary(c, x, nullptr, 0, out);
                if (approximate == "tanh") return call_unary(tanh_c, x, nullptr, 0, out);
                raise(PyExc_ValueError, "gelu: approximate='%s' (expected 'none' or 'tanh')", approximate.c_str());
              }, nb::arg("x"), nb::kw_only(), nb::arg("approximate") = "none", nb::arg("out") = nb::none(),
              nb::sig(keep(std::string("def ") + nm +
                           "(x: object, *, approximate: str = 'none', out: object | None = None) -> object")),
              doc);
          } else if (std::string(info.name) == "round") {
            // NumPy's round(a, decimals=0): decimals != 0 runs round_decimals (floats)
            const OpCtx dec_c{CT_OP_ROUND_DECIMALS, nm, "ct_unary_param"};
            m.def(nm, [c, dec_c](nb::handle x, int64_t decimals, nb::handle out) {
                if (decimals == 0) return call_unary(c, x, nullptr, 0, out);
                const double p = (double)decimals;
                return call_unary(dec_c, x, &p, 1, out);
              }, nb::arg("x"), nb::arg("decimals") = 0, nb::kw_only(), nb::arg("out") = nb::none(),
              nb::sig(keep(std::string("def ") + nm +
                           "(x: object, decimals: int = 0, *, out: object | None = None) -> object")),
              keep(head + "decimals: the decimal places to round to (NumPy's round, PyTorch's round(decimals=)); "
                          "not 0 runs round_decimals, for float dtypes." + tail));
          } else if (std::string(info.name) == "softplus") {
            // torch.nn.functional.softplus(input, beta=1, threshold=20): either given runs softplus_beta
            const OpCtx beta_c{CT_OP_SOFTPLUS_BETA, nm, "ct_unary_param"};
            m.def(nm, [c, beta_c](nb::handle x, nb::handle beta, nb::handle threshold, nb::handle out) {
                if (beta.is_none() && threshold.is_none()) return call_unary(c, x, nullptr, 0, out);
                const double p[2] = {beta.is_none() ? 1.0 : to_double(beta, c.name, "beta"),
                                     threshold.is_none() ? 20.0 : to_double(threshold, c.name, "threshold")};
                return call_unary(beta_c, x, p, 2, out);
              }, nb::arg("x"), nb::arg("beta") = nb::none(), nb::arg("threshold") = nb::none(), nb::kw_only(),
              nb::arg("out") = nb::none(),
              nb::sig(keep(std::string("def ") + nm +
                           "(x: object, beta: float | None = None, threshold: float | None = None, *, out: object | "
                           "None = None) -> object")),
              keep(head + "Without beta and threshold: log(1 + e^x) exactly (every x). With either: PyTorch's "
                          "softplus(beta=1, threshold=20), x where beta * x > threshold (softplus_beta)." + tail));
          } else {
            m.def(nm, [c](nb::handle x, nb::handle out) { return call_unary(c, x, nullptr, 0, out); }, nb::arg("x"),
                  nb::kw_only(), nb::arg("out") = nb::none(),
                  nb::sig(keep(std::string("def ") + nm + "(x: object, *, out: object | None = None) -> object")),
                  keep(head + "x: the input array." + tail));
          }
          break;
        }
        case CT_KIND_UNARY_PARAM: {
          const std::string n = info.name;
          if (n == "clamp") {
            m.def(nm, [c](nb::handle x, nb::handle lo, nb::handle hi, nb::handle out) {
                return call_clamp(c, x, lo, hi, out);
              }, nb::arg("x"), nb::arg("min") = nb::none(), nb::arg("max") = nb::none(), nb::kw_only(),
              nb::arg("out") = nb::none(),
              nb::sig(keep(std::string("def ") + nm +
                           "(x: object, min: float | None = None, max: float | None = None, *, out: object | None = "
                           "None) -> object")),
              keep(head + "min, max: the bounds (numbers); None is no bound. NaN stays NaN." + tail));
          } else {
            // leaky_relu(x, negative_slope=0.01), elu(x, alpha=1.0), pow_scalar(x, p), threshold(x,
            // threshold, value), a plugin's op: names and defaults from the row ("name=default").
            const std::vector<RowParam> ps = row_params(info.param_names);
            if (ps.empty() || ps.size() > 2) break;  // not a parameter count a unary_param op can have
            std::string sig = std::string("def ") + nm + "(x: object";
            std::string pdoc;
            for (const RowParam& rp : ps) {
              sig += ", " + rp.name + ": float";
              if (rp.has_default) sig += " = " + nb::cast<std::string>(nb::repr(nb::float_(rp.dflt)));
              pdoc += (pdoc.empty() ? "" : ", ") + rp.name;
            }
            sig += ", *, out: object | None = None) -> object";
            pdoc += ps.size() == 1 ? ": the op's parameter" : ": the op's parameters";
            pdoc += std::string(" (") + info.param_names + ").";
            // Each parameter arrives as an object, None when not given: the row's default then, or the
            // TypeError Python gives for a missing argument.
            auto fn = [c, ps, nm](nb::handle x, nb::handle a, nb::handle b, nb::handle out) {
              double p[2] = {0, 0};
              const nb::handle given[2] = {a, b};
              for (size_t k = 0; k < ps.size(); ++k) {
                if (!given[k].is_none()) p[k] = to_double(given[k], nm, ps[k].name.c_str());
                else if (ps[k].has_default) p[k] = ps[k].dflt;
                else throw nb::type_error((std::string(nm) + "() missing required argument: '" + ps[k].name + "'").c_str());
              }
              return call_unary(c, x, p, (int)ps.size(), out);
            };
            if (ps.size() == 1)
              m.def(nm, [fn](nb::handle x, nb::handle a, nb::handle out) { return fn(x, a, nb::none(), out); },
                    nb::arg("x"), nb::arg(keep(ps[0].name)) = nb::none(), nb::kw_only(), nb::arg("out") = nb::none(),
                    nb::sig(keep(sig)), keep(head + pdoc + tail));
            else
              m.def(nm, fn, nb::arg("x"), nb::arg(keep(ps[0].name)) = nb::none(),
                    nb::arg(keep(ps[1].name)) = nb::none(), nb::kw_only(), nb::arg("out") = nb::none(),
                    nb::sig(keep(sig)), keep(head + pdoc + tail));
          }
          break;
        }
        case CT_KIND_TERNARY: {
          // operand names: the array API's for where, else the row's ("input,tensor1,tensor2|out")
          const bool w = op == CT_OP_WHERE;
          std::vector<std::string> tn;
          {
            const std::string all = info.tensor_names ? info.tensor_names : "";
            for (size_t at = 0; tn.size() < 3 && at < all.size();) {
              size_t end = all.find_first_of(",|", at);
              if (end == std::string::npos) end = all.size();
              std::string t = all.substr(at, end - at);
              t = t.substr(0, t.find_first_of("?:"));
              tn.push_back(t);
              at = end + 1;
            }
            while (tn.size() < 3) tn.push_back(std::string(1, (char)('a' + tn.size())));
          }
          const std::array<const char*, 3> an{keep(w ? "condition" : tn[0]), keep(w ? "x1" : tn[1]),
                                              keep(w ? "x2" : (op == CT_OP_LERP ? "weight" : tn[2]))};
          const std::vector<RowParam> ps = row_params(info.param_names);
          if (ps.size() > 2) break;  // not a parameter count an elementwise op can have
          std::string sig = std::string("def ") + nm + "(" + an[0] + ": object, " + an[1] + ": object, " + an[2] +
                            ": object, *";
          for (const RowParam& rp : ps) {
            sig += ", " + rp.name + ": float";
            if (rp.has_default) sig += " = " + nb::cast<std::string>(nb::repr(nb::float_(rp.dflt)));
          }
          sig += ", out: object | None = None) -> object";
          const char* doc = keep(head + "Operands broadcast as in NumPy (0-d ones included); Python scalars take the "
                                        "array operands' dtype." +
                                 (ps.empty() ? "" : " " + std::string(info.param_names) + ": keyword-only numbers.") +
                                 tail);
          // parameters: keyword-only, None meaning the row's default (a TypeError when it has none)
          const auto fn = [c, an, ps](nb::handle a, nb::handle b, nb::handle cc, nb::handle p0, nb::handle p1,
                                      nb::handle out) {
            double p[2] = {0, 0};
            const nb::handle given[2] = {p0, p1};
            for (size_t k = 0; k < ps.size(); ++k) {
              if (!given[k].is_none()) p[k] = to_double(given[k], c.name, ps[k].name.c_str());
              else if (ps[k].has_default) p[k] = ps[k].dflt;
              else raise(PyExc_TypeError, "%s: missing the parameter %s", c.name, ps[k].name.c_str());
            }
            return call_ternary(c, a, b, cc, out, an.data(), p, (int32_t)ps.size());
          };
          if (ps.empty()) {
            m.def(nm, [fn](nb::handle a, nb::handle b, nb::handle cc, nb::handle out) {
                return fn(a, b, cc, nb::none(), nb::none(), out);
              }, nb::arg(an[0]), nb::arg(an[1]), nb::arg(an[2]), nb::kw_only(), nb::arg("out") = nb::none(),
              nb::sig(keep(sig)), doc);
          } else if (ps.size() == 1) {
            m.def(nm, [fn](nb::handle a, nb::handle b, nb::handle cc, nb::handle p0, nb::handle out) {
                return fn(a, b, cc, p0, nb::none(), out);
              }, nb::arg(an[0]), nb::arg(an[1]), nb::arg(an[2]), nb::kw_only(), nb::arg(keep(ps[0].name)) = nb::none(),
              nb::arg("out") = nb::none(), nb::sig(keep(sig)), doc);
          } else {
            m.def(nm, fn, nb::arg(an[0]), nb::arg(an[1]), nb::arg(an[2]), nb::kw_only(),
                  nb::arg(keep(ps[0].name)) = nb::none(), nb::arg(keep(ps[1].name)) = nb::none(),
                  nb::arg("out") = nb::none(), nb::sig(keep(sig)), doc);
          }
          break;
        }
        case CT_KIND_BINARY: {
          m.def(nm, [c](nb::handle a, nb::handle b, nb::handle out) { return call_binary(c, a, b, out); },
                nb::arg("x1"), nb::arg("x2"), nb::kw_only(), nb::arg("out") = nb::none(),
                nb::sig(keep(std::string("def ") + nm +
                             "(x1: object, x2: object, *, out: object | None = None) -> object")),
                keep(head + "x1, x2: arrays of one dtype that broadcast as in NumPy; either may be a Python "
                            "scalar, which takes the other's dtype." + tail));
          break;
        }
        case CT_KIND_REDUCE: {
          // the parameter keeps the op's own name (var and std: correction)
          const std::string pn = info.param_names;
          const bool ddof = pn == "correction";
          const char* doc = keep(head +
                                 "axis: None (every axis), an int, or a tuple of ints (() reduces nothing); negative "
                                 "counts from the end.\nkeepdims: keep the reduced axes as size 1." +
                                 (info.num_params ? "\n" + pn + (ddof ? ": subtracted from the count (NumPy's ddof)."
                                                                      : ": the op's parameter.")
                                                  : std::string()) +
                                 tail);
          const std::vector<RowParam> rps = row_params(info.param_names);
          if (info.num_params == 1 && !ddof && !rps[0].has_default) {
            // a parameter the op cannot do without (quantile's q, kthvalue's k) comes second, as in
            // NumPy's quantile(a, q, axis) and torch.kthvalue(input, k, dim)
            m.def(nm, [c](nb::handle x, double param, nb::handle axis, bool keepdims, nb::handle out) {
                return call_reduce(c, x, axis, keepdims, &param, 1, out);
              }, nb::arg("x"), nb::arg(keep(pn)), nb::arg("axis") = nb::none(), nb::kw_only(),
              nb::arg("keepdims") = false, nb::arg("out") = nb::none(),
              nb::sig(keep(std::string("def ") + nm + "(x: object, " + pn +
                           ": float, axis: int | tuple[int, ...] | None = None, *, keepdims: bool = False, "
                           "out: object | None = None) -> object")),
              doc);
          } else if (info.num_params == 1) {
            m.def(nm, [c](nb::handle x, nb::handle axis, double param, bool keepdims, nb::handle out) {
                return call_reduce(c, x, axis, keepdims, &param, 1, out);
              }, nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg(keep(pn)) = 0.0,
              nb::arg("keepdims") = false, nb::arg("out") = nb::none(),
              nb::sig(keep(std::string("def ") + nm + "(x: object, *, axis: int | tuple[int, ...] | None = None, " +
                           pn + ": float = 0.0, keepdims: bool = False, out: object | None = None) -> object")),
              doc);
          } else {
            m.def(nm, [c](nb::handle x, nb::handle axis, bool keepdims, nb::handle out) {
                return call_reduce(c, x, axis, keepdims, nullptr, 0, out);
              }, nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
              nb::arg("out") = nb::none(),
              nb::sig(keep(std::string("def ") + nm +
                           "(x: object, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False, "
                           "out: object | None = None) -> object")),
              doc);
          }
          break;
        }
        case CT_KIND_ALONG_AXIS: {
          // the running ops (cumsum, cumprod, logcumsumexp: "cum" in the name) take
          // axis=None for x.ndim <= 1, as the array API's cumulative_sum; the
          // others default to the last axis, as NumPy's sort and softmax
          const bool cum = std::strstr(nm, "cum") != nullptr;
          auto fn = [c](nb::handle x, nb::handle axis, nb::handle out) { return call_along_axis(c, x, axis, out); };
          const char* doc = keep(head + (cum ? "axis: the axis to run along; None only for x.ndim <= 1."
                                             : "axis: the axis to work along (default: the last).") + tail);
          if (cum)
            m.def(nm, fn, nb::arg("x"), nb::arg("axis") = nb::none(), nb::kw_only(), nb::arg("out") = nb::none(),
                  nb::sig(keep(std::string("def ") + nm +
                               "(x: object, axis: int | None = None, *, out: object | None = None) -> object")),
                  doc);
          else
            m.def(nm, fn, nb::arg("x"), nb::arg("axis") = -1, nb::kw_only(), nb::arg("out") = nb::none(),
                  nb::sig(keep(std::string("def ") + nm +
                               "(x: object, axis: int = -1, *, out: object | None = None) -> object")),
                  doc);
          break;
        }
        default:
          break;
      }
    }
    bound[nb::int_(op)] = nb::tuple(pynames);
  }
}

// The ops of the registry at import, except those a loaded plugin brought:
// ctensor/__init__.py binds those through _bind_ops, as it does at every load.
void register_ops(nb::module_& m, nb::dict bound) {
  std::vector<bool> plugin(ct_op_count() > 0 ? (size_t)ct_op_count() : 0, false);
  for (int32_t i = 0, n = ct_library_count(); i < n; ++i) {
    CTLibrary* lib = nullptr;
    CTLibraryInfo li{};
    li.struct_size = sizeof li;
    if (ct_library_get(i, &lib) != CT_OK || ct_library_info(lib, &li) != CT_OK) continue;
    for (int32_t k = 0; k < li.num_ops; ++k) {
      int32_t op = -1;
      if (ct_library_op(lib, k, &op) == CT_OK && op >= 0 && (size_t)op < plugin.size()) plugin[(size_t)op] = true;
    }
  }
  for (int32_t op = 0; op < (int32_t)plugin.size(); ++op)
    if (!plugin[(size_t)op]) bind_op(m, op, bound);
}

}  // namespace

// The functions of plugin ops `ids`, made by the same generator as the
// built-ins' into a module object of their own (so that a reload never
// meets the functions of an earlier load): ({python name: function}, {op: names}).
nb::tuple bind_ops(const std::vector<int32_t>& ids) {
  nb::module_ scope = nb::steal<nb::module_>(PyModule_New("ctensor"));
  if (!scope.is_valid()) throw nb::python_error();
  nb::dict bound, fns;
  for (int32_t op : ids) bind_op(scope, op, bound);
  for (auto item : bound)
    for (nb::handle name : item.second) fns[name] = scope.attr(name);
  return nb::make_tuple(fns, bound);
}

void init_ops(nb::module_& m, nb::dict bound) {
  register_ops(m, bound);
  m.def("_index", &call_index, nb::arg("op"), nb::arg("x"), nb::arg("axis"), nb::arg("index"),
        nb::arg("src") = nb::none(), nb::arg("params") = nb::tuple(), nb::arg("out") = nb::none(),
        "ct_index(op, x, axis, index, src, params, out) on any arrays (ctensor/_index.py gives the functions).");
  m.def("cast", &call_cast, nb::arg("x"), nb::arg("dtype") = nb::none(), nb::kw_only(), nb::arg("out") = nb::none(),
        nb::arg("saturate") = false,
        nb::sig("def cast(x: object, dtype: object | None = None, *, out: object | None = None, "
                "saturate: bool = False) -> object"),
        "Convert x to dtype (or to out's dtype). Float to integer truncates toward zero and saturates (NaN gives "
        "0); integer to narrower integer wraps; to bool is x != 0; to a float dtype rounds to nearest even. To a "
        "float8 dtype, values beyond its range become +-inf (float8_e5m2) or NaN (the formats without an "
        "infinity), as ml_dtypes and PyTorch convert; saturate=True gives the largest finite value of that sign "
        "instead (ONNX Cast's saturate=1).\n\nctensor op 'cast' (category 1).");
  m.def("astype", [](nb::handle x, nb::handle dtype, bool copy) -> nb::object {
      if (!copy) {
        CTDataType want = parse_dtype(dtype, "astype", "dtype");
        Arg a;
        import_arg(a, x.ptr(), false, false, "astype", "x");
        if (same_dtype(a.t.dtype, want)) return nb::borrow(x);
      }
      return call_cast(x, dtype, nb::none(), false);
    }, nb::arg("x"), nb::arg("dtype"), nb::kw_only(), nb::arg("copy") = true,
    nb::sig("def astype(x: object, dtype: object, *, copy: bool = True) -> object"),
    "x converted to dtype (the array API's astype); copy=False returns x itself when it already has dtype.");
  bound[nb::int_((int)CT_OP_CAST)] = nb::make_tuple("cast", "astype");
}

}  // namespace ctpy
