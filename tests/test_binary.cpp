// test_binary.cpp — ct_binary (issue 3, notes/SEMANTICS.md "Broadcast / reduce
// semantics"): every binary op x every dtype it is defined for, against its
// reference in tests/reference (written from the definitions in double or
// exact integer arithmetic: floor division and Python's modulus from
// a == q*b + m, never from the kernels' formulas), on a grid of special
// values, random values, NumPy broadcasting corners (rank promotion, size-1
// axes on both sides, 0-size axes, 0-d operands), strided / negative-stride /
// byte_offset / explicit stride-0 inputs, in-place calls and sizes that go
// multi-threaded; then every error path with out's bytes untouched.
//
// Tolerances: bit-exact for integers, bool and comparisons, and for every
// float op except pow/atan2/hypot (the exact value rounded once to the
// output dtype: what one IEEE operation in float32, or in float32 then
// rounded to a half type, gives); pow/atan2/hypot within 2 ulps of the
// double-precision value.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_ref.h"
#include "test_util.h"

using namespace ctt;

namespace {

const CTDevice kCpu = {CT_CPU, 0};
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

const unsigned B = 1u << DT_BOOL;
const unsigned I = (1u << DT_I8) | (1u << DT_I16) | (1u << DT_I32) | (1u << DT_I64) | (1u << DT_U8) | (1u << DT_U16) |
                   (1u << DT_U32) | (1u << DT_U64);
const unsigned F = (1u << DT_F16) | (1u << DT_BF16) | (1u << DT_F32) | (1u << DT_F64) | (1u << DT_F8E4M3FN) |
                   (1u << DT_F8E5M2) | (1u << DT_F8E4M3FNUZ) | (1u << DT_F8E5M2FNUZ);
const unsigned ALL = B | I | F;

enum OutRule { O_SAME, O_BOOL, O_FLOAT };
enum BTol { BT_EXACT, BT_ULP };
enum Dom { DOM_GEN, DOM_POW, DOM_SHIFT, DOM_DIV };

int bits_of(int d) { return 8 * dtype(d).size; }

struct BinRef {
  const char* name;
  int op;
  unsigned mask;  // dtypes SEMANTICS.md defines the op for
  OutRule out;
  BTol tol;
  Dom dom;
};

const BinRef kBin[] = {
    {"add", CT_OP_ADD, ALL, O_SAME, BT_EXACT, DOM_GEN},
    {"sub", CT_OP_SUB, I | F, O_SAME, BT_EXACT, DOM_GEN},
    {"mul", CT_OP_MUL, ALL, O_SAME, BT_EXACT, DOM_GEN},
    {"div", CT_OP_DIV, ALL, O_FLOAT, BT_EXACT, DOM_DIV},
    {"floor_div", CT_OP_FLOOR_DIV, I | F, O_SAME, BT_EXACT, DOM_DIV},
    {"mod", CT_OP_MOD, I | F, O_SAME, BT_EXACT, DOM_DIV},
    {"pow", CT_OP_POW, I | F, O_SAME, BT_ULP, DOM_POW},
    {"maximum", CT_OP_MAXIMUM, ALL, O_SAME, BT_EXACT, DOM_GEN},
    {"minimum", CT_OP_MINIMUM, ALL, O_SAME, BT_EXACT, DOM_GEN},
    {"fmax", CT_OP_FMAX, ALL, O_SAME, BT_EXACT, DOM_GEN},
    {"fmin", CT_OP_FMIN, ALL, O_SAME, BT_EXACT, DOM_GEN},
    {"atan2", CT_OP_ATAN2, F, O_SAME, BT_ULP, DOM_GEN},
    {"hypot", CT_OP_HYPOT, F, O_SAME, BT_ULP, DOM_GEN},
    {"copysign", CT_OP_COPYSIGN, F, O_SAME, BT_EXACT, DOM_GEN},
    {"bitwise_and", CT_OP_BITWISE_AND, B | I, O_SAME, BT_EXACT, DOM_GEN},
    {"bitwise_or", CT_OP_BITWISE_OR, B | I, O_SAME, BT_EXACT, DOM_GEN},
    {"bitwise_xor", CT_OP_BITWISE_XOR, B | I, O_SAME, BT_EXACT, DOM_GEN},
    {"left_shift", CT_OP_LEFT_SHIFT, I, O_SAME, BT_EXACT, DOM_SHIFT},
    {"right_shift", CT_OP_RIGHT_SHIFT, I, O_SAME, BT_EXACT, DOM_SHIFT},
    {"logical_and", CT_OP_LOGICAL_AND, ALL, O_BOOL, BT_EXACT, DOM_GEN},
    {"logical_or", CT_OP_LOGICAL_OR, ALL, O_BOOL, BT_EXACT, DOM_GEN},
    {"logical_xor", CT_OP_LOGICAL_XOR, ALL, O_BOOL, BT_EXACT, DOM_GEN},
    {"equal", CT_OP_EQUAL, ALL, O_BOOL, BT_EXACT, DOM_GEN},
    {"not_equal", CT_OP_NOT_EQUAL, ALL, O_BOOL, BT_EXACT, DOM_GEN},
    {"less", CT_OP_LESS, ALL, O_BOOL, BT_EXACT, DOM_GEN},
    {"less_equal", CT_OP_LESS_EQUAL, ALL, O_BOOL, BT_EXACT, DOM_GEN},
    {"greater", CT_OP_GREATER, ALL, O_BOOL, BT_EXACT, DOM_GEN},
    {"greater_equal", CT_OP_GREATER_EQUAL, ALL, O_BOOL, BT_EXACT, DOM_GEN},
};

const BinRef& bin_ref(int op) {
  for (const BinRef& r : kBin)
    if (r.op == op) return r;
  FAIL("no binary op facts for op " << op);
  return kBin[0];
}

int out_dtype(const BinRef& r, int d) {
  switch (r.out) {
    case O_BOOL: return DT_BOOL;
    case O_FLOAT: return dtype(d).is_float() ? d : DT_F64;
    default: return d;
  }
}


struct Mismatch {
  int64_t count = 0;
  std::string first;
  void add(const std::string& s) {
    if (count++ < 4) first += s + "\n";
  }
};

// Linear index into an input of shape `si` (aligned at the last dim of the
// broadcast shape `so`, size-1 dims repeated) of the output element `lin`.
int64_t bidx(const std::vector<int64_t>& so, const std::vector<int64_t>& si, int64_t lin) {
  int64_t idx = 0, mul = 1;
  size_t no = so.size(), ni = si.size();
  for (size_t k = 0; k < no; ++k) {
    size_t od = no - 1 - k;
    int64_t c = lin % so[od];
    lin /= so[od];
    if (k < ni) {
      int64_t e = si[ni - 1 - k];
      if (e != 1) idx += c * mul;
      mul *= e;
    }
  }
  return idx;
}

std::vector<int64_t> bshape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> r(n, 1);
  for (size_t k = 0; k < n; ++k) {
    int64_t ea = k < a.size() ? a[a.size() - 1 - k] : 1;
    int64_t eb = k < b.size() ? b[b.size() - 1 - k] : 1;
    r[n - 1 - k] = ea == 1 ? eb : ea;
  }
  return r;
}

// The reference result of op(a, b) at the broadcast shape, in out's dtype.
ctref::Array ref_binary(const BinRef& r, int d, const HostTensor& a, const HostTensor& b) {
  return reference(ref_call(r.op), {&a, &b}, {{out_dtype(r, d), bshape(a.shape, b.shape)}})[0];
}

// One element: does out[io] match the reference want[io] of op(a[ia], b[ib])?
// Fills a message if not (the strings are only built for a mismatch).
bool check_one(const BinRef& r, int d, const HostTensor& a, int64_t ia, const HostTensor& b, int64_t ib,
               const HostTensor& out, int64_t io, const ctref::Array& want, std::string* msg) {
  int dout = out.d;
  bool ok;
  double fe = 0;
  int64_t xe = 0;
  bool float_in = dtype(d).is_float();
  bool float_out = dtype(dout).is_float();
  if (!float_out) {  // integers (wrapped to dout), bool, comparisons
    xe = want.i[(size_t)io];
    ok = out.get_i(io) == xe;
  } else if (!float_in) {  // div of integers: (double)a / (double)b into float64
    fe = want.f[(size_t)io];
    ok = same_double(out.get(io), fe);
  } else {
    fe = round_to(want.f[(size_t)io], dout);
    double g = out.get(io);
    if (r.tol == BT_EXACT) {
      ok = same_double(g, fe);
      // maximum/minimum/fmax/fmin of two zeros may give either zero
      if (!ok && a.get(ia) == 0 && b.get(ib) == 0 && g == 0 && fe == 0 &&
          (r.op == CT_OP_MAXIMUM || r.op == CT_OP_MINIMUM || r.op == CT_OP_FMAX || r.op == CT_OP_FMIN))
        ok = true;
    } else if (std::isnan(fe) || std::isinf(fe) || fe == 0) {
      ok = same_double(g, fe);
    } else {
      ok = std::fabs(g - fe) <= 2 * ulp_of(fe, dout);
    }
  }
  if (!ok && msg) {
    std::ostringstream s;
    s << r.name << " " << dtype(d).name << " out[" << io << "] inputs (";
    if (float_in) s << fmt(a.get(ia)) << ", " << fmt(b.get(ib));
    else s << a.get_i(ia) << ", " << b.get_i(ib);
    s << ") got ";
    if (float_out) s << fmt(out.get(io)) << " expected " << fmt(fe);
    else s << out.get_i(io) << " expected " << xe;
    *msg = s.str();
  }
  return ok;
}

// Whole output against the reference; out's bytes outside its elements keep `before`.
void check_all(const BinRef& r, int d, const HostTensor& a, const HostTensor& b, const HostTensor& out,
               const std::vector<unsigned char>& before, Mismatch& mm) {
  const ctref::Array want = ref_binary(r, d, a, b);
  int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    std::string m;
    if (!check_one(r, d, a, bidx(out.shape, a.shape, i), b, bidx(out.shape, b.shape, i), out, i, want, &m))
      mm.add(m);
  }
  std::vector<char> cov = covered(out);
  std::vector<unsigned char> after = out.bytes();
  for (size_t k = 0; k < after.size(); ++k)
    if (!cov[k] && after[k] != before[k]) {
      mm.add(std::string(r.name) + " " + dtype(d).name + ": wrote outside the output's elements at byte " +
             std::to_string(k));
      break;
    }
}

// ---------------------------------------------------------------------------
// Layouts and inputs
// ---------------------------------------------------------------------------

// 0: compact, strides NULL   1: column-major (transposed)
// 2: negative outer stride, step 2 in the last dim (offset via byte_offset)
// 3: padded rows (usable as an output)   4: zero stride in dim 0 (input only)

// `small` (aligned at the last dim of `full`) expanded to `full` with stride 0
// on the broadcast dims: what a framework passes for an explicit broadcast view.
HostTensor expanded(int d, const std::vector<int64_t>& small, const std::vector<int64_t>& full) {
  std::vector<int64_t> st(full.size(), 0);
  int64_t s = 1;
  for (size_t k = 0; k < small.size(); ++k) {
    size_t si = small.size() - 1 - k, fi = full.size() - 1 - k;
    st[fi] = small[si] == 1 ? 0 : s;
    s *= small[si];
  }
  return HostTensor::strided(d, full, st, 3);
}

std::vector<double> float_specials(int d) {
  std::vector<double> s = {0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 2.5, -7.25, 100.0, -1e-3,
                           kInf, -kInf, kNaN};
  for (double& v : s) v = round_to(v, d);
  return s;
}

std::vector<int64_t> int_specials(int d) {
  if (d == DT_BOOL) return {0, 1};
  int64_t lo = int_min(d), hi = int_max(d);
  int64_t bits = bits_of(d);
  std::vector<int64_t> c = {0,  1,   -1,  2,       -2,     3,      -3,     7,      -7,        bits - 1, bits,
                            bits + 1, 64, 100, -100, lo, lo + 1, hi, hi - 1, 0x55};
  std::vector<int64_t> s;
  for (int64_t v : c)
    if (v >= lo && v <= hi && std::find(s.begin(), s.end(), v) == s.end()) s.push_back(v);
  return s;
}

void fill_random(const BinRef& r, HostTensor& t, bool is_b, Rng& rng) {
  int64_t n = t.numel();
  int d = t.d;
  if (dtype(d).is_float()) {
    for (int64_t i = 0; i < n; ++i) {
      double v;
      if (r.dom == DOM_POW) {
        if (i % 2) v = is_b ? (double)rng.int_in(-4, 4) : rng.uniform(-3, 3);  // integral exponents
        else v = is_b ? rng.uniform(-4, 4) : rng.uniform(0, 3);
      } else {
        v = rng.uniform(-10, 10);
      }
      t.set(i, v);
    }
    return;
  }
  if (d == DT_BOOL) {
    for (int64_t i = 0; i < n; ++i) t.set_i(i, (int64_t)(rng.next() & 1));
    return;
  }
  int64_t lo = int_min(d), hi = int_max(d), bits = bits_of(d);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v;
    switch (r.dom) {
      case DOM_POW:
        v = is_b ? rng.int_in(dtype(d).is_uint() ? 0 : -3, 20) : rng.int_in(dtype(d).is_uint() ? 0 : -5, 5);
        if (!is_b && i % 3 == 0) v = rng.int_in(lo, hi);
        break;
      case DOM_SHIFT:
        v = is_b ? rng.int_in(dtype(d).is_uint() ? 0 : -3, bits + 3) : rng.int_in(lo, hi);
        break;
      case DOM_DIV:
        v = (i % 2) ? rng.int_in(std::max<int64_t>(lo, -20), std::min<int64_t>(hi, 20)) : rng.int_in(lo, hi);
        break;
      default: v = rng.int_in(lo, hi); break;
    }
    t.set_i(i, v);
  }
}

std::string desc_of(const BinRef& r, int d, const HostTensor& a, const HostTensor& b, const HostTensor& out,
                    const std::string& extra) {
  std::ostringstream s;
  s << r.name << " " << dtype(d).name << " a" << shape_str(a.shape) << " b" << shape_str(b.shape) << " out"
    << shape_str(out.shape) << " " << extra;
  return s.str();
}

// Run op on (a, b) into a fresh out (layout out_variant), check everything.
void run_and_check(const BinRef& r, int d, HostTensor& a, HostTensor& b, int out_variant, const std::string& extra,
                   bool a_offset_in_byte_offset = true, void* stream = nullptr) {
  std::vector<int64_t> so = bshape(a.shape, b.shape);
  HostTensor out = make_layout(out_dtype(r, d), so, out_variant);
  out.fill_bytes(0xA5);
  std::vector<unsigned char> before = out.bytes();
  INFO(desc_of(r, d, a, b, out, extra));
  CTensor av = a.view(a_offset_in_byte_offset), bv = b.view(!a_offset_in_byte_offset), ov = out.view();
  CTStatus s = ct_binary(r.op, &av, &bv, &ov, stream);
  INFO("status " << s << " " << ct_status_string(s) << ": " << ct_last_error());
  REQUIRE(s == CT_OK);
  Mismatch mm;
  check_all(r, d, a, b, out, before, mm);
  INFO(mm.first);
  CHECK(mm.count == 0);
}

struct ShapePair {
  std::vector<int64_t> a, b;
};

const ShapePair kShapes[] = {
    {{7}, {7}},
    {{1000}, {1000}},
    {{3, 1, 4}, {2, 1}},        // rank promotion -> (3,2,4)
    {{2, 1}, {3, 1, 4}},        // the same, operands swapped
    {{4, 1}, {1, 5}},           // size-1 axes on both sides -> (4,5)
    {{0, 3}, {1, 3}},           // 0-size axis -> (0,3)
    {{0}, {1}},                 // -> (0,)
    {{1}, {0}},
    {{}, {2, 3}},               // 0-d with n-d
    {{2, 3}, {}},
    {{}, {}},
    {{2, 3, 4}, {4}},
    {{5, 1, 1}, {1, 6, 1}},
    {{2, 1, 3, 1}, {4, 1, 5}},  // -> (2,4,3,5)
    {{17, 19}, {17, 19}},
    {{1, 1}, {33}},
};

void fill_pair(const BinRef& r, HostTensor& a, HostTensor& b, Rng& rng) {
  fill_random(r, a, false, rng);
  fill_random(r, b, true, rng);
}

}  // namespace

// ---------------------------------------------------------------------------

TEST_CASE("binary: ct_op_supported and the registry agree with SEMANTICS.md", "[binary]") {
  for (const BinRef& r : kBin) {
    CTOpInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(r.op, &info) == CT_OK);
    INFO("op " << r.name);
    CHECK(std::string(info.name) == r.name);
    CHECK(info.kind == CT_KIND_BINARY);
    CHECK(info.category == CT_CATEGORY_BROADCAST_REDUCE);
    CHECK(info.num_inputs == 2);
    CHECK(info.num_params == 0);
    CHECK(info.output_dtype == (r.out == O_BOOL ? CT_OUTPUT_BOOL : r.out == O_FLOAT ? CT_OUTPUT_FLOAT
                                                                                     : CT_OUTPUT_SAME));
    for (int d = 0; d < DT_COUNT; ++d) {
      INFO("dtype " << dtype(d).name);
      bool want = (r.mask >> d) & 1u;
      CTStatus s = ct_op_supported(r.op, kCpu, dtype(d).dt);
      CHECK(s == (want ? CT_OK : CT_ERR_UNSUPPORTED));
    }
  }
}

TEST_CASE("binary: every op x dtype on a grid of special values", "[binary]") {
  // a = specials as a column (S,1), b = specials as a row (1,S): every pair.
  int runs = 0;
  for (const BinRef& r : kBin) {
    for (int d = 0; d < DT_COUNT; ++d) {
      if (!((r.mask >> d) & 1u)) continue;
      std::vector<double> fs;
      std::vector<int64_t> is;
      int64_t S;
      if (dtype(d).is_float()) {
        fs = float_specials(d);
        S = (int64_t)fs.size();
      } else {
        is = int_specials(d);
        S = (int64_t)is.size();
      }
      HostTensor a = HostTensor::compact(d, {S, 1});
      HostTensor b = make_layout(d, {1, S}, 2);
      for (int64_t i = 0; i < S; ++i) {
        if (dtype(d).is_float()) {
          a.set(i, fs[(size_t)i]);
          b.set(i, fs[(size_t)i]);
        } else {
          a.set_i(i, is[(size_t)i]);
          b.set_i(i, is[(size_t)i]);
        }
      }
      run_and_check(r, d, a, b, 0, "specials grid");
      ++runs;
    }
  }
  CHECK(runs > 100);
}

TEST_CASE("binary: every op x dtype, random values, broadcasting corners and layouts", "[binary]") {
  int runs = 0;
  for (const BinRef& r : kBin) {
    for (int d = 0; d < DT_COUNT; ++d) {
      if (!((r.mask >> d) & 1u)) continue;
      Rng rng((uint64_t)r.op * 977 + (uint64_t)d);
      int k = 0;
      for (const ShapePair& sp : kShapes) {
        int va = k % 5, vb = (k + 2) % 5, vo = (k % 2) * 3;
        ++k;
        HostTensor a = make_layout(d, sp.a, va);
        HostTensor b = make_layout(d, sp.b, vb);
        fill_pair(r, a, b, rng);
        std::ostringstream ex;
        ex << "layouts a " << va << " b " << vb << " out " << vo;
        run_and_check(r, d, a, b, vo, ex.str(), k % 2 == 0);
        ++runs;
      }
    }
  }
  CHECK(runs > 1000);
}

TEST_CASE("binary: explicit stride-0 broadcast views give the broadcasting result", "[binary]") {
  struct C { std::vector<int64_t> a, b_small; };
  const C cases[] = {{{4, 5}, {1, 5}}, {{4, 5}, {4, 1}}, {{3, 2, 4}, {2, 1}}, {{6, 7}, {7}}};
  const int ops[] = {CT_OP_ADD, CT_OP_SUB, CT_OP_POW, CT_OP_LESS, CT_OP_DIV, CT_OP_RIGHT_SHIFT};
  const int dts[] = {DT_F32, DT_F64, DT_I32, DT_I8, DT_F16, DT_BF16, DT_U8, DT_I64};
  for (const C& c : cases)
    for (int op : ops)
      for (int d : dts) {
        const BinRef& r = bin_ref(op);
        if (!((r.mask >> d) & 1u)) continue;
        Rng rng((uint64_t)op * 31 + (uint64_t)d);
        HostTensor a = make_layout(d, c.a, 2);
        HostTensor bs = HostTensor::compact(d, c.b_small);
        fill_pair(r, a, bs, rng);
        // the same values as an explicit (full-shape) stride-0 view
        HostTensor bx = expanded(d, c.b_small, c.a);
        for (int64_t i = 0; i < bx.numel(); ++i)
          std::memcpy(bx.at(i), bs.at(bidx(c.a, c.b_small, i)), (size_t)dtype(d).size);
        INFO("op " << r.name << " dtype " << dtype(d).name << " a" << shape_str(c.a) << " b" << shape_str(c.b_small));
        run_and_check(r, d, a, bx, 0, "explicit stride-0 b");
        run_and_check(r, d, bx, a, 3, "explicit stride-0 a");
        // and the result equals the implicit broadcast's, bit for bit
        HostTensor o1 = HostTensor::compact(out_dtype(r, d), c.a), o2 = HostTensor::compact(out_dtype(r, d), c.a);
        CTensor av = a.view(), bsv = bs.view(), bxv = bx.view(), o1v = o1.view(), o2v = o2.view();
        REQUIRE(ct_binary(op, &av, &bsv, &o1v, nullptr) == CT_OK);
        REQUIRE(ct_binary(op, &av, &bxv, &o2v, nullptr) == CT_OK);
        CHECK(o1.bytes() == o2.bytes());
      }
}

TEST_CASE("binary: float32 pow, atan2, floor_div and mod in vector lanes, specials mixed in", "[binary]") {
  // The CPU runs these four in float64 vector lanes and sends a block with
  // any special lane (zero, infinity, NaN, negative base, a huge quotient)
  // to the scalar code: 10007 elements of wide-ranging values with a special
  // value every 13th, so most blocks are vector ones, some mixed, and the
  // tail scalar; b whole and broadcast. Against the reference: floor_div and
  // mod exact, pow and atan2 within the ulps of the BinRef table. (|b| >=
  // 1/8 keeps floor_div's quotients below 2^23, where the reference's exact
  // floor is also NumPy's float32 answer; past 2^24 NumPy's float32 divmod
  // rounds differently, which "specific values" checks.)
  Rng rng(2026);
  const std::vector<double> specials = float_specials(DT_F32);
  for (const BinRef& r : kBin) {
    if (r.op != CT_OP_POW && r.op != CT_OP_ATAN2 && r.op != CT_OP_FLOOR_DIV && r.op != CT_OP_MOD) continue;
    for (int d : {DT_F32, DT_F16}) {
      for (int bcast = 0; bcast < 2; ++bcast) {
        const int64_t n = 10007;
        HostTensor a = HostTensor::compact(d, {n});
        HostTensor b = HostTensor::compact(d, {bcast ? 1 : n});
        for (int64_t i = 0; i < n; ++i) {
          const double mag = std::ldexp(rng.uniform(0.5, 1.0), rng.int_in(-20, 20));
          double va = r.op == CT_OP_POW ? mag : (rng.uniform(0, 1) < 0.5 ? -mag : mag);
          if (i % 13 == 5) va = specials[(size_t)rng.int_in(0, (int64_t)specials.size() - 1)];
          a.set(i, round_to(va, d));
        }
        for (int64_t i = 0; i < b.numel(); ++i) {
          const double sign = rng.uniform(0, 1) < 0.5 ? -1.0 : 1.0;
          double vb = r.op == CT_OP_POW ? rng.uniform(-6, 6) : sign * std::ldexp(rng.uniform(0.5, 1.0), rng.int_in(-2, 8));
          if (!bcast && i % 13 == 7) vb = specials[(size_t)rng.int_in(0, (int64_t)specials.size() - 1)];
          if (vb != 0 && std::fabs(vb) < 0.125) vb = 0.125;  // -1e-3 of the specials: a quotient past 2^23
          b.set(i, round_to(vb, d));
        }
        HostTensor out = HostTensor::compact(d, {n});
        const std::vector<unsigned char> before = out.bytes();
        CTensor x = a.view(), y = b.view(), z = out.view();
        REQUIRE(ct_binary(r.op, &x, &y, &z, nullptr) == CT_OK);
        Mismatch mm;
        check_all(r, d, a, b, out, before, mm);
        INFO(r.name << " " << dtype(d).name << (bcast ? " b broadcast" : "") << ": " << mm.count
                    << " mismatches\n" << mm.first);
        CHECK(mm.count == 0);
      }
    }
  }
}

TEST_CASE("binary: nextafter in vector lanes, bit for bit", "[binary]") {
  // The CPU steps the bits in vector lanes: 10007 pairs (float32 and
  // float64, b whole and broadcast) of wide-ranging values, subnormals,
  // +-0, the largest finite, infinities and NaN, b equal to a every 7th
  // and of either sign, so that every lane rule (grow, shrink, from 0,
  // a == b, NaN) meets vector and tail elements; against the reference
  // (std::nextafter), which checks bits and the sign of zero.
  Rng rng(2027);
  const BinRef ref = {"nextafter", CT_OP_NEXTAFTER, (1u << DT_F32) | (1u << DT_F64), O_SAME, BT_EXACT, DOM_GEN};
  for (int d : {DT_F32, DT_F64}) {
    const double big = d == DT_F32 ? (double)std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    const double tiny = d == DT_F32 ? (double)std::numeric_limits<float>::denorm_min()
                                    : std::numeric_limits<double>::denorm_min();
    const std::vector<double> special = {0.0, -0.0, tiny, -tiny, 2 * tiny, big, -big, kInf, -kInf, kNaN, 1.0, -1.0};
    auto value = [&](int64_t i, int64_t every) {
      if (i % every == 3) return special[(size_t)rng.int_in(0, (int64_t)special.size() - 1)];
      const double mag = std::ldexp(rng.uniform(0.5, 1.0), (int)rng.int_in(-30, 30));
      return round_to(rng.uniform(0, 1) < 0.5 ? -mag : mag, d);
    };
    for (int bcast = 0; bcast < 2; ++bcast) {
      const int64_t n = 10007;
      HostTensor a = HostTensor::compact(d, {n}), b = HostTensor::compact(d, {bcast ? 1 : n});
      for (int64_t i = 0; i < n; ++i) a.set(i, value(i, 5));
      for (int64_t i = 0; i < b.numel(); ++i) b.set(i, !bcast && i % 7 == 1 ? a.get(i) : value(i, 11));
      HostTensor out = HostTensor::compact(d, {n});
      const std::vector<unsigned char> before = out.bytes();
      CTensor x = a.view(), y = b.view(), z = out.view();
      REQUIRE(ct_binary(CT_OP_NEXTAFTER, &x, &y, &z, nullptr) == CT_OK);
      Mismatch mm;
      check_all(ref, d, a, b, out, before, mm);
      INFO(dtype(d).name << (bcast ? " b broadcast" : "") << ": " << mm.count << " mismatches\n" << mm.first);
      CHECK(mm.count == 0);
    }
  }
}

TEST_CASE("binary: specific values", "[binary]") {
  auto run1 = [](int op, int d, std::vector<double> av, std::vector<double> bv, int dout) {
    HostTensor a = HostTensor::compact(d, {(int64_t)av.size()});
    HostTensor b = HostTensor::compact(d, {(int64_t)bv.size()});
    for (size_t i = 0; i < av.size(); ++i) {
      if (dtype(d).is_float()) { a.set((int64_t)i, av[i]); b.set((int64_t)i, bv[i]); }
      else { a.set_i((int64_t)i, (int64_t)av[i]); b.set_i((int64_t)i, (int64_t)bv[i]); }
    }
    HostTensor o = HostTensor::compact(dout, {(int64_t)av.size()});
    CTensor x = a.view(), y = b.view(), z = o.view();
    CTStatus s = ct_binary(op, &x, &y, &z, nullptr);
    INFO(ct_last_error());
    REQUIRE(s == CT_OK);
    return o;
  };
  SECTION("integer floor_div / mod by 0 and INT_MIN by -1") {
    HostTensor q = run1(CT_OP_FLOOR_DIV, DT_I32, {7, -7, 7, -7, 0, (double)INT32_MIN, (double)INT32_MIN, 5},
                        {2, 2, -2, -2, 0, -1, 0, 0}, DT_I32);
    const int64_t wq[] = {3, -4, -4, 3, 0, INT32_MIN, 0, 0};
    for (int i = 0; i < 8; ++i) CHECK(q.get_i(i) == wq[i]);
    HostTensor m = run1(CT_OP_MOD, DT_I32, {7, -7, 7, -7, 0, (double)INT32_MIN, (double)INT32_MIN, 5},
                        {2, 2, -2, -2, 0, -1, 0, 0}, DT_I32);
    const int64_t wm[] = {1, 1, -1, -1, 0, 0, 0, 0};
    for (int i = 0; i < 8; ++i) CHECK(m.get_i(i) == wm[i]);
    HostTensor q8 = run1(CT_OP_FLOOR_DIV, DT_I8, {-128, -128, 127}, {-1, 1, -1}, DT_I8);
    CHECK(q8.get_i(0) == -128);
    CHECK(q8.get_i(1) == -128);
    CHECK(q8.get_i(2) == -127);
  }
  SECTION("float32 floor_div / mod with quotients past 2^24: NumPy's float32 results") {
    // np.floor_divide / np.remainder on float32 (NumPy 2.4): the quotient is
    // (a - fmod(a, b)) / b rounded to float32, not the exact floor rounded.
    HostTensor q = run1(CT_OP_FLOOR_DIV, DT_F32, {76441.7890625, -553982.5625},
                        {0.0037084245122969151, -0.11066819727420807}, DT_F32);
    CHECK(q.get(0) == 20613010.0);
    CHECK(q.get(1) == 5005796.0);
    HostTensor m = run1(CT_OP_MOD, DT_F32, {76441.7890625}, {0.0037084245122969151}, DT_F32);
    CHECK(m.get(0) == (double)0.0012147031f);
  }
  SECTION("float floor_div / mod: NumPy's results") {
    // np.floor_divide / np.remainder on float64
    HostTensor q = run1(CT_OP_FLOOR_DIV, DT_F64, {7, -7, 7, -7, 1, -1, 1, 0, kInf, 1, -1, 5.5},
                        {2, 2, -2, -2, 0, 0, kInf, 0, 2, -kInf, kInf, 0.5}, DT_F64);
    const double wq[] = {3, -4, -4, 3, kInf, -kInf, 0, kNaN, kNaN, -1, -1, 11};
    for (int i = 0; i < 12; ++i) {
      INFO("floor_div element " << i << " got " << fmt(q.get(i)));
      CHECK(same_double(q.get(i), wq[i]));
    }
    HostTensor m = run1(CT_OP_MOD, DT_F64, {7, -7, 7, -7, 1, 0, -0.0, 6, kInf, 1, -1, 5.5},
                        {2, 2, -2, -2, 0, 3, 3, -3, 2, kInf, kInf, 0.5}, DT_F64);
    const double wm[] = {1, 1, -1, -1, kNaN, 0.0, 0.0, -0.0, kNaN, 1, kInf, 0.0};
    for (int i = 0; i < 12; ++i) {
      INFO("mod element " << i << " got " << fmt(m.get(i)));
      CHECK(same_double(m.get(i), wm[i]));
    }
  }
  SECTION("float64 igamma and igammac for small a, where Q = 1 - P cancels: mpmath's values") {
    // mpmath.gammainc(a, x, inf, regularized=True) (Q) and (a, 0, x) (P), 40 digits
    const std::vector<double> av = {1e-30, 1e-8, 1e-3, 0.1, 0.24, 1e-12, 1e-300, 0.5};
    const std::vector<double> xv = {0.0442, 0.0442, 0.3, 1.05, 0.9, 1.09, 1e-10, 0.6};
    const double wq[] = {2.5855311727905669441e-30, 2.5855311471603616936e-8, 0.00090583808830664698734,
                         0.022282224868442282311,   0.07538249659738937565,   1.890461179791178319e-13,
                         2.2448635265138924506e-299, 0.27332167829229815391};
    const double wp[] = {1.0, 0.9999999741446885284, 0.99909416191169335301, 0.97771777513155771769,
                         0.92461750340261062435, 0.99999999999981095388, 1.0, 0.72667832170770184609};
    HostTensor q = run1(CT_OP_IGAMMAC, DT_F64, av, xv, DT_F64);
    HostTensor p = run1(CT_OP_IGAMMA, DT_F64, av, xv, DT_F64);
    for (int i = 0; i < 8; ++i) {
      INFO("a=" << av[(size_t)i] << " x=" << xv[(size_t)i] << ": Q " << fmt(q.get(i)) << " P " << fmt(p.get(i)));
      CHECK(std::fabs(q.get(i) - wq[i]) <= 1e-14 * wq[i]);
      CHECK(std::fabs(p.get(i) - wp[i]) <= 1e-15 * wp[i]);
    }
  }
  SECTION("shifts by negative and >= bits") {
    HostTensor l = run1(CT_OP_LEFT_SHIFT, DT_I32, {1, 1, 1, -1, 3, 1}, {31, 32, -1, 4, 100, 0}, DT_I32);
    const int64_t wl[] = {INT32_MIN, 0, 0, -16, 0, 1};
    for (int i = 0; i < 6; ++i) CHECK(l.get_i(i) == wl[i]);
    HostTensor rr = run1(CT_OP_RIGHT_SHIFT, DT_I32, {-8, -8, 8, 8, -1, (double)INT32_MIN},
                         {1, 32, 40, -1, 5, 31}, DT_I32);
    const int64_t wr[] = {-4, -1, 0, 0, -1, -1};
    for (int i = 0; i < 6; ++i) CHECK(rr.get_i(i) == wr[i]);
    HostTensor u = run1(CT_OP_RIGHT_SHIFT, DT_U8, {255, 255, 128}, {1, 8, 7}, DT_U8);
    CHECK(u.get_i(0) == 127);
    CHECK(u.get_i(1) == 0);
    CHECK(u.get_i(2) == 1);
    HostTensor l8 = run1(CT_OP_LEFT_SHIFT, DT_I8, {1, 3, 1}, {7, 6, 8}, DT_I8);
    CHECK(l8.get_i(0) == -128);
    CHECK(l8.get_i(1) == -64);
    CHECK(l8.get_i(2) == 0);
    HostTensor l64 = run1(CT_OP_LEFT_SHIFT, DT_I64, {1, 1, 1}, {63, 64, -64}, DT_I64);
    CHECK(l64.get_i(0) == INT64_MIN);
    CHECK(l64.get_i(1) == 0);
    CHECK(l64.get_i(2) == 0);
  }
  SECTION("unsigned: compare, divide, shift and wrap as unsigned") {
    // elements as the int64 holding them: for uint64, -1 is its max and INT64_MIN is 2^63
    auto runu = [](int op, int d, std::vector<int64_t> av, std::vector<int64_t> bv, int dout) {
      HostTensor a = HostTensor::compact(d, {(int64_t)av.size()});
      HostTensor b = HostTensor::compact(d, {(int64_t)bv.size()});
      for (size_t i = 0; i < av.size(); ++i) {
        a.set_i((int64_t)i, av[i]);
        b.set_i((int64_t)i, bv[i]);
      }
      HostTensor o = HostTensor::compact(dout, {(int64_t)av.size()});
      CTensor x = a.view(), y = b.view(), z = o.view();
      CTStatus s = ct_binary(op, &x, &y, &z, nullptr);
      INFO(ct_last_error());
      REQUIRE(s == CT_OK);
      return o;
    };
    for (int d : {DT_U8, DT_U16, DT_U32, DT_U64}) {
      INFO(dtype(d).name);
      const int64_t top = d == DT_U64 ? -1 : int_max(d), half = d == DT_U64 ? INT64_MIN : (int_max(d) + 1) / 2;
      const int64_t bits = 8 * dtype(d).size;
      // the top half compares above the bottom one (no sign)
      const int64_t below_half = (int64_t)((uint64_t)half - 1);  // uint64: 2^63 - 1 (no signed overflow)
      HostTensor lt = runu(CT_OP_LESS, d, {1, top, half, half}, {top, 1, below_half, half}, DT_BOOL);
      CHECK(lt.get_i(0) == 1);
      CHECK(lt.get_i(1) == 0);
      CHECK(lt.get_i(2) == 0);
      CHECK(lt.get_i(3) == 0);
      HostTensor mx = runu(CT_OP_MAXIMUM, d, {1, top, half}, {top, 0, below_half}, d);
      CHECK(mx.get_i(0) == top);
      CHECK(mx.get_i(1) == top);
      CHECK(mx.get_i(2) == half);
      HostTensor mn = runu(CT_OP_MINIMUM, d, {1, top, half}, {top, 0, below_half}, d);
      CHECK(mn.get_i(0) == 1);
      CHECK(mn.get_i(2) == below_half);
      // wraps: 0 - 1 = max, max + 1 = 0, max * max = 1
      CHECK(runu(CT_OP_SUB, d, {0}, {1}, d).get_i(0) == top);
      CHECK(runu(CT_OP_ADD, d, {top}, {1}, d).get_i(0) == 0);
      CHECK(runu(CT_OP_MUL, d, {top}, {top}, d).get_i(0) == 1);
      // floor_div / mod: plain unsigned division; x // 0 = x % 0 = 0 as for the signed ints
      HostTensor q = runu(CT_OP_FLOOR_DIV, d, {top, top, 7, 0, 5}, {2, top, 0, 0, half}, d);
      CHECK(q.get_i(0) == (int64_t)((uint64_t)top >> 1));
      CHECK(q.get_i(1) == 1);
      CHECK(q.get_i(2) == 0);
      CHECK(q.get_i(3) == 0);
      CHECK(q.get_i(4) == 0);
      HostTensor m = runu(CT_OP_MOD, d, {top, top, 7, 5}, {2, half, 0, half}, d);
      CHECK(m.get_i(0) == 1);
      CHECK(m.get_i(1) == below_half);
      CHECK(m.get_i(2) == 0);
      CHECK(m.get_i(3) == 5);
      // true division is float64 of the unsigned values
      HostTensor dv = runu(CT_OP_DIV, d, {top, 1, 0}, {1, 0, 0}, DT_F64);
      CHECK(dv.get(0) == (double)(uint64_t)top);
      CHECK(dv.get(1) == kInf);
      CHECK(std::isnan(dv.get(2)));
      // shifts are logical; counts >= bits give 0 (no sign to fill)
      HostTensor r = runu(CT_OP_RIGHT_SHIFT, d, {top, top, top, half}, {1, bits - 1, bits, bits + 5}, d);
      CHECK(r.get_i(0) == (int64_t)((uint64_t)top >> 1));
      CHECK(r.get_i(1) == 1);
      CHECK(r.get_i(2) == 0);
      CHECK(r.get_i(3) == 0);
      HostTensor l = runu(CT_OP_LEFT_SHIFT, d, {1, 3, 1}, {bits - 1, bits - 1, bits}, d);
      CHECK(l.get_i(0) == half);
      CHECK(l.get_i(1) == half);
      CHECK(l.get_i(2) == 0);
      // pow wraps; exponents are never negative
      HostTensor p = runu(CT_OP_POW, d, {2, 3, top, 0}, {bits, 2, 2, 0}, d);
      CHECK(p.get_i(0) == 0);
      CHECK(p.get_i(1) == 9);
      CHECK(p.get_i(2) == 1);
      CHECK(p.get_i(3) == 1);
      HostTensor bx = runu(CT_OP_BITWISE_XOR, d, {top, half}, {half, half}, d);
      CHECK(bx.get_i(0) == below_half);
      CHECK(bx.get_i(1) == 0);
    }
  }
  SECTION("integer pow: negative exponents, wrapping") {
    HostTensor p = run1(CT_OP_POW, DT_I32, {2, 1, -1, -1, 0, 2, 3, -2, 0, 7},
                        {-1, -5, -3, -4, -1, 31, 21, 3, 0, 0}, DT_I32);
    const int64_t w[] = {0, 1, -1, 1, 0, INT32_MIN, wrap_int(10460353203ull, DT_I32), -8, 1, 1};
    for (int i = 0; i < 10; ++i) {
      INFO("pow element " << i);
      CHECK(p.get_i(i) == w[i]);
    }
    HostTensor p8 = run1(CT_OP_POW, DT_I8, {2, 3, -1}, {7, 5, -128}, DT_I8);
    CHECK(p8.get_i(0) == -128);
    CHECK(p8.get_i(1) == wrap_int(243, DT_I8));
    CHECK(p8.get_i(2) == 1);
  }
  SECTION("float pow with negative integer exponents and specials") {
    HostTensor p = run1(CT_OP_POW, DT_F64, {2, -2, 0, -0.0, kNaN, 1, -8, 4}, {-2, -3, -1, -1, 0, kNaN, 1.0 / 3, 0.5},
                        DT_F64);
    const double w[] = {0.25, -0.125, kInf, -kInf, 1, 1, kNaN, 2};
    for (int i = 0; i < 8; ++i) {
      INFO("pow element " << i << " got " << fmt(p.get(i)));
      CHECK(same_double(p.get(i), w[i]));
    }
  }
  SECTION("maximum/minimum propagate NaN, fmax/fmin ignore one NaN") {
    HostTensor mx = run1(CT_OP_MAXIMUM, DT_F32, {kNaN, 1, kNaN}, {1, kNaN, kNaN}, DT_F32);
    HostTensor fm = run1(CT_OP_FMAX, DT_F32, {kNaN, 1, kNaN}, {1, kNaN, kNaN}, DT_F32);
    HostTensor mn = run1(CT_OP_MINIMUM, DT_BF16, {kNaN, 1, -kInf}, {1, kNaN, 3}, DT_BF16);
    HostTensor fn = run1(CT_OP_FMIN, DT_F16, {kNaN, 1, -kInf}, {1, kNaN, 3}, DT_F16);
    CHECK(std::isnan(mx.get(0)));
    CHECK(std::isnan(mx.get(1)));
    CHECK(std::isnan(mx.get(2)));
    CHECK(fm.get(0) == 1);
    CHECK(fm.get(1) == 1);
    CHECK(std::isnan(fm.get(2)));
    CHECK(std::isnan(mn.get(0)));
    CHECK(std::isnan(mn.get(1)));
    CHECK(mn.get(2) == -kInf);
    CHECK(fn.get(0) == 1);
    CHECK(fn.get(1) == 1);
    CHECK(fn.get(2) == -kInf);
  }
  SECTION("comparisons with NaN, bool and int64 extremes") {
    HostTensor e = run1(CT_OP_EQUAL, DT_F64, {kNaN, 0.0, 1}, {kNaN, -0.0, 1}, DT_BOOL);
    HostTensor n = run1(CT_OP_NOT_EQUAL, DT_F64, {kNaN, 0.0, 1}, {kNaN, -0.0, 1}, DT_BOOL);
    HostTensor l = run1(CT_OP_LESS_EQUAL, DT_F16, {kNaN, -kInf, 1}, {1, -kInf, kNaN}, DT_BOOL);
    CHECK(e.get_i(0) == 0);
    CHECK(e.get_i(1) == 1);
    CHECK(e.get_i(2) == 1);
    CHECK(n.get_i(0) == 1);
    CHECK(n.get_i(1) == 0);
    CHECK(n.get_i(2) == 0);
    CHECK(l.get_i(0) == 0);
    CHECK(l.get_i(1) == 1);
    CHECK(l.get_i(2) == 0);
    // int64 values that double cannot tell apart must compare exactly
    HostTensor a = HostTensor::compact(DT_I64, {2}), b = HostTensor::compact(DT_I64, {2});
    a.set_i(0, INT64_MAX);
    b.set_i(0, INT64_MAX - 1);
    a.set_i(1, (1ll << 60) + 1);
    b.set_i(1, 1ll << 60);
    HostTensor o = HostTensor::compact(DT_BOOL, {2});
    CTensor av = a.view(), bv = b.view(), ov = o.view();
    REQUIRE(ct_binary(CT_OP_GREATER, &av, &bv, &ov, nullptr) == CT_OK);
    CHECK(o.get_i(0) == 1);
    CHECK(o.get_i(1) == 1);
    REQUIRE(ct_binary(CT_OP_EQUAL, &av, &bv, &ov, nullptr) == CT_OK);
    CHECK(o.get_i(0) == 0);
    CHECK(o.get_i(1) == 0);
  }
  SECTION("bool arithmetic: add is or, mul is and, div to float64") {
    HostTensor s = run1(CT_OP_ADD, DT_BOOL, {0, 0, 1, 1}, {0, 1, 0, 1}, DT_BOOL);
    HostTensor m = run1(CT_OP_MUL, DT_BOOL, {0, 0, 1, 1}, {0, 1, 0, 1}, DT_BOOL);
    HostTensor v = run1(CT_OP_DIV, DT_BOOL, {0, 0, 1, 1}, {0, 1, 0, 1}, DT_F64);
    const int64_t ws[] = {0, 1, 1, 1}, wm[] = {0, 0, 0, 1};
    for (int i = 0; i < 4; ++i) {
      CHECK(s.get_i(i) == ws[i]);
      CHECK(m.get_i(i) == wm[i]);
    }
    CHECK(std::isnan(v.get(0)));
    CHECK(v.get(1) == 0.0);
    CHECK(v.get(2) == kInf);
    CHECK(v.get(3) == 1.0);
    HostTensor id = run1(CT_OP_DIV, DT_I32, {7, -7, 0, 1}, {2, 0, 0, 3}, DT_F64);
    CHECK(id.get(0) == 3.5);
    CHECK(id.get(1) == -kInf);
    CHECK(std::isnan(id.get(2)));
    CHECK(id.get(3) == 1.0 / 3.0);
  }
}

TEST_CASE("binary: empty operands may have NULL data", "[binary]") {
  int64_t s03[2] = {0, 3}, s13[2] = {1, 3};
  float one[3] = {1, 2, 3};
  const CTDataType f32 = {CT_FLOAT, 32, 1};
  CTensor a = {nullptr, {CT_CPU, 0}, 2, f32, s03, nullptr, 0};
  CTensor b = {one, {CT_CPU, 0}, 2, f32, s13, nullptr, 0};
  CTensor o = {nullptr, {CT_CPU, 0}, 2, f32, s03, nullptr, 0};
  CTStatus s = ct_binary(CT_OP_ADD, &a, &b, &o, nullptr);
  INFO(ct_last_error());
  CHECK(s == CT_OK);
  CHECK(ct_binary(CT_OP_LESS, &b, &a, &o, nullptr) == CT_ERR_DTYPE_MISMATCH);  // still validated
  CTensor ob = {nullptr, {CT_CPU, 0}, 2, {CT_BOOL, 8, 1}, s03, nullptr, 0};
  CHECK(ct_binary(CT_OP_LESS, &b, &a, &ob, nullptr) == CT_OK);
}

TEST_CASE("binary: in place, out exactly a or exactly b", "[binary]") {
  struct C { int op, d; std::vector<int64_t> big, small; int variant; };
  const C cases[] = {
      {CT_OP_ADD, DT_F32, {4, 5}, {5}, 0},        {CT_OP_SUB, DT_F64, {4, 5}, {4, 1}, 2},
      {CT_OP_MUL, DT_I32, {3, 7}, {3, 7}, 3},     {CT_OP_POW, DT_F16, {6, 3}, {1, 3}, 1},
      {CT_OP_MOD, DT_I8, {5, 4}, {}, 0},          {CT_OP_MAXIMUM, DT_BF16, {2, 3, 4}, {3, 1}, 2},
      {CT_OP_BITWISE_XOR, DT_U8, {9}, {9}, 0},    {CT_OP_LOGICAL_AND, DT_BOOL, {4, 4}, {4}, 0},
      {CT_OP_LESS, DT_BOOL, {3, 3}, {3, 1}, 1},   {CT_OP_FLOOR_DIV, DT_I64, {300, 301}, {301}, 2},
  };
  for (const C& c : cases) {
    const BinRef& r = bin_ref(c.op);
    REQUIRE(out_dtype(r, c.d) == c.d);
    for (int which = 0; which < 2; ++which) {  // 0: out is a (big op small), 1: out is b (small op big)
      INFO("op " << r.name << " dtype " << dtype(c.d).name << " big" << shape_str(c.big) << " small"
                 << shape_str(c.small) << " layout " << c.variant << (which ? " out = b" : " out = a"));
      Rng rng((uint64_t)c.op + 7 * (uint64_t)which);
      HostTensor big = make_layout(c.d, c.big, c.variant);
      HostTensor small = HostTensor::compact(c.d, c.small);
      if (which == 0) fill_pair(r, big, small, rng);
      else fill_pair(r, small, big, rng);
      HostTensor big0 = big, small0 = small;  // the inputs as they were
      std::vector<char> cov = covered(big);
      std::vector<unsigned char> before = big.bytes();
      CTensor bv = big.view(), sv = small.view();
      CTStatus s = which == 0 ? ct_binary(c.op, &bv, &sv, &bv, nullptr) : ct_binary(c.op, &sv, &bv, &bv, nullptr);
      INFO(ct_last_error());
      REQUIRE(s == CT_OK);
      Mismatch mm;
      const ctref::Array want = which == 0 ? ref_binary(r, c.d, big0, small0) : ref_binary(r, c.d, small0, big0);
      for (int64_t i = 0; i < big.numel(); ++i) {
        std::string m;
        bool ok = which == 0 ? check_one(r, c.d, big0, i, small0, bidx(c.big, c.small, i), big, i, want, &m)
                             : check_one(r, c.d, small0, bidx(c.big, c.small, i), big0, i, big, i, want, &m);
        if (!ok) mm.add(m);
      }
      std::vector<unsigned char> after = big.bytes();
      for (size_t k = 0; k < after.size(); ++k)
        if (!cov[k] && after[k] != before[k]) {
          mm.add("wrote outside the elements");
          break;
        }
      INFO(mm.first);
      CHECK(mm.count == 0);
    }
  }
  // a op a into a: out exactly both inputs
  HostTensor x = HostTensor::compact(DT_F32, {5});
  for (int i = 0; i < 5; ++i) x.set(i, i - 2.5);
  CTensor xv = x.view();
  REQUIRE(ct_binary(CT_OP_MUL, &xv, &xv, &xv, nullptr) == CT_OK);
  for (int i = 0; i < 5; ++i) CHECK(x.get(i) == (i - 2.5) * (i - 2.5));
}

namespace {

struct Pool {
  std::mutex mu;
  std::atomic<int> calls{0};
  std::vector<std::pair<int64_t, int64_t>> ranges;
  int64_t n = 0;
};

void pool_parallel_for(void* user, int64_t n, int64_t grain, CTParallelBody body, void* ctx) {
  Pool* p = static_cast<Pool*>(user);
  p->calls++;
  if (grain < 1) grain = 1;
  int64_t chunk = std::max<int64_t>(grain, (n + 4) / 5);
  std::vector<std::pair<int64_t, int64_t>> rs;
  for (int64_t b = 0; b < n; b += chunk) rs.push_back({b, std::min(n, b + chunk)});
  {
    std::lock_guard<std::mutex> lk(p->mu);
    p->ranges.insert(p->ranges.end(), rs.begin(), rs.end());
    p->n += n;
  }
  std::vector<std::thread> ts;
  for (size_t i = rs.size(); i-- > 0;) {
    if (i % 2) ts.emplace_back([=] { body(ctx, rs[i].first, rs[i].second); });
    else body(ctx, rs[i].first, rs[i].second);
  }
  for (auto& t : ts) t.join();
}

}  // namespace

TEST_CASE("binary: large sizes (threads) against the reference", "[binary]") {
  struct C { int op, d; std::vector<int64_t> a, b; int va; };
  const C cases[] = {
      {CT_OP_ADD, DT_F32, {1000, 1000}, {1000}, 0},       {CT_OP_ADD, DT_F32, {1000, 1000}, {1000, 1}, 0},
      {CT_OP_MUL, DT_I64, {300, 1000}, {300, 1}, 1},      {CT_OP_LESS, DT_F16, {300, 1000}, {1000}, 2},
      {CT_OP_DIV, DT_I32, {300, 1}, {1, 700}, 0},         {CT_OP_MAXIMUM, DT_F64, {300, 701}, {300, 701}, 1},
      // outputs of 8 MiB and more: the integer vector loops' streaming stores
      // (aligned head, vector body, tail), both operands and a broadcast scalar
      {CT_OP_BITWISE_XOR, DT_I8, {2900, 2900}, {2900}, 0}, {CT_OP_BITWISE_AND, DT_U8, {2900, 2901}, {1}, 1},
      {CT_OP_ADD, DT_I64, {1100, 1001}, {1100, 1001}, 2},  {CT_OP_SUB, DT_U16, {2100, 2101}, {1, 1}, 0},
      {CT_OP_BITWISE_OR, DT_U32, {1}, {1500, 1500}, 0},
      // a broadcast row read by every row (a's here): the engine stages a copy per thread
      {CT_OP_SUB, DT_F32, {4000}, {900, 4000}, 0},        {CT_OP_DIV, DT_F64, {1, 3000}, {700, 3000}, 2},
      // float comparisons' bool outputs of 8 MiB and more: streamed through Staged
      {CT_OP_GREATER_EQUAL, DT_F32, {2900, 2900}, {2900}, 0}, {CT_OP_NOT_EQUAL, DT_F64, {2900, 2901}, {1}, 1},
  };
  Pool pool;
  CTCpuStream st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  st.parallel_for = pool_parallel_for;
  st.user = &pool;
  for (const C& c : cases) {
    const BinRef& r = bin_ref(c.op);
    Rng rng((uint64_t)c.op * 5 + (uint64_t)c.d);
    HostTensor a = make_layout(c.d, c.a, c.va);
    HostTensor b = HostTensor::compact(c.d, c.b);
    fill_pair(r, a, b, rng);
    if (&c - cases >= 2) {
      run_and_check(r, c.d, a, b, 0, "large, default threads");
      continue;
    }
    // the two (1000,1000) cases through a caller's parallel_for (chunks in
    // reverse order, some on other threads) instead
    int before = pool.calls.load();
    run_and_check(r, c.d, a, b, 0, "large, caller's parallel_for", true, &st);
    CHECK(pool.calls.load() > before);
  }
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

namespace {

// A failed ct_binary: status, message from ct_binary, substrings, out untouched.
void expect_binary_fail(int op, HostTensor& a, HostTensor& b, HostTensor& out, CTStatus want,
                        std::vector<std::string> subs = {}) {
  out.fill_bytes(0x5A);
  std::vector<unsigned char> before = out.bytes();
  CTensor av = a.view(), bv = b.view(), ov = out.view();
  CTStatus s = ct_binary(op, &av, &bv, &ov, nullptr);
  std::string msg = last_error();
  INFO("a" << shape_str(a.shape) << " " << dtype(a.d).name << ", b" << shape_str(b.shape) << " " << dtype(b.d).name
           << ", out" << shape_str(out.shape) << " " << dtype(out.d).name);
  INFO("status " << s << " (" << ct_status_string(s) << "), want " << ct_status_string(want) << "; message: \""
                 << msg << "\"");
  CHECK(s == want);
  CHECK(msg.rfind("ct_binary", 0) == 0);
  for (const std::string& sub : subs) {
    INFO("substring " << sub);
    CHECK(contains(msg, sub));
  }
  CHECK(out.bytes() == before);
}

}  // namespace

TEST_CASE("binary errors: shapes that do not broadcast, wrong out shape", "[binary]") {
  {
    HostTensor a = HostTensor::compact(DT_F32, {2, 4}), b = HostTensor::compact(DT_F32, {3});
    HostTensor o = HostTensor::compact(DT_F32, {2, 4});
    expect_binary_fail(CT_OP_ADD, a, b, o, CT_ERR_SHAPE_MISMATCH, {"[2,4]", "[3]"});
    expect_binary_fail(CT_OP_ADD, b, a, o, CT_ERR_SHAPE_MISMATCH, {"[2,4]", "[3]"});
  }
  {
    HostTensor a = HostTensor::compact(DT_I32, {0}), b = HostTensor::compact(DT_I32, {2});
    HostTensor o = HostTensor::compact(DT_I32, {2});
    expect_binary_fail(CT_OP_MUL, a, b, o, CT_ERR_SHAPE_MISMATCH, {"[0]", "[2]"});
  }
  {
    HostTensor a = HostTensor::compact(DT_F64, {3, 1, 4}), b = HostTensor::compact(DT_F64, {2, 3});
    HostTensor o = HostTensor::compact(DT_F64, {3, 2, 4});
    expect_binary_fail(CT_OP_SUB, a, b, o, CT_ERR_SHAPE_MISMATCH, {"[3,1,4]", "[2,3]"});
  }
  {
    // out's shape is not the broadcast shape [2,3]
    HostTensor a = HostTensor::compact(DT_F32, {2, 3}), b = HostTensor::compact(DT_F32, {3});
    for (std::vector<int64_t> bad : {std::vector<int64_t>{3, 2}, {1, 2, 3}, {6}, {2, 1}, {3}, {}}) {
      HostTensor o = HostTensor::compact(DT_F32, bad);
      expect_binary_fail(CT_OP_ADD, a, b, o, CT_ERR_SHAPE_MISMATCH, {shape_str(bad), "[2,3]"});
    }
    // a (4,1) op b (1,5): out must be (4,5), not (4,1) (in place into a is not allowed here)
    HostTensor a2 = HostTensor::compact(DT_F32, {4, 1}), b2 = HostTensor::compact(DT_F32, {1, 5});
    HostTensor o2 = HostTensor::compact(DT_F32, {4, 1});
    expect_binary_fail(CT_OP_ADD, a2, b2, o2, CT_ERR_SHAPE_MISMATCH, {"[4,1]", "[4,5]"});
  }
}

TEST_CASE("binary errors: dtypes", "[binary]") {
  HostTensor f32 = HostTensor::compact(DT_F32, {2, 3}), f64 = HostTensor::compact(DT_F64, {2, 3});
  HostTensor i32 = HostTensor::compact(DT_I32, {2, 3}), i64 = HostTensor::compact(DT_I64, {2, 3});
  HostTensor bl = HostTensor::compact(DT_BOOL, {2, 3});
  HostTensor of32 = HostTensor::compact(DT_F32, {2, 3}), of64 = HostTensor::compact(DT_F64, {2, 3});
  HostTensor oi32 = HostTensor::compact(DT_I32, {2, 3}), ob = HostTensor::compact(DT_BOOL, {2, 3});
  HostTensor oi64 = HostTensor::compact(DT_I64, {2, 3});
  SECTION("a and b differ") {
    expect_binary_fail(CT_OP_ADD, f32, f64, of32, CT_ERR_DTYPE_MISMATCH, {"float32", "float64"});
    expect_binary_fail(CT_OP_ADD, i32, i64, oi32, CT_ERR_DTYPE_MISMATCH, {"int32", "int64"});
    expect_binary_fail(CT_OP_LESS, f32, i32, ob, CT_ERR_DTYPE_MISMATCH);
  }
  SECTION("out's dtype is not the op's") {
    expect_binary_fail(CT_OP_LESS, f32, f32, of32, CT_ERR_DTYPE_MISMATCH);       // comparison -> bool
    expect_binary_fail(CT_OP_LOGICAL_AND, i32, i32, oi32, CT_ERR_DTYPE_MISMATCH);
    expect_binary_fail(CT_OP_DIV, i32, i32, oi32, CT_ERR_DTYPE_MISMATCH);        // int div -> float64
    expect_binary_fail(CT_OP_DIV, i32, i32, of32, CT_ERR_DTYPE_MISMATCH);
    expect_binary_fail(CT_OP_DIV, f32, f32, of64, CT_ERR_DTYPE_MISMATCH);        // float div keeps float32
    expect_binary_fail(CT_OP_ADD, f32, f32, of64, CT_ERR_DTYPE_MISMATCH);
    expect_binary_fail(CT_OP_ADD, i32, i32, oi64, CT_ERR_DTYPE_MISMATCH);        // no promotion
    expect_binary_fail(CT_OP_ADD, bl, bl, oi64, CT_ERR_DTYPE_MISMATCH);
  }
  SECTION("op not defined for the dtype") {
    expect_binary_fail(CT_OP_ATAN2, i32, i32, oi32, CT_ERR_UNSUPPORTED, {"atan2", "int32"});
    expect_binary_fail(CT_OP_SUB, bl, bl, ob, CT_ERR_UNSUPPORTED, {"sub", "bool"});
    expect_binary_fail(CT_OP_LEFT_SHIFT, f32, f32, of32, CT_ERR_UNSUPPORTED, {"left_shift", "float32"});
    expect_binary_fail(CT_OP_RIGHT_SHIFT, bl, bl, ob, CT_ERR_UNSUPPORTED, {"right_shift", "bool"});
    expect_binary_fail(CT_OP_BITWISE_AND, f64, f64, of64, CT_ERR_UNSUPPORTED, {"bitwise_and", "float64"});
    expect_binary_fail(CT_OP_POW, bl, bl, ob, CT_ERR_UNSUPPORTED, {"pow", "bool"});
    expect_binary_fail(CT_OP_HYPOT, i64, i64, oi64, CT_ERR_UNSUPPORTED, {"hypot", "int64"});
    expect_binary_fail(CT_OP_FLOOR_DIV, bl, bl, ob, CT_ERR_UNSUPPORTED, {"floor_div", "bool"});
  }
}

TEST_CASE("binary errors: op ids, NULL operands", "[binary]") {
  HostTensor a = HostTensor::compact(DT_F32, {2, 3}), b = HostTensor::compact(DT_F32, {2, 3});
  HostTensor o = HostTensor::compact(DT_F32, {2, 3});
  expect_binary_fail(CT_OP_EXP, a, b, o, CT_ERR_INVALID_ARGUMENT, {"exp"});
  expect_binary_fail(CT_OP_FMA, a, b, o, CT_ERR_INVALID_ARGUMENT, {"fma"});
  expect_binary_fail(CT_OP_SUM, a, b, o, CT_ERR_INVALID_ARGUMENT, {"sum"});
  expect_binary_fail(CT_OP_SOFTMAX, a, b, o, CT_ERR_INVALID_ARGUMENT, {"softmax"});
  expect_binary_fail(9999, a, b, o, CT_ERR_NOT_FOUND, {"9999"});
  expect_binary_fail(-1, a, b, o, CT_ERR_NOT_FOUND);
  expect_binary_fail(ct_op_count(), a, b, o, CT_ERR_NOT_FOUND);
  o.fill_bytes(0x5A);
  std::vector<unsigned char> before = o.bytes();
  CTensor av = a.view(), bv = b.view(), ov = o.view();
  CHECK(ct_binary(CT_OP_ADD, nullptr, &bv, &ov, nullptr) == CT_ERR_INVALID_ARGUMENT);
  CHECK(contains(last_error(), "a"));
  CHECK(ct_binary(CT_OP_ADD, &av, nullptr, &ov, nullptr) == CT_ERR_INVALID_ARGUMENT);
  CHECK(ct_binary(CT_OP_ADD, &av, &bv, nullptr, nullptr) == CT_ERR_INVALID_ARGUMENT);
  CHECK(o.bytes() == before);
}

TEST_CASE("binary errors: out overlapping an input other than exactly", "[binary]") {
  HostTensor buf = HostTensor::compact(DT_F32, {16});
  for (int i = 0; i < 16; ++i) buf.set(i, i);
  buf.fill_bytes(0x3F);
  std::vector<unsigned char> before = buf.bytes();
  int64_t sh[1] = {7}, sh2[2] = {2, 2}, stt[2] = {1, 2}, st0[2] = {0, 1};
  auto view = [&](uint64_t off, int64_t* shape, int nd, int64_t* strides, CTDataType dt) {
    CTensor t = {buf.buf(), {CT_CPU, 0}, nd, dt, shape, strides, off};
    return t;
  };
  const CTDataType f32 = {CT_FLOAT, 32, 1};
  HostTensor other = HostTensor::compact(DT_F32, {7});
  CTensor ov = other.view();
  {
    // out shifted by one element from a
    CTensor a = view(0, sh, 1, nullptr, f32), o = view(4, sh, 1, nullptr, f32);
    CHECK(ct_binary(CT_OP_ADD, &a, &ov, &o, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "out"));
    // out shifted by one element from b
    CHECK(ct_binary(CT_OP_ADD, &ov, &a, &o, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(ct_binary(CT_OP_ADD, &o, &ov, &a, nullptr) == CT_ERR_INVALID_ARGUMENT);
  }
  {
    // same data, transposed strides: not exact
    CTensor a = view(0, sh2, 2, nullptr, f32), o = view(0, sh2, 2, stt, f32);
    HostTensor b = HostTensor::compact(DT_F32, {2, 2});
    CTensor bv = b.view();
    CHECK(ct_binary(CT_OP_MUL, &a, &bv, &o, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(ct_binary(CT_OP_MUL, &bv, &a, &o, nullptr) == CT_ERR_INVALID_ARGUMENT);
  }
  {
    // out is a broadcast input's memory (b (1,2) is row 0 of out (2,2))
    CTensor o = view(0, sh2, 2, nullptr, f32);
    int64_t shb[2] = {1, 2};
    CTensor b = view(0, shb, 2, nullptr, f32);
    HostTensor a = HostTensor::compact(DT_F32, {2, 2});
    CTensor av = a.view();
    CHECK(ct_binary(CT_OP_ADD, &av, &b, &o, nullptr) == CT_ERR_INVALID_ARGUMENT);
  }
  {
    // out at a's address but of another dtype (int32 / int32 -> float64)
    int64_t sh4[1] = {4};
    CTensor a = {buf.buf(), {CT_CPU, 0}, 1, {CT_INT, 32, 1}, sh4, nullptr, 0};
    CTensor o = {buf.buf(), {CT_CPU, 0}, 1, {CT_FLOAT, 64, 1}, sh4, nullptr, 0};
    HostTensor b = HostTensor::compact(DT_I32, {4});
    for (int i = 0; i < 4; ++i) b.set_i(i, 1);
    CTensor bv = b.view();
    CHECK(ct_binary(CT_OP_DIV, &a, &bv, &o, nullptr) == CT_ERR_INVALID_ARGUMENT);
    // comparison: bool out over a float input's bytes
    CTensor af = {buf.buf(), {CT_CPU, 0}, 1, f32, sh4, nullptr, 0};
    CTensor ob = {buf.buf(), {CT_CPU, 0}, 1, {CT_BOOL, 8, 1}, sh4, nullptr, 4};
    HostTensor bf = HostTensor::compact(DT_F32, {4});
    CTensor bfv = bf.view();
    CHECK(ct_binary(CT_OP_LESS, &af, &bfv, &ob, nullptr) == CT_ERR_INVALID_ARGUMENT);
  }
  {
    // out overlaps itself (stride 0 on an extent > 1)
    HostTensor a = HostTensor::compact(DT_F32, {2, 2}), b = HostTensor::compact(DT_F32, {2, 2});
    CTensor av = a.view(), bv = b.view();
    CTensor o = view(0, sh2, 2, st0, f32);
    CHECK(ct_binary(CT_OP_ADD, &av, &bv, &o, nullptr) == CT_ERR_INVALID_ARGUMENT);
  }
  CHECK(buf.bytes() == before);
}

TEST_CASE("binary errors: devices, dtypes outside the ten, malformed tensors", "[binary]") {
  HostTensor a = HostTensor::compact(DT_F32, {2, 3}), b = HostTensor::compact(DT_F32, {3});
  HostTensor o = HostTensor::compact(DT_F32, {2, 3});
  o.fill_bytes(0x5A);
  std::vector<unsigned char> before = o.bytes();
  CTensor av = a.view(), bv = b.view(), ov = o.view();
  auto fails = [&](CTStatus got, CTStatus want) {
    std::string msg = last_error();
    INFO("status " << ct_status_string(got) << " want " << ct_status_string(want) << ": " << msg);
    CHECK(got == want);
    CHECK(msg.rfind("ct_binary", 0) == 0);
  };
  {
    CTensor x = bv;
    x.device = {CT_CUDA, 0};
    fails(ct_binary(CT_OP_ADD, &av, &x, &ov, nullptr), CT_ERR_DEVICE_MISMATCH);
    CTensor y = ov;
    y.device = {CT_VULKAN, 0};
    fails(ct_binary(CT_OP_ADD, &av, &bv, &y, nullptr), CT_ERR_DEVICE_MISMATCH);
    CTensor a2 = av, b2 = bv, o2 = ov;
    a2.device = b2.device = o2.device = {CT_VPI, 0};
    fails(ct_binary(CT_OP_ADD, &a2, &b2, &o2, nullptr), CT_ERR_UNSUPPORTED);
  }
  {
    CTensor a2 = av, b2 = bv, o2 = ov;
    a2.dtype = b2.dtype = o2.dtype = {CT_FLOAT, 32, 2};
    fails(ct_binary(CT_OP_ADD, &a2, &b2, &o2, nullptr), CT_ERR_UNSUPPORTED);
    a2.dtype = b2.dtype = o2.dtype = {CT_COMPLEX, 64, 1};
    fails(ct_binary(CT_OP_MUL, &a2, &b2, &o2, nullptr), CT_ERR_UNSUPPORTED);
  }
  {
    int64_t neg[1] = {-3};
    CTensor b2 = bv;
    b2.shape = neg;
    fails(ct_binary(CT_OP_ADD, &av, &b2, &ov, nullptr), CT_ERR_INVALID_ARGUMENT);
    CTensor a2 = av;
    a2.ndim = CT_MAX_NDIM + 1;
    fails(ct_binary(CT_OP_ADD, &a2, &bv, &ov, nullptr), CT_ERR_INVALID_ARGUMENT);
    CTensor b3 = bv;
    b3.data = nullptr;
    b3.byte_offset = 0;
    fails(ct_binary(CT_OP_ADD, &av, &b3, &ov, nullptr), CT_ERR_INVALID_ARGUMENT);
  }
  CHECK(o.bytes() == before);
}

// float32 pow runs in float64 lanes with its own log and exp (simd-inl.h),
// about 1e-12 relative: every result within half an ulp (and a hair) of the
// exact value, across the float32 range of bases and exponents to +-40,
// and pow_scalar (a non-integer exponent) the same.
TEST_CASE("float32 pow and pow_scalar: within half an ulp of the exact power", "[binary]") {
  const int64_t n = 300007;
  std::vector<float> a((size_t)n), b((size_t)n), y((size_t)n);
  uint64_t s = 88172645463325252ull;
  auto rnd = [&s]() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return double(s >> 11) * (1.0 / 9007199254740992.0);
  };
  for (int64_t i = 0; i < n; ++i) {
    a[(size_t)i] = (float)std::exp2(-140 + 268 * rnd());
    b[(size_t)i] = (float)(i % 3 == 0 ? -40 + 80 * rnd() : -3 + 6 * rnd());
  }
  int64_t shape[1] = {n};
  CTensor av{a.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 0}, bv = av, yv = av;
  bv.data = b.data();
  yv.data = y.data();
  for (int pass = 0; pass < 2; ++pass) {
    const double e = 1.5;
    if (pass == 0) REQUIRE(ct_binary(CT_OP_POW, &av, &bv, &yv, nullptr) == CT_OK);
    else REQUIRE(ct_unary_param(CT_OP_POW_SCALAR, &av, &e, 1, &yv, nullptr) == CT_OK);
    double worst = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double want = std::pow((double)a[(size_t)i], pass == 0 ? (double)b[(size_t)i] : e);
      const float wf = (float)want;
      if (std::isinf(wf) || wf == 0) {
        if (y[(size_t)i] != wf) worst = 1e9, at = i;
        continue;
      }
      const double ulp = std::fabs(wf) < std::numeric_limits<float>::min() ? std::ldexp(1.0, -149)
                                                                          : std::ldexp(1.0, std::ilogb(wf) - 23);
      const double err = std::fabs(double(y[(size_t)i]) - want) / ulp;
      if (err > worst) worst = err, at = i;
    }
    INFO((pass == 0 ? "pow" : "pow_scalar 1.5") << ": worst " << worst << " ulp at a=" << a[(size_t)at]
                                                << " b=" << b[(size_t)at]);
    CHECK(worst <= 0.501);
  }
}

// op on float32 a and b (b broadcast when it has one element) into *y32, and
// on the same values in float64 into *y64: the float32 path against the
// float64 op.
static void f32_and_f64(int op, std::vector<float>& a32, std::vector<float>& b32, std::vector<float>* y32,
                        std::vector<double>* y64) {
  const int64_t n = (int64_t)a32.size(), nb = (int64_t)b32.size();
  std::vector<double> a64(a32.begin(), a32.end()), b64(b32.begin(), b32.end());
  y32->assign((size_t)n, 0.0f), y64->assign((size_t)n, 0.0);
  int64_t sa[1] = {n}, sb[1] = {nb};
  CTensor a{a32.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, sa, nullptr, 0}, b = a, y = a;
  b.data = b32.data(), b.shape = sb, y.data = y32->data();
  REQUIRE(ct_binary(op, &a, &b, &y, nullptr) == CT_OK);
  a.data = a64.data(), b.data = b64.data(), y.data = y64->data();
  a.dtype.bits = b.dtype.bits = y.dtype.bits = 64;
  REQUIRE(ct_binary(op, &a, &b, &y, nullptr) == CT_OK);
}

TEST_CASE("binary: the orthogonal polynomials in float32 lanes are the float64 op rounded, bit for bit", "[binary]") {
  // float32 runs the scalar code's recurrence in float64 lanes for degrees
  // up to 16 (Chebyshev's below |x| = 1 only where the scalar code recurs
  // too), the same operations in the same order, so each result is the
  // float64 op's result rounded: x swept over [-3, 3] with +-1, 0, huge and
  // NaN mixed in, n from -2 to 20 with fractions, NaN and infinities, n
  // whole and broadcast.
  const int ops[] = {CT_OP_CHEBYSHEV_POLYNOMIAL_T, CT_OP_CHEBYSHEV_POLYNOMIAL_U, CT_OP_CHEBYSHEV_POLYNOMIAL_V,
                     CT_OP_CHEBYSHEV_POLYNOMIAL_W, CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_T,
                     CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_U, CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_V,
                     CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_W, CT_OP_HERMITE_POLYNOMIAL_H, CT_OP_HERMITE_POLYNOMIAL_HE,
                     CT_OP_LAGUERRE_POLYNOMIAL_L, CT_OP_LEGENDRE_POLYNOMIAL_P};
  const int64_t n = 20011;
  std::vector<float> x((size_t)n), deg((size_t)n);
  const float xs[] = {1.0f, -1.0f, 0.0f, -0.0f, 0.5f, 1e8f, 2e8f, -3e9f, (float)kNaN, (float)kInf};
  const float ns[] = {0.0f, 2.5f, -1.0f, 16.0f, 17.0f, 6.0f, 7.0f, 8.0f, 9.0f, (float)kNaN, (float)kInf, 1e20f};
  for (int64_t i = 0; i < n; ++i) {
    x[(size_t)i] = i % 13 == 5 ? xs[(i / 13) % 10] : (float)(-3.0 + 6.0 * (double)((i * 7919) % n) / (double)n);
    deg[(size_t)i] = i % 17 == 3 ? ns[(i / 17) % 12] : (float)((i * 31) % 23 - 2) + (i % 5 == 0 ? 0.25f : 0.0f);
  }
  for (int op : ops) {
    for (int bcast = 0; bcast < 2; ++bcast) {
      for (float one_n : {3.0f, 7.0f, 16.0f}) {
        if (!bcast && one_n != 3.0f) continue;
        std::vector<float> b32 = bcast ? std::vector<float>{one_n} : deg, y32;
        std::vector<double> y64;
        f32_and_f64(op, x, b32, &y32, &y64);
        int64_t bad = 0, first = -1;
        for (int64_t i = 0; i < n; ++i) {
          const float want = (float)y64[(size_t)i], got = y32[(size_t)i];
          const bool same = (std::isnan(want) && std::isnan(got)) ||
                            (want == got && std::signbit(want) == std::signbit(got));
          if (!same && bad++ == 0) first = i;
        }
        INFO(ctref::op_name(op) << (bcast ? " n broadcast " : " ") << (bcast ? one_n : 0.0f) << ": " << bad
                         << " unlike the float64 op, first at x=" << (first >= 0 ? x[(size_t)first] : 0.0f)
                         << " n=" << (first >= 0 ? b32[(size_t)(bcast ? 0 : first)] : 0.0f));
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("binary: igamma and igammac in float32 lanes within half an ulp of the float64 op", "[binary]") {
  // float32 runs the scalar code's series and continued fraction in float64
  // lanes (other rounding, the same steps): a and x log-uniform over
  // [1e-4, 2e5] (either side of the lanes' domain [2^-10, 1e5]), pairs next
  // to the switch at x = a + 1, and the specials (0, negative, NaN, inf),
  // elementwise and with x broadcast.
  const int64_t n = 40009;
  std::vector<float> av((size_t)n), xv((size_t)n);
  uint64_t st = 7;
  auto u01 = [&] {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    return double(st >> 11) * 0x1p-53;
  };
  const float sp[] = {0.0f, -0.0f, -1.0f, (float)kNaN, (float)kInf, 1e-30f, 0x1p-10f, 1e5f, 1.5f};
  for (int64_t i = 0; i < n; ++i) {
    const float a = (float)std::exp(std::log(1e-4) + (std::log(2e5) - std::log(1e-4)) * u01());
    av[(size_t)i] = a;
    const int k = (int)(i % 11);
    xv[(size_t)i] = k == 0   ? std::nextafter(a + 1.0f, 0.0f)
                    : k == 1 ? a + 1.0f
                    : k == 2 ? a * (float)(0.5 + u01())
                    : k == 3 ? sp[(i / 11) % 9]
                             : (float)std::exp(std::log(1e-4) + (std::log(2e5) - std::log(1e-4)) * u01());
    if (i % 13 == 7) av[(size_t)i] = sp[(i / 13) % 9];
  }
  for (int op : {CT_OP_IGAMMA, CT_OP_IGAMMAC}) {
    for (float one_x : {0.0f, 0.75f, 30.0f}) {
      const bool bcast = one_x != 0.0f;
      std::vector<float> x32 = bcast ? std::vector<float>{one_x} : xv, y32;
      std::vector<double> y64;
      f32_and_f64(op, av, x32, &y32, &y64);
      double worst = 0;
      int64_t at = -1, special_bad = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double want = y64[(size_t)i];
        const float got = y32[(size_t)i], wf = (float)want;
        if (!std::isfinite(wf) || wf == 0) {
          special_bad += !((std::isnan(wf) && std::isnan(got)) || (wf == got && std::signbit(wf) == std::signbit(got)));
          continue;
        }
        const double ulp = std::ldexp(1.0, std::max(std::ilogb(wf), -126) - 23);
        const double e = std::fabs((double)got - want) / ulp;
        if (e > worst) worst = e, at = i;
      }
      INFO(ctref::op_name(op) << (bcast ? " x broadcast " : " ") << one_x << ": worst " << worst << " ulp at a="
                              << (at >= 0 ? av[(size_t)at] : 0.0f) << " x=" << (at >= 0 ? x32[(size_t)(bcast ? 0 : at)] : 0.0f)
                              << ", " << special_bad << " specials unlike the float64 op");
      CHECK(worst <= 0.51);
      CHECK(special_bad == 0);
    }
  }
}
