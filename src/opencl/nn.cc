// nn.cc — NN ops on OpenCL devices. matmul runs through CLBlast's GEMM (when
// the module was built with it): transposes by strides become CLBlast's
// transpose flags, batches (broadcast ones included) one GemmBatched call
// with per-batch offsets; an operand whose last two strides are neither
// layout is packed into the workspace first by the module's strided copy
// kernel, and so is an output that is not row-major in its last dim. The
// bias and the activation follow as the module's own binary `add` and unary
// activation kernels (the ops' rows, not a second copy of their formulas).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "backend.h"
#include "nn_internal.h"

namespace ctcl {

bool nn_supported(int32_t op, int32_t dt, std::string* why) {
#ifdef CT_HAVE_CLBLAST
  switch (op) {
    case CT_OP_MATMUL:
    case CT_OP_CONV2D:
    case CT_OP_CONV2D_BACKWARD_DATA:
    case CT_OP_CONV2D_BACKWARD_WEIGHT:
    case CT_OP_MAX_POOL2D:
    case CT_OP_MAX_POOL2D_BACKWARD:
    case CT_OP_AVG_POOL2D:
    case CT_OP_AVG_POOL2D_BACKWARD:
    case CT_OP_BATCH_NORM:
    case CT_OP_BATCH_NORM_TRAINING:
    case CT_OP_BATCH_NORM_BACKWARD:
    case CT_OP_LAYER_NORM:
    case CT_OP_LAYER_NORM_BACKWARD:
    case CT_OP_SCALED_DOT_PRODUCT_ATTENTION: break;
    default:
      *why = "the OpenCL backend has no kernel for this NN op (plugin ops included)";
      return false;
  }
  // float16 and bfloat16 data too
  const bool own_kernels = ctgpu::is_pool(op) || ctgpu::is_norm(op) || ctgpu::is_attention(op);
  if (dt != CT_DT_FLOAT32 && !(own_kernels && (dt == CT_DT_FLOAT16 || dt == CT_DT_BFLOAT16))) {
    *why = own_kernels ? "pooling, norms and attention on OpenCL run float16, bfloat16 and float32"
                       : "matmul and conv2d on OpenCL run float32 (CLBlast's half GEMM needs cl_khr_fp16; "
                         "bfloat16 has none)";
    return false;
  }
  return true;
#else
  (void)op;
  (void)dt;
  *why = "this OpenCL module was built without CLBlast: no NN ops";
  return false;
#endif
}

#ifdef CT_HAVE_CLBLAST

namespace {

struct Operand {
  bool trans = false;  // CLBlast's transpose flag for this operand (row-major layout)
  bool pack = false;   // copied into the workspace first (compact row-major)
  size_t ld = 0;
  size_t ws_off = 0;   // bytes into the workspace when packed
};

struct MatmulPlan : NNPlan {
  int64_t M = 0, N = 0, K = 0, B = 1;
  int32_t out_nd = 0;
  int64_t bshape[CT_MAX_NDIM] = {0};  // out's batch dims
  Operand a, b, c;
  size_t temp_bytes = 0;  // CLBlast's temporary buffer, at the start of the workspace
  size_t ws_bytes = 0;
  int32_t act = CT_ACTIVATION_NONE;
};

// Row-major [.., R, C] with unit stride on C: ld = stride(R), no transpose;
// unit stride on R: ld = stride(C), transposed; else packed.
Operand layout_of(const CTensor* t, int64_t R, int64_t C) {
  Operand o;
  const int32_t n = t->ndim;
  const int64_t sr = stride_of(t, n - 2), sc = stride_of(t, n - 1);
  if ((sc == 1 || C == 1) && (sr >= C || R == 1) && sr >= 1) {
    o.ld = (size_t)(R == 1 ? std::max<int64_t>(C, 1) : sr);
  } else if ((sr == 1 || R == 1) && (sc >= R || C == 1) && sc >= 1) {
    o.trans = true;
    o.ld = (size_t)(C == 1 ? std::max<int64_t>(R, 1) : sc);
  } else {
    o.pack = true;
    o.ld = (size_t)std::max<int64_t>(C, 1);
  }
  return o;
}

// Element offset of batch bi of t (its batch dims right-aligned to out's).
int64_t batch_offset(const CTensor* t, const MatmulPlan& p, int64_t bi) {
  int64_t off = 0, r = bi;
  const int32_t tb = t->ndim - 2, ob = p.out_nd - 2;
  for (int32_t d = ob - 1; d >= 0; --d) {
    const int64_t e = p.bshape[d], c = r % e;
    r /= e;
    const int32_t td = d - (ob - tb);
    if (td >= 0 && t->shape[td] != 1) off += c * stride_of(t, td);
  }
  return off;
}

const char* clblast_name(clblast::StatusCode s) {
  switch (s) {
    case clblast::StatusCode::kInvalidDimension: return "kInvalidDimension";
    case clblast::StatusCode::kInvalidLeadDimA: return "kInvalidLeadDimA";
    case clblast::StatusCode::kInvalidLeadDimB: return "kInvalidLeadDimB";
    case clblast::StatusCode::kInvalidLeadDimC: return "kInvalidLeadDimC";
    case clblast::StatusCode::kInsufficientMemoryA: return "kInsufficientMemoryA";
    case clblast::StatusCode::kInsufficientMemoryB: return "kInsufficientMemoryB";
    case clblast::StatusCode::kInsufficientMemoryC: return "kInsufficientMemoryC";
    case clblast::StatusCode::kInsufficientMemoryTemp: return "kInsufficientMemoryTemp";
    case clblast::StatusCode::kNoDoublePrecision: return "kNoDoublePrecision";
    case clblast::StatusCode::kNoHalfPrecision: return "kNoHalfPrecision";
    default: return nullptr;
  }
}

}  // namespace

CTStatus blast_fail(const char* fn, const char* what, clblast::StatusCode s) {
  const int code = static_cast<int>(s);
  if (const char* n = clblast_name(s))
    return g_host->set_error(CT_ERR_BACKEND, "%s: CLBlast %s failed: %s (%d)", fn, what, n, code);
  if (code < 0 && code > -100)  // an OpenCL error passed through
    return g_host->set_error(CT_ERR_BACKEND, "%s: CLBlast %s failed: %s (%d)", fn, what, cl_error_name(code), code);
  return g_host->set_error(CT_ERR_BACKEND, "%s: CLBlast %s failed with status %d", fn, what, code);
}



CTStatus elementwise_on(const char* fn, int32_t op, const CTensor* a, const CTensor* b, const CTensor* out,
                        void* stream) {
  CTElementwiseCall c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.op = op;
  c.fn = fn;
  c.num_inputs = b ? 2 : 1;
  c.out_dt = CT_DT_FLOAT32;
  c.in[0] = a;
  c.in[1] = b;
  c.out = out;
  c.in_dt[0] = CT_DT_FLOAT32;
  c.in_dt[1] = b ? CT_DT_FLOAT32 : -1;
  c.in_dt[2] = -1;
  c.stream = stream;
  c.numel = numel_of(out);
  return cl_elementwise(&c);
}


size_t align_up(size_t v) { return (v + 255) & ~(size_t)255; }

CTStatus bias_and_activation(const char* fn, const CTensor* out, const CTensor* bias_view, int32_t act, void* stream) {
  if (bias_view)
    if (CTStatus s = elementwise_on(fn, CT_OP_ADD, out, bias_view, out, stream)) return s;
  if (activation_op(act) >= 0) return elementwise_on(fn, activation_op(act), out, nullptr, out, stream);
  return CT_OK;
}

// Zeros into t (any layout) through a compact temporary and the copy kernel.
CTStatus zero_fill(const char* fn, Device* d, const Queue& q, const CTensor* t, void* stream) {
  const int64_t n = numel_of(t);
  if (n == 0) return CT_OK;
  const float zero = 0.0f;
  if (ct_is_compact(t)) {
    const cl_int e = clEnqueueFillBuffer(q.q, mem_of(t), &zero, 4, t->byte_offset, (size_t)n * 4, 0, nullptr, nullptr);
    return e == CL_SUCCESS ? CT_OK : cl_fail(fn, "clEnqueueFillBuffer", e);
  }
  void* tmp = nullptr;
  if (CTStatus s = g_host->temp_alloc(t->device, (size_t)n * 4, stream, &tmp)) return s;
  CTStatus s = CT_OK;
  const cl_int e = clEnqueueFillBuffer(q.q, static_cast<cl_mem>(tmp), &zero, 4, 0, (size_t)n * 4, 0, nullptr, nullptr);
  if (e != CL_SUCCESS) s = cl_fail(fn, "clEnqueueFillBuffer", e);
  if (s == CT_OK) {
    const CTensor c = ws_tensor(t, tmp, 0);
    s = device_copy(fn, d, q, CT_DT_FLOAT32, &c, t);
  }
  g_host->temp_free(t->device, tmp, stream);
  return s;
}


CTStatus matmul_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives) {
  const char* fn = call->fn;
  const CTensor *a = call->t[0], *b = call->t[1], *out = call->t[3];
  Device* d = device(out->device.device_id);
  auto p = std::make_unique<MatmulPlan>();
  p->op = CT_OP_MATMUL;
  p->device_id = out->device.device_id;
  p->M = a->shape[a->ndim - 2];
  p->K = a->shape[a->ndim - 1];
  p->N = b->shape[b->ndim - 1];
  p->out_nd = out->ndim;
  for (int32_t i = 0; i < out->ndim - 2; ++i) {
    p->bshape[i] = out->shape[i];
    p->B *= out->shape[i];
  }
  const CTMatmulDesc* desc = static_cast<const CTMatmulDesc*>(call->desc);
  p->act = desc ? desc->activation : CT_ACTIVATION_NONE;
  p->a = layout_of(a, p->M, p->K);
  p->b = layout_of(b, p->K, p->N);
  p->c = layout_of(out, p->M, p->N);
  // CLBlast writes C row-major (ldc on M): a transposed out goes through the workspace
  if (p->c.trans) {
    p->c.trans = false;
    p->c.pack = true;
    p->c.ld = (size_t)std::max<int64_t>(p->N, 1);
  }
  Queue q;
  if (CTStatus s = queue_of(fn, d, call->stream, &q)) return s;
  if (p->M > 0 && p->N > 0 && p->K > 0) {
    size_t temp = 0;
    const auto st = clblast::GemmTempBufferSize<float>(
        clblast::Layout::kRowMajor, p->a.trans ? clblast::Transpose::kYes : clblast::Transpose::kNo,
        p->b.trans ? clblast::Transpose::kYes : clblast::Transpose::kNo, (size_t)p->M, (size_t)p->N, (size_t)p->K, 0,
        p->a.ld, 0, p->b.ld, 0, p->c.ld, &q.q, temp);
    if (st != clblast::StatusCode::kSuccess) return blast_fail(fn, "GemmTempBufferSize", st);
    p->temp_bytes = temp;
  }
  size_t off = align_up(p->temp_bytes);
  if (p->a.pack) {
    p->a.ws_off = off;
    off = align_up(off + (size_t)numel_of(a) * 4);
  }
  if (p->b.pack) {
    p->b.ws_off = off;
    off = align_up(off + (size_t)numel_of(b) * 4);
  }
  if (p->c.pack) {
    p->c.ws_off = off;
    off = align_up(off + (size_t)numel_of(out) * 4);
  }
  p->ws_bytes = (p->temp_bytes || p->a.pack || p->b.pack || p->c.pack) ? off : 0;
  *workspace_bytes = p->ws_bytes;
  *primitives = 1;
  *plan = p.release();
  return CT_OK;
}

CTStatus matmul_plan_execute(const NNPlan* plan_ptr, const CTNNCall* call, void* workspace) {
  const MatmulPlan& p = *static_cast<const MatmulPlan*>(plan_ptr);
  const char* fn = call->fn;
  const CTensor *a = call->t[0], *b = call->t[1], *bias = call->t[2], *out = call->t[3];
  Device* d = device(p.device_id);
  Queue q;
  if (CTStatus s = queue_of(fn, d, call->stream, &q)) return s;
  CTensor ap = *a, bp = *b, cp = *out;
  if (p.a.pack) {
    ap = ws_tensor(a, workspace, p.a.ws_off);
    if (CTStatus s = device_copy(fn, d, q, CT_DT_FLOAT32, a, &ap)) return s;
  }
  if (p.b.pack) {
    bp = ws_tensor(b, workspace, p.b.ws_off);
    if (CTStatus s = device_copy(fn, d, q, CT_DT_FLOAT32, b, &bp)) return s;
  }
  if (p.c.pack) cp = ws_tensor(out, workspace, p.c.ws_off);
  const int64_t numel = numel_of(out);
  if (numel > 0 && p.K == 0) {  // sums of nothing: zeros
    if (CTStatus s = zero_fill(fn, d, q, &cp, call->stream)) return s;
  } else if (numel > 0) {
    const auto ta = p.a.trans ? clblast::Transpose::kYes : clblast::Transpose::kNo;
    const auto tb = p.b.trans ? clblast::Transpose::kYes : clblast::Transpose::kNo;
    cl_mem temp = p.temp_bytes ? static_cast<cl_mem>(workspace) : nullptr;
    const size_t a0 = ap.byte_offset / 4, b0 = bp.byte_offset / 4, c0 = cp.byte_offset / 4;
    clblast::StatusCode st;
    if (p.B == 1) {
      st = clblast::Gemm<float>(clblast::Layout::kRowMajor, ta, tb, (size_t)p.M, (size_t)p.N, (size_t)p.K, 1.0f,
                                mem_of(&ap), a0, p.a.ld, mem_of(&bp), b0, p.b.ld, 0.0f, mem_of(&cp), c0, p.c.ld, &q.q,
                                nullptr, temp);
    } else {
      std::vector<size_t> ao((size_t)p.B), bo((size_t)p.B), co((size_t)p.B);
      std::vector<float> alphas((size_t)p.B, 1.0f), betas((size_t)p.B, 0.0f);
      for (int64_t i = 0; i < p.B; ++i) {
        ao[(size_t)i] = a0 + (size_t)batch_offset(&ap, p, i);
        bo[(size_t)i] = b0 + (size_t)batch_offset(&bp, p, i);
        co[(size_t)i] = c0 + (size_t)batch_offset(&cp, p, i);
      }
      st = clblast::GemmBatched<float>(clblast::Layout::kRowMajor, ta, tb, (size_t)p.M, (size_t)p.N, (size_t)p.K,
                                       alphas.data(), mem_of(&ap), ao.data(), p.a.ld, mem_of(&bp), bo.data(), p.b.ld,
                                       betas.data(), mem_of(&cp), co.data(), p.c.ld, (size_t)p.B, &q.q, nullptr);
    }
    if (st != clblast::StatusCode::kSuccess) return blast_fail(fn, p.B == 1 ? "Gemm" : "GemmBatched", st);
  }
  if (p.c.pack && numel > 0)
    if (CTStatus s = device_copy(fn, d, q, CT_DT_FLOAT32, &cp, out)) return s;
  if (numel == 0) return CT_OK;
  int64_t bstr[CT_MAX_NDIM];  // bias broadcast to out's shape (stride 0 on the dims it lacks or has as 1)
  CTensor bv;
  if (bias) {
    bv = *bias;
    bv.ndim = out->ndim;
    bv.shape = out->shape;
    for (int32_t i = 0; i < out->ndim; ++i) {
      const int32_t j = i - (out->ndim - bias->ndim);
      bstr[i] = (j < 0 || bias->shape[j] == 1) ? 0 : stride_of(bias, j);
    }
    bv.strides = bstr;
  }
  return bias_and_activation(fn, out, bias ? &bv : nullptr, p.act, call->stream);
}

CTStatus shared_kernels(const NNPlan* plan, const CTNNCall* call, const char* body, const char* what, Device** d,
                        Queue* q, Program** prog) {
  *d = device(plan->device_id);
  if (CTStatus s = queue_of(call->fn, *d, call->stream, q)) return s;
  std::string label;
  const std::string src = nn_program(*d, call->dt, body, what, &label);
  return get_program(call->fn, *d, q->ctx, src, label, prog);
}

CTStatus cl_nn_plan_create(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives) {
  if (call->op == CT_OP_MATMUL) return matmul_plan_create(call, plan, workspace_bytes, primitives);
  if (is_pool(call->op) || is_norm(call->op) || is_attention(call->op)) {  // nothing to keep: the op and the device
    auto p = std::make_unique<NNPlan>();
    p->op = call->op;
    p->device_id = call->t[0]->device.device_id;
    *workspace_bytes = 0;
    *primitives = 1;
    *plan = p.release();
    return CT_OK;
  }
  return conv_plan_create(call, plan, workspace_bytes, primitives);
}

CTStatus cl_nn_plan_execute(void* plan, const CTNNCall* call, void* workspace, size_t) {
  const NNPlan* p = static_cast<const NNPlan*>(plan);
  if (p->op == CT_OP_MATMUL) return matmul_plan_execute(p, call, workspace);
  if (is_pool(p->op)) return pool_plan_execute(p, call);
  if (is_norm(p->op)) return norm_plan_execute(p, call);
  if (is_attention(p->op)) return attention_plan_execute(p, call);
  return conv_plan_execute(p, call, workspace);
}

void cl_nn_plan_destroy(void* plan) { delete static_cast<NNPlan*>(plan); }

#else

CTStatus cl_nn_plan_create(const CTNNCall* call, void**, size_t*, int64_t*) {
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: this OpenCL module was built without CLBlast: no NN ops", call->fn);
}
CTStatus cl_nn_plan_execute(void*, const CTNNCall* call, void*, size_t) {
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: this OpenCL module was built without CLBlast: no NN ops", call->fn);
}
void cl_nn_plan_destroy(void*) {}

#endif

}  // namespace ctcl
