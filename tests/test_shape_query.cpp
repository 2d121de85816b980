// test_shape_query.cpp — ct_op_output_info and the generic NN pair, for
// every op of the registry: the query's outputs are exactly what the op
// accepts, its errors are the op's, and outputs are untouched on failure.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "test_util.h"

using namespace ctt;

namespace {

int dt_index_of(CTDataType t) {
  for (int i = 0; i < DT_COUNT; ++i)
    if (dtype(i).dt.code == t.code && dtype(i).dt.bits == t.bits) return i;
  return -1;
}

// Input shapes for one op, in the order of its input arguments, chosen by
// its shape rule and tensor roles.
std::vector<std::vector<int64_t>> input_shapes(const CTOpInfo& info) {
  std::vector<std::vector<int64_t>> s;
  const int32_t n = info.num_inputs;
  if (info.kind == CT_KIND_INDEX) {  // along the last axis (the test's args.axis = -1)
    if (info.op == CT_OP_INDEX_ADD) return {{2, 3}, {3}, {2, 3}};
    if (n == 3) return {{2, 3}, {2, 2}, {2, 3}};
    return {{2, 3}, {2, 2}};
  }
  switch (info.shape_rule) {
    case CT_SHAPE_SAME:
      for (int i = 0; i < n; ++i) s.push_back({2, 3});
      break;
    case CT_SHAPE_BROADCAST: {
      const std::vector<int64_t> b[3] = {{2, 3}, {3}, {2, 1}};
      for (int i = 0; i < n; ++i) s.push_back(b[i]);
      break;
    }
    case CT_SHAPE_REDUCE: s.push_back({2, 3, 4}); break;
    case CT_SHAPE_MATMUL: s = {{2, 3, 4}, {4, 5}, {5}}; break;
    case CT_SHAPE_CONV2D: s = {{1, 2, 5, 5}, {3, 2, 3, 3}, {3}}; break;
    case CT_SHAPE_CONV2D_BACKWARD_DATA: s = {{1, 3, 5, 5}, {3, 2, 3, 3}}; break;
    case CT_SHAPE_CONV2D_BACKWARD_WEIGHT: s = {{1, 2, 5, 5}, {1, 3, 5, 5}}; break;
    case CT_SHAPE_POOL2D: s = {{1, 2, 4, 4}}; break;
    case CT_SHAPE_POOL2D_BACKWARD:
      for (int i = 0; i < n; ++i) s.push_back({1, 2, 2, 2});
      break;
    case CT_SHAPE_NORM: {
      const bool ln = info.desc_type == CT_DESC_LAYER_NORM;
      for (int i = 0; i < n; ++i) {
        const int32_t r = info.tensor_roles[i];
        if (r == CT_ROLE_DATA) s.push_back({2, 3, 4});
        else if (r == CT_ROLE_STAT) s.push_back(ln ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{3});
        else s.push_back(ln ? std::vector<int64_t>{4} : std::vector<int64_t>{3});
      }
      break;
    }
    case CT_SHAPE_ATTENTION: s = {{2, 3, 4}, {2, 5, 4}, {1, 5, 6}, {3, 5}}; break;  // mask: the data dtype
    default: FAIL("op " << info.name << " has an unknown shape rule " << info.shape_rule);
  }
  return s;
}

// The descriptor storage an NN op needs (stride 1, padding 1 for conv, 2x2 pools).
struct Descs {
  CTMatmulDesc mm = {sizeof(CTMatmulDesc), 0};
  CTConv2dDesc conv;
  CTPool2dDesc pool;
  CTBatchNormDesc bn = {sizeof(CTBatchNormDesc), 0, 1e-5};
  CTLayerNormDesc ln = {sizeof(CTLayerNormDesc), 1, 1e-5};
  CTAttentionDesc attn = {sizeof(CTAttentionDesc), CT_CAUSAL_TOP_LEFT, 0.0};
  Descs() {
    std::memset(&conv, 0, sizeof conv);
    conv.struct_size = sizeof conv;
    conv.pad_begin[0] = conv.pad_begin[1] = conv.pad_end[0] = conv.pad_end[1] = 1;
    std::memset(&pool, 0, sizeof pool);
    pool.struct_size = sizeof pool;
    pool.kernel[0] = pool.kernel[1] = 2;
  }
  const void* of(int32_t type) const {
    switch (type) {
      case CT_DESC_MATMUL: return &mm;
      case CT_DESC_CONV2D: return &conv;
      case CT_DESC_POOL2D: return &pool;
      case CT_DESC_BATCH_NORM: return &bn;
      case CT_DESC_LAYER_NORM: return &ln;
      case CT_DESC_ATTENTION: return &attn;
      default: return nullptr;
    }
  }
};

int data_dtype_for(const CTOpInfo& info) {
  if (info.dtype_mask & (1u << CT_DT_FLOAT32)) return DT_F32;
  if (info.dtype_mask & (1u << CT_DT_INT32)) return DT_I32;
  return DT_BOOL;
}

int input_dtype(const CTOpInfo& info, int i, int data) {
  switch (info.tensor_roles[i]) {
    case CT_ROLE_COND: return DT_BOOL;
    case CT_ROLE_STAT:
    case CT_ROLE_PARAM: return DT_F32;
    case CT_ROLE_INDEX: return DT_I64;
    default: return data;
  }
}

void fill_input(HostTensor& t, const CTOpInfo& info, int role) {
  for (int64_t k = 0; k < t.numel(); ++k) {
    if (role == CT_ROLE_INDEX && info.kind == CT_KIND_INDEX) {
      t.set_i(k, k % 3 - 1);  // -1, 0, 1: valid for an axis of 3
    } else if (role == CT_ROLE_INDEX) {
      // max-pool indices of 2x2 windows over a 4x4 plane: each window's first element
      const int64_t q = k % 2, p = (k / 2) % 2;
      t.set_i(k, (2 * p) * 4 + 2 * q);
    } else if (dtype(t.d).is_float()) {
      t.set(k, 0.25 + 0.125 * (double)(k % 5));
    } else {
      t.set_i(k, 1 + k % 3);
    }
  }
}

// Runs op through its kind's generic entry point.
CTStatus run(const CTOpInfo& info, const Descs& d, const CTOpArgs& a, std::vector<CTensor>& in,
             std::vector<CTensor>& out) {
  static const double params[2] = {1.0, 2.0};  // valid for every row (mvlgamma: p >= 1; clamp: lo <= hi)
  switch (info.kind) {
    case CT_KIND_UNARY: return ct_unary(info.op, &in[0], &out[0], nullptr);
    case CT_KIND_UNARY_PARAM: return ct_unary_param(info.op, &in[0], params, info.num_params, &out[0], nullptr);
    case CT_KIND_TERNARY: return ct_ternary(info.op, &in[0], &in[1], &in[2], &out[0], nullptr);
    case CT_KIND_CAST: return ct_cast(&in[0], &out[0], nullptr);
    case CT_KIND_BINARY: return ct_binary(info.op, &in[0], &in[1], &out[0], nullptr);
    case CT_KIND_REDUCE: {
      const double corr = 1.0;
      return ct_reduce(info.op, &in[0], a.axes, a.num_axes, a.keepdims, info.num_params ? &corr : nullptr,
                       info.num_params, &out[0], nullptr);
    }
    case CT_KIND_ALONG_AXIS: return ct_along_axis(info.op, &in[0], a.axis, &out[0], nullptr);
    case CT_KIND_INDEX:
      return ct_index(info.op, &in[0], a.axis, &in[1], in.size() > 2 ? &in[2] : nullptr, params, info.num_params,
                      &out[0], nullptr);
    case CT_KIND_NN: {
      std::vector<const CTensor*> t;
      for (CTensor& x : in) t.push_back(&x);
      for (CTensor& x : out) t.push_back(&x);
      const void* desc = d.of(info.desc_type);
      size_t bytes = 0;
      if (CTStatus s = ct_nn_workspace_size(info.op, desc, t.data(), (int32_t)t.size(), &bytes)) return s;
      std::vector<unsigned char> ws(bytes + 64);
      return ct_nn(info.op, desc, t.data(), (int32_t)t.size(), bytes ? ws.data() : nullptr, bytes, nullptr);
    }
    default: return CT_ERR_INTERNAL;
  }
}

}  // namespace

TEST_CASE("shape query: every op's outputs are what the op accepts", "[generic]") {
  Descs d;
  int covered = 0;
  for (int32_t op = 0; op < ct_op_count(); ++op) {
    if (unloaded_plugin_op(op)) {
      ++covered;  // nothing to query
      continue;
    }
    CTOpInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(op, &info) == CT_OK);
    INFO("op " << info.name);
    const auto shapes = input_shapes(info);
    REQUIRE((int32_t)shapes.size() == info.num_inputs);
    const int data = data_dtype_for(info);
    std::vector<HostTensor> hin;
    for (int i = 0; i < info.num_inputs; ++i) {
      hin.push_back(HostTensor::compact(input_dtype(info, i, data), shapes[i]));
      fill_input(hin.back(), info, info.tensor_roles[i]);
    }
    std::vector<CTensor> in;
    std::vector<const CTensor*> inp;
    for (HostTensor& h : hin) in.push_back(h.view());
    for (CTensor& c : in) inp.push_back(&c);
    CTOpArgs a;
    std::memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    const int32_t axes[1] = {1};
    a.axes = axes;
    a.num_axes = 1;
    a.keepdims = op % 2;
    a.axis = -1;
    a.dtype = dtype(DT_F64).dt;
    a.desc = d.of(info.desc_type);
    std::vector<CTOutputInfo> oi(info.num_outputs);
    CTStatus s = ct_op_output_info(op, &a, inp.data(), info.num_inputs, oi.data(), info.num_outputs);
    REQUIRE(s == CT_OK);
    CHECK(std::string(ct_last_error()).empty());
    std::vector<HostTensor> hout;
    for (const CTOutputInfo& o : oi) {
      const int odt = dt_index_of(o.dtype);
      REQUIRE(odt >= 0);
      hout.push_back(HostTensor::compact(odt, std::vector<int64_t>(o.shape, o.shape + o.ndim)));
    }
    std::vector<CTensor> out;
    for (HostTensor& h : hout) out.push_back(h.view());
    s = run(info, d, a, in, out);
    CHECK(s == CT_OK);
    if (s != CT_OK) WARN(ct_last_error());
    ++covered;
  }
  CHECK(covered == ct_op_count());
}

TEST_CASE("shape query: values of the rules", "[generic]") {
  auto query = [](int32_t op, const CTOpArgs* a, std::vector<HostTensor*> ins, int nout) {
    std::vector<CTensor> v(ins.size());
    std::vector<const CTensor*> p;
    for (size_t k = 0; k < ins.size(); ++k) {
      if (ins[k]) v[k] = ins[k]->view();
      p.push_back(ins[k] ? &v[k] : nullptr);  // NULL: an absent optional argument
    }
    std::vector<CTOutputInfo> o(nout);
    const CTStatus s = ct_op_output_info(op, a, p.data(), (int32_t)p.size(), o.data(), nout);
    REQUIRE(s == CT_OK);
    return o;
  };
  auto shape_of = [](const CTOutputInfo& o) { return std::vector<int64_t>(o.shape, o.shape + o.ndim); };
  HostTensor a = HostTensor::compact(DT_F32, {7, 1, 3, 4}), b = HostTensor::compact(DT_F32, {6, 4, 5});
  CTMatmulDesc mm = {sizeof mm, 0};
  CTOpArgs args;
  std::memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  args.desc = &mm;
  std::vector<CTensor> v = {a.view(), b.view()};
  const CTensor* p[3] = {&v[0], &v[1], nullptr};
  CTOutputInfo out;
  REQUIRE(ct_op_output_info(CT_OP_MATMUL, &args, p, 3, &out, 1) == CT_OK);
  CHECK(shape_of(out) == std::vector<int64_t>{7, 6, 3, 5});
  // int32 division gives float64; comparisons bool; argmax int64; sum of int8 int64
  HostTensor i32 = HostTensor::compact(DT_I32, {4, 1}), i32b = HostTensor::compact(DT_I32, {3});
  auto o = query(CT_OP_DIV, nullptr, {&i32, &i32b}, 1);
  CHECK(shape_of(o[0]) == std::vector<int64_t>{4, 3});
  CHECK(dt_index_of(o[0].dtype) == DT_F64);
  o = query(CT_OP_LESS, nullptr, {&i32, &i32b}, 1);
  CHECK(dt_index_of(o[0].dtype) == DT_BOOL);
  HostTensor i8 = HostTensor::compact(DT_I8, {2, 3, 4});
  CTOpArgs r;
  std::memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  const int32_t ax[2] = {0, -1};
  r.axes = ax;
  r.num_axes = 2;
  o = query(CT_OP_SUM, &r, {&i8}, 1);
  CHECK(shape_of(o[0]) == std::vector<int64_t>{3});
  CHECK(dt_index_of(o[0].dtype) == DT_I64);
  r.keepdims = 1;
  o = query(CT_OP_ARGMAX, &r, {&i8}, 1);
  CHECK(shape_of(o[0]) == std::vector<int64_t>{1, 3, 1});
  CHECK(dt_index_of(o[0].dtype) == DT_I64);
  // conv2d with stride 2, padding 1: 8 -> 4; its backward data gives the smallest input (7) unless told 8
  CTConv2dDesc cd;
  std::memset(&cd, 0, sizeof cd);
  cd.struct_size = sizeof cd;
  cd.stride[0] = cd.stride[1] = 2;
  cd.pad_begin[0] = cd.pad_begin[1] = cd.pad_end[0] = cd.pad_end[1] = 1;
  HostTensor x = HostTensor::compact(DT_F32, {2, 4, 8, 8}), w = HostTensor::compact(DT_F32, {6, 4, 3, 3});
  CTOpArgs ca;
  std::memset(&ca, 0, sizeof ca);
  ca.struct_size = sizeof ca;
  ca.desc = &cd;
  o = query(CT_OP_CONV2D, &ca, {&x, &w, nullptr}, 1);
  CHECK(shape_of(o[0]) == std::vector<int64_t>{2, 6, 4, 4});
  HostTensor dy = HostTensor::compact(DT_F32, {2, 6, 4, 4});
  o = query(CT_OP_CONV2D_BACKWARD_DATA, &ca, {&dy, &w}, 1);
  CHECK(shape_of(o[0]) == std::vector<int64_t>{2, 4, 7, 7});
  ca.extent[0] = ca.extent[1] = 8;
  o = query(CT_OP_CONV2D_BACKWARD_DATA, &ca, {&dy, &w}, 1);
  CHECK(shape_of(o[0]) == std::vector<int64_t>{2, 4, 8, 8});
  // backward weight with stride 2: the kernel is not fixed by x and dy unless given
  ca.extent[0] = ca.extent[1] = 0;
  {
    std::vector<CTensor> vv = {x.view(), dy.view()};
    const CTensor* pp[2] = {&vv[0], &vv[1]};
    CTOutputInfo two[2];
    std::memset(two, 0x5a, sizeof two);
    CHECK(ct_op_output_info(CT_OP_CONV2D_BACKWARD_WEIGHT, &ca, pp, 2, two, 2) == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "kernel extent"));
    unsigned char pattern[sizeof two];
    std::memset(pattern, 0x5a, sizeof pattern);
    CHECK(std::memcmp(two, pattern, sizeof two) == 0);  // untouched on failure
    ca.extent[0] = ca.extent[1] = 3;
    REQUIRE(ct_op_output_info(CT_OP_CONV2D_BACKWARD_WEIGHT, &ca, pp, 2, two, 2) == CT_OK);
    CHECK(shape_of(two[0]) == std::vector<int64_t>{6, 4, 3, 3});
    CHECK(shape_of(two[1]) == std::vector<int64_t>{6});
  }
}

TEST_CASE("shape query: errors are the op's own", "[generic]") {
  HostTensor a = HostTensor::compact(DT_F32, {2, 3}), b = HostTensor::compact(DT_F32, {4, 5});
  std::vector<CTensor> v = {a.view(), b.view()};
  const CTensor* p[3] = {&v[0], &v[1], nullptr};
  CTOutputInfo out;
  std::memset(&out, 0x5a, sizeof out);
  CTMatmulDesc mm = {sizeof mm, 0};
  CTOpArgs args;
  std::memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  args.desc = &mm;
  CHECK(ct_op_output_info(CT_OP_MATMUL, &args, p, 3, &out, 1) == CT_ERR_SHAPE_MISMATCH);
  CHECK(contains(last_error(), "ct_op_output_info"));
  CHECK(contains(last_error(), "K dims"));
  CHECK(ct_op_output_info(CT_OP_ADD, nullptr, p, 2, &out, 1) == CT_ERR_SHAPE_MISMATCH);
  CHECK(contains(last_error(), "does not broadcast"));
  CHECK(ct_op_output_info(CT_OP_ADD, nullptr, p, 3, &out, 1) == CT_ERR_INVALID_ARGUMENT);
  CHECK(ct_op_output_info(CT_OP_ADD, nullptr, p, 2, &out, 2) == CT_ERR_INVALID_ARGUMENT);
  CHECK(ct_op_output_info(CT_OP_ADD, nullptr, p, 2, nullptr, 1) == CT_ERR_INVALID_ARGUMENT);
  CHECK(ct_op_output_info(-1, nullptr, p, 2, &out, 1) == CT_ERR_NOT_FOUND);
  CHECK(ct_op_output_info(ct_op_count(), nullptr, p, 2, &out, 1) == CT_ERR_NOT_FOUND);
  CHECK(ct_op_output_info(CT_OP_SQRT, nullptr, p, 1, &out, 1) == CT_OK);
  HostTensor i = HostTensor::compact(DT_I32, {2});
  CTensor iv = i.view();
  const CTensor* ip[1] = {&iv};
  CTOutputInfo keep;
  std::memset(&keep, 0x5a, sizeof keep);
  CHECK(ct_op_output_info(CT_OP_SQRT, nullptr, ip, 1, &keep, 1) == CT_ERR_UNSUPPORTED);
  CHECK(contains(last_error(), "float dtypes only"));
  CTOutputInfo pattern;
  std::memset(&pattern, 0x5a, sizeof pattern);
  CHECK(std::memcmp(&keep, &pattern, sizeof keep) == 0);
  // a cast needs a target dtype it supports
  CTOpArgs c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.dtype.code = CT_COMPLEX;
  c.dtype.bits = 64;
  c.dtype.lanes = 1;
  CHECK(ct_op_output_info(CT_OP_CAST, &c, ip, 1, &keep, 1) == CT_ERR_UNSUPPORTED);
}

TEST_CASE("generic NN pair: ct_nn equals ct_conv2d, and refuses non-NN ops", "[generic]") {
  HostTensor x = HostTensor::compact(DT_F32, {1, 2, 5, 5}), w = HostTensor::compact(DT_F32, {3, 2, 3, 3});
  for (int64_t k = 0; k < x.numel(); ++k) x.set(k, 0.01 * (double)(k % 17));
  for (int64_t k = 0; k < w.numel(); ++k) w.set(k, 0.1 * (double)(k % 7) - 0.3);
  HostTensor y1 = HostTensor::compact(DT_F32, {1, 3, 3, 3}), y2 = HostTensor::compact(DT_F32, {1, 3, 3, 3});
  CTConv2dDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  CTensor xv = x.view(), wv = w.view(), y1v = y1.view(), y2v = y2.view();
  size_t b1 = 0, b2 = 0;
  REQUIRE(ct_conv2d_workspace_size(&d, &xv, &wv, nullptr, &y1v, &b1) == CT_OK);
  const CTensor* t[4] = {&xv, &wv, nullptr, &y2v};
  REQUIRE(ct_nn_workspace_size(CT_OP_CONV2D, &d, t, 4, &b2) == CT_OK);
  CHECK(b1 == b2);
  std::vector<unsigned char> ws(b1 + 64);
  REQUIRE(ct_conv2d(&d, &xv, &wv, nullptr, &y1v, b1 ? ws.data() : nullptr, b1, nullptr) == CT_OK);
  REQUIRE(ct_nn(CT_OP_CONV2D, &d, t, 4, b1 ? ws.data() : nullptr, b1, nullptr) == CT_OK);
  CHECK(y1.bytes() == y2.bytes());
  CHECK(ct_nn(CT_OP_EXP, &d, t, 4, nullptr, 0, nullptr) == CT_ERR_INVALID_ARGUMENT);
  CHECK(contains(last_error(), "call ct_unary"));
  CHECK(ct_nn(CT_OP_CONV2D, &d, t, 3, nullptr, 0, nullptr) == CT_ERR_INVALID_ARGUMENT);
  CHECK(contains(last_error(), "x,w,bias?,y"));
  CHECK(ct_nn(CT_OP_CONV2D, &d, nullptr, 4, nullptr, 0, nullptr) == CT_ERR_INVALID_ARGUMENT);
}

TEST_CASE("shape query and workspace query take negative strides (no stand-in address arithmetic)", "[generic]") {
  // x reversed along both dims: strides {-4, -1} from the last element
  HostTensor x = HostTensor::strided(DT_F32, {3, 4}, {-4, -1});
  CTensor xv = x.view();
  const CTensor* p[1] = {&xv};
  CTOutputInfo o;
  REQUIRE(ct_op_output_info(CT_OP_EXP, nullptr, p, 1, &o, 1) == CT_OK);
  CHECK(o.ndim == 2);
  CHECK(o.shape[0] == 3);
  CHECK(o.shape[1] == 4);
  HostTensor w = HostTensor::strided(DT_F32, {4, 5}, {-5, -1}), y = HostTensor::compact(DT_F32, {3, 5});
  CTensor wv = w.view(), yv = y.view();
  CTMatmulDesc mm = {sizeof mm, 0};
  size_t bytes = 0;
  CHECK(ct_matmul_workspace_size(&mm, &xv, &wv, nullptr, &yv, &bytes) == CT_OK);
  CTOpArgs a;
  std::memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.desc = &mm;
  const CTensor* q[3] = {&xv, &wv, nullptr};
  REQUIRE(ct_op_output_info(CT_OP_MATMUL, &a, q, 3, &o, 1) == CT_OK);
  CHECK(o.shape[0] == 3);
  CHECK(o.shape[1] == 5);
}
