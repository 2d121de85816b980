// ctensor/cpp/op_info.hpp: what the registry says about an op: ct::op_info and ct::output_dtype.
#ifndef CTENSOR_CPP_OP_INFO_HPP_
#define CTENSOR_CPP_OP_INFO_HPP_

#include "dtype.hpp"
#include "error.hpp"

#include <cstdint>
#include <cstring>

namespace ct {

/** The registry's facts about @p op (throws CT_ERR_NOT_FOUND for a bad id). */
inline CTOpInfo op_info(int32_t op) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  check(ct_op_info(op, &info));
  return info;
}

namespace detail {
inline int32_t query_output_kind(int32_t op) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  return ct_op_info(op, &info) == CT_OK ? info.output_dtype : static_cast<int32_t>(CT_OUTPUT_SAME);
}

// CTOpInfo.output_dtype of every op of this header, queried once per process.
inline int32_t output_kind(int32_t op) {
  struct Cache {
    int32_t kind[CT_OP_END_];
    Cache() {
      for (int32_t i = 0; i < CT_OP_END_; ++i) kind[i] = query_output_kind(i);
    }
  };
  static const Cache cache;
  return op >= 0 && op < CT_OP_END_ ? cache.kind[op] : query_output_kind(op);
}
}  // namespace detail

/** The dtype op @p op writes for inputs of dtype @p input, by the op's
 *  CTOpInfo.output_dtype: SAME (and ANY) -> @p input; BOOL -> bool; INT64 ->
 *  int64; ACCUM -> @p input if it is a float dtype, else int64; FLOAT ->
 *  @p input if it is a float dtype, else float64. */
inline CTDataType output_dtype(int32_t op, CTDataType input) {
  switch (detail::output_kind(op)) {
    case CT_OUTPUT_BOOL: return dtype::bool_;
    case CT_OUTPUT_INT64: return dtype::int64;
    case CT_OUTPUT_ACCUM: return is_floating(input) ? input : dtype::int64;
    case CT_OUTPUT_FLOAT: return is_floating(input) ? input : dtype::float64;
    default: return input;
  }
}

}  // namespace ct

#endif  // CTENSOR_CPP_OP_INFO_HPP_
