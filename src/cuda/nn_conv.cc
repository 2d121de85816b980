// nn_conv.cc — conv2d, conv2d_backward_data and conv2d_backward_weight on
// CUDA through cuDNN 9's legacy convolution API (cudnnConvolutionForward,
// cudnnConvolutionBackwardData, cudnnConvolutionBackwardFilter). cuDNN is
// loaded at the first conv plan or support query (lazy.cc), never linked.
// The ops' semantics are the CPU's and OpenCL's (ctensor_nn.h): x (N, C, H,
// W), w (K, C/groups, R, S), y (N, K, P, Q), cross-correlation, groups,
// stride, dilation and padding as core gives them (defaults applied).
//
//  - Layouts come from the strides. cuDNN gets the tensors' own strides
//    (cudnnSetTensorNdDescriptor) wherever they are positive and
//    non-overlapping, so NCHW, NHWC and sliced views run without copies. The
//    filter must be packed: w (or dw) packed NCHW, or NHWC (filter format
//    CUDNN_TENSOR_NHWC, KRSC), is used in place; any other w is packed into
//    the workspace by the module's copy kernel (dw: computed there and
//    copied out). The packing layout follows x: NHWC when x (else y) is
//    packed NHWC, NCHW otherwise. A data tensor cuDNN cannot be given (zero
//    or negative strides, overlaps, more than 2^31 - 1 elements reached)
//    goes through a packed copy in the workspace the same way.
//  - When cuDNN has no algorithm for that configuration, the plan tries
//    again with every tensor packed NCHW, and then with all the padding done
//    explicitly (below), before it refuses.
//  - Padding: cuDNN takes one pad per spatial dim. The plan gives it
//    pad = min(pad_begin, pad_end), and the rest (pad_begin - pad or
//    pad_end - pad, one of them 0) is explicit: forward and backward weight
//    read a copy of x in a zero-filled buffer of the workspace, (N, C,
//    H + extra, W + extra) with x at (extra_begin_h, extra_begin_w)
//    (cudaMemsetAsync on the call's stream, then the copy kernel into that
//    interior view); backward data computes the gradient of that padded x
//    into such a buffer and copies its interior out to dx. cuDNN then sees a
//    symmetric convolution of the same output size.
//  - Types: float32 with compute type float and CUDNN_FMA_MATH (no TF32 on
//    tensor cores: exact float32 like the CPU); float64 with compute type
//    double; float16 and bfloat16 with compute type float (float
//    accumulation) and CUDNN_TENSOR_OP_MATH allowed. Never
//    CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION. alpha = 1, beta = 0.
//  - Algorithms: cudnnGet*Algorithm_v7 at plan creation (a heuristic: it
//    runs nothing; cudnnFind* would allocate and synchronise). Taken in
//    cuDNN's order of expected speed among those that succeed, preferring,
//    under a workspace limit of 256 MiB: deterministic direct-sum ones (no
//    FFT or Winograd transform, no atomics), then direct-sum ones, then any;
//    else the one with the smallest workspace. Its workspace size is
//    confirmed with cudnnGet*WorkspaceSize.
//  - Bias and activation (forward) are the module's broadcasting `add` and
//    the activation op's unary kernel, after the convolution, as for matmul.
//    dbias (backward weight) is the module's `sum` of dy over (N, P, Q):
//    directly when dbias has dy's dtype; float16 / bfloat16 dy with a
//    float32 dbias is first cast to float32 in the workspace (exact), a
//    float64 dy with a float32 dbias summed in float64 into the workspace and
//    cast once.
//  - An empty input with a non-empty output (C = 0 forward, K = 0 backward
//    data, N or C = 0 backward weight) runs no convolution: the output is
//    zeros (forward: then bias and activation; dbias is still dy's sum), the
//    table of notes/SEMANTICS.md.
//  - workspace_bytes = the algorithm's workspace + the buffers above (packed
//    tensors, the padded x or dx, zeros for a strided output of an empty
//    call, the dbias intermediates), laid out from the workspace rounded up
//    to 256 bytes (hence up to 255 bytes of slack).
//  - One cudnnHandle_t per device, made at the device's first conv plan
//    with the device current, destroyed by nn_shutdown(). cuDNN handles are
//    not thread-safe: each has a mutex, held from cudnnSetStream(call's
//    stream) to the end of the cuDNN call it precedes. Execution uses the
//    call's stream and the caller's workspace only: it never allocates
//    device memory itself and never synchronises (dbias: the module's `sum`
//    takes its partials from temp_alloc, as ct_sum does).
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "nn_conv.h"
#include "nn_internal.h"

namespace ctcu {

#ifdef CT_HAVE_CUDNN

const char* conv_why(int32_t op, int32_t dt, std::string* buf) {
  (void)op;
  switch (dt) {
    case CT_DT_FLOAT32:
    case CT_DT_FLOAT64:
    case CT_DT_FLOAT16:
    case CT_DT_BFLOAT16: {
      std::string why;
      const bool loaded = dnn(&why) != nullptr;
      return unusable(loaded, "cuDNN, which runs conv2d on CUDA,", why, buf);
    }
    default: return "conv2d on CUDA (cuDNN) runs float32, float64, float16 and bfloat16";
  }
}

// A status that refuses the configuration (a parameter or layout cuDNN does
// not take: CUDNN_STATUS_BAD_PARAM* and CUDNN_STATUS_NOT_SUPPORTED*), rather
// than a failure of the library or the device.
bool refusal(cudnnStatus_t s) { return (int)s >= 2000 && (int)s < 4000; }

// (after a plan exists: cuDNN is loaded)
CTStatus dnn_fail(const char* fn, const char* what, cudnnStatus_t s) {
  const DnnApi* a = dnn();
  char detail[512];
  detail[0] = '\0';
  a->cudnnGetLastErrorString(detail, sizeof detail);
  const bool oom = s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
                   s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
  return g_host->set_error(oom ? CT_ERR_OUT_OF_MEMORY : CT_ERR_BACKEND, "%s: cuDNN %s failed: %s (%d)%s%s", fn, what,
                           a->cudnnGetErrorString(s), (int)s, detail[0] ? ": " : "", detail);
}

namespace {

char* addr(const CTensor* t) { return static_cast<char*>(t->data) + t->byte_offset; }

// ---- handles: one per device, made lazily, destroyed by conv_shutdown -----------

std::mutex g_handles_mu;
std::vector<DnnHandle*>* g_handles = nullptr;  // by device id; freed by conv_shutdown (no static destructor)

CTStatus dnn_handle(const char* fn, int32_t id, DnnHandle** out) {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  if (!g_handles) g_handles = new std::vector<DnnHandle*>((size_t)device_count(), nullptr);
  if (id < 0 || (size_t)id >= g_handles->size())
    return g_host->set_error(CT_ERR_NOT_FOUND, "%s: there is no CUDA device %d", fn, (int)id);
  DnnHandle*& slot = (*g_handles)[(size_t)id];
  if (!slot) {
    DeviceGuard guard(id);
    if (guard.error() != cudaSuccess) return cuda_fail(fn, "cudaSetDevice", guard.error());
    cudnnHandle_t h = nullptr;
    const cudnnStatus_t s = dnn()->cudnnCreate(&h);
    if (s != CUDNN_STATUS_SUCCESS) return dnn_fail(fn, "cudnnCreate", s);
    slot = new DnnHandle;
    slot->h = h;
  }
  *out = slot;
  return CT_OK;
}

// ---- layouts ----------------------------------------------------------------------

// The packed strides of a 4-d shape e (N, C, H, W; a filter's K, C/g, R, S) in layout f.
void packed(const int64_t* e, Fmt f, int64_t* st) {
  if (f == kNCHW) {
    st[3] = 1;
    st[2] = e[3];
    st[1] = e[2] * e[3];
    st[0] = e[1] * st[1];
  } else {
    st[1] = 1;
    st[3] = e[1];
    st[2] = e[3] * e[1];
    st[0] = e[2] * st[2];
  }
}

// Whether t is packed in layout f (dims of extent 1 take any stride).
bool is_packed(const CTensor* t, Fmt f) {
  int64_t st[4];
  packed(t->shape, f, st);
  for (int32_t d = 0; d < 4; ++d)
    if (t->shape[d] != 1 && stride_of(t, d) != st[d]) return false;
  return true;
}

// Strides cuDNN can be given for t as it is, in st: packed NCHW or NHWC
// (canonical strides), else positive strides with every element at its own
// address. Dims of extent 1 (never stepped) get the stride of their place in
// NCHW order. False when t needs a packed copy.
bool own_strides(const CTensor* t, int64_t* st) {
  for (Fmt f : {kNCHW, kNHWC})
    if (is_packed(t, f)) {
      packed(t->shape, f, st);
      return true;
    }
  int32_t dims[4], n = 0;
  for (int32_t d = 0; d < 4; ++d) {
    if (t->shape[d] == 1) continue;
    if (stride_of(t, d) <= 0) return false;
    dims[n++] = d;
  }
  for (int32_t k = 1; k < n; ++k)  // by increasing stride
    for (int32_t j = k; j > 0 && stride_of(t, dims[j]) < stride_of(t, dims[j - 1]); --j) std::swap(dims[j], dims[j - 1]);
  int64_t need = 1;  // the smallest stride the next dim may have without overlapping the ones inside it
  for (int32_t k = 0; k < n; ++k) {
    const int64_t s = stride_of(t, dims[k]);
    if (s < need) return false;
    need = s * t->shape[dims[k]];
  }
  for (int32_t d = 3; d >= 0; --d) st[d] = t->shape[d] != 1 ? stride_of(t, d) : d == 3 ? 1 : st[d + 1] * t->shape[d + 1];
  return true;
}

// Whether cuDNN's int dims and strides hold e and st, and the elements they
// reach (its limit: 2^31 - 1 per tensor).
bool fits_int(const int64_t* e, const int64_t* st) {
  int64_t span = 1;
  for (int32_t d = 0; d < 4; ++d) {
    if (e[d] > INT_MAX || st[d] > INT_MAX || st[d] < 0) return false;
    span += (e[d] - 1) * st[d];
    if (span > INT_MAX) return false;
  }
  return true;
}

// Whether a packed tensor of shape e has at most 2^31 - 1 elements (its
// packed strides then fit int64, and cuDNN's int).
bool few_elements(const int64_t* e) {
  int64_t n = 1;
  for (int32_t d = 0; d < 4; ++d) {
    if (e[d] > INT_MAX) return false;
    n *= e[d];  // at most 2^31 * 2^31
    if (n > INT_MAX) return false;
  }
  return true;
}

// ---- the plan ---------------------------------------------------------------------

enum { kX = 0, kW = 1, kY = 2 };  // the forward's roles: x (dx), w (dw), y (dy)
const char* const kRoleName[3] = {"x", "w", "y"};

// The call's tensors by role.
struct Roles {
  const CTensor *x = nullptr, *w = nullptr, *y = nullptr, *bias = nullptr, *dbias = nullptr;
};
Roles roles(const CTNNCall* c) {
  Roles r;
  if (c->op == CT_OP_CONV2D) r.x = c->t[0], r.w = c->t[1], r.bias = c->t[2], r.y = c->t[3];
  else if (c->op == CT_OP_CONV2D_BACKWARD_DATA) r.y = c->t[0], r.w = c->t[1], r.x = c->t[2];
  else r.x = c->t[0], r.y = c->t[1], r.w = c->t[2], r.dbias = c->t[3];
  return r;
}

cudnnDataType_t dnn_type(int32_t dt) {
  switch (dt) {
    case CT_DT_FLOAT64: return CUDNN_DATA_DOUBLE;
    case CT_DT_FLOAT16: return CUDNN_DATA_HALF;
    case CT_DT_BFLOAT16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
  }
}

// The attempts, in order: the tensors as they are (where cuDNN takes them),
// every tensor packed NCHW, and that with all the padding explicit.
const char* const kAttempt[3] = {"the tensors' own layouts", "every tensor packed NCHW",
                                 "every tensor packed NCHW with the padding in the workspace"};

// The sides of attempt `attempt` (see kAttempt). False when a tensor is
// beyond cuDNN's int dims even packed (why in *why).
bool configure(ConvPlan* P, const CTensor* const* ts, const CTConv2dDesc& d, int attempt, std::string* why) {
  bool padded = false;
  for (int k = 0; k < 2; ++k) {
    P->pad[k] = attempt == 2 ? 0 : std::min(d.pad_begin[k], d.pad_end[k]);
    P->extra_begin[k] = d.pad_begin[k] - P->pad[k];
    P->extra_end[k] = d.pad_end[k] - P->pad[k];
    padded = padded || P->extra_begin[k] > 0 || P->extra_end[k] > 0;
  }
  // The layout of the buffers and of the filter: NHWC when x (else y) is
  // packed NHWC (and not NCHW as well), in the first attempt.
  Fmt fmt = kNCHW;
  if (attempt == 0) {
    const bool x_nchw = is_packed(ts[kX], kNCHW), x_nhwc = is_packed(ts[kX], kNHWC);
    if (x_nhwc && !x_nchw) fmt = kNHWC;
    else if (!x_nchw && !x_nhwc && is_packed(ts[kY], kNHWC) && !is_packed(ts[kY], kNCHW)) fmt = kNHWC;
  }
  for (int i = 0; i < 3; ++i) {
    const CTensor* t = ts[i];
    Side& s = P->side[i];
    s = Side();
    s.fmt = fmt;
    for (int32_t k = 0; k < 4; ++k) s.shape[k] = t->shape[k];
    bool in_place;
    if (i == kX && padded) {
      in_place = false;
      for (int k = 0; k < 2; ++k) s.shape[2 + k] += P->extra_begin[k] + P->extra_end[k];
    } else if (i == kW || attempt > 0) {
      in_place = is_packed(t, fmt);
      if (in_place) packed(s.shape, fmt, s.st);
    } else {
      in_place = own_strides(t, s.st) && fits_int(s.shape, s.st);
    }
    if (!in_place) {
      s.buffered = true;
      if (few_elements(s.shape)) packed(s.shape, fmt, s.st);
      else s.st[0] = -1;  // (refused below)
    }
    if (!fits_int(s.shape, s.st)) {
      *why = std::string(kRoleName[i]) + (s.shape[2] != t->shape[2] || s.shape[3] != t->shape[3] ? " padded" : "") +
             " has more elements than cuDNN's legacy API takes (2^31 - 1)";
      return false;
    }
    if (s.buffered) {
      s.bytes = (size_t)(s.shape[0] * s.shape[1] * s.shape[2] * s.shape[3]) * P->is;
      if (i == kX) s.inner = P->extra_begin[0] * s.st[2] + P->extra_begin[1] * s.st[3];
    }
  }
  return true;
}

// What decides an attempt's result: two attempts with equal keys are the same.
std::string config_key(const ConvPlan& P) {
  std::string k;
  auto put = [&](const void* p, size_t n) { k.append(static_cast<const char*>(p), n); };
  put(P.pad, sizeof P.pad);
  for (const Side& s : P.side) {
    put(&s.buffered, sizeof s.buffered);
    put(&s.fmt, sizeof s.fmt);
    put(s.shape, sizeof s.shape);
    put(s.st, sizeof s.st);
  }
  return k;
}

// The descriptors of the configured sides. A refusal (a layout cuDNN does not
// take) leaves *refused set and returns CT_OK; other failures are errors.
CTStatus set_descriptors(const char* fn, ConvPlan* P, const CTConv2dDesc& d, cudnnStatus_t* refused,
                         const char** what) {
  const DnnApi* a = dnn();
  *refused = CUDNN_STATUS_SUCCESS;
  auto check = [&](cudnnStatus_t s, const char* name) -> CTStatus {
    if (s == CUDNN_STATUS_SUCCESS) return CT_OK;
    if (refusal(s)) {
      *refused = s;
      *what = name;
      return CT_OK;
    }
    return dnn_fail(fn, name, s);
  };
  const cudnnDataType_t type = dnn_type(P->dt);
  int dims[4], st[4];
  for (int i : {kX, kY}) {
    const Side& s = P->side[i];
    for (int k = 0; k < 4; ++k) dims[k] = (int)s.shape[k], st[k] = (int)s.st[k];
    if (CTStatus e = check(a->cudnnSetTensorNdDescriptor(i == kX ? P->xd : P->yd, type, 4, dims, st),
                           "cudnnSetTensorNdDescriptor"))
      return e;
    if (*refused) return CT_OK;
  }
  const Side& w = P->side[kW];
  for (int k = 0; k < 4; ++k) dims[k] = (int)w.shape[k];
  if (CTStatus e = check(a->cudnnSetFilterNdDescriptor(P->wd, type, w.fmt == kNHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                       4, dims),
                         "cudnnSetFilterNdDescriptor"))
    return e;
  if (*refused) return CT_OK;
  const int pad[2] = {(int)P->pad[0], (int)P->pad[1]}, stride[2] = {(int)d.stride[0], (int)d.stride[1]},
            dil[2] = {(int)d.dilation[0], (int)d.dilation[1]};
  if (CTStatus e = check(a->cudnnSetConvolutionNdDescriptor(P->cd, 2, pad, stride, dil, CUDNN_CROSS_CORRELATION,
                                                            P->dt == CT_DT_FLOAT64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT),
                         "cudnnSetConvolutionNdDescriptor"))
    return e;
  if (*refused) return CT_OK;
  if (CTStatus e = check(a->cudnnSetConvolutionGroupCount(P->cd, d.groups), "cudnnSetConvolutionGroupCount")) return e;
  if (*refused) return CT_OK;
  // The heuristic lists algorithms for this math type (and the default one):
  // float32 FMA only (no TF32), the half types tensor cores.
  const cudnnMathType_t math = P->dt == CT_DT_FLOAT32 ? CUDNN_FMA_MATH
                               : P->dt == CT_DT_FLOAT64 ? CUDNN_DEFAULT_MATH
                                                        : CUDNN_TENSOR_OP_MATH;
  return check(a->cudnnSetConvolutionMathType(P->cd, math), "cudnnSetConvolutionMathType");
}

}  // namespace

CTStatus conv_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives) {
  const char* fn = call->fn;
  if (const char* why = conv_why(call->op, call->dt, nullptr))
    return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: %s", fn, why);
  const DnnApi* a = dnn();
  const CTConv2dDesc& d = *static_cast<const CTConv2dDesc*>(call->desc);
  const Roles r = roles(call);
  auto p = std::make_unique<ConvPlan>();
  ConvPlan& P = *p;
  P.op = call->op;
  P.device_id = r.y->device.device_id;
  P.dt = call->dt;
  P.is = itemsize_of(r.y);
  P.act = call->op == CT_OP_CONV2D ? d.activation : CT_ACTIVATION_NONE;
  const int64_t K = r.w->shape[0];
  for (int k = 0; k < 2; ++k)
    if (d.stride[k] > INT_MAX || d.dilation[k] > INT_MAX || d.pad_begin[k] > INT_MAX || d.pad_end[k] > INT_MAX)
      return g_host->set_error(CT_ERR_UNSUPPORTED,
                               "%s: conv2d on CUDA: desc's stride, dilation and padding of dim %d (%lld, %lld, %lld, "
                               "%lld) exceed cuDNN's int",
                               fn, k, (long long)d.stride[k], (long long)d.dilation[k], (long long)d.pad_begin[k],
                               (long long)d.pad_end[k]);
  if (!device(P.device_id))
    return g_host->set_error(CT_ERR_NOT_FOUND, "%s: there is no CUDA device %d", fn, (int)P.device_id);
  DeviceGuard guard(P.device_id);
  if (guard.error() != cudaSuccess) return cuda_fail(fn, "cudaSetDevice", guard.error());

  const CTensor* ts[3] = {r.x, r.w, r.y};
  P.run = numel_of(r.x) > 0 && numel_of(r.w) > 0 && numel_of(r.y) > 0;
  if (P.run) {
    if (CTStatus s = dnn_handle(fn, P.device_id, &P.handle)) return s;
    cudnnStatus_t s;
    if ((s = a->cudnnCreateTensorDescriptor(&P.xd)) != CUDNN_STATUS_SUCCESS ||
        (s = a->cudnnCreateTensorDescriptor(&P.yd)) != CUDNN_STATUS_SUCCESS)
      return dnn_fail(fn, "cudnnCreateTensorDescriptor", s);
    if ((s = a->cudnnCreateFilterDescriptor(&P.wd)) != CUDNN_STATUS_SUCCESS)
      return dnn_fail(fn, "cudnnCreateFilterDescriptor", s);
    if ((s = a->cudnnCreateConvolutionDescriptor(&P.cd)) != CUDNN_STATUS_SUCCESS)
      return dnn_fail(fn, "cudnnCreateConvolutionDescriptor", s);
    std::string why_all, last_key, last_why;
    bool found = false;
    std::lock_guard<std::mutex> lock(P.handle->mu);  // the heuristics use the handle
    for (int attempt = 0; attempt < 3 && !found; ++attempt) {
      std::string why;
      if (!configure(&P, ts, d, attempt, &why)) {
        if (why == last_why) continue;  // said already
      } else {
        const std::string key = config_key(P);
        if (attempt > 0 && key == last_key) continue;  // the same as the attempt before
        last_key = key;
        cudnnStatus_t refused = CUDNN_STATUS_SUCCESS;
        const char* what = "";
        if (CTStatus e = set_descriptors(fn, &P, d, &refused, &what)) return e;
        if (refused) why = std::string(what) + ": " + a->cudnnGetErrorString(refused);
        else if (CTStatus e = choose_algo(fn, &P, &found, &why)) return e;
      }
      if (found) {
        P.config = kAttempt[attempt];
      } else {
        why_all += std::string(why_all.empty() ? "" : "; ") + kAttempt[attempt] + ": " + why;
        last_why = why;
      }
    }
    if (!found)
      return g_host->set_error(
          CT_ERR_UNSUPPORTED,
          "%s: conv2d on CUDA: cuDNN cannot run this %s convolution on cuda:%d (x [%lld, %lld, %lld, %lld], "
          "w [%lld, %lld, %lld, %lld], groups %d, stride (%lld, %lld), pad_begin (%lld, %lld), pad_end (%lld, %lld), "
          "dilation (%lld, %lld)): %s",
          fn, g_host->dtype_name(P.dt), (int)P.device_id, (long long)r.x->shape[0], (long long)r.x->shape[1],
          (long long)r.x->shape[2], (long long)r.x->shape[3], (long long)r.w->shape[0], (long long)r.w->shape[1],
          (long long)r.w->shape[2], (long long)r.w->shape[3], (int)d.groups, (long long)d.stride[0],
          (long long)d.stride[1], (long long)d.pad_begin[0], (long long)d.pad_begin[1], (long long)d.pad_end[0],
          (long long)d.pad_end[1], (long long)d.dilation[0], (long long)d.dilation[1], why_all.c_str());
  }

  // Workspace: cuDNN's, then the buffers, from the workspace rounded up to kWsAlign.
  size_t off = align_up(P.algo_ws, kWsAlign);
  if (P.run)
    for (Side& s : P.side)
      if (s.buffered) {
        s.off = off;
        off = align_up(off + s.bytes, kWsAlign);
      }
  if (!P.run) {  // the output of an empty call is zeros: through a zeroed piece when it is strided
    const CTensor* out = P.op == CT_OP_CONV2D ? r.y : P.op == CT_OP_CONV2D_BACKWARD_DATA ? r.x : r.w;
    if (numel_of(out) > 0 && !ct_is_compact(out)) {
      P.zero_bytes = (size_t)numel_of(out) * P.is;
      P.zero_off = off;
      off = align_up(off + P.zero_bytes, kWsAlign);
    }
  }
  if (r.dbias && numel_of(r.dbias) > 0) {
    const int32_t bdt = ct_dtype_index(r.dbias->dtype);
    if (bdt == P.dt) {
      P.db = kDbDirect;
    } else if (P.dt == CT_DT_FLOAT64) {  // float64 sums, cast once to the float32 dbias
      P.db = kDbCastAfter;
      P.db_bytes = (size_t)K * sizeof(double);
    } else {  // float16 / bfloat16 dy cast (exactly) to float32, then summed
      P.db = kDbCastFirst;
      P.db_bytes = (size_t)numel_of(r.y) * sizeof(float);
    }
    if (P.db_bytes) {
      P.db_off = off;
      off = align_up(off + P.db_bytes, kWsAlign);
    }
  }
  P.ws_bytes = off ? off + (kWsAlign - 1) : 0;
  *workspace_bytes = P.ws_bytes;
  *primitives = P.run ? 1 : 0;
  *plan = static_cast<NNPlan*>(p.release());
  return CT_OK;
}

namespace {

// A tensor with t's dtype and device over a buffer of the workspace: shape
// and strides (elements) given, at byte offset off from base.
CTensor buffer_view(const CTensor* t, char* base, size_t off, int64_t* shape, int64_t* st) {
  CTensor v = *t;
  v.data = base;
  v.byte_offset = off;
  v.ndim = 4;
  v.shape = shape;
  v.strides = st;
  return v;
}

// t = 0 (every element): a memset when t is compact, else a copy from the
// zeroed piece of the workspace at zero_off.
CTStatus zero_fill(const char* fn, Device* d, cudaStream_t s, const ConvPlan& P, const CTensor* t, char* ws) {
  const int64_t n = numel_of(t);
  if (n == 0) return CT_OK;
  const size_t bytes = (size_t)n * P.is;
  if (ct_is_compact(t)) {
    const cudaError_t e = cudaMemsetAsync(addr(t), 0, bytes, s);
    return e == cudaSuccess ? CT_OK : cuda_fail(fn, "cudaMemsetAsync", e);
  }
  const cudaError_t e = cudaMemsetAsync(ws + P.zero_off, 0, bytes, s);
  if (e != cudaSuccess) return cuda_fail(fn, "cudaMemsetAsync", e);
  const CTensor z = compact_view(t, ws, P.zero_off, t->device);
  return device_copy(fn, d, s, P.dt, &z, t);
}

// The module's sum of x (N, K, P, Q) over (N, P, Q) into out (K,), dtype dt.
CTStatus sum_npq(const char* fn, const CTensor* x, const CTensor* out, int32_t dt, void* stream) {
  CTReduceCall c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.op = CT_OP_SUM;
  c.fn = fn;
  c.x = x;
  c.out = out;
  c.x_dt = c.out_dt = dt;
  c.reduce_mask = 1u | 4u | 8u;
  c.count = x->shape[0] * x->shape[2] * x->shape[3];
  c.out_strides[1] = stride_of(out, 0);
  c.stream = stream;
  return cu_reduce(&c);
}

// The cuDNN call of the plan's op on the sides' data (under the handle's mutex).
CTStatus run_dnn(const char* fn, const ConvPlan& P, cudaStream_t stream, char* const* ptr, char* ws) {
  const DnnApi* a = dnn();
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const bool f64 = P.dt == CT_DT_FLOAT64;
  const void* alpha = f64 ? static_cast<const void*>(&one_d) : static_cast<const void*>(&one_f);
  const void* beta = f64 ? static_cast<const void*>(&zero_d) : static_cast<const void*>(&zero_f);
  void* work = P.algo_ws ? ws : nullptr;
  std::lock_guard<std::mutex> lock(P.handle->mu);
  cudnnStatus_t s = a->cudnnSetStream(P.handle->h, stream);
  if (s != CUDNN_STATUS_SUCCESS) return dnn_fail(fn, "cudnnSetStream", s);
  const char* what;
  switch (P.op) {
    case CT_OP_CONV2D:
      what = "cudnnConvolutionForward";
      s = a->cudnnConvolutionForward(P.handle->h, alpha, P.xd, ptr[kX], P.wd, ptr[kW], P.cd,
                                     (cudnnConvolutionFwdAlgo_t)P.algo, work, P.algo_ws, beta, P.yd, ptr[kY]);
      break;
    case CT_OP_CONV2D_BACKWARD_DATA:
      what = "cudnnConvolutionBackwardData";
      s = a->cudnnConvolutionBackwardData(P.handle->h, alpha, P.wd, ptr[kW], P.yd, ptr[kY], P.cd,
                                          (cudnnConvolutionBwdDataAlgo_t)P.algo, work, P.algo_ws, beta, P.xd, ptr[kX]);
      break;
    default:
      what = "cudnnConvolutionBackwardFilter";
      s = a->cudnnConvolutionBackwardFilter(P.handle->h, alpha, P.xd, ptr[kX], P.yd, ptr[kY], P.cd,
                                            (cudnnConvolutionBwdFilterAlgo_t)P.algo, work, P.algo_ws, beta, P.wd,
                                            ptr[kW]);
      break;
  }
  if (s == CUDNN_STATUS_SUCCESS) return CT_OK;
  const std::string w = std::string(what) + " (algorithm " + std::to_string(P.algo) + ", " + P.config + ")";
  return dnn_fail(fn, w.c_str(), s);
}

}  // namespace

CTStatus conv_plan_execute(const NNPlan* plan, const CTNNCall* call, void* workspace, size_t workspace_bytes) {
  const ConvPlan& P = *static_cast<const ConvPlan*>(plan);
  const char* fn = call->fn;
  const PlanRun run(P.device_id, workspace);
  if (CTStatus s = run.check(fn, "conv2d", P.ws_bytes, workspace, workspace_bytes)) return s;
  Device* d = run.d;
  const cudaStream_t stream = stream_of(call->stream);
  char* ws = run.ws;
  const Roles r = roles(call);
  const CTensor* ts[3] = {r.x, r.w, r.y};
  const int out_role = P.op == CT_OP_CONV2D ? kY : P.op == CT_OP_CONV2D_BACKWARD_DATA ? kX : kW;

  if (P.run) {
    // What cuDNN reads and writes: the caller's tensors, or buffers (whole:
    // view; the caller's tensor within a padded one: inner).
    int64_t shape[3][4], st[3][4];
    CTensor view[3], inner[3];
    char* ptr[3];
    for (int i = 0; i < 3; ++i) {
      const Side& s = P.side[i];
      view[i] = inner[i] = *ts[i];
      if (s.buffered) {
        std::memcpy(shape[i], s.shape, sizeof shape[i]);
        std::memcpy(st[i], s.st, sizeof st[i]);
        view[i] = buffer_view(ts[i], ws, s.off, shape[i], st[i]);
        inner[i] = buffer_view(ts[i], ws, s.off + (size_t)s.inner * P.is, ts[i]->shape, st[i]);
      }
      ptr[i] = addr(&view[i]);
    }
    for (int i = 0; i < 3; ++i) {  // the inputs' buffers: zeros around a padded x, the tensor inside
      const Side& s = P.side[i];
      if (i == out_role || !s.buffered) continue;
      if (s.inner != 0 || s.shape[2] != ts[i]->shape[2] || s.shape[3] != ts[i]->shape[3]) {
        const cudaError_t e = cudaMemsetAsync(ptr[i], 0, s.bytes, stream);
        if (e != cudaSuccess) return cuda_fail(fn, "cudaMemsetAsync", e);
      }
      if (CTStatus e = device_copy(fn, d, stream, P.dt, ts[i], &inner[i])) return e;
    }
    if (CTStatus e = run_dnn(fn, P, stream, ptr, ws)) return e;
    if (P.side[out_role].buffered)
      if (CTStatus e = device_copy(fn, d, stream, P.dt, &inner[out_role], ts[out_role])) return e;
  } else {
    if (CTStatus e = zero_fill(fn, d, stream, P, ts[out_role], ws)) return e;
  }

  if (P.op == CT_OP_CONV2D) {  // bias (the module's broadcasting add), then the activation (in place)
    const CTensor* y = r.y;
    if (r.bias) {
      int64_t bst[4] = {0, stride_of(r.bias, 0), 0, 0};
      CTensor bv = *r.bias;
      bv.ndim = 4;
      bv.shape = y->shape;
      bv.strides = bst;
      if (CTStatus e = elementwise(fn, CT_OP_ADD, y, P.dt, &bv, ct_dtype_index(r.bias->dtype), y, P.dt, call->stream,
                                   false))
        return e;
    }
    const int32_t act = activation_op(P.act);
    if (act >= 0) {
      const bool dense = ct_is_compact(y) && reinterpret_cast<uintptr_t>(addr(y)) % P.is == 0;
      return elementwise(fn, act, y, P.dt, nullptr, -1, y, P.dt, call->stream, dense);
    }
    return CT_OK;
  }
  if (P.db == kDbDirect) return sum_npq(fn, r.y, r.dbias, P.dt, call->stream);
  if (P.db == kDbCastFirst) {  // dy (float16 / bfloat16) to float32 in the workspace, exactly; its sums
    CTensor dyf = compact_view(r.y, ws, P.db_off, r.y->device);
    dyf.dtype = r.dbias->dtype;
    const bool dense = ct_is_compact(r.y) && reinterpret_cast<uintptr_t>(addr(r.y)) % P.is == 0;
    if (CTStatus e = elementwise(fn, CT_OP_CAST, r.y, P.dt, nullptr, -1, &dyf, CT_DT_FLOAT32, call->stream, dense))
      return e;
    return sum_npq(fn, &dyf, r.dbias, CT_DT_FLOAT32, call->stream);
  }
  if (P.db == kDbCastAfter) {  // float64 sums in the workspace, cast once to the float32 dbias
    CTensor sums = compact_view(r.dbias, ws, P.db_off, r.dbias->device);
    sums.dtype = r.y->dtype;
    if (CTStatus e = sum_npq(fn, r.y, &sums, CT_DT_FLOAT64, call->stream)) return e;
    const bool dense = ct_is_compact(r.dbias) && reinterpret_cast<uintptr_t>(addr(r.dbias)) % sizeof(float) == 0;
    return elementwise(fn, CT_OP_CAST, &sums, CT_DT_FLOAT64, nullptr, -1, r.dbias, CT_DT_FLOAT32, call->stream, dense);
  }
  return CT_OK;
}

void conv_shutdown() {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  if (!g_handles) return;
  for (size_t i = 0; i < g_handles->size(); ++i) {
    DnnHandle* h = (*g_handles)[i];
    if (!h) continue;
    {
      DeviceGuard guard((int32_t)i);
      dnn()->cudnnDestroy(h->h);
    }
    delete h;
  }
  delete g_handles;
  g_handles = nullptr;
}

#else  // no cuDNN headers at build time: the conv ops are refused, so core routes none here

const char* conv_why(int32_t, int32_t, std::string*) {
  return "this CUDA module was built without cuDNN (no cudnn.h of cuDNN 9 was found): no conv2d";
}

CTStatus conv_plan_create(const CTNNCall* call, void**, size_t*, int64_t*) {
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: %s", call->fn, conv_why(call->op, call->dt, nullptr));
}

CTStatus conv_plan_execute(const NNPlan*, const CTNNCall* call, void*, size_t) {
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: %s", call->fn, conv_why(call->op, call->dt, nullptr));
}

void conv_shutdown() {}

#endif  // CT_HAVE_CUDNN

}  // namespace ctcu
