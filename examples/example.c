/* example.c: the ctensor C ABI on a stack array. Exits 0 on success. */
#include <ctensor/ctensor.h>
#include <stdio.h>
#include <string.h>

/* Print the failing call, its status and the library's message, then fail. */
#define CHECK(call)                                                  \
  do {                                                               \
    CTStatus s_ = (call);                                            \
    if (s_ != CT_OK) {                                               \
      fprintf(stderr, "%s: %s: %s\n", #call, ct_status_string(s_),   \
              ct_last_error());                                      \
      return 1;                                                      \
    }                                                                \
  } while (0)

int main(void) {
  int64_t shape[2] = {2, 3};
  float xs[6] = {-2, -1, 0, 1, 2, 3};
  float ys[6];
  uint16_t hs[6]; /* float16 bits */
  const float want[6] = {0.5f, 0.5f, 1.0f, 2.7182817f, 5.0f, 5.0f};
  const uint16_t want_h[6] = {0x3800, 0x3800, 0x3C00, 0x4170, 0x4500, 0x4500};
  double lohi[2] = {0.5, 5.0};
  int64_t flat[1] = {6};
  int i, bad = 0;
  CTStatus s;

  /* A CTensor is a DLTensor: data, device, ndim, dtype, shape, strides
   * (NULL = compact row-major), byte_offset. */
  CTensor x = {xs, {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, shape, NULL, 0};
  CTensor y = {ys, {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, shape, NULL, 0};
  CTensor h = {hs, {CT_CPU, 0}, 2, {CT_FLOAT, 16, 1}, shape, NULL, 0};
  CTensor y_flat = {ys, {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, flat, NULL, 0};

  printf("ctensor %s\n", ct_version_string());
  CHECK(ct_unary(CT_OP_EXP, &x, &y, NULL));                   /* y = exp(x) */
  CHECK(ct_unary_param(CT_OP_CLAMP, &y, lohi, 2, &y, NULL));  /* in place */
  CHECK(ct_cast(&y, &h, NULL));                               /* to float16 */

  for (i = 0; i < 6; ++i) {
    float d = ys[i] - want[i];
    printf("x=%5.1f  clamp(exp(x), 0.5, 5)=%.6f  float16 bits=0x%04x\n", xs[i], ys[i],
           (unsigned)hs[i]);
    if (d < -1e-6f || d > 1e-6f || hs[i] != want_h[i]) bad = 1;
  }

  /* Errors are status codes plus a per-thread message; outputs stay untouched. */
  s = ct_unary(CT_OP_EXP, &x, &y_flat, NULL);
  printf("expected error: %s: %s\n", ct_status_string(s), ct_last_error());
  if (s != CT_ERR_SHAPE_MISMATCH || ct_last_error()[0] == '\0') bad = 1;

  /* NN ops: ask for the workspace, allocate it, run. A 3x3 box filter over a
   * 1x1x4x4 image, padded by 1: the centre outputs sum 9 ones. */
  {
    float img[16], out[16], box[9];
    int64_t ishape[4] = {1, 1, 4, 4}, wshape[4] = {1, 1, 3, 3};
    CTensor xi = {img, {CT_CPU, 0}, 4, {CT_FLOAT, 32, 1}, ishape, NULL, 0};
    CTensor wi = {box, {CT_CPU, 0}, 4, {CT_FLOAT, 32, 1}, wshape, NULL, 0};
    CTensor yi = {out, {CT_CPU, 0}, 4, {CT_FLOAT, 32, 1}, ishape, NULL, 0};
    CTConv2dDesc d;
    size_t bytes = 0;
    void* ws = NULL;
    memset(&d, 0, sizeof d); /* stride 1, no dilation, groups 1 */
    d.struct_size = sizeof d;
    d.pad_begin[0] = d.pad_begin[1] = d.pad_end[0] = d.pad_end[1] = 1;
    for (i = 0; i < 16; ++i) img[i] = 1.0f;
    for (i = 0; i < 9; ++i) box[i] = 1.0f;
    CHECK(ct_conv2d_workspace_size(&d, &xi, &wi, NULL, &yi, &bytes));
    if (bytes) CHECK(ct_malloc(xi.device, bytes, &ws));
    CHECK(ct_conv2d(&d, &xi, &wi, NULL, &yi, ws, bytes, NULL));
    ct_free(xi.device, ws);
    printf("conv2d 3x3 box, pad 1: corner %.0f edge %.0f centre %.0f (workspace %zu bytes)\n", out[0], out[1],
           out[5], bytes);
    if (out[0] != 4.0f || out[1] != 6.0f || out[5] != 9.0f) bad = 1;
  }

  if (bad) fprintf(stderr, "example.c: unexpected results\n");
  return bad;
}
