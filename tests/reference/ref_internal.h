// ref_internal.h — private to tests/reference/*.cc: scalar values, dtype
// helpers, broadcasting, descriptors and the scalar definitions shared by the
// elementwise ops and the NN activations, and the per-file op tables that
// reference.cc joins into the one table keyed by op id.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "reference.h"

namespace ctref {

typedef std::vector<int64_t> Shape;
typedef std::vector<Array*> Outs;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// ---- the per-file tables (one entry per op, next to its function) ----------

struct Table {
  const Entry* entries;
  size_t size;
};
Table elementwise_table();  // elementwise.cc: unary, unary_param, ternary, cast
Table binary_table();       // binary.cc
Table reduce_table();       // reduce.cc: reductions and along-axis ops
Table nn_conv_table();      // nn_conv.cc: matmul, conv2d and its backwards
Table nn_pool_table();      // nn_pool.cc: max/avg pooling and backwards
Table nn_norm_table();      // nn_norm.cc: batch norm, layer norm
Table nn_attention_table(); // nn_attention.cc: scaled_dot_product_attention
Table index_table();        // index.cc: take, gather, scatter, scatter_add, index_add

#define CTREF_TABLE(fn, arr) \
  Table fn() { return Table{arr, sizeof(arr) / sizeof((arr)[0])}; }

// Whether a scalar form given as a template argument exists (nullptr: the op
// has no such form); a function, so that no -Waddress warning fires.
template <class P>
constexpr bool has_form(P p) {
  return p != nullptr;
}

// ---- failures ----------------------------------------------------------------

inline bool fail(std::string* why, const std::string& msg) {
  if (why) *why = msg;
  return false;
}
std::string str(const Shape& s);  // [2,3]
inline std::string name_of(const Call& c) { return op_name(c.op); }

// ---- dtypes ------------------------------------------------------------------

inline bool dt_bool(CTDataType d) { return d.code == CT_BOOL; }
inline bool dt_uint(CTDataType d) { return d.code == CT_UINT; }
// The smallest and the largest value of integer or bool dtype d (exact).
__extension__ typedef __int128 Int128;
Int128 dt_min(CTDataType d);
Int128 dt_max(CTDataType d);
// The exact value of an integer or bool element v of dtype d, as Array::i
// holds it: an unsigned dtype's value is v's uint64 bits (exact for all of
// them: uint8/16/32 values are small non-negative int64s).
inline Int128 exact(int64_t v, CTDataType d) { return dt_uint(d) ? (Int128)(uint64_t)v : (Int128)v; }
inline double to_double(int64_t v, CTDataType d) { return dt_uint(d) ? (double)(uint64_t)v : (double)v; }
// Two's complement wrap of v modulo 2^bits of integer dtype d; bool: v != 0.
int64_t wrap(uint64_t v, CTDataType d);
const CTDataType kF64 = {CT_FLOAT, 64, 1};
const CTDataType kI64 = {CT_INT, 64, 1};

// ---- one element of the reference domain ----------------------------------

struct V {
  bool fl;  // f is meaningful (else i)
  double f;
  int64_t i;
};
inline V vf(double f) { return V{true, f, 0}; }
inline V vi(int64_t i) { return V{false, 0, i}; }
inline V vb(bool b) { return V{false, 0, b ? 1 : 0}; }
inline V load(const Array& a, int64_t k) { return a.is_float() ? vf(a.f[(size_t)k]) : vi(a.i[(size_t)k]); }

// Store v into out[k]: integers wrap to out's dtype; a float into an integer
// or bool output (predicates) is truncated, then wrapped.
inline void store(Array& out, int64_t k, const V& v) {
  if (out.is_float())
    out.f[(size_t)k] = v.fl ? v.f : (double)v.i;
  else
    out.i[(size_t)k] = v.fl ? (std::isfinite(v.f) && std::fabs(v.f) < 9e18 ? wrap((uint64_t)(int64_t)v.f, out.dtype)
                                                                            : (int64_t)(v.f != 0 && dt_bool(out.dtype)))
                            : wrap((uint64_t)v.i, out.dtype);
}

// The values of one group (a reduction's set, an along-axis line); an
// integer group holds x's elements as Array::i does (uns: of an unsigned dtype).
struct Values {
  bool fl = true;
  bool uns = false;
  std::vector<double> f;
  std::vector<int64_t> i;
  int64_t size() const { return fl ? (int64_t)f.size() : (int64_t)i.size(); }
  Int128 exact(int64_t j) const { return uns ? (Int128)(uint64_t)i[(size_t)j] : (Int128)i[(size_t)j]; }
  double get(int64_t j) const { return fl ? f[(size_t)j] : (double)exact(j); }
};

// ---- shapes and broadcasting ----------------------------------------------------

int64_t prod(const Shape& s, size_t from = 0, size_t to = (size_t)-1);
// For every element of out_shape (row-major), the linear index of the
// element of `in` (right-aligned, extents of 1 broadcast) it reads.
bool broadcast_index(const Shape& in, const Shape& out_shape, std::vector<int64_t>* idx, std::string* why,
                     const char* arg);
// Requires the inputs [0, n) present and holding as many values as their shape says.
bool need_inputs(const Call& c, size_t n, std::string* why);
// Requires outputs[0] and resets it.
bool need_output(const Call& c, const Outs& o, std::string* why);
// NN arguments by position: nullptr when absent.
inline const Array* arg_in(const Call& c, size_t i) { return i < c.inputs.size() ? c.inputs[i] : nullptr; }
inline Array* arg_out(const Outs& o, size_t i) { return i < o.size() ? o[i] : nullptr; }
// Requires the array present with `nd` dims (nd < 0: any).
inline bool need_array(const Array* a, const char* what, int nd, std::string* why) {
  if (!a) return fail(why, std::string(what) + " is required");
  if (nd >= 0 && (int)a->shape.size() != nd)
    return fail(why, std::string(what) + " must be " + std::to_string(nd) + "-d, got " + str(a->shape));
  return true;
}
// An optional array, when present, has n elements.
inline bool same_numel(const Array* a, int64_t n, const char* what, std::string* why) {
  if (a && a->numel() != n)
    return fail(why, std::string(what) + " has " + std::to_string(a->numel()) + " elements, expected " +
                         std::to_string(n));
  return true;
}
inline void prepare(Array* a) {
  if (a) a->reset(a->dtype, a->shape);
}

// A descriptor read as the caller's struct_size says (a missing tail is zeros).
template <class D>
D read_desc(const void* p) {
  D d;
  std::memset(&d, 0, sizeof d);
  if (!p) return d;
  uint32_t sz = 0;
  std::memcpy(&sz, p, sizeof sz);
  std::memcpy(&d, p, std::min<size_t>(sz, sizeof d));
  return d;
}

// ---- scalar definitions shared by unary ops and NN activations --------------------

// Stable in both tails (no overflow of e^-x for x << 0).
inline double sigmoid_ref(double x) {
  return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}
// x * Phi(x) with erfc, no cancellation for x << 0.
inline double gelu_ref(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
// 0.5 x (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3):
// the second form has no cancellation for x << 0.
inline double gelu_tanh_ref(double x) {
  const double k = 0.79788456080286535587989211986876;  // sqrt(2 / pi)
  return x * sigmoid_ref(2.0 * k * (x + 0.044715 * x * x * x));
}
inline double silu_ref(double x) { return x * sigmoid_ref(x); }
inline double softplus_ref(double x) {
  if (std::isnan(x)) return x;
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
inline double relu_ref(double x) { return x < 0 ? 0.0 : x; }  // NaN stays NaN

// The fused activation of matmul and conv2d (CTActivation).
inline double activate(int act, double v) {
  switch (act) {
    case CT_ACTIVATION_RELU: return relu_ref(v);
    case CT_ACTIVATION_GELU: return gelu_ref(v);
    case CT_ACTIVATION_GELU_TANH: return gelu_tanh_ref(v);
    case CT_ACTIVATION_SIGMOID: return sigmoid_ref(v);
    case CT_ACTIVATION_TANH: return std::tanh(v);
    default: return v;
  }
}

}  // namespace ctref
