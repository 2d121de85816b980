// nn.cc — NN ops on CUDA: the NN slots (nn_why, the plans' dispatch by op,
// nn_shutdown) and matmul. matmul runs through cuBLASLt; conv2d and its
// backward ops through cuDNN (nn_conv.cc); max_pool2d, avg_pool2d, their
// backward ops, batch_norm (inference, training, backward), layer_norm
// (forward, backward) and scaled_dot_product_attention through the OpenCL
// module's own kernels in the CUDA dialect (nn_pool.cc, nn_norm.cc,
// nn_attention.cc; src/gpu/nn_kernels.cc), float16, bfloat16 and float32.
//
// matmul, out[.., M, N] = act(a[.., M, K] @ b[.., K, N] + bias), as the CPU
// and OpenCL backends define it (core does K = 0 and empty outputs itself):
//  - Layouts. cuBLASLt is column-major; a row-major out (M, N) is the
//    column-major N x M matrix out^T, so the plan computes out^T = b^T a^T
//    ("swapped"); a column-major out is computed directly as out = a b.
//    Transposes come from the strides (unit stride on the last dim or on the
//    one before, leading dimension the other stride): no flag. An operand
//    whose last two strides are neither (overlapping rows, stride 0, negative
//    strides) is packed into the workspace, compact row-major, by the
//    module's strided copy kernel; an out that is neither is computed into
//    the workspace and copied out the same way.
//  - Batches (NumPy broadcasting, out has the broadcast batch shape): the
//    longest run of innermost batch dims that every operand walks with one
//    stride (0 for a broadcast operand) is one strided-batched call
//    (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT / STRIDED_BATCH_OFFSET); the batch
//    dims outside it are a loop of such calls on the host.
//  - Types: float32 with CUBLAS_COMPUTE_32F (no TF32: exact float32 like the
//    CPU), float16 and bfloat16 stored as CUDA_R_16F / CUDA_R_16BF with
//    CUBLAS_COMPUTE_32F (float accumulation; split-K partial sums only in
//    float), float64 with CUBLAS_COMPUTE_64F. alpha = 1, beta = 0.
//  - Bias and activation: a bias of the data dtype that varies only along
//    the rows of cuBLASLt's D (N swapped: the usual (N,) bias; M direct) is
//    CUBLASLT_EPILOGUE_BIAS, added in the compute type before the one
//    rounding. Any other bias is the module's broadcasting binary `add`
//    after the product, and the activation is the module's unary kernel of
//    the activation's op (CT_OP_RELU, CT_OP_GELU, ...): the ops' own rows,
//    not a second copy of their formulas. cuBLASLt's RELU epilogue is not
//    used: it is documented as max(x, 0), which need not keep NaN (ctensor's
//    relu does); kReluEpilogue below turns it on once a GPU test shows it does.
//  - Algorithms: cublasLtMatmulAlgoGetHeuristic at plan creation under a
//    workspace limit of 32 MiB, for two alignments, since the plan cannot
//    see the data pointers: 16 bytes (the usual case; with the bias
//    epilogue) and the element size (any valid tensor; no bias epilogue).
//    Execution picks the first whose alignment the call's pointers and
//    batch strides meet. workspace_bytes = the larger algorithm's cuBLASLt
//    workspace + the packed operands, laid out from the workspace rounded up
//    to 256 bytes (hence up to 255 bytes of slack).
//  - One cublasLtHandle_t per device, made at the device's first plan under
//    a mutex with the device current, destroyed by nn_shutdown() when the
//    module unloads. Execution uses the call's stream and the caller's
//    workspace only: it never allocates, synchronises or aborts.
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>


#include "backend.h"
#include "lazy.h"
#include "nn_internal.h"

namespace ctcu {

const char* nn_why(int32_t op, int32_t dt, std::string* buf) {
  if (is_conv(op)) return conv_why(op, dt, buf);
  if (is_pool(op) || is_norm(op) || is_attention(op)) return pool_norm_why(dt);
  if (op != CT_OP_MATMUL) return "the CUDA module has no kernel for this NN op (plugin ops included)";
#ifdef CT_HAVE_CUBLASLT
  switch (dt) {
    case CT_DT_FLOAT32:
    case CT_DT_FLOAT64:
    case CT_DT_FLOAT16:
    case CT_DT_BFLOAT16: {
      std::string why;
      const bool loaded = lt(&why) != nullptr;
      return unusable(loaded, "cuBLASLt, which runs matmul on CUDA,", why, buf);
    }
    default: return "matmul on CUDA (cuBLASLt) runs float32, float64, float16 and bfloat16";
  }
#else
  (void)dt;
  return "this CUDA module was built without cuBLASLt: no matmul";
#endif
}

#ifdef CT_HAVE_CUBLASLT

namespace {

constexpr size_t kLtWorkspaceMax = size_t(32) << 20;  // the most cuBLASLt workspace a plan asks for
constexpr uint64_t kVecAlign = 16;                     // the alignment of the fast algorithm
constexpr bool kReluEpilogue = false;                  // see the top of the file


// (after a plan exists: cuBLASLt is loaded)
CTStatus lt_fail(const char* fn, const char* what, cublasStatus_t s) {
  return g_host->set_error(s == CUBLAS_STATUS_ALLOC_FAILED ? CT_ERR_OUT_OF_MEMORY : CT_ERR_BACKEND,
                           "%s: cuBLASLt %s failed: %s (%d): %s", fn, what, lt()->cublasLtGetStatusName(s), (int)s,
                           lt()->cublasLtGetStatusString(s));
}

// ---- handles: one per device, made lazily, destroyed by nn_shutdown ------------

std::mutex g_lt_mu;
std::vector<cublasLtHandle_t>* g_lt = nullptr;  // by device id; freed by nn_shutdown (no static destructor)

CTStatus lt_handle(const char* fn, int32_t id, cublasLtHandle_t* h) {
  std::lock_guard<std::mutex> lock(g_lt_mu);
  if (!g_lt) g_lt = new std::vector<cublasLtHandle_t>((size_t)device_count(), nullptr);
  if (id < 0 || (size_t)id >= g_lt->size())
    return g_host->set_error(CT_ERR_NOT_FOUND, "%s: there is no CUDA device %d", fn, (int)id);
  cublasLtHandle_t& slot = (*g_lt)[(size_t)id];
  if (!slot) {
    DeviceGuard guard(id);
    if (guard.error() != cudaSuccess) return cuda_fail(fn, "cudaSetDevice", guard.error());
    const cublasStatus_t s = lt()->cublasLtCreate(&slot);
    if (s != CUBLAS_STATUS_SUCCESS) {
      slot = nullptr;
      return lt_fail(fn, "cublasLtCreate", s);
    }
  }
  *h = slot;
  return CT_OK;
}

// ---- the plan -------------------------------------------------------------------

// A matrix operand's last two dims (R, C) with strides (sr, sc) as a
// column-major matrix cuBLASLt can read without a copy:
//  rows_c: stored with C as its rows (unit stride along C, ld = sr): t row-major, t^T to cuBLASLt;
//  rows_r: stored with R as its rows (unit stride along R, ld = sc): t column-major.
// ld is at least the stored rows (cuBLASLt's rule), and the extents of 1 take any stride.
struct Cls {
  bool rows_c = false, rows_r = false;
  int64_t ld_c = 0, ld_r = 0;
};

Cls classify(int64_t R, int64_t C, int64_t sr, int64_t sc) {
  Cls k;
  k.rows_c = (sc == 1 || C == 1) && (R == 1 || sr >= C);
  k.ld_c = R == 1 ? C : sr;
  k.rows_r = (sr == 1 || R == 1) && (C == 1 || sc >= R);
  k.ld_r = C == 1 ? R : sc;
  return k;
}

// One tensor (a, b or out) as cuBLASLt sees it.
struct Side {
  bool pack = false;                 // through a compact row-major copy in the workspace
  size_t ws_off = 0;                 // that copy: bytes from the aligned workspace base
  size_t pack_bytes = 0;
  int64_t st[CT_MAX_NDIM] = {0};     // its strides (elements), the packed copy's when packed
  cublasOperation_t op = CUBLAS_OP_N;
  uint64_t rows = 0, cols = 0;       // the stored column-major matrix
  int64_t ld = 0;
  int64_t inner = 0;                 // stride (elements) between the matrices of the strided batch
  int64_t outer[CT_MAX_NDIM] = {0};  // strides (elements) along the looped batch dims
  uint64_t stride_bits = 0;          // the byte strides the pointer moves by, ORed (alignment)
  cublasLtMatrixLayout_t layout = nullptr;
};

// An algorithm for one alignment of the operands.
struct Variant {
  bool ok = false;
  bool bias_epi = false, relu_epi = false;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulAlgo_t algo;
  size_t ws = 0;
};

enum { kA = 0, kB = 1, kOut = 2 };

struct MatmulPlan : NNPlan {
  int32_t device_id = 0;
  int32_t dt = 0;
  size_t is = 0;  // element size
  int32_t act = CT_ACTIVATION_NONE;
  int64_t M = 0, N = 0, K = 0;
  bool swapped = true;                    // D = out^T = b^T a^T; else D = out = a b
  cudaDataType_t type = CUDA_R_32F, scale = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  int32_t outer_nd = 0;                   // out's batch dims [0, outer_nd) are looped on the host
  int64_t outer_shape[CT_MAX_NDIM] = {0};
  int64_t outer_count = 1;
  int32_t inner_count = 1;                // the rest: one strided-batched call
  Side side[3];                           // a, b, out
  cublasLtHandle_t handle = nullptr;      // the device's (lives until nn_shutdown)
  Variant v[2];                           // [0]: 16-byte aligned operands, [1]: element-aligned
  size_t lt_ws = 0;                       // cuBLASLt's workspace, at the aligned base
  size_t ws_bytes = 0;

  const Side& lt_a() const { return side[swapped ? kB : kA]; }
  const Side& lt_b() const { return side[swapped ? kA : kB]; }

  ~MatmulPlan() {
    for (Variant& x : v)
      if (x.desc) lt()->cublasLtMatmulDescDestroy(x.desc);
    for (Side& s : side)
      if (s.layout) lt()->cublasLtMatrixLayoutDestroy(s.layout);
  }
};

// Whether out's batch dims [lo, nb) (extents e) walk in row-major order by
// one stride *S >= 0 of st (dims of extent 1 take any stride).
bool one_stride(const int64_t* e, const int64_t* st, int32_t lo, int32_t nb, int64_t* S) {
  int64_t span = 1;
  bool have = false;
  *S = 0;
  for (int32_t d = nb - 1; d >= lo; --d) {
    if (e[d] == 1) continue;
    if (!have) {
      have = true;
      *S = st[d];
      if (*S < 0) return false;
    } else if (st[d] != *S * span) {
      return false;
    }
    span *= e[d];
  }
  return true;
}

// The bias broadcast to out: its stride (elements) along each dim of out, 0 where it broadcasts.
void bias_strides(const CTensor* bias, const CTensor* out, int64_t* bst) {
  const int32_t nd = out->ndim;
  for (int32_t i = 0; i < nd; ++i) {
    const int32_t j = i - (nd - bias->ndim);
    bst[i] = (j < 0 || bias->shape[j] == 1) ? 0 : stride_of(bias, j);
  }
}

// Whether bias is a packed vector along out's dim `dim` alone (the rows of
// cuBLASLt's D), of the data dtype: what CUBLASLT_EPILOGUE_BIAS adds.
bool bias_vector(const CTensor* bias, const CTensor* out, int32_t dim, int32_t dt) {
  if (!bias || ct_dtype_index(bias->dtype) != dt) return false;
  const int32_t nd = out->ndim;
  for (int32_t i = 0; i < nd; ++i) {
    const int32_t j = i - (nd - bias->ndim);
    const int64_t e = j < 0 ? 1 : bias->shape[j];
    if (i != dim) {
      if (e != 1) return false;
    } else if (e != out->shape[i] || (e > 1 && stride_of(bias, j) != 1)) {
      return false;
    }
  }
  return true;
}

// The stored matrix of side s for a tensor of last dims (R, C): cuBLASLt's
// op(stored) is t^T when want_t, else t. Needs k.rows_c || k.rows_r.
void orient(Side* s, const Cls& k, int64_t R, int64_t C, bool want_t) {
  const bool stored_t = want_t ? k.rows_c : !k.rows_r;  // stored is t^T (rows C); op N preferred
  s->op = stored_t == want_t ? CUBLAS_OP_N : CUBLAS_OP_T;
  s->rows = (uint64_t)(stored_t ? C : R);
  s->cols = (uint64_t)(stored_t ? R : C);
  s->ld = stored_t ? k.ld_c : k.ld_r;
}

template <class T>
CTStatus desc_attr(const char* fn, cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const T& v,
                   const char* name) {
  const cublasStatus_t s = lt()->cublasLtMatmulDescSetAttribute(d, a, &v, sizeof v);
  if (s == CUBLAS_STATUS_SUCCESS) return CT_OK;
  const std::string what = std::string("cublasLtMatmulDescSetAttribute(") + name + ")";
  return lt_fail(fn, what.c_str(), s);
}

template <class T>
CTStatus layout_attr(const char* fn, cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, const T& v,
                     const char* name) {
  const cublasStatus_t s = lt()->cublasLtMatrixLayoutSetAttribute(l, a, &v, sizeof v);
  if (s == CUBLAS_STATUS_SUCCESS) return CT_OK;
  const std::string what = std::string("cublasLtMatrixLayoutSetAttribute(") + name + ")";
  return lt_fail(fn, what.c_str(), s);
}

template <class T>
bool pref_attr(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a, const T& v) {
  return lt()->cublasLtMatmulPreferenceSetAttribute(p, a, &v, sizeof v) == CUBLAS_STATUS_SUCCESS;
}

// The operation's attributes on d (created or initialised with the plan's
// compute and scale types): transposes, epilogue, bias pointer.
CTStatus set_desc(const char* fn, const MatmulPlan& p, cublasLtMatmulDesc_t d, uint32_t epilogue, const void* bias) {
  const int32_t ta = p.lt_a().op, tb = p.lt_b().op;
  if (CTStatus s = desc_attr(fn, d, CUBLASLT_MATMUL_DESC_TRANSA, ta, "TRANSA")) return s;
  if (CTStatus s = desc_attr(fn, d, CUBLASLT_MATMUL_DESC_TRANSB, tb, "TRANSB")) return s;
  if (epilogue == CUBLASLT_EPILOGUE_DEFAULT) return CT_OK;
  if (CTStatus s = desc_attr(fn, d, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, "EPILOGUE")) return s;
  if (epilogue & CUBLASLT_EPILOGUE_BIAS)
    if (CTStatus s = desc_attr(fn, d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias, "BIAS_POINTER")) return s;
  return CT_OK;
}

// Numerical implementations cuBLASLt may not use for the plan's dtype: no
// input down-conversion (TF32, 16-bit, 8-bit) and no 16-bit accumulator.
uint64_t impl_mask(int32_t dt) {
  uint64_t no = CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_16F | CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_TF32 |
                CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8I | CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E4M3 |
                CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E5M2;
  if (dt != CT_DT_FLOAT16) no |= CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16F;
  if (dt != CT_DT_BFLOAT16) no |= CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16BF;
  if (dt == CT_DT_FLOAT64)
    no |= CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_32F | CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F;
  return ~no;
}

// Variant v of plan p: its descriptor and the heuristic's first algorithm
// for operands aligned to `align` bytes. No algorithm leaves v->ok false
// (and says why in *why); a failing descriptor call is an error.
CTStatus make_variant(const char* fn, const MatmulPlan& p, Variant* v, uint64_t align, bool bias_epi, bool relu_epi,
                      std::string* why) {
  v->ok = false;
  v->bias_epi = bias_epi;
  v->relu_epi = relu_epi;
  v->epilogue = bias_epi ? (relu_epi ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                         : (relu_epi ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
  if (v->desc) lt()->cublasLtMatmulDescDestroy(v->desc);
  v->desc = nullptr;
  cublasStatus_t st = lt()->cublasLtMatmulDescCreate(&v->desc, p.compute, p.scale);
  if (st != CUBLAS_STATUS_SUCCESS) {
    v->desc = nullptr;
    return lt_fail(fn, "cublasLtMatmulDescCreate", st);
  }
  // The heuristic does not read the bias but takes its alignment from the
  // pointer's value: a stand-in with exactly the alignment execution checks.
  const void* bias_stand_in = reinterpret_cast<const void*>((uintptr_t)kVecAlign);
  if (CTStatus s = set_desc(fn, p, v->desc, v->epilogue, bias_stand_in)) return s;
  cublasLtMatmulPreferenceOpaque_t pref_space;
  const cublasLtMatmulPreference_t pref = &pref_space;
  st = lt()->cublasLtMatmulPreferenceInit_internal(pref, sizeof(*pref));
  if (st != CUBLAS_STATUS_SUCCESS) return lt_fail(fn, "cublasLtMatmulPreferenceInit", st);
  const uint64_t ws_max = kLtWorkspaceMax;
  const uint32_t al = (uint32_t)align;
  bool set = pref_attr(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, ws_max) &&
             pref_attr(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, al) &&
             pref_attr(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, al) &&
             pref_attr(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, al) &&
             pref_attr(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, al) &&
             pref_attr(pref, CUBLASLT_MATMUL_PREF_IMPL_MASK, impl_mask(p.dt));
  if (set && (p.dt == CT_DT_FLOAT16 || p.dt == CT_DT_BFLOAT16)) {
    // split-K partial sums in float (the compute type), never rounded to the 16-bit output type in between
    const uint32_t red = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    set = pref_attr(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, red);
  }
  if (!set) return g_host->set_error(CT_ERR_BACKEND, "%s: cuBLASLt cublasLtMatmulPreferenceSetAttribute failed", fn);
  const Side& d = p.side[kOut];
  cublasLtMatmulHeuristicResult_t res;
  std::memset(&res, 0, sizeof res);
  int found = 0;
  st = lt()->cublasLtMatmulAlgoGetHeuristic(p.handle, v->desc, p.lt_a().layout, p.lt_b().layout, d.layout, d.layout, pref, 1,
                                      &res, &found);
  if (st != CUBLAS_STATUS_SUCCESS || found < 1 || res.state != CUBLAS_STATUS_SUCCESS) {
    const cublasStatus_t e = st != CUBLAS_STATUS_SUCCESS ? st : found < 1 ? CUBLAS_STATUS_NOT_SUPPORTED : res.state;
    *why = std::string(lt()->cublasLtGetStatusName(e)) + " for " + std::to_string((unsigned long long)align) +
           "-byte aligned operands" + (bias_epi ? " with the bias epilogue" : "");
    return CT_OK;
  }
  v->algo = res.algo;
  v->ws = res.workspaceSize;
  v->ok = true;
  return CT_OK;
}

}  // namespace

static CTStatus matmul_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives) {
  const char* fn = call->fn;
  if (const char* why = nn_why(call->op, call->dt, nullptr))
    return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: %s", fn, why);
  const CTensor *a = call->t[0], *b = call->t[1], *bias = call->t[2], *out = call->t[3];
  const CTMatmulDesc* desc = static_cast<const CTMatmulDesc*>(call->desc);
  auto p = std::make_unique<MatmulPlan>();
  MatmulPlan& P = *p;
  P.op = CT_OP_MATMUL;
  P.device_id = out->device.device_id;
  P.dt = call->dt;
  P.is = itemsize_of(out);
  P.act = desc ? desc->activation : CT_ACTIVATION_NONE;
  P.M = a->shape[a->ndim - 2];
  P.K = a->shape[a->ndim - 1];
  P.N = b->shape[b->ndim - 1];
  switch (P.dt) {
    case CT_DT_FLOAT64:
      P.type = P.scale = CUDA_R_64F;
      P.compute = CUBLAS_COMPUTE_64F;
      break;
    case CT_DT_FLOAT16: P.type = CUDA_R_16F; break;
    case CT_DT_BFLOAT16: P.type = CUDA_R_16BF; break;
    default: break;  // float32: CUDA_R_32F, CUBLAS_COMPUTE_32F (not ..._FAST_TF32)
  }
  if (P.M > INT32_MAX || P.N > INT32_MAX || P.K > INT32_MAX)
    return g_host->set_error(CT_ERR_UNSUPPORTED,
                             "%s: matmul on CUDA: M=%lld, N=%lld, K=%lld; cuBLASLt takes extents up to 2^31 - 1", fn,
                             (long long)P.M, (long long)P.N, (long long)P.K);
  if (!device(P.device_id)) return g_host->set_error(CT_ERR_NOT_FOUND, "%s: there is no CUDA device %d", fn, (int)P.device_id);
  DeviceGuard guard(P.device_id);
  if (guard.error() != cudaSuccess) return cuda_fail(fn, "cudaSetDevice", guard.error());
  if (CTStatus s = lt_handle(fn, P.device_id, &P.handle)) return s;

  // Each tensor's last two dims: read in place, or packed compact row-major.
  const CTensor* ts[3] = {a, b, out};
  const int64_t R[3] = {P.M, P.K, P.M}, C[3] = {P.K, P.N, P.N};
  Cls k[3];
  for (int i = 0; i < 3; ++i) {
    const CTensor* t = ts[i];
    Side& s = P.side[i];
    k[i] = classify(R[i], C[i], stride_of(t, t->ndim - 2), stride_of(t, t->ndim - 1));
    s.pack = !k[i].rows_c && !k[i].rows_r;
    if (s.pack) k[i] = classify(R[i], C[i], C[i], 1);
    int64_t compact = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      s.st[d] = s.pack ? compact : stride_of(t, d);
      compact *= t->shape[d];
    }
    if (s.pack) s.pack_bytes = (size_t)numel_of(t) * P.is;
  }
  // Orientation: D = out^T (out row-major; the bias epilogue adds a vector
  // along N) or D = out (out column-major; the epilogue's vector is along M).
  const int32_t nd = out->ndim;
  const bool epi_swapped = bias_vector(bias, out, nd - 1, P.dt), epi_direct = bias_vector(bias, out, nd - 2, P.dt);
  if (k[kOut].rows_c && k[kOut].rows_r) P.swapped = epi_swapped || !epi_direct;
  else P.swapped = k[kOut].rows_c;
  for (int i = 0; i < 3; ++i) orient(&P.side[i], k[i], R[i], C[i], P.swapped);

  // Batches: the longest run of innermost batch dims that every tensor walks
  // by one stride is cuBLASLt's strided batch; the dims before it a loop.
  const int32_t nb = nd - 2;
  int64_t bst[3][CT_MAX_NDIM];
  for (int i = 0; i < 3; ++i)
    for (int32_t d = 0; d < nb; ++d) {
      const CTensor* t = ts[i];
      const int32_t td = d - (nb - (t->ndim - 2));
      bst[i][d] = (td < 0 || t->shape[td] == 1) ? 0 : P.side[i].st[td];
    }
  int32_t L = nb;
  int64_t S[3] = {0, 0, 0};
  for (; L > 0; --L) {
    int64_t count = 1;
    for (int32_t d = nb - L; d < nb; ++d) count *= out->shape[d];
    if (count > INT32_MAX) continue;
    bool ok = true;
    for (int i = 0; ok && i < 3; ++i) ok = one_stride(out->shape, bst[i], nb - L, nb, &S[i]);
    if (ok) break;
  }
  if (L == 0) S[0] = S[1] = S[2] = 0;
  P.outer_nd = nb - L;
  for (int32_t d = 0; d < nb; ++d) {
    if (d < P.outer_nd) {
      P.outer_shape[d] = out->shape[d];
      P.outer_count *= out->shape[d];
    } else {
      P.inner_count *= (int32_t)out->shape[d];
    }
  }
  for (int i = 0; i < 3; ++i) P.side[i].inner = S[i];
  // A strided batch whose first operand (cuBLASLt's A) is one matrix for
  // every batch while the other operand and D hold their batches column
  // after column is one wider product: (B*M, K) @ (K, N) for a row-major out
  // and a b without batch dims.
  {
    Side &la = P.side[P.swapped ? kB : kA], &lb = P.side[P.swapped ? kA : kB], &ld = P.side[kOut];
    const int64_t count = P.inner_count;
    if (count > 1 && la.inner == 0 && lb.op == CUBLAS_OP_N && lb.cols == ld.cols &&
        lb.inner == (int64_t)lb.cols * lb.ld && ld.inner == (int64_t)ld.cols * ld.ld &&
        (int64_t)ld.cols * count <= INT32_MAX) {
      lb.cols *= (uint64_t)count;
      ld.cols *= (uint64_t)count;
      la.inner = lb.inner = ld.inner = 0;
      P.inner_count = 1;
    }
  }
  for (int i = 0; i < 3; ++i) {
    Side& s = P.side[i];
    if (P.inner_count > 1) s.stride_bits |= (uint64_t)s.inner * P.is;
    for (int32_t d = 0; d < P.outer_nd; ++d) {
      s.outer[d] = bst[i][d];
      if (P.outer_shape[d] > 1) s.stride_bits |= (uint64_t)s.outer[d] * P.is;
    }
    const cublasStatus_t st = lt()->cublasLtMatrixLayoutCreate(&s.layout, P.type, s.rows, s.cols, s.ld);
    if (st != CUBLAS_STATUS_SUCCESS) {
      s.layout = nullptr;
      return lt_fail(fn, "cublasLtMatrixLayoutCreate", st);
    }
    if (P.inner_count > 1) {
      const int32_t count = P.inner_count;
      if (CTStatus e = layout_attr(fn, s.layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count, "BATCH_COUNT")) return e;
      if (CTStatus e = layout_attr(fn, s.layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, s.inner,
                                   "STRIDED_BATCH_OFFSET"))
        return e;
    }
  }

  // Algorithms: 16-byte aligned operands (with the bias epilogue when it
  // applies; without when cuBLASLt has none with it), and element-aligned ones.
  const bool epi = P.swapped ? epi_swapped : epi_direct;
  const bool relu = kReluEpilogue && P.act == CT_ACTIVATION_RELU;
  std::string why0, why1;
  if (CTStatus s = make_variant(fn, P, &P.v[0], kVecAlign, epi, relu && (epi || !bias), &why0)) return s;
  if (!P.v[0].ok && epi)
    if (CTStatus s = make_variant(fn, P, &P.v[0], kVecAlign, false, relu && !bias, &why0)) return s;
  if (CTStatus s = make_variant(fn, P, &P.v[1], P.is, false, relu && !bias, &why1)) return s;
  if (!P.v[0].ok && !P.v[1].ok)
    return g_host->set_error(CT_ERR_UNSUPPORTED,
                             "%s: cuBLASLt has no algorithm for this %s matmul (M=%lld, N=%lld, K=%lld, batch %d x %lld) "
                             "on cuda:%d: %s; %s",
                             fn, g_host->dtype_name(P.dt), (long long)P.M, (long long)P.N, (long long)P.K,
                             (int)P.inner_count, (long long)P.outer_count, (int)P.device_id, why0.c_str(), why1.c_str());

  // Workspace: cuBLASLt's, then the packed tensors, from the workspace
  // rounded up to kWsAlign.
  for (const Variant& v : P.v)
    if (v.ok && v.ws > P.lt_ws) P.lt_ws = v.ws;
  size_t off = align_up(P.lt_ws, kWsAlign);
  for (Side& s : P.side)
    if (s.pack) {
      s.ws_off = off;
      off = align_up(off + s.pack_bytes, kWsAlign);
    }
  P.ws_bytes = off ? off + (kWsAlign - 1) : 0;
  *workspace_bytes = P.ws_bytes;
  *primitives = 1;
  *plan = static_cast<NNPlan*>(p.release());
  return CT_OK;
}

namespace {

uintptr_t addr(const CTensor* t) { return reinterpret_cast<uintptr_t>(t->data) + (uintptr_t)t->byte_offset; }

}  // namespace

static CTStatus matmul_plan_execute(const NNPlan* plan, const CTNNCall* call, void* workspace, size_t workspace_bytes) {
  const MatmulPlan& P = *static_cast<const MatmulPlan*>(plan);
  const char* fn = call->fn;
  const CTensor *a = call->t[0], *b = call->t[1], *bias = call->t[2], *out = call->t[3];
  const PlanRun run(P.device_id, workspace);
  if (CTStatus s = run.check(fn, "matmul", P.ws_bytes, workspace, workspace_bytes)) return s;
  if (numel_of(out) == 0) return CT_OK;
  Device* d = run.d;
  const cudaStream_t stream = stream_of(call->stream);
  char* ws = run.ws;

  // The tensors cuBLASLt reads and writes: the caller's, or packed copies.
  const CTensor* ts[3] = {a, b, out};
  CTensor view[3];
  for (int i = 0; i < 3; ++i) {
    view[i] = *ts[i];
    if (!P.side[i].pack) continue;
    view[i] = compact_view(ts[i], ws, P.side[i].ws_off, ts[i]->device);
    if (i != kOut)
      if (CTStatus s = device_copy(fn, d, stream, P.dt, ts[i], &view[i])) return s;
  }
  // The algorithm the pointers allow: every matrix of every batch 16-byte
  // aligned (and the bias, for its epilogue), else the element-aligned one.
  uint64_t bits = 0;
  for (int i = 0; i < 3; ++i) bits |= addr(&view[i]) | P.side[i].stride_bits;
  const bool aligned = (bits & (kVecAlign - 1)) == 0 &&
                       (!P.v[0].bias_epi || !bias || (addr(bias) & (kVecAlign - 1)) == 0);
  const Variant& v = aligned && P.v[0].ok ? P.v[0] : P.v[1];
  if (!v.ok)
    return g_host->set_error(CT_ERR_UNSUPPORTED,
                             "%s: cuBLASLt found no algorithm for this matmul with operands aligned to only %zu bytes "
                             "on cuda:%d (align a, b and out to 16 bytes)",
                             fn, P.is, (int)P.device_id);
  // The bias pointer is the call's: a descriptor of its own, on the stack
  // (the plan's is shared by concurrent executions).
  cublasLtMatmulDescOpaque_t own;
  cublasLtMatmulDesc_t desc = v.desc;
  if (v.bias_epi) {
    desc = &own;
    const cublasStatus_t st = lt()->cublasLtMatmulDescInit_internal(desc, sizeof(*desc), P.compute, P.scale);
    if (st != CUBLAS_STATUS_SUCCESS) return lt_fail(fn, "cublasLtMatmulDescInit", st);
    if (CTStatus s = set_desc(fn, P, desc, v.epilogue, reinterpret_cast<const void*>(addr(bias)))) return s;
  }
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const bool f64 = P.scale == CUDA_R_64F;
  const void* alpha = f64 ? static_cast<const void*>(&one_d) : static_cast<const void*>(&one_f);
  const void* beta = f64 ? static_cast<const void*>(&zero_d) : static_cast<const void*>(&zero_f);
  const int ia = P.swapped ? kB : kA, ib = P.swapped ? kA : kB;
  const char* pa = reinterpret_cast<const char*>(addr(&view[ia]));
  const char* pb = reinterpret_cast<const char*>(addr(&view[ib]));
  char* pd = reinterpret_cast<char*>(addr(&view[kOut]));
  const int64_t is = (int64_t)P.is;
  for (int64_t o = 0; o < P.outer_count; ++o) {
    int64_t oa = 0, ob = 0, od = 0, r = o;  // element offsets of this batch of the loop
    for (int32_t dd = P.outer_nd - 1; dd >= 0; --dd) {
      const int64_t e = P.outer_shape[dd], c = r % e;
      r /= e;
      oa += c * P.side[ia].outer[dd];
      ob += c * P.side[ib].outer[dd];
      od += c * P.side[kOut].outer[dd];
    }
    char* dst = pd + od * is;
    const cublasStatus_t st =
        lt()->cublasLtMatmul(P.handle, desc, alpha, pa + oa * is, P.side[ia].layout, pb + ob * is, P.side[ib].layout, beta,
                       dst, P.side[kOut].layout, dst, P.side[kOut].layout, &v.algo, v.ws ? ws : nullptr, v.ws, stream);
    if (st != CUBLAS_STATUS_SUCCESS) return lt_fail(fn, "cublasLtMatmul", st);
  }
  if (P.side[kOut].pack)
    if (CTStatus s = device_copy(fn, d, stream, P.dt, &view[kOut], out)) return s;

  // What the epilogue did not do: the bias (the module's broadcasting add),
  // then the activation (the op's unary kernel, in place).
  if (bias && !v.bias_epi) {
    int64_t bst[CT_MAX_NDIM];
    bias_strides(bias, out, bst);
    CTensor bv = *bias;
    bv.ndim = out->ndim;
    bv.shape = out->shape;
    bv.strides = bst;
    if (CTStatus s = elementwise(fn, CT_OP_ADD, out, P.dt, &bv, ct_dtype_index(bias->dtype), out, P.dt, call->stream,
                                 false))
      return s;
  }
  if (activation_op(P.act) >= 0 && !v.relu_epi) {
    const bool dense = ct_is_compact(out) && addr(out) % P.is == 0;
    return elementwise(fn, activation_op(P.act), out, P.dt, nullptr, -1, out, P.dt, call->stream, dense);
  }
  return CT_OK;
}

static void lt_shutdown() {
  std::lock_guard<std::mutex> lock(g_lt_mu);
  if (!g_lt) return;
  for (size_t i = 0; i < g_lt->size(); ++i) {
    cublasLtHandle_t h = (*g_lt)[i];
    if (!h) continue;
    DeviceGuard guard((int32_t)i);
    lt()->cublasLtDestroy(h);
  }
  delete g_lt;
  g_lt = nullptr;
}

#endif  // CT_HAVE_CUBLASLT (without it nn_why refuses matmul, so core routes none here)

// ---- the NN slots: by op --------------------------------------------------------

CTStatus elementwise(const char* fn, int32_t op, const CTensor* x, int32_t xdt, const CTensor* y, int32_t ydt,
                     const CTensor* out, int32_t odt, void* stream, bool dense) {
  CTElementwiseCall c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.op = op;
  c.fn = fn;
  c.num_inputs = y ? 2 : 1;
  c.out_dt = odt;
  c.in[0] = x;
  c.in[1] = y;
  c.out = out;
  c.in_dt[0] = xdt;
  c.in_dt[1] = y ? ydt : -1;
  c.in_dt[2] = -1;
  c.stream = stream;
  c.numel = numel_of(out);
  c.flags = dense ? CT_CALL_DENSE : 0u;
  return cu_elementwise(&c);
}

CTStatus cu_nn_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives) {
  if (is_conv(call->op)) return conv_plan_create(call, plan, workspace_bytes, primitives);
  if (is_pool(call->op)) return pool_plan_create(call, plan, workspace_bytes, primitives);
  if (is_norm(call->op)) return norm_plan_create(call, plan, workspace_bytes, primitives);
  if (is_attention(call->op)) return attention_plan_create(call, plan, workspace_bytes, primitives);
#ifdef CT_HAVE_CUBLASLT
  if (call->op == CT_OP_MATMUL) return matmul_plan_create(call, plan, workspace_bytes, primitives);
#endif
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: %s", call->fn, nn_why(call->op, call->dt, nullptr));
}

CTStatus cu_nn_plan_execute(void* plan, const CTNNCall* call, void* workspace, size_t workspace_bytes) {
  const NNPlan* p = static_cast<const NNPlan*>(plan);
  if (is_conv(p->op)) return conv_plan_execute(p, call, workspace, workspace_bytes);
  if (is_pool(p->op)) return pool_plan_execute(p, call);
  if (is_norm(p->op)) return norm_plan_execute(p, call, workspace, workspace_bytes);
  if (is_attention(p->op)) return attention_plan_execute(p, call);
#ifdef CT_HAVE_CUBLASLT
  if (p->op == CT_OP_MATMUL) return matmul_plan_execute(p, call, workspace, workspace_bytes);
#endif
  return g_host->set_error(CT_ERR_INTERNAL, "%s: the CUDA module has no plan of op %d", call->fn, (int)p->op);
}

void cu_nn_plan_destroy(void* plan) { delete static_cast<NNPlan*>(plan); }

void nn_shutdown() {
#ifdef CT_HAVE_CUBLASLT
  lt_shutdown();
#endif
  conv_shutdown();
  pool_shutdown();
}

}  // namespace ctcu
