// nn_pool.cc — max_pool2d, avg_pool2d and their backward ops on OpenCL
// devices: the kernels and host geometry both GPU modules share
// (src/gpu/nn_kernels.cc, nn_geometry.cc), any strides (NCHW, NHWC, views),
// one work-item per output element. The backward ops gather: each dx element
// sums, in window order, the outputs whose window holds it (max: those whose
// index names it), so they need no atomics and are deterministic. An index
// outside its output's window (which the CPU refuses after reading it)
// contributes nothing to dx; a check kernel run before the backward sets
// the device's error flag for it, which the next ct_synchronize reports
// (reading device memory before the call returns would block).
#include "gpu/nn_kernels.h"
#include "nn_internal.h"

#ifdef CT_HAVE_CLBLAST

namespace ctcl {

CTStatus pool_plan_execute(const NNPlan* plan, const CTNNCall* call) {
  const char* fn = call->fn;
  Device* d = nullptr;
  Queue q;
  Program* prog = nullptr;
  if (CTStatus s = shared_kernels(plan, call, pool_kernels(), "pool2d", &d, &q, &prog)) return s;
  PoolCall pc;
  pool_call(call, &pc);
  const PGeo& g = pc.g;
  if (pc.items == 0) return CT_OK;
  if (pc.check_items > 0) {  // the indices, checked on the device first
    cl_mem flag = nullptr, im = mem_of(pc.ind);
    cl_ulong io = pc.ind->byte_offset;
    if (CTStatus s = error_flag(fn, d, q.ctx, &flag)) return s;
    cl_kernel kc = nullptr;
    if (CTStatus s = prog->take(fn, "pool_ind_check", &kc)) return s;
    CTStatus st = CT_OK;
    if (set_arg(fn, kc, 0, sizeof im, &im, &st) && set_arg(fn, kc, 1, sizeof io, &io, &st) &&
        set_arg(fn, kc, 2, sizeof g, &g, &st) && set_arg(fn, kc, 3, sizeof flag, &flag, &st) &&
        set_arg(fn, kc, 4, sizeof kFlagPoolIndex, &kFlagPoolIndex, &st))
      st = launch(fn, q, kc, pc.check_items, "pool_ind_check");
    prog->give("pool_ind_check", kc);
    if (st) return st;
  }
  const char* name = pc.kernel;
  cl_kernel k = nullptr;
  if (CTStatus s = prog->take(fn, name, &k)) return s;
  CTStatus st = CT_OK;
  const CTensor *xt = pc.x, *yt = pc.y, *it = pc.ind;
  const cl_int is_max = pc.is_max;
  cl_mem xm = mem_of(xt), ym = mem_of(yt), im = it ? mem_of(it) : mem_of(yt);
  cl_ulong xo = xt->byte_offset, yo = yt->byte_offset, io = it ? it->byte_offset : 0;
  const bool ok = pc.fwd ? set_arg(fn, k, 0, sizeof ym, &ym, &st) && set_arg(fn, k, 1, sizeof yo, &yo, &st) &&
                               set_arg(fn, k, 2, sizeof im, &im, &st) && set_arg(fn, k, 3, sizeof io, &io, &st) &&
                               set_arg(fn, k, 4, sizeof xm, &xm, &st) && set_arg(fn, k, 5, sizeof xo, &xo, &st)
                         : set_arg(fn, k, 0, sizeof xm, &xm, &st) && set_arg(fn, k, 1, sizeof xo, &xo, &st) &&
                               set_arg(fn, k, 2, sizeof ym, &ym, &st) && set_arg(fn, k, 3, sizeof yo, &yo, &st) &&
                               set_arg(fn, k, 4, sizeof im, &im, &st) && set_arg(fn, k, 5, sizeof io, &io, &st);
  if (ok && set_arg(fn, k, 6, sizeof is_max, &is_max, &st) && set_arg(fn, k, 7, sizeof g, &g, &st))
    st = launch(fn, q, k, pc.items, name);
  prog->give(name, k);
  return st;
}

}  // namespace ctcl

#endif  // CT_HAVE_CLBLAST
