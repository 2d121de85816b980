// ctensor/cpp/nn_norm.hpp: ct::batch_norm, ct::layer_norm, their training and backward ops, every form.
#ifndef CTENSOR_CPP_NN_NORM_HPP_
#define CTENSOR_CPP_NN_NORM_HPP_

#include "../ctensor.h"
#include "dtype.hpp"
#include "error.hpp"
#include "nn.hpp"
#include "nn_options.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"
#include "workspace.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace ct {

/* ---- batch_norm (inference) --------------------------------------------- */

namespace detail {
inline void batch_norm_(const TensorView& x, const TensorView& mean, const TensorView& var,
                        const TensorView* scale, const TensorView* shift, const TensorView& y,
                        const BatchNormOptions& opts, const WsArg& ws, void* stream) {
  const CTBatchNormDesc* d = &opts.c();
  const CTensor* sc = opt_c(scale);
  const CTensor* sh = opt_c(shift);
  CTensor yc = y.c();
  nn_call("ct::batch_norm", std::string(), ws, x.device(),
          [&](size_t* n) {
            return ct_batch_norm_workspace_size(d, &x.c(), &mean.c(), &var.c(), sc, sh, &yc, n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_batch_norm(d, &x.c(), &mean.c(), &var.c(), sc, sh, &yc, p, n, s);
          },
          stream);
}
inline Tensor batch_norm_value_(const TensorView& x, const TensorView& mean, const TensorView& var,
                                const TensorView* scale, const TensorView* shift,
                                const BatchNormOptions& opts, const WsArg& ws, void* stream) {
  Tensor y = alloc_out(x.shape(), x.dtype(), x.device());
  batch_norm_(x, mean, var, scale, shift, y, opts, ws, stream);
  return y;
}
}  // namespace detail

/** Bytes of workspace ct_batch_norm needs. */
inline size_t batch_norm_workspace_size(const TensorView& x, const TensorView& mean,
                                        const TensorView& var, const TensorView* scale,
                                        const TensorView* shift, const TensorView& y,
                                        const BatchNormOptions& opts = BatchNormOptions()) {
  CTensor yc = y.c();
  size_t n = 0;
  check(ct_batch_norm_workspace_size(&opts.c(), &x.c(), &mean.c(), &var.c(), detail::opt_c(scale),
                                     detail::opt_c(shift), &yc, &n));
  return n;
}
/** y = (x - mean) / sqrt(var + eps) * scale + shift with running statistics
 *  (scale, shift nullptr: 1 and 0). */
inline void batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                       const TensorView* scale, const TensorView* shift, const TensorView& y,
                       const BatchNormOptions& opts = BatchNormOptions(), void* stream = nullptr) {
  detail::batch_norm_(x, mean, var, scale, shift, y, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                       const TensorView* scale, const TensorView* shift, const TensorView& y,
                       const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::batch_norm_(x, mean, var, scale, shift, y, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_batch_norm. */
inline void batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                       const TensorView* scale, const TensorView* shift, const TensorView& y,
                       const BatchNormOptions& opts, void* workspace, size_t workspace_bytes,
                       void* stream = nullptr) {
  detail::batch_norm_(x, mean, var, scale, shift, y, opts, detail::WsArg(workspace, workspace_bytes),
                      stream);
}
/** Inference batch norm into a new tensor of x's shape, dtype and device. */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const TensorView* scale, const TensorView* shift,
                         const BatchNormOptions& opts = BatchNormOptions(), void* stream = nullptr) {
  return detail::batch_norm_value_(x, mean, var, scale, shift, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const TensorView* scale, const TensorView* shift,
                         const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  return detail::batch_norm_value_(x, mean, var, scale, shift, opts, detail::WsArg(ws), stream);
}
/** With scale and shift by reference (the options are required). */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const TensorView& scale, const TensorView& shift,
                         const BatchNormOptions& opts, void* stream = nullptr) {
  return detail::batch_norm_value_(x, mean, var, &scale, &shift, opts, detail::WsArg(), stream);
}
/** Without scale and shift. */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const BatchNormOptions& opts = BatchNormOptions(), void* stream = nullptr) {
  return detail::batch_norm_value_(x, mean, var, nullptr, nullptr, opts, detail::WsArg(), stream);
}

/* ---- batch_norm_training ------------------------------------------------ */

namespace detail {
inline void batch_norm_training_(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                 const TensorView& y, const TensorView& mean, const TensorView& invstd,
                                 const BatchNormOptions& opts, const WsArg& ws, void* stream,
                                 const std::string& unsized = std::string()) {
  const CTBatchNormDesc* d = &opts.c();
  const CTensor* sc = opt_c(scale);
  const CTensor* sh = opt_c(shift);
  CTensor yc = y.c(), mc = mean.c(), ic = invstd.c();
  nn_call("ct::batch_norm_training", unsized, ws, x.device(),
          [&](size_t* n) {
            return ct_batch_norm_training_workspace_size(d, &x.c(), sc, sh, &yc, &mc, &ic, n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_batch_norm_training(d, &x.c(), sc, sh, &yc, &mc, &ic, p, n, s);
          },
          stream);
}
inline BatchNormResult batch_norm_training_value_(const TensorView& x, const TensorView* scale,
                                                  const TensorView* shift, const BatchNormOptions& opts,
                                                  const WsArg& ws, void* stream) {
  std::vector<int64_t> c;
  std::string why;
  channel_shape(x.shape(), c, &why);
  BatchNormResult r;
  r.y = alloc_out(x.shape(), x.dtype(), x.device());
  r.mean = alloc_out(c, dtype::float32, x.device());
  r.invstd = alloc_out(c, dtype::float32, x.device());
  batch_norm_training_(x, scale, shift, r.y, r.mean, r.invstd, opts, ws, stream, why);
  return r;
}
}  // namespace detail

/** Bytes of workspace ct_batch_norm_training needs. */
inline size_t batch_norm_training_workspace_size(const TensorView& x, const TensorView* scale,
                                                 const TensorView* shift, const TensorView& y,
                                                 const TensorView& mean, const TensorView& invstd,
                                                 const BatchNormOptions& opts = BatchNormOptions()) {
  CTensor yc = y.c(), mc = mean.c(), ic = invstd.c();
  size_t n = 0;
  check(ct_batch_norm_training_workspace_size(&opts.c(), &x.c(), detail::opt_c(scale),
                                              detail::opt_c(shift), &yc, &mc, &ic, &n));
  return n;
}
/** Batch statistics: y, the per-channel mean and invstd = 1 / sqrt(v + eps). */
inline void batch_norm_training(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                const TensorView& y, const TensorView& mean, const TensorView& invstd,
                                const BatchNormOptions& opts = BatchNormOptions(),
                                void* stream = nullptr) {
  detail::batch_norm_training_(x, scale, shift, y, mean, invstd, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void batch_norm_training(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                const TensorView& y, const TensorView& mean, const TensorView& invstd,
                                const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::batch_norm_training_(x, scale, shift, y, mean, invstd, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_batch_norm_training. */
inline void batch_norm_training(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                const TensorView& y, const TensorView& mean, const TensorView& invstd,
                                const BatchNormOptions& opts, void* workspace,
                                size_t workspace_bytes, void* stream = nullptr) {
  detail::batch_norm_training_(x, scale, shift, y, mean, invstd, opts,
                               detail::WsArg(workspace, workspace_bytes), stream);
}
/** New y, mean (C,) and invstd (C,). */
inline BatchNormResult batch_norm_training(const TensorView& x, const TensorView* scale,
                                           const TensorView* shift,
                                           const BatchNormOptions& opts = BatchNormOptions(),
                                           void* stream = nullptr) {
  return detail::batch_norm_training_value_(x, scale, shift, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline BatchNormResult batch_norm_training(const TensorView& x, const TensorView* scale,
                                           const TensorView* shift, const BatchNormOptions& opts,
                                           Workspace& ws, void* stream = nullptr) {
  return detail::batch_norm_training_value_(x, scale, shift, opts, detail::WsArg(ws), stream);
}
/** With scale and shift by reference (the options are required). */
inline BatchNormResult batch_norm_training(const TensorView& x, const TensorView& scale,
                                           const TensorView& shift, const BatchNormOptions& opts,
                                           void* stream = nullptr) {
  return detail::batch_norm_training_value_(x, &scale, &shift, opts, detail::WsArg(), stream);
}
/** Without scale and shift. */
inline BatchNormResult batch_norm_training(const TensorView& x,
                                           const BatchNormOptions& opts = BatchNormOptions(),
                                           void* stream = nullptr) {
  return detail::batch_norm_training_value_(x, nullptr, nullptr, opts, detail::WsArg(), stream);
}

/* ---- batch_norm_backward ------------------------------------------------ */

namespace detail {
inline void batch_norm_backward_(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                 const TensorView& invstd, const TensorView* scale,
                                 const TensorView& dx, const TensorView* dscale,
                                 const TensorView* dshift, const BatchNormOptions& opts,
                                 const WsArg& ws, void* stream,
                                 const std::string& unsized = std::string()) {
  const CTBatchNormDesc* d = &opts.c();
  const CTensor* sc = opt_c(scale);
  CTensor dxc = dx.c();
  OptOut ds(dscale), db(dshift);
  nn_call("ct::batch_norm_backward", unsized, ws, x.device(),
          [&](size_t* n) {
            return ct_batch_norm_backward_workspace_size(d, &x.c(), &dy.c(), &mean.c(), &invstd.c(),
                                                         sc, &dxc, ds.get(), db.get(), n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_batch_norm_backward(d, &x.c(), &dy.c(), &mean.c(), &invstd.c(), sc, &dxc,
                                          ds.get(), db.get(), p, n, s);
          },
          stream);
}
inline NormGrads batch_norm_backward_value_(const TensorView& x, const TensorView& dy,
                                            const TensorView& mean, const TensorView& invstd,
                                            const TensorView* scale, const BatchNormOptions& opts,
                                            const WsArg& ws, void* stream) {
  std::vector<int64_t> c;
  std::string why;
  channel_shape(x.shape(), c, &why);
  NormGrads r;
  r.dx = alloc_out(x.shape(), x.dtype(), x.device());
  r.dscale = alloc_out(c, dtype::float32, x.device());
  r.dshift = alloc_out(c, dtype::float32, x.device());
  batch_norm_backward_(x, dy, mean, invstd, scale, r.dx, &r.dscale, &r.dshift, opts, ws, stream, why);
  return r;
}
}  // namespace detail

/** Bytes of workspace ct_batch_norm_backward needs. */
inline size_t batch_norm_backward_workspace_size(const TensorView& x, const TensorView& dy,
                                                 const TensorView& mean, const TensorView& invstd,
                                                 const TensorView* scale, const TensorView& dx,
                                                 const TensorView* dscale, const TensorView* dshift,
                                                 const BatchNormOptions& opts = BatchNormOptions()) {
  CTensor dxc = dx.c();
  detail::OptOut ds(dscale), db(dshift);
  size_t n = 0;
  check(ct_batch_norm_backward_workspace_size(&opts.c(), &x.c(), &dy.c(), &mean.c(), &invstd.c(),
                                              detail::opt_c(scale), &dxc, ds.get(), db.get(), &n));
  return n;
}
/** dx, and dscale, dshift unless nullptr (scale nullptr means 1). */
inline void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& invstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const BatchNormOptions& opts = BatchNormOptions(),
                                void* stream = nullptr) {
  detail::batch_norm_backward_(x, dy, mean, invstd, scale, dx, dscale, dshift, opts, detail::WsArg(),
                               stream);
}
/** out= form with the caller's Workspace. */
inline void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& invstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::batch_norm_backward_(x, dy, mean, invstd, scale, dx, dscale, dshift, opts,
                               detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_batch_norm_backward. */
inline void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& invstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const BatchNormOptions& opts, void* workspace,
                                size_t workspace_bytes, void* stream = nullptr) {
  detail::batch_norm_backward_(x, dy, mean, invstd, scale, dx, dscale, dshift, opts,
                               detail::WsArg(workspace, workspace_bytes), stream);
}
/** New dx, dscale (C,) and dshift (C,) (scale nullptr means 1). */
inline NormGrads batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& invstd, const TensorView* scale,
                                     const BatchNormOptions& opts = BatchNormOptions(),
                                     void* stream = nullptr) {
  return detail::batch_norm_backward_value_(x, dy, mean, invstd, scale, opts, detail::WsArg(),
                                            stream);
}
/** The same, with the caller's Workspace. */
inline NormGrads batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& invstd, const TensorView* scale,
                                     const BatchNormOptions& opts, Workspace& ws,
                                     void* stream = nullptr) {
  return detail::batch_norm_backward_value_(x, dy, mean, invstd, scale, opts, detail::WsArg(ws),
                                            stream);
}
/** With scale by reference (the options are required). */
inline NormGrads batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& invstd, const TensorView& scale,
                                     const BatchNormOptions& opts, void* stream = nullptr) {
  return detail::batch_norm_backward_value_(x, dy, mean, invstd, &scale, opts, detail::WsArg(),
                                            stream);
}

/* ---- layer_norm --------------------------------------------------------- */

namespace detail {
inline void layer_norm_(const TensorView& x, const TensorView* scale, const TensorView* shift,
                        const TensorView& y, const TensorView* mean, const TensorView* rstd,
                        const LayerNormOptions& opts, const WsArg& ws, void* stream,
                        const std::string& unsized = std::string()) {
  const CTLayerNormDesc* d = &opts.c();
  const CTensor* sc = opt_c(scale);
  const CTensor* sh = opt_c(shift);
  CTensor yc = y.c();
  OptOut mc(mean), rc(rstd);
  nn_call("ct::layer_norm", unsized, ws, x.device(),
          [&](size_t* n) {
            return ct_layer_norm_workspace_size(d, &x.c(), sc, sh, &yc, mc.get(), rc.get(), n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_layer_norm(d, &x.c(), sc, sh, &yc, mc.get(), rc.get(), p, n, s);
          },
          stream);
}
inline LayerNormResult layer_norm_value_(const TensorView& x, const TensorView* scale,
                                         const TensorView* shift, const LayerNormOptions& opts,
                                         const WsArg& ws, void* stream) {
  std::vector<int64_t> stats, params;
  std::string why;
  layer_norm_shapes(x.shape(), opts.c().normalized_ndim, stats, params, &why);
  LayerNormResult r;
  r.y = alloc_out(x.shape(), x.dtype(), x.device());
  r.mean = alloc_out(stats, dtype::float32, x.device());
  r.rstd = alloc_out(stats, dtype::float32, x.device());
  layer_norm_(x, scale, shift, r.y, &r.mean, &r.rstd, opts, ws, stream, why);
  return r;
}
}  // namespace detail

/** Bytes of workspace ct_layer_norm needs. */
inline size_t layer_norm_workspace_size(const TensorView& x, const TensorView* scale,
                                        const TensorView* shift, const TensorView& y,
                                        const TensorView* mean, const TensorView* rstd,
                                        const LayerNormOptions& opts = LayerNormOptions()) {
  CTensor yc = y.c();
  detail::OptOut mc(mean), rc(rstd);
  size_t n = 0;
  check(ct_layer_norm_workspace_size(&opts.c(), &x.c(), detail::opt_c(scale), detail::opt_c(shift),
                                     &yc, mc.get(), rc.get(), &n));
  return n;
}
/** y = (x - mean) * rstd * scale + shift over the last k axes; mean and
 *  rstd written unless nullptr; scale, shift nullptr: 1 and 0. */
inline void layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                       const TensorView& y, const TensorView* mean, const TensorView* rstd,
                       const LayerNormOptions& opts = LayerNormOptions(), void* stream = nullptr) {
  detail::layer_norm_(x, scale, shift, y, mean, rstd, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                       const TensorView& y, const TensorView* mean, const TensorView* rstd,
                       const LayerNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::layer_norm_(x, scale, shift, y, mean, rstd, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_layer_norm. */
inline void layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                       const TensorView& y, const TensorView* mean, const TensorView* rstd,
                       const LayerNormOptions& opts, void* workspace, size_t workspace_bytes,
                       void* stream = nullptr) {
  detail::layer_norm_(x, scale, shift, y, mean, rstd, opts, detail::WsArg(workspace, workspace_bytes),
                      stream);
}
/** New y, and mean and rstd of shape x.shape[:-k] (float32). */
inline LayerNormResult layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                  const LayerNormOptions& opts = LayerNormOptions(),
                                  void* stream = nullptr) {
  return detail::layer_norm_value_(x, scale, shift, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline LayerNormResult layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                  const LayerNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  return detail::layer_norm_value_(x, scale, shift, opts, detail::WsArg(ws), stream);
}
/** With scale and shift by reference (the options are required). */
inline LayerNormResult layer_norm(const TensorView& x, const TensorView& scale, const TensorView& shift,
                                  const LayerNormOptions& opts, void* stream = nullptr) {
  return detail::layer_norm_value_(x, &scale, &shift, opts, detail::WsArg(), stream);
}
/** Without scale and shift. */
inline LayerNormResult layer_norm(const TensorView& x, const LayerNormOptions& opts = LayerNormOptions(),
                                  void* stream = nullptr) {
  return detail::layer_norm_value_(x, nullptr, nullptr, opts, detail::WsArg(), stream);
}

/* ---- layer_norm_backward ------------------------------------------------ */

namespace detail {
inline void layer_norm_backward_(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                 const TensorView& rstd, const TensorView* scale, const TensorView& dx,
                                 const TensorView* dscale, const TensorView* dshift,
                                 const LayerNormOptions& opts, const WsArg& ws, void* stream,
                                 const std::string& unsized = std::string()) {
  const CTLayerNormDesc* d = &opts.c();
  const CTensor* sc = opt_c(scale);
  CTensor dxc = dx.c();
  OptOut ds(dscale), db(dshift);
  nn_call("ct::layer_norm_backward", unsized, ws, x.device(),
          [&](size_t* n) {
            return ct_layer_norm_backward_workspace_size(d, &x.c(), &dy.c(), &mean.c(), &rstd.c(), sc,
                                                         &dxc, ds.get(), db.get(), n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_layer_norm_backward(d, &x.c(), &dy.c(), &mean.c(), &rstd.c(), sc, &dxc,
                                          ds.get(), db.get(), p, n, s);
          },
          stream);
}
inline NormGrads layer_norm_backward_value_(const TensorView& x, const TensorView& dy,
                                            const TensorView& mean, const TensorView& rstd,
                                            const TensorView* scale, const LayerNormOptions& opts,
                                            const WsArg& ws, void* stream) {
  std::vector<int64_t> stats, params;
  std::string why;
  layer_norm_shapes(x.shape(), opts.c().normalized_ndim, stats, params, &why);
  NormGrads r;
  r.dx = alloc_out(x.shape(), x.dtype(), x.device());
  r.dscale = alloc_out(params, dtype::float32, x.device());
  r.dshift = alloc_out(params, dtype::float32, x.device());
  layer_norm_backward_(x, dy, mean, rstd, scale, r.dx, &r.dscale, &r.dshift, opts, ws, stream, why);
  return r;
}
}  // namespace detail

/** Bytes of workspace ct_layer_norm_backward needs. */
inline size_t layer_norm_backward_workspace_size(const TensorView& x, const TensorView& dy,
                                                 const TensorView& mean, const TensorView& rstd,
                                                 const TensorView* scale, const TensorView& dx,
                                                 const TensorView* dscale, const TensorView* dshift,
                                                 const LayerNormOptions& opts = LayerNormOptions()) {
  CTensor dxc = dx.c();
  detail::OptOut ds(dscale), db(dshift);
  size_t n = 0;
  check(ct_layer_norm_backward_workspace_size(&opts.c(), &x.c(), &dy.c(), &mean.c(), &rstd.c(),
                                              detail::opt_c(scale), &dxc, ds.get(), db.get(), &n));
  return n;
}
/** dx, and dscale = sum(dy * xhat), dshift = sum(dy) unless nullptr. */
inline void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& rstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const LayerNormOptions& opts = LayerNormOptions(),
                                void* stream = nullptr) {
  detail::layer_norm_backward_(x, dy, mean, rstd, scale, dx, dscale, dshift, opts, detail::WsArg(),
                               stream);
}
/** out= form with the caller's Workspace. */
inline void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& rstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const LayerNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::layer_norm_backward_(x, dy, mean, rstd, scale, dx, dscale, dshift, opts, detail::WsArg(ws),
                               stream);
}
/** out= form with the caller's buffer: exactly ct_layer_norm_backward. */
inline void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& rstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const LayerNormOptions& opts, void* workspace,
                                size_t workspace_bytes, void* stream = nullptr) {
  detail::layer_norm_backward_(x, dy, mean, rstd, scale, dx, dscale, dshift, opts,
                               detail::WsArg(workspace, workspace_bytes), stream);
}
/** New dx, and dscale, dshift of the normalised axes' shape (float32). */
inline NormGrads layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& rstd, const TensorView* scale,
                                     const LayerNormOptions& opts = LayerNormOptions(),
                                     void* stream = nullptr) {
  return detail::layer_norm_backward_value_(x, dy, mean, rstd, scale, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline NormGrads layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& rstd, const TensorView* scale,
                                     const LayerNormOptions& opts, Workspace& ws,
                                     void* stream = nullptr) {
  return detail::layer_norm_backward_value_(x, dy, mean, rstd, scale, opts, detail::WsArg(ws),
                                            stream);
}
/** With scale by reference (the options are required). */
inline NormGrads layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& rstd, const TensorView& scale,
                                     const LayerNormOptions& opts, void* stream = nullptr) {
  return detail::layer_norm_backward_value_(x, dy, mean, rstd, &scale, opts, detail::WsArg(), stream);
}

}  // namespace ct

#endif  // CTENSOR_CPP_NN_NORM_HPP_
