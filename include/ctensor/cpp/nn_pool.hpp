// ctensor/cpp/nn_pool.hpp: ct::max_pool2d, ct::avg_pool2d and their backward ops, every form.
#ifndef CTENSOR_CPP_NN_POOL_HPP_
#define CTENSOR_CPP_NN_POOL_HPP_

#include "../ctensor.h"
#include "dtype.hpp"
#include "error.hpp"
#include "nn.hpp"
#include "nn_options.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"
#include "workspace.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ct {

/* ---- max_pool2d --------------------------------------------------------- */

namespace detail {
inline void max_pool2d_(const TensorView& x, const TensorView& y, const TensorView* indices,
                        const Pool2dOptions& opts, const WsArg& ws, void* stream,
                        const std::string& unsized = std::string()) {
  const CTPool2dDesc* d = &opts.c();
  CTensor yc = y.c();
  OptOut ic(indices);
  nn_call("ct::max_pool2d", unsized, ws, x.device(),
          [&](size_t* n) { return ct_max_pool2d_workspace_size(d, &x.c(), &yc, ic.get(), n); },
          [&](void* p, size_t n, void* s) { return ct_max_pool2d(d, &x.c(), &yc, ic.get(), p, n, s); },
          stream);
}
inline MaxPool2dResult max_pool2d_value_(const TensorView& x, bool with_indices,
                                         const Pool2dOptions& opts, const WsArg& ws, void* stream) {
  std::vector<int64_t> shape;
  std::string why;
  pool2d_shape(x.shape(), opts.c(), shape, &why);
  MaxPool2dResult r;
  r.y = alloc_out(shape, x.dtype(), x.device());
  if (with_indices) r.indices = alloc_out(shape, dtype::int64, x.device());
  max_pool2d_(x, r.y, with_indices ? &r.indices : nullptr, opts, ws, stream, why);
  return r;
}
}  // namespace detail

/** Bytes of workspace ct_max_pool2d needs. */
inline size_t max_pool2d_workspace_size(const TensorView& x, const TensorView& y,
                                        const TensorView* indices, const Pool2dOptions& opts) {
  CTensor yc = y.c();
  detail::OptOut ic(indices);
  size_t n = 0;
  check(ct_max_pool2d_workspace_size(&opts.c(), &x.c(), &yc, ic.get(), &n));
  return n;
}
/** y = window max, and the int64 argmax positions into @p indices unless nullptr. */
inline void max_pool2d(const TensorView& x, const TensorView& y, const TensorView* indices,
                       const Pool2dOptions& opts, void* stream = nullptr) {
  detail::max_pool2d_(x, y, indices, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void max_pool2d(const TensorView& x, const TensorView& y, const TensorView* indices,
                       const Pool2dOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::max_pool2d_(x, y, indices, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_max_pool2d. */
inline void max_pool2d(const TensorView& x, const TensorView& y, const TensorView* indices,
                       const Pool2dOptions& opts, void* workspace, size_t workspace_bytes,
                       void* stream = nullptr) {
  detail::max_pool2d_(x, y, indices, opts, detail::WsArg(workspace, workspace_bytes), stream);
}
/** Window max into a new (N, C, P, Q) tensor (no indices: inference). */
inline Tensor max_pool2d(const TensorView& x, const Pool2dOptions& opts, void* stream = nullptr) {
  return detail::max_pool2d_value_(x, false, opts, detail::WsArg(), stream).y;
}
/** The same, with the caller's Workspace. */
inline Tensor max_pool2d(const TensorView& x, const Pool2dOptions& opts, Workspace& ws,
                         void* stream = nullptr) {
  return detail::max_pool2d_value_(x, false, opts, detail::WsArg(ws), stream).y;
}
/** Window max and its int64 indices (for max_pool2d_backward), both new. */
inline MaxPool2dResult max_pool2d_with_indices(const TensorView& x, const Pool2dOptions& opts,
                                               void* stream = nullptr) {
  return detail::max_pool2d_value_(x, true, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline MaxPool2dResult max_pool2d_with_indices(const TensorView& x, const Pool2dOptions& opts,
                                               Workspace& ws, void* stream = nullptr) {
  return detail::max_pool2d_value_(x, true, opts, detail::WsArg(ws), stream);
}

/* ---- max_pool2d_backward ------------------------------------------------ */

namespace detail {
inline void max_pool2d_backward_(const TensorView& dy, const TensorView& indices, const TensorView& dx,
                                 const Pool2dOptions& opts, const WsArg& ws, void* stream) {
  const CTPool2dDesc* d = &opts.c();
  CTensor dxc = dx.c();
  nn_call("ct::max_pool2d_backward", std::string(), ws, dy.device(),
          [&](size_t* n) {
            return ct_max_pool2d_backward_workspace_size(d, &dy.c(), &indices.c(), &dxc, n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_max_pool2d_backward(d, &dy.c(), &indices.c(), &dxc, p, n, s);
          },
          stream);
}
}  // namespace detail

/** Bytes of workspace ct_max_pool2d_backward needs. */
inline size_t max_pool2d_backward_workspace_size(const TensorView& dy, const TensorView& indices,
                                                 const TensorView& dx, const Pool2dOptions& opts) {
  CTensor dxc = dx.c();
  size_t n = 0;
  check(ct_max_pool2d_backward_workspace_size(&opts.c(), &dy.c(), &indices.c(), &dxc, &n));
  return n;
}
/** dx (overwritten) = dy routed to @p indices. */
inline void max_pool2d_backward(const TensorView& dy, const TensorView& indices, const TensorView& dx,
                                const Pool2dOptions& opts, void* stream = nullptr) {
  detail::max_pool2d_backward_(dy, indices, dx, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void max_pool2d_backward(const TensorView& dy, const TensorView& indices, const TensorView& dx,
                                const Pool2dOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::max_pool2d_backward_(dy, indices, dx, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_max_pool2d_backward. */
inline void max_pool2d_backward(const TensorView& dy, const TensorView& indices, const TensorView& dx,
                                const Pool2dOptions& opts, void* workspace, size_t workspace_bytes,
                                void* stream = nullptr) {
  detail::max_pool2d_backward_(dy, indices, dx, opts, detail::WsArg(workspace, workspace_bytes),
                               stream);
}
/** A new dx of shape @p x_shape, dy's dtype and device. */
inline Tensor max_pool2d_backward(const TensorView& dy, const TensorView& indices,
                                  const std::vector<int64_t>& x_shape, const Pool2dOptions& opts,
                                  void* stream = nullptr) {
  Tensor dx = detail::alloc_out(x_shape, dy.dtype(), dy.device());
  detail::max_pool2d_backward_(dy, indices, dx, opts, detail::WsArg(), stream);
  return dx;
}
/** The same, with the caller's Workspace. */
inline Tensor max_pool2d_backward(const TensorView& dy, const TensorView& indices,
                                  const std::vector<int64_t>& x_shape, const Pool2dOptions& opts,
                                  Workspace& ws, void* stream = nullptr) {
  Tensor dx = detail::alloc_out(x_shape, dy.dtype(), dy.device());
  detail::max_pool2d_backward_(dy, indices, dx, opts, detail::WsArg(ws), stream);
  return dx;
}

/* ---- avg_pool2d --------------------------------------------------------- */

namespace detail {
inline void avg_pool2d_(const TensorView& x, const TensorView& y, const Pool2dOptions& opts,
                        const WsArg& ws, void* stream, const std::string& unsized = std::string()) {
  const CTPool2dDesc* d = &opts.c();
  CTensor yc = y.c();
  nn_call("ct::avg_pool2d", unsized, ws, x.device(),
          [&](size_t* n) { return ct_avg_pool2d_workspace_size(d, &x.c(), &yc, n); },
          [&](void* p, size_t n, void* s) { return ct_avg_pool2d(d, &x.c(), &yc, p, n, s); }, stream);
}
inline Tensor avg_pool2d_value_(const TensorView& x, const Pool2dOptions& opts, const WsArg& ws,
                                void* stream) {
  std::vector<int64_t> shape;
  std::string why;
  pool2d_shape(x.shape(), opts.c(), shape, &why);
  Tensor y = alloc_out(shape, x.dtype(), x.device());
  avg_pool2d_(x, y, opts, ws, stream, why);
  return y;
}
}  // namespace detail

/** Bytes of workspace ct_avg_pool2d needs. */
inline size_t avg_pool2d_workspace_size(const TensorView& x, const TensorView& y,
                                        const Pool2dOptions& opts) {
  CTensor yc = y.c();
  size_t n = 0;
  check(ct_avg_pool2d_workspace_size(&opts.c(), &x.c(), &yc, &n));
  return n;
}
/** y = window mean (count_include_pad either way). */
inline void avg_pool2d(const TensorView& x, const TensorView& y, const Pool2dOptions& opts,
                       void* stream = nullptr) {
  detail::avg_pool2d_(x, y, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void avg_pool2d(const TensorView& x, const TensorView& y, const Pool2dOptions& opts,
                       Workspace& ws, void* stream = nullptr) {
  detail::avg_pool2d_(x, y, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_avg_pool2d. */
inline void avg_pool2d(const TensorView& x, const TensorView& y, const Pool2dOptions& opts,
                       void* workspace, size_t workspace_bytes, void* stream = nullptr) {
  detail::avg_pool2d_(x, y, opts, detail::WsArg(workspace, workspace_bytes), stream);
}
/** Window mean into a new (N, C, P, Q) tensor. */
inline Tensor avg_pool2d(const TensorView& x, const Pool2dOptions& opts, void* stream = nullptr) {
  return detail::avg_pool2d_value_(x, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline Tensor avg_pool2d(const TensorView& x, const Pool2dOptions& opts, Workspace& ws,
                         void* stream = nullptr) {
  return detail::avg_pool2d_value_(x, opts, detail::WsArg(ws), stream);
}

/* ---- avg_pool2d_backward ------------------------------------------------ */

namespace detail {
inline void avg_pool2d_backward_(const TensorView& dy, const TensorView& dx, const Pool2dOptions& opts,
                                 const WsArg& ws, void* stream) {
  const CTPool2dDesc* d = &opts.c();
  CTensor dxc = dx.c();
  nn_call("ct::avg_pool2d_backward", std::string(), ws, dy.device(),
          [&](size_t* n) { return ct_avg_pool2d_backward_workspace_size(d, &dy.c(), &dxc, n); },
          [&](void* p, size_t n, void* s) { return ct_avg_pool2d_backward(d, &dy.c(), &dxc, p, n, s); },
          stream);
}
}  // namespace detail

/** Bytes of workspace ct_avg_pool2d_backward needs. */
inline size_t avg_pool2d_backward_workspace_size(const TensorView& dy, const TensorView& dx,
                                                 const Pool2dOptions& opts) {
  CTensor dxc = dx.c();
  size_t n = 0;
  check(ct_avg_pool2d_backward_workspace_size(&opts.c(), &dy.c(), &dxc, &n));
  return n;
}
/** dx (overwritten; its shape fixes H, W) from dy. */
inline void avg_pool2d_backward(const TensorView& dy, const TensorView& dx, const Pool2dOptions& opts,
                                void* stream = nullptr) {
  detail::avg_pool2d_backward_(dy, dx, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void avg_pool2d_backward(const TensorView& dy, const TensorView& dx, const Pool2dOptions& opts,
                                Workspace& ws, void* stream = nullptr) {
  detail::avg_pool2d_backward_(dy, dx, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_avg_pool2d_backward. */
inline void avg_pool2d_backward(const TensorView& dy, const TensorView& dx, const Pool2dOptions& opts,
                                void* workspace, size_t workspace_bytes, void* stream = nullptr) {
  detail::avg_pool2d_backward_(dy, dx, opts, detail::WsArg(workspace, workspace_bytes), stream);
}
/** A new dx of shape @p x_shape, dy's dtype and device. */
inline Tensor avg_pool2d_backward(const TensorView& dy, const std::vector<int64_t>& x_shape,
                                  const Pool2dOptions& opts, void* stream = nullptr) {
  Tensor dx = detail::alloc_out(x_shape, dy.dtype(), dy.device());
  detail::avg_pool2d_backward_(dy, dx, opts, detail::WsArg(), stream);
  return dx;
}
/** The same, with the caller's Workspace. */
inline Tensor avg_pool2d_backward(const TensorView& dy, const std::vector<int64_t>& x_shape,
                                  const Pool2dOptions& opts, Workspace& ws, void* stream = nullptr) {
  Tensor dx = detail::alloc_out(x_shape, dy.dtype(), dy.device());
  detail::avg_pool2d_backward_(dy, dx, opts, detail::WsArg(ws), stream);
  return dx;
}

}  // namespace ct

#endif  // CTENSOR_CPP_NN_POOL_HPP_
