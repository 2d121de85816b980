// Pooling and norms (max/avg pool2d and their backward ops, batch_norm,
// batch_norm_training, batch_norm_backward, layer_norm, layer_norm_backward)
// and scaled_dot_product_attention on each GPU module's device against the CPU: NHWC and strided views, ties,
// absent optional tensors, vector tensors that need a copy, empty
// statistics; the bytes of every output's buffer outside its view must stay
// as they were. The GPU modules share these kernels (src/gpu/nn_kernels.cc):
// [opencl] runs them on PoCL here, [cuda] on a GPU when there is one.
#include <catch2/catch.hpp>
#include <ctensor/ctensor.h>
#include <ctensor/ctensor_nn.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

typedef std::vector<int64_t> V;
std::mt19937 rng(7);
enum Dt { F32, F16, BF16, I64, BOOL };
const char* dt_name(Dt d) {
  return d == F16 ? "float16" : d == BF16 ? "bfloat16" : d == F32 ? "float32" : d == BOOL ? "bool" : "int64";
}
float h2f(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const float v = e == 0 ? std::ldexp((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp((float)(m | 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}
uint16_t f2h(float f) {  // to nearest even (the test's values: normal or zero)
  uint32_t u; memcpy(&u, &f, 4);
  const uint16_t s = (uint16_t)((u >> 16) & 0x8000);
  const float a = std::fabs(f);
  if (std::isnan(f)) return (uint16_t)(s | 0x7e00);
  if (a >= 65520.0f) return (uint16_t)(s | 0x7c00);
  if (a < 6.103515625e-05f) return (uint16_t)(s | (uint16_t)std::nearbyint(a * 16777216.0f));  // subnormal: units of 2^-24
  int e; std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  const float q = std::nearbyint(std::ldexp(a, 11 - e));  // 11 significant bits; 2048 on a carry
  return (uint16_t)(s | (((uint32_t)(e + 14) << 10) + (uint32_t)q - 1024));
}
float b2f(uint16_t b) { uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f; }
uint16_t f2b(float f) { uint32_t u; memcpy(&u, &f, 4); u += 0x7fffu + ((u >> 16) & 1u); return (uint16_t)(u >> 16); }
struct T {
  V shape, st; int64_t off = 0; Dt dt = F32; std::vector<unsigned char> buf; bool present = true;
  int64_t numel() const { int64_t n = 1; for (auto e : shape) n *= e; return n; }
  // elements the buffer holds: past the furthest one the view reaches (negative strides reach back from off)
  int64_t span() const {
    int64_t s = off + 1;
    for (size_t d = 0; d < shape.size(); ++d)
      if (st[d] > 0 && shape[d] > 0) s += (shape[d] - 1) * st[d];
    return s;
  }
  size_t es() const { return dt == I64 ? 8 : dt == F32 ? 4 : dt == BOOL ? 1 : 2; }
  int64_t pos(int64_t i) const { int64_t p = off; for (int d = (int)shape.size() - 1; d >= 0; --d) { p += (i % shape[d]) * st[d]; i /= shape[d]; } return p; }
  double get(int64_t i) const {
    const unsigned char* b = &buf[(size_t)pos(i) * es()];
    if (dt == I64) { int64_t v; memcpy(&v, b, 8); return (double)v; }
    if (dt == BOOL) return *b ? 1.0 : 0.0;
    if (dt == F32) { float v; memcpy(&v, b, 4); return v; }
    uint16_t h; memcpy(&h, b, 2); return dt == F16 ? h2f(h) : b2f(h);
  }
  void set(int64_t i, double x) {
    unsigned char* b = &buf[(size_t)pos(i) * es()];
    if (dt == I64) { int64_t v = (int64_t)x; memcpy(b, &v, 8); }
    else if (dt == BOOL) *b = x != 0;
    else if (dt == F32) { float v = (float)x; memcpy(b, &v, 4); }
    else { uint16_t h = dt == F16 ? f2h((float)x) : f2b((float)x); memcpy(b, &h, 2); }
  }
  // the same view in float32 (the CPU's reference for half-type data)
  T as_f32() const { T t = *this; t.dt = F32; t.buf.assign((size_t)span() * 4, 0xFF); for (int64_t k = 0; k < numel(); ++k) t.set(k, get(k)); return t; }
  CTensor view(CTDevice dev, void* data) const {
    CTensor t; memset(&t, 0, sizeof t); t.data = data; t.device = dev; t.ndim = (int32_t)shape.size();
    t.dtype = dt == I64 ? CTDataType{CT_INT, 64, 1} : dt == BOOL ? CTDataType{CT_BOOL, 8, 1} : dt == F32 ? CTDataType{CT_FLOAT, 32, 1} : dt == F16 ? CTDataType{CT_FLOAT, 16, 1} : CTDataType{CT_BFLOAT, 16, 1};
    t.shape = const_cast<int64_t*>(shape.data()); t.strides = const_cast<int64_t*>(st.data()); t.byte_offset = (uint64_t)(off * es()); return t;
  }
};
T make(V shape, V st = {}, int64_t off = 0, Dt dt = F32) {
  T t; t.shape = shape; t.dt = dt; t.off = off;
  if (st.empty()) { st.resize(shape.size()); int64_t s = 1; for (int d = (int)shape.size() - 1; d >= 0; --d) { st[d] = s; s *= shape[d]; } }
  t.st = st; t.buf.assign((size_t)t.span() * t.es(), 0xFF); return t;
}
T rnd(V shape, V st = {}, int64_t off = 0, double lo = -1, double hi = 1, Dt dt = F32) {
  T t = make(shape, st, off, dt); std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, u(rng)); return t;
}
T absent() { T t; t.present = false; return t; }
// runs op on the CPU, half-type data as float32 (the values are the same; the outputs are rounded back)
CTStatus cpu_run(int32_t op, const void* desc, std::vector<T*> ts) {
  std::vector<T> f(ts.size());
  std::vector<CTensor> v(ts.size()); std::vector<const CTensor*> p(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i]) { p[i] = nullptr; continue; }
    f[i] = ts[i]->dt == F16 || ts[i]->dt == BF16 ? ts[i]->as_f32() : *ts[i];
    v[i] = f[i].view({CT_CPU, 0}, f[i].buf.data()); p[i] = &v[i];
  }
  size_t ws = 0; ct_nn_workspace_size(op, desc, p.data(), (int32_t)p.size(), &ws);
  std::vector<unsigned char> w(ws + 64);
  CTStatus s = ct_nn(op, desc, p.data(), (int32_t)p.size(), ws ? w.data() : nullptr, ws, nullptr);
  REQUIRE(s == CT_OK);
  for (size_t i = 0; i < ts.size(); ++i)
    if (ts[i]) for (int64_t k = 0; k < ts[i]->numel(); ++k) ts[i]->set(k, f[i].get(k));
  return s;
}
// runs op on the CPU and the device; outputs are ts[nin..]. The CPU runs
// half-type data as float32: the device's outputs must be its results
// rounded once (within half an ulp of the type, and float32's noise).
void check(CTDevice cl, const char* name, int32_t op, const void* desc, std::vector<T> ts, int nin) {
  INFO(name);
  const CTDevice cpu{CT_CPU, 0};
  std::vector<T> c = ts;  // CPU copy
  for (T& t : c)
    if (t.present && (t.dt == F16 || t.dt == BF16)) t = t.as_f32();
  std::vector<CTensor> hv(ts.size()); std::vector<const CTensor*> hp(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) { if (c[i].present) { hv[i] = c[i].view(cpu, c[i].buf.data()); hp[i] = &hv[i]; } else hp[i] = nullptr; }
  size_t ws = 0;
  REQUIRE(ct_nn_workspace_size(op, desc, hp.data(), (int32_t)hp.size(), &ws) == CT_OK);
  std::vector<unsigned char> w(ws + 64);
  REQUIRE(ct_nn(op, desc, hp.data(), (int32_t)hp.size(), ws ? w.data() : nullptr, ws, nullptr) == CT_OK);
  std::vector<void*> mem(ts.size(), nullptr); std::vector<CTensor> dv(ts.size()); std::vector<const CTensor*> dp(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i].present) { dp[i] = nullptr; continue; }
    REQUIRE(ct_malloc(cl, ts[i].buf.size(), &mem[i]) == CT_OK);
    int64_t n = (int64_t)ts[i].buf.size(); CTensor h; memset(&h, 0, sizeof h); h.data = ts[i].buf.data(); h.device = cpu; h.ndim = 1; h.dtype = {CT_UINT, 8, 1}; h.shape = &n;
    CTensor d = h; d.data = mem[i]; d.device = cl; REQUIRE(ct_copy(&h, &d, nullptr) == CT_OK);
    dv[i] = ts[i].view(cl, mem[i]); dp[i] = &dv[i];
  }
  ct_synchronize(cl, nullptr);
  size_t dws = 0; void* dw = nullptr;
  REQUIRE(ct_nn_workspace_size(op, desc, dp.data(), (int32_t)dp.size(), &dws) == CT_OK);
  if (dws) REQUIRE(ct_malloc(cl, dws, &dw) == CT_OK);
  CTStatus s = ct_nn(op, desc, dp.data(), (int32_t)dp.size(), dw, dws, nullptr);
  if (s == CT_OK) s = ct_synchronize(cl, nullptr);
  INFO("the device's call: " << (s == CT_OK ? "ok" : ct_last_error()));
  CHECK(s == CT_OK);
  double worst = 0; int bad = 0; bool pad_ok = true;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i].present) continue;
    T got = ts[i];
    int64_t n = (int64_t)got.buf.size(); CTensor h; memset(&h, 0, sizeof h); h.data = got.buf.data(); h.device = cpu; h.ndim = 1; h.dtype = {CT_UINT, 8, 1}; h.shape = &n;
    CTensor d = h; d.data = mem[i]; d.device = cl; REQUIRE(ct_copy(&d, &h, nullptr) == CT_OK);
    REQUIRE(ct_synchronize(cl, nullptr) == CT_OK);
    if ((int)i >= nin) {
      for (int64_t k = 0; k < got.numel(); ++k) {
        double a = got.get(k), b = c[i].get(k);
        if (std::isnan(a) && std::isnan(b)) continue;
        // relative error, and the type's tolerance: float32 2e-5; half an ulp and a margin for the 16-bit types
        const double atol = got.dt == F16 ? 1e-4 : got.dt == BF16 ? 1e-3 : 1e-6;
        const double tol = got.dt == F16 ? 1e-3 : got.dt == BF16 ? 8e-3 : 2e-5;
        double e = std::fabs(a - b) / (atol + std::fabs(b));
        if (got.dt == I64 || got.dt == BOOL ? a != b : !(e <= tol)) {
          if (bad++ < 5) FAIL_CHECK("tensor " << i << " (" << dt_name(got.dt) << ") element " << k << ": device " << a << ", CPU " << b);
        }
        if (e > worst && got.dt != I64 && got.dt != BOOL) worst = e;
      }
      // bytes outside the view untouched (compare with the CPU's buffer, whose padding the CPU leaves)
      std::vector<char> in(got.buf.size() / got.es(), 0); for (int64_t k = 0; k < got.numel(); ++k) in[got.pos(k)] = 1;
      for (size_t p = 0; p < in.size(); ++p) if (!in[p] && memcmp(&got.buf[p * got.es()], &ts[i].buf[p * got.es()], got.es())) pad_ok = false;
    }
    ct_free(cl, mem[i]);
  }
  if (dw) ct_free(cl, dw);
  (void)worst;
  CHECK(bad == 0);
  CHECK(pad_ok);  // bytes of the outputs' buffers outside their views untouched
}

struct DevBuf {
  CTDevice dev;
  void* p = nullptr;
  DevBuf(CTDevice d, size_t bytes) : dev(d) { REQUIRE(ct_malloc(dev, bytes, &p) == CT_OK); }
  ~DevBuf() { ct_free(dev, p); }
};

// max_pool2d_backward's indices live in device memory: an index outside its
// output's window is found by a check kernel and reported by the next
// ct_synchronize (once), since checking before the call returned would block.
void bad_pool_index_case(CTDevice dev, const char* name) {
  if (ct_op_supported(CT_OP_MAX_POOL2D_BACKWARD, dev, CTDataType{CT_FLOAT, 32, 1}) != CT_OK) {
    WARN("max_pool2d_backward is not supported on " << name << " here (" << ct_last_error() << "): checked nothing");
    return;
  }
  // x (1, 2, 4, 4), 2x2 windows, stride 2: y (1, 2, 2, 2); plane c's
  // indices name positions inside their windows, then one that is not
  int64_t xs[4] = {1, 2, 4, 4}, ys[4] = {1, 2, 2, 2};
  const std::vector<float> dy_h = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<int64_t> good = {0, 3, 9, 15, 5, 2, 12, 10}, bad = good;
  bad[5] = 8;  // output (0, 1, 0, 1)'s window is {2, 3, 6, 7}
  DevBuf dy(dev, 8 * 4), ind(dev, 8 * 8), dx(dev, 32 * 4);
  CTensor dyh = CTensor{const_cast<float*>(dy_h.data()), {CT_CPU, 0}, 4, {CT_FLOAT, 32, 1}, ys, nullptr, 0}, dyd = CTensor{dy.p, dev, 4, {CT_FLOAT, 32, 1}, ys, nullptr, 0};
  CTensor dxd = CTensor{dx.p, dev, 4, {CT_FLOAT, 32, 1}, xs, nullptr, 0};
  CTensor indd{ind.p, dev, 4, {CT_INT, 64, 1}, ys, nullptr, 0};
  REQUIRE(ct_copy(&dyh, &dyd, nullptr) == CT_OK);
  CTPool2dDesc desc{};
  desc.struct_size = sizeof desc;
  desc.kernel[0] = desc.kernel[1] = 2;
  size_t ws = 0;
  REQUIRE(ct_max_pool2d_backward_workspace_size(&desc, &dyd, &indd, &dxd, &ws) == CT_OK);
  DevBuf w(dev, ws ? ws : 1);
  std::vector<float> dx_h(32, -1.0f);
  CTensor dxh = CTensor{dx_h.data(), {CT_CPU, 0}, 4, {CT_FLOAT, 32, 1}, xs, nullptr, 0};
  for (int round = 0; round < 2; ++round) {
    const std::vector<int64_t>& v = round == 0 ? bad : good;
    CTensor ih{const_cast<int64_t*>(v.data()), {CT_CPU, 0}, 4, {CT_INT, 64, 1}, ys, nullptr, 0};
    REQUIRE(ct_copy(&ih, &indd, nullptr) == CT_OK);
    REQUIRE(ct_max_pool2d_backward(&desc, &dyd, &indd, &dxd, w.p, ws, nullptr) == CT_OK);  // asynchronous
    REQUIRE(ct_copy(&dxd, &dxh, nullptr) == CT_OK);
    const CTStatus s = ct_synchronize(dev, nullptr);
    if (round == 0) {
      CHECK(s == CT_ERR_INVALID_ARGUMENT);
      const std::string msg = ct_last_error();
      INFO(msg);
      CHECK(msg.find("ct_synchronize") == 0);
      CHECK(msg.find("max_pool2d_backward") != std::string::npos);
      CHECK(msg.find(name) != std::string::npos);
      CHECK(ct_synchronize(dev, nullptr) == CT_OK);  // reported once, then cleared
    } else {
      REQUIRE(s == CT_OK);
      for (int c = 0; c < 2; ++c)
        for (int k = 0; k < 16; ++k) {
          float want = 0;
          for (int j = 0; j < 4; ++j)
            if (good[(size_t)(c * 4 + j)] == k) want += dy_h[(size_t)(c * 4 + j)];
          CHECK(dx_h[(size_t)(c * 16 + k)] == want);
        }
    }
  }
}

bool has_device(CTDevice d) {
  for (int32_t i = 0; i < ct_device_count(); ++i) {
    CTDeviceInfo info{};
    info.struct_size = sizeof info;
    if (ct_device_info(i, &info) == CT_OK && info.device.device_type == d.device_type && info.device.device_id == d.device_id)
      return true;
  }
  return false;
}

// Whether device d exists; when not, says so (WARN: the case checked nothing).
bool present(CTDevice d) {
  if (has_device(d)) return true;
  WARN("no " << (d.device_type == CT_CUDA ? "CUDA" : "OpenCL") << " device: checked nothing");
  return false;
}

// data tensors (x, y, dy, dx) of dtype d; statistics and parameters float32
void pool_and_norm_cases(CTDevice dev, Dt d) {
  INFO("data " << dt_name(d));
  rng.seed(7);
  // pooling: x (2,3,7,6) NHWC with a padded row, 3x2 window, stride (2,1), pad (1,0)/(1,1), dilation (1,2): y (2,3,4,5)
  V xs = {2, 3, 7, 6}, ys = {2, 3, 4, 5};
  V nhwc = {7 * 6 * 3 + 5, 1, 6 * 3, 3};
  CTPool2dDesc pd; memset(&pd, 0, sizeof pd); pd.struct_size = sizeof pd;
  pd.kernel[0] = 3, pd.kernel[1] = 2, pd.stride[0] = 2, pd.stride[1] = 1, pd.pad_begin[0] = 1, pd.pad_end[0] = 1, pd.pad_end[1] = 1, pd.dilation[1] = 2;
  T x = rnd(xs, nhwc, 3, -1, 1, d);
  for (int64_t i = 0; i < x.numel(); i += 7) x.set(i, 0.5);  // ties
  T ind = make(ys, {}, 0, I64);
  check(dev, "max_pool2d (NHWC x, indices)", CT_OP_MAX_POOL2D, &pd, {x, make(ys, {1, 2, 30, 6}, 1, d), ind}, 1);
  check(dev, "max_pool2d (no indices)", CT_OP_MAX_POOL2D, &pd, {x, make(ys, {}, 0, d), absent()}, 1);
  for (int cip : {0, 1}) {
    pd.count_include_pad = cip;
    check(dev, cip ? "avg_pool2d (count_include_pad 1)" : "avg_pool2d (count_include_pad 0)", CT_OP_AVG_POOL2D, &pd, {x, make(ys, {1, 2, 30, 6}, 1, d)}, 1);
    check(dev, "avg_pool2d_backward", CT_OP_AVG_POOL2D_BACKWARD, &pd, {rnd(ys, {}, 0, -1, 1, d), make(xs, nhwc, 2, d)}, 1);
  }
  pd.count_include_pad = 0;
  {  // indices from the CPU's forward
    T y = make(ys, {}, 0, d); T in = make(ys, {}, 0, I64);
    cpu_run(CT_OP_MAX_POOL2D, &pd, {&x, &y, &in});
    check(dev, "max_pool2d_backward", CT_OP_MAX_POOL2D_BACKWARD, &pd, {rnd(ys, {}, 0, -1, 1, d), in, make(xs, nhwc, 2, d)}, 2);
  }
  // batch norm: x (2,3,4,5) NHWC
  CTBatchNormDesc bd = {sizeof(CTBatchNormDesc), 0, 1e-3};
  V bx = {2, 3, 4, 5}, bnhwc = {60, 1, 15, 3}, c3 = {3};
  T bxx = rnd(bx, bnhwc, 0, -2, 3, d);
  check(dev, "batch_norm (affine)", CT_OP_BATCH_NORM, &bd, {bxx, rnd(c3), rnd(c3, {}, 0, 0.5, 2), rnd(c3), rnd(c3), make(bx, {}, 0, d)}, 5);
  check(dev, "batch_norm (no affine, strided stats)", CT_OP_BATCH_NORM, &bd, {bxx, rnd(c3, {2}, 1), rnd(c3, {-1}, 2, 0.5, 2), absent(), absent(), make(bx, bnhwc, 0, d)}, 5);
  check(dev, "batch_norm 2-d", CT_OP_BATCH_NORM, &bd, {rnd({4, 3}, {}, 0, -1, 1, d), rnd(c3), rnd(c3, {}, 0, 0.5, 2), rnd(c3), absent(), make({4, 3}, {}, 0, d)}, 5);
  check(dev, "batch_norm_training", CT_OP_BATCH_NORM_TRAINING, &bd, {bxx, rnd(c3), rnd(c3), make(bx, {}, 0, d), make(c3, {2}, 1), make(c3)}, 3);
  T mean = make(c3), inv = make(c3);
  {
    T y = make(bx, {}, 0, d); T sc = rnd(c3), sh = rnd(c3);
    cpu_run(CT_OP_BATCH_NORM_TRAINING, &bd, {&bxx, &sc, &sh, &y, &mean, &inv});
  }
  check(dev, "batch_norm_backward (all)", CT_OP_BATCH_NORM_BACKWARD, &bd, {bxx, rnd(bx, {}, 0, -1, 1, d), mean, inv, rnd(c3), make(bx, {}, 0, d), make(c3, {2}, 0), make(c3)}, 5);
  check(dev, "batch_norm_backward (no dscale/dshift/scale)", CT_OP_BATCH_NORM_BACKWARD, &bd, {bxx, rnd(bx, bnhwc, 0, -1, 1, d), mean, inv, absent(), make(bx, {}, 0, d), absent(), absent()}, 5);
  check(dev, "batch_norm_backward (dshift only)", CT_OP_BATCH_NORM_BACKWARD, &bd, {bxx, rnd(bx, {}, 0, -1, 1, d), mean, inv, rnd(c3), make(bx, {}, 0, d), absent(), make(c3)}, 5);
  check(dev, "batch_norm_training (N*H*W = 0)", CT_OP_BATCH_NORM_TRAINING, &bd, {make({2, 3, 0}, {}, 0, d), rnd(c3), rnd(c3), make({2, 3, 0}, {}, 0, d), make(c3), make(c3)}, 3);
  // layer norm over the last 2 of (3,4,5); scale (4,5) transposed (a copy), stats keep-dims (3,1,1)
  CTLayerNormDesc ld = {sizeof(CTLayerNormDesc), 2, 1e-4};
  V lx = {3, 4, 5}, l45 = {4, 5}, tr = {1, 4};
  T lxx = rnd(lx, {1, 3 * 5 + 1, 3}, 0, -1, 2, d);  // odd strides
  check(dev, "layer_norm (scale transposed, keep-dim stats)", CT_OP_LAYER_NORM, &ld, {lxx, rnd(l45, tr), rnd(l45), make(lx, {}, 0, d), make({3, 1, 1}), make({3, 1, 1})}, 3);
  check(dev, "layer_norm (stats strided 2-d -> copy)", CT_OP_LAYER_NORM, &ld, {lxx, absent(), rnd(l45), make(lx, {}, 0, d), make({3, 1, 1}, {2, 1, 7}, 1), absent()}, 3);
  check(dev, "layer_norm (no stats, no affine)", CT_OP_LAYER_NORM, &ld, {lxx, absent(), absent(), make(lx, {}, 0, d), absent(), absent()}, 3);
  T lm = make({3}), lr = make({3});
  {
    T y = make(lx, {}, 0, d);
    cpu_run(CT_OP_LAYER_NORM, &ld, {&lxx, nullptr, nullptr, &y, &lm, &lr});
  }
  check(dev, "layer_norm_backward (all, dscale transposed)", CT_OP_LAYER_NORM_BACKWARD, &ld, {lxx, rnd(lx, {}, 0, -1, 1, d), lm, lr, rnd(l45, tr), make(lx, {}, 0, d), make(l45, tr), make(l45)}, 5);
  check(dev, "layer_norm_backward (dx only)", CT_OP_LAYER_NORM_BACKWARD, &ld, {lxx, rnd(lx, {}, 0, -1, 1, d), lm, lr, absent(), make(lx, {}, 0, d), absent(), absent()}, 5);
  CTLayerNormDesc l1 = {sizeof(CTLayerNormDesc), 1, 1e-5};
  check(dev, "layer_norm over 0 elements (D = 0)", CT_OP_LAYER_NORM, &l1, {make({2, 3, 0}, {}, 0, d), absent(), absent(), make({2, 3, 0}, {}, 0, d), make({2, 3}), make({2, 3})}, 3);
  }


// scaled_dot_product_attention (attn_fwd): data tensors of dtype d, masks
// bool, d or float32; values in [0.5, 1.5] so that every output is a
// weighted mean away from 0 (relative tolerances), rows with no key left 0.
void attention_cases(CTDevice dev, Dt d) {
  INFO("data " << dt_name(d));
  rng.seed(11);
  auto desc = [](int32_t causal, double scale) {
    CTAttentionDesc a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.causal = causal;
    a.scale = scale;
    return a;
  };
  const CTAttentionDesc plain = desc(0, 0), top = desc(CT_CAUSAL_TOP_LEFT, 0), bottom = desc(CT_CAUSAL_BOTTOM_RIGHT, 0),
                        scaled = desc(0, 0.3);
  // q (2,3,9,16) stored transposed in its last two dims; out padded rows; 40 output columns (two blocks of 32)
  T q = rnd({2, 3, 9, 16}, {3 * 9 * 16, 9 * 16, 1, 9}, 0, -1, 1, d);
  T k = rnd({2, 3, 11, 16}, {}, 0, -1, 1, d), v = rnd({2, 3, 11, 40}, {}, 0, 0.5, 1.5, d);
  check(dev, "attention (q transposed, out padded, Ev 40)", CT_OP_SCALED_DOT_PRODUCT_ATTENTION, &plain,
        {q, k, v, absent(), make({2, 3, 9, 40}, {3 * 9 * 41, 9 * 41, 41, 1}, 2, d)}, 4);
  check(dev, "attention (scale 0.3)", CT_OP_SCALED_DOT_PRODUCT_ATTENTION, &scaled, {q, k, v, absent(), make({2, 3, 9, 40}, {}, 0, d)}, 4);
  // batch dims that broadcast, both causal rules
  T qb = rnd({2, 1, 9, 8}, {}, 0, -1, 1, d), kb = rnd({1, 3, 11, 8}, {}, 0, -1, 1, d), vb = rnd({1, 3, 11, 8}, {}, 0, 0.5, 1.5, d);
  check(dev, "attention (batch (2,1) x (1,3), top-left causal)", CT_OP_SCALED_DOT_PRODUCT_ATTENTION, &top, {qb, kb, vb, absent(), make({2, 3, 9, 8}, {}, 0, d)}, 4);
  // a bool mask (9,11) with rows whose every key is masked (one by the mask, one by the mask and the rule)
  T mb = make({9, 11}, {}, 0, BOOL);
  for (int64_t i = 0; i < mb.numel(); ++i) mb.set(i, (rng() & 1) != 0);
  for (int64_t j = 0; j < 11; ++j) mb.set(4 * 11 + j, 0.0);
  check(dev, "attention (bool mask, a row with no key, bottom-right causal)", CT_OP_SCALED_DOT_PRODUCT_ATTENTION, &bottom, {qb, kb, vb, mb, make({2, 3, 9, 8}, {}, 0, d)}, 4);
  // additive masks: float32 (3,1,11) with -inf entries, and one of the data dtype (11,)
  T mf = rnd({3, 1, 11}, {}, 0, -2, 2, F32);
  mf.set(5, -INFINITY);
  check(dev, "attention (float32 mask (3,1,11))", CT_OP_SCALED_DOT_PRODUCT_ATTENTION, &plain, {qb, kb, vb, mf, make({2, 3, 9, 8}, {}, 0, d)}, 4);
  check(dev, "attention (data-dtype mask (11,), strided)", CT_OP_SCALED_DOT_PRODUCT_ATTENTION, &plain, {qb, kb, vb, rnd({11}, {2}, 1, -2, 2, d), make({2, 3, 9, 8}, {}, 0, d)}, 4);
  // no keys: zeros; no query features (E = 0): the mean of v over the keys each row keeps
  check(dev, "attention (S = 0)", CT_OP_SCALED_DOT_PRODUCT_ATTENTION, &plain, {rnd({2, 4, 8}, {}, 0, -1, 1, d), make({2, 0, 8}, {}, 0, d), make({2, 0, 5}, {}, 0, d), absent(), make({2, 4, 5}, {}, 0, d)}, 4);
  check(dev, "attention (E = 0, top-left causal)", CT_OP_SCALED_DOT_PRODUCT_ATTENTION, &top, {make({2, 4, 0}, {}, 0, d), make({2, 3, 0}, {}, 0, d), rnd({2, 3, 5}, {}, 0, 0.5, 1.5, d), absent(), make({2, 4, 5}, {}, 0, d)}, 4);
}

}  // namespace

TEST_CASE("opencl: pooling and norms (float32, float16, bfloat16) agree with the CPU on every layout, outputs' other bytes untouched", "[opencl]") {
  if (!present({CT_OPENCL, 0})) return;
  for (Dt d : {F32, F16, BF16}) pool_and_norm_cases({CT_OPENCL, 0}, d);
}

TEST_CASE("cuda: pooling and norms (float32, float16, bfloat16) agree with the CPU on every layout, outputs' other bytes untouched", "[cuda]") {
  if (!present({CT_CUDA, 0})) return;
  for (Dt d : {F32, F16, BF16}) pool_and_norm_cases({CT_CUDA, 0}, d);
}

TEST_CASE("opencl: max_pool2d_backward's bad indices are reported by the next ct_synchronize", "[opencl]") {
  if (!present({CT_OPENCL, 0})) return;
  bad_pool_index_case({CT_OPENCL, 0}, "opencl:0");
}

TEST_CASE("cuda: max_pool2d_backward's bad indices are reported by the next ct_synchronize", "[cuda]") {
  if (!present({CT_CUDA, 0})) return;
  bad_pool_index_case({CT_CUDA, 0}, "cuda:0");
}

TEST_CASE("opencl: scaled_dot_product_attention (float32, float16, bfloat16) agrees with the CPU: views, broadcast batches, masks, causal rules, empty extents", "[opencl]") {
  if (!present({CT_OPENCL, 0})) return;
  for (Dt d : {F32, F16, BF16}) attention_cases({CT_OPENCL, 0}, d);
}

TEST_CASE("cuda: scaled_dot_product_attention (float32, float16, bfloat16) agrees with the CPU: views, broadcast batches, masks, causal rules, empty extents", "[cuda]") {
  if (!present({CT_CUDA, 0})) return;
  for (Dt d : {F32, F16, BF16}) attention_cases({CT_CUDA, 0}, d);
}
