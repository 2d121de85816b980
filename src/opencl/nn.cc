// nn.cc — NN ops on OpenCL devices: matmul through CLBlast (when built in).
#include "backend.h"

namespace ctcl {

bool nn_supported(int32_t op, int32_t dt, std::string* why) {
  (void)op;
  (void)dt;
  *why = "no NN kernels in the OpenCL backend yet";
  return false;
}

CTStatus cl_nn_plan_create(const CTNNCall* call, void**, size_t*, int64_t*) {
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: no NN kernels in the OpenCL backend yet", call->fn);
}
CTStatus cl_nn_plan_execute(void*, const CTNNCall* call, void*, size_t) {
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: no NN kernels in the OpenCL backend yet", call->fn);
}
void cl_nn_plan_destroy(void*) {}

}  // namespace ctcl
