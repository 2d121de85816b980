/*
 * run_custom_ops.c — a caller of the custom_ops plugin: loads it, finds its
 * ops by name, runs bias_gelu through ct_binary and gemm_relu through
 * ct_nn, checks the values, unloads. Exits 0 on success.
 *
 *   run_custom_ops path/to/libcustom_ops.so
 */
#include <ctensor/ctensor.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "custom_ops.h"

#define CHECK(call)                                                                                  \
  do {                                                                                               \
    CTStatus s_ = (call);                                                                            \
    if (s_ != CT_OK) {                                                                               \
      fprintf(stderr, "%s: %s: %s\n", #call, ct_status_string(s_), ct_last_error());                 \
      return 1;                                                                                      \
    }                                                                                                \
  } while (0)

static double gelu(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }

int main(int argc, char** argv) {
  CTLibrary* lib;
  CTLibraryInfo info;
  int32_t bias_gelu, gemm_relu;
  int i, j, bad = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: %s path/to/libcustom_ops.so\n", argv[0]);
    return 2;
  }
  CHECK(ct_library_load(argv[1], &lib));
  info.struct_size = sizeof info;
  CHECK(ct_library_info(lib, &info));
  printf("loaded %s %s (plugin ABI %u.%u): %d op(s), %d kernel table(s)\n", info.name, info.version,
         (unsigned)(info.abi_version >> 16), (unsigned)(info.abi_version & 0xffffu), (int)info.num_ops,
         (int)info.num_kernel_tables);

  /* bias_gelu: a (2, 3) matrix plus a (3,) bias, broadcast over the rows. */
  CHECK(ct_op_find(CUSTOM_OPS_BIAS_GELU, &bias_gelu));
  {
    float a[6] = {-3, -1, 0, 0.5f, 1, 2}, bias[3] = {0.5f, -0.5f, 1}, out[6];
    int64_t ashape[2] = {2, 3}, bshape[1] = {3};
    CTensor ta = {a, {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, ashape, NULL, 0};
    CTensor tb = {bias, {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, bshape, NULL, 0};
    CTensor to = {out, {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, ashape, NULL, 0};
    CHECK(ct_binary(bias_gelu, &ta, &tb, &to, NULL));
    for (i = 0; i < 6; ++i) {
      const double want = gelu((double)a[i] + bias[i % 3]);
      printf("bias_gelu(%5.2f + %5.2f) = %9.6f\n", a[i], bias[i % 3], out[i]);
      if (fabs(out[i] - want) > 1e-6 * (1 + fabs(want))) bad = 1;
    }
  }

  /* gemm_relu: y = relu(2 * a @ b + bias), a (2, 3), b (3, 2). */
  if (ct_op_find(CUSTOM_OPS_GEMM_RELU, &gemm_relu) != CT_OK) {
    printf("gemm_relu: not registered (this libctensor has no NN-kind plugin ops)\n");
  } else {
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, -1, 0, 1, -1, 0.5f}, bias[2] = {0.5f, -20}, y[4];
    int64_t as[2] = {2, 3}, bs[2] = {3, 2}, cs[1] = {2}, ys[2] = {2, 2};
    CTensor ta = {a, {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, as, NULL, 0};
    CTensor tb = {b, {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, bs, NULL, 0};
    CTensor tc = {bias, {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, cs, NULL, 0};
    CTensor ty = {y, {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, ys, NULL, 0};
    const CTensor* args[4];
    CTGemmReluDesc desc;
    size_t bytes = 0;
    void* ws;
    args[0] = &ta;
    args[1] = &tb;
    args[2] = &tc;
    args[3] = &ty;
    desc.struct_size = sizeof desc;
    desc.alpha = 2.0f;
    CHECK(ct_nn_workspace_size(gemm_relu, &desc, args, 4, &bytes));
    ws = malloc(bytes ? bytes : 1);
    if (!ws) return 1;
    CHECK(ct_nn(gemm_relu, &desc, args, 4, ws, bytes, NULL));
    free(ws);
    for (i = 0; i < 2; ++i)
      for (j = 0; j < 2; ++j) {
        double v = 0;
        int k;
        for (k = 0; k < 3; ++k) v += (double)a[i * 3 + k] * b[k * 2 + j];
        v = 2 * v + bias[j];
        v = v > 0 ? v : 0;
        printf("gemm_relu y[%d][%d] = %g (want %g)\n", i, j, y[i * 2 + j], v);
        if (fabs(y[i * 2 + j] - v) > 1e-5 * (1 + fabs(v))) bad = 1;
      }
    printf("gemm_relu workspace: %zu bytes\n", bytes);
  }

  CHECK(ct_library_unload(lib));
  if (ct_binary(bias_gelu, NULL, NULL, NULL, NULL) != CT_ERR_NOT_FOUND) bad = 1;
  printf("after unload: %s\n", ct_last_error());
  if (bad) fprintf(stderr, "run_custom_ops: a value differs from the expected one\n");
  return bad;
}
