// jax_ffi.cc — XLA FFI handlers that run ctensor ops inside jax.jit programs (ctensor.jax).
//
// One handler per op kind, none per op: each takes the op id as an attribute,
// the operands as XLA's dense row-major buffers, and calls the kind's C entry
// point (ct_unary, ct_binary, ct_reduce, ct_along_axis, ct_index, ct_nn, ...)
// on CTensor views of those buffers: no copy, no shape rule (the output
// buffers XLA allocated were shaped at trace time by ct_op_output_info). A
// failure is returned to XLA as an error carrying ct_last_error(), which JAX
// raises; nothing aborts.
//
// Loaded by ctensor/jax.py with ctypes; each exported symbol is a handler
// (XLA_FFI_DEFINE_HANDLER_SYMBOL) that jax.ffi.register_ffi_target takes as a
// capsule.
#include <ctensor/ctensor.h>
#include <ctensor/ctensor_nn.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// XLA's element type as DLPack's (the CTDataType ctensor takes); lanes 0 when ctensor has no such dtype.
CTDataType dtype_of(ffi::DataType t) {
  switch (t) {
    case ffi::DataType::PRED: return {CT_BOOL, 8, 1};
    case ffi::DataType::S8: return {CT_INT, 8, 1};
    case ffi::DataType::S16: return {CT_INT, 16, 1};
    case ffi::DataType::S32: return {CT_INT, 32, 1};
    case ffi::DataType::S64: return {CT_INT, 64, 1};
    case ffi::DataType::U8: return {CT_UINT, 8, 1};
    case ffi::DataType::U16: return {CT_UINT, 16, 1};
    case ffi::DataType::U32: return {CT_UINT, 32, 1};
    case ffi::DataType::U64: return {CT_UINT, 64, 1};
    case ffi::DataType::F16: return {CT_FLOAT, 16, 1};
    case ffi::DataType::F32: return {CT_FLOAT, 32, 1};
    case ffi::DataType::F64: return {CT_FLOAT, 64, 1};
    case ffi::DataType::BF16: return {CT_BFLOAT, 16, 1};
    case ffi::DataType::F8E4M3FN: return {CT_FLOAT8_E4M3FN, 8, 1};
    case ffi::DataType::F8E5M2: return {CT_FLOAT8_E5M2, 8, 1};
    case ffi::DataType::F8E4M3FNUZ: return {CT_FLOAT8_E4M3FNUZ, 8, 1};
    case ffi::DataType::F8E5M2FNUZ: return {CT_FLOAT8_E5M2FNUZ, 8, 1};
    default: return {0, 0, 0};
  }
}

// A CTensor over one XLA buffer: dense row-major (strides NULL), on the CPU.
struct View {
  CTensor t{};
  ffi::Error set(const ffi::AnyBuffer& b, const char* what) {
    const auto dims = b.dimensions();
    t.data = b.untyped_data();
    t.device = {CT_CPU, 0};
    t.ndim = static_cast<int32_t>(dims.size());
    t.dtype = dtype_of(b.element_type());
    t.shape = const_cast<int64_t*>(dims.begin());
    t.strides = nullptr;
    t.byte_offset = 0;
    if (t.dtype.lanes == 0)
      return ffi::Error::InvalidArgument(std::string("ctensor.jax: ") + what + " has an element type ctensor has no dtype for");
    return ffi::Error::Success();
  }
};

// The ctensor module's CPU stream (its set_num_threads), installed by ctensor/jax.py at import: the handlers
// run on XLA's threads, where the Python module's calls never pass it. NULL: the library default.
std::atomic<const CTCpuStream*> g_python_stream{nullptr};

void* cpu_stream() {
  const CTCpuStream* s = g_python_stream.load(std::memory_order_acquire);
  return s && s->num_threads != 0 ? const_cast<CTCpuStream*>(s) : nullptr;
}

ffi::Error status(CTStatus s) {
  if (s == CT_OK) return ffi::Error::Success();
  const char* m = ct_last_error();
  const std::string msg = std::string(m && *m ? m : ct_status_string(s));
  switch (s) {
    case CT_ERR_UNSUPPORTED: return ffi::Error(ffi::ErrorCode::kUnimplemented, msg);
    case CT_ERR_OUT_OF_MEMORY: return ffi::Error(ffi::ErrorCode::kResourceExhausted, msg);
    default: return ffi::Error::InvalidArgument(msg);
  }
}

// The row of op id `op`, which must be of one of `kinds` (the handler's); *err says why not.
CTOpInfo op_info(int64_t op, ffi::Error* err, std::initializer_list<int32_t> kinds) {
  CTOpInfo info{};
  info.struct_size = sizeof info;
  if (op < INT32_MIN || op > INT32_MAX || ct_op_info(static_cast<int32_t>(op), &info) != CT_OK) {
    *err = ffi::Error::InvalidArgument("ctensor.jax: no op with id " + std::to_string(op));
    return info;
  }
  for (int32_t k : kinds)
    if (info.kind == k) return info;
  *err = ffi::Error::InvalidArgument("ctensor.jax: op " + std::string(info.name) +
                                     " is not of the kind this handler runs");
  return info;
}

// Elementwise maps: unary, unary_param, ternary (with or without parameters) and cast.
ffi::Error Map(ffi::RemainingArgs args, ffi::Result<ffi::AnyBuffer> out, int64_t op, ffi::Span<const double> params) {
  ffi::Error err = ffi::Error::Success();
  const CTOpInfo info = op_info(op, &err, {CT_KIND_UNARY, CT_KIND_UNARY_PARAM, CT_KIND_TERNARY, CT_KIND_CAST});
  if (!err.success()) return err;
  View in[3], o;
  if (args.size() != static_cast<size_t>(info.num_inputs) || args.size() > 3)
    return ffi::Error::InvalidArgument("ctensor.jax: " + std::string(info.name) + " takes " +
                                       std::to_string(info.num_inputs) + " operand(s)");
  for (size_t i = 0; i < args.size(); ++i) {
    auto b = args.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    if (auto e = in[i].set(*b, "an operand"); !e.success()) return e;
  }
  if (auto e = o.set(*out, "the result"); !e.success()) return e;
  const int32_t np = static_cast<int32_t>(params.size());
  switch (info.kind) {
    case CT_KIND_CAST: return status(ct_cast(&in[0].t, &o.t, cpu_stream()));
    case CT_KIND_UNARY: return status(ct_unary(info.op, &in[0].t, &o.t, cpu_stream()));
    case CT_KIND_UNARY_PARAM: return status(ct_unary_param(info.op, &in[0].t, params.begin(), np, &o.t, cpu_stream()));
    default:
      return status(np ? ct_ternary_param(info.op, &in[0].t, &in[1].t, &in[2].t, params.begin(), np, &o.t, cpu_stream())
                       : ct_ternary(info.op, &in[0].t, &in[1].t, &in[2].t, &o.t, cpu_stream()));
  }
}

// Broadcast binary ops (NumPy's broadcasting is ct_binary's own). One operand means x1 and x2 are the same
// array: ctensor.jax passes it once when the result takes its buffer (out=), since XLA copies an aliased
// operand that the same call also reads through another operand.
ffi::Error Binary(ffi::RemainingArgs args, ffi::Result<ffi::AnyBuffer> out, int64_t op) {
  ffi::Error err = ffi::Error::Success();
  const CTOpInfo info = op_info(op, &err, {CT_KIND_BINARY});
  if (!err.success()) return err;
  if (args.size() != 1 && args.size() != 2)
    return ffi::Error::InvalidArgument("ctensor.jax: " + std::string(info.name) + " takes 1 or 2 operands, got " +
                                       std::to_string(args.size()));
  View v[2], o;
  for (size_t i = 0; i < args.size(); ++i) {
    auto b = args.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    if (auto e = v[i].set(*b, i ? "x2" : "x1"); !e.success()) return e;
  }
  if (auto e = o.set(*out, "the result"); !e.success()) return e;
  return status(ct_binary(info.op, &v[0].t, &v[args.size() - 1].t, &o.t, cpu_stream()));
}

// Reductions over a set of axes (negative ones count from the end: a vmapped call adds leading dims).
ffi::Error Reduce(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> out, int64_t op, ffi::Span<const int64_t> axes,
                  bool keepdims, ffi::Span<const double> params) {
  ffi::Error err = ffi::Error::Success();
  const CTOpInfo info = op_info(op, &err, {CT_KIND_REDUCE});
  if (!err.success()) return err;
  View vx, o;
  if (auto e = vx.set(x, "x"); !e.success()) return e;
  if (auto e = o.set(*out, "the result"); !e.success()) return e;
  std::vector<int32_t> ax(axes.begin(), axes.end());
  return status(ct_reduce(info.op, &vx.t, ax.data(), static_cast<int32_t>(ax.size()), keepdims ? 1 : 0,
                          params.begin(), static_cast<int32_t>(params.size()), &o.t, cpu_stream()));
}

ffi::Error AlongAxis(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> out, int64_t op, int64_t axis) {
  ffi::Error err = ffi::Error::Success();
  const CTOpInfo info = op_info(op, &err, {CT_KIND_ALONG_AXIS});
  if (!err.success()) return err;
  View vx, o;
  if (auto e = vx.set(x, "x"); !e.success()) return e;
  if (auto e = o.set(*out, "the result"); !e.success()) return e;
  return status(ct_along_axis(info.op, &vx.t, static_cast<int32_t>(axis), &o.t, cpu_stream()));
}

// Index ops: x, index and (scatter, scatter_add, index_add) src.
ffi::Error Index(ffi::RemainingArgs args, ffi::Result<ffi::AnyBuffer> out, int64_t op, int64_t axis,
                 ffi::Span<const double> params) {
  ffi::Error err = ffi::Error::Success();
  const CTOpInfo info = op_info(op, &err, {CT_KIND_INDEX});
  if (!err.success()) return err;
  if (args.size() < 2 || args.size() > 3) return ffi::Error::InvalidArgument("ctensor.jax: an index op takes 2 or 3 operands");
  View v[3], o;
  for (size_t i = 0; i < args.size(); ++i) {
    auto b = args.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    if (auto e = v[i].set(*b, "an operand"); !e.success()) return e;
  }
  if (auto e = o.set(*out, "the result"); !e.success()) return e;
  return status(ct_index(info.op, &v[0].t, static_cast<int32_t>(axis), &v[1].t, args.size() > 2 ? &v[2].t : nullptr,
                         params.begin(), static_cast<int32_t>(params.size()), &o.t, cpu_stream()));
}

// NN ops by id: the operands are the row's present tensor arguments in order (inputs, then outputs);
// `present` says which of the row's tensor arguments they are (an absent optional one is NULL); `desc`
// is the op's descriptor, packed by ctensor's Python module from its fields. The workspace comes from
// malloc (ct_nn_workspace_size says how much).
ffi::Error Nn(ffi::RemainingArgs args, ffi::RemainingRets rets, int64_t op, ffi::Span<const int64_t> present,
              ffi::Span<const uint8_t> desc) {
  ffi::Error err = ffi::Error::Success();
  const CTOpInfo info = op_info(op, &err, {CT_KIND_NN});
  if (!err.success()) return err;
  const size_t nt = static_cast<size_t>(info.num_tensors);
  if (present.size() != nt) return ffi::Error::InvalidArgument("ctensor.jax: present has the wrong length");
  std::vector<View> views(nt);
  std::vector<const CTensor*> ptrs(nt, nullptr);
  size_t ai = 0, ri = 0;
  for (size_t i = 0; i < nt; ++i) {
    if (!present[i]) continue;
    const bool output = i >= nt - static_cast<size_t>(info.num_outputs);
    if (output) {
      auto b = rets.get<ffi::AnyBuffer>(ri++);
      if (b.has_error()) return b.error();
      if (auto e = views[i].set(**b, "an output"); !e.success()) return e;
    } else {
      auto b = args.get<ffi::AnyBuffer>(ai++);
      if (b.has_error()) return b.error();
      if (auto e = views[i].set(*b, "an input"); !e.success()) return e;
    }
    ptrs[i] = &views[i].t;
  }
  if (ai != args.size() || ri != rets.size())
    return ffi::Error::InvalidArgument("ctensor.jax: operands do not match present");
  const void* d = desc.size() ? desc.begin() : nullptr;
  size_t bytes = 0;
  if (CTStatus s = ct_nn_workspace_size(info.op, d, ptrs.data(), static_cast<int32_t>(nt), &bytes)) return status(s);
  std::unique_ptr<void, void (*)(void*)> ws(bytes ? std::malloc(bytes) : nullptr, std::free);
  if (bytes && !ws) return status(CT_ERR_OUT_OF_MEMORY);
  return status(ct_nn(info.op, d, ptrs.data(), static_cast<int32_t>(nt), ws.get(), bytes, cpu_stream()));
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void CtJaxSetCpuStream(const CTCpuStream* s) {
  g_python_stream.store(s, std::memory_order_release);
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(CtJaxMap, Map,
                              ffi::Ffi::Bind().RemainingArgs().Ret<ffi::AnyBuffer>().Attr<int64_t>("op").Attr<
                                  ffi::Span<const double>>("params"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(CtJaxBinary, Binary,
                              ffi::Ffi::Bind().RemainingArgs().Ret<ffi::AnyBuffer>().Attr<int64_t>("op"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(CtJaxReduce, Reduce,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<int64_t>("op")
                                  .Attr<ffi::Span<const int64_t>>("axes")
                                  .Attr<bool>("keepdims")
                                  .Attr<ffi::Span<const double>>("params"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(CtJaxAlongAxis, AlongAxis,
                              ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>().Attr<int64_t>("op").Attr<
                                  int64_t>("axis"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(CtJaxIndex, Index,
                              ffi::Ffi::Bind()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<int64_t>("op")
                                  .Attr<int64_t>("axis")
                                  .Attr<ffi::Span<const double>>("params"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(CtJaxNn, Nn,
                              ffi::Ffi::Bind()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<int64_t>("op")
                                  .Attr<ffi::Span<const int64_t>>("present")
                                  .Attr<ffi::Span<const uint8_t>>("desc"));
