// From an NN op id and its tensor arguments in an array (the order of
// ct_<op>, NULL for an absent optional one) to the op's two entry points:
// one switch for every caller that holds tensors by position (`ctensor check`,
// the Python module) instead of one per caller. Header-only; C++.
#pragma once
#include <ctensor/ctensor.h>

#include <cstddef>

namespace ctnn {

// query: ct_<op>_workspace_size(desc, T..., bytes); otherwise
// ct_<op>(desc, T..., ws, *bytes, stream). CT_ERR_NOT_FOUND for an op id
// this header does not know (a newer library's op).
inline CTStatus call(int32_t op, const void* desc, CTensor* const* T, bool query, size_t* bytes, void* ws,
                     void* stream) {
  const auto* md = static_cast<const CTMatmulDesc*>(desc);
  const auto* cd = static_cast<const CTConv2dDesc*>(desc);
  const auto* pd = static_cast<const CTPool2dDesc*>(desc);
  const auto* bd = static_cast<const CTBatchNormDesc*>(desc);
  const auto* ld = static_cast<const CTLayerNormDesc*>(desc);
  switch (op) {
    case CT_OP_MATMUL:
      return query ? ct_matmul_workspace_size(md, T[0], T[1], T[2], T[3], bytes)
                   : ct_matmul(md, T[0], T[1], T[2], T[3], ws, *bytes, stream);
    case CT_OP_CONV2D:
      return query ? ct_conv2d_workspace_size(cd, T[0], T[1], T[2], T[3], bytes)
                   : ct_conv2d(cd, T[0], T[1], T[2], T[3], ws, *bytes, stream);
    case CT_OP_CONV2D_BACKWARD_DATA:
      return query ? ct_conv2d_backward_data_workspace_size(cd, T[0], T[1], T[2], bytes)
                   : ct_conv2d_backward_data(cd, T[0], T[1], T[2], ws, *bytes, stream);
    case CT_OP_CONV2D_BACKWARD_WEIGHT:
      return query ? ct_conv2d_backward_weight_workspace_size(cd, T[0], T[1], T[2], T[3], bytes)
                   : ct_conv2d_backward_weight(cd, T[0], T[1], T[2], T[3], ws, *bytes, stream);
    case CT_OP_MAX_POOL2D:
      return query ? ct_max_pool2d_workspace_size(pd, T[0], T[1], T[2], bytes)
                   : ct_max_pool2d(pd, T[0], T[1], T[2], ws, *bytes, stream);
    case CT_OP_MAX_POOL2D_BACKWARD:
      return query ? ct_max_pool2d_backward_workspace_size(pd, T[0], T[1], T[2], bytes)
                   : ct_max_pool2d_backward(pd, T[0], T[1], T[2], ws, *bytes, stream);
    case CT_OP_AVG_POOL2D:
      return query ? ct_avg_pool2d_workspace_size(pd, T[0], T[1], bytes)
                   : ct_avg_pool2d(pd, T[0], T[1], ws, *bytes, stream);
    case CT_OP_AVG_POOL2D_BACKWARD:
      return query ? ct_avg_pool2d_backward_workspace_size(pd, T[0], T[1], bytes)
                   : ct_avg_pool2d_backward(pd, T[0], T[1], ws, *bytes, stream);
    case CT_OP_BATCH_NORM:
      return query ? ct_batch_norm_workspace_size(bd, T[0], T[1], T[2], T[3], T[4], T[5], bytes)
                   : ct_batch_norm(bd, T[0], T[1], T[2], T[3], T[4], T[5], ws, *bytes, stream);
    case CT_OP_BATCH_NORM_TRAINING:
      return query ? ct_batch_norm_training_workspace_size(bd, T[0], T[1], T[2], T[3], T[4], T[5], bytes)
                   : ct_batch_norm_training(bd, T[0], T[1], T[2], T[3], T[4], T[5], ws, *bytes, stream);
    case CT_OP_BATCH_NORM_BACKWARD:
      return query ? ct_batch_norm_backward_workspace_size(bd, T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], bytes)
                   : ct_batch_norm_backward(bd, T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], ws, *bytes, stream);
    case CT_OP_LAYER_NORM:
      return query ? ct_layer_norm_workspace_size(ld, T[0], T[1], T[2], T[3], T[4], T[5], bytes)
                   : ct_layer_norm(ld, T[0], T[1], T[2], T[3], T[4], T[5], ws, *bytes, stream);
    case CT_OP_LAYER_NORM_BACKWARD:
      return query ? ct_layer_norm_backward_workspace_size(ld, T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], bytes)
                   : ct_layer_norm_backward(ld, T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], ws, *bytes, stream);
    default:
      return CT_ERR_NOT_FOUND;
  }
}

}  // namespace ctnn
