// host.cc — the CPU backend's side of the host table: messages, op and
// dtype names (everything it knows of core comes through plugin.h).
#include "cpu/host.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace ct {
namespace cpu {

extern const CTHost* g_host;

const CTHost* host() { return g_host; }

CTStatus fail(CTStatus status, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return g_host ? g_host->set_error(status, "%s", buf) : status;
}

const char* op_name(int32_t op) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (g_host && g_host->op_info(op, &info) == CT_OK) return info.name;
  return "op?";
}

const char* dtype_name(int32_t dt) { return g_host ? g_host->dtype_name(dt) : "?"; }

}  // namespace cpu
}  // namespace ct
