// nn_onednn_matmul_conv.cc — the oneDNN plans of matmul and conv2d (forward,
// backward data, backward weight): their arguments, fused activations and
// the choice between the caller's layout and oneDNN's blocked ones.
#include <cstring>

#include "cpu/nn_onednn_internal.h"

namespace ct {
namespace cpu {
namespace onednn {

namespace {

// Whether oneDNN's kernel for the caller's own layout is worth keeping (else
// the plan lets oneDNN choose its blocked layouts and reorders around them).
// Measured here: the im2col "gemm" kernels lose to blocked ones plus
// reorders, except for a 1x1, stride-1, unpadded conv, which is a plain GEMM
// on NCHW data (0.55 ms against 1.15 ms for ResNet's C256 56x56 1x1).
bool keep_user_layout(const char* impl, const CTConv2dDesc& d, const CTensor* w) {
  if (std::strstr(impl, "ref")) return false;
  if (!std::strstr(impl, "gemm")) return true;
  return w->shape[2] == 1 && w->shape[3] == 1 && d.stride[0] == 1 && d.stride[1] == 1 && d.pad_begin[0] == 0 &&
         d.pad_begin[1] == 0 && d.pad_end[0] == 0 && d.pad_end[1] == 0;
}

bool post_op(int32_t act, dnnl::post_ops* po) {
  dnnl::algorithm alg;
  switch (act) {
    case CT_ACTIVATION_NONE: return false;
    case CT_ACTIVATION_RELU: alg = dnnl::algorithm::eltwise_relu; break;
    case CT_ACTIVATION_GELU: alg = dnnl::algorithm::eltwise_gelu_erf; break;
    case CT_ACTIVATION_GELU_TANH: alg = dnnl::algorithm::eltwise_gelu_tanh; break;
    case CT_ACTIVATION_SIGMOID: alg = dnnl::algorithm::eltwise_logistic; break;
    default: alg = dnnl::algorithm::eltwise_tanh; break;
  }
  po->append_eltwise(1.f, alg, 0.f, 0.f);
  return true;
}

memory::desc any_like(const memory::desc& md) {
  return memory::desc(md.dims(), md.data_type(), memory::format_tag::any);
}

// float32: oneDNN 2.6's sgemm-based matmul ("gemm:jit") beats its brgemm one
// by ~15% at large sizes on this kind of CPU; prefer it when it applies.
dnnl::matmul::primitive_desc prefer_gemm(const dnnl::matmul::desc& d, const dnnl::primitive_attr& attr, bool f32) {
  dnnl::matmul::primitive_desc pd(d, attr, eng());
  if (!f32) return pd;
  do {
    if (std::strstr(pd.impl_info_str(), "gemm:jit")) return pd;
  } while (pd.next_impl());
  return dnnl::matmul::primitive_desc(d, attr, eng());
}

}  // namespace

void build_matmul(const CTNNCall* c, Plan* p) {
  const CTensor *A = c->t[0], *B = c->t[1], *bias = c->t[2], *O = c->t[3];
  const int nd = O->ndim;
  const int64_t K = A->shape[A->ndim - 1], N = O->shape[nd - 1];
  auto padded = [&](const CTensor* t) {
    dims d(nd, 1);
    for (int32_t i = 0; i < t->ndim; ++i) d[nd - t->ndim + i] = t->shape[i];
    return d;
  };
  // When b has no batch of its own, a batched product is one large GEMM,
  // (batch * M, K) @ (K, N): far faster in oneDNN than a batch of small ones.
  // It needs a and out viewable as 2-d without copies and a bias that is one row.
  int64_t rows = 1, a_rows = 1;
  for (int i = 0; i < nd - 1; ++i) rows *= O->shape[i];
  for (int i = 0; i < A->ndim - 1; ++i) a_rows *= A->shape[i];
  bool flat = nd > 2 && a_rows == rows && rows <= INT32_MAX;  // oneDNN's M: see fit_extents
  for (int i = 0; flat && i < B->ndim - 2; ++i) flat = B->shape[i] == 1;
  if (flat && bias) {
    int64_t n = 1;
    for (int32_t i = 0; i < bias->ndim; ++i) n *= bias->shape[i];
    flat = n == N;
  }
  dims as, os;
  const dims ad{rows, K}, od{rows, N};
  flat = flat && view_strides(A, ad, &as) && describable(ad, as) && view_strides(O, od, &os) && describable(od, os);
  if (flat) {
    p->args.push_back(tensor_arg(c, 0, DNNL_ARG_SRC, false, ad));
    p->args.push_back(tensor_arg(c, 1, DNNL_ARG_WEIGHTS, false, dims{K, N}));
    if (bias) p->args.push_back(tensor_arg(c, 2, DNNL_ARG_BIAS, false, dims{1, N}));
    p->args.push_back(tensor_arg(c, 3, DNNL_ARG_DST, true, od));
  } else {
    // A batch dim the caller broadcast with stride 0 is a size-1 dim to
    // oneDNN, which broadcasts it itself.
    auto operand = [&](int ti, int darg) {
      const CTensor* t = c->t[ti];
      dims d = padded(t), s;
      if (!view_strides(t, d, &s)) return tensor_arg(c, ti, darg, false, d);  // a dense copy
      for (int i = 0; i < nd - 2; ++i)
        if (d[i] > 1 && s[i] == 0) d[i] = 1;
      if (!describable(d, s)) return tensor_arg(c, ti, darg, false, padded(t));
      Arg a;
      a.tensor = ti;
      a.darg = darg;
      a.user = a.prim = memory::desc(d, dnnl_dt(dtype_index(t->dtype)), s);
      return a;
    };
    p->args.push_back(operand(0, DNNL_ARG_SRC));
    p->args.push_back(operand(1, DNNL_ARG_WEIGHTS));
    if (bias) p->args.push_back(tensor_arg(c, 2, DNNL_ARG_BIAS, false, padded(bias)));
    p->args.push_back(tensor_arg(c, 3, DNNL_ARG_DST, true, tdims(O)));
  }
  // oneDNN 2.6's matmul reads a strided bias as if it were dense: it gets
  // a dense one, reordered from the caller's layout in the workspace.
  if (bias) p->args[2].prim = dense_like(p->args[2].user);
  dnnl::primitive_attr attr = scratch_attr();
  dnnl::post_ops po;
  if (post_op(static_cast<const CTMatmulDesc*>(c->desc)->activation, &po)) attr.set_post_ops(po);
  Arg& src = p->args[0];
  Arg& wei = p->args[1];
  Arg& dst = p->args.back();
  auto make = [&]() {
    return bias ? dnnl::matmul::desc(src.prim, wei.prim, p->args[2].prim, dst.prim)
                : dnnl::matmul::desc(src.prim, wei.prim, dst.prim);
  };
  const bool f32 = c->dt == CT_DT_FLOAT32;
  dnnl::matmul::primitive_desc pd;
  try {
    pd = prefer_gemm(make(), attr, f32);
  } catch (const dnnl::error&) {
    // Layouts the fast kernels cannot take: dense copies (reorders) instead.
    for (Arg& a : p->args) a.prim = memory::desc(a.prim.dims(), a.prim.data_type(), dense_strides(a.prim.dims()));
    pd = prefer_gemm(make(), attr, f32);
  }
  finish(p, dnnl::matmul(pd), pd.scratchpad_desc());
}

namespace {

struct ConvGeom {
  dims strides, dilates, pl, pr;
};
// make(false) builds the primitive desc on the caller's data layout,
// make(true) lets oneDNN choose (blocked); the first is kept when allowed and
// keep_user_layout approves of the kernel oneDNN picked for it.
template <class PD, class Make>
PD user_layout_or_blocked(bool try_user, const Make& make, const CTConv2dDesc& d, const CTensor* w) {
  if (try_user) try {
      PD pd = make(false);
      if (keep_user_layout(pd.impl_info_str(), d, w)) return pd;
    } catch (const dnnl::error&) {
    }
  return make(true);
}

ConvGeom conv_geom(const CTConv2dDesc& d) {
  return ConvGeom{{d.stride[0], d.stride[1]},
                  {d.dilation[0] - 1, d.dilation[1] - 1},
                  {d.pad_begin[0], d.pad_begin[1]},
                  {d.pad_end[0], d.pad_end[1]}};
}

dims weight_dims(const CTensor* w, int64_t g) {
  if (g == 1) return tdims(w);
  return dims{g, w->shape[0] / g, w->shape[1], w->shape[2], w->shape[3]};
}

}  // namespace

// conv2d forward (x, w, bias?, y), backward data (dy, w, dx), backward
// weight (x, dy, dw, dbias?). Data layouts: the caller's when oneDNN has a
// fast kernel for them, else oneDNN's choice; weights always oneDNN's choice.
void build_conv(const CTNNCall* c, Plan* p) {
  const CTConv2dDesc& d = *static_cast<const CTConv2dDesc*>(c->desc);
  const ConvGeom g = conv_geom(d);
  const auto alg = dnnl::algorithm::convolution_direct;
  const int64_t G = d.groups;
  dnnl::primitive_attr attr = scratch_attr();
  if (c->op == CT_OP_CONV2D) {
    dnnl::post_ops po;
    if (post_op(d.activation, &po)) attr.set_post_ops(po);
    p->args.push_back(tensor_arg(c, 0, DNNL_ARG_SRC, false, tdims(c->t[0])));
    p->args.push_back(tensor_arg(c, 1, DNNL_ARG_WEIGHTS, false, weight_dims(c->t[1], G)));
    if (c->t[2]) p->args.push_back(tensor_arg(c, 2, DNNL_ARG_BIAS, false, tdims(c->t[2])));
    p->args.push_back(tensor_arg(c, 3, DNNL_ARG_DST, true, tdims(c->t[3])));
    Arg &src = p->args[0], &wei = p->args[1], &dst = p->args.back();
    Arg* b = c->t[2] ? &p->args[2] : nullptr;
    if (b) b->prim = dense_like(b->user);  // as matmul's: a strided bias would be read as dense
    const bool wide = c->t[3]->shape[3] > kConvWideOW;  // see kConvWideOW
    if (wide) {
      src.prim = dense_like(src.user);
      dst.prim = dense_like(dst.user);
    }
    auto make = [&](bool any_data) {
      const memory::desc s = wide ? src.prim : any_data ? any_like(src.user) : src.user,
                         o = wide ? dst.prim : any_data ? any_like(dst.user) : dst.user;
      auto desc = b ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, s, any_like(wei.user),
                                                      b->prim, o, g.strides, g.dilates, g.pl, g.pr)
                    : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, s, any_like(wei.user), o,
                                                      g.strides, g.dilates, g.pl, g.pr);
      return dnnl::convolution_forward::primitive_desc(desc, attr, eng());
    };
    // A first layer (few input channels) runs faster blocked whatever the
    // caller's layout (ResNet's C3 7x7 NHWC: 1.28 ms blocked, 1.41 ms NHWC).
    auto pd = wide ? make(false)
                   : user_layout_or_blocked<dnnl::convolution_forward::primitive_desc>(
                         !src.copy && !dst.copy && c->t[1]->shape[1] >= 8, make, d, c->t[1]);
    src.prim = pd.src_desc();
    wei.prim = pd.weights_desc();
    dst.prim = pd.dst_desc();
    finish(p, dnnl::convolution_forward(pd), pd.scratchpad_desc());
    return;
  }
  if (c->op == CT_OP_CONV2D_BACKWARD_DATA) {  // dy, w, dx
    p->args.push_back(tensor_arg(c, 0, DNNL_ARG_DIFF_DST, false, tdims(c->t[0])));
    p->args.push_back(tensor_arg(c, 1, DNNL_ARG_WEIGHTS, false, weight_dims(c->t[1], G)));
    p->args.push_back(tensor_arg(c, 2, DNNL_ARG_DIFF_SRC, true, tdims(c->t[2])));
    Arg &dy = p->args[0], &wei = p->args[1], &dx = p->args[2];
    auto make = [&](bool any_data) {
      const memory::desc s = any_data ? any_like(dx.user) : dx.user, o = any_data ? any_like(dy.user) : dy.user;
      dnnl::convolution_forward::primitive_desc hint(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, s, any_like(wei.user), o, g.strides,
                                          g.dilates, g.pl, g.pr),
          eng());
      return dnnl::convolution_backward_data::primitive_desc(
          dnnl::convolution_backward_data::desc(alg, s, any_like(wei.user), o, g.strides, g.dilates, g.pl, g.pr), attr,
          eng(), hint);
    };
    auto pd = user_layout_or_blocked<dnnl::convolution_backward_data::primitive_desc>(!dy.copy && !dx.copy, make,
                                                                                        d, c->t[1]);
    dy.prim = pd.diff_dst_desc();
    wei.prim = pd.weights_desc();
    dx.prim = pd.diff_src_desc();
    finish(p, dnnl::convolution_backward_data(pd), pd.scratchpad_desc());
    return;
  }
  // backward weight: x, dy, dw, dbias?
  p->args.push_back(tensor_arg(c, 0, DNNL_ARG_SRC, false, tdims(c->t[0])));
  p->args.push_back(tensor_arg(c, 1, DNNL_ARG_DIFF_DST, false, tdims(c->t[1])));
  p->args.push_back(tensor_arg(c, 2, DNNL_ARG_DIFF_WEIGHTS, true, weight_dims(c->t[2], G)));
  if (c->t[3]) p->args.push_back(tensor_arg(c, 3, DNNL_ARG_DIFF_BIAS, true, tdims(c->t[3])));
  Arg &x = p->args[0], &dy = p->args[1], &dw = p->args[2];
  Arg* db = c->t[3] ? &p->args[3] : nullptr;
  if (db) db->prim = dense_like(db->user);  // a strided dbias would be written as dense: reordered out instead
  auto make = [&](bool any_data) {
    const memory::desc s = any_data ? any_like(x.user) : x.user, o = any_data ? any_like(dy.user) : dy.user;
    const memory::desc w = any_like(dw.user);
    auto fwd = db ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, s, w, db->prim, o,
                                                    g.strides, g.dilates, g.pl, g.pr)
                  : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, s, w, o, g.strides,
                                                    g.dilates, g.pl, g.pr);
    dnnl::convolution_forward::primitive_desc hint(fwd, eng());
    auto bwd = db ? dnnl::convolution_backward_weights::desc(alg, s, w, db->prim, o, g.strides, g.dilates, g.pl, g.pr)
                  : dnnl::convolution_backward_weights::desc(alg, s, w, o, g.strides, g.dilates, g.pl, g.pr);
    return dnnl::convolution_backward_weights::primitive_desc(bwd, attr, eng(), hint);
  };
  auto pd = user_layout_or_blocked<dnnl::convolution_backward_weights::primitive_desc>(!x.copy && !dy.copy, make, d,
                                                                                        c->t[2]);
  x.prim = pd.src_desc();
  dy.prim = pd.diff_dst_desc();
  dw.prim = pd.diff_weights_desc();
  if (db) db->prim = pd.diff_bias_desc();
  finish(p, dnnl::convolution_backward_weights(pd), pd.scratchpad_desc());
}

}  // namespace onednn
}  // namespace cpu
}  // namespace ct
