// index.cc — references of the index kind (ct_index): take, gather, scatter,
// scatter_add, index_add, written from their definitions with row-major
// coordinates (no views, no lowering: the library's lowering is what they
// check). Float adds are exact (double) but for the narrow floats, whose
// partial sums round to the dtype after each add; integers wrap.
#include "ref_internal.h"

namespace ctref {
namespace {

// Row-major coordinates of flat position k in shape s (a 0-d shape is [1]).
std::vector<int64_t> coords(const Shape& s, int64_t k) {
  std::vector<int64_t> p(s.empty() ? 1 : s.size(), 0);
  for (size_t d = s.size(); d-- > 0;) {
    p[d] = k % s[d];
    k /= s[d];
  }
  return p;
}
int64_t flat(const Shape& s, const std::vector<int64_t>& p) {
  int64_t k = 0;
  for (size_t d = 0; d < s.size(); ++d) k = k * s[d] + p[d];
  return k;
}
Shape as1(const Shape& s) { return s.empty() ? Shape{1} : s; }

bool wrap_index(const Call& c, int64_t i, int64_t n, int64_t* out, std::string* why) {
  if (i < -n || i >= n)
    return fail(why, name_of(c) + ": index " + std::to_string(i) + " outside [-" + std::to_string(n) + ", " +
                         std::to_string(n) + ")");
  *out = i < 0 ? i + n : i;
  return true;
}

// One add of the scatters: exact, except that the 16- and 8-bit floats round
// every partial sum to their dtype (the rule: "round once per add").
V add(const V& a, const V& b, double alpha, CTDataType d) {
  if (a.fl) return vf(d.bits < 32 ? round_to(a.f + alpha * b.f, d) : a.f + alpha * b.f);
  return vi(wrap((uint64_t)a.i + (uint64_t)((int64_t)alpha * (uint64_t)b.i), d));
}

bool r_index(const Call& c, const Outs& o, std::string* why) {
  const bool scatter = c.op != CT_OP_TAKE && c.op != CT_OP_GATHER;
  if (!need_inputs(c, scatter ? 3 : 2, why) || !need_output(c, o, why)) return false;
  const Array& x = *c.inputs[0];
  const Array& ix = *c.inputs[1];
  Array& out = *o[0];
  const Shape xs = as1(x.shape);
  const int r = (int)xs.size();
  const int ax = c.axis < 0 ? c.axis + r : c.axis;
  if (ax < 0 || ax >= r) return fail(why, name_of(c) + ": axis " + std::to_string(c.axis) + " out of range");
  const int64_t n = xs[(size_t)ax];
  if (c.op == CT_OP_TAKE) {  // out[a..., i..., b...] = x[a..., index[i...], b...]
    const Shape os = as1(out.shape);
    const size_t ni = ix.shape.size();
    for (int64_t k = 0; k < out.numel(); ++k) {
      std::vector<int64_t> p = out.shape.empty() ? std::vector<int64_t>{} : coords(out.shape, k), q;
      std::vector<int64_t> ip(p.begin() + ax, p.begin() + ax + (ptrdiff_t)ni);
      int64_t j = 0;
      if (!wrap_index(c, ix.i[(size_t)flat(ix.shape, ip)], n, &j, why)) return false;
      for (int d = 0; d < ax; ++d) q.push_back(p[(size_t)d]);
      q.push_back(j);
      for (size_t d = (size_t)ax + ni; d < p.size(); ++d) q.push_back(p[d]);
      store(out, k, load(x, x.shape.empty() ? 0 : flat(x.shape, q)));
    }
    (void)os;
    return true;
  }
  if (c.op == CT_OP_GATHER) {  // out[p] = x[p with p[axis] = index[p]]
    const Shape is1 = as1(ix.shape);
    for (int64_t k = 0; k < out.numel(); ++k) {
      std::vector<int64_t> p = coords(is1, k);
      int64_t j = 0;
      if (!wrap_index(c, ix.i[(size_t)k], n, &j, why)) return false;
      p[(size_t)ax] = j;
      store(out, k, load(x, flat(xs, p)));
    }
    return true;
  }
  // the scatters: out = x, then the updates in order along the axis
  const Array& src = *c.inputs[2];
  for (int64_t k = 0; k < x.numel(); ++k) store(out, k, load(x, k));
  const double alpha = c.op == CT_OP_INDEX_ADD && !c.params.empty() ? c.params[0] : 1.0;
  const Shape ss = as1(src.shape);
  if (c.op == CT_OP_INDEX_ADD) {  // out.select(ax, index[i]) += alpha * src.select(ax, i)
    for (int64_t k = 0; k < src.numel(); ++k) {
      std::vector<int64_t> p = coords(ss, k);
      int64_t j = 0;
      if (!wrap_index(c, ix.i[(size_t)p[(size_t)ax]], n, &j, why)) return false;
      p[(size_t)ax] = j;
      const int64_t t = flat(xs, p);
      store(out, t, add(load(out, t), load(src, k), alpha, out.dtype));
    }
    return true;
  }
  // scatter / scatter_add over index's positions; for one target, later positions along the axis come later
  const Shape is1 = as1(ix.shape);
  std::vector<int64_t> order((size_t)ix.numel());
  for (int64_t k = 0; k < ix.numel(); ++k) order[(size_t)k] = k;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return coords(is1, a)[(size_t)ax] < coords(is1, b)[(size_t)ax];
  });
  for (int64_t k : order) {
    std::vector<int64_t> p = coords(is1, k);
    const int64_t sk = flat(ss, p);
    int64_t j = 0;
    if (!wrap_index(c, ix.i[(size_t)k], n, &j, why)) return false;
    p[(size_t)ax] = j;
    const int64_t t = flat(xs, p);
    store(out, t, c.op == CT_OP_SCATTER ? load(src, sk) : add(load(out, t), load(src, sk), 1.0, out.dtype));
  }
  return true;
}

const Entry kIndex[] = {
    {CT_OP_TAKE, r_index},        {CT_OP_GATHER, r_index},    {CT_OP_SCATTER, r_index},
    {CT_OP_SCATTER_ADD, r_index}, {CT_OP_INDEX_ADD, r_index},
};

}  // namespace

CTREF_TABLE(index_table, kIndex)

}  // namespace ctref
