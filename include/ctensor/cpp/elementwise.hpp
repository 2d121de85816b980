// ctensor/cpp/elementwise.hpp: category 1, ct::exp(x) and every other op of CT_ELEMENTWISE_OPS, generated.
#ifndef CTENSOR_CPP_ELEMENTWISE_HPP_
#define CTENSOR_CPP_ELEMENTWISE_HPP_

#include "error.hpp"
#include "op_info.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"

#include <cstdint>
#include <vector>

namespace ct {

/* ------------------------------------------------------------------------ */
/* Generic entry points of category 1                                        */
/* ------------------------------------------------------------------------ */

/** out = op(x) for any CT_KIND_UNARY op id (generic form of ct::exp etc.). */
inline void unary(int32_t op, const TensorView& x, const TensorView& out, void* stream = nullptr) {
  CTensor o = out.c();
  check(ct_unary(op, &x.c(), &o, stream));
}
/** op(x) into a new compact tensor, for any CT_KIND_UNARY op id, of the
 *  shape and dtype the library says (ct_op_output_info). */
inline Tensor unary(int32_t op, const TensorView& x, void* stream = nullptr) {
  Tensor out = detail::new_output(op, x);
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
/** op(x; params) into a new compact tensor, for any CT_KIND_UNARY_PARAM op
 *  id, of the shape and dtype the library says. */
inline Tensor unary_param(int32_t op, const TensorView& x, const std::vector<double>& params,
                          void* stream = nullptr) {
  Tensor out = detail::new_output(op, x);
  unary_param(op, x, params, out, stream);
  return out;
}

/** out = op(a, b, c) for any CT_KIND_TERNARY op id. */
inline void ternary(int32_t op, const TensorView& a, const TensorView& b, const TensorView& c,
                    const TensorView& out, void* stream = nullptr) {
  CTensor o = out.c();
  check(ct_ternary(op, &a.c(), &b.c(), &c.c(), &o, stream));
}
/** op(a, b, c) into a new compact tensor on b's device (b, not a: where's a
 *  is the bool condition), of the shape and dtype the library says
 *  (ct_op_output_info: the three shapes broadcast). */
inline Tensor ternary(int32_t op, const TensorView& a, const TensorView& b, const TensorView& c,
                      void* stream = nullptr) {
  const CTensor* in[3] = {&a.c(), &b.c(), &c.c()};
  Tensor out = detail::empty_for(detail::output1(op, in, 3, nullptr), b.device());
  ternary(op, a, b, c, out, stream);
  return out;
}

/** out = op(a, b, c; params) for a CT_KIND_TERNARY op with parameters
 *  (addcmul, addcdiv: value). */
inline void ternary(int32_t op, const TensorView& a, const TensorView& b, const TensorView& c,
                    const std::vector<double>& params, const TensorView& out, void* stream = nullptr) {
  CTensor o = out.c();
  check(ct_ternary_param(op, &a.c(), &b.c(), &c.c(), params.data(), (int32_t)params.size(), &o, stream));
}
/** op(a, b, c; params) into a new compact tensor on b's device. */
inline Tensor ternary(int32_t op, const TensorView& a, const TensorView& b, const TensorView& c,
                      const std::vector<double>& params, void* stream = nullptr) {
  const CTensor* in[3] = {&a.c(), &b.c(), &c.c()};
  Tensor out = detail::empty_for(detail::output1(op, in, 3, nullptr), b.device());
  ternary(op, a, b, c, params, out, stream);
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
 *                        void   name(x, out[, mode], stream = nullptr)
 *   CT_KIND_UNARY_PARAM  Tensor name(x, p0[, p1], stream = nullptr)
 *                        void   name(x, p0[, p1], out, stream = nullptr)
 *   CT_KIND_TERNARY      Tensor name(a, b, c[, p0[, p1]], stream = nullptr)   (without p0: the row's defaults)
 *                        void   name(a, b, c[, p0[, p1]], out, stream = nullptr)
 *   CT_KIND_CAST         Tensor name(x, dtype[, mode], stream = nullptr)   (mode: CTCastMode, ct_cast_ex)
 *                        void   name(x, out[, mode], stream = nullptr)
 *
 * e.g. ct::exp(x), ct::isnan(x) (bool result), ct::leaky_relu(x, 0.01),
 * ct::clamp(x, lo, hi, out), ct::where(cond, a, b), ct::cast(x, ct::dtype::float16).
 * The value-returning forms allocate a compact result on x's device (b's for
 * a ternary op), of the shape and dtype the library's shape query gives
 * (ct::output_info: x's shape; a ternary op's broadcast shape); the out=
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
    Tensor out = detail::new_output(CT_OP_##ID, x);                                      \
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
    Tensor out = detail::new_output(CT_OP_##ID, x);                                        \
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
  }                                                                                           \
  CT_HPP_TERNARY_PARAMS_##nparams(ID, name)

#define CT_HPP_TERNARY_PARAMS_0(ID, name)
#define CT_HPP_TERNARY_PARAMS_1(ID, name)                                                     \
  inline Tensor(name)(const TensorView& a, const TensorView& b, const TensorView& c, double p0, \
                      void* stream = nullptr) {                                               \
    return ternary(CT_OP_##ID, a, b, c, std::vector<double>{p0}, stream);                     \
  }                                                                                           \
  inline void(name)(const TensorView& a, const TensorView& b, const TensorView& c, double p0,   \
                    const TensorView& out, void* stream = nullptr) {                          \
    ternary(CT_OP_##ID, a, b, c, std::vector<double>{p0}, out, stream);                       \
  }
#define CT_HPP_TERNARY_PARAMS_2(ID, name)                                                     \
  inline Tensor(name)(const TensorView& a, const TensorView& b, const TensorView& c, double p0, \
                      double p1, void* stream = nullptr) {                                    \
    return ternary(CT_OP_##ID, a, b, c, std::vector<double>{p0, p1}, stream);                 \
  }                                                                                           \
  inline void(name)(const TensorView& a, const TensorView& b, const TensorView& c, double p0,   \
                    double p1, const TensorView& out, void* stream = nullptr) {               \
    ternary(CT_OP_##ID, a, b, c, std::vector<double>{p0, p1}, out, stream);                   \
  }

#define CT_HPP_GEN_CT_KIND_CAST(ID, name, nparams)                                         \
  inline void(name)(const TensorView& x, const TensorView& out, void* stream = nullptr) {  \
    CTensor o = out.c();                                                                   \
    check(ct_cast(&x.c(), &o, stream));                                                    \
  }                                                                                        \
  inline void(name)(const TensorView& x, const TensorView& out, CTCastMode mode,           \
                    void* stream = nullptr) {                                              \
    CTensor o = out.c();                                                                   \
    check(ct_cast_ex(&x.c(), &o, mode, stream));                                           \
  }                                                                                        \
  inline Tensor(name)(const TensorView& x, CTDataType dt, CTCastMode mode,                 \
                      void* stream = nullptr) {                                            \
    CTOpArgs args = detail::op_args();                                                     \
    args.dtype = dt;                                                                       \
    Tensor out = detail::new_output(CT_OP_##ID, x, &args);                                 \
    (name)(x, out, mode, stream);                                                          \
    return out;                                                                            \
  }                                                                                        \
  inline Tensor(name)(const TensorView& x, CTDataType dt, void* stream = nullptr) {        \
    return (name)(x, dt, CT_CAST_DEFAULT, stream);                                         \
  }

CT_ELEMENTWISE_OPS(CT_HPP_GEN_)

#undef CT_HPP_GEN_
#undef CT_HPP_GEN_CT_KIND_UNARY
#undef CT_HPP_GEN_CT_KIND_UNARY_PARAM
#undef CT_HPP_PARAMS_1
#undef CT_HPP_PARAMS_2
#undef CT_HPP_GEN_CT_KIND_TERNARY
#undef CT_HPP_TERNARY_PARAMS_0
#undef CT_HPP_TERNARY_PARAMS_1
#undef CT_HPP_TERNARY_PARAMS_2
#undef CT_HPP_GEN_CT_KIND_CAST

}  // namespace ct

#endif  // CTENSOR_CPP_ELEMENTWISE_HPP_
