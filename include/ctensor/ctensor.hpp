/**
 * @file ctensor.hpp
 * @brief Header-only C++11 wrapper over the ctensor C ABI (ctensor.h).
 *
 * RAII tensors whose buffers are shared between views, ct::Error exceptions
 * that carry the library's own message, and NumPy-like functions generated
 * from the op tables (CT_ELEMENTWISE_OPS, CT_BROADCAST_REDUCE_OPS), so a new
 * op in ctensor.h appears here without an edit: elementwise maps, broadcasting
 * binary ops (also as operators + - * / % & | ^ << >> == != < <= > >= and
 * in-place += ... >>=), reductions over ct::Axes and along-axis ops.
 * Category 3 (CT_NN_OPS): option structs with chainable setters
 * (ct::Conv2dOptions().stride(2).padding(1)), ct::matmul, ct::conv2d and the
 * other NN ops returning new tensors or writing out= views, ct::Workspace
 * (an owned, growable scratch buffer) and ct::Plan (an owned CTPlan).
 * Everything is inline; only ctensor.h and the standard library are included.
 * Every named function that runs an op takes a trailing `void* stream` (NULL
 * or a CTCpuStream* on the CPU); operators use the library's default.
 *
 * @code
 *   #include <ctensor/ctensor.hpp>
 *
 *   ct::Tensor x = ct::Tensor::from({0.f, 1.f, 2.f, 3.f, 4.f, 5.f}, {2, 3});
 *   ct::Tensor y = ct::exp(x.transpose(0, 1));       // a view in, a new 3x2 tensor out
 *   ct::clamp(y, 1.0, 10.0, y);                      // in place: out is exactly y
 *   std::vector<float> v = y.slice(0, 1, 3).to_vector<float>();
 *   ct::Tensor z = (x - ct::mean(x, 1, true)) / ct::std(x, 1, true);  // broadcasting
 *   ct::Tensor n = ct::sum(x > 2.f);                 // int64 count of a bool tensor
 *   ct::Tensor p = ct::softmax(x);                   // along the last axis
 *   x += 1.0;                                        // in place, same buffer
 *   try {
 *     ct::sqrt(ct::Tensor::from({1, 2, 3}));         // int32: sqrt is float-only
 *   } catch (const ct::Error& e) {
 *     std::fprintf(stderr, "%s: %s\n", e.status_name(), e.what());
 *   }
 * @endcode
 */
#ifndef CTENSOR_CTENSOR_HPP_
#define CTENSOR_CTENSOR_HPP_

#include "ctensor.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

/** Everything the C++ wrapper declares. */
namespace ct {

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/** The exception every ct:: function throws on failure: the CTStatus and a
 *  copy of the library's message (ct_last_error() is overwritten by the next
 *  call on the thread, so the copy is what stays valid). */
class Error : public std::runtime_error {
 public:
  /** An error with @p status and @p message (copied; the status name if empty). */
  Error(CTStatus status, const std::string& message)
      : std::runtime_error(message.empty() ? std::string(ct_status_string(status)) : message),
        status_(status) {}
  /** The failing CTStatus (negative). */
  CTStatus status() const noexcept { return status_; }
  /** The status' static name, e.g. "CT_ERR_SHAPE_MISMATCH". */
  const char* status_name() const noexcept { return ct_status_string(status_); }

 private:
  CTStatus status_;
};

/** Throw ct::Error(status, copy of ct_last_error()) unless @p status is CT_OK. */
inline void check(CTStatus status) {
  if (status != CT_OK) {
    const char* message = ct_last_error();
    throw Error(status, std::string(message ? message : ""));
  }
}

/** Internal helpers; not part of the API. */
namespace detail {

inline std::string dims_str(const int64_t* d, int32_t n) {
  std::string s = "[";
  for (int32_t i = 0; i < n; ++i) {
    if (i) s += ",";
    s += std::to_string(static_cast<long long>(d[i]));
  }
  return s + "]";
}

inline std::string dims_str(const std::vector<int64_t>& d) {
  return dims_str(d.data(), static_cast<int32_t>(d.size()));
}

[[noreturn]] inline void fail(CTStatus status, const std::string& message) {
  throw Error(status, message);
}

}  // namespace detail

/* ------------------------------------------------------------------------ */
/* Devices and dtypes                                                        */
/* ------------------------------------------------------------------------ */

/** The host CPU device {CT_CPU, 0}. */
constexpr CTDevice cpu() { return CTDevice{CT_CPU, 0}; }

/** True if @p a and @p b are the same device. */
inline bool same_device(CTDevice a, CTDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}

/** dtype constants and helpers: ct::dtype::float32, ct::dtype::name(dt), ... */
namespace dtype {
constexpr CTDataType bool_ = {CT_BOOL, 8, 1};       /**< bool, one byte 0 or 1 */
constexpr CTDataType int8 = {CT_INT, 8, 1};         /**< int8 */
constexpr CTDataType int16 = {CT_INT, 16, 1};       /**< int16 */
constexpr CTDataType int32 = {CT_INT, 32, 1};       /**< int32 */
constexpr CTDataType int64 = {CT_INT, 64, 1};       /**< int64 */
constexpr CTDataType uint8 = {CT_UINT, 8, 1};       /**< uint8 */
constexpr CTDataType float16 = {CT_FLOAT, 16, 1};   /**< IEEE half */
constexpr CTDataType bfloat16 = {CT_BFLOAT, 16, 1}; /**< bfloat16 */
constexpr CTDataType float32 = {CT_FLOAT, 32, 1};   /**< float */
constexpr CTDataType float64 = {CT_FLOAT, 64, 1};   /**< double */

/** True if @p a and @p b are the same dtype (code, bits and lanes). */
inline bool equal(CTDataType a, CTDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/** Bytes per element of @p dt. */
inline size_t itemsize(CTDataType dt) {
  return (static_cast<size_t>(dt.bits) * dt.lanes + 7) / 8;
}

/** A static name for @p dt ("float32", "bool", ...; "unknown" otherwise). */
inline const char* name(CTDataType dt) {
  if (dt.lanes != 1) return "unknown";
  switch (dt.code) {
    case CT_BOOL: return dt.bits == 8 ? "bool" : "unknown";
    case CT_UINT: return dt.bits == 8 ? "uint8" : "unknown";
    case CT_BFLOAT: return dt.bits == 16 ? "bfloat16" : "unknown";
    case CT_INT:
      switch (dt.bits) {
        case 8: return "int8";
        case 16: return "int16";
        case 32: return "int32";
        case 64: return "int64";
        default: return "unknown";
      }
    case CT_FLOAT:
      switch (dt.bits) {
        case 16: return "float16";
        case 32: return "float32";
        case 64: return "float64";
        default: return "unknown";
      }
    default: return "unknown";
  }
}
}  // namespace dtype

namespace detail {
template <class T>
struct DTypeOf {
  typedef typename std::remove_cv<T>::type U;
  static constexpr bool is_bool = std::is_same<U, bool>::value;
  static constexpr bool supported =
      is_bool || (std::is_floating_point<U>::value && (sizeof(U) == 4 || sizeof(U) == 8)) ||
      (std::is_integral<U>::value && std::is_signed<U>::value && sizeof(U) <= 8) ||
      (std::is_integral<U>::value && std::is_unsigned<U>::value && sizeof(U) == 1);
  static constexpr uint8_t code = static_cast<uint8_t>(
      is_bool ? CT_BOOL
              : std::is_floating_point<U>::value ? CT_FLOAT
                                                 : std::is_signed<U>::value ? CT_INT : CT_UINT);
  static constexpr uint8_t bits = static_cast<uint8_t>(8 * sizeof(U));
};
}  // namespace detail

/** The dtype of C++ type @p T: bool, int8_t/16/32/64, uint8_t, float, double. */
template <class T>
constexpr CTDataType dtype_of() {
  static_assert(detail::DTypeOf<T>::supported,
                "ct::dtype_of<T>: T must be bool, int8_t..int64_t, uint8_t, float or double");
  static_assert(sizeof(bool) == 1, "ctensor stores bool in one byte");
  return CTDataType{detail::DTypeOf<T>::code, detail::DTypeOf<T>::bits, 1};
}

namespace detail {
template <class T>
inline void expect_dtype(CTDataType actual, const char* who,
                         typename std::enable_if<!std::is_void<T>::value>::type* = nullptr) {
  if (!dtype::equal(actual, dtype_of<T>()))
    fail(CT_ERR_DTYPE_MISMATCH, std::string(who) + ": the tensor is " + dtype::name(actual) +
                                    ", not " + dtype::name(dtype_of<T>()));
}
template <class T>
inline void expect_dtype(CTDataType, const char*,
                         typename std::enable_if<std::is_void<T>::value>::type* = nullptr) {}

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

class Tensor;

/* The compound assignments and the binary op each one runs (in place, out
 * exactly the left operand). Undefined at the end of this header. */
#define CT_HPP_COMPOUND_OPS_(X)                                                          \
  X(+=, ADD) X(-=, SUB) X(*=, MUL) X(/=, DIV) X(%=, MOD) X(&=, BITWISE_AND)              \
  X(|=, BITWISE_OR) X(^=, BITWISE_XOR) X(<<=, LEFT_SHIFT) X(>>=, RIGHT_SHIFT)

#define CT_HPP_DECLARE_COMPOUND_(OP, ID)                      \
  TensorView& operator OP(const TensorView& b);                \
  template <class S>                                           \
  typename std::enable_if<std::is_arithmetic<S>::value, TensorView&>::type operator OP(S b);

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

/** The registry's facts about @p op (throws CT_ERR_NOT_FOUND for a bad id). */
inline CTOpInfo op_info(int32_t op) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  check(ct_op_info(op, &info));
  return info;
}

namespace detail {
inline int32_t query_output_kind(int32_t op) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  return ct_op_info(op, &info) == CT_OK ? info.output_dtype : static_cast<int32_t>(CT_OUTPUT_SAME);
}

// CTOpInfo.output_dtype of every op of this header, queried once per process.
inline int32_t output_kind(int32_t op) {
  struct Cache {
    int32_t kind[CT_OP_END_];
    Cache() {
      for (int32_t i = 0; i < CT_OP_END_; ++i) kind[i] = query_output_kind(i);
    }
  };
  static const Cache cache;
  return op >= 0 && op < CT_OP_END_ ? cache.kind[op] : query_output_kind(op);
}
}  // namespace detail

/** True for the float dtypes (float16, bfloat16, float32, float64). */
inline bool is_floating(CTDataType dt) { return dt.code == CT_FLOAT || dt.code == CT_BFLOAT; }

/** The dtype op @p op writes for inputs of dtype @p input, by the op's
 *  CTOpInfo.output_dtype: SAME (and ANY) -> @p input; BOOL -> bool; INT64 ->
 *  int64; ACCUM -> @p input if it is a float dtype, else int64; FLOAT ->
 *  @p input if it is a float dtype, else float64. */
inline CTDataType output_dtype(int32_t op, CTDataType input) {
  switch (detail::output_kind(op)) {
    case CT_OUTPUT_BOOL: return dtype::bool_;
    case CT_OUTPUT_INT64: return dtype::int64;
    case CT_OUTPUT_ACCUM: return is_floating(input) ? input : dtype::int64;
    case CT_OUTPUT_FLOAT: return is_floating(input) ? input : dtype::float64;
    default: return input;
  }
}

/** out = op(x) for any CT_KIND_UNARY op id (generic form of ct::exp etc.). */
inline void unary(int32_t op, const TensorView& x, const TensorView& out, void* stream = nullptr) {
  CTensor o = out.c();
  check(ct_unary(op, &x.c(), &o, stream));
}
/** op(x) into a new compact tensor, for any CT_KIND_UNARY op id. */
inline Tensor unary(int32_t op, const TensorView& x, void* stream = nullptr) {
  Tensor out = Tensor::empty(x.shape(), output_dtype(op, x.dtype()), x.device());
  unary(op, x, out, stream);
  return out;
}

/** out = op(x; params) for any CT_KIND_UNARY_PARAM op id. */
inline void unary_param(int32_t op, const TensorView& x, const std::vector<double>& params,
                        const TensorView& out, void* stream = nullptr) {
  CTensor o = out.c();
  check(ct_unary_param(op, &x.c(), params.data(), static_cast<int32_t>(params.size()), &o,
                       stream));
}
/** op(x; params) into a new compact tensor, for any CT_KIND_UNARY_PARAM op id. */
inline Tensor unary_param(int32_t op, const TensorView& x, const std::vector<double>& params,
                          void* stream = nullptr) {
  Tensor out = Tensor::empty(x.shape(), output_dtype(op, x.dtype()), x.device());
  unary_param(op, x, params, out, stream);
  return out;
}

/** out = op(a, b, c) for any CT_KIND_TERNARY op id. */
inline void ternary(int32_t op, const TensorView& a, const TensorView& b, const TensorView& c,
                    const TensorView& out, void* stream = nullptr) {
  CTensor o = out.c();
  check(ct_ternary(op, &a.c(), &b.c(), &c.c(), &o, stream));
}
/** op(a, b, c) into a new compact tensor with b's shape, dtype and device
 *  (b, not a: where's a is the bool condition). */
inline Tensor ternary(int32_t op, const TensorView& a, const TensorView& b, const TensorView& c,
                      void* stream = nullptr) {
  Tensor out = Tensor::empty(b.shape(), output_dtype(op, b.dtype()), b.device());
  ternary(op, a, b, c, out, stream);
  return out;
}

/* ------------------------------------------------------------------------ */
/* NumPy-like functions, generated from CT_ELEMENTWISE_OPS                   */
/* ------------------------------------------------------------------------ */
/*
 * For every op of ctensor.h, by kind (a kind without a generator here is a
 * compile error, on purpose):
 *
 *   CT_KIND_UNARY        Tensor name(x, stream = nullptr)
 *                        void   name(x, out, stream = nullptr)
 *   CT_KIND_UNARY_PARAM  Tensor name(x, p0[, p1], stream = nullptr)
 *                        void   name(x, p0[, p1], out, stream = nullptr)
 *   CT_KIND_TERNARY      Tensor name(a, b, c, stream = nullptr)
 *                        void   name(a, b, c, out, stream = nullptr)
 *   CT_KIND_CAST         Tensor name(x, dtype, stream = nullptr)
 *                        void   name(x, out, stream = nullptr)
 *
 * e.g. ct::exp(x), ct::isnan(x) (bool result), ct::leaky_relu(x, 0.01),
 * ct::clamp(x, lo, hi, out), ct::where(cond, a, b), ct::cast(x, ct::dtype::float16).
 * The value-returning forms allocate a compact result on x's device; the out=
 * forms write into any view (out may be exactly x: in place). Names are
 * parenthesised in the definitions so that a function-like C macro of the
 * same name (isnan, ...) cannot expand there.
 */

#define CT_HPP_GEN_(ID, name, kind, nparams, summary) CT_HPP_GEN_##kind(ID, name, nparams)

#define CT_HPP_GEN_CT_KIND_UNARY(ID, name, nparams)                                    \
  inline Tensor(name)(const TensorView& x, void* stream = nullptr) {                   \
    return unary(CT_OP_##ID, x, stream);                                               \
  }                                                                                    \
  inline void(name)(const TensorView& x, const TensorView& out, void* stream = nullptr) { \
    unary(CT_OP_##ID, x, out, stream);                                                 \
  }

#define CT_HPP_GEN_CT_KIND_UNARY_PARAM(ID, name, nparams) CT_HPP_PARAMS_##nparams(ID, name)

#define CT_HPP_PARAMS_1(ID, name)                                                        \
  inline Tensor(name)(const TensorView& x, double p0, void* stream = nullptr) {          \
    Tensor out = Tensor::empty(x.shape(), output_dtype(CT_OP_##ID, x.dtype()), x.device()); \
    CTensor o = out.c();                                                                 \
    check(ct_unary_param(CT_OP_##ID, &x.c(), &p0, 1, &o, stream));                       \
    return out;                                                                          \
  }                                                                                      \
  inline void(name)(const TensorView& x, double p0, const TensorView& out,               \
                    void* stream = nullptr) {                                            \
    CTensor o = out.c();                                                                 \
    check(ct_unary_param(CT_OP_##ID, &x.c(), &p0, 1, &o, stream));                       \
  }

#define CT_HPP_PARAMS_2(ID, name)                                                          \
  inline Tensor(name)(const TensorView& x, double p0, double p1, void* stream = nullptr) { \
    Tensor out = Tensor::empty(x.shape(), output_dtype(CT_OP_##ID, x.dtype()), x.device()); \
    const double p[2] = {p0, p1};                                                          \
    CTensor o = out.c();                                                                   \
    check(ct_unary_param(CT_OP_##ID, &x.c(), p, 2, &o, stream));                           \
    return out;                                                                            \
  }                                                                                        \
  inline void(name)(const TensorView& x, double p0, double p1, const TensorView& out,      \
                    void* stream = nullptr) {                                              \
    const double p[2] = {p0, p1};                                                          \
    CTensor o = out.c();                                                                   \
    check(ct_unary_param(CT_OP_##ID, &x.c(), p, 2, &o, stream));                           \
  }

#define CT_HPP_GEN_CT_KIND_TERNARY(ID, name, nparams)                                         \
  inline Tensor(name)(const TensorView& a, const TensorView& b, const TensorView& c,          \
                      void* stream = nullptr) {                                               \
    return ternary(CT_OP_##ID, a, b, c, stream);                                              \
  }                                                                                           \
  inline void(name)(const TensorView& a, const TensorView& b, const TensorView& c,            \
                    const TensorView& out, void* stream = nullptr) {                          \
    ternary(CT_OP_##ID, a, b, c, out, stream);                                                \
  }

#define CT_HPP_GEN_CT_KIND_CAST(ID, name, nparams)                                         \
  inline void(name)(const TensorView& x, const TensorView& out, void* stream = nullptr) {  \
    CTensor o = out.c();                                                                   \
    check(ct_cast(&x.c(), &o, stream));                                                    \
  }                                                                                        \
  inline Tensor(name)(const TensorView& x, CTDataType dt, void* stream = nullptr) {        \
    Tensor out = Tensor::empty(x.shape(), dt, x.device());                                 \
    (name)(x, out, stream);                                                                \
    return out;                                                                            \
  }

CT_ELEMENTWISE_OPS(CT_HPP_GEN_)

#undef CT_HPP_GEN_
#undef CT_HPP_GEN_CT_KIND_UNARY
#undef CT_HPP_GEN_CT_KIND_UNARY_PARAM
#undef CT_HPP_PARAMS_1
#undef CT_HPP_PARAMS_2
#undef CT_HPP_GEN_CT_KIND_TERNARY
#undef CT_HPP_GEN_CT_KIND_CAST

/* ------------------------------------------------------------------------ */
/* Scalars, axes and shapes for category 2                                   */
/* ------------------------------------------------------------------------ */

namespace detail {
template <class S>
struct EnableArith : std::enable_if<std::is_arithmetic<S>::value, int> {};
// An axis argument: any integer type but bool (so that a bool never reads as axis 1).
template <class I>
struct EnableAxis
    : std::enable_if<std::is_integral<I>::value && !std::is_same<I, bool>::value, int> {};

inline std::string num_str(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// [lo, hi] of an integer or bool dtype; false for the float (and unknown) dtypes.
inline bool int_range(CTDataType dt, int64_t* lo, int64_t* hi) {
  if (dt.lanes != 1) return false;
  if (dt.code == CT_BOOL && dt.bits == 8) {
    *lo = 0;
    *hi = 1;
    return true;
  }
  if (dt.code == CT_UINT && dt.bits == 8) {
    *lo = 0;
    *hi = 255;
    return true;
  }
  if (dt.code != CT_INT) return false;
  switch (dt.bits) {
    case 8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
    case 16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
    case 32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case 64: *lo = INT64_MIN; *hi = INT64_MAX; return true;
    default: return false;
  }
}

// A 0-d tensor of dtype @p dt on @p device from a host 0-d source, after the
// representability check (integer/bool targets only).
inline Tensor scalar_from(const TensorView& src, bool integral, int64_t i, double f, CTDataType dt,
                          CTDevice device, void* stream) {
  int64_t lo = 0, hi = 0;
  if (int_range(dt, &lo, &hi)) {
    bool ok;
    if (integral) {
      ok = i >= lo && i <= hi;
    } else {
      // Integral and within [lo, hi] (NaN fails every comparison; 2^63, which
      // is int64's hi as a double, is out of range).
      ok = f >= static_cast<double>(lo) && f <= static_cast<double>(hi) &&
           f < 9223372036854775808.0 && static_cast<double>(static_cast<int64_t>(f)) == f;
    }
    if (!ok)
      fail(CT_ERR_INVALID_ARGUMENT,
           "ct::scalar: " +
               (integral ? std::to_string(static_cast<long long>(i)) : num_str(f)) +
               " is not representable in " + dtype::name(dt));
  }
  Tensor out = Tensor::empty(std::vector<int64_t>(), dt, cpu());
  CTensor o = out.c();
  check(ct_cast(&src.c(), &o, stream));
  return out.to(device, stream);
}
}  // namespace detail

/** A 0-d tensor of dtype @p dt on @p device holding @p value (any arithmetic
 *  C++ type), converted with ct_cast. For integer and bool dtypes the value
 *  must be integral and in the dtype's range (bool: 0 or 1), else
 *  CT_ERR_INVALID_ARGUMENT; for float dtypes it is rounded to nearest.
 *  This is how `x + 2.0` and `x += 1` treat their scalar: it takes x's dtype
 *  (NumPy's "weak" Python scalars), so int32 x + 2.5 throws rather than
 *  promoting. */
template <class S>
inline Tensor scalar(S value, CTDataType dt, CTDevice device = cpu(), void* stream = nullptr) {
  static_assert(std::is_arithmetic<S>::value, "ct::scalar: the value must be arithmetic");
  if (std::is_floating_point<S>::value) {
    double f = static_cast<double>(value);
    TensorView src(&f, std::vector<int64_t>());
    return detail::scalar_from(src, false, 0, f, dt, device, stream);
  }
  if (std::is_unsigned<S>::value && static_cast<uint64_t>(value) > static_cast<uint64_t>(INT64_MAX))
    detail::fail(CT_ERR_INVALID_ARGUMENT,
                 "ct::scalar: " + std::to_string(static_cast<unsigned long long>(value)) +
                     " is not representable in " + dtype::name(dt));
  int64_t i = static_cast<int64_t>(value);
  TensorView src(&i, std::vector<int64_t>());
  return detail::scalar_from(src, true, i, 0.0, dt, device, stream);
}

/** The axes a reduction runs over. Three cases, as NumPy's axis=None,
 *  axis=(...) and axis=():
 *   - ct::Axes::all(): every axis (the C ABI's axes = NULL). The reductions'
 *     forms without an axes argument, ct::sum(x), mean this.
 *   - a list, from an initializer list or a std::vector<int> / <int64_t>:
 *     ct::sum(x, {0, 2}); each in [-ndim, ndim), no repeats.
 *   - an empty list, ct::Axes::none(), `{}` or an empty vector: no axis at all
 *     (each output element is op of one input element; NumPy's axis=()).
 *     Note ct::sum(x, {}) is this, not "all": Axes has no default
 *     constructor, so `{}` is the empty list.
 *  A single int axis is accepted directly by every reduction: ct::sum(x, 1). */
class Axes {
 public:
  /** Those axes; `{}` is no axis (NumPy's axis=()). */
  Axes(std::initializer_list<int> axes) : all_(false) {
    for (int a : axes) push_(a);
  }
  /** Those axes; an empty vector is no axis (NumPy's axis=()). */
  Axes(const std::vector<int>& axes) : all_(false) {  // NOLINT: implicit on purpose
    for (size_t k = 0; k < axes.size(); ++k) push_(axes[k]);
  }
  /** Those axes; an empty vector is no axis (NumPy's axis=()). */
  Axes(const std::vector<int64_t>& axes) : all_(false) {  // NOLINT: implicit on purpose
    for (size_t k = 0; k < axes.size(); ++k) push_(axes[k]);
  }
  /** Every axis (NumPy's axis=None). */
  static Axes all() { return Axes(AllTag()); }
  /** No axis (NumPy's axis=()). */
  static Axes none() { return Axes(std::vector<int>()); }
  /** The one axis @p axis. */
  static Axes one(int64_t axis) { return Axes(std::vector<int64_t>(1, axis)); }

  /** True for Axes::all(). */
  bool is_all() const noexcept { return all_; }
  /** The listed axes as given (negative ones not wrapped); empty for all() and none(). */
  const std::vector<int32_t>& values() const noexcept { return axes_; }
  /** ct_reduce's axes argument: NULL for all(), else non-NULL (also when empty). */
  const int32_t* c_axes() const noexcept {
    return all_ ? nullptr : axes_.empty() ? &none_ : axes_.data();
  }
  /** ct_reduce's num_axes argument. */
  int32_t c_num_axes() const noexcept { return static_cast<int32_t>(axes_.size()); }
  /** "None", "()" or "(0, -1)" for messages. */
  std::string str() const {
    if (all_) return "None";
    std::string s = "(";
    for (size_t k = 0; k < axes_.size(); ++k) s += (k ? ", " : "") + std::to_string(axes_[k]);
    return s + ")";
  }

 private:
  struct AllTag {};
  explicit Axes(AllTag) : all_(true) {}
  void push_(int64_t a) {
    if (a < INT32_MIN || a > INT32_MAX)
      detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::Axes: axis " +
                                                std::to_string(static_cast<long long>(a)) +
                                                " does not fit in int32");
    axes_.push_back(static_cast<int32_t>(a));
  }

  bool all_;
  std::vector<int32_t> axes_;
  int32_t none_ = 0;  // a non-NULL pointer for the empty list
};

namespace detail {
// NumPy's broadcast of two shapes; false (and the first failing output dim)
// when they do not broadcast.
inline bool try_broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                          std::vector<int64_t>& out, size_t* bad_dim) {
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  out.assign(n, 1);
  for (size_t d = 0; d < n; ++d) {
    const int64_t ea = d + a.size() >= n ? a[d + a.size() - n] : 1;
    const int64_t eb = d + b.size() >= n ? b[d + b.size() - n] : 1;
    if (ea == eb || eb == 1) {
      out[d] = ea;
    } else if (ea == 1) {
      out[d] = eb;
    } else {
      if (bad_dim) *bad_dim = d;
      return false;
    }
  }
  return true;
}

inline std::string broadcast_message(const char* who, const std::vector<int64_t>& a,
                                     const std::vector<int64_t>& b) {
  std::vector<int64_t> ignored;
  size_t d = 0;
  try_broadcast(a, b, ignored, &d);
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  const int64_t ea = d + a.size() >= n ? a[d + a.size() - n] : 1;
  const int64_t eb = d + b.size() >= n ? b[d + b.size() - n] : 1;
  return std::string(who) + ": b.shape=" + dims_str(b) + " does not broadcast with a.shape=" +
         dims_str(a) + " (dim " + std::to_string(d) + ": " +
         std::to_string(static_cast<long long>(eb)) + " vs " +
         std::to_string(static_cast<long long>(ea)) + ")";
}

// The shape a reduction of @p shape over @p axes gives; false for a bad or
// repeated axis (the message says which).
inline bool try_reduce_shape(const std::vector<int64_t>& shape, const Axes& axes, bool keepdims,
                             std::vector<int64_t>& out, std::string* why) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  bool reduced[CT_MAX_NDIM] = {false};
  if (nd > CT_MAX_NDIM) {
    if (why) *why = "ndim " + std::to_string(static_cast<long long>(nd)) + " exceeds CT_MAX_NDIM";
    return false;
  }
  if (axes.is_all()) {
    for (int64_t d = 0; d < nd; ++d) reduced[d] = true;
  } else {
    // A 0-d shape takes axis 0 or -1 (its one element), as ct_reduce does.
    const int64_t na = nd > 0 ? nd : 1;
    for (size_t k = 0; k < axes.values().size(); ++k) {
      const int64_t a = axes.values()[k];
      if (a < -na || a >= na) {
        if (why)
          *why = "axis " + std::to_string(static_cast<long long>(a)) +
                 " is out of range for ndim=" + std::to_string(static_cast<long long>(nd));
        return false;
      }
      const int64_t w = a < 0 ? a + na : a;
      if (reduced[w]) {
        if (why) *why = "axis " + std::to_string(static_cast<long long>(w)) + " is repeated";
        return false;
      }
      reduced[w] = true;
    }
    if (nd == 0) reduced[0] = false;  // nothing to drop or keep as 1
  }
  out.clear();
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[d])
      out.push_back(shape[static_cast<size_t>(d)]);
    else if (keepdims)
      out.push_back(1);
  }
  return true;
}

// A 0-d output the library validates against and never writes (it fails
// before the first write): used to let ct_binary / ct_reduce word the error
// for arguments the wrapper cannot size an output for.
struct ScratchOut {
  double mem[2];  // 16 bytes, 8-aligned: room for any supported element
  CTensor c;
  ScratchOut(CTDataType dt, CTDevice device) {
    mem[0] = mem[1] = 0;
    c.data = mem;
    c.device = device;
    c.ndim = 0;
    c.dtype = dt;
    c.shape = nullptr;
    c.strides = nullptr;
    c.byte_offset = 0;
  }
};
}  // namespace detail

/** NumPy's broadcast of shapes @p a and @p b: aligned at the last dim, each
 *  pair of extents equal or one of them 1. Throws CT_ERR_SHAPE_MISMATCH
 *  naming both shapes and the dim. */
inline std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  if (!detail::try_broadcast(a, b, out, nullptr))
    detail::fail(CT_ERR_SHAPE_MISMATCH, detail::broadcast_message("ct::broadcast_shape", a, b));
  return out;
}

/** The shape a reduction of @p shape over @p axes gives (reduced dims removed,
 *  or set to 1 with @p keepdims). Throws CT_ERR_INVALID_ARGUMENT for an axis
 *  out of [-ndim, ndim) or a repeated one. */
inline std::vector<int64_t> reduce_shape(const std::vector<int64_t>& shape, const Axes& axes,
                                         bool keepdims = false) {
  std::vector<int64_t> out;
  std::string why;
  if (!detail::try_reduce_shape(shape, axes, keepdims, out, &why))
    detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::reduce_shape: shape " + detail::dims_str(shape) +
                                              ", axes " + axes.str() + ": " + why);
  return out;
}

/* ------------------------------------------------------------------------ */
/* Generic entry points of category 2                                        */
/* ------------------------------------------------------------------------ */

/** out = op(a, b) with NumPy broadcasting, for any CT_KIND_BINARY op id.
 *  out's shape must be exactly the broadcast shape; out may be exactly a or b
 *  (in place). */
inline void binary(int32_t op, const TensorView& a, const TensorView& b, const TensorView& out,
                   void* stream = nullptr) {
  CTensor o = out.c();
  check(ct_binary(op, &a.c(), &b.c(), &o, stream));
}
/** op(a, b) into a new compact tensor of the broadcast shape on a's device,
 *  with the op's output dtype (ct::output_dtype). Shapes that do not
 *  broadcast throw CT_ERR_SHAPE_MISMATCH with the library's message. */
inline Tensor binary(int32_t op, const TensorView& a, const TensorView& b,
                     void* stream = nullptr) {
  std::vector<int64_t> shape;
  const CTDataType odt = output_dtype(op, a.dtype());
  if (!detail::try_broadcast(a.shape(), b.shape(), shape, nullptr)) {
    // Nothing to allocate: let the library validate (against a scratch out it
    // never writes) so the error is its own, then fall back to ours.
    detail::ScratchOut scratch(odt, a.device());
    check(ct_binary(op, &a.c(), &b.c(), &scratch.c, stream));
    detail::fail(CT_ERR_SHAPE_MISMATCH, detail::broadcast_message("ct::binary", a.shape(), b.shape()));
  }
  Tensor out = Tensor::empty(shape, odt, a.device());
  binary(op, a, b, out, stream);
  return out;
}

/** out = op(x) reduced over @p axes, for any CT_KIND_REDUCE op id; @p params
 *  are the op's (var, std: {correction}); out's shape must be reduce_shape(). */
inline void reduce(int32_t op, const TensorView& x, const Axes& axes, bool keepdims,
                   const std::vector<double>& params, const TensorView& out,
                   void* stream = nullptr) {
  CTensor o = out.c();
  check(ct_reduce(op, &x.c(), axes.c_axes(), axes.c_num_axes(), keepdims ? 1 : 0,
                  params.empty() ? nullptr : params.data(), static_cast<int32_t>(params.size()),
                  &o, stream));
}
/** op(x) reduced over @p axes into a new compact tensor on x's device, with
 *  the op's output dtype. A bad or repeated axis throws
 *  CT_ERR_INVALID_ARGUMENT with the library's message. */
inline Tensor reduce(int32_t op, const TensorView& x, const Axes& axes = Axes::all(),
                     bool keepdims = false, const std::vector<double>& params = std::vector<double>(),
                     void* stream = nullptr) {
  std::vector<int64_t> shape;
  const CTDataType odt = output_dtype(op, x.dtype());
  std::string why;
  if (!detail::try_reduce_shape(x.shape(), axes, keepdims, shape, &why)) {
    detail::ScratchOut scratch(odt, x.device());
    check(ct_reduce(op, &x.c(), axes.c_axes(), axes.c_num_axes(), keepdims ? 1 : 0,
                    params.empty() ? nullptr : params.data(), static_cast<int32_t>(params.size()),
                    &scratch.c, stream));
    detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::reduce: x.shape=" + detail::dims_str(x.shape()) +
                                              ", axes " + axes.str() + ": " + why);
  }
  Tensor out = Tensor::empty(shape, odt, x.device());
  reduce(op, x, axes, keepdims, params, out, stream);
  return out;
}

namespace detail {
inline int32_t axis32(int64_t axis) {
  if (axis < INT32_MIN || axis > INT32_MAX)
    fail(CT_ERR_INVALID_ARGUMENT, "ct::along_axis: axis " +
                                      std::to_string(static_cast<long long>(axis)) +
                                      " does not fit in int32");
  return static_cast<int32_t>(axis);
}
// Along-axis ops whose axis defaults to the last one (softmax, log_softmax).
constexpr bool last_axis_default(int op) {
  return op == CT_OP_SOFTMAX || op == CT_OP_LOG_SOFTMAX;
}
}  // namespace detail

/** out = op(x) along @p axis, for any CT_KIND_ALONG_AXIS op id; out has x's
 *  shape and may be exactly x (in place). */
inline void along_axis(int32_t op, const TensorView& x, int64_t axis, const TensorView& out,
                       void* stream = nullptr) {
  CTensor o = out.c();
  check(ct_along_axis(op, &x.c(), detail::axis32(axis), &o, stream));
}
/** op(x) along @p axis into a new compact tensor of x's shape, with the op's
 *  output dtype. */
inline Tensor along_axis(int32_t op, const TensorView& x, int64_t axis, void* stream = nullptr) {
  Tensor out = Tensor::empty(x.shape(), output_dtype(op, x.dtype()), x.device());
  along_axis(op, x, axis, out, stream);
  return out;
}

/* ------------------------------------------------------------------------ */
/* NumPy-like functions, generated from CT_BROADCAST_REDUCE_OPS              */
/* ------------------------------------------------------------------------ */
/*
 * By kind (a kind, or a number of parameters, without a generator here is a
 * compile error, on purpose). S is any arithmetic C++ type (a scalar,
 * converted with ct::scalar to the tensor operand's dtype); I is any integer
 * type but bool (one axis).
 *
 *   CT_KIND_BINARY   Tensor name(a, b, stream = nullptr)        broadcast shape
 *                    void   name(a, b, out, stream = nullptr)
 *                    Tensor name(a, S b, stream = nullptr), name(S a, b, stream = nullptr)
 *                    void   name(a, S b, out, stream = nullptr)
 *   CT_KIND_REDUCE   Tensor name(x)                             every axis
 *                    Tensor name(x, Axes axes, keepdims = false, stream = nullptr)
 *                    Tensor name(x, I axis, keepdims = false, stream = nullptr)
 *                    void   name(x, Axes axes, keepdims, out, stream = nullptr)
 *                    void   name(x, I axis, keepdims, out, stream = nullptr)
 *     with one parameter (var, std: correction, NumPy's ddof), after keepdims:
 *                    Tensor name(x, Axes axes, keepdims = false, p = 0, stream = nullptr)
 *                    Tensor name(x, I axis, keepdims = false, p = 0, stream = nullptr)
 *                    void   name(x, Axes axes, keepdims, [p,] out, stream = nullptr)
 *                    void   name(x, I axis, keepdims, [p,] out, stream = nullptr)
 *   CT_KIND_ALONG_AXIS
 *                    Tensor name(x, I axis, stream = nullptr)
 *                    void   name(x, I axis, out, stream = nullptr)
 *     softmax and log_softmax also: name(x[, out], stream = nullptr) on the last axis
 *
 * e.g. ct::add(a, b), ct::maximum(x, 0.0), ct::less(a, b) (bool),
 * ct::sum(x) (0-d), ct::sum(x, {0, 2}, true), ct::mean(x, 1) (float64 for
 * integer x), ct::argmax(x, -1) (int64), ct::var(x, {1}, false, 1.0) (sample
 * variance), ct::sum(x, ct::Axes::none()) or ct::sum(x, {}) (NumPy's
 * axis=()), ct::softmax(x), ct::cumsum(x, 0). A full reduction with a stream
 * is ct::sum(x, ct::Axes::all(), false, stream). Value-returning forms
 * allocate a compact result of the op's output dtype (ct::output_dtype) on
 * the (first tensor) operand's device; out= forms write into any view.
 */

#define CT_HPP_GEN_(ID, name, kind, nparams, summary) CT_HPP_GEN_##kind(ID, name, nparams)

#define CT_HPP_GEN_CT_KIND_BINARY(ID, name, nparams)                                          \
  inline Tensor(name)(const TensorView& a, const TensorView& b, void* stream = nullptr) {     \
    return binary(CT_OP_##ID, a, b, stream);                                                  \
  }                                                                                           \
  inline void(name)(const TensorView& a, const TensorView& b, const TensorView& out,          \
                    void* stream = nullptr) {                                                 \
    binary(CT_OP_##ID, a, b, out, stream);                                                    \
  }                                                                                           \
  template <class S, typename detail::EnableArith<S>::type = 0>                               \
  inline Tensor(name)(const TensorView& a, S b, void* stream = nullptr) {                     \
    return binary(CT_OP_##ID, a, scalar(b, a.dtype(), a.device(), stream), stream);           \
  }                                                                                           \
  template <class S, typename detail::EnableArith<S>::type = 0>                               \
  inline Tensor(name)(S a, const TensorView& b, void* stream = nullptr) {                     \
    return binary(CT_OP_##ID, scalar(a, b.dtype(), b.device(), stream), b, stream);           \
  }                                                                                           \
  template <class S, typename detail::EnableArith<S>::type = 0>                               \
  inline void(name)(const TensorView& a, S b, const TensorView& out, void* stream = nullptr) { \
    binary(CT_OP_##ID, a, scalar(b, a.dtype(), a.device(), stream), out, stream);             \
  }

#define CT_HPP_GEN_CT_KIND_REDUCE(ID, name, nparams) CT_HPP_REDUCE_##nparams(ID, name)

#define CT_HPP_REDUCE_0(ID, name)                                                             \
  inline Tensor(name)(const TensorView& x) { return reduce(CT_OP_##ID, x); }                  \
  inline Tensor(name)(const TensorView& x, const Axes& axes, bool keepdims = false,           \
                      void* stream = nullptr) {                                               \
    return reduce(CT_OP_##ID, x, axes, keepdims, std::vector<double>(), stream);              \
  }                                                                                           \
  template <class I, typename detail::EnableAxis<I>::type = 0>                                \
  inline Tensor(name)(const TensorView& x, I axis, bool keepdims = false,                     \
                      void* stream = nullptr) {                                               \
    return reduce(CT_OP_##ID, x, Axes::one(static_cast<int64_t>(axis)), keepdims,             \
                  std::vector<double>(), stream);                                             \
  }                                                                                           \
  inline void(name)(const TensorView& x, const Axes& axes, bool keepdims,                     \
                    const TensorView& out, void* stream = nullptr) {                          \
    reduce(CT_OP_##ID, x, axes, keepdims, std::vector<double>(), out, stream);                \
  }                                                                                           \
  template <class I, typename detail::EnableAxis<I>::type = 0>                                \
  inline void(name)(const TensorView& x, I axis, bool keepdims, const TensorView& out,        \
                    void* stream = nullptr) {                                                 \
    reduce(CT_OP_##ID, x, Axes::one(static_cast<int64_t>(axis)), keepdims,                    \
           std::vector<double>(), out, stream);                                               \
  }

#define CT_HPP_REDUCE_1(ID, name)                                                             \
  inline Tensor(name)(const TensorView& x) {                                                  \
    return reduce(CT_OP_##ID, x, Axes::all(), false, std::vector<double>(1, 0.0));            \
  }                                                                                           \
  inline Tensor(name)(const TensorView& x, const Axes& axes, bool keepdims = false,           \
                      double p0 = 0.0, void* stream = nullptr) {                              \
    return reduce(CT_OP_##ID, x, axes, keepdims, std::vector<double>(1, p0), stream);         \
  }                                                                                           \
  template <class I, typename detail::EnableAxis<I>::type = 0>                                \
  inline Tensor(name)(const TensorView& x, I axis, bool keepdims = false, double p0 = 0.0,    \
                      void* stream = nullptr) {                                               \
    return reduce(CT_OP_##ID, x, Axes::one(static_cast<int64_t>(axis)), keepdims,             \
                  std::vector<double>(1, p0), stream);                                        \
  }                                                                                           \
  inline void(name)(const TensorView& x, const Axes& axes, bool keepdims, double p0,          \
                    const TensorView& out, void* stream = nullptr) {                          \
    reduce(CT_OP_##ID, x, axes, keepdims, std::vector<double>(1, p0), out, stream);           \
  }                                                                                           \
  inline void(name)(const TensorView& x, const Axes& axes, bool keepdims,                     \
                    const TensorView& out, void* stream = nullptr) {                          \
    reduce(CT_OP_##ID, x, axes, keepdims, std::vector<double>(1, 0.0), out, stream);          \
  }                                                                                           \
  template <class I, typename detail::EnableAxis<I>::type = 0>                                \
  inline void(name)(const TensorView& x, I axis, bool keepdims, double p0,                    \
                    const TensorView& out, void* stream = nullptr) {                          \
    reduce(CT_OP_##ID, x, Axes::one(static_cast<int64_t>(axis)), keepdims,                    \
           std::vector<double>(1, p0), out, stream);                                          \
  }                                                                                           \
  template <class I, typename detail::EnableAxis<I>::type = 0>                                \
  inline void(name)(const TensorView& x, I axis, bool keepdims, const TensorView& out,        \
                    void* stream = nullptr) {                                                 \
    reduce(CT_OP_##ID, x, Axes::one(static_cast<int64_t>(axis)), keepdims,                    \
           std::vector<double>(1, 0.0), out, stream);                                         \
  }

#define CT_HPP_GEN_CT_KIND_ALONG_AXIS(ID, name, nparams)                                      \
  template <class I, typename detail::EnableAxis<I>::type = 0>                                \
  inline Tensor(name)(const TensorView& x, I axis, void* stream = nullptr) {                  \
    return along_axis(CT_OP_##ID, x, static_cast<int64_t>(axis), stream);                     \
  }                                                                                           \
  template <class I, typename detail::EnableAxis<I>::type = 0>                                \
  inline void(name)(const TensorView& x, I axis, const TensorView& out,                       \
                    void* stream = nullptr) {                                                 \
    along_axis(CT_OP_##ID, x, static_cast<int64_t>(axis), out, stream);                       \
  }                                                                                           \
  template <int Op = CT_OP_##ID,                                                              \
            typename std::enable_if<detail::last_axis_default(Op), int>::type = 0>            \
  inline Tensor(name)(const TensorView& x, void* stream = nullptr) {                          \
    return along_axis(Op, x, -1, stream);                                                     \
  }                                                                                           \
  template <int Op = CT_OP_##ID,                                                              \
            typename std::enable_if<detail::last_axis_default(Op), int>::type = 0>            \
  inline void(name)(const TensorView& x, const TensorView& out, void* stream = nullptr) {     \
    along_axis(Op, x, -1, out, stream);                                                       \
  }

CT_BROADCAST_REDUCE_OPS(CT_HPP_GEN_)

#undef CT_HPP_GEN_
#undef CT_HPP_GEN_CT_KIND_BINARY
#undef CT_HPP_GEN_CT_KIND_REDUCE
#undef CT_HPP_REDUCE_0
#undef CT_HPP_REDUCE_1
#undef CT_HPP_GEN_CT_KIND_ALONG_AXIS

/* ------------------------------------------------------------------------ */
/* Operators                                                                 */
/* ------------------------------------------------------------------------ */
/*
 * On TensorView and Tensor operands (found by argument-dependent lookup),
 * each a ct_binary call returning a new compact tensor of the broadcast shape:
 *
 *   a + b   add          a & b   bitwise_and     a == b  equal          (bool)
 *   a - b   sub          a | b   bitwise_or      a != b  not_equal      (bool)
 *   a * b   mul          a ^ b   bitwise_xor     a <  b  less           (bool)
 *   a / b   div (float64 for integers)           a <= b  less_equal     (bool)
 *   a % b   mod (Python's sign of b)             a >  b  greater        (bool)
 *   a << b  left_shift   a >> b  right_shift     a >= b  greater_equal  (bool)
 *   -a      neg          ~a      bitwise_not
 *
 * Either side may be an arithmetic C++ scalar (x * 2.0, 1 - x, mask & true),
 * converted with ct::scalar to the tensor's dtype. Comparisons are
 * elementwise, as NumPy's: a Tensor has no conversion to bool, so
 * `if (a == b)` does not compile; use ct::all(a == b).item<bool>(). The
 * compound forms (+= ... >>=) are members of TensorView and Tensor. The
 * operators pass no stream (the library's default); use the named functions
 * for one.
 */

#define CT_HPP_BINARY_OPERATORS_(X)                                                           \
  X(+, ADD) X(-, SUB) X(*, MUL) X(/, DIV) X(%, MOD) X(&, BITWISE_AND) X(|, BITWISE_OR)         \
  X(^, BITWISE_XOR) X(<<, LEFT_SHIFT) X(>>, RIGHT_SHIFT) X(==, EQUAL) X(!=, NOT_EQUAL)        \
  X(<, LESS) X(<=, LESS_EQUAL) X(>, GREATER) X(>=, GREATER_EQUAL)

#define CT_HPP_OPERATOR_(OP, ID)                                                    \
  inline Tensor operator OP(const TensorView& a, const TensorView& b) {             \
    return binary(CT_OP_##ID, a, b);                                                \
  }                                                                                 \
  template <class S, typename detail::EnableArith<S>::type = 0>                     \
  inline Tensor operator OP(const TensorView& a, S b) {                             \
    return binary(CT_OP_##ID, a, scalar(b, a.dtype(), a.device()));                 \
  }                                                                                 \
  template <class S, typename detail::EnableArith<S>::type = 0>                     \
  inline Tensor operator OP(S a, const TensorView& b) {                             \
    return binary(CT_OP_##ID, scalar(a, b.dtype(), b.device()), b);                 \
  }

CT_HPP_BINARY_OPERATORS_(CT_HPP_OPERATOR_)

/** -x: ct::neg(x). */
inline Tensor operator-(const TensorView& x) { return neg(x); }
/** ~x: ct::bitwise_not(x) (bool: logical not). */
inline Tensor operator~(const TensorView& x) { return bitwise_not(x); }

#define CT_HPP_DEFINE_COMPOUND_(OP, ID)                                                       \
  inline TensorView& TensorView::operator OP(const TensorView& b) {                           \
    binary(CT_OP_##ID, *this, b, *this);                                                      \
    return *this;                                                                             \
  }                                                                                           \
  template <class S>                                                                          \
  inline typename std::enable_if<std::is_arithmetic<S>::value, TensorView&>::type             \
      TensorView::operator OP(S b) {                                                          \
    binary(CT_OP_##ID, *this, scalar(b, this->dtype(), this->device()), *this);               \
    return *this;                                                                             \
  }

CT_HPP_COMPOUND_OPS_(CT_HPP_DEFINE_COMPOUND_)

#undef CT_HPP_BINARY_OPERATORS_
#undef CT_HPP_OPERATOR_
#undef CT_HPP_DEFINE_COMPOUND_
#undef CT_HPP_COMPOUND_OPS_
#undef CT_HPP_DECLARE_COMPOUND_
#undef CT_HPP_TENSOR_COMPOUND_

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

/* ------------------------------------------------------------------------ */
/* Workspace: an owned scratch buffer                                        */
/* ------------------------------------------------------------------------ */

/** A move-only buffer of size() bytes on device(), from ct_malloc, freed
 *  with ct_free. reserve() grows it (to exactly the bytes asked; the old
 *  contents are not kept) and never shrinks it, so one Workspace passed to
 *  many calls ends at the largest size any of them needed. */
class Workspace {
 public:
  /** No buffer, on the CPU. */
  Workspace() noexcept : device_(cpu()), data_(nullptr), size_(0) {}
  /** @p bytes on @p device (no buffer when 0). */
  explicit Workspace(size_t bytes, CTDevice device = cpu())
      : device_(device), data_(nullptr), size_(0) {
    reserve(bytes);
  }
  /** Frees the buffer. */
  ~Workspace() { ct_free(device_, data_); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  /** Takes the buffer; @p o becomes empty. */
  Workspace(Workspace&& o) noexcept : device_(o.device_), data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  /** Frees this buffer and takes @p o's; @p o becomes empty. */
  Workspace& operator=(Workspace&& o) noexcept {
    if (this != &o) {
      ct_free(device_, data_);
      device_ = o.device_;
      data_ = o.data_;
      size_ = o.size_;
      o.data_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }

  /** Make size() at least @p bytes: a new buffer when it grows (the old one
   *  is freed only after the new allocation succeeded). */
  void reserve(size_t bytes) {
    if (bytes <= size_) return;
    void* p = nullptr;
    check(ct_malloc(device_, bytes, &p));
    ct_free(device_, data_);
    data_ = p;
    size_ = bytes;
  }
  /** Free the buffer (size() becomes 0; the device stays). */
  void clear() noexcept {
    ct_free(device_, data_);
    data_ = nullptr;
    size_ = 0;
  }
  /** The buffer (NULL when size() is 0). */
  void* data() const noexcept { return data_; }
  /** Its size in bytes. */
  size_t size() const noexcept { return size_; }
  /** Its device. */
  CTDevice device() const noexcept { return device_; }

 private:
  CTDevice device_;
  void* data_;
  size_t size_;
};

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

/* ---- batch_norm (inference) --------------------------------------------- */

namespace detail {
inline void batch_norm_(const TensorView& x, const TensorView& mean, const TensorView& var,
                        const TensorView* scale, const TensorView* shift, const TensorView& y,
                        const BatchNormOptions& opts, const WsArg& ws, void* stream) {
  const CTBatchNormDesc* d = &opts.c();
  const CTensor* sc = opt_c(scale);
  const CTensor* sh = opt_c(shift);
  CTensor yc = y.c();
  nn_call("ct::batch_norm", std::string(), ws, x.device(),
          [&](size_t* n) {
            return ct_batch_norm_workspace_size(d, &x.c(), &mean.c(), &var.c(), sc, sh, &yc, n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_batch_norm(d, &x.c(), &mean.c(), &var.c(), sc, sh, &yc, p, n, s);
          },
          stream);
}
inline Tensor batch_norm_value_(const TensorView& x, const TensorView& mean, const TensorView& var,
                                const TensorView* scale, const TensorView* shift,
                                const BatchNormOptions& opts, const WsArg& ws, void* stream) {
  Tensor y = alloc_out(x.shape(), x.dtype(), x.device());
  batch_norm_(x, mean, var, scale, shift, y, opts, ws, stream);
  return y;
}
}  // namespace detail

/** Bytes of workspace ct_batch_norm needs. */
inline size_t batch_norm_workspace_size(const TensorView& x, const TensorView& mean,
                                        const TensorView& var, const TensorView* scale,
                                        const TensorView* shift, const TensorView& y,
                                        const BatchNormOptions& opts = BatchNormOptions()) {
  CTensor yc = y.c();
  size_t n = 0;
  check(ct_batch_norm_workspace_size(&opts.c(), &x.c(), &mean.c(), &var.c(), detail::opt_c(scale),
                                     detail::opt_c(shift), &yc, &n));
  return n;
}
/** y = (x - mean) / sqrt(var + eps) * scale + shift with running statistics
 *  (scale, shift nullptr: 1 and 0). */
inline void batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                       const TensorView* scale, const TensorView* shift, const TensorView& y,
                       const BatchNormOptions& opts = BatchNormOptions(), void* stream = nullptr) {
  detail::batch_norm_(x, mean, var, scale, shift, y, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                       const TensorView* scale, const TensorView* shift, const TensorView& y,
                       const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::batch_norm_(x, mean, var, scale, shift, y, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_batch_norm. */
inline void batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                       const TensorView* scale, const TensorView* shift, const TensorView& y,
                       const BatchNormOptions& opts, void* workspace, size_t workspace_bytes,
                       void* stream = nullptr) {
  detail::batch_norm_(x, mean, var, scale, shift, y, opts, detail::WsArg(workspace, workspace_bytes),
                      stream);
}
/** Inference batch norm into a new tensor of x's shape, dtype and device. */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const TensorView* scale, const TensorView* shift,
                         const BatchNormOptions& opts = BatchNormOptions(), void* stream = nullptr) {
  return detail::batch_norm_value_(x, mean, var, scale, shift, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const TensorView* scale, const TensorView* shift,
                         const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  return detail::batch_norm_value_(x, mean, var, scale, shift, opts, detail::WsArg(ws), stream);
}
/** With scale and shift by reference (the options are required). */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const TensorView& scale, const TensorView& shift,
                         const BatchNormOptions& opts, void* stream = nullptr) {
  return detail::batch_norm_value_(x, mean, var, &scale, &shift, opts, detail::WsArg(), stream);
}
/** Without scale and shift. */
inline Tensor batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const BatchNormOptions& opts = BatchNormOptions(), void* stream = nullptr) {
  return detail::batch_norm_value_(x, mean, var, nullptr, nullptr, opts, detail::WsArg(), stream);
}

/* ---- batch_norm_training ------------------------------------------------ */

namespace detail {
inline void batch_norm_training_(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                 const TensorView& y, const TensorView& mean, const TensorView& invstd,
                                 const BatchNormOptions& opts, const WsArg& ws, void* stream,
                                 const std::string& unsized = std::string()) {
  const CTBatchNormDesc* d = &opts.c();
  const CTensor* sc = opt_c(scale);
  const CTensor* sh = opt_c(shift);
  CTensor yc = y.c(), mc = mean.c(), ic = invstd.c();
  nn_call("ct::batch_norm_training", unsized, ws, x.device(),
          [&](size_t* n) {
            return ct_batch_norm_training_workspace_size(d, &x.c(), sc, sh, &yc, &mc, &ic, n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_batch_norm_training(d, &x.c(), sc, sh, &yc, &mc, &ic, p, n, s);
          },
          stream);
}
inline BatchNormResult batch_norm_training_value_(const TensorView& x, const TensorView* scale,
                                                  const TensorView* shift, const BatchNormOptions& opts,
                                                  const WsArg& ws, void* stream) {
  std::vector<int64_t> c;
  std::string why;
  channel_shape(x.shape(), c, &why);
  BatchNormResult r;
  r.y = alloc_out(x.shape(), x.dtype(), x.device());
  r.mean = alloc_out(c, dtype::float32, x.device());
  r.invstd = alloc_out(c, dtype::float32, x.device());
  batch_norm_training_(x, scale, shift, r.y, r.mean, r.invstd, opts, ws, stream, why);
  return r;
}
}  // namespace detail

/** Bytes of workspace ct_batch_norm_training needs. */
inline size_t batch_norm_training_workspace_size(const TensorView& x, const TensorView* scale,
                                                 const TensorView* shift, const TensorView& y,
                                                 const TensorView& mean, const TensorView& invstd,
                                                 const BatchNormOptions& opts = BatchNormOptions()) {
  CTensor yc = y.c(), mc = mean.c(), ic = invstd.c();
  size_t n = 0;
  check(ct_batch_norm_training_workspace_size(&opts.c(), &x.c(), detail::opt_c(scale),
                                              detail::opt_c(shift), &yc, &mc, &ic, &n));
  return n;
}
/** Batch statistics: y, the per-channel mean and invstd = 1 / sqrt(v + eps). */
inline void batch_norm_training(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                const TensorView& y, const TensorView& mean, const TensorView& invstd,
                                const BatchNormOptions& opts = BatchNormOptions(),
                                void* stream = nullptr) {
  detail::batch_norm_training_(x, scale, shift, y, mean, invstd, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void batch_norm_training(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                const TensorView& y, const TensorView& mean, const TensorView& invstd,
                                const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::batch_norm_training_(x, scale, shift, y, mean, invstd, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_batch_norm_training. */
inline void batch_norm_training(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                const TensorView& y, const TensorView& mean, const TensorView& invstd,
                                const BatchNormOptions& opts, void* workspace,
                                size_t workspace_bytes, void* stream = nullptr) {
  detail::batch_norm_training_(x, scale, shift, y, mean, invstd, opts,
                               detail::WsArg(workspace, workspace_bytes), stream);
}
/** New y, mean (C,) and invstd (C,). */
inline BatchNormResult batch_norm_training(const TensorView& x, const TensorView* scale,
                                           const TensorView* shift,
                                           const BatchNormOptions& opts = BatchNormOptions(),
                                           void* stream = nullptr) {
  return detail::batch_norm_training_value_(x, scale, shift, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline BatchNormResult batch_norm_training(const TensorView& x, const TensorView* scale,
                                           const TensorView* shift, const BatchNormOptions& opts,
                                           Workspace& ws, void* stream = nullptr) {
  return detail::batch_norm_training_value_(x, scale, shift, opts, detail::WsArg(ws), stream);
}
/** With scale and shift by reference (the options are required). */
inline BatchNormResult batch_norm_training(const TensorView& x, const TensorView& scale,
                                           const TensorView& shift, const BatchNormOptions& opts,
                                           void* stream = nullptr) {
  return detail::batch_norm_training_value_(x, &scale, &shift, opts, detail::WsArg(), stream);
}
/** Without scale and shift. */
inline BatchNormResult batch_norm_training(const TensorView& x,
                                           const BatchNormOptions& opts = BatchNormOptions(),
                                           void* stream = nullptr) {
  return detail::batch_norm_training_value_(x, nullptr, nullptr, opts, detail::WsArg(), stream);
}

/* ---- batch_norm_backward ------------------------------------------------ */

namespace detail {
inline void batch_norm_backward_(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                 const TensorView& invstd, const TensorView* scale,
                                 const TensorView& dx, const TensorView* dscale,
                                 const TensorView* dshift, const BatchNormOptions& opts,
                                 const WsArg& ws, void* stream,
                                 const std::string& unsized = std::string()) {
  const CTBatchNormDesc* d = &opts.c();
  const CTensor* sc = opt_c(scale);
  CTensor dxc = dx.c();
  OptOut ds(dscale), db(dshift);
  nn_call("ct::batch_norm_backward", unsized, ws, x.device(),
          [&](size_t* n) {
            return ct_batch_norm_backward_workspace_size(d, &x.c(), &dy.c(), &mean.c(), &invstd.c(),
                                                         sc, &dxc, ds.get(), db.get(), n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_batch_norm_backward(d, &x.c(), &dy.c(), &mean.c(), &invstd.c(), sc, &dxc,
                                          ds.get(), db.get(), p, n, s);
          },
          stream);
}
inline NormGrads batch_norm_backward_value_(const TensorView& x, const TensorView& dy,
                                            const TensorView& mean, const TensorView& invstd,
                                            const TensorView* scale, const BatchNormOptions& opts,
                                            const WsArg& ws, void* stream) {
  std::vector<int64_t> c;
  std::string why;
  channel_shape(x.shape(), c, &why);
  NormGrads r;
  r.dx = alloc_out(x.shape(), x.dtype(), x.device());
  r.dscale = alloc_out(c, dtype::float32, x.device());
  r.dshift = alloc_out(c, dtype::float32, x.device());
  batch_norm_backward_(x, dy, mean, invstd, scale, r.dx, &r.dscale, &r.dshift, opts, ws, stream, why);
  return r;
}
}  // namespace detail

/** Bytes of workspace ct_batch_norm_backward needs. */
inline size_t batch_norm_backward_workspace_size(const TensorView& x, const TensorView& dy,
                                                 const TensorView& mean, const TensorView& invstd,
                                                 const TensorView* scale, const TensorView& dx,
                                                 const TensorView* dscale, const TensorView* dshift,
                                                 const BatchNormOptions& opts = BatchNormOptions()) {
  CTensor dxc = dx.c();
  detail::OptOut ds(dscale), db(dshift);
  size_t n = 0;
  check(ct_batch_norm_backward_workspace_size(&opts.c(), &x.c(), &dy.c(), &mean.c(), &invstd.c(),
                                              detail::opt_c(scale), &dxc, ds.get(), db.get(), &n));
  return n;
}
/** dx, and dscale, dshift unless nullptr (scale nullptr means 1). */
inline void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& invstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const BatchNormOptions& opts = BatchNormOptions(),
                                void* stream = nullptr) {
  detail::batch_norm_backward_(x, dy, mean, invstd, scale, dx, dscale, dshift, opts, detail::WsArg(),
                               stream);
}
/** out= form with the caller's Workspace. */
inline void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& invstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const BatchNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::batch_norm_backward_(x, dy, mean, invstd, scale, dx, dscale, dshift, opts,
                               detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_batch_norm_backward. */
inline void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& invstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const BatchNormOptions& opts, void* workspace,
                                size_t workspace_bytes, void* stream = nullptr) {
  detail::batch_norm_backward_(x, dy, mean, invstd, scale, dx, dscale, dshift, opts,
                               detail::WsArg(workspace, workspace_bytes), stream);
}
/** New dx, dscale (C,) and dshift (C,) (scale nullptr means 1). */
inline NormGrads batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& invstd, const TensorView* scale,
                                     const BatchNormOptions& opts = BatchNormOptions(),
                                     void* stream = nullptr) {
  return detail::batch_norm_backward_value_(x, dy, mean, invstd, scale, opts, detail::WsArg(),
                                            stream);
}
/** The same, with the caller's Workspace. */
inline NormGrads batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& invstd, const TensorView* scale,
                                     const BatchNormOptions& opts, Workspace& ws,
                                     void* stream = nullptr) {
  return detail::batch_norm_backward_value_(x, dy, mean, invstd, scale, opts, detail::WsArg(ws),
                                            stream);
}
/** With scale by reference (the options are required). */
inline NormGrads batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& invstd, const TensorView& scale,
                                     const BatchNormOptions& opts, void* stream = nullptr) {
  return detail::batch_norm_backward_value_(x, dy, mean, invstd, &scale, opts, detail::WsArg(),
                                            stream);
}

/* ---- layer_norm --------------------------------------------------------- */

namespace detail {
inline void layer_norm_(const TensorView& x, const TensorView* scale, const TensorView* shift,
                        const TensorView& y, const TensorView* mean, const TensorView* rstd,
                        const LayerNormOptions& opts, const WsArg& ws, void* stream,
                        const std::string& unsized = std::string()) {
  const CTLayerNormDesc* d = &opts.c();
  const CTensor* sc = opt_c(scale);
  const CTensor* sh = opt_c(shift);
  CTensor yc = y.c();
  OptOut mc(mean), rc(rstd);
  nn_call("ct::layer_norm", unsized, ws, x.device(),
          [&](size_t* n) {
            return ct_layer_norm_workspace_size(d, &x.c(), sc, sh, &yc, mc.get(), rc.get(), n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_layer_norm(d, &x.c(), sc, sh, &yc, mc.get(), rc.get(), p, n, s);
          },
          stream);
}
inline LayerNormResult layer_norm_value_(const TensorView& x, const TensorView* scale,
                                         const TensorView* shift, const LayerNormOptions& opts,
                                         const WsArg& ws, void* stream) {
  std::vector<int64_t> stats, params;
  std::string why;
  layer_norm_shapes(x.shape(), opts.c().normalized_ndim, stats, params, &why);
  LayerNormResult r;
  r.y = alloc_out(x.shape(), x.dtype(), x.device());
  r.mean = alloc_out(stats, dtype::float32, x.device());
  r.rstd = alloc_out(stats, dtype::float32, x.device());
  layer_norm_(x, scale, shift, r.y, &r.mean, &r.rstd, opts, ws, stream, why);
  return r;
}
}  // namespace detail

/** Bytes of workspace ct_layer_norm needs. */
inline size_t layer_norm_workspace_size(const TensorView& x, const TensorView* scale,
                                        const TensorView* shift, const TensorView& y,
                                        const TensorView* mean, const TensorView* rstd,
                                        const LayerNormOptions& opts = LayerNormOptions()) {
  CTensor yc = y.c();
  detail::OptOut mc(mean), rc(rstd);
  size_t n = 0;
  check(ct_layer_norm_workspace_size(&opts.c(), &x.c(), detail::opt_c(scale), detail::opt_c(shift),
                                     &yc, mc.get(), rc.get(), &n));
  return n;
}
/** y = (x - mean) * rstd * scale + shift over the last k axes; mean and
 *  rstd written unless nullptr; scale, shift nullptr: 1 and 0. */
inline void layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                       const TensorView& y, const TensorView* mean, const TensorView* rstd,
                       const LayerNormOptions& opts = LayerNormOptions(), void* stream = nullptr) {
  detail::layer_norm_(x, scale, shift, y, mean, rstd, opts, detail::WsArg(), stream);
}
/** out= form with the caller's Workspace. */
inline void layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                       const TensorView& y, const TensorView* mean, const TensorView* rstd,
                       const LayerNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::layer_norm_(x, scale, shift, y, mean, rstd, opts, detail::WsArg(ws), stream);
}
/** out= form with the caller's buffer: exactly ct_layer_norm. */
inline void layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                       const TensorView& y, const TensorView* mean, const TensorView* rstd,
                       const LayerNormOptions& opts, void* workspace, size_t workspace_bytes,
                       void* stream = nullptr) {
  detail::layer_norm_(x, scale, shift, y, mean, rstd, opts, detail::WsArg(workspace, workspace_bytes),
                      stream);
}
/** New y, and mean and rstd of shape x.shape[:-k] (float32). */
inline LayerNormResult layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                  const LayerNormOptions& opts = LayerNormOptions(),
                                  void* stream = nullptr) {
  return detail::layer_norm_value_(x, scale, shift, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline LayerNormResult layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                                  const LayerNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  return detail::layer_norm_value_(x, scale, shift, opts, detail::WsArg(ws), stream);
}
/** With scale and shift by reference (the options are required). */
inline LayerNormResult layer_norm(const TensorView& x, const TensorView& scale, const TensorView& shift,
                                  const LayerNormOptions& opts, void* stream = nullptr) {
  return detail::layer_norm_value_(x, &scale, &shift, opts, detail::WsArg(), stream);
}
/** Without scale and shift. */
inline LayerNormResult layer_norm(const TensorView& x, const LayerNormOptions& opts = LayerNormOptions(),
                                  void* stream = nullptr) {
  return detail::layer_norm_value_(x, nullptr, nullptr, opts, detail::WsArg(), stream);
}

/* ---- layer_norm_backward ------------------------------------------------ */

namespace detail {
inline void layer_norm_backward_(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                 const TensorView& rstd, const TensorView* scale, const TensorView& dx,
                                 const TensorView* dscale, const TensorView* dshift,
                                 const LayerNormOptions& opts, const WsArg& ws, void* stream,
                                 const std::string& unsized = std::string()) {
  const CTLayerNormDesc* d = &opts.c();
  const CTensor* sc = opt_c(scale);
  CTensor dxc = dx.c();
  OptOut ds(dscale), db(dshift);
  nn_call("ct::layer_norm_backward", unsized, ws, x.device(),
          [&](size_t* n) {
            return ct_layer_norm_backward_workspace_size(d, &x.c(), &dy.c(), &mean.c(), &rstd.c(), sc,
                                                         &dxc, ds.get(), db.get(), n);
          },
          [&](void* p, size_t n, void* s) {
            return ct_layer_norm_backward(d, &x.c(), &dy.c(), &mean.c(), &rstd.c(), sc, &dxc,
                                          ds.get(), db.get(), p, n, s);
          },
          stream);
}
inline NormGrads layer_norm_backward_value_(const TensorView& x, const TensorView& dy,
                                            const TensorView& mean, const TensorView& rstd,
                                            const TensorView* scale, const LayerNormOptions& opts,
                                            const WsArg& ws, void* stream) {
  std::vector<int64_t> stats, params;
  std::string why;
  layer_norm_shapes(x.shape(), opts.c().normalized_ndim, stats, params, &why);
  NormGrads r;
  r.dx = alloc_out(x.shape(), x.dtype(), x.device());
  r.dscale = alloc_out(params, dtype::float32, x.device());
  r.dshift = alloc_out(params, dtype::float32, x.device());
  layer_norm_backward_(x, dy, mean, rstd, scale, r.dx, &r.dscale, &r.dshift, opts, ws, stream, why);
  return r;
}
}  // namespace detail

/** Bytes of workspace ct_layer_norm_backward needs. */
inline size_t layer_norm_backward_workspace_size(const TensorView& x, const TensorView& dy,
                                                 const TensorView& mean, const TensorView& rstd,
                                                 const TensorView* scale, const TensorView& dx,
                                                 const TensorView* dscale, const TensorView* dshift,
                                                 const LayerNormOptions& opts = LayerNormOptions()) {
  CTensor dxc = dx.c();
  detail::OptOut ds(dscale), db(dshift);
  size_t n = 0;
  check(ct_layer_norm_backward_workspace_size(&opts.c(), &x.c(), &dy.c(), &mean.c(), &rstd.c(),
                                              detail::opt_c(scale), &dxc, ds.get(), db.get(), &n));
  return n;
}
/** dx, and dscale = sum(dy * xhat), dshift = sum(dy) unless nullptr. */
inline void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& rstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const LayerNormOptions& opts = LayerNormOptions(),
                                void* stream = nullptr) {
  detail::layer_norm_backward_(x, dy, mean, rstd, scale, dx, dscale, dshift, opts, detail::WsArg(),
                               stream);
}
/** out= form with the caller's Workspace. */
inline void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& rstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const LayerNormOptions& opts, Workspace& ws, void* stream = nullptr) {
  detail::layer_norm_backward_(x, dy, mean, rstd, scale, dx, dscale, dshift, opts, detail::WsArg(ws),
                               stream);
}
/** out= form with the caller's buffer: exactly ct_layer_norm_backward. */
inline void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                const TensorView& rstd, const TensorView* scale, const TensorView& dx,
                                const TensorView* dscale, const TensorView* dshift,
                                const LayerNormOptions& opts, void* workspace,
                                size_t workspace_bytes, void* stream = nullptr) {
  detail::layer_norm_backward_(x, dy, mean, rstd, scale, dx, dscale, dshift, opts,
                               detail::WsArg(workspace, workspace_bytes), stream);
}
/** New dx, and dscale, dshift of the normalised axes' shape (float32). */
inline NormGrads layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& rstd, const TensorView* scale,
                                     const LayerNormOptions& opts = LayerNormOptions(),
                                     void* stream = nullptr) {
  return detail::layer_norm_backward_value_(x, dy, mean, rstd, scale, opts, detail::WsArg(), stream);
}
/** The same, with the caller's Workspace. */
inline NormGrads layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& rstd, const TensorView* scale,
                                     const LayerNormOptions& opts, Workspace& ws,
                                     void* stream = nullptr) {
  return detail::layer_norm_backward_value_(x, dy, mean, rstd, scale, opts, detail::WsArg(ws),
                                            stream);
}
/** With scale by reference (the options are required). */
inline NormGrads layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                     const TensorView& rstd, const TensorView& scale,
                                     const LayerNormOptions& opts, void* stream = nullptr) {
  return detail::layer_norm_backward_value_(x, dy, mean, rstd, &scale, opts, detail::WsArg(), stream);
}

/* ------------------------------------------------------------------------ */
/* Plan: an owned CTPlan                                                     */
/* ------------------------------------------------------------------------ */

namespace detail {
// The descriptor type of each NN op, from CT_NN_OPS (an op without a line
// here is a compile error, on purpose).
enum NNDescKind { kNoDesc = 0, kMatmulDesc, kConv2dDesc, kPool2dDesc, kBatchNormDesc, kLayerNormDesc };
#define CT_HPP_NN_DESC_MATMUL kMatmulDesc
#define CT_HPP_NN_DESC_CONV2D kConv2dDesc
#define CT_HPP_NN_DESC_CONV2D_BACKWARD_DATA kConv2dDesc
#define CT_HPP_NN_DESC_CONV2D_BACKWARD_WEIGHT kConv2dDesc
#define CT_HPP_NN_DESC_MAX_POOL2D kPool2dDesc
#define CT_HPP_NN_DESC_MAX_POOL2D_BACKWARD kPool2dDesc
#define CT_HPP_NN_DESC_AVG_POOL2D kPool2dDesc
#define CT_HPP_NN_DESC_AVG_POOL2D_BACKWARD kPool2dDesc
#define CT_HPP_NN_DESC_BATCH_NORM kBatchNormDesc
#define CT_HPP_NN_DESC_BATCH_NORM_TRAINING kBatchNormDesc
#define CT_HPP_NN_DESC_BATCH_NORM_BACKWARD kBatchNormDesc
#define CT_HPP_NN_DESC_LAYER_NORM kLayerNormDesc
#define CT_HPP_NN_DESC_LAYER_NORM_BACKWARD kLayerNormDesc
#define CT_HPP_NN_DESC_CASE_(ID, name, kind, nparams, summary) \
  case CT_OP_##ID:                                            \
    return CT_HPP_NN_DESC_##ID;
inline NNDescKind nn_desc_kind(int32_t op) {
  switch (op) {
    CT_NN_OPS(CT_HPP_NN_DESC_CASE_)
    default: return kNoDesc;
  }
}
#undef CT_HPP_NN_DESC_CASE_
#undef CT_HPP_NN_DESC_MATMUL
#undef CT_HPP_NN_DESC_CONV2D
#undef CT_HPP_NN_DESC_CONV2D_BACKWARD_DATA
#undef CT_HPP_NN_DESC_CONV2D_BACKWARD_WEIGHT
#undef CT_HPP_NN_DESC_MAX_POOL2D
#undef CT_HPP_NN_DESC_MAX_POOL2D_BACKWARD
#undef CT_HPP_NN_DESC_AVG_POOL2D
#undef CT_HPP_NN_DESC_AVG_POOL2D_BACKWARD
#undef CT_HPP_NN_DESC_BATCH_NORM
#undef CT_HPP_NN_DESC_BATCH_NORM_TRAINING
#undef CT_HPP_NN_DESC_BATCH_NORM_BACKWARD
#undef CT_HPP_NN_DESC_LAYER_NORM
#undef CT_HPP_NN_DESC_LAYER_NORM_BACKWARD

// @p desc, after checking that op @p op takes a descriptor of kind @p kind.
inline const void* nn_desc_for(int32_t op, NNDescKind kind, const char* options, const void* desc) {
  const NNDescKind want = nn_desc_kind(op);
  if (want != kind) {
    static const char* const names[] = {"no options (not an NN op)", "ct::MatmulOptions",
                                        "ct::Conv2dOptions", "ct::Pool2dOptions",
                                        "ct::BatchNormOptions", "ct::LayerNormOptions"};
    fail(CT_ERR_INVALID_ARGUMENT, "ct::Plan: op " + std::to_string(op) + " takes " + names[want] +
                                      ", not " + options);
  }
  return desc;
}

inline std::vector<const CTensor*> c_tensors(const std::vector<const TensorView*>& tensors) {
  std::vector<const CTensor*> r(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) r[i] = opt_c(tensors[i]);
  return r;
}

inline int32_t tensor_count(size_t n) {
  if (n > static_cast<size_t>(INT32_MAX))
    fail(CT_ERR_INVALID_ARGUMENT, "ct::Plan: too many tensors");
  return static_cast<int32_t>(n);
}
}  // namespace detail

/** A move-only owner of a CTPlan (ct_plan_destroy in the destructor): one
 *  NN op for fixed options, shapes, strides, dtypes, device and thread
 *  count, with its backend primitives created once. Tensor lists are the
 *  op's ct_<op> tensor arguments in order, nullptr for an absent optional
 *  one, e.g. {&x, &w, &bias, &y} or {&x, &w, nullptr, &y} for conv2d. The
 *  static factories (Plan::conv2d(x, w, &bias, y, opts), ...) take them as
 *  the out= forms do. execute() is const and thread-safe (one workspace per
 *  thread). */
class Plan {
 public:
  /** No plan. */
  Plan() noexcept : plan_(nullptr), op_(-1), num_tensors_(0), device_(cpu()) {}
  /** ct_plan_create(op, desc, tensors, stream); @p desc points at the op's
   *  C descriptor (CTConv2dDesc for conv2d, ...). */
  Plan(int32_t op, const void* desc, const std::vector<const TensorView*>& tensors,
       void* stream = nullptr)
      : plan_(nullptr), op_(op), num_tensors_(detail::tensor_count(tensors.size())), device_(cpu()) {
    for (size_t i = 0; i < tensors.size(); ++i)
      if (tensors[i]) {
        device_ = tensors[i]->device();
        break;
      }
    std::vector<const CTensor*> c = detail::c_tensors(tensors);
    CTPlan* p = nullptr;
    check(ct_plan_create(op, desc, c.empty() ? nullptr : c.data(), num_tensors_, stream, &p));
    plan_ = p;
  }
  /** A plan for a matmul op; throws CT_ERR_INVALID_ARGUMENT if @p op takes other options. */
  Plan(int32_t op, const MatmulOptions& opts, const std::vector<const TensorView*>& tensors,
       void* stream = nullptr)
      : Plan(op, detail::nn_desc_for(op, detail::kMatmulDesc, "ct::MatmulOptions", &opts.c()),
             tensors, stream) {}
  /** A plan for a conv2d op. */
  Plan(int32_t op, const Conv2dOptions& opts, const std::vector<const TensorView*>& tensors,
       void* stream = nullptr)
      : Plan(op, detail::nn_desc_for(op, detail::kConv2dDesc, "ct::Conv2dOptions", &opts.c()),
             tensors, stream) {}
  /** A plan for a pooling op. */
  Plan(int32_t op, const Pool2dOptions& opts, const std::vector<const TensorView*>& tensors,
       void* stream = nullptr)
      : Plan(op, detail::nn_desc_for(op, detail::kPool2dDesc, "ct::Pool2dOptions", &opts.c()),
             tensors, stream) {}
  /** A plan for a batch normalisation op. */
  Plan(int32_t op, const BatchNormOptions& opts, const std::vector<const TensorView*>& tensors,
       void* stream = nullptr)
      : Plan(op, detail::nn_desc_for(op, detail::kBatchNormDesc, "ct::BatchNormOptions", &opts.c()),
             tensors, stream) {}
  /** A plan for a layer normalisation op. */
  Plan(int32_t op, const LayerNormOptions& opts, const std::vector<const TensorView*>& tensors,
       void* stream = nullptr)
      : Plan(op, detail::nn_desc_for(op, detail::kLayerNormDesc, "ct::LayerNormOptions", &opts.c()),
             tensors, stream) {}
  /** Take ownership of @p plan, created for @p op with @p num_tensors tensors on @p device. */
  Plan(CTPlan* plan, int32_t op, int32_t num_tensors, CTDevice device = cpu()) noexcept
      : plan_(plan), op_(op), num_tensors_(num_tensors), device_(device) {}
  /** ct_plan_destroy. */
  ~Plan() { ct_plan_destroy(plan_); }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  /** Takes the plan; @p o becomes empty. */
  Plan(Plan&& o) noexcept
      : plan_(o.plan_), op_(o.op_), num_tensors_(o.num_tensors_), device_(o.device_) {
    o.plan_ = nullptr;
  }
  /** Destroys this plan and takes @p o's; @p o becomes empty. */
  Plan& operator=(Plan&& o) noexcept {
    if (this != &o) {
      ct_plan_destroy(plan_);
      plan_ = o.plan_;
      op_ = o.op_;
      num_tensors_ = o.num_tensors_;
      device_ = o.device_;
      o.plan_ = nullptr;
    }
    return *this;
  }

  /** The CTPlan (NULL when empty). */
  CTPlan* get() const noexcept { return plan_; }
  /** Give up ownership: returns the CTPlan (the caller destroys it) and becomes empty. */
  CTPlan* release() noexcept {
    CTPlan* p = plan_;
    plan_ = nullptr;
    return p;
  }
  /** Destroy the plan now (empty afterwards). */
  void reset() noexcept {
    ct_plan_destroy(plan_);
    plan_ = nullptr;
  }
  /** True unless empty. */
  explicit operator bool() const noexcept { return plan_ != nullptr; }
  /** The op id it was created for. */
  int32_t op() const noexcept { return op_; }
  /** The number of tensor arguments of its op. */
  int32_t num_tensors() const noexcept { return num_tensors_; }
  /** The device of its tensors (where execute() allocates a workspace). */
  CTDevice device() const noexcept { return device_; }

  /** Bytes of workspace every execute() needs (ct_plan_workspace_size). */
  size_t workspace_size() const {
    size_t n = 0;
    check(ct_plan_workspace_size(plan_, &n));
    return n;
  }
  /** Run on new data with the caller's buffer: exactly ct_plan_execute. */
  void execute(const std::vector<const TensorView*>& tensors, void* workspace, size_t workspace_bytes,
               void* stream = nullptr) const {
    std::vector<const CTensor*> c = detail::c_tensors(tensors);
    check(ct_plan_execute(plan_, c.empty() ? nullptr : c.data(), detail::tensor_count(c.size()),
                          workspace, workspace_bytes, stream));
  }
  /** Run on new data with the caller's Workspace, grown to workspace_size(). */
  void execute(const std::vector<const TensorView*>& tensors, Workspace& ws,
               void* stream = nullptr) const {
    const size_t n = workspace_size();
    if (n == 0) {
      execute(tensors, nullptr, 0, stream);
      return;
    }
    if (!same_device(ws.device(), device_)) {
      if (ws.size() != 0)
        detail::fail(CT_ERR_DEVICE_MISMATCH, "ct::Plan::execute: the workspace is on device " +
                                                 detail::device_str(ws.device()) +
                                                 ", the plan on " + detail::device_str(device_));
      ws = Workspace(n, device_);
    }
    ws.reserve(n);
    execute(tensors, ws.data(), ws.size(), stream);
  }
  /** Run on new data with a workspace allocated for the call. */
  void execute(const std::vector<const TensorView*>& tensors, void* stream = nullptr) const {
    Workspace ws(workspace_size(), device_);
    execute(tensors, ws.data(), ws.size(), stream);
  }

  /** Plans for each op, tensors as in its out= form. */
  static Plan matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                     const TensorView& out, const MatmulOptions& opts = MatmulOptions(),
                     void* stream = nullptr) {
    return Plan(CT_OP_MATMUL, opts, {&a, &b, bias, &out}, stream);
  }
  /** See matmul. */
  static Plan conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                     const TensorView& y, const Conv2dOptions& opts = Conv2dOptions(),
                     void* stream = nullptr) {
    return Plan(CT_OP_CONV2D, opts, {&x, &w, bias, &y}, stream);
  }
  /** See matmul. */
  static Plan conv2d_backward_data(const TensorView& dy, const TensorView& w, const TensorView& dx,
                                   const Conv2dOptions& opts = Conv2dOptions(),
                                   void* stream = nullptr) {
    return Plan(CT_OP_CONV2D_BACKWARD_DATA, opts, {&dy, &w, &dx}, stream);
  }
  /** See matmul. */
  static Plan conv2d_backward_weight(const TensorView& x, const TensorView& dy, const TensorView& dw,
                                     const TensorView* dbias,
                                     const Conv2dOptions& opts = Conv2dOptions(),
                                     void* stream = nullptr) {
    return Plan(CT_OP_CONV2D_BACKWARD_WEIGHT, opts, {&x, &dy, &dw, dbias}, stream);
  }
  /** See matmul. */
  static Plan max_pool2d(const TensorView& x, const TensorView& y, const TensorView* indices,
                         const Pool2dOptions& opts, void* stream = nullptr) {
    return Plan(CT_OP_MAX_POOL2D, opts, {&x, &y, indices}, stream);
  }
  /** See matmul. */
  static Plan max_pool2d_backward(const TensorView& dy, const TensorView& indices,
                                  const TensorView& dx, const Pool2dOptions& opts,
                                  void* stream = nullptr) {
    return Plan(CT_OP_MAX_POOL2D_BACKWARD, opts, {&dy, &indices, &dx}, stream);
  }
  /** See matmul. */
  static Plan avg_pool2d(const TensorView& x, const TensorView& y, const Pool2dOptions& opts,
                         void* stream = nullptr) {
    return Plan(CT_OP_AVG_POOL2D, opts, {&x, &y}, stream);
  }
  /** See matmul. */
  static Plan avg_pool2d_backward(const TensorView& dy, const TensorView& dx,
                                  const Pool2dOptions& opts, void* stream = nullptr) {
    return Plan(CT_OP_AVG_POOL2D_BACKWARD, opts, {&dy, &dx}, stream);
  }
  /** See matmul. */
  static Plan batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const TensorView* scale, const TensorView* shift, const TensorView& y,
                         const BatchNormOptions& opts = BatchNormOptions(), void* stream = nullptr) {
    return Plan(CT_OP_BATCH_NORM, opts, {&x, &mean, &var, scale, shift, &y}, stream);
  }
  /** See matmul. */
  static Plan batch_norm_training(const TensorView& x, const TensorView* scale,
                                  const TensorView* shift, const TensorView& y,
                                  const TensorView& mean, const TensorView& invstd,
                                  const BatchNormOptions& opts = BatchNormOptions(),
                                  void* stream = nullptr) {
    return Plan(CT_OP_BATCH_NORM_TRAINING, opts, {&x, scale, shift, &y, &mean, &invstd}, stream);
  }
  /** See matmul. */
  static Plan batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                  const TensorView& invstd, const TensorView* scale,
                                  const TensorView& dx, const TensorView* dscale,
                                  const TensorView* dshift,
                                  const BatchNormOptions& opts = BatchNormOptions(),
                                  void* stream = nullptr) {
    return Plan(CT_OP_BATCH_NORM_BACKWARD, opts,
                {&x, &dy, &mean, &invstd, scale, &dx, dscale, dshift}, stream);
  }
  /** See matmul. */
  static Plan layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                         const TensorView& y, const TensorView* mean, const TensorView* rstd,
                         const LayerNormOptions& opts = LayerNormOptions(), void* stream = nullptr) {
    return Plan(CT_OP_LAYER_NORM, opts, {&x, scale, shift, &y, mean, rstd}, stream);
  }
  /** See matmul. */
  static Plan layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                  const TensorView& rstd, const TensorView* scale,
                                  const TensorView& dx, const TensorView* dscale,
                                  const TensorView* dshift,
                                  const LayerNormOptions& opts = LayerNormOptions(),
                                  void* stream = nullptr) {
    return Plan(CT_OP_LAYER_NORM_BACKWARD, opts,
                {&x, &dy, &mean, &rstd, scale, &dx, dscale, dshift}, stream);
  }

 private:
  CTPlan* plan_;
  int32_t op_;
  int32_t num_tensors_;
  CTDevice device_;
};

/** Process-wide counters of the plan cache behind the direct calls
 *  (ct_plan_cache_info). */
inline CTPlanCacheInfo plan_cache_info() {
  CTPlanCacheInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  check(ct_plan_cache_info(&info));
  return info;
}

/** Keep at most @p capacity cached plans (0 disables the cache). */
inline void plan_cache_set_capacity(int64_t capacity) {
  check(ct_plan_cache_set_capacity(capacity));
}

}  // namespace ct

#endif  // CTENSOR_CTENSOR_HPP_
