// registry.cc — the op table, built once from the op description rows of
// ctensor.h (CT_OP_TABLE), and the ct_op_* entry points.
#include "core/registry.h"

#include <cstdio>
#include <cstring>

#include "core/backends.h"
#include "core/error.h"
#include "core/plugin_ops.h"

namespace ct {
namespace {

// The words a message uses for an op's dtype rule (derived from the row's mask).
const char* rule_text(uint32_t mask, int32_t output) {
  switch (mask) {
    case CT_DTS_FLOAT: return "float dtypes only, as in NumPy";
    case CT_DTS_NUMERIC:
      return output == CT_OUTPUT_FLOAT ? "integer and float dtypes, not bool (cast bool first)"
                                       : "integer and float dtypes, not bool";
    case CT_DTS_ALL: return "every dtype";
    case CT_DTS_INTEGRAL: return "integer and bool dtypes, as in NumPy";
    case CT_DTS_INT: return "integer dtypes only, as in NumPy";
    case CT_DTS_NN: return "float32, and bfloat16/float16 where the backend runs them";
    default: return "the dtypes of its description";
  }
}

int32_t desc_size_of(int32_t desc) {
  switch (desc) {
    case CT_DESC_MATMUL: return (int32_t)sizeof(CTMatmulDesc);
    case CT_DESC_CONV2D: return (int32_t)sizeof(CTConv2dDesc);
    case CT_DESC_POOL2D: return (int32_t)sizeof(CTPool2dDesc);
    case CT_DESC_BATCH_NORM: return (int32_t)sizeof(CTBatchNormDesc);
    case CT_DESC_LAYER_NORM: return (int32_t)sizeof(CTLayerNormDesc);
    case CT_DESC_ATTENTION: return (int32_t)sizeof(CTAttentionDesc);
    default: return 0;
  }
}

int32_t role_of(char c) {
  switch (c) {
    case 'c': return CT_ROLE_COND;
    case 's': return CT_ROLE_STAT;
    case 'p': return CT_ROLE_PARAM;
    case 'b': return CT_ROLE_BIAS;
    case 'i': return CT_ROLE_INDEX;
    case 'a': return CT_ROLE_ANY;
    default: return -1;
  }
}

struct Row {
  int32_t id;
  const char* name;
  int32_t kind, num_params;
  const char* param_names;
  const char* tensors;
  uint32_t dtypes;
  int32_t output, inplace, shape, desc;
  const char* summary;
};
constexpr Row kRows[] = {
#define CT_ROW_(ID, id, nm, kd, np, pn, tn, dts, out, inpl, shp, dsc, sm) \
  {id, #nm, kd, np, pn, tn, dts, out, inpl, shp, dsc, sm},
    CT_OP_TABLE(CT_ROW_)
#undef CT_ROW_
};
constexpr int32_t kNumOps = (int32_t)(sizeof kRows / sizeof kRows[0]);
static_assert(kNumOps == CT_OP_END_, "one row per op id");

// Rows are grouped by category, so an op appended to one category has a
// larger id than the rows after it: every id in 0 .. kNumOps-1 exactly once,
// in any order.
constexpr bool ids_dense() {
  bool seen[kNumOps] = {};
  for (int32_t i = 0; i < kNumOps; ++i) {
    const int32_t id = kRows[i].id;
    if (id < 0 || id >= kNumOps || seen[id]) return false;
    seen[id] = true;
  }
  return true;
}
static_assert(ids_dense(), "op ids are explicit and dense: each of 0 .. CT_OP_END_-1 once (append-only)");

constexpr int32_t count_names(const char* s) { return *s == '\0' ? 1 : (*s == ',' ? 1 : 0) + count_names(s + 1); }
constexpr bool params_match(int32_t i) {
  return i == kNumOps ||
         ((kRows[i].num_params == (*kRows[i].param_names ? count_names(kRows[i].param_names) : 0)) &&
          params_match(i + 1));
}
static_assert(params_match(0), "num_params equals the number of parameter names");

}  // namespace

// Parses "a,b?:r|out" into the OpDef's tensor fields; false if malformed.
bool parse_tensor_spec(const char* spec, OpDef* d, char* names, size_t names_size, char* store, size_t store_size) {
  d->num_tensors = d->num_inputs = 0;
  d->optional_mask = 0;
  size_t nu = 0, su = 0;
  bool outputs = false;
  const char* p = spec;
  while (*p) {
    if (d->num_tensors == kMaxOpTensors) return false;
    const char* e = p;
    while (*e && *e != ',' && *e != '|') ++e;
    const int32_t i = d->num_tensors++;
    if (!outputs) ++d->num_inputs;
    const char* colon = static_cast<const char*>(std::memchr(p, ':', (size_t)(e - p)));
    const char* name_end = colon ? colon : e;
    const bool opt = name_end > p && name_end[-1] == '?';
    if (opt) d->optional_mask |= 1u << i;
    d->role[i] = colon ? role_of(colon[1]) : CT_ROLE_DATA;
    if (d->role[i] < 0) return false;
    const size_t len = (size_t)(name_end - p) - (opt ? 1 : 0);
    if (su + len + 1 > store_size || nu + len + 3 > names_size) return false;
    std::memcpy(store + su, p, len);
    store[su + len] = '\0';
    d->tensor[i] = store + su;
    su += len + 1;
    nu += std::snprintf(names + nu, names_size - nu, "%s%.*s%s", i ? "," : "", (int)len, p, opt ? "?" : "");
    if (*e == '|') {
      if (outputs) return false;
      outputs = true;
    }
    p = *e ? e + 1 : e;
  }
  return outputs && d->num_inputs >= 1 && d->num_tensors > d->num_inputs;
}

const char* dtype_rule_text(uint32_t mask, int32_t output) { return rule_text(mask, output); }

namespace {

struct Table {
  OpDef defs[kNumOps];
  char names[kNumOps][96];
  char store[kNumOps][96];
  Table() {
    for (int32_t k = 0; k < kNumOps; ++k) {  // row k describes op id kRows[k].id
      const Row& r = kRows[k];
      const int32_t i = r.id;
      OpDef& d = defs[i];
      std::memset(&d, 0, sizeof d);
      d.id = r.id;
      d.name = r.name;
      d.summary = r.summary;
      d.kind = r.kind;
      d.num_params = r.num_params;
      d.param_names = r.param_names;
      d.dtypes = r.dtypes;
      d.dtype_rule = rule_text(r.dtypes, r.output);
      d.output = r.output;
      d.inplace = r.inplace;
      d.shape_rule = r.shape;
      d.desc_type = r.desc;
      d.desc_size = desc_size_of(r.desc);
      if (!parse_tensor_spec(r.tensors, &d, names[i], sizeof names[i], store[i], sizeof store[i])) {
        std::fprintf(stderr, "ctensor: op %s has a malformed tensor column \"%s\"\n", r.name, r.tensors);
        d.num_tensors = d.num_inputs = 0;  // unusable, never crashes: validation refuses it
      }
      d.tensor_names = names[i];
    }
  }
};

// Built when the library loads (nothing calls op_def during static
// initialisation), so op_def has no initialisation guard on the hot path.
const Table g_table;
inline const Table& table() { return g_table; }

}  // namespace

const OpDef* op_def(int32_t op) {
  if ((uint32_t)op < (uint32_t)kNumOps) return &table().defs[op];
  const uint32_t i = (uint32_t)op - (uint32_t)kNumOps;  // a negative op wraps far past the end
  return i < (uint32_t)kMaxPluginOps ? g_plugin_live[i].load(std::memory_order_acquire) : nullptr;
}

const OpDef* op_def_any(int32_t op) {
  if ((uint32_t)op < (uint32_t)kNumOps) return &table().defs[op];
  return op >= kNumOps ? plugin_op_def_any(op) : nullptr;
}

int32_t builtin_op_count() { return kNumOps; }

int32_t op_count() { return kNumOps + plugin_op_ids(); }

const char* kind_name(int32_t kind) {
  static const char* const names[] = {"?",      "unary",  "parametrised unary", "ternary",
                                      "cast",   "binary", "reduce",             "along-axis", "NN",
                                      "index"};
  return kind >= 0 && kind < (int32_t)(sizeof names / sizeof names[0]) ? names[kind] : "?";
}

const char* kind_entry(int32_t kind) {
  static const char* const entries[] = {"?",         "ct_unary",  "ct_unary_param", "ct_ternary",   "ct_cast",
                                        "ct_binary", "ct_reduce", "ct_along_axis",  "ct_nn or ct_<op>",
                                        "ct_index"};
  return kind >= 0 && kind < (int32_t)(sizeof entries / sizeof entries[0]) ? entries[kind] : "?";
}

CTDataType dtype_of(int32_t index) { return ct_dtype_of_index(index); }

const char* dtype_name(int32_t index) { return ct_dtype_name(index); }

const char* describe_dtype(char* buf, size_t n, CTDataType dt) {
  int32_t i = dtype_index(dt);
  if (i >= 0) return ct_dtype_name(i);
  static const char* const codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool",
                                      "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                                      "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"};
  const char* code = dt.code < sizeof codes / sizeof codes[0] ? codes[dt.code] : "unknown";
  std::snprintf(buf, n, "%s(code %u) bits %u lanes %u", code, (unsigned)dt.code,
                (unsigned)dt.bits, (unsigned)dt.lanes);
  return buf;
}

}  // namespace ct

extern "C" {

CT_API int32_t ct_op_count(void) {
  const ct::ReadSection section;
  ct::register_first_use();
  return ct::op_count();
}

CT_API CTStatus ct_op_info(int32_t op, CTOpInfo* info) {
  CT_API_BEGIN("ct_op_info")
  if (CTStatus s = ct::check_struct_size("ct_op_info", "info", info, offsetof(CTOpInfo, name))) return s;
  if (op >= ct::builtin_op_count()) ct::register_first_use();
  const ct::OpDef* d = ct::op_def(op);
  if (!d) return ct::no_op("ct_op_info", op);
  CTOpInfo full;
  std::memset(&full, 0, sizeof full);
  full.op = op;
  full.name = d->name;
  full.summary = d->summary;
  full.category = d->kind == CT_KIND_NN         ? CT_CATEGORY_NN
                  : d->kind == CT_KIND_BINARY || d->kind == CT_KIND_REDUCE || d->kind == CT_KIND_ALONG_AXIS ||
                            d->kind == CT_KIND_INDEX
                      ? CT_CATEGORY_BROADCAST_REDUCE
                      : CT_CATEGORY_ELEMENTWISE;
  full.kind = d->kind;
  full.num_inputs = d->num_inputs;
  full.num_params = d->num_params;
  full.param_names = d->param_names;
  full.output_dtype = d->output;
  full.inplace = d->inplace;
  full.num_tensors = d->num_tensors;
  full.tensor_names = d->tensor_names;
  full.num_outputs = d->num_tensors - d->num_inputs;
  full.optional_mask = d->optional_mask;
  full.tensor_roles = d->role;
  full.desc_type = d->desc_type;
  full.desc_size = d->desc_size;
  full.shape_rule = d->shape_rule;
  full.dtype_mask = d->dtypes;
  full.dtype_rule = d->dtype_rule;
  ct::copy_struct_out(info, full);
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_op_find(const char* name, int32_t* op) {
  CT_API_BEGIN("ct_op_find")
  if (!name) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_op_find: name is NULL");
  if (!op) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_op_find: op is NULL");
  ct::register_first_use();
  for (int32_t i = 0, n = ct::op_count(); i < n; ++i) {
    const ct::OpDef* d = ct::op_def(i);
    if (d && std::strcmp(d->name, name) == 0) {
      *op = i;
      return CT_OK;
    }
  }
  return ct::fail(CT_ERR_NOT_FOUND, "ct_op_find: no op named \"%s\"", name);
  CT_API_END()
}

CT_API CTStatus ct_op_supported(int32_t op, CTDevice device, CTDataType dtype) {
  CT_API_BEGIN("ct_op_supported")
  return ct::check_supported("ct_op_supported", op, device, dtype);
  CT_API_END()
}

CT_API CTStatus ct_cast_supported(CTDevice device, CTDataType from, CTDataType to) {
  CT_API_BEGIN("ct_cast_supported")
  return ct::check_supported("ct_cast_supported", CT_OP_CAST, device, from, &to);
  CT_API_END()
}

}  // extern "C"
