// Double-precision references for the category 3 (NN) ops of ctensor, and the
// small cases `ctensor check` runs them on. Loops and libm only: nothing here
// calls ctensor. The contract is include/ctensor/ctensor.h ("Category 3") and
// notes/SEMANTICS.md ("NN ops with a workspace query").
//
// Conventions of run_nn (see reference.h): every Array is a dense row-major
// logical array (x (N, C, H, W), w (K, C/groups, R, S), whatever the memory
// order the tool used); c.inputs are the entry point's input tensors in order
// (nullptr for an absent optional one) and `outputs` its output tensors in
// order (nullptr for one not requested), with dtype and shape set.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "reference_internal.h"

namespace ctref {
namespace {

typedef std::vector<int64_t> Shape;

int64_t prod(const Shape& s, size_t from = 0, size_t to = (size_t)-1) {
  if (to > s.size()) to = s.size();
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= s[i];
  return n;
}

std::string str(const Shape& s) {
  std::ostringstream o;
  o << '[';
  for (size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << ']';
  return o.str();
}

// A descriptor read as the caller's struct_size says (missing tail = zeros).
template <class D>
D read_desc(const void* p) {
  D d;
  std::memset(&d, 0, sizeof d);
  if (!p) return d;
  uint32_t sz = 0;
  std::memcpy(&sz, p, sizeof sz);
  std::memcpy(&d, p, std::min<size_t>(sz, sizeof d));
  return d;
}

double activate(int act, double v) {
  switch (act) {
    case CT_ACTIVATION_RELU: return v < 0 ? 0.0 : v;  // NaN stays NaN
    case CT_ACTIVATION_GELU: return 0.5 * v * (1.0 + std::erf(v * 0.70710678118654752440));
    case CT_ACTIVATION_GELU_TANH:
      return 0.5 * v * (1.0 + std::tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
    case CT_ACTIVATION_SIGMOID: return 1.0 / (1.0 + std::exp(-v));
    case CT_ACTIVATION_TANH: return std::tanh(v);
    default: return v;
  }
}

bool fail(std::string* why, const std::string& msg) {
  if (why) *why = msg;
  return false;
}

const Array* in(const Call& c, size_t i) { return i < c.inputs.size() ? c.inputs[i] : nullptr; }
Array* out(const std::vector<Array*>& o, size_t i) { return i < o.size() ? o[i] : nullptr; }

// Requires the array (present) to have `nd` dims (nd < 0: any).
bool need(const Array* a, const char* what, int nd, std::string* why) {
  if (!a) return fail(why, std::string(what) + " is required");
  if (nd >= 0 && (int)a->shape.size() != nd)
    return fail(why, std::string(what) + " must be " + std::to_string(nd) + "-d, got " + str(a->shape));
  return true;
}

bool same_numel(const Array* a, int64_t n, const char* what, std::string* why) {
  if (a && a->numel() != n)
    return fail(why, std::string(what) + " has " + std::to_string(a->numel()) + " elements, expected " +
                         std::to_string(n));
  return true;
}

// Offset into `a` (row-major, right-aligned to `oshape`, extents of 1
// broadcast) of the output multi-index `idx`.
int64_t bcast_offset(const Shape& ashape, const Shape& oshape, const std::vector<int64_t>& idx) {
  const size_t off = oshape.size() - ashape.size();
  int64_t o = 0;
  for (size_t d = 0; d < ashape.size(); ++d) o = o * ashape[d] + (ashape[d] == 1 ? 0 : idx[off + d]);
  return o;
}

bool broadcasts_to(const Shape& a, const Shape& o) {
  if (a.size() > o.size()) return false;
  const size_t off = o.size() - a.size();
  for (size_t d = 0; d < a.size(); ++d)
    if (a[d] != 1 && a[d] != o[off + d]) return false;
  return true;
}

void unravel(int64_t lin, const Shape& s, std::vector<int64_t>& idx) {
  idx.assign(s.size(), 0);
  for (size_t d = s.size(); d-- > 0;) {
    if (s[d] == 0) continue;
    idx[d] = lin % s[d];
    lin /= s[d];
  }
}

void prepare(Array* a) {
  if (a) a->reset(a->dtype, a->shape);
}

// ---------------------------------------------------------------------------
// matmul
// ---------------------------------------------------------------------------

bool ref_matmul(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTMatmulDesc d = read_desc<CTMatmulDesc>(c.desc);
  const Array *a = in(c, 0), *b = in(c, 1), *bias = in(c, 2);
  Array* o = out(outs, 0);
  if (!need(a, "a", -1, why) || !need(b, "b", -1, why) || !need(o, "out", -1, why)) return false;
  const Shape &as = a->shape, &bs = b->shape, &os = o->shape;
  if (as.size() < 2 || bs.size() < 2 || os.size() < 2) return fail(why, "matmul operands must be at least 2-d");
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K) return fail(why, "matmul: K of a " + str(as) + " and b " + str(bs) + " differ");
  if (os[os.size() - 2] != M || os.back() != N) return fail(why, "matmul: out " + str(os) + " is not (..., M, N)");
  const Shape ob(os.begin(), os.end() - 2), ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  if (!broadcasts_to(ab, ob) || !broadcasts_to(bb, ob))
    return fail(why, "matmul: batch dims of a " + str(as) + " / b " + str(bs) + " do not broadcast to out " +
                         str(os));
  if (bias && !broadcasts_to(bias->shape, os))
    return fail(why, "matmul: bias " + str(bias->shape) + " does not broadcast to out " + str(os));
  prepare(o);
  const int64_t batches = prod(ob);
  std::vector<int64_t> bidx, oidx;
  for (int64_t t = 0; t < batches; ++t) {
    unravel(t, ob, bidx);
    const int64_t ao = bcast_offset(ab, ob, bidx) * M * K, bo = bcast_offset(bb, ob, bidx) * K * N;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += a->get(ao + m * K + k) * b->get(bo + k * N + n);
        const int64_t lin = (t * M + m) * N + n;
        if (bias) {
          unravel(lin, os, oidx);
          s += bias->get(bcast_offset(bias->shape, os, oidx));
        }
        o->f[(size_t)lin] = activate(d.activation, s);
      }
  }
  return true;
}

// ---------------------------------------------------------------------------
// conv2d and its backward ops
// ---------------------------------------------------------------------------

struct ConvGeo {
  int64_t N = 0, C = 0, H = 0, W = 0, K = 0, Cg = 0, R = 0, S = 0, P = 0, Q = 0, G = 1, Kg = 0;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int act = 0;
  // Input row/column of output (p, q), tap (r, s).
  int64_t ih(int64_t p, int64_t r) const { return p * sh - ph + r * dh; }
  int64_t iw(int64_t q, int64_t s) const { return q * sw - pw + s * dw; }
};

// x (N,C,H,W), w (K,C/g,R,S), y (N,K,P,Q): every extent from the arrays, the
// output extents checked against the floor formula.
bool conv_geo(const CTConv2dDesc& d, const Shape& x, const Shape& w, const Shape& y, ConvGeo& g,
              std::string* why) {
  if (x.size() != 4 || w.size() != 4 || y.size() != 4)
    return fail(why, "conv2d: x " + str(x) + ", w " + str(w) + ", y " + str(y) + " must be 4-d");
  g.N = x[0];
  g.C = x[1];
  g.H = x[2];
  g.W = x[3];
  g.K = w[0];
  g.Cg = w[1];
  g.R = w[2];
  g.S = w[3];
  g.G = d.groups > 0 ? d.groups : 1;
  g.sh = d.stride[0] > 0 ? d.stride[0] : 1;
  g.sw = d.stride[1] > 0 ? d.stride[1] : 1;
  g.dh = d.dilation[0] > 0 ? d.dilation[0] : 1;
  g.dw = d.dilation[1] > 0 ? d.dilation[1] : 1;
  g.ph = d.pad_begin[0];
  g.pw = d.pad_begin[1];
  g.act = d.activation;
  if (g.C % g.G || g.K % g.G || g.Cg * g.G != g.C)
    return fail(why, "conv2d: groups " + std::to_string(g.G) + " do not fit x " + str(x) + " and w " + str(w));
  g.Kg = g.K / g.G;
  const int64_t hh = g.H + d.pad_begin[0] + d.pad_end[0] - g.dh * (g.R - 1) - 1;
  const int64_t ww = g.W + d.pad_begin[1] + d.pad_end[1] - g.dw * (g.S - 1) - 1;
  if (hh < 0 || ww < 0) return fail(why, "conv2d: the input is smaller than the dilated kernel");
  g.P = hh / g.sh + 1;
  g.Q = ww / g.sw + 1;
  if (y[0] != g.N || y[1] != g.K || y[2] != g.P || y[3] != g.Q)
    return fail(why, "conv2d: y/dy " + str(y) + " is not the output shape " + str({g.N, g.K, g.P, g.Q}));
  return true;
}

// Calls f(x offset, w offset, y offset) for every multiply-add of the conv.
template <class F>
void conv_taps(const ConvGeo& g, F f) {
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t k = 0; k < g.K; ++k) {
      const int64_t grp = k / g.Kg;
      for (int64_t p = 0; p < g.P; ++p)
        for (int64_t q = 0; q < g.Q; ++q) {
          const int64_t yo = ((n * g.K + k) * g.P + p) * g.Q + q;
          for (int64_t c = 0; c < g.Cg; ++c) {
            const int64_t xc = grp * g.Cg + c;
            for (int64_t r = 0; r < g.R; ++r) {
              const int64_t h = g.ih(p, r);
              if (h < 0 || h >= g.H) continue;
              for (int64_t s = 0; s < g.S; ++s) {
                const int64_t wi = g.iw(q, s);
                if (wi < 0 || wi >= g.W) continue;
                f(((n * g.C + xc) * g.H + h) * g.W + wi, ((k * g.Cg + c) * g.R + r) * g.S + s, yo);
              }
            }
          }
        }
    }
}

bool ref_conv2d(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTConv2dDesc d = read_desc<CTConv2dDesc>(c.desc);
  const Array *x = in(c, 0), *w = in(c, 1), *bias = in(c, 2);
  Array* y = out(outs, 0);
  if (!need(x, "x", 4, why) || !need(w, "w", 4, why) || !need(y, "y", 4, why)) return false;
  ConvGeo g;
  if (!conv_geo(d, x->shape, w->shape, y->shape, g, why)) return false;
  if (!same_numel(bias, g.K, "bias", why)) return false;
  prepare(y);
  std::vector<double> acc((size_t)y->numel(), 0.0);
  conv_taps(g, [&](int64_t xo, int64_t wo, int64_t yo) { acc[(size_t)yo] += x->get(xo) * w->get(wo); });
  for (int64_t i = 0; i < y->numel(); ++i) {
    double v = acc[(size_t)i];
    if (bias) v += bias->get((i / (g.P * g.Q)) % g.K);
    y->f[(size_t)i] = activate(g.act, v);
  }
  return true;
}

bool ref_conv2d_bwd_data(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTConv2dDesc d = read_desc<CTConv2dDesc>(c.desc);
  const Array *dy = in(c, 0), *w = in(c, 1);
  Array* dx = out(outs, 0);
  if (!need(dy, "dy", 4, why) || !need(w, "w", 4, why) || !need(dx, "dx", 4, why)) return false;
  ConvGeo g;
  if (!conv_geo(d, dx->shape, w->shape, dy->shape, g, why)) return false;
  prepare(dx);
  conv_taps(g, [&](int64_t xo, int64_t wo, int64_t yo) { dx->f[(size_t)xo] += dy->get(yo) * w->get(wo); });
  return true;
}

bool ref_conv2d_bwd_weight(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTConv2dDesc d = read_desc<CTConv2dDesc>(c.desc);
  const Array *x = in(c, 0), *dy = in(c, 1);
  Array *dw = out(outs, 0), *dbias = out(outs, 1);
  if (!need(x, "x", 4, why) || !need(dy, "dy", 4, why) || !need(dw, "dw", 4, why)) return false;
  ConvGeo g;
  if (!conv_geo(d, x->shape, dw->shape, dy->shape, g, why)) return false;
  if (!same_numel(dbias, g.K, "dbias", why)) return false;
  prepare(dw);
  conv_taps(g, [&](int64_t xo, int64_t wo, int64_t yo) { dw->f[(size_t)wo] += dy->get(yo) * x->get(xo); });
  if (dbias) {
    prepare(dbias);
    for (int64_t i = 0; i < dy->numel(); ++i) dbias->f[(size_t)((i / (g.P * g.Q)) % g.K)] += dy->get(i);
  }
  return true;
}

// ---------------------------------------------------------------------------
// pooling
// ---------------------------------------------------------------------------

struct PoolGeo {
  int64_t NC = 0, H = 0, W = 0, P = 0, Q = 0, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool cip = false;
  // f(ih, iw) for the window taps of output (p, q) that lie inside x, in
  // row-major window order; returns their number.
  template <class F>
  int64_t taps(int64_t p, int64_t q, F f) const {
    int64_t n = 0;
    for (int64_t r = 0; r < kh; ++r) {
      const int64_t h = p * sh - ph + r * dh;
      if (h < 0 || h >= H) continue;
      for (int64_t s = 0; s < kw; ++s) {
        const int64_t w = q * sw - pw + s * dw;
        if (w < 0 || w >= W) continue;
        f(h, w);
        ++n;
      }
    }
    return n;
  }
};

bool pool_geo(const CTPool2dDesc& d, const Shape& x, const Shape& y, PoolGeo& g, std::string* why) {
  if (x.size() != 4 || y.size() != 4) return fail(why, "pool2d: x " + str(x) + " and y " + str(y) + " must be 4-d");
  g.NC = x[0] * x[1];
  g.H = x[2];
  g.W = x[3];
  g.kh = d.kernel[0];
  g.kw = d.kernel[1];
  if (g.kh < 1 || g.kw < 1) return fail(why, "pool2d: kernel < 1");
  g.sh = d.stride[0] > 0 ? d.stride[0] : g.kh;
  g.sw = d.stride[1] > 0 ? d.stride[1] : g.kw;
  g.dh = d.dilation[0] > 0 ? d.dilation[0] : 1;
  g.dw = d.dilation[1] > 0 ? d.dilation[1] : 1;
  g.ph = d.pad_begin[0];
  g.pw = d.pad_begin[1];
  g.cip = d.count_include_pad != 0;
  const int64_t hh = g.H + d.pad_begin[0] + d.pad_end[0] - g.dh * (g.kh - 1) - 1;
  const int64_t ww = g.W + d.pad_begin[1] + d.pad_end[1] - g.dw * (g.kw - 1) - 1;
  if (hh < 0 || ww < 0) return fail(why, "pool2d: the input is smaller than the dilated window");
  g.P = hh / g.sh + 1;
  g.Q = ww / g.sw + 1;
  if (y[0] != x[0] || y[1] != x[1] || y[2] != g.P || y[3] != g.Q)
    return fail(why, "pool2d: y/dy " + str(y) + " is not the output shape " + str({x[0], x[1], g.P, g.Q}));
  return true;
}

bool ref_max_pool(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTPool2dDesc d = read_desc<CTPool2dDesc>(c.desc);
  const Array* x = in(c, 0);
  Array *y = out(outs, 0), *ind = out(outs, 1);
  if (!need(x, "x", 4, why) || !need(y, "y", 4, why)) return false;
  PoolGeo g;
  if (!pool_geo(d, x->shape, y->shape, g, why)) return false;
  if (!same_numel(ind, y->numel(), "indices", why)) return false;
  prepare(y);
  prepare(ind);
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t p = 0; p < g.P; ++p)
      for (int64_t q = 0; q < g.Q; ++q) {
        bool found = false;
        double best = -std::numeric_limits<double>::infinity();
        int64_t bi = -1;
        g.taps(p, q, [&](int64_t h, int64_t w) {
          const double v = x->get((nc * g.H + h) * g.W + w);
          if (!found || v > best) {  // strict: the first max in window order wins
            found = true;
            best = v;
            bi = h * g.W + w;
          }
        });
        const int64_t o = (nc * g.P + p) * g.Q + q;
        y->f[(size_t)o] = best;
        if (ind) ind->i[(size_t)o] = bi;
      }
  return true;
}

bool ref_max_pool_bwd(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTPool2dDesc d = read_desc<CTPool2dDesc>(c.desc);
  const Array *dy = in(c, 0), *ind = in(c, 1);
  Array* dx = out(outs, 0);
  if (!need(dy, "dy", 4, why) || !need(ind, "indices", -1, why) || !need(dx, "dx", 4, why)) return false;
  PoolGeo g;
  if (!pool_geo(d, dx->shape, dy->shape, g, why)) return false;
  if (!same_numel(ind, dy->numel(), "indices", why)) return false;
  prepare(dx);
  const int64_t PQ = g.P * g.Q, HW = g.H * g.W;
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t j = 0; j < PQ; ++j) {
      const int64_t pos = ind->i.empty() ? (int64_t)ind->get(nc * PQ + j) : ind->i[(size_t)(nc * PQ + j)];
      if (pos < 0 || pos >= HW)
        return fail(why, "max_pool2d_backward: index " + std::to_string(pos) + " outside the plane");
      dx->f[(size_t)(nc * HW + pos)] += dy->get(nc * PQ + j);
    }
  return true;
}

// The divisor of window (p, q): the whole kernel, or the taps inside x.
double avg_divisor(const PoolGeo& g, int64_t p, int64_t q) {
  if (g.cip) return (double)(g.kh * g.kw);
  return (double)g.taps(p, q, [](int64_t, int64_t) {});  // 0 gives NaN / inf, as 0/0
}

bool ref_avg_pool(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTPool2dDesc d = read_desc<CTPool2dDesc>(c.desc);
  const Array* x = in(c, 0);
  Array* y = out(outs, 0);
  if (!need(x, "x", 4, why) || !need(y, "y", 4, why)) return false;
  PoolGeo g;
  if (!pool_geo(d, x->shape, y->shape, g, why)) return false;
  prepare(y);
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t p = 0; p < g.P; ++p)
      for (int64_t q = 0; q < g.Q; ++q) {
        double s = 0;
        g.taps(p, q, [&](int64_t h, int64_t w) { s += x->get((nc * g.H + h) * g.W + w); });
        y->f[(size_t)((nc * g.P + p) * g.Q + q)] = s / avg_divisor(g, p, q);
      }
  return true;
}

bool ref_avg_pool_bwd(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTPool2dDesc d = read_desc<CTPool2dDesc>(c.desc);
  const Array* dy = in(c, 0);
  Array* dx = out(outs, 0);
  if (!need(dy, "dy", 4, why) || !need(dx, "dx", 4, why)) return false;
  PoolGeo g;
  if (!pool_geo(d, dx->shape, dy->shape, g, why)) return false;
  prepare(dx);
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t p = 0; p < g.P; ++p)
      for (int64_t q = 0; q < g.Q; ++q) {
        const double v = dy->get((nc * g.P + p) * g.Q + q) / avg_divisor(g, p, q);
        g.taps(p, q, [&](int64_t h, int64_t w) { dx->f[(size_t)((nc * g.H + h) * g.W + w)] += v; });
      }
  return true;
}

// ---------------------------------------------------------------------------
// batch norm (channel dim 1)
// ---------------------------------------------------------------------------

struct BnGeo {
  int64_t C = 0, inner = 1, numel = 0, M = 0;
  int64_t chan(int64_t i) const { return (i / inner) % C; }
};

bool bn_geo(const Array* x, BnGeo& g, std::string* why) {
  if (x->shape.size() < 2) return fail(why, "batch_norm: x " + str(x->shape) + " must have a channel dim 1");
  g.C = x->shape[1];
  g.inner = prod(x->shape, 2);
  g.numel = x->numel();
  g.M = g.C ? g.numel / g.C : 0;
  return true;
}

bool ref_batch_norm(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTBatchNormDesc d = read_desc<CTBatchNormDesc>(c.desc);
  const Array *x = in(c, 0), *mean = in(c, 1), *var = in(c, 2), *scale = in(c, 3), *shift = in(c, 4);
  Array* y = out(outs, 0);
  if (!need(x, "x", -1, why) || !need(mean, "mean", -1, why) || !need(var, "var", -1, why) ||
      !need(y, "y", -1, why))
    return false;
  BnGeo g;
  if (!bn_geo(x, g, why)) return false;
  if (!same_numel(mean, g.C, "mean", why) || !same_numel(var, g.C, "var", why) ||
      !same_numel(scale, g.C, "scale", why) || !same_numel(shift, g.C, "shift", why) ||
      !same_numel(y, g.numel, "y", why))
    return false;
  prepare(y);
  for (int64_t i = 0; i < g.numel; ++i) {
    const int64_t ch = g.chan(i);
    y->f[(size_t)i] = (x->get(i) - mean->get(ch)) / std::sqrt(var->get(ch) + d.epsilon) *
                          (scale ? scale->get(ch) : 1.0) +
                      (shift ? shift->get(ch) : 0.0);
  }
  return true;
}

void bn_stats(const Array* x, const BnGeo& g, double eps, std::vector<double>& mean, std::vector<double>& invstd) {
  mean.assign((size_t)g.C, 0.0);
  invstd.assign((size_t)g.C, 0.0);
  std::vector<double> var((size_t)g.C, 0.0);
  for (int64_t i = 0; i < g.numel; ++i) mean[(size_t)g.chan(i)] += x->get(i);
  for (double& m : mean) m /= (double)g.M;
  for (int64_t i = 0; i < g.numel; ++i) {
    const double t = x->get(i) - mean[(size_t)g.chan(i)];
    var[(size_t)g.chan(i)] += t * t;
  }
  for (int64_t ch = 0; ch < g.C; ++ch) invstd[(size_t)ch] = 1.0 / std::sqrt(var[(size_t)ch] / (double)g.M + eps);
}

bool ref_batch_norm_training(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTBatchNormDesc d = read_desc<CTBatchNormDesc>(c.desc);
  const Array *x = in(c, 0), *scale = in(c, 1), *shift = in(c, 2);
  Array *y = out(outs, 0), *mean = out(outs, 1), *invstd = out(outs, 2);
  if (!need(x, "x", -1, why) || !need(y, "y", -1, why)) return false;
  BnGeo g;
  if (!bn_geo(x, g, why)) return false;
  if (!same_numel(scale, g.C, "scale", why) || !same_numel(shift, g.C, "shift", why) ||
      !same_numel(y, g.numel, "y", why) || !same_numel(mean, g.C, "mean", why) ||
      !same_numel(invstd, g.C, "invstd", why))
    return false;
  std::vector<double> m, is;
  bn_stats(x, g, d.epsilon, m, is);
  prepare(y);
  prepare(mean);
  prepare(invstd);
  for (int64_t i = 0; i < g.numel; ++i) {
    const size_t ch = (size_t)g.chan(i);
    y->f[(size_t)i] = (x->get(i) - m[ch]) * is[ch] * (scale ? scale->get((int64_t)ch) : 1.0) +
                      (shift ? shift->get((int64_t)ch) : 0.0);
  }
  for (int64_t ch = 0; ch < g.C; ++ch) {
    if (mean) mean->f[(size_t)ch] = m[(size_t)ch];
    if (invstd) invstd->f[(size_t)ch] = is[(size_t)ch];
  }
  return true;
}

// xhat = (x - mean) * invstd, dshift = sum dy, dscale = sum dy * xhat,
// dx = scale * invstd * (dy - dshift / M - xhat * dscale / M).
bool ref_batch_norm_backward(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const Array *x = in(c, 0), *dy = in(c, 1), *mean = in(c, 2), *invstd = in(c, 3), *scale = in(c, 4);
  Array *dx = out(outs, 0), *dscale = out(outs, 1), *dshift = out(outs, 2);
  if (!need(x, "x", -1, why) || !need(dy, "dy", -1, why) || !need(mean, "mean", -1, why) ||
      !need(invstd, "invstd", -1, why) || !need(dx, "dx", -1, why))
    return false;
  BnGeo g;
  if (!bn_geo(x, g, why)) return false;
  if (!same_numel(dy, g.numel, "dy", why) || !same_numel(mean, g.C, "mean", why) ||
      !same_numel(invstd, g.C, "invstd", why) || !same_numel(scale, g.C, "scale", why) ||
      !same_numel(dx, g.numel, "dx", why) || !same_numel(dscale, g.C, "dscale", why) ||
      !same_numel(dshift, g.C, "dshift", why))
    return false;
  std::vector<double> sdy((size_t)g.C, 0.0), sdyx((size_t)g.C, 0.0);
  for (int64_t i = 0; i < g.numel; ++i) {
    const int64_t ch = g.chan(i);
    const double xh = (x->get(i) - mean->get(ch)) * invstd->get(ch);
    sdy[(size_t)ch] += dy->get(i);
    sdyx[(size_t)ch] += dy->get(i) * xh;
  }
  prepare(dx);
  prepare(dscale);
  prepare(dshift);
  for (int64_t i = 0; i < g.numel; ++i) {
    const int64_t ch = g.chan(i);
    const double is = invstd->get(ch), xh = (x->get(i) - mean->get(ch)) * is;
    dx->f[(size_t)i] = (scale ? scale->get(ch) : 1.0) * is *
                       (dy->get(i) - sdy[(size_t)ch] / (double)g.M - xh * sdyx[(size_t)ch] / (double)g.M);
  }
  for (int64_t ch = 0; ch < g.C; ++ch) {
    if (dscale) dscale->f[(size_t)ch] = sdyx[(size_t)ch];
    if (dshift) dshift->f[(size_t)ch] = sdy[(size_t)ch];
  }
  return true;
}

// ---------------------------------------------------------------------------
// layer norm (last k axes; rows are the row-major index / D)
// ---------------------------------------------------------------------------

bool ln_geo(const CTLayerNormDesc& d, const Array* x, int64_t& R, int64_t& D, std::string* why) {
  const int k = d.normalized_ndim > 0 ? d.normalized_ndim : 1;
  if ((size_t)k > x->shape.size())
    return fail(why, "layer_norm: normalized_ndim " + std::to_string(k) + " > x.ndim (x " + str(x->shape) + ")");
  D = prod(x->shape, x->shape.size() - (size_t)k);
  R = prod(x->shape, 0, x->shape.size() - (size_t)k);
  return true;
}

bool ref_layer_norm(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTLayerNormDesc d = read_desc<CTLayerNormDesc>(c.desc);
  const Array *x = in(c, 0), *scale = in(c, 1), *shift = in(c, 2);
  Array *y = out(outs, 0), *mean = out(outs, 1), *rstd = out(outs, 2);
  if (!need(x, "x", -1, why) || !need(y, "y", -1, why)) return false;
  int64_t R = 0, D = 0;
  if (!ln_geo(d, x, R, D, why)) return false;
  if (!same_numel(scale, D, "scale", why) || !same_numel(shift, D, "shift", why) ||
      !same_numel(y, R * D, "y", why) || !same_numel(mean, R, "mean", why) || !same_numel(rstd, R, "rstd", why))
    return false;
  prepare(y);
  prepare(mean);
  prepare(rstd);
  for (int64_t r = 0; r < R; ++r) {
    double s = 0;
    for (int64_t j = 0; j < D; ++j) s += x->get(r * D + j);
    const double m = s / (double)D;
    double v = 0;
    for (int64_t j = 0; j < D; ++j) v += (x->get(r * D + j) - m) * (x->get(r * D + j) - m);
    const double rs = 1.0 / std::sqrt(v / (double)D + d.epsilon);
    for (int64_t j = 0; j < D; ++j)
      y->f[(size_t)(r * D + j)] =
          (x->get(r * D + j) - m) * rs * (scale ? scale->get(j) : 1.0) + (shift ? shift->get(j) : 0.0);
    if (mean) mean->f[(size_t)r] = m;
    if (rstd) rstd->f[(size_t)r] = rs;
  }
  return true;
}

// xhat = (x - mean) * rstd, g = dy * scale; per row
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)); dscale = sum over rows of
// dy * xhat, dshift = sum over rows of dy.
bool ref_layer_norm_backward(const Call& c, const std::vector<Array*>& outs, std::string* why) {
  const CTLayerNormDesc d = read_desc<CTLayerNormDesc>(c.desc);
  const Array *x = in(c, 0), *dy = in(c, 1), *mean = in(c, 2), *rstd = in(c, 3), *scale = in(c, 4);
  Array *dx = out(outs, 0), *dscale = out(outs, 1), *dshift = out(outs, 2);
  if (!need(x, "x", -1, why) || !need(dy, "dy", -1, why) || !need(mean, "mean", -1, why) ||
      !need(rstd, "rstd", -1, why) || !need(dx, "dx", -1, why))
    return false;
  int64_t R = 0, D = 0;
  if (!ln_geo(d, x, R, D, why)) return false;
  if (!same_numel(dy, R * D, "dy", why) || !same_numel(mean, R, "mean", why) || !same_numel(rstd, R, "rstd", why) ||
      !same_numel(scale, D, "scale", why) || !same_numel(dx, R * D, "dx", why) ||
      !same_numel(dscale, D, "dscale", why) || !same_numel(dshift, D, "dshift", why))
    return false;
  prepare(dx);
  prepare(dscale);
  prepare(dshift);
  for (int64_t r = 0; r < R; ++r) {
    const double m = mean->get(r), rs = rstd->get(r);
    double mg = 0, mgx = 0;
    for (int64_t j = 0; j < D; ++j) {
      const int64_t i = r * D + j;
      const double xh = (x->get(i) - m) * rs, gj = dy->get(i) * (scale ? scale->get(j) : 1.0);
      mg += gj;
      mgx += gj * xh;
      if (dscale) dscale->f[(size_t)j] += dy->get(i) * xh;
      if (dshift) dshift->f[(size_t)j] += dy->get(i);
    }
    mg /= (double)D;
    mgx /= (double)D;
    for (int64_t j = 0; j < D; ++j) {
      const int64_t i = r * D + j;
      const double xh = (x->get(i) - m) * rs, gj = dy->get(i) * (scale ? scale->get(j) : 1.0);
      dx->f[(size_t)i] = rs * (gj - mg - xh * mgx);
    }
  }
  return true;
}

}  // namespace

bool run_nn(const Call& c, const std::vector<Array*>& outputs, std::string* why) {
  if (!c.desc) return fail(why, c.name + ": no descriptor");
  const std::string& n = c.name;
  if (n == "matmul") return ref_matmul(c, outputs, why);
  if (n == "conv2d") return ref_conv2d(c, outputs, why);
  if (n == "conv2d_backward_data") return ref_conv2d_bwd_data(c, outputs, why);
  if (n == "conv2d_backward_weight") return ref_conv2d_bwd_weight(c, outputs, why);
  if (n == "max_pool2d") return ref_max_pool(c, outputs, why);
  if (n == "max_pool2d_backward") return ref_max_pool_bwd(c, outputs, why);
  if (n == "avg_pool2d") return ref_avg_pool(c, outputs, why);
  if (n == "avg_pool2d_backward") return ref_avg_pool_bwd(c, outputs, why);
  if (n == "batch_norm") return ref_batch_norm(c, outputs, why);
  if (n == "batch_norm_training") return ref_batch_norm_training(c, outputs, why);
  if (n == "batch_norm_backward") return ref_batch_norm_backward(c, outputs, why);
  if (n == "layer_norm") return ref_layer_norm(c, outputs, why);
  if (n == "layer_norm_backward") return ref_layer_norm_backward(c, outputs, why);
  return fail(why, "no NN reference for op '" + n + "'");
}

// ===========================================================================
// Cases
// ===========================================================================

namespace {

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

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<NNCase> nn_cases(const std::string& op, bool quick) {
  std::vector<NNCase> v;
  if (op == "matmul") matmul_cases(v);
  else if (op == "conv2d" || op == "conv2d_backward_data" || op == "conv2d_backward_weight") conv_cases(op, v);
  else if (op == "max_pool2d" || op == "max_pool2d_backward" || op == "avg_pool2d" || op == "avg_pool2d_backward")
    pool_cases(op, v);
  else if (op == "batch_norm" || op == "batch_norm_training" || op == "batch_norm_backward") bn_cases(op, v);
  else if (op == "layer_norm" || op == "layer_norm_backward") ln_cases(op, v);
  if (quick && v.size() > 2) v.resize(2);
  return v;
}

bool fill_pool_indices(const NNCase& c, std::vector<int64_t>& idx, uint64_t seed) {
  idx.clear();
  if (c.shapes.size() != 3 || c.desc.size() < sizeof(uint32_t)) return false;
  const CTPool2dDesc d = read_desc<CTPool2dDesc>(c.desc.data());
  PoolGeo g;
  if (!pool_geo(d, c.shapes[2], c.shapes[0], g, nullptr)) return false;
  uint64_t s = seed;
  std::vector<int64_t> taps;
  idx.reserve((size_t)(g.NC * g.P * g.Q));
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t p = 0; p < g.P; ++p)
      for (int64_t q = 0; q < g.Q; ++q) {
        taps.clear();
        g.taps(p, q, [&](int64_t h, int64_t w) { taps.push_back(h * g.W + w); });
        if (taps.empty()) return false;
        idx.push_back(taps[(size_t)(splitmix(s) % taps.size())]);
      }
  return true;
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

}  // namespace ctref
