// kernels.cc — the kernel table's slots: supports() from the rows of
// src/gpu/ops.cc and the registry (src/gpu/plan.cc, shared with OpenCL),
// and the launchers of the elementwise, binary, reduction and along-axis
// kernels the generator's CUDA dialect produces.
#include <climits>
#include <cstring>
#include "backend.h"
#include "gpu/program_index.h"

namespace ctcu {

namespace {

// Programs by (arch, kind, dtypes), so the source is generated once (the
// programs themselves belong to runtime.cc's cache).
ProgramIndex<Program> g_sig;

std::string sig_key(const Device* d, const char* family, const int32_t* dts, int n, int32_t out_dt) {
  return signature_key(d->arch, family, dts, n, out_dt);
}

template <class Gen>
CTStatus program_for(const char* fn, Device* d, const std::string& key, Gen gen, Program** prog) {
  return g_sig.get(key, gen, [&](const std::string& src, const std::string& label, Program** p) {
    return get_program(fn, d, src, label, p);
  }, prog);
}

CTStatus elementwise_program(const char* fn, Device* d, int kind, bool special, const int32_t* in_dt, int n, int32_t out_dt,
                             Program** prog) {
  const int family = kind == CT_KIND_UNARY_PARAM ? CT_KIND_UNARY : kind;
  const char* fam = family == CT_KIND_CAST ? ":cast" : family == CT_KIND_BINARY ? ":bin" : family == CT_KIND_TERNARY ? ":ter" : ":un";
  return program_for(fn, d, sig_key(d, (std::string(fam) + (special ? ":sf" : "")).c_str(), in_dt, n, out_dt),
                     [&](std::string* label) { return elementwise_source(d, family, in_dt, n, out_dt, label, special); }, prog);
}

}  // namespace

void forget_programs() { g_sig.clear(); }

CTStatus launch_blocks(const char* fn, cudaStream_t s, cudaKernel_t k, int64_t blocks, int block, void** args,
                       const std::string& name) {
  if (blocks <= 0) return CT_OK;
  if (blocks > INT_MAX)
    return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: %s over %lld blocks: more than 2^31 - 1", fn, name.c_str(),
                             (long long)blocks);
  const cudaError_t e =
      cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3((unsigned)blocks), dim3((unsigned)block), args, 0, s);
  if (e != cudaSuccess) {
    cudaGetLastError();  // a launch error is not sticky: clear it for the caller's next call
    return cuda_fail(fn, ("cudaLaunchKernel(" + name + ", " + std::to_string((long long)blocks) + " blocks of " +
                          std::to_string(block) + ")").c_str(), e);
  }
  return CT_OK;
}

CTStatus launch(const char* fn, cudaStream_t s, cudaKernel_t k, int64_t n, void** args, const std::string& name) {
  const int block = 256;
  return launch_blocks(fn, s, k, n <= 0 ? 0 : (n + block - 1) / block, block, args, name);
}

CTStatus cu_supports(const CTSupportQuery* q) { return supports(device(q->device_id), q, "cuda", nn_why); }

CTStatus cu_elementwise(const CTElementwiseCall* call) {
  const char* fn = call->fn;
  CallDevice cd(call->out);
  if (CTStatus s = cd.check(fn)) return s;
  Device* d = cd.d;
  const cudaStream_t stream = stream_of(call->stream);
  const CTOpInfo info = op_info(call->op);
  const int n_in = call->num_inputs;
  const int64_t numel = numel_of(call->out);
  if (numel == 0) return CT_OK;
  const bool dense = dense_call(call);
  if (dense && info.kind == CT_KIND_CAST && call->in_dt[0] == call->out_dt) {  // a copy: the driver's own
    const char* src = static_cast<const char*>(call->in[0]->data) + call->in[0]->byte_offset;
    char* dst = static_cast<char*>(call->out->data) + call->out->byte_offset;
    if (src == dst) return CT_OK;  // in place
    const cudaError_t e = cudaMemcpyAsync(dst, src, (size_t)numel * itemsize_of(call->out), cudaMemcpyDeviceToDevice, stream);
    return e == cudaSuccess ? CT_OK : cuda_fail(fn, "cudaMemcpyAsync", e);
  }
  Program* prog = nullptr;
  if (CTStatus s = elementwise_program(fn, d, info.kind, special_op(call->op), call->in_dt, n_in, call->out_dt, &prog)) return s;
  const std::string name = elementwise_kernel(d, call, info.kind, dense);
  cudaKernel_t k = nullptr;
  if (CTStatus s = prog->kernel(fn, name, &k)) return s;
  // The kernel's parameters, in order: out, its byte offset, each input and
  // its offset, (maps) p0 and p1 of the compute type, n, (strided) the walk.
  void* ptrs[4];
  unsigned long long offs[4];
  void* args[16];
  int a = 0;
  const CTensor* ts[4] = {call->out, call->in[0], call->in[1], call->in[2]};
  for (int i = 0; i <= n_in; ++i) {
    ptrs[i] = ts[i]->data;
    offs[i] = ts[i]->byte_offset;
    args[a++] = &ptrs[i];
    args[a++] = &offs[i];
  }
  Param p0, p1;
  if (info.kind == CT_KIND_UNARY || info.kind == CT_KIND_UNARY_PARAM || info.kind == CT_KIND_TERNARY) {
    // the scalar parameters, of the data input's compute type (where's: a's)
    const TypeInfo t = type_info(d, call->in_dt[data_slot(n_in)]);
    p0 = param_of(t, call->params[0]);
    p1 = param_of(t, call->params[1]);
    args[a++] = p0.bytes;
    args[a++] = p1.bytes;
  }
  long long n = numel;
  args[a++] = &n;
  Geo g;
  if (!dense) {
    if (!coalesce(&g, ts, 1 + n_in, call->out->ndim, call->out->shape))
      return split_call(call, ts, n_in, cu_elementwise);  // more dims than a kernel walks: a call per outer index
    args[a++] = &g;
  }
  return launch(fn, stream, k, elementwise_items(d, call->op, info.kind, call->in_dt, n_in, dense, numel), args, name);
}

CTStatus device_copy(const char* fn, Device* d, cudaStream_t stream, int32_t dt, const CTensor* src, const CTensor* dst) {
  const int64_t numel = numel_of(dst);
  if (numel == 0) return CT_OK;
  Program* prog = nullptr;
  if (CTStatus s = elementwise_program(fn, d, CT_KIND_CAST, false, &dt, 1, dt, &prog)) return s;
  cudaKernel_t k = nullptr;
  if (CTStatus s = prog->kernel(fn, "cast_s", &k)) return s;
  void* om = dst->data;
  void* im = src->data;
  unsigned long long oo = dst->byte_offset, io = src->byte_offset;
  long long n = numel;
  const CTensor* ts[2] = {dst, src};
  Geo g;
  if (!coalesce(&g, ts, 2, dst->ndim, dst->shape))  // more dims than a kernel walks: a copy per outer index
    return for_each_outer(ts, 2, [&](const CTensor* const* v) { return device_copy(fn, d, stream, dt, v[1], v[0]); });
  void* args[] = {&om, &oo, &im, &io, &n, &g};
  return launch(fn, stream, k, numel, args, "cast_s");
}

namespace {

// The device, stream and program of a one-input kind (reductions, along-axis ops).
template <class Gen>
CTStatus one_input_program(const char* fn, Device* d, const char* family, int32_t xdt, int32_t odt, Gen gen,
                           Program** prog) {
  return program_for(fn, d, sig_key(d, family, &xdt, 1, odt),
                     [&](std::string* label) { return gen(d, xdt, odt, label); }, prog);
}

}  // namespace

CTStatus cu_reduce(const CTReduceCall* call) {
  const char* fn = call->fn;
  CallDevice cd(call->out);
  if (CTStatus s = cd.check(fn)) return s;
  Device* d = cd.d;
  const cudaStream_t stream = stream_of(call->stream);
  RGeo g;
  // partials: enough to keep every SM's threads busy (fixed per device, so
  // the bits of a result depend only on the shapes and the device)
  const int64_t M = reduce_geometry(call, (int64_t)d->sms * 2048, &g), P = g.P;
  if (M < 0) return too_many_dims(fn, "CUDA");
  if (M == 0) return CT_OK;
  Program* prog = nullptr;
  if (CTStatus s = one_input_program(fn, d, ":red", call->x_dt, call->out_dt, reduce_source, &prog)) return s;
  const std::string n = op_name(call->op);
  const Param p0 = param_of(type_info(d, CT_DT_FLOAT64), call->params[0]);
  void* om = call->out->data;
  void* xm = call->x->data;
  unsigned long long oo = call->out->byte_offset, xo = call->x->byte_offset;
  // A unit-stride reduced axis: its partials by warps (_w1, adjacent lanes
  // read adjacent elements), merged by _r2, also when there is one partial.
  const bool by_warps = g.nr == 1 && g.rx[0] == 1 && !reduce_by_line(call->op);
  if (P == 1 && !by_warps) {
    cudaKernel_t k = nullptr;
    if (CTStatus s = prog->kernel(fn, n + "_r0", &k)) return s;
    void* args[] = {&om, &oo, &xm, &xo, &g, const_cast<unsigned char*>(p0.bytes)};
    return launch(fn, stream, k, M, args, n + "_r0");
  }
  cudaKernel_t k1 = nullptr, k2 = nullptr;
  const std::string first = n + (by_warps ? "_w1" : "_r1");
  if (CTStatus s = prog->kernel(fn, first, &k1)) return s;
  if (CTStatus s = prog->kernel(fn, n + "_r2", &k2)) return s;
  const CTDevice dev = call->out->device;
  void* part = nullptr;
  if (CTStatus s = g_host->temp_alloc(dev, (size_t)(M * P) * state_size(d), call->stream, &part)) return s;
  void* a1[] = {&part, &xm, &xo, &g};
  CTStatus st = launch(fn, stream, k1, M * P * (by_warps ? 32 : 1), a1, first);
  if (st == CT_OK) {
    void* a2[] = {&om, &oo, &part, &g, const_cast<unsigned char*>(p0.bytes)};
    st = launch(fn, stream, k2, M, a2, n + "_r2");
  }
  g_host->temp_free(dev, part, call->stream);  // stream-ordered: released after the kernels that use it
  return st;
}

// The index kind's loops (index_source): a gather over out's shape, or a
// scatter over the lines with each line's K elements in order.
CTStatus cu_index(const CTIndexCall* c) {
  const char* fn = c->fn;
  CallDevice cd(c->out);
  if (CTStatus s = cd.check(fn)) return s;
  Device* d = cd.d;
  const bool gather = c->mode == CT_INDEX_GATHER;
  const int32_t nd = c->out->ndim;
  const CTensor* ts[3] = {c->out, c->data, c->index};
  Geo g;
  if (!coalesce(&g, ts, 3, gather ? nd : nd - 1, c->out->shape)) return too_many_dims(fn, "CUDA");
  Program* prog = nullptr;
  if (CTStatus s = one_input_program(fn, d, ":index", c->dt, c->index_dt, index_source, &prog)) return s;
  const char* name = gather ? "ix_gather" : c->mode == CT_INDEX_SCATTER ? "ix_scatter" : "ix_scatter_add";
  cudaKernel_t k = nullptr;
  if (CTStatus s = prog->kernel(fn, name, &k)) return s;
  long long K = gather ? 1 : c->out->shape[nd - 1], dk = gather ? 0 : stride_of(c->data, nd - 1),
            ik = gather ? 0 : stride_of(c->index, nd - 1);
  long long items = gather ? c->numel : c->numel / K, n = c->axis_extent, axs = c->axis_stride;
  void* om = c->out->data;
  void* dm = c->data->data;
  void* im = c->index->data;
  unsigned long long oo = c->out->byte_offset, od = c->data->byte_offset, oi = c->index->byte_offset;
  const Param alpha = param_of(type_info(d, c->dt), c->alpha);
  void* args[] = {&om, &oo, &dm, &od, &im, &oi, &g, &n, &axs, &items, &K, &dk, &ik,
                  const_cast<unsigned char*>(alpha.bytes)};
  return launch(fn, stream_of(c->stream), k, items, args, name);
}

CTStatus cu_along_axis(const CTAlongAxisCall* call) {
  const char* fn = call->fn;
  CallDevice cd(call->out);
  if (CTStatus s = cd.check(fn)) return s;
  Device* d = cd.d;
  AGeo g;
  const int64_t lines = along_geometry(call, &g);
  if (lines < 0) return too_many_dims(fn, "CUDA");
  if (lines == 0) return CT_OK;
  Program* prog = nullptr;
  if (CTStatus s = one_input_program(fn, d, ":along", call->x_dt, call->out_dt, along_source, &prog)) return s;
  // a long line of softmax or log_softmax: a block per line
  const bool block = has_line_block(call->op) && g.len >= kLineBlockMinLen && lines <= INT_MAX;
  const std::string name = op_name(call->op) + (block ? "_b" : "_a");
  cudaKernel_t k = nullptr;
  if (CTStatus s = prog->kernel(fn, name, &k)) return s;
  void* om = call->out->data;
  void* xm = call->x->data;
  unsigned long long oo = call->out->byte_offset, xo = call->x->byte_offset;
  void* args[] = {&om, &oo, &xm, &xo, &g};
  if (block) return launch_blocks(fn, stream_of(call->stream), k, lines, kLineBlock, args, name);
  return launch(fn, stream_of(call->stream), k, lines, args, name);
}

}  // namespace ctcu
