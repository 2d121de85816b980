// reference.cc — double-precision / exact-integer references for the ops of
// categories 1 and 2 (elementwise maps, broadcasting binary ops, reductions,
// along-axis ops), plus the input domains and tolerances `ctensor check`
// uses. Nothing here calls the library: ops are looked up by name in a table
// expanded from ctensor.h's X-macros, and computed with libm and loops.
// NN ops are delegated to run_nn() (reference_nn.cc).
//
// Float results are the exact (double, or long double where that helps)
// value of the op on the given inputs, never rounded to the output dtype;
// integer and bool results are exact and wrapped to the output dtype as
// notes/SEMANTICS.md specifies.
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "reference_internal.h"

namespace ctref {

int64_t Array::numel() const {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

void Array::reset(CTDataType dt, const std::vector<int64_t>& shp) {
  dtype = dt;
  shape = shp;
  const int64_t n = std::max<int64_t>(numel(), 0);
  if (is_float()) {
    f.assign((size_t)n, 0.0);
    i.clear();
  } else {
    i.assign((size_t)n, 0);
    f.clear();
  }
}

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------
// The op table: name -> kind, from the header's X-macros (no library call).
// ---------------------------------------------------------------------------

int kind_of(const std::string& name) {
  static const std::map<std::string, int> table = [] {
    std::map<std::string, int> m;
#define CTREF_KIND_(ID, n, k, p, s) m[#n] = k;
    CT_ELEMENTWISE_OPS(CTREF_KIND_)
    CT_BROADCAST_REDUCE_OPS(CTREF_KIND_)
    CT_NN_OPS(CTREF_KIND_)
#undef CTREF_KIND_
    return m;
  }();
  auto it = table.find(name);
  return it == table.end() ? 0 : it->second;
}

// ---------------------------------------------------------------------------
// dtype helpers
// ---------------------------------------------------------------------------

bool dt_float(CTDataType d) { return d.code == CT_FLOAT || d.code == CT_BFLOAT; }
bool dt_bool(CTDataType d) { return d.code == CT_BOOL; }
bool dt_uint(CTDataType d) { return d.code == CT_UINT; }
bool dt_half(CTDataType d) { return dt_float(d) && d.bits == 16; }

int64_t dt_min(CTDataType d) {
  if (d.code == CT_INT) {
    switch (d.bits) {
      case 8: return INT8_MIN;
      case 16: return INT16_MIN;
      case 32: return INT32_MIN;
      default: return INT64_MIN;
    }
  }
  return 0;
}

int64_t dt_max(CTDataType d) {
  if (d.code == CT_BOOL) return 1;
  if (d.code == CT_UINT) {
    switch (d.bits) {
      case 8: return UINT8_MAX;
      case 16: return UINT16_MAX;
      case 32: return UINT32_MAX;
      default: return INT64_MAX;  // uint64 is not a ctensor dtype
    }
  }
  switch (d.bits) {
    case 8: return INT8_MAX;
    case 16: return INT16_MAX;
    case 32: return INT32_MAX;
    default: return INT64_MAX;
  }
}

// Two's complement wrap of v modulo 2^bits of integer dtype d; bool: v != 0.
int64_t wrap(uint64_t v, CTDataType d) {
  if (d.code == CT_BOOL) return v != 0;
  if (d.code == CT_UINT) {
    switch (d.bits) {
      case 8: return (uint8_t)v;
      case 16: return (uint16_t)v;
      case 32: return (uint32_t)v;
      default: return (int64_t)v;
    }
  }
  switch (d.bits) {
    case 8: return (int8_t)(uint8_t)v;
    case 16: return (int16_t)(uint16_t)v;
    case 32: return (int32_t)(uint32_t)v;
    default: return (int64_t)v;
  }
}

std::string dt_name(CTDataType d) {
  switch (d.code) {
    case CT_BOOL: return "bool";
    case CT_INT: return "int" + std::to_string(d.bits);
    case CT_UINT: return "uint" + std::to_string(d.bits);
    case CT_FLOAT: return "float" + std::to_string(d.bits);
    case CT_BFLOAT: return "bfloat" + std::to_string(d.bits);
  }
  return "dtype(code=" + std::to_string(d.code) + ")";
}

bool fail(std::string* why, const std::string& msg) {
  if (why) *why = msg;
  return false;
}

// Round half to even, independent of the FP rounding mode.
double round_half_even(double x) {
  if (!std::isfinite(x)) return x;
  double r = std::floor(x);
  double d = x - r;  // exact for |x| < 2^52; 0 above (x is then integral)
  if (d > 0.5 || (d == 0.5 && std::fmod(r, 2.0) != 0)) r += 1.0;
  return r == 0 ? std::copysign(0.0, x) : r;
}

// NumPy's npy_divmod: (floor quotient, Python modulus) of floats.
void py_divmod(double a, double b, double* q, double* m) {
  double mod = std::fmod(a, b);
  if (b == 0) {
    *m = mod;  // NaN
    *q = a / b;
    return;
  }
  double div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  double fl;
  if (div != 0) {
    fl = std::floor(div);
    if (div - fl > 0.5) fl += 1.0;
  } else {
    fl = std::copysign(0.0, a / b);
  }
  *q = fl;
  *m = mod;
}

// Python-style float modulus as SEMANTICS.md states it.
double py_mod(double a, double b) {
  if (b == 0) return kNaN;
  double m = std::fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  if (m == 0) m = std::copysign(0.0, b);
  return m;
}

double gelu_exact(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

double gelu_tanh_exact(double x) {
  const double k = 0.79788456080286535587989211986876;  // sqrt(2 / pi)
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

double sigmoid_exact(double x) {
  return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}

double softplus_exact(double x) {
  if (std::isnan(x)) return x;
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// ---------------------------------------------------------------------------
// Scalars: one element of the reference domain.
// ---------------------------------------------------------------------------

struct V {
  bool fl;    // f is meaningful (else i)
  double f;
  int64_t i;
};
V vf(double f) { return V{true, f, 0}; }
V vi(int64_t i) { return V{false, 0, i}; }
V vb(bool b) { return V{false, 0, b ? 1 : 0}; }

V load(const Array& a, int64_t k) { return a.is_float() ? vf(a.f[(size_t)k]) : vi(a.i[(size_t)k]); }

// Store v into out[k], wrapping integers to out's dtype. A float value into an
// integer output (or the reverse) only happens where an op defines it.
void store(Array& out, int64_t k, const V& v) {
  if (out.is_float())
    out.f[(size_t)k] = v.fl ? v.f : (double)v.i;
  else
    out.i[(size_t)k] = v.fl ? (std::isfinite(v.f) && std::fabs(v.f) < 9e18 ? wrap((uint64_t)(int64_t)v.f, out.dtype) : 0)
                            : wrap((uint64_t)v.i, out.dtype);
}

// ---------------------------------------------------------------------------
// Category 1: unary, unary_param, ternary, cast
// ---------------------------------------------------------------------------

// Float unary ops; returns false if `name` is not a float unary op.
bool unary_float(const std::string& n, double x, V* r) {
  double y;
  if (n == "neg") y = -x;
  else if (n == "abs") y = std::fabs(x);
  else if (n == "sign") y = x > 0 ? 1.0 : x < 0 ? -1.0 : x;
  else if (n == "exp") y = std::exp(x);
  else if (n == "expm1") y = std::expm1(x);
  else if (n == "exp2") y = std::exp2(x);
  else if (n == "log") y = std::log(x);
  else if (n == "log1p") y = std::log1p(x);
  else if (n == "log2") y = std::log2(x);
  else if (n == "sqrt") y = std::sqrt(x);
  else if (n == "rsqrt") y = 1.0 / std::sqrt(x);
  else if (n == "reciprocal") y = 1.0 / x;
  else if (n == "square") y = x * x;
  else if (n == "sin") y = std::sin(x);
  else if (n == "cos") y = std::cos(x);
  else if (n == "tan") y = std::tan(x);
  else if (n == "tanh") y = std::tanh(x);
  else if (n == "sigmoid") y = sigmoid_exact(x);
  else if (n == "relu") y = x < 0 ? 0.0 : x;
  else if (n == "gelu") y = gelu_exact(x);
  else if (n == "gelu_tanh") y = gelu_tanh_exact(x);
  else if (n == "silu") y = x * sigmoid_exact(x);
  else if (n == "softplus") y = softplus_exact(x);
  else if (n == "erf") y = std::erf(x);
  else if (n == "floor") y = std::floor(x);
  else if (n == "ceil") y = std::ceil(x);
  else if (n == "round") y = round_half_even(x);
  else if (n == "trunc") y = std::trunc(x);
  else if (n == "logical_not") { *r = vb(x == 0); return true; }
  else if (n == "isnan") { *r = vb(std::isnan(x)); return true; }
  else if (n == "isinf") { *r = vb(std::isinf(x)); return true; }
  else if (n == "isfinite") { *r = vb(std::isfinite(x)); return true; }
  else return false;
  *r = vf(y);
  return true;
}

// Integer and bool unary ops (x already in range of dtype d); the result is
// wrapped by store(). Returns false if `name` has no integer form.
bool unary_int(const std::string& n, int64_t x, CTDataType d, V* r) {
  const uint64_t u = (uint64_t)x;
  if (n == "neg") *r = vi((int64_t)(0 - u));
  else if (n == "abs") *r = vi(x < 0 ? (int64_t)(0 - u) : x);
  else if (n == "sign") *r = vi(x > 0 ? 1 : x < 0 ? -1 : 0);
  else if (n == "reciprocal") *r = vi(x == 1 ? 1 : x == -1 ? -1 : 0);  // 1/0 = 0
  else if (n == "square") *r = vi((int64_t)(u * u));
  else if (n == "relu") *r = vi(x < 0 ? 0 : x);
  else if (n == "floor" || n == "ceil" || n == "round" || n == "trunc") *r = vi(x);
  else if (n == "logical_not") *r = vb(x == 0);
  else if (n == "bitwise_not") *r = dt_bool(d) ? vb(x == 0) : vi((int64_t)~u);
  else if (n == "isnan" || n == "isinf") *r = vb(false);
  else if (n == "isfinite") *r = vb(true);
  else return false;
  return true;
}

bool run_unary(const Call& c, Array& out, std::string* why) {
  const Array& x = *c.inputs[0];
  const std::string& n = c.name;
  const int64_t N = x.numel();
  const int np = (int)c.params.size();
  auto need = [&](int k) { return np >= k; };
  for (int64_t k = 0; k < N; ++k) {
    V r;
    if (x.is_float()) {
      const double v = x.f[(size_t)k];
      if (n == "leaky_relu" && need(1)) r = vf(v >= 0 ? v : c.params[0] * v);
      else if (n == "elu" && need(1)) r = vf(v > 0 ? v : c.params[0] * std::expm1(v));
      else if (n == "clamp" && need(2)) {
        double y = v < c.params[0] ? c.params[0] : v;
        r = vf(y > c.params[1] ? c.params[1] : y);
      } else if (n == "pow_scalar" && need(1)) r = vf(std::pow(v, c.params[0]));
      else if (n == "add_scalar" && need(1)) r = vf(v + c.params[0]);
      else if (n == "mul_scalar" && need(1)) r = vf(v * c.params[0]);
      else if (!unary_float(n, v, &r))
        return fail(why, n + ": no float reference (or missing params)");
    } else {
      const int64_t v = x.i[(size_t)k];
      if (n == "clamp" && need(2)) {
        const int64_t lo = (int64_t)c.params[0], hi = (int64_t)c.params[1];
        int64_t y = v < lo ? lo : v;
        r = vi(y > hi ? hi : y);
      } else if (n == "add_scalar" && need(1)) {
        r = vi((int64_t)((uint64_t)v + (uint64_t)(int64_t)c.params[0]));
      } else if (n == "mul_scalar" && need(1)) {
        r = vi((int64_t)((uint64_t)v * (uint64_t)(int64_t)c.params[0]));
      } else if (!unary_int(n, v, x.dtype, &r)) {
        return fail(why, n + ": not defined for " + dt_name(x.dtype));
      }
    }
    store(out, k, r);
  }
  return true;
}

bool run_ternary(const Call& c, Array& out, std::string* why) {
  const Array& a = *c.inputs[0];
  const Array& b = *c.inputs[1];
  const Array& w = *c.inputs[2];
  const std::string& n = c.name;
  const int64_t N = out.numel();
  if (a.numel() != N || b.numel() != N || w.numel() != N) return fail(why, n + ": operand sizes differ");
  for (int64_t k = 0; k < N; ++k) {
    if (n == "where") {
      // where(cond, a, b): inputs are (cond, a, b).
      store(out, k, a.get(k) != 0 ? load(b, k) : load(w, k));
    } else if (n == "fma") {
      if (a.is_float())
        store(out, k, vf(std::fma(a.f[(size_t)k], b.f[(size_t)k], w.f[(size_t)k])));
      else
        store(out, k, vi((int64_t)((uint64_t)a.i[(size_t)k] * (uint64_t)b.i[(size_t)k] + (uint64_t)w.i[(size_t)k])));
    } else if (n == "lerp") {
      if (!a.is_float()) return fail(why, "lerp: float dtypes only");
      const double x = a.f[(size_t)k], y = b.f[(size_t)k], t = w.f[(size_t)k];
      store(out, k, vf(t < 0.5 ? x + t * (y - x) : y - (y - x) * (1 - t)));
    } else {
      return fail(why, n + ": unknown ternary op");
    }
  }
  return true;
}

bool run_cast(const Call& c, Array& out, std::string* /*why*/) {
  const Array& x = *c.inputs[0];
  const int64_t N = x.numel();
  const CTDataType od = out.dtype;
  for (int64_t k = 0; k < N; ++k) {
    if (x.is_float()) {
      const double v = x.f[(size_t)k];
      if (out.is_float()) {
        out.f[(size_t)k] = v;
      } else if (dt_bool(od)) {
        out.i[(size_t)k] = v != 0;  // NaN is true
      } else if (std::isnan(v)) {
        out.i[(size_t)k] = 0;
      } else {
        const double t = std::trunc(v);
        const int64_t lo = dt_min(od), hi = dt_max(od);
        int64_t r;
        if (od.bits == 64 && !dt_uint(od)) {
          if (t >= 9223372036854775808.0) r = INT64_MAX;
          else if (t < -9223372036854775808.0) r = INT64_MIN;
          else r = (int64_t)t;
        } else {
          r = t <= (double)lo ? lo : t >= (double)hi ? hi : (int64_t)t;
        }
        out.i[(size_t)k] = r;
      }
    } else {
      const int64_t v = x.i[(size_t)k];
      if (out.is_float()) out.f[(size_t)k] = (double)v;
      else out.i[(size_t)k] = wrap((uint64_t)v, od);
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// Category 2: binary with broadcasting
// ---------------------------------------------------------------------------

bool binary_float(const std::string& n, double a, double b, V* r) {
  double y;
  if (n == "add") y = a + b;
  else if (n == "sub") y = a - b;
  else if (n == "mul") y = a * b;
  else if (n == "div") y = a / b;
  else if (n == "floor_div") { double m; py_divmod(a, b, &y, &m); }
  else if (n == "mod") y = py_mod(a, b);
  else if (n == "pow") y = std::pow(a, b);
  else if (n == "maximum") y = std::isnan(a) ? a : std::isnan(b) ? b : (a > b ? a : b);
  else if (n == "minimum") y = std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? a : b);
  else if (n == "fmax") y = std::fmax(a, b);
  else if (n == "fmin") y = std::fmin(a, b);
  else if (n == "atan2") y = std::atan2(a, b);
  else if (n == "hypot") y = std::hypot(a, b);
  else if (n == "copysign") y = std::copysign(a, b);
  else if (n == "logical_and") { *r = vb(a != 0 && b != 0); return true; }
  else if (n == "logical_or") { *r = vb(a != 0 || b != 0); return true; }
  else if (n == "logical_xor") { *r = vb((a != 0) != (b != 0)); return true; }
  else if (n == "equal") { *r = vb(a == b); return true; }
  else if (n == "not_equal") { *r = vb(a != b); return true; }
  else if (n == "less") { *r = vb(a < b); return true; }
  else if (n == "less_equal") { *r = vb(a <= b); return true; }
  else if (n == "greater") { *r = vb(a > b); return true; }
  else if (n == "greater_equal") { *r = vb(a >= b); return true; }
  else return false;
  *r = vf(y);
  return true;
}

int64_t ipow(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    return 0;
  }
  uint64_t res = 1, base = (uint64_t)a;
  uint64_t e = (uint64_t)b;
  while (e) {
    if (e & 1) res *= base;
    base *= base;
    e >>= 1;
  }
  return (int64_t)res;
}

// Integer/bool binary ops on values of dtype d; results wrapped by store().
bool binary_int(const std::string& n, int64_t a, int64_t b, CTDataType d, V* r) {
  const uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  const int bits = d.bits;
  if (n == "add") *r = vi((int64_t)(ua + ub));  // bool: wraps to a|b
  else if (n == "sub") *r = vi((int64_t)(ua - ub));
  else if (n == "mul") *r = vi((int64_t)(ua * ub));  // bool: a&b
  else if (n == "div") *r = vf((double)a / (double)b);
  else if (n == "floor_div") {
    if (b == 0) *r = vi(0);
    else if (b == -1) *r = vi((int64_t)(0 - ua));  // MIN // -1 wraps
    else {
      int64_t q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
      *r = vi(q);
    }
  } else if (n == "mod") {
    if (b == 0 || b == -1) *r = vi(0);
    else {
      int64_t m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) m += b;
      *r = vi(m);
    }
  } else if (n == "pow") *r = vi(ipow(a, b));
  else if (n == "maximum" || n == "fmax") *r = vi(a > b ? a : b);
  else if (n == "minimum" || n == "fmin") *r = vi(a < b ? a : b);
  else if (n == "bitwise_and") *r = vi(a & b);
  else if (n == "bitwise_or") *r = vi(a | b);
  else if (n == "bitwise_xor") *r = vi(a ^ b);
  else if (n == "left_shift") *r = vi(b < 0 || b >= bits ? 0 : (int64_t)(ua << b));
  else if (n == "right_shift") *r = vi(b < 0 || b >= bits ? (a < 0 ? -1 : 0) : (a >> b));
  else if (n == "logical_and") *r = vb(a != 0 && b != 0);
  else if (n == "logical_or") *r = vb(a != 0 || b != 0);
  else if (n == "logical_xor") *r = vb((a != 0) != (b != 0));
  else if (n == "equal") *r = vb(a == b);
  else if (n == "not_equal") *r = vb(a != b);
  else if (n == "less") *r = vb(a < b);
  else if (n == "less_equal") *r = vb(a <= b);
  else if (n == "greater") *r = vb(a > b);
  else if (n == "greater_equal") *r = vb(a >= b);
  else return false;
  return true;
}

// Strides (in elements) of `in` seen at out's shape: 0 on broadcast dims.
bool broadcast_strides(const Array& in, const std::vector<int64_t>& oshape, std::vector<int64_t>* st,
                       std::string* why, const char* argname) {
  const size_t on = oshape.size(), in_n = in.shape.size();
  if (in_n > on) return fail(why, std::string(argname) + " has more dims than out");
  st->assign(on, 0);
  int64_t s = 1;
  for (size_t j = 0; j < in_n; ++j) {
    const size_t id = in_n - 1 - j, od = on - 1 - j;
    const int64_t e = in.shape[id];
    if (e == oshape[od]) (*st)[od] = e == 1 ? 0 : s;
    else if (e == 1) (*st)[od] = 0;
    else return fail(why, std::string(argname) + ".shape does not broadcast to out.shape");
    s *= e;
  }
  return true;
}

bool run_binary(const Call& c, Array& out, std::string* why) {
  const Array& a = *c.inputs[0];
  const Array& b = *c.inputs[1];
  const std::string& n = c.name;
  std::vector<int64_t> sa, sb;
  if (!broadcast_strides(a, out.shape, &sa, why, "a") || !broadcast_strides(b, out.shape, &sb, why, "b"))
    return false;
  const int64_t N = out.numel();
  const size_t nd = out.shape.size();
  std::vector<int64_t> idx(nd, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t k = 0; k < N; ++k) {
    V r;
    if (a.is_float()) {
      if (!binary_float(n, a.f[(size_t)oa], b.f[(size_t)ob], &r)) return fail(why, n + ": no float reference");
    } else {
      if (!binary_int(n, a.i[(size_t)oa], b.i[(size_t)ob], a.dtype, &r))
        return fail(why, n + ": not defined for " + dt_name(a.dtype));
    }
    store(out, k, r);
    // Advance the row-major index.
    for (size_t j = nd; j-- > 0;) {
      if (++idx[j] < out.shape[j]) {
        oa += sa[j];
        ob += sb[j];
        break;
      }
      oa -= sa[j] * (out.shape[j] - 1);
      ob -= sb[j] * (out.shape[j] - 1);
      idx[j] = 0;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------

bool run_reduce(const Call& c, Array& out, std::string* why) {
  const Array& x = *c.inputs[0];
  const std::string& n = c.name;
  const int nd = (int)x.shape.size();
  std::vector<bool> red((size_t)nd, false);
  if (c.axes.empty() && c.all_axes) {
    std::fill(red.begin(), red.end(), true);
  } else {
    for (int32_t a : c.axes) {
      int32_t w = a < 0 ? a + nd : a;
      if (w < 0 || w >= nd) return fail(why, n + ": axis " + std::to_string(a) + " out of range");
      if (red[(size_t)w]) return fail(why, n + ": repeated axis " + std::to_string(a));
      red[(size_t)w] = true;
    }
  }
  // Row-major strides of x; kept and reduced dims in x's order.
  std::vector<int64_t> st((size_t)nd, 1);
  for (int d = nd - 2; d >= 0; --d) st[(size_t)d] = st[(size_t)d + 1] * x.shape[(size_t)d + 1];
  std::vector<int> kept, rdims;
  for (int d = 0; d < nd; ++d) (red[(size_t)d] ? rdims : kept).push_back(d);
  auto offsets = [&](const std::vector<int>& dims) {
    std::vector<int64_t> offs{0};
    for (int d : dims) {
      std::vector<int64_t> next;
      next.reserve(offs.size() * (size_t)std::max<int64_t>(x.shape[(size_t)d], 0));
      for (int64_t o : offs)
        for (int64_t e = 0; e < x.shape[(size_t)d]; ++e) next.push_back(o + e * st[(size_t)d]);
      offs.swap(next);
    }
    return offs;
  };
  const std::vector<int64_t> obase = offsets(kept), roff = offsets(rdims);
  if ((int64_t)obase.size() != out.numel())
    return fail(why, n + ": out has " + std::to_string(out.numel()) + " elements, expected " +
                         std::to_string(obase.size()));
  const int64_t cnt = (int64_t)roff.size();
  const bool fl = x.is_float();
  std::vector<double> vf_(fl ? (size_t)cnt : 0);
  std::vector<int64_t> vi_(fl ? 0 : (size_t)cnt);
  for (size_t o = 0; o < obase.size(); ++o) {
    if (fl)
      for (int64_t j = 0; j < cnt; ++j) vf_[(size_t)j] = x.f[(size_t)(obase[o] + roff[(size_t)j])];
    else
      for (int64_t j = 0; j < cnt; ++j) vi_[(size_t)j] = x.i[(size_t)(obase[o] + roff[(size_t)j])];
    auto val = [&](int64_t j) { return fl ? vf_[(size_t)j] : (double)vi_[(size_t)j]; };
    V r;
    if (n == "sum") {
      if (fl) {
        long double s = 0;
        for (double v : vf_) s += v;
        r = vf((double)s);
      } else {
        uint64_t s = 0;
        for (int64_t v : vi_) s += (uint64_t)v;
        r = vi((int64_t)s);
      }
    } else if (n == "mean") {
      long double s = 0;
      if (fl) {
        for (double v : vf_) s += v;
      } else {
        // Exact: high (signed) and low 32-bit halves summed separately in
        // int64 (no overflow below 2^31 elements), combined once at the end.
        int64_t hi = 0, lo = 0;
        for (int64_t v : vi_) {
          hi += v >> 32;  // arithmetic shift: floor(v / 2^32)
          lo += (int64_t)(uint32_t)v;
        }
        s = std::ldexp((long double)hi, 32) + (long double)lo;
      }
      r = vf(cnt ? (double)(s / cnt) : kNaN);
    } else if (n == "prod") {
      if (fl) {
        long double p = 1;
        for (double v : vf_) p *= v;
        r = vf((double)p);
      } else {
        uint64_t p = 1;
        for (int64_t v : vi_) p *= (uint64_t)v;
        r = vi((int64_t)p);
      }
    } else if (n == "max" || n == "min" || n == "argmax" || n == "argmin") {
      if (cnt == 0) return fail(why, n + " of an empty set");
      const bool mx = n == "max" || n == "argmax";
      int64_t best = 0;
      if (fl) {
        for (int64_t j = 0; j < cnt; ++j) {
          const double v = vf_[(size_t)j], bv = vf_[(size_t)best];
          if (std::isnan(bv)) break;  // the first NaN wins
          if (std::isnan(v) || (mx ? v > bv : v < bv)) best = j;
        }
      } else {
        for (int64_t j = 1; j < cnt; ++j) {
          const int64_t v = vi_[(size_t)j], bv = vi_[(size_t)best];
          if (mx ? v > bv : v < bv) best = j;
        }
      }
      if (n[0] == 'a') r = vi(best);
      else r = load(x, obase[o] + roff[(size_t)best]);
    } else if (n == "any") {
      bool b = false;
      for (int64_t j = 0; j < cnt; ++j) b = b || val(j) != 0;
      r = vb(b);
    } else if (n == "all") {
      bool b = true;
      for (int64_t j = 0; j < cnt; ++j) b = b && val(j) != 0;
      r = vb(b);
    } else if (n == "norm2") {
      long double s = 0;
      for (int64_t j = 0; j < cnt; ++j) s += (long double)val(j) * val(j);
      r = vf((double)std::sqrt(s));
    } else if (n == "logsumexp") {
      if (!fl) return fail(why, "logsumexp: float dtypes only");
      if (cnt == 0) { r = vf(-kInf); }
      else {
        double m = -kInf;
        bool nan = false;
        for (double v : vf_) {
          if (std::isnan(v)) nan = true;
          else if (v > m) m = v;
        }
        if (nan) r = vf(kNaN);
        else if (std::isinf(m)) r = vf(m);
        else {
          long double s = 0;
          for (double v : vf_) s += std::exp((long double)v - m);
          r = vf((double)(m + std::log(s)));
        }
      }
    } else if (n == "var" || n == "std") {
      if (c.params.size() < 1) return fail(why, n + ": needs the correction parameter");
      long double s = 0;
      for (int64_t j = 0; j < cnt; ++j) s += val(j);
      const long double mean = cnt ? s / cnt : (long double)kNaN;
      long double ss = 0;
      for (int64_t j = 0; j < cnt; ++j) {
        const long double d = val(j) - mean;
        ss += d * d;
      }
      const double den = std::max((double)cnt - c.params[0], 0.0);
      double v = cnt ? (double)(ss / den) : kNaN;
      r = vf(n == "std" ? std::sqrt(v) : v);
    } else {
      return fail(why, n + ": unknown reduction");
    }
    store(out, (int64_t)o, r);
  }
  return true;
}

// ---------------------------------------------------------------------------
// Along-axis ops
// ---------------------------------------------------------------------------

bool run_along(const Call& c, Array& out, std::string* why) {
  const Array& x = *c.inputs[0];
  const std::string& n = c.name;
  const int nd = (int)x.shape.size();
  int ax = c.axis;
  if (nd == 0) {
    if (ax != 0 && ax != -1) return fail(why, n + ": bad axis for a 0-d x");
    ax = 0;
  } else {
    if (ax < 0) ax += nd;
    if (ax < 0 || ax >= nd) return fail(why, n + ": axis " + std::to_string(c.axis) + " out of range");
  }
  int64_t outer = 1, len = nd ? x.shape[(size_t)ax] : 1, inner = 1;
  for (int d = 0; d < ax; ++d) outer *= x.shape[(size_t)d];
  for (int d = ax + 1; d < nd; ++d) inner *= x.shape[(size_t)d];
  if (out.numel() != x.numel()) return fail(why, n + ": out and x sizes differ");
  const bool fl = x.is_float();
  if ((n == "softmax" || n == "log_softmax") && !fl) return fail(why, n + ": float dtypes only");
  for (int64_t p = 0; p < outer; ++p) {
    for (int64_t q = 0; q < inner; ++q) {
      auto at = [&](int64_t j) { return (size_t)((p * len + j) * inner + q); };
      if (n == "cumsum" || n == "cumprod") {
        const bool sum = n == "cumsum";
        if (fl) {
          long double acc = sum ? 0 : 1;
          for (int64_t j = 0; j < len; ++j) {
            acc = sum ? acc + x.f[at(j)] : acc * x.f[at(j)];
            store(out, (int64_t)at(j), vf((double)acc));
          }
        } else {
          uint64_t acc = sum ? 0 : 1;
          for (int64_t j = 0; j < len; ++j) {
            acc = sum ? acc + (uint64_t)x.i[at(j)] : acc * (uint64_t)x.i[at(j)];
            store(out, (int64_t)at(j), vi((int64_t)acc));
          }
        }
      } else if (n == "softmax" || n == "log_softmax") {
        double m = -kInf;
        bool nan = false;
        for (int64_t j = 0; j < len; ++j) {
          const double v = x.f[at(j)];
          if (std::isnan(v)) nan = true;
          else if (v > m) m = v;
        }
        if (nan) m = kNaN;
        long double s = 0;
        for (int64_t j = 0; j < len; ++j) s += std::exp((long double)x.f[at(j)] - m);
        for (int64_t j = 0; j < len; ++j) {
          const long double d = (long double)x.f[at(j)] - m;
          store(out, (int64_t)at(j), vf(n == "softmax" ? (double)(std::exp(d) / s) : (double)(d - std::log(s))));
        }
      } else {
        return fail(why, n + ": unknown along-axis op");
      }
    }
  }
  return true;
}

// Values beyond the range of a float output dtype are +-inf there (IEEE
// round to nearest overflows at max + half an ulp): the one part of rounding
// to the output dtype the references apply, since no tolerance covers it
// (cast of 1e5 to float16 is inf, as SEMANTICS.md says).
void overflow_to_inf(Array& out) {
  if (!out.is_float() || out.dtype.bits == 64) return;
  double lim;
  if (out.dtype.code == CT_BFLOAT) lim = std::ldexp(2.0 - std::ldexp(1.0, -8), 127);
  else if (out.dtype.bits == 16) lim = 65520.0;
  else lim = std::ldexp(2.0 - std::ldexp(1.0, -24), 127);
  for (double& v : out.f)
    if (std::fabs(v) >= lim) v = std::copysign(kInf, v);
}

// ---------------------------------------------------------------------------
// Op classes for domains and tolerances
// ---------------------------------------------------------------------------

bool in(const std::string& n, std::initializer_list<const char*> names) {
  for (const char* s : names)
    if (n == s) return true;
  return false;
}

bool is_transcendental(const std::string& n) {
  return in(n, {"exp", "expm1", "exp2", "log", "log1p", "log2", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid",
                "gelu", "gelu_tanh", "silu", "softplus", "erf", "elu", "pow_scalar", "pow", "atan2", "hypot"});
}

bool is_accumulating(const std::string& n) {
  return in(n, {"sum", "mean", "prod", "norm2", "logsumexp", "var", "std", "softmax", "log_softmax", "cumsum",
                "cumprod"});
}

}  // namespace

// ---------------------------------------------------------------------------
// run
// ---------------------------------------------------------------------------

bool run(const Call& c, const std::vector<Array*>& outputs, std::string* why) {
  const int kind = kind_of(c.name);
  if (kind == 0) return fail(why, "no reference for op '" + c.name + "' (not in ctensor.h's op table)");
  if (kind == CT_KIND_NN) return run_nn(c, outputs, why);

  static const int kInputs[] = {0, 1, 1, 3, 1, 2, 1, 1};
  const size_t ni = (size_t)kInputs[kind];
  if (c.inputs.size() < ni) return fail(why, c.name + ": expected " + std::to_string(ni) + " inputs");
  for (size_t k = 0; k < ni; ++k)
    if (!c.inputs[k]) return fail(why, c.name + ": input " + std::to_string(k) + " is null");
  if (outputs.empty() || !outputs[0]) return fail(why, c.name + ": no output array");
  Array& out = *outputs[0];
  out.reset(out.dtype, out.shape);
  for (size_t k = 0; k < ni; ++k) {
    const Array& a = *c.inputs[k];
    const size_t want = (size_t)std::max<int64_t>(a.numel(), 0);
    if ((a.is_float() ? a.f.size() : a.i.size()) != want)
      return fail(why, c.name + ": input " + std::to_string(k) + " holds the wrong number of values");
  }
  bool ok = false;
  switch (kind) {
    case CT_KIND_UNARY:
    case CT_KIND_UNARY_PARAM:
      if (c.inputs[0]->numel() != out.numel()) return fail(why, c.name + ": x and out sizes differ");
      ok = run_unary(c, out, why);
      break;
    case CT_KIND_TERNARY: ok = run_ternary(c, out, why); break;
    case CT_KIND_CAST:
      if (c.inputs[0]->numel() != out.numel()) return fail(why, "cast: x and out sizes differ");
      ok = run_cast(c, out, why);
      break;
    case CT_KIND_BINARY: ok = run_binary(c, out, why); break;
    case CT_KIND_REDUCE: ok = run_reduce(c, out, why); break;
    case CT_KIND_ALONG_AXIS: ok = run_along(c, out, why); break;
    default: return fail(why, c.name + ": unknown kind");
  }
  if (ok) overflow_to_inf(out);
  return ok;
}

// ---------------------------------------------------------------------------
// domain
// ---------------------------------------------------------------------------
//
// `nonzero` for float inputs means "away from 0": the generator should redraw
// values with |x| < 0.5 (the ranges below are all [-4, 4] when it is set);
// for integers it means "not 0".

Domain domain(const std::string& n, int input, CTDataType dt) {
  Domain d;  // [-4, 4], ints [-20, 20]
  const bool fl = dt_float(dt);
  if (in(n, {"log", "log2", "sqrt", "rsqrt"})) {
    d.lo = 0.1;
    d.hi = 10;
  } else if (n == "log1p") {
    d.lo = -0.5;
    d.hi = 4;
  } else if (n == "tan") {
    d.lo = -1.2;
    d.hi = 1.2;
  } else if (n == "reciprocal") {
    d.nonzero = fl;     // ints: 1/0 = 0 is defined and exact
    d.ilo = -3;         // small, so that 1 and -1 (results +-1) are common
    d.ihi = 3;
  } else if (n == "pow_scalar") {
    d.lo = 0.5;
    d.hi = 4;
  } else if (n == "pow") {
    if (input == 0) {
      d.lo = 0.5;
      d.hi = 4;
      d.ilo = -4;
      d.ihi = 4;
    } else {
      d.lo = -3;
      d.hi = 3;
      d.ilo = -1;  // -1: the 1 / a^-b rule (exact); up to 5 fits 4^5 in int16+
      d.ihi = 5;
    }
  } else if (n == "div") {
    if (input == 1) d.nonzero = true;
  } else if (n == "floor_div" || n == "mod") {
    if (input == 0) {
      d.ilo = -200;  // clipped to int8/uint8: reaches INT8_MIN (MIN // -1)
      d.ihi = 200;
    } else {
      d.nonzero = fl;  // integer x // 0 and x % 0 are 0: exact, keep them
    }
  } else if (n == "left_shift" || n == "right_shift") {
    if (input == 1) {
      d.ilo = -2;  // a few counts out of [0, bits) on purpose: exact 0 / sign fill
      d.ihi = dt.bits + 2;
    } else {
      d.ilo = -200;
      d.ihi = 200;
    }
  } else if (in(n, {"neg", "abs", "square", "add", "sub", "mul", "fma", "add_scalar", "mul_scalar",
                    "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor"})) {
    d.ilo = -200;  // wraps int8/uint8 (and int16 for products): exact
    d.ihi = 200;
  } else if (n == "cast") {
    d.lo = -300;  // float -> int8/uint8 saturates; -> int truncates
    d.hi = 300;
    d.ilo = -300;  // int16+ -> int8/uint8 wraps
    d.ihi = 300;
  } else if (in(n, {"logical_not", "logical_and", "logical_or", "logical_xor", "any", "all"})) {
    d.ilo = -2;  // plenty of zeros
    d.ihi = 2;
  } else if (in(n, {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "maximum",
                    "minimum", "fmax", "fmin"})) {
    d.ilo = -3;  // plenty of ties
    d.ihi = 3;
  } else if (n == "prod" || n == "cumprod") {
    d.lo = -1.5;  // products of many elements neither overflow nor vanish fast
    d.hi = 1.5;
    d.nonzero = true;
    d.ilo = -3;
    d.ihi = 3;
  } else if (n == "lerp") {
    if (input == 2) {
      d.lo = -0.25;  // weights mostly in [0, 1], both branches of the formula
      d.hi = 1.25;
    }
  } else if (n == "argmax" || n == "argmin" || n == "max" || n == "min") {
    d.ilo = -5;  // ties: the first occurrence must win
    d.ihi = 5;
  }
  if (dt_bool(dt)) {
    d.ilo = 0;
    d.ihi = 1;
  }
  if (dt_uint(dt) && d.ilo < 0) d.ilo = 0;
  if (!dt_float(dt)) {
    d.ilo = std::max(d.ilo, dt_min(dt));
    d.ihi = std::min(d.ihi, dt_max(dt));
  }
  return d;
}

// ---------------------------------------------------------------------------
// tolerance
// ---------------------------------------------------------------------------
//
// Classes: exactly rounded / few-rounding ops ("simple"), libm-grade
// transcendentals, and accumulating ops (reductions, along-axis). Float64 and
// float32 tolerances are tight enough that adding 1.0 to any element of
// magnitude <= 100 fails: atol + rtol * 101 < 1.

// NN ops (oneDNN accumulates in float32; bfloat16 pooling backwards
// accumulate overlapping windows in bfloat16), measured over 200 seeds of
// the nn_cases data: float32 needs ~4e-6 absolute, bfloat16 one output
// rounding (2^-8) plus 1.06e-2 absolute on max_pool2d_backward.
static bool is_nn(const std::string& n) {
  static const char* const names[] = {"matmul", "conv2d", "conv2d_backward_data", "conv2d_backward_weight",
                                      "max_pool2d", "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward",
                                      "batch_norm", "batch_norm_training", "batch_norm_backward", "layer_norm",
                                      "layer_norm_backward"};
  for (const char* x : names)
    if (n == x) return true;
  return false;
}

Tolerance tolerance(const std::string& n, CTDataType dt) {
  Tolerance t;
  if (!dt_float(dt)) return t;  // integers and bool: exact
  if (is_nn(n)) {
    if (dt.bits == 64) t.rtol = 1e-10, t.atol = 1e-10;
    else if (dt.bits == 32) t.rtol = 1e-4, t.atol = 5e-5;
    else t.rtol = 1e-2, t.atol = 2e-2;
    return t;
  }
  const bool tr = is_transcendental(n), acc = is_accumulating(n);
  const bool running = n == "cumsum" || n == "cumprod";
  if (dt.bits == 64) {
    t.rtol = (tr || acc) ? 1e-10 : 1e-12;
    t.atol = acc ? 1e-10 : 1e-12;
  } else if (dt.bits == 32) {
    if (acc) {
      t.rtol = 1e-5;
      t.atol = 1e-5;
    } else if (tr) {
      t.rtol = 5e-6;
      t.atol = 1e-6;
    } else {
      t.rtol = 1e-6;
      t.atol = 1e-6;
    }
  } else if (dt_half(dt) && dt.code == CT_FLOAT) {  // float16
    t.rtol = 2e-3;
    t.atol = running ? 1e-2 : acc ? 1e-4 : 1e-5;
  } else {  // bfloat16
    t.rtol = 1.6e-2;
    t.atol = running ? 5e-2 : 1e-3;
  }
  return t;
}

}  // namespace ctref
