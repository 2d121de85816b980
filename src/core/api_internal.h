// api_internal.h — entry-point bodies that more than one file of core runs
// (api.cc defines them; copy.cc and nn.cc call them).
#ifndef CTENSOR_SRC_CORE_API_INTERNAL_H_
#define CTENSOR_SRC_CORE_API_INTERNAL_H_

#include <ctensor/ctensor.h>

namespace ct {

// Validates and runs an elementwise op (unary, unary_param, ternary, cast)
// on one device; names[] and out_name name the arguments in messages.
CTStatus run_elementwise(const char* fn, int32_t op, const CTensor* const* in, const char* const* names,
                         int32_t nin, const double* params, int32_t nparams, const CTensor* out,
                         const char* out_name, void* stream);

// ct_cast between two devices: through a temporary on out's device.
CTStatus cast_across_devices(const CTensor* x, const CTensor* out, void* stream);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_API_INTERNAL_H_
