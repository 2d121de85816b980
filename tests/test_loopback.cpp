// test_loopback.cpp — the loopback test backend (tests/backends/loopback: a
// shared library built against plugin.h only, registered by the test runner)
// through the public API: its devices are listed, data crosses host <->
// ext:0 <-> ext:1 exactly, ct_cast converts across devices, mixed devices
// and foreign streams are refused with the backend's message, unsupported
// ops say why, outputs stay untouched on failure, and nothing is allocated
// on the device behind the caller's back or leaked (the runner also checks
// that the device holds no allocation after the whole run).
//
// The conformance suites that walk every device (test_generic.cpp) check
// its kernels' values; these cases check the plumbing around them.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "loopback.h"
#include "test_util.h"

using namespace ctt;

namespace {

const CTDevice kHost = {CT_CPU, 0};
const CTDevice kExt0 = {CT_EXT_DEV, 0};
const CTDevice kExt1 = {CT_EXT_DEV, 1};

CTLoopbackStats stats() {
  CTLoopbackStats s;
  ct_loopback_stats(&s);
  return s;
}

// A tensor on a loopback device with the given layout, filled from (and
// read back into) a host tensor of the same layout through DeviceMirror.
struct OnDevice {
  HostTensor h;
  DeviceMirror m;
  OnDevice(CTDevice dev, HostTensor host) : h(std::move(host)), m(dev, h) { REQUIRE(m.status() == CT_OK); }
  CTensor view() const { return m.view(); }
  // The device's bytes, back on the host.
  std::vector<unsigned char> bytes() {
    REQUIRE(m.fetch() == CT_OK);
    return h.bytes();
  }
};

HostTensor sentinel(int d, std::vector<int64_t> shape, int layout = 3) {
  HostTensor t = make_layout(d, shape, layout);
  t.fill_bytes(0x5A);
  return t;
}

HostTensor random_bits(int d, std::vector<int64_t> shape, int layout, uint64_t seed) {
  HostTensor t = make_layout(d, shape, layout);
  Rng rng(seed);
  unsigned char* b = t.buf();
  for (size_t i = 0; i < t.buffer_bytes; ++i) b[i] = (unsigned char)rng.next();
  if (d == DT_BOOL)  // bool elements are 0 or 1
    for (int64_t i = 0; i < t.numel(); ++i) t.set_i(i, (int64_t)(rng.next() & 1));
  return t;
}

HostTensor values(int d, std::vector<int64_t> shape, int layout, uint64_t seed) {
  HostTensor t = make_layout(d, shape, layout);
  Rng rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, std::round(rng.uniform(-100, 100) * 8) / 8);
  return t;
}

// Every element of a equals the one of b, bit for bit.
bool same_elements(const HostTensor& a, const HostTensor& b) {
  if (a.numel() != b.numel()) return false;
  const int sz = dtype(a.d).size;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::memcmp(a.at(i), b.at(i), (size_t)sz) != 0) return false;
  return true;
}

// The bytes of t's buffer outside its elements are still `fill`.
bool padding_is(const HostTensor& t, unsigned char fill) {
  const std::vector<char> cov = covered(t);
  const std::vector<unsigned char> b = t.bytes();
  for (size_t i = 0; i < b.size(); ++i)
    if (!cov[i] && b[i] != fill) return false;
  return true;
}

void expect_error(CTStatus got, CTStatus want, std::vector<std::string> words) {
  const std::string msg = last_error();
  INFO("status " << ct_status_string(got) << ", message \"" << msg << "\"");
  CHECK(got == want);
  for (const std::string& w : words) {
    INFO("the message should contain \"" << w << "\"");
    CHECK(contains(msg, w));
  }
}

}  // namespace

TEST_CASE("loopback: the devices list shows its two CT_EXT_DEV devices", "[loopback]") {
  const std::vector<TestDevice> devs = all_devices();
  REQUIRE(devs.size() >= 3);
  CHECK(devs[0].cpu);  // built-in backends register first
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < ct_device_count(); ++i) {
    CTDeviceInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(ct_device_info(i, &info) == CT_OK);
    if (std::string(info.backend) != "loopback") continue;
    CHECK(info.device.device_type == CT_EXT_DEV);
    CHECK(std::strlen(info.name) > 0);
    CHECK(contains(info.name, "loopback"));
    ids.push_back(info.device.device_id);
  }
  CHECK(ids == std::vector<int32_t>{0, 1});
  CHECK(ct_synchronize(kExt1, nullptr) == CT_OK);
  expect_error(ct_synchronize(CTDevice{CT_EXT_DEV, 2}, nullptr), CT_ERR_NOT_FOUND, {"ct_synchronize", "loopback", "2"});
  // The device type is taken: a second registration is refused, and changes nothing.
  expect_error(ct_loopback_register(ct_plugin_host()), CT_ERR_INVALID_ARGUMENT, {"already registered", "loopback"});
  CHECK(ct_device_count() == (int32_t)devs.size());
}

TEST_CASE("loopback: ct_copy host -> ext:0 -> ext:1 -> host round-trips strided data exactly", "[loopback]") {
  const CTLoopbackStats s0 = stats();
  {
    for (int d : {DT_F16, DT_I8, DT_F64, DT_BOOL, DT_I64, DT_BF16}) {
      INFO("dtype " << dtype(d).name);
      const std::vector<int64_t> shape = {5, 4, 3};
      // host: a reversed dim and a byte_offset; ext:0 column-major; ext:1
      // padded rows; back on the host into padded rows full of a sentinel.
      HostTensor src = random_bits(d, shape, 2, 100 + d);
      OnDevice a(kExt0, sentinel(d, shape, 1)), b(kExt1, sentinel(d, shape, 3));
      HostTensor dst = sentinel(d, shape, 3);
      CTensor sv = src.view(), av = a.view(), bv = b.view(), dv = dst.view(false);
      const CTLoopbackStats before = stats();
      REQUIRE(ct_copy(&sv, &av, nullptr) == CT_OK);
      CTLoopbackStream s1 = {CT_LOOPBACK_STREAM_MAGIC, 1, 0};
      REQUIRE(ct_copy(&av, &bv, &s1) == CT_OK);  // between two devices: the stream of the destination
      CHECK(s1.ops == 1);
      REQUIRE(ct_copy(&bv, &dv, nullptr) == CT_OK);
      const CTLoopbackStats after = stats();
      CHECK(after.copies - before.copies == 3);  // host->0, 0->1 (directly: one backend owns both), 1->host
      CHECK(same_elements(src, dst));
      CHECK(padding_is(dst, 0x5A));
      // The device's memory is encoded: the values were not memcpy'd there.
      const unsigned char* raw = static_cast<const unsigned char*>(av.data) + av.byte_offset;
      CHECK_FALSE(std::memcmp(raw, src.at(0), (size_t)dtype(d).size) == 0);
      // within one device, through its cast kernel (same dtype), strided both sides
      OnDevice c(kExt0, sentinel(d, shape, 2));
      CTensor cv = c.view();
      REQUIRE(ct_copy(&av, &cv, nullptr) == CT_OK);
      REQUIRE(c.m.fetch() == CT_OK);
      CHECK(same_elements(src, c.h));
      CHECK(padding_is(c.h, 0x5A));
    }
  }
  CHECK(stats().live == s0.live);
  CHECK(stats().bad_frees == 0);
}

TEST_CASE("loopback: ct_cast across devices, and where its temporary memory comes from", "[loopback]") {
  const CTLoopbackStats s0 = stats();
  {
    const std::vector<int64_t> shape = {6, 7};
    HostTensor x = values(DT_F64, shape, 2, 7);
    // host f64 -> ext:0 f32 (converted on ext:0), -> ext:1 f64, -> host int32,
    // and ext:1 f64 -> host float16 (converted on the host).
    OnDevice a(kExt0, sentinel(DT_F32, shape, 1)), b(kExt1, sentinel(DT_F64, shape, 3));
    HostTensor y = sentinel(DT_I32, shape, 3), h = sentinel(DT_F16, shape, 0);
    CTensor xv = x.view(), av = a.view(), bv = b.view(), yv = y.view(), hv = h.view();
    CTLoopbackStats before = stats();
    REQUIRE(ct_cast(&xv, &av, nullptr) == CT_OK);
    CTLoopbackStats after = stats();
    CHECK(after.temp_allocs - before.temp_allocs == 1);  // the copy of x on ext:0, from its default allocator
    CHECK(after.mallocs == before.mallocs);              // never its malloc slot behind the caller's back
    CHECK(after.live == before.live);
    REQUIRE(ct_cast(&av, &bv, nullptr) == CT_OK);
    REQUIRE(ct_cast(&bv, &yv, nullptr) == CT_OK);
    REQUIRE(ct_cast(&bv, &hv, nullptr) == CT_OK);
    REQUIRE(b.m.fetch() == CT_OK);
    for (int64_t i = 0; i < x.numel(); ++i) {
      INFO("element " << i);
      const double v = (double)(float)x.get(i);
      CHECK(b.h.get(i) == v);
      CHECK(y.get_i(i) == (int64_t)std::trunc(v));
      CHECK(h.get(i) == round_to(v, DT_F16));
    }
    CHECK(padding_is(y, 0x5A));

    // With a stream of the device that is not the host, both ways.
    CTLoopbackStream s = {CT_LOOPBACK_STREAM_MAGIC, 0, 0};
    REQUIRE(ct_cast(&xv, &av, &s) == CT_OK);
    CHECK(s.ops >= 2);  // the copy and the conversion ran on it
    CTensor yv2 = yv;
    OnDevice a32(kExt0, values(DT_F32, shape, 0, 9));
    CTensor a32v = a32.view();
    const uint64_t ops = s.ops;
    CTStatus st = ct_cast(&a32v, &yv2, &s);  // ext:0 f32 -> host int32: copied on the stream, converted on the host
    INFO(ct_last_error());
    REQUIRE(st == CT_OK);
    CHECK(s.ops == ops + 1);
    for (int64_t i = 0; i < a32.h.numel(); ++i) CHECK(y.get_i(i) == (int64_t)std::trunc(a32.h.get(i)));

    // A caller's allocator for the device type: the temporary comes from it.
    struct Counting {
      int allocs = 0, frees = 0;
    } counting;
    CTAllocator al;
    std::memset(&al, 0, sizeof al);
    al.struct_size = sizeof al;
    al.user = &counting;
    al.alloc = [](void* user, CTDevice dev, size_t bytes, void*, void** ptr) -> CTStatus {
      ++static_cast<Counting*>(user)->allocs;
      return ct_malloc(dev, bytes, ptr);
    };
    al.free = [](void* user, CTDevice dev, void* ptr, void*) {
      ++static_cast<Counting*>(user)->frees;
      ct_free(dev, ptr);
    };
    REQUIRE(ct_set_allocator(CT_EXT_DEV, &al) == CT_OK);
    before = stats();
    st = ct_cast(&xv, &bv, nullptr);  // host f64 -> ext:1 f64: a plain copy, no temporary
    CTStatus st2 = ct_cast(&xv, &av, nullptr);  // host f64 -> ext:0 f32: converted in a temporary
    after = stats();
    REQUIRE(ct_set_allocator(CT_EXT_DEV, nullptr) == CT_OK);
    CHECK(st == CT_OK);
    CHECK(st2 == CT_OK);
    CHECK(counting.allocs == 1);
    CHECK(counting.frees == 1);
    CHECK(after.mallocs - before.mallocs == counting.allocs);  // every device allocation was the caller's
    CHECK(after.temp_allocs == before.temp_allocs);
    CHECK(after.live == before.live);
  }
  CHECK(stats().live == s0.live);
}

TEST_CASE("loopback: ops run through its kernels and allocate nothing", "[loopback]") {
  const CTLoopbackStats s0 = stats();
  {
    OnDevice x(kExt0, values(DT_F32, {4, 5}, 2, 11)), row(kExt0, values(DT_F32, {5}, 0, 12));
    OnDevice y(kExt0, sentinel(DT_F32, {4, 5})), r(kExt0, sentinel(DT_F32, {4}, 0)),
        sm(kExt0, sentinel(DT_F32, {4, 5}));
    CTensor xv = x.view(), rowv = row.view(), yv = y.view(), rv = r.view(), smv = sm.view();
    const CTLoopbackStats before = stats();
    REQUIRE(ct_unary(CT_OP_NEG, &xv, &yv, nullptr) == CT_OK);
    REQUIRE(ct_binary(CT_OP_ADD, &yv, &rowv, &yv, nullptr) == CT_OK);  // broadcast, in place
    const int32_t axis = 1;
    REQUIRE(ct_reduce(CT_OP_SUM, &yv, &axis, 1, 0, nullptr, 0, &rv, nullptr) == CT_OK);
    REQUIRE(ct_along_axis(CT_OP_SOFTMAX, &yv, -1, &smv, nullptr) == CT_OK);
    const CTLoopbackStats after = stats();
    CHECK(after.kernels - before.kernels == 4);
    CHECK(after.mallocs == before.mallocs);
    CHECK(after.temp_allocs == before.temp_allocs);
    REQUIRE(y.m.fetch() == CT_OK);
    REQUIRE(r.m.fetch() == CT_OK);
    for (int64_t i = 0; i < 4; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < 5; ++j) {
        const double want = (double)(float)(-(float)x.h.get(i * 5 + j) + (float)row.h.get(j));
        CHECK(y.h.get(i * 5 + j) == want);
        sum += want;
      }
      CHECK(r.h.get(i) == Approx(sum).epsilon(1e-6));
    }
  }
  CHECK(stats().live == s0.live);
}

TEST_CASE("loopback: an op with operands on different devices is CT_ERR_DEVICE_MISMATCH", "[loopback]") {
  const std::vector<int64_t> shape = {3, 4};
  OnDevice x0(kExt0, values(DT_F32, shape, 0, 1)), x1(kExt1, values(DT_F32, shape, 0, 2));
  OnDevice o0(kExt0, sentinel(DT_F32, shape)), o1(kExt1, sentinel(DT_F32, shape));
  HostTensor xh = values(DT_F32, shape, 0, 3), oh = sentinel(DT_F32, shape);
  CTensor x0v = x0.view(), x1v = x1.view(), o0v = o0.view(), o1v = o1.view(), xhv = xh.view(), ohv = oh.view();
  const std::vector<unsigned char> b0 = o0.bytes(), b1 = o1.bytes(), bh = oh.bytes();
  expect_error(ct_unary(CT_OP_EXP, &x0v, &o1v, nullptr), CT_ERR_DEVICE_MISMATCH, {"ct_unary", "x.device", "(12,0)", "(12,1)"});
  expect_error(ct_unary(CT_OP_EXP, &xhv, &o0v, nullptr), CT_ERR_DEVICE_MISMATCH, {"ct_unary", "(1,0)", "(12,0)"});
  expect_error(ct_unary(CT_OP_EXP, &x0v, &ohv, nullptr), CT_ERR_DEVICE_MISMATCH, {"ct_unary"});
  expect_error(ct_binary(CT_OP_ADD, &x0v, &x1v, &o0v, nullptr), CT_ERR_DEVICE_MISMATCH, {"ct_binary", "b.device"});
  const int32_t axis = 0;
  OnDevice r1(kExt1, sentinel(DT_F32, {4}, 0));
  CTensor r1v = r1.view();
  const std::vector<unsigned char> br = r1.bytes();
  expect_error(ct_reduce(CT_OP_SUM, &x0v, &axis, 1, 0, nullptr, 0, &r1v, nullptr), CT_ERR_DEVICE_MISMATCH, {"ct_reduce"});
  expect_error(ct_along_axis(CT_OP_SOFTMAX, &x1v, 0, &o0v, nullptr), CT_ERR_DEVICE_MISMATCH, {"ct_along_axis"});
  // Even an op the loopback has no kernel for: the devices are checked first.
  expect_error(ct_ternary(CT_OP_FMA, &x0v, &x0v, &x1v, &o0v, nullptr), CT_ERR_DEVICE_MISMATCH, {"ct_ternary"});
  CHECK(o0.bytes() == b0);
  CHECK(o1.bytes() == b1);
  CHECK(oh.bytes() == bh);
  CHECK(r1.bytes() == br);
}

TEST_CASE("loopback: a stream that is not its own is refused with the backend's message", "[loopback]") {
  const std::vector<int64_t> shape = {2, 3};
  OnDevice x(kExt0, values(DT_F64, shape, 0, 4)), o(kExt0, sentinel(DT_F64, shape));
  CTensor xv = x.view(), ov = o.view();
  const std::vector<unsigned char> before = o.bytes();
  CTCpuStream cpu;
  std::memset(&cpu, 0, sizeof cpu);
  cpu.struct_size = sizeof cpu;
  expect_error(ct_unary(CT_OP_ABS, &xv, &ov, &cpu), CT_ERR_INVALID_ARGUMENT, {"ct_unary", "not a loopback stream"});
  CTLoopbackStream other = {CT_LOOPBACK_STREAM_MAGIC, 1, 0};
  expect_error(ct_unary(CT_OP_ABS, &xv, &ov, &other), CT_ERR_INVALID_ARGUMENT,
               {"ct_unary", "belongs to loopback device 1, not to loopback device 0"});
  const int32_t axis = 0;
  OnDevice r(kExt0, sentinel(DT_F64, {3}, 0));
  CTensor rv = r.view();
  expect_error(ct_reduce(CT_OP_MAX, &xv, &axis, 1, 0, nullptr, 0, &rv, &cpu), CT_ERR_INVALID_ARGUMENT,
               {"ct_reduce", "not a loopback stream"});
  expect_error(ct_synchronize(kExt0, &cpu), CT_ERR_INVALID_ARGUMENT, {"ct_synchronize", "not a loopback stream"});
  HostTensor h = values(DT_F64, shape, 0, 5);
  CTensor hv = h.view();
  expect_error(ct_copy(&hv, &ov, &cpu), CT_ERR_INVALID_ARGUMENT, {"ct_copy", "not a loopback stream"});
  expect_error(ct_cast(&hv, &ov, &other), CT_ERR_INVALID_ARGUMENT, {"ct_cast", "loopback device 1"});
  CHECK(o.bytes() == before);
  CHECK(r.bytes() == std::vector<unsigned char>(r.h.buffer_bytes, 0x5A));
  // its own stream, on its own device, is accepted and used
  CTLoopbackStream mine = {CT_LOOPBACK_STREAM_MAGIC, 0, 0};
  REQUIRE(ct_unary(CT_OP_ABS, &xv, &ov, &mine) == CT_OK);
  REQUIRE(ct_synchronize(kExt0, &mine) == CT_OK);
  REQUIRE(ct_copy(&ov, &hv, &mine) == CT_OK);  // device -> host: the device's stream
  CHECK(mine.ops == 2);
  for (int64_t i = 0; i < h.numel(); ++i) CHECK(h.get(i) == std::fabs(x.h.get(i)));
}

TEST_CASE("loopback: an op it does not run says why", "[loopback]") {
  const std::vector<int64_t> shape = {2, 3};
  OnDevice x(kExt1, values(DT_F32, shape, 0, 6)), o(kExt1, sentinel(DT_F32, shape));
  CTensor xv = x.view(), ov = o.view();
  const std::vector<unsigned char> before = o.bytes();
  expect_error(ct_op_supported(CT_OP_SIN, kExt1, dtype(DT_F32).dt), CT_ERR_UNSUPPORTED,
               {"ct_op_supported", "loopback", "sin", "float32"});
  expect_error(ct_unary(CT_OP_SIN, &xv, &ov, nullptr), CT_ERR_UNSUPPORTED, {"ct_unary", "loopback", "sin", "float32"});
  expect_error(ct_binary(CT_OP_SUB, &xv, &xv, &ov, nullptr), CT_ERR_UNSUPPORTED, {"ct_binary", "loopback", "sub"});
  const double lohi[2] = {0, 1};
  expect_error(ct_unary_param(CT_OP_CLAMP, &xv, lohi, 2, &ov, nullptr), CT_ERR_UNSUPPORTED,
               {"ct_unary_param", "loopback", "clamp", "float32"});
  // a dtype the loopback has no kernel for, though the op has one for others
  OnDevice xi(kExt1, values(DT_I32, shape, 0, 8)), oi(kExt1, sentinel(DT_I32, shape));
  CTensor xiv = xi.view(), oiv = oi.view();
  expect_error(ct_unary(CT_OP_NEG, &xiv, &oiv, nullptr), CT_ERR_UNSUPPORTED, {"ct_unary", "loopback", "neg", "int32"});
  // the op's own rule comes first, on every device
  expect_error(ct_unary(CT_OP_EXP, &xiv, &oiv, nullptr), CT_ERR_UNSUPPORTED, {"exp is not defined for int32"});
  // no NN kernels at all
  expect_error(ct_op_supported(CT_OP_MATMUL, kExt0, dtype(DT_F32).dt), CT_ERR_UNSUPPORTED,
               {"ct_op_supported", "loopback", "NN ops", "matmul"});
  CTMatmulDesc md = {sizeof(CTMatmulDesc), CT_ACTIVATION_NONE};
  OnDevice mo(kExt1, sentinel(DT_F32, {2, 2}));
  CTensor mov = mo.view();
  OnDevice xt(kExt1, HostTensor::strided(DT_F32, {3, 2}, {1, 3}));
  CTensor xtv = xt.view();
  size_t bytes = 0;
  expect_error(ct_matmul_workspace_size(&md, &xv, &xtv, nullptr, &mov, &bytes), CT_ERR_UNSUPPORTED, {"loopback"});
  CHECK(o.bytes() == before);
  CHECK(oi.bytes() == std::vector<unsigned char>(oi.h.buffer_bytes, 0x5A));
}

TEST_CASE("loopback: outputs are untouched when a call fails", "[loopback]") {
  const std::vector<int64_t> shape = {4, 3};
  OnDevice x(kExt0, values(DT_F32, shape, 0, 13)), o(kExt0, sentinel(DT_F32, shape));
  OnDevice o64(kExt0, sentinel(DT_F64, shape)), small(kExt0, sentinel(DT_F32, {4, 2}));
  CTensor xv = x.view(), ov = o.view(), o64v = o64.view(), smallv = small.view();
  const std::vector<unsigned char> b = o.bytes(), b64 = o64.bytes(), bs = small.bytes();
  expect_error(ct_unary(CT_OP_EXP, &xv, &smallv, nullptr), CT_ERR_SHAPE_MISMATCH, {"ct_unary"});
  expect_error(ct_unary(CT_OP_EXP, &xv, &o64v, nullptr), CT_ERR_DTYPE_MISMATCH, {"ct_unary"});
  expect_error(ct_binary(CT_OP_ADD, &xv, &smallv, &ov, nullptr), CT_ERR_SHAPE_MISMATCH, {"ct_binary"});
  expect_error(ct_along_axis(CT_OP_SOFTMAX, &xv, 2, &ov, nullptr), CT_ERR_INVALID_ARGUMENT, {"axis"});
  // an output overlapping its input on the device (data is an address there)
  CTensor shifted = xv;
  shifted.byte_offset += 4;
  int64_t sh[2] = {4, 2};
  shifted.shape = sh;
  CTensor xpart = xv;
  xpart.shape = sh;
  int64_t st[2] = {3, 1};
  xpart.strides = st;
  shifted.strides = st;
  const std::vector<unsigned char> bx = x.bytes();
  expect_error(ct_unary(CT_OP_NEG, &xpart, &shifted, nullptr), CT_ERR_INVALID_ARGUMENT, {"overlaps"});
  // a copy into a device tensor of another shape
  HostTensor h = values(DT_F32, {4, 2}, 0, 14);
  CTensor hv = h.view();
  expect_error(ct_copy(&hv, &ov, nullptr), CT_ERR_SHAPE_MISMATCH, {"ct_copy"});
  CHECK(o.bytes() == b);
  CHECK(o64.bytes() == b64);
  CHECK(small.bytes() == bs);
  CHECK(x.bytes() == bx);
}
