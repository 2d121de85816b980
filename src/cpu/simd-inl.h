// simd-inl.h — per-target SIMD helpers shared by the CPU kernel files
// (elementwise.cc, binary.cc, reduce.cc): block sizes, masked tails,
// streaming-store threshold, the float16/bfloat16/float8 <-> float32 codecs, and
// float32 pow and atan2 computed in float64 lanes.
// Highway's "-inl.h" convention: included once per target by foreach_target.
#if defined(CTENSOR_SRC_CPU_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CTENSOR_SRC_CPU_SIMD_INL_H_
#undef CTENSOR_SRC_CPU_SIMD_INL_H_
#else
#define CTENSOR_SRC_CPU_SIMD_INL_H_
#endif

#include <hwy/cache_control.h>
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu/half.h"
#include "cpu/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace ct {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Block size (elements) for widening half types and for scalar fallbacks.
constexpr int64_t kBlock = 256;


// On AVX2 and AVX-512, masked loads and stores of 4- and 8-byte lanes are
// single instructions that never touch memory past the mask (no fault, no
// race), so tails need no bounce buffer (which costs a store-forwarding stall).
#undef CT_MASKED_TAIL
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
#define CT_MASKED_TAIL 1
#else
#define CT_MASKED_TAIL 0
#endif

// Runs at least this large (one thread's chunk: the engine splits big ops
// into ~8 chunks per thread) are written with streaming stores: an op that
// large does not stay in cache anyway, and bypassing it saves the
// read-for-ownership (12 -> 8 bytes of traffic per float copy).
constexpr int64_t kStreamBytes = int64_t(2) << 20;

// Streaming loops that compute more than they read also prefetch their
// inputs this far ahead: on the 2-core AVX-512 hosts of this kind the
// hardware prefetchers fell behind such loops (log of 1e8 float32 on two
// threads: 0.78 ns/element, 0.27 with this prefetch; tanh 0.68 -> 0.26, erf
// 1.19 -> 0.40), while memory-bound ones (neg) were unchanged by it.
constexpr int64_t kPrefetchBytes = 4096;
template <class T> HWY_INLINE void PrefetchAhead(const T* p) {
  hwy::Prefetch(reinterpret_cast<const char*>(p) + kPrefetchBytes);  // a hint: past the end it never faults
}
// Prefetches the cache lines of [p, p + bytes) (hints: they never fault).
HWY_INLINE void PrefetchLines(const char* p, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += 64) hwy::Prefetch(p + o);
}

// Elements of `esize` bytes before p reaches a multiple of `vbytes` (one
// vector): the head written with plain stores before the streaming ones,
// which need aligned addresses.
inline int64_t StreamHead(const void* p, uintptr_t vbytes, uintptr_t esize) {
  return (int64_t)(((vbytes - reinterpret_cast<uintptr_t>(p) % vbytes) % vbytes) / esize);
}

// f(lane, dt) for each integer dtype: a value of its lane type and its
// CT_DT_* index (kernel tables fill their integer rows with it).
template <class F> void ForEachInt(F&& f) {
  f(int8_t(), CT_DT_INT8);
  f(int16_t(), CT_DT_INT16);
  f(int32_t(), CT_DT_INT32);
  f(int64_t(), CT_DT_INT64);
  f(uint8_t(), CT_DT_UINT8);
  f(uint16_t(), CT_DT_UINT16);
  f(uint32_t(), CT_DT_UINT32);
  f(uint64_t(), CT_DT_UINT64);
}

// Staged<K, ...> runs a kernel K whose loop uses plain stores (integer and
// bool ops, casts, where, the float16 family) over a large output through an
// aligned stack block that stays in L1, then copies the block out with
// streaming stores: whatever K's loop, an output that will not stay in cache
// costs no read-for-ownership (12 -> 8 bytes of traffic per 4-byte map).
// kOut, kIn0..2: element bytes of the output and of each input (0: one
// element broadcast along the run, which stays put; -1: no such input).
// kEngineSays: stream when the engine's params[0] says the whole output is
// too large for the cache (binary kernels); else when this run alone is at
// least kStreamBytes (the unary kernels' rule). Out may be an input (in
// place): each block is read before it is written.
// K runs on pieces of kSub elements, each piece's inputs prefetched
// kStagedPrefetch bytes ahead first: the hardware prefetchers alone fell
// behind these loops on the 2-core AVX-512 hosts (`ctensor bench --quick`,
// 98.6 M elements, the two libraries alternated: isnan of float32 22.4-24.2
// -> 18.9-21.0 ms, bitwise_not of int32 31.2-31.4 -> 24.0-25.7, where
// 44.7-45.4 -> 40.4-41.0).
constexpr int64_t kStageBytes = 4096;
constexpr int64_t kStagedPrefetch = 2048;
template <int kIn, int64_t kSub> HWY_INLINE void StagedPrefetch(const char* q) {
  if (kIn <= 0) return;  // absent, or broadcast (one element)
  PrefetchLines(q + kStagedPrefetch, kSub * kIn);
}
template <ContigKernel K, int kOut, int kIn0, int kIn1 = -1, int kIn2 = -1, bool kEngineSays = false>
void Staged(char* const* p, int64_t n, const double* prm) {
  const bool big = kEngineSays ? (prm && prm[0] != 0 && n * kOut >= 4 * kStageBytes) : n * kOut >= kStreamBytes;
  if (!big || reinterpret_cast<uintptr_t>(p[0]) % kOut != 0) {
    K(p, n, prm);
    return;
  }
  constexpr int64_t kBlk = kStageBytes / kOut;
  constexpr int64_t kSub = std::min<int64_t>(kBlk, 256);
  // K through an opaque pointer: called, not inlined into the piece loop
  // (GCC 12 stopped with an internal error inlining the bfloat16 ViaF32
  // kernels there).
  ContigKernel k = K;
  asm("" : "+r"(k));
  const hn::ScalableTag<uint8_t> d8;
  const int64_t VB = (int64_t)hn::Lanes(d8);
  HWY_ALIGN uint8_t buf[kStageBytes];
  char* q[4] = {p[0], p[1], kIn1 >= 0 ? p[2] : nullptr, kIn2 >= 0 ? p[3] : nullptr};
  const auto advance = [&q](int64_t m) {
    q[0] += m * kOut;
    q[1] += m * kIn0;
    if (kIn1 > 0) q[2] += m * kIn1;
    if (kIn2 > 0) q[3] += m * kIn2;
  };
  int64_t i = std::min<int64_t>(n, StreamHead(q[0], (uintptr_t)VB, kOut));
  if (i) {
    K(q, i, prm);
    advance(i);
  }
  for (; n - i >= kBlk; i += kBlk) {
    for (int64_t j = 0; j < kBlk; j += kSub) {  // K a piece at a time, its inputs prefetched ahead
      char* r[4] = {reinterpret_cast<char*>(buf) + j * kOut, q[1] + j * kIn0, q[2] + j * std::max(kIn1, 0),
                    q[3] + j * std::max(kIn2, 0)};
      StagedPrefetch<kIn0, kSub>(r[1]);
      StagedPrefetch<kIn1, kSub>(r[2]);
      StagedPrefetch<kIn2, kSub>(r[3]);
      k(r, kSub, prm);
    }
    uint8_t* y = reinterpret_cast<uint8_t*>(q[0]);
    for (int64_t j = 0; j < kStageBytes; j += VB) hn::Stream(hn::Load(d8, buf + j), d8, y + j);
    advance(kBlk);
  }
  hwy::FlushStream();
  if (i < n) K(q, n - i, prm);
}

// ---- half types: widen to float32 in blocks, run the float32 kernel -------
// A codec: Bits, the storage of one element, and decode/encode of n
// elements to and from float32 (encode rounds to nearest even).
// Highway's conversions are the hardware's (F16C on x86 from AVX2 on, the
// FPU on AArch64) or an emulation that maps inf and NaN to finite values,
// drops the sign of zeros and truncates (x86 SSE4 and below, EMU128: found
// by the kernels_on_SSE4 ctest); without hardware every element takes the
// exact scalar conversions instead.
#undef CT_VECTOR_F16
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)) || HWY_ARCH_ARM_A64
#define CT_VECTOR_F16 1
#else
#define CT_VECTOR_F16 0
#endif
struct F16Codec {
  using Bits = uint16_t;
  static void decode(const uint16_t* src, float* dst, int64_t n) {
    const hn::ScalableTag<float> df;
    const hn::Rebind<hwy::float16_t, decltype(df)> dh;
    const int64_t N = CT_VECTOR_F16 ? (int64_t)hn::Lanes(df) : n + 1;
    int64_t i = 0;
    for (; i + N <= n; i += N)
      hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(src) + i)), df, dst + i);
    for (; i < n; ++i) dst[i] = f16_to_float(src[i]);
  }
  static void encode(const float* src, uint16_t* dst, int64_t n) {
    const hn::ScalableTag<float> df;
    const hn::Rebind<hwy::float16_t, decltype(df)> dh;
    const int64_t N = CT_VECTOR_F16 ? (int64_t)hn::Lanes(df) : n + 1;
    int64_t i = 0;
    if (CT_VECTOR_F16 && n * 2 >= kStreamBytes) {  // a large cast: streaming stores from an aligned address, as UnaryF
      const uintptr_t vbytes = 2 * (uintptr_t)N;
      const int64_t head = std::min<int64_t>(n, StreamHead(dst, vbytes, 2));
      for (; i < head; ++i) dst[i] = double_to_f16(src[i]);
      if (reinterpret_cast<uintptr_t>(dst + i) % vbytes == 0) {  // never, for dst at an odd address: plain stores then
        for (; i + N <= n; i += N)
          hn::Stream(hn::DemoteTo(dh, hn::LoadU(df, src + i)), dh, reinterpret_cast<hwy::float16_t*>(dst) + i);
        hwy::FlushStream();
      }
    }
    for (; i + N <= n; i += N)
      hn::StoreU(hn::DemoteTo(dh, hn::LoadU(df, src + i)), dh, reinterpret_cast<hwy::float16_t*>(dst) + i);
    for (; i < n; ++i) dst[i] = double_to_f16(src[i]);
  }
};
struct BF16Codec {
  using Bits = uint16_t;
  static void decode(const uint16_t* src, float* dst, int64_t n) {
    const hn::ScalableTag<float> df;
    const hn::RebindToUnsigned<decltype(df)> du;
    const hn::Rebind<uint16_t, decltype(df)> d16;
    const int64_t N = (int64_t)hn::Lanes(df);
    int64_t i = 0;
    for (; i + N <= n; i += N)
      hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(d16, src + i)))), df, dst + i);
    for (; i < n; ++i) dst[i] = bf16_to_float(src[i]);
  }
  static void encode(const float* src, uint16_t* dst, int64_t n) {
    const hn::ScalableTag<float> df;
    const hn::RebindToUnsigned<decltype(df)> du;
    const hn::RebindToSigned<decltype(df)> di;
    const hn::Rebind<uint16_t, decltype(df)> d16;
    const int64_t N = (int64_t)hn::Lanes(df);
    int64_t i = 0;
    for (; i + N <= n; i += N) {
      const auto v = hn::LoadU(df, src + i);
      const auto u = hn::BitCast(du, v);
      const auto rounded = hn::ShiftRight<16>(u + hn::Set(du, 0x7fffu) + (hn::ShiftRight<16>(u) & hn::Set(du, 1u)));
      const auto quiet = hn::ShiftRight<16>(u) | hn::Set(du, 0x40u);
      const auto bits = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), quiet, rounded);
      hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, bits)), d16, dst + i);
    }
    for (; i < n; ++i) dst[i] = float_to_bf16(src[i]);
  }
};

// float8 format F (float8.h): decoded by its table, encoded by the exact
// rounding (ct_cast's overflow rule: no saturation).
template <int F> struct F8Codec {
  using Bits = uint8_t;
  static void decode(const uint8_t* src, float* dst, int64_t n) {
    const float* t = kF8Table.v[F];
    for (int64_t i = 0; i < n; ++i) dst[i] = t[src[i]];
  }
  static void encode(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = f8_from_double<F>(src[i], false);
  }
};

// Runs the float32 kernel K on widened blocks of NIN half-type inputs; the
// output is a half type too unless kBoolOut (predicates write bool directly).
template <ContigKernel K, class Codec, int NIN, bool kBoolOut = false>
void ViaF32(char* const* p, int64_t n, const double* prm) {
  HWY_ALIGN float in[NIN][kBlock];
  HWY_ALIGN float out[kBlock];
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = n - i < kBlock ? n - i : kBlock;
    char* q[4];
    for (int k = 0; k < NIN; ++k) {
      Codec::decode(reinterpret_cast<const typename Codec::Bits*>(p[1 + k]) + i, in[k], m);
      q[1 + k] = reinterpret_cast<char*>(in[k]);
    }
    if (kBoolOut) {
      q[0] = p[0] + i;
      K(q, m, prm);
    } else {
      q[0] = reinterpret_cast<char*>(out);
      K(q, m, prm);
      Codec::encode(out, reinterpret_cast<typename Codec::Bits*>(p[0]) + i, m);
    }
  }
}

// Fills the narrow float dtypes' entries of a kernel row (by CT_DT_* index)
// with the float32 kernel K run through each dtype's codec, written out
// through Staged (NIN == 2: a binary kernel, which the engine's params[0]
// tells to stream).
template <ContigKernel K, class Codec, int NIN, bool kBoolOut>
constexpr ContigKernel kNarrow = &Staged<&ViaF32<K, Codec, NIN, kBoolOut>, kBoolOut ? 1 : (int)sizeof(typename Codec::Bits),
                                         (int)sizeof(typename Codec::Bits), NIN >= 2 ? (int)sizeof(typename Codec::Bits) : -1,
                                         NIN >= 3 ? (int)sizeof(typename Codec::Bits) : -1, NIN == 2>;
template <ContigKernel K, int NIN, bool kBoolOut = false> void SetNarrow(ContigKernel* row) {
  row[CT_DT_FLOAT16] = kNarrow<K, F16Codec, NIN, kBoolOut>;
  row[CT_DT_BFLOAT16] = kNarrow<K, BF16Codec, NIN, kBoolOut>;
  row[CT_DT_FLOAT8_E4M3FN] = kNarrow<K, F8Codec<0>, NIN, kBoolOut>;
  row[CT_DT_FLOAT8_E5M2] = kNarrow<K, F8Codec<1>, NIN, kBoolOut>;
  row[CT_DT_FLOAT8_E4M3FNUZ] = kNarrow<K, F8Codec<2>, NIN, kBoolOut>;
  row[CT_DT_FLOAT8_E5M2FNUZ] = kNarrow<K, F8Codec<3>, NIN, kBoolOut>;
}

// ---- float64-lane helpers of the special functions ---------------------------
// Horner's rule in two interleaved chains (even and odd powers, in x^2):
// half the dependent latency of simd-inl.h's Horner for the long
// polynomials below, the same value to rounding.
template <class D, class V, class C, size_t K> HWY_INLINE V Horner2(D d, V x, const C (&c)[K]) {
  static_assert(K >= 3, "three coefficients or more");
  using T = hn::TFromD<D>;
  const V x2 = hn::Mul(x, x);
  V a = hn::Set(d, T(c[0])), b = hn::Set(d, T(c[1]));
  size_t i = 2;
  for (; i + 1 < K; i += 2) a = hn::MulAdd(a, x2, hn::Set(d, T(c[i]))), b = hn::MulAdd(b, x2, hn::Set(d, T(c[i + 1])));
  const V r = hn::MulAdd(a, x, b);
  return i < K ? hn::MulAdd(r, x, hn::Set(d, T(c[K - 1]))) : r;
}

// Horner's rule in four interleaved chains (in x^4, combined at the end):
// a quarter of the dependent latency, for the long polynomials of loops
// that are otherwise bound by it.
template <class D, class V, class C, size_t K> HWY_INLINE V Horner4(D d, V x, const C (&c)[K]) {
  static_assert(K >= 4, "four coefficients or more");
  using T = hn::TFromD<D>;
  const V x2 = hn::Mul(x, x), x4 = hn::Mul(x2, x2);
  V a[4];
  for (size_t i = 0; i < 4; ++i) a[(K - 1 - i) % 4] = hn::Set(d, T(c[i]));
  for (size_t i = 4; i < K; ++i) a[(K - 1 - i) % 4] = hn::MulAdd(a[(K - 1 - i) % 4], x4, hn::Set(d, T(c[i])));
  return hn::MulAdd(hn::MulAdd(hn::MulAdd(a[3], x, a[2]), x, a[1]), x, a[0]);
}

// Estrin's scheme: c[0] x^(K-1) + ... + c[K-1] as a tree, the low half plus
// x^H times the high half (H the largest power of two below the length):
// ceil(log2 K) dependent FMAs after the powers x^2, x^4, ... (computed
// beside them) where Horner2 needs K / 2. For the loops bound by one long
// chain per vector (erfinv's degree-13 polynomial, Log2Lanes); the same
// value to a few roundings. EstrinLowFirst takes the coefficients lowest
// degree first (c[k] is x^k's), the same tree.
template <size_t kLo, size_t kLen, bool kLowFirst, class D, class V, class C, size_t K>
HWY_INLINE V EstrinPart(D d, const V* pw, const C (&c)[K]) {  // sum_i<kLen coef(kLo+i) x^i
  using T = hn::TFromD<D>;
  if constexpr (kLen == 1) {
    return hn::Set(d, T(c[kLowFirst ? kLo : K - 1 - kLo]));
  } else {
    constexpr size_t kLog = kLen > 8 ? 3 : kLen > 4 ? 2 : kLen > 2 ? 1 : 0, kH = size_t(1) << kLog;
    return hn::MulAdd(EstrinPart<kLo + kH, kLen - kH, kLowFirst>(d, pw, c), pw[kLog],
                      EstrinPart<kLo, kH, kLowFirst>(d, pw, c));
  }
}
template <bool kLowFirst, class D, class V, class C, size_t K> HWY_INLINE V EstrinTree(D d, V x, const C (&c)[K]) {
  static_assert(K >= 2 && K <= 16, "2 to 16 coefficients");
  V pw[4] = {x, x, x, x};
  for (size_t k = 1; k < 4 && (size_t(1) << k) < K; ++k) pw[k] = hn::Mul(pw[k - 1], pw[k - 1]);
  return EstrinPart<0, K, kLowFirst>(d, pw, c);
}
template <class D, class V, class C, size_t K> HWY_INLINE V Estrin(D d, V x, const C (&c)[K]) {
  return EstrinTree<false>(d, x, c);
}
template <class D, class V, class C, size_t K> HWY_INLINE V EstrinLowFirst(D d, V x, const C (&c)[K]) {
  return EstrinTree<true>(d, x, c);
}

// x + k for the least k <= kSteps with x + k >= lo (Gamma's recurrence
// upward); *factors = x (x + 1) ... (x + k - 1), 1 for k = 0.
template <int kSteps, class D, class V> HWY_INLINE V ShiftUp(D d, V x, double lo, V* factors) {
  const V one = hn::Set(d, 1.0);
  V p = one;
  for (int k = 0; k < kSteps; ++k) {
    const auto m = x < hn::Set(d, lo);
    p = hn::IfThenElse(m, hn::Mul(p, x), p);
    x = hn::IfThenElse(m, hn::Add(x, one), x);
  }
  *factors = p;
  return x;
}
// lgamma of float32 in float64 lanes for 0 < x < inf (x <= 0, NaN and inf
// per element, libm's lgamma_r): below 2.5, x shifted up by 1 or 2 into
// [1.5, 2.5) (minus the log of the factors), then the Taylor series of
// lgamma about 2, (1 - gamma) e + sum_k>=2 (-1)^k (zeta(k) - 1)/k e^k to
// e^16 (|e| <= 1/2: the first term left out is below 4e-12 relative), so
// the zeros at 1 and 2 keep their relative accuracy; from 2.5 on,
// Stirling's series at z = x shifted up to at least 8 (to 1/z^9: 1e-12
// relative there). Against lgamma_r in double: within half a float32 ulp
// and a hair (the test's bound).
template <class D, class V> HWY_INLINE V LgammaSmallLanes(D d, V x) {  // 0 < x < 2.5
  V p;
  const V e = hn::Sub(ShiftUp<2>(d, x, 1.5, &p), hn::Set(d, 2.0));  // in [-1/2, 1/2)
  V t = hn::Set(d, 9.55141213040742e-07);
  for (double c : {-2.039215753801366e-06, 4.374866789907488e-06, -9.439488275268397e-06, 2.050721277567069e-05,
                   -4.492623673813314e-05, 9.945751278180853e-05, -0.00022315475845357939, 0.0005096695247430425,
                   -0.001192753911703261, 0.0028905103307415234, -0.007385551028673986, 0.020580808427784546,
                   -0.0673523010531981, 0.3224670334241132, 0.42278433509846713})
    t = hn::MulAdd(t, e, hn::Set(d, c));
  return hn::Sub(hn::Mul(t, e), hn::Log(d, p));
}
template <class D, class V> HWY_INLINE V LgammaLargeLanes(D d, V x) {  // x >= 2.5
  V q;
  const V z = ShiftUp<6>(d, x, 8.0, &q);
  const V w = hn::Div(hn::Set(d, 1.0), z), w2 = hn::Mul(w, w);
  V s = hn::Set(d, 1.0 / 1188);
  for (double c : {-1.0 / 1680, 1.0 / 1260, -1.0 / 360, 1.0 / 12}) s = hn::MulAdd(s, w2, hn::Set(d, c));
  const V lz = hn::Log(d, z);
  return hn::Sub(hn::Add(hn::MulAdd(hn::Sub(z, hn::Set(d, 0.5)), lz, hn::Neg(z)),
                         hn::MulAdd(s, w, hn::Set(d, 0.91893853320467274178032973640561764))),
                 hn::Log(d, q));
}
// m ? a() : b() per lane, computing only the branch a vector needs when all
// its lanes take one (inputs are mostly runs).
template <class D, class M, class A, class B> HWY_INLINE auto RunBranch(D d, M m, A a, B b) -> decltype(a()) {
  if (hn::AllTrue(d, m)) return a();
  if (hn::AllFalse(d, m)) return b();
  return hn::IfThenElse(m, a(), b());
}
template <class D, class V> HWY_INLINE V LgammaPosLanes(D d, V x) {
  return RunBranch(d, x < hn::Set(d, 2.5), [&] { return LgammaSmallLanes(d, x); },
                   [&] { return LgammaLargeLanes(d, x); });
}

// 1/a for normal finite a (within an ulp or two of double): on AVX-512 the hardware's 14-bit estimate and two
// Newton steps (within an ulp or two of double, at a fraction of a double
// division's throughput, which these loops are otherwise bound by); a
// division elsewhere (this Highway has no float64 estimate).
template <class D, class V> HWY_INLINE V RecipNewton(D d, V a) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D()) == 8) {
    V r{_mm512_rcp14_pd(a.raw)};
    for (int k = 0; k < 2; ++k) r = hn::MulAdd(r, hn::NegMulAdd(a, r, hn::Set(d, 1.0)), r);
    return r;
  }
#endif
  return hn::Div(hn::Set(d, 1.0), a);
}
// An Op of the float64-lane paths (unary-inl.h's UnaryMasked, ViaF64Block
// below) with a member kRechecks computes v(d, x, &ok) instead: it may clear
// lanes of ok after computing them (results it cannot vouch for, e.g. next
// to a function's zeros where its formula's absolute error stops being
// small relative to the value, or an iteration that did not converge), and
// those lanes go to Op::s as well. Lanes not in ok on entry are don't-cares.
template <class Op, class = void> struct Rechecks : std::false_type {};
template <class Op> struct Rechecks<Op, std::void_t<decltype(Op::kRechecks)>> : std::true_type {};

// ---- float32 pow and atan2 through float64 lanes ----------------------------
// Highway's Log, Exp and Atan for float64 err by a few float64 ulps, 2^29
// times finer than a float32 ulp: computed in float64 and rounded once, the
// float32 result is within one ulp of the exact value (libm's powf and
// atan2f promise no better), at vector speed. Lanes outside the formula's
// domain (zeros, infinities, NaN, negative bases) take Op::s, the scalar
// libm call, so every special value gives exactly what it gave before.
//
// Op: ok(d, a, b) the mask of lanes the vector formula handles; v(d, a, b)
// their result (v(d, a, b, &ok) with kRechecks: Rechecks above); s(a, b) the
// scalar result of one element, for the other lanes.
template <class Op, class D, class V>
HWY_INLINE void ViaF64Block(D dd, V va, V vb, const float* a, const float* b, double bs, int kMode, float* o) {
  const hn::Rebind<float, D> df;
  const int64_t N = (int64_t)hn::Lanes(dd);
  auto ok = Op::ok(dd, va, vb);
  V r;
  if constexpr (Rechecks<Op>::value) {
    r = Op::v(dd, va, vb, &ok);
  } else {
    if (HWY_UNLIKELY(hn::AllFalse(dd, ok))) r = va;  // every lane per element: no formula to run
    else r = Op::v(dd, va, vb);
  }
  if (HWY_LIKELY(hn::AllTrue(dd, ok))) {
    hn::StoreU(hn::DemoteTo(df, r), df, o);
    return;
  }
  constexpr size_t kN = hn::MaxLanes(hn::ScalableTag<double>());
  HWY_ALIGN double rs[kN];
  uint8_t bits[(kN + 7) / 8 + 8] = {};
  hn::Store(r, dd, rs);
  hn::StoreMaskBits(dd, ok, bits);
  float out[kN];  // all lanes read before o is written (o may be a or b)
  for (int64_t j = 0; j < N; ++j)
    out[j] = ((bits[j / 8] >> (j % 8)) & 1) ? (float)rs[j] : Op::s(kMode == 1 ? a[0] : a[j], kMode == 2 ? bs : (double)b[j]);
  std::memcpy(o, out, (size_t)N * sizeof(float));
}

// o[i] = Op(a[i], b[i]) for float32 arrays; kMode 1: a is one element
// (a[0]), 2: b is one element, given as the double bs (a float32 b[0], or a
// parameter such as pow_scalar's exponent, which stays a double).
template <class Op, int kMode>
void F32ViaF64(float* o, const float* a, const float* b, double bs, int64_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const int64_t N = (int64_t)hn::Lanes(dd);
  const auto sa = hn::Set(dd, (double)a[0]), sb = hn::Set(dd, bs);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    if (kMode != 1) PrefetchAhead(a + i);
    if (kMode != 2) PrefetchAhead(b + i);
    const auto va = kMode == 1 ? sa : hn::PromoteTo(dd, hn::LoadU(df, a + i));
    const auto vb = kMode == 2 ? sb : hn::PromoteTo(dd, hn::LoadU(df, b + i));
    ViaF64Block<Op>(dd, va, vb, kMode == 1 ? a : a + i, kMode == 2 ? b : b + i, bs, kMode, o + i);
  }
  for (; i < n; ++i) o[i] = Op::s(kMode == 1 ? a[0] : a[i], kMode == 2 ? bs : (double)b[i]);
}

// c[0] x^(K-1) + ... + c[K-1] by Horner's rule (unrolled: K is a constant).
template <class D, class V, class C, size_t K> HWY_INLINE V Horner(D d, V x, const C (&c)[K]) {
  using T = hn::TFromD<D>;
  V p = hn::Set(d, T(c[0]));
  for (size_t k = 1; k < K; ++k) p = hn::MulAdd(p, x, hn::Set(d, T(c[k])));
  return p;
}

// Tables of pow's log2 and exp2 (glibc's powf design, in float64 lanes):
// a's float64 bits less those of 0.69921875 split a = 2^k z, z in
// [0.6992, 1.3984) in 16 intervals of the top mantissa bits; interval j has
// kPowInvC[j], about 1 / its midpoint (exactly 1 for the interval holding
// 1, so a near 1 keeps its relative accuracy), and kPowLog2C[j] =
// -log2(kPowInvC[j]). kPowExp2[j] = 2^(j/16). Generated with Python's
// decimal module at 50 digits, rounded to nearest.
HWY_ALIGN static const double kPowInvC[16] = {
    0x1.661ec6a5122f9p+0, 0x1.571ed3c506b3ap+0, 0x1.49539e3b2d067p+0, 0x1.3c995a47babe7p+0,
    0x1.30d190130d190p+0, 0x1.25e22708092f1p+0, 0x1.1bb4a4046ed29p+0, 0x1.12358e75d3033p+0,
    0x1.0953f39010954p+0, 0x1.0000000000000p+0, 0x1.e573ac901e574p-1, 0x1.ca4b3055ee191p-1,
    0x1.b2036406c80d9p-1, 0x1.9c2d14ee4a102p-1, 0x1.886e5f0abb04ap-1, 0x1.767dce434a9b1p-1};
HWY_ALIGN static const double kPowLog2C[16] = {
    -0x1.efec61b011f85p-2, -0x1.b0b67f4f46812p-2, -0x1.7418acebbf18fp-2, -0x1.39de8e1559f6ep-2,
    -0x1.01d9bbcfa61d4p-2, -0x1.97c1cb13c7ec0p-3, -0x1.2f9e32d5bfdd1p-3, -0x1.960caf9abb7c1p-4,
    -0x1.a6f9c377dd31dp-5, 0x0.0p+0,              0x1.3aa2fdd27f1bfp-4,  0x1.476a9f983f74dp-3,
    0x1.e840be74e6a4dp-3,  0x1.406463b1b0448p-2,  0x1.88e9c72e0b224p-2,  0x1.ce0a4923a587dp-2};
HWY_ALIGN static const double kPowExp2[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0};
// t[idx] for a 16-entry float64 table: one two-register permute where a
// vector holds 8 doubles (AVX-512), a gather elsewhere.
template <class D, class VI> HWY_INLINE hn::Vec<D> Lookup16(D d, const double* t, VI idx) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D()) == 8) {
    return hn::Vec<D>{_mm512_permutex2var_pd(hn::Load(d, t).raw, idx.raw, hn::Load(d, t + 8).raw)};
  } else
#endif
    return hn::GatherIndex(d, t, idx);
}

// 2^y in float64 lanes, y clamped to [-200, 200] (beyond float32's range
// either way): 2^(n/16) 2^u, n = round(16 y) from the bits of 16 y + 1.5
// 2^52, |u| <= 1/32 exact, 2^u by its series to u^5 (1.4e-13 relative),
// 2^(n/16) from kPowExp2 with n / 16 added to its exponent. No divide, no
// float64 -> int64 conversion (AVX2 has none): pow, erfc and logaddexp of
// float32 share it.
template <class D, class V> HWY_INLINE V Exp2Lanes(D d, V y) {
  const hn::RebindToSigned<D> di;
  y = hn::Min(hn::Max(y, hn::Set(d, -200.0)), hn::Set(d, 200.0));
  const V magic = hn::Set(d, 6755399441055744.0);  // 1.5 * 2^52: adding it rounds to an integer
  const V nb = hn::MulAdd(y, hn::Set(d, 16.0), magic);
  const V u = hn::NegMulAdd(hn::Sub(nb, magic), hn::Set(d, 0.0625), y);  // exact
  static constexpr double kExp2[] = {0x1.5d87fe78a6731p-10, 0x1.3b2ab6fba4e77p-7, 0x1.c6b08d704a0c0p-5,
                                     0x1.ebfbdff82c58fp-3, 0x1.62e42fefa39efp-1, 1.0};  // ln2^k / k!
  const auto n = hn::Sub(hn::BitCast(di, nb), hn::BitCast(di, magic));
  const auto scale = hn::Add(hn::BitCast(di, Lookup16(d, kPowExp2, hn::And(n, hn::Set(di, int64_t(15))))),
                             hn::ShiftLeft<52>(hn::ShiftRight<4>(n)));
  return hn::Mul(Estrin(d, u, kExp2), hn::BitCast(d, scale));
}

// log2(a) in float64 lanes for a > 0 finite and normal: a = 2^k z,
// log2(a) = k + log2(c_j) + log2(1 + r), r = z / c_j - 1 by one FMA
// (|r| < 0.0297), log2(1 + r) by its series to r^6 (1e-10 of itself, a
// small term: 4e-12 absolute; exactly r's series near 1, where c_j = 1).
// No divide: pow and erfinv of float32 share it.
template <class D, class V> HWY_INLINE V Log2Lanes(D d, V a) {
  const hn::RebindToSigned<D> di;
  const auto bits = hn::BitCast(di, a);
  const auto tmp = hn::Sub(bits, hn::Set(di, int64_t(0x3FE6600000000000)));  // the bits of 0.69921875
  const auto j = hn::And(hn::ShiftRight<48>(tmp), hn::Set(di, int64_t(15)));
  const V k = hn::ConvertTo(d, hn::ShiftRight<52>(tmp));
  const V z = hn::BitCast(d, hn::Sub(bits, hn::And(tmp, hn::Set(di, int64_t(-4503599627370496)))));  // less k << 52
  const V r = hn::MulSub(z, Lookup16(d, kPowInvC, j), hn::Set(d, 1.0));
  constexpr double kL = 1.4426950408889634;  // 1 / ln 2
  static constexpr double kLog2[] = {-kL / 6, kL / 5, -kL / 4, kL / 3, -kL / 2, kL};
  return hn::Add(hn::Add(k, Lookup16(d, kPowLog2C, j)), hn::Mul(Estrin(d, r, kLog2), r));
}

// pow(a, b) = 2^(b log2(a)) for a > 0 finite and b finite, in float64:
// Log2Lanes, then Exp2Lanes.
// Float32 needs ~2^-29 of the result: every float32 result is within half
// an ulp and a hair of the exact power (0.5006 at worst in 3.3 M random
// cases, bases near 1 with exponents to 9e4 included). No divide, 13 FMAs:
// 1.66 -> 1.13 ns per element on one Zen 4 core (AVX-512), against the
// atanh-series log and degree-10 exp before; the lanes are float64 for
// accuracy, so NumPy's float32 SVML pow stays close (0.78x -> 1.01-1.09x
// there, same-run bench).
struct PowViaF64 {
  template <class D, class V> static HWY_INLINE auto ok(D d, V a, V b) -> decltype(hn::IsFinite(a)) {
    return hn::And(hn::And(a > hn::Zero(d), hn::IsFinite(a)), hn::IsFinite(b));
  }
  template <class D, class V> static HWY_INLINE V v(D d, V a, V b) { return Exp2Lanes(d, hn::Mul(b, Log2Lanes(d, a))); }
  static float s(float a, double b) { return (float)std::pow((double)a, b); }
};

// atan2(y, x) from atan(min/max) of the magnitudes in [0, 1], reflected
// into the right octant and quadrant, for finite y and x, not both zero
// (zeros of either sign otherwise come out right, -0 included).
struct Atan2ViaF64 {
  template <class D, class V> static HWY_INLINE auto ok(D d, V y, V x) -> decltype(hn::IsFinite(y)) {
    return hn::And(hn::And(hn::IsFinite(y), hn::IsFinite(x)), hn::Max(hn::Abs(y), hn::Abs(x)) > hn::Zero(d));
  }
  template <class D, class V> static HWY_INLINE V v(D d, V y, V x) {
    const V ay = hn::Abs(y), ax = hn::Abs(x);
    // atan(q), q = min/max in [0, 1]: above tan(pi/8), pi/4 + atan((min - max) /
    // (min + max)) (exact differences and sums of float32 values in float64),
    // so that one division and t * P(t^2), |t| <= tan(pi/8), with P a
    // degree-8 relative least-squares fit (relative error 2.7e-14, 1/2e6 of
    // a float32 ulp), replace Highway's float64 Atan: float32 needs no more.
    const V mn = hn::Min(ax, ay), mx = hn::Max(ax, ay);
    const auto red = mn > hn::Mul(hn::Set(d, 0.41421356237309503), mx);
    const V t = hn::Div(hn::IfThenElse(red, hn::Sub(mn, mx), mn), hn::IfThenElse(red, hn::Add(mn, mx), mx));
    const V u = hn::Mul(t, t);
    V p = hn::Set(d, 0.030673418957982635);
    p = hn::MulAdd(p, u, hn::Set(d, -0.05875266722960093));
    p = hn::MulAdd(p, u, hn::Set(d, 0.07563918385901565));
    p = hn::MulAdd(p, u, hn::Set(d, -0.09078423750660028));
    p = hn::MulAdd(p, u, hn::Set(d, 0.11110387646636975));
    p = hn::MulAdd(p, u, hn::Set(d, -0.14285690540765691));
    p = hn::MulAdd(p, u, hn::Set(d, 0.1999999960751982));
    p = hn::MulAdd(p, u, hn::Set(d, -0.3333333333082707));
    p = hn::MulAdd(p, u, hn::Set(d, 0.9999999999999736));
    V r = hn::Mul(t, p);
    r = hn::IfThenElse(red, hn::Add(r, hn::Set(d, 0.7853981633974483)), r);
    r = hn::IfThenElse(ay > ax, hn::Sub(hn::Set(d, 1.5707963267948966), r), r);
    const auto x_negative = hn::CopySign(hn::Set(d, 1.0), x) < hn::Zero(d);  // -0 too
    r = hn::IfThenElse(x_negative, hn::Sub(hn::Set(d, 3.141592653589793), r), r);
    return hn::CopySign(r, y);
  }
  static float s(float y, double x) { return std::atan2(y, (float)x); }
};

// NumPy's float divmod of float32 (binary.cc's float_divmod: fmod, then the
// quotient and remainder corrected towards floor) in float64 lanes, giving
// the same bits. For |a / b| < 2^28 the truncated quotient q of the float64
// division is exact (a float32 quotient that is not an integer stays more
// than 2^-25 from one), so a - q*b is fmod(a, b) exactly; every step the
// float32 code rounds is rounded to float32 here too (float64 +, -, * and
// / of float32 values rounded to float32 give the float32 result: 53 >=
// 2*24 + 2). Other lanes (b = 0, infinities, NaN, huge quotients) take
// the scalar code.
template <class D, class V> HWY_INLINE V RoundF32(D dd, V x) {
  const hn::Rebind<float, D> df;
  return hn::PromoteTo(dd, hn::DemoteTo(df, x));
}
template <class D, class V> HWY_INLINE auto DivmodOk(D d, V a, V b) -> decltype(hn::IsFinite(a)) {
  const auto finite = hn::And(hn::IsFinite(a), hn::IsFinite(b));
  return hn::And(hn::And(finite, b != hn::Zero(d)), hn::Abs(hn::Div(a, b)) < hn::Set(d, 268435456.0));
}
template <bool kMod, class D, class V> HWY_INLINE V DivmodF32(D d, V a, V b) {
  const V zero = hn::Zero(d);
  const V q = hn::Trunc(hn::Div(a, b));  // |q| < 2^28: q b is exact in float64
  V mod = hn::Sub(a, hn::Mul(q, b));      // fmod(a, b), exact
  // NumPy's float32 div = (a - mod) / b: a - mod is q b, so div is q within
  // |q| 2^-23 (two float32 roundings), and after the sign fix-up below
  // (div - 1, rounded: ulp(q) / 2 more) still within 0.375 of the integer
  // for |q| < 2^21, which the floor-and-round-half then returns exactly. So
  // below 2^21 div is q itself, and the second divide (and its roundings)
  // is needed only for a vector holding a larger quotient (floor_div 1.50 ->
  // 1.30 ns per element on one Zen 4 core).
  V div = hn::AllTrue(d, hn::Abs(q) < hn::Set(d, 2097152.0)) ? q
                                                            : RoundF32(d, hn::Div(RoundF32(d, hn::Sub(a, mod)), b));
  const auto nonzero = mod != zero;
  const auto flip = hn::And(nonzero, hn::Xor(b < zero, mod < zero));
  if (kMod) {
    mod = hn::IfThenElse(flip, RoundF32(d, hn::Add(mod, b)), mod);
    return hn::IfThenElse(nonzero, mod, hn::CopySign(zero, b));
  }
  div = hn::IfThenElse(flip, RoundF32(d, hn::Sub(div, hn::Set(d, 1.0))), div);
  V fl = hn::Floor(div);
  fl = hn::IfThenElse(hn::Sub(div, fl) > hn::Set(d, 0.5), hn::Add(fl, hn::Set(d, 1.0)), fl);
  return hn::IfThenElse(div != zero, fl, hn::CopySign(zero, hn::Div(a, b)));
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace ct
HWY_AFTER_NAMESPACE();

#endif  // CTENSOR_SRC_CPU_SIMD_INL_H_
