// test_abi.cpp — CTensor, CTDevice and CTDataType have exactly DLPack's
// layout and enum values (checked against the installed <dlpack/dlpack.h>,
// whatever its version), a DLTensor* passes through a cast, and the runtime
// library's version agrees with the header.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <dlpack/dlpack.h>

#include "test_util.h"

// ---- struct layout ---------------------------------------------------------

static_assert(sizeof(CTDevice) == sizeof(DLDevice), "CTDevice size");
static_assert(alignof(CTDevice) == alignof(DLDevice), "CTDevice alignment");
static_assert(offsetof(CTDevice, device_type) == offsetof(DLDevice, device_type), "device_type");
static_assert(offsetof(CTDevice, device_id) == offsetof(DLDevice, device_id), "device_id");
static_assert(sizeof(CTDevice::device_type) == sizeof(DLDevice::device_type), "device_type size");
static_assert(sizeof(CTDevice::device_id) == sizeof(DLDevice::device_id), "device_id size");

static_assert(sizeof(CTDataType) == sizeof(DLDataType), "CTDataType size");
static_assert(alignof(CTDataType) == alignof(DLDataType), "CTDataType alignment");
static_assert(offsetof(CTDataType, code) == offsetof(DLDataType, code), "code");
static_assert(offsetof(CTDataType, bits) == offsetof(DLDataType, bits), "bits");
static_assert(offsetof(CTDataType, lanes) == offsetof(DLDataType, lanes), "lanes");
static_assert(std::is_same<decltype(CTDataType::code), decltype(DLDataType::code)>::value, "code type");
static_assert(std::is_same<decltype(CTDataType::bits), decltype(DLDataType::bits)>::value, "bits type");
static_assert(std::is_same<decltype(CTDataType::lanes), decltype(DLDataType::lanes)>::value, "lanes type");

static_assert(sizeof(CTensor) == sizeof(DLTensor), "CTensor size");
static_assert(alignof(CTensor) == alignof(DLTensor), "CTensor alignment");
static_assert(offsetof(CTensor, data) == offsetof(DLTensor, data), "data");
static_assert(offsetof(CTensor, device) == offsetof(DLTensor, device), "device");
static_assert(offsetof(CTensor, ndim) == offsetof(DLTensor, ndim), "ndim");
static_assert(offsetof(CTensor, dtype) == offsetof(DLTensor, dtype), "dtype");
static_assert(offsetof(CTensor, shape) == offsetof(DLTensor, shape), "shape");
static_assert(offsetof(CTensor, strides) == offsetof(DLTensor, strides), "strides");
static_assert(offsetof(CTensor, byte_offset) == offsetof(DLTensor, byte_offset), "byte_offset");
static_assert(sizeof(CTensor::ndim) == sizeof(DLTensor::ndim), "ndim size");
static_assert(std::is_same<decltype(CTensor::data), decltype(DLTensor::data)>::value, "data type");
static_assert(std::is_same<decltype(CTensor::shape), decltype(DLTensor::shape)>::value, "shape type");
static_assert(std::is_same<decltype(CTensor::strides), decltype(DLTensor::strides)>::value, "strides type");
static_assert(std::is_same<decltype(CTensor::byte_offset), decltype(DLTensor::byte_offset)>::value,
              "byte_offset type");

// ---- enum values -----------------------------------------------------------

static_assert((int)CT_CPU == (int)kDLCPU, "kDLCPU");
static_assert((int)CT_CUDA == (int)kDLCUDA, "kDLCUDA");
static_assert((int)CT_CUDA_HOST == (int)kDLCUDAHost, "kDLCUDAHost");
static_assert((int)CT_OPENCL == (int)kDLOpenCL, "kDLOpenCL");
static_assert((int)CT_VULKAN == (int)kDLVulkan, "kDLVulkan");
static_assert((int)CT_METAL == (int)kDLMetal, "kDLMetal");
static_assert((int)CT_VPI == (int)kDLVPI, "kDLVPI");
static_assert((int)CT_ROCM == (int)kDLROCM, "kDLROCM");
static_assert((int)CT_ROCM_HOST == (int)kDLROCMHost, "kDLROCMHost");
static_assert((int)CT_EXT_DEV == (int)kDLExtDev, "kDLExtDev");
static_assert((int)CT_CUDA_MANAGED == (int)kDLCUDAManaged, "kDLCUDAManaged");
// Added to DLPack after 0.6 (0.7: kDLOneAPI, kDLWebGPU, kDLHexagon; 0.8: kDLBool).
#if (defined(DLPACK_VERSION) && DLPACK_VERSION >= 70) || defined(DLPACK_MAJOR_VERSION)
static_assert((int)CT_ONEAPI == (int)kDLOneAPI, "kDLOneAPI");
static_assert((int)CT_WEBGPU == (int)kDLWebGPU, "kDLWebGPU");
static_assert((int)CT_HEXAGON == (int)kDLHexagon, "kDLHexagon");
#endif
#if (defined(DLPACK_VERSION) && DLPACK_VERSION >= 80) || defined(DLPACK_MAJOR_VERSION)
static_assert((int)CT_BOOL == (int)kDLBool, "kDLBool");
#endif

static_assert((int)CT_INT == (int)kDLInt, "kDLInt");
static_assert((int)CT_UINT == (int)kDLUInt, "kDLUInt");
static_assert((int)CT_FLOAT == (int)kDLFloat, "kDLFloat");
static_assert((int)CT_OPAQUE_HANDLE == (int)kDLOpaqueHandle, "kDLOpaqueHandle");
static_assert((int)CT_BFLOAT == (int)kDLBfloat, "kDLBfloat");
static_assert((int)CT_COMPLEX == (int)kDLComplex, "kDLComplex");

// Values fixed by DLPack even where the installed header predates them.
static_assert(CT_ONEAPI == 14 && CT_WEBGPU == 15 && CT_HEXAGON == 16 && CT_BOOL == 6, "newer DLPack values");

// ---- misc ABI facts --------------------------------------------------------

static_assert(sizeof(CTStatus) == 4, "CTStatus is 32-bit");
static_assert(std::is_signed<CTStatus>::value, "CTStatus is signed");
static_assert(offsetof(CTDeviceInfo, struct_size) == 0, "CTDeviceInfo starts with struct_size");
static_assert(offsetof(CTOpInfo, struct_size) == 0, "CTOpInfo starts with struct_size");
static_assert(offsetof(CTCpuStream, struct_size) == 0, "CTCpuStream starts with struct_size");
static_assert(CT_MAX_NDIM == 16, "CT_MAX_NDIM");

TEST_CASE("a DLTensor* cast to CTensor* runs through ct_unary", "[abi]") {
  float xs[6] = {-1, 2, -3, 4, -5, 6};
  float ys[6] = {0, 0, 0, 0, 0, 0};
  int64_t shape[2] = {2, 3};
  int64_t xstr[2] = {1, 2};  // column-major view of xs
  DLTensor x;
  x.data = xs;
  x.device.device_type = kDLCPU;
  x.device.device_id = 0;
  x.ndim = 2;
  x.dtype.code = kDLFloat;
  x.dtype.bits = 32;
  x.dtype.lanes = 1;
  x.shape = shape;
  x.strides = xstr;
  x.byte_offset = 0;
  DLTensor y = x;
  y.data = ys;
  y.strides = nullptr;
  REQUIRE(ct_unary(CT_OP_ABS, reinterpret_cast<const CTensor*>(&x), reinterpret_cast<CTensor*>(&y), nullptr) ==
          CT_OK);
  // y[i][j] = |xs[i + 2 j]|
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) CHECK(ys[i * 3 + j] == std::fabs(xs[i + 2 * j]));
  // byte_offset honoured through the cast as well
  DLTensor z = x;
  int64_t zshape[1] = {2};
  z.ndim = 1;
  z.shape = zshape;
  z.strides = nullptr;
  z.byte_offset = 4 * sizeof(float);
  DLTensor w = z;
  float ws[2] = {0, 0};
  w.data = ws;
  w.byte_offset = 0;
  REQUIRE(ct_unary(CT_OP_NEG, reinterpret_cast<const CTensor*>(&z), reinterpret_cast<CTensor*>(&w), nullptr) ==
          CT_OK);
  CHECK(ws[0] == 5.0f);
  CHECK(ws[1] == -6.0f);
}

TEST_CASE("ct_version agrees with the header", "[abi]") {
  CHECK(ct_version() == (uint32_t)CT_VERSION);
  CHECK(CT_VERSION == CT_VERSION_MAJOR * 10000 + CT_VERSION_MINOR * 100 + CT_VERSION_PATCH);
  char want[64];
  std::snprintf(want, sizeof want, "%d.%d.%d", CT_VERSION_MAJOR, CT_VERSION_MINOR, CT_VERSION_PATCH);
  REQUIRE(ct_version_string() != nullptr);
  CHECK(std::string(ct_version_string()) == want);
  CHECK(ct_version_string() == ct_version_string());  // static
}

TEST_CASE("header op ids are the registry's and are dense", "[abi]") {
  // CT_OP_* values are explicit and append-only: every id of 0 .. CT_OP_END_-1
  // exactly once over the three category lists, and within each list rising
  // (a new op goes at the end of its category's list with the next free id,
  // so the lists need not continue one another).
  std::vector<int> ids, rising;
  int last = -1;
#define CTT_CHECK_ID_(ID, n, k, p, s)               \
  ids.push_back((int)CT_OP_##ID);                   \
  if ((int)CT_OP_##ID <= last) rising.push_back((int)CT_OP_##ID); \
  last = (int)CT_OP_##ID;
  CT_ELEMENTWISE_OPS(CTT_CHECK_ID_)
  last = -1;
  CT_BROADCAST_REDUCE_OPS(CTT_CHECK_ID_)
  last = -1;
  CT_NN_OPS(CTT_CHECK_ID_)
#undef CTT_CHECK_ID_
  CHECK(rising.empty());
  std::sort(ids.begin(), ids.end());
  REQUIRE(ids.size() == (size_t)CT_OP_END_);
  for (size_t i = 0; i < ids.size(); ++i) CHECK(ids[i] == (int)i);
  CHECK(ct_op_count() >= (int32_t)CT_OP_END_);
  for (int op = 0; op < (int)CT_OP_END_; ++op) {  // the registry's op `op` is the header's
    CTOpInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(op, &info) == CT_OK);
    CHECK(info.op == op);
  }
  // a few fixed ids that must never move
  CHECK(CT_OP_NEG == 0);
  CHECK(CT_OP_EXP == 3);
  CHECK(CT_OP_MATMUL == 88);
  CHECK(CT_OP_LAYER_NORM_BACKWARD == 100);
  CHECK(CT_OP_WHERE == 39);
  CHECK(CT_OP_CAST == 42);
  CHECK(CT_OP_ADD == 43);
  CHECK(CT_OP_SUM == 71);
  CHECK(CT_OP_CUMPROD == 87);
}
