// nn_norm.cc — references of batch_norm (inference), batch_norm_training,
// batch_norm_backward, layer_norm and layer_norm_backward (category 3), in
// double over logical indices; the table sits at the end.
#include "ref_internal.h"

namespace ctref {
namespace {

// ---------------------------------------------------------------------------
// batch norm: channel dim 1, x 2-d to 5-d; scale NULL = 1, shift NULL = 0
// ---------------------------------------------------------------------------

struct BnGeo {
  int64_t C = 0, inner = 1, numel = 0, M = 0;  // M: elements per channel
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

// y = (x - mean) / sqrt(var + eps) * scale + shift, with the given statistics.
bool ref_batch_norm(const Call& c, const Outs& outs, std::string* why) {
  const CTBatchNormDesc d = read_desc<CTBatchNormDesc>(c.desc);
  const Array *x = arg_in(c, 0), *mean = arg_in(c, 1), *var = arg_in(c, 2), *scale = arg_in(c, 3),
              *shift = arg_in(c, 4);
  Array* y = arg_out(outs, 0);
  if (!need_array(x, "x", -1, why) || !need_array(mean, "mean", -1, why) || !need_array(var, "var", -1, why) ||
      !need_array(y, "y", -1, why))
    return false;
  BnGeo g;
  if (!bn_geo(x, g, why) || !same_numel(mean, g.C, "mean", why) || !same_numel(var, g.C, "var", why) ||
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

// Batch mean and invstd = 1 / sqrt(biased variance + eps) per channel.
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

// y with the batch statistics; mean and invstd out.
bool ref_batch_norm_training(const Call& c, const Outs& outs, std::string* why) {
  const CTBatchNormDesc d = read_desc<CTBatchNormDesc>(c.desc);
  const Array *x = arg_in(c, 0), *scale = arg_in(c, 1), *shift = arg_in(c, 2);
  Array *y = arg_out(outs, 0), *mean = arg_out(outs, 1), *invstd = arg_out(outs, 2);
  if (!need_array(x, "x", -1, why) || !need_array(y, "y", -1, why)) return false;
  BnGeo g;
  if (!bn_geo(x, g, why) || !same_numel(scale, g.C, "scale", why) || !same_numel(shift, g.C, "shift", why) ||
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

// Training-mode gradients with the given mean and invstd: xhat = (x - mean)
// * invstd, dshift = sum dy, dscale = sum dy * xhat,
// dx = scale * invstd * (dy - dshift / M - xhat * dscale / M).
bool ref_batch_norm_backward(const Call& c, const Outs& outs, std::string* why) {
  const Array *x = arg_in(c, 0), *dy = arg_in(c, 1), *mean = arg_in(c, 2), *invstd = arg_in(c, 3),
              *scale = arg_in(c, 4);
  Array *dx = arg_out(outs, 0), *dscale = arg_out(outs, 1), *dshift = arg_out(outs, 2);
  if (!need_array(x, "x", -1, why) || !need_array(dy, "dy", -1, why) || !need_array(mean, "mean", -1, why) ||
      !need_array(invstd, "invstd", -1, why) || !need_array(dx, "dx", -1, why))
    return false;
  BnGeo g;
  if (!bn_geo(x, g, why) || !same_numel(dy, g.numel, "dy", why) || !same_numel(mean, g.C, "mean", why) ||
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
// layer norm: over the last k = normalized_ndim axes (0 means 1); rows are
// the row-major index / D; statistics hold one value per row (their shape
// x.shape[:-k], with or without k trailing 1s)
// ---------------------------------------------------------------------------

bool ln_geo(const CTLayerNormDesc& d, const Array* x, int64_t& R, int64_t& D, std::string* why) {
  const int k = d.normalized_ndim > 0 ? d.normalized_ndim : 1;
  if ((size_t)k > x->shape.size())
    return fail(why, "layer_norm: normalized_ndim " + std::to_string(k) + " > x.ndim (x " + str(x->shape) + ")");
  D = prod(x->shape, x->shape.size() - (size_t)k);
  R = prod(x->shape, 0, x->shape.size() - (size_t)k);
  return true;
}

// y = (x - mean) * rstd * scale + shift per row, rstd = 1 / sqrt(biased var + eps).
bool ref_layer_norm(const Call& c, const Outs& outs, std::string* why) {
  const CTLayerNormDesc d = read_desc<CTLayerNormDesc>(c.desc);
  const Array *x = arg_in(c, 0), *scale = arg_in(c, 1), *shift = arg_in(c, 2);
  Array *y = arg_out(outs, 0), *mean = arg_out(outs, 1), *rstd = arg_out(outs, 2);
  if (!need_array(x, "x", -1, why) || !need_array(y, "y", -1, why)) return false;
  int64_t R = 0, D = 0;
  if (!ln_geo(d, x, R, D, why) || !same_numel(scale, D, "scale", why) || !same_numel(shift, D, "shift", why) ||
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
bool ref_layer_norm_backward(const Call& c, const Outs& outs, std::string* why) {
  const CTLayerNormDesc d = read_desc<CTLayerNormDesc>(c.desc);
  const Array *x = arg_in(c, 0), *dy = arg_in(c, 1), *mean = arg_in(c, 2), *rstd = arg_in(c, 3),
              *scale = arg_in(c, 4);
  Array *dx = arg_out(outs, 0), *dscale = arg_out(outs, 1), *dshift = arg_out(outs, 2);
  if (!need_array(x, "x", -1, why) || !need_array(dy, "dy", -1, why) || !need_array(mean, "mean", -1, why) ||
      !need_array(rstd, "rstd", -1, why) || !need_array(dx, "dx", -1, why))
    return false;
  int64_t R = 0, D = 0;
  if (!ln_geo(d, x, R, D, why) || !same_numel(dy, R * D, "dy", why) || !same_numel(mean, R, "mean", why) ||
      !same_numel(rstd, R, "rstd", why) || !same_numel(scale, D, "scale", why) ||
      !same_numel(dx, R * D, "dx", why) || !same_numel(dscale, D, "dscale", why) ||
      !same_numel(dshift, D, "dshift", why))
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

// ---------------------------------------------------------------------------
// The table: one entry per op
// ---------------------------------------------------------------------------

const Entry kNnNorm[] = {
    {CT_OP_BATCH_NORM, ref_batch_norm},
    {CT_OP_BATCH_NORM_TRAINING, ref_batch_norm_training},
    {CT_OP_BATCH_NORM_BACKWARD, ref_batch_norm_backward},
    {CT_OP_LAYER_NORM, ref_layer_norm},
    {CT_OP_LAYER_NORM_BACKWARD, ref_layer_norm_backward},
};

}  // namespace

CTREF_TABLE(nn_norm_table, kNnNorm)

}  // namespace ctref
