/*
 * plugin.h — the one interface between ctensor's core and every backend:
 * the built-in CPU backend, the OpenCL and CUDA modules, and third-party
 * plugins all fill these same C tables (in the spirit of ggml's
 * ggml_backend_*_i tables and ONNX Runtime's OrtEp / OrtDataTransferImpl).
 *
 * C99, includes only ctensor.h. Only C types cross this boundary, so a
 * backend built with another compiler or C++ standard library works.
 *
 * How it fits together:
 *  - A backend registers a CTDeviceInterface (a device type: its devices,
 *    memory, copies, streams) and/or a CTKernelInterface (kernels for one
 *    device type) through the host's register_backend (ct_plugin_host()).
 *  - Core validates every call once (shapes, dtypes, devices, overlaps,
 *    descriptors), then asks the device type's kernel tables, in order of
 *    registration, whether they support the op (supports()) and calls the
 *    first that does. Kernels trust their arguments.
 *  - A backend talks back through the CTHost table it is given: errors,
 *    op facts, temporary device memory from the caller's allocator.
 *
 * Versioning: every struct starts with struct_size; tables also carry
 * abi_version (CT_PLUGIN_ABI_VERSION as the backend was built). The host
 * reads only the bytes the backend's struct_size covers (slots beyond it
 * count as NULL) and refuses a different major with CT_ERR_ABI_VERSION.
 * Tables are looked up by op id at run time: nothing is sized by the
 * number of ops a header knew at compile time.
 */
#ifndef CTENSOR_PLUGIN_H_
#define CTENSOR_PLUGIN_H_

#include "ctensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The version of this interface: major in the high 16 bits. A different
 *  major does not load; a different minor does, through struct_size.
 *  Minors: 1.1 added CTHost.register_op and CTOpDesc; 1.2 CTOpDesc.example
 *  (and ct_op_example); 1.3 CTElementwiseCall.numel and .flags; 1.4
 *  CTKernelInterface.index and CTIndexCall (CT_KIND_INDEX ops). */
#define CT_PLUGIN_ABI_MAJOR 1
#define CT_PLUGIN_ABI_MINOR 4
#define CT_PLUGIN_ABI_VERSION ((uint32_t)((CT_PLUGIN_ABI_MAJOR << 16) | CT_PLUGIN_ABI_MINOR))

/* ------------------------------------------------------------------------ */
/* Validated calls, one struct per kind of op                               */
/* ------------------------------------------------------------------------ */
/* Core fills these after validation; a kernel trusts every field. dtype
 * fields are CTDtypeIndex values. `fn` names the entry point the caller
 * called ("ct_unary"), for messages. `stream` is the caller's stream,
 * already accepted by the device's check_stream. */

/** Elementwise maps (unary, unary_param, ternary, cast) and binary ops.
 *  Every tensor has out's shape: inputs that broadcast (binary, ternary)
 *  come as views with stride 0 on the broadcast dims. */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTElementwiseCall) */
  int32_t op;
  const char* fn;
  int32_t num_inputs;   /**< 1, 2 or 3 */
  int32_t out_dt;
  const CTensor* in[3]; /**< the inputs in the op's order; unused ones NULL */
  const CTensor* out;
  int32_t in_dt[3];     /**< -1 for unused inputs */
  double params[2];     /**< the op's scalar parameters, 0 when unused; cast: params[0] is the CTCastMode (ct_cast_ex) */
  void* stream;
  /* ---- since 1.3: a kernel reads these only if struct_size covers them ---- */
  int64_t numel;        /**< elements of out (at least 1: core returns before calling for 0) */
  uint32_t flags;       /**< CT_CALL_* facts core established while validating */
} CTElementwiseCall;

/** CTElementwiseCall.flags: out and every input are compact row-major with
 *  out's shape (no broadcast view) and each starts at a multiple of its
 *  element size: the call is one contiguous run of numel elements. */
#define CT_CALL_DENSE 1u

/** A reduction. Bit d of reduce_mask is set when dim d of x is reduced;
 *  out_strides[d] is out's stride (elements) for dim d of x, 0 on reduced
 *  dims, whatever keepdims was. */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTReduceCall) */
  int32_t op;
  const char* fn;
  const CTensor* x;
  const CTensor* out;
  int32_t x_dt;
  int32_t out_dt;
  uint32_t reduce_mask;
  int32_t reserved;
  int64_t count; /**< elements reduced into each output */
  int64_t out_strides[CT_MAX_NDIM];
  double params[1];
  void* stream;
} CTReduceCall;

/** An along-axis op: out has x's shape; axis is in [0, x->ndim) (a 0-d x
 *  comes as a 1-d view of one element). */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTAlongAxisCall) */
  int32_t op;
  const char* fn;
  const CTensor* x;
  const CTensor* out;
  int32_t x_dt;
  int32_t out_dt;
  int32_t axis;
  int32_t reserved;
  void* stream;
} CTAlongAxisCall;

/** What an index op's kernel does (CTIndexCall.mode). */
enum {
  CT_INDEX_GATHER = 0,      /**< out[p] = data[p + wrap(index[p]) * axis_stride] for every p of out */
  CT_INDEX_SCATTER = 1,     /**< out[p + wrap(index[p]) * axis_stride] = data[p], in order along the last dim */
  CT_INDEX_SCATTER_ADD = 2  /**< the same with +=, data scaled by alpha first when alpha != 1 */
};

/** An index op (CT_KIND_INDEX), lowered by core to one loop over views that
 *  all have one shape (`data`'s, `index`'s and `out`'s shape are equal):
 *   - gather (take, gather): the loop is out's shape; data is x viewed with
 *     stride 0 along the dims the index replaces, index is viewed over out's
 *     shape (stride 0 where it does not vary);
 *   - scatter (scatter, scatter_add, index_add): the loop is (lines..., K)
 *     with the indexed axis last; out is out viewed with stride 0 along K,
 *     data is src, index the index, each over that shape. Core has already
 *     written x into out (or out is x). Elements of one line must be
 *     written in order of k (deterministic results); lines may run in
 *     parallel (they never share an element of out).
 *  wrap(i) = i < 0 ? i + axis_extent : i. On the CPU core has checked every
 *  index; a kernel of a device without that check must not touch memory for
 *  an i outside [-axis_extent, axis_extent): gather writes 0, scatter skips. */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTIndexCall) */
  int32_t op;
  const char* fn;
  int32_t mode;         /**< CT_INDEX_* */
  int32_t dt;           /**< CTDtypeIndex of data and out */
  int32_t index_dt;     /**< CT_DT_INT64 or CT_DT_INT32 */
  int32_t reserved;
  const CTensor* data;  /**< gather: x's view; scatter: src's */
  const CTensor* index;
  const CTensor* out;
  int64_t axis_stride;  /**< elements between consecutive positions along the indexed axis (x's for gather, out's for scatter) */
  int64_t axis_extent;  /**< the indexed axis's extent n */
  double alpha;         /**< CT_INDEX_SCATTER_ADD: the scale of data (index_add's alpha; 1 otherwise) */
  int64_t numel;        /**< elements of the loop (at least 1) */
  void* stream;
} CTIndexCall;

/** Most tensor arguments any NN op has. */
#define CT_NN_MAX_TENSORS 8

/** An NN call (category 3). desc is the op's descriptor (CTOpInfo.desc_type)
 *  at this library's full size with defaults applied: zero strides,
 *  dilations and groups made 1, a zero pool stride made the kernel. t[i] are
 *  the op's tensor arguments in order, NULL for an absent optional one; when
 *  a plan is created their data pointers are not to be read. */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTNNCall) */
  int32_t op;
  const char* fn;
  int32_t dt;           /**< CTDtypeIndex of the data tensors */
  int32_t num_tensors;
  int64_t variant;      /**< what the kernel table's nn_variant said for the stream (the CPU: its thread count); fixed for a plan */
  const CTensor* t[CT_NN_MAX_TENSORS];
  const void* desc;
  size_t desc_size;
  void* stream;         /**< at execution: the caller's stream; at plan creation: the stream the plan was asked for (may be NULL) */
} CTNNCall;

/** A copy between two tensors of the same shape and dtype, any strides,
 *  where each side is on this backend's device type or on the host CPU
 *  (CT_CPU), and at least one is this backend's. Asynchronous on the
 *  stream where the device has streams. dst does not overlap src. */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTCopyCall) */
  int32_t dt;           /**< CTDtypeIndex of both */
  const char* fn;
  const CTensor* src;
  const CTensor* dst;
  void* stream;         /**< the stream of this backend's device */
} CTCopyCall;

/** What core asks a kernel table before a call (and for ct_op_supported):
 *  does it run op for these dtypes on this device? */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTSupportQuery) */
  int32_t op;
  const char* fn;       /**< for the message */
  int32_t kind;         /**< CT_KIND_* of op */
  int32_t dt;           /**< CTDtypeIndex of the data inputs (cast: the source) */
  int32_t out_dt;       /**< CTDtypeIndex of the output (cast: the target; NN: the data dtype, or float32 for matmul's out of float16/bfloat16 data: refuse what you do not run), -1 when not known yet */
  int32_t device_id;
} CTSupportQuery;

/* ------------------------------------------------------------------------ */
/* New ops                                                                   */
/* ------------------------------------------------------------------------ */

/** CTOpDesc.shape_rule for NN-kind plugin ops: output_shape computes them. */
#define CT_SHAPE_CUSTOM 100
/** CTOpDesc.desc_type for NN-kind plugin ops: a descriptor of desc_size
 *  bytes that only the plugin reads (core copies it, applies no defaults). */
#define CT_DESC_CUSTOM 100

/** An op a plugin adds: the same facts as a row of ctensor.h's op table
 *  (CTOpInfo says what each means). Strings are copied by the host.
 *  Elementwise, binary, reduce and along-axis kinds run through ct_unary,
 *  ct_binary, ... by id, validated as the built-ins of their kind. An NN
 *  kind runs through ct_nn / ct_nn_workspace_size / ct_plan_create: core
 *  checks the tensors (count, required ones, devices, dtypes by role,
 *  layouts, overlaps) and compares each output's shape with output_shape;
 *  the kernel table's nn_plan_* slots run it. */
typedef struct CTOpDesc {
  uint32_t struct_size;     /**< sizeof(CTOpDesc) */
  const char* name;         /**< unique among all ops: "bias_gelu" ([a-z0-9_], at most 63 characters) */
  const char* summary;      /**< one line */
  int32_t kind;             /**< CT_KIND_*: selects the entry point (ct_unary, ct_binary, ..., ct_nn); not CT_KIND_CAST */
  int32_t num_params;       /**< scalar double parameters (elementwise and reduce kinds, at most 2) */
  const char* param_names;  /**< comma-separated, "" if none */
  const char* tensors;      /**< the tensor arguments, as ctensor.h's rows: "x,bias?:bias|y" (inputs, then '|', then outputs; '?' optional, ':role') */
  uint32_t dtype_mask;      /**< bit (1u << CTDtypeIndex): the dtypes the op is defined for */
  const char* dtype_rule;   /**< that rule in words, for messages */
  int32_t output_dtype;     /**< CT_OUTPUT_* */
  int32_t inplace;          /**< 1 if out may be exactly an input */
  int32_t shape_rule;       /**< CT_SHAPE_SAME/BROADCAST/REDUCE for those kinds; NN kind: CT_SHAPE_CUSTOM */
  int32_t desc_type;        /**< NN kind: CT_DESC_CUSTOM (or CT_DESC_NONE: no descriptor) */
  size_t desc_size;         /**< NN kind: bytes of the descriptor (CT_DESC_CUSTOM: 1..256; core copies that many bytes from the caller's desc) */
  /** NN kind: the shape of output `output` (0 = the first output) from the
   *  inputs (inputs[i] NULL for an absent optional one; data not to be
   *  read) and the descriptor. Fills shape[0..*ndim); CT_OK, or an error
   *  through set_error naming what is wrong. */
  CTStatus (*output_shape)(const void* desc, const CTensor* const* inputs, int32_t num_inputs, int32_t output,
                           int64_t* shape, int32_t* ndim);
  /** Optional, for `ctensor check`: the op on host memory in plain loops,
   *  the trusted answer every device is compared with. tensors are the
   *  op's tensor arguments in order (inputs, then outputs), in host memory
   *  and validated as the op's entry point validates them: outputs have the
   *  shapes and dtypes ct_op_output_info gives; inputs of broadcasting ops
   *  (binary, ternary) come as views of the output's shape with stride 0 on
   *  broadcast dims, as kernels get them. params are the scalar parameters
   *  (num_params of them), args the rest: axes, num_axes and keepdims of a
   *  reduction, the axis of an along-axis op (made non-negative), the
   *  descriptor of an NN op. */
  CTStatus (*reference)(const CTensor* const* tensors, int32_t num_tensors, const double* params,
                        const CTOpArgs* args);
  /* ---- since ABI 1.2 (the host reads it only when struct_size covers it) ---- */
  /** Optional, NN kind only (the host refuses it on other kinds): the
   *  index-th example call of the op, for tools that must invent valid
   *  arguments (`ctensor check`, `ctensor bench`; callers use ct_op_example).
   *  size 0: small (a check case, a few hundred elements); 1: large (a
   *  benchmark, beyond the caches). Writes the descriptor (desc_size bytes,
   *  zeroed by the host beforehand) into desc, and each input's ndim and
   *  shape into ndim[i] and shape[i] (i < the op's input count; ndim[i] = -1:
   *  an optional input left out); the outputs' shapes come from
   *  output_shape. The host checks what it wrote (ndim in -1..CT_MAX_NDIM,
   *  -1 only for optional inputs, extents >= 0, a call output_shape accepts)
   *  before a caller sees it. CT_ERR_NOT_FOUND (no message needed) past the
   *  last example of that size; examples 0..n-1 of a size exist together. */
  CTStatus (*example)(int32_t index, int32_t size, void* desc, int32_t* ndim, int64_t (*shape)[CT_MAX_NDIM]);
} CTOpDesc;

/** Runs op's reference (CTOpDesc.reference) on host tensors, as `ctensor
 *  check` does: tensors are the op's tensor arguments (inputs, then
 *  outputs), params its num_params scalars, args as for ct_op_output_info
 *  (NULL: all zero). Validated first, as the op's own entry point would.
 *  @return the reference's status; CT_ERR_NOT_FOUND when the op has none
 *          (built-in ops: the tool's reference library); validation's
 *          statuses (shape, dtype, argument errors), outputs untouched. */
CT_API CTStatus ct_op_reference(int32_t op, const CTensor* const* tensors, int32_t num_tensors, const double* params,
                                const CTOpArgs* args);

/** Example call `index` of size `size` (0: small, a check case; 1: large, a
 *  benchmark) of an NN op whose plugin gives examples (CTOpDesc.example, ABI
 *  1.2), as `ctensor check` and `ctensor bench` use them: writes the op's
 *  descriptor (desc_size bytes of CTOpInfo; the rest of desc_bytes is left
 *  as it was) into desc, and for each of the num_inputs inputs its ndim and
 *  shape (ndim[i] = -1: an optional input left out). Outputs' shapes follow
 *  from ct_op_output_info; with random data of the op's dtypes the call is
 *  then a valid ct_nn call. What the plugin wrote is checked first (ndim,
 *  extents, optional inputs, that its output_shape accepts the call).
 *  @return CT_OK; CT_ERR_NOT_FOUND past the last example (for index 0: the
 *          op has none, as every built-in op), or for an op id that names
 *          no op; CT_ERR_UNSUPPORTED for an op not of the NN kind;
 *          CT_ERR_INVALID_ARGUMENT for NULL pointers (desc may be NULL only
 *          when desc_size is 0), a negative index, a size other than 0 or 1,
 *          desc_bytes < desc_size, num_inputs other than the op's;
 *          CT_ERR_BACKEND when the plugin wrote something invalid; the
 *          plugin's status when it failed otherwise. On failure desc, ndim
 *          and shape are untouched. */
CT_API CTStatus ct_op_example(int32_t op, int32_t index, int32_t size, void* desc, size_t desc_bytes,
                              int32_t num_inputs, int32_t* ndim, int64_t (*shape)[CT_MAX_NDIM]);

/* ------------------------------------------------------------------------ */
/* The host: what core offers a backend                                      */
/* ------------------------------------------------------------------------ */

typedef struct CTDeviceInterface CTDeviceInterface;
typedef struct CTKernelInterface CTKernelInterface;

/** Services the host gives every backend. */
typedef struct {
  uint32_t struct_size; /**< sizeof(CTHost) of the library */
  uint32_t abi_version; /**< CT_PLUGIN_ABI_VERSION of the library */
  /** Sets this thread's error message (printf format) and returns status. */
  CTStatus (*set_error)(CTStatus status, const char* fmt, ...);
  /** ct_op_info. */
  CTStatus (*op_info)(int32_t op, CTOpInfo* info);
  /** A static name for a CTDtypeIndex ("float32"), "?" when out of range. */
  const char* (*dtype_name)(int32_t dt);
  /** Temporary device memory through the allocator the caller installed
   *  for device.device_type (or the backend's default_allocator). */
  CTStatus (*temp_alloc)(CTDevice device, size_t bytes, void* stream, void** ptr);
  void (*temp_free)(CTDevice device, void* ptr, void* stream);
  /** Registers a device type and/or a kernel table (either may be NULL, not
   *  both; kernels for a device type that is not registered yet are
   *  refused). All-or-nothing: on failure nothing is registered. */
  CTStatus (*register_backend)(const CTDeviceInterface* device, const CTKernelInterface* kernels);
  /* ---- since ABI 1.1 ---- */
  /** Registers a new op (CTOpDesc); its id, after the built-ins, in *op.
   *  Called from ct_plugin_init, the op belongs to the library being loaded
   *  and goes with it. A name already taken is refused. */
  CTStatus (*register_op)(const CTOpDesc* desc, int32_t* op);
} CTHost;

/** The host table of this library (static; never NULL). A backend linked
 *  into the process calls ct_plugin_host()->register_backend(...). */
CT_API const CTHost* ct_plugin_host(void);

/* ------------------------------------------------------------------------ */
/* The device part                                                           */
/* ------------------------------------------------------------------------ */

/** A device type: its devices, memory, copies and streams. Any slot may be
 *  NULL except device_count and device_info; a NULL copy means data moves
 *  only through host-accessible memory. */
struct CTDeviceInterface {
  uint32_t struct_size;   /**< sizeof(CTDeviceInterface) as the backend knows it */
  uint32_t abi_version;   /**< CT_PLUGIN_ABI_VERSION the backend was built with */
  int32_t device_type;    /**< CT_CPU, CT_CUDA, CT_OPENCL, CT_EXT_DEV, ...: one table per type */
  const char* name;       /**< "cpu", "cuda", ...: static */
  /** 1 if CTensor.data is an address (host or device virtual address):
   *  core then checks spans, overlaps and address overflow on it. 0 for
   *  handles (an OpenCL cl_mem): only tensors with the same data handle are
   *  compared, by byte_offset and strides. */
  int32_t data_is_address;
  /** 1 if the host CPU can read and write this device's memory directly
   *  (core may then stage copies through it with memcpy). */
  int32_t host_accessible;
  /** How many devices of this type there are: asked once, when the device
   *  registers (the count is fixed for the process, as cudaGetDeviceCount's). */
  int32_t (*device_count)(void);
  /** Fills info (zeroed, struct_size full) for device id. */
  CTStatus (*device_info)(int32_t id, CTDeviceInfo* info);
  CTStatus (*malloc)(int32_t id, size_t bytes, void** ptr);
  void (*free)(int32_t id, void* ptr);
  /** Copies between this device type's devices and the host, within one device, or between two of its devices (ids may differ). */
  CTStatus (*copy)(const CTCopyCall* call);
  CTStatus (*synchronize)(int32_t id, void* stream);
  /** CT_OK if stream is a valid stream argument for device id (NULL always
   *  is); else a message naming fn. NULL slot: any value is accepted. */
  CTStatus (*check_stream)(const char* fn, int32_t id, void* stream);
  /** The allocator temp_alloc uses when the caller installed none. */
  CTAllocator default_allocator;
};

/* ------------------------------------------------------------------------ */
/* The kernel part                                                           */
/* ------------------------------------------------------------------------ */

/** Kernels for one device type. Several tables may serve one type (a
 *  plugin adding ops to the CPU); core asks them in order of registration
 *  and runs the first whose supports() says CT_OK. NULL slots: the table
 *  has no op of that kind. */
struct CTKernelInterface {
  uint32_t struct_size;  /**< sizeof(CTKernelInterface) as the backend knows it */
  uint32_t abi_version;  /**< CT_PLUGIN_ABI_VERSION the backend was built with */
  int32_t device_type;   /**< the device type these kernels run on */
  const char* name;      /**< "cpu", "onednn", "my_plugin": static */
  /** CT_OK if this table runs q->op for these dtypes; otherwise
   *  CT_ERR_UNSUPPORTED with a message (through set_error) saying why. The
   *  answer must depend only on the query (core remembers a yes for an op
   *  and dtype; to change answers, register a new table). Cheap: core asks
   *  whenever it has no remembered yes. */
  CTStatus (*supports)(const CTSupportQuery* q);
  CTStatus (*elementwise)(const CTElementwiseCall* call);
  CTStatus (*binary)(const CTElementwiseCall* call);
  CTStatus (*reduce)(const CTReduceCall* call);
  CTStatus (*along_axis)(const CTAlongAxisCall* call);
  /** NN plans. nn_variant says what distinguishes plans for this stream
   *  (the CPU: its thread count; NULL slot: 0); it is part of the plan
   *  cache's key and of CTNNCall.variant. nn_plan_create builds the state
   *  for one call shape (data pointers not read) and says how much
   *  workspace an execution needs and how many backend primitives it made;
   *  nn_plan_execute runs it on the call's tensors (same shapes as at
   *  creation; must be safe to call concurrently); nn_plan_destroy frees it. */
  CTStatus (*nn_variant)(const char* fn, int32_t device_id, void* stream, int64_t* variant);
  CTStatus (*nn_plan_create)(const CTNNCall* call, void** plan, size_t* workspace_bytes, int64_t* primitives);
  CTStatus (*nn_plan_execute)(void* plan, const CTNNCall* call, void* workspace, size_t workspace_bytes);
  void (*nn_plan_destroy)(void* plan);
  /* ---- since ABI 1.4 (the host reads it only when struct_size covers it) ---- */
  CTStatus (*index)(const CTIndexCall* call); /**< CT_KIND_INDEX ops */
};

/* ------------------------------------------------------------------------ */
/* The entry point of a plugin library                                       */
/* ------------------------------------------------------------------------ */

/** What a plugin says about itself, from ct_plugin_init. */
typedef struct {
  uint32_t struct_size;  /**< set by the host: sizeof(CTPluginInfo) as it knows it */
  uint32_t abi_version;  /**< set by the plugin: CT_PLUGIN_ABI_VERSION it was built with */
  const char* name;      /**< set by the plugin: static, [A-Za-z0-9_.-], unique among loaded plugins */
  const char* version;   /**< set by the plugin: static, its own version ("1.0.0") */
} CTPluginInfo;

/** The one symbol a plugin library exports (CT_PLUGIN_INIT_SYMBOL):
 *  CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info)
 *  host_version is the loading library's CT_PLUGIN_ABI_VERSION. The plugin
 *  fills info, then registers its ops (host->register_op), devices and
 *  kernel tables (host->register_backend), and returns CT_OK; or returns an
 *  error set through host->set_error, and everything it registered is
 *  dropped. It may check host_version and host->struct_size to use slots
 *  of newer minors. It must not throw, longjmp or exit. */
typedef CTStatus (*CTPluginInitFn)(const CTHost* host, uint32_t host_version, CTPluginInfo* info);
#define CT_PLUGIN_INIT_SYMBOL "ct_plugin_init"

/** Optional: `CT_PLUGIN_EXPORT const uint32_t ct_plugin_abi_version =
 *  CT_PLUGIN_ABI_VERSION;` lets the host refuse another major before any of
 *  the plugin's code runs (without it, info->abi_version is checked after
 *  ct_plugin_init, and its registrations are then dropped). */
#define CT_PLUGIN_ABI_SYMBOL "ct_plugin_abi_version"

/** Optional second symbol, void ct_plugin_fini(void): called once, after
 *  the library's last call and plan have ended and before it is closed. */
typedef void (*CTPluginFiniFn)(void);
#define CT_PLUGIN_FINI_SYMBOL "ct_plugin_fini"

#if defined(_WIN32)
#  define CT_PLUGIN_EXPORT __declspec(dllexport)
#else
#  define CT_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CTENSOR_PLUGIN_H_ */
