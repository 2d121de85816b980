/*
 * fake_plugin.c — the plugin fuzz_plugin loads. Its ct_plugin_init takes
 * orders from the fuzz input (fuzz_plugin_input(), exported by the harness)
 * and does what they say through the host table: fills CTPluginInfo with
 * any ABI version, name and version string; registers ops whose CTOpDesc
 * has any struct_size, names (duplicate ones included), kinds, tensor
 * strings, masks, rules and callbacks; registers device and kernel tables
 * with any struct_size, version, device type and NULL or fake slots; asks
 * the host's services; and returns any status, halfway or at the end.
 *
 * Its kernels and callbacks touch no tensor memory (the fuzzer checks the
 * host, not them): they answer CT_OK or an error with a message, as the
 * input said at load time. C99, plugin.h and <string.h> only.
 */
#include <ctensor/plugin.h>
#include <string.h>

/* The bytes of the current input meant for this plugin (the harness's). */
extern const unsigned char* fuzz_plugin_input(size_t* size);

static const CTHost* g_host;
static const unsigned char* g_in;
static size_t g_left;
static CTStatus g_kernel_status; /* what every kernel and callback answers */

static unsigned u8(void) {
  if (!g_left) return 0;
  --g_left;
  return *g_in++;
}
static uint32_t u32(void) {
  uint32_t v = u8();
  v |= (uint32_t)u8() << 8;
  v |= (uint32_t)u8() << 16;
  return v | (uint32_t)u8() << 24;
}
static unsigned below(unsigned n) { return u8() % n; }
#define PICK(array) ((array)[below(sizeof(array) / sizeof((array)[0]))])

static CTStatus answer(const char* fn) {
  if (g_kernel_status == CT_OK) return CT_OK;
  return g_host->set_error(g_kernel_status, "%s: fake_plugin's kernel says %d", fn ? fn : "?", (int)g_kernel_status);
}

/* Kernels: every slot of CTKernelInterface, each answering g_kernel_status. */
static CTStatus k_supports(const CTSupportQuery* q) { return answer(q->fn); }
static CTStatus k_elementwise(const CTElementwiseCall* c) { return answer(c->fn); }
static CTStatus k_reduce(const CTReduceCall* c) { return answer(c->fn); }
static CTStatus k_along(const CTAlongAxisCall* c) { return answer(c->fn); }
static CTStatus k_index(const CTIndexCall* c) { return answer(c->fn); }
static CTStatus k_variant(const char* fn, int32_t id, void* stream, int64_t* v) {
  (void)id;
  (void)stream;
  *v = 0;
  return answer(fn);
}
static int g_plan; /* the one plan state: plans need only an address */
static CTStatus k_plan_create(const CTNNCall* c, void** plan, size_t* ws, int64_t* prims) {
  *plan = &g_plan;
  *ws = g_kernel_status == CT_OK ? 0 : 64;
  *prims = 1;
  return answer(c->fn);
}
static CTStatus k_plan_execute(void* plan, const CTNNCall* c, void* ws, size_t bytes) {
  (void)plan;
  (void)ws;
  (void)bytes;
  return answer(c->fn);
}
static void k_plan_destroy(void* plan) { (void)plan; }

/* Op callbacks. */
static CTStatus op_output_shape(const void* desc, const CTensor* const* in, int32_t n, int32_t output, int64_t* shape,
                                int32_t* ndim) {
  int32_t d;
  (void)desc;
  (void)output;
  if (g_kernel_status != CT_OK) return answer("output_shape");
  if (n < 1 || !in[0]) return g_host->set_error(CT_ERR_INVALID_ARGUMENT, "fake_plugin: output_shape needs input 0");
  for (d = 0; d < in[0]->ndim; ++d) shape[d] = in[0]->shape[d];
  *ndim = in[0]->ndim;
  return CT_OK;
}
static CTStatus op_reference(const CTensor* const* t, int32_t n, const double* params, const CTOpArgs* args) {
  (void)t;
  (void)n;
  (void)params;
  (void)args;
  return answer("reference");
}
/* An example of any shape the input said at load: the host checks it. */
static int32_t g_example_ndim;
static int64_t g_example_extent;
static CTStatus op_example(int32_t index, int32_t size, void* desc, int32_t* ndim, int64_t (*shape)[CT_MAX_NDIM]) {
  int32_t i, d;
  (void)desc;
  if (index > 1 || size != 0) return CT_ERR_NOT_FOUND;
  for (i = 0; i < 2; ++i) {
    ndim[i] = g_example_ndim;
    for (d = 0; d < g_example_ndim && d < CT_MAX_NDIM; ++d) shape[i][d] = g_example_extent;
  }
  return index == 1 ? g_kernel_status : CT_OK;
}

/* Device slots. */
static int32_t g_device_count;
static int32_t d_count(void) { return g_device_count; }
static CTStatus d_info(int32_t id, CTDeviceInfo* info) {
  info->device.device_type = CT_EXT_DEV;
  info->device.device_id = id;
  return answer("device_info");
}
static CTStatus d_copy(const CTCopyCall* c) { return answer(c->fn); }
static CTStatus d_sync(int32_t id, void* stream) {
  (void)id;
  (void)stream;
  return answer("synchronize");
}
static CTStatus d_check_stream(const char* fn, int32_t id, void* stream) {
  (void)id;
  (void)stream;
  return answer(fn);
}

static const char* const kOpNames[] = {"fuzz_op_a", "fuzz_op_b", "fuzz_op_c", "add", "", "Bad-Name",
                                       "a_name_of_sixty_four_characters_which_is_one_more_than_allowed_",
                                       "fuzz_op_a"};
static const char* const kTensors[] = {"x|out", "a,b|out", "a,b,c|out", "x,w?:b|y", "x,w?|y,z?:s", "", "|", "x|",
                                       "x:q|out", "x?|out", "a,b,c,d,e,f,g,h,i|out", "x|out,y", "x,w|y", "x,i:i|out"};
static const char* const kParamNames[] = {"", "a", "a,b", "a=1,b=oops", "x=1e999", ",", "a,b,c"};
static const uint32_t kStructSizes[] = {sizeof(CTOpDesc), offsetof(CTOpDesc, example), 0, 4, 8,
                                        sizeof(CTOpDesc) + 16};

static CTStatus register_op(void) {
  static char big[sizeof(CTOpDesc) + 16]; /* room for a struct_size larger than ours */
  CTOpDesc* d = (CTOpDesc*)(void*)big;
  int32_t id = -1;
  memset(big, 0, sizeof big);
  d->struct_size = PICK(kStructSizes);
  d->name = below(16) ? PICK(kOpNames) : NULL;
  d->summary = below(8) ? "a fuzzed op" : NULL;
  d->kind = below(8) ? (int32_t)below(10) : (int32_t)u32();
  d->num_params = (int32_t)below(5) - 1;
  d->param_names = below(16) ? PICK(kParamNames) : NULL;
  d->tensors = below(16) ? PICK(kTensors) : NULL;
  d->dtype_mask = below(4) ? (uint32_t)1 << CT_DT_FLOAT32 : u32();
  d->dtype_rule = below(8) ? "float32" : NULL;
  d->output_dtype = (int32_t)below(9) - 1;
  d->inplace = below(8) ? (int32_t)below(2) : (int32_t)u32();
  d->shape_rule = below(4) ? CT_SHAPE_CUSTOM : (int32_t)below(15) - 1;
  d->desc_type = below(4) ? CT_DESC_CUSTOM : (int32_t)below(8) - 1;
  d->desc_size = below(4) ? 8 : below(2) ? u32() : 257;
  d->output_shape = below(4) ? &op_output_shape : NULL;
  d->reference = below(2) ? &op_reference : NULL;
  d->example = below(2) ? &op_example : NULL;
  return g_host->register_op(d, below(16) ? &id : NULL);
}

static const int32_t kDeviceTypes[] = {CT_EXT_DEV, CT_EXT_DEV, CT_CPU, CT_CUDA, 1000, -1, 0, 0x7fffffff};
static const uint32_t kVersions[] = {CT_PLUGIN_ABI_VERSION, CT_PLUGIN_ABI_VERSION, (CT_PLUGIN_ABI_MAJOR << 16),
                                     CT_PLUGIN_ABI_VERSION + 7, (CT_PLUGIN_ABI_MAJOR + 1) << 16, 0, 0xffffffffu};

static CTStatus register_backend(void) {
  static CTDeviceInterface devs[4];
  static CTKernelInterface kerns[4];
  static unsigned next;
  static const uint32_t kDevSizes[] = {sizeof(CTDeviceInterface), 0, 8, offsetof(CTDeviceInterface, check_stream),
                                       offsetof(CTDeviceInterface, default_allocator)};
  static const uint32_t kKernSizes[] = {sizeof(CTKernelInterface), 0, 8, offsetof(CTKernelInterface, nn_variant),
                                        offsetof(CTKernelInterface, index)};
  CTDeviceInterface* dev = &devs[next % 4];
  CTKernelInterface* k = &kerns[next % 4];
  const unsigned which = below(3); /* device, kernels, both */
  ++next;
  memset(dev, 0, sizeof *dev);
  dev->struct_size = PICK(kDevSizes);
  dev->abi_version = PICK(kVersions);
  dev->device_type = PICK(kDeviceTypes);
  dev->name = below(8) ? "fuzz_dev" : NULL;
  dev->data_is_address = (int32_t)below(2);
  dev->host_accessible = (int32_t)below(2);
  g_device_count = (int32_t)below(4) - 1;
  dev->device_count = below(8) ? &d_count : NULL;
  dev->device_info = below(8) ? &d_info : NULL;
  dev->copy = below(2) ? &d_copy : NULL;
  dev->synchronize = below(2) ? &d_sync : NULL;
  dev->check_stream = below(2) ? &d_check_stream : NULL;
  dev->default_allocator.struct_size = below(2) ? sizeof(CTAllocator) : 0;

  memset(k, 0, sizeof *k);
  k->struct_size = PICK(kKernSizes);
  k->abi_version = PICK(kVersions);
  k->device_type = below(2) ? dev->device_type : PICK(kDeviceTypes);
  k->name = below(8) ? "fuzz_kernels" : NULL;
  k->supports = below(8) ? &k_supports : NULL;
  k->elementwise = below(2) ? &k_elementwise : NULL;
  k->binary = below(2) ? &k_elementwise : NULL;
  k->reduce = below(2) ? &k_reduce : NULL;
  k->along_axis = below(2) ? &k_along : NULL;
  k->nn_variant = below(2) ? &k_variant : NULL;
  k->nn_plan_create = below(2) ? &k_plan_create : NULL;
  k->nn_plan_execute = below(2) ? &k_plan_execute : NULL;
  k->nn_plan_destroy = below(2) ? &k_plan_destroy : NULL;
  k->index = below(2) ? &k_index : NULL;
  return g_host->register_backend(which != 1 ? dev : NULL, which != 0 ? k : NULL);
}

/* The host's services, called from init as a plugin may. */
static void use_host(void) {
  CTOpInfo info;
  void* p = NULL;
  CTDevice cpu;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  g_host->op_info((int32_t)(u32() % 512) - 8, &info);
  (void)g_host->dtype_name((int32_t)below(40) - 8);
  cpu.device_type = CT_CPU;
  cpu.device_id = 0;
  if (g_host->temp_alloc(cpu, below(64), NULL, &p) == CT_OK) g_host->temp_free(cpu, p, NULL);
}

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  static const char* const kNames[] = {"fuzz_fake", "fuzz_fake", "", "bad name!", "cpu",
                                       "a_plugin_name_longer_than_sixty_three_characters_is_refused_by_the_host"};
  static const CTStatus kEnds[] = {CT_OK, CT_OK, CT_OK, CT_ERR_BACKEND, CT_ERR_INVALID_ARGUMENT, 42, -77};
  static const CTStatus kKernelStatuses[] = {CT_OK, CT_OK, CT_ERR_UNSUPPORTED, CT_ERR_BACKEND, CT_ERR_SHAPE_MISMATCH};
  unsigned steps;
  (void)host_version;
  g_host = host;
  g_in = fuzz_plugin_input(&g_left);
  g_kernel_status = PICK(kKernelStatuses);
  g_example_ndim = (int32_t)below(20) - 2;
  g_example_extent = (int64_t)below(6) - 1;
  info->abi_version = PICK(kVersions);
  info->name = below(16) ? PICK(kNames) : NULL;
  info->version = below(16) ? "1.0.0" : NULL;
  for (steps = below(8); steps > 0; --steps) {
    CTStatus s = CT_OK;
    switch (below(5)) {
      case 0:
      case 1: s = register_op(); break;
      case 2: s = register_backend(); break;
      case 3: use_host(); break;
      default: /* fail halfway */
        return host->set_error(below(2) ? CT_ERR_BACKEND : CT_ERR_INVALID_ARGUMENT, "fake_plugin: gave up halfway");
    }
    if (s != CT_OK && below(2)) return s;
  }
  return below(4) ? CT_OK : PICK(kEnds);
}
