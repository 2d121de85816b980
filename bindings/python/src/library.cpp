// library.cpp — plugin libraries from Python: load, unload, what each brought, the CT_PLUGIN_PATH failures.
//
// The Python layer (ctensor/__init__.py: load_library, Library, libraries) holds a library as the integer
// value of its CTLibrary handle and makes the functions of its ops with _bind_ops (ops.cpp), the generator
// the built-ins' functions come from.
#include <sys/stat.h>

#include "common.h"

#include <ctensor/plugin.h>

namespace ctpy {
namespace {

CTLibrary* handle_of(uintptr_t h) { return reinterpret_cast<CTLibrary*>(h); }

// Whether `h` is a library loaded now (ct_library_get lists them).
bool is_loaded(uintptr_t h) {
  for (int32_t i = 0, n = ct_library_count(); i < n; ++i) {
    CTLibrary* lib = nullptr;
    if (ct_library_get(i, &lib) == CT_OK && lib == handle_of(h)) return true;
  }
  return false;
}

nb::dict library_info(uintptr_t h) {
  if (!is_loaded(h)) raise(PyExc_ValueError, "ctensor: library handle 0x%zx is not a loaded library", (size_t)h);
  CTLibrary* lib = handle_of(h);
  CTLibraryInfo i{};
  i.struct_size = sizeof i;
  check(ct_library_info(lib, &i));
  nb::list ops;
  for (int32_t k = 0; k < i.num_ops; ++k) {
    int32_t op = -1;
    check(ct_library_op(lib, k, &op));
    ops.append(op);
  }
  nb::dict d;
  d["handle"] = h;
  d["name"] = i.name;
  d["version"] = i.version;
  d["path"] = i.path;
  d["abi_version"] = nb::make_tuple(i.abi_version >> 16, i.abi_version & 0xffffu);
  d["num_ops"] = i.num_ops;
  d["num_devices"] = i.num_devices;
  d["num_kernel_tables"] = i.num_kernel_tables;
  d["op_ids"] = nb::tuple(ops);
  return d;
}

// ct_library_load. A file that does not load (CT_ERR_NOT_FOUND: no such
// file, not a shared library, no ct_plugin_init) raises OSError, as
// ctypes.CDLL does (FileNotFoundError when there is no such file); any other
// failure raises as every ctensor error does (ValueError for a second load
// of one file, a name or device type taken; RuntimeError for an ABI major
// mismatch).
uintptr_t library_load(const std::string& path) {
  CTLibrary* lib = nullptr;
  const CTStatus s = ct_library_load(path.c_str(), &lib);
  if (s == CT_ERR_NOT_FOUND) {
    struct stat st;
    const std::string msg = ct_last_error();
    PyErr_SetString(::stat(path.c_str(), &st) != 0 ? PyExc_FileNotFoundError : PyExc_OSError, msg.c_str());
    throw nb::python_error();
  }
  check(s);
  return reinterpret_cast<uintptr_t>(lib);
}

void library_unload(uintptr_t h) {
  if (!is_loaded(h)) raise(PyExc_ValueError, "ctensor: library handle 0x%zx is not a loaded library", (size_t)h);
  check(ct_library_unload(handle_of(h)));
}

nb::list library_handles() {
  nb::list v;
  for (int32_t i = 0, n = ct_library_count(); i < n; ++i) {
    CTLibrary* lib = nullptr;
    if (ct_library_get(i, &lib) == CT_OK) v.append(reinterpret_cast<uintptr_t>(lib));
  }
  return v;
}

nb::list library_failures() {
  nb::list v;
  for (int32_t i = 0, n = ct_library_failure_count(); i < n; ++i) {
    CTLibraryFailure f{};
    f.struct_size = sizeof f;
    if (ct_library_failure(i, &f) != CT_OK) continue;
    nb::dict d;
    d["path"] = f.path;
    d["status"] = ct_status_string(f.status);
    d["message"] = f.message;
    v.append(d);
  }
  return v;
}

}  // namespace

void init_library(nb::module_& m) {
  // The plugin ABI this build speaks: a plugin of this major loads, any minor.
  m.attr("PLUGIN_ABI_VERSION") = nb::make_tuple((int)CT_PLUGIN_ABI_MAJOR, (int)CT_PLUGIN_ABI_MINOR);
  m.def("_library_load", &library_load, nb::arg("path"), "ct_library_load: the handle of the loaded library");
  m.def("_library_unload", &library_unload, nb::arg("handle"), "ct_library_unload");
  m.def("_library_loaded", &is_loaded, nb::arg("handle"), "whether handle is a library loaded now");
  m.def("_library_info", &library_info, nb::arg("handle"), "ct_library_info and ct_library_op as a dict");
  m.def("_library_handles", &library_handles, "the handles of the libraries loaded now, in order of loading");
  m.def("_library_failures", &library_failures, "the plugins of CT_PLUGIN_PATH that did not load, and why");
  m.def("_bind_ops", &bind_ops, nb::arg("ids"),
        "the functions of ops `ids`, made as the built-ins' are: ({name: function}, {op id: names})");
}

}  // namespace ctpy
