// simd-inl.h — per-target SIMD helpers shared by the CPU kernel files
// (elementwise.cc, binary.cc, reduce.cc): block sizes, masked tails,
// streaming-store threshold, and the float16/bfloat16 <-> float32 codecs.
// Highway's "-inl.h" convention: included once per target by foreach_target.
#if defined(CTENSOR_SRC_CPU_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CTENSOR_SRC_CPU_SIMD_INL_H_
#undef CTENSOR_SRC_CPU_SIMD_INL_H_
#else
#define CTENSOR_SRC_CPU_SIMD_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>
#include <cstring>

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

// ---- half types: widen to float32 in blocks, run the float32 kernel -------
struct F16Codec {
  static void decode(const uint16_t* src, float* dst, int64_t n) {
    const hn::ScalableTag<float> df;
    const hn::Rebind<hwy::float16_t, decltype(df)> dh;
    const int64_t N = (int64_t)hn::Lanes(df);
    int64_t i = 0;
    for (; i + N <= n; i += N)
      hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(src) + i)), df, dst + i);
    for (; i < n; ++i) dst[i] = f16_to_float(src[i]);
  }
  static void encode(const float* src, uint16_t* dst, int64_t n) {
    const hn::ScalableTag<float> df;
    const hn::Rebind<hwy::float16_t, decltype(df)> dh;
    const int64_t N = (int64_t)hn::Lanes(df);
    int64_t i = 0;
    for (; i + N <= n; i += N)
      hn::StoreU(hn::DemoteTo(dh, hn::LoadU(df, src + i)), dh, reinterpret_cast<hwy::float16_t*>(dst) + i);
    for (; i < n; ++i) dst[i] = double_to_f16(src[i]);
  }
};
struct BF16Codec {
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
      Codec::decode(reinterpret_cast<const uint16_t*>(p[1 + k]) + i, in[k], m);
      q[1 + k] = reinterpret_cast<char*>(in[k]);
    }
    if (kBoolOut) {
      q[0] = p[0] + i;
      K(q, m, prm);
    } else {
      q[0] = reinterpret_cast<char*>(out);
      K(q, m, prm);
      Codec::encode(out, reinterpret_cast<uint16_t*>(p[0]) + i, m);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace ct
HWY_AFTER_NAMESPACE();

#endif  // CTENSOR_SRC_CPU_SIMD_INL_H_
