// The OpenCL module through the C ABI: the caller's command queue as the
// stream, byte_offset into cl_mem buffers, temporary memory from the caller's
// allocator, deterministic reductions. (The generic suite already runs every
// op and dtype on opencl:0 against the CPU and the references.) Without an
// OpenCL device every case says so and checks nothing else.
#include <catch2/catch.hpp>
#include <ctensor/ctensor.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#ifdef CT_TEST_OPENCL
#include <CL/cl.h>

namespace {

const CTDevice kCL = {CT_OPENCL, 0};

bool have_opencl() {
  for (int32_t i = 0; i < ct_device_count(); ++i) {
    CTDeviceInfo info{};
    info.struct_size = sizeof info;
    if (ct_device_info(i, &info) == CT_OK && info.device.device_type == CT_OPENCL) return true;
  }
  WARN("no OpenCL device (libctensor_opencl not loaded, or no platform such as PoCL): the [opencl] cases check nothing");
  return false;
}

struct Buf {
  void* p = nullptr;
  explicit Buf(size_t bytes) { REQUIRE(ct_malloc(kCL, bytes, &p) == CT_OK); }
  ~Buf() { ct_free(kCL, p); }
};

CTensor f32(void* data, CTDevice dev, int64_t* shape, int32_t nd = 1, uint64_t off = 0) {
  return CTensor{data, dev, nd, {CT_FLOAT, 32, 1}, shape, nullptr, off};
}

// The context of a module buffer, and a new in-order queue of the caller's in it.
cl_command_queue own_queue(void* buf, cl_context* ctx_out = nullptr) {
  cl_context ctx = nullptr;
  cl_device_id dev = nullptr;
  REQUIRE(clGetMemObjectInfo(static_cast<cl_mem>(buf), CL_MEM_CONTEXT, sizeof ctx, &ctx, nullptr) == CL_SUCCESS);
  REQUIRE(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, nullptr) == CL_SUCCESS);
  cl_int e = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
  REQUIRE(e == CL_SUCCESS);
  if (ctx_out) *ctx_out = ctx;
  return q;
}

}  // namespace

TEST_CASE("opencl: ops run on the caller's command queue", "[opencl]") {
  if (!have_opencl()) return;
  int64_t n = 1000;
  std::vector<float> a((size_t)n), back((size_t)n, 0.0f);
  for (int64_t i = 0; i < n; ++i) a[(size_t)i] = 0.01f * (float)(i - 500);
  Buf x(n * 4), y(n * 4);
  cl_command_queue q = own_queue(x.p);
  CTensor h = f32(a.data(), {CT_CPU, 0}, &n), hb = f32(back.data(), {CT_CPU, 0}, &n);
  CTensor dx = f32(x.p, kCL, &n), dy = f32(y.p, kCL, &n);
  REQUIRE(ct_copy(&h, &dx, q) == CT_OK);
  REQUIRE(ct_unary(CT_OP_EXP, &dx, &dy, q) == CT_OK);
  REQUIRE(ct_copy(&dy, &hb, q) == CT_OK);
  REQUIRE(ct_synchronize(kCL, q) == CT_OK);  // the caller's queue, finished
  for (int64_t i = 0; i < n; ++i) CHECK(back[(size_t)i] == Approx(std::exp((double)a[(size_t)i])).epsilon(1e-6));
  clReleaseCommandQueue(q);
}

TEST_CASE("opencl: copies with a strided host side do not block; they land at the queue's ct_synchronize", "[opencl]") {
  if (!have_opencl()) return;
  // The caller's queue waits on a user event: a copy that waited for the
  // queue would not return until the watchdog opens it (after 20 s).
  int64_t shape[2] = {4, 6}, st[2] = {12, 2}, all = 48;
  std::vector<float> src(48), dst(48, -1.0f);
  for (int i = 0; i < 48; ++i) src[(size_t)i] = (float)i;
  Buf x(24 * 4);
  cl_context ctx = nullptr;
  cl_command_queue q = own_queue(x.p, &ctx);
  cl_int e = CL_SUCCESS;
  cl_event gate = clCreateUserEvent(ctx, &e);
  REQUIRE(e == CL_SUCCESS);
  REQUIRE(clEnqueueMarkerWithWaitList(q, 1, &gate, nullptr) == CL_SUCCESS);
  std::atomic<bool> opened{false}, by_watchdog{false}, done{false};
  const auto open = [&](bool watchdog) {
    if (!opened.exchange(true)) by_watchdog = watchdog, clSetUserEventStatus(gate, CL_COMPLETE);
  };
  std::thread watchdog([&] {
    for (int i = 0; i < 2000 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    open(true);
  });
  CTensor hs{src.data(), {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, shape, st, 0};      // every other column of (4, 12)
  CTensor hd{dst.data(), {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, shape, st, 4};      // the other columns
  CTensor dx{x.p, kCL, 2, {CT_FLOAT, 32, 1}, shape, nullptr, 0};
  const CTStatus up = ct_copy(&hs, &dx, q), down = ct_copy(&dx, &hd, q);
  const bool returned_before_the_gate = !opened;
  done = true;
  open(false);
  watchdog.join();
  CHECK(up == CT_OK);
  CHECK(down == CT_OK);
  CHECK(returned_before_the_gate);
  CHECK_FALSE(by_watchdog);
  REQUIRE(ct_synchronize(kCL, q) == CT_OK);
  for (int64_t i = 0; i < all; ++i) {
    const int64_t r = i / 12, c = i % 12;
    INFO("element (" << r << ", " << c << ")");
    CHECK(dst[(size_t)i] == (c % 2 == 1 ? src[(size_t)(r * 12 + c - 1)] : -1.0f));
  }
  clReleaseEvent(gate);
  clReleaseCommandQueue(q);
}

TEST_CASE("opencl: byte_offset selects the elements of a buffer; the rest stay as they were", "[opencl]") {
  if (!have_opencl()) return;
  int64_t all = 16, part = 4;
  std::vector<float> a(16), back(16, 0.0f);
  for (int i = 0; i < 16; ++i) a[(size_t)i] = (float)i;
  Buf x(64);
  CTensor h = f32(a.data(), {CT_CPU, 0}, &all), hb = f32(back.data(), {CT_CPU, 0}, &all);
  CTensor whole = f32(x.p, kCL, &all), view = f32(x.p, kCL, &part, 1, 5 * 4);
  REQUIRE(ct_copy(&h, &whole, nullptr) == CT_OK);
  REQUIRE(ct_unary(CT_OP_NEG, &view, &view, nullptr) == CT_OK);  // elements 5..8, in place
  REQUIRE(ct_copy(&whole, &hb, nullptr) == CT_OK);
  REQUIRE(ct_synchronize(kCL, nullptr) == CT_OK);
  for (int i = 0; i < 16; ++i) CHECK(back[(size_t)i] == ((i >= 5 && i < 9) ? -(float)i : (float)i));
}

namespace {
struct Counts {
  int allocs = 0, frees = 0;
  cl_context ctx = nullptr;
};
CTStatus count_alloc(void* user, CTDevice, size_t bytes, void*, void** ptr) {
  Counts* c = static_cast<Counts*>(user);
  cl_int e = CL_SUCCESS;
  cl_mem m = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, bytes ? bytes : 1, nullptr, &e);
  if (e != CL_SUCCESS) return CT_ERR_OUT_OF_MEMORY;
  ++c->allocs;
  *ptr = m;
  return CT_OK;
}
void count_free(void* user, CTDevice, void* ptr, void*) {
  ++static_cast<Counts*>(user)->frees;
  clReleaseMemObject(static_cast<cl_mem>(ptr));
}
}  // namespace

TEST_CASE("opencl: reduction partials come from the caller's allocator; sums are deterministic", "[opencl]") {
  if (!have_opencl()) return;
  int64_t n = 3 << 20, one = 1;
  std::vector<float> a((size_t)n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  double exact = 0;
  for (float& v : a) exact += (v = u(rng));
  Buf x(n * 4), s(4);
  Counts counts;
  cl_command_queue q = own_queue(x.p, &counts.ctx);
  clReleaseCommandQueue(q);
  CTensor h = f32(a.data(), {CT_CPU, 0}, &n), dx = f32(x.p, kCL, &n), ds = f32(s.p, kCL, &one, 0);
  REQUIRE(ct_copy(&h, &dx, nullptr) == CT_OK);
  const CTAllocator alloc{sizeof(CTAllocator), 0, count_alloc, count_free, &counts};
  REQUIRE(ct_set_allocator(CT_OPENCL, &alloc) == CT_OK);
  float r[3];
  for (float& v : r) {
    CTensor hs = f32(&v, {CT_CPU, 0}, &one, 0);
    REQUIRE(ct_reduce(CT_OP_SUM, &dx, nullptr, 0, 0, nullptr, 0, &ds, nullptr) == CT_OK);
    REQUIRE(ct_copy(&ds, &hs, nullptr) == CT_OK);
    REQUIRE(ct_synchronize(kCL, nullptr) == CT_OK);
  }
  REQUIRE(ct_set_allocator(CT_OPENCL, nullptr) == CT_OK);
  CHECK(counts.allocs >= 3);  // one temporary of partials per call (3M elements: two passes)
  CHECK(counts.frees == counts.allocs);
  CHECK(std::memcmp(&r[0], &r[1], 4) == 0);
  CHECK(std::memcmp(&r[0], &r[2], 4) == 0);
  CHECK(r[0] == Approx(exact).epsilon(1e-5));
}

namespace {

// Distance of got from the float64 value want in units of the float32 spacing
// at |want| (at least that of 2^-100: results below come from subnormal
// intermediates, as on the CPU); exact agreement on NaN, infinities and the
// sign of a zero.
double ulps(float got, double want) {
  const float wf = (float)want;  // beyond the float range: +-inf
  if (std::isnan(wf) || std::isinf(wf) || want == 0)
    return (std::isnan(wf) ? std::isnan(got) : got == wf && std::signbit(got) == std::signbit(wf)) ? 0 : 1e9;
  if (!std::isfinite(got)) return 1e9;
  const float w = (float)std::max(std::fabs(want), 0x1p-100);
  return std::fabs((double)got - want) / (double)(std::nextafter(w, INFINITY) - w);
}

// Every float class: random bit patterns over the whole range, a dense
// [-10, 10], tiny values, and the specials.
std::vector<float> sweep() {
  std::mt19937 rng(7);
  std::vector<float> v;
  for (int i = 0; i < 1 << 17; ++i) {
    uint32_t b = rng();
    float f;
    std::memcpy(&f, &b, 4);
    v.push_back(f);
  }
  std::uniform_real_distribution<float> mid(-10.0f, 10.0f), tiny(-1e-3f, 1e-3f);
  for (int i = 0; i < 1 << 16; ++i) v.push_back(mid(rng)), v.push_back(tiny(rng));
  const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 0.5f, 0.625f, -0.625f, 4.0f, 14.8f, 88.72f,
                      88.73f, -87.3f, -103.9f, -104.1f, 127.9f, 128.0f, -149.5f, 1e-40f, -1e-40f, 3.4e38f, -3.4e38f,
                      1.6312388e25f, 1.5707964f, 3.1415927f, 105615.0f, 1e6f, 16777216.0f, 1.0e-45f};
  v.insert(v.end(), std::begin(sp), std::end(sp));
  return v;
}

// op (with params, or binary with a constant second operand b) on opencl:0
// over the sweep; the largest distance from want, and where.
double worst(int32_t op, double (*want)(double, double), double p, bool binary, float* at) {
  std::vector<float> x = sweep(), got(x.size());
  int64_t n = (int64_t)x.size();
  Buf dx(n * 4), dy(n * 4), db(n * 4);
  std::vector<float> bv((size_t)n, (float)p);
  CTensor h = f32(x.data(), {CT_CPU, 0}, &n), hb = f32(bv.data(), {CT_CPU, 0}, &n), hy = f32(got.data(), {CT_CPU, 0}, &n);
  CTensor tx = f32(dx.p, kCL, &n), ty = f32(dy.p, kCL, &n), tb = f32(db.p, kCL, &n);
  REQUIRE(ct_copy(&h, &tx, nullptr) == CT_OK);
  if (binary) {
    REQUIRE(ct_copy(&hb, &tb, nullptr) == CT_OK);
    REQUIRE(ct_binary(op, &tx, &tb, &ty, nullptr) == CT_OK);
  } else if (!std::isnan(p)) {
    REQUIRE(ct_unary_param(op, &tx, &p, 1, &ty, nullptr) == CT_OK);
  } else {
    REQUIRE(ct_unary(op, &tx, &ty, nullptr) == CT_OK);
  }
  REQUIRE(ct_copy(&ty, &hy, nullptr) == CT_OK);
  REQUIRE(ct_synchronize(kCL, nullptr) == CT_OK);
  double w = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = ulps(got[i], want((double)x[i], p));
    if (e > w) w = e, *at = x[i];
  }
  return w;
}

double sigmoid_d(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }
double softplus_d(double x) { return std::isnan(x) ? x : std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

}  // namespace

TEST_CASE("opencl: float32 transcendentals, pow, atan2 and hypot are within a few ulp of float64 over every float, specials as C99",
          "[opencl]") {
  if (!have_opencl()) return;
  // The module computes these itself (straight-line code PoCL vectorises);
  // the bounds are the largest distances measured over this sweep, rounded up.
  struct Case {
    int32_t op;
    double (*want)(double, double);
    double bound, p;
    bool binary;
  };
  const double none = NAN;
  const Case cases[] = {
      {CT_OP_EXP, [](double x, double) { return std::exp(x); }, 1, none, false},
      {CT_OP_EXP2, [](double x, double) { return std::exp2(x); }, 1, none, false},
      {CT_OP_EXPM1, [](double x, double) { return std::expm1(x); }, 2, none, false},
      {CT_OP_LOG, [](double x, double) { return std::log(x); }, 1, none, false},
      {CT_OP_LOG1P, [](double x, double) { return std::log1p(x); }, 2, none, false},
      {CT_OP_LOG2, [](double x, double) { return std::log2(x); }, 2, none, false},
      {CT_OP_SIN, [](double x, double) { return std::sin(x); }, 1, none, false},
      {CT_OP_COS, [](double x, double) { return std::cos(x); }, 1, none, false},
      {CT_OP_TAN, [](double x, double) { return std::tan(x); }, 1, none, false},
      {CT_OP_TANH, [](double x, double) { return std::tanh(x); }, 2, none, false},
      {CT_OP_SIGMOID, [](double x, double) { return sigmoid_d(x); }, 3, none, false},
      {CT_OP_SILU, [](double x, double) { return x * sigmoid_d(x); }, 4, none, false},
      {CT_OP_SOFTPLUS, [](double x, double) { return softplus_d(x); }, 2, none, false},
      {CT_OP_ERF, [](double x, double) { return std::erf(x); }, 2, none, false},
      {CT_OP_GELU, [](double x, double) { return 0.5 * x * std::erfc(-x * 0.7071067811865476); }, 6, none, false},
      {CT_OP_POW_SCALAR, [](double x, double p) { return std::pow(x, p); }, 1, 1.5, false},
      {CT_OP_POW_SCALAR, [](double x, double p) { return std::pow(x, p); }, 1, -3, false},
      {CT_OP_POW_SCALAR, [](double x, double p) { return std::pow(x, p); }, 1, 0.5, false},
      {CT_OP_POW_SCALAR, [](double x, double p) { return std::pow(x, p); }, 1, 0, false},
      // integer and half-integer exponents up to 8 take the squaring path
      {CT_OP_POW_SCALAR, [](double x, double p) { return std::pow(x, p); }, 1, 2, false},
      {CT_OP_POW_SCALAR, [](double x, double p) { return std::pow(x, p); }, 1, -0.5, false},
      {CT_OP_POW_SCALAR, [](double x, double p) { return std::pow(x, p); }, 1, 7.5, false},
      {CT_OP_POW_SCALAR, [](double x, double p) { return std::pow(x, p); }, 1, -8, false},
      {CT_OP_POW_SCALAR, [](double x, double p) { return std::pow(x, p); }, 1, 8.25, false},
      {CT_OP_POW, [](double x, double p) { return std::pow(x, p); }, 1, 7, true},
      {CT_OP_POW, [](double x, double p) { return std::pow(x, p); }, 1, -0.25, true},
      {CT_OP_POW, [](double x, double p) { return std::pow(x, p); }, 1, INFINITY, true},
      {CT_OP_POW, [](double x, double p) { return std::pow(x, p); }, 1, NAN, true},
      {CT_OP_ATAN2, [](double y, double x) { return std::atan2(y, x); }, 1, 1, true},
      {CT_OP_ATAN2, [](double y, double x) { return std::atan2(y, x); }, 1, -2, true},
      {CT_OP_ATAN2, [](double y, double x) { return std::atan2(y, x); }, 1, 0.0, true},
      {CT_OP_ATAN2, [](double y, double x) { return std::atan2(y, x); }, 1, -0.0, true},
      {CT_OP_ATAN2, [](double y, double x) { return std::atan2(y, x); }, 1, -INFINITY, true},
      {CT_OP_ATAN2, [](double y, double x) { return std::atan2(y, x); }, 1, 1e-30, true},
      {CT_OP_HYPOT, [](double a, double b) { return std::hypot(a, b); }, 1, 3, true},
      {CT_OP_HYPOT, [](double a, double b) { return std::hypot(a, b); }, 1, 1e30, true},
      {CT_OP_HYPOT, [](double a, double b) { return std::hypot(a, b); }, 1, INFINITY, true},
      {CT_OP_HYPOT, [](double a, double b) { return std::hypot(a, b); }, 1, NAN, true},
  };
  for (const Case& c : cases) {
    CTOpInfo info{};
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(c.op, &info) == CT_OK);
    float at = 0;
    const double w = worst(c.op, c.want, c.p, c.binary, &at);
    INFO(info.name << " (p = " << c.p << "): " << w << " ulp at x = " << at);
    CHECK(w <= c.bound);
  }
}

namespace {

bool same_bits(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0; }

// One op on opencl:0 over host data: unary (b empty; p the parameter, or
// NaN for none) or binary. stride 2: x (and b) read through a view of every
// other element of a buffer twice as long (the strided kernels); in_place:
// out is x's buffer (or b's, in_place == 2).
std::vector<float> run_cl(int32_t op, const std::vector<float>& x, const std::vector<float>& b, double p, int stride,
                          int in_place = 0) {
  int64_t n = (int64_t)x.size(), n2 = n * stride, st[1] = {stride};
  std::vector<float> xs((size_t)n2, 0.0f), bs((size_t)n2, 0.0f), out((size_t)n, -7.0f);
  for (int64_t i = 0; i < n; ++i) xs[(size_t)(i * stride)] = x[(size_t)i], bs[(size_t)(i * stride)] = b.empty() ? 0 : b[(size_t)i];
  Buf dx(n2 * 4), db(n2 * 4), dy(n * 4);
  CTensor hx = f32(xs.data(), {CT_CPU, 0}, &n2), hb = f32(bs.data(), {CT_CPU, 0}, &n2), ho = f32(out.data(), {CT_CPU, 0}, &n);
  CTensor tx2 = f32(dx.p, kCL, &n2), tb2 = f32(db.p, kCL, &n2);
  REQUIRE(ct_copy(&hx, &tx2, nullptr) == CT_OK);
  REQUIRE(ct_copy(&hb, &tb2, nullptr) == CT_OK);
  CTensor tx = f32(dx.p, kCL, &n), tb = f32(db.p, kCL, &n), ty = f32(dy.p, kCL, &n);
  if (stride != 1) tx.strides = st, tb.strides = st;
  if (in_place == 1) ty = tx;
  if (in_place == 2) ty = tb;
  if (!b.empty()) REQUIRE(ct_binary(op, &tx, &tb, &ty, nullptr) == CT_OK);
  else if (!std::isnan(p)) REQUIRE(ct_unary_param(op, &tx, &p, 1, &ty, nullptr) == CT_OK);
  else REQUIRE(ct_unary(op, &tx, &ty, nullptr) == CT_OK);
  REQUIRE(ct_copy(&ty, &ho, nullptr) == CT_OK);
  REQUIRE(ct_synchronize(kCL, nullptr) == CT_OK);
  return out;
}

}  // namespace

TEST_CASE("opencl: chunked kernels (a fast loop, the general form only where needed) give the strided kernels' bits, "
          "at every length, with rare inputs anywhere, in place too", "[opencl]") {
  if (!have_opencl()) return;
  // sin, cos, tan, pow and mod take their general form only for rare
  // inputs (huge or non-finite arguments, quotients from 2^23 on), in a
  // second loop over the chunks that have one. The strided kernels compute
  // the general form everywhere: the same bits are expected.
  struct Case {
    int32_t op;
    double p;
    bool binary;
  };
  const double none = NAN;
  const Case cases[] = {{CT_OP_SIN, none, false}, {CT_OP_COS, none, false}, {CT_OP_TAN, none, false},
                        {CT_OP_POW_SCALAR, 1.5, false}, {CT_OP_POW_SCALAR, -3, false}, {CT_OP_POW, none, true},
                        {CT_OP_MOD, none, true}, {CT_OP_FLOOR_DIV, none, true}};
  const float rare_x[] = {3e9f, -1e30f, INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 1e-40f, 1073741824.0f, -1073741952.0f};
  const float rare_b[] = {1e-30f, 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-38f, -3e-39f};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> mid(-20.0f, 20.0f);
  for (const int64_t n : {1, 7, 1023, 1024, 1025, 3 * 1024 + 5}) {
    std::vector<float> x((size_t)n), b((size_t)n);
    for (int64_t i = 0; i < n; ++i) {
      x[(size_t)i] = mid(rng), b[(size_t)i] = mid(rng);
      // rare inputs every 97th element and at the chunk edges 1023, 1024
      if (i % 97 == 5 || i == 1023 || i == 1024) x[(size_t)i] = rare_x[(i / 97) % 10];
      if (i % 89 == 3 || i == 1024) b[(size_t)i] = rare_b[(i / 89) % 8];
    }
    for (const Case& c : cases) {
      CTOpInfo info{};
      info.struct_size = sizeof info;
      REQUIRE(ct_op_info(c.op, &info) == CT_OK);
      const std::vector<float> none_b;
      const std::vector<float>& bb = c.binary ? b : none_b;
      const std::vector<float> dense = run_cl(c.op, x, bb, c.p, 1), strided = run_cl(c.op, x, bb, c.p, 2);
      const std::vector<float> inplace = run_cl(c.op, x, bb, c.p, 1, 1);
      const std::vector<float> inplace_b = c.binary ? run_cl(c.op, x, bb, c.p, 1, 2) : dense;
      int64_t bad = 0, first = -1;
      for (int64_t i = 0; i < n; ++i) {
        const size_t k = (size_t)i;
        if (!same_bits(dense[k], strided[k]) || !same_bits(dense[k], inplace[k]) || !same_bits(dense[k], inplace_b[k]))
          if (bad++ == 0) first = i;
      }
      INFO(info.name << " (p = " << c.p << "), n = " << n << ": " << bad << " elements differ; the first at " << first
                     << (first >= 0 ? ": x = " + std::to_string(x[(size_t)first]) + ", b = " + std::to_string(b[(size_t)first]) +
                                          ", dense " + std::to_string(dense[(size_t)first]) + ", strided " +
                                          std::to_string(strided[(size_t)first]) + ", in place " +
                                          std::to_string(inplace[(size_t)first])
                                    : std::string()));
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("opencl: sin, cos and tan's fast reduction gives Payne-Hanek's bits over the floats up to 2^30", "[opencl]") {
  if (!have_opencl()) return;
  // The contiguous kernels reduce |x| <= 2^30 by Cody-Waite in double (the
  // strided ones by the table, everywhere): every 251st float32 bit pattern
  // below 2^30, both signs (checked exhaustively once, on every float up to
  // 2^31, when it was written)
  std::vector<float> x;
  for (uint32_t b = 1; b < 0x4e800000u; b += 251) {
    float f;
    std::memcpy(&f, &b, 4);
    x.push_back(f);
    x.push_back(-f);
  }
  for (const int32_t op : {CT_OP_SIN, CT_OP_COS, CT_OP_TAN}) {
    const std::vector<float> dense = run_cl(op, x, {}, NAN, 1), strided = run_cl(op, x, {}, NAN, 2);
    int64_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_bits(dense[i], strided[i]) && bad++ < 3)
        UNSCOPED_INFO("op " << op << " at x = " << x[i] << ": fast " << dense[i] << ", Payne-Hanek " << strided[i]);
    CHECK(bad == 0);
  }
}

TEST_CASE("opencl: float32 floor_div and mod give the CPU backend's bits, quotients on and next to integers included",
          "[opencl]") {
  if (!have_opencl()) return;
  // The quotient's floor comes from t = a / b rounded, corrected by the
  // remainder's sign: a = k b and its neighbours are where t rounds onto an
  // integer the exact quotient does not reach.
  const float bs[] = {0.1f, 0.3f, 3.0f, -0.7f, 1e-3f, 7.0f, -2.5f, 1e-30f, 1e30f, INFINITY, -INFINITY, 0.0f, -0.0f, NAN};
  std::vector<float> a, b;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> mid(-1000.0f, 1000.0f);
  for (const float bv : bs) {
    for (int k = -40; k <= 40; ++k) {
      const float m = (float)k * bv;
      for (const float av : {m, std::nextafter(m, INFINITY), std::nextafter(m, -INFINITY), mid(rng)}) a.push_back(av), b.push_back(bv);
    }
    for (const float av : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f, 16777216.0f, 8388609.0f})
      a.push_back(av), b.push_back(bv);
  }
  int64_t n = (int64_t)a.size();
  for (const int32_t op : {CT_OP_FLOOR_DIV, CT_OP_MOD}) {
    std::vector<float> cpu((size_t)n);
    CTensor ha = f32(a.data(), {CT_CPU, 0}, &n), hb = f32(b.data(), {CT_CPU, 0}, &n), hc = f32(cpu.data(), {CT_CPU, 0}, &n);
    REQUIRE(ct_binary(op, &ha, &hb, &hc, nullptr) == CT_OK);
    const std::vector<float> cl = run_cl(op, a, b, NAN, 1);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = (size_t)i;
      if (same_bits(cpu[k], cl[k])) continue;
      if (bad++ < 5) UNSCOPED_INFO((op == CT_OP_MOD ? "mod(" : "floor_div(") << a[k] << ", " << b[k] << "): CPU " << cpu[k] << ", OpenCL " << cl[k]);
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("opencl: float8 casts give the CPU's bits: every code decoded, float32 encoded to nearest even with and "
          "without saturation, float64 and int32 rounded once", "[opencl]") {
  if (!have_opencl()) return;
  // float32 inputs: every 4099th bit pattern (all classes), the float8
  // formats' ties and overflow edges come from a dense [-600, 600] and
  // values around 2^-10..2^-20 (their subnormals)
  std::vector<float> xf;
  for (uint64_t b = 0; b < (1ull << 32); b += 4099) {
    float f;
    const uint32_t u = (uint32_t)b;
    std::memcpy(&f, &u, 4);
    xf.push_back(f);
  }
  for (int i = -60000; i <= 60000; ++i) xf.push_back((float)i * 0.01f);
  for (int i = 1; i < 20000; ++i) xf.push_back(std::ldexp((float)i, -30)), xf.push_back(-std::ldexp((float)i, -27));
  const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 448.0f, 464.0f, 480.0f, 57344.0f, 61440.0f, 240.0f, 248.0f};
  xf.insert(xf.end(), std::begin(sp), std::end(sp));
  int64_t n = (int64_t)xf.size();
  std::vector<double> xd(xf.begin(), xf.end());
  for (double& v : xd) v = v * (1.0 + 0x1p-30);  // off the float32 grid: a second rounding would show
  std::vector<int32_t> xi;
  for (int64_t i = 0; i < n; ++i) xi.push_back((int32_t)((i * 2654435761u) % 200001) - 100000);
  Buf dsrc(n * 8), dout(n);
  for (int32_t f8dt = CT_DT_FLOAT8_E4M3FN; f8dt <= CT_DT_FLOAT8_E5M2FNUZ; ++f8dt) {
    const CTDataType t8 = ct_dtype_of_index(f8dt);
    if (ct_op_supported(CT_OP_CAST, kCL, t8) != CT_OK) {
      WARN("float8 dtype " << f8dt << " is not supported on opencl:0 here (" << ct_last_error() << "): checked nothing");
      continue;
    }
    // decode: all 256 codes to float32
    {
      int64_t m = 256;
      std::vector<uint8_t> codes(256);
      for (int i = 0; i < 256; ++i) codes[(size_t)i] = (uint8_t)i;
      std::vector<float> cpu(256), cl(256);
      CTensor hc{codes.data(), {CT_CPU, 0}, 1, t8, &m, nullptr, 0}, dc{dout.p, kCL, 1, t8, &m, nullptr, 0};
      CTensor hcpu = f32(cpu.data(), {CT_CPU, 0}, &m), hcl = f32(cl.data(), {CT_CPU, 0}, &m), dres = f32(dsrc.p, kCL, &m);
      REQUIRE(ct_cast(&hc, &hcpu, nullptr) == CT_OK);
      REQUIRE(ct_copy(&hc, &dc, nullptr) == CT_OK);
      REQUIRE(ct_cast(&dc, &dres, nullptr) == CT_OK);
      REQUIRE(ct_copy(&dres, &hcl, nullptr) == CT_OK);
      REQUIRE(ct_synchronize(kCL, nullptr) == CT_OK);
      int bad = 0;
      for (int i = 0; i < 256; ++i)
        if (!same_bits(cpu[(size_t)i], cl[(size_t)i]) && bad++ < 3)
          UNSCOPED_INFO("dtype " << f8dt << ": code " << i << " decodes to " << cl[(size_t)i] << ", CPU " << cpu[(size_t)i]);
      CHECK(bad == 0);
    }
    // encode from float32 (both modes), float64 and int32
    for (int src = 0; src < 4; ++src) {
      const int32_t mode = src == 1 ? CT_CAST_SATURATE : CT_CAST_DEFAULT;
      const void* host = src == 2 ? (const void*)xd.data() : src == 3 ? (const void*)xi.data() : (const void*)xf.data();
      const CTDataType ts = src == 2 ? CTDataType{CT_FLOAT, 64, 1} : src == 3 ? CTDataType{CT_INT, 32, 1} : CTDataType{CT_FLOAT, 32, 1};
      std::vector<uint8_t> cpu((size_t)n), cl((size_t)n);
      CTensor hs{const_cast<void*>(host), {CT_CPU, 0}, 1, ts, &n, nullptr, 0}, ds{dsrc.p, kCL, 1, ts, &n, nullptr, 0};
      CTensor hcpu{cpu.data(), {CT_CPU, 0}, 1, t8, &n, nullptr, 0}, hcl{cl.data(), {CT_CPU, 0}, 1, t8, &n, nullptr, 0};
      CTensor d8{dout.p, kCL, 1, t8, &n, nullptr, 0};
      REQUIRE(ct_cast_ex(&hs, &hcpu, mode, nullptr) == CT_OK);
      REQUIRE(ct_copy(&hs, &ds, nullptr) == CT_OK);
      REQUIRE(ct_cast_ex(&ds, &d8, mode, nullptr) == CT_OK);
      REQUIRE(ct_copy(&d8, &hcl, nullptr) == CT_OK);
      REQUIRE(ct_synchronize(kCL, nullptr) == CT_OK);
      int64_t bad = 0;
      for (int64_t i = 0; i < n; ++i)
        if (cpu[(size_t)i] != cl[(size_t)i] && bad++ < 3)
          UNSCOPED_INFO("dtype " << f8dt << ", source " << (src == 2 ? "float64" : src == 3 ? "int32" : "float32")
                                 << (mode ? " (saturating)" : "") << ": element " << i << " gives code " << (int)cl[(size_t)i]
                                 << ", CPU " << (int)cpu[(size_t)i]);
      CHECK(bad == 0);
    }
  }
}


#else

TEST_CASE("opencl: the module was not built here", "[opencl]") {
  WARN("libctensor_opencl was not built (no OpenCL headers and ICD loader): the [opencl] cases check nothing");
}

#endif
