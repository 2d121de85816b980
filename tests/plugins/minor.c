/*
 * minor.c — one small plugin built as an older and as a newer minor of the
 * plugin ABI than the host's: -DTEST_MINOR_DELTA=-1 or +1, so it declares
 * CT_PLUGIN_ABI_MAJOR.(CT_PLUGIN_ABI_MINOR + delta). Both must load.
 *
 *  - It registers a device type of its own (TPLUG_MINOR_DEVICE_BASE + its
 *    minor: host memory, one device) with a kernel table that runs neg on
 *    float32 and, when its minor knows register_op (1.1) and the host table
 *    has that slot (host->struct_size), an op tplug_minor<N>_twice
 *    (out = 2 x) that the same table runs.
 *  - Older: its kernel table's struct_size ends before the NN slots, as in
 *    a header without them; the slots past it hold traps that fail loudly
 *    if the host reads beyond struct_size. Its CTOpDesc (minor 1) ends
 *    before example (1.2), which holds a trap: a host that read it would
 *    refuse the op (example on a unary op) and so the load.
 *  - Newer: its CTKernelInterface and CTOpDesc are larger than the host's,
 *    with a trailing slot the host does not know, and it writes its newer
 *    CTPluginInfo field only where info->struct_size says the host has it.
 */
#include <stdio.h>

#include "tplug.h"

#ifndef TEST_MINOR_DELTA
#  error "build with -DTEST_MINOR_DELTA=-1 (older) or 1 (newer)"
#endif
#define TEST_MINOR (CT_PLUGIN_ABI_MINOR + (TEST_MINOR_DELTA))
#if TEST_MINOR < 0
#  error "no minor before 0"
#endif
#define TPLUG_MINOR_DEVICE_BASE 1000

static const CTHost* g_host;
static int32_t g_twice = -1;
static char g_name[32], g_op_name[40];

/* The tables as this plugin's header version has them. */
typedef struct {
  CTKernelInterface k;
  CTStatus (*slot_from_the_future)(const void*); /* newer: a slot the host does not know */
} Kernels;
typedef struct {
  CTOpDesc d;
  const char* field_from_the_future;
} OpDesc;
typedef struct {
  CTPluginInfo info;
  const char* description; /* newer: written only if the host's info has room */
} PluginInfo;

static float neg(float x, float y) { (void)y; return -x; }
static float twice(float x, float y) { (void)y; return 2.0f * x; }

static CTStatus supports(const CTSupportQuery* q) {
  if (q->dt == CT_DT_FLOAT32 && (q->op == CT_OP_NEG || (g_twice >= 0 && q->op == g_twice))) return CT_OK;
#if TEST_MINOR_DELTA < 0
  if (q->kind == CT_KIND_NN) return CT_OK; /* only asked if the host read the NN slots past struct_size */
#endif
  return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: %s runs only neg and its own op on float32", q->fn, g_name);
}

static CTStatus elementwise(const CTElementwiseCall* c) {
  tplug_map(c, c->op == CT_OP_NEG ? neg : twice);
  return CT_OK;
}

static CTStatus trap_variant(const char* fn, int32_t id, void* stream, int64_t* v) {
  (void)id;
  (void)stream;
  (void)v;
  return g_host->set_error(CT_ERR_INTERNAL, "%s: %s: the host read a kernel slot past struct_size", fn, g_name);
}
static CTStatus trap_create(const CTNNCall* call, void** plan, size_t* ws, int64_t* prims) {
  (void)plan;
  (void)ws;
  (void)prims;
  return g_host->set_error(CT_ERR_INTERNAL, "%s: %s: the host read a kernel slot past struct_size", call->fn, g_name);
}
static CTStatus trap_execute(void* plan, const CTNNCall* call, void* ws, size_t bytes) {
  (void)plan;
  (void)ws;
  (void)bytes;
  return g_host->set_error(CT_ERR_INTERNAL, "%s: %s: the host read a kernel slot past struct_size", call->fn, g_name);
}
static void trap_destroy(void* plan) { (void)plan; }
static CTStatus trap_example(int32_t index, int32_t size, void* desc, int32_t* ndim, int64_t (*shape)[CT_MAX_NDIM]) {
  (void)index;
  (void)size;
  (void)desc;
  (void)ndim;
  (void)shape;
  return g_host->set_error(CT_ERR_INTERNAL, "%s: the host read CTOpDesc.example past struct_size", g_name);
}
static CTStatus future(const void* p) {
  (void)p;
  return CT_ERR_INTERNAL;
}

static int32_t device_count(void) { return 1; }
static CTStatus device_info(int32_t id, CTDeviceInfo* info) {
  info->device.device_type = TPLUG_MINOR_DEVICE_BASE + TEST_MINOR;
  info->device.device_id = id;
  snprintf(info->name, sizeof info->name, "%s device (host memory)", g_name);
  snprintf(info->backend, sizeof info->backend, "%s", g_name);
  info->compute_units = 1;
  return CT_OK;
}

CT_PLUGIN_EXPORT CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  static CTDeviceInterface dev;
  static Kernels kern;
  (void)host_version;
  g_host = host;
  g_twice = -1;
  snprintf(g_name, sizeof g_name, "tplug_minor%d", TEST_MINOR);
  snprintf(g_op_name, sizeof g_op_name, "tplug_minor%d_twice", TEST_MINOR);
  info->abi_version = (uint32_t)((CT_PLUGIN_ABI_MAJOR << 16) | TEST_MINOR);
  info->name = g_name;
  info->version = "1.0.0";
  if (info->struct_size >= sizeof(PluginInfo)) ((PluginInfo*)info)->description = "a newer field";

#if TEST_MINOR >= 1 /* register_op is in this plugin's header (ABI 1.1) */
  if (host->struct_size >= offsetof(CTHost, register_op) + sizeof host->register_op) {
    static OpDesc d;
    CTStatus s;
    tplug_op_desc(&d.d, g_op_name, CT_KIND_UNARY);
    if (TEST_MINOR_DELTA > 0) {
      d.d.struct_size = sizeof d; /* a newer CTOpDesc */
      d.field_from_the_future = "ignored by an older host";
    }
#if TEST_MINOR < 2 /* a CTOpDesc of ABI 1.1: it ends with reference */
    d.d.struct_size = (uint32_t)offsetof(CTOpDesc, example);
    d.d.example = &trap_example;
#else
    (void)&trap_example;
#endif
    if ((s = host->register_op(&d.d, &g_twice)) != CT_OK) return s;
  }
#endif

  memset(&dev, 0, sizeof dev);
  dev.struct_size = sizeof dev;
  dev.abi_version = (uint32_t)((CT_PLUGIN_ABI_MAJOR << 16) | TEST_MINOR);
  dev.device_type = TPLUG_MINOR_DEVICE_BASE + TEST_MINOR;
  dev.name = g_name;
  dev.data_is_address = 1;
  dev.host_accessible = 1;
  dev.device_count = &device_count;
  dev.device_info = &device_info;

  memset(&kern, 0, sizeof kern);
  kern.k.abi_version = dev.abi_version;
  kern.k.device_type = dev.device_type;
  kern.k.name = g_name;
  kern.k.supports = &supports;
  kern.k.elementwise = &elementwise;
  kern.k.nn_variant = &trap_variant;
  kern.k.nn_plan_create = &trap_create;
  kern.k.nn_plan_execute = &trap_execute;
  kern.k.nn_plan_destroy = &trap_destroy;
  kern.slot_from_the_future = &future;
  if (TEST_MINOR_DELTA < 0) {
    kern.k.struct_size = (uint32_t)offsetof(CTKernelInterface, nn_variant); /* no NN slots in an older table */
  } else {
    kern.k.struct_size = sizeof kern; /* a newer, larger table */
    kern.k.nn_variant = NULL;
    kern.k.nn_plan_create = NULL;
    kern.k.nn_plan_execute = NULL;
    kern.k.nn_plan_destroy = NULL;
  }
  return host->register_backend(&dev, &kern.k);
}
