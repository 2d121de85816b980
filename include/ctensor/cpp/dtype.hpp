// ctensor/cpp/dtype.hpp: devices (ct::cpu) and dtypes (ct::dtype::float32, ct::dtype_of<T>, names, sizes).
#ifndef CTENSOR_CPP_DTYPE_HPP_
#define CTENSOR_CPP_DTYPE_HPP_

#include "error.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace ct {

/* ------------------------------------------------------------------------ */
/* Devices and dtypes                                                        */
/* ------------------------------------------------------------------------ */

/** The host CPU device {CT_CPU, 0}. */
constexpr CTDevice cpu() { return CTDevice{CT_CPU, 0}; }

/** True if @p a and @p b are the same device. */
inline bool same_device(CTDevice a, CTDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}

/** dtype constants and helpers: ct::dtype::float32, ct::dtype::name(dt), ... */
namespace dtype {
constexpr CTDataType bool_ = {CT_BOOL, 8, 1};       /**< bool, one byte 0 or 1 */
constexpr CTDataType int8 = {CT_INT, 8, 1};         /**< int8 */
constexpr CTDataType int16 = {CT_INT, 16, 1};       /**< int16 */
constexpr CTDataType int32 = {CT_INT, 32, 1};       /**< int32 */
constexpr CTDataType int64 = {CT_INT, 64, 1};       /**< int64 */
constexpr CTDataType uint8 = {CT_UINT, 8, 1};       /**< uint8 */
constexpr CTDataType uint16 = {CT_UINT, 16, 1};     /**< uint16 */
constexpr CTDataType uint32 = {CT_UINT, 32, 1};     /**< uint32 */
constexpr CTDataType uint64 = {CT_UINT, 64, 1};     /**< uint64 */
constexpr CTDataType float16 = {CT_FLOAT, 16, 1};   /**< IEEE half */
constexpr CTDataType bfloat16 = {CT_BFLOAT, 16, 1}; /**< bfloat16 */
constexpr CTDataType float32 = {CT_FLOAT, 32, 1};   /**< float */
constexpr CTDataType float64 = {CT_FLOAT, 64, 1};   /**< double */

/** True if @p a and @p b are the same dtype (code, bits and lanes). */
inline bool equal(CTDataType a, CTDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/** Bytes per element of @p dt. */
inline size_t itemsize(CTDataType dt) {
  return (static_cast<size_t>(dt.bits) * dt.lanes + 7) / 8;
}

constexpr CTDataType float8_e4m3fn = {CT_FLOAT8_E4M3FN, 8, 1};     /**< 8-bit float, bias 7, max 448, no inf */
constexpr CTDataType float8_e5m2 = {CT_FLOAT8_E5M2, 8, 1};         /**< 8-bit float, IEEE-like, max 57344 */
constexpr CTDataType float8_e4m3fnuz = {CT_FLOAT8_E4M3FNUZ, 8, 1}; /**< 8-bit float, bias 8, NaN 0x80, no -0 */
constexpr CTDataType float8_e5m2fnuz = {CT_FLOAT8_E5M2FNUZ, 8, 1}; /**< 8-bit float, bias 16, NaN 0x80, no -0 */

/** The dtype of CTDtypeIndex @p index (0 <= index < CT_DT_COUNT), as ct_dtype_index numbers them. */
inline CTDataType from_index(int32_t index) { return ct_dtype_of_index(index); }

/** A static name for @p dt ("float32", "bool", ...; "unknown" otherwise). */
inline const char* name(CTDataType dt) {
  const int32_t i = ct_dtype_index(dt);
  return i < 0 ? "unknown" : ct_dtype_name(i);
}
}  // namespace dtype

namespace detail {
template <class T>
struct DTypeOf {
  typedef typename std::remove_cv<T>::type U;
  static constexpr bool is_bool = std::is_same<U, bool>::value;
  static constexpr bool supported =
      is_bool || (std::is_floating_point<U>::value && (sizeof(U) == 4 || sizeof(U) == 8)) ||
      (std::is_integral<U>::value && sizeof(U) <= 8);
  static constexpr uint8_t code = static_cast<uint8_t>(
      is_bool ? CT_BOOL
              : std::is_floating_point<U>::value ? CT_FLOAT
                                                 : std::is_signed<U>::value ? CT_INT : CT_UINT);
  static constexpr uint8_t bits = static_cast<uint8_t>(8 * sizeof(U));
};
}  // namespace detail

/** The dtype of C++ type @p T: bool, int8_t/16/32/64, uint8_t/16/32/64, float, double. */
template <class T>
constexpr CTDataType dtype_of() {
  static_assert(detail::DTypeOf<T>::supported,
                "ct::dtype_of<T>: T must be bool, int8_t..int64_t, uint8_t..uint64_t, float or double");
  static_assert(sizeof(bool) == 1, "ctensor stores bool in one byte");
  return CTDataType{detail::DTypeOf<T>::code, detail::DTypeOf<T>::bits, 1};
}

namespace detail {
template <class T>
inline void expect_dtype(CTDataType actual, const char* who,
                         typename std::enable_if<!std::is_void<T>::value>::type* = nullptr) {
  if (!dtype::equal(actual, dtype_of<T>()))
    fail(CT_ERR_DTYPE_MISMATCH, std::string(who) + ": the tensor is " + dtype::name(actual) +
                                    ", not " + dtype::name(dtype_of<T>()));
}
template <class T>
inline void expect_dtype(CTDataType, const char*,
                         typename std::enable_if<std::is_void<T>::value>::type* = nullptr) {}
}  // namespace detail

/** True for the float dtypes (float16, bfloat16, float32, float64, the float8 dtypes). */
inline bool is_floating(CTDataType dt) {
  const int32_t i = ct_dtype_index(dt);
  return i >= 0 && ((CT_DTS_FLOAT >> i) & 1u) != 0;
}

}  // namespace ct

#endif  // CTENSOR_CPP_DTYPE_HPP_
