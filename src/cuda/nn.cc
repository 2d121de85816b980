// nn.cc — NN ops on CUDA. Not built yet: every NN op is refused with the
// reason, so ct_op_supported says so and core never routes one here.
#include "backend.h"

namespace ctcu {

const char* nn_why(int32_t, int32_t, std::string*) {
  return "NN ops (matmul through cuBLASLt, conv, pooling and norms through cuDNN) are not in the CUDA module yet";
}

CTStatus cu_nn_plan_create(const CTNNCall* call, void**, size_t*, int64_t*) {
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: %s", call->fn, nn_why(call->op, call->dt, nullptr));
}

CTStatus cu_nn_plan_execute(void*, const CTNNCall* call, void*, size_t) {
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: %s", call->fn, nn_why(call->op, call->dt, nullptr));
}

void cu_nn_plan_destroy(void*) {}

}  // namespace ctcu
