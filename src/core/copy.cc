// copy.cc — ct_copy and ct_cast between any two devices: within a device
// through its kernels or its copy slot, between a device and the host
// through the device's copy slot, between two other devices staged through
// host memory.
#include <cinttypes>
#include <cstdlib>
#include <cstring>

#include "core/api_internal.h"
#include "core/backends.h"
#include "core/error.h"
#include "core/library.h"
#include "core/registry.h"
#include "core/validate.h"

namespace ct {
namespace {

bool same_device(CTDevice a, CTDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; }

// The backend that moves data between `dev`'s memory and the host: its own
// copy slot, or the CPU's when its memory is host-accessible.
const Backend* mover_for(const Backend* b) {
  if (b->dev.copy) return b;
  if (b->dev.host_accessible) {
    const Backend* cpu = find_backend(CT_CPU);
    if (cpu && cpu->dev.copy) return cpu;
  }
  return nullptr;
}

CTStatus no_path(const char* fn, const Backend* b) {
  return fail(CT_ERR_UNSUPPORTED, "%s: the %s device has no copy to or from the host, and its memory is not host-accessible",
              fn, b->dev.name);
}

CTStatus run_copy(const char* fn, const Backend* mover, int32_t dt, const CTensor* src, const CTensor* dst,
                  void* stream) {
  CTCopyCall call;
  call.struct_size = sizeof call;
  call.dt = dt;
  call.fn = fn;
  call.src = src;
  call.dst = dst;
  call.stream = stream;
  return mover->dev.copy(&call);
}

// A compact tensor over `data` with t's shape and dtype on `device`.
CTensor compact_like(const CTensor* t, CTDataType dtype, CTDevice device, void* data) {
  CTensor c = *t;
  c.data = data;
  c.device = device;
  c.dtype = dtype;
  c.strides = nullptr;
  c.byte_offset = 0;
  return c;
}

// Validated: src and dst are valid, same shape and dtype, on different devices.
CTStatus copy_between(const char* fn, const Backend* sb, const Backend* db, const CTensor* src,
                      const TensorFacts& sf, const CTensor* dst, void* stream) {
  if (sf.numel == 0) return CT_OK;
  const bool src_cpu = src->device.device_type == CT_CPU, dst_cpu = dst->device.device_type == CT_CPU;
  if (src_cpu || dst_cpu) {  // one side is the host: the other device's copy slot does it on its stream
    const Backend* m = mover_for(src_cpu ? db : sb);
    if (!m) return no_path(fn, src_cpu ? db : sb);
    return run_copy(fn, m, sf.dt, src, dst, stream);
  }
  // Two devices of one backend: its own copy moves data between them directly.
  if (sb == db && sb->dev.copy) return run_copy(fn, sb, sf.dt, src, dst, stream);
  // Two devices that are not the host: stage through host memory, synchronously.
  const Backend* ms = mover_for(sb);
  const Backend* md = mover_for(db);
  if (!ms) return no_path(fn, sb);
  if (!md) return no_path(fn, db);
  size_t bytes = 0;
  if (__builtin_mul_overflow((size_t)sf.numel, (size_t)sf.itemsize, &bytes))
    return fail(CT_ERR_OUT_OF_MEMORY, "%s: %" PRId64 " elements do not fit a host staging buffer", fn, sf.numel);
  void* host = std::malloc(bytes ? bytes : 1);
  if (!host) return fail(CT_ERR_OUT_OF_MEMORY, "%s: could not allocate a %zu-byte host staging buffer", fn, bytes);
  const CTDevice cpu = {CT_CPU, 0};
  const CTensor h = compact_like(src, src->dtype, cpu, host);
  CTStatus s = run_copy(fn, ms, sf.dt, src, &h, nullptr);
  if (s == CT_OK && sb->dev.synchronize) s = sb->dev.synchronize(src->device.device_id, nullptr);
  if (s == CT_OK) s = run_copy(fn, md, sf.dt, &h, dst, stream);
  if (s == CT_OK && db->dev.synchronize) s = db->dev.synchronize(dst->device.device_id, stream);
  std::free(host);
  return s;
}

// The checks of a copy between two devices; *sb and *db are their backends.
CTStatus check_cross(const char* fn, const char* xn, const CTensor* x, TensorFacts* xf, const char* on,
                     const CTensor* out, TensorFacts* of, void* stream, const Backend** sb, const Backend** db) {
  if (CTStatus s = check_tensor(fn, xn, x, xf)) return s;
  if (CTStatus s = check_tensor(fn, on, out, of)) return s;
  if (CTStatus s = check_device(fn, xn, x->device, sb)) return s;
  if (CTStatus s = check_device(fn, on, out->device, db)) return s;
  if (CTStatus s = check_same_shape(fn, xn, x, on, out)) return s;
  if (CTStatus s = check_output_layout(fn, on, out)) return s;
  // The stream belongs to the side that is not the host (dst's when neither is).
  const bool use_src = out->device.device_type == CT_CPU && x->device.device_type != CT_CPU;
  return check_stream(use_src ? *sb : *db, fn, use_src ? x->device.device_id : out->device.device_id, stream);
}

}  // namespace

CTStatus cast_across_devices(const char* fn, const CTensor* x, const CTensor* out, void* stream, int32_t cast_mode) {
  TensorFacts xf, of;
  const Backend *sb = nullptr, *db = nullptr;
  if (CTStatus s = check_cross(fn, "x", x, &xf, "out", out, &of, stream, &sb, &db)) return s;
  if (xf.dt == of.dt) return copy_between(fn, sb, db, x, xf, out, stream);
  // Convert on out's device: copy x there as it is, then cast in place of the copy.
  const OpDef* d = op_def(CT_OP_CAST);
  const CTSupportQuery q = {sizeof(CTSupportQuery), CT_OP_CAST, fn, d->kind, xf.dt, of.dt, out->device.device_id};
  const CTKernelInterface* k = nullptr;
  if (CTStatus s = find_kernels(db, q, &k)) return s;
  if (of.numel == 0) return CT_OK;
  size_t bytes = 0;
  if (__builtin_mul_overflow((size_t)xf.numel, (size_t)xf.itemsize, &bytes))
    return fail(CT_ERR_OUT_OF_MEMORY, "%s: %" PRId64 " elements do not fit one buffer", fn, xf.numel);
  // The stream belongs to x's device when out is the host (check_cross): the
  // copy runs on it, and the host must wait for that copy before it converts
  // (on the CPU's default stream). Otherwise the stream is out's device's.
  const bool on_host = out->device.device_type == CT_CPU;
  void* cast_stream = on_host ? nullptr : stream;
  // The temporary comes from the caller's allocator for out's device type
  // (or the backend's default_allocator): never allocated behind its back.
  void* tmp = nullptr;
  if (CTStatus s = temp_alloc(fn, out->device, bytes, cast_stream, &tmp)) return s;
  const CTensor t = compact_like(x, x->dtype, out->device, tmp);
  static const char* const names[] = {"x"};
  const CTensor* tp = &t;
  CTStatus s = copy_between(fn, sb, db, x, xf, &t, stream);
  if (s == CT_OK && on_host && sb->dev.synchronize) s = sb->dev.synchronize(x->device.device_id, stream);
  if (s == CT_OK) s = run_elementwise(fn, CT_OP_CAST, &tp, names, 1, nullptr, 0, out, "out", cast_stream, cast_mode);
  if (s == CT_OK && db->dev.synchronize) s = db->dev.synchronize(out->device.device_id, cast_stream);
  temp_free(out->device, tmp, cast_stream);
  return s;
}

}  // namespace ct

extern "C" {

CT_API CTStatus ct_copy(const CTensor* src, CTensor* dst, void* stream) {
  CT_API_BEGIN("ct_copy")
  if (src && dst &&
      (src->dtype.code != dst->dtype.code || src->dtype.bits != dst->dtype.bits || src->dtype.lanes != dst->dtype.lanes)) {
    char a[64], b[64];
    return ct::fail(CT_ERR_DTYPE_MISMATCH, "ct_copy: dst.dtype=%s differs from src.dtype=%s (use ct_cast to convert)",
                    ct::describe_dtype(b, sizeof b, dst->dtype), ct::describe_dtype(a, sizeof a, src->dtype));
  }
  static const char* const names[] = {"src"};
  if (!src || !dst || ct::same_device(src->device, dst->device)) {
    // One device: its cast kernel (same dtype), or its copy slot when it has no such kernel.
    const ct::Backend* b = nullptr;
    if (dst && ct::find_backend(dst->device.device_type)) b = ct::find_backend(dst->device.device_type);
    const int32_t dt = src ? ct::dtype_index(src->dtype) : -1;
    if (b && dt >= 0 && b->dev.copy && ct::check_supported("ct_copy", CT_OP_CAST, dst->device, src->dtype) != CT_OK) {
      ct::clear_error();
      ct::TensorFacts sf, df;
      const ct::Backend *sb = nullptr, *db = nullptr;
      if (CTStatus s = ct::check_tensor("ct_copy", "src", src, &sf)) return s;
      if (CTStatus s = ct::check_tensor("ct_copy", "dst", dst, &df)) return s;
      if (CTStatus s = ct::check_device("ct_copy", "dst", dst->device, &db)) return s;
      if (!db->dev.data_is_address) sf.not_address = df.not_address = true;
      sb = db;
      (void)sb;
      if (CTStatus s = ct::check_same_shape("ct_copy", "src", src, "dst", dst)) return s;
      if (CTStatus s = ct::check_output_layout("ct_copy", "dst", dst)) return s;
      if (CTStatus s = ct::check_overlap("ct_copy", "dst", dst, df, "src", src, sf)) return s;
      if (CTStatus s = ct::check_stream(db, "ct_copy", dst->device.device_id, stream)) return s;
      if (sf.numel == 0) return CT_OK;
      return ct::run_copy("ct_copy", db, sf.dt, src, dst, stream);
    }
    return ct::run_elementwise("ct_copy", CT_OP_CAST, &src, names, 1, nullptr, 0, dst, "dst", stream);
  }
  ct::TensorFacts sf, df;
  const ct::Backend *sb = nullptr, *db = nullptr;
  if (CTStatus s = ct::check_cross("ct_copy", "src", src, &sf, "dst", dst, &df, stream, &sb, &db)) return s;
  return ct::copy_between("ct_copy", sb, db, src, sf, dst, stream);
  CT_API_END()
}

}  // extern "C"
