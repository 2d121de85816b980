// test_nn_pool_norm.cpp — category 3 pooling and normalisation ops (issue 4,
// include/ctensor/ctensor.h "Category 3: NN ops with a workspace query"):
//  - max_pool2d (indices NULL and given; int64 h*W+w, first max in row-major
//    window order wins, padding never wins) and max_pool2d_backward (dy routed
//    to the indices, overlapping windows accumulate, dx overwritten);
//  - avg_pool2d and its backward, count_include_pad 1 (kernel area) and 0
//    (taps inside x), with padding, strides and dilation;
//  - batch_norm (inference), batch_norm_training (y, mean, invstd) and
//    batch_norm_backward, 2-d to 5-d, NCHW / NHWC by strides;
//  - layer_norm over the last k axes (stats NULL, x.shape[:-k], keep-ones,
//    strided, 0-d) and layer_norm_backward;
// all float32 against their references in tests/reference (double
// accumulation, never the library), the normalisation gradients also against central
// finite differences of loss = sum(y * G) through the library's own forward;
// bfloat16 and float16 where ct_op_supported says CT_OK, else the call must
// be CT_ERR_UNSUPPORTED naming the op with the outputs untouched.
// Layouts are strides only: compact, channels-last, padded row-major (offset
// in byte_offset), padded channels-last (offset in data), column-major;
// padding bytes of every output must stay untouched, and padding bytes of
// every input hold NaN (a kernel that reads them shows it).
// Every run is two-phase: query ct_*_workspace_size, allocate exactly that
// many bytes 64-aligned (with a guard after it that must survive), run.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "test_ref.h"
#include "test_util.h"

using namespace ctt;

namespace {

typedef std::vector<int64_t> Shape;
const CTDevice kCpu = {CT_CPU, 0};
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const unsigned char kSentinel = 0xFF;  // NaN for every float dtype, -1 for int64

int64_t prod(const Shape& s, size_t from = 0, size_t to = (size_t)-1) {
  if (to > s.size()) to = s.size();
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= s[i];
  return n;
}

// ---------------------------------------------------------------------------
// Two-phase runs with an exact, 64-aligned workspace and a guard after it
// ---------------------------------------------------------------------------

class Workspace {
 public:
  static const size_t kGuard = 256;
  explicit Workspace(size_t bytes) : bytes_(bytes) {
    if (bytes_ == 0) return;
    void* p = nullptr;
    if (posix_memalign(&p, 64, bytes_ + kGuard) == 0) base_ = p;
    if (base_) std::memset(base_, 0x5A, bytes_ + kGuard);
  }
  ~Workspace() { std::free(base_); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  void* ptr() const { return base_; }  // NULL when the query said 0
  bool allocated() const { return bytes_ == 0 || base_ != nullptr; }
  bool guard_intact() const {
    if (!base_) return true;
    const unsigned char* g = (const unsigned char*)base_ + bytes_;
    for (size_t i = 0; i < kGuard; ++i)
      if (g[i] != 0x5A) return false;
    return true;
  }

 private:
  size_t bytes_;
  void* base_ = nullptr;
};

struct RunResult {
  CTStatus query = CT_OK;  // status of ct_*_workspace_size
  CTStatus st = CT_OK;     // status of the op (or of the query when it failed)
  size_t bytes = 0;
  bool sane = true;        // the queried size is plausible and could be allocated
  bool guard_ok = true;    // nothing written past the workspace
  std::string msg;
};

template <class Query, class Run>
RunResult two_phase(Query query, Run run) {
  RunResult r;
  size_t bytes = 0;
  r.query = query(&bytes);
  if (r.query != CT_OK) {
    r.st = r.query;
    r.msg = last_error();
    return r;
  }
  r.bytes = bytes;
  if (bytes > ((size_t)1 << 30)) {
    r.sane = false;
    r.st = CT_ERR_OUT_OF_MEMORY;
    r.msg = "(test) the workspace query returned " + std::to_string(bytes) + " bytes";
    return r;
  }
  Workspace ws(bytes);
  if (!ws.allocated()) {
    r.sane = false;
    r.st = CT_ERR_OUT_OF_MEMORY;
    r.msg = "(test) could not allocate the workspace";
    return r;
  }
  r.st = run(ws.ptr(), bytes);
  r.msg = last_error();
  r.guard_ok = ws.guard_intact();
  return r;
}

enum RunOutcome { RAN, UNSUP, FAILED };

// A run that should succeed (supported) or be refused as unsupported.
RunOutcome check_run(const RunResult& r, bool supported, const char* op) {
  INFO(op << ": query " << ct_status_string(r.query) << ", run " << ct_status_string(r.st) << ", workspace "
          << r.bytes << " bytes, message \"" << r.msg << "\"");
  if (supported) {
    CHECK(r.sane);
    CHECK(r.st == CT_OK);
    CHECK(r.guard_ok);
    return (r.sane && r.st == CT_OK) ? RAN : FAILED;
  }
  CHECK(r.st == CT_ERR_UNSUPPORTED);
  CHECK(contains(r.msg, op));
  return UNSUP;
}

// float32 must be supported; the half types answer either way.
bool supported(int op, int d) {
  CTStatus s = ct_op_supported(op, kCpu, dtype(d).dt);
  if (d == DT_F32 && s != CT_OK) {
    FAIL_CHECK("ct_op_supported(" << op << ", float32) = " << ct_status_string(s) << ": " << last_error());
    return true;
  }
  return s == CT_OK;
}

// ---------------------------------------------------------------------------
// Layouts (strides only)
// ---------------------------------------------------------------------------

enum { L_COMPACT, L_CLAST, L_PAD, L_PAD_CLAST, L_COLMAJOR, L_NUM };

const char* lname(int l) {
  static const char* k[L_NUM] = {"compact (strides NULL)", "channels-last (dim 1 innermost)",
                                 "padded row-major (offset in byte_offset)",
                                 "padded channels-last (offset in data)", "column-major (permuted)"};
  return k[l];
}

HostTensor make_nd(int d, const Shape& shape, int l) {
  const int nd = (int)shape.size();
  if (l == L_COMPACT || nd == 0) return HostTensor::compact(d, shape, true);
  std::vector<int> order;  // innermost first
  int64_t gap = 0, pad = 0;
  if (l == L_CLAST || l == L_PAD_CLAST) {
    if (nd >= 2) {
      order.push_back(1);
      for (int i = nd - 1; i >= 2; --i) order.push_back(i);
      order.push_back(0);
    } else {
      order.push_back(0);
    }
    if (l == L_PAD_CLAST) { gap = 1; pad = 2; }
  } else if (l == L_PAD) {
    for (int i = nd - 1; i >= 0; --i) order.push_back(i);
    gap = 3;
    pad = 5;
  } else {
    for (int i = 0; i < nd; ++i) order.push_back(i);
  }
  Shape st((size_t)nd, 0);
  int64_t s = 1;
  for (int i : order) {
    st[(size_t)i] = s;
    s = s * shape[(size_t)i] + gap;
  }
  return HostTensor::strided(d, shape, st, pad);
}

CTensor V(HostTensor& t, int l) { return t.view(l != L_PAD_CLAST); }

// Per-channel / per-feature float32 tensors: compact.
HostTensor f32_compact(const Shape& s) { return HostTensor::compact(DT_F32, s, true); }

// Inputs: the padding bytes hold NaN, the elements the generator's values
// (rounded to the tensor's dtype; the references read them back).
template <class G>
void fill_input(HostTensor& t, G gen) {
  t.fill_bytes(kSentinel);
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) t.set(i, gen(i));
}

std::vector<double> vals(const HostTensor& t) {
  std::vector<double> v((size_t)t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[(size_t)i] = t.get(i);
  return v;
}

std::vector<int64_t> ivals(const HostTensor& t) {
  std::vector<int64_t> v((size_t)t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[(size_t)i] = t.get_i(i);
  return v;
}

// ---------------------------------------------------------------------------
// Comparisons
// ---------------------------------------------------------------------------

double maxabs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Data-dtype relative tolerance: as given for float32, 2e-2 for bfloat16,
// 1e-2 for float16.
double data_rtol(int d, double rtol32) { return d == DT_BF16 ? 2e-2 : d == DT_F16 ? 1e-2 : rtol32; }

// |got - ref| <= atol + rtol * |ref| elementwise (NaN fails).
void check_close(const std::string& what, const std::vector<double>& got, const std::vector<double>& ref,
                 double rtol, double atol) {
  REQUIRE(got.size() == ref.size());
  int64_t bad = 0;
  double worst = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(got[i] - ref[i]);
    const double tol = atol + rtol * std::fabs(ref[i]);
    if (!(e <= tol)) {
      ++bad;
      if (bad <= 6) first += "  [" + std::to_string(i) + "] got " + fmt(got[i]) + " expected " + fmt(ref[i]) + "\n";
    }
    if (std::isnan(e)) worst = std::numeric_limits<double>::infinity();
    else if (tol > 0 && e / tol > worst) worst = e / tol;
  }
  INFO(what << ": " << bad << " of " << got.size() << " elements outside rtol " << rtol << " atol " << atol
            << " (worst error/tolerance " << worst << ")\n"
            << first);
  CHECK(bad == 0);
}

// Accumulated outputs (pooling backward): a sum of terms t_k carries an
// error relative to sum |t_k|, not to the (possibly cancelling) sum itself, so
// the tolerance is rtol * sum |t_k| per element (rtol32 for float32, 2e-2 for
// bfloat16, 1e-2 for float16); an element no term reaches must be exactly 0.
void check_sum_data(const std::string& what, const std::vector<double>& got, const std::vector<double>& ref,
                    const std::vector<double>& absum, int d, double rtol32) {
  REQUIRE(got.size() == ref.size());
  REQUIRE(absum.size() == ref.size());
  const double rt = data_rtol(d, rtol32);
  int64_t bad = 0;
  double worst = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(got[i] - ref[i]);
    const double tol = rt * absum[i];
    if (!(e <= tol)) {
      ++bad;
      if (bad <= 6)
        first += "  [" + std::to_string(i) + "] got " + fmt(got[i]) + " expected " + fmt(ref[i]) +
                 " (sum of |terms| " + fmt(absum[i]) + ")\n";
    }
    if (std::isnan(e)) worst = std::numeric_limits<double>::infinity();
    else if (tol > 0 && e / tol > worst) worst = e / tol;
  }
  INFO(what << " (" << dtype(d).name << "): " << bad << " of " << got.size() << " elements outside " << rt
            << " * sum of |terms| (worst error/tolerance " << worst << ")\n"
            << first);
  CHECK(bad == 0);
}

void check_exact(const std::string& what, const std::vector<double>& got, const std::vector<double>& ref) {
  check_close(what, got, ref, 0.0, 0.0);
}

void check_index(const std::string& what, const std::vector<int64_t>& got, const std::vector<int64_t>& ref) {
  REQUIRE(got.size() == ref.size());
  int64_t bad = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != ref[i]) {
      ++bad;
      if (bad <= 6)
        first += "  [" + std::to_string(i) + "] got " + std::to_string(got[i]) + " expected " +
                 std::to_string(ref[i]) + "\n";
    }
  INFO(what << ": " << bad << " of " << got.size() << " differ\n" << first);
  CHECK(bad == 0);
}

// Tolerance of data outputs (the tensor's own dtype): rtol for float32 as
// given, 2e-2 for bfloat16, 1e-2 for float16; atol a tenth of that relative
// to the tensor's largest reference value.

void check_data(const std::string& what, const std::vector<double>& got, const std::vector<double>& ref, int d,
                double rtol32) {
  const double rt = data_rtol(d, rtol32);
  check_close(what + " (" + dtype(d).name + ")", got, ref, rt, 0.1 * rt * maxabs(ref) + 1e-30);
}

// float32 outputs (statistics, dscale, dshift): rtol32 for float32 data,
// 1e-3 when the data were half (the inputs are exact, the sums are float32).
void check_stat(const std::string& what, const std::vector<double>& got, const std::vector<double>& ref, int d,
                double rtol32, double atol) {
  const double rt = d == DT_F32 ? rtol32 : 1e-3;
  const double at = d == DT_F32 ? atol : atol * (1e-3 / rtol32);
  check_close(what + " (float32, data " + dtype(d).name + ")", got, ref, rt, at);
}

// Bytes of an output's buffer that belong to no element must keep the sentinel.
void check_gaps(const HostTensor& t, const char* what) {
  const std::vector<char> cov = covered(t);
  const unsigned char* b = t.buf();
  int64_t gaps = 0, bad = 0;
  for (size_t i = 0; i < cov.size(); ++i)
    if (!cov[i]) {
      ++gaps;
      if (b[i] != kSentinel) ++bad;
    }
  if (gaps == 0) return;
  INFO(what << ": " << bad << " of " << gaps << " padding bytes between/around the elements were written");
  CHECK(bad == 0);
}

std::string shp(const Shape& s) { return shape_str(s); }

// ---------------------------------------------------------------------------
// Pooling: parameters and naive references
// ---------------------------------------------------------------------------

struct PoolP {
  const char* name;
  int64_t N, C, H, W;
  int64_t k[2], s[2], pb[2], pe[2], dl[2];
  int64_t se(int i) const { return s[i] ? s[i] : k[i]; }
  int64_t de(int i) const { return dl[i] ? dl[i] : 1; }
  int64_t P() const { return (H + pb[0] + pe[0] - de(0) * (k[0] - 1) - 1) / se(0) + 1; }
  int64_t Q() const { return (W + pb[1] + pe[1] - de(1) * (k[1] - 1) - 1) / se(1) + 1; }
  Shape xshape() const { return {N, C, H, W}; }
  Shape yshape() const { return {N, C, P(), Q()}; }
  CTPool2dDesc desc(int cip) const {
    CTPool2dDesc d;
    std::memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.count_include_pad = cip;
    for (int i = 0; i < 2; ++i) {
      d.kernel[i] = k[i];
      d.stride[i] = s[i];
      d.pad_begin[i] = pb[i];
      d.pad_end[i] = pe[i];
      d.dilation[i] = dl[i];
    }
    return d;
  }
  std::string str() const {
    std::ostringstream o;
    o << name << ": x (" << N << "," << C << "," << H << "," << W << ") kernel (" << k[0] << "," << k[1]
      << ") stride (" << s[0] << "," << s[1] << ") pad_begin (" << pb[0] << "," << pb[1] << ") pad_end (" << pe[0]
      << "," << pe[1] << ") dilation (" << dl[0] << "," << dl[1] << ") -> y (" << N << "," << C << "," << P()
      << "," << Q() << ")";
    return o.str();
  }
};

// Every pad is smaller than the dilated window, so every window has a tap
// inside x.
const PoolP kPool[] = {
    {"2x2, stride 0 (= kernel)", 2, 3, 6, 6, {2, 2}, {0, 0}, {0, 0}, {0, 0}, {0, 0}},
    {"3x3 stride 2 pad 1 (overlapping)", 1, 2, 7, 7, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
    {"2x3, stride 0 (= (2,3)), asymmetric pad", 2, 2, 5, 7, {2, 3}, {0, 0}, {1, 0}, {0, 2}, {0, 0}},
    {"3x2 stride (1,2), pad (0,1)/(2,0)", 1, 3, 6, 5, {3, 2}, {1, 2}, {0, 1}, {2, 0}, {0, 0}},
    {"3x3 dilation 2, pad (2,1)/(1,2)", 1, 2, 8, 7, {3, 3}, {1, 1}, {2, 1}, {1, 2}, {2, 2}},
    {"2x3 dilation (2,1) stride (2,1), pad (1,0)/(0,2)", 2, 2, 7, 6, {2, 3}, {2, 1}, {1, 0}, {0, 2}, {2, 1}},
    {"3x3 stride 1, pad (2,2)/(0,1)", 1, 2, 5, 5, {3, 3}, {1, 1}, {2, 2}, {0, 1}, {1, 1}},
    {"2x2 stride 3 (gaps between windows)", 1, 2, 8, 8, {2, 2}, {3, 3}, {0, 0}, {0, 0}, {0, 0}},
};
const int kNumPool = (int)(sizeof kPool / sizeof kPool[0]);

// ---------------------------------------------------------------------------
// The references (tests/reference) on logical row-major values
// ---------------------------------------------------------------------------

// A float64 reference array of `shape` holding `v` (row-major), or int64.
ctref::Array f64_array(const Shape& shape, const std::vector<double>& v) {
  ctref::Array a(dtype(DT_F64).dt, shape);
  a.f = v;
  return a;
}
ctref::Array i64_array(const Shape& shape, const std::vector<int64_t>& v) {
  ctref::Array a(dtype(DT_I64).dt, shape);
  a.i = v;
  return a;
}

struct PoolRef {
  std::vector<double> y;
  std::vector<int64_t> idx;
  bool nonempty = true;  // every window had a tap inside x
};

PoolRef ref_max_pool(const PoolP& p, const std::vector<double>& x) {
  const CTPool2dDesc desc = p.desc(0);
  const ctref::Array xa = f64_array(p.xshape(), x);
  std::vector<ctref::Array> o =
      reference_of(ref_call(CT_OP_MAX_POOL2D, &desc), {&xa}, {{DT_F64, p.yshape()}, {DT_I64, p.yshape()}});
  PoolRef r;
  r.y = o[0].f;
  r.idx = o[1].i;
  for (int64_t i : r.idx) r.nonempty = r.nonempty && i >= 0;
  return r;
}

// dx, and per element the sum of |terms| (absum, for the tolerance: the
// same routing of |dy|).
std::vector<double> ref_max_pool_bwd(const PoolP& p, const std::vector<double>& dy,
                                     const std::vector<int64_t>& idx, std::vector<double>* absum = nullptr) {
  const CTPool2dDesc desc = p.desc(0);
  const ctref::Array dya = f64_array(p.yshape(), dy), ia = i64_array(p.yshape(), idx), ady = ref_abs(dya);
  const ctref::Call c = ref_call(CT_OP_MAX_POOL2D_BACKWARD, &desc);
  if (absum) *absum = reference_of(c, {&ady, &ia}, {{DT_F64, p.xshape()}})[0].f;
  return reference_of(c, {&dya, &ia}, {{DT_F64, p.xshape()}})[0].f;
}

PoolRef ref_avg_pool(const PoolP& p, const std::vector<double>& x, bool cip) {
  const CTPool2dDesc desc = p.desc(cip);
  const ctref::Array xa = f64_array(p.xshape(), x);
  PoolRef r;
  r.y = reference_of(ref_call(CT_OP_AVG_POOL2D, &desc), {&xa}, {{DT_F64, p.yshape()}})[0].f;
  for (double v : r.y) r.nonempty = r.nonempty && !std::isnan(v);  // an empty window divides 0 by 0
  return r;
}

std::vector<double> ref_avg_pool_bwd(const PoolP& p, const std::vector<double>& dy, bool cip,
                                     std::vector<double>* absum = nullptr) {
  const CTPool2dDesc desc = p.desc(cip);
  const ctref::Array dya = f64_array(p.yshape(), dy), ady = ref_abs(dya);
  const ctref::Call c = ref_call(CT_OP_AVG_POOL2D_BACKWARD, &desc);
  if (absum) *absum = reference_of(c, {&ady}, {{DT_F64, p.xshape()}})[0].f;
  return reference_of(c, {&dya}, {{DT_F64, p.xshape()}})[0].f;
}

// Max-pool inputs: 0 small integers (many ties), 1 negative halves (padding
// taken as 0 would win), 2 one constant (every tap ties), 3 continuous.
const char* vmode_name(int m) {
  static const char* k[4] = {"integers in [-3,2] (ties)", "negative halves in [-3,-0.5]", "constant -2 (all tie)",
                             "uniform(-1,1)"};
  return k[m];
}
double pool_value(Rng& rng, int mode) {
  switch (mode) {
    case 0: return (double)rng.int_in(-3, 2);
    case 1: return -0.5 * (double)rng.int_in(1, 6);
    case 2: return -2.0;
    default: return rng.uniform(-1, 1);
  }
}

void run_max_pool(const PoolP& p, int xl, int yl, int d, int vmode, bool with_idx, uint64_t seed) {
  INFO("max_pool2d " << p.str() << "; x " << lname(xl) << ", y and indices " << lname(yl) << "; "
                     << dtype(d).name << "; values " << vmode_name(vmode) << "; indices "
                     << (with_idx ? "given" : "NULL"));
  const bool sup = supported(CT_OP_MAX_POOL2D, d);
  Rng rng(seed);
  HostTensor x = make_nd(d, p.xshape(), xl);
  fill_input(x, [&](int64_t) { return pool_value(rng, vmode); });
  HostTensor y = make_nd(d, p.yshape(), yl), ind = make_nd(DT_I64, p.yshape(), yl);
  y.fill_bytes(kSentinel);
  ind.fill_bytes(kSentinel);
  const std::vector<unsigned char> y0 = y.bytes(), i0 = ind.bytes();
  CTensor xv = V(x, xl), yv = V(y, yl), iv = V(ind, yl);
  CTensor* ip = with_idx ? &iv : nullptr;
  const CTPool2dDesc desc = p.desc(0);
  RunResult r = two_phase([&](size_t* b) { return ct_max_pool2d_workspace_size(&desc, &xv, &yv, ip, b); },
                          [&](void* w, size_t n) { return ct_max_pool2d(&desc, &xv, &yv, ip, w, n, nullptr); });
  const RunOutcome o = check_run(r, sup, "max_pool2d");
  if (o == UNSUP) {
    CHECK(y.bytes() == y0);
    CHECK(ind.bytes() == i0);
  }
  if (o != RAN) return;
  const PoolRef ref = ref_max_pool(p, vals(x));
  REQUIRE(ref.nonempty);
  check_exact("y", vals(y), ref.y);
  check_gaps(y, "y");
  if (with_idx) {
    check_index("indices", ivals(ind), ref.idx);
    check_gaps(ind, "indices");
  }
}

void run_max_pool_bwd(const PoolP& p, int yl, int xl, int d, int vmode, uint64_t seed) {
  INFO("max_pool2d_backward " << p.str() << "; dy and indices " << lname(yl) << ", dx " << lname(xl) << "; "
                              << dtype(d).name << "; indices of a forward on " << vmode_name(vmode));
  const bool sup = supported(CT_OP_MAX_POOL2D_BACKWARD, d);
  Rng rng(seed);
  std::vector<double> xs((size_t)prod(p.xshape()));
  for (double& v : xs) v = round_to(pool_value(rng, vmode), d);
  const PoolRef fwd = ref_max_pool(p, xs);
  REQUIRE(fwd.nonempty);
  HostTensor dy = make_nd(d, p.yshape(), yl), ind = make_nd(DT_I64, p.yshape(), yl);
  fill_input(dy, [&](int64_t) { return rng.uniform(-1, 1); });
  ind.fill_bytes(kSentinel);
  for (int64_t i = 0; i < ind.numel(); ++i) ind.set_i(i, fwd.idx[(size_t)i]);
  HostTensor dx = make_nd(d, p.xshape(), xl);
  dx.fill_bytes(kSentinel);
  const std::vector<unsigned char> dx0 = dx.bytes();
  CTensor dyv = V(dy, yl), iv = V(ind, yl), dxv = V(dx, xl);
  const CTPool2dDesc desc = p.desc(0);
  RunResult r = two_phase(
      [&](size_t* b) { return ct_max_pool2d_backward_workspace_size(&desc, &dyv, &iv, &dxv, b); },
      [&](void* w, size_t n) { return ct_max_pool2d_backward(&desc, &dyv, &iv, &dxv, w, n, nullptr); });
  const RunOutcome o = check_run(r, sup, "max_pool2d_backward");
  if (o == UNSUP) CHECK(dx.bytes() == dx0);
  if (o != RAN) return;
  std::vector<double> absum;
  const std::vector<double> ref = ref_max_pool_bwd(p, vals(dy), fwd.idx, &absum);
  check_sum_data("dx", vals(dx), ref, absum, d, 1e-6);
  check_gaps(dx, "dx");
}

void run_avg_pool(const PoolP& p, int cip, int xl, int yl, int d, uint64_t seed) {
  INFO("avg_pool2d " << p.str() << "; count_include_pad " << cip << "; x " << lname(xl) << ", y " << lname(yl)
                     << "; " << dtype(d).name);
  const bool sup = supported(CT_OP_AVG_POOL2D, d);
  Rng rng(seed);
  HostTensor x = make_nd(d, p.xshape(), xl);
  fill_input(x, [&](int64_t) { return rng.uniform(-1, 1); });
  HostTensor y = make_nd(d, p.yshape(), yl);
  y.fill_bytes(kSentinel);
  const std::vector<unsigned char> y0 = y.bytes();
  CTensor xv = V(x, xl), yv = V(y, yl);
  const CTPool2dDesc desc = p.desc(cip);
  RunResult r = two_phase([&](size_t* b) { return ct_avg_pool2d_workspace_size(&desc, &xv, &yv, b); },
                          [&](void* w, size_t n) { return ct_avg_pool2d(&desc, &xv, &yv, w, n, nullptr); });
  const RunOutcome o = check_run(r, sup, "avg_pool2d");
  if (o == UNSUP) CHECK(y.bytes() == y0);
  if (o != RAN) return;
  const PoolRef ref = ref_avg_pool(p, vals(x), cip != 0);
  REQUIRE(ref.nonempty);
  check_data("y", vals(y), ref.y, d, 1e-5);
  check_gaps(y, "y");
}

void run_avg_pool_bwd(const PoolP& p, int cip, int yl, int xl, int d, uint64_t seed) {
  INFO("avg_pool2d_backward " << p.str() << "; count_include_pad " << cip << "; dy " << lname(yl) << ", dx "
                              << lname(xl) << "; " << dtype(d).name);
  const bool sup = supported(CT_OP_AVG_POOL2D_BACKWARD, d);
  Rng rng(seed);
  HostTensor dy = make_nd(d, p.yshape(), yl);
  fill_input(dy, [&](int64_t) { return rng.uniform(-1, 1); });
  HostTensor dx = make_nd(d, p.xshape(), xl);
  dx.fill_bytes(kSentinel);
  const std::vector<unsigned char> dx0 = dx.bytes();
  CTensor dyv = V(dy, yl), dxv = V(dx, xl);
  const CTPool2dDesc desc = p.desc(cip);
  RunResult r = two_phase(
      [&](size_t* b) { return ct_avg_pool2d_backward_workspace_size(&desc, &dyv, &dxv, b); },
      [&](void* w, size_t n) { return ct_avg_pool2d_backward(&desc, &dyv, &dxv, w, n, nullptr); });
  const RunOutcome o = check_run(r, sup, "avg_pool2d_backward");
  if (o == UNSUP) CHECK(dx.bytes() == dx0);
  if (o != RAN) return;
  std::vector<double> absum;
  const std::vector<double> ref = ref_avg_pool_bwd(p, vals(dy), cip != 0, &absum);
  check_sum_data("dx", vals(dx), ref, absum, d, 1e-6);
  check_gaps(dx, "dx");
}

// ---------------------------------------------------------------------------
// Batch norm: cases and references
// ---------------------------------------------------------------------------

struct NdCase {
  const char* name;
  Shape shape;
  int layout;
};

const NdCase kBn[] = {
    {"2-d (5,3)", {5, 3}, L_COMPACT},
    {"2-d (4,3) padded", {4, 3}, L_PAD},
    {"3-d (3,2,5)", {3, 2, 5}, L_COMPACT},
    {"4-d NCHW (2,3,3,4)", {2, 3, 3, 4}, L_COMPACT},
    {"4-d NHWC (2,3,3,4) by strides", {2, 3, 3, 4}, L_CLAST},
    {"4-d padded NCHW (2,3,3,4)", {2, 3, 3, 4}, L_PAD},
    {"4-d padded NHWC (2,4,2,3)", {2, 4, 2, 3}, L_PAD_CLAST},
    {"5-d NCDHW (2,3,2,2,3)", {2, 3, 2, 2, 3}, L_COMPACT},
    {"5-d NDHWC (2,2,2,3,2) by strides", {2, 2, 2, 3, 2}, L_CLAST},
};
const int kNumBn = (int)(sizeof kBn / sizeof kBn[0]);

struct BnGeom {
  int64_t C, inner, numel, M;
  explicit BnGeom(const Shape& s) : C(s[1]), inner(prod(s, 2)), numel(prod(s)), M(prod(s) / s[1]) {}
  int64_t chan(int64_t i) const { return (i / inner) % C; }
};

const char* affine_name(int a) {
  static const char* k[4] = {"scale and shift NULL", "scale and shift given", "scale only (shift NULL)",
                             "shift only (scale NULL)"};
  return k[a];
}
bool has_scale(int a) { return a == 1 || a == 2; }
bool has_shift(int a) { return a == 1 || a == 3; }

const char* outs_name(int o) {
  static const char* k[4] = {"dscale and dshift given", "dscale and dshift NULL", "dscale only (dshift NULL)",
                             "dshift only (dscale NULL)"};
  return k[o];
}
bool want_dscale(int o) { return o == 0 || o == 2; }
bool want_dshift(int o) { return o == 0 || o == 3; }

CTBatchNormDesc bn_desc(double eps) {
  CTBatchNormDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.epsilon = eps;
  return d;
}

// Batch mean and invstd = 1 / sqrt(biased variance + eps) per channel of x
// (the reference batch_norm_training's statistics).
void ref_bn_stats(const HostTensor& x, double eps, std::vector<double>& mean, std::vector<double>& invstd) {
  const CTBatchNormDesc desc = bn_desc(eps);
  const Shape C = {x.shape[1]};
  std::vector<ctref::Array> r = reference(ref_call(CT_OP_BATCH_NORM_TRAINING, &desc), {&x, nullptr, nullptr},
                                          {{DT_F64, x.shape}, {DT_F64, C}, {DT_F64, C}});
  mean = r[1].f;
  invstd = r[2].f;
}

void run_bn_infer(const NdCase& cs, int yl, int d, int affine, double eps, uint64_t seed) {
  INFO("batch_norm " << cs.name << " " << shp(cs.shape) << "; x " << lname(cs.layout) << ", y " << lname(yl)
                     << "; " << dtype(d).name << "; " << affine_name(affine) << "; eps " << eps);
  const bool sup = supported(CT_OP_BATCH_NORM, d);
  Rng rng(seed);
  const BnGeom g(cs.shape);
  HostTensor x = make_nd(d, cs.shape, cs.layout);
  fill_input(x, [&](int64_t) { return rng.uniform(-3, 3); });
  HostTensor mean = f32_compact({g.C}), var = f32_compact({g.C}), sc = f32_compact({g.C}), sh = f32_compact({g.C});
  fill_input(mean, [&](int64_t) { return rng.uniform(-1, 1); });
  fill_input(var, [&](int64_t) { return rng.uniform(0.25, 2.0); });
  fill_input(sc, [&](int64_t) { return rng.uniform(0.5, 1.5) * (rng.uniform() < 0.3 ? -1 : 1); });
  fill_input(sh, [&](int64_t) { return rng.uniform(-1, 1); });
  HostTensor y = make_nd(d, cs.shape, yl);
  y.fill_bytes(kSentinel);
  const std::vector<unsigned char> y0 = y.bytes();
  CTensor xv = V(x, cs.layout), mv = mean.view(), vv = var.view(), scv = sc.view(), shv = sh.view(),
          yv = V(y, yl);
  const CTensor* scp = has_scale(affine) ? &scv : nullptr;
  const CTensor* shp_ = has_shift(affine) ? &shv : nullptr;
  const CTBatchNormDesc desc = bn_desc(eps);
  RunResult r = two_phase(
      [&](size_t* b) { return ct_batch_norm_workspace_size(&desc, &xv, &mv, &vv, scp, shp_, &yv, b); },
      [&](void* w, size_t n) { return ct_batch_norm(&desc, &xv, &mv, &vv, scp, shp_, &yv, w, n, nullptr); });
  const RunOutcome o = check_run(r, sup, "batch_norm");
  if (o == UNSUP) CHECK(y.bytes() == y0);
  if (o != RAN) return;
  const std::vector<double> ref =
      reference(ref_call(CT_OP_BATCH_NORM, &desc),
                {&x, &mean, &var, has_scale(affine) ? &sc : nullptr, has_shift(affine) ? &sh : nullptr},
                {{DT_F64, cs.shape}})[0].f;
  check_data("y", vals(y), ref, d, 1e-5);
  check_gaps(y, "y");
}

void run_bn_train(const NdCase& cs, int yl, int d, int affine, double eps, uint64_t seed) {
  INFO("batch_norm_training " << cs.name << " " << shp(cs.shape) << "; x " << lname(cs.layout) << ", y "
                              << lname(yl) << "; " << dtype(d).name << "; " << affine_name(affine) << "; eps "
                              << eps);
  const bool sup = supported(CT_OP_BATCH_NORM_TRAINING, d);
  Rng rng(seed);
  const BnGeom g(cs.shape);
  HostTensor x = make_nd(d, cs.shape, cs.layout);
  // A different offset and spread per channel.
  std::vector<double> off((size_t)g.C), spread((size_t)g.C);
  for (int64_t c = 0; c < g.C; ++c) {
    off[(size_t)c] = rng.uniform(-2, 2);
    spread[(size_t)c] = rng.uniform(0.3, 3);
  }
  fill_input(x, [&](int64_t i) { return off[(size_t)g.chan(i)] + spread[(size_t)g.chan(i)] * rng.uniform(-1, 1); });
  HostTensor sc = f32_compact({g.C}), sh = f32_compact({g.C});
  fill_input(sc, [&](int64_t) { return rng.uniform(0.5, 1.5); });
  fill_input(sh, [&](int64_t) { return rng.uniform(-1, 1); });
  HostTensor y = make_nd(d, cs.shape, yl), mean = f32_compact({g.C}), invstd = f32_compact({g.C});
  y.fill_bytes(kSentinel);
  mean.fill_bytes(kSentinel);
  invstd.fill_bytes(kSentinel);
  const std::vector<unsigned char> y0 = y.bytes(), m0 = mean.bytes(), s0 = invstd.bytes();
  CTensor xv = V(x, cs.layout), scv = sc.view(), shv = sh.view(), yv = V(y, yl), mv = mean.view(),
          iv = invstd.view();
  const CTensor* scp = has_scale(affine) ? &scv : nullptr;
  const CTensor* shp_ = has_shift(affine) ? &shv : nullptr;
  const CTBatchNormDesc desc = bn_desc(eps);
  RunResult r = two_phase(
      [&](size_t* b) {
        return ct_batch_norm_training_workspace_size(&desc, &xv, scp, shp_, &yv, &mv, &iv, b);
      },
      [&](void* w, size_t n) {
        return ct_batch_norm_training(&desc, &xv, scp, shp_, &yv, &mv, &iv, w, n, nullptr);
      });
  const RunOutcome o = check_run(r, sup, "batch_norm_training");
  if (o == UNSUP) {
    CHECK(y.bytes() == y0);
    CHECK(mean.bytes() == m0);
    CHECK(invstd.bytes() == s0);
  }
  if (o != RAN) return;
  const std::vector<double> xs = vals(x);
  const std::vector<ctref::Array> ref =
      reference(ref_call(CT_OP_BATCH_NORM_TRAINING, &desc),
                {&x, has_scale(affine) ? &sc : nullptr, has_shift(affine) ? &sh : nullptr},
                {{DT_F64, cs.shape}, {DT_F64, {g.C}}, {DT_F64, {g.C}}});
  check_data("y", vals(y), ref[0].f, d, 1e-4);
  check_stat("mean", vals(mean), ref[1].f, d, 1e-5, 1e-5 * maxabs(xs));
  check_stat("invstd", vals(invstd), ref[2].f, d, 1e-4, 0.0);
  check_gaps(y, "y");
}

void run_bn_bwd(const NdCase& cs, int dxl, int d, bool with_scale, int outs, double eps, uint64_t seed) {
  INFO("batch_norm_backward " << cs.name << " " << shp(cs.shape) << "; x and dy " << lname(cs.layout) << ", dx "
                              << lname(dxl) << "; " << dtype(d).name << "; scale "
                              << (with_scale ? "given" : "NULL") << "; " << outs_name(outs) << "; eps " << eps);
  const bool sup = supported(CT_OP_BATCH_NORM_BACKWARD, d);
  Rng rng(seed);
  const BnGeom g(cs.shape);
  HostTensor x = make_nd(d, cs.shape, cs.layout), dy = make_nd(d, cs.shape, cs.layout);
  fill_input(x, [&](int64_t i) { return 0.5 * (double)g.chan(i) + rng.uniform(-2, 2); });
  fill_input(dy, [&](int64_t) { return rng.uniform(-1, 1); });
  // The batch statistics of x, computed here and stored as float32.
  std::vector<double> rm, ri;
  ref_bn_stats(x, eps, rm, ri);
  HostTensor mean = f32_compact({g.C}), invstd = f32_compact({g.C}), sc = f32_compact({g.C});
  fill_input(mean, [&](int64_t c) { return rm[(size_t)c]; });
  fill_input(invstd, [&](int64_t c) { return ri[(size_t)c]; });
  fill_input(sc, [&](int64_t) { return rng.uniform(0.5, 1.5) * (rng.uniform() < 0.3 ? -1 : 1); });
  HostTensor dx = make_nd(d, cs.shape, dxl), dsc = f32_compact({g.C}), dsh = f32_compact({g.C});
  dx.fill_bytes(kSentinel);
  dsc.fill_bytes(kSentinel);
  dsh.fill_bytes(kSentinel);
  const std::vector<unsigned char> dx0 = dx.bytes(), dsc0 = dsc.bytes(), dsh0 = dsh.bytes();
  CTensor xv = V(x, cs.layout), dyv = V(dy, cs.layout), mv = mean.view(), iv = invstd.view(), scv = sc.view(),
          dxv = V(dx, dxl), dscv = dsc.view(), dshv = dsh.view();
  const CTensor* scp = with_scale ? &scv : nullptr;
  CTensor* dscp = want_dscale(outs) ? &dscv : nullptr;
  CTensor* dshp = want_dshift(outs) ? &dshv : nullptr;
  const CTBatchNormDesc desc = bn_desc(eps);
  RunResult r = two_phase(
      [&](size_t* b) {
        return ct_batch_norm_backward_workspace_size(&desc, &xv, &dyv, &mv, &iv, scp, &dxv, dscp, dshp, b);
      },
      [&](void* w, size_t n) {
        return ct_batch_norm_backward(&desc, &xv, &dyv, &mv, &iv, scp, &dxv, dscp, dshp, w, n, nullptr);
      });
  const RunOutcome o = check_run(r, sup, "batch_norm_backward");
  if (o == UNSUP) {
    CHECK(dx.bytes() == dx0);
    CHECK(dsc.bytes() == dsc0);
    CHECK(dsh.bytes() == dsh0);
  }
  if (o != RAN) return;
  const std::vector<ctref::Array> ref =
      reference(ref_call(CT_OP_BATCH_NORM_BACKWARD, &desc), {&x, &dy, &mean, &invstd, with_scale ? &sc : nullptr},
                {{DT_F64, cs.shape}, {DT_F64, {g.C}}, {DT_F64, {g.C}}});
  check_data("dx", vals(dx), ref[0].f, d, 1e-4);
  check_gaps(dx, "dx");
  if (want_dscale(outs)) check_stat("dscale", vals(dsc), ref[1].f, d, 1e-4, 1e-5 * maxabs(ref[1].f) + 1e-6);
  if (want_dshift(outs)) check_stat("dshift", vals(dsh), ref[2].f, d, 1e-4, 1e-5 * maxabs(ref[2].f) + 1e-6);
}

// ---------------------------------------------------------------------------
// Finite differences
// ---------------------------------------------------------------------------

// d loss / d t[i] by central differences, with the perturbation actually
// stored (t is float32).
template <class L>
double central_diff(HostTensor& t, int64_t i, double h, L loss) {
  const double v0 = t.get(i);
  t.set(i, v0 + h);
  const double xp = t.get(i);
  const double lp = loss();
  t.set(i, v0 - h);
  const double xm = t.get(i);
  const double lm = loss();
  t.set(i, v0);
  return (lp - lm) / (xp - xm);
}

// Analytic (the library's backward) vs numeric: 1e-2 relative, with a floor
// of a thousandth of the largest gradient plus 2e-4 (float32 noise of the
// loss over 2h).
void check_fd(const std::string& what, const std::vector<double>& numeric, const std::vector<double>& analytic) {
  check_close(what + ": backward vs central differences", analytic, numeric, 1e-2,
              1e-3 * maxabs(numeric) + 2e-4);
}

const double kFdStep = 1e-2;

void bn_fd(const NdCase& cs, bool affine, double eps, uint64_t seed) {
  INFO("batch_norm_backward vs finite differences of sum(y * G) through batch_norm_training: " << cs.name << " "
       << shp(cs.shape) << " " << lname(cs.layout) << "; scale and shift " << (affine ? "given" : "NULL")
       << "; eps " << eps);
  Rng rng(seed);
  const BnGeom g(cs.shape);
  HostTensor x = make_nd(DT_F32, cs.shape, cs.layout);
  fill_input(x, [&](int64_t i) { return 0.3 * (double)g.chan(i) + rng.uniform(-2, 2); });
  HostTensor sc = f32_compact({g.C}), sh = f32_compact({g.C});
  fill_input(sc, [&](int64_t) { return rng.uniform(0.5, 1.5); });
  fill_input(sh, [&](int64_t) { return rng.uniform(-1, 1); });
  HostTensor dy = make_nd(DT_F32, cs.shape, cs.layout);
  fill_input(dy, [&](int64_t) { return rng.uniform(-1, 1); });
  const std::vector<double> G = vals(dy);
  HostTensor y = make_nd(DT_F32, cs.shape, cs.layout), mean = f32_compact({g.C}), invstd = f32_compact({g.C});
  CTensor xv = V(x, cs.layout), scv = sc.view(), shv = sh.view(), yv = V(y, cs.layout), mv = mean.view(),
          iv = invstd.view();
  const CTensor* scp = affine ? &scv : nullptr;
  const CTensor* shp_ = affine ? &shv : nullptr;
  const CTBatchNormDesc desc = bn_desc(eps);
  int64_t failures = 0;
  std::string first_failure;
  auto forward = [&]() -> bool {
    RunResult r = two_phase(
        [&](size_t* b) {
          return ct_batch_norm_training_workspace_size(&desc, &xv, scp, shp_, &yv, &mv, &iv, b);
        },
        [&](void* w, size_t n) {
          return ct_batch_norm_training(&desc, &xv, scp, shp_, &yv, &mv, &iv, w, n, nullptr);
        });
    if (r.st == CT_OK && r.guard_ok) return true;
    if (failures++ == 0) first_failure = std::string(ct_status_string(r.st)) + ": " + r.msg;
    return false;
  };
  auto loss = [&]() -> double {
    if (!forward()) return kNaN;
    double l = 0;
    for (int64_t i = 0; i < g.numel; ++i) l += y.get(i) * G[(size_t)i];
    return l;
  };
  {
    INFO("forward: " << first_failure);
    REQUIRE(forward());  // mean, invstd of this x for the backward
  }
  HostTensor dx = make_nd(DT_F32, cs.shape, cs.layout), dsc = f32_compact({g.C}), dsh = f32_compact({g.C});
  dx.fill_bytes(kSentinel);
  dsc.fill_bytes(kSentinel);
  dsh.fill_bytes(kSentinel);
  CTensor dyv = V(dy, cs.layout), dxv = V(dx, cs.layout), dscv = dsc.view(), dshv = dsh.view();
  RunResult rb = two_phase(
      [&](size_t* b) {
        return ct_batch_norm_backward_workspace_size(&desc, &xv, &dyv, &mv, &iv, scp, &dxv, &dscv, &dshv, b);
      },
      [&](void* w, size_t n) {
        return ct_batch_norm_backward(&desc, &xv, &dyv, &mv, &iv, scp, &dxv, &dscv, &dshv, w, n, nullptr);
      });
  REQUIRE(check_run(rb, true, "batch_norm_backward") == RAN);
  std::vector<double> num((size_t)g.numel);
  for (int64_t i = 0; i < g.numel; ++i) num[(size_t)i] = central_diff(x, i, kFdStep, loss);
  check_fd("dx", vals(dx), num);
  if (affine) {
    std::vector<double> nsc((size_t)g.C), nsh((size_t)g.C);
    for (int64_t c = 0; c < g.C; ++c) {
      nsc[(size_t)c] = central_diff(sc, c, kFdStep, loss);
      nsh[(size_t)c] = central_diff(sh, c, kFdStep, loss);
    }
    check_fd("dscale", vals(dsc), nsc);
    check_fd("dshift", vals(dsh), nsh);
  }
  INFO("first failing forward: " << first_failure);
  CHECK(failures == 0);
}

// ---------------------------------------------------------------------------
// Layer norm: cases and references
// ---------------------------------------------------------------------------

struct LnCase {
  const char* name;
  Shape shape;
  int k;           // normalised axes
  int32_t desc_k;  // what the descriptor says (0 means 1)
  int64_t R() const { return prod(shape, 0, shape.size() - (size_t)k); }
  int64_t D() const { return prod(shape, shape.size() - (size_t)k); }
  Shape tail() const { return Shape(shape.end() - k, shape.end()); }
};

const LnCase kLn[] = {
    {"(3,4,5) k=1 (normalized_ndim 0 = 1)", {3, 4, 5}, 1, 0},
    {"(3,4,5) k=2", {3, 4, 5}, 2, 2},
    {"(3,4,5) k=3 = ndim", {3, 4, 5}, 3, 3},
    {"(4,6) k=1", {4, 6}, 1, 1},
    {"(4,6) k=2 = ndim", {4, 6}, 2, 2},
    {"(2,3,2,4) k=2", {2, 3, 2, 4}, 2, 2},
    {"(7) k=1 = ndim", {7}, 1, 1},
};
const int kNumLn = (int)(sizeof kLn / sizeof kLn[0]);

// Statistics variants: NULL; x.shape[:-k] compact; x.shape[:-k] + k ones;
// x.shape[:-k] strided with gaps and byte_offset; mean given, rstd NULL.
enum { SV_NONE, SV_FLAT, SV_KEEP, SV_STRIDED, SV_MEAN_ONLY, SV_NUM };
const char* sv_name(int s) {
  static const char* k[SV_NUM] = {"mean, rstd NULL", "mean, rstd of shape x.shape[:-k]",
                                  "mean, rstd of shape x.shape[:-k] + k ones",
                                  "mean, rstd of shape x.shape[:-k], strided with gaps and byte_offset",
                                  "mean given (x.shape[:-k]), rstd NULL"};
  return k[s];
}

HostTensor make_stats(const LnCase& cs, int sv) {
  Shape s(cs.shape.begin(), cs.shape.end() - cs.k);
  if (sv == SV_KEEP) {
    s.insert(s.end(), (size_t)cs.k, 1);
    return f32_compact(s);
  }
  if (sv == SV_STRIDED) {
    Shape st(s.size());
    int64_t acc = 2;
    for (size_t i = s.size(); i-- > 0;) {
      st[i] = acc;
      acc = acc * s[i] + 1;
    }
    return HostTensor::strided(DT_F32, s, st, 3);
  }
  return f32_compact(s);
}

CTLayerNormDesc ln_desc(int32_t k, double eps) {
  CTLayerNormDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.normalized_ndim = k;
  d.epsilon = eps;
  return d;
}

// Per row (the row-major linear index / D) mean and rstd = 1 / sqrt(biased
// variance + eps) of x (the reference layer_norm's statistics).
void ref_ln_stats(const HostTensor& x, const LnCase& cs, double eps, std::vector<double>& mean,
                  std::vector<double>& rstd) {
  const CTLayerNormDesc desc = ln_desc(cs.desc_k, eps);
  const Shape R = {cs.R()};
  std::vector<ctref::Array> r = reference(ref_call(CT_OP_LAYER_NORM, &desc), {&x, nullptr, nullptr},
                                          {{DT_F64, x.shape}, {DT_F64, R}, {DT_F64, R}});
  mean = r[1].f;
  rstd = r[2].f;
}

double ln_input(Rng& rng, const LnCase& cs, int64_t i) {
  return 0.7 * (double)((i / cs.D()) % 3) - 0.5 + rng.uniform(-2, 2);  // row means differ
}

void run_ln(const LnCase& cs, int xl, int yl, int sv, int affine, int d, double eps, uint64_t seed) {
  INFO("layer_norm " << cs.name << "; x " << shp(cs.shape) << " " << lname(xl) << ", y " << lname(yl) << "; "
                     << sv_name(sv) << "; " << affine_name(affine) << "; " << dtype(d).name << "; eps " << eps);
  const bool sup = supported(CT_OP_LAYER_NORM, d);
  Rng rng(seed);
  const int64_t R = cs.R();
  HostTensor x = make_nd(d, cs.shape, xl);
  fill_input(x, [&](int64_t i) { return ln_input(rng, cs, i); });
  HostTensor sc = f32_compact(cs.tail()), sh = f32_compact(cs.tail());
  fill_input(sc, [&](int64_t) { return rng.uniform(0.5, 1.5) * (rng.uniform() < 0.3 ? -1 : 1); });
  fill_input(sh, [&](int64_t) { return rng.uniform(-1, 1); });
  HostTensor y = make_nd(d, cs.shape, yl), mean = make_stats(cs, sv), rstd = make_stats(cs, sv);
  y.fill_bytes(kSentinel);
  mean.fill_bytes(kSentinel);
  rstd.fill_bytes(kSentinel);
  const std::vector<unsigned char> y0 = y.bytes(), m0 = mean.bytes(), r0 = rstd.bytes();
  CTensor xv = V(x, xl), scv = sc.view(), shv = sh.view(), yv = V(y, yl), mv = mean.view(), rv = rstd.view();
  const CTensor* scp = has_scale(affine) ? &scv : nullptr;
  const CTensor* shp_ = has_shift(affine) ? &shv : nullptr;
  CTensor* mp = sv == SV_NONE ? nullptr : &mv;
  CTensor* rp = (sv == SV_NONE || sv == SV_MEAN_ONLY) ? nullptr : &rv;
  const CTLayerNormDesc desc = ln_desc(cs.desc_k, eps);
  RunResult r = two_phase(
      [&](size_t* b) { return ct_layer_norm_workspace_size(&desc, &xv, scp, shp_, &yv, mp, rp, b); },
      [&](void* w, size_t n) { return ct_layer_norm(&desc, &xv, scp, shp_, &yv, mp, rp, w, n, nullptr); });
  const RunOutcome o = check_run(r, sup, "layer_norm");
  if (o == UNSUP) {
    CHECK(y.bytes() == y0);
    CHECK(mean.bytes() == m0);
    CHECK(rstd.bytes() == r0);
  }
  if (o != RAN) return;
  const std::vector<double> xs = vals(x);
  const std::vector<ctref::Array> ref =
      reference(ref_call(CT_OP_LAYER_NORM, &desc),
                {&x, has_scale(affine) ? &sc : nullptr, has_shift(affine) ? &sh : nullptr},
                {{DT_F64, cs.shape}, {DT_F64, {R}}, {DT_F64, {R}}});
  check_data("y", vals(y), ref[0].f, d, 1e-4);
  check_gaps(y, "y");
  if (mp) {
    check_stat("mean", vals(mean), ref[1].f, d, 1e-5, 1e-5 * maxabs(xs));
    check_gaps(mean, "mean");
  }
  if (rp) {
    check_stat("rstd", vals(rstd), ref[2].f, d, 1e-4, 0.0);
    check_gaps(rstd, "rstd");
  }
}

void run_ln_bwd(const LnCase& cs, int xl, int dxl, int sv, bool with_scale, int outs, int d, double eps,
                uint64_t seed) {
  INFO("layer_norm_backward " << cs.name << "; x " << shp(cs.shape) << " and dy " << lname(xl) << ", dx "
                              << lname(dxl) << "; " << sv_name(sv) << "; scale " << (with_scale ? "given" : "NULL")
                              << "; " << outs_name(outs) << "; " << dtype(d).name << "; eps " << eps);
  const bool sup = supported(CT_OP_LAYER_NORM_BACKWARD, d);
  Rng rng(seed);
  HostTensor x = make_nd(d, cs.shape, xl), dy = make_nd(d, cs.shape, xl);
  fill_input(x, [&](int64_t i) { return ln_input(rng, cs, i); });
  fill_input(dy, [&](int64_t) { return rng.uniform(-1, 1); });
  std::vector<double> rm, rr;
  ref_ln_stats(x, cs, eps, rm, rr);
  HostTensor mean = make_stats(cs, sv), rstd = make_stats(cs, sv), sc = f32_compact(cs.tail());
  fill_input(mean, [&](int64_t i) { return rm[(size_t)i]; });
  fill_input(rstd, [&](int64_t i) { return rr[(size_t)i]; });
  fill_input(sc, [&](int64_t) { return rng.uniform(0.5, 1.5) * (rng.uniform() < 0.3 ? -1 : 1); });
  HostTensor dx = make_nd(d, cs.shape, dxl), dsc = f32_compact(cs.tail()), dsh = f32_compact(cs.tail());
  dx.fill_bytes(kSentinel);
  dsc.fill_bytes(kSentinel);
  dsh.fill_bytes(kSentinel);
  const std::vector<unsigned char> dx0 = dx.bytes(), dsc0 = dsc.bytes(), dsh0 = dsh.bytes();
  CTensor xv = V(x, xl), dyv = V(dy, xl), mv = mean.view(), rv = rstd.view(), scv = sc.view(), dxv = V(dx, dxl),
          dscv = dsc.view(), dshv = dsh.view();
  const CTensor* scp = with_scale ? &scv : nullptr;
  CTensor* dscp = want_dscale(outs) ? &dscv : nullptr;
  CTensor* dshp = want_dshift(outs) ? &dshv : nullptr;
  const CTLayerNormDesc desc = ln_desc(cs.desc_k, eps);
  RunResult r = two_phase(
      [&](size_t* b) {
        return ct_layer_norm_backward_workspace_size(&desc, &xv, &dyv, &mv, &rv, scp, &dxv, dscp, dshp, b);
      },
      [&](void* w, size_t n) {
        return ct_layer_norm_backward(&desc, &xv, &dyv, &mv, &rv, scp, &dxv, dscp, dshp, w, n, nullptr);
      });
  const RunOutcome o = check_run(r, sup, "layer_norm_backward");
  if (o == UNSUP) {
    CHECK(dx.bytes() == dx0);
    CHECK(dsc.bytes() == dsc0);
    CHECK(dsh.bytes() == dsh0);
  }
  if (o != RAN) return;
  const std::vector<ctref::Array> ref =
      reference(ref_call(CT_OP_LAYER_NORM_BACKWARD, &desc), {&x, &dy, &mean, &rstd, with_scale ? &sc : nullptr},
                {{DT_F64, cs.shape}, {DT_F64, cs.tail()}, {DT_F64, cs.tail()}});
  check_data("dx", vals(dx), ref[0].f, d, 1e-4);
  check_gaps(dx, "dx");
  if (want_dscale(outs)) check_stat("dscale", vals(dsc), ref[1].f, d, 1e-4, 1e-5 * maxabs(ref[1].f) + 1e-6);
  if (want_dshift(outs)) check_stat("dshift", vals(dsh), ref[2].f, d, 1e-4, 1e-5 * maxabs(ref[2].f) + 1e-6);
}

void ln_fd(const LnCase& cs, int xl, int sv, bool affine, double eps, uint64_t seed) {
  INFO("layer_norm_backward vs finite differences of sum(y * G) through layer_norm: " << cs.name << "; x "
       << shp(cs.shape) << " " << lname(xl) << "; stats for the backward: " << sv_name(sv) << "; scale and shift "
       << (affine ? "given" : "NULL") << "; eps " << eps);
  Rng rng(seed);
  const int64_t R = cs.R(), D = cs.D();
  HostTensor x = make_nd(DT_F32, cs.shape, xl);
  fill_input(x, [&](int64_t i) { return ln_input(rng, cs, i); });
  HostTensor sc = f32_compact(cs.tail()), sh = f32_compact(cs.tail());
  fill_input(sc, [&](int64_t) { return rng.uniform(0.5, 1.5); });
  fill_input(sh, [&](int64_t) { return rng.uniform(-1, 1); });
  HostTensor dy = make_nd(DT_F32, cs.shape, xl);
  fill_input(dy, [&](int64_t) { return rng.uniform(-1, 1); });
  const std::vector<double> G = vals(dy);
  HostTensor y = make_nd(DT_F32, cs.shape, xl), mean = make_stats(cs, sv), rstd = make_stats(cs, sv);
  mean.fill_bytes(kSentinel);
  rstd.fill_bytes(kSentinel);
  CTensor xv = V(x, xl), scv = sc.view(), shv = sh.view(), yv = V(y, xl), mv = mean.view(), rv = rstd.view();
  const CTensor* scp = affine ? &scv : nullptr;
  const CTensor* shp_ = affine ? &shv : nullptr;
  const CTLayerNormDesc desc = ln_desc(cs.desc_k, eps);
  int64_t failures = 0;
  std::string first_failure;
  // with_stats: write mean and rstd (for the backward); the loss runs without.
  auto forward = [&](bool with_stats) -> bool {
    CTensor* mp = with_stats ? &mv : nullptr;
    CTensor* rp = with_stats ? &rv : nullptr;
    RunResult r = two_phase(
        [&](size_t* b) { return ct_layer_norm_workspace_size(&desc, &xv, scp, shp_, &yv, mp, rp, b); },
        [&](void* w, size_t n) { return ct_layer_norm(&desc, &xv, scp, shp_, &yv, mp, rp, w, n, nullptr); });
    if (r.st == CT_OK && r.guard_ok) return true;
    if (failures++ == 0) first_failure = std::string(ct_status_string(r.st)) + ": " + r.msg;
    return false;
  };
  auto loss = [&]() -> double {
    if (!forward(false)) return kNaN;
    double l = 0;
    for (int64_t i = 0; i < R * D; ++i) l += y.get(i) * G[(size_t)i];
    return l;
  };
  {
    INFO("forward: " << first_failure);
    REQUIRE(forward(true));
  }
  HostTensor dx = make_nd(DT_F32, cs.shape, xl), dsc = f32_compact(cs.tail()), dsh = f32_compact(cs.tail());
  dx.fill_bytes(kSentinel);
  dsc.fill_bytes(kSentinel);
  dsh.fill_bytes(kSentinel);
  CTensor dyv = V(dy, xl), dxv = V(dx, xl), dscv = dsc.view(), dshv = dsh.view();
  RunResult rb = two_phase(
      [&](size_t* b) {
        return ct_layer_norm_backward_workspace_size(&desc, &xv, &dyv, &mv, &rv, scp, &dxv, &dscv, &dshv, b);
      },
      [&](void* w, size_t n) {
        return ct_layer_norm_backward(&desc, &xv, &dyv, &mv, &rv, scp, &dxv, &dscv, &dshv, w, n, nullptr);
      });
  REQUIRE(check_run(rb, true, "layer_norm_backward") == RAN);
  std::vector<double> num((size_t)(R * D));
  for (int64_t i = 0; i < R * D; ++i) num[(size_t)i] = central_diff(x, i, kFdStep, loss);
  check_fd("dx", vals(dx), num);
  if (affine) {
    std::vector<double> nsc((size_t)D), nsh((size_t)D);
    for (int64_t j = 0; j < D; ++j) {
      nsc[(size_t)j] = central_diff(sc, j, kFdStep, loss);
      nsh[(size_t)j] = central_diff(sh, j, kFdStep, loss);
    }
    check_fd("dscale", vals(dsc), nsc);
    check_fd("dshift", vals(dsh), nsh);
  }
  INFO("first failing forward: " << first_failure);
  CHECK(failures == 0);
}

struct NnOp {
  int op;
  const char* name;
  int num_tensors;
};
const NnOp kOps[] = {
    {CT_OP_MAX_POOL2D, "max_pool2d", 3},
    {CT_OP_MAX_POOL2D_BACKWARD, "max_pool2d_backward", 3},
    {CT_OP_AVG_POOL2D, "avg_pool2d", 2},
    {CT_OP_AVG_POOL2D_BACKWARD, "avg_pool2d_backward", 2},
    {CT_OP_BATCH_NORM, "batch_norm", 6},
    {CT_OP_BATCH_NORM_TRAINING, "batch_norm_training", 6},
    {CT_OP_BATCH_NORM_BACKWARD, "batch_norm_backward", 8},
    {CT_OP_LAYER_NORM, "layer_norm", 6},
    {CT_OP_LAYER_NORM_BACKWARD, "layer_norm_backward", 8},
};

const int kHalves[] = {DT_BF16, DT_F16};

}  // namespace

// ===========================================================================
// Registry facts and dtype support
// ===========================================================================

TEST_CASE("nn pool/norm: registry entries; float32 supported; half types supported or refused naming the op",
          "[nn]") {
  for (const NnOp& op : kOps) {
    INFO("op " << op.name << " (id " << op.op << ")");
    CTOpInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(op.op, &info) == CT_OK);
    CHECK(std::string(info.name) == op.name);
    CHECK(info.category == CT_CATEGORY_NN);
    CHECK(info.kind == CT_KIND_NN);
    CHECK(info.output_dtype == CT_OUTPUT_NN);
    CHECK(info.num_tensors == op.num_tensors);
    REQUIRE(info.tensor_names != nullptr);
    const std::string names = info.tensor_names;
    CHECK((int)std::count(names.begin(), names.end(), ',') + 1 == op.num_tensors);
    int32_t found = -1;
    CHECK(ct_op_find(op.name, &found) == CT_OK);
    CHECK(found == op.op);

    CHECK(ct_op_supported(op.op, kCpu, dtype(DT_F32).dt) == CT_OK);
    for (int d : kHalves) {
      INFO(dtype(d).name);
      const CTStatus s = ct_op_supported(op.op, kCpu, dtype(d).dt);
      const std::string msg = last_error();
      INFO("ct_op_supported: " << ct_status_string(s) << " \"" << msg << "\"");
      if (s == CT_OK) {
        CHECK(msg.empty());
      } else {
        CHECK(s == CT_ERR_UNSUPPORTED);
        CHECK(contains(msg, op.name));
      }
    }
    // Integer data is never an NN op's dtype.
    CHECK(ct_op_supported(op.op, kCpu, dtype(DT_I32).dt) == CT_ERR_UNSUPPORTED);
  }
}

// ===========================================================================
// Pooling
// ===========================================================================

TEST_CASE("max_pool2d and avg_pool2d: hand-computed ties, padding and divisors", "[nn]") {
  // Values worked out by hand, independent of the reference functions above.
  SECTION("max_pool2d 2x2 stride 1 with ties: the first max in row-major window order") {
    const PoolP p = {"2x2 stride 1", 1, 1, 3, 3, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {0, 0}};
    for (int l : {L_COMPACT, L_PAD}) {
      INFO("layout " << lname(l));
      HostTensor x = make_nd(DT_F32, p.xshape(), l);
      const double xs[9] = {1, 3, 3, 3, 0, 3, 1, 3, 2};
      fill_input(x, [&](int64_t i) { return xs[i]; });
      HostTensor y = make_nd(DT_F32, p.yshape(), l), ind = make_nd(DT_I64, p.yshape(), l);
      y.fill_bytes(kSentinel);
      ind.fill_bytes(kSentinel);
      CTensor xv = V(x, l), yv = V(y, l), iv = V(ind, l);
      const CTPool2dDesc desc = p.desc(0);
      RunResult r = two_phase([&](size_t* b) { return ct_max_pool2d_workspace_size(&desc, &xv, &yv, &iv, b); },
                              [&](void* w, size_t n) { return ct_max_pool2d(&desc, &xv, &yv, &iv, w, n, nullptr); });
      REQUIRE(check_run(r, true, "max_pool2d") == RAN);
      check_exact("y", vals(y), {3, 3, 3, 3});
      check_index("indices", ivals(ind), {1, 1, 3, 5});
      // Backward: dy (1,2,3,4) lands on 1, 1, 3, 5.
      HostTensor dy = make_nd(DT_F32, p.yshape(), l), dx = make_nd(DT_F32, p.xshape(), l);
      fill_input(dy, [](int64_t i) { return (double)(i + 1); });
      dx.fill_bytes(kSentinel);
      CTensor dyv = V(dy, l), dxv = V(dx, l);
      RunResult rb = two_phase(
          [&](size_t* b) { return ct_max_pool2d_backward_workspace_size(&desc, &dyv, &iv, &dxv, b); },
          [&](void* w, size_t n) { return ct_max_pool2d_backward(&desc, &dyv, &iv, &dxv, w, n, nullptr); });
      REQUIRE(check_run(rb, true, "max_pool2d_backward") == RAN);
      check_exact("dx", vals(dx), {0, 3, 0, 3, 0, 4, 0, 0, 0});
      check_gaps(dx, "dx");
    }
  }
  SECTION("max_pool2d 3x3 stride 1 pad 1 on a constant negative plane: padding never wins") {
    const PoolP p = {"3x3 stride 1 pad 1", 1, 1, 3, 3, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}};
    HostTensor x = make_nd(DT_F32, p.xshape(), L_COMPACT);
    fill_input(x, [](int64_t) { return -1.0; });
    HostTensor y = make_nd(DT_F32, p.yshape(), L_COMPACT), ind = make_nd(DT_I64, p.yshape(), L_COMPACT);
    y.fill_bytes(kSentinel);
    ind.fill_bytes(kSentinel);
    CTensor xv = x.view(), yv = y.view(), iv = ind.view();
    const CTPool2dDesc desc = p.desc(0);
    RunResult r = two_phase([&](size_t* b) { return ct_max_pool2d_workspace_size(&desc, &xv, &yv, &iv, b); },
                            [&](void* w, size_t n) { return ct_max_pool2d(&desc, &xv, &yv, &iv, w, n, nullptr); });
    REQUIRE(check_run(r, true, "max_pool2d") == RAN);
    check_exact("y", vals(y), std::vector<double>(9, -1.0));
    check_index("indices", ivals(ind), {0, 0, 1, 0, 0, 1, 3, 3, 4});
  }
  SECTION("avg_pool2d 2x2 stride 1 pad 1: count_include_pad 1 divides by 4, 0 by the taps inside") {
    const PoolP p = {"2x2 stride 1 pad 1", 1, 1, 2, 2, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {0, 0}};
    const std::vector<double> want[2] = {{1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4},
                                         {0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1}};
    for (int cip = 0; cip < 2; ++cip) {
      INFO("count_include_pad " << cip);
      HostTensor x = make_nd(DT_F32, p.xshape(), L_CLAST);
      fill_input(x, [](int64_t i) { return (double)(i + 1); });
      HostTensor y = make_nd(DT_F32, p.yshape(), L_COMPACT);
      y.fill_bytes(kSentinel);
      CTensor xv = V(x, L_CLAST), yv = y.view();
      const CTPool2dDesc desc = p.desc(cip);
      RunResult r = two_phase([&](size_t* b) { return ct_avg_pool2d_workspace_size(&desc, &xv, &yv, b); },
                              [&](void* w, size_t n) { return ct_avg_pool2d(&desc, &xv, &yv, w, n, nullptr); });
      REQUIRE(check_run(r, true, "avg_pool2d") == RAN);
      check_close("y", vals(y), want[cip], 1e-6, 0);
      // Backward of dy = 1 everywhere: cip 1 gives 9 windows x 1/4 spread as
      // 4 taps each -> every x position is in 4 windows: 4 * 1/4 = 1.
      HostTensor dy = make_nd(DT_F32, p.yshape(), L_COMPACT), dx = make_nd(DT_F32, p.xshape(), L_PAD);
      fill_input(dy, [](int64_t) { return 1.0; });
      dx.fill_bytes(kSentinel);
      CTensor dyv = dy.view(), dxv = V(dx, L_PAD);
      RunResult rb = two_phase(
          [&](size_t* b) { return ct_avg_pool2d_backward_workspace_size(&desc, &dyv, &dxv, b); },
          [&](void* w, size_t n) { return ct_avg_pool2d_backward(&desc, &dyv, &dxv, w, n, nullptr); });
      REQUIRE(check_run(rb, true, "avg_pool2d_backward") == RAN);
      // cip 0: x(0,0) is in windows (0,0) [1 tap], (0,1) [2], (1,0) [2], (1,1) [4]:
      // 1 + 1/2 + 1/2 + 1/4 = 2.25, the same for every position by symmetry.
      check_close("dx", vals(dx), std::vector<double>(4, cip ? 1.0 : 2.25), 1e-6, 0);
      check_gaps(dx, "dx");
    }
  }
}

TEST_CASE("max_pool2d: forward vs reference, indices NULL and given, ties, padding, dilation, layouts", "[nn]") {
  const int layouts[] = {L_COMPACT, L_CLAST, L_PAD, L_PAD_CLAST};
  for (int c = 0; c < kNumPool; ++c)
    for (int li = 0; li < 4; ++li) {
      const int xl = layouts[li];
      const int vmode = (c + li) % 4;
      const uint64_t seed = 1000 + 10 * (uint64_t)c + (uint64_t)li;
      run_max_pool(kPool[c], xl, xl, DT_F32, vmode, false, seed);
      run_max_pool(kPool[c], xl, xl, DT_F32, vmode, true, seed);
      // y and indices in another layout than x.
      run_max_pool(kPool[c], xl, layouts[(li + 1 + c) % 4], DT_F32, (vmode + 1) % 4, true, seed + 5);
    }
}

// Planes wide enough that the interior outputs of a row run as vector loops
// (the forward keeps each winner's tap in an integer of the value's width):
// ties, NaN (PyTorch's rule: a NaN propagates, the last NaN tap in window
// order gives the index) and -inf, y and indices against the reference; the
// same in channels-last and bfloat16 (oneDNN's kernels, whose max passes
// NaN over, then the NaN pass).
TEST_CASE("max_pool2d: wide rows (vector interior) with ties, NaN and -inf: y and indices", "[nn]") {
  const PoolP wide[] = {
      {"3x3 stride 2 pad 1, 45 wide", 1, 3, 9, 45, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
      {"3x3 stride 1 pad 1, 40 wide", 2, 2, 7, 40, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"2x2 stride 0, 50 wide", 1, 2, 6, 50, {2, 2}, {0, 0}, {0, 0}, {0, 0}, {0, 0}},
      {"2x3 stride 3 dilation 2, pad (1,2), 61 wide", 1, 2, 8, 61, {2, 3}, {3, 3}, {1, 2}, {0, 2}, {1, 2}},
  };
  struct DL {
    int d, layout;
  };
  for (DL dl : {DL{DT_F32, L_COMPACT}, DL{DT_F32, L_CLAST}, DL{DT_BF16, L_COMPACT}})
  for (const PoolP& p : wide)
    for (int vmode : {0, 3, 4}) {
      const int d = dl.d;
      if (dl.layout != L_COMPACT && vmode != 4) continue;
      if (d == DT_BF16 && !supported(CT_OP_MAX_POOL2D, d)) continue;
      INFO("max_pool2d " << p.str() << "; " << dtype(d).name << ", " << lname(dl.layout) << "; values "
                         << (vmode == 4 ? "uniform(-1,1), 1 in 8 NaN, 1 in 8 -inf" : vmode_name(vmode)));
      Rng rng(77 + (uint64_t)vmode);
      HostTensor x = make_nd(d, p.xshape(), dl.layout);
      fill_input(x, [&](int64_t) {
        if (vmode != 4) return pool_value(rng, vmode);
        const int64_t k = rng.int_in(0, 7);
        return k == 0   ? std::numeric_limits<double>::quiet_NaN()
             : k == 1 ? -std::numeric_limits<double>::infinity()
                      : rng.uniform(-1, 1);
      });
      HostTensor y = make_nd(d, p.yshape(), L_COMPACT), ind = make_nd(DT_I64, p.yshape(), L_COMPACT);
      CTensor xv = x.view(), yv = y.view(), iv = ind.view();
      const CTPool2dDesc desc = p.desc(0);
      size_t ws = 0;  // oneDNN's kernels (channels-last, bfloat16) take one
      REQUIRE(ct_max_pool2d_workspace_size(&desc, &xv, &yv, &iv, &ws) == CT_OK);
      std::vector<unsigned char> wbuf(ws + 1);
      REQUIRE(ct_max_pool2d(&desc, &xv, &yv, &iv, wbuf.data(), ws, nullptr) == CT_OK);
      const PoolRef ref = ref_max_pool(p, vals(x));
      check_index("indices", ivals(ind), ref.idx);
      const std::vector<double> got = vals(y);
      int64_t bad = 0;
      for (size_t i = 0; i < got.size(); ++i)
        bad += !(got[i] == ref.y[i] || (std::isnan(got[i]) && std::isnan(ref.y[i])));
      CHECK(bad == 0);
    }
}

TEST_CASE("max_pool2d_backward: dy routed to indices, overlapping windows accumulate, dx overwritten", "[nn]") {
  const int layouts[] = {L_COMPACT, L_CLAST, L_PAD, L_PAD_CLAST};
  for (int c = 0; c < kNumPool; ++c)
    for (int li = 0; li < 4; ++li) {
      const uint64_t seed = 2000 + 10 * (uint64_t)c + (uint64_t)li;
      run_max_pool_bwd(kPool[c], layouts[li], layouts[li], DT_F32, (c + li) % 3, seed);
      run_max_pool_bwd(kPool[c], layouts[li], layouts[(li + 1) % 4], DT_F32, 2 - (c + li) % 3, seed + 5);
    }
}

TEST_CASE("max_pool2d -> max_pool2d_backward: the library's own indices round-trip", "[nn]") {
  // Forward with indices, then the backward on those indices: dx equals the
  // reference routing of dy to the reference argmax positions.
  const PoolP& p = kPool[1];
  INFO(p.str());
  Rng rng(77);
  HostTensor x = make_nd(DT_F32, p.xshape(), L_CLAST);
  fill_input(x, [&](int64_t) { return pool_value(rng, 0); });
  HostTensor y = make_nd(DT_F32, p.yshape(), L_CLAST), ind = make_nd(DT_I64, p.yshape(), L_CLAST);
  CTensor xv = V(x, L_CLAST), yv = V(y, L_CLAST), iv = V(ind, L_CLAST);
  const CTPool2dDesc desc = p.desc(0);
  RunResult r = two_phase([&](size_t* b) { return ct_max_pool2d_workspace_size(&desc, &xv, &yv, &iv, b); },
                          [&](void* w, size_t n) { return ct_max_pool2d(&desc, &xv, &yv, &iv, w, n, nullptr); });
  REQUIRE(check_run(r, true, "max_pool2d") == RAN);
  HostTensor dy = make_nd(DT_F32, p.yshape(), L_CLAST), dx = make_nd(DT_F32, p.xshape(), L_COMPACT);
  fill_input(dy, [&](int64_t) { return rng.uniform(-1, 1); });
  dx.fill_bytes(kSentinel);
  CTensor dyv = V(dy, L_CLAST), dxv = dx.view();
  RunResult rb = two_phase(
      [&](size_t* b) { return ct_max_pool2d_backward_workspace_size(&desc, &dyv, &iv, &dxv, b); },
      [&](void* w, size_t n) { return ct_max_pool2d_backward(&desc, &dyv, &iv, &dxv, w, n, nullptr); });
  REQUIRE(check_run(rb, true, "max_pool2d_backward") == RAN);
  const PoolRef ref = ref_max_pool(p, vals(x));
  check_close("dx", vals(dx), ref_max_pool_bwd(p, vals(dy), ref.idx), 1e-6, 1e-6);
}

TEST_CASE("avg_pool2d: forward vs reference, count_include_pad 0 and 1, padding, stride, dilation, layouts",
          "[nn]") {
  const int layouts[] = {L_COMPACT, L_CLAST, L_PAD, L_PAD_CLAST};
  for (int c = 0; c < kNumPool; ++c)
    for (int li = 0; li < 4; ++li)
      for (int cip = 0; cip < 2; ++cip) {
        const uint64_t seed = 3000 + 10 * (uint64_t)c + 2 * (uint64_t)li + (uint64_t)cip;
        run_avg_pool(kPool[c], cip, layouts[li], cip ? layouts[li] : layouts[(li + 1 + c) % 4], DT_F32, seed);
      }
}

TEST_CASE("avg_pool2d_backward: vs reference, count_include_pad 0 and 1, dx overwritten", "[nn]") {
  const int layouts[] = {L_COMPACT, L_CLAST, L_PAD, L_PAD_CLAST};
  for (int c = 0; c < kNumPool; ++c)
    for (int li = 0; li < 4; ++li)
      for (int cip = 0; cip < 2; ++cip) {
        const uint64_t seed = 4000 + 10 * (uint64_t)c + 2 * (uint64_t)li + (uint64_t)cip;
        run_avg_pool_bwd(kPool[c], cip, layouts[li], cip ? layouts[(li + 1 + c) % 4] : layouts[li], DT_F32, seed);
      }
}

TEST_CASE("pooling: bfloat16 and float16 (supported and correct, or CT_ERR_UNSUPPORTED naming the op)", "[nn]") {
  const int layouts[] = {L_COMPACT, L_CLAST, L_PAD};
  for (int d : kHalves)
    for (int c = 0; c < kNumPool; ++c)
      for (int li = 0; li < 3; ++li) {
        if (li == 2 && c % 2) continue;  // the padded layout on half the cases
        const int l = layouts[li];
        const uint64_t seed = 5000 + 100 * (uint64_t)d + 10 * (uint64_t)c + (uint64_t)li;
        run_max_pool(kPool[c], l, l, d, (c + li) % 4, true, seed);
        run_max_pool_bwd(kPool[c], l, l, d, (c + li) % 3, seed + 1);
        run_avg_pool(kPool[c], (c + li) % 2, l, l, d, seed + 2);
        run_avg_pool_bwd(kPool[c], (c + li + 1) % 2, l, l, d, seed + 3);
      }
}

// ===========================================================================
// Batch norm
// ===========================================================================

TEST_CASE("batch_norm (inference): vs reference, 2-d to 5-d, NCHW / NHWC / padded, with and without affine",
          "[nn]") {
  for (int c = 0; c < kNumBn; ++c)
    for (int affine = 0; affine < 4; ++affine) {
      const double eps = (affine % 2) ? 1e-5 : 0.1;
      const int yl = (affine == 3 && kBn[c].layout == L_COMPACT) ? L_PAD : kBn[c].layout;
      run_bn_infer(kBn[c], yl, DT_F32, affine, eps, 6000 + 10 * (uint64_t)c + (uint64_t)affine);
    }
}

TEST_CASE("batch_norm_training: y, mean, invstd = 1/sqrt(biased var + eps) vs reference", "[nn]") {
  for (int c = 0; c < kNumBn; ++c)
    for (int affine = 0; affine < 4; ++affine) {
      const double eps = (affine % 2) ? 1e-5 : 1e-3;
      const int yl = (affine == 2 && kBn[c].layout == L_COMPACT) ? L_PAD : kBn[c].layout;
      run_bn_train(kBn[c], yl, DT_F32, affine, eps, 7000 + 10 * (uint64_t)c + (uint64_t)affine);
    }
}

TEST_CASE("batch_norm_backward: vs reference formulas, scale NULL or given, dscale/dshift NULL or given", "[nn]") {
  for (int c = 0; c < kNumBn; ++c)
    for (int v = 0; v < 6; ++v) {
      // (scale, outputs): both outputs / none with and without scale, then
      // each output alone.
      const bool with_scale = v % 2 == 0;
      const int outs = v < 2 ? 0 : v < 4 ? 1 : (v == 4 ? 2 : 3);
      const int dxl = (v == 1 && kBn[c].layout == L_COMPACT) ? L_PAD : kBn[c].layout;
      run_bn_bwd(kBn[c], dxl, DT_F32, with_scale, outs, 1e-5, 8000 + 10 * (uint64_t)c + (uint64_t)v);
    }
}

TEST_CASE("batch_norm_backward: central finite differences of sum(y*G) through batch_norm_training", "[nn]") {
  bn_fd({"4-d NCHW (3,2,2,2)", {3, 2, 2, 2}, L_COMPACT}, true, 1e-5, 9001);
  bn_fd({"4-d NHWC (2,3,2,2) by strides", {2, 3, 2, 2}, L_CLAST}, true, 1e-3, 9002);
  bn_fd({"2-d (6,3)", {6, 3}, L_COMPACT}, false, 1e-5, 9003);
  bn_fd({"5-d padded (2,2,2,1,3)", {2, 2, 2, 1, 3}, L_PAD}, true, 1e-5, 9004);
}

TEST_CASE("batch_norm family: bfloat16 and float16 (stats float32)", "[nn]") {
  const int pick[] = {0, 3, 4, 6, 7};
  for (int d : kHalves)
    for (int c : pick) {
      const uint64_t seed = 9500 + 100 * (uint64_t)d + 10 * (uint64_t)c;
      run_bn_infer(kBn[c], kBn[c].layout, d, 1 + c % 3, 1e-5, seed);
      run_bn_infer(kBn[c], kBn[c].layout, d, 0, 1e-3, seed + 1);
      run_bn_train(kBn[c], kBn[c].layout, d, 1, 1e-5, seed + 2);
      run_bn_train(kBn[c], kBn[c].layout, d, 0, 1e-5, seed + 3);
      run_bn_bwd(kBn[c], kBn[c].layout, d, true, 0, 1e-5, seed + 4);
      run_bn_bwd(kBn[c], kBn[c].layout, d, false, c % 2 ? 1 : 2, 1e-5, seed + 5);
    }
}

// ===========================================================================
// Layer norm
// ===========================================================================

TEST_CASE("layer_norm: vs reference over the last k axes; stats NULL / flat / keep-ones / strided; layouts",
          "[nn]") {
  const int layouts[] = {L_COMPACT, L_PAD, L_COLMAJOR, L_CLAST};
  for (int c = 0; c < kNumLn; ++c)
    for (int li = 0; li < 4; ++li)
      for (int sv = 0; sv < SV_NUM; ++sv) {
        const int xl = layouts[li];
        // y: x's layout, except compact for the permuted ones on odd variants.
        const int yl = (xl == L_COLMAJOR || xl == L_CLAST) && sv % 2 ? L_COMPACT
                       : (xl == L_COMPACT && sv == SV_KEEP)          ? L_PAD
                                                                     : xl;
        const int affine = (sv + li + c) % 3;  // none, both, scale only
        const double eps = sv % 2 ? 1e-5 : 1e-2;
        run_ln(kLn[c], xl, yl, sv, affine, DT_F32, eps, 10000 + 100 * (uint64_t)c + 10 * (uint64_t)li + (uint64_t)sv);
      }
}

TEST_CASE("layer_norm_backward: vs reference formulas, scale NULL or given, dscale/dshift NULL or given", "[nn]") {
  const int layouts[] = {L_COMPACT, L_PAD, L_COLMAJOR};
  const int stats[] = {SV_FLAT, SV_KEEP, SV_STRIDED};
  for (int c = 0; c < kNumLn; ++c)
    for (int li = 0; li < 3; ++li)
      for (int v = 0; v < 4; ++v) {
        const bool with_scale = v % 2 == 0;
        const int outs = v < 2 ? (v == 0 ? 0 : 1) : (v == 2 ? 2 : 3);
        const int xl = layouts[li];
        const int dxl = (xl == L_COLMAJOR && v % 2) ? L_COMPACT : (xl == L_COMPACT && v == 3) ? L_PAD : xl;
        run_ln_bwd(kLn[c], xl, dxl, stats[(c + li + v) % 3], with_scale, outs, DT_F32, 1e-5,
                   11000 + 100 * (uint64_t)c + 10 * (uint64_t)li + (uint64_t)v);
      }
}

TEST_CASE("layer_norm_backward: central finite differences of sum(y*G) through layer_norm", "[nn]") {
  ln_fd({"(2,3,4) k=2", {2, 3, 4}, 2, 2}, L_COMPACT, SV_FLAT, true, 1e-5, 12001);
  ln_fd({"(3,5) k=1", {3, 5}, 1, 1}, L_PAD, SV_STRIDED, true, 1e-5, 12002);
  ln_fd({"(2,2,3) k=3 = ndim", {2, 2, 3}, 3, 3}, L_COLMAJOR, SV_KEEP, false, 1e-3, 12003);
  ln_fd({"(4,3) k=1", {4, 3}, 1, 1}, L_COLMAJOR, SV_FLAT, false, 1e-5, 12004);
}

TEST_CASE("layer_norm family: rows past 2^18 elements run the own loops, vs reference; their plans stay small",
          "[nn]") {
  // oneDNN 2.6's JIT layer norm unrolls the row into its code (~8 bytes per
  // element); past 2^18 the CPU backend runs its own loops in its place.
  const LnCase big[] = {{"(2,262147) k=1", {2, 262147}, 1, 1}, {"(3,2,131075) k=2", {3, 2, 131075}, 2, 2}};
  run_ln(big[0], L_COMPACT, L_COMPACT, SV_FLAT, 1, DT_F32, 1e-5, 14001);
  run_ln(big[1], L_PAD, L_COMPACT, SV_STRIDED, 2, DT_F32, 1e-2, 14002);
  run_ln(big[0], L_COLMAJOR, L_PAD, SV_NONE, 0, DT_F32, 1e-5, 14003);
  run_ln(big[1], L_COMPACT, L_COMPACT, SV_MEAN_ONLY, 3, DT_F32, 1e-5, 14004);
  run_ln_bwd(big[0], L_COMPACT, L_COMPACT, SV_FLAT, true, 0, DT_F32, 1e-5, 14005);
  run_ln_bwd(big[1], L_PAD, L_COMPACT, SV_KEEP, false, 3, DT_F32, 1e-5, 14006);
  run_ln_bwd(big[0], L_COLMAJOR, L_COLMAJOR, SV_STRIDED, true, 2, DT_F32, 1e-3, 14007);
  run_ln_bwd(big[1], L_COMPACT, L_PAD, SV_FLAT, false, 1, DT_F32, 1e-5, 14008);
  for (int d : kHalves) {
    run_ln(big[0], L_COMPACT, L_COMPACT, SV_FLAT, 1, d, 1e-5, 14100 + (uint64_t)d);
    run_ln_bwd(big[1], L_COMPACT, L_COMPACT, SV_FLAT, true, 0, d, 1e-5, 14200 + (uint64_t)d);
  }
  // A plan for rows of 2^26 elements: oneDNN's kernel would take ~540 MB of
  // code and seconds to generate (2^31 - 1 took more than 4 GB).
  int64_t shape[2] = {1, (int64_t)1 << 26};
  CTensor x;
  std::memset(&x, 0, sizeof x);
  x.device.device_type = CT_CPU;
  x.ndim = 2;
  x.dtype = ct_dtype_of_index(CT_DT_FLOAT32);
  x.shape = shape;
  CTensor y = x, st = x;
  int64_t one[1] = {1};
  st.ndim = 1;
  st.shape = one;
  const CTLayerNormDesc desc = ln_desc(1, 1e-5);
  const int64_t before = resident_bytes();
  size_t bytes = 0;
  REQUIRE(ct_layer_norm_workspace_size(&desc, &x, nullptr, nullptr, &y, nullptr, nullptr, &bytes) == CT_OK);
  REQUIRE(ct_layer_norm_backward_workspace_size(&desc, &x, &y, &st, &st, nullptr, &y, nullptr, nullptr, &bytes) ==
          CT_OK);
  const int64_t after = resident_bytes();
  INFO("resident before " << before << ", after " << after);
  CHECK(after - before < ((int64_t)64 << 20));
}

TEST_CASE("layer_norm family: bfloat16 and float16 (stats float32)", "[nn]") {
  const int layouts[] = {L_COMPACT, L_PAD, L_COLMAJOR};
  for (int d : kHalves)
    for (int c = 0; c < kNumLn; ++c)
      for (int li = 0; li < 3; ++li) {
        const uint64_t seed = 13000 + 1000 * (uint64_t)d + 10 * (uint64_t)c + (uint64_t)li;
        const int xl = layouts[li];
        run_ln(kLn[c], xl, xl, (c + li) % SV_NUM, (c + li) % 3, d, 1e-5, seed);
        run_ln(kLn[c], xl, L_COMPACT, SV_FLAT, 1, d, 1e-5, seed + 1);
        run_ln_bwd(kLn[c], xl, xl, SV_FLAT + (c + li) % 3, (c + li) % 2 == 0, (c + li) % 4, d, 1e-5, seed + 2);
      }
}
