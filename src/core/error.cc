// error.cc — the thread-local error message, status names and the version
// entry points.
#include "core/error.h"

#include <cstdio>
#include <memory>
#include <new>

namespace ct {
namespace {
// One message buffer per thread, on the heap: ct_last_error() hands out a
// pointer to it, valid until the next ctensor call on the same thread (the
// documented contract). Not a thread_local array: the initial-exec variables
// below (and epoch.h's reader slot) put this library's whole TLS block in
// the static TLS that a dlopen draws from a small fixed surplus (glibc:
// about 1.6 KiB for every library loaded late, all together), and a 1 KiB
// array there made a second copy of the library, or one loaded after other
// such libraries, fail to load ("cannot allocate memory in static TLS
// block"). tests/check_static_tls.cmake keeps the block small.
constexpr size_t kMessageBytes = 1024;
thread_local std::unique_ptr<char[]> g_message;
// Whether g_message may hold a message: every call clears the message, and
// this flag lets it do so without reaching the buffer, whose general-dynamic
// TLS access (__tls_get_addr) costs more than the rest of a clear.
__thread bool t_message_set __attribute__((tls_model("initial-exec"))) = false;

// The buffer, allocated on the thread's first failure; NULL without memory
// (the status still says what failed).
char* message_buffer() {
  if (!g_message) {
    g_message.reset(new (std::nothrow) char[kMessageBytes]);
    if (g_message) g_message[0] = '\0';
  }
  return g_message.get();
}
}  // namespace

CTStatus fail(CTStatus status, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  if (char* m = message_buffer()) std::vsnprintf(m, kMessageBytes, fmt, args);
  va_end(args);
  t_message_set = true;
  return status;
}

CTStatus vfail(CTStatus status, const char* fmt, va_list args) {
  if (char* m = message_buffer()) std::vsnprintf(m, kMessageBytes, fmt ? fmt : "(no message)", args);
  t_message_set = true;
  return status;
}

void clear_error() {
  if (!t_message_set) return;
  if (g_message) g_message[0] = '\0';
  t_message_set = false;
}

const char* format_shape(char* buf, size_t n, int32_t ndim, const int64_t* shape) {
  size_t used = 0;
  used += std::snprintf(buf + used, n - used, "[");
  for (int32_t i = 0; i < ndim && used < n; ++i)
    used += std::snprintf(buf + used, n - used, i ? ",%lld" : "%lld", (long long)shape[i]);
  if (used < n) std::snprintf(buf + used, n - used, "]");
  return buf;
}

}  // namespace ct

extern "C" {

CT_API const char* ct_last_error(void) {
  if (const char* m = ct::g_message.get()) return m;
  return ct::t_message_set ? "(no memory for this thread's error message)" : "";
}

CT_API const char* ct_status_string(CTStatus status) {
  switch (status) {
    case CT_OK: return "CT_OK";
    case CT_ERR_INVALID_ARGUMENT: return "CT_ERR_INVALID_ARGUMENT";
    case CT_ERR_NEED_CONTIGUOUS: return "CT_ERR_NEED_CONTIGUOUS";
    case CT_ERR_UNSUPPORTED: return "CT_ERR_UNSUPPORTED";
    case CT_ERR_SHAPE_MISMATCH: return "CT_ERR_SHAPE_MISMATCH";
    case CT_ERR_DTYPE_MISMATCH: return "CT_ERR_DTYPE_MISMATCH";
    case CT_ERR_DEVICE_MISMATCH: return "CT_ERR_DEVICE_MISMATCH";
    case CT_ERR_WORKSPACE_TOO_SMALL: return "CT_ERR_WORKSPACE_TOO_SMALL";
    case CT_ERR_OUT_OF_MEMORY: return "CT_ERR_OUT_OF_MEMORY";
    case CT_ERR_BACKEND: return "CT_ERR_BACKEND";
    case CT_ERR_ABI_VERSION: return "CT_ERR_ABI_VERSION";
    case CT_ERR_NOT_FOUND: return "CT_ERR_NOT_FOUND";
    case CT_ERR_INTERNAL: return "CT_ERR_INTERNAL";
    default: return "CT_ERR_UNKNOWN";
  }
}

CT_API uint32_t ct_version(void) { return CT_VERSION; }

#define CT_STR2_(x) #x
#define CT_STR_(x) CT_STR2_(x)
CT_API const char* ct_version_string(void) {
  return CT_STR_(CT_VERSION_MAJOR) "." CT_STR_(CT_VERSION_MINOR) "." CT_STR_(CT_VERSION_PATCH);
}

}  // extern "C"
