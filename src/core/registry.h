// registry.h — the op table core dispatches from, built from the op
// description rows of ctensor.h (CT_OP_TABLE), and dtype bookkeeping.
#ifndef CTENSOR_SRC_CORE_REGISTRY_H_
#define CTENSOR_SRC_CORE_REGISTRY_H_

#include <ctensor/ctensor.h>

namespace ct {

struct Library;  // core/library.h

constexpr uint32_t kMaskBool = CT_DTS_BOOL;
constexpr uint32_t kMaskInt = CT_DTS_INT;
constexpr uint32_t kMaskFloat = CT_DTS_FLOAT;
constexpr uint32_t kMaskAll = CT_DTS_ALL;

constexpr int kMaxOpTensors = 8;

struct OpDef {
  int32_t id;            // the op id
  const char* name;
  const char* summary;
  int32_t kind;          // CT_KIND_*
  int32_t num_params;
  const char* param_names;
  uint32_t dtypes;       // where the op is defined (NumPy's rule), as CT_DT_* bits
  const char* dtype_rule;  // says which dtypes in words, for messages
  int32_t output;        // CT_OUTPUT_*
  int32_t inplace;
  int32_t shape_rule;    // CTShapeRule
  int32_t desc_type;     // CTDescType
  int32_t desc_size;     // sizeof the descriptor, 0 if none
  // The tensor arguments, parsed from the row's "a,b?:r|out" column.
  const char* tensor_names;  // "a,b,bias?,out": the form CTOpInfo gives
  int32_t num_tensors, num_inputs;
  uint32_t optional_mask;
  const char* tensor[kMaxOpTensors];  // names without '?' and role
  int32_t role[kMaxOpTensors];        // CTTensorRole
  // Plugin ops only (NULL for the built-ins): the library that registered
  // the op (NULL when registered outside ct_library_load), and its
  // callbacks from CTOpDesc.
  const Library* owner;
  CTStatus (*output_shape)(const void*, const CTensor* const*, int32_t, int32_t, int64_t*, int32_t*);
  CTStatus (*reference)(const CTensor* const*, int32_t, const double*, const CTOpArgs*);
  // NN kind, ABI 1.2 (NULL when the plugin's CTOpDesc is older): ct_op_example.
  CTStatus (*example)(int32_t, int32_t, void*, int32_t*, int64_t (*)[CT_MAX_NDIM]);
};

// nullptr if op is not a valid id (or a plugin op whose library is unloaded).
const OpDef* op_def(int32_t op);
// The record of an op that op_def(op) found: live or not. For code after a
// call's check, which a plugin's unload may race: a plugin op's record
// outlives its library (the call then fails where it runs the plugin's code,
// with CT_ERR_NOT_FOUND, instead of reading NULL).
const OpDef* op_def_any(int32_t op);
// Ops the library knows (ids 0 .. op_count() - 1): the built-ins, then
// every id a plugin op was given (unloaded ones included: ids are not reused).
int32_t op_count();
// Parses a row's tensor column ("a,b?:r|out") into d; false if malformed.
bool parse_tensor_spec(const char* spec, OpDef* d, char* names, size_t names_size, char* store, size_t store_size);
// The words for a dtype mask's rule, for messages.
const char* dtype_rule_text(uint32_t mask, int32_t output);
// The number of built-in ops (CT_OP_END_ of this build).
int32_t builtin_op_count();

// "unary", "binary", ... and the entry point of a kind ("ct_unary"); "?" when unknown.
const char* kind_name(int32_t kind);
const char* kind_entry(int32_t kind);

// CT_DT_* index of a dtype, or -1 if ctensor does not support it.
inline int32_t dtype_index(CTDataType dt) { return ct_dtype_index(dt); }
const char* dtype_name(int32_t index);
CTDataType dtype_of(int32_t index);
// Describes any dtype, supported or not ("float32", "float(code 2) bits 24 lanes 2").
const char* describe_dtype(char* buf, size_t n, CTDataType dt);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_REGISTRY_H_
