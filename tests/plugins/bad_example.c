/*
 * bad_example.c — an NN-kind op (tplug_bad_example: x, w? | y, y of x's
 * shape, a 4-byte descriptor) whose example callback (ABI 1.2) answers
 * wrongly on purpose, one fault per index of size 0, so that
 * ct_op_example's checks can be tested: each fault must come back as a clear
 * error, never a crash, with the caller's buffers untouched. Indices 7 and 8
 * are valid examples (with and without w); size 1 has none. The op has no
 * kernels: only its row and its examples matter.
 *
 * Built with -DTPLUG_EXAMPLE_ON_UNARY it puts an example on a unary op
 * instead, which register_op refuses (and with it the load).
 */
#include "tplug.h"

static const CTHost* g_host;
static int32_t g_op = -1;

/* The descriptor: only its struct_size. */
typedef struct {
  uint32_t struct_size;
} Desc;

/* y has x's shape; x needs a dim; w, when given, is (x.shape[-1],). */
static CTStatus output_shape(const void* desc, const CTensor* const* in, int32_t num_inputs, int32_t output,
                             int64_t* shape, int32_t* ndim) {
  const CTensor *x = in[0], *w = in[1];
  int32_t d;
  (void)desc;
  if (num_inputs != 2 || output != 0)
    return g_host->set_error(CT_ERR_INVALID_ARGUMENT, "takes x, w? and one output");
  if (x->ndim < 1) return g_host->set_error(CT_ERR_SHAPE_MISMATCH, "x must have at least one dim (it has 0)");
  if (w && (w->ndim != 1 || w->shape[0] != x->shape[x->ndim - 1]))
    return g_host->set_error(CT_ERR_SHAPE_MISMATCH, "w must be (x.shape[-1],)");
  for (d = 0; d < x->ndim; ++d) shape[d] = x->shape[d];
  *ndim = x->ndim;
  return CT_OK;
}

/* Size 0, index: the fault (0-6) or a valid example (7: with w, 8: without). */
static CTStatus example(int32_t index, int32_t size, void* desc, int32_t* ndim, int64_t (*shape)[CT_MAX_NDIM]) {
  Desc dd;
  dd.struct_size = sizeof dd;
  if (size != 0) return CT_ERR_NOT_FOUND;
  switch (index) {
    case 0: /* x is required: -1 is not allowed */
      ndim[0] = -1;
      ndim[1] = -1;
      return CT_OK;
    case 1: /* more dims than CT_MAX_NDIM */
      ndim[0] = CT_MAX_NDIM + 1;
      ndim[1] = -1;
      return CT_OK;
    case 2: /* a negative extent */
      ndim[0] = 2;
      shape[0][0] = 3;
      shape[0][1] = -4;
      ndim[1] = -1;
      return CT_OK;
    case 3: /* ndim[1] never written */
      ndim[0] = 1;
      shape[0][0] = 5;
      return CT_OK;
    case 4: /* not a status at all */
      ndim[0] = 1;
      shape[0][0] = 5;
      ndim[1] = -1;
      return (CTStatus)42;
    case 5: /* shapes the op's own output_shape refuses: a 0-d x */
      ndim[0] = 0;
      ndim[1] = -1;
      memcpy(desc, &dd, sizeof dd);
      return CT_OK;
    case 6: /* a failure of the plugin's own, with its message */
      return g_host->set_error(CT_ERR_OUT_OF_MEMORY, "tplug_bad_example: no memory for example %d", (int)index);
    case 7:
    case 8:
      memcpy(desc, &dd, sizeof dd);
      ndim[0] = 2;
      shape[0][0] = 2;
      shape[0][1] = 3;
      ndim[1] = index == 7 ? 1 : -1;
      shape[1][0] = 3;
      return CT_OK;
    default: return CT_ERR_NOT_FOUND;
  }
}

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  CTOpDesc d;
  (void)host_version;
  g_host = host;
  info->abi_version = CT_PLUGIN_ABI_VERSION;
  info->version = "1.0.0";
#if defined(TPLUG_BAD_PARAM_NAMES)
  info->name = "tplug_bad_param_names";
  tplug_op_desc(&d, "tplug_bad_param_names", CT_KIND_UNARY_PARAM);
  d.num_params = 2;
  d.param_names = "alpha=0.5,beta=oops";
  (void)&example;
  (void)&output_shape;
#elif defined(TPLUG_EXAMPLE_ON_UNARY)
  info->name = "tplug_example_on_unary";
  tplug_op_desc(&d, "tplug_example_on_unary", CT_KIND_UNARY);
  d.example = &example;
  (void)&output_shape;
#else
  info->name = "tplug_bad_example";
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.name = "tplug_bad_example";
  d.summary = "a test plugin's NN op whose examples are wrong on purpose";
  d.kind = CT_KIND_NN;
  d.param_names = "";
  d.tensors = "x,w?|y";
  d.dtype_mask = 1u << CT_DT_FLOAT32;
  d.dtype_rule = "float32 only";
  d.output_dtype = CT_OUTPUT_SAME;
  d.shape_rule = CT_SHAPE_CUSTOM;
  d.desc_type = CT_DESC_CUSTOM;
  d.desc_size = sizeof(Desc);
  d.output_shape = &output_shape;
  d.example = &example;
#endif
  return host->register_op(&d, &g_op);
}
