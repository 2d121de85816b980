// nn_geometry.cc — a pooling or norm call as the kernels of nn_kernels.cc
// run it (nn_geometry.h), for both GPU modules; an attention call too.
#include "nn_geometry.h"

#include <ctensor/ctensor_nn.h>

#include <cmath>
#include <cstring>
#include <initializer_list>

#include "plan.h"

namespace ctgpu {

void pool_call(const CTNNCall* call, PoolCall* p) {
  *p = PoolCall();
  p->fwd = call->op == CT_OP_MAX_POOL2D || call->op == CT_OP_AVG_POOL2D;
  p->is_max = call->op == CT_OP_MAX_POOL2D || call->op == CT_OP_MAX_POOL2D_BACKWARD;
  p->kernel = p->fwd ? "pool_fwd" : "pool_bwd";
  const CTensor* const* t = call->t;
  switch (call->op) {  // x-side and y-side tensors, and the indices
    case CT_OP_MAX_POOL2D: p->x = t[0], p->y = t[1], p->ind = t[2]; break;
    case CT_OP_AVG_POOL2D: p->x = t[0], p->y = t[1]; break;
    case CT_OP_MAX_POOL2D_BACKWARD: p->y = t[0], p->ind = t[1], p->x = t[2]; break;
    default: p->y = t[0], p->x = t[1]; break;  // avg_pool2d_backward: dy, dx
  }
  const CTPool2dDesc* desc = static_cast<const CTPool2dDesc*>(call->desc);
  PGeo& g = p->g;
  std::memset(&g, 0, sizeof g);
  g.N = p->x->shape[0], g.C = p->x->shape[1], g.H = p->x->shape[2], g.W = p->x->shape[3];
  g.P = p->y->shape[2], g.Q = p->y->shape[3];
  g.kh = desc->kernel[0], g.kw = desc->kernel[1];
  g.sh = desc->stride[0], g.sw = desc->stride[1];
  g.ph = desc->pad_begin[0], g.pw = desc->pad_begin[1];
  g.dh = desc->dilation[0] > 0 ? desc->dilation[0] : 1, g.dw = desc->dilation[1] > 0 ? desc->dilation[1] : 1;
  g.cip = desc->count_include_pad != 0;
  g.has_ind = p->ind != nullptr;
  for (int i = 0; i < 4; ++i) {
    g.xs[i] = stride_of(p->x, i);
    g.ys[i] = stride_of(p->y, i);
    g.is[i] = p->ind ? stride_of(p->ind, i) : 0;
  }
  p->items = p->fwd ? numel_of(p->y) : numel_of(p->x);
  if (p->items > 0 && call->op == CT_OP_MAX_POOL2D_BACKWARD) p->check_items = numel_of(p->y);
}

namespace {

void set_data(NG* g, int slot, const CTensor* t) {
  for (int32_t d = 0; d < t->ndim; ++d) g->st[slot][d] = stride_of(t, d);
}

// Vector slot k <- t (NULL: absent).
void set_slot(NormCall* n, int k, const CTensor* t, bool out) {
  NormSlot& s = n->slot[k];
  s = NormSlot();
  s.used = true;
  s.t = t;
  s.out = out;
  s.copy = t && t->ndim > 1 && !ct_is_compact(t);
}

// Vector slot k <- floats [i * C, i * C + C) of the scratch buffer (an output).
void set_scratch(NormCall* n, int k, int i) {
  NormSlot& s = n->slot[k];
  s = NormSlot();
  s.used = true;
  s.out = true;
  s.scratch = i;
}

void add_launch(NormCall* n, const char* name, int64_t items, std::initializer_list<int> data,
                std::initializer_list<int> slots, int32_t flags) {
  NormLaunch& l = n->launch[n->nlaunch++];
  l = NormLaunch();
  l.name = name;
  l.items = items;
  for (int i : data) l.data[l.ndata++] = i;
  for (int k : slots) l.slots[l.nslots++] = k;
  l.flags = flags;
}

}  // namespace

void norm_call(const CTNNCall* call, NormCall* n) {
  *n = NormCall();
  const CTensor* const* t = call->t;
  const CTensor* x = t[0];
  NG& g = n->g;
  std::memset(&g, 0, sizeof g);
  g.nd = x->ndim;
  for (int32_t i = 0; i < x->ndim; ++i) g.shape[i] = x->shape[i];
  const bool bn = call->op == CT_OP_BATCH_NORM || call->op == CT_OP_BATCH_NORM_TRAINING ||
                  call->op == CT_OP_BATCH_NORM_BACKWARD;
  if (bn) {
    const CTBatchNormDesc* desc = static_cast<const CTBatchNormDesc*>(call->desc);
    g.eps = (float)desc->epsilon;
    g.C = x->shape[1];
    g.inner = 1;
    for (int32_t i = 2; i < x->ndim; ++i) g.inner *= x->shape[i];
    g.M = g.C ? numel_of(x) / g.C : 0;
  } else {
    const CTLayerNormDesc* desc = static_cast<const CTLayerNormDesc*>(call->desc);
    g.eps = (float)desc->epsilon;
    const int32_t k = desc->normalized_ndim > 0 ? desc->normalized_ndim : 1;
    g.D = 1;
    g.R = 1;
    for (int32_t i = 0; i < x->ndim; ++i) (i >= x->ndim - k ? g.D : g.R) *= x->shape[i];
  }
  set_data(&g, 0, x);
  switch (call->op) {
    case CT_OP_BATCH_NORM:  // x, mean, var, scale?, shift? | y
      set_slot(n, 0, t[1], false);
      set_slot(n, 1, t[2], false);
      set_slot(n, 2, t[3], false);
      set_slot(n, 3, t[4], false);
      set_data(&g, 1, t[5]);
      add_launch(n, "bn_apply", g.C * g.M, {0, 5}, {0, 1, 2, 3}, (t[3] ? 1 : 0) | (t[4] ? 2 : 0) | 16);
      break;
    case CT_OP_BATCH_NORM_TRAINING: {  // x, scale?, shift? | y, mean, invstd
      set_slot(n, 0, t[4], true);
      set_slot(n, 1, t[5], true);
      set_slot(n, 2, t[1], false);
      set_slot(n, 3, t[2], false);
      set_data(&g, 1, t[3]);
      const int32_t flags = (t[1] ? 1 : 0) | (t[2] ? 2 : 0);
      add_launch(n, "bn_stats", g.C, {0}, {0, 1}, flags);
      add_launch(n, "bn_apply", g.C * g.M, {0, 3}, {0, 1, 2, 3}, flags);
      break;
    }
    case CT_OP_BATCH_NORM_BACKWARD: {  // x, dy, mean, invstd, scale? | dx, dscale?, dshift?
      // slot 2: dshift (or scratch 0), 3: dscale (or scratch 1): the sums dx needs
      set_slot(n, 0, t[2], false);
      set_slot(n, 1, t[3], false);
      if (t[7]) set_slot(n, 2, t[7], true);
      else set_scratch(n, 2, 0);
      if (t[6]) set_slot(n, 3, t[6], true);
      else set_scratch(n, 3, 1);
      set_slot(n, 4, t[4], false);
      if (!t[6] || !t[7]) n->scratch_floats = 2 * (g.C ? g.C : 1);
      set_data(&g, 1, t[1]);
      set_data(&g, 2, t[5]);
      const int32_t flags = t[4] ? 1 : 0;
      add_launch(n, "bn_bwd_stats", g.C, {0, 1}, {0, 1, 2, 3}, flags);
      add_launch(n, "bn_bwd_dx", g.C * g.M, {0, 1, 5}, {0, 1, 2, 3, 4}, flags);
      break;
    }
    case CT_OP_LAYER_NORM:  // x, scale?, shift? | y, mean?, rstd?
      set_slot(n, 0, t[1], false);
      set_slot(n, 1, t[2], false);
      set_slot(n, 2, t[4], true);
      set_slot(n, 3, t[5], true);
      set_data(&g, 1, t[3]);
      add_launch(n, "ln_fwd", g.R, {0, 3}, {0, 1, 2, 3},
                 (t[1] ? 1 : 0) | (t[2] ? 2 : 0) | (t[4] ? 4 : 0) | (t[5] ? 8 : 0));
      break;
    default:  // layer_norm_backward: x, dy, mean, rstd, scale? | dx, dscale?, dshift?
      set_slot(n, 0, t[2], false);
      set_slot(n, 1, t[3], false);
      set_slot(n, 2, t[4], false);
      set_slot(n, 3, t[6], true);
      set_slot(n, 4, t[7], true);
      set_data(&g, 1, t[1]);
      set_data(&g, 2, t[5]);
      add_launch(n, "ln_bwd_dx", g.R, {0, 1, 5}, {0, 1, 2}, t[4] ? 1 : 0);
      if (t[6] || t[7]) add_launch(n, "ln_bwd_params", g.D, {0, 1}, {0, 1, 3, 4}, (t[6] ? 4 : 0) | (t[7] ? 8 : 0));
      break;
  }
  // The vector slots' element strides: a 1-d tensor's own, else 1 (0-d, compact, a copy, scratch, absent).
  for (int k = 0; k < 8; ++k) {
    const NormSlot& s = n->slot[k];
    g.vs[k] = s.t && s.t->ndim == 1 && !s.copy ? stride_of(s.t, 0) : 1;
  }
}

void attention_call(const CTNNCall* call, AttnCall* a) {
  *a = AttnCall();
  const CTensor* const* t = call->t;  // q, k, v, mask?, out
  a->q = t[0], a->k = t[1], a->v = t[2], a->mask = t[3], a->out = t[4];
  const CTAttentionDesc* desc = static_cast<const CTAttentionDesc*>(call->desc);
  AttnGeo& g = a->g;
  std::memset(&g, 0, sizeof g);
  const CTensor* out = a->out;
  g.nb = out->ndim - 2;
  g.B = 1;
  for (int32_t d = 0; d < g.nb; ++d) g.B *= (g.bs[d] = out->shape[d]);
  g.L = out->shape[g.nb];
  g.Ev = out->shape[g.nb + 1];
  g.S = a->k->shape[a->k->ndim - 2];
  g.E = a->k->shape[a->k->ndim - 1];
  // Strides on out's dims, the tensor right-aligned to them (a missing or size-1 dim: 0).
  const CTensor* ts[5] = {a->q, a->k, a->v, a->mask, out};
  for (int i = 0; i < 5; ++i) {
    if (!ts[i]) continue;
    for (int32_t d = 0; d < out->ndim; ++d) {
      const int32_t td = d - (out->ndim - ts[i]->ndim);
      g.st[i][d] = td < 0 || ts[i]->shape[td] == 1 ? 0 : stride_of(ts[i], td);
    }
  }
  g.causal = desc ? desc->causal : 0;
  g.scale = (float)(desc && desc->scale != 0 ? desc->scale : g.E > 0 ? 1.0 / std::sqrt((double)g.E) : 1.0);
  if (a->mask) {
    const int32_t mdt = ct_dtype_index(a->mask->dtype);
    g.mkind = mdt == CT_DT_BOOL ? 1 : mdt == CT_DT_FLOAT32 ? 3 : 2;  // validated: bool, float32 or the data dtype
  }
  a->items = g.B * g.L * ((g.Ev + 31) / 32);
}

}  // namespace ctgpu
