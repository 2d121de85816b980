// fuzz_nn.cc — fuzzes the NN ops (ctensor_nn.h): descriptors built field by
// field (struct_size, strides, pads, dilations, groups, kernels, epsilons,
// scales, flags), tensors shaped the way each op wants them and then bent,
// run through the named functions, the generic ct_nn pair, the workspace
// queries (and runs with less workspace than asked), plans
// (create/execute/destroy) and the plan cache's capacity.
#include "fuzz_common.h"

namespace {

using fuzz::Input;
using fuzz::Tensors;
using fuzz::Want;
using fuzz::guarded_array;
using fuzz::kMaxArgs;

// Each NN op's input shapes as letters: each capital is one extent drawn
// for the call (so tensors agree where the op needs it), 'g' is C / groups,
// 'b' the batch dims (0 to 2), 's' the spatial dims of a norm (0 to 3), 'z'
// the last k dims of the first input and 'f' the rest of them (k: a layer
// norm's normalized_ndim).
struct Row {
  int32_t op;
  const char* inputs[5];
};
const Row kRows[] = {
    {CT_OP_MATMUL, {"bMI", "bIO", "O"}},
    {CT_OP_CONV2D, {"NCHW", "KgRS", "K"}},
    {CT_OP_CONV2D_BACKWARD_DATA, {"NKPQ", "KgRS"}},
    {CT_OP_CONV2D_BACKWARD_WEIGHT, {"NCHW", "NKPQ"}},
    {CT_OP_MAX_POOL2D, {"NCHW"}},
    {CT_OP_MAX_POOL2D_BACKWARD, {"NCPQ", "NCPQ"}},
    {CT_OP_AVG_POOL2D, {"NCHW"}},
    {CT_OP_AVG_POOL2D_BACKWARD, {"NCPQ"}},
    {CT_OP_BATCH_NORM, {"NCs", "C", "C", "C", "C"}},
    {CT_OP_BATCH_NORM_TRAINING, {"NCs", "C", "C"}},
    {CT_OP_BATCH_NORM_BACKWARD, {"NCs", "NCs", "C", "C", "C"}},
    {CT_OP_LAYER_NORM, {"bNCs", "z", "z"}},
    {CT_OP_LAYER_NORM_BACKWARD, {"bNCs", "bNCs", "f", "f", "z"}},
    {CT_OP_SCALED_DOT_PRODUCT_ATTENTION, {"bLE", "bTE", "bTV", "bLT"}},
};

// A descriptor field: mostly small, sometimes anything.
int64_t knob(Input& in) { return in.one_in(8) ? in.i64() : in.below(4); }
int32_t knob32(Input& in) { return in.one_in(8) ? (int32_t)in.u32() : (int32_t)in.below(4); }

union Desc {
  CTMatmulDesc matmul;
  CTConv2dDesc conv;
  CTPool2dDesc pool;
  CTBatchNormDesc bn;
  CTLayerNormDesc ln;
  CTAttentionDesc attn;
};

// The op's descriptor, its fields drawn one by one; its size in *size.
Desc make_desc(Input& in, int32_t desc_type, int32_t channels, size_t* size) {
  Desc d;
  std::memset(&d, 0, sizeof d);
  switch (desc_type) {
    case CT_DESC_MATMUL:
      d.matmul.activation = (int32_t)in.below(8) - 1;
      *size = sizeof d.matmul;
      break;
    case CT_DESC_CONV2D:
      d.conv.groups = in.one_in(3) ? channels : knob32(in);
      for (int i = 0; i < 2; ++i) {
        d.conv.stride[i] = knob(in);
        d.conv.pad_begin[i] = knob(in);
        d.conv.pad_end[i] = knob(in);
        d.conv.dilation[i] = knob(in);
      }
      d.conv.activation = in.one_in(4) ? (int32_t)in.below(8) - 1 : 0;
      d.conv.reserved = in.one_in(16) ? (int32_t)in.u32() : 0;
      *size = sizeof d.conv;
      break;
    case CT_DESC_POOL2D:
      d.pool.count_include_pad = knob32(in);
      for (int i = 0; i < 2; ++i) {
        d.pool.kernel[i] = in.one_in(8) ? in.i64() : 1 + in.below(3);
        d.pool.stride[i] = knob(in);
        d.pool.pad_begin[i] = in.below(3) ? 0 : knob(in);
        d.pool.pad_end[i] = in.below(3) ? 0 : knob(in);
        d.pool.dilation[i] = knob(in);
      }
      *size = sizeof d.pool;
      break;
    case CT_DESC_BATCH_NORM:
      d.bn.reserved = in.one_in(16) ? (int32_t)in.u32() : 0;
      d.bn.epsilon = in.one_in(2) ? 1e-5 : in.f64();
      *size = sizeof d.bn;
      break;
    case CT_DESC_LAYER_NORM:
      d.ln.normalized_ndim = in.one_in(8) ? (int32_t)in.u32() : (int32_t)in.below(6) - 1;
      d.ln.epsilon = in.one_in(2) ? 1e-5 : in.f64();
      *size = sizeof d.ln;
      break;
    case CT_DESC_ATTENTION:
      d.attn.causal = in.one_in(2) ? 0 : (int32_t)in.below(5) - 1;
      d.attn.scale = in.one_in(2) ? 0.0 : in.f64();
      *size = sizeof d.attn;
      break;
    default: *size = 0; break;
  }
  return d;
}

// The extents of one call, and the first input's shape for 'z' and 'f'.
struct Dims {
  int64_t letter[26];
  int32_t nbatch, nspatial, k;
  int64_t batch[2], spatial[3];
  Want first;
};

// The shape a pattern gives, then bent now and then: an extent changed, a
// dim dropped or added, a batch dim made 1 (broadcasting).
Want shape_of(Input& in, const char* pattern, const Dims& dims) {
  Want w;
  auto push = [&](int64_t e) {
    if (w.ndim < CT_MAX_NDIM) w.shape[w.ndim++] = e;
  };
  for (const char* c = pattern; *c; ++c) {
    switch (*c) {
      case 'b':
        for (int32_t i = 0; i < dims.nbatch; ++i) push(in.one_in(4) ? 1 : dims.batch[i]);
        break;
      case 's':
        for (int32_t i = 0; i < dims.nspatial; ++i) push(dims.spatial[i]);
        break;
      case 'g': {
        const int64_t g = dims.letter['G' - 'A'];
        push(g > 0 ? dims.letter['C' - 'A'] / g : dims.letter['C' - 'A']);
        break;
      }
      case 'z':
      case 'f': {
        const int32_t split = dims.first.ndim - dims.k;
        for (int32_t i = 0; i < dims.first.ndim; ++i)
          if ((i >= split) == (*c == 'z')) push(dims.first.shape[i]);
        break;
      }
      default: push(dims.letter[*c - 'A']); break;
    }
  }
  switch (in.below(12)) {
    case 0:
      if (w.ndim) w.shape[in.below(w.ndim)] = in.one_in(2) ? in.below(6) : in.i64();
      break;
    case 1:
      if (w.ndim) --w.ndim;
      break;
    case 2: push(1 + in.below(3)); break;
    default: break;
  }
  return w;
}

// ct_<op>_workspace_size for an NN op by id, with its tensor arguments in order.
CTStatus named_query(int32_t op, const void* d, const CTensor* const* t, size_t* b, const char** fn) {
  switch (op) {
#define CT_FUZZ_Q(ID, name, D, ...) \
  case CT_OP_##ID:                  \
    *fn = "ct_" #name "_workspace_size"; \
    return ct_##name##_workspace_size(static_cast<const D*>(d), __VA_ARGS__, b);
    CT_FUZZ_Q(MATMUL, matmul, CTMatmulDesc, t[0], t[1], t[2], t[3])
    CT_FUZZ_Q(CONV2D, conv2d, CTConv2dDesc, t[0], t[1], t[2], t[3])
    CT_FUZZ_Q(CONV2D_BACKWARD_DATA, conv2d_backward_data, CTConv2dDesc, t[0], t[1], t[2])
    CT_FUZZ_Q(CONV2D_BACKWARD_WEIGHT, conv2d_backward_weight, CTConv2dDesc, t[0], t[1], t[2], t[3])
    CT_FUZZ_Q(MAX_POOL2D, max_pool2d, CTPool2dDesc, t[0], t[1], t[2])
    CT_FUZZ_Q(MAX_POOL2D_BACKWARD, max_pool2d_backward, CTPool2dDesc, t[0], t[1], t[2])
    CT_FUZZ_Q(AVG_POOL2D, avg_pool2d, CTPool2dDesc, t[0], t[1])
    CT_FUZZ_Q(AVG_POOL2D_BACKWARD, avg_pool2d_backward, CTPool2dDesc, t[0], t[1])
    CT_FUZZ_Q(BATCH_NORM, batch_norm, CTBatchNormDesc, t[0], t[1], t[2], t[3], t[4], t[5])
    CT_FUZZ_Q(BATCH_NORM_TRAINING, batch_norm_training, CTBatchNormDesc, t[0], t[1], t[2], t[3], t[4], t[5])
    CT_FUZZ_Q(BATCH_NORM_BACKWARD, batch_norm_backward, CTBatchNormDesc, t[0], t[1], t[2], t[3], t[4], t[5], t[6],
              t[7])
    CT_FUZZ_Q(LAYER_NORM, layer_norm, CTLayerNormDesc, t[0], t[1], t[2], t[3], t[4], t[5])
    CT_FUZZ_Q(LAYER_NORM_BACKWARD, layer_norm_backward, CTLayerNormDesc, t[0], t[1], t[2], t[3], t[4], t[5], t[6],
              t[7])
    CT_FUZZ_Q(SCALED_DOT_PRODUCT_ATTENTION, scaled_dot_product_attention, CTAttentionDesc, t[0], t[1], t[2], t[3],
              t[4])
#undef CT_FUZZ_Q
    default: fuzz::die("harness: no named workspace query for op %d", op);
  }
}

// ct_<op> for an NN op by id: inputs const, outputs not.
CTStatus named_run(int32_t op, const void* d, const CTensor* const* c, void* ws, size_t wsb, void* stream,
                   const char** fn) {
  CTensor* t[kMaxArgs];
  for (int i = 0; i < kMaxArgs; ++i) t[i] = const_cast<CTensor*>(c[i]);
  switch (op) {
#define CT_FUZZ_R(ID, name, D, ...) \
  case CT_OP_##ID:                  \
    *fn = "ct_" #name;              \
    return ct_##name(static_cast<const D*>(d), __VA_ARGS__, ws, wsb, stream);
    CT_FUZZ_R(MATMUL, matmul, CTMatmulDesc, t[0], t[1], t[2], t[3])
    CT_FUZZ_R(CONV2D, conv2d, CTConv2dDesc, t[0], t[1], t[2], t[3])
    CT_FUZZ_R(CONV2D_BACKWARD_DATA, conv2d_backward_data, CTConv2dDesc, t[0], t[1], t[2])
    CT_FUZZ_R(CONV2D_BACKWARD_WEIGHT, conv2d_backward_weight, CTConv2dDesc, t[0], t[1], t[2], t[3])
    CT_FUZZ_R(MAX_POOL2D, max_pool2d, CTPool2dDesc, t[0], t[1], t[2])
    CT_FUZZ_R(MAX_POOL2D_BACKWARD, max_pool2d_backward, CTPool2dDesc, t[0], t[1], t[2])
    CT_FUZZ_R(AVG_POOL2D, avg_pool2d, CTPool2dDesc, t[0], t[1])
    CT_FUZZ_R(AVG_POOL2D_BACKWARD, avg_pool2d_backward, CTPool2dDesc, t[0], t[1])
    CT_FUZZ_R(BATCH_NORM, batch_norm, CTBatchNormDesc, t[0], t[1], t[2], t[3], t[4], t[5])
    CT_FUZZ_R(BATCH_NORM_TRAINING, batch_norm_training, CTBatchNormDesc, t[0], t[1], t[2], t[3], t[4], t[5])
    CT_FUZZ_R(BATCH_NORM_BACKWARD, batch_norm_backward, CTBatchNormDesc, t[0], t[1], t[2], t[3], t[4], t[5], t[6],
              t[7])
    CT_FUZZ_R(LAYER_NORM, layer_norm, CTLayerNormDesc, t[0], t[1], t[2], t[3], t[4], t[5])
    CT_FUZZ_R(LAYER_NORM_BACKWARD, layer_norm_backward, CTLayerNormDesc, t[0], t[1], t[2], t[3], t[4], t[5], t[6],
              t[7])
    CT_FUZZ_R(SCALED_DOT_PRODUCT_ATTENTION, scaled_dot_product_attention, CTAttentionDesc, t[0], t[1], t[2], t[3],
              t[4])
#undef CT_FUZZ_R
    default: fuzz::die("harness: no named function for op %d", op);
  }
}

// The plan cache: a capacity change now and then (never a huge one, which
// would let the cache grow with the run), and its counters.
void plan_cache(Input& in) {
  static const int64_t kCapacities[] = {0, 1, 2, 16, 1024, -1, INT64_MIN};
  fuzz::check_status("ct_plan_cache_set_capacity", ct_plan_cache_set_capacity(kCapacities[in.below(7)]));
  CTPlanCacheInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  fuzz::check_status("ct_plan_cache_info", ct_plan_cache_info(&info));
  if (info.entries < 0 || info.entries > info.capacity) fuzz::die("plan cache: %lld entries, capacity %lld",
                                                                (long long)info.entries, (long long)info.capacity);
}

void run(Input& in) {
  const Row& row = kRows[in.below(sizeof kRows / sizeof kRows[0])];
  const int32_t op = row.op;
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (ct_op_info(op, &info) != CT_OK) fuzz::die("harness: no op %d", op);

  Dims dims;
  for (int64_t& e : dims.letter) e = in.one_in(16) ? 0 : 1 + in.below(5);
  dims.nbatch = in.below(3);
  dims.nspatial = in.below(4);
  for (int64_t& e : dims.batch) e = 1 + in.below(3);
  for (int64_t& e : dims.spatial) e = 1 + in.below(4);
  size_t desc_size = 0;
  const Desc desc = make_desc(in, info.desc_type, (int32_t)dims.letter['C' - 'A'], &desc_size);
  dims.letter['G' - 'A'] = info.desc_type == CT_DESC_CONV2D ? desc.conv.groups : 1;
  dims.k = info.desc_type == CT_DESC_LAYER_NORM ? (desc.ln.normalized_ndim > 0 ? desc.ln.normalized_ndim : 1) : 0;
  if (dims.k > CT_MAX_NDIM) dims.k = CT_MAX_NDIM;
  const void* dp = in.one_in(16) ? nullptr : fuzz::guarded_desc(in, &desc, desc_size);

  Tensors ts(in);
  const CTDataType data_dt = fuzz::pick_dtype(in, in.below(4) ? 1u << CT_DT_FLOAT32 : info.dtype_mask);
  const CTensor* args[kMaxArgs] = {};
  int idx[kMaxArgs];
  const int32_t nt = info.num_tensors, nin = info.num_inputs;
  for (int32_t i = 0; i < nt; ++i) idx[i] = -1;
  for (int32_t i = 0; i < nin; ++i) {
    if ((info.optional_mask >> i & 1u) && in.one_in(2)) continue;
    Want w = shape_of(in, row.inputs[i], dims);
    w.dtype = fuzz::role_dtype(in, info.tensor_roles[i], data_dt, info.kind);
    if (i == 0) dims.first = w;
    args[i] = ts.make(w);
    idx[i] = ts.count() - 1;
  }

  // Outputs: mostly the shapes the shape query gives.
  CTOpArgs oa;
  std::memset(&oa, 0, sizeof oa);
  oa.struct_size = sizeof oa;
  oa.desc = dp;
  if (in.one_in(4)) {
    oa.extent[0] = in.one_in(4) ? in.i64() : in.below(8);
    oa.extent[1] = in.one_in(4) ? in.i64() : in.below(8);
  }
  CTOutputInfo outs[kMaxArgs];
  const CTStatus qs = ct_op_output_info(op, &oa, args, nin, outs, nt - nin);
  fuzz::check_status("ct_op_output_info", qs);
  uint32_t written = 0;
  for (int32_t i = nin; i < nt; ++i) {
    if ((info.optional_mask >> i & 1u) && in.one_in(2)) continue;
    if (in.one_in(16) && idx[0] >= 0) {
      args[i] = ts.alias(idx[0]);
    } else {
      Want w;
      if (qs == CT_OK && !in.one_in(8)) {
        w.ndim = outs[i - nin].ndim;
        std::memcpy(w.shape, outs[i - nin].shape, sizeof w.shape);
        w.dtype = outs[i - nin].dtype;
      } else {
        w = shape_of(in, row.inputs[0], dims);
        w.dtype = fuzz::role_dtype(in, info.tensor_roles[i], data_dt, info.kind);
      }
      args[i] = ts.make(w);
    }
    idx[i] = ts.count() - 1;
    written |= 1u << idx[i];
  }
  ts.snapshot();
  void* stream = fuzz::pick_stream(in);
  const CTensor* const* tp = guarded_array(in, args, nt);

  const char* fn = "";
  size_t asked = 0, wsb = 0;
  CTStatus s;
  void* ws;
  switch (in.below(4)) {
    case 0: {  // the generic pair
      const int32_t n = in.one_in(16) ? (int32_t)in.below(kMaxArgs + 2) - 1 : nt;
      const CTensor* const* gp = guarded_array(in, args, fuzz::room(nt, n, kMaxArgs));
      s = ct_nn_workspace_size(op, dp, gp, n, &asked);
      ts.check("ct_nn_workspace_size", s, 0);
      fuzz::workspace(in, s, asked, &ws, &wsb);
      ts.check("ct_nn", ct_nn(op, dp, gp, n, ws, wsb, stream), written);
      break;
    }
    case 1: {  // a plan, executed once or twice, maybe on other tensors
      CTPlan* plan = nullptr;
      s = ct_plan_create(op, dp, tp, nt, stream, &plan);
      ts.check("ct_plan_create", s, 0);
      if (s != CT_OK) {
        if (plan) fuzz::die("ct_plan_create failed but set its plan");
        break;
      }
      ts.check("ct_plan_workspace_size", ct_plan_workspace_size(plan, &asked), 0);
      for (int rep = 1 + in.below(2); rep > 0; --rep) {
        fuzz::workspace(in, CT_OK, asked, &ws, &wsb);
        ts.check("ct_plan_execute", ct_plan_execute(plan, tp, nt, ws, wsb, fuzz::pick_stream(in)), written);
      }
      ct_plan_destroy(plan);
      break;
    }
    default: {  // the named functions
      size_t* bp = in.one_in(16) ? nullptr : guarded_array(in, &asked, 1);
      s = named_query(op, dp, args, bp, &fn);
      ts.check(fn, s, 0);
      fuzz::workspace(in, s, bp ? *bp : 0, &ws, &wsb);
      s = named_run(op, dp, args, ws, wsb, stream, &fn);
      ts.check(fn, s, written);
      break;
    }
  }
  if (in.one_in(32)) plan_cache(in);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::init_environment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  fuzz::Pool::get().reset();
  run(in);
  return 0;
}
