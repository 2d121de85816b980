// ctensor/cpp/tensor_view.hpp: ct::TensorView, a non-owning strided view that is a valid CTensor.
//
// The compound assignments (x += y, ...) are members declared here and defined
// in operators.hpp (they run ct_binary); include that header, or ctensor.hpp,
// to use them.
#ifndef CTENSOR_CPP_TENSOR_VIEW_HPP_
#define CTENSOR_CPP_TENSOR_VIEW_HPP_

#include "dtype.hpp"
#include "error.hpp"

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ct {

namespace detail {
inline int64_t checked_numel(const int64_t* shape, int32_t ndim, const char* who) {
  int64_t n = 1;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0)
      fail(CT_ERR_INVALID_ARGUMENT, std::string(who) + ": shape[" + std::to_string(i) + "]=" +
                                        std::to_string(static_cast<long long>(shape[i])) +
                                        " is negative");
    if (shape[i] != 0 && n > INT64_MAX / shape[i])
      fail(CT_ERR_INVALID_ARGUMENT, std::string(who) + ": shape " + dims_str(shape, ndim) +
                                        " has more than 2^63 elements");
    n *= shape[i];
  }
  return n;
}
}  // namespace detail

/* The compound assignments and the binary op each one runs (in place, out
 * exactly the left operand): declared in TensorView and Tensor, defined in
 * operators.hpp. Kept defined for those headers. */
#define CT_HPP_COMPOUND_OPS_(X)                                                          \
  X(+=, ADD) X(-=, SUB) X(*=, MUL) X(/=, DIV) X(%=, MOD) X(&=, BITWISE_AND)              \
  X(|=, BITWISE_OR) X(^=, BITWISE_XOR) X(<<=, LEFT_SHIFT) X(>>=, RIGHT_SHIFT)

#define CT_HPP_DECLARE_COMPOUND_(OP, ID)                      \
  TensorView& operator OP(const TensorView& b);                \
  template <class S>                                           \
  typename std::enable_if<std::is_arithmetic<S>::value, TensorView&>::type operator OP(S b);

/* ------------------------------------------------------------------------ */
/* TensorView: non-owning                                                    */
/* ------------------------------------------------------------------------ */

/** A non-owning tensor: pointer, device, dtype, shape, strides (in elements,
 *  always filled) and byte_offset, holding its own shape and strides so that
 *  c() is a valid CTensor for as long as the view lives. The memory must
 *  outlive the view. View operations (slice, transpose, ...) never copy. */
class TensorView {
 public:
  /** An empty 1-D float32 CPU view with no elements and no data. */
  TensorView() noexcept { reset_(); }

  /** A view of a C tensor (NULL strides become compact strides). */
  TensorView(const CTensor& t) {  // NOLINT: implicit on purpose, so CTensor passes to ct:: ops
    if (t.ndim < 0 || t.ndim > CT_MAX_NDIM)
      detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::TensorView: ndim=" + std::to_string(t.ndim) +
                                                " is outside [0, CT_MAX_NDIM]");
    if (t.ndim > 0 && t.shape == nullptr)
      detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::TensorView: shape is NULL with ndim > 0");
    set_(t.data, t.device, t.dtype, t.shape, t.strides, t.ndim, t.byte_offset);
  }

  /** A compact row-major view of host memory @p data of dtype dtype_of<T>(). */
  template <class T, class = typename std::enable_if<!std::is_void<T>::value>::type>
  TensorView(T* data, const std::vector<int64_t>& shape) {
    init_(const_cast<void*>(static_cast<const void*>(data)), dtype_of<T>(), shape,
          std::vector<int64_t>(), cpu(), 0);
  }

  /** A strided view of host memory @p data; @p strides are in elements. */
  template <class T, class = typename std::enable_if<!std::is_void<T>::value>::type>
  TensorView(T* data, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
    init_(const_cast<void*>(static_cast<const void*>(data)), dtype_of<T>(), shape, strides, cpu(),
          0);
  }

  /** A view of untyped memory on any device; empty @p strides means compact. */
  TensorView(void* data, CTDataType dt, const std::vector<int64_t>& shape,
             const std::vector<int64_t>& strides = std::vector<int64_t>(), CTDevice device = cpu(),
             uint64_t byte_offset = 0) {
    init_(data, dt, shape, strides, device, byte_offset);
  }

  /** Copies the view (not the data). */
  TensorView(const TensorView& o) noexcept { copy_from_(o); }
  /** Copies the view (not the data). */
  TensorView& operator=(const TensorView& o) noexcept {
    if (this != &o) copy_from_(o);
    return *this;
  }

  /** The C tensor, valid while this view lives and is not modified. */
  const CTensor& c() const noexcept { return c_; }
  /** Same as c(). */
  const CTensor& ct() const noexcept { return c_; }

  /** Number of dimensions (0 for a scalar). */
  int32_t ndim() const noexcept { return c_.ndim; }
  /** Extents. */
  std::vector<int64_t> shape() const { return std::vector<int64_t>(shape_, shape_ + c_.ndim); }
  /** Strides, in elements. */
  std::vector<int64_t> strides() const {
    return std::vector<int64_t>(strides_, strides_ + c_.ndim);
  }
  /** Extent of dimension @p dim (negative counts from the end). */
  int64_t size(int64_t dim) const { return shape_[norm_dim_(dim, "ct::TensorView::size")]; }
  /** Stride of dimension @p dim in elements (negative counts from the end). */
  int64_t stride(int64_t dim) const { return strides_[norm_dim_(dim, "ct::TensorView::stride")]; }
  /** Number of elements (1 for a scalar). */
  int64_t numel() const noexcept {
    int64_t n = 1;
    for (int32_t i = 0; i < c_.ndim; ++i) n *= shape_[i];
    return n;
  }
  /** Element type. */
  CTDataType dtype() const noexcept { return c_.dtype; }
  /** Device of the data. */
  CTDevice device() const noexcept { return c_.device; }
  /** Bytes per element. */
  size_t itemsize() const noexcept { return dtype::itemsize(c_.dtype); }
  /** numel() * itemsize(): the bytes a compact copy needs. */
  size_t nbytes() const noexcept { return static_cast<size_t>(numel()) * itemsize(); }
  /** The base pointer, without byte_offset (for OpenCL, a cl_mem). */
  void* raw_data() const noexcept { return c_.data; }
  /** Bytes added to raw_data() before indexing. */
  uint64_t byte_offset() const noexcept { return c_.byte_offset; }

  /** Pointer to element 0 (raw_data() + byte_offset()), for memory the host
   *  can address. T must match dtype() (or be void); throws CT_ERR_DTYPE_MISMATCH. */
  template <class T>
  T* data() const {
    detail::expect_dtype<typename std::remove_cv<T>::type>(c_.dtype, "ct::TensorView::data");
    return reinterpret_cast<T*>(static_cast<char*>(c_.data) + c_.byte_offset);
  }

  /** True if the layout is compact row-major (strides of extent-1 dims and of
   *  empty tensors do not matter). */
  bool is_contiguous() const noexcept {
    if (numel() == 0) return true;
    int64_t expected = 1;
    for (int32_t d = c_.ndim - 1; d >= 0; --d) {
      if (shape_[d] != 1 && strides_[d] != expected) return false;
      expected *= shape_[d];
    }
    return true;
  }

  /** Elements [start, stop) with @p step along @p dim, Python slice rules:
   *  negative start/stop count from the end, out-of-range values clamp, step
   *  may be negative (use INT64_MAX / INT64_MIN for "from the end" / "to the
   *  beginning" then). step == 0 throws CT_ERR_INVALID_ARGUMENT. No copy. */
  TensorView slice(int64_t dim, int64_t start, int64_t stop, int64_t step = 1) const {
    TensorView r(*this);
    r.slice_(dim, start, stop, step);
    return r;
  }
  /** Element @p index of dimension @p dim, removing that dimension. No copy. */
  TensorView select(int64_t dim, int64_t index) const {
    TensorView r(*this);
    r.select_(dim, index);
    return r;
  }
  /** select(0, index): index along the first dimension. No copy. */
  TensorView operator[](int64_t index) const { return select(0, index); }
  /** Swap dimensions @p d0 and @p d1. No copy. */
  TensorView transpose(int64_t d0, int64_t d1) const {
    TensorView r(*this);
    r.transpose_(d0, d1);
    return r;
  }
  /** Reorder dimensions: result dim i is this view's dim dims[i]. No copy. */
  TensorView permute(const std::vector<int64_t>& dims) const {
    TensorView r(*this);
    r.permute_(dims);
    return r;
  }
  /** The same elements with @p shape (one extent may be -1), without a copy,
   *  as PyTorch's view(); throws CT_ERR_NEED_CONTIGUOUS if the strides do not
   *  allow it (use Tensor::reshape, which copies only then). */
  TensorView view(const std::vector<int64_t>& shape) const {
    TensorView r(*this);
    r.view_(shape);
    return r;
  }

  /** The elements in row-major order, copied with ct_copy (any strides, any
   *  device). T must match dtype(). */
  template <class T>
  std::vector<T> to_vector(void* stream = nullptr) const;

  /** The single element of a one-element tensor. */
  template <class T>
  T item(void* stream = nullptr) const {
    if (numel() != 1)
      detail::fail(CT_ERR_SHAPE_MISMATCH, "ct::TensorView::item: the tensor has " +
                                              std::to_string(static_cast<long long>(numel())) +
                                              " elements, not 1");
    return to_vector<T>(stream)[0];
  }

  /** Compound assignment in place through the C ABI: `x += y` runs
   *  ct_binary(CT_OP_ADD, x, y, out = x, NULL), so y broadcasts to x's shape
   *  and the result must have x's dtype and shape (x /= y on integers throws
   *  CT_ERR_DTYPE_MISMATCH: true division gives float64). The data pointer
   *  never changes. Also -= *= /= %= &= |= ^= <<= >>=, and with an arithmetic
   *  scalar on the right (converted with ct::scalar to x's dtype). Works on
   *  temporaries too: `x[0] += 1.0` writes row 0 of x. */
  CT_HPP_COMPOUND_OPS_(CT_HPP_DECLARE_COMPOUND_)

 protected:
  void reset_() noexcept {
    c_.data = nullptr;
    c_.device = cpu();
    c_.ndim = 1;
    c_.dtype = dtype::float32;
    shape_[0] = 0;
    strides_[0] = 1;
    c_.shape = shape_;
    c_.strides = strides_;
    c_.byte_offset = 0;
  }

  void copy_from_(const TensorView& o) noexcept {
    c_ = o.c_;
    for (int32_t i = 0; i < o.c_.ndim; ++i) {
      shape_[i] = o.shape_[i];
      strides_[i] = o.strides_[i];
    }
    c_.shape = shape_;
    c_.strides = strides_;
  }

  void set_(void* data, CTDevice device, CTDataType dt, const int64_t* shape,
            const int64_t* strides, int32_t ndim, uint64_t byte_offset) {
    detail::checked_numel(shape, ndim, "ct::TensorView");
    c_.data = data;
    c_.device = device;
    c_.ndim = ndim;
    c_.dtype = dt;
    c_.byte_offset = byte_offset;
    c_.shape = shape_;
    c_.strides = strides_;
    for (int32_t i = 0; i < ndim; ++i) shape_[i] = shape[i];
    if (strides) {
      for (int32_t i = 0; i < ndim; ++i) strides_[i] = strides[i];
    } else {
      compact_strides_(shape_, ndim, strides_);
    }
  }

  void init_(void* data, CTDataType dt, const std::vector<int64_t>& shape,
             const std::vector<int64_t>& strides, CTDevice device, uint64_t byte_offset) {
    if (shape.size() > static_cast<size_t>(CT_MAX_NDIM))
      detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::TensorView: " + std::to_string(shape.size()) +
                                                " dimensions exceed CT_MAX_NDIM");
    if (!strides.empty() && strides.size() != shape.size())
      detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::TensorView: strides " +
                                                detail::dims_str(strides) + " do not match shape " +
                                                detail::dims_str(shape));
    set_(data, device, dt, shape.data(), strides.empty() ? nullptr : strides.data(),
         static_cast<int32_t>(shape.size()), byte_offset);
  }

  static void compact_strides_(const int64_t* shape, int32_t ndim, int64_t* strides) noexcept {
    int64_t s = 1;
    for (int32_t d = ndim - 1; d >= 0; --d) {
      strides[d] = s;
      s *= shape[d] > 0 ? shape[d] : 1;
    }
  }

  int32_t norm_dim_(int64_t dim, const char* who) const {
    if (dim < -c_.ndim || dim >= c_.ndim)
      detail::fail(CT_ERR_INVALID_ARGUMENT,
                   std::string(who) + ": dim=" + std::to_string(static_cast<long long>(dim)) +
                       " is out of range for ndim=" + std::to_string(c_.ndim));
    return static_cast<int32_t>(dim < 0 ? dim + c_.ndim : dim);
  }

  // Move element 0 by @p elements elements. byte_offset stays non-negative
  // for views of one allocation; a user view whose data points into the
  // middle of its memory (negative strides) moves the pointer instead.
  void shift_(int64_t elements) noexcept {
    int64_t off = static_cast<int64_t>(c_.byte_offset) +
                  elements * static_cast<int64_t>(itemsize());
    if (off >= 0) {
      c_.byte_offset = static_cast<uint64_t>(off);
    } else {
      c_.data = static_cast<char*>(c_.data) + off;
      c_.byte_offset = 0;
    }
  }

  void slice_(int64_t dim, int64_t start, int64_t stop, int64_t step) {
    int32_t d = norm_dim_(dim, "ct::TensorView::slice");
    if (step == 0) detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::TensorView::slice: step is 0");
    const int64_t n = shape_[d];
    // Python's PySlice_AdjustIndices.
    if (start < 0) {
      start += n;
      if (start < 0) start = step < 0 ? -1 : 0;
    } else if (start >= n) {
      start = step < 0 ? n - 1 : n;
    }
    if (stop < 0) {
      stop += n;
      if (stop < 0) stop = step < 0 ? -1 : 0;
    } else if (stop >= n) {
      stop = step < 0 ? n - 1 : n;
    }
    int64_t len = 0;
    if (step < 0) {
      if (stop < start) len = (start - stop - 1) / (-step) + 1;
    } else {
      if (start < stop) len = (stop - start - 1) / step + 1;
    }
    if (len > 0) shift_(start * strides_[d]);
    shape_[d] = len;
    strides_[d] *= step;
  }

  void select_(int64_t dim, int64_t index) {
    int32_t d = norm_dim_(dim, "ct::TensorView::select");
    const int64_t n = shape_[d];
    if (index < -n || index >= n)
      detail::fail(CT_ERR_INVALID_ARGUMENT,
                   "ct::TensorView::select: index " +
                       std::to_string(static_cast<long long>(index)) +
                       " is out of range for extent " + std::to_string(static_cast<long long>(n)));
    if (index < 0) index += n;
    shift_(index * strides_[d]);
    for (int32_t i = d; i + 1 < c_.ndim; ++i) {
      shape_[i] = shape_[i + 1];
      strides_[i] = strides_[i + 1];
    }
    --c_.ndim;
  }

  void transpose_(int64_t d0, int64_t d1) {
    int32_t a = norm_dim_(d0, "ct::TensorView::transpose");
    int32_t b = norm_dim_(d1, "ct::TensorView::transpose");
    std::swap(shape_[a], shape_[b]);
    std::swap(strides_[a], strides_[b]);
  }

  void permute_(const std::vector<int64_t>& dims) {
    if (dims.size() != static_cast<size_t>(c_.ndim))
      detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::TensorView::permute: dims " +
                                                detail::dims_str(dims) + " has " +
                                                std::to_string(dims.size()) + " entries, ndim=" +
                                                std::to_string(c_.ndim));
    int64_t sh[CT_MAX_NDIM], st[CT_MAX_NDIM];
    bool seen[CT_MAX_NDIM] = {false};
    for (int32_t i = 0; i < c_.ndim; ++i) {
      int32_t d = norm_dim_(dims[static_cast<size_t>(i)], "ct::TensorView::permute");
      if (seen[d])
        detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::TensorView::permute: dims " +
                                                  detail::dims_str(dims) + " repeats dim " +
                                                  std::to_string(d));
      seen[d] = true;
      sh[i] = shape_[d];
      st[i] = strides_[d];
    }
    for (int32_t i = 0; i < c_.ndim; ++i) {
      shape_[i] = sh[i];
      strides_[i] = st[i];
    }
  }

  // Replace one -1 in @p shape by the extent that keeps numel().
  std::vector<int64_t> infer_shape_(std::vector<int64_t> shape, const char* who) const {
    if (shape.size() > static_cast<size_t>(CT_MAX_NDIM))
      detail::fail(CT_ERR_INVALID_ARGUMENT, std::string(who) + ": " +
                                                std::to_string(shape.size()) +
                                                " dimensions exceed CT_MAX_NDIM");
    int64_t known = 1;
    int infer = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == -1) {
        if (infer >= 0)
          detail::fail(CT_ERR_INVALID_ARGUMENT,
                       std::string(who) + ": shape " + detail::dims_str(shape) + " has two -1");
        infer = static_cast<int>(i);
      } else if (shape[i] < 0) {
        detail::fail(CT_ERR_INVALID_ARGUMENT,
                     std::string(who) + ": shape " + detail::dims_str(shape) + " is negative");
      } else {
        known *= shape[i];
      }
    }
    const int64_t n = numel();
    if (infer >= 0) {
      if (known == 0 || n % known != 0)
        detail::fail(CT_ERR_SHAPE_MISMATCH, std::string(who) + ": cannot infer the -1 in " +
                                                detail::dims_str(shape) + " for " +
                                                std::to_string(static_cast<long long>(n)) +
                                                " elements");
      shape[static_cast<size_t>(infer)] = n / known;
    } else if (known != n) {
      detail::fail(CT_ERR_SHAPE_MISMATCH, std::string(who) + ": shape " +
                                              detail::dims_str(shape) + " does not have the " +
                                              std::to_string(static_cast<long long>(n)) +
                                              " elements of " + detail::dims_str(shape_, c_.ndim));
    }
    return shape;
  }

  // PyTorch's computeStride: strides for @p shape over the same memory, or
  // false when the current strides do not allow it without a copy.
  bool view_strides_(const std::vector<int64_t>& shape, int64_t* out) const {
    const int32_t nd = static_cast<int32_t>(shape.size());
    if (numel() == 0) {
      compact_strides_(shape.data(), nd, out);
      return true;
    }
    const int64_t one = 1;
    const int32_t old_nd = c_.ndim > 0 ? c_.ndim : 1;
    const int64_t* osh = c_.ndim > 0 ? shape_ : &one;
    const int64_t* ost = c_.ndim > 0 ? strides_ : &one;
    int32_t view_d = nd - 1;
    int64_t chunk_base_stride = ost[old_nd - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int32_t td = old_nd - 1; td >= 0; --td) {
      tensor_numel *= osh[td];
      if (td == 0 || (osh[td - 1] != 1 && ost[td - 1] != tensor_numel * chunk_base_stride)) {
        while (view_d >= 0 && (view_numel < tensor_numel || shape[static_cast<size_t>(view_d)] == 1)) {
          out[view_d] = view_numel * chunk_base_stride;
          view_numel *= shape[static_cast<size_t>(view_d)];
          --view_d;
        }
        if (view_numel != tensor_numel) return false;
        if (td > 0) {
          chunk_base_stride = ost[td - 1];
          tensor_numel = 1;
          view_numel = 1;
        }
      }
    }
    return view_d == -1;
  }

  void view_(const std::vector<int64_t>& requested) {
    std::vector<int64_t> shape = infer_shape_(requested, "ct::TensorView::view");
    int64_t st[CT_MAX_NDIM];
    if (!view_strides_(shape, st))
      detail::fail(CT_ERR_NEED_CONTIGUOUS,
                   "ct::TensorView::view: a tensor of shape " + detail::dims_str(shape_, c_.ndim) +
                       " and strides " + detail::dims_str(strides_, c_.ndim) +
                       " cannot be viewed as " + detail::dims_str(shape) +
                       " without a copy; use reshape()");
    c_.ndim = static_cast<int32_t>(shape.size());
    for (int32_t i = 0; i < c_.ndim; ++i) {
      shape_[i] = shape[static_cast<size_t>(i)];
      strides_[i] = st[i];
    }
  }

 private:
  CTensor c_;
  int64_t shape_[CT_MAX_NDIM];
  int64_t strides_[CT_MAX_NDIM];
};

namespace detail {
// std::vector<bool> has no data(): copy through bytes.
template <class T>
struct HostVector {
  static std::vector<T> read(const TensorView& src, void* stream) {
    std::vector<T> v(static_cast<size_t>(src.numel()));
    if (!v.empty()) {
      TensorView dst(v.data(), src.shape());
      CTensor d = dst.c();
      check(ct_copy(&src.c(), &d, stream));
    }
    return v;
  }
};
template <>
struct HostVector<bool> {
  static std::vector<bool> read(const TensorView& src, void* stream) {
    std::vector<uint8_t> bytes(static_cast<size_t>(src.numel()));
    if (!bytes.empty()) {
      TensorView dst(bytes.data(), dtype::bool_, src.shape());
      CTensor d = dst.c();
      check(ct_copy(&src.c(), &d, stream));
    }
    return std::vector<bool>(bytes.begin(), bytes.end());
  }
};
}  // namespace detail

template <class T>
std::vector<T> TensorView::to_vector(void* stream) const {
  detail::expect_dtype<T>(c_.dtype, "ct::TensorView::to_vector");
  return detail::HostVector<T>::read(*this, stream);
}

#undef CT_HPP_DECLARE_COMPOUND_

}  // namespace ct

#endif  // CTENSOR_CPP_TENSOR_VIEW_HPP_
