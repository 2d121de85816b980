/*
 * fail_halfway.c — a plugin whose init fails halfway: it registers an op,
 * a kernel table on the CPU and one on the loopback test device (tables
 * that claim every op and dtype and write garbage), a second op, then gives
 * up with CT_ERR_BACKEND. The load must leave every registry as it was: op
 * count, names, and which kernels run what.
 */
#include "tplug.h"

static CTStatus yes(const CTSupportQuery* q) {
  (void)q;
  return CT_OK;
}

static CTStatus garbage(const CTElementwiseCall* c) {
  (void)c;
  return CT_ERR_INTERNAL;
}

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  static CTKernelInterface cpu, ext;
  CTOpDesc d;
  int32_t id;
  CTStatus s;
  (void)host_version;
  info->abi_version = CT_PLUGIN_ABI_VERSION;
  info->name = "tplug_fail_halfway";
  info->version = "1.0.0";
  tplug_op_desc(&d, "tplug_half_a", CT_KIND_BINARY);
  if ((s = host->register_op(&d, &id)) != CT_OK) return s;
  memset(&cpu, 0, sizeof cpu);
  cpu.struct_size = sizeof cpu;
  cpu.abi_version = CT_PLUGIN_ABI_VERSION;
  cpu.device_type = CT_CPU;
  cpu.name = "tplug_fail_halfway";
  cpu.supports = &yes;
  cpu.elementwise = &garbage;
  cpu.binary = &garbage;
  if ((s = host->register_backend(NULL, &cpu)) != CT_OK) return s;
  ext = cpu;
  ext.device_type = CT_EXT_DEV;
  host->register_backend(NULL, &ext); /* refused when no loopback device is registered: fine */
  tplug_op_desc(&d, "tplug_half_b", CT_KIND_UNARY);
  if ((s = host->register_op(&d, &id)) != CT_OK) return s;
  return host->set_error(CT_ERR_BACKEND, "tplug_fail_halfway: gave up after registering 2 ops and 2 kernel tables");
}
