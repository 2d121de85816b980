// test_library.cpp — plugin libraries through the public API (ctensor_library.h):
// the example plugin (examples/plugin_custom_op, plain C99) loads, says what
// it is, and its binary op bias_gelu runs by id through ct_binary
// (broadcasting, any strides, in place, unaligned data) and through
// ct_op_reference; unloading makes its ops answer CT_ERR_NOT_FOUND and a
// reload gives them their old ids; a file loads once. The test plugins
// (tests/plugins) check what a load does with a plugin that is no library,
// has no entry point, speaks another major ABI, fails halfway, takes a name
// already taken, or is of an older or newer minor: each failure has its
// status and message and leaves the registries exactly as they were (an
// example on a unary op too). A plugin kernel's error is the call's. Calls
// race unloads and reloads, and 10,000 load / call / unload cycles run
// clean (under AddressSanitizer in the sanitizer build: scripts/test.sh).
//
// [library_nn]: the example's NN-kind op gemm_relu (custom descriptor,
// output_shape callback, plans with a workspace, a plan outliving its
// library, ct_nn and plans racing unloads, its examples through
// ct_op_example as valid ct_nn calls); ct_op_example's argument checks, and
// a test plugin's wrong examples as clear errors. It needs NN-kind plugin
// ops in core: against a library whose register_op refuses them, the plugin
// loads without gemm_relu and these cases fail at their first REQUIRE.
#include <catch2/catch.hpp>

#include <ctensor/plugin.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <unistd.h>

#include "../examples/plugin_custom_op/custom_ops.h"
#include "test_util.h"

using namespace ctt;

namespace {

const CTDevice kCpu = {CT_CPU, 0};
const CTDevice kExt = {CT_EXT_DEV, 0};

// ---- loading ---------------------------------------------------------------

std::string status_and_message(CTStatus s) { return std::string(ct_status_string(s)) + ": " + last_error(); }

// A library loaded for the scope of a test (unloaded at its end unless the test did).
struct Loaded {
  CTLibrary* lib = nullptr;
  explicit Loaded(const char* path) {
    const CTStatus s = ct_library_load(path, &lib);
    INFO(path << ": " << status_and_message(s));
    REQUIRE(s == CT_OK);
    REQUIRE(lib != nullptr);
  }
  Loaded(const Loaded&) = delete;
  Loaded& operator=(const Loaded&) = delete;
  ~Loaded() {
    if (lib) ct_library_unload(lib);
  }
  void unload() {
    REQUIRE(ct_library_unload(lib) == CT_OK);
    lib = nullptr;
  }
  CTLibraryInfo info() const {
    CTLibraryInfo i;
    std::memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    REQUIRE(ct_library_info(lib, &i) == CT_OK);
    return i;
  }
};

// Loads path again right after its unload. While a plan of the previous
// load still lives, the file is still in the process and the load is
// refused (its init would run twice over live state): wait for it. (Calls
// never hold it: ct_library_unload waits for them.)
CTStatus load_again(const char* path, CTLibrary** lib, int* waits) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const CTStatus s = ct_library_load(path, lib);
    if (s != CT_ERR_INVALID_ARGUMENT || !contains(last_error(), "is already in this process") ||
        std::chrono::steady_clock::now() - t0 > std::chrono::seconds(5))
      return s;
    ++*waits;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

int32_t find_op(const char* name) {
  int32_t op = -1;
  const CTStatus s = ct_op_find(name, &op);
  INFO(name << ": " << status_and_message(s));
  REQUIRE(s == CT_OK);
  return op;
}

bool op_exists(const char* name) {
  int32_t op = -1;
  return ct_op_find(name, &op) == CT_OK;
}

void expect_status(CTStatus got, CTStatus want, std::vector<std::string> subs) {
  const std::string msg = last_error();
  INFO("status " << ct_status_string(got) << ", want " << ct_status_string(want) << "; message: \"" << msg << "\"");
  CHECK(got == want);
  for (const std::string& s : subs) {
    INFO("substring: " << s);
    CHECK(contains(msg, s));
  }
}

// Everything a load may change, to check that a failed one changed none of
// it: the op ids and what each answers, which device runs which built-in op
// for which dtype (and the reason when none does), the devices and the
// loaded libraries.
struct Registry {
  int32_t op_count = 0, device_count = 0, library_count = 0;
  std::vector<std::string> ops;        // per id: name and facts, or the NOT_FOUND message
  std::vector<std::string> supported;  // per built-in op x dtype x device: status and message

  static Registry now() {
    Registry r;
    r.op_count = ct_op_count();
    r.device_count = ct_device_count();
    r.library_count = ct_library_count();
    for (int32_t op = 0; op < r.op_count; ++op) {
      CTOpInfo info;
      std::memset(&info, 0, sizeof info);
      info.struct_size = sizeof info;
      const CTStatus s = ct_op_info(op, &info);
      r.ops.push_back(s == CT_OK ? std::string(info.name) + "/" + std::to_string(info.kind) + "/" + info.tensor_names
                                 : status_and_message(s));
    }
    for (int32_t op = 0; op < (int32_t)CT_OP_END_; ++op)
      for (int d = 0; d < DT_COUNT; ++d)
        for (CTDevice dev : {kCpu, kExt}) r.supported.push_back(status_and_message(ct_op_supported(op, dev, dtype(d).dt)));
    return r;
  }
};

void require_same(const Registry& before, const Registry& after) {
  CHECK(after.op_count == before.op_count);
  CHECK(after.device_count == before.device_count);
  CHECK(after.library_count == before.library_count);
  REQUIRE(after.ops.size() == before.ops.size());
  for (size_t i = 0; i < before.ops.size(); ++i) {
    INFO("op id " << i);
    CHECK(after.ops[i] == before.ops[i]);
  }
  REQUIRE(after.supported.size() == before.supported.size());
  size_t differ = 0;
  for (size_t i = 0; i < before.supported.size(); ++i)
    if (after.supported[i] != before.supported[i]) {
      if (differ++ < 5) {
        INFO("ct_op_supported of op " << i / (DT_COUNT * 2) << " dtype " << dtype((int)(i / 2 % DT_COUNT)).name
                                      << (i % 2 ? " on the loopback device" : " on the CPU"));
        CHECK(after.supported[i] == before.supported[i]);
      }
    }
  CHECK(differ == 0);
}

// A built-in op still works: add of two float32 vectors.
void builtin_add_works() {
  float a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, o[3] = {0, 0, 0};
  int64_t n[1] = {3};
  CTensor ta = {a, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
  CTensor tb = {b, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
  CTensor to = {o, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
  REQUIRE(ct_binary(CT_OP_ADD, &ta, &tb, &to, nullptr) == CT_OK);
  CHECK(o[0] == 11);
  CHECK(o[1] == 22);
  CHECK(o[2] == 33);
}

// ---- bias_gelu's expected values -----------------------------------------------

// gelu(x) = x * Phi(x) = x / 2 * (1 + erf(x / sqrt 2)) = x / 2 * erfc(-x / sqrt 2).
double gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

// The sum as the dtype stores it (float32: rounded to float), then gelu.
double want_bias_gelu(double a, double b, int d) {
  const double x = d == DT_F32 ? (double)((float)a + (float)b) : a + b;
  return gelu(x);
}

HostTensor random_tensor(int d, std::vector<int64_t> shape, int layout, uint64_t seed, double lo = -6, double hi = 6) {
  HostTensor t = make_layout(d, shape, layout);
  Rng rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, rng.uniform(lo, hi));
  return t;
}

// NumPy broadcasting of a's and b's shapes (the test's own, for expectations).
std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> s(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t ea = i + a.size() >= n ? a[i + a.size() - n] : 1;
    const int64_t eb = i + b.size() >= n ? b[i + b.size() - n] : 1;
    s[i] = ea == 1 ? eb : ea;
  }
  return s;
}

// The element of t (of its own shape) that out's element `lin` reads under broadcasting.
double broadcast_get(const HostTensor& t, const std::vector<int64_t>& out_shape, int64_t lin) {
  std::vector<int64_t> coord(out_shape.size());
  for (size_t i = out_shape.size(); i-- > 0;) {
    coord[i] = lin % out_shape[i];
    lin /= out_shape[i];
  }
  int64_t tl = 0;
  const size_t lead = out_shape.size() - t.shape.size();
  for (size_t i = 0; i < t.shape.size(); ++i) tl = tl * t.shape[i] + (t.shape[i] == 1 ? 0 : coord[lead + i]);
  return t.get(tl);
}

// |got - want| within `ulps` units in the last place of want in dtype d;
// for float64 times max(1, x^2) where x = want_x[i] (when given): gelu's
// erfc(-x / sqrt 2) turns the rounding of its argument into an error ~x^2
// times larger in the negative tail, in any double implementation.
void check_close(const HostTensor& out, const std::vector<double>& want, int d, double ulps,
                 const std::vector<double>& want_x = {}) {
  REQUIRE((int64_t)want.size() == out.numel());
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double x = want_x.empty() ? 0.0 : want_x[(size_t)i];
    const double scale = d == DT_F64 ? std::max(1.0, x * x) : 1.0;
    const double got = out.get(i), err = std::fabs(got - want[(size_t)i]) / ulp_of(want[(size_t)i], d) / scale;
    worst = std::max(worst, err);
    if (!(err <= ulps) && bad++ < 5) {
      INFO("element " << i << ": got " << got << ", want " << want[(size_t)i]);
      CHECK(err <= ulps);
    }
  }
  INFO("worst error " << worst << " ulp");
  CHECK(bad == 0);
}

// Runs bias_gelu on a and b into out (of the broadcast shape) and checks it.
void run_bias_gelu(int32_t op, HostTensor& a, HostTensor& b, HostTensor& out) {
  const int d = out.d;
  std::vector<double> want((size_t)out.numel()), xs((size_t)out.numel());
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double x = broadcast_get(a, out.shape, i), y = broadcast_get(b, out.shape, i);
    want[(size_t)i] = want_bias_gelu(x, y, d);
    xs[(size_t)i] = x + y;
  }
  CTensor ta = a.view(), tb = b.view(), to = out.view();
  const CTStatus s = ct_binary(op, &ta, &tb, &to, nullptr);
  INFO(status_and_message(s));
  REQUIRE(s == CT_OK);
  check_close(out, want, d, d == DT_F32 ? 2 : 4, xs);
}

// The paths of the plugins (compile definitions from tests/CMakeLists.txt).
const char* const kCustomOps = CT_TEST_CUSTOM_OPS;

}  // namespace

// ---------------------------------------------------------------------------

TEST_CASE("library: the example plugin loads and says what it is and brought", "[library]") {
  const int32_t ops_before = ct_op_count(), libs_before = ct_library_count();
  const Registry before = Registry::now();
  Loaded l(kCustomOps);
  {
    // Every built-in op x dtype runs where it ran, and a refusal keeps the
    // device's own reason: the plugin's CPU table, asked after the built-in
    // ones, says no to what is not its own without replacing their message.
    const Registry after = Registry::now();
    REQUIRE(after.supported.size() == before.supported.size());
    size_t differ = 0;
    for (size_t i = 0; i < before.supported.size(); ++i)
      if (after.supported[i] != before.supported[i] && differ++ < 3) {
        INFO("op " << i / (DT_COUNT * 2) << " dtype " << dtype((int)(i / 2 % DT_COUNT)).name);
        CHECK(after.supported[i] == before.supported[i]);
      }
    CHECK(differ == 0);
  }
  const CTLibraryInfo info = l.info();
  CHECK(info.abi_version == CT_PLUGIN_ABI_VERSION);
  CHECK(std::string(info.name) == CUSTOM_OPS_NAME);
  CHECK(std::string(info.version) == CUSTOM_OPS_VERSION);
  CHECK(std::filesystem::equivalent(info.path, kCustomOps));
  CHECK(info.num_ops == 1 + (op_exists(CUSTOM_OPS_GEMM_RELU) ? 1 : 0));
  CHECK(info.num_devices == 0);
  CHECK(info.num_kernel_tables == 1);
  CHECK(info.loaded == 1);

  // Its ops come after every op there was; the library is the last loaded.
  const int32_t op = find_op(CUSTOM_OPS_BIAS_GELU);
  CHECK(op >= (int32_t)CT_OP_END_);
  CHECK(ct_op_count() >= ops_before);
  CHECK(ct_library_count() == libs_before + 1);
  CTLibrary* last = nullptr;
  REQUIRE(ct_library_get(ct_library_count() - 1, &last) == CT_OK);
  CHECK(last == l.lib);
  expect_status(ct_library_get(ct_library_count(), &last), CT_ERR_NOT_FOUND, {"ct_library_get"});

  SECTION("a caller's smaller CTLibraryInfo is filled only as far as it reaches") {
    CTLibraryInfo small;
    std::memset(&small, 0x5A, sizeof small);
    small.struct_size = (uint32_t)offsetof(CTLibraryInfo, version);
    REQUIRE(ct_library_info(l.lib, &small) == CT_OK);
    CHECK(std::string(small.name) == CUSTOM_OPS_NAME);
    CHECK((unsigned char)small.version[0] == 0x5A);
    small.struct_size = (uint32_t)offsetof(CTLibraryInfo, name) - 1;
    expect_status(ct_library_info(l.lib, &small), CT_ERR_INVALID_ARGUMENT, {"ct_library_info"});
    expect_status(ct_library_info(nullptr, &small), CT_ERR_INVALID_ARGUMENT, {"ct_library_info"});
  }
  SECTION("bias_gelu's facts are the ones it registered") {
    CTOpInfo oi;
    std::memset(&oi, 0, sizeof oi);
    oi.struct_size = sizeof oi;
    REQUIRE(ct_op_info(op, &oi) == CT_OK);
    CHECK(oi.op == op);
    CHECK(std::string(oi.name) == "bias_gelu");
    CHECK(contains(oi.summary, "gelu(a + b)"));
    CHECK(oi.kind == CT_KIND_BINARY);
    CHECK(oi.category == CT_CATEGORY_BROADCAST_REDUCE);
    CHECK(oi.num_inputs == 2);
    CHECK(oi.num_params == 0);
    CHECK(oi.num_tensors == 3);
    CHECK(oi.num_outputs == 1);
    CHECK(std::string(oi.tensor_names) == "a,b,out");
    CHECK(oi.inplace == 1);
    CHECK(oi.output_dtype == CT_OUTPUT_SAME);
    CHECK(oi.shape_rule == CT_SHAPE_BROADCAST);
    CHECK(oi.desc_type == CT_DESC_NONE);
    CHECK(oi.dtype_mask == ((1u << CT_DT_FLOAT32) | (1u << CT_DT_FLOAT64)));
    CHECK(std::string(oi.dtype_rule) == "float32 and float64 only");
  }
  SECTION("nothing but ct_plugin_init is needed: the host table is static and the same for every plugin") {
    CHECK(ct_plugin_host() == ct_plugin_host());
    CHECK(ct_plugin_host()->struct_size == sizeof(CTHost));
    CHECK(ct_plugin_host()->abi_version == CT_PLUGIN_ABI_VERSION);
  }
}

TEST_CASE("library: bias_gelu runs by id through ct_binary", "[library]") {
  Loaded l(kCustomOps);
  const int32_t op = find_op(CUSTOM_OPS_BIAS_GELU);

  SECTION("same shapes, compact, float32 and float64") {
    for (int d : {DT_F32, DT_F64}) {
      INFO(dtype(d).name);
      HostTensor a = random_tensor(d, {7, 129}, 0, 1), b = random_tensor(d, {7, 129}, 0, 2, -1, 1);
      HostTensor out = HostTensor::compact(d, {7, 129});
      run_bias_gelu(op, a, b, out);
    }
  }
  SECTION("values across gelu's range, the far negative tail included") {
    for (int d : {DT_F32, DT_F64}) {
      INFO(dtype(d).name);
      HostTensor a = HostTensor::compact(d, {2001}), b = HostTensor::compact(d, {1});
      for (int64_t i = 0; i < 2001; ++i) a.set(i, -10.0 + 0.01 * (double)i);
      b.set(0, 0.25);
      HostTensor out = HostTensor::compact(d, {2001});
      run_bias_gelu(op, a, b, out);
    }
  }
  SECTION("NumPy broadcasting") {
    const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
        {{2, 3, 4}, {4}}, {{3, 1}, {1, 4}}, {{5, 1, 3}, {4, 1}}, {{}, {}}, {{}, {2, 3}}, {{6, 1}, {6, 5}},
        {{2, 1, 3, 1}, {1, 4, 1, 5}}};
    for (int d : {DT_F32, DT_F64})
      for (const auto& c : cases) {
        INFO(dtype(d).name << " " << shape_str(c.first) << " + " << shape_str(c.second));
        HostTensor a = random_tensor(d, c.first, 0, 3), b = random_tensor(d, c.second, 0, 4, -1, 1);
        HostTensor out = HostTensor::compact(d, broadcast_shape(c.first, c.second));
        run_bias_gelu(op, a, b, out);
      }
  }
  SECTION("any strides: column-major, negative, padded, stride 0") {
    for (int d : {DT_F32, DT_F64})
      for (int la = 0; la <= 4; ++la)
        for (int lb = 0; lb <= 4; ++lb)
          for (int lo : {0, 1, 2, 3}) {
            INFO(dtype(d).name << " layouts a=" << la << " b=" << lb << " out=" << lo);
            HostTensor a = random_tensor(d, {3, 4, 5}, la, 5), b = random_tensor(d, {3, 4, 5}, lb, 6, -1, 1);
            if (la == 4) a = random_tensor(d, {3, 4, 5}, 4, 5);  // a stride-0 outer dim: every [i] the same
            HostTensor out = make_layout(d, {3, 4, 5}, lo);
            out.fill_bytes(0x5A);
            const std::vector<char> cov = covered(out);
            const std::vector<unsigned char> before = out.bytes();
            run_bias_gelu(op, a, b, out);
            // Bytes of out's buffer that belong to no element are untouched.
            const std::vector<unsigned char> after = out.bytes();
            size_t stray = 0;
            for (size_t i = 0; i < after.size(); ++i) stray += !cov[i] && after[i] != before[i];
            CHECK(stray == 0);
          }
  }
  SECTION("broadcast inputs at any strides") {
    HostTensor a = random_tensor(DT_F32, {4, 1, 6}, 2, 7), b = random_tensor(DT_F32, {5, 1}, 1, 8, -1, 1);
    HostTensor out = make_layout(DT_F32, {4, 5, 6}, 3);
    run_bias_gelu(op, a, b, out);
  }
  SECTION("in place: out is exactly a") {
    for (int d : {DT_F32, DT_F64}) {
      HostTensor a = random_tensor(d, {4, 33}, 3, 9), b = random_tensor(d, {33}, 0, 10, -1, 1);
      std::vector<double> want((size_t)a.numel()), xs((size_t)a.numel());
      for (int64_t i = 0; i < a.numel(); ++i) {
        want[(size_t)i] = want_bias_gelu(a.get(i), b.get(i % 33), d);
        xs[(size_t)i] = a.get(i) + b.get(i % 33);
      }
      CTensor ta = a.view(), tb = b.view();
      REQUIRE(ct_binary(op, &ta, &tb, &ta, nullptr) == CT_OK);
      check_close(a, want, d, d == DT_F32 ? 2 : 4, xs);
    }
  }
  SECTION("unaligned data (a NumPy array at an odd address)") {
    std::vector<unsigned char> buf(3 * 64 * sizeof(float) + 16);
    float av[64], bv[64];
    Rng rng(11);
    for (int i = 0; i < 64; ++i) {
      av[i] = (float)rng.uniform(-4, 4);
      bv[i] = (float)rng.uniform(-1, 1);
    }
    std::memcpy(buf.data() + 1, av, sizeof av);
    std::memcpy(buf.data() + 1 + sizeof av, bv, sizeof bv);
    int64_t n[1] = {64};
    CTensor ta = {buf.data(), kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 1};
    CTensor tb = {buf.data(), kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 1 + sizeof av};
    CTensor to = {buf.data(), kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 1 + 2 * sizeof av};
    REQUIRE(ct_binary(op, &ta, &tb, &to, nullptr) == CT_OK);
    for (int i = 0; i < 64; ++i) {
      float got;
      std::memcpy(&got, buf.data() + 1 + 2 * sizeof av + 4 * i, 4);
      const double want = want_bias_gelu(av[i], bv[i], DT_F32);
      CHECK(std::fabs(got - want) <= 2 * ulp_of(want, DT_F32));
    }
  }
  SECTION("core validates for the plugin: dtypes, shapes, entry point, devices; out untouched") {
    HostTensor a = random_tensor(DT_F32, {2, 3}, 0, 12), b = random_tensor(DT_F32, {2, 3}, 0, 13);
    HostTensor out = HostTensor::compact(DT_F32, {2, 3});
    out.fill_bytes(0x5A);
    const std::vector<unsigned char> before = out.bytes();
    CTensor ta = a.view(), tb = b.view(), to = out.view();
    HostTensor ai = HostTensor::compact(DT_I32, {2, 3}), oi = HostTensor::compact(DT_I32, {2, 3});
    CTensor tai = ai.view(), toi = oi.view();
    expect_status(ct_binary(op, &tai, &tai, &toi, nullptr), CT_ERR_UNSUPPORTED,
                  {"ct_binary", "bias_gelu is not defined for int32", "float32 and float64 only"});
    HostTensor o64 = HostTensor::compact(DT_F64, {2, 3});
    CTensor to64 = o64.view();
    expect_status(ct_binary(op, &ta, &tb, &to64, nullptr), CT_ERR_DTYPE_MISMATCH, {"ct_binary", "out"});
    HostTensor b4 = random_tensor(DT_F32, {4}, 0, 14);
    CTensor tb4 = b4.view();
    expect_status(ct_binary(op, &ta, &tb4, &to, nullptr), CT_ERR_SHAPE_MISMATCH, {"ct_binary"});
    expect_status(ct_unary(op, &ta, &to, nullptr), CT_ERR_INVALID_ARGUMENT, {"ct_unary", "bias_gelu", "ct_binary"});
    CHECK(out.bytes() == before);
    CHECK(ct_op_supported(op, kCpu, dtype(DT_F32).dt) == CT_OK);
    CHECK(ct_op_supported(op, kCpu, dtype(DT_F64).dt) == CT_OK);
    expect_status(ct_op_supported(op, kCpu, dtype(DT_F16).dt), CT_ERR_UNSUPPORTED, {"not defined for float16"});
    // The loopback device has no kernel for it: its own "no".
    expect_status(ct_op_supported(op, kExt, dtype(DT_F32).dt), CT_ERR_UNSUPPORTED, {"loopback"});
  }
  SECTION("empty tensors run nothing") {
    HostTensor a = HostTensor::compact(DT_F32, {0, 3}), b = HostTensor::compact(DT_F32, {3});
    HostTensor out = HostTensor::compact(DT_F32, {0, 3});
    CTensor ta = a.view(), tb = b.view(), to = out.view();
    CHECK(ct_binary(op, &ta, &tb, &to, nullptr) == CT_OK);
  }
}

TEST_CASE("library: ct_op_reference runs the plugin's reference", "[library]") {
  Loaded l(kCustomOps);
  const int32_t op = find_op(CUSTOM_OPS_BIAS_GELU);
  for (int d : {DT_F32, DT_F64}) {
    INFO(dtype(d).name);
    HostTensor a = random_tensor(d, {3, 1, 5}, 2, 20), b = random_tensor(d, {4, 1}, 1, 21, -1, 1);
    HostTensor out = HostTensor::compact(d, {3, 4, 5});
    CTensor ta = a.view(), tb = b.view(), to = out.view();
    const CTensor* t[3] = {&ta, &tb, &to};
    const CTStatus s = ct_op_reference(op, t, 3, nullptr, nullptr);
    INFO(status_and_message(s));
    REQUIRE(s == CT_OK);
    std::vector<double> want((size_t)out.numel()), xs((size_t)out.numel());
    for (int64_t i = 0; i < out.numel(); ++i) {
      const double x = broadcast_get(a, out.shape, i), y = broadcast_get(b, out.shape, i);
      want[(size_t)i] = want_bias_gelu(x, y, d);
      xs[(size_t)i] = x + y;
    }
    check_close(out, want, d, d == DT_F32 ? 1 : 4, xs);  // double loops: float32 within its rounding
  }
  // The reference refuses what it cannot compute, with its message.
  HostTensor a = random_tensor(DT_F32, {3}, 0, 22), b = random_tensor(DT_F32, {4}, 0, 23);
  HostTensor out = HostTensor::compact(DT_F32, {3});
  CTensor ta = a.view(), tb = b.view(), to = out.view();
  const CTensor* t[3] = {&ta, &tb, &to};
  expect_status(ct_op_reference(op, t, 3, nullptr, nullptr), CT_ERR_SHAPE_MISMATCH, {"does not broadcast"});
  expect_status(ct_op_reference(op, t, 2, nullptr, nullptr), CT_ERR_INVALID_ARGUMENT, {"ct_op_reference", "3"});
  // Built-in ops have their references in the tool, not in the library.
  const CTensor* t2[3] = {&ta, &ta, &to};
  expect_status(ct_op_reference(CT_OP_ADD, t2, 3, nullptr, nullptr), CT_ERR_NOT_FOUND, {"ct_op_reference", "add"});
  l.unload();
  expect_status(ct_op_reference(op, t2, 3, nullptr, nullptr), CT_ERR_NOT_FOUND, {"ct_op_reference", "unloaded"});
}

TEST_CASE("library: unloaded ops answer NOT_FOUND; a reload gives them their old ids", "[library]") {
  for (const char* path : {CT_TPLUG_KERNEL_ERROR, CT_TPLUG_MINOR_NEWER})  // their ops' ids given once (reloaded below)
    Loaded other(path);
  const int32_t libs_before = ct_library_count();
  Loaded l(kCustomOps);
  const int32_t op = find_op(CUSTOM_OPS_BIAS_GELU);
  const int32_t count = ct_op_count();
  CTLibrary* handle = l.lib;
  l.unload();

  CHECK(ct_library_count() == libs_before);
  CHECK(ct_op_count() == count);  // ids are not reused
  int32_t found = -1;
  expect_status(ct_op_find(CUSTOM_OPS_BIAS_GELU, &found), CT_ERR_NOT_FOUND, {"bias_gelu"});
  CTOpInfo oi;
  std::memset(&oi, 0, sizeof oi);
  oi.struct_size = sizeof oi;
  expect_status(ct_op_info(op, &oi), CT_ERR_NOT_FOUND, {"bias_gelu", "unloaded"});
  HostTensor a = random_tensor(DT_F32, {4}, 0, 30);
  HostTensor out = HostTensor::compact(DT_F32, {4});
  out.fill_bytes(0x5A);
  const std::vector<unsigned char> before = out.bytes();
  CTensor ta = a.view(), to = out.view();
  expect_status(ct_binary(op, &ta, &ta, &to, nullptr), CT_ERR_NOT_FOUND, {"ct_binary", "bias_gelu", "unloaded"});
  expect_status(ct_op_supported(op, kCpu, dtype(DT_F32).dt), CT_ERR_NOT_FOUND, {"unloaded"});
  CHECK(out.bytes() == before);
  // The handle is gone: a second unload is refused.
  expect_status(ct_library_unload(handle), CT_ERR_INVALID_ARGUMENT, {"ct_library_unload", "not a loaded library"});
  expect_status(ct_library_unload(nullptr), CT_ERR_INVALID_ARGUMENT, {"ct_library_unload"});
  builtin_add_works();

  for (int round = 0; round < 20; ++round) {
    // ct_library_op lists a library's own ops only, not those of unloaded
    // ones whose record, once reclaimed, came back at the same address.
    for (const char* path : {CT_TPLUG_KERNEL_ERROR, CT_TPLUG_MINOR_NEWER}) {
      Loaded other(path);
      int32_t id = -1;
      REQUIRE(ct_library_op(other.lib, 0, &id) == CT_OK);
      CTOpInfo oi;
      std::memset(&oi, 0, sizeof oi);
      oi.struct_size = sizeof oi;
      REQUIRE(ct_op_info(id, &oi) == CT_OK);
      CHECK(contains(oi.name, "tplug_"));
      CHECK(ct_library_op(other.lib, 1, &id) == CT_ERR_NOT_FOUND);
    }
    Loaded again(kCustomOps);
    CHECK(find_op(CUSTOM_OPS_BIAS_GELU) == op);
    CHECK(ct_op_count() == count);
    // ct_library_op lists this load's ops, not the unloaded ones of an
    // earlier record (which may have had the same address).
    const int32_t num_ops = again.info().num_ops;
    std::vector<int32_t> ids;
    for (int32_t i = 0; i < num_ops; ++i) {
      int32_t id = -1;
      REQUIRE(ct_library_op(again.lib, i, &id) == CT_OK);
      ids.push_back(id);
    }
    CHECK(ids.size() == (size_t)num_ops);
    CHECK(std::count(ids.begin(), ids.end(), op) == 1);
    if (op_exists(CUSTOM_OPS_GEMM_RELU)) CHECK(std::count(ids.begin(), ids.end(), find_op(CUSTOM_OPS_GEMM_RELU)) == 1);
    int32_t extra = -1;
    expect_status(ct_library_op(again.lib, num_ops, &extra), CT_ERR_NOT_FOUND, {"ct_library_op"});
    HostTensor b = random_tensor(DT_F32, {4}, 0, 31);
    HostTensor o2 = HostTensor::compact(DT_F32, {4});
    run_bias_gelu(op, a, b, o2);
  }
}

TEST_CASE("library: one file loads once", "[library]") {
  Loaded l(kCustomOps);
  const Registry before = Registry::now();
  CTLibrary* other = reinterpret_cast<CTLibrary*>(0x1);

  SECTION("the same path") {
    expect_status(ct_library_load(kCustomOps, &other), CT_ERR_INVALID_ARGUMENT, {"ct_library_load", "loaded already"});
  }
  SECTION("the same file by another path") {
    const std::filesystem::path p(kCustomOps);
    const std::string roundabout = (p.parent_path() / "." / ".." / p.parent_path().filename() / p.filename()).string();
    expect_status(ct_library_load(roundabout.c_str(), &other), CT_ERR_INVALID_ARGUMENT,
                  {"ct_library_load", "loaded already"});
  }
  SECTION("a copy of the file: its ops' names are taken (register_op refuses them before the plugin's name is checked)") {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("ct_test_library_" + std::to_string((long long)getpid()));
    std::filesystem::create_directories(dir);
    const std::filesystem::path copy = dir / "libcustom_ops_copy.so";
    std::filesystem::copy_file(kCustomOps, copy, std::filesystem::copy_options::overwrite_existing);
    expect_status(ct_library_load(copy.c_str(), &other), CT_ERR_INVALID_ARGUMENT,
                  {"ct_library_load", "libcustom_ops_copy.so", "an op named \"bias_gelu\" is registered already"});
    std::filesystem::remove_all(dir);
  }
  CHECK(other == reinterpret_cast<CTLibrary*>(0x1));
  require_same(before, Registry::now());
}

TEST_CASE("library: a plugin that does not load changes nothing", "[library]") {
  builtin_add_works();  // the built-ins and the loopback device registered before the snapshot
  const Registry before = Registry::now();
  // modules that declined at the first use (libctensor_cuda without a GPU) are there already
  const int32_t failures = ct_library_failure_count();
  CTLibrary* lib = reinterpret_cast<CTLibrary*>(0x1);

  SECTION("no such file") {
    expect_status(ct_library_load("/nonexistent/libnothing.so", &lib), CT_ERR_NOT_FOUND,
                  {"ct_library_load", "/nonexistent/libnothing.so", "no such file"});
  }
  SECTION("a file that is not a shared library") {
    expect_status(ct_library_load(CT_TEST_NOT_A_LIBRARY, &lib), CT_ERR_NOT_FOUND,
                  {"ct_library_load", "cannot load", "not_a_library.so"});
  }
  SECTION("a shared library without ct_plugin_init") {
    expect_status(ct_library_load(CT_TPLUG_NO_ENTRY, &lib), CT_ERR_NOT_FOUND,
                  {"ct_library_load", "exports no ct_plugin_init"});
  }
  SECTION("another major version of the plugin ABI") {
    const std::string theirs = std::to_string(CT_PLUGIN_ABI_MAJOR + 1) + ".0";
    const std::string ours = std::to_string(CT_PLUGIN_ABI_MAJOR) + "." + std::to_string(CT_PLUGIN_ABI_MINOR);
    expect_status(ct_library_load(CT_TPLUG_WRONG_MAJOR, &lib), CT_ERR_ABI_VERSION,
                  {"ct_library_load", "plugin ABI " + theirs, "speaks " + ours});
    CHECK_FALSE(op_exists("tplug_wrong_major_op"));
  }
  SECTION("another major, said by ct_plugin_abi_version: refused before ct_plugin_init runs") {
    const std::string theirs = std::to_string(CT_PLUGIN_ABI_MAJOR + 1) + ".0";
    expect_status(ct_library_load(CT_TPLUG_WRONG_MAJOR_SYMBOL, &lib), CT_ERR_ABI_VERSION,
                  {"ct_library_load", "plugin ABI " + theirs});
    CHECK_FALSE(contains(last_error(), "ct_plugin_init ran"));
  }
  SECTION("an init that fails halfway, after registering ops and kernel tables") {
    expect_status(ct_library_load(CT_TPLUG_FAIL_HALFWAY, &lib), CT_ERR_BACKEND,
                  {"ct_library_load", "ct_plugin_init failed with CT_ERR_BACKEND",
                   "tplug_fail_halfway: gave up after registering 2 ops and 2 kernel tables"});
    CHECK_FALSE(op_exists("tplug_half_a"));
    CHECK_FALSE(op_exists("tplug_half_b"));
  }
  SECTION("an op named like a built-in") {
    expect_status(ct_library_load(CT_TPLUG_DUP_BUILTIN, &lib), CT_ERR_INVALID_ARGUMENT,
                  {"ct_library_load", "an op named \"add\" is registered already"});
    CHECK_FALSE(op_exists("tplug_dup_builtin_fresh"));
    CHECK(find_op("add") == CT_OP_ADD);
  }
  SECTION("an op named like another plugin's") {
    Loaded example(kCustomOps);
    const Registry with_example = Registry::now();
    const int32_t op = find_op(CUSTOM_OPS_BIAS_GELU);
    expect_status(ct_library_load(CT_TPLUG_DUP_EXAMPLE, &lib), CT_ERR_INVALID_ARGUMENT,
                  {"ct_library_load", "an op named \"bias_gelu\" is registered already"});
    CHECK_FALSE(op_exists("tplug_dup_example_fresh"));
    require_same(with_example, Registry::now());
    CHECK(find_op(CUSTOM_OPS_BIAS_GELU) == op);
    HostTensor a = random_tensor(DT_F32, {5}, 0, 40), b = random_tensor(DT_F32, {5}, 0, 41);
    HostTensor out = HostTensor::compact(DT_F32, {5});
    run_bias_gelu(op, a, b, out);
  }
  CHECK(lib == reinterpret_cast<CTLibrary*>(0x1));
  require_same(before, Registry::now());
  builtin_add_works();
  CHECK(ct_library_failure_count() == failures);  // ct_library_load's failures are its caller's, not CT_PLUGIN_PATH's
}

TEST_CASE("library: register_op refuses an example on an op that is not of the NN kind", "[library]") {
  const Registry before = Registry::now();
  CTLibrary* lib = reinterpret_cast<CTLibrary*>(0x1);
  expect_status(ct_library_load(CT_TPLUG_EXAMPLE_ON_UNARY, &lib), CT_ERR_INVALID_ARGUMENT,
                {"ct_library_load", "register_op: op \"tplug_example_on_unary\": example is for NN-kind ops",
                 "unary"});
  CHECK(lib == reinterpret_cast<CTLibrary*>(0x1));
  CHECK_FALSE(op_exists("tplug_example_on_unary"));
  require_same(before, Registry::now());
}

TEST_CASE("library: register_op refuses param_names that are not name or name=default", "[library]") {
  const Registry before = Registry::now();
  CTLibrary* lib = reinterpret_cast<CTLibrary*>(0x1);
  expect_status(ct_library_load(CT_TPLUG_BAD_PARAM_NAMES, &lib), CT_ERR_INVALID_ARGUMENT,
                {"ct_library_load", "register_op: op \"tplug_bad_param_names\"", "param_names=\"alpha=0.5,beta=oops\"",
                 "name=default"});
  CHECK(lib == reinterpret_cast<CTLibrary*>(0x1));
  CHECK_FALSE(op_exists("tplug_bad_param_names"));
  require_same(before, Registry::now());
}

TEST_CASE("library: an op name freed by an unload can be taken by another plugin", "[library]") {
  // The dup plugin's "bias_gelu" loads while the example is not loaded; the
  // example then cannot load until it is gone.
  const int32_t count = ct_op_count();
  {
    Loaded dup(CT_TPLUG_DUP_EXAMPLE);
    CHECK(op_exists("tplug_dup_example_fresh"));
    CHECK(op_exists(CUSTOM_OPS_BIAS_GELU));
    CTLibrary* lib = nullptr;
    expect_status(ct_library_load(kCustomOps, &lib), CT_ERR_INVALID_ARGUMENT,
                  {"an op named \"bias_gelu\" is registered already"});
  }
  CHECK_FALSE(op_exists("tplug_dup_example_fresh"));
  Loaded example(kCustomOps);
  HostTensor a = random_tensor(DT_F32, {5}, 0, 42), b = random_tensor(DT_F32, {5}, 0, 43);
  HostTensor out = HostTensor::compact(DT_F32, {5});
  run_bias_gelu(find_op(CUSTOM_OPS_BIAS_GELU), a, b, out);
  CHECK(ct_op_count() >= count);
}

TEST_CASE("library: a plugin kernel's error is the call's, outputs untouched", "[library]") {
  Loaded l(CT_TPLUG_KERNEL_ERROR);
  const int32_t op = find_op("tplug_kernel_error");
  HostTensor a = random_tensor(DT_F32, {3, 4}, 0, 50), b = random_tensor(DT_F32, {4}, 0, 51);
  HostTensor out = HostTensor::compact(DT_F32, {3, 4});
  out.fill_bytes(0x5A);
  const std::vector<unsigned char> before = out.bytes();
  CTensor ta = a.view(), tb = b.view(), to = out.view();
  expect_status(ct_binary(op, &ta, &tb, &to, nullptr), CT_ERR_BACKEND,
                {"ct_binary: tplug_kernel_error: the device fell over (code 42)"});
  CHECK(out.bytes() == before);
  // The next call starts clean: a built-in op's success clears the message.
  builtin_add_works();
  CHECK(last_error().empty());
}

namespace {
// tests/plugins/minor.c: the device type and names of the plugin of minor m.
int32_t minor_device_type(int m) { return 1000 + m; }
}  // namespace

TEST_CASE("library: plugins of an older and a newer minor of the ABI load", "[library]") {
  const int32_t devices_before = ct_device_count();
  for (int delta : {-1, +1}) {
    const int minor = CT_PLUGIN_ABI_MINOR + delta;
    INFO("a plugin of ABI " << CT_PLUGIN_ABI_MAJOR << "." << minor);
    Loaded l(delta < 0 ? CT_TPLUG_MINOR_OLDER : CT_TPLUG_MINOR_NEWER);
    const CTLibraryInfo info = l.info();
    CHECK(info.abi_version == (uint32_t)((CT_PLUGIN_ABI_MAJOR << 16) | minor));
    CHECK(std::string(info.name) == "tplug_minor" + std::to_string(minor));
    CHECK(info.num_devices == 1);
    CHECK(info.num_kernel_tables == 1);
    const bool knows_register_op = minor >= 1;
    CHECK(info.num_ops == (knows_register_op ? 1 : 0));
    CHECK(ct_device_count() == devices_before + 1);

    // Its device (host memory) runs neg through its kernel table.
    const CTDevice dev = {minor_device_type(minor), 0};
    float xs[4] = {1, -2, 3.5f, 0}, ys[4] = {9, 9, 9, 9};
    int64_t n[1] = {4};
    CTensor x = {xs, dev, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
    CTensor y = {ys, dev, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
    REQUIRE(ct_unary(CT_OP_NEG, &x, &y, nullptr) == CT_OK);
    CHECK(ys[0] == -1);
    CHECK(ys[1] == 2);
    CHECK(ys[2] == -3.5f);
    if (knows_register_op) {
      const int32_t twice = find_op(("tplug_minor" + std::to_string(minor) + "_twice").c_str());
      REQUIRE(ct_unary(twice, &x, &y, nullptr) == CT_OK);
      CHECK(ys[1] == -4);
      CHECK(ys[2] == 7);
      // The op loaded, so the host did not read the older CTOpDesc's example
      // slot (past its struct_size, a trap the host would refuse on a unary
      // op); ct_op_example answers for a unary op without calling anything.
      int32_t nd[1];
      int64_t shp[1][CT_MAX_NDIM];
      expect_status(ct_op_example(twice, 0, 0, nullptr, 0, 1, nd, shp), CT_ERR_UNSUPPORTED,
                    {"ct_op_example", "unary", "examples are for NN ops"});
    }
    // Slots past the table's struct_size count as NULL: no NN kernels on the
    // device (the older table's slots there hold traps that would answer).
    expect_status(ct_op_supported(CT_OP_MATMUL, dev, dtype(DT_F32).dt), CT_ERR_UNSUPPORTED,
                  {"has no kernels for NN ops"});
    l.unload();
    CHECK(ct_device_count() == devices_before);
    CHECK(ct_unary(CT_OP_NEG, &x, &y, nullptr) != CT_OK);
  }
}

TEST_CASE("library: calls race unloads and reloads", "[library]") {
  CTLibrary* lib = nullptr;
  REQUIRE(ct_library_load(kCustomOps, &lib) == CT_OK);
  const int32_t op = find_op(CUSTOM_OPS_BIAS_GELU);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> ok{0}, gone{0}, other{0}, wrong{0};
  std::string first_other;
  std::atomic<bool> have_other{false};
  auto caller = [&](int seed) {
    float a[8], b[8], o[8];
    for (int i = 0; i < 8; ++i) {
      a[i] = (float)(seed + i) * 0.25f - 1;
      b[i] = 0.5f;
    }
    int64_t n[1] = {8};
    CTensor ta = {a, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
    CTensor tb = {b, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
    CTensor to = {o, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
    while (!stop.load(std::memory_order_relaxed)) {
      std::memset(o, 0, sizeof o);
      const CTStatus s = ct_binary(op, &ta, &tb, &to, nullptr);
      if (s == CT_OK) {
        ++ok;
        for (int i = 0; i < 8; ++i)
          if (std::fabs(o[i] - want_bias_gelu(a[i], b[i], DT_F32)) > 2 * ulp_of(want_bias_gelu(a[i], b[i], DT_F32), DT_F32))
            ++wrong;
      } else if (s == CT_ERR_NOT_FOUND) {
        ++gone;
      } else {
        if (!have_other.exchange(true)) first_other = status_and_message(s);
        ++other;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back(caller, t);
  int reloads = 0;
  for (int round = 0; round < 300; ++round) {
    REQUIRE(ct_library_unload(lib) == CT_OK);
    std::this_thread::yield();
    // The unload waited for the calls in flight and closed the file: the
    // same file loads again at once, whatever the callers were doing.
    const CTStatus s = ct_library_load(kCustomOps, &lib);
    if (s != CT_OK) {
      stop = true;
      for (std::thread& t : threads) t.join();
      FAIL("reload " << round << ": " << status_and_message(s));
    }
    ++reloads;
    CHECK(find_op(CUSTOM_OPS_BIAS_GELU) == op);
    std::this_thread::yield();
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  REQUIRE(ct_library_unload(lib) == CT_OK);
  INFO("calls: " << ok << " CT_OK, " << gone << " CT_ERR_NOT_FOUND, " << other << " other (first: " << first_other
                 << "); " << reloads << " reloads");
  CHECK(other == 0);
  CHECK(wrong == 0);
  CHECK(ok > 0);
}

TEST_CASE("library: an unload while core runs a plugin's supports() keeps its code until it returns", "[library]") {
  // tplug_slow_supports spends ~0.3 s of CPU time in supports(); the unload
  // comes 0.1 s into it, and must wait for the call to return before it
  // closes the library (else it closes under the running function). Once it
  // returns, the file is closed: it loads again at once.
  for (int entry = 0; entry < 2; ++entry) {
    INFO((entry == 0 ? "ct_op_supported" : "ct_binary"));
    CTLibrary* lib = nullptr;
    REQUIRE(ct_library_load(CT_TPLUG_SLOW_SUPPORTS, &lib) == CT_OK);
    const int32_t op = find_op("tplug_slow_supports");
    float a[2] = {1, 2}, o[2] = {0, 0};
    int64_t n[1] = {2};
    CTensor ta = {a, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
    CTensor to = {o, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
    std::atomic<int> result{1};
    std::string message;
    std::thread t([&] {
      const CTStatus s = entry == 0 ? ct_op_supported(op, kCpu, dtype(DT_F32).dt) : ct_binary(op, &ta, &ta, &to, nullptr);
      message = last_error();
      result = s;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    REQUIRE(ct_library_unload(lib) == CT_OK);
    CTLibrary* again = nullptr;
    const CTStatus reload = ct_library_load(CT_TPLUG_SLOW_SUPPORTS, &again);
    INFO("reload: " << status_and_message(reload));
    CHECK(reload == CT_OK);
    if (reload == CT_OK) CHECK(ct_library_unload(again) == CT_OK);
    t.join();
    const CTStatus r = (CTStatus)result.load();
    INFO("status " << ct_status_string(r) << ": " << message);
    CHECK((r == CT_OK || r == CT_ERR_NOT_FOUND));
    if (r == CT_OK && entry == 1) CHECK(o[1] == 4);
  }
}

namespace {
CTLibrary* g_reentrant_lib = nullptr;
CTStatus g_reentrant_status = CT_OK;
std::string g_reentrant_message;
void unload_from_kernel() {
  g_reentrant_status = ct_library_unload(g_reentrant_lib);
  g_reentrant_message = last_error();
}
}  // namespace

TEST_CASE("library: an unload from inside a call (a kernel calling back) is refused, not a deadlock", "[library]") {
  // ct_library_unload waits for the calls in flight; one made from inside
  // a call on the same thread would wait for itself (and the call may be in
  // the plugin's code), so it is refused and the plugin stays loaded.
  REQUIRE(ct_library_load(CT_TPLUG_SLOW_SUPPORTS, &g_reentrant_lib) == CT_OK);
  void* h = dlopen(CT_TPLUG_SLOW_SUPPORTS, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h);
  auto** hook = reinterpret_cast<void (**)(void)>(dlsym(h, "tplug_slow_supports_hook"));
  dlclose(h);
  REQUIRE(hook);
  *hook = &unload_from_kernel;
  const int32_t op = find_op("tplug_slow_supports");
  float a[2] = {1, 2}, o[2] = {0, 0};
  int64_t n[1] = {2};
  CTensor ta = {a, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
  CTensor to = {o, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
  REQUIRE(ct_binary(op, &ta, &ta, &to, nullptr) == CT_OK);
  CHECK(o[1] == 4);
  CHECK(g_reentrant_status == CT_ERR_INVALID_ARGUMENT);
  CHECK(contains(g_reentrant_message, "ct_library_unload: called from inside another ctensor call"));
  CHECK(contains(g_reentrant_message, "tplug_slow_supports"));
  *hook = nullptr;
  CTLibraryInfo info;
  info.struct_size = sizeof info;
  REQUIRE(ct_library_info(g_reentrant_lib, &info) == CT_OK);
  CHECK(info.loaded == 1);
  CHECK(ct_library_unload(g_reentrant_lib) == CT_OK);
}

namespace {
long resident_kib() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * (long)(sysconf(_SC_PAGESIZE) / 1024);
}
}  // namespace

TEST_CASE("library: 10,000 load / call / unload cycles", "[library]") {
  const int32_t count_before = ct_op_count(), libs_before = ct_library_count();
  float a[1] = {0.75f}, b[1] = {-0.25f}, o[1];
  int64_t n[1] = {1};
  CTensor ta = {a, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
  CTensor tb = {b, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
  CTensor to = {o, kCpu, 1, {CT_FLOAT, 32, 1}, n, nullptr, 0};
  const double want = want_bias_gelu(a[0], b[0], DT_F32);
  long rss_after_first = 0;
  int32_t count_after_first = 0;
  int failures = 0;
  for (int i = 0; i < 10000 && failures < 5; ++i) {
    CTLibrary* lib = nullptr;
    CTStatus s = ct_library_load(kCustomOps, &lib);
    int32_t op = -1;
    if (s == CT_OK) s = ct_op_find(CUSTOM_OPS_BIAS_GELU, &op);
    o[0] = 0;
    if (s == CT_OK) s = ct_binary(op, &ta, &tb, &to, nullptr);
    if (s == CT_OK && std::fabs(o[0] - want) > 2 * ulp_of(want, DT_F32)) s = CT_ERR_INTERNAL;
    int32_t first = -1;
    if (s == CT_OK && (ct_library_op(lib, 0, &first) != CT_OK || first != op)) s = CT_ERR_INTERNAL;
    const CTStatus u = lib ? ct_library_unload(lib) : CT_OK;
    if (s != CT_OK || u != CT_OK) {
      ++failures;
      INFO("cycle " << i << ": " << status_and_message(s != CT_OK ? s : u));
      CHECK(s == CT_OK);
      CHECK(u == CT_OK);
    }
    if (i == 0) {
      rss_after_first = resident_kib();
      count_after_first = ct_op_count();
    }
  }
  CHECK(failures == 0);
  CHECK(ct_library_count() == libs_before);
  // The example's ids were given once (in the first cycle, or before it) and reused after.
  CHECK(ct_op_count() == count_after_first);
  CHECK(count_after_first - count_before <= 2);
  // What the registry replaces (snapshots, backends, caches, library records)
  // is reclaimed once no call can see it: memory stays flat. (Not under
  // AddressSanitizer, whose quarantine holds freed memory back.)
  const long grew = resident_kib() - rss_after_first;
  std::printf("test_library: 10,000 load/call/unload cycles: resident memory grew by %ld KiB after the first\n", grew);
#if !defined(__SANITIZE_ADDRESS__)
  CHECK(grew < 8 * 1024);
#endif
}

// ---------------------------------------------------------------------------
// [library_nn]: gemm_relu, the example's NN-kind op. Needs NN-kind plugin ops
// in core: without them the plugin loads without it and these cases fail at
// their first REQUIRE.
// ---------------------------------------------------------------------------

namespace {

// y = relu(alpha * a @ b + bias), in double.
std::vector<double> want_gemm_relu(const HostTensor& a, const HostTensor& b, const HostTensor* bias, double alpha) {
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  std::vector<double> y((size_t)(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double v = 0;
      for (int64_t kk = 0; kk < k; ++kk) v += a.get(i * k + kk) * b.get(kk * n + j);
      v = alpha * v + (bias ? bias->get(j) : 0.0);
      y[(size_t)(i * n + j)] = v > 0 ? v : 0;
    }
  return y;
}

// float32 accumulation of k products: within k * eps of the sum of |terms|.
void check_gemm(const HostTensor& y, const std::vector<double>& want, double tol) {
  REQUIRE((int64_t)want.size() == y.numel());
  int64_t bad = 0;
  for (int64_t i = 0; i < y.numel(); ++i)
    if (!(std::fabs(y.get(i) - want[(size_t)i]) <= tol) && bad++ < 5) {
      INFO("element " << i << ": got " << y.get(i) << ", want " << want[(size_t)i]);
      CHECK(std::fabs(y.get(i) - want[(size_t)i]) <= tol);
    }
  CHECK(bad == 0);
}

int32_t gemm_relu_op() {
  int32_t op = -1;
  const CTStatus s = ct_op_find(CUSTOM_OPS_GEMM_RELU, &op);
  INFO("gemm_relu is registered only when core accepts NN-kind plugin ops (register_op): " << status_and_message(s));
  REQUIRE(s == CT_OK);
  return op;
}

}  // namespace

TEST_CASE("library_nn: gemm_relu registers as an NN op with a custom descriptor", "[library_nn]") {
  Loaded l(kCustomOps);
  const int32_t op = gemm_relu_op();
  CHECK(l.info().num_ops == 2);
  CTOpInfo oi;
  std::memset(&oi, 0, sizeof oi);
  oi.struct_size = sizeof oi;
  REQUIRE(ct_op_info(op, &oi) == CT_OK);
  CHECK(std::string(oi.name) == "gemm_relu");
  CHECK(oi.kind == CT_KIND_NN);
  CHECK(oi.category == CT_CATEGORY_NN);
  CHECK(oi.num_inputs == 3);
  CHECK(oi.num_tensors == 4);
  CHECK(oi.num_outputs == 1);
  CHECK(std::string(oi.tensor_names) == "a,b,bias?,y");
  CHECK(oi.optional_mask == (1u << 2));
  REQUIRE(oi.tensor_roles != nullptr);
  CHECK(oi.tensor_roles[2] == CT_ROLE_BIAS);
  CHECK(oi.desc_type == CT_DESC_CUSTOM);
  CHECK(oi.desc_size == (int32_t)sizeof(CTGemmReluDesc));
  CHECK(oi.shape_rule == CT_SHAPE_CUSTOM);
  CHECK(oi.dtype_mask == (1u << CT_DT_FLOAT32));
}

TEST_CASE("library_nn: gemm_relu's output shape comes from the plugin", "[library_nn]") {
  Loaded l(kCustomOps);
  const int32_t op = gemm_relu_op();
  HostTensor a = HostTensor::compact(DT_F32, {5, 7}), b = HostTensor::compact(DT_F32, {7, 3});
  HostTensor bias = HostTensor::compact(DT_F32, {3}), b_bad = HostTensor::compact(DT_F32, {6, 3});
  CTensor ta = a.view(), tb = b.view(), tc = bias.view(), tbad = b_bad.view();
  CTGemmReluDesc desc = {sizeof(CTGemmReluDesc), 1.0f};
  CTOpArgs args;
  std::memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  args.desc = &desc;
  CTOutputInfo out;
  std::memset(&out, 0, sizeof out);
  for (const CTensor* c : {(const CTensor*)&tc, (const CTensor*)nullptr}) {
    const CTensor* in[3] = {&ta, &tb, c};
    REQUIRE(ct_op_output_info(op, &args, in, 3, &out, 1) == CT_OK);
    CHECK(out.ndim == 2);
    CHECK(out.shape[0] == 5);
    CHECK(out.shape[1] == 3);
    CHECK(out.dtype.code == CT_FLOAT);
    CHECK(out.dtype.bits == 32);
  }
  const CTensor* bad[3] = {&ta, &tbad, &tc};
  expect_status(ct_op_output_info(op, &args, bad, 3, &out, 1), CT_ERR_SHAPE_MISMATCH,
                {"gemm_relu", "a is (5, 7) and b is (6, 3)", "a's columns must equal b's rows"});
}

TEST_CASE("library_nn: gemm_relu through ct_nn with its workspace", "[library_nn]") {
  Loaded l(kCustomOps);
  const int32_t op = gemm_relu_op();
  const int64_t m = 9, k = 17, n = 6;
  for (int layout_a : {0, 1, 3})
    for (int layout_b : {0, 1, 2})
      for (bool with_bias : {true, false})
        for (float alpha : {1.0f, 0.5f, -2.0f}) {
          INFO("layouts a=" << layout_a << " b=" << layout_b << " bias=" << with_bias << " alpha=" << alpha);
          HostTensor a = random_tensor(DT_F32, {m, k}, layout_a, 60, -1, 1);
          HostTensor b = random_tensor(DT_F32, {k, n}, layout_b, 61, -1, 1);
          HostTensor bias = random_tensor(DT_F32, {n}, 0, 62, -1, 1);
          HostTensor y = make_layout(DT_F32, {m, n}, layout_a == 3 ? 3 : 0);
          CTensor ta = a.view(), tb = b.view(), tc = bias.view(), ty = y.view();
          const CTensor* t[4] = {&ta, &tb, with_bias ? &tc : nullptr, &ty};
          CTGemmReluDesc desc = {sizeof(CTGemmReluDesc), alpha};
          size_t bytes = 0;
          REQUIRE(ct_nn_workspace_size(op, &desc, t, 4, &bytes) == CT_OK);
          CHECK(bytes >= (size_t)(k * n + n) * sizeof(float));  // b packed, and a row of sums
          std::vector<unsigned char> ws(bytes);
          const CTStatus s = ct_nn(op, &desc, t, 4, ws.data(), bytes, nullptr);
          INFO(status_and_message(s));
          REQUIRE(s == CT_OK);
          check_gemm(y, want_gemm_relu(a, b, with_bias ? &bias : nullptr, alpha), 1e-5 * (double)k);
          // The plugin's reference agrees.
          HostTensor yr = HostTensor::compact(DT_F32, {m, n});
          CTensor tyr = yr.view();
          const CTensor* tr[4] = {&ta, &tb, with_bias ? &tc : nullptr, &tyr};
          CTOpArgs args;
          std::memset(&args, 0, sizeof args);
          args.struct_size = sizeof args;
          args.desc = &desc;
          REQUIRE(ct_op_reference(op, tr, 4, nullptr, &args) == CT_OK);
          check_gemm(yr, want_gemm_relu(a, b, with_bias ? &bias : nullptr, alpha), 1e-6);
        }
  SECTION("a NULL descriptor is refused by core (it copies desc_size bytes), for the reference too") {
    HostTensor a = random_tensor(DT_F32, {3, 4}, 0, 63, -1, 1), b = random_tensor(DT_F32, {4, 2}, 0, 64, -1, 1);
    HostTensor y = HostTensor::compact(DT_F32, {3, 2});
    CTensor ta = a.view(), tb = b.view(), ty = y.view();
    const CTensor* t[4] = {&ta, &tb, nullptr, &ty};
    size_t bytes = 0;
    expect_status(ct_nn_workspace_size(op, nullptr, t, 4, &bytes), CT_ERR_INVALID_ARGUMENT,
                  {"desc is NULL", "gemm_relu"});
    expect_status(ct_op_reference(op, t, 4, nullptr, nullptr), CT_ERR_INVALID_ARGUMENT, {"desc is NULL"});
  }
  SECTION("an older caller's shorter descriptor: alpha 1") {
    HostTensor a = random_tensor(DT_F32, {3, 4}, 0, 63, -1, 1), b = random_tensor(DT_F32, {4, 2}, 0, 64, -1, 1);
    HostTensor y = HostTensor::compact(DT_F32, {3, 2});
    CTensor ta = a.view(), tb = b.view(), ty = y.view();
    const CTensor* t[4] = {&ta, &tb, nullptr, &ty};
    CTGemmReluDesc desc = {(uint32_t)offsetof(CTGemmReluDesc, alpha), 7.0f};  // alpha not covered
    size_t bytes = 0;
    REQUIRE(ct_nn_workspace_size(op, &desc, t, 4, &bytes) == CT_OK);
    std::vector<unsigned char> ws(bytes);
    REQUIRE(ct_nn(op, &desc, t, 4, ws.data(), bytes, nullptr) == CT_OK);
    check_gemm(y, want_gemm_relu(a, b, nullptr, 1.0), 1e-5 * 4);
    desc.struct_size = 0;
    expect_status(ct_nn(op, &desc, t, 4, ws.data(), bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                  {"desc->struct_size=0"});
  }
  SECTION("errors: the plugin's shape message, core's dtype and workspace checks; y untouched") {
    HostTensor a = random_tensor(DT_F32, {3, 4}, 0, 65), b = random_tensor(DT_F32, {5, 2}, 0, 66);
    HostTensor b_ok = random_tensor(DT_F32, {4, 2}, 0, 67);
    HostTensor y = HostTensor::compact(DT_F32, {3, 2});
    y.fill_bytes(0x5A);
    const std::vector<unsigned char> before = y.bytes();
    CTensor ta = a.view(), tb = b.view(), tok = b_ok.view(), ty = y.view();
    CTGemmReluDesc desc = {sizeof(CTGemmReluDesc), 1.0f};
    std::vector<unsigned char> ws(4096);
    const CTensor* t[4] = {&ta, &tb, nullptr, &ty};
    expect_status(ct_nn(op, &desc, t, 4, ws.data(), ws.size(), nullptr), CT_ERR_SHAPE_MISMATCH,
                  {"a's columns must equal b's rows"});
    const CTensor* t_ok[4] = {&ta, &tok, nullptr, &ty};
    size_t bytes = 0;
    REQUIRE(ct_nn_workspace_size(op, &desc, t_ok, 4, &bytes) == CT_OK);
    REQUIRE(bytes > 0);
    expect_status(ct_nn(op, &desc, t_ok, 4, ws.data(), bytes - 1, nullptr), CT_ERR_WORKSPACE_TOO_SMALL, {});
    HostTensor a64 = HostTensor::compact(DT_F64, {3, 4}), b64 = HostTensor::compact(DT_F64, {4, 2});
    HostTensor y64 = HostTensor::compact(DT_F64, {3, 2});
    CTensor ta64 = a64.view(), tb64 = b64.view(), ty64 = y64.view();
    const CTensor* t64[4] = {&ta64, &tb64, nullptr, &ty64};
    expect_status(ct_nn(op, &desc, t64, 4, ws.data(), ws.size(), nullptr), CT_ERR_UNSUPPORTED,
                  {"gemm_relu", "float64"});
    CHECK(y.bytes() == before);
  }
}

TEST_CASE("library_nn: gemm_relu plans", "[library_nn]") {
  Loaded l(kCustomOps);
  const int32_t op = gemm_relu_op();
  HostTensor a = random_tensor(DT_F32, {8, 16}, 0, 70, -1, 1), b = random_tensor(DT_F32, {16, 4}, 1, 71, -1, 1);
  HostTensor bias = random_tensor(DT_F32, {4}, 0, 72, -1, 1);
  HostTensor y = HostTensor::compact(DT_F32, {8, 4});
  CTensor ta = a.view(), tb = b.view(), tc = bias.view(), ty = y.view();
  const CTensor* t[4] = {&ta, &tb, &tc, &ty};
  CTGemmReluDesc desc = {sizeof(CTGemmReluDesc), 1.5f};
  CTPlan* plan = nullptr;
  REQUIRE(ct_plan_create(op, &desc, t, 4, nullptr, &plan) == CT_OK);
  size_t bytes = 0;
  REQUIRE(ct_plan_workspace_size(plan, &bytes) == CT_OK);
  CHECK(bytes >= (16 * 4 + 4) * sizeof(float));
  std::vector<unsigned char> ws(bytes);
  for (int run = 0; run < 3; ++run) {  // new data each run, same plan
    a = random_tensor(DT_F32, {8, 16}, 0, 73 + (uint64_t)run, -1, 1);
    ta = a.view();
    REQUIRE(ct_plan_execute(plan, t, 4, ws.data(), bytes, nullptr) == CT_OK);
    check_gemm(y, want_gemm_relu(a, b, &bias, 1.5), 1e-5 * 16);
  }
  SECTION("a plan outlives its library's unload: destroying it afterwards is safe") {
    l.unload();
    const CTStatus s = ct_plan_execute(plan, t, 4, ws.data(), bytes, nullptr);
    INFO(status_and_message(s));
    CHECK((s == CT_OK || s == CT_ERR_NOT_FOUND));
    ct_plan_destroy(plan);
  }
  SECTION("destroyed while loaded") { ct_plan_destroy(plan); }
}

TEST_CASE("library_nn: ct_nn and plans race unloads and reloads", "[library_nn]") {
  CTLibrary* lib = nullptr;
  REQUIRE(ct_library_load(kCustomOps, &lib) == CT_OK);
  const int32_t op = gemm_relu_op();
  std::atomic<bool> stop{false};
  std::atomic<int64_t> ok{0}, gone{0}, other{0};
  std::string first_other;
  std::atomic<bool> have_other{false};
  auto note = [&](CTStatus s) {
    if (s == CT_OK) ++ok;
    else if (s == CT_ERR_NOT_FOUND) ++gone;
    else {
      if (!have_other.exchange(true)) first_other = status_and_message(s);
      ++other;
    }
  };
  auto caller = [&](int seed) {
    float a[12], b[8], y[6];
    for (int i = 0; i < 12; ++i) a[i] = (float)(seed + i) * 0.1f - 0.5f;
    for (int i = 0; i < 8; ++i) b[i] = (float)i * 0.2f - 0.7f;
    int64_t as[2] = {3, 4}, bs[2] = {4, 2}, ys[2] = {3, 2};
    CTensor ta = {a, kCpu, 2, {CT_FLOAT, 32, 1}, as, nullptr, 0};
    CTensor tb = {b, kCpu, 2, {CT_FLOAT, 32, 1}, bs, nullptr, 0};
    CTensor ty = {y, kCpu, 2, {CT_FLOAT, 32, 1}, ys, nullptr, 0};
    const CTensor* t[4] = {&ta, &tb, nullptr, &ty};
    CTGemmReluDesc desc = {sizeof(CTGemmReluDesc), 1.0f};
    unsigned char ws[256];
    for (int i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      if (i % 4 == 3) {  // a plan: create, execute, destroy
        CTPlan* plan = nullptr;
        const CTStatus s = ct_plan_create(op, &desc, t, 4, nullptr, &plan);
        note(s);
        if (s == CT_OK) {
          note(ct_plan_execute(plan, t, 4, ws, sizeof ws, nullptr));
          ct_plan_destroy(plan);
        }
      } else {
        size_t bytes = 0;
        CTStatus s = ct_nn_workspace_size(op, &desc, t, 4, &bytes);
        if (s == CT_OK) s = ct_nn(op, &desc, t, 4, ws, sizeof ws, nullptr);
        note(s);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back(caller, t);
  int waits = 0;
  for (int round = 0; round < 200; ++round) {
    REQUIRE(ct_library_unload(lib) == CT_OK);
    std::this_thread::yield();
    const CTStatus s = load_again(kCustomOps, &lib, &waits);
    if (s != CT_OK) {
      stop = true;
      for (std::thread& t : threads) t.join();
      FAIL("reload " << round << ": " << status_and_message(s));
    }
    std::this_thread::yield();
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  REQUIRE(ct_library_unload(lib) == CT_OK);
  INFO("calls: " << ok << " CT_OK, " << gone << " CT_ERR_NOT_FOUND, " << other << " other (first: " << first_other
                 << "); " << waits << " reloads refused while a call or plan still ran");
  CHECK(other == 0);
  CHECK(ok > 0);
}

// ---------------------------------------------------------------------------
// [library_nn]: ct_op_example (ABI 1.2), the example calls of an NN plugin op
// that tools (ctensor check, ctensor bench) make valid calls from.
// ---------------------------------------------------------------------------

namespace {

// ct_op_example's outputs, filled with a pattern first so that a failed call
// can be seen to leave them untouched.
struct ExampleOut {
  unsigned char desc[64];
  int32_t ndim[CT_NN_MAX_TENSORS];
  int64_t shape[CT_NN_MAX_TENSORS][CT_MAX_NDIM];
  ExampleOut() {
    std::memset(desc, 0x5A, sizeof desc);
    std::memset(ndim, 0x5A, sizeof ndim);
    std::memset(shape, 0x5A, sizeof shape);
  }
  bool untouched() const {
    const ExampleOut fresh;
    return std::memcmp(desc, fresh.desc, sizeof desc) == 0 && std::memcmp(ndim, fresh.ndim, sizeof ndim) == 0 &&
           std::memcmp(shape, fresh.shape, sizeof shape) == 0;
  }
  std::vector<int64_t> dims(int i) const { return std::vector<int64_t>(shape[i], shape[i] + ndim[i]); }
};

}  // namespace

TEST_CASE("library_nn: gemm_relu's examples are valid ct_nn calls", "[library_nn]") {
  Loaded l(kCustomOps);
  const int32_t op = gemm_relu_op();
  int with_bias = 0, without_bias = 0, count = 0;
  for (int32_t i = 0; i < 100; ++i) {
    INFO("example " << i << " of size 0");
    ExampleOut e;
    const CTStatus s = ct_op_example(op, i, 0, e.desc, sizeof e.desc, 3, e.ndim, e.shape);
    if (s == CT_ERR_NOT_FOUND) {
      CHECK(contains(last_error(), "ct_op_example: gemm_relu has no example index=" + std::to_string(i) +
                                       " of size=0"));
      CHECK(e.untouched());
      break;
    }
    INFO(status_and_message(s));
    REQUIRE(s == CT_OK);
    ++count;
    // The descriptor: desc_size bytes written, the rest of desc as it was.
    CTGemmReluDesc desc;
    std::memcpy(&desc, e.desc, sizeof desc);
    CHECK(desc.struct_size == sizeof(CTGemmReluDesc));
    for (size_t k = sizeof desc; k < sizeof e.desc; ++k) CHECK(e.desc[k] == 0x5A);
    REQUIRE(e.ndim[0] == 2);
    REQUIRE(e.ndim[1] == 2);
    REQUIRE((e.ndim[2] == 1 || e.ndim[2] == -1));
    (e.ndim[2] == 1 ? with_bias : without_bias)++;
    const std::vector<int64_t> as = e.dims(0), bs = e.dims(1);
    CHECK(as[0] * as[1] + bs[0] * bs[1] <= 2000);  // small: a check case
    // Random inputs of those shapes, y as ct_op_output_info says: a valid call.
    HostTensor a = random_tensor(DT_F32, as, 0, 80 + (uint64_t)i, -1, 1);
    HostTensor b = random_tensor(DT_F32, bs, 0, 90 + (uint64_t)i, -1, 1);
    HostTensor bias = random_tensor(DT_F32, e.ndim[2] == 1 ? e.dims(2) : std::vector<int64_t>{1}, 0, 100, -1, 1);
    CTensor ta = a.view(), tb = b.view(), tc = bias.view();
    const CTensor* in[3] = {&ta, &tb, e.ndim[2] == 1 ? &tc : nullptr};
    CTOpArgs args;
    std::memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.desc = e.desc;
    CTOutputInfo out;
    REQUIRE(ct_op_output_info(op, &args, in, 3, &out, 1) == CT_OK);
    HostTensor y = HostTensor::compact(DT_F32, std::vector<int64_t>(out.shape, out.shape + out.ndim));
    CTensor ty = y.view();
    const CTensor* t[4] = {in[0], in[1], in[2], &ty};
    size_t bytes = 0;
    REQUIRE(ct_nn_workspace_size(op, e.desc, t, 4, &bytes) == CT_OK);
    std::vector<unsigned char> ws(bytes);
    const CTStatus r = ct_nn(op, e.desc, t, 4, ws.data(), bytes, nullptr);
    INFO(status_and_message(r));
    REQUIRE(r == CT_OK);
    check_gemm(y, want_gemm_relu(a, b, e.ndim[2] == 1 ? &bias : nullptr, desc.alpha), 1e-5 * (double)as[1]);
  }
  CHECK(count == 3);
  CHECK(with_bias >= 1);
  CHECK(without_bias >= 1);

  SECTION("size 1: one large example, beyond the caches") {
    ExampleOut e;
    REQUIRE(ct_op_example(op, 0, 1, e.desc, sizeof e.desc, 3, e.ndim, e.shape) == CT_OK);
    CTensor ta{nullptr, kCpu, e.ndim[0], {CT_FLOAT, 32, 1}, e.shape[0], nullptr, 0};
    CTensor tb{nullptr, kCpu, e.ndim[1], {CT_FLOAT, 32, 1}, e.shape[1], nullptr, 0};
    CTensor tc{nullptr, kCpu, e.ndim[2], {CT_FLOAT, 32, 1}, e.shape[2], nullptr, 0};
    const CTensor* in[3] = {&ta, &tb, e.ndim[2] >= 0 ? &tc : nullptr};
    CTOpArgs args;
    std::memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.desc = e.desc;
    CTOutputInfo out;
    REQUIRE(ct_op_output_info(op, &args, in, 3, &out, 1) == CT_OK);
    int64_t bytes = 4;
    for (int32_t d = 0; d < out.ndim; ++d) bytes *= out.shape[d];
    CHECK(bytes >= (int64_t(8) << 20));  // the output alone: 8 MiB or more
    ExampleOut past;
    expect_status(ct_op_example(op, 1, 1, past.desc, sizeof past.desc, 3, past.ndim, past.shape), CT_ERR_NOT_FOUND,
                  {"ct_op_example", "gemm_relu", "index=1", "size=1"});
    CHECK(past.untouched());
  }
}

TEST_CASE("library_nn: ct_op_example checks its arguments; outputs untouched", "[library_nn]") {
  Loaded l(kCustomOps);
  const int32_t op = gemm_relu_op();
  const int32_t bias_gelu = find_op(CUSTOM_OPS_BIAS_GELU);
  ExampleOut e;
  const size_t dsize = sizeof(CTGemmReluDesc);
  struct Bad {
    const char* what;
    CTStatus status;
    CTStatus (*call)(int32_t op, int32_t other, ExampleOut& e, size_t dsize);
    std::vector<std::string> subs;
  };
  const std::vector<Bad> bad = {
      {"NULL ndim", CT_ERR_INVALID_ARGUMENT,
       [](int32_t op, int32_t, ExampleOut& e, size_t) { return ct_op_example(op, 0, 0, e.desc, 64, 3, nullptr, e.shape); },
       {"ct_op_example", "ndim is NULL", "gemm_relu"}},
      {"NULL shape", CT_ERR_INVALID_ARGUMENT,
       [](int32_t op, int32_t, ExampleOut& e, size_t) { return ct_op_example(op, 0, 0, e.desc, 64, 3, e.ndim, nullptr); },
       {"ct_op_example", "shape is NULL"}},
      {"NULL desc", CT_ERR_INVALID_ARGUMENT,
       [](int32_t op, int32_t, ExampleOut& e, size_t) { return ct_op_example(op, 0, 0, nullptr, 64, 3, e.ndim, e.shape); },
       {"ct_op_example", "desc is NULL", "desc_size=8"}},
      {"wrong num_inputs", CT_ERR_INVALID_ARGUMENT,
       [](int32_t op, int32_t, ExampleOut& e, size_t) { return ct_op_example(op, 0, 0, e.desc, 64, 2, e.ndim, e.shape); },
       {"ct_op_example", "num_inputs=2", "gemm_relu takes 3 input(s)"}},
      {"short desc_bytes", CT_ERR_INVALID_ARGUMENT,
       [](int32_t op, int32_t, ExampleOut& e, size_t d) {
         return ct_op_example(op, 0, 0, e.desc, d - 1, 3, e.ndim, e.shape);
       },
       {"ct_op_example", "desc_bytes=7", "desc_size=8"}},
      {"size 2", CT_ERR_INVALID_ARGUMENT,
       [](int32_t op, int32_t, ExampleOut& e, size_t) { return ct_op_example(op, 0, 2, e.desc, 64, 3, e.ndim, e.shape); },
       {"ct_op_example", "size=2", "0 (small"}},
      {"negative index", CT_ERR_INVALID_ARGUMENT,
       [](int32_t op, int32_t, ExampleOut& e, size_t) { return ct_op_example(op, -1, 0, e.desc, 64, 3, e.ndim, e.shape); },
       {"ct_op_example", "index=-1"}},
      {"a built-in NN op", CT_ERR_NOT_FOUND,
       [](int32_t, int32_t, ExampleOut& e, size_t) {
         return ct_op_example(CT_OP_MATMUL, 0, 0, e.desc, 64, 3, e.ndim, e.shape);
       },
       {"ct_op_example", "matmul", "has no examples", "built-in"}},
      {"a built-in elementwise op", CT_ERR_UNSUPPORTED,
       [](int32_t, int32_t, ExampleOut& e, size_t) {
         return ct_op_example(CT_OP_ADD, 0, 0, e.desc, 64, 2, e.ndim, e.shape);
       },
       {"ct_op_example", "add", "binary op", "examples are for NN ops"}},
      {"an elementwise plugin op", CT_ERR_UNSUPPORTED,
       [](int32_t, int32_t other, ExampleOut& e, size_t) {
         return ct_op_example(other, 0, 0, e.desc, 64, 2, e.ndim, e.shape);
       },
       {"ct_op_example", "bias_gelu", "binary op", "examples are for NN ops"}},
      {"an op id that names no op", CT_ERR_NOT_FOUND,
       [](int32_t, int32_t, ExampleOut& e, size_t) { return ct_op_example(99999, 0, 0, e.desc, 64, 3, e.ndim, e.shape); },
       {"ct_op_example", "op=99999", "not an op id"}},
  };
  for (const Bad& b : bad) {
    INFO(b.what);
    expect_status(b.call(op, bias_gelu, e, dsize), b.status, b.subs);
    CHECK(e.untouched());
  }
  // The same call with good arguments succeeds; after the unload, the op is gone.
  REQUIRE(ct_op_example(op, 0, 0, e.desc, sizeof e.desc, 3, e.ndim, e.shape) == CT_OK);
  ExampleOut after;
  l.unload();
  expect_status(ct_op_example(op, 0, 0, after.desc, sizeof after.desc, 3, after.ndim, after.shape), CT_ERR_NOT_FOUND,
                {"ct_op_example", "unloaded"});
  CHECK(after.untouched());
}

TEST_CASE("library_nn: a plugin's wrong example is a clear error, never a crash; outputs untouched", "[library_nn]") {
  Loaded l(CT_TPLUG_BAD_EXAMPLE);
  const int32_t op = find_op("tplug_bad_example");
  struct Fault {
    int32_t index;
    CTStatus status;
    std::vector<std::string> subs;
  };
  const std::vector<Fault> faults = {
      {0, CT_ERR_BACKEND, {"ct_op_example", "tplug_bad_example's example (index=0, size=0) gave ndim=-1 for x",
                           "not optional"}},
      {1, CT_ERR_BACKEND, {"ct_op_example", "(index=1, size=0) gave ndim=" + std::to_string(CT_MAX_NDIM + 1) + " for x",
                           "0.." + std::to_string(CT_MAX_NDIM) + " dims"}},
      {2, CT_ERR_BACKEND, {"ct_op_example", "(index=2, size=0) gave x.shape[1]=-4"}},
      {3, CT_ERR_BACKEND, {"ct_op_example", "(index=3, size=0) returned CT_OK without writing ndim[1] (w)"}},
      {4, CT_ERR_BACKEND, {"ct_op_example", "(index=4, size=0) returned 42, not a CTStatus"}},
      {5, CT_ERR_BACKEND, {"ct_op_example", "(index=5, size=0) is not a call the op accepts",
                           "x must have at least one dim"}},
      {6, CT_ERR_OUT_OF_MEMORY, {"ct_op_example", "(index=6, size=0) failed with CT_ERR_OUT_OF_MEMORY",
                                 "tplug_bad_example: no memory for example 6"}},
      {9, CT_ERR_NOT_FOUND, {"ct_op_example", "tplug_bad_example has no example index=9 of size=0"}},
  };
  for (const Fault& f : faults) {
    INFO("index " << f.index);
    ExampleOut e;
    expect_status(ct_op_example(op, f.index, 0, e.desc, sizeof e.desc, 2, e.ndim, e.shape), f.status, f.subs);
    CHECK(e.untouched());
  }
  // Its valid examples: x (2, 3) with w (3,), and without w (-1).
  for (int32_t index : {7, 8}) {
    ExampleOut e;
    REQUIRE(ct_op_example(op, index, 0, e.desc, sizeof e.desc, 2, e.ndim, e.shape) == CT_OK);
    CHECK(e.dims(0) == std::vector<int64_t>{2, 3});
    CHECK(e.ndim[1] == (index == 7 ? 1 : -1));
    if (index == 7) CHECK(e.dims(1) == std::vector<int64_t>{3});
    uint32_t ss = 0;
    std::memcpy(&ss, e.desc, sizeof ss);
    CHECK(ss == 4);
    CHECK(e.desc[4] == 0x5A);  // desc_size (4) bytes written, no more
  }
  ExampleOut e;
  expect_status(ct_op_example(op, 0, 1, e.desc, sizeof e.desc, 2, e.ndim, e.shape), CT_ERR_NOT_FOUND,
                {"has no example index=0 of size=1"});
  CHECK(e.untouched());
  builtin_add_works();
}
