// nn_geometry.h — the host side of the NN kernels of nn_kernels.h (pooling,
// batch norm, layer norm, attention), the same for both GPU modules: from a call, the
// kernels' geometry structs and which tensor each kernel argument is, which
// kernels run in which order over how many work-items. A module only binds
// its buffers (cl_mem or device addresses), its temporaries and its error
// flag, and launches.
#ifndef CTENSOR_SRC_GPU_NN_GEOMETRY_H_
#define CTENSOR_SRC_GPU_NN_GEOMETRY_H_

#include <ctensor/plugin.h>

#include <cstdint>

namespace ctgpu {

inline bool is_norm(int32_t op) {
  return op == CT_OP_BATCH_NORM || op == CT_OP_BATCH_NORM_TRAINING || op == CT_OP_BATCH_NORM_BACKWARD ||
         op == CT_OP_LAYER_NORM || op == CT_OP_LAYER_NORM_BACKWARD;
}
inline bool is_attention(int32_t op) { return op == CT_OP_SCALED_DOT_PRODUCT_ATTENTION; }
inline bool is_pool(int32_t op) {
  return op == CT_OP_MAX_POOL2D || op == CT_OP_MAX_POOL2D_BACKWARD || op == CT_OP_AVG_POOL2D ||
         op == CT_OP_AVG_POOL2D_BACKWARD;
}

// ---- pooling ----------------------------------------------------------------------

// Host mirror of pool_kernels()' PGeo (same layout).
struct PGeo {
  int64_t N, C, H, W, P, Q, kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t xs[4], ys[4], is[4];  // element strides: the x side (x, dx), the y side (y, dy), the indices (0: absent)
  int32_t cip, has_ind;
};

// A pooling call as the kernels run it. Arguments, each buffer followed by
// its byte offset (ulong):
//   pool_fwd(y, ind, x, is_max, g)   pool_bwd(x, y, ind, is_max, g)   (x: dx, y: dy backward)
//   pool_ind_check(ind, g, flag, code)
// An absent ind is any buffer (y's) at offset 0: the kernels do not touch it.
struct PoolCall {
  const CTensor* x = nullptr;    // x (forward) or dx (backward)
  const CTensor* y = nullptr;    // y (forward) or dy (backward)
  const CTensor* ind = nullptr;  // the indices, NULL when absent
  bool fwd = false;
  int32_t is_max = 0;            // the kernels' int is_max
  const char* kernel = "";       // "pool_fwd" or "pool_bwd"
  int64_t items = 0;             // its work-items: y's elements (forward), dx's (backward); 0: nothing to run
  // max_pool2d_backward with outputs to compute and indices to check: the
  // work-items of pool_ind_check, run before pool_bwd; else 0.
  int64_t check_items = 0;
  PGeo g;
};
void pool_call(const CTNNCall* call, PoolCall* p);

// ---- batch norm and layer norm ----------------------------------------------------

// Host mirror of norm_kernels()' NG (same layout).
struct NG {
  int64_t shape[8];
  int64_t st[4][8];                // element strides of the data tensors, by data slot (the kernels' ng_off)
  int64_t C, inner, M, R, D;       // batch norm: channels, elements per (n, c), per channel; layer norm: rows, row length
  int64_t vs[8];                   // element strides of the vector tensors, by vector slot
  int32_t nd, flags;
  float eps;
  int32_t pad;
};

// A per-channel, per-row or per-column tensor as a kernel takes it (a
// "vector slot"): its buffer and byte offset, element stride NG.vs[k].
struct NormSlot {
  bool used = false;           // some kernel of the call takes this slot
  const CTensor* t = nullptr;  // the tensor; NULL: absent (any buffer: the kernels do not touch it) or scratch
  bool out = false;            // the kernels write it
  // Multi-dim and not compact: the kernels take a compact float32 buffer of
  // numel_of(t) elements instead (NG.vs 1), copied from t before the
  // kernels (inputs) or to t after them (outputs).
  bool copy = false;
  // >= 0 (t NULL): the kernels' own output, floats [scratch * C, scratch * C + C)
  // of the call's scratch buffer (NormCall::scratch_floats), NG.vs 1.
  int scratch = -1;
};

// One kernel of a norm call: its arguments are the data tensors call->t[data[i]]
// (buffer, byte offset), then the vector slots slot[slots[i]] (buffer, byte
// offset), then NG with flags set to `flags`.
struct NormLaunch {
  const char* name = "";
  int64_t items = 0;  // work-items; 0: nothing to run
  int ndata = 0;
  int data[3] = {0, 0, 0};
  int nslots = 0;
  int slots[5] = {0, 0, 0, 0, 0};
  int32_t flags = 0;
};

struct NormCall {
  NG g;                          // NG.flags: the launch's
  NormSlot slot[8];
  int nlaunch = 0;
  NormLaunch launch[2];          // in order (a later one reads what an earlier one wrote: same stream/queue)
  int64_t scratch_floats = 0;    // floats of the scratch buffer the slots with scratch >= 0 share; 0: none
};
void norm_call(const CTNNCall* call, NormCall* n);

// ---- scaled_dot_product_attention ------------------------------------------------

// Host mirror of attention_kernels()' AttnGeo (same layout).
struct AttnGeo {
  int64_t bs[14];     // out's batch dims
  int64_t st[5][16];  // element strides of q, k, v, mask, out on out's batch dims, then their own last two (0: broadcast)
  int64_t B, L, S, E, Ev;
  int32_t nb, causal, mkind;  // mkind: 0 no mask, 1 bool, 2 the data dtype, 3 float32
  float scale;
};

// An attention call as attn_fwd runs it. Arguments, each buffer followed by
// its byte offset (ulong): attn_fwd(out, q, k, v, mask, g); an absent mask
// is any buffer (q's) at offset 0: the kernel does not touch it.
struct AttnCall {
  const CTensor *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr, *out = nullptr;
  int64_t items = 0;  // work-items; 0: nothing to run
  AttnGeo g;
};
void attention_call(const CTNNCall* call, AttnCall* a);

}  // namespace ctgpu

#endif  // CTENSOR_SRC_GPU_NN_GEOMETRY_H_
