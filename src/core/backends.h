// backends.h — core's view of the registered backends: every device type and
// kernel table arrives through include/ctensor/plugin.h, and core knows them
// only through the tables kept here (it names no backend).
#ifndef CTENSOR_SRC_CORE_BACKENDS_H_
#define CTENSOR_SRC_CORE_BACKENDS_H_

#include <ctensor/plugin.h>

#include "core/error.h"

#include "core/library.h"

#include <atomic>

namespace ct {

struct Library;  // core/library.h

constexpr int kMaxKernelTables = 8;

// One registered device type with its kernel tables, copied at full size
// (a smaller table from an older backend is zero-extended: its unknown
// slots are NULL).
struct Backend {
  CTDeviceInterface dev;
  int32_t num_devices = 0;  // dev.device_count(), asked once when the device registers
  int32_t num_kernels = 0;
  CTKernelInterface kernels[kMaxKernelTables];
  // The plugin library that brought the device type / each kernel table
  // (NULL: built in, or registered by code linked into the process).
  const Library* dev_owner = nullptr;
  const Library* kernel_owner[kMaxKernelTables] = {};
  // Which table runs (op, dtype) on device 0, as supports() answered:
  // 0 not asked yet, k + 1 table k, kNone none. Sized by the ops the
  // library knows at registration; a registration makes a new Backend, so
  // the answers never outlive the tables that gave them.
  static constexpr uint8_t kNone = 255;
  int32_t cache_ops = 0;
  std::atomic<uint8_t>* cache = nullptr;
};

// Registers what the first use of the library registers, once: the
// built-in backends, then the modules and CT_PLUGIN_PATH (library.h). Entry
// points that read the registry without looking a device up call it.
void register_first_use();

// An immutable list of backends; registration publishes a new one. Old
// snapshots and backends are kept (a call may still be reading them).
constexpr int kMaxDeviceTypes = 16;
struct Snapshot {
  int32_t count = 0;
  const Backend* b[kMaxDeviceTypes] = {nullptr};
};
extern std::atomic<const Snapshot*> g_snapshot;
// The snapshot once the first use has registered the built-ins (and run
// register_first_use's loads): what find_backend reads before that.
const Snapshot* first_snapshot();

// The backend of a device type, or nullptr when none is registered.
// Lock-free: registrations publish a new immutable snapshot. Inline: every
// call looks its device up.
inline const Backend* find_backend(int32_t device_type) {
  const Snapshot* s = g_snapshot.load(std::memory_order_seq_cst);  // a plain load on x86; see retire()
  if (__builtin_expect(!s, 0)) s = first_snapshot();
  for (int32_t i = 0; i < s->count; ++i)
    if (s->b[i]->dev.device_type == device_type) return s->b[i];
  return nullptr;
}

// check_device when the device does not exist: the message.
CT_COLD CTStatus no_device(const char* fn, const char* arg, CTDevice device, const Backend* b);

// CT_OK if `device` exists; else a message naming fn and the tensor
// argument `arg` whose device it is ("x.device.device_id=3"), or the bare
// device when arg is NULL ("device.device_id=3"). Inline: every call runs it.
inline CTStatus check_device(const char* fn, const char* arg, CTDevice device, const Backend** out) {
  const Backend* b = find_backend(device.device_type);
  if (!b || device.device_id < 0 || device.device_id >= b->num_devices) return no_device(fn, arg, device, b);
  *out = b;
  return CT_OK;
}

// find_kernels when the answer is not cached: asks the tables' supports().
CTStatus ask_kernels(const Backend* b, const CTSupportQuery& q, const CTKernelInterface** out);

// The first kernel table of b that runs q (CT_OK), or the last table's
// reason (CT_ERR_UNSUPPORTED) with its message. The common case, a call
// supports() already answered yes to on device 0, is one table lookup (the
// cast's target aside, which is asked every time).
// The table supports() already said runs (op, dt) on device 0, or NULL
// when not cached (not asked yet, no table, another device, or a cast).
inline const CTKernelInterface* cached_kernels(const Backend* b, int32_t op, int32_t kind, int32_t dt,
                                               int32_t device_id) {
  if (device_id != 0 || kind == CT_KIND_CAST || op < 0 || op >= b->cache_ops || dt < 0 || dt >= CT_DT_COUNT)
    return nullptr;
  const uint8_t v = b->cache[(size_t)op * CT_DT_COUNT + dt].load(std::memory_order_relaxed);
  return v != 0 && v != Backend::kNone ? &b->kernels[v - 1] : nullptr;
}
inline CTStatus find_kernels(const Backend* b, const CTSupportQuery& q, const CTKernelInterface** out) {
  if (const CTKernelInterface* k = cached_kernels(b, q.op, q.kind, q.dt, q.device_id)) {
    *out = k;
    return CT_OK;
  }
  return ask_kernels(b, q, out);
}

// CT_OK if op runs on device for (data) dtype; else says why, naming fn.
CTStatus check_supported(const char* fn, int32_t op, CTDevice device, CTDataType dtype,
                         const CTDataType* out_dtype = nullptr);

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

// A library's staged registrations become visible (all of them, or none
// and an error), are dropped (its init failed), or are removed (unload).
CTStatus commit_staged_backends(Library* lib);
void drop_staged_backends();
void remove_backends(const Library* lib);

// The library that brought kernel table k of b (NULL for the built-ins).
inline const Library* owner_of(const Backend* b, const CTKernelInterface* k) {
  return b->kernel_owner[k - b->kernels];
}

// The host table handed to backends.
const CTHost* host();

// Registered at first use by the library itself (src/builtin_backends.cc):
// the one place that names the built-in backends.
void register_builtin_backends(const CTHost* host);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_BACKENDS_H_
