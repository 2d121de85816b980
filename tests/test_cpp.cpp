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
  REQUIRE(dt_eq(ct::dtype_of<const float>(), ct::dtype::float32));
  REQUIRE_FALSE(dt_eq(ct::dtype::float16, ct::dtype::bfloat16));
  REQUIRE(ct::dtype::itemsize(ct::dtype::bool_) == 1);
  REQUIRE(ct::dtype::itemsize(ct::dtype::bfloat16) == 2);
  REQUIRE(ct::dtype::itemsize(ct::dtype::int64) == 8);
  REQUIRE(std::string(ct::dtype::name(ct::dtype::bfloat16)) == "bfloat16");
  REQUIRE(std::string(ct::dtype::name(ct::dtype::uint8)) == "uint8");
  REQUIRE(std::string(ct::dtype::name(ct::dtype::bool_)) == "bool");
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
