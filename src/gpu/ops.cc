// ops.cc — what each op computes on a GPU module's device (OpenCL and
// CUDA): one row per op, in the OpenCL C both dialects compile (source.h),
// per element class (floats, signed and unsigned integers, bool).
// Everything else about an op (kind, dtypes, output dtype, parameters)
// comes from the registry; source.cc instantiates these rows in the
// templates of their kind. The semantics are the reference's (NumPy's):
// integers wrap, x // 0 = x % 0 = 0, shifts by a count outside [0, bits)
// give 0 or the sign fill, NaN propagates in maximum/minimum, max, argmax.
//
// Names the expressions use: x (unary), a, b (binary), a, b, c (ternary:
// where's a is the condition); p0, p1 the scalar parameters (of the compute
// type for floats, long/ulong for integers); T the compute type of the data
// input, UT its unsigned type, O the output's compute type, BITS the data
// dtype's width, CT_ILIM the magnitude from which every T is an integer.
#include "source.h"
#include "special_source.h"  // kSpecialSource: src/math/special.inc (generated)

#include <string>

namespace ctgpu {
namespace {

#define F_ kFloat
const ElemRow kElem[] = {
    // {op, {bool, signed, unsigned, float}}
    {CT_OP_NEG, {nullptr, "(T)(0 - (UT)x)", "(T)(0 - x)", "-x"}},
    {CT_OP_ABS, {"x", "(x < 0 ? (T)(0 - (UT)x) : x)", "x", "fabs(x)"}},
    {CT_OP_SIGN, {nullptr, "(T)(x > 0 ? 1 : x < 0 ? -1 : 0)", "(T)(x > 0 ? 1 : 0)", "(x > 0 ? (T)1 : x < 0 ? (T)-1 : x)"}},
    {CT_OP_EXP, {nullptr, nullptr, nullptr, "CT_EXP(x)"}},
    {CT_OP_EXPM1, {nullptr, nullptr, nullptr, "CT_EXPM1(x)"}},
    {CT_OP_EXP2, {nullptr, nullptr, nullptr, "CT_EXP2(x)"}},
    {CT_OP_LOG, {nullptr, nullptr, nullptr, "CT_LOG(x)"}},
    {CT_OP_LOG1P, {nullptr, nullptr, nullptr, "CT_LOG1P(x)"}},
    {CT_OP_LOG2, {nullptr, nullptr, nullptr, "CT_LOG2(x)"}},
    {CT_OP_SQRT, {nullptr, nullptr, nullptr, "sqrt(x)"}},
    {CT_OP_RSQRT, {nullptr, nullptr, nullptr, "((T)1 / sqrt(x))"}},
    {CT_OP_RECIPROCAL, {nullptr, "(T)(x == 1 ? 1 : x == -1 ? -1 : 0)", "(T)(x == 1 ? 1 : 0)", "((T)1 / x)"}},
    {CT_OP_SQUARE, {nullptr, "(T)((UT)x * (UT)x)", "(T)(x * x)", "(x * x)"}},
    {CT_OP_SIN, {nullptr, nullptr, nullptr, "CT_SIN(x)"}, {"CT_TRIG_RARE(x)", "CT_SIN_FAST(x)"}},
    {CT_OP_COS, {nullptr, nullptr, nullptr, "CT_COS(x)"}, {"CT_TRIG_RARE(x)", "CT_COS_FAST(x)"}},
    {CT_OP_TAN, {nullptr, nullptr, nullptr, "CT_TAN(x)"}, {"CT_TRIG_RARE(x)", "CT_TAN_FAST(x)"}},
    {CT_OP_TANH, {nullptr, nullptr, nullptr, "CT_TANH(x)"}},
    {CT_OP_SIGMOID, {nullptr, nullptr, nullptr, "CT_SIGMOID(x)"}},
    {CT_OP_RELU, {nullptr, "(x < 0 ? (T)0 : x)", "x", "(x < 0 ? (T)0 : x)"}},
    {CT_OP_GELU, {nullptr, nullptr, nullptr, "CT_GELU(x)"}},
    {CT_OP_GELU_TANH, {nullptr, nullptr, nullptr, "(x * CT_SIGMOID((T)1.5957691216057307117597842397375 * (x + (T)0.044715 * x * x * x)))"}},
    {CT_OP_SILU, {nullptr, nullptr, nullptr, "(x * CT_SIGMOID(x))"}},
    {CT_OP_SOFTPLUS, {nullptr, nullptr, nullptr, "CT_SOFTPLUS(x)"}},
    {CT_OP_ERF, {nullptr, nullptr, nullptr, "CT_ERF(x)"}},
    {CT_OP_FLOOR, {nullptr, "x", "x", "floor(x)"}},
    {CT_OP_CEIL, {nullptr, "x", "x", "ceil(x)"}},
    {CT_OP_ROUND, {nullptr, "x", "x", "rint(x)"}},
    {CT_OP_TRUNC, {nullptr, "x", "x", "trunc(x)"}},
    {CT_OP_LOGICAL_NOT, {"(x == 0)", "(x == 0)", "(x == 0)", "(x == 0)"}},
    {CT_OP_BITWISE_NOT, {"(x == 0)", "(T)~x", "(T)~x", nullptr}},
    {CT_OP_ISNAN, {"0", "0", "0", "(isnan(x) ? 1 : 0)"}},
    {CT_OP_ISINF, {"0", "0", "0", "(isinf(x) ? 1 : 0)"}},
    {CT_OP_ISFINITE, {"1", "1", "1", "(isfinite(x) ? 1 : 0)"}},
    {CT_OP_HARDSWISH, {nullptr, nullptr, nullptr, "ct_hardswish(x)"}},
    {CT_OP_LOG10, {nullptr, nullptr, nullptr, "log10(x)"}},
    {CT_OP_SINH, {nullptr, nullptr, nullptr, "sinh(x)"}},
    {CT_OP_COSH, {nullptr, nullptr, nullptr, "cosh(x)"}},
    {CT_OP_ASIN, {nullptr, nullptr, nullptr, "asin(x)"}},
    {CT_OP_ACOS, {nullptr, nullptr, nullptr, "acos(x)"}},
    {CT_OP_ATAN, {nullptr, nullptr, nullptr, "atan(x)"}},
    {CT_OP_ASINH, {nullptr, nullptr, nullptr, "asinh(x)"}},
    {CT_OP_ACOSH, {nullptr, nullptr, nullptr, "acosh(x)"}},
    {CT_OP_ATANH, {nullptr, nullptr, nullptr, "atanh(x)"}},
    {CT_OP_ERFC, {nullptr, nullptr, nullptr, "erfc(x)"}},
    {CT_OP_LOGIT, {nullptr, nullptr, nullptr, "ct_logit(x)"}},
    {CT_OP_LGAMMA, {nullptr, nullptr, nullptr, "lgamma(x)"}},
    {CT_OP_DIGAMMA, {nullptr, nullptr, nullptr, "ct_sf_digamma(x)"}},
    {CT_OP_ERFINV, {nullptr, nullptr, nullptr, "ct_erfinv(x)"}},
    {CT_OP_FRAC, {nullptr, nullptr, nullptr, "(x - trunc(x))"}},
    {CT_OP_HARDSIGMOID, {nullptr, nullptr, nullptr, "ct_hardsigmoid(x)"}},
    {CT_OP_MISH, {nullptr, nullptr, nullptr, "(x * CT_TANH(CT_SOFTPLUS(x)))"}},
    {CT_OP_SELU, {nullptr, nullptr, nullptr, "(x >= 0 ? (T)1.0507009873554804934 * x : (T)1.7580993408473768599 * CT_EXPM1(x))"}},
    {CT_OP_SOFTSIGN, {nullptr, nullptr, nullptr, "(x / ((T)1 + fabs(x)))"}},
    {CT_OP_LOGSIGMOID, {nullptr, nullptr, nullptr, "(-CT_SOFTPLUS(-x))"}},
    {CT_OP_SIGNBIT, {"0", "(x < 0 ? 1 : 0)", "0", "(signbit(x) ? 1 : 0)"}},
    {CT_OP_LEAKY_RELU, {nullptr, nullptr, nullptr, "(x >= 0 ? x : p0 * x)"}},
    {CT_OP_ELU, {nullptr, nullptr, nullptr, "(x > 0 ? x : p0 * CT_EXPM1(x))"}},
    {CT_OP_CELU, {nullptr, nullptr, nullptr, "(x >= 0 ? x : p0 * CT_EXPM1(x / p0))"}},
    {CT_OP_HARDSHRINK, {nullptr, nullptr, nullptr, "(x >= -p0 && x <= p0 ? (T)0 : x)"}},
    {CT_OP_SOFTSHRINK, {nullptr, nullptr, nullptr, "(x > p0 ? x - p0 : x < -p0 ? x + p0 : x * (T)0)"}},
    {CT_OP_THRESHOLD, {nullptr, nullptr, nullptr, "(x <= p0 ? p1 : x)"}},
    {CT_OP_HARDTANH, {nullptr, nullptr, nullptr, "ct_clamp(x, p0, p1)"}},
    {CT_OP_RELU6, {nullptr, "(x < 0 ? (T)0 : x > 6 ? (T)6 : x)", "(x > 6 ? (T)6 : x)", "(x < 0 ? (T)0 : x > (T)6 ? (T)6 : x)"}},
    {CT_OP_TANHSHRINK, {nullptr, nullptr, nullptr, "(x - tanh(x))"}},
    {CT_OP_ISPOSINF, {"0", "0", "0", "(isinf(x) && x > 0 ? 1 : 0)"}},
    {CT_OP_ISNEGINF, {"0", "0", "0", "(isinf(x) && x < 0 ? 1 : 0)"}},
    {CT_OP_DEG2RAD, {nullptr, nullptr, nullptr, "(x * (T)0.017453292519943295769236907684886127)"}},
    {CT_OP_RAD2DEG, {nullptr, nullptr, nullptr, "(x * (T)57.295779513082320876798154814105170)"}},
    {CT_OP_SINC, {nullptr, nullptr, nullptr,
                  "(x == 0 ? (T)1 : sin((T)3.14159265358979323846 * x) / ((T)3.14159265358979323846 * x))"}},
    {CT_OP_NDTR, {nullptr, nullptr, nullptr, "((T)0.5 * erfc(-x * (T)0.70710678118654752440))"}},
    {CT_OP_NDTRI, {nullptr, nullptr, nullptr, "ct_ndtri(x)"}},
    {CT_OP_ENTR, {nullptr, nullptr, nullptr, "(isnan(x) ? x : x > 0 ? -x * log(x) : x == 0 ? (T)0 : -(T)INFINITY)"}},
    {CT_OP_ROUND_DECIMALS, {nullptr, nullptr, nullptr, "ct_round_decimals(x, p0)"}},
    {CT_OP_POSITIVE, {nullptr, "x", "x", "x"}},
    {CT_OP_SOFTPLUS_BETA, {nullptr, nullptr, nullptr, "(x * p0 > p1 ? x : CT_SOFTPLUS(x * p0) / p0)"}},
    {CT_OP_SPHERICAL_BESSEL_J0, {nullptr, nullptr, nullptr, "ct_sph_j0(x)"}},
    {CT_OP_ERFCX, {nullptr, nullptr, nullptr, "ct_erfcx(x)"}},
    {CT_OP_LOG_NDTR, {nullptr, nullptr, nullptr, "ct_log_ndtr(x)"}},
    // the special functions of src/math/special.inc (kSpecialSource), the CPU's text
    {CT_OP_BESSEL_J0, {nullptr, nullptr, nullptr, "ct_sf_bessel(x, 0)"}},
    {CT_OP_BESSEL_J1, {nullptr, nullptr, nullptr, "ct_sf_bessel(x, 1)"}},
    {CT_OP_BESSEL_Y0, {nullptr, nullptr, nullptr, "ct_sf_bessel(x, 2)"}},
    {CT_OP_BESSEL_Y1, {nullptr, nullptr, nullptr, "ct_sf_bessel(x, 3)"}},
    {CT_OP_MODIFIED_BESSEL_I0, {nullptr, nullptr, nullptr, "ct_sf_bessel_i(x, 0, 0)"}},
    {CT_OP_MODIFIED_BESSEL_I1, {nullptr, nullptr, nullptr, "ct_sf_bessel_i(x, 1, 0)"}},
    {CT_OP_I0E, {nullptr, nullptr, nullptr, "ct_sf_bessel_i(x, 0, 1)"}},
    {CT_OP_I1E, {nullptr, nullptr, nullptr, "ct_sf_bessel_i(x, 1, 1)"}},
    {CT_OP_MODIFIED_BESSEL_K0, {nullptr, nullptr, nullptr, "ct_sf_bessel_k(x, 0, 0)"}},
    {CT_OP_MODIFIED_BESSEL_K1, {nullptr, nullptr, nullptr, "ct_sf_bessel_k(x, 1, 0)"}},
    {CT_OP_SCALED_MODIFIED_BESSEL_K0, {nullptr, nullptr, nullptr, "ct_sf_bessel_k(x, 0, 1)"}},
    {CT_OP_SCALED_MODIFIED_BESSEL_K1, {nullptr, nullptr, nullptr, "ct_sf_bessel_k(x, 1, 1)"}},
    {CT_OP_POLYGAMMA, {nullptr, nullptr, nullptr, "ct_sf_polygamma(p0, x)"}},
    {CT_OP_MVLGAMMA, {nullptr, nullptr, nullptr, "ct_sf_mvlgamma(x, p0)"}},
    {CT_OP_AIRY_AI, {nullptr, nullptr, nullptr, "ct_sf_airy_ai(x)"}},
    {CT_OP_CLAMP, {nullptr, "ct_clamp(x, p0, p1)", "ct_clamp(x, p0, p1)", "ct_clamp(x, p0, p1)"}},
    {CT_OP_POW_SCALAR, {nullptr, nullptr, nullptr, "CT_POWS(x, p0)"}, {"CT_POW_RARE(x, p0)", "CT_POW_FAST(x, p0)"},
     {{"ct_pow_small_kind(p0) == 0", "ct_pow_small(x, p0, 0, 0)"}, {"ct_pow_small_kind(p0) == 1", "ct_pow_small(x, p0, 1, 0)"},
      {"ct_pow_small_kind(p0) == 2", "ct_pow_small(x, p0, 0, 1)"}, {"ct_pow_small_kind(p0) == 3", "ct_pow_small(x, p0, 1, 1)"}}},
    {CT_OP_ADD_SCALAR, {nullptr, "(T)((UT)x + (UT)p0)", "(T)(x + (T)p0)", "(x + p0)"}},
    {CT_OP_MUL_SCALAR, {nullptr, "(T)((UT)x * (UT)p0)", "(T)(x * (T)p0)", "(x * p0)"}},
    {CT_OP_WHERE, {"(a != 0 ? b : c)", "(a != 0 ? b : c)", "(a != 0 ? b : c)", "(a != 0 ? b : c)"}},
    {CT_OP_FMA, {nullptr, "(T)((UT)a * (UT)b + (UT)c)", "(T)(a * b + c)", "fma(a, b, c)"}},
    {CT_OP_LERP, {nullptr, nullptr, nullptr, "(c < (T)0.5 ? a + c * (b - a) : b - (b - a) * ((T)1 - c))"}},
    // PyTorch's order of roundings where the compiler keeps it (CUDA: --fmad=false; an OpenCL compiler may contract)
    {CT_OP_ADDCMUL, {nullptr, "(T)((UT)a + (UT)p0 * (UT)b * (UT)c)", "(T)(a + (T)p0 * b * c)", "(a + p0 * b * c)"}},
    {CT_OP_ADDCDIV, {nullptr, nullptr, nullptr, "(a + p0 * b / c)"}},
    {CT_OP_CLAMP_TENSOR, {nullptr, "ct_clamp(a, b, c)", "ct_clamp(a, b, c)", "(b != b ? b : c != c ? c : ct_clamp(a, b, c))"}},
    // binary
    {CT_OP_ADD, {"(a | b)", "(T)((UT)a + (UT)b)", "(T)(a + b)", "(a + b)"}},
    {CT_OP_SUB, {nullptr, "(T)((UT)a - (UT)b)", "(T)(a - b)", "(a - b)"}},
    {CT_OP_MUL, {"(a & b)", "(T)((UT)a * (UT)b)", "(T)(a * b)", "(a * b)"}},
    {CT_OP_DIV, {"((O)a / (O)b)", "((O)a / (O)b)", "((O)a / (O)b)", "((O)a / (O)b)"}},
    {CT_OP_FLOOR_DIV, {nullptr, "ct_floordiv(a, b)", "(b == 0 ? (T)0 : (T)(a / b))", "ct_floordiv(a, b)"}, {"ct_divmod_rare(a, b)", "ct_floordiv_fast(a, b)", "vectorize_width(16)"}},
    {CT_OP_MOD, {nullptr, "ct_mod(a, b)", "(b == 0 ? (T)0 : (T)(a % b))", "ct_mod(a, b)"}, {"ct_divmod_rare(a, b)", "ct_mod_fast(a, b)", "vectorize_width(16)"}},
    {CT_OP_POW, {nullptr, "ct_ipow(a, b)", "ct_ipow(a, b)", "CT_POW(a, b)"}, {"CT_POW_RARE(a, b)", "CT_POW_FAST(a, b)"}},
    {CT_OP_MAXIMUM, {"(a > b ? a : b)", "(a > b ? a : b)", "(a > b ? a : b)", "(isnan(a) ? a : isnan(b) ? b : a > b ? a : b)"}},
    {CT_OP_MINIMUM, {"(a < b ? a : b)", "(a < b ? a : b)", "(a < b ? a : b)", "(isnan(a) ? a : isnan(b) ? b : a < b ? a : b)"}},
    {CT_OP_FMAX, {"(a > b ? a : b)", "(a > b ? a : b)", "(a > b ? a : b)", "fmax(a, b)"}},
    {CT_OP_FMIN, {"(a < b ? a : b)", "(a < b ? a : b)", "(a < b ? a : b)", "fmin(a, b)"}},
    {CT_OP_ATAN2, {nullptr, nullptr, nullptr, "CT_ATAN2(a, b)"}},
    {CT_OP_HYPOT, {nullptr, nullptr, nullptr, "CT_HYPOT(a, b)"}},
    {CT_OP_COPYSIGN, {nullptr, nullptr, nullptr, "copysign(a, b)"}},
    {CT_OP_FMOD, {nullptr, "((b == 0 || b == -1) ? (T)0 : (T)(a % b))", "(b == 0 ? (T)0 : (T)(a % b))", "fmod(a, b)"}},
    {CT_OP_LOGADDEXP, {nullptr, nullptr, nullptr, "ct_logaddexp(a, b)"}},
    {CT_OP_LOGADDEXP2, {nullptr, nullptr, nullptr, "ct_logaddexp2(a, b)"}},
    {CT_OP_XLOGY, {nullptr, nullptr, nullptr, "(isnan(b) ? b : a == 0 ? (T)0 : a * log(b))"}},
    {CT_OP_XLOG1PY, {nullptr, nullptr, nullptr, "(isnan(b) ? b : a == 0 ? (T)0 : a * log1p(b))"}},
    {CT_OP_NEXTAFTER, {nullptr, nullptr, nullptr, "nextafter(a, b)"}},
    {CT_OP_CHEBYSHEV_POLYNOMIAL_T, {nullptr, nullptr, nullptr, "ct_sf_chebyshev(a, b, 0)"}},
    {CT_OP_CHEBYSHEV_POLYNOMIAL_U, {nullptr, nullptr, nullptr, "ct_sf_chebyshev(a, b, 1)"}},
    {CT_OP_CHEBYSHEV_POLYNOMIAL_V, {nullptr, nullptr, nullptr, "ct_sf_chebyshev(a, b, 2)"}},
    {CT_OP_CHEBYSHEV_POLYNOMIAL_W, {nullptr, nullptr, nullptr, "ct_sf_chebyshev(a, b, 3)"}},
    {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_T, {nullptr, nullptr, nullptr, "ct_sf_chebyshev(a + a - (T)1, b, 0)"}},
    {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_U, {nullptr, nullptr, nullptr, "ct_sf_chebyshev(a + a - (T)1, b, 1)"}},
    {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_V, {nullptr, nullptr, nullptr, "ct_sf_chebyshev(a + a - (T)1, b, 2)"}},
    {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_W, {nullptr, nullptr, nullptr, "ct_sf_chebyshev(a + a - (T)1, b, 3)"}},
    {CT_OP_HERMITE_POLYNOMIAL_H, {nullptr, nullptr, nullptr, "ct_sf_hermite(a, b, 0)"}},
    {CT_OP_HERMITE_POLYNOMIAL_HE, {nullptr, nullptr, nullptr, "ct_sf_hermite(a, b, 1)"}},
    {CT_OP_LAGUERRE_POLYNOMIAL_L, {nullptr, nullptr, nullptr, "ct_sf_laguerre(a, b)"}},
    {CT_OP_LEGENDRE_POLYNOMIAL_P, {nullptr, nullptr, nullptr, "ct_sf_legendre(a, b)"}},
    {CT_OP_ZETA, {nullptr, nullptr, nullptr, "ct_sf_zeta(a, b)"}},
    {CT_OP_IGAMMA, {nullptr, nullptr, nullptr, "ct_sf_igamma(a, b, 0)"}},
    {CT_OP_IGAMMAC, {nullptr, nullptr, nullptr, "ct_sf_igamma(a, b, 1)"}},
    {CT_OP_GCD, {nullptr, "ct_gcd(a, b)", "ct_gcd(a, b)", nullptr}},
    {CT_OP_LCM, {nullptr, "ct_lcm(a, b)", "ct_lcm(a, b)", nullptr}},
    {CT_OP_HEAVISIDE, {nullptr, nullptr, nullptr, "(isnan(a) ? a : a < 0 ? (T)0 : a > 0 ? (T)1 : b)"}},
    {CT_OP_PRELU, {nullptr, nullptr, nullptr, "(a >= 0 || isnan(a) ? a : b * a)"}},
    {CT_OP_RELU_BACKWARD, {nullptr, nullptr, nullptr, "(b <= 0 ? (T)0 : a)"}},
    // an integer b scales exactly (a subnormal a times 2^146 stays finite; a * exp2(b) overflowed in float)
    {CT_OP_LDEXP, {nullptr, nullptr, nullptr, "(b == trunc(b) && fabs(b) < (T)65536 ? ldexp(a, (int)b) : a * exp2(b))"}},
    {CT_OP_BITWISE_AND, {"(a & b)", "(T)(a & b)", "(T)(a & b)", nullptr}},
    {CT_OP_BITWISE_OR, {"(a | b)", "(T)(a | b)", "(T)(a | b)", nullptr}},
    {CT_OP_BITWISE_XOR, {"(a ^ b)", "(T)(a ^ b)", "(T)(a ^ b)", nullptr}},
    {CT_OP_LEFT_SHIFT, {nullptr, "((b < 0 || b >= BITS) ? (T)0 : (T)((UT)a << b))", "(b >= BITS ? (T)0 : (T)(a << b))", nullptr}},
    {CT_OP_RIGHT_SHIFT, {nullptr, "((b < 0 || b >= BITS) ? (T)(a < 0 ? -1 : 0) : (T)(a >> b))", "(b >= BITS ? (T)0 : (T)(a >> b))", nullptr}},
    {CT_OP_LOGICAL_AND, {"(a != 0 && b != 0)", "(a != 0 && b != 0)", "(a != 0 && b != 0)", "(a != 0 && b != 0)"}},
    {CT_OP_LOGICAL_OR, {"(a != 0 || b != 0)", "(a != 0 || b != 0)", "(a != 0 || b != 0)", "(a != 0 || b != 0)"}},
    {CT_OP_LOGICAL_XOR, {"((a != 0) != (b != 0))", "((a != 0) != (b != 0))", "((a != 0) != (b != 0))", "((a != 0) != (b != 0))"}},
    {CT_OP_EQUAL, {"(a == b)", "(a == b)", "(a == b)", "(a == b)"}},
    {CT_OP_NOT_EQUAL, {"(a != b)", "(a != b)", "(a != b)", "(a != b)"}},
    {CT_OP_LESS, {"(a < b)", "(a < b)", "(a < b)", "(a < b)"}},
    {CT_OP_LESS_EQUAL, {"(a <= b)", "(a <= b)", "(a <= b)", "(a <= b)"}},
    {CT_OP_GREATER, {"(a > b)", "(a > b)", "(a > b)", "(a > b)"}},
    {CT_OP_GREATER_EQUAL, {"(a >= b)", "(a >= b)", "(a >= b)", "(a >= b)"}},
};
#undef F_

// Reductions. State St: AF f0, f1, f2 (AF: double where the device has it),
// long i0, ulong u0, long idx. Integers accumulate in 64 bits (wrapping),
// floats in AF. An output's elements split into P contiguous chunks (P and
// the chunks fixed by the shapes), each read as four interleaved states
// (independent dependency chains); states and chunks merge in a fixed order,
// so the result depends only on the shapes, never on work-group sizes.
// argmax/argmin merge by value, then by the smaller index (first NaN, first
// maximum), since interleaved states do not arrive in index order.
const ReduceRow kReduce[] = {
    {CT_OP_SUM,
     {{"s->f0 = 0;", "s->f0 += (AF)x;", "s->f0 += o->f0;", "return (O)s->f0;"},
      {"s->u0 = 0;", "s->u0 += (ulong)(long)x;", "s->u0 += o->u0;", "return (O)s->u0;"}}},
    {CT_OP_MEAN,
     {{"s->f0 = 0;", "s->f0 += (AF)x;", "s->f0 += o->f0;", "return (O)(s->f0 / (AF)count);"},
      {"s->f0 = 0;", "s->f0 += (AF)x;", "s->f0 += o->f0;", "return (O)(s->f0 / (AF)count);"}}},
    {CT_OP_PROD,
     {{"s->f0 = 1;", "s->f0 *= (AF)x;", "s->f0 *= o->f0;", "return (O)s->f0;"},
      {"s->u0 = 1;", "s->u0 *= (ulong)(long)x;", "s->u0 *= o->u0;", "return (O)s->u0;"}}},
    {CT_OP_MAX,
     {{"s->f0 = -INFINITY;", "if (isnan((AF)x) || (AF)x > s->f0) s->f0 = (AF)x;",
       "if ((isnan(o->f0) && !isnan(s->f0)) || o->f0 > s->f0) s->f0 = o->f0;", "return (O)s->f0;"},
      {"s->i0 = CT_IMIN;", "if ((CT_I)x > s->i0) s->i0 = (CT_I)x;", "if (o->i0 > s->i0) s->i0 = o->i0;",
       "return (O)s->i0;"}}},
    {CT_OP_MIN,
     {{"s->f0 = INFINITY;", "if (isnan((AF)x) || (AF)x < s->f0) s->f0 = (AF)x;",
       "if ((isnan(o->f0) && !isnan(s->f0)) || o->f0 < s->f0) s->f0 = o->f0;", "return (O)s->f0;"},
      {"s->i0 = CT_IMAX;", "if ((CT_I)x < s->i0) s->i0 = (CT_I)x;", "if (o->i0 < s->i0) s->i0 = o->i0;",
       "return (O)s->i0;"}}},
    {CT_OP_ARGMAX,
     {{"s->idx = -1; s->f0 = 0;",
       "if (s->idx < 0 || (!isnan(s->f0) && (isnan((AF)x) || (AF)x > s->f0))) { s->f0 = (AF)x; s->idx = k; }",
       "if (o->idx >= 0 && (s->idx < 0 || ct_fbetter(o->f0, o->idx, s->f0, s->idx, 1))) *s = *o;",
       "return (O)s->idx;"},
      {"s->idx = -1; s->i0 = 0;", "if (s->idx < 0 || (CT_I)x > s->i0) { s->i0 = (CT_I)x; s->idx = k; }",
       "if (o->idx >= 0 && (s->idx < 0 || o->i0 > s->i0 || (o->i0 == s->i0 && o->idx < s->idx))) *s = *o;",
       "return (O)s->idx;"}}},
    {CT_OP_ARGMIN,
     {{"s->idx = -1; s->f0 = 0;",
       "if (s->idx < 0 || (!isnan(s->f0) && (isnan((AF)x) || (AF)x < s->f0))) { s->f0 = (AF)x; s->idx = k; }",
       "if (o->idx >= 0 && (s->idx < 0 || ct_fbetter(o->f0, o->idx, s->f0, s->idx, 0))) *s = *o;",
       "return (O)s->idx;"},
      {"s->idx = -1; s->i0 = 0;", "if (s->idx < 0 || (CT_I)x < s->i0) { s->i0 = (CT_I)x; s->idx = k; }",
       "if (o->idx >= 0 && (s->idx < 0 || o->i0 < s->i0 || (o->i0 == s->i0 && o->idx < s->idx))) *s = *o;",
       "return (O)s->idx;"}}},
    {CT_OP_ANY,
     {{"s->u0 = 0;", "s->u0 |= (x != 0);", "s->u0 |= o->u0;", "return (O)(s->u0 != 0);"},
      {"s->u0 = 0;", "s->u0 |= (x != 0);", "s->u0 |= o->u0;", "return (O)(s->u0 != 0);"}}},
    {CT_OP_ALL,
     {{"s->u0 = 1;", "s->u0 &= (x != 0);", "s->u0 &= o->u0;", "return (O)(s->u0 != 0);"},
      {"s->u0 = 1;", "s->u0 &= (x != 0);", "s->u0 &= o->u0;", "return (O)(s->u0 != 0);"}}},
    {CT_OP_NORM2,
     {{"s->f0 = 0;", "s->f0 += (AF)x * (AF)x;", "s->f0 += o->f0;", "return (O)sqrt(s->f0);"},
      {"s->f0 = 0;", "s->f0 += (AF)x * (AF)x;", "s->f0 += o->f0;", "return (O)sqrt(s->f0);"}}},
    {CT_OP_LOGSUMEXP,
     {{"s->f0 = -INFINITY; s->f1 = 0;", "ct_lse_add(s, (AF)x, 1);",
       "if (o->f1 != 0 || isnan(o->f0)) ct_lse_add(s, o->f0, o->f1);", "return (O)ct_lse_fin(s);"},
      {nullptr, nullptr, nullptr, nullptr}}},
    {CT_OP_VAR,
     {{"s->f0 = 0; s->f1 = 0; s->f2 = 0;", "ct_welford(s, (AF)x);", "ct_chan(s, o);", "return (O)ct_var_fin(s, count, p0);"},
      {"s->f0 = 0; s->f1 = 0; s->f2 = 0;", "ct_welford(s, (AF)x);", "ct_chan(s, o);", "return (O)ct_var_fin(s, count, p0);"}}},
    {CT_OP_STD,
     {{"s->f0 = 0; s->f1 = 0; s->f2 = 0;", "ct_welford(s, (AF)x);", "ct_chan(s, o);",
       "return (O)sqrt(ct_var_fin(s, count, p0));"},
      {"s->f0 = 0; s->f1 = 0; s->f2 = 0;", "ct_welford(s, (AF)x);", "ct_chan(s, o);",
       "return (O)sqrt(ct_var_fin(s, count, p0));"}}},
    {CT_OP_NANSUM,
     {{"s->f0 = 0;", "if (!isnan((AF)x)) s->f0 += (AF)x;", "s->f0 += o->f0;", "return (O)s->f0;"},
      {"s->u0 = 0;", "s->u0 += (ulong)(long)x;", "s->u0 += o->u0;", "return (O)s->u0;"}}},
    {CT_OP_NANMEAN,  // f1 counts the elements that are not NaN: 0 / 0 is NaN
     {{"s->f0 = 0; s->f1 = 0;", "if (!isnan((AF)x)) { s->f0 += (AF)x; s->f1 += 1; }",
       "s->f0 += o->f0; s->f1 += o->f1;", "return (O)(s->f0 / s->f1);"},
      {"s->f0 = 0;", "s->f0 += (AF)x;", "s->f0 += o->f0;", "return (O)(s->f0 / (AF)count);"}}},
    {CT_OP_COUNT_NONZERO,
     {{"s->u0 = 0;", "s->u0 += (x != 0);", "s->u0 += o->u0;", "return (O)s->u0;"},
      {"s->u0 = 0;", "s->u0 += (x != 0);", "s->u0 += o->u0;", "return (O)s->u0;"}}},
};

// The order statistics: line reductions over the helpers of source.cc (a
// radix select, 4 bits per pass, on the monotone keys of the CPU's sort:
// NaN above +inf, -0 equal to 0). median: the lower median, the first NaN if
// there is one; nanmedian: of the elements that are not NaN; quantile: the
// two neighbours of rank p0 * (N - 1) interpolated from the nearer end, as
// the CPU (QC: float for float32 and the narrow floats, else AF).
#define CT_MEDIAN_(NAN_ONLY_IF_ALL)                                                              \
  "long l, e, nan = ct_nans(q0, xb, g), n = " NAN_ONLY_IF_ALL ";\n"                               \
  "return (O)ct_rank(q0, xb, g, nan > 0 && (n == g->N || n == 0) ? g->N - nan : (n - 1) / 2, &l, &e);"
#define CT_QUANTILE_(SKIP)                                                                                   \
  "long l, e, nan = ct_nans(q0, xb, g), n = " SKIP " ? g->N - nan : g->N;\n"                                \
  "if ((!" SKIP " && nan > 0) || n == 0) return (O)NAN;\n"                                                 \
  "const AF pos = p0 * (AF)(n - 1);\nconst long lo = (long)floor(pos);\n"                                   \
  "const T vlo = ct_rank(q0, xb, g, lo, &l, &e);\nconst QC a = (QC)vlo;\n"                                 \
  "if ((AF)lo == pos) return (O)a;\n"                                                                        \
  "const T vhi = l + e > lo + 1 ? vlo : ct_next_above(q0, xb, g, ct_key(vlo));\n"                           \
  "const QC b = (QC)vhi, w = (QC)(pos - (AF)lo), d = b - a;\n"                                               \
  "return (O)(w < (QC)0.5 ? a + w * d : b - d * ((QC)1 - w));"
#define CT_KTH_ "long l, e;\nreturn (O)ct_rank(q0, xb, g, (long)p0 - 1, &l, &e);"
// mode: each element's count of equal keys (quadratic: correct, not fast for long sets); the most
// frequent, the smallest key among the equally frequent, its first element
#define CT_MODE_                                                                                       \
  "ulong best = 0;\nlong best_n = 0;\nT vb = (T)0;\n"                                                   \
  "for (long i = 0; i < g->N; ++i) {\n  const T v = LDR(i);\n  const ulong k = ct_key(v);\n"            \
  "  if (best_n > 0 && k == best) continue;\n  long c = 0;\n"                                            \
  "  for (long j = 0; j < g->N; ++j) c += ct_key(LDR(j)) == k ? 1 : 0;\n"                                 \
  "  if (c > best_n || (c == best_n && k < best)) { best_n = c; best = k; vb = v; }\n}\nreturn (O)vb;"
const ReduceRow kSelect[] = {
    // median: NaN if any (n == N); nanmedian: NaN only if nothing else (n == 0)
    {CT_OP_MEDIAN, {}, {CT_MEDIAN_("g->N"), CT_MEDIAN_("g->N")}},
    {CT_OP_NANMEDIAN, {}, {CT_MEDIAN_("g->N - nan"), CT_MEDIAN_("g->N - nan")}},
    {CT_OP_QUANTILE, {}, {CT_QUANTILE_("0"), CT_QUANTILE_("0")}},
    {CT_OP_NANQUANTILE, {}, {CT_QUANTILE_("1"), CT_QUANTILE_("1")}},
    {CT_OP_KTHVALUE, {}, {CT_KTH_, CT_KTH_}},
    {CT_OP_MODE, {}, {CT_MODE_, CT_MODE_}},
};
#undef CT_MEDIAN_
#undef CT_QUANTILE_
#undef CT_KTH_
#undef CT_MODE_

// Along-axis ops: the body runs in a function that has x (element j at
// LDX(j)), out (STO(j, v)), len; AF as above. One work-item per line, in
// order along it: deterministic, and in place (out == x) reads each element
// before it writes it. softmax and log_softmax are a line reduction and a
// map instead (AlongRow's m_init .. out), so a GPU can spread a long line
// over a work-group.
// sort and argsort: a heapsort of the line in out (LDO reads it back), one
// work-item per line, no scratch. CT_LT is the order (floats: NaN last, -0
// equal to 0); argsort compares (x[a], a), a total order, so its result is
// the stable order whatever the heap does.
#define CT_HEAPSORT_                                                                                   \
  "for (long k = len / 2; k > 0;) { --k; long i = k; for (;;) { long c = 2 * i + 1; if (c >= len) break; " \
  "if (c + 1 < len && CT_LTP(c, c + 1)) ++c; if (!CT_LTP(i, c)) break; CT_SWP(i, c); i = c; } }\n"        \
  "for (long m = len - 1; m > 0; --m) { CT_SWP(0, m); long i = 0; for (;;) { long c = 2 * i + 1; "         \
  "if (c >= m) break; if (c + 1 < m && CT_LTP(c, c + 1)) ++c; if (!CT_LTP(i, c)) break; CT_SWP(i, c); i = c; } }\n"
#define CT_SORT_(LT)                                                                              \
  "\n#define CT_LT(a, b) " LT "\n#define CT_LTP(i, j) CT_LT(LDO(i), LDO(j))\n"                   \
  "#define CT_SWP(i, j) { const O t_ = LDO(i); STO(i, LDO(j)); STO(j, t_); }\n"                   \
  "for (long j = 0; j < len; ++j) STO(j, LDX(j));\n" CT_HEAPSORT_                                  \
  "#undef CT_LT\n#undef CT_LTP\n#undef CT_SWP\n"
#define CT_ARGSORT_(LT)                                                                                  \
  "\n#define CT_LT(a, b) " LT "\n"                                                                         \
  "#define CT_LTP(i, j) (CT_LT(LDX(LDO(i)), LDX(LDO(j))) || (!CT_LT(LDX(LDO(j)), LDX(LDO(i))) && LDO(i) < LDO(j)))\n" \
  "#define CT_SWP(i, j) { const long t_ = LDO(i); STO(i, LDO(j)); STO(j, t_); }\n"                        \
  "for (long j = 0; j < len; ++j) STO(j, j);\n" CT_HEAPSORT_                                              \
  "#undef CT_LT\n#undef CT_LTP\n#undef CT_SWP\n"
#define CT_FLT_ "(!isnan(a) && (isnan(b) || (a) < (b)))"

const AlongRow kAlong[] = {
    // m: the line's max, NaN if it has one; the sum of exp(v - m) (NaN with
    // an infinity: exp(inf - inf), as the CPU)
    {CT_OP_SOFTMAX, {nullptr, nullptr}, "-INFINITY", "((isnan(b) || b > a) && !isnan(a)) ? b : a", "exp(v - m)", "s",
     "exp(v - m) / f"},
    {CT_OP_LOG_SOFTMAX, {nullptr, nullptr}, "-INFINITY", "((isnan(b) || b > a) && !isnan(a)) ? b : a", "exp(v - m)",
     "log(s)", "(v - m) - f"},
    {CT_OP_CUMSUM,
     {"AF acc = 0; for (long j = 0; j < len; ++j) { acc += (AF)LDX(j); STO(j, (O)acc); }",
      "ulong acc = 0; for (long j = 0; j < len; ++j) { acc += (ulong)(long)LDX(j); STO(j, (O)acc); }"}},
    {CT_OP_CUMPROD,
     {"AF acc = 1; for (long j = 0; j < len; ++j) { acc *= (AF)LDX(j); STO(j, (O)acc); }",
      "ulong acc = 1; for (long j = 0; j < len; ++j) { acc *= (ulong)(long)LDX(j); STO(j, (O)acc); }"}},
    // acc = logaddexp(acc, v) as NumPy's npy_logaddexp (equal inputs, infinities included: a + log 2)
    {CT_OP_LOGCUMSUMEXP,
     {"AF acc = -INFINITY; for (long j = 0; j < len; ++j) { const AF v = (AF)LDX(j); "
      "if (acc == v) acc = acc + (AF)0.693147180559945309417232121458176568; "
      "else { const AF t = acc - v; acc = t > 0 ? acc + log1p(exp(-t)) : t <= 0 ? v + log1p(exp(t)) : t; } "
      "STO(j, (O)acc); }",
      nullptr}},
    // softmax of -x: m the line's min (NaN if it has one), terms e^(m - v)
    {CT_OP_SOFTMIN, {nullptr, nullptr}, "INFINITY", "((isnan(b) || b < a) && !isnan(a)) ? b : a", "exp(m - v)", "s",
     "exp(m - v) / f"},
    // the running max/min: a NaN, once met, stays
    {CT_OP_CUMMAX,
     {"AF acc = -INFINITY; for (long j = 0; j < len; ++j) { const AF v = (AF)LDX(j); "
      "if (!isnan(acc) && (isnan(v) || v > acc)) acc = v; STO(j, (O)acc); }",
      "CT_I acc = CT_IMIN; for (long j = 0; j < len; ++j) { const CT_I v = (CT_I)LDX(j); if (v > acc) acc = v; "
      "STO(j, (O)acc); }"}},
    {CT_OP_CUMMIN,
     {"AF acc = INFINITY; for (long j = 0; j < len; ++j) { const AF v = (AF)LDX(j); "
      "if (!isnan(acc) && (isnan(v) || v < acc)) acc = v; STO(j, (O)acc); }",
      "CT_I acc = CT_IMAX; for (long j = 0; j < len; ++j) { const CT_I v = (CT_I)LDX(j); if (v < acc) acc = v; "
      "STO(j, (O)acc); }"}},
    {CT_OP_SORT, {CT_SORT_(CT_FLT_), CT_SORT_("((a) < (b))")}},
    {CT_OP_ARGSORT, {CT_ARGSORT_(CT_FLT_), CT_ARGSORT_("((a) < (b))")}},
};
#undef CT_HEAPSORT_
#undef CT_SORT_
#undef CT_ARGSORT_
#undef CT_FLT_

const char kFloatHelpers[] = R"CL(
CT_INL T ct_hardswish(T x) { T r = x + (T)3; r = r < 0 ? (T)0 : r > 6 ? (T)6 : r; return x * r / (T)6; }
CT_INL T ct_hardsigmoid(T x) { T r = x + (T)3; r = r < 0 ? (T)0 : r > 6 ? (T)6 : r; return r / (T)6; }
/* log(x / (1 - x)); from 1/4 on 2 atanh(2x - 1) (2x - 1 exact there): no cancellation near 1/2 */
CT_INL T ct_logit(T x) { return x >= (T)0.25 ? (T)2 * atanh((T)2 * x - (T)1) : log(x / ((T)1 - x)); }
/* erfinv as the CPU's: Giles' single-precision start, then Newton steps on erf (|y| < 1/2) or on
   erfc(|x|) = 1 - |y| */
CT_INL T ct_erfinv(T y) {
  const T a = fabs(y);
  if (!(a <= (T)1)) return (T)NAN;
  if (a == (T)1) return copysign((T)INFINITY, y);
  if (y == (T)0) return y;
  T w = -log(((T)1 - a) * ((T)1 + a)), p;
  if (w < (T)5) {
    w -= (T)2.5;
    p = (T)2.81022636e-08; p = p * w + (T)3.43273939e-07; p = p * w + (T)-3.5233877e-06;
    p = p * w + (T)-4.39150654e-06; p = p * w + (T)0.00021858087; p = p * w + (T)-0.00125372503;
    p = p * w + (T)-0.00417768164; p = p * w + (T)0.246640727; p = p * w + (T)1.50140941;
  } else {
    w = sqrt(w) - (T)3;
    p = (T)-0.000200214257; p = p * w + (T)0.000100950558; p = p * w + (T)0.00134934322;
    p = p * w + (T)-0.00367342844; p = p * w + (T)0.00573950773; p = p * w + (T)-0.0076224613;
    p = p * w + (T)0.00943887047; p = p * w + (T)1.00167406; p = p * w + (T)2.83297682;
  }
  T x = p * a;
  for (int it = 0; it < 12; ++it) {
    const T d = (T)1.1283791670955125739 * exp(-x * x);
    const T step = a < (T)0.5 ? (erf(x) - a) / d : (((T)1 - a) - erfc(x)) / d;
    x -= step;
    if (!(fabs(step) > (sizeof(T) == 4 ? (T)1e-7 : (T)1e-17) * x)) break;
  }
  return copysign(x, y);
}
/* ndtri as the CPU's: Acklam's rational start, then Halley steps on erfc of the lower tail */
CT_INL T ct_ndtri(T p) {
  if (!(p >= (T)0 && p <= (T)1)) return (T)NAN;
  if (p == (T)0) return -(T)INFINITY;
  if (p == (T)1) return (T)INFINITY;
  const int upper = p > (T)0.5;
  const T t = upper ? (T)1 - p : p;
  T x;
  if (t < (T)0.02425) {
    const T q = sqrt((T)-2 * log(t));
    x = (((((((T)-7.784894002430293e-03 * q + (T)-3.223964580411365e-01) * q + (T)-2.400758277161838e+00) * q +
            (T)-2.549732539343734e+00) * q + (T)4.374664141464968e+00) * q + (T)2.938163982698783e+00) /
        (((((T)7.784695709041462e-03 * q + (T)3.224671290700398e-01) * q + (T)2.445134137142996e+00) * q +
          (T)3.754408661907416e+00) * q + (T)1));
  } else {
    const T q = t - (T)0.5, r = q * q;
    x = (((((((T)-3.969683028665376e+01 * r + (T)2.209460984245205e+02) * r + (T)-2.759285104469687e+02) * r +
            (T)1.383577518672690e+02) * r + (T)-3.066479806614716e+01) * r + (T)2.506628277459239e+00) * q /
        (((((((T)-5.447609879822406e+01 * r + (T)1.615858368580409e+02) * r + (T)-1.556989798598866e+02) * r +
            (T)6.680131188771972e+01) * r + (T)-1.328068155288572e+01) * r + (T)1)));
  }
  for (int it = 0; it < 3; ++it) {
    const T f = (T)0.5 * erfc(-x * (T)0.70710678118654752440) - t;
    const T dens = (T)0.39894228040143267794 * exp((T)-0.5 * x * x);
    if (!(dens > (T)0)) break;
    const T step = f / dens;
    x -= step / ((T)1 + (T)0.5 * x * step);
  }
  return upper ? -x : x;
}
/* round(x, decimals) as NumPy and PyTorch: 10^|d| (exact in T up to 10^10 in float, 10^22 in double), then
   rint(x * 10^d) / 10^d, or rint(x / 10^-d) * 10^-d for d < 0, each step in T */
CT_INL T ct_round_decimals(T x, T d) {
  const int k = (int)fmin(fabs(d), (T)400);
  T ten = (T)1;
  for (int i = 0; i < k; ++i) ten *= (T)10;
  return d < (T)0 ? rint(x / ten) * ten : rint(x * ten) / ten;
}
/* sin(x) / x; PyTorch's series below 1/2; 0 at +-inf */
CT_INL T ct_sph_j0(T x) {
  if (isinf(x)) return (T)0;
  if (fabs(x) < (T)0.5) {
    const T z = x * x;
    return (T)1 + z * ((T)(-1.0 / 6) + z * ((T)(1.0 / 120) + z * ((T)(-1.0 / 5040) + z * ((T)(1.0 / 362880) +
           z * ((T)(-1.0 / 39916800) + z * (T)(1.0 / 6227020800.0))))));
  }
  return sin(x) / x;
}
/* e^(x^2) erfc(x) as the CPU's: e^(x^2) with x^2 split exactly in two (fma) times erfc below the overflow of
   e^(x^2), the asymptotic series above it; 2 e^(x^2) - erfcx(-x) below 0 */
CT_INL T ct_exp_sq(T x) {
  const T h = x * x, l = isinf(h) ? (T)0 : fma(x, x, -h);
  return exp(h) * ((T)1 + l);
}
CT_INL T ct_erfcx_pos(T x) {
  if (x < (sizeof(T) == 8 ? (T)26 : (T)9)) return ct_exp_sq(x) * erfc(x);
  if (isinf(x)) return (T)0;
  const T w = (T)1 / ((T)2 * x * x);
  T s = (T)1, t = (T)1;
  for (int k = 1; k <= 8; ++k) { t *= -(T)(2 * k - 1) * w; s += t; }
  return s * (T)0.56418958354775628694807945156077259 / x;
}
CT_INL T ct_erfcx(T x) {
  if (isnan(x)) return x;
  if (x >= (T)0) return ct_erfcx_pos(x);
  return (T)2 * ct_exp_sq(x) - ct_erfcx_pos(-x);
}
/* log(ndtr(x)) as PyTorch: log(erfcx(-x/sqrt2) / 2) - x^2/2 below -1, log1p(-erfc(x/sqrt2) / 2) above */
CT_INL T ct_log_ndtr(T x) {
  const T t = x * (T)0.70710678118654752440;
  if (x < (T)-1) return log(ct_erfcx(-t) / (T)2) - t * t;
  return log1p(-erfc(t) / (T)2);
}
/* NumPy's npy_logaddexp and npy_logaddexp2: equal inputs (infinities included) give a + log 2 (a + 1) */
CT_INL T ct_logaddexp(T a, T b) {
  if (a == b) return a + (T)0.693147180559945309417232121458176568;
  const T t = a - b;
  return t > 0 ? a + log1p(exp(-t)) : t <= 0 ? b + log1p(exp(t)) : t;
}
CT_INL T ct_logaddexp2(T a, T b) {
  if (a == b) return a + (T)1;
  const T t = a - b;
  const T l2e = (T)1.442695040888963407359924681001892137;
  return t > 0 ? a + l2e * log1p(exp2(-t)) : t <= 0 ? b + l2e * log1p(exp2(t)) : t;
}
CT_INL T ct_clamp(T x, T lo, T hi) { T r = x < lo ? lo : x; return r > hi ? hi : r; }
/* The floor of a / b for |t| < CT_ILIM, t = a / b rounded. Rounding is
   monotonic and every integer there is a T, so floor(t) is the floor of the
   exact quotient, or one more when t rounded up onto an integer: then the
   remainder a - floor(t) b (its sign exact by fma) has the sign opposite
   to b's. floor(t) from a truncating conversion (PoCL's floor is a
   20-instruction sequence). Selects only: a branch or a loop keeps PoCL's
   work-group loop scalar. */
#ifdef CT_TF32
#define CT_TRUNC(t) (T)convert_int(t)
#else
#define CT_TRUNC(t) (T)convert_long(t)
#endif
CT_INL T ct_floor_quot(T a, T b, T t) {
  T q = CT_TRUNC(t);
  q = q > t ? q - 1 : q;
  const T r = fma(-q, b, a);
  q = r != 0 && signbit(r) != signbit(b) ? q - 1 : q;
  return q == 0 ? copysign((T)0, t) : q;
}
/* floor_div and mod where the quotient's floor is not known from t
   (finite a and b != 0 with |a / b| from CT_ILIM on): NumPy's npy_divmod,
   the remainder from fmod. The contiguous kernels call the _fast forms,
   and these only where ct_divmod_rare (a call to fmod keeps PoCL's loop
   scalar). */
CT_INL int ct_divmod_rare(T a, T b) { return isfinite(a) && isfinite(b) && b != 0 && !(fabs(a / b) < (T)CT_ILIM); }
CT_INL T ct_divmod_big(T a, T b, T* mod) {
  T m = fmod(a, b), div = (a - m) / b;
  if (m != 0 && (b < 0) != (m < 0)) m += b, div -= 1;
  *mod = m == 0 ? copysign((T)0, b) : m;
  if (div == 0) return copysign((T)0, a / b);
  const T f = floor(div);
  return div - f > (T)0.5 ? f + 1 : f;
}
CT_INL T ct_floordiv_fast(T a, T b) {
  const T t = a / b;
  /* b = 0: a / b; NaN, or a infinite: NaN; b infinite: 0 with the
     quotient's sign, or -1 when the signs differ */
  const T inf_b = (a == 0 || (a < 0) == (b < 0)) ? copysign((T)0, t) : (T)-1;
  const T other = (isnan(a) || isnan(b) || isinf(a)) ? (T)NAN : isinf(b) ? inf_b : t;
  return b == 0 ? t : (fabs(t) < (T)CT_ILIM && !isinf(b)) ? ct_floor_quot(a, b, t) : other;
}
CT_INL T ct_floordiv(T a, T b) {
  T m;
  return ct_divmod_rare(a, b) ? ct_divmod_big(a, b, &m) : ct_floordiv_fast(a, b);
}
/* a mod b with b's sign: a - floor(a / b) b, exact by fma. */
CT_INL T ct_mod_fast(T a, T b) {
  const T t = a / b, q = ct_floor_quot(a, b, fabs(t) < (T)CT_ILIM ? t : (T)0), m = fma(-q, b, a);
  const T inf_b = a == 0 ? copysign((T)0, b) : (a < 0) == (b < 0) ? a : b;
  return (isnan(a) || isnan(b) || isinf(a) || b == 0) ? (T)NAN : isinf(b) ? inf_b : m == 0 ? copysign((T)0, b) : m;
}
CT_INL T ct_mod(T a, T b) {
  T m;
  if (!ct_divmod_rare(a, b)) return ct_mod_fast(a, b);
  ct_divmod_big(a, b, &m);
  return m;
}
)CL";

const char kSignedHelpers[] = R"CL(
CT_INL T ct_clamp(T x, long lo, long hi) { long r = x < lo ? lo : (long)x; return (T)(r > hi ? hi : r); }
CT_INL T ct_floordiv(T a, T b) {
  if (b == 0) return 0;
  if (b == -1) return (T)(0 - (UT)a);
  T q = (T)(a / b);
  if ((T)(a % b) != 0 && ((a < 0) != (b < 0))) q -= 1;
  return q;
}
CT_INL T ct_mod(T a, T b) {
  if (b == 0 || b == -1) return 0;
  T m = (T)(a % b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}
/* gcd and lcm of the magnitudes (MIN's wraps back to MIN), wrapping as the integer ops do */
CT_INL UT ct_gcd_u(UT x, UT y) { while (y != 0) { const UT r = (UT)(x % y); x = y; y = r; } return x; }
CT_INL T ct_gcd(T a, T b) { return (T)ct_gcd_u(a < 0 ? (UT)(0 - (UT)a) : (UT)a, b < 0 ? (UT)(0 - (UT)b) : (UT)b); }
CT_INL T ct_lcm(T a, T b) {
  const UT x = a < 0 ? (UT)(0 - (UT)a) : (UT)a, y = b < 0 ? (UT)(0 - (UT)b) : (UT)b;
  return (x == 0 || y == 0) ? (T)0 : (T)(UT)(x / ct_gcd_u(x, y) * y);
}
CT_INL T ct_ipow(T a, T b) {
  if (b < 0) return (T)(a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0);
  UT r = 1, base = (UT)a;
  for (UT e = (UT)b; e; e >>= 1) {
    if (e & 1) r = (UT)(r * base);
    base = (UT)(base * base);
  }
  return (T)r;
}
)CL";

const char kUnsignedHelpers[] = R"CL(
CT_INL T ct_clamp(T x, ulong lo, ulong hi) { ulong r = x < lo ? lo : (ulong)x; return (T)(r > hi ? hi : r); }
CT_INL T ct_gcd(T x, T y) { while (y != 0) { const T r = (T)(x % y); x = y; y = r; } return x; }
CT_INL T ct_lcm(T a, T b) { return (a == 0 || b == 0) ? (T)0 : (T)(a / ct_gcd(a, b) * b); }
CT_INL T ct_ipow(T a, T b) {
  T r = 1, base = a;
  for (T e = b; e; e >>= 1) {
    if (e & 1) r = (T)(r * base);
    base = (T)(base * base);
  }
  return r;
}
)CL";

}  // namespace

const ElemRow* elem_row(int32_t op) {
  for (const ElemRow& r : kElem)
    if (r.op == op) return &r;
  return nullptr;
}
const ReduceRow* reduce_row(int32_t op) {
  for (const ReduceRow& r : kReduce)
    if (r.op == op) return &r;
  for (const ReduceRow& r : kSelect)
    if (r.op == op) return &r;
  return nullptr;
}
bool reduce_by_line(int32_t op) {
  const ReduceRow* r = reduce_row(op);
  return r && r->line[0];
}
const AlongRow* along_row(int32_t op) {
  for (const AlongRow& r : kAlong)
    if (r.op == op) return &r;
  return nullptr;
}
bool has_line_block(int32_t op) {
  const AlongRow* r = along_row(op);
  return r && r->out;
}
std::string special_functions(const char* compute, bool fp64) {
  // src/math/special.inc's text in double where the device has it (float32 and the narrow types then agree
  // with the CPU, which computes them in double), else in float; its lgamma is its own (OpenCL C leaves the
  // built-in's accuracy undefined). T is the program's compute type again afterwards. The functions are
  // CT_FN, not forced inline: a program has every op of its kind in several kernel forms, and one copy of
  // the Bessel functions each keeps its compile time (PoCL, NVRTC) from growing with them.
  return std::string("#undef T\n#define T ") + (fp64 ? "double" : "float") +
         "\n#define CT_SF CT_FN\n#define CT_SF_LGAMMA(x) ct_sf_lgamma(x)\n" + kSpecialSource +
         "#undef CT_SF\n#undef CT_SF_LGAMMA\n#undef T\n#define T " + compute + "\n";
}
const char* helpers(int cls) {
  switch (cls) {
    case kFloat: return kFloatHelpers;
    case kSigned: return kSignedHelpers;
    case kUnsigned: return kUnsignedHelpers;
    default: return "";
  }
}

}  // namespace ctgpu
