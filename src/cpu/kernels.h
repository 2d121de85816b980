// kernels.h — the CPU kernel table: one contiguous-loop function per op and
// dtype. The strided engine (cpu_backend.cc) feeds them contiguous runs.
#ifndef CTENSOR_SRC_CPU_KERNELS_H_
#define CTENSOR_SRC_CPU_KERNELS_H_

#include <cstdint>

#include "cpu/host.h"

namespace ct {
namespace cpu {

// p[0] = out, p[1..] = inputs; all contiguous, n elements.
typedef void (*ContigKernel)(char* const* p, int64_t n, const double* params);

struct KernelTable {
  ContigKernel op[CT_OP_END_][CT_DT_COUNT];   // by data dtype (cast: unused)
  ContigKernel cast[CT_DT_COUNT][CT_DT_COUNT];  // [from][to]
  // Binary ops with one input a single element broadcast along the run:
  // [op][dt][0] a is p[1][0], [op][dt][1] b is p[2][0]. NULL: pack instead.
  ContigKernel bcast[CT_OP_END_][CT_DT_COUNT][2];
  // y = e^(x - shift), returns sum(y): [0] float32, [1] float64 (y may be x);
  // shift >= every x (the max), no NaN in x: the callers' lines.
  double (*exp_shift_sum[2])(const void* x, void* y, int64_t n, double shift);
  // y = e^(shift - x), returns sum(y): softmin's (softmax of -x without
  // negating a copy); shift <= every x (the min), no NaN in x.
  double (*exp_neg_shift_sum[2])(const void* x, void* y, int64_t n, double shift);
  // sum(e^(x - shift)) kept nowhere, and max(x) in *max, in one pass:
  // logsumexp's blocks shifted by the max of the blocks before. The sum is
  // right where max(x) <= shift (else anything, to be redone); a NaN in x
  // makes it NaN (and *max is then not to be trusted).
  double (*exp_sum_max[2])(const void* x, int64_t n, double shift, double* max);
  // The same e^(x - shift) from float32 x, stored rounded to [0] bfloat16,
  // [1] float16 (to nearest even); returns the sum of the float32 values
  // (attention's weights: one pass where exp then encode took two).
  double (*exp_shift_sum_half[2])(const float* x, uint16_t* y, int64_t n, double shift);
  // softmax's last pass: y = x * a (log = 0) or y = (x + a) + b (log = 1,
  // in that order), [0] float32, [1] float64 (y may be x); stream: write y
  // with streaming stores (a line of an output that will not stay in cache),
  // 1: ordered (an sfence) before it returns, 2: left to the caller to order
  // after its last line (hwy::FlushStream), so that one line's stores drain
  // while the next line computes.
  void (*softmax_finish[2])(const void* x, void* y, int64_t n, double a, double b, int log, int stream);
  const char* target;  // the SIMD target chosen at run time ("AVX2", ...)
};

// The hot loops of reductions (reduce_kernels.cc), for the best SIMD target.
struct ReduceKernels {
  double (*sum_f32)(const float* p, int64_t n);  // float64 accumulation, pairwise
  double (*sum_f64)(const double* p, int64_t n);
  double (*sum_f16)(const uint16_t* p, int64_t n);
  double (*sum_bf16)(const uint16_t* p, int64_t n);
  // any/all: whether p[0, n) holds a nonzero (NaN included) / a zero element;
  // by element kind: 0..3 integers (or bool) of 1, 2, 4, 8 bytes, 4 float32, 5 float64
  bool (*has_nonzero[6])(const void* p, int64_t n);
  bool (*has_zero[6])(const void* p, int64_t n);
  // sum of (x - c)^2 in float64, pairwise (norm2: c = 0; var: a block's mean)
  double (*sumsq_f32)(const float* p, int64_t n, double c);
  double (*sumsq_f64)(const double* p, int64_t n, double c);
  double (*sumdev_f32)(const float* p, int64_t n, double c);  // sum of x - c
  double (*sumdev_f64)(const double* p, int64_t n, double c);
  double (*nansum_f32)(const float* p, int64_t n);  // sum with NaN as 0, as sum_f32
  double (*nansum_f64)(const double* p, int64_t n);
  double (*prod_f32)(const float* p, int64_t n);   // product in float64, four vector accumulators
  // index of the first element equal to v (v NaN: the first NaN), n if none
  int64_t (*find_f32)(const float* p, int64_t n, float v);
  int64_t (*find_f64)(const double* p, int64_t n, double v);
  void (*col_add_f32)(double* acc, const float* row, int64_t w);  // acc[j] += row[j]
  void (*col_add_f64)(double* acc, const double* row, int64_t w);
  // acc[j] += rows [0, nrows) of x (row k at x + k * stride), register-blocked
  void (*col_sum_rows_f32)(double* acc, const float* x, int64_t stride, int64_t nrows, int64_t w);
  float (*max_f32)(const float* p, int64_t n);  // NaN-propagating, n >= 1
  float (*min_f32)(const float* p, int64_t n);
  double (*max_f64)(const double* p, int64_t n);
  double (*min_f64)(const double* p, int64_t n);
  // acc[j] = NaN-propagating max / min of acc[j] and row[j] (max over axis 0)
  void (*col_max_f32)(float* acc, const float* row, int64_t w);
  void (*col_min_f32)(float* acc, const float* row, int64_t w);
  void (*col_max_f64)(double* acc, const double* row, int64_t w);
  void (*col_min_f64)(double* acc, const double* row, int64_t w);
  void (*decode_f16)(const uint16_t* src, float* dst, int64_t n);
  void (*decode_bf16)(const uint16_t* src, float* dst, int64_t n);
  void (*encode_f16)(const float* src, uint16_t* dst, int64_t n);
  void (*encode_bf16)(const float* src, uint16_t* dst, int64_t n);
};
void fill_reduce_kernels(ReduceKernels* k);

// Fills the table for the best SIMD target of this CPU (run-time dispatch).
void fill_kernels(KernelTable* table);         // elementwise.cc (zeroes the table first)
void fill_more_kernels(KernelTable* table);    // elementwise_more.cc (after fill_kernels)
void fill_bessel_kernels(KernelTable* table);  // elementwise_bessel.cc (after fill_kernels)
void fill_binary_kernels(KernelTable* table);  // binary.cc

}  // namespace cpu
}  // namespace ct

#endif  // CTENSOR_SRC_CPU_KERNELS_H_
