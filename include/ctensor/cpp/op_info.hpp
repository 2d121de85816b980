// ctensor/cpp/op_info.hpp: what the library says about an op: ct::op_info, ct::output_dtype, ct::output_info.
//
// The wrapper keeps no rule of its own about what an op writes: output
// shapes and dtypes come from ct_op_output_info (the core's rules), facts
// about an op (its tensors, its descriptor, its outputs) from ct_op_info.
#ifndef CTENSOR_CPP_OP_INFO_HPP_
#define CTENSOR_CPP_OP_INFO_HPP_

#include "dtype.hpp"
#include "error.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ct {

/** The registry's facts about @p op (throws CT_ERR_NOT_FOUND for a bad id). */
inline CTOpInfo op_info(int32_t op) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  check(ct_op_info(op, &info));
  return info;
}

/** The id of the op named @p name (ct_op_find): a built-in ("exp") or one a
 *  plugin added ("isru"), for the generic entry points (ct::unary,
 *  ct::binary, ct::reduce, ...). Throws CT_ERR_NOT_FOUND for no such op. */
inline int32_t op_id(const std::string& name) {
  int32_t op = -1;
  check(ct_op_find(name.c_str(), &op));
  return op;
}

namespace detail {
// ct_op_info of every op id this header knows, queried once per process
// (the strings and tensor_roles it points at are static in the library);
// struct_size 0 marks an id the runtime library does not know.
struct OpInfoCache {
  CTOpInfo info[CT_OP_END_];
  OpInfoCache() {
    for (int32_t i = 0; i < CT_OP_END_; ++i) {
      std::memset(&info[i], 0, sizeof info[i]);
      info[i].struct_size = sizeof info[i];
      if (ct_op_info(i, &info[i]) != CT_OK) info[i].struct_size = 0;
    }
  }
};

inline const OpInfoCache& op_info_cache() {
  static const OpInfoCache cache;
  return cache;
}

// The CTOpInfo of @p op; ids past this header's table are asked each time.
// Throws the library's CT_ERR_NOT_FOUND for an unknown id.
inline CTOpInfo cached_op_info(int32_t op) {
  if (op >= 0 && op < CT_OP_END_ && op_info_cache().info[op].struct_size != 0)
    return op_info_cache().info[op];
  return op_info(op);
}

// CTOpInfo.output_dtype of @p op (CT_OUTPUT_SAME for an unknown id).
inline int32_t output_kind(int32_t op) {
  if (op >= 0 && op < CT_OP_END_) {
    const CTOpInfo& info = op_info_cache().info[op];
    return info.struct_size != 0 ? info.output_dtype : static_cast<int32_t>(CT_OUTPUT_SAME);
  }
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  return ct_op_info(op, &info) == CT_OK ? info.output_dtype : static_cast<int32_t>(CT_OUTPUT_SAME);
}

// @p n as the int32_t count of a C call; throws for more than INT32_MAX.
inline int32_t count32(size_t n, const char* who) {
  if (n > static_cast<size_t>(INT32_MAX))
    fail(CT_ERR_INVALID_ARGUMENT, std::string(who) + ": " + std::to_string(n) + " tensors are too many");
  return static_cast<int32_t>(n);
}

// A zeroed CTOpArgs with struct_size set.
inline CTOpArgs op_args() noexcept {
  CTOpArgs a;
  std::memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  return a;
}

// ct_op_output_info into @p outputs (@p num_outputs of them); throws the library's error.
inline void query_outputs(int32_t op, const CTOpArgs* args, const CTensor* const* inputs,
                          int32_t num_inputs, CTOutputInfo* outputs, int32_t num_outputs) {
  check(ct_op_output_info(op, args, inputs, num_inputs, outputs, num_outputs));
}

// One output's shape and dtype for an op of one output, from ct_op_output_info.
inline CTOutputInfo output1(int32_t op, const CTensor* const* inputs, int32_t num_inputs,
                            const CTOpArgs* args) {
  CTOutputInfo o;
  query_outputs(op, args, inputs, num_inputs, &o, 1);
  return o;
}

// The extents of @p o.
inline std::vector<int64_t> shape_of(const CTOutputInfo& o) {
  return std::vector<int64_t>(o.shape, o.shape + (o.ndim > 0 ? o.ndim : 0));
}

// A new compact tensor of @p o's shape and dtype on @p device.
inline Tensor empty_for(const CTOutputInfo& o, CTDevice device) {
  return Tensor::empty(shape_of(o), o.dtype, device);
}
// A new compact output of one-input, one-output op @p op for @p x, shaped
// and typed by ct_op_output_info, on x's device.
inline Tensor new_output(int32_t op, const TensorView& x, const CTOpArgs* args = nullptr) {
  const CTensor* in[1] = {&x.c()};
  return empty_for(output1(op, in, 1, args), x.device());
}
}  // namespace detail

/** The dtype op @p op writes for inputs of dtype @p input, by the op's
 *  CTOpInfo.output_dtype as ct_output_dtype_index states it: SAME (and ANY)
 *  -> @p input; BOOL -> bool; INT64 -> int64; ACCUM -> @p input if it is a
 *  float dtype, uint64 if it is unsigned, else int64; FLOAT -> @p input if it
 *  is a float dtype, else float64. This reads the op's kind of output only
 *  (it answers for dtypes the op rejects, too); ct::output_info asks the
 *  library for the dtype and shape of given inputs. */
inline CTDataType output_dtype(int32_t op, CTDataType input) {
  const int32_t out = ct_output_dtype_index(detail::output_kind(op), ct_dtype_index(input));
  return out < 0 ? input : dtype::from_index(out);
}

/** What op @p op writes for these inputs: one CTOutputInfo (ndim, shape,
 *  dtype) per output tensor argument, in order, optional ones included,
 *  from ct_op_output_info. @p inputs are the op's input tensor arguments in
 *  order (the first CTOpInfo.num_inputs of its tensor_names; nullptr for an
 *  absent optional one); only their ndim, shape and dtype are read, so a
 *  view of no data (TensorView(nullptr, dtype, shape)) asks about shapes.
 *  @p args: the op's other arguments (axes and keepdims of a reduction,
 *  an along-axis op's axis, cast's dtype, an NN op's descriptor); nullptr
 *  for none. Throws ct::Error with the library's message when the op
 *  rejects these inputs (the status the op itself would return). */
inline std::vector<CTOutputInfo> output_info(int32_t op, const std::vector<const TensorView*>& inputs,
                                             const CTOpArgs* args = nullptr) {
  const CTOpInfo info = detail::cached_op_info(op);
  std::vector<const CTensor*> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) in[i] = inputs[i] ? &inputs[i]->c() : nullptr;
  std::vector<CTOutputInfo> out(static_cast<size_t>(info.num_outputs > 0 ? info.num_outputs : 0));
  detail::query_outputs(op, args, in.empty() ? nullptr : in.data(),
                        detail::count32(in.size(), "ct::output_info"),
                        out.empty() ? nullptr : out.data(), static_cast<int32_t>(out.size()));
  return out;
}

}  // namespace ct

#endif  // CTENSOR_CPP_OP_INFO_HPP_
