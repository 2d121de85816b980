// fuzz_abi.cc — fuzzes the C ABI through the registry: any op (plugin ops
// included, since ops are found with ct_op_count / ct_op_info) through its
// kind's entry point and sometimes another kind's, the shape query
// ct_op_output_info, the generic NN pair with arbitrary descriptor bytes,
// ct_copy, ct_op_reference, and the registry's and devices' queries.
#include "fuzz_common.h"

namespace {

using fuzz::Input;
using fuzz::count_arg;
using fuzz::guarded_array;
using fuzz::kMaxArgs;
using fuzz::sized_struct;

// The registry's, the devices' and the libraries' queries.
void call_query(Input& in) {
  const int32_t op = in.one_in(4) ? (int32_t)in.i64() : (int32_t)in.below(ct_op_count());
  CTDevice dev = {CT_CPU, 0};
  if (in.one_in(2)) dev = {(int32_t)in.below(20) - 1, (int32_t)in.below(4) - 1};
  switch (in.below(10)) {
    case 0:
      fuzz::check_status("ct_op_info", ct_op_info(op, in.one_in(16) ? nullptr : sized_struct<CTOpInfo>(in)));
      break;
    case 1: {
      char name[80] = {};
      in.take(name, in.below(sizeof name - 1));
      const char* np = in.one_in(16) ? nullptr : guarded_array(in, name, std::strlen(name) + 1);
      int32_t* id = in.one_in(16) ? nullptr : guarded_array(in, &op, 1);
      fuzz::check_status("ct_op_find", ct_op_find(np, id));
      break;
    }
    case 2: {
      CTDataType dt = fuzz::pick_dtype(in, 0);
      if (in.one_in(4)) dt = {in.u8(), in.u8(), (uint16_t)in.below(3)};
      fuzz::check_status("ct_op_supported", ct_op_supported(op, dev, dt));
      break;
    }
    case 3:
      fuzz::check_status("ct_cast_supported", ct_cast_supported(dev, fuzz::pick_dtype(in, 0), fuzz::pick_dtype(in, 0)));
      break;
    case 4: {
      const int32_t i = in.one_in(4) ? (int32_t)in.u32() : (int32_t)in.below(4) - 1;
      fuzz::check_status("ct_device_info", ct_device_info(i, in.one_in(16) ? nullptr : sized_struct<CTDeviceInfo>(in)));
      break;
    }
    case 5:
      if (!ct_status_string((CTStatus)in.u32())) fuzz::die("ct_status_string returned NULL");
      fuzz::check_status("ct_synchronize", ct_synchronize(dev, fuzz::pick_stream(in)));
      break;
    case 6: {
      void* p = nullptr;
      const size_t n = in.below(3) ? in.below(4097) : 0;
      const CTStatus s = ct_malloc(dev, n, in.one_in(16) ? nullptr : &p);
      fuzz::check_status("ct_malloc", s);
      if (s == CT_OK && p && n) std::memset(p, 0x5a, n);
      ct_free(dev, p);
      break;
    }
    case 7: {  // example calls: none of the built-ins has one
      uint8_t desc[256];
      int32_t ndim[kMaxArgs];
      int64_t shape[kMaxArgs][CT_MAX_NDIM];
      const int32_t ni = in.below(kMaxArgs + 1), claim = count_arg(in, ni), n = fuzz::room(ni, claim, kMaxArgs);
      const size_t db = in.below(257);
      CTStatus s = ct_op_example(op, (int32_t)in.i64(), (int32_t)in.below(4) - 1,
                                 in.one_in(8) ? nullptr : guarded_array(in, desc, db), db, claim,
                                 in.one_in(8) ? nullptr : guarded_array(in, ndim, n),
                                 in.one_in(8) ? nullptr : guarded_array(in, shape, n));
      fuzz::check_status("ct_op_example", s);
      break;
    }
    case 8: {
      CTLibrary* lib = nullptr;
      const int32_t i = in.one_in(4) ? (int32_t)in.u32() : (int32_t)in.below(4) - 1;
      fuzz::check_status("ct_library_load", ct_library_load(nullptr, &lib));
      fuzz::check_status("ct_library_get", ct_library_get(i, in.one_in(4) ? nullptr : &lib));
      fuzz::check_status("ct_library_failure",
                   ct_library_failure(i, in.one_in(16) ? nullptr : sized_struct<CTLibraryFailure>(in)));
      if (ct_library_count() < 0 || ct_library_failure_count() < 0) fuzz::die("negative library counts");
      break;
    }
    default: {
      CTPlanCacheInfo* ci = in.one_in(16) ? nullptr : sized_struct<CTPlanCacheInfo>(in);
      fuzz::check_status("ct_plan_cache_info", ct_plan_cache_info(ci));
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::init_environment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  fuzz::Pool::get().reset();
  if (in.one_in(8)) {
    call_query(in);
  } else {
    const int32_t op = in.one_in(32) ? (int32_t)in.i64() : (int32_t)in.below(ct_op_count());
    fuzz::call_op(in, op, {CT_CPU, 0});
  }
  return 0;
}
