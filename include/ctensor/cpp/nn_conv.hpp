// ctensor/cpp/nn_conv.hpp: ct::matmul, ct::conv2d and the conv2d backward ops, every form.
#ifndef CTENSOR_CPP_NN_CONV_HPP_
#define CTENSOR_CPP_NN_CONV_HPP_

#include "../ctensor.h"
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

/* ---- matmul ------------------------------------------------------------- */

namespace detail {
inline void matmul_(const TensorView& a, const TensorView& b, const TensorView* bias,
                    const TensorView& out, const MatmulOptions& opts, const WsArg& w,
                    void* stream, const std::string& unsized = std::string()) {
  const CTMatmulDesc* d = &opts.c();
  const CTensor* bc = opt_c(bias);
  CTensor oc = out.c();
  nn_call("ct::matmul", unsized, w, a.device(),
          [&](size_t* n) { return ct_matmul_workspace_size(d, &a.c(), &b.c(), bc, &oc, n); },
          [&](void* p, size_t n, void* s) { return ct_matmul(d, &a.c(), &b.c(), bc, &oc, p, n, s); },
          stream);
}
inline Tensor matmul_value_(const TensorView& a, const TensorView& b, const TensorView* bias,
                            const MatmulOptions& opts, const WsArg& w, void* stream) {
  std::vector<int64_t> shape;
  std::string why;
  matmul_shape(a.shape(), b.shape(), shape, &why);
  Tensor out = alloc_out(shape, a.dtype(), a.device());
  matmul_(a, b, bias, out, opts, w, stream, why);
  return out;
}
}  // namespace detail

/** Bytes of workspace ct_matmul needs for these tensors (out's data is not read). */
inline size_t matmul_workspace_size(const TensorView& a, const TensorView& b, const TensorView* bias,
                                    const TensorView& out, const MatmulOptions& opts = MatmulOptions()) {
  CTensor oc = out.c();
  size_t n = 0;
  check(ct_matmul_workspace_size(&opts.c(), &a.c(), &b.c(), detail::opt_c(bias), &oc, &n));
  return n;
}
/** out = act(a @ b + bias) into @p out (bias nullptr: none). */
inline void matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                   const TensorView& out, const MatmulOptions& opts = MatmulOptions(),
                   void* stream = nullptr) {
  detail::matmul_(a, b, bias, out, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace, grown as needed. */
inline void matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                   const TensorView& out, const MatmulOptions& opts, Workspace& ws,
                   void* stream = nullptr) {
  detail::matmul_(a, b, bias, out, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_matmul. */
inline void matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                   const TensorView& out, const MatmulOptions& opts, void* workspace,
                   size_t workspace_bytes, void* stream = nullptr) {
  detail::matmul_(a, b, bias, out, opts, detail::WsArg(workspace, workspace_bytes), stream);
}
/** act(a @ b + bias) into a new tensor of matmul_output_shape, a's dtype and device. */
inline Tensor matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                     const MatmulOptions& opts = MatmulOptions(), void* stream = nullptr) {
  return detail::matmul_value_(a, b, bias, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline Tensor matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                     const MatmulOptions& opts, Workspace& ws, void* stream = nullptr) {
  return detail::matmul_value_(a, b, bias, opts, detail::WsArg(ws), stream);
}
/** act(a @ b + bias), bias by reference (the options are required). */
inline Tensor matmul(const TensorView& a, const TensorView& b, const TensorView& bias,
                     const MatmulOptions& opts, void* stream = nullptr) {
  return detail::matmul_value_(a, b, &bias, opts, detail::WsArg(), stream);
}
/** act(a @ b): ct::matmul(a, b). */
inline Tensor matmul(const TensorView& a, const TensorView& b,
                     const MatmulOptions& opts = MatmulOptions(), void* stream = nullptr) {
  return detail::matmul_value_(a, b, nullptr, opts, detail::WsArg(), stream);
}

/* ---- conv2d ------------------------------------------------------------- */

namespace detail {
inline void conv2d_(const TensorView& x, const TensorView& w, const TensorView* bias,
                    const TensorView& y, const Conv2dOptions& opts, const WsArg& ws,
                    void* stream, const std::string& unsized = std::string()) {
  const CTConv2dDesc* d = &opts.c();
  const CTensor* bc = opt_c(bias);
  CTensor yc = y.c();
  nn_call("ct::conv2d", unsized, ws, x.device(),
          [&](size_t* n) { return ct_conv2d_workspace_size(d, &x.c(), &w.c(), bc, &yc, n); },
          [&](void* p, size_t n, void* s) { return ct_conv2d(d, &x.c(), &w.c(), bc, &yc, p, n, s); },
          stream);
}
inline Tensor conv2d_value_(const TensorView& x, const TensorView& w, const TensorView* bias,
                            const Conv2dOptions& opts, const WsArg& ws, void* stream) {
  std::vector<int64_t> shape;
  std::string why;
  conv2d_shape(x.shape(), w.shape(), opts.c(), shape, &why);
  Tensor y = alloc_out(shape, x.dtype(), x.device());
  conv2d_(x, w, bias, y, opts, ws, stream, why);
  return y;
}
}  // namespace detail

/** Bytes of workspace ct_conv2d needs for these tensors. */
inline size_t conv2d_workspace_size(const TensorView& x, const TensorView& w, const TensorView* bias,
                                    const TensorView& y, const Conv2dOptions& opts = Conv2dOptions()) {
  CTensor yc = y.c();
  size_t n = 0;
  check(ct_conv2d_workspace_size(&opts.c(), &x.c(), &w.c(), detail::opt_c(bias), &yc, &n));
  return n;
}
/** y = act(conv2d(x, w) + bias) into @p y (bias nullptr: none). */
inline void conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                   const TensorView& y, const Conv2dOptions& opts = Conv2dOptions(),
                   void* stream = nullptr) {
  detail::conv2d_(x, w, bias, y, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace, grown as needed. */
inline void conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                   const TensorView& y, const Conv2dOptions& opts, Workspace& ws,
                   void* stream = nullptr) {
  detail::conv2d_(x, w, bias, y, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_conv2d. */
inline void conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                   const TensorView& y, const Conv2dOptions& opts, void* workspace,
                   size_t workspace_bytes, void* stream = nullptr) {
  detail::conv2d_(x, w, bias, y, opts, detail::WsArg(workspace, workspace_bytes), stream);
}
/** act(conv2d(x, w) + bias) into a new (N, K, P, Q) tensor of x's dtype and device. */
inline Tensor conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                     const Conv2dOptions& opts = Conv2dOptions(), void* stream = nullptr) {
  return detail::conv2d_value_(x, w, bias, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline Tensor conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                     const Conv2dOptions& opts, Workspace& ws, void* stream = nullptr) {
  return detail::conv2d_value_(x, w, bias, opts, detail::WsArg(ws), stream);
}
/** With bias by reference (the options are required). */
inline Tensor conv2d(const TensorView& x, const TensorView& w, const TensorView& bias,
                     const Conv2dOptions& opts, void* stream = nullptr) {
  return detail::conv2d_value_(x, w, &bias, opts, detail::WsArg(), stream);
}
/** Without bias. */
inline Tensor conv2d(const TensorView& x, const TensorView& w,
                     const Conv2dOptions& opts = Conv2dOptions(), void* stream = nullptr) {
  return detail::conv2d_value_(x, w, nullptr, opts, detail::WsArg(), stream);
}

/* ---- conv2d_backward_data ----------------------------------------------- */

namespace detail {
inline void conv2d_backward_data_(const TensorView& dy, const TensorView& w, const TensorView& dx,
                                  const Conv2dOptions& opts, const WsArg& ws, void* stream) {
  const CTConv2dDesc* d = &opts.c();
  CTensor dxc = dx.c();
  nn_call("ct::conv2d_backward_data", std::string(), ws, dy.device(),
          [&](size_t* n) { return ct_conv2d_backward_data_workspace_size(d, &dy.c(), &w.c(), &dxc, n); },
          [&](void* p, size_t n, void* s) {
            return ct_conv2d_backward_data(d, &dy.c(), &w.c(), &dxc, p, n, s);
          },
          stream);
}
}  // namespace detail

/** Bytes of workspace ct_conv2d_backward_data needs. */
inline size_t conv2d_backward_data_workspace_size(const TensorView& dy, const TensorView& w,
                                                  const TensorView& dx,
                                                  const Conv2dOptions& opts = Conv2dOptions()) {
  CTensor dxc = dx.c();
  size_t n = 0;
  check(ct_conv2d_backward_data_workspace_size(&opts.c(), &dy.c(), &w.c(), &dxc, &n));
  return n;
}
/** dx (whose shape fixes H, W) from dy and w. */
inline void conv2d_backward_data(const TensorView& dy, const TensorView& w, const TensorView& dx,
                                 const Conv2dOptions& opts = Conv2dOptions(), void* stream = nullptr) {
  detail::conv2d_backward_data_(dy, w, dx, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void conv2d_backward_data(const TensorView& dy, const TensorView& w, const TensorView& dx,
                                 const Conv2dOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::conv2d_backward_data_(dy, w, dx, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_conv2d_backward_data. */
inline void conv2d_backward_data(const TensorView& dy, const TensorView& w, const TensorView& dx,
                                 const Conv2dOptions& opts, void* workspace, size_t workspace_bytes,
                                 void* stream = nullptr) {
  detail::conv2d_backward_data_(dy, w, dx, opts, detail::WsArg(workspace, workspace_bytes), stream);
}
/** A new dx of shape @p x_shape (the forward's x), dy's dtype and device. */
inline Tensor conv2d_backward_data(const TensorView& dy, const TensorView& w,
                                   const std::vector<int64_t>& x_shape,
                                   const Conv2dOptions& opts = Conv2dOptions(), void* stream = nullptr) {
  Tensor dx = detail::alloc_out(x_shape, dy.dtype(), dy.device());
  detail::conv2d_backward_data_(dy, w, dx, opts, detail::WsArg(), stream);
  return dx;
}
/** The same, with the caller's Workspace. */
inline Tensor conv2d_backward_data(const TensorView& dy, const TensorView& w,
                                   const std::vector<int64_t>& x_shape, const Conv2dOptions& opts,
                                   Workspace& ws, void* stream = nullptr) {
  Tensor dx = detail::alloc_out(x_shape, dy.dtype(), dy.device());
  detail::conv2d_backward_data_(dy, w, dx, opts, detail::WsArg(ws), stream);
  return dx;
}

/* ---- conv2d_backward_weight --------------------------------------------- */

namespace detail {
inline void conv2d_backward_weight_(const TensorView& x, const TensorView& dy, const TensorView& dw,
                                    const TensorView* dbias, const Conv2dOptions& opts,
                                    const WsArg& ws, void* stream,
                                    const std::string& unsized = std::string()) {
  const CTConv2dDesc* d = &opts.c();
  CTensor dwc = dw.c();
  OptOut db(dbias);
  nn_call("ct::conv2d_backward_weight", unsized, ws, x.device(),
          [&](size_t* n) {
            return ct_conv2d_backward_weight_workspace_size(d, &x.c(), &dy.c(), &dwc, db.get(), n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_conv2d_backward_weight(d, &x.c(), &dy.c(), &dwc, db.get(), p, n, s);
          },
          stream);
}
inline Conv2dWeightGrads conv2d_backward_weight_value_(const TensorView& x, const TensorView& dy,
                                                       const std::vector<int64_t>& w_shape,
                                                       bool with_bias, const Conv2dOptions& opts,
                                                       const WsArg& ws, void* stream) {
  Conv2dWeightGrads r;
  r.dw = alloc_out(w_shape, x.dtype(), x.device());
  std::string why;
  if (with_bias) {
    if (w_shape.empty()) why = "w_shape=[] has no K for dbias";
    r.dbias = alloc_out(std::vector<int64_t>(1, w_shape.empty() ? 0 : w_shape[0]), x.dtype(),
                        x.device());
  }
  conv2d_backward_weight_(x, dy, r.dw, with_bias ? &r.dbias : nullptr, opts, ws, stream, why);
  return r;
}
}  // namespace detail

/** Bytes of workspace ct_conv2d_backward_weight needs. */
inline size_t conv2d_backward_weight_workspace_size(const TensorView& x, const TensorView& dy,
                                                    const TensorView& dw, const TensorView* dbias,
                                                    const Conv2dOptions& opts = Conv2dOptions()) {
  CTensor dwc = dw.c();
  detail::OptOut db(dbias);
  size_t n = 0;
  check(ct_conv2d_backward_weight_workspace_size(&opts.c(), &x.c(), &dy.c(), &dwc, db.get(), &n));
  return n;
}
/** dw, and dbias (dy summed over N, P, Q) unless nullptr. */
inline void conv2d_backward_weight(const TensorView& x, const TensorView& dy, const TensorView& dw,
                                   const TensorView* dbias, const Conv2dOptions& opts = Conv2dOptions(),
                                   void* stream = nullptr) {
  detail::conv2d_backward_weight_(x, dy, dw, dbias, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void conv2d_backward_weight(const TensorView& x, const TensorView& dy, const TensorView& dw,
                                   const TensorView* dbias, const Conv2dOptions& opts, Workspace& ws,
                                   void* stream = nullptr) {
  detail::conv2d_backward_weight_(x, dy, dw, dbias, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_conv2d_backward_weight. */
inline void conv2d_backward_weight(const TensorView& x, const TensorView& dy, const TensorView& dw,
                                   const TensorView* dbias, const Conv2dOptions& opts,
                                   void* workspace, size_t workspace_bytes, void* stream = nullptr) {
  detail::conv2d_backward_weight_(x, dy, dw, dbias, opts, detail::WsArg(workspace, workspace_bytes),
                                  stream);
}
/** New dw of shape @p w_shape (x's dtype and device), and dbias (K,) when @p with_bias. */
inline Conv2dWeightGrads conv2d_backward_weight(const TensorView& x, const TensorView& dy,
                                                const std::vector<int64_t>& w_shape,
                                                bool with_bias = false,
                                                const Conv2dOptions& opts = Conv2dOptions(),
                                                void* stream = nullptr) {
  return detail::conv2d_backward_weight_value_(x, dy, w_shape, with_bias, opts, detail::WsArg(),
                                               stream);
}
/** The same, with the caller's Workspace. */
inline Conv2dWeightGrads conv2d_backward_weight(const TensorView& x, const TensorView& dy,
                                                const std::vector<int64_t>& w_shape, bool with_bias,
                                                const Conv2dOptions& opts, Workspace& ws,
                                                void* stream = nullptr) {
  return detail::conv2d_backward_weight_value_(x, dy, w_shape, with_bias, opts, detail::WsArg(ws),
                                               stream);
}

}  // namespace ct

#endif  // CTENSOR_CPP_NN_CONV_HPP_
