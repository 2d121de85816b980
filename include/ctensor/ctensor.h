/*
 * ctensor.h — the C ABI of ctensor, an hourglass tensor-operator library.
 *
 * This header is the waist: C99, it includes only <stddef.h> and <stdint.h>,
 * and it is the only thing a framework has to link against. The caller owns
 * all memory, streams and threads; ctensor never allocates inside an op.
 *
 * Conventions, for every function declared here:
 *  - The return value is a CTStatus: CT_OK (0) or a negative error code.
 *  - Every entry point clears this thread's error message on entry; on
 *    failure it sets a message that names the function, the argument and the
 *    values (read it with ct_last_error()).
 *  - On failure, output tensors are untouched: all validation happens before
 *    the first write (NN ops out of memory inside oneDNN: ctensor_nn.h).
 *  - No C++ exception, abort() or exit() ever crosses this boundary.
 *  - All functions are thread-safe. Ops run synchronously on the CPU (the
 *    stream argument only selects how threads are used, see CTCpuStream).
 *
 * Example (C):
 * @code
 *   int64_t shape[1] = {4};
 *   float xs[4] = {-1, 0, 1, 2}, ys[4];
 *   CTensor x = {xs, {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, NULL, 0};
 *   CTensor y = {ys, {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, NULL, 0};
 *   if (ct_unary(CT_OP_EXP, &x, &y, NULL) != CT_OK)
 *     fprintf(stderr, "%s\n", ct_last_error());
 * @endcode
 */
#ifndef CTENSOR_CTENSOR_H_
#define CTENSOR_CTENSOR_H_

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ */
/* Version and export                                                        */
/* ------------------------------------------------------------------------ */

/** Version of this header. The ABI major is CT_VERSION_MAJOR: the shared
 *  library's SONAME is libctensor.so.<CT_VERSION_MAJOR>. */
#define CT_VERSION_MAJOR 0
#define CT_VERSION_MINOR 1
#define CT_VERSION_PATCH 0
/** One number, MAJOR * 10000 + MINOR * 100 + PATCH, comparable with ct_version(). */
#define CT_VERSION \
  (CT_VERSION_MAJOR * 10000 + CT_VERSION_MINOR * 100 + CT_VERSION_PATCH)

/** Largest ndim any ctensor function accepts. */
#define CT_MAX_NDIM 16

#if defined(_WIN32)
#  if defined(CT_BUILDING_LIBRARY)
#    define CT_API __declspec(dllexport)
#  else
#    define CT_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define CT_API __attribute__((visibility("default")))
#else
#  define CT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* The tensor: exactly DLPack's DLTensor                                     */
/* ------------------------------------------------------------------------ */

/** Device types, with DLPack's DLDeviceType values. */
enum {
  CT_CPU = 1,           /**< host memory (kDLCPU) */
  CT_CUDA = 2,          /**< CUDA device memory (kDLCUDA) */
  CT_CUDA_HOST = 3,     /**< pinned host memory (kDLCUDAHost) */
  CT_OPENCL = 4,        /**< OpenCL buffer; data is a cl_mem (kDLOpenCL) */
  CT_VULKAN = 7,        /**< kDLVulkan */
  CT_METAL = 8,         /**< kDLMetal */
  CT_VPI = 9,           /**< kDLVPI */
  CT_ROCM = 10,         /**< kDLROCM */
  CT_ROCM_HOST = 11,    /**< kDLROCMHost */
  CT_EXT_DEV = 12,      /**< reserved for extension devices (kDLExtDev) */
  CT_CUDA_MANAGED = 13, /**< kDLCUDAManaged */
  CT_ONEAPI = 14,       /**< kDLOneAPI */
  CT_WEBGPU = 15,       /**< kDLWebGPU */
  CT_HEXAGON = 16       /**< kDLHexagon */
};

/** Data type codes, with DLPack's DLDataTypeCode values. */
enum {
  CT_INT = 0,     /**< signed integer (kDLInt) */
  CT_UINT = 1,    /**< unsigned integer (kDLUInt) */
  CT_FLOAT = 2,   /**< IEEE float (kDLFloat) */
  CT_OPAQUE_HANDLE = 3, /**< kDLOpaqueHandle: never accepted by ops */
  CT_BFLOAT = 4,  /**< bfloat16 (kDLBfloat) */
  CT_COMPLEX = 5, /**< kDLComplex: not yet supported by ops */
  CT_BOOL = 6,    /**< bool stored in 8 bits, 0 or 1 (kDLBool) */
  /* 8-bit floats, DLPack 1.3's codes (bits 8, lanes 1). "fn": finite, no
   * infinity, NaN is S.1111.111; "fnuz": finite, NaN is 0x80 and there is
   * no -0. ctensor runs the four marked ones; the others are named only. */
  CT_FLOAT8_E3M4 = 7,         /**< kDLFloat8_e3m4 (not supported) */
  CT_FLOAT8_E4M3 = 8,         /**< kDLFloat8_e4m3 (not supported) */
  CT_FLOAT8_E4M3B11FNUZ = 9,  /**< kDLFloat8_e4m3b11fnuz (not supported) */
  CT_FLOAT8_E4M3FN = 10,      /**< kDLFloat8_e4m3fn: bias 7, max 448, no inf (OCP FP8 E4M3) */
  CT_FLOAT8_E4M3FNUZ = 11,    /**< kDLFloat8_e4m3fnuz: bias 8, max 240, NaN 0x80 */
  CT_FLOAT8_E5M2 = 12,        /**< kDLFloat8_e5m2: IEEE-like, bias 15, max 57344, +-inf (OCP FP8 E5M2) */
  CT_FLOAT8_E5M2FNUZ = 13,    /**< kDLFloat8_e5m2fnuz: bias 16, max 57344, NaN 0x80 */
  CT_FLOAT8_E8M0FNU = 14      /**< kDLFloat8_e8m0fnu (not supported) */
};

/** A device: layout of DLPack's DLDevice. */
typedef struct {
  int32_t device_type; /**< one of CT_CPU, CT_CUDA, ... */
  int32_t device_id;   /**< index among devices of that type; 0 for the CPU */
} CTDevice;

/** An element type: layout of DLPack's DLDataType. ctensor supports
 *  lanes == 1 and: bool (CT_BOOL, 8), int8/16/32/64 (CT_INT), uint8/16/32/64
 *  (CT_UINT), float16/32/64 (CT_FLOAT), bfloat16 (CT_BFLOAT, 16) and the
 *  8-bit floats float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz
 *  (CT_FLOAT8_*, 8); CT_DTYPE_TABLE lists them. */
typedef struct {
  uint8_t code;   /**< CT_INT, CT_UINT, CT_FLOAT, CT_BFLOAT, CT_BOOL, ... */
  uint8_t bits;   /**< bits per lane: 8, 16, 32, 64 */
  uint16_t lanes; /**< vector lanes; must be 1 */
} CTDataType;

/** A non-owning view of a tensor: layout of DLPack's DLTensor, so a
 *  framework holding a DLTensor* passes it with a cast. */
typedef struct {
  void* data;           /**< base pointer (for OpenCL, a cl_mem); may be NULL only when the tensor has no elements; on the CPU data + byte_offset need not be a multiple of the element size (unaligned data, as a NumPy array at an odd address, is accepted by every op) */
  CTDevice device;      /**< where data lives */
  int32_t ndim;         /**< 0 .. CT_MAX_NDIM; 0 is a scalar with one element */
  CTDataType dtype;     /**< element type */
  int64_t* shape;       /**< ndim extents, each >= 0; may be NULL when ndim == 0 */
  int64_t* strides;     /**< ndim strides in elements, or NULL for compact row-major; inputs may have 0 or negative strides */
  uint64_t byte_offset; /**< bytes added to data before indexing (honoured everywhere) */
} CTensor;

/* ------------------------------------------------------------------------ */
/* Status and errors                                                         */
/* ------------------------------------------------------------------------ */

/** 0 = success, negative = failure. New codes are only ever added at the end. */
typedef int32_t CTStatus;
enum {
  CT_OK = 0,
  CT_ERR_INVALID_ARGUMENT = -1,    /**< null pointer, bad ndim/extent/stride, bad parameter, overlap */
  CT_ERR_NEED_CONTIGUOUS = -2,     /**< this op needs a compact layout for that argument */
  CT_ERR_UNSUPPORTED = -3,         /**< op x dtype x device has no implementation */
  CT_ERR_SHAPE_MISMATCH = -4,      /**< shapes do not agree */
  CT_ERR_DTYPE_MISMATCH = -5,      /**< dtypes do not agree */
  CT_ERR_DEVICE_MISMATCH = -6,     /**< operands live on different devices */
  CT_ERR_WORKSPACE_TOO_SMALL = -7, /**< caller's workspace is smaller than the query said */
  CT_ERR_OUT_OF_MEMORY = -8,       /**< an allocation helper could not allocate */
  CT_ERR_BACKEND = -9,             /**< the backend library (driver, BLAS, ...) failed */
  CT_ERR_ABI_VERSION = -10,        /**< incompatible ABI versions (plugins) */
  CT_ERR_NOT_FOUND = -11,          /**< no such op, device or library */
  CT_ERR_INTERNAL = -12            /**< a bug in ctensor: please report the message */
};

/** This thread's message for the most recent failed call, or "" if the most
 *  recent call succeeded. The string is owned by ctensor and stays valid until
 *  the next ctensor call on this thread: copy it to keep it. Never NULL. */
CT_API const char* ct_last_error(void);

/** A constant, static name for a status ("CT_ERR_SHAPE_MISMATCH"); never NULL. */
CT_API const char* ct_status_string(CTStatus status);

/** The runtime library's version as CT_VERSION computes it. Compare with
 *  CT_VERSION to detect a header/library mismatch. */
CT_API uint32_t ct_version(void);

/** The runtime library's version as "MAJOR.MINOR.PATCH"; static, never NULL. */
CT_API const char* ct_version_string(void);

/* ------------------------------------------------------------------------ */
/* Devices, streams and memory helpers                                       */
/* ------------------------------------------------------------------------ */

/** Description of one device, filled by ct_device_info(). Set struct_size to
 *  sizeof(CTDeviceInfo) before the call; the library fills at most that many
 *  bytes, so older callers keep working when the struct grows. */
typedef struct {
  uint32_t struct_size;       /**< in: sizeof(CTDeviceInfo) as the caller knows it */
  CTDevice device;            /**< out: device type and id */
  char name[128];             /**< out: human-readable name, NUL-terminated */
  char backend[32];           /**< out: "cpu", "cuda", ... */
  int32_t compute_units;      /**< out: cores or multiprocessors */
  int32_t default_threads;    /**< out: threads an op uses by default (CPU) */
  uint64_t memory_bytes;      /**< out: device memory, 0 if unknown */
} CTDeviceInfo;

/** Number of devices ctensor can run ops on (all backends). Never fails. */
CT_API int32_t ct_device_count(void);

/** Describe device number @p index (0 <= index < ct_device_count()).
 *  @param[in]     index device number
 *  @param[in,out] info  struct_size set by the caller; filled on success
 *  @return CT_OK, CT_ERR_INVALID_ARGUMENT (NULL info, bad struct_size),
 *          CT_ERR_NOT_FOUND (index out of range). */
CT_API CTStatus ct_device_info(int32_t index, CTDeviceInfo* info);

/** The body a parallel_for runs: process items [begin, end). */
typedef void (*CTParallelBody)(void* ctx, int64_t begin, int64_t end);

/** How a CPU op uses threads. Pass a CTCpuStream* as the `stream` argument of
 *  any op on a CPU tensor; NULL means "the library's default".
 *
 *  With parallel_for set, ctensor never starts threads of its own: it calls
 *  parallel_for(user, n, grain, body, ctx) and the framework's pool must call
 *  body(ctx, b, e) on disjoint ranges covering [0, n) exactly once (in any
 *  order, on any threads, ranges of at least `grain` items except the last)
 *  and return when all are done. This is how ctensor avoids fighting a
 *  framework's own thread pool. Work too small to split (fewer than two
 *  grains) runs on the calling thread without calling parallel_for. */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTCpuStream) */
  int32_t num_threads;  /**< 0 = library default, 1 = run on the calling thread, n = at most n threads (ignored when parallel_for is set) */
  void (*parallel_for)(void* user, int64_t n, int64_t grain, CTParallelBody body, void* ctx);
  void* user;           /**< passed back to parallel_for */
} CTCpuStream;

/** Allocate @p bytes on @p device (64-byte aligned on the CPU; from 2 MiB
 *  on, 2 MiB-aligned and advised as transparent huge pages on Linux, which
 *  large streaming ops read faster). The library itself never calls this
 *  inside an op; it exists for callers and tests.
 *  @param[out] ptr set on success; untouched on failure.
 *  @return CT_OK, CT_ERR_INVALID_ARGUMENT (NULL ptr), CT_ERR_UNSUPPORTED (no
 *          backend for device.device_type, or one that allocates nothing),
 *          CT_ERR_NOT_FOUND (no device device.device_id of that type),
 *          CT_ERR_OUT_OF_MEMORY. */
CT_API CTStatus ct_malloc(CTDevice device, size_t bytes, void** ptr);

/** Free memory from ct_malloc(). NULL is accepted and ignored. */
CT_API void ct_free(CTDevice device, void* ptr);

/** Copy @p src into @p dst: same shape and dtype, any strides on both sides
 *  (dst must not overlap src except exactly, nor overlap itself: overlap is
 *  decided exactly, within a bound, as for the elementwise ops below), between
 *  any two devices: within a device and between a device and the host
 *  through the device's own copy (asynchronous on @p stream, the stream of
 *  the device that is not the CPU: keep host memory alive until it is
 *  synchronised); between two devices of one backend through its copy;
 *  between devices of two backends staged through host memory, synchronously.
 *  @return CT_OK or a validation error; dst untouched on failure. */
CT_API CTStatus ct_copy(const CTensor* src, CTensor* dst, void* stream);

/** An allocator for a device type's temporary memory: what a backend needs
 *  beyond the caller's workspace (GPU reduction partials, library scratch)
 *  comes from here, so an op never allocates behind a framework's back.
 *  Memory is stream-ordered: freed on `stream` after the work that uses it. */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTAllocator) */
  int32_t reserved;     /**< 0 */
  CTStatus (*alloc)(void* user, CTDevice device, size_t bytes, void* stream, void** ptr);
  void (*free)(void* user, CTDevice device, void* ptr, void* stream);
  void* user;           /**< passed back to alloc and free */
} CTAllocator;

/** Install @p allocator for @p device_type's temporary memory (copied);
 *  NULL restores the backend's default (CUDA: its stream-ordered pool).
 *  @return CT_OK, CT_ERR_INVALID_ARGUMENT (struct_size, NULL slots). */
CT_API CTStatus ct_set_allocator(int32_t device_type, const CTAllocator* allocator);

/** Wait until all work queued on @p stream of @p device has finished.
 *  CPU ops are synchronous, so on the CPU this returns CT_OK at once. */
CT_API CTStatus ct_synchronize(CTDevice device, void* stream);

/* ------------------------------------------------------------------------ */
/* The op registry                                                           */
/* ------------------------------------------------------------------------ */

/** Operator categories (one C signature per kind). */
enum {
  CT_CATEGORY_ELEMENTWISE = 1, /**< elementwise maps: ct_unary, ct_unary_param, ct_ternary, ct_cast */
  CT_CATEGORY_BROADCAST_REDUCE = 2, /**< broadcasting binary ops, reductions, along-axis ops: ct_binary, ct_reduce, ct_along_axis */
  CT_CATEGORY_NN = 3           /**< NN ops with a workspace query: ct_matmul, ct_conv2d, ... and plans */
};

/** Kinds of op, each with one entry point. */
enum {
  CT_KIND_UNARY = 1,       /**< ct_unary(op, x, out, stream) */
  CT_KIND_UNARY_PARAM = 2, /**< ct_unary_param(op, x, params, num_params, out, stream) */
  CT_KIND_TERNARY = 3,     /**< ct_ternary(op, a, b, c, out, stream) */
  CT_KIND_CAST = 4,        /**< ct_cast(x, out, stream) */
  CT_KIND_BINARY = 5,      /**< ct_binary(op, a, b, out, stream), NumPy broadcasting */
  CT_KIND_REDUCE = 6,      /**< ct_reduce(op, x, axes, num_axes, keepdims, params, num_params, out, stream) */
  CT_KIND_ALONG_AXIS = 7,  /**< ct_along_axis(op, x, axis, out, stream): same shape, each line along axis */
  CT_KIND_NN = 8,          /**< its own ct_<op>(desc, tensors..., workspace, workspace_bytes, stream) and ct_plan_* */
  CT_KIND_INDEX = 9        /**< ct_index(op, x, axis, index, src, params, num_params, out, stream): by an integer index along one axis */
};

/** What dtype an op's output has. */
enum {
  CT_OUTPUT_SAME = 0, /**< the dtype of the (data) inputs */
  CT_OUTPUT_BOOL = 1, /**< bool (predicates) */
  CT_OUTPUT_ANY = 2,  /**< chosen by the caller (cast) */
  CT_OUTPUT_INT64 = 3, /**< int64 (argmax, argmin) */
  CT_OUTPUT_ACCUM = 4, /**< float inputs: the same dtype; unsigned inputs: uint64; signed and bool inputs: int64 (sum, prod, cumsum, cumprod; NumPy's rule) */
  CT_OUTPUT_FLOAT = 5, /**< float inputs: the same dtype; integer and bool inputs: float64 (div, mean, var, ...) */
  CT_OUTPUT_NN = 6     /**< NN ops: data outputs have the data dtype; statistics, scale and shift are float32; indices int64 */
};

/* ---- the op description: one row per op ---------------------------------
 *
 * Every fact about an op is one row below; the enum, the registry
 * (ct_op_info), the core's validation and shape rules, the C++ wrapper,
 * the Python module and the tool all derive from it. Rows are grouped by
 * category; ids are explicit, dense (0 .. CT_OP_END_-1, each once) and
 * append-only: a new op takes the next free id and its row goes at the end
 * of its category's list, so ids need not follow the table's order. An op's
 * id never changes.
 *
 * R(X, ID, id, name, kind, num_params, "param,names", "tensors",
 *   dtypes, output_dtype, inplace, shape_rule, desc_type, "summary")
 *
 *  - tensors: the op's tensor arguments in order, inputs then '|' then
 *    outputs; "name?" may be NULL; ":role" gives a CTTensorRole other than
 *    data (c cond, s statistics, p scale/shift, b bias, i indices, a any);
 *  - dtypes: a CT_DTS_* mask of the dtypes the op is defined for (NumPy's
 *    rule; a device may run fewer); output_dtype: CT_OUTPUT_*;
 *  - inplace: 1 if the output may be exactly an input;
 *  - shape_rule: CTShapeRule, how outputs follow from inputs;
 *  - desc_type: CTDescType, the descriptor of an NN op.
 *
 * To generate your own adapter over every op, expand CT_OP_TABLE(X) with
 * X taking those 13 columns (without R). The narrower lists
 * CT_ELEMENTWISE_OPS(X), CT_BROADCAST_REDUCE_OPS(X) and CT_NN_OPS(X) give
 * X(ID, name, kind, num_params, summary) per op, as in version 0.1. */

/** Dtype masks of the op description (bit i is CTDtypeIndex i). */
#define CT_DTS_BOOL 0x001u
#define CT_DTS_INT 0x1c3eu     /**< int8/16/32/64, uint8/16/32/64 */
#define CT_DTS_UINT 0x1c20u    /**< uint8/16/32/64 (a part of CT_DTS_INT: what CT_OUTPUT_ACCUM makes uint64) */
#define CT_DTS_FLOAT8 0x1e000u /**< float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz */
#define CT_DTS_FLOAT 0x1e3c0u  /**< float16, bfloat16, float32, float64 and the float8 dtypes */
#define CT_DTS_NN 0x1c0u       /**< float16, bfloat16, float32 */
#define CT_DTS_F32_F64 0x300u  /**< float32, float64 */
#define CT_DTS_INTEGRAL (CT_DTS_BOOL | CT_DTS_INT)
#define CT_DTS_NUMERIC (CT_DTS_INT | CT_DTS_FLOAT)
#define CT_DTS_ALL (CT_DTS_BOOL | CT_DTS_INT | CT_DTS_FLOAT)

/** How an op's outputs follow from its inputs (the output-shape rule). */
typedef enum {
  CT_SHAPE_SAME = 0,                   /**< every tensor has the first input's shape */
  CT_SHAPE_BROADCAST = 1,              /**< NumPy broadcasting of the inputs */
  CT_SHAPE_REDUCE = 2,                 /**< x without (or with 1 for) the reduced axes */
  CT_SHAPE_MATMUL = 3,                 /**< (..., M, K) @ (..., K, N) -> (broadcast batch..., M, N) */
  CT_SHAPE_CONV2D = 4,                 /**< (N, C, H, W) * (K, C/g, R, S) -> (N, K, P, Q) */
  CT_SHAPE_CONV2D_BACKWARD_DATA = 5,   /**< dy (N, K, P, Q), w -> dx (N, C, H, W) */
  CT_SHAPE_CONV2D_BACKWARD_WEIGHT = 6, /**< x, dy -> dw (K, C/g, R, S), dbias (K,) */
  CT_SHAPE_POOL2D = 7,                 /**< x (N, C, H, W) -> y, indices (N, C, P, Q) */
  CT_SHAPE_POOL2D_BACKWARD = 8,        /**< dy (N, C, P, Q) -> dx (N, C, H, W) */
  CT_SHAPE_NORM = 9,                   /**< data like x; statistics and scale/shift by the norm */
  CT_SHAPE_TAKE = 10,                  /**< x.shape[:axis] + index.shape + x.shape[axis+1:] (NumPy's take) */
  CT_SHAPE_INDEX = 11,                 /**< the index's shape (gather) */
  CT_SHAPE_ATTENTION = 12              /**< q (..., L, E), k (..., S, E), v (..., S, Ev) -> (broadcast batch..., L, Ev) */
} CTShapeRule;

#define CT_ELEMENTWISE_OP_ROWS(R, X) \
  R(X, NEG, 0, neg, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "-x") \
  R(X, ABS, 1, abs, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "|x|") \
  R(X, SIGN, 2, sign, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "-1, 0 or 1 (NaN stays NaN)") \
  R(X, EXP, 3, exp, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "e^x") \
  R(X, EXPM1, 4, expm1, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "e^x - 1") \
  R(X, EXP2, 5, exp2, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "2^x") \
  R(X, LOG, 6, log, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "natural logarithm") \
  R(X, LOG1P, 7, log1p, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "log(1 + x)") \
  R(X, LOG2, 8, log2, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "base-2 logarithm") \
  R(X, SQRT, 9, sqrt, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "square root") \
  R(X, RSQRT, 10, rsqrt, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "1 / sqrt(x)") \
  R(X, RECIPROCAL, 11, reciprocal, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "1 / x") \
  R(X, SQUARE, 12, square, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x * x") \
  R(X, SIN, 13, sin, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "sine") \
  R(X, COS, 14, cos, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "cosine") \
  R(X, TAN, 15, tan, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "tangent") \
  R(X, TANH, 16, tanh, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "hyperbolic tangent") \
  R(X, SIGMOID, 17, sigmoid, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "1 / (1 + e^-x)") \
  R(X, RELU, 18, relu, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "max(x, 0); NaN stays NaN") \
  R(X, GELU, 19, gelu, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x * Phi(x), erf form") \
  R(X, GELU_TANH, 20, gelu_tanh, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "gelu, tanh approximation") \
  R(X, SILU, 21, silu, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x * sigmoid(x)") \
  R(X, SOFTPLUS, 22, softplus, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "log(1 + e^x)") \
  R(X, ERF, 23, erf, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "error function") \
  R(X, FLOOR, 24, floor, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "round toward -inf") \
  R(X, CEIL, 25, ceil, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "round toward +inf") \
  R(X, ROUND, 26, round, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "round half to even") \
  R(X, TRUNC, 27, trunc, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "round toward zero") \
  R(X, LOGICAL_NOT, 28, logical_not, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x == 0, as bool") \
  R(X, BITWISE_NOT, 29, bitwise_not, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_INTEGRAL, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "~x (bool: logical not)") \
  R(X, ISNAN, 30, isnan, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x is NaN, as bool") \
  R(X, ISINF, 31, isinf, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x is +-inf, as bool") \
  R(X, ISFINITE, 32, isfinite, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x is neither inf nor NaN, as bool") \
  R(X, LEAKY_RELU, 33, leaky_relu, CT_KIND_UNARY_PARAM, 1, "negative_slope=0.01", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x >= 0 ? x : negative_slope * x") \
  R(X, ELU, 34, elu, CT_KIND_UNARY_PARAM, 1, "alpha=1", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x > 0 ? x : alpha * (e^x - 1)") \
  R(X, CLAMP, 35, clamp, CT_KIND_UNARY_PARAM, 2, "lo,hi", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "min(max(x, lo), hi)") \
  R(X, POW_SCALAR, 36, pow_scalar, CT_KIND_UNARY_PARAM, 1, "p", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x ^ p") \
  R(X, ADD_SCALAR, 37, add_scalar, CT_KIND_UNARY_PARAM, 1, "s", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x + s") \
  R(X, MUL_SCALAR, 38, mul_scalar, CT_KIND_UNARY_PARAM, 1, "s", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x * s") \
  R(X, WHERE, 39, where, CT_KIND_TERNARY, 0, "", "cond:c,a,b|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "cond ? a : b (cond is bool)") \
  R(X, FMA, 40, fma, CT_KIND_TERNARY, 0, "", "a,b,c|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a * b + c, one rounding for floats") \
  R(X, LERP, 41, lerp, CT_KIND_TERNARY, 0, "", "a,b,c|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a + w * (b - a)") \
  R(X, CAST, 42, cast, CT_KIND_CAST, 0, "", "x|out:a", CT_DTS_ALL, CT_OUTPUT_ANY, 0, CT_SHAPE_SAME, CT_DESC_NONE, "convert to the output's dtype") \
  R(X, HARDSWISH, 101, hardswish, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x * relu6(x + 3) / 6 (PyTorch's hardswish)") \
  R(X, LOG10, 102, log10, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "base-10 logarithm") \
  R(X, SINH, 103, sinh, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "hyperbolic sine") \
  R(X, COSH, 104, cosh, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "hyperbolic cosine") \
  R(X, ASIN, 105, asin, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "arcsine, NaN outside [-1, 1]") \
  R(X, ACOS, 106, acos, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "arccosine, NaN outside [-1, 1]") \
  R(X, ATAN, 107, atan, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "arctangent") \
  R(X, ASINH, 108, asinh, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "inverse hyperbolic sine") \
  R(X, ACOSH, 109, acosh, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "inverse hyperbolic cosine, NaN below 1") \
  R(X, ATANH, 110, atanh, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "inverse hyperbolic tangent, +-inf at +-1, NaN outside") \
  R(X, ERFC, 111, erfc, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "1 - erf(x), without the cancellation") \
  R(X, LOGIT, 112, logit, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "log(x / (1 - x)) (PyTorch's logit without eps)") \
  R(X, FRAC, 113, frac, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x - trunc(x), the sign of x (PyTorch's frac)") \
  R(X, HARDSIGMOID, 114, hardsigmoid, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "relu6(x + 3) / 6 (PyTorch's hardsigmoid)") \
  R(X, MISH, 115, mish, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x * tanh(softplus(x))") \
  R(X, SELU, 116, selu, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "scale * (x > 0 ? x : alpha * (e^x - 1)), PyTorch's constants") \
  R(X, SOFTSIGN, 117, softsign, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x / (1 + |x|)") \
  R(X, LOGSIGMOID, 118, logsigmoid, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "log(sigmoid(x)) = -softplus(-x)") \
  R(X, SIGNBIT, 119, signbit, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the sign bit is set (-0.0 and negative NaN included), as bool") \
  R(X, CELU, 130, celu, CT_KIND_UNARY_PARAM, 1, "alpha=1", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x >= 0 ? x : alpha * (e^(x / alpha) - 1)") \
  R(X, HARDSHRINK, 131, hardshrink, CT_KIND_UNARY_PARAM, 1, "lambd=0.5", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "-lambd <= x <= lambd ? 0 : x") \
  R(X, SOFTSHRINK, 132, softshrink, CT_KIND_UNARY_PARAM, 1, "lambd=0.5", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x > lambd ? x - lambd : x < -lambd ? x + lambd : 0 * x") \
  R(X, THRESHOLD, 133, threshold, CT_KIND_UNARY_PARAM, 2, "threshold,value", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x <= threshold ? value : x") \
  R(X, LGAMMA, 134, lgamma, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "log |Gamma(x)|") \
  R(X, DIGAMMA, 135, digamma, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "Gamma'(x) / Gamma(x)") \
  R(X, ERFINV, 136, erfinv, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the inverse of erf on (-1, 1)") \
  R(X, HARDTANH, 144, hardtanh, CT_KIND_UNARY_PARAM, 2, "min_val=-1,max_val=1", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "min(max(x, min_val), max_val); NaN stays NaN") \
  R(X, RELU6, 145, relu6, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "min(max(x, 0), 6); NaN stays NaN") \
  R(X, TANHSHRINK, 146, tanhshrink, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x - tanh(x)") \
  R(X, ISPOSINF, 147, isposinf, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x is +inf, as bool") \
  R(X, ISNEGINF, 148, isneginf, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x is -inf, as bool") \
  R(X, DEG2RAD, 149, deg2rad, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x * (pi / 180)") \
  R(X, RAD2DEG, 150, rad2deg, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x * (180 / pi)") \
  R(X, SINC, 151, sinc, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "sin(pi x) / (pi x); 1 at 0") \
  R(X, NDTR, 152, ndtr, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the standard normal CDF, erfc(-x / sqrt(2)) / 2") \
  R(X, NDTRI, 153, ndtri, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the inverse of ndtr: -inf at 0, +inf at 1, NaN outside [0, 1]") \
  R(X, ENTR, 154, entr, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "-x log(x) for x > 0; 0 at 0; -inf below 0") \
  R(X, ADDCMUL, 156, addcmul, CT_KIND_TERNARY, 1, "value=1", "input,tensor1,tensor2|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "input + value * tensor1 * tensor2") \
  R(X, ADDCDIV, 157, addcdiv, CT_KIND_TERNARY, 1, "value=1", "input,tensor1,tensor2|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "input + value * tensor1 / tensor2") \
  R(X, CLAMP_TENSOR, 158, clamp_tensor, CT_KIND_TERNARY, 0, "", "x,min,max|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "min(max(x, min), max) with tensor bounds; NaN in any operand gives NaN") \
  R(X, ROUND_DECIMALS, 159, round_decimals, CT_KIND_UNARY_PARAM, 1, "decimals=0", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x rounded to decimals decimal places, half to even (NumPy's round(x, decimals), PyTorch's round(decimals=)); decimals an integer") \
  R(X, POSITIVE, 160, positive, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "+x (a copy)") \
  R(X, SOFTPLUS_BETA, 161, softplus_beta, CT_KIND_UNARY_PARAM, 2, "beta=1,threshold=20", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "PyTorch's softplus: x where beta * x > threshold, else log(1 + e^(beta x)) / beta") \
  R(X, SPHERICAL_BESSEL_J0, 162, spherical_bessel_j0, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "sin(x) / x, 1 at 0, 0 at +-inf") \
  R(X, ERFCX, 163, erfcx, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the scaled complementary error function e^(x^2) erfc(x)") \
  R(X, LOG_NDTR, 164, log_ndtr, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "log of the standard normal CDF, accurate in both tails") \
  R(X, BESSEL_J0, 178, bessel_j0, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the Bessel function of the first kind of order 0 (even)") \
  R(X, BESSEL_J1, 179, bessel_j1, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the Bessel function of the first kind of order 1 (odd)") \
  R(X, BESSEL_Y0, 180, bessel_y0, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the Bessel function of the second kind of order 0; -inf at 0, NaN below") \
  R(X, BESSEL_Y1, 181, bessel_y1, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the Bessel function of the second kind of order 1; -inf at 0, NaN below") \
  R(X, MODIFIED_BESSEL_I0, 182, modified_bessel_i0, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the modified Bessel function I0 (even; torch.i0)") \
  R(X, MODIFIED_BESSEL_I1, 183, modified_bessel_i1, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the modified Bessel function I1 (odd)") \
  R(X, MODIFIED_BESSEL_K0, 184, modified_bessel_k0, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the modified Bessel function K0; +inf at 0, NaN below") \
  R(X, MODIFIED_BESSEL_K1, 185, modified_bessel_k1, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the modified Bessel function K1; +inf at 0, NaN below") \
  R(X, I0E, 186, i0e, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "e^-|x| I0(x), without overflow") \
  R(X, I1E, 187, i1e, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "e^-|x| I1(x), without overflow") \
  R(X, SCALED_MODIFIED_BESSEL_K0, 188, scaled_modified_bessel_k0, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "e^x K0(x), without underflow") \
  R(X, SCALED_MODIFIED_BESSEL_K1, 189, scaled_modified_bessel_k1, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "e^x K1(x), without underflow") \
  R(X, POLYGAMMA, 190, polygamma, CT_KIND_UNARY_PARAM, 1, "n", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the n-th derivative of digamma, n a non-negative integer: (-1)^(n+1) n! zeta(n + 1, x) for n >= 1") \
  R(X, MVLGAMMA, 191, mvlgamma, CT_KIND_UNARY_PARAM, 1, "p", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the multivariate log-gamma of dimension p (an integer >= 1): sum_j<p lgamma(x - j/2) + p (p - 1) / 4 log(pi)") \
  R(X, AIRY_AI, 208, airy_ai, CT_KIND_UNARY, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "the Airy function Ai (decays like e^(-2/3 x^3/2) above 0, oscillates below); 0 at +-inf") \

#define CT_BROADCAST_REDUCE_OP_ROWS(R, X) \
  R(X, ADD, 43, add, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a + b (bool: or)") \
  R(X, SUB, 44, sub, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a - b") \
  R(X, MUL, 45, mul, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a * b (bool: and)") \
  R(X, DIV, 46, div, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_FLOAT, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a / b, true division (integers give float64)") \
  R(X, FLOOR_DIV, 47, floor_div, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "floor(a / b); integer x // 0 = 0") \
  R(X, MOD, 48, mod, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a - floor(a / b) * b, sign of b (Python); integer x % 0 = 0") \
  R(X, POW, 49, pow, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a ^ b") \
  R(X, MAXIMUM, 50, maximum, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "larger of a, b; NaN if either is NaN") \
  R(X, MINIMUM, 51, minimum, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "smaller of a, b; NaN if either is NaN") \
  R(X, FMAX, 52, fmax, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "larger of a, b; ignores one NaN") \
  R(X, FMIN, 53, fmin, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "smaller of a, b; ignores one NaN") \
  R(X, ATAN2, 54, atan2, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "angle of (b, a), as atan2(a, b)") \
  R(X, HYPOT, 55, hypot, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "sqrt(a^2 + b^2) without overflow") \
  R(X, COPYSIGN, 56, copysign, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "|a| with the sign of b") \
  R(X, BITWISE_AND, 57, bitwise_and, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_INTEGRAL, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a & b") \
  R(X, BITWISE_OR, 58, bitwise_or, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_INTEGRAL, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a | b") \
  R(X, BITWISE_XOR, 59, bitwise_xor, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_INTEGRAL, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a ^ b (bitwise)") \
  R(X, LEFT_SHIFT, 60, left_shift, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_INT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a << b; 0 when b is negative or >= bits") \
  R(X, RIGHT_SHIFT, 61, right_shift, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_INT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a >> b, arithmetic; sign fill when b is negative or >= bits") \
  R(X, LOGICAL_AND, 62, logical_and, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a != 0 and b != 0, as bool") \
  R(X, LOGICAL_OR, 63, logical_or, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a != 0 or b != 0, as bool") \
  R(X, LOGICAL_XOR, 64, logical_xor, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "(a != 0) != (b != 0), as bool") \
  R(X, EQUAL, 65, equal, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a == b, as bool") \
  R(X, NOT_EQUAL, 66, not_equal, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a != b, as bool") \
  R(X, LESS, 67, less, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a < b, as bool") \
  R(X, LESS_EQUAL, 68, less_equal, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a <= b, as bool") \
  R(X, GREATER, 69, greater, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a > b, as bool") \
  R(X, GREATER_EQUAL, 70, greater_equal, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a >= b, as bool") \
  R(X, SUM, 71, sum, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_ACCUM, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "sum; of nothing is 0") \
  R(X, MEAN, 72, mean, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_FLOAT, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "sum / count; of nothing is NaN") \
  R(X, PROD, 73, prod, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_ACCUM, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "product; of nothing is 1") \
  R(X, MAX, 74, max, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_SAME, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "largest; NaN if any is NaN; of nothing is an error") \
  R(X, MIN, 75, min, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_SAME, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "smallest; NaN if any is NaN; of nothing is an error") \
  R(X, ARGMAX, 76, argmax, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_INT64, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "int64 index of the first largest (first NaN wins)") \
  R(X, ARGMIN, 77, argmin, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_INT64, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "int64 index of the first smallest (first NaN wins)") \
  R(X, ANY, 78, any, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "some x != 0, as bool; of nothing is false") \
  R(X, ALL, 79, all, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_BOOL, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "every x != 0, as bool; of nothing is true") \
  R(X, NORM2, 80, norm2, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_FLOAT, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "sqrt(sum(x^2))") \
  R(X, LOGSUMEXP, 81, logsumexp, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "log(sum(e^x)) without overflow; of nothing is -inf") \
  R(X, VAR, 82, var, CT_KIND_REDUCE, 1, "correction", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_FLOAT, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "sum((x - mean)^2) / max(count - correction, 0)") \
  R(X, STD, 83, std, CT_KIND_REDUCE, 1, "correction", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_FLOAT, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "sqrt(var)") \
  R(X, SOFTMAX, 84, softmax, CT_KIND_ALONG_AXIS, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "e^(x - max) / sum(e^(x - max)) along axis") \
  R(X, LOG_SOFTMAX, 85, log_softmax, CT_KIND_ALONG_AXIS, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "x - max - log(sum(e^(x - max))) along axis") \
  R(X, CUMSUM, 86, cumsum, CT_KIND_ALONG_AXIS, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_ACCUM, 1, CT_SHAPE_SAME, CT_DESC_NONE, "running sum along axis") \
  R(X, CUMPROD, 87, cumprod, CT_KIND_ALONG_AXIS, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_ACCUM, 1, CT_SHAPE_SAME, CT_DESC_NONE, "running product along axis") \
  R(X, FMOD, 120, fmod, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "C's fmod: a - trunc(a / b) * b, the sign of a; integer x fmod 0 = 0") \
  R(X, LOGADDEXP, 121, logaddexp, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "log(e^a + e^b) without overflow") \
  R(X, LOGADDEXP2, 122, logaddexp2, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "log2(2^a + 2^b) without overflow") \
  R(X, XLOGY, 123, xlogy, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a * log(b), 0 where a == 0 unless b is NaN") \
  R(X, NEXTAFTER, 124, nextafter, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_F32_F64, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "the next representable value after a toward b") \
  R(X, GCD, 125, gcd, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_INT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "greatest common divisor, >= 0; gcd(0, 0) = 0") \
  R(X, LCM, 126, lcm, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_INT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "least common multiple, >= 0; 0 if either is 0") \
  R(X, HEAVISIDE, 127, heaviside, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "0 for a < 0, 1 for a > 0, b where a == 0; NaN a gives NaN") \
  R(X, PRELU, 128, prelu, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a >= 0 ? a : b * a (b: the weight, broadcast as NumPy: (C, 1, 1) for channels of NCHW)") \
  R(X, LDEXP, 129, ldexp, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a * 2^b (PyTorch's ldexp; b need not be an integer)") \
  R(X, NANSUM, 137, nansum, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_ACCUM, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "sum with NaN taken as 0; of nothing is 0") \
  R(X, NANMEAN, 138, nanmean, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_FLOAT, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "mean of the elements that are not NaN; NaN if there are none") \
  R(X, COUNT_NONZERO, 139, count_nonzero, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_INT64, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "how many x != 0 (NaN counts), as int64") \
  R(X, LOGCUMSUMEXP, 140, logcumsumexp, CT_KIND_ALONG_AXIS, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "running log(sum(e^x)) along axis, without overflow") \
  R(X, SOFTMIN, 141, softmin, CT_KIND_ALONG_AXIS, 0, "", "x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "softmax of -x along axis: e^(min - x) / sum(e^(min - x))") \
  R(X, SORT, 142, sort, CT_KIND_ALONG_AXIS, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "ascending along axis; NaN last") \
  R(X, ARGSORT, 143, argsort, CT_KIND_ALONG_AXIS, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_INT64, 0, CT_SHAPE_SAME, CT_DESC_NONE, "int64 indices that sort along axis, stable: equal elements (-0 and 0 too) keep their order, NaN last") \
  R(X, XLOG1PY, 155, xlog1py, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "a * log1p(b), 0 where a == 0 unless b is NaN") \
  R(X, MEDIAN, 165, median, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "the lower median, an element (PyTorch's median); NaN if any is NaN; of nothing is an error") \
  R(X, NANMEDIAN, 166, nanmedian, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "the lower median of the elements that are not NaN; NaN if there are none; of nothing is an error") \
  R(X, QUANTILE, 167, quantile, CT_KIND_REDUCE, 1, "q", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_FLOAT, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "the q-quantile, 0 <= q <= 1, interpolated linearly between the sorted elements at floor and ceil of q * (count - 1) (NumPy's and PyTorch's default); NaN if any is NaN or of nothing") \
  R(X, NANQUANTILE, 168, nanquantile, CT_KIND_REDUCE, 1, "q", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_FLOAT, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "quantile of the elements that are not NaN; NaN if there are none") \
  R(X, KTHVALUE, 169, kthvalue, CT_KIND_REDUCE, 1, "k", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "the k-th smallest element, 1 <= k <= count, NaN above +inf (PyTorch's kthvalue)") \
  R(X, CUMMAX, 170, cummax, CT_KIND_ALONG_AXIS, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "running maximum along axis; NaN from the first NaN on") \
  R(X, CUMMIN, 171, cummin, CT_KIND_ALONG_AXIS, 0, "", "x|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "running minimum along axis; NaN from the first NaN on") \
  R(X, MODE, 172, mode, CT_KIND_REDUCE, 0, "", "x|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 0, CT_SHAPE_REDUCE, CT_DESC_NONE, "the most frequent element, the smallest of those as frequent (torch.mode; NaN equal to NaN, -0 to 0); of nothing is an error") \
  R(X, TAKE, 173, take, CT_KIND_INDEX, 0, "", "x,index:i|out", CT_DTS_ALL, CT_OUTPUT_SAME, 0, CT_SHAPE_TAKE, CT_DESC_NONE, "x at each index along axis: out.shape = x.shape[:axis] + index.shape + x.shape[axis+1:] (NumPy's take; index_select, embedding)") \
  R(X, GATHER, 174, gather, CT_KIND_INDEX, 0, "", "x,index:i|out", CT_DTS_ALL, CT_OUTPUT_SAME, 0, CT_SHAPE_INDEX, CT_DESC_NONE, "out[p] = x[p with its axis coordinate replaced by index[p]], out.shape = index.shape (torch.gather, take_along_axis)") \
  R(X, SCATTER, 175, scatter, CT_KIND_INDEX, 0, "", "x,index:i,src|out", CT_DTS_ALL, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "out = x, then out[p with its axis coordinate replaced by index[p]] = src[p] for every p of index, in order along axis (the last write wins)") \
  R(X, SCATTER_ADD, 176, scatter_add, CT_KIND_INDEX, 0, "", "x,index:i,src|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "out = x, then out[p with its axis coordinate replaced by index[p]] += src[p], summed in order along axis (deterministic)") \
  R(X, INDEX_ADD, 177, index_add, CT_KIND_INDEX, 1, "alpha=1", "x,index:i,src|out", CT_DTS_NUMERIC, CT_OUTPUT_SAME, 1, CT_SHAPE_SAME, CT_DESC_NONE, "out = x, then out's slice index[i] along axis += alpha * src's slice i, in order of i (deterministic; embedding's backward)") \
  R(X, CHEBYSHEV_POLYNOMIAL_T, 192, chebyshev_polynomial_t, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "Chebyshev's polynomial T_n(x) of the first kind (n = b truncated; 0 for n < 0)") \
  R(X, CHEBYSHEV_POLYNOMIAL_U, 193, chebyshev_polynomial_u, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "Chebyshev's polynomial U_n(x) of the second kind") \
  R(X, CHEBYSHEV_POLYNOMIAL_V, 194, chebyshev_polynomial_v, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "Chebyshev's polynomial V_n(x) of the third kind") \
  R(X, CHEBYSHEV_POLYNOMIAL_W, 195, chebyshev_polynomial_w, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "Chebyshev's polynomial W_n(x) of the fourth kind") \
  R(X, SHIFTED_CHEBYSHEV_POLYNOMIAL_T, 196, shifted_chebyshev_polynomial_t, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "T_n(2x - 1)") \
  R(X, SHIFTED_CHEBYSHEV_POLYNOMIAL_U, 197, shifted_chebyshev_polynomial_u, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "U_n(2x - 1)") \
  R(X, SHIFTED_CHEBYSHEV_POLYNOMIAL_V, 198, shifted_chebyshev_polynomial_v, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "V_n(2x - 1)") \
  R(X, SHIFTED_CHEBYSHEV_POLYNOMIAL_W, 199, shifted_chebyshev_polynomial_w, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "W_n(2x - 1)") \
  R(X, HERMITE_POLYNOMIAL_H, 200, hermite_polynomial_h, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "the physicists' Hermite polynomial H_n(x)") \
  R(X, HERMITE_POLYNOMIAL_HE, 201, hermite_polynomial_he, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "the probabilists' Hermite polynomial He_n(x)") \
  R(X, LAGUERRE_POLYNOMIAL_L, 202, laguerre_polynomial_l, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "Laguerre's polynomial L_n(x)") \
  R(X, LEGENDRE_POLYNOMIAL_P, 203, legendre_polynomial_p, CT_KIND_BINARY, 0, "", "x,n|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "Legendre's polynomial P_n(x)") \
  R(X, ZETA, 204, zeta, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "Hurwitz's zeta(a, b) = sum_k (b + k)^-a; +inf at a = 1, NaN for a < 1") \
  R(X, IGAMMA, 205, igamma, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "the regularized lower incomplete gamma function P(a, b)") \
  R(X, IGAMMAC, 206, igammac, CT_KIND_BINARY, 0, "", "a,b|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "the regularized upper incomplete gamma function Q(a, b) = 1 - P(a, b)") \
  R(X, RELU_BACKWARD, 209, relu_backward, CT_KIND_BINARY, 0, "", "grad,x|out", CT_DTS_FLOAT, CT_OUTPUT_SAME, 1, CT_SHAPE_BROADCAST, CT_DESC_NONE, "grad where x > 0, else 0 (x: relu's input or its output; a NaN x passes grad): relu's backward in one pass, PyTorch's threshold_backward at 0") \

#define CT_NN_OP_ROWS(R, X) \
  R(X, MATMUL, 88, matmul, CT_KIND_NN, 0, "", "a,b,bias?:b|out", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_MATMUL, CT_DESC_MATMUL, "out = act(a @ b + bias); batched, broadcast batch dims, transposes by strides; out may be float32 for float16/bfloat16 a and b (accumulated, rounded once)") \
  R(X, CONV2D, 89, conv2d, CT_KIND_NN, 0, "", "x,w,bias?:b|y", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_CONV2D, CT_DESC_CONV2D, "y = act(conv2d(x, w) + bias); NCHW or NHWC by strides") \
  R(X, CONV2D_BACKWARD_DATA, 90, conv2d_backward_data, CT_KIND_NN, 0, "", "dy,w|dx", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_CONV2D_BACKWARD_DATA, CT_DESC_CONV2D, "dx = gradient of conv2d wrt x, from dy and w") \
  R(X, CONV2D_BACKWARD_WEIGHT, 91, conv2d_backward_weight, CT_KIND_NN, 0, "", "x,dy|dw,dbias?:b", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_CONV2D_BACKWARD_WEIGHT, CT_DESC_CONV2D, "dw (and dbias) from x and dy") \
  R(X, MAX_POOL2D, 92, max_pool2d, CT_KIND_NN, 0, "", "x|y,indices?:i", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_POOL2D, CT_DESC_POOL2D, "y = window max; optional int64 indices for the backward") \
  R(X, MAX_POOL2D_BACKWARD, 93, max_pool2d_backward, CT_KIND_NN, 0, "", "dy,indices:i|dx", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_POOL2D_BACKWARD, CT_DESC_POOL2D, "dx from dy and the forward's indices") \
  R(X, AVG_POOL2D, 94, avg_pool2d, CT_KIND_NN, 0, "", "x|y", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_POOL2D, CT_DESC_POOL2D, "y = window mean (count_include_pad either way)") \
  R(X, AVG_POOL2D_BACKWARD, 95, avg_pool2d_backward, CT_KIND_NN, 0, "", "dy|dx", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_POOL2D_BACKWARD, CT_DESC_POOL2D, "dx from dy") \
  R(X, BATCH_NORM, 96, batch_norm, CT_KIND_NN, 0, "", "x,mean:s,var:s,scale?:p,shift?:p|y", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_NORM, CT_DESC_BATCH_NORM, "inference: (x - mean) / sqrt(var + eps) * scale + shift per channel") \
  R(X, BATCH_NORM_TRAINING, 97, batch_norm_training, CT_KIND_NN, 0, "", "x,scale?:p,shift?:p|y,mean:s,invstd:s", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_NORM, CT_DESC_BATCH_NORM, "batch statistics: y, mean, invstd") \
  R(X, BATCH_NORM_BACKWARD, 98, batch_norm_backward, CT_KIND_NN, 0, "", "x,dy,mean:s,invstd:s,scale?:p|dx,dscale?:p,dshift?:p", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_NORM, CT_DESC_BATCH_NORM, "dx, dscale, dshift from x, dy, mean, invstd") \
  R(X, LAYER_NORM, 99, layer_norm, CT_KIND_NN, 0, "", "x,scale?:p,shift?:p|y,mean?:s,rstd?:s", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_NORM, CT_DESC_LAYER_NORM, "over the last k axes: y, and mean and rstd for the backward") \
  R(X, LAYER_NORM_BACKWARD, 100, layer_norm_backward, CT_KIND_NN, 0, "", "x,dy,mean:s,rstd:s,scale?:p|dx,dscale?:p,dshift?:p", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_NORM, CT_DESC_LAYER_NORM, "dx, dscale, dshift from x, dy, mean, rstd") \
  R(X, SCALED_DOT_PRODUCT_ATTENTION, 207, scaled_dot_product_attention, CT_KIND_NN, 0, "", "q,k,v,mask?:a|out", CT_DTS_NN, CT_OUTPUT_NN, 0, CT_SHAPE_ATTENTION, CT_DESC_ATTENTION, "out = softmax(q @ k^T * scale + mask) @ v per batch entry; mask bool (true: attend) or additive; causal masks; a row with no key left gives 0") \

/** Every op, grouped by category (not in id order), with all 13 columns. */
#define CT_OP_WIDE_(X, ...) X(__VA_ARGS__)
#define CT_OP_TABLE(X)                    \
  CT_ELEMENTWISE_OP_ROWS(CT_OP_WIDE_, X)     \
  CT_BROADCAST_REDUCE_OP_ROWS(CT_OP_WIDE_, X) \
  CT_NN_OP_ROWS(CT_OP_WIDE_, X)

/* The narrow lists of version 0.1: X(ID, name, kind, num_params, summary). */
#define CT_OP_NARROW_(X, ID, id, name, kind, np, pn, tn, dts, out, inpl, shp, dsc, summary) \
  X(ID, name, kind, np, summary)
#define CT_ELEMENTWISE_OPS(X) CT_ELEMENTWISE_OP_ROWS(CT_OP_NARROW_, X)
#define CT_BROADCAST_REDUCE_OPS(X) CT_BROADCAST_REDUCE_OP_ROWS(CT_OP_NARROW_, X)
#define CT_NN_OPS(X) CT_NN_OP_ROWS(CT_OP_NARROW_, X)

/** Op ids. Stable across versions: ops are only appended. */
#define CT_OP_ONE_(...) +1
typedef enum {
#define CT_OP_ENUM_(ID, id, name, kind, np, pn, tn, dts, out, inpl, shp, dsc, summary) CT_OP_##ID = id,
  CT_OP_TABLE(CT_OP_ENUM_)
#undef CT_OP_ENUM_
  /** one past the largest op id of this header, i.e. the number of rows (ids
   *  are dense); use ct_op_count() at run time */
  CT_OP_END_ = 0 CT_OP_TABLE(CT_OP_ONE_)
} CTOp;
#undef CT_OP_ONE_

/** Static facts about one op, filled by ct_op_info(). Set struct_size to
 *  sizeof(CTOpInfo); the library fills at most that many bytes. All strings
 *  are static and owned by the library. */
typedef struct {
  uint32_t struct_size;        /**< in: sizeof(CTOpInfo) as the caller knows it */
  int32_t op;                  /**< out: the op id */
  const char* name;            /**< out: "exp", "where", ... */
  const char* summary;         /**< out: one line, e.g. "e^x" */
  int32_t category;            /**< out: CT_CATEGORY_* */
  int32_t kind;                /**< out: CT_KIND_* (selects the entry point) */
  int32_t num_inputs;          /**< out: tensor inputs (1, 2 or 3; NN ops: the inputs among the tensor arguments) */
  int32_t num_params;          /**< out: scalar double parameters */
  const char* param_names;     /**< out: comma-separated "name" or "name=default" (a decimal number, the value
                                     frameworks use when the caller gives none), e.g. "lo,hi", "negative_slope=0.01"; "" if none */
  int32_t output_dtype;        /**< out: CT_OUTPUT_* */
  int32_t inplace;             /**< out: 1 if out may be exactly an input */
  int32_t num_tensors;         /**< out: tensor arguments of the entry point, outputs included (NN ops: the plan's num_tensors) */
  const char* tensor_names;    /**< out: those arguments in order, e.g. "x,w,bias?,y"; "?" marks an optional (NULL-able) one */
  /* ---- since 0.2 (callers built against 0.1 pass a smaller struct_size) ---- */
  int32_t num_outputs;         /**< out: tensor arguments that are written (the last num_outputs of them) */
  uint32_t optional_mask;      /**< out: bit i set if tensor argument i may be NULL */
  const int32_t* tensor_roles; /**< out: num_tensors CTTensorRole values, one per tensor argument */
  int32_t desc_type;           /**< out: CTDescType of the op's descriptor (NN ops), CT_DESC_NONE otherwise */
  int32_t desc_size;           /**< out: sizeof that descriptor in this library, 0 if none */
  int32_t shape_rule;          /**< out: CTShapeRule */
  uint32_t dtype_mask;         /**< out: the dtypes the op is defined for, bit (1u << CTDtypeIndex) each (the op's rule; a device may run fewer) */
  const char* dtype_rule;      /**< out: that rule in words ("float dtypes only, as in NumPy") */
} CTOpInfo;

/** What a tensor argument of an op is for (CTOpInfo.tensor_roles). Data
 *  tensors share the call's dtype; the others follow their own rule. */
typedef enum {
  CT_ROLE_DATA = 0,  /**< data: the op's dtype (outputs: as CTOpInfo.output_dtype says) */
  CT_ROLE_COND = 1,  /**< a bool condition (where) */
  CT_ROLE_STAT = 2,  /**< float32 per-row statistics: mean, var, invstd, rstd (norms) */
  CT_ROLE_PARAM = 3, /**< float32 scale, shift and their gradients (norms) */
  CT_ROLE_BIAS = 4,  /**< the data dtype or float32 (matmul, conv2d) */
  CT_ROLE_INDEX = 5, /**< int64 indices (max-pool); int64 or int32 for the CT_KIND_INDEX ops */
  CT_ROLE_ANY = 6    /**< any dtype (cast's output) */
} CTTensorRole;

/** The descriptor an NN op takes (CTOpInfo.desc_type). */
typedef enum {
  CT_DESC_NONE = 0,
  CT_DESC_MATMUL = 1,     /**< CTMatmulDesc */
  CT_DESC_CONV2D = 2,     /**< CTConv2dDesc */
  CT_DESC_POOL2D = 3,     /**< CTPool2dDesc */
  CT_DESC_BATCH_NORM = 4, /**< CTBatchNormDesc */
  CT_DESC_LAYER_NORM = 5, /**< CTLayerNormDesc */
  CT_DESC_ATTENTION = 6   /**< CTAttentionDesc */
} CTDescType;

/** Dense dtype indices: bit (1u << i) of CTOpInfo.dtype_mask is dtype i.
 *  Append-only (the indices are ABI): a dtype added later takes the next
 *  index, so the integer and float dtypes are not contiguous ranges; test a
 *  dtype's class with the CT_DTS_* masks, never by comparing indices. */
#define CT_DTYPE_TABLE(X)                                    \
  X(BOOL, 0, CT_BOOL, 8, "bool")                             \
  X(INT8, 1, CT_INT, 8, "int8")                              \
  X(INT16, 2, CT_INT, 16, "int16")                           \
  X(INT32, 3, CT_INT, 32, "int32")                           \
  X(INT64, 4, CT_INT, 64, "int64")                           \
  X(UINT8, 5, CT_UINT, 8, "uint8")                           \
  X(FLOAT16, 6, CT_FLOAT, 16, "float16")                     \
  X(BFLOAT16, 7, CT_BFLOAT, 16, "bfloat16")                  \
  X(FLOAT32, 8, CT_FLOAT, 32, "float32")                     \
  X(FLOAT64, 9, CT_FLOAT, 64, "float64")                     \
  X(UINT16, 10, CT_UINT, 16, "uint16")                       \
  X(UINT32, 11, CT_UINT, 32, "uint32")                       \
  X(UINT64, 12, CT_UINT, 64, "uint64")                       \
  X(FLOAT8_E4M3FN, 13, CT_FLOAT8_E4M3FN, 8, "float8_e4m3fn") \
  X(FLOAT8_E5M2, 14, CT_FLOAT8_E5M2, 8, "float8_e5m2")       \
  X(FLOAT8_E4M3FNUZ, 15, CT_FLOAT8_E4M3FNUZ, 8, "float8_e4m3fnuz") \
  X(FLOAT8_E5M2FNUZ, 16, CT_FLOAT8_E5M2FNUZ, 8, "float8_e5m2fnuz")
/* ^ The dtypes ctensor runs, one row each: X(NAME, index, code, bits,
 *   "name"): CTDtypeIndex CT_DT_<NAME> = index, the CTDataType {code, bits,
 *   1} and the name every front end uses (NumPy's, ml_dtypes' for float8).
 *   Names, CTDataTypes and the indices below all come from these rows. */

typedef enum {
#define CT_DT_ENUM_(N, i, code, bits, name) CT_DT_##N = i,
  CT_DTYPE_TABLE(CT_DT_ENUM_)
#undef CT_DT_ENUM_
#define CT_DT_ONE_(N, i, code, bits, name) +1
  CT_DT_COUNT = 0 CT_DTYPE_TABLE(CT_DT_ONE_) /**< one past the last index of this header */
#undef CT_DT_ONE_
} CTDtypeIndex;

/** The name of dtype index @p index ("float32"), or NULL when this header
 *  has no such index. Static strings. */
static inline const char* ct_dtype_name(int32_t index) {
  switch (index) {
#define CT_DT_NAME_(N, i, code, bits, name) case i: return name;
    CT_DTYPE_TABLE(CT_DT_NAME_)
#undef CT_DT_NAME_
    default: return NULL;
  }
}

/** The CTDataType of dtype index @p index ({0, 0, 0} when this header has no
 *  such index). */
static inline CTDataType ct_dtype_of_index(int32_t index) {
  CTDataType d = {0, 0, 0};
  switch (index) {
#define CT_DT_TYPE_(N, i, c, b, name) case i: d.code = c; d.bits = b; d.lanes = 1; break;
    CT_DTYPE_TABLE(CT_DT_TYPE_)
#undef CT_DT_TYPE_
    default: break;
  }
  return d;
}

/** The CT_DT_* index of @p dt, or -1 when this header does not know the
 *  dtype (lanes other than 1 included). Inline: it is on every call's path,
 *  in the library and in each backend alike. */
static inline int32_t ct_dtype_index(CTDataType dt) {
  if (dt.lanes != 1) return -1;
  switch (dt.code) {
    case CT_BOOL: return dt.bits == 8 ? CT_DT_BOOL : -1;
    case CT_INT:
      return dt.bits == 8 ? CT_DT_INT8 : dt.bits == 16 ? CT_DT_INT16 : dt.bits == 32 ? CT_DT_INT32
           : dt.bits == 64 ? CT_DT_INT64 : -1;
    case CT_UINT:
      return dt.bits == 8 ? CT_DT_UINT8 : dt.bits == 16 ? CT_DT_UINT16 : dt.bits == 32 ? CT_DT_UINT32
           : dt.bits == 64 ? CT_DT_UINT64 : -1;
    case CT_FLOAT:
      return dt.bits == 16 ? CT_DT_FLOAT16 : dt.bits == 32 ? CT_DT_FLOAT32 : dt.bits == 64 ? CT_DT_FLOAT64 : -1;
    case CT_BFLOAT: return dt.bits == 16 ? CT_DT_BFLOAT16 : -1;
    case CT_FLOAT8_E4M3FN: return dt.bits == 8 ? CT_DT_FLOAT8_E4M3FN : -1;
    case CT_FLOAT8_E5M2: return dt.bits == 8 ? CT_DT_FLOAT8_E5M2 : -1;
    case CT_FLOAT8_E4M3FNUZ: return dt.bits == 8 ? CT_DT_FLOAT8_E4M3FNUZ : -1;
    case CT_FLOAT8_E5M2FNUZ: return dt.bits == 8 ? CT_DT_FLOAT8_E5M2FNUZ : -1;
    default: return -1;
  }
}

/** Nonzero when @p t's strides are NULL or those of the compact row-major
 *  layout of its shape (an extent of 1 may have any stride): the layout
 *  DLPack 1.2 producers describe with explicit strides. @p t's shape must be
 *  valid (no negative extent); inline: on every call's path, in the library
 *  and in each backend alike. */
static inline int ct_is_compact(const CTensor* t) {
  uint64_t expect = 1; /* unsigned: an empty tensor's extents may multiply past 2^63 */
  int32_t d;
  if (!t->strides) return 1;
  for (d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] != 1 && (uint64_t)t->strides[d] != expect) return 0;
    expect *= (uint64_t)t->shape[d];
  }
  return 1;
}

/** The CT_DT_* index of the output an op's output rule @p rule
 *  (CTOpInfo.output_dtype) gives for data dtype index @p dt, or -1 where the
 *  rule does not fix one (CT_OUTPUT_ANY: the caller's; CT_OUTPUT_NN: per
 *  tensor role) or dt is not an index of this header. The one statement of
 *  the rules: core, the C++ wrapper and the tool all ask it. */
static inline int32_t ct_output_dtype_index(int32_t rule, int32_t dt) {
  if (dt < 0 || dt >= CT_DT_COUNT) return -1;
  switch (rule) {
    case CT_OUTPUT_SAME: return dt;
    case CT_OUTPUT_BOOL: return CT_DT_BOOL;
    case CT_OUTPUT_INT64: return CT_DT_INT64;
    case CT_OUTPUT_ACCUM:
      return ((CT_DTS_FLOAT >> dt) & 1u) ? dt : ((CT_DTS_UINT >> dt) & 1u) ? (int32_t)CT_DT_UINT64 : (int32_t)CT_DT_INT64;
    case CT_OUTPUT_FLOAT: return ((CT_DTS_FLOAT >> dt) & 1u) ? dt : (int32_t)CT_DT_FLOAT64;
    default: return -1;
  }
}

/** One past the largest op id the runtime library has given: the built-ins
 *  (>= CT_OP_END_ of an older header), then every id a plugin op was given.
 *  An unloaded plugin's ids stay counted (never reused by another op) but
 *  name no op: ct_op_info answers CT_ERR_NOT_FOUND for them, so a loop over
 *  0..ct_op_count()-1 skips ids whose ct_op_info fails. */
CT_API int32_t ct_op_count(void);

/** Describe op @p op.
 *  @return CT_OK, CT_ERR_INVALID_ARGUMENT (NULL info or struct_size too small),
 *          CT_ERR_NOT_FOUND (no such op id). */
CT_API CTStatus ct_op_info(int32_t op, CTOpInfo* info);

/** Find an op id by name ("exp").
 *  @param[out] op set on success.
 *  @return CT_OK, CT_ERR_INVALID_ARGUMENT (NULL), CT_ERR_NOT_FOUND. */
CT_API CTStatus ct_op_find(const char* name, int32_t* op);

/** Ask, before running anything, whether @p op runs on @p device for inputs
 *  of @p dtype (for cast: whether some cast from that source dtype runs
 *  there; ct_cast_supported asks about one target). Returns CT_OK if so;
 *  otherwise CT_ERR_UNSUPPORTED (or CT_ERR_NOT_FOUND for a bad op id or
 *  device) and ct_last_error() says why ("ct_op_supported: sqrt is not
 *  defined for int8: float dtypes only, as in NumPy"). */
CT_API CTStatus ct_op_supported(int32_t op, CTDevice device, CTDataType dtype);

/** ct_op_supported for a cast from @p from to @p to on @p device (a backend
 *  may convert between some pairs only: the CPU runs every pair). */
CT_API CTStatus ct_cast_supported(CTDevice device, CTDataType from, CTDataType to);

/* ---- any op by id: the shapes and dtypes of its outputs ----------------- */

/** The arguments of an op besides its tensors, for ct_op_output_info.
 *  Zero-initialise it, set struct_size, and set what the op's kind takes. */
typedef struct {
  uint32_t struct_size;  /**< sizeof(CTOpArgs) */
  int32_t keepdims;      /**< reduce: as ct_reduce */
  const int32_t* axes;   /**< reduce: as ct_reduce (NULL with num_axes = 0: every axis) */
  int32_t num_axes;      /**< reduce */
  int32_t axis;          /**< along-axis: as ct_along_axis */
  CTDataType dtype;      /**< cast: the target dtype */
  int32_t reserved;      /**< 0 */
  const void* desc;      /**< NN ops: the op's descriptor (CTConv2dDesc*, ...) */
  int64_t extent[2];     /**< extents the inputs leave open, {0, 0} to infer them: conv2d_backward_data and
                              the pooling backwards: x's (H, W) (inferred: the smallest that gives dy);
                              conv2d_backward_weight: the kernel's (R, S) (inferred only where one fits) */
} CTOpArgs;

/** One output's shape and dtype, as ct_op_output_info fills it. */
typedef struct {
  int32_t ndim;                /**< 0 .. CT_MAX_NDIM */
  CTDataType dtype;            /**< the dtype the op writes there */
  int64_t shape[CT_MAX_NDIM];  /**< ndim extents */
} CTOutputInfo;

/** What @p op writes for these inputs, so that a caller can allocate its
 *  outputs without knowing the op's rules (the C++ wrapper, the Python
 *  module and framework adapters all use it).
 *  @param[in]  args        the op's other arguments (NULL: all zero)
 *  @param[in]  inputs      the op's input tensor arguments in order: the
 *                          first CTOpInfo.num_inputs of its tensor_names
 *                          (NULL for an absent optional one); only ndim,
 *                          shape and dtype are read
 *  @param[out] outputs     CTOpInfo.num_outputs entries, one per output
 *                          tensor argument in order (optional ones too)
 *  The ops whose input extent the output does not fix (conv2d_backward_data,
 *  the pooling backwards: stride leftovers) give the smallest consistent one.
 *  @return CT_OK; otherwise the status the op would return for these inputs
 *          (shape, dtype, argument errors), outputs untouched. */
CT_API CTStatus ct_op_output_info(int32_t op, const CTOpArgs* args, const CTensor* const* inputs,
                                  int32_t num_inputs, CTOutputInfo* outputs, int32_t num_outputs);


/* ------------------------------------------------------------------------ */
/* Category 1: elementwise maps                                              */
/* ------------------------------------------------------------------------ */
/*
 * All operands have the same shape; inputs may have any strides (0 and
 * negative included) and any byte_offset. The output may be exactly an input
 * (same data, byte_offset, dtype, shape and strides: in-place); any other
 * overlap between the output and an input, or of the output with itself, is
 * CT_ERR_INVALID_ARGUMENT.
 *
 * Overlap, for every entry point (ct_copy and categories 1 and 2), is
 * decided exactly on the bytes the elements occupy, as NumPy's
 * solve_may_share_memory: interleaved views that share no byte are
 * accepted (x = the even and out = the odd elements of one buffer; an out
 * of shape (2, 3) with strides (4, 3), whose six elements are distinct).
 * The test is a search with a bounded amount of work: when it cannot settle
 * the question within 20000 steps (seen only with layouts of several large
 * strides that share no structure, three or more dims), the call is refused
 * with CT_ERR_INVALID_ARGUMENT and a message saying that the overlap "could
 * not be ruled out within the exact overlap test's bound of 20000 steps",
 * whether or not the views overlap. Layouts whose strides, sorted by size,
 * each exceed the span of the smaller ones (every padded, permuted or
 * reversed row-major view) never reach the search.
 *
 * Operands share the dtype, except: predicates
 * (isnan, isinf, isfinite, logical_not) write bool; where's cond is bool;
 * cast converts. float16 and bfloat16 compute in float32. Integer arithmetic
 * wraps (two's complement), as in NumPy.
 *
 * Example: y = clamp(x, 0, 6) in place.
 * @code
 *   double lohi[2] = {0.0, 6.0};
 *   CTStatus s = ct_unary_param(CT_OP_CLAMP, &x, lohi, 2, &x, NULL);
 * @endcode
 */

/** out = op(x) for a CT_KIND_UNARY op.
 *  @param[in]  op     a CT_OP_* id of kind CT_KIND_UNARY
 *  @param[in]  x      input
 *  @param[out] out    output, same shape as x
 *  @param[in]  stream NULL or a CTCpuStream* for CPU tensors
 *  @return CT_OK; CT_ERR_INVALID_ARGUMENT, CT_ERR_SHAPE_MISMATCH,
 *          CT_ERR_DTYPE_MISMATCH, CT_ERR_DEVICE_MISMATCH, CT_ERR_UNSUPPORTED,
 *          CT_ERR_NOT_FOUND (op id). */
CT_API CTStatus ct_unary(int32_t op, const CTensor* x, CTensor* out, void* stream);

/** out = op(x; params) for a CT_KIND_UNARY_PARAM op.
 *  leaky_relu(alpha), elu(alpha), clamp(lo, hi), pow_scalar(p),
 *  add_scalar(s), mul_scalar(s). For integer dtypes a parameter must be
 *  an integer representable in the dtype (else CT_ERR_INVALID_ARGUMENT).
 *  @param[in] params     num_params doubles (see CTOpInfo.param_names)
 *  @param[in] num_params must equal the op's CTOpInfo.num_params */
CT_API CTStatus ct_unary_param(int32_t op, const CTensor* x, const double* params,
                               int32_t num_params, CTensor* out, void* stream);

/** out = op(a, b, c) for a CT_KIND_TERNARY op: where(cond, a, b) with cond
 *  bool, fma(a, b, c) = a * b + c, lerp(a, b, w) = a + w * (b - a),
 *  clamp_tensor(x, min, max), addcmul and addcdiv. The three operands
 *  broadcast as in NumPy. An op with scalar parameters (addcmul, addcdiv:
 *  value) runs with the defaults of its CTOpInfo.param_names here; give
 *  other values through ct_ternary_param. */
CT_API CTStatus ct_ternary(int32_t op, const CTensor* a, const CTensor* b, const CTensor* c,
                           CTensor* out, void* stream);

/** out = op(a, b, c; params) for a CT_KIND_TERNARY op: addcmul(input,
 *  tensor1, tensor2; value) = input + value * tensor1 * tensor2, addcdiv
 *  likewise with tensor1 / tensor2. num_params must equal the op's
 *  CTOpInfo.num_params (0 for the ops without parameters, params may then be
 *  NULL); for integer dtypes a parameter must be an integer representable
 *  in the dtype (else CT_ERR_INVALID_ARGUMENT). */
CT_API CTStatus ct_ternary_param(int32_t op, const CTensor* a, const CTensor* b, const CTensor* c,
                                 const double* params, int32_t num_params, CTensor* out, void* stream);

/** out = x converted to out's dtype, for every pair of supported dtypes.
 *  Float to integer truncates toward zero and saturates (NaN gives 0);
 *  integer to narrower integer wraps modulo 2^bits (as NumPy and C's
 *  conversion to unsigned); to bool is x != 0 (NaN is true); to a float
 *  dtype rounds once to nearest even: to float16/bfloat16/float32 and
 *  float8_e5m2 overflowing to +-inf, to the float8 dtypes without an
 *  infinity (e4m3fn, e4m3fnuz, e5m2fnuz) overflowing to NaN (as NumPy with
 *  ml_dtypes, PyTorch, and ONNX Cast with saturate=0; ct_cast_ex saturates).
 *  A value that rounds past the largest finite one overflows (float8_e4m3fn:
 *  464 gives 448, 465 overflows). fnuz dtypes have no -0: -0 gives +0.
 *  A cast between two dtypes never runs in place (CTOpInfo.inplace is 0):
 *  an out that shares any byte with x is CT_ERR_INVALID_ARGUMENT, even
 *  exactly x's bytes with a dtype of the same size (float32 <-> int32). A
 *  cast to x's own dtype is a copy and, like ct_copy, may be exactly x. */
CT_API CTStatus ct_cast(const CTensor* x, CTensor* out, void* stream);

/** How ct_cast_ex treats values beyond the target dtype's finite range. */
typedef enum {
  CT_CAST_DEFAULT = 0, /**< as ct_cast */
  CT_CAST_SATURATE = 1 /**< to a float8 dtype, a finite value or infinity beyond its largest finite value
                            gives that value with its sign (ONNX Cast with saturate=1); NaN stays NaN;
                            every other target dtype as ct_cast (integers already saturate) */
} CTCastMode;

/** ct_cast with a CTCastMode. Kernels see the mode as params[0] of the cast
 *  call (plugin.h).
 *  @return as ct_cast; CT_ERR_INVALID_ARGUMENT for a mode that is not a
 *          CTCastMode (out untouched). */
CT_API CTStatus ct_cast_ex(const CTensor* x, CTensor* out, int32_t mode, void* stream);

/* ------------------------------------------------------------------------ */
/* Category 2: broadcasting binary ops, reductions, along-axis ops           */
/* ------------------------------------------------------------------------ */
/*
 * Inputs may have any strides (0 and negative included) and any
 * byte_offset; outputs must not overlap themselves or an input, except that
 * the out of a binary or along-axis op may be exactly an input whose shape
 * is out's (in-place). A reduction's out never shares a byte with x (it may
 * interleave with x without sharing one). Overlap is decided exactly within
 * a bound, as for category 1.
 * Operands share a dtype except as the op's CTOpInfo.output_dtype says:
 * comparisons and logical ops write bool, argmax/argmin int64, sum/prod/
 * cumsum/cumprod of unsigned integers uint64 and of signed integers and
 * bool int64, div/mean/var/std/norm2 of integers float64 (ct_output_dtype_index).
 * float16 and bfloat16 compute in float32; float sums,
 * products and running sums accumulate in float64 on the CPU (at least as
 * accurate as NumPy's pairwise summation; half types at least float32 on
 * every device). Integer sums accumulate in 64 bits, wrapping. Results do not
 * depend on the number of threads.
 * Nothing here traps: integer x // 0 and x % 0 are 0, integer pow with a
 * negative exponent is 1 / a^-b truncated (0 unless a is 1 or -1).
 *
 * Example: row sums of a (n, m) float32 matrix, kept as (n, 1).
 * @code
 *   int32_t axis = 1;
 *   CTStatus s = ct_reduce(CT_OP_SUM, &x, &axis, 1, 1, NULL, 0, &out, NULL);
 * @endcode
 */

/** out = op(a, b) with NumPy broadcasting, for a CT_KIND_BINARY op.
 *  a and b are aligned at their last dims; each pair of extents must be
 *  equal or one of them 1. out.shape must be exactly the broadcast shape.
 *  @param[in]  op     a CT_OP_* id of kind CT_KIND_BINARY
 *  @param[in]  a, b   inputs of the same dtype
 *  @param[out] out    output; its dtype follows CTOpInfo.output_dtype
 *  @param[in]  stream NULL or a CTCpuStream* for CPU tensors
 *  @return CT_OK; CT_ERR_SHAPE_MISMATCH naming both shapes when they do not
 *          broadcast or out's shape is not the broadcast one; the other
 *          statuses of ct_unary. */
CT_API CTStatus ct_binary(int32_t op, const CTensor* a, const CTensor* b, CTensor* out, void* stream);

/** out = op(x) reduced over a set of axes, for a CT_KIND_REDUCE op.
 *  @param[in]  axes       num_axes distinct axes in [-x.ndim, x.ndim); NULL
 *                         (with num_axes = 0) reduces over every axis; a
 *                         non-NULL empty set reduces over none (NumPy's axis=());
 *                         a 0-d x takes one axis 0 or -1 (NumPy's reductions
 *                         accept it): its one element, out 0-d either way
 *  @param[in]  keepdims   nonzero: out has x.ndim dims, the reduced ones 1;
 *                         zero: the reduced dims are removed
 *  @param[in]  params     var and std: {correction} (NumPy's ddof; 0 for the
 *                         population, 1 for the sample variance); NULL otherwise
 *  @param[out] out        output of the shape keepdims gives
 *  argmax/argmin over several axes give the row-major index within the
 *  reduced axes. An empty reduction gives the op's identity (sum 0, prod 1,
 *  any false, all true, norm2 0, logsumexp -inf, mean/var/std NaN);
 *  max/min/argmax/argmin of nothing are CT_ERR_INVALID_ARGUMENT.
 *  @return CT_OK; CT_ERR_INVALID_ARGUMENT (bad or repeated axis, empty max,
 *          params); CT_ERR_SHAPE_MISMATCH (out's shape); the statuses of ct_unary. */
CT_API CTStatus ct_reduce(int32_t op, const CTensor* x, const int32_t* axes, int32_t num_axes, int32_t keepdims,
                          const double* params, int32_t num_params, CTensor* out, void* stream);

/** out = op(x) along one axis, for a CT_KIND_ALONG_AXIS op: softmax and
 *  log_softmax (stable: x - max first), cumsum, cumprod. out has x's shape.
 *  @param[in] axis in [-x.ndim, x.ndim) (0 or -1 for a 0-d x)
 *  @return CT_OK; CT_ERR_INVALID_ARGUMENT (axis); the statuses of ct_unary. */
CT_API CTStatus ct_along_axis(int32_t op, const CTensor* x, int32_t axis, CTensor* out, void* stream);

/** An op by an integer index along one axis, for a CT_KIND_INDEX op:
 *  take (NumPy's take: out.shape = x.shape[:axis] + index.shape +
 *  x.shape[axis+1:]), gather (torch.gather: out.shape = index.shape,
 *  index.ndim = x.ndim, index.shape[d] <= x.shape[d] off the axis), scatter
 *  and scatter_add (torch's: out = x with src[p] written or added at p's
 *  axis coordinate replaced by index[p], for every p of index;
 *  index.shape[d] <= src.shape[d], and <= x.shape[d] off the axis) and
 *  index_add (torch's: out = x with alpha * src's slice i along the axis
 *  added to out's slice index[i]; index 1-d, src.shape = x.shape except
 *  along the axis, where it is index's length).
 *  index is int64 or int32; an index i is valid in [-n, n) for the axis's
 *  extent n (negative ones count from the end). Where the index is host
 *  memory (the CPU) every index is checked before anything is written: one
 *  outside is CT_ERR_INVALID_ARGUMENT naming its position and value. A
 *  device that cannot report without synchronising instead reads 0 for it
 *  (take, gather) or skips it (scatter): never memory outside x or out.
 *  Scatters are deterministic: the writes to one element happen in order
 *  along the axis (scatter: the last wins; the adds in that order). out may
 *  be exactly x for the scatters (in place); src and index may not overlap
 *  out. A 0-d x (and index) is a 1-d one of one element.
 *  @param[in] axis   in [-x.ndim, x.ndim)
 *  @param[in] src    the scatters' source (same dtype as x); NULL for take and gather
 *  @param[in] params index_add: {alpha} (NULL: 1)
 *  @return CT_OK; CT_ERR_INVALID_ARGUMENT (axis, an index out of range,
 *          overlap); CT_ERR_SHAPE_MISMATCH (the shapes above);
 *          CT_ERR_DTYPE_MISMATCH (index not int32/int64, src or out not x's
 *          dtype); the statuses of ct_unary. */
CT_API CTStatus ct_index(int32_t op, const CTensor* x, int32_t axis, const CTensor* index, const CTensor* src,
                         const double* params, int32_t num_params, CTensor* out, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* Category 3 (NN ops with a workspace query, plans): its own header, part of this one. */
#include "ctensor_nn.h"
/* Plugins loaded at run time. */
#include "ctensor_library.h"

#endif /* CTENSOR_CTENSOR_H_ */
