/*
 * wrong_major.c — a plugin built against another major version of the
 * plugin ABI (CT_PLUGIN_ABI_MAJOR + 1). Built twice:
 *  - without the optional ct_plugin_abi_version symbol: like a real one it
 *    fills info and registers an op before the host has looked at its
 *    version; the load must fail with CT_ERR_ABI_VERSION naming both
 *    versions, and drop the op;
 *  - with it (-DWITH_ABI_SYMBOL): the host must refuse the file from the
 *    symbol alone, before ct_plugin_init runs (which here fails loudly).
 */
#include "tplug.h"

#ifdef WITH_ABI_SYMBOL
CT_PLUGIN_EXPORT const uint32_t ct_plugin_abi_version = (uint32_t)((CT_PLUGIN_ABI_MAJOR + 1) << 16);
#endif

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  CTOpDesc d;
  int32_t id;
  (void)host_version;
  info->abi_version = (uint32_t)((CT_PLUGIN_ABI_MAJOR + 1) << 16);
  info->name = "tplug_wrong_major";
  info->version = "2.0.0";
#ifdef WITH_ABI_SYMBOL
  (void)d;
  (void)id;
  return host->set_error(CT_ERR_INTERNAL, "tplug_wrong_major: ct_plugin_init ran although ct_plugin_abi_version "
                                          "says another major");
#else
  tplug_op_desc(&d, "tplug_wrong_major_op", CT_KIND_UNARY);
  return host->register_op(&d, &id);
#endif
}
