// The CUDA module through the C ABI: the caller's cudaStream_t, strided
// copies both ways, temporary memory from the caller's allocator,
// deterministic reductions, and a sequence of ops captured into a CUDA graph
// and replayed. (The generic suite runs every op and dtype on cuda:0 against
// the CPU and the references when a device is present.) Without a CUDA
// device every case says so, in one line, and checks nothing else; the
// kernels' code is still compiled for sm_90 by the cuda_kernels_compile test.
#include <catch2/catch.hpp>
#include <ctensor/ctensor.h>
#include <ctensor/ctensor_nn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#ifdef CT_TEST_CUDA
#include <cuda_runtime_api.h>

namespace {

const CTDevice kCU = {CT_CUDA, 0};
const CTDevice kHost = {CT_CPU, 0};

bool have_cuda() {
  for (int32_t i = 0; i < ct_device_count(); ++i) {
    CTDeviceInfo info{};
    info.struct_size = sizeof info;
    if (ct_device_info(i, &info) == CT_OK && info.device.device_type == CT_CUDA) return true;
  }
  int driver = 0;
  cudaDriverGetVersion(&driver);
  WARN("no CUDA device (" << (driver ? "the driver reports none" : "no NVIDIA driver") << "): the [cuda] cases check nothing");
  return false;
}

struct Buf {
  void* p = nullptr;
  explicit Buf(size_t bytes) { REQUIRE(ct_malloc(kCU, bytes, &p) == CT_OK); }
  ~Buf() { ct_free(kCU, p); }
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s); }
};

CTensor f32(void* data, CTDevice dev, int64_t* shape, int32_t nd = 1, int64_t* strides = nullptr, uint64_t off = 0) {
  return CTensor{data, dev, nd, {CT_FLOAT, 32, 1}, shape, strides, off};
}

std::vector<float> ramp(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (float& x : v) x = u(rng);
  return v;
}

struct Counts {
  int allocs = 0, frees = 0;
};
CTStatus count_alloc(void* user, CTDevice, size_t bytes, void* stream, void** ptr) {
  ++static_cast<Counts*>(user)->allocs;
  return cudaMallocAsync(ptr, bytes, static_cast<cudaStream_t>(stream)) == cudaSuccess ? CT_OK : CT_ERR_OUT_OF_MEMORY;
}
void count_free(void* user, CTDevice, void* ptr, void* stream) {
  ++static_cast<Counts*>(user)->frees;
  cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream));
}

}  // namespace

TEST_CASE("cuda: maps, broadcast binary ops, reductions and softmax run on the caller's stream and agree with the CPU",
          "[cuda]") {
  if (!have_cuda()) return;
  Stream st;
  int64_t shape[2] = {37, 1031}, row[1] = {1031}, rows[1] = {37};
  const size_t n = 37 * 1031;
  const std::vector<float> a = ramp(n, 1), b = ramp(1031, 2);
  Buf x(n * 4), bias(1031 * 4), y(n * 4), z(n * 4), s(37 * 4);
  CTensor ha = f32(const_cast<float*>(a.data()), kHost, shape, 2), hb = f32(const_cast<float*>(b.data()), kHost, row);
  CTensor dx = f32(x.p, kCU, shape, 2), db = f32(bias.p, kCU, row), dy = f32(y.p, kCU, shape, 2), dz = f32(z.p, kCU, shape, 2);
  CTensor ds = f32(s.p, kCU, rows);
  REQUIRE(ct_copy(&ha, &dx, st.s) == CT_OK);
  REQUIRE(ct_copy(&hb, &db, st.s) == CT_OK);
  REQUIRE(ct_unary(CT_OP_EXP, &dx, &dy, st.s) == CT_OK);
  REQUIRE(ct_binary(CT_OP_ADD, &dy, &db, &dy, st.s) == CT_OK);  // in place, b broadcast over rows
  const int32_t axis = 1;
  REQUIRE(ct_reduce(CT_OP_SUM, &dy, &axis, 1, 0, nullptr, 0, &ds, st.s) == CT_OK);
  REQUIRE(ct_along_axis(CT_OP_SOFTMAX, &dx, 1, &dz, st.s) == CT_OK);
  std::vector<float> gy(n), gz(n), gs(37);
  CTensor hy = f32(gy.data(), kHost, shape, 2), hz = f32(gz.data(), kHost, shape, 2), hs = f32(gs.data(), kHost, rows);
  REQUIRE(ct_copy(&dy, &hy, st.s) == CT_OK);
  REQUIRE(ct_copy(&dz, &hz, st.s) == CT_OK);
  REQUIRE(ct_copy(&ds, &hs, st.s) == CT_OK);
  REQUIRE(ct_synchronize(kCU, st.s) == CT_OK);
  // the same on the CPU
  std::vector<float> cy(n), cz(n), cs(37);
  CTensor ry = f32(cy.data(), kHost, shape, 2), rz = f32(cz.data(), kHost, shape, 2), rs = f32(cs.data(), kHost, rows);
  REQUIRE(ct_unary(CT_OP_EXP, &ha, &ry, nullptr) == CT_OK);
  REQUIRE(ct_binary(CT_OP_ADD, &ry, &hb, &ry, nullptr) == CT_OK);
  REQUIRE(ct_reduce(CT_OP_SUM, &ry, &axis, 1, 0, nullptr, 0, &rs, nullptr) == CT_OK);
  REQUIRE(ct_along_axis(CT_OP_SOFTMAX, &ha, 1, &rz, nullptr) == CT_OK);
  for (size_t i = 0; i < n; ++i) {
    CHECK(gy[i] == Approx(cy[i]).epsilon(4e-7));
    CHECK(gz[i] == Approx(cz[i]).epsilon(2e-6));
  }
  for (size_t i = 0; i < 37; ++i) CHECK(gs[i] == Approx(cs[i]).epsilon(1e-5));
}

TEST_CASE("cuda: copies with strided host and device sides, both ways", "[cuda]") {
  if (!have_cuda()) return;
  Stream st;
  int64_t shape[2] = {4, 6}, every_other[2] = {12, 2}, transposed_shape[2] = {6, 4}, transposed[2] = {1, 6};
  std::vector<float> src(48), dst(48, -1.0f), back(24, 0.0f);
  for (int i = 0; i < 48; ++i) src[(size_t)i] = (float)i;
  Buf x(24 * 4), t(24 * 4);
  CTensor hs = f32(src.data(), kHost, shape, 2, every_other);     // every other column of (4, 12)
  CTensor hd = f32(dst.data(), kHost, shape, 2, every_other, 4);  // the other columns
  CTensor dx = f32(x.p, kCU, shape, 2);
  CTensor dxt = f32(x.p, kCU, transposed_shape, 2, transposed);   // x viewed transposed
  CTensor dt = f32(t.p, kCU, transposed_shape, 2), hb = f32(back.data(), kHost, transposed_shape, 2);
  REQUIRE(ct_copy(&hs, &dx, st.s) == CT_OK);
  REQUIRE(ct_copy(&dx, &hd, st.s) == CT_OK);
  REQUIRE(ct_copy(&dxt, &dt, st.s) == CT_OK);  // a strided device side: the copy kernel
  REQUIRE(ct_copy(&dt, &hb, st.s) == CT_OK);
  REQUIRE(ct_synchronize(kCU, st.s) == CT_OK);
  for (int64_t i = 0; i < 48; ++i) {
    const int64_t r = i / 12, c = i % 12;
    INFO("element (" << r << ", " << c << ")");
    CHECK(dst[(size_t)i] == (c % 2 == 1 ? src[(size_t)(r * 12 + c - 1)] : -1.0f));
  }
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 4; ++j) CHECK(back[(size_t)(i * 4 + j)] == src[(size_t)(j * 12 + 2 * i)]);
}

TEST_CASE("cuda: reduction partials come from the caller's allocator; sums are deterministic", "[cuda]") {
  if (!have_cuda()) return;
  int64_t n = 3 << 20, one = 1;
  const std::vector<float> a = ramp((size_t)n, 7);
  double exact = 0;
  for (float v : a) exact += v;
  Buf x(n * 4), s(4);
  CTensor h = f32(const_cast<float*>(a.data()), kHost, &n), dx = f32(x.p, kCU, &n), ds = f32(s.p, kCU, &one, 0);
  REQUIRE(ct_copy(&h, &dx, nullptr) == CT_OK);
  Counts counts;
  const CTAllocator alloc{sizeof(CTAllocator), 0, count_alloc, count_free, &counts};
  REQUIRE(ct_set_allocator(CT_CUDA, &alloc) == CT_OK);
  float r[3];
  for (float& v : r) {
    CTensor hs = f32(&v, kHost, &one, 0);
    REQUIRE(ct_reduce(CT_OP_SUM, &dx, nullptr, 0, 0, nullptr, 0, &ds, nullptr) == CT_OK);
    REQUIRE(ct_copy(&ds, &hs, nullptr) == CT_OK);
    REQUIRE(ct_synchronize(kCU, nullptr) == CT_OK);
  }
  REQUIRE(ct_set_allocator(CT_CUDA, nullptr) == CT_OK);
  CHECK(counts.allocs >= 3);  // one temporary of partials per call
  CHECK(counts.frees == counts.allocs);
  CHECK(std::memcmp(&r[0], &r[1], 4) == 0);
  CHECK(std::memcmp(&r[0], &r[2], 4) == 0);
  CHECK(r[0] == Approx(exact).epsilon(1e-5));
}

TEST_CASE("cuda: a sequence of ops captured into a CUDA graph replays the eager results", "[cuda]") {
  if (!have_cuda()) return;
  Stream st;
  int64_t n = 1 << 20, one = 1;
  const std::vector<float> a = ramp((size_t)n, 3);
  Buf x(n * 4), y(n * 4), s(4);
  CTensor h = f32(const_cast<float*>(a.data()), kHost, &n), dx = f32(x.p, kCU, &n), dy = f32(y.p, kCU, &n);
  CTensor ds = f32(s.p, kCU, &one, 0);
  REQUIRE(ct_copy(&h, &dx, st.s) == CT_OK);
  const double half = 0.5;
  auto run = [&] {  // tanh(x) * 0.5 + x, then its sum (partials from the stream-ordered pool)
    REQUIRE(ct_unary(CT_OP_TANH, &dx, &dy, st.s) == CT_OK);
    REQUIRE(ct_unary_param(CT_OP_MUL_SCALAR, &dy, &half, 1, &dy, st.s) == CT_OK);
    REQUIRE(ct_binary(CT_OP_ADD, &dy, &dx, &dy, st.s) == CT_OK);
    REQUIRE(ct_reduce(CT_OP_SUM, &dy, nullptr, 0, 0, nullptr, 0, &ds, st.s) == CT_OK);
  };
  run();  // eager (and every program loaded)
  float eager = 0, replayed = 0;
  CTensor he = f32(&eager, kHost, &one, 0), hr = f32(&replayed, kHost, &one, 0);
  REQUIRE(ct_copy(&ds, &he, st.s) == CT_OK);
  REQUIRE(ct_synchronize(kCU, st.s) == CT_OK);
  REQUIRE(cudaMemsetAsync(y.p, 0, (size_t)n * 4, st.s) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(s.p, 0, 4, st.s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(st.s) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamBeginCapture(st.s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  run();
  REQUIRE(cudaStreamEndCapture(st.s, &graph) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  for (int i = 0; i < 2; ++i) REQUIRE(cudaGraphLaunch(exec, st.s) == cudaSuccess);
  REQUIRE(ct_copy(&ds, &hr, st.s) == CT_OK);
  REQUIRE(ct_synchronize(kCU, st.s) == CT_OK);
  CHECK(std::memcmp(&eager, &replayed, 4) == 0);  // same kernels, same partials: the same bits
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST_CASE("cuda: a stream that is not one of the device's is refused, outputs untouched", "[cuda]") {
  if (!have_cuda()) return;
  int64_t n = 16;
  Buf x(n * 4);
  CTensor dx = f32(x.p, kCU, &n);
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  if (count < 2) {
    WARN("one CUDA device: a stream of another device cannot be made here");
    return;
  }
  cudaStream_t other = nullptr;
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  REQUIRE(cudaStreamCreate(&other) == cudaSuccess);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  CHECK(ct_unary(CT_OP_EXP, &dx, &dx, other) == CT_ERR_INVALID_ARGUMENT);
  CHECK(std::strstr(ct_last_error(), "belongs to cuda:1") != nullptr);
  cudaStreamDestroy(other);
}

TEST_CASE("cuda: matmul through cuBLASLt (batched, a transposed view, a broadcast batch, bias, activation) agrees with "
          "the CPU", "[cuda]") {
  if (!have_cuda()) return;
  if (ct_op_supported(CT_OP_MATMUL, kCU, CTDataType{CT_FLOAT, 32, 1}) != CT_OK) {
    WARN("matmul is not supported on cuda:0 here: " << ct_last_error());
    return;
  }
  Stream st;
  // a (3, 40, 24), b given as (3, 32, 24) and viewed transposed (3, 24, 32), bias (32,): out (3, 40, 32);
  // then a against b's first batch alone, broadcast: (3, 40, 24) @ (24, 32)
  int64_t ash[3] = {3, 40, 24}, bst_sh[3] = {3, 32, 24}, bsh[3] = {3, 24, 32}, bstr[3] = {32 * 24, 1, 24};
  int64_t osh[3] = {3, 40, 32}, csh[1] = {32}, b2sh[2] = {24, 32}, b2str[2] = {1, 24};
  const std::vector<float> a = ramp(3 * 40 * 24, 11), b = ramp(3 * 32 * 24, 12), c = ramp(32, 13);
  Buf da(a.size() * 4), db(b.size() * 4), dc(c.size() * 4), dout(3 * 40 * 32 * 4);
  CTensor ha = f32(const_cast<float*>(a.data()), kHost, ash, 3), hb = f32(const_cast<float*>(b.data()), kHost, bst_sh, 3);
  CTensor hc = f32(const_cast<float*>(c.data()), kHost, csh);
  CTensor ga = f32(da.p, kCU, ash, 3), gbs = f32(db.p, kCU, bst_sh, 3), gc = f32(dc.p, kCU, csh);
  REQUIRE(ct_copy(&ha, &ga, st.s) == CT_OK);
  REQUIRE(ct_copy(&hb, &gbs, st.s) == CT_OK);
  REQUIRE(ct_copy(&hc, &gc, st.s) == CT_OK);
  for (int variant = 0; variant < 2; ++variant) {
    INFO((variant == 0 ? "batched, b transposed by strides, bias, gelu" : "b broadcast over the batch, relu"));
    CTMatmulDesc desc{sizeof(CTMatmulDesc), variant == 0 ? CT_ACTIVATION_GELU : CT_ACTIVATION_RELU};
    CTensor gb = variant == 0 ? f32(db.p, kCU, bsh, 3, bstr) : f32(db.p, kCU, b2sh, 2, b2str);
    CTensor hbv = variant == 0 ? f32(const_cast<float*>(b.data()), kHost, bsh, 3, bstr)
                               : f32(const_cast<float*>(b.data()), kHost, b2sh, 2, b2str);
    CTensor go = f32(dout.p, kCU, osh, 3);
    size_t bytes = 0;
    REQUIRE(ct_matmul_workspace_size(&desc, &ga, &gb, variant == 0 ? &gc : nullptr, &go, &bytes) == CT_OK);
    Buf ws(bytes ? bytes : 1);
    REQUIRE(ct_matmul(&desc, &ga, &gb, variant == 0 ? &gc : nullptr, &go, ws.p, bytes, st.s) == CT_OK);
    std::vector<float> got(3 * 40 * 32), want(3 * 40 * 32);
    CTensor hg = f32(got.data(), kHost, osh, 3), hw = f32(want.data(), kHost, osh, 3);
    REQUIRE(ct_copy(&go, &hg, st.s) == CT_OK);
    REQUIRE(ct_synchronize(kCU, st.s) == CT_OK);
    size_t cbytes = 0;
    REQUIRE(ct_matmul_workspace_size(&desc, &ha, &hbv, variant == 0 ? &hc : nullptr, &hw, &cbytes) == CT_OK);
    std::vector<unsigned char> cws(cbytes ? cbytes : 1);
    REQUIRE(ct_matmul(&desc, &ha, &hbv, variant == 0 ? &hc : nullptr, &hw, cws.data(), cbytes, nullptr) == CT_OK);
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-5).margin(1e-5));
  }
}

TEST_CASE("cuda: conv2d and its backward ops through cuDNN (groups, stride, dilation, asymmetric padding, bias, "
          "activation) agree with the CPU", "[cuda]") {
  if (!have_cuda()) return;
  if (ct_op_supported(CT_OP_CONV2D, kCU, CTDataType{CT_FLOAT, 32, 1}) != CT_OK) {
    WARN("conv2d is not supported on cuda:0 here: " << ct_last_error());
    return;
  }
  Stream st;
  int64_t xsh[4] = {2, 4, 9, 9}, wsh[4] = {6, 2, 3, 3}, bsh[1] = {6}, ysh[4] = {2, 6, 4, 7};
  CTConv2dDesc desc{sizeof(CTConv2dDesc), 2, {2, 1}, {1, 0}, {0, 2}, {1, 2}, CT_ACTIVATION_RELU, 0};
  CTConv2dDesc bdesc = desc;
  bdesc.activation = CT_ACTIVATION_NONE;
  const std::vector<float> x = ramp(2 * 4 * 81, 21), w = ramp(6 * 2 * 9, 22), b = ramp(6, 23), dy = ramp(2 * 6 * 28, 24);
  struct Dev {  // one device's tensors; host vectors where the results land
    std::vector<Buf*> bufs;
    CTensor t(const std::vector<float>& h, int64_t* shape, int nd, CTDevice dev, Stream& s) {
      if (dev.device_type == CT_CPU) return f32(const_cast<float*>(h.data()), dev, shape, nd);
      bufs.push_back(new Buf(h.size() * 4));
      CTensor d = f32(bufs.back()->p, dev, shape, nd), hh = f32(const_cast<float*>(h.data()), kHost, shape, nd);
      REQUIRE(ct_copy(&hh, &d, s.s) == CT_OK);
      return d;
    }
    ~Dev() {
      for (Buf* p : bufs) delete p;
    }
  };
  std::vector<float> out[2][4];  // [device][y, dx, dw, dbias]
  for (int di = 0; di < 2; ++di) {
    const CTDevice dev = di ? kCU : kHost;
    void* s = di ? static_cast<void*>(st.s) : nullptr;
    Dev D;
    out[di][0].assign(2 * 6 * 28, 0.0f);
    out[di][1].assign(x.size(), 0.0f);
    out[di][2].assign(w.size(), 0.0f);
    out[di][3].assign(6, 0.0f);
    CTensor tx = D.t(x, xsh, 4, dev, st), tw = D.t(w, wsh, 4, dev, st), tb = D.t(b, bsh, 1, dev, st);
    CTensor tdy = D.t(dy, ysh, 4, dev, st);
    CTensor ty = D.t(out[di][0], ysh, 4, dev, st), tdx = D.t(out[di][1], xsh, 4, dev, st);
    CTensor tdw = D.t(out[di][2], wsh, 4, dev, st), tdb = D.t(out[di][3], bsh, 1, dev, st);
    size_t n0 = 0, n1 = 0, n2 = 0;
    REQUIRE(ct_conv2d_workspace_size(&desc, &tx, &tw, &tb, &ty, &n0) == CT_OK);
    REQUIRE(ct_conv2d_backward_data_workspace_size(&bdesc, &tdy, &tw, &tdx, &n1) == CT_OK);
    REQUIRE(ct_conv2d_backward_weight_workspace_size(&bdesc, &tx, &tdy, &tdw, &tdb, &n2) == CT_OK);
    const size_t n = std::max(n0, std::max(n1, n2));
    std::vector<unsigned char> hws(di ? 1 : n + 1);
    Buf* dws = di ? new Buf(n ? n : 1) : nullptr;
    void* ws = di ? dws->p : hws.data();
    INFO((di ? "cuda:0" : "cpu"));
    REQUIRE(ct_conv2d(&desc, &tx, &tw, &tb, &ty, ws, n, s) == CT_OK);
    REQUIRE(ct_conv2d_backward_data(&bdesc, &tdy, &tw, &tdx, ws, n, s) == CT_OK);
    REQUIRE(ct_conv2d_backward_weight(&bdesc, &tx, &tdy, &tdw, &tdb, ws, n, s) == CT_OK);
    if (di) {
      CTensor* devs[4] = {&ty, &tdx, &tdw, &tdb};
      int64_t* shapes[4] = {ysh, xsh, wsh, bsh};
      for (int k = 0; k < 4; ++k) {
        CTensor h = f32(out[di][k].data(), kHost, shapes[k], k == 3 ? 1 : 4);
        REQUIRE(ct_copy(devs[k], &h, s) == CT_OK);
      }
      REQUIRE(ct_synchronize(kCU, s) == CT_OK);
      delete dws;
    }
  }
  const char* names[4] = {"y", "dx", "dw", "dbias"};
  for (int k = 0; k < 4; ++k) {
    INFO(names[k]);
    for (size_t i = 0; i < out[0][k].size(); ++i) CHECK(out[1][k][i] == Approx(out[0][k][i]).epsilon(1e-5).margin(1e-5));
  }
}


#else

TEST_CASE("cuda: the module was not built here", "[cuda]") {
  WARN("libctensor_cuda was not built (no CUDA toolkit with NVRTC found): the [cuda] cases check nothing");
}

#endif
