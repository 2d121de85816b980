// Tests of the header-only C++ wrapper (include/ctensor/ctensor.hpp).
#include <catch2/catch.hpp>

#include <ctensor/ctensor.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

// 0, 1, ..., n-1 as float32 with @p shape.
ct::Tensor iota(const std::vector<int64_t>& shape) {
  ct::Tensor t = ct::Tensor::empty(shape, ct::dtype::float32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(i);
  return t;
}

std::vector<uint8_t> bytes_of(const ct::Tensor& t) {
  ct::Tensor c = t.contiguous();
  std::vector<uint8_t> b(c.nbytes());
  if (!b.empty()) std::memcpy(b.data(), c.data<void>(), b.size());
  return b;
}

bool dt_eq(CTDataType a, CTDataType b) { return ct::dtype::equal(a, b); }

}  // namespace

TEST_CASE("ct::Error keeps a copy of the library message", "[cpp]") {
  std::string message;
  CTStatus status = CT_OK;
  try {
    ct::sqrt(ct::Tensor::from({1, 2, 3}));  // int32: sqrt is float-only
  } catch (const ct::Error& e) {
    message = e.what();
    status = e.status();
  }
  REQUIRE(status == CT_ERR_UNSUPPORTED);
  REQUIRE(message.find("sqrt") != std::string::npos);
  REQUIRE(message.find("int32") != std::string::npos);

  // A later successful call clears the thread's message; the copy survives.
  ct::Error kept(CT_OK, "");
  try {
    ct::Tensor x = ct::Tensor::from({1.f, 2.f});
    ct::Tensor wrong = ct::Tensor::empty({3}, ct::dtype::float32);
    ct::exp(x, wrong);
  } catch (const ct::Error& e) {
    kept = e;
  }
  const std::string before = kept.what();
  REQUIRE(kept.status() == CT_ERR_SHAPE_MISMATCH);
  REQUIRE(before.find("ct_unary") != std::string::npos);
  ct::Tensor ok = ct::exp(ct::Tensor::from({0.f}));
  REQUIRE(std::string(ct_last_error()).empty());
  REQUIRE(std::string(kept.what()) == before);
  REQUIRE(std::string(kept.status_name()) == "CT_ERR_SHAPE_MISMATCH");
  REQUIRE(ok.item<float>() == 1.f);
}

TEST_CASE("ct::check throws with the call's status and message", "[cpp]") {
  REQUIRE_NOTHROW(ct::check(CT_OK));

  float xs[4] = {1, 2, 3, 4}, ys[3] = {0, 0, 0};
  ct::TensorView x(xs, {4}), y(ys, {3});
  CTensor yc = y.c();
  const CTStatus s = ct_unary(CT_OP_EXP, &x.c(), &yc, nullptr);
  const std::string lib_message = ct_last_error();
  REQUIRE(s == CT_ERR_SHAPE_MISMATCH);
  try {
    ct::check(s);
    FAIL("check did not throw");
  } catch (const ct::Error& e) {
    REQUIRE(e.status() == CT_ERR_SHAPE_MISMATCH);
    REQUIRE(std::string(e.what()) == lib_message);
  }
  REQUIRE(ys[0] == 0.f);  // output untouched on failure

  CTOpInfo info;
  info.struct_size = sizeof info;
  REQUIRE_THROWS_MATCHES(ct::check(ct_op_info(1 << 20, &info)), ct::Error,
                         Catch::Predicate<ct::Error>(
                             [](const ct::Error& e) { return e.status() == CT_ERR_NOT_FOUND; }));
  // An error without a library message falls back to the status name.
  REQUIRE(std::string(ct::Error(CT_ERR_BACKEND, "").what()) == "CT_ERR_BACKEND");
}

TEST_CASE("dtype helpers", "[cpp]") {
  REQUIRE(dt_eq(ct::dtype_of<float>(), ct::dtype::float32));
  REQUIRE(dt_eq(ct::dtype_of<double>(), ct::dtype::float64));
  REQUIRE(dt_eq(ct::dtype_of<bool>(), ct::dtype::bool_));
  REQUIRE(dt_eq(ct::dtype_of<int8_t>(), ct::dtype::int8));
  REQUIRE(dt_eq(ct::dtype_of<int16_t>(), ct::dtype::int16));
  REQUIRE(dt_eq(ct::dtype_of<int32_t>(), ct::dtype::int32));
  REQUIRE(dt_eq(ct::dtype_of<int64_t>(), ct::dtype::int64));
  REQUIRE(dt_eq(ct::dtype_of<long long>(), ct::dtype::int64));
  REQUIRE(dt_eq(ct::dtype_of<uint8_t>(), ct::dtype::uint8));
  REQUIRE(dt_eq(ct::dtype_of<uint16_t>(), ct::dtype::uint16));
  REQUIRE(dt_eq(ct::dtype_of<uint32_t>(), ct::dtype::uint32));
  REQUIRE(dt_eq(ct::dtype_of<uint64_t>(), ct::dtype::uint64));
  REQUIRE(dt_eq(ct::dtype_of<unsigned long long>(), ct::dtype::uint64));
  REQUIRE(dt_eq(ct::dtype_of<const float>(), ct::dtype::float32));
  REQUIRE_FALSE(dt_eq(ct::dtype::float16, ct::dtype::bfloat16));
  REQUIRE(ct::dtype::itemsize(ct::dtype::bool_) == 1);
  REQUIRE(ct::dtype::itemsize(ct::dtype::bfloat16) == 2);
  REQUIRE(ct::dtype::itemsize(ct::dtype::int64) == 8);
  REQUIRE(std::string(ct::dtype::name(ct::dtype::bfloat16)) == "bfloat16");
  REQUIRE(std::string(ct::dtype::name(ct::dtype::uint8)) == "uint8");
  REQUIRE(std::string(ct::dtype::name(ct::dtype::uint16)) == "uint16");
  REQUIRE(std::string(ct::dtype::name(ct::dtype::uint32)) == "uint32");
  REQUIRE(std::string(ct::dtype::name(ct::dtype::uint64)) == "uint64");
  REQUIRE(ct::dtype::itemsize(ct::dtype::uint32) == 4);
  REQUIRE(std::string(ct::dtype::name(ct::dtype::bool_)) == "bool");
  // every index of the header names the dtype ct_dtype_index gives it
  for (int32_t i = 0; i < CT_DT_COUNT; ++i) REQUIRE(ct_dtype_index(ct::dtype::from_index(i)) == i);
  REQUIRE(std::string(ct::dtype::name(CTDataType{CT_FLOAT, 32, 4})) == "unknown");
}

TEST_CASE("TensorView over caller memory", "[cpp]") {
  float buf[6] = {0, 1, 2, 3, 4, 5};
  ct::TensorView v(buf, {2, 3});
  REQUIRE(v.ndim() == 2);
  REQUIRE(v.shape() == std::vector<int64_t>{2, 3});
  REQUIRE(v.strides() == std::vector<int64_t>{3, 1});
  REQUIRE(v.numel() == 6);
  REQUIRE(v.is_contiguous());
  REQUIRE(v.c().data == buf);
  REQUIRE(v.c().shape[1] == 3);
  REQUIRE(v.c().strides != nullptr);
  REQUIRE(v.c().device.device_type == CT_CPU);

  // A copy owns its own shape/strides arrays.
  ct::TensorView w = v;
  REQUIRE(w.c().shape != v.c().shape);
  REQUIRE(w.c().shape[0] == 2);
  w = v.transpose(0, 1);
  REQUIRE(v.shape() == std::vector<int64_t>{2, 3});
  REQUIRE(w.shape() == std::vector<int64_t>{3, 2});

  // Columns 0 and 2 of buf as a strided view.
  ct::TensorView cols(buf, {2, 2}, {3, 2});
  REQUIRE_FALSE(cols.is_contiguous());
  REQUIRE(cols.to_vector<float>() == std::vector<float>{0, 2, 3, 5});

  // From a C tensor with NULL strides: strides are filled.
  int64_t shape[2] = {3, 2};
  CTensor c = {buf, {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, shape, nullptr, 4};
  ct::TensorView fromc(c);
  REQUIRE(fromc.strides() == std::vector<int64_t>{2, 1});
  REQUIRE(fromc.byte_offset() == 4);
  REQUIRE(*fromc.data<float>() == 1.f);
  REQUIRE_THROWS_AS(fromc.data<double>(), ct::Error);
  REQUIRE_THROWS_AS(ct::TensorView(buf, {2, 3}, {1}), ct::Error);

  // An op on caller memory, in place.
  ct::exp(v, v);
  REQUIRE(buf[1] == Approx(std::exp(1.f)));
}

TEST_CASE("Tensor factories and to_vector", "[cpp]") {
  ct::Tensor z = ct::Tensor::zeros({2, 3}, ct::dtype::int32);
  REQUIRE(z.to_vector<int32_t>() == std::vector<int32_t>(6, 0));
  REQUIRE(z.use_count() == 1);

  ct::Tensor f = ct::Tensor::from({1.5, -2.0, 3.0, 4.0}, {2, 2});
  REQUIRE(dt_eq(f.dtype(), ct::dtype::float64));
  REQUIRE(f.shape() == std::vector<int64_t>{2, 2});
  REQUIRE(f.to_vector<double>() == std::vector<double>{1.5, -2.0, 3.0, 4.0});
  REQUIRE_THROWS_AS(f.to_vector<float>(), ct::Error);

  ct::Tensor b = ct::Tensor::from_vector(std::vector<bool>{true, false, true});
  REQUIRE(dt_eq(b.dtype(), ct::dtype::bool_));
  REQUIRE(b.to_vector<bool>() == std::vector<bool>{true, false, true});

  ct::Tensor s = ct::Tensor::from({7.f}, {});
  REQUIRE(s.ndim() == 0);
  REQUIRE(s.numel() == 1);
  REQUIRE(s.item<float>() == 7.f);
  REQUIRE(s.view({1, 1}).shape() == std::vector<int64_t>{1, 1});

  ct::Tensor e = ct::Tensor::empty({0, 4}, ct::dtype::float32);
  REQUIRE(e.numel() == 0);
  REQUIRE(e.to_vector<float>().empty());
  REQUIRE(ct::exp(e).shape() == std::vector<int64_t>{0, 4});

  REQUIRE_THROWS_AS(ct::Tensor::from({1, 2, 3}, {2, 2}), ct::Error);
  REQUIRE_THROWS_AS(ct::Tensor::empty({-1}, ct::dtype::float32), ct::Error);
  REQUIRE_THROWS_AS(z.item<int32_t>(), ct::Error);
}

TEST_CASE("Tensor views share the buffer", "[cpp]") {
  ct::Tensor x = iota({3, 4});
  ct::Tensor row = x[1];
  REQUIRE(x.use_count() == 2);
  REQUIRE(row.raw_data() == x.raw_data());
  row.data<float>()[2] = 100.f;  // write through the view
  REQUIRE(x.to_vector<float>()[6] == 100.f);

  ct::Tensor col = x.transpose(0, 1)[3];  // column 3: 3, 7, 11
  ct::mul_scalar(col, 2.0, col);  // in place through a strided view
  REQUIRE(x.to_vector<float>() ==
          std::vector<float>{0, 1, 2, 6, 4, 5, 100, 14, 8, 9, 10, 22});

  // A view keeps the buffer alive after the parent is gone.
  ct::Tensor last;
  {
    ct::Tensor parent = iota({4});
    last = parent.slice(0, 2, 4);
  }
  REQUIRE(last.use_count() == 1);
  REQUIRE(last.to_vector<float>() == std::vector<float>{2, 3});
}

TEST_CASE("slice follows Python's rules", "[cpp]") {
  ct::Tensor x = iota({3, 4});

  ct::Tensor s = x.slice(1, 1, 4, 2);
  REQUIRE(s.shape() == std::vector<int64_t>{3, 2});
  REQUIRE(s.strides() == std::vector<int64_t>{4, 2});
  REQUIRE(s.byte_offset() == 4);
  REQUIRE(s.raw_data() == x.raw_data());
  REQUIRE(s.to_vector<float>() == std::vector<float>{1, 3, 5, 7, 9, 11});

  ct::Tensor tail = x.slice(0, -2, std::numeric_limits<int64_t>::max());
  REQUIRE(tail.shape() == std::vector<int64_t>{2, 4});
  REQUIRE(tail.byte_offset() == 16);
  REQUIRE(x.slice(-2, 1, 100).shape() == std::vector<int64_t>{2, 4});
  REQUIRE(x.slice(0, 2, 1).numel() == 0);
  REQUIRE(x.slice(1, -3, -1).to_vector<float>() ==
          std::vector<float>{1, 2, 5, 6, 9, 10});

  ct::Tensor rev = x.slice(1, std::numeric_limits<int64_t>::max(),
                           std::numeric_limits<int64_t>::min(), -1);
  REQUIRE(rev.strides() == std::vector<int64_t>{4, -1});
  REQUIRE(rev.byte_offset() == 12);
  REQUIRE(rev.to_vector<float>() ==
          std::vector<float>{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8});
  REQUIRE(x.slice(0, 2, 0, -2).to_vector<float>() ==  // Python's x[2:0:-2]: row 2 only
          std::vector<float>{8, 9, 10, 11});
  REQUIRE(x.slice(0, 2, std::numeric_limits<int64_t>::min(), -2).to_vector<float>() ==
          std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3});  // x[2::-2]: rows 2 and 0

  REQUIRE_THROWS_AS(x.slice(1, 0, 2, 0), ct::Error);
  REQUIRE_THROWS_AS(x.slice(2, 0, 1), ct::Error);
  REQUIRE_THROWS_AS(x[3], ct::Error);
  REQUIRE(x[-1].to_vector<float>() == std::vector<float>{8, 9, 10, 11});
  REQUIRE(x[-1][0].ndim() == 0);
  REQUIRE(x[-1][0].item<float>() == 8.f);
}

TEST_CASE("transpose and permute", "[cpp]") {
  ct::Tensor x = iota({2, 3, 4});
  ct::Tensor t = x.transpose(0, 2);
  REQUIRE(t.shape() == std::vector<int64_t>{4, 3, 2});
  REQUIRE(t.strides() == std::vector<int64_t>{1, 4, 12});
  REQUIRE_FALSE(t.is_contiguous());
  REQUIRE(t.to_vector<float>()[1] == 12.f);  // t[0][0][1] = x[1][0][0]

  ct::Tensor p = x.permute({1, 2, 0});
  REQUIRE(p.shape() == std::vector<int64_t>{3, 4, 2});
  REQUIRE(p.strides() == std::vector<int64_t>{4, 1, 12});
  const std::vector<float> pv = p.to_vector<float>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 2; ++k) REQUIRE(pv[(i * 4 + j) * 2 + k] == k * 12 + i * 4 + j);
  REQUIRE(x.permute({-1, 0, 1}).shape() == std::vector<int64_t>{4, 2, 3});
  REQUIRE_THROWS_AS(x.permute({0, 0, 1}), ct::Error);
  REQUIRE_THROWS_AS(x.permute({0, 1}), ct::Error);
  REQUIRE_THROWS_AS(x.transpose(0, 3), ct::Error);
}

TEST_CASE("view never copies, reshape copies only when needed", "[cpp]") {
  ct::Tensor x = iota({2, 3, 4});

  ct::Tensor v = x.view({6, -1});
  REQUIRE(v.shape() == std::vector<int64_t>{6, 4});
  REQUIRE(v.raw_data() == x.raw_data());
  REQUIRE(v.use_count() == 2);

  // A non-contiguous slice whose strides still allow a view.
  ct::Tensor every_other = iota({4, 6}).slice(1, 0, 6, 2);  // {4,3}, strides {6,2}
  ct::Tensor sv = every_other.view({2, 2, 3});
  REQUIRE(sv.strides() == std::vector<int64_t>{12, 6, 2});
  REQUIRE(sv.to_vector<float>() == every_other.to_vector<float>());

  ct::Tensor t = x.transpose(1, 2);  // {2,4,3}
  REQUIRE_NOTHROW(t.view({2, 4, 3, 1}));
  try {
    t.view({2, 12});
    FAIL("view of a transposed tensor did not throw");
  } catch (const ct::Error& e) {
    REQUIRE(e.status() == CT_ERR_NEED_CONTIGUOUS);
    REQUIRE(std::string(e.what()).find("reshape") != std::string::npos);
  }
  ct::Tensor r = t.reshape({2, 12});
  REQUIRE(r.raw_data() != x.raw_data());
  REQUIRE(r.is_contiguous());
  REQUIRE(r.to_vector<float>() == t.to_vector<float>());
  REQUIRE(x.reshape({24}).raw_data() == x.raw_data());

  REQUIRE_THROWS_AS(x.view({5, 5}), ct::Error);
  REQUIRE_THROWS_AS(x.view({-1, -1}), ct::Error);
  REQUIRE_THROWS_AS(x.view({7, -1}), ct::Error);

  REQUIRE(x.contiguous().raw_data() == x.raw_data());
  ct::Tensor tc = t.contiguous();
  REQUIRE(tc.raw_data() != x.raw_data());
  REQUIRE(tc.strides() == std::vector<int64_t>{12, 3, 1});
}

TEST_CASE("ops run on strided views", "[cpp]") {
  ct::Tensor x = iota({4, 5});
  ct::Tensor ts = x.transpose(0, 1).slice(0, 1, 5, 2);  // {2,4}, strides {2,5}
  ct::Tensor y = ct::exp(ct::mul_scalar(ts, 0.1));
  REQUIRE(y.is_contiguous());
  const std::vector<float> src = ts.to_vector<float>();
  const std::vector<float> got = y.to_vector<float>();
  REQUIRE(src == std::vector<float>{1, 6, 11, 16, 3, 8, 13, 18});
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == Approx(std::exp(src[i] * 0.1f)));

  // out= into a strided view writes only the viewed elements.
  ct::Tensor z = ct::Tensor::zeros({4, 5}, ct::dtype::float32);
  ct::neg(ts, z.transpose(0, 1).slice(0, 1, 5, 2));
  const std::vector<float> zv = z.to_vector<float>();
  REQUIRE(zv[1] == -1.f);
  REQUIRE(zv[3] == -3.f);
  REQUIRE(zv[0] == 0.f);
  REQUIRE(zv[2] == 0.f);

  // A caller-provided CTCpuStream is passed through.
  CTCpuStream one_thread = {sizeof(CTCpuStream), 1, nullptr, nullptr};
  ct::Tensor scaled = ct::mul_scalar(ts, 0.1, &one_thread);
  REQUIRE(ct::exp(scaled, &one_thread).to_vector<float>() == got);
}

TEST_CASE("where, cast, clamp, predicates", "[cpp]") {
  ct::Tensor a = ct::Tensor::from({1.f, 2.f, 3.f, 4.f});
  ct::Tensor b = ct::Tensor::from({-1.f, -2.f, -3.f, -4.f});
  ct::Tensor cond = ct::Tensor::from({true, false, false, true});
  ct::Tensor w = ct::where(cond, a, b);
  REQUIRE(dt_eq(w.dtype(), ct::dtype::float32));
  REQUIRE(w.to_vector<float>() == std::vector<float>{1, -2, -3, 4});
  ct::Tensor out = ct::Tensor::zeros({4}, ct::dtype::float32);
  ct::where(cond, b, a, out);
  REQUIRE(out.to_vector<float>() == std::vector<float>{-1, 2, 3, -4});
  REQUIRE_THROWS_AS(ct::where(a, a, b), ct::Error);  // cond must be bool

  ct::Tensor f = ct::fma(a, a, b);
  REQUIRE(f.to_vector<float>() == std::vector<float>{0, 2, 6, 12});
  ct::Tensor half = ct::Tensor::from({0.5f, 0.5f, 0.5f, 0.5f});
  REQUIRE(ct::lerp(a, b, half).to_vector<float>() == std::vector<float>{0, 0, 0, 0});
  // ternary ops with a parameter: the row's default (value=1) without it, ct_ternary_param with it
  REQUIRE(ct::addcmul(a, a, b).to_vector<float>() == std::vector<float>{0, -2, -6, -12});
  REQUIRE(ct::addcmul(a, a, b, 0.5).to_vector<float>() == std::vector<float>{0.5f, 0, -1.5f, -4});
  ct::Tensor q = ct::Tensor::zeros({4}, ct::dtype::float32);
  ct::addcdiv(a, a, b, 2.0, q);
  REQUIRE(q.to_vector<float>() == std::vector<float>{-1, 0, 1, 2});
  REQUIRE(ct::clamp_tensor(a, ct::Tensor::from({2.f, 2.f, 2.f, 2.f}), ct::Tensor::from({3.f, 3.f, 3.f, 1.f}))
              .to_vector<float>() == std::vector<float>{2, 2, 3, 1});
  REQUIRE_THROWS_AS(ct::addcdiv(a, a, b, 0.5, ct::Tensor::zeros({3}, ct::dtype::float32)), ct::Error);
  REQUIRE(ct::round_decimals(ct::Tensor::from({1.2345, -2.5, 1250.0}), 2).to_vector<double>() ==
          std::vector<double>{1.23, -2.5, 1250.0});
  REQUIRE(ct::round_decimals(ct::Tensor::from({1.2345, -2.5, 1250.0}), -2).to_vector<double>() ==
          std::vector<double>{0.0, -0.0, 1200.0});
  REQUIRE_THROWS_AS(ct::round_decimals(a, 0.5), ct::Error);  // decimals is an integer

  ct::Tensor h = ct::cast(ct::Tensor::from({1.f, 2.5f, -0.f, 65504.f}), ct::dtype::float16);
  REQUIRE(dt_eq(h.dtype(), ct::dtype::float16));
  const uint16_t* hbits = static_cast<const uint16_t*>(h.data<void>());
  REQUIRE(std::vector<uint16_t>(hbits, hbits + 4) ==
          std::vector<uint16_t>{0x3C00, 0x4100, 0x8000, 0x7BFF});
  ct::Tensor back = ct::Tensor::empty({4}, ct::dtype::float64);
  ct::cast(h, back);
  REQUIRE(back.to_vector<double>() == std::vector<double>{1, 2.5, -0.0, 65504});
  REQUIRE(ct::cast(ct::Tensor::from({-1.9f, 2.9f}), ct::dtype::int32).to_vector<int32_t>() ==
          std::vector<int32_t>{-1, 2});
  // float8: ct_cast's overflow (NaN in e4m3fn), or saturating with a CTCastMode (ct_cast_ex)
  ct::Tensor f8 = ct::cast(ct::Tensor::from({1000.f, -1.5f}), ct::dtype::float8_e4m3fn);
  REQUIRE(std::string(ct::dtype::name(f8.dtype())) == "float8_e4m3fn");
  REQUIRE(ct::is_floating(f8.dtype()));
  const uint8_t* f8bits = static_cast<const uint8_t*>(f8.data<void>());
  REQUIRE(std::vector<uint8_t>(f8bits, f8bits + 2) == std::vector<uint8_t>{0x7f, 0xbc});
  ct::Tensor f8s = ct::cast(ct::Tensor::from({1000.f, -1e9f}), ct::dtype::float8_e4m3fn, CT_CAST_SATURATE);
  REQUIRE(ct::cast(f8s, ct::dtype::float32).to_vector<float>() == std::vector<float>{448.f, -448.f});
  ct::Tensor f8o = ct::Tensor::empty({2}, ct::dtype::float8_e5m2);
  ct::cast(ct::Tensor::from({1e6f, 2.f}), f8o, CT_CAST_SATURATE);
  REQUIRE(ct::cast(f8o, ct::dtype::float32).to_vector<float>() == std::vector<float>{57344.f, 2.f});
  REQUIRE_THROWS_AS(ct::cast(ct::Tensor::from({1.f}), ct::dtype::float8_e5m2, static_cast<CTCastMode>(5)), ct::Error);

  ct::Tensor c = ct::Tensor::from({-5.f, 0.5f, 9.f});
  ct::clamp(c, 0, 6, c);  // in place
  REQUIRE(c.to_vector<float>() == std::vector<float>{0, 0.5f, 6});
  REQUIRE(ct::clamp(ct::Tensor::from({-3, 4, 10}), -1, 5).to_vector<int32_t>() ==
          std::vector<int32_t>{-1, 4, 5});
  REQUIRE(ct::leaky_relu(ct::Tensor::from({-2.f, 3.f}), 0.25).to_vector<float>() ==
          std::vector<float>{-0.5f, 3.f});
  REQUIRE_THROWS_AS(ct::add_scalar(ct::Tensor::from({1, 2}), 0.5), ct::Error);

  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  ct::Tensor x = ct::Tensor::from({1.f, nan, inf, -inf});
  ct::Tensor isnan = ct::isnan(x);
  REQUIRE(dt_eq(isnan.dtype(), ct::dtype::bool_));
  REQUIRE(isnan.to_vector<bool>() == std::vector<bool>{false, true, false, false});
  REQUIRE(ct::isfinite(x).to_vector<bool>() == std::vector<bool>{true, false, false, false});
  REQUIRE(ct::isinf(x).to_vector<bool>() == std::vector<bool>{false, false, true, true});
  REQUIRE(dt_eq(ct::logical_not(x).dtype(), ct::dtype::bool_));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_ISNAN, ct::dtype::float64), ct::dtype::bool_));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_EXP, ct::dtype::float64), ct::dtype::float64));
  REQUIRE(dt_eq(ct::neg(ct::Tensor::from({1, 2})).dtype(), ct::dtype::int32));
}

namespace {

// An input of the first dtype (float32, int32, bool) that @p op supports,
// with values that tell the ops apart (negative, fractional, half-way).
ct::Tensor input_for(int32_t op) {
  if (ct_op_supported(op, ct::cpu(), ct::dtype::float32) == CT_OK)
    return ct::Tensor::from({-1.5f, -0.25f, 0.5f, 2.5f});
  if (ct_op_supported(op, ct::cpu(), ct::dtype::int32) == CT_OK)
    return ct::Tensor::from({-3, 0, 1, 7});
  return ct::Tensor::from({true, false, false, true});
}

}  // namespace

// Each generated wrapper must call its own op id: compare it with the
// generic entry point given that id.
#define CT_TEST_GEN_(ID, name, kind, nparams, summary) \
  SECTION(#name) { CT_TEST_GEN_##kind(ID, name, nparams) }
#define CT_TEST_GEN_CT_KIND_UNARY(ID, name, nparams)                  \
  ct::Tensor x = input_for(CT_OP_##ID);                               \
  ct::Tensor got = ct::name(x);                                       \
  REQUIRE(dt_eq(got.dtype(), ct::output_dtype(CT_OP_##ID, x.dtype()))); \
  REQUIRE(bytes_of(got) == bytes_of(ct::unary(CT_OP_##ID, x)));
#define CT_TEST_GEN_CT_KIND_UNARY_PARAM(ID, name, nparams) CT_TEST_PARAMS_##nparams(ID, name)
#define CT_TEST_PARAMS_1(ID, name)                  \
  ct::Tensor x = input_for(CT_OP_##ID);             \
  ct::Tensor got = ct::name(x, 2.0);                \
  ct::Tensor out = ct::empty_like(x);               \
  ct::name(x, 2.0, out);                            \
  REQUIRE(bytes_of(got) == bytes_of(out));          \
  REQUIRE(bytes_of(got) == bytes_of(ct::unary_param(CT_OP_##ID, x, {2.0})));
#define CT_TEST_PARAMS_2(ID, name)                  \
  ct::Tensor x = input_for(CT_OP_##ID);             \
  ct::Tensor got = ct::name(x, -1.0, 1.0);          \
  ct::Tensor out = ct::empty_like(x);               \
  ct::name(x, -1.0, 1.0, out);                      \
  REQUIRE(bytes_of(got) == bytes_of(out));          \
  REQUIRE(bytes_of(got) == bytes_of(ct::unary_param(CT_OP_##ID, x, {-1.0, 1.0})));
#define CT_TEST_GEN_CT_KIND_TERNARY(ID, name, nparams)                                     \
  ct::Tensor a = CT_OP_##ID == CT_OP_WHERE ? ct::Tensor::from({true, false, true, false})  \
                                           : ct::Tensor::from({1.f, 2.f, 3.f, 4.f});       \
  ct::Tensor b = ct::Tensor::from({0.5f, -2.f, 8.f, 0.f});                                 \
  ct::Tensor c = ct::Tensor::from({0.25f, 1.f, 0.75f, 0.f});                               \
  ct::Tensor got = ct::name(a, b, c);                                                      \
  REQUIRE(bytes_of(got) == bytes_of(ct::ternary(CT_OP_##ID, a, b, c)));
#define CT_TEST_GEN_CT_KIND_CAST(ID, name, nparams)                            \
  ct::Tensor x = ct::Tensor::from({-1.5f, 0.25f, 3.f});                        \
  ct::Tensor got = ct::name(x, ct::dtype::bfloat16);                           \
  REQUIRE(dt_eq(got.dtype(), ct::dtype::bfloat16));                            \
  ct::Tensor out = ct::Tensor::empty({3}, ct::dtype::bfloat16);                \
  CTensor oc = out.c();                                                        \
  REQUIRE(ct_cast(&x.c(), &oc, nullptr) == CT_OK);                             \
  REQUIRE(bytes_of(got) == bytes_of(out));

TEST_CASE("every generated wrapper calls its own op", "[cpp]") {
  CT_ELEMENTWISE_OPS(CT_TEST_GEN_)
}

TEST_CASE("move semantics", "[cpp]") {
  ct::Tensor a = iota({3});
  void* const data = a.raw_data();
  ct::Tensor b = std::move(a);
  REQUIRE(b.raw_data() == data);
  REQUIRE(b.use_count() == 1);
  REQUIRE(b.to_vector<float>() == std::vector<float>{0, 1, 2});
  REQUIRE(a.raw_data() == nullptr);  // NOLINT(bugprone-use-after-move): documented state
  REQUIRE(a.numel() == 0);
  REQUIRE(a.use_count() == 0);

  ct::Tensor c = iota({2});
  c = std::move(b);
  REQUIRE(c.raw_data() == data);
  REQUIRE(c.use_count() == 1);
  REQUIRE(b.numel() == 0);  // NOLINT(bugprone-use-after-move)

  ct::Tensor d = c;  // copy shares
  REQUIRE(c.use_count() == 2);
  d = ct::Tensor();
  REQUIRE(c.use_count() == 1);
}

// ---------------------------------------------------------------------------
// Category 2: broadcasting binary ops, reductions, along-axis ops
// ---------------------------------------------------------------------------

namespace {

// Throws ct::Error with @p status, or fails the test.
template <class F>
void require_status(F f, CTStatus status, const char* must_contain = nullptr) {
  try {
    f();
    FAIL("no ct::Error was thrown");
  } catch (const ct::Error& e) {
    INFO(e.what());
    REQUIRE(e.status_name() == std::string(ct_status_string(status)));
    if (must_contain) REQUIRE(std::string(e.what()).find(must_contain) != std::string::npos);
  }
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

std::vector<int64_t> shp(std::initializer_list<int64_t> s) { return std::vector<int64_t>(s); }

}  // namespace

TEST_CASE("broadcast_shape and reduce_shape helpers", "[cpp]") {
  REQUIRE(ct::broadcast_shape({2, 1}, {3}) == shp({2, 3}));
  REQUIRE(ct::broadcast_shape({}, {4, 1}) == shp({4, 1}));
  REQUIRE(ct::broadcast_shape({5, 1, 3}, {4, 1}) == shp({5, 4, 3}));
  REQUIRE(ct::broadcast_shape({0, 1}, {1, 7}) == shp({0, 7}));
  require_status([] { ct::broadcast_shape({2, 4}, {3}); }, CT_ERR_SHAPE_MISMATCH, "[2,4]");
  require_status([] { ct::broadcast_shape({2, 4}, {3}); }, CT_ERR_SHAPE_MISMATCH, "ct_op_output_info");
  require_status([] { ct::broadcast_shape({0}, {2}); }, CT_ERR_SHAPE_MISMATCH);

  REQUIRE(ct::reduce_shape({2, 3, 4}, ct::Axes::all()) == shp({}));
  REQUIRE(ct::reduce_shape({2, 3, 4}, ct::Axes::all(), true) == shp({1, 1, 1}));
  REQUIRE(ct::reduce_shape({2, 3, 4}, {0, 2}) == shp({3}));
  REQUIRE(ct::reduce_shape({2, 3, 4}, {-1, 0}, true) == shp({1, 3, 1}));
  REQUIRE(ct::reduce_shape({2, 3, 4}, ct::Axes::none()) == shp({2, 3, 4}));
  REQUIRE(ct::reduce_shape({2, 3, 4}, {}) == shp({2, 3, 4}));
  require_status([] { ct::reduce_shape({2, 3}, {2}); }, CT_ERR_INVALID_ARGUMENT);
  require_status([] { ct::reduce_shape({2, 3}, {1, -1}); }, CT_ERR_INVALID_ARGUMENT, "ct_op_output_info");

  // Axes: all, none, a list; c_axes is NULL only for all().
  REQUIRE(ct::Axes::all().is_all());
  REQUIRE(ct::Axes::all().c_axes() == nullptr);
  REQUIRE(ct::Axes::none().c_axes() != nullptr);
  REQUIRE(ct::Axes::none().c_num_axes() == 0);
  const ct::Axes empty_braces = {};
  REQUIRE_FALSE(empty_braces.is_all());
  REQUIRE(empty_braces.c_num_axes() == 0);
  REQUIRE(ct::Axes(std::vector<int>{1, -1}).values() == std::vector<int32_t>{1, -1});
  REQUIRE(ct::Axes(std::vector<int64_t>{2}).c_num_axes() == 1);
  REQUIRE(ct::Axes::one(-2).values() == std::vector<int32_t>{-2});
  REQUIRE(ct::Axes({0, 2}).str() == "(0, 2)");
  require_status([] { ct::Axes::one(int64_t(1) << 40); }, CT_ERR_INVALID_ARGUMENT);
}

TEST_CASE("output_info is the library's shape query", "[cpp]") {
  // Shapes and dtypes of views of no data.
  const ct::TensorView a(nullptr, ct::dtype::int32, {2, 1}), b(nullptr, ct::dtype::int32, {3});
  std::vector<CTOutputInfo> o = ct::output_info(CT_OP_DIV, {&a, &b});
  REQUIRE(o.size() == 1);
  REQUIRE(o[0].ndim == 2);
  REQUIRE(o[0].shape[0] == 2);
  REQUIRE(o[0].shape[1] == 3);
  REQUIRE(dt_eq(o[0].dtype, ct::dtype::float64));  // true division of integers

  // A reduction's axes and keepdims go in CTOpArgs.
  CTOpArgs args;
  std::memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  const int32_t axis = 0;
  args.axes = &axis;
  args.num_axes = 1;
  args.keepdims = 1;
  o = ct::output_info(CT_OP_ARGMAX, {&a}, &args);
  REQUIRE(o.size() == 1);
  REQUIRE(o[0].ndim == 2);
  REQUIRE(o[0].shape[0] == 1);
  REQUIRE(o[0].shape[1] == 1);
  REQUIRE(dt_eq(o[0].dtype, ct::dtype::int64));

  // An NN op: its descriptor in CTOpArgs, one entry per output (optional ones too).
  const ct::TensorView x(nullptr, ct::dtype::float32, {2, 3, 7, 6});
  const ct::Pool2dOptions po(2);
  args.desc = &po.c();
  o = ct::output_info(CT_OP_MAX_POOL2D, {&x}, &args);
  REQUIRE(o.size() == 2);
  REQUIRE(std::vector<int64_t>(o[0].shape, o[0].shape + o[0].ndim) == shp({2, 3, 3, 3}));
  REQUIRE(dt_eq(o[0].dtype, ct::dtype::float32));
  REQUIRE(std::vector<int64_t>(o[1].shape, o[1].shape + o[1].ndim) == shp({2, 3, 3, 3}));
  REQUIRE(dt_eq(o[1].dtype, ct::dtype::int64));

  // Rejected inputs: the library's status and message.
  const ct::TensorView c(nullptr, ct::dtype::int32, {4});
  require_status([&] { ct::output_info(CT_OP_ADD, {&b, &c}); }, CT_ERR_SHAPE_MISMATCH, "ct_op_output_info");
  require_status([&] { ct::output_info(CT_OP_SQRT, {&b}); }, CT_ERR_UNSUPPORTED, "sqrt");
  require_status([&] { ct::output_info(CT_OP_ADD, {&b}); }, CT_ERR_INVALID_ARGUMENT, "ct_op_output_info");
  require_status([&] { ct::output_info(1 << 20, {&b}); }, CT_ERR_NOT_FOUND);
}

TEST_CASE("ternary value forms take the library's broadcast shape", "[cpp]") {
  const ct::Tensor cond = ct::Tensor::from({true, false}, {2, 1});
  const ct::Tensor a = ct::Tensor::from({1.f, 2.f, 3.f});
  const ct::Tensor b = ct::Tensor::from({9.f}, {1, 1});
  const ct::Tensor w = ct::where(cond, a, b);
  REQUIRE(w.shape() == shp({2, 3}));
  REQUIRE(dt_eq(w.dtype(), ct::dtype::float32));
  REQUIRE(w.to_vector<float>() == std::vector<float>{1, 2, 3, 9, 9, 9});
  // fma over (3,) * (2, 1) + () and the out= form agree.
  const ct::Tensor col = ct::Tensor::from({10.f, 20.f}, {2, 1});
  const ct::Tensor one = ct::Tensor::from({1.f}, {});
  const ct::Tensor f = ct::fma(a, col, one);
  REQUIRE(f.shape() == shp({2, 3}));
  REQUIRE(f.to_vector<float>() == std::vector<float>{11, 21, 31, 21, 41, 61});
  ct::Tensor fo = ct::Tensor::zeros({2, 3}, ct::dtype::float32);
  ct::fma(a, col, one, fo);
  REQUIRE(fo.to_vector<float>() == f.to_vector<float>());
  // Shapes that do not broadcast: the library's message.
  require_status([&] { ct::where(cond, ct::Tensor::from({1.f, 2.f, 3.f, 4.f}, {1, 4}), a); },
                 CT_ERR_SHAPE_MISMATCH, "ct_op_output_info");
}

TEST_CASE("output dtypes follow the category 2 rules", "[cpp]") {
  using namespace ct::dtype;
  // SAME
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_ADD, int32), int32));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_MAX, float16), float16));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_SOFTMAX, float32), float32));
  // BOOL
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_LESS, float32), bool_));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_LOGICAL_XOR, int8), bool_));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_ANY, float64), bool_));
  // INT64
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_ARGMAX, float32), int64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_ARGMIN, uint8), int64));
  // ACCUM
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_SUM, int32), int64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_SUM, bool_), int64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_SUM, bfloat16), bfloat16));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_CUMPROD, uint8), uint64));  // unsigned: uint64, as NumPy
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_SUM, uint16), uint64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_PROD, uint32), uint64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_CUMSUM, uint64), uint64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_SUM, int8), int64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_CUMSUM, float32), float32));
  // FLOAT
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_DIV, int16), float64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_DIV, float32), float32));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_MEAN, int32), float64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_VAR, int64), float64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_NORM2, int32), float64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_MEAN, uint64), float64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_DIV, uint32), float64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_ARGMAX, uint16), int64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_MAXIMUM, uint64), uint64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_STD, float16), float16));
  // Elementwise ops keep their rules.
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_EXP, float64), float64));
  REQUIRE(dt_eq(ct::output_dtype(CT_OP_ISNAN, float64), bool_));
  REQUIRE(ct::is_floating(bfloat16));
  REQUIRE_FALSE(ct::is_floating(int64));
}

// The output kind of every category-2 op, by hand from notes/SEMANTICS.md:
// S = SAME, B = BOOL, I = INT64, A = ACCUM, F = FLOAT.
TEST_CASE("every category 2 op's result dtype, for int32 and float32 inputs", "[cpp]") {
  struct Row {
    int32_t op;
    char kind;
  };
  const Row rows[] = {
      {CT_OP_ADD, 'S'}, {CT_OP_SUB, 'S'}, {CT_OP_MUL, 'S'}, {CT_OP_DIV, 'F'},
      {CT_OP_FLOOR_DIV, 'S'}, {CT_OP_MOD, 'S'}, {CT_OP_POW, 'S'}, {CT_OP_MAXIMUM, 'S'},
      {CT_OP_MINIMUM, 'S'}, {CT_OP_FMAX, 'S'}, {CT_OP_FMIN, 'S'}, {CT_OP_ATAN2, 'S'},
      {CT_OP_HYPOT, 'S'}, {CT_OP_COPYSIGN, 'S'}, {CT_OP_BITWISE_AND, 'S'},
      {CT_OP_BITWISE_OR, 'S'}, {CT_OP_BITWISE_XOR, 'S'}, {CT_OP_LEFT_SHIFT, 'S'},
      {CT_OP_RIGHT_SHIFT, 'S'}, {CT_OP_LOGICAL_AND, 'B'}, {CT_OP_LOGICAL_OR, 'B'},
      {CT_OP_LOGICAL_XOR, 'B'}, {CT_OP_EQUAL, 'B'}, {CT_OP_NOT_EQUAL, 'B'}, {CT_OP_LESS, 'B'},
      {CT_OP_LESS_EQUAL, 'B'}, {CT_OP_GREATER, 'B'}, {CT_OP_GREATER_EQUAL, 'B'},
      {CT_OP_SUM, 'A'}, {CT_OP_MEAN, 'F'}, {CT_OP_PROD, 'A'}, {CT_OP_MAX, 'S'}, {CT_OP_MIN, 'S'},
      {CT_OP_ARGMAX, 'I'}, {CT_OP_ARGMIN, 'I'}, {CT_OP_ANY, 'B'}, {CT_OP_ALL, 'B'},
      {CT_OP_NORM2, 'F'}, {CT_OP_LOGSUMEXP, 'S'}, {CT_OP_VAR, 'F'}, {CT_OP_STD, 'F'},
      {CT_OP_SOFTMAX, 'S'}, {CT_OP_LOG_SOFTMAX, 'S'}, {CT_OP_CUMSUM, 'A'}, {CT_OP_CUMPROD, 'A'},
      {CT_OP_FMOD, 'S'}, {CT_OP_LOGADDEXP, 'S'}, {CT_OP_LOGADDEXP2, 'S'}, {CT_OP_XLOGY, 'S'},
      {CT_OP_NEXTAFTER, 'S'}, {CT_OP_GCD, 'S'}, {CT_OP_LCM, 'S'}, {CT_OP_HEAVISIDE, 'S'},
      {CT_OP_PRELU, 'S'}, {CT_OP_RELU_BACKWARD, 'S'}, {CT_OP_LDEXP, 'S'}, {CT_OP_NANSUM, 'A'}, {CT_OP_NANMEAN, 'F'},
      {CT_OP_COUNT_NONZERO, 'I'}, {CT_OP_LOGCUMSUMEXP, 'S'}, {CT_OP_SOFTMIN, 'S'}, {CT_OP_SORT, 'S'},
      {CT_OP_ARGSORT, 'I'}, {CT_OP_XLOG1PY, 'S'}, {CT_OP_MEDIAN, 'S'}, {CT_OP_NANMEDIAN, 'S'},
      {CT_OP_QUANTILE, 'F'}, {CT_OP_NANQUANTILE, 'F'}, {CT_OP_KTHVALUE, 'S'}, {CT_OP_CUMMAX, 'S'},
      {CT_OP_CUMMIN, 'S'}, {CT_OP_MODE, 'S'}, {CT_OP_TAKE, 'S'}, {CT_OP_GATHER, 'S'},
      {CT_OP_SCATTER, 'S'}, {CT_OP_SCATTER_ADD, 'S'}, {CT_OP_INDEX_ADD, 'S'},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_T, 'S'}, {CT_OP_CHEBYSHEV_POLYNOMIAL_U, 'S'}, {CT_OP_CHEBYSHEV_POLYNOMIAL_V, 'S'},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_W, 'S'}, {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_T, 'S'},
      {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_U, 'S'}, {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_V, 'S'},
      {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_W, 'S'}, {CT_OP_HERMITE_POLYNOMIAL_H, 'S'},
      {CT_OP_HERMITE_POLYNOMIAL_HE, 'S'}, {CT_OP_LAGUERRE_POLYNOMIAL_L, 'S'}, {CT_OP_LEGENDRE_POLYNOMIAL_P, 'S'},
      {CT_OP_ZETA, 'S'}, {CT_OP_IGAMMA, 'S'}, {CT_OP_IGAMMAC, 'S'}};
  size_t category2 = 0;  // every built-in op of category 2 has a row here
  for (int32_t op = 0; op < (int32_t)CT_OP_END_; ++op)
    if (ct::op_info(op).category == CT_CATEGORY_BROADCAST_REDUCE) ++category2;
  REQUIRE(sizeof rows / sizeof rows[0] == category2);
  for (const Row& r : rows) {
    INFO(ct::op_info(r.op).name);
    CTDataType want_i = ct::dtype::int32, want_f = ct::dtype::float32;
    switch (r.kind) {
      case 'B': want_i = want_f = ct::dtype::bool_; break;
      case 'I': want_i = want_f = ct::dtype::int64; break;
      case 'A': want_i = ct::dtype::int64; break;
      case 'F': want_i = ct::dtype::float64; break;
      default: break;
    }
    REQUIRE(dt_eq(ct::output_dtype(r.op, ct::dtype::int32), want_i));
    REQUIRE(dt_eq(ct::output_dtype(r.op, ct::dtype::float32), want_f));
  }
}

TEST_CASE("binary ops broadcast and compute", "[cpp]") {
  ct::Tensor a = iota({2, 3});
  ct::Tensor row = ct::Tensor::from({10.f, 20.f, 30.f});
  ct::Tensor col = ct::Tensor::from({1.f, 2.f}, {2, 1});

  ct::Tensor s = ct::add(a, row);
  REQUIRE(s.shape() == shp({2, 3}));
  REQUIRE(s.is_contiguous());
  REQUIRE(s.to_vector<float>() == std::vector<float>{10, 21, 32, 13, 24, 35});
  ct::Tensor outer = ct::add(col, row);  // (2,1) + (3) -> (2,3)
  REQUIRE(outer.shape() == shp({2, 3}));
  REQUIRE(outer.to_vector<float>() == std::vector<float>{11, 21, 31, 12, 22, 32});
  REQUIRE(ct::sub(col, row).to_vector<float>() == std::vector<float>{-9, -19, -29, -8, -18, -28});
  REQUIRE(ct::mul(a, col).to_vector<float>() == std::vector<float>{0, 1, 2, 6, 8, 10});
  ct::Tensor scalar0 = ct::Tensor::from({2.f}, {});
  REQUIRE(ct::mul(scalar0, scalar0).ndim() == 0);
  REQUIRE(ct::mul(scalar0, a).to_vector<float>() == std::vector<float>{0, 2, 4, 6, 8, 10});
  REQUIRE(ct::add(ct::Tensor::empty({0, 1}, ct::dtype::float32), row).shape() == shp({0, 3}));

  // div: integers give float64, x/0 = inf, 0/0 = NaN.
  ct::Tensor q = ct::div(ct::Tensor::from({1, 2, 3, 1, 0}), ct::Tensor::from({2, 2, 2, 0, 0}));
  REQUIRE(dt_eq(q.dtype(), ct::dtype::float64));
  const std::vector<double> qv = q.to_vector<double>();
  REQUIRE(qv[0] == 0.5);
  REQUIRE(qv[1] == 1.0);
  REQUIRE(qv[2] == 1.5);
  REQUIRE(qv[3] == kInf);
  REQUIRE(std::isnan(qv[4]));
  REQUIRE(ct::div(a, col).to_vector<float>() == std::vector<float>{0, 1, 2, 1.5f, 2, 2.5f});

  // floor_div and mod: Python's rules; integer x // 0 = x % 0 = 0.
  ct::Tensor n = ct::Tensor::from({7, -7, 7, -7, 5});
  ct::Tensor d = ct::Tensor::from({2, 2, -2, -2, 0});
  REQUIRE(ct::floor_div(n, d).to_vector<int32_t>() == std::vector<int32_t>{3, -4, -4, 3, 0});
  REQUIRE(ct::mod(n, d).to_vector<int32_t>() == std::vector<int32_t>{1, 1, -1, -1, 0});
  REQUIRE(ct::floor_div(ct::Tensor::from({5.5, -5.5}), ct::Tensor::from({2.0})).to_vector<double>() ==
          std::vector<double>{2, -3});
  REQUIRE(ct::mod(ct::Tensor::from({5.5, -5.5, 5.5}), ct::Tensor::from({2.0, 2.0, -2.0}))
              .to_vector<double>() == std::vector<double>{1.5, 0.5, -0.5});

  // pow: floats, and exact integers (negative exponents truncate).
  REQUIRE(ct::pow(ct::Tensor::from({2.0, 3.0}), ct::Tensor::from({3.0, 2.0})).to_vector<double>() ==
          std::vector<double>{8, 9});
  REQUIRE(ct::pow(ct::Tensor::from({2, -1, 3, 1}), ct::Tensor::from({10, -3, -1, -5}))
              .to_vector<int32_t>() == std::vector<int32_t>{1024, -1, 0, 1});

  // maximum/minimum propagate NaN; fmax/fmin ignore one NaN.
  ct::Tensor p = ct::Tensor::from({1.0, kNaN, 3.0});
  ct::Tensor r = ct::Tensor::from({2.0, 2.0, kNaN});
  std::vector<double> v = ct::maximum(p, r).to_vector<double>();
  REQUIRE(v[0] == 2.0);
  REQUIRE(std::isnan(v[1]));
  REQUIRE(std::isnan(v[2]));
  v = ct::minimum(p, r).to_vector<double>();
  REQUIRE(v[0] == 1.0);
  REQUIRE(std::isnan(v[1]));
  REQUIRE(ct::fmax(p, r).to_vector<double>() == std::vector<double>{2, 2, 3});
  REQUIRE(ct::fmin(p, r).to_vector<double>() == std::vector<double>{1, 2, 3});
  REQUIRE(ct::maximum(ct::Tensor::from({-2, 5}), 0).to_vector<int32_t>() ==
          std::vector<int32_t>{0, 5});  // a scalar operand

  REQUIRE(ct::atan2(ct::Tensor::from({1.0}), ct::Tensor::from({1.0})).item<double>() ==
          Approx(std::atan(1.0)));
  REQUIRE(ct::hypot(ct::Tensor::from({3.0}), ct::Tensor::from({4.0})).item<double>() == 5.0);
  REQUIRE(ct::copysign(ct::Tensor::from({2.0, -3.0}), ct::Tensor::from({-1.0, 1.0}))
              .to_vector<double>() == std::vector<double>{-2, 3});

  // Bitwise and shifts (out-of-range shifts are defined).
  ct::Tensor twelve = ct::Tensor::from({12});
  ct::Tensor ten = ct::Tensor::from({10});
  REQUIRE(ct::bitwise_and(twelve, ten).item<int32_t>() == 8);
  REQUIRE(ct::bitwise_or(twelve, ten).item<int32_t>() == 14);
  REQUIRE(ct::bitwise_xor(twelve, ten).item<int32_t>() == 6);
  REQUIRE(ct::left_shift(ct::Tensor::from({1, 1, 1, -1}), ct::Tensor::from({0, 3, 32, -1}))
              .to_vector<int32_t>() == std::vector<int32_t>{1, 8, 0, 0});
  REQUIRE(ct::right_shift(ct::Tensor::from({-16, 16, -1, 16}), ct::Tensor::from({2, 2, 40, -1}))
              .to_vector<int32_t>() == std::vector<int32_t>{-4, 4, -1, 0});

  // Bool add/mul are or/and; integer arithmetic wraps.
  ct::Tensor t = ct::Tensor::from({true, false, false, true});
  ct::Tensor u = ct::Tensor::from({true, true, false, false});
  REQUIRE(ct::add(t, u).to_vector<bool>() == std::vector<bool>{true, true, false, true});
  REQUIRE(ct::mul(t, u).to_vector<bool>() == std::vector<bool>{true, false, false, false});
  REQUIRE(ct::bitwise_xor(t, u).to_vector<bool>() == std::vector<bool>{false, true, false, true});
  ct::Tensor i8 = ct::add(ct::Tensor::from({int8_t(127)}), ct::Tensor::from({int8_t(1)}));
  REQUIRE(dt_eq(i8.dtype(), ct::dtype::int8));
  REQUIRE(i8.item<int8_t>() == -128);

  // Logical ops and comparisons give bool; NaN is true for logic, unequal in comparisons.
  ct::Tensor x = ct::Tensor::from({0.f, 0.5f, std::numeric_limits<float>::quiet_NaN()});
  ct::Tensor y = ct::Tensor::from({1.f, 0.f, 2.f});
  ct::Tensor land = ct::logical_and(x, y);
  REQUIRE(dt_eq(land.dtype(), ct::dtype::bool_));
  REQUIRE(land.to_vector<bool>() == std::vector<bool>{false, false, true});
  REQUIRE(ct::logical_or(x, y).to_vector<bool>() == std::vector<bool>{true, true, true});
  REQUIRE(ct::logical_xor(x, y).to_vector<bool>() == std::vector<bool>{true, true, false});
  ct::Tensor e1 = ct::Tensor::from({1.0, kNaN, 3.0});
  ct::Tensor e2 = ct::Tensor::from({1.0, kNaN, 2.0});
  REQUIRE(ct::equal(e1, e2).to_vector<bool>() == std::vector<bool>{true, false, false});
  REQUIRE(ct::not_equal(e1, e2).to_vector<bool>() == std::vector<bool>{false, true, true});
  ct::Tensor ints = ct::Tensor::from({1, 2, 3});
  ct::Tensor two = ct::Tensor::from({2});
  REQUIRE(ct::less(ints, two).to_vector<bool>() == std::vector<bool>{true, false, false});
  REQUIRE(ct::less_equal(ints, two).to_vector<bool>() == std::vector<bool>{true, true, false});
  REQUIRE(ct::greater(ints, two).to_vector<bool>() == std::vector<bool>{false, false, true});
  REQUIRE(ct::greater_equal(ints, two).to_vector<bool>() == std::vector<bool>{false, true, true});
  ct::Tensor cmp = ct::less(col, row);
  REQUIRE(dt_eq(cmp.dtype(), ct::dtype::bool_));
  REQUIRE(cmp.shape() == shp({2, 3}));
}

TEST_CASE("binary out= forms, strided operands and streams", "[cpp]") {
  ct::Tensor a = iota({3, 4});
  ct::Tensor at = a.transpose(0, 1);  // (4,3), strides {1,4}
  ct::Tensor b = ct::Tensor::from({100.f, 200.f, 300.f});
  ct::Tensor out = ct::Tensor::zeros({4, 3}, ct::dtype::float32);
  ct::add(at, b, out);
  REQUIRE(out.to_vector<float>() ==
          std::vector<float>{100, 204, 308, 101, 205, 309, 102, 206, 310, 103, 207, 311});

  // out= into a strided view writes only the viewed elements.
  ct::Tensor big = ct::Tensor::zeros({4, 6}, ct::dtype::float32);
  ct::mul(at, b.slice(0, 2, 3), big.slice(1, 0, 6, 2));  // b[2:3] = {300} broadcasts
  const std::vector<float> bv = big.to_vector<float>();
  REQUIRE(bv[0] == 0.f);
  REQUIRE(bv[2] == 1200.f);  // at[0][1] = a[1][0] = 4
  REQUIRE(bv[1] == 0.f);

  // A scalar operand with out=.
  ct::Tensor o2 = ct::Tensor::empty({3}, ct::dtype::float32);
  ct::sub(b, 1.0, o2);
  REQUIRE(o2.to_vector<float>() == std::vector<float>{99, 199, 299});
  REQUIRE(ct::sub(1.0, b).to_vector<float>() == std::vector<float>{-99, -199, -299});

  // In place through out=: out is exactly a.
  ct::Tensor c = iota({2, 3});
  void* const data = c.raw_data();
  ct::add(c, b, c);
  REQUIRE(c.raw_data() == data);
  REQUIRE(c.to_vector<float>() == std::vector<float>{100, 201, 302, 103, 204, 305});

  CTCpuStream one_thread = {sizeof(CTCpuStream), 1, nullptr, nullptr};
  REQUIRE(ct::add(at, b, &one_thread).to_vector<float>() == out.to_vector<float>());
  ct::Tensor o3 = ct::Tensor::empty({4, 3}, ct::dtype::bool_);
  ct::greater(at, 5.0, o3, &one_thread);
  REQUIRE(o3.to_vector<bool>()[1] == false);  // at[0][1] = 4
  REQUIRE(o3.to_vector<bool>()[2] == true);   // at[0][2] = 8
  REQUIRE(ct::binary(CT_OP_ADD, at, b).to_vector<float>() == out.to_vector<float>());
}

TEST_CASE("operators", "[cpp]") {
  ct::Tensor a = ct::Tensor::from({1.f, 2.f, 3.f, 4.f}, {2, 2});
  ct::Tensor b = ct::Tensor::from({10.f, 20.f});
  REQUIRE((a + b).to_vector<float>() == std::vector<float>{11, 22, 13, 24});
  REQUIRE((a - b).to_vector<float>() == std::vector<float>{-9, -18, -7, -16});
  REQUIRE((a * b).to_vector<float>() == std::vector<float>{10, 40, 30, 80});
  REQUIRE((b / a).to_vector<float>() == std::vector<float>{10, 10, 10.f / 3, 5});
  REQUIRE((a + b).shape() == shp({2, 2}));
  REQUIRE((-a).to_vector<float>() == std::vector<float>{-1, -2, -3, -4});

  // Scalars on either side take the tensor's dtype.
  REQUIRE((a + 0.5).to_vector<float>() == std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f});
  REQUIRE((10 - a).to_vector<float>() == std::vector<float>{9, 8, 7, 6});
  REQUIRE((a * 2).to_vector<float>() == std::vector<float>{2, 4, 6, 8});
  REQUIRE((1.0 / b).to_vector<float>() == std::vector<float>{0.1f, 0.05f});
  REQUIRE(dt_eq((a * 2).dtype(), ct::dtype::float32));

  ct::Tensor n = ct::Tensor::from({7, -7, 12, 5});
  REQUIRE((n % 3).to_vector<int32_t>() == std::vector<int32_t>{1, 2, 0, 2});
  REQUIRE((n % -3).to_vector<int32_t>() == std::vector<int32_t>{-2, -1, 0, -1});
  REQUIRE((n & 6).to_vector<int32_t>() == std::vector<int32_t>{6, 0, 4, 4});
  REQUIRE((n | 1).to_vector<int32_t>() == std::vector<int32_t>{7, -7, 13, 5});
  REQUIRE((n ^ n).to_vector<int32_t>() == std::vector<int32_t>{0, 0, 0, 0});
  REQUIRE((n << 2).to_vector<int32_t>() == std::vector<int32_t>{28, -28, 48, 20});
  REQUIRE((n >> 1).to_vector<int32_t>() == std::vector<int32_t>{3, -4, 6, 2});
  REQUIRE((1 << ct::Tensor::from({0, 1, 4})).to_vector<int32_t>() == std::vector<int32_t>{1, 2, 16});
  REQUIRE((~ct::Tensor::from({0, -1})).to_vector<int32_t>() == std::vector<int32_t>{-1, 0});
  ct::Tensor q = n / 2;  // true division: float64
  REQUIRE(dt_eq(q.dtype(), ct::dtype::float64));
  REQUIRE(q.to_vector<double>() == std::vector<double>{3.5, -3.5, 6, 2.5});

  // Comparisons are elementwise and give bool tensors.
  ct::Tensor c = ct::Tensor::from({1, 2, 3});
  ct::Tensor d = ct::Tensor::from({3, 2, 1});
  ct::Tensor eq = c == d;
  REQUIRE(dt_eq(eq.dtype(), ct::dtype::bool_));
  REQUIRE(eq.to_vector<bool>() == std::vector<bool>{false, true, false});
  REQUIRE((c != d).to_vector<bool>() == std::vector<bool>{true, false, true});
  REQUIRE((c < d).to_vector<bool>() == std::vector<bool>{true, false, false});
  REQUIRE((c <= d).to_vector<bool>() == std::vector<bool>{true, true, false});
  REQUIRE((c > d).to_vector<bool>() == std::vector<bool>{false, false, true});
  REQUIRE((c >= d).to_vector<bool>() == std::vector<bool>{false, true, true});
  REQUIRE((c == 2).to_vector<bool>() == std::vector<bool>{false, true, false});
  REQUIRE((2 < c).to_vector<bool>() == std::vector<bool>{false, false, true});
  ct::Tensor col = ct::Tensor::from({1, 3}, {2, 1});
  ct::Tensor grid = col > c;  // (2,1) vs (3)
  REQUIRE(grid.shape() == shp({2, 3}));
  REQUIRE(grid.to_vector<bool>() == std::vector<bool>{false, false, false, true, true, false});

  // Bool tensors: & | ^ ~ with bool scalars.
  ct::Tensor m = ct::Tensor::from({true, false});
  REQUIRE((m & true).to_vector<bool>() == std::vector<bool>{true, false});
  REQUIRE((m | ct::Tensor::from({false, true})).to_vector<bool>() == std::vector<bool>{true, true});
  REQUIRE((m ^ true).to_vector<bool>() == std::vector<bool>{false, true});
  REQUIRE((~m).to_vector<bool>() == std::vector<bool>{false, true});

  // Views work as operands (TensorView over caller memory too).
  float buf[3] = {1, 2, 3};
  ct::TensorView v(buf, {3});
  REQUIRE((v + v).to_vector<float>() == std::vector<float>{2, 4, 6});
  REQUIRE((iota({2, 3}).transpose(0, 1) * 1.0).to_vector<float>() ==
          std::vector<float>{0, 3, 1, 4, 2, 5});
  REQUIRE(ct::all(c == c).item<bool>());
}

TEST_CASE("scalar operands take the tensor's dtype or throw", "[cpp]") {
  ct::Tensor h = ct::scalar(1.5, ct::dtype::float16);
  REQUIRE(h.ndim() == 0);
  REQUIRE(dt_eq(h.dtype(), ct::dtype::float16));
  REQUIRE(*static_cast<const uint16_t*>(h.data<void>()) == 0x3E00);
  REQUIRE(ct::scalar(int64_t(-5), ct::dtype::int64).item<int64_t>() == -5);
  REQUIRE(ct::scalar(INT64_MAX, ct::dtype::int64).item<int64_t>() == INT64_MAX);
  REQUIRE(ct::scalar(255, ct::dtype::uint8).item<uint8_t>() == 255);
  REQUIRE(ct::scalar(true, ct::dtype::float32).item<float>() == 1.f);
  REQUIRE(ct::scalar(3.0, ct::dtype::int8).item<int8_t>() == 3);
  REQUIRE(ct::scalar(1, ct::dtype::bool_).item<bool>());

  require_status([] { ct::scalar(2.5, ct::dtype::int32); }, CT_ERR_INVALID_ARGUMENT, "2.5");
  require_status([] { ct::scalar(256, ct::dtype::uint8); }, CT_ERR_INVALID_ARGUMENT, "uint8");
  require_status([] { ct::scalar(-1, ct::dtype::uint8); }, CT_ERR_INVALID_ARGUMENT);
  require_status([] { ct::scalar(2, ct::dtype::bool_); }, CT_ERR_INVALID_ARGUMENT);
  require_status([] { ct::scalar(kNaN, ct::dtype::int64); }, CT_ERR_INVALID_ARGUMENT);
  require_status([] { ct::scalar(9223372036854775808.0, ct::dtype::int64); },
                 CT_ERR_INVALID_ARGUMENT);
  require_status([] { ct::scalar(uint64_t(1) << 63, ct::dtype::int64); }, CT_ERR_INVALID_ARGUMENT);

  ct::Tensor n = ct::Tensor::from({1, 2});
  require_status([&] { ct::Tensor r = n + 2.5; }, CT_ERR_INVALID_ARGUMENT, "int32");
  REQUIRE((n + 2.0).to_vector<int32_t>() == std::vector<int32_t>{3, 4});  // integral: fine
  ct::Tensor u8 = ct::Tensor::from({uint8_t(1), uint8_t(250)});
  REQUIRE((u8 + 5).to_vector<uint8_t>() == std::vector<uint8_t>{6, 255});
  require_status([&] { ct::Tensor r = u8 - 256; }, CT_ERR_INVALID_ARGUMENT);

  // The wide unsigned dtypes: their whole range, and nothing outside it.
  REQUIRE(ct::scalar(UINT64_MAX, ct::dtype::uint64).item<uint64_t>() == UINT64_MAX);
  REQUIRE(ct::scalar(uint64_t(1) << 63, ct::dtype::uint64).item<uint64_t>() == uint64_t(1) << 63);
  REQUIRE(ct::scalar(18446744073709549568.0, ct::dtype::uint64).item<uint64_t>() == 18446744073709549568ull);
  REQUIRE(ct::scalar(4294967295u, ct::dtype::uint32).item<uint32_t>() == 4294967295u);
  REQUIRE(ct::scalar(65535, ct::dtype::uint16).item<uint16_t>() == 65535);
  require_status([] { ct::scalar(18446744073709551616.0, ct::dtype::uint64); }, CT_ERR_INVALID_ARGUMENT, "uint64");
  require_status([] { ct::scalar(-1, ct::dtype::uint64); }, CT_ERR_INVALID_ARGUMENT, "-1");
  require_status([] { ct::scalar(4294967296ll, ct::dtype::uint32); }, CT_ERR_INVALID_ARGUMENT, "4294967296");
  require_status([] { ct::scalar(65536, ct::dtype::uint16); }, CT_ERR_INVALID_ARGUMENT, "uint16");
  require_status([] { ct::scalar(UINT64_MAX, ct::dtype::int64); }, CT_ERR_INVALID_ARGUMENT, "18446744073709551615");
  ct::Tensor u64 = ct::Tensor::from({uint64_t(1), UINT64_MAX});
  REQUIRE((u64 + 1).to_vector<uint64_t>() == std::vector<uint64_t>{2, 0});           // wraps
  REQUIRE((u64 - UINT64_MAX).to_vector<uint64_t>() == std::vector<uint64_t>{2, 0});  // wraps
  REQUIRE((u64 > uint64_t(1) << 63).to_vector<bool>() == std::vector<bool>{false, true});
  REQUIRE(dt_eq(ct::sum(u64).dtype(), ct::dtype::uint64));
  REQUIRE(ct::sum(u64).item<uint64_t>() == 0);  // 1 + (2^64 - 1) wraps
  REQUIRE(ct::max(u64).item<uint64_t>() == UINT64_MAX);
}

TEST_CASE("compound assignment runs in place", "[cpp]") {
  ct::Tensor x = iota({2, 3});
  void* const data = x.raw_data();
  x += ct::Tensor::from({10.f, 20.f, 30.f});  // broadcast right operand
  REQUIRE(x.raw_data() == data);
  REQUIRE(x.to_vector<float>() == std::vector<float>{10, 21, 32, 13, 24, 35});
  x -= 1.0;
  REQUIRE(x.to_vector<float>() == std::vector<float>{9, 20, 31, 12, 23, 34});
  x *= ct::Tensor::from({2.f, 0.f}, {2, 1});
  REQUIRE(x.to_vector<float>() == std::vector<float>{18, 40, 62, 0, 0, 0});
  x /= 2;
  REQUIRE(x.to_vector<float>() == std::vector<float>{9, 20, 31, 0, 0, 0});
  x %= 4.0;
  REQUIRE(x.to_vector<float>() == std::vector<float>{1, 0, 3, 0, 0, 0});
  REQUIRE(x.raw_data() == data);
  REQUIRE(x.use_count() == 1);

  // A temporary view writes through to its parent; the chain returns Tensor&.
  x[1] += 5.f;
  REQUIRE(x.to_vector<float>() == std::vector<float>{1, 0, 3, 5, 5, 5});
  x.transpose(0, 1)[2] *= 10;  // column 2
  REQUIRE(x.to_vector<float>() == std::vector<float>{1, 0, 30, 5, 5, 50});
  static_assert(std::is_same<decltype(x += 1.0), ct::Tensor&>::value, "Tensor& from +=");
  static_assert(std::is_same<decltype(x += x), ct::Tensor&>::value, "Tensor& from +=");
  ((x += 1.0) *= 2.0) -= x;  // x = (x + 1) * 2 - itself = 0
  REQUIRE(x.to_vector<float>() == std::vector<float>(6, 0.f));
  REQUIRE(x.raw_data() == data);

  // Integer compound ops.
  ct::Tensor n = ct::Tensor::from({7, -7, 12, 5});
  void* const ndata = n.raw_data();
  n %= 4;
  REQUIRE(n.to_vector<int32_t>() == std::vector<int32_t>{3, 1, 0, 1});
  n <<= 2;
  REQUIRE(n.to_vector<int32_t>() == std::vector<int32_t>{12, 4, 0, 4});
  n >>= ct::Tensor::from({1, 2, 0, 0});
  REQUIRE(n.to_vector<int32_t>() == std::vector<int32_t>{6, 1, 0, 4});
  n |= 1;
  REQUIRE(n.to_vector<int32_t>() == std::vector<int32_t>{7, 1, 1, 5});
  n &= 6;
  REQUIRE(n.to_vector<int32_t>() == std::vector<int32_t>{6, 0, 0, 4});
  n ^= 2;
  REQUIRE(n.to_vector<int32_t>() == std::vector<int32_t>{4, 2, 2, 6});
  REQUIRE(n.raw_data() == ndata);

  // /= on integers: true division gives float64, which cannot go in place.
  require_status([&] { n /= 2; }, CT_ERR_DTYPE_MISMATCH);
  require_status([&] { n /= ct::Tensor::from({2}); }, CT_ERR_DTYPE_MISMATCH);
  REQUIRE(n.to_vector<int32_t>() == std::vector<int32_t>{4, 2, 2, 6});  // untouched

  // The result must have the left operand's shape.
  ct::Tensor col = ct::Tensor::from({1.f, 2.f, 3.f}, {3, 1});
  require_status([&] { col += ct::Tensor::from({1.f, 2.f}, {1, 2}); }, CT_ERR_SHAPE_MISMATCH);
  REQUIRE(col.to_vector<float>() == std::vector<float>{1, 2, 3});
  require_status([&] { col += ct::Tensor::from({1.f, 2.f}); }, CT_ERR_SHAPE_MISMATCH);
  require_status([&] { col += ct::Tensor::from({1.0}); }, CT_ERR_DTYPE_MISMATCH);

  // On a TensorView over caller memory.
  float buf[3] = {1, 2, 3};
  ct::TensorView v(buf, {3});
  v *= 3.f;
  v += v;
  REQUIRE(buf[0] == 6.f);
  REQUIRE(buf[2] == 18.f);
  static_assert(std::is_same<decltype(v += 1), ct::TensorView&>::value, "TensorView& from +=");

  // Bool in place: or, and.
  ct::Tensor m = ct::Tensor::from({true, false, false});
  m += ct::Tensor::from({false, false, true});
  REQUIRE(m.to_vector<bool>() == std::vector<bool>{true, false, true});
  m *= false;
  REQUIRE(m.to_vector<bool>() == std::vector<bool>{false, false, false});
}

TEST_CASE("binary errors throw ct::Error with the library's message", "[cpp]") {
  ct::Tensor a = ct::Tensor::zeros({2, 4}, ct::dtype::float32);
  ct::Tensor b = ct::Tensor::zeros({3}, ct::dtype::float32);
  try {
    ct::add(a, b);
    FAIL("non-broadcastable shapes did not throw");
  } catch (const ct::Error& e) {
    const std::string m = e.what();
    INFO(m);
    REQUIRE(e.status() == CT_ERR_SHAPE_MISMATCH);
    // The library's own message: the value form sizes its result with the
    // library's shape query, which rejects the shapes before ct_binary runs.
    REQUIRE(m.find("ct_op_output_info") != std::string::npos);
    REQUIRE(m.find("[3]") != std::string::npos);
    REQUIRE(m.find("[2,4]") != std::string::npos);
  }
  require_status([&] { ct::Tensor r = a * b; }, CT_ERR_SHAPE_MISMATCH, "[2,4]");
  require_status([&] { ct::Tensor r = a < b; }, CT_ERR_SHAPE_MISMATCH, "[3]");
  require_status([&] { ct::binary(CT_OP_SUB, b, a); }, CT_ERR_SHAPE_MISMATCH, "ct_op_output_info");
  require_status([&] { ct::binary(CT_OP_SUB, b, a, ct::Tensor::zeros({2, 4}, ct::dtype::float32)); },
                 CT_ERR_SHAPE_MISMATCH, "ct_binary");  // out= form: the op's own check
  require_status([&] { ct::Tensor r = ct::Tensor::zeros({0}, ct::dtype::float32) + b; },
                 CT_ERR_SHAPE_MISMATCH);

  // out= with an out that is not the broadcast shape.
  ct::Tensor wrong = ct::Tensor::zeros({2, 3}, ct::dtype::float32);
  require_status([&] { ct::add(a, ct::Tensor::zeros({4}, ct::dtype::float32), wrong); },
                 CT_ERR_SHAPE_MISMATCH, "ct_binary");
  // Dtypes: inputs must agree; a comparison's out must be bool.
  require_status([&] { ct::add(a, ct::Tensor::zeros({4}, ct::dtype::float64)); },
                 CT_ERR_DTYPE_MISMATCH, "ct_op_output_info");
  require_status([&] { ct::add(a, ct::Tensor::zeros({4}, ct::dtype::float64), a); },
                 CT_ERR_DTYPE_MISMATCH, "ct_binary");
  require_status([&] { ct::less(a, a, ct::Tensor::zeros({2, 4}, ct::dtype::float32)); },
                 CT_ERR_DTYPE_MISMATCH);
  // Op not defined for the dtype.
  ct::Tensor t = ct::Tensor::from({true});
  require_status([&] { ct::sub(t, t); }, CT_ERR_UNSUPPORTED, "sub");
  require_status([&] { ct::atan2(ct::Tensor::from({1}), ct::Tensor::from({1})); },
                 CT_ERR_UNSUPPORTED);
  require_status([&] { ct::Tensor r = a << a; }, CT_ERR_UNSUPPORTED);
}

TEST_CASE("reductions", "[cpp]") {
  ct::Tensor x = ct::Tensor::from({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});

  ct::Tensor total = ct::sum(x);
  REQUIRE(total.ndim() == 0);
  REQUIRE(dt_eq(total.dtype(), ct::dtype::float32));
  REQUIRE(total.item<float>() == 21.f);
  REQUIRE(ct::sum(x, 0).to_vector<float>() == std::vector<float>{5, 7, 9});  // 0 is an axis
  REQUIRE(ct::sum(x, 0).shape() == shp({3}));
  REQUIRE(ct::sum(x, 1).to_vector<float>() == std::vector<float>{6, 15});
  REQUIRE(ct::sum(x, -1).to_vector<float>() == std::vector<float>{6, 15});
  REQUIRE(ct::sum(x, 1, true).shape() == shp({2, 1}));
  REQUIRE(ct::sum(x, int64_t(0), true).shape() == shp({1, 3}));
  REQUIRE(ct::sum(x, {0, 1}).shape() == shp({}));
  REQUIRE(ct::sum(x, {0, 1}, true).shape() == shp({1, 1}));
  REQUIRE(ct::sum(x, {1, 0}, true).item<float>() == 21.f);
  REQUIRE(ct::sum(x, std::vector<int>{0}).to_vector<float>() == std::vector<float>{5, 7, 9});
  REQUIRE(ct::sum(x, ct::Axes::all(), true).shape() == shp({1, 1}));
  // A 0-d tensor takes axis 0 or -1 (as NumPy's reductions and ct_reduce do).
  ct::Tensor x0 = ct::Tensor::from({4.f}, {});
  REQUIRE(ct::sum(x0, 0).shape() == shp({}));
  REQUIRE(ct::sum(x0, -1, true).shape() == shp({}));
  REQUIRE(ct::sum(x0, 0).item<float>() == 4.f);
  REQUIRE(ct::argmax(x0, 0).item<int64_t>() == 0);
  REQUIRE_THROWS_AS(ct::sum(x0, 1), ct::Error);
  REQUIRE_THROWS_AS(ct::sum(x0, {0, -1}), ct::Error);

  ct::Tensor y = iota({2, 3, 4});
  ct::Tensor s02 = ct::sum(y, {0, 2}, true);
  REQUIRE(s02.shape() == shp({1, 3, 1}));
  REQUIRE(s02.to_vector<float>() == std::vector<float>{60, 92, 124});
  REQUIRE(ct::sum(y, {0, 2}).shape() == shp({3}));
  REQUIRE(ct::sum(y, std::vector<int64_t>{-1, 0}, false).to_vector<float>() ==
          std::vector<float>{60, 92, 124});
  // A strided (transposed) input.
  REQUIRE(ct::sum(y.transpose(0, 2), {0, 2}).to_vector<float>() == std::vector<float>{60, 92, 124});

  // No axis at all (NumPy's axis=()): Axes::none(), {} or an empty vector.
  ct::Tensor id = ct::sum(x, ct::Axes::none());
  REQUIRE(id.shape() == shp({2, 3}));
  REQUIRE(id.to_vector<float>() == x.to_vector<float>());
  REQUIRE(ct::sum(x, {}).shape() == shp({2, 3}));
  REQUIRE(ct::sum(x, {}, true).shape() == shp({2, 3}));
  REQUIRE(ct::sum(x, std::vector<int>()).shape() == shp({2, 3}));
  ct::Tensor none_out = ct::Tensor::empty({2, 3}, ct::dtype::int64);
  ct::argmax(x, std::vector<int>(), false, none_out);
  REQUIRE(none_out.to_vector<int64_t>() == std::vector<int64_t>(6, 0));
  REQUIRE(ct::mean(ct::Tensor::from({1, 2}), {}).to_vector<double>() == std::vector<double>{1, 2});

  // dtypes: sum/prod of integers and bool -> int64, mean -> float64.
  ct::Tensor xi = ct::Tensor::from({1, 2, 3, 5}, {2, 2});
  ct::Tensor si = ct::sum(xi);
  REQUIRE(dt_eq(si.dtype(), ct::dtype::int64));
  REQUIRE(si.item<int64_t>() == 11);
  ct::Tensor mi = ct::mean(xi, 1);
  REQUIRE(dt_eq(mi.dtype(), ct::dtype::float64));
  REQUIRE(mi.to_vector<double>() == std::vector<double>{1.5, 4});
  REQUIRE(ct::sum(ct::Tensor::from({true, true, false})).item<int64_t>() == 2);
  ct::Tensor pb = ct::prod(ct::Tensor::from({true, true}));
  REQUIRE(dt_eq(pb.dtype(), ct::dtype::int64));
  REQUIRE(pb.item<int64_t>() == 1);
  REQUIRE(ct::sum(ct::Tensor::from({int8_t(100), int8_t(100)})).item<int64_t>() == 200);

  REQUIRE(ct::mean(x).item<float>() == 3.5f);
  REQUIRE(ct::mean(x, 0).to_vector<float>() == std::vector<float>{2.5f, 3.5f, 4.5f});
  REQUIRE(ct::prod(x, 1).to_vector<float>() == std::vector<float>{6, 120});
  REQUIRE(ct::prod(ct::Tensor::from({2, 3, 4})).item<int64_t>() == 24);

  REQUIRE(ct::max(x).item<float>() == 6.f);
  REQUIRE(ct::max(x, 0).to_vector<float>() == std::vector<float>{4, 5, 6});
  REQUIRE(ct::min(x, 1).to_vector<float>() == std::vector<float>{1, 4});
  REQUIRE(dt_eq(ct::max(xi).dtype(), ct::dtype::int32));
  REQUIRE(std::isnan(ct::max(ct::Tensor::from({1.0, kNaN, 3.0})).item<double>()));

  ct::Tensor am = ct::argmax(x);
  REQUIRE(am.ndim() == 0);
  REQUIRE(dt_eq(am.dtype(), ct::dtype::int64));
  REQUIRE(am.item<int64_t>() == 5);
  REQUIRE(ct::argmax(x, 1).to_vector<int64_t>() == std::vector<int64_t>{2, 2});
  REQUIRE(ct::argmin(x, 0).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0});
  REQUIRE(ct::argmax(ct::Tensor::from({3, 1, 3})).item<int64_t>() == 0);  // first occurrence
  REQUIRE(ct::argmax(ct::Tensor::from({1, 9, 9, 0}, {2, 2})).item<int64_t>() == 1);
  REQUIRE(ct::argmin(ct::Tensor::from({1.0, kNaN, 0.0, kNaN})).item<int64_t>() == 1);
  REQUIRE(ct::argmax(y, {1, 2}).to_vector<int64_t>() == std::vector<int64_t>{11, 11});
  REQUIRE(ct::argmax(x, 1, true).shape() == shp({2, 1}));

  ct::Tensor z = ct::Tensor::from({0.f, 0.f, 1.f, 0.f, 0.f, 0.f}, {2, 3});
  ct::Tensor an = ct::any(z, 1);
  REQUIRE(dt_eq(an.dtype(), ct::dtype::bool_));
  REQUIRE(an.to_vector<bool>() == std::vector<bool>{true, false});
  REQUIRE(ct::all(ct::Tensor::from({1, 2, 0, 3}, {2, 2}), 0).to_vector<bool>() ==
          std::vector<bool>{false, true});
  REQUIRE(ct::any(z).item<bool>());
  REQUIRE_FALSE(ct::all(z).item<bool>());

  ct::Tensor n2 = ct::norm2(ct::Tensor::from({3, 4}));
  REQUIRE(dt_eq(n2.dtype(), ct::dtype::float64));
  REQUIRE(n2.item<double>() == 5.0);
  REQUIRE(ct::norm2(ct::Tensor::from({3.f, 4.f, 0.f, 0.f}, {2, 2}), 1).to_vector<float>() ==
          std::vector<float>{5, 0});

  REQUIRE(ct::logsumexp(ct::Tensor::from({0.0, 0.0})).item<double>() == Approx(std::log(2.0)));
  REQUIRE(ct::logsumexp(ct::Tensor::from({1000.0, 1000.0})).item<double>() ==
          Approx(1000.0 + std::log(2.0)));
  REQUIRE(ct::logsumexp(ct::Tensor::from({0.0, 0.0, 1.0, 1.0}, {2, 2}), 1).to_vector<double>()[1] ==
          Approx(1.0 + std::log(2.0)));

  // var and std: correction (NumPy's ddof) defaults to 0.
  ct::Tensor w = ct::Tensor::from({1.0, 2.0, 3.0, 4.0});
  REQUIRE(ct::var(w).item<double>() == Approx(1.25));
  REQUIRE(ct::var(w, ct::Axes::all(), false, 1.0).item<double>() == Approx(5.0 / 3.0));
  REQUIRE(ct::std(w).item<double>() == Approx(std::sqrt(1.25)));
  REQUIRE(ct::std(w, 0, false, 1.0).item<double>() == Approx(std::sqrt(5.0 / 3.0)));
  ct::Tensor v1 = ct::var(x, {1}, false, /*correction=*/1.0);
  REQUIRE(dt_eq(v1.dtype(), ct::dtype::float32));
  REQUIRE(v1.to_vector<float>() == std::vector<float>{1, 1});
  REQUIRE(ct::var(x, 1, true).shape() == shp({2, 1}));
  REQUIRE(ct::var(x, 1, true).to_vector<float>()[0] == Approx(2.0 / 3.0));
  ct::Tensor vi = ct::var(ct::Tensor::from({1, 3}));
  REQUIRE(dt_eq(vi.dtype(), ct::dtype::float64));
  REQUIRE(vi.item<double>() == 1.0);
  REQUIRE(dt_eq(ct::std(xi, 0).dtype(), ct::dtype::float64));

  // The order statistics: the lower median (an element), linear quantiles, the k-th smallest.
  ct::Tensor m4 = ct::Tensor::from({4.0, 1.0, 3.0, 2.0});
  REQUIRE(ct::median(m4).item<double>() == 2.0);
  REQUIRE(ct::quantile(m4, ct::Axes::all(), false, 0.5).item<double>() == 2.5);
  REQUIRE(ct::kthvalue(m4, 0, false, 3.0).item<double>() == 3.0);
  REQUIRE(ct::mode(ct::Tensor::from({3, 1, 1, 3, 2})).item<int32_t>() == 1);  // the smallest of the most frequent
  REQUIRE(ct::nanmedian(ct::Tensor::from({NAN, 5.f, 1.f})).item<float>() == 1.f);
  REQUIRE(std::isnan(ct::median(ct::Tensor::from({NAN, 5.f, 1.f})).item<float>()));
  ct::Tensor qi = ct::quantile(ct::Tensor::from({1, 2, 3, 4}, {2, 2}), 1, false, 0.25);
  REQUIRE(dt_eq(qi.dtype(), ct::dtype::float64));
  REQUIRE(qi.to_vector<double>() == std::vector<double>{1.25, 3.25});
  require_status([&] { ct::kthvalue(m4); }, CT_ERR_INVALID_ARGUMENT, "k=0");
  require_status([&] { ct::quantile(m4, ct::Axes::all(), false, 1.5); }, CT_ERR_INVALID_ARGUMENT, "q=1.5");

  // Empty reductions give the identity; max of nothing is an error.
  ct::Tensor e = ct::Tensor::empty({0}, ct::dtype::float32);
  REQUIRE(ct::sum(e).item<float>() == 0.f);
  REQUIRE(ct::prod(e).item<float>() == 1.f);
  REQUIRE(std::isnan(ct::mean(e).item<float>()));
  REQUIRE_FALSE(ct::any(e).item<bool>());
  REQUIRE(ct::all(e).item<bool>());
  REQUIRE(ct::logsumexp(e).item<float>() == -std::numeric_limits<float>::infinity());
  REQUIRE(ct::sum(ct::Tensor::empty({3, 0}, ct::dtype::float32), 1).to_vector<float>() ==
          std::vector<float>{0, 0, 0});
  REQUIRE(ct::max(ct::Tensor::empty({0, 3}, ct::dtype::float32), 1).shape() == shp({0}));
  require_status([] { ct::max(ct::Tensor::empty({3, 0}, ct::dtype::float32), 1); },
                 CT_ERR_INVALID_ARGUMENT, "ct_reduce");
  require_status([&] { ct::argmin(e); }, CT_ERR_INVALID_ARGUMENT);
}

TEST_CASE("reduction out= forms, streams and errors", "[cpp]") {
  ct::Tensor x = ct::Tensor::from({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});

  ct::Tensor o = ct::Tensor::empty({2, 1}, ct::dtype::float32);
  ct::sum(x, {1}, true, o);
  REQUIRE(o.to_vector<float>() == std::vector<float>{6, 15});
  ct::max(x, 1, true, o);
  REQUIRE(o.to_vector<float>() == std::vector<float>{3, 6});
  ct::Tensor o0 = ct::Tensor::empty({}, ct::dtype::float32);
  ct::mean(x, ct::Axes::all(), false, o0);
  REQUIRE(o0.item<float>() == 3.5f);
  ct::Tensor oi = ct::Tensor::empty({3}, ct::dtype::int64);
  ct::argmax(x, 0, false, oi);
  REQUIRE(oi.to_vector<int64_t>() == std::vector<int64_t>{1, 1, 1});
  ct::Tensor ov = ct::Tensor::empty({2}, ct::dtype::float32);
  ct::var(x, {1}, false, 1.0, ov);
  REQUIRE(ov.to_vector<float>() == std::vector<float>{1, 1});
  ct::std(x, 1, false, 1.0, ov);
  REQUIRE(ov.to_vector<float>() == std::vector<float>{1, 1});
  ct::var(x, {1}, false, ov);  // correction 0
  REQUIRE(ov.to_vector<float>()[0] == Approx(2.0 / 3.0));
  ct::var(x, -1, false, ov);
  REQUIRE(ov.to_vector<float>()[1] == Approx(2.0 / 3.0));
  // out= into a strided view.
  ct::Tensor big = ct::Tensor::zeros({6}, ct::dtype::float32);
  ct::sum(x, 0, false, big.slice(0, 0, 6, 2));
  REQUIRE(big.to_vector<float>() == std::vector<float>{5, 0, 7, 0, 9, 0});
  REQUIRE(ct::reduce(CT_OP_SUM, x, {0}).to_vector<float>() == std::vector<float>{5, 7, 9});
  REQUIRE(ct::reduce(CT_OP_VAR, x, {1}, false, {1.0}).to_vector<float>() ==
          std::vector<float>{1, 1});

  CTCpuStream one_thread = {sizeof(CTCpuStream), 1, nullptr, nullptr};
  REQUIRE(ct::sum(x, ct::Axes::all(), false, &one_thread).item<float>() == 21.f);
  REQUIRE(ct::sum(x, 1, false, &one_thread).to_vector<float>() == std::vector<float>{6, 15});
  REQUIRE(ct::var(x, {1}, false, 1.0, &one_thread).to_vector<float>() == std::vector<float>{1, 1});

  // Bad axes: the library's message and CT_ERR_INVALID_ARGUMENT; the value
  // forms size their result with the library's shape query, which says it.
  require_status([&] { ct::sum(x, 2); }, CT_ERR_INVALID_ARGUMENT, "ct_op_output_info");
  require_status([&] { ct::sum(x, -3); }, CT_ERR_INVALID_ARGUMENT, "ct_op_output_info");
  require_status([&] { ct::mean(x, {0, 0}); }, CT_ERR_INVALID_ARGUMENT, "ct_op_output_info");
  require_status([&] { ct::mean(x, {1, -1}, true); }, CT_ERR_INVALID_ARGUMENT, "ct_op_output_info");
  require_status([&] { ct::sum(x, {2}, false, o); }, CT_ERR_INVALID_ARGUMENT, "ct_reduce");  // out= form
  require_status([&] { ct::sum(ct::Tensor::from({1.f}, {}), 1); }, CT_ERR_INVALID_ARGUMENT);  // 0-d: only 0, -1
  REQUIRE(ct::sum(ct::Tensor::from({1.f}, {}), 0).item<float>() == 1.f);                     // as NumPy
  // Wrong out shape or dtype.
  require_status([&] { ct::sum(x, {1}, false, o); }, CT_ERR_SHAPE_MISMATCH, "ct_reduce");
  require_status([&] { ct::argmax(x, 0, false, ct::Tensor::empty({3}, ct::dtype::int32)); },
                 CT_ERR_DTYPE_MISMATCH);
  require_status([&] { ct::sum(ct::Tensor::from({1, 2}), 0, false, ct::Tensor::empty({}, ct::dtype::int32)); },
                 CT_ERR_DTYPE_MISMATCH);
  // Params: NaN correction; unsupported dtypes.
  require_status([&] { ct::var(x, {1}, false, kNaN); }, CT_ERR_INVALID_ARGUMENT);
  require_status([&] { ct::reduce(CT_OP_SUM, x, {0}, false, {1.0}); }, CT_ERR_INVALID_ARGUMENT);
  require_status([] { ct::logsumexp(ct::Tensor::from({1, 2})); }, CT_ERR_UNSUPPORTED);
  require_status([] { ct::var(ct::Tensor::from({true})); }, CT_ERR_UNSUPPORTED);
}

TEST_CASE("along-axis ops", "[cpp]") {
  const double l3 = std::log(3.0);
  ct::Tensor x = ct::Tensor::from({0.0, 0.0, 0.0, l3}, {2, 2});
  ct::Tensor s = ct::softmax(x);  // last axis
  REQUIRE(s.shape() == shp({2, 2}));
  REQUIRE(dt_eq(s.dtype(), ct::dtype::float64));
  std::vector<double> sv = s.to_vector<double>();
  REQUIRE(sv[0] == Approx(0.5));
  REQUIRE(sv[1] == Approx(0.5));
  REQUIRE(sv[2] == Approx(0.25));
  REQUIRE(sv[3] == Approx(0.75));
  REQUIRE(ct::softmax(x, -1).to_vector<double>() == sv);
  REQUIRE(ct::softmax(x, 1).to_vector<double>() == sv);
  sv = ct::softmax(x, 0).to_vector<double>();  // columns: [0, 0], [0, ln 3]
  REQUIRE(sv[0] == Approx(0.5));
  REQUIRE(sv[1] == Approx(0.25));
  REQUIRE(sv[3] == Approx(0.75));
  REQUIRE(ct::softmax(ct::Tensor::from({1000.f, 1000.f})).to_vector<float>() ==
          std::vector<float>{0.5f, 0.5f});  // stable

  std::vector<double> lv = ct::log_softmax(x).to_vector<double>();
  REQUIRE(lv[0] == Approx(-std::log(2.0)));
  REQUIRE(lv[2] == Approx(std::log(0.25)));
  REQUIRE(lv[3] == Approx(std::log(0.75)));
  REQUIRE(ct::log_softmax(x, 0).to_vector<double>()[1] == Approx(std::log(0.25)));

  REQUIRE(ct::cummax(ct::Tensor::from({1, 3, 2, 5}), 0).to_vector<int32_t>() == std::vector<int32_t>{1, 3, 3, 5});
  REQUIRE(ct::cummin(ct::Tensor::from({2.f, 3.f, 1.f}), 0).to_vector<float>() == std::vector<float>{2, 2, 1});

  ct::Tensor xi = ct::Tensor::from({1, 2, 3, 4, 5, 6}, {2, 3});
  ct::Tensor c1 = ct::cumsum(xi, 1);
  REQUIRE(dt_eq(c1.dtype(), ct::dtype::int64));
  REQUIRE(c1.shape() == shp({2, 3}));
  REQUIRE(c1.to_vector<int64_t>() == std::vector<int64_t>{1, 3, 6, 4, 9, 15});
  REQUIRE(ct::cumsum(xi, 0).to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 5, 7, 9});
  REQUIRE(ct::cumsum(xi, -2).to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 5, 7, 9});
  REQUIRE(ct::cumprod(xi, 1).to_vector<int64_t>() == std::vector<int64_t>{1, 2, 6, 4, 20, 120});
  ct::Tensor cf = ct::cumprod(ct::Tensor::from({1.f, 2.f, 3.f, 4.f}), 0);
  REQUIRE(dt_eq(cf.dtype(), ct::dtype::float32));
  REQUIRE(cf.to_vector<float>() == std::vector<float>{1, 2, 6, 24});
  REQUIRE(ct::cumsum(ct::Tensor::from({true, true, false, true}), 0).to_vector<int64_t>() ==
          std::vector<int64_t>{1, 2, 2, 3});
  REQUIRE(ct::cumsum(ct::Tensor::from({5.f}, {}), 0).item<float>() == 5.f);  // 0-d
  REQUIRE(ct::cumsum(xi.transpose(0, 1), 0).to_vector<int64_t>() ==
          std::vector<int64_t>{1, 4, 3, 9, 6, 15});

  // out= forms, a stream, and the generic entry point.
  ct::Tensor o = ct::Tensor::empty({2, 3}, ct::dtype::int64);
  ct::cumsum(xi, 1, o);
  REQUIRE(o.to_vector<int64_t>() == c1.to_vector<int64_t>());
  ct::Tensor so = ct::Tensor::empty({2, 2}, ct::dtype::float64);
  ct::softmax(x, so);
  REQUIRE(so.to_vector<double>() == ct::softmax(x).to_vector<double>());
  ct::log_softmax(x, 0, so);
  REQUIRE(so.to_vector<double>() == ct::log_softmax(x, 0).to_vector<double>());
  CTCpuStream one_thread = {sizeof(CTCpuStream), 1, nullptr, nullptr};
  REQUIRE(ct::softmax(x, &one_thread).to_vector<double>() == ct::softmax(x).to_vector<double>());
  REQUIRE(ct::cumsum(xi, 1, &one_thread).to_vector<int64_t>() == c1.to_vector<int64_t>());
  REQUIRE(ct::along_axis(CT_OP_CUMSUM, xi, 1).to_vector<int64_t>() == c1.to_vector<int64_t>());

  // Errors.
  // A bad axis: the value form's shape query says it; the out= form, the op.
  require_status([&] { ct::softmax(x, 2); }, CT_ERR_INVALID_ARGUMENT, "ct_op_output_info");
  require_status([&] { ct::softmax(x, 2, so); }, CT_ERR_INVALID_ARGUMENT, "ct_along_axis");
  require_status([&] { ct::cumsum(xi, -3); }, CT_ERR_INVALID_ARGUMENT);
  require_status([&] { ct::softmax(xi); }, CT_ERR_UNSUPPORTED);
  require_status([&] { ct::cumsum(xi, 1, ct::Tensor::empty({2, 3}, ct::dtype::int32)); },
                 CT_ERR_DTYPE_MISMATCH);
  require_status([&] { ct::softmax(x, ct::Tensor::empty({2, 3}, ct::dtype::float64)); },
                 CT_ERR_SHAPE_MISMATCH);
}

TEST_CASE("along-axis ops in place (out is exactly x)", "[cpp]") {
  // notes/SEMANTICS.md: an along-axis op's out may be exactly x.
  ct::Tensor x = ct::Tensor::from({0.0, 0.0, 0.0, std::log(3.0)}, {2, 2});
  void* const data = x.raw_data();
  ct::softmax(x, -1, x);
  REQUIRE(x.raw_data() == data);
  const std::vector<double> v = x.to_vector<double>();
  REQUIRE(v[0] == Approx(0.5));
  REQUIRE(v[2] == Approx(0.25));
  REQUIRE(v[3] == Approx(0.75));
  ct::Tensor f = ct::Tensor::from({1.f, 2.f, 3.f, 4.f}, {2, 2});
  ct::cumsum(f, 0, f);
  REQUIRE(f.to_vector<float>() == std::vector<float>{1, 2, 4, 6});
}

namespace {

// An input of the first dtype (float32, int32, bool) that @p op supports.
CTDataType first_supported(int32_t op) {
  if (ct_op_supported(op, ct::cpu(), ct::dtype::float32) == CT_OK) return ct::dtype::float32;
  if (ct_op_supported(op, ct::cpu(), ct::dtype::int32) == CT_OK) return ct::dtype::int32;
  return ct::dtype::bool_;
}

// (2,1) and (3) operands of @p op's first supported dtype, values that tell
// the ops apart (negative, zero, fractional; small shift counts).
std::pair<ct::Tensor, ct::Tensor> binary_inputs(int32_t op) {
  const CTDataType dt = first_supported(op);
  if (dt_eq(dt, ct::dtype::float32))
    return std::make_pair(ct::Tensor::from({-1.5f, 2.5f}, {2, 1}),
                          ct::Tensor::from({0.5f, -2.f, 3.f}));
  if (dt_eq(dt, ct::dtype::int32))
    return std::make_pair(ct::Tensor::from({-3, 7}, {2, 1}), ct::Tensor::from({1, 0, 2}));
  return std::make_pair(ct::Tensor::from({true, false}, {2, 1}),
                        ct::Tensor::from({true, false, true}));
}

ct::Tensor reduce_input(int32_t op) {
  const CTDataType dt = first_supported(op);
  if (dt_eq(dt, ct::dtype::float32))
    return ct::Tensor::from({-1.5f, 0.25f, 3.f, 2.f, -4.f, 0.5f}, {2, 3});
  if (dt_eq(dt, ct::dtype::int32)) return ct::Tensor::from({-3, 0, 5, 2, 7, 1}, {2, 3});
  return ct::Tensor::from({true, false, true, false, false, true}, {2, 3});
}

}  // namespace

// Each generated category-2 wrapper must call its own op id: compare its
// result with the C entry point called directly with that id.
#define CT_TEST2_GEN_(ID, name, kind, nparams, summary) \
  SECTION(#name) { CT_TEST2_GEN_##kind(ID, name, nparams) }
#define CT_TEST2_GEN_CT_KIND_BINARY(ID, name, nparams)                                 \
  std::pair<ct::Tensor, ct::Tensor> ab = binary_inputs(CT_OP_##ID);                    \
  ct::Tensor got = ct::name(ab.first, ab.second);                                      \
  REQUIRE(got.shape() == shp({2, 3}));                                                 \
  REQUIRE(dt_eq(got.dtype(), ct::output_dtype(CT_OP_##ID, ab.first.dtype())));         \
  ct::Tensor want = ct::Tensor::empty({2, 3}, got.dtype());                            \
  CTensor wc = want.c();                                                               \
  REQUIRE(ct_binary(CT_OP_##ID, &ab.first.c(), &ab.second.c(), &wc, nullptr) == CT_OK); \
  REQUIRE(bytes_of(got) == bytes_of(want));                                            \
  ct::Tensor out = ct::Tensor::empty({2, 3}, got.dtype());                             \
  ct::name(ab.first, ab.second, out);                                                  \
  REQUIRE(bytes_of(out) == bytes_of(want));
#define CT_TEST2_GEN_CT_KIND_REDUCE(ID, name, nparams) CT_TEST2_REDUCE_##nparams(ID, name)
#define CT_TEST2_REDUCE_0(ID, name)                                                         \
  ct::Tensor x = reduce_input(CT_OP_##ID);                                                  \
  ct::Tensor got = ct::name(x, {1}, true);                                                  \
  REQUIRE(got.shape() == shp({2, 1}));                                                      \
  REQUIRE(dt_eq(got.dtype(), ct::output_dtype(CT_OP_##ID, x.dtype())));                     \
  ct::Tensor want = ct::Tensor::empty({2, 1}, got.dtype());                                 \
  CTensor wc = want.c();                                                                    \
  const int32_t axis = 1;                                                                   \
  REQUIRE(ct_reduce(CT_OP_##ID, &x.c(), &axis, 1, 1, nullptr, 0, &wc, nullptr) == CT_OK);   \
  REQUIRE(bytes_of(got) == bytes_of(want));                                                 \
  REQUIRE(bytes_of(ct::name(x, 1, true)) == bytes_of(want));                                \
  ct::Tensor out = ct::Tensor::empty({2, 1}, got.dtype());                                  \
  ct::name(x, {1}, true, out);                                                              \
  REQUIRE(bytes_of(out) == bytes_of(want));                                                 \
  ct::Tensor all = ct::name(x);                                                             \
  ct::Tensor want_all = ct::Tensor::empty({}, got.dtype());                                 \
  CTensor wac = want_all.c();                                                               \
  REQUIRE(ct_reduce(CT_OP_##ID, &x.c(), nullptr, 0, 0, nullptr, 0, &wac, nullptr) == CT_OK); \
  REQUIRE(bytes_of(all) == bytes_of(want_all));
#define CT_TEST2_REDUCE_1(ID, name)                                                        \
  ct::Tensor x = reduce_input(CT_OP_##ID);                                                 \
  ct::Tensor got = ct::name(x, {1}, true, 1.0);                                            \
  REQUIRE(got.shape() == shp({2, 1}));                                                     \
  ct::Tensor want = ct::Tensor::empty({2, 1}, got.dtype());                                \
  CTensor wc = want.c();                                                                   \
  const int32_t axis = 1;                                                                  \
  const double p = 1.0;                                                                    \
  REQUIRE(ct_reduce(CT_OP_##ID, &x.c(), &axis, 1, 1, &p, 1, &wc, nullptr) == CT_OK);       \
  REQUIRE(bytes_of(got) == bytes_of(want));                                                \
  ct::Tensor out = ct::Tensor::empty({2, 1}, got.dtype());                                 \
  ct::name(x, 1, true, 1.0, out);                                                          \
  REQUIRE(bytes_of(out) == bytes_of(want));                                                \
  const double p0 = 0.0; /* the default correction; q = 0 */                               \
  ct::Tensor want_all = ct::Tensor::empty({}, got.dtype());                                \
  CTensor wac = want_all.c();                                                              \
  if (CT_OP_##ID == CT_OP_KTHVALUE) { /* k has no default: 0 is refused alike */           \
    REQUIRE(ct_reduce(CT_OP_##ID, &x.c(), nullptr, 0, 0, &p0, 1, &wac, nullptr) ==         \
            CT_ERR_INVALID_ARGUMENT);                                                      \
    require_status([&] { ct::name(x); }, CT_ERR_INVALID_ARGUMENT, "k=0");                  \
  } else {                                                                                 \
    REQUIRE(ct_reduce(CT_OP_##ID, &x.c(), nullptr, 0, 0, &p0, 1, &wac, nullptr) == CT_OK); \
    REQUIRE(bytes_of(ct::name(x)) == bytes_of(want_all));                                  \
  }
#define CT_TEST2_GEN_CT_KIND_ALONG_AXIS(ID, name, nparams)                         \
  ct::Tensor x = reduce_input(CT_OP_##ID);                                         \
  ct::Tensor got = ct::name(x, 0);                                                 \
  REQUIRE(got.shape() == shp({2, 3}));                                             \
  REQUIRE(dt_eq(got.dtype(), ct::output_dtype(CT_OP_##ID, x.dtype())));            \
  ct::Tensor want = ct::Tensor::empty({2, 3}, got.dtype());                        \
  CTensor wc = want.c();                                                           \
  REQUIRE(ct_along_axis(CT_OP_##ID, &x.c(), 0, &wc, nullptr) == CT_OK);            \
  REQUIRE(bytes_of(got) == bytes_of(want));                                        \
  ct::Tensor out = ct::Tensor::empty({2, 3}, got.dtype());                         \
  ct::name(x, 0, out);                                                             \
  REQUIRE(bytes_of(out) == bytes_of(want));

// Index ops through ct::index_op: the same bytes as ct_index by id (the named
// wrappers: "the index kind's named wrappers" below). take: x (2, 3), axis 1,
// index (2, 2) -> (2, 2, 2); gather: -> (2, 2); scatter and scatter_add:
// src (2, 3) -> x's shape; index_add: index (3,), src (2, 3), alpha 2.
#define CT_TEST2_GEN_CT_KIND_INDEX(ID, name, nparams)                                              \
  ct::Tensor x = reduce_input(CT_OP_##ID);                                                        \
  const bool has_src = ct::detail::index_has_src(CT_OP_##ID);                                      \
  const bool is_add = CT_OP_##ID == CT_OP_INDEX_ADD;                                               \
  ct::Tensor idx = is_add ? ct::Tensor::from_vector(std::vector<int64_t>{2, 0, 2})                        \
                          : ct::Tensor::from_vector(std::vector<int64_t>{2, -3, 1, 1}, {2, 2});           \
  const std::vector<double> ps(nparams, 2.0);                                                      \
  ct::Tensor got = ct::index_op(CT_OP_##ID, x, 1, idx, has_src ? &x : nullptr, ps);                \
  ct::Tensor want = ct::Tensor::empty(got.shape(), got.dtype());                                   \
  CTensor wc = want.c();                                                                           \
  REQUIRE(ct_index(CT_OP_##ID, &x.c(), 1, &idx.c(), has_src ? &x.c() : nullptr,                    \
                   nparams ? ps.data() : nullptr, nparams, &wc, nullptr) == CT_OK);                \
  REQUIRE(bytes_of(got) == bytes_of(want));

TEST_CASE("the index kind's named wrappers", "[cpp]") {
  ct::Tensor x = ct::Tensor::from({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  ct::Tensor i = ct::Tensor::from_vector(std::vector<int64_t>{2, 0, -1, 1}, {2, 2});
  REQUIRE(ct::take(x, 1, i).shape() == shp({2, 2, 2}));
  REQUIRE(ct::take(x, 1, i).to_vector<float>() == std::vector<float>{3, 1, 3, 2, 6, 4, 6, 5});
  REQUIRE(ct::gather(x, 1, i).to_vector<float>() == std::vector<float>{3, 1, 6, 5});
  ct::Tensor src = ct::Tensor::from({10.f, 20.f, 30.f, 40.f, 50.f, 60.f}, {2, 3});
  REQUIRE(ct::scatter(x, 1, i, src).to_vector<float>() == std::vector<float>{20, 2, 10, 4, 50, 40});
  REQUIRE(ct::scatter_add(x, 1, i, src).to_vector<float>() == std::vector<float>{21, 2, 13, 4, 55, 46});
  ct::Tensor i1 = ct::Tensor::from_vector(std::vector<int64_t>{2, 2, 0});
  REQUIRE(ct::index_add(x, 1, i1, src).to_vector<float>() == std::vector<float>{31, 2, 33, 64, 5, 96});
  REQUIRE(ct::index_add(x, 1, i1, src, 0.5).to_vector<float>() == std::vector<float>{16, 2, 18, 34, 5, 51});
  ct::Tensor out = ct::Tensor::empty({2, 3}, ct::dtype::float32);
  ct::scatter(x, 1, i, src, out);
  REQUIRE(out.to_vector<float>() == std::vector<float>{20, 2, 10, 4, 50, 40});
  ct::scatter_add(out, 1, i, src, out);  // in place
  REQUIRE(out.to_vector<float>() == std::vector<float>{40, 2, 20, 4, 100, 80});
  ct::Tensor bad = ct::Tensor::from_vector(std::vector<int64_t>{3, 0, 0, 0}, {2, 2});
  require_status([&] { ct::gather(x, 1, bad); }, CT_ERR_INVALID_ARGUMENT, "index[0,0]=3 is outside [-3, 3)");
}

TEST_CASE("every generated category 2 wrapper calls its own op", "[cpp]") {
  CT_BROADCAST_REDUCE_OPS(CT_TEST2_GEN_)
}

TEST_CASE("generated category 2 wrappers cover the op list", "[cpp]") {
  // One name per op, in registry order, matching the library's names.
  int32_t count = 0;
#define CT_TEST2_NAME_(ID, op_name, op_kind, op_nparams, summary)           \
  REQUIRE(std::string(ct::op_info(CT_OP_##ID).name) == #op_name);            \
  REQUIRE(ct::op_info(CT_OP_##ID).kind == op_kind);                          \
  REQUIRE(ct::op_info(CT_OP_##ID).num_params == op_nparams);                 \
  REQUIRE(ct::op_info(CT_OP_##ID).category == CT_CATEGORY_BROADCAST_REDUCE); \
  ++count;
  CT_BROADCAST_REDUCE_OPS(CT_TEST2_NAME_)
#undef CT_TEST2_NAME_
  int32_t in_registry = 0;  // every built-in op of category 2 has one
  for (int32_t op = 0; op < (int32_t)CT_OP_END_; ++op)
    if (ct::op_info(op).category == CT_CATEGORY_BROADCAST_REDUCE) ++in_registry;
  REQUIRE(count == in_registry);
}
