// runtime.cc — devices through the CUDA runtime, errors, and the program
// cache: in memory per (arch, source), on disk per (arch, NVRTC version,
// options, source) so that a second process compiles nothing.
#include "runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu/disk_cache.h"
#include "lazy.h"

namespace ctcu {

BuildStats g_stats;

namespace {

std::vector<Device*>* g_devices = nullptr;
std::mutex g_prog_mu;
std::map<std::string, Program*>* g_programs = nullptr;  // by arch + "\n" + source

bool verbose() {
  static const bool v = [] {
    const char* e = std::getenv("CT_CUDA_VERBOSE");
    return e && *e && std::strcmp(e, "0") != 0;
  }();
  return v;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// NVRTC's newest architecture not newer than the device's (cc major*10+minor):
// "sm_XY" when NVRTC knows the device's own, else "compute_XY" PTX of the
// newest it knows, which the driver compiles for the device.
std::string arch_for(int cc) {
  int n = 0;
  std::vector<int> archs;
  const NvrtcApi* api = nvrtc();
  if (api && api->nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
    archs.resize((size_t)n);
    if (api->nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) archs.clear();
  }
  if (!api) return "sm_" + std::to_string(cc);  // compile() says why it cannot
  int best = 0;
  for (int a : archs)
    if (a <= cc && a > best) best = a;
  if (best == cc) return "sm_" + std::to_string(cc);
  return "compute_" + std::to_string(best ? best : cc);
}

}  // namespace

CTStatus cuda_fail(const char* fn, const char* what, cudaError_t e) {
  return g_host->set_error(e == cudaErrorMemoryAllocation ? CT_ERR_OUT_OF_MEMORY : CT_ERR_BACKEND,
                           "%s: CUDA %s failed: %s (%d): %s", fn, what, cudaGetErrorName(e), (int)e,
                           cudaGetErrorString(e));
}

DeviceGuard::DeviceGuard(int32_t id) {
  if (cudaGetDevice(&prev_) != cudaSuccess) prev_ = -1;
  if (prev_ != id) err_ = cudaSetDevice(id);
}

DeviceGuard::~DeviceGuard() {
  if (prev_ >= 0) {
    int now = -1;
    if (cudaGetDevice(&now) == cudaSuccess && now != prev_) cudaSetDevice(prev_);
  }
}

int32_t device_count() { return g_devices ? (int32_t)g_devices->size() : 0; }

Device* device(int32_t id) {
  if (!g_devices || id < 0 || id >= (int32_t)g_devices->size()) return nullptr;
  return (*g_devices)[(size_t)id];
}

CTStatus init_devices() {
  if (g_devices) return CT_OK;
  g_devices = new std::vector<Device*>();
  g_programs = new std::map<std::string, Program*>();
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {  // no driver, or no device: nothing to register
    cudaGetLastError();
    if (verbose()) std::fprintf(stderr, "ctensor cuda: no device: %s\n", cudaGetErrorString(e));
    return CT_OK;
  }
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    Device* d = new Device();
    d->dialect = Dialect::kCuda;
    d->fp64 = true;
    d->chunk = 1;
    d->id = (int32_t)g_devices->size();
    d->name = p.name;
    d->major = p.major;
    d->minor = p.minor;
    d->sms = p.multiProcessorCount;
    d->memory = p.totalGlobalMem;
    d->arch = arch_for(p.major * 10 + p.minor);
    g_devices->push_back(d);
  }
  return CT_OK;
}

void shutdown() {
  if (g_programs) {
    for (auto& kv : *g_programs) delete kv.second;
    delete g_programs;
    g_programs = nullptr;
  }
  if (g_devices) {
    for (Device* d : *g_devices) delete d;
    delete g_devices;
    g_devices = nullptr;
  }
}

Program::~Program() {
  if (lib_) cudaLibraryUnload(lib_);
}

CTStatus Program::kernel(const char* fn, const std::string& name, cudaKernel_t* k) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kernels_.find(name);
  if (it != kernels_.end()) {
    *k = it->second;
    return CT_OK;
  }
  const cudaError_t e = cudaLibraryGetKernel(k, lib_, name.c_str());
  if (e != cudaSuccess) return cuda_fail(fn, ("cudaLibraryGetKernel(" + name + ")").c_str(), e);
  kernels_[name] = *k;
  return CT_OK;
}

std::string compile_options(const std::string& arch) {
  // --fmad=false: only the fma() the sources write, as on the CPU and OpenCL
  // (a contracted a * b + c rounds once where the reference rounds twice).
  return "--gpu-architecture=" + arch + " -std=c++17 --fmad=false";
}

CTStatus compile(const char* fn, const std::string& source, const std::string& label, const std::string& arch,
                 std::vector<unsigned char>* image) {
  std::string why;
  const NvrtcApi* api = nvrtc(&why);
  if (!api)
    return g_host->set_error(CT_ERR_BACKEND, "%s: NVRTC, which compiles the CUDA module's kernels (%s), cannot be used: %s",
                             fn, label.c_str(), why.c_str());
  nvrtcProgram prog = nullptr;
  nvrtcResult r = api->nvrtcCreateProgram(&prog, source.c_str(), label.c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS)
    return g_host->set_error(CT_ERR_BACKEND, "%s: NVRTC api->nvrtcCreateProgram(%s) failed: %s", fn, label.c_str(),
                             api->nvrtcGetErrorString(r));
  const std::string arch_opt = "--gpu-architecture=" + arch;
  const char* opts[] = {arch_opt.c_str(), "-std=c++17", "--fmad=false"};
  r = api->nvrtcCompileProgram(prog, 3, opts);
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    std::string log;
    if (api->nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1) {
      log.resize(n);
      api->nvrtcGetProgramLog(prog, &log[0]);
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    api->nvrtcDestroyProgram(&prog);
    if (log.size() > 1500) log = log.substr(0, 1500) + " ...";
    return g_host->set_error(CT_ERR_BACKEND, "%s: NVRTC compiling %s for %s failed: %s; log: %s", fn, label.c_str(),
                             arch.c_str(), api->nvrtcGetErrorString(r), log.c_str());
  }
  const bool cubin = arch.compare(0, 3, "sm_") == 0;
  size_t n = 0;
  r = cubin ? api->nvrtcGetCUBINSize(prog, &n) : api->nvrtcGetPTXSize(prog, &n);
  if (r == NVRTC_SUCCESS) {
    image->resize(n);
    r = cubin ? api->nvrtcGetCUBIN(prog, reinterpret_cast<char*>(image->data()))
              : api->nvrtcGetPTX(prog, reinterpret_cast<char*>(image->data()));  // NUL-terminated, as loading PTX needs
  }
  api->nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS)
    return g_host->set_error(CT_ERR_BACKEND, "%s: NVRTC getting the %s of %s failed: %s", fn, cubin ? "cubin" : "PTX",
                             label.c_str(), api->nvrtcGetErrorString(r));
  return CT_OK;
}

CTStatus get_program(const char* fn, Device* d, const std::string& source, const std::string& label, Program** out) {
  std::lock_guard<std::mutex> lock(g_prog_mu);
  const std::string key = d->arch + "\n" + source;
  auto it = g_programs->find(key);
  if (it != g_programs->end()) {
    ++g_stats.from_memory;
    *out = it->second;
    return CT_OK;
  }
  int major = 0, minor = 0;
  if (const NvrtcApi* api = nvrtc()) api->nvrtcVersion(&major, &minor);
  const uint64_t h = fnv1a(source, fnv1a(compile_options(d->arch) + "\nnvrtc " + std::to_string(major) + "." +
                                         std::to_string(minor) + "\n"));
  // $CT_CUDA_CACHE_DIR, else $XDG_CACHE_HOME/ctensor/cuda, else ~/.cache/ctensor/cuda
  const std::string dir = cache_dir("CT_CUDA_CACHE_DIR", "cuda"), path = cache_path(dir, h, ".bin");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<unsigned char> image = read_cached(path, h);
  const bool cached = !image.empty();
  if (cached) {
    ++g_stats.from_disk;
  } else {
    if (CTStatus s = compile(fn, source, label, d->arch, &image)) return s;
    ++g_stats.compiled;
    if (verbose()) {
      std::fprintf(stderr, "ctensor cuda: compiled program %s for %s (%zu bytes of source, %.1f ms)\n", label.c_str(),
                   d->arch.c_str(), source.size(), ms_since(t0));
      const std::string src_path = cache_path(dir, h, ".cu");
      if (!src_path.empty() && write_text(dir, src_path, source))
        std::fprintf(stderr, "ctensor cuda: its source is %s\n", src_path.c_str());
    }
    write_cached(dir, path, h, image);
  }
  cudaLibrary_t lib = nullptr;
  const cudaError_t e = cudaLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return cuda_fail(fn, ("cudaLibraryLoadData(" + label + ", " + d->arch + (cached ? ", from the disk cache" : "") + ")").c_str(), e);
  }
  if (verbose() && cached)
    std::fprintf(stderr, "ctensor cuda: loaded program %s from %s (%.1f ms)\n", label.c_str(), path.c_str(), ms_since(t0));
  Program* p = new Program(lib);
  g_programs->emplace(key, p);
  *out = p;
  return CT_OK;
}

}  // namespace ctcu
