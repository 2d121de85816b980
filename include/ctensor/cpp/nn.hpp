// ctensor/cpp/nn.hpp: any NN op by id (ct::nn, ct::nn_outputs), driven by the op description; result structs.
#ifndef CTENSOR_CPP_NN_HPP_
#define CTENSOR_CPP_NN_HPP_

#include "../ctensor_nn.h"
#include "dtype.hpp"
#include "error.hpp"
#include "nn_options.hpp"
#include "op_info.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"
#include "workspace.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ct {

/* ======================================================================== */
/* Category 3: NN ops with a workspace query                                 */
/* ======================================================================== */
/*
 * Option structs (chainable setters over the C descriptors), RAII workspaces
 * and plans, one generic implementation over ct_nn driven by the op id, and
 * one family of thin functions per entry point of CT_NN_OPS over it. Every
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
 * epsilon defaults to PyTorch's 1e-5. Each also converts to ct::NNDesc, the
 * descriptor argument of the generic forms.
 *
 * The generic forms, for any NN op id (CTOpInfo says its tensors, in
 * order, which are outputs and optional, and which descriptor it takes):
 *
 *   void   nn(op, desc, tensors, stream = nullptr)          exactly ct_nn's
 *   void   nn(op, desc, tensors, Workspace& ws, stream = nullptr)  tensor list
 *   void   nn(op, desc, tensors, void* workspace, size_t bytes, stream = nullptr)
 *   size_t nn_workspace_size(op, desc, tensors)
 *   std::vector<Tensor> nn_outputs(op, desc, inputs, which = {}, [Workspace& ws,] stream = nullptr)
 *       inputs only; every output new, shaped and typed by ct_op_output_info
 *       (ct::output_info), which also validates the inputs first
 *
 * For each op, e.g. conv2d (C tensor arguments x, w, bias?, y), one-liners
 * over those:
 *
 *   Tensor conv2d(x, w, [&bias | bias | nothing], opts = {}, stream = nullptr)
 *       new outputs (ct::nn_outputs); the workspace is allocated with
 *       ct_malloc for the call and freed on return
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
 * where the C call reads it from an output tensor (the inputs do not fix it:
 * stride leftovers). Output shapes and dtypes are the library's
 * (ct_op_output_info): the wrapper has no copy of the rules. Every failure
 * throws ct::Error with the library's message (ct_op_output_info's for the
 * inputs of a value form, ct_nn_workspace_size's or ct_nn's for a call).
 *
 * @code
 *   ct::Tensor y = ct::conv2d(x, w, &b, ct::Conv2dOptions().padding(1));
 *   ct::Tensor p = ct::max_pool2d(y, ct::Pool2dOptions(2));
 *   ct::Tensor o = ct::matmul(p.reshape({n, -1}), fc, ct::MatmulOptions());
 *   std::vector<ct::Tensor> r = ct::nn_outputs(CT_OP_LAYER_NORM, ct::LayerNormOptions(), {&x, nullptr, nullptr});
 *   ct::Plan plan = ct::Plan::conv2d(x, w, &b, y, opts);  // primitives created once
 *   ct::Workspace ws;
 *   plan.execute({&x, &w, &b, &y}, ws);                   // ws grows as needed
 * @endcode
 */

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

/** Which outputs ct::nn_outputs allocates, by output index (0 is the op's
 *  first output tensor argument, e.g. y of max_pool2d, 1 its indices). By
 *  default every output, optional ones included, with the shape and dtype
 *  of ct_op_output_info. */
class NNOutputs {
 public:
  /** Every output, shaped by the library. */
  NNOutputs() noexcept : skipped_(0) {}
  /** Leave output @p i absent (nullptr in the call; an optional one). */
  NNOutputs& skip(int32_t i) { return allocate(i, false); }
  /** Allocate output @p i (@p on) or leave it absent (!@p on). */
  NNOutputs& allocate(int32_t i, bool on) {
    const uint32_t bit = 1u << index_(i);
    skipped_ = on ? skipped_ & ~bit : skipped_ | bit;
    return *this;
  }
  /** Allocate output @p i with @p shape (the dtype stays the library's),
   *  for the outputs whose extents the inputs leave open: the x of
   *  conv2d_backward_data and of the pooling backwards, the dw of
   *  conv2d_backward_weight. Its last two extents also go to the library's
   *  query as CTOpArgs.extent (x's (H, W), the kernel's (R, S)). */
  NNOutputs& shape(int32_t i, const std::vector<int64_t>& shape) {
    index_(i);
    shapes_.push_back(std::make_pair(i, shape));
    return *this;
  }
  /** False if output @p i is skipped. */
  bool allocates(int32_t i) const noexcept { return i < 0 || i >= 32 || !(skipped_ & (1u << i)); }
  /** The shapes given, (output index, shape) in the order of the shape() calls. */
  const std::vector<std::pair<int32_t, std::vector<int64_t> > >& shapes() const noexcept { return shapes_; }
  /** The shape given for output @p i (the last one), or nullptr (the library's). */
  const std::vector<int64_t>* shape_of(int32_t i) const noexcept {
    for (size_t k = shapes_.size(); k-- > 0;)
      if (shapes_[k].first == i) return &shapes_[k].second;
    return nullptr;
  }

 private:
  static int32_t index_(int32_t i) {
    if (i < 0 || i >= 32)
      detail::fail(CT_ERR_INVALID_ARGUMENT,
                   "ct::NNOutputs: output index " + std::to_string(i) + " is outside [0, 32)");
    return i;
  }
  uint32_t skipped_;
  std::vector<std::pair<int32_t, std::vector<int64_t> > > shapes_;
};

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

// @p desc's C descriptor, after checking that op @p op takes a descriptor
// of its type (CTOpInfo.desc_type; CT_DESC_NONE for an op that is not an NN
// op). Throws the library's CT_ERR_NOT_FOUND for an unknown id, and
// @p who's CT_ERR_INVALID_ARGUMENT for the wrong options.
inline const void* nn_desc_for(int32_t op, const NNDesc& desc, const char* who) {
  const CTOpInfo info = cached_op_info(op);
  if (info.desc_type != desc.type())
    fail(CT_ERR_INVALID_ARGUMENT, std::string(who) + ": op " + std::to_string(op) + " (" +
                                      (info.name ? info.name : "?") + ") takes " +
                                      NNDesc::type_name(info.desc_type) + ", not " +
                                      NNDesc::type_name(desc.type()));
  return desc.get();
}

// The CTensor pointers of a tensor list (nullptr stays nullptr).
inline std::vector<const CTensor*> c_tensors(const std::vector<const TensorView*>& tensors) {
  std::vector<const CTensor*> r(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) r[i] = tensors[i] ? &tensors[i]->c() : nullptr;
  return r;
}

// The device of the first tensor given (the CPU if none is).
inline CTDevice device_of(const std::vector<const TensorView*>& tensors) noexcept {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i]) return tensors[i]->device();
  return cpu();
}

// Size (ct_nn_workspace_size) and run (ct_nn) one call of @p op on @p c,
// with the workspace @p w says; every failure is the library's message
// except a caller's Workspace on another device.
inline void nn_exec(int32_t op, const void* desc, const std::vector<const CTensor*>& c,
                    const WsArg& w, CTDevice device, void* stream, const char* who) {
  const CTensor* const* t = c.empty() ? nullptr : c.data();
  const int32_t n = count32(c.size(), who);
  if (w.mode == WsArg::kCaller) {
    check(ct_nn(op, desc, t, n, w.ptr, w.bytes, stream));
    return;
  }
  size_t bytes = 0;
  check(ct_nn_workspace_size(op, desc, t, n, &bytes));
  if (bytes == 0) {
    check(ct_nn(op, desc, t, n, nullptr, 0, stream));
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
    check(ct_nn(op, desc, t, n, w.ws->data(), w.ws->size(), stream));
    return;
  }
  Workspace scratch(bytes, device);
  check(ct_nn(op, desc, t, n, scratch.data(), scratch.size(), stream));
}

// ct::nn: all of the op's tensor arguments given.
inline void nn_(int32_t op, const NNDesc& desc, const std::vector<const TensorView*>& tensors,
                const WsArg& w, void* stream) {
  nn_exec(op, nn_desc_for(op, desc, "ct::nn"), c_tensors(tensors), w, device_of(tensors), stream, "ct::nn");
}

// ct::nn_outputs: the inputs given; the outputs allocated from ct_op_output_info.
inline std::vector<Tensor> nn_outputs_(int32_t op, const NNDesc& desc,
                                       const std::vector<const TensorView*>& inputs,
                                       const NNOutputs& which, const WsArg& w, void* stream) {
  CTOpArgs args = op_args();
  args.desc = nn_desc_for(op, desc, "ct::nn_outputs");
  for (size_t k = 0; k < which.shapes().size(); ++k) {
    const std::vector<int64_t>& given = which.shapes()[k].second;
    if (given.size() >= 2) {
      args.extent[0] = given[given.size() - 2];
      args.extent[1] = given[given.size() - 1];
    }
  }
  const std::vector<CTOutputInfo> shapes = output_info(op, inputs, &args);
  const CTDevice device = device_of(inputs);
  std::vector<Tensor> outs(shapes.size());
  std::vector<const CTensor*> c = c_tensors(inputs);
  c.reserve(inputs.size() + outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    const int32_t k = static_cast<int32_t>(i);
    if (!which.allocates(k)) {
      c.push_back(nullptr);
      continue;
    }
    const std::vector<int64_t>* given = which.shape_of(k);
    outs[i] = given ? Tensor::empty(*given, shapes[i].dtype, device) : empty_for(shapes[i], device);
    c.push_back(&outs[i].c());
  }
  nn_exec(op, args.desc, c, w, device, stream, "ct::nn_outputs");
  return outs;
}

// The outputs of a value form as a result struct of @p n tensors.
inline void expect_outputs(const std::vector<Tensor>& o, size_t n) {
  if (o.size() < n)
    fail(CT_ERR_INTERNAL, "ct::nn_outputs: the library reports " + std::to_string(o.size()) +
                              " outputs where this header expects " + std::to_string(n));
}
template <class R>
inline R take2(std::vector<Tensor> o) {
  expect_outputs(o, 2);
  R r = {std::move(o[0]), std::move(o[1])};
  return r;
}
template <class R>
inline R take3(std::vector<Tensor> o) {
  expect_outputs(o, 3);
  R r = {std::move(o[0]), std::move(o[1]), std::move(o[2])};
  return r;
}
}  // namespace detail

/* ------------------------------------------------------------------------ */
/* Any NN op by id                                                           */
/* ------------------------------------------------------------------------ */

/** Bytes of workspace op @p op needs for these tensors (ct_nn_workspace_size):
 *  @p tensors are ct_<op>'s tensor arguments in order (CTOpInfo.tensor_names),
 *  nullptr for an absent optional one; data is not read. */
inline size_t nn_workspace_size(int32_t op, const NNDesc& desc,
                                const std::vector<const TensorView*>& tensors) {
  const void* d = detail::nn_desc_for(op, desc, "ct::nn_workspace_size");
  const std::vector<const CTensor*> c = detail::c_tensors(tensors);
  size_t n = 0;
  check(ct_nn_workspace_size(op, d, c.empty() ? nullptr : c.data(),
                             detail::count32(c.size(), "ct::nn_workspace_size"), &n));
  return n;
}
/** Run NN op @p op (ct_nn) on ct_<op>'s tensor arguments in order, outputs
 *  included (out= form), with a workspace allocated for the call. */
inline void nn(int32_t op, const NNDesc& desc, const std::vector<const TensorView*>& tensors,
               void* stream = nullptr) {
  detail::nn_(op, desc, tensors, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace, grown to the query's size. */
inline void nn(int32_t op, const NNDesc& desc, const std::vector<const TensorView*>& tensors,
               Workspace& ws, void* stream = nullptr) {
  detail::nn_(op, desc, tensors, detail::WsArg(ws), stream);
}
/** The same, with the caller's buffer and no query: exactly ct_nn. */
inline void nn(int32_t op, const NNDesc& desc, const std::vector<const TensorView*>& tensors,
               void* workspace, size_t workspace_bytes, void* stream = nullptr) {
  detail::nn_(op, desc, tensors, detail::WsArg(workspace, workspace_bytes), stream);
}
/** Run NN op @p op on its inputs (the first CTOpInfo.num_inputs tensor
 *  arguments, in order; nullptr for an absent optional one) into new
 *  compact outputs on the inputs' device, shaped and typed by the library
 *  (ct::output_info), as @p which selects. Returns one Tensor per output
 *  tensor argument, in order (an empty one where skipped). */
inline std::vector<Tensor> nn_outputs(int32_t op, const NNDesc& desc,
                                      const std::vector<const TensorView*>& inputs,
                                      const NNOutputs& which = NNOutputs(), void* stream = nullptr) {
  return detail::nn_outputs_(op, desc, inputs, which, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline std::vector<Tensor> nn_outputs(int32_t op, const NNDesc& desc,
                                      const std::vector<const TensorView*>& inputs,
                                      const NNOutputs& which, Workspace& ws, void* stream = nullptr) {
  return detail::nn_outputs_(op, desc, inputs, which, detail::WsArg(ws), stream);
}

/* ------------------------------------------------------------------------ */
/* Output shapes, from the library                                           */
/* ------------------------------------------------------------------------ */

namespace detail {
// The shape of output 0 of NN op @p op for float32 inputs of @p shapes.
inline std::vector<int64_t> nn_shape(int32_t op, const NNDesc& desc,
                                     const std::vector<const std::vector<int64_t>*>& shapes) {
  std::vector<TensorView> views;
  views.reserve(shapes.size());
  std::vector<const TensorView*> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (!shapes[i]) {
      inputs.push_back(nullptr);
      continue;
    }
    views.push_back(TensorView(nullptr, dtype::float32, *shapes[i]));
    inputs.push_back(&views.back());
  }
  CTOpArgs args = op_args();
  args.desc = desc.get();
  return shape_of(output_info(op, inputs, &args)[0]);
}
}  // namespace detail

/** y's shape for conv2d of x (N, C, H, W) with w (K, C/groups, R, S), as the
 *  library computes it (ct_op_output_info): (N, K, P, Q), P = floor((H +
 *  pad_begin[0] + pad_end[0] - dilation[0] * (R - 1) - 1) / stride[0]) + 1,
 *  likewise Q. Throws ct::Error with the library's message for arguments
 *  ct::conv2d would reject. */
inline std::vector<int64_t> conv2d_output_shape(const std::vector<int64_t>& x_shape,
                                                const std::vector<int64_t>& w_shape,
                                                const Conv2dOptions& opts = Conv2dOptions()) {
  return detail::nn_shape(CT_OP_CONV2D, opts, {&x_shape, &w_shape, nullptr});
}

/** y's shape for pooling x (N, C, H, W): (N, C, P, Q) with the formula of
 *  conv2d_output_shape (stride 0 meaning the kernel), as the library
 *  computes it for avg_pool2d. Throws ct::Error with the library's message. */
inline std::vector<int64_t> pool2d_output_shape(const std::vector<int64_t>& x_shape,
                                                const Pool2dOptions& opts) {
  return detail::nn_shape(CT_OP_AVG_POOL2D, opts, {&x_shape});
}

/** out's shape for matmul of a (..., M, K) and b (..., K, N): the broadcast
 *  batch dims, then (M, N), as the library computes it. Throws ct::Error
 *  with the library's message (shapes that do not multiply). */
inline std::vector<int64_t> matmul_output_shape(const std::vector<int64_t>& a_shape,
                                                const std::vector<int64_t>& b_shape) {
  return detail::nn_shape(CT_OP_MATMUL, MatmulOptions(), {&a_shape, &b_shape, nullptr});
}

}  // namespace ct

#endif  // CTENSOR_CPP_NN_HPP_
