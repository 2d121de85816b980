// plugin.cc — the module's entry point: ct_plugin_init discovers the OpenCL
// devices and registers the device type CT_OPENCL and its kernel table
// through the host (plugin.h); ct_plugin_fini releases them.
#include <cstdio>
#include <cstring>

#include "backend.h"

namespace ctcl {
namespace {

CTDeviceInterface g_dev;
CTKernelInterface g_kern;

int32_t dev_count() { return device_count(); }

CTStatus dev_info(int32_t id, CTDeviceInfo* info) {
  Device* d = device(id);
  if (!d) return g_host->set_error(CT_ERR_NOT_FOUND, "ct_device_info: there is no OpenCL device %d", (int)id);
  info->device.device_type = CT_OPENCL;
  info->device.device_id = id;
  std::snprintf(info->name, sizeof info->name, "%s (%s; %s)", d->name.c_str(), d->vendor.c_str(), d->version.c_str());
  std::snprintf(info->backend, sizeof info->backend, "opencl");
  info->compute_units = (int32_t)d->compute_units;
  info->default_threads = 1;
  info->memory_bytes = d->global_mem;
  return CT_OK;
}

}  // namespace
}  // namespace ctcl

extern "C" {

// extern: a namespace-scope const has internal linkage in C++ otherwise.
CT_PLUGIN_EXPORT extern const uint32_t ct_plugin_abi_version;
const uint32_t ct_plugin_abi_version = CT_PLUGIN_ABI_VERSION;

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  using namespace ctcl;
  (void)host_version;
  g_host = host;
  info->abi_version = CT_PLUGIN_ABI_VERSION;
  info->name = "opencl";
  info->version = "0.1.0";
  if (CTStatus s = init_devices()) return s;
  if (device_count() == 0) {  // nothing registered: free what discovery allocated (the library closes us)
    shutdown();
    return host->set_error(CT_ERR_NOT_FOUND,
                           "the OpenCL backend found no OpenCL device with a compiler (no ICD platform, or none "
                           "available): install one (pocl-opencl-icd runs OpenCL on this CPU)");
  }
  std::memset(&g_dev, 0, sizeof g_dev);
  g_dev.struct_size = sizeof g_dev;
  g_dev.abi_version = CT_PLUGIN_ABI_VERSION;
  g_dev.device_type = CT_OPENCL;
  g_dev.name = "opencl";
  g_dev.data_is_address = 0;  // data is a cl_mem
  g_dev.host_accessible = 0;
  g_dev.device_count = dev_count;
  g_dev.device_info = dev_info;
  g_dev.malloc = cl_malloc;
  g_dev.free = cl_free;
  g_dev.copy = cl_copy;
  g_dev.synchronize = cl_synchronize;
  g_dev.check_stream = cl_check_stream;
  g_dev.default_allocator.struct_size = sizeof(CTAllocator);
  g_dev.default_allocator.alloc = cl_temp_alloc;
  g_dev.default_allocator.free = cl_temp_free;

  std::memset(&g_kern, 0, sizeof g_kern);
  g_kern.struct_size = sizeof g_kern;
  g_kern.abi_version = CT_PLUGIN_ABI_VERSION;
  g_kern.device_type = CT_OPENCL;
  g_kern.name = "opencl";
  g_kern.supports = cl_supports;
  g_kern.elementwise = cl_elementwise;
  g_kern.binary = cl_elementwise;
  g_kern.reduce = cl_reduce;
  g_kern.along_axis = cl_along_axis;
  g_kern.index = cl_index;
  g_kern.nn_plan_create = cl_nn_plan_create;
  g_kern.nn_plan_execute = cl_nn_plan_execute;
  g_kern.nn_plan_destroy = cl_nn_plan_destroy;
  const CTStatus s = host->register_backend(&g_dev, &g_kern);
  if (s != CT_OK) shutdown();  // nothing stays registered: the library closes us without ct_plugin_fini
  return s;
}

CT_PLUGIN_EXPORT void ct_plugin_fini(void) {
  ctcl::forget_staged();
  ctcl::forget_programs();
  ctcl::shutdown();
}

}  // extern "C"
