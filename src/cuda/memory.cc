// memory.cc — the device table's memory slots: device memory (CTensor.data
// is a device address), copies between host and device, within a device
// and between devices (any strides), synchronize (which also reports what
// the device's error flag holds: nn_internal.h), streams (the caller's
// cudaStream_t; NULL is the legacy default stream), and the default
// temporary allocator: the stream-ordered pool of cudaMallocAsync, so a
// sequence of ops never calls cudaMalloc or synchronises and can be
// captured into a CUDA graph.
//
// Copies are asynchronous on the stream (cudaMemcpyAsync's rules: from
// pageable host memory the call returns once the bytes are staged; to
// pageable host memory, once they have landed). A strided host side goes
// through a compact host buffer: packed before an upload; unpacked after a
// download by a host function in stream order (cudaLaunchHostFunc), which
// also frees the buffer. A strided device side goes through a compact
// temporary and the copy kernel.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend.h"
#include "nn_internal.h"

namespace ctcu {

namespace {

bool compact(const CTensor* t) { return ct_is_compact(t) != 0; }

char* addr(const CTensor* t) { return static_cast<char*>(t->data) + t->byte_offset; }

// A download's host staging, unpacked into the caller's strided tensor and
// freed by a host function once the transfer has landed.
struct Unpack {
  std::vector<unsigned char> bytes;
  void* data;
  uint64_t off;
  CTDataType dtype;
  std::vector<int64_t> shape, strides;
};

void CUDART_CB unpack_and_free(void* user) {
  Unpack* u = static_cast<Unpack*>(user);
  const CTensor t{u->data, {CT_CPU, 0}, (int32_t)u->shape.size(), u->dtype, u->shape.data(), u->strides.data(), u->off};
  host_pack(&t, u->bytes.data(), false);
  delete u;
}

void CUDART_CB free_bytes(void* user) { delete static_cast<std::vector<unsigned char>*>(user); }

// host -> one CUDA tensor (device d current).
CTStatus upload(const char* fn, Device* d, cudaStream_t s, int32_t dt, const CTensor* src, const CTensor* dst,
                void* stream) {
  const size_t bytes = (size_t)numel_of(dst) * itemsize_of(dst);
  std::vector<unsigned char>* staging = nullptr;
  const void* from = addr(src);
  if (!compact(src)) {
    staging = new std::vector<unsigned char>(bytes);
    host_pack(src, staging->data(), true);
    from = staging->data();
  }
  CTStatus st = CT_OK;
  void* tmp = nullptr;
  void* to = addr(dst);
  if (!compact(dst) && (st = g_host->temp_alloc(dst->device, bytes, stream, &tmp)) == CT_OK) to = tmp;
  if (st == CT_OK) {
    const cudaError_t e = cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess) st = cuda_fail(fn, "cudaMemcpyAsync (host to device)", e);
  }
  if (st == CT_OK && tmp) {
    const CTensor t = compact_view(dst, tmp, 0, dst->device);
    st = device_copy(fn, d, s, dt, &t, dst);
  }
  if (tmp) g_host->temp_free(dst->device, tmp, stream);
  if (staging) {  // freed in stream order, after the transfer has read it
    if (st != CT_OK || cudaLaunchHostFunc(s, free_bytes, staging) != cudaSuccess) {
      cudaStreamSynchronize(s);
      delete staging;
    }
  }
  return st;
}

// one CUDA tensor -> host (device d current).
CTStatus download(const char* fn, Device* d, cudaStream_t s, int32_t dt, const CTensor* src, const CTensor* dst,
                  void* stream) {
  const size_t bytes = (size_t)numel_of(src) * itemsize_of(src);
  Unpack* u = nullptr;
  void* to = addr(dst);
  if (!compact(dst)) {
    u = new Unpack{std::vector<unsigned char>(bytes), dst->data, dst->byte_offset, dst->dtype, {}, {}};
    for (int32_t k = 0; k < dst->ndim; ++k) u->shape.push_back(dst->shape[k]), u->strides.push_back(stride_of(dst, k));
    to = u->bytes.data();
  }
  CTStatus st = CT_OK;
  void* tmp = nullptr;
  const void* from = addr(src);
  if (!compact(src)) {
    st = g_host->temp_alloc(src->device, bytes, stream, &tmp);
    if (st == CT_OK) {
      const CTensor t = compact_view(src, tmp, 0, src->device);
      st = device_copy(fn, d, s, dt, src, &t);
      from = tmp;
    }
  }
  if (st == CT_OK) {
    const cudaError_t e = cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToHost, s);
    if (e != cudaSuccess) st = cuda_fail(fn, "cudaMemcpyAsync (device to host)", e);
  }
  if (tmp) g_host->temp_free(src->device, tmp, stream);
  if (u) {
    if (st != CT_OK) {
      delete u;
    } else if (const cudaError_t e = cudaLaunchHostFunc(s, unpack_and_free, u)) {
      cudaStreamSynchronize(s);  // the bytes have landed: unpack here
      unpack_and_free(u);
      if (e != cudaSuccess) cudaGetLastError();
    }
  }
  return st;
}

// Between two CUDA devices (dst's current; the stream is dst's): src's
// bytes (compact, or the whole span its strides reach) to a temporary on
// dst's device by a peer copy, then the copy kernel there unless both are
// compact.
CTStatus peer(const char* fn, Device* d, cudaStream_t s, int32_t dt, const CTensor* src, const CTensor* dst,
              void* stream) {
  const size_t is = itemsize_of(src);
  if (compact(src) && compact(dst)) {
    const cudaError_t e = cudaMemcpyPeerAsync(addr(dst), dst->device.device_id, addr(src), src->device.device_id,
                                              (size_t)numel_of(src) * is, s);
    return e == cudaSuccess ? CT_OK : cuda_fail(fn, "cudaMemcpyPeerAsync", e);
  }
  int64_t lo = 0, hi = 0;  // the element span src's strides reach, from its first element
  for (int32_t k = 0; k < src->ndim; ++k) {
    const int64_t st = stride_of(src, k) * (src->shape[k] - 1);
    (st < 0 ? lo : hi) += st;
  }
  const size_t span = (size_t)(hi - lo + 1) * is;
  void* tmp = nullptr;
  if (CTStatus st = g_host->temp_alloc(dst->device, span, stream, &tmp)) return st;
  CTStatus st = CT_OK;
  const cudaError_t e = cudaMemcpyPeerAsync(tmp, dst->device.device_id, addr(src) + lo * (int64_t)is,
                                            src->device.device_id, span, s);
  if (e != cudaSuccess) st = cuda_fail(fn, "cudaMemcpyPeerAsync", e);
  if (st == CT_OK) {
    CTensor t = *src;  // src's view, rebased on the temporary
    t.data = tmp;
    t.device = dst->device;
    t.byte_offset = (uint64_t)(-lo * (int64_t)is);
    st = device_copy(fn, d, s, dt, &t, dst);
  }
  g_host->temp_free(dst->device, tmp, stream);
  return st;
}

}  // namespace

CTStatus cu_malloc(int32_t id, size_t bytes, void** ptr) {
  Device* d = device(id);
  if (!d) return g_host->set_error(CT_ERR_NOT_FOUND, "ct_malloc: there is no CUDA device %d", (int)id);
  DeviceGuard guard(id);
  if (guard.error() != cudaSuccess) return cuda_fail("ct_malloc", "cudaSetDevice", guard.error());
  const cudaError_t e = cudaMalloc(ptr, bytes ? bytes : 1);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return g_host->set_error(CT_ERR_OUT_OF_MEMORY, "ct_malloc: cuda:%d (%s) cannot allocate %zu bytes", (int)id,
                             d->name.c_str(), bytes);
  }
  return e == cudaSuccess ? CT_OK : cuda_fail("ct_malloc", "cudaMalloc", e);
}

void cu_free(int32_t id, void* ptr) {
  if (!ptr) return;
  DeviceGuard guard(id);
  cudaFree(ptr);  // synchronises the device, as cudaFree does: ct_free is not for hot paths
}

CTStatus cu_temp_alloc(void*, CTDevice device, size_t bytes, void* stream, void** ptr) {
  DeviceGuard guard(device.device_id);
  if (guard.error() != cudaSuccess) return cuda_fail("ct_temp_alloc", "cudaSetDevice", guard.error());
  const cudaError_t e = cudaMallocAsync(ptr, bytes ? bytes : 1, stream_of(stream));
  if (e == cudaSuccess) return CT_OK;
  cudaGetLastError();
  if (e == cudaErrorMemoryAllocation)
    return g_host->set_error(CT_ERR_OUT_OF_MEMORY, "cuda:%d: the stream-ordered pool cannot give %zu bytes of temporary memory",
                             (int)device.device_id, bytes);
  return cuda_fail("temporary memory", "cudaMallocAsync", e);
}

void cu_temp_free(void*, CTDevice device, void* ptr, void* stream) {
  if (!ptr) return;
  DeviceGuard guard(device.device_id);
  cudaFreeAsync(ptr, stream_of(stream));
}

CTStatus cu_check_stream(const char* fn, int32_t id, void* stream) {
  if (!device(id)) return g_host->set_error(CT_ERR_NOT_FOUND, "%s: there is no CUDA device %d", fn, (int)id);
  if (!stream) return CT_OK;
  int dev = -1;
  const cudaError_t e = cudaStreamGetDevice(stream_of(stream), &dev);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return g_host->set_error(CT_ERR_INVALID_ARGUMENT, "%s: stream %p is not a CUDA stream (cudaStreamGetDevice: %s)", fn,
                             stream, cudaGetErrorName(e));
  }
  if (dev != id)
    return g_host->set_error(CT_ERR_INVALID_ARGUMENT, "%s: stream %p belongs to cuda:%d, not to cuda:%d", fn, stream, dev,
                             (int)id);
  return CT_OK;
}

CTStatus cu_synchronize(int32_t id, void* stream) {
  if (!device(id)) return g_host->set_error(CT_ERR_NOT_FOUND, "ct_synchronize: there is no CUDA device %d", (int)id);
  DeviceGuard guard(id);
  if (guard.error() != cudaSuccess) return cuda_fail("ct_synchronize", "cudaSetDevice", guard.error());
  const cudaError_t e = cudaStreamSynchronize(stream_of(stream));
  if (e != cudaSuccess) return cuda_fail("ct_synchronize", "cudaStreamSynchronize", e);
  // What a kernel found after its op returned (the device's error flag, nn_pool.cc), reported once.
  if (take_error_flag(id) == kFlagPoolIndex)
    return g_host->set_error(CT_ERR_INVALID_ARGUMENT,
                             "ct_synchronize: a max_pool2d_backward on cuda:%d had indices outside their output's "
                             "pooling window (found on the device after the call returned; the CPU refuses such a "
                             "call): its dx lacks their gradients",
                             (int)id);
  return CT_OK;
}

CTStatus cu_copy(const CTCopyCall* call) {
  const char* fn = call->fn;
  const CTensor *src = call->src, *dst = call->dst;
  const bool src_cu = src->device.device_type == CT_CUDA, dst_cu = dst->device.device_type == CT_CUDA;
  const int32_t id = dst_cu ? dst->device.device_id : src->device.device_id;
  Device* d = device(id);
  if (!d) return g_host->set_error(CT_ERR_NOT_FOUND, "%s: there is no CUDA device %d", fn, (int)id);
  DeviceGuard guard(id);
  if (guard.error() != cudaSuccess) return cuda_fail(fn, "cudaSetDevice", guard.error());
  const cudaStream_t s = stream_of(call->stream);
  if (numel_of(dst) == 0) return CT_OK;
  if (src_cu && dst_cu) {
    if (src->device.device_id != dst->device.device_id) return peer(fn, d, s, call->dt, src, dst, call->stream);
    if (compact(src) && compact(dst)) {
      const cudaError_t e = cudaMemcpyAsync(addr(dst), addr(src), (size_t)numel_of(src) * itemsize_of(src),
                                            cudaMemcpyDeviceToDevice, s);
      return e == cudaSuccess ? CT_OK : cuda_fail(fn, "cudaMemcpyAsync (device to device)", e);
    }
    return device_copy(fn, d, s, call->dt, src, dst);
  }
  if (dst_cu) return upload(fn, d, s, call->dt, src, dst, call->stream);
  return download(fn, d, s, call->dt, src, dst, call->stream);
}

}  // namespace ctcu
