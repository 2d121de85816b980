// check_cases.cc — what `ctensor check` feeds the ops and how close it wants
// them: input domains per op and input, tolerances per op and output dtype,
// and the NN ops' cases (descriptors, shapes, layouts). The values an op
// should produce come from the one reference library (tests/reference).
#include "check_cases.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <cmath>
#include <string>
#include <vector>

namespace ctcheck {
namespace {

typedef std::vector<int64_t> Shape;

bool dt_float(CTDataType d) { return ct_dtype_index(d) >= 0 && ((CT_DTS_FLOAT >> ct_dtype_index(d)) & 1u); }
bool dt_bool(CTDataType d) { return d.code == CT_BOOL; }
bool dt_uint(CTDataType d) { return d.code == CT_UINT; }
bool dt_half(CTDataType d) { return dt_float(d) && d.bits == 16; }
int64_t dt_min(CTDataType d) {
  if (d.code != CT_INT) return 0;
  return d.bits >= 64 ? INT64_MIN : -(int64_t(1) << (d.bits - 1));
}
int64_t dt_max(CTDataType d) {
  if (d.code == CT_BOOL) return 1;
  if (d.code == CT_UINT) return d.bits >= 64 ? INT64_MAX : (int64_t(1) << d.bits) - 1;
  return d.bits >= 64 ? INT64_MAX : (int64_t(1) << (d.bits - 1)) - 1;
}

// ---------------------------------------------------------------------------
// Op classes for domains and tolerances
// ---------------------------------------------------------------------------

bool in(const std::string& n, std::initializer_list<const char*> names) {
  for (const char* s : names)
    if (n == s) return true;
  return false;
}

bool is_transcendental(const std::string& n) {
  return in(n, {"exp", "expm1", "exp2", "log", "log1p", "log2", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid",
                "gelu", "gelu_tanh", "silu", "softplus", "erf", "elu", "pow_scalar", "pow", "atan2", "hypot"});
}

bool is_accumulating(const std::string& n) {
  return in(n, {"sum", "mean", "prod", "norm2", "logsumexp", "var", "std", "softmax", "log_softmax", "cumsum",
                "cumprod", "scatter_add", "index_add"});
}

// ---------------------------------------------------------------------------
// NN cases
// ---------------------------------------------------------------------------

const int kData = 0, kF32 = 1, kI64 = 2;
const Shape kNHWC = {0, 2, 3, 1};

template <class D>
std::vector<unsigned char> bytes_of(const D& d) {
  std::vector<unsigned char> b(sizeof d);
  std::memcpy(b.data(), &d, sizeof d);
  return b;
}

struct Builder {
  NNCase c;
  Builder(const std::string& label, std::vector<unsigned char> desc, int num_inputs) {
    c.label = label;
    c.desc = std::move(desc);
    c.num_inputs = num_inputs;
  }
  Builder& t(const Shape& s, int kind = kData, const Shape& perm = {}) {
    c.shapes.push_back(s);
    c.absent.push_back(false);
    c.perm.push_back(perm);
    c.dtype_kind.push_back(kind);
    return *this;
  }
  Builder& none(int kind = kData) {
    c.shapes.push_back({});
    c.absent.push_back(true);
    c.perm.push_back({});
    c.dtype_kind.push_back(kind);
    return *this;
  }
  // Optional tensor: present or not.
  Builder& opt(bool present, const Shape& s, int kind = kData, const Shape& perm = {}) {
    return present ? t(s, kind, perm) : none(kind);
  }
};

CTMatmulDesc mm_desc(int act) {
  CTMatmulDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.activation = act;
  return d;
}

// A conv geometry: x (N,C,H,W), w (K,C/g,R,S); y from the floor formula.
struct ConvC {
  std::string name;
  int64_t N, C, H, W, K, R, S;
  int32_t groups;
  int64_t s[2], pb[2], pe[2], dl[2];
  bool nhwc;  // x, y (and dx, dy) channels-last; w OHWI
  CTConv2dDesc desc(int act) const {
    CTConv2dDesc d;
    std::memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.groups = groups;
    for (int i = 0; i < 2; ++i) {
      d.stride[i] = s[i];
      d.pad_begin[i] = pb[i];
      d.pad_end[i] = pe[i];
      d.dilation[i] = dl[i];
    }
    d.activation = act;
    return d;
  }
  int64_t G() const { return groups > 0 ? groups : 1; }
  int64_t P() const {
    const int64_t dh = dl[0] ? dl[0] : 1, sh = s[0] ? s[0] : 1;
    return (H + pb[0] + pe[0] - dh * (R - 1) - 1) / sh + 1;
  }
  int64_t Q() const {
    const int64_t dw = dl[1] ? dl[1] : 1, sw = s[1] ? s[1] : 1;
    return (W + pb[1] + pe[1] - dw * (S - 1) - 1) / sw + 1;
  }
  Shape x() const { return {N, C, H, W}; }
  Shape w() const { return {K, C / G(), R, S}; }
  Shape y() const { return {N, K, P(), Q()}; }
  Shape act_perm() const { return nhwc ? kNHWC : Shape(); }
};

const char* act_name(int a) {
  static const char* k[6] = {"", " relu", " gelu", " gelu_tanh", " sigmoid", " tanh"};
  return a >= 0 && a < 6 ? k[a] : " ?";
}

std::vector<ConvC> conv_geoms() {
  return {
      // name, N,C,H,W, K,R,S, groups, stride, pad_begin, pad_end, dilation, nhwc
      {"3x3 s1 p1", 2, 3, 6, 6, 4, 3, 3, 0, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
      {"3x3 s2 p(1,0)/(0,2) g2 NHWC", 1, 4, 7, 8, 6, 3, 3, 2, {2, 2}, {1, 0}, {0, 2}, {1, 1}, true},
      {"depthwise 3x3 d2 p2 NHWC", 2, 5, 7, 6, 5, 3, 3, 5, {1, 1}, {2, 2}, {2, 2}, {2, 2}, true},
      {"1x1 s2 p(1,0)/(0,1)", 1, 6, 5, 6, 8, 1, 1, 1, {2, 2}, {1, 0}, {0, 1}, {1, 1}, false},
      {"3x2 s(1,2) d(2,1) g3 K=2C", 1, 3, 7, 8, 6, 3, 2, 3, {1, 2}, {2, 0}, {1, 1}, {2, 1}, false},
      {"5x5 s2 p2 NHWC", 1, 3, 9, 9, 4, 5, 5, 1, {2, 2}, {2, 2}, {2, 2}, {1, 1}, true},
  };
}

struct PoolC {
  std::string name;
  int64_t N, C, H, W;
  int64_t k[2], s[2], pb[2], pe[2], dl[2];
  bool nhwc;
  CTPool2dDesc desc(int cip) const {
    CTPool2dDesc d;
    std::memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.count_include_pad = cip;
    for (int i = 0; i < 2; ++i) {
      d.kernel[i] = k[i];
      d.stride[i] = s[i];
      d.pad_begin[i] = pb[i];
      d.pad_end[i] = pe[i];
      d.dilation[i] = dl[i];
    }
    return d;
  }
  int64_t out(int i, int64_t X) const {
    const int64_t st = s[i] ? s[i] : k[i], de = dl[i] ? dl[i] : 1;
    return (X + pb[i] + pe[i] - de * (k[i] - 1) - 1) / st + 1;
  }
  Shape x() const { return {N, C, H, W}; }
  Shape y() const { return {N, C, out(0, H), out(1, W)}; }
  Shape perm() const { return nhwc ? kNHWC : Shape(); }
};

std::vector<PoolC> pool_geoms() {
  return {
      // name, N,C,H,W, kernel, stride, pad_begin, pad_end, dilation, nhwc
      {"2x2 s=k", 2, 3, 6, 6, {2, 2}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, false},
      {"3x3 s2 p1 NHWC", 1, 4, 7, 7, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true},
      {"3x3 s2 ceil-like p0/(1,1)", 2, 2, 6, 8, {3, 3}, {2, 2}, {0, 0}, {1, 1}, {1, 1}, false},
      {"3x2 s(1,2) p(0,1)/(2,0)", 1, 3, 6, 5, {3, 2}, {1, 2}, {0, 1}, {2, 0}, {1, 1}, true},
      {"3x3 d2 p(2,1)/(1,2)", 1, 2, 8, 7, {3, 3}, {1, 1}, {2, 1}, {1, 2}, {2, 2}, false},
  };
}

void conv_cases(const std::string& op, std::vector<NNCase>& v) {
  const std::vector<ConvC> gs = conv_geoms();
  if (op == "conv2d") {
    const int acts[] = {CT_ACTIVATION_RELU, CT_ACTIVATION_GELU, CT_ACTIVATION_SIGMOID, CT_ACTIVATION_TANH,
                        CT_ACTIVATION_GELU_TANH, CT_ACTIVATION_NONE};
    for (size_t i = 0; i < gs.size(); ++i) {
      const ConvC& g = gs[i];
      const int act = acts[i];
      const bool bias = i != 2;
      const int bias_kind = i == 3 ? kF32 : kData;
      const Shape wperm = g.nhwc ? kNHWC : (i == 4 ? Shape{2, 3, 1, 0} : Shape());  // OHWI / HWIO
      std::string label = "conv2d " + g.name + (bias ? (bias_kind == kF32 ? " bias(f32)" : " bias") : "") +
                          act_name(act) + (wperm.size() && !g.nhwc ? " w HWIO" : "");
      v.push_back(Builder(label, bytes_of(g.desc(act)), 3)
                      .t(g.x(), kData, g.act_perm())
                      .t(g.w(), kData, wperm)
                      .opt(bias, {g.K}, bias_kind)
                      .t(g.y(), kData, g.act_perm())
                      .c);
    }
  } else if (op == "conv2d_backward_data") {
    for (size_t i = 0; i < gs.size(); ++i) {
      const ConvC& g = gs[i];
      const Shape wperm = g.nhwc ? kNHWC : Shape();
      v.push_back(Builder("conv2d_backward_data " + g.name, bytes_of(g.desc(0)), 2)
                      .t(g.y(), kData, g.act_perm())
                      .t(g.w(), kData, wperm)
                      .t(g.x(), kData, g.act_perm())
                      .c);
    }
  } else {  // conv2d_backward_weight
    for (size_t i = 0; i < gs.size(); ++i) {
      const ConvC& g = gs[i];
      const Shape wperm = g.nhwc ? kNHWC : Shape();
      const bool dbias = i % 3 != 1;
      const int dbias_kind = i % 3 == 2 ? kData : kF32;
      v.push_back(Builder("conv2d_backward_weight " + g.name +
                              (dbias ? (dbias_kind == kF32 ? " dbias(f32)" : " dbias") : " no dbias"),
                          bytes_of(g.desc(0)), 2)
                      .t(g.x(), kData, g.act_perm())
                      .t(g.y(), kData, g.act_perm())
                      .t(g.w(), kData, wperm)
                      .opt(dbias, {g.K}, dbias_kind)
                      .c);
    }
  }
}

void pool_cases(const std::string& op, std::vector<NNCase>& v) {
  const std::vector<PoolC> gs = pool_geoms();
  for (size_t i = 0; i < gs.size(); ++i) {
    const PoolC& g = gs[i];
    const Shape pm = g.perm();
    if (op == "max_pool2d") {
      const bool idx = i != 2;
      v.push_back(Builder("max_pool2d " + g.name + (idx ? " +indices" : ""), bytes_of(g.desc(0)), 1)
                      .t(g.x(), kData, pm)
                      .t(g.y(), kData, pm)
                      .opt(idx, g.y(), kI64, pm)
                      .c);
    } else if (op == "max_pool2d_backward") {
      v.push_back(Builder("max_pool2d_backward " + g.name, bytes_of(g.desc(0)), 2)
                      .t(g.y(), kData, pm)
                      .t(g.y(), kI64, pm)
                      .t(g.x(), kData, pm)
                      .c);
    } else if (op == "avg_pool2d") {
      const int cip = (int)(i % 2);
      v.push_back(Builder("avg_pool2d " + g.name + (cip ? " count_include_pad" : " exclude_pad"),
                          bytes_of(g.desc(cip)), 1)
                      .t(g.x(), kData, pm)
                      .t(g.y(), kData, pm)
                      .c);
    } else {  // avg_pool2d_backward
      const int cip = (int)((i + 1) % 2);
      v.push_back(Builder("avg_pool2d_backward " + g.name + (cip ? " count_include_pad" : " exclude_pad"),
                          bytes_of(g.desc(cip)), 1)
                      .t(g.y(), kData, pm)
                      .t(g.x(), kData, pm)
                      .c);
    }
  }
}

CTBatchNormDesc bn_desc(double eps) {
  CTBatchNormDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.epsilon = eps;
  return d;
}

CTLayerNormDesc ln_desc(int32_t k, double eps) {
  CTLayerNormDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.normalized_ndim = k;
  d.epsilon = eps;
  return d;
}

struct BnC {
  std::string name;
  Shape x;
  Shape perm;
  double eps;
  bool scale, shift;     // forward affine / backward scale
  bool dscale, dshift;   // backward outputs
};

std::vector<BnC> bn_geoms() {
  return {
      {"4-d (2,3,4,4) NCHW", {2, 3, 4, 4}, {}, 1e-5, true, true, true, true},
      {"4-d (2,4,3,3) NHWC", {2, 4, 3, 3}, kNHWC, 1e-5, false, true, false, true},
      {"2-d (6,5)", {6, 5}, {}, 1e-3, true, false, true, false},
      {"5-d (2,3,2,2,3)", {2, 3, 2, 2, 3}, {}, 1e-5, false, false, false, false},
      {"3-d (3,2,5) (C,L) transposed", {3, 2, 5}, {0, 2, 1}, 0.1, true, true, false, true},
  };
}

std::string affine_label(bool sc, bool sh) {
  return sc && sh ? " scale+shift" : sc ? " scale only" : sh ? " shift only" : " no affine";
}

void bn_cases(const std::string& op, std::vector<NNCase>& v) {
  for (const BnC& g : bn_geoms()) {
    const Shape C = {g.x[1]};
    const std::vector<unsigned char> desc = bytes_of(bn_desc(g.eps));
    if (op == "batch_norm") {
      v.push_back(Builder("batch_norm " + g.name + affine_label(g.scale, g.shift), desc, 5)
                      .t(g.x, kData, g.perm)
                      .t(C, kF32)
                      .t(C, kF32)
                      .opt(g.scale, C, kF32)
                      .opt(g.shift, C, kF32)
                      .t(g.x, kData, g.perm)
                      .c);
    } else if (op == "batch_norm_training") {
      v.push_back(Builder("batch_norm_training " + g.name + affine_label(g.scale, g.shift), desc, 3)
                      .t(g.x, kData, g.perm)
                      .opt(g.scale, C, kF32)
                      .opt(g.shift, C, kF32)
                      .t(g.x, kData, g.perm)
                      .t(C, kF32)
                      .t(C, kF32)
                      .c);
    } else {  // batch_norm_backward
      std::string outs = g.dscale && g.dshift ? " +dscale+dshift"
                         : g.dscale           ? " +dscale"
                         : g.dshift           ? " +dshift"
                                              : " dx only";
      v.push_back(Builder("batch_norm_backward " + g.name + (g.scale ? " scale" : " no scale") + outs, desc, 5)
                      .t(g.x, kData, g.perm)
                      .t(g.x, kData, g.perm)
                      .t(C, kF32)
                      .t(C, kF32)
                      .opt(g.scale, C, kF32)
                      .t(g.x, kData, g.perm)
                      .opt(g.dscale, C, kF32)
                      .opt(g.dshift, C, kF32)
                      .c);
    }
  }
}

struct LnC {
  std::string name;
  Shape x;
  int32_t k;     // descriptor value (0 means 1)
  Shape stats;   // shape of mean/rstd (x.shape[:-k], or with trailing ones)
  Shape perm;
  double eps;
  bool scale, shift;  // forward affine / backward scale
  bool stats_out;     // forward: mean (and rstd) requested; backward: dscale/dshift requested
  bool rstd_out;
};

std::vector<LnC> ln_geoms() {
  return {
      {"(4,6) k=1", {4, 6}, 1, {4}, {}, 1e-5, true, true, true, true},
      {"(2,3,4) k=2", {2, 3, 4}, 2, {2}, {}, 1e-5, true, false, false, false},
      {"(3,5) k=0(=1) stats (3,1)", {3, 5}, 0, {3, 1}, {}, 1e-3, false, true, true, false},
      {"(2,2,3) k=3 stats (1,1,1)", {2, 2, 3}, 3, {1, 1, 1}, {}, 1e-5, false, false, true, true},
      {"(5,4)^T k=1", {5, 4}, 1, {5}, {1, 0}, 1e-2, true, true, false, true},
      {"(2,3,2,4) k=2 NHWC-like", {2, 3, 2, 4}, 2, {2, 3}, {0, 2, 3, 1}, 1e-5, true, true, true, true},
  };
}

void ln_cases(const std::string& op, std::vector<NNCase>& v) {
  for (const LnC& g : ln_geoms()) {
    const int k = g.k > 0 ? g.k : 1;
    const Shape tail(g.x.end() - k, g.x.end());
    const std::vector<unsigned char> desc = bytes_of(ln_desc(g.k, g.eps));
    if (op == "layer_norm") {
      std::string st = !g.stats_out ? " no stats" : g.rstd_out ? " +mean+rstd" : " +mean";
      v.push_back(Builder("layer_norm " + g.name + affine_label(g.scale, g.shift) + st, desc, 3)
                      .t(g.x, kData, g.perm)
                      .opt(g.scale, tail, kF32)
                      .opt(g.shift, tail, kF32)
                      .t(g.x, kData, g.perm)
                      .opt(g.stats_out, g.stats, kF32)
                      .opt(g.stats_out && g.rstd_out, g.stats, kF32)
                      .c);
    } else {  // layer_norm_backward
      const bool dsc = g.stats_out, dsh = g.rstd_out;
      std::string outs = dsc && dsh ? " +dscale+dshift" : dsc ? " +dscale" : dsh ? " +dshift" : " dx only";
      v.push_back(Builder("layer_norm_backward " + g.name + (g.scale ? " scale" : " no scale") + outs, desc, 5)
                      .t(g.x, kData, g.perm)
                      .t(g.x, kData, g.perm)
                      .t(g.stats, kF32)
                      .t(g.stats, kF32)
                      .opt(g.scale, tail, kF32)
                      .t(g.x, kData, g.perm)
                      .opt(dsc, tail, kF32)
                      .opt(dsh, tail, kF32)
                      .c);
    }
  }
}

void matmul_cases(std::vector<NNCase>& v) {
  // a, b, bias?, out
  v.push_back(Builder("matmul (5,7)@(7,6) bias (6,) relu", bytes_of(mm_desc(CT_ACTIVATION_RELU)), 3)
                  .t({5, 7})
                  .t({7, 6})
                  .t({6})
                  .t({5, 6})
                  .c);
  v.push_back(Builder("matmul (3,4,8)@(3,8,5) b transposed, bias (4,5) gelu", bytes_of(mm_desc(CT_ACTIVATION_GELU)),
                      3)
                  .t({3, 4, 8})
                  .t({3, 8, 5}, kData, {0, 2, 1})
                  .t({4, 5})
                  .t({3, 4, 5})
                  .c);
  v.push_back(Builder("matmul (2,1,4,6)@(3,6,5) broadcast batch, a transposed, sigmoid",
                      bytes_of(mm_desc(CT_ACTIVATION_SIGMOID)), 3)
                  .t({2, 1, 4, 6}, kData, {0, 1, 3, 2})
                  .t({3, 6, 5})
                  .none()
                  .t({2, 3, 4, 5})
                  .c);
  v.push_back(Builder("matmul (4,6)@(2,6,3) rank promotion, bias (2,1,3) f32, tanh",
                      bytes_of(mm_desc(CT_ACTIVATION_TANH)), 3)
                  .t({4, 6})
                  .t({2, 6, 3})
                  .t({2, 1, 3}, kF32)
                  .t({2, 4, 3})
                  .c);
  v.push_back(Builder("matmul (6,9)^T@(9,4)^T -> column-major out, gelu_tanh",
                      bytes_of(mm_desc(CT_ACTIVATION_GELU_TANH)), 3)
                  .t({6, 9}, kData, {1, 0})
                  .t({9, 4}, kData, {1, 0})
                  .t({6, 4})
                  .t({6, 4}, kData, {1, 0})
                  .c);
  v.push_back(Builder("matmul K=0 (3,0)@(0,4) bias (4,) relu: act(bias)", bytes_of(mm_desc(CT_ACTIVATION_RELU)), 3)
                  .t({3, 0})
                  .t({0, 4})
                  .t({4})
                  .t({3, 4})
                  .c);
}

}  // namespace

// ---------------------------------------------------------------------------
// domain
// ---------------------------------------------------------------------------
//
// `nonzero` for float inputs means "away from 0": the generator should redraw
// values with |x| < 0.5 (the ranges below are all [-4, 4] when it is set);
// for integers it means "not 0".

Domain domain(const std::string& n, int input, CTDataType dt) {
  Domain d;  // [-4, 4], ints [-20, 20]
  const bool fl = dt_float(dt);
  if (in(n, {"log", "log2", "sqrt", "rsqrt"})) {
    d.lo = 0.1;
    d.hi = 10;
  } else if (n == "log1p") {
    d.lo = -0.5;
    d.hi = 4;
  } else if (n == "tan") {
    d.lo = -1.2;
    d.hi = 1.2;
  } else if (n == "reciprocal") {
    d.nonzero = fl;     // ints: 1/0 = 0 is defined and exact
    d.ilo = -3;         // small, so that 1 and -1 (results +-1) are common
    d.ihi = 3;
  } else if (n == "pow_scalar") {
    d.lo = 0.5;
    d.hi = 4;
  } else if (n == "pow") {
    if (input == 0) {
      d.lo = 0.5;
      d.hi = 4;
      d.ilo = -4;
      d.ihi = 4;
    } else {
      d.lo = -3;
      d.hi = 3;
      d.ilo = -1;  // -1: the 1 / a^-b rule (exact); up to 5 fits 4^5 in int16+
      d.ihi = 5;
    }
  } else if (n == "div") {
    if (input == 1) d.nonzero = true;
  } else if (n == "floor_div" || n == "mod") {
    if (input == 0) {
      d.ilo = -200;  // clipped to int8/uint8: reaches INT8_MIN (MIN // -1)
      d.ihi = 200;
    } else {
      d.nonzero = fl;  // integer x // 0 and x % 0 are 0: exact, keep them
    }
  } else if (n == "left_shift" || n == "right_shift") {
    if (input == 1) {
      d.ilo = -2;  // a few counts out of [0, bits) on purpose: exact 0 / sign fill
      d.ihi = dt.bits + 2;
    } else {
      d.ilo = -200;
      d.ihi = 200;
    }
  } else if (n == "addcdiv") {
    if (input == 2) d.nonzero = true;  // divisors away from 0
  } else if (n == "clamp_tensor") {
    d.ilo = -3;  // bounds crossing each other (lo > hi gives hi) and ties
    d.ihi = 3;
    d.lo = -3;
    d.hi = 3;
  } else if (in(n, {"neg", "abs", "square", "add", "sub", "mul", "fma", "addcmul", "add_scalar", "mul_scalar",
                    "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor"})) {
    d.ilo = -200;  // wraps int8/uint8 (and int16 for products): exact
    d.ihi = 200;
  } else if (n == "cast") {
    d.lo = -300;  // float -> int8/uint8 saturates; -> int truncates
    d.hi = 300;
    d.ilo = -300;  // int16+ -> int8/uint8 wraps
    d.ihi = 300;
  } else if (in(n, {"logical_not", "logical_and", "logical_or", "logical_xor", "any", "all"})) {
    d.ilo = -2;  // plenty of zeros
    d.ihi = 2;
  } else if (in(n, {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "maximum",
                    "minimum", "fmax", "fmin"})) {
    d.ilo = -3;  // plenty of ties
    d.ihi = 3;
  } else if (n == "prod" || n == "cumprod") {
    d.lo = -1.5;  // products of many elements neither overflow nor vanish fast
    d.hi = 1.5;
    d.nonzero = true;
    d.ilo = -3;
    d.ihi = 3;
  } else if (n == "lerp") {
    if (input == 2) {
      d.lo = -0.25;  // weights mostly in [0, 1], both branches of the formula
      d.hi = 1.25;
    }
  } else if (n == "argmax" || n == "argmin" || n == "max" || n == "min") {
    d.ilo = -5;  // ties: the first occurrence must win
    d.ihi = 5;
  }
  if (dt_bool(dt)) {
    d.ilo = 0;
    d.ihi = 1;
  }
  if (dt_uint(dt) && d.ilo < 0) d.ilo = 0;
  if (!dt_float(dt)) {
    d.ilo = std::max(d.ilo, dt_min(dt));
    d.ihi = std::min(d.ihi, dt_max(dt));
  }
  return d;
}

CTAttentionDesc attn_desc(int32_t causal, double scale) {
  CTAttentionDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.causal = causal;
  d.scale = scale;
  return d;
}

// Attention: batch dims that broadcast, masks of each dtype kind and rank,
// both causal rules, a transposed q, a last query block of 2 rows (130 =
// 128 + 2) and a row with every key masked (bool masks of random bits).
void attention_cases(std::vector<NNCase>& v) {
  auto add = [&](const std::string& label, const CTAttentionDesc& d, const Shape& q, const Shape& k, const Shape& val,
                 const Shape& mask, int mask_kind, const Shape& out, const Shape& qperm = {}) {
    v.push_back(Builder("scaled_dot_product_attention " + label, bytes_of(d), 4)
                    .t(q, kData, qperm)
                    .t(k)
                    .t(val)
                    .opt(!mask.empty() || mask_kind >= 0, mask, mask_kind < 0 ? kData : mask_kind)
                    .t(out)
                    .c);
  };
  add("(2,3,5,8) S=7 Ev=6", attn_desc(0, 0), {2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 6}, {}, -1, {2, 3, 5, 6});
  add("causal (1,2,9,16)", attn_desc(CT_CAUSAL_TOP_LEFT, 0), {1, 2, 9, 16}, {1, 2, 9, 16}, {1, 2, 9, 16}, {}, -1,
      {1, 2, 9, 16});
  add("bool mask (5,7), batch (2,1) x (1,3)", attn_desc(0, 0), {2, 1, 5, 4}, {1, 3, 7, 4}, {1, 3, 7, 4}, {5, 7}, 3,
      {2, 3, 5, 4});
  add("float32 mask (2,1,5,7) bottom-right causal", attn_desc(CT_CAUSAL_BOTTOM_RIGHT, 0), {2, 3, 5, 8},
      {2, 3, 7, 8}, {2, 3, 7, 8}, {2, 1, 5, 7}, 1, {2, 3, 5, 8});
  add("q^T, data-dtype mask (7,), scale 0.3", attn_desc(0, 0.3), {3, 6, 5}, {3, 7, 5}, {3, 7, 2}, {7}, 0,
      {3, 6, 2}, {0, 2, 1});
  add("(1,2,130,16) S=140 top-left causal", attn_desc(CT_CAUSAL_TOP_LEFT, 0), {1, 2, 130, 16}, {1, 2, 140, 16},
      {1, 2, 140, 16}, {}, -1, {1, 2, 130, 16});
}

// ---------------------------------------------------------------------------
// tolerance
// ---------------------------------------------------------------------------
//
// Classes: exactly rounded / few-rounding ops ("simple"), libm-grade
// transcendentals, and accumulating ops (reductions, along-axis). Float64 and
// float32 tolerances are tight enough that adding 1.0 to any element of
// magnitude <= 100 fails: atol + rtol * 101 < 1.

// NN ops (CT_KIND_NN; oneDNN accumulates in float32; bfloat16 pooling backwards
// accumulate overlapping windows in bfloat16), measured over 200 seeds of
// the nn_cases data: float32 needs ~4e-6 absolute, bfloat16 one output
// rounding (2^-8) plus 1.06e-2 absolute on max_pool2d_backward.
Tolerance tolerance(const std::string& n, int kind, CTDataType dt) {
  Tolerance t;
  if (!dt_float(dt)) return t;  // integers and bool: exact
  if (kind == CT_KIND_NN) {
    if (dt.bits == 64) t.rtol = 1e-10, t.atol = 1e-10;
    else if (dt.bits == 32) t.rtol = 1e-4, t.atol = 5e-5;
    else t.rtol = 1e-2, t.atol = 2e-2;
    return t;
  }
  const bool tr = is_transcendental(n), acc = is_accumulating(n);
  const bool running = n == "cumsum" || n == "cumprod";
  if (dt.bits == 64) {
    t.rtol = (tr || acc) ? 1e-10 : 1e-12;
    t.atol = acc ? 1e-10 : 1e-12;
  } else if (dt.bits == 32) {
    if (acc) {
      t.rtol = 1e-5;
      t.atol = 1e-5;
    } else if (tr) {
      t.rtol = 5e-6;
      t.atol = 1e-6;
    } else {
      t.rtol = 1e-6;
      t.atol = 1e-6;
    }
  } else if (dt.bits == 8) {  // float8: one code of the format (2^-3 or 2^-2 relative), the smallest subnormal
    const bool e4m3 = dt.code == CT_FLOAT8_E4M3FN || dt.code == CT_FLOAT8_E4M3FNUZ;
    t.rtol = e4m3 ? 0.126 : 0.251;
    t.atol = std::ldexp(1.0, e4m3 ? -9 : -16);
  } else if (dt_half(dt) && dt.code == CT_FLOAT) {  // float16
    t.rtol = 2e-3;
    t.atol = running ? 1e-2 : acc ? 1e-4 : 1e-5;
  } else {  // bfloat16
    t.rtol = 1.6e-2;
    t.atol = running ? 5e-2 : 1e-3;
  }
  return t;
}

std::vector<NNCase> nn_cases(const std::string& op, bool quick) {
  std::vector<NNCase> v;
  if (op == "matmul") matmul_cases(v);
  else if (op == "conv2d" || op == "conv2d_backward_data" || op == "conv2d_backward_weight") conv_cases(op, v);
  else if (op == "max_pool2d" || op == "max_pool2d_backward" || op == "avg_pool2d" || op == "avg_pool2d_backward")
    pool_cases(op, v);
  else if (op == "batch_norm" || op == "batch_norm_training" || op == "batch_norm_backward") bn_cases(op, v);
  else if (op == "layer_norm" || op == "layer_norm_backward") ln_cases(op, v);
  else if (op == "scaled_dot_product_attention") attention_cases(v);
  if (quick && v.size() > 2) v.resize(2);
  return v;
}

Domain nn_domain(const std::string& op, int tensor) {
  Domain d;
  d.lo = -2;
  d.hi = 2;
  // Per-channel / per-row statistics that must be positive or bounded.
  if (op == "batch_norm") {
    if (tensor == 1) d.lo = -1, d.hi = 1;       // mean
    if (tensor == 2) d.lo = 0.25, d.hi = 2;     // var > 0
    if (tensor == 3) d.lo = -1.5, d.hi = 1.5;   // scale
    if (tensor == 4) d.lo = -1, d.hi = 1;       // shift
  } else if (op == "batch_norm_training" || op == "layer_norm") {
    if (tensor == 1) d.lo = -1.5, d.hi = 1.5;   // scale
    if (tensor == 2) d.lo = -1, d.hi = 1;       // shift
  } else if (op == "batch_norm_backward" || op == "layer_norm_backward") {
    if (tensor == 2) d.lo = -1, d.hi = 1;       // mean
    if (tensor == 3) d.lo = 0.5, d.hi = 2;      // invstd / rstd > 0 (and < 1/sqrt(eps))
    if (tensor == 4) d.lo = -1.5, d.hi = 1.5;   // scale
  }
  return d;
}

}  // namespace ctcheck
