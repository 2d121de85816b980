// module.cpp — ctensor._ctensor itself: the dtype objects, the registry's metadata, and the wiring of the parts.
//
// The native half of the Python package, split by concern (see common.h):
// DLPack import/export (dlpack.cpp), the Tensor type (tensor.cpp), the
// registry-generated functions (ops.cpp), NN ops (nn.cpp), devices
// (devices.cpp) and plugin libraries (library.cpp). Every array argument is imported without a copy; results
// are ctensor.Tensor objects on the inputs' device; every output without
// out= is shaped by the library's shape query. The NN ops' keyword parsing
// lives in Python (ctensor/_nn.py) over _nn() (nn.cpp).
#include "common.h"

using namespace ctpy;

namespace {

const char* kind_name(int32_t k) {
  switch (k) {
    case CT_KIND_UNARY: return "unary";
    case CT_KIND_UNARY_PARAM: return "unary_param";
    case CT_KIND_TERNARY: return "ternary";
    case CT_KIND_CAST: return "cast";
    case CT_KIND_BINARY: return "binary";
    case CT_KIND_REDUCE: return "reduce";
    case CT_KIND_ALONG_AXIS: return "along_axis";
    case CT_KIND_NN: return "nn";
    case CT_KIND_INDEX: return "index";
    default: return "unknown";
  }
}

nb::dict op_info_dict(int32_t op) {
  const CTOpInfo i = op_info(op);
  nb::dict d;
  d["id"] = i.op;
  d["name"] = i.name;
  d["summary"] = i.summary;
  d["category"] = i.category;
  d["kind"] = kind_name(i.kind);
  d["num_inputs"] = i.num_inputs;
  d["num_params"] = i.num_params;
  d["param_names"] = i.param_names;
  d["output_dtype"] = i.output_dtype;
  d["inplace"] = i.inplace != 0;
  d["num_tensors"] = i.num_tensors;
  d["tensor_names"] = i.tensor_names ? i.tensor_names : "";
  d["num_outputs"] = i.num_outputs;
  d["optional_mask"] = i.optional_mask;
  nb::list roles;
  for (int32_t k = 0; k < i.num_tensors && i.tensor_roles; ++k) roles.append(i.tensor_roles[k]);
  d["tensor_roles"] = nb::tuple(roles);
  d["desc_type"] = i.desc_type;
  d["shape_rule"] = i.shape_rule;
  d["dtype_mask"] = i.dtype_mask;
  d["dtype_rule"] = i.dtype_rule ? i.dtype_rule : "";
  return d;
}

void def_dtypes(nb::module_& m) {
  nb::class_<DType>(m, "DType", "An element type: ctensor.float32, ctensor.int64, ...")
      .def_prop_ro("name", [](const DType& d) { return dtype_name(d.dt); })
      .def_prop_ro("itemsize", [](const DType& d) { return itemsize(d.dt); })
      .def_prop_ro("dlpack", [](const DType& d) { return nb::make_tuple(d.dt.code, d.dt.bits, d.dt.lanes); },
                   "(code, bits, lanes) as in DLPack's DLDataType")
      .def("__str__", [](const DType& d) { return dtype_name(d.dt); })
      .def("__repr__", [](const DType& d) { return "ctensor." + dtype_name(d.dt); })
      .def("__hash__", [](const DType& d) { return nb::hash(nb::str(dtype_name(d.dt).c_str())); })
      .def("__eq__", [](const DType& d, nb::handle other) {
        CTDataType o;
        try {
          return try_parse_dtype(other, &o) && same_dtype(o, d.dt);
        } catch (nb::python_error&) {
          return false;
        }
      })
      .def("__ne__", [](const DType& d, nb::handle other) {
        CTDataType o;
        try {
          return !(try_parse_dtype(other, &o) && same_dtype(o, d.dt));
        } catch (nb::python_error&) {
          return true;
        }
      });
  for (const auto& e : kDTypes) m.attr(e.name) = DType{e.dt};
}

// shape, dtype name and device of any array argument (for the Python layer)
nb::tuple arg_info(nb::handle x) {
  Arg a;
  import_arg(a, x.ptr(), false, false, "ctensor", "x");
  nb::list shape;
  for (int i = 0; i < a.t.ndim; ++i) shape.append(a.t.shape[i]);
  return nb::make_tuple(nb::tuple(shape), dtype_name(a.t.dtype),
                        nb::make_tuple(a.t.device.device_type, a.t.device.device_id));
}

}  // namespace

NB_MODULE(_ctensor, m) {
  m.doc() = "ctensor's native module: the C library's ops on any DLPack or buffer-protocol array.";
  g_max_version = nb::make_tuple(kDLPackMajor, kDLPackMinor).release().ptr();

  def_dtypes(m);
  init_tensor(m);
  nb::dict bound;
  init_ops(m, bound);
  m.attr("_bound_names") = bound;
  init_nn(m);
  init_devices(m);
  init_library(m);

  m.def("_arg_info", &arg_info, nb::arg("x"), "(shape, dtype name, (device_type, device_id)) of an array argument");
  m.def("_op_info", &op_info_dict, nb::arg("op"), "ct_op_info(op) as a dict");
  m.def("_op_count", &ct_op_count);
  // A framework keeps the functions it was given until the interpreter is gone (torch.library's operator
  // table, XLA's FFI targets): nanobind's leak report at exit would then list every op. The adapters
  // (ctensor.torch, ctensor.jax) turn it off; without them it stays on.
  m.def("_set_leak_warnings", [](bool on) { nb::set_leak_warnings(on); }, nb::arg("on"));
  m.def("_op_infos", [] {
    nb::list v;  // every op id in use: an op a plugin took away with it is skipped
    for (int32_t op = 0, n = ct_op_count(); op < n; ++op) {
      CTOpInfo i{};
      i.struct_size = sizeof i;
      if (ct_op_info(op, &i) == CT_OK) v.append(op_info_dict(op));
    }
    return v;
  }, "ct_op_info of every live op id, as dicts, in id order");
  m.def("_op_supported", [](int32_t op, int32_t device_type, int32_t device_id, nb::handle dtype) {
    CTDataType dt = parse_dtype(dtype, "op_supported", "dtype");
    CTStatus s = ct_op_supported(op, CTDevice{device_type, device_id}, dt);
    return nb::make_tuple(s == CT_OK, s == CT_OK ? "" : ct_last_error());
  });
  m.def("_import_stats", [] {
    nb::dict d;
    d["tensor"] = g_stats.tensor;
    d["numpy"] = g_stats.numpy;
    d["exchange"] = g_stats.exchange;
    d["dlpack_versioned"] = g_stats.dlpack_versioned;
    d["dlpack_legacy"] = g_stats.dlpack_legacy;
    d["buffer"] = g_stats.buffer;
    d["scalar"] = g_stats.scalar;
    return d;
  }, "How many arguments each import path has taken (for tests of the fast paths).");
  m.attr("__version__") = ct_version_string();
  m.attr("_header_version") = nb::make_tuple(CT_VERSION_MAJOR, CT_VERSION_MINOR, CT_VERSION_PATCH);
  m.attr("_max_ndim") = CT_MAX_NDIM;
}
