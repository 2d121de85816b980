// reduce.cc — reductions (category 2) on the CPU: the geometry, the loops
// and the entry point; the passes and recipes are in reduce_passes.h, the
// along-axis ops in along_axis.cc.
//
// A reduction is described once per call as kept dims (outer: one output
// each) and reduced dims, both with size-1 dims dropped and contiguous
// neighbours merged. Then one of three shapes of loop runs, each a template
// over a "recipe" (one or two passes, then a finish):
//   inner:  the reduced dims end in a contiguous run: each output reduces
//           its runs with a vector kernel (sum, max, ...); threads split
//           the outputs, or, when there are few, each output's range in
//           fixed blocks whose partials are combined in order (so results
//           do not depend on the thread count);
//   column: a kept dim is the contiguous one: vectors run across it and
//           accumulate down the reduced dims (sum over axis 0);
//   gather: anything else: runs are gathered into a small buffer first.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include "cpu/host.h"

#include "cpu/engine.h"
#include "cpu/half.h"
#include "cpu/kernels.h"
#include "cpu/reduce_internal.h"
#include "cpu/reduce_passes.h"

namespace ct {
namespace cpu {
namespace {

// ---- the reduction geometry ---------------------------------------------------------

struct Geometry {
  const char* x;  // x's first element (after flips)
  bool aligned;   // x's elements are at multiples of their size (else: packed before any kernel reads them)
  char* o;
  int64_t xsize, osize;
  Dims kept, red;
  int64_t outer, count;
  int32_t out_dt;
  const CTCpuStream* stream;
};

void build_geometry(const CTReduceCall* c, bool keep_order, Geometry* g) {
  const CTensor* x = c->x;
  const int64_t xsize = x->dtype.bits / 8;
  const char* base = static_cast<const char*>(x->data) + x->byte_offset;
  g->kept.n = g->red.n = 0;
  for (int32_t d = 0; d < x->ndim; ++d) {
    const int64_t e = x->shape[d];
    if (e == 1) continue;
    int64_t s = ct_stride_of(x, d);
    if (c->reduce_mask & (1u << d)) {
      if (s < 0 && !keep_order) {  // order within a sum does not matter: walk forwards
        base += s * (e - 1) * xsize;
        s = -s;
      }
      g->red.ext[g->red.n] = e;
      g->red.xs[g->red.n++] = s;
    } else {
      g->kept.ext[g->kept.n] = e;
      g->kept.xs[g->kept.n] = s;
      g->kept.os[g->kept.n++] = c->out_strides[d];
    }
  }
  // Reduced dims: outermost first by stride (unless the index order matters),
  // then merge neighbours that are contiguous.
  Dims& r = g->red;
  if (!keep_order)
    for (int i = 1; i < r.n; ++i)
      for (int j = i; j > 0 && std::llabs(r.xs[j]) > std::llabs(r.xs[j - 1]); --j) {
        std::swap(r.ext[j], r.ext[j - 1]);
        std::swap(r.xs[j], r.xs[j - 1]);
      }
  int n = 0;
  for (int i = 0; i < r.n; ++i) {
    if (n > 0 && r.xs[n - 1] == r.xs[i] * r.ext[i]) {
      r.ext[n - 1] *= r.ext[i];
      r.xs[n - 1] = r.xs[i];
      continue;
    }
    r.ext[n] = r.ext[i];
    r.xs[n++] = r.xs[i];
  }
  r.n = n;
  Dims& k = g->kept;
  n = 0;
  for (int i = 0; i < k.n; ++i) {
    if (n > 0 && k.xs[n - 1] == k.xs[i] * k.ext[i] && k.os[n - 1] == k.os[i] * k.ext[i]) {
      k.ext[n - 1] *= k.ext[i];
      k.xs[n - 1] = k.xs[i];
      k.os[n - 1] = k.os[i];
      continue;
    }
    k.ext[n] = k.ext[i];
    k.xs[n] = k.xs[i];
    k.os[n++] = k.os[i];
  }
  k.n = n;
  g->x = base;
  g->aligned = ((uintptr_t)base & (uintptr_t)(xsize - 1)) == 0;
  g->o = static_cast<char*>(c->out->data) + c->out->byte_offset;
  g->xsize = xsize;
  g->osize = c->out->dtype.bits / 8;
  g->outer = 1;
  for (int i = 0; i < k.n; ++i) g->outer *= k.ext[i];
  g->count = c->count;
  g->out_dt = c->out_dt;
}

// Reduces flat indices [begin, end) of the reduced dims of the output whose
// first x element is px, with pass P: runs along the innermost reduced dim.
template <class T, class P>
typename P::S reduce_range(const P& pass, const Geometry& g, const T* px, int64_t begin, int64_t end) {
  const Dims& r = g.red;
  typename P::S s = pass.init();
  if (r.n == 0) {  // one element
    if (begin >= end) return s;
    const T v = load_u(px);
    return pass.contig(&v, 1, 0);
  }
  const int last = r.n - 1;
  const int64_t inner = r.ext[last], st = r.xs[last];
  int64_t pos = begin;
  while (pos < end) {
    const int64_t j = pos % inner;
    const int64_t len = std::min(inner - j, end - pos);
    const T* p = px + offset_of(r, pos);
    for_pieces(p, st, len, g.aligned, [&](const T* q, int64_t off, int64_t m) {
      s = pass.combine(s, pass.contig(q, m, pos + off));
    });
    pos += len;
  }
  return s;
}

// Reduces all of one output's elements, split in fixed blocks over threads
// when `split` (few outputs, many elements each); block partials are then
// combined in order, pairwise, so the result does not depend on threads.
template <class T, class P> struct SplitCtx {
  const P* pass;
  const Geometry* g;
  const T* px;
  int64_t block;
  typename P::S* parts;
};
template <class T, class P> void split_body(void* ctx, int64_t b, int64_t e) {
  auto* c = static_cast<SplitCtx<T, P>*>(ctx);
  for (int64_t i = b; i < e; ++i)
    c->parts[i] = reduce_range<T, P>(*c->pass, *c->g, c->px, i * c->block, std::min(c->g->count, (i + 1) * c->block));
}
template <class P> typename P::S combine_tree(const P& pass, const typename P::S* parts, int64_t n) {
  if (n == 1) return parts[0];
  const int64_t h = n / 2;
  return pass.combine(combine_tree(pass, parts, h), combine_tree(pass, parts + h, n - h));
}
constexpr int64_t kMaxBlocks = 1024;
template <class T, class P> typename P::S reduce_one(const P& pass, const Geometry& g, const T* px, bool split) {
  if (!split) return reduce_range<T, P>(pass, g, px, 0, g.count);
  const int64_t block = std::max<int64_t>(int64_t(1) << 15, (g.count + kMaxBlocks - 1) / kMaxBlocks);
  const int64_t nb = (g.count + block - 1) / block;
  typename P::S parts[kMaxBlocks];
  SplitCtx<T, P> ctx{&pass, &g, px, block, parts};
  parallel_for(g.stream, nb, 1, &split_body<T, P>, &ctx);
  return combine_tree(pass, parts, nb);
}

// Whether recipe R has a fused pass for T (reduce_passes.h): one sweep.
template <class R, class = void> struct HasFused : std::false_type {};
template <class R> struct HasFused<R, std::void_t<decltype(R::kFused)>> : std::integral_constant<bool, R::kFused> {};

template <class T, class R> void finish_passes(const R& rec, const Geometry& g, const T* px, char* po, bool split);
template <class T, class R> void finish_one(const R& rec, const Geometry& g, const T* px, char* po, bool split) {
  if constexpr (HasFused<R>::value) {
    rec.finish_fused(po, g.out_dt, reduce_one<T>(rec.pf(g.count > 0 ? px : nullptr), g, px, split));
  } else {
    finish_passes<T, R>(rec, g, px, po, split);
  }
}
template <class T, class R> void finish_passes(const R& rec, const Geometry& g, const T* px, char* po, bool split) {
  const auto s1 = reduce_one<T>(rec.p1(), g, px, split);
  if constexpr (R::kTwo) {
    const auto s2 = reduce_one<T>(rec.p2(s1), g, px, split);
    rec.finish(po, g.out_dt, s1, s2);
  } else {
    rec.finish(po, g.out_dt, s1, 0);
  }
}

// inner / gather: threads over outputs.
template <class T, class R> struct OutCtx {
  const R* rec;
  const Geometry* g;
};
template <class T, class R> void outputs_body(void* ctx, int64_t b, int64_t e) {
  auto* c = static_cast<OutCtx<T, R>*>(ctx);
  const Geometry& g = *c->g;
  for (int64_t i = b; i < e; ++i) {
    const T* px = reinterpret_cast<const T*>(g.x) + offset_of(g.kept, i);
    finish_one<T, R>(*c->rec, g, px, g.o + out_offset_of(g.kept, i) * g.osize, false);
  }
}

// column: kept dim kc is contiguous in x; blocks of W outputs side by side.
// Whole rows up to this many columns: long contiguous pieces keep the
// hardware prefetcher streaming (pieces of 2 KiB ran at half NumPy's speed).
constexpr int64_t kColW = 8192;
template <class T, class R> struct ColCtx {
  const R* rec;
  const Geometry* g;
  int kc;             // the kept dim walked by vectors
  Dims others;        // the other kept dims
  int64_t nblk;       // column blocks per row of others
  int64_t width;      // columns per block (<= kColW)
};
template <class T, class P>
void col_sweep(const P& pass, const Geometry& g, const T* px, int64_t w, typename P::S* acc, const double* cv,
               int64_t r0, int64_t r1) {
  using S = typename P::S;
  for (int64_t j = 0; j < w; ++j) acc[j] = pass.init();
  // Additive passes fold rows into a block accumulator first (a two-level
  // sum: error grows with rows/64 + 64, not with rows).
  S* blk = acc + w;  // the caller's scratch holds 2 * w states
  S* dst = P::kAdditive ? blk : acc;
  int64_t in_blk = 0;
  if (P::kAdditive)
    for (int64_t j = 0; j < w; ++j) blk[j] = pass.init();
  const Dims& r = g.red;
  if constexpr (std::is_same<P, SumPass<float, double>>::value) {
    if (pass.map == 0 && r.n == 1) {  // one reduced dim of rows: the register-blocked kernel
      if (r0 < r1) rk().col_sum_rows_f32(acc, px + r0 * r.xs[0], r.xs[0], r1 - r0, w);
      return;
    }
  }
  if (r0 >= r1) {  // nothing to fold (an empty reduced dim: its extent is 0)
    if (P::kAdditive)
      for (int64_t j = 0; j < w; ++j) acc[j] = pass.combine(acc[j], blk[j]);
    return;
  }
  int64_t idx[CT_MAX_NDIM] = {0};
  int64_t off = offset_of(r, r0);
  for (int64_t k = r.n - 1, rest = r0; k >= 0; --k) {
    idx[k] = rest % r.ext[k];
    rest /= r.ext[k];
  }
  for (int64_t row = r0; row < r1; ++row) {
    pass.col(dst, px + off, w, row, cv);
    if (P::kAdditive && ++in_blk == 64) {
      for (int64_t j = 0; j < w; ++j) acc[j] = pass.combine(acc[j], blk[j]), blk[j] = pass.init();
      in_blk = 0;
    }
    for (int k = r.n - 1; k >= 0; --k) {  // odometer over the reduced dims
      off += r.xs[k];
      if (++idx[k] < r.ext[k]) break;
      off -= r.xs[k] * r.ext[k];
      idx[k] = 0;
    }
  }
  if (P::kAdditive)
    for (int64_t j = 0; j < w; ++j) acc[j] = pass.combine(acc[j], blk[j]);
}
template <class T, class R> void columns_body(void* ctx, int64_t b, int64_t e) {
  auto* c = static_cast<ColCtx<T, R>*>(ctx);
  const Geometry& g = *c->g;
  const int64_t cols = g.kept.ext[c->kc];
  const int64_t os = g.kept.os[c->kc];
  using S1 = typename R::P1::S;
  using S2 = typename R::P2::S;
  // Heap scratch, once per chunk of tasks: 2 x kColW states per pass is too
  // much for the stack of a framework's pool thread.
  std::unique_ptr<S1[]> s1(new S1[2 * kColW]);
  std::unique_ptr<S2[]> s2(new S2[R::kTwo ? 2 * kColW : 1]);
  std::unique_ptr<double[]> cvs(new double[R::kTwo ? kColW : 1]);
  S1* a1 = s1.get();
  S2* a2 = s2.get();
  for (int64_t t = b; t < e; ++t) {
    const int64_t o = t / c->nblk, j0 = (t % c->nblk) * c->width;
    const int64_t w = std::min(c->width, cols - j0);
    const T* px = reinterpret_cast<const T*>(g.x) + offset_of(c->others, o) + j0;
    char* po = g.o + (out_offset_of(c->others, o) + j0 * os) * g.osize;
    const auto p1 = c->rec->p1();
    col_sweep<T>(p1, g, px, w, a1, nullptr, 0, g.count);
    if constexpr (R::kTwo) {
      double* cv = cvs.get();
      for (int64_t j = 0; j < w; ++j) cv[j] = c->rec->constant(a1[j]);
      col_sweep<T>(c->rec->p2(a1[0]), g, px, w, a2, cv, 0, g.count);
      for (int64_t j = 0; j < w; ++j) c->rec->finish(po + j * os * g.osize, g.out_dt, a1[j], a2[j]);
    } else {
      for (int64_t j = 0; j < w; ++j) c->rec->finish(po + j * os * g.osize, g.out_dt, a1[j], 0);
    }
  }
}

// column, few tasks: threads split the rows instead, in fixed row blocks
// (set by the row count, not the thread count) whose partial rows are then
// combined in order.
template <class T, class P> struct RowSplitCtx {
  const P* pass;
  const Geometry* g;
  const T* px;
  int64_t w, rows_per_block;
  typename P::S* parts;  // 2 * w states per block
  const double* cv;
};
template <class T, class P> void row_blocks_body(void* ctx, int64_t b, int64_t e) {
  auto* c = static_cast<RowSplitCtx<T, P>*>(ctx);
  for (int64_t i = b; i < e; ++i)
    col_sweep<T>(*c->pass, *c->g, c->px, c->w, c->parts + i * 2 * c->w, c->cv, i * c->rows_per_block,
                 std::min(c->g->count, (i + 1) * c->rows_per_block));
}
template <class T, class P>
void col_sweep_split(const P& pass, const Geometry& g, const T* px, int64_t w, typename P::S* acc,
                     const double* cv) {
  const int64_t rb = std::max<int64_t>(64, ((g.count + 15) / 16 + 63) & ~int64_t(63));
  const int64_t nrb = (g.count + rb - 1) / rb;
  std::unique_ptr<typename P::S[]> parts(new typename P::S[nrb * 2 * w]);
  RowSplitCtx<T, P> ctx{&pass, &g, px, w, rb, parts.get(), cv};
  parallel_for(g.stream, nrb, 1, &row_blocks_body<T, P>, &ctx);
  for (int64_t j = 0; j < w; ++j) acc[j] = parts[j];
  for (int64_t b = 1; b < nrb; ++b)
    for (int64_t j = 0; j < w; ++j) acc[j] = pass.combine(acc[j], parts[b * 2 * w + j]);
}
template <class T, class R> void columns_split(const R& rec, const Geometry& g, const ColCtx<T, R>& c) {
  using S1 = typename R::P1::S;
  using S2 = typename R::P2::S;
  const int64_t cols = g.kept.ext[c.kc];
  const int64_t os = g.kept.os[c.kc];
  std::unique_ptr<S1[]> a1(new S1[c.width]);
  std::unique_ptr<S2[]> a2(new S2[R::kTwo ? c.width : 1]);
  std::unique_ptr<double[]> cv(new double[R::kTwo ? c.width : 1]);
  const int64_t tasks = c.nblk * (g.outer / cols);
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t o = t / c.nblk, j0 = (t % c.nblk) * c.width;
    const int64_t w = std::min(c.width, cols - j0);
    const T* px = reinterpret_cast<const T*>(g.x) + offset_of(c.others, o) + j0;
    char* po = g.o + (out_offset_of(c.others, o) + j0 * os) * g.osize;
    col_sweep_split<T>(rec.p1(), g, px, w, a1.get(), nullptr);
    if constexpr (R::kTwo) {
      for (int64_t j = 0; j < w; ++j) cv[j] = rec.constant(a1[j]);
      col_sweep_split<T>(rec.p2(a1[0]), g, px, w, a2.get(), cv.get());
      for (int64_t j = 0; j < w; ++j) rec.finish(po + j * os * g.osize, g.out_dt, a1[j], a2[j]);
    } else {
      for (int64_t j = 0; j < w; ++j) rec.finish(po + j * os * g.osize, g.out_dt, a1[j], 0);
    }
  }
}

template <class T, class R> void run_recipe(const R& rec, Geometry& g) {
  const Dims& r = g.red;
  const bool inner_contig = r.n == 0 || r.xs[r.n - 1] == 1;
  int kc = -1;
  for (int i = 0; i < g.kept.n; ++i)
    if (g.kept.xs[i] == 1) kc = i;
  const int threads = g.stream && g.stream->parallel_for ? 8 : default_threads();
  // The column loop reads rows in place: only for aligned x (else the
  // gather loop below packs every run first).
  if (!inner_contig && kc >= 0 && r.n > 0 && g.aligned) {
    ColCtx<T, R> ctx;
    ctx.rec = &rec;
    ctx.g = &g;
    ctx.kc = kc;
    ctx.others.n = 0;
    for (int i = 0; i < g.kept.n; ++i)
      if (i != kc) {
        const int k = ctx.others.n++;
        ctx.others.ext[k] = g.kept.ext[i];
        ctx.others.xs[k] = g.kept.xs[i];
        ctx.others.os[k] = g.kept.os[i];
      }
    const int64_t cols = g.kept.ext[kc];
    ctx.nblk = (cols + kColW - 1) / kColW;
    ctx.width = ((cols + ctx.nblk - 1) / ctx.nblk + 15) & ~int64_t(15);  // even blocks
    const int64_t tasks = ctx.nblk * (g.outer / cols);
    const int64_t per_task = ctx.width * g.count;
    if (tasks < 2 * threads && g.count >= 256 && per_task >= (int64_t(1) << 16)) {
      columns_split<T, R>(rec, g, ctx);
      return;
    }
    parallel_for(g.stream, tasks, std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(per_task, 1)),
                 &columns_body<T, R>, &ctx);
    return;
  }
  // Few outputs with many elements each: split each output's range.
  if (g.outer < 2 * threads && g.count >= (int64_t(1) << 16)) {
    for (int64_t i = 0; i < g.outer; ++i) {
      const T* px = reinterpret_cast<const T*>(g.x) + offset_of(g.kept, i);
      finish_one<T, R>(rec, g, px, g.o + out_offset_of(g.kept, i) * g.osize, true);
    }
    return;
  }
  OutCtx<T, R> ctx{&rec, &g};
  parallel_for(g.stream, g.outer, std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(g.count, 1)),
               &outputs_body<T, R>, &ctx);
}

// Types per dtype: storage T; sums of integers in int64, of floats in double;
// max/min in the type itself (float for half types).
template <class T> using SumA = typename std::conditional<kFloat<T>, double, int64_t>::type;
template <class T> using ExtA = typename std::conditional<kHalf<T>, float, T>::type;

// An empty reduced set (count 0): every output is the finish of nothing.
// x is not touched and no pointer into it is formed: an empty x may have
// NULL data and any extents and strides (core checks nothing of them).
template <class T, class R> void run_empty(const R& rec, const CTReduceCall* c) {
  const CTensor* out = c->out;
  char* base = static_cast<char*>(out->data) + out->byte_offset;
  const int64_t osize = out->dtype.bits / 8;
  int64_t n = 1;
  for (int32_t d = 0; d < out->ndim; ++d) n *= out->shape[d];  // out is not empty: its count was checked
  const auto s1 = rec.p1().init();
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0, r = i;
    for (int32_t d = out->ndim - 1; d >= 0; --d) {
      const int64_t q = r / out->shape[d];
      off += (r - q * out->shape[d]) * ct_stride_of(out, d);
      r = q;
    }
    if constexpr (R::kTwo) rec.finish(base + off * osize, c->out_dt, s1, rec.p2(s1).init());
    else rec.finish(base + off * osize, c->out_dt, s1, 0);
  }
}

template <class T> CTStatus reduce_typed(const CTReduceCall* c, const CTCpuStream* s) {
  Geometry g;
  const bool arg = c->op == CT_OP_ARGMAX || c->op == CT_OP_ARGMIN;
  const bool empty = c->count == 0;
  if (!empty) build_geometry(c, arg, &g);
  g.stream = s;
  auto run = [&](const auto& rec) {
    if (empty) run_empty<T>(rec, c);
    else run_recipe<T>(rec, g);
  };
  switch (c->op) {
    case CT_OP_SUM: run(RSum<T, SumA<T>>{}); break;
    case CT_OP_MEAN: { RMean<T> r; r.count = c->count; run(r); break; }
    case CT_OP_PROD: run(RProd<T, SumA<T>>{}); break;
    case CT_OP_MAX: run(RExt<T, ExtA<T>, true>{}); break;
    case CT_OP_MIN: run(RExt<T, ExtA<T>, false>{}); break;
    case CT_OP_ARGMAX: run(RArg<T, ExtA<T>, true>{}); break;
    case CT_OP_ARGMIN: run(RArg<T, ExtA<T>, false>{}); break;
    case CT_OP_ANY: run(RAny<T, false>{}); break;
    case CT_OP_ALL: run(RAny<T, true>{}); break;
    case CT_OP_NORM2: run(RNorm2<T>{}); break;
    case CT_OP_NANSUM: run(RNanSum<T, SumA<T>>{}); break;
    case CT_OP_NANMEAN: run(RNanMean<T>{}); break;
    case CT_OP_COUNT_NONZERO: run(RCount<T>{}); break;
    case CT_OP_LOGSUMEXP:
      if constexpr (kFloat<T>) run(RLogSumExp<T, ExtA<T>>{});
      break;
    case CT_OP_VAR: case CT_OP_STD: {
      if (c->op == CT_OP_VAR) { RVar<T, false> r; r.count = c->count; r.correction = c->params[0]; run(r); }
      else { RVar<T, true> r; r.count = c->count; r.correction = c->params[0]; run(r); }
      break;
    }
    default:
      return fail(CT_ERR_INTERNAL, "cpu backend: op %d is not a reduction", c->op);
  }
  return CT_OK;
}

template <class T> struct ReduceF {
  static CTStatus run(const CTReduceCall* c, const CTCpuStream* s) { return reduce_typed<T>(c, s); }
};

}  // namespace

CTStatus cpu_reduce(const CTReduceCall* call) {
  switch (call->op) {
    case CT_OP_MEDIAN: case CT_OP_NANMEDIAN: case CT_OP_QUANTILE: case CT_OP_NANQUANTILE: case CT_OP_KTHVALUE:
    case CT_OP_MODE:
      return cpu_select(call);
    default:
      break;
  }
  // bool is stored as uint8 0/1: the same kernels, except that max/min of
  // bool is or/and, which uint8 max/min already are.
  return run_by_dtype<ReduceF>(call);
}

bool has_reduce_kernel(int32_t op, int32_t dt) {
  // The ops this file and along_axis.cc implement, by name: a new op is not
  // one of them until it has a kernel there. Every dtype the op is defined
  // for has one.
  switch (op) {
    case CT_OP_SUM: case CT_OP_MEAN: case CT_OP_PROD: case CT_OP_MAX: case CT_OP_MIN: case CT_OP_ARGMAX:
    case CT_OP_ARGMIN: case CT_OP_ANY: case CT_OP_ALL: case CT_OP_CUMSUM: case CT_OP_CUMPROD:
    case CT_OP_NANSUM: case CT_OP_NANMEAN: case CT_OP_COUNT_NONZERO: case CT_OP_SORT: case CT_OP_ARGSORT:
      return dt >= 0 && dt < CT_DT_COUNT;
    case CT_OP_CUMMAX: case CT_OP_CUMMIN:
      return dt >= 0 && dt < CT_DT_COUNT;
    case CT_OP_NORM2: case CT_OP_VAR: case CT_OP_STD: case CT_OP_MEDIAN: case CT_OP_NANMEDIAN: case CT_OP_QUANTILE:
    case CT_OP_NANQUANTILE: case CT_OP_KTHVALUE: case CT_OP_MODE:
      return (CT_DTS_NUMERIC >> dt) & 1u;
    case CT_OP_LOGSUMEXP: case CT_OP_SOFTMAX: case CT_OP_LOG_SOFTMAX: case CT_OP_SOFTMIN: case CT_OP_LOGCUMSUMEXP:
      return (CT_DTS_FLOAT >> dt) & 1u;
    default:
      return false;
  }
}

}  // namespace cpu
}  // namespace ct
