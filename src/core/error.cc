// error.cc — the thread-local error message, status names and the version
// entry points.
#include "core/error.h"

#include <cstdio>

namespace ct {
namespace {
// One buffer per thread; ct_last_error() hands out a pointer to it, valid
// until the next ctensor call on the same thread (the documented contract).
thread_local char g_message[1024];
// Whether g_message may hold a message: every call clears the message, and
// this flag lets it do so without reaching the buffer, whose general-dynamic
// TLS access (__tls_get_addr) costs more than the rest of a clear. A flag
// this small can be initial-exec even in a dlopen'ed library.
__thread bool t_message_set __attribute__((tls_model("initial-exec"))) = false;
}  // namespace

CTStatus fail(CTStatus status, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(g_message, sizeof g_message, fmt, args);
  va_end(args);
  t_message_set = true;
  return status;
}

CTStatus vfail(CTStatus status, const char* fmt, va_list args) {
  std::vsnprintf(g_message, sizeof g_message, fmt ? fmt : "(no message)", args);
  t_message_set = true;
  return status;
}

void clear_error() {
  if (!t_message_set) return;
  g_message[0] = '\0';
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

CT_API const char* ct_last_error(void) { return ct::g_message; }

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
