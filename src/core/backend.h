/* backend.h — what core asks of a backend. Core validates once, then calls a
 * slot of the backend's table; kernels trust their arguments. A backend is a
 * folder that fills one CTBackend. Plain C types only, so that the same table
 * can later be filled by a plugin built with another compiler. */
#ifndef CTENSOR_SRC_CORE_BACKEND_H_
#define CTENSOR_SRC_CORE_BACKEND_H_

#include <ctensor/ctensor.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A validated elementwise call. All tensors have the same shape (out's);
 * in[0..num_inputs) are the inputs in the op's order; params holds the op's
 * scalar parameters. dtype indices are CT_DT_*. */
typedef struct {
  const char* fn; /* the entry point, for messages ("ct_unary") */
  int32_t op;
  int32_t num_inputs;
  const CTensor* in[3];
  const CTensor* out;
  int32_t in_dt[3];
  int32_t out_dt;
  double params[2];
  void* stream;
} CTElementwiseCall;

/* A validated reduction. axes are normalised: bit d of reduce_mask is set
 * when dim d of x is reduced. out_strides[d] is out's stride (elements) for
 * dim d of x, 0 on reduced dims, whatever keepdims was. */
typedef struct {
  const char* fn;
  int32_t op;
  const CTensor* x;
  const CTensor* out;
  int32_t x_dt;
  int32_t out_dt;
  uint32_t reduce_mask;
  int64_t count;                     /* elements reduced into each output */
  int64_t out_strides[CT_MAX_NDIM];
  double params[1];
  void* stream;
} CTReduceCall;

/* A validated along-axis op: out has x's shape; axis is in [0, x->ndim)
 * (a 0-d x comes as a 1-d view of one element). */
typedef struct {
  const char* fn;
  int32_t op;
  const CTensor* x;
  const CTensor* out;
  int32_t x_dt;
  int32_t out_dt;
  int32_t axis;
  void* stream;
} CTAlongAxisCall;

/* A validated NN call (category 3). Descriptors are copied at full size
 * with defaults applied (zero strides/dilations/groups made 1, pool stride 0
 * made the kernel). t[i] are the entry point's tensor arguments in order,
 * NULL for an absent optional one; their data pointers are not read when a
 * plan is created. */
typedef struct {
  const char* fn;
  int32_t op;
  int32_t dt;          /* CT_DT_* of the data tensors */
  int32_t num_threads; /* >= 1, fixed for the plan */
  int32_t num_tensors;
  const CTensor* t[8];
  CTMatmulDesc matmul;
  CTConv2dDesc conv;
  CTPool2dDesc pool;
  CTBatchNormDesc bn;
  CTLayerNormDesc ln;
} CTNNCall;

/* Stride of dim i in elements; NULL strides mean compact row-major. */
static inline int64_t ct_stride_of(const CTensor* t, int32_t i) {
  int64_t s = 1;
  int32_t j;
  if (t->strides) return t->strides[i];
  for (j = t->ndim - 1; j > i; --j) s *= t->shape[j];
  return s;
}

#define CT_BACKEND_ABI 1

/* One backend: a device type, its memory helpers and its kernels. */
typedef struct {
  uint32_t abi;            /* CT_BACKEND_ABI */
  int32_t device_type;     /* CT_CPU, ... */
  const char* name;        /* "cpu" */
  int32_t (*device_count)(void);
  CTStatus (*device_info)(int32_t id, CTDeviceInfo* info); /* info zeroed, struct_size full */
  CTStatus (*malloc_fn)(int32_t id, size_t bytes, void** ptr);
  void (*free_fn)(int32_t id, void* ptr);
  CTStatus (*synchronize)(int32_t id, void* stream);
  /* Per op: the dtypes (of the data inputs; for cast, of the source) that
   * have a kernel here, as a mask of CT_DT_* bits; 0 = no kernel. */
  uint32_t dtypes[CT_OP_END_];
  /* Runs any elementwise op whose dtype bit is set. */
  CTStatus (*elementwise)(const CTElementwiseCall* call);
  /* Binary ops: a CTElementwiseCall with 2 inputs whose shapes broadcast to out's. */
  CTStatus (*binary)(const CTElementwiseCall* call);
  CTStatus (*reduce)(const CTReduceCall* call);
  CTStatus (*along_axis)(const CTAlongAxisCall* call);
  /* NN ops. nn_supported says whether op runs for dtype dt here (setting the
   * message naming fn when not); nn_plan_create builds the backend state
   * for one call shape and says how much workspace an execution needs and
   * how many backend primitives it created; nn_plan_execute runs it on the
   * tensors' data (same shapes as at creation; trusted) and must be safe to
   * call concurrently; nn_plan_destroy frees it. */
  CTStatus (*nn_supported)(const char* fn, int32_t op, int32_t dt);
  CTStatus (*nn_plan_create)(const CTNNCall* call, void** impl, size_t* workspace_bytes, int64_t* primitives);
  CTStatus (*nn_plan_execute)(void* impl, const char* fn, const CTensor* const* t, void* workspace,
                              size_t workspace_bytes);
  void (*nn_plan_destroy)(void* impl);
} CTBackend;

#ifdef __cplusplus
}
#endif

#endif /* CTENSOR_SRC_CORE_BACKEND_H_ */
