// softmax and log_softmax on each GPU module's device against the CPU, on
// lines long enough for the work-group-per-line kernel ("_b": CUDA always,
// OpenCL on a GPU layout, which CT_OPENCL_CHUNK=1 gives PoCL: the ctest
// catch2_opencl_one_element_per_item) and short enough for the
// one-line-per-work-item one ("_a"): contiguous and strided lines, in
// place, lines with NaN, infinities and huge magnitudes; the bytes of the
// output's buffer outside its view untouched. The GPU result must also be
// the same bits on a second run (a fixed merge tree).
#include <catch2/catch.hpp>
#include <ctensor/ctensor.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"

using namespace ctt;

namespace {

bool has_device(CTDevice d) {
  for (const TestDevice& t : all_devices())
    if (t.dev.device_type == d.device_type && t.dev.device_id == d.device_id) return true;
  return false;
}

struct Case {
  std::vector<int64_t> shape;
  int axis;
  int layout;  // make_layout's variant: 0 compact, 1 column-major, 2 padded with a negative stride
};

// Values: random in [-8, 8]; some lines get NaN, +inf, all -inf or +-1e4.
void fill(HostTensor& x, const Case& c, uint64_t seed) {
  Rng r(seed);
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) x.set(i, r.uniform(-8, 8));
  // line k of the first four: the line through element 0, 1, 2, 3 of the other axes
  std::vector<int64_t> st(c.shape.size(), 1);
  for (int d = (int)c.shape.size() - 2; d >= 0; --d) st[(size_t)d] = st[(size_t)d + 1] * c.shape[(size_t)d + 1];
  const int64_t len = c.shape[(size_t)c.axis], lines = n / len;
  for (int64_t k = 0; k < std::min<int64_t>(lines, 4); ++k) {
    // the k-th line: other coordinates from k
    int64_t base = 0, rest = k;
    for (int d = (int)c.shape.size() - 1; d >= 0; --d) {
      if (d == c.axis) continue;
      base += (rest % c.shape[(size_t)d]) * st[(size_t)d];
      rest /= c.shape[(size_t)d];
    }
    const int64_t s = st[(size_t)c.axis];
    for (int64_t j = 0; j < len; ++j) {
      double v = x.get(base + j * s);
      if (k == 0 && j == len / 3) v = NAN;
      if (k == 1 && j == len / 2) v = INFINITY;
      if (k == 2) v = -INFINITY;
      if (k == 3) v = (j % 2 ? 1e4 : -1e4) + j;
      x.set(base + j * s, v);
    }
  }
}

void run_case(CTDevice dev, int32_t op, int d, const Case& c, bool in_place) {
  const std::string what = std::string(op == CT_OP_SOFTMAX ? "softmax" : "log_softmax") + " " + dtype(d).name + " " +
                           shape_str(c.shape) + " axis " + std::to_string(c.axis) + " layout " +
                           std::to_string(c.layout) + (in_place ? " in place" : "");
  INFO(what);
  HostTensor x = make_layout(d, c.shape, c.layout);
  fill(x, c, 17 + (uint64_t)c.layout);
  HostTensor want = make_layout(d, c.shape, c.layout);
  CTensor xv = x.view(), wv = want.view();
  REQUIRE(ct_along_axis(op, &xv, c.axis, &wv, nullptr) == CT_OK);
  std::vector<unsigned char> first;
  for (int run = 0; run < 2; ++run) {
    HostTensor in = x;  // the input again: in place overwrites it
    HostTensor out = make_layout(d, c.shape, c.layout);
    out.fill_bytes(0xA5);
    const std::vector<unsigned char> before = out.bytes();
    DeviceMirror mx(dev, in), mo(dev, out);
    REQUIRE(mx.status() == CT_OK);
    REQUIRE(mo.status() == CT_OK);
    CTensor dx = mx.view(), dout = in_place ? mx.view() : mo.view();
    const CTStatus s = ct_along_axis(op, &dx, c.axis, &dout, nullptr);
    INFO(ct_last_error());
    REQUIRE(s == CT_OK);
    REQUIRE(ct_synchronize(dev, nullptr) == CT_OK);
    REQUIRE((in_place ? mx.fetch() : mo.fetch()) == CT_OK);
    const HostTensor& got = in_place ? in : out;
    if (run == 0) first = got.bytes();
    else CHECK(got.bytes() == first);  // the same bits on every run
    if (!in_place) {  // the output buffer's bytes outside the view untouched
      const std::vector<unsigned char> after = got.bytes();
      const std::vector<char> cov = covered(got);
      bool pad_ok = true;
      for (size_t k = 0; k < after.size(); ++k)
        if (!cov[k] && after[k] != before[k]) pad_ok = false;
      CHECK(pad_ok);
    }
  }
  // against the CPU: each summed in its own order (and the device in double where it has it)
  HostTensor res = want;
  std::memcpy(res.buf(), first.data(), first.size());
  const double rtol = d == DT_F64 ? 1e-12 : d == DT_F32 ? 4e-6 : 2e-3;
  // log_softmax's (x - max) - log(sum) cancels near 0: an absolute error of
  // a few ulps of the terms (|x| <= 8 here; the CPU computes float32 in float)
  const bool log = op == CT_OP_LOG_SOFTMAX;
  const double atol = d == DT_F64 ? (log ? 1e-14 : 1e-300) : d == DT_F32 ? (log ? 4e-6 : 1e-37) : (log ? 1e-4 : 1e-7);
  int bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = res.get(i), b = want.get(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;
    if (!(std::fabs(a - b) <= atol + rtol * std::fabs(b)) && bad++ < 5)
      FAIL_CHECK("element " << i << ": device " << fmt(a) << ", CPU " << fmt(b));
  }
  CHECK(bad == 0);
}

void along_cases(CTDevice dev) {
  const Case cases[] = {
      {{3, 1000}, 1, 0},     // long contiguous lines: _b
      {{1000, 3}, 0, 0},     // long strided lines: _b
      {{2, 300, 5}, 1, 2},   // padded, negative stride: _b
      {{64, 4096}, 1, 1},    // column-major: _b with stride-64 elements
      {{5, 128}, 1, 0},      // the shortest _b line
      {{7, 127}, 1, 0},      // the longest _a line
      {{300, 9}, 1, 3},      // short lines: _a
  };
  for (int d : {DT_F32, DT_F64, DT_F16}) {
    if (ct_op_supported(CT_OP_SOFTMAX, dev, dtype(d).dt) != CT_OK) {
      WARN("softmax " << dtype(d).name << " is not supported on this device: " << ct_last_error());
      continue;
    }
    for (int32_t op : {CT_OP_SOFTMAX, CT_OP_LOG_SOFTMAX})
      for (const Case& c : cases)
        for (bool in_place : {false, true}) run_case(dev, op, d, c, in_place);
  }
}

}  // namespace

TEST_CASE("opencl: softmax and log_softmax on long and short lines agree with the CPU, same bits every run",
          "[opencl]") {
  if (!has_device({CT_OPENCL, 0})) {
    WARN("no OpenCL device: checked nothing");
    return;
  }
  along_cases({CT_OPENCL, 0});
}

TEST_CASE("cuda: softmax and log_softmax on long and short lines agree with the CPU, same bits every run", "[cuda]") {
  if (!has_device({CT_CUDA, 0})) {
    WARN("no CUDA device: checked nothing");
    return;
  }
  along_cases({CT_CUDA, 0});
}
