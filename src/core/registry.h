// registry.h — the op table core dispatches from, and dtype bookkeeping.
#ifndef CTENSOR_SRC_CORE_REGISTRY_H_
#define CTENSOR_SRC_CORE_REGISTRY_H_

#include "core/backend.h"

namespace ct {

constexpr uint32_t kMaskBool = 1u << CT_DT_BOOL;
constexpr uint32_t kMaskInt = (1u << CT_DT_INT8) | (1u << CT_DT_INT16) | (1u << CT_DT_INT32) |
                              (1u << CT_DT_INT64) | (1u << CT_DT_UINT8);
constexpr uint32_t kMaskFloat = (1u << CT_DT_FLOAT16) | (1u << CT_DT_BFLOAT16) |
                                (1u << CT_DT_FLOAT32) | (1u << CT_DT_FLOAT64);
constexpr uint32_t kMaskAll = kMaskBool | kMaskInt | kMaskFloat;

struct OpDef {
  const char* name;
  const char* summary;
  int32_t kind;         // CT_KIND_*
  int32_t num_params;
  const char* param_names;
  uint32_t dtypes;      // where the op is defined (NumPy's rule), as CT_DT_* bits
  const char* dtype_rule;  // says which dtypes in words, for messages
  int32_t output;       // CT_OUTPUT_*
};

// An NN op's tensor arguments: "x,w,bias?,y" ("?" = optional), how many,
// and how many of them (the first ones) are inputs.
const char* nn_tensor_names(int32_t op, int32_t* count, int32_t* inputs);

// nullptr if op is not a valid id.
const OpDef* op_def(int32_t op);

// CT_DT_* index of a dtype, or -1 if ctensor does not support it.
int32_t dtype_index(CTDataType dt);
const char* dtype_name(int32_t index);
// Describes any dtype, supported or not ("float32", "float(code 2) bits 24 lanes 2").
const char* describe_dtype(char* buf, size_t n, CTDataType dt);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_REGISTRY_H_
