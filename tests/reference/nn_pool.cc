// nn_pool.cc — references of max_pool2d, max_pool2d_backward, avg_pool2d and
// avg_pool2d_backward (category 3): windows over logical (N, C, H, W)
// indices, padding never a tap; the table sits at the end.
#include "ref_internal.h"

namespace ctref {
namespace {

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
  // The divisor of window (p, q): the whole kernel, or the taps inside x
  // (0 gives NaN or inf, as 0 / 0).
  double divisor(int64_t p, int64_t q) const {
    return cip ? (double)(kh * kw) : (double)taps(p, q, [](int64_t, int64_t) {});
  }
};

// x (N,C,H,W) and y (N,C,P,Q), P and Q by the floor formula (a zero stride
// means the kernel, a zero dilation 1).
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

// y = the window's max, the first in window order on ties, NaN where the
// window holds one (PyTorch's rule: the last NaN in window order gives the
// index); indices = its h * W + w in the (n, c) plane. A window without a tap gives -inf and -1.
bool ref_max_pool2d(const Call& c, const Outs& outs, std::string* why) {
  const CTPool2dDesc d = read_desc<CTPool2dDesc>(c.desc);
  const Array* x = arg_in(c, 0);
  Array *y = arg_out(outs, 0), *ind = arg_out(outs, 1);
  if (!need_array(x, "x", 4, why) || !need_array(y, "y", 4, why)) return false;
  PoolGeo g;
  if (!pool_geo(d, x->shape, y->shape, g, why) || !same_numel(ind, y->numel(), "indices", why)) return false;
  prepare(y);
  prepare(ind);
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t p = 0; p < g.P; ++p)
      for (int64_t q = 0; q < g.Q; ++q) {
        bool found = false;
        double best = -kInf;
        int64_t bi = -1;
        g.taps(p, q, [&](int64_t h, int64_t w) {
          const double v = x->get((nc * g.H + h) * g.W + w);
          if (!found || v > best || std::isnan(v)) {  // the first max in window order; a NaN wins, the last
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

// dx = 0, then dy added at each output's index (overlapping windows
// accumulate). An index that is not a tap of its own output's window is
// refused, as the op refuses it (CT_ERR_INVALID_ARGUMENT).
bool ref_max_pool2d_backward(const Call& c, const Outs& outs, std::string* why) {
  const CTPool2dDesc d = read_desc<CTPool2dDesc>(c.desc);
  const Array *dy = arg_in(c, 0), *ind = arg_in(c, 1);
  Array* dx = arg_out(outs, 0);
  if (!need_array(dy, "dy", 4, why) || !need_array(ind, "indices", -1, why) || !need_array(dx, "dx", 4, why))
    return false;
  PoolGeo g;
  if (!pool_geo(d, dx->shape, dy->shape, g, why) || !same_numel(ind, dy->numel(), "indices", why)) return false;
  prepare(dx);
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t p = 0; p < g.P; ++p)
      for (int64_t q = 0; q < g.Q; ++q) {
        const int64_t o = (nc * g.P + p) * g.Q + q;
        const int64_t pos = ind->is_float() ? (int64_t)ind->f[(size_t)o] : ind->i[(size_t)o];
        bool inside = false;
        g.taps(p, q, [&](int64_t h, int64_t w) { inside = inside || h * g.W + w == pos; });
        if (!inside)
          return fail(why, "max_pool2d_backward: index " + std::to_string(pos) + " of output " + std::to_string(o) +
                               " is not in its window");
        dx->f[(size_t)(nc * g.H * g.W + pos)] += dy->get(o);
      }
  return true;
}

// y = the sum of the window's taps / the divisor (count_include_pad: the
// kernel area, else the taps inside x).
bool ref_avg_pool2d(const Call& c, const Outs& outs, std::string* why) {
  const CTPool2dDesc d = read_desc<CTPool2dDesc>(c.desc);
  const Array* x = arg_in(c, 0);
  Array* y = arg_out(outs, 0);
  if (!need_array(x, "x", 4, why) || !need_array(y, "y", 4, why)) return false;
  PoolGeo g;
  if (!pool_geo(d, x->shape, y->shape, g, why)) return false;
  prepare(y);
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t p = 0; p < g.P; ++p)
      for (int64_t q = 0; q < g.Q; ++q) {
        double s = 0;
        g.taps(p, q, [&](int64_t h, int64_t w) { s += x->get((nc * g.H + h) * g.W + w); });
        y->f[(size_t)((nc * g.P + p) * g.Q + q)] = s / g.divisor(p, q);
      }
  return true;
}

// dx = for each output, dy / divisor added to each of its taps.
bool ref_avg_pool2d_backward(const Call& c, const Outs& outs, std::string* why) {
  const CTPool2dDesc d = read_desc<CTPool2dDesc>(c.desc);
  const Array* dy = arg_in(c, 0);
  Array* dx = arg_out(outs, 0);
  if (!need_array(dy, "dy", 4, why) || !need_array(dx, "dx", 4, why)) return false;
  PoolGeo g;
  if (!pool_geo(d, dx->shape, dy->shape, g, why)) return false;
  prepare(dx);
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t p = 0; p < g.P; ++p)
      for (int64_t q = 0; q < g.Q; ++q) {
        const double v = dy->get((nc * g.P + p) * g.Q + q) / g.divisor(p, q);
        g.taps(p, q, [&](int64_t h, int64_t w) { dx->f[(size_t)((nc * g.H + h) * g.W + w)] += v; });
      }
  return true;
}

// ---------------------------------------------------------------------------
// The table: one entry per op
// ---------------------------------------------------------------------------

const Entry kNnPool[] = {
    {CT_OP_MAX_POOL2D, ref_max_pool2d},
    {CT_OP_MAX_POOL2D_BACKWARD, ref_max_pool2d_backward},
    {CT_OP_AVG_POOL2D, ref_avg_pool2d},
    {CT_OP_AVG_POOL2D_BACKWARD, ref_avg_pool2d_backward},
};

}  // namespace

CTREF_TABLE(nn_pool_table, kNnPool)

}  // namespace ctref
