// ctensor/cpp/error.hpp: ct::Error and ct::check, how every ct:: function reports a failure.
//
// Part of the header-only C++11 wrapper; include <ctensor/ctensor.hpp> for all of it.
#ifndef CTENSOR_CPP_ERROR_HPP_
#define CTENSOR_CPP_ERROR_HPP_

#include "../ctensor.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ct {

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/** The exception every ct:: function throws on failure: the CTStatus and a
 *  copy of the library's message (ct_last_error() is overwritten by the next
 *  call on the thread, so the copy is what stays valid). */
class Error : public std::runtime_error {
 public:
  /** An error with @p status and @p message (copied; the status name if empty). */
  Error(CTStatus status, const std::string& message)
      : std::runtime_error(message.empty() ? std::string(ct_status_string(status)) : message),
        status_(status) {}
  /** The failing CTStatus (negative). */
  CTStatus status() const noexcept { return status_; }
  /** The status' static name, e.g. "CT_ERR_SHAPE_MISMATCH". */
  const char* status_name() const noexcept { return ct_status_string(status_); }

 private:
  CTStatus status_;
};

/** Throw ct::Error(status, copy of ct_last_error()) unless @p status is CT_OK. */
inline void check(CTStatus status) {
  if (status != CT_OK) {
    const char* message = ct_last_error();
    throw Error(status, std::string(message ? message : ""));
  }
}

/** Internal helpers; not part of the API. */
namespace detail {

inline std::string dims_str(const int64_t* d, int32_t n) {
  std::string s = "[";
  for (int32_t i = 0; i < n; ++i) {
    if (i) s += ",";
    s += std::to_string(static_cast<long long>(d[i]));
  }
  return s + "]";
}

inline std::string dims_str(const std::vector<int64_t>& d) {
  return dims_str(d.data(), static_cast<int32_t>(d.size()));
}

[[noreturn]] inline void fail(CTStatus status, const std::string& message) {
  throw Error(status, message);
}

}  // namespace detail

}  // namespace ct

#endif  // CTENSOR_CPP_ERROR_HPP_
