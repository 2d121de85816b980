/*
 * custom_ops.h — what a caller of the custom_ops plugin needs besides
 * ctensor.h: the op names and the descriptor of gemm_relu. The plugin
 * itself exports only ct_plugin_init; its ops are found by name at run
 * time (ct_op_find) and called through the generic entry points.
 *
 * C99, includes only <stdint.h>.
 */
#ifndef CTENSOR_EXAMPLE_CUSTOM_OPS_H_
#define CTENSOR_EXAMPLE_CUSTOM_OPS_H_

#include <stdint.h>

/** The plugin's name (CTLibraryInfo.name) and version. */
#define CUSTOM_OPS_NAME "custom_ops"
#define CUSTOM_OPS_VERSION "1.0.0"

/** out = gelu(a + b), NumPy broadcasting, float32 and float64, erf form:
 *  gelu(x) = x / 2 * (1 + erf(x / sqrt(2))). Binary kind: ct_binary. */
#define CUSTOM_OPS_BIAS_GELU "bias_gelu"

/** y = relu(alpha * a @ b + bias): a (M, K), b (K, N), bias (N,) or absent,
 *  y (M, N); float32. NN kind: ct_nn, ct_nn_workspace_size, ct_plan_create
 *  with the tensors {a, b, bias or NULL, y} and a CTGemmReluDesc (core
 *  copies sizeof(CTGemmReluDesc) bytes from it: not NULL). */
#define CUSTOM_OPS_GEMM_RELU "gemm_relu"

/** The descriptor of gemm_relu. */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTGemmReluDesc) */
  float alpha;          /**< scales a @ b before the bias; 1 when struct_size does not cover it */
} CTGemmReluDesc;

#endif /* CTENSOR_EXAMPLE_CUSTOM_OPS_H_ */
