// check_data.h — what `ctensor check` (check.cpp) moves between the
// reference domain and the devices: device tensors in a chosen layout, exact
// uploads and downloads through ct_cast, random inputs from each op's domain
// (check_cases.h), and the comparison of a result with its reference under a
// tolerance.
#pragma once
#include <ctensor/ctensor.h>
#include <reference.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "check_cases.h"

namespace ctool {
namespace chk {

using ctref::Array;

// ---- device tensors -------------------------------------------------------

struct Memory {
  void* p = nullptr;
  CTDevice dev{};
  Memory(CTDevice d, size_t bytes);  // p = nullptr when ct_malloc fails
  ~Memory();
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
};

size_t itemsize(CTDataType d);

struct Tensor {
  CTensor t{};
  std::vector<int64_t> shape, strides;
  std::shared_ptr<Memory> mem;
  std::string layout = "dense";
};

enum Layout { kDense, kStrided };

// A tensor of `shape` in memory order `perm` (empty: row-major), or with
// every other element along the last dim and dim 0 reversed (kStrided).
Tensor make_tensor(CTDevice dev, CTDataType dt, const std::vector<int64_t>& shape, Layout layout,
                   const std::vector<int64_t>& perm = {});

// The host view of a reference array: float64 or int64, dense.
CTensor host_view(Array& a);
// Host values -> the device tensor (rounded to its dtype by ct_cast). A copy
// between devices is asynchronous on the device's stream: it is waited for
// before the host memory may change or go.
CTStatus upload(Array& a, Tensor& t);
// The device tensor -> exact host values.
CTStatus download(const Tensor& t, Array& a);

// ---- inputs -----------------------------------------------------------------

// Random values of `dt` for input `k` of op `name`.
void fill_random(Array& a, const std::string& name, int k, CTDataType dt, std::mt19937_64& rng);

// ---- comparison ---------------------------------------------------------------

struct Verdict {
  double worst = 0;      // worst |got - ref| as a fraction of the tolerance (<= 1 passes)
  double worst_abs = 0;  // worst |got - ref|
  bool ok = true;
  std::string detail;    // the first failure
};

// Folds the comparison of got with ref (NaN matches NaN, infinities must be
// equal, integers exact) into v; `what` names the output in the detail.
void compare(const Array& got, const Array& ref, const ctcheck::Tolerance& tol, const std::string& what,
             Verdict& v);

}  // namespace chk
}  // namespace ctool
