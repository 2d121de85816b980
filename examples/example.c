/* example.c: the ctensor C ABI on a stack array. Exits 0 on success. */
#include <ctensor/ctensor.h>
#include <stdio.h>

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

  if (bad) fprintf(stderr, "example.c: unexpected results\n");
  return bad;
}
