// error.h — the thread's message, and the wrapper every entry point uses.
#ifndef CTENSOR_SRC_CORE_ERROR_H_
#define CTENSOR_SRC_CORE_ERROR_H_

#include <ctensor/ctensor.h>

#include <cstdarg>
#include <cstring>
#include <new>
#include <stdexcept>

#include "core/epoch.h"

// Error paths: the compiler keeps them out of the hot code (one cache line
// of a 1-element call is worth a few nanoseconds).
#if defined(__GNUC__)
#define CT_COLD __attribute__((cold))
#else
#define CT_COLD
#endif

namespace ct {

// Sets this thread's message (printf-style) and returns `status`.
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
CT_COLD CTStatus fail(CTStatus status, const char* fmt, ...);

// fail() with a va_list (the host table's set_error).
CT_COLD CTStatus vfail(CTStatus status, const char* fmt, va_list args);

// Clears this thread's message: every entry point calls it first.
void clear_error();

// Formats a shape as "[2,3,4]" into buf (at least 24 * CT_MAX_NDIM bytes).
const char* format_shape(char* buf, size_t n, int32_t ndim, const int64_t* shape);

// Growing structs (CTOpInfo, CTDeviceInfo, ...) start with uint32_t
// struct_size: the caller says how many bytes it knows, and the library
// fills at most that many, so older callers keep working when a struct grows.
template <class S>
CTStatus check_struct_size(const char* fn, const char* arg, const S* s, size_t min_size) {
  if (!s) return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, arg);
  if (s->struct_size < min_size)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s->struct_size=%u is too small (sizeof=%zu)", fn, arg,
                s->struct_size, sizeof(S));
  return CT_OK;
}
template <class S>
void copy_struct_out(S* dst, S full) {
  full.struct_size = dst->struct_size < sizeof(S) ? dst->struct_size : (uint32_t)sizeof(S);
  std::memcpy(dst, &full, full.struct_size);
}

}  // namespace ct

// Every exported function's body sits between these: no C++ exception
// crosses the ABI; an unexpected one becomes a status with a message. The
// body is a read section (epoch.h): what it reads of the registry stays
// allocated until it returns.
#define CT_API_BEGIN(fn) \
  static const char* const ct_fn_name_ = fn; \
  (void)ct_fn_name_; \
  const ::ct::ReadSection ct_read_section_; \
  ::ct::clear_error(); \
  try {
#define CT_API_END() \
  } catch (const std::bad_alloc&) { \
    return ::ct::fail(CT_ERR_OUT_OF_MEMORY, "%s: out of memory", ct_fn_name_); \
  } catch (const std::exception& e) { \
    return ::ct::fail(CT_ERR_INTERNAL, "%s: internal error: %s", ct_fn_name_, e.what()); \
  } catch (...) { \
    return ::ct::fail(CT_ERR_INTERNAL, "%s: internal error (unknown exception)", ct_fn_name_); \
  }

#endif  // CTENSOR_SRC_CORE_ERROR_H_
