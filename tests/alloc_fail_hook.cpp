// alloc_fail_hook.cpp — the replacement allocation functions behind
// alloc_fail_hook.h. libctensor, libstdc++'s containers and oneDNN reach
// them through the dynamic linker: the executable's definitions come first.
// The real memory comes from glibc's __libc_* entry points (or, under a
// sanitizer, from its malloc), so a `new` counts once, not again as a malloc.
#include "alloc_fail_hook.h"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <new>

#include <execinfo.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define CT_HOOK_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define CT_HOOK_MALLOC 0
#endif
#endif
#if !defined(CT_HOOK_MALLOC) && defined(__SANITIZE_THREAD__)
#define CT_HOOK_MALLOC 0
#endif
#if !defined(CT_HOOK_MALLOC) && defined(__GLIBC__)
#define CT_HOOK_MALLOC 1
#endif
#if !defined(CT_HOOK_MALLOC)
#define CT_HOOK_MALLOC 0
#endif

namespace {

std::atomic<bool> g_armed{false};
std::atomic<long> g_left{0};     // allocations that still succeed
std::atomic<long> g_seen{0};     // asked for while armed
std::atomic<long> g_refused{0};

// True when this allocation is to fail.
bool refuse() {
  if (!g_armed.load(std::memory_order_relaxed)) return false;
  g_seen.fetch_add(1, std::memory_order_relaxed);
  if (g_left.fetch_sub(1, std::memory_order_relaxed) > 0) return false;
  g_refused.fetch_add(1, std::memory_order_relaxed);
  // CT_HOOK_BACKTRACE=1: where the first refused allocation of each armed
  // window was asked for (backtrace_symbols_fd does not allocate).
  static const bool trace = std::getenv("CT_HOOK_BACKTRACE") != nullptr;
  if (trace && g_left.load(std::memory_order_relaxed) == -1) {
    void* frames[24];
    const int n = backtrace(frames, 24);
    static const char line[] = "---- refused allocation:\n";
    if (write(2, line, sizeof line - 1) < 0) return true;
    backtrace_symbols_fd(frames, n, 2);
  }
  return true;
}

}  // namespace

#if CT_HOOK_MALLOC
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}
namespace {
void* raw_malloc(size_t n) { return __libc_malloc(n); }
void* raw_aligned(size_t align, size_t n) { return __libc_memalign(align, n); }
}  // namespace

extern "C" {
void* malloc(size_t n) {
  if (refuse()) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  if (refuse()) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  if (refuse()) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t align, size_t n) {
  if (refuse()) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_memalign(align, n);
}
int posix_memalign(void** p, size_t align, size_t n) {
  if (align < sizeof(void*) || (align & (align - 1))) return EINVAL;
  if (refuse()) return ENOMEM;
  void* r = __libc_memalign(align, n);
  if (!r) return ENOMEM;
  *p = r;
  return 0;
}
}  // extern "C"
#else
namespace {
void* raw_malloc(size_t n) { return std::malloc(n); }
void* raw_aligned(size_t align, size_t n) {
  void* p = nullptr;
  return posix_memalign(&p, align < sizeof(void*) ? sizeof(void*) : align, n) == 0 ? p : nullptr;
}
}  // namespace
#endif

namespace {
void* new_impl(size_t n, bool nothrow) {
  void* p = refuse() ? nullptr : raw_malloc(n ? n : 1);
  if (!p && !nothrow) throw std::bad_alloc();
  return p;
}
void* new_aligned(size_t n, std::align_val_t a, bool nothrow) {
  void* p = refuse() ? nullptr : raw_aligned((size_t)a, n ? n : 1);
  if (!p && !nothrow) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(size_t n) { return new_impl(n, false); }
void* operator new[](size_t n) { return new_impl(n, false); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return new_impl(n, true); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return new_impl(n, true); }
void* operator new(size_t n, std::align_val_t a) { return new_aligned(n, a, false); }
void* operator new[](size_t n, std::align_val_t a) { return new_aligned(n, a, false); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return new_aligned(n, a, true); }
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return new_aligned(n, a, true); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace cthook {

void arm(long countdown) {
  static const bool warm = [] {  // backtrace() loads libgcc at its first call: not while armed
    void* f[2];
    return backtrace(f, 2) >= 0;
  }();
  (void)warm;
  g_seen.store(0);
  g_left.store(countdown);
  g_armed.store(true);
}

long disarm() {
  g_armed.store(false);
  return g_seen.load();
}

long refused() { return g_refused.load(); }

bool malloc_hooked() { return CT_HOOK_MALLOC != 0; }

}  // namespace cthook
