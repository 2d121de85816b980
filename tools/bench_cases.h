// What one row of `ctensor bench` times: a Case holds the call's tensors
// (ct_malloc'd on the device and filled), its workspace, the call and its
// work (bytes, FLOPs); build_elementwise and build_nn make the case of an op
// of categories 1/2 and of an NN op (bench_cases.cc).
#pragma once
#include <ctensor/ctensor.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench.h"

namespace ctool {

// Input values: floats in [0.5, 2) (log, sqrt, pow, div, atan2 are all fine),
// near 1 for running products, small positive integers 1..7 (shifts, pow and
// divisions stay defined), bools half true; zeros for `any` (which may stop
// at the first nonzero value: all zeros make it read everything), nonzero
// values for `all` (bools all true); and for the ops defined on less than
// [0.5, 2), floats inside their domain (two thirds of [0.5, 2) would time
// erfinv's NaN path): (-0.95, 0.95) for asin, acos, atanh, erfinv, (0.02,
// 0.98) for logit and ndtri, [1, 2.5) for acosh. input_domain(op) is the one
// rule; its name travels with the row to bench_compare.py, which makes the
// same values for NumPy and PyTorch.
enum Domain { kOutput, kValues, kNearOne, kZeros, kNonzero, kUnit, kProb, kAboveOne };
Domain input_domain(const std::string& op);
const char* domain_name(Domain d);

// One benchmark case: its tensors (ct_malloc'd on the device), workspace, the
// call, and its work.
struct Case {
  explicit Case(CTDevice d) : dev(d) {}
  Case(const Case&) = delete;
  Case& operator=(const Case&) = delete;
  ~Case() {
    for (void* p : mem) ct_free(dev, p);
  }

  CTDevice dev;
  std::deque<std::vector<int64_t>> shapes;
  std::deque<CTensor> tensors;
  std::vector<void*> mem;
  std::vector<double> params;
  uint64_t bytes = 0;  // every tensor argument once
  double flops = 0;
  bool work_known = true;  // false: a plugin op's example, whose FLOPs are not known (no %limit)
  std::string shape, error;
  void* ws = nullptr;
  size_t ws_bytes = 0;
  std::function<CTStatus()> run;
  void* stream = nullptr;  // what run passes as the call's stream (NULL: the device's default)
  std::shared_ptr<void> keep;  // what run refers to (descriptors)
  uint64_t salt = 1;

  void fail(const std::string& what) {
    if (error.empty()) error = what;
  }

  // A tensor argument of the call (counted in bytes); inputs are filled.
  CTensor* tensor(std::vector<int64_t> shp, CTDataType dt, Domain dom = kValues);
  void fill(CTensor& t, int64_t numel, Domain dom);
  // The workspace of an NN call, from the status and size of its query.
  void workspace(CTStatus query, size_t n);
};

// The conv2d case (a ResNet-50 3x3 layer); oneDNN's baseline runs the same.
struct ConvGeom {
  int64_t N = 1, C = 64, H = 56, W = 56, K = 64, R = 3, S = 3, pad = 1;
  int64_t P() const { return H + 2 * pad - R + 1; }
  int64_t Q() const { return W + 2 * pad - S + 1; }
  double flops() const { return 2.0 * N * K * P() * Q() * C * R * S; }
};

// The side of the square matmul case (and of oneDNN's baseline).
inline int64_t matmul_size(bool quick) { return quick ? 512 : 1024; }

// A category 1/2 op on n-element operands (reductions and along-axis ops on
// an (n/1024, 1024) matrix); fills in what NumPy needs to run the same.
void build_elementwise(Case& c, const CTOpInfo& info, CTDataType dt, int64_t n, Row& row);

// One representative call of an NN op, from its row alone (a plugin's op:
// its large example, ct_op_example).
void build_nn(Case& c, const CTOpInfo& info, CTDataType dt, bool quick, Row& row);

}  // namespace ctool
