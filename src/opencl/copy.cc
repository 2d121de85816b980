// copy.cc — the device table's memory slots: buffers (CTensor.data is a
// cl_mem), copies between host and device and within a device (any
// strides), synchronize, streams (the caller's cl_command_queue).
//
// Copies are asynchronous on the queue: one from compact host memory is
// clEnqueueWriteBuffer without blocking, so the host memory must stay as it
// is until the caller synchronizes (as cudaMemcpyAsync's from pinned
// memory); one to host memory is complete only after ct_synchronize. A
// strided host side goes through a host staging buffer without blocking
// either: packed before a non-blocking write, kept until the write has read
// it; read into without blocking, and unpacked into the caller's strided
// memory by the queue's next ct_synchronize (or earlier, by a later copy on
// the queue that finds the read complete).
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "backend.h"

namespace ctcl {

namespace {

bool host_compact(const CTensor* t) { return ct_is_compact(t) != 0; }

// A strided copy's host staging, pending on its queue until its transfer
// has completed: an upload's packed bytes (freed then), or a download's
// bytes and the strided host tensor they are unpacked into then.
struct Staged {
  cl_command_queue q = nullptr;
  cl_event ev = nullptr;
  std::vector<unsigned char> bytes;
  bool unpack = false;
  void* data = nullptr;
  uint64_t off = 0;
  CTDataType dtype{};
  std::vector<int64_t> shape, strides;
};
std::mutex g_staged_mu;
std::vector<Staged>* g_staged = new std::vector<Staged>();  // in enqueue order

// Finishes queue q's staged copies in order: all of them (wait: after the
// queue has finished), else those up to the first whose transfer has not
// completed. A failed transfer is dropped without unpacking (clFinish or
// the transfer's own call reported it).
void finish_staged(cl_command_queue q, bool wait) {
  std::lock_guard<std::mutex> lock(g_staged_mu);
  std::vector<Staged>& v = *g_staged;
  size_t kept = 0;
  bool stop = false;
  for (size_t i = 0; i < v.size(); ++i) {
    Staged& s = v[i];
    cl_int status = CL_COMPLETE;
    if (s.q == q && !stop) {
      if (wait) clWaitForEvents(1, &s.ev);  // done already unless the queue failed: never free bytes in flight
      clGetEventInfo(s.ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    }
    if (s.q != q || stop || status > CL_COMPLETE) {  // another queue's, or still in flight
      if (s.q == q) stop = true;
      if (kept != i) v[kept] = std::move(s);
      ++kept;
      continue;
    }
    if (s.unpack && status == CL_COMPLETE) {
      const CTensor t{s.data, {CT_CPU, 0}, (int32_t)s.shape.size(), s.dtype, s.shape.data(), s.strides.data(), s.off};
      host_pack(&t, s.bytes.data(), false);
    }
    clReleaseEvent(s.ev);
  }
  v.resize(kept);
}

void stage(cl_command_queue q, cl_event ev, std::vector<unsigned char>&& bytes, const CTensor* unpack_into) {
  Staged s;
  s.q = q;
  s.ev = ev;
  s.bytes = std::move(bytes);
  if (unpack_into) {
    s.unpack = true;
    s.data = unpack_into->data;
    s.off = unpack_into->byte_offset;
    s.dtype = unpack_into->dtype;
    for (int32_t d = 0; d < unpack_into->ndim; ++d)
      s.shape.push_back(unpack_into->shape[d]), s.strides.push_back(stride_of(unpack_into, d));
  }
  std::lock_guard<std::mutex> lock(g_staged_mu);
  g_staged->push_back(std::move(s));
}

// host -> one OpenCL tensor.
CTStatus upload(const char* fn, Device* d, const Queue& q, int32_t dt, const CTensor* src, const CTensor* dst,
                void* stream) {
  const size_t bytes = (size_t)numel_of(dst) * itemsize_of(dst);
  std::vector<unsigned char> staging;
  const void* from = static_cast<const unsigned char*>(src->data) + src->byte_offset;
  if (!host_compact(src)) {
    staging.resize(bytes);
    host_pack(src, staging.data(), true);
    from = staging.data();
  }
  finish_staged(q.q, false);
  cl_event ev = nullptr;
  cl_event* evp = staging.empty() ? nullptr : &ev;  // staged: kept until this write has read it
  if (host_compact(dst)) {
    const cl_int e = clEnqueueWriteBuffer(q.q, mem_of(dst), CL_FALSE, dst->byte_offset, bytes, from, 0, nullptr, evp);
    if (e != CL_SUCCESS) return cl_fail(fn, "clEnqueueWriteBuffer", e);
    if (evp) stage(q.q, ev, std::move(staging), nullptr);
    return CT_OK;
  }
  // a strided device side: write a compact temporary, then the copy kernel scatters it
  const CTDevice dev = dst->device;
  void* tmp = nullptr;
  if (CTStatus s = g_host->temp_alloc(dev, bytes, stream, &tmp)) return s;
  CTStatus s = CT_OK;
  const cl_int e = clEnqueueWriteBuffer(q.q, static_cast<cl_mem>(tmp), CL_FALSE, 0, bytes, from, 0, nullptr, evp);
  if (e != CL_SUCCESS) s = cl_fail(fn, "clEnqueueWriteBuffer", e);
  else if (evp) stage(q.q, ev, std::move(staging), nullptr);
  if (s == CT_OK) {
    const CTensor t = compact_view(dst, tmp, 0, dev);
    s = device_copy(fn, d, q, dt, &t, dst);
  }
  g_host->temp_free(dev, tmp, stream);
  return s;
}

// one OpenCL tensor -> host.
CTStatus download(const char* fn, Device* d, const Queue& q, int32_t dt, const CTensor* src, const CTensor* dst,
                  void* stream) {
  const size_t bytes = (size_t)numel_of(src) * itemsize_of(src);
  const bool direct = host_compact(dst);
  std::vector<unsigned char> staging;
  void* to = static_cast<unsigned char*>(dst->data) + dst->byte_offset;
  if (!direct) {
    staging.resize(bytes);
    to = staging.data();
  }
  finish_staged(q.q, false);
  cl_event ev = nullptr;
  cl_event* evp = direct ? nullptr : &ev;  // staged: unpacked once this read has landed
  CTStatus s = CT_OK;
  if (host_compact(src)) {
    const cl_int e = clEnqueueReadBuffer(q.q, mem_of(src), CL_FALSE, src->byte_offset, bytes, to, 0, nullptr, evp);
    if (e != CL_SUCCESS) s = cl_fail(fn, "clEnqueueReadBuffer", e);
  } else {
    const CTDevice dev = src->device;
    void* tmp = nullptr;
    if (CTStatus a = g_host->temp_alloc(dev, bytes, stream, &tmp)) return a;
    const CTensor t = compact_view(src, tmp, 0, dev);
    s = device_copy(fn, d, q, dt, src, &t);
    if (s == CT_OK) {
      const cl_int e = clEnqueueReadBuffer(q.q, static_cast<cl_mem>(tmp), CL_FALSE, 0, bytes, to, 0, nullptr, evp);
      if (e != CL_SUCCESS) s = cl_fail(fn, "clEnqueueReadBuffer", e);
    }
    g_host->temp_free(dev, tmp, stream);
  }
  if (s == CT_OK && !direct) stage(q.q, ev, std::move(staging), dst);
  return s;
}

}  // namespace

void forget_staged() {
  std::lock_guard<std::mutex> lock(g_staged_mu);
  for (Staged& s : *g_staged) clReleaseEvent(s.ev);
  g_staged->clear();
}

CTStatus cl_malloc(int32_t id, size_t bytes, void** ptr) {
  Device* d = device(id);
  if (!d) return g_host->set_error(CT_ERR_NOT_FOUND, "ct_malloc: there is no OpenCL device %d", (int)id);
  cl_int e = CL_SUCCESS;
  cl_mem m = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes ? bytes : 1, nullptr, &e);
  if (e != CL_SUCCESS) {
    if (e == CL_INVALID_BUFFER_SIZE || e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_HOST_MEMORY)
      return g_host->set_error(CT_ERR_OUT_OF_MEMORY, "ct_malloc: opencl:%d (%s) cannot allocate %zu bytes: %s (%d)",
                               (int)id, d->name.c_str(), bytes, cl_error_name(e), (int)e);
    return cl_fail("ct_malloc", "clCreateBuffer", e);
  }
  *ptr = m;
  return CT_OK;
}

void cl_free(int32_t, void* ptr) {
  if (ptr) clReleaseMemObject(static_cast<cl_mem>(ptr));  // deferred by OpenCL until queued work using it ends
}

CTStatus cl_temp_alloc(void*, CTDevice device, size_t bytes, void*, void** ptr) {
  return cl_malloc(device.device_id, bytes, ptr);
}

void cl_temp_free(void*, CTDevice device, void* ptr, void*) { cl_free(device.device_id, ptr); }

CTStatus cl_check_stream(const char* fn, int32_t id, void* stream) {
  Device* d = device(id);
  if (!d) return g_host->set_error(CT_ERR_NOT_FOUND, "%s: there is no OpenCL device %d", fn, (int)id);
  Queue q;
  return queue_of(fn, d, stream, &q);
}

CTStatus cl_synchronize(int32_t id, void* stream) {
  Device* d = device(id);
  if (!d) return g_host->set_error(CT_ERR_NOT_FOUND, "ct_synchronize: there is no OpenCL device %d", (int)id);
  Queue q;
  if (CTStatus s = queue_of("ct_synchronize", d, stream, &q)) return s;
  const cl_int e = clFinish(q.q);
  finish_staged(q.q, true);  // the strided copies to host land now
  if (e != CL_SUCCESS) return cl_fail("ct_synchronize", "clFinish", e);
  cl_int flag = 0;
  if (CTStatus s = take_error_flag("ct_synchronize", d, q.ctx, q.q, &flag)) return s;
  if (flag == kFlagPoolIndex)
    return g_host->set_error(CT_ERR_INVALID_ARGUMENT,
                             "ct_synchronize: a max_pool2d_backward on opencl:%d had indices outside their output's "
                             "pooling window (found on the device after the call returned; the CPU refuses such a "
                             "call): its dx lacks their gradients",
                             (int)id);
  return CT_OK;
}

CTStatus cl_copy(const CTCopyCall* call) {
  const char* fn = call->fn;
  const CTensor *src = call->src, *dst = call->dst;
  const bool src_cl = src->device.device_type == CT_OPENCL, dst_cl = dst->device.device_type == CT_OPENCL;
  Device* d = device(dst_cl ? dst->device.device_id : src->device.device_id);
  if (!d) return g_host->set_error(CT_ERR_NOT_FOUND, "%s: there is no such OpenCL device", fn);
  Queue q;
  if (CTStatus s = queue_of(fn, d, call->stream, &q)) return s;
  if (src_cl && dst_cl) {
    if (src->device.device_id == dst->device.device_id) return device_copy(fn, d, q, call->dt, src, dst);
    // two OpenCL devices (two contexts): through host memory
    Device* sd = device(src->device.device_id);
    if (!sd) return g_host->set_error(CT_ERR_NOT_FOUND, "%s: there is no OpenCL device %d", fn, (int)src->device.device_id);
    const size_t bytes = (size_t)numel_of(src) * itemsize_of(src);
    std::vector<unsigned char> host(bytes ? bytes : 1);
    const CTensor h = compact_view(src, host.data(), 0, CTDevice{CT_CPU, 0});
    Queue sq;
    queue_of(fn, sd, nullptr, &sq);
    CTStatus s = download(fn, sd, sq, call->dt, src, &h, nullptr);
    if (s == CT_OK) {
      const cl_int e = clFinish(sq.q);
      if (e != CL_SUCCESS) s = cl_fail(fn, "clFinish", e);
    }
    if (s == CT_OK) s = upload(fn, d, q, call->dt, &h, dst, call->stream);
    if (s == CT_OK) {
      const cl_int e = clFinish(q.q);  // the staging buffer goes out of scope
      if (e != CL_SUCCESS) s = cl_fail(fn, "clFinish", e);
    }
    return s;
  }
  if (dst_cl) return upload(fn, d, q, call->dt, src, dst, call->stream);
  return download(fn, d, q, call->dt, src, dst, call->stream);
}

}  // namespace ctcl
