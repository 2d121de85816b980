// nn.cpp — NN ops by id: tensors by position from the op's row, outputs from the shape query, runs through ct_nn.
//
// _nn(op, inputs, outputs, desc, extent) knows no op: the tensor arguments
// are the row's tensor_names in order (None for an absent optional one), the
// descriptor is the one the row's desc_type names, filled from a dict of its
// C field names, and outputs not given are allocated from ct_op_output_info.
// ctensor/_nn.py translates torch.nn.functional's keywords into those
// fields. _output_info(op, inputs, ...) exposes the shape query itself.
#include "common.h"

#include <cstring>
#include <deque>
#include <vector>

namespace ctpy {
namespace {

// ---------------------------------------------------------------------------
// Descriptors: chosen by the op's desc_type, filled by C field name
// ---------------------------------------------------------------------------

enum FieldKind { kI32, kPair, kF64 };
struct Field {
  const char* name;
  FieldKind kind;
  size_t offset;
};

#define CTPY_FIELD(T, f, k) Field{#f, k, offsetof(T, f)}
const Field kMatmulFields[] = {CTPY_FIELD(CTMatmulDesc, activation, kI32)};
const Field kConvFields[] = {
    CTPY_FIELD(CTConv2dDesc, groups, kI32),   CTPY_FIELD(CTConv2dDesc, stride, kPair),
    CTPY_FIELD(CTConv2dDesc, pad_begin, kPair), CTPY_FIELD(CTConv2dDesc, pad_end, kPair),
    CTPY_FIELD(CTConv2dDesc, dilation, kPair), CTPY_FIELD(CTConv2dDesc, activation, kI32)};
const Field kPoolFields[] = {
    CTPY_FIELD(CTPool2dDesc, count_include_pad, kI32), CTPY_FIELD(CTPool2dDesc, kernel, kPair),
    CTPY_FIELD(CTPool2dDesc, stride, kPair),           CTPY_FIELD(CTPool2dDesc, pad_begin, kPair),
    CTPY_FIELD(CTPool2dDesc, pad_end, kPair),          CTPY_FIELD(CTPool2dDesc, dilation, kPair)};
const Field kBatchNormFields[] = {CTPY_FIELD(CTBatchNormDesc, epsilon, kF64)};
const Field kLayerNormFields[] = {CTPY_FIELD(CTLayerNormDesc, normalized_ndim, kI32),
                                  CTPY_FIELD(CTLayerNormDesc, epsilon, kF64)};
const Field kAttentionFields[] = {CTPY_FIELD(CTAttentionDesc, causal, kI32), CTPY_FIELD(CTAttentionDesc, scale, kF64)};
#undef CTPY_FIELD

struct DescType {
  const char* c_name;
  const Field* fields;
  size_t num_fields;
  size_t size;
};

DescType desc_type(int32_t t) {
  switch (t) {
    case CT_DESC_MATMUL: return {"CTMatmulDesc", kMatmulFields, 1, sizeof(CTMatmulDesc)};
    case CT_DESC_CONV2D: return {"CTConv2dDesc", kConvFields, 6, sizeof(CTConv2dDesc)};
    case CT_DESC_POOL2D: return {"CTPool2dDesc", kPoolFields, 6, sizeof(CTPool2dDesc)};
    case CT_DESC_BATCH_NORM: return {"CTBatchNormDesc", kBatchNormFields, 1, sizeof(CTBatchNormDesc)};
    case CT_DESC_LAYER_NORM: return {"CTLayerNormDesc", kLayerNormFields, 2, sizeof(CTLayerNormDesc)};
    case CT_DESC_ATTENTION: return {"CTAttentionDesc", kAttentionFields, 2, sizeof(CTAttentionDesc)};
    default: return {nullptr, nullptr, 0, 0};
  }
}

// Room for any descriptor, zero-initialised with its struct_size set.
struct Desc {
  alignas(8) unsigned char bytes[256];
  const void* ptr = nullptr;
};

void pack_desc(const CTOpInfo& info, nb::handle fields, Desc* d, const char* fn) {
  std::memset(d->bytes, 0, sizeof d->bytes);
  const DescType t = desc_type(info.desc_type);
  if (!t.c_name) {
    if (!fields.is_none() && nb::len(fields))
      raise(PyExc_TypeError, "%s: %s takes no descriptor", fn, info.name);
    return;
  }
  if (t.size > sizeof d->bytes) raise(PyExc_RuntimeError, "%s: %s is larger than the bindings know", fn, t.c_name);
  const uint32_t size = (uint32_t)t.size;
  std::memcpy(d->bytes, &size, sizeof size);  // every descriptor starts with struct_size
  d->ptr = d->bytes;
  if (fields.is_none()) return;
  if (!PyDict_Check(fields.ptr())) raise(PyExc_TypeError, "%s: desc must be a dict of %s fields", fn, t.c_name);
  for (auto item : nb::borrow<nb::dict>(fields)) {
    const std::string key = nb::cast<std::string>(item.first);
    const Field* f = nullptr;
    for (size_t i = 0; i < t.num_fields; ++i)
      if (key == t.fields[i].name) f = &t.fields[i];
    if (!f) {
      std::string known;
      for (size_t i = 0; i < t.num_fields; ++i) known += (i ? ", " : "") + std::string(t.fields[i].name);
      raise(PyExc_TypeError, "%s: %s (%s's descriptor) has no field '%s' (fields: %s)", fn, t.c_name, info.name,
            key.c_str(), known.c_str());
    }
    unsigned char* at = d->bytes + f->offset;
    nb::handle v = item.second;
    switch (f->kind) {
      case kI32: {
        const int32_t x = to_int32(v, fn, f->name);
        std::memcpy(at, &x, sizeof x);
        break;
      }
      case kF64: {
        const double x = to_double(v, fn, f->name);
        std::memcpy(at, &x, sizeof x);
        break;
      }
      case kPair: {
        int64_t x[2];
        if (PyLong_Check(v.ptr())) {
          x[0] = x[1] = to_int64(v, fn, f->name);
        } else {
          if (!PySequence_Check(v.ptr()) || PySequence_Size(v.ptr()) != 2) {
            PyErr_Clear();
            raise(PyExc_ValueError, "%s: %s.%s takes an int or a pair", fn, t.c_name, f->name);
          }
          x[0] = to_int64(v[0], fn, f->name);
          x[1] = to_int64(v[1], fn, f->name);
        }
        std::memcpy(at, x, sizeof x);
        break;
      }
    }
  }
}

std::vector<std::string> tensor_names(const CTOpInfo& info) {
  std::vector<std::string> names;
  const std::string s = info.tensor_names ? info.tensor_names : "";
  size_t p = 0;
  while (p <= s.size()) {
    size_t q = s.find(',', p);
    if (q == std::string::npos) q = s.size();
    std::string nm = s.substr(p, q - p);
    if (!nm.empty() && nm.back() == '?') nm.pop_back();
    names.push_back(nm);
    p = q + 1;
  }
  return names;
}

// The arguments of ct_op_output_info besides the tensors.
struct QueryArgs {
  CTOpArgs a{};
  Desc desc;
  int32_t axes[CT_MAX_NDIM];
};

void set_extent(QueryArgs& q, nb::handle extent, const char* fn) {
  if (extent.is_none()) return;
  if (nb::len(extent) != 2) raise(PyExc_ValueError, "%s: extent takes two extents (h, w)", fn);
  q.a.extent[0] = to_int64(extent[0], fn, "extent");
  q.a.extent[1] = to_int64(extent[1], fn, "extent");
}

// A per-thread workspace, grown as needed and kept: NN calls allocate nothing
// once warm.
struct Workspace {
  void* ptr = nullptr;
  size_t bytes = 0;
  CTDevice dev{CT_CPU, 0};
  ~Workspace() { ct_free(dev, ptr); }
  void* get(CTDevice d, size_t n) {
    if (n == 0) return nullptr;
    if (ptr && (!same_device(d, dev) || n > bytes)) {
      ct_free(dev, ptr);
      ptr = nullptr;
      bytes = 0;
    }
    if (!ptr) {
      check(ct_malloc(d, n, &ptr));
      bytes = n;
      dev = d;
    }
    return ptr;
  }
};
thread_local Workspace t_workspace;

bool is_shape_request(nb::handle h) {
  if (!PyTuple_Check(h.ptr())) return false;
  for (nb::handle e : h)
    if (!PyLong_Check(e.ptr())) return false;
  return true;
}

// _nn: see the file comment. outputs[j]: an array to write into, True to
// allocate it, a tuple of ints to allocate it with that shape (which must be
// the one the query gives: the caller's declared shape), or None for an absent
// optional output; None for the whole list allocates every output.
nb::tuple nn_call(int32_t op, nb::handle inputs, nb::handle outputs, nb::handle desc_fields, nb::handle extent) {
  const CTOpInfo info = op_info(op);
  const std::string entry = entry_name(info);
  const char* fn = entry.c_str();
  if (info.kind != CT_KIND_NN) raise(PyExc_ValueError, "_nn: op %d (%s) is not an NN op", op, info.name);
  const int32_t nin = info.num_inputs, nout = info.num_outputs, nt = info.num_tensors;
  const std::vector<std::string> names = tensor_names(info);
  if ((int32_t)nb::len(inputs) != nin)
    raise(PyExc_ValueError, "_nn: %s takes %d input(s) of %s, got %zu", info.name, nin, info.tensor_names,
          nb::len(inputs));
  if (!outputs.is_none() && (int32_t)nb::len(outputs) != nout)
    raise(PyExc_ValueError, "_nn: %s has %d output(s) of %s, got %zu", info.name, nout, info.tensor_names,
          nb::len(outputs));
  std::deque<Arg> args(nt);
  std::vector<const CTensor*> T(nt, nullptr);
  CTDevice dev{CT_CPU, 0};
  bool have_dev = false;
  int64_t work = 0;
  for (int32_t i = 0; i < nin; ++i) {
    nb::handle h = inputs[i];
    if (h.is_none()) continue;
    import_arg(args[i], h.ptr(), false, false, fn, names[i].c_str());
    T[i] = &args[i].t;
    if (!have_dev) dev = args[i].t.device, have_dev = true;
    work += args[i].numel();
  }
  QueryArgs q;
  q.a.struct_size = sizeof q.a;
  pack_desc(info, desc_fields, &q.desc, fn);
  q.a.desc = q.desc.ptr;
  set_extent(q, extent, fn);
  // Outputs: given, to allocate, or absent.
  nb::list results;
  std::vector<nb::handle> req(nout);
  bool need_query = false;
  for (int32_t j = 0; j < nout; ++j) {
    req[j] = outputs.is_none() ? nb::handle(Py_True) : nb::handle(outputs[j]);
    if (req[j].is_none() || (!PyBool_Check(req[j].ptr()) && !is_shape_request(req[j]))) continue;
    if (req[j].ptr() == Py_False) raise(PyExc_TypeError, "_nn: outputs[%d] is False (None leaves it out)", j);
    need_query = true;
  }
  std::vector<CTOutputInfo> shapes(nout);
  if (need_query) query_outputs(op, q.a, T.data(), nin, shapes.data(), nout, fn);
  for (int32_t j = 0; j < nout; ++j) {
    const int32_t i = nin + j;
    nb::handle r = req[j];
    if (r.is_none()) {
      results.append(nb::none());
      continue;
    }
    if (PyBool_Check(r.ptr()) || is_shape_request(r)) {
      const CTOutputInfo& s = shapes[j];
      if (!PyBool_Check(r.ptr())) {
        bool same = (int32_t)nb::len(r) == s.ndim;
        for (int32_t k = 0; same && k < s.ndim; ++k) same = to_int64(r[k], fn, names[i].c_str()) == s.shape[k];
        if (!same) {
          std::vector<int64_t> asked;
          for (nb::handle e : r) asked.push_back(to_int64(e, fn, names[i].c_str()));
          raise(PyExc_ValueError, "%s: %s.shape=%s was asked for, but the inputs give %s", fn, names[i].c_str(),
                shape_str((int)asked.size(), asked.data()).c_str(), shape_str(s.ndim, s.shape).c_str());
        }
      }
      Tensor* t;
      results.append(new_tensor(s.ndim, s.shape, s.dtype, dev, &t));
      T[i] = &t->t;  // the Tensor lives in `results`
    } else {
      import_arg(args[i], r.ptr(), true, false, fn, names[i].c_str());
      require_writable(args[i], fn, names[i].c_str());
      T[i] = &args[i].t;
      results.append(nb::borrow(r));
    }
    work += numel_of(*T[i]);
  }
  void* stream = stream_for(dev);
  size_t bytes = 0;
  check(ct_nn_workspace_size(op, q.a.desc, T.data(), nt, &bytes));
  void* ws = t_workspace.get(dev, bytes);
  check(run_kernel(work, [&] { return ct_nn(op, q.a.desc, T.data(), nt, ws, bytes, stream); }));
  return nb::tuple(results);
}

// An input of _output_info: an array, or a (shape, dtype) pair standing for one.
void import_spec(Arg& a, nb::handle h, const char* fn, const char* name) {
  if (PyTuple_Check(h.ptr()) && nb::len(h) == 2 &&
      (PyTuple_Check(nb::handle(h[0]).ptr()) || PyList_Check(nb::handle(h[0]).ptr()))) {
    std::vector<int64_t> sh;
    for (nb::handle e : h[0]) sh.push_back(to_int64(e, fn, name));
    a.present = true;
    a.t = CTensor{};
    a.t.device = {CT_CPU, 0};
    a.t.dtype = parse_dtype(h[1], fn, "dtype");
    a.own_dims((int)sh.size(), sh.data(), nullptr, fn, name);
    return;
  }
  import_arg(a, h.ptr(), false, false, fn, name);
}

nb::list output_info(int32_t op, nb::handle inputs, nb::handle axis, bool keepdims, nb::handle dtype,
                     nb::handle desc_fields, nb::handle extent) {
  const CTOpInfo info = op_info(op);
  const std::string entry = entry_name(info);
  const char* fn = entry.c_str();
  const std::vector<std::string> names = tensor_names(info);
  const int32_t nin = (int32_t)nb::len(inputs);
  if (nin > (int32_t)names.size())
    raise(PyExc_ValueError, "_output_info: %s takes %d input(s), got %d", info.name, info.num_inputs, nin);
  std::deque<Arg> args(nin);
  std::vector<const CTensor*> T(nin, nullptr);
  for (int32_t i = 0; i < nin; ++i) {
    if (inputs[i].is_none()) continue;
    import_spec(args[i], inputs[i], fn, names[i].c_str());
    T[i] = &args[i].t;
  }
  QueryArgs q;
  q.a.struct_size = sizeof q.a;
  if (!axis.is_none()) {
    if (PyLong_Check(axis.ptr())) {
      q.a.axis = q.axes[0] = to_int32(axis, fn, "axis");
      q.a.num_axes = 1;
    } else {
      for (nb::handle h : axis) {
        if (q.a.num_axes >= CT_MAX_NDIM) raise(PyExc_ValueError, "_output_info: more than %d axes", CT_MAX_NDIM);
        q.axes[q.a.num_axes++] = to_int32(h, fn, "axis");
      }
    }
    q.a.axes = q.axes;
  }
  q.a.keepdims = keepdims;
  if (!dtype.is_none()) q.a.dtype = parse_dtype(dtype, fn, "dtype");
  pack_desc(info, desc_fields, &q.desc, fn);
  q.a.desc = q.desc.ptr;
  set_extent(q, extent, fn);
  std::vector<CTOutputInfo> outs(info.num_outputs > 0 ? info.num_outputs : 1);
  query_outputs(op, q.a, T.data(), nin, outs.data(), info.num_outputs, fn);
  nb::list r;
  for (int32_t j = 0; j < info.num_outputs; ++j) {
    nb::list sh;
    for (int32_t k = 0; k < outs[j].ndim; ++k) sh.append(outs[j].shape[k]);
    r.append(nb::make_tuple(nb::tuple(sh), dtype_name(outs[j].dtype)));
  }
  return r;
}

// An NN op's descriptor as bytes, from its fields by C name (what ctensor.jax hands its FFI handler).
nb::bytes pack_desc_bytes(int32_t op, nb::handle fields) {
  const CTOpInfo info = op_info(op);
  Desc d;
  pack_desc(info, fields, &d, "_pack_desc");
  return nb::bytes(reinterpret_cast<const char*>(d.bytes), d.ptr ? desc_type(info.desc_type).size : 0);
}

}  // namespace

void init_nn(nb::module_& m) {
  m.def("_pack_desc", &pack_desc_bytes, nb::arg("op"), nb::arg("desc") = nb::none(),
        "The descriptor of NN op `op` (an id) as bytes, from its fields by C name; b'' for an op without one.");
  m.def("_nn", &nn_call, nb::arg("op"), nb::arg("inputs"), nb::arg("outputs") = nb::none(),
        nb::arg("desc") = nb::none(), nb::arg("extent") = nb::none(),
        "Run NN op `op` (an id) through ct_nn. inputs: the row's input tensors in order (None for an absent "
        "optional one). outputs: per output an array to write into, True to allocate it from the shape query, a "
        "shape tuple to allocate it with that (checked) shape, or None to leave an optional one out; None "
        "allocates them all. desc: the op's descriptor fields by C name (stride=(1, 1), epsilon=1e-5, ...). "
        "extent: the (h, w) a backward op's inputs leave open. Returns the outputs as a tuple.");
  m.def("_output_info", &output_info, nb::arg("op"), nb::arg("inputs"), nb::kw_only(), nb::arg("axis") = nb::none(),
        nb::arg("keepdims") = false, nb::arg("dtype") = nb::none(), nb::arg("desc") = nb::none(),
        nb::arg("extent") = nb::none(),
        "ct_op_output_info: [(shape, dtype name)] of every output of op `op` (an id) for these inputs (arrays, "
        "or (shape, dtype) pairs; None for an absent optional one). axis: the reduce axes (an int or a tuple) or "
        "the along-axis axis; keepdims; dtype: cast's target; desc: an NN op's descriptor fields by C name; "
        "extent: the (h, w) a backward op's inputs leave open.");
}

}  // namespace ctpy
