/* abi_call_cost.c — one-element calls through the C ABI, for counting the
 * instructions a call costs (bench/abi_call_cost.sh runs it under callgrind
 * twice and prints the difference per call: repeatable on a noisy host,
 * where nanoseconds are not).
 *
 *   abi_call_cost CALLS KIND STRIDES
 *     KIND 0: ct_unary relu, 1: ct_binary add (float32, one element)
 *     STRIDES 1: explicit compact strides (what DLPack 1.2 producers give),
 *             0: NULL strides */
#include <ctensor/ctensor.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  long calls, i;
  int kind, strided;
  float a = 1.5f, b = 2.0f, o = 0.0f;
  int64_t shape[1] = {1}, strides[1] = {1};
  CTensor x = {&a, {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, NULL, 0};
  CTensor y = {&b, {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, NULL, 0};
  CTensor out = {&o, {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, NULL, 0};
  if (argc != 4) {
    fprintf(stderr, "usage: %s CALLS KIND(0 relu, 1 add) STRIDES(0 NULL, 1 compact)\n", argv[0]);
    return 2;
  }
  calls = atol(argv[1]);
  kind = atoi(argv[2]);
  strided = atoi(argv[3]);
  if (strided) x.strides = y.strides = out.strides = strides;
  for (i = 0; i < calls; ++i) {
    const CTStatus s = kind == 0 ? ct_unary(CT_OP_RELU, &x, &out, NULL) : ct_binary(CT_OP_ADD, &x, &y, &out, NULL);
    if (s != CT_OK) {
      fprintf(stderr, "%s\n", ct_last_error());
      return 1;
    }
  }
  return 0;
}
