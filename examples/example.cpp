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

  // Broadcasting binary ops, reductions and along-axis ops (category 2).
  ct::Tensor m = ct::Tensor::from({1, 2, 3, 4, 5, 6}, {2, 3});   // int32
  ct::Tensor shifted = m - ct::Tensor::from({1, 1, 1});         // (2,3) - (3)
  shifted *= 2;                                                  // in place
  ct::Tensor row_sums = ct::sum(shifted, 1, /*keepdims=*/true);   // int64, (2,1)
  ct::Tensor col_means = ct::mean(m, 0);                         // float64, (3)
  ct::Tensor big = m > 2;                                        // bool, (2,3)
  ct::Tensor p = ct::softmax(ct::Tensor::from({0.0, std::log(3.0)}));
  const std::vector<int64_t> rs = row_sums.to_vector<int64_t>();
  const std::vector<double> cm = col_means.to_vector<double>();
  std::printf("row sums %lld %lld, column means %g %g %g, %lld of 6 > 2, softmax %g %g\n",
              static_cast<long long>(rs[0]), static_cast<long long>(rs[1]), cm[0], cm[1], cm[2],
              static_cast<long long>(ct::sum(big).item<int64_t>()), p.to_vector<double>()[0],
              p.to_vector<double>()[1]);
  ok = ok && rs[0] == 6 && rs[1] == 24 && cm[0] == 2.5 && cm[2] == 4.5 &&
       ct::sum(big).item<int64_t>() == 4 && std::fabs(p.to_vector<double>()[1] - 0.75) < 1e-12;

  // Failures throw ct::Error, which keeps the library's message.
  try {
    ct::sqrt(ct::Tensor::from({1, 2, 3}));  // int32: sqrt is float-only
    ok = false;
  } catch (const ct::Error& err) {
    std::printf("expected error: %s: %s\n", err.status_name(), err.what());
    ok = ok && err.status() == CT_ERR_UNSUPPORTED;
  }
  try {
    ct::Tensor bad = ct::Tensor::from({1.f, 2.f, 3.f}) + ct::Tensor::from({1.f, 2.f});
    ok = false;
  } catch (const ct::Error& err) {
    std::printf("expected error: %s: %s\n", err.status_name(), err.what());
    ok = ok && err.status() == CT_ERR_SHAPE_MISMATCH;
  }

  if (!ok) std::fprintf(stderr, "example.cpp: unexpected results\n");
  return ok ? 0 : 1;
}
