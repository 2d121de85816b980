/*
 * ctensor_library.h — plugins: libraries loaded at run time that add ops,
 * kernels for existing ops, or whole devices, through C only. Part of
 * ctensor.h (include that). How to write one: docs/writing-a-plugin.md and
 * plugin.h.
 *
 *   CTLibrary* lib;
 *   if (ct_library_load("./libmy_ops.so", &lib) != CT_OK) puts(ct_last_error());
 *   int32_t op;
 *   ct_op_find("bias_gelu", &op);            // a plugin op, callable by id
 *   ct_binary(op, &x, &bias, &out, NULL);
 *   ct_library_unload(lib);
 *
 * Loading is all-or-nothing: a plugin whose init fails, or that registers
 * an op name or device type already taken, leaves every registry exactly as
 * it was. C99, includes only ctensor.h. Load and unload are safe against concurrent op calls: a call in
 * flight on a plugin, and every plan made by one of its kernel tables, keep
 * its code loaded until they finish (ct_plan_destroy).
 */
#ifndef CTENSOR_CTENSOR_LIBRARY_H_
#define CTENSOR_CTENSOR_LIBRARY_H_

#include "ctensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A loaded plugin library (opaque). */
typedef struct CTLibrary CTLibrary;

/** Who loaded a library. */
typedef enum {
  CT_LIBRARY_LOADED = 0,      /**< the caller, with ct_library_load */
  CT_LIBRARY_PLUGIN_PATH = 1, /**< the library, from CT_PLUGIN_PATH at first use */
  CT_LIBRARY_MODULE = 2       /**< the library, a module found at first use: libctensor_<name>.so in
                                   libctensor's folder (or CT_MODULE_DIR; CT_NO_MODULES=1: none) — the
                                   device backends that need a driver ship so */
} CTLibraryOrigin;

/** What a loaded library is and brought. Set struct_size; the library
 *  fills at most that many bytes. */
typedef struct {
  uint32_t struct_size;   /**< in: sizeof(CTLibraryInfo) as the caller knows it */
  uint32_t abi_version;   /**< out: the plugin ABI (major << 16 | minor) it was built against */
  char name[64];          /**< out: the plugin's name ("my_ops") */
  char version[32];       /**< out: its own version string ("1.2.0") */
  char path[512];         /**< out: the file it was loaded from (truncated if longer) */
  int32_t num_ops;        /**< out: ops it registered */
  int32_t num_devices;    /**< out: device types it registered */
  int32_t num_kernel_tables; /**< out: kernel tables it registered */
  int32_t loaded;         /**< out: 1 (a handle is valid only while loaded) */
  int32_t origin;         /**< out: CTLibraryOrigin */
} CTLibraryInfo;

/** Loads the plugin at @p path (a shared library exporting ct_plugin_init,
 *  see plugin.h) and registers what it brings.
 *  @param[out] lib the library, for ct_library_info / ct_library_unload
 *  @return CT_OK; CT_ERR_INVALID_ARGUMENT (NULL arguments); CT_ERR_NOT_FOUND
 *          (no such file, not a shared library, no ct_plugin_init: the
 *          message has the loader's reason); CT_ERR_ABI_VERSION (another
 *          major version of the plugin ABI, both named); the status its
 *          init returned, or that a refused registration gave (a duplicate
 *          op name or device type). On failure nothing stays registered and
 *          the file is closed. A file already in the process (loaded, linked
 *          in, or a previous load still closing) is refused: its init would
 *          run twice. */
CT_API CTStatus ct_library_load(const char* path, CTLibrary** lib);

/** Unregisters everything @p lib brought, waits for the calls other threads
 *  are making through the library to return (calls in flight may be running
 *  its code), and closes it: before returning, or when the last plan made
 *  by its kernels is destroyed. Do not call it while holding a lock that a
 *  running kernel waits for, nor from inside a ctensor call (a kernel or
 *  callback: CT_ERR_INVALID_ARGUMENT). Ops it
 *  registered then answer CT_ERR_NOT_FOUND ("... was unloaded with its
 *  library"); their ids are not reused by another op, and loading the same
 *  plugin again gives the same ops their old ids. @p lib is invalid after.
 *  @return CT_OK; CT_ERR_INVALID_ARGUMENT (NULL, or not a loaded library). */
CT_API CTStatus ct_library_unload(CTLibrary* lib);

/** Facts about a loaded library.
 *  @return CT_OK; CT_ERR_INVALID_ARGUMENT (NULL, struct_size too small). */
CT_API CTStatus ct_library_info(const CTLibrary* lib, CTLibraryInfo* info);

/** The index-th op @p lib registered (host->register_op), in id order,
 *  for index in [0, CTLibraryInfo.num_ops): which ops a library brought,
 *  for listings (`ctensor ops`, Python's Library.ops).
 *  @return CT_OK; CT_ERR_INVALID_ARGUMENT (NULL lib or op); CT_ERR_NOT_FOUND
 *          (index out of range). */
CT_API CTStatus ct_library_op(const CTLibrary* lib, int32_t index, int32_t* op);

/** Libraries loaded now: by ct_library_load, and by the library itself at
 *  first use (modules, then CT_PLUGIN_PATH's ':'-separated paths). */
CT_API int32_t ct_library_count(void);

/** The index-th loaded library, in order of loading.
 *  @return CT_OK; CT_ERR_INVALID_ARGUMENT (NULL lib); CT_ERR_NOT_FOUND. */
CT_API CTStatus ct_library_get(int32_t index, CTLibrary** lib);

/** A plugin or module the library tried to load by itself (CT_PLUGIN_PATH,
 *  modules) that did not load, and why ("cannot load .../libctensor_cuda.so:
 *  libcuda.so.1: cannot open shared object file"). */
typedef struct {
  uint32_t struct_size; /**< in: sizeof(CTLibraryFailure) as the caller knows it */
  CTStatus status;      /**< out: what the load returned */
  int32_t origin;       /**< out: CTLibraryOrigin */
  char path[512];       /**< out: the path as given */
  char message[512];    /**< out: ct_last_error() of that load */
} CTLibraryFailure;

/** Plugins of CT_PLUGIN_PATH and modules that failed to load. */
CT_API int32_t ct_library_failure_count(void);

/** The index-th of them.
 *  @return CT_OK; CT_ERR_INVALID_ARGUMENT (NULL, struct_size); CT_ERR_NOT_FOUND. */
CT_API CTStatus ct_library_failure(int32_t index, CTLibraryFailure* failure);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CTENSOR_CTENSOR_LIBRARY_H_ */
