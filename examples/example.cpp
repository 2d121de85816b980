// example.cpp: the header-only C++11 wrapper. Exits 0 on success.
#include <ctensor/ctensor.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  // A 2x3 float32 tensor; transpose and slice are views of the same buffer.
  ct::Tensor x = ct::Tensor::from({0.f, 1.f, 2.f, 3.f, 4.f, 5.f}, {2, 3});
  ct::Tensor xt = x.transpose(0, 1);      // 3x2, strides {1, 3}
  ct::Tensor rows = xt.slice(0, 1, 3);    // rows 1..2 of xt: [[1, 4], [2, 5]]
  ct::Tensor e = ct::exp(rows);           // a new compact 2x2 tensor

  // where(cond, a, b): keep exp where x > 1.5, else -x.
  ct::Tensor cond = ct::Tensor::from({false, true, true, true}, {2, 2});
  ct::Tensor y = ct::where(cond, e, ct::neg(rows));

  const std::vector<float> got = y.to_vector<float>();
  const float want[4] = {-1.f, std::exp(4.f), std::exp(2.f), std::exp(5.f)};
  bool ok = true;
  for (int i = 0; i < 4; ++i) {
    std::printf("y[%d] = %g\n", i, got[i]);
    ok = ok && std::fabs(got[i] - want[i]) <= 1e-5f * std::fabs(want[i]);
  }

  // Failures throw ct::Error, which keeps the library's message.
  try {
    ct::sqrt(ct::Tensor::from({1, 2, 3}));  // int32: sqrt is float-only
    ok = false;
  } catch (const ct::Error& err) {
    std::printf("expected error: %s: %s\n", err.status_name(), err.what());
    ok = ok && err.status() == CT_ERR_UNSUPPORTED;
  }

  if (!ok) std::fprintf(stderr, "example.cpp: unexpected results\n");
  return ok ? 0 : 1;
}
