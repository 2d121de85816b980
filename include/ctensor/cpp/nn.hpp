// ctensor/cpp/nn.hpp: what every NN op of the wrapper shares: output shapes, result structs, the query-and-run call.
#ifndef CTENSOR_CPP_NN_HPP_
#define CTENSOR_CPP_NN_HPP_

#include "../ctensor.h"
#include "broadcast_reduce.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "nn_options.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"
#include "workspace.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ct {

/* ======================================================================== */
/* Category 3: NN ops with a workspace query                                 */
/* ======================================================================== */
/*
 * Option structs (chainable setters over the C descriptors), RAII workspaces
 * and plans, and one family of functions per entry point of CT_NN_OPS. Every
 * function takes, in this order: tensors, options, [workspace], stream.
 *
 *   ct::Conv2dOptions().stride(2).padding(1).groups(1).activation(ct::Activation::relu)
 *   ct::Pool2dOptions(3).stride(2).padding(1).count_include_pad(false)
 *   ct::BatchNormOptions().eps(1e-3)        ct::LayerNormOptions(2).eps(1e-6)
 *   ct::MatmulOptions().activation(ct::Activation::gelu)
 *
 * Options convert to their C descriptor (c(): a reference to the one inside;
 * or implicitly, by value, so `const CTConv2dDesc& d = ct::Conv2dOptions()...;`
 * is safe), struct_size set; a default-constructed one is the zeroed
 * descriptor (stride 1, no padding, ...), except that the normalisations'
 * epsilon defaults to PyTorch's 1e-5.
 *
 * For each op, e.g. conv2d (C tensor arguments x, w, bias?, y):
 *
 *   Tensor conv2d(x, w, [&bias | bias | nothing], opts = {}, stream = nullptr)
 *       new outputs, shapes computed here (conv2d_output_shape,
 *       pool2d_output_shape, matmul_output_shape); the workspace is
 *       allocated with ct_malloc for the call and freed on return
 *   Tensor conv2d(x, w, &bias, opts, Workspace& ws, stream = nullptr)
 *       the same, with the caller's workspace (grown to the query's size)
 *   void   conv2d(x, w, &bias, y, opts = {}, stream = nullptr)          (out=)
 *   void   conv2d(x, w, &bias, y, opts, Workspace& ws, stream = nullptr)
 *   void   conv2d(x, w, &bias, y, opts, void* workspace, size_t bytes, stream = nullptr)
 *       exactly the C call (no query: a short buffer is the library's
 *       CT_ERR_WORKSPACE_TOO_SMALL)
 *   size_t conv2d_workspace_size(x, w, &bias, y, opts = {})
 *
 * The out= and workspace_size forms take exactly ct_<op>'s tensor arguments
 * in order; an optional ("?") one is a `const TensorView*`, nullptr when
 * absent (&t of a Tensor or TensorView works). Forms taking an optional
 * tensor by reference need the options argument (so `ct::matmul(a, b, out)`
 * does not compile rather than read out as a bias). Ops with several outputs
 * return a struct (MaxPool2dResult, BatchNormResult, LayerNormResult,
 * NormGrads, Conv2dWeightGrads). Pool options have no default (the kernel is
 * required). Backward ops take the forward input's shape (x_shape, w_shape)
 * where the C call reads it from an output tensor. Data outputs have the
 * (first) data input's dtype; statistics, dscale and dshift are float32;
 * indices int64; conv2d_backward_weight's dbias has the data dtype. Every
 * failure throws ct::Error with the library's message; arguments the
 * wrapper cannot size an output for are validated by the library's
 * workspace query first, so the message is still the library's.
 *
 * @code
 *   ct::Tensor y = ct::conv2d(x, w, &b, ct::Conv2dOptions().padding(1));
 *   ct::Tensor p = ct::max_pool2d(y, ct::Pool2dOptions(2));
 *   ct::Tensor o = ct::matmul(p.reshape({n, -1}), fc, ct::MatmulOptions());
 *   ct::Plan plan = ct::Plan::conv2d(x, w, &b, y, opts);  // primitives created once
 *   ct::Workspace ws;
 *   plan.execute({&x, &w, &b, &y}, ws);                   // ws grows as needed
 * @endcode
 */

/* ------------------------------------------------------------------------ */
/* Output shapes                                                             */
/* ------------------------------------------------------------------------ */

namespace detail {
inline int64_t floor_div64(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// One spatial output extent, (in + pb + pe - dil * (k - 1) - 1) / stride + 1
// (floor), clamped at 0; false for parameters no output can be sized for.
inline bool window_extent(int64_t in, int64_t pb, int64_t pe, int64_t dil, int64_t k,
                          int64_t stride, int64_t* out) {
  if (dil == 0) dil = 1;
  if (stride <= 0 || dil < 0 || k < 1 || pb < 0 || pe < 0 || in < 0) return false;
  const int64_t p = floor_div64(in + pb + pe - dil * (k - 1) - 1, stride) + 1;
  *out = p < 0 ? 0 : p;
  return true;
}

inline bool conv2d_shape(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                         const CTConv2dDesc& d, std::vector<int64_t>& out, std::string* why) {
  out.assign(4, 0);
  if (x.size() != 4 || w.size() != 4) {
    if (why) *why = "x.shape=" + dims_str(x) + " and w.shape=" + dims_str(w) + " must be 4-d";
    return false;
  }
  out[0] = x[0];
  out[1] = w[0];
  for (int i = 0; i < 2; ++i) {
    if (!window_extent(x[2 + i], d.pad_begin[i], d.pad_end[i], d.dilation[i], w[2 + i],
                       d.stride[i] == 0 ? 1 : d.stride[i], &out[2 + i])) {
      if (why)
        *why = "no output extent along dim " + std::to_string(2 + i) + " for x.shape=" +
               dims_str(x) + ", w.shape=" + dims_str(w);
      out.assign(4, 0);
      return false;
    }
  }
  return true;
}

inline bool pool2d_shape(const std::vector<int64_t>& x, const CTPool2dDesc& d,
                         std::vector<int64_t>& out, std::string* why) {
  out.assign(4, 0);
  if (x.size() != 4) {
    if (why) *why = "x.shape=" + dims_str(x) + " must be 4-d";
    return false;
  }
  out[0] = x[0];
  out[1] = x[1];
  for (int i = 0; i < 2; ++i) {
    if (!window_extent(x[2 + i], d.pad_begin[i], d.pad_end[i], d.dilation[i], d.kernel[i],
                       d.stride[i] == 0 ? d.kernel[i] : d.stride[i], &out[2 + i])) {
      if (why)
        *why = "no output extent along dim " + std::to_string(2 + i) + " for x.shape=" +
               dims_str(x) + ", kernel (" + std::to_string(static_cast<long long>(d.kernel[0])) +
               ", " + std::to_string(static_cast<long long>(d.kernel[1])) + ")";
      out.assign(4, 0);
      return false;
    }
  }
  return true;
}

inline bool matmul_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                         std::vector<int64_t>& out, std::string* why) {
  out.assign(2, 0);
  if (a.size() < 2 || b.size() < 2) {
    if (why) *why = "a.shape=" + dims_str(a) + " and b.shape=" + dims_str(b) + " must be at least 2-d";
    return false;
  }
  std::vector<int64_t> batch;
  if (!try_broadcast(std::vector<int64_t>(a.begin(), a.end() - 2),
                     std::vector<int64_t>(b.begin(), b.end() - 2), batch, nullptr)) {
    if (why)
      *why = "the batch dims of a.shape=" + dims_str(a) + " and b.shape=" + dims_str(b) +
             " do not broadcast";
    return false;
  }
  out = batch;
  out.push_back(a[a.size() - 2]);
  out.push_back(b[b.size() - 1]);
  return true;
}

// layer_norm: x.shape without / with only its last k axes.
inline bool layer_norm_shapes(const std::vector<int64_t>& x, int32_t normalized_ndim,
                              std::vector<int64_t>& stats, std::vector<int64_t>& params,
                              std::string* why) {
  const int64_t k = normalized_ndim == 0 ? 1 : normalized_ndim;
  if (k < 1 || k > static_cast<int64_t>(x.size())) {
    if (why)
      *why = "normalized_ndim=" + std::to_string(static_cast<long long>(normalized_ndim)) +
             " is outside [1, x.ndim] for x.shape=" + dims_str(x);
    stats.assign(1, 0);
    params.assign(1, 0);
    return false;
  }
  const size_t split = x.size() - static_cast<size_t>(k);
  stats.assign(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(split));
  params.assign(x.begin() + static_cast<std::ptrdiff_t>(split), x.end());
  return true;
}

// batch_norm: (C,) for x of shape (N, C, ...).
inline bool channel_shape(const std::vector<int64_t>& x, std::vector<int64_t>& out,
                          std::string* why) {
  out.assign(1, 0);
  if (x.size() < 2) {
    if (why) *why = "x.shape=" + dims_str(x) + " has no channel dim 1";
    return false;
  }
  out[0] = x[1];
  return true;
}
}  // namespace detail

/** y's shape for conv2d of x (N, C, H, W) with w (K, C/groups, R, S):
 *  (N, K, P, Q), P = floor((H + pad_begin[0] + pad_end[0] - dilation[0] *
 *  (R - 1) - 1) / stride[0]) + 1 (clamped at 0), likewise Q. Throws
 *  CT_ERR_INVALID_ARGUMENT when no shape follows (not 4-d, negative stride
 *  or padding). */
inline std::vector<int64_t> conv2d_output_shape(const std::vector<int64_t>& x_shape,
                                                const std::vector<int64_t>& w_shape,
                                                const Conv2dOptions& opts = Conv2dOptions()) {
  std::vector<int64_t> out;
  std::string why;
  if (!detail::conv2d_shape(x_shape, w_shape, opts.c(), out, &why))
    detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::conv2d_output_shape: " + why);
  return out;
}

/** y's shape for pooling x (N, C, H, W): (N, C, P, Q) with the formula of
 *  conv2d_output_shape (stride 0 meaning the kernel). Throws
 *  CT_ERR_INVALID_ARGUMENT when no shape follows. */
inline std::vector<int64_t> pool2d_output_shape(const std::vector<int64_t>& x_shape,
                                                const Pool2dOptions& opts) {
  std::vector<int64_t> out;
  std::string why;
  if (!detail::pool2d_shape(x_shape, opts.c(), out, &why))
    detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::pool2d_output_shape: " + why);
  return out;
}

/** out's shape for matmul of a (..., M, K) and b (..., K, N): the broadcast
 *  batch dims, then (M, N). Throws CT_ERR_SHAPE_MISMATCH when no shape
 *  follows (K is not checked here: the library does). */
inline std::vector<int64_t> matmul_output_shape(const std::vector<int64_t>& a_shape,
                                                const std::vector<int64_t>& b_shape) {
  std::vector<int64_t> out;
  std::string why;
  if (!detail::matmul_shape(a_shape, b_shape, out, &why))
    detail::fail(CT_ERR_SHAPE_MISMATCH, "ct::matmul_output_shape: " + why);
  return out;
}

/* ------------------------------------------------------------------------ */
/* Running an NN call                                                        */
/* ------------------------------------------------------------------------ */

namespace detail {
// Where a call's workspace comes from: allocated for the call, a caller's
// Workspace grown to the query's size, or a caller's raw buffer (no query).
struct WsArg {
  enum Mode { kAllocate, kGrow, kCaller };
  Mode mode;
  Workspace* ws;
  void* ptr;
  size_t bytes;
  WsArg() noexcept : mode(kAllocate), ws(nullptr), ptr(nullptr), bytes(0) {}
  explicit WsArg(Workspace& w) noexcept : mode(kGrow), ws(&w), ptr(nullptr), bytes(0) {}
  WsArg(void* p, size_t n) noexcept : mode(kCaller), ws(nullptr), ptr(p), bytes(n) {}
};

inline std::string device_str(CTDevice d) {
  return "(" + std::to_string(d.device_type) + ", " + std::to_string(d.device_id) + ")";
}

// Size and run one call. @p unsized non-empty: the wrapper could not size an
// output (it was given a placeholder); the library's query validates the
// arguments and throws its own message; if it accepts them, ours is thrown.
template <class Size, class Run>
inline void nn_call(const char* who, const std::string& unsized, const WsArg& w, CTDevice device,
                    const Size& size, const Run& run, void* stream) {
  if (!unsized.empty()) {
    size_t ignored = 0;
    check(size(&ignored));
    fail(CT_ERR_INVALID_ARGUMENT, std::string(who) + ": " + unsized);
  }
  if (w.mode == WsArg::kCaller) {
    check(run(w.ptr, w.bytes, stream));
    return;
  }
  size_t bytes = 0;
  check(size(&bytes));
  if (bytes == 0) {
    check(run(nullptr, 0, stream));
    return;
  }
  if (w.mode == WsArg::kGrow) {
    if (!same_device(w.ws->device(), device)) {
      if (w.ws->size() != 0)
        fail(CT_ERR_DEVICE_MISMATCH, std::string(who) + ": the workspace is on device " +
                                         device_str(w.ws->device()) + ", the tensors on " +
                                         device_str(device));
      *w.ws = Workspace(bytes, device);
    }
    w.ws->reserve(bytes);
    check(run(w.ws->data(), w.ws->size(), stream));
    return;
  }
  Workspace scratch(bytes, device);
  check(run(scratch.data(), scratch.size(), stream));
}

inline const CTensor* opt_c(const TensorView* t) noexcept { return t ? &t->c() : nullptr; }

// A mutable copy of an optional output's CTensor.
struct OptOut {
  CTensor c;
  bool has;
  explicit OptOut(const TensorView* t) noexcept : has(t != nullptr) {
    if (t) c = t->c();
  }
  CTensor* get() noexcept { return has ? &c : nullptr; }
};

inline Tensor alloc_out(const std::vector<int64_t>& shape, CTDataType dt, CTDevice device) {
  return Tensor::empty(shape, dt, device);
}
}  // namespace detail

/** Result of ct::max_pool2d_with_indices. */
struct MaxPool2dResult {
  Tensor y;       /**< (N, C, P, Q), x's dtype */
  Tensor indices; /**< (N, C, P, Q) int64: h * W + w of each max within its (n, c) plane */
};

/** Result of ct::conv2d_backward_weight. */
struct Conv2dWeightGrads {
  Tensor dw;    /**< w's shape, x's dtype */
  Tensor dbias; /**< (K,), x's dtype; empty without with_bias */
};

/** Result of ct::batch_norm_training. */
struct BatchNormResult {
  Tensor y;      /**< x's shape and dtype */
  Tensor mean;   /**< (C,) float32 batch mean */
  Tensor invstd; /**< (C,) float32, 1 / sqrt(biased variance + eps) */
};

/** Result of ct::layer_norm. */
struct LayerNormResult {
  Tensor y;    /**< x's shape and dtype */
  Tensor mean; /**< x.shape without the normalised axes, float32 */
  Tensor rstd; /**< same shape, float32, 1 / sqrt(biased variance + eps) */
};

/** Result of ct::batch_norm_backward and ct::layer_norm_backward. */
struct NormGrads {
  Tensor dx;     /**< x's shape and dtype */
  Tensor dscale; /**< scale's shape ((C,) or the normalised axes), float32 */
  Tensor dshift; /**< same shape, float32 */
};

}  // namespace ct

#endif  // CTENSOR_CPP_NN_HPP_
