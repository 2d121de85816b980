// test_nn_conv_matmul.cpp — category 3 (issue 4): ct_matmul, ct_conv2d,
// ct_conv2d_backward_data and ct_conv2d_backward_weight against their
// references in tests/reference (double accumulation over logical indices;
// the library is never called to compute a reference), and the backward ops
// against central finite differences of loss = sum(out * G) computed through
// the forward op.
//
// Every run uses the two-phase API: ct_*_workspace_size first, then a
// workspace of exactly that many bytes (64-byte aligned, followed by guard
// bytes that must stay untouched), or NULL when the query said 0. Outputs
// are filled with a byte sentinel first: every element must be written and
// the gaps of a non-compact output must keep the sentinel.
//
// Tolerances: |got - ref| <= rtol * (mag + |ref|) + atol where mag is the sum
// of |terms| of the reference dot product (plus |bias|): the reference of the
// same op on |inputs| without activation, a bound on the rounding error of
// any summation order. float32: rtol 1e-5, atol 1e-6;
// bfloat16 / float16 (inputs exactly representable, the reference computed
// from the stored values): rtol 1e-2, atol 1e-3. Finite differences:
// eps 1e-2, |fd - analytic| <= 1e-2 * |analytic| + 1e-3 * max|analytic|.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "test_ref.h"
#include "test_util.h"

using namespace ctt;

namespace {

const CTDevice kCpu = {CT_CPU, 0};
const unsigned char kSentinel = 0xCD;

// ---------------------------------------------------------------------------
// small helpers
// ---------------------------------------------------------------------------

int64_t prod(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

std::vector<int64_t> unravel(int64_t lin, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = lin % shape[i];
    lin /= shape[i];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t lin = 0;
  for (size_t i = 0; i < shape.size(); ++i) lin = lin * shape[i] + idx[i];
  return lin;
}

std::string vec_str(const std::vector<int64_t>& v) { return shape_str(v); }

void fill_random(HostTensor& t, Rng& rng, double lo = -1.0, double hi = 1.0) {
  int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) t.set(i, rng.uniform(lo, hi));
}

std::vector<double> dense(const HostTensor& t) {
  std::vector<double> v((size_t)t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[(size_t)i] = t.get(i);
  return v;
}

const char* act_name(int a) {
  switch (a) {
    case CT_ACTIVATION_NONE: return "none";
    case CT_ACTIVATION_RELU: return "relu";
    case CT_ACTIVATION_GELU: return "gelu(erf)";
    case CT_ACTIVATION_GELU_TANH: return "gelu_tanh";
    case CT_ACTIVATION_SIGMOID: return "sigmoid";
    case CT_ACTIVATION_TANH: return "tanh";
  }
  return "?";
}

// The reference (tests/reference) of NN op `op` with descriptor `desc` on
// `ins` (nullptr: absent) into float64 outputs shaped as `outs`: val; and
// mag, the same op with `plain_desc` (no activation) on |inputs|, the sum of
// |terms| of every output (the tolerances' scale).
struct RefVals {
  std::vector<std::vector<double>> val, mag;
};

RefVals nn_reference(int op, const void* desc, const void* plain_desc, const std::vector<const HostTensor*>& ins,
                     const std::vector<RefOut>& outs) {
  std::vector<ctref::Array> x(ins.size()), ax(ins.size());
  std::vector<const ctref::Array*> px, pax;
  for (size_t k = 0; k < ins.size(); ++k) {
    if (ins[k]) {
      x[k] = ref_in(*ins[k]);
      ax[k] = ref_abs(x[k]);
    }
    px.push_back(ins[k] ? &x[k] : nullptr);
    pax.push_back(ins[k] ? &ax[k] : nullptr);
  }
  RefVals r;
  for (const ctref::Array& a : reference_of(ref_call(op, desc), px, outs)) r.val.push_back(a.f);
  for (const ctref::Array& a : reference_of(ref_call(op, plain_desc), pax, outs)) r.mag.push_back(a.f);
  return r;
}

// Tolerance parameters for a data dtype.
double rtol_for(int d) { return d == DT_F32 ? 1e-5 : 1e-2; }
double atol_for(int d) { return d == DT_F32 ? 1e-6 : 1e-3; }

// Compare every logical element of t with ref; one CHECK per tensor, with the
// first mismatch and the worst error described.
void expect_close(const std::string& what, const HostTensor& t, const std::vector<double>& ref,
                  const std::vector<double>& mag, double rtol, double atol) {
  int64_t n = t.numel();
  REQUIRE((int64_t)ref.size() == n);
  int64_t bad = 0, first = -1, worst_i = -1;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    double g = t.get(i), r = ref[(size_t)i];
    double tol = rtol * (mag[(size_t)i] + std::fabs(r)) + atol;
    double e = std::fabs(g - r);
    if (!(e <= tol)) {  // NaN (e.g. an unwritten sentinel) fails too
      ++bad;
      if (first < 0) first = i;
    }
    double ratio = std::isnan(e) ? 1e300 : e / tol;
    if (ratio > worst) { worst = ratio; worst_i = i; }
  }
  std::ostringstream os;
  os << what << ": " << bad << " of " << n << " elements outside tolerance";
  if (first >= 0) {
    double g = t.get(first), r = ref[(size_t)first];
    os << "; first at " << vec_str(unravel(first, t.shape)) << " got " << fmt(g) << " want " << fmt(r)
       << " tol " << fmt(rtol * (mag[(size_t)first] + std::fabs(r)) + atol);
  }
  if (worst_i >= 0) os << "; worst err/tol " << fmt(worst) << " at " << vec_str(unravel(worst_i, t.shape));
  INFO(os.str());
  CHECK(bad == 0);
}

// Bytes of t's buffer that are no element's must still hold the sentinel.
void expect_gaps_untouched(const std::string& what, const HostTensor& t) {
  std::vector<char> cov = covered(t);
  std::vector<unsigned char> b = t.bytes();
  int64_t changed = 0, first = -1;
  for (size_t i = 0; i < b.size(); ++i)
    if (!cov[i] && b[i] != kSentinel) {
      ++changed;
      if (first < 0) first = (int64_t)i;
    }
  INFO(what << ": " << changed << " padding bytes written (first at byte " << first << ")");
  CHECK(changed == 0);
}

// A workspace of exactly n bytes, 64-byte aligned, followed by guard bytes.
struct Workspace {
  static const size_t kGuard = 64;
  std::vector<unsigned char> store;
  unsigned char* p = nullptr;
  size_t n = 0;
  explicit Workspace(size_t bytes) : n(bytes) {
    store.assign(bytes + 64 + kGuard, 0xA5);
    uintptr_t a = (uintptr_t)store.data();
    p = store.data() + (64 - a % 64) % 64;
  }
  void* ptr() { return n ? p : nullptr; }
  bool guard_intact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (p[n + i] != 0xA5) return false;
    return true;
  }
};

// Runs P (a problem: query(bytes*, null_data), run(ws, n), fill_outputs())
// with the two-phase API. Returns true when the op ran and said CT_OK.
template <class P>
bool run_two_phase(P& p, const std::string& what) {
  size_t bytes = (size_t)-1;
  CTStatus s = p.query(&bytes, false);
  std::string err = last_error();
  {
    INFO(what << ": workspace query -> " << ct_status_string(s) << " '" << err << "'");
    CHECK(s == CT_OK);
    if (s != CT_OK) return false;
    CHECK(bytes < ((size_t)1 << 31));
    if (bytes >= ((size_t)1 << 31)) return false;
  }
  p.fill_outputs(kSentinel);
  bool guard_ok = true;
  if (bytes == 0) {
    s = p.run(nullptr, 0);  // the query said 0: a NULL workspace must do
  } else {
    Workspace ws(bytes);
    s = p.run(ws.ptr(), bytes);
    guard_ok = ws.guard_intact();
  }
  err = last_error();
  INFO(what << ": workspace " << bytes << " bytes; run -> " << ct_status_string(s) << " '" << err << "'");
  CHECK(s == CT_OK);
  CHECK(guard_ok);
  if (s == CT_OK) CHECK(err.empty());
  return s == CT_OK;
}

template <class P>
void check_problem(P& p, const std::string& what) {
  if (run_two_phase(p, what)) p.verify(what);
}

// ---------------------------------------------------------------------------
// matmul
// ---------------------------------------------------------------------------

// Layouts of a matrix stack of shape (..., R, C):
//  0 compact (NULL strides)        1 column-major matrices (a transposed operand)
//  2 padded rows (pitch C+3) with gaps between matrices
//  3 column-major with a padded column pitch (R+2)
//  4 compact matrices, first batch dim stride 0 (an expanded view)
//  5 compact with explicit strides
const char* mat_layout_name(int l) {
  static const char* k[] = {"compact", "transposed", "padded-rows", "transposed-padded", "stride0-batch",
                            "compact-explicit"};
  return k[l];
}

HostTensor make_mat(int d, const std::vector<int64_t>& shape, int layout) {
  size_t nd = shape.size();
  if (layout == 0) return HostTensor::compact(d, shape, true);
  if (layout == 5) return HostTensor::compact(d, shape, false);
  int64_t R = shape[nd - 2], C = shape[nd - 1];
  std::vector<int64_t> st(nd, 0);
  int64_t mat = 0;
  switch (layout) {
    case 1: st[nd - 1] = R; st[nd - 2] = 1; mat = R * C; break;
    case 2: st[nd - 1] = 1; st[nd - 2] = C + 3; mat = R * (C + 3) + 5; break;
    case 3: st[nd - 2] = 1; st[nd - 1] = R + 2; mat = C * (R + 2) + 1; break;
    case 4: st[nd - 1] = 1; st[nd - 2] = C; mat = R * C; break;
  }
  int64_t s = mat;
  for (size_t j = nd - 2; j-- > 0;) {
    st[j] = s;
    s *= shape[j];
  }
  if (layout == 4 && nd > 2) st[0] = 0;
  return HostTensor::strided(d, shape, st, (layout == 2 || layout == 3) ? 3 : 0);
}

// The same storage seen with the last two dims swapped (a transposed view).
HostTensor transposed(const HostTensor& t) {
  HostTensor r = t;
  size_t nd = r.shape.size();
  std::swap(r.shape[nd - 1], r.shape[nd - 2]);
  std::swap(r.strides[nd - 1], r.strides[nd - 2]);
  r.null_strides = false;
  return r;
}

std::vector<int64_t> matmul_out_shape(const std::vector<int64_t>& as, const std::vector<int64_t>& bs) {
  size_t ra = as.size() - 2, rb = bs.size() - 2, r = std::max(ra, rb);
  std::vector<int64_t> o(r + 2, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - ra ? 1 : as[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : bs[i - (r - rb)];
    o[i] = std::max(da, db);
  }
  o[r] = as[ra];
  o[r + 1] = bs[rb + 1];
  return o;
}

// The index into a tensor of shape s broadcast (right-aligned, size-1 dims
// pinned to 0) to the output index idx; the last `own` dims of s are given.
int64_t bcast_lin(const std::vector<int64_t>& s, const std::vector<int64_t>& idx, size_t own,
                  const int64_t* own_idx) {
  std::vector<int64_t> i(s.size());
  size_t r = idx.size();
  for (size_t j = 0; j + own < s.size(); ++j) i[j] = s[j] == 1 ? 0 : idx[r - s.size() + j];
  for (size_t j = 0; j < own; ++j) i[s.size() - own + j] = own_idx[j];
  return ravel(i, s);
}

// out = act(a @ b + bias) in double; mag = sum |a*b| + |bias| (tests/reference).
void ref_matmul(const HostTensor& a, const HostTensor& b, const HostTensor* bias, int act,
                const std::vector<int64_t>& os, std::vector<double>& val, std::vector<double>& mag) {
  CTMatmulDesc d, plain;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  plain = d;
  d.activation = act;
  RefVals r = nn_reference(CT_OP_MATMUL, &d, &plain, {&a, &b, bias}, {{DT_F64, os}});
  val = r.val[0];
  mag = r.mag[0];
}

struct MatmulProblem {
  int d;
  HostTensor a, b, bias, out;
  bool has_bias = false;
  CTMatmulDesc desc;
  std::string name;

  MatmulProblem(int d_, const std::vector<int64_t>& as, const std::vector<int64_t>& bs,
                const std::vector<int64_t>& bias_s, bool with_bias, int bias_d, int al, int bl, int ol, int act,
                uint64_t seed, int out_d = -1)
      : d(d_) {
    Rng rng(seed);
    a = make_mat(d, as, al);
    b = make_mat(d, bs, bl);
    fill_random(a, rng);
    fill_random(b, rng);
    has_bias = with_bias;
    if (has_bias) {
      bias = HostTensor::compact(bias_d, bias_s, true);
      fill_random(bias, rng);
    }
    std::vector<int64_t> os = matmul_out_shape(as, bs);
    out = make_mat(out_d >= 0 ? out_d : d, os, ol);
    std::memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    desc.activation = act;
    std::ostringstream n;
    n << "matmul " << dtype(d).name << " a" << vec_str(as) << " " << mat_layout_name(al) << " @ b" << vec_str(bs)
      << " " << mat_layout_name(bl) << " -> out" << vec_str(os) << " " << mat_layout_name(ol) << ", bias "
      << (has_bias ? vec_str(bias_s) + " " + dtype(bias_d).name : std::string("none")) << ", act "
      << act_name(act) << (out_d >= 0 && out_d != d ? std::string(", out ") + dtype(out_d).name : std::string());
    name = n.str();
  }
  MatmulProblem(const MatmulProblem&) = delete;

  CTStatus query(size_t* bytes, bool null_data) {
    CTensor av = a.view(), bv = b.view(), ov = out.view(), cv = has_bias ? bias.view() : CTensor();
    if (null_data) av.data = bv.data = ov.data = cv.data = nullptr;
    return ct_matmul_workspace_size(&desc, &av, &bv, has_bias ? &cv : nullptr, &ov, bytes);
  }
  CTStatus run(void* ws, size_t n) {
    CTensor av = a.view(), bv = b.view(), ov = out.view(), cv = has_bias ? bias.view() : CTensor();
    return ct_matmul(&desc, &av, &bv, has_bias ? &cv : nullptr, &ov, ws, n, nullptr);
  }
  void fill_outputs(unsigned char s) { out.fill_bytes(s); }
  std::vector<HostTensor*> outputs() { return {&out}; }
  void verify(const std::string& what) {
    std::vector<double> val, mag;
    ref_matmul(a, b, has_bias ? &bias : nullptr, desc.activation, out.shape, val, mag);
    // a float32 out of half data: rounded once, float32's tolerance
    expect_close(what + " [out]", out, val, mag, rtol_for(out.d), atol_for(out.d));
    expect_gaps_untouched(what + " [out]", out);
  }
};

struct MMCase {
  std::vector<int64_t> as, bs, bias_s;
  bool bias;
  int al, bl, ol;
};

// The shape / broadcasting / layout / bias grid.
std::vector<MMCase> matmul_cases() {
  return {
      // plain 2-d, every bias form
      {{5, 7}, {7, 6}, {}, false, 0, 0, 0},
      {{5, 7}, {7, 6}, {6}, true, 0, 0, 0},
      {{5, 7}, {7, 6}, {5, 6}, true, 0, 0, 0},
      {{5, 7}, {7, 6}, {1, 6}, true, 0, 0, 0},
      {{1, 9}, {9, 1}, {1}, true, 0, 0, 0},  // a row times a column
      {{6, 1}, {1, 5}, {}, false, 0, 0, 0},  // K = 1 (outer product)
      // transposed operands as strided views, padded (non-compact) operands / out
      {{5, 7}, {7, 6}, {6}, true, 1, 0, 0},
      {{5, 7}, {7, 6}, {5, 6}, true, 0, 1, 0},
      {{5, 7}, {7, 6}, {}, false, 1, 1, 0},
      {{5, 7}, {7, 6}, {6}, true, 2, 2, 2},
      {{5, 7}, {7, 6}, {1, 6}, true, 3, 3, 0},
      {{5, 7}, {7, 6}, {}, false, 2, 3, 1},  // column-major out
      {{5, 7}, {7, 6}, {6}, true, 5, 5, 5},
      // batched 3-d / 4-d
      {{3, 4, 5}, {3, 5, 6}, {6}, true, 0, 0, 0},
      {{3, 4, 5}, {3, 5, 6}, {4, 6}, true, 1, 2, 0},
      {{3, 4, 5}, {3, 5, 6}, {3, 1, 6}, true, 0, 0, 2},
      {{2, 3, 4, 5}, {2, 3, 5, 3}, {}, false, 0, 0, 0},
      {{2, 3, 4, 5}, {2, 3, 5, 3}, {1, 3}, true, 3, 1, 2},
      // broadcast batch dims
      {{1, 4, 5}, {3, 5, 6}, {6}, true, 0, 0, 0},
      {{3, 4, 5}, {1, 5, 6}, {}, false, 0, 0, 0},
      {{3, 4, 5}, {1, 5, 6}, {4, 6}, true, 1, 1, 0},
      {{2, 1, 4, 5}, {1, 3, 5, 6}, {6}, true, 0, 0, 0},
      {{2, 1, 4, 5}, {3, 5, 6}, {}, false, 2, 0, 2},
      // rank promotion
      {{4, 5}, {3, 5, 6}, {6}, true, 0, 0, 0},
      {{3, 4, 5}, {5, 6}, {4, 6}, true, 0, 0, 0},
      {{4, 5}, {2, 3, 5, 6}, {}, false, 1, 3, 0},
      {{2, 3, 4, 5}, {5, 6}, {6}, true, 2, 1, 2},
  };
}

// f32 problem for each case in the grid.
TEST_CASE("matmul float32: shapes, batch broadcasting, rank promotion, strided views, every bias form", "[nn]") {
  std::vector<MMCase> cs = matmul_cases();
  for (size_t i = 0; i < cs.size(); ++i) {
    const MMCase& c = cs[i];
    MatmulProblem p(DT_F32, c.as, c.bs, c.bias_s, c.bias, DT_F32, c.al, c.bl, c.ol, CT_ACTIVATION_NONE,
                    100 + i);
    check_problem(p, "case " + std::to_string(i) + ": " + p.name);
  }
}

TEST_CASE("matmul float32: every activation, after the bias", "[nn]") {
  const int acts[] = {CT_ACTIVATION_NONE,    CT_ACTIVATION_RELU,     CT_ACTIVATION_GELU,
                      CT_ACTIVATION_GELU_TANH, CT_ACTIVATION_SIGMOID, CT_ACTIVATION_TANH};
  struct Shp {
    std::vector<int64_t> as, bs, bias_s;
    bool bias;
    int al, bl, ol;
  };
  const Shp shapes[] = {
      {{6, 8}, {8, 5}, {5}, true, 0, 0, 0},
      {{6, 8}, {8, 5}, {}, false, 1, 0, 2},
      {{2, 4, 8}, {8, 5}, {4, 5}, true, 0, 1, 0},
      {{2, 4, 8}, {2, 8, 5}, {1, 5}, true, 2, 0, 0},
  };
  uint64_t seed = 500;
  for (const Shp& s : shapes)
    for (int act : acts) {
      MatmulProblem p(DT_F32, s.as, s.bs, s.bias_s, s.bias, DT_F32, s.al, s.bl, s.ol, act, seed++);
      check_problem(p, p.name);
    }
}

TEST_CASE("matmul: a zero-initialised {sizeof} desc is the plain matmul", "[nn]") {
  MatmulProblem p(DT_F32, {2, 5, 7}, {2, 7, 4}, {4}, true, DT_F32, 0, 1, 0, CT_ACTIVATION_NONE, 77);
  CTMatmulDesc zero;
  std::memset(&zero, 0, sizeof zero);
  zero.struct_size = sizeof zero;
  p.desc = zero;
  // negative pre-activations exist, so a stray relu would show
  bool any_negative = false;
  check_problem(p, "zero desc: " + p.name);
  for (int64_t i = 0; i < p.out.numel(); ++i) any_negative = any_negative || p.out.get(i) < 0;
  CHECK(any_negative);
}

// bfloat16 / float16: either supported and correct, or CT_ERR_UNSUPPORTED
// from ct_op_supported and from the call, with a reason and out untouched.
void check_half_matmul(int d) {
  CTStatus sup = ct_op_supported(CT_OP_MATMUL, kCpu, dtype(d).dt);
  std::string msg = last_error();
  INFO("ct_op_supported(matmul, cpu, " << dtype(d).name << ") -> " << ct_status_string(sup) << " '" << msg
                                        << "'");
  if (sup == CT_OK) {
    CHECK(msg.empty());
    std::vector<MMCase> cs = matmul_cases();
    const int acts[] = {CT_ACTIVATION_NONE, CT_ACTIVATION_RELU, CT_ACTIVATION_GELU, CT_ACTIVATION_SIGMOID};
    for (size_t i = 0; i < cs.size(); i += 2) {
      const MMCase& c = cs[i];
      int bias_d = (i / 2) % 2 ? DT_F32 : d;  // bias in the data dtype or float32
      MatmulProblem p(d, c.as, c.bs, c.bias_s, c.bias, bias_d, c.al, c.bl, c.ol, acts[(i / 2) % 4], 900 + i);
      check_problem(p, "case " + std::to_string(i) + ": " + p.name);
    }
  } else {
    CHECK(sup == CT_ERR_UNSUPPORTED);
    CHECK(!msg.empty());
    MatmulProblem p(d, {4, 6}, {6, 5}, {5}, true, d, 0, 0, 0, CT_ACTIVATION_NONE, 901);
    p.fill_outputs(kSentinel);
    std::vector<unsigned char> before = p.out.bytes();
    size_t bytes = 0;
    CTStatus qs = p.query(&bytes, false);
    std::string qmsg = last_error();
    INFO("query -> " << ct_status_string(qs) << " '" << qmsg << "'");
    CHECK((qs == CT_ERR_UNSUPPORTED || qs == CT_OK));
    if (qs != CT_OK) CHECK(!qmsg.empty());
    Workspace ws(1 << 20);
    CTStatus rs = p.run(ws.ptr(), ws.n);
    std::string rmsg = last_error();
    INFO("run -> " << ct_status_string(rs) << " '" << rmsg << "'");
    CHECK(rs == CT_ERR_UNSUPPORTED);
    CHECK(!rmsg.empty());
    CHECK(p.out.bytes() == before);
  }
}

TEST_CASE("matmul bfloat16: correct when ct_op_supported says so, else CT_ERR_UNSUPPORTED with a reason", "[nn]") {
  check_half_matmul(DT_BF16);
}

TEST_CASE("matmul float16: correct when ct_op_supported says so, else CT_ERR_UNSUPPORTED with a reason", "[nn]") {
  check_half_matmul(DT_F16);
}

// A float32 out for float16 / bfloat16 a and b (oneDNN's f32 destination:
// the products accumulated and rounded once to float32) wherever the half
// matmul runs; any other out dtype is refused naming the rule.
TEST_CASE("matmul float16/bfloat16 into a float32 out: correct where the half matmul runs, else refused", "[nn]") {
  for (int d : {DT_BF16, DT_F16}) {
    const bool sup = ct_op_supported(CT_OP_MATMUL, kCpu, dtype(d).dt) == CT_OK;
    std::vector<MMCase> cs = matmul_cases();
    for (size_t i = 0; i < cs.size(); i += 3) {
      const MMCase& c = cs[i];
      MatmulProblem p(d, c.as, c.bs, c.bias_s, c.bias, i % 2 ? DT_F32 : d, c.al, c.bl, c.ol,
                      i % 6 ? CT_ACTIVATION_NONE : CT_ACTIVATION_RELU, 950 + i, DT_F32);
      if (sup) {
        check_problem(p, "case " + std::to_string(i) + ": " + p.name);
        continue;
      }
      Workspace ws(1 << 20);
      CHECK(p.run(ws.ptr(), ws.n) == CT_ERR_UNSUPPORTED);
      CHECK(!last_error().empty());
    }
    MatmulProblem bad(d, {4, 6}, {6, 5}, {}, false, d, 0, 0, 0, CT_ACTIVATION_NONE, 960, DT_F64);
    Workspace ws(1 << 20);
    CHECK(bad.run(ws.ptr(), ws.n) == CT_ERR_DTYPE_MISMATCH);
    CHECK(last_error().find("float32 for float16/bfloat16") != std::string::npos);
  }
  // float32 data keeps its dtype: a float16 out is refused
  MatmulProblem f(DT_F32, {4, 6}, {6, 5}, {}, false, DT_F32, 0, 0, 0, CT_ACTIVATION_NONE, 961, DT_F16);
  Workspace ws(1 << 20);
  CHECK(f.run(ws.ptr(), ws.n) == CT_ERR_DTYPE_MISMATCH);
}

TEST_CASE("matmul: stride-0 (expanded) batch operands", "[nn]") {
  MatmulProblem p1(DT_F32, {3, 4, 5}, {3, 5, 6}, {6}, true, DT_F32, 4, 0, 0, CT_ACTIVATION_NONE, 31);
  check_problem(p1, p1.name);
  MatmulProblem p2(DT_F32, {3, 4, 5}, {3, 5, 6}, {}, false, DT_F32, 0, 4, 0, CT_ACTIVATION_RELU, 32);
  check_problem(p2, p2.name);
}

// Run out = a @ b (plain desc, no bias) through ct_matmul on arbitrary views.
bool matmul_views(HostTensor& a, HostTensor& b, HostTensor& out, const std::string& what) {
  CTMatmulDesc desc;
  std::memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  CTensor av = a.view(), bv = b.view(), ov = out.view();
  size_t bytes = (size_t)-1;
  CTStatus s = ct_matmul_workspace_size(&desc, &av, &bv, nullptr, &ov, &bytes);
  if (s != CT_OK) {
    FAIL_CHECK(what << ": workspace query -> " << ct_status_string(s) << " '" << last_error() << "'");
    return false;
  }
  Workspace ws(bytes);
  s = ct_matmul(&desc, &av, &bv, nullptr, &ov, ws.ptr(), bytes, nullptr);
  if (s != CT_OK) {
    FAIL_CHECK(what << ": ct_matmul -> " << ct_status_string(s) << " '" << last_error() << "'");
    return false;
  }
  if (!ws.guard_intact()) FAIL_CHECK(what << ": wrote past the workspace");
  return true;
}

// d(sum(out * G))/d(t) by central differences, every element of t, through
// loss(); compared with the analytic gradient `an` (same logical shape).
template <class Loss>
void expect_fd(const std::string& what, HostTensor& t, const HostTensor& an, Loss loss, double eps = 1e-2) {
  REQUIRE(t.numel() == an.numel());
  double maxabs = 0;
  for (int64_t i = 0; i < an.numel(); ++i) maxabs = std::max(maxabs, std::fabs(an.get(i)));
  int64_t bad = 0, first = -1;
  double first_fd = 0, first_an = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get(i);
    t.set(i, v + eps);
    double hp = t.get(i);
    double lp = loss();
    t.set(i, v - eps);
    double hm = t.get(i);
    double lm = loss();
    t.set(i, v);
    double fd = (lp - lm) / (hp - hm);
    double g = an.get(i);
    if (!(std::fabs(fd - g) <= 1e-2 * std::fabs(g) + 1e-3 * maxabs)) {
      ++bad;
      if (first < 0) { first = i; first_fd = fd; first_an = g; }
    }
  }
  INFO(what << ": " << bad << " of " << t.numel() << " gradient entries differ from central differences"
            << (first >= 0 ? "; first at " + vec_str(unravel(first, t.shape)) + " fd " + fmt(first_fd) +
                                 " analytic " + fmt(first_an)
                           : std::string())
            << " (max |analytic| " << fmt(maxabs) << ")");
  CHECK(maxabs > 0);
  CHECK(bad == 0);
}

TEST_CASE("matmul gradients: dA = G @ B^T and dB = A^T @ G through transposed views, vs reference and finite differences",
          "[nn]") {
  struct G {
    std::vector<int64_t> as, bs;
    int al, bl;
  };
  const G cases[] = {
      {{4, 5}, {5, 3}, 0, 0},
      {{4, 5}, {5, 3}, 2, 1},
      {{2, 3, 4}, {2, 4, 3}, 0, 0},
      {{2, 3, 4}, {2, 4, 3}, 1, 2},
  };
  uint64_t seed = 700;
  for (const G& c : cases) {
    Rng rng(seed++);
    HostTensor a = make_mat(DT_F32, c.as, c.al), b = make_mat(DT_F32, c.bs, c.bl);
    fill_random(a, rng);
    fill_random(b, rng);
    std::vector<int64_t> os = matmul_out_shape(c.as, c.bs);
    HostTensor g = HostTensor::compact(DT_F32, os, true);
    fill_random(g, rng);
    HostTensor out = HostTensor::compact(DT_F32, os, true);
    std::string what = "a" + vec_str(c.as) + " " + mat_layout_name(c.al) + " b" + vec_str(c.bs) + " " +
                       mat_layout_name(c.bl);
    INFO(what);
    HostTensor bt = transposed(b), at = transposed(a);
    HostTensor da = HostTensor::compact(DT_F32, c.as, true), db = HostTensor::compact(DT_F32, c.bs, true);
    da.fill_bytes(kSentinel);
    db.fill_bytes(kSentinel);
    if (!matmul_views(g, bt, da, what + " dA = G @ B^T")) continue;
    if (!matmul_views(at, g, db, what + " dB = A^T @ G")) continue;
    std::vector<double> val, mag;
    ref_matmul(g, bt, nullptr, CT_ACTIVATION_NONE, c.as, val, mag);
    expect_close(what + " dA vs reference", da, val, mag, 1e-5, 1e-6);
    ref_matmul(at, g, nullptr, CT_ACTIVATION_NONE, c.bs, val, mag);
    expect_close(what + " dB vs reference", db, val, mag, 1e-5, 1e-6);
    auto loss = [&]() {
      if (!matmul_views(a, b, out, what + " forward")) return std::nan("");
      double l = 0;
      for (int64_t i = 0; i < out.numel(); ++i) l += out.get(i) * g.get(i);
      return l;
    };
    expect_fd(what + " dA", a, da, loss);
    expect_fd(what + " dB", b, db, loss);
  }
}

TEST_CASE("matmul gradient of a broadcast (rank-promoted) b: dB = A^T @ G over the flattened batch, as views",
          "[nn]") {
  // out (2,3,5) = a (2,3,4) @ b (4,5): dB = sum over the batch of A_i^T G_i
  // = (a viewed as (6,4))^T @ (G viewed as (6,5)), all strided views.
  Rng rng(811);
  HostTensor a = HostTensor::compact(DT_F32, {2, 3, 4}, true), b = HostTensor::compact(DT_F32, {4, 5}, true);
  fill_random(a, rng);
  fill_random(b, rng);
  HostTensor g = HostTensor::compact(DT_F32, {2, 3, 5}, true);
  fill_random(g, rng);
  HostTensor out = HostTensor::compact(DT_F32, {2, 3, 5}, true);
  HostTensor a2 = a;  // (6,4) view of the same values
  a2.shape = {6, 4};
  a2.strides = {4, 1};
  HostTensor g2 = g;
  g2.shape = {6, 5};
  g2.strides = {5, 1};
  HostTensor at = transposed(a2);
  HostTensor db = HostTensor::compact(DT_F32, {4, 5}, true);
  db.fill_bytes(kSentinel);
  REQUIRE(matmul_views(at, g2, db, "dB = (a as (6,4))^T @ (G as (6,5))"));
  std::vector<double> val, mag;
  ref_matmul(at, g2, nullptr, CT_ACTIVATION_NONE, {4, 5}, val, mag);
  expect_close("dB of broadcast b vs reference", db, val, mag, 1e-5, 1e-6);
  auto loss = [&]() {
    if (!matmul_views(a, b, out, "forward a(2,3,4) @ b(4,5)")) return std::nan("");
    double l = 0;
    for (int64_t i = 0; i < out.numel(); ++i) l += out.get(i) * g.get(i);
    return l;
  };
  expect_fd("dB of broadcast b", b, db, loss);
}

// ---------------------------------------------------------------------------
// conv2d
// ---------------------------------------------------------------------------

// (N, C, H, W) data layouts:
//  0 NCHW compact (NULL strides)    1 NHWC (strides only)
//  2 NCHW with padded rows, planes and images (non-compact, positive strides)
//  3 NHWC with a padded channel pitch and image gap
const char* act_layout_name(int l) {
  static const char* k[] = {"NCHW", "NHWC", "NCHW-padded", "NHWC-padded"};
  return k[l];
}

HostTensor make_act(int d, int64_t N, int64_t C, int64_t H, int64_t W, int layout) {
  std::vector<int64_t> sh = {N, C, H, W};
  switch (layout) {
    case 1: return HostTensor::strided(d, sh, {H * W * C, 1, W * C, C}, 0);
    case 2: {
      int64_t Wp = W + 3, plane = H * Wp + 2, img = C * plane + 7;
      return HostTensor::strided(d, sh, {img, plane, Wp, 1}, 4);
    }
    case 3: {
      int64_t Cp = C + 2;
      return HostTensor::strided(d, sh, {H * W * Cp + 5, 1, W * Cp, Cp}, 4);
    }
  }
  return HostTensor::compact(d, sh, true);
}

// (K, C/groups, R, S) weight layouts:
//  0 OIHW compact   1 HWIO (memory order R, S, Cg, K)   2 OHWI (memory K, R, S, Cg)
//  3 OIHW with a padded output-channel pitch
const char* wei_layout_name(int l) {
  static const char* k[] = {"OIHW", "HWIO", "OHWI", "OIHW-padded"};
  return k[l];
}

HostTensor make_wei(int d, int64_t K, int64_t Cg, int64_t R, int64_t S, int layout) {
  std::vector<int64_t> sh = {K, Cg, R, S};
  switch (layout) {
    case 1: return HostTensor::strided(d, sh, {1, K, S * Cg * K, Cg * K}, 0);
    case 2: return HostTensor::strided(d, sh, {R * S * Cg, 1, S * Cg, Cg}, 0);
    case 3: return HostTensor::strided(d, sh, {Cg * R * S + 3, R * S, S, 1}, 2);
  }
  return HostTensor::compact(d, sh, true);
}

struct ConvCase {
  const char* name;
  int64_t N, C, H, W, K, R, S;
  int32_t groups;                     // raw desc value (0 means 1)
  int64_t st[2], pb[2], pe[2], dil[2];  // raw desc values (0 means 1 for st / dil)
  bool bias;
  int act;
  int xl, wl, yl;
};

struct Geo {
  int64_t N, C, H, W, K, R, S, P, Q, G, Cg, Kg, s0, s1, pb0, pb1, d0, d1;
};

int64_t one_if_zero(int64_t v) { return v == 0 ? 1 : v; }

Geo geo(const ConvCase& c) {
  Geo g;
  g.N = c.N; g.C = c.C; g.H = c.H; g.W = c.W; g.K = c.K; g.R = c.R; g.S = c.S;
  g.G = one_if_zero(c.groups);
  g.Cg = c.C / g.G;
  g.Kg = c.K / g.G;
  g.s0 = one_if_zero(c.st[0]); g.s1 = one_if_zero(c.st[1]);
  g.d0 = one_if_zero(c.dil[0]); g.d1 = one_if_zero(c.dil[1]);
  g.pb0 = c.pb[0]; g.pb1 = c.pb[1];
  g.P = (c.H + c.pb[0] + c.pe[0] - g.d0 * (c.R - 1) - 1) / g.s0 + 1;  // floor (numerator >= 0 here)
  g.Q = (c.W + c.pb[1] + c.pe[1] - g.d1 * (c.S - 1) - 1) / g.s1 + 1;
  return g;
}

CTConv2dDesc conv_desc(const ConvCase& c, bool forward) {
  CTConv2dDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.groups = c.groups;
  for (int i = 0; i < 2; ++i) {
    d.stride[i] = c.st[i];
    d.pad_begin[i] = c.pb[i];
    d.pad_end[i] = c.pe[i];
    d.dilation[i] = c.dil[i];
  }
  d.activation = forward ? c.act : CT_ACTIVATION_NONE;
  return d;
}

std::string describe(const ConvCase& c, const char* op, int d = DT_F32) {
  Geo g = geo(c);
  std::ostringstream os;
  os << op << " " << dtype(d).name << " '" << c.name << "': x(N,C,H,W)=(" << c.N << "," << c.C << "," << c.H << ","
     << c.W << ") " << act_layout_name(c.xl) << ", w(K,C/g,R,S)=(" << c.K << "," << g.Cg << "," << c.R << ","
     << c.S << ") " << wei_layout_name(c.wl) << ", y(N,K,P,Q)=(" << c.N << "," << c.K << "," << g.P << "," << g.Q
     << ") " << act_layout_name(c.yl) << ", desc{groups " << c.groups << ", stride (" << c.st[0] << "," << c.st[1]
     << "), pad_begin (" << c.pb[0] << "," << c.pb[1] << "), pad_end (" << c.pe[0] << "," << c.pe[1]
     << "), dilation (" << c.dil[0] << "," << c.dil[1] << ")}, bias " << (c.bias ? "yes" : "no") << ", act "
     << act_name(c.act);
  return os.str();
}

struct ConvFwdProblem {
  ConvCase c;
  Geo g;
  int d;
  HostTensor x, w, bias, y;
  CTConv2dDesc desc;

  ConvFwdProblem(const ConvCase& c_, int d_, int bias_d, uint64_t seed) : c(c_), g(geo(c_)), d(d_) {
    Rng rng(seed);
    x = make_act(d, g.N, g.C, g.H, g.W, c.xl);
    w = make_wei(d, g.K, g.Cg, g.R, g.S, c.wl);
    fill_random(x, rng);
    fill_random(w, rng, -0.7, 0.7);
    if (c.bias) {
      bias = HostTensor::compact(bias_d, {g.K}, true);
      fill_random(bias, rng);
    }
    y = make_act(d, g.N, g.K, g.P, g.Q, c.yl);
    desc = conv_desc(c, true);
  }
  ConvFwdProblem(const ConvFwdProblem&) = delete;

  CTStatus query(size_t* bytes, bool null_data) {
    CTensor xv = x.view(), wv = w.view(), yv = y.view(), bv = c.bias ? bias.view() : CTensor();
    if (null_data) xv.data = wv.data = yv.data = bv.data = nullptr;
    return ct_conv2d_workspace_size(&desc, &xv, &wv, c.bias ? &bv : nullptr, &yv, bytes);
  }
  CTStatus run(void* ws, size_t n) {
    CTensor xv = x.view(), wv = w.view(), yv = y.view(), bv = c.bias ? bias.view() : CTensor();
    return ct_conv2d(&desc, &xv, &wv, c.bias ? &bv : nullptr, &yv, ws, n, nullptr);
  }
  void fill_outputs(unsigned char s) { y.fill_bytes(s); }
  void verify(const std::string& what) {
    CTConv2dDesc plain = desc;
    plain.activation = CT_ACTIVATION_NONE;
    RefVals r = nn_reference(CT_OP_CONV2D, &desc, &plain, {&x, &w, c.bias ? &bias : nullptr}, {{DT_F64, y.shape}});
    expect_close(what + " [y]", y, r.val[0], r.mag[0], rtol_for(d), atol_for(d));
    expect_gaps_untouched(what + " [y]", y);
  }
};

struct ConvBwdDataProblem {
  ConvCase c;
  Geo g;
  HostTensor dy, w, dx;
  CTConv2dDesc desc;

  ConvBwdDataProblem(const ConvCase& c_, uint64_t seed) : c(c_), g(geo(c_)) {
    Rng rng(seed);
    dy = make_act(DT_F32, g.N, g.K, g.P, g.Q, c.yl);
    w = make_wei(DT_F32, g.K, g.Cg, g.R, g.S, c.wl);
    fill_random(dy, rng);
    fill_random(w, rng, -0.7, 0.7);
    dx = make_act(DT_F32, g.N, g.C, g.H, g.W, c.xl);
    desc = conv_desc(c, false);
  }
  ConvBwdDataProblem(const ConvBwdDataProblem&) = delete;

  CTStatus query(size_t* bytes, bool null_data) {
    CTensor dyv = dy.view(), wv = w.view(), dxv = dx.view();
    if (null_data) dyv.data = wv.data = dxv.data = nullptr;
    return ct_conv2d_backward_data_workspace_size(&desc, &dyv, &wv, &dxv, bytes);
  }
  CTStatus run(void* ws, size_t n) {
    CTensor dyv = dy.view(), wv = w.view(), dxv = dx.view();
    return ct_conv2d_backward_data(&desc, &dyv, &wv, &dxv, ws, n, nullptr);
  }
  void fill_outputs(unsigned char s) { dx.fill_bytes(s); }
  void verify(const std::string& what) {
    RefVals r = nn_reference(CT_OP_CONV2D_BACKWARD_DATA, &desc, &desc, {&dy, &w}, {{DT_F64, dx.shape}});
    expect_close(what + " [dx]", dx, r.val[0], r.mag[0], 1e-5, 1e-6);
    expect_gaps_untouched(what + " [dx]", dx);
  }
};

struct ConvBwdWeightProblem {
  ConvCase c;
  Geo g;
  HostTensor x, dy, dw, dbias;
  bool with_dbias;
  CTConv2dDesc desc;

  ConvBwdWeightProblem(const ConvCase& c_, bool dbias_, uint64_t seed) : c(c_), g(geo(c_)), with_dbias(dbias_) {
    Rng rng(seed);
    x = make_act(DT_F32, g.N, g.C, g.H, g.W, c.xl);
    dy = make_act(DT_F32, g.N, g.K, g.P, g.Q, c.yl);
    fill_random(x, rng);
    fill_random(dy, rng);
    dw = make_wei(DT_F32, g.K, g.Cg, g.R, g.S, c.wl);
    if (with_dbias) dbias = HostTensor::compact(DT_F32, {g.K}, true);
    desc = conv_desc(c, false);
  }
  ConvBwdWeightProblem(const ConvBwdWeightProblem&) = delete;

  CTStatus query(size_t* bytes, bool null_data) {
    CTensor xv = x.view(), dyv = dy.view(), dwv = dw.view(), dbv = with_dbias ? dbias.view() : CTensor();
    if (null_data) xv.data = dyv.data = dwv.data = dbv.data = nullptr;
    return ct_conv2d_backward_weight_workspace_size(&desc, &xv, &dyv, &dwv, with_dbias ? &dbv : nullptr, bytes);
  }
  CTStatus run(void* ws, size_t n) {
    CTensor xv = x.view(), dyv = dy.view(), dwv = dw.view(), dbv = with_dbias ? dbias.view() : CTensor();
    return ct_conv2d_backward_weight(&desc, &xv, &dyv, &dwv, with_dbias ? &dbv : nullptr, ws, n, nullptr);
  }
  void fill_outputs(unsigned char s) {
    dw.fill_bytes(s);
    if (with_dbias) dbias.fill_bytes(s);
  }
  void verify(const std::string& what) {
    RefVals r = nn_reference(CT_OP_CONV2D_BACKWARD_WEIGHT, &desc, &desc, {&x, &dy},
                             {{DT_F64, dw.shape}, {DT_F64, {g.K}}});
    expect_close(what + " [dw]", dw, r.val[0], r.mag[0], 1e-5, 1e-6);
    expect_gaps_untouched(what + " [dw]", dw);
    if (with_dbias) expect_close(what + " [dbias]", dbias, r.val[1], r.mag[1], 1e-5, 1e-6);
  }
};

// name, N,C,H,W, K,R,S, groups, stride, pad_begin, pad_end, dilation, bias, act, x/w/y layouts
std::vector<ConvCase> conv_cases() {
  const int NONE = CT_ACTIVATION_NONE, RELU = CT_ACTIVATION_RELU;
  return {
      {"3x3 s1 p1, zero stride/dilation/groups in the desc mean 1", 2, 3, 6, 7, 4, 3, 3, 0, {0, 0}, {1, 1},
       {1, 1}, {0, 0}, true, NONE, 0, 0, 0},
      {"3x3 stride 2, asymmetric padding, NHWC/HWIO, relu", 1, 4, 7, 8, 6, 3, 3, 1, {2, 2}, {1, 0}, {0, 2},
       {1, 1}, true, RELU, 1, 1, 1},
      {"3x3 stride (2,1), dilation 2, groups 2, asymmetric padding, padded NCHW/OHWI", 2, 4, 9, 8, 6, 3, 3, 2,
       {2, 1}, {2, 1}, {1, 2}, {2, 2}, true, RELU, 2, 2, 2},
      {"3x3 stride 2, dilation 2, groups 2, asymmetric padding, NHWC", 2, 4, 9, 10, 6, 3, 3, 2, {2, 2}, {1, 2},
       {2, 0}, {2, 2}, true, NONE, 1, 1, 1},
      {"depthwise K=C 3x3, NHWC x/y, OIHW w", 2, 5, 6, 6, 5, 3, 3, 5, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, NONE,
       1, 0, 1},
      {"depthwise K=2C 3x3 stride 2, asymmetric padding, relu", 1, 4, 7, 9, 8, 3, 3, 4, {2, 2}, {0, 1}, {1, 0},
       {1, 1}, true, RELU, 0, 1, 3},
      {"1x1, NHWC/HWIO, sigmoid", 2, 6, 5, 4, 3, 1, 1, 1, {1, 1}, {0, 0}, {0, 0}, {1, 1}, true,
       CT_ACTIVATION_SIGMOID, 1, 1, 1},
      {"1x1 stride 2 with asymmetric padding, padded NHWC x/w", 1, 4, 6, 7, 5, 1, 1, 1, {2, 2}, {1, 0}, {0, 1},
       {1, 1}, false, RELU, 3, 3, 0},
      {"7x7 stride 2 pad 3 (a ResNet stem)", 1, 3, 11, 12, 4, 7, 7, 1, {2, 2}, {3, 3}, {3, 3}, {1, 1}, true, RELU,
       0, 0, 0},
      {"7x7 dilation (1,2) groups 2, NHWC, padded y", 1, 4, 9, 14, 2, 7, 7, 2, {1, 1}, {3, 2}, {2, 4}, {1, 2},
       false, NONE, 1, 2, 2},
      {"3x3 stride (2,3), no padding: the floor drops the last row and column", 2, 3, 8, 10, 4, 3, 3, 1, {2, 3},
       {0, 0}, {0, 0}, {1, 1}, false, NONE, 0, 3, 1},
      {"3x2 dilation (2,1) stride (1,2) groups 3, padded x, HWIO", 1, 6, 8, 7, 3, 3, 2, 3, {1, 2}, {2, 0}, {1, 1},
       {2, 1}, true, CT_ACTIVATION_TANH, 2, 1, 3},
      {"3x3 gelu, NHWC-padded y", 1, 2, 5, 5, 3, 3, 3, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true,
       CT_ACTIVATION_GELU, 0, 0, 3},
  };
}

TEST_CASE("conv2d float32 forward: strides, (asymmetric) padding, dilation, groups, depthwise, layouts, bias, act",
          "[nn]") {
  std::vector<ConvCase> cs = conv_cases();
  for (size_t i = 0; i < cs.size(); ++i) {
    ConvFwdProblem p(cs[i], DT_F32, DT_F32, 1000 + i);
    check_problem(p, describe(cs[i], "conv2d"));
  }
}

TEST_CASE("conv2d forward wider than 2^15 output columns (plain layouts: oneDNN's brgconv costs ~1.3 KB per column); "
          "paddings above 2^20 refused",
          "[nn]") {
  const ConvCase cs[] = {
      {"1x3 over 40000 columns (a 1-D signal), pad 1, bias", 1, 8, 1, 40000, 8, 1, 3, 1, {1, 1}, {0, 1}, {0, 1},
       {1, 1}, true, CT_ACTIVATION_NONE, 0, 0, 0},
      {"2x3 stride (1,2) dilation (1,2) groups 2 over 70001 columns, NHWC x, padded y, relu", 2, 4, 2, 70001, 6, 2, 3,
       2, {1, 2}, {1, 2}, {0, 1}, {1, 2}, true, CT_ACTIVATION_RELU, 1, 0, 2},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i) {
    ConvFwdProblem p(cs[i], DT_F32, DT_F32, 1500 + i);
    check_problem(p, describe(cs[i], "conv2d"));
  }
  // The plan of a conv with 4 M output columns (tensors not backed: the
  // query alone) stays small; brgconv's would take ~5 GB.
  int64_t xs[4] = {1, 8, 1, (int64_t)1 << 22}, ws[4] = {8, 8, 1, 3}, ys[4] = {1, 8, 1, ((int64_t)1 << 22) - 2};
  CTensor x, w, y;
  for (CTensor* t : {&x, &w, &y}) {
    std::memset(t, 0, sizeof *t);
    t->device.device_type = CT_CPU;
    t->ndim = 4;
    t->dtype = ct_dtype_of_index(CT_DT_FLOAT32);
  }
  x.shape = xs, w.shape = ws, y.shape = ys;
  CTConv2dDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  const int64_t before = resident_bytes();
  size_t bytes = 0;
  REQUIRE(ct_conv2d_workspace_size(&d, &x, &w, nullptr, &y, &bytes) == CT_OK);
  const int64_t after = resident_bytes();
  INFO("resident before " << before << ", after " << after);
  CHECK(after - before < ((int64_t)64 << 20));
  // A padding above 2^20 is refused, named (oneDNN spends time in proportion to it).
  int64_t x1[4] = {1, 8, 1, 1}, y1[4] = {1, 8, 1, ((int64_t)1 << 20) + 2};
  x.shape = x1, y.shape = y1;
  d.pad_begin[1] = ((int64_t)1 << 20) + 1;
  d.pad_end[1] = 2;
  CHECK(ct_conv2d_workspace_size(&d, &x, &w, nullptr, &y, &bytes) == CT_ERR_UNSUPPORTED);
  CHECK(std::string(ct_last_error()).find("desc->pad_begin[1]=1048577") != std::string::npos);
}

TEST_CASE("conv2d output shape is the floor formula: y with one more or one fewer row/column is rejected", "[nn]") {
  std::vector<ConvCase> cs = conv_cases();
  for (size_t i = 0; i < cs.size(); ++i) {
    const ConvCase& c = cs[i];
    Geo g = geo(c);
    std::string what = describe(c, "conv2d");
    INFO(what);
    const int64_t dP[4] = {1, -1, 0, 0}, dQ[4] = {0, 0, 1, -1};
    for (int v = 0; v < 4; ++v) {
      if (g.P + dP[v] < 1 || g.Q + dQ[v] < 1) continue;
      ConvFwdProblem p(c, DT_F32, DT_F32, 2000 + i);
      p.y = make_act(DT_F32, g.N, g.K, g.P + dP[v], g.Q + dQ[v], 0);
      p.y.fill_bytes(kSentinel);
      std::vector<unsigned char> before = p.y.bytes();
      size_t bytes = 0;
      CTStatus qs = p.query(&bytes, false);
      std::string qmsg = last_error();
      Workspace ws(1 << 20);
      CTStatus rs = p.run(ws.ptr(), ws.n);
      std::string rmsg = last_error();
      INFO("y shape " << vec_str(p.y.shape) << ": query -> " << ct_status_string(qs) << " '" << qmsg << "'; run -> "
                      << ct_status_string(rs) << " '" << rmsg << "'");
      CHECK(qs == CT_ERR_SHAPE_MISMATCH);
      CHECK(rs == CT_ERR_SHAPE_MISMATCH);
      CHECK(!rmsg.empty());
      CHECK(p.y.bytes() == before);
    }
  }
}

TEST_CASE("conv2d_backward_data float32 against the reference, every descriptor and layout; dx fully overwritten",
          "[nn]") {
  std::vector<ConvCase> cs = conv_cases();
  for (size_t i = 0; i < cs.size(); ++i) {
    ConvBwdDataProblem p(cs[i], 3000 + i);
    check_problem(p, describe(cs[i], "conv2d_backward_data"));
  }
}

TEST_CASE("conv2d_backward_weight float32 against the reference, with and without dbias", "[nn]") {
  std::vector<ConvCase> cs = conv_cases();
  for (size_t i = 0; i < cs.size(); ++i) {
    for (int with_db = 0; with_db < 2; ++with_db) {
      ConvBwdWeightProblem p(cs[i], with_db != 0, 4000 + 2 * i + with_db);
      check_problem(p, describe(cs[i], with_db ? "conv2d_backward_weight (+dbias)" : "conv2d_backward_weight"));
    }
  }
}

TEST_CASE("conv2d backward ops agree with central finite differences of sum(y * G) through ct_conv2d", "[nn]") {
  const int NONE = CT_ACTIVATION_NONE;
  const ConvCase fd_cases[] = {
      {"3x3 s1 p1 with bias, NCHW", 1, 2, 5, 5, 3, 3, 3, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, NONE, 0, 0, 0},
      {"3x3 stride 2, asymmetric padding, dilation 2, groups 2, NHWC/HWIO", 1, 4, 7, 6, 4, 3, 3, 2, {2, 2},
       {1, 2}, {2, 0}, {2, 2}, true, NONE, 1, 1, 1},
      {"depthwise K=2C stride (1,2), padded NCHW/OHWI, floor drops a column", 1, 3, 5, 6, 6, 3, 3, 3, {1, 2},
       {1, 0}, {0, 0}, {1, 1}, false, NONE, 2, 2, 3},
  };
  uint64_t seed = 5000;
  for (const ConvCase& c : fd_cases) {
    std::string what = describe(c, "conv2d gradients");
    INFO(what);
    Geo g = geo(c);
    ConvFwdProblem f(c, DT_F32, DT_F32, seed++);
    Rng rng(seed++);
    HostTensor G = make_act(DT_F32, g.N, g.K, g.P, g.Q, c.yl);
    fill_random(G, rng);
    std::vector<double> Gd = dense(G);

    size_t fbytes = 0;
    REQUIRE(f.query(&fbytes, false) == CT_OK);
    Workspace fws(fbytes);
    auto loss = [&]() {
      CTStatus s = f.run(fws.ptr(), fbytes);
      if (s != CT_OK) {
        FAIL_CHECK("forward -> " << ct_status_string(s) << " '" << last_error() << "'");
        return std::nan("");
      }
      double l = 0;
      for (int64_t i = 0; i < f.y.numel(); ++i) l += f.y.get(i) * Gd[(size_t)i];
      return l;
    };

    // analytic gradients with dy = G
    ConvBwdDataProblem bd(c, 0);
    bd.w = f.w;  // same values and layout
    bd.dy = G;
    ConvBwdWeightProblem bw(c, c.bias, 0);
    bw.x = f.x;
    bw.dy = G;
    if (!run_two_phase(bd, what + " backward_data")) continue;
    if (!run_two_phase(bw, what + " backward_weight")) continue;
    bd.verify(what + " backward_data");
    bw.verify(what + " backward_weight");

    expect_fd(what + " dx", f.x, bd.dx, loss);
    expect_fd(what + " dw", f.w, bw.dw, loss);
    if (c.bias) expect_fd(what + " dbias", f.bias, bw.dbias, loss);
  }
}

TEST_CASE("conv2d bfloat16 / float16 forward: correct when supported, else CT_ERR_UNSUPPORTED with a reason", "[nn]") {
  std::vector<ConvCase> cs = conv_cases();
  for (int d : {DT_BF16, DT_F16}) {
    CTStatus sup = ct_op_supported(CT_OP_CONV2D, kCpu, dtype(d).dt);
    std::string msg = last_error();
    INFO("ct_op_supported(conv2d, cpu, " << dtype(d).name << ") -> " << ct_status_string(sup) << " '" << msg << "'");
    if (sup == CT_OK) {
      for (size_t i = 0; i < cs.size(); i += 3) {
        ConvFwdProblem p(cs[i], d, (i / 3) % 2 ? DT_F32 : d, 6000 + i);
        check_problem(p, describe(cs[i], "conv2d", d));
      }
    } else {
      CHECK(sup == CT_ERR_UNSUPPORTED);
      CHECK(!msg.empty());
      ConvFwdProblem p(cs[0], d, d, 6100);
      p.fill_outputs(kSentinel);
      std::vector<unsigned char> before = p.y.bytes();
      Workspace ws(1 << 20);
      CTStatus rs = p.run(ws.ptr(), ws.n);
      std::string rmsg = last_error();
      INFO("run -> " << ct_status_string(rs) << " '" << rmsg << "'");
      CHECK(rs == CT_ERR_UNSUPPORTED);
      CHECK(!rmsg.empty());
      CHECK(p.y.bytes() == before);
    }
  }
}

// ---------------------------------------------------------------------------
// the two-phase workspace contract
// ---------------------------------------------------------------------------

// The query is deterministic and does not read data pointers; when it says 0
// a NULL workspace runs; when it says n > 0, NULL and n - 1 bytes are
// CT_ERR_WORKSPACE_TOO_SMALL naming n, with the outputs untouched, and
// exactly n bytes run.
template <class P>
void check_workspace_contract(P& p, const std::string& what, const std::vector<HostTensor*>& outs, int* zero_count) {
  INFO(what);
  size_t b1 = (size_t)-1, b2 = (size_t)-2, b3 = (size_t)-3;
  CTStatus s1 = p.query(&b1, false);
  std::string m1 = last_error();
  INFO("query -> " << ct_status_string(s1) << " '" << m1 << "'");
  REQUIRE(s1 == CT_OK);
  CHECK(m1.empty());
  REQUIRE(p.query(&b2, false) == CT_OK);
  CHECK(b1 == b2);
  CTStatus s3 = p.query(&b3, true);
  INFO("query with NULL data -> " << ct_status_string(s3) << " '" << last_error() << "'");
  CHECK(s3 == CT_OK);
  CHECK(b3 == b1);
  INFO("workspace bytes " << b1);
  if (b1 == 0) {
    ++*zero_count;
    p.fill_outputs(kSentinel);
    CTStatus s = p.run(nullptr, 0);
    INFO("run(NULL, 0) -> " << ct_status_string(s) << " '" << last_error() << "'");
    CHECK(s == CT_OK);
    if (s == CT_OK) p.verify(what + " with a NULL workspace");
    return;
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    p.fill_outputs(kSentinel);
    std::vector<std::vector<unsigned char>> before;
    for (HostTensor* t : outs) before.push_back(t->bytes());
    Workspace small(attempt == 0 ? 0 : b1 - 1);
    CTStatus s = attempt == 0 ? p.run(nullptr, 0) : p.run(small.ptr(), b1 - 1);
    std::string m = last_error();
    INFO((attempt == 0 ? "run(NULL, 0)" : "run(ws, bytes - 1)") << " -> " << ct_status_string(s) << " '" << m
                                                                 << "'");
    CHECK(s == CT_ERR_WORKSPACE_TOO_SMALL);
    CHECK(contains(m, std::to_string(b1)));
    for (size_t i = 0; i < outs.size(); ++i) CHECK(outs[i]->bytes() == before[i]);
    if (attempt == 1) CHECK(small.guard_intact());
  }
  // a larger workspace than needed is fine, too
  p.fill_outputs(kSentinel);
  Workspace big(b1 + 4096);
  CTStatus s = p.run(big.ptr(), b1 + 4096);
  INFO("run(ws, bytes + 4096) -> " << ct_status_string(s) << " '" << last_error() << "'");
  CHECK(s == CT_OK);
  if (s == CT_OK) p.verify(what + " with a larger workspace");
  CHECK(big.guard_intact());
  // and exactly the queried size
  CHECK(run_two_phase(p, what + " exact workspace"));
  p.verify(what + " exact workspace");
}

TEST_CASE("NN workspace: deterministic query without data, NULL when 0, too small rejected naming the size", "[nn]") {
  int zero = 0;
  {
    MatmulProblem p(DT_F32, {5, 7}, {7, 6}, {6}, true, DT_F32, 0, 0, 0, CT_ACTIVATION_NONE, 1);
    check_workspace_contract(p, p.name, {&p.out}, &zero);
  }
  {
    MatmulProblem p(DT_F32, {2, 5, 7}, {7, 6}, {5, 6}, true, DT_F32, 3, 2, 2, CT_ACTIVATION_RELU, 2);
    check_workspace_contract(p, p.name, {&p.out}, &zero);
  }
  std::vector<ConvCase> cs = conv_cases();
  for (size_t i : {size_t(0), size_t(1), size_t(2), size_t(4)}) {
    {
      ConvFwdProblem p(cs[i], DT_F32, DT_F32, 10 + i);
      check_workspace_contract(p, describe(cs[i], "conv2d"), {&p.y}, &zero);
    }
    {
      ConvBwdDataProblem p(cs[i], 20 + i);
      check_workspace_contract(p, describe(cs[i], "conv2d_backward_data"), {&p.dx}, &zero);
    }
    {
      ConvBwdWeightProblem p(cs[i], true, 30 + i);
      check_workspace_contract(p, describe(cs[i], "conv2d_backward_weight"), {&p.dw, &p.dbias}, &zero);
    }
  }
  // Not an assertion on the library (the contract allows any size): says
  // how many of these calls exercised the NULL-workspace path.
  WARN(zero << " of 14 calls queried 0 bytes and ran with a NULL workspace");
}

}  // namespace
