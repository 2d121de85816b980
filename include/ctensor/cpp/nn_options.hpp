// ctensor/cpp/nn_options.hpp: ct::Activation, the NN option structs over the C descriptors, ct::NNDesc.
#ifndef CTENSOR_CPP_NN_OPTIONS_HPP_
#define CTENSOR_CPP_NN_OPTIONS_HPP_

#include "../ctensor_nn.h"

#include <cstdint>
#include <cstring>

namespace ct {

/* ------------------------------------------------------------------------ */
/* Options of the NN ops                                                     */
/* ------------------------------------------------------------------------ */

/** An activation fused after the bias (matmul, conv2d): the values of CTActivation. */
enum class Activation : int32_t {
  none = CT_ACTIVATION_NONE,           /**< identity */
  relu = CT_ACTIVATION_RELU,           /**< max(x, 0) */
  gelu = CT_ACTIVATION_GELU,           /**< erf form, as ct::gelu */
  gelu_tanh = CT_ACTIVATION_GELU_TANH, /**< tanh approximation, as ct::gelu_tanh */
  sigmoid = CT_ACTIVATION_SIGMOID,     /**< 1 / (1 + e^-x) */
  tanh = CT_ACTIVATION_TANH            /**< hyperbolic tangent */
};

/** Options of ct::matmul: a CTMatmulDesc. */
class MatmulOptions {
 public:
  /** No activation. */
  MatmulOptions() noexcept {
    std::memset(&d_, 0, sizeof d_);
    d_.struct_size = sizeof d_;
  }
  /** A copy of @p d (struct_size set to this header's size). */
  explicit MatmulOptions(const CTMatmulDesc& d) noexcept : d_(d) { d_.struct_size = sizeof d_; }
  /** The activation applied after the bias. */
  MatmulOptions& activation(Activation a) noexcept {
    d_.activation = static_cast<int32_t>(a);
    return *this;
  }
  /** The C descriptor. */
  const CTMatmulDesc& c() const noexcept { return d_; }
  /** A copy of the C descriptor. */
  operator CTMatmulDesc() const noexcept { return d_; }  // NOLINT: implicit on purpose

 private:
  CTMatmulDesc d_;
};

/** Options of ct::conv2d and its backward ops: a CTConv2dDesc. Padding is
 *  padding(p) on all sides, padding(ph, pw) per axis, or
 *  padding(top, bottom, left, right) (pad_begin = {top, left}, pad_end =
 *  {bottom, right}; note this is not torch.nn.functional.pad's order). */
class Conv2dOptions {
 public:
  /** Stride 1, no padding, dilation 1, groups 1, no activation. */
  Conv2dOptions() noexcept {
    std::memset(&d_, 0, sizeof d_);
    d_.struct_size = sizeof d_;
  }
  /** A copy of @p d (struct_size set to this header's size). */
  explicit Conv2dOptions(const CTConv2dDesc& d) noexcept : d_(d) { d_.struct_size = sizeof d_; }
  /** The same stride along h and w. */
  Conv2dOptions& stride(int64_t s) noexcept { return stride(s, s); }
  /** Stride (h, w). */
  Conv2dOptions& stride(int64_t sh, int64_t sw) noexcept {
    d_.stride[0] = sh;
    d_.stride[1] = sw;
    return *this;
  }
  /** @p p zeros on every side. */
  Conv2dOptions& padding(int64_t p) noexcept { return padding(p, p, p, p); }
  /** @p ph zeros above and below, @p pw left and right. */
  Conv2dOptions& padding(int64_t ph, int64_t pw) noexcept { return padding(ph, ph, pw, pw); }
  /** Asymmetric padding: pad_begin = {top, left}, pad_end = {bottom, right}. */
  Conv2dOptions& padding(int64_t top, int64_t bottom, int64_t left, int64_t right) noexcept {
    d_.pad_begin[0] = top;
    d_.pad_end[0] = bottom;
    d_.pad_begin[1] = left;
    d_.pad_end[1] = right;
    return *this;
  }
  /** The same dilation along h and w (1 is a dense kernel). */
  Conv2dOptions& dilation(int64_t d) noexcept { return dilation(d, d); }
  /** Dilation (h, w). */
  Conv2dOptions& dilation(int64_t dh, int64_t dw) noexcept {
    d_.dilation[0] = dh;
    d_.dilation[1] = dw;
    return *this;
  }
  /** Groups (C for depthwise). */
  Conv2dOptions& groups(int32_t g) noexcept {
    d_.groups = g;
    return *this;
  }
  /** The activation after the bias (forward only). */
  Conv2dOptions& activation(Activation a) noexcept {
    d_.activation = static_cast<int32_t>(a);
    return *this;
  }
  /** The C descriptor. */
  const CTConv2dDesc& c() const noexcept { return d_; }
  /** A copy of the C descriptor. */
  operator CTConv2dDesc() const noexcept { return d_; }  // NOLINT: implicit on purpose

 private:
  CTConv2dDesc d_;
};

/** Options of the pooling ops: a CTPool2dDesc. The kernel is required;
 *  stride defaults to the kernel (PyTorch's default); padding as
 *  Conv2dOptions::padding; max pooling ignores padding. */
class Pool2dOptions {
 public:
  /** A @p kernel x @p kernel window, stride = kernel, no padding. */
  explicit Pool2dOptions(int64_t kernel) noexcept {
    init_();
    this->kernel(kernel, kernel);
  }
  /** A @p kh x @p kw window, stride = kernel, no padding. */
  Pool2dOptions(int64_t kh, int64_t kw) noexcept {
    init_();
    kernel(kh, kw);
  }
  /** A copy of @p d (struct_size set to this header's size). */
  explicit Pool2dOptions(const CTPool2dDesc& d) noexcept : d_(d) { d_.struct_size = sizeof d_; }
  /** Window (h, w). */
  Pool2dOptions& kernel(int64_t kh, int64_t kw) noexcept {
    d_.kernel[0] = kh;
    d_.kernel[1] = kw;
    return *this;
  }
  /** The same stride along h and w (0: the kernel size). */
  Pool2dOptions& stride(int64_t s) noexcept { return stride(s, s); }
  /** Stride (h, w) (0: the kernel size). */
  Pool2dOptions& stride(int64_t sh, int64_t sw) noexcept {
    d_.stride[0] = sh;
    d_.stride[1] = sw;
    return *this;
  }
  /** @p p on every side. */
  Pool2dOptions& padding(int64_t p) noexcept { return padding(p, p, p, p); }
  /** @p ph above and below, @p pw left and right. */
  Pool2dOptions& padding(int64_t ph, int64_t pw) noexcept { return padding(ph, ph, pw, pw); }
  /** Asymmetric padding: pad_begin = {top, left}, pad_end = {bottom, right}. */
  Pool2dOptions& padding(int64_t top, int64_t bottom, int64_t left, int64_t right) noexcept {
    d_.pad_begin[0] = top;
    d_.pad_end[0] = bottom;
    d_.pad_begin[1] = left;
    d_.pad_end[1] = right;
    return *this;
  }
  /** The same dilation along h and w (1 is a dense window). */
  Pool2dOptions& dilation(int64_t d) noexcept { return dilation(d, d); }
  /** Dilation (h, w). */
  Pool2dOptions& dilation(int64_t dh, int64_t dw) noexcept {
    d_.dilation[0] = dh;
    d_.dilation[1] = dw;
    return *this;
  }
  /** avg pooling: true divides by the whole window, false by the taps inside x. */
  Pool2dOptions& count_include_pad(bool on) noexcept {
    d_.count_include_pad = on ? 1 : 0;
    return *this;
  }
  /** The C descriptor. */
  const CTPool2dDesc& c() const noexcept { return d_; }
  /** A copy of the C descriptor. */
  operator CTPool2dDesc() const noexcept { return d_; }  // NOLINT: implicit on purpose

 private:
  void init_() noexcept {
    std::memset(&d_, 0, sizeof d_);
    d_.struct_size = sizeof d_;
  }
  CTPool2dDesc d_;
};

/** Options of the batch normalisation ops: a CTBatchNormDesc. */
class BatchNormOptions {
 public:
  /** epsilon = 1e-5 (PyTorch's default). */
  BatchNormOptions() noexcept {
    std::memset(&d_, 0, sizeof d_);
    d_.struct_size = sizeof d_;
    d_.epsilon = 1e-5;
  }
  /** A copy of @p d (struct_size set to this header's size). */
  explicit BatchNormOptions(const CTBatchNormDesc& d) noexcept : d_(d) {
    d_.struct_size = sizeof d_;
  }
  /** Added to the variance. */
  BatchNormOptions& eps(double epsilon) noexcept {
    d_.epsilon = epsilon;
    return *this;
  }
  /** The C descriptor. */
  const CTBatchNormDesc& c() const noexcept { return d_; }
  /** A copy of the C descriptor. */
  operator CTBatchNormDesc() const noexcept { return d_; }  // NOLINT: implicit on purpose

 private:
  CTBatchNormDesc d_;
};

/** Options of the layer normalisation ops: a CTLayerNormDesc. */
class LayerNormOptions {
 public:
  /** Over the last axis, epsilon = 1e-5 (PyTorch's default). */
  LayerNormOptions() noexcept { init_(1); }
  /** Over the last @p normalized_ndim axes, epsilon = 1e-5. */
  explicit LayerNormOptions(int32_t normalized_ndim) noexcept { init_(normalized_ndim); }
  /** A copy of @p d (struct_size set to this header's size). */
  explicit LayerNormOptions(const CTLayerNormDesc& d) noexcept : d_(d) {
    d_.struct_size = sizeof d_;
  }
  /** Normalise over the last @p k axes. */
  LayerNormOptions& normalized_ndim(int32_t k) noexcept {
    d_.normalized_ndim = k;
    return *this;
  }
  /** Added to the variance. */
  LayerNormOptions& eps(double epsilon) noexcept {
    d_.epsilon = epsilon;
    return *this;
  }
  /** The C descriptor. */
  const CTLayerNormDesc& c() const noexcept { return d_; }
  /** A copy of the C descriptor. */
  operator CTLayerNormDesc() const noexcept { return d_; }  // NOLINT: implicit on purpose

 private:
  void init_(int32_t k) noexcept {
    std::memset(&d_, 0, sizeof d_);
    d_.struct_size = sizeof d_;
    d_.normalized_ndim = k;
    d_.epsilon = 1e-5;
  }
  CTLayerNormDesc d_;
};

/** Options of ct_scaled_dot_product_attention (CTAttentionDesc). */
class AttentionOptions {
 public:
  /** No causal mask, scale 1/sqrt(E) (PyTorch's defaults). */
  AttentionOptions() noexcept {
    std::memset(&d_, 0, sizeof d_);
    d_.struct_size = sizeof d_;
  }
  /** A copy of @p d (struct_size set to this header's size). */
  explicit AttentionOptions(const CTAttentionDesc& d) noexcept : d_(d) { d_.struct_size = sizeof d_; }
  /** CT_CAUSAL_TOP_LEFT (PyTorch's is_causal), CT_CAUSAL_BOTTOM_RIGHT or CT_CAUSAL_NONE. */
  AttentionOptions& causal(int32_t c) noexcept {
    d_.causal = c;
    return *this;
  }
  /** The factor on q . k (0: 1/sqrt(E)). */
  AttentionOptions& scale(double s) noexcept {
    d_.scale = s;
    return *this;
  }
  /** The C descriptor. */
  const CTAttentionDesc& c() const noexcept { return d_; }
  /** A copy of the C descriptor. */
  operator CTAttentionDesc() const noexcept { return d_; }  // NOLINT: implicit on purpose

 private:
  CTAttentionDesc d_;
};

/** The descriptor of one NN call, as the generic ct::nn, ct::nn_outputs and
 *  ct::Plan take it: a pointer to a C descriptor and its CTDescType. Every
 *  options class and C descriptor converts to it implicitly (it points at
 *  the argument, so it lives as long as that does: a temporary options
 *  object in the call's argument list is fine). The op's CTOpInfo.desc_type
 *  says which one the op takes; a call with another throws. */
class NNDesc {
 public:
  /** ct::MatmulOptions */
  NNDesc(const MatmulOptions& o) noexcept : NNDesc(CT_DESC_MATMUL, &o.c()) {}  // NOLINT: implicit on purpose
  /** ct::Conv2dOptions */
  NNDesc(const Conv2dOptions& o) noexcept : NNDesc(CT_DESC_CONV2D, &o.c()) {}  // NOLINT
  /** ct::Pool2dOptions */
  NNDesc(const Pool2dOptions& o) noexcept : NNDesc(CT_DESC_POOL2D, &o.c()) {}  // NOLINT
  /** ct::BatchNormOptions */
  NNDesc(const BatchNormOptions& o) noexcept : NNDesc(CT_DESC_BATCH_NORM, &o.c()) {}  // NOLINT
  /** ct::LayerNormOptions */
  NNDesc(const LayerNormOptions& o) noexcept : NNDesc(CT_DESC_LAYER_NORM, &o.c()) {}  // NOLINT
  /** ct::AttentionOptions */
  NNDesc(const AttentionOptions& o) noexcept : NNDesc(CT_DESC_ATTENTION, &o.c()) {}  // NOLINT
  /** A CTMatmulDesc (its struct_size as the caller set it). */
  NNDesc(const CTMatmulDesc& d) noexcept : NNDesc(CT_DESC_MATMUL, &d) {}  // NOLINT
  /** A CTConv2dDesc. */
  NNDesc(const CTConv2dDesc& d) noexcept : NNDesc(CT_DESC_CONV2D, &d) {}  // NOLINT
  /** A CTPool2dDesc. */
  NNDesc(const CTPool2dDesc& d) noexcept : NNDesc(CT_DESC_POOL2D, &d) {}  // NOLINT
  /** A CTBatchNormDesc. */
  NNDesc(const CTBatchNormDesc& d) noexcept : NNDesc(CT_DESC_BATCH_NORM, &d) {}  // NOLINT
  /** A CTLayerNormDesc. */
  NNDesc(const CTLayerNormDesc& d) noexcept : NNDesc(CT_DESC_LAYER_NORM, &d) {}  // NOLINT
  /** A CTAttentionDesc. */
  NNDesc(const CTAttentionDesc& d) noexcept : NNDesc(CT_DESC_ATTENTION, &d) {}  // NOLINT

  /** The CTDescType of the descriptor. */
  int32_t type() const noexcept { return type_; }
  /** The C descriptor, for ct_nn and ct_plan_create. */
  const void* get() const noexcept { return desc_; }
  /** The C++ options class of a CTDescType, for messages ("ct::Conv2dOptions"). */
  static const char* type_name(int32_t type) noexcept {
    switch (type) {
      case CT_DESC_MATMUL: return "ct::MatmulOptions";
      case CT_DESC_CONV2D: return "ct::Conv2dOptions";
      case CT_DESC_POOL2D: return "ct::Pool2dOptions";
      case CT_DESC_BATCH_NORM: return "ct::BatchNormOptions";
      case CT_DESC_LAYER_NORM: return "ct::LayerNormOptions";
      case CT_DESC_ATTENTION: return "ct::AttentionOptions";
      default: return "no options (not an NN op)";
    }
  }

 private:
  NNDesc(int32_t type, const void* desc) noexcept : type_(type), desc_(desc) {}
  int32_t type_;
  const void* desc_;
};

}  // namespace ct

#endif  // CTENSOR_CPP_NN_OPTIONS_HPP_
