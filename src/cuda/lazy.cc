// lazy.cc — see lazy.h.
#include "lazy.h"

#include <dlfcn.h>

#include <cuda_runtime_api.h>

#include <initializer_list>
#include <mutex>
#include <vector>

namespace ctcu {
namespace {

#define CT_STR2(x) #x
#define CT_STR(x) CT_STR2(x)
// The toolkit's major version (the sonames' number) and its library folder,
// searched after the loader's own paths (the module no longer links the
// libraries, so its RUNPATH does not name their folder).
constexpr int kMajor = CUDART_VERSION / 1000;
#ifndef CT_CUDA_LIBDIR
#define CT_CUDA_LIBDIR ""
#endif

#ifndef CT_CUDNN_LIBDIR
#define CT_CUDNN_LIBDIR ""
#endif

// dlopen of lib<name>.so.<major>, then lib<name>.so, then lib<name>.so.<major>
// in each of `dirs` (empty ones skipped). `accept` vets a loaded library (a
// version check): refused, it is closed and the next path is tried.
template <class Accept>
void* open_lib(const char* name, int major, std::initializer_list<const char*> dirs, Accept accept, std::string* err) {
  const std::string so = std::string("lib") + name + ".so", versioned = so + "." + std::to_string(major);
  std::vector<std::string> paths{versioned, so};
  for (const char* dir : dirs)
    if (dir && *dir) paths.push_back(std::string(dir) + "/" + versioned);
  for (const std::string& path : paths) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      if (err->empty() && e) *err = e;
      continue;
    }
    std::string refused;
    if (accept(h, &refused)) return h;
    dlclose(h);
    *err += (err->empty() ? "" : "; ") + path + ": " + refused;
  }
  return nullptr;
}

void* open_cuda_lib(const char* name, std::string* err) {
  return open_lib(name, kMajor, {CT_CUDA_LIBDIR}, [](void*, std::string*) { return true; }, err);
}

template <class Api, class Open, class Fill>
const Api* load(std::once_flag& once, Api& api, std::string& why, bool& ok, const char* name, Open open, Fill fill) {
  std::call_once(once, [&] {
    void* h = open(name, &why);
    if (!h) {
      why = std::string("cannot load lib") + name + ": " + why;
      return;
    }
    ok = fill(h);  // the library stays loaded for the process (as a linked one would)
  });
  return ok ? &api : nullptr;
}

template <class F>
bool sym(void* h, const char* n, F* f, std::string* why) {
  *f = reinterpret_cast<F>(dlsym(h, n));
  if (!*f && why->empty()) *why = std::string("the library has no ") + n;
  return *f != nullptr;
}

NvrtcApi g_nvrtc;
std::once_flag g_nvrtc_once;
std::string g_nvrtc_why;
bool g_nvrtc_ok = false;

#ifdef CT_HAVE_CUBLASLT
LtApi g_lt;
std::once_flag g_lt_once;
std::string g_lt_why;
bool g_lt_ok = false;
#endif

#ifdef CT_HAVE_CUDNN
DnnApi g_dnn;
std::once_flag g_dnn_once;
std::string g_dnn_why;
bool g_dnn_ok = false;
#endif

}  // namespace

const NvrtcApi* nvrtc(std::string* why) {
  const NvrtcApi* a = load(g_nvrtc_once, g_nvrtc, g_nvrtc_why, g_nvrtc_ok, "nvrtc", open_cuda_lib, [](void* h) {
    bool ok = true;
#define CT_LAZY_SYM(f) ok = sym(h, #f, &g_nvrtc.f, &g_nvrtc_why) && ok;
    CT_NVRTC_FUNCS(CT_LAZY_SYM)
#undef CT_LAZY_SYM
    return ok;
  });
  if (!a && why) *why = g_nvrtc_why;
  return a;
}

#ifdef CT_HAVE_CUBLASLT
const LtApi* lt(std::string* why) {
  const LtApi* a = load(g_lt_once, g_lt, g_lt_why, g_lt_ok, "cublasLt", open_cuda_lib, [](void* h) {
    bool ok = true;
#define CT_LAZY_SYM(f) ok = sym(h, #f, &g_lt.f, &g_lt_why) && ok;
    CT_LT_FUNCS(CT_LAZY_SYM)
#undef CT_LAZY_SYM
    return ok;
  });
  if (!a && why) *why = g_lt_why;
  return a;
}
#endif

#ifdef CT_HAVE_CUDNN
namespace {
// libcudnn.so.<CUDNN_MAJOR>, libcudnn.so, then the toolkit's folder and the
// folder found at configure time (beside the headers, or the Python package
// nvidia-cudnn's lib/). A library of another major version is passed over.
void* open_cudnn(const char* name, std::string* err) {
  return open_lib(name, CUDNN_MAJOR, {CT_CUDA_LIBDIR, CT_CUDNN_LIBDIR}, [](void* h, std::string* refused) {
    using Fn = decltype(&::cudnnGetVersion);
    Fn version = reinterpret_cast<Fn>(dlsym(h, "cudnnGetVersion"));
    if (!version) {
      *refused = "it has no cudnnGetVersion";
      return false;
    }
    const size_t v = version();
    if (v / 10000 == CUDNN_MAJOR) return true;
    *refused = "it is cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) +
               "; this module was built for cuDNN " + std::to_string(CUDNN_MAJOR);
    return false;
  }, err);
}
}  // namespace

const DnnApi* dnn(std::string* why) {
  const DnnApi* a = load(g_dnn_once, g_dnn, g_dnn_why, g_dnn_ok, "cudnn", open_cudnn, [](void* h) {
    bool ok = true;
#define CT_LAZY_SYM(f) ok = sym(h, #f, &g_dnn.f, &g_dnn_why) && ok;
    CT_DNN_FUNCS(CT_LAZY_SYM)
#undef CT_LAZY_SYM
    return ok;
  });
  if (!a && why) *why = g_dnn_why;
  return a;
}
#endif

}  // namespace ctcu
