// lazy.h — NVRTC, cuBLASLt and cuDNN, loaded at their first use (dlopen)
// instead of linked. Linked, the two libraries (hundreds of MB) were mapped into every
// process that used ctensor, GPU or not, at the library's first call (the
// module loads before it can find that there is no device): 80 ms and
// 240 MB of resident memory for nothing. Now the module links the static
// CUDA runtime alone; NVRTC loads when the first kernel is compiled,
// cuBLASLt at the first matmul plan, cuDNN at the first conv2d plan or
// support query.
//
// Each table holds one pointer per function the module calls, typed from
// the library's own header (decltype), so a signature cannot drift. Calls
// read nvrtc()->nvrtcCompileProgram(...) and lt()->cublasLtMatmul(...).
#ifndef CTENSOR_SRC_CUDA_LAZY_H_
#define CTENSOR_SRC_CUDA_LAZY_H_

#include <nvrtc.h>

#include <string>

#ifdef CT_HAVE_CUBLASLT
#include <cublasLt.h>
#endif

#ifdef CT_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace ctcu {

#define CT_NVRTC_FUNCS(X)                                                                                   \
  X(nvrtcCreateProgram) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog)             \
  X(nvrtcDestroyProgram) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetPTXSize) X(nvrtcGetPTX)            \
  X(nvrtcGetErrorString) X(nvrtcVersion) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)

struct NvrtcApi {
#define CT_LAZY_FN(f) decltype(&::f) f = nullptr;
  CT_NVRTC_FUNCS(CT_LAZY_FN)
#undef CT_LAZY_FN
};
// NVRTC's table, loaded once; nullptr when it cannot be, with the reason in *why.
const NvrtcApi* nvrtc(std::string* why = nullptr);

#ifdef CT_HAVE_CUBLASLT
// (cublasLtMatmulDescInit and cublasLtMatmulPreferenceInit are inline
// wrappers of the _internal functions in the header: call those.)
#define CT_LT_FUNCS(X)                                                                                     \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetStatusName) X(cublasLtGetStatusString) X(cublasLtMatmul) \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy)                \
  X(cublasLtMatmulDescInit_internal) X(cublasLtMatmulDescSetAttribute) X(cublasLtMatmulPreferenceInit_internal) \
  X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy)     \
  X(cublasLtMatrixLayoutSetAttribute)

struct LtApi {
#define CT_LAZY_FN(f) decltype(&::f) f = nullptr;
  CT_LT_FUNCS(CT_LAZY_FN)
#undef CT_LAZY_FN
};
// cuBLASLt's table, loaded once; nullptr when it cannot be, with the reason in *why.
const LtApi* lt(std::string* why = nullptr);
#endif

#ifdef CT_HAVE_CUDNN
// cuDNN 9's legacy convolution API (libcudnn.so.9, the dispatcher: it loads
// its sub-libraries, libcudnn_cnn.so.9 ..., from its own folder). The
// library loaded must report the major version of the headers
// (cudnnGetVersion), else the next candidate path is tried.
#define CT_DNN_FUNCS(X)                                                                                        \
  X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnGetLastErrorString) X(cudnnCreate) X(cudnnDestroy)          \
  X(cudnnSetStream) X(cudnnCreateTensorDescriptor) X(cudnnDestroyTensorDescriptor) X(cudnnSetTensorNdDescriptor) \
  X(cudnnCreateFilterDescriptor) X(cudnnDestroyFilterDescriptor) X(cudnnSetFilterNdDescriptor)                \
  X(cudnnCreateConvolutionDescriptor) X(cudnnDestroyConvolutionDescriptor) X(cudnnSetConvolutionNdDescriptor) \
  X(cudnnSetConvolutionGroupCount) X(cudnnSetConvolutionMathType)                                            \
  X(cudnnGetConvolutionForwardAlgorithmMaxCount) X(cudnnGetConvolutionForwardAlgorithm_v7)                   \
  X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnConvolutionForward)                                      \
  X(cudnnGetConvolutionBackwardDataAlgorithmMaxCount) X(cudnnGetConvolutionBackwardDataAlgorithm_v7)         \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize) X(cudnnConvolutionBackwardData)                            \
  X(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount) X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)     \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) X(cudnnConvolutionBackwardFilter)

struct DnnApi {
#define CT_LAZY_FN(f) decltype(&::f) f = nullptr;
  CT_DNN_FUNCS(CT_LAZY_FN)
#undef CT_LAZY_FN
};
// cuDNN's table, loaded once; nullptr when it cannot be, with the reason in *why.
const DnnApi* dnn(std::string* why = nullptr);
#endif

}  // namespace ctcu

#endif  // CTENSOR_SRC_CUDA_LAZY_H_
