// nn_attention.cc — scaled_dot_product_attention on the CPU: a fused kernel
// over blocks of queries, with oneDNN's matmul for the two products.
//
// Work is split into jobs (batch entry, block of BQ queries); a thread takes
// a batch entry's jobs at a time (or a contiguous share of few), so it packs a batch entry's keys and
// values into the layout the matmul wants (a reorder; AMX tiles for
// bfloat16) once and reuses them for every query block of that entry. Keys
// come in chunks of KC: all of them in one without a causal rule, 128 with
// one, so that a block of queries runs only the chunks its last query
// reaches (the causal half of the work is skipped, not masked). Per job, in
// the thread's slice of the caller's workspace:
//   s_c = scale * q_blk @ k_c^T  per chunk c (BQ x KC, float32: oneDNN's output scale)
//   per row: + mask, the causal limit, max, e^(s - max) and its sum (on
//   AVX512_BF16 hosts the row kernels below; elsewhere the library's vector
//   kernels; for 16-bit data the weights are rounded to the data dtype as
//   they are made)
//   o = sum_c w_c @ v_c          (BQ x Ev, float32: oneDNN's sum post-op)
//   out rows = o / sum, rounded once to the data dtype.
// The tile of scores is chunk-major (each chunk a dense BQ x KC block, as
// oneDNN's AMX kernels want; a strided one sends it to a slower gemm) and
// within 512 KiB (BQ is chosen so): no (L, S) matrix is ever written to
// memory, and the softmax's passes read L2. A row whose every key is masked
// gives 0 (PyTorch's rule). Threads: the plan's count, one OpenMP region per
// call; oneDNN runs single-threaded inside it.

// GCC 12's avx512fintrin.h gives its unmasked intrinsics an undefined
// pass-through operand (_mm512_undefined_ps and kin), which it then reports as
// maybe-uninitialized at every inlined call: GCC bug 105593, fixed in GCC 13.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <hwy/targets.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <string>

#include "cpu/engine.h"
#include "cpu/half.h"
#include "cpu/kernels.h"
#include "cpu/nn_onednn_internal.h"
#include "cpu/reduce_internal.h"

namespace ct {
namespace cpu {
namespace onednn {

namespace {

size_t align64(size_t n) { return (n + 63) & ~size_t(63); }

// float32 -> bfloat16 by the CPU's own conversion (AVX512_BF16: one
// instruction per 16 values, round to nearest even, NaN kept quiet) where
// it has one, for the output rows (the weights are converted inside
// exp_bf16_row). Highway 1.0 has no target with it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CT_HAVE_BF16_INSN 1
__attribute__((target("avx512f,avx512bf16,avx512vl"))) void encode_bf16_insn(const float* s, uint16_t* d,
                                                                              int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256bh b = _mm512_cvtneps_pbh(_mm512_loadu_ps(s + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), reinterpret_cast<const __m256i&>(b));
  }
  for (; i < n; ++i) d[i] = float_to_bf16(s[i]);
}
// Whether the AVX-512 row kernels here run (encode_bf16_insn and those
// below): on AVX512_BF16 hosts, and not where CT_CPU_SIMD
// limits the library's kernels to an older target (Highway's dispatch has
// no AVX3 one left): the portable paths (the library's vector kernels) then
// run, and are tested, on this host too.
bool avx512_rows() {
  static const bool yes = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vl") &&
                          (hwy::SupportedTargets() & ((HWY_AVX3 << 1) - 1)) != 0;
  return yes;
}

// The max of s[0, n) (NaN if one is NaN; -inf for n = 0): two accumulators
// and one unordered compare per two vectors, where the library's
// NaN-propagating reduction tests every vector (a row is 128 to 512 scores:
// setup and the final reduction dominate a general kernel at that length).
__attribute__((target("avx512f"))) float max_row_avx512(const float* s, int64_t n) {
  const __m512 ninf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 m0 = ninf, m1 = ninf;
  __mmask16 nan = 0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 x0 = _mm512_loadu_ps(s + i), x1 = _mm512_loadu_ps(s + i + 16);
    m0 = _mm512_max_ps(m0, x0);
    m1 = _mm512_max_ps(m1, x1);
    nan |= _mm512_cmp_ps_mask(x0, x1, _CMP_UNORD_Q);
  }
  for (; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
    const __m512 x = _mm512_mask_loadu_ps(ninf, k, s + i);
    m0 = _mm512_max_ps(m0, x);
    nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
}

// bfloat16 weights: w = bf16(e^(s - m)) for s[0, n), returning the sum of the
// float32 values. e^d = 2^t, t = d log2(e), as 2^round(t) (scalef) times a
// degree-5 Taylor polynomial of 2^f on |f| <= 1/2: relative error < 3e-6,
// under 1/600 of the half ulp (2^-9) each weight is rounded by next, and
// less than half the work of the float32 exponential (kept for float32
// weights, which are not rounded). d <= 0 (m is the row's max): no
// overflow; d = -inf (a masked key) gives +0 (2^-160 underflows); a NaN
// stays NaN (vmaxps returns its second operand when one is NaN).
struct Exp2Poly {
  __m512 vm, l2e, lo, c1, c2, c3, c4, c5, one;
};
__attribute__((target("avx512f"), always_inline)) inline __m512 exp_fast(const Exp2Poly& c, __m512 x) {
  const __m512 t = _mm512_max_ps(c.lo, _mm512_mul_ps(_mm512_sub_ps(x, c.vm), c.l2e));
  const __m512 r = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(t, r);
  __m512 p = _mm512_fmadd_ps(c.c5, f, c.c4);
  p = _mm512_fmadd_ps(p, f, c.c3);
  p = _mm512_fmadd_ps(p, f, c.c2);
  p = _mm512_fmadd_ps(p, f, c.c1);
  p = _mm512_fmadd_ps(p, f, c.one);
  return _mm512_scalef_ps(p, r);
}
__attribute__((target("avx512f,avx512bf16,avx512vl"))) double exp_bf16_row(const float* s, uint16_t* w, int64_t n,
                                                                            float m) {
  Exp2Poly c;
  c.vm = _mm512_set1_ps(m), c.l2e = _mm512_set1_ps(1.44269504088896341f), c.lo = _mm512_set1_ps(-160.0f);
  c.c1 = _mm512_set1_ps(0.693147180559945f), c.c2 = _mm512_set1_ps(0.240226506959101f);
  c.c3 = _mm512_set1_ps(0.0555041086648216f), c.c4 = _mm512_set1_ps(0.00961812910762848f);
  c.c5 = _mm512_set1_ps(0.00133335581464284f), c.one = _mm512_set1_ps(1.0f);
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {  // two independent chains, whole vectors
    const __m512 e0 = exp_fast(c, _mm512_loadu_ps(s + i)), e1 = exp_fast(c, _mm512_loadu_ps(s + i + 16));
    s0 = _mm512_add_ps(s0, e0);
    s1 = _mm512_add_ps(s1, e1);
    const __m512bh b = _mm512_cvtne2ps_pbh(e1, e0);  // e0 in the low half
    _mm512_storeu_si512(w + i, reinterpret_cast<const __m512i&>(b));
  }
  for (; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
    const __m512 e = exp_fast(c, _mm512_maskz_loadu_ps(k, s + i));
    s0 = _mm512_mask_add_ps(s0, k, s0, e);
    const __m256bh b = _mm512_cvtneps_pbh(e);
    _mm256_mask_storeu_epi16(w + i, k, reinterpret_cast<const __m256i&>(b));
  }
  return (double)_mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}
#else
#define CT_HAVE_BF16_INSN 0
#endif

float row_max(const float* s, int64_t n) {
#if CT_HAVE_BF16_INSN
  if (avx512_rows()) return max_row_avx512(s, n);
#endif
  return rk().max_f32(s, n);
}

float load_f32(const char* p, int32_t dt) {
  switch (dt) {
    case CT_DT_FLOAT32: return load_at<float>(p);
    case CT_DT_BFLOAT16: return bf16_to_float(load_at<uint16_t>(p));
    case CT_DT_FLOAT16: return f16_to_float(load_at<uint16_t>(p));
    default: return load_at<uint8_t>(p) ? 0.0f : -std::numeric_limits<float>::infinity();  // bool: true attends
  }
}
void store_f32(char* p, int32_t dt, float v) {
  switch (dt) {
    case CT_DT_FLOAT32: store_at<float>(p, v); break;
    case CT_DT_BFLOAT16: store_at<uint16_t>(p, float_to_bf16(v)); break;
    default: store_at<uint16_t>(p, double_to_f16(v)); break;
  }
}

// A tensor's place in the call: base pointer, element strides of its last
// two dims and byte strides of out's batch dims (0 where it broadcasts).
struct View {
  const char* base = nullptr;
  int64_t rs = 0, cs = 0;                 // elements
  int64_t bstride[CT_MAX_NDIM] = {0};     // bytes, per batch dim of out
  int64_t esize = 0;
  int32_t dt = 0;
};

View view_of(const CTensor* t, int32_t out_nd) {
  View v;
  v.base = data_of(t);
  v.dt = dtype_index(t->dtype);
  v.esize = t->dtype.bits / 8;
  const int32_t nd = t->ndim;  // a mask may have fewer than 2 dims: the missing ones broadcast
  v.rs = nd < 2 || t->shape[nd - 2] == 1 ? 0 : ct_stride_of(t, nd - 2);
  v.cs = nd < 1 || t->shape[nd - 1] == 1 ? 0 : ct_stride_of(t, nd - 1);
  for (int32_t d = 0; d < out_nd - 2; ++d) {
    const int32_t td = d - (out_nd - nd);
    // Unsigned: an empty k or v (no keys) may have any strides, which address nothing.
    v.bstride[d] = td >= 0 && t->shape[td] != 1 ? (int64_t)((uint64_t)ct_stride_of(t, td) * (uint64_t)v.esize) : 0;
  }
  return v;
}

// Copies rows x cols elements of esize bytes from a strided source into a
// dense row-major buffer (rows from `rows` on, up to `pad_rows`, zeroed).
void gather(char* dst, const char* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t esize,
            int64_t pad_rows) {
  const size_t row_bytes = (size_t)(cols * esize);
  for (int64_t i = 0; i < rows; ++i) {
    const char* s = src + i * rs * esize;
    char* d = dst + (size_t)i * row_bytes;
    if (cs == 1 || cols == 1) {
      std::memcpy(d, s, row_bytes);
    } else {
      for (int64_t j = 0; j < cols; ++j) std::memcpy(d + j * esize, s + j * cs * esize, (size_t)esize);
    }
  }
  if (pad_rows > rows) std::memset(dst + (size_t)rows * row_bytes, 0, (size_t)(pad_rows - rows) * row_bytes);
}

struct Attention {
  int nthreads = 1;
  int32_t dt = CT_DT_FLOAT32, mask_dt = -1;
  int causal = 0;
  float scale = 1;
  int32_t out_nd = 2;
  int64_t batch_shape[CT_MAX_NDIM] = {0};
  int64_t nb = 1, L = 0, S = 0, E = 0, Ev = 0, BQ = 1, nq = 1;
  int64_t esize = 4;
  // Keys in nkc chunks of KC (S_pad = nkc * KC, the padding keys zero):
  // one chunk without a causal rule; KC = 128 with one, so that a block of
  // queries runs only the chunks its last query reaches.
  int64_t KC = 0, nkc = 1, S_pad = 0;
  bool direct = false;  // E > 0 and S > 0: the matmul path (else the plain loops below)
  dnnl::matmul mm1, mm2, mm2_acc;  // per chunk: scores; values (first chunk), values added (the others)
  dnnl::reorder pack_k, pack_v;    // one chunk of keys / values into the matmuls' layout
  memory::desc q_md, k_md, kp_md, s_md, p_md, v_md, vp_md, o_md;
  size_t kp_bytes = 0, vp_bytes = 0;  // one packed chunk
  // per-thread slice of the workspace
  size_t off_q = 0, off_k = 0, off_kp = 0, off_v = 0, off_vp = 0, off_s = 0, off_p = 0, off_o = 0, off_m = 0,
         off_scr = 0, per_thread = 0;
};

// The causal limit: keys [0, end) of query i.
int64_t key_end(const Attention& a, int64_t i) {
  int64_t e = a.S;
  if (a.causal == CT_CAUSAL_TOP_LEFT) e = i + 1;
  if (a.causal == CT_CAUSAL_BOTTOM_RIGHT) e = i + a.S - a.L + 1;
  return e < 0 ? 0 : e > a.S ? a.S : e;
}

// One row of scores -> weights (in place for float32, else into w of the
// data dtype); returns 1/sum, 0 for a row with no key left.
// One query's scores -> weights. The scores of chunk c sit at s + c * cs
// (KC of them; the tile is chunk-major, so that every matmul sees a dense
// block), the weights likewise at w (float32: in place; else the data
// dtype). Keys [0, end) count; the weights of the others in the `chunks`
// chunks run are 0. Returns 1/sum, 0 for a row with no key left.
float softmax_row(const Attention& a, float* s, char* w, int64_t cs, const char* mrow, int64_t mcs, int64_t mesize,
                  int64_t end, int64_t chunks, float* mbuf) {
  const KernelTable& kt = kernel_table();
  const float ninf = -std::numeric_limits<float>::infinity();
  auto valid = [&](int64_t c) { return std::max<int64_t>(0, std::min(a.KC, end - c * a.KC)); };
  float m = ninf;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t n = valid(c);
    if (n == 0) break;
    float* seg = s + c * cs;
    if (mrow) {
      const char* mseg = mrow + c * a.KC * mcs * mesize;
      char* p[3] = {reinterpret_cast<char*>(seg), reinterpret_cast<char*>(seg), const_cast<char*>(mseg)};
      if (!(a.mask_dt == CT_DT_FLOAT32 && mcs == 1)) {
        for (int64_t j = 0; j < n; ++j) mbuf[j] = load_f32(mseg + j * mcs * mesize, a.mask_dt);
        p[2] = reinterpret_cast<char*>(mbuf);
      }
      kt.op[CT_OP_ADD][CT_DT_FLOAT32](p, n, nullptr);
    }
    const float mc = row_max(seg, n);  // NaN-propagating, and so is the running max
    if (!std::isnan(m) && !(mc <= m)) m = mc;
  }
  double sum = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t n = m == ninf ? 0 : valid(c);
    float* seg = s + c * cs;
    char* wseg = w + (size_t)(c * cs * a.esize);
    if (a.dt == CT_DT_FLOAT32) {
      if (n) sum += kt.exp_shift_sum[0](seg, seg, n, (double)m);
    } else if (n) {  // e^(s - m) rounded to the data dtype; the sum of the float32 values
#if CT_HAVE_BF16_INSN
      if (a.dt == CT_DT_BFLOAT16 && avx512_rows()) {
        sum += exp_bf16_row(seg, reinterpret_cast<uint16_t*>(wseg), n, m);
      } else
#endif
      {  // rounded as they are made
        sum += kt.exp_shift_sum_half[a.dt == CT_DT_FLOAT16](seg, reinterpret_cast<uint16_t*>(wseg), n, (double)m);
      }
    }
    std::memset(wseg + n * a.esize, 0, (size_t)((a.KC - n) * a.esize));  // keys past the limit weigh 0 (+0.0)
  }
  return m == ninf ? 0.0f : (float)(1.0 / sum);
}

struct Job {
  const Attention* a;
  View q, k, v, m, o;
  bool has_mask;
};

// The byte offset of batch entry b in view x.
int64_t batch_offset(const Attention& a, const View& x, int64_t b) {
  int64_t off = 0;
  for (int32_t d = a.out_nd - 3; d >= 0; --d) {
    const int64_t e = a.batch_shape[d];
    off += (b % e) * x.bstride[d];
    b /= e;
  }
  return off;
}

// E = 0 or S = 0: no products to run. Scores are 0 (+ mask); the output is
// the weighted mean of v, 0 without keys.
void run_plain(const Job& j, int64_t b, char* ws) {
  const Attention& a = *j.a;
  float* s = reinterpret_cast<float*>(ws);
  // Without keys v and the mask are empty, their base perhaps NULL: nothing of theirs is addressed.
  const char *vb = a.S ? j.v.base + batch_offset(a, j.v, b) : nullptr,
             *mb = j.has_mask && a.S ? j.m.base + batch_offset(a, j.m, b) : nullptr;
  char* ob = const_cast<char*>(j.o.base) + batch_offset(a, j.o, b);
  for (int64_t i = 0; i < a.L; ++i) {
    const int64_t end = key_end(a, i);
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t jj = 0; jj < end; ++jj) {
      s[jj] = mb ? load_f32(mb + (i * j.m.rs + jj * j.m.cs) * j.m.esize, a.mask_dt) : 0.0f;
      m = std::max(m, s[jj]);
    }
    for (int64_t c = 0; c < a.Ev; ++c) {
      double acc = 0, sum = 0;
      if (m != -std::numeric_limits<float>::infinity())
        for (int64_t jj = 0; jj < end; ++jj) {
          const double w = std::exp((double)s[jj] - m);
          sum += w;
          acc += w * load_f32(vb + (jj * j.v.rs + c * j.v.cs) * j.v.esize, a.dt);
        }
      store_f32(ob + (i * j.o.rs + c * j.o.cs) * j.o.esize, a.dt, sum > 0 ? (float)(acc / sum) : 0.0f);
    }
  }
}

// Runs the jobs [first, last) of each range next(&first, &last) hands out.
template <class Next>
void run_jobs(const Job& j, const Next& next, char* ws) {
  const Attention& a = *j.a;
  int64_t first = 0, last = 0;
  if (!a.direct) {
    while (next(&first, &last))
      for (int64_t job = first; job < last; ++job) run_plain(j, job, ws);
    return;
  }
  dnnl::stream strm(eng());
  char *qbuf = ws + a.off_q, *kbuf = ws + a.off_k, *vbuf = ws + a.off_v, *kp = ws + a.off_kp, *vp = ws + a.off_vp;
  float* sbuf = reinterpret_cast<float*>(ws + a.off_s);
  char* pbuf = a.dt == CT_DT_FLOAT32 ? ws + a.off_s : ws + a.off_p;
  float* obuf = reinterpret_cast<float*>(ws + a.off_o);
  float* mbuf = reinterpret_cast<float*>(ws + a.off_m);
  memory scr;
  const bool has_scr = a.off_scr != a.per_thread;
  if (has_scr)
    scr = memory(memory::desc({(int64_t)(a.per_thread - a.off_scr)}, mdt::u8, memory::format_tag::a), eng(),
                 ws + a.off_scr);
  using Args = std::unordered_map<int, memory>;
  auto with_scr = [&](Args args) {
    if (has_scr) args[DNNL_ARG_SCRATCHPAD] = scr;
    return args;
  };
  // per chunk c: its keys and values (dense, then packed), its columns of the scores and weights
  memory mq(a.q_md, eng(), qbuf);
  const memory mo(a.o_md, eng(), obuf);
  std::vector<Args> pk, pv, m1, m2;
  std::vector<memory> mks, mvs;  // the chunks' dense keys and values: the gathered copies, or the caller's own
  for (int64_t c = 0; c < a.nkc; ++c) {
    const memory mk(a.k_md, eng(), kbuf + (size_t)(c * a.KC * a.E * a.esize)),
        mkp(a.kp_md, eng(), kp + (size_t)c * a.kp_bytes),
        mv(a.v_md, eng(), vbuf + (size_t)(c * a.KC * a.Ev * a.esize)),
        mvp(a.vp_md, eng(), vp + (size_t)c * a.vp_bytes), ms(a.s_md, eng(), sbuf + c * a.BQ * a.KC),
        mp(a.p_md, eng(), pbuf + (size_t)(c * a.BQ * a.KC * a.esize));
    mks.push_back(mk);
    mvs.push_back(mv);
    pk.push_back(with_scr({{DNNL_ARG_FROM, mk}, {DNNL_ARG_TO, mkp}}));
    pv.push_back(with_scr({{DNNL_ARG_FROM, mv}, {DNNL_ARG_TO, mvp}}));
    m1.push_back(with_scr({{DNNL_ARG_SRC, mq}, {DNNL_ARG_WEIGHTS, mkp}, {DNNL_ARG_DST, ms}}));
    m2.push_back(with_scr({{DNNL_ARG_SRC, mp}, {DNNL_ARG_WEIGHTS, mvp}, {DNNL_ARG_DST, mo}}));
  }
  float inv[128];  // BQ <= 128
  int64_t packed = -1;
  // Rows of E (Ev) contiguous elements, one after another, and no padding
  // chunk: the caller's memory is the dense operand itself, and the copy is
  // skipped (18 MiB a call at (8, 12, 512, 64) bfloat16).
  auto dense = [&](const View& x, int64_t cols) { return (x.cs == 1 || cols == 1) && x.rs == cols; };
  const bool k_dense = dense(j.k, a.E) && a.S_pad == a.S, v_dense = dense(j.v, a.Ev) && a.S_pad == a.S,
             q_dense = dense(j.q, a.E);
  while (next(&first, &last))
  for (int64_t job = first; job < last; ++job) {
    const int64_t b = job / a.nq, q0 = (job % a.nq) * a.BQ, rows = std::min(a.BQ, a.L - q0);
    if (b != packed) {  // this batch entry's keys and values, packed once per run of jobs
      const char *kb = j.k.base + batch_offset(a, j.k, b), *vb = j.v.base + batch_offset(a, j.v, b);
      if (k_dense)  // the reorders read the caller's rows
        for (int64_t c = 0; c < a.nkc; ++c) mks[(size_t)c].set_data_handle(const_cast<char*>(kb) + c * a.KC * a.E * a.esize);
      else
        gather(kbuf, kb, a.S, a.E, j.k.rs, j.k.cs, j.k.esize, a.S_pad);
      if (v_dense)
        for (int64_t c = 0; c < a.nkc; ++c) mvs[(size_t)c].set_data_handle(const_cast<char*>(vb) + c * a.KC * a.Ev * a.esize);
      else
        gather(vbuf, vb, a.S, a.Ev, j.v.rs, j.v.cs, j.v.esize, a.S_pad);
      for (int64_t c = 0; c < a.nkc; ++c) {
        a.pack_k.execute(strm, pk[(size_t)c]);
        a.pack_v.execute(strm, pv[(size_t)c]);
      }
      packed = b;
    }
    // the chunks the block's last query reaches (a row with no key: none, and 0 out)
    const int64_t reach = key_end(a, q0 + rows - 1), chunks = (reach + a.KC - 1) / a.KC;
    const char* qb = j.q.base + batch_offset(a, j.q, b) + q0 * j.q.rs * j.q.esize;
    if (q_dense && rows == a.BQ) {  // the first product reads the caller's rows
      mq.set_data_handle(const_cast<char*>(qb));
    } else {
      gather(qbuf, qb, rows, a.E, j.q.rs, j.q.cs, j.q.esize, a.BQ);
      mq.set_data_handle(qbuf);
    }
    for (int64_t c = 0; c < chunks; ++c) a.mm1.execute(strm, m1[(size_t)c]);
    const char* mb = j.has_mask ? j.m.base + batch_offset(a, j.m, b) : nullptr;
    const int64_t cs = a.BQ * a.KC;  // elements from one chunk of the tile to the next
    for (int64_t i = 0; i < a.BQ; ++i) {
      float* srow = sbuf + i * a.KC;
      char* prow = pbuf + (size_t)(i * a.KC * a.esize);
      if (i >= rows) {  // the padding rows of a last block: weights 0
        for (int64_t c = 0; c < chunks; ++c) std::memset(prow + c * cs * a.esize, 0, (size_t)(a.KC * a.esize));
        continue;
      }
      const int64_t gi = q0 + i;
      inv[i] = softmax_row(a, srow, prow, cs, mb ? mb + gi * j.m.rs * j.m.esize : nullptr, j.m.cs, j.m.esize,
                           key_end(a, gi), chunks, mbuf);
    }
    if (chunks == 0) std::memset(obuf, 0, (size_t)(a.BQ * a.Ev) * sizeof(float));
    for (int64_t c = 0; c < chunks; ++c) (c ? a.mm2_acc : a.mm2).execute(strm, m2[(size_t)c]);
    char* ob = const_cast<char*>(j.o.base) + batch_offset(a, j.o, b) + q0 * j.o.rs * j.o.esize;
    for (int64_t i = 0; i < rows; ++i) {
      float* orow = obuf + i * a.Ev;
      char* dst = ob + i * j.o.rs * j.o.esize;
      const float r = inv[i];
      for (int64_t c = 0; c < a.Ev; ++c) orow[c] *= r;
      if (j.o.cs != 1 && a.Ev > 1) {
        for (int64_t c = 0; c < a.Ev; ++c) store_f32(dst + c * j.o.cs * j.o.esize, a.dt, orow[c]);
      } else if (a.dt == CT_DT_FLOAT32) {
        std::memcpy(dst, orow, (size_t)a.Ev * sizeof(float));
      } else if (((uintptr_t)dst & 1) == 0) {  // the vector encoders store uint16 lanes
#if CT_HAVE_BF16_INSN
        if (a.dt == CT_DT_BFLOAT16 && avx512_rows()) encode_bf16_insn(orow, reinterpret_cast<uint16_t*>(dst), a.Ev);
        else
#endif
        if (a.dt == CT_DT_BFLOAT16) rk().encode_bf16(orow, reinterpret_cast<uint16_t*>(dst), a.Ev);
        else rk().encode_f16(orow, reinterpret_cast<uint16_t*>(dst), a.Ev);
      } else {
        for (int64_t c = 0; c < a.Ev; ++c) store_f32(dst + c * j.o.esize, a.dt, orow[c]);
      }
    }
  }
}

}  // namespace

// oneDNN 2.6 ranks its AVX-512 gemm above the AMX brgemm for small bfloat16
// products (N = 128 chunks), which is several times slower here: take a
// brgemm where one exists.
dnnl::matmul::primitive_desc prefer_brgemm(const dnnl::matmul::desc& d, const dnnl::primitive_attr& attr) {
  dnnl::matmul::primitive_desc pd(d, attr, eng());
  do {
    if (std::strstr(pd.impl_info_str(), "brg")) return pd;
  } while (pd.next_impl());
  return dnnl::matmul::primitive_desc(d, attr, eng());
}

// The plan: primitives for one block shape, the workspace split per thread,
// and a hook that runs the jobs.
void build_attention(const CTNNCall* c, Plan* p) {
  auto a = std::make_shared<Attention>();
  const CTAttentionDesc& d = *static_cast<const CTAttentionDesc*>(c->desc);
  const CTensor *q = c->t[0], *k = c->t[1], *v = c->t[2], *mask = c->t[3], *out = c->t[4];
  a->nthreads = p->nthreads > 0 ? p->nthreads : 1;
  a->dt = c->dt;
  a->esize = q->dtype.bits / 8;
  a->mask_dt = mask ? dtype_index(mask->dtype) : -1;
  a->causal = d.causal;
  a->out_nd = out->ndim;
  a->L = q->shape[q->ndim - 2];
  a->E = q->shape[q->ndim - 1];
  a->S = k->shape[k->ndim - 2];
  a->Ev = v->shape[v->ndim - 1];
  a->scale = (float)(d.scale != 0 ? d.scale : a->E > 0 ? 1.0 / std::sqrt((double)a->E) : 1.0);
  for (int32_t i = 0; i < out->ndim - 2; ++i) a->nb *= (a->batch_shape[i] = out->shape[i]);
  a->direct = a->E > 0 && a->S > 0;
  p->has_prim = false;
  if (!a->direct) {
    a->per_thread = align64((size_t)std::max<int64_t>(a->S, 1) * sizeof(float));
  } else {
    // BQ: up to 128 queries, with the block's scores within 512 KiB
    int64_t bq = (512 << 10) / (a->S * 4);
    bq = std::max<int64_t>(16, std::min<int64_t>(128, bq));
    a->BQ = std::min(bq, a->L);
    a->nq = (a->L + a->BQ - 1) / a->BQ;
    a->KC = d.causal != CT_CAUSAL_NONE && a->S > 128 ? 128 : a->S;
    a->nkc = (a->S + a->KC - 1) / a->KC;
    a->S_pad = a->nkc * a->KC;
    const mdt dd = dnnl_dt(a->dt);
    const int64_t BQ = a->BQ, S = a->S_pad, KC = a->KC, E = a->E, Ev = a->Ev;
    a->q_md = memory::desc({BQ, E}, dd, {E, 1});
    a->k_md = memory::desc({E, KC}, dd, {1, E});  // a chunk of the dense S x E copy, seen as k^T
    a->s_md = memory::desc({BQ, KC}, mdt::f32, {KC, 1});  // the tile is chunk-major: each chunk dense
    a->p_md = memory::desc({BQ, KC}, dd, {KC, 1});
    a->v_md = memory::desc({KC, Ev}, dd, {Ev, 1});
    a->o_md = memory::desc({BQ, Ev}, mdt::f32, {Ev, 1});
    dnnl::primitive_attr at1 = scratch_attr(), acc = scratch_attr();
    at1.set_output_scales(0, {a->scale});
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    acc.set_post_ops(sum);
    const dnnl::matmul::primitive_desc pd1 =
        prefer_brgemm(dnnl::matmul::desc(a->q_md, memory::desc({E, KC}, dd, memory::format_tag::any), a->s_md), at1);
    const dnnl::matmul::primitive_desc pd2 = prefer_brgemm(
        dnnl::matmul::desc(a->p_md, memory::desc({KC, Ev}, dd, memory::format_tag::any), a->o_md), scratch_attr());
    a->kp_md = pd1.weights_desc();
    a->vp_md = pd2.weights_desc();
    a->kp_bytes = align64(a->kp_md.get_size());
    a->vp_bytes = align64(a->vp_md.get_size());
    const dnnl::matmul::primitive_desc pd2a = prefer_brgemm(dnnl::matmul::desc(a->p_md, a->vp_md, a->o_md), acc);
    const dnnl::reorder::primitive_desc rk(eng(), a->k_md, eng(), a->kp_md, scratch_attr()),
        rv(eng(), a->v_md, eng(), a->vp_md, scratch_attr());
    a->mm1 = dnnl::matmul(pd1);
    a->mm2 = dnnl::matmul(pd2);
    a->mm2_acc = dnnl::matmul(pd2a);
    a->pack_k = dnnl::reorder(rk);
    a->pack_v = dnnl::reorder(rv);
    p->primitives += 5;
    const size_t scr = std::max(std::max(std::max(pd1.scratchpad_desc().get_size(), pd2.scratchpad_desc().get_size()),
                                         pd2a.scratchpad_desc().get_size()),
                                std::max(rk.scratchpad_desc().get_size(), rv.scratchpad_desc().get_size()));
    size_t off = 0;
    auto take = [&](size_t bytes) {
      const size_t at = off;
      off += align64(bytes);
      return at;
    };
    a->off_q = take((size_t)(BQ * E * a->esize));
    a->off_k = take((size_t)(S * E * a->esize));
    a->off_v = take((size_t)(S * Ev * a->esize));
    a->off_kp = take(a->kp_bytes * (size_t)a->nkc);
    a->off_vp = take(a->vp_bytes * (size_t)a->nkc);
    a->off_s = take((size_t)(BQ * S) * sizeof(float));
    a->off_p = take(a->dt == CT_DT_FLOAT32 ? 0 : (size_t)(BQ * S * a->esize));
    a->off_o = take((size_t)(BQ * Ev) * sizeof(float));
    a->off_m = take((size_t)S * sizeof(float));
    a->off_scr = off;
    a->per_thread = off + align64(scr);
  }
  p->total = a->per_thread * (size_t)a->nthreads + 64;
  const bool has_mask = mask != nullptr;
  p->post.push_back([a, has_mask](const Exec& e) {
    Job j;
    j.a = a.get();
    j.q = view_of(e.t[0], a->out_nd);
    j.k = view_of(e.t[1], a->out_nd);
    j.v = view_of(e.t[2], a->out_nd);
    j.has_mask = has_mask;
    if (has_mask) j.m = view_of(e.t[3], a->out_nd);
    j.o = view_of(e.t[4], a->out_nd);
    const int64_t per = a->direct ? a->nq : 1, jobs = a->nb * per;  // jobs per batch entry, all jobs
    const int nt = (int)std::max<int64_t>(1, std::min<int64_t>(a->nthreads, jobs));
    // Enough batch entries: handed out one at a time as threads finish (a
    // thread slowed by another process on its core takes fewer; the keys
    // and values of an entry are packed by the one thread that runs it).
    // Few: a contiguous share of the jobs per thread.
    const bool by_entry = a->nb >= 4 * (int64_t)nt;
    std::atomic<int64_t> next_entry(0);
    std::exception_ptr err;
#pragma omp parallel num_threads(nt)
    {
      const int t = omp_get_thread_num(), n = omp_get_num_threads();
      bool given = false;
      const auto next = [&](int64_t* first, int64_t* last) {
        if (by_entry) {
          const int64_t b = next_entry.fetch_add(1, std::memory_order_relaxed);
          if (b >= a->nb) return false;
          *first = b * per, *last = (b + 1) * per;
          return true;
        }
        if (given) return false;
        given = true;
        *first = jobs * t / n, *last = jobs * (t + 1) / n;
        return true;
      };
      try {
        run_jobs(j, next, e.base + a->per_thread * (size_t)t);
      } catch (...) {
#pragma omp critical(ct_attention_error)
        if (!err) err = std::current_exception();
      }
    }
    if (err) std::rethrow_exception(err);
  });
}

}  // namespace onednn
}  // namespace cpu
}  // namespace ct
