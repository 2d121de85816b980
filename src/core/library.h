// library.h — plugin libraries (ct_library_load): the record of one, the
// pins that keep its code loaded while a call or a plan uses it, and the
// load in progress on this thread (whose registrations are staged, so that
// a load is all-or-nothing).
#ifndef CTENSOR_SRC_CORE_LIBRARY_H_
#define CTENSOR_SRC_CORE_LIBRARY_H_

#include <ctensor/plugin.h>

#include "core/error.h"

#include <atomic>
#include <string>

namespace ct {

// One loaded plugin. The record lives until its last reference is gone and
// no call can still read it from an old registry snapshot (epoch.h).
struct Library {
  // 1 while loaded, plus one per plan one of its kernel tables made (calls
  // need none: unload waits for them). The one that drops it to 0 closes it.
  std::atomic<int64_t> refs{1};
  std::atomic<bool> loaded{false};
  void* handle = nullptr;
  CTPluginFiniFn fini = nullptr;
  std::string path, name, version;
  uint32_t abi_version = 0;
  int32_t origin = CT_LIBRARY_LOADED;  // CTLibraryOrigin
  int32_t num_ops = 0, num_devices = 0, num_kernel_tables = 0;
};

// CT_OK when `version` (a CT_PLUGIN_ABI_VERSION) has this library's major;
// else CT_ERR_ABI_VERSION naming both versions: "<fn>: <what> was built
// against plugin ABI 2.0; this library speaks 1.1 ...".
CTStatus check_abi_major(const char* fn, const char* what, uint32_t version);

// Takes a reference on lib; false once its last one is gone (it is closing).
bool pin(const Library* lib);
// Drops one; the last closes the library (ct_plugin_fini, dlclose).
void unpin(const Library* lib);

// The library whose ct_plugin_init runs on this thread, or nullptr: its
// register_op / register_backend calls are staged, not published.
Library* loading_library();

// A library unloaded meanwhile: CT_ERR_NOT_FOUND naming fn (a plan that
// outlived its plugin's last reference).
CT_COLD CTStatus library_gone(const char* fn, const Library* lib);

// Loads the modules (libctensor_*.so next to libctensor, or in
// CT_MODULE_DIR; none with CT_NO_MODULES=1), then the ':'-separated plugins
// of CT_PLUGIN_PATH, once, after the built-in backends registered (core
// calls it at first use). What does not load is recorded with its reason.
void load_plugin_path();
// ct_library_load's work; origin is a CTLibraryOrigin.
CTStatus load_library(const char* path, int32_t origin, Library** out);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_LIBRARY_H_
