// Tests of the C++ wrapper's category 3 (NN ops): option structs, output
// shapes, ct::Workspace, ct::Plan, and every wrapper form against the direct
// C call on the same inputs (byte for byte). Kept C++11-clean: it also
// compiles as -std=c++11 -pedantic -Wall -Wextra -Werror.
#include <catch2/catch.hpp>

#include <ctensor/ctensor.hpp>

#include "test_util.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

using ct::Tensor;
using ct::TensorView;

const CTDevice kCpu = {CT_CPU, 0};

// A float32 tensor of @p shape with uniform values in [lo, hi).
Tensor rnd(const std::vector<int64_t>& shape, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Tensor t = Tensor::empty(shape, ct::dtype::float32);
  ctt::Rng r(seed);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(r.uniform(lo, hi));
  return t;
}

// A compact tensor whose every byte is @p b (a sentinel).
Tensor filled(const std::vector<int64_t>& shape, CTDataType dt, unsigned char b = 0xAB) {
  Tensor t = Tensor::empty(shape, dt);
  if (t.nbytes()) std::memset(t.data<void>(), b, t.nbytes());
  return t;
}

// The logical elements' bytes in row-major order (any strides).
std::vector<unsigned char> bytes_of(const TensorView& t) {
  Tensor c = ct::clone(t);
  std::vector<unsigned char> b(c.nbytes());
  if (!b.empty()) std::memcpy(b.data(), c.data<void>(), b.size());
  return b;
}

// The bytes of a tensor's whole buffer (compact tensors).
std::vector<unsigned char> raw_bytes(const Tensor& t) {
  std::vector<unsigned char> b(t.nbytes());
  if (!b.empty()) std::memcpy(b.data(), t.data<void>(), b.size());
  return b;
}

// A workspace for the direct C calls, from ct_malloc.
struct CBuf {
  void* p;
  size_t n;
  explicit CBuf(size_t bytes) : p(nullptr), n(bytes) {
    if (bytes) REQUIRE(ct_malloc(kCpu, bytes, &p) == CT_OK);
  }
  ~CBuf() { ct_free(kCpu, p); }
  CBuf(const CBuf&) = delete;
  CBuf& operator=(const CBuf&) = delete;
};

// Query, allocate, run: the C reference call.
template <class Size, class Run>
void c_call(const Size& size, const Run& run) {
  size_t n = 0;
  const CTStatus s = size(&n);
  const std::string size_message = ct_last_error();
  INFO(size_message);
  REQUIRE(s == CT_OK);
  CBuf ws(n);
  const CTStatus r = run(ws.p, ws.n);
  const std::string run_message = ct_last_error();
  INFO(run_message);
  REQUIRE(r == CT_OK);
}

bool dt_eq(CTDataType a, CTDataType b) { return ct::dtype::equal(a, b); }

std::vector<int64_t> shp(std::initializer_list<int64_t> s) { return std::vector<int64_t>(s); }

// The ct::Error a callable throws (fails the test if none).
template <class F>
ct::Error error_of(F f) {
  try {
    f();
  } catch (const ct::Error& e) {
    return e;
  }
  FAIL("no ct::Error was thrown");
  return ct::Error(CT_OK, "");
}

}  // namespace

// ---------------------------------------------------------------------------
// Options, shapes, Workspace
// ---------------------------------------------------------------------------

TEST_CASE("nn: option structs map to the C descriptors", "[cpp]") {
  // Defaults are the zeroed descriptors with struct_size set.
  const ct::Conv2dOptions c0;
  REQUIRE(c0.c().struct_size == sizeof(CTConv2dDesc));
  REQUIRE(c0.c().groups == 0);
  for (int i = 0; i < 2; ++i) {
    REQUIRE(c0.c().stride[i] == 0);
    REQUIRE(c0.c().pad_begin[i] == 0);
    REQUIRE(c0.c().pad_end[i] == 0);
    REQUIRE(c0.c().dilation[i] == 0);
  }
  REQUIRE(c0.c().activation == CT_ACTIVATION_NONE);
  REQUIRE(c0.c().reserved == 0);

  const ct::Conv2dOptions c1 =
      ct::Conv2dOptions().stride(2).padding(1).dilation(3).groups(4).activation(ct::Activation::relu);
  REQUIRE(c1.c().stride[0] == 2);
  REQUIRE(c1.c().stride[1] == 2);
  REQUIRE(c1.c().pad_begin[0] == 1);
  REQUIRE(c1.c().pad_begin[1] == 1);
  REQUIRE(c1.c().pad_end[0] == 1);
  REQUIRE(c1.c().pad_end[1] == 1);
  REQUIRE(c1.c().dilation[0] == 3);
  REQUIRE(c1.c().dilation[1] == 3);
  REQUIRE(c1.c().groups == 4);
  REQUIRE(c1.c().activation == CT_ACTIVATION_RELU);

  // padding(top, bottom, left, right): pad_begin = {top, left}, pad_end = {bottom, right}.
  const CTConv2dDesc& d = ct::Conv2dOptions().padding(1, 2, 3, 4);  // implicit conversion
  REQUIRE(d.pad_begin[0] == 1);
  REQUIRE(d.pad_end[0] == 2);
  REQUIRE(d.pad_begin[1] == 3);
  REQUIRE(d.pad_end[1] == 4);
  const ct::Conv2dOptions c2 = ct::Conv2dOptions().padding(5, 6).stride(7, 8).dilation(9, 10);
  REQUIRE(c2.c().pad_begin[0] == 5);
  REQUIRE(c2.c().pad_end[0] == 5);
  REQUIRE(c2.c().pad_begin[1] == 6);
  REQUIRE(c2.c().pad_end[1] == 6);
  REQUIRE(c2.c().stride[0] == 7);
  REQUIRE(c2.c().stride[1] == 8);
  REQUIRE(c2.c().dilation[0] == 9);
  REQUIRE(c2.c().dilation[1] == 10);
  // The last setter wins.
  REQUIRE(ct::Conv2dOptions().padding(1, 2, 3, 4).padding(0).c().pad_end[1] == 0);

  // From a C descriptor: copied, struct_size fixed.
  CTConv2dDesc raw;
  std::memset(&raw, 0, sizeof raw);
  raw.groups = 3;
  raw.pad_end[1] = 2;
  const ct::Conv2dOptions c3(raw);
  REQUIRE(c3.c().struct_size == sizeof(CTConv2dDesc));
  REQUIRE(c3.c().groups == 3);
  REQUIRE(c3.c().pad_end[1] == 2);

  // Activation values are the C ones.
  REQUIRE(static_cast<int32_t>(ct::Activation::none) == CT_ACTIVATION_NONE);
  REQUIRE(static_cast<int32_t>(ct::Activation::relu) == CT_ACTIVATION_RELU);
  REQUIRE(static_cast<int32_t>(ct::Activation::gelu) == CT_ACTIVATION_GELU);
  REQUIRE(static_cast<int32_t>(ct::Activation::gelu_tanh) == CT_ACTIVATION_GELU_TANH);
  REQUIRE(static_cast<int32_t>(ct::Activation::sigmoid) == CT_ACTIVATION_SIGMOID);
  REQUIRE(static_cast<int32_t>(ct::Activation::tanh) == CT_ACTIVATION_TANH);

  const ct::Pool2dOptions p0(3);
  REQUIRE(p0.c().struct_size == sizeof(CTPool2dDesc));
  REQUIRE(p0.c().kernel[0] == 3);
  REQUIRE(p0.c().kernel[1] == 3);
  REQUIRE(p0.c().stride[0] == 0);  // 0 = the kernel
  REQUIRE(p0.c().count_include_pad == 0);
  const ct::Pool2dOptions p1 =
      ct::Pool2dOptions(2, 3).stride(1, 2).padding(1, 0, 1, 1).dilation(2).count_include_pad(true);
  REQUIRE(p1.c().kernel[0] == 2);
  REQUIRE(p1.c().kernel[1] == 3);
  REQUIRE(p1.c().stride[0] == 1);
  REQUIRE(p1.c().stride[1] == 2);
  REQUIRE(p1.c().pad_begin[0] == 1);
  REQUIRE(p1.c().pad_end[0] == 0);
  REQUIRE(p1.c().pad_begin[1] == 1);
  REQUIRE(p1.c().pad_end[1] == 1);
  REQUIRE(p1.c().dilation[0] == 2);
  REQUIRE(p1.c().dilation[1] == 2);
  REQUIRE(p1.c().count_include_pad == 1);
  REQUIRE(ct::Pool2dOptions(2).count_include_pad(true).count_include_pad(false).c().count_include_pad == 0);
  const CTPool2dDesc& pd = ct::Pool2dOptions(4).padding(2);
  REQUIRE(pd.pad_begin[0] == 2);
  REQUIRE(pd.pad_end[1] == 2);
  REQUIRE(ct::Pool2dOptions(1).kernel(5, 6).stride(3).c().stride[1] == 3);
  REQUIRE(ct::Pool2dOptions(1).kernel(5, 6).c().kernel[1] == 6);

  const ct::BatchNormOptions b0;
  REQUIRE(b0.c().struct_size == sizeof(CTBatchNormDesc));
  REQUIRE(b0.c().epsilon == 1e-5);
  REQUIRE(b0.c().reserved == 0);
  const CTBatchNormDesc& bd = ct::BatchNormOptions().eps(1e-3);
  REQUIRE(bd.epsilon == 1e-3);

  const ct::LayerNormOptions l0;
  REQUIRE(l0.c().struct_size == sizeof(CTLayerNormDesc));
  REQUIRE(l0.c().normalized_ndim == 1);
  REQUIRE(l0.c().epsilon == 1e-5);
  const ct::LayerNormOptions l1 = ct::LayerNormOptions(2).eps(1e-6);
  REQUIRE(l1.c().normalized_ndim == 2);
  REQUIRE(l1.c().epsilon == 1e-6);
  REQUIRE(ct::LayerNormOptions().normalized_ndim(3).c().normalized_ndim == 3);

  const ct::MatmulOptions m0;
  REQUIRE(m0.c().struct_size == sizeof(CTMatmulDesc));
  REQUIRE(m0.c().activation == CT_ACTIVATION_NONE);
  const CTMatmulDesc& md = ct::MatmulOptions().activation(ct::Activation::gelu);
  REQUIRE(md.activation == CT_ACTIVATION_GELU);
}

TEST_CASE("nn: output shape helpers give the library's shapes", "[cpp]") {
  // P = (H + pb + pe - dil * (R - 1) - 1) / s + 1, floor.
  REQUIRE(ct::conv2d_output_shape({2, 4, 9, 8}, {6, 2, 3, 3},
                                  ct::Conv2dOptions().stride(2).padding(1, 2, 0, 1).dilation(1, 2).groups(2)) ==
          shp({2, 6, 5, 3}));
  REQUIRE(ct::conv2d_output_shape({1, 3, 5, 5}, {8, 3, 3, 3}) == shp({1, 8, 3, 3}));
  REQUIRE(ct::conv2d_output_shape({1, 3, 5, 5}, {8, 3, 3, 3}, ct::Conv2dOptions().padding(1)) ==
          shp({1, 8, 5, 5}));
  REQUIRE(ct::conv2d_output_shape({1, 3, 6, 7}, {8, 3, 3, 3}, ct::Conv2dOptions().stride(2)) ==
          shp({1, 8, 2, 3}));
  // The library validates what ct::conv2d would: channels per group, a
  // kernel larger than the padded input, 4-d tensors, negative strides.
  const ct::Error ge = error_of([] { ct::conv2d_output_shape({2, 4, 9, 8}, {6, 2, 3, 3}); });
  REQUIRE(ge.status() == CT_ERR_SHAPE_MISMATCH);
  REQUIRE(ctt::contains(ge.what(), "ct_op_output_info"));
  REQUIRE(ctt::contains(ge.what(), "groups"));
  const ct::Error ke =
      error_of([] { ct::conv2d_output_shape({1, 3, 2, 2}, {8, 3, 5, 5}, ct::Conv2dOptions().stride(3)); });
  REQUIRE(ke.status() == CT_ERR_SHAPE_MISMATCH);
  REQUIRE(ctt::contains(ke.what(), "kernel"));
  REQUIRE_THROWS_AS(ct::conv2d_output_shape({3, 5, 5}, {8, 3, 3, 3}), ct::Error);
  REQUIRE_THROWS_AS(ct::conv2d_output_shape({1, 3, 5, 5}, {8, 3, 3, 3}, ct::Conv2dOptions().stride(-1)),
                    ct::Error);

  // Pooling: stride 0 means the kernel.
  REQUIRE(ct::pool2d_output_shape({2, 3, 7, 6}, ct::Pool2dOptions(2)) == shp({2, 3, 3, 3}));
  REQUIRE(ct::pool2d_output_shape({2, 3, 7, 6}, ct::Pool2dOptions(3, 2).stride(2).padding(1, 1, 0, 1)) ==
          shp({2, 3, 4, 3}));
  REQUIRE(ct::pool2d_output_shape({1, 1, 5, 5}, ct::Pool2dOptions(2).stride(1).dilation(2)) ==
          shp({1, 1, 3, 3}));
  const ct::Error pe = error_of([] { ct::pool2d_output_shape({1, 5, 5}, ct::Pool2dOptions(2)); });
  REQUIRE(pe.status() == CT_ERR_SHAPE_MISMATCH);
  REQUIRE(ctt::contains(pe.what(), "ct_op_output_info"));

  REQUIRE(ct::matmul_output_shape({3, 4}, {4, 5}) == shp({3, 5}));
  REQUIRE(ct::matmul_output_shape({2, 1, 3, 4}, {3, 4, 5}) == shp({2, 3, 3, 5}));
  REQUIRE(ct::matmul_output_shape({7, 3, 4}, {4, 5}) == shp({7, 3, 5}));
  const ct::Error me = error_of([] { ct::matmul_output_shape({2, 3, 4}, {3, 4, 5}); });
  REQUIRE(me.status() == CT_ERR_SHAPE_MISMATCH);
  REQUIRE_THROWS_AS(ct::matmul_output_shape({4}, {4, 5}), ct::Error);
  // The K dims are the library's to check, too.
  const ct::Error ke2 = error_of([] { ct::matmul_output_shape({3, 4}, {5, 2}); });
  REQUIRE(ke2.status() == CT_ERR_SHAPE_MISMATCH);
  REQUIRE(ctt::contains(ke2.what(), "K"));
}

TEST_CASE("nn: Workspace is a move-only, growable ct_malloc buffer", "[cpp]") {
  ct::Workspace empty;
  REQUIRE(empty.size() == 0);
  REQUIRE(empty.data() == nullptr);
  REQUIRE(empty.device().device_type == CT_CPU);
  REQUIRE(ct::Workspace(0).data() == nullptr);

  ct::Workspace ws(100);
  REQUIRE(ws.size() == 100);
  REQUIRE(ws.data() != nullptr);
  REQUIRE(reinterpret_cast<uintptr_t>(ws.data()) % 64 == 0);  // ct_malloc's CPU alignment
  std::memset(ws.data(), 1, ws.size());                        // the bytes are ours

  void* const first = ws.data();
  ws.reserve(50);  // never shrinks
  REQUIRE(ws.size() == 100);
  REQUIRE(ws.data() == first);
  ws.reserve(100);
  REQUIRE(ws.data() == first);
  ws.reserve(4096);  // grows to exactly what is asked
  REQUIRE(ws.size() == 4096);
  REQUIRE(ws.data() != nullptr);
  std::memset(ws.data(), 2, ws.size());

  void* const grown = ws.data();
  ct::Workspace moved(std::move(ws));
  REQUIRE(moved.data() == grown);
  REQUIRE(moved.size() == 4096);
  REQUIRE(ws.data() == nullptr);  // NOLINT(bugprone-use-after-move): documented state
  REQUIRE(ws.size() == 0);

  ct::Workspace other(10);
  other = std::move(moved);
  REQUIRE(other.data() == grown);
  REQUIRE(other.size() == 4096);
  REQUIRE(moved.size() == 0);  // NOLINT(bugprone-use-after-move)
  other.clear();
  REQUIRE(other.size() == 0);
  REQUIRE(other.data() == nullptr);
  other.reserve(8);
  REQUIRE(other.size() == 8);

  // An allocation failure is ct_malloc's error, and leaves the buffer as it was.
  const ct::Error e = error_of([&] { other.reserve(SIZE_MAX); });
  REQUIRE(e.status() == CT_ERR_OUT_OF_MEMORY);
  REQUIRE(ctt::contains(e.what(), "ct_malloc"));
  REQUIRE(other.size() == 8);
  REQUIRE(other.data() != nullptr);
}

TEST_CASE("nn: a Workspace passed to ops grows to the largest query", "[cpp]") {
  const ct::Conv2dOptions o = ct::Conv2dOptions().padding(1);
  Tensor x = rnd({2, 3, 8, 8}, 1), w = rnd({4, 3, 3, 3}, 2);
  Tensor dy = rnd({2, 4, 8, 8}, 3);
  Tensor y = filled({2, 4, 8, 8}, ct::dtype::float32);
  Tensor dw = filled({4, 3, 3, 3}, ct::dtype::float32);
  const size_t need_fwd = ct::conv2d_workspace_size(x, w, nullptr, y, o);
  const size_t need_bwd = ct::conv2d_backward_weight_workspace_size(x, dy, dw, nullptr, o);
  size_t c_need = 0;
  CTensor yc = y.c();
  REQUIRE(ct_conv2d_workspace_size(&o.c(), &x.c(), &w.c(), nullptr, &yc, &c_need) == CT_OK);
  REQUIRE(need_fwd == c_need);

  ct::Workspace ws;
  ct::conv2d(x, w, nullptr, y, o, ws);
  REQUIRE(ws.size() == need_fwd);
  ct::conv2d_backward_weight(x, dy, dw, nullptr, o, ws);
  REQUIRE(ws.size() == (need_fwd > need_bwd ? need_fwd : need_bwd));
  const size_t after = ws.size();
  void* const data = ws.data();
  ct::conv2d(x, w, nullptr, y, o, ws);  // fits: no reallocation
  REQUIRE(ws.size() == after);
  REQUIRE(ws.data() == data);
  // A Workspace that is already larger is used as is.
  ct::Workspace big(after + 1000);
  void* const big_data = big.data();
  ct::conv2d(x, w, nullptr, y, o, big);
  REQUIRE(big.size() == after + 1000);
  REQUIRE(big.data() == big_data);
}

// ---------------------------------------------------------------------------
// Each wrapper against the direct C call
// ---------------------------------------------------------------------------

TEST_CASE("nn: matmul wrappers compute the C call's bytes", "[cpp]") {
  Tensor a = rnd({2, 1, 3, 4}, 10);
  Tensor b_store = rnd({3, 5, 4}, 11);
  Tensor b = b_store.transpose(1, 2);  // (3, 4, 5), a strided view
  Tensor bias = rnd({5}, 12);
  const ct::MatmulOptions o = ct::MatmulOptions().activation(ct::Activation::gelu);
  const std::vector<int64_t> out_shape = shp({2, 3, 3, 5});

  Tensor want = filled(out_shape, ct::dtype::float32);
  CTensor wc = want.c();
  c_call([&](size_t* n) { return ct_matmul_workspace_size(&o.c(), &a.c(), &b.c(), &bias.c(), &wc, n); },
         [&](void* p, size_t n) { return ct_matmul(&o.c(), &a.c(), &b.c(), &bias.c(), &wc, p, n, nullptr); });

  Tensor v1 = ct::matmul(a, b, &bias, o);
  REQUIRE(v1.shape() == out_shape);
  REQUIRE(dt_eq(v1.dtype(), ct::dtype::float32));
  REQUIRE(v1.is_contiguous());
  REQUIRE(raw_bytes(v1) == raw_bytes(want));
  REQUIRE(raw_bytes(ct::matmul(a, b, bias, o)) == raw_bytes(want));
  ct::Workspace ws;
  REQUIRE(raw_bytes(ct::matmul(a, b, &bias, o, ws)) == raw_bytes(want));

  Tensor out = filled(out_shape, ct::dtype::float32);
  ct::matmul(a, b, &bias, out, o);
  REQUIRE(raw_bytes(out) == raw_bytes(want));
  out = filled(out_shape, ct::dtype::float32);
  ct::matmul(a, b, &bias, out, o, ws);
  REQUIRE(raw_bytes(out) == raw_bytes(want));
  const size_t need = ct::matmul_workspace_size(a, b, &bias, out, o);
  CBuf buf(need);
  out = filled(out_shape, ct::dtype::float32);
  ct::matmul(a, b, &bias, out, o, buf.p, buf.n);
  REQUIRE(raw_bytes(out) == raw_bytes(want));

  // A strided out= view: only its elements are written.
  Tensor wide = filled({2, 3, 3, 7}, ct::dtype::float32, 0x11);
  Tensor view = wide.slice(3, 1, 6);
  ct::matmul(a, b, &bias, view, o);
  REQUIRE(bytes_of(view) == raw_bytes(want));
  const std::vector<float> wv = wide.to_vector<float>();
  float sentinel;
  std::memset(&sentinel, 0x11, sizeof sentinel);
  for (size_t i = 0; i < wv.size(); i += 7) {
    REQUIRE(std::memcmp(&wv[i], &sentinel, 4) == 0);
    REQUIRE(std::memcmp(&wv[i + 6], &sentinel, 4) == 0);
  }

  // No bias, no options: ct::matmul(a, b).
  const ct::MatmulOptions none;
  Tensor want2 = filled(out_shape, ct::dtype::float32);
  CTensor w2 = want2.c();
  c_call([&](size_t* n) { return ct_matmul_workspace_size(&none.c(), &a.c(), &b.c(), nullptr, &w2, n); },
         [&](void* p, size_t n) { return ct_matmul(&none.c(), &a.c(), &b.c(), nullptr, &w2, p, n, nullptr); });
  REQUIRE(raw_bytes(ct::matmul(a, b)) == raw_bytes(want2));
  REQUIRE(raw_bytes(ct::matmul(a, b, nullptr)) == raw_bytes(want2));
  REQUIRE(raw_bytes(ct::matmul(a, b, none)) == raw_bytes(want2));

  // A plan of the same call.
  Tensor pout = filled(out_shape, ct::dtype::float32);
  ct::Plan plan = ct::Plan::matmul(a, b, &bias, pout, o);
  REQUIRE(plan.op() == CT_OP_MATMUL);
  REQUIRE(plan.num_tensors() == 4);
  plan.execute({&a, &b, &bias, &pout});
  REQUIRE(raw_bytes(pout) == raw_bytes(want));
}

TEST_CASE("nn: conv2d wrappers compute the C call's bytes", "[cpp]") {
  Tensor x = rnd({2, 4, 9, 8}, 20);
  Tensor w = rnd({6, 2, 3, 3}, 21);
  Tensor bias = rnd({6}, 22);
  const ct::Conv2dOptions o = ct::Conv2dOptions()
                                  .stride(2)
                                  .padding(1, 2, 0, 1)
                                  .dilation(1, 2)
                                  .groups(2)
                                  .activation(ct::Activation::relu);
  const std::vector<int64_t> y_shape = shp({2, 6, 5, 3});

  Tensor want = filled(y_shape, ct::dtype::float32);
  CTensor wc = want.c();
  c_call([&](size_t* n) { return ct_conv2d_workspace_size(&o.c(), &x.c(), &w.c(), &bias.c(), &wc, n); },
         [&](void* p, size_t n) { return ct_conv2d(&o.c(), &x.c(), &w.c(), &bias.c(), &wc, p, n, nullptr); });

  Tensor v = ct::conv2d(x, w, &bias, o);
  REQUIRE(v.shape() == y_shape);
  REQUIRE(dt_eq(v.dtype(), ct::dtype::float32));
  REQUIRE(raw_bytes(v) == raw_bytes(want));
  REQUIRE(raw_bytes(ct::conv2d(x, w, bias, o)) == raw_bytes(want));
  ct::Workspace ws;
  REQUIRE(raw_bytes(ct::conv2d(x, w, &bias, o, ws)) == raw_bytes(want));
  REQUIRE(ws.size() == ct::conv2d_workspace_size(x, w, &bias, v, o));

  Tensor y = filled(y_shape, ct::dtype::float32);
  ct::conv2d(x, w, &bias, y, o);
  REQUIRE(raw_bytes(y) == raw_bytes(want));
  y = filled(y_shape, ct::dtype::float32);
  ct::conv2d(x, w, &bias, y, o, ws);
  REQUIRE(raw_bytes(y) == raw_bytes(want));
  CBuf buf(ct::conv2d_workspace_size(x, w, &bias, y, o));
  y = filled(y_shape, ct::dtype::float32);
  ct::conv2d(x, w, &bias, y, o, buf.p, buf.n);
  REQUIRE(raw_bytes(y) == raw_bytes(want));

  // A stream is passed through: the same call on one thread.
  CTCpuStream one_thread = {sizeof(CTCpuStream), 1, nullptr, nullptr};
  Tensor want1 = filled(y_shape, ct::dtype::float32);
  CTensor w1c = want1.c();
  c_call([&](size_t* n) { return ct_conv2d_workspace_size(&o.c(), &x.c(), &w.c(), &bias.c(), &w1c, n); },
         [&](void* p, size_t n) {
           return ct_conv2d(&o.c(), &x.c(), &w.c(), &bias.c(), &w1c, p, n, &one_thread);
         });
  REQUIRE(raw_bytes(ct::conv2d(x, w, &bias, o, &one_thread)) == raw_bytes(want1));

  // NHWC data: the (N, C, H, W) view of an (N, H, W, C) buffer.
  Tensor x_nhwc = ct::clone(x.permute({0, 2, 3, 1})).permute({0, 3, 1, 2});
  REQUIRE(x_nhwc.strides() == shp({9 * 8 * 4, 1, 8 * 4, 4}));
  Tensor want_nhwc = filled(y_shape, ct::dtype::float32);
  CTensor wn = want_nhwc.c();
  c_call([&](size_t* n) { return ct_conv2d_workspace_size(&o.c(), &x_nhwc.c(), &w.c(), &bias.c(), &wn, n); },
         [&](void* p, size_t n) {
           return ct_conv2d(&o.c(), &x_nhwc.c(), &w.c(), &bias.c(), &wn, p, n, nullptr);
         });
  REQUIRE(raw_bytes(ct::conv2d(x_nhwc, w, &bias, o)) == raw_bytes(want_nhwc));

  // Without bias (and without options).
  Tensor x2 = rnd({1, 3, 6, 6}, 23), w2 = rnd({5, 3, 3, 3}, 24);
  const ct::Conv2dOptions o0;
  Tensor want2 = filled({1, 5, 4, 4}, ct::dtype::float32);
  CTensor w2c = want2.c();
  c_call([&](size_t* n) { return ct_conv2d_workspace_size(&o0.c(), &x2.c(), &w2.c(), nullptr, &w2c, n); },
         [&](void* p, size_t n) { return ct_conv2d(&o0.c(), &x2.c(), &w2.c(), nullptr, &w2c, p, n, nullptr); });
  Tensor v2 = ct::conv2d(x2, w2);
  REQUIRE(v2.shape() == shp({1, 5, 4, 4}));
  REQUIRE(raw_bytes(v2) == raw_bytes(want2));
  REQUIRE(raw_bytes(ct::conv2d(x2, w2, nullptr)) == raw_bytes(want2));
  REQUIRE(raw_bytes(ct::conv2d(x2, w2, o0)) == raw_bytes(want2));

  Tensor py = filled(y_shape, ct::dtype::float32);
  ct::Plan plan = ct::Plan::conv2d(x, w, &bias, py, o);
  plan.execute({&x, &w, &bias, &py});
  REQUIRE(raw_bytes(py) == raw_bytes(want));
}

TEST_CASE("nn: conv2d backward wrappers compute the C call's bytes", "[cpp]") {
  const ct::Conv2dOptions o = ct::Conv2dOptions().stride(2).padding(1, 2, 0, 1).dilation(1, 2).groups(2);
  const std::vector<int64_t> x_shape = shp({2, 4, 9, 8}), w_shape = shp({6, 2, 3, 3});
  Tensor x = rnd(x_shape, 30), w = rnd(w_shape, 31), dy = rnd({2, 6, 5, 3}, 32);

  SECTION("backward data") {
    Tensor want = filled(x_shape, ct::dtype::float32);
    CTensor wc = want.c();
    c_call([&](size_t* n) { return ct_conv2d_backward_data_workspace_size(&o.c(), &dy.c(), &w.c(), &wc, n); },
           [&](void* p, size_t n) { return ct_conv2d_backward_data(&o.c(), &dy.c(), &w.c(), &wc, p, n, nullptr); });
    Tensor dx = ct::conv2d_backward_data(dy, w, x_shape, o);
    REQUIRE(dx.shape() == x_shape);
    REQUIRE(raw_bytes(dx) == raw_bytes(want));
    ct::Workspace ws;
    REQUIRE(raw_bytes(ct::conv2d_backward_data(dy, w, x_shape, o, ws)) == raw_bytes(want));
    Tensor out = filled(x_shape, ct::dtype::float32);
    ct::conv2d_backward_data(dy, w, out, o);
    REQUIRE(raw_bytes(out) == raw_bytes(want));
    out = filled(x_shape, ct::dtype::float32);
    ct::conv2d_backward_data(dy, w, out, o, ws);
    REQUIRE(raw_bytes(out) == raw_bytes(want));
    CBuf buf(ct::conv2d_backward_data_workspace_size(dy, w, out, o));
    out = filled(x_shape, ct::dtype::float32);
    ct::conv2d_backward_data(dy, w, out, o, buf.p, buf.n);
    REQUIRE(raw_bytes(out) == raw_bytes(want));
    out = filled(x_shape, ct::dtype::float32);
    ct::Plan::conv2d_backward_data(dy, w, out, o).execute({&dy, &w, &out});
    REQUIRE(raw_bytes(out) == raw_bytes(want));
  }

  SECTION("backward weight, with and without dbias") {
    Tensor want_dw = filled(w_shape, ct::dtype::float32), want_db = filled({6}, ct::dtype::float32);
    CTensor dwc = want_dw.c(), dbc = want_db.c();
    c_call([&](size_t* n) {
             return ct_conv2d_backward_weight_workspace_size(&o.c(), &x.c(), &dy.c(), &dwc, &dbc, n);
           },
           [&](void* p, size_t n) {
             return ct_conv2d_backward_weight(&o.c(), &x.c(), &dy.c(), &dwc, &dbc, p, n, nullptr);
           });
    Tensor want_dw0 = filled(w_shape, ct::dtype::float32);
    CTensor dw0c = want_dw0.c();
    c_call([&](size_t* n) {
             return ct_conv2d_backward_weight_workspace_size(&o.c(), &x.c(), &dy.c(), &dw0c, nullptr, n);
           },
           [&](void* p, size_t n) {
             return ct_conv2d_backward_weight(&o.c(), &x.c(), &dy.c(), &dw0c, nullptr, p, n, nullptr);
           });

    ct::Conv2dWeightGrads g = ct::conv2d_backward_weight(x, dy, w_shape, true, o);
    REQUIRE(g.dw.shape() == w_shape);
    REQUIRE(g.dbias.shape() == shp({6}));
    REQUIRE(dt_eq(g.dbias.dtype(), ct::dtype::float32));
    REQUIRE(raw_bytes(g.dw) == raw_bytes(want_dw));
    REQUIRE(raw_bytes(g.dbias) == raw_bytes(want_db));
    ct::Conv2dWeightGrads g0 = ct::conv2d_backward_weight(x, dy, w_shape, false, o);
    REQUIRE(raw_bytes(g0.dw) == raw_bytes(want_dw0));
    REQUIRE(g0.dbias.numel() == 0);
    REQUIRE(g0.dbias.raw_data() == nullptr);
    ct::Workspace ws;
    ct::Conv2dWeightGrads g2 = ct::conv2d_backward_weight(x, dy, w_shape, true, o, ws);
    REQUIRE(raw_bytes(g2.dw) == raw_bytes(want_dw));
    REQUIRE(raw_bytes(g2.dbias) == raw_bytes(want_db));

    Tensor dw = filled(w_shape, ct::dtype::float32), db = filled({6}, ct::dtype::float32);
    ct::conv2d_backward_weight(x, dy, dw, &db, o);
    REQUIRE(raw_bytes(dw) == raw_bytes(want_dw));
    REQUIRE(raw_bytes(db) == raw_bytes(want_db));
    dw = filled(w_shape, ct::dtype::float32);
    db = filled({6}, ct::dtype::float32);
    ct::conv2d_backward_weight(x, dy, dw, &db, o, ws);
    REQUIRE(raw_bytes(dw) == raw_bytes(want_dw));
    REQUIRE(raw_bytes(db) == raw_bytes(want_db));
    CBuf buf(ct::conv2d_backward_weight_workspace_size(x, dy, dw, &db, o));
    dw = filled(w_shape, ct::dtype::float32);
    db = filled({6}, ct::dtype::float32);
    ct::conv2d_backward_weight(x, dy, dw, &db, o, buf.p, buf.n);
    REQUIRE(raw_bytes(dw) == raw_bytes(want_dw));
    REQUIRE(raw_bytes(db) == raw_bytes(want_db));
    dw = filled(w_shape, ct::dtype::float32);
    ct::conv2d_backward_weight(x, dy, dw, nullptr, o);
    REQUIRE(raw_bytes(dw) == raw_bytes(want_dw0));

    dw = filled(w_shape, ct::dtype::float32);
    db = filled({6}, ct::dtype::float32);
    ct::Plan::conv2d_backward_weight(x, dy, dw, &db, o).execute({&x, &dy, &dw, &db});
    REQUIRE(raw_bytes(dw) == raw_bytes(want_dw));
    REQUIRE(raw_bytes(db) == raw_bytes(want_db));
  }
}

TEST_CASE("nn: pooling wrappers compute the C call's bytes", "[cpp]") {
  const std::vector<int64_t> x_shape = shp({2, 3, 7, 6}), y_shape = shp({2, 3, 4, 3});
  Tensor x = rnd(x_shape, 40);
  Tensor dy = rnd(y_shape, 41);
  const ct::Pool2dOptions o = ct::Pool2dOptions(3, 2).stride(2).padding(1, 1, 0, 1);

  SECTION("max_pool2d and its backward") {
    Tensor want_y = filled(y_shape, ct::dtype::float32), want_i = filled(y_shape, ct::dtype::int64);
    CTensor yc = want_y.c(), ic = want_i.c();
    c_call([&](size_t* n) { return ct_max_pool2d_workspace_size(&o.c(), &x.c(), &yc, &ic, n); },
           [&](void* p, size_t n) { return ct_max_pool2d(&o.c(), &x.c(), &yc, &ic, p, n, nullptr); });
    Tensor want_y0 = filled(y_shape, ct::dtype::float32);
    CTensor y0c = want_y0.c();
    c_call([&](size_t* n) { return ct_max_pool2d_workspace_size(&o.c(), &x.c(), &y0c, nullptr, n); },
           [&](void* p, size_t n) { return ct_max_pool2d(&o.c(), &x.c(), &y0c, nullptr, p, n, nullptr); });

    Tensor y = ct::max_pool2d(x, o);
    REQUIRE(y.shape() == y_shape);
    REQUIRE(raw_bytes(y) == raw_bytes(want_y0));
    ct::Workspace ws;
    REQUIRE(raw_bytes(ct::max_pool2d(x, o, ws)) == raw_bytes(want_y0));
    ct::MaxPool2dResult r = ct::max_pool2d_with_indices(x, o);
    REQUIRE(r.indices.shape() == y_shape);
    REQUIRE(dt_eq(r.indices.dtype(), ct::dtype::int64));
    REQUIRE(raw_bytes(r.y) == raw_bytes(want_y));
    REQUIRE(raw_bytes(r.indices) == raw_bytes(want_i));
    ct::MaxPool2dResult r2 = ct::max_pool2d_with_indices(x, o, ws);
    REQUIRE(raw_bytes(r2.y) == raw_bytes(want_y));
    REQUIRE(raw_bytes(r2.indices) == raw_bytes(want_i));

    Tensor oy = filled(y_shape, ct::dtype::float32), oi = filled(y_shape, ct::dtype::int64);
    ct::max_pool2d(x, oy, &oi, o);
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
    REQUIRE(raw_bytes(oi) == raw_bytes(want_i));
    oy = filled(y_shape, ct::dtype::float32);
    oi = filled(y_shape, ct::dtype::int64);
    ct::max_pool2d(x, oy, &oi, o, ws);
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
    REQUIRE(raw_bytes(oi) == raw_bytes(want_i));
    CBuf buf(ct::max_pool2d_workspace_size(x, oy, &oi, o));
    oy = filled(y_shape, ct::dtype::float32);
    oi = filled(y_shape, ct::dtype::int64);
    ct::max_pool2d(x, oy, &oi, o, buf.p, buf.n);
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
    REQUIRE(raw_bytes(oi) == raw_bytes(want_i));
    oy = filled(y_shape, ct::dtype::float32);
    ct::max_pool2d(x, oy, nullptr, o);
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y0));
    oy = filled(y_shape, ct::dtype::float32);
    oi = filled(y_shape, ct::dtype::int64);
    ct::Plan::max_pool2d(x, oy, &oi, o).execute({&x, &oy, &oi});
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
    REQUIRE(raw_bytes(oi) == raw_bytes(want_i));

    // Backward from the indices.
    Tensor want_dx = filled(x_shape, ct::dtype::float32);
    CTensor dxc = want_dx.c();
    c_call([&](size_t* n) { return ct_max_pool2d_backward_workspace_size(&o.c(), &dy.c(), &ic, &dxc, n); },
           [&](void* p, size_t n) { return ct_max_pool2d_backward(&o.c(), &dy.c(), &ic, &dxc, p, n, nullptr); });
    Tensor dx = ct::max_pool2d_backward(dy, r.indices, x_shape, o);
    REQUIRE(dx.shape() == x_shape);
    REQUIRE(raw_bytes(dx) == raw_bytes(want_dx));
    REQUIRE(raw_bytes(ct::max_pool2d_backward(dy, r.indices, x_shape, o, ws)) == raw_bytes(want_dx));
    Tensor odx = filled(x_shape, ct::dtype::float32);
    ct::max_pool2d_backward(dy, r.indices, odx, o);
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
    odx = filled(x_shape, ct::dtype::float32);
    ct::max_pool2d_backward(dy, r.indices, odx, o, ws);
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
    CBuf bbuf(ct::max_pool2d_backward_workspace_size(dy, r.indices, odx, o));
    odx = filled(x_shape, ct::dtype::float32);
    ct::max_pool2d_backward(dy, r.indices, odx, o, bbuf.p, bbuf.n);
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
    odx = filled(x_shape, ct::dtype::float32);
    ct::Plan::max_pool2d_backward(dy, r.indices, odx, o).execute({&dy, &r.indices, &odx});
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
  }

  SECTION("avg_pool2d and its backward, either count_include_pad") {
    for (int include = 0; include < 2; ++include) {
      const ct::Pool2dOptions oa = ct::Pool2dOptions(o.c()).count_include_pad(include != 0);
      INFO("count_include_pad=" << include);
      Tensor want_y = filled(y_shape, ct::dtype::float32);
      CTensor yc = want_y.c();
      c_call([&](size_t* n) { return ct_avg_pool2d_workspace_size(&oa.c(), &x.c(), &yc, n); },
             [&](void* p, size_t n) { return ct_avg_pool2d(&oa.c(), &x.c(), &yc, p, n, nullptr); });
      Tensor y = ct::avg_pool2d(x, oa);
      REQUIRE(y.shape() == y_shape);
      REQUIRE(raw_bytes(y) == raw_bytes(want_y));
      ct::Workspace ws;
      REQUIRE(raw_bytes(ct::avg_pool2d(x, oa, ws)) == raw_bytes(want_y));
      Tensor oy = filled(y_shape, ct::dtype::float32);
      ct::avg_pool2d(x, oy, oa);
      REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
      oy = filled(y_shape, ct::dtype::float32);
      ct::avg_pool2d(x, oy, oa, ws);
      REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
      CBuf buf(ct::avg_pool2d_workspace_size(x, oy, oa));
      oy = filled(y_shape, ct::dtype::float32);
      ct::avg_pool2d(x, oy, oa, buf.p, buf.n);
      REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
      oy = filled(y_shape, ct::dtype::float32);
      ct::Plan::avg_pool2d(x, oy, oa).execute({&x, &oy});
      REQUIRE(raw_bytes(oy) == raw_bytes(want_y));

      Tensor want_dx = filled(x_shape, ct::dtype::float32);
      CTensor dxc = want_dx.c();
      c_call([&](size_t* n) { return ct_avg_pool2d_backward_workspace_size(&oa.c(), &dy.c(), &dxc, n); },
             [&](void* p, size_t n) { return ct_avg_pool2d_backward(&oa.c(), &dy.c(), &dxc, p, n, nullptr); });
      Tensor dx = ct::avg_pool2d_backward(dy, x_shape, oa);
      REQUIRE(dx.shape() == x_shape);
      REQUIRE(raw_bytes(dx) == raw_bytes(want_dx));
      REQUIRE(raw_bytes(ct::avg_pool2d_backward(dy, x_shape, oa, ws)) == raw_bytes(want_dx));
      Tensor odx = filled(x_shape, ct::dtype::float32);
      ct::avg_pool2d_backward(dy, odx, oa);
      REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
      odx = filled(x_shape, ct::dtype::float32);
      ct::avg_pool2d_backward(dy, odx, oa, ws);
      REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
      CBuf bbuf(ct::avg_pool2d_backward_workspace_size(dy, odx, oa));
      odx = filled(x_shape, ct::dtype::float32);
      ct::avg_pool2d_backward(dy, odx, oa, bbuf.p, bbuf.n);
      REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
      odx = filled(x_shape, ct::dtype::float32);
      ct::Plan::avg_pool2d_backward(dy, odx, oa).execute({&dy, &odx});
      REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
    }
  }
}

TEST_CASE("nn: batch norm wrappers compute the C call's bytes", "[cpp]") {
  const std::vector<int64_t> x_shape = shp({4, 3, 5, 2}), c_shape = shp({3});
  Tensor x = rnd(x_shape, 50, -2.0, 3.0);
  Tensor mean = rnd(c_shape, 51), var = rnd(c_shape, 52, 0.5, 2.0);
  Tensor scale = rnd(c_shape, 53, 0.5, 1.5), shift = rnd(c_shape, 54);
  const ct::BatchNormOptions o = ct::BatchNormOptions().eps(1e-3);
  const ct::BatchNormOptions o0;

  SECTION("inference") {
    Tensor want = filled(x_shape, ct::dtype::float32), want0 = filled(x_shape, ct::dtype::float32);
    CTensor wc = want.c(), w0c = want0.c();
    c_call([&](size_t* n) {
             return ct_batch_norm_workspace_size(&o.c(), &x.c(), &mean.c(), &var.c(), &scale.c(),
                                                 &shift.c(), &wc, n);
           },
           [&](void* p, size_t n) {
             return ct_batch_norm(&o.c(), &x.c(), &mean.c(), &var.c(), &scale.c(), &shift.c(), &wc, p,
                                  n, nullptr);
           });
    c_call([&](size_t* n) {
             return ct_batch_norm_workspace_size(&o0.c(), &x.c(), &mean.c(), &var.c(), nullptr, nullptr,
                                                 &w0c, n);
           },
           [&](void* p, size_t n) {
             return ct_batch_norm(&o0.c(), &x.c(), &mean.c(), &var.c(), nullptr, nullptr, &w0c, p, n,
                                  nullptr);
           });
    Tensor y = ct::batch_norm(x, mean, var, &scale, &shift, o);
    REQUIRE(y.shape() == x_shape);
    REQUIRE(raw_bytes(y) == raw_bytes(want));
    REQUIRE(raw_bytes(ct::batch_norm(x, mean, var, scale, shift, o)) == raw_bytes(want));
    ct::Workspace ws;
    REQUIRE(raw_bytes(ct::batch_norm(x, mean, var, &scale, &shift, o, ws)) == raw_bytes(want));
    REQUIRE(raw_bytes(ct::batch_norm(x, mean, var)) == raw_bytes(want0));
    REQUIRE(raw_bytes(ct::batch_norm(x, mean, var, nullptr, nullptr)) == raw_bytes(want0));
    Tensor oy = filled(x_shape, ct::dtype::float32);
    ct::batch_norm(x, mean, var, &scale, &shift, oy, o);
    REQUIRE(raw_bytes(oy) == raw_bytes(want));
    oy = filled(x_shape, ct::dtype::float32);
    ct::batch_norm(x, mean, var, &scale, &shift, oy, o, ws);
    REQUIRE(raw_bytes(oy) == raw_bytes(want));
    CBuf buf(ct::batch_norm_workspace_size(x, mean, var, &scale, &shift, oy, o));
    oy = filled(x_shape, ct::dtype::float32);
    ct::batch_norm(x, mean, var, &scale, &shift, oy, o, buf.p, buf.n);
    REQUIRE(raw_bytes(oy) == raw_bytes(want));
    oy = filled(x_shape, ct::dtype::float32);
    ct::Plan::batch_norm(x, mean, var, &scale, &shift, oy, o).execute({&x, &mean, &var, &scale, &shift, &oy});
    REQUIRE(raw_bytes(oy) == raw_bytes(want));
  }

  SECTION("training and backward") {
    Tensor want_y = filled(x_shape, ct::dtype::float32);
    Tensor want_m = filled(c_shape, ct::dtype::float32), want_i = filled(c_shape, ct::dtype::float32);
    CTensor yc = want_y.c(), mc = want_m.c(), ic = want_i.c();
    c_call([&](size_t* n) {
             return ct_batch_norm_training_workspace_size(&o.c(), &x.c(), &scale.c(), &shift.c(), &yc, &mc,
                                                          &ic, n);
           },
           [&](void* p, size_t n) {
             return ct_batch_norm_training(&o.c(), &x.c(), &scale.c(), &shift.c(), &yc, &mc, &ic, p, n,
                                           nullptr);
           });
    ct::BatchNormResult r = ct::batch_norm_training(x, &scale, &shift, o);
    REQUIRE(r.y.shape() == x_shape);
    REQUIRE(r.mean.shape() == c_shape);
    REQUIRE(r.invstd.shape() == c_shape);
    REQUIRE(dt_eq(r.mean.dtype(), ct::dtype::float32));
    REQUIRE(raw_bytes(r.y) == raw_bytes(want_y));
    REQUIRE(raw_bytes(r.mean) == raw_bytes(want_m));
    REQUIRE(raw_bytes(r.invstd) == raw_bytes(want_i));
    ct::BatchNormResult r2 = ct::batch_norm_training(x, scale, shift, o);
    REQUIRE(raw_bytes(r2.y) == raw_bytes(want_y));
    REQUIRE(raw_bytes(r2.invstd) == raw_bytes(want_i));
    ct::Workspace ws;
    ct::BatchNormResult r3 = ct::batch_norm_training(x, &scale, &shift, o, ws);
    REQUIRE(raw_bytes(r3.y) == raw_bytes(want_y));
    REQUIRE(raw_bytes(r3.mean) == raw_bytes(want_m));

    Tensor oy = filled(x_shape, ct::dtype::float32);
    Tensor om = filled(c_shape, ct::dtype::float32), oi = filled(c_shape, ct::dtype::float32);
    ct::batch_norm_training(x, &scale, &shift, oy, om, oi, o);
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
    REQUIRE(raw_bytes(om) == raw_bytes(want_m));
    REQUIRE(raw_bytes(oi) == raw_bytes(want_i));
    oi = filled(c_shape, ct::dtype::float32);
    ct::batch_norm_training(x, &scale, &shift, oy, om, oi, o, ws);
    REQUIRE(raw_bytes(oi) == raw_bytes(want_i));
    CBuf buf(ct::batch_norm_training_workspace_size(x, &scale, &shift, oy, om, oi, o));
    oy = filled(x_shape, ct::dtype::float32);
    ct::batch_norm_training(x, &scale, &shift, oy, om, oi, o, buf.p, buf.n);
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
    oy = filled(x_shape, ct::dtype::float32);
    ct::Plan::batch_norm_training(x, &scale, &shift, oy, om, oi, o)
        .execute({&x, &scale, &shift, &oy, &om, &oi});
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y));

    // No scale/shift, default options.
    Tensor want_y0 = filled(x_shape, ct::dtype::float32);
    Tensor want_m0 = filled(c_shape, ct::dtype::float32), want_i0 = filled(c_shape, ct::dtype::float32);
    CTensor y0c = want_y0.c(), m0c = want_m0.c(), i0c = want_i0.c();
    c_call([&](size_t* n) {
             return ct_batch_norm_training_workspace_size(&o0.c(), &x.c(), nullptr, nullptr, &y0c, &m0c,
                                                          &i0c, n);
           },
           [&](void* p, size_t n) {
             return ct_batch_norm_training(&o0.c(), &x.c(), nullptr, nullptr, &y0c, &m0c, &i0c, p, n,
                                           nullptr);
           });
    ct::BatchNormResult r0 = ct::batch_norm_training(x);
    REQUIRE(raw_bytes(r0.y) == raw_bytes(want_y0));
    REQUIRE(raw_bytes(r0.mean) == raw_bytes(want_m0));
    REQUIRE(raw_bytes(r0.invstd) == raw_bytes(want_i0));

    // Backward with the training call's statistics.
    Tensor dy = rnd(x_shape, 55);
    Tensor want_dx = filled(x_shape, ct::dtype::float32);
    Tensor want_ds = filled(c_shape, ct::dtype::float32), want_db = filled(c_shape, ct::dtype::float32);
    CTensor dxc = want_dx.c(), dsc = want_ds.c(), dbc = want_db.c();
    c_call([&](size_t* n) {
             return ct_batch_norm_backward_workspace_size(&o.c(), &x.c(), &dy.c(), &mc, &ic, &scale.c(),
                                                          &dxc, &dsc, &dbc, n);
           },
           [&](void* p, size_t n) {
             return ct_batch_norm_backward(&o.c(), &x.c(), &dy.c(), &mc, &ic, &scale.c(), &dxc, &dsc,
                                           &dbc, p, n, nullptr);
           });
    ct::NormGrads g = ct::batch_norm_backward(x, dy, r.mean, r.invstd, &scale, o);
    REQUIRE(g.dx.shape() == x_shape);
    REQUIRE(g.dscale.shape() == c_shape);
    REQUIRE(g.dshift.shape() == c_shape);
    REQUIRE(raw_bytes(g.dx) == raw_bytes(want_dx));
    REQUIRE(raw_bytes(g.dscale) == raw_bytes(want_ds));
    REQUIRE(raw_bytes(g.dshift) == raw_bytes(want_db));
    ct::NormGrads g2 = ct::batch_norm_backward(x, dy, r.mean, r.invstd, scale, o);
    REQUIRE(raw_bytes(g2.dx) == raw_bytes(want_dx));
    ct::NormGrads g3 = ct::batch_norm_backward(x, dy, r.mean, r.invstd, &scale, o, ws);
    REQUIRE(raw_bytes(g3.dscale) == raw_bytes(want_ds));

    Tensor odx = filled(x_shape, ct::dtype::float32);
    Tensor ods = filled(c_shape, ct::dtype::float32), odb = filled(c_shape, ct::dtype::float32);
    ct::batch_norm_backward(x, dy, r.mean, r.invstd, &scale, odx, &ods, &odb, o);
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
    REQUIRE(raw_bytes(ods) == raw_bytes(want_ds));
    REQUIRE(raw_bytes(odb) == raw_bytes(want_db));
    odx = filled(x_shape, ct::dtype::float32);
    ct::batch_norm_backward(x, dy, r.mean, r.invstd, &scale, odx, &ods, &odb, o, ws);
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
    CBuf bbuf(ct::batch_norm_backward_workspace_size(x, dy, r.mean, r.invstd, &scale, odx, &ods, &odb, o));
    odx = filled(x_shape, ct::dtype::float32);
    ct::batch_norm_backward(x, dy, r.mean, r.invstd, &scale, odx, &ods, &odb, o, bbuf.p, bbuf.n);
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
    odx = filled(x_shape, ct::dtype::float32);
    ods = filled(c_shape, ct::dtype::float32);
    ct::Plan::batch_norm_backward(x, dy, r.mean, r.invstd, &scale, odx, &ods, &odb, o)
        .execute({&x, &dy, &r.mean, &r.invstd, &scale, &odx, &ods, &odb});
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
    REQUIRE(raw_bytes(ods) == raw_bytes(want_ds));

    // Without dscale/dshift: dx only, the same bytes.
    odx = filled(x_shape, ct::dtype::float32);
    ct::batch_norm_backward(x, dy, r.mean, r.invstd, &scale, odx, nullptr, nullptr, o);
    Tensor want_dx_only = filled(x_shape, ct::dtype::float32);
    CTensor dxoc = want_dx_only.c();
    c_call([&](size_t* n) {
             return ct_batch_norm_backward_workspace_size(&o.c(), &x.c(), &dy.c(), &mc, &ic, &scale.c(),
                                                          &dxoc, nullptr, nullptr, n);
           },
           [&](void* p, size_t n) {
             return ct_batch_norm_backward(&o.c(), &x.c(), &dy.c(), &mc, &ic, &scale.c(), &dxoc, nullptr,
                                           nullptr, p, n, nullptr);
           });
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx_only));
  }
}

TEST_CASE("nn: layer norm wrappers compute the C call's bytes", "[cpp]") {
  const std::vector<int64_t> x_shape = shp({3, 4, 6});
  Tensor x = rnd(x_shape, 60, -2.0, 3.0);
  Tensor dy = rnd(x_shape, 61);
  for (int32_t k = 1; k <= 2; ++k) {
    INFO("normalized_ndim=" << k);
    const std::vector<int64_t> stats = k == 1 ? shp({3, 4}) : shp({3});
    const std::vector<int64_t> params = k == 1 ? shp({6}) : shp({4, 6});
    Tensor scale = rnd(params, 62, 0.5, 1.5), shift = rnd(params, 63);
    const ct::LayerNormOptions o = ct::LayerNormOptions(k).eps(1e-4);

    Tensor want_y = filled(x_shape, ct::dtype::float32);
    Tensor want_m = filled(stats, ct::dtype::float32), want_r = filled(stats, ct::dtype::float32);
    CTensor yc = want_y.c(), mc = want_m.c(), rc = want_r.c();
    c_call([&](size_t* n) {
             return ct_layer_norm_workspace_size(&o.c(), &x.c(), &scale.c(), &shift.c(), &yc, &mc, &rc, n);
           },
           [&](void* p, size_t n) {
             return ct_layer_norm(&o.c(), &x.c(), &scale.c(), &shift.c(), &yc, &mc, &rc, p, n, nullptr);
           });
    ct::LayerNormResult r = ct::layer_norm(x, &scale, &shift, o);
    REQUIRE(r.y.shape() == x_shape);
    REQUIRE(r.mean.shape() == stats);
    REQUIRE(r.rstd.shape() == stats);
    REQUIRE(dt_eq(r.rstd.dtype(), ct::dtype::float32));
    REQUIRE(raw_bytes(r.y) == raw_bytes(want_y));
    REQUIRE(raw_bytes(r.mean) == raw_bytes(want_m));
    REQUIRE(raw_bytes(r.rstd) == raw_bytes(want_r));
    ct::LayerNormResult r2 = ct::layer_norm(x, scale, shift, o);
    REQUIRE(raw_bytes(r2.y) == raw_bytes(want_y));
    ct::Workspace ws;
    ct::LayerNormResult r3 = ct::layer_norm(x, &scale, &shift, o, ws);
    REQUIRE(raw_bytes(r3.y) == raw_bytes(want_y));
    REQUIRE(raw_bytes(r3.rstd) == raw_bytes(want_r));

    Tensor oy = filled(x_shape, ct::dtype::float32);
    Tensor om = filled(stats, ct::dtype::float32), orr = filled(stats, ct::dtype::float32);
    ct::layer_norm(x, &scale, &shift, oy, &om, &orr, o);
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
    REQUIRE(raw_bytes(om) == raw_bytes(want_m));
    REQUIRE(raw_bytes(orr) == raw_bytes(want_r));
    oy = filled(x_shape, ct::dtype::float32);
    ct::layer_norm(x, &scale, &shift, oy, &om, &orr, o, ws);
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
    CBuf buf(ct::layer_norm_workspace_size(x, &scale, &shift, oy, &om, &orr, o));
    oy = filled(x_shape, ct::dtype::float32);
    ct::layer_norm(x, &scale, &shift, oy, &om, &orr, o, buf.p, buf.n);
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y));
    oy = filled(x_shape, ct::dtype::float32);
    ct::Plan::layer_norm(x, &scale, &shift, oy, &om, &orr, o).execute({&x, &scale, &shift, &oy, &om, &orr});
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y));

    // Inference form: no mean/rstd, no scale/shift.
    Tensor want_y0 = filled(x_shape, ct::dtype::float32);
    CTensor y0c = want_y0.c();
    c_call([&](size_t* n) {
             return ct_layer_norm_workspace_size(&o.c(), &x.c(), nullptr, nullptr, &y0c, nullptr, nullptr, n);
           },
           [&](void* p, size_t n) {
             return ct_layer_norm(&o.c(), &x.c(), nullptr, nullptr, &y0c, nullptr, nullptr, p, n, nullptr);
           });
    oy = filled(x_shape, ct::dtype::float32);
    ct::layer_norm(x, nullptr, nullptr, oy, nullptr, nullptr, o);
    REQUIRE(raw_bytes(oy) == raw_bytes(want_y0));
    // The value forms always write mean and rstd.
    Tensor want_y1 = filled(x_shape, ct::dtype::float32);
    Tensor want_m1 = filled(stats, ct::dtype::float32), want_r1 = filled(stats, ct::dtype::float32);
    CTensor y1c = want_y1.c(), m1c = want_m1.c(), r1c = want_r1.c();
    c_call([&](size_t* n) {
             return ct_layer_norm_workspace_size(&o.c(), &x.c(), nullptr, nullptr, &y1c, &m1c, &r1c, n);
           },
           [&](void* p, size_t n) {
             return ct_layer_norm(&o.c(), &x.c(), nullptr, nullptr, &y1c, &m1c, &r1c, p, n, nullptr);
           });
    ct::LayerNormResult plain = ct::layer_norm(x, o);
    REQUIRE(raw_bytes(plain.y) == raw_bytes(want_y1));
    REQUIRE(raw_bytes(plain.mean) == raw_bytes(want_m1));
    REQUIRE(raw_bytes(plain.rstd) == raw_bytes(want_r1));
    REQUIRE(raw_bytes(ct::layer_norm(x, nullptr, nullptr, o).y) == raw_bytes(want_y1));

    // Backward.
    Tensor want_dx = filled(x_shape, ct::dtype::float32);
    Tensor want_ds = filled(params, ct::dtype::float32), want_db = filled(params, ct::dtype::float32);
    CTensor dxc = want_dx.c(), dsc = want_ds.c(), dbc = want_db.c();
    c_call([&](size_t* n) {
             return ct_layer_norm_backward_workspace_size(&o.c(), &x.c(), &dy.c(), &mc, &rc, &scale.c(), &dxc,
                                                          &dsc, &dbc, n);
           },
           [&](void* p, size_t n) {
             return ct_layer_norm_backward(&o.c(), &x.c(), &dy.c(), &mc, &rc, &scale.c(), &dxc, &dsc, &dbc,
                                           p, n, nullptr);
           });
    ct::NormGrads g = ct::layer_norm_backward(x, dy, r.mean, r.rstd, &scale, o);
    REQUIRE(g.dx.shape() == x_shape);
    REQUIRE(g.dscale.shape() == params);
    REQUIRE(g.dshift.shape() == params);
    REQUIRE(raw_bytes(g.dx) == raw_bytes(want_dx));
    REQUIRE(raw_bytes(g.dscale) == raw_bytes(want_ds));
    REQUIRE(raw_bytes(g.dshift) == raw_bytes(want_db));
    ct::NormGrads g2 = ct::layer_norm_backward(x, dy, r.mean, r.rstd, scale, o);
    REQUIRE(raw_bytes(g2.dshift) == raw_bytes(want_db));
    ct::NormGrads g3 = ct::layer_norm_backward(x, dy, r.mean, r.rstd, &scale, o, ws);
    REQUIRE(raw_bytes(g3.dx) == raw_bytes(want_dx));

    Tensor odx = filled(x_shape, ct::dtype::float32);
    Tensor ods = filled(params, ct::dtype::float32), odb = filled(params, ct::dtype::float32);
    ct::layer_norm_backward(x, dy, r.mean, r.rstd, &scale, odx, &ods, &odb, o);
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
    REQUIRE(raw_bytes(ods) == raw_bytes(want_ds));
    REQUIRE(raw_bytes(odb) == raw_bytes(want_db));
    odx = filled(x_shape, ct::dtype::float32);
    ct::layer_norm_backward(x, dy, r.mean, r.rstd, &scale, odx, &ods, &odb, o, ws);
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
    CBuf bbuf(ct::layer_norm_backward_workspace_size(x, dy, r.mean, r.rstd, &scale, odx, &ods, &odb, o));
    odx = filled(x_shape, ct::dtype::float32);
    ct::layer_norm_backward(x, dy, r.mean, r.rstd, &scale, odx, &ods, &odb, o, bbuf.p, bbuf.n);
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
    odx = filled(x_shape, ct::dtype::float32);
    ct::Plan::layer_norm_backward(x, dy, r.mean, r.rstd, &scale, odx, &ods, &odb, o)
        .execute({&x, &dy, &r.mean, &r.rstd, &scale, &odx, &ods, &odb});
    REQUIRE(raw_bytes(odx) == raw_bytes(want_dx));
  }
}

// ---------------------------------------------------------------------------
// Plan
// ---------------------------------------------------------------------------

TEST_CASE("nn: Plan owns a CTPlan and runs it on new data", "[cpp]") {
  const ct::Conv2dOptions o = ct::Conv2dOptions().padding(1).activation(ct::Activation::relu);
  const std::vector<int64_t> x_shape = shp({2, 3, 6, 6}), y_shape = shp({2, 4, 6, 6});
  Tensor x1 = rnd(x_shape, 70), x2 = rnd(x_shape, 71), w = rnd({4, 3, 3, 3}, 72), b = rnd({4}, 73);

  // The direct C call for each input.
  Tensor want1 = filled(y_shape, ct::dtype::float32), want2 = filled(y_shape, ct::dtype::float32);
  CTensor w1c = want1.c(), w2c = want2.c();
  size_t direct_need = 0;
  c_call([&](size_t* n) {
           const CTStatus s = ct_conv2d_workspace_size(&o.c(), &x1.c(), &w.c(), &b.c(), &w1c, n);
           direct_need = *n;
           return s;
         },
         [&](void* p, size_t n) { return ct_conv2d(&o.c(), &x1.c(), &w.c(), &b.c(), &w1c, p, n, nullptr); });
  c_call([&](size_t* n) { return ct_conv2d_workspace_size(&o.c(), &x2.c(), &w.c(), &b.c(), &w2c, n); },
         [&](void* p, size_t n) { return ct_conv2d(&o.c(), &x2.c(), &w.c(), &b.c(), &w2c, p, n, nullptr); });
  REQUIRE(raw_bytes(want1) != raw_bytes(want2));

  Tensor y = filled(y_shape, ct::dtype::float32);
  ct::Plan plan(CT_OP_CONV2D, o, {&x1, &w, &b, &y});
  REQUIRE(static_cast<bool>(plan));
  REQUIRE(plan.get() != nullptr);
  REQUIRE(plan.op() == CT_OP_CONV2D);
  REQUIRE(plan.num_tensors() == 4);
  REQUIRE(plan.device().device_type == CT_CPU);
  const size_t need = plan.workspace_size();
  size_t c_need = 0;
  REQUIRE(ct_plan_workspace_size(plan.get(), &c_need) == CT_OK);
  REQUIRE(need == c_need);
  REQUIRE(need == direct_need);

  // Twice, with different data, through each execute form.
  plan.execute({&x1, &w, &b, &y});
  REQUIRE(raw_bytes(y) == raw_bytes(want1));
  y = filled(y_shape, ct::dtype::float32);
  ct::Workspace ws;
  plan.execute({&x2, &w, &b, &y}, ws);
  REQUIRE(ws.size() == need);
  REQUIRE(raw_bytes(y) == raw_bytes(want2));
  Tensor y2 = filled(y_shape, ct::dtype::float32);  // a different output buffer too
  CBuf buf(need);
  plan.execute({&x1, &w, &b, &y2}, buf.p, buf.n);
  REQUIRE(raw_bytes(y2) == raw_bytes(want1));

  // Repeated executions create no backend primitives.
  const int64_t before = ct::plan_cache_info().primitives_created;
  for (int i = 0; i < 3; ++i) plan.execute({&x2, &w, &b, &y2}, ws);
  REQUIRE(ct::plan_cache_info().primitives_created == before);
  REQUIRE(raw_bytes(y2) == raw_bytes(want2));

  // Move construction and assignment transfer ownership.
  CTPlan* const raw = plan.get();
  ct::Plan moved(std::move(plan));
  REQUIRE(moved.get() == raw);
  REQUIRE(plan.get() == nullptr);  // NOLINT(bugprone-use-after-move): documented state
  REQUIRE_FALSE(static_cast<bool>(plan));
  ct::Plan other = ct::Plan::conv2d(x1, w, nullptr, y, o);  // destroyed by the assignment below
  other = std::move(moved);
  REQUIRE(other.get() == raw);
  REQUIRE(other.op() == CT_OP_CONV2D);
  y = filled(y_shape, ct::dtype::float32);
  other.execute({&x1, &w, &b, &y});
  REQUIRE(raw_bytes(y) == raw_bytes(want1));

  // release(): the caller owns the CTPlan.
  CTPlan* released = other.release();
  REQUIRE(released == raw);
  REQUIRE(other.get() == nullptr);
  y = filled(y_shape, ct::dtype::float32);
  const CTensor* ts[4] = {&x2.c(), &w.c(), &b.c(), nullptr};
  CTensor yc = y.c();
  ts[3] = &yc;
  REQUIRE(ct_plan_execute(released, ts, 4, buf.p, buf.n, nullptr) == CT_OK);
  REQUIRE(raw_bytes(y) == raw_bytes(want2));
  ct::Plan adopted(released, CT_OP_CONV2D, 4);  // and can hand it back
  REQUIRE(adopted.get() == released);
  REQUIRE(adopted.workspace_size() == need);
  adopted.reset();
  REQUIRE(adopted.get() == nullptr);

  // An empty plan: the library's error.
  const ct::Error e = error_of([&] { adopted.execute({&x1, &w, &b, &y}); });
  REQUIRE(e.status() == CT_ERR_INVALID_ARGUMENT);
  REQUIRE(ctt::contains(e.what(), "ct_plan"));

  // A raw descriptor pointer works like the options.
  Tensor y3 = filled(y_shape, ct::dtype::float32);
  const CTConv2dDesc desc = o.c();
  ct::Plan from_desc(CT_OP_CONV2D, &desc, {&x1, &w, &b, &y3});
  from_desc.execute({&x1, &w, &b, &y3});
  REQUIRE(raw_bytes(y3) == raw_bytes(want1));
}

TEST_CASE("nn: Plan errors are ct::Error with the library's message", "[cpp]") {
  const ct::Conv2dOptions o = ct::Conv2dOptions().padding(1);
  Tensor x = rnd({1, 3, 5, 5}, 80), w = rnd({2, 3, 3, 3}, 81);
  Tensor y = filled({1, 2, 5, 5}, ct::dtype::float32);
  ct::Plan plan = ct::Plan::conv2d(x, w, nullptr, y, o);
  const size_t need = plan.workspace_size();

  // execute with a tensor of another shape.
  Tensor x_big = rnd({1, 3, 6, 5}, 82);
  const ct::Error e = error_of([&] { plan.execute({&x_big, &w, nullptr, &y}); });
  const CTensor* ts[4] = {&x_big.c(), &w.c(), nullptr, &y.c()};
  CBuf buf(need);
  const CTStatus s = ct_plan_execute(plan.get(), ts, 4, buf.p, buf.n, nullptr);
  REQUIRE(s != CT_OK);
  REQUIRE(e.status() == s);
  REQUIRE(std::string(e.what()) == ct_last_error());
  REQUIRE(raw_bytes(y) == raw_bytes(filled({1, 2, 5, 5}, ct::dtype::float32)));  // untouched

  // A short caller buffer: CT_ERR_WORKSPACE_TOO_SMALL naming the size.
  if (need > 0) {
    CBuf small(need - 1);
    const ct::Error es = error_of([&] { plan.execute({&x, &w, nullptr, &y}, small.p, small.n); });
    REQUIRE(es.status() == CT_ERR_WORKSPACE_TOO_SMALL);
    REQUIRE(ctt::contains(es.what(), std::to_string(need)));
    REQUIRE(raw_bytes(y) == raw_bytes(filled({1, 2, 5, 5}, ct::dtype::float32)));
  }

  // Creation failures: the library's own message.
  Tensor w_bad = rnd({2, 4, 3, 3}, 83);
  const ct::Error ec = error_of([&] { ct::Plan::conv2d(x, w_bad, nullptr, y, o); });
  const CTensor* cs[4] = {&x.c(), &w_bad.c(), nullptr, &y.c()};
  CTPlan* p = nullptr;
  const CTStatus cs_status = ct_plan_create(CT_OP_CONV2D, &o.c(), cs, 4, nullptr, &p);
  REQUIRE(cs_status != CT_OK);
  REQUIRE(p == nullptr);
  REQUIRE(ec.status() == cs_status);
  REQUIRE(std::string(ec.what()) == ct_last_error());

  // Options of the wrong kind for the op: the wrapper's own check, per op.
  const ct::MatmulOptions mo;
  const ct::Pool2dOptions po(2);
  const ct::BatchNormOptions bo;
  const ct::LayerNormOptions lo;
  const ct::AttentionOptions ao;
  int checked = 0;
#define CT_TEST_NN_KIND_(ID, op_name, op_kind, op_nparams, summary)                                        \
  {                                                                                                        \
    const int32_t op = CT_OP_##ID;                                                                         \
    REQUIRE(ct::op_info(op).category == CT_CATEGORY_NN);                                                   \
    REQUIRE(std::string(ct::op_info(op).name) == #op_name);                                                \
    int accepted = 0;                                                                                      \
    std::vector<const ct::TensorView*> none;                                                               \
    for (int kind = 0; kind < 6; ++kind) {                                                                 \
      const ct::Error err = error_of([&] {                                                                 \
        switch (kind) {                                                                                    \
          case 0: ct::Plan(op, mo, none); break;                                                           \
          case 1: ct::Plan(op, o, none); break;                                                            \
          case 2: ct::Plan(op, po, none); break;                                                           \
          case 3: ct::Plan(op, bo, none); break;                                                           \
          case 4: ct::Plan(op, lo, none); break;                                                           \
          default: ct::Plan(op, ao, none); break;                                                          \
        }                                                                                                  \
      });                                                                                                  \
      if (ctt::contains(err.what(), "ct::Plan")) {                                                         \
        REQUIRE(err.status() == CT_ERR_INVALID_ARGUMENT);                                                  \
      } else {                                                                                             \
        ++accepted; /* reached ct_plan_create, which rejects the empty tensor list */                     \
        REQUIRE(ctt::contains(err.what(), "ct_plan_create"));                                              \
      }                                                                                                    \
    }                                                                                                      \
    REQUIRE(accepted == 1);                                                                                \
    ++checked;                                                                                             \
  }
  CT_NN_OPS(CT_TEST_NN_KIND_)
#undef CT_TEST_NN_KIND_
  int nn_ops = 0;  // every NN op of this header's registry was checked
  for (int32_t op = 0; op < (int32_t)CT_OP_END_; ++op) nn_ops += ct::op_info(op).category == CT_CATEGORY_NN;
  REQUIRE(checked == nn_ops);
  // The right kind per op (spot checks).
  REQUIRE(ctt::contains(error_of([&] { ct::Plan(CT_OP_MATMUL, o, {&x, &w, nullptr, &y}); }).what(),
                        "ct::MatmulOptions"));
  REQUIRE(ctt::contains(error_of([&] { ct::Plan(CT_OP_LAYER_NORM_BACKWARD, bo, {&x}); }).what(),
                        "ct::LayerNormOptions"));
  REQUIRE_THROWS_AS(ct::Plan(CT_OP_EXP, o, {&x}), ct::Error);  // not an NN op
}

// ---------------------------------------------------------------------------
// The generic forms by op id
// ---------------------------------------------------------------------------

TEST_CASE("nn: ct::nn, ct::nn_outputs and ct::nn_workspace_size run any NN op by id", "[cpp]") {
  Tensor x = rnd({2, 3, 4}, 200), scale = rnd({4}, 201), shift = rnd({4}, 202);
  const ct::LayerNormOptions lo(1);

  // nn_outputs: every output new, shaped by the library, as ct::layer_norm's.
  const ct::LayerNormResult r = ct::layer_norm(x, &scale, &shift, lo);
  std::vector<Tensor> outs = ct::nn_outputs(CT_OP_LAYER_NORM, lo, {&x, &scale, &shift});
  REQUIRE(outs.size() == 3);
  REQUIRE(outs[0].shape() == shp({2, 3, 4}));
  REQUIRE(outs[1].shape() == shp({2, 3}));
  REQUIRE(outs[2].shape() == shp({2, 3}));
  REQUIRE(dt_eq(outs[1].dtype(), ct::dtype::float32));
  REQUIRE(raw_bytes(outs[0]) == raw_bytes(r.y));
  REQUIRE(raw_bytes(outs[1]) == raw_bytes(r.mean));
  REQUIRE(raw_bytes(outs[2]) == raw_bytes(r.rstd));

  // Optional outputs skipped: nullptr in the call, an empty Tensor back.
  Tensor want = filled({2, 3, 4}, ct::dtype::float32);
  CTensor wc = want.c();
  c_call([&](size_t* n) { return ct_layer_norm_workspace_size(&lo.c(), &x.c(), nullptr, nullptr, &wc, nullptr, nullptr, n); },
         [&](void* p, size_t n) {
           return ct_layer_norm(&lo.c(), &x.c(), nullptr, nullptr, &wc, nullptr, nullptr, p, n, nullptr);
         });
  std::vector<Tensor> only_y =
      ct::nn_outputs(CT_OP_LAYER_NORM, lo, {&x, nullptr, nullptr}, ct::NNOutputs().skip(1).skip(2));
  REQUIRE(only_y.size() == 3);
  REQUIRE(raw_bytes(only_y[0]) == raw_bytes(want));
  REQUIRE(only_y[1].raw_data() == nullptr);
  REQUIRE(only_y[2].use_count() == 0);
  REQUIRE_FALSE(ct::NNOutputs().skip(1).allocates(1));
  REQUIRE(ct::NNOutputs().skip(1).allocate(1, true).allocates(1));
  REQUIRE_THROWS_AS(ct::NNOutputs().skip(32), ct::Error);

  // out= form with a C descriptor (ct::NNDesc takes either), a Workspace and
  // a caller's buffer; nn_workspace_size is the per-op query's size.
  const CTLayerNormDesc d = lo;
  Tensor y = filled({2, 3, 4}, ct::dtype::float32);
  ct::nn(CT_OP_LAYER_NORM, d, {&x, &scale, &shift, &y, nullptr, nullptr});
  REQUIRE(raw_bytes(y) == raw_bytes(r.y));
  const size_t need = ct::nn_workspace_size(CT_OP_LAYER_NORM, lo, {&x, &scale, &shift, &y, nullptr, nullptr});
  REQUIRE(need == ct::layer_norm_workspace_size(x, &scale, &shift, y, nullptr, nullptr, lo));
  ct::Workspace ws;
  y = filled({2, 3, 4}, ct::dtype::float32);
  ct::nn(CT_OP_LAYER_NORM, lo, {&x, &scale, &shift, &y, nullptr, nullptr}, ws);
  REQUIRE(ws.size() == need);
  REQUIRE(raw_bytes(y) == raw_bytes(r.y));
  CBuf buf(need);
  y = filled({2, 3, 4}, ct::dtype::float32);
  ct::nn(CT_OP_LAYER_NORM, lo, {&x, &scale, &shift, &y, nullptr, nullptr}, buf.p, buf.n);
  REQUIRE(raw_bytes(y) == raw_bytes(r.y));
  std::vector<Tensor> with_ws = ct::nn_outputs(CT_OP_LAYER_NORM, lo, {&x, &scale, &shift}, ct::NNOutputs(), ws);
  REQUIRE(raw_bytes(with_ws[0]) == raw_bytes(r.y));

  // Options of another op's kind: the wrapper's check, from CTOpInfo.desc_type.
  const ct::Error e = error_of([&] { ct::nn(CT_OP_LAYER_NORM, ct::Conv2dOptions(), {&x}); });
  REQUIRE(e.status() == CT_ERR_INVALID_ARGUMENT);
  REQUIRE(ctt::contains(e.what(), "ct::nn"));
  REQUIRE(ctt::contains(e.what(), "ct::LayerNormOptions"));
  REQUIRE(ctt::contains(e.what(), "ct::Conv2dOptions"));
  const ct::Error ee = error_of([&] { ct::nn_outputs(CT_OP_EXP, lo, {&x}); });
  REQUIRE(ee.status() == CT_ERR_INVALID_ARGUMENT);
  REQUIRE(ctt::contains(ee.what(), "not an NN op"));
  REQUIRE(error_of([&] { ct::nn_workspace_size(1 << 20, lo, {&x}); }).status() == CT_ERR_NOT_FOUND);
  // A wrong number of inputs: the shape query's message.
  const ct::Error en = error_of([&] { ct::nn_outputs(CT_OP_LAYER_NORM, lo, {&x}); });
  REQUIRE(en.status() == CT_ERR_INVALID_ARGUMENT);
  REQUIRE(ctt::contains(en.what(), "ct_op_output_info"));

  // Extents the inputs leave open: the library gives the smallest x for a
  // pooling backward; a shape given for the output is used, and its (H, W)
  // go to the query as CTOpArgs.extent.
  Tensor dy = rnd({1, 2, 2, 2}, 203);
  const ct::Pool2dOptions po(2);
  std::vector<Tensor> smallest = ct::nn_outputs(CT_OP_AVG_POOL2D_BACKWARD, po, {&dy});
  REQUIRE(smallest.size() == 1);
  REQUIRE(smallest[0].shape() == shp({1, 2, 4, 4}));
  std::vector<Tensor> given =
      ct::nn_outputs(CT_OP_AVG_POOL2D_BACKWARD, po, {&dy}, ct::NNOutputs().shape(0, shp({1, 2, 5, 5})));
  REQUIRE(given[0].shape() == shp({1, 2, 5, 5}));
  REQUIRE(raw_bytes(given[0]) == raw_bytes(ct::avg_pool2d_backward(dy, shp({1, 2, 5, 5}), po)));
  // An extent no window arrangement gives: the library's message.
  const ct::Error ex = error_of([&] { ct::avg_pool2d_backward(dy, shp({1, 2, 7, 4}), po); });
  REQUIRE(ex.status() == CT_ERR_SHAPE_MISMATCH);
  // A strided conv2d_backward_weight whose kernel the inputs do not fix: the
  // value form passes w_shape's (R, S) to the query.
  const ct::Conv2dOptions so = ct::Conv2dOptions().stride(2);
  Tensor xs = rnd({1, 2, 6, 6}, 204), dys = rnd({1, 3, 2, 2}, 205);
  CTOpArgs args;
  std::memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  args.desc = &so.c();
  const ct::Error open = error_of([&] { ct::output_info(CT_OP_CONV2D_BACKWARD_WEIGHT, {&xs, &dys}, &args); });
  REQUIRE(open.status() == CT_ERR_INVALID_ARGUMENT);
  REQUIRE(ctt::contains(open.what(), "kernel extent"));
  const ct::Conv2dWeightGrads g = ct::conv2d_backward_weight(xs, dys, shp({3, 2, 3, 3}), true, so);
  REQUIRE(g.dw.shape() == shp({3, 2, 3, 3}));
  REQUIRE(g.dbias.shape() == shp({3}));
  Tensor dw = filled({3, 2, 3, 3}, ct::dtype::float32), db = filled({3}, ct::dtype::float32);
  CTensor dwc = dw.c(), dbc = db.c();
  c_call([&](size_t* n) { return ct_conv2d_backward_weight_workspace_size(&so.c(), &xs.c(), &dys.c(), &dwc, &dbc, n); },
         [&](void* p, size_t n) {
           return ct_conv2d_backward_weight(&so.c(), &xs.c(), &dys.c(), &dwc, &dbc, p, n, nullptr);
         });
  REQUIRE(raw_bytes(g.dw) == raw_bytes(dw));
  REQUIRE(raw_bytes(g.dbias) == raw_bytes(db));
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

TEST_CASE("nn: wrapper errors are ct::Error with the library's message", "[cpp]") {
  const ct::Conv2dOptions o;
  Tensor x = rnd({1, 3, 5, 5}, 90);
  Tensor w_bad = rnd({4, 2, 3, 3}, 91);  // C/groups = 3 expected
  const std::vector<unsigned char> sentinel = raw_bytes(filled({1, 4, 3, 3}, ct::dtype::float32));

  // The wrapper runs every op through the generic pair (ct_nn_workspace_size,
  // ct_nn), which validates as ct_conv2d_workspace_size and ct_conv2d do:
  // the same words after the function's name.
  const auto after_name = [](const std::string& m) { return m.substr(m.find(": ")); };

  // out= form (queries first): the message of ct_nn_workspace_size.
  Tensor y = filled({1, 4, 3, 3}, ct::dtype::float32);
  const ct::Error e1 = error_of([&] { ct::conv2d(x, w_bad, nullptr, y, o); });
  CTensor yc = y.c();
  const CTensor* t1[4] = {&x.c(), &w_bad.c(), nullptr, &yc};
  size_t n = 0;
  const CTStatus s1 = ct_nn_workspace_size(CT_OP_CONV2D, &o.c(), t1, 4, &n);
  REQUIRE(s1 != CT_OK);
  REQUIRE(e1.status() == s1);
  REQUIRE(std::string(e1.what()) == ct_last_error());
  REQUIRE(ctt::contains(e1.what(), "ct_nn_workspace_size"));
  REQUIRE(ct_conv2d_workspace_size(&o.c(), &x.c(), &w_bad.c(), nullptr, &yc, &n) == s1);
  REQUIRE(after_name(e1.what()) == after_name(ct_last_error()));
  REQUIRE(raw_bytes(y) == sentinel);

  // Caller's buffer form (no query): the message of ct_nn itself.
  const ct::Error e2 = error_of([&] { ct::conv2d(x, w_bad, nullptr, y, o, nullptr, 0); });
  const CTStatus s2 = ct_nn(CT_OP_CONV2D, &o.c(), t1, 4, nullptr, 0, nullptr);
  REQUIRE(s2 != CT_OK);
  REQUIRE(e2.status() == s2);
  REQUIRE(std::string(e2.what()) == ct_last_error());
  REQUIRE(raw_bytes(y) == sentinel);

  // Value form: the library's shape query (ct_op_output_info) rejects the
  // inputs before anything is allocated, with the same words.
  const ct::Error e3 = error_of([&] { ct::conv2d(x, w_bad); });
  CTOpArgs args;
  std::memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  args.desc = &o.c();
  const CTensor* in3[3] = {&x.c(), &w_bad.c(), nullptr};
  CTOutputInfo out3;
  const CTStatus s3 = ct_op_output_info(CT_OP_CONV2D, &args, in3, 3, &out3, 1);
  REQUIRE(s3 == s1);
  REQUIRE(e3.status() == s3);
  REQUIRE(std::string(e3.what()) == ct_last_error());
  REQUIRE(after_name(e3.what()) == after_name(e1.what()));

  // Arguments no output can be sized for: the shape query's message.
  Tensor x3 = rnd({3, 5, 5}, 92);
  Tensor w = rnd({4, 3, 3, 3}, 93);
  const ct::Error e4 = error_of([&] { ct::conv2d(x3, w); });
  REQUIRE(e4.status() != CT_OK);
  REQUIRE(ctt::contains(e4.what(), "ct_op_output_info"));
  REQUIRE(ctt::contains(e4.what(), "x.shape=[3,5,5]"));
  const ct::Error e5 = error_of([&] { ct::max_pool2d(x3, ct::Pool2dOptions(2)); });
  REQUIRE(ctt::contains(e5.what(), "ct_op_output_info"));
  const ct::Error e6 = error_of([&] { ct::layer_norm(x3, ct::LayerNormOptions(4)); });
  REQUIRE(ctt::contains(e6.what(), "ct_op_output_info"));
  REQUIRE(ctt::contains(e6.what(), "normalized_ndim"));
  const ct::Error e7 = error_of([&] { ct::batch_norm_training(rnd({5}, 94)); });
  REQUIRE(ctt::contains(e7.what(), "ct_op_output_info"));
  const ct::Error e8 = error_of([&] { ct::matmul(rnd({4}, 95), rnd({4, 2}, 96)); });
  REQUIRE(ctt::contains(e8.what(), "ct_op_output_info"));

  // matmul with mismatched K: the shape query's message, the call's words.
  Tensor a = rnd({3, 4}, 97), b = rnd({5, 2}, 98);
  const ct::Error e9 = error_of([&] { ct::matmul(a, b); });
  Tensor out = filled({3, 2}, ct::dtype::float32);
  CTensor oc = out.c();
  const ct::MatmulOptions mo;
  const CTStatus s9 = ct_matmul_workspace_size(&mo.c(), &a.c(), &b.c(), nullptr, &oc, &n);
  REQUIRE(s9 != CT_OK);
  REQUIRE(e9.status() == s9);
  REQUIRE(ctt::contains(e9.what(), "ct_op_output_info"));
  REQUIRE(after_name(e9.what()) == after_name(ct_last_error()));

  // A caller's buffer smaller than the query: CT_ERR_WORKSPACE_TOO_SMALL naming
  // the size, outputs untouched. At least one of these calls needs scratch.
  Tensor xs = rnd({2, 3, 9, 9}, 99), ws4 = rnd({8, 3, 3, 3}, 100), dys = rnd({2, 8, 7, 7}, 101);
  Tensor dw = filled({8, 3, 3, 3}, ct::dtype::float32), ys = filled({2, 8, 7, 7}, ct::dtype::float32);
  const std::vector<unsigned char> dw0 = raw_bytes(dw), ys0 = raw_bytes(ys);
  const size_t need_w = ct::conv2d_backward_weight_workspace_size(xs, dys, dw, nullptr, o);
  const size_t need_f = ct::conv2d_workspace_size(xs, ws4, nullptr, ys, o);
  REQUIRE((need_w > 0 || need_f > 0));
  if (need_w > 0) {
    CBuf small(need_w - 1);
    const ct::Error es = error_of([&] { ct::conv2d_backward_weight(xs, dys, dw, nullptr, o, small.p, small.n); });
    REQUIRE(es.status() == CT_ERR_WORKSPACE_TOO_SMALL);
    REQUIRE(ctt::contains(es.what(), std::to_string(need_w)));
    REQUIRE(raw_bytes(dw) == dw0);
  }
  if (need_f > 0) {
    const ct::Error es = error_of([&] { ct::conv2d(xs, ws4, nullptr, ys, o, nullptr, 0); });
    REQUIRE(es.status() == CT_ERR_WORKSPACE_TOO_SMALL);
    REQUIRE(ctt::contains(es.what(), std::to_string(need_f)));
    REQUIRE(raw_bytes(ys) == ys0);
  }

  // A negative x_shape is the wrapper's own allocation error.
  REQUIRE_THROWS_AS(ct::avg_pool2d_backward(rnd({1, 1, 2, 2}, 102), shp({1, 1, -4, 4}), ct::Pool2dOptions(2)),
                    ct::Error);
}
