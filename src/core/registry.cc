// registry.cc — the op table (names from ctensor.h's X-macro, semantics here)
// and the ct_op_* entry points.
#include "core/registry.h"

#include <cstdio>
#include <cstring>

#include "core/dispatch.h"
#include "core/error.h"

namespace ct {
namespace {

constexpr uint32_t B = kMaskBool, I = kMaskInt, F = kMaskFloat;
constexpr const char* kFloatOnly = "float dtypes only, as in NumPy";
constexpr const char* kNumeric = "integer and float dtypes, not bool";
constexpr const char* kAny = "every dtype";
constexpr const char* kIntBool = "integer and bool dtypes, as in NumPy";
constexpr const char* kIntOnly = "integer dtypes only, as in NumPy";
constexpr const char* kIntFloat = "integer and float dtypes, not bool (cast bool first)";
constexpr uint32_t N = (1u << CT_DT_FLOAT32) | (1u << CT_DT_BFLOAT16) | (1u << CT_DT_FLOAT16);
constexpr const char* kNNFloat = "float32, and bfloat16/float16 where the backend runs them";

struct Semantics {
  uint32_t dtypes;
  const char* rule;
  int32_t output;
  const char* param_names;
};

// One line per op, in the order of CT_ELEMENTWISE_OPS (checked below).
constexpr Semantics kSemantics[] = {
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // neg
    {B | I | F, kAny, CT_OUTPUT_SAME, ""},    // abs
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // sign
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // exp
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // expm1
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // exp2
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // log
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // log1p
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // log2
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // sqrt
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // rsqrt
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // reciprocal
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // square
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // sin
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // cos
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // tan
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // tanh
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // sigmoid
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // relu
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // gelu
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // gelu_tanh
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // silu
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // softplus
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // erf
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // floor
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // ceil
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // round
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // trunc
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // logical_not
    {B | I, kIntBool, CT_OUTPUT_SAME, ""},            // bitwise_not
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // isnan
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // isinf
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // isfinite
    {F, kFloatOnly, CT_OUTPUT_SAME, "alpha"},         // leaky_relu
    {F, kFloatOnly, CT_OUTPUT_SAME, "alpha"},         // elu
    {I | F, kNumeric, CT_OUTPUT_SAME, "lo,hi"},       // clamp
    {F, kFloatOnly, CT_OUTPUT_SAME, "p"},             // pow_scalar
    {I | F, kNumeric, CT_OUTPUT_SAME, "s"},           // add_scalar
    {I | F, kNumeric, CT_OUTPUT_SAME, "s"},           // mul_scalar
    {B | I | F, kAny, CT_OUTPUT_SAME, ""},            // where (dtype of a and b)
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // fma
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // lerp
    {B | I | F, kAny, CT_OUTPUT_ANY, ""},             // cast (source dtype)
    // ---- category 2, in the order of CT_BROADCAST_REDUCE_OPS
    {B | I | F, kAny, CT_OUTPUT_SAME, ""},            // add
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // sub
    {B | I | F, kAny, CT_OUTPUT_SAME, ""},            // mul
    {B | I | F, kAny, CT_OUTPUT_FLOAT, ""},           // div
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // floor_div
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // mod
    {I | F, kNumeric, CT_OUTPUT_SAME, ""},            // pow
    {B | I | F, kAny, CT_OUTPUT_SAME, ""},            // maximum
    {B | I | F, kAny, CT_OUTPUT_SAME, ""},            // minimum
    {B | I | F, kAny, CT_OUTPUT_SAME, ""},            // fmax
    {B | I | F, kAny, CT_OUTPUT_SAME, ""},            // fmin
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // atan2
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // hypot
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // copysign
    {B | I, kIntBool, CT_OUTPUT_SAME, ""},            // bitwise_and
    {B | I, kIntBool, CT_OUTPUT_SAME, ""},            // bitwise_or
    {B | I, kIntBool, CT_OUTPUT_SAME, ""},            // bitwise_xor
    {I, kIntOnly, CT_OUTPUT_SAME, ""},                // left_shift
    {I, kIntOnly, CT_OUTPUT_SAME, ""},                // right_shift
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // logical_and
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // logical_or
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // logical_xor
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // equal
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // not_equal
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // less
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // less_equal
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // greater
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // greater_equal
    {B | I | F, kAny, CT_OUTPUT_ACCUM, ""},           // sum
    {B | I | F, kAny, CT_OUTPUT_FLOAT, ""},           // mean
    {B | I | F, kAny, CT_OUTPUT_ACCUM, ""},           // prod
    {B | I | F, kAny, CT_OUTPUT_SAME, ""},            // max
    {B | I | F, kAny, CT_OUTPUT_SAME, ""},            // min
    {B | I | F, kAny, CT_OUTPUT_INT64, ""},           // argmax
    {B | I | F, kAny, CT_OUTPUT_INT64, ""},           // argmin
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // any
    {B | I | F, kAny, CT_OUTPUT_BOOL, ""},            // all
    {I | F, kIntFloat, CT_OUTPUT_FLOAT, ""},          // norm2
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // logsumexp
    {I | F, kIntFloat, CT_OUTPUT_FLOAT, "correction"},  // var
    {I | F, kIntFloat, CT_OUTPUT_FLOAT, "correction"},  // std
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // softmax
    {F, kFloatOnly, CT_OUTPUT_SAME, ""},              // log_softmax
    {B | I | F, kAny, CT_OUTPUT_ACCUM, ""},           // cumsum
    {B | I | F, kAny, CT_OUTPUT_ACCUM, ""},           // cumprod
    // ---- category 3, in the order of CT_NN_OPS (the backend narrows the dtypes)
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // matmul
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // conv2d
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // conv2d_backward_data
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // conv2d_backward_weight
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // max_pool2d
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // max_pool2d_backward
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // avg_pool2d
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // avg_pool2d_backward
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // batch_norm
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // batch_norm_training
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // batch_norm_backward
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // layer_norm
    {N, kNNFloat, CT_OUTPUT_NN, ""},                  // layer_norm_backward
};

// The tensor arguments of each NN entry point, in order ("?" = may be NULL),
// and how many of them are inputs.
struct NNTensors {
  const char* names;
  int32_t count, inputs;
};
constexpr NNTensors kNNTensors[] = {
    {"a,b,bias?,out", 4, 3},                                      // matmul
    {"x,w,bias?,y", 4, 3},                                        // conv2d
    {"dy,w,dx", 3, 2},                                            // conv2d_backward_data
    {"x,dy,dw,dbias?", 4, 2},                                     // conv2d_backward_weight
    {"x,y,indices?", 3, 1},                                       // max_pool2d
    {"dy,indices,dx", 3, 2},                                      // max_pool2d_backward
    {"x,y", 2, 1},                                                // avg_pool2d
    {"dy,dx", 2, 1},                                              // avg_pool2d_backward
    {"x,mean,var,scale?,shift?,y", 6, 5},                         // batch_norm
    {"x,scale?,shift?,y,mean,invstd", 6, 3},                      // batch_norm_training
    {"x,dy,mean,invstd,scale?,dx,dscale?,dshift?", 8, 5},         // batch_norm_backward
    {"x,scale?,shift?,y,mean?,rstd?", 6, 3},                      // layer_norm
    {"x,dy,mean,rstd,scale?,dx,dscale?,dshift?", 8, 5},           // layer_norm_backward
};
static_assert(sizeof kNNTensors / sizeof kNNTensors[0] == CT_OP_END_ - CT_OP_MATMUL, "one line per NN op");
static_assert(sizeof kSemantics / sizeof kSemantics[0] == CT_OP_END_,
              "kSemantics needs one line per op of the header's op tables");

// The table, built at compile time from the X-macro and kSemantics: no
// initialisation guard on the hot path.
constexpr const char* kNames[] = {
#define CT_NAME_(ID, nm, kd, np, sm) #nm,
    CT_ELEMENTWISE_OPS(CT_NAME_)
    CT_BROADCAST_REDUCE_OPS(CT_NAME_)
    CT_NN_OPS(CT_NAME_)
#undef CT_NAME_
};
constexpr const char* kSummaries[] = {
#define CT_SUMMARY_(ID, nm, kd, np, sm) sm,
    CT_ELEMENTWISE_OPS(CT_SUMMARY_)
    CT_BROADCAST_REDUCE_OPS(CT_SUMMARY_)
    CT_NN_OPS(CT_SUMMARY_)
#undef CT_SUMMARY_
};
constexpr int32_t kKinds[] = {
#define CT_KIND_(ID, nm, kd, np, sm) kd,
    CT_ELEMENTWISE_OPS(CT_KIND_)
    CT_BROADCAST_REDUCE_OPS(CT_KIND_)
    CT_NN_OPS(CT_KIND_)
#undef CT_KIND_
};
constexpr int32_t kNumParams[] = {
#define CT_NPARAMS_(ID, nm, kd, np, sm) np,
    CT_ELEMENTWISE_OPS(CT_NPARAMS_)
    CT_BROADCAST_REDUCE_OPS(CT_NPARAMS_)
    CT_NN_OPS(CT_NPARAMS_)
#undef CT_NPARAMS_
};
struct OpTable {
  OpDef defs[CT_OP_END_];
};
constexpr OpTable make_table() {
  OpTable t{};
  for (int i = 0; i < CT_OP_END_; ++i)
    t.defs[i] = OpDef{kNames[i], kSummaries[i], kKinds[i], kNumParams[i], kSemantics[i].param_names,
                      kSemantics[i].dtypes, kSemantics[i].rule, kSemantics[i].output};
  return t;
}
constexpr OpTable kTable = make_table();

struct DtypeRow {
  uint8_t code, bits;
  const char* name;
};
constexpr DtypeRow kDtypes[CT_DT_COUNT] = {
    {CT_BOOL, 8, "bool"},       {CT_INT, 8, "int8"},      {CT_INT, 16, "int16"},
    {CT_INT, 32, "int32"},      {CT_INT, 64, "int64"},    {CT_UINT, 8, "uint8"},
    {CT_FLOAT, 16, "float16"},  {CT_BFLOAT, 16, "bfloat16"}, {CT_FLOAT, 32, "float32"},
    {CT_FLOAT, 64, "float64"},
};

}  // namespace

const char* nn_tensor_names(int32_t op, int32_t* count, int32_t* inputs) {
  const NNTensors& t = kNNTensors[op - CT_OP_MATMUL];
  *count = t.count;
  *inputs = t.inputs;
  return t.names;
}

const OpDef* op_def(int32_t op) {
  if (op < 0 || op >= CT_OP_END_) return nullptr;
  return &kTable.defs[op];
}

int32_t dtype_index(CTDataType dt) {
  if (dt.lanes != 1) return -1;
  switch (dt.code) {
    case CT_BOOL: return dt.bits == 8 ? CT_DT_BOOL : -1;
    case CT_INT:
      return dt.bits == 8 ? CT_DT_INT8 : dt.bits == 16 ? CT_DT_INT16 : dt.bits == 32 ? CT_DT_INT32
           : dt.bits == 64 ? CT_DT_INT64 : -1;
    case CT_UINT: return dt.bits == 8 ? CT_DT_UINT8 : -1;
    case CT_FLOAT:
      return dt.bits == 16 ? CT_DT_FLOAT16 : dt.bits == 32 ? CT_DT_FLOAT32 : dt.bits == 64 ? CT_DT_FLOAT64 : -1;
    case CT_BFLOAT: return dt.bits == 16 ? CT_DT_BFLOAT16 : -1;
    default: return -1;
  }
}

const char* dtype_name(int32_t index) { return kDtypes[index].name; }

const char* describe_dtype(char* buf, size_t n, CTDataType dt) {
  int32_t i = dtype_index(dt);
  if (i >= 0) return kDtypes[i].name;
  static const char* const codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  const char* code = dt.code < 7 ? codes[dt.code] : "unknown";
  std::snprintf(buf, n, "%s(code %u) bits %u lanes %u", code, (unsigned)dt.code,
                (unsigned)dt.bits, (unsigned)dt.lanes);
  return buf;
}

}  // namespace ct

extern "C" {

CT_API int32_t ct_op_count(void) { return CT_OP_END_; }

CT_API CTStatus ct_op_info(int32_t op, CTOpInfo* info) {
  CT_API_BEGIN("ct_op_info")
  if (CTStatus s = ct::check_struct_size("ct_op_info", "info", info, offsetof(CTOpInfo, name))) return s;
  const ct::OpDef* d = ct::op_def(op);
  if (!d) return ct::fail(CT_ERR_NOT_FOUND, "ct_op_info: op=%d is not an op id (0..%d)", op, CT_OP_END_ - 1);
  CTOpInfo full;
  std::memset(&full, 0, sizeof full);
  full.op = op;
  full.name = d->name;
  full.summary = d->summary;
  full.category = d->kind == CT_KIND_NN         ? CT_CATEGORY_NN
                  : d->kind >= CT_KIND_BINARY ? CT_CATEGORY_BROADCAST_REDUCE
                                              : CT_CATEGORY_ELEMENTWISE;
  full.kind = d->kind;
  full.num_params = d->num_params;
  full.param_names = d->param_names;
  full.output_dtype = d->output;
  if (d->kind == CT_KIND_NN) {
    const ct::NNTensors& t = ct::kNNTensors[op - CT_OP_MATMUL];
    full.num_inputs = t.inputs;
    full.num_tensors = t.count;
    full.tensor_names = t.names;
    full.inplace = 0;
  } else {
    full.num_inputs = d->kind == CT_KIND_TERNARY ? 3 : d->kind == CT_KIND_BINARY ? 2 : 1;
    full.num_tensors = full.num_inputs + 1;
    full.tensor_names = op == CT_OP_WHERE                ? "cond,a,b,out"
                        : d->kind == CT_KIND_TERNARY ? "a,b,c,out"
                        : d->kind == CT_KIND_BINARY  ? "a,b,out"
                                                     : "x,out";
    full.inplace = d->kind == CT_KIND_CAST || d->kind == CT_KIND_REDUCE ? 0 : 1;
  }
  ct::copy_struct_out(info, full);
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_op_find(const char* name, int32_t* op) {
  CT_API_BEGIN("ct_op_find")
  if (!name) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_op_find: name is NULL");
  if (!op) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_op_find: op is NULL");
  for (int32_t i = 0; i < CT_OP_END_; ++i)
    if (std::strcmp(ct::op_def(i)->name, name) == 0) {
      *op = i;
      return CT_OK;
    }
  return ct::fail(CT_ERR_NOT_FOUND, "ct_op_find: no op named \"%s\"", name);
  CT_API_END()
}

CT_API CTStatus ct_op_supported(int32_t op, CTDevice device, CTDataType dtype) {
  CT_API_BEGIN("ct_op_supported")
  return ct::check_supported("ct_op_supported", op, device, dtype);
  CT_API_END()
}

}  // extern "C"
