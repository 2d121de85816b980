// ctensor/cpp/tensor.hpp: ct::Tensor, an owning tensor (shared ct_malloc buffer), and copy/clone/empty_like.
#ifndef CTENSOR_CPP_TENSOR_HPP_
#define CTENSOR_CPP_TENSOR_HPP_

#include "dtype.hpp"
#include "error.hpp"
#include "tensor_view.hpp"

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace ct {

#define CT_HPP_TENSOR_COMPOUND_(OP, ID)                                                 \
  Tensor& operator OP(const TensorView& b) {                                            \
    TensorView::operator OP(b);                                                         \
    return *this;                                                                       \
  }                                                                                     \
  template <class S>                                                                    \
  typename std::enable_if<std::is_arithmetic<S>::value, Tensor&>::type operator OP(S b) { \
    TensorView::operator OP(b);                                                         \
    return *this;                                                                       \
  }

/* ------------------------------------------------------------------------ */
/* Tensor: owning                                                            */
/* ------------------------------------------------------------------------ */

/** An owning tensor: a TensorView plus a shared reference to its buffer.
 *  Copies and views (slice, transpose, ...) share the buffer, which is freed
 *  with ct_free when the last of them goes; nothing is copied unless the name
 *  says so (clone, contiguous, reshape when needed, to). */
class Tensor : public TensorView {
 public:
  /** An empty tensor (no elements, no buffer). */
  Tensor() noexcept {}
  /** Wrap @p view, keeping @p owner alive as long as this tensor or a view of it lives. */
  Tensor(const TensorView& view, std::shared_ptr<void> owner)
      : TensorView(view), owner_(std::move(owner)) {}
  /** Shares the buffer. */
  Tensor(const Tensor&) = default;
  /** Shares the buffer. */
  Tensor& operator=(const Tensor&) = default;
  /** Takes the buffer; @p o becomes empty. */
  Tensor(Tensor&& o) noexcept : TensorView(o), owner_(std::move(o.owner_)) { o.reset_(); }
  /** Takes the buffer; @p o becomes empty. */
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      TensorView::operator=(o);
      owner_ = std::move(o.owner_);
      o.reset_();
    }
    return *this;
  }

  /** An uninitialised compact tensor allocated with ct_malloc on @p device. */
  static Tensor empty(const std::vector<int64_t>& shape, CTDataType dt, CTDevice device = cpu()) {
    TensorView v(nullptr, dt, shape, std::vector<int64_t>(), device);
    const int64_t n = v.numel();
    const size_t item = dtype::itemsize(dt);
    if (item != 0 && static_cast<uint64_t>(n) > SIZE_MAX / item)
      detail::fail(CT_ERR_INVALID_ARGUMENT,
                   "ct::Tensor::empty: shape " + detail::dims_str(shape) + " is too large");
    const size_t bytes = static_cast<size_t>(n) * item;
    if (bytes == 0) return Tensor(v, std::shared_ptr<void>());
    void* p = nullptr;
    check(ct_malloc(device, bytes, &p));
    std::shared_ptr<void> owner(p, [device](void* q) { ct_free(device, q); });
    return Tensor(TensorView(p, dt, shape, std::vector<int64_t>(), device), std::move(owner));
  }

  /** A compact tensor of zeros on @p device. */
  static Tensor zeros(const std::vector<int64_t>& shape, CTDataType dt, CTDevice device = cpu(),
                      void* stream = nullptr) {
    if (device.device_type == CT_CPU || device.device_type == CT_CUDA_HOST ||
        device.device_type == CT_ROCM_HOST) {
      Tensor t = empty(shape, dt, device);
      if (t.nbytes()) std::memset(t.data<void>(), 0, t.nbytes());
      return t;
    }
    return zeros(shape, dt, cpu()).to(device, stream);
  }

  /** A 1-D CPU tensor holding @p values (dtype dtype_of<T>()). */
  template <class T>
  static Tensor from_vector(const std::vector<T>& values) {
    return from_vector(values, std::vector<int64_t>(1, static_cast<int64_t>(values.size())));
  }
  /** A tensor of @p shape on @p device holding @p values in row-major order. */
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, const std::vector<int64_t>& shape,
                            CTDevice device = cpu(), void* stream = nullptr) {
    return fill_(values.begin(), values.size(), shape, device, stream);
  }
  /** A 1-D CPU tensor: ct::Tensor::from({1.f, 2.f, 3.f}). */
  template <class T>
  static Tensor from(std::initializer_list<T> values) {
    return fill_(values.begin(), values.size(),
                 std::vector<int64_t>(1, static_cast<int64_t>(values.size())), cpu(), nullptr);
  }
  /** A tensor of @p shape: ct::Tensor::from({1, 2, 3, 4}, {2, 2}). */
  template <class T>
  static Tensor from(std::initializer_list<T> values, const std::vector<int64_t>& shape,
                     CTDevice device = cpu(), void* stream = nullptr) {
    return fill_(values.begin(), values.size(), shape, device, stream);
  }

  /** Slice along @p dim, sharing the buffer (see TensorView::slice). */
  Tensor slice(int64_t dim, int64_t start, int64_t stop, int64_t step = 1) const {
    Tensor r(*this);
    r.slice_(dim, start, stop, step);
    return r;
  }
  /** Element @p index of @p dim, dimension removed, sharing the buffer. */
  Tensor select(int64_t dim, int64_t index) const {
    Tensor r(*this);
    r.select_(dim, index);
    return r;
  }
  /** select(0, index), sharing the buffer. */
  Tensor operator[](int64_t index) const { return select(0, index); }
  /** Swap two dimensions, sharing the buffer. */
  Tensor transpose(int64_t d0, int64_t d1) const {
    Tensor r(*this);
    r.transpose_(d0, d1);
    return r;
  }
  /** Reorder dimensions, sharing the buffer. */
  Tensor permute(const std::vector<int64_t>& dims) const {
    Tensor r(*this);
    r.permute_(dims);
    return r;
  }
  /** New shape without a copy, or throw CT_ERR_NEED_CONTIGUOUS (PyTorch's view()). */
  Tensor view(const std::vector<int64_t>& shape) const {
    Tensor r(*this);
    r.view_(shape);
    return r;
  }
  /** New shape: a view when the strides allow it, else a compact copy
   *  (PyTorch's reshape()). */
  Tensor reshape(const std::vector<int64_t>& shape, void* stream = nullptr) const {
    std::vector<int64_t> s = infer_shape_(shape, "ct::Tensor::reshape");
    int64_t st[CT_MAX_NDIM];
    if (view_strides_(s, st)) return view(s);
    return clone(stream).view(s);
  }

  /** A compact copy in a new buffer on the same device. */
  Tensor clone(void* stream = nullptr) const;
  /** *this if compact row-major, else a compact copy. */
  Tensor contiguous(void* stream = nullptr) const {
    return is_contiguous() ? *this : clone(stream);
  }
  /** *this if already on @p device, else a compact copy there (ct_copy). */
  Tensor to(CTDevice device, void* stream = nullptr) const;

  /** How many Tensors share this buffer (0 for an empty tensor). */
  long use_count() const noexcept { return owner_.use_count(); }

  /** In-place compound assignments, as TensorView's (returning this Tensor). */
  CT_HPP_COMPOUND_OPS_(CT_HPP_TENSOR_COMPOUND_)

 private:
  template <class It>
  static Tensor fill_(It values, size_t count, const std::vector<int64_t>& shape, CTDevice device,
                      void* stream) {
    typedef typename std::iterator_traits<It>::value_type T;
    Tensor t = empty(shape, dtype_of<T>(), cpu());
    if (static_cast<size_t>(t.numel()) != count)
      detail::fail(CT_ERR_SHAPE_MISMATCH, "ct::Tensor::from: " + std::to_string(count) +
                                              " values do not fill shape " +
                                              detail::dims_str(shape));
    T* p = t.data<T>();
    for (size_t i = 0; i < count; ++i, ++values) p[i] = *values;
    return t.to(device, stream);
  }

  std::shared_ptr<void> owner_;
};

#undef CT_HPP_TENSOR_COMPOUND_

/* ------------------------------------------------------------------------ */
/* Free functions                                                            */
/* ------------------------------------------------------------------------ */

/** A compact uninitialised tensor with @p x's shape, dtype and device. */
inline Tensor empty_like(const TensorView& x) {
  return Tensor::empty(x.shape(), x.dtype(), x.device());
}

/** A compact tensor of zeros with @p x's shape, dtype and device. */
inline Tensor zeros_like(const TensorView& x, void* stream = nullptr) {
  return Tensor::zeros(x.shape(), x.dtype(), x.device(), stream);
}

/** Copy @p src into @p dst (same shape and dtype, any strides, any devices). */
inline void copy(const TensorView& src, const TensorView& dst, void* stream = nullptr) {
  CTensor d = dst.c();
  check(ct_copy(&src.c(), &d, stream));
}

/** A compact copy of @p x in a new buffer on the same device. */
inline Tensor clone(const TensorView& x, void* stream = nullptr) {
  Tensor r = empty_like(x);
  if (x.numel() > 0) copy(x, r, stream);
  return r;
}

inline Tensor Tensor::clone(void* stream) const { return ct::clone(*this, stream); }

inline Tensor Tensor::to(CTDevice device, void* stream) const {
  if (same_device(device, this->device())) return *this;
  Tensor r = empty(shape(), dtype(), device);
  if (numel() > 0) copy(*this, r, stream);
  return r;
}

/** Wait for the work queued on @p stream of @p device (returns at once on the CPU). */
inline void synchronize(CTDevice device = cpu(), void* stream = nullptr) {
  check(ct_synchronize(device, stream));
}

}  // namespace ct

#endif  // CTENSOR_CPP_TENSOR_HPP_
