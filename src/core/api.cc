// api.cc — the C entry points of categories 1 and 2: validate once, then
// call the slot of the first kernel table (plugin.h) that runs the op.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/api_internal.h"
#include "core/backends.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/library.h"
#include "core/plugin_ops.h"
#include "core/registry.h"
#include "core/validate.h"

namespace ct {

namespace {

// The op's own rule (NumPy's), then the device's kernel tables.
CT_COLD CTStatus ask_op_kernels(const char* fn, const OpDef* d, int32_t op, const Backend* b, int32_t device_id,
                                int32_t dt, int32_t out_dt, const CTKernelInterface** k) {
  if (!(d->dtypes & (1u << dt)))
    return fail(CT_ERR_UNSUPPORTED, "%s: %s is not defined for %s: %s", fn, d->name, dtype_name(dt), d->dtype_rule);
  const CTSupportQuery q = {sizeof(CTSupportQuery), op, fn, d->kind, dt, out_dt, device_id};
  const CTStatus s = find_kernels(b, q, k);
  // A plugin op whose library was unloaded since the caller looked it up:
  // its kernel table is gone with it; say so rather than "no kernel".
  if (s != CT_OK && d->owner && !op_def(op)) return no_op(fn, op);
  return s;
}

// The kernel table that runs op for dt on the device: the op's own rule
// (NumPy's) and supports()' cached answer inline, the rest asked.
inline CTStatus find_op_kernels(const char* fn, const OpDef* d, int32_t op, const Backend* b, int32_t device_id,
                                int32_t dt, int32_t out_dt, const CTKernelInterface** k) {
  if (d->dtypes & (1u << dt))
    if (const CTKernelInterface* c = cached_kernels(b, op, d->kind, dt, device_id)) {
      *k = c;
      return CT_OK;
    }
  return ask_op_kernels(fn, d, op, b, device_id, dt, out_dt, k);
}

bool same_device(CTDevice a, CTDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; }

}  // namespace

// NumPy broadcasting of n tensors: aligned at the last dim, extents equal or
// 1. Fills shape[*nd]; a message naming both offending arguments otherwise.
CTStatus broadcast(const char* fn, const CTensor* const* t, const char* const* names, int32_t n, int64_t* shape,
                   int32_t* nd) {
  int32_t r = 0;
  for (int32_t k = 0; k < n; ++k) r = t[k]->ndim > r ? t[k]->ndim : r;
  for (int32_t i = 0; i < r; ++i) {
    shape[i] = 1;
    int32_t from = -1;
    for (int32_t k = 0; k < n; ++k) {
      const int32_t j = i - (r - t[k]->ndim);
      const int64_t e = j >= 0 ? t[k]->shape[j] : 1;
      if (e == 1 || e == shape[i]) continue;
      if (shape[i] != 1) {
        char sa[24 * CT_MAX_NDIM + 4], sb[24 * CT_MAX_NDIM + 4];
        const int32_t jf = i - (r - t[from]->ndim);
        return fail(CT_ERR_SHAPE_MISMATCH,
                    "%s: %s.shape=%s does not broadcast with %s.shape=%s (%s.shape[%d]=%" PRId64 " vs %s.shape[%d]=%" PRId64 ")",
                    fn, names[k], format_shape(sb, sizeof sb, t[k]->ndim, t[k]->shape), names[from],
                    format_shape(sa, sizeof sa, t[from]->ndim, t[from]->shape), names[k], j, e, names[from], jf,
                    shape[i]);
      }
      shape[i] = e;
      from = k;
    }
  }
  *nd = r;
  return CT_OK;
}

// A view of t with out's rank and shape: missing leading dims and extents of
// 1 that out does not have become stride 0.
void broadcast_view(const CTensor* t, const CTensor* out, int64_t* strides, CTensor* view) {
  const int32_t lead = out->ndim - t->ndim;
  for (int32_t d = 0; d < out->ndim; ++d) {
    const int32_t td = d - lead;
    strides[d] = td < 0 || (t->shape[td] == 1 && out->shape[d] != 1) ? 0 : ct_stride_of(t, td);
  }
  *view = *t;
  view->ndim = out->ndim;
  view->shape = out->shape;
  view->strides = strides;
}

namespace {


// out.shape must be exactly `shape`.
CTStatus want_out_shape(const char* fn, const char* out_name, const CTensor* out, const int64_t* shape, int32_t nd,
                        const CTensor* const* t, const char* const* names, int32_t n) {
  bool same = out->ndim == nd;
  for (int32_t i = 0; same && i < nd; ++i) same = out->shape[i] == shape[i];
  if (same) return CT_OK;
  char so[24 * CT_MAX_NDIM + 4], sx[24 * CT_MAX_NDIM + 4], ins[3 * (24 * CT_MAX_NDIM + 16)];
  size_t used = 0;
  for (int32_t k = 0; k < n; ++k) {
    char sk[24 * CT_MAX_NDIM + 4];
    used += std::snprintf(ins + used, sizeof ins - used, "%s%s.shape=%s", k ? (k + 1 == n ? " and " : ", ") : "",
                          names[k], format_shape(sk, sizeof sk, t[k]->ndim, t[k]->shape));
    if (used >= sizeof ins) break;
  }
  return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s but %s broadcast to %s", fn, out_name,
              format_shape(so, sizeof so, out->ndim, out->shape), ins, format_shape(sx, sizeof sx, nd, shape));
}

// An integer op's scalar must be exactly representable in the dtype.
CTStatus check_int_param(const char* fn, const char* what, double v, int32_t dt) {
  // From the dtype's row (never called for a float dtype). The tops of int64
  // (2^63 - 1) and uint64 (2^64 - 1) are not doubles: the bound is the power
  // of two above them, excluded.
  const CTDataType t = ct_dtype_of_index(dt);
  const double lo = t.code == CT_INT ? -std::ldexp(1.0, t.bits - 1) : 0.0;
  const double top = t.code == CT_INT ? std::ldexp(1.0, t.bits - 1) : t.code == CT_UINT ? std::ldexp(1.0, t.bits) : 2.0;
  const bool ok = std::isfinite(v) && v == std::trunc(v) && v >= lo && v < top;
  if (ok) return CT_OK;
  return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s=%.17g is not an integer representable in %s", fn, what, v,
              dtype_name(dt));
}

}  // namespace

// The elementwise path shared by ct_unary, ct_unary_param, ct_ternary,
// ct_cast and ct_copy. `op` is already known to exist.
CTStatus run_elementwise(const char* fn, int32_t op, const CTensor* const* in, const char* const* names,
                         int32_t nin, const double* params, int32_t nparams, const CTensor* out,
                         const char* out_name, void* stream, int32_t cast_mode, const OpDef* def) {
  const OpDef* d = def ? def : op_def(op);
  if (!d) return no_op(fn, op);  // a plugin op unloaded since the caller's check
  TensorFacts inf[3] = {TensorFacts(TensorFacts::kUnset), TensorFacts(TensorFacts::kUnset),
                        TensorFacts(TensorFacts::kUnset)};
  TensorFacts of(TensorFacts::kUnset);
  for (int32_t i = 0; i < nin; ++i)
    if (CTStatus s = check_tensor(fn, names[i], in[i], &inf[i])) return s;
  if (CTStatus s = check_tensor(fn, out_name, out, &of)) return s;
  for (int32_t i = 0; i < nin; ++i)
    if (!same_device(in[i]->device, out->device))
      return fail(CT_ERR_DEVICE_MISMATCH, "%s: %s.device=(%d,%d) differs from %s.device=(%d,%d)", fn, names[i],
                  in[i]->device.device_type, in[i]->device.device_id, out_name, out->device.device_type,
                  out->device.device_id);
  const Backend* backend = nullptr;
  if (CTStatus s = check_device(fn, out_name, out->device, &backend)) return s;
  if (!backend->dev.data_is_address) {
    of.not_address = true;
    for (int32_t i = 0; i < nin; ++i) inf[i].not_address = true;
  }
  // Ternary ops broadcast as binary ops do; the others take out's shape.
  const bool bcast = d->shape_rule == CT_SHAPE_BROADCAST;
  if (bcast) {
    int64_t shape[CT_MAX_NDIM];
    int32_t nd = 0;
    if (CTStatus s = broadcast(fn, in, names, nin, shape, &nd)) return s;
    if (CTStatus s = want_out_shape(fn, out_name, out, shape, nd, in, names, nin)) return s;
  } else {
    for (int32_t i = 0; i < nin; ++i)
      if (CTStatus s = check_same_shape(fn, out_name, out, names[i], in[i])) return s;
  }

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
  const CTKernelInterface* kern = nullptr;
  if (CTStatus s = find_op_kernels(fn, d, op, backend, out->device.device_id, data_dt, of.dt, &kern)) return s;

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
  if (op == CT_OP_ROUND_DECIMALS && !(std::isfinite(params[0]) && params[0] == std::trunc(params[0])))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: round_decimals: decimals=%.17g is not an integer", fn, params[0]);
  // polygamma's order and mvlgamma's dimension are counts: integers, and small
  // enough that the kernels' loops over them end (n! overflows double from 171 on).
  if (op == CT_OP_POLYGAMMA && !(params[0] >= 0 && params[0] <= 1e6 && params[0] == std::trunc(params[0])))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: polygamma: n=%.17g is not an integer in [0, 1e6]", fn, params[0]);
  if (op == CT_OP_MVLGAMMA && !(params[0] >= 1 && params[0] <= 1e6 && params[0] == std::trunc(params[0])))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: mvlgamma: p=%.17g is not an integer in [1, 1e6]", fn, params[0]);
  if (op == CT_OP_CAST) call.params[0] = cast_mode;

  if (CTStatus s = check_output_layout(fn, out_name, out, of)) return s;
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
  if (CTStatus s = check_stream(backend, fn, out->device.device_id, stream)) return s;
  if (of.numel == 0) return CT_OK;

  CTensor views[3];
  int64_t vstrides[3][CT_MAX_NDIM];
  call.struct_size = sizeof call;
  call.fn = fn;
  call.op = op;
  call.num_inputs = nin;
  for (int32_t i = 0; i < 3; ++i) {
    call.in[i] = i < nin ? in[i] : nullptr;
    call.in_dt[i] = i < nin ? inf[i].dt : -1;
    if (bcast && i < nin) {  // kernels see out's shape: broadcast dims have stride 0
      broadcast_view(in[i], out, vstrides[i], &views[i]);
      call.in[i] = &views[i];
    }
  }
  call.out = out;
  call.out_dt = of.dt;
  call.stream = stream;
  call.numel = of.numel;
  call.flags = of.aligned && of.compact ? CT_CALL_DENSE : 0u;
  for (int32_t i = 0; i < nin; ++i)
    if (!inf[i].aligned || !inf[i].compact || (bcast && !same_shape(in[i], out))) call.flags = 0;
  return kern->elementwise(&call);
}

namespace {

// d: the op's row as check_op_kind read it (NULL: no such op), never read
// again (a plugin's op may come back between two reads).
CT_COLD CTStatus wrong_op_kind(const char* fn, int32_t op, const OpDef* d, const char* entry) {
  if (!d) return no_op(fn, op);
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
    case CT_KIND_INDEX:
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: op=%d (%s) is not a %s op: call ct_index", fn, op, d->name, entry);
    default:  // a kind this table does not know: a registry bug, never an out-of-bounds read
      return fail(CT_ERR_INTERNAL, "%s: op=%d (%s) has kind %d, which has no entry point", fn, op, d->name,
                  d->kind);
  }
}

// CT_OK when op exists and is of `kind` (its row in *def when asked for);
// else which entry point it needs.
inline CTStatus check_op_kind(const char* fn, int32_t op, int32_t kind, const char* entry,
                              const OpDef** def = nullptr) {
  const OpDef* d = op_def(op);
  if (!d || d->kind != kind) return wrong_op_kind(fn, op, d, entry);
  if (def) *def = d;
  return CT_OK;
}

// ---- category 2 -------------------------------------------------------------

}  // namespace

CTStatus op_of_kind(const char* fn, int32_t op, int32_t kind, const char* entry, const OpDef** def) {
  return check_op_kind(fn, op, kind, entry, def);
}

CTStatus op_kernels(const char* fn, const OpDef* d, int32_t op, const Backend* b, int32_t device_id, int32_t dt,
                    int32_t out_dt, const CTKernelInterface** k) {
  return find_op_kernels(fn, d, op, b, device_id, dt, out_dt, k);
}

// The output dtype an op's rule gives for data dtype dt (-1: the caller's choice).
int32_t output_dtype(int32_t rule, int32_t dt) { return ct_output_dtype_index(rule, dt); }

namespace {


CTStatus check_out_dtype(const char* fn, const OpDef* d, int32_t data_dt, int32_t out_dt) {
  const int32_t want = output_dtype(d->output, data_dt);
  if (want < 0 || out_dt == want) return CT_OK;
  return fail(CT_ERR_DTYPE_MISMATCH, "%s: out.dtype=%s but %s of %s gives %s", fn, dtype_name(out_dt), d->name,
              dtype_name(data_dt), dtype_name(want));
}

}  // namespace

CTStatus check_same_device(const char* fn, const char* arg, const CTensor* t, const CTensor* out) {
  if (same_device(t->device, out->device)) return CT_OK;
  return fail(CT_ERR_DEVICE_MISMATCH, "%s: %s.device=(%d,%d) differs from out.device=(%d,%d)", fn, arg,
              t->device.device_type, t->device.device_id, out->device.device_type, out->device.device_id);
}

namespace {

// Out sharing any byte with x (reductions read many elements per output).
CTStatus check_disjoint(const char* fn, const CTensor* out, const TensorFacts& of, const CTensor* x,
                        const TensorFacts& xf) {
  return check_no_shared_bytes(fn, "out", out, of, "x", x, xf,
                               "a reduction's output must not share memory with its input");
}

CTStatus run_binary(int32_t op, const CTensor* a, const CTensor* b, const CTensor* out, void* stream) {
  const char* fn = "ct_binary";
  const OpDef* d = nullptr;
  if (CTStatus s = check_op_kind(fn, op, CT_KIND_BINARY, "binary", &d)) return s;
  TensorFacts af(TensorFacts::kUnset), bf(TensorFacts::kUnset), of(TensorFacts::kUnset);
  if (CTStatus s = check_tensor(fn, "a", a, &af)) return s;
  if (CTStatus s = check_tensor(fn, "b", b, &bf)) return s;
  if (CTStatus s = check_tensor(fn, "out", out, &of)) return s;
  if (CTStatus s = check_same_device(fn, "a", a, out)) return s;
  if (CTStatus s = check_same_device(fn, "b", b, out)) return s;
  const Backend* backend = nullptr;
  if (CTStatus s = check_device(fn, "out", out->device, &backend)) return s;
  if (!backend->dev.data_is_address) af.not_address = bf.not_address = of.not_address = true;
  bool same = a->ndim == out->ndim && b->ndim == out->ndim;  // the common case: no broadcasting
  for (int32_t i = 0; same && i < out->ndim; ++i) same = a->shape[i] == out->shape[i] && b->shape[i] == out->shape[i];
  if (!same) {
    const CTensor* ab[2] = {a, b};
    static const char* const ab_names[2] = {"a", "b"};
    int64_t shape[CT_MAX_NDIM];
    int32_t nd = 0;
    if (CTStatus s = broadcast(fn, ab, ab_names, 2, shape, &nd)) return s;
    if (CTStatus s = want_out_shape(fn, "out", out, shape, nd, ab, ab_names, 2)) return s;
  }
  if (bf.dt != af.dt)
    return fail(CT_ERR_DTYPE_MISMATCH, "%s: b.dtype=%s differs from a.dtype=%s", fn, dtype_name(bf.dt),
                dtype_name(af.dt));
  if (CTStatus s = check_out_dtype(fn, d, af.dt, of.dt)) return s;
  const CTKernelInterface* kern = nullptr;
  if (CTStatus s = find_op_kernels(fn, d, op, backend, out->device.device_id, af.dt, of.dt, &kern)) return s;
  if (CTStatus s = check_output_layout(fn, "out", out, of)) return s;
  if (CTStatus s = check_overlap(fn, "out", out, of, "a", a, af)) return s;
  if (CTStatus s = check_overlap(fn, "out", out, of, "b", b, bf)) return s;
  if (CTStatus s = check_stream(backend, fn, out->device.device_id, stream)) return s;
  if (of.numel == 0) return CT_OK;
  // Kernels see out's shape (plugin.h): an input that broadcasts comes as a
  // view with stride 0 on the broadcast dims; one of out's shape as it is.
  CTensor views[2];
  int64_t vstrides[2][CT_MAX_NDIM];
  const CTensor* in[2] = {a, b};
  for (int32_t k = 0; k < 2 && !same; ++k) {  // same: both have out's shape already
    bool as_out = in[k]->ndim == out->ndim;
    for (int32_t d = 0; as_out && d < out->ndim; ++d) as_out = in[k]->shape[d] == out->shape[d];
    if (!as_out) {
      broadcast_view(in[k], out, vstrides[k], &views[k]);
      in[k] = &views[k];
    }
  }
  CTElementwiseCall call;
  call.struct_size = sizeof call;
  call.fn = fn;
  call.op = op;
  call.num_inputs = 2;
  call.in[0] = in[0];
  call.in[1] = in[1];
  call.in[2] = nullptr;
  call.in_dt[0] = af.dt;
  call.in_dt[1] = bf.dt;
  call.in_dt[2] = -1;
  call.out = out;
  call.out_dt = of.dt;
  call.params[0] = call.params[1] = 0.0;
  call.stream = stream;
  call.numel = of.numel;
  call.flags = same && af.aligned && bf.aligned && of.aligned && af.compact && bf.compact && of.compact
                   ? CT_CALL_DENSE
                   : 0u;
  return kern->binary(&call);
}

// The checks every one-input category-2 call starts with: the op's kind,
// both tensors, and their device.
CTStatus check_unary_call(const char* fn, int32_t op, int32_t kind, const char* entry, const CTensor* x,
                          const CTensor* out, TensorFacts* xf, TensorFacts* of, const Backend** backend) {
  if (CTStatus s = check_op_kind(fn, op, kind, entry)) return s;
  if (CTStatus s = check_tensor(fn, "x", x, xf)) return s;
  if (CTStatus s = check_tensor(fn, "out", out, of)) return s;
  if (CTStatus s = check_same_device(fn, "x", x, out)) return s;
  if (CTStatus s = check_device(fn, "out", out->device, backend)) return s;
  if (!(*backend)->dev.data_is_address) xf->not_address = of->not_address = true;
  return CT_OK;
}

}  // namespace

CTStatus reduce_shape(const char* fn, const CTensor* x, const int32_t* axes, int32_t num_axes, int32_t keepdims,
                      uint32_t* mask_out, int64_t* want, int32_t* wn_out, int64_t* count_out, int64_t* outer_out) {
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
  // The output shape keepdims gives (no overflow: x's element count was checked).
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
  *mask_out = mask;
  *wn_out = wn;
  *count_out = count;
  *outer_out = outer;
  return CT_OK;
}

namespace {

CTStatus run_reduce(int32_t op, const CTensor* x, const int32_t* axes, int32_t num_axes, int32_t keepdims,
                    const double* params, int32_t num_params, const CTensor* out, void* stream) {
  const char* fn = "ct_reduce";
  TensorFacts xf, of;
  const Backend* backend = nullptr;
  if (CTStatus s = check_unary_call(fn, op, CT_KIND_REDUCE, "reduce", x, out, &xf, &of, &backend)) return s;
  const OpDef* d = op_def(op);
  if (!d) return no_op(fn, op);  // a plugin op unloaded since check_unary_call
  uint32_t mask = 0;
  int64_t want[CT_MAX_NDIM];
  int32_t wn = 0;
  int64_t count = 1, outer = 1;
  if (CTStatus s = reduce_shape(fn, x, axes, num_axes, keepdims, &mask, want, &wn, &count, &outer)) return s;
  bool same = out->ndim == wn;
  for (int32_t i = 0; same && i < wn; ++i) same = out->shape[i] == want[i];
  char sx[24 * CT_MAX_NDIM + 4], so[24 * CT_MAX_NDIM + 4], sw[24 * CT_MAX_NDIM + 4];
  if (!same)
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: out.shape=%s but %s of x.shape=%s over the given axes with keepdims=%d is %s",
                fn, format_shape(so, sizeof so, out->ndim, out->shape), d->name,
                format_shape(sx, sizeof sx, x->ndim, x->shape), keepdims ? 1 : 0, format_shape(sw, sizeof sw, wn, want));
  if (CTStatus s = check_out_dtype(fn, d, xf.dt, of.dt)) return s;
  const CTKernelInterface* kern = nullptr;
  if (CTStatus s = find_op_kernels(fn, d, op, backend, out->device.device_id, xf.dt, of.dt, &kern)) return s;
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
  if ((op == CT_OP_QUANTILE || op == CT_OP_NANQUANTILE) && !(params[0] >= 0.0 && params[0] <= 1.0))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s: q=%.17g is outside [0, 1]", fn, d->name, params[0]);
  if (op == CT_OP_KTHVALUE && count > 0 &&
      !(params[0] == std::trunc(params[0]) && params[0] >= 1.0 && params[0] <= (double)count))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: kthvalue: k=%.17g is not an integer in [1, %lld] (the elements reduced into each output)",
                fn, params[0], (long long)count);
  const bool no_identity = op == CT_OP_MAX || op == CT_OP_MIN || op == CT_OP_ARGMAX || op == CT_OP_ARGMIN ||
                           op == CT_OP_MEDIAN || op == CT_OP_NANMEDIAN || op == CT_OP_KTHVALUE || op == CT_OP_MODE;
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
  if (CTStatus s = check_stream(backend, fn, out->device.device_id, stream)) return s;
  if (of.numel == 0) return CT_OK;
  CTReduceCall call;
  call.struct_size = sizeof call;
  call.reserved = 0;
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
  return kern->reduce(&call);
}

CTStatus run_along_axis(int32_t op, const CTensor* x, int32_t axis, const CTensor* out, void* stream) {
  const char* fn = "ct_along_axis";
  TensorFacts xf, of;
  const Backend* backend = nullptr;
  if (CTStatus s = check_unary_call(fn, op, CT_KIND_ALONG_AXIS, "along-axis", x, out, &xf, &of, &backend)) return s;
  const OpDef* d = op_def(op);
  if (!d) return no_op(fn, op);  // a plugin op unloaded since check_unary_call
  const int32_t nd = x->ndim > 0 ? x->ndim : 1;  // a 0-d x is one line of one element
  const int32_t ax = axis < 0 ? axis + nd : axis;
  if (ax < 0 || ax >= nd)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: axis=%d is outside [-%d, %d) for x.ndim=%d", fn, axis, nd, nd, x->ndim);
  if (CTStatus s = check_same_shape(fn, "x", x, "out", out)) return s;
  if (CTStatus s = check_out_dtype(fn, d, xf.dt, of.dt)) return s;
  const CTKernelInterface* kern = nullptr;
  if (CTStatus s = find_op_kernels(fn, d, op, backend, out->device.device_id, xf.dt, of.dt, &kern)) return s;
  if (CTStatus s = check_output_layout(fn, "out", out)) return s;
  // out may be exactly x when the row says so (argsort's indices cannot overwrite the values they order)
  if (d->inplace) {
    if (CTStatus s = check_overlap(fn, "out", out, of, "x", x, xf)) return s;
  } else if (CTStatus s = check_no_shared_bytes(fn, "out", out, of, "x", x, xf,
                                                "this op's output must not share memory with its input (not even in place)")) {
    return s;
  }
  if (CTStatus s = check_stream(backend, fn, out->device.device_id, stream)) return s;
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
  call.struct_size = sizeof call;
  call.reserved = 0;
  call.fn = fn;
  call.op = op;
  call.x = x;
  call.out = out;
  call.x_dt = xf.dt;
  call.out_dt = of.dt;
  call.axis = ax;
  call.stream = stream;
  return kern->along_axis(&call);
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
  const ct::OpDef* d = nullptr;
  if (CTStatus s = ct::check_op_kind("ct_unary", op, CT_KIND_UNARY, "unary", &d)) return s;
  static const char* const names[] = {"x"};
  return ct::debug_perturb(
      op, out, ct::run_elementwise("ct_unary", op, &x, names, 1, nullptr, 0, out, "out", stream, CT_CAST_DEFAULT, d));
  CT_API_END()
}

CT_API CTStatus ct_unary_param(int32_t op, const CTensor* x, const double* params, int32_t num_params,
                               CTensor* out, void* stream) {
  CT_API_BEGIN("ct_unary_param")
  const ct::OpDef* d = nullptr;
  if (CTStatus s = ct::check_op_kind("ct_unary_param", op, CT_KIND_UNARY_PARAM, "parametrised unary", &d)) return s;
  static const char* const names[] = {"x"};
  return ct::debug_perturb(op, out,
                           ct::run_elementwise("ct_unary_param", op, &x, names, 1, params, num_params, out, "out",
                                               stream, CT_CAST_DEFAULT, d));
  CT_API_END()
}

namespace ct {
namespace {
// The defaults of a row's "name=default,..." parameters; -1 when one has
// none.
int32_t row_defaults(const OpDef* d, double* p) {
  int32_t n = 0;
  for (const char* s = d->param_names; *s && n < 2;) {
    const char* eq = std::strchr(s, '=');
    const char* comma = std::strchr(s, ',');
    if (!eq || (comma && comma < eq)) return -1;  // no default
    p[n] = std::strtod(eq + 1, nullptr);
    ++n;
    if (!comma) break;
    s = comma + 1;
  }
  return n;
}

CTStatus run_ternary(const char* fn, int32_t op, const CTensor* a, const CTensor* b, const CTensor* c,
                     const double* params, int32_t num_params, bool defaults, CTensor* out, void* stream) {
  const OpDef* d = nullptr;
  if (CTStatus s = check_op_kind(fn, op, CT_KIND_TERNARY, "ternary", &d)) return s;
  static const char* const where_names[] = {"cond", "a", "b"};
  static const char* const names[] = {"a", "b", "c"};
  const CTensor* in[3] = {a, b, c};
  double dflt[2] = {0.0, 0.0};
  if (defaults) {
    num_params = row_defaults(d, dflt);
    params = dflt;
    if (num_params < 0)
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s has parameters without defaults (%s): call ct_ternary_param", fn,
                  d->name, d->param_names);
  }
  return debug_perturb(op, out, run_elementwise(fn, op, in, op == CT_OP_WHERE ? where_names : names, 3, params,
                                                num_params, out, "out", stream, CT_CAST_DEFAULT, d));
}
}  // namespace
}  // namespace ct

CT_API CTStatus ct_ternary(int32_t op, const CTensor* a, const CTensor* b, const CTensor* c, CTensor* out,
                           void* stream) {
  CT_API_BEGIN("ct_ternary")
  return ct::run_ternary("ct_ternary", op, a, b, c, nullptr, 0, true, out, stream);
  CT_API_END()
}

CT_API CTStatus ct_ternary_param(int32_t op, const CTensor* a, const CTensor* b, const CTensor* c,
                                 const double* params, int32_t num_params, CTensor* out, void* stream) {
  CT_API_BEGIN("ct_ternary_param")
  return ct::run_ternary("ct_ternary_param", op, a, b, c, params, num_params, false, out, stream);
  CT_API_END()
}

namespace ct {
namespace {
CTStatus cast_with(const char* fn, const CTensor* x, CTensor* out, int32_t mode, void* stream) {
  if (x && out && (x->device.device_type != out->device.device_type || x->device.device_id != out->device.device_id))
    return debug_perturb(CT_OP_CAST, out, cast_across_devices(fn, x, out, stream, mode));
  static const char* const names[] = {"x"};
  return debug_perturb(CT_OP_CAST, out, run_elementwise(fn, CT_OP_CAST, &x, names, 1, nullptr, 0, out, "out", stream, mode));
}
}  // namespace
}  // namespace ct

CT_API CTStatus ct_cast(const CTensor* x, CTensor* out, void* stream) {
  CT_API_BEGIN("ct_cast")
  return ct::cast_with("ct_cast", x, out, CT_CAST_DEFAULT, stream);
  CT_API_END()
}

CT_API CTStatus ct_cast_ex(const CTensor* x, CTensor* out, int32_t mode, void* stream) {
  CT_API_BEGIN("ct_cast_ex")
  if (mode != CT_CAST_DEFAULT && mode != CT_CAST_SATURATE)
    return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_cast_ex: mode=%d is not a CTCastMode (CT_CAST_DEFAULT 0, CT_CAST_SATURATE 1)",
                    (int)mode);
  return ct::cast_with("ct_cast_ex", x, out, mode, stream);
  CT_API_END()
}

}  // extern "C"
