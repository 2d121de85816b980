// nn_kernels.h — the device code of the NN ops both GPU modules run with
// their own kernels: max_pool2d, avg_pool2d and their backward ops
// (pool_kernels), batch_norm (inference, training, backward) and layer_norm
// (forward, backward) (norm_kernels), scaled_dot_product_attention
// (attention_kernels): float16, bfloat16 or float32 data
// (the program's DS, read by ld and written by st: nn_program) with float32
// statistics and parameters.
// Written once in the OpenCL C both dialects share (the text that follows
// the generator's prelude: nn_program in source.h makes the program for a
// Target), so the CUDA module runs the OpenCL module's kernels, not a second
// copy of them. The host side of these kernels (their geometry structs, what
// each argument holds) is nn_geometry.h.
#ifndef CTENSOR_SRC_GPU_NN_KERNELS_H_
#define CTENSOR_SRC_GPU_NN_KERNELS_H_

namespace ctgpu {

// Kernels (arguments: nn_geometry.h):
//  pool_fwd(y, yo, ind, io, x, xo, int is_max, PGeo)   one work-item per y element
//  pool_bwd(dx, xo, dy, yo, ind, io, int is_max, PGeo)  one work-item per dx element
//  pool_ind_check(ind, io, PGeo, int* err, int code)    one work-item per index: *err = code for
//                                                       one outside its output's window
// (buffers with their byte offsets: ulong).
const char* pool_kernels();

// Kernels (arguments: the data tensors' (buffer, byte offset) pairs, then the
// vector slots' (buffer, byte offset) pairs, then NG; see NormCall):
//  bn_stats, bn_apply, bn_bwd_stats, bn_bwd_dx, ln_fwd, ln_bwd_dx, ln_bwd_params.
// Statistics accumulate in AF (double where the device has it).
const char* norm_kernels();

// Kernel (arguments: (buffer, byte offset) pairs of out, q, k, v, mask, then AttnGeo):
//  attn_fwd   one work-item per (batch entry, query row, block of 32 output columns)
// (AttnCall in nn_geometry.h: the work-items, the geometry, an absent mask).
const char* attention_kernels();

}  // namespace ctgpu

#endif  // CTENSOR_SRC_GPU_NN_KERNELS_H_
