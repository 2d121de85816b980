// plan.cc — see plan.h.
#include "plan.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

namespace ctgpu {
namespace {

CTStatus refuse(const CTSupportQuery* q, const char* device_name, const char* why) {
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: %s for %s on %s:%d: %s", q->fn ? q->fn : "ct_op_supported",
                           op_name(q->op).c_str(), g_host->dtype_name(q->dt), device_name, (int)q->device_id, why);
}

CTStatus refuse_cast(const CTSupportQuery* q, const char* device_name, const char* why) {
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: cast from %s to %s on %s:%d: %s", q->fn ? q->fn : "ct_op_supported",
                           g_host->dtype_name(q->dt), g_host->dtype_name(q->out_dt), device_name, (int)q->device_id,
                           why);
}

}  // namespace

CTStatus supports(const Target* d, const CTSupportQuery* q, const char* device_name,
                  const char* (*nn_why)(int32_t op, int32_t dt, std::string* buf)) {
  if (!d) return refuse(q, device_name, "no such device");
  if (q->op < 0 || q->op >= CT_OP_END_) return refuse(q, device_name, "the module has no kernel for ops added by plugins");
  const TypeInfo t = type_info(d, q->dt);
  if (!t.ok) return q->kind == CT_KIND_CAST && q->out_dt >= 0 ? refuse_cast(q, device_name, t.why) : refuse(q, device_name, t.why);
  const CTOpInfo info = op_info(q->op);
  if (!info.name) return refuse(q, device_name, "unknown op");
  auto out_why = [&](int32_t out) -> const char* {
    if (out < 0) return nullptr;
    const TypeInfo o = type_info(d, out);
    return o.ok ? nullptr : o.why;
  };
  const int g = t.cls == kFloat ? 0 : 1;
  bool have = false;
  switch (q->kind) {
    case CT_KIND_CAST:
      if (const char* why = out_why(q->out_dt)) return refuse_cast(q, device_name, why);
      return CT_OK;
    case CT_KIND_UNARY:
    case CT_KIND_UNARY_PARAM:
    case CT_KIND_TERNARY:
    case CT_KIND_BINARY: {
      const ElemRow* row = elem_row(q->op);
      have = row && row->expr[t.cls];
      break;
    }
    case CT_KIND_REDUCE: {
      const ReduceRow* row = reduce_row(q->op);
      have = row && (row->body[g][0] || row->line[g]);
      break;
    }
    case CT_KIND_ALONG_AXIS: {
      const AlongRow* row = along_row(q->op);
      have = row && (row->body[g] || (g == 0 && row->out));
      break;
    }
    case CT_KIND_NN: {
      if (q->out_dt >= 0 && q->out_dt != q->dt)  // matmul's float32 out for half data
        return refuse(q, device_name, "an NN output in another dtype than the data (matmul's float32 out for "
                                      "float16/bfloat16) runs on the CPU backend only");
      std::string buf;
      const char* why = nn_why ? nn_why(q->op, q->dt, &buf) : "the module has no NN kernels";
      return why ? refuse(q, device_name, why) : CT_OK;
    }
    case CT_KIND_INDEX: return CT_OK;  // the moves run any dtype of this size, the adds every one the device computes
    default: return refuse(q, device_name, "unknown kind");
  }
  if (!have) return refuse(q, device_name, "no kernel for this dtype class");
  if (const char* why = out_why(ct_output_dtype_index(info.output_dtype, q->dt))) return refuse(q, device_name, why);
  return CT_OK;
}

void host_pack(const CTensor* t, unsigned char* buf, bool to_buf) {
  const size_t is = itemsize_of(t);
  const int64_t n = numel_of(t);
  std::vector<int64_t> idx((size_t)t->ndim, 0);
  unsigned char* base = static_cast<unsigned char*>(t->data) + t->byte_offset;
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int32_t d = 0; d < t->ndim; ++d) off += idx[(size_t)d] * stride_of(t, d);
    unsigned char* p = base + off * (int64_t)is;
    if (to_buf) std::memcpy(buf + (size_t)i * is, p, is);
    else std::memcpy(p, buf + (size_t)i * is, is);
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      if (++idx[(size_t)d] < t->shape[d]) break;
      idx[(size_t)d] = 0;
    }
  }
}

bool coalesce(Geo* g, const CTensor* const* t, int nt, int32_t ndim, const int64_t* shape) {
  std::memset(g, 0, sizeof *g);
  int nd = 0;
  for (int32_t d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;
    if (nd > 0) {
      bool merge = true;
      for (int k = 0; k < nt; ++k)
        if (g->st[k][nd - 1] != stride_of(t[k], d) * shape[d]) merge = false;
      if (merge) {
        g->shape[nd - 1] *= shape[d];
        for (int k = 0; k < nt; ++k) g->st[k][nd - 1] = stride_of(t[k], d);
        continue;
      }
    }
    if (nd == CTGPU_MAXD) return false;  // the kernels' Geo holds no more
    g->shape[nd] = shape[d];
    for (int k = 0; k < nt; ++k) g->st[k][nd] = stride_of(t[k], d);
    ++nd;
  }
  g->nd = nd;
  return true;
}

CTStatus too_many_dims(const char* fn, const char* device_name) {
  return g_host->set_error(CT_ERR_UNSUPPORTED,
                           "%s: the %s kernels walk at most %d dims, and these tensors have more that do not merge "
                           "into fewer (ct_copy takes any layout: copy them to a compact tensor first)",
                           fn, device_name, CTGPU_MAXD);
}

bool dense_call(const CTElementwiseCall* call) {
  return call->struct_size >= offsetof(CTElementwiseCall, flags) + sizeof(uint32_t) &&
         (call->flags & CT_CALL_DENSE) != 0;
}

std::string elementwise_kernel(const Target* d, const CTElementwiseCall* call, int kind, bool dense) {
  std::string name;
  if (kind == CT_KIND_CAST) {
    // a saturating cast (ct_cast_ex, CT_CAST_SATURATE in params[0]) to a float8 dtype has its own kernels
    const bool sat = type_info(d, call->out_dt).f8 >= 0 && call->params[0] == (double)CT_CAST_SATURATE;
    name = sat ? "cast_sat" : "cast";
  } else {
    name = op_name(call->op);
  }
  return name + (dense ? "_c" : "_s");
}

Param param_of(const TypeInfo& t, double v) {
  Param p;
  if (t.cls == kFloat && std::strcmp(t.compute, "double") == 0) {
    p.size = 8;
    std::memcpy(p.bytes, &v, 8);
  } else if (t.cls == kFloat) {
    const float f = (float)v;
    p.size = 4;
    std::memcpy(p.bytes, &f, 4);
  } else {
    // integers: the value modulo 2^64 (parameters are integers of the dtype's range)
    uint64_t u;
    if (v < 0) u = (uint64_t)(int64_t)(v < -9.2233720368547758e18 ? -9.2233720368547758e18 : v);
    else u = v >= 1.8446744073709552e19 ? ~0ull : (uint64_t)v;
    p.size = 8;
    std::memcpy(p.bytes, &u, 8);
  }
  return p;
}

int64_t reduce_geometry(const CTReduceCall* call, int64_t items, RGeo* g) {
  const CTensor* x = call->x;
  std::memset(g, 0, sizeof *g);
  // every dim first (up to CT_MAX_NDIM), merged below, then checked against the kernels' CTGPU_MAXD
  int64_t rs[CT_MAX_NDIM], rx[CT_MAX_NDIM], ks[CT_MAX_NDIM], kx[CT_MAX_NDIM], ko[CT_MAX_NDIM];
  int32_t nr0 = 0, nk0 = 0;
  int64_t M = 1;
  for (int32_t dd = 0; dd < x->ndim; ++dd) {
    if (x->shape[dd] == 0 && !((call->reduce_mask >> dd) & 1u)) M = 0;
    if (x->shape[dd] == 1) continue;
    if ((call->reduce_mask >> dd) & 1u) {
      rs[nr0] = x->shape[dd];
      rx[nr0++] = stride_of(x, dd);
    } else {
      ks[nk0] = x->shape[dd];
      kx[nk0] = stride_of(x, dd);
      ko[nk0++] = call->out_strides[dd];
      M *= x->shape[dd];
    }
  }
  if (M == 0) return 0;
  // Adjacent reduced dims that walk memory as one (the outer stride is the
  // inner extent times its stride) become one dim, and so do kept dims
  // whose x and out strides both allow it: the flat index of an element
  // among the reduced ones (argmax's answer) and the order of the walk stay
  // the same, and a contiguous tensor reduced over all its dims takes the
  // kernels' one-dim paths (unit stride: unrolled states, CUDA's warps).
  int32_t nr = 0;
  for (int32_t i = 0; i < nr0; ++i) {
    if (nr > 0 && rx[nr - 1] == rx[i] * rs[i]) {
      rs[nr - 1] *= rs[i];
      rx[nr - 1] = rx[i];
      continue;
    }
    rs[nr] = rs[i];
    rx[nr++] = rx[i];
  }
  int32_t nk = 0;
  for (int32_t i = 0; i < nk0; ++i) {
    if (nk > 0 && kx[nk - 1] == kx[i] * ks[i] && ko[nk - 1] == ko[i] * ks[i]) {
      ks[nk - 1] *= ks[i];
      kx[nk - 1] = kx[i];
      ko[nk - 1] = ko[i];
      continue;
    }
    ks[nk] = ks[i];
    kx[nk] = kx[i];
    ko[nk++] = ko[i];
  }
  if (nr > CTGPU_MAXD || nk > CTGPU_MAXD) return -1;
  for (int32_t i = 0; i < nr; ++i) g->rs[i] = rs[i], g->rx[i] = rx[i];
  for (int32_t i = 0; i < nk; ++i) g->ks[i] = ks[i], g->kx[i] = kx[i], g->ko[i] = ko[i];
  g->nr = nr;
  g->nk = nk;
  g->M = M;
  g->N = call->count;
  // Partials: as many as keep `items` work-items busy, at least 1024
  // elements each; they depend only on the shapes, so the result does too.
  // (a line reduction reads its elements in one work-item: one partial)
  int64_t P = reduce_by_line(call->op) ? 1 : std::max<int64_t>(1, std::min<int64_t>((items + M - 1) / M, (g->N + 1023) / 1024));
  const int64_t chunk = P > 1 ? (g->N + P - 1) / P : g->N;
  if (P > 1) P = (g->N + chunk - 1) / chunk;
  g->chunk = chunk;
  g->P = P;
  return M;
}

size_t state_size(const Target* d) {
  const size_t af = d->fp64 ? 8 : 4;
  return ((3 * af + 7) / 8) * 8 + 24;
}

int64_t along_geometry(const CTAlongAxisCall* call, AGeo* g) {
  const CTensor *x = call->x, *out = call->out;
  std::memset(g, 0, sizeof *g);
  int64_t lines = 1;
  for (int32_t dd = 0; dd < x->ndim; ++dd) {
    if (dd == call->axis) continue;
    lines *= x->shape[dd];
    if (x->shape[dd] == 1) continue;
    if (g->nl == CTGPU_MAXD) return -1;  // the kernels' AGeo holds no more
    g->ls[g->nl] = x->shape[dd];
    g->lx[g->nl] = stride_of(x, dd);
    g->lo[g->nl++] = stride_of(out, dd);
  }
  g->lines = lines;
  g->len = x->shape[call->axis];
  g->xs = stride_of(x, call->axis);
  g->os = stride_of(out, call->axis);
  return g->len == 0 ? 0 : lines;
}

}  // namespace ctgpu
