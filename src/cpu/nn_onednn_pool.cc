// nn_onednn_pool.cc — the oneDNN plans of max and average pooling, forward and
// backward, with the conversion between oneDNN's window offsets and the
// int64 positions max-pool indices hold.
#include <cinttypes>
#include <cstring>
#include <utility>

#include "cpu/nn_onednn_internal.h"

namespace ct {
namespace cpu {
namespace onednn {

namespace {

// Max pooling's oneDNN workspace holds, per output, the offset kh * KW + kw
// of the max in its window; the caller sees int64 positions h * W + w.
struct PoolIndex {
  int64_t N, C, H, W, P, Q, KH, KW, SH, SW, PT, PL, DH, DW;
};
PoolIndex pool_index(const CTPool2dDesc& d, const CTensor* x, const CTensor* y) {
  return PoolIndex{x->shape[0], x->shape[1], x->shape[2],   x->shape[3],   y->shape[2],     y->shape[3],     d.kernel[0],
                   d.kernel[1], d.stride[0], d.stride[1], d.pad_begin[0], d.pad_begin[1], d.dilation[0], d.dilation[1]};
}

}  // namespace

void build_pool(const CTNNCall* c, Plan* p) {
  const CTPool2dDesc& d = *static_cast<const CTPool2dDesc*>(c->desc);
  const bool maxp = c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_MAX_POOL2D_BACKWARD;
  const bool fwd = c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_AVG_POOL2D;
  const auto alg = maxp ? dnnl::algorithm::pooling_max
                        : d.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                              : dnnl::algorithm::pooling_avg_exclude_padding;
  const dims strides{d.stride[0], d.stride[1]}, kernel{d.kernel[0], d.kernel[1]},
      dil{d.dilation[0] - 1, d.dilation[1] - 1}, pl{d.pad_begin[0], d.pad_begin[1]}, pr{d.pad_end[0], d.pad_end[1]};
  dnnl::primitive_attr attr = scratch_attr();
  // Tensor roles: forward (x, y, indices?); max backward (dy, indices, dx); avg backward (dy, dx).
  const int xi = fwd ? 0 : (maxp ? 2 : 1), yi = fwd ? 1 : 0;
  const int ii = c->op == CT_OP_MAX_POOL2D ? 2 : c->op == CT_OP_MAX_POOL2D_BACKWARD ? 1 : -1;
  const bool with_ws = ii >= 0 && c->t[ii];
  p->args.push_back(tensor_arg(c, xi, fwd ? DNNL_ARG_SRC : DNNL_ARG_DIFF_SRC, !fwd, tdims(c->t[xi])));
  p->args.push_back(tensor_arg(c, yi, fwd ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST, fwd, tdims(c->t[yi])));
  const auto prop = fwd && !with_ws ? dnnl::prop_kind::forward_inference : dnnl::prop_kind::forward_training;
  auto fwd_pd = [&](const memory::desc& s, const memory::desc& o) {
    return dnnl::pooling_v2_forward::primitive_desc(
        dnnl::pooling_v2_forward::desc(prop, alg, s, o, strides, kernel, dil, pl, pr), attr, eng());
  };
  Arg &X = p->args[0], &Y = p->args[1];
  memory::desc ws_md;
  if (fwd) {
    dnnl::pooling_v2_forward::primitive_desc pd;
    bool ok = false;
    if (!X.copy && !Y.copy) try {
        pd = fwd_pd(X.user, Y.user);
        ok = std::strstr(pd.impl_info_str(), "ref") == nullptr;
      } catch (const dnnl::error&) {
      }
    if (!ok) pd = fwd_pd(dense_like(X.user), dense_like(Y.user));  // pooling takes no "any" source
    X.prim = pd.src_desc();
    Y.prim = pd.dst_desc();
    if (with_ws) {
      ws_md = pd.workspace_desc();
      // The offsets land in a dense int32 buffer, then become positions.
      p->args.push_back(internal_arg(DNNL_ARG_WORKSPACE, true,
                                     memory::desc(tdims(c->t[yi]), mdt::s32, memory::format_tag::abcd)));
      p->args.back().prim = ws_md;
      const size_t wi = p->args.size() - 1;
      const PoolIndex g = pool_index(d, c->t[xi], c->t[yi]);
      p->post.push_back([g, wi, ii](const Exec& e) {
        const int32_t* off = reinterpret_cast<const int32_t*>(e.user_ptr(wi));
        const int64_t PQ = g.P * g.Q;
        for_each_elem(e.t[ii], [&](int64_t l, char* ptr) {
          const int64_t pq = l % PQ, pp = pq / g.Q, q = pq % g.Q, o = off[l];
          const int64_t h = pp * g.SH - g.PT + (o / g.KW) * g.DH, w = q * g.SW - g.PL + (o % g.KW) * g.DW;
          const int64_t v = h * g.W + w;
          std::memcpy(ptr, &v, sizeof v);
        });
      });
    }
    finish(p, dnnl::pooling_v2_forward(pd), pd.scratchpad_desc());
    return;
  }
  auto bwd_pd = [&](const memory::desc& s, const memory::desc& o) {
    auto hint = fwd_pd(s, o);
    return std::make_pair(dnnl::pooling_v2_backward::primitive_desc(
                              dnnl::pooling_v2_backward::desc(alg, s, o, strides, kernel, dil, pl, pr), attr, eng(),
                              hint),
                          hint);
  };
  std::pair<dnnl::pooling_v2_backward::primitive_desc, dnnl::pooling_v2_forward::primitive_desc> pds;
  bool ok = false;
  if (!X.copy && !Y.copy) try {
      pds = bwd_pd(X.user, Y.user);
      ok = std::strstr(pds.first.impl_info_str(), "ref") == nullptr;
    } catch (const dnnl::error&) {
    }
  if (!ok) pds = bwd_pd(dense_like(X.user), dense_like(Y.user));
  auto& pd = pds.first;
  X.prim = pd.diff_src_desc();
  Y.prim = pd.diff_dst_desc();
  if (maxp) {
    ws_md = pd.workspace_desc();
    p->args.push_back(internal_arg(DNNL_ARG_WORKSPACE, false,
                                   memory::desc(tdims(c->t[yi]), mdt::s32, memory::format_tag::abcd)));
    p->args.back().prim = ws_md;
    const size_t wi = p->args.size() - 1;
    const PoolIndex g = pool_index(d, c->t[xi], c->t[yi]);
    // Positions -> window offsets, refusing a position outside its own
    // window (oneDNN would route that gradient elsewhere or drop it).
    p->checks.push_back([g, wi, ii](const Exec& e) -> CTStatus {
      int32_t* off = reinterpret_cast<int32_t*>(e.user_ptr(wi));
      const int64_t PQ = g.P * g.Q;
      int64_t bad = -1, bad_v = 0;
      for_each_elem(e.t[ii], [&](int64_t l, char* ptr) {
        int64_t v;
        std::memcpy(&v, ptr, sizeof v);
        const int64_t pq = l % PQ, pp = pq / g.Q, q = pq % g.Q;
        // Any int64 may come here: the offsets are formed only for a position inside x.
        int64_t dh = -1, dw = -1;
        if (v >= 0 && v < g.H * g.W) dh = v / g.W - (pp * g.SH - g.PT), dw = v % g.W - (q * g.SW - g.PL);
        const bool inside = dh >= 0 && dw >= 0 && dh % g.DH == 0 && dw % g.DW == 0 && dh / g.DH < g.KH &&
                            dw / g.DW < g.KW;
        if (!inside) {
          if (bad < 0) bad = l, bad_v = v;
          off[l] = 0;
          return;
        }
        off[l] = (int32_t)((dh / g.DH) * g.KW + dw / g.DW);
      });
      if (bad < 0) return CT_OK;
      const int64_t pq = bad % PQ;
      return fail(CT_ERR_INVALID_ARGUMENT,
                  "%s: indices element %" PRId64 " (output row %" PRId64 ", column %" PRId64
                  " of its plane) is %" PRId64 ", which is not a position h * W + w inside that output's window "
                  "(W=%" PRId64 "); max_pool2d writes only such positions",
                  e.fn, bad, pq / g.Q, pq % g.Q, bad_v, g.W);
    });
  }
  finish(p, dnnl::pooling_v2_backward(pd), pd.scratchpad_desc());
}

}  // namespace onednn
}  // namespace cpu
}  // namespace ct
