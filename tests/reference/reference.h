// reference.h — the one reference library of ctensor (target ct_reference):
// plain loops in double precision / exact integers for every op, looked up by
// op id in one table, used by the Catch2 suites and by `ctensor check`.
//
// Nothing here calls the library: the references include <ctensor/ctensor.h>
// for its types and op table only (the self-test links them without
// libctensor), so they are an independent opinion of what each op computes.
// notes/SEMANTICS.md is the contract.
#pragma once
#include <ctensor/ctensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ctref {

// float16/32/64, bfloat16 and the float8 dtypes.
inline bool ctref_is_float(CTDataType d) {
  return d.code == CT_FLOAT || d.code == CT_BFLOAT ||
         (d.bits == 8 && (d.code == CT_FLOAT8_E4M3FN || d.code == CT_FLOAT8_E5M2 || d.code == CT_FLOAT8_E4M3FNUZ ||
                          d.code == CT_FLOAT8_E5M2FNUZ));
}

// A dense row-major host array in the reference domain: values of float
// dtypes (float16/32/64, bfloat16, float8) as double in `f`; integer and bool values
// as int64 in `i` (bool: 0 or 1), exact except that a uint64 value above
// INT64_MAX is held as the int64 with the same bits (what ct_cast to int64
// gives; get() reads it back as the uint64). Only one of f/i is used.
struct Array {
  CTDataType dtype{};
  std::vector<int64_t> shape;
  std::vector<double> f;
  std::vector<int64_t> i;

  Array() = default;
  Array(CTDataType dt, const std::vector<int64_t>& shp) { reset(dt, shp); }
  int64_t numel() const;
  bool is_float() const { return ctref_is_float(dtype); }
  // Allocate f or i for `shape` and `dtype` (zero-filled).
  void reset(CTDataType dt, const std::vector<int64_t>& shp);
  double get(int64_t k) const {
    return is_float() ? f[(size_t)k] : dtype.code == CT_UINT ? (double)(uint64_t)i[(size_t)k] : (double)i[(size_t)k];
  }
};

// One op call. Fields are used by the op's kind:
//   unary / unary_param / ternary / cast / binary: inputs, params
//   reduce: inputs[0], axes (empty + all_axes = every axis), params
//   along_axis: inputs[0], axis
//   nn: desc (CTMatmulDesc*, CTConv2dDesc*, CTPool2dDesc*, CTBatchNormDesc*,
//       CTLayerNormDesc*, read as its struct_size says)
// inputs are the op's input tensor arguments in order (CTOpInfo.tensor_names
// before '|'), nullptr for an absent optional one.
struct Call {
  int32_t op = -1;  // registry id (CT_OP_*)
  std::vector<const Array*> inputs;
  std::vector<double> params;
  std::vector<int32_t> axes;
  bool all_axes = false;
  int32_t axis = 0;
  const void* desc = nullptr;
};

// Compute the reference outputs of c.op. `outputs` holds one Array per output
// tensor argument (nullptr for an output the call does not request), each
// with dtype and shape set by the caller (the values are reset here). Integer
// and bool results are exact, wrapped to the output dtype as ctensor wraps;
// float results are the exact (double) value, not rounded to the output dtype
// except where the op is a rounding (cast) or overflows the dtype (+-inf).
// Returns false and sets *why when the op has no reference, or the reference
// refuses the arguments: a caller must treat that as a failure.
bool run(const Call& c, const std::vector<Array*>& outputs, std::string* why);

// ---- the table -------------------------------------------------------------

// One op's reference: the whole call, outputs reset to their dtype and shape.
typedef bool (*RefFn)(const Call& c, const std::vector<Array*>& outputs, std::string* why);
struct Entry {
  int32_t op;
  RefFn fn;
};

// The reference of op id `op`, or nullptr when there is none.
const Entry* find(int32_t op);
// Facts of the header's op table (CT_OP_TABLE), known without the library:
// the name ("" for an id this header does not know), the id of a name (-1),
// the kind and the number of input tensors and scalar parameters.
const char* op_name(int32_t op);
int32_t op_id(const std::string& name);
int op_kind(int32_t op);
int op_num_inputs(int32_t op);
int op_num_params(int32_t op);

// ---- helpers shared with the callers ----------------------------------------

bool is_float(CTDataType d);
std::string dtype_name(CTDataType d);

// v rounded to float dtype d: round to nearest even, overflow to +-inf
// (float8 formats without an infinity: NaN), subnormals kept (float16,
// bfloat16, float8 through the codecs below); identity for float64 and
// non-float dtypes.
double round_to(double v, CTDataType d);

// IEEE binary16 (e5m10) and bfloat16 (e8m7) from and to double, round to
// nearest even, overflow to +-inf, NaN kept. frexp/ldexp arithmetic only.
uint16_t f16_from_double(double v);
double f16_to_double(uint16_t h);
uint16_t bf16_from_double(double v);
double bf16_to_double(uint16_t h);

// The float8 dtypes (d.code a CT_FLOAT8_* ctensor runs) from and to double:
// round to nearest even, once; a value that rounds beyond the largest
// finite one (or an infinity) overflows: with `saturate` to that largest
// value (ONNX Cast saturate=1), without to +-inf (e5m2) or NaN (the formats
// without an infinity: e4m3fn, e4m3fnuz, e5m2fnuz). fnuz: no -0, NaN 0x80.
// frexp/ldexp arithmetic only.
bool is_float8(CTDataType d);
uint8_t f8_from_double(double v, CTDataType d, bool saturate);
double f8_to_double(uint8_t b, CTDataType d);
// The largest finite value of float dtype d (DBL_MAX for float64).
double max_finite(CTDataType d);

// For a reduction of an x of `shape` over `axes` (all_axes: every axis):
// per output element in row-major order, the row-major linear indices of x
// it reduces, in x's axis order (row-major within the reduced axes). Axes
// may be negative; out-of-range or repeated axes give false with *why set.
bool reduction_groups(const std::vector<int64_t>& shape, const std::vector<int32_t>& axes, bool all_axes,
                      std::vector<std::vector<int64_t>>* groups, std::string* why);

}  // namespace ctref
