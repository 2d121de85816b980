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
 *    the first write.
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
  CT_BOOL = 6     /**< bool stored in 8 bits, 0 or 1 (kDLBool) */
};

/** A device: layout of DLPack's DLDevice. */
typedef struct {
  int32_t device_type; /**< one of CT_CPU, CT_CUDA, ... */
  int32_t device_id;   /**< index among devices of that type; 0 for the CPU */
} CTDevice;

/** An element type: layout of DLPack's DLDataType. ctensor supports
 *  lanes == 1 and: bool (CT_BOOL, 8), int8/16/32/64 (CT_INT), uint8 (CT_UINT, 8),
 *  float16/32/64 (CT_FLOAT) and bfloat16 (CT_BFLOAT, 16). */
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

/** Allocate @p bytes on @p device (64-byte aligned on the CPU). The library
 *  itself never calls this inside an op; it exists for callers and tests.
 *  @param[out] ptr set on success; untouched on failure.
 *  @return CT_OK, CT_ERR_INVALID_ARGUMENT, CT_ERR_UNSUPPORTED (device), CT_ERR_OUT_OF_MEMORY. */
CT_API CTStatus ct_malloc(CTDevice device, size_t bytes, void** ptr);

/** Free memory from ct_malloc(). NULL is accepted and ignored. */
CT_API void ct_free(CTDevice device, void* ptr);

/** Copy @p src into @p dst: same shape and dtype, any strides on both sides
 *  (dst must not overlap src except exactly, nor overlap itself: overlap is
 *  decided exactly, within a bound, as for the elementwise ops below).
 *  @return CT_OK or a validation error; dst untouched on failure. */
CT_API CTStatus ct_copy(const CTensor* src, CTensor* dst, void* stream);

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
  CT_KIND_NN = 8           /**< its own ct_<op>(desc, tensors..., workspace, workspace_bytes, stream) and ct_plan_* */
};

/** What dtype an op's output has. */
enum {
  CT_OUTPUT_SAME = 0, /**< the dtype of the (data) inputs */
  CT_OUTPUT_BOOL = 1, /**< bool (predicates) */
  CT_OUTPUT_ANY = 2,  /**< chosen by the caller (cast) */
  CT_OUTPUT_INT64 = 3, /**< int64 (argmax, argmin) */
  CT_OUTPUT_ACCUM = 4, /**< float inputs: the same dtype; integer and bool inputs: int64 (sum, prod, cumsum, cumprod) */
  CT_OUTPUT_FLOAT = 5, /**< float inputs: the same dtype; integer and bool inputs: float64 (div, mean, var, ...) */
  CT_OUTPUT_NN = 6     /**< NN ops: data outputs have the data dtype; statistics, scale and shift are float32; indices int64 */
};

/* The op table, append-only: an op's position here is its id in the ABI.
 * X(ID, name, kind, num_params, summary). Expand it with your own X to
 * generate adapters, e.g. `#define X(ID, n, k, p, s) case CT_OP_##ID: ...`. */
#define CT_ELEMENTWISE_OPS(X)                                                  \
  X(NEG, neg, CT_KIND_UNARY, 0, "-x")                                          \
  X(ABS, abs, CT_KIND_UNARY, 0, "|x|")                                         \
  X(SIGN, sign, CT_KIND_UNARY, 0, "-1, 0 or 1 (NaN stays NaN)")                \
  X(EXP, exp, CT_KIND_UNARY, 0, "e^x")                                         \
  X(EXPM1, expm1, CT_KIND_UNARY, 0, "e^x - 1")                                 \
  X(EXP2, exp2, CT_KIND_UNARY, 0, "2^x")                                       \
  X(LOG, log, CT_KIND_UNARY, 0, "natural logarithm")                           \
  X(LOG1P, log1p, CT_KIND_UNARY, 0, "log(1 + x)")                              \
  X(LOG2, log2, CT_KIND_UNARY, 0, "base-2 logarithm")                          \
  X(SQRT, sqrt, CT_KIND_UNARY, 0, "square root")                               \
  X(RSQRT, rsqrt, CT_KIND_UNARY, 0, "1 / sqrt(x)")                             \
  X(RECIPROCAL, reciprocal, CT_KIND_UNARY, 0, "1 / x")                         \
  X(SQUARE, square, CT_KIND_UNARY, 0, "x * x")                                 \
  X(SIN, sin, CT_KIND_UNARY, 0, "sine")                                        \
  X(COS, cos, CT_KIND_UNARY, 0, "cosine")                                      \
  X(TAN, tan, CT_KIND_UNARY, 0, "tangent")                                     \
  X(TANH, tanh, CT_KIND_UNARY, 0, "hyperbolic tangent")                        \
  X(SIGMOID, sigmoid, CT_KIND_UNARY, 0, "1 / (1 + e^-x)")                      \
  X(RELU, relu, CT_KIND_UNARY, 0, "max(x, 0); NaN stays NaN")                  \
  X(GELU, gelu, CT_KIND_UNARY, 0, "x * Phi(x), erf form")                      \
  X(GELU_TANH, gelu_tanh, CT_KIND_UNARY, 0, "gelu, tanh approximation")        \
  X(SILU, silu, CT_KIND_UNARY, 0, "x * sigmoid(x)")                            \
  X(SOFTPLUS, softplus, CT_KIND_UNARY, 0, "log(1 + e^x)")                      \
  X(ERF, erf, CT_KIND_UNARY, 0, "error function")                              \
  X(FLOOR, floor, CT_KIND_UNARY, 0, "round toward -inf")                       \
  X(CEIL, ceil, CT_KIND_UNARY, 0, "round toward +inf")                         \
  X(ROUND, round, CT_KIND_UNARY, 0, "round half to even")                      \
  X(TRUNC, trunc, CT_KIND_UNARY, 0, "round toward zero")                       \
  X(LOGICAL_NOT, logical_not, CT_KIND_UNARY, 0, "x == 0, as bool")             \
  X(BITWISE_NOT, bitwise_not, CT_KIND_UNARY, 0, "~x (bool: logical not)")      \
  X(ISNAN, isnan, CT_KIND_UNARY, 0, "x is NaN, as bool")                       \
  X(ISINF, isinf, CT_KIND_UNARY, 0, "x is +-inf, as bool")                     \
  X(ISFINITE, isfinite, CT_KIND_UNARY, 0, "x is neither inf nor NaN, as bool") \
  X(LEAKY_RELU, leaky_relu, CT_KIND_UNARY_PARAM, 1, "x >= 0 ? x : alpha * x")  \
  X(ELU, elu, CT_KIND_UNARY_PARAM, 1, "x > 0 ? x : alpha * (e^x - 1)")         \
  X(CLAMP, clamp, CT_KIND_UNARY_PARAM, 2, "min(max(x, lo), hi)")               \
  X(POW_SCALAR, pow_scalar, CT_KIND_UNARY_PARAM, 1, "x ^ p")                   \
  X(ADD_SCALAR, add_scalar, CT_KIND_UNARY_PARAM, 1, "x + s")                   \
  X(MUL_SCALAR, mul_scalar, CT_KIND_UNARY_PARAM, 1, "x * s")                   \
  X(WHERE, where, CT_KIND_TERNARY, 0, "cond ? a : b (cond is bool)")           \
  X(FMA, fma, CT_KIND_TERNARY, 0, "a * b + c, one rounding for floats")        \
  X(LERP, lerp, CT_KIND_TERNARY, 0, "a + w * (b - a)")                         \
  X(CAST, cast, CT_KIND_CAST, 0, "convert to the output's dtype")

/* Category 2, appended after category 1 (ids continue from CT_OP_CAST + 1).
 * Same X(ID, name, kind, num_params, summary) columns. */
#define CT_BROADCAST_REDUCE_OPS(X)                                                         \
  X(ADD, add, CT_KIND_BINARY, 0, "a + b (bool: or)")                                       \
  X(SUB, sub, CT_KIND_BINARY, 0, "a - b")                                                  \
  X(MUL, mul, CT_KIND_BINARY, 0, "a * b (bool: and)")                                      \
  X(DIV, div, CT_KIND_BINARY, 0, "a / b, true division (integers give float64)")          \
  X(FLOOR_DIV, floor_div, CT_KIND_BINARY, 0, "floor(a / b); integer x // 0 = 0")           \
  X(MOD, mod, CT_KIND_BINARY, 0, "a - floor(a / b) * b, sign of b (Python); integer x % 0 = 0") \
  X(POW, pow, CT_KIND_BINARY, 0, "a ^ b")                                                  \
  X(MAXIMUM, maximum, CT_KIND_BINARY, 0, "larger of a, b; NaN if either is NaN")           \
  X(MINIMUM, minimum, CT_KIND_BINARY, 0, "smaller of a, b; NaN if either is NaN")          \
  X(FMAX, fmax, CT_KIND_BINARY, 0, "larger of a, b; ignores one NaN")                      \
  X(FMIN, fmin, CT_KIND_BINARY, 0, "smaller of a, b; ignores one NaN")                     \
  X(ATAN2, atan2, CT_KIND_BINARY, 0, "angle of (b, a), as atan2(a, b)")                    \
  X(HYPOT, hypot, CT_KIND_BINARY, 0, "sqrt(a^2 + b^2) without overflow")                   \
  X(COPYSIGN, copysign, CT_KIND_BINARY, 0, "|a| with the sign of b")                       \
  X(BITWISE_AND, bitwise_and, CT_KIND_BINARY, 0, "a & b")                                  \
  X(BITWISE_OR, bitwise_or, CT_KIND_BINARY, 0, "a | b")                                    \
  X(BITWISE_XOR, bitwise_xor, CT_KIND_BINARY, 0, "a ^ b (bitwise)")                        \
  X(LEFT_SHIFT, left_shift, CT_KIND_BINARY, 0, "a << b; 0 when b is negative or >= bits")  \
  X(RIGHT_SHIFT, right_shift, CT_KIND_BINARY, 0, "a >> b, arithmetic; sign fill when b is negative or >= bits") \
  X(LOGICAL_AND, logical_and, CT_KIND_BINARY, 0, "a != 0 and b != 0, as bool")            \
  X(LOGICAL_OR, logical_or, CT_KIND_BINARY, 0, "a != 0 or b != 0, as bool")               \
  X(LOGICAL_XOR, logical_xor, CT_KIND_BINARY, 0, "(a != 0) != (b != 0), as bool")         \
  X(EQUAL, equal, CT_KIND_BINARY, 0, "a == b, as bool")                                   \
  X(NOT_EQUAL, not_equal, CT_KIND_BINARY, 0, "a != b, as bool")                           \
  X(LESS, less, CT_KIND_BINARY, 0, "a < b, as bool")                                      \
  X(LESS_EQUAL, less_equal, CT_KIND_BINARY, 0, "a <= b, as bool")                         \
  X(GREATER, greater, CT_KIND_BINARY, 0, "a > b, as bool")                                \
  X(GREATER_EQUAL, greater_equal, CT_KIND_BINARY, 0, "a >= b, as bool")                   \
  X(SUM, sum, CT_KIND_REDUCE, 0, "sum; of nothing is 0")                                   \
  X(MEAN, mean, CT_KIND_REDUCE, 0, "sum / count; of nothing is NaN")                       \
  X(PROD, prod, CT_KIND_REDUCE, 0, "product; of nothing is 1")                             \
  X(MAX, max, CT_KIND_REDUCE, 0, "largest; NaN if any is NaN; of nothing is an error")     \
  X(MIN, min, CT_KIND_REDUCE, 0, "smallest; NaN if any is NaN; of nothing is an error")    \
  X(ARGMAX, argmax, CT_KIND_REDUCE, 0, "int64 index of the first largest (first NaN wins)") \
  X(ARGMIN, argmin, CT_KIND_REDUCE, 0, "int64 index of the first smallest (first NaN wins)") \
  X(ANY, any, CT_KIND_REDUCE, 0, "some x != 0, as bool; of nothing is false")              \
  X(ALL, all, CT_KIND_REDUCE, 0, "every x != 0, as bool; of nothing is true")              \
  X(NORM2, norm2, CT_KIND_REDUCE, 0, "sqrt(sum(x^2))")                                     \
  X(LOGSUMEXP, logsumexp, CT_KIND_REDUCE, 0, "log(sum(e^x)) without overflow; of nothing is -inf") \
  X(VAR, var, CT_KIND_REDUCE, 1, "sum((x - mean)^2) / max(count - correction, 0)")         \
  X(STD, std, CT_KIND_REDUCE, 1, "sqrt(var)")                                              \
  X(SOFTMAX, softmax, CT_KIND_ALONG_AXIS, 0, "e^(x - max) / sum(e^(x - max)) along axis") \
  X(LOG_SOFTMAX, log_softmax, CT_KIND_ALONG_AXIS, 0, "x - max - log(sum(e^(x - max))) along axis") \
  X(CUMSUM, cumsum, CT_KIND_ALONG_AXIS, 0, "running sum along axis")                       \
  X(CUMPROD, cumprod, CT_KIND_ALONG_AXIS, 0, "running product along axis")

/** Category 3, NN ops with a workspace query (append-only; ids follow
 *  category 2). Each has its own entry point pair and a descriptor; the
 *  tensors of a plan are the entry point's tensor arguments, in order
 *  (NULL for an optional one that is absent). */
#define CT_NN_OPS(X)                                                                                      \
  X(MATMUL, matmul, CT_KIND_NN, 0, "out = act(a @ b + bias); batched, broadcast batch dims, transposes by strides") \
  X(CONV2D, conv2d, CT_KIND_NN, 0, "y = act(conv2d(x, w) + bias); NCHW or NHWC by strides")            \
  X(CONV2D_BACKWARD_DATA, conv2d_backward_data, CT_KIND_NN, 0, "dx = gradient of conv2d wrt x, from dy and w") \
  X(CONV2D_BACKWARD_WEIGHT, conv2d_backward_weight, CT_KIND_NN, 0, "dw (and dbias) from x and dy")       \
  X(MAX_POOL2D, max_pool2d, CT_KIND_NN, 0, "y = window max; optional int64 indices for the backward")   \
  X(MAX_POOL2D_BACKWARD, max_pool2d_backward, CT_KIND_NN, 0, "dx from dy and the forward's indices")   \
  X(AVG_POOL2D, avg_pool2d, CT_KIND_NN, 0, "y = window mean (count_include_pad either way)")           \
  X(AVG_POOL2D_BACKWARD, avg_pool2d_backward, CT_KIND_NN, 0, "dx from dy")                             \
  X(BATCH_NORM, batch_norm, CT_KIND_NN, 0, "inference: (x - mean) / sqrt(var + eps) * scale + shift per channel") \
  X(BATCH_NORM_TRAINING, batch_norm_training, CT_KIND_NN, 0, "batch statistics: y, mean, invstd")      \
  X(BATCH_NORM_BACKWARD, batch_norm_backward, CT_KIND_NN, 0, "dx, dscale, dshift from x, dy, mean, invstd") \
  X(LAYER_NORM, layer_norm, CT_KIND_NN, 0, "over the last k axes: y, and mean and rstd for the backward") \
  X(LAYER_NORM_BACKWARD, layer_norm_backward, CT_KIND_NN, 0, "dx, dscale, dshift from x, dy, mean, rstd")

/** Op ids. Stable across versions: ops are only appended. */
typedef enum {
#define CT_OP_ENUM_(ID, name, kind, nparams, summary) CT_OP_##ID,
  CT_ELEMENTWISE_OPS(CT_OP_ENUM_)
  CT_BROADCAST_REDUCE_OPS(CT_OP_ENUM_)
  CT_NN_OPS(CT_OP_ENUM_)
#undef CT_OP_ENUM_
  CT_OP_END_ /**< one past the last op id of this header (use ct_op_count() at run time) */
} CTOp;

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
  const char* param_names;     /**< out: comma-separated, e.g. "lo,hi"; "" if none */
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
  uint32_t dtype_mask;         /**< out: the dtypes the op is defined for, bit (1u << CTDtypeIndex) each (the op's rule; a device may run fewer) */
  const char* dtype_rule;      /**< out: that rule in words ("float dtypes only, as in NumPy") */
} CTOpInfo;

/** What a tensor argument of an op is for (CTOpInfo.tensor_roles). Data
 *  tensors share the call's dtype; the others follow their own rule. */
typedef enum {
  CT_ROLE_DATA = 0,  /**< data in the op's dtype */
  CT_ROLE_COND = 1,  /**< a bool condition (where) */
  CT_ROLE_STAT = 2,  /**< float32 statistics, scale or shift (norms) */
  CT_ROLE_BIAS = 3,  /**< the data dtype or float32 (matmul, conv2d) */
  CT_ROLE_INDEX = 4, /**< int64 indices (max-pool) */
  CT_ROLE_ANY = 5    /**< any dtype (cast's output) */
} CTTensorRole;

/** The descriptor an NN op takes (CTOpInfo.desc_type). */
typedef enum {
  CT_DESC_NONE = 0,
  CT_DESC_MATMUL = 1,     /**< CTMatmulDesc */
  CT_DESC_CONV2D = 2,     /**< CTConv2dDesc */
  CT_DESC_POOL2D = 3,     /**< CTPool2dDesc */
  CT_DESC_BATCH_NORM = 4, /**< CTBatchNormDesc */
  CT_DESC_LAYER_NORM = 5  /**< CTLayerNormDesc */
} CTDescType;

/** Dense dtype indices: bit (1u << i) of CTOpInfo.dtype_mask is dtype i. */
typedef enum {
  CT_DT_BOOL = 0,
  CT_DT_INT8 = 1,
  CT_DT_INT16 = 2,
  CT_DT_INT32 = 3,
  CT_DT_INT64 = 4,
  CT_DT_UINT8 = 5,
  CT_DT_FLOAT16 = 6,
  CT_DT_BFLOAT16 = 7,
  CT_DT_FLOAT32 = 8,
  CT_DT_FLOAT64 = 9,
  CT_DT_COUNT /**< one past the last index of this header */
} CTDtypeIndex;

/** Number of ops the runtime library knows (>= CT_OP_END_ of an older header). */
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
 *  of @p dtype (for cast: the source dtype; every listed dtype is a valid
 *  target). Returns CT_OK if so; otherwise CT_ERR_UNSUPPORTED (or
 *  CT_ERR_NOT_FOUND for a bad op id or device) and ct_last_error() says why
 *  ("ct_op_supported: sqrt is not defined for int8: float dtypes only, as in
 *  NumPy"). */
CT_API CTStatus ct_op_supported(int32_t op, CTDevice device, CTDataType dtype);

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
 *  bool, fma(a, b, c) = a * b + c, lerp(a, b, w) = a + w * (b - a). */
CT_API CTStatus ct_ternary(int32_t op, const CTensor* a, const CTensor* b, const CTensor* c,
                           CTensor* out, void* stream);

/** out = x converted to out's dtype, for every pair of supported dtypes.
 *  Float to integer truncates toward zero and saturates (NaN gives 0);
 *  integer to narrower integer wraps modulo 2^bits (as NumPy and C's
 *  conversion to unsigned); to bool is x != 0 (NaN is true); float to
 *  float16/bfloat16 rounds to nearest even, overflowing to +-inf.
 *  A cast between two dtypes never runs in place (CTOpInfo.inplace is 0):
 *  an out that shares any byte with x is CT_ERR_INVALID_ARGUMENT, even
 *  exactly x's bytes with a dtype of the same size (float32 <-> int32). A
 *  cast to x's own dtype is a copy and, like ct_copy, may be exactly x. */
CT_API CTStatus ct_cast(const CTensor* x, CTensor* out, void* stream);

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
 * cumsum/cumprod of integers and bool int64, div/mean/var/std/norm2 of
 * integers float64. float16 and bfloat16 compute in float32; float sums,
 * products and running sums accumulate in float64 on the CPU (at least as
 * accurate as NumPy's pairwise summation; half types at least float32 on
 * every device). Integer sums accumulate in int64. Results do not depend on
 * the number of threads.
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

/* ---- any op by id: output shapes, and the generic NN pair ------------- */

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

#endif /* CTENSOR_CTENSOR_H_ */
