// builtin_backends.cc — the one place that names the backends built into
// libctensor. Core calls register_builtin_backends() once, at first use;
// each backend registers through plugin.h exactly as a plugin would.
#include "core/backends.h"
#include "cpu/host.h"

namespace ct {

void register_builtin_backends(const CTHost* host) {
  // A failure leaves that backend out; ct_device_count() then shows it.
  (void)ct_cpu_backend_register(host);
}

}  // namespace ct
