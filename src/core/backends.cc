// backends.cc — the registry of device types and kernel tables (filled only
// through plugin.h), the host table given to backends, the caller's
// allocators, and the device entry points (count, info, malloc, free,
// synchronize).
#include "core/backends.h"

#include <atomic>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/library.h"
#include "core/plugin_ops.h"
#include "core/registry.h"

namespace ct {

std::atomic<const Snapshot*> g_snapshot{nullptr};

namespace {

std::mutex g_register_mu;
thread_local bool t_registering_builtins = false;

const Snapshot* snapshot() {
  const Snapshot* s = g_snapshot.load(std::memory_order_seq_cst);  // a plain load on x86; see retire()
  if (s) return s;
  return first_snapshot();
}

}  // namespace

const Snapshot* first_snapshot() {
  static std::once_flag once;
  std::call_once(once, [] {
    t_registering_builtins = true;
    register_builtin_backends(host());
    t_registering_builtins = false;
    {
      std::lock_guard<std::mutex> lock(g_register_mu);
      if (!g_snapshot.load()) g_snapshot.store(new Snapshot, std::memory_order_release);
    }
    load_plugin_path();  // CT_PLUGIN_PATH, after the built-ins (its plugins see them registered)
  });
  return g_snapshot.load(std::memory_order_acquire);
}

namespace {


// Copies a table the backend knows at `size` bytes into the full struct,
// zero-extending what it does not know.
template <class T>
CTStatus load_table(const char* what, const T* in, size_t min_size, T* out) {
  if (in->struct_size < min_size)
    return fail(CT_ERR_ABI_VERSION, "ct_register_backend: %s->struct_size=%u is smaller than any version of it (%zu)",
                what, in->struct_size, min_size);
  if (CTStatus s = check_abi_major("ct_register_backend", what, in->abi_version)) return s;
  std::memset(out, 0, sizeof *out);
  std::memcpy(out, in, in->struct_size < sizeof(T) ? in->struct_size : sizeof(T));
  out->struct_size = sizeof(T);
  return CT_OK;
}

const Snapshot* current() {
  const Snapshot* s = g_snapshot.load(std::memory_order_acquire);
  static const Snapshot empty;
  return s ? s : &empty;
}

// Adds a device type and/or a kernel table to next: a new Backend for the
// type (copied from next's, or empty), kept in fresh until published.
CTStatus add_to(Snapshot* next, std::vector<Backend*>* fresh, const CTDeviceInterface* d,
                const CTKernelInterface* k, const Library* owner) {
  const int32_t type = d ? d->device_type : k->device_type;
  int32_t at = -1;
  for (int32_t i = 0; i < next->count; ++i)
    if (next->b[i]->dev.device_type == type) at = i;
  if (d && at >= 0)
    return fail(CT_ERR_INVALID_ARGUMENT, "ct_register_backend: device type %d is already registered (by \"%s\")", type,
                next->b[at]->dev.name);
  if (!d && at < 0)
    return fail(CT_ERR_NOT_FOUND, "ct_register_backend: kernels \"%s\" are for device type %d, which has no device registered",
                k->name, type);
  if (d && next->count == kMaxDeviceTypes)
    return fail(CT_ERR_OUT_OF_MEMORY, "ct_register_backend: %d device types are registered already", kMaxDeviceTypes);
  Backend* b = nullptr;
  for (Backend* f : *fresh)
    if (at >= 0 && f == next->b[at]) b = f;  // made by this same change: extend it
  if (!b) {
    b = new Backend(at >= 0 ? *next->b[at] : Backend());
    fresh->push_back(b);
  }
  if (k && b->num_kernels == kMaxKernelTables) {
    if (at < 0) {
      fresh->pop_back();
      delete b;
    }
    return fail(CT_ERR_OUT_OF_MEMORY, "ct_register_backend: device type %d has %d kernel tables already", type,
                kMaxKernelTables);
  }
  if (d) {
    b->dev = *d;
    b->dev_owner = owner;
    const int32_t n = d->device_count();
    b->num_devices = n > 0 ? n : 0;
  }
  if (k) {
    b->kernels[b->num_kernels] = *k;
    b->kernel_owner[b->num_kernels++] = owner;
  }
  next->b[at >= 0 ? at : next->count++] = b;
  return CT_OK;
}

void discard(Snapshot* next, std::vector<Backend*>& fresh) {
  for (Backend* b : fresh) delete b;
  delete next;
}

// Gives the new backends their (empty) kernel-answer caches and makes next
// the snapshot readers see. Old snapshots stay valid for readers in flight,
// and reachable (not leaks).
void publish(Snapshot* next, std::vector<Backend*>& fresh) {
  for (Backend* b : fresh) {
    b->cache_ops = op_count();
    b->cache = new std::atomic<uint8_t>[(size_t)b->cache_ops * CT_DT_COUNT]();  // kept with b (never freed)
  }
  const Snapshot* old = g_snapshot.load(std::memory_order_acquire);
  g_snapshot.store(next, std::memory_order_seq_cst);  // seq_cst: see retire() in epoch.cc
  if (!old) return;
  // What only the old snapshot reached goes once no call can still read it.
  for (int32_t i = 0; i < old->count; ++i) {
    bool kept = false;
    for (int32_t j = 0; j < next->count; ++j) kept = kept || next->b[j] == old->b[i];
    if (!kept) retire(const_cast<Backend*>(old->b[i]), [](void* p) {
      Backend* b = static_cast<Backend*>(p);
      delete[] b->cache;
      delete b;
    });
  }
  retire(const_cast<Snapshot*>(old), [](void* p) { delete static_cast<Snapshot*>(p); });
}

CTStatus stage(Library* lib, const CTDeviceInterface* d, const CTKernelInterface* k);

CTStatus register_backend(const CTDeviceInterface* dev, const CTKernelInterface* kern) {
  if (!t_registering_builtins) snapshot();  // the built-ins first, so that they keep their place
  if (!dev && !kern) return fail(CT_ERR_INVALID_ARGUMENT, "ct_register_backend: device and kernels are both NULL");
  CTDeviceInterface d;
  CTKernelInterface k;
  if (dev) {
    if (CTStatus s = load_table("device", dev, offsetof(CTDeviceInterface, default_allocator), &d)) return s;
    if (!d.name || !d.device_count || !d.device_info)
      return fail(CT_ERR_INVALID_ARGUMENT, "ct_register_backend: device (type %d) needs name, device_count and device_info",
                  d.device_type);
  }
  if (kern) {
    if (CTStatus s = load_table("kernels", kern, offsetof(CTKernelInterface, elementwise), &k)) return s;
    if (!k.name || !k.supports)
      return fail(CT_ERR_INVALID_ARGUMENT, "ct_register_backend: kernels (device type %d) need name and supports",
                  k.device_type);
    if (dev && k.device_type != d.device_type)
      return fail(CT_ERR_INVALID_ARGUMENT, "ct_register_backend: kernels->device_type=%d differs from device->device_type=%d",
                  k.device_type, d.device_type);
  }
  if (Library* lib = loading_library()) return stage(lib, dev ? &d : nullptr, kern ? &k : nullptr);
  std::lock_guard<std::mutex> lock(g_register_mu);
  Snapshot* next = new Snapshot(*current());
  std::vector<Backend*> fresh;
  if (CTStatus s = add_to(next, &fresh, dev ? &d : nullptr, kern ? &k : nullptr, nullptr)) {
    discard(next, fresh);
    return s;
  }
  publish(next, fresh);
  return CT_OK;
}

// ---- plugin libraries: staged registrations, commit, removal -------------------

struct Staged {
  bool has_dev = false, has_kern = false;
  CTDeviceInterface d;
  CTKernelInterface k;
};
thread_local std::vector<Staged>* t_staged_backends = nullptr;

// A load's registration: checked now against what is registered and what
// the load staged before, published by commit_staged_backends.
CTStatus stage(Library* lib, const CTDeviceInterface* d, const CTKernelInterface* k) {
  std::lock_guard<std::mutex> lock(g_register_mu);
  Snapshot trial(*current());
  std::vector<Backend*> fresh;
  if (!t_staged_backends) t_staged_backends = new std::vector<Staged>;
  CTStatus s = CT_OK;
  for (const Staged& st : *t_staged_backends)
    if ((s = add_to(&trial, &fresh, st.has_dev ? &st.d : nullptr, st.has_kern ? &st.k : nullptr, lib))) break;
  if (!s) s = add_to(&trial, &fresh, d, k, lib);
  for (Backend* b : fresh) delete b;
  if (s) return s;
  Staged st;
  st.has_dev = d != nullptr;
  st.has_kern = k != nullptr;
  if (d) st.d = *d;
  if (k) st.k = *k;
  t_staged_backends->push_back(st);
  return CT_OK;
}

}  // namespace

CTStatus commit_staged_backends(Library* lib) {
  std::vector<Staged> staged;
  if (t_staged_backends) staged.swap(*t_staged_backends);
  delete t_staged_backends;
  t_staged_backends = nullptr;
  std::lock_guard<std::mutex> lock(g_register_mu);
  Snapshot* next = new Snapshot(*current());
  std::vector<Backend*> fresh;
  for (const Staged& st : staged)
    if (CTStatus s = add_to(next, &fresh, st.has_dev ? &st.d : nullptr, st.has_kern ? &st.k : nullptr, lib)) {
      discard(next, fresh);
      return s;
    }
  for (const Staged& st : staged) {
    lib->num_devices += st.has_dev;
    lib->num_kernel_tables += st.has_kern;
  }
  publish(next, fresh);
  return CT_OK;
}

void drop_staged_backends() {
  delete t_staged_backends;
  t_staged_backends = nullptr;
}

void remove_backends(const Library* lib) {
  std::lock_guard<std::mutex> lock(g_register_mu);
  const Snapshot* old = current();
  Snapshot* next = new Snapshot;
  std::vector<Backend*> fresh;
  for (int32_t i = 0; i < old->count; ++i) {
    const Backend* b = old->b[i];
    if (b->dev_owner == lib) continue;  // a device type it brought goes with its kernels
    bool touched = false;
    for (int32_t j = 0; j < b->num_kernels; ++j) touched = touched || b->kernel_owner[j] == lib;
    if (!touched) {
      next->b[next->count++] = b;
      continue;
    }
    Backend* c = new Backend(*b);
    c->num_kernels = 0;
    for (int32_t j = 0; j < b->num_kernels; ++j)
      if (b->kernel_owner[j] != lib) {
        c->kernels[c->num_kernels] = b->kernels[j];
        c->kernel_owner[c->num_kernels++] = b->kernel_owner[j];
      }
    fresh.push_back(c);
    next->b[next->count++] = c;
  }
  publish(next, fresh);
}

namespace {

// ---- the caller's allocators ---------------------------------------------------

std::mutex g_alloc_mu;
struct AllocSlot {
  int32_t device_type = -1;
  CTAllocator a;
};
AllocSlot g_allocators[kMaxDeviceTypes];

bool installed_allocator(int32_t type, CTAllocator* out) {
  std::lock_guard<std::mutex> lock(g_alloc_mu);
  for (const AllocSlot& s : g_allocators)
    if (s.device_type == type) {
      *out = s.a;
      return true;
    }
  return false;
}

CTStatus host_temp_alloc(CTDevice device, size_t bytes, void* stream, void** ptr) {
  return temp_alloc("temp_alloc", device, bytes, stream, ptr);
}

CTStatus host_set_error(CTStatus status, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const CTStatus s = vfail(status, fmt, args);
  va_end(args);
  return s;
}

const char* host_dtype_name(int32_t dt) { return dt >= 0 && dt < CT_DT_COUNT ? dtype_name(dt) : "?"; }

}  // namespace

CTStatus temp_alloc(const char* fn, CTDevice device, size_t bytes, void* stream, void** ptr) {
  const Backend* b = find_backend(device.device_type);
  if (!b) return fail(CT_ERR_UNSUPPORTED, "%s: device type %d has no backend", fn, device.device_type);
  CTAllocator a;
  const bool callers = installed_allocator(device.device_type, &a);
  if (!callers) a = b->dev.default_allocator;
  if (!a.alloc && !b->dev.malloc)
    return fail(CT_ERR_UNSUPPORTED, "%s: the %s device has no allocator for temporary memory", fn, b->dev.name);
  // Whatever the allocator answers, the caller sees CT_ERR_OUT_OF_MEMORY
  // with the allocator's status and message, and never a NULL "success"
  // (a caller's allocator that returns CT_OK without memory).
  void* p = nullptr;
  const CTStatus s = a.alloc ? a.alloc(a.user, device, bytes, stream, &p) : b->dev.malloc(device.device_id, bytes, &p);
  const char* whose = callers ? "the caller's allocator (ct_set_allocator)" : a.alloc ? "the default allocator" : "malloc";
  if (s != CT_OK) {
    char why[512];
    std::snprintf(why, sizeof why, "%s", ct_last_error());
    return fail(CT_ERR_OUT_OF_MEMORY, "%s: %s of the %s device failed to allocate %zu bytes of temporary memory (%s%s%s)",
                fn, whose, b->dev.name, bytes, ct_status_string(s), why[0] ? ": " : "", why);
  }
  if (!p && bytes > 0)
    return fail(CT_ERR_OUT_OF_MEMORY,
                "%s: %s of the %s device returned CT_OK but no memory for %zu bytes of temporary memory", fn, whose,
                b->dev.name, bytes);
  *ptr = p;
  return CT_OK;
}

void temp_free(CTDevice device, void* ptr, void* stream) {
  if (!ptr) return;
  const Backend* b = find_backend(device.device_type);
  if (!b) return;
  CTAllocator a;
  if (!installed_allocator(device.device_type, &a)) a = b->dev.default_allocator;
  if (b->dev_owner && !pin(b->dev_owner)) return;  // closed: its memory went with it
  if (a.free) a.free(a.user, device, ptr, stream);
  else if (b->dev.free) b->dev.free(device.device_id, ptr);
  if (b->dev_owner) unpin(b->dev_owner);
}

const CTHost* host() {
  static const CTHost h = {sizeof(CTHost), CT_PLUGIN_ABI_VERSION, &host_set_error, &ct_op_info,
                           &host_dtype_name, &host_temp_alloc, &temp_free, &register_backend,
                           &register_op};
  return &h;
}

void register_first_use() { snapshot(); }



CTStatus no_device(const char* fn, const char* arg, CTDevice device, const Backend* b) {
  const char* dot = arg ? "." : "";  // "x.device.device_type", or "device.device_type" for a bare device
  if (!arg) arg = "";
  if (!b)
    return fail(CT_ERR_UNSUPPORTED, "%s: %s%sdevice.device_type=%d has no backend registered in this process", fn, arg,
                dot, device.device_type);
  return fail(CT_ERR_NOT_FOUND, "%s: %s%sdevice.device_id=%d but the %s backend has %d device(s)", fn, arg, dot,
              device.device_id, b->dev.name, b->num_devices);
}

namespace {
bool has_slot(const CTKernelInterface& k, int32_t kind) {
  switch (kind) {
    case CT_KIND_UNARY:
    case CT_KIND_UNARY_PARAM:
    case CT_KIND_TERNARY:
    case CT_KIND_CAST: return k.elementwise != nullptr;
    case CT_KIND_BINARY: return k.binary != nullptr;
    case CT_KIND_REDUCE: return k.reduce != nullptr;
    case CT_KIND_ALONG_AXIS: return k.along_axis != nullptr;
    case CT_KIND_NN: return k.nn_plan_create && k.nn_plan_execute && k.nn_plan_destroy;
    case CT_KIND_INDEX: return k.index != nullptr;
    default: return false;
  }
}
}  // namespace

CTStatus ask_kernels(const Backend* b, const CTSupportQuery& q, const CTKernelInterface** out) {
  const bool cacheable = q.device_id == 0 && q.kind != CT_KIND_CAST && q.op >= 0 && q.op < b->cache_ops &&
                         q.dt >= 0 && q.dt < CT_DT_COUNT;
  std::atomic<uint8_t>* slot = cacheable ? &b->cache[(size_t)q.op * CT_DT_COUNT + q.dt] : nullptr;
  const OpDef* d = op_def(q.op);
  // When every table refuses, the reason is the one of the table that
  // brought the op's kernels (the built-in tables for a built-in op, the
  // op's plugin for a plugin op), else the first refusal: a plugin's table
  // asked about an op it never meant to run must not replace the device's
  // own reason ("oneDNN has no matmul for float16 on this CPU").
  CTStatus why = CT_ERR_UNSUPPORTED;
  std::string why_msg;
  int why_rank = 0;  // 2: the op's own table, 1: another table
  bool asked = false;
  for (int32_t i = 0; i < b->num_kernels; ++i) {
    const CTKernelInterface& k = b->kernels[i];
    if (!has_slot(k, q.kind)) continue;
    clear_error();
    const CTStatus s = k.supports(&q);  // a plugin's code: the call's read section keeps it loaded
    asked = true;
    if (s == CT_OK) {
      clear_error();  // an earlier table's "no" is not this call's message
      if (slot) slot->store((uint8_t)(i + 1), std::memory_order_relaxed);
      *out = &k;
      return CT_OK;
    }
    const int rank = b->kernel_owner[i] == (d ? d->owner : nullptr) ? 2 : 1;
    if (rank > why_rank) {
      why_rank = rank;
      why = s;
      why_msg = ct_last_error();
      if (why_msg.empty())
        why_msg = std::string(q.fn) + ": the " + k.name + " kernels do not run " + (d ? d->name : "this op") +
                  " for " + (q.dt >= 0 && q.dt < CT_DT_COUNT ? dtype_name(q.dt) : "this dtype");
    }
  }
  if (!asked)
    return fail(CT_ERR_UNSUPPORTED, "%s: the %s device has no kernels for %s ops (%s for %s)", q.fn, b->dev.name,
                d ? kind_name(d->kind) : "these", d ? d->name : "?",
                q.dt >= 0 && q.dt < CT_DT_COUNT ? dtype_name(q.dt) : "this dtype");
  return fail(why == CT_OK ? CT_ERR_INTERNAL : why, "%s", why_msg.c_str());
}

CTStatus check_supported(const char* fn, int32_t op, CTDevice device, CTDataType dtype, const CTDataType* out_dtype) {
  const OpDef* d = op_def(op);
  if (!d) return no_op(fn, op);
  char dbuf[64];
  const int32_t dt = dtype_index(dtype);
  if (dt < 0)
    return fail(CT_ERR_UNSUPPORTED, "%s: dtype %s is not supported by ctensor", fn,
                describe_dtype(dbuf, sizeof dbuf, dtype));
  const int32_t odt = out_dtype ? dtype_index(*out_dtype) : -1;
  if (out_dtype && odt < 0)
    return fail(CT_ERR_UNSUPPORTED, "%s: dtype %s is not supported by ctensor", fn,
                describe_dtype(dbuf, sizeof dbuf, *out_dtype));
  if (!(d->dtypes & (1u << dt)))  // the op's rule first: it holds on every device
    return fail(CT_ERR_UNSUPPORTED, "%s: %s is not defined for %s: %s", fn, d->name, dtype_name(dt), d->dtype_rule);
  const Backend* b = find_backend(device.device_type);
  if (!b)
    return fail(CT_ERR_NOT_FOUND, "%s: device type %d has no backend registered in this process", fn,
                device.device_type);
  if (device.device_id < 0 || device.device_id >= b->num_devices)
    return fail(CT_ERR_NOT_FOUND, "%s: %s device %d does not exist", fn, b->dev.name, device.device_id);
  CTSupportQuery q = {sizeof(CTSupportQuery), op, fn, d->kind, dt, odt, device.device_id};
  const CTKernelInterface* k = nullptr;
  return find_kernels(b, q, &k);
}

}  // namespace ct

extern "C" {

CT_API const CTHost* ct_plugin_host(void) { return ct::host(); }

CT_API CTStatus ct_set_allocator(int32_t device_type, const CTAllocator* allocator) {
  CT_API_BEGIN("ct_set_allocator")
  if (allocator) {
    if (allocator->struct_size < sizeof(CTAllocator))
      return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_set_allocator: allocator->struct_size=%u is smaller than sizeof(CTAllocator)=%zu",
                      allocator->struct_size, sizeof(CTAllocator));
    if (!allocator->alloc || !allocator->free)
      return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_set_allocator: allocator->alloc and allocator->free must both be set");
  }
  std::lock_guard<std::mutex> lock(ct::g_alloc_mu);
  ct::AllocSlot* slot = nullptr;
  for (ct::AllocSlot& s : ct::g_allocators)
    if (s.device_type == device_type) slot = &s;
  if (!allocator) {
    if (slot) slot->device_type = -1;
    return CT_OK;
  }
  for (ct::AllocSlot& s : ct::g_allocators)
    if (!slot && s.device_type < 0) slot = &s;
  if (!slot) return ct::fail(CT_ERR_OUT_OF_MEMORY, "ct_set_allocator: allocators are installed for too many device types");
  slot->device_type = device_type;
  std::memcpy(&slot->a, allocator, sizeof(CTAllocator));
  return CT_OK;
  CT_API_END()
}

CT_API int32_t ct_device_count(void) {
  const ct::ReadSection section;
  const ct::Snapshot* s = ct::snapshot();
  int32_t n = 0;
  for (int32_t i = 0; i < s->count; ++i) n += s->b[i]->num_devices;
  return n;
}

CT_API CTStatus ct_device_info(int32_t index, CTDeviceInfo* info) {
  CT_API_BEGIN("ct_device_info")
  if (CTStatus s = ct::check_struct_size("ct_device_info", "info", info, offsetof(CTDeviceInfo, name))) return s;
  const ct::Snapshot* snap = ct::snapshot();
  int32_t rest = index;
  for (int32_t i = 0; index >= 0 && i < snap->count; ++i) {
    const ct::Backend* b = snap->b[i];
    const int32_t n = b->num_devices;
    if (rest >= n) {
      rest -= n;
      continue;
    }
    CTDeviceInfo full;
    std::memset(&full, 0, sizeof full);
    full.struct_size = (uint32_t)sizeof full;
    if (CTStatus s = b->dev.device_info(rest, &full))
      return s;
    full.struct_size = (uint32_t)sizeof full;
    ct::copy_struct_out(info, full);
    return CT_OK;
  }
  return ct::fail(CT_ERR_NOT_FOUND, "ct_device_info: index=%d but there are %d device(s)", index, ct_device_count());
  CT_API_END()
}

CT_API CTStatus ct_malloc(CTDevice device, size_t bytes, void** ptr) {
  CT_API_BEGIN("ct_malloc")
  if (!ptr) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_malloc: ptr is NULL");
  const ct::Backend* b = nullptr;
  if (CTStatus s = ct::check_device("ct_malloc", nullptr, device, &b)) return s;
  if (!b->dev.malloc) return ct::fail(CT_ERR_UNSUPPORTED, "ct_malloc: the %s backend allocates no memory", b->dev.name);
  return b->dev.malloc(device.device_id, bytes, ptr);
  CT_API_END()
}

CT_API void ct_free(CTDevice device, void* ptr) {
  const ct::ReadSection section;
  ct::clear_error();
  if (!ptr) return;
  const ct::Backend* b = ct::find_backend(device.device_type);
  if (b && b->dev.free) b->dev.free(device.device_id, ptr);
}

CT_API CTStatus ct_synchronize(CTDevice device, void* stream) {
  CT_API_BEGIN("ct_synchronize")
  const ct::Backend* b = nullptr;
  if (CTStatus s = ct::check_device("ct_synchronize", nullptr, device, &b)) return s;
  if (CTStatus s = ct::check_stream(b, "ct_synchronize", device.device_id, stream)) return s;
  if (!b->dev.synchronize) return CT_OK;
  return b->dev.synchronize(device.device_id, stream);
  CT_API_END()
}

}  // extern "C"
