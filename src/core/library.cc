// library.cc — plugin libraries loaded at run time: ct_library_load (dlopen,
// ct_plugin_init with the host table, its registrations staged and then
// published all at once or not at all), ct_library_unload (unregister, wait
// for the calls running, then close, or when the last plan on its code goes), CT_PLUGIN_PATH,
// ct_op_reference and ct_op_example (a plugin op's reference and example calls).
#include "core/library.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/backends.h"
#include "core/epoch.h"
#include "core/error.h"
#include "core/nn_internal.h"
#include "core/plugin_ops.h"
#include "core/registry.h"
#include "core/api_internal.h"
#include "core/validate.h"

namespace ct {
namespace {

std::recursive_mutex g_load_mu;                 // one load or unload at a time
std::vector<Library*>* g_loaded = new std::vector<Library*>;  // in order of loading
thread_local Library* t_loading = nullptr;

struct Failure {
  std::string path, message;
  CTStatus status;
  int32_t origin;
};
std::vector<Failure>* g_failures = new std::vector<Failure>;

// The last reference is gone: nothing runs its code any more. The record
// goes once no call can still read it from an old registry snapshot.
void close_library(Library* lib) {
  if (lib->fini) lib->fini();
  if (lib->handle) dlclose(lib->handle);
  lib->handle = nullptr;
  retire(lib, [](void* p) { delete static_cast<Library*>(p); });
}

bool valid_plugin_name(const char* s) {
  size_t n = 0;
  for (; s[n]; ++n) {
    const char c = s[n];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == '-'))
      return false;
  }
  return n >= 1 && n < 64;
}


// Runs the plugin's init with its registrations staged; publishes them, or
// drops them and says why.
CTStatus init_library(Library* lib, CTPluginInitFn init) {
  const char* fn = "ct_library_load";
  CTPluginInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  t_loading = lib;
  CTStatus s = init(host(), CT_PLUGIN_ABI_VERSION, &info);
  t_loading = nullptr;
  if (s != CT_OK) {
    const std::string why = ct_last_error();
    // A value that is no CTStatus must not reach the caller as if it were one.
    if (s > 0 || s < CT_ERR_INTERNAL)
      return fail(CT_ERR_BACKEND, "%s: %s: ct_plugin_init returned %d, not a CTStatus%s%s", fn, lib->path.c_str(),
                  (int)s, why.empty() ? "" : ": ", why.c_str());
    return fail(s, "%s: %s: ct_plugin_init failed with %s: %s", fn, lib->path.c_str(), ct_status_string(s),
                why.empty() ? "(it set no message)" : why.c_str());
  }
  if (CTStatus v = check_abi_major(fn, lib->path.c_str(), info.abi_version)) return v;
  if (!info.name || !valid_plugin_name(info.name) || !info.version)
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: %s: ct_plugin_init must set info->name (1..63 of [A-Za-z0-9_.-]) and info->version; name=\"%s\"",
                fn, lib->path.c_str(), info.name ? info.name : "(null)");
  for (const Library* o : *g_loaded)
    if (o->name == info.name)
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s: a plugin named \"%s\" is loaded already (from %s)", fn,
                  lib->path.c_str(), info.name, o->path.c_str());
  lib->name = info.name;
  lib->version = info.version;
  lib->abi_version = info.abi_version;
  if (CTStatus c = commit_staged_backends(lib)) return c;
  commit_staged_ops(lib);
  return CT_OK;
}

void record_failure(const char* path, CTStatus s, int32_t origin) {
  std::lock_guard<std::recursive_mutex> lock(g_load_mu);
  g_failures->push_back(Failure{path, ct_last_error(), s, origin});
}

// The modules: libctensor_<name>.so in libctensor's own folder (or
// CT_MODULE_DIR), in name order: the device backends that need a driver.
void load_modules() {
  const char* off = std::getenv("CT_NO_MODULES");
  if (off && *off && std::strcmp(off, "0") != 0) return;
  std::string dir;
  if (const char* d = std::getenv("CT_MODULE_DIR")) {
    dir = d;
  } else {
    Dl_info info;
    if (!dladdr(reinterpret_cast<void*>(&ct_library_load), &info) || !info.dli_fname) return;
    dir = info.dli_fname;
    const size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? std::string(".") : dir.substr(0, slash);
  }
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    const std::string pre = "libctensor_", suf = ".so";
    if (n.size() > pre.size() + suf.size() && n.compare(0, pre.size(), pre) == 0 &&
        n.compare(n.size() - suf.size(), suf.size(), suf) == 0)
      names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    const std::string p = dir + "/" + n;
    Library* lib = nullptr;
    if (CTStatus s = load_library(p.c_str(), CT_LIBRARY_MODULE, &lib)) record_failure(p.c_str(), s, CT_LIBRARY_MODULE);
  }
}

// lib if it is a loaded library, else nullptr (a stale or foreign handle).
const Library* loaded_library(const CTLibrary* handle) {
  std::lock_guard<std::recursive_mutex> lock(g_load_mu);
  for (const Library* l : *g_loaded)
    if (reinterpret_cast<const CTLibrary*>(l) == handle) return l;
  return nullptr;
}

}  // namespace

CTStatus check_abi_major(const char* fn, const char* what, uint32_t version) {
  if ((version >> 16) == CT_PLUGIN_ABI_MAJOR) return CT_OK;
  return fail(CT_ERR_ABI_VERSION,
              "%s: %s was built against plugin ABI %u.%u; this library speaks %u.%u (a different major does not load)",
              fn, what, version >> 16, version & 0xffffu, (unsigned)CT_PLUGIN_ABI_MAJOR, (unsigned)CT_PLUGIN_ABI_MINOR);
}

bool pin(const Library* l) {
  std::atomic<int64_t>& r = const_cast<Library*>(l)->refs;
  int64_t v = r.load(std::memory_order_relaxed);
  while (v > 0)
    if (r.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) return true;
  return false;
}

void unpin(const Library* l) {
  Library* lib = const_cast<Library*>(l);
  if (lib->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) close_library(lib);
}

Library* loading_library() { return t_loading; }

CTStatus library_gone(const char* fn, const Library* lib) {
  return fail(CT_ERR_NOT_FOUND, "%s: the plugin \"%s\" (%s) that runs this was unloaded", fn, lib->name.c_str(),
              lib->path.c_str());
}

void load_plugin_path() {
  load_modules();
  clear_error();
  const char* env = std::getenv("CT_PLUGIN_PATH");
  if (!env) return;
  const std::string list = env;
  size_t at = 0;
  while (at <= list.size()) {
    size_t end = list.find(':', at);
    if (end == std::string::npos) end = list.size();
    const std::string p = list.substr(at, end - at);
    at = end + 1;
    if (p.empty()) continue;
    Library* lib = nullptr;
    if (CTStatus s = load_library(p.c_str(), CT_LIBRARY_PLUGIN_PATH, &lib)) record_failure(p.c_str(), s, CT_LIBRARY_PLUGIN_PATH);
  }
  clear_error();
}

// ct_library_load's work; origin says who asked (CTLibraryOrigin).
CTStatus load_library(const char* path, int32_t origin, Library** out) {
  std::lock_guard<std::recursive_mutex> lock(g_load_mu);
  if (t_loading)
    return fail(CT_ERR_INVALID_ARGUMENT, "ct_library_load: %s: called from ct_plugin_init of %s (plugins load one at a time)",
                    path, t_loading->path.c_str());
  char real[PATH_MAX];
  if (!realpath(path, real)) return fail(CT_ERR_NOT_FOUND, "ct_library_load: %s: no such file", path);
  for (const Library* o : *g_loaded)
    if (o->path == real)
      return fail(CT_ERR_INVALID_ARGUMENT, "ct_library_load: %s is loaded already (as plugin \"%s\")", real,
                      o->name.c_str());
  // A file already mapped into the process (linked in, opened by other
  // code, or a previous load still closing) would run its init a second
  // time over its live state: refused.
  if (void* mapped = dlopen(real, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    dlclose(mapped);
    return fail(CT_ERR_INVALID_ARGUMENT,
                "ct_library_load: %s is already in this process (linked in, opened by other code, or a previous load "
                "whose calls or plans are still running); its ct_plugin_init would run twice",
                real);
  }
  dlerror();
  void* h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    return fail(CT_ERR_NOT_FOUND, "ct_library_load: cannot load %s: %s", real, e ? e : "dlopen failed");
  }
  CTPluginInitFn init = reinterpret_cast<CTPluginInitFn>(dlsym(h, CT_PLUGIN_INIT_SYMBOL));
  if (!init) {
    dlclose(h);
    return fail(CT_ERR_NOT_FOUND, "ct_library_load: %s exports no %s (the plugin entry point, see plugin.h)", real,
                    CT_PLUGIN_INIT_SYMBOL);
  }
  // A plugin that says its version before init runs (CT_PLUGIN_ABI_SYMBOL)
  // is refused there when its major differs, before any of its code runs.
  if (const uint32_t* v = static_cast<const uint32_t*>(dlsym(h, CT_PLUGIN_ABI_SYMBOL)))
    if (CTStatus bad = check_abi_major("ct_library_load", real, *v)) {
      dlclose(h);
      return bad;
    }
  Library* lib = new Library;
  lib->path = real;
  lib->origin = origin;
  lib->handle = h;
  lib->fini = reinterpret_cast<CTPluginFiniFn>(dlsym(h, CT_PLUGIN_FINI_SYMBOL));
  if (CTStatus s = init_library(lib, init)) {
    drop_staged_backends();
    drop_staged_ops();
    dlclose(h);
    delete lib;
    return s;
  }
  clear_error();  // a registration the plugin tolerated may have left a message: the load succeeded
  lib->loaded.store(true, std::memory_order_release);
  g_loaded->push_back(lib);
  *out = lib;
  return CT_OK;
}

namespace {

// What a plugin's example callback wrote (ct_op_example), before a caller
// sees it: ndim in -1..CT_MAX_NDIM (-1 only for an optional input), extents
// >= 0, and a call the op's own output_shape accepts (stand-in tensors of
// its first dtype, by role). CT_ERR_BACKEND naming the example and the fault.
CTStatus check_example(const char* fn, const OpDef* d, int32_t index, int32_t size, void* desc, const int32_t* nd,
                       int64_t (*shape)[CT_MAX_NDIM]) {
  for (int32_t i = 0; i < d->num_inputs; ++i) {
    const bool optional = (d->optional_mask >> i) & 1u;
    if (nd[i] < -1 || nd[i] > CT_MAX_NDIM || (nd[i] == -1 && !optional))
      return fail(CT_ERR_BACKEND, "%s: %s's example (index=%d, size=%d) gave ndim=%d for %s, which takes 0..%d dims%s",
                  fn, d->name, index, size, nd[i], d->tensor[i], CT_MAX_NDIM,
                  optional ? " or -1 (left out)" : " (it is not optional: -1 is not allowed)");
    for (int32_t k = 0; k < nd[i]; ++k)
      if (shape[i][k] < 0)
        return fail(CT_ERR_BACKEND, "%s: %s's example (index=%d, size=%d) gave %s.shape[%d]=%lld, a negative extent",
                    fn, d->name, index, size, d->tensor[i], k, (long long)shape[i][k]);
  }
  int32_t dt = 0;
  while (dt < CT_DT_COUNT - 1 && !((d->dtypes >> dt) & 1u)) ++dt;
  CTensor t[CT_NN_MAX_TENSORS];
  const CTensor* in[CT_NN_MAX_TENSORS];
  for (int32_t i = 0; i < d->num_inputs; ++i) {
    in[i] = nullptr;
    if (nd[i] < 0) continue;
    const int32_t r = d->role[i];
    const int32_t tdt = r == CT_ROLE_COND                         ? (int32_t)CT_DT_BOOL
                        : r == CT_ROLE_STAT || r == CT_ROLE_PARAM ? (int32_t)CT_DT_FLOAT32
                        : r == CT_ROLE_INDEX                      ? (int32_t)CT_DT_INT64
                                                                  : dt;
    t[i] = CTensor{nullptr, {CT_CPU, 0}, nd[i], dtype_of(tdt), shape[i], nullptr, 0};
    in[i] = &t[i];
  }
  CTOpArgs a;
  std::memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.desc = d->desc_size > 0 ? desc : nullptr;
  CTOutputInfo outs[CT_NN_MAX_TENSORS];
  if (CTStatus s = ct_op_output_info(d->id, &a, in, d->num_inputs, outs, d->num_tensors - d->num_inputs)) {
    const std::string why = ct_last_error();
    return fail(CT_ERR_BACKEND, "%s: %s's example (index=%d, size=%d) is not a call the op accepts (%s): %s", fn,
                d->name, index, size, ct_status_string(s), why.c_str());
  }
  return CT_OK;
}

}  // namespace

}  // namespace ct

extern "C" {

CT_API CTStatus ct_library_load(const char* path, CTLibrary** out) {
  CT_API_BEGIN("ct_library_load")
  if (!path || !out) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_library_load: path and lib must not be NULL");
  ct::register_first_use();
  ct::Library* lib = nullptr;
  if (CTStatus s = ct::load_library(path, CT_LIBRARY_LOADED, &lib)) return s;
  *out = reinterpret_cast<CTLibrary*>(lib);
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_library_unload(CTLibrary* handle) {
  CT_API_BEGIN("ct_library_unload")
  ct::Library* lib = reinterpret_cast<ct::Library*>(handle);
  {
    std::lock_guard<std::recursive_mutex> lock(ct::g_load_mu);
    size_t at = 0;
    while (at < ct::g_loaded->size() && (*ct::g_loaded)[at] != lib) ++at;
    if (!lib || at == ct::g_loaded->size())
      return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_library_unload: lib=%p is not a loaded library", (void*)handle);
    if (ct::t_loading)
      return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_library_unload: called from a plugin's ct_plugin_init");
    // Waiting below for this thread's own outer call would never end (and
    // that call may be in the plugin's code).
    if (ct::reader_slot()->depth > 1)
      return ct::fail(CT_ERR_INVALID_ARGUMENT,
                      "ct_library_unload: called from inside another ctensor call on this thread (a kernel or "
                      "callback); unload \"%s\" once that call has returned",
                      lib->name.c_str());
    ct::g_loaded->erase(ct::g_loaded->begin() + (std::ptrdiff_t)at);
    lib->loaded.store(false, std::memory_order_release);
    ct::retire_ops(lib);
    ct::remove_backends(lib);
    ct::drop_cached_plans(lib);
  }
  // Calls that found the plugin's ops or kernels before they went are left
  // to return (no lock held: such a call may take the load lock itself).
  if (!ct::wait_for_readers()) return CT_OK;  // a call may still be in its code: it stays mapped (never seen in practice)
  ct::unpin(lib);  // the "loaded" reference: closes now, or when the last plan on its code goes
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_library_info(const CTLibrary* handle, CTLibraryInfo* info) {
  CT_API_BEGIN("ct_library_info")
  if (CTStatus s = ct::check_struct_size("ct_library_info", "info", info, offsetof(CTLibraryInfo, name))) return s;
  const ct::Library* lib = ct::loaded_library(handle);
  if (!lib) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_library_info: lib=%p is not a loaded library", (const void*)handle);
  CTLibraryInfo full;
  std::memset(&full, 0, sizeof full);
  full.abi_version = lib->abi_version;
  std::snprintf(full.name, sizeof full.name, "%s", lib->name.c_str());
  std::snprintf(full.version, sizeof full.version, "%s", lib->version.c_str());
  std::snprintf(full.path, sizeof full.path, "%s", lib->path.c_str());
  full.num_ops = lib->num_ops;
  full.num_devices = lib->num_devices;
  full.num_kernel_tables = lib->num_kernel_tables;
  full.loaded = lib->loaded.load(std::memory_order_acquire) ? 1 : 0;
  full.origin = lib->origin;
  ct::copy_struct_out(info, full);
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_library_op(const CTLibrary* handle, int32_t index, int32_t* op) {
  CT_API_BEGIN("ct_library_op")
  if (!op) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_library_op: op is NULL");
  const ct::Library* lib = ct::loaded_library(handle);
  if (!lib) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_library_op: lib=%p is not a loaded library", (const void*)handle);
  const std::vector<int32_t> ids = ct::library_ops(lib);
  if (index < 0 || index >= (int32_t)ids.size())
    return ct::fail(CT_ERR_NOT_FOUND, "ct_library_op: index=%d but plugin \"%s\" registered %zu op(s)", index,
                    lib->name.c_str(), ids.size());
  *op = ids[(size_t)index];
  return CT_OK;
  CT_API_END()
}

CT_API int32_t ct_library_count(void) {
  ct::register_first_use();
  std::lock_guard<std::recursive_mutex> lock(ct::g_load_mu);
  return (int32_t)ct::g_loaded->size();
}

CT_API CTStatus ct_library_get(int32_t index, CTLibrary** lib) {
  CT_API_BEGIN("ct_library_get")
  if (!lib) return ct::fail(CT_ERR_INVALID_ARGUMENT, "ct_library_get: lib is NULL");
  ct::register_first_use();
  std::lock_guard<std::recursive_mutex> lock(ct::g_load_mu);
  if (index < 0 || index >= (int32_t)ct::g_loaded->size())
    return ct::fail(CT_ERR_NOT_FOUND, "ct_library_get: index=%d but %zu librar%s loaded", index, ct::g_loaded->size(),
                    ct::g_loaded->size() == 1 ? "y is" : "ies are");
  *lib = reinterpret_cast<CTLibrary*>((*ct::g_loaded)[(size_t)index]);
  return CT_OK;
  CT_API_END()
}

CT_API int32_t ct_library_failure_count(void) {
  ct::register_first_use();
  std::lock_guard<std::recursive_mutex> lock(ct::g_load_mu);
  return (int32_t)ct::g_failures->size();
}

CT_API CTStatus ct_library_failure(int32_t index, CTLibraryFailure* out) {
  CT_API_BEGIN("ct_library_failure")
  if (CTStatus s = ct::check_struct_size("ct_library_failure", "failure", out, offsetof(CTLibraryFailure, path)))
    return s;
  std::lock_guard<std::recursive_mutex> lock(ct::g_load_mu);
  if (index < 0 || index >= (int32_t)ct::g_failures->size())
    return ct::fail(CT_ERR_NOT_FOUND, "ct_library_failure: index=%d but %zu plugin(s) failed to load", index,
                    ct::g_failures->size());
  const ct::Failure& f = (*ct::g_failures)[(size_t)index];
  CTLibraryFailure full;
  std::memset(&full, 0, sizeof full);
  full.status = f.status;
  full.origin = f.origin;
  std::snprintf(full.path, sizeof full.path, "%s", f.path.c_str());
  std::snprintf(full.message, sizeof full.message, "%s", f.message.c_str());
  ct::copy_struct_out(out, full);
  return CT_OK;
  CT_API_END()
}

CT_API CTStatus ct_op_reference(int32_t op, const CTensor* const* tensors, int32_t num_tensors, const double* params,
                                const CTOpArgs* args) {
  CT_API_BEGIN("ct_op_reference")
  const char* fn = "ct_op_reference";
  const ct::OpDef* d = ct::op_def(op);
  if (!d) return ct::no_op(fn, op);
  if (!d->reference)
    return ct::fail(CT_ERR_NOT_FOUND, "%s: op %s has no reference in the library (built-in ops: the tool's reference "
                                      "library)", fn, d->name);
  if (!tensors || num_tensors != d->num_tensors)
    return ct::fail(CT_ERR_INVALID_ARGUMENT, "%s: %s takes %d tensors (%s), got %d", fn, d->name, d->num_tensors,
                    d->tensor_names, tensors ? num_tensors : 0);
  if (d->num_params > 0 && !params)
    return ct::fail(CT_ERR_INVALID_ARGUMENT, "%s: params is NULL but %s takes %d (%s)", fn, d->name, d->num_params,
                    d->param_names);
  CTOpArgs a;
  if (CTStatus s = ct::load_op_args(fn, args, &a)) return s;
  for (int32_t i = 0; i < num_tensors; ++i) {
    if (!tensors[i] && ((d->optional_mask >> i) & 1u)) continue;
    ct::TensorFacts f;
    if (CTStatus s = ct::check_tensor(fn, d->tensor[i], tensors[i], &f)) return s;
    if (tensors[i]->device.device_type != CT_CPU)
      return ct::fail(CT_ERR_INVALID_ARGUMENT, "%s: %s: %s is not in host memory", fn, d->name, d->tensor[i]);
  }
  // Outputs: exactly what the shape query says for these inputs.
  const int32_t nin = d->num_inputs, nout = d->num_tensors - d->num_inputs;
  CTOutputInfo want[CT_NN_MAX_TENSORS];
  if (CTStatus s = ct_op_output_info(op, &a, tensors, nin, want, nout)) {
    const std::string why = ct_last_error();  // the shape query's message, under this entry point's name
    return ct::fail(s, "%s: %s", fn, why.c_str());
  }
  for (int32_t k = 0; k < nout; ++k) {
    const CTensor* t = tensors[nin + k];
    if (!t) continue;
    bool same = t->ndim == want[k].ndim && ct_dtype_index(t->dtype) == ct_dtype_index(want[k].dtype);
    for (int32_t i = 0; same && i < t->ndim; ++i) same = t->shape[i] == want[k].shape[i];
    if (!same) {
      char g[24 * CT_MAX_NDIM + 4], w[24 * CT_MAX_NDIM + 4], gd[64], wd[64];
      return ct::fail(CT_ERR_SHAPE_MISMATCH, "%s: %s: %s is %s %s but the op writes %s %s", fn, d->name,
                      d->tensor[nin + k], ct::describe_dtype(gd, sizeof gd, t->dtype),
                      ct::format_shape(g, sizeof g, t->ndim, t->shape), ct::describe_dtype(wd, sizeof wd, want[k].dtype),
                      ct::format_shape(w, sizeof w, want[k].ndim, want[k].shape));
    }
  }
  // Broadcasting ops: inputs as views of the output's shape (as kernels get them).
  const CTensor* ts[CT_NN_MAX_TENSORS];
  CTensor views[CT_NN_MAX_TENSORS];
  int64_t strides[CT_NN_MAX_TENSORS][CT_MAX_NDIM];
  for (int32_t i = 0; i < num_tensors; ++i) ts[i] = tensors[i];
  if (d->shape_rule == CT_SHAPE_BROADCAST && tensors[nin])
    for (int32_t i = 0; i < nin; ++i) {
      ct::broadcast_view(tensors[i], tensors[nin], strides[i], &views[i]);
      ts[i] = &views[i];
    }
  if ((d->kind == CT_KIND_ALONG_AXIS || d->kind == CT_KIND_INDEX) && a.axis < 0)
    a.axis += tensors[0]->ndim > 0 ? tensors[0]->ndim : 1;
  return d->reference(ts, num_tensors, params, &a);
  CT_API_END()
}

CT_API CTStatus ct_op_example(int32_t op, int32_t index, int32_t size, void* desc, size_t desc_bytes,
                              int32_t num_inputs, int32_t* ndim, int64_t (*shape)[CT_MAX_NDIM]) {
  CT_API_BEGIN("ct_op_example")
  const char* fn = "ct_op_example";
  const ct::OpDef* d = ct::op_def(op);
  if (!d) return ct::no_op(fn, op);
  if (d->kind != CT_KIND_NN)
    return ct::fail(CT_ERR_UNSUPPORTED, "%s: op=%d (%s) is a %s op; examples are for NN ops (tools make the "
                                        "arguments of the other kinds themselves)", fn, op, d->name,
                    ct::kind_name(d->kind));
  if (!d->example)
    return ct::fail(CT_ERR_NOT_FOUND, "%s: op=%d (%s) has no examples (%s)", fn, op, d->name,
                    op >= ct::builtin_op_count() ? "its plugin's CTOpDesc.example is NULL or older than ABI 1.2"
                                                 : "a built-in op: the tool's own cases, tools/check_cases.cc");
  if (size != 0 && size != 1)
    return ct::fail(CT_ERR_INVALID_ARGUMENT, "%s: size=%d; it is 0 (small, a check case) or 1 (large, a benchmark)",
                    fn, size);
  if (index < 0) return ct::fail(CT_ERR_INVALID_ARGUMENT, "%s: index=%d is negative", fn, index);
  const size_t dsize = (size_t)d->desc_size;
  if (!desc && dsize > 0)
    return ct::fail(CT_ERR_INVALID_ARGUMENT, "%s: desc is NULL but %s's descriptor has desc_size=%zu bytes", fn,
                    d->name, dsize);
  if (desc_bytes < dsize)
    return ct::fail(CT_ERR_INVALID_ARGUMENT, "%s: desc_bytes=%zu but %s's descriptor has desc_size=%zu bytes", fn,
                    desc_bytes, d->name, dsize);
  if (num_inputs != d->num_inputs)
    return ct::fail(CT_ERR_INVALID_ARGUMENT, "%s: num_inputs=%d but %s takes %d input(s) (of %s)", fn, num_inputs,
                    d->name, d->num_inputs, d->tensor_names);
  if (!ndim || !shape)
    return ct::fail(CT_ERR_INVALID_ARGUMENT, "%s: %s is NULL (one entry per input of %s)", fn,
                    !ndim ? "ndim" : "shape", d->name);
  // The plugin writes into scratch; the caller's buffers get it once checked.
  unsigned char dbuf[ct::kMaxCustomDesc + 1];
  int32_t nd[CT_NN_MAX_TENSORS];
  int64_t shp[CT_NN_MAX_TENSORS][CT_MAX_NDIM];
  std::memset(dbuf, 0, sizeof dbuf);
  std::memset(shp, 0, sizeof shp);
  for (int32_t& n : nd) n = INT32_MIN;  // not written
  const CTStatus s = d->example(index, size, dbuf, nd, shp);
  if (s == CT_ERR_NOT_FOUND)
    return ct::fail(CT_ERR_NOT_FOUND, "%s: %s has no example index=%d of size=%d (past its last)", fn, d->name,
                    index, size);
  if (s != CT_OK) {
    const std::string why = ct_last_error();
    if (s > 0 || s < CT_ERR_INTERNAL)
      return ct::fail(CT_ERR_BACKEND, "%s: %s's example (index=%d, size=%d) returned %d, not a CTStatus%s%s", fn,
                      d->name, index, size, (int)s, why.empty() ? "" : ": ", why.c_str());
    return ct::fail(s, "%s: %s's example (index=%d, size=%d) failed with %s: %s", fn, d->name, index, size,
                    ct_status_string(s), why.empty() ? "(it set no message)" : why.c_str());
  }
  for (int32_t i = 0; i < d->num_inputs; ++i)
    if (nd[i] == INT32_MIN)
      return ct::fail(CT_ERR_BACKEND, "%s: %s's example (index=%d, size=%d) returned CT_OK without writing ndim[%d] (%s)",
                      fn, d->name, index, size, i, d->tensor[i]);
  if (CTStatus c = ct::check_example(fn, d, index, size, dbuf, nd, shp)) return c;
  if (dsize > 0) std::memcpy(desc, dbuf, dsize);
  for (int32_t i = 0; i < d->num_inputs; ++i) {
    ndim[i] = nd[i];
    for (int32_t k = 0; k < CT_MAX_NDIM; ++k) shape[i][k] = k < nd[i] ? shp[i][k] : 0;
  }
  return CT_OK;
  CT_API_END()
}

}  // extern "C"
