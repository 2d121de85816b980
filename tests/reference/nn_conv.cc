// nn_conv.cc — references of matmul, conv2d, conv2d_backward_data and
// conv2d_backward_weight (category 3): double accumulation over logical
// indices, every array dense row-major in its logical dims (x (N,C,H,W),
// w (K,C/groups,R,S)); the table sits at the end.
#include "ref_internal.h"

namespace ctref {
namespace {

// Offset into an array of shape `ashape` (row-major, right-aligned to
// `oshape`, extents of 1 broadcast) of the output multi-index `idx`.
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

// ---------------------------------------------------------------------------
// matmul: out = act(a @ b + bias); (..., M, K) @ (..., K, N), batch dims and
// bias broadcast to out; K = 0 gives act(bias) or act(0).
// ---------------------------------------------------------------------------

bool ref_matmul(const Call& c, const Outs& outs, std::string* why) {
  const CTMatmulDesc d = read_desc<CTMatmulDesc>(c.desc);
  const Array *a = arg_in(c, 0), *b = arg_in(c, 1), *bias = arg_in(c, 2);
  Array* o = arg_out(outs, 0);
  if (!need_array(a, "a", -1, why) || !need_array(b, "b", -1, why) || !need_array(o, "out", -1, why)) return false;
  const Shape &as = a->shape, &bs = b->shape, &os = o->shape;
  if (as.size() < 2 || bs.size() < 2 || os.size() < 2) return fail(why, "matmul operands must be at least 2-d");
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K) return fail(why, "matmul: K of a " + str(as) + " and b " + str(bs) + " differ");
  if (os[os.size() - 2] != M || os.back() != N) return fail(why, "matmul: out " + str(os) + " is not (..., M, N)");
  const Shape ob(os.begin(), os.end() - 2), ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  if (!broadcasts_to(ab, ob) || !broadcasts_to(bb, ob))
    return fail(why, "matmul: batch dims of a " + str(as) + " / b " + str(bs) + " do not broadcast to out " + str(os));
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
// output extents checked against the floor formula (a zero stride, dilation
// or group count means 1).
bool conv_geo(const CTConv2dDesc& d, const Shape& x, const Shape& w, const Shape& y, ConvGeo& g, std::string* why) {
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

// y = act(conv(x, w) + bias).
bool ref_conv2d(const Call& c, const Outs& outs, std::string* why) {
  const CTConv2dDesc d = read_desc<CTConv2dDesc>(c.desc);
  const Array *x = arg_in(c, 0), *w = arg_in(c, 1), *bias = arg_in(c, 2);
  Array* y = arg_out(outs, 0);
  if (!need_array(x, "x", 4, why) || !need_array(w, "w", 4, why) || !need_array(y, "y", 4, why)) return false;
  ConvGeo g;
  if (!conv_geo(d, x->shape, w->shape, y->shape, g, why) || !same_numel(bias, g.K, "bias", why)) return false;
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

// dx = the gradient of sum(y * dy) wrt x; dx's shape fixes H and W.
bool ref_conv2d_backward_data(const Call& c, const Outs& outs, std::string* why) {
  const CTConv2dDesc d = read_desc<CTConv2dDesc>(c.desc);
  const Array *dy = arg_in(c, 0), *w = arg_in(c, 1);
  Array* dx = arg_out(outs, 0);
  if (!need_array(dy, "dy", 4, why) || !need_array(w, "w", 4, why) || !need_array(dx, "dx", 4, why)) return false;
  ConvGeo g;
  if (!conv_geo(d, dx->shape, w->shape, dy->shape, g, why)) return false;
  prepare(dx);
  conv_taps(g, [&](int64_t xo, int64_t wo, int64_t yo) { dx->f[(size_t)xo] += dy->get(yo) * w->get(wo); });
  return true;
}

// dw = the gradient of sum(y * dy) wrt w; dbias = sum of dy over N, P, Q.
bool ref_conv2d_backward_weight(const Call& c, const Outs& outs, std::string* why) {
  const CTConv2dDesc d = read_desc<CTConv2dDesc>(c.desc);
  const Array *x = arg_in(c, 0), *dy = arg_in(c, 1);
  Array *dw = arg_out(outs, 0), *dbias = arg_out(outs, 1);
  if (!need_array(x, "x", 4, why) || !need_array(dy, "dy", 4, why) || !need_array(dw, "dw", 4, why)) return false;
  ConvGeo g;
  if (!conv_geo(d, x->shape, dw->shape, dy->shape, g, why) || !same_numel(dbias, g.K, "dbias", why)) return false;
  prepare(dw);
  conv_taps(g, [&](int64_t xo, int64_t wo, int64_t yo) { dw->f[(size_t)wo] += dy->get(yo) * x->get(xo); });
  if (dbias) {
    prepare(dbias);
    for (int64_t i = 0; i < dy->numel(); ++i) dbias->f[(size_t)((i / (g.P * g.Q)) % g.K)] += dy->get(i);
  }
  return true;
}

// ---------------------------------------------------------------------------
// The table: one entry per op
// ---------------------------------------------------------------------------

const Entry kNnConv[] = {
    {CT_OP_MATMUL, ref_matmul},
    {CT_OP_CONV2D, ref_conv2d},
    {CT_OP_CONV2D_BACKWARD_DATA, ref_conv2d_backward_data},
    {CT_OP_CONV2D_BACKWARD_WEIGHT, ref_conv2d_backward_weight},
};

}  // namespace

CTREF_TABLE(nn_conv_table, kNnConv)

}  // namespace ctref
