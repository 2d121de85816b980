// The parts of DLPack 1.3 (dlpack.h) the bindings use, declared over
// ctensor's own CTensor, which has DLTensor's exact layout. Debian ships
// DLPack 0.6, which predates the versioned tensor and the exchange API.
#pragma once
#include <cstddef>
#include <cstdint>

#include <ctensor/ctensor.h>

namespace ctpy {

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

// "dltensor" capsules (DLPack < 1.0).
struct DLManagedTensor {
  CTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// "dltensor_versioned" capsules (DLPack >= 1.0).
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  CTensor dl_tensor;
};

constexpr uint64_t kDLFlagReadOnly = 1ull << 0;
constexpr uint64_t kDLFlagIsCopied = 1ull << 1;
constexpr uint32_t kDLPackMajor = 1;
constexpr uint32_t kDLPackMinor = 3;

// DLPack 1.3's C exchange API: a PyCapsule named "dlpack_exchange_api" in
// the attribute __dlpack_c_exchange_api__ of the producer's type.
struct DLPackExchangeAPIHeader {
  DLPackVersion version;
  DLPackExchangeAPIHeader* prev_api;
};

struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  int (*managed_tensor_allocator)(CTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
                                  void (*set_error)(void* error_ctx, const char* kind, const char* message));
  int (*managed_tensor_from_py_object_no_sync)(void* py_object, DLManagedTensorVersioned** out);
  int (*managed_tensor_to_py_object_no_sync)(DLManagedTensorVersioned* tensor, void** out_py_object);
  int (*dltensor_from_py_object_no_sync)(void* py_object, CTensor* out);
  int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_current_stream);
};

static_assert(sizeof(CTensor) == 48, "CTensor must have DLTensor's layout");
static_assert(sizeof(DLManagedTensor) == 64, "DLManagedTensor layout");
static_assert(sizeof(DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned layout");
static_assert(offsetof(DLManagedTensorVersioned, dl_tensor) == 32, "DLManagedTensorVersioned layout");

}  // namespace ctpy
