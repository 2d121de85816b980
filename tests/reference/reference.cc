// reference.cc — the one table of references keyed by op id (joined from the
// per-kind files' tables), run(), the op facts of CT_OP_TABLE, and the helpers
// every reference shares: dtypes, the float16/bfloat16 and float8 codecs, shapes,
// broadcasting and reduction groups.
#include <map>
#include <sstream>

#include "ref_internal.h"

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

// ---------------------------------------------------------------------------
// Op facts from the header's op table (no library call)
// ---------------------------------------------------------------------------

namespace {

struct OpFacts {
  int32_t id;
  const char* name;
  int kind;
  int num_params;
  const char* tensors;
};

const OpFacts kFacts[] = {
#define CTREF_FACTS_(ID, id, name, kind, np, pn, tn, dts, out, inpl, shp, dsc, summary) {id, #name, kind, np, tn},
    CT_OP_TABLE(CTREF_FACTS_)
#undef CTREF_FACTS_
};

const OpFacts* facts(int32_t op) {
  for (const OpFacts& f : kFacts)
    if (f.id == op) return &f;
  return nullptr;
}

// The joined table, indexed by op id; built once.
struct Index {
  std::vector<const Entry*> by_id;
  std::string duplicate;  // an op with two references (a bug in a table)
  Index() {
    for (Table t : {elementwise_table(), binary_table(), reduce_table(), nn_conv_table(), nn_pool_table(),
                    nn_norm_table(), nn_attention_table(), index_table()})
      for (size_t k = 0; k < t.size; ++k) {
        const Entry& e = t.entries[k];
        if (e.op < 0) continue;
        if ((size_t)e.op >= by_id.size()) by_id.resize((size_t)e.op + 1, nullptr);
        if (by_id[(size_t)e.op] && duplicate.empty()) duplicate = std::to_string(e.op);
        by_id[(size_t)e.op] = &e;
      }
  }
};

const Index& index() {
  static const Index ix;
  return ix;
}

}  // namespace

const char* op_name(int32_t op) {
  const OpFacts* f = facts(op);
  return f ? f->name : "";
}

int32_t op_id(const std::string& name) {
  for (const OpFacts& f : kFacts)
    if (name == f.name) return f.id;
  return -1;
}

int op_kind(int32_t op) {
  const OpFacts* f = facts(op);
  return f ? f->kind : 0;
}

int op_num_params(int32_t op) {
  const OpFacts* f = facts(op);
  return f ? f->num_params : 0;
}

int op_num_inputs(int32_t op) {
  const OpFacts* f = facts(op);
  if (!f) return 0;
  int n = 1;
  for (const char* p = f->tensors; *p && *p != '|'; ++p) n += *p == ',';
  return n;
}

const Entry* find(int32_t op) {
  const Index& ix = index();
  return op >= 0 && (size_t)op < ix.by_id.size() ? ix.by_id[(size_t)op] : nullptr;
}

// ---------------------------------------------------------------------------
// run
// ---------------------------------------------------------------------------

namespace {

// Values beyond the range of a float output dtype are +-inf there (IEEE round
// to nearest overflows at max + half an ulp): the one part of rounding to the
// output dtype the references apply, since no tolerance covers it.
void overflow_to_inf(Array& out) {
  if (!out.is_float() || out.dtype.bits == 64) return;
  if (is_float8(out.dtype)) {  // beyond the largest finite value after rounding: inf (e5m2) or NaN
    const double mx = max_finite(out.dtype);
    for (double& v : out.f) {
      const double r = round_to(v, out.dtype);
      if (std::fabs(v) > mx && !(std::fabs(r) <= mx)) v = r;
    }
    return;
  }
  double lim;
  if (out.dtype.code == CT_BFLOAT) lim = std::ldexp(2.0 - std::ldexp(1.0, -8), 127);
  else if (out.dtype.bits == 16) lim = 65520.0;
  else lim = std::ldexp(2.0 - std::ldexp(1.0, -24), 127);
  for (double& v : out.f)
    if (std::fabs(v) >= lim) v = std::copysign(kInf, v);
}

}  // namespace

bool run(const Call& c, const std::vector<Array*>& outputs, std::string* why) {
  const Entry* e = find(c.op);
  if (!e) {
    const char* n = op_name(c.op);
    return fail(why, "no reference for op " + (*n ? "'" + std::string(n) + "'" : std::string("(unknown)")) +
                         " (id " + std::to_string(c.op) + ") in tests/reference");
  }
  if (!index().duplicate.empty()) return fail(why, "tests/reference: two references for op id " + index().duplicate);
  if ((int)c.params.size() < op_num_params(c.op))
    return fail(why, name_of(c) + ": needs " + std::to_string(op_num_params(c.op)) + " parameters, got " +
                         std::to_string(c.params.size()));
  if (!e->fn(c, outputs, why)) return false;
  for (Array* o : outputs)
    if (o) overflow_to_inf(*o);
  return true;
}

// ---------------------------------------------------------------------------
// dtypes
// ---------------------------------------------------------------------------

bool is_float(CTDataType d) { return ctref_is_float(d); }

std::string dtype_name(CTDataType d) {
  switch (d.code) {
    case CT_BOOL: return "bool";
    case CT_INT: return "int" + std::to_string(d.bits);
    case CT_UINT: return "uint" + std::to_string(d.bits);
    case CT_FLOAT: return "float" + std::to_string(d.bits);
    case CT_BFLOAT: return "bfloat" + std::to_string(d.bits);
    case CT_FLOAT8_E4M3FN: return "float8_e4m3fn";
    case CT_FLOAT8_E5M2: return "float8_e5m2";
    case CT_FLOAT8_E4M3FNUZ: return "float8_e4m3fnuz";
    case CT_FLOAT8_E5M2FNUZ: return "float8_e5m2fnuz";
  }
  return "dtype(code=" + std::to_string(d.code) + ")";
}

Int128 dt_min(CTDataType d) {
  if (d.code != CT_INT) return 0;
  return -((Int128)1 << (d.bits - 1));
}

Int128 dt_max(CTDataType d) {
  if (d.code == CT_BOOL) return 1;
  if (d.code == CT_UINT) return ((Int128)1 << d.bits) - 1;
  return ((Int128)1 << (d.bits - 1)) - 1;
}

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

// ---------------------------------------------------------------------------
// The IEEE binary16 / bfloat16 codec, from double: round to nearest even,
// overflow to +-inf, subnormals kept; frexp/ldexp arithmetic only.
// ---------------------------------------------------------------------------

namespace {

uint16_t encode_small_float(double v, int ebits, int mbits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const int emin = 1 - bias;
  const uint32_t exp_all = (1u << ebits) - 1;
  const uint32_t out_sign = (std::signbit(v) ? 1u : 0u) << (ebits + mbits);
  if (std::isnan(v)) return (uint16_t)(out_sign | (exp_all << mbits) | (1u << (mbits - 1)));
  const double a = std::fabs(v);
  if (std::isinf(a)) return (uint16_t)(out_sign | (exp_all << mbits));
  if (a == 0) return (uint16_t)out_sign;
  int e;
  std::frexp(a, &e);
  int E = e - 1;  // a = 1.f * 2^E
  const int qexp = (E < emin ? emin : E) - mbits;
  const double r = std::nearbyint(std::ldexp(a, -qexp));  // exact scaling; default mode: nearest even
  const double val = std::ldexp(r, qexp);                 // rounded magnitude
  if (val >= std::ldexp(1.0, bias + 1)) return (uint16_t)(out_sign | (exp_all << mbits));
  if (val < std::ldexp(1.0, emin)) return (uint16_t)(out_sign | (uint32_t)std::ldexp(val, -(emin - mbits)));
  std::frexp(val, &e);
  E = e - 1;
  const uint32_t m = (uint32_t)(std::ldexp(val, mbits - E) - std::ldexp(1.0, mbits));
  return (uint16_t)(out_sign | ((uint32_t)(E + bias) << mbits) | m);
}

double decode_small_float(uint16_t h, int ebits, int mbits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t sign = (h >> (ebits + mbits)) & 1;
  const uint32_t ex = (h >> mbits) & ((1u << ebits) - 1);
  const uint32_t m = h & ((1u << mbits) - 1);
  double r;
  if (ex == (1u << ebits) - 1) r = m ? kNaN : kInf;
  else if (ex == 0) r = std::ldexp((double)m, 1 - bias - mbits);
  else r = std::ldexp((double)(m | (1u << mbits)), (int)ex - bias - mbits);
  return sign ? -r : r;
}

}  // namespace

uint16_t f16_from_double(double v) { return encode_small_float(v, 5, 10); }
double f16_to_double(uint16_t h) { return decode_small_float(h, 5, 10); }
uint16_t bf16_from_double(double v) { return encode_small_float(v, 8, 7); }
double bf16_to_double(uint16_t h) { return decode_small_float(h, 8, 7); }

// ---------------------------------------------------------------------------
// The float8 codec
// ---------------------------------------------------------------------------

namespace {

struct F8 {
  int ebits, mbits, bias;
  bool inf;   // IEEE-like: the top exponent holds +-inf and NaNs (e5m2)
  bool fnuz;  // 0x80 is the only NaN, no -0
};

bool f8_of(CTDataType d, F8* f) {
  if (d.bits != 8) return false;
  switch (d.code) {
    case CT_FLOAT8_E4M3FN: *f = {4, 3, 7, false, false}; return true;
    case CT_FLOAT8_E5M2: *f = {5, 2, 15, true, false}; return true;
    case CT_FLOAT8_E4M3FNUZ: *f = {4, 3, 8, false, true}; return true;
    case CT_FLOAT8_E5M2FNUZ: *f = {5, 2, 16, false, true}; return true;
    default: return false;
  }
}

// Largest finite value: the top exponent is finite except in the IEEE-like
// format; e4m3fn gives its all-ones mantissa there to NaN.
double f8_max(const F8& f) {
  const int top = (1 << f.ebits) - 1 - (f.inf ? 1 : 0);
  const double frac = 2.0 - std::ldexp(1.0, (f.inf || f.fnuz) ? -f.mbits : 1 - f.mbits);
  return std::ldexp(frac, top - f.bias);
}

}  // namespace

bool is_float8(CTDataType d) {
  F8 f;
  return f8_of(d, &f);
}

double f8_to_double(uint8_t b, CTDataType d) {
  F8 f;
  if (!f8_of(d, &f)) return kNaN;
  if (f.fnuz && b == 0x80) return kNaN;
  const bool neg = (b & 0x80) != 0;
  const int ex = (b >> f.mbits) & ((1 << f.ebits) - 1), m = b & ((1 << f.mbits) - 1);
  double r;
  if (!f.inf && !f.fnuz && (b & 0x7f) == 0x7f) r = kNaN;
  else if (f.inf && ex == (1 << f.ebits) - 1) r = m ? kNaN : kInf;
  else if (ex == 0) r = std::ldexp((double)m, 1 - f.bias - f.mbits);
  else r = std::ldexp((double)(m + (1 << f.mbits)), ex - f.bias - f.mbits);
  return neg ? -r : r;
}

uint8_t f8_from_double(double v, CTDataType d, bool saturate) {
  F8 f;
  if (!f8_of(d, &f)) return 0;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const uint8_t nan = f.fnuz ? 0x80 : (uint8_t)(sign | (f.inf ? 0x7e : 0x7f));
  if (std::isnan(v)) return nan;
  const double mx = f8_max(f), a = std::fabs(v);
  double val = kInf;
  if (!std::isinf(a) && a != 0) {
    int e;
    std::frexp(a, &e);
    const int q = std::max(e - 1, 1 - f.bias) - f.mbits;  // the unit of the last place at a's exponent
    val = std::ldexp(std::nearbyint(std::ldexp(a, -q)), q);   // default mode: to nearest even
  } else if (a == 0) {
    val = 0;
  }
  if (val > mx) {
    if (!saturate) return f.inf ? (uint8_t)(sign | (((1 << f.ebits) - 1) << f.mbits)) : nan;
    val = mx;
  }
  if (val == 0) return f.fnuz ? 0 : sign;
  const double min_normal = std::ldexp(1.0, 1 - f.bias);
  if (val < min_normal) return (uint8_t)(sign | (int)std::ldexp(val, f.bias - 1 + f.mbits));
  int e;
  std::frexp(val, &e);
  const int m = (int)std::ldexp(val, f.mbits - (e - 1)) - (1 << f.mbits);
  return (uint8_t)(sign | ((e - 1 + f.bias) << f.mbits) | m);
}

double max_finite(CTDataType d) {
  F8 f;
  if (f8_of(d, &f)) return f8_max(f);
  if (d.code == CT_BFLOAT) return std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
  if (d.code == CT_FLOAT && d.bits == 16) return 65504.0;
  if (d.code == CT_FLOAT && d.bits == 32) return (double)std::numeric_limits<float>::max();
  return std::numeric_limits<double>::max();
}

double round_to(double v, CTDataType d) {
  if (is_float8(d)) return f8_to_double(f8_from_double(v, d, false), d);
  if (d.code == CT_BFLOAT && d.bits == 16) return bf16_to_double(bf16_from_double(v));
  if (d.code == CT_FLOAT && d.bits == 16) return f16_to_double(f16_from_double(v));
  if (d.code == CT_FLOAT && d.bits == 32) return (double)(float)v;
  return v;
}

// ---------------------------------------------------------------------------
// shapes, broadcasting, reduction groups, argument checks
// ---------------------------------------------------------------------------

std::string str(const Shape& s) {
  std::ostringstream o;
  o << '[';
  for (size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << ']';
  return o.str();
}

int64_t prod(const Shape& s, size_t from, size_t to) {
  if (to > s.size()) to = s.size();
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= s[i];
  return n;
}

bool broadcast_index(const Shape& in, const Shape& out_shape, std::vector<int64_t>* idx, std::string* why,
                     const char* arg) {
  const size_t on = out_shape.size(), inn = in.size();
  if (inn > on) return fail(why, std::string(arg) + str(in) + " has more dims than out" + str(out_shape));
  std::vector<int64_t> st(on, 0);  // element strides of `in` seen at out's shape: 0 on broadcast dims
  int64_t s = 1;
  for (size_t j = 0; j < inn; ++j) {
    const size_t id = inn - 1 - j, od = on - 1 - j;
    const int64_t e = in[id];
    if (e == out_shape[od]) st[od] = e == 1 ? 0 : s;
    else if (e != 1) return fail(why, std::string(arg) + str(in) + " does not broadcast to out" + str(out_shape));
    s *= e;
  }
  const int64_t n = std::max<int64_t>(prod(out_shape), 0);
  idx->assign((size_t)n, 0);
  std::vector<int64_t> pos(on, 0);
  int64_t off = 0;
  for (int64_t k = 0; k < n; ++k) {
    (*idx)[(size_t)k] = off;
    for (size_t j = on; j-- > 0;) {  // advance the row-major position
      if (++pos[j] < out_shape[j]) {
        off += st[j];
        break;
      }
      off -= st[j] * (out_shape[j] - 1);
      pos[j] = 0;
    }
  }
  return true;
}

bool reduction_groups(const std::vector<int64_t>& shape, const std::vector<int32_t>& axes, bool all_axes,
                      std::vector<std::vector<int64_t>>* groups, std::string* why) {
  const int nd = (int)shape.size();
  std::vector<bool> red((size_t)nd, all_axes && axes.empty());
  for (int32_t a : axes) {
    const int32_t w = a < 0 ? a + nd : a;
    if (w < 0 || w >= nd) return fail(why, "axis " + std::to_string(a) + " out of range for " + str(shape));
    if (red[(size_t)w]) return fail(why, "repeated axis " + std::to_string(a));
    red[(size_t)w] = true;
  }
  Shape st((size_t)nd, 1);  // row-major strides of x
  for (int d = nd - 2; d >= 0; --d) st[(size_t)d] = st[(size_t)d + 1] * shape[(size_t)d + 1];
  auto offsets = [&](bool reduced) {
    std::vector<int64_t> offs{0};
    for (int d = 0; d < nd; ++d) {
      if (red[(size_t)d] != reduced) continue;
      std::vector<int64_t> next;
      next.reserve(offs.size() * (size_t)std::max<int64_t>(shape[(size_t)d], 0));
      for (int64_t o : offs)
        for (int64_t e = 0; e < shape[(size_t)d]; ++e) next.push_back(o + e * st[(size_t)d]);
      offs.swap(next);
    }
    return offs;
  };
  const std::vector<int64_t> base = offsets(false), within = offsets(true);
  groups->assign(base.size(), std::vector<int64_t>(within.size()));
  for (size_t o = 0; o < base.size(); ++o)
    for (size_t j = 0; j < within.size(); ++j) (*groups)[o][j] = base[o] + within[j];
  return true;
}

bool need_inputs(const Call& c, size_t n, std::string* why) {
  if (c.inputs.size() < n) return fail(why, name_of(c) + ": expected " + std::to_string(n) + " inputs");
  for (size_t k = 0; k < n; ++k) {
    const Array* a = c.inputs[k];
    if (!a) return fail(why, name_of(c) + ": input " + std::to_string(k) + " is null");
    const size_t want = (size_t)std::max<int64_t>(a->numel(), 0);
    if ((a->is_float() ? a->f.size() : a->i.size()) != want)
      return fail(why, name_of(c) + ": input " + std::to_string(k) + " holds the wrong number of values");
  }
  return true;
}

bool need_output(const Call& c, const Outs& o, std::string* why) {
  if (o.empty() || !o[0]) return fail(why, name_of(c) + ": no output array");
  prepare(o[0]);
  return true;
}

}  // namespace ctref
