/*
 * wrong_major.c — a plugin built against another major version of the
 * plugin ABI (CT_PLUGIN_ABI_MAJOR + 1). Like a real one it fills info and
 * registers an op before the host has looked at its version: the load must
 * fail with CT_ERR_ABI_VERSION naming both versions, and drop the op.
 */
#include "tplug.h"

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  CTOpDesc d;
  int32_t id;
  (void)host_version;
  info->abi_version = (uint32_t)((CT_PLUGIN_ABI_MAJOR + 1) << 16);
  info->name = "tplug_wrong_major";
  info->version = "2.0.0";
  tplug_op_desc(&d, "tplug_wrong_major_op", CT_KIND_UNARY);
  return host->register_op(&d, &id);
}
