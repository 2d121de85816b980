// ctensor/cpp/nn_conv.hpp: ct::matmul, ct::conv2d and the conv2d backward ops: one-liners over ct::nn.
//
// Each function is ct::nn (out=), ct::nn_outputs (new outputs) or
// ct::nn_workspace_size with the op's id and ct_<op>'s tensor arguments in
// order; nn.hpp says what the forms share.
#ifndef CTENSOR_CPP_NN_CONV_HPP_
#define CTENSOR_CPP_NN_CONV_HPP_

#include "../ctensor_nn.h"
#include "nn.hpp"
#include "nn_options.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"
#include "workspace.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ct {

/* ---- matmul: a, b, bias? | out ------------------------------------------ */

/** Bytes of workspace ct_matmul needs for these tensors (out's data is not read). */
inline size_t matmul_workspace_size(const TensorView& a, const TensorView& b, const TensorView* bias,
                                    const TensorView& out, const MatmulOptions& opts = MatmulOptions()) {
  return nn_workspace_size(CT_OP_MATMUL, opts, {&a, &b, bias, &out});
}
/** out = act(a @ b + bias) into @p out (bias nullptr: none). */
inline void matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                   const TensorView& out, const MatmulOptions& opts = MatmulOptions(),
                   void* stream = nullptr) {
  nn(CT_OP_MATMUL, opts, {&a, &b, bias, &out}, stream);
}
/** out= form with the caller's Workspace, grown as needed. */
inline void matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                   const TensorView& out, const MatmulOptions& opts, Workspace& ws,
                   void* stream = nullptr) {
  nn(CT_OP_MATMUL, opts, {&a, &b, bias, &out}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                   const TensorView& out, const MatmulOptions& opts, void* workspace,
                   size_t workspace_bytes, void* stream = nullptr) {
  nn(CT_OP_MATMUL, opts, {&a, &b, bias, &out}, workspace, workspace_bytes, stream);
}
/** act(a @ b + bias) into a new tensor (broadcast batch dims, then (M, N)). */
inline Tensor matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                     const MatmulOptions& opts = MatmulOptions(), void* stream = nullptr) {
  return nn_outputs(CT_OP_MATMUL, opts, {&a, &b, bias}, NNOutputs(), stream)[0];
}
/** The same, with the caller's Workspace. */
inline Tensor matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                     const MatmulOptions& opts, Workspace& ws, void* stream = nullptr) {
  return nn_outputs(CT_OP_MATMUL, opts, {&a, &b, bias}, NNOutputs(), ws, stream)[0];
}
/** act(a @ b + bias), bias by reference (the options are required). */
inline Tensor matmul(const TensorView& a, const TensorView& b, const TensorView& bias,
                     const MatmulOptions& opts, void* stream = nullptr) {
  return matmul(a, b, &bias, opts, stream);
}
/** act(a @ b): ct::matmul(a, b). */
inline Tensor matmul(const TensorView& a, const TensorView& b,
                     const MatmulOptions& opts = MatmulOptions(), void* stream = nullptr) {
  return matmul(a, b, nullptr, opts, stream);
}

/* ---- conv2d: x, w, bias? | y -------------------------------------------- */

/** Bytes of workspace ct_conv2d needs for these tensors. */
inline size_t conv2d_workspace_size(const TensorView& x, const TensorView& w, const TensorView* bias,
                                    const TensorView& y, const Conv2dOptions& opts = Conv2dOptions()) {
  return nn_workspace_size(CT_OP_CONV2D, opts, {&x, &w, bias, &y});
}
/** y = act(conv2d(x, w) + bias) into @p y (bias nullptr: none). */
inline void conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                   const TensorView& y, const Conv2dOptions& opts = Conv2dOptions(),
                   void* stream = nullptr) {
  nn(CT_OP_CONV2D, opts, {&x, &w, bias, &y}, stream);
}
/** out= form with the caller's Workspace, grown as needed. */
inline void conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                   const TensorView& y, const Conv2dOptions& opts, Workspace& ws,
                   void* stream = nullptr) {
  nn(CT_OP_CONV2D, opts, {&x, &w, bias, &y}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                   const TensorView& y, const Conv2dOptions& opts, void* workspace,
                   size_t workspace_bytes, void* stream = nullptr) {
  nn(CT_OP_CONV2D, opts, {&x, &w, bias, &y}, workspace, workspace_bytes, stream);
}
/** act(conv2d(x, w) + bias) into a new (N, K, P, Q) tensor of x's dtype and device. */
inline Tensor conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                     const Conv2dOptions& opts = Conv2dOptions(), void* stream = nullptr) {
  return nn_outputs(CT_OP_CONV2D, opts, {&x, &w, bias}, NNOutputs(), stream)[0];
}
/** The same, with the caller's Workspace. */
inline Tensor conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                     const Conv2dOptions& opts, Workspace& ws, void* stream = nullptr) {
  return nn_outputs(CT_OP_CONV2D, opts, {&x, &w, bias}, NNOutputs(), ws, stream)[0];
}
/** With bias by reference (the options are required). */
inline Tensor conv2d(const TensorView& x, const TensorView& w, const TensorView& bias,
                     const Conv2dOptions& opts, void* stream = nullptr) {
  return conv2d(x, w, &bias, opts, stream);
}
/** Without bias. */
inline Tensor conv2d(const TensorView& x, const TensorView& w,
                     const Conv2dOptions& opts = Conv2dOptions(), void* stream = nullptr) {
  return conv2d(x, w, nullptr, opts, stream);
}

/* ---- conv2d_backward_data: dy, w | dx ----------------------------------- */

/** Bytes of workspace ct_conv2d_backward_data needs. */
inline size_t conv2d_backward_data_workspace_size(const TensorView& dy, const TensorView& w,
                                                  const TensorView& dx,
                                                  const Conv2dOptions& opts = Conv2dOptions()) {
  return nn_workspace_size(CT_OP_CONV2D_BACKWARD_DATA, opts, {&dy, &w, &dx});
}
/** dx (whose shape fixes H, W) from dy and w. */
inline void conv2d_backward_data(const TensorView& dy, const TensorView& w, const TensorView& dx,
                                 const Conv2dOptions& opts = Conv2dOptions(), void* stream = nullptr) {
  nn(CT_OP_CONV2D_BACKWARD_DATA, opts, {&dy, &w, &dx}, stream);
}
/** out= form with the caller's Workspace. */
inline void conv2d_backward_data(const TensorView& dy, const TensorView& w, const TensorView& dx,
                                 const Conv2dOptions& opts, Workspace& ws, void* stream = nullptr) {
  nn(CT_OP_CONV2D_BACKWARD_DATA, opts, {&dy, &w, &dx}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void conv2d_backward_data(const TensorView& dy, const TensorView& w, const TensorView& dx,
                                 const Conv2dOptions& opts, void* workspace, size_t workspace_bytes,
                                 void* stream = nullptr) {
  nn(CT_OP_CONV2D_BACKWARD_DATA, opts, {&dy, &w, &dx}, workspace, workspace_bytes, stream);
}
/** A new dx of shape @p x_shape (the forward's x), of the library's dtype for dy. */
inline Tensor conv2d_backward_data(const TensorView& dy, const TensorView& w,
                                   const std::vector<int64_t>& x_shape,
                                   const Conv2dOptions& opts = Conv2dOptions(), void* stream = nullptr) {
  return nn_outputs(CT_OP_CONV2D_BACKWARD_DATA, opts, {&dy, &w}, NNOutputs().shape(0, x_shape), stream)[0];
}
/** The same, with the caller's Workspace. */
inline Tensor conv2d_backward_data(const TensorView& dy, const TensorView& w,
                                   const std::vector<int64_t>& x_shape, const Conv2dOptions& opts,
                                   Workspace& ws, void* stream = nullptr) {
  return nn_outputs(CT_OP_CONV2D_BACKWARD_DATA, opts, {&dy, &w}, NNOutputs().shape(0, x_shape), ws,
                    stream)[0];
}

/* ---- conv2d_backward_weight: x, dy | dw, dbias? ------------------------- */

/** Bytes of workspace ct_conv2d_backward_weight needs. */
inline size_t conv2d_backward_weight_workspace_size(const TensorView& x, const TensorView& dy,
                                                    const TensorView& dw, const TensorView* dbias,
                                                    const Conv2dOptions& opts = Conv2dOptions()) {
  return nn_workspace_size(CT_OP_CONV2D_BACKWARD_WEIGHT, opts, {&x, &dy, &dw, dbias});
}
/** dw, and dbias (dy summed over N, P, Q) unless nullptr. */
inline void conv2d_backward_weight(const TensorView& x, const TensorView& dy, const TensorView& dw,
                                   const TensorView* dbias, const Conv2dOptions& opts = Conv2dOptions(),
                                   void* stream = nullptr) {
  nn(CT_OP_CONV2D_BACKWARD_WEIGHT, opts, {&x, &dy, &dw, dbias}, stream);
}
/** out= form with the caller's Workspace. */
inline void conv2d_backward_weight(const TensorView& x, const TensorView& dy, const TensorView& dw,
                                   const TensorView* dbias, const Conv2dOptions& opts, Workspace& ws,
                                   void* stream = nullptr) {
  nn(CT_OP_CONV2D_BACKWARD_WEIGHT, opts, {&x, &dy, &dw, dbias}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void conv2d_backward_weight(const TensorView& x, const TensorView& dy, const TensorView& dw,
                                   const TensorView* dbias, const Conv2dOptions& opts,
                                   void* workspace, size_t workspace_bytes, void* stream = nullptr) {
  nn(CT_OP_CONV2D_BACKWARD_WEIGHT, opts, {&x, &dy, &dw, dbias}, workspace, workspace_bytes, stream);
}
/** New dw of shape @p w_shape, and dbias (K,) when @p with_bias (the library's dtypes). */
inline Conv2dWeightGrads conv2d_backward_weight(const TensorView& x, const TensorView& dy,
                                                const std::vector<int64_t>& w_shape,
                                                bool with_bias = false,
                                                const Conv2dOptions& opts = Conv2dOptions(),
                                                void* stream = nullptr) {
  return detail::take2<Conv2dWeightGrads>(nn_outputs(
      CT_OP_CONV2D_BACKWARD_WEIGHT, opts, {&x, &dy}, NNOutputs().shape(0, w_shape).allocate(1, with_bias),
      stream));
}
/** The same, with the caller's Workspace. */
inline Conv2dWeightGrads conv2d_backward_weight(const TensorView& x, const TensorView& dy,
                                                const std::vector<int64_t>& w_shape, bool with_bias,
                                                const Conv2dOptions& opts, Workspace& ws,
                                                void* stream = nullptr) {
  return detail::take2<Conv2dWeightGrads>(nn_outputs(
      CT_OP_CONV2D_BACKWARD_WEIGHT, opts, {&x, &dy}, NNOutputs().shape(0, w_shape).allocate(1, with_bias),
      ws, stream));
}

}  // namespace ct

#endif  // CTENSOR_CPP_NN_CONV_HPP_
