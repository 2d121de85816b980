// shape.cc — ct_op_output_info: the shape and dtype of every output of any
// op, from the op's row (its tensor roles, output-dtype rule and shape rule)
// and the same rules validation applies, so that the C++ wrapper, the
// Python module and framework adapters never re-derive an op's rules.
#include <cstddef>
#include <cstring>

#include "core/api_internal.h"
#include "core/error.h"
#include "core/nn_internal.h"
#include "core/plugin_ops.h"
#include "core/registry.h"
#include "core/validate.h"

namespace ct {
namespace {

void set_out(CTOutputInfo* o, int32_t nd, const int64_t* shape, int32_t dt) {
  std::memset(o, 0, sizeof *o);
  o->ndim = nd;
  for (int32_t i = 0; i < nd; ++i) o->shape[i] = shape[i];
  o->dtype = dtype_of(dt);
}

CTStatus output_info(const char* fn, int32_t op, const CTOpArgs& a, const CTensor* const* in, int32_t nin,
                     CTOutputInfo* outs, int32_t nout) {
  const OpDef* d = op_def(op);
  if (!d) return no_op(fn, op);
  if (nin != d->num_inputs)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s takes %d input(s) (of %s), got num_inputs=%d", fn, d->name,
                d->num_inputs, d->tensor_names, nin);
  if (nout != d->num_tensors - d->num_inputs)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s has %d output(s) (of %s), got num_outputs=%d", fn, d->name,
                d->num_tensors - d->num_inputs, d->tensor_names, nout);
  if (nin > 0 && !in) return fail(CT_ERR_INVALID_ARGUMENT, "%s: inputs is NULL", fn);
  if (!outs) return fail(CT_ERR_INVALID_ARGUMENT, "%s: outputs is NULL", fn);
  // The inputs: valid descriptions (data is not read), dtypes by role.
  TensorFacts f[kMaxTensors];
  int32_t dt = -1;
  for (int32_t i = 0; i < nin; ++i) {
    if (!in[i]) {
      if ((d->optional_mask >> i) & 1u) continue;
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s is NULL (only the arguments marked optional may be)", fn,
                  d->tensor[i]);
    }
    CTensor v = *in[i];
    v.data = reinterpret_cast<void*>(kStandInData);
    v.byte_offset = 0;
    if (CTStatus s = check_tensor(fn, d->tensor[i], &v, &f[i])) return s;
    if (d->role[i] == CT_ROLE_DATA && dt < 0) dt = f[i].dt;
  }
  for (int32_t i = 0; i < nin; ++i) {
    if (!in[i]) continue;
    const int32_t got = f[i].dt, r = d->role[i];
    const bool ok = r == CT_ROLE_DATA    ? got == dt
                    : r == CT_ROLE_COND  ? got == CT_DT_BOOL
                    : r == CT_ROLE_STAT || r == CT_ROLE_PARAM ? got == CT_DT_FLOAT32
                    : r == CT_ROLE_BIAS  ? got == dt || got == CT_DT_FLOAT32
                    : r == CT_ROLE_INDEX ? got == CT_DT_INT64 || (d->kind == CT_KIND_INDEX && got == CT_DT_INT32)
                                         : true;
    if (!ok)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s.dtype=%s does not fit %s's rule for it (data dtype %s)", fn,
                  d->tensor[i], dtype_name(got), d->name, dt >= 0 ? dtype_name(dt) : "?");
  }
  // No data input given (a plugin row's data inputs may all be optional): nothing fixes the dtype.
  if (dt < 0)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s: no data input is given (of %s), so its dtype is not known", fn,
                d->name, d->tensor_names);
  if (!(d->dtypes & (1u << dt)))
    return fail(CT_ERR_UNSUPPORTED, "%s: %s is not defined for %s: %s", fn, d->name, dtype_name(dt), d->dtype_rule);
  // The output dtype (one output for every kind but NN).
  int32_t out_dt = output_dtype(d->output, dt);
  if (d->output == CT_OUTPUT_ANY) {
    char buf[64];
    out_dt = dtype_index(a.dtype);
    if (out_dt < 0)
      return fail(CT_ERR_UNSUPPORTED, "%s: args->dtype=%s is not a dtype ctensor supports", fn,
                  describe_dtype(buf, sizeof buf, a.dtype));
  }
  CTOutputInfo res[kMaxTensors];
  int64_t shape[CT_MAX_NDIM];
  int32_t nd = 0;
  const CTensor* x = in[0];
  if (d->kind == CT_KIND_INDEX) {  // ct_index's rules, shared with the call
    int32_t ax = 0;
    if (CTStatus s = index_shape(fn, d, x, in[1], nin > 2 ? in[2] : nullptr, a.axis, &ax, shape, &nd)) return s;
    set_out(&res[0], nd, shape, out_dt);
    outs[0] = res[0];
    return CT_OK;
  }
  switch (d->shape_rule) {
    case CT_SHAPE_SAME: {
      if (d->kind == CT_KIND_ALONG_AXIS) {
        const int32_t r = x->ndim > 0 ? x->ndim : 1;
        if (a.axis < -r || a.axis >= r)
          return fail(CT_ERR_INVALID_ARGUMENT, "%s: args->axis=%d is outside [-%d, %d) for x.ndim=%d", fn, a.axis, r, r,
                      x->ndim);
      }
      set_out(&res[0], x->ndim, x->shape, out_dt);
      break;
    }
    case CT_SHAPE_BROADCAST: {
      if (CTStatus s = broadcast(fn, in, d->tensor, nin, shape, &nd)) return s;
      set_out(&res[0], nd, shape, out_dt);
      break;
    }
    case CT_SHAPE_REDUCE: {
      uint32_t mask = 0;
      int64_t count = 0, outer = 0;
      if (CTStatus s = reduce_shape(fn, x, a.axes, a.num_axes, a.keepdims, &mask, shape, &nd, &count, &outer)) return s;
      set_out(&res[0], nd, shape, out_dt);
      break;
    }
    default: {
      if (d->kind != CT_KIND_NN)
        return fail(CT_ERR_INTERNAL, "%s: %s has shape rule %d, which the shape query does not know", fn, d->name,
                    d->shape_rule);
      NNCall c;
      std::memset(&c, 0, sizeof c);
      c.fn = fn;
      c.op = op;
      c.dt = dt;
      c.num_tensors = d->num_tensors;
      if (CTStatus s = load_op_desc(fn, op, a.desc, &c)) return s;
      for (int32_t i = 0; i < nin; ++i) c.t[i] = in[i];
      Expect e[kMaxTensors];
      const bool hinted = a.extent[0] > 0 || a.extent[1] > 0;
      if (a.extent[0] < 0 || a.extent[1] < 0)
        return fail(CT_ERR_INVALID_ARGUMENT, "%s: args->extent={%lld, %lld} has a negative extent", fn,
                    (long long)a.extent[0], (long long)a.extent[1]);
      if (CTStatus s = nn_shapes(fn, &c, c.t, hinted ? a.extent : nullptr, e)) return s;
      // Inputs the rule fixes (max-pool indices, norm statistics) must agree, as in the call.
      for (int32_t i = 0; i < nin; ++i) {
        if (!in[i] || !e[i].known) continue;
        bool same = in[i]->ndim == e[i].ndim;
        for (int32_t k = 0; same && k < e[i].ndim; ++k) same = in[i]->shape[k] == e[i].shape[k];
        bool keep = e[i].has_keep && in[i]->ndim == e[i].keep_ndim;
        for (int32_t k = 0; keep && k < e[i].keep_ndim; ++k) keep = in[i]->shape[k] == e[i].keep[k];
        if (!same && !keep) {
          Shape sg, sw;
          char why[160];
          return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s but %s needs %s", fn, d->tensor[i],
                      format_shape(sg, sizeof sg, in[i]->ndim, in[i]->shape), why_text(e[i], why, sizeof why),
                      format_shape(sw, sizeof sw, e[i].ndim, e[i].shape));
        }
      }
      for (int32_t j = 0; j < nout; ++j) {
        const Expect& o = e[nin + j];
        if (!o.known)
          return fail(CT_ERR_INTERNAL, "%s: %s's shape rule leaves output %s open", fn, d->name, d->tensor[nin + j]);
        set_out(&res[j], o.ndim, o.shape, o.dt);
      }
      break;
    }
  }
  for (int32_t j = 0; j < nout; ++j) outs[j] = res[j];  // written only on success
  return CT_OK;
}

}  // namespace

CTStatus load_op_args(const char* fn, const CTOpArgs* args, CTOpArgs* a) {
  std::memset(a, 0, sizeof *a);
  a->struct_size = sizeof *a;
  if (!args) return CT_OK;
  static const size_t kEnds[] = {offsetof(CTOpArgs, axes),     offsetof(CTOpArgs, num_axes),
                                 offsetof(CTOpArgs, axis),     offsetof(CTOpArgs, dtype),
                                 offsetof(CTOpArgs, reserved), offsetof(CTOpArgs, desc),
                                 offsetof(CTOpArgs, extent),   offsetof(CTOpArgs, extent) + sizeof(int64_t)};
  const uint32_t n = args->struct_size;
  bool whole = n >= sizeof(CTOpArgs) && n <= 65536;
  for (size_t e : kEnds) whole = whole || n == e;
  if (!whole)
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: args->struct_size=%u is not that of a CTOpArgs (%zu, or where one of its fields ends)", fn, n,
                sizeof(CTOpArgs));
  std::memcpy(a, args, n < sizeof *a ? n : sizeof *a);
  a->struct_size = sizeof *a;
  return CT_OK;
}

}  // namespace ct

extern "C" {

CT_API CTStatus ct_op_output_info(int32_t op, const CTOpArgs* args, const CTensor* const* inputs,
                                  int32_t num_inputs, CTOutputInfo* outputs, int32_t num_outputs) {
  CT_API_BEGIN("ct_op_output_info")
  CTOpArgs a;
  if (CTStatus s = ct::load_op_args(ct_fn_name_, args, &a)) return s;
  return ct::output_info(ct_fn_name_, op, a, inputs, num_inputs, outputs, num_outputs);
  CT_API_END()
}

}  // extern "C"
