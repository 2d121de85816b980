// ctensor/cpp/nn_pool.hpp: ct::max_pool2d, ct::avg_pool2d and their backward ops: one-liners over ct::nn.
//
// Each function is ct::nn (out=), ct::nn_outputs (new outputs) or
// ct::nn_workspace_size with the op's id and ct_<op>'s tensor arguments in
// order; nn.hpp says what the forms share.
#ifndef CTENSOR_CPP_NN_POOL_HPP_
#define CTENSOR_CPP_NN_POOL_HPP_

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

/* ---- max_pool2d: x | y, indices? ---------------------------------------- */

/** Bytes of workspace ct_max_pool2d needs. */
inline size_t max_pool2d_workspace_size(const TensorView& x, const TensorView& y,
                                        const TensorView* indices, const Pool2dOptions& opts) {
  return nn_workspace_size(CT_OP_MAX_POOL2D, opts, {&x, &y, indices});
}
/** y = window max, and the int64 argmax positions into @p indices unless nullptr. */
inline void max_pool2d(const TensorView& x, const TensorView& y, const TensorView* indices,
                       const Pool2dOptions& opts, void* stream = nullptr) {
  nn(CT_OP_MAX_POOL2D, opts, {&x, &y, indices}, stream);
}
/** out= form with the caller's Workspace. */
inline void max_pool2d(const TensorView& x, const TensorView& y, const TensorView* indices,
                       const Pool2dOptions& opts, Workspace& ws, void* stream = nullptr) {
  nn(CT_OP_MAX_POOL2D, opts, {&x, &y, indices}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void max_pool2d(const TensorView& x, const TensorView& y, const TensorView* indices,
                       const Pool2dOptions& opts, void* workspace, size_t workspace_bytes,
                       void* stream = nullptr) {
  nn(CT_OP_MAX_POOL2D, opts, {&x, &y, indices}, workspace, workspace_bytes, stream);
}
/** Window max into a new (N, C, P, Q) tensor (no indices: inference). */
inline Tensor max_pool2d(const TensorView& x, const Pool2dOptions& opts, void* stream = nullptr) {
  return nn_outputs(CT_OP_MAX_POOL2D, opts, {&x}, NNOutputs().skip(1), stream)[0];
}
/** The same, with the caller's Workspace. */
inline Tensor max_pool2d(const TensorView& x, const Pool2dOptions& opts, Workspace& ws,
                         void* stream = nullptr) {
  return nn_outputs(CT_OP_MAX_POOL2D, opts, {&x}, NNOutputs().skip(1), ws, stream)[0];
}
/** Window max and its int64 indices (for max_pool2d_backward), both new. */
inline MaxPool2dResult max_pool2d_with_indices(const TensorView& x, const Pool2dOptions& opts,
                                               void* stream = nullptr) {
  return detail::take2<MaxPool2dResult>(nn_outputs(CT_OP_MAX_POOL2D, opts, {&x}, NNOutputs(), stream));
}
/** The same, with the caller's Workspace. */
inline MaxPool2dResult max_pool2d_with_indices(const TensorView& x, const Pool2dOptions& opts,
                                               Workspace& ws, void* stream = nullptr) {
  return detail::take2<MaxPool2dResult>(nn_outputs(CT_OP_MAX_POOL2D, opts, {&x}, NNOutputs(), ws, stream));
}

/* ---- max_pool2d_backward: dy, indices | dx ------------------------------ */

/** Bytes of workspace ct_max_pool2d_backward needs. */
inline size_t max_pool2d_backward_workspace_size(const TensorView& dy, const TensorView& indices,
                                                 const TensorView& dx, const Pool2dOptions& opts) {
  return nn_workspace_size(CT_OP_MAX_POOL2D_BACKWARD, opts, {&dy, &indices, &dx});
}
/** dx (overwritten) = dy routed to @p indices. */
inline void max_pool2d_backward(const TensorView& dy, const TensorView& indices, const TensorView& dx,
                                const Pool2dOptions& opts, void* stream = nullptr) {
  nn(CT_OP_MAX_POOL2D_BACKWARD, opts, {&dy, &indices, &dx}, stream);
}
/** out= form with the caller's Workspace. */
inline void max_pool2d_backward(const TensorView& dy, const TensorView& indices, const TensorView& dx,
                                const Pool2dOptions& opts, Workspace& ws, void* stream = nullptr) {
  nn(CT_OP_MAX_POOL2D_BACKWARD, opts, {&dy, &indices, &dx}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void max_pool2d_backward(const TensorView& dy, const TensorView& indices, const TensorView& dx,
                                const Pool2dOptions& opts, void* workspace, size_t workspace_bytes,
                                void* stream = nullptr) {
  nn(CT_OP_MAX_POOL2D_BACKWARD, opts, {&dy, &indices, &dx}, workspace, workspace_bytes, stream);
}
/** A new dx of shape @p x_shape (the forward's x), of the library's dtype for dy. */
inline Tensor max_pool2d_backward(const TensorView& dy, const TensorView& indices,
                                  const std::vector<int64_t>& x_shape, const Pool2dOptions& opts,
                                  void* stream = nullptr) {
  return nn_outputs(CT_OP_MAX_POOL2D_BACKWARD, opts, {&dy, &indices}, NNOutputs().shape(0, x_shape),
                    stream)[0];
}
/** The same, with the caller's Workspace. */
inline Tensor max_pool2d_backward(const TensorView& dy, const TensorView& indices,
                                  const std::vector<int64_t>& x_shape, const Pool2dOptions& opts,
                                  Workspace& ws, void* stream = nullptr) {
  return nn_outputs(CT_OP_MAX_POOL2D_BACKWARD, opts, {&dy, &indices}, NNOutputs().shape(0, x_shape), ws,
                    stream)[0];
}

/* ---- avg_pool2d: x | y -------------------------------------------------- */

/** Bytes of workspace ct_avg_pool2d needs. */
inline size_t avg_pool2d_workspace_size(const TensorView& x, const TensorView& y,
                                        const Pool2dOptions& opts) {
  return nn_workspace_size(CT_OP_AVG_POOL2D, opts, {&x, &y});
}
/** y = window mean (count_include_pad either way). */
inline void avg_pool2d(const TensorView& x, const TensorView& y, const Pool2dOptions& opts,
                       void* stream = nullptr) {
  nn(CT_OP_AVG_POOL2D, opts, {&x, &y}, stream);
}
/** out= form with the caller's Workspace. */
inline void avg_pool2d(const TensorView& x, const TensorView& y, const Pool2dOptions& opts,
                       Workspace& ws, void* stream = nullptr) {
  nn(CT_OP_AVG_POOL2D, opts, {&x, &y}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void avg_pool2d(const TensorView& x, const TensorView& y, const Pool2dOptions& opts,
                       void* workspace, size_t workspace_bytes, void* stream = nullptr) {
  nn(CT_OP_AVG_POOL2D, opts, {&x, &y}, workspace, workspace_bytes, stream);
}
/** Window mean into a new (N, C, P, Q) tensor. */
inline Tensor avg_pool2d(const TensorView& x, const Pool2dOptions& opts, void* stream = nullptr) {
  return nn_outputs(CT_OP_AVG_POOL2D, opts, {&x}, NNOutputs(), stream)[0];
}
/** The same, with the caller's Workspace. */
inline Tensor avg_pool2d(const TensorView& x, const Pool2dOptions& opts, Workspace& ws,
                         void* stream = nullptr) {
  return nn_outputs(CT_OP_AVG_POOL2D, opts, {&x}, NNOutputs(), ws, stream)[0];
}

/* ---- avg_pool2d_backward: dy | dx --------------------------------------- */

/** Bytes of workspace ct_avg_pool2d_backward needs. */
inline size_t avg_pool2d_backward_workspace_size(const TensorView& dy, const TensorView& dx,
                                                 const Pool2dOptions& opts) {
  return nn_workspace_size(CT_OP_AVG_POOL2D_BACKWARD, opts, {&dy, &dx});
}
/** dx (overwritten; its shape fixes H, W) from dy. */
inline void avg_pool2d_backward(const TensorView& dy, const TensorView& dx, const Pool2dOptions& opts,
                                void* stream = nullptr) {
  nn(CT_OP_AVG_POOL2D_BACKWARD, opts, {&dy, &dx}, stream);
}
/** out= form with the caller's Workspace. */
inline void avg_pool2d_backward(const TensorView& dy, const TensorView& dx, const Pool2dOptions& opts,
                                Workspace& ws, void* stream = nullptr) {
  nn(CT_OP_AVG_POOL2D_BACKWARD, opts, {&dy, &dx}, ws, stream);
}
/** out= form with the caller's buffer: exactly the C call, no query. */
inline void avg_pool2d_backward(const TensorView& dy, const TensorView& dx, const Pool2dOptions& opts,
                                void* workspace, size_t workspace_bytes, void* stream = nullptr) {
  nn(CT_OP_AVG_POOL2D_BACKWARD, opts, {&dy, &dx}, workspace, workspace_bytes, stream);
}
/** A new dx of shape @p x_shape (the forward's x), of the library's dtype for dy. */
inline Tensor avg_pool2d_backward(const TensorView& dy, const std::vector<int64_t>& x_shape,
                                  const Pool2dOptions& opts, void* stream = nullptr) {
  return nn_outputs(CT_OP_AVG_POOL2D_BACKWARD, opts, {&dy}, NNOutputs().shape(0, x_shape), stream)[0];
}
/** The same, with the caller's Workspace. */
inline Tensor avg_pool2d_backward(const TensorView& dy, const std::vector<int64_t>& x_shape,
                                  const Pool2dOptions& opts, Workspace& ws, void* stream = nullptr) {
  return nn_outputs(CT_OP_AVG_POOL2D_BACKWARD, opts, {&dy}, NNOutputs().shape(0, x_shape), ws, stream)[0];
}

}  // namespace ct

#endif  // CTENSOR_CPP_NN_POOL_HPP_
