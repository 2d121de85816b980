// devices.cpp — devices: their names, every registered backend's devices, copies between devices, CPU threads.
//
// ctensor.devices() lists what ct_device_count / ct_device_info report (the
// devices of every registered backend). A device is named as DLPack types
// it ("cpu", "cuda:1", "opencl:0"; an extension device type by its backend,
// "loopback:0") or given as a (device_type, device_id) pair; naming one no
// backend has is a ValueError. Tensor.to, Tensor.copy_
// and ctensor.copy move data with ct_copy (ct_cast when the dtype changes),
// which works between any two devices.
#include "common.h"

#include <cstring>

namespace ctpy {

namespace {

// DLPack's device type names (DLDeviceType without the kDL prefix, lower case).
struct DeviceName {
  int32_t type;
  const char* name;
};
const DeviceName kDeviceNames[] = {
    {CT_CPU, "cpu"},       {CT_CUDA, "cuda"},           {CT_CUDA_HOST, "cuda_host"}, {CT_OPENCL, "opencl"},
    {CT_VULKAN, "vulkan"}, {CT_METAL, "metal"},         {CT_VPI, "vpi"},             {CT_ROCM, "rocm"},
    {CT_ROCM_HOST, "rocm_host"}, {CT_EXT_DEV, "ext_dev"}, {CT_CUDA_MANAGED, "cuda_managed"},
    {CT_ONEAPI, "oneapi"}, {CT_WEBGPU, "webgpu"},       {CT_HEXAGON, "hexagon"},
};

CTDeviceInfo device_info(int32_t i) {
  CTDeviceInfo info{};
  info.struct_size = sizeof info;
  check(ct_device_info(i, &info));
  return info;
}

// The backend registered for a device type ("loopback"), or "" if none.
std::string backend_of(int32_t type) {
  const int32_t n = ct_device_count();
  for (int32_t i = 0; i < n; ++i) {
    CTDeviceInfo info{};
    info.struct_size = sizeof info;
    if (ct_device_info(i, &info) == CT_OK && info.device.device_type == type) return info.backend;
  }
  return "";
}

// A device type's name: DLPack's, except that an extension device type
// (kDLExtDev says nothing of what it is) takes its backend's name.
std::string type_name(int32_t type) {
  if (type == CT_EXT_DEV) {
    const std::string b = backend_of(type);
    if (!b.empty()) return b;
  }
  for (const auto& d : kDeviceNames)
    if (d.type == type) return d.name;
  return "dev" + std::to_string(type);
}

// DLPack's names, "devN", and the name of any registered backend.
bool type_from_name(const std::string& s, int32_t* type) {
  for (const auto& d : kDeviceNames)
    if (s == d.name) return *type = d.type, true;
  if (s.rfind("dev", 0) == 0 && s.size() > 3 && s.size() < 8 &&
      s.find_first_not_of("0123456789", 3) == std::string::npos)
    return *type = (int32_t)std::stoi(s.substr(3)), true;
  const int32_t n = ct_device_count();
  for (int32_t i = 0; i < n; ++i) {
    const CTDeviceInfo info = device_info(i);
    if (s == info.backend) return *type = info.device.device_type, true;
  }
  return false;
}

std::string known_devices() {
  std::string s;
  const int32_t n = ct_device_count();
  for (int32_t i = 0; i < n; ++i) s += (i ? ", " : "") + device_str(device_info(i).device);
  return s.empty() ? "none" : s;
}

// Copy (or convert) src into dst, devices as they are; then wait for the
// devices that are not the CPU, so that host memory is ready and may go.
void transfer(const CTensor& src, CTensor& dst) {
  // the stream of the device that is not the CPU (ct_copy's rule), and of each device to wait for
  const CTDevice dev = dst.device.device_type != CT_CPU ? dst.device : src.device;
  void* stream = stream_for(dev);
  const bool convert = !same_dtype(src.dtype, dst.dtype);
  check(run_kernel(numel_of(src), [&] {
    CTStatus s = convert ? ct_cast(&src, &dst, stream) : ct_copy(&src, &dst, stream);
    if (s == CT_OK && src.device.device_type != CT_CPU) s = ct_synchronize(src.device, stream_for(src.device));
    if (s == CT_OK && dst.device.device_type != CT_CPU && !same_device(src.device, dst.device))
      s = ct_synchronize(dst.device, stream_for(dst.device));
    return s;
  }));
}

// ctensor.set_stream's streams, per device, for this thread.
thread_local std::vector<std::pair<CTDevice, void*>> t_streams;

}  // namespace

void* user_stream(CTDevice dev) {
  for (const auto& e : t_streams)
    if (same_device(e.first, dev)) return e.second;
  return nullptr;
}

bool any_user_stream() { return !t_streams.empty(); }

std::string device_str(CTDevice d) {
  if (d.device_type == CT_CPU && d.device_id == 0) return "cpu";
  return type_name(d.device_type) + ":" + std::to_string(d.device_id);
}

bool device_exists(CTDevice d) {
  const int32_t n = ct_device_count();
  for (int32_t i = 0; i < n; ++i)
    if (same_device(device_info(i).device, d)) return true;
  return false;
}

CTDevice parse_device(nb::handle h, const char* fn, bool must_exist) {
  CTDevice d{CT_CPU, 0};
  nb::handle spec = h;
  nb::object keep;
  if (nb::hasattr(h, "dlpack") && !PyUnicode_Check(h.ptr())) {  // a ctensor.DeviceInfo
    keep = h.attr("dlpack");
    spec = keep;
  }
  if (PyTuple_Check(spec.ptr()) || PyList_Check(spec.ptr())) {
    if (nb::len(spec) != 2)
      raise(PyExc_ValueError, "%s: device=%s: a pair (device_type, device_id) has two entries", fn,
            nb::cast<std::string>(nb::repr(h)).c_str());
    d.device_type = to_int32(spec[0], fn, "device");
    d.device_id = to_int32(spec[1], fn, "device");
  } else {
    std::string s;
    if (PyUnicode_Check(spec.ptr())) {
      s = nb::cast<std::string>(spec);
    } else if (nb::hasattr(spec, "type") && nb::hasattr(spec, "index")) {  // torch.device
      s = nb::cast<std::string>(nb::str(spec.attr("type")));
      if (!spec.attr("index").is_none()) s += ":" + nb::cast<std::string>(nb::str(spec.attr("index")));
    } else {
      raise(PyExc_TypeError, "%s: device must be a name ('cpu', 'cuda:1'), a (device_type, device_id) pair or a "
            "ctensor.devices() entry, not %s", fn, Py_TYPE(h.ptr())->tp_name);
    }
    const size_t colon = s.find(':');
    const std::string kind = s.substr(0, colon);
    const std::string idx = colon == std::string::npos ? "" : s.substr(colon + 1);
    if (!type_from_name(kind, &d.device_type))
      raise(PyExc_ValueError, "%s: unknown device '%s' (names are DLPack's, cpu, cuda, opencl, rocm, ..., or a "
            "registered backend's; this process has %s)", fn, s.c_str(), known_devices().c_str());
    if (!idx.empty()) {
      if (idx.find_first_not_of("0123456789") != std::string::npos || idx.size() > 9)
        raise(PyExc_ValueError, "%s: device '%s': the index after ':' must be a number", fn, s.c_str());
      d.device_id = (int32_t)std::stoi(idx);
    }
  }
  if (must_exist && !device_exists(d))
    raise(PyExc_ValueError, "%s: device %s (device_type %d, id %d) does not exist in this process; its devices "
          "are %s (see ctensor.devices())", fn, device_str(d).c_str(), d.device_type, d.device_id,
          known_devices().c_str());
  return d;
}

nb::object copy_to(const CTensor& src, CTDevice dev, CTDataType dt, const char* fn) {
  (void)fn;
  Tensor* t;
  nb::object r = new_tensor(src.ndim, src.shape, dt, dev, &t);
  transfer(src, t->t);
  return r;
}

nb::object tensor_to(nb::handle self, nb::handle device, nb::handle dtype, bool copy) {
  const char* fn = "Tensor.to";
  Tensor* t = nb::inst_ptr<Tensor>(self);
  const CTDevice dev = device.is_none() ? t->t.device : parse_device(device, fn, true);
  const CTDataType dt = dtype.is_none() ? t->t.dtype : parse_dtype(dtype, fn, "dtype");
  if (!copy && same_device(dev, t->t.device) && same_dtype(dt, t->t.dtype)) return nb::borrow(self);
  return copy_to(t->t, dev, dt, fn);
}

nb::object copy_array(nb::handle x, nb::handle device, nb::handle out) {
  const char* fn = "copy";
  Arg xa;
  import_arg(xa, x.ptr(), false, false, fn, "x");
  if (out.is_none()) {
    const CTDevice dev = device.is_none() ? xa.t.device : parse_device(device, fn, true);
    return copy_to(xa.t, dev, xa.t.dtype, fn);
  }
  Arg oa;
  import_arg(oa, out.ptr(), true, false, fn, "out");
  require_writable(oa, fn, "out");
  if (!device.is_none()) {
    const CTDevice dev = parse_device(device, fn, true);
    if (!same_device(dev, oa.t.device))
      raise(PyExc_ValueError, "%s: device=%s but out lives on %s", fn, device_str(dev).c_str(),
            device_str(oa.t.device).c_str());
  }
  transfer(xa.t, oa.t);
  return nb::borrow(out);
}

void init_devices(nb::module_& m) {
  m.def("_device_count", &ct_device_count);
  m.def("_device_info", [](int32_t i) {
    const CTDeviceInfo info = device_info(i);
    nb::dict d;
    d["device_type"] = info.device.device_type;
    d["id"] = info.device.device_id;
    d["type"] = type_name(info.device.device_type);
    d["name"] = info.name;
    d["backend"] = info.backend;
    d["compute_units"] = info.compute_units;
    d["default_threads"] = info.default_threads;
    d["memory_bytes"] = info.memory_bytes;
    d["str"] = device_str(info.device);
    return d;
  }, nb::arg("index"), "ct_device_info(index) as a dict");
  m.def("_parse_device", [](nb::handle device, bool must_exist) {
    const CTDevice d = parse_device(device, "device", must_exist);
    return nb::make_tuple(d.device_type, d.device_id);
  }, nb::arg("device"), nb::arg("must_exist") = false, "(device_type, device_id) of a device name, pair or entry");
  m.def("copy", &copy_array, nb::arg("x"), nb::arg("device") = nb::none(), nb::kw_only(), nb::arg("out") = nb::none(),
        nb::sig("def copy(x: object, device: object | None = None, *, out: object | None = None) -> object"),
        "A copy of x (any array) on `device` (default: x's own), or written into out (any device, x's shape; a "
        "different dtype converts as cast). Runs ct_copy / ct_cast, which move data between any two devices.");
  m.def("set_num_threads", [](int n) {
    if (n < 0) raise(PyExc_ValueError, "set_num_threads: n=%d is negative (0 = the library default)", n);
    g_cpu_stream.num_threads = n;
  }, nb::arg("n"), "Threads for CPU ops (0 = the library default, 1 = the calling thread only).");
  m.def("get_num_threads", [] { return g_cpu_stream.num_threads; }, "The value set_num_threads set (0 = default).");
  m.def("_cpu_stream_address", [] { return reinterpret_cast<uintptr_t>(&g_cpu_stream); },
        "The address of the CTCpuStream set_num_threads sets (ctensor.jax's handlers run with it).");
  m.def("set_stream", [](nb::handle device, nb::handle stream) {
    const CTDevice d = parse_device(device, "set_stream", false);
    if (d.device_type == CT_CPU)
      raise(PyExc_ValueError, "set_stream: the CPU has no streams (set_num_threads sets its threads)");
    void* s = nullptr;
    if (!stream.is_none()) {
      if (!PyLong_Check(stream.ptr()))
        raise(PyExc_TypeError, "set_stream: stream must be an int (a cudaStream_t or cl_command_queue as an "
              "integer, e.g. torch.cuda.current_stream().cuda_stream or cupy's stream.ptr) or None");
      s = PyLong_AsVoidPtr(stream.ptr());
      if (PyErr_Occurred()) throw nb::python_error();
    }
    for (auto it = t_streams.begin(); it != t_streams.end(); ++it)
      if (same_device(it->first, d)) {
        t_streams.erase(it);
        break;
      }
    if (s) t_streams.emplace_back(d, s);
  }, nb::arg("device"), nb::arg("stream").none(),
        "Run this thread's ops on `device` (not the CPU) on `stream` (an int handle: a cudaStream_t, a "
        "cl_command_queue), or with None on the producer's current stream where DLPack's exchange API says it "
        "(torch), else the device's default stream. ctensor.use_stream(device, stream) does it for a `with` block.");
  m.def("get_stream", [](nb::handle device) -> nb::object {
    void* s = user_stream(parse_device(device, "get_stream", false));
    return s ? nb::steal(PyLong_FromVoidPtr(s)) : nb::none();
  }, nb::arg("device"), "The stream set_stream installed for `device` on this thread, or None.");
}

}  // namespace ctpy
