// runtime.cc — devices through the ICD loader, error names, queues, and the
// program cache: in memory per (context, source), on disk per (device,
// driver, options, source) so that a second process compiles nothing.
#include "runtime.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "gpu/disk_cache.h"

namespace ctcl {

BuildStats g_stats;

namespace {

std::vector<Device*>* g_devices = nullptr;

struct ProgramKey {
  cl_context ctx;
  std::string source;
  bool operator<(const ProgramKey& o) const { return ctx != o.ctx ? ctx < o.ctx : source < o.source; }
};
std::mutex g_prog_mu;
std::map<ProgramKey, Program*>* g_programs = nullptr;
std::map<std::pair<int32_t, cl_context>, cl_mem>* g_flags = nullptr;  // under g_prog_mu

std::string info_string(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, &s[0], nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, &s[0], nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

bool verbose() {
  static const bool v = [] {
    const char* e = std::getenv("CT_OPENCL_VERBOSE");
    return e && *e && std::strcmp(e, "0") != 0;
  }();
  return v;
}

std::string build_options(const Device* d) {
  std::string o = "-cl-std=CL1.2";
  if (d->fp32_correct_div) o += " -cl-fp32-correctly-rounded-divide-sqrt";
  return o;
}

std::string build_log(cl_program p, cl_device_id d) {
  size_t n = 0;
  clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
  std::string s(n, '\0');
  if (n) clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, n, &s[0], nullptr);
  while (!s.empty() && (s.back() == '\0' || s.back() == '\n')) s.pop_back();
  return s;
}

// The binary of a built program for its one device.
std::vector<unsigned char> program_binary(cl_program p) {
  size_t size = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0) return {};
  std::vector<unsigned char> bin(size);
  unsigned char* ptr = bin.data();
  if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != CL_SUCCESS) return {};
  return bin;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

const char* cl_error_name(cl_int e) {
  switch (e) {
#define N(x) case x: return #x;
    N(CL_SUCCESS) N(CL_DEVICE_NOT_FOUND) N(CL_DEVICE_NOT_AVAILABLE) N(CL_COMPILER_NOT_AVAILABLE)
    N(CL_MEM_OBJECT_ALLOCATION_FAILURE) N(CL_OUT_OF_RESOURCES) N(CL_OUT_OF_HOST_MEMORY)
    N(CL_PROFILING_INFO_NOT_AVAILABLE) N(CL_MEM_COPY_OVERLAP) N(CL_IMAGE_FORMAT_MISMATCH)
    N(CL_IMAGE_FORMAT_NOT_SUPPORTED) N(CL_BUILD_PROGRAM_FAILURE) N(CL_MAP_FAILURE)
    N(CL_MISALIGNED_SUB_BUFFER_OFFSET) N(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    N(CL_COMPILE_PROGRAM_FAILURE) N(CL_LINKER_NOT_AVAILABLE) N(CL_LINK_PROGRAM_FAILURE)
    N(CL_DEVICE_PARTITION_FAILED) N(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) N(CL_INVALID_VALUE)
    N(CL_INVALID_DEVICE_TYPE) N(CL_INVALID_PLATFORM) N(CL_INVALID_DEVICE) N(CL_INVALID_CONTEXT)
    N(CL_INVALID_QUEUE_PROPERTIES) N(CL_INVALID_COMMAND_QUEUE) N(CL_INVALID_HOST_PTR) N(CL_INVALID_MEM_OBJECT)
    N(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) N(CL_INVALID_IMAGE_SIZE) N(CL_INVALID_SAMPLER) N(CL_INVALID_BINARY)
    N(CL_INVALID_BUILD_OPTIONS) N(CL_INVALID_PROGRAM) N(CL_INVALID_PROGRAM_EXECUTABLE) N(CL_INVALID_KERNEL_NAME)
    N(CL_INVALID_KERNEL_DEFINITION) N(CL_INVALID_KERNEL) N(CL_INVALID_ARG_INDEX) N(CL_INVALID_ARG_VALUE)
    N(CL_INVALID_ARG_SIZE) N(CL_INVALID_KERNEL_ARGS) N(CL_INVALID_WORK_DIMENSION) N(CL_INVALID_WORK_GROUP_SIZE)
    N(CL_INVALID_WORK_ITEM_SIZE) N(CL_INVALID_GLOBAL_OFFSET) N(CL_INVALID_EVENT_WAIT_LIST) N(CL_INVALID_EVENT)
    N(CL_INVALID_OPERATION) N(CL_INVALID_GL_OBJECT) N(CL_INVALID_BUFFER_SIZE) N(CL_INVALID_MIP_LEVEL)
    N(CL_INVALID_GLOBAL_WORK_SIZE) N(CL_INVALID_PROPERTY) N(CL_INVALID_IMAGE_DESCRIPTOR)
    N(CL_INVALID_COMPILER_OPTIONS) N(CL_INVALID_LINKER_OPTIONS) N(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef N
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "an unknown OpenCL error";
  }
}

CTStatus cl_fail(const char* fn, const char* what, cl_int e) {
  return g_host->set_error(CT_ERR_BACKEND, "%s: OpenCL %s failed: %s (%d)", fn, what, cl_error_name(e), (int)e);
}

int32_t device_count() { return g_devices ? (int32_t)g_devices->size() : 0; }

Device* device(int32_t id) {
  if (!g_devices || id < 0 || id >= (int32_t)g_devices->size()) return nullptr;
  return (*g_devices)[(size_t)id];
}

CTStatus init_devices() {
  if (g_devices) return CT_OK;
  g_devices = new std::vector<Device*>();
  g_programs = new std::map<ProgramKey, Program*>();
  cl_uint np = 0;
  cl_int e = clGetPlatformIDs(0, nullptr, &np);
  if (e == -1001 || (e == CL_SUCCESS && np == 0)) return CT_OK;  // no platform: no devices
  if (e != CL_SUCCESS) return cl_fail("ct_plugin_init", "clGetPlatformIDs", e);
  std::vector<cl_platform_id> plats(np);
  clGetPlatformIDs(np, plats.data(), nullptr);
  for (cl_platform_id p : plats) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> devs(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devs.data(), nullptr);
    for (cl_device_id dv : devs) {
      cl_bool avail = CL_FALSE, compiler = CL_FALSE;
      clGetDeviceInfo(dv, CL_DEVICE_AVAILABLE, sizeof avail, &avail, nullptr);
      clGetDeviceInfo(dv, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler, nullptr);
      if (!avail || !compiler) continue;  // kernels are compiled at run time: a device without a compiler runs none
      cl_context ctx = clCreateContext(nullptr, 1, &dv, nullptr, nullptr, &e);
      if (e != CL_SUCCESS) continue;
      cl_command_queue q = clCreateCommandQueue(ctx, dv, 0, &e);
      if (e != CL_SUCCESS) {
        clReleaseContext(ctx);
        continue;
      }
      Device* d = new Device();
      d->id = (int32_t)g_devices->size();
      d->platform = p;
      d->dev = dv;
      d->ctx = ctx;
      d->queue = q;
      d->name = info_string(dv, CL_DEVICE_NAME);
      d->vendor = info_string(dv, CL_DEVICE_VENDOR);
      d->driver = info_string(dv, CL_DRIVER_VERSION);
      d->version = info_string(dv, CL_DEVICE_VERSION);
      d->platform_version = platform_string(p, CL_PLATFORM_VERSION);
      const std::string ext = info_string(dv, CL_DEVICE_EXTENSIONS);
      cl_device_fp_config dcfg = 0, fcfg = 0;
      clGetDeviceInfo(dv, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof dcfg, &dcfg, nullptr);
      clGetDeviceInfo(dv, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fcfg, &fcfg, nullptr);
      d->fp64 = ext.find("cl_khr_fp64") != std::string::npos && dcfg != 0;
      d->fp32_correct_div = (fcfg & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
      cl_device_type type = 0;
      clGetDeviceInfo(dv, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
      d->chunk = (type & CL_DEVICE_TYPE_CPU) ? 1024 : 1;
      if (const char* c = std::getenv("CT_OPENCL_CHUNK"))  // testing: a GPU's layout (1) on PoCL
        if (std::atoll(c) > 0) d->chunk = std::atoll(c);
      clGetDeviceInfo(dv, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->compute_units, &d->compute_units, nullptr);
      clGetDeviceInfo(dv, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global_mem, &d->global_mem, nullptr);
      clGetDeviceInfo(dv, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_wg, &d->max_wg, nullptr);
      clGetDeviceInfo(dv, CL_DEVICE_MAX_PARAMETER_SIZE, sizeof d->max_param, &d->max_param, nullptr);
      g_devices->push_back(d);
    }
  }
  return CT_OK;
}

void shutdown() {
  if (g_flags) {
    for (auto& kv : *g_flags) clReleaseMemObject(kv.second);
    delete g_flags;
    g_flags = nullptr;
  }
  if (g_programs) {
    for (auto& kv : *g_programs) delete kv.second;
    delete g_programs;
    g_programs = nullptr;
  }
  if (g_devices) {
    for (Device* d : *g_devices) {
      clFinish(d->queue);
      clReleaseCommandQueue(d->queue);
      clReleaseContext(d->ctx);
      delete d;
    }
    delete g_devices;
    g_devices = nullptr;
  }
}

CTStatus error_flag(const char* fn, Device* d, cl_context ctx, cl_mem* out) {
  std::lock_guard<std::mutex> lock(g_prog_mu);
  if (!g_flags) g_flags = new std::map<std::pair<int32_t, cl_context>, cl_mem>();
  cl_mem& m = (*g_flags)[{d->id, ctx}];
  if (!m) {
    cl_int zero = 0, e = CL_SUCCESS;
    m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &e);
    if (e != CL_SUCCESS) {
      m = nullptr;
      g_flags->erase({d->id, ctx});
      return cl_fail(fn, "clCreateBuffer (the device's error flag)", e);
    }
  }
  *out = m;
  return CT_OK;
}

CTStatus take_error_flag(const char* fn, Device* d, cl_context ctx, cl_command_queue q, cl_int* value) {
  *value = 0;
  cl_mem m = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_prog_mu);
    if (!g_flags) return CT_OK;
    auto it = g_flags->find({d->id, ctx});
    if (it == g_flags->end()) return CT_OK;
    m = it->second;
  }
  cl_int e = clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof *value, value, 0, nullptr, nullptr);
  if (e != CL_SUCCESS) return cl_fail(fn, "clEnqueueReadBuffer (the device's error flag)", e);
  if (*value == 0) return CT_OK;
  const cl_int zero = 0;
  e = clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof zero, &zero, 0, nullptr, nullptr);
  return e == CL_SUCCESS ? CT_OK : cl_fail(fn, "clEnqueueWriteBuffer (the device's error flag)", e);
}

CTStatus queue_of(const char* fn, Device* d, void* stream, Queue* out) {
  if (!stream) {
    out->q = d->queue;
    out->ctx = d->ctx;
    return CT_OK;
  }
  cl_command_queue q = static_cast<cl_command_queue>(stream);
  cl_device_id qd = nullptr;
  cl_context qc = nullptr;
  cl_int e = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qd, &qd, nullptr);
  if (e == CL_SUCCESS) e = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qc, &qc, nullptr);
  if (e != CL_SUCCESS)
    return g_host->set_error(CT_ERR_INVALID_ARGUMENT,
                             "%s: stream %p is not an OpenCL command queue (clGetCommandQueueInfo: %s)", fn, stream,
                             cl_error_name(e));
  if (qd != d->dev)
    return g_host->set_error(CT_ERR_INVALID_ARGUMENT,
                             "%s: command queue %p belongs to another OpenCL device than opencl:%d (%s)", fn, stream,
                             (int)d->id, d->name.c_str());
  out->q = q;
  out->ctx = qc;
  return CT_OK;
}

Program::~Program() {
  for (auto& kv : pool_)
    for (cl_kernel k : kv.second) clReleaseKernel(k);
  clReleaseProgram(prog_);
}

CTStatus Program::take(const char* fn, const char* name, cl_kernel* k) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pool_.find(name);
    if (it != pool_.end() && !it->second.empty()) {
      *k = it->second.back();
      it->second.pop_back();
      return CT_OK;
    }
  }
  cl_int e = CL_SUCCESS;
  *k = clCreateKernel(prog_, name, &e);
  if (e != CL_SUCCESS)
    return g_host->set_error(CT_ERR_BACKEND, "%s: OpenCL clCreateKernel(%s) failed: %s (%d)", fn, name,
                             cl_error_name(e), (int)e);
  return CT_OK;
}

void Program::give(const char* name, cl_kernel k) {
  std::lock_guard<std::mutex> lock(mu_);
  pool_[name].push_back(k);
}

CTStatus get_program(const char* fn, Device* d, cl_context ctx, const std::string& source, const std::string& label,
                     Program** out) {
  std::lock_guard<std::mutex> lock(g_prog_mu);
  const ProgramKey key{ctx, source};
  auto it = g_programs->find(key);
  if (it != g_programs->end()) {
    ++g_stats.from_memory;
    *out = it->second;
    return CT_OK;
  }
  const std::string opts = build_options(d);
  const uint64_t h = fnv1a(source, fnv1a(d->name + "\n" + d->vendor + "\n" + d->driver + "\n" + d->platform_version +
                                         "\n" + opts + "\n"));
  // $CT_OPENCL_CACHE_DIR, else $XDG_CACHE_HOME/ctensor/opencl, else ~/.cache/ctensor/opencl
  const std::string dir = cache_dir("CT_OPENCL_CACHE_DIR", "opencl"), path = cache_path(dir, h, ".bin");
  const auto t0 = std::chrono::steady_clock::now();
  cl_int e = CL_SUCCESS;
  cl_program prog = nullptr;
  if (!path.empty()) {
    const std::vector<unsigned char> bin = read_cached(path, h);
    if (!bin.empty()) {
      const unsigned char* bp = bin.data();
      const size_t bn = bin.size();
      cl_int bs = CL_SUCCESS;
      prog = clCreateProgramWithBinary(ctx, 1, &d->dev, &bn, &bp, &bs, &e);
      if (e == CL_SUCCESS && bs == CL_SUCCESS) e = clBuildProgram(prog, 1, &d->dev, opts.c_str(), nullptr, nullptr);
      if (e != CL_SUCCESS || bs != CL_SUCCESS) {  // a stale or foreign binary: compile instead
        if (prog) clReleaseProgram(prog);
        prog = nullptr;
      } else {
        ++g_stats.from_disk;
        if (verbose())
          std::fprintf(stderr, "ctensor opencl: loaded program %s from %s (%.1f ms)\n", label.c_str(), path.c_str(),
                       ms_since(t0));
      }
    }
  }
  if (!prog) {
    const char* src = source.c_str();
    const size_t len = source.size();
    prog = clCreateProgramWithSource(ctx, 1, &src, &len, &e);
    if (e != CL_SUCCESS) return cl_fail(fn, "clCreateProgramWithSource", e);
    e = clBuildProgram(prog, 1, &d->dev, opts.c_str(), nullptr, nullptr);
    if (e != CL_SUCCESS) {
      std::string log = build_log(prog, d->dev);
      clReleaseProgram(prog);
      if (log.size() > 700) log = log.substr(0, 700) + " ...";
      return g_host->set_error(CT_ERR_BACKEND, "%s: OpenCL clBuildProgram of %s failed: %s (%d); build log: %s", fn,
                               label.c_str(), cl_error_name(e), (int)e, log.c_str());
    }
    ++g_stats.compiled;
    if (verbose()) {
      std::fprintf(stderr, "ctensor opencl: compiled program %s (%zu bytes of source, %.1f ms)\n", label.c_str(),
                   source.size(), ms_since(t0));
      // the source beside its binary, for whoever reads the kernels the module generated
      const std::string src_path = cache_path(dir, h, ".cl");
      if (!src_path.empty() && write_text(dir, src_path, source))
        std::fprintf(stderr, "ctensor opencl: its source is %s\n", src_path.c_str());
    }
    if (!path.empty()) {
      const std::vector<unsigned char> bin = program_binary(prog);
      if (!bin.empty()) write_cached(dir, path, h, bin);
    }
  }
  Program* p = new Program(prog);
  g_programs->emplace(key, p);
  *out = p;
  return CT_OK;
}

}  // namespace ctcl
