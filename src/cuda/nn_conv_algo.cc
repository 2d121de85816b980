// nn_conv_algo.cc — the algorithm of a cuDNN convolution plan: cuDNN's
// heuristic list (cudnnGet*Algorithm_v7: runs nothing; cudnnFind* would
// allocate and synchronise), taken in an order that prefers deterministic
// direct sums under the workspace limit (nn_conv.cc's header says why).
#include <algorithm>
#include <vector>

#include "nn_conv.h"

#ifdef CT_HAVE_CUDNN

namespace ctcu {
namespace {

// One entry of cuDNN's heuristic list, whichever the op.
struct Cand {
  int algo;
  cudnnStatus_t status;
  size_t memory;
  bool deterministic;
  cudnnMathType_t math;
};

template <class Perf>
void append(std::vector<Cand>* out, const std::vector<Perf>& r, int got) {
  for (int i = 0; i < got && i < (int)r.size(); ++i)
    out->push_back(Cand{(int)r[(size_t)i].algo, r[(size_t)i].status, r[(size_t)i].memory,
                        r[(size_t)i].determinism == CUDNN_DETERMINISTIC, r[(size_t)i].mathType});
}

// cuDNN's heuristic list for the plan's op (best first); the name of the call in *what.
cudnnStatus_t heuristics(const ConvPlan& P, std::vector<Cand>* out, const char** what) {
  const DnnApi* a = dnn();
  cudnnHandle_t h = P.handle->h;
  int max = 0, got = 0;
  cudnnStatus_t s;
  switch (P.op) {
    case CT_OP_CONV2D: {
      *what = "cudnnGetConvolutionForwardAlgorithmMaxCount";
      if ((s = a->cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max)) != CUDNN_STATUS_SUCCESS) return s;
      std::vector<cudnnConvolutionFwdAlgoPerf_t> r((size_t)std::max(max, 1));
      *what = "cudnnGetConvolutionForwardAlgorithm_v7";
      s = a->cudnnGetConvolutionForwardAlgorithm_v7(h, P.xd, P.wd, P.cd, P.yd, (int)r.size(), &got, r.data());
      if (s == CUDNN_STATUS_SUCCESS) append(out, r, got);
      return s;
    }
    case CT_OP_CONV2D_BACKWARD_DATA: {
      *what = "cudnnGetConvolutionBackwardDataAlgorithmMaxCount";
      if ((s = a->cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max)) != CUDNN_STATUS_SUCCESS) return s;
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> r((size_t)std::max(max, 1));
      *what = "cudnnGetConvolutionBackwardDataAlgorithm_v7";
      s = a->cudnnGetConvolutionBackwardDataAlgorithm_v7(h, P.wd, P.yd, P.cd, P.xd, (int)r.size(), &got, r.data());
      if (s == CUDNN_STATUS_SUCCESS) append(out, r, got);
      return s;
    }
    default: {
      *what = "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount";
      if ((s = a->cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max)) != CUDNN_STATUS_SUCCESS) return s;
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> r((size_t)std::max(max, 1));
      *what = "cudnnGetConvolutionBackwardFilterAlgorithm_v7";
      s = a->cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, P.xd, P.yd, P.cd, P.wd, (int)r.size(), &got, r.data());
      if (s == CUDNN_STATUS_SUCCESS) append(out, r, got);
      return s;
    }
  }
}

// cuDNN's workspace for algorithm algo of the plan's op (descriptors as set).
cudnnStatus_t algo_workspace(const ConvPlan& P, int algo, size_t* bytes, const char** what) {
  const DnnApi* a = dnn();
  cudnnHandle_t h = P.handle->h;
  switch (P.op) {
    case CT_OP_CONV2D:
      *what = "cudnnGetConvolutionForwardWorkspaceSize";
      return a->cudnnGetConvolutionForwardWorkspaceSize(h, P.xd, P.wd, P.cd, P.yd, (cudnnConvolutionFwdAlgo_t)algo, bytes);
    case CT_OP_CONV2D_BACKWARD_DATA:
      *what = "cudnnGetConvolutionBackwardDataWorkspaceSize";
      return a->cudnnGetConvolutionBackwardDataWorkspaceSize(h, P.wd, P.yd, P.cd, P.xd,
                                                             (cudnnConvolutionBwdDataAlgo_t)algo, bytes);
    default:
      *what = "cudnnGetConvolutionBackwardFilterWorkspaceSize";
      return a->cudnnGetConvolutionBackwardFilterWorkspaceSize(h, P.xd, P.yd, P.cd, P.wd,
                                                               (cudnnConvolutionBwdFilterAlgo_t)algo, bytes);
  }
}

// Whether algo sums the products directly (implicit or explicit GEMM,
// direct), rather than through an FFT or Winograd transform, whose rounding
// differs from a dot product's.
bool direct_sum(int32_t op, int algo) {
  switch (op) {
    case CT_OP_CONV2D:
      return algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
             algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
    case CT_OP_CONV2D_BACKWARD_DATA:
      return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 || algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    default:
      return algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 || algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 ||
             algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
  }
}

// The order in which the plan tries cuDNN's candidates (indices into c):
// those that succeed with an allowed math type, under the workspace limit,
// deterministic direct-sum ones first, then direct-sum ones, then any, each
// in cuDNN's order; then the rest by increasing workspace.
std::vector<size_t> preference(const std::vector<Cand>& c, int32_t op, int32_t dt) {
  auto allowed = [&](const Cand& k) {
    return k.status == CUDNN_STATUS_SUCCESS && k.math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION &&
           !(dt == CT_DT_FLOAT32 && k.math == CUDNN_TENSOR_OP_MATH);
  };
  std::vector<size_t> order, rest;
  std::vector<bool> taken(c.size(), false);
  for (int tier = 0; tier < 3; ++tier)
    for (size_t i = 0; i < c.size(); ++i) {
      const Cand& k = c[i];
      if (taken[i] || !allowed(k) || k.memory > kAlgoWorkspaceMax) continue;
      if (tier < 2 && !direct_sum(op, k.algo)) continue;
      if (tier < 1 && !k.deterministic) continue;
      taken[i] = true;
      order.push_back(i);
    }
  for (size_t i = 0; i < c.size(); ++i)
    if (!taken[i] && allowed(c[i])) rest.push_back(i);
  std::stable_sort(rest.begin(), rest.end(), [&](size_t a, size_t b) { return c[a].memory < c[b].memory; });
  order.insert(order.end(), rest.begin(), rest.end());
  return order;
}

}  // namespace

CTStatus choose_algo(const char* fn, ConvPlan* P, bool* found, std::string* why) {
  const DnnApi* a = dnn();
  *found = false;
  std::vector<Cand> c;
  const char* what = "";
  cudnnStatus_t s = heuristics(*P, &c, &what);
  if (s != CUDNN_STATUS_SUCCESS) {
    if (!refusal(s)) return dnn_fail(fn, what, s);
    *why = std::string(what) + ": " + a->cudnnGetErrorString(s);
    return CT_OK;
  }
  for (size_t i : preference(c, P->op, P->dt)) {
    const Cand& k = c[i];
    const cudnnMathType_t math = P->dt == CT_DT_FLOAT32 ? CUDNN_FMA_MATH : k.math;
    s = a->cudnnSetConvolutionMathType(P->cd, math);
    if (s != CUDNN_STATUS_SUCCESS) {
      if (!refusal(s)) return dnn_fail(fn, "cudnnSetConvolutionMathType", s);
      continue;
    }
    size_t ws = 0;
    s = algo_workspace(*P, k.algo, &ws, &what);
    if (s != CUDNN_STATUS_SUCCESS) {
      if (!refusal(s)) return dnn_fail(fn, what, s);
      continue;
    }
    P->algo = k.algo;
    P->math = math;
    P->algo_ws = std::max(ws, k.memory);
    *found = true;
    return CT_OK;
  }
  *why = "no algorithm of the " + std::to_string(c.size()) + " cuDNN lists";
  for (size_t i = 0; i < c.size(); ++i) {
    *why += (i ? ", " : " (") + std::to_string(c[i].algo) + ": " + a->cudnnGetErrorString(c[i].status);
    if (i + 1 == c.size()) *why += ")";
  }
  return CT_OK;
}


}  // namespace ctcu

#endif  // CT_HAVE_CUDNN
