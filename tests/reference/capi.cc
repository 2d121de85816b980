// capi.cc — the reference library behind one C entry point, built as the
// shared library ct_reference_c for test suites in other languages: the
// Python suite loads it with ctypes and checks ops that have no NumPy
// reference of their own against these references (the same ones the
// Catch2 suites and `ctensor check` use).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "reference.h"

namespace {

// CTDtypeIndex (CT_DT_*) -> CTDataType; false for an index outside the header's.
bool dtype_of_index(int32_t i, CTDataType* d) {
  if (i < 0 || i >= CT_DT_COUNT) return false;
  *d = ct_dtype_of_index(i);
  return true;
}

int fail(char* why, int32_t why_size, const std::string& msg) {
  if (why && why_size > 0) {
    const size_t n = std::min<size_t>(msg.size(), (size_t)why_size - 1);
    std::memcpy(why, msg.data(), n);
    why[n] = '\0';
  }
  return 0;
}

}  // namespace

// Runs the reference of op `op` (a kind without axes or descriptors: unary,
// unary_param, ternary, cast, binary) on num_inputs row-major inputs, input
// k of dtype in_dtypes[k] (CT_DT_*), in_ndims[k] dims in_shapes[k] and
// values in_values[k]; writes the one output (dtype out_dtype, shape
// out_shape) to out_values. Values are in the reference domain: float64 for
// float dtypes (results exact, not rounded to the dtype), int64 for integer
// and bool dtypes (results wrapped to the dtype; uint64 values as their
// bits, as ctref::Array holds them). Returns 1, or 0 with the
// reason in why (why_size bytes, NUL-terminated).
extern "C" __attribute__((visibility("default"))) int ctref_c_run(
    int32_t op, int32_t num_inputs, const int32_t* in_dtypes, const int32_t* in_ndims,
    const int64_t* const* in_shapes, const void* const* in_values, const double* params, int32_t num_params,
    int32_t out_dtype, int32_t out_ndim, const int64_t* out_shape, void* out_values, char* why,
    int32_t why_size) {
  if (num_inputs < 0 || num_params < 0 || out_ndim < 0) return fail(why, why_size, "negative count");
  std::vector<ctref::Array> ins((size_t)num_inputs);
  ctref::Call c;
  c.op = op;
  for (int32_t k = 0; k < num_inputs; ++k) {
    CTDataType d;
    if (!dtype_of_index(in_dtypes[k], &d)) return fail(why, why_size, "input dtype index out of range");
    ins[(size_t)k].reset(d, std::vector<int64_t>(in_shapes[k], in_shapes[k] + in_ndims[k]));
    ctref::Array& a = ins[(size_t)k];
    if (a.is_float()) std::memcpy(a.f.data(), in_values[k], a.f.size() * sizeof(double));
    else std::memcpy(a.i.data(), in_values[k], a.i.size() * sizeof(int64_t));
    c.inputs.push_back(&a);
  }
  c.params.assign(params, params + num_params);
  CTDataType od;
  if (!dtype_of_index(out_dtype, &od)) return fail(why, why_size, "output dtype index out of range");
  ctref::Array out(od, std::vector<int64_t>(out_shape, out_shape + out_ndim));
  std::string w;
  if (!ctref::run(c, {&out}, &w)) return fail(why, why_size, w);
  if (out.is_float()) std::memcpy(out_values, out.f.data(), out.f.size() * sizeof(double));
  else std::memcpy(out_values, out.i.data(), out.i.size() * sizeof(int64_t));
  return 1;
}
