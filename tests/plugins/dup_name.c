/*
 * dup_name.c — a plugin that registers a fresh op, then one named DUP_NAME,
 * a name already taken (built as two libraries: "add", a built-in, and
 * "bias_gelu", the custom_ops example's). register_op refuses the second;
 * the plugin returns that status, and the load must drop the first.
 */
#include "tplug.h"

#ifndef DUP_NAME
#  error "build with -DDUP_NAME=\"an op name\" -DDUP_TAG=suffix"
#endif
#define TPLUG_STR2(x) #x
#define TPLUG_STR(x) TPLUG_STR2(x)

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  CTOpDesc d;
  int32_t id;
  CTStatus s;
  (void)host_version;
  info->abi_version = CT_PLUGIN_ABI_VERSION;
  info->name = "tplug_dup_" TPLUG_STR(DUP_TAG);
  info->version = "1.0.0";
  tplug_op_desc(&d, "tplug_dup_" TPLUG_STR(DUP_TAG) "_fresh", CT_KIND_BINARY);
  if ((s = host->register_op(&d, &id)) != CT_OK) return s;
  tplug_op_desc(&d, DUP_NAME, CT_KIND_BINARY);
  return host->register_op(&d, &id);
}
