// index.cc — ct_index: take, gather, scatter, scatter_add and index_add.
//
// Core validates the call (shapes by the op's rule, dtypes, devices,
// overlaps, and on host memory every index), writes x into out for the
// scatters, then lowers the op to one of two loops over views of a single
// shape that a kernel table's `index` slot runs (plugin.h, CTIndexCall):
// a gather over out's shape, or a scatter over (lines..., K) with the
// indexed axis last, so that a kernel serialises only along K.
#include <cinttypes>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/api_internal.h"
#include "core/backends.h"
#include "core/error.h"
#include "core/registry.h"
#include "core/validate.h"

namespace ct {
namespace {

// A 0-d tensor is indexed as a 1-d one of one element.
int32_t rank1(const CTensor* t) { return t->ndim > 0 ? t->ndim : 1; }
int64_t extent1(const CTensor* t, int32_t d) { return t->ndim > 0 ? t->shape[d] : 1; }
int64_t stride1(const CTensor* t, int32_t d) { return t->ndim > 0 ? ct_stride_of(t, d) : 0; }

bool is_scatter(int32_t op) { return op != CT_OP_TAKE && op != CT_OP_GATHER; }

CTStatus rank_mismatch(const char* fn, const OpDef* d, const char* a, const CTensor* ta, const char* b,
                       const CTensor* tb) {
  char sa[24 * CT_MAX_NDIM + 4], sb[24 * CT_MAX_NDIM + 4];
  return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s: %s.shape=%s and %s.shape=%s must have the same number of dims", fn,
              d->name, a, format_shape(sa, sizeof sa, ta->ndim, ta->shape), b,
              format_shape(sb, sizeof sb, tb->ndim, tb->shape));
}

CTStatus extent_mismatch(const char* fn, const OpDef* d, const char* a, const CTensor* ta, const char* b,
                         const CTensor* tb, int32_t dim, const char* rule) {
  char sa[24 * CT_MAX_NDIM + 4], sb[24 * CT_MAX_NDIM + 4];
  return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s: %s.shape=%s and %s.shape=%s: dim %d %s", fn, d->name, a,
              format_shape(sa, sizeof sa, ta->ndim, ta->shape), b, format_shape(sb, sizeof sb, tb->ndim, tb->shape),
              dim, rule);
}

// The first index outside [-n, n) in row-major order: its position and value.
template <class I> CTStatus bad_index(const char* fn, const OpDef* d, const CTensor* index, int64_t n, int32_t axis) {
  const int32_t nd = index->ndim;
  const char* base = static_cast<const char*>(index->data) + index->byte_offset;
  int64_t pos[CT_MAX_NDIM] = {0};
  int64_t numel = 1;
  for (int32_t k = 0; k < nd; ++k) numel *= index->shape[k];
  for (int64_t e = 0; e < numel; ++e) {
    int64_t off = 0, r = e;
    for (int32_t k = nd - 1; k >= 0; --k) {
      pos[k] = r % index->shape[k];
      r /= index->shape[k];
      off += pos[k] * ct_stride_of(index, k);
    }
    I v;
    std::memcpy(&v, base + off * (int64_t)sizeof(I), sizeof v);
    if (v < -n || v >= n) {
      char at[24 * CT_MAX_NDIM + 4];
      format_shape(at, sizeof at, nd, pos);
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s: index%s=%" PRId64 " is outside [-%" PRId64 ", %" PRId64
                  ") for axis %d (extent %" PRId64 ")", fn, d->name, nd ? at : "", (int64_t)v, n, n, axis, n);
    }
  }
  return fail(CT_ERR_INTERNAL, "%s: %s: an index is outside [-%" PRId64 ", %" PRId64 ") but none was found", fn,
              d->name, n, n);
}

// Every index in [-n, n): read on the host (core's one read of tensor data,
// so that nothing is written when one is out of range). The smallest and
// largest of each innermost run are all a valid call costs (one pass at
// memory speed); the message's position is found only for a bad one.
template <class I> CTStatus check_indices(const char* fn, const OpDef* d, const CTensor* index, int64_t n,
                                          int32_t axis) {
  const int32_t nd = index->ndim;
  for (int32_t k = 0; k < nd; ++k)
    if (index->shape[k] == 0) return CT_OK;  // empty (its other extents may multiply past 2^63)
  int64_t numel = 1;
  for (int32_t k = 0; k < nd; ++k) numel *= index->shape[k];
  const char* base = static_cast<const char*>(index->data) + index->byte_offset;
  const int64_t inner = nd ? index->shape[nd - 1] : 1, is = nd ? ct_stride_of(index, nd - 1) : 0;
  I lo = 0, hi = 0;
  bool first = true;
  int64_t pos[CT_MAX_NDIM] = {0};
  for (int64_t e = 0; e < numel; e += inner) {
    int64_t off = 0;
    for (int32_t k = 0; k + 1 < nd; ++k) off += pos[k] * ct_stride_of(index, k);
    const char* p = base + off * (int64_t)sizeof(I);
    I mn, mx;
    std::memcpy(&mn, p, sizeof mn);
    mx = mn;
    if (is == 1) {
      const I* q = reinterpret_cast<const I*>(p);  // may be unaligned: read through memcpy below when it is
      if (reinterpret_cast<uintptr_t>(p) % alignof(I) == 0) {
        for (int64_t j = 0; j < inner; ++j) mn = q[j] < mn ? q[j] : mn, mx = q[j] > mx ? q[j] : mx;
      } else {
        for (int64_t j = 0; j < inner; ++j) {
          I v;
          std::memcpy(&v, p + j * (int64_t)sizeof(I), sizeof v);
          mn = v < mn ? v : mn, mx = v > mx ? v : mx;
        }
      }
    } else {
      for (int64_t j = 0; j < inner; ++j) {
        I v;
        std::memcpy(&v, p + j * is * (int64_t)sizeof(I), sizeof v);
        mn = v < mn ? v : mn, mx = v > mx ? v : mx;
      }
    }
    lo = first || mn < lo ? mn : lo;
    hi = first || mx > hi ? mx : hi;
    first = false;
    for (int32_t k = nd - 2; k >= 0; --k) {  // the next run, row-major
      if (++pos[k] < index->shape[k]) break;
      pos[k] = 0;
    }
  }
  if ((int64_t)lo >= -n && (int64_t)hi < n) return CT_OK;
  return bad_index<I>(fn, d, index, n, axis);
}

bool same_view(const CTensor* a, const CTensor* b) {
  if (a->data != b->data || a->byte_offset != b->byte_offset || a->ndim != b->ndim) return false;
  for (int32_t k = 0; k < a->ndim; ++k)
    if (a->shape[k] != b->shape[k] || (a->shape[k] != 1 && ct_stride_of(a, k) != ct_stride_of(b, k))) return false;
  return true;
}

}  // namespace

CTStatus index_shape(const char* fn, const OpDef* d, const CTensor* x, const CTensor* index, const CTensor* src,
                     int32_t axis, int32_t* axis_out, int64_t* shape, int32_t* nd) {
  const int32_t r = rank1(x);
  if (axis < -r || axis >= r)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s: axis=%d is outside [-%d, %d) for x.ndim=%d", fn, d->name, axis, r, r,
                x->ndim);
  const int32_t ax = axis < 0 ? axis + r : axis;
  *axis_out = ax;
  int64_t index_numel = 1;  // 0 when an extent is (the others may then multiply past 2^63)
  for (int32_t k = 0; k < index->ndim; ++k)
    if (index->shape[k] == 0) index_numel = 0;
  for (int32_t k = 0; index_numel && k < index->ndim; ++k) index_numel *= index->shape[k];
  if (index_numel > 0 && extent1(x, ax) == 0)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s: axis %d of x has extent 0, so no index is valid", fn, d->name, ax);
  switch (d->id) {
    case CT_OP_TAKE: {
      const int32_t n = (x->ndim > 0 ? x->ndim - 1 : 0) + index->ndim;
      if (n > CT_MAX_NDIM)
        return fail(CT_ERR_INVALID_ARGUMENT, "%s: take: x.ndim=%d and index.ndim=%d give %d dims, more than %d", fn,
                    x->ndim, index->ndim, n, CT_MAX_NDIM);
      int32_t k = 0;
      for (int32_t i = 0; i < ax && i < x->ndim; ++i) shape[k++] = x->shape[i];
      for (int32_t i = 0; i < index->ndim; ++i) shape[k++] = index->shape[i];
      for (int32_t i = ax + 1; i < x->ndim; ++i) shape[k++] = x->shape[i];
      *nd = k;
      return CT_OK;
    }
    case CT_OP_GATHER: {
      if (rank1(index) != r) return rank_mismatch(fn, d, "index", index, "x", x);
      for (int32_t i = 0; i < r; ++i)
        if (i != ax && extent1(index, i) > extent1(x, i))
          return extent_mismatch(fn, d, "index", index, "x", x, i, "of index may not exceed x's off the axis");
      *nd = index->ndim;
      for (int32_t i = 0; i < index->ndim; ++i) shape[i] = index->shape[i];
      return CT_OK;
    }
    case CT_OP_SCATTER:
    case CT_OP_SCATTER_ADD: {
      if (rank1(index) != r) return rank_mismatch(fn, d, "index", index, "x", x);
      if (rank1(src) != r) return rank_mismatch(fn, d, "src", src, "x", x);
      for (int32_t i = 0; i < r; ++i) {
        if (extent1(index, i) > extent1(src, i))
          return extent_mismatch(fn, d, "index", index, "src", src, i, "of index may not exceed src's");
        if (i != ax && extent1(index, i) > extent1(x, i))
          return extent_mismatch(fn, d, "index", index, "x", x, i, "of index may not exceed x's off the axis");
      }
      break;
    }
    case CT_OP_INDEX_ADD: {
      if (index->ndim > 1) {
        char si[24 * CT_MAX_NDIM + 4];
        return fail(CT_ERR_SHAPE_MISMATCH, "%s: index_add: index.shape=%s must be 1-d", fn,
                    format_shape(si, sizeof si, index->ndim, index->shape));
      }
      if (rank1(src) != r) return rank_mismatch(fn, d, "src", src, "x", x);
      for (int32_t i = 0; i < r; ++i) {
        const int64_t want = i == ax ? index_numel : extent1(x, i);
        if (extent1(src, i) != want)
          return extent_mismatch(fn, d, "src", src, "x", x, i,
                                 i == ax ? "of src must be index's length" : "of src must equal x's");
      }
      break;
    }
    default:
      return fail(CT_ERR_INTERNAL, "%s: %s is of kind index but has no shape rule here", fn, d->name);
  }
  *nd = x->ndim;
  for (int32_t i = 0; i < x->ndim; ++i) shape[i] = x->shape[i];
  return CT_OK;
}

namespace {

CTStatus run_index(int32_t op, const CTensor* x, int32_t axis, const CTensor* index, const CTensor* src,
                   const double* params, int32_t num_params, const CTensor* out, void* stream) {
  const char* fn = "ct_index";
  const OpDef* d = nullptr;
  if (CTStatus s = op_of_kind(fn, op, CT_KIND_INDEX, "index", &d)) return s;
  const bool scatter = is_scatter(op);
  TensorFacts xf, idf, sf, of;
  if (CTStatus s = check_tensor(fn, "x", x, &xf)) return s;
  if (CTStatus s = check_tensor(fn, "index", index, &idf)) return s;
  if (d->num_inputs == 3) {
    if (!src) return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s: src is NULL", fn, d->name);
    if (CTStatus s = check_tensor(fn, "src", src, &sf)) return s;
  } else if (src) {
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s takes no src (pass NULL)", fn, d->name);
  }
  if (CTStatus s = check_tensor(fn, "out", out, &of)) return s;
  if (CTStatus s = check_same_device(fn, "x", x, out)) return s;
  if (CTStatus s = check_same_device(fn, "index", index, out)) return s;
  if (src)
    if (CTStatus s = check_same_device(fn, "src", src, out)) return s;
  const Backend* backend = nullptr;
  if (CTStatus s = check_device(fn, "out", out->device, &backend)) return s;
  if (!backend->dev.data_is_address) xf.not_address = idf.not_address = sf.not_address = of.not_address = true;
  // dtypes
  if (idf.dt != CT_DT_INT64 && idf.dt != CT_DT_INT32)
    return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s: index.dtype=%s must be int64 or int32", fn, d->name,
                dtype_name(idf.dt));
  if (src && sf.dt != xf.dt)
    return fail(CT_ERR_DTYPE_MISMATCH, "%s: %s: src.dtype=%s differs from x.dtype=%s", fn, d->name,
                dtype_name(sf.dt), dtype_name(xf.dt));
  if (of.dt != xf.dt)
    return fail(CT_ERR_DTYPE_MISMATCH, "%s: out.dtype=%s but %s of %s gives %s", fn, dtype_name(of.dt), d->name,
                dtype_name(xf.dt), dtype_name(xf.dt));
  // parameters: index_add's alpha (default 1); none for the others
  if (num_params < 0 || num_params > d->num_params || (num_params > 0 && !params))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s takes %d parameter(s) (%s), got num_params=%d%s", fn, d->name,
                d->num_params, d->num_params ? d->param_names : "none", num_params,
                num_params > 0 && !params ? " with params NULL" : "");
  double alpha = num_params > 0 ? params[0] : 1.0;
  if (!(d->dtypes & (1u << xf.dt)))
    return fail(CT_ERR_UNSUPPORTED, "%s: %s is not defined for %s: %s", fn, d->name, dtype_name(xf.dt), d->dtype_rule);
  if (!std::isfinite(alpha) && !((CT_DTS_FLOAT >> xf.dt) & 1u))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s: alpha=%g is not finite", fn, d->name, alpha);
  if (op == CT_OP_INDEX_ADD && !((CT_DTS_FLOAT >> xf.dt) & 1u) &&
      !(std::fabs(alpha) < 9.2e18 && alpha == std::trunc(alpha)))  // tested before any conversion to an integer
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: index_add: alpha=%.17g must be an integer (|alpha| < 9.2e18) for %s", fn, alpha,
                dtype_name(xf.dt));
  // shapes
  int64_t want[CT_MAX_NDIM];
  int32_t wn = 0, ax = 0;
  if (CTStatus s = index_shape(fn, d, x, index, src, axis, &ax, want, &wn)) return s;
  bool same = out->ndim == wn;
  for (int32_t i = 0; same && i < wn; ++i) same = out->shape[i] == want[i];
  if (!same) {
    char so[24 * CT_MAX_NDIM + 4], sw[24 * CT_MAX_NDIM + 4];
    return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s: out.shape=%s but the result has shape %s", fn, d->name,
                format_shape(so, sizeof so, out->ndim, out->shape), format_shape(sw, sizeof sw, wn, want));
  }
  const CTKernelInterface* kern = nullptr;
  if (CTStatus s = op_kernels(fn, d, op, backend, out->device.device_id, xf.dt, of.dt, &kern)) return s;
  if (!kern->index || kern->struct_size < offsetof(CTKernelInterface, index) + sizeof kern->index)
    return fail(CT_ERR_UNSUPPORTED, "%s: %s: the %s kernels have no index slot", fn, d->name, kern->name);
  if (CTStatus s = check_output_layout(fn, "out", out, of)) return s;
  // overlaps: out is exactly x or disjoint from it (scatters), disjoint from everything else
  if (scatter) {
    if (CTStatus s = check_overlap(fn, "out", out, of, "x", x, xf)) return s;
  } else if (CTStatus s = check_no_shared_bytes(fn, "out", out, of, "x", x, xf,
                                                "a gather's output must not share memory with its input")) {
    return s;
  }
  if (CTStatus s = check_no_shared_bytes(fn, "out", out, of, "index", index, idf,
                                         "the output must not share memory with the index")) return s;
  if (src)
    if (CTStatus s = check_no_shared_bytes(fn, "out", out, of, "src", src, sf,
                                           "the output must not share memory with src")) return s;
  if (CTStatus s = check_stream(backend, fn, out->device.device_id, stream)) return s;
  const int64_t n = extent1(x, ax);
  if (backend->dev.data_is_address && backend->dev.host_accessible) {
    const CTStatus s = idf.dt == CT_DT_INT64 ? check_indices<int64_t>(fn, d, index, n, ax)
                                             : check_indices<int32_t>(fn, d, index, n, ax);
    if (s != CT_OK) return s;
  }
  // Validated: from here on the output is written.
  if (scatter && !same_view(x, out) && xf.numel > 0) {
    static const char* const names[] = {"x"};
    if (CTStatus s = run_elementwise(fn, CT_OP_CAST, &x, names, 1, nullptr, 0, out, "out", stream)) return s;
  }
  // The loop's views: one shape for data, index and out.
  int64_t shape[CT_MAX_NDIM], ds[CT_MAX_NDIM], is[CT_MAX_NDIM], os[CT_MAX_NDIM];
  int32_t nd = 0;
  int64_t axis_stride = 0;
  if (op == CT_OP_TAKE) {
    // out = x.shape[:ax] + index.shape + x.shape[ax+1:]
    for (int32_t i = 0; i < ax && i < x->ndim; ++i, ++nd) {
      shape[nd] = x->shape[i], ds[nd] = ct_stride_of(x, i), is[nd] = 0, os[nd] = ct_stride_of(out, nd);
    }
    for (int32_t i = 0; i < index->ndim; ++i, ++nd) {
      shape[nd] = index->shape[i], ds[nd] = 0, is[nd] = ct_stride_of(index, i), os[nd] = ct_stride_of(out, nd);
    }
    for (int32_t i = ax + 1; i < x->ndim; ++i, ++nd) {
      shape[nd] = x->shape[i], ds[nd] = ct_stride_of(x, i), is[nd] = 0, os[nd] = ct_stride_of(out, nd);
    }
    axis_stride = stride1(x, ax);
  } else if (op == CT_OP_GATHER) {
    for (int32_t i = 0; i < index->ndim; ++i, ++nd) {
      shape[nd] = index->shape[i], ds[nd] = i == ax ? 0 : stride1(x, i), is[nd] = ct_stride_of(index, i);
      os[nd] = ct_stride_of(out, i);
    }
    axis_stride = stride1(x, ax);
  } else {
    // (lines..., K): every dim of the loop but the axis, then the axis
    const CTensor* lead = op == CT_OP_INDEX_ADD ? src : index;  // the loop's extents
    const int32_t r = rank1(x);
    for (int32_t pass = 0; pass < 2; ++pass)
      for (int32_t i = 0; i < r; ++i) {
        if ((i == ax) != (pass == 1)) continue;
        shape[nd] = extent1(lead, i);
        ds[nd] = stride1(src, i);
        is[nd] = op == CT_OP_INDEX_ADD ? (i == ax && index->ndim == 1 ? ct_stride_of(index, 0) : 0) : stride1(index, i);
        os[nd] = i == ax ? 0 : stride1(out, i);
        ++nd;
      }
    axis_stride = stride1(out, ax);
  }
  for (int32_t i = 0; i < nd; ++i)
    if (shape[i] == 0) return CT_OK;  // nothing to do (the other extents may multiply past 2^63)
  int64_t numel = 1;
  for (int32_t i = 0; i < nd; ++i) numel *= shape[i];
  if (nd == 0) {  // a 0-d result (take of a 1-d x at a 0-d index): a loop of one
    shape[0] = 1, ds[0] = is[0] = os[0] = 0;
    nd = 1;
  }
  CTensor dv = scatter ? *src : *x, iv = *index, ov = *out;
  dv.ndim = iv.ndim = ov.ndim = nd;
  dv.shape = iv.shape = ov.shape = shape;
  dv.strides = ds;
  iv.strides = is;
  ov.strides = os;
  CTIndexCall call;
  std::memset(&call, 0, sizeof call);
  call.struct_size = sizeof call;
  call.op = op;
  call.fn = fn;
  call.mode = op == CT_OP_TAKE || op == CT_OP_GATHER ? CT_INDEX_GATHER
              : op == CT_OP_SCATTER                 ? CT_INDEX_SCATTER
                                                    : CT_INDEX_SCATTER_ADD;
  call.dt = xf.dt;
  call.index_dt = idf.dt;
  call.data = &dv;
  call.index = &iv;
  call.out = &ov;
  call.axis_stride = axis_stride;
  call.axis_extent = n;
  call.alpha = alpha;
  call.numel = numel;
  call.stream = stream;
  return kern->index(&call);
}

}  // namespace
}  // namespace ct

extern "C" {

CT_API CTStatus ct_index(int32_t op, const CTensor* x, int32_t axis, const CTensor* index, const CTensor* src,
                         const double* params, int32_t num_params, CTensor* out, void* stream) {
  CT_API_BEGIN("ct_index")
  return ct::run_index(op, x, axis, index, src, params, num_params, out, stream);
  CT_API_END()
}

}  // extern "C"
