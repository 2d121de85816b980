// test_nn_plan.cpp — the machinery around the category-3 NN ops rather than
// their math: the registry entries, plans (workspace size, execution on new
// buffers, mismatching tensors), thread safety of plans and of the plan cache
// behind the direct calls, the cache's counters and capacity, the validation
// paths of every op family (status, message naming function, argument and
// values, outputs untouched), and CTCpuStream handling. The results are
// checked against tests/reference (conv2d, matmul, max_pool2d, layer_norm,
// batch_norm).
#include <catch2/catch.hpp>

#include <atomic>
#include <cctype>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_ref.h"
#include "test_util.h"

using namespace ctt;

namespace {

const CTDevice kCpu = {CT_CPU, 0};

// `arg` appears in msg as a name of its own (not inside a longer identifier).
bool names_arg(const std::string& msg, const std::string& arg) {
  auto ident = [](char c) { return std::isalnum((unsigned char)c) || c == '_'; };
  for (size_t p = msg.find(arg); p != std::string::npos; p = msg.find(arg, p + 1)) {
    bool before_ok = p == 0 || !ident(msg[p - 1]);
    bool after_ok = p + arg.size() >= msg.size() || !ident(msg[p + arg.size()]);
    if (before_ok && after_ok) return true;
  }
  return false;
}

// An argument spec "a|b" is named when any alternative is.
bool names_any(const std::string& msg, const std::string& spec) {
  size_t start = 0;
  while (true) {
    size_t bar = spec.find('|', start);
    std::string alt = spec.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    if (names_arg(msg, alt)) return true;
    if (bar == std::string::npos) return false;
    start = bar + 1;
  }
}

std::string status_list(const std::vector<CTStatus>& v) {
  std::string r;
  for (CTStatus s : v) r += std::string(r.empty() ? "" : " or ") + ct_status_string(s);
  return r;
}

// A failed call: one of the wanted statuses, a message that starts with the
// function's name, names every argument (alternatives with '|') and contains
// every substring.
void expect_fail(CTStatus got, std::vector<CTStatus> want, const char* fn, std::vector<std::string> args,
                 std::vector<std::string> subs = {}) {
  std::string msg = last_error();
  INFO("status " << got << " (" << ct_status_string(got) << "), want " << status_list(want) << "; message: \""
                 << msg << "\"");
  bool status_ok = false;
  for (CTStatus w : want) status_ok = status_ok || got == w;
  CHECK(status_ok);
  CHECK(msg.rfind(fn, 0) == 0);
  for (const std::string& a : args) {
    INFO("argument " << a);
    CHECK(names_any(msg, a));
  }
  for (const std::string& s : subs) {
    INFO("substring " << s);
    CHECK(contains(msg, s));
  }
}
void expect_fail(CTStatus got, CTStatus want, const char* fn, std::vector<std::string> args,
                 std::vector<std::string> subs = {}) {
  expect_fail(got, std::vector<CTStatus>{want}, fn, std::move(args), std::move(subs));
}

// 64-byte aligned scratch; ptr() is NULL when empty.
struct Ws {
  std::vector<unsigned char> v;
  size_t bytes = 0;
  explicit Ws(size_t n = 0) { resize(n); }
  void resize(size_t n) {
    bytes = n;
    v.assign(n + 64, 0);
  }
  void* ptr() {
    if (!bytes) return nullptr;
    uintptr_t a = (uintptr_t)v.data();
    return v.data() + (64 - a % 64) % 64;
  }
};

HostTensor rnd(std::vector<int64_t> shape, uint64_t seed, int d = DT_F32, double lo = -1, double hi = 1) {
  HostTensor t = HostTensor::compact(d, shape);
  Rng r(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, r.uniform(lo, hi));
  return t;
}

const unsigned char kSentinel = 0xA5;

HostTensor out_t(std::vector<int64_t> shape, int d = DT_F32) {
  HostTensor t = HostTensor::compact(d, shape);
  t.fill_bytes(kSentinel);
  return t;
}

// NHWC memory for a logical (N, C, H, W) tensor: strides (H*W*C, 1, W*C, C).
HostTensor nhwc(std::vector<int64_t> s, uint64_t seed) {
  HostTensor t = HostTensor::strided(DT_F32, s, {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]});
  Rng r(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, r.uniform(-1, 1));
  return t;
}

// |got - ref| <= atol + rtol * |ref| for every element; reports the first miss.
void check_close(const HostTensor& got, const std::vector<double>& ref, double rtol, double atol,
                 const char* what) {
  REQUIRE((size_t)got.numel() == ref.size());
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.get(i), r = ref[(size_t)i];
    if (!(std::fabs(g - r) <= atol + rtol * std::fabs(r))) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  INFO(what << ": " << bad << " of " << got.numel() << " elements off"
            << (first >= 0 ? "; first at " + std::to_string(first) + ": got " + fmt(got.get(first)) +
                                 ", want " + fmt(ref[(size_t)first])
                           : std::string()));
  CHECK(bad == 0);
}

// |a - b| <= rtol * max(|a|, |b|, 1) elementwise (two runs of the library).
void check_same_within(const HostTensor& a, const HostTensor& b, double rtol, const char* what) {
  REQUIRE(a.numel() == b.numel());
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get(i), y = b.get(i);
    double m = std::max(1.0, std::max(std::fabs(x), std::fabs(y)));
    if (!(std::fabs(x - y) <= rtol * m)) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  INFO(what << ": " << bad << " of " << a.numel() << " elements differ"
            << (first >= 0 ? "; first at " + std::to_string(first) + ": " + fmt(a.get(first)) + " vs " +
                                 fmt(b.get(first))
                           : std::string()));
  CHECK(bad == 0);
}

// ---------------------------------------------------------------------------
// references (tests/reference, double), as flat row-major vectors
// ---------------------------------------------------------------------------

std::vector<double> conv_ref(const HostTensor& x, const HostTensor& w, const HostTensor* bias, const CTConv2dDesc& d,
                             const std::vector<int64_t>& ys) {
  return reference(ref_call(CT_OP_CONV2D, &d), {&x, &w, bias}, {{DT_F64, ys}})[0].f;
}

std::vector<double> matmul_ref(const HostTensor& a, const HostTensor& b, const HostTensor* bias,
                               const std::vector<int64_t>& os) {
  CTMatmulDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  return reference(ref_call(CT_OP_MATMUL, &d), {&a, &b, bias}, {{DT_F64, os}})[0].f;
}

void maxpool_ref(const HostTensor& x, const CTPool2dDesc& d, const std::vector<int64_t>& ys, std::vector<double>& y,
                 std::vector<double>& ind) {
  std::vector<ctref::Array> r = reference(ref_call(CT_OP_MAX_POOL2D, &d), {&x}, {{DT_F64, ys}, {DT_I64, ys}});
  y = r[0].f;
  ind.assign(r[1].i.begin(), r[1].i.end());
}

// Layer norm over the last axes of x that hold D elements.
void layernorm_ref(const HostTensor& x, int64_t D, const HostTensor* scale, const HostTensor* shift, double eps,
                   std::vector<double>& y, std::vector<double>& mean, std::vector<double>& rstd) {
  CTLayerNormDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.epsilon = eps;
  int64_t tail = 1;
  while (tail != D && d.normalized_ndim < (int32_t)x.shape.size())
    tail *= x.shape[x.shape.size() - (size_t)++d.normalized_ndim];
  REQUIRE(tail == D);
  const std::vector<int64_t> rows = {x.numel() / D};
  std::vector<ctref::Array> r = reference(ref_call(CT_OP_LAYER_NORM, &d), {&x, scale, shift},
                                          {{DT_F64, x.shape}, {DT_F64, rows}, {DT_F64, rows}});
  y = r[0].f;
  mean = r[1].f;
  rstd = r[2].f;
}

CTConv2dDesc conv_desc(int64_t pad, int64_t stride = 1, int32_t groups = 1) {
  CTConv2dDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.groups = groups;
  d.stride[0] = d.stride[1] = stride;
  d.pad_begin[0] = d.pad_begin[1] = d.pad_end[0] = d.pad_end[1] = pad;
  return d;
}

CTPool2dDesc pool_desc(int64_t k, int64_t stride, int64_t pad) {
  CTPool2dDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.kernel[0] = d.kernel[1] = k;
  d.stride[0] = d.stride[1] = stride;
  d.pad_begin[0] = d.pad_begin[1] = d.pad_end[0] = d.pad_end[1] = pad;
  return d;
}

CTPlanCacheInfo cache_info() {
  CTPlanCacheInfo i;
  std::memset(&i, 0, sizeof i);
  i.struct_size = sizeof i;
  REQUIRE(ct_plan_cache_info(&i) == CT_OK);
  return i;
}

// Restores the cache capacity when a test leaves (also on a failed REQUIRE).
struct CapacityGuard {
  int64_t old;
  CapacityGuard() : old(cache_info().capacity) {}
  ~CapacityGuard() { ct_plan_cache_set_capacity(old); }
};

// A direct conv2d with its own workspace query; returns the status of the run.
CTStatus run_conv(const CTConv2dDesc& d, HostTensor& x, HostTensor& w, HostTensor* b, HostTensor& y,
                  void* stream = nullptr) {
  CTensor vx = x.view(), vw = w.view(), vy = y.view(), vb;
  if (b) vb = b->view();
  size_t bytes = 0;
  CTStatus s = ct_conv2d_workspace_size(&d, &vx, &vw, b ? &vb : nullptr, &vy, &bytes);
  if (s != CT_OK) return s;
  Ws ws(bytes);
  return ct_conv2d(&d, &vx, &vw, b ? &vb : nullptr, &vy, ws.ptr(), bytes, stream);
}

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> r;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      r.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  r.push_back(cur);
  return r;
}

}  // namespace

// ---------------------------------------------------------------------------
// 1. registry
// ---------------------------------------------------------------------------

TEST_CASE("nn: the registry describes the 14 NN ops and their tensor arguments", "[nn]") {
  // The tensor arguments of each ct_<op> as the header declares them ("?":
  // documented as NULL-able), and how many are inputs.
  struct Want {
    int32_t op;
    const char* name;
    const char* tensors;
    int32_t inputs;
  };
  const Want want[] = {
      {CT_OP_MATMUL, "matmul", "a,b,bias?,out", 3},
      {CT_OP_CONV2D, "conv2d", "x,w,bias?,y", 3},
      {CT_OP_CONV2D_BACKWARD_DATA, "conv2d_backward_data", "dy,w,dx", 2},
      {CT_OP_CONV2D_BACKWARD_WEIGHT, "conv2d_backward_weight", "x,dy,dw,dbias?", 2},
      {CT_OP_MAX_POOL2D, "max_pool2d", "x,y,indices?", 1},
      {CT_OP_MAX_POOL2D_BACKWARD, "max_pool2d_backward", "dy,indices,dx", 2},
      {CT_OP_AVG_POOL2D, "avg_pool2d", "x,y", 1},
      {CT_OP_AVG_POOL2D_BACKWARD, "avg_pool2d_backward", "dy,dx", 1},
      {CT_OP_BATCH_NORM, "batch_norm", "x,mean,var,scale?,shift?,y", 5},
      {CT_OP_BATCH_NORM_TRAINING, "batch_norm_training", "x,scale?,shift?,y,mean,invstd", 3},
      {CT_OP_BATCH_NORM_BACKWARD, "batch_norm_backward", "x,dy,mean,invstd,scale?,dx,dscale?,dshift?", 5},
      {CT_OP_LAYER_NORM, "layer_norm", "x,scale?,shift?,y,mean?,rstd?", 3},
      {CT_OP_LAYER_NORM_BACKWARD, "layer_norm_backward", "x,dy,mean,rstd,scale?,dx,dscale?,dshift?", 5},
      {CT_OP_SCALED_DOT_PRODUCT_ATTENTION, "scaled_dot_product_attention", "q,k,v,mask?,out", 4},
  };
  REQUIRE(ct_op_count() >= (int32_t)CT_OP_END_);

  std::vector<int32_t> nn_ops;
  for (int32_t op = 0; op < ct_op_count(); ++op) {
    if (ctt::unloaded_plugin_op(op)) continue;
    CTOpInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(op, &info) == CT_OK);
    INFO("op " << op << " (" << info.name << ")");
    // Category NN exactly for kind NN, and exactly for the ids of CT_NN_OPS.
    CHECK((info.category == CT_CATEGORY_NN) == (info.kind == CT_KIND_NN));
    bool in_nn_list = false;  // the header lists op under CT_NN_OPS
#define CTT_IS_NN_(ID, n, k, p, s) in_nn_list = in_nn_list || op == (int32_t)CT_OP_##ID;
    CT_NN_OPS(CTT_IS_NN_)
#undef CTT_IS_NN_
    if (op < (int32_t)CT_OP_END_) CHECK((info.category == CT_CATEGORY_NN) == in_nn_list);
    if (info.category != CT_CATEGORY_NN) continue;
    nn_ops.push_back(op);
    CHECK(info.op == op);
    CHECK(info.kind == CT_KIND_NN);
    CHECK(info.output_dtype == CT_OUTPUT_NN);
    CHECK(info.num_params == 0);
    REQUIRE(info.tensor_names != nullptr);
    REQUIRE(info.name != nullptr);
    std::vector<std::string> names = split_names(info.tensor_names);
    CHECK((int32_t)names.size() == info.num_tensors);
    CHECK(info.num_inputs >= 1);
    CHECK(info.num_inputs < info.num_tensors);
    for (const std::string& n : names) {
      INFO("tensor name '" << n << "' in \"" << info.tensor_names << "\"");
      std::string bare = n.size() && n.back() == '?' ? n.substr(0, n.size() - 1) : n;
      CHECK(!bare.empty());
      bool ident = true;
      for (char c : bare) ident = ident && (std::islower((unsigned char)c) || c == '_');
      CHECK(ident);
    }
    // ct_op_find by name.
    int32_t found = -1;
    CHECK(ct_op_find(info.name, &found) == CT_OK);
    CHECK(found == op);
    // The header's argument names and counts.
    const Want* w = nullptr;
    for (const Want& c : want)
      if (c.op == op) w = &c;
    REQUIRE(w != nullptr);
    CHECK(std::string(info.name) == w->name);
    CHECK(std::string(info.tensor_names) == w->tensors);
    CHECK(info.num_tensors == (int32_t)split_names(w->tensors).size());
    CHECK(info.num_inputs == w->inputs);

    // dtypes on the CPU.
    CHECK(ct_op_supported(op, kCpu, dtype(DT_F32).dt) == CT_OK);
    CHECK(last_error().empty());
    for (int d : {DT_BF16, DT_F16}) {
      INFO("dtype " << dtype(d).name);
      CTStatus s = ct_op_supported(op, kCpu, dtype(d).dt);
      std::string msg = last_error();
      INFO("status " << ct_status_string(s) << ", message \"" << msg << "\"");
      CHECK((s == CT_OK || s == CT_ERR_UNSUPPORTED));
      if (s == CT_OK) {
        CHECK(msg.empty());
      } else {
        CHECK(contains(msg, "ct_op_supported"));
        CHECK(names_arg(msg, info.name));
        CHECK(names_arg(msg, dtype(d).name));
      }
    }
    for (int d : {DT_F64, DT_I32, DT_U8, DT_U16, DT_U32, DT_U64}) {  // outside CT_DTS_NN: "not defined for uint32"
      INFO("dtype " << dtype(d).name);
      CHECK(((info.dtype_mask >> d) & 1u) == 0);
      CTStatus s = ct_op_supported(op, kCpu, dtype(d).dt);
      std::string msg = last_error();
      INFO("message \"" << msg << "\"");
      CHECK(s == CT_ERR_UNSUPPORTED);
      CHECK(contains(msg, "ct_op_supported"));
      CHECK(names_arg(msg, info.name));
      CHECK(names_arg(msg, dtype(d).name));
      CHECK(contains(msg, std::string(info.name) + " is not defined for " + dtype(d).name));
    }
  }
  CHECK(nn_ops.size() == 14);
  for (const Want& w : want) {
    int32_t found = -1;
    INFO(w.name);
    CHECK(ct_op_find(w.name, &found) == CT_OK);
    CHECK(found == w.op);
  }
}

// ---------------------------------------------------------------------------
// 2. plans
// ---------------------------------------------------------------------------

TEST_CASE("nn: conv2d plan: workspace size as the direct query, new buffers per execute, results right", "[nn]") {
  for (bool with_bias : {true, false}) {
    for (bool nhwc_layout : {false, true}) {
      INFO("bias " << with_bias << ", NHWC " << nhwc_layout);
      CTConv2dDesc d = conv_desc(1);
      d.stride[1] = 2;  // P = 7, Q = (6 + 2 - 2 - 1) / 2 + 1 = 3
      d.activation = CT_ACTIVATION_RELU;
      std::vector<int64_t> xs = {2, 3, 7, 6}, ws_ = {4, 3, 3, 3}, ys = {2, 4, 7, 3};
      HostTensor x1 = nhwc_layout ? nhwc(xs, 1) : rnd(xs, 1), w1 = rnd(ws_, 2), b1 = rnd({4}, 3), y1 = out_t(ys);
      HostTensor x2 = nhwc_layout ? nhwc(xs, 4) : rnd(xs, 4), w2 = rnd(ws_, 5), b2 = rnd({4}, 6), y2 = out_t(ys);
      CTensor vx1 = x1.view(), vw1 = w1.view(), vb1 = b1.view(), vy1 = y1.view();
      CTensor vx2 = x2.view(), vw2 = w2.view(), vb2 = b2.view(), vy2 = y2.view();
      const CTensor* t1[4] = {&vx1, &vw1, with_bias ? &vb1 : nullptr, &vy1};
      const CTensor* t2[4] = {&vx2, &vw2, with_bias ? &vb2 : nullptr, &vy2};

      CTPlan* plan = nullptr;
      REQUIRE(ct_plan_create(CT_OP_CONV2D, &d, t1, 4, nullptr, &plan) == CT_OK);
      REQUIRE(plan != nullptr);
      CHECK(last_error().empty());
      size_t pbytes = 777, dbytes = 999;
      REQUIRE(ct_plan_workspace_size(plan, &pbytes) == CT_OK);
      REQUIRE(ct_conv2d_workspace_size(&d, &vx1, &vw1, with_bias ? &vb1 : nullptr, &vy1, &dbytes) == CT_OK);
      CHECK(pbytes == dbytes);

      // Data pointers are not read by the query or by plan creation: NULL works.
      {
        CTensor nx = vx1, nw = vw1, nb = vb1, ny = vy1;
        nx.data = nw.data = nb.data = ny.data = nullptr;
        size_t nbytes = 4242;
        REQUIRE(ct_conv2d_workspace_size(&d, &nx, &nw, with_bias ? &nb : nullptr, &ny, &nbytes) == CT_OK);
        CHECK(nbytes == dbytes);
        const CTensor* tn[4] = {&nx, &nw, with_bias ? &nb : nullptr, &ny};
        CTPlan* pn = nullptr;
        REQUIRE(ct_plan_create(CT_OP_CONV2D, &d, tn, 4, nullptr, &pn) == CT_OK);
        nbytes = 4242;
        REQUIRE(ct_plan_workspace_size(pn, &nbytes) == CT_OK);
        CHECK(nbytes == pbytes);
        ct_plan_destroy(pn);
      }

      Ws ws(pbytes);
      REQUIRE(ct_plan_execute(plan, t1, 4, ws.ptr(), pbytes, nullptr) == CT_OK);
      REQUIRE(ct_plan_execute(plan, t2, 4, ws.ptr(), pbytes, nullptr) == CT_OK);
      check_close(y1, conv_ref(x1, w1, with_bias ? &b1 : nullptr, d, ys), 1e-5, 1e-5, "plan run 1");
      check_close(y2, conv_ref(x2, w2, with_bias ? &b2 : nullptr, d, ys), 1e-5, 1e-5, "plan run 2");

      // The same inputs again into a third buffer (and another workspace):
      // the same bits.
      HostTensor y3 = out_t(ys);
      CTensor vy3 = y3.view();
      const CTensor* t3[4] = {&vx1, &vw1, with_bias ? &vb1 : nullptr, &vy3};
      Ws ws2(pbytes);
      REQUIRE(ct_plan_execute(plan, t3, 4, ws2.ptr(), pbytes, nullptr) == CT_OK);
      CHECK(y3.bytes() == y1.bytes());

      // The direct call agrees.
      HostTensor yd = out_t(ys);
      CTensor vyd = yd.view();
      Ws wsd(dbytes);
      REQUIRE(ct_conv2d(&d, &vx2, &vw2, with_bias ? &vb2 : nullptr, &vyd, wsd.ptr(), dbytes, nullptr) == CT_OK);
      check_same_within(yd, y2, 1e-6, "direct vs plan");
      ct_plan_destroy(plan);
    }
  }
}

TEST_CASE("nn: matmul plan with a transposed b view and broadcast batch dims", "[nn]") {
  CTMatmulDesc d = {sizeof(CTMatmulDesc), CT_ACTIVATION_NONE};
  std::vector<int64_t> as = {3, 5, 7}, os = {3, 5, 6};
  // b is (7, 6) stored transposed: strides (1, 7).
  auto make_bt = [](uint64_t seed) {
    HostTensor t = HostTensor::strided(DT_F32, {7, 6}, {1, 7});
    Rng r(seed);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, r.uniform(-1, 1));
    return t;
  };
  HostTensor a1 = rnd(as, 11), b1 = make_bt(12), c1 = rnd({6}, 13), o1 = out_t(os);
  HostTensor a2 = rnd(as, 14), b2 = make_bt(15), c2 = rnd({6}, 16), o2 = out_t(os);
  CTensor va1 = a1.view(), vb1 = b1.view(), vc1 = c1.view(), vo1 = o1.view();
  CTensor va2 = a2.view(), vb2 = b2.view(), vc2 = c2.view(), vo2 = o2.view();
  const CTensor* t1[4] = {&va1, &vb1, &vc1, &vo1};
  const CTensor* t2[4] = {&va2, &vb2, &vc2, &vo2};
  CTPlan* plan = nullptr;
  REQUIRE(ct_plan_create(CT_OP_MATMUL, &d, t1, 4, nullptr, &plan) == CT_OK);
  size_t pbytes = 777, dbytes = 999;
  REQUIRE(ct_plan_workspace_size(plan, &pbytes) == CT_OK);
  REQUIRE(ct_matmul_workspace_size(&d, &va1, &vb1, &vc1, &vo1, &dbytes) == CT_OK);
  CHECK(pbytes == dbytes);
  Ws ws(pbytes);
  REQUIRE(ct_plan_execute(plan, t1, 4, ws.ptr(), pbytes, nullptr) == CT_OK);
  REQUIRE(ct_plan_execute(plan, t2, 4, ws.ptr(), pbytes, nullptr) == CT_OK);
  check_close(o1, matmul_ref(a1, b1, &c1, os), 1e-5, 1e-5, "plan run 1");
  check_close(o2, matmul_ref(a2, b2, &c2, os), 1e-5, 1e-5, "plan run 2");

  HostTensor od = out_t(os);
  CTensor vod = od.view();
  Ws wsd(dbytes);
  REQUIRE(ct_matmul(&d, &va1, &vb1, &vc1, &vod, wsd.ptr(), dbytes, nullptr) == CT_OK);
  check_same_within(od, o1, 1e-6, "direct vs plan");

  // A compact b is a different layout from the plan's transposed one.
  HostTensor bc = rnd({7, 6}, 17, DT_F32);
  bc.null_strides = false;
  HostTensor o3 = out_t(os);
  CTensor vbc = bc.view(), vo3 = o3.view();
  const CTensor* t3[4] = {&va1, &vbc, &vc1, &vo3};
  std::vector<unsigned char> before = o3.bytes();
  expect_fail(ct_plan_execute(plan, t3, 4, ws.ptr(), pbytes, nullptr),
              {CT_ERR_SHAPE_MISMATCH, CT_ERR_INVALID_ARGUMENT}, "ct_plan_execute", {"b|tensors[1]"});
  CHECK(o3.bytes() == before);
  ct_plan_destroy(plan);
}

TEST_CASE("nn: max_pool2d and layer_norm plans on new buffers", "[nn]") {
  SECTION("max_pool2d with indices") {
    CTPool2dDesc d = pool_desc(3, 2, 1);
    std::vector<int64_t> xs = {2, 3, 7, 7}, ys = {2, 3, 4, 4};
    HostTensor x1 = rnd(xs, 21), y1 = out_t(ys), i1 = out_t(ys, DT_I64);
    HostTensor x2 = rnd(xs, 22), y2 = out_t(ys), i2 = out_t(ys, DT_I64);
    CTensor vx1 = x1.view(), vy1 = y1.view(), vi1 = i1.view();
    CTensor vx2 = x2.view(), vy2 = y2.view(), vi2 = i2.view();
    const CTensor* t1[3] = {&vx1, &vy1, &vi1};
    const CTensor* t2[3] = {&vx2, &vy2, &vi2};
    CTPlan* plan = nullptr;
    REQUIRE(ct_plan_create(CT_OP_MAX_POOL2D, &d, t1, 3, nullptr, &plan) == CT_OK);
    size_t pbytes = 777, dbytes = 999;
    REQUIRE(ct_plan_workspace_size(plan, &pbytes) == CT_OK);
    REQUIRE(ct_max_pool2d_workspace_size(&d, &vx1, &vy1, &vi1, &dbytes) == CT_OK);
    CHECK(pbytes == dbytes);
    Ws ws(pbytes);
    REQUIRE(ct_plan_execute(plan, t1, 3, ws.ptr(), pbytes, nullptr) == CT_OK);
    REQUIRE(ct_plan_execute(plan, t2, 3, ws.ptr(), pbytes, nullptr) == CT_OK);
    std::vector<double> ry, ri;
    maxpool_ref(x1, d, ys, ry, ri);
    check_close(y1, ry, 0, 0, "y run 1");
    check_close(i1, ri, 0, 0, "indices run 1");
    maxpool_ref(x2, d, ys, ry, ri);
    check_close(y2, ry, 0, 0, "y run 2");
    check_close(i2, ri, 0, 0, "indices run 2");

    // The plan has indices: executing without them is an error, y untouched.
    HostTensor y3 = out_t(ys);
    CTensor vy3 = y3.view();
    const CTensor* t3[3] = {&vx1, &vy3, nullptr};
    expect_fail(ct_plan_execute(plan, t3, 3, ws.ptr(), pbytes, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_plan_execute",
                {"indices|tensors[2]"});
    CHECK(y3.bytes() == out_t(ys).bytes());
    ct_plan_destroy(plan);
  }
  SECTION("layer_norm over the last axis, statistics written") {
    CTLayerNormDesc d;
    std::memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.normalized_ndim = 1;
    d.epsilon = 1e-5;
    std::vector<int64_t> xs = {4, 3, 10}, ss = {4, 3};
    HostTensor x1 = rnd(xs, 31), g1 = rnd({10}, 32), b1 = rnd({10}, 33), y1 = out_t(xs), m1 = out_t(ss),
               r1 = out_t(ss);
    HostTensor x2 = rnd(xs, 34, DT_F32, -3, 5), g2 = rnd({10}, 35), b2 = rnd({10}, 36), y2 = out_t(xs),
               m2 = out_t(ss), r2 = out_t(ss);
    CTensor vx1 = x1.view(), vg1 = g1.view(), vb1 = b1.view(), vy1 = y1.view(), vm1 = m1.view(), vr1 = r1.view();
    CTensor vx2 = x2.view(), vg2 = g2.view(), vb2 = b2.view(), vy2 = y2.view(), vm2 = m2.view(), vr2 = r2.view();
    const CTensor* t1[6] = {&vx1, &vg1, &vb1, &vy1, &vm1, &vr1};
    const CTensor* t2[6] = {&vx2, &vg2, &vb2, &vy2, &vm2, &vr2};
    CTPlan* plan = nullptr;
    REQUIRE(ct_plan_create(CT_OP_LAYER_NORM, &d, t1, 6, nullptr, &plan) == CT_OK);
    size_t pbytes = 777, dbytes = 999;
    REQUIRE(ct_plan_workspace_size(plan, &pbytes) == CT_OK);
    REQUIRE(ct_layer_norm_workspace_size(&d, &vx1, &vg1, &vb1, &vy1, &vm1, &vr1, &dbytes) == CT_OK);
    CHECK(pbytes == dbytes);
    Ws ws(pbytes);
    REQUIRE(ct_plan_execute(plan, t1, 6, ws.ptr(), pbytes, nullptr) == CT_OK);
    REQUIRE(ct_plan_execute(plan, t2, 6, ws.ptr(), pbytes, nullptr) == CT_OK);
    std::vector<double> ry, rm, rr;
    layernorm_ref(x1, 10, &g1, &b1, 1e-5, ry, rm, rr);
    check_close(y1, ry, 1e-4, 1e-5, "y run 1");
    check_close(m1, rm, 1e-5, 1e-6, "mean run 1");
    check_close(r1, rr, 1e-4, 1e-6, "rstd run 1");
    layernorm_ref(x2, 10, &g2, &b2, 1e-5, ry, rm, rr);
    check_close(y2, ry, 1e-4, 1e-5, "y run 2");
    check_close(m2, rm, 1e-5, 1e-6, "mean run 2");
    check_close(r2, rr, 1e-4, 1e-6, "rstd run 2");
    ct_plan_destroy(plan);
  }
}

TEST_CASE("nn: ct_plan_execute rejects tensors that differ from the plan's, outputs untouched", "[nn]") {
  CTConv2dDesc d = conv_desc(1);
  std::vector<int64_t> xs = {2, 3, 6, 6}, wsh = {4, 3, 3, 3}, ys = {2, 4, 6, 6};
  HostTensor x = rnd(xs, 41), w = rnd(wsh, 42), b = rnd({4}, 43), y = out_t(ys);
  CTensor vx = x.view(), vw = w.view(), vb = b.view(), vy = y.view();
  const CTensor* t[4] = {&vx, &vw, &vb, &vy};
  CTPlan* plan = nullptr;
  REQUIRE(ct_plan_create(CT_OP_CONV2D, &d, t, 4, nullptr, &plan) == CT_OK);
  size_t bytes = 0;
  REQUIRE(ct_plan_workspace_size(plan, &bytes) == CT_OK);
  Ws ws(bytes + 4096);
  const std::vector<unsigned char> sentinel = y.bytes();
  auto untouched = [&] { return y.bytes() == sentinel; };

  SECTION("x of another shape") {
    HostTensor x3 = rnd({3, 3, 6, 6}, 44);
    CTensor v = x3.view();
    const CTensor* tt[4] = {&v, &vw, &vb, &vy};
    expect_fail(ct_plan_execute(plan, tt, 4, ws.ptr(), ws.bytes, nullptr), CT_ERR_SHAPE_MISMATCH, "ct_plan_execute",
                {"x|tensors[0]"});
    CHECK(untouched());
  }
  SECTION("x with NHWC strides instead of the plan's compact ones") {
    HostTensor xn = nhwc(xs, 45);
    CTensor v = xn.view();
    const CTensor* tt[4] = {&v, &vw, &vb, &vy};
    expect_fail(ct_plan_execute(plan, tt, 4, ws.ptr(), ws.bytes, nullptr),
                {CT_ERR_SHAPE_MISMATCH, CT_ERR_INVALID_ARGUMENT}, "ct_plan_execute", {"x|tensors[0]"},
                {"strides"});
    CHECK(untouched());
  }
  SECTION("explicit compact strides are the same layout as NULL strides") {
    HostTensor xe = rnd(xs, 46);
    xe.null_strides = false;
    CTensor v = xe.view();
    const CTensor* tt[4] = {&v, &vw, &vb, &vy};
    REQUIRE(ct_plan_execute(plan, tt, 4, ws.ptr(), ws.bytes, nullptr) == CT_OK);
    check_close(y, conv_ref(xe, w, &b, d, ys), 1e-5, 1e-5, "explicit compact strides");
  }
  SECTION("w of another dtype") {
    HostTensor wh = rnd(wsh, 47, DT_F16);
    CTensor v = wh.view();
    const CTensor* tt[4] = {&vx, &v, &vb, &vy};
    expect_fail(ct_plan_execute(plan, tt, 4, ws.ptr(), ws.bytes, nullptr), CT_ERR_DTYPE_MISMATCH, "ct_plan_execute",
                {"w|tensors[1]"});
    CHECK(untouched());
  }
  SECTION("y of another shape") {
    HostTensor y2 = out_t({2, 4, 5, 5});
    CTensor v = y2.view();
    const CTensor* tt[4] = {&vx, &vw, &vb, &v};
    expect_fail(ct_plan_execute(plan, tt, 4, ws.ptr(), ws.bytes, nullptr), CT_ERR_SHAPE_MISMATCH, "ct_plan_execute",
                {"y|tensors[3]"});
    CHECK(y2.bytes() == out_t({2, 4, 5, 5}).bytes());
  }
  SECTION("bias missing though the plan has one, and present though it had none") {
    const CTensor* tt[4] = {&vx, &vw, nullptr, &vy};
    expect_fail(ct_plan_execute(plan, tt, 4, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_plan_execute", {"bias|tensors[2]"});
    CHECK(untouched());
    CTPlan* nobias = nullptr;
    REQUIRE(ct_plan_create(CT_OP_CONV2D, &d, tt, 4, nullptr, &nobias) == CT_OK);
    size_t nb = 0;
    REQUIRE(ct_plan_workspace_size(nobias, &nb) == CT_OK);
    Ws ws2(nb + 4096);
    expect_fail(ct_plan_execute(nobias, t, 4, ws2.ptr(), ws2.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_plan_execute", {"bias|tensors[2]"});
    CHECK(untouched());
    ct_plan_destroy(nobias);
  }
  SECTION("a required tensor NULL, the tensors array NULL, the plan NULL") {
    for (int i : {0, 1, 3}) {
      INFO("tensor " << i << " NULL");
      const CTensor* tt[4] = {&vx, &vw, &vb, &vy};
      tt[i] = nullptr;
      static const char* const names[4] = {"x|tensors[0]", "w|tensors[1]", "bias|tensors[2]", "y|tensors[3]"};
      expect_fail(ct_plan_execute(plan, tt, 4, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                  "ct_plan_execute", {names[i]});
      CHECK(untouched());
    }
    expect_fail(ct_plan_execute(plan, nullptr, 4, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_plan_execute", {"tensors"});
    expect_fail(ct_plan_execute(nullptr, t, 4, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_plan_execute", {"plan"});
    CHECK(untouched());
  }
  SECTION("num_tensors other than the op's") {
    for (int32_t n : {0, 3, 5, -1}) {
      INFO("num_tensors " << n);
      expect_fail(ct_plan_execute(plan, t, n, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                  "ct_plan_execute", {"num_tensors"}, {std::to_string(n)});
      CHECK(untouched());
    }
  }
  SECTION("a tensor on a device that does not exist") {
    CTensor v = vx;
    v.device.device_id = 5;
    const CTensor* tt[4] = {&v, &vw, &vb, &vy};
    CTStatus s = ct_plan_execute(plan, tt, 4, ws.ptr(), ws.bytes, nullptr);
    INFO("message \"" << last_error() << "\"");
    CHECK(s != CT_OK);
    CHECK(names_any(last_error(), "x|tensors[0]"));
    CHECK(untouched());
  }
  SECTION("y overlapping x") {
    // One buffer holds x and, 10 floats in, y: y overlaps x partly.
    HostTensor big = rnd({2 * 3 * 36 + 2 * 4 * 36 + 16}, 48);
    const std::vector<unsigned char> before = big.bytes();
    CTensor bx = vx, by = vy;
    bx.data = big.buf();
    bx.byte_offset = 0;
    by.data = big.buf();
    by.byte_offset = 10 * sizeof(float);
    const CTensor* tt[4] = {&bx, &vw, &vb, &by};
    expect_fail(ct_plan_execute(plan, tt, 4, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_plan_execute", {"y|tensors[3]", "x|tensors[0]"});
    CHECK(big.bytes() == before);
  }
  SECTION("workspace too small") {
    // This plan may need no scratch; a 16 -> 32 channel NCHW conv2d (blocked
    // reorders) and a matmul with a transposed b are checked when they do.
    if (bytes == 0) {
      REQUIRE(ct_plan_execute(plan, t, 4, nullptr, 0, nullptr) == CT_OK);
      check_close(y, conv_ref(x, w, &b, d, ys), 1e-5, 1e-5, "no workspace needed");
    }
    int checked = 0;
    for (int which = 0; which < 2; ++which) {
      INFO((which == 0 ? "conv2d 16 -> 32" : "matmul, b transposed"));
      HostTensor i0, i1, o;
      CTConv2dDesc cd = conv_desc(1);
      CTMatmulDesc md = {sizeof(CTMatmulDesc), CT_ACTIVATION_NONE};
      if (which == 0) {
        i0 = rnd({2, 16, 14, 14}, 49);
        i1 = rnd({32, 16, 3, 3}, 50);
        o = out_t({2, 32, 14, 14});
      } else {
        i0 = rnd({3, 33, 47}, 51);
        i1 = HostTensor::strided(DT_F32, {47, 29}, {1, 47});
        o = out_t({3, 33, 29});
      }
      CTensor v0 = i0.view(), v1 = i1.view(), vo = o.view();
      const CTensor* tt[4] = {&v0, &v1, nullptr, &vo};
      CTPlan* p2 = nullptr;
      REQUIRE(ct_plan_create(which == 0 ? CT_OP_CONV2D : CT_OP_MATMUL, which == 0 ? (const void*)&cd : (const void*)&md,
                             tt, 4, nullptr, &p2) == CT_OK);
      size_t need = 0;
      REQUIRE(ct_plan_workspace_size(p2, &need) == CT_OK);
      if (need > 0) {
        ++checked;
        Ws w2(need);
        const std::vector<unsigned char> so = o.bytes();
        expect_fail(ct_plan_execute(p2, tt, 4, w2.ptr(), need - 1, nullptr), CT_ERR_WORKSPACE_TOO_SMALL,
                    "ct_plan_execute", {"workspace|workspace_bytes"}, {std::to_string(need)});
        CHECK(o.bytes() == so);
        expect_fail(ct_plan_execute(p2, tt, 4, nullptr, 0, nullptr), CT_ERR_WORKSPACE_TOO_SMALL, "ct_plan_execute",
                    {"workspace|workspace_bytes"}, {std::to_string(need)});
        CHECK(o.bytes() == so);
        expect_fail(ct_plan_execute(p2, tt, 4, nullptr, need, nullptr),
                    {CT_ERR_WORKSPACE_TOO_SMALL, CT_ERR_INVALID_ARGUMENT}, "ct_plan_execute", {"workspace"});
        CHECK(o.bytes() == so);
        REQUIRE(ct_plan_execute(p2, tt, 4, w2.ptr(), need, nullptr) == CT_OK);
        CHECK(o.bytes() != so);
      }
      ct_plan_destroy(p2);
    }
    CHECK(checked >= 1);
  }
  ct_plan_destroy(plan);
}

TEST_CASE("nn: ct_plan_create and the plan helpers reject bad arguments", "[nn]") {
  CTConv2dDesc d = conv_desc(1);
  HostTensor x = rnd({2, 3, 6, 6}, 51), w = rnd({4, 3, 3, 3}, 52), y = out_t({2, 4, 6, 6});
  CTensor vx = x.view(), vw = w.view(), vy = y.view();
  const CTensor* t[4] = {&vx, &vw, nullptr, &vy};
  char dummy = 0;
  CTPlan* const marker = reinterpret_cast<CTPlan*>(&dummy);

  SECTION("an op that is not an NN op, or no op at all") {
    for (int32_t op : {(int32_t)CT_OP_ADD, (int32_t)CT_OP_EXP, (int32_t)CT_OP_SUM}) {
      INFO("op " << op);
      CTPlan* p = marker;
      CTStatus s = ct_plan_create(op, &d, t, 4, nullptr, &p);
      std::string msg = last_error();
      INFO("message \"" << msg << "\"");
      CHECK(s == CT_ERR_INVALID_ARGUMENT);
      CHECK(contains(msg, "ct_plan_create"));
      CHECK(p == marker);
    }
    for (int32_t op : {-1, 99999, ct_op_count()}) {
      INFO("op " << op);
      CTPlan* p = marker;
      CTStatus s = ct_plan_create(op, &d, t, 4, nullptr, &p);
      std::string msg = last_error();
      INFO("message \"" << msg << "\"");
      CHECK((s == CT_ERR_NOT_FOUND || s == CT_ERR_INVALID_ARGUMENT));
      CHECK(contains(msg, "ct_plan_create"));
      CHECK(contains(msg, std::to_string(op)));
      CHECK(p == marker);
    }
  }
  SECTION("num_tensors, tensors, desc, plan pointer") {
    for (int32_t n : {0, 3, 5, -2}) {
      INFO("num_tensors " << n);
      CTPlan* p = marker;
      expect_fail(ct_plan_create(CT_OP_CONV2D, &d, t, n, nullptr, &p), CT_ERR_INVALID_ARGUMENT, "ct_plan_create",
                  {"num_tensors"}, {std::to_string(n)});
      CHECK(p == marker);
    }
    CTPlan* p = marker;
    expect_fail(ct_plan_create(CT_OP_CONV2D, &d, nullptr, 4, nullptr, &p), CT_ERR_INVALID_ARGUMENT,
                "ct_plan_create", {"tensors"});
    CHECK(p == marker);
    CTStatus s = ct_plan_create(CT_OP_CONV2D, nullptr, t, 4, nullptr, &p);
    INFO("message \"" << last_error() << "\"");
    CHECK(s == CT_ERR_INVALID_ARGUMENT);
    CHECK(names_arg(last_error(), "desc"));
    CHECK(p == marker);
    expect_fail(ct_plan_create(CT_OP_CONV2D, &d, t, 4, nullptr, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_plan_create",
                {"plan"});
  }
  SECTION("arguments the direct call rejects: the same status") {
    HostTensor ybad = out_t({2, 4, 5, 6});
    CTensor vyb = ybad.view();
    const CTensor* tb[4] = {&vx, &vw, nullptr, &vyb};
    CTPlan* p = marker;
    CTStatus sp = ct_plan_create(CT_OP_CONV2D, &d, tb, 4, nullptr, &p);
    std::string msg = last_error();
    CHECK(p == marker);
    CHECK(contains(msg, "[2,4,6,6]"));
    CHECK(names_arg(msg, "y"));
    Ws ws(1 << 20);
    CTStatus sd = ct_conv2d(&d, &vx, &vw, nullptr, &vyb, ws.ptr(), ws.bytes, nullptr);
    CHECK(sp == sd);
    CHECK(sp == CT_ERR_SHAPE_MISMATCH);

    CTConv2dDesc neg = conv_desc(1);
    neg.pad_end[1] = -1;
    sp = ct_plan_create(CT_OP_CONV2D, &neg, t, 4, nullptr, &p);
    CHECK(p == marker);
    CHECK(contains(last_error(), "pad_end"));
    sd = ct_conv2d(&neg, &vx, &vw, nullptr, &vy, ws.ptr(), ws.bytes, nullptr);
    CHECK(sp == sd);
    CHECK(sp == CT_ERR_INVALID_ARGUMENT);
  }
  SECTION("destroy NULL, workspace size of NULL") {
    ct_plan_destroy(nullptr);
    size_t bytes = 4242;
    expect_fail(ct_plan_workspace_size(nullptr, &bytes), CT_ERR_INVALID_ARGUMENT, "ct_plan_workspace_size",
                {"plan"});
    CHECK(bytes == 4242);
    CTPlan* p = nullptr;
    REQUIRE(ct_plan_create(CT_OP_CONV2D, &d, t, 4, nullptr, &p) == CT_OK);
    expect_fail(ct_plan_workspace_size(p, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_plan_workspace_size", {"bytes"});
    ct_plan_destroy(p);
  }
  CHECK(y.bytes() == out_t({2, 4, 6, 6}).bytes());
}

// ---------------------------------------------------------------------------
// 3. concurrency
// ---------------------------------------------------------------------------

TEST_CASE("nn: one conv2d plan executed from 4 threads gives the single-threaded bits", "[nn]") {
  CTConv2dDesc d = conv_desc(1);
  std::vector<int64_t> xs = {2, 16, 14, 14}, wsh = {32, 16, 3, 3}, ys = {2, 32, 14, 14};
  const int kThreads = 4, kIters = 20;
  std::vector<HostTensor> xv, wv, bv, refs;
  for (int i = 0; i < kThreads; ++i) {
    xv.push_back(rnd(xs, 100 + i));
    wv.push_back(rnd(wsh, 200 + i));
    bv.push_back(rnd({32}, 300 + i));
  }
  HostTensor y0 = out_t(ys);
  CTensor vx0 = xv[0].view(), vw0 = wv[0].view(), vb0 = bv[0].view(), vy0 = y0.view();
  const CTensor* t0[4] = {&vx0, &vw0, &vb0, &vy0};
  CTPlan* plan = nullptr;
  REQUIRE(ct_plan_create(CT_OP_CONV2D, &d, t0, 4, nullptr, &plan) == CT_OK);
  size_t bytes = 0;
  REQUIRE(ct_plan_workspace_size(plan, &bytes) == CT_OK);

  // Single-threaded results, one per input set.
  {
    Ws ws(bytes);
    for (int i = 0; i < kThreads; ++i) {
      HostTensor r = out_t(ys);
      CTensor vx = xv[i].view(), vw = wv[i].view(), vb = bv[i].view(), vr = r.view();
      const CTensor* tt[4] = {&vx, &vw, &vb, &vr};
      REQUIRE(ct_plan_execute(plan, tt, 4, ws.ptr(), bytes, nullptr) == CT_OK);
      refs.push_back(std::move(r));
    }
    check_close(refs[0], conv_ref(xv[0], wv[0], &bv[0], d, ys), 1e-4, 1e-4, "single-threaded vs reference");
  }

  std::atomic<int> failures(0), mismatches(0);
  std::mutex mu;
  std::string first_error;
  auto worker = [&](int id) {
    Ws ws(bytes);
    HostTensor y = out_t(ys);
    for (int it = 0; it < kIters; ++it) {
      int set = (id + it) % kThreads;  // every thread runs every input set
      y.fill_bytes(kSentinel);
      CTensor vx = xv[set].view(), vw = wv[set].view(), vb = bv[set].view(), vy = y.view();
      const CTensor* tt[4] = {&vx, &vw, &vb, &vy};
      CTStatus s = ct_plan_execute(plan, tt, 4, ws.ptr(), bytes, nullptr);
      if (s != CT_OK) {
        ++failures;
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.empty()) first_error = last_error();
      } else if (y.bytes() != refs[set].bytes()) {
        ++mismatches;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
  for (std::thread& th : threads) th.join();
  INFO("first error: " << first_error);
  CHECK(failures.load() == 0);
  CHECK(mismatches.load() == 0);
  ct_plan_destroy(plan);
}

TEST_CASE("nn: direct calls from 4 threads on several new shapes at once (the cache)", "[nn]") {
  // Four conv2d shapes and a matmul shape that no other test uses, so the
  // threads race on creating the cache entries too.
  struct Cfg {
    CTConv2dDesc d;
    std::vector<int64_t> xs, wsh, ys;
  };
  std::vector<Cfg> cfgs;
  {
    Cfg c{conv_desc(1), {2, 8, 13, 13}, {12, 8, 3, 3}, {2, 12, 13, 13}};
    cfgs.push_back(c);
    Cfg c2{conv_desc(0, 2), {1, 6, 17, 15}, {10, 6, 3, 3}, {1, 10, 8, 7}};
    cfgs.push_back(c2);
    Cfg c3{conv_desc(2, 1, 2), {2, 8, 9, 11}, {6, 4, 5, 5}, {2, 6, 9, 11}};
    cfgs.push_back(c3);
    Cfg c4{conv_desc(0), {3, 5, 10, 9}, {7, 5, 1, 1}, {3, 7, 10, 9}};
    cfgs.push_back(c4);
  }
  const int kShapes = (int)cfgs.size(), kThreads = 4, kIters = 5;
  std::vector<HostTensor> xv, wv, bv;
  for (int i = 0; i < kShapes; ++i) {
    xv.push_back(rnd(cfgs[i].xs, 400 + i));
    wv.push_back(rnd(cfgs[i].wsh, 500 + i));
    bv.push_back(rnd({cfgs[i].wsh[0]}, 600 + i));
  }
  CTMatmulDesc md = {sizeof(CTMatmulDesc), CT_ACTIVATION_NONE};
  HostTensor ma = rnd({2, 19, 23}, 700), mb = rnd({23, 21}, 701);
  const std::vector<int64_t> mos = {2, 19, 21};

  // results[thread][shape (kShapes = matmul)] from the first iteration; every
  // later one must equal it bit for bit.
  std::vector<std::vector<std::vector<unsigned char>>> results(kThreads,
                                                               std::vector<std::vector<unsigned char>>(kShapes + 1));
  std::atomic<int> failures(0), mismatches(0);
  std::mutex mu;
  std::string first_error;
  auto note_error = [&] {
    ++failures;
    std::lock_guard<std::mutex> lock(mu);
    if (first_error.empty()) first_error = last_error();
  };
  auto worker = [&](int id) {
    for (int it = 0; it < kIters; ++it) {
      for (int k = 0; k <= kShapes; ++k) {
        int s = (k + id) % (kShapes + 1);
        std::vector<unsigned char> got;
        if (s < kShapes) {
          HostTensor y = out_t(cfgs[s].ys);
          CTensor vx = xv[s].view(), vw = wv[s].view(), vb = bv[s].view(), vy = y.view();
          size_t bytes = 0;
          if (ct_conv2d_workspace_size(&cfgs[s].d, &vx, &vw, &vb, &vy, &bytes) != CT_OK) {
            note_error();
            continue;
          }
          Ws ws(bytes);
          if (ct_conv2d(&cfgs[s].d, &vx, &vw, &vb, &vy, ws.ptr(), bytes, nullptr) != CT_OK) {
            note_error();
            continue;
          }
          got = y.bytes();
        } else {
          HostTensor o = out_t(mos);
          CTensor va = ma.view(), vb = mb.view(), vo = o.view();
          size_t bytes = 0;
          if (ct_matmul_workspace_size(&md, &va, &vb, nullptr, &vo, &bytes) != CT_OK) {
            note_error();
            continue;
          }
          Ws ws(bytes);
          if (ct_matmul(&md, &va, &vb, nullptr, &vo, ws.ptr(), bytes, nullptr) != CT_OK) {
            note_error();
            continue;
          }
          got = o.bytes();
        }
        if (results[id][s].empty()) results[id][s] = got;
        else if (results[id][s] != got) ++mismatches;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
  for (std::thread& th : threads) th.join();
  INFO("first error: " << first_error);
  REQUIRE(failures.load() == 0);
  CHECK(mismatches.load() == 0);

  // Every thread got the same bits as a single-threaded call now, and those
  // are right.
  for (int s = 0; s <= kShapes; ++s) {
    INFO("shape " << s);
    std::vector<unsigned char> single;
    if (s < kShapes) {
      HostTensor y = out_t(cfgs[s].ys);
      REQUIRE(run_conv(cfgs[s].d, xv[s], wv[s], &bv[s], y) == CT_OK);
      check_close(y, conv_ref(xv[s], wv[s], &bv[s], cfgs[s].d, cfgs[s].ys), 1e-4, 1e-4, "conv vs reference");
      single = y.bytes();
    } else {
      HostTensor o = out_t(mos);
      CTensor va = ma.view(), vb = mb.view(), vo = o.view();
      size_t bytes = 0;
      REQUIRE(ct_matmul_workspace_size(&md, &va, &vb, nullptr, &vo, &bytes) == CT_OK);
      Ws ws(bytes);
      REQUIRE(ct_matmul(&md, &va, &vb, nullptr, &vo, ws.ptr(), bytes, nullptr) == CT_OK);
      check_close(o, matmul_ref(ma, mb, nullptr, mos), 1e-4, 1e-4, "matmul vs reference");
      single = o.bytes();
    }
    for (int id = 0; id < kThreads; ++id) {
      INFO("thread " << id);
      CHECK(results[id][s] == single);
    }
  }
}

// ---------------------------------------------------------------------------
// 4. the plan cache
// ---------------------------------------------------------------------------

TEST_CASE("nn: plan cache counters: misses, hits, primitives", "[nn]") {
  CapacityGuard guard;
  REQUIRE(guard.old > 0);
  // Empty the cache (so the first call below is a miss whatever ran before).
  REQUIRE(ct_plan_cache_set_capacity(0) == CT_OK);
  CHECK(cache_info().entries == 0);
  REQUIRE(ct_plan_cache_set_capacity(guard.old) == CT_OK);
  CHECK(cache_info().capacity == guard.old);

  CTConv2dDesc d = conv_desc(0);
  HostTensor x = rnd({1, 5, 13, 11}, 801), x2 = rnd({1, 5, 13, 11}, 802), w = rnd({7, 5, 3, 3}, 803);
  HostTensor y = out_t({1, 7, 11, 9}), y2 = out_t({1, 7, 11, 9});
  CTensor vx = x.view(), vx2 = x2.view(), vw = w.view(), vy = y.view(), vy2 = y2.view();

  CTPlanCacheInfo i0 = cache_info();
  size_t bytes = 0;
  REQUIRE(ct_conv2d_workspace_size(&d, &vx, &vw, nullptr, &vy, &bytes) == CT_OK);
  Ws ws(bytes);
  REQUIRE(ct_conv2d(&d, &vx, &vw, nullptr, &vy, ws.ptr(), bytes, nullptr) == CT_OK);
  CTPlanCacheInfo i1 = cache_info();
  CHECK(i1.misses - i0.misses >= 1);
  CHECK(i1.primitives_created - i0.primitives_created >= 1);
  CHECK(i1.entries >= 1);
  const std::vector<double> ref1 = conv_ref(x, w, nullptr, d, {1, 7, 11, 9});
  const std::vector<double> ref2 = conv_ref(x2, w, nullptr, d, {1, 7, 11, 9});
  check_close(y, ref1, 1e-5, 1e-5, "first call");

  // Ten identical calls (alternating data buffers): ten hits, nothing created.
  for (int i = 0; i < 10; ++i) {
    CTensor* out = i % 2 ? &vy2 : &vy;
    const CTensor* in = i % 2 ? &vx2 : &vx;
    REQUIRE(ct_conv2d(&d, in, &vw, nullptr, out, ws.ptr(), bytes, nullptr) == CT_OK);
  }
  CTPlanCacheInfo i2 = cache_info();
  CHECK(i2.hits - i1.hits == 10);
  CHECK(i2.misses - i1.misses == 0);
  CHECK(i2.primitives_created - i1.primitives_created == 0);
  CHECK(i2.entries == i1.entries);
  check_close(y, ref1, 1e-5, 1e-5, "repeated call, buffer 1");
  check_close(y2, ref2, 1e-5, 1e-5, "repeated call, buffer 2");

  // Another stride, another padding, another shape, a bias: each a miss.
  struct Variant {
    const char* what;
    CTConv2dDesc d;
    std::vector<int64_t> xs, ys;
    bool bias;
  };
  CTConv2dDesc ds = conv_desc(0, 2), dp = conv_desc(1);
  Variant variants[] = {{"stride 2", ds, {1, 5, 13, 11}, {1, 7, 6, 5}, false},
                        {"pad 1", dp, {1, 5, 13, 11}, {1, 7, 13, 11}, false},
                        {"H 12", d, {1, 5, 12, 11}, {1, 7, 10, 9}, false},
                        {"with bias", d, {1, 5, 13, 11}, {1, 7, 11, 9}, true}};
  HostTensor bias = rnd({7}, 804);
  for (Variant& v : variants) {
    INFO(v.what);
    HostTensor xv = rnd(v.xs, 805), yv = out_t(v.ys);
    CTPlanCacheInfo a = cache_info();
    REQUIRE(run_conv(v.d, xv, w, v.bias ? &bias : nullptr, yv) == CT_OK);
    CTPlanCacheInfo b = cache_info();
    CHECK(b.misses - a.misses >= 1);
    CHECK(b.primitives_created - a.primitives_created >= 1);
    check_close(yv, conv_ref(xv, w, v.bias ? &bias : nullptr, v.d, v.ys), 1e-5, 1e-5, "variant");
    // And once more: now a hit.
    CTensor vxv = xv.view(), vyv = yv.view(), vb = bias.view();
    size_t nb = 0;
    REQUIRE(ct_conv2d_workspace_size(&v.d, &vxv, &vw, v.bias ? &vb : nullptr, &vyv, &nb) == CT_OK);
    Ws wv(nb);
    CTPlanCacheInfo c = cache_info();
    REQUIRE(ct_conv2d(&v.d, &vxv, &vw, v.bias ? &vb : nullptr, &vyv, wv.ptr(), nb, nullptr) == CT_OK);
    CTPlanCacheInfo e = cache_info();
    CHECK(e.hits - c.hits == 1);
    CHECK(e.misses - c.misses == 0);
    CHECK(e.primitives_created - c.primitives_created == 0);
  }

  SECTION("info and set_capacity arguments") {
    expect_fail(ct_plan_cache_info(nullptr), CT_ERR_INVALID_ARGUMENT, "ct_plan_cache_info", {"info"});
    CTPlanCacheInfo z;
    std::memset(&z, 0, sizeof z);
    expect_fail(ct_plan_cache_info(&z), CT_ERR_INVALID_ARGUMENT, "ct_plan_cache_info", {"info|struct_size"});
    expect_fail(ct_plan_cache_set_capacity(-1), CT_ERR_INVALID_ARGUMENT, "ct_plan_cache_set_capacity",
                {"capacity"}, {"-1"});
    CHECK(cache_info().capacity == guard.old);
  }
}

TEST_CASE("nn: plan cache capacity 0 and a small capacity", "[nn]") {
  CapacityGuard guard;
  // Four configurations no other test uses.
  struct Cfg {
    CTConv2dDesc d;
    std::vector<int64_t> xs, ys;
  };
  std::vector<Cfg> cfgs = {{conv_desc(0), {1, 3, 9, 8}, {1, 2, 7, 6}},
                           {conv_desc(1), {1, 3, 9, 8}, {1, 2, 9, 8}},
                           {conv_desc(0, 2), {1, 3, 9, 8}, {1, 2, 4, 3}},
                           {conv_desc(0), {2, 3, 9, 8}, {2, 2, 7, 6}}};
  HostTensor w = rnd({2, 3, 3, 3}, 901);
  std::vector<HostTensor> xs;
  std::vector<std::vector<double>> refs;
  std::vector<size_t> bytes(cfgs.size());
  for (size_t i = 0; i < cfgs.size(); ++i) {
    xs.push_back(rnd(cfgs[i].xs, 902 + i));
    refs.push_back(conv_ref(xs[i], w, nullptr, cfgs[i].d, cfgs[i].ys));
  }
  // Workspace sizes first (the query may or may not touch the cache).
  for (size_t i = 0; i < cfgs.size(); ++i) {
    HostTensor y = out_t(cfgs[i].ys);
    CTensor vx = xs[i].view(), vw = w.view(), vy = y.view();
    REQUIRE(ct_conv2d_workspace_size(&cfgs[i].d, &vx, &vw, nullptr, &vy, &bytes[i]) == CT_OK);
  }
  auto call = [&](size_t i) {
    HostTensor y = out_t(cfgs[i].ys);
    CTensor vx = xs[i].view(), vw = w.view(), vy = y.view();
    Ws ws(bytes[i]);
    REQUIRE(ct_conv2d(&cfgs[i].d, &vx, &vw, nullptr, &vy, ws.ptr(), bytes[i], nullptr) == CT_OK);
    check_close(y, refs[i], 1e-5, 1e-5, "conv result");
  };

  SECTION("capacity 0: nothing kept, every call creates its plan, results right") {
    REQUIRE(ct_plan_cache_set_capacity(0) == CT_OK);
    CTPlanCacheInfo a = cache_info();
    CHECK(a.capacity == 0);
    CHECK(a.entries == 0);
    for (int r = 0; r < 3; ++r) call(0);
    call(1);
    CTPlanCacheInfo b = cache_info();
    CHECK(b.entries == 0);
    CHECK(b.hits - a.hits == 0);
    CHECK(b.misses - a.misses == 4);
    CHECK(b.primitives_created - a.primitives_created >= 4);
  }
  SECTION("capacity 2: least recently used go first") {
    REQUIRE(ct_plan_cache_set_capacity(2) == CT_OK);
    CHECK(cache_info().capacity == 2);
    CHECK(cache_info().entries <= 2);
    for (size_t i = 0; i < cfgs.size(); ++i) {
      call(i);
      CHECK(cache_info().entries <= 2);
    }
    // Now the cache holds configurations 2 and 3: 0 is a miss, then 3 a hit.
    CTPlanCacheInfo a = cache_info();
    call(0);
    CTPlanCacheInfo b = cache_info();
    CHECK(b.misses - a.misses == 1);
    CHECK(b.hits - a.hits == 0);
    CHECK(b.entries <= 2);
    call(3);
    CTPlanCacheInfo c = cache_info();
    CHECK(c.hits - b.hits == 1);
    CHECK(c.misses - b.misses == 0);
    CHECK(c.primitives_created - b.primitives_created == 0);
    // Raising the capacity keeps what is there.
    REQUIRE(ct_plan_cache_set_capacity(guard.old) == CT_OK);
    CHECK(cache_info().entries == c.entries);
  }
}

// ---------------------------------------------------------------------------
// 5. validation of every op family
// ---------------------------------------------------------------------------

TEST_CASE("nn: workspace too small names the size needed, outputs untouched", "[nn]") {
  // conv2d on NCHW with 16 -> 32 channels reorders into the backend's blocked
  // layout, so it needs scratch; matmul and layer_norm are checked when they do.
  CTConv2dDesc d = conv_desc(1);
  HostTensor x = rnd({2, 16, 14, 14}, 1001), w = rnd({32, 16, 3, 3}, 1002), y = out_t({2, 32, 14, 14});
  CTensor vx = x.view(), vw = w.view(), vy = y.view();
  size_t bytes = 0;
  REQUIRE(ct_conv2d_workspace_size(&d, &vx, &vw, nullptr, &vy, &bytes) == CT_OK);
  const std::vector<unsigned char> sentinel = y.bytes();
  int checked = 0;
  if (bytes > 0) {
    ++checked;
    Ws ws(bytes);
    expect_fail(ct_conv2d(&d, &vx, &vw, nullptr, &vy, ws.ptr(), bytes - 1, nullptr), CT_ERR_WORKSPACE_TOO_SMALL,
                "ct_conv2d", {"workspace_bytes|workspace"}, {std::to_string(bytes), std::to_string(bytes - 1)});
    CHECK(y.bytes() == sentinel);
    expect_fail(ct_conv2d(&d, &vx, &vw, nullptr, &vy, nullptr, 0, nullptr), CT_ERR_WORKSPACE_TOO_SMALL, "ct_conv2d",
                {"workspace_bytes|workspace"}, {std::to_string(bytes)});
    CHECK(y.bytes() == sentinel);
    // NULL workspace claiming the size: refused too (no write through NULL).
    expect_fail(ct_conv2d(&d, &vx, &vw, nullptr, &vy, nullptr, bytes, nullptr),
                {CT_ERR_WORKSPACE_TOO_SMALL, CT_ERR_INVALID_ARGUMENT}, "ct_conv2d", {"workspace"});
    CHECK(y.bytes() == sentinel);
    // And with the full size it runs.
    REQUIRE(ct_conv2d(&d, &vx, &vw, nullptr, &vy, ws.ptr(), bytes, nullptr) == CT_OK);
    check_close(y, conv_ref(x, w, nullptr, d, {2, 32, 14, 14}), 1e-4, 1e-4, "full workspace");
  }
  {
    CTMatmulDesc md = {sizeof(CTMatmulDesc), CT_ACTIVATION_NONE};
    HostTensor a = rnd({3, 33, 47}, 1003), b = HostTensor::strided(DT_F32, {47, 29}, {1, 47}), o = out_t({3, 33, 29});
    CTensor va = a.view(), vb = b.view(), vo = o.view();
    size_t mb = 0;
    REQUIRE(ct_matmul_workspace_size(&md, &va, &vb, nullptr, &vo, &mb) == CT_OK);
    if (mb > 0) {
      ++checked;
      Ws ws(mb);
      const std::vector<unsigned char> s = o.bytes();
      expect_fail(ct_matmul(&md, &va, &vb, nullptr, &vo, ws.ptr(), mb - 1, nullptr), CT_ERR_WORKSPACE_TOO_SMALL,
                  "ct_matmul", {}, {std::to_string(mb)});
      CHECK(o.bytes() == s);
    }
  }
  {
    CTLayerNormDesc ld;
    std::memset(&ld, 0, sizeof ld);
    ld.struct_size = sizeof ld;
    ld.normalized_ndim = 2;
    ld.epsilon = 1e-5;
    HostTensor lx = rnd({6, 4, 16}, 1004), ly = out_t({6, 4, 16});
    CTensor vlx = lx.view(), vly = ly.view();
    size_t lb = 0;
    REQUIRE(ct_layer_norm_workspace_size(&ld, &vlx, nullptr, nullptr, &vly, nullptr, nullptr, &lb) == CT_OK);
    if (lb > 0) {
      ++checked;
      Ws ws(lb);
      const std::vector<unsigned char> s = ly.bytes();
      expect_fail(ct_layer_norm(&ld, &vlx, nullptr, nullptr, &vly, nullptr, nullptr, ws.ptr(), lb - 1, nullptr),
                  CT_ERR_WORKSPACE_TOO_SMALL, "ct_layer_norm", {}, {std::to_string(lb)});
      CHECK(ly.bytes() == s);
    }
  }
  // At least the NCHW conv2d needs scratch on oneDNN.
  CHECK(checked >= 1);
}

namespace {

// The conv2d fixture of the error tests: x (2, 4, 6, 6), w (6, 4, 3, 3),
// bias (6,), y (2, 6, 6, 6), pad 1.
struct ConvFx {
  CTConv2dDesc d = conv_desc(1);
  HostTensor x = rnd({2, 4, 6, 6}, 1101), w = rnd({6, 4, 3, 3}, 1102), b = rnd({6}, 1103),
             y = out_t({2, 6, 6, 6});
  CTensor vx, vw, vb, vy;
  std::vector<unsigned char> sentinel;
  Ws ws{1 << 22};
  ConvFx() {
    vx = x.view();
    vw = w.view();
    vb = b.view();
    vy = y.view();
    sentinel = y.bytes();
  }
  bool untouched() const { return y.bytes() == sentinel; }
  // Run both entry points on (desc, x, w, bias, y): the same failure from the
  // query and the run, with bytes and y untouched.
  void fail_both(const CTConv2dDesc* desc, const CTensor* px, const CTensor* pw, const CTensor* pb, CTensor* py,
                 std::vector<CTStatus> want, std::vector<std::string> args, std::vector<std::string> subs = {}) {
    size_t bytes = 31337;
    {
      INFO("ct_conv2d_workspace_size");
      expect_fail(ct_conv2d_workspace_size(desc, px, pw, pb, py, &bytes), want, "ct_conv2d_workspace_size", args,
                  subs);
      CHECK(bytes == 31337);
    }
    {
      INFO("ct_conv2d");
      expect_fail(ct_conv2d(desc, px, pw, pb, py, ws.ptr(), ws.bytes, nullptr), want, "ct_conv2d", args, subs);
      CHECK(untouched());
    }
  }
};

}  // namespace

TEST_CASE("nn: conv2d validation", "[nn]") {
  ConvFx f;
  SECTION("the fixture itself runs; NULL bias is fine") {
    REQUIRE(ct_conv2d(&f.d, &f.vx, &f.vw, &f.vb, &f.vy, f.ws.ptr(), f.ws.bytes, nullptr) == CT_OK);
    check_close(f.y, conv_ref(f.x, f.w, &f.b, f.d, {2, 6, 6, 6}), 1e-5, 1e-5, "with bias");
    REQUIRE(ct_conv2d(&f.d, &f.vx, &f.vw, nullptr, &f.vy, f.ws.ptr(), f.ws.bytes, nullptr) == CT_OK);
    check_close(f.y, conv_ref(f.x, f.w, nullptr, f.d, {2, 6, 6, 6}), 1e-5, 1e-5, "without bias");
  }
  SECTION("negative padding and stride, bad groups, dilation") {
    CTConv2dDesc d = f.d;
    d.pad_begin[0] = -1;
    f.fail_both(&d, &f.vx, &f.vw, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT}, {"pad_begin|pad_begin[0]"}, {"-1"});
    d = f.d;
    d.pad_end[1] = -3;
    f.fail_both(&d, &f.vx, &f.vw, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT}, {"pad_end|pad_end[1]"}, {"-3"});
    d = f.d;
    d.stride[1] = -2;
    f.fail_both(&d, &f.vx, &f.vw, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT}, {"stride|stride[1]"}, {"-2"});
    d = f.d;
    d.dilation[0] = -1;
    f.fail_both(&d, &f.vx, &f.vw, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT}, {"dilation|dilation[0]"}, {"-1"});
    d = f.d;
    d.groups = -2;
    f.fail_both(&d, &f.vx, &f.vw, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT}, {"groups"}, {"-2"});
    // groups = 3 does not divide C = 4 (w (6, 1, 3, 3) would be C/groups = 1).
    HostTensor w3 = rnd({6, 1, 3, 3}, 1104);
    CTensor vw3 = w3.view();
    d = f.d;
    d.groups = 3;
    f.fail_both(&d, &f.vx, &vw3, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH}, {"groups"}, {"3"});
    // groups = 4 divides C = 4 but not K = 6.
    d.groups = 4;
    f.fail_both(&d, &f.vx, &vw3, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH}, {"groups"}, {"4"});
  }
  SECTION("w's C/groups, w's ndim, x's ndim") {
    HostTensor w2 = rnd({6, 3, 3, 3}, 1105);
    CTensor v = w2.view();
    f.fail_both(&f.d, &f.vx, &v, &f.vb, &f.vy, {CT_ERR_SHAPE_MISMATCH}, {"w"}, {"[6,3,3,3]"});
    CTConv2dDesc d = f.d;
    d.groups = 2;  // C/groups = 2, but w has 4
    f.fail_both(&d, &f.vx, &f.vw, &f.vb, &f.vy, {CT_ERR_SHAPE_MISMATCH}, {"w"});
    HostTensor w3 = rnd({6, 4, 9}, 1106);
    CTensor v3 = w3.view();
    f.fail_both(&f.d, &f.vx, &v3, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH}, {"w"});
    HostTensor x3 = rnd({2, 4, 36}, 1107);
    CTensor vx3 = x3.view();
    f.fail_both(&f.d, &vx3, &f.vw, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH}, {"x"});
  }
  SECTION("y of the wrong shape: the message gives the expected one") {
    for (std::vector<int64_t> s : {std::vector<int64_t>{2, 6, 5, 5}, {2, 5, 6, 6}, {1, 6, 6, 6}, {2, 6, 6, 7}}) {
      HostTensor y2 = out_t(s);
      CTensor v = y2.view();
      INFO("y " << shape_str(s));
      size_t bytes = 31337;
      expect_fail(ct_conv2d_workspace_size(&f.d, &f.vx, &f.vw, &f.vb, &v, &bytes), CT_ERR_SHAPE_MISMATCH,
                  "ct_conv2d_workspace_size", {"y"}, {"[2,6,6,6]", shape_str(s)});
      CHECK(bytes == 31337);
      expect_fail(ct_conv2d(&f.d, &f.vx, &f.vw, &f.vb, &v, f.ws.ptr(), f.ws.bytes, nullptr), CT_ERR_SHAPE_MISMATCH,
                  "ct_conv2d", {"y"}, {"[2,6,6,6]", shape_str(s)});
      CHECK(y2.bytes() == out_t(s).bytes());
    }
  }
  SECTION("bias of the wrong length or rank") {
    HostTensor b5 = rnd({5}, 1108), b2d = rnd({1, 6}, 1109);
    CTensor v5 = b5.view(), v2d = b2d.view();
    f.fail_both(&f.d, &f.vx, &f.vw, &v5, &f.vy, {CT_ERR_SHAPE_MISMATCH}, {"bias"}, {"5"});
    f.fail_both(&f.d, &f.vx, &f.vw, &v2d, &f.vy, {CT_ERR_SHAPE_MISMATCH, CT_ERR_INVALID_ARGUMENT}, {"bias"});
  }
  SECTION("dtypes: x and w differ; y differs; float64 unsupported") {
    HostTensor wh = rnd({6, 4, 3, 3}, 1110, DT_F16);
    CTensor v = wh.view();
    f.fail_both(&f.d, &f.vx, &v, &f.vb, &f.vy, {CT_ERR_DTYPE_MISMATCH, CT_ERR_UNSUPPORTED}, {"w"},
                {"float16", "float32"});
    HostTensor yh = out_t({2, 6, 6, 6}, DT_BF16);
    CTensor vyh = yh.view();
    size_t bytes = 31337;
    expect_fail(ct_conv2d(&f.d, &f.vx, &f.vw, &f.vb, &vyh, f.ws.ptr(), f.ws.bytes, nullptr),
                {CT_ERR_DTYPE_MISMATCH, CT_ERR_UNSUPPORTED}, "ct_conv2d", {"y"}, {"bfloat16"});
    CHECK(yh.bytes() == out_t({2, 6, 6, 6}, DT_BF16).bytes());
    HostTensor x64 = rnd({2, 4, 6, 6}, 1111, DT_F64), w64 = rnd({6, 4, 3, 3}, 1112, DT_F64),
               y64 = out_t({2, 6, 6, 6}, DT_F64);
    CTensor vx64 = x64.view(), vw64 = w64.view(), vy64 = y64.view();
    expect_fail(ct_conv2d_workspace_size(&f.d, &vx64, &vw64, nullptr, &vy64, &bytes), CT_ERR_UNSUPPORTED,
                "ct_conv2d_workspace_size", {}, {"float64"});
    CHECK(bytes == 31337);
    expect_fail(ct_conv2d(&f.d, &vx64, &vw64, nullptr, &vy64, f.ws.ptr(), f.ws.bytes, nullptr), CT_ERR_UNSUPPORTED,
                "ct_conv2d", {}, {"float64"});
    CHECK(y64.bytes() == out_t({2, 6, 6, 6}, DT_F64).bytes());
  }
  SECTION("descriptor: struct_size 0, NULL, reserved and activation values") {
    CTConv2dDesc d = f.d;
    d.struct_size = 0;
    f.fail_both(&d, &f.vx, &f.vw, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT}, {"desc|struct_size"});
    f.fail_both(nullptr, &f.vx, &f.vw, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT}, {"desc"});
    d = f.d;
    d.activation = 99;
    f.fail_both(&d, &f.vx, &f.vw, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT}, {"activation"}, {"99"});
  }
  SECTION("NULL required tensors") {
    f.fail_both(&f.d, nullptr, &f.vw, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT}, {"x"});
    f.fail_both(&f.d, &f.vx, nullptr, &f.vb, &f.vy, {CT_ERR_INVALID_ARGUMENT}, {"w"});
    size_t bytes = 31337;
    expect_fail(ct_conv2d_workspace_size(&f.d, &f.vx, &f.vw, &f.vb, nullptr, &bytes), CT_ERR_INVALID_ARGUMENT,
                "ct_conv2d_workspace_size", {"y"});
    CHECK(bytes == 31337);
    expect_fail(ct_conv2d(&f.d, &f.vx, &f.vw, &f.vb, nullptr, f.ws.ptr(), f.ws.bytes, nullptr),
                CT_ERR_INVALID_ARGUMENT, "ct_conv2d", {"y"});
    expect_fail(ct_conv2d_workspace_size(&f.d, &f.vx, &f.vw, &f.vb, &f.vy, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_conv2d_workspace_size", {"bytes"});
  }
  SECTION("y overlapping x (exactly and partly) or w") {
    // x (2, 4, 6, 6) and y (2, 6, 6, 6) inside one buffer.
    HostTensor big = rnd({800}, 1113);
    const std::vector<unsigned char> before = big.bytes();
    CTensor bx = f.vx, by = f.vy;
    bx.data = big.buf();
    by.data = big.buf();
    for (uint64_t off : {0u, 16u, 1000u}) {
      INFO("y at byte " << off);
      by.byte_offset = off;
      // (The query does not read data pointers, so only the run can see it.)
      expect_fail(ct_conv2d(&f.d, &bx, &f.vw, &f.vb, &by, f.ws.ptr(), f.ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                  "ct_conv2d", {"y", "x"});
      CHECK(big.bytes() == before);
    }
    // y over w.
    HostTensor bigw = rnd({2 * 6 * 36 + 64}, 1114);
    const std::vector<unsigned char> beforew = bigw.bytes();
    CTensor bw = f.vw, byw = f.vy;
    bw.data = bigw.buf();
    byw.data = bigw.buf();
    byw.byte_offset = 8;
    expect_fail(ct_conv2d(&f.d, &f.vx, &bw, &f.vb, &byw, f.ws.ptr(), f.ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_conv2d", {"y", "w"});
    CHECK(bigw.bytes() == beforew);
  }
  SECTION("tensors on a device that does not exist, or another device") {
    CTensor v = f.vx;
    v.device.device_id = 5;
    f.fail_both(&f.d, &v, &f.vw, &f.vb, &f.vy,
                {CT_ERR_NOT_FOUND, CT_ERR_DEVICE_MISMATCH, CT_ERR_INVALID_ARGUMENT, CT_ERR_UNSUPPORTED}, {"x"});
    CTensor vy5 = f.vy;
    vy5.device.device_id = 5;
    f.fail_both(&f.d, &f.vx, &f.vw, &f.vb, &vy5,
                {CT_ERR_NOT_FOUND, CT_ERR_DEVICE_MISMATCH, CT_ERR_INVALID_ARGUMENT, CT_ERR_UNSUPPORTED}, {"y"});
    CTensor vall[3] = {f.vx, f.vw, f.vy};
    for (CTensor& t : vall) t.device.device_id = 5;
    f.fail_both(&f.d, &vall[0], &vall[1], nullptr, &vall[2],
                {CT_ERR_NOT_FOUND, CT_ERR_DEVICE_MISMATCH, CT_ERR_INVALID_ARGUMENT, CT_ERR_UNSUPPORTED}, {});
  }
}

TEST_CASE("nn: conv2d backward ops: activation must be NONE, shapes checked", "[nn]") {
  CTConv2dDesc d = conv_desc(1);
  HostTensor dy = rnd({2, 6, 6, 6}, 1201), w = rnd({6, 4, 3, 3}, 1202), dx = out_t({2, 4, 6, 6});
  CTensor vdy = dy.view(), vw = w.view(), vdx = dx.view();
  const std::vector<unsigned char> sentinel = dx.bytes();
  Ws ws(1 << 22);
  size_t bytes = 31337;
  for (int32_t act : {(int32_t)CT_ACTIVATION_RELU, (int32_t)CT_ACTIVATION_GELU}) {
    INFO("activation " << act);
    CTConv2dDesc da = d;
    da.activation = act;
    expect_fail(ct_conv2d_backward_data_workspace_size(&da, &vdy, &vw, &vdx, &bytes), CT_ERR_INVALID_ARGUMENT,
                "ct_conv2d_backward_data_workspace_size", {"activation"}, {std::to_string(act)});
    CHECK(bytes == 31337);
    expect_fail(ct_conv2d_backward_data(&da, &vdy, &vw, &vdx, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_conv2d_backward_data", {"activation"}, {std::to_string(act)});
    CHECK(dx.bytes() == sentinel);
    HostTensor x = rnd({2, 4, 6, 6}, 1203), dw = out_t({6, 4, 3, 3});
    CTensor vx = x.view(), vdw = dw.view();
    expect_fail(ct_conv2d_backward_weight(&da, &vx, &vdy, &vdw, nullptr, ws.ptr(), ws.bytes, nullptr),
                CT_ERR_INVALID_ARGUMENT, "ct_conv2d_backward_weight", {"activation"});
    CHECK(dw.bytes() == out_t({6, 4, 3, 3}).bytes());
  }
  // dy of a shape that does not follow from dx's H, W.
  HostTensor dy2 = rnd({2, 6, 5, 6}, 1204);
  CTensor vdy2 = dy2.view();
  expect_fail(ct_conv2d_backward_data(&d, &vdy2, &vw, &vdx, ws.ptr(), ws.bytes, nullptr), CT_ERR_SHAPE_MISMATCH,
              "ct_conv2d_backward_data", {"dy"}, {"[2,6,6,6]"});
  CHECK(dx.bytes() == sentinel);
  // The fixture runs.
  REQUIRE(ct_conv2d_backward_data_workspace_size(&d, &vdy, &vw, &vdx, &bytes) == CT_OK);
  REQUIRE(bytes <= ws.bytes);
  REQUIRE(ct_conv2d_backward_data(&d, &vdy, &vw, &vdx, ws.ptr(), ws.bytes, nullptr) == CT_OK);
  CHECK(dx.bytes() != sentinel);
}

TEST_CASE("nn: pooling validation", "[nn]") {
  CTPool2dDesc d = pool_desc(2, 2, 0);
  HostTensor x = rnd({2, 3, 8, 8}, 1301), y = out_t({2, 3, 4, 4}), ind = out_t({2, 3, 4, 4}, DT_I64);
  CTensor vx = x.view(), vy = y.view(), vi = ind.view();
  const std::vector<unsigned char> sy = y.bytes(), si = ind.bytes();
  auto untouched = [&] { return y.bytes() == sy && ind.bytes() == si; };
  Ws ws(1 << 20);
  auto fail_max = [&](const CTPool2dDesc* dd, const CTensor* px, CTensor* py, CTensor* pi, std::vector<CTStatus> want,
                      std::vector<std::string> args, std::vector<std::string> subs = {}) {
    size_t bytes = 31337;
    expect_fail(ct_max_pool2d_workspace_size(dd, px, py, pi, &bytes), want, "ct_max_pool2d_workspace_size", args,
                subs);
    CHECK(bytes == 31337);
    expect_fail(ct_max_pool2d(dd, px, py, pi, ws.ptr(), ws.bytes, nullptr), want, "ct_max_pool2d", args, subs);
    CHECK(untouched());
  };
  SECTION("the fixture runs") {
    REQUIRE(ct_max_pool2d(&d, &vx, &vy, &vi, ws.ptr(), ws.bytes, nullptr) == CT_OK);
    std::vector<double> ry, ri;
    maxpool_ref(x, d, {2, 3, 4, 4}, ry, ri);
    check_close(y, ry, 0, 0, "y");
    check_close(ind, ri, 0, 0, "indices");
  }
  SECTION("kernel 0 or negative") {
    CTPool2dDesc dd = d;
    dd.kernel[0] = 0;
    fail_max(&dd, &vx, &vy, &vi, {CT_ERR_INVALID_ARGUMENT}, {"kernel|kernel[0]"}, {"0"});
    dd = d;
    dd.kernel[1] = -2;
    fail_max(&dd, &vx, &vy, &vi, {CT_ERR_INVALID_ARGUMENT}, {"kernel|kernel[1]"}, {"-2"});
    // avg_pool2d too.
    size_t bytes = 31337;
    dd = d;
    dd.kernel[0] = 0;
    expect_fail(ct_avg_pool2d_workspace_size(&dd, &vx, &vy, &bytes), CT_ERR_INVALID_ARGUMENT,
                "ct_avg_pool2d_workspace_size", {"kernel|kernel[0]"});
    expect_fail(ct_avg_pool2d(&dd, &vx, &vy, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_avg_pool2d",
                {"kernel|kernel[0]"});
    CHECK(untouched());
  }
  SECTION("negative padding, stride, dilation") {
    CTPool2dDesc dd = d;
    dd.pad_begin[1] = -1;
    fail_max(&dd, &vx, &vy, &vi, {CT_ERR_INVALID_ARGUMENT}, {"pad_begin|pad_begin[1]"}, {"-1"});
    dd = d;
    dd.pad_end[0] = -1;
    fail_max(&dd, &vx, &vy, &vi, {CT_ERR_INVALID_ARGUMENT}, {"pad_end|pad_end[0]"}, {"-1"});
    dd = d;
    dd.stride[0] = -1;
    fail_max(&dd, &vx, &vy, &vi, {CT_ERR_INVALID_ARGUMENT}, {"stride|stride[0]"}, {"-1"});
    dd = d;
    dd.dilation[1] = -1;
    fail_max(&dd, &vx, &vy, &vi, {CT_ERR_INVALID_ARGUMENT}, {"dilation|dilation[1]"}, {"-1"});
  }
  SECTION("y of the wrong shape; indices of another shape") {
    HostTensor y2 = out_t({2, 3, 3, 4});
    CTensor v = y2.view();
    size_t bytes = 31337;
    expect_fail(ct_max_pool2d_workspace_size(&d, &vx, &v, &vi, &bytes), CT_ERR_SHAPE_MISMATCH,
                "ct_max_pool2d_workspace_size", {"y"}, {"[2,3,4,4]"});
    expect_fail(ct_max_pool2d(&d, &vx, &v, nullptr, ws.ptr(), ws.bytes, nullptr), CT_ERR_SHAPE_MISMATCH,
                "ct_max_pool2d", {"y"}, {"[2,3,4,4]"});
    CHECK(y2.bytes() == out_t({2, 3, 3, 4}).bytes());
    expect_fail(ct_avg_pool2d(&d, &vx, &v, ws.ptr(), ws.bytes, nullptr), CT_ERR_SHAPE_MISMATCH, "ct_avg_pool2d",
                {"y"}, {"[2,3,4,4]"});
    CHECK(y2.bytes() == out_t({2, 3, 3, 4}).bytes());
    HostTensor i2 = out_t({2, 3, 4, 3}, DT_I64);
    CTensor vi2 = i2.view();
    fail_max(&d, &vx, &vy, &vi2, {CT_ERR_SHAPE_MISMATCH}, {"indices"});
    CHECK(i2.bytes() == out_t({2, 3, 4, 3}, DT_I64).bytes());
  }
  SECTION("indices float32 or int32 instead of int64") {
    for (int dt : {DT_F32, DT_I32}) {
      HostTensor i2 = out_t({2, 3, 4, 4}, dt);
      CTensor vi2 = i2.view();
      INFO("indices " << dtype(dt).name);
      fail_max(&d, &vx, &vy, &vi2, {CT_ERR_DTYPE_MISMATCH, CT_ERR_INVALID_ARGUMENT}, {"indices"},
               {dtype(dt).name, "int64"});
      CHECK(i2.bytes() == out_t({2, 3, 4, 4}, dt).bytes());
    }
  }
  SECTION("x of 3 dims; NULL x or y") {
    HostTensor x3 = rnd({2, 3, 64}, 1302);
    CTensor v = x3.view();
    fail_max(&d, &v, &vy, &vi, {CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH}, {"x"});
    fail_max(&d, nullptr, &vy, &vi, {CT_ERR_INVALID_ARGUMENT}, {"x"});
    size_t bytes = 31337;
    expect_fail(ct_max_pool2d_workspace_size(&d, &vx, nullptr, &vi, &bytes), CT_ERR_INVALID_ARGUMENT,
                "ct_max_pool2d_workspace_size", {"y"});
    expect_fail(ct_max_pool2d(&d, &vx, nullptr, &vi, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_max_pool2d", {"y"});
    CHECK(untouched());
  }
  SECTION("max_pool2d_backward: indices required and int64") {
    HostTensor dy = rnd({2, 3, 4, 4}, 1303), dx = out_t({2, 3, 8, 8});
    CTensor vdy = dy.view(), vdx = dx.view();
    expect_fail(ct_max_pool2d_backward(&d, &vdy, nullptr, &vdx, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_max_pool2d_backward", {"indices"});
    HostTensor fi = out_t({2, 3, 4, 4}, DT_F32);
    CTensor vfi = fi.view();
    expect_fail(ct_max_pool2d_backward(&d, &vdy, &vfi, &vdx, ws.ptr(), ws.bytes, nullptr),
                {CT_ERR_DTYPE_MISMATCH, CT_ERR_INVALID_ARGUMENT}, "ct_max_pool2d_backward", {"indices"});
    CHECK(dx.bytes() == out_t({2, 3, 8, 8}).bytes());
  }
}

TEST_CASE("nn: batch_norm validation", "[nn]") {
  CTBatchNormDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.epsilon = 1e-5;
  HostTensor x = rnd({2, 3, 4, 5}, 1401), mean = rnd({3}, 1402), var = rnd({3}, 1403, DT_F32, 0.5, 2),
             scale = rnd({3}, 1404), shift = rnd({3}, 1405), y = out_t({2, 3, 4, 5});
  CTensor vx = x.view(), vm = mean.view(), vv = var.view(), vs = scale.view(), vsh = shift.view(), vy = y.view();
  const std::vector<unsigned char> sy = y.bytes();
  Ws ws(1 << 20);
  auto fail_bn = [&](const CTBatchNormDesc* dd, const CTensor* px, const CTensor* pm, const CTensor* pv,
                     const CTensor* ps, const CTensor* psh, CTensor* py, std::vector<CTStatus> want,
                     std::vector<std::string> args, std::vector<std::string> subs = {}) {
    size_t bytes = 31337;
    expect_fail(ct_batch_norm_workspace_size(dd, px, pm, pv, ps, psh, py, &bytes), want,
                "ct_batch_norm_workspace_size", args, subs);
    CHECK(bytes == 31337);
    expect_fail(ct_batch_norm(dd, px, pm, pv, ps, psh, py, ws.ptr(), ws.bytes, nullptr), want, "ct_batch_norm", args,
                subs);
    CHECK(y.bytes() == sy);
  };
  SECTION("the fixture runs, also without scale and shift") {
    REQUIRE(ct_batch_norm(&d, &vx, &vm, &vv, &vs, &vsh, &vy, ws.ptr(), ws.bytes, nullptr) == CT_OK);
    REQUIRE(ct_batch_norm(&d, &vx, &vm, &vv, nullptr, nullptr, &vy, ws.ptr(), ws.bytes, nullptr) == CT_OK);
    const std::vector<double> ref =
        reference(ref_call(CT_OP_BATCH_NORM, &d), {&x, &mean, &var, nullptr, nullptr}, {{DT_F64, x.shape}})[0].f;
    check_close(y, ref, 1e-5, 1e-5, "batch_norm without scale/shift");
  }
  SECTION("statistics of the wrong length") {
    HostTensor m4 = rnd({4}, 1406), v2 = rnd({2}, 1407, DT_F32, 0.5, 2), s4 = rnd({4}, 1408);
    CTensor vm4 = m4.view(), vv2 = v2.view(), vs4 = s4.view();
    fail_bn(&d, &vx, &vm4, &vv, &vs, &vsh, &vy, {CT_ERR_SHAPE_MISMATCH}, {"mean"}, {"4"});
    fail_bn(&d, &vx, &vm, &vv2, &vs, &vsh, &vy, {CT_ERR_SHAPE_MISMATCH}, {"var"}, {"2"});
    fail_bn(&d, &vx, &vm, &vv, &vs4, &vsh, &vy, {CT_ERR_SHAPE_MISMATCH}, {"scale"});
    fail_bn(&d, &vx, &vm, &vv, &vs, &vs4, &vy, {CT_ERR_SHAPE_MISMATCH}, {"shift"});
  }
  SECTION("statistics not float32") {
    HostTensor m64 = rnd({3}, 1409, DT_F64);
    CTensor vm64 = m64.view();
    fail_bn(&d, &vx, &vm64, &vv, &vs, &vsh, &vy, {CT_ERR_DTYPE_MISMATCH, CT_ERR_UNSUPPORTED}, {"mean"}, {"float64"});
  }
  SECTION("negative or NaN epsilon") {
    CTBatchNormDesc dd = d;
    dd.epsilon = -1e-3;
    fail_bn(&dd, &vx, &vm, &vv, &vs, &vsh, &vy, {CT_ERR_INVALID_ARGUMENT}, {"epsilon"}, {"-0.001"});
    dd.epsilon = NAN;
    fail_bn(&dd, &vx, &vm, &vv, &vs, &vsh, &vy, {CT_ERR_INVALID_ARGUMENT}, {"epsilon"});
  }
  SECTION("x with 1 dim or 6 dims; y of another shape") {
    HostTensor x1 = rnd({3}, 1410), y1 = out_t({3});
    CTensor vx1 = x1.view(), vy1 = y1.view();
    size_t bytes = 31337;
    expect_fail(ct_batch_norm(&d, &vx1, &vm, &vv, &vs, &vsh, &vy1, ws.ptr(), ws.bytes, nullptr),
                {CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH}, "ct_batch_norm", {"x"}, {"1"});
    expect_fail(ct_batch_norm_workspace_size(&d, &vx1, &vm, &vv, &vs, &vsh, &vy1, &bytes),
                {CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH}, "ct_batch_norm_workspace_size", {"x"});
    CHECK(bytes == 31337);
    CHECK(y1.bytes() == out_t({3}).bytes());
    HostTensor x6 = rnd({1, 3, 1, 2, 2, 2}, 1411), y6 = out_t({1, 3, 1, 2, 2, 2});
    CTensor vx6 = x6.view(), vy6 = y6.view();
    expect_fail(ct_batch_norm(&d, &vx6, &vm, &vv, &vs, &vsh, &vy6, ws.ptr(), ws.bytes, nullptr),
                {CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH, CT_ERR_UNSUPPORTED}, "ct_batch_norm", {"x"});
    CHECK(y6.bytes() == out_t({1, 3, 1, 2, 2, 2}).bytes());
    HostTensor y2 = out_t({2, 3, 4, 4});
    CTensor vy2 = y2.view();
    expect_fail(ct_batch_norm(&d, &vx, &vm, &vv, &vs, &vsh, &vy2, ws.ptr(), ws.bytes, nullptr),
                CT_ERR_SHAPE_MISMATCH, "ct_batch_norm", {"y"}, {"[2,3,4,5]"});
    CHECK(y2.bytes() == out_t({2, 3, 4, 4}).bytes());
  }
  SECTION("training: mean and invstd required; backward: shapes") {
    HostTensor m = out_t({3}), is = out_t({3});
    CTensor vmo = m.view(), vis = is.view();
    expect_fail(ct_batch_norm_training(&d, &vx, &vs, &vsh, &vy, nullptr, &vis, ws.ptr(), ws.bytes, nullptr),
                CT_ERR_INVALID_ARGUMENT, "ct_batch_norm_training", {"mean"});
    expect_fail(ct_batch_norm_training(&d, &vx, &vs, &vsh, &vy, &vmo, nullptr, ws.ptr(), ws.bytes, nullptr),
                CT_ERR_INVALID_ARGUMENT, "ct_batch_norm_training", {"invstd"});
    CHECK(y.bytes() == sy);
    CHECK(m.bytes() == out_t({3}).bytes());
    CHECK(is.bytes() == out_t({3}).bytes());
    HostTensor dy = rnd({2, 3, 4, 5}, 1412), dx = out_t({2, 3, 4, 5}), ds = out_t({2});
    CTensor vdy = dy.view(), vdx = dx.view(), vds = ds.view();
    expect_fail(ct_batch_norm_backward(&d, &vx, &vdy, &vm, &vv, &vs, &vdx, &vds, nullptr, ws.ptr(), ws.bytes, nullptr),
                CT_ERR_SHAPE_MISMATCH, "ct_batch_norm_backward", {"dscale"});
    CHECK(dx.bytes() == out_t({2, 3, 4, 5}).bytes());
    CHECK(ds.bytes() == out_t({2}).bytes());
  }
}

TEST_CASE("nn: layer_norm validation", "[nn]") {
  CTLayerNormDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.normalized_ndim = 1;
  d.epsilon = 1e-5;
  HostTensor x = rnd({4, 8}, 1501), g = rnd({8}, 1502), b = rnd({8}, 1503), y = out_t({4, 8}), m = out_t({4}),
             r = out_t({4});
  CTensor vx = x.view(), vg = g.view(), vb = b.view(), vy = y.view(), vm = m.view(), vr = r.view();
  Ws ws(1 << 20);
  const std::vector<unsigned char> sy = y.bytes(), sm = m.bytes();
  auto untouched = [&] { return y.bytes() == sy && m.bytes() == sm && r.bytes() == sm; };
  auto fail_ln = [&](const CTLayerNormDesc* dd, const CTensor* pg, const CTensor* pb, CTensor* pm,
                     std::vector<CTStatus> want, std::vector<std::string> args, std::vector<std::string> subs = {}) {
    size_t bytes = 31337;
    expect_fail(ct_layer_norm_workspace_size(dd, &vx, pg, pb, &vy, pm, &vr, &bytes), want,
                "ct_layer_norm_workspace_size", args, subs);
    CHECK(bytes == 31337);
    expect_fail(ct_layer_norm(dd, &vx, pg, pb, &vy, pm, &vr, ws.ptr(), ws.bytes, nullptr), want, "ct_layer_norm", args,
                subs);
    CHECK(untouched());
  };
  SECTION("the fixture runs; normalized_ndim 0 means 1") {
    CTLayerNormDesc d0 = d;
    d0.normalized_ndim = 0;
    REQUIRE(ct_layer_norm(&d0, &vx, &vg, &vb, &vy, &vm, &vr, ws.ptr(), ws.bytes, nullptr) == CT_OK);
    std::vector<double> ry, rm, rr;
    layernorm_ref(x, 8, &g, &b, 1e-5, ry, rm, rr);
    check_close(y, ry, 1e-4, 1e-5, "y");
    check_close(m, rm, 1e-5, 1e-6, "mean");
  }
  SECTION("normalized_ndim larger than x.ndim, or negative") {
    CTLayerNormDesc dd = d;
    dd.normalized_ndim = 3;
    fail_ln(&dd, nullptr, nullptr, nullptr, {CT_ERR_INVALID_ARGUMENT}, {"normalized_ndim"}, {"3"});
    dd.normalized_ndim = -1;
    fail_ln(&dd, nullptr, nullptr, nullptr, {CT_ERR_INVALID_ARGUMENT}, {"normalized_ndim"}, {"-1"});
  }
  SECTION("scale and shift of the wrong shape") {
    HostTensor g7 = rnd({7}, 1504), g48 = rnd({4, 8}, 1505);
    CTensor vg7 = g7.view(), vg48 = g48.view();
    fail_ln(&d, &vg7, &vb, &vm, {CT_ERR_SHAPE_MISMATCH}, {"scale"}, {"[7]", "[8]"});
    fail_ln(&d, &vg48, &vb, &vm, {CT_ERR_SHAPE_MISMATCH}, {"scale"});
    fail_ln(&d, &vg, &vg7, &vm, {CT_ERR_SHAPE_MISMATCH}, {"shift"});
  }
  SECTION("mean of the wrong size, negative epsilon") {
    HostTensor m5 = out_t({5});
    CTensor vm5 = m5.view();
    fail_ln(&d, &vg, &vb, &vm5, {CT_ERR_SHAPE_MISMATCH}, {"mean"});
    CHECK(m5.bytes() == out_t({5}).bytes());
    CTLayerNormDesc dd = d;
    dd.epsilon = -1;
    fail_ln(&dd, &vg, &vb, &vm, {CT_ERR_INVALID_ARGUMENT}, {"epsilon"}, {"-1"});
  }
}

TEST_CASE("nn: matmul validation", "[nn]") {
  CTMatmulDesc d = {sizeof(CTMatmulDesc), CT_ACTIVATION_NONE};
  Ws ws(1 << 20);
  auto fail_mm = [&](const CTensor* a, const CTensor* b, const CTensor* bias, HostTensor& out,
                     std::vector<CTStatus> want, std::vector<std::string> args, std::vector<std::string> subs = {}) {
    CTensor vo = out.view();
    const std::vector<unsigned char> s = out.bytes();
    size_t bytes = 31337;
    expect_fail(ct_matmul_workspace_size(&d, a, b, bias, &vo, &bytes), want, "ct_matmul_workspace_size", args, subs);
    CHECK(bytes == 31337);
    expect_fail(ct_matmul(&d, a, b, bias, &vo, ws.ptr(), ws.bytes, nullptr), want, "ct_matmul", args, subs);
    CHECK(out.bytes() == s);
  };
  SECTION("K mismatch") {
    HostTensor a = rnd({4, 5}, 1601), b = rnd({6, 3}, 1602), o = out_t({4, 3});
    CTensor va = a.view(), vb = b.view();
    fail_mm(&va, &vb, nullptr, o, {CT_ERR_SHAPE_MISMATCH}, {"a", "b"}, {"[4,5]", "[6,3]"});
  }
  SECTION("batch dims that do not broadcast") {
    HostTensor a = rnd({2, 4, 5}, 1603), b = rnd({3, 5, 3}, 1604), o = out_t({3, 4, 3});
    CTensor va = a.view(), vb = b.view();
    fail_mm(&va, &vb, nullptr, o, {CT_ERR_SHAPE_MISMATCH}, {"a", "b"}, {"[2,4,5]", "[3,5,3]"});
  }
  SECTION("out of the wrong shape: the message gives the expected one") {
    HostTensor a = rnd({2, 1, 4, 5}, 1605), b = rnd({3, 5, 6}, 1606);
    CTensor va = a.view(), vb = b.view();
    for (std::vector<int64_t> s : {std::vector<int64_t>{2, 3, 4, 5}, {3, 4, 6}, {2, 1, 4, 6}, {6, 4, 6}}) {
      INFO("out " << shape_str(s));
      HostTensor o = out_t(s);
      fail_mm(&va, &vb, nullptr, o, {CT_ERR_SHAPE_MISMATCH}, {"out"}, {"[2,3,4,6]"});
    }
    // The right one runs.
    HostTensor o = out_t({2, 3, 4, 6});
    CTensor vo = o.view();
    REQUIRE(ct_matmul(&d, &va, &vb, nullptr, &vo, ws.ptr(), ws.bytes, nullptr) == CT_OK);
    check_close(o, matmul_ref(a, b, nullptr, {2, 3, 4, 6}), 1e-5, 1e-5, "broadcast batch");
  }
  SECTION("1-d operands are rejected (a, b and out at least 2-d)") {
    HostTensor a1 = rnd({5}, 1607), b = rnd({5, 3}, 1608), o = out_t({3}), o2 = out_t({1, 3});
    CTensor va1 = a1.view(), vb = b.view();
    fail_mm(&va1, &vb, nullptr, o, {CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH}, {"a"});
    fail_mm(&va1, &vb, nullptr, o2, {CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH}, {"a"});
    HostTensor a = rnd({4, 5}, 1609), b1 = rnd({5}, 1610), o3 = out_t({4});
    CTensor va = a.view(), vb1 = b1.view();
    fail_mm(&va, &vb1, nullptr, o3, {CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH}, {"b"});
  }
  SECTION("bias that does not broadcast to out") {
    HostTensor a = rnd({4, 5}, 1611), b = rnd({5, 3}, 1612), bias = rnd({4}, 1613), o = out_t({4, 3});
    CTensor va = a.view(), vb = b.view(), vbias = bias.view();
    fail_mm(&va, &vb, &vbias, o, {CT_ERR_SHAPE_MISMATCH}, {"bias"}, {"[4]"});
  }
  SECTION("out overlapping a; bad activation; struct_size 0") {
    HostTensor a = rnd({4, 4}, 1614), b = rnd({4, 4}, 1615);
    CTensor va = a.view(), vb = b.view();
    CTensor vo = va;  // out exactly a
    const std::vector<unsigned char> sa = a.bytes();
    expect_fail(ct_matmul(&d, &va, &vb, nullptr, &vo, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_matmul", {"out", "a"});
    CHECK(a.bytes() == sa);
    HostTensor o = out_t({4, 4});
    CTMatmulDesc dd = d;
    dd.activation = -1;
    CTensor vo2 = o.view();
    expect_fail(ct_matmul(&dd, &va, &vb, nullptr, &vo2, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_matmul", {"activation"}, {"-1"});
    dd = d;
    dd.struct_size = 0;
    expect_fail(ct_matmul(&dd, &va, &vb, nullptr, &vo2, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_matmul", {"desc|struct_size"});
    expect_fail(ct_matmul(nullptr, &va, &vb, nullptr, &vo2, ws.ptr(), ws.bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_matmul", {"desc"});
    CHECK(o.bytes() == out_t({4, 4}).bytes());
  }
  SECTION("a tensor on a device that does not exist") {
    HostTensor a = rnd({4, 5}, 1616), b = rnd({5, 3}, 1617), o = out_t({4, 3});
    CTensor va = a.view(), vb = b.view();
    vb.device.device_id = 5;
    fail_mm(&va, &vb, nullptr, o,
            {CT_ERR_NOT_FOUND, CT_ERR_DEVICE_MISMATCH, CT_ERR_INVALID_ARGUMENT, CT_ERR_UNSUPPORTED}, {"b"});
  }
}

// ---------------------------------------------------------------------------
// 6. CTCpuStream
// ---------------------------------------------------------------------------

TEST_CASE("nn: CTCpuStream with 1 and 2 threads gives the same results; a bad struct_size is refused", "[nn]") {
  CTCpuStream s1 = cpu_stream(1), s2 = cpu_stream(2);
  SECTION("conv2d, direct and through a plan") {
    CTConv2dDesc d = conv_desc(1);
    HostTensor x = rnd({2, 16, 14, 14}, 1701), w = rnd({32, 16, 3, 3}, 1702), b = rnd({32}, 1703);
    HostTensor y1 = out_t({2, 32, 14, 14}), y2 = out_t({2, 32, 14, 14}), y3 = out_t({2, 32, 14, 14});
    REQUIRE(run_conv(d, x, w, &b, y1, &s1) == CT_OK);
    REQUIRE(run_conv(d, x, w, &b, y2, &s2) == CT_OK);
    check_same_within(y1, y2, 1e-5, "conv2d 1 vs 2 threads");
    check_close(y1, conv_ref(x, w, &b, d, {2, 32, 14, 14}), 1e-4, 1e-4, "conv2d vs reference");

    CTensor vx = x.view(), vw = w.view(), vb = b.view(), vy = y3.view();
    const CTensor* t[4] = {&vx, &vw, &vb, &vy};
    CTPlan* plan = nullptr;
    REQUIRE(ct_plan_create(CT_OP_CONV2D, &d, t, 4, &s2, &plan) == CT_OK);
    size_t bytes = 0;
    REQUIRE(ct_plan_workspace_size(plan, &bytes) == CT_OK);
    Ws ws(bytes);
    REQUIRE(ct_plan_execute(plan, t, 4, ws.ptr(), bytes, &s2) == CT_OK);
    check_same_within(y3, y1, 1e-5, "plan with 2 threads vs direct with 1");
    ct_plan_destroy(plan);
  }
  SECTION("matmul and layer_norm") {
    CTMatmulDesc md = {sizeof(CTMatmulDesc), CT_ACTIVATION_GELU};
    HostTensor a = rnd({64, 48}, 1704), b = rnd({48, 40}, 1705), o1 = out_t({64, 40}), o2 = out_t({64, 40});
    CTensor va = a.view(), vb = b.view();
    for (int k = 0; k < 2; ++k) {
      HostTensor& o = k ? o2 : o1;
      CTensor vo = o.view();
      size_t bytes = 0;
      REQUIRE(ct_matmul_workspace_size(&md, &va, &vb, nullptr, &vo, &bytes) == CT_OK);
      Ws ws(bytes);
      REQUIRE(ct_matmul(&md, &va, &vb, nullptr, &vo, ws.ptr(), bytes, k ? (void*)&s2 : (void*)&s1) == CT_OK);
    }
    check_same_within(o1, o2, 1e-5, "matmul 1 vs 2 threads");

    CTLayerNormDesc ld;
    std::memset(&ld, 0, sizeof ld);
    ld.struct_size = sizeof ld;
    ld.normalized_ndim = 1;
    ld.epsilon = 1e-5;
    HostTensor x = rnd({64, 96}, 1706), l1 = out_t({64, 96}), l2 = out_t({64, 96});
    CTensor vx = x.view();
    for (int k = 0; k < 2; ++k) {
      HostTensor& l = k ? l2 : l1;
      CTensor vl = l.view();
      size_t bytes = 0;
      REQUIRE(ct_layer_norm_workspace_size(&ld, &vx, nullptr, nullptr, &vl, nullptr, nullptr, &bytes) == CT_OK);
      Ws ws(bytes);
      REQUIRE(ct_layer_norm(&ld, &vx, nullptr, nullptr, &vl, nullptr, nullptr, ws.ptr(), bytes,
                            k ? (void*)&s2 : (void*)&s1) == CT_OK);
    }
    check_same_within(l1, l2, 1e-5, "layer_norm 1 vs 2 threads");
  }
  SECTION("more threads than the library default: the size from the query still suffices") {
    // ct_<op>_workspace_size takes no stream, so its answer must cover a run
    // with any CTCpuStream (num_threads means "at most n threads").
    int32_t default_threads = 0;
    for (int32_t i = 0; i < ct_device_count(); ++i) {
      CTDeviceInfo di;
      std::memset(&di, 0, sizeof di);
      di.struct_size = sizeof di;
      REQUIRE(ct_device_info(i, &di) == CT_OK);
      if (di.device.device_type == CT_CPU) default_threads = di.default_threads;
    }
    REQUIRE(default_threads >= 1);
    CTCpuStream many = cpu_stream(default_threads + 2);
    INFO("default threads " << default_threads << ", stream num_threads " << many.num_threads);
    CTConv2dDesc d = conv_desc(1);
    HostTensor x = rnd({2, 16, 14, 14}, 1709), w = rnd({32, 16, 3, 3}, 1710);
    HostTensor y1 = out_t({2, 32, 14, 14}), y2 = out_t({2, 32, 14, 14});
    CTensor vx = x.view(), vw = w.view(), vy2 = y2.view();
    REQUIRE(run_conv(d, x, w, nullptr, y1, &s1) == CT_OK);
    size_t bytes = 0;
    REQUIRE(ct_conv2d_workspace_size(&d, &vx, &vw, nullptr, &vy2, &bytes) == CT_OK);
    Ws ws(bytes);
    CTStatus st = ct_conv2d(&d, &vx, &vw, nullptr, &vy2, ws.ptr(), bytes, &many);
    INFO("message \"" << last_error() << "\"");
    REQUIRE(st == CT_OK);
    check_same_within(y1, y2, 1e-5, "conv2d 1 thread vs more than the default");

    CTMatmulDesc md = {sizeof(CTMatmulDesc), CT_ACTIVATION_NONE};
    HostTensor a = rnd({3, 33, 47}, 1711), b = HostTensor::strided(DT_F32, {47, 29}, {1, 47});
    HostTensor o1 = out_t({3, 33, 29}), o2 = out_t({3, 33, 29});
    CTensor va = a.view(), vb = b.view();
    for (int k = 0; k < 2; ++k) {
      HostTensor& o = k ? o2 : o1;
      CTensor vo = o.view();
      size_t mb = 0;
      REQUIRE(ct_matmul_workspace_size(&md, &va, &vb, nullptr, &vo, &mb) == CT_OK);
      Ws mws(mb);
      CTStatus ms = ct_matmul(&md, &va, &vb, nullptr, &vo, mws.ptr(), mb, k ? (void*)&many : (void*)&s1);
      INFO("matmul message \"" << last_error() << "\"");
      REQUIRE(ms == CT_OK);
    }
    check_same_within(o1, o2, 1e-5, "matmul 1 thread vs more than the default");
  }
  SECTION("bad struct_size: direct call, plan create, plan execute") {
    CTConv2dDesc d = conv_desc(1);
    HostTensor x = rnd({1, 4, 6, 6}, 1707), w = rnd({4, 4, 3, 3}, 1708), y = out_t({1, 4, 6, 6});
    CTensor vx = x.view(), vw = w.view(), vy = y.view();
    size_t bytes = 0;
    REQUIRE(ct_conv2d_workspace_size(&d, &vx, &vw, nullptr, &vy, &bytes) == CT_OK);
    Ws ws(bytes);
    const std::vector<unsigned char> s = y.bytes();
    for (uint32_t bad : {0u, 3u}) {
      INFO("struct_size " << bad);
      CTCpuStream sb = cpu_stream(1);
      sb.struct_size = bad;
      expect_fail(ct_conv2d(&d, &vx, &vw, nullptr, &vy, ws.ptr(), bytes, &sb), CT_ERR_INVALID_ARGUMENT, "ct_conv2d",
                  {"stream|struct_size"});
      CHECK(y.bytes() == s);
      const CTensor* t[4] = {&vx, &vw, nullptr, &vy};
      char dummy = 0;
      CTPlan* p = reinterpret_cast<CTPlan*>(&dummy);
      expect_fail(ct_plan_create(CT_OP_CONV2D, &d, t, 4, &sb, &p), CT_ERR_INVALID_ARGUMENT, "ct_plan_create",
                  {"stream|struct_size"});
      CHECK(p == reinterpret_cast<CTPlan*>(&dummy));
      CTPlan* plan = nullptr;
      REQUIRE(ct_plan_create(CT_OP_CONV2D, &d, t, 4, nullptr, &plan) == CT_OK);
      size_t pb = 0;
      REQUIRE(ct_plan_workspace_size(plan, &pb) == CT_OK);
      Ws pws(pb);
      expect_fail(ct_plan_execute(plan, t, 4, pws.ptr(), pb, &sb), CT_ERR_INVALID_ARGUMENT, "ct_plan_execute",
                  {"stream|struct_size"});
      CHECK(y.bytes() == s);
      ct_plan_destroy(plan);
    }
  }
}

// A matmul with K = 0 sums nothing: out = act(bias) or act(0) (NumPy, PyTorch).
TEST_CASE("matmul with K = 0 gives act(bias) or zeros", "[nn]") {
  using namespace ctt;
  for (int act : {(int)CT_ACTIVATION_NONE, (int)CT_ACTIVATION_RELU, (int)CT_ACTIVATION_SIGMOID}) {
    for (bool with_bias : {false, true}) {
      INFO("activation " << act << (with_bias ? " with bias" : " without bias"));
      HostTensor a = HostTensor::compact(DT_F32, {2, 3, 0}), b = HostTensor::compact(DT_F32, {0, 4});
      HostTensor bias = HostTensor::compact(DT_F32, {4});
      for (int j = 0; j < 4; ++j) bias.set(j, j - 1.5);
      HostTensor out = HostTensor::compact(DT_F32, {2, 3, 4});
      out.fill_bytes(0xAB);
      CTensor av = a.view(), bv = b.view(), biasv = bias.view(), ov = out.view();
      CTMatmulDesc d;
      std::memset(&d, 0, sizeof d);
      d.struct_size = sizeof d;
      d.activation = act;
      size_t bytes = 1;
      REQUIRE(ct_matmul_workspace_size(&d, &av, &bv, with_bias ? &biasv : nullptr, &ov, &bytes) == CT_OK);
      CHECK(bytes == 0);
      REQUIRE(ct_matmul(&d, &av, &bv, with_bias ? &biasv : nullptr, &ov, nullptr, 0, nullptr) == CT_OK);
      const std::vector<double> want =
          reference(ref_call(CT_OP_MATMUL, &d), {&a, &b, with_bias ? &bias : nullptr}, {{DT_F64, out.shape}})[0].f;
      for (int64_t i = 0; i < out.numel(); ++i) CHECK(out.get(i) == Approx(want[(size_t)i]).epsilon(1e-6).margin(1e-7));
    }
  }
}
