// nn_attention.cc — scaled_dot_product_attention on OpenCL devices, float16,
// bfloat16 or float32 data, a bool, data-dtype or float32 mask: the kernel
// and host geometry both GPU modules share (src/gpu/nn_kernels.cc attn_fwd,
// nn_geometry.cc attention_call). One work-item per (batch entry, query row,
// block of 32 output columns), the keys in order: deterministic, no
// workspace, any strides, batch dims broadcast.
#include "gpu/nn_kernels.h"
#include "nn_internal.h"

#ifdef CT_HAVE_CLBLAST

namespace ctcl {

CTStatus attention_plan_execute(const NNPlan* plan, const CTNNCall* call) {
  const char* fn = call->fn;
  AttnCall ac;
  attention_call(call, &ac);
  if (ac.items == 0) return CT_OK;
  Device* d = nullptr;
  Queue q;
  Program* prog = nullptr;
  if (CTStatus s = shared_kernels(plan, call, attention_kernels(), "attention", &d, &q, &prog)) return s;
  cl_kernel k = nullptr;
  if (CTStatus s = prog->take(fn, "attn_fwd", &k)) return s;
  CTStatus st = CT_OK;
  const CTensor* ts[5] = {ac.out, ac.q, ac.k, ac.v, ac.mask};
  bool ok = true;
  cl_uint a = 0;
  for (const CTensor* t : ts) {
    cl_mem m = mem_of(t ? t : ac.q);  // an absent mask: q's buffer at offset 0 (not read)
    cl_ulong o = t ? t->byte_offset : 0;
    ok = ok && set_arg(fn, k, a++, sizeof m, &m, &st) && set_arg(fn, k, a++, sizeof o, &o, &st);
  }
  if (ok && set_arg(fn, k, a++, sizeof ac.g, &ac.g, &st)) st = launch(fn, q, k, ac.items, "attn_fwd");
  prog->give("attn_fwd", k);
  return st;
}

}  // namespace ctcl

#endif  // CT_HAVE_CLBLAST
