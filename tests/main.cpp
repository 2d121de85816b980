// The Catch2 runner. Before any test runs, the loopback test backend
// (tests/backends/loopback: its own shared library, built against plugin.h
// only) registers through ct_plugin_host(), so every suite that walks the
// devices also runs on its two CT_EXT_DEV devices. After the run, the
// loopback's allocator must hold nothing: a live allocation is a leak, or
// memory something allocated on the device behind the caller's back.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <ctensor/plugin.h>

#include <cstdio>

#include "loopback.h"

int main(int argc, char* argv[]) {
  const CTStatus reg = ct_loopback_register(ct_plugin_host());
  if (reg != CT_OK) {
    std::fprintf(stderr, "ct_tests: the loopback backend did not register: %s: %s\n", ct_status_string(reg),
                 ct_last_error());
    return 1;
  }
  const int failed = Catch::Session().run(argc, argv);
  CTLoopbackStats s;
  ct_loopback_stats(&s);
  if (s.live != 0 || s.bad_frees != 0) {
    std::fprintf(stderr,
                 "ct_tests: the loopback device holds %lld live allocation(s) after the run (%lld through ct_malloc, "
                 "%lld through its default allocator, %lld freed) and saw %lld bad free(s)\n",
                 (long long)s.live, (long long)s.mallocs, (long long)s.temp_allocs, (long long)s.frees,
                 (long long)s.bad_frees);
    return failed ? failed : 1;
  }
  return failed;
}
