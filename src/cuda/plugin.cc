// plugin.cc — the module's entry point: ct_plugin_init discovers the CUDA
// devices and registers the device type CT_CUDA and its kernel table
// through the host (plugin.h); ct_plugin_fini releases them. Without a
// driver or a device it registers nothing and says why.
#include <cstdio>
#include <cstring>

#include "backend.h"

namespace ctcu {
namespace {

CTDeviceInterface g_dev;
CTKernelInterface g_kern;

int32_t dev_count() { return device_count(); }

CTStatus dev_info(int32_t id, CTDeviceInfo* info) {
  Device* d = device(id);
  if (!d) return g_host->set_error(CT_ERR_NOT_FOUND, "ct_device_info: there is no CUDA device %d", (int)id);
  info->device.device_type = CT_CUDA;
  info->device.device_id = id;
  std::snprintf(info->name, sizeof info->name, "%s (compute capability %d.%d; kernels for %s)", d->name.c_str(),
                d->major, d->minor, d->arch.c_str());
  std::snprintf(info->backend, sizeof info->backend, "cuda");
  info->compute_units = d->sms;
  info->default_threads = 1;
  info->memory_bytes = d->memory;
  return CT_OK;
}

}  // namespace
}  // namespace ctcu

extern "C" {

CT_PLUGIN_EXPORT extern const uint32_t ct_plugin_abi_version;
const uint32_t ct_plugin_abi_version = CT_PLUGIN_ABI_VERSION;

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  using namespace ctcu;
  (void)host_version;
  g_host = host;
  info->abi_version = CT_PLUGIN_ABI_VERSION;
  info->name = "cuda";
  info->version = "0.1.0";
  if (CTStatus s = init_devices()) return s;
  if (device_count() == 0) {  // nothing registered: free what discovery allocated (the library closes us)
    int driver = 0;
    cudaDriverGetVersion(&driver);
    shutdown();
    return host->set_error(CT_ERR_NOT_FOUND, "the CUDA backend found no CUDA device (%s)",
                           driver == 0 ? "no NVIDIA driver is installed" : "the driver reports none");
  }
  std::memset(&g_dev, 0, sizeof g_dev);
  g_dev.struct_size = sizeof g_dev;
  g_dev.abi_version = CT_PLUGIN_ABI_VERSION;
  g_dev.device_type = CT_CUDA;
  g_dev.name = "cuda";
  g_dev.data_is_address = 1;  // unified virtual addresses
  g_dev.host_accessible = 0;
  g_dev.device_count = dev_count;
  g_dev.device_info = dev_info;
  g_dev.malloc = cu_malloc;
  g_dev.free = cu_free;
  g_dev.copy = cu_copy;
  g_dev.synchronize = cu_synchronize;
  g_dev.check_stream = cu_check_stream;
  g_dev.default_allocator.struct_size = sizeof(CTAllocator);
  g_dev.default_allocator.alloc = cu_temp_alloc;
  g_dev.default_allocator.free = cu_temp_free;

  std::memset(&g_kern, 0, sizeof g_kern);
  g_kern.struct_size = sizeof g_kern;
  g_kern.abi_version = CT_PLUGIN_ABI_VERSION;
  g_kern.device_type = CT_CUDA;
  g_kern.name = "cuda";
  g_kern.supports = cu_supports;
  g_kern.elementwise = cu_elementwise;
  g_kern.binary = cu_elementwise;
  g_kern.reduce = cu_reduce;
  g_kern.along_axis = cu_along_axis;
  g_kern.index = cu_index;
  g_kern.nn_plan_create = cu_nn_plan_create;
  g_kern.nn_plan_execute = cu_nn_plan_execute;
  g_kern.nn_plan_destroy = cu_nn_plan_destroy;
  const CTStatus s = host->register_backend(&g_dev, &g_kern);
  if (s != CT_OK) shutdown();
  return s;
}

CT_PLUGIN_EXPORT void ct_plugin_fini(void) {
  ctcu::nn_shutdown();
  ctcu::forget_programs();
  ctcu::shutdown();
}

}  // extern "C"
