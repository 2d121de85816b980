// api.cc — the C entry points: validate once, then call the backend's slot.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/debug.h"
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
  if (!(b->dtypes[op] & (1u << dt)))
    return fail(CT_ERR_UNSUPPORTED, "%s: the %s backend has no %s kernel for %s", fn, b->name, d->name,
                dtype_name(dt));
  // NN ops: whether the backend's library runs this dtype on this machine.
  if (d->kind == CT_KIND_NN) {
    if (!b->nn_supported)
      return fail(CT_ERR_UNSUPPORTED, "%s: the %s backend has no NN ops", fn, b->name);
    return b->nn_supported(fn, op, dt);
  }
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
  if (op == CT_OP_CAST && of.dt != inf[0].dt) {
    // CTOpInfo.inplace is 0 for cast: converting between dtypes never runs
    // in place, not even on exactly the same bytes (float32 <-> int32).
    // ct_copy and a cast to the same dtype are copies: exactly in place is
    // allowed there (it changes nothing).
    char why[128];
    std::snprintf(why, sizeof why, "cast cannot run in place between dtypes (%s -> %s): %s must share no byte with %s",
                  dtype_name(inf[0].dt), dtype_name(of.dt), out_name, names[0]);
    if (CTStatus s = check_no_shared_bytes(fn, out_name, out, of, names[0], in[0], inf[0], why)) return s;
  }
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
  if (d->kind == kind) return CT_OK;
  // The entry point of every kind; NN ops have their own (ct_<name>) and the generic ct_nn.
  switch (d->kind) {
    case CT_KIND_UNARY: case CT_KIND_UNARY_PARAM: case CT_KIND_TERNARY: case CT_KIND_CAST:
    case CT_KIND_BINARY: case CT_KIND_REDUCE: case CT_KIND_ALONG_AXIS: {
      static const char* const entries[] = {"ct_unary",  "ct_unary_param", "ct_ternary",   "ct_cast",
                                            "ct_binary", "ct_reduce",      "ct_along_axis"};
      static_assert(sizeof entries / sizeof entries[0] == CT_KIND_ALONG_AXIS - CT_KIND_UNARY + 1,
                    "one entry point per kind");
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: op=%d (%s) is not a %s op: call %s", fn, op, d->name, entry,
                  entries[d->kind - CT_KIND_UNARY]);
    }
    case CT_KIND_NN:
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: op=%d (%s) is not a %s op: call ct_%s or ct_nn", fn, op, d->name,
                  entry, d->name);
    default:  // a kind this table does not know: a registry bug, never an out-of-bounds read
      return fail(CT_ERR_INTERNAL, "%s: op=%d (%s) has kind %d, which has no entry point", fn, op, d->name,
                  d->kind);
  }
}

// ---- category 2 -------------------------------------------------------------

// The output dtype an op's rule gives for data dtype dt (-1: the caller's choice).
int32_t output_dtype(int32_t rule, int32_t dt) {
  const bool flt = (kMaskFloat >> dt) & 1u;
  switch (rule) {
    case CT_OUTPUT_SAME: return dt;
    case CT_OUTPUT_BOOL: return CT_DT_BOOL;
    case CT_OUTPUT_INT64: return CT_DT_INT64;
    case CT_OUTPUT_ACCUM: return flt ? dt : (int32_t)CT_DT_INT64;
    case CT_OUTPUT_FLOAT: return flt ? dt : (int32_t)CT_DT_FLOAT64;
    default: return -1;
  }
}

CTStatus check_out_dtype(const char* fn, const OpDef* d, int32_t data_dt, int32_t out_dt) {
  const int32_t want = output_dtype(d->output, data_dt);
  if (want < 0 || out_dt == want) return CT_OK;
  return fail(CT_ERR_DTYPE_MISMATCH, "%s: out.dtype=%s but %s of %s gives %s", fn, dtype_name(out_dt), d->name,
              dtype_name(data_dt), dtype_name(want));
}

CTStatus check_same_device(const char* fn, const char* arg, const CTensor* t, const CTensor* out) {
  if (same_device(t->device, out->device)) return CT_OK;
  return fail(CT_ERR_DEVICE_MISMATCH, "%s: %s.device=(%d,%d) differs from out.device=(%d,%d)", fn, arg,
              t->device.device_type, t->device.device_id, out->device.device_type, out->device.device_id);
}

// Out sharing any byte with x (reductions read many elements per output).
CTStatus check_disjoint(const char* fn, const CTensor* out, const TensorFacts& of, const CTensor* x,
                        const TensorFacts& xf) {
  return check_no_shared_bytes(fn, "out", out, of, "x", x, xf,
                               "a reduction's output must not share memory with its input");
}

CTStatus run_binary(int32_t op, const CTensor* a, const CTensor* b, const CTensor* out, void* stream) {
  const char* fn = "ct_binary";
  if (CTStatus s = check_op_kind(fn, op, CT_KIND_BINARY, "binary")) return s;
  const OpDef* d = op_def(op);
  TensorFacts af, bf, of;
  if (CTStatus s = check_tensor(fn, "a", a, &af)) return s;
  if (CTStatus s = check_tensor(fn, "b", b, &bf)) return s;
  if (CTStatus s = check_tensor(fn, "out", out, &of)) return s;
  if (CTStatus s = check_same_device(fn, "a", a, out)) return s;
  if (CTStatus s = check_same_device(fn, "b", b, out)) return s;
  const CTBackend* backend = nullptr;
  if (CTStatus s = check_device(fn, "out", out->device, &backend)) return s;
  // NumPy broadcasting: align at the last dim; extents equal or one is 1.
  const int32_t nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  int64_t shape[CT_MAX_NDIM];
  char sa[24 * CT_MAX_NDIM + 4], sb[24 * CT_MAX_NDIM + 4], so[24 * CT_MAX_NDIM + 4];
  for (int32_t i = 0; i < nd; ++i) {
    const int32_t ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
    const int64_t ea = ia >= 0 ? a->shape[ia] : 1, eb = ib >= 0 ? b->shape[ib] : 1;
    if (ea != eb && ea != 1 && eb != 1)
      return fail(CT_ERR_SHAPE_MISMATCH,
                  "%s: b.shape=%s does not broadcast with a.shape=%s (b.shape[%d]=%" PRId64 " vs a.shape[%d]=%" PRId64 ")",
                  fn, format_shape(sb, sizeof sb, b->ndim, b->shape), format_shape(sa, sizeof sa, a->ndim, a->shape), ib,
                  eb, ia, ea);
    shape[i] = ea == 1 ? eb : ea;
  }
  bool same = out->ndim == nd;
  for (int32_t i = 0; same && i < nd; ++i) same = out->shape[i] == shape[i];
  if (!same) {
    char sx[24 * CT_MAX_NDIM + 4];
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: out.shape=%s but a.shape=%s and b.shape=%s broadcast to %s", fn,
                format_shape(so, sizeof so, out->ndim, out->shape), format_shape(sa, sizeof sa, a->ndim, a->shape),
                format_shape(sb, sizeof sb, b->ndim, b->shape), format_shape(sx, sizeof sx, nd, shape));
  }
  if (bf.dt != af.dt)
    return fail(CT_ERR_DTYPE_MISMATCH, "%s: b.dtype=%s differs from a.dtype=%s", fn, dtype_name(bf.dt),
                dtype_name(af.dt));
  if (CTStatus s = check_out_dtype(fn, d, af.dt, of.dt)) return s;
  if (CTStatus s = check_op_dtype(fn, d, op, backend, af.dt)) return s;
  if (CTStatus s = check_output_layout(fn, "out", out)) return s;
  if (CTStatus s = check_overlap(fn, "out", out, of, "a", a, af)) return s;
  if (CTStatus s = check_overlap(fn, "out", out, of, "b", b, bf)) return s;
  if (of.numel == 0) return CT_OK;
  CTElementwiseCall call;
  call.fn = fn;
  call.op = op;
  call.num_inputs = 2;
  call.in[0] = a;
  call.in[1] = b;
  call.in[2] = nullptr;
  call.in_dt[0] = af.dt;
  call.in_dt[1] = bf.dt;
  call.in_dt[2] = -1;
  call.out = out;
  call.out_dt = of.dt;
  call.params[0] = call.params[1] = 0.0;
  call.stream = stream;
  return backend->binary(&call);
}

// The checks every one-input category-2 call starts with: the op's kind,
// both tensors, and their device.
CTStatus check_unary_call(const char* fn, int32_t op, int32_t kind, const char* entry, const CTensor* x,
                          const CTensor* out, TensorFacts* xf, TensorFacts* of, const CTBackend** backend) {
  if (CTStatus s = check_op_kind(fn, op, kind, entry)) return s;
  if (CTStatus s = check_tensor(fn, "x", x, xf)) return s;
  if (CTStatus s = check_tensor(fn, "out", out, of)) return s;
  if (CTStatus s = check_same_device(fn, "x", x, out)) return s;
  return check_device(fn, "out", out->device, backend);
}

CTStatus run_reduce(int32_t op, const CTensor* x, const int32_t* axes, int32_t num_axes, int32_t keepdims,
                    const double* params, int32_t num_params, const CTensor* out, void* stream) {
  const char* fn = "ct_reduce";
  TensorFacts xf, of;
  const CTBackend* backend = nullptr;
  if (CTStatus s = check_unary_call(fn, op, CT_KIND_REDUCE, "reduce", x, out, &xf, &of, &backend)) return s;
  const OpDef* d = op_def(op);
  // Axes: NULL = all; each in [-ndim, ndim), no repeats. A 0-d x takes axis
  // 0 or -1 (once), as NumPy's reductions do (np.sum(np.float32(3), axis=0)):
  // its one element is reduced, and the out is 0-d with or without keepdims.
  uint32_t mask = 0;
  if (!axes) {
    if (num_axes != 0)
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: axes is NULL but num_axes=%d (NULL means every axis: pass 0)", fn,
                  num_axes);
    mask = x->ndim ? (uint32_t)((1ull << x->ndim) - 1) : 0u;
  } else {
    const int32_t nd = x->ndim > 0 ? x->ndim : 1;  // a 0-d x has the one axis 0 (= -1)
    if (num_axes < 0 || num_axes > nd)
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: num_axes=%d is outside 0..%d for x.ndim=%d", fn, num_axes, nd,
                  x->ndim);
    uint32_t seen = 0;
    for (int32_t i = 0; i < num_axes; ++i) {
      const int32_t ax = axes[i] < 0 ? axes[i] + nd : axes[i];
      if (ax < 0 || ax >= nd)
        return fail(CT_ERR_INVALID_ARGUMENT, "%s: axes[%d]=%d is outside [-%d, %d) for x.ndim=%d", fn, i, axes[i],
                    nd, nd, x->ndim);
      if (seen & (1u << ax))
        return fail(CT_ERR_INVALID_ARGUMENT, "%s: axes[%d]=%d repeats axis %d", fn, i, axes[i], ax);
      seen |= 1u << ax;
    }
    if (x->ndim > 0) mask = seen;  // 0-d: no dim to reduce, one element per output
  }
  // The output shape keepdims gives.
  int64_t want[CT_MAX_NDIM];
  int32_t wn = 0;
  // count (elements per output) and outer (outputs), with checked products:
  // an empty x may have extents whose product overflows (shape (0, 2^62, 4)
  // reduced over axes 1 and 2). A 0 extent makes its group 0 whatever the
  // rest; an overflow saturates, and then the other group is 0 (x's element
  // count was checked), so nothing is computed from it.
  int64_t count = 1, outer = 1;
  bool count_zero = false, outer_zero = false;
  for (int32_t i = 0; i < x->ndim; ++i) {
    const bool red = (mask & (1u << i)) != 0;
    int64_t& prod = red ? count : outer;
    bool& zero = red ? count_zero : outer_zero;
    if (x->shape[i] == 0) zero = true;
    else if (__builtin_mul_overflow(prod, x->shape[i], &prod)) prod = INT64_MAX;
    if (red) {
      if (keepdims) want[wn++] = 1;
    } else {
      want[wn++] = x->shape[i];
    }
  }
  if (count_zero) count = 0;
  if (outer_zero) outer = 0;
  bool same = out->ndim == wn;
  for (int32_t i = 0; same && i < wn; ++i) same = out->shape[i] == want[i];
  char sx[24 * CT_MAX_NDIM + 4], so[24 * CT_MAX_NDIM + 4], sw[24 * CT_MAX_NDIM + 4];
  if (!same)
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: out.shape=%s but %s of x.shape=%s over the given axes with keepdims=%d is %s",
                fn, format_shape(so, sizeof so, out->ndim, out->shape), d->name,
                format_shape(sx, sizeof sx, x->ndim, x->shape), keepdims ? 1 : 0, format_shape(sw, sizeof sw, wn, want));
  if (CTStatus s = check_out_dtype(fn, d, xf.dt, of.dt)) return s;
  if (CTStatus s = check_op_dtype(fn, d, op, backend, xf.dt)) return s;
  if (num_params != d->num_params)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s takes %d parameter(s)%s%s, got num_params=%d", fn, d->name,
                d->num_params, d->num_params ? " " : "", d->param_names, num_params);
  if (num_params > 0 && !params)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: params is NULL but %s takes %d parameter(s) (%s)", fn, d->name,
                num_params, d->param_names);
  for (int32_t i = 0; i < num_params; ++i)
    if (!std::isfinite(params[i]))
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: params[%d] (%s) = %g is not finite", fn, i, d->param_names,
                  params[i]);
  const bool no_identity = op == CT_OP_MAX || op == CT_OP_MIN || op == CT_OP_ARGMAX || op == CT_OP_ARGMIN;
  if (no_identity && count == 0 && outer > 0) {
    char ax[16 * CT_MAX_NDIM + 4];
    int pos = std::snprintf(ax, sizeof ax, "[");
    for (int32_t i = 0, first = 1; i < x->ndim; ++i)
      if (mask & (1u << i)) {
        pos += std::snprintf(ax + pos, sizeof ax - pos, first ? "%d" : ",%d", i);
        first = 0;
      }
    std::snprintf(ax + pos, sizeof ax - pos, "]");
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s of an empty set: x.shape=%s reduced over axes %s has no elements, and %s has no identity",
                fn, d->name, format_shape(sx, sizeof sx, x->ndim, x->shape), ax, d->name);
  }
  if (CTStatus s = check_output_layout(fn, "out", out)) return s;
  if (CTStatus s = check_disjoint(fn, out, of, x, xf)) return s;
  if (of.numel == 0) return CT_OK;
  CTReduceCall call;
  call.fn = fn;
  call.op = op;
  call.x = x;
  call.out = out;
  call.x_dt = xf.dt;
  call.out_dt = of.dt;
  call.reduce_mask = mask;
  call.count = count;
  for (int32_t i = 0, j = 0; i < x->ndim; ++i) {
    if (mask & (1u << i)) {
      call.out_strides[i] = 0;
      if (keepdims) ++j;
    } else {
      call.out_strides[i] = ct_stride_of(out, j++);
    }
  }
  call.params[0] = num_params > 0 ? params[0] : 0.0;
  call.stream = stream;
  return backend->reduce(&call);
}

CTStatus run_along_axis(int32_t op, const CTensor* x, int32_t axis, const CTensor* out, void* stream) {
  const char* fn = "ct_along_axis";
  TensorFacts xf, of;
  const CTBackend* backend = nullptr;
  if (CTStatus s = check_unary_call(fn, op, CT_KIND_ALONG_AXIS, "along-axis", x, out, &xf, &of, &backend)) return s;
  const OpDef* d = op_def(op);
  const int32_t nd = x->ndim > 0 ? x->ndim : 1;  // a 0-d x is one line of one element
  const int32_t ax = axis < 0 ? axis + nd : axis;
  if (ax < 0 || ax >= nd)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: axis=%d is outside [-%d, %d) for x.ndim=%d", fn, axis, nd, nd, x->ndim);
  if (CTStatus s = check_same_shape(fn, "x", x, "out", out)) return s;
  if (CTStatus s = check_out_dtype(fn, d, xf.dt, of.dt)) return s;
  if (CTStatus s = check_op_dtype(fn, d, op, backend, xf.dt)) return s;
  if (CTStatus s = check_output_layout(fn, "out", out)) return s;
  if (CTStatus s = check_overlap(fn, "out", out, of, "x", x, xf)) return s;
  if (of.numel == 0) return CT_OK;
  // A 0-d tensor runs as a 1-d view of one element.
  static int64_t one = 1;
  CTensor x1, o1;
  if (x->ndim == 0) {
    x1 = *x;
    o1 = *out;
    x1.ndim = o1.ndim = 1;
    x1.shape = o1.shape = &one;
    x1.strides = o1.strides = nullptr;
    x = &x1;
    out = &o1;
  }
  CTAlongAxisCall call;
  call.fn = fn;
  call.op = op;
  call.x = x;
  call.out = out;
  call.x_dt = xf.dt;
  call.out_dt = of.dt;
  call.axis = ax;
  call.stream = stream;
  return backend->along_axis(&call);
}

}  // namespace
}  // namespace ct

extern "C" {

CT_API CTStatus ct_binary(int32_t op, const CTensor* a, const CTensor* b, CTensor* out, void* stream) {
  CT_API_BEGIN("ct_binary")
  return ct::debug_perturb(op, out, ct::run_binary(op, a, b, out, stream));
  CT_API_END()
}

CT_API CTStatus ct_reduce(int32_t op, const CTensor* x, const int32_t* axes, int32_t num_axes, int32_t keepdims,
                          const double* params, int32_t num_params, CTensor* out, void* stream) {
  CT_API_BEGIN("ct_reduce")
  return ct::debug_perturb(op, out, ct::run_reduce(op, x, axes, num_axes, keepdims, params, num_params, out, stream));
  CT_API_END()
}

CT_API CTStatus ct_along_axis(int32_t op, const CTensor* x, int32_t axis, CTensor* out, void* stream) {
  CT_API_BEGIN("ct_along_axis")
  return ct::debug_perturb(op, out, ct::run_along_axis(op, x, axis, out, stream));
  CT_API_END()
}


CT_API CTStatus ct_unary(int32_t op, const CTensor* x, CTensor* out, void* stream) {
  CT_API_BEGIN("ct_unary")
  if (CTStatus s = ct::check_op_kind("ct_unary", op, CT_KIND_UNARY, "unary")) return s;
  static const char* const names[] = {"x"};
  return ct::debug_perturb(op, out, ct::run_elementwise("ct_unary", op, &x, names, 1, nullptr, 0, out, "out", stream));
  CT_API_END()
}

CT_API CTStatus ct_unary_param(int32_t op, const CTensor* x, const double* params, int32_t num_params,
                               CTensor* out, void* stream) {
  CT_API_BEGIN("ct_unary_param")
  if (CTStatus s = ct::check_op_kind("ct_unary_param", op, CT_KIND_UNARY_PARAM, "parametrised unary")) return s;
  static const char* const names[] = {"x"};
  return ct::debug_perturb(op, out,
                           ct::run_elementwise("ct_unary_param", op, &x, names, 1, params, num_params, out, "out", stream));
  CT_API_END()
}

CT_API CTStatus ct_ternary(int32_t op, const CTensor* a, const CTensor* b, const CTensor* c, CTensor* out,
                           void* stream) {
  CT_API_BEGIN("ct_ternary")
  if (CTStatus s = ct::check_op_kind("ct_ternary", op, CT_KIND_TERNARY, "ternary")) return s;
  static const char* const where_names[] = {"cond", "a", "b"};
  static const char* const names[] = {"a", "b", "c"};
  const CTensor* in[3] = {a, b, c};
  return ct::debug_perturb(op, out, ct::run_elementwise("ct_ternary", op, in, op == CT_OP_WHERE ? where_names : names, 3, nullptr, 0, out,
                             "out", stream));
  CT_API_END()
}

CT_API CTStatus ct_cast(const CTensor* x, CTensor* out, void* stream) {
  CT_API_BEGIN("ct_cast")
  static const char* const names[] = {"x"};
  return ct::debug_perturb(CT_OP_CAST, out, ct::run_elementwise("ct_cast", CT_OP_CAST, &x, names, 1, nullptr, 0, out, "out", stream));
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
