// ctensor/cpp/operators.hpp: the operators + - * / ... == < ..., unary - and ~, and the compound x += y.
#ifndef CTENSOR_CPP_OPERATORS_HPP_
#define CTENSOR_CPP_OPERATORS_HPP_

#include "broadcast_reduce.hpp"
#include "elementwise.hpp"
#include "scalar.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"

#include <type_traits>

namespace ct {

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

}  // namespace ct

#endif  // CTENSOR_CPP_OPERATORS_HPP_
