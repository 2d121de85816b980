// nn_conv.h — what the two halves of the cuDNN convolution share: the plan
// (nn_conv.cc builds and runs it), and the choice of its algorithm
// (nn_conv_algo.cc). Internal to the CUDA module; only with cuDNN.
#ifndef CTENSOR_SRC_CUDA_NN_CONV_H_
#define CTENSOR_SRC_CUDA_NN_CONV_H_

#ifdef CT_HAVE_CUDNN

#include <mutex>
#include <string>

#include "lazy.h"
#include "nn_internal.h"

namespace ctcu {

constexpr size_t kAlgoWorkspaceMax = size_t(256) << 20;  // the cuDNN workspace an algorithm may take before the fallback

// A status that refuses the configuration rather than a failure of the
// library or the device; and a failure's message (after a plan exists: cuDNN
// is loaded). nn_conv.cc.
bool refusal(cudnnStatus_t s);
CTStatus dnn_fail(const char* fn, const char* what, cudnnStatus_t s);

// One device's cuDNN handle.
struct DnnHandle {
  cudnnHandle_t h = nullptr;
  std::mutex mu;  // held from cudnnSetStream to the end of the call it is for
};

enum Fmt { kNCHW = 0, kNHWC = 1 };

// One of x, w, y as cuDNN sees it.
struct Side {
  bool buffered = false;                // cuDNN works on a buffer in the workspace, not on the caller's tensor
  Fmt fmt = kNCHW;                      // the buffer's layout; for w, the filter's format
  size_t off = 0, bytes = 0;            // the buffer: bytes from the aligned workspace base
  int64_t shape[4] = {0, 0, 0, 0};      // what cuDNN sees (a padded x or dx is larger than the tensor)
  int64_t st[4] = {0, 0, 0, 0};         // its strides (elements)
  int64_t inner = 0;                    // element offset of the caller's tensor within the buffer (padded x or dx)
};

// How dbias (backward weight) is summed.
enum DbMode { kDbNone, kDbDirect, kDbCastFirst, kDbCastAfter };

struct ConvPlan : NNPlan {
  int32_t device_id = 0;
  int32_t dt = 0;
  size_t is = 0;  // element size
  int32_t act = CT_ACTIVATION_NONE;
  bool run = false;                        // a convolution runs (false: an input is empty, the output is zeros)
  int64_t pad[2] = {0, 0};                 // cuDNN's symmetric padding
  int64_t extra_begin[2] = {0, 0}, extra_end[2] = {0, 0};  // the rest, in the x / dx buffer
  const char* config = "";                 // which attempt the plan took (for messages)
  Side side[3];
  DnnHandle* handle = nullptr;             // the device's (lives until nn_shutdown)
  cudnnTensorDescriptor_t xd = nullptr, yd = nullptr;
  cudnnFilterDescriptor_t wd = nullptr;
  cudnnConvolutionDescriptor_t cd = nullptr;
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t algo_ws = 0;                      // cuDNN's workspace, at the aligned base
  size_t zero_off = 0, zero_bytes = 0;     // zeros for a strided output of an empty call
  DbMode db = kDbNone;
  size_t db_off = 0, db_bytes = 0;         // the cast dy or the float64 sums
  size_t ws_bytes = 0;

  ~ConvPlan() override {
    const DnnApi* a = dnn();
    if (!a) return;
    if (xd) a->cudnnDestroyTensorDescriptor(xd);
    if (yd) a->cudnnDestroyTensorDescriptor(yd);
    if (wd) a->cudnnDestroyFilterDescriptor(wd);
    if (cd) a->cudnnDestroyConvolutionDescriptor(cd);
  }
};

// The algorithm of the configured plan (descriptors set): *found, or why
// not in *why; an error only for a failure of cuDNN itself. nn_conv_algo.cc.
CTStatus choose_algo(const char* fn, ConvPlan* P, bool* found, std::string* why);

}  // namespace ctcu

#endif  // CT_HAVE_CUDNN

#endif  // CTENSOR_SRC_CUDA_NN_CONV_H_
