// The cases `ctensor bench` times (see bench_cases.h): filling a case's
// inputs, the category 1/2 cases on n-element operands (build_elementwise)
// and one representative shape per NN op, made from the op's row alone
// (build_nn).
#include "bench_cases.h"

#include <ctensor/ctensor.h>
#include <ctensor/plugin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ctool {
namespace {

// Memory the host can write directly (inputs are filled through ct_cast there).
bool host_visible(CTDevice d) {
  return d.device_type == CT_CPU || d.device_type == CT_CUDA_HOST || d.device_type == CT_ROCM_HOST ||
         d.device_type == CT_CUDA_MANAGED;
}

float hash01(uint64_t i, uint64_t salt) {
  uint64_t h = (i + salt * 0x632BE59BD9B4E019ull) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return float(h >> 40) * (1.0f / 16777216.0f);
}

CTDataType output_dtype(const CTOpInfo& info, CTDataType in) {
  const int32_t out = ct_output_dtype_index(info.output_dtype, ct_dtype_index(in));
  return out < 0 ? in : kDtypes[out].dt;
}

// The scalar parameters of a case; an op not named here gets num_params
// values 0.5, 1.5, ... (integer dtypes: 1, 2, ...).
std::vector<double> op_params(const std::string& op, int num_params, CTDataType dt) {
  const bool f = is_float(dt);
  if (op == "leaky_relu") return {f ? 0.01 : 1.0};
  if (op == "elu") return {1.0};
  if (op == "clamp") return f ? std::vector<double>{0.75, 1.5} : std::vector<double>{2, 5};
  if (op == "pow_scalar") return {f ? 1.5 : 2.0};
  if (op == "add_scalar") return {1.0};
  if (op == "mul_scalar") return {2.0};
  if (op == "var" || op == "std") return {0.0};  // NumPy's default ddof
  if (op == "round_decimals") return {2.0};
  if (op == "polygamma") return {2.0};
  if (op == "mvlgamma") return {3.0};
  if (op == "softplus_beta") return {1.0, 20.0};  // PyTorch's defaults
  if (op == "addcmul" || op == "addcdiv") return {0.5};
  if (op == "quantile" || op == "nanquantile") return {0.5};
  if (op == "kthvalue") return {1.0};
  std::vector<double> p;
  for (int k = 0; k < num_params; ++k) p.push_back(f ? k + 0.5 : k + 1.0);
  return p;
}

}  // namespace

std::string dims(const std::vector<int64_t>& s, const char* sep) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? sep : "") + std::to_string(s[i]);
  return r;
}

// ---------------------------------------------------------------------------
// Case
// ---------------------------------------------------------------------------

// A tensor argument of the call (counted in bytes); inputs are filled.
CTensor* Case::tensor(std::vector<int64_t> shp, CTDataType dt, Domain dom) {
  shapes.push_back(std::move(shp));
  std::vector<int64_t>& s = shapes.back();
  int64_t numel = 1;
  for (int64_t e : s) numel *= e;
  const size_t nbytes = size_t(numel) * (dt.bits / 8);
  bytes += nbytes;
  CTensor t{};
  t.device = dev;
  t.ndim = int32_t(s.size());
  t.dtype = dt;
  t.shape = s.data();
  void* p = nullptr;
  if (ct_malloc(dev, std::max<size_t>(nbytes, 64), &p) != CT_OK) {
    fail("ct_malloc of " + std::to_string(nbytes) + " bytes: " + ct_last_error());
  } else {
    mem.push_back(p);
    t.data = p;
    if (dom != kOutput) fill(t, numel, dom);
  }
  tensors.push_back(t);
  return &tensors.back();
}

void Case::fill(CTensor& t, int64_t numel, Domain dom) {
  const uint64_t s = salt++;
  const CTDataType dt = t.dtype;
  // float32 values for elements [i0, i0 + len) into v.
  auto values = [&](std::vector<float>& v, int64_t i0, int64_t len) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < len; ++i) {
      const float u = hash01(uint64_t(i0 + i), s);
      v[size_t(i)] = dom == kZeros        ? 0.0f
                     : dt.code == CT_BOOL ? (u < 0.5f && dom != kNonzero ? 0.0f : 1.0f)
                     : !is_float(dt)      ? 1.0f + std::floor(7.0f * u)
                     : dom == kNearOne    ? 0.995f + 0.01f * u
                     : dom == kUnit       ? -0.95f + 1.9f * u
                     : dom == kProb       ? 0.02f + 0.96f * u
                     : dom == kAboveOne   ? 1.0f + 1.5f * u
                                          : 0.5f + 1.5f * u;
    }
  };
  if (host_visible(dev)) {
    // In pieces of 16 Mi elements, each cast into a flat view of t (compact),
    // so an input of a billion int8 elements needs no 4 GiB of float32 first.
    const int64_t piece = std::min<int64_t>(std::max<int64_t>(numel, 1), int64_t(1) << 24);
    std::vector<float> v(static_cast<size_t>(piece));
    for (int64_t i0 = 0; i0 < numel; i0 += piece) {
      int64_t len = std::min(piece, numel - i0);
      values(v, i0, len);
      CTensor src{v.data(), {CT_CPU, 0}, 1, kF32, &len, nullptr, 0};
      CTensor dst{static_cast<char*>(t.data) + i0 * (dt.bits / 8), t.device, 1, dt, &len, nullptr, 0};
      if (ct_cast(&src, &dst, nullptr) != CT_OK)
        return fail(std::string("filling an input (ct_cast): ") + ct_last_error());
    }
    return;
  }
  std::vector<float> v(size_t(std::max<int64_t>(numel, 1)));
  values(v, 0, numel);
  CTensor src{v.data(), {CT_CPU, 0}, t.ndim, kF32, t.shape, nullptr, 0};
  // Another device: copy float32 values there, then cast on the device
  // (values are only a nicety for timing: a failure leaves them as they are).
  void* p = nullptr;
  if (ct_malloc(dev, v.size() * 4, &p) != CT_OK) return;
  CTensor tmp = src;
  tmp.data = p;
  tmp.device = dev;
  if (ct_copy(&src, &tmp, nullptr) == CT_OK) ct_cast(&tmp, &t, nullptr);
  ct_synchronize(dev, nullptr);
  ct_free(dev, p);
}

// The workspace of an NN call, from the status and size of its query.
void Case::workspace(CTStatus query, size_t n) {
  if (query != CT_OK) return fail(std::string(ct_status_string(query)) + ": " + ct_last_error());
  ws_bytes = n;
  if (n && ct_malloc(dev, n, &ws) != CT_OK) fail("ct_malloc of the workspace: " + std::string(ct_last_error()));
  if (ws) mem.push_back(ws);
}

// ---------------------------------------------------------------------------
// Category 1/2 cases
// ---------------------------------------------------------------------------

Domain input_domain(const std::string& op) {
  if (op == "prod" || op == "cumprod") return kNearOne;
  if (op == "any") return kZeros;
  if (op == "all") return kNonzero;
  if (op == "asin" || op == "acos" || op == "atanh" || op == "erfinv") return kUnit;
  if (op == "logit" || op == "ndtri") return kProb;
  if (op == "acosh") return kAboveOne;
  return kValues;
}
const char* domain_name(Domain d) {
  switch (d) {
    case kNearOne: return "near_one";
    case kZeros: return "zeros";
    case kNonzero: return "nonzero";
    case kUnit: return "unit";
    case kProb: return "prob";
    case kAboveOne: return "above_one";
    default: return "values";
  }
}

void build_elementwise(Case& c, const CTOpInfo& info, CTDataType dt, int64_t n, Row& row) {
  const std::string op = info.name;
  const CTDataType odt = output_dtype(info, dt);
  const Domain dom = input_domain(op);
  row.domain = domain_name(dom);
  c.params = op_params(op, info.num_params, dt);
  const std::vector<double>* prm = &c.params;
  const int32_t np = int32_t(c.params.size());
  const int32_t id = info.op;
  const Case* cs = &c;  // the lambdas read c.stream when they run
  row.kind = info.kind;
  row.params = c.params;
  row.out_dtype = dtype_name(odt);
  switch (info.kind) {
    case CT_KIND_UNARY: {
      CTensor *x = c.tensor({n}, dt, dom), *y = c.tensor({n}, odt, kOutput);
      c.run = [=] { return ct_unary(id, x, y, cs->stream); };
      break;
    }
    case CT_KIND_UNARY_PARAM: {
      CTensor *x = c.tensor({n}, dt, dom), *y = c.tensor({n}, odt, kOutput);
      c.run = [=] { return ct_unary_param(id, x, prm->data(), np, y, cs->stream); };
      break;
    }
    case CT_KIND_TERNARY: {
      CTensor* a = c.tensor({n}, op == "where" ? kBool : dt);
      CTensor *b = c.tensor({n}, dt), *d = c.tensor({n}, dt), *y = c.tensor({n}, odt, kOutput);
      c.run = [=] { return ct_ternary_param(id, a, b, d, prm->data(), np, y, cs->stream); };
      break;
    }
    case CT_KIND_CAST: {
      const CTDataType to = same(dt, kF16) ? kF32 : kF16;
      row.out_dtype = dtype_name(to);
      CTensor *x = c.tensor({n}, dt), *y = c.tensor({n}, to, kOutput);
      c.run = [=] { return ct_cast(x, y, cs->stream); };
      c.shape = std::to_string(n) + " to " + dtype_name(to);
      break;
    }
    case CT_KIND_BINARY: {
      CTensor *a = c.tensor({n}, dt), *b = c.tensor({n}, dt), *y = c.tensor({n}, odt, kOutput);
      c.run = [=] { return ct_binary(id, a, b, y, cs->stream); };
      break;
    }
    case CT_KIND_REDUCE:
    case CT_KIND_ALONG_AXIS: {
      const int64_t cols = std::min<int64_t>(1024, n), rows = std::max<int64_t>(1, n / cols);
      row.np_shape = {rows, cols};
      CTensor* x = c.tensor({rows, cols}, dt, dom);
      if (info.kind == CT_KIND_REDUCE) {
        CTensor* y = c.tensor({}, odt, kOutput);
        c.run = [=] { return ct_reduce(id, x, nullptr, 0, 0, prm->data(), np, y, cs->stream); };
        c.shape = dims(row.np_shape) + " all axes";
      } else {
        CTensor* y = c.tensor({rows, cols}, odt, kOutput);
        c.run = [=] { return ct_along_axis(id, x, -1, y, cs->stream); };
        c.shape = dims(row.np_shape) + " axis -1";
      }
      return;
    }
    case CT_KIND_INDEX: {
      // (rows, cols) x; int64 indices are the inputs' integers 1..7 (valid for cols >= 8): take and
      // index_add along axis 0 by a (rows,) index, the others along axis 1 by a (rows, cols) one
      const int64_t cols = std::min<int64_t>(1024, std::max<int64_t>(8, n)), rows = std::max<int64_t>(1, n / cols);
      row.np_shape = {rows, cols};
      const CTDataType i64 = {CT_INT, 64, 1};
      CTensor* x = c.tensor({rows, cols}, dt, dom);
      const bool by_rows = id == CT_OP_TAKE || id == CT_OP_INDEX_ADD;
      CTensor* idx = by_rows ? c.tensor({rows}, i64) : c.tensor({rows, cols}, i64);
      CTensor* src = info.num_inputs > 2 ? c.tensor({rows, cols}, dt, dom) : nullptr;
      CTensor* y = c.tensor({rows, cols}, odt, kOutput);
      const int32_t axis = by_rows ? 0 : 1;
      c.run = [=] { return ct_index(id, x, axis, idx, src, prm->data(), np, y, cs->stream); };
      c.shape = dims(row.np_shape) + " axis " + std::to_string(axis);
      return;
    }
    default: c.fail("no benchmark for kind " + std::string(kind_name(info.kind)));
  }
  row.np_shape = {n};
  if (c.shape.empty()) c.shape = std::to_string(n);
}

// ---------------------------------------------------------------------------
// NN cases: one representative shape each
// ---------------------------------------------------------------------------

// One representative call of an NN op, from its row alone: inputs chosen by
// its shape rule and tensor roles (ResNet-50-like layers, a BERT-base layer
// norm), outputs from ct_op_output_info, the run through ct_nn. Optional
// bias and index arguments are left out (the inference form); optional
// scale/shift and statistics are given. A plugin's op (CT_SHAPE_CUSTOM)
// runs its plugin's large example (ct_op_example, size 1).
void build_nn(Case& c, const CTOpInfo& info, CTDataType dt, bool quick, Row& row) {
  struct Descs {
    CTMatmulDesc mm;
    CTConv2dDesc conv;
    CTPool2dDesc pool;
    CTBatchNormDesc bn;
    CTLayerNormDesc ln;
    CTAttentionDesc attn;
    unsigned char custom[256];  // a plugin op's CT_DESC_CUSTOM descriptor (1..256 bytes)
  };
  auto d = std::make_shared<Descs>();
  std::memset(d.get(), 0, sizeof *d);
  d->mm.struct_size = sizeof d->mm;
  d->conv.struct_size = sizeof d->conv;
  d->pool.struct_size = sizeof d->pool;
  d->bn.struct_size = sizeof d->bn;
  d->ln.struct_size = sizeof d->ln;
  d->attn.struct_size = sizeof d->attn;
  d->bn.epsilon = d->ln.epsilon = 1e-5;
  d->ln.normalized_ndim = 1;
  bool has_index = false;
  for (int i = 0; i < info.num_tensors; ++i) has_index = has_index || info.tensor_roles[i] == CT_ROLE_INDEX;
  const ConvGeom g;
  std::vector<std::vector<int64_t>> in;  // by position; empty: left out (custom ops: as left_out says)
  std::vector<bool> left_out;            // custom ops: the inputs the example leaves out (a 0-d one is not)
  int64_t extent[2] = {0, 0};
  const void* desc = nullptr;
  switch (info.shape_rule) {
    case CT_SHAPE_MATMUL: {
      const int64_t m = matmul_size(quick);
      in = {{m, m}, {m, m}, {}};
      c.flops = 2.0 * m * m * m;
      c.shape = std::to_string(m) + "x" + std::to_string(m) + " @ " + std::to_string(m) + "x" + std::to_string(m);
      desc = &d->mm;
      break;
    }
    case CT_SHAPE_CONV2D:
    case CT_SHAPE_CONV2D_BACKWARD_DATA:
    case CT_SHAPE_CONV2D_BACKWARD_WEIGHT: {
      CTConv2dDesc& cd = d->conv;
      cd.pad_begin[0] = cd.pad_begin[1] = cd.pad_end[0] = cd.pad_end[1] = g.pad;
      const std::vector<int64_t> xs{g.N, g.C, g.H, g.W}, wsh{g.K, g.C, g.R, g.S}, ys{g.N, g.K, g.P(), g.Q()};
      in = info.shape_rule == CT_SHAPE_CONV2D              ? std::vector<std::vector<int64_t>>{xs, wsh, {}}
           : info.shape_rule == CT_SHAPE_CONV2D_BACKWARD_DATA ? std::vector<std::vector<int64_t>>{ys, wsh}
                                                              : std::vector<std::vector<int64_t>>{xs, ys};
      if (info.shape_rule == CT_SHAPE_CONV2D_BACKWARD_DATA) extent[0] = g.H, extent[1] = g.W;
      if (info.shape_rule == CT_SHAPE_CONV2D_BACKWARD_WEIGHT) extent[0] = g.R, extent[1] = g.S;
      c.flops = g.flops();
      c.shape = dims(xs) + " k" + std::to_string(g.K) + " " + std::to_string(g.R) + "x" + std::to_string(g.S) +
                " pad " + std::to_string(g.pad);
      desc = &cd;
      break;
    }
    case CT_SHAPE_POOL2D:
    case CT_SHAPE_POOL2D_BACKWARD: {
      const int64_t N = 8, C = 64, H = 56, W = 56, k = has_index ? 3 : 2, pad = has_index ? 1 : 0;
      const int64_t P = (H + 2 * pad - k) / 2 + 1, Q = (W + 2 * pad - k) / 2 + 1;
      CTPool2dDesc& pd = d->pool;
      pd.kernel[0] = pd.kernel[1] = k;
      pd.stride[0] = pd.stride[1] = 2;
      pd.pad_begin[0] = pd.pad_begin[1] = pd.pad_end[0] = pd.pad_end[1] = pad;
      const std::vector<int64_t> xs{N, C, H, W}, ys{N, C, P, Q};
      if (info.shape_rule == CT_SHAPE_POOL2D) {
        in = {xs};
      } else {
        in.assign(info.num_inputs, ys);
        extent[0] = H, extent[1] = W;
      }
      c.shape = dims(xs) + " k" + std::to_string(k) + " s2" + (pad ? " pad 1" : "");
      desc = &pd;
      break;
    }
    case CT_SHAPE_NORM: {
      const bool ln = info.desc_type == CT_DESC_LAYER_NORM;
      const std::vector<int64_t> xs = ln ? std::vector<int64_t>{4096, 768} : std::vector<int64_t>{8, 64, 56, 56};
      const std::vector<int64_t> stat = ln ? std::vector<int64_t>{4096} : std::vector<int64_t>{64};
      const std::vector<int64_t> par = ln ? std::vector<int64_t>{768} : std::vector<int64_t>{64};
      for (int i = 0; i < info.num_inputs; ++i) {
        const int32_t r = info.tensor_roles[i];
        in.push_back(r == CT_ROLE_DATA ? xs : r == CT_ROLE_STAT ? stat : par);
      }
      c.shape = dims(xs) + (ln ? " last axis" : "");
      desc = ln ? (const void*)&d->ln : (const void*)&d->bn;
      break;
    }
    case CT_SHAPE_ATTENTION: {  // a BERT-base layer's attention: (batch, 12 heads, seq, 64), no mask
      const int64_t B = quick ? 2 : 8, H = 12, L = quick ? 128 : 512, E = 64;
      in = {{B, H, L, E}, {B, H, L, E}, {B, H, L, E}, {}};
      c.flops = 4.0 * B * H * L * L * E;
      c.shape = dims(in[0]) + " self-attention";
      desc = &d->attn;
      break;
    }
    case CT_SHAPE_CUSTOM: {
      // A plugin's op: its large example (ct_op_example, size 1). Its work
      // in FLOPs is not known: the row has bytes and no %limit.
      // A plugin's op: its large example (ct_op_example, size 1). Its work
      // in FLOPs is not known: the row has a rate in bytes and no %limit.
      const size_t dsize = (size_t)std::max<int32_t>(info.desc_size, 0);
      if (dsize > sizeof d->custom)
        return c.fail(std::string(info.name) + ": desc_size=" + std::to_string(dsize) + " exceeds a CT_DESC_CUSTOM's " +
                      std::to_string(sizeof d->custom) + " bytes");
      int32_t nd[CT_NN_MAX_TENSORS];
      int64_t shp[CT_NN_MAX_TENSORS][CT_MAX_NDIM];
      if (CTStatus s = ct_op_example(info.op, 0, 1, dsize ? d->custom : nullptr, dsize, info.num_inputs, nd, shp))
        return c.fail(std::string("no benchmark shape for NN op ") + info.name + ": ct_op_example: " +
                      ct_status_string(s) + ": " + ct_last_error());
      for (int i = 0; i < info.num_inputs; ++i) {
        in.push_back(nd[i] < 0 ? std::vector<int64_t>{} : std::vector<int64_t>(shp[i], shp[i] + nd[i]));
        left_out.push_back(nd[i] < 0);
        if (nd[i] >= 0 && info.tensor_roles[i] == CT_ROLE_INDEX)
          return c.fail(std::string(info.name) + ": input " + std::to_string(i) + " holds indices, which the bench "
                        "cannot make for a plugin's op");
        c.shape += (i ? "," : "") + (nd[i] < 0 ? std::string("-") : dims(in.back()));
      }
      c.work_known = false;
      desc = dsize ? d->custom : nullptr;
      break;
    }
    default: return c.fail(std::string("no benchmark shape for NN op ") + info.name);
  }
  // Inputs (an index input holds the forward's indices, made on an input of its own).
  if (left_out.empty())
    for (const std::vector<int64_t>& s : in) left_out.push_back(s.empty());
  row.nn_inputs = in;
  for (size_t i = 0; i < in.size(); ++i)
    if (left_out[i]) row.nn_inputs[i].clear();
  if (desc == &d->pool)
    row.nn_desc = {{"kernel", d->pool.kernel[0]}, {"stride", d->pool.stride[0]}, {"pad", d->pool.pad_begin[0]}};
  if (desc == &d->conv) row.nn_desc = {{"stride", 1}, {"pad", d->conv.pad_begin[0]}};
  std::vector<const CTensor*> t(info.num_tensors, nullptr);
  for (int i = 0; i < info.num_inputs; ++i) {
    if (left_out[i]) continue;
    const int32_t r = info.tensor_roles[i];
    const CTDataType tdt = r == CT_ROLE_STAT || r == CT_ROLE_PARAM ? kF32
                           : r == CT_ROLE_INDEX                    ? kI64
                           : r == CT_ROLE_COND                     ? kBool
                                                                   : dt;
    t[i] = c.tensor(in[i], tdt, r == CT_ROLE_INDEX ? kOutput : kValues);
  }
  for (int i = 0; i < info.num_inputs; ++i)
    if (t[i] && info.tensor_roles[i] == CT_ROLE_INDEX) {
      std::string fwd = info.name;
      fwd = fwd.substr(0, fwd.rfind("_backward"));
      int32_t fop = -1;
      Case f(c.dev);
      const std::vector<int64_t> xs{in[0][0], in[0][1], extent[0], extent[1]};
      CTensor* fx = f.tensor(xs, dt);
      CTensor* fy = f.tensor(in[0], dt, kOutput);
      const CTensor* ft[3] = {fx, fy, t[i]};
      size_t n = 0;
      CTStatus s = ct_op_find(fwd.c_str(), &fop);
      if (s == CT_OK) s = ct_nn_workspace_size(fop, desc, ft, 3, &n);
      f.workspace(s, n);
      if (s == CT_OK && f.error.empty()) s = ct_nn(fop, desc, ft, 3, f.ws, f.ws_bytes, nullptr);
      if (s != CT_OK) f.fail(std::string(ct_status_string(s)) + ": " + ct_last_error());
      ct_synchronize(c.dev, nullptr);
      if (!f.error.empty()) return c.fail(fwd + " forward for the indices: " + f.error);
    }
  // Outputs, as the library says.
  CTOpArgs a;
  std::memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.desc = desc;
  a.extent[0] = extent[0];
  a.extent[1] = extent[1];
  std::vector<CTOutputInfo> outs(info.num_outputs);
  if (CTStatus s = ct_op_output_info(info.op, &a, t.data(), info.num_inputs, outs.data(), info.num_outputs))
    return c.fail(std::string("ct_op_output_info: ") + ct_status_string(s) + ": " + ct_last_error());
  for (int j = 0; j < info.num_outputs; ++j) {
    const int i = info.num_inputs + j;
    const int32_t r = info.tensor_roles[i];
    if (((info.optional_mask >> i) & 1u) && (r == CT_ROLE_BIAS || r == CT_ROLE_INDEX)) continue;
    t[i] = c.tensor(std::vector<int64_t>(outs[j].shape, outs[j].shape + outs[j].ndim), outs[j].dtype, kOutput);
  }
  size_t n = 0;
  const int32_t op = info.op, nt = info.num_tensors;
  const CTStatus qs = ct_nn_workspace_size(op, desc, t.data(), nt, &n);
  c.workspace(qs, n);
  void* ws = c.ws;
  const size_t wb = c.ws_bytes;
  const Case* cs = &c;
  c.run = [=] { return ct_nn(op, desc, t.data(), nt, ws, wb, cs->stream); };
  c.keep = d;  // the descriptors desc points to live as long as c.run
}

}  // namespace ctool
