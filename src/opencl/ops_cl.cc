// ops_cl.cc — what each op computes on an OpenCL device: one row per op, in
// OpenCL C, per element class (floats, signed and unsigned integers, bool).
// Everything else about an op (kind, dtypes, output dtype, parameters)
// comes from the registry; source.cc instantiates these rows in the
// templates of their kind. The semantics are the reference's (NumPy's):
// integers wrap, x // 0 = x % 0 = 0, shifts by a count outside [0, bits)
// give 0 or the sign fill, NaN propagates in maximum/minimum, max, argmax.
//
// Names the expressions use: x (unary), a, b (binary), a, b, c (ternary:
// where's a is the condition); p0, p1 the scalar parameters (of the compute
// type for floats, long/ulong for integers); T the compute type of the data
// input, UT its unsigned type, O the output's compute type, BITS the data
// dtype's width, CT_ILIM the magnitude from which every T is an integer.
#include "source.h"

namespace ctcl {
namespace {

#define F_ kFloat
const ElemRow kElem[] = {
    // {op, {bool, signed, unsigned, float}}
    {CT_OP_NEG, {nullptr, "(T)(0 - (UT)x)", "(T)(0 - x)", "-x"}},
    {CT_OP_ABS, {"x", "(x < 0 ? (T)(0 - (UT)x) : x)", "x", "fabs(x)"}},
    {CT_OP_SIGN, {nullptr, "(T)(x > 0 ? 1 : x < 0 ? -1 : 0)", "(T)(x > 0 ? 1 : 0)", "(x > 0 ? (T)1 : x < 0 ? (T)-1 : x)"}},
    {CT_OP_EXP, {nullptr, nullptr, nullptr, "CT_EXP(x)"}},
    {CT_OP_EXPM1, {nullptr, nullptr, nullptr, "CT_EXPM1(x)"}},
    {CT_OP_EXP2, {nullptr, nullptr, nullptr, "CT_EXP2(x)"}},
    {CT_OP_LOG, {nullptr, nullptr, nullptr, "CT_LOG(x)"}},
    {CT_OP_LOG1P, {nullptr, nullptr, nullptr, "CT_LOG1P(x)"}},
    {CT_OP_LOG2, {nullptr, nullptr, nullptr, "CT_LOG2(x)"}},
    {CT_OP_SQRT, {nullptr, nullptr, nullptr, "sqrt(x)"}},
    {CT_OP_RSQRT, {nullptr, nullptr, nullptr, "((T)1 / sqrt(x))"}},
    {CT_OP_RECIPROCAL, {nullptr, "(T)(x == 1 ? 1 : x == -1 ? -1 : 0)", "(T)(x == 1 ? 1 : 0)", "((T)1 / x)"}},
    {CT_OP_SQUARE, {nullptr, "(T)((UT)x * (UT)x)", "(T)(x * x)", "(x * x)"}},
    {CT_OP_SIN, {nullptr, nullptr, nullptr, "CT_SIN(x)"}},
    {CT_OP_COS, {nullptr, nullptr, nullptr, "CT_COS(x)"}},
    {CT_OP_TAN, {nullptr, nullptr, nullptr, "CT_TAN(x)"}},
    {CT_OP_TANH, {nullptr, nullptr, nullptr, "CT_TANH(x)"}},
    {CT_OP_SIGMOID, {nullptr, nullptr, nullptr, "CT_SIGMOID(x)"}},
    {CT_OP_RELU, {nullptr, "(x < 0 ? (T)0 : x)", "x", "(x < 0 ? (T)0 : x)"}},
    {CT_OP_GELU, {nullptr, nullptr, nullptr, "CT_GELU(x)"}},
    {CT_OP_GELU_TANH, {nullptr, nullptr, nullptr, "(x * CT_SIGMOID((T)1.5957691216057307117597842397375 * (x + (T)0.044715 * x * x * x)))"}},
    {CT_OP_SILU, {nullptr, nullptr, nullptr, "(x * CT_SIGMOID(x))"}},
    {CT_OP_SOFTPLUS, {nullptr, nullptr, nullptr, "CT_SOFTPLUS(x)"}},
    {CT_OP_ERF, {nullptr, nullptr, nullptr, "CT_ERF(x)"}},
    {CT_OP_FLOOR, {nullptr, "x", "x", "floor(x)"}},
    {CT_OP_CEIL, {nullptr, "x", "x", "ceil(x)"}},
    {CT_OP_ROUND, {nullptr, "x", "x", "rint(x)"}},
    {CT_OP_TRUNC, {nullptr, "x", "x", "trunc(x)"}},
    {CT_OP_LOGICAL_NOT, {"(x == 0)", "(x == 0)", "(x == 0)", "(x == 0)"}},
    {CT_OP_BITWISE_NOT, {"(x == 0)", "(T)~x", "(T)~x", nullptr}},
    {CT_OP_ISNAN, {"0", "0", "0", "(isnan(x) ? 1 : 0)"}},
    {CT_OP_ISINF, {"0", "0", "0", "(isinf(x) ? 1 : 0)"}},
    {CT_OP_ISFINITE, {"1", "1", "1", "(isfinite(x) ? 1 : 0)"}},
    {CT_OP_HARDSWISH, {nullptr, nullptr, nullptr, "ct_hardswish(x)"}},
    {CT_OP_LEAKY_RELU, {nullptr, nullptr, nullptr, "(x >= 0 ? x : p0 * x)"}},
    {CT_OP_ELU, {nullptr, nullptr, nullptr, "(x > 0 ? x : p0 * CT_EXPM1(x))"}},
    {CT_OP_CLAMP, {nullptr, "ct_clamp(x, p0, p1)", "ct_clamp(x, p0, p1)", "ct_clamp(x, p0, p1)"}},
    {CT_OP_POW_SCALAR, {nullptr, nullptr, nullptr, "CT_POW(x, p0)"}},
    {CT_OP_ADD_SCALAR, {nullptr, "(T)((UT)x + (UT)p0)", "(T)(x + (T)p0)", "(x + p0)"}},
    {CT_OP_MUL_SCALAR, {nullptr, "(T)((UT)x * (UT)p0)", "(T)(x * (T)p0)", "(x * p0)"}},
    {CT_OP_WHERE, {"(a != 0 ? b : c)", "(a != 0 ? b : c)", "(a != 0 ? b : c)", "(a != 0 ? b : c)"}},
    {CT_OP_FMA, {nullptr, "(T)((UT)a * (UT)b + (UT)c)", "(T)(a * b + c)", "fma(a, b, c)"}},
    {CT_OP_LERP, {nullptr, nullptr, nullptr, "(c < (T)0.5 ? a + c * (b - a) : b - (b - a) * ((T)1 - c))"}},
    // binary
    {CT_OP_ADD, {"(a | b)", "(T)((UT)a + (UT)b)", "(T)(a + b)", "(a + b)"}},
    {CT_OP_SUB, {nullptr, "(T)((UT)a - (UT)b)", "(T)(a - b)", "(a - b)"}},
    {CT_OP_MUL, {"(a & b)", "(T)((UT)a * (UT)b)", "(T)(a * b)", "(a * b)"}},
    {CT_OP_DIV, {"((O)a / (O)b)", "((O)a / (O)b)", "((O)a / (O)b)", "((O)a / (O)b)"}},
    {CT_OP_FLOOR_DIV, {nullptr, "ct_floordiv(a, b)", "(b == 0 ? (T)0 : (T)(a / b))", "ct_floordiv(a, b)"}},
    {CT_OP_MOD, {nullptr, "ct_mod(a, b)", "(b == 0 ? (T)0 : (T)(a % b))", "ct_mod(a, b)"}},
    {CT_OP_POW, {nullptr, "ct_ipow(a, b)", "ct_ipow(a, b)", "CT_POW(a, b)"}},
    {CT_OP_MAXIMUM, {"(a > b ? a : b)", "(a > b ? a : b)", "(a > b ? a : b)", "(isnan(a) ? a : isnan(b) ? b : a > b ? a : b)"}},
    {CT_OP_MINIMUM, {"(a < b ? a : b)", "(a < b ? a : b)", "(a < b ? a : b)", "(isnan(a) ? a : isnan(b) ? b : a < b ? a : b)"}},
    {CT_OP_FMAX, {"(a > b ? a : b)", "(a > b ? a : b)", "(a > b ? a : b)", "fmax(a, b)"}},
    {CT_OP_FMIN, {"(a < b ? a : b)", "(a < b ? a : b)", "(a < b ? a : b)", "fmin(a, b)"}},
    {CT_OP_ATAN2, {nullptr, nullptr, nullptr, "CT_ATAN2(a, b)"}},
    {CT_OP_HYPOT, {nullptr, nullptr, nullptr, "CT_HYPOT(a, b)"}},
    {CT_OP_COPYSIGN, {nullptr, nullptr, nullptr, "copysign(a, b)"}},
    {CT_OP_BITWISE_AND, {"(a & b)", "(T)(a & b)", "(T)(a & b)", nullptr}},
    {CT_OP_BITWISE_OR, {"(a | b)", "(T)(a | b)", "(T)(a | b)", nullptr}},
    {CT_OP_BITWISE_XOR, {"(a ^ b)", "(T)(a ^ b)", "(T)(a ^ b)", nullptr}},
    {CT_OP_LEFT_SHIFT, {nullptr, "((b < 0 || b >= BITS) ? (T)0 : (T)((UT)a << b))", "(b >= BITS ? (T)0 : (T)(a << b))", nullptr}},
    {CT_OP_RIGHT_SHIFT, {nullptr, "((b < 0 || b >= BITS) ? (T)(a < 0 ? -1 : 0) : (T)(a >> b))", "(b >= BITS ? (T)0 : (T)(a >> b))", nullptr}},
    {CT_OP_LOGICAL_AND, {"(a != 0 && b != 0)", "(a != 0 && b != 0)", "(a != 0 && b != 0)", "(a != 0 && b != 0)"}},
    {CT_OP_LOGICAL_OR, {"(a != 0 || b != 0)", "(a != 0 || b != 0)", "(a != 0 || b != 0)", "(a != 0 || b != 0)"}},
    {CT_OP_LOGICAL_XOR, {"((a != 0) != (b != 0))", "((a != 0) != (b != 0))", "((a != 0) != (b != 0))", "((a != 0) != (b != 0))"}},
    {CT_OP_EQUAL, {"(a == b)", "(a == b)", "(a == b)", "(a == b)"}},
    {CT_OP_NOT_EQUAL, {"(a != b)", "(a != b)", "(a != b)", "(a != b)"}},
    {CT_OP_LESS, {"(a < b)", "(a < b)", "(a < b)", "(a < b)"}},
    {CT_OP_LESS_EQUAL, {"(a <= b)", "(a <= b)", "(a <= b)", "(a <= b)"}},
    {CT_OP_GREATER, {"(a > b)", "(a > b)", "(a > b)", "(a > b)"}},
    {CT_OP_GREATER_EQUAL, {"(a >= b)", "(a >= b)", "(a >= b)", "(a >= b)"}},
};
#undef F_

// Reductions. State St: AF f0, f1, f2 (AF: double where the device has it),
// long i0, ulong u0, long idx. Integers accumulate in 64 bits (wrapping),
// floats in AF. An output's elements split into P contiguous chunks (P and
// the chunks fixed by the shapes), each read as four interleaved states
// (independent dependency chains); states and chunks merge in a fixed order,
// so the result depends only on the shapes, never on work-group sizes.
// argmax/argmin merge by value, then by the smaller index (first NaN, first
// maximum), since interleaved states do not arrive in index order.
const ReduceRow kReduce[] = {
    {CT_OP_SUM,
     {{"s->f0 = 0;", "s->f0 += (AF)x;", "s->f0 += o->f0;", "return (O)s->f0;"},
      {"s->u0 = 0;", "s->u0 += (ulong)(long)x;", "s->u0 += o->u0;", "return (O)s->u0;"}}},
    {CT_OP_MEAN,
     {{"s->f0 = 0;", "s->f0 += (AF)x;", "s->f0 += o->f0;", "return (O)(s->f0 / (AF)count);"},
      {"s->f0 = 0;", "s->f0 += (AF)x;", "s->f0 += o->f0;", "return (O)(s->f0 / (AF)count);"}}},
    {CT_OP_PROD,
     {{"s->f0 = 1;", "s->f0 *= (AF)x;", "s->f0 *= o->f0;", "return (O)s->f0;"},
      {"s->u0 = 1;", "s->u0 *= (ulong)(long)x;", "s->u0 *= o->u0;", "return (O)s->u0;"}}},
    {CT_OP_MAX,
     {{"s->f0 = -INFINITY;", "if (isnan((AF)x) || (AF)x > s->f0) s->f0 = (AF)x;",
       "if ((isnan(o->f0) && !isnan(s->f0)) || o->f0 > s->f0) s->f0 = o->f0;", "return (O)s->f0;"},
      {"s->i0 = CT_IMIN;", "if ((CT_I)x > s->i0) s->i0 = (CT_I)x;", "if (o->i0 > s->i0) s->i0 = o->i0;",
       "return (O)s->i0;"}}},
    {CT_OP_MIN,
     {{"s->f0 = INFINITY;", "if (isnan((AF)x) || (AF)x < s->f0) s->f0 = (AF)x;",
       "if ((isnan(o->f0) && !isnan(s->f0)) || o->f0 < s->f0) s->f0 = o->f0;", "return (O)s->f0;"},
      {"s->i0 = CT_IMAX;", "if ((CT_I)x < s->i0) s->i0 = (CT_I)x;", "if (o->i0 < s->i0) s->i0 = o->i0;",
       "return (O)s->i0;"}}},
    {CT_OP_ARGMAX,
     {{"s->idx = -1; s->f0 = 0;",
       "if (s->idx < 0 || (!isnan(s->f0) && (isnan((AF)x) || (AF)x > s->f0))) { s->f0 = (AF)x; s->idx = k; }",
       "if (o->idx >= 0 && (s->idx < 0 || ct_fbetter(o->f0, o->idx, s->f0, s->idx, 1))) *s = *o;",
       "return (O)s->idx;"},
      {"s->idx = -1; s->i0 = 0;", "if (s->idx < 0 || (CT_I)x > s->i0) { s->i0 = (CT_I)x; s->idx = k; }",
       "if (o->idx >= 0 && (s->idx < 0 || o->i0 > s->i0 || (o->i0 == s->i0 && o->idx < s->idx))) *s = *o;",
       "return (O)s->idx;"}}},
    {CT_OP_ARGMIN,
     {{"s->idx = -1; s->f0 = 0;",
       "if (s->idx < 0 || (!isnan(s->f0) && (isnan((AF)x) || (AF)x < s->f0))) { s->f0 = (AF)x; s->idx = k; }",
       "if (o->idx >= 0 && (s->idx < 0 || ct_fbetter(o->f0, o->idx, s->f0, s->idx, 0))) *s = *o;",
       "return (O)s->idx;"},
      {"s->idx = -1; s->i0 = 0;", "if (s->idx < 0 || (CT_I)x < s->i0) { s->i0 = (CT_I)x; s->idx = k; }",
       "if (o->idx >= 0 && (s->idx < 0 || o->i0 < s->i0 || (o->i0 == s->i0 && o->idx < s->idx))) *s = *o;",
       "return (O)s->idx;"}}},
    {CT_OP_ANY,
     {{"s->u0 = 0;", "s->u0 |= (x != 0);", "s->u0 |= o->u0;", "return (O)(s->u0 != 0);"},
      {"s->u0 = 0;", "s->u0 |= (x != 0);", "s->u0 |= o->u0;", "return (O)(s->u0 != 0);"}}},
    {CT_OP_ALL,
     {{"s->u0 = 1;", "s->u0 &= (x != 0);", "s->u0 &= o->u0;", "return (O)(s->u0 != 0);"},
      {"s->u0 = 1;", "s->u0 &= (x != 0);", "s->u0 &= o->u0;", "return (O)(s->u0 != 0);"}}},
    {CT_OP_NORM2,
     {{"s->f0 = 0;", "s->f0 += (AF)x * (AF)x;", "s->f0 += o->f0;", "return (O)sqrt(s->f0);"},
      {"s->f0 = 0;", "s->f0 += (AF)x * (AF)x;", "s->f0 += o->f0;", "return (O)sqrt(s->f0);"}}},
    {CT_OP_LOGSUMEXP,
     {{"s->f0 = -INFINITY; s->f1 = 0;", "ct_lse_add(s, (AF)x, 1);",
       "if (o->f1 != 0 || isnan(o->f0)) ct_lse_add(s, o->f0, o->f1);", "return (O)ct_lse_fin(s);"},
      {nullptr, nullptr, nullptr, nullptr}}},
    {CT_OP_VAR,
     {{"s->f0 = 0; s->f1 = 0; s->f2 = 0;", "ct_welford(s, (AF)x);", "ct_chan(s, o);", "return (O)ct_var_fin(s, count, p0);"},
      {"s->f0 = 0; s->f1 = 0; s->f2 = 0;", "ct_welford(s, (AF)x);", "ct_chan(s, o);", "return (O)ct_var_fin(s, count, p0);"}}},
    {CT_OP_STD,
     {{"s->f0 = 0; s->f1 = 0; s->f2 = 0;", "ct_welford(s, (AF)x);", "ct_chan(s, o);",
       "return (O)sqrt(ct_var_fin(s, count, p0));"},
      {"s->f0 = 0; s->f1 = 0; s->f2 = 0;", "ct_welford(s, (AF)x);", "ct_chan(s, o);",
       "return (O)sqrt(ct_var_fin(s, count, p0));"}}},
};

// Along-axis ops: the body runs in a function that has x (element j at
// LDX(j)), out (STO(j, v)), len; AF as above. One work-item per line, in
// order along it: deterministic, and in place (out == x) reads each element
// before it writes it.
const AlongRow kAlong[] = {
    {CT_OP_SOFTMAX,
     {"AF m = -INFINITY; for (long j = 0; j < len; ++j) { AF v = (AF)LDX(j); if (isnan(v) || v > m) m = isnan(m) ? m : v; }\n"
      "  AF s = 0; for (long j = 0; j < len; ++j) s += exp((AF)LDX(j) - m);\n"
      "  for (long j = 0; j < len; ++j) STO(j, (O)(exp((AF)LDX(j) - m) / s));",
      nullptr}},
    {CT_OP_LOG_SOFTMAX,
     {"AF m = -INFINITY; for (long j = 0; j < len; ++j) { AF v = (AF)LDX(j); if (isnan(v) || v > m) m = isnan(m) ? m : v; }\n"
      "  AF s = 0; for (long j = 0; j < len; ++j) s += exp((AF)LDX(j) - m);\n"
      "  AF ls = log(s); for (long j = 0; j < len; ++j) STO(j, (O)(((AF)LDX(j) - m) - ls));",
      nullptr}},
    {CT_OP_CUMSUM,
     {"AF acc = 0; for (long j = 0; j < len; ++j) { acc += (AF)LDX(j); STO(j, (O)acc); }",
      "ulong acc = 0; for (long j = 0; j < len; ++j) { acc += (ulong)(long)LDX(j); STO(j, (O)acc); }"}},
    {CT_OP_CUMPROD,
     {"AF acc = 1; for (long j = 0; j < len; ++j) { acc *= (AF)LDX(j); STO(j, (O)acc); }",
      "ulong acc = 1; for (long j = 0; j < len; ++j) { acc *= (ulong)(long)LDX(j); STO(j, (O)acc); }"}},
};

const char kFloatHelpers[] = R"CL(
CT_INL T ct_hardswish(T x) { T r = x + (T)3; r = r < 0 ? (T)0 : r > 6 ? (T)6 : r; return x * r / (T)6; }
CT_INL T ct_clamp(T x, T lo, T hi) { T r = x < lo ? lo : x; return r > hi ? hi : r; }
CT_INL int ct_same_sign(T r, T b) { return r == 0 || (r < 0) == (b < 0); }
CT_INL T ct_floordiv(T a, T b) {
  if (b == 0) return a / b;
  if (isnan(a) || isnan(b) || isinf(a)) return (T)NAN;
  if (isinf(b)) return (a == 0 || (a < 0) == (b < 0)) ? copysign((T)0, a / b) : (T)-1;
  T t = a / b;
  if (!(fabs(t) < (T)CT_ILIM)) return t;
  T q = floor(t);
  /* t = a / b rounded, so floor(t) is within 1 of the floor of the exact
     quotient: one step each way (selects, not loops, which keep PoCL's
     work-group loop scalar), the remainder's sign exact by fma. */
  q = ct_same_sign(fma(-q, b, a), b) ? q : q - 1;
  q = ct_same_sign(fma(-(q + 1), b, a), b) ? q + 1 : q;
  return q == 0 ? copysign((T)0, t) : q;
}
CT_INL T ct_mod(T a, T b) {
  if (isnan(a) || isnan(b) || isinf(a) || b == 0) return (T)NAN;
  if (isinf(b)) return a == 0 ? copysign((T)0, b) : (a < 0) == (b < 0) ? a : b;
  T q = ct_floordiv(a, b), m;
  if (fabs(q) < (T)CT_ILIM) {
    m = fma(-q, b, a);
  } else {
    m = fmod(a, b);
    if (m != 0 && (m < 0) != (b < 0)) m += b;
  }
  return m == 0 ? copysign((T)0, b) : m;
}
)CL";

const char kSignedHelpers[] = R"CL(
CT_INL T ct_clamp(T x, long lo, long hi) { long r = x < lo ? lo : (long)x; return (T)(r > hi ? hi : r); }
CT_INL T ct_floordiv(T a, T b) {
  if (b == 0) return 0;
  if (b == -1) return (T)(0 - (UT)a);
  T q = (T)(a / b);
  if ((T)(a % b) != 0 && ((a < 0) != (b < 0))) q -= 1;
  return q;
}
CT_INL T ct_mod(T a, T b) {
  if (b == 0 || b == -1) return 0;
  T m = (T)(a % b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}
CT_INL T ct_ipow(T a, T b) {
  if (b < 0) return (T)(a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0);
  UT r = 1, base = (UT)a;
  for (UT e = (UT)b; e; e >>= 1) {
    if (e & 1) r = (UT)(r * base);
    base = (UT)(base * base);
  }
  return (T)r;
}
)CL";

const char kUnsignedHelpers[] = R"CL(
CT_INL T ct_clamp(T x, ulong lo, ulong hi) { ulong r = x < lo ? lo : (ulong)x; return (T)(r > hi ? hi : r); }
CT_INL T ct_ipow(T a, T b) {
  T r = 1, base = a;
  for (T e = b; e; e >>= 1) {
    if (e & 1) r = (T)(r * base);
    base = (T)(base * base);
  }
  return r;
}
)CL";

}  // namespace

const ElemRow* elem_row(int32_t op) {
  for (const ElemRow& r : kElem)
    if (r.op == op) return &r;
  return nullptr;
}
const ReduceRow* reduce_row(int32_t op) {
  for (const ReduceRow& r : kReduce)
    if (r.op == op) return &r;
  return nullptr;
}
const AlongRow* along_row(int32_t op) {
  for (const AlongRow& r : kAlong)
    if (r.op == op) return &r;
  return nullptr;
}
const char* helpers(int cls) {
  switch (cls) {
    case kFloat: return kFloatHelpers;
    case kSigned: return kSignedHelpers;
    case kUnsigned: return kUnsignedHelpers;
    default: return "";
  }
}

}  // namespace ctcl
