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
  void* data;           /**< base pointer (for OpenCL, a cl_mem); may be NULL only when the tensor has no elements */
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
 *  (dst must not overlap src except exactly, nor overlap itself).
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
  CT_CATEGORY_NN = 3           /**< NN ops with a workspace query (later) */
};

/** Kinds of op, each with one entry point. */
enum {
  CT_KIND_UNARY = 1,       /**< ct_unary(op, x, out, stream) */
  CT_KIND_UNARY_PARAM = 2, /**< ct_unary_param(op, x, params, num_params, out, stream) */
  CT_KIND_TERNARY = 3,     /**< ct_ternary(op, a, b, c, out, stream) */
  CT_KIND_CAST = 4,        /**< ct_cast(x, out, stream) */
  CT_KIND_BINARY = 5,      /**< ct_binary(op, a, b, out, stream), NumPy broadcasting */
  CT_KIND_REDUCE = 6,      /**< ct_reduce(op, x, axes, num_axes, keepdims, params, num_params, out, stream) */
  CT_KIND_ALONG_AXIS = 7   /**< ct_along_axis(op, x, axis, out, stream): same shape, each line along axis */
};

/** What dtype an op's output has. */
enum {
  CT_OUTPUT_SAME = 0, /**< the dtype of the (data) inputs */
  CT_OUTPUT_BOOL = 1, /**< bool (predicates) */
  CT_OUTPUT_ANY = 2,  /**< chosen by the caller (cast) */
  CT_OUTPUT_INT64 = 3, /**< int64 (argmax, argmin) */
  CT_OUTPUT_ACCUM = 4, /**< float inputs: the same dtype; integer and bool inputs: int64 (sum, prod, cumsum, cumprod) */
  CT_OUTPUT_FLOAT = 5  /**< float inputs: the same dtype; integer and bool inputs: float64 (div, mean, var, ...) */
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

/** Op ids. Stable across versions: ops are only appended. */
typedef enum {
#define CT_OP_ENUM_(ID, name, kind, nparams, summary) CT_OP_##ID,
  CT_ELEMENTWISE_OPS(CT_OP_ENUM_)
  CT_BROADCAST_REDUCE_OPS(CT_OP_ENUM_)
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
  int32_t num_inputs;          /**< out: tensor inputs (1, 2 or 3) */
  int32_t num_params;          /**< out: scalar double parameters */
  const char* param_names;     /**< out: comma-separated, e.g. "lo,hi"; "" if none */
  int32_t output_dtype;        /**< out: CT_OUTPUT_* */
  int32_t inplace;             /**< out: 1 if out may be exactly an input */
} CTOpInfo;

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
 * CT_ERR_INVALID_ARGUMENT. Operands share the dtype, except: predicates
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
 *  float16/bfloat16 rounds to nearest even, overflowing to +-inf. */
CT_API CTStatus ct_cast(const CTensor* x, CTensor* out, void* stream);

/* ------------------------------------------------------------------------ */
/* Category 2: broadcasting binary ops, reductions, along-axis ops           */
/* ------------------------------------------------------------------------ */
/*
 * Inputs may have any strides (0 and negative included) and any
 * byte_offset; outputs must not overlap themselves or an input, except that
 * the out of a binary or along-axis op may be exactly an input whose shape
 * is out's (in-place). A reduction's out never shares memory with x.
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
 *                         non-NULL empty set reduces over none (NumPy's axis=())
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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CTENSOR_CTENSOR_H_ */
