// cpu_backend.cc — the CPU backend: memory helpers, device info, threads, and
// the one strided iteration engine every elementwise op runs through.
//
// The engine turns any layout into runs of contiguous work: it drops size-1
// dims, flips dims the output walks backwards, orders dims by the output's
// strides, merges dims that are contiguous for every operand, then splits the
// flattened index range over threads. Runs that are not contiguous for some
// operand are packed into small stack buffers, so kernels only ever see
// contiguous arrays.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <strings.h>

#include <hwy/targets.h>

#include "cpu/host.h"
#include "cpu/engine.h"
#include "cpu/kernels.h"

namespace ct {
namespace cpu {
namespace {

const KernelTable& kernels() { return kernel_table(); }

// ---- threads --------------------------------------------------------------
}  // namespace

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
    fill_kernels(&t);
    fill_more_kernels(&t);
    fill_bessel_kernels(&t);
    fill_binary_kernels(&t);
    return t;
  }();
  return table;
}


int default_threads() {
  static const int n = [] {
    int t = omp_get_max_threads();
    return t > 0 ? t : 1;
  }();
  return n;
}

// Calls body over [0, n) in chunks of at least `grain`, on the caller's pool
// (CTCpuStream.parallel_for), on OpenMP threads, or inline.
void parallel_for(const CTCpuStream* s, int64_t n, int64_t grain, CTParallelBody body, void* ctx) {
  if (n < 2 * grain) {  // one chunk: no thread (the caller's or ours) can pay for itself
    body(ctx, 0, n);
    return;
  }
  if (s && s->parallel_for) {
    s->parallel_for(s->user, n, grain, body, ctx);
    return;
  }
  int threads = s && s->num_threads > 0 ? s->num_threads : default_threads();
  const int64_t chunks = n / grain;
  if (chunks < threads) threads = (int)chunks;
  if (threads <= 1 || omp_in_parallel()) {
    body(ctx, 0, n);
    return;
  }
  // Several chunks per thread, handed out dynamically: when one thread is
  // descheduled (a shared host's steal time, or a framework's own threads on
  // the same cores) the others take its chunks instead of waiting at the join.
  const int64_t nchunks = std::min<int64_t>(chunks, (int64_t)threads * 8);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int64_t c = 0; c < nchunks; ++c) {
    // Chunk edges on 64-item boundaries where chunks hold at least 64 items
    // (elements: threads never share a cache line of output); items that are
    // whole tasks (row blocks, planes) are split as they are: rounding 16
    // row blocks to 64 gave every block to the first chunk, one thread.
    const int64_t step = n / nchunks, round = step >= 64 ? 63 : 0;
    const int64_t b = std::min(n, (step * c + round) & ~round);
    const int64_t e = c + 1 == nchunks ? n : std::min(n, (step * (c + 1) + round) & ~round);
    if (b < e) body(ctx, b, e);
  }
}

CTStatus resolve_stream(const char* fn, void* stream, CTCpuStream* copy, const CTCpuStream** out) {
  const CTCpuStream* st = static_cast<const CTCpuStream*>(stream);
  *out = st;
  if (!st) return CT_OK;
  // sizeof(CTCpuStream) or more (a newer caller), or where an older one's
  // last field ends: a size ending inside a pointer would half copy it (and
  // parallel_for would be called through the garbage).
  const uint32_t n = st->struct_size;
  if (n > 4096 || (n < sizeof(CTCpuStream) && n != offsetof(CTCpuStream, parallel_for) &&
                   n != offsetof(CTCpuStream, user)))
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: stream->struct_size=%u is not that of a CTCpuStream (%zu, or where one of its fields ends): a CPU "
                "op's stream must be NULL or a CTCpuStream*",
                fn, st->struct_size, sizeof(CTCpuStream));
  if (st->struct_size < sizeof(CTCpuStream)) {  // an older, smaller struct
    std::memset(copy, 0, sizeof *copy);
    std::memcpy(copy, st, st->struct_size);
    *out = copy;
  }
  return CT_OK;
}

namespace {

// ---- the strided engine -----------------------------------------------------

constexpr int kMaxOps = 4;  // out + 3 inputs

struct Loop {
  int ndim = 0;
  int nops = 0;
  int64_t shape[CT_MAX_NDIM];
  int64_t stride[kMaxOps][CT_MAX_NDIM];  // bytes
  char* base[kMaxOps];
  int64_t itemsize[kMaxOps];
  bool aligned[kMaxOps];  // base (so every element) is a multiple of itemsize
  ContigKernel kernel = nullptr;
  ContigKernel bkernel[2] = {nullptr, nullptr};  // binary: input 1 or 2 is one element (stride 0)
  const double* params = nullptr;
};

// Whether an operand's elements are at multiples of their size (strides are
// whole elements, so the base decides).
inline bool is_aligned(const char* base, int64_t itemsize) {
  return ((uintptr_t)base & (uintptr_t)(itemsize - 1)) == 0;
}

void build_loop(Loop& L, const CTensor* const* ops, int nops) {
  const CTensor* out = ops[0];
  L.nops = nops;
  for (int k = 0; k < nops; ++k) {
    L.base[k] = static_cast<char*>(ops[k]->data) + ops[k]->byte_offset;
    L.itemsize[k] = ops[k]->dtype.bits / 8;
  }
  // Keep dims with extent > 1; flip those the output walks backwards (an
  // elementwise map does not care about order, only about pairing).
  int dims[CT_MAX_NDIM], n = 0;
  for (int32_t i = 0; i < out->ndim; ++i)
    if (out->shape[i] != 1) dims[n++] = i;
  int64_t st[kMaxOps][CT_MAX_NDIM];
  for (int j = 0; j < n; ++j) {
    const int32_t i = dims[j];
    for (int k = 0; k < nops; ++k) st[k][j] = ct_stride_of(ops[k], i) * L.itemsize[k];
    if (st[0][j] < 0)
      for (int k = 0; k < nops; ++k) {
        L.base[k] += st[k][j] * (out->shape[i] - 1);
        st[k][j] = -st[k][j];
      }
  }
  // Order dims outermost-first by the output's strides (stable insertion sort;
  // ties broken by the inputs so broadcast dims go outward).
  int order[CT_MAX_NDIM];
  for (int j = 0; j < n; ++j) order[j] = j;
  auto outer_than = [&](int a, int b) {
    for (int k = 0; k < nops; ++k) {
      const int64_t sa = std::llabs(st[k][a]), sb = std::llabs(st[k][b]);
      if (sa != sb) return sa > sb;
    }
    return false;
  };
  for (int j = 1; j < n; ++j)
    for (int m = j; m > 0 && outer_than(order[m], order[m - 1]); --m) std::swap(order[m], order[m - 1]);
  // Merge neighbours that are contiguous for every operand.
  L.ndim = 0;
  for (int j = 0; j < n; ++j) {
    const int src = order[j];
    const int64_t ext = out->shape[dims[src]];
    if (L.ndim > 0) {
      const int last = L.ndim - 1;
      bool merge = true;
      for (int k = 0; k < nops && merge; ++k) merge = L.stride[k][last] == st[k][src] * ext;
      if (merge) {
        L.shape[last] *= ext;
        for (int k = 0; k < nops; ++k) L.stride[k][last] = st[k][src];
        continue;
      }
    }
    L.shape[L.ndim] = ext;
    for (int k = 0; k < nops; ++k) L.stride[k][L.ndim] = st[k][src];
    ++L.ndim;
  }
  if (L.ndim == 0) {  // a single element
    L.ndim = 1;
    L.shape[0] = 1;
    for (int k = 0; k < nops; ++k) L.stride[k][0] = L.itemsize[k];
  }
  for (int k = 0; k < nops; ++k) L.aligned[k] = is_aligned(L.base[k], L.itemsize[k]);
}

// A loop of compact row-major operands: one contiguous run of `total`.
void compact_loop(Loop& L, const CTensor* const* ops, int nops, int64_t total) {
  L.nops = nops;
  L.ndim = 1;
  L.shape[0] = total;
  for (int k = 0; k < nops; ++k) {
    L.base[k] = static_cast<char*>(ops[k]->data) + ops[k]->byte_offset;
    L.itemsize[k] = ops[k]->dtype.bits / 8;
    L.stride[k][0] = L.itemsize[k];
    L.aligned[k] = is_aligned(L.base[k], L.itemsize[k]);
  }
}

// Copies n elements of `size` bytes between strided and packed layouts
// (memcpy only: either side may be unaligned).
inline void gather(char* dst, const char* src, int64_t stride, int64_t n, int64_t size) {
  if (stride == size) {  // contiguous but unaligned
    std::memcpy(dst, src, (size_t)(n * size));
    return;
  }
  switch (size) {
    case 1: for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride]; break;
    case 2: for (int64_t i = 0; i < n; ++i) std::memcpy(dst + 2 * i, src + i * stride, 2); break;
    case 4: for (int64_t i = 0; i < n; ++i) std::memcpy(dst + 4 * i, src + i * stride, 4); break;
    default: for (int64_t i = 0; i < n; ++i) std::memcpy(dst + 8 * i, src + i * stride, 8); break;
  }
}
inline void scatter(char* dst, int64_t stride, const char* src, int64_t n, int64_t size) {
  if (stride == size) {
    std::memcpy(dst, src, (size_t)(n * size));
    return;
  }
  switch (size) {
    case 1: for (int64_t i = 0; i < n; ++i) dst[i * stride] = src[i]; break;
    case 2: for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride, src + 2 * i, 2); break;
    case 4: for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride, src + 4 * i, 4); break;
    default: for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride, src + 8 * i, 8); break;
  }
}

// One run of `len` elements along the innermost dim, starting at ptr[].
// An operand whose data is not aligned to its element size (legal: a NumPy
// array at an odd address) is packed like a strided one, through memcpy into
// the aligned stack buffers: kernels (vector code and scalar tails alike)
// only ever see contiguous, aligned arrays.
void run_row(const Loop& L, char* const* ptr, int64_t len) {
  const int last = L.ndim - 1;
  bool contiguous = true;
  ContigKernel kernel = L.kernel;
  for (int k = 0; k < L.nops; ++k) {
    if (L.stride[k][last] == L.itemsize[k] && L.aligned[k]) continue;
    if (L.stride[k][last] == 0 && (k == 1 || k == 2) && L.bkernel[k - 1] && kernel == L.kernel && L.aligned[k]) {
      kernel = L.bkernel[k - 1];  // a broadcast input: the kernel reads its one element
      continue;
    }
    contiguous = false;
  }
  if (contiguous) {
    kernel(ptr, len, L.params);
    return;
  }
  constexpr int64_t kPack = 512;
  alignas(64) char buf[kMaxOps][kPack * 8];
  for (int64_t i = 0; i < len; i += kPack) {
    const int64_t m = std::min(kPack, len - i);
    char* q[kMaxOps];
    for (int k = 0; k < L.nops; ++k) {
      char* p = ptr[k] + i * L.stride[k][last];
      if (L.stride[k][last] == L.itemsize[k] && L.aligned[k]) {
        q[k] = p;
      } else {
        q[k] = buf[k];
        if (k > 0) gather(buf[k], p, L.stride[k][last], m, L.itemsize[k]);
      }
    }
    L.kernel(q, m, L.params);
    if (q[0] == buf[0]) scatter(ptr[0] + i * L.stride[0][last], L.stride[0][last], buf[0], m, L.itemsize[0]);
  }
}

// A broadcast row: an input that every row of the loop reads in full from
// the same address (every outer stride 0, contiguous along the run: a bias
// added to each row of a matrix). Its loads hit L1 while the output's
// stores wait on memory, and when the row sits up to ~1 KiB past the
// output's address modulo 4 KiB, the loads falsely depend on those pending
// stores (4K aliasing: the core compares only the low 12 address bits):
// (4096, 4096) + (4096,) took 4.2-4.5 ms at the bad offsets, 2.5-2.9 ms at
// the others (Zen 4, 2 threads). A thread whose range covers several rows
// reads a copy of the row instead, placed half a page from the output row's
// offset; base[k] then points at it. Rows up to kStagedRowBytes.
constexpr int64_t kStagedRowBytes = 64 << 10;
void stage_broadcast_rows(const Loop& L, char** base) {
  const int last = L.ndim - 1;
  const int64_t inner = L.shape[last];
  thread_local std::vector<char> staged;  // grows to the largest row staged on this thread, kept
  size_t used = 0;
  for (int k = 1; k < L.nops; ++k) {
    const int64_t bytes = inner * L.itemsize[k];
    if (L.stride[k][last] != L.itemsize[k] || !L.aligned[k] || bytes > kStagedRowBytes) continue;
    bool reused = true;
    for (int d = 0; d < last && reused; ++d) reused = L.stride[k][d] == 0;
    if (!reused) continue;
    constexpr size_t kRoom = (size_t)(kMaxOps * (kStagedRowBytes + 4096));
    if (staged.size() < kRoom) staged.resize(kRoom);
    // the copy's address = the output's + 2 KiB, modulo 4 KiB, on a 64-byte line
    const uintptr_t from = reinterpret_cast<uintptr_t>(staged.data()) + used;
    const uintptr_t want = ((reinterpret_cast<uintptr_t>(base[0]) + 2048) & 4095) & ~uintptr_t(63);
    char* dst = reinterpret_cast<char*>(from + ((want - from) & 4095));
    std::memcpy(dst, base[k], (size_t)bytes);
    base[k] = dst;
    used = (size_t)(dst - staged.data()) + (size_t)bytes;
  }
}

// Runs elements [begin, end) of the flattened loop.
void run_range(void* ctx, int64_t begin, int64_t end) {
  const Loop& L = *static_cast<const Loop*>(ctx);
  if (L.ndim == 1) {  // one run (compact operands, and every tiny call)
    char* ptr[kMaxOps];
    for (int k = 0; k < L.nops; ++k) ptr[k] = L.base[k] + begin * L.stride[k][0];
    run_row(L, ptr, end - begin);
    return;
  }
  const int last = L.ndim - 1;
  const int64_t inner = L.shape[last];
  char* base[kMaxOps];
  for (int k = 0; k < L.nops; ++k) base[k] = L.base[k];
  if (end - begin >= 4 * inner) stage_broadcast_rows(L, base);
  int64_t idx[CT_MAX_NDIM];  // only [0, last) is used: no `= {0}` (a rep stos on the hot path)
  for (int d = 0; d < last; ++d) idx[d] = 0;
  int64_t j = 0;
  if (begin != 0) {  // 64-bit divisions cost ~40 cycles: only when a thread starts mid-way
    int64_t rest = begin / inner;
    j = begin - rest * inner;
    for (int d = last - 1; d >= 0; --d) {
      idx[d] = rest % L.shape[d];
      rest /= L.shape[d];
    }
  }
  int64_t pos = begin;
  while (pos < end) {
    const int64_t len = std::min(inner - j, end - pos);
    char* ptr[kMaxOps];
    for (int k = 0; k < L.nops; ++k) {
      char* p = base[k] + j * L.stride[k][last];
      for (int d = 0; d < last; ++d) p += idx[d] * L.stride[k][d];
      ptr[k] = p;
    }
    run_row(L, ptr, len);
    pos += len;
    j = 0;
    for (int d = last - 1; d >= 0; --d) {
      if (++idx[d] < L.shape[d]) break;
      idx[d] = 0;
    }
  }
}

// True if every operand is compact row-major (NULL strides, or strides equal
// to the compact ones; extents of 1 may have any stride).
bool all_compact(const CTensor* const* ops, int nops) {
  for (int k = 0; k < nops; ++k)
    if (!ct_is_compact(ops[k])) return false;
  return true;
}

// How much work one element is, relative to a copy: decides when threads pay
// (one fork/join costs about as much as copying 5e4 float32 elements).
int64_t cost_of(int32_t op, int32_t dt) {
  int64_t c = 1;
  switch (op) {
    case CT_OP_EXP: case CT_OP_EXPM1: case CT_OP_EXP2: case CT_OP_LOG: case CT_OP_LOG1P: case CT_OP_LOG2:
    case CT_OP_SIN: case CT_OP_COS: case CT_OP_TAN: case CT_OP_TANH: case CT_OP_SIGMOID: case CT_OP_GELU:
    case CT_OP_GELU_TANH: case CT_OP_SILU: case CT_OP_SOFTPLUS: case CT_OP_ERF: case CT_OP_ELU:
    case CT_OP_POW_SCALAR: case CT_OP_POW: case CT_OP_ATAN2: case CT_OP_HYPOT: case CT_OP_FLOOR_DIV:
    case CT_OP_MOD: case CT_OP_LOG10: case CT_OP_SINH: case CT_OP_COSH: case CT_OP_ASIN: case CT_OP_ACOS:
    case CT_OP_ATAN: case CT_OP_ASINH: case CT_OP_ACOSH: case CT_OP_ATANH: case CT_OP_ERFC: case CT_OP_LOGIT:
    case CT_OP_MISH: case CT_OP_SELU: case CT_OP_LOGSIGMOID: case CT_OP_CELU: case CT_OP_FMOD: case CT_OP_LOGADDEXP:
    case CT_OP_LOGADDEXP2: case CT_OP_XLOGY: case CT_OP_LDEXP:
      c = 8;
      break;
    default:
      break;
  }
  const uint32_t narrow = CT_DTS_FLOAT & ~((1u << CT_DT_FLOAT32) | (1u << CT_DT_FLOAT64));
  if ((narrow >> dt) & 1u) c *= 2;  // narrow floats: widened
  return c;
}

constexpr int64_t kMinGrain = 1024;  // the fewest elements a thread gets

// The tiny call's shortcut (most calls of a few elements): below the
// threading grain no thread count matters (core has checked the stream),
// and when every operand is compact row-major and aligned the kernel runs
// on them as they are, with no loop built. False: the call goes the
// general way.
inline bool ran_directly(ContigKernel kernel, const CTensor* const* ops, int nops, int64_t total, const double* prm) {
  if (total >= 2 * kMinGrain) return false;
  char* ptr[kMaxOps];
  for (int k = 0; k < nops; ++k) {
    const CTensor* t = ops[k];
    char* p = static_cast<char*>(t->data) + t->byte_offset;
    if (!is_aligned(p, t->dtype.bits / 8) || !ct_is_compact(t)) return false;
    ptr[k] = p;
  }
  kernel(ptr, total, prm);
  return true;
}

// Runs the loop's `total` elements, on threads when the work pays for them.
void run_loop(const CTCpuStream* s, const Loop& L, int64_t total, int32_t op, int32_t dt) {
  if (total < 2 * kMinGrain) {  // below any grain: inline, without weighing the op
    run_range(const_cast<Loop*>(&L), 0, total);
    return;
  }
  const int64_t grain = std::max<int64_t>(32768 / cost_of(op, dt), kMinGrain);
  parallel_for(s, total, grain, &run_range, const_cast<Loop*>(&L));
}

// The contiguous kernel of an elementwise call (NULL: none, which the
// table and the op's dtype mask make an internal error).
inline ContigKernel elementwise_kernel(const KernelTable& kt, const CTElementwiseCall* call) {
  return call->op == CT_OP_CAST ? kt.cast[call->in_dt[0]][call->out_dt]
                                : kt.op[call->op][call->in_dt[call->op == CT_OP_WHERE ? 1 : 0]];
}

// A call core found dense (CT_CALL_DENSE: one aligned contiguous run) and
// too small for threads: the kernel straight on the operands, no layout
// work. False: the general way. Most small calls end here.
inline bool ran_dense(const CTElementwiseCall* call, ContigKernel kernel, const double* prm) {
  if (call->struct_size < offsetof(CTElementwiseCall, flags) + sizeof call->flags ||
      !(call->flags & CT_CALL_DENSE) || call->numel >= 2 * kMinGrain || !kernel)
    return false;
  char* ptr[kMaxOps];
  ptr[0] = static_cast<char*>(call->out->data) + call->out->byte_offset;
  for (int32_t k = 0; k < call->num_inputs; ++k)
    ptr[k + 1] = static_cast<char*>(call->in[k]->data) + call->in[k]->byte_offset;
  kernel(ptr, call->numel, prm);
  return true;
}

// Every elementwise call that is not a small dense one.
__attribute__((noinline)) CTStatus cpu_elementwise_general(const CTElementwiseCall* call, ContigKernel kernel) {
  if (!kernel)
    return fail(CT_ERR_INTERNAL, "cpu backend: no kernel for op %d dtype %d (table and mask disagree)", call->op,
                call->in_dt[0]);
  const CTensor* ops[kMaxOps] = {call->out, call->in[0], call->in[1], call->in[2]};
  const int nops = 1 + call->num_inputs;
  int64_t total = 1;
  for (int32_t d = 0; d < call->out->ndim; ++d) total *= call->out->shape[d];
  if (ran_directly(kernel, ops, nops, total, call->params)) return CT_OK;
  CTCpuStream copy;
  const CTCpuStream* s = nullptr;
  if (CTStatus st = resolve_stream(call->fn, call->stream, &copy, &s)) return st;
  Loop L;
  L.kernel = kernel;
  L.params = call->params;
  if (all_compact(ops, nops)) {
    // Compact row-major operands coalesce to one contiguous run: skip the
    // general loop construction (this is most calls, and all tiny ones).
    compact_loop(L, ops, nops, total);
  } else {
    build_loop(L, ops, nops);
  }
  run_loop(s, L, total, call->op, call->in_dt[0]);
  return CT_OK;
}

CTStatus cpu_elementwise(const CTElementwiseCall* call) {
  const ContigKernel kernel = elementwise_kernel(kernels(), call);
  if (ran_dense(call, kernel, call->params)) return CT_OK;
  return cpu_elementwise_general(call, kernel);
}

// Binary ops: each input viewed with out's shape (broadcast dims get stride
// 0), then the same engine; a run along which an input is broadcast uses the
// kernel that reads that input's one element.
__attribute__((noinline)) CTStatus cpu_binary_general(const CTElementwiseCall* call) {
  const KernelTable& kt = kernels();
  const int32_t dt = call->in_dt[0];
  const ContigKernel kernel = kt.op[call->op][dt];
  if (!kernel)
    return fail(CT_ERR_INTERNAL, "cpu backend: no kernel for op %d dtype %d (table and mask disagree)", call->op, dt);
  const CTensor* out = call->out;
  int64_t total = 1;
  for (int32_t d = 0; d < out->ndim; ++d) total *= out->shape[d];
  // Stream the stores when the output cannot stay in cache anyway.
  const double prm[2] = {total * (int64_t)(out->dtype.bits / 8) >= (int64_t(8) << 20) ? 1.0 : 0.0, 0.0};
  const CTensor* ops[3] = {out, call->in[0], call->in[1]};
  bool same_shapes = true;
  for (int k = 1; k < 3 && same_shapes; ++k) {
    same_shapes = ops[k]->ndim == out->ndim;
    for (int32_t d = 0; same_shapes && d < out->ndim; ++d) same_shapes = ops[k]->shape[d] == out->shape[d];
  }
  if (same_shapes && ran_directly(kernel, ops, 3, total, prm)) return CT_OK;
  CTCpuStream copy;
  const CTCpuStream* s = nullptr;
  if (CTStatus st = resolve_stream(call->fn, call->stream, &copy, &s)) return st;
  Loop L;
  L.kernel = kernel;
  L.bkernel[0] = kt.bcast[call->op][dt][0];
  L.bkernel[1] = kt.bcast[call->op][dt][1];
  L.params = prm;
  if (same_shapes && all_compact(ops, 3)) {
    compact_loop(L, ops, 3, total);
  } else {
    // Views of a and b with out's rank and shape: missing leading dims and
    // extents of 1 that out does not have become stride 0.
    int64_t st[2][CT_MAX_NDIM];
    CTensor views[3] = {*out, *call->in[0], *call->in[1]};
    for (int k = 1; k < 3; ++k) {
      const CTensor* t = ops[k];
      const int32_t lead = out->ndim - t->ndim;
      for (int32_t d = 0; d < out->ndim; ++d) {
        const int32_t td = d - lead;
        st[k - 1][d] = td < 0 || (t->shape[td] == 1 && out->shape[d] != 1) ? 0 : ct_stride_of(t, td);
      }
      views[k].ndim = out->ndim;
      views[k].shape = out->shape;
      views[k].strides = st[k - 1];
    }
    const CTensor* vops[3] = {&views[0], &views[1], &views[2]};
    build_loop(L, vops, 3);
  }
  run_loop(s, L, total, call->op, dt);
  return CT_OK;
}

CTStatus cpu_binary(const CTElementwiseCall* call) {
  static const double kNoStream[2] = {0.0, 0.0};  // small: plain stores
  if (ran_dense(call, kernels().op[call->op][call->in_dt[0]], kNoStream)) return CT_OK;
  return cpu_binary_general(call);
}

// ---- the kernel table's support question --------------------------------------

CTStatus no_kernel(const CTSupportQuery* q) {
  return fail(CT_ERR_UNSUPPORTED, "%s: the cpu backend has no %s kernel for %s", q->fn, op_name(q->op),
              dtype_name(q->dt));
}

CTStatus cpu_supports(const CTSupportQuery* q) {
  if (q->op < 0 || q->op >= CT_OP_END_ || q->dt < 0 || q->dt >= CT_DT_COUNT) return no_kernel(q);
  const KernelTable& kt = kernels();
  bool has = false;
  switch (q->kind) {
    case CT_KIND_UNARY:
    case CT_KIND_UNARY_PARAM:
    case CT_KIND_TERNARY:
    case CT_KIND_BINARY: has = q->op != CT_OP_CAST && kt.op[q->op][q->dt] != nullptr; break;
    case CT_KIND_CAST:
      has = q->op == CT_OP_CAST && (q->out_dt < 0 ? kt.cast[q->dt][0] != nullptr
                                                  : q->out_dt < CT_DT_COUNT && kt.cast[q->dt][q->out_dt] != nullptr);
      break;
    case CT_KIND_REDUCE:
    case CT_KIND_ALONG_AXIS: has = has_reduce_kernel(q->op, q->dt); break;
    case CT_KIND_NN: return nn_supports(q);
    case CT_KIND_INDEX: has = q->op == CT_OP_TAKE || q->op == CT_OP_GATHER || q->op == CT_OP_SCATTER ||
                              q->op == CT_OP_SCATTER_ADD || q->op == CT_OP_INDEX_ADD;
      break;
    default: break;
  }
  return has ? CT_OK : no_kernel(q);
}

// ---- memory and devices -------------------------------------------------------

int32_t cpu_device_count() { return 1; }

CTStatus cpu_device_info(int32_t, CTDeviceInfo* info) {
  info->device.device_type = CT_CPU;
  info->device.device_id = 0;
  std::snprintf(info->name, sizeof info->name, "host CPU (SIMD target %s)", kernels().target);
  std::snprintf(info->backend, sizeof info->backend, "cpu");
  const unsigned hc = std::thread::hardware_concurrency();
  info->compute_units = hc ? (int32_t)hc : 1;
  info->default_threads = default_threads();
  info->memory_bytes = 0;
  return CT_OK;
}

// Blocks from 2 MiB on are 2 MiB-aligned whole huge pages and advised as
// such (where transparent huge pages are "madvise", as on Debian's default,
// nothing else gives them): a pass over 340 MB then misses the TLB 512x
// less often (add of 85M float32 on the AVX-512 host: 37 -> 44 GB/s).
// NumPy advises its large arrays the same way. Smaller blocks are 64-byte
// aligned.
constexpr size_t kHugePage = size_t(2) << 20;

// Freed huge-page blocks are kept for the next allocation of the same rounded
// size, up to a bound (CT_CPU_CACHE_MB, default 1024; 0 turns it off). A fresh
// block costs its pages' first touch: the kernel zeroes 64 MB in about 14 ms
// on these hosts, against 4 ms for a tanh over it. Results allocated call
// after call (Python without out=, a Dask worker's chunk tasks) then reuse
// warm memory, as a GPU caching allocator does. Under AddressSanitizer the
// cache is off, so that a use after free stays visible.
class BlockCache {
 public:
  void* take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(rounded);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    cached_ -= rounded;
    return p;
  }
  void note(void* p, size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    size_[p] = rounded;
  }
  // true when p is a large block now held by the cache (or freed here); false when it is not one of ours
  bool give(void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = size_.find(p);
    if (it == size_.end()) return false;
    const size_t rounded = it->second;
    if (cached_ + rounded <= limit()) {
      free_.emplace(rounded, p);
      cached_ += rounded;
    } else {
      size_.erase(it);
      std::free(p);
    }
    return true;
  }

 private:
  static size_t limit() {
#if defined(__SANITIZE_ADDRESS__)
    return 0;
#else
    static const size_t mb = [] {
      const char* e = std::getenv("CT_CPU_CACHE_MB");
      return e && *e ? (size_t)std::strtoull(e, nullptr, 10) : (size_t)1024;
    }();
    return mb << 20;
#endif
  }
  std::mutex mu_;
  std::unordered_map<void*, size_t> size_;  // every live or cached large block: its rounded size
  std::multimap<size_t, void*> free_;       // the cached ones, by size
  size_t cached_ = 0;
};

BlockCache& block_cache() {
  static BlockCache* c = new BlockCache;  // never destroyed: frees may come from static destructors
  return *c;
}

CTStatus cpu_malloc(int32_t, size_t bytes, void** ptr) {
  const size_t align = bytes >= kHugePage ? kHugePage : 64;
  const size_t rounded = (bytes + align - 1) / align * align;
  if (rounded < bytes) return fail(CT_ERR_OUT_OF_MEMORY, "ct_malloc: %zu bytes is too large", bytes);
  if (align == kHugePage) {
    if (void* p = block_cache().take(rounded)) {
      *ptr = p;
      return CT_OK;
    }
  }
  void* p = std::aligned_alloc(align, rounded ? rounded : 64);
  if (!p) return fail(CT_ERR_OUT_OF_MEMORY, "ct_malloc: could not allocate %zu bytes on the CPU", bytes);
  if (align == kHugePage) {
#ifdef MADV_HUGEPAGE
    (void)madvise(p, rounded, MADV_HUGEPAGE);  // advice: a refusal changes nothing
#endif
    block_cache().note(p, rounded);
  }
  *ptr = p;
  return CT_OK;
}

void cpu_free(int32_t, void* ptr) {
  if (ptr && !block_cache().give(ptr)) std::free(ptr);
}

CTStatus cpu_synchronize(int32_t, void*) { return CT_OK; }

CTStatus cpu_check_stream(const char* fn, int32_t, void* stream) {
  CTCpuStream copy;
  const CTCpuStream* s = nullptr;
  return resolve_stream(fn, stream, &copy, &s);
}

// Host memory to host memory, any strides: the elementwise engine's cast
// kernel for the dtype onto itself (a copy).
CTStatus cpu_copy(const CTCopyCall* c) {
  CTElementwiseCall call;
  std::memset(&call, 0, sizeof call);
  call.struct_size = sizeof call;
  call.op = CT_OP_CAST;
  call.fn = c->fn;
  call.num_inputs = 1;
  call.in[0] = c->src;
  call.in_dt[0] = c->dt;
  call.in_dt[1] = call.in_dt[2] = -1;
  call.out = c->dst;
  call.out_dt = c->dt;
  call.stream = c->stream;
  return cpu_elementwise(&call);
}

}  // namespace

CTStatus copy_tensor(const char* fn, const CTensor* src, const CTensor* dst, int32_t dt, const CTCpuStream* s) {
  CTCopyCall c;
  c.struct_size = sizeof c;
  c.dt = dt;
  c.fn = fn;
  c.src = src;
  c.dst = dst;
  c.stream = const_cast<CTCpuStream*>(s);
  return cpu_copy(&c);
}

const CTHost* g_host = nullptr;

// CT_CPU_SIMD=NAME, a Highway target name as the device's name shows it
// (AVX3_ZEN4, AVX3, AVX2, SSE4, SSSE3, ...): the CPU kernels use at most
// that target (every better one is disabled in Highway's dispatch, for this
// process), so the code paths of older CPUs run and are tested on a new one.
// Set before the library loads; a name that is not a compiled target
// changes nothing (the device name says which target runs).
void limit_simd_targets() {
  const char* want = std::getenv("CT_CPU_SIMD");
  if (want == nullptr || *want == 0) return;
  for (int b = 0; b < 63; ++b) {
    const int64_t bit = int64_t(1) << b;
    if ((HWY_TARGETS & bit) != 0 && strcasecmp(hwy::TargetName(bit), want) == 0) {
      hwy::DisableTargets(bit - 1);  // better targets have lower bits
      return;
    }
  }
}

}  // namespace cpu
}  // namespace ct

CTStatus ct_cpu_backend_register(const CTHost* h) {
  using namespace ct::cpu;
  g_host = h;
  limit_simd_targets();  // before any kernel table is filled
  static CTDeviceInterface dev;
  static CTKernelInterface kern;
  std::memset(&dev, 0, sizeof dev);
  dev.struct_size = sizeof dev;
  dev.abi_version = CT_PLUGIN_ABI_VERSION;
  dev.device_type = CT_CPU;
  dev.name = "cpu";
  dev.data_is_address = 1;
  dev.host_accessible = 1;
  dev.device_count = &cpu_device_count;
  dev.device_info = &cpu_device_info;
  dev.malloc = &cpu_malloc;
  dev.free = &cpu_free;
  dev.copy = &cpu_copy;
  dev.synchronize = &cpu_synchronize;
  dev.check_stream = &cpu_check_stream;
  std::memset(&kern, 0, sizeof kern);
  kern.struct_size = sizeof kern;
  kern.abi_version = CT_PLUGIN_ABI_VERSION;
  kern.device_type = CT_CPU;
  kern.name = "cpu";
  kern.supports = &cpu_supports;
  kern.elementwise = &cpu_elementwise;
  kern.binary = &cpu_binary;
  kern.reduce = &cpu_reduce;
  kern.along_axis = &cpu_along_axis;
  kern.nn_variant = &nn_variant;
  kern.nn_plan_create = &nn_plan_create;
  kern.nn_plan_execute = &nn_plan_execute;
  kern.nn_plan_destroy = &nn_plan_destroy;
  kern.index = &cpu_index;
  return h->register_backend(&dev, &kern);
}
