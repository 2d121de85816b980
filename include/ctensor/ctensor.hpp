/**
 * @file ctensor.hpp
 * @brief Header-only C++11 wrapper over the ctensor C ABI (ctensor.h).
 *
 * RAII tensors whose buffers are shared between views, ct::Error exceptions
 * that carry the library's own message, and NumPy-like functions generated
 * from the op tables (CT_ELEMENTWISE_OPS, CT_BROADCAST_REDUCE_OPS), so a new
 * op in ctensor.h appears here without an edit: elementwise maps, broadcasting
 * binary ops (also as operators + - * / % & | ^ << >> == != < <= > >= and
 * in-place += ... >>=), reductions over ct::Axes and along-axis ops.
 * Category 3 (CT_NN_OPS): option structs with chainable setters
 * (ct::Conv2dOptions().stride(2).padding(1)), ct::matmul, ct::conv2d and the
 * other NN ops returning new tensors or writing out= views, ct::Workspace
 * (an owned, growable scratch buffer) and ct::Plan (an owned CTPlan).
 * The wrapper keeps no copy of the library's rules: every output it
 * allocates is shaped and typed by ct_op_output_info, and every NN call
 * goes through ct_nn_workspace_size / ct_nn by op id. Ops that plugins add
 * (ct::Library, docs/writing-a-plugin.md) run through the same generic
 * functions by id: ct::unary(ct::op_id("isru"), x).
 * Everything is inline; only ctensor.h and the standard library are included.
 *
 * This header only includes the pieces, one concern each, under ctensor/cpp/
 * (each compiles alone, so a translation unit may include just what it uses):
 *
 *   error.hpp             ct::Error, ct::check
 *   dtype.hpp             ct::cpu(), ct::dtype::*, ct::dtype_of<T>, ct::is_floating
 *   tensor_view.hpp       ct::TensorView (non-owning)
 *   tensor.hpp            ct::Tensor (owning), empty_like, zeros_like, copy, clone
 *   op_info.hpp           ct::op_info, ct::op_id, ct::output_dtype, ct::output_info (the shape query)
 *   elementwise.hpp       category 1: ct::unary, ct::exp, ... (generated)
 *   scalar.hpp            ct::scalar
 *   broadcast_reduce.hpp  category 2: ct::Axes, ct::binary, ct::reduce, ct::sum, ... (generated)
 *   operators.hpp         a + b, a < b, -a, a += b, ...
 *   nn_options.hpp        ct::Activation, ct::Conv2dOptions, ..., ct::NNDesc (category 3 options)
 *   workspace.hpp         ct::Workspace
 *   nn.hpp                any NN op by id: ct::nn, ct::nn_outputs; result structs, *_output_shape
 *   nn_conv.hpp           ct::matmul, ct::conv2d and its backward ops (one-liners over nn.hpp)
 *   nn_pool.hpp           ct::max_pool2d, ct::avg_pool2d and their backward ops
 *   nn_norm.hpp           ct::batch_norm*, ct::layer_norm*
 *   plan.hpp              ct::Plan, ct::plan_cache_info
 *   library.hpp           ct::Library (a loaded plugin, RAII), ct::LibraryInfo
 *
 * Every named function that runs an op takes a trailing `void* stream` (NULL
 * or a CTCpuStream* on the CPU); operators use the library's default.
 *
 * @code
 *   #include <ctensor/ctensor.hpp>
 *
 *   ct::Tensor x = ct::Tensor::from({0.f, 1.f, 2.f, 3.f, 4.f, 5.f}, {2, 3});
 *   ct::Tensor y = ct::exp(x.transpose(0, 1));       // a view in, a new 3x2 tensor out
 *   ct::clamp(y, 1.0, 10.0, y);                      // in place: out is exactly y
 *   std::vector<float> v = y.slice(0, 1, 3).to_vector<float>();
 *   ct::Tensor z = (x - ct::mean(x, 1, true)) / ct::std(x, 1, true);  // broadcasting
 *   ct::Tensor n = ct::sum(x > 2.f);                 // int64 count of a bool tensor
 *   ct::Tensor p = ct::softmax(x);                   // along the last axis
 *   x += 1.0;                                        // in place, same buffer
 *   try {
 *     ct::sqrt(ct::Tensor::from({1, 2, 3}));         // int32: sqrt is float-only
 *   } catch (const ct::Error& e) {
 *     std::fprintf(stderr, "%s: %s\n", e.status_name(), e.what());
 *   }
 * @endcode
 */
#ifndef CTENSOR_CTENSOR_HPP_
#define CTENSOR_CTENSOR_HPP_

#include "ctensor.h"

#include "cpp/error.hpp"
#include "cpp/dtype.hpp"
#include "cpp/tensor_view.hpp"
#include "cpp/tensor.hpp"
#include "cpp/op_info.hpp"
#include "cpp/elementwise.hpp"
#include "cpp/scalar.hpp"
#include "cpp/broadcast_reduce.hpp"
#include "cpp/operators.hpp"
#include "cpp/nn_options.hpp"
#include "cpp/workspace.hpp"
#include "cpp/nn.hpp"
#include "cpp/nn_conv.hpp"
#include "cpp/nn_pool.hpp"
#include "cpp/nn_norm.hpp"
#include "cpp/plan.hpp"
#include "cpp/library.hpp"

#endif  // CTENSOR_CTENSOR_HPP_
