// kernels.cc — the kernel table's slots: supports() from the rows of
// src/gpu/ops.cc and the registry, and the launchers of the elementwise, binary,
// reduction and along-axis kernels the templates generate.
#include <algorithm>
#include <cstring>

#include "backend.h"

namespace ctcl {

namespace {

// Programs by (context, signature), so the source is generated once (the
// programs themselves belong to runtime.cc's cache).
ProgramIndex<Program> g_sig;

std::string sig_key(cl_context ctx, const char* family, const int32_t* dts, int n, int32_t out_dt) {
  return signature_key(std::to_string(reinterpret_cast<uintptr_t>(ctx)), family, dts, n, out_dt);
}

template <class Gen>
CTStatus program_for(const char* fn, Device* d, cl_context ctx, const std::string& key, Gen gen, Program** prog) {
  return g_sig.get(key, gen, [&](const std::string& src, const std::string& label, Program** p) {
    return get_program(fn, d, ctx, src, label, p);
  }, prog);
}

struct KernelLease {
  Program* prog;
  std::string name;
  cl_kernel k = nullptr;
  ~KernelLease() {
    if (k) prog->give(name.c_str(), k);
  }
};

}  // namespace

void forget_programs() { g_sig.clear(); }

bool set_arg(const char* fn, cl_kernel k, cl_uint i, size_t size, const void* value, CTStatus* st) {
  const cl_int e = clSetKernelArg(k, i, size, value);
  if (e == CL_SUCCESS) return true;
  *st = g_host->set_error(CT_ERR_BACKEND, "%s: OpenCL clSetKernelArg(%u) failed: %s (%d)", fn, (unsigned)i,
                          cl_error_name(e), (int)e);
  return false;
}

CTStatus launch(const char* fn, const Queue& q, cl_kernel k, int64_t n, const char* name, size_t max_local) {
  if (n <= 0) return CT_OK;
  cl_device_id dev = nullptr;
  clGetCommandQueueInfo(q.q, CL_QUEUE_DEVICE, sizeof dev, &dev, nullptr);
  // 256 work-items: a CPU device (PoCL) runs a group as one vectorised loop,
  // whose fixed cost 64 did not amortise (tanh, gelu, erf 5-10% faster in
  // alternating runs; memory-bound maps the same within the host's noise);
  // GPUs take 256 too.
  size_t max_wg = 256;
  clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, nullptr);
  const size_t local = std::max<size_t>(1, std::min<size_t>(max_local, max_wg));
  // Exactly n work-items: the whole groups, then the rest at that offset in
  // groups of one. So kernels need no bounds test (an early return makes
  // PoCL mask the vectorised loop: 40% on exp), and a kernel is compiled for
  // two group sizes only (PoCL compiles one work-group function per size: a
  // tail group of n mod 256 items would compile again for every new size).
  const size_t whole = (size_t)n / local * local, rest = (size_t)n - whole;
  for (int part = 0; part < 2; ++part) {
    const size_t offset = part ? whole : 0, global = part ? rest : whole, lsize = part ? 1 : local;
    if (global == 0) continue;
    const cl_int e = clEnqueueNDRangeKernel(q.q, k, 1, &offset, &global, &lsize, 0, nullptr, nullptr);
    if (e != CL_SUCCESS)
      return g_host->set_error(CT_ERR_BACKEND,
                               "%s: OpenCL clEnqueueNDRangeKernel(%s, %zu work-items from %zu) failed: %s (%d)", fn,
                               name, global, offset, cl_error_name(e), (int)e);
  }
  return CT_OK;
}

CTStatus elementwise_program(const char* fn, Device* d, cl_context ctx, int kind, bool special, const int32_t* in_dt, int n,
                             int32_t out_dt, Program** prog) {
  const int family = kind == CT_KIND_UNARY_PARAM ? CT_KIND_UNARY : kind;
  const char* fam = family == CT_KIND_CAST ? ":cast" : family == CT_KIND_BINARY ? ":bin" : family == CT_KIND_TERNARY ? ":ter" : ":un";
  return program_for(fn, d, ctx, sig_key(ctx, (std::string(fam) + (special ? ":sf" : "")).c_str(), in_dt, n, out_dt),
                     [&](std::string* label) { return elementwise_source(d, family, in_dt, n, out_dt, label, special); }, prog);
}

namespace {

const char* nn_why(int32_t op, int32_t dt, std::string* buf) { return nn_supported(op, dt, buf) ? nullptr : buf->c_str(); }

}  // namespace

CTStatus cl_supports(const CTSupportQuery* q) { return supports(device(q->device_id), q, "opencl", nn_why); }

CTStatus cl_elementwise(const CTElementwiseCall* call) {
  const char* fn = call->fn;
  Device* d = device(call->out->device.device_id);
  Queue q;
  if (CTStatus s = queue_of(fn, d, call->stream, &q)) return s;
  const CTOpInfo info = op_info(call->op);
  const int n_in = call->num_inputs;
  Program* prog = nullptr;
  if (CTStatus s = elementwise_program(fn, d, q.ctx, info.kind, special_op(call->op), call->in_dt, n_in, call->out_dt, &prog)) return s;
  const int64_t numel = numel_of(call->out);
  if (numel == 0) return CT_OK;
  const bool dense = dense_call(call);
  if (dense && info.kind == CT_KIND_CAST && call->in_dt[0] == call->out_dt) {  // a copy: the driver's own
    cl_mem src = mem_of(call->in[0]), dst = mem_of(call->out);
    const size_t so = call->in[0]->byte_offset, dof = call->out->byte_offset;
    if (src == dst && so == dof) return CT_OK;  // in place
    const size_t bytes = (size_t)numel * ((call->out->dtype.bits + 7) / 8);
    const cl_int e = clEnqueueCopyBuffer(q.q, src, dst, so, dof, bytes, 0, nullptr, nullptr);
    return e == CL_SUCCESS ? CT_OK : cl_fail(fn, "clEnqueueCopyBuffer", e);
  }
  KernelLease lease{prog, elementwise_kernel(d, call, info.kind, dense)};
  if (CTStatus s = prog->take(fn, lease.name.c_str(), &lease.k)) return s;
  cl_kernel k = lease.k;
  CTStatus st = CT_OK;
  cl_uint a = 0;
  cl_mem om = mem_of(call->out);
  cl_ulong oo = call->out->byte_offset;
  if (!set_arg(fn, k, a++, sizeof om, &om, &st) || !set_arg(fn, k, a++, sizeof oo, &oo, &st)) return st;
  for (int i = 0; i < n_in; ++i) {
    cl_mem m = mem_of(call->in[i]);
    cl_ulong o = call->in[i]->byte_offset;
    if (!set_arg(fn, k, a++, sizeof m, &m, &st) || !set_arg(fn, k, a++, sizeof o, &o, &st)) return st;
  }
  if (info.kind == CT_KIND_UNARY || info.kind == CT_KIND_UNARY_PARAM || info.kind == CT_KIND_TERNARY) {
    // the scalar parameters, of the data input's compute type (where's: a's)
    const TypeInfo t = type_info(d, call->in_dt[data_slot(n_in)]);
    const Param p0 = param_of(t, call->params[0]), p1 = param_of(t, call->params[1]);
    if (!set_arg(fn, k, a++, p0.size, p0.bytes, &st) || !set_arg(fn, k, a++, p1.size, p1.bytes, &st)) return st;
  }
  cl_long n = numel;
  if (!set_arg(fn, k, a++, sizeof n, &n, &st)) return st;
  if (!dense) {
    const CTensor* ts[4] = {call->out, call->in[0], call->in[1], call->in[2]};
    Geo g;
    if (!coalesce(&g, ts, 1 + n_in, call->out->ndim, call->out->shape))
      return split_call(call, ts, n_in, cl_elementwise);  // more dims than a kernel walks: a call per outer index
    if (!set_arg(fn, k, a++, sizeof g, &g, &st)) return st;
  }
  // A chunked kernel (a row with a rare path, on a CPU device) takes
  // Device::chunk elements per work-item, in groups of one: 1024 elements
  // are work enough, and a 16 M-element map still has 16 K groups to share
  // among the device's threads.
  const int64_t items = elementwise_items(d, call->op, info.kind, call->in_dt, n_in, dense, numel);
  return launch(fn, q, k, items, lease.name.c_str(), items == numel ? 256 : 1);
}

CTStatus device_copy(const char* fn, Device* d, const Queue& q, int32_t dt, const CTensor* src, const CTensor* dst) {
  Program* prog = nullptr;
  if (CTStatus s = elementwise_program(fn, d, q.ctx, CT_KIND_CAST, false, &dt, 1, dt, &prog)) return s;
  const int64_t numel = numel_of(dst);
  if (numel == 0) return CT_OK;
  KernelLease lease{prog, "cast_s"};
  if (CTStatus s = prog->take(fn, "cast_s", &lease.k)) return s;
  CTStatus st = CT_OK;
  cl_mem om = mem_of(dst), im = mem_of(src);
  cl_ulong oo = dst->byte_offset, io = src->byte_offset;
  cl_long n = numel;
  const CTensor* ts[2] = {dst, src};
  Geo g;
  if (!coalesce(&g, ts, 2, dst->ndim, dst->shape))  // more dims than a kernel walks: a copy per outer index
    return for_each_outer(ts, 2, [&](const CTensor* const* v) { return device_copy(fn, d, q, dt, v[1], v[0]); });
  cl_kernel k = lease.k;
  if (!set_arg(fn, k, 0, sizeof om, &om, &st) || !set_arg(fn, k, 1, sizeof oo, &oo, &st) ||
      !set_arg(fn, k, 2, sizeof im, &im, &st) || !set_arg(fn, k, 3, sizeof io, &io, &st) ||
      !set_arg(fn, k, 4, sizeof n, &n, &st) || !set_arg(fn, k, 5, sizeof g, &g, &st))
    return st;
  return launch(fn, q, k, numel, "cast_s");
}

// The device, queue and program of a one-input kind (reductions, along-axis ops).
template <class Gen>
CTStatus one_input_program(const char* fn, const CTensor* out, void* stream, const char* family, int32_t xdt,
                           int32_t odt, Gen gen, Device** d, Queue* q, Program** prog) {
  *d = device(out->device.device_id);
  if (CTStatus s = queue_of(fn, *d, stream, q)) return s;
  Device* dv = *d;
  return program_for(fn, dv, q->ctx, sig_key(q->ctx, family, &xdt, 1, odt),
                     [&](std::string* label) { return gen(dv, xdt, odt, label); }, prog);
}

CTStatus cl_reduce(const CTReduceCall* call) {
  const char* fn = call->fn;
  Device* d = nullptr;
  Queue q;
  Program* prog = nullptr;
  if (CTStatus s = one_input_program(fn, call->out, call->stream, ":red", call->x_dt, call->out_dt, reduce_source, &d,
                                     &q, &prog))
    return s;
  const CTensor* x = call->x;
  RGeo g;
  const int64_t M = reduce_geometry(call, 16384, &g), P = g.P;
  if (M < 0) return too_many_dims(fn, "OpenCL");
  if (M == 0) return CT_OK;
  const std::string n = op_name(call->op);
  const TypeInfo af = type_info(d, d->fp64 ? CT_DT_FLOAT64 : CT_DT_FLOAT32);
  const Param p0 = param_of(af, call->params[0]);
  cl_mem om = mem_of(call->out), xm = mem_of(x);
  cl_ulong oo = call->out->byte_offset, xo = x->byte_offset;
  CTStatus st = CT_OK;
  if (P == 1) {
    KernelLease lease{prog, n + "_r0"};
    if (CTStatus s = prog->take(fn, lease.name.c_str(), &lease.k)) return s;
    cl_kernel k = lease.k;
    if (!set_arg(fn, k, 0, sizeof om, &om, &st) || !set_arg(fn, k, 1, sizeof oo, &oo, &st) ||
        !set_arg(fn, k, 2, sizeof xm, &xm, &st) || !set_arg(fn, k, 3, sizeof xo, &xo, &st) ||
        !set_arg(fn, k, 4, sizeof g, &g, &st) || !set_arg(fn, k, 5, p0.size, p0.bytes, &st))
      return st;
    return launch(fn, q, k, M, lease.name.c_str());
  }
  const CTDevice dev = call->out->device;
  void* part = nullptr;
  if (CTStatus s = g_host->temp_alloc(dev, (size_t)(M * P) * state_size(d), call->stream, &part)) return s;
  cl_mem pm = static_cast<cl_mem>(part);
  {
    KernelLease l1{prog, n + "_r1"}, l2{prog, n + "_r2"};
    if ((st = prog->take(fn, l1.name.c_str(), &l1.k)) == CT_OK && (st = prog->take(fn, l2.name.c_str(), &l2.k)) == CT_OK &&
        set_arg(fn, l1.k, 0, sizeof pm, &pm, &st) && set_arg(fn, l1.k, 1, sizeof xm, &xm, &st) &&
        set_arg(fn, l1.k, 2, sizeof xo, &xo, &st) && set_arg(fn, l1.k, 3, sizeof g, &g, &st) &&
        set_arg(fn, l2.k, 0, sizeof om, &om, &st) && set_arg(fn, l2.k, 1, sizeof oo, &oo, &st) &&
        set_arg(fn, l2.k, 2, sizeof pm, &pm, &st) && set_arg(fn, l2.k, 3, sizeof g, &g, &st) &&
        set_arg(fn, l2.k, 4, p0.size, p0.bytes, &st)) {
      st = launch(fn, q, l1.k, M * P, l1.name.c_str());
      if (st == CT_OK) st = launch(fn, q, l2.k, M, l2.name.c_str());
    }
  }
  g_host->temp_free(dev, part, call->stream);  // stream-ordered: released after the kernels that use it
  return st;
}

// The index kind's loops (index_source): a gather over out's shape, or a
// scatter over the lines with each line's K elements in order.
CTStatus cl_index(const CTIndexCall* c) {
  const char* fn = c->fn;
  Device* d = nullptr;
  Queue q;
  Program* prog = nullptr;
  if (CTStatus s = one_input_program(fn, c->out, c->stream, ":index", c->dt, c->index_dt, index_source, &d, &q, &prog))
    return s;
  const bool gather = c->mode == CT_INDEX_GATHER;
  const int32_t nd = c->out->ndim;
  const CTensor* ts[3] = {c->out, c->data, c->index};
  Geo g;
  if (!coalesce(&g, ts, 3, gather ? nd : nd - 1, c->out->shape)) return too_many_dims(fn, "OpenCL");
  cl_long K = gather ? 1 : c->out->shape[nd - 1], dk = gather ? 0 : stride_of(c->data, nd - 1),
          ik = gather ? 0 : stride_of(c->index, nd - 1);
  cl_long items = gather ? c->numel : c->numel / K, n = c->axis_extent, axs = c->axis_stride;
  const char* name = gather ? "ix_gather" : c->mode == CT_INDEX_SCATTER ? "ix_scatter" : "ix_scatter_add";
  KernelLease lease{prog, name};
  if (CTStatus s = prog->take(fn, name, &lease.k)) return s;
  CTStatus st = CT_OK;
  cl_mem om = mem_of(c->out), dm = mem_of(c->data), im = mem_of(c->index);
  cl_ulong oo = c->out->byte_offset, od = c->data->byte_offset, oi = c->index->byte_offset;
  cl_kernel k = lease.k;
  if (!set_arg(fn, k, 0, sizeof om, &om, &st) || !set_arg(fn, k, 1, sizeof oo, &oo, &st) ||
      !set_arg(fn, k, 2, sizeof dm, &dm, &st) || !set_arg(fn, k, 3, sizeof od, &od, &st) ||
      !set_arg(fn, k, 4, sizeof im, &im, &st) || !set_arg(fn, k, 5, sizeof oi, &oi, &st) ||
      !set_arg(fn, k, 6, sizeof g, &g, &st) || !set_arg(fn, k, 7, sizeof n, &n, &st) ||
      !set_arg(fn, k, 8, sizeof axs, &axs, &st) || !set_arg(fn, k, 9, sizeof items, &items, &st) ||
      !set_arg(fn, k, 10, sizeof K, &K, &st) || !set_arg(fn, k, 11, sizeof dk, &dk, &st) ||
      !set_arg(fn, k, 12, sizeof ik, &ik, &st))
    return st;
  if (c->mode == CT_INDEX_SCATTER_ADD) {
    const Param alpha = param_of(type_info(d, c->dt), c->alpha);
    if (!set_arg(fn, k, 13, alpha.size, alpha.bytes, &st)) return st;
  }
  return launch(fn, q, k, items, name);
}

CTStatus cl_along_axis(const CTAlongAxisCall* call) {
  const char* fn = call->fn;
  Device* d = nullptr;
  Queue q;
  Program* prog = nullptr;
  if (CTStatus s = one_input_program(fn, call->out, call->stream, ":along", call->x_dt, call->out_dt, along_source,
                                     &d, &q, &prog))
    return s;
  const CTensor *x = call->x, *out = call->out;
  AGeo g;
  const int64_t lines = along_geometry(call, &g);
  if (lines < 0) return too_many_dims(fn, "OpenCL");
  if (lines == 0) return CT_OK;
  // A long line of softmax or log_softmax on a GPU layout (one element per
  // work-item; CT_OPENCL_CHUNK=1 gives it to PoCL too, which the tests use):
  // a work-group per line, if the kernel can have kLineBlock work-items.
  bool block = d->chunk == 1 && has_line_block(call->op) && g.len >= kLineBlockMinLen;
  KernelLease lease{prog, op_name(call->op) + (block ? "_b" : "_a")};
  if (CTStatus s = prog->take(fn, lease.name.c_str(), &lease.k)) return s;
  if (block) {
    size_t max_wg = 0;
    clGetKernelWorkGroupInfo(lease.k, d->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, nullptr);
    if (max_wg < (size_t)kLineBlock) {
      prog->give(lease.name.c_str(), lease.k);
      lease.k = nullptr;
      lease.name = op_name(call->op) + "_a";
      if (CTStatus s = prog->take(fn, lease.name.c_str(), &lease.k)) return s;
      block = false;
    }
  }
  CTStatus st = CT_OK;
  cl_mem om = mem_of(out), xm = mem_of(x);
  cl_ulong oo = out->byte_offset, xo = x->byte_offset;
  cl_kernel k = lease.k;
  if (!set_arg(fn, k, 0, sizeof om, &om, &st) || !set_arg(fn, k, 1, sizeof oo, &oo, &st) ||
      !set_arg(fn, k, 2, sizeof xm, &xm, &st) || !set_arg(fn, k, 3, sizeof xo, &xo, &st) ||
      !set_arg(fn, k, 4, sizeof g, &g, &st))
    return st;
  if (block) return launch(fn, q, k, lines * kLineBlock, lease.name.c_str(), kLineBlock);
  return launch(fn, q, k, lines, lease.name.c_str());
}

}  // namespace ctcl
