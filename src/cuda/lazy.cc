// lazy.cc — see lazy.h.
#include "lazy.h"

#include <dlfcn.h>

#include <cuda_runtime_api.h>

#include <mutex>

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

// dlopen of lib<name>.so.<major>, then lib<name>.so, then both in the toolkit's folder.
void* open_lib(const char* name, std::string* err) {
  const std::string so = std::string("lib") + name + ".so", versioned = so + "." + std::to_string(kMajor);
  const std::string dir = CT_CUDA_LIBDIR;
  for (const std::string& path : {versioned, so, dir.empty() ? versioned : dir + "/" + versioned}) {
    if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    if (err->empty() && e) *err = e;
  }
  return nullptr;
}

template <class Api, class Fill>
const Api* load(std::once_flag& once, Api& api, std::string& why, bool& ok, const char* name, Fill fill) {
  std::call_once(once, [&] {
    void* h = open_lib(name, &why);
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

}  // namespace

const NvrtcApi* nvrtc(std::string* why) {
  const NvrtcApi* a = load(g_nvrtc_once, g_nvrtc, g_nvrtc_why, g_nvrtc_ok, "nvrtc", [](void* h) {
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
  const LtApi* a = load(g_lt_once, g_lt, g_lt_why, g_lt_ok, "cublasLt", [](void* h) {
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

}  // namespace ctcu
