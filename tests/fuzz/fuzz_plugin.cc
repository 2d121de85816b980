// fuzz_plugin.cc — fuzzes the plugin loader: each input loads fake_plugin.c's
// library, whose init registers what the first part of the input says
// (tables with wrong struct_size, NULL slots, duplicate names, odd ABI
// versions, bad op descriptions, failures halfway), then calls its ops and
// built-in ops on its device, the ct_library_* queries, a plan that outlives
// the library, and unloads it.
#include "fuzz_common.h"

namespace {

using fuzz::Input;

const uint8_t* g_plugin_bytes;
size_t g_plugin_size;

// A plan of a plugin NN op on small float32 tensors (inputs and outputs
// of one shape, what fake_plugin's output_shape gives), kept with its
// tensors so that it can run after its library is unloaded.
struct Plan {
  explicit Plan(Input& in) : ts(in) {}
  ~Plan() { ct_plan_destroy(plan); }
  fuzz::Tensors ts;
  const CTensor* args[fuzz::kMaxArgs] = {};
  int32_t n = 0;
  CTPlan* plan = nullptr;
};

void make_plan(Input& in, int32_t op, Plan* p) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  // Each attempt takes num_tensors slots of p->ts and a failed one keeps
  // them: no attempt once the slots would run out.
  if (p->plan || ct_op_info(op, &info) != CT_OK || info.kind != CT_KIND_NN || info.num_tensors > fuzz::kMaxArgs ||
      p->ts.count() + info.num_tensors > fuzz::Tensors::kMax)
    return;
  fuzz::Want w;
  w.ndim = 2;
  w.shape[0] = 2;
  w.shape[1] = 3;
  p->n = info.num_tensors;
  for (int32_t i = 0; i < p->n; ++i) p->args[i] = p->ts.make(w);
  const uint8_t desc[256] = {};
  const void* dp = fuzz::guarded_array(in, desc, info.desc_size);
  const CTStatus s = ct_plan_create(op, dp, p->args, p->n, nullptr, &p->plan);
  fuzz::check_status("ct_plan_create", s);
  if (s != CT_OK && p->plan) fuzz::die("ct_plan_create failed but set its plan");
}

// What a caller does with a loaded library: its facts, its ops (by its id
// list and by wrong indices), built-in ops on whatever devices it brought.
void use_library(Input& in, CTLibrary* lib, Plan* plan) {
  CTLibraryInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  fuzz::check_status("ct_library_info", ct_library_info(lib, &info));
  fuzz::check_status("ct_library_info", ct_library_info(lib, fuzz::sized_struct<CTLibraryInfo>(in)));
  if (info.loaded != 1 || info.num_ops < 0)
    fuzz::die("ct_library_info: loaded=%d num_ops=%d", info.loaded, info.num_ops);
  static const CTDevice kDevices[] = {{CT_CPU, 0}, {CT_EXT_DEV, 0}, {CT_EXT_DEV, 1}, {1000, 0}};
  for (int steps = in.below(4); steps > 0; --steps) {
    const CTDevice dev = kDevices[in.below(4)];
    int32_t op = -1;
    const int32_t index = in.one_in(8) ? (int32_t)in.u32() : (int32_t)in.below(info.num_ops + 1);
    const CTStatus s = ct_library_op(lib, index, in.one_in(16) ? nullptr : &op);
    fuzz::check_status("ct_library_op", s);
    if (s != CT_OK) op = in.below(ct_op_count());
    switch (in.below(4)) {
      case 0: make_plan(in, op, plan); break;
      case 1: {  // the op's example calls (the host checks what fake_plugin wrote)
        uint8_t desc[256];
        int32_t ndim[2];
        int64_t shape[2][CT_MAX_NDIM];
        fuzz::check_status("ct_op_example", ct_op_example(op, in.below(3), 0, desc, sizeof desc, 2, ndim, shape));
        break;
      }
      default: fuzz::call_op(in, op, dev); break;
    }
  }
}

// The loader's lists: loaded libraries and failures, by any index.
void list_libraries(Input& in) {
  CTLibrary* any = nullptr;
  const int32_t i = in.one_in(4) ? (int32_t)in.u32() : (int32_t)in.below(4) - 1;
  fuzz::check_status("ct_library_get", ct_library_get(i, &any));
  fuzz::check_status("ct_library_failure", ct_library_failure(i, fuzz::sized_struct<CTLibraryFailure>(in)));
  if (ct_library_count() < 0 || ct_library_failure_count() < 0) fuzz::die("negative library counts");
}

}  // namespace

// fake_plugin.c's source of orders: the first part of the current input.
extern "C" __attribute__((visibility("default"))) const unsigned char* fuzz_plugin_input(size_t* size) {
  *size = g_plugin_size;
  return g_plugin_bytes;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::init_environment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Byte 0: how many of the following bytes are the plugin's orders.
  const size_t n = size ? data[0] % size : 0;
  g_plugin_bytes = data + (size ? 1 : 0);
  g_plugin_size = n;
  Input in(data + (size ? 1 : 0) + n, size ? size - 1 - n : 0);
  fuzz::Pool::get().reset();

  static const char* const kPaths[] = {CT_FUZZ_FAKE_PLUGIN, CT_FUZZ_FAKE_PLUGIN, CT_FUZZ_FAKE_PLUGIN, nullptr,
                                       "/nonexistent/libfuzz.so", "/"};
  CTLibrary* lib = nullptr;
  const CTStatus s = ct_library_load(kPaths[in.below(6)], in.one_in(16) ? nullptr : &lib);
  fuzz::check_status("ct_library_load", s);
  if (s != CT_OK) {
    if (lib) fuzz::die("ct_library_load failed but set lib");
    list_libraries(in);
    return 0;
  }
  Plan plan(in);
  int32_t first_op = -1;
  use_library(in, lib, &plan);
  list_libraries(in);
  ct_library_op(lib, 0, &first_op);
  const CTStatus u = ct_library_unload(lib);
  fuzz::check_status("ct_library_unload", u);
  if (u != CT_OK) fuzz::die("ct_library_unload of a loaded library failed: %s", ct_last_error());
  // What outlives it: its op ids, and a plan its kernels made (which keeps
  // its code loaded until destroyed, but whose op is gone).
  if (first_op >= 0 && in.one_in(2)) fuzz::call_op(in, first_op, {CT_CPU, 0});
  if (plan.plan) {
    void* ws = fuzz::Pool::get().workspace(64, true);
    plan.ts.snapshot();
    plan.ts.check("ct_plan_execute", ct_plan_execute(plan.plan, plan.args, plan.n, ws, 64, nullptr), 0);
  }
  return 0;
}
