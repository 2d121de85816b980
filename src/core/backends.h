// backends.h — core's view of the registered backends: every device type and
// kernel table arrives through include/ctensor/plugin.h, and core knows them
// only through the tables kept here (it names no backend).
#ifndef CTENSOR_SRC_CORE_BACKENDS_H_
#define CTENSOR_SRC_CORE_BACKENDS_H_

#include <ctensor/plugin.h>

namespace ct {

constexpr int kMaxKernelTables = 8;

// One registered device type with its kernel tables, copied at full size
// (a smaller table from an older backend is zero-extended: its unknown
// slots are NULL).
struct Backend {
  CTDeviceInterface dev;
  int32_t num_kernels = 0;
  CTKernelInterface kernels[kMaxKernelTables];
};

// The backend of a device type, or nullptr when none is registered.
// Lock-free: registrations publish a new immutable snapshot.
const Backend* find_backend(int32_t device_type);

// CT_OK if `device` exists; else a message naming fn and `what` (the
// argument's device, e.g. "x.device" or "device").
CTStatus check_device(const char* fn, const char* what, CTDevice device, const Backend** backend);

// The first kernel table of b that runs q (CT_OK), or the last table's
// reason (CT_ERR_UNSUPPORTED) with its message.
CTStatus find_kernels(const Backend* b, const CTSupportQuery& q, const CTKernelInterface** out);

// CT_OK if op runs on device for (data) dtype; else says why, naming fn.
CTStatus check_supported(const char* fn, int32_t op, CTDevice device, CTDataType dtype);

// The device's stream check (CT_OK for a NULL stream or slot).
inline CTStatus check_stream(const Backend* b, const char* fn, int32_t device_id, void* stream) {
  if (!stream || !b->dev.check_stream) return CT_OK;
  return b->dev.check_stream(fn, device_id, stream);
}

// Temporary memory on `device` for a call of fn: through the allocator the
// caller installed for its type (ct_set_allocator), else the backend's
// default_allocator, else its malloc slot. Stream-ordered on `stream`.
CTStatus temp_alloc(const char* fn, CTDevice device, size_t bytes, void* stream, void** ptr);
void temp_free(CTDevice device, void* ptr, void* stream);

// The host table handed to backends.
const CTHost* host();

// Registered at first use by the library itself (src/builtin_backends.cc):
// the one place that names the built-in backends.
void register_builtin_backends(const CTHost* host);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_BACKENDS_H_
