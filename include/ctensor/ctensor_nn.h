/*
 * ctensor_nn.h — category 3 of the C ABI: NN ops with a workspace query
 * (matmul, conv2d and its backwards, pooling, batch and layer norm), their
 * descriptors, the generic NN pair, plans and the plan cache. Part of
 * ctensor.h (which includes it); C99, includes only ctensor.h.
 */
#ifndef CTENSOR_CTENSOR_NN_H_
#define CTENSOR_CTENSOR_NN_H_

#include "ctensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Category 3: NN ops with a workspace query                                 */
/* ------------------------------------------------------------------------ */
/*
 * Every op has two entry points with the same leading arguments:
 * ct_<op>_workspace_size(desc, tensors..., &bytes) says how many bytes of
 * scratch the call needs (data pointers are not read and may be NULL), and
 * ct_<op>(desc, tensors..., workspace, workspace_bytes, stream) runs it. The
 * library never allocates device memory inside an op: backend scratch (for
 * oneDNN, its user-mode scratchpad) and the buffers for layout changes all
 * live in the caller's workspace. A smaller workspace is
 * CT_ERR_WORKSPACE_TOO_SMALL, naming the size needed; workspace may be NULL
 * when the query said 0. The size depends only on the descriptor, the
 * shapes, strides and dtypes, the device and the thread count, so a
 * framework can plan memory statically.
 *
 * Out of memory: validation, plan creation and ctensor's own allocations
 * all come before the first write, so a CT_ERR_OUT_OF_MEMORY from them
 * leaves the outputs untouched. The one exception to that rule of
 * ctensor.h: oneDNN allocates small objects while its primitives run, and
 * when such an allocation fails after a primitive has written, the call
 * returns CT_ERR_OUT_OF_MEMORY with its outputs partly written. (With more
 * than one thread, oneDNN 2.x also allocates inside its own OpenMP parallel
 * regions, where a failed allocation terminates the process: no exception
 * can leave such a region, and ctensor cannot catch it there.)
 *
 * @code
 *   CTConv2dDesc d = {sizeof d};            // stride 1, no padding, groups 1
 *   d.pad_begin[0] = d.pad_begin[1] = d.pad_end[0] = d.pad_end[1] = 1;
 *   size_t bytes = 0;
 *   CTStatus s = ct_conv2d_workspace_size(&d, &x, &w, NULL, &y, &bytes);
 *   void* ws = NULL;
 *   if (s == CT_OK && bytes) s = ct_malloc(x.device, bytes, &ws);
 *   if (s == CT_OK) s = ct_conv2d(&d, &x, &w, NULL, &y, ws, bytes, NULL);
 *   ct_free(x.device, ws);
 * @endcode
 *
 * Layouts are strides only. conv2d and pooling take x as logical (N, C, H, W)
 * and w as (K, C/groups, R, S) whatever the memory order: NHWC data is the
 * (N, C, H, W) view with strides (H*W*C, 1, W*C, C). No format flag exists to
 * get wrong. When the backend prefers another layout (oneDNN's blocked
 * formats), the reorders happen inside the call, in the workspace.
 *
 * dtypes: float32 everywhere; bfloat16 and float16 where the backend runs
 * them on this machine (ct_op_supported answers before execution, and says
 * why not). Data tensors of one call share the dtype; statistics (mean,
 * var, invstd, rstd), scale and shift are float32 for every data dtype;
 * bias has the data dtype or float32; max-pool indices are int64.
 *
 * Calls with the same descriptor, shapes, strides, dtypes, device and thread
 * count hit a thread-safe plan cache, so repeating a call never re-creates
 * backend primitives. Callers that want to own that state use a CTPlan.
 *
 * Threads on the CPU: oneDNN in this build runs on OpenMP threads; a
 * CTCpuStream's num_threads caps them (0 = the library default, which is
 * also the most an NN op uses, since the workspace queries answer for it).
 * A CTCpuStream's parallel_for is not used by NN ops.
 *
 * Descriptors start with struct_size (set it to sizeof the struct): a
 * caller built against an older, smaller struct keeps working. In every
 * descriptor a zero stride, dilation or group count means 1, so a
 * zero-initialised descriptor is the plain op.
 */

/** An activation fused after the bias (matmul, conv2d forward). */
typedef enum {
  CT_ACTIVATION_NONE = 0,
  CT_ACTIVATION_RELU = 1,
  CT_ACTIVATION_GELU = 2,      /**< erf form, as CT_OP_GELU */
  CT_ACTIVATION_GELU_TANH = 3, /**< tanh approximation, as CT_OP_GELU_TANH */
  CT_ACTIVATION_SIGMOID = 4,
  CT_ACTIVATION_TANH = 5
} CTActivation;

/** ct_matmul: out[..., M, N] = act(a[..., M, K] @ b[..., K, N] + bias).
 *  Batch dims (all but the last two) broadcast as in NumPy, and out has the
 *  broadcast batch shape. A transposed operand is a strided view (swap the
 *  last two extents and strides): no flag. bias, when given, broadcasts to
 *  out's shape (typically (N,) or (M, N)). a and b are at least 2-d. K = 0
 *  sums nothing: out = act(bias), or act(0). */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTMatmulDesc) */
  int32_t activation;   /**< CTActivation */
} CTMatmulDesc;

/** ct_conv2d and its backward ops. x (N, C, H, W), w (K, C/groups, R, S),
 *  bias (K,), y (N, K, P, Q) with
 *  P = (H + pad_begin[0] + pad_end[0] - dilation[0] * (R - 1) - 1) / stride[0] + 1
 *  (floor), and likewise Q along W. Depthwise is groups = C. */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTConv2dDesc) */
  int32_t groups;       /**< 0 or 1: dense; must divide C and K */
  int64_t stride[2];    /**< (h, w); 0 means 1 */
  int64_t pad_begin[2]; /**< (top, left) zero padding, >= 0 */
  int64_t pad_end[2];   /**< (bottom, right) zero padding, >= 0 (asymmetric allowed) */
  int64_t dilation[2];  /**< (h, w) as in PyTorch: 1 (or 0) is a dense kernel */
  int32_t activation;   /**< CTActivation after the bias (forward only; must be NONE for the backward ops) */
  int32_t reserved;     /**< 0 */
} CTConv2dDesc;

/** ct_max_pool2d, ct_avg_pool2d and their backward ops. x (N, C, H, W),
 *  y (N, C, P, Q) with P = (H + pad_begin[0] + pad_end[0] -
 *  dilation[0] * (kernel[0] - 1) - 1) / stride[0] + 1 (floor; PyTorch's
 *  ceil_mode is a larger pad_end). Max pooling ignores padding. */
typedef struct {
  uint32_t struct_size;      /**< sizeof(CTPool2dDesc) */
  int32_t count_include_pad; /**< avg: nonzero divides by the whole window, zero by the elements inside x */
  int64_t kernel[2];         /**< (h, w) window, >= 1 */
  int64_t stride[2];         /**< 0 means the kernel size (PyTorch's default) */
  int64_t pad_begin[2];      /**< (top, left), >= 0 */
  int64_t pad_end[2];        /**< (bottom, right), >= 0 */
  int64_t dilation[2];       /**< 1 (or 0) is a dense window */
} CTPool2dDesc;

/** Batch normalisation over channel dim 1 of x (N, C, ...), 2 to 5 dims.
 *  Per-channel tensors have shape (C,) and dtype float32. */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTBatchNormDesc) */
  int32_t reserved;     /**< 0 */
  double epsilon;       /**< added to the variance, >= 0 (PyTorch: 1e-5) */
} CTBatchNormDesc;

/** Layer normalisation over the last normalized_ndim axes of x. Statistics
 *  (mean, rstd) have x's shape without those axes (or keep them as 1s: any
 *  shape with that many elements, dense); scale and shift have the shape of
 *  those axes. */
typedef struct {
  uint32_t struct_size;    /**< sizeof(CTLayerNormDesc) */
  int32_t normalized_ndim; /**< k in [1, x.ndim]; 0 means 1 */
  double epsilon;          /**< added to the variance, >= 0 */
} CTLayerNormDesc;

/** ct_scaled_dot_product_attention: out[..., i, :] = sum_j w[i, j] v[..., j, :]
 *  with w[i, :] = softmax_j(scale * q[..., i, :] . k[..., j, :] + mask[..., i, j])
 *  over the keys j that the mask and the causal rule leave (PyTorch's
 *  scaled_dot_product_attention without dropout). q (..., L, E),
 *  k (..., S, E), v (..., S, Ev), out (..., L, Ev): at least 2-d; the batch
 *  dims broadcast as in NumPy, and out has the broadcast batch shape. mask
 *  (NULL: none) broadcasts to out's batch dims + (L, S): bool (true:
 *  attend), or added to the scores (the data dtype or float32; -inf
 *  removes a key). A row with no key left (every key masked) gives 0, as
 *  PyTorch does. float16 / bfloat16: the scores, softmax and sums in
 *  float32, the weights rounded to the data dtype for the second product
 *  (PyTorch's CPU precision), each output rounded once. */
typedef enum {
  CT_CAUSAL_NONE = 0,
  CT_CAUSAL_TOP_LEFT = 1,    /**< key j <= query i (PyTorch's is_causal) */
  CT_CAUSAL_BOTTOM_RIGHT = 2 /**< key j <= query i + S - L (the last query sees every key; FlashAttention's) */
} CTCausal;

typedef struct {
  uint32_t struct_size; /**< sizeof(CTAttentionDesc) */
  int32_t causal;       /**< CTCausal; applied together with mask when both are given */
  double scale;         /**< the factor on q . k, finite; 0 means 1 / sqrt(E) (PyTorch's default) */
} CTAttentionDesc;

/** out = act(a @ b + bias). bias may be NULL. */
CT_API CTStatus ct_matmul_workspace_size(const CTMatmulDesc* desc, const CTensor* a, const CTensor* b,
                                         const CTensor* bias, const CTensor* out, size_t* bytes);
CT_API CTStatus ct_matmul(const CTMatmulDesc* desc, const CTensor* a, const CTensor* b, const CTensor* bias,
                          CTensor* out, void* workspace, size_t workspace_bytes, void* stream);

/** y = act(conv2d(x, w) + bias). bias may be NULL. */
CT_API CTStatus ct_conv2d_workspace_size(const CTConv2dDesc* desc, const CTensor* x, const CTensor* w,
                                         const CTensor* bias, const CTensor* y, size_t* bytes);
CT_API CTStatus ct_conv2d(const CTConv2dDesc* desc, const CTensor* x, const CTensor* w, const CTensor* bias,
                          CTensor* y, void* workspace, size_t workspace_bytes, void* stream);

/** dx = d(loss)/dx of conv2d from dy (N, K, P, Q) and w; dx's shape fixes H, W. */
CT_API CTStatus ct_conv2d_backward_data_workspace_size(const CTConv2dDesc* desc, const CTensor* dy,
                                                       const CTensor* w, const CTensor* dx, size_t* bytes);
CT_API CTStatus ct_conv2d_backward_data(const CTConv2dDesc* desc, const CTensor* dy, const CTensor* w,
                                        CTensor* dx, void* workspace, size_t workspace_bytes, void* stream);

/** dw = d(loss)/dw, and dbias = dy summed over (N, P, Q) when dbias is not NULL. */
CT_API CTStatus ct_conv2d_backward_weight_workspace_size(const CTConv2dDesc* desc, const CTensor* x,
                                                         const CTensor* dy, const CTensor* dw,
                                                         const CTensor* dbias, size_t* bytes);
CT_API CTStatus ct_conv2d_backward_weight(const CTConv2dDesc* desc, const CTensor* x, const CTensor* dy,
                                          CTensor* dw, CTensor* dbias, void* workspace, size_t workspace_bytes,
                                          void* stream);

/** y = max over each window. indices (NULL for inference) receives, per
 *  output, the int64 position h * W + w of the max within its (n, c) plane
 *  (PyTorch's convention; the first max wins), which the backward takes. */
CT_API CTStatus ct_max_pool2d_workspace_size(const CTPool2dDesc* desc, const CTensor* x, const CTensor* y,
                                             const CTensor* indices, size_t* bytes);
CT_API CTStatus ct_max_pool2d(const CTPool2dDesc* desc, const CTensor* x, CTensor* y, CTensor* indices,
                              void* workspace, size_t workspace_bytes, void* stream);

/** dx = dy routed to the positions in indices (dx is overwritten, zeros elsewhere). */
CT_API CTStatus ct_max_pool2d_backward_workspace_size(const CTPool2dDesc* desc, const CTensor* dy,
                                                      const CTensor* indices, const CTensor* dx, size_t* bytes);
CT_API CTStatus ct_max_pool2d_backward(const CTPool2dDesc* desc, const CTensor* dy, const CTensor* indices,
                                       CTensor* dx, void* workspace, size_t workspace_bytes, void* stream);

/** y = mean over each window. */
CT_API CTStatus ct_avg_pool2d_workspace_size(const CTPool2dDesc* desc, const CTensor* x, const CTensor* y,
                                             size_t* bytes);
CT_API CTStatus ct_avg_pool2d(const CTPool2dDesc* desc, const CTensor* x, CTensor* y, void* workspace,
                              size_t workspace_bytes, void* stream);

/** dx = gradient of avg_pool2d; dx's shape fixes H, W. */
CT_API CTStatus ct_avg_pool2d_backward_workspace_size(const CTPool2dDesc* desc, const CTensor* dy,
                                                      const CTensor* dx, size_t* bytes);
CT_API CTStatus ct_avg_pool2d_backward(const CTPool2dDesc* desc, const CTensor* dy, CTensor* dx, void* workspace,
                                       size_t workspace_bytes, void* stream);

/** Inference: y = (x - mean) / sqrt(var + eps) * scale + shift, with the
 *  running statistics mean and var. scale and shift may be NULL (1 and 0). */
CT_API CTStatus ct_batch_norm_workspace_size(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* mean,
                                             const CTensor* var, const CTensor* scale, const CTensor* shift,
                                             const CTensor* y, size_t* bytes);
CT_API CTStatus ct_batch_norm(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* mean,
                              const CTensor* var, const CTensor* scale, const CTensor* shift, CTensor* y,
                              void* workspace, size_t workspace_bytes, void* stream);

/** Training: the batch's per-channel mean and biased variance v; y as in
 *  inference with them; mean and invstd = 1 / sqrt(v + eps) are written for
 *  the backward. Running statistics are the caller's (PyTorch's update:
 *  running_var uses the unbiased v * n / (n - 1), n = N * H * W ...). */
CT_API CTStatus ct_batch_norm_training_workspace_size(const CTBatchNormDesc* desc, const CTensor* x,
                                                      const CTensor* scale, const CTensor* shift,
                                                      const CTensor* y, const CTensor* mean,
                                                      const CTensor* invstd, size_t* bytes);
CT_API CTStatus ct_batch_norm_training(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* scale,
                                       const CTensor* shift, CTensor* y, CTensor* mean, CTensor* invstd,
                                       void* workspace, size_t workspace_bytes, void* stream);

/** Backward of batch_norm_training: dx, and dscale, dshift when not NULL.
 *  scale NULL means 1. */
CT_API CTStatus ct_batch_norm_backward_workspace_size(const CTBatchNormDesc* desc, const CTensor* x,
                                                      const CTensor* dy, const CTensor* mean,
                                                      const CTensor* invstd, const CTensor* scale,
                                                      const CTensor* dx, const CTensor* dscale,
                                                      const CTensor* dshift, size_t* bytes);
CT_API CTStatus ct_batch_norm_backward(const CTBatchNormDesc* desc, const CTensor* x, const CTensor* dy,
                                       const CTensor* mean, const CTensor* invstd, const CTensor* scale,
                                       CTensor* dx, CTensor* dscale, CTensor* dshift, void* workspace,
                                       size_t workspace_bytes, void* stream);

/** y = (x - mean) * rstd * scale + shift over the last k axes, with
 *  rstd = 1 / sqrt(var + eps) (biased variance). scale, shift, mean and
 *  rstd may be NULL (mean and rstd are written when given). */
CT_API CTStatus ct_layer_norm_workspace_size(const CTLayerNormDesc* desc, const CTensor* x, const CTensor* scale,
                                             const CTensor* shift, const CTensor* y, const CTensor* mean,
                                             const CTensor* rstd, size_t* bytes);
CT_API CTStatus ct_layer_norm(const CTLayerNormDesc* desc, const CTensor* x, const CTensor* scale,
                              const CTensor* shift, CTensor* y, CTensor* mean, CTensor* rstd, void* workspace,
                              size_t workspace_bytes, void* stream);

/** Backward of layer_norm: dx, and dscale, dshift when not NULL. */
CT_API CTStatus ct_layer_norm_backward_workspace_size(const CTLayerNormDesc* desc, const CTensor* x,
                                                      const CTensor* dy, const CTensor* mean,
                                                      const CTensor* rstd, const CTensor* scale,
                                                      const CTensor* dx, const CTensor* dscale,
                                                      const CTensor* dshift, size_t* bytes);
CT_API CTStatus ct_layer_norm_backward(const CTLayerNormDesc* desc, const CTensor* x, const CTensor* dy,
                                       const CTensor* mean, const CTensor* rstd, const CTensor* scale,
                                       CTensor* dx, CTensor* dscale, CTensor* dshift, void* workspace,
                                       size_t workspace_bytes, void* stream);

/** out = softmax(q @ k^T * scale + mask) @ v (CTAttentionDesc). mask may be NULL. */
CT_API CTStatus ct_scaled_dot_product_attention_workspace_size(const CTAttentionDesc* desc, const CTensor* q,
                                                               const CTensor* k, const CTensor* v,
                                                               const CTensor* mask, const CTensor* out,
                                                               size_t* bytes);
CT_API CTStatus ct_scaled_dot_product_attention(const CTAttentionDesc* desc, const CTensor* q, const CTensor* k,
                                                const CTensor* v, const CTensor* mask, CTensor* out,
                                                void* workspace, size_t workspace_bytes, void* stream);

/* ---- any NN op by id -------------------------------------------------- */

/** Any NN op by id: the workspace query and the run of ct_<op>, with the
 *  op's tensor arguments in the order of ct_<op> (CTOpInfo.tensor_names;
 *  NULL for an absent optional one). Same statuses and plan cache as the
 *  per-op entry points. */
CT_API CTStatus ct_nn_workspace_size(int32_t op, const void* desc, const CTensor* const* tensors,
                                     int32_t num_tensors, size_t* bytes);
CT_API CTStatus ct_nn(int32_t op, const void* desc, const CTensor* const* tensors, int32_t num_tensors,
                      void* workspace, size_t workspace_bytes, void* stream);

/* ---- plans: the state of one call shape, owned by the caller ------------ */

/** A plan: an NN op for fixed descriptor, shapes, strides, dtypes, device
 *  and thread count, with its backend primitives created once. Executing
 *  it only swaps data pointers. A plan is immutable after creation:
 *  ct_plan_execute may run concurrently on several threads (each with its
 *  own workspace). */
typedef struct CTPlan CTPlan;

/** Create a plan for @p op (a CT_KIND_NN op id).
 *  @param[in] desc        the op's descriptor (CTConv2dDesc* for conv2d, ...)
 *  @param[in] tensors     the op's tensor arguments in the order of ct_<op>
 *                         (NULL for an absent optional one); data pointers
 *                         are not read
 *  @param[in] num_tensors the number of tensor arguments of ct_<op>
 *  @param[in] stream      NULL or a CTCpuStream*: its num_threads is fixed in the plan
 *  @param[out] plan       set on success; untouched on failure
 *  @return CT_OK or the status ct_<op> would return for these arguments. */
CT_API CTStatus ct_plan_create(int32_t op, const void* desc, const CTensor* const* tensors, int32_t num_tensors,
                               void* stream, CTPlan** plan);

/** Bytes of workspace every ct_plan_execute of @p plan needs. */
CT_API CTStatus ct_plan_workspace_size(const CTPlan* plan, size_t* bytes);

/** Run @p plan on new data: the tensors must match the plan's shapes,
 *  strides, dtypes and device (else CT_ERR_SHAPE_MISMATCH or the
 *  appropriate status, naming the argument). Thread-safe. */
CT_API CTStatus ct_plan_execute(const CTPlan* plan, const CTensor* const* tensors, int32_t num_tensors,
                                void* workspace, size_t workspace_bytes, void* stream);

/** Free a plan; NULL is a no-op. Must not race with an execution of it. */
CT_API void ct_plan_destroy(CTPlan* plan);

/** What the plan cache behind the direct ct_<op> calls has done. */
typedef struct {
  uint32_t struct_size;       /**< sizeof(CTPlanCacheInfo) */
  int32_t reserved;
  int64_t entries;            /**< plans in the cache now */
  int64_t capacity;           /**< most plans kept (least recently used go first) */
  int64_t hits;               /**< direct calls that found their plan */
  int64_t misses;             /**< direct calls that created one */
  int64_t primitives_created; /**< backend primitives created since load, by plans and the cache alike */
} CTPlanCacheInfo;

/** Fill @p info (counters are process-wide). */
CT_API CTStatus ct_plan_cache_info(CTPlanCacheInfo* info);

/** Keep at most @p capacity plans (default 1024); 0 disables caching (each
 *  direct call then creates its plan); lowering it evicts at once. */
CT_API CTStatus ct_plan_cache_set_capacity(int64_t capacity);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CTENSOR_CTENSOR_NN_H_ */
