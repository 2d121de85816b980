// api.cc — the C entry points: validate once, then call the backend's slot.
#include <cinttypes>
#include <cmath>
#include <cstring>

#include "core/dispatch.h"
#include "core/error.h"
#include "core/registry.h"
#include "core/validate.h"

namespace ct {

const CTBackend* backend_for(int32_t device_type) {
  // Built-in backends only for now; plugins will append here.
  return device_type == CT_CPU ? cpu::backend() : nullptr;
}

CTStatus check_device(const char* fn, const char* arg, CTDevice device, const CTBackend** out) {
  const CTBackend* b = backend_for(device.device_type);
  if (!b)
    return fail(CT_ERR_UNSUPPORTED, "%s: %s.device.device_type=%d has no backend in this build of ctensor", fn, arg,
                device.device_type);
  const int32_t n = b->device_count();
  if (device.device_id < 0 || device.device_id >= n)
    return fail(CT_ERR_NOT_FOUND, "%s: %s.device.device_id=%d but the %s backend has %d device(s)", fn, arg,
                device.device_id, b->name, n);
  *out = b;
  return CT_OK;
}

namespace {
// The op's own rule (NumPy's), then the backend's kernel table.
CTStatus check_op_dtype(const char* fn, const OpDef* d, int32_t op, const CTBackend* b, int32_t dt) {
  if (!(d->dtypes & (1u << dt)))
    return fail(CT_ERR_UNSUPPORTED, "%s: %s is not defined for %s: %s", fn, d->name, dtype_name(dt), d->dtype_rule);
  if (!(b->elementwise_dtypes[op] & (1u << dt)))
    return fail(CT_ERR_UNSUPPORTED, "%s: the %s backend has no %s kernel for %s", fn, b->name, d->name,
                dtype_name(dt));
  return CT_OK;
}
}  // namespace

CTStatus check_supported(const char* fn, int32_t op, CTDevice device, CTDataType dtype) {
  const OpDef* d = op_def(op);
  if (!d) return fail(CT_ERR_NOT_FOUND, "%s: op=%d is not an op id (0..%d)", fn, op, CT_OP_END_ - 1);
  char dbuf[64];
  const int32_t dt = dtype_index(dtype);
  if (dt < 0)
    return fail(CT_ERR_UNSUPPORTED, "%s: dtype %s is not supported by ctensor", fn,
                describe_dtype(dbuf, sizeof dbuf, dtype));
  if (!(d->dtypes & (1u << dt)))  // the op's rule first: it holds on every device
    return fail(CT_ERR_UNSUPPORTED, "%s: %s is not defined for %s: %s", fn, d->name, dtype_name(dt), d->dtype_rule);
  const CTBackend* b = backend_for(device.device_type);
  if (!b)
    return fail(CT_ERR_NOT_FOUND, "%s: device type %d has no backend in this build of ctensor", fn,
                device.device_type);
  if (device.device_id < 0 || device.device_id >= b->device_count())
    return fail(CT_ERR_NOT_FOUND, "%s: %s device %d does not exist", fn, b->name, device.device_id);
  return check_op_dtype(fn, d, op, b, dt);
}

namespace {

bool same_device(CTDevice a, CTDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; }

// An integer op's scalar must be exactly representable in the dtype.
CTStatus check_int_param(const char* fn, const char* what, double v, int32_t dt) {
  static const double lo[CT_DT_COUNT] = {0, -128, -32768, -2147483648.0, -9223372036854775808.0, 0};
  static const double hi[CT_DT_COUNT] = {1, 127, 32767, 2147483647.0, 9223372036854775807.0, 255};
  // int64's top is 2^63 - 1, not a double: values >= 2^63 are out of range.
  const bool ok = std::isfinite(v) && v == std::trunc(v) && v >= lo[dt] &&
                  (dt == CT_DT_INT64 ? v < 9223372036854775808.0 : v <= hi[dt]);
  if (ok) return CT_OK;
  return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s=%.17g is not an integer representable in %s", fn, what, v,
              dtype_name(dt));
}

// The elementwise path shared by ct_unary, ct_unary_param, ct_ternary,
// ct_cast and ct_copy. `op` is already known to exist.
CTStatus run_elementwise(const char* fn, int32_t op, const CTensor* const* in, const char* const* names,
                         int32_t nin, const double* params, int32_t nparams, const CTensor* out,
                         const char* out_name, void* stream) {
  const OpDef* d = op_def(op);
  TensorFacts inf[3], of;
  for (int32_t i = 0; i < nin; ++i)
    if (CTStatus s = check_tensor(fn, names[i], in[i], &inf[i])) return s;
  if (CTStatus s = check_tensor(fn, out_name, out, &of)) return s;
  for (int32_t i = 0; i < nin; ++i)
    if (!same_device(in[i]->device, out->device))
      return fail(CT_ERR_DEVICE_MISMATCH, "%s: %s.device=(%d,%d) differs from %s.device=(%d,%d)", fn, names[i],
                  in[i]->device.device_type, in[i]->device.device_id, out_name, out->device.device_type,
                  out->device.device_id);
  const CTBackend* backend = nullptr;
  if (CTStatus s = check_device(fn, out_name, out->device, &backend)) return s;
  for (int32_t i = 0; i < nin; ++i)
    if (CTStatus s = check_same_shape(fn, out_name, out, names[i], in[i])) return s;

  // dtypes: the data dtype is the first input's, or a's for where.
  const bool is_where = op == CT_OP_WHERE;
  const int32_t first_data = is_where ? 1 : 0;
  const int32_t data_dt = inf[first_data].dt;
  if (is_where && inf[0].dt != CT_DT_BOOL)
    return fail(CT_ERR_DTYPE_MISMATCH, "%s: where needs %s.dtype=bool, got %s", fn, names[0], dtype_name(inf[0].dt));
  for (int32_t i = first_data + 1; i < nin; ++i)
    if (inf[i].dt != data_dt)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s.dtype=%s differs from %s.dtype=%s", fn, names[i],
                  dtype_name(inf[i].dt), names[first_data], dtype_name(data_dt));
  if (d->output != CT_OUTPUT_ANY) {
    const int32_t want = d->output == CT_OUTPUT_BOOL ? (int32_t)CT_DT_BOOL : data_dt;
    if (of.dt != want)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s.dtype=%s but %s of %s gives %s", fn, out_name, dtype_name(of.dt),
                  d->name, dtype_name(data_dt), dtype_name(want));
  }
  if (CTStatus s = check_op_dtype(fn, d, op, backend, data_dt)) return s;

  CTElementwiseCall call;  // every field is set below: no memset on the hot path
  call.params[0] = call.params[1] = 0.0;
  if (nparams != d->num_params)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s takes %d parameter(s) (%s), got num_params=%d", fn, d->name,
                d->num_params, d->param_names, nparams);
  if (nparams > 0 && !params)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: params is NULL but %s takes %d parameter(s) (%s)", fn, d->name,
                nparams, d->param_names);
  for (int32_t i = 0; i < nparams; ++i) {
    if (!(kMaskFloat & (1u << data_dt))) {
      char what[32];
      std::snprintf(what, sizeof what, "params[%d]", i);
      if (CTStatus s = check_int_param(fn, what, params[i], data_dt)) return s;
    }
    call.params[i] = params[i];
  }

  if (CTStatus s = check_output_layout(fn, out_name, out)) return s;
  for (int32_t i = 0; i < nin; ++i)
    if (CTStatus s = check_overlap(fn, out_name, out, of, names[i], in[i], inf[i])) return s;
  if (of.numel == 0) return CT_OK;

  call.fn = fn;
  call.op = op;
  call.num_inputs = nin;
  for (int32_t i = 0; i < 3; ++i) {
    call.in[i] = i < nin ? in[i] : nullptr;
    call.in_dt[i] = i < nin ? inf[i].dt : -1;
  }
  call.out = out;
  call.out_dt = of.dt;
  call.stream = stream;
  return backend->elementwise(&call);
}

CTStatus check_op_kind(const char* fn, int32_t op, int32_t kind, const char* entry) {
  const OpDef* d = op_def(op);
  if (!d) return fail(CT_ERR_NOT_FOUND, "%s: op=%d is not an op id (0..%d)", fn, op, CT_OP_END_ - 1);
  if (d->kind != kind) {
    static const char* const entries[] = {"", "ct_unary", "ct_unary_param", "ct_ternary", "ct_cast"};
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op=%d (%s) is not a %s op: call %s", fn, op, d->name, entry,
                entries[d->kind]);
  }
  return CT_OK;
}

}  // namespace
}  // namespace ct

extern "C" {

CT_API CTStatus ct_unary(int32_t op, const CTensor* x, CTensor* out, void* stream) {
  CT_API_BEGIN("ct_unary")
  if (CTStatus s = ct::check_op_kind("ct_unary", op, CT_KIND_UNARY, "unary")) return s;
  static const char* const names[] = {"x"};
  return ct::run_elementwise("ct_unary", op, &x, names, 1, nullptr, 0, out, "out", stream);
  CT_API_END()
}

CT_API CTStatus ct_unary_param(int32_t op, const CTensor* x, const double* params, int32_t num_params,
                               CTensor* out, void* stream) {
  CT_API_BEGIN("ct_unary_param")
  if (CTStatus s = ct::check_op_kind("ct_unary_param", op, CT_KIND_UNARY_PARAM, "parametrised unary")) return s;
  static const char* const names[] = {"x"};
  return ct::run_elementwise("ct_unary_param", op, &x, names, 1, params, num_params, out, "out", stream);
  CT_API_END()
}

CT_API CTStatus ct_ternary(int32_t op, const CTensor* a, const CTensor* b, const CTensor* c, CTensor* out,
                           void* stream) {
  CT_API_BEGIN("ct_ternary")
  if (CTStatus s = ct::check_op_kind("ct_ternary", op, CT_KIND_TERNARY, "ternary")) return s;
  static const char* const where_names[] = {"cond", "a", "b"};
  static const char* const names[] = {"a", "b", "c"};
  const CTensor* in[3] = {a, b, c};
  return ct::run_elementwise("ct_ternary", op, in, op == CT_OP_WHERE ? where_names : names, 3, nullptr, 0, out,
                             "out", stream);
  CT_API_END()
}

CT_API CTStatus ct_cast(const CTensor* x, CTensor* out, void* stream) {
  CT_API_BEGIN("ct_cast")
  static const char* const names[] = {"x"};
  return ct::run_elementwise("ct_cast", CT_OP_CAST, &x, names, 1, nullptr, 0, out, "out", stream);
  CT_API_END()
}

CT_API CTStatus ct_copy(const CTensor* src, CTensor* dst, void* stream) {
  CT_API_BEGIN("ct_copy")
  if (src && dst &&
      (src->dtype.code != dst->dtype.code || src->dtype.bits != dst->dtype.bits || src->dtype.lanes != dst->dtype.lanes)) {
    char a[64], b[64];
    return ct::fail(CT_ERR_DTYPE_MISMATCH, "ct_copy: dst.dtype=%s differs from src.dtype=%s (use ct_cast to convert)",
                    ct::describe_dtype(b, sizeof b, dst->dtype), ct::describe_dtype(a, sizeof a, src->dtype));
  }
  static const char* const names[] = {"src"};
  return ct::run_elementwise("ct_copy", CT_OP_CAST, &src, names, 1, nullptr, 0, dst, "dst", stream);
  CT_API_END()
}

CT_API int32_t ct_device_count(void) { return ct::cpu::backend()->device_count(); }

CT_API CTStatus ct_device_info(int32_t index, CTDeviceInfo* info) {
  CT_API_BEGIN("ct_device_info")
  if (CTStatus s = ct::check_struct_size("ct_device_info", "info", info, offsetof(CTDeviceInfo, name))) return s;
  const CTBackend* b = ct::cpu::backend();
  if (index < 0 || index >= b->device_count())
    return ct::fail(CT_ERR_NOT_FOUND, "ct_device_info: index=%d but there are %d device(s)", index, ct_device_count());
  CTDeviceInfo full;
  std::memset(&full, 0, sizeof full);
  full.struct_size = (uint32_t)sizeof full;
  if (CTStatus s = b->device_info(index, &full)) return s;
  ct::copy_struct_out(info, full);
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_malloc(CTDevice device, size_t bytes, void** ptr) {
  CT_API_BEGIN("ct_malloc")
  if (!ptr) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_malloc: ptr is NULL");
  const CTBackend* b = nullptr;
  if (CTStatus s = ct::check_device("ct_malloc", "device", device, &b)) return s;
  return b->malloc_fn(device.device_id, bytes, ptr);
  CT_API_END()
}

CT_API void ct_free(CTDevice device, void* ptr) {
  ct::clear_error();
  if (!ptr) return;
  const CTBackend* b = ct::backend_for(device.device_type);
  if (b) b->free_fn(device.device_id, ptr);
}

CT_API CTStatus ct_synchronize(CTDevice device, void* stream) {
  CT_API_BEGIN("ct_synchronize")
  const CTBackend* b = nullptr;
  if (CTStatus s = ct::check_device("ct_synchronize", "device", device, &b)) return s;
  return b->synchronize(device.device_id, stream);
  CT_API_END()
}

}  // extern "C"
