// nn.cc — category 3: NN ops with a workspace query, plans and the plan
// cache. Core validates the call (descriptor, shapes, dtypes, layouts), then
// the backend builds a plan for that call shape once; direct calls find it
// in a thread-safe LRU cache keyed by everything the plan depends on.
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/debug.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "core/registry.h"
#include "core/validate.h"

struct CTPlan {
  const CTBackend* backend = nullptr;
  void* impl = nullptr;  // nullptr when every output is empty: nothing to run
  bool k_zero = false;   // a matmul with K = 0: out = act(bias or 0), no backend plan
  CTNNCall call;         // descriptors; t[] point into sig below
  size_t workspace = 0;
  struct Sig {
    bool present;
    CTensor view;
    int64_t shape[CT_MAX_NDIM];
    int64_t strides[CT_MAX_NDIM];
  } sig[8];
  ~CTPlan() {
    if (impl) backend->nn_plan_destroy(impl);
  }
};

namespace ct {
namespace {

constexpr int kMaxTensors = 8;
using Shape = char[24 * CT_MAX_NDIM + 4];

struct Names {
  int32_t count = 0, inputs = 0;
  char buf[96];
  const char* name[kMaxTensors];
  bool optional[kMaxTensors];
};
// Filled in place: name[] points into buf.
void parse_names(int32_t op, Names* out) {
  Names& n = *out;
  std::snprintf(n.buf, sizeof n.buf, "%s", nn_tensor_names(op, &n.count, &n.inputs));
  char* p = n.buf;
  for (int i = 0; i < n.count; ++i) {
    n.name[i] = p;
    char* e = std::strchr(p, ',');
    if (e) *e = '\0';
    const size_t len = std::strlen(p);
    n.optional[i] = len && p[len - 1] == '?';
    if (n.optional[i]) p[len - 1] = '\0';
    p = e ? e + 1 : p + len;
  }
}
// Parsed once per op.
const Names& names_of(int32_t op) {
  static const struct Table {
    Names n[CT_OP_END_ - CT_OP_MATMUL];
    Table() {
      for (int32_t op = CT_OP_MATMUL; op < CT_OP_END_; ++op) parse_names(op, &n[op - CT_OP_MATMUL]);
    }
  } table;
  return table.n[op - CT_OP_MATMUL];
}

enum Role { DATA, STAT, BIAS, INDEX };
Role role_of(const char* name) {
  static const char* const stats[] = {"mean", "var", "invstd", "rstd", "scale", "shift", "dscale", "dshift"};
  for (const char* s : stats)
    if (std::strcmp(name, s) == 0) return STAT;
  if (std::strcmp(name, "bias") == 0 || std::strcmp(name, "dbias") == 0) return BIAS;
  if (std::strcmp(name, "indices") == 0) return INDEX;
  return DATA;
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
// (dil >= 1 and k >= 1 are already known). dil_name and k_name are printed
// with index i, e.g. "desc->dilation[0]" and "w.shape[2]".
CTStatus dilated_extent(const char* fn, const char* dil_name, int64_t dil, const char* k_name, int64_t k, int i,
                        int64_t* out) {
  int64_t e;
  if (__builtin_mul_overflow(dil, k - 1, &e) || __builtin_add_overflow(e, (int64_t)1, &e))
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: %s[%d]=%" PRId64 " and %s=%" PRId64 ": the dilated window (dilation * (size - 1) + 1) overflows int64",
                fn, dil_name, i, dil, k_name, k);
  *out = e;
  return CT_OK;
}

CTStatus load_op_desc(const char* fn, int32_t op, const void* desc, CTNNCall* c) {
  switch (op) {
    case CT_OP_MATMUL: {
      if (CTStatus s = load_desc(fn, desc, &c->matmul)) return s;
      return check_activation(fn, c->matmul.activation);
    }
    case CT_OP_CONV2D:
    case CT_OP_CONV2D_BACKWARD_DATA:
    case CT_OP_CONV2D_BACKWARD_WEIGHT: {
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
    case CT_OP_MAX_POOL2D:
    case CT_OP_MAX_POOL2D_BACKWARD:
    case CT_OP_AVG_POOL2D:
    case CT_OP_AVG_POOL2D_BACKWARD: {
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
        int64_t extent = 0;
        static const char* const kn[2] = {"desc->kernel[0]", "desc->kernel[1]"};
        if (CTStatus s = dilated_extent(fn, "desc->dilation", d.dilation[i], kn[i], d.kernel[i], i, &extent)) return s;
        if (d.pad_begin[i] >= extent || d.pad_end[i] >= extent)
          return fail(CT_ERR_INVALID_ARGUMENT,
                      "%s: desc->pad_begin[%d]=%" PRId64 " and pad_end[%d]=%" PRId64 " must be smaller than the window (%" PRId64
                      "): a window of padding only has no value",
                      fn, i, d.pad_begin[i], i, d.pad_end[i], extent);
      }
      d.count_include_pad = d.count_include_pad != 0;
      return CT_OK;
    }
    case CT_OP_BATCH_NORM:
    case CT_OP_BATCH_NORM_TRAINING:
    case CT_OP_BATCH_NORM_BACKWARD: {
      if (CTStatus s = load_desc(fn, desc, &c->bn)) return s;
      c->bn.reserved = 0;
      return check_epsilon(fn, c->bn.epsilon);
    }
    default: {
      if (CTStatus s = load_desc(fn, desc, &c->ln)) return s;
      if (c->ln.normalized_ndim < 0)
        return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->normalized_ndim=%d is negative", fn, c->ln.normalized_ndim);
      if (c->ln.normalized_ndim == 0) c->ln.normalized_ndim = 1;
      return check_epsilon(fn, c->ln.epsilon);
    }
  }
}

// ---- shapes -----------------------------------------------------------------

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
  const int64_t span = sum - ext;  // both >= 0: no overflow
  *out = span < 0 ? 0 : span / stride + 1;  // ext >= 1, so span < INT64_MAX and the + 1 fits
  return CT_OK;
}

CTStatus check_matmul(const char* fn, const CTNNCall* c, const Names& n) {
  const CTensor *a = c->t[0], *b = c->t[1], *bias = c->t[2], *o = c->t[3];
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
  if (CTStatus s = want_shape(fn, n.name[3], o, nd, want, "a @ b")) return s;
  if (bias) {
    bool ok = bias->ndim <= nd;
    for (int32_t i = 0; ok && i < bias->ndim; ++i) {
      const int64_t e = bias->shape[i], w = want[nd - bias->ndim + i];
      ok = e == w || e == 1;
    }
    if (!ok) {
      Shape sc, so;
      return fail(CT_ERR_SHAPE_MISMATCH, "%s: bias.shape=%s does not broadcast to out.shape=%s", fn,
                  format_shape(sc, sizeof sc, bias->ndim, bias->shape), format_shape(so, sizeof so, nd, want));
    }
  }
  return CT_OK;
}

CTStatus check_conv(const char* fn, const CTNNCall* c, const Names& n) {
  const CTConv2dDesc& d = c->conv;
  // The roles: x (N,C,H,W), w (K,C/g,R,S), y (N,K,P,Q), whichever is given.
  int ix, iw, iy;
  switch (c->op) {
    case CT_OP_CONV2D: ix = 0, iw = 1, iy = 3; break;
    case CT_OP_CONV2D_BACKWARD_DATA: iy = 0, iw = 1, ix = 2; break;
    default: ix = 0, iy = 1, iw = 2; break;
  }
  const char* four = "conv2d takes 4-d (N, C, H, W) data and (K, C/groups, R, S) weights";
  for (int i : {ix, iw, iy})
    if (CTStatus s = want_ndim(fn, n.name[i], c->t[i], 4, 4, four)) return s;
  const CTensor *x = c->t[ix], *w = c->t[iw];
  const int64_t N = x->shape[0], C = x->shape[1], K = w->shape[0], g = d.groups;
  if (C % g != 0 || K % g != 0)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc->groups=%d must divide the channels C=%" PRId64 " (%s.shape[1]) and K=%" PRId64
                " (%s.shape[0])", fn, d.groups, C, n.name[ix], K, n.name[iw]);
  if (w->shape[1] != C / g) {
    Shape sw;
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s but C/groups = %" PRId64 "/%d = %" PRId64 " input channels per group",
                fn, n.name[iw], format_shape(sw, sizeof sw, 4, w->shape), C, d.groups, C / g);
  }
  if (w->shape[2] < 1 || w->shape[3] < 1) {
    Shape sw;
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s has an empty kernel", fn, n.name[iw], format_shape(sw, sizeof sw, 4, w->shape));
  }
  // The dilated kernel and the output extents, in checked arithmetic.
  static const char* const wn[2][2] = {{"w.shape[2]", "w.shape[3]"}, {"dw.shape[2]", "dw.shape[3]"}};
  int64_t ext[2], PQ[2];
  for (int i = 0; i < 2; ++i) {
    if (CTStatus s = dilated_extent(fn, "desc->dilation", d.dilation[i], wn[iw == 2][i], w->shape[2 + i], i, &ext[i]))
      return s;
    if (CTStatus s = out_extent(fn, n.name[ix], i, x->shape[2 + i], d.pad_begin[i], d.pad_end[i], ext[i], d.stride[i],
                                &PQ[i]))
      return s;
  }
  const int64_t P = PQ[0], Q = PQ[1];
  if (P < 1 || Q < 1) {
    Shape sx;
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s is smaller than the dilated kernel (%" PRId64 "x%" PRId64 ") with this padding",
                fn, n.name[ix], format_shape(sx, sizeof sx, 4, x->shape), ext[0], ext[1]);
  }
  const int64_t want[4] = {N, K, P, Q};
  char why[64];
  std::snprintf(why, sizeof why, "conv2d of %s and %s", n.name[ix], n.name[iw]);
  if (CTStatus s = want_shape(fn, n.name[iy], c->t[iy], 4, want, why)) return s;
  const int ib = c->op == CT_OP_CONV2D ? 2 : c->op == CT_OP_CONV2D_BACKWARD_WEIGHT ? 3 : -1;
  if (ib >= 0 && c->t[ib]) {
    const int64_t kb[1] = {K};
    if (CTStatus s = want_shape(fn, n.name[ib], c->t[ib], 1, kb, "one value per output channel")) return s;
  }
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

CTStatus check_pool(const char* fn, const CTNNCall* c, const Names& n) {
  const CTPool2dDesc& d = c->pool;
  const bool fwd = c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_AVG_POOL2D;
  const int ix = fwd ? 0 : n.count - 1, iy = fwd ? 1 : 0;
  const int ii = c->op == CT_OP_MAX_POOL2D ? 2 : c->op == CT_OP_MAX_POOL2D_BACKWARD ? 1 : -1;
  const char* four = "pooling takes 4-d (N, C, H, W) tensors";
  if (CTStatus s = want_ndim(fn, n.name[ix], c->t[ix], 4, 4, four)) return s;
  const CTensor* x = c->t[ix];
  int64_t ext[2], PQ[2];
  for (int i = 0; i < 2; ++i) {
    ext[i] = d.dilation[i] * (d.kernel[i] - 1) + 1;  // load_op_desc checked it fits
    if (CTStatus s = out_extent(fn, n.name[ix], i, x->shape[2 + i], d.pad_begin[i], d.pad_end[i], ext[i], d.stride[i],
                                &PQ[i]))
      return s;
  }
  const int64_t P = PQ[0], Q = PQ[1];
  if (P < 1 || Q < 1) {
    Shape sx;
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s is smaller than the window (%" PRId64 "x%" PRId64 ") with this padding", fn,
                n.name[ix], format_shape(sx, sizeof sx, 4, x->shape), ext[0], ext[1]);
  }
  // A window wholly in the padding has no value (max of nothing; an average
  // without the padding divides by 0): refused whatever N and C are. With a
  // dilation, a window can also straddle a short x without a tap inside it.
  for (int i = 0; i < 2; ++i) {
    const int64_t H = x->shape[2 + i], p = first_padding_window(H, d.pad_begin[i], d.stride[i], d.dilation[i], PQ[i]);
    if (p < 0) continue;
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: output %s %" PRId64 " (of %" PRId64 ") has its whole window in the padding: desc->kernel[%d]=%" PRId64
                ", stride[%d]=%" PRId64 ", dilation[%d]=%" PRId64 ", pad_begin[%d]=%" PRId64 ", pad_end[%d]=%" PRId64
                " put its taps at %" PRId64 " + %" PRId64 "*j (j < %" PRId64 "), none in [0, %" PRId64 ") of %s.shape[%d]=%" PRId64
                "; a window of padding only has no value",
                fn, i == 0 ? "row" : "column", p, PQ[i], i, d.kernel[i], i, d.stride[i], i, d.dilation[i], i, d.pad_begin[i],
                i, d.pad_end[i], p * d.stride[i] - d.pad_begin[i], d.dilation[i], d.kernel[i], H, n.name[ix], 2 + i, H);
  }
  const int64_t want[4] = {x->shape[0], x->shape[1], P, Q};
  char why[64];
  std::snprintf(why, sizeof why, "pooling %s", n.name[ix]);
  if (CTStatus s = want_shape(fn, n.name[iy], c->t[iy], 4, want, why)) return s;
  if (ii >= 0 && c->t[ii])
    if (CTStatus s = want_shape(fn, n.name[ii], c->t[ii], 4, want, why)) return s;
  return CT_OK;
}

CTStatus check_norm(const char* fn, const CTNNCall* c, const Names& n) {
  const bool ln = c->op == CT_OP_LAYER_NORM || c->op == CT_OP_LAYER_NORM_BACKWARD;
  const CTensor* x = c->t[0];
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
    const CTensor* t = c->t[i];
    if (!t) continue;
    const char* nm = n.name[i];
    if (role_of(nm) == DATA) {
      if (CTStatus s = check_same_shape(fn, n.name[0], x, nm, t)) return s;
      continue;
    }
    const bool per_row = std::strcmp(nm, "mean") == 0 || std::strcmp(nm, "var") == 0 || std::strcmp(nm, "invstd") == 0 ||
                         std::strcmp(nm, "rstd") == 0;
    const int32_t nd = per_row ? stat_nd : ch_nd;
    const int64_t* want = per_row ? stat_shape : ch_shape;
    if (ln && per_row && t->ndim == x->ndim) {  // the keep-dims form: (..., 1, ..., 1)
      int64_t keep[CT_MAX_NDIM];
      for (int32_t j = 0; j < x->ndim; ++j) keep[j] = j < stat_nd ? stat_shape[j] : 1;
      if (CTStatus s = want_shape(fn, nm, t, x->ndim, keep, "layer_norm's statistics")) return s;
      continue;
    }
    if (CTStatus s = want_shape(fn, nm, t, nd, want,
                                ln ? (per_row ? "layer_norm's statistics (x's shape without the normalized axes)"
                                              : "layer_norm (the normalized axes of x)")
                                   : "batch_norm (one value per channel, x.shape[1])"))
      return s;
  }
  return CT_OK;
}

bool same_device(CTDevice a, CTDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; }

int32_t default_threads_of(const CTBackend* b) {
  static int32_t n = [b] {
    CTDeviceInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    return b->device_info(0, &info) == CT_OK && info.default_threads > 0 ? info.default_threads : 1;
  }();
  return n;
}

// Everything about a call except the data: the tensors' facts, the
// descriptor, the backend. With data = false, data pointers are not read.
CTStatus validate(const char* fn, int32_t op, const void* desc, const CTensor* const* t, int32_t num, void* stream,
                  bool data, CTNNCall* c, const CTBackend** backend) {
  const OpDef* def = op_def(op);
  if (!def || def->kind != CT_KIND_NN)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op=%d is not an NN op (CT_OP_MATMUL..%d)", fn, op, CT_OP_END_ - 1);
  const Names& n = names_of(op);
  if (num != n.count)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s takes %d tensors (%s), got num_tensors=%d", fn, def->name, n.count,
                nn_tensor_names(op, &c->num_tensors, &c->dt), num);
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
      v.data = reinterpret_cast<void*>(uintptr_t(4096));
      v.byte_offset = 0;
      if (CTStatus s = check_tensor(fn, n.name[i], &v, &f[i])) return s;
    }
    c->t[i] = t[i];
  }
  for (int i = 1; i < num; ++i)
    if (t[i] && !same_device(t[i]->device, t[0]->device))
      return fail(CT_ERR_DEVICE_MISMATCH, "%s: %s.device=(%d,%d) differs from %s.device=(%d,%d)", fn, n.name[i],
                  t[i]->device.device_type, t[i]->device.device_id, n.name[0], t[0]->device.device_type,
                  t[0]->device.device_id);
  if (CTStatus s = check_device(fn, n.name[0], t[0]->device, backend)) return s;
  // dtypes
  const int32_t dt = f[0].dt;
  c->dt = dt;
  for (int i = 1; i < num; ++i) {
    if (!t[i]) continue;
    const Role r = role_of(n.name[i]);
    const int32_t got = f[i].dt;
    if (r == DATA && got != dt)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s.dtype=%s differs from %s.dtype=%s", fn, n.name[i], dtype_name(got),
                  n.name[0], dtype_name(dt));
    if (r == STAT && got != CT_DT_FLOAT32)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s.dtype=%s but statistics, scale and shift are float32 for every data dtype",
                  fn, n.name[i], dtype_name(got));
    if (r == BIAS && got != dt && got != CT_DT_FLOAT32)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s.dtype=%s but a bias has the data dtype (%s) or float32", fn, n.name[i],
                  dtype_name(got), dtype_name(dt));
    if (r == INDEX && got != CT_DT_INT64)
      return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s.dtype=%s but max-pool indices are int64", fn, n.name[i], dtype_name(got));
  }
  if (!(def->dtypes & (1u << dt)))
    return fail(CT_ERR_UNSUPPORTED, "%s: %s is not defined for %s: %s", fn, def->name, dtype_name(dt), def->dtype_rule);
  if (!((*backend)->dtypes[op] & (1u << dt)) || !(*backend)->nn_supported)
    return fail(CT_ERR_UNSUPPORTED, "%s: the %s backend has no %s kernel for %s", fn, (*backend)->name, def->name,
                dtype_name(dt));
  if (CTStatus s = (*backend)->nn_supported(fn, op, dt)) return s;
  // shapes
  CTStatus s;
  switch (op) {
    case CT_OP_MATMUL: s = check_matmul(fn, c, n); break;
    case CT_OP_CONV2D:
    case CT_OP_CONV2D_BACKWARD_DATA:
    case CT_OP_CONV2D_BACKWARD_WEIGHT: s = check_conv(fn, c, n); break;
    case CT_OP_MAX_POOL2D:
    case CT_OP_MAX_POOL2D_BACKWARD:
    case CT_OP_AVG_POOL2D:
    case CT_OP_AVG_POOL2D_BACKWARD: s = check_pool(fn, c, n); break;
    default: s = check_norm(fn, c, n); break;
  }
  if (s) return s;
  // outputs: a layout that can be written, apart from every other tensor
  for (int i = n.inputs; i < num; ++i) {
    if (!t[i]) continue;
    if (CTStatus s2 = check_output_layout(fn, n.name[i], t[i])) return s2;
    if (!data) continue;
    for (int j = 0; j < num; ++j) {
      if (j == i || !t[j] || f[i].numel == 0 || f[j].numel == 0) continue;
      if (f[i].hi <= f[j].lo || f[j].hi <= f[i].lo) continue;
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s (bytes [%p, %p)) overlaps %s (bytes [%p, %p)); NN ops do not run in place",
                  fn, n.name[i], (void*)f[i].lo, (void*)f[i].hi, n.name[j], (void*)f[j].lo, (void*)f[j].hi);
    }
  }
  // threads
  CTCpuStream copy;
  const CTCpuStream* st = static_cast<const CTCpuStream*>(stream);
  if (st) {
    if (st->struct_size < offsetof(CTCpuStream, parallel_for) || st->struct_size > 4096)
      return fail(CT_ERR_INVALID_ARGUMENT,
                  "%s: stream->struct_size=%u is not that of a CTCpuStream (%zu): a CPU op's stream must be NULL or a CTCpuStream*",
                  fn, st->struct_size, sizeof(CTCpuStream));
    std::memset(&copy, 0, sizeof copy);
    std::memcpy(&copy, st, st->struct_size < sizeof copy ? st->struct_size : sizeof copy);
  }
  // The workspace queries take no stream and answer for the default thread
  // count, which is therefore also the most a call uses (scratch grows with
  // threads): a stream may ask for fewer.
  const int32_t dflt = default_threads_of(*backend);
  c->num_threads = st && copy.num_threads > 0 && copy.num_threads < dflt ? copy.num_threads : dflt;
  return CT_OK;
}

// Nothing to compute when every output is empty: the call succeeds at once.
// A matmul with K = 0 sums nothing: out = act(bias) or act(0), through the
// library's own ct_cast and ct_unary (k_zero_matmul below). Any other empty
// input with a non-empty output goes to the backend's plan, which writes
// what PyTorch gives there (a sum over nothing is 0; see SEMANTICS.md): core
// never writes device memory itself.
CTStatus empty_case(const char* fn, const CTNNCall* c, bool* all_empty, bool* k_zero) {
  (void)fn;
  const Names& n = names_of(c->op);
  bool any_in = false, all_out = true;
  for (int i = 0; i < n.count; ++i) {
    if (!c->t[i]) continue;
    bool e = false;  // a zero extent (a product of the extents could overflow int64 first)
    for (int32_t d = 0; d < c->t[i]->ndim; ++d) e = e || c->t[i]->shape[d] == 0;
    if (i < n.inputs) any_in = any_in || e;
    else all_out = all_out && e;
  }
  *all_empty = all_out;
  *k_zero = c->op == CT_OP_MATMUL && any_in && !all_out;
  return CT_OK;
}

// ---- plans and the cache ----------------------------------------------------

std::atomic<int64_t> g_primitives{0}, g_hits{0}, g_misses{0};

CTStatus make_plan(const CTNNCall& c, const CTBackend* b, std::unique_ptr<CTPlan>* out) {
  std::unique_ptr<CTPlan> p(new CTPlan);
  p->backend = b;
  p->call = c;
  for (int i = 0; i < kMaxTensors; ++i) {
    CTPlan::Sig& s = p->sig[i];
    s.present = i < c.num_tensors && c.t[i];
    p->call.t[i] = nullptr;
    if (!s.present) continue;
    const CTensor* t = c.t[i];
    s.view = *t;
    s.view.data = nullptr;
    s.view.byte_offset = 0;
    for (int32_t d = 0; d < t->ndim; ++d) {
      s.shape[d] = t->shape[d];
      s.strides[d] = ct_stride_of(t, d);
    }
    s.view.shape = s.shape;
    s.view.strides = s.strides;
    p->call.t[i] = &s.view;
  }
  bool empty = false;
  if (CTStatus s = empty_case(c.fn, &p->call, &empty, &p->k_zero)) return s;
  if (!empty && !p->k_zero) {
    int64_t prims = 0;
    CTStatus s = b->nn_plan_create(&p->call, &p->impl, &p->workspace, &prims);
    g_primitives += prims;
    if (s) return s;
  }
  *out = std::move(p);
  return CT_OK;
}

// The cache key: everything a plan depends on, as bytes.
void append(std::string* k, const void* p, size_t n) { k->append(static_cast<const char*>(p), n); }
void make_key(const CTNNCall& c, std::string* k) {
  k->clear();
  append(k, &c.op, sizeof c.op);
  append(k, &c.num_threads, sizeof c.num_threads);
  switch (c.op) {
    case CT_OP_MATMUL: append(k, &c.matmul, sizeof c.matmul); break;
    case CT_OP_CONV2D:
    case CT_OP_CONV2D_BACKWARD_DATA:
    case CT_OP_CONV2D_BACKWARD_WEIGHT: append(k, &c.conv, sizeof c.conv); break;
    case CT_OP_MAX_POOL2D:
    case CT_OP_MAX_POOL2D_BACKWARD:
    case CT_OP_AVG_POOL2D:
    case CT_OP_AVG_POOL2D_BACKWARD: append(k, &c.pool, sizeof c.pool); break;
    case CT_OP_BATCH_NORM:
    case CT_OP_BATCH_NORM_TRAINING:
    case CT_OP_BATCH_NORM_BACKWARD: append(k, &c.bn, sizeof c.bn); break;
    default: append(k, &c.ln, sizeof c.ln); break;
  }
  for (int i = 0; i < c.num_tensors; ++i) {
    const CTensor* t = c.t[i];
    const int32_t nd = t ? t->ndim : -1;
    append(k, &nd, sizeof nd);
    if (!t) continue;
    append(k, &t->dtype, sizeof t->dtype);
    append(k, &t->device, sizeof t->device);
    for (int32_t d = 0; d < t->ndim; ++d) {
      const int64_t v[2] = {t->shape[d], ct_stride_of(t, d)};
      append(k, v, sizeof v);
    }
  }
}

class PlanCache {
 public:
  std::shared_ptr<CTPlan> find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return it->second.first;
  }
  std::shared_ptr<CTPlan> insert(const std::string& key, std::shared_ptr<CTPlan> p) {
    std::lock_guard<std::mutex> lock(mu_);
    if (capacity_ == 0) return p;
    auto it = map_.find(key);
    if (it != map_.end()) return it->second.first;  // another thread made it first
    lru_.push_front(key);
    map_.emplace(key, std::make_pair(p, lru_.begin()));
    evict();
    return p;
  }
  void set_capacity(int64_t c) {
    std::lock_guard<std::mutex> lock(mu_);
    capacity_ = c;
    evict();
  }
  void info(int64_t* entries, int64_t* capacity) {
    std::lock_guard<std::mutex> lock(mu_);
    *entries = (int64_t)map_.size();
    *capacity = capacity_;
  }

 private:
  void evict() {
    while ((int64_t)map_.size() > capacity_) {
      map_.erase(lru_.back());
      lru_.pop_back();
    }
  }
  std::mutex mu_;
  int64_t capacity_ = 1024;
  std::list<std::string> lru_;
  std::unordered_map<std::string, std::pair<std::shared_ptr<CTPlan>, std::list<std::string>::iterator>> map_;
};

PlanCache& cache() {
  static PlanCache* c = new PlanCache;  // never destroyed: plans may be in use at exit
  return *c;
}

CTStatus cached_plan(const CTNNCall& c, const CTBackend* b, std::shared_ptr<CTPlan>* out) {
  thread_local std::string key;
  make_key(c, &key);
  if ((*out = cache().find(key))) {
    ++g_hits;
    return CT_OK;
  }
  ++g_misses;
  std::unique_ptr<CTPlan> p;
  if (CTStatus s = make_plan(c, b, &p)) return s;
  *out = cache().insert(key, std::shared_ptr<CTPlan>(std::move(p)));
  return CT_OK;
}

// out = act(bias broadcast to out), or act(0), through the library's own
// elementwise ops: a cast from a stride-0 view, then the activation in place.
CTStatus k_zero_matmul(const CTPlan* p, const CTensor* const* t) {
  const CTensor* bias = t[2];
  CTensor* out = const_cast<CTensor*>(t[3]);
  const int32_t nd = out->ndim;
  int64_t strides[CT_MAX_NDIM] = {0};
  uint64_t zero = 0;
  CTensor src = *out;
  src.byte_offset = 0;
  src.strides = strides;
  if (bias) {
    src.data = static_cast<char*>(bias->data) + bias->byte_offset;
    src.dtype = bias->dtype;
    for (int32_t i = 0; i < nd; ++i) {
      const int32_t j = i - (nd - bias->ndim);
      strides[i] = j < 0 || bias->shape[j] == 1 ? 0 : ct_stride_of(bias, j);
    }
  } else {
    src.data = &zero;
  }
  if (CTStatus s = ct_cast(&src, out, nullptr)) return s;
  static const int32_t act_op[] = {-1, CT_OP_RELU, CT_OP_GELU, CT_OP_GELU_TANH, CT_OP_SIGMOID, CT_OP_TANH};
  const int32_t a = p->call.matmul.activation;
  return a == CT_ACTIVATION_NONE ? CT_OK : ct_unary(act_op[a], out, out, nullptr);
}

CTStatus run_plan(const char* fn, const CTPlan* p, const CTensor* const* t, void* ws, size_t ws_bytes) {
  if (ws_bytes < p->workspace || (p->workspace && !ws))
    return fail(CT_ERR_WORKSPACE_TOO_SMALL, "%s: %s needs a workspace of %zu bytes, got %zu bytes at %p (ask %s_workspace_size)",
                fn, op_def(p->call.op)->name, p->workspace, ws ? ws_bytes : (size_t)0, ws, fn);
  if (p->k_zero) return k_zero_matmul(p, t);
  if (!p->impl) return CT_OK;
  return p->backend->nn_plan_execute(p->impl, fn, t, ws, ws_bytes);
}

CTStatus nn_direct(const char* fn, int32_t op, const void* desc, const CTensor* const* t, int32_t num, void* ws,
                   size_t ws_bytes, void* stream) {
  CTNNCall c;
  const CTBackend* b = nullptr;
  if (CTStatus s = validate(fn, op, desc, t, num, stream, true, &c, &b)) return s;
  std::shared_ptr<CTPlan> p;
  if (CTStatus s = cached_plan(c, b, &p)) return s;
  return run_plan(fn, p.get(), t, ws, ws_bytes);
}

CTStatus nn_query(const char* fn, int32_t op, const void* desc, const CTensor* const* t, int32_t num, size_t* bytes) {
  if (!bytes) return fail(CT_ERR_INVALID_ARGUMENT, "%s: bytes is NULL", fn);
  CTNNCall c;
  const CTBackend* b = nullptr;
  if (CTStatus s = validate(fn, op, desc, t, num, nullptr, false, &c, &b)) return s;
  std::shared_ptr<CTPlan> p;
  if (CTStatus s = cached_plan(c, b, &p)) return s;
  *bytes = p->workspace;
  return CT_OK;
}

}  // namespace
}  // namespace ct

extern "C" {

// The two entry points of every NN op differ only in their tensor arguments.
#define CT_NN_QUERY(op, ...)                                                           \
  CT_API_BEGIN(__func__)                                                               \
  const CTensor* t[] = {__VA_ARGS__};                                                  \
  return ct::nn_query(__func__, op, desc, t, (int32_t)(sizeof t / sizeof t[0]), bytes); \
  CT_API_END()
#define CT_NN_RUN(op, ...)                                                                 \
  CT_API_BEGIN(__func__)                                                                   \
  const CTensor* t[] = {__VA_ARGS__};                                                      \
  return ct::debug_perturb_nn(op, t, (int32_t)(sizeof t / sizeof t[0]),                    \
                              ct::nn_direct(__func__, op, desc, t, (int32_t)(sizeof t / sizeof t[0]), \
                                            workspace, workspace_bytes, stream));            \
  CT_API_END()

CT_API CTStatus ct_matmul_workspace_size(const CTMatmulDesc* desc, const CTensor* a, const CTensor* b,
                                         const CTensor* bias, const CTensor* out, size_t* bytes) {
  CT_NN_QUERY(CT_OP_MATMUL, a, b, bias, out)
}
CT_API CTStatus ct_matmul(const CTMatmulDesc* desc, const CTensor* a, const CTensor* b, const CTensor* bias,
                          CTensor* out, void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_MATMUL, a, b, bias, out)
}

CT_API CTStatus ct_conv2d_workspace_size(const CTConv2dDesc* desc, const CTensor* x, const CTensor* w,
                                         const CTensor* bias, const CTensor* y, size_t* bytes) {
  CT_NN_QUERY(CT_OP_CONV2D, x, w, bias, y)
}
CT_API CTStatus ct_conv2d(const CTConv2dDesc* desc, const CTensor* x, const CTensor* w, const CTensor* bias,
                          CTensor* y, void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_CONV2D, x, w, bias, y)
}

CT_API CTStatus ct_conv2d_backward_data_workspace_size(const CTConv2dDesc* desc, const CTensor* dy,
                                                       const CTensor* w, const CTensor* dx, size_t* bytes) {
  CT_NN_QUERY(CT_OP_CONV2D_BACKWARD_DATA, dy, w, dx)
}
CT_API CTStatus ct_conv2d_backward_data(const CTConv2dDesc* desc, const CTensor* dy, const CTensor* w,
                                        CTensor* dx, void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_CONV2D_BACKWARD_DATA, dy, w, dx)
}

CT_API CTStatus ct_conv2d_backward_weight_workspace_size(const CTConv2dDesc* desc, const CTensor* x,
                                                         const CTensor* dy, const CTensor* dw,
                                                         const CTensor* dbias, size_t* bytes) {
  CT_NN_QUERY(CT_OP_CONV2D_BACKWARD_WEIGHT, x, dy, dw, dbias)
}
CT_API CTStatus ct_conv2d_backward_weight(const CTConv2dDesc* desc, const CTensor* x, const CTensor* dy,
                                          CTensor* dw, CTensor* dbias, void* workspace, size_t workspace_bytes,
                                          void* stream) {
  CT_NN_RUN(CT_OP_CONV2D_BACKWARD_WEIGHT, x, dy, dw, dbias)
}

CT_API CTStatus ct_max_pool2d_workspace_size(const CTPool2dDesc* desc, const CTensor* x, const CTensor* y,
                                             const CTensor* indices, size_t* bytes) {
  CT_NN_QUERY(CT_OP_MAX_POOL2D, x, y, indices)
}
CT_API CTStatus ct_max_pool2d(const CTPool2dDesc* desc, const CTensor* x, CTensor* y, CTensor* indices,
                              void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_MAX_POOL2D, x, y, indices)
}

CT_API CTStatus ct_max_pool2d_backward_workspace_size(const CTPool2dDesc* desc, const CTensor* dy,
                                                      const CTensor* indices, const CTensor* dx, size_t* bytes) {
  CT_NN_QUERY(CT_OP_MAX_POOL2D_BACKWARD, dy, indices, dx)
}
CT_API CTStatus ct_max_pool2d_backward(const CTPool2dDesc* desc, const CTensor* dy, const CTensor* indices,
                                       CTensor* dx, void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_MAX_POOL2D_BACKWARD, dy, indices, dx)
}

CT_API CTStatus ct_avg_pool2d_workspace_size(const CTPool2dDesc* desc, const CTensor* x, const CTensor* y,
                                             size_t* bytes) {
  CT_NN_QUERY(CT_OP_AVG_POOL2D, x, y)
}
CT_API CTStatus ct_avg_pool2d(const CTPool2dDesc* desc, const CTensor* x, CTensor* y, void* workspace,
                              size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_AVG_POOL2D, x, y)
}

CT_API CTStatus ct_avg_pool2d_backward_workspace_size(const CTPool2dDesc* desc, const CTensor* dy,
                                                      const CTensor* dx, size_t* bytes) {
  CT_NN_QUERY(CT_OP_AVG_POOL2D_BACKWARD, dy, dx)
}
CT_API CTStatus ct_avg_pool2d_backward(const CTPool2dDesc* desc, const CTensor* dy, CTensor* dx, void* workspace,
                                       size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_AVG_POOL2D_BACKWARD, dy, dx)
}

CT_API CTStatus ct_batch_norm_workspace_size(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* mean,
                                             const CTensor* var, const CTensor* scale, const CTensor* shift,
                                             const CTensor* y, size_t* bytes) {
  CT_NN_QUERY(CT_OP_BATCH_NORM, x, mean, var, scale, shift, y)
}
CT_API CTStatus ct_batch_norm(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* mean,
                              const CTensor* var, const CTensor* scale, const CTensor* shift, CTensor* y,
                              void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_BATCH_NORM, x, mean, var, scale, shift, y)
}

CT_API CTStatus ct_batch_norm_training_workspace_size(const CTBatchNormDesc* desc, const CTensor* x,
                                                      const CTensor* scale, const CTensor* shift,
                                                      const CTensor* y, const CTensor* mean,
                                                      const CTensor* invstd, size_t* bytes) {
  CT_NN_QUERY(CT_OP_BATCH_NORM_TRAINING, x, scale, shift, y, mean, invstd)
}
CT_API CTStatus ct_batch_norm_training(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* scale,
                                       const CTensor* shift, CTensor* y, CTensor* mean, CTensor* invstd,
                                       void* workspace, size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_BATCH_NORM_TRAINING, x, scale, shift, y, mean, invstd)
}

CT_API CTStatus ct_batch_norm_backward_workspace_size(const CTBatchNormDesc* desc, const CTensor* x,
                                                      const CTensor* dy, const CTensor* mean,
                                                      const CTensor* invstd, const CTensor* scale,
                                                      const CTensor* dx, const CTensor* dscale,
                                                      const CTensor* dshift, size_t* bytes) {
  CT_NN_QUERY(CT_OP_BATCH_NORM_BACKWARD, x, dy, mean, invstd, scale, dx, dscale, dshift)
}
CT_API CTStatus ct_batch_norm_backward(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* dy,
                                       const CTensor* mean, const CTensor* invstd, const CTensor* scale,
                                       CTensor* dx, CTensor* dscale, CTensor* dshift, void* workspace,
                                       size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_BATCH_NORM_BACKWARD, x, dy, mean, invstd, scale, dx, dscale, dshift)
}

CT_API CTStatus ct_layer_norm_workspace_size(const CTLayerNormDesc* desc, const CTensor* x, const CTensor* scale,
                                             const CTensor* shift, const CTensor* y, const CTensor* mean,
                                             const CTensor* rstd, size_t* bytes) {
  CT_NN_QUERY(CT_OP_LAYER_NORM, x, scale, shift, y, mean, rstd)
}
CT_API CTStatus ct_layer_norm(const CTLayerNormDesc* desc, const CTensor* x, const CTensor* scale,
                              const CTensor* shift, CTensor* y, CTensor* mean, CTensor* rstd, void* workspace,
                              size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_LAYER_NORM, x, scale, shift, y, mean, rstd)
}

CT_API CTStatus ct_layer_norm_backward_workspace_size(const CTLayerNormDesc* desc, const CTensor* x,
                                                      const CTensor* dy, const CTensor* mean,
                                                      const CTensor* rstd, const CTensor* scale,
                                                      const CTensor* dx, const CTensor* dscale,
                                                      const CTensor* dshift, size_t* bytes) {
  CT_NN_QUERY(CT_OP_LAYER_NORM_BACKWARD, x, dy, mean, rstd, scale, dx, dscale, dshift)
}
CT_API CTStatus ct_layer_norm_backward(const CTLayerNormDesc* desc, const CTensor* x, const CTensor* dy,
                                       const CTensor* mean, const CTensor* rstd, const CTensor* scale,
                                       CTensor* dx, CTensor* dscale, CTensor* dshift, void* workspace,
                                       size_t workspace_bytes, void* stream) {
  CT_NN_RUN(CT_OP_LAYER_NORM_BACKWARD, x, dy, mean, rstd, scale, dx, dscale, dshift)
}

// ---- plans ------------------------------------------------------------------

CT_API CTStatus ct_plan_create(int32_t op, const void* desc, const CTensor* const* tensors, int32_t num_tensors,
                               void* stream, CTPlan** plan) {
  CT_API_BEGIN("ct_plan_create")
  if (!plan) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_create: plan is NULL");
  if (!tensors) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_create: tensors is NULL");
  CTNNCall c;
  const CTBackend* b = nullptr;
  if (CTStatus s = ct::validate(ct_fn_name_, op, desc, tensors, num_tensors, stream, false, &c, &b)) return s;
  std::unique_ptr<CTPlan> p;
  if (CTStatus s = ct::make_plan(c, b, &p)) return s;
  *plan = p.release();
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_plan_workspace_size(const CTPlan* plan, size_t* bytes) {
  CT_API_BEGIN("ct_plan_workspace_size")
  if (!plan) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_workspace_size: plan is NULL");
  if (!bytes) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_workspace_size: bytes is NULL");
  *bytes = plan->workspace;
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_plan_execute(const CTPlan* plan, const CTensor* const* tensors, int32_t num_tensors,
                                void* workspace, size_t workspace_bytes, void* stream) {
  CT_API_BEGIN("ct_plan_execute")
  if (!plan) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_execute: plan is NULL");
  if (!tensors) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_execute: tensors is NULL");
  // The same validation as a direct call (bad data pointers, overlaps), then
  // the layout must be the plan's.
  CTNNCall c;
  const CTBackend* b = nullptr;
  const CTNNCall& pc = plan->call;
  const void* desc = nullptr;
  switch (pc.op) {
    case CT_OP_MATMUL: desc = &pc.matmul; break;
    case CT_OP_CONV2D:
    case CT_OP_CONV2D_BACKWARD_DATA:
    case CT_OP_CONV2D_BACKWARD_WEIGHT: desc = &pc.conv; break;
    case CT_OP_MAX_POOL2D:
    case CT_OP_MAX_POOL2D_BACKWARD:
    case CT_OP_AVG_POOL2D:
    case CT_OP_AVG_POOL2D_BACKWARD: desc = &pc.pool; break;
    case CT_OP_BATCH_NORM:
    case CT_OP_BATCH_NORM_TRAINING:
    case CT_OP_BATCH_NORM_BACKWARD: desc = &pc.bn; break;
    default: desc = &pc.ln; break;
  }
  if (CTStatus s = ct::validate(ct_fn_name_, pc.op, desc, tensors, num_tensors, stream, true, &c, &b)) return s;
  const ct::Names& n = ct::names_of(pc.op);
  for (int i = 0; i < num_tensors; ++i) {
    const CTPlan::Sig& sg = plan->sig[i];
    const CTensor* t = tensors[i];
    if (!t != !sg.present)
      return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_execute: %s is %s but the plan was made %s it", n.name[i],
                      t ? "given" : "NULL", sg.present ? "with" : "without");
    if (!t) continue;
    bool same = t->ndim == sg.view.ndim && t->dtype.code == sg.view.dtype.code && t->dtype.bits == sg.view.dtype.bits &&
                t->device.device_type == sg.view.device.device_type && t->device.device_id == sg.view.device.device_id;
    for (int32_t d = 0; same && d < t->ndim; ++d)
      same = t->shape[d] == sg.shape[d] && (t->shape[d] == 1 || ct_stride_of(t, d) == sg.strides[d]);
    if (!same) {
      ct::Shape a, bb, sa, sb;
      return ct::fail(CT_ERR_SHAPE_MISMATCH,
                      "ct_plan_execute: %s (shape %s, strides %s) differs from the plan's (shape %s, strides %s, same dtype "
                      "and device): make a plan per layout",
                      n.name[i], ct::format_shape(a, sizeof a, t->ndim, t->shape),
                      ct::format_shape(sa, sizeof sa, t->ndim, t->strides ? t->strides : t->shape),
                      ct::format_shape(bb, sizeof bb, sg.view.ndim, sg.shape),
                      ct::format_shape(sb, sizeof sb, sg.view.ndim, sg.strides));
    }
  }
  return ct::run_plan(ct_fn_name_, plan, tensors, workspace, workspace_bytes);
  CT_API_END()
}

CT_API void ct_plan_destroy(CTPlan* plan) { delete plan; }

CT_API CTStatus ct_plan_cache_info(CTPlanCacheInfo* info) {
  CT_API_BEGIN("ct_plan_cache_info")
  if (CTStatus s = ct::check_struct_size("ct_plan_cache_info", "info", info, sizeof(uint32_t))) return s;
  CTPlanCacheInfo full;
  std::memset(&full, 0, sizeof full);
  ct::cache().info(&full.entries, &full.capacity);
  full.hits = ct::g_hits.load();
  full.misses = ct::g_misses.load();
  full.primitives_created = ct::g_primitives.load();
  ct::copy_struct_out(info, full);
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_plan_cache_set_capacity(int64_t capacity) {
  CT_API_BEGIN("ct_plan_cache_set_capacity")
  if (capacity < 0)
    return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_plan_cache_set_capacity: capacity=%" PRId64 " is negative", capacity);
  ct::cache().set_capacity(capacity);
  return CT_OK;
  CT_API_END()
}

}  // extern "C"
