// api_internal.h — entry-point bodies that more than one file of core runs
// (api.cc defines them; copy.cc and nn.cc call them).
#ifndef CTENSOR_SRC_CORE_API_INTERNAL_H_
#define CTENSOR_SRC_CORE_API_INTERNAL_H_

#include <ctensor/plugin.h>

namespace ct {

// Validates and runs an elementwise op (unary, unary_param, ternary, cast)
// on one device; names[] and out_name name the arguments in messages. A
// cast's kernels get cast_mode (a CTCastMode, checked by the caller) as
// params[0].
// def: the op's row when the caller has looked it up (NULL: looked up here).
struct OpDef;
CTStatus run_elementwise(const char* fn, int32_t op, const CTensor* const* in, const char* const* names,
                         int32_t nin, const double* params, int32_t nparams, const CTensor* out,
                         const char* out_name, void* stream, int32_t cast_mode = CT_CAST_DEFAULT,
                         const OpDef* def = nullptr);

// NumPy broadcasting of n tensors into shape[*nd]; a message naming the
// offending arguments otherwise.
CTStatus broadcast(const char* fn, const CTensor* const* t, const char* const* names, int32_t n, int64_t* shape,
                   int32_t* nd);

// The reduction of x over axes (ct_reduce's rules): the mask of reduced
// dims, the output shape want[*wn], the elements per output and the outputs.
CTStatus reduce_shape(const char* fn, const CTensor* x, const int32_t* axes, int32_t num_axes, int32_t keepdims,
                      uint32_t* mask, int64_t* want, int32_t* wn, int64_t* count, int64_t* outer);

// A view of t with out's rank and shape: missing leading dims and extents
// of 1 that out does not have become stride 0 (strides: CT_MAX_NDIM).
void broadcast_view(const CTensor* t, const CTensor* out, int64_t* strides, CTensor* view);

// The output dtype an op's rule gives for data dtype dt (-1: the caller's choice).
int32_t output_dtype(int32_t rule, int32_t dt);

// t on out's device (a message naming arg and both devices otherwise).
CTStatus check_same_device(const char* fn, const char* arg, const CTensor* t, const CTensor* out);

// CT_OK when op exists and is of `kind` (its row in *def); else a message
// naming the entry point it needs ("entry" is the caller's kind in words).
CTStatus op_of_kind(const char* fn, int32_t op, int32_t kind, const char* entry, const OpDef** def);

// The kernel table that runs op for dtype dt (output out_dt) on a device of b.
struct Backend;
CTStatus op_kernels(const char* fn, const OpDef* d, int32_t op, const Backend* b, int32_t device_id, int32_t dt,
                    int32_t out_dt, const CTKernelInterface** k);

// index.cc: the output shape of a CT_KIND_INDEX op (ct_index's shape rules),
// with the axis normalised into *axis_out.
CTStatus index_shape(const char* fn, const OpDef* d, const CTensor* x, const CTensor* index, const CTensor* src,
                     int32_t axis, int32_t* axis_out, int64_t* shape, int32_t* nd);

// ct_cast between two devices: through a temporary on out's device.
CTStatus cast_across_devices(const char* fn, const CTensor* x, const CTensor* out, void* stream, int32_t cast_mode);

// shape.cc: a caller's CTOpArgs (NULL: all zero) into *a, read up to its
// struct_size, which must be sizeof(CTOpArgs) or more (a newer caller), or
// end exactly where one of its fields ends (an older one): a size ending
// inside a field would half copy a pointer.
CTStatus load_op_args(const char* fn, const CTOpArgs* args, CTOpArgs* a);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_API_INTERNAL_H_
