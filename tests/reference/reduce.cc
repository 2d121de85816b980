// reduce.cc — references of the reductions and the along-axis ops (category
// 2): one function per op over the values of one output's set (or one
// line), in long double / exact integers; the table sits at the end.
#include "ref_internal.h"

namespace ctref {
namespace {

// ---------------------------------------------------------------------------
// Reductions: R computes the value of one output from its set `v` (row-major
// within the reduced axes, in x's axis order).
// ---------------------------------------------------------------------------

typedef bool (*RedFn)(const Values& v, const Call& c, V* r, std::string* why);

template <RedFn R>
bool reduce(const Call& c, const Outs& o, std::string* why) {
  if (!need_inputs(c, 1, why) || !need_output(c, o, why)) return false;
  const Array& x = *c.inputs[0];
  Array& out = *o[0];
  std::vector<std::vector<int64_t>> groups;
  std::string bad;
  if (!reduction_groups(x.shape, c.axes, c.all_axes, &groups, &bad)) return fail(why, name_of(c) + ": " + bad);
  if ((int64_t)groups.size() != out.numel())
    return fail(why, name_of(c) + ": out" + str(out.shape) + " has " + std::to_string(out.numel()) +
                         " elements, the reduction " + std::to_string(groups.size()));
  Values v;
  v.fl = x.is_float();
  v.uns = dt_uint(x.dtype);
  for (size_t g = 0; g < groups.size(); ++g) {
    v.f.clear();
    v.i.clear();
    for (int64_t k : groups[g]) {
      if (v.fl) v.f.push_back(x.f[(size_t)k]);
      else v.i.push_back(x.i[(size_t)k]);
    }
    V r;
    if (!R(v, c, &r, why)) return false;
    store(out, (int64_t)g, r);
  }
  return true;
}

// Neumaier's compensated sum in long double (plain when a value is not finite).
long double fsum(const std::vector<double>& v) {
  long double s = 0, comp = 0;
  bool finite = true;
  for (double x : v) finite = finite && std::isfinite(x);
  if (!finite) {
    for (double x : v) s += x;
    return s;
  }
  for (double x : v) {
    const long double t = s + x;
    if (std::fabs(s) >= std::fabs((long double)x)) comp += (s - t) + x;
    else comp += (x - t) + s;
    s = t;
  }
  return s + comp;
}

// The exact sum of integers, as a long double (exact below 2^64).
long double isum_exact(const Values& v) {
  Int128 s = 0;
  for (int64_t j = 0; j < v.size(); ++j) s += v.exact(j);
  return (long double)s;
}

// The mean of v in long double (ints: the exact sum once divided; a sum
// below 2^53 gives the correctly rounded double quotient).
long double mean_of(const Values& v) {
  const int64_t n = v.size();
  if (n == 0) return kNaN;
  if (v.fl) return fsum(v.f) / n;
  const long double s = isum_exact(v);
  if (std::fabs(s) <= 9007199254740992.0L) return (long double)((double)s / (double)n);
  return s / n;
}

bool r_sum(const Values& v, const Call&, V* r, std::string*) {
  if (v.fl) {
    *r = vf((double)fsum(v.f));
  } else {
    uint64_t s = 0;  // int64, wrapping
    for (int64_t x : v.i) s += (uint64_t)x;
    *r = vi((int64_t)s);
  }
  return true;
}

// ints and bool are summed exactly (SEMANTICS: in float64, as NumPy).
bool r_mean(const Values& v, const Call&, V* r, std::string*) {
  *r = vf((double)mean_of(v));
  return true;
}

bool r_prod(const Values& v, const Call&, V* r, std::string*) {
  if (v.fl) {
    long double p = 1;
    for (double x : v.f) p *= x;
    *r = vf((double)p);
  } else {
    uint64_t p = 1;
    for (int64_t x : v.i) p *= (uint64_t)x;
    *r = vi((int64_t)p);
  }
  return true;
}

// The first extreme (the first NaN wins); j of the winner.
bool extreme(const Values& v, const Call& c, bool largest, int64_t* best, std::string* why) {
  if (v.size() == 0) return fail(why, name_of(c) + " of an empty set (no identity)");
  *best = 0;
  for (int64_t j = 1; j < v.size(); ++j) {
    if (v.fl) {
      const double x = v.f[(size_t)j], bx = v.f[(size_t)*best];
      if (std::isnan(bx)) break;
      if (std::isnan(x) || (largest ? x > bx : x < bx)) *best = j;
    } else {
      const Int128 x = v.exact(j), bx = v.exact(*best);
      if (largest ? x > bx : x < bx) *best = j;
    }
  }
  return true;
}

bool r_max(const Values& v, const Call& c, V* r, std::string* why) {
  int64_t b;
  if (!extreme(v, c, true, &b, why)) return false;
  *r = v.fl ? vf(v.f[(size_t)b]) : vi(v.i[(size_t)b]);
  return true;
}
bool r_min(const Values& v, const Call& c, V* r, std::string* why) {
  int64_t b;
  if (!extreme(v, c, false, &b, why)) return false;
  *r = v.fl ? vf(v.f[(size_t)b]) : vi(v.i[(size_t)b]);
  return true;
}
bool r_argmax(const Values& v, const Call& c, V* r, std::string* why) {
  int64_t b;
  if (!extreme(v, c, true, &b, why)) return false;
  *r = vi(b);
  return true;
}
bool r_argmin(const Values& v, const Call& c, V* r, std::string* why) {
  int64_t b;
  if (!extreme(v, c, false, &b, why)) return false;
  *r = vi(b);
  return true;
}

bool r_any(const Values& v, const Call&, V* r, std::string*) {  // nonzero (NaN too) is true
  bool t = false;
  for (int64_t j = 0; j < v.size(); ++j) t = t || v.get(j) != 0;
  *r = vb(t);
  return true;
}
bool r_all(const Values& v, const Call&, V* r, std::string*) {
  bool t = true;
  for (int64_t j = 0; j < v.size(); ++j) t = t && v.get(j) != 0;
  *r = vb(t);
  return true;
}

// sqrt(sum(x*x)) in long double (ints do not wrap).
bool r_norm2(const Values& v, const Call&, V* r, std::string*) {
  long double s = 0;
  for (int64_t j = 0; j < v.size(); ++j) s += v.fl ? (long double)v.f[(size_t)j] * v.f[(size_t)j]
                                                   : (long double)v.exact(j) * (long double)v.exact(j);
  *r = vf((double)std::sqrt(s));
  return true;
}

// m + log(sum(exp(x - m))), m = max; nothing: -inf; any NaN: NaN; m = +-inf: m.
bool r_logsumexp(const Values& v, const Call& c, V* r, std::string* why) {
  if (!v.fl) return fail(why, name_of(c) + ": float dtypes only");
  double m = -kInf;
  for (double x : v.f) {
    if (std::isnan(x)) {
      *r = vf(kNaN);
      return true;
    }
    m = std::max(m, x);
  }
  if (std::isinf(m)) {
    *r = vf(m);
    return true;
  }
  long double s = 0;
  for (double x : v.f) s += std::exp((long double)x - m);
  *r = vf((double)((long double)m + std::log(s)));
  return true;
}

// nansum / nanmean: the elements that are not NaN (integers have none).
Values without_nan(const Values& v) {
  if (!v.fl) return v;
  Values r = v;
  r.f.clear();
  for (double x : v.f)
    if (!std::isnan(x)) r.f.push_back(x);
  return r;
}
bool r_nansum(const Values& v, const Call& c, V* r, std::string* why) { return r_sum(without_nan(v), c, r, why); }
bool r_nanmean(const Values& v, const Call&, V* r, std::string*) {
  *r = vf((double)mean_of(without_nan(v)));  // none: NaN
  return true;
}
bool r_count_nonzero(const Values& v, const Call&, V* r, std::string*) {  // NaN is nonzero
  int64_t n = 0;
  for (int64_t j = 0; j < v.size(); ++j) n += v.get(j) != 0;
  *r = vi(n);
  return true;
}

// Two-pass: sum((x - mean)^2) / max(count - correction, 0) (x / 0 is inf or
// NaN, as NumPy); nothing: NaN. params[0] = correction.
long double variance(const Values& v, double correction) {
  const int64_t n = v.size();
  if (n == 0) return kNaN;
  const long double mean = mean_of(v);
  long double ss = 0;
  for (int64_t j = 0; j < n; ++j) {
    const long double d = (v.fl ? (long double)v.f[(size_t)j] : (long double)v.exact(j)) - mean;
    ss += d * d;
  }
  const long double den = std::max<long double>((long double)n - correction, 0);
  return ss / den;
}
bool r_var(const Values& v, const Call& c, V* r, std::string*) {
  *r = vf((double)variance(v, c.params[0]));
  return true;
}
bool r_std(const Values& v, const Call& c, V* r, std::string*) {
  *r = vf((double)std::sqrt(variance(v, c.params[0])));
  return true;
}

// ---------------------------------------------------------------------------
// Along-axis ops: L maps one line of x (along the axis) to the same positions
// of out. The axis is in [-ndim, ndim); a 0-d x is one line of one element.
// ---------------------------------------------------------------------------

typedef bool (*LineFn)(const Values& line, const Call& c, std::vector<V>* out, std::string* why);

template <LineFn L>
bool along(const Call& c, const Outs& o, std::string* why) {
  if (!need_inputs(c, 1, why) || !need_output(c, o, why)) return false;
  const Array& x = *c.inputs[0];
  Array& out = *o[0];
  const int nd = (int)x.shape.size();
  int ax = c.axis < 0 ? c.axis + std::max(nd, 1) : c.axis;
  if (ax < 0 || ax >= std::max(nd, 1))
    return fail(why, name_of(c) + ": axis " + std::to_string(c.axis) + " out of range");
  if (out.numel() != x.numel()) return fail(why, name_of(c) + ": out" + str(out.shape) + " is not x" + str(x.shape));
  const int64_t len = nd ? x.shape[(size_t)ax] : 1, outer = nd ? prod(x.shape, 0, (size_t)ax) : 1,
                inner = nd ? prod(x.shape, (size_t)ax + 1) : 1;
  Values line;
  line.fl = x.is_float();
  line.uns = dt_uint(x.dtype);
  std::vector<V> res;
  for (int64_t p = 0; p < outer; ++p)
    for (int64_t q = 0; q < inner; ++q) {
      auto at = [&](int64_t j) { return (p * len + j) * inner + q; };
      line.f.clear();
      line.i.clear();
      for (int64_t j = 0; j < len; ++j) {
        if (line.fl) line.f.push_back(x.f[(size_t)at(j)]);
        else line.i.push_back(x.i[(size_t)at(j)]);
      }
      if (!L(line, c, &res, why)) return false;
      for (int64_t j = 0; j < len; ++j) store(out, at(j), res[(size_t)j]);
    }
  return true;
}

// Running sum / product in long double (floats) or 64 bits, wrapping (ints, bool;
// stored into int64 or uint64, both modulo 2^64).
bool running(const Values& line, bool sum, std::vector<V>* out) {
  out->clear();
  if (line.fl) {
    long double acc = sum ? 0 : 1;
    for (double x : line.f) out->push_back(vf((double)(acc = sum ? acc + x : acc * x)));
  } else {
    uint64_t acc = sum ? 0 : 1;
    for (int64_t x : line.i) out->push_back(vi((int64_t)(acc = sum ? acc + (uint64_t)x : acc * (uint64_t)x)));
  }
  return true;
}
bool l_cumsum(const Values& line, const Call&, std::vector<V>* out, std::string*) { return running(line, true, out); }
bool l_cumprod(const Values& line, const Call&, std::vector<V>* out, std::string*) {
  return running(line, false, out);
}

// NumPy's expression in long double: e^(x - m) / sum(e^(x - m)), m = max:
// -inf entries give 0; a NaN, a +inf or a line of all -inf makes the line NaN.
bool softmax_line(const Values& line, const Call& c, bool log, std::vector<V>* out, std::string* why) {
  if (!line.fl) return fail(why, name_of(c) + ": float dtypes only");
  double m = -kInf;
  bool nan = false;
  for (double x : line.f) {
    if (std::isnan(x)) nan = true;
    else m = std::max(m, x);
  }
  if (nan) m = kNaN;
  long double s = 0;
  for (double x : line.f) s += std::exp((long double)x - m);
  out->clear();
  for (double x : line.f) {
    const long double d = (long double)x - m;
    out->push_back(vf(log ? (double)(d - std::log(s)) : (double)(std::exp(d) / s)));
  }
  return true;
}
bool l_softmax(const Values& line, const Call& c, std::vector<V>* out, std::string* why) {
  return softmax_line(line, c, false, out, why);
}
bool l_log_softmax(const Values& line, const Call& c, std::vector<V>* out, std::string* why) {
  return softmax_line(line, c, true, out, why);
}

// softmax of -x.
bool l_softmin(const Values& line, const Call& c, std::vector<V>* out, std::string* why) {
  Values neg = line;
  for (double& x : neg.f) x = -x;
  return softmax_line(neg, c, false, out, why);
}

// Running log(sum(e^x)) in long double: log(e^a + e^b) = max + log1p(e^-|a - b|);
// equal infinities stay; -inf adds nothing; a NaN stays from where it is.
bool l_logcumsumexp(const Values& line, const Call& c, std::vector<V>* out, std::string* why) {
  if (!line.fl) return fail(why, name_of(c) + ": float dtypes only");
  out->clear();
  long double acc = -kInf;
  for (double x : line.f) {
    if (std::isnan(acc) || std::isnan(x)) acc = kNaN;
    else if (std::isinf(acc) && acc == x) acc = x;
    else if (x == -kInf) {
    } else if (acc == -kInf) acc = x;
    else {
      const long double m = std::max<long double>(acc, x), d = -std::fabs(acc - (long double)x);
      acc = m + std::log1p(std::exp(d));
    }
    out->push_back(vf((double)acc));
  }
  return true;
}

// The stable ascending order of a line: NaN after everything (in its
// order), -0 equal to 0, integers by their exact value.
std::vector<int64_t> stable_order(const Values& line) {
  std::vector<int64_t> idx((size_t)line.size());
  for (size_t j = 0; j < idx.size(); ++j) idx[j] = (int64_t)j;
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    if (!line.fl) return line.exact(a) < line.exact(b);
    const double x = line.f[(size_t)a], y = line.f[(size_t)b];
    return !std::isnan(x) && (std::isnan(y) || x < y);
  });
  return idx;
}
bool l_sort(const Values& line, const Call&, std::vector<V>* out, std::string*) {
  out->clear();
  for (int64_t j : stable_order(line)) out->push_back(line.fl ? vf(line.f[(size_t)j]) : vi(line.i[(size_t)j]));
  return true;
}
bool l_argsort(const Values& line, const Call&, std::vector<V>* out, std::string*) {
  out->clear();
  for (int64_t j : stable_order(line)) out->push_back(vi(j));
  return true;
}

// ---------------------------------------------------------------------------
// The order statistics, from the stable order (NaN last): the element of a
// rank; quantile's interpolation in long double, exact for every dtype.
// ---------------------------------------------------------------------------

int64_t nan_count(const Values& v) {
  int64_t n = 0;
  if (v.fl)
    for (double x : v.f) n += std::isnan(x);
  return n;
}
V element_of_rank(const Values& v, int64_t r) {
  const int64_t j = stable_order(v)[(size_t)r];
  return v.fl ? vf(v.f[(size_t)j]) : vi(v.i[(size_t)j]);
}
bool r_median(const Values& v, const Call& c, V* r, std::string* why) {  // the lower median; any NaN: NaN
  const int64_t n = v.size(), nan = nan_count(v);
  if (n == 0) return fail(why, name_of(c) + ": of nothing");
  *r = element_of_rank(v, nan > 0 ? n - nan : (n - 1) / 2);
  return true;
}
bool r_nanmedian(const Values& v, const Call& c, V* r, std::string* why) {
  const int64_t n = v.size(), m = n - nan_count(v);
  if (n == 0) return fail(why, name_of(c) + ": of nothing");
  *r = element_of_rank(v, m == 0 ? 0 : (m - 1) / 2);
  return true;
}
bool r_kthvalue(const Values& v, const Call& c, V* r, std::string* why) {
  const double k = c.params.empty() ? 0 : c.params[0];
  if (!(k >= 1 && k <= (double)v.size() && k == std::floor(k))) return fail(why, name_of(c) + ": k out of range");
  *r = element_of_rank(v, (int64_t)k - 1);
  return true;
}
// the most frequent key (NaN equal to NaN, -0 to 0), the smallest of the equally frequent: its first element
bool r_mode(const Values& v, const Call& c, V* r, std::string* why) {
  if (v.size() == 0) return fail(why, name_of(c) + ": of nothing");
  const std::vector<int64_t> idx = stable_order(v);
  auto same = [&](int64_t a, int64_t b) {
    if (!v.fl) return v.exact(a) == v.exact(b);
    const double x = v.f[(size_t)a], y = v.f[(size_t)b];
    return (std::isnan(x) && std::isnan(y)) || x == y;
  };
  size_t best = 0, best_n = 0;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i + 1;
    while (j < idx.size() && same(idx[i], idx[j])) ++j;
    if (j - i > best_n) {
      best_n = j - i;
      best = i;
    }
    i = j;
  }
  *r = element_of_rank(v, (int64_t)best);
  return true;
}
bool quantile(const Values& v, const Call& c, bool skip_nan, V* r) {
  const double q = c.params.empty() ? 0 : c.params[0];
  const int64_t nan = nan_count(v), n = skip_nan ? v.size() - nan : v.size();
  if ((!skip_nan && nan > 0) || n == 0) {
    *r = vf(kNaN);
    return true;
  }
  const std::vector<int64_t> idx = stable_order(v);
  auto at = [&](int64_t k) {
    const int64_t j = idx[(size_t)k];
    return v.fl ? (long double)v.f[(size_t)j] : (long double)v.exact(j);
  };
  // the position in float64, as NumPy computes it (and SEMANTICS.md says): (1/3) * 3 is 1 there
  const long double pos = q * (double)(n - 1), lo = std::floor(pos);
  const long double a = at((int64_t)lo), b = at((int64_t)std::ceil(pos)), w = pos - lo;
  *r = vf(w == 0 ? (double)a : (double)(a + (b - a) * w));
  return true;
}
bool r_quantile(const Values& v, const Call& c, V* r, std::string*) { return quantile(v, c, false, r); }
bool r_nanquantile(const Values& v, const Call& c, V* r, std::string*) { return quantile(v, c, true, r); }

// Running max / min: a NaN, once met, stays.
bool running_ext(const Values& line, bool larger, std::vector<V>* out) {
  out->clear();
  if (line.fl) {
    double acc = 0;
    for (size_t j = 0; j < line.f.size(); ++j) {
      const double x = line.f[j];
      if (j == 0 || (!std::isnan(acc) && (std::isnan(x) || (larger ? x > acc : x < acc)))) acc = x;
      out->push_back(vf(acc));
    }
  } else {
    int64_t best = 0;  // the index of the running max / min
    for (int64_t j = 0; j < line.size(); ++j) {
      if (larger ? line.exact(j) > line.exact(best) : line.exact(j) < line.exact(best)) best = j;
      out->push_back(vi(line.i[(size_t)best]));
    }
  }
  return true;
}

bool l_cummax(const Values& line, const Call&, std::vector<V>* out, std::string*) {
  return running_ext(line, true, out);
}
bool l_cummin(const Values& line, const Call&, std::vector<V>* out, std::string*) {
  return running_ext(line, false, out);
}

// ---------------------------------------------------------------------------
// The table: one entry per op
// ---------------------------------------------------------------------------

const Entry kReduce[] = {
    {CT_OP_SUM, reduce<r_sum>},
    {CT_OP_MEAN, reduce<r_mean>},
    {CT_OP_PROD, reduce<r_prod>},
    {CT_OP_MAX, reduce<r_max>},
    {CT_OP_MIN, reduce<r_min>},
    {CT_OP_ARGMAX, reduce<r_argmax>},
    {CT_OP_ARGMIN, reduce<r_argmin>},
    {CT_OP_ANY, reduce<r_any>},
    {CT_OP_ALL, reduce<r_all>},
    {CT_OP_NORM2, reduce<r_norm2>},
    {CT_OP_LOGSUMEXP, reduce<r_logsumexp>},
    {CT_OP_VAR, reduce<r_var>},
    {CT_OP_STD, reduce<r_std>},
    {CT_OP_SOFTMAX, along<l_softmax>},
    {CT_OP_LOG_SOFTMAX, along<l_log_softmax>},
    {CT_OP_CUMSUM, along<l_cumsum>},
    {CT_OP_CUMPROD, along<l_cumprod>},
    {CT_OP_NANSUM, reduce<r_nansum>},
    {CT_OP_NANMEAN, reduce<r_nanmean>},
    {CT_OP_COUNT_NONZERO, reduce<r_count_nonzero>},
    {CT_OP_LOGCUMSUMEXP, along<l_logcumsumexp>},
    {CT_OP_SOFTMIN, along<l_softmin>},
    {CT_OP_SORT, along<l_sort>},
    {CT_OP_ARGSORT, along<l_argsort>},
    {CT_OP_MEDIAN, reduce<r_median>},
    {CT_OP_NANMEDIAN, reduce<r_nanmedian>},
    {CT_OP_QUANTILE, reduce<r_quantile>},
    {CT_OP_NANQUANTILE, reduce<r_nanquantile>},
    {CT_OP_KTHVALUE, reduce<r_kthvalue>},
    {CT_OP_MODE, reduce<r_mode>},
    {CT_OP_CUMMAX, along<l_cummax>},
    {CT_OP_CUMMIN, along<l_cummin>},
};

}  // namespace

CTREF_TABLE(reduce_table, kReduce)

}  // namespace ctref
