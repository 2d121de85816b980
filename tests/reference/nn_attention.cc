// nn_attention.cc — scaled_dot_product_attention (category 3), in double:
// the scores, the softmax over the keys the mask and the causal rule leave,
// and the weighted sum of the values, per batch entry (batch dims broadcast).
#include "ref_internal.h"

namespace ctref {
namespace {

// The dense offset in `a` (shape as given) of out's batch entry `b` (batch
// shape `bs`), the last `tail` dims of `a` not being batch dims.
int64_t batch_base(const Array* a, const Shape& bs, int64_t b, size_t tail) {
  const size_t nd = a->shape.size(), nb = bs.size();
  std::vector<int64_t> coord(nb);
  for (size_t d = nb; d-- > 0;) {
    coord[d] = b % bs[d];
    b /= bs[d];
  }
  int64_t off = 0, stride = 1;
  for (size_t i = nd; i-- > 0;) {
    if (i + tail >= nd) {  // one of the last `tail` dims
      stride *= a->shape[i];
      continue;
    }
    const size_t d = nb - (nd - tail - i);  // the batch dim of out this dim aligns with
    off += (a->shape[i] == 1 ? 0 : coord[d]) * stride;
    stride *= a->shape[i];
  }
  return off;
}

// The element of a mask broadcast to (L, S) at row i, column j (its last two dims).
double mask_at(const Array* m, int64_t base, int64_t i, int64_t j) {
  const size_t nd = m->shape.size();
  const int64_t S = nd >= 1 ? m->shape[nd - 1] : 1, L = nd >= 2 ? m->shape[nd - 2] : 1;
  const int64_t k = base + (L == 1 ? 0 : i) * S + (S == 1 ? 0 : j);
  if (m->dtype.code == CT_BOOL) return m->i[(size_t)k] ? 0.0 : -kInf;
  return m->get(k);
}

bool ref_attention(const Call& c, const Outs& outs, std::string* why) {
  const CTAttentionDesc d = read_desc<CTAttentionDesc>(c.desc);
  const Array *q = arg_in(c, 0), *k = arg_in(c, 1), *v = arg_in(c, 2), *m = arg_in(c, 3);
  Array* o = arg_out(outs, 0);
  if (!need_array(q, "q", -1, why) || !need_array(k, "k", -1, why) || !need_array(v, "v", -1, why) ||
      !need_array(o, "out", -1, why))
    return false;
  const size_t nd = o->shape.size();
  if (nd < 2 || q->shape.size() < 2 || k->shape.size() < 2 || v->shape.size() < 2)
    return fail(why, "scaled_dot_product_attention: q, k, v and out need 2 dims");
  const int64_t L = q->shape[q->shape.size() - 2], E = q->shape.back(), S = k->shape[k->shape.size() - 2],
                Ev = v->shape.back();
  const Shape bs(o->shape.begin(), o->shape.end() - 2);
  const int64_t nb = prod(bs);
  const double scale = d.scale != 0 ? d.scale : E > 0 ? 1.0 / std::sqrt((double)E) : 1.0;
  prepare(o);
  std::vector<double> s((size_t)S);
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t qb = batch_base(q, bs, b, 2), kb = batch_base(k, bs, b, 2), vb = batch_base(v, bs, b, 2);
    const int64_t mb = m ? batch_base(m, bs, b, std::min<size_t>(2, m->shape.size())) : 0;
    for (int64_t i = 0; i < L; ++i) {
      int64_t end = S;
      if (d.causal == CT_CAUSAL_TOP_LEFT) end = std::min(S, i + 1);
      if (d.causal == CT_CAUSAL_BOTTOM_RIGHT) end = std::max<int64_t>(0, std::min(S, i + S - L + 1));
      double mx = -kInf;
      for (int64_t j = 0; j < end; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < E; ++e) dot += q->get(qb + i * E + e) * k->get(kb + j * E + e);
        s[(size_t)j] = dot * scale + (m ? mask_at(m, mb, i, j) : 0.0);
        if (!std::isnan(mx) && !(s[(size_t)j] <= mx)) mx = s[(size_t)j];  // a NaN stays the max
      }
      double sum = 0;
      if (mx != -kInf)
        for (int64_t j = 0; j < end; ++j) sum += (s[(size_t)j] = std::exp(s[(size_t)j] - mx));
      for (int64_t e = 0; e < Ev; ++e) {
        double acc = 0;
        if (mx != -kInf)
          for (int64_t j = 0; j < end; ++j) acc += s[(size_t)j] * v->get(vb + j * Ev + e);
        o->f[(size_t)((b * L + i) * Ev + e)] = mx == -kInf ? 0.0 : acc / sum;  // no key left: 0
      }
    }
  }
  return true;
}

const Entry kNnAttention[] = {
    {CT_OP_SCALED_DOT_PRODUCT_ATTENTION, ref_attention},
};

}  // namespace

CTREF_TABLE(nn_attention_table, kNnAttention)

}  // namespace ctref
