/*
 * no_entry.c — a shared library that is not a plugin: it exports a
 * misspelled entry point and no ct_plugin_init. ct_library_load must refuse
 * it with CT_ERR_NOT_FOUND naming the missing symbol, and close it.
 */
#include <ctensor/plugin.h>

CT_PLUGIN_EXPORT CTStatus ct_plugin_initialize(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  (void)host;
  (void)host_version;
  (void)info;
  return CT_OK;
}
