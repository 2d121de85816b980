// runtime.h — the OpenCL backend's devices, contexts, queues, errors and
// program cache. Everything the module knows of ctensor comes through the
// CTHost table of plugin.h (g_host); nothing of libctensor is linked.
#ifndef CTENSOR_SRC_OPENCL_RUNTIME_H_
#define CTENSOR_SRC_OPENCL_RUNTIME_H_

#include <CL/cl.h>
#include <ctensor/plugin.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/source.h"

namespace ctcl {

// The generated sources, their rows and the host table are the GPU
// modules' shared code (src/gpu).
using namespace ctgpu;

// One OpenCL device: its own context and default in-order queue (the
// stream NULL), what the generated sources need to know of it, and the
// programs built for it (per context: a caller's queue may belong to a
// context of its own).
struct Device : Target {  // Target: the dialect, fp64 and chunk the generated sources depend on
  int32_t id = 0;
  cl_platform_id platform = nullptr;
  cl_device_id dev = nullptr;
  cl_context ctx = nullptr;
  cl_command_queue queue = nullptr;
  std::string name, vendor, driver, version, platform_version;
  bool fp32_correct_div = false;
  cl_uint compute_units = 1;
  cl_ulong global_mem = 0;
  size_t max_wg = 1;
  size_t max_param = 1024;
};

int32_t device_count();
Device* device(int32_t id);  // nullptr when out of range

// The name of an OpenCL error code ("CL_OUT_OF_RESOURCES").
const char* cl_error_name(cl_int e);
// set_error(CT_ERR_BACKEND, "<fn>: <what> failed: <CL_NAME> (<code>)").
CTStatus cl_fail(const char* fn, const char* what, cl_int e);

// The context a queue belongs to (the device's own for NULL).
struct Queue {
  cl_command_queue q;
  cl_context ctx;
};
CTStatus queue_of(const char* fn, Device* d, void* stream, Queue* out);

// A built program and a pool of its kernels. Kernels are not thread-safe
// while their arguments are set, so each call takes one from the pool and
// gives it back after enqueueing (the arguments are captured then).
class Program {
 public:
  explicit Program(cl_program p) : prog_(p) {}
  ~Program();
  CTStatus take(const char* fn, const char* name, cl_kernel* k);
  void give(const char* name, cl_kernel k);

 private:
  cl_program prog_;
  std::mutex mu_;
  std::map<std::string, std::vector<cl_kernel>> pool_;
};

// The program of `source` for device d in context ctx: from memory, else
// from the disk cache (a binary keyed by the device, driver and source),
// else compiled (and stored on disk). `label` names it in messages and in
// CT_OPENCL_VERBOSE's log. Never freed before the module unloads.
CTStatus get_program(const char* fn, Device* d, cl_context ctx, const std::string& source, const std::string& label,
                     Program** out);

// The sticky error flag of device d in context ctx: one int, 0 while no
// kernel has found bad input it could not report when its op returned (the
// indices of max_pool2d_backward live in device memory: checking them
// before returning would block). Such a kernel sets it; ct_synchronize
// reads it after the queue finished, reports it and clears it, as CUDA
// reports a kernel's fault at the next synchronisation. Created on first
// use, released at shutdown.
CTStatus error_flag(const char* fn, Device* d, cl_context ctx, cl_mem* out);
constexpr cl_int kFlagPoolIndex = 1;  // max_pool2d_backward: an index outside its window
// The flag's value (0: none) for device d in ctx, cleared, through queue q
// (blocking: for ct_synchronize, after clFinish). No flag yet: 0.
CTStatus take_error_flag(const char* fn, Device* d, cl_context ctx, cl_command_queue q, cl_int* value);

// Counters for tests and the log: programs compiled from source, loaded
// from the disk cache, found in memory.
struct BuildStats {
  std::atomic<long long> compiled{0}, from_disk{0}, from_memory{0};
};
extern BuildStats g_stats;

// Discovers the platforms' devices (once); releases everything (ct_plugin_fini).
CTStatus init_devices();
void shutdown();

}  // namespace ctcl

#endif  // CTENSOR_SRC_OPENCL_RUNTIME_H_
