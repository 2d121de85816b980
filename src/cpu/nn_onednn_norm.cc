// nn_onednn_norm.cc — the oneDNN plans of batch and layer normalisation,
// forward and backward, with the conversion between oneDNN's variance and
// the caller's inverse standard deviation.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "cpu/nn_onednn_internal.h"

namespace ct {
namespace cpu {
namespace onednn {

namespace {

// Per-channel / per-row statistics: oneDNN keeps the variance, the caller
// the inverse standard deviation.
Hook var_to_inv(size_t vi, int ti, float eps) {
  return [vi, ti, eps](const Exec& e) {
    const float* v = reinterpret_cast<const float*>(e.user_ptr(vi));
    for_each_elem(e.t[ti], [&](int64_t l, char* ptr) {
      const float r = 1.0f / std::sqrt(v[l] + eps);
      std::memcpy(ptr, &r, sizeof r);
    });
  };
}
Hook inv_to_var(size_t vi, int ti, float eps) {
  return [vi, ti, eps](const Exec& e) {
    float* v = reinterpret_cast<float*>(e.user_ptr(vi));
    for_each_elem(e.t[ti], [&](int64_t l, char* ptr) {
      float r;
      std::memcpy(&r, ptr, sizeof r);
      v[l] = 1.0f / (r * r) - eps;
    });
  };
}
Hook fill(size_t vi, int64_t n, float value) {
  return [vi, n, value](const Exec& e) {
    float* v = reinterpret_cast<float*>(e.user_ptr(vi));
    std::fill(v, v + n, value);
  };
}

}  // namespace

// batch_norm (x, mean, var, scale?, shift?, y), batch_norm_training
// (x, scale?, shift?, y, mean, invstd), batch_norm_backward
// (x, dy, mean, invstd, scale?, dx, dscale?, dshift?); layer_norm
// (x, scale?, shift?, y, mean?, rstd?), layer_norm_backward
// (x, dy, mean, rstd, scale?, dx, dscale?, dshift?).
void build_norm(const CTNNCall* c, Plan* p) {
  const bool ln = c->op == CT_OP_LAYER_NORM || c->op == CT_OP_LAYER_NORM_BACKWARD;
  if (!ln && build_batch_norm_direct(c, p)) return;
  const CTensor* x = c->t[0];
  const float eps = (float)(ln ? static_cast<const CTLayerNormDesc*>(c->desc)->epsilon : static_cast<const CTBatchNormDesc*>(c->desc)->epsilon);
  // The data view: (M, D) for layer norm, x's own dims for batch norm.
  dims data_dims = tdims(x), stat_dims;
  if (ln) {
    int64_t M = 1, D = 1;
    const int k = static_cast<const CTLayerNormDesc*>(c->desc)->normalized_ndim;
    for (int32_t i = 0; i < x->ndim; ++i) (i < x->ndim - k ? M : D) *= x->shape[i];
    data_dims = dims{M, D};
    stat_dims = dims{M};
  } else {
    stat_dims = dims{x->shape[1]};
  }
  const int64_t C = ln ? data_dims[1] : x->shape[1];
  const dims ch_dims{C};
  // Roles per op: indices of x, dy, y, dx, mean, var-or-invstd, scale, shift, dscale, dshift.
  int ix = 0, idy = -1, iy = -1, idx_ = -1, imean = -1, ivar = -1, iscale = -1, ishift = -1, idsc = -1, idsh = -1;
  bool inv = false;  // the caller's stats tensor is an inverse std (else a variance)
  bool training = false, backward = false;
  switch (c->op) {
    case CT_OP_BATCH_NORM: imean = 1, ivar = 2, iscale = 3, ishift = 4, iy = 5; break;
    case CT_OP_BATCH_NORM_TRAINING: iscale = 1, ishift = 2, iy = 3, imean = 4, ivar = 5, inv = training = true; break;
    case CT_OP_LAYER_NORM:
      iscale = 1, ishift = 2, iy = 3, imean = 4, ivar = 5, inv = true;
      training = c->t[4] || c->t[5];
      break;
    default:  // the two backward ops share a signature
      idy = 1, imean = 2, ivar = 3, iscale = 4, idx_ = 5, idsc = 6, idsh = 7, inv = backward = true;
  }
  const CTensor* scale = c->t[iscale];
  const bool use_scale = scale || (idsc >= 0 && c->t[idsc]);
  const bool use_shift = (ishift >= 0 && c->t[ishift]) || (idsh >= 0 && c->t[idsh]);
  auto flags = dnnl::normalization_flags::none;
  if (use_scale) flags = flags | dnnl::normalization_flags::use_scale;
  if (use_shift) flags = flags | dnnl::normalization_flags::use_shift;
  if (!ln && c->op == CT_OP_BATCH_NORM) flags = flags | dnnl::normalization_flags::use_global_stats;
  dnnl::primitive_attr attr = scratch_attr();

  p->args.push_back(tensor_arg(c, ix, DNNL_ARG_SRC, false, data_dims));
  if (backward) p->args.push_back(tensor_arg(c, idy, DNNL_ARG_DIFF_DST, false, data_dims));
  const int iout = backward ? idx_ : iy;
  p->args.push_back(tensor_arg(c, iout, backward ? DNNL_ARG_DIFF_SRC : DNNL_ARG_DST, true, data_dims));
  const size_t ax = 0, aout = p->args.size() - 1, ady = backward ? 1 : 0;
  // oneDNN's normalisations use one layout for x, dy, y and dx: x's when it
  // has a fast kernel, else dense.
  const memory::desc f32_stat(stat_dims, mdt::f32, memory::format_tag::a);
  const bool stats = training || backward || c->op == CT_OP_BATCH_NORM;
  const bool stats_in = backward || c->op == CT_OP_BATCH_NORM;
  if (stats) {
    if (imean >= 0 && c->t[imean])
      p->args.push_back(tensor_arg(c, imean, DNNL_ARG_MEAN, !stats_in, stat_dims));
    else
      p->args.push_back(internal_arg(DNNL_ARG_MEAN, !stats_in, f32_stat));
    if (!inv) {
      p->args.push_back(tensor_arg(c, ivar, DNNL_ARG_VARIANCE, false, stat_dims));
    } else {
      p->args.push_back(internal_arg(DNNL_ARG_VARIANCE, !stats_in, f32_stat));
      const size_t vi = p->args.size() - 1;
      if (c->t[ivar]) {
        if (stats_in) p->pre.push_back(inv_to_var(vi, ivar, eps));
        else p->post.push_back(var_to_inv(vi, ivar, eps));
      }
    }
  }
  if (use_scale) {
    if (scale) {
      p->args.push_back(tensor_arg(c, iscale, DNNL_ARG_SCALE, false, ch_dims));
    } else {
      p->args.push_back(internal_arg(DNNL_ARG_SCALE, false, memory::desc(ch_dims, mdt::f32, memory::format_tag::a)));
      p->pre.push_back(fill(p->args.size() - 1, C, 1.0f));  // scale NULL means 1
    }
  }
  if (use_shift && !backward) p->args.push_back(tensor_arg(c, ishift, DNNL_ARG_SHIFT, false, ch_dims));
  if (use_shift && backward) {  // oneDNN 2.6 wants a shift argument, which the gradient does not read
    p->args.push_back(internal_arg(DNNL_ARG_SHIFT, false, memory::desc(ch_dims, mdt::f32, memory::format_tag::a)));
    p->pre.push_back(fill(p->args.size() - 1, C, 0.0f));
  }
  auto diff_arg = [&](int ti, int darg) {
    if (ti >= 0 && c->t[ti])
      p->args.push_back(tensor_arg(c, ti, darg, true, ch_dims));
    else
      p->args.push_back(internal_arg(darg, true, memory::desc(ch_dims, mdt::f32, memory::format_tag::a)));
  };
  if (backward && use_scale) diff_arg(idsc, DNNL_ARG_DIFF_SCALE);
  if (backward && use_shift) diff_arg(idsh, DNNL_ARG_DIFF_SHIFT);

  // oneDNN 2.6's JIT layer norm unrolls the whole normalized axis into its
  // code, about 8 bytes of code per element: D = 2^24 took 136 MB and 1.3 s
  // to create, D = 2^31 - 1 more than 4 GB (found by fuzz_nn), and this
  // build has no other layer norm kernel. Past 2^18 elements the own loops
  // run in its place on dense float32 buffers (the reorders convert).
  constexpr int64_t kLnJitMaxD = (int64_t)1 << 18;
  if (ln && C > kLnJitMaxD) {
    for (Arg& a : p->args) a.prim = memory::desc(a.user.dims(), mdt::f32, dense_strides(a.user.dims()));
    p->body = layer_norm_direct(*p, data_dims[0], C, eps, backward);
    finish(p, dnnl::primitive(), memory::desc());
    return;
  }
  Arg& X = p->args[ax];
  const dims dense = dense_strides(data_dims);
  const memory::desc dense_md(data_dims, X.user.data_type(), dense);
  auto prop = c->op == CT_OP_BATCH_NORM || (!training && !backward) ? dnnl::prop_kind::forward_inference
                                                                     : dnnl::prop_kind::forward_training;
  // allow_ref = false rejects oneDNN's reference kernels, so that a layout
  // with only those falls back to the dense one.
  auto create = [&](const memory::desc& md, bool allow_ref) -> std::pair<dnnl::primitive, memory::desc> {
    auto check = [&](const char* impl) {
      if (!allow_ref && std::strstr(impl, "ref")) throw std::string(impl);
    };
    const dnnl::primitive_attr fattr = backward ? dnnl::primitive_attr() : attr;
    const auto bprop = (use_scale || use_shift) ? dnnl::prop_kind::backward : dnnl::prop_kind::backward_data;
    if (ln) {
      dnnl::layer_normalization_forward::primitive_desc fpd(
          dnnl::layer_normalization_forward::desc(prop, md, f32_stat, eps, flags), fattr, eng());
      if (!backward) {
        check(fpd.impl_info_str());
        return {dnnl::layer_normalization_forward(fpd), fpd.scratchpad_desc()};
      }
      dnnl::layer_normalization_backward::primitive_desc bpd(
          dnnl::layer_normalization_backward::desc(bprop, md, md, f32_stat, eps, flags), attr, eng(), fpd);
      check(bpd.impl_info_str());
      return {dnnl::layer_normalization_backward(bpd), bpd.scratchpad_desc()};
    }
    dnnl::batch_normalization_forward::primitive_desc fpd(dnnl::batch_normalization_forward::desc(prop, md, eps, flags),
                                                          fattr, eng());
    if (!backward) {
      check(fpd.impl_info_str());
      return {dnnl::batch_normalization_forward(fpd), fpd.scratchpad_desc()};
    }
    dnnl::batch_normalization_backward::primitive_desc bpd(
        dnnl::batch_normalization_backward::desc(bprop, md, md, eps, flags), attr, eng(), fpd);
    check(bpd.impl_info_str());
    return {dnnl::batch_normalization_backward(bpd), bpd.scratchpad_desc()};
  };
  std::pair<dnnl::primitive, memory::desc> made;
  bool ok = false;
  // oneDNN 2.6's normalisation kernels assume the data has no gaps (padded
  // rows give wrong results, not an error): anything else goes dense.
  const bool user_ok = !X.copy && is_dense(X.user);
  if (user_ok) try {
      made = create(X.user, false);
      ok = true;
    } catch (const std::string&) {
    } catch (const dnnl::error&) {
    }
  const memory::desc data_md = ok ? X.user : dense_md;
  if (!ok) made = create(dense_md, true);
  X.prim = data_md;
  p->args[aout].prim = data_md;
  if (backward) p->args[ady].prim = data_md;
  // Stats, scale and shift: oneDNN wants them dense float32 (reorders otherwise).
  for (size_t i = 0; i < p->args.size(); ++i)
    if (i != ax && i != aout && !(backward && i == ady)) {
      Arg& a = p->args[i];
      a.prim = memory::desc(a.user.dims(), mdt::f32, dense_strides(a.user.dims()));
    }
  finish(p, made.first, made.second);
}

}  // namespace onednn
}  // namespace cpu
}  // namespace ct
