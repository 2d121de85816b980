// Test-only fault injection for `ctensor check`'s own tests.
#pragma once
#include <ctensor/ctensor.h>

namespace ct {

// When the environment variable CT_DEBUG_PERTURB names an op ("exp"), every
// successful call of that op adds 1 to the first element of its output (the
// first output for NN ops; bool flips), on CPU memory. This is how the tool's
// tests prove that `ctensor check` catches a broken kernel. Read once per
// process; when unset, this costs one test of a flag per call. Returns `s`.
extern const bool g_perturb_env;  // CT_DEBUG_PERTURB is set (read when the library loads)
CTStatus debug_perturb_env(int32_t op, const CTensor* out, CTStatus s);
inline CTStatus debug_perturb(int32_t op, const CTensor* out, CTStatus s) {
  return __builtin_expect(g_perturb_env, 0) ? debug_perturb_env(op, out, s) : s;
}

// The same for an NN op's tensor arguments (the first non-NULL output).
CTStatus debug_perturb_nn(int32_t op, const CTensor* const* t, int32_t num, CTStatus s);

}  // namespace ct
