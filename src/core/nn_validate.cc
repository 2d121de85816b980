// nn_validate.cc — category 3 validation: descriptors (checked, defaults
// applied), tensors, dtypes by role, and the output-shape rules of the op
// rows (CTShapeRule), which ct_op_output_info reports as well.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/backends.h"
#include "core/error.h"
#include "core/library.h"
#include "core/nn_internal.h"
#include "core/plugin_ops.h"
#include "core/registry.h"
#include "core/validate.h"

namespace ct {


Names names_from(const OpDef* d) {
  Names n;
  n.count = d->num_tensors;
  n.inputs = d->num_inputs;
  for (int i = 0; i < n.count; ++i) {
    n.name[i] = d->tensor[i];
    n.optional[i] = (d->optional_mask >> i) & 1u;
    n.role[i] = d->role[i];
  }
  return n;
}
const Names& names_of(int32_t op) {
  static const struct Table {
    Names n[CT_OP_END_];
    Table() {
      for (int32_t op = 0; op < CT_OP_END_; ++op) n[op] = names_from(op_def(op));
    }
  } table;
  if (op < CT_OP_END_) return table.n[op];
  thread_local Names plugin;  // a plugin op's (valid until this thread asks for another)
  plugin = names_from(op_def_any(op));
  return plugin;
}


// ---- descriptors ------------------------------------------------------------

template <class D>
CTStatus load_desc(const char* fn, const void* desc, D* out) {
  const D* in = static_cast<const D*>(desc);
  if (!in) return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc is NULL", fn);
  if (in->struct_size < sizeof(D))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->struct_size=%u is smaller than this descriptor (%zu): set it to sizeof",
                fn, in->struct_size, sizeof(D));
  std::memcpy(out, in, sizeof(D));  // a newer caller's larger struct: we read what we know
  out->struct_size = sizeof(D);
  return CT_OK;
}

CTStatus positive_or_default(const char* fn, const char* what, int64_t* v, int64_t dflt) {
  if (*v < 0) return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->%s=%" PRId64 " is negative", fn, what, *v);
  if (*v == 0) *v = dflt;
  return CT_OK;
}
CTStatus non_negative(const char* fn, const char* what, int64_t v) {
  if (v < 0) return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->%s=%" PRId64 " is negative", fn, what, v);
  return CT_OK;
}
CTStatus check_activation(const char* fn, int32_t a) {
  if (a < CT_ACTIVATION_NONE || a > CT_ACTIVATION_TANH)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->activation=%d is not a CTActivation (0..%d)", fn, a,
                (int)CT_ACTIVATION_TANH);
  return CT_OK;
}
CTStatus check_epsilon(const char* fn, double e) {
  if (!(e >= 0) || !std::isfinite(e))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->epsilon=%g must be finite and >= 0", fn, e);
  return CT_OK;
}

// dil * (k - 1) + 1, the span of a dilated window, with checked arithmetic
// (dil >= 1 and k >= 1 are already known). dil_name is printed as given
// ("desc->dilation[0]"), k_name too, or as "<k_name>.shape[<k_dim>]" when
// k_dim >= 0 ("w.shape[2]": the text is made only for the message).
CTStatus dilated_extent(const char* fn, const char* dil_name, int64_t dil, const char* k_name, int k_dim, int64_t k,
                        int64_t* out) {
  int64_t e;
  if (__builtin_mul_overflow(dil, k - 1, &e) || __builtin_add_overflow(e, (int64_t)1, &e)) {
    char kn[80];
    std::snprintf(kn, sizeof kn, k_dim >= 0 ? "%s.shape[%d]" : "%s", k_name, k_dim);
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: %s=%" PRId64 " and %s=%" PRId64 ": the dilated window (dilation * (size - 1) + 1) overflows int64",
                fn, dil_name, dil, kn, k);
  }
  *out = e;
  return CT_OK;
}

CTStatus load_op_desc(const char* fn, int32_t op, const void* desc, NNCall* c) {
  switch (op_def_any(op)->desc_type) {
    case CT_DESC_MATMUL: {
      if (CTStatus s = load_desc(fn, desc, &c->matmul)) return s;
      return check_activation(fn, c->matmul.activation);
    }
    case CT_DESC_CONV2D: {
      CTConv2dDesc& d = c->conv;
      if (CTStatus s = load_desc(fn, desc, &d)) return s;
      if (d.groups < 0) return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->groups=%d is negative", fn, d.groups);
      if (d.groups == 0) d.groups = 1;
      static const char* const st[2] = {"stride[0]", "stride[1]"}, *const dl[2] = {"dilation[0]", "dilation[1]"},
                               *const pb[2] = {"pad_begin[0]", "pad_begin[1]"}, *const pe[2] = {"pad_end[0]", "pad_end[1]"};
      for (int i = 0; i < 2; ++i) {
        if (CTStatus s = positive_or_default(fn, st[i], &d.stride[i], 1)) return s;
        if (CTStatus s = positive_or_default(fn, dl[i], &d.dilation[i], 1)) return s;
        if (CTStatus s = non_negative(fn, pb[i], d.pad_begin[i])) return s;
        if (CTStatus s = non_negative(fn, pe[i], d.pad_end[i])) return s;
      }
      if (CTStatus s = check_activation(fn, d.activation)) return s;
      if (op != CT_OP_CONV2D && d.activation != CT_ACTIVATION_NONE)
        return fail(CT_ERR_INVALID_ARGUMENT,
                    "%s: desc->activation=%d but a backward convolution takes no activation (apply its derivative to dy first)",
                    fn, d.activation);
      return CT_OK;
    }
    case CT_DESC_POOL2D: {
      CTPool2dDesc& d = c->pool;
      if (CTStatus s = load_desc(fn, desc, &d)) return s;
      for (int i = 0; i < 2; ++i) {
        if (d.kernel[i] < 1)
          return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->kernel[%d]=%" PRId64 " must be >= 1", fn, i, d.kernel[i]);
        static const char* const st[2] = {"stride[0]", "stride[1]"}, *const dl[2] = {"dilation[0]", "dilation[1]"},
                                 *const pb[2] = {"pad_begin[0]", "pad_begin[1]"}, *const pe[2] = {"pad_end[0]", "pad_end[1]"};
        if (CTStatus s = positive_or_default(fn, st[i], &d.stride[i], d.kernel[i])) return s;
        if (CTStatus s = positive_or_default(fn, dl[i], &d.dilation[i], 1)) return s;
        if (CTStatus s = non_negative(fn, pb[i], d.pad_begin[i])) return s;
        if (CTStatus s = non_negative(fn, pe[i], d.pad_end[i])) return s;
        static const char* const dn[2] = {"desc->dilation[0]", "desc->dilation[1]"},
                                 *const kn[2] = {"desc->kernel[0]", "desc->kernel[1]"};
        int64_t extent = 0;
        if (CTStatus s = dilated_extent(fn, dn[i], d.dilation[i], kn[i], -1, d.kernel[i], &extent)) return s;
        if (d.pad_begin[i] >= extent || d.pad_end[i] >= extent)
          return fail(CT_ERR_INVALID_ARGUMENT,
                      "%s: desc->pad_begin[%d]=%" PRId64 " and pad_end[%d]=%" PRId64 " must be smaller than the window (%" PRId64
                      "): a window of padding only has no value",
                      fn, i, d.pad_begin[i], i, d.pad_end[i], extent);
      }
      d.count_include_pad = d.count_include_pad != 0;
      return CT_OK;
    }
    case CT_DESC_BATCH_NORM: {
      if (CTStatus s = load_desc(fn, desc, &c->bn)) return s;
      c->bn.reserved = 0;
      return check_epsilon(fn, c->bn.epsilon);
    }
    case CT_DESC_LAYER_NORM: {
      if (CTStatus s = load_desc(fn, desc, &c->ln)) return s;
      if (c->ln.normalized_ndim < 0)
        return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->normalized_ndim=%d is negative", fn, c->ln.normalized_ndim);
      if (c->ln.normalized_ndim == 0) c->ln.normalized_ndim = 1;
      return check_epsilon(fn, c->ln.epsilon);
    }
    case CT_DESC_ATTENTION: {
      CTAttentionDesc& d = c->attn;
      if (CTStatus s = load_desc(fn, desc, &d)) return s;
      if (d.causal < CT_CAUSAL_NONE || d.causal > CT_CAUSAL_BOTTOM_RIGHT)
        return fail(CT_ERR_INVALID_ARGUMENT,
                    "%s: desc->causal=%d is not a CTCausal (0 none, 1 top-left, 2 bottom-right)", fn, d.causal);
      if (!std::isfinite(d.scale))
        return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->scale=%g must be finite (0 means 1/sqrt(E))", fn, d.scale);
      return CT_OK;
    }
    case CT_DESC_CUSTOM: {  // a plugin op's: bytes only the plugin reads
      const size_t size = (size_t)op_def_any(op)->desc_size;
      if (!desc) return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc is NULL but %s takes a %zu-byte descriptor", fn,
                             op_def_any(op)->name, size);
      std::memcpy(c->custom, desc, size);
      c->custom_size = size;
      return CT_OK;
    }
    case CT_DESC_NONE: return CT_OK;  // a plugin op without a descriptor
    default:
      return fail(CT_ERR_INTERNAL, "%s: %s has descriptor type %d, which core does not know", fn,
                  op_def_any(op)->name, op_def_any(op)->desc_type);
  }
}

// The descriptor inside c for c's op (what backends and the plan cache see).
const void* desc_of(const NNCall& c, size_t* size) {
  const OpDef* d = op_def_any(c.op);  // a plugin op's even once unloaded (a plan outlives its library)
  switch (d ? d->desc_type : (int32_t)CT_DESC_NONE) {
    case CT_DESC_MATMUL: *size = sizeof c.matmul; return &c.matmul;
    case CT_DESC_CONV2D: *size = sizeof c.conv; return &c.conv;
    case CT_DESC_POOL2D: *size = sizeof c.pool; return &c.pool;
    case CT_DESC_BATCH_NORM: *size = sizeof c.bn; return &c.bn;
    case CT_DESC_LAYER_NORM: *size = sizeof c.ln; return &c.ln;
    case CT_DESC_ATTENTION: *size = sizeof c.attn; return &c.attn;
    case CT_DESC_CUSTOM: *size = c.custom_size; return c.custom;
    default: *size = 0; return nullptr;
  }
}

// The plugin.h view of a core call, for the backend.
CTNNCall backend_call(const NNCall& c, const CTensor* const* t, void* stream) {
  CTNNCall k;
  std::memset(&k, 0, sizeof k);
  k.struct_size = sizeof k;
  k.op = c.op;
  k.fn = c.fn;
  k.dt = c.dt;
  k.num_tensors = c.num_tensors;
  k.variant = c.variant;
  for (int i = 0; i < c.num_tensors; ++i) k.t[i] = t[i];
  k.desc = desc_of(c, &k.desc_size);
  k.stream = stream;
  return k;
}



// ---- shapes: the output-shape rules of the op rows (CTShapeRule) ------------
//
// nn_shapes() says, for every tensor argument whose shape the rule fixes,
// what that shape is; validation compares the given tensors with it and
// ct_op_output_info reports the outputs. Extents the inputs do not fix (the
// input extent of a backward op, a strided kernel) come from `hint`: the
// caller's tensor when validating, CTOpArgs.extent for the query.

const char* why_text(const Expect& e, char* buf, size_t size) {
  // why is one of this file's literals with at most two %s.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  std::snprintf(buf, size, e.why, e.why_a, e.why_b);
#pragma GCC diagnostic pop
  return buf;
}

CTStatus want_shape(const char* fn, const char* arg, const CTensor* t, int32_t nd, const int64_t* want,
                    const char* why) {
  bool same = t->ndim == nd;
  for (int32_t i = 0; same && i < nd; ++i) same = t->shape[i] == want[i];
  if (same) return CT_OK;
  Shape a, b;
  return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s but %s needs %s", fn, arg, format_shape(a, sizeof a, t->ndim, t->shape),
              why, format_shape(b, sizeof b, nd, want));
}

CTStatus want_ndim(const char* fn, const char* arg, const CTensor* t, int32_t lo, int32_t hi, const char* what) {
  if (t->ndim >= lo && t->ndim <= hi) return CT_OK;
  Shape a;
  return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s has %d dims; %s", fn, arg, format_shape(a, sizeof a, t->ndim, t->shape),
              t->ndim, what);
}

// Output extent of a window of span `ext` (the dilated kernel) moved by
// `stride` over `in` padded by pb and pe: (in + pb + pe - ext) / stride + 1,
// 0 when the padded input is shorter than the window. Checked arithmetic:
// every term may be as large as INT64_MAX (an empty tensor's other extents
// are unbounded); an overflow is CT_ERR_INVALID_ARGUMENT naming the fields.
CTStatus out_extent(const char* fn, const char* xname, int axis, int64_t in, int64_t pb, int64_t pe, int64_t ext,
                    int64_t stride, int64_t* out) {
  int64_t sum;
  if (__builtin_add_overflow(in, pb, &sum) || __builtin_add_overflow(sum, pe, &sum))
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: %s.shape[%d]=%" PRId64 " + desc->pad_begin[%d]=%" PRId64 " + desc->pad_end[%d]=%" PRId64
                " (the padded input) overflows int64",
                fn, xname, axis + 2, in, axis, pb, axis, pe);
  const int64_t span = sum - ext;           // both >= 0: no overflow
  *out = span < 0 ? 0 : span / stride + 1;  // ext >= 1, so span < INT64_MAX and the + 1 fits
  return CT_OK;
}

// The smallest input extent whose windows (span `ext`) give `out` outputs:
// (out - 1) * stride + ext - pb - pe, or 0 when that is < 1. Checked
// arithmetic, as out_extent; yname names the tensor that gave `out`.
CTStatus in_extent(const char* fn, const char* yname, int axis, int64_t out, int64_t pb, int64_t pe, int64_t ext,
                   int64_t stride, int64_t* in) {
  int64_t v;
  if (__builtin_mul_overflow(out - 1, stride, &v) || __builtin_add_overflow(v, ext, &v))
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: the input extent that %s.shape[%d]=%" PRId64 " outputs need ((outputs - 1) * desc->stride[%d]=%" PRId64
                " + the dilated window %" PRId64 " - the padding) overflows int64",
                fn, yname, axis + 2, out, axis, stride, ext);
  // v - pb - pe, compared rather than subtracted where it could wrap (v may be
  // as low as 1 - INT64_MAX, the pads as high as INT64_MAX).
  if (v <= pb) {
    *in = 0;
    return CT_OK;
  }
  v -= pb;  // > 0
  *in = v <= pe ? 0 : v - pe;
  return CT_OK;
}

// The smallest x >= 0 with lo <= (a * x) mod m <= hi, or -1 if there is
// none; 0 <= a < m, 0 <= lo <= hi < m. When no multiple of a lies in
// [lo, hi], a * x - m * y in [lo, hi] is the same as (m * y) mod a in a range
// below a, for the same smallest y: Euclid's descent, O(log m) deep.
int64_t first_mod_in_range(uint64_t a, uint64_t m, uint64_t lo, uint64_t hi) {
  using u128 = unsigned __int128;
  if (lo == 0) return 0;
  if (a == 0) return -1;
  const uint64_t x = lo / a + (lo % a != 0);
  if ((u128)a * x <= hi) return (int64_t)x;
  const int64_t y = first_mod_in_range(m % a, a, (a - hi % a) % a, (a - lo % a) % a);
  if (y < 0) return -1;
  const u128 num = (u128)lo + (u128)m * (uint64_t)y;
  return (int64_t)(num / a + (num % a != 0));  // < m: the residues repeat with period m / gcd(a, m)
}

// The first output index along one axis whose window has every tap in the
// padding, or -1. Window p's taps are p * s - pb + j * dil, j in [0, k), on an
// input of extent H; pb < dil * (k - 1) + 1 and P >= 1 are known, and
// (P - 1) * s and H + pb fit in int64 (out_extent checked them).
int64_t first_padding_window(int64_t H, int64_t pb, int64_t s, int64_t dil, int64_t P) {
  if (H == 0) return 0;
  // Windows that start in the leading padding (p * s < pb): the first tap at
  // or after 0 is (p * s - pb) mod dil (pb is short of the window, so such a
  // tap exists), which lands past x only when H <= it < dil.
  const int64_t lead_all = pb / s + (pb % s != 0), lead = lead_all < P ? lead_all : P;
  if (lead > 0 && H < dil) {
    const uint64_t m = (uint64_t)dil, c = (m - (uint64_t)pb % m) % m;  // window 0's residue
    if (c >= (uint64_t)H) return 0;
    const int64_t p = first_mod_in_range((uint64_t)s % m, m, (uint64_t)H - c, m - 1 - c);
    if (p >= 0 && p < lead) return p;
  }
  // The others start at p * s - pb >= 0 and have that tap inside x unless it is >= H.
  if ((P - 1) * s - pb >= H) return (H + pb) / s + ((H + pb) % s != 0);
  return -1;
}

// why (a format with up to two %s) takes a and b; the names outlive the call.
void set_expect(Expect* e, int32_t nd, const int64_t* shape, int32_t dt, const char* why, const char* a = "",
                const char* b = "") {
  e->known = true;
  e->ndim = nd;
  for (int32_t i = 0; i < nd; ++i) e->shape[i] = shape[i];
  e->dt = dt;
  e->why = why;
  e->why_a = a;
  e->why_b = b;
}

CTStatus shapes_matmul(const char* fn, const NNCall* c, const Names& n, const CTensor* const* t, Expect* e) {
  const CTensor *a = t[0], *b = t[1], *bias = t[2];
  const char* need2 = "matmul needs at least 2 dims (view a vector as (1, K) or (K, 1))";
  if (CTStatus s = want_ndim(fn, n.name[0], a, 2, CT_MAX_NDIM, need2)) return s;
  if (CTStatus s = want_ndim(fn, n.name[1], b, 2, CT_MAX_NDIM, need2)) return s;
  Shape sa, sb;
  if (a->shape[a->ndim - 1] != b->shape[b->ndim - 2])
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: a.shape=%s and b.shape=%s: a.shape[%d]=%" PRId64 " != b.shape[%d]=%" PRId64
                " (the K dims)", fn, format_shape(sa, sizeof sa, a->ndim, a->shape),
                format_shape(sb, sizeof sb, b->ndim, b->shape), a->ndim - 1, a->shape[a->ndim - 1], b->ndim - 2,
                b->shape[b->ndim - 2]);
  const int32_t nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  int64_t want[CT_MAX_NDIM];
  for (int32_t i = 0; i < nd - 2; ++i) {
    const int32_t ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
    const int64_t ea = ia >= 0 ? a->shape[ia] : 1, eb = ib >= 0 ? b->shape[ib] : 1;
    if (ea != eb && ea != 1 && eb != 1)
      return fail(CT_ERR_SHAPE_MISMATCH, "%s: the batch dims of a.shape=%s and b.shape=%s do not broadcast (%" PRId64
                  " vs %" PRId64 ")", fn, format_shape(sa, sizeof sa, a->ndim, a->shape),
                  format_shape(sb, sizeof sb, b->ndim, b->shape), ea, eb);
    want[i] = ea == 1 ? eb : ea;
  }
  want[nd - 2] = a->shape[a->ndim - 2];
  want[nd - 1] = b->shape[b->ndim - 1];
  if (bias) {
    bool ok = bias->ndim <= nd;
    for (int32_t i = 0; ok && i < bias->ndim; ++i) {
      const int64_t eb = bias->shape[i], w = want[nd - bias->ndim + i];
      ok = eb == w || eb == 1;
    }
    if (!ok) {
      Shape sc, so;
      return fail(CT_ERR_SHAPE_MISMATCH, "%s: bias.shape=%s does not broadcast to out.shape=%s", fn,
                  format_shape(sc, sizeof sc, bias->ndim, bias->shape), format_shape(so, sizeof so, nd, want));
    }
  }
  set_expect(&e[3], nd, want, c->dt, "a @ b");
  return CT_OK;
}

// conv2d and its backwards. Positions follow the rows: conv2d (x, w, bias, y),
// backward_data (dy, w, dx), backward_weight (x, dy, dw, dbias).
CTStatus shapes_conv(const char* fn, const NNCall* c, const Names& n, const CTensor* const* t, const int64_t* hint,
                     Expect* e) {
  const CTConv2dDesc& d = c->conv;
  const int32_t rule = op_def_any(c->op)->shape_rule;
  const int ix = rule == CT_SHAPE_CONV2D_BACKWARD_DATA ? 2 : 0;
  const int iw = rule == CT_SHAPE_CONV2D_BACKWARD_WEIGHT ? 2 : 1;
  const int iy = rule == CT_SHAPE_CONV2D ? 3 : rule == CT_SHAPE_CONV2D_BACKWARD_DATA ? 0 : 1;
  const char* four = "conv2d takes 4-d (N, C, H, W) data and (K, C/groups, R, S) weights";
  for (int i : {ix, iw, iy})
    if (t[i] && i < n.inputs)
      if (CTStatus s = want_ndim(fn, n.name[i], t[i], 4, 4, four)) return s;
  const int64_t g = d.groups;
  int64_t x[4], w[4], y[4];
  auto groups_error = [&]() {
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->groups=%d must divide the channels C=%" PRId64 " (%s.shape[1]) and K=%" PRId64
                " (%s.shape[0])", fn, d.groups, x[1], n.name[ix], w[0], n.name[iw]);
  };
  if (rule != CT_SHAPE_CONV2D_BACKWARD_WEIGHT) {  // w is an input: K, C/g, R, S
    for (int i = 0; i < 4; ++i) w[i] = t[iw]->shape[i];
    if (w[2] < 1 || w[3] < 1) {
      Shape sw;
      return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s has an empty kernel", fn, n.name[iw], format_shape(sw, sizeof sw, 4, w));
    }
  }
  static const char* const dn[2] = {"desc->dilation[0]", "desc->dilation[1]"};
  int64_t ext[2] = {0, 0};  // the dilated kernel, in checked arithmetic
  if (rule == CT_SHAPE_CONV2D_BACKWARD_DATA) {  // dx from dy and w: C = w[1] * g, H from the hint or the smallest
    for (int i = 0; i < 4; ++i) y[i] = t[iy]->shape[i];
    x[0] = y[0];
    if (__builtin_mul_overflow(w[1], g, &x[1]))
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.shape[1]=%" PRId64 " times desc->groups=%d (dx's channels) overflows int64",
                  fn, n.name[iw], w[1], d.groups);
    for (int k = 0; k < 2; ++k) {
      if (CTStatus s = dilated_extent(fn, dn[k], d.dilation[k], n.name[iw], 2 + k, w[2 + k], &ext[k])) return s;
      if (hint && hint[k] > 0)
        x[2 + k] = hint[k];
      else if (CTStatus s = in_extent(fn, n.name[iy], k, y[2 + k], d.pad_begin[k], d.pad_end[k], ext[k], d.stride[k],
                                      &x[2 + k]))
        return s;
    }
  } else {
    for (int i = 0; i < 4; ++i) x[i] = t[ix]->shape[i];
  }
  if (rule == CT_SHAPE_CONV2D_BACKWARD_WEIGHT) {  // dw from x and dy: K from dy, R and S from the hint or unique
    for (int i = 0; i < 4; ++i) y[i] = t[iy]->shape[i];
    w[0] = y[1];
    if (x[1] % g != 0) return groups_error();
    w[1] = x[1] / g;
    for (int k = 0; k < 2; ++k) {
      if (hint && hint[k] > 0) {
        w[2 + k] = hint[k];
        continue;
      }
      // dil * (R - 1) lies in [B - (stride - 1), B], B = H + pads - 1 - (P - 1) * stride,
      // in checked arithmetic (every term may be near INT64_MAX).
      int64_t padded, steps, B;
      if (__builtin_add_overflow(x[2 + k], d.pad_begin[k], &padded) || __builtin_add_overflow(padded, d.pad_end[k], &padded))
        return fail(CT_ERR_INVALID_ARGUMENT,
                    "%s: %s.shape[%d]=%" PRId64 " + desc->pad_begin[%d]=%" PRId64 " + desc->pad_end[%d]=%" PRId64
                    " (the padded input) overflows int64",
                    fn, n.name[ix], 2 + k, x[2 + k], k, d.pad_begin[k], k, d.pad_end[k]);
      if (__builtin_mul_overflow(y[2 + k] - 1, d.stride[k], &steps) || __builtin_sub_overflow(padded - 1, steps, &B))
        return fail(CT_ERR_INVALID_ARGUMENT,
                    "%s: the kernel extent along dim %d from %s.shape[%d]=%" PRId64 " and %s.shape[%d]=%" PRId64
                    " with desc->stride[%d]=%" PRId64 " overflows int64",
                    fn, 2 + k, n.name[ix], 2 + k, x[2 + k], n.name[iy], 2 + k, y[2 + k], k, d.stride[k]);
      const int64_t A = B < d.stride[k] - 1 ? 0 : B - (d.stride[k] - 1);
      const int64_t lo = A / d.dilation[k] + (A % d.dilation[k] != 0), hi = B < 0 ? -1 : B / d.dilation[k];
      if (lo != hi)
        return fail(CT_ERR_INVALID_ARGUMENT,
                    "%s: the kernel extent along dim %d is not fixed by %s and %s (%s with stride %" PRId64
                    "): give it (CTOpArgs.extent, or dw's shape)",
                    fn, 2 + k, n.name[ix], n.name[iy], lo > hi ? "none fits" : "several fit", d.stride[k]);
      if (__builtin_add_overflow(lo, (int64_t)1, &w[2 + k]))
        return fail(CT_ERR_INVALID_ARGUMENT, "%s: the kernel extent along dim %d (%" PRId64 " + 1) overflows int64", fn,
                    2 + k, lo);
    }
  }
  {
    const int64_t K = w[0], C = x[1];
    if (C % g != 0 || K % g != 0) return groups_error();
    if (w[1] != C / g) {
      Shape sw;
      return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s but C/groups = %" PRId64 "/%d = %" PRId64 " input channels per group",
                  fn, n.name[iw], format_shape(sw, sizeof sw, 4, w), C, d.groups, C / g);
    }
  }
  int64_t PQ[2];
  for (int k = 0; k < 2; ++k) {
    if (rule != CT_SHAPE_CONV2D_BACKWARD_DATA)
      if (CTStatus s = dilated_extent(fn, dn[k], d.dilation[k], n.name[iw], 2 + k, w[2 + k], &ext[k])) return s;
    if (CTStatus s = out_extent(fn, n.name[ix], k, x[2 + k], d.pad_begin[k], d.pad_end[k], ext[k], d.stride[k], &PQ[k]))
      return s;
  }
  const int64_t P = PQ[0], Q = PQ[1];
  if (P < 1 || Q < 1 || x[2] < 1 || x[3] < 1) {
    Shape sx;
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s is smaller than the dilated kernel (%" PRId64 "x%" PRId64 ") with this padding",
                fn, n.name[ix], format_shape(sx, sizeof sx, 4, x), ext[0], ext[1]);
  }
  const int64_t want[4] = {x[0], w[0], P, Q};
  set_expect(&e[iy], 4, want, c->dt, "conv2d of %s and %s", n.name[ix], n.name[iw]);
  if (rule == CT_SHAPE_CONV2D_BACKWARD_DATA) set_expect(&e[ix], 4, x, c->dt, "conv2d_backward_data of dy and w");
  if (rule == CT_SHAPE_CONV2D_BACKWARD_WEIGHT) set_expect(&e[iw], 4, w, c->dt, "conv2d_backward_weight of x and dy");
  const int ib = rule == CT_SHAPE_CONV2D ? 2 : rule == CT_SHAPE_CONV2D_BACKWARD_WEIGHT ? 3 : -1;
  if (ib >= 0) {
    const int64_t kb[1] = {w[0]};
    set_expect(&e[ib], 1, kb, c->dt, "one value per output channel");
    if (ib < n.inputs) e[ib].any_dtype = true;  // bias: the data dtype or float32, checked with the dtypes
  }
  return CT_OK;
}

// Pooling: forward (x, y, indices?) or (x, y); backward (dy, indices, dx) or (dy, dx).
CTStatus shapes_pool(const char* fn, const NNCall* c, const Names& n, const CTensor* const* t, const int64_t* hint,
                     Expect* e) {
  const CTPool2dDesc& d = c->pool;
  const bool fwd = op_def_any(c->op)->shape_rule == CT_SHAPE_POOL2D;
  const int ix = fwd ? 0 : n.count - 1, iy = fwd ? 1 : 0;
  int ii = -1;
  for (int i = 0; i < n.count; ++i)
    if (n.role[i] == CT_ROLE_INDEX) ii = i;
  const char* four = "pooling takes 4-d (N, C, H, W) tensors";
  const int isrc = fwd ? ix : iy;  // the input that fixes the rest
  if (CTStatus s = want_ndim(fn, n.name[isrc], t[isrc], 4, 4, four)) return s;
  int64_t x[4];
  if (fwd) {
    for (int i = 0; i < 4; ++i) x[i] = t[ix]->shape[i];
  } else {
    const CTensor* dy = t[iy];
    x[0] = dy->shape[0];
    x[1] = dy->shape[1];
    for (int k = 0; k < 2; ++k) {
      const int64_t ext = d.dilation[k] * (d.kernel[k] - 1) + 1;  // load_op_desc checked that it fits
      if (hint && hint[k] > 0)
        x[2 + k] = hint[k];
      else if (CTStatus s = in_extent(fn, n.name[iy], k, dy->shape[2 + k], d.pad_begin[k], d.pad_end[k], ext, d.stride[k],
                                      &x[2 + k]))
        return s;
    }
  }
  // An extent inferred from dy (no hint) that comes out empty is too small;
  // a given empty H or W is refused below, every window being in the padding.
  bool small = false;
  for (int k = 0; k < 2; ++k) small = small || (!fwd && !(hint && hint[k] > 0) && x[2 + k] < 1);
  int64_t ext[2], PQ[2];
  for (int k = 0; k < 2; ++k) {
    ext[k] = d.dilation[k] * (d.kernel[k] - 1) + 1;  // load_op_desc checked that it fits
    if (CTStatus s = out_extent(fn, n.name[ix], k, x[2 + k], d.pad_begin[k], d.pad_end[k], ext[k], d.stride[k], &PQ[k]))
      return s;
  }
  const int64_t P = PQ[0], Q = PQ[1];
  if (P < 1 || Q < 1 || small) {
    Shape sx;
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s is smaller than the window (%" PRId64 "x%" PRId64 ") with this padding", fn,
                n.name[ix], format_shape(sx, sizeof sx, 4, x), ext[0], ext[1]);
  }
  // A window wholly in the padding has no value (max of nothing; an average
  // without the padding divides by 0): refused whatever N and C are. With a
  // dilation, a window can also straddle a short x without a tap inside it;
  // an empty H or W puts every window there.
  for (int k = 0; k < 2; ++k) {
    const int64_t H = x[2 + k], p = first_padding_window(H, d.pad_begin[k], d.stride[k], d.dilation[k], PQ[k]);
    if (p < 0) continue;
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: output %s %" PRId64 " (of %" PRId64 ") has its whole window in the padding: desc->kernel[%d]=%" PRId64
                ", stride[%d]=%" PRId64 ", dilation[%d]=%" PRId64 ", pad_begin[%d]=%" PRId64 ", pad_end[%d]=%" PRId64
                " put its taps at %" PRId64 " + %" PRId64 "*j (j < %" PRId64 "), none in [0, %" PRId64 ") of %s.shape[%d]=%" PRId64
                "; a window of padding only has no value",
                fn, k == 0 ? "row" : "column", p, PQ[k], k, d.kernel[k], k, d.stride[k], k, d.dilation[k], k, d.pad_begin[k],
                k, d.pad_end[k], p * d.stride[k] - d.pad_begin[k], d.dilation[k], d.kernel[k], H, n.name[ix], 2 + k, H);
  }
  const int64_t want[4] = {x[0], x[1], P, Q};
  set_expect(&e[iy], 4, want, c->dt, "pooling %s", n.name[ix]);
  if (ii >= 0) set_expect(&e[ii], 4, want, CT_DT_INT64, "pooling %s", n.name[ix]);
  if (!fwd) set_expect(&e[ix], 4, x, c->dt, "the pooling backward of dy");
  return CT_OK;
}

// Norms: data tensors have x's shape; statistics one value per channel
// (batch norm) or x's shape without the normalized axes (layer norm, which
// also takes them with those axes kept as 1); scale and shift one value per
// channel or the normalized axes' shape.
CTStatus shapes_norm(const char* fn, const NNCall* c, const Names& n, const CTensor* const* t, Expect* e) {
  const bool ln = op_def_any(c->op)->desc_type == CT_DESC_LAYER_NORM;
  const CTensor* x = t[0];
  int64_t stat_shape[CT_MAX_NDIM], ch_shape[CT_MAX_NDIM];
  int32_t stat_nd, ch_nd;
  if (ln) {
    const int32_t k = c->ln.normalized_ndim;
    if (x->ndim < 1 || k > x->ndim)
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->normalized_ndim=%d but x has %d dims", fn, k, x->ndim);
    stat_nd = x->ndim - k;
    ch_nd = k;
    for (int32_t i = 0; i < x->ndim; ++i) (i < stat_nd ? stat_shape[i] : ch_shape[i - stat_nd]) = x->shape[i];
  } else {
    if (CTStatus s = want_ndim(fn, n.name[0], x, 2, 5, "batch_norm takes (N, C, ...) data with 2 to 5 dims")) return s;
    stat_nd = ch_nd = 1;
    stat_shape[0] = ch_shape[0] = x->shape[1];
  }
  for (int i = 1; i < n.count; ++i) {
    if (n.role[i] == CT_ROLE_DATA) {
      set_expect(&e[i], x->ndim, x->shape, c->dt, "the shape of x");
      continue;
    }
    const bool per_row = n.role[i] == CT_ROLE_STAT;
    set_expect(&e[i], per_row ? stat_nd : ch_nd, per_row ? stat_shape : ch_shape, CT_DT_FLOAT32,
               ln ? (per_row ? "layer_norm's statistics (x's shape without the normalized axes)"
                             : "layer_norm (the normalized axes of x)")
                  : "batch_norm (one value per channel, x.shape[1])");
    if (ln && per_row) {  // the keep-dims form: (..., 1, ..., 1)
      e[i].has_keep = true;
      e[i].keep_ndim = x->ndim;
      for (int32_t j = 0; j < x->ndim; ++j) e[i].keep[j] = j < stat_nd ? stat_shape[j] : 1;
    }
  }
  return CT_OK;
}

// Attention: q (..., L, E), k (..., S, E), v (..., S, Ev), mask broadcasting
// to (batch..., L, S), out (batch..., L, Ev); batch = the broadcast of q's,
// k's and v's batch dims.
CTStatus shapes_attention(const char* fn, const NNCall* c, const Names& n, const CTensor* const* t, Expect* e) {
  const CTensor *q = t[0], *k = t[1], *v = t[2], *mask = t[3];
  const char* need2 = "attention takes (..., L, E) queries, (..., S, E) keys and (..., S, Ev) values";
  for (int i = 0; i < 3; ++i)
    if (CTStatus s = want_ndim(fn, n.name[i], t[i], 2, CT_MAX_NDIM, need2)) return s;
  Shape sa, sb, sc;
  const int64_t L = q->shape[q->ndim - 2], E = q->shape[q->ndim - 1], S = k->shape[k->ndim - 2];
  if (k->shape[k->ndim - 1] != E)
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: q.shape=%s and k.shape=%s: q.shape[%d]=%" PRId64 " != k.shape[%d]=%" PRId64
                " (the dims of the dot products)", fn, format_shape(sa, sizeof sa, q->ndim, q->shape),
                format_shape(sb, sizeof sb, k->ndim, k->shape), q->ndim - 1, E, k->ndim - 1, k->shape[k->ndim - 1]);
  if (v->shape[v->ndim - 2] != S)
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: k.shape=%s and v.shape=%s: k.shape[%d]=%" PRId64 " != v.shape[%d]=%" PRId64
                " (one value per key)", fn, format_shape(sa, sizeof sa, k->ndim, k->shape),
                format_shape(sb, sizeof sb, v->ndim, v->shape), k->ndim - 2, S, v->ndim - 2, v->shape[v->ndim - 2]);
  int32_t nd = q->ndim;
  for (int i = 1; i < 3; ++i) nd = t[i]->ndim > nd ? t[i]->ndim : nd;
  int64_t want[CT_MAX_NDIM];
  for (int32_t d = 0; d < nd - 2; ++d) {
    int64_t ext = 1;
    for (int i = 0; i < 3; ++i) {
      const int32_t di = d - (nd - t[i]->ndim);
      const int64_t ei = di >= 0 ? t[i]->shape[di] : 1;
      if (ei != 1 && ext != 1 && ei != ext)
        return fail(CT_ERR_SHAPE_MISMATCH, "%s: the batch dims of q.shape=%s, k.shape=%s and v.shape=%s do not broadcast "
                    "(%" PRId64 " vs %" PRId64 " at batch dim %d)", fn, format_shape(sa, sizeof sa, q->ndim, q->shape),
                    format_shape(sb, sizeof sb, k->ndim, k->shape), format_shape(sc, sizeof sc, v->ndim, v->shape), ext, ei, d);
      if (ei != 1) ext = ei;
    }
    want[d] = ext;
  }
  want[nd - 2] = L;
  want[nd - 1] = v->shape[v->ndim - 1];
  set_expect(&e[4], nd, want, c->dt, "attention of q, k and v");
  if (mask) {
    const int32_t mdt = dtype_index(mask->dtype);
    if (mdt != CT_DT_BOOL && mdt != c->dt && mdt != CT_DT_FLOAT32)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: mask.dtype=%s but a mask is bool (true: attend) or added to the scores "
                  "(%s or float32)", fn, dtype_name(mdt), dtype_name(c->dt));
    int64_t scores[CT_MAX_NDIM];
    for (int32_t d = 0; d < nd - 2; ++d) scores[d] = want[d];
    scores[nd - 2] = L;
    scores[nd - 1] = S;
    bool ok = mask->ndim <= nd;
    for (int32_t i = 0; ok && i < mask->ndim; ++i) {
      const int64_t em = mask->shape[i], w = scores[nd - mask->ndim + i];
      ok = em == w || em == 1;
    }
    if (!ok) {
      Shape sm, ss;
      return fail(CT_ERR_SHAPE_MISMATCH, "%s: mask.shape=%s does not broadcast to the scores' shape %s", fn,
                  format_shape(sm, sizeof sm, mask->ndim, mask->shape), format_shape(ss, sizeof ss, nd, scores));
    }
  }
  return CT_OK;
}

// A plugin op: its output_shape callback says each output's shape; its
// outputs have the data dtype (CT_OUTPUT_SAME) unless their role says more.
CTStatus shapes_custom(const char* fn, const NNCall* c, const Names& n, const CTensor* const* t, Expect* e) {
  const OpDef* def = op_def_any(c->op);
  for (int i = n.inputs; i < n.count; ++i) {
    int64_t shape[CT_MAX_NDIM];
    int32_t nd = -1;
    size_t dsize = 0;
    const void* desc = desc_of(*c, &dsize);
    const CTStatus s = def->output_shape(desc, t, n.inputs, i - n.inputs, shape, &nd);
    if (s) {
      const std::string why = ct_last_error();
      return fail(s, "%s: %s: %s", fn, def->name, why.c_str());
    }
    if (nd < 0 || nd > CT_MAX_NDIM)
      return fail(CT_ERR_BACKEND, "%s: %s: the plugin's output_shape gave ndim=%d for %s", fn, def->name, nd, n.name[i]);
    for (int32_t d = 0; d < nd; ++d)
      if (shape[d] < 0)
        return fail(CT_ERR_BACKEND, "%s: %s: the plugin's output_shape gave a negative extent for %s", fn, def->name,
                    n.name[i]);
    set_expect(&e[i], nd, shape, n.role[i] == CT_ROLE_INDEX ? (int32_t)CT_DT_INT64
                                 : n.role[i] == CT_ROLE_STAT ? (int32_t)CT_DT_FLOAT32 : c->dt,
               "the plugin's output_shape");
  }
  return CT_OK;
}

CTStatus nn_shapes(const char* fn, const NNCall* c, const CTensor* const* t, const int64_t* hint, Expect* e) {
  const OpDef* def = op_def_any(c->op);
  const Names& n = names_of(c->op);
  for (int i = 0; i < n.count; ++i) e[i] = Expect();
  switch (def->shape_rule) {
    case CT_SHAPE_MATMUL: return shapes_matmul(fn, c, n, t, e);
    case CT_SHAPE_CONV2D:
    case CT_SHAPE_CONV2D_BACKWARD_DATA:
    case CT_SHAPE_CONV2D_BACKWARD_WEIGHT: return shapes_conv(fn, c, n, t, hint, e);
    case CT_SHAPE_POOL2D:
    case CT_SHAPE_POOL2D_BACKWARD: return shapes_pool(fn, c, n, t, hint, e);
    case CT_SHAPE_NORM: return shapes_norm(fn, c, n, t, e);
    case CT_SHAPE_ATTENTION: return shapes_attention(fn, c, n, t, e);
    case CT_SHAPE_CUSTOM: return shapes_custom(fn, c, n, t, e);
    default:
      return fail(CT_ERR_INTERNAL, "%s: %s has shape rule %d, which core's NN shape rules do not know", fn, def->name,
                  def->shape_rule);
  }
}

// The given tensors against the rule's shapes; the caller's outputs give
// the extents the inputs leave open.
CTStatus check_shapes(const char* fn, const NNCall* c, const Names& n) {
  int64_t hint[2] = {0, 0};
  const int32_t rule = op_def_any(c->op)->shape_rule;
  const int ih = rule == CT_SHAPE_CONV2D_BACKWARD_DATA || rule == CT_SHAPE_POOL2D_BACKWARD ? n.count - 1
                 : rule == CT_SHAPE_CONV2D_BACKWARD_WEIGHT                              ? 2
                                                                                        : -1;
  if (ih >= 0 && c->t[ih] && c->t[ih]->ndim == 4) hint[0] = c->t[ih]->shape[2], hint[1] = c->t[ih]->shape[3];
  Expect e[kMaxTensors];
  if (CTStatus s = nn_shapes(fn, c, c->t, ih >= 0 ? hint : nullptr, e)) return s;
  for (int i = 0; i < n.count; ++i) {
    const CTensor* t = c->t[i];
    if (!t || !e[i].known) continue;
    const bool keep = e[i].has_keep && t->ndim == e[i].keep_ndim;
    const int32_t nd = keep ? e[i].keep_ndim : e[i].ndim;
    const int64_t* want = keep ? e[i].keep : e[i].shape;
    bool same = t->ndim == nd;
    for (int32_t k = 0; same && k < nd; ++k) same = t->shape[k] == want[k];
    if (same) continue;
    char why[160];
    return want_shape(fn, n.name[i], t, nd, want, why_text(e[i], why, sizeof why));
  }
  return CT_OK;
}

bool same_device(CTDevice a, CTDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; }

// Everything about a call except the data: the tensors' facts, the
// descriptor, the backend. With data = false, data pointers are not read.
CTStatus validate(const char* fn, int32_t op, const void* desc, const CTensor* const* t, int32_t num, void* stream,
                  bool data, NNCall* c, const CTKernelInterface** kern) {
  const OpDef* def = op_def(op);
  if (!def) return no_op(fn, op);
  if (def->kind != CT_KIND_NN)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op=%d (%s) is not an NN op: call %s", fn, op, def->name,
                kind_entry(def->kind));
  const Names& n = names_of(op);
  if (num != n.count)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s takes %d tensors (%s), got num_tensors=%d", fn, def->name, n.count,
                def->tensor_names, num);
  std::memset(c, 0, sizeof *c);
  c->fn = fn;
  c->op = op;
  c->num_tensors = num;
  if (CTStatus s = load_op_desc(fn, op, desc, c)) return s;
  TensorFacts f[kMaxTensors];
  for (int i = 0; i < num; ++i) {
    if (!t[i]) {
      if (n.optional[i]) continue;
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s is NULL (only the arguments marked optional may be)", fn, n.name[i]);
    }
    if (data) {
      if (CTStatus s = check_tensor(fn, n.name[i], t[i], &f[i])) return s;
    } else {  // shapes only: a stand-in address that passes the data checks
      CTensor v = *t[i];
      v.data = reinterpret_cast<void*>(kStandInData);
      v.byte_offset = 0;
      if (CTStatus s = check_tensor(fn, n.name[i], &v, &f[i])) return s;
    }
    c->t[i] = t[i];
  }
  // The first tensor fixes the call's device and data dtype: a plugin's row
  // may mark it optional, but a call without it has neither.
  if (num < 1 || !t[0])
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s is NULL, but %s's first tensor fixes the device and dtype", fn,
                num < 1 ? "tensor 0" : n.name[0], def->name);
  for (int i = 1; i < num; ++i)
    if (t[i] && !same_device(t[i]->device, t[0]->device))
      return fail(CT_ERR_DEVICE_MISMATCH, "%s: %s.device=(%d,%d) differs from %s.device=(%d,%d)", fn, n.name[i],
                  t[i]->device.device_type, t[i]->device.device_id, n.name[0], t[0]->device.device_type,
                  t[0]->device.device_id);
  const Backend* backend = nullptr;
  if (CTStatus s = check_device(fn, n.name[0], t[0]->device, &backend)) return s;
  if (!backend->dev.data_is_address)
    for (int i = 0; i < num; ++i) f[i].not_address = true;
  c->device_id = t[0]->device.device_id;
  // dtypes
  const int32_t dt = f[0].dt;
  c->dt = dt;
  // matmul's out may be float32 for float16 / bfloat16 data: the products
  // accumulated and rounded once to float32 (oneDNN's and cuBLAS's mixed
  // precision), which the backend's supports() sees as out_dt
  int32_t out_dt = dt;
  for (int i = 1; i < num; ++i) {
    if (!t[i]) continue;
    const int32_t r = n.role[i];
    const int32_t got = f[i].dt;
    if (op == CT_OP_MATMUL && i == n.count - 1 && got == CT_DT_FLOAT32 &&
        (dt == CT_DT_FLOAT16 || dt == CT_DT_BFLOAT16)) {
      out_dt = got;
      continue;
    }
    if (r == CT_ROLE_DATA && got != dt)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s.dtype=%s differs from %s.dtype=%s%s", fn, n.name[i], dtype_name(got),
                  n.name[0], dtype_name(dt),
                  op == CT_OP_MATMUL && i == n.count - 1 ? " (matmul's out: a's dtype, or float32 for float16/bfloat16 a)"
                                                         : "");
    if ((r == CT_ROLE_STAT || r == CT_ROLE_PARAM) && got != CT_DT_FLOAT32)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s.dtype=%s but statistics, scale and shift are float32 for every data dtype",
                  fn, n.name[i], dtype_name(got));
    if (r == CT_ROLE_BIAS && got != dt && got != CT_DT_FLOAT32)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s.dtype=%s but a bias has the data dtype (%s) or float32", fn, n.name[i],
                  dtype_name(got), dtype_name(dt));
    if (r == CT_ROLE_INDEX && got != CT_DT_INT64)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s.dtype=%s but max-pool indices are int64", fn, n.name[i], dtype_name(got));
  }
  if (!(def->dtypes & (1u << dt)))
    return fail(CT_ERR_UNSUPPORTED, "%s: %s is not defined for %s: %s", fn, def->name, dtype_name(dt), def->dtype_rule);
  {
    const CTSupportQuery q = {sizeof(CTSupportQuery), op, fn, CT_KIND_NN, dt, out_dt, c->device_id};
    if (CTStatus s = find_kernels(backend, q, kern)) {
      // A plugin op unloaded since the check above took its kernel table with it.
      return def->owner && !op_def(op) ? no_op(fn, op) : s;
    }
    c->owner = owner_of(backend, *kern);
  }
  // shapes, by the op's shape rule
  if (CTStatus s = check_shapes(fn, c, n)) return s;
  // outputs: a layout that can be written, apart from every other tensor
  for (int i = n.inputs; i < num; ++i) {
    if (!t[i]) continue;
    if (CTStatus s2 = check_output_layout(fn, n.name[i], t[i])) return s2;
    if (!data) continue;
    for (int j = 0; j < num; ++j) {
      if (j == i || !t[j] || !ranges_meet(f[i], f[j])) continue;
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s (bytes [%p, %p)) overlaps %s (bytes [%p, %p)); NN ops do not run in place",
                  fn, n.name[i], (void*)f[i].lo, (void*)f[i].hi, n.name[j], (void*)f[j].lo, (void*)f[j].hi);
    }
  }
  // The stream is the device's to judge; what distinguishes plans for it
  // (the CPU: its thread count) is the kernels' to say.
  if (CTStatus s2 = check_stream(backend, fn, c->device_id, stream)) return s2;
  c->variant = 0;
  if ((*kern)->nn_variant)
    if (CTStatus s2 = (*kern)->nn_variant(fn, c->device_id, stream, &c->variant))
      return s2;
  return CT_OK;
}

}  // namespace ct
