// runtime.h — the CUDA backend's devices, errors and programs. Everything
// the module knows of ctensor comes through the CTHost table of plugin.h
// (ctgpu::g_host); nothing of libctensor is linked. The CUDA runtime is
// linked statically (cudart_static), so the module loads on a machine
// without a driver and then finds no device; kernels are the generator's
// (src/gpu) CUDA dialect, compiled by NVRTC for the device's own
// architecture at first use and kept on disk.
#ifndef CTENSOR_SRC_CUDA_RUNTIME_H_
#define CTENSOR_SRC_CUDA_RUNTIME_H_

#include <cuda_runtime_api.h>
#include <ctensor/plugin.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/plan.h"

namespace ctcu {

using namespace ctgpu;

struct Device : Target {  // Target: the CUDA dialect, fp64, one element per thread
  int32_t id = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int sms = 1;
  size_t memory = 0;
  std::string arch;          // what NVRTC compiles for: "sm_90", or "compute_XY" (PTX the driver finishes) for a device newer than NVRTC
};

int32_t device_count();
Device* device(int32_t id);  // nullptr when out of range

// set_error(CT_ERR_BACKEND, "<fn>: CUDA <what> failed: <cudaErrorName> (<code>): <string>");
// cudaErrorMemoryAllocation gives CT_ERR_OUT_OF_MEMORY.
CTStatus cuda_fail(const char* fn, const char* what, cudaError_t e);

// Makes device id current on this thread for its scope and restores the
// caller's current device after (a library call must not move it).
class DeviceGuard {
 public:
  explicit DeviceGuard(int32_t id);
  ~DeviceGuard();
  cudaError_t error() const { return err_; }

 private:
  int prev_ = -1;
  cudaError_t err_ = cudaSuccess;
};

// A loaded program: its kernels by name (context-independent handles, safe
// to launch from any thread).
class Program {
 public:
  explicit Program(cudaLibrary_t lib) : lib_(lib) {}
  ~Program();
  CTStatus kernel(const char* fn, const std::string& name, cudaKernel_t* k);

 private:
  cudaLibrary_t lib_;
  std::mutex mu_;
  std::map<std::string, cudaKernel_t> kernels_;
};

// NVRTC: `source` compiled for arch ("sm_90": a cubin; "compute_90": PTX).
// CT_OK, or CT_ERR_BACKEND with the compiler's log in the message.
CTStatus compile(const char* fn, const std::string& source, const std::string& label, const std::string& arch,
                 std::vector<unsigned char>* image);
// The options compile() passes (part of the disk cache's key).
std::string compile_options(const std::string& arch);

// The program of `source` for device d: from memory, else from the disk
// cache (keyed by arch, NVRTC version, options and source), else compiled
// (and stored). Never freed before the module unloads.
CTStatus get_program(const char* fn, Device* d, const std::string& source, const std::string& label, Program** out);

// Counters for tests and the log.
struct BuildStats {
  std::atomic<long long> compiled{0}, from_disk{0}, from_memory{0};
};
extern BuildStats g_stats;

// Discovers the devices (once); releases everything (ct_plugin_fini).
CTStatus init_devices();
void shutdown();

}  // namespace ctcu

#endif  // CTENSOR_SRC_CUDA_RUNTIME_H_
