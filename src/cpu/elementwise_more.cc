// elementwise_more.cc — the elementwise maps added for PyTorch's operator
// set (log10, the hyperbolic and inverse trigonometric functions, erfc,
// logit, frac, the activations hardsigmoid, mish, selu, softsign,
// logsigmoid, and signbit): functors registered into the same kernel table
// as elementwise.cc's, per SIMD target (Highway's foreach_target).
//
// Ops with a vector form here use the library's accurate float32 math
// (exp_math-inl.h). The libm-like functions without one yet (sinh, cosh,
// asin, acos, atan, asinh, acosh, atanh, erfc, logit) are computed per
// element in double by libm and rounded once (RegScalar): within an ulp of
// float32, libm-accurate in float64, at scalar speed.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/elementwise_more.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
#include "cpu/simd-inl.h"
#include "cpu/exp_math-inl.h"
#include "cpu/unary-inl.h"

#include <cmath>
#include <cstdint>

#include "cpu/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace ct {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// (CT_FLOAT_OP: unary-inl.h)
CT_FLOAT_OP(FLog10, return LogSpecials(d, x, hn::Log10(d, hn::IfThenElse(x > hn::Zero(d), x, hn::Set(d, 1))));)
// x - trunc(x): +-inf give NaN (inf - inf), as PyTorch; -0.5 stays negative.
CT_FLOAT_OP(FFrac, return x - hn::Trunc(x);)
// PyTorch's min(max(x + 3, 0), 6) / 6 with NaN kept (its std::max/min keep a NaN first operand).
CT_FLOAT_OP(FHardsigmoid, {
  using T = hn::TFromD<D>;
  const V r = hn::Min(hn::Max(x + hn::Set(d, T(3)), hn::Zero(d)), hn::Set(d, T(6)));
  return KeepNaN(x, r / hn::Set(d, T(6)));
})
// x tanh(softplus(x)); -inf gives NaN (-inf * 0), as PyTorch.
CT_FLOAT_OP(FMish, return x * TanhAcc(d, SoftplusAcc(d, x));)
// scale x for x >= 0 (so -0 stays -0), scale alpha (e^x - 1) below.
CT_FLOAT_OP(FSelu, {
  using T = hn::TFromD<D>;
  const V scale = hn::Set(d, T(1.0507009873554804934193349852946));
  const V alpha_scale = hn::Set(d, T(1.7580993408473768599402175208123));
  return KeepNaN(x, hn::IfThenElse(x >= hn::Zero(d), scale * x,
                                   alpha_scale * Expm1NonPositive(d, hn::Min(x, hn::Zero(d)))));
})
// x / (1 + |x|); +-inf give NaN (inf / inf), as PyTorch.
CT_FLOAT_OP(FSoftsign, return x / (hn::Set(d, 1) + hn::Abs(x));)
// log(sigmoid(x)) = -softplus(-x): no overflow, exact for large |x|.
CT_FLOAT_OP(FLogsigmoid, return hn::Neg(SoftplusAcc(d, hn::Neg(x)));)

// Per element in double (RegScalar).
#define CT_SCALAR_OP(NAME, EXPR) \
  struct NAME { static double scalar(double x, double, double) { return EXPR; } };
CT_SCALAR_OP(SSinh, std::sinh(x))
CT_SCALAR_OP(SCosh, std::cosh(x))
CT_SCALAR_OP(SAsin, std::asin(x))
CT_SCALAR_OP(SAcos, std::acos(x))
CT_SCALAR_OP(SAtan, std::atan(x))
CT_SCALAR_OP(SAsinh, std::asinh(x))
CT_SCALAR_OP(SAcosh, std::acosh(x))
CT_SCALAR_OP(SAtanh, std::atanh(x))
CT_SCALAR_OP(SErfc, std::erfc(x))
// log(x / (1 - x)); from 1/4 on 2 atanh(2x - 1) (2x - 1 exact there), so no
// cancellation near 1/2.
CT_SCALAR_OP(SLogit, x >= 0.25 ? 2 * std::atanh(2 * x - 1) : std::log(x / (1 - x)))
#undef CT_SCALAR_OP

// signbit: the sign bit of floats (-0 and negative NaN included), x < 0 of integers.
template <class T>
void SignbitK(char* const* p, int64_t n, const double*) {
  uint8_t* y = reinterpret_cast<uint8_t*>(p[0]);
  const T* x = reinterpret_cast<const T*>(p[1]);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point<T>::value) y[i] = std::signbit(x[i]) ? 1 : 0;
    else if constexpr (std::is_signed<T>::value) y[i] = x[i] < 0 ? 1 : 0;
    else y[i] = 0;
  }
}

void FillMoreKernels(KernelTable* t) {
  RegFloat<FLog10>(t, CT_OP_LOG10);
  RegScalar<SSinh>(t, CT_OP_SINH);
  RegScalar<SCosh>(t, CT_OP_COSH);
  RegScalar<SAsin>(t, CT_OP_ASIN);
  RegScalar<SAcos>(t, CT_OP_ACOS);
  RegScalar<SAtan>(t, CT_OP_ATAN);
  RegScalar<SAsinh>(t, CT_OP_ASINH);
  RegScalar<SAcosh>(t, CT_OP_ACOSH);
  RegScalar<SAtanh>(t, CT_OP_ATANH);
  RegScalar<SErfc>(t, CT_OP_ERFC);
  RegScalar<SLogit>(t, CT_OP_LOGIT);
  RegFloat<FFrac>(t, CT_OP_FRAC);
  RegFloat<FHardsigmoid>(t, CT_OP_HARDSIGMOID);
  RegFloat<FMish>(t, CT_OP_MISH);
  RegFloat<FSelu>(t, CT_OP_SELU);
  RegFloat<FSoftsign>(t, CT_OP_SOFTSIGN);
  RegFloat<FLogsigmoid>(t, CT_OP_LOGSIGMOID);

  ContigKernel* sb = t->op[CT_OP_SIGNBIT];
  sb[CT_DT_FLOAT32] = &Staged<&SignbitK<float>, 1, 4>;
  sb[CT_DT_FLOAT64] = &Staged<&SignbitK<double>, 1, 8>;
  SetNarrow<&SignbitK<float>, 1, true>(sb);
  ForEachInt([&](auto lane, int dt) {
    using T = decltype(lane);
    sb[dt] = &Staged<&SignbitK<T>, 1, sizeof(T)>;
  });
  sb[CT_DT_BOOL] = &Staged<&SignbitK<uint8_t>, 1, 1>;
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace ct
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ct {
namespace cpu {
HWY_EXPORT(FillMoreKernels);
void fill_more_kernels(KernelTable* table) { HWY_DYNAMIC_DISPATCH(FillMoreKernels)(table); }
}  // namespace cpu
}  // namespace ct
#endif
