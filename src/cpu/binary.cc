// binary.cc — kernels of the broadcasting binary ops (category 2), one
// template per shape of loop over a functor, compiled once per SIMD target by
// Highway and chosen at run time.
//
// Each op has three kernels per dtype: both inputs contiguous, a a scalar
// (broadcast along the run), b a scalar. The strided engine in
// cpu_backend.cc picks one per run, so broadcasting along the innermost dim
// costs nothing. float32/float64 arithmetic is written with Highway and
// streams its stores when the engine says the output will not stay in cache
// (params[0] != 0); everything else is plain loops the compiler vectorises
// for the target; float16/bfloat16 run the float32 loop on widened blocks.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/binary.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/cache_control.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/half.h"
#include "cpu/kernels.h"
#include "cpu/simd-inl.h"
#include "math/scalar.h"
#include "math/special.h"

#ifndef CTENSOR_SRC_CPU_BINARY_ONCE_
#define CTENSOR_SRC_CPU_BINARY_ONCE_
namespace ct {
namespace cpu {
namespace bops {

// Integer arithmetic that wraps (two's complement) without C++ UB: the
// operation runs in an unsigned type at least as wide as int.
template <class T>
using Wide = typename std::conditional<sizeof(T) <= 4, uint32_t, uint64_t>::type;
template <class T> inline T wrap_add(T a, T b) { return (T)(Wide<T>)((Wide<T>)a + (Wide<T>)b); }
template <class T> inline T wrap_sub(T a, T b) { return (T)(Wide<T>)((Wide<T>)a - (Wide<T>)b); }
template <class T> inline T wrap_mul(T a, T b) { return (T)(Wide<T>)((Wide<T>)a * (Wide<T>)b); }

template <class T> constexpr bool kInt = std::is_integral<T>::value;
template <class T> inline bool is_neg(T v) {
  if constexpr (std::is_signed<T>::value) return v < 0; else return (void)v, false;
}

struct Add {
  template <class T> static T f(T a, T b) {
    if constexpr (kInt<T>) return wrap_add(a, b); else return a + b;
  }
};
struct Sub {
  template <class T> static T f(T a, T b) {
    if constexpr (kInt<T>) return wrap_sub(a, b); else return a - b;
  }
};
struct Mul {
  template <class T> static T f(T a, T b) {
    if constexpr (kInt<T>) return wrap_mul(a, b); else return a * b;
  }
};
// Integers divide as doubles (NumPy's true_divide gives float64).
struct Div {
  template <class T> static auto f(T a, T b) {
    if constexpr (kInt<T>) return (double)a / (double)b; else return a / b;
  }
};

// NumPy's npy_divmod for floats: a == floordiv * b + mod, mod has b's sign.
template <class T> inline T float_divmod(T a, T b, T* mod_out) {
  T mod = std::fmod(a, b);
  if (b == 0) {
    *mod_out = mod;
    return a / b;
  }
  T div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= T(1);
    }
  } else {
    mod = std::copysign(T(0), b);
  }
  T floordiv;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
  } else {
    floordiv = std::copysign(T(0), a / b);
  }
  *mod_out = mod;
  return floordiv;
}

struct FloorDiv {
  template <class T> static T f(T a, T b) {
    if constexpr (kInt<T>) {
      if (b == 0) return 0;
      if (std::is_signed<T>::value && b == T(-1)) return (T)(0 - (Wide<T>)a);  // MIN // -1 wraps
      T q = (T)(a / b);
      if ((T)(a % b) != 0 && (is_neg(a) != is_neg(b))) q = (T)(q - 1);
      return q;
    } else {
      T m;
      return float_divmod(a, b, &m);
    }
  }
};
struct Mod {
  template <class T> static T f(T a, T b) {
    if constexpr (kInt<T>) {
      if (b == 0) return 0;
      if (std::is_signed<T>::value && b == T(-1)) return 0;
      T r = (T)(a % b);
      if (r != 0 && (is_neg(r) != is_neg(b))) r = (T)(r + b);
      return r;
    } else {
      if (b == 0) return std::fmod(a, b);
      T m;
      float_divmod(a, b, &m);
      return m;
    }
  }
};
struct Pow {
  template <class T> static T f(T a, T b) {
    if constexpr (kInt<T>) {
      if (is_neg(b)) {
        if (a == 1) return 1;
        if (a == T(-1)) return (b & 1) ? T(-1) : T(1);
        return 0;
      }
      Wide<T> r = 1, base = (Wide<T>)a;
      for (uint64_t e = (uint64_t)b; e; e >>= 1) {
        if (e & 1) r = (Wide<T>)(r * base);
        base = (Wide<T>)(base * base);
      }
      return (T)r;
    } else {
      return std::pow(a, b);
    }
  }
};
// NaN-propagating: the NaN input itself is returned.
struct Maximum { template <class T> static T f(T a, T b) { return (a >= b || a != a) ? a : b; } };
struct Minimum { template <class T> static T f(T a, T b) { return (a <= b || a != a) ? a : b; } };
// NaN-ignoring: the other input when one is NaN.
struct FMax { template <class T> static T f(T a, T b) { return (a >= b || b != b) ? a : b; } };
struct FMin { template <class T> static T f(T a, T b) { return (a <= b || b != b) ? a : b; } };
struct Atan2 { template <class T> static T f(T a, T b) { return std::atan2(a, b); } };
struct Hypot { template <class T> static T f(T a, T b) { return std::hypot(a, b); } };
struct CopySign { template <class T> static T f(T a, T b) { return std::copysign(a, b); } };
// C's fmod (the sign of a); integers truncate, x fmod 0 = 0 (as mod), MIN fmod -1 = 0.
struct Fmod {
  template <class T> static T f(T a, T b) {
    if constexpr (kInt<T>) {
      if (b == 0 || (std::is_signed<T>::value && b == T(-1))) return 0;
      return (T)(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};
// NumPy's npy_logaddexp and npy_logaddexp2 (src/math/scalar.h: the scans share them).
struct LogAddExp {
  template <class T> static T f(T a, T b) { return math::logaddexp(a, b); }
};
struct LogAddExp2 {
  template <class T> static T f(T a, T b) { return math::logaddexp2(a, b); }
};
// PyTorch's xlogy: NaN b gives NaN; a == 0 gives 0; else a * log(b).
struct Xlogy {
  template <class T> static T f(T a, T b) {
    if (b != b) return b;
    if (a == 0) return 0;
    return a * std::log(b);
  }
};
// PyTorch's special.xlog1py: NaN b gives NaN; a == 0 gives 0; else a * log1p(b).
struct Xlog1py {
  template <class T> static T f(T a, T b) {
    if (b != b) return b;
    if (a == 0) return 0;
    return a * std::log1p(b);
  }
};
// PyTorch's prelu with the weight b (NaN a stays NaN, -0 stays -0).
struct Prelu { template <class T> static T f(T a, T b) { return a >= 0 ? a : (a != a ? a : b * a); } };
// relu's backward: a (the gradient) where b > 0, else 0; a NaN b passes a.
struct ReluBackward { template <class T> static T f(T a, T b) { return b <= 0 ? T(0) : a; } };
// a * 2^b: exact for integral b while the result is finite and normal.
struct Ldexp { template <class T> static T f(T a, T b) { return a * std::exp2(b); } };
// The two-argument special functions of src/math/special.inc in double,
// rounded once (float32 and the narrow types too).
template <int kKind> struct Chebyshev {
  template <class T> static T f(T x, T n) {
    const double xd = kKind >= 4 ? 2.0 * (double)x - 1.0 : (double)x;  // shifted: at 2x - 1
    return (T)ct::math::sf::ct_sf_chebyshev(xd, (double)n, kKind % 4);
  }
};
template <int kProb> struct Hermite {
  template <class T> static T f(T x, T n) { return (T)ct::math::sf::ct_sf_hermite((double)x, (double)n, kProb); }
};
struct Laguerre {
  template <class T> static T f(T x, T n) { return (T)ct::math::sf::ct_sf_laguerre((double)x, (double)n); }
};
struct Legendre {
  template <class T> static T f(T x, T n) { return (T)ct::math::sf::ct_sf_legendre((double)x, (double)n); }
};
struct Zeta {
  template <class T> static T f(T a, T b) { return (T)ct::math::sf::ct_sf_zeta((double)a, (double)b); }
};
// One compiled copy (not inlined into each loop): the float32 lanes' fallback
// (IgammaViaF64::s) then gives exactly the float64 op's value, where FMA
// contraction could otherwise round the two call sites differently.
HWY_NOINLINE double IgammaScalar(double a, double x, int upper) { return ct::math::sf::ct_sf_igamma(a, x, upper); }
template <int kUpper> struct Igamma {
  template <class T> static T f(T a, T b) { return (T)IgammaScalar((double)a, (double)b, kUpper); }
};
struct NextAfter { template <class T> static T f(T a, T b) { return std::nextafter(a, b); } };
// NumPy's heaviside: 0 below 0, 1 above, b at +-0, NaN for NaN a.
struct Heaviside {
  template <class T> static T f(T a, T b) { return a < 0 ? T(0) : a > 0 ? T(1) : a == 0 ? b : a; }
};
// gcd and lcm of the magnitudes (unsigned: MIN's magnitude wraps back to MIN), >= 0.
template <class T> using Mag = typename std::make_unsigned<T>::type;
template <class T> inline Mag<T> magnitude(T a) { return is_neg(a) ? (Mag<T>)(0u - (Mag<T>)a) : (Mag<T>)a; }
template <class U> inline U gcd_u(U a, U b) {
  while (b != 0) {
    const U r = (U)(a % b);
    a = b;
    b = r;
  }
  return a;
}
struct Gcd {
  template <class T> static T f(T a, T b) {
    if constexpr (kInt<T>) return (T)gcd_u(magnitude(a), magnitude(b)); else return (void)b, a;
  }
};
struct Lcm {
  template <class T> static T f(T a, T b) {
    if constexpr (kInt<T>) {
      const Mag<T> x = magnitude(a), y = magnitude(b);
      if (x == 0 || y == 0) return 0;
      return (T)(Mag<T>)(x / gcd_u(x, y) * y);  // wraps as the integer ops do
    } else {
      return (void)b, a;
    }
  }
};
struct BitAnd { template <class T> static T f(T a, T b) { return (T)(a & b); } };
struct BitOr { template <class T> static T f(T a, T b) { return (T)(a | b); } };
struct BitXor { template <class T> static T f(T a, T b) { return (T)(a ^ b); } };
struct LeftShift {
  template <class T> static T f(T a, T b) {
    if (is_neg(b) || (uint64_t)b >= 8 * sizeof(T)) return 0;
    return (T)(Wide<T>)((Wide<T>)a << b);
  }
};
struct RightShift {
  template <class T> static T f(T a, T b) {
    if (is_neg(b) || (uint64_t)b >= 8 * sizeof(T)) return is_neg(a) ? T(-1) : T(0);
    return (T)(a >> b);  // arithmetic for signed types (GCC/Clang, and C++20)
  }
};
struct LogicalAnd { template <class T> static uint8_t f(T a, T b) { return (a != 0) & (b != 0); } };
struct LogicalOr { template <class T> static uint8_t f(T a, T b) { return (a != 0) | (b != 0); } };
struct LogicalXor { template <class T> static uint8_t f(T a, T b) { return (a != 0) ^ (b != 0); } };
struct Equal { template <class T> static uint8_t f(T a, T b) { return a == b; } };
struct NotEqual { template <class T> static uint8_t f(T a, T b) { return a != b; } };
struct Less { template <class T> static uint8_t f(T a, T b) { return a < b; } };
struct LessEqual { template <class T> static uint8_t f(T a, T b) { return a <= b; } };
struct Greater { template <class T> static uint8_t f(T a, T b) { return a > b; } };
struct GreaterEqual { template <class T> static uint8_t f(T a, T b) { return a >= b; } };

}  // namespace bops
}  // namespace cpu
}  // namespace ct
#endif  // CTENSOR_SRC_CPU_BINARY_ONCE_

HWY_BEFORE_NAMESPACE();
namespace ct {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using namespace ::ct::cpu::bops;

// kMode: 0 both contiguous, 1 a is one element, 2 b is one element.
template <class Op, class T, int kMode>
void BinLoop(char* const* p, int64_t n, const double*) {
  using R = decltype(Op::template f<T>(T(), T()));
  R* o = reinterpret_cast<R*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  const T* b = reinterpret_cast<const T*>(p[2]);
  if (kMode == 1) {
    const T s = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = Op::template f<T>(s, b[i]);
  } else if (kMode == 2) {
    const T s = b[0];
    for (int64_t i = 0; i < n; ++i) o[i] = Op::template f<T>(a[i], s);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = Op::template f<T>(a[i], b[i]);
  }
}

// Vector forms of the float ops worth writing by hand (the memory-bound ones).
struct VAdd { template <class V> static V v(V a, V b) { return hn::Add(a, b); } using S = Add; };
struct VSub { template <class V> static V v(V a, V b) { return hn::Sub(a, b); } using S = Sub; };
struct VMul { template <class V> static V v(V a, V b) { return hn::Mul(a, b); } using S = Mul; };
struct VDiv { template <class V> static V v(V a, V b) { return hn::Div(a, b); } using S = Div; };
// max/min of two vectors. kNaNWins: a NaN input is the result (maximum,
// minimum; a's NaN lanes pass the test, b's fail it and give b); else the
// other input is (fmax, fmin; b's NaN lanes give a, a's fail and give b).
template <bool kMax, bool kNaNWins, class Scalar> struct VPick {
  template <class V> static V v(V a, V b) {
    return hn::IfThenElse(hn::Or(kMax ? a >= b : a <= b, hn::IsNaN(kNaNWins ? a : b)), a, b);
  }
  using S = Scalar;
};
using VMaximum = VPick<true, true, Maximum>;
using VMinimum = VPick<false, true, Minimum>;
using VFMax = VPick<true, false, FMax>;
using VFMin = VPick<false, false, FMin>;
struct VReluBackward {
  template <class V> static V v(V a, V b) { return hn::IfThenZeroElse(hn::Le(b, hn::Zero(hn::DFromV<V>())), a); }
  using S = ReluBackward;
};
struct VCopySign { template <class V> static V v(V a, V b) { return hn::CopySign(a, b); } using S = CopySign; };
// C's nextafter on the bits: a steps one unit in the last place toward b
// (its integer bits +1 where the magnitude grows, -1 where it shrinks); from
// +-0 the smallest subnormal with b's sign; b where a == b; a + b (NaN)
// where either is NaN.
struct VNextAfter {
  template <class V> static V v(V a, V b) {
    const hn::DFromV<V> d;
    const hn::RebindToSigned<decltype(d)> di;
    const V zero = hn::Zero(d);
    const auto bits = hn::BitCast(di, a), one = hn::Set(di, 1);
    const auto grows = hn::RebindMask(di, hn::Xor(b > a, a < zero));
    V r = hn::BitCast(d, hn::IfThenElse(grows, hn::Add(bits, one), hn::Sub(bits, one)));
    r = hn::IfThenElse(a == zero, hn::CopySign(hn::BitCast(d, one), b), r);
    r = hn::IfThenElse(a == b, b, r);
    return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), r);
  }
  using S = NextAfter;
};

// Integer forms (wrapping adds and bit operations: the same in every lane type).
struct VBitAnd { template <class V> static V v(V a, V b) { return hn::And(a, b); } using S = BitAnd; };
struct VBitOr { template <class V> static V v(V a, V b) { return hn::Or(a, b); } using S = BitOr; };
struct VBitXor { template <class V> static V v(V a, V b) { return hn::Xor(a, b); } using S = BitXor; };

// Shifts of 32- and 64-bit lanes with the scalar forms' rules: a count
// outside [0, bits) (a negative one is huge as unsigned) gives 0, or the sign
// for a signed right shift (the shift by bits - 1).
template <class V> V ShiftCount(V b, V& out_of_range) {
  const hn::DFromV<V> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const auto u = hn::BitCast(du, b);
  const auto top = hn::Set(du, (hn::TFromD<decltype(du)>)(8 * sizeof(hn::TFromD<decltype(d)>) - 1));
  out_of_range = hn::VecFromMask(d, hn::RebindMask(d, u > top));
  return hn::BitCast(d, hn::Min(u, top));
}
struct VLeftShift {
  template <class V> static V v(V a, V b) {
    V out;
    const V c = ShiftCount(b, out);
    return hn::AndNot(out, hn::Shl(a, c));
  }
  using S = LeftShift;
};
struct VRightShift {
  template <class V> static V v(V a, V b) {
    V out;
    const V c = ShiftCount(b, out);
    const V r = hn::Shr(a, c);  // arithmetic for signed lanes: the clamped count fills with the sign
    if constexpr (hwy::IsSigned<hn::TFromV<V>>()) return r; else return hn::AndNot(out, r);
  }
  using S = RightShift;
};

// float32/float64 (and the integer forms above): vector loop; streaming stores when params[0] != 0 (the
// engine's call: the whole output is too large to stay in cache).
template <class Op, class T, int kMode>
void BinVec(char* const* p, int64_t n, const double* prm) {
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  T* o = reinterpret_cast<T*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  const T* b = reinterpret_cast<const T*>(p[2]);
  const bool stream = prm && prm[0] != 0 && n >= 4 * N;
  int64_t i = 0;
  if (stream) {  // scalar head up to a vector-aligned output address
    const int64_t head = StreamHead(o, sizeof(T) * (uintptr_t)N, sizeof(T));
    for (; i < head; ++i) o[i] = Op::S::template f<T>(kMode == 1 ? a[0] : a[i], kMode == 2 ? b[0] : b[i]);
  }
  const auto sa = hn::Set(d, a[0]), sb = hn::Set(d, b[0]);
#define CT_BIN_LOAD_(ptr, s, scalar) ((scalar) ? (s) : hn::LoadU(d, (ptr) + i))
  if (stream) {
    for (; i + N <= n; i += N) {
      if (kMode != 1) PrefetchAhead(a + i);
      if (kMode != 2) PrefetchAhead(b + i);
      hn::Stream(Op::v(CT_BIN_LOAD_(a, sa, kMode == 1), CT_BIN_LOAD_(b, sb, kMode == 2)), d, o + i);
    }
    hwy::FlushStream();
  } else {
    for (; i + 2 * N <= n; i += 2 * N) {
      const auto r0 = Op::v(CT_BIN_LOAD_(a, sa, kMode == 1), CT_BIN_LOAD_(b, sb, kMode == 2));
      i += N;
      const auto r1 = Op::v(CT_BIN_LOAD_(a, sa, kMode == 1), CT_BIN_LOAD_(b, sb, kMode == 2));
      i -= N;
      hn::StoreU(r0, d, o + i);
      hn::StoreU(r1, d, o + i + N);
    }
    for (; i + N <= n; i += N)
      hn::StoreU(Op::v(CT_BIN_LOAD_(a, sa, kMode == 1), CT_BIN_LOAD_(b, sb, kMode == 2)), d, o + i);
  }
#undef CT_BIN_LOAD_
  for (; i < n; ++i) o[i] = Op::S::template f<T>(kMode == 1 ? a[0] : a[i], kMode == 2 ? b[0] : b[i]);
}

// pow and atan2 of float32: in float64 lanes (simd-inl.h).
template <class Op, int kMode>
void BinViaF64(char* const* p, int64_t n, const double*) {
  const float* b = reinterpret_cast<const float*>(p[2]);
  F32ViaF64<Op, kMode>(reinterpret_cast<float*>(p[0]), reinterpret_cast<const float*>(p[1]), b, (double)b[0], n);
}

// hypot of float32 as glibc's hypotf computes it: sqrt(a*a + b*b) in
// float64 (the squares are exact, the sum rounds once, no overflow or
// underflow is possible), rounded to float32: the same bits, at vector
// speed. Infinities and NaN (hypot(inf, NaN) is inf) take the scalar call.
struct HypotViaF64 {
  template <class D, class V> static HWY_INLINE auto ok(D d, V a, V b) -> decltype(hn::IsFinite(a)) {
    (void)d;
    return hn::And(hn::IsFinite(a), hn::IsFinite(b));
  }
  template <class D, class V> static HWY_INLINE V v(D d, V a, V b) {
    (void)d;
    return hn::Sqrt(hn::MulAdd(a, a, hn::Mul(b, b)));
  }
  static float s(float a, double b) { return std::hypot(a, (float)b); }
};

struct FloorDivViaF64 {
  template <class D, class V> static HWY_INLINE auto ok(D d, V a, V b) -> decltype(hn::IsFinite(a)) {
    return DivmodOk(d, a, b);
  }
  template <class D, class V> static HWY_INLINE V v(D d, V a, V b) { return DivmodF32<false>(d, a, b); }
  static float s(float a, double b) { return FloorDiv::f<float>(a, (float)b); }
};
struct ModViaF64 {
  template <class D, class V> static HWY_INLINE auto ok(D d, V a, V b) -> decltype(hn::IsFinite(a)) {
    return DivmodOk(d, a, b);
  }
  template <class D, class V> static HWY_INLINE V v(D d, V a, V b) { return DivmodF32<true>(d, a, b); }
  static float s(float a, double b) { return Mod::f<float>(a, (float)b); }
};

// fmod, logaddexp(2), xlogy and ldexp of float32 in float64 lanes, as pow
// and atan2: the float64 formula rounds to float32 within half an ulp and
// a hair. A vector with a lane outside ok (specials, zeros) takes the
// scalar code in double, rounded once: the same rule, so a result never
// depends on its neighbours. (ldexp is then a 2^b rounded once, as NumPy
// and C's ldexpf, where PyTorch's float32 a * 2^b overflows or flushes
// 2^b first: notes/SEMANTICS.md.)
// fmod: a - trunc(a / b) b is exact for |a / b| < 2^28 (DivmodOk, as mod).
struct FmodViaF64 {
  template <class D, class V> static HWY_INLINE auto ok(D d, V a, V b) -> decltype(hn::IsFinite(a)) {
    return DivmodOk(d, a, b);
  }
  template <class D, class V> static HWY_INLINE V v(D d, V a, V b) {
    (void)d;
    return hn::CopySign(hn::NegMulAdd(hn::Trunc(hn::Div(a, b)), b, a), a);  // a's sign, zeros included
  }
  static float s(float a, double b) { return (float)Fmod::f<double>(a, b); }
};
// max(a, b) + log1p(u) / k, u = e^(-|a - b| k) (k = 1, or ln 2 for base 2),
// for finite lanes: u = 2^x, x = -|a - b| (times log2 e for base e), by
// Exp2Lanes (1.4e-13 relative); log1p(u) = 2 atanh(s), s = u / (2 + u) in
// [0, 1/3] (one divide, no cancellation), atanh(s) / s a degree-7 relative
// least-squares fit in s^2 (6.8e-14). float32 needs ~2^-34 of the result:
// where max(a, b) < 0 nearly cancels log1p(u) (|r| < log1p(u) / 64), a
// vector takes Highway's float64 Exp and Log1p instead (1e-16, the double
// formula's own cancellation), as it did for every lane before: 2.9 -> 1.7
// ns per element (base e) and 3.1 -> 1.6 (base 2), one core, AVX-512.
template <bool kBase2> struct LogAddExpViaF64 {
  template <class D, class V> static HWY_INLINE auto ok(D d, V a, V b) -> decltype(hn::IsFinite(a)) {
    (void)d;
    return hn::And(hn::IsFinite(a), hn::IsFinite(b));
  }
  template <class D, class V> static HWY_INLINE V v(D d, V a, V b) {
    V x = hn::Neg(hn::Abs(hn::Sub(a, b)));
    if (!kBase2) x = hn::Mul(x, hn::Set(d, 1.4426950408889634074));
    const V u = Exp2Lanes(d, x);
    const V s = hn::Div(u, hn::Add(u, hn::Set(d, 2.0)));
    static constexpr double kAtanh[] = {0.10035867790205558, 0.07034685639808579, 0.09155127507036663,
                                        0.11107692116829368, 0.14285812322187816, 0.19999998626447904,
                                        0.33333333340638593, 0.9999999999999359};  // atanh(s) / s in s^2
    const V l = hn::Mul(hn::Mul(s, hn::Set(d, kBase2 ? 2.8853900817779268147 : 2.0)), Horner(d, hn::Mul(s, s), kAtanh));
    const V r = hn::Add(hn::Max(a, b), l);
    if (HWY_UNLIKELY(!hn::AllFalse(d, hn::Mul(hn::Abs(r), hn::Set(d, 64.0)) < l))) return Accurate(d, a, b);
    return r;
  }
  template <class D, class V> static HWY_INLINE V Accurate(D d, V a, V b) {
    constexpr double kLn2 = 0.693147180559945309417232121458176568;
    V t = hn::Neg(hn::Abs(hn::Sub(a, b)));
    if (kBase2) t = hn::Mul(t, hn::Set(d, kLn2));
    V l = hn::Log1p(d, hn::Exp(d, t));
    if (kBase2) l = hn::Mul(l, hn::Set(d, 1 / kLn2));
    return hn::Add(hn::Max(a, b), l);
  }
  static float s(float a, double b) {
    return (float)(kBase2 ? LogAddExp2::f<double>(a, b) : LogAddExp::f<double>(a, b));
  }
};
// a log(b) for finite a != 0 and finite b > 0.
struct XlogyViaF64 {
  template <class D, class V> static HWY_INLINE auto ok(D d, V a, V b) -> decltype(hn::IsFinite(a)) {
    return hn::And(hn::And(hn::IsFinite(a), a != hn::Zero(d)), hn::And(b > hn::Zero(d), hn::IsFinite(b)));
  }
  template <class D, class V> static HWY_INLINE V v(D d, V a, V b) { return hn::Mul(a, hn::Log(d, b)); }
  static float s(float a, double b) { return (float)Xlogy::f<double>(a, b); }
};
// a 2^b = a e^(b ln 2) for finite a and |b| <= 300 (beyond float32's range
// either way); for integral b the float64 result is within a few float64
// ulp of the exact float32 value a 2^b, so it rounds to it.
struct LdexpViaF64 {
  template <class D, class V> static HWY_INLINE auto ok(D d, V a, V b) -> decltype(hn::IsFinite(a)) {
    return hn::And(hn::IsFinite(a), hn::Abs(b) <= hn::Set(d, 300.0));
  }
  template <class D, class V> static HWY_INLINE V v(D d, V a, V b) {
    return hn::Mul(a, hn::Exp(d, hn::Mul(b, hn::Set(d, 0.693147180559945309417232121458176568))));
  }
  static float s(float a, double b) { return (float)Ldexp::f<double>(a, b); }
};

// The orthogonal polynomials of float32 x in float64 lanes, for degrees n
// (truncated, as the scalar code) from 0 to 16 and |x| <= 1e8 (so no value
// reaches the scalar code's rescaling threshold, 2^500): the scalar code's
// own three-term recurrence (src/math/special.inc), each step the same
// float64 operations in the same order, so the results are bit for bit the
// float64 ones rounded; lanes stop when their degree is reached and the
// loop ends when every lane has. Chebyshev's (kFam 0-3, shifted 4-7 at
// 2x - 1) only where the scalar code recurs too: degree up to 6 (T) or 8
// below |x| = 1 (it uses the trigonometric forms above), up to 16 from 1 on.
// kFam 8, 9: Hermite's H and He; 10: Laguerre's L; 11: Legendre's P. Other
// lanes (higher degrees, NaN, huge x, negative n) per element.
template <int kFam> struct PolyViaF64 {
  static constexpr double kMaxN = 16;
  template <class D, class V> static HWY_INLINE V arg(D d, V a) {
    return kFam >= 4 && kFam < 8 ? hn::Sub(hn::Add(a, a), hn::Set(d, 1.0)) : a;
  }
  template <class D, class V> static HWY_INLINE auto ok(D d, V a, V b) -> decltype(hn::IsFinite(a)) {
    const V n = hn::Trunc(b), x = arg(d, a);
    auto in = hn::And(n >= hn::Zero(d), n <= hn::Set(d, kMaxN));
    in = hn::And(in, hn::Abs(x) <= hn::Set(d, 1e8));
    if constexpr (kFam < 8)
      in = hn::And(in, hn::Or(n <= hn::Set(d, kFam % 4 == 0 ? 6.0 : 8.0), hn::Abs(x) >= hn::Set(d, 1.0)));
    return in;
  }
  template <class D, class V> static HWY_INLINE V v(D d, V a, V b) {
    const V n = hn::Trunc(b), x = arg(d, a), one = hn::Set(d, 1.0), x2 = hn::Add(x, x);
    V p = one, q;
    if constexpr (kFam < 8) q = kFam % 4 == 0 ? x : kFam % 4 == 1 ? x2 : kFam % 4 == 2 ? hn::Sub(x2, one) : hn::Add(x2, one);
    else if constexpr (kFam == 8) q = hn::Mul(hn::Set(d, 2.0), x);
    else if constexpr (kFam == 9) q = x;
    else if constexpr (kFam == 10) q = hn::Sub(one, x);
    else q = x;
    for (int j = 1; j < (int)kMaxN; ++j) {  // step j: degree j to j + 1
      const auto live = hn::Set(d, (double)j) < n;
      if (hn::AllFalse(d, live)) break;
      const V k = hn::Set(d, (double)j);
      V r;
      if constexpr (kFam < 8) r = hn::Sub(hn::Mul(x2, q), p);
      else if constexpr (kFam == 8) r = hn::Mul(hn::Set(d, 2.0), hn::Sub(hn::Mul(x, q), hn::Mul(k, p)));
      else if constexpr (kFam == 9) r = hn::Sub(hn::Mul(x, q), hn::Mul(k, p));
      else if constexpr (kFam == 10)
        r = hn::Div(hn::Sub(hn::Mul(hn::Sub(hn::Set(d, 2.0 * j + 1), x), q), hn::Mul(k, p)), hn::Set(d, j + 1.0));
      else
        r = hn::Div(hn::Sub(hn::Mul(hn::Mul(hn::Set(d, 2.0 * j + 1), x), q), hn::Mul(k, p)), hn::Set(d, j + 1.0));
      p = hn::IfThenElse(live, q, p);
      q = hn::IfThenElse(live, r, q);
    }
    auto unit = n == hn::Zero(d);
    if constexpr (kFam == 10) unit = hn::Or(unit, x == hn::Zero(d));
    return hn::IfThenElse(unit, one, q);
  }
  static float s(float a, double b) {
    if constexpr (kFam < 8) return Chebyshev<kFam>::template f<double>(a, b);
    else if constexpr (kFam < 10) return Hermite<kFam - 8>::template f<double>(a, b);
    else if constexpr (kFam == 10) return Laguerre::f<double>(a, b);
    else return Legendre::f<double>(a, b);
  }
};

// igamma (kUpper 0) and igammac (1) of float32 in float64 lanes, the scalar
// code's algorithm lane for lane: the prefactor x^a e^-x / Gamma(a) in
// logarithms (simd-inl.h's lgamma lanes), the series for P below x = a + 1,
// Lentz's continued fraction for Q above, each lane's sum frozen when its
// step is below an ulp and the loop ending when every lane's is (at most
// kMaxIter steps; lanes not converged by then are rechecked by the scalar
// code, as are a below 2^-10, where 1 - P loses the digits of Q, and a or x
// outside (0, 1e5]). The loops' divisions are RecipNewton's. Both differ
// from the scalar code only in rounding: within half a float32 ulp and a
// hair of the float64 op. Each step is a short dependent chain, and a vector
// runs until its slowest lane converges (a vector that mixes the two
// branches runs both), so at 2 M (a, x) in [0.5, 2) this is ~2x the scalar
// code, not 8x (four vectors interleaved measured no better on this host).
template <int kUpper> struct IgammaViaF64 {
  static constexpr bool kRechecks = true;
  static constexpr int kMaxIter = 500;
  template <class D, class V> static HWY_INLINE auto ok(D d, V a, V x) -> decltype(hn::IsFinite(a)) {
    const V big = hn::Set(d, 1e5);
    return hn::And(hn::And(a >= hn::Set(d, 0x1p-10), a <= big), hn::And(x > hn::Zero(d), x <= big));
  }
  template <class D, class V, class M> static HWY_INLINE V v(D d, V a, V x, M* ok) {
    constexpr double kEps = 1.1102230246251565e-16, kTiny = 1e-300;
    const V one = hn::Set(d, 1.0), eps = hn::Set(d, kEps), tiny = hn::Set(d, kTiny);
    const M live = *ok;
    const V pre = hn::Exp(d, hn::Max(hn::Sub(hn::MulSub(a, hn::Log(d, x), x), LgammaPosLanes(d, a)), hn::Set(d, -740.0)));
    const M below = x < hn::Add(a, one), ser = hn::And(live, below), cf = hn::AndNot(below, live);
    M bad = hn::FirstN(d, 0);
    V r = hn::Zero(d);
    if (!hn::AllFalse(d, ser)) {
      V ap = a, del = hn::Div(one, a), sum = del;
      M act = ser;
      for (int n = 0; n < kMaxIter && !hn::AllFalse(d, act); ++n) {
        ap = hn::Add(ap, one);
        del = hn::Mul(del, hn::Mul(x, RecipNewton(d, ap)));
        sum = hn::IfThenElse(act, hn::Add(sum, del), sum);
        act = hn::AndNot(hn::Abs(del) < hn::Mul(hn::Abs(sum), eps), act);
      }
      bad = act;  // not converged: the scalar code
      const V pv = hn::Mul(sum, pre);
      r = hn::IfThenElse(ser, kUpper ? hn::Sub(one, pv) : pv, r);
    }
    if (!hn::AllFalse(d, cf)) {
      auto guard = [&](V t) { return hn::IfThenElse(hn::Abs(t) < tiny, tiny, t); };
      V b = hn::Sub(hn::Add(x, one), a), c = hn::Set(d, 1.0 / kTiny), dd = hn::Div(one, b), h = dd;
      M act = cf;
      for (int i = 1; i < kMaxIter && !hn::AllFalse(d, act); ++i) {
        const V fi = hn::Set(d, (double)i);
        const V an = hn::Neg(hn::Mul(fi, hn::Sub(fi, a)));
        b = hn::Add(b, hn::Set(d, 2.0));
        dd = RecipNewton(d, guard(hn::MulAdd(an, dd, b)));
        c = guard(hn::MulAdd(an, RecipNewton(d, c), b));
        const V del = hn::Mul(dd, c);
        h = hn::IfThenElse(act, hn::Mul(h, del), h);
        act = hn::AndNot(hn::Abs(hn::Sub(del, one)) < eps, act);
      }
      bad = hn::Or(bad, act);
      const V qv = hn::Mul(pre, h);
      r = hn::IfThenElse(cf, kUpper ? qv : hn::Sub(one, qv), r);
    }
    *ok = hn::AndNot(bad, live);
    return r;
  }
  static float s(float a, double x) { return Igamma<kUpper>::template f<double>(a, x); }
};

template <class Op> constexpr bool kBoolOut =
    std::is_same<decltype(Op::template f<float>(0.f, 0.f)), uint8_t>::value;

// A scalar loop with plain stores: written out through Staged (streaming
// stores) when the engine says the output is large.
template <class Op, class T, int kMode> constexpr ContigKernel kStagedLoop =
    &Staged<&BinLoop<Op, T, kMode>, sizeof(decltype(Op::template f<T>(T(), T()))), kMode == 1 ? 0 : sizeof(T),
            kMode == 2 ? 0 : sizeof(T), -1, true>;
template <class Op> void RegFloat(KernelTable* t, int op) {
  t->op[op][CT_DT_FLOAT32] = &BinLoop<Op, float, 0>;
  t->op[op][CT_DT_FLOAT64] = &BinLoop<Op, double, 0>;
  t->bcast[op][CT_DT_FLOAT32][0] = &BinLoop<Op, float, 1>;
  t->bcast[op][CT_DT_FLOAT32][1] = &BinLoop<Op, float, 2>;
  t->bcast[op][CT_DT_FLOAT64][0] = &BinLoop<Op, double, 1>;
  t->bcast[op][CT_DT_FLOAT64][1] = &BinLoop<Op, double, 2>;
  if constexpr (kBoolOut<Op>) {
    // comparisons and logical ops: the compiler vectorises the loop, and
    // Staged streams its bool output, as the integer rows do (a large one
    // costs no read for ownership: 10 -> 9 bytes of traffic per float32
    // element, so ~10% at most; this host's memory noise hid it in the
    // same-run NumPy ratios, 1.04-2.03x after against 0.92-1.04x before).
    t->op[op][CT_DT_FLOAT32] = kStagedLoop<Op, float, 0>;
    t->op[op][CT_DT_FLOAT64] = kStagedLoop<Op, double, 0>;
    t->bcast[op][CT_DT_FLOAT32][0] = kStagedLoop<Op, float, 1>;
    t->bcast[op][CT_DT_FLOAT32][1] = kStagedLoop<Op, float, 2>;
    t->bcast[op][CT_DT_FLOAT64][0] = kStagedLoop<Op, double, 1>;
    t->bcast[op][CT_DT_FLOAT64][1] = kStagedLoop<Op, double, 2>;
  }
  // Narrow float types: the float32 loop on widened blocks, rounded once (no
  // scalar variants: the engine packs a broadcast operand of theirs).
  SetNarrow<&BinLoop<Op, float, 0>, 2, kBoolOut<Op>>(t->op[op]);
}
template <class VOp> void RegFloatVec(KernelTable* t, int op) {
  RegFloat<typename VOp::S>(t, op);
  t->op[op][CT_DT_FLOAT32] = &BinVec<VOp, float, 0>;
  t->op[op][CT_DT_FLOAT64] = &BinVec<VOp, double, 0>;
  t->bcast[op][CT_DT_FLOAT32][0] = &BinVec<VOp, float, 1>;
  t->bcast[op][CT_DT_FLOAT32][1] = &BinVec<VOp, float, 2>;
  t->bcast[op][CT_DT_FLOAT64][0] = &BinVec<VOp, double, 1>;
  t->bcast[op][CT_DT_FLOAT64][1] = &BinVec<VOp, double, 2>;
}
template <class VOp> void RegFloatViaF64(KernelTable* t, int op) {
  t->op[op][CT_DT_FLOAT32] = &BinViaF64<VOp, 0>;
  t->bcast[op][CT_DT_FLOAT32][0] = &BinViaF64<VOp, 1>;
  t->bcast[op][CT_DT_FLOAT32][1] = &BinViaF64<VOp, 2>;
  SetNarrow<&BinViaF64<VOp, 0>, 2>(t->op[op]);
}
template <class Op, class T> void RegOne(KernelTable* t, int op, int dt) {
  t->op[op][dt] = kStagedLoop<Op, T, 0>;
  t->bcast[op][dt][0] = kStagedLoop<Op, T, 1>;
  t->bcast[op][dt][1] = kStagedLoop<Op, T, 2>;
}
template <class VOp, class T> void RegOneVec(KernelTable* t, int op, int dt) {
  t->op[op][dt] = &BinVec<VOp, T, 0>;
  t->bcast[op][dt][0] = &BinVec<VOp, T, 1>;
  t->bcast[op][dt][1] = &BinVec<VOp, T, 2>;
}
// Every integer dtype: Op's scalar loop, or VOp's vector loop (streaming
// stores included) for lanes of at least kVecBytes bytes (0: none).
template <class Op, class VOp, size_t kVecBytes> void RegInts(KernelTable* t, int op) {
  auto one = [&](auto lane, int dt) {
    using T = decltype(lane);
    if constexpr (kVecBytes != 0 && sizeof(T) >= kVecBytes) RegOneVec<VOp, T>(t, op, dt);
    else RegOne<Op, T>(t, op, dt);
  };
  ForEachInt(one);
}
template <class Op> void RegInt(KernelTable* t, int op) { RegInts<Op, void, 0>(t, op); }
// The memory-bound integer ops, where a scalar loop's plain stores cost the
// output's read-for-ownership: every lane width in vectors.
template <class VOp> void RegIntVec(KernelTable* t, int op) { RegInts<typename VOp::S, VOp, 1>(t, op); }
// Shifts: 32- and 64-bit lanes in vectors (AVX2 has no variable shifts of 8
// or 16 bits).
template <class VOp> void RegIntVecWide(KernelTable* t, int op) { RegInts<typename VOp::S, VOp, 4>(t, op); }
// bool is stored as uint8 0/1; BoolOp is the op's meaning on 0/1 values.
template <class BoolOp> void RegBool(KernelTable* t, int op) { RegOne<BoolOp, uint8_t>(t, op, CT_DT_BOOL); }
template <class Op> void RegAll(KernelTable* t, int op) {
  RegFloat<Op>(t, op);
  RegInt<Op>(t, op);
  RegBool<Op>(t, op);
}

void FillBinaryKernels(KernelTable* t) {
  RegFloatVec<VAdd>(t, CT_OP_ADD);           RegIntVec<VAdd>(t, CT_OP_ADD);       RegBool<BitOr>(t, CT_OP_ADD);
  RegFloatVec<VSub>(t, CT_OP_SUB);           RegIntVec<VSub>(t, CT_OP_SUB);
  RegFloatVec<VMul>(t, CT_OP_MUL);           RegInt<Mul>(t, CT_OP_MUL);       RegBool<BitAnd>(t, CT_OP_MUL);
  RegFloatVec<VDiv>(t, CT_OP_DIV);           RegInt<Div>(t, CT_OP_DIV);       RegBool<Div>(t, CT_OP_DIV);
  RegFloat<FloorDiv>(t, CT_OP_FLOOR_DIV);    RegInt<FloorDiv>(t, CT_OP_FLOOR_DIV); RegFloatViaF64<FloorDivViaF64>(t, CT_OP_FLOOR_DIV);
  RegFloat<Mod>(t, CT_OP_MOD);               RegInt<Mod>(t, CT_OP_MOD);       RegFloatViaF64<ModViaF64>(t, CT_OP_MOD);
  RegFloat<Pow>(t, CT_OP_POW);               RegInt<Pow>(t, CT_OP_POW);       RegFloatViaF64<PowViaF64>(t, CT_OP_POW);
  RegFloatVec<VMaximum>(t, CT_OP_MAXIMUM);   RegInt<Maximum>(t, CT_OP_MAXIMUM); RegBool<BitOr>(t, CT_OP_MAXIMUM);
  RegFloatVec<VMinimum>(t, CT_OP_MINIMUM);   RegInt<Minimum>(t, CT_OP_MINIMUM); RegBool<BitAnd>(t, CT_OP_MINIMUM);
  RegFloatVec<VFMax>(t, CT_OP_FMAX);             RegInt<Maximum>(t, CT_OP_FMAX);  RegBool<BitOr>(t, CT_OP_FMAX);
  RegFloatVec<VFMin>(t, CT_OP_FMIN);             RegInt<Minimum>(t, CT_OP_FMIN);  RegBool<BitAnd>(t, CT_OP_FMIN);
  RegFloat<Atan2>(t, CT_OP_ATAN2);           RegFloatViaF64<Atan2ViaF64>(t, CT_OP_ATAN2);
  RegFloat<Hypot>(t, CT_OP_HYPOT);           RegFloatViaF64<HypotViaF64>(t, CT_OP_HYPOT);
  RegFloatVec<VCopySign>(t, CT_OP_COPYSIGN);
  RegFloat<Fmod>(t, CT_OP_FMOD);             RegInt<Fmod>(t, CT_OP_FMOD); RegFloatViaF64<FmodViaF64>(t, CT_OP_FMOD);
  RegFloat<LogAddExp>(t, CT_OP_LOGADDEXP);   RegFloatViaF64<LogAddExpViaF64<false>>(t, CT_OP_LOGADDEXP);
  RegFloat<LogAddExp2>(t, CT_OP_LOGADDEXP2); RegFloatViaF64<LogAddExpViaF64<true>>(t, CT_OP_LOGADDEXP2);
  RegFloat<Xlogy>(t, CT_OP_XLOGY);           RegFloatViaF64<XlogyViaF64>(t, CT_OP_XLOGY);
  RegFloat<Xlog1py>(t, CT_OP_XLOG1PY);
  RegFloatVec<VNextAfter>(t, CT_OP_NEXTAFTER);
  for (int dt : {CT_DT_FLOAT16, CT_DT_BFLOAT16, CT_DT_FLOAT8_E4M3FN, CT_DT_FLOAT8_E5M2, CT_DT_FLOAT8_E4M3FNUZ,
                 CT_DT_FLOAT8_E5M2FNUZ})
    t->op[CT_OP_NEXTAFTER][dt] = nullptr;  // a step of float32 is not one of theirs: float32 and float64 only
  RegFloat<Chebyshev<0>>(t, CT_OP_CHEBYSHEV_POLYNOMIAL_T);
  RegFloat<Chebyshev<1>>(t, CT_OP_CHEBYSHEV_POLYNOMIAL_U);
  RegFloat<Chebyshev<2>>(t, CT_OP_CHEBYSHEV_POLYNOMIAL_V);
  RegFloat<Chebyshev<3>>(t, CT_OP_CHEBYSHEV_POLYNOMIAL_W);
  RegFloat<Chebyshev<4>>(t, CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_T);
  RegFloat<Chebyshev<5>>(t, CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_U);
  RegFloat<Chebyshev<6>>(t, CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_V);
  RegFloat<Chebyshev<7>>(t, CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_W);
  RegFloat<Hermite<0>>(t, CT_OP_HERMITE_POLYNOMIAL_H);
  RegFloat<Hermite<1>>(t, CT_OP_HERMITE_POLYNOMIAL_HE);
  RegFloat<Laguerre>(t, CT_OP_LAGUERRE_POLYNOMIAL_L);
  RegFloat<Legendre>(t, CT_OP_LEGENDRE_POLYNOMIAL_P);
  RegFloatViaF64<PolyViaF64<0>>(t, CT_OP_CHEBYSHEV_POLYNOMIAL_T);
  RegFloatViaF64<PolyViaF64<1>>(t, CT_OP_CHEBYSHEV_POLYNOMIAL_U);
  RegFloatViaF64<PolyViaF64<2>>(t, CT_OP_CHEBYSHEV_POLYNOMIAL_V);
  RegFloatViaF64<PolyViaF64<3>>(t, CT_OP_CHEBYSHEV_POLYNOMIAL_W);
  RegFloatViaF64<PolyViaF64<4>>(t, CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_T);
  RegFloatViaF64<PolyViaF64<5>>(t, CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_U);
  RegFloatViaF64<PolyViaF64<6>>(t, CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_V);
  RegFloatViaF64<PolyViaF64<7>>(t, CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_W);
  RegFloatViaF64<PolyViaF64<8>>(t, CT_OP_HERMITE_POLYNOMIAL_H);
  RegFloatViaF64<PolyViaF64<9>>(t, CT_OP_HERMITE_POLYNOMIAL_HE);
  RegFloatViaF64<PolyViaF64<10>>(t, CT_OP_LAGUERRE_POLYNOMIAL_L);
  RegFloatViaF64<PolyViaF64<11>>(t, CT_OP_LEGENDRE_POLYNOMIAL_P);
  RegFloat<Zeta>(t, CT_OP_ZETA);
  RegFloat<Igamma<0>>(t, CT_OP_IGAMMA);
  RegFloat<Igamma<1>>(t, CT_OP_IGAMMAC);
  RegFloatViaF64<IgammaViaF64<0>>(t, CT_OP_IGAMMA);
  RegFloatViaF64<IgammaViaF64<1>>(t, CT_OP_IGAMMAC);
  RegFloat<Heaviside>(t, CT_OP_HEAVISIDE);
  RegFloat<Prelu>(t, CT_OP_PRELU);
  RegFloatVec<VReluBackward>(t, CT_OP_RELU_BACKWARD);
  RegFloat<Ldexp>(t, CT_OP_LDEXP);           RegFloatViaF64<LdexpViaF64>(t, CT_OP_LDEXP);
  RegInt<Gcd>(t, CT_OP_GCD);
  RegInt<Lcm>(t, CT_OP_LCM);
  RegIntVec<VBitAnd>(t, CT_OP_BITWISE_AND); RegBool<BitAnd>(t, CT_OP_BITWISE_AND);
  RegIntVec<VBitOr>(t, CT_OP_BITWISE_OR);   RegBool<BitOr>(t, CT_OP_BITWISE_OR);
  RegIntVec<VBitXor>(t, CT_OP_BITWISE_XOR); RegBool<BitXor>(t, CT_OP_BITWISE_XOR);
  RegIntVecWide<VLeftShift>(t, CT_OP_LEFT_SHIFT);
  RegIntVecWide<VRightShift>(t, CT_OP_RIGHT_SHIFT);
  RegAll<LogicalAnd>(t, CT_OP_LOGICAL_AND);
  RegAll<LogicalOr>(t, CT_OP_LOGICAL_OR);
  RegAll<LogicalXor>(t, CT_OP_LOGICAL_XOR);
  RegAll<Equal>(t, CT_OP_EQUAL);
  RegAll<NotEqual>(t, CT_OP_NOT_EQUAL);
  RegAll<Less>(t, CT_OP_LESS);
  RegAll<LessEqual>(t, CT_OP_LESS_EQUAL);
  RegAll<Greater>(t, CT_OP_GREATER);
  RegAll<GreaterEqual>(t, CT_OP_GREATER_EQUAL);
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace ct
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ct {
namespace cpu {
HWY_EXPORT(FillBinaryKernels);
void fill_binary_kernels(KernelTable* table) { HWY_DYNAMIC_DISPATCH(FillBinaryKernels)(table); }
}  // namespace cpu
}  // namespace ct
#endif
