// nn_onednn.cc — category 3 (NN ops) on the CPU through oneDNN: the NN slots
// of the kernel table (engine.h). Creating a plan: the plans without a
// primitive for calls with an empty input, the geometry oneDNN takes, then
// the build functions (nn_onednn_matmul_conv.cc, nn_onednn_pool.cc,
// nn_onednn_norm.cc); the probe of what oneDNN runs on this CPU; running
// (nn_onednn_plan.cc) and destroying a plan. What a plan is:
// nn_onednn_internal.h.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu/host.h"

#include "cpu/engine.h"
#include "cpu/half.h"
#include "cpu/nn_onednn_internal.h"

namespace ct {
namespace cpu {
namespace onednn {
namespace {

// ---- empty inputs -----------------------------------------------------------

bool has_zero_extent(const CTensor* t) {
  for (int32_t i = 0; i < t->ndim; ++i)
    if (t->shape[i] == 0) return true;
  return false;
}

double load_value(const char* ptr, int32_t dt) {
  uint16_t h;
  float f;
  switch (dt) {
    case CT_DT_BFLOAT16: std::memcpy(&h, ptr, 2); return bf16_to_float(h);
    case CT_DT_FLOAT16: std::memcpy(&h, ptr, 2); return f16_to_float(h);
    default: std::memcpy(&f, ptr, 4); return f;
  }
}
void store_value(char* ptr, int32_t dt, double v) {
  uint16_t h;
  float f;
  switch (dt) {
    case CT_DT_BFLOAT16: h = double_to_bf16(v); std::memcpy(ptr, &h, 2); break;
    case CT_DT_FLOAT16: h = double_to_f16(v); std::memcpy(ptr, &h, 2); break;
    default: f = (float)v; std::memcpy(ptr, &f, 4); break;
  }
}
// v rounded to dtype dt, as a store and a load would.
double round_to(int32_t dt, double v) {
  char b[4];
  store_value(b, dt, v);
  return load_value(b, dt);
}

// Every element of t (any strides; the bytes between elements untouched) set to v.
Hook fill_tensor(int ti, double v) {
  return [ti, v](const Exec& e) {
    const CTensor* t = e.t[ti];
    const int32_t dt = dtype_index(t->dtype);
    for_each_elem(t, [&](int64_t, char* ptr) { store_value(ptr, dt, v); });
  };
}

// The activations of CTActivation on one value, in double.
double activate(int32_t act, double v) {
  switch (act) {
    case CT_ACTIVATION_RELU: return v > 0 ? v : 0.0;
    case CT_ACTIVATION_GELU: return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case CT_ACTIVATION_GELU_TANH:
      return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case CT_ACTIVATION_SIGMOID: return 1.0 / (1.0 + std::exp(-v));
    case CT_ACTIVATION_TANH: return std::tanh(v);
    default: return v;
  }
}

// out = act(bias) broadcast to out (conv2d: bias along dim 1; matmul: bias
// aligned at the last dims), or act(0): bias rounded to out's dtype (as a
// cast), the activation in double, rounded once. The backend's own loop: it
// calls no public entry point.
Hook bias_activation(int bi, int oi, bool channel_dim1, int32_t act) {
  return [bi, oi, channel_dim1, act](const Exec& e) {
    const CTensor* bias = bi >= 0 ? e.t[bi] : nullptr;
    const CTensor* out = e.t[oi];
    const int32_t ot = dtype_index(out->dtype), bt = bias ? dtype_index(bias->dtype) : ot;
    const int32_t nd = out->ndim;
    int64_t bstride[CT_MAX_NDIM] = {0};  // bias's stride (elements) along each dim of out, 0 where it broadcasts
    if (bias)
      for (int32_t i = 0; i < nd; ++i) {
        const int32_t j = channel_dim1 ? (i == 1 ? 0 : -1) : i - (nd - bias->ndim);
        bstride[i] = j < 0 || bias->shape[j] == 1 ? 0 : ct_stride_of(bias, j);
      }
    const char* bbase = bias ? data_of(bias) : nullptr;
    const int64_t bsz = bias ? bias->dtype.bits / 8 : 0;
    for_each_elem(out, [&](int64_t l, char* ptr) {
      double v = 0.0;
      if (bias) {
        int64_t off = 0, rest = l;
        for (int32_t i = nd - 1; i >= 0; --i) {
          off += (rest % out->shape[i]) * bstride[i];
          rest /= out->shape[i];
        }
        v = round_to(ot, load_value(bbase + off * bsz, bt));
      }
      store_value(ptr, ot, activate(act, v));
    });
  };
}

// dbias[k] = the sum of dy[n, k, p, q] over (n, p, q), in double, rounded once.
Hook channel_sums(int dyi, int oi) {
  return [dyi, oi](const Exec& e) {
    const CTensor *dy = e.t[dyi], *out = e.t[oi];
    const int64_t K = dy->shape[1], PQ = dy->shape[2] * dy->shape[3];
    std::vector<double> sum((size_t)K, 0.0);
    const int32_t dt = dtype_index(dy->dtype), ot = dtype_index(out->dtype);
    for_each_elem(dy, [&](int64_t l, char* ptr) { sum[(size_t)((l / PQ) % K)] += load_value(ptr, dt); });
    for_each_elem(out, [&](int64_t l, char* ptr) { store_value(ptr, ot, sum[(size_t)l]); });
  };
}

// Calls with an empty input and a non-empty output, which core hands on (it
// skips only calls whose every output is empty, and does matmul's K = 0
// itself). oneDNN takes no empty tensors, so such a plan has no primitive:
// its hooks write what PyTorch does, a sum over nothing being 0:
//   matmul (K = 0) and conv2d (C = 0)  out = act(bias), or act(0) (torch's linear)
//   conv2d_backward_data (K = 0)       dx = 0
//   conv2d_backward_weight             dw = 0 (N = 0), dbias = dy summed over (N, P, Q)
//   batch_norm_training (N*H*W = 0)    mean = 0, invstd = NaN  } torch's layer_norm: Welford's mean of
//   layer_norm (normalized size 0)     mean = 0, rstd = NaN    } nothing is 0, its variance 0/0
//   batch_norm_backward, layer_norm_backward   dscale = dshift = 0
// *handled is false when no input is empty (the ordinary plan); *why says
// why not when a case has no rule.
CTStatus build_empty(const CTNNCall* c, Plan* p, bool* handled, std::string* why) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (!host() || host()->op_info(c->op, &info) != CT_OK) {
    *why = "the host does not describe this op";
    return CT_ERR_INTERNAL;
  }
  const int32_t count = c->num_tensors, inputs = info.num_inputs;
  bool any_in = false;
  for (int i = 0; i < inputs && i < count; ++i) any_in = any_in || (c->t[i] && has_zero_extent(c->t[i]));
  *handled = any_in;
  if (!any_in) return CT_OK;
  p->has_prim = false;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int i = inputs; i < count; ++i) {
    if (!c->t[i] || has_zero_extent(c->t[i])) continue;
    switch (c->op * 8 + i) {
      case CT_OP_MATMUL * 8 + 3:
        p->post.push_back(bias_activation(c->t[2] ? 2 : -1, 3, false,
                                          static_cast<const CTMatmulDesc*>(c->desc)->activation));
        break;
      case CT_OP_CONV2D * 8 + 3:
        p->post.push_back(bias_activation(c->t[2] ? 2 : -1, 3, true,
                                          static_cast<const CTConv2dDesc*>(c->desc)->activation));
        break;
      case CT_OP_CONV2D_BACKWARD_DATA * 8 + 2:
      case CT_OP_CONV2D_BACKWARD_WEIGHT * 8 + 2:
      case CT_OP_BATCH_NORM_BACKWARD * 8 + 6:
      case CT_OP_BATCH_NORM_BACKWARD * 8 + 7:
      case CT_OP_LAYER_NORM_BACKWARD * 8 + 6:
      case CT_OP_LAYER_NORM_BACKWARD * 8 + 7: p->post.push_back(fill_tensor(i, 0.0)); break;
      case CT_OP_CONV2D_BACKWARD_WEIGHT * 8 + 3: p->post.push_back(channel_sums(1, 3)); break;
      case CT_OP_BATCH_NORM_TRAINING * 8 + 4:
      case CT_OP_LAYER_NORM * 8 + 4: p->post.push_back(fill_tensor(i, 0.0)); break;
      case CT_OP_BATCH_NORM_TRAINING * 8 + 5:
      case CT_OP_LAYER_NORM * 8 + 5: p->post.push_back(fill_tensor(i, nan)); break;
      default: {  // no such shapes pass core's checks (an empty input makes these outputs empty too)
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s with an empty input and a non-empty output %d (of %s) has no rule",
                      info.name, i, info.tensor_names);
        *why = buf;
        return CT_ERR_INTERNAL;
      }
    }
  }
  return CT_OK;
}

// ---- geometry oneDNN takes --------------------------------------------------

// oneDNN 2.6 refuses (invalid_arguments) convolution and pooling descriptors
// with a stride, dilation, padding or (dilated) kernel above 2^31 - 1, and an
// average without the padding whose dilation is larger than the input. Core
// accepts any int64 whose arithmetic fits: here a stride that leaves one
// output window and the dilation of a one-tap kernel, which change nothing,
// are first made small (in the plan's own copy of the descriptor, *conv or
// *pool); what is still too large is CT_ERR_UNSUPPORTED naming the field
// (not CT_ERR_BACKEND from a descriptor oneDNN refuses).
constexpr int64_t kConvMaxPad = (int64_t)1 << 20;

CTStatus fit_geometry(const CTNNCall* c, CTConv2dDesc* conv_d, CTPool2dDesc* pool_d, std::string* why) {
  const bool conv = c->op == CT_OP_CONV2D || c->op == CT_OP_CONV2D_BACKWARD_DATA || c->op == CT_OP_CONV2D_BACKWARD_WEIGHT;
  const bool pool = c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_MAX_POOL2D_BACKWARD || c->op == CT_OP_AVG_POOL2D ||
                    c->op == CT_OP_AVG_POOL2D_BACKWARD;
  if (!conv && !pool) return CT_OK;
  const int64_t kMax = INT32_MAX;
  int64_t *stride, *dilation, *pb, *pe;
  const CTensor *x, *y, *w = nullptr;
  if (conv) {
    const int ix = c->op == CT_OP_CONV2D_BACKWARD_DATA ? 2 : 0,
              iy = c->op == CT_OP_CONV2D ? 3 : c->op == CT_OP_CONV2D_BACKWARD_DATA ? 0 : 1;
    const int iw = c->op == CT_OP_CONV2D_BACKWARD_WEIGHT ? 2 : 1;
    x = c->t[ix], y = c->t[iy], w = c->t[iw];
    std::memcpy(conv_d, c->desc, sizeof *conv_d);
    stride = conv_d->stride, dilation = conv_d->dilation, pb = conv_d->pad_begin, pe = conv_d->pad_end;
  } else {
    const bool fwd = c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_AVG_POOL2D;
    x = c->t[fwd ? 0 : c->op == CT_OP_MAX_POOL2D_BACKWARD ? 2 : 1], y = c->t[fwd ? 1 : 0];
    std::memcpy(pool_d, c->desc, sizeof *pool_d);
    stride = pool_d->stride, dilation = pool_d->dilation, pb = pool_d->pad_begin, pe = pool_d->pad_end;
  }
  for (int i = 0; i < 2; ++i) {
    const int64_t H = x->shape[2 + i], P = y->shape[2 + i], k = conv ? w->shape[2 + i] : pool_d->kernel[i];
    if (k == 1) dilation[i] = 1;
    const int64_t ext = dilation[i] * (k - 1) + 1, given_stride = stride[i];  // core checked that these fit in int64
    if (P == 1 && stride[i] > kMax) stride[i] = H + pb[i] + pe[i] - ext + 1;  // any stride past the span will do
    struct {
      const char* what;
      int64_t v;
      bool ok;
    } const f[] = {{"desc->pad_begin", pb[i], pb[i] <= kMax},
                   {"desc->pad_end", pe[i], pe[i] <= kMax},
                   {conv ? "the kernel's extent" : "desc->kernel", k, k <= kMax},
                   {"desc->dilation", dilation[i], dilation[i] <= kMax},
                   {"the dilated window", ext, ext <= kMax},
                   {"desc->stride", given_stride, stride[i] <= kMax}};
    for (const auto& e : f)
      if (!e.ok) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "%s[%d]=%" PRId64 " is beyond oneDNN %d.%d, which takes strides, dilations, paddings and "
                      "(dilated) kernels up to 2^31-1",
                      e.what, i, e.v, DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR);
        *why = buf;
        return CT_ERR_UNSUPPORTED;
      }
    // oneDNN 2.6 spends time in proportion to a huge padding while it
    // creates some convolutions (a one-row input with 33.5 M columns of
    // padding: 19.7 s; 3.4 M: 2.1 s; found by fuzz_nn), and a padding past
    // the dilated kernel only adds outputs that see no input.
    if (conv && (pb[i] > kConvMaxPad || pe[i] > kConvMaxPad)) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "desc->%s[%d]=%" PRId64 " is beyond the padding the CPU backend takes for a convolution (2^20: "
                    "oneDNN %d.%d's plans take time in proportion to it)",
                    pb[i] > kConvMaxPad ? "pad_begin" : "pad_end", i, pb[i] > kConvMaxPad ? pb[i] : pe[i],
                    DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR);
      *why = buf;
      return CT_ERR_UNSUPPORTED;
    }
    if (pool && pool_d->count_include_pad == 0 &&
        (c->op == CT_OP_AVG_POOL2D || c->op == CT_OP_AVG_POOL2D_BACKWARD) && dilation[i] > H) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "oneDNN %d.%d has no average pooling without the padding (count_include_pad=0) whose "
                    "desc->dilation[%d]=%" PRId64 " exceeds the input's extent %" PRId64 " (x.shape[%d])",
                    DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR, i, dilation[i], H, 2 + i);
      *why = buf;
      return CT_ERR_UNSUPPORTED;
    }
  }
  return CT_OK;
}

// oneDNN 2.6 keeps some extents in 32-bit ints: matmul with M or K = 2^32,
// a convolution with C = 2^32 and attention with E = 2^32 divide by zero
// (SIGFPE) when their primitive is created, and larger extents that do not
// crash there are truncated. A plan that calls oneDNN takes extents up to
// 2^31 - 1; a larger one is CT_ERR_UNSUPPORTED naming the tensor and the dim.
// (Tensors with an empty extent never reach oneDNN: see build_empty.)
CTStatus fit_extents(const CTNNCall* c, std::string* why) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  const bool named = host() && host()->op_info(c->op, &info) == CT_OK && info.tensor_names;
  for (int32_t i = 0; i < c->num_tensors; ++i) {
    const CTensor* t = c->t[i];
    if (!t) continue;
    for (int32_t d = 0; d < t->ndim; ++d) {
      if (t->shape[d] <= INT32_MAX) continue;
      // The i-th comma-separated name of "a,b,bias?,out", without its '?'.
      std::string name = "tensor " + std::to_string(i);
      if (named) {
        const char* s = info.tensor_names;
        for (int32_t k = 0; k < i && s; ++k) s = std::strchr(s, ',') ? std::strchr(s, ',') + 1 : nullptr;
        if (s) name.assign(s, std::strcspn(s, ",?:"));
      }
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s.shape[%d]=%" PRId64 " is beyond oneDNN %d.%d, which takes extents up to 2^31-1",
                    name.c_str(), d, t->shape[d], DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR);
      *why = buf;
      return CT_ERR_UNSUPPORTED;
    }
  }
  return CT_OK;
}

// ---- the backend slots ------------------------------------------------------

// Why oneDNN failed, as the message's tail ("oneDNN 2.6 has no ... (...)").
CTStatus backend_reason(const char* what, const dnnl::error& e, std::string* why) {
  char buf[512];
  if (e.status == dnnl_unimplemented) {
    std::snprintf(buf, sizeof buf, "oneDNN %d.%d has no %s implementation for this case on this CPU (%s)",
                  DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR, what, e.what());
    *why = buf;
    return CT_ERR_UNSUPPORTED;
  }
  std::snprintf(buf, sizeof buf, "oneDNN failed in %s: %s (status %d)", what, e.what(), (int)e.status);
  *why = buf;
  return CT_ERR_BACKEND;
}

// Builds the plan, or says why not (without setting the thread's message).
CTStatus create(const CTNNCall* c, std::unique_ptr<Plan>* out, int64_t* primitives, std::string* why) {
  std::unique_ptr<Plan> p(new Plan);
  p->op = c->op;
  p->nthreads = (int)c->variant;
  bool empty = false;
  if (c->op == CT_OP_SCALED_DOT_PRODUCT_ATTENTION) {  // its own plan, empty inputs included
    bool any_empty = false;
    for (int32_t i = 0; i < c->num_tensors; ++i) any_empty = any_empty || (c->t[i] && has_zero_extent(c->t[i]));
    if (!any_empty)
      if (CTStatus s = fit_extents(c, why)) return s;
    try {
      ThreadScope threads(p->nthreads);
      build_attention(c, p.get());
    } catch (const dnnl::error& e) {
      *primitives = p->primitives;
      return backend_reason(op_name(c->op), e, why);
    }
    *primitives = p->primitives;
    *out = std::move(p);
    return CT_OK;
  }
  if (CTStatus s = build_empty(c, p.get(), &empty, why)) return s;
  if (empty) {  // no primitive, no workspace: the hooks write the outputs
    *out = std::move(p);
    return CT_OK;
  }
  if (CTStatus s = fit_extents(c, why)) return s;
  // The geometry oneDNN takes, in the plan's copy of the descriptor.
  CTConv2dDesc conv_d;
  CTPool2dDesc pool_d;
  if (CTStatus s = fit_geometry(c, &conv_d, &pool_d, why)) return s;
  CTNNCall fitted = *c;
  if (c->op == CT_OP_CONV2D || c->op == CT_OP_CONV2D_BACKWARD_DATA || c->op == CT_OP_CONV2D_BACKWARD_WEIGHT)
    fitted.desc = &conv_d;
  else if (c->op == CT_OP_MAX_POOL2D || c->op == CT_OP_MAX_POOL2D_BACKWARD || c->op == CT_OP_AVG_POOL2D ||
           c->op == CT_OP_AVG_POOL2D_BACKWARD)
    fitted.desc = &pool_d;
  c = &fitted;
  try {
    ThreadScope threads(p->nthreads);
    switch (c->op) {
      case CT_OP_MATMUL: build_matmul(c, p.get()); break;
      case CT_OP_CONV2D:
      case CT_OP_CONV2D_BACKWARD_DATA:
      case CT_OP_CONV2D_BACKWARD_WEIGHT: build_conv(c, p.get()); break;
      case CT_OP_MAX_POOL2D:
      case CT_OP_MAX_POOL2D_BACKWARD:
      case CT_OP_AVG_POOL2D:
      case CT_OP_AVG_POOL2D_BACKWARD: build_pool(c, p.get()); break;
      case CT_OP_BATCH_NORM:
      case CT_OP_BATCH_NORM_TRAINING:
      case CT_OP_BATCH_NORM_BACKWARD:
      case CT_OP_LAYER_NORM:
      case CT_OP_LAYER_NORM_BACKWARD: build_norm(c, p.get()); break;
      default:
        *why = "the cpu backend has no NN kernel for this op";
        return CT_ERR_INTERNAL;
    }
  } catch (const dnnl::error& e) {
    *primitives = p->primitives;
    return backend_reason(op_name(c->op), e, why);
  }
  *primitives = p->primitives;
  *out = std::move(p);
  return CT_OK;
}

// The ops the nn_onednn files implement, by name (a new NN op is not one of them).
bool known_nn_op(int32_t op) {
  switch (op) {
    case CT_OP_MATMUL: case CT_OP_CONV2D: case CT_OP_CONV2D_BACKWARD_DATA: case CT_OP_CONV2D_BACKWARD_WEIGHT:
    case CT_OP_MAX_POOL2D: case CT_OP_MAX_POOL2D_BACKWARD: case CT_OP_AVG_POOL2D: case CT_OP_AVG_POOL2D_BACKWARD:
    case CT_OP_BATCH_NORM: case CT_OP_BATCH_NORM_TRAINING: case CT_OP_BATCH_NORM_BACKWARD: case CT_OP_LAYER_NORM:
    case CT_OP_LAYER_NORM_BACKWARD: case CT_OP_SCALED_DOT_PRODUCT_ATTENTION:
      return true;
    default:
      return false;
  }
}

// Whether oneDNN runs op for dtype dt here: asked once per pair with a tiny
// problem, since the answer depends on the CPU's ISA, not on shapes.
bool probe(int32_t op, int32_t dt, std::string* why) {
  const CTDataType f32 = ct_dtype_of_index(CT_DT_FLOAT32), i64 = ct_dtype_of_index(CT_DT_INT64);
  int64_t s4[4] = {2, 4, 6, 6}, w4[4] = {4, 4, 3, 3}, o4[4] = {2, 4, 4, 4}, p4[4] = {2, 4, 3, 3}, c1[1] = {4},
          m2[2] = {8, 8};
  auto T = [&](int nd, int64_t* shape, CTDataType type) {
    CTensor t;
    std::memset(&t, 0, sizeof t);
    t.device.device_type = CT_CPU;
    t.ndim = nd;
    t.shape = shape;
    t.dtype = type;
    return t;
  };
  const CTDataType x = ct_dtype_of_index(dt);
  CTensor ts[8];
  CTNNCall c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.fn = "probe";
  c.op = op;
  c.dt = dt;
  c.variant = 1;
  CTMatmulDesc mm = {sizeof(CTMatmulDesc), 0};
  CTConv2dDesc conv;
  std::memset(&conv, 0, sizeof conv);
  conv.struct_size = sizeof conv;
  conv.groups = 1;
  conv.stride[0] = conv.stride[1] = conv.dilation[0] = conv.dilation[1] = 1;
  CTPool2dDesc pool;
  std::memset(&pool, 0, sizeof pool);
  pool.struct_size = sizeof pool;
  pool.kernel[0] = pool.kernel[1] = pool.stride[0] = pool.stride[1] = 2;
  pool.dilation[0] = pool.dilation[1] = 1;
  CTBatchNormDesc bn = {sizeof(CTBatchNormDesc), 0, 1e-5};
  CTLayerNormDesc ln = {sizeof(CTLayerNormDesc), 1, 1e-5};
  auto set = [&](int i, CTensor t) {
    ts[i] = t;
    c.t[i] = &ts[i];
  };
  switch (op) {
    case CT_OP_MATMUL: c.desc = &mm, set(0, T(2, m2, x)), set(1, T(2, m2, x)), set(3, T(2, m2, x)); break;
    case CT_OP_CONV2D: c.desc = &conv, set(0, T(4, s4, x)), set(1, T(4, w4, x)), set(3, T(4, o4, x)); break;
    case CT_OP_CONV2D_BACKWARD_DATA:
      c.desc = &conv, set(0, T(4, o4, x)), set(1, T(4, w4, x)), set(2, T(4, s4, x));
      break;
    case CT_OP_CONV2D_BACKWARD_WEIGHT:
      c.desc = &conv, set(0, T(4, s4, x)), set(1, T(4, o4, x)), set(2, T(4, w4, x));
      break;
    case CT_OP_MAX_POOL2D: c.desc = &pool, set(0, T(4, s4, x)), set(1, T(4, p4, x)), set(2, T(4, p4, i64)); break;
    case CT_OP_MAX_POOL2D_BACKWARD:
      c.desc = &pool, set(0, T(4, p4, x)), set(1, T(4, p4, i64)), set(2, T(4, s4, x));
      break;
    case CT_OP_AVG_POOL2D: c.desc = &pool, set(0, T(4, s4, x)), set(1, T(4, p4, x)); break;
    case CT_OP_AVG_POOL2D_BACKWARD: c.desc = &pool, set(0, T(4, p4, x)), set(1, T(4, s4, x)); break;
    case CT_OP_BATCH_NORM:
      c.desc = &bn, set(0, T(4, s4, x)), set(1, T(1, c1, f32)), set(2, T(1, c1, f32)), set(5, T(4, s4, x));
      break;
    case CT_OP_BATCH_NORM_TRAINING:
      c.desc = &bn, set(0, T(4, s4, x)), set(3, T(4, s4, x)), set(4, T(1, c1, f32)), set(5, T(1, c1, f32));
      break;
    case CT_OP_BATCH_NORM_BACKWARD:
      c.desc = &bn, set(0, T(4, s4, x)), set(1, T(4, s4, x)), set(2, T(1, c1, f32)), set(3, T(1, c1, f32)),
      set(5, T(4, s4, x));
      break;
    case CT_OP_LAYER_NORM: c.desc = &ln, set(0, T(2, m2, x)), set(3, T(2, m2, x)); break;
    case CT_OP_LAYER_NORM_BACKWARD:
      c.desc = &ln, set(0, T(2, m2, x)), set(1, T(2, m2, x)), set(2, T(1, m2, f32)), set(3, T(1, m2, f32)),
      set(5, T(2, m2, x));
      break;
    case CT_OP_SCALED_DOT_PRODUCT_ATTENTION: {
      static CTAttentionDesc ad = {sizeof(CTAttentionDesc), 0, 0.0};
      static int64_t a3[3] = {2, 32, 32};
      c.desc = &ad, set(0, T(3, a3, x)), set(1, T(3, a3, x)), set(2, T(3, a3, x)), set(4, T(3, a3, x));
      break;
    }
    default: *why = "not an NN op of the cpu backend"; return false;
  }
  c.num_tensors = 8;
  std::unique_ptr<Plan> p;
  int64_t prims = 0;
  return create(&c, &p, &prims, why) == CT_OK;
}

}  // namespace
}  // namespace onednn

using onednn::CopyFailed;
using onednn::Plan;
using onednn::create;
using onednn::execute;
using onednn::known_nn_op;
using onednn::probe;

CTStatus nn_supports(const CTSupportQuery* q) {
  const int32_t op = q->op, dt = q->dt;
  if (!known_nn_op(op) || !((CT_DTS_NN >> dt) & 1u))
    return fail(CT_ERR_UNSUPPORTED, "%s: the cpu backend has no %s kernel for %s", q->fn, op_name(op), dtype_name(dt));
  // A float32 out for half data: matmul only (oneDNN's f32 destination),
  // wherever the half matmul itself runs (probed below).
  if (q->out_dt >= 0 && q->out_dt != dt && !(op == CT_OP_MATMUL && q->out_dt == CT_DT_FLOAT32))
    return fail(CT_ERR_UNSUPPORTED, "%s: the cpu backend has no %s kernel from %s to %s", q->fn, op_name(op),
                dtype_name(dt), dtype_name(q->out_dt));
  if (dt == CT_DT_FLOAT32) return CT_OK;
  static std::once_flag once[CT_OP_END_][CT_DT_COUNT];
  static std::string why[CT_OP_END_][CT_DT_COUNT];
  static bool ok[CT_OP_END_][CT_DT_COUNT];
  std::call_once(once[op][dt], [&] { ok[op][dt] = probe(op, dt, &why[op][dt]); });
  if (ok[op][dt]) return CT_OK;
  return fail(CT_ERR_UNSUPPORTED, "%s: %s is not available for %s on this CPU: %s", q->fn, op_name(op),
              dtype_name(dt), why[op][dt].c_str());
}

// The workspace queries take no stream and answer for the default thread
// count, which is therefore also the most a call uses (scratch grows with
// threads): a stream may ask for fewer, never more.
CTStatus nn_variant(const char* fn, int32_t, void* stream, int64_t* variant) {
  CTCpuStream copy;
  const CTCpuStream* s = nullptr;
  if (CTStatus st = resolve_stream(fn, stream, &copy, &s)) return st;
  const int dflt = default_threads();
  *variant = s && s->num_threads > 0 && s->num_threads < dflt ? s->num_threads : dflt;
  return CT_OK;
}

#if defined(__SANITIZE_THREAD__)
#define CT_SERIAL_ONEDNN_CREATION 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CT_SERIAL_ONEDNN_CREATION 1
#endif
#endif

CTStatus nn_plan_create(const CTNNCall* c, void** impl, size_t* workspace_bytes, int64_t* primitives) {
#ifdef CT_SERIAL_ONEDNN_CREATION
  // ThreadSanitizer builds only. oneDNN's primitive cache hands a primitive
  // (and its descriptor) that one thread is still creating to the others
  // through a std::promise/std::future whose atomics are compiled into
  // libdnnl, which is not instrumented: TSan misses that happens-before edge
  // and reports the waiting thread's reads of the creator's fresh descriptor
  // as races (in memcmp under the cache's lock, and in dnnl.hpp's queries).
  // Creating one plan at a time gives TSan the edge through this mutex and
  // no entry is ever pending for another thread; executing plans, the plan
  // cache and everything else stay concurrent and checked. Release builds
  // create concurrently: the future does synchronise.
  static std::mutex creating;
  std::lock_guard<std::mutex> one_at_a_time(creating);
#endif
  std::unique_ptr<Plan> p;
  std::string why;
  *primitives = 0;
  if (CTStatus s = create(c, &p, primitives, &why)) return fail(s, "%s: %s", c->fn, why.c_str());
  *workspace_bytes = p->total;
  *impl = p.release();
  return CT_OK;
}

CTStatus nn_plan_execute(void* impl, const CTNNCall* call, void* workspace, size_t) {
  Plan* p = static_cast<Plan*>(impl);
  try {
    return execute(p, call->fn, call->t, workspace);
  } catch (const dnnl::error& e) {
    return fail(CT_ERR_BACKEND, "%s: oneDNN failed while running %s: %s (status %d)", call->fn, op_name(p->op),
                e.what(), (int)e.status);
  } catch (const CopyFailed& f) {
    return f.status;
  } catch (const std::bad_alloc&) {
    return fail(CT_ERR_OUT_OF_MEMORY, "%s: out of memory in the cpu backend", call->fn);
  } catch (const std::exception& e) {
    return fail(CT_ERR_INTERNAL, "%s: the cpu backend failed: %s", call->fn, e.what());
  }
}

void nn_plan_destroy(void* impl) { delete static_cast<Plan*>(impl); }

}  // namespace cpu
}  // namespace ct
