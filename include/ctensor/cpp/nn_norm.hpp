// ctensor/cpp/nn_norm.hpp: ct::batch_norm, ct::layer_norm, their training and backward ops: one-liners over ct::nn.
//
// Each function is ct::nn (out=), ct::nn_outputs (new outputs) or
// ct::nn_workspace_size with the op's id and ct_<op>'s tensor arguments in
// order; nn.hpp says what the forms share. Statistics, scale and shift (and
// their gradients) are float32, with the shapes the library gives.
#ifndef CTENSOR_CPP_NN_NORM_HPP_
#define CTENSOR_CPP_NN_NORM_HPP_

#include "../ctensor_nn.h"
#include "nn.hpp"
#include "nn_options.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"
#include "workspace.hpp"

#include <cstddef>

namespace ct {

/* ---- batch_norm (inference): x, mean, var, scale?, shift? | y ----------- */

/** Bytes of workspace ct_batch_norm needs. */
inline size_t batch_norm_workspace_size(const TensorView& x, const TensorView& mean,
                                        const TensorView& var, const TensorView* scale,
                                        const TensorView* shift, const TensorView& y,
                                        const BatchNormOptions& opts = BatchNormOptions()) {
  return nn_workspace_size(CT_OP_BATCH_NORM, opts, {&x, &mean, &var, scale, shift, &y});
}
/** y = (x - mean) / sqrt(var + eps) * scale + shift with running statistics
 *  (scale, shift nullptr: 1 and 0). */
inline void batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                       const TensorView* scale, const TensorView* shift, const TensorView& y,
                       const BatchNormOptions& opts = BatchNormOptions(), void* stream = nullptr) {
  nn(CT_OP_BATCH_NORM, opts, {&x, &mean, &var, scale, shift, &y}, stream);
}
/** out= form with the caller's Workspace. */
inline void batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                       const TensorView* scale, const TensorView* shift, const TensorView& y,
                       const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  nn(CT_OP_BATCH_NORM, opts, {&x, &mean, &var, scale, shift, &y}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                       const TensorView* scale, const TensorView* shift, const TensorView& y,
                       const BatchNormOptions& opts, void* workspace, size_t workspace_bytes,
                       void* stream = nullptr) {
  nn(CT_OP_BATCH_NORM, opts, {&x, &mean, &var, scale, shift, &y}, workspace, workspace_bytes, stream);
}
/** Inference batch norm into a new tensor of x's shape, dtype and device. */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const TensorView* scale, const TensorView* shift,
                         const BatchNormOptions& opts = BatchNormOptions(), void* stream = nullptr) {
  return nn_outputs(CT_OP_BATCH_NORM, opts, {&x, &mean, &var, scale, shift}, NNOutputs(), stream)[0];
}
/** The same, with the caller's Workspace. */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const TensorView* scale, const TensorView* shift,
                         const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  return nn_outputs(CT_OP_BATCH_NORM, opts, {&x, &mean, &var, scale, shift}, NNOutputs(), ws, stream)[0];
}
/** With scale and shift by reference (the options are required). */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const TensorView& scale, const TensorView& shift,
                         const BatchNormOptions& opts, void* stream = nullptr) {
  return batch_norm(x, mean, var, &scale, &shift, opts, stream);
}
/** Without scale and shift. */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const BatchNormOptions& opts = BatchNormOptions(), void* stream = nullptr) {
  return batch_norm(x, mean, var, nullptr, nullptr, opts, stream);
}

/* ---- batch_norm_training: x, scale?, shift? | y, mean, invstd ----------- */

/** Bytes of workspace ct_batch_norm_training needs. */
inline size_t batch_norm_training_workspace_size(const TensorView& x, const TensorView* scale,
                                                 const TensorView* shift, const TensorView& y,
                                                 const TensorView& mean, const TensorView& invstd,
                                                 const BatchNormOptions& opts = BatchNormOptions()) {
  return nn_workspace_size(CT_OP_BATCH_NORM_TRAINING, opts, {&x, scale, shift, &y, &mean, &invstd});
}
/** Batch statistics: y, the per-channel mean and invstd = 1 / sqrt(v + eps). */
inline void batch_norm_training(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                const TensorView& y, const TensorView& mean, const TensorView& invstd,
                                const BatchNormOptions& opts = BatchNormOptions(),
                                void* stream = nullptr) {
  nn(CT_OP_BATCH_NORM_TRAINING, opts, {&x, scale, shift, &y, &mean, &invstd}, stream);
}
/** out= form with the caller's Workspace. */
inline void batch_norm_training(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                const TensorView& y, const TensorView& mean, const TensorView& invstd,
                                const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  nn(CT_OP_BATCH_NORM_TRAINING, opts, {&x, scale, shift, &y, &mean, &invstd}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void batch_norm_training(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                const TensorView& y, const TensorView& mean, const TensorView& invstd,
                                const BatchNormOptions& opts, void* workspace,
                                size_t workspace_bytes, void* stream = nullptr) {
  nn(CT_OP_BATCH_NORM_TRAINING, opts, {&x, scale, shift, &y, &mean, &invstd}, workspace, workspace_bytes,
     stream);
}
/** New y, mean (C,) and invstd (C,). */
inline BatchNormResult batch_norm_training(const TensorView& x, const TensorView* scale,
                                           const TensorView* shift,
                                           const BatchNormOptions& opts = BatchNormOptions(),
                                           void* stream = nullptr) {
  return detail::take3<BatchNormResult>(
      nn_outputs(CT_OP_BATCH_NORM_TRAINING, opts, {&x, scale, shift}, NNOutputs(), stream));
}
/** The same, with the caller's Workspace. */
inline BatchNormResult batch_norm_training(const TensorView& x, const TensorView* scale,
                                           const TensorView* shift, const BatchNormOptions& opts,
                                           Workspace& ws, void* stream = nullptr) {
  return detail::take3<BatchNormResult>(
      nn_outputs(CT_OP_BATCH_NORM_TRAINING, opts, {&x, scale, shift}, NNOutputs(), ws, stream));
}
/** With scale and shift by reference (the options are required). */
inline BatchNormResult batch_norm_training(const TensorView& x, const TensorView& scale,
                                           const TensorView& shift, const BatchNormOptions& opts,
                                           void* stream = nullptr) {
  return batch_norm_training(x, &scale, &shift, opts, stream);
}
/** Without scale and shift. */
inline BatchNormResult batch_norm_training(const TensorView& x,
                                           const BatchNormOptions& opts = BatchNormOptions(),
                                           void* stream = nullptr) {
  return batch_norm_training(x, nullptr, nullptr, opts, stream);
}

/* ---- batch_norm_backward: x, dy, mean, invstd, scale? | dx, dscale?, dshift? */

/** Bytes of workspace ct_batch_norm_backward needs. */
inline size_t batch_norm_backward_workspace_size(const TensorView& x, const TensorView& dy,
                                                 const TensorView& mean, const TensorView& invstd,
                                                 const TensorView* scale, const TensorView& dx,
                                                 const TensorView* dscale, const TensorView* dshift,
                                                 const BatchNormOptions& opts = BatchNormOptions()) {
  return nn_workspace_size(CT_OP_BATCH_NORM_BACKWARD, opts, {&x, &dy, &mean, &invstd, scale, &dx, dscale, dshift});
}
/** dx, and dscale, dshift unless nullptr (scale nullptr means 1). */
inline void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& invstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const BatchNormOptions& opts = BatchNormOptions(),
                                void* stream = nullptr) {
  nn(CT_OP_BATCH_NORM_BACKWARD, opts, {&x, &dy, &mean, &invstd, scale, &dx, dscale, dshift}, stream);
}
/** out= form with the caller's Workspace. */
inline void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& invstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  nn(CT_OP_BATCH_NORM_BACKWARD, opts, {&x, &dy, &mean, &invstd, scale, &dx, dscale, dshift}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& invstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const BatchNormOptions& opts, void* workspace,
                                size_t workspace_bytes, void* stream = nullptr) {
  nn(CT_OP_BATCH_NORM_BACKWARD, opts, {&x, &dy, &mean, &invstd, scale, &dx, dscale, dshift}, workspace,
     workspace_bytes, stream);
}
/** New dx, dscale (C,) and dshift (C,) (scale nullptr means 1). */
inline NormGrads batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& invstd, const TensorView* scale,
                                     const BatchNormOptions& opts = BatchNormOptions(),
                                     void* stream = nullptr) {
  return detail::take3<NormGrads>(
      nn_outputs(CT_OP_BATCH_NORM_BACKWARD, opts, {&x, &dy, &mean, &invstd, scale}, NNOutputs(), stream));
}
/** The same, with the caller's Workspace. */
inline NormGrads batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& invstd, const TensorView* scale,
                                     const BatchNormOptions& opts, Workspace& ws,
                                     void* stream = nullptr) {
  return detail::take3<NormGrads>(
      nn_outputs(CT_OP_BATCH_NORM_BACKWARD, opts, {&x, &dy, &mean, &invstd, scale}, NNOutputs(), ws, stream));
}
/** With scale by reference (the options are required). */
inline NormGrads batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& invstd, const TensorView& scale,
                                     const BatchNormOptions& opts, void* stream = nullptr) {
  return batch_norm_backward(x, dy, mean, invstd, &scale, opts, stream);
}

/* ---- layer_norm: x, scale?, shift? | y, mean?, rstd? -------------------- */

/** Bytes of workspace ct_layer_norm needs. */
inline size_t layer_norm_workspace_size(const TensorView& x, const TensorView* scale,
                                        const TensorView* shift, const TensorView& y,
                                        const TensorView* mean, const TensorView* rstd,
                                        const LayerNormOptions& opts = LayerNormOptions()) {
  return nn_workspace_size(CT_OP_LAYER_NORM, opts, {&x, scale, shift, &y, mean, rstd});
}
/** y = (x - mean) * rstd * scale + shift over the last k axes; mean and
 *  rstd written unless nullptr; scale, shift nullptr: 1 and 0. */
inline void layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                       const TensorView& y, const TensorView* mean, const TensorView* rstd,
                       const LayerNormOptions& opts = LayerNormOptions(), void* stream = nullptr) {
  nn(CT_OP_LAYER_NORM, opts, {&x, scale, shift, &y, mean, rstd}, stream);
}
/** out= form with the caller's Workspace. */
inline void layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                       const TensorView& y, const TensorView* mean, const TensorView* rstd,
                       const LayerNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  nn(CT_OP_LAYER_NORM, opts, {&x, scale, shift, &y, mean, rstd}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                       const TensorView& y, const TensorView* mean, const TensorView* rstd,
                       const LayerNormOptions& opts, void* workspace, size_t workspace_bytes,
                       void* stream = nullptr) {
  nn(CT_OP_LAYER_NORM, opts, {&x, scale, shift, &y, mean, rstd}, workspace, workspace_bytes, stream);
}
/** New y, and mean and rstd of shape x.shape[:-k] (float32). */
inline LayerNormResult layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                  const LayerNormOptions& opts = LayerNormOptions(),
                                  void* stream = nullptr) {
  return detail::take3<LayerNormResult>(
      nn_outputs(CT_OP_LAYER_NORM, opts, {&x, scale, shift}, NNOutputs(), stream));
}
/** The same, with the caller's Workspace. */
inline LayerNormResult layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                  const LayerNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  return detail::take3<LayerNormResult>(
      nn_outputs(CT_OP_LAYER_NORM, opts, {&x, scale, shift}, NNOutputs(), ws, stream));
}
/** With scale and shift by reference (the options are required). */
inline LayerNormResult layer_norm(const TensorView& x, const TensorView& scale, const TensorView& shift,
                                  const LayerNormOptions& opts, void* stream = nullptr) {
  return layer_norm(x, &scale, &shift, opts, stream);
}
/** Without scale and shift. */
inline LayerNormResult layer_norm(const TensorView& x, const LayerNormOptions& opts = LayerNormOptions(),
                                  void* stream = nullptr) {
  return layer_norm(x, nullptr, nullptr, opts, stream);
}

/* ---- layer_norm_backward: x, dy, mean, rstd, scale? | dx, dscale?, dshift? */

/** Bytes of workspace ct_layer_norm_backward needs. */
inline size_t layer_norm_backward_workspace_size(const TensorView& x, const TensorView& dy,
                                                 const TensorView& mean, const TensorView& rstd,
                                                 const TensorView* scale, const TensorView& dx,
                                                 const TensorView* dscale, const TensorView* dshift,
                                                 const LayerNormOptions& opts = LayerNormOptions()) {
  return nn_workspace_size(CT_OP_LAYER_NORM_BACKWARD, opts, {&x, &dy, &mean, &rstd, scale, &dx, dscale, dshift});
}
/** dx, and dscale = sum(dy * xhat), dshift = sum(dy) unless nullptr. */
inline void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& rstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const LayerNormOptions& opts = LayerNormOptions(),
                                void* stream = nullptr) {
  nn(CT_OP_LAYER_NORM_BACKWARD, opts, {&x, &dy, &mean, &rstd, scale, &dx, dscale, dshift}, stream);
}
/** out= form with the caller's Workspace. */
inline void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& rstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const LayerNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  nn(CT_OP_LAYER_NORM_BACKWARD, opts, {&x, &dy, &mean, &rstd, scale, &dx, dscale, dshift}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& rstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const LayerNormOptions& opts, void* workspace,
                                size_t workspace_bytes, void* stream = nullptr) {
  nn(CT_OP_LAYER_NORM_BACKWARD, opts, {&x, &dy, &mean, &rstd, scale, &dx, dscale, dshift}, workspace,
     workspace_bytes, stream);
}
/** New dx, and dscale, dshift of the normalised axes' shape (float32). */
inline NormGrads layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& rstd, const TensorView* scale,
                                     const LayerNormOptions& opts = LayerNormOptions(),
                                     void* stream = nullptr) {
  return detail::take3<NormGrads>(
      nn_outputs(CT_OP_LAYER_NORM_BACKWARD, opts, {&x, &dy, &mean, &rstd, scale}, NNOutputs(), stream));
}
/** The same, with the caller's Workspace. */
inline NormGrads layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& rstd, const TensorView* scale,
                                     const LayerNormOptions& opts, Workspace& ws,
                                     void* stream = nullptr) {
  return detail::take3<NormGrads>(
      nn_outputs(CT_OP_LAYER_NORM_BACKWARD, opts, {&x, &dy, &mean, &rstd, scale}, NNOutputs(), ws, stream));
}
/** With scale by reference (the options are required). */
inline NormGrads layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& rstd, const TensorView& scale,
                                     const LayerNormOptions& opts, void* stream = nullptr) {
  return layer_norm_backward(x, dy, mean, rstd, &scale, opts, stream);
}

}  // namespace ct

#endif  // CTENSOR_CPP_NN_NORM_HPP_
