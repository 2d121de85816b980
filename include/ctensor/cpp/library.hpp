// ctensor/cpp/library.hpp: ct::Library, a loaded plugin library (RAII over ct_library_load / ct_library_unload).
//
// Part of the header-only C++11 wrapper; include <ctensor/ctensor.hpp> for all of it. How to write a plugin:
// docs/writing-a-plugin.md. The ops a plugin adds run through the generic entry points by id, like the
// built-ins: ct::unary(ct::op_id("isru"), x), ct::binary(op, a, b), ct::reduce(op, x, axes), ...
#ifndef CTENSOR_CPP_LIBRARY_HPP_
#define CTENSOR_CPP_LIBRARY_HPP_

#include "../ctensor.h"
#include "error.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ct {

/** What a loaded plugin library is and what it brought (ct_library_info,
 *  ct_library_op). */
struct LibraryInfo {
  std::string name;          ///< the plugin's name ("isru")
  std::string version;       ///< its own version string ("1.0.0")
  std::string path;          ///< the file it was loaded from (resolved)
  uint32_t abi_version = 0;  ///< the plugin ABI it was built against: major << 16 | minor
  int32_t num_ops = 0;       ///< ops it registered
  int32_t num_devices = 0;   ///< device types it registered
  int32_t num_kernel_tables = 0;  ///< kernel tables it registered
  bool loaded = false;       ///< false once unloaded
  std::vector<int32_t> ops;  ///< the ids of its ops, in id order

  uint32_t abi_major() const noexcept { return abi_version >> 16; }
  uint32_t abi_minor() const noexcept { return abi_version & 0xffffu; }
};

/** A plugin that did not load from CT_PLUGIN_PATH (ct_library_failure). */
struct LibraryFailure {
  CTStatus status = CT_OK;  ///< what ct_library_load returned
  std::string path;         ///< the path as CT_PLUGIN_PATH gave it
  std::string message;      ///< why (ct_last_error() of that load)
};

namespace detail {

inline LibraryInfo library_info(const CTLibrary* lib) {
  CTLibraryInfo c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  check(ct_library_info(lib, &c));
  LibraryInfo i;
  i.name = c.name;
  i.version = c.version;
  i.path = c.path;
  i.abi_version = c.abi_version;
  i.num_ops = c.num_ops;
  i.num_devices = c.num_devices;
  i.num_kernel_tables = c.num_kernel_tables;
  i.loaded = c.loaded != 0;
  for (int32_t k = 0; k < c.num_ops; ++k) {
    int32_t op = -1;
    check(ct_library_op(lib, k, &op));
    i.ops.push_back(op);
  }
  return i;
}

}  // namespace detail

/** A loaded plugin library: the constructor loads it (ct_library_load), the
 *  destructor unloads it (ct_library_unload: its ops, device types and
 *  kernel tables go; it waits for calls in flight on other threads, and
 *  plans made by its kernels keep its code loaded until they are destroyed). Move-only. A load that fails throws
 *  ct::Error with the library's status and message and leaves nothing
 *  loaded or registered.
 *
 *  @code
 *    ct::Library lib("./libisru.so");
 *    ct::Tensor y = ct::unary(ct::op_id("isru"), x);
 *    std::printf("%s %s: %d op(s)\n", lib.name().c_str(), lib.version().c_str(), lib.info().num_ops);
 *  @endcode */
class Library {
 public:
  /** No library. */
  Library() noexcept : lib_(nullptr) {}
  /** ct_library_load(@p path): throws ct::Error (CT_ERR_NOT_FOUND: no such
   *  file, not a shared library, no ct_plugin_init; CT_ERR_ABI_VERSION;
   *  CT_ERR_INVALID_ARGUMENT: loaded already, a name or device type taken;
   *  or the status the plugin's init returned). */
  explicit Library(const std::string& path) : lib_(nullptr) { check(ct_library_load(path.c_str(), &lib_)); }
  /** Takes over @p lib (from ct_library_load or ct_library_get): this
   *  object unloads it. */
  static Library adopt(CTLibrary* lib) noexcept {
    Library l;
    l.lib_ = lib;
    return l;
  }
  ~Library() { reset(); }
  Library(Library&& o) noexcept : lib_(o.lib_) { o.lib_ = nullptr; }
  Library& operator=(Library&& o) noexcept {
    if (this != &o) {
      reset();
      lib_ = o.lib_;
      o.lib_ = nullptr;
    }
    return *this;
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  /** True while this object holds a library. */
  explicit operator bool() const noexcept { return lib_ != nullptr; }
  /** The C handle (nullptr if none); still owned by this object. */
  CTLibrary* get() const noexcept { return lib_; }
  /** Gives up ownership: the library stays loaded (for the process, or
   *  until someone unloads the handle returned). */
  CTLibrary* release() noexcept {
    CTLibrary* l = lib_;
    lib_ = nullptr;
    return l;
  }
  /** Unloads now; throws ct::Error if the library refuses (a no-op without one). */
  void unload() {
    if (!lib_) return;
    CTLibrary* l = lib_;
    lib_ = nullptr;
    check(ct_library_unload(l));
  }

  /** Everything ct_library_info says, and the ids of its ops. Throws without a library. */
  LibraryInfo info() const { return detail::library_info(need()); }
  std::string name() const { return info().name; }
  std::string version() const { return info().version; }
  std::string path() const { return info().path; }
  uint32_t abi_version() const { return info().abi_version; }
  /** The ids of the ops it registered (ct_library_op), in id order. */
  std::vector<int32_t> ops() const { return info().ops; }
  /** The names of those ops. */
  std::vector<std::string> op_names() const {
    std::vector<std::string> names;
    for (int32_t op : ops()) {
      CTOpInfo i;
      std::memset(&i, 0, sizeof i);
      i.struct_size = sizeof i;
      check(ct_op_info(op, &i));
      names.push_back(i.name);
    }
    return names;
  }

  /** Every library loaded now, in order of loading (ct_library_count,
   *  ct_library_get): those of ct_library_load, ct::Library and
   *  CT_PLUGIN_PATH alike. */
  static std::vector<LibraryInfo> loaded() {
    std::vector<LibraryInfo> v;
    const int32_t n = ct_library_count();
    for (int32_t i = 0; i < n; ++i) {
      CTLibrary* l = nullptr;
      check(ct_library_get(i, &l));
      v.push_back(detail::library_info(l));
    }
    return v;
  }
  /** The plugins of CT_PLUGIN_PATH that did not load, and why. */
  static std::vector<LibraryFailure> failures() {
    std::vector<LibraryFailure> v;
    const int32_t n = ct_library_failure_count();
    for (int32_t i = 0; i < n; ++i) {
      CTLibraryFailure f;
      std::memset(&f, 0, sizeof f);
      f.struct_size = sizeof f;
      check(ct_library_failure(i, &f));
      LibraryFailure r;
      r.status = f.status;
      r.path = f.path;
      r.message = f.message;
      v.push_back(r);
    }
    return v;
  }

 private:
  void reset() noexcept {
    if (lib_) ct_library_unload(lib_);  // a destructor does not throw: a refusal leaves it loaded
    lib_ = nullptr;
  }
  CTLibrary* need() const {
    if (!lib_) detail::fail(CT_ERR_INVALID_ARGUMENT, "ct::Library: no library (moved from, released or unloaded)");
    return lib_;
  }

  CTLibrary* lib_;
};

}  // namespace ct

#endif  // CTENSOR_CPP_LIBRARY_HPP_
