// nn_internal.h — what core's NN files share: the validated call, the op's
// tensor arguments, descriptor loading, the shape rules and validation
// (nn_validate.cc), used by the entry points and plans (nn.cc) and by the
// shape query (shape.cc).
#ifndef CTENSOR_SRC_CORE_NN_INTERNAL_H_
#define CTENSOR_SRC_CORE_NN_INTERNAL_H_

#include <ctensor/plugin.h>

namespace ct {

struct Library;  // core/library.h

constexpr int kMaxTensors = CT_NN_MAX_TENSORS;
using Shape = char[24 * CT_MAX_NDIM + 4];

// A validated NN call inside core: the plugin.h call plus storage for the
// descriptor it points to (copied at full size, defaults applied).
// The largest descriptor a plugin's NN op may have (CT_DESC_CUSTOM).
constexpr size_t kMaxCustomDesc = 256;

struct NNCall {
  const char* fn;
  int32_t op;
  int32_t dt;
  int64_t variant;
  int32_t device_id;
  int32_t num_tensors;
  const CTensor* t[CT_NN_MAX_TENSORS];
  CTMatmulDesc matmul;
  CTConv2dDesc conv;
  CTPool2dDesc pool;
  CTBatchNormDesc bn;
  CTLayerNormDesc ln;
  CTAttentionDesc attn;
  unsigned char custom[kMaxCustomDesc];  // a plugin op's descriptor (CT_DESC_CUSTOM), custom_size bytes
  size_t custom_size;
  const Library* owner;  // the plugin library of the kernel table that runs it (NULL: built in)
};

// Drops the cached plans that lib's kernel tables made (its unload).
void drop_cached_plans(const Library* lib);

// An NN op's tensor arguments, from its description row.
struct Names {
  int32_t count = 0, inputs = 0;
  const char* name[kMaxTensors];
  bool optional[kMaxTensors];
  int32_t role[kMaxTensors];
};
const Names& names_of(int32_t op);

// What a shape rule fixes about one tensor argument.
struct Expect {
  bool known = false;
  int32_t ndim = 0;
  int64_t shape[CT_MAX_NDIM];
  int32_t dt = -1;         // CTDtypeIndex it has when it is an output
  bool any_dtype = false;  // a bias: the data dtype or float32
  bool has_keep = false;   // also accepted with the normalized axes kept as 1 (layer_norm's statistics)
  int32_t keep_ndim = 0;
  int64_t keep[CT_MAX_NDIM];
  // What the shape comes from, for the message when a tensor has another:
  // a printf format with up to two %s filled by why_a and why_b ("conv2d of
  // %s and %s", "x", "w"). Formatted only for that message (why_text), not
  // on every call.
  const char* why = "";
  const char* why_a = "";
  const char* why_b = "";
};
// Expect::why with its arguments, into buf.
const char* why_text(const Expect& e, char* buf, size_t size);

// Copies the op's descriptor into c (full size, defaults applied) after checking it.
CTStatus load_op_desc(const char* fn, int32_t op, const void* desc, NNCall* c);
// The descriptor inside c for c's op, and its size.
const void* desc_of(const NNCall& c, size_t* size);
// The plugin.h view of a core call, for the backend.
CTNNCall backend_call(const NNCall& c, const CTensor* const* t, void* stream);
// The shapes the op's rule fixes for its tensor arguments t (outputs may be
// NULL); hint[2] gives the extents the inputs leave open (NULL: inferred).
CTStatus nn_shapes(const char* fn, const NNCall* c, const CTensor* const* t, const int64_t* hint, Expect* e);
// Everything about a call except the data: descriptor, tensors, dtypes,
// shapes, layouts, device and kernels. With data = false, data pointers are
// not read.
CTStatus validate(const char* fn, int32_t op, const void* desc, const CTensor* const* t, int32_t num, void* stream,
                  bool data, NNCall* c, const CTKernelInterface** kern);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_NN_INTERNAL_H_
