// ctensor/cpp/broadcast_reduce.hpp: category 2, broadcasting binary ops, reductions over ct::Axes, along-axis ops.
#ifndef CTENSOR_CPP_BROADCAST_REDUCE_HPP_
#define CTENSOR_CPP_BROADCAST_REDUCE_HPP_

#include "dtype.hpp"
#include "error.hpp"
#include "op_info.hpp"
#include "scalar.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

namespace ct {

/* ------------------------------------------------------------------------ */
/* Axes and shapes for category 2                                            */
/* ------------------------------------------------------------------------ */

namespace detail {
// An axis argument: any integer type but bool (so that a bool never reads as axis 1).
template <class I>
struct EnableAxis
    : std::enable_if<std::is_integral<I>::value && !std::is_same<I, bool>::value, int> {};
}  // namespace detail

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
// ct_op_output_info's arguments of a reduction over @p axes.
inline CTOpArgs reduce_args(const Axes& axes, bool keepdims) noexcept {
  CTOpArgs args = op_args();
  args.axes = axes.c_axes();
  args.num_axes = axes.c_num_axes();
  args.keepdims = keepdims ? 1 : 0;
  return args;
}
}  // namespace detail

/** NumPy's broadcast of shapes @p a and @p b (aligned at the last dim, each
 *  pair of extents equal or one of them 1), as the library computes it for
 *  ct::add (ct_op_output_info). Throws CT_ERR_SHAPE_MISMATCH with the
 *  library's message, naming both shapes. */
inline std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b) {
  const TensorView va(nullptr, dtype::float32, a), vb(nullptr, dtype::float32, b);
  const CTensor* in[2] = {&va.c(), &vb.c()};
  return detail::shape_of(detail::output1(CT_OP_ADD, in, 2, nullptr));
}

/** The shape a reduction of @p shape over @p axes gives (reduced dims removed,
 *  or set to 1 with @p keepdims), as the library computes it for ct::sum
 *  (ct_op_output_info). Throws CT_ERR_INVALID_ARGUMENT with the library's
 *  message for an axis out of [-ndim, ndim) or a repeated one. */
inline std::vector<int64_t> reduce_shape(const std::vector<int64_t>& shape, const Axes& axes,
                                         bool keepdims = false) {
  const TensorView v(nullptr, dtype::float32, shape);
  const CTensor* in[1] = {&v.c()};
  const CTOpArgs args = detail::reduce_args(axes, keepdims);
  return detail::shape_of(detail::output1(CT_OP_SUM, in, 1, &args));
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
/** op(a, b) into a new compact tensor on a's device, of the shape and dtype
 *  the library says (ct_op_output_info: the broadcast shape, the op's output
 *  dtype). Shapes that do not broadcast, and dtypes the op rejects, throw
 *  ct::Error with the library's message. */
inline Tensor binary(int32_t op, const TensorView& a, const TensorView& b,
                     void* stream = nullptr) {
  const CTensor* in[2] = {&a.c(), &b.c()};
  Tensor out = detail::empty_for(detail::output1(op, in, 2, nullptr), a.device());
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
/** op(x) reduced over @p axes into a new compact tensor on x's device, of
 *  the shape and dtype the library says (ct_op_output_info). A bad or
 *  repeated axis throws CT_ERR_INVALID_ARGUMENT with the library's message. */
inline Tensor reduce(int32_t op, const TensorView& x, const Axes& axes = Axes::all(),
                     bool keepdims = false, const std::vector<double>& params = std::vector<double>(),
                     void* stream = nullptr) {
  const CTensor* in[1] = {&x.c()};
  const CTOpArgs args = detail::reduce_args(axes, keepdims);
  Tensor out = detail::empty_for(detail::output1(op, in, 1, &args), x.device());
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
/** op(x) along @p axis into a new compact tensor (x's shape), of the dtype
 *  the library says (ct_op_output_info, which also checks the axis). */
inline Tensor along_axis(int32_t op, const TensorView& x, int64_t axis, void* stream = nullptr) {
  CTOpArgs args = detail::op_args();
  args.axis = detail::axis32(axis);
  Tensor out = detail::new_output(op, x, &args);
  along_axis(op, x, axis, out, stream);
  return out;
}

/** out = op(x, index[, src]) along @p axis, for any CT_KIND_INDEX op id
 *  (ct_index): take and gather read x at the indices (src nullptr); scatter,
 *  scatter_add and index_add write x with src into out (which may be exactly
 *  x). @p params: index_add's {alpha}, or empty for the defaults. */
inline void index_op(int32_t op, const TensorView& x, int64_t axis, const TensorView& index, const TensorView* src,
                     const std::vector<double>& params, const TensorView& out, void* stream = nullptr) {
  CTensor o = out.c();
  check(ct_index(op, &x.c(), detail::axis32(axis), &index.c(), src ? &src->c() : nullptr,
                 params.empty() ? nullptr : params.data(), static_cast<int32_t>(params.size()), &o, stream));
}
/** The same into a new compact tensor shaped by the library (ct_op_output_info). */
inline Tensor index_op(int32_t op, const TensorView& x, int64_t axis, const TensorView& index, const TensorView* src,
                       const std::vector<double>& params = std::vector<double>(), void* stream = nullptr) {
  CTOpArgs args = detail::op_args();
  args.axis = detail::axis32(axis);
  const CTensor* in[3] = {&x.c(), &index.c(), src ? &src->c() : nullptr};
  Tensor out = detail::empty_for(detail::output1(op, in, src ? 3 : 2, &args), x.device());
  index_op(op, x, axis, index, src, params, out, stream);
  return out;
}

namespace detail {
// Index ops that read a src (the scatters) take one more tensor.
constexpr bool index_has_src(int op) { return op != CT_OP_TAKE && op != CT_OP_GATHER; }
}  // namespace detail

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
 *     with one parameter (var, std: correction, NumPy's ddof; quantile,
 *     nanquantile: q; kthvalue: k, which has no default: its 0 is refused
 *     with the library's message), after keepdims:
 *                    Tensor name(x, Axes axes, keepdims = false, p = 0, stream = nullptr)
 *                    Tensor name(x, I axis, keepdims = false, p = 0, stream = nullptr)
 *                    void   name(x, Axes axes, keepdims, [p,] out, stream = nullptr)
 *                    void   name(x, I axis, keepdims, [p,] out, stream = nullptr)
 *   CT_KIND_ALONG_AXIS
 *                    Tensor name(x, I axis, stream = nullptr)
 *                    void   name(x, I axis, out, stream = nullptr)
 *     softmax and log_softmax also: name(x[, out], stream = nullptr) on the last axis
 *   CT_KIND_INDEX    take, gather (PyTorch's argument order: axis before index):
 *                    Tensor name(x, I axis, index, stream = nullptr)
 *                    void   name(x, I axis, index, out, stream = nullptr)
 *                    scatter, scatter_add, index_add (and index_add's alpha, default 1):
 *                    Tensor name(x, I axis, index, src[, alpha], stream = nullptr)
 *                    void   name(x, I axis, index, src[, alpha], out, stream = nullptr)
 *
 * e.g. ct::add(a, b), ct::maximum(x, 0.0), ct::less(a, b) (bool),
 * ct::sum(x) (0-d), ct::sum(x, {0, 2}, true), ct::mean(x, 1) (float64 for
 * integer x), ct::argmax(x, -1) (int64), ct::var(x, {1}, false, 1.0) (sample
 * variance), ct::sum(x, ct::Axes::none()) or ct::sum(x, {}) (NumPy's
 * axis=()), ct::softmax(x), ct::cumsum(x, 0). A full reduction with a stream
 * is ct::sum(x, ct::Axes::all(), false, stream). Value-returning forms
 * allocate a compact result of the shape and dtype the library's shape
 * query gives (ct::output_info) on the (first tensor) operand's device, so
 * its message is the one for arguments it rejects; out= forms write into
 * any view.
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

#define CT_HPP_GEN_CT_KIND_INDEX(ID, name, nparams)                                           \
  template <class I, int Op = CT_OP_##ID, typename detail::EnableAxis<I>::type = 0,           \
            typename std::enable_if<!detail::index_has_src(Op), int>::type = 0>              \
  inline Tensor(name)(const TensorView& x, I axis, const TensorView& index,                  \
                      void* stream = nullptr) {                                               \
    return index_op(Op, x, static_cast<int64_t>(axis), index, nullptr, std::vector<double>(), \
                    stream);                                                                  \
  }                                                                                           \
  template <class I, int Op = CT_OP_##ID, typename detail::EnableAxis<I>::type = 0,           \
            typename std::enable_if<!detail::index_has_src(Op), int>::type = 0>              \
  inline void(name)(const TensorView& x, I axis, const TensorView& index,                    \
                    const TensorView& out, void* stream = nullptr) {                          \
    index_op(Op, x, static_cast<int64_t>(axis), index, nullptr, std::vector<double>(), out,   \
             stream);                                                                         \
  }                                                                                           \
  template <class I, int Op = CT_OP_##ID, typename detail::EnableAxis<I>::type = 0,           \
            typename std::enable_if<detail::index_has_src(Op), int>::type = 0>               \
  inline Tensor(name)(const TensorView& x, I axis, const TensorView& index,                  \
                      const TensorView& src, void* stream = nullptr) {                        \
    return index_op(Op, x, static_cast<int64_t>(axis), index, &src, std::vector<double>(),    \
                    stream);                                                                  \
  }                                                                                           \
  template <class I, int Op = CT_OP_##ID, typename detail::EnableAxis<I>::type = 0,           \
            typename std::enable_if<detail::index_has_src(Op), int>::type = 0>               \
  inline void(name)(const TensorView& x, I axis, const TensorView& index,                    \
                    const TensorView& src, const TensorView& out, void* stream = nullptr) {   \
    index_op(Op, x, static_cast<int64_t>(axis), index, &src, std::vector<double>(), out,      \
             stream);                                                                         \
  }                                                                                           \
  CT_HPP_INDEX_##nparams(ID, name)
#define CT_HPP_INDEX_0(ID, name)
#define CT_HPP_INDEX_1(ID, name)                                                              \
  template <class I, typename detail::EnableAxis<I>::type = 0>                                \
  inline Tensor(name)(const TensorView& x, I axis, const TensorView& index,                  \
                      const TensorView& src, double p0, void* stream = nullptr) {             \
    return index_op(CT_OP_##ID, x, static_cast<int64_t>(axis), index, &src,                   \
                    std::vector<double>(1, p0), stream);                                      \
  }                                                                                           \
  template <class I, typename detail::EnableAxis<I>::type = 0>                                \
  inline void(name)(const TensorView& x, I axis, const TensorView& index,                    \
                    const TensorView& src, double p0, const TensorView& out,                  \
                    void* stream = nullptr) {                                                 \
    index_op(CT_OP_##ID, x, static_cast<int64_t>(axis), index, &src,                          \
             std::vector<double>(1, p0), out, stream);                                        \
  }

CT_BROADCAST_REDUCE_OPS(CT_HPP_GEN_)

#undef CT_HPP_GEN_
#undef CT_HPP_GEN_CT_KIND_BINARY
#undef CT_HPP_GEN_CT_KIND_REDUCE
#undef CT_HPP_REDUCE_0
#undef CT_HPP_REDUCE_1
#undef CT_HPP_GEN_CT_KIND_ALONG_AXIS
#undef CT_HPP_GEN_CT_KIND_INDEX
#undef CT_HPP_INDEX_0
#undef CT_HPP_INDEX_1

}  // namespace ct

#endif  // CTENSOR_CPP_BROADCAST_REDUCE_HPP_
