// common.h — what the parts of ctensor._ctensor share: errors, dtypes, the Tensor and Arg types, outputs.
//
// The module is split by concern, one source file each:
//   module.cpp   the module itself: dtype objects, registry metadata, wiring
//   common.cpp   errors, dtypes, the shape query and output allocation
//   dlpack.cpp   DLPack import (any array argument) and export (capsules)
//   tensor.cpp   the Tensor type: storage, attributes, buffer protocol
//   ops.cpp      the functions generated from the op registry (categories 1 and 2)
//   nn.cpp       NN ops by id through ct_nn, and the shape query for Python
//   devices.cpp  devices: names, enumeration, copies between devices
//   library.cpp  plugin libraries: load, unload, what each brought
#ifndef CTENSOR_PY_COMMON_H_
#define CTENSOR_PY_COMMON_H_

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include <ctensor/ctensor.h>

#include "dlpack_abi.h"

namespace nb = nanobind;

namespace ctpy {

// ---- errors: the library's status and message become a Python exception ----

PyObject* exception_for(CTStatus s);
[[noreturn]] void raise_status(CTStatus s);
[[noreturn]] void raise(PyObject* type, const char* fmt, ...);
inline void check(CTStatus s) {
  if (s != CT_OK) raise_status(s);
}

// ---- Python numbers as C numbers, checked ----
// nb::cast<double>/<int64_t> throws std::bad_cast (a RuntimeError without a
// word of context) for a list, an array or an int beyond the C type; these
// raise TypeError (not a number) or ValueError (out of range) naming the
// function, the argument and what was given.
double to_double(nb::handle h, const char* fn, const char* arg);
int64_t to_int64(nb::handle h, const char* fn, const char* arg);
int32_t to_int32(nb::handle h, const char* fn, const char* arg);

// ---- dtypes ----

struct DTypeEntry {
  const char* name;
  CTDataType dt;
};
extern const DTypeEntry kDTypes[CT_DT_COUNT];  // in CTDtypeIndex order

// A dtype as Python sees it: ctensor.float32 and friends.
struct DType {
  CTDataType dt;
};

inline bool same_dtype(CTDataType a, CTDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }
inline bool is_floating(CTDataType d) { return d.code == CT_FLOAT || d.code == CT_BFLOAT; }
inline size_t itemsize(CTDataType d) { return (size_t(d.bits) * d.lanes + 7) / 8; }
std::string dtype_name(CTDataType d);
// The dtype names, comma-separated, for messages.
std::string dtype_list();
bool try_parse_dtype(nb::handle h, CTDataType* out);
CTDataType parse_dtype(nb::handle h, const char* fn, const char* arg);
std::string shape_str(int ndim, const int64_t* shape);

// ---- memory and the result type (tensor.cpp) ----

// Reference-counted device memory, shared by a Tensor and the DLPack
// capsules it exports; freed without the GIL (DLPack deleters may run anywhere).
// On the CPU the block and the data are one allocation (the data 64 bytes in).
struct Storage {
  std::atomic<int64_t> refs{1};
  void* ptr = nullptr;
  CTDevice device{CT_CPU, 0};
  bool inline_data = false;
  bool readonly = false;  // imported from a read-only producer (asarray): never an out=
  int block_class = -1;  // inline CPU blocks: the size class of the small-block cache (tensor.cpp), or -1
  size_t bytes = 0;       // the bytes from ptr that views may reach (as_strided checks against them)
  struct Foreign* foreign = nullptr;  // asarray: what keeps another library's memory alive (ptr not ours)
};
void storage_release(Storage* s);

struct Tensor {
  Storage* storage = nullptr;
  CTensor t{};
  // The first t.ndim entries are set by whoever makes the Tensor; the rest
  // are never read (not cleared: 256 bytes per result).
  int64_t shape[CT_MAX_NDIM];
  int64_t strides[CT_MAX_NDIM];
  Tensor() {}
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() { storage_release(storage); }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < t.ndim; ++i) n *= shape[i];
    return n;
  }
};

extern PyTypeObject* g_tensor_type;

// A new, uninitialised, row-major tensor on `dev`. Returns the Python object;
// *out points at its C++ half.
nb::object new_tensor(int ndim, const int64_t* shape, CTDataType dt, CTDevice dev, Tensor** out);
void init_tensor(nb::module_& m);

// ---- importing an argument (dlpack.cpp) ----

// How many of each import path ran (tests check the fast paths are taken).
struct ImportStats {
  uint64_t tensor = 0, numpy = 0, exchange = 0, dlpack_versioned = 0, dlpack_legacy = 0, buffer = 0, scalar = 0;
};
extern ImportStats g_stats;
extern PyObject* g_max_version;  // (1, 3), kept for the life of the process

// One imported argument: a CTensor plus whatever keeps its memory alive.
struct Arg {
  CTensor t{};
  int64_t shape[CT_MAX_NDIM];
  int64_t strides[CT_MAX_NDIM];
  alignas(8) unsigned char scalar[8];
  PyObject* obj = nullptr;  // borrowed: the caller's argument
  bool present = false;
  bool is_scalar = false;
  bool readonly = false;
  bool has_view = false;
  Py_buffer view;
  DLManagedTensor* legacy = nullptr;
  DLManagedTensorVersioned* versioned = nullptr;
  nb::object keep;  // a scalar's 0-d Tensor on a device other than the CPU
  void* stream = nullptr;  // a device tensor's producer's current work stream (DLPack exchange API), if it said

  Arg() {}  // not "= default": value-initialisation would clear the dims arrays (256 bytes) per argument
  Arg(const Arg&) = delete;
  Arg& operator=(const Arg&) = delete;
  ~Arg() { release(); }
  void release();
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
    return n;
  }
  // Point the CTensor at our own shape/stride arrays (copying a producer's).
  void own_dims(int ndim, const int64_t* sh, const int64_t* st, const char* fn, const char* name);
};

// Import `o` into `a`. Scalars (bool, int, float) are recorded when
// allow_scalar and filled in later by fill_scalar, once their dtype is known.
void import_arg(Arg& a, PyObject* o, bool is_out, bool allow_scalar, const char* fn, const char* name);
void require_writable(const Arg& a, const char* fn, const char* name);
// A recorded Python scalar as a 0-d tensor of dtype `dt` (NEP 50's weak scalars).
void fill_scalar(Arg& a, CTDataType dt, CTDevice dev, const char* fn, const char* name);
// Tensor.__dlpack__.
nb::object tensor_dlpack(nb::handle self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy);

// ---- running: threads, the GIL ----

extern CTCpuStream g_cpu_stream;
// The stream ctensor.set_stream installed for dev on this thread (nullptr: none).
void* user_stream(CTDevice dev);
// Whether this thread has installed any (so imports need not ask).
bool any_user_stream();
// The stream a call on dev runs on: on the CPU, the thread count
// set_num_threads chose; elsewhere the stream ctensor.set_stream installed
// for the device on this thread, else the producer's current work stream
// (a torch CUDA tensor's, through DLPack's exchange API), else NULL (CUDA's
// legacy default stream, OpenCL's device queue).
inline void* stream_for(CTDevice dev, void* producer = nullptr) {
  if (dev.device_type == CT_CPU) return g_cpu_stream.num_threads != 0 ? &g_cpu_stream : nullptr;
  if (void* s = user_stream(dev)) return s;
  return producer;
}
inline void* stream_for(const Arg& a) { return stream_for(a.t.device, a.stream); }

// Below this many elements, releasing and retaking the GIL costs more than
// the kernel (NumPy keeps it below 500 elements).
constexpr int64_t kReleaseGilAbove = 1 << 12;

template <class F>
CTStatus run_kernel(int64_t work, F&& f) {
  if (work > kReleaseGilAbove) {
    nb::gil_scoped_release nogil;
    return f();
  }
  return f();
}

// ---- the op registry and the shape query (common.cpp) ----

CTOpInfo op_info(int32_t op);
// The entry point an op runs through, as its messages name it: "ct_binary", "ct_nn(conv2d)".
std::string entry_name(const CTOpInfo& info);
// ct_op_output_info for `op`, raising on failure. The query answers with the
// status the op's entry point would return for these inputs; its message is
// reported under the name of that entry point (`entry`), which is what the
// caller called.
void query_outputs(int32_t op, const CTOpArgs& args, const CTensor* const* in, int32_t nin, CTOutputInfo* outs,
                   int32_t nout, const char* entry);

// The out= argument, or a new tensor shaped by the shape query.
struct Out {
  Arg arg;
  nb::object result;  // what the call returns
  CTensor* t = nullptr;
  Tensor* fresh = nullptr;
};
// out= given: import it (writable). Otherwise allocate the op's single output on `dev`.
void make_out(Out& o, nb::handle out, int32_t op, const CTOpArgs& args, const CTensor* const* in, int32_t nin,
              CTDevice dev, const char* fn, const char* entry);
int64_t numel_of(const CTensor& t);

// ---- parts that register functions ----

void init_ops(nb::module_& m, nb::dict bound);
// The functions of ops `ids` (a plugin's, at its load), made as init_ops
// makes the built-ins': ({python name: function}, {op id: names}).
nb::tuple bind_ops(const std::vector<int32_t>& ids);
void init_nn(nb::module_& m);
void init_library(nb::module_& m);

// ---- devices (devices.cpp) ----

std::string device_str(CTDevice d);
// "cpu", "cuda:1", (2, 1), a DeviceInfo, a torch.device ...; raises ValueError for
// an unknown name. With must_exist, also for a device no registered backend has.
CTDevice parse_device(nb::handle h, const char* fn, bool must_exist);
bool device_exists(CTDevice d);
inline bool same_device(CTDevice a, CTDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; }
// A copy of `src` on `dev` with dtype `dt` (ct_copy, or ct_cast when the dtype changes), synchronised.
nb::object copy_to(const CTensor& src, CTDevice dev, CTDataType dt, const char* fn);
// ctensor.copy(x, device, out=): a copy of any array on `device`, or written into `out` (any devices).
nb::object copy_array(nb::handle x, nb::handle device, nb::handle out);
nb::object tensor_to(nb::handle self, nb::handle device, nb::handle dtype, bool copy);
void init_devices(nb::module_& m);

}  // namespace ctpy

#endif  // CTENSOR_PY_COMMON_H_
