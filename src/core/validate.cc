// validate.cc — the tensor checks (extents, dtype, byte span, alignment) and the
// exact overlap tests every entry point runs before its first write.
#include "core/validate.h"

#include <algorithm>
#include <cinttypes>
#include <cstdlib>

#include "core/error.h"
#include "core/registry.h"

namespace ct {

namespace {
DtypeTable make_dtype_table() {
  DtypeTable t;
  for (int code = 0; code < 32; ++code)
    for (int b = 0; b <= 8; ++b) {
      const CTDataType d = {(uint8_t)code, (uint8_t)(8 * b), 1};
      t.idx1[code][b] = (uint8_t)(ct_dtype_index(d) + 1);
    }
  return t;
}
}  // namespace

const DtypeTable g_dtype_table = make_dtype_table();

CTStatus check_tensor_full(const char* fn, const char* arg, const CTensor* t, TensorFacts* f) {
  if (!t) return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, arg);
  if (t->ndim < 0 || t->ndim > CT_MAX_NDIM)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.ndim=%d is outside 0..%d", fn, arg, t->ndim, CT_MAX_NDIM);
  if (t->ndim > 0 && !t->shape)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.shape is NULL with ndim=%d", fn, arg, t->ndim);
  int64_t numel = 1;
  bool overflow = false;
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0)
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.shape[%d]=%" PRId64 " is negative", fn, arg, i, t->shape[i]);
    overflow = overflow || __builtin_mul_overflow(numel, t->shape[i], &numel);
  }
  char dbuf[64];
  const int32_t dt = dtype_index(t->dtype);
  if (dt < 0)
    return fail(CT_ERR_UNSUPPORTED, "%s: %s.dtype=%s is not supported (lanes must be 1; bool, int8/16/32/64, uint8/16/32/64, float16, bfloat16, float32, float64)",
                fn, arg, describe_dtype(dbuf, sizeof dbuf, t->dtype));
  const int64_t itemsize = t->dtype.bits / 8;
  if (overflow) {
    numel = 1;  // report only if the tensor is not empty: a 0 extent makes any product 0
    for (int32_t i = 0; i < t->ndim; ++i)
      if (t->shape[i] == 0) numel = 0;
    if (numel != 0) {
      char sbuf[24 * CT_MAX_NDIM + 4];
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.shape=%s has more than 2^63-1 elements", fn, arg,
                  format_shape(sbuf, sizeof sbuf, t->ndim, t->shape));
    }
  }
  f->dt = dt;
  f->itemsize = itemsize;
  f->numel = numel;
  f->lo = f->hi = 0;
  f->handle = 0;
  f->not_address = false;
  f->aligned = true;
  f->compact = numel == 0 || ct_is_compact(t);  // empty: nothing is written, any strides will do
  if (numel == 0) return CT_OK;
  if (!t->data)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.data is NULL but %s has %" PRId64 " elements", fn, arg, arg, numel);
  // Byte span: lowest and highest element offsets, all in int64 without overflow.
  int64_t neg = 0, pos = 0;
  if (!t->strides) {  // compact: the span is the elements themselves
    if (__builtin_mul_overflow(numel - 1, itemsize, &pos))
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s has %" PRId64 " elements of %" PRId64 " bytes: more than 2^63 bytes",
                  fn, arg, numel, itemsize);
  }
  for (int32_t i = 0; t->strides && i < t->ndim; ++i) {
    int64_t s = ct_stride_of(t, i), ext;
    if (__builtin_mul_overflow(s, t->shape[i] - 1, &ext) || __builtin_mul_overflow(ext, itemsize, &ext) ||
        __builtin_add_overflow(ext < 0 ? neg : pos, ext, ext < 0 ? &neg : &pos))
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.strides[%d]=%" PRId64 " with shape[%d]=%" PRId64 " spans more than 2^63 bytes",
                  fn, arg, i, s, i, t->shape[i]);
  }
  // Offsets from data: no object is larger than PTRDIFF_MAX bytes, so a
  // byte_offset, or byte_offset plus the span, beyond it addresses no
  // memory of the tensor's (it would otherwise pass as an address below 2^64
  // that is not in any address space: the kernel's first access faults).
  int64_t reach;
  if (t->byte_offset > (uint64_t)INT64_MAX || __builtin_add_overflow((int64_t)t->byte_offset, pos, &reach) ||
      __builtin_add_overflow(reach, itemsize, &reach))
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: %s.byte_offset=%" PRIu64 " plus the %" PRIu64 " bytes its elements span is more than 2^63-1 bytes "
                "from data (no object is that large)", fn, arg, t->byte_offset, (uint64_t)pos + (uint64_t)itemsize);
  // The range as addresses: on a device whose data is a handle (OpenCL's
  // cl_mem) the caller marks the facts (not_address) once it knows the
  // device, and only ranges within the same handle are compared.
  f->handle = (uintptr_t)t->data;
  const uintptr_t base = (uintptr_t)t->data;
  uintptr_t start, lo, hi;
  if (__builtin_add_overflow(base, t->byte_offset, &start) ||
      __builtin_sub_overflow(start, (uintptr_t)0 - (uintptr_t)neg, &lo) ||
      __builtin_add_overflow(start, (uintptr_t)pos + (uintptr_t)itemsize, &hi))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.data=%p with byte_offset=%" PRIu64 " and strides addresses memory outside the address space",
                fn, arg, t->data, t->byte_offset);
  f->aligned = (start & (uintptr_t)(itemsize - 1)) == 0;  // element sizes are powers of two
  f->lo = lo;
  f->hi = hi;
  return CT_OK;
}

CTStatus shape_mismatch(const char* fn, const char* arg_a, const CTensor* a, const char* arg_b, const CTensor* b) {
  char sa[24 * CT_MAX_NDIM + 4], sb[24 * CT_MAX_NDIM + 4];
  return fail(CT_ERR_SHAPE_MISMATCH, "%s: %s.shape=%s differs from %s.shape=%s", fn, arg_b,
              format_shape(sb, sizeof sb, b->ndim, b->shape), arg_a, format_shape(sa, sizeof sa, a->ndim, a->shape));
}

// ---- exact overlap -----------------------------------------------------------
//
// Two strided layouts share memory when a bounded linear Diophantine equation
//   a[0] x[0] + ... + a[n-1] x[n-1] = b,   0 <= x[i] <= u[i],   a[i] > 0
// has a solution: NumPy's formulation (solve_may_share_memory and
// solve_may_have_internal_overlap in numpy/core/src/common/mem_overlap.c).
// It is solved by a depth-first search over Euclid's reduction: the first k
// terms are one variable y[k] with gcd coefficient g[k]; at each level the
// two-variable equation g[v-1] y + a[v] x[v] = b has the solutions
// y = gamma c + (a[v]/g[v]) t, x[v] = epsilon c - (g[v-1]/g[v]) t, and each
// t allowed by the bounds is tried. Each subproblem is one step; past
// kOverlapMaxWork steps the answer is "unknown", which callers refuse.
namespace {

using i128 = __int128;

struct Term {
  int64_t a;    // coefficient, > 0
  int64_t u;    // upper bound, >= 0
  int64_t mid;  // self-overlap: the point that is the same element twice
  int32_t dim;  // the tensor dim it came from (self-overlap witnesses)
  int32_t neg;  // that dim's stride is negative
};

enum Answer { kNo, kYes, kUnknown };

constexpr int kMaxTerms = 2 * CT_MAX_NDIM + 2;

i128 floor_div(i128 a, int64_t b) {  // b > 0
  i128 q = a / b;
  if (a % b != 0 && a < 0) --q;
  return q;
}
i128 ceil_div(i128 a, int64_t b) {  // b > 0
  i128 q = a / b;
  if (a % b != 0 && a > 0) ++q;
  return q;
}

// g = gcd(a, b) = a x + b y for a, b > 0 (|x| <= b/g, |y| <= a/g).
void euclid(int64_t a, int64_t b, int64_t* g, int64_t* x, int64_t* y) {
  int64_t r0 = a, r1 = b, s0 = 1, s1 = 0, t0 = 0, t1 = 1;
  while (r1 != 0) {
    const int64_t q = r0 / r1, r2 = r0 - q * r1, s2 = s0 - q * s1, t2 = t0 - q * t1;
    r0 = r1, r1 = r2, s0 = s1, s1 = s2, t0 = t1, t1 = t2;
  }
  *g = r0, *x = s0, *y = t0;
}

struct Solver {
  int n = 0;
  const Term* t = nullptr;
  bool nontrivial = false;  // self-overlap: x[i] = mid[i] for all i does not count
  int64_t work = 0;
  int64_t g[kMaxTerms], gam[kMaxTerms], eps[kMaxTerms], U[kMaxTerms], x[kMaxTerms];

  bool trivial() const {
    for (int i = 0; i < n; ++i)
      if (x[i] != t[i].mid) return false;
    return true;
  }

  // g[v-1] y + a[v] x[v] = b with 0 <= y <= U[v-1], 0 <= x[v] <= u[v].
  Answer dfs(int v, int64_t b) {
    if (++work > kOverlapMaxWork) return kUnknown;
    if (b % g[v] != 0) return kNo;
    const int64_t c = b / g[v], c1 = t[v].a / g[v], c2 = g[v - 1] / g[v];
    const i128 y0 = (i128)gam[v] * c, x0 = (i128)eps[v] * c;
    i128 tl = ceil_div(-y0, c1), tu = floor_div((i128)U[v - 1] - y0, c1);
    const i128 tl2 = ceil_div(x0 - t[v].u, c2), tu2 = floor_div(x0, c2);
    if (tl2 > tl) tl = tl2;
    if (tu2 < tu) tu = tu2;
    if (tl > tu) return kNo;
    if (v == 1) {  // y is x[0]: every t in [tl, tu] is a solution, at most one of them trivial
      for (i128 k = tl; k <= tu && k <= tl + 1; ++k) {
        x[0] = (int64_t)(y0 + (i128)c1 * k);
        x[1] = (int64_t)(x0 - (i128)c2 * k);
        if (!nontrivial || !trivial()) return kYes;
      }
      return kNo;
    }
    for (i128 k = tl; k <= tu; ++k) {
      x[v] = (int64_t)(x0 - (i128)c2 * k);  // in [0, u[v]], and a[v] x[v] <= b since y >= 0
      const Answer r = dfs(v - 1, b - t[v].a * x[v]);
      if (r != kNo) return r;
    }
    return kNo;
  }

  // terms sorted by decreasing coefficient; b >= 0.
  Answer solve(const Term* terms, int nterms, int64_t b, bool nontrivial_) {
    t = terms;
    n = nterms;
    nontrivial = nontrivial_;
    if (b < 0) return kNo;
    if (n == 0) return !nontrivial && b == 0 ? kYes : kNo;
    if (n == 1) {
      if (nontrivial || b % t[0].a != 0 || b / t[0].a > t[0].u) return kNo;
      x[0] = b / t[0].a;
      return kYes;
    }
    g[0] = t[0].a;
    U[0] = t[0].u;
    for (int k = 1; k < n; ++k) {
      euclid(g[k - 1], t[k].a, &g[k], &gam[k], &eps[k]);
      // y[k] <= (g[k-1] U[k-1] + a[k] u[k]) / g[k], and g[k] y[k] <= b (every term is >= 0)
      const i128 ub = (i128)(g[k - 1] / g[k]) * U[k - 1] + (i128)(t[k].a / g[k]) * t[k].u;
      const int64_t cap = b / g[k];
      U[k] = ub < cap ? (int64_t)ub : cap;
    }
    return dfs(n - 1, b);
  }
};

void sort_terms(Term* t, int n) {
  std::sort(t, t + n, [](const Term& p, const Term& q) { return p.a > q.a; });
}

// Terms of one tensor's elements: |stride| * scale for each dim that moves.
void add_terms(const CTensor* x, int64_t scale, Term* t, int* n) {
  for (int32_t i = 0; i < x->ndim; ++i) {
    const int64_t s = ct_stride_of(x, i);
    if (x->shape[i] <= 1 || s == 0) continue;
    // no overflow: the tensor's byte span (> |s| * scale) was checked
    t[*n] = Term{(s < 0 ? -s : s) * scale, x->shape[i] - 1, 0, i, s < 0};
    ++*n;
  }
}

// Whether a byte of x is a byte of y (both validated, not empty).
Answer share_bytes(const CTensor* x, const TensorFacts& xf, const CTensor* y, const TensorFacts& yf) {
  if (!ranges_meet(xf, yf)) return kNo;  // different buffers of a handle device, or disjoint byte ranges
  // Measured from the lowest byte of each: byte lo_x + sum |sx| i + p of x
  // is byte hi_y - 1 - sum |sy| j' - q of y (j' counted from y's top), so
  //   sum |sx| i + p + sum |sy| j' + q = hi_y - 1 - lo_x,   p < x's itemsize, q < y's,
  // or the same with x and y swapped; the smaller right side is searched
  // (it is below both spans, so below 2^63).
  Term t[kMaxTerms];
  int n = 0;
  add_terms(x, xf.itemsize, t, &n);
  add_terms(y, yf.itemsize, t, &n);
  if (xf.itemsize > 1) t[n++] = Term{1, xf.itemsize - 1, 0, -1, 0};
  if (yf.itemsize > 1) t[n++] = Term{1, yf.itemsize - 1, 0, -1, 0};
  const uintptr_t r1 = yf.hi - 1 - xf.lo, r2 = xf.hi - 1 - yf.lo;
  const int64_t b = (int64_t)(r1 < r2 ? r1 : r2);
  // Simplify: equal coefficients are one variable; no x[i] exceeds b / a[i];
  // variables that must be 0 go.
  sort_terms(t, n);
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (m > 0 && t[m - 1].a == t[i].a) {
      if (__builtin_add_overflow(t[m - 1].u, t[i].u, &t[m - 1].u)) t[m - 1].u = INT64_MAX;
      continue;
    }
    t[m++] = t[i];
  }
  n = 0;
  for (int i = 0; i < m; ++i) {
    t[i].u = std::min(t[i].u, b / t[i].a);
    if (t[i].u > 0) t[n++] = t[i];
  }
  Solver s;
  return s.solve(t, n, b, false);
}

}  // namespace

CTStatus check_strided_output_layout(const char* fn, const char* arg, const CTensor* out) {
  for (int32_t i = 0; i < out->ndim; ++i)
    if (out->shape[i] == 0) return CT_OK;  // nothing is written: any strides will do
  int32_t dims[CT_MAX_NDIM], n = 0;
  for (int32_t i = 0; i < out->ndim; ++i) {
    if (out->shape[i] == 1) continue;
    if (out->strides[i] == 0)
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s.strides[%d]=0 with shape[%d]=%" PRId64 ": an output cannot broadcast",
                  fn, arg, i, i, out->shape[i]);
    dims[n++] = i;
  }
  // Quick sufficient test: sorted by |stride|, each stride exceeds the span
  // of all smaller ones (every layout that is a permutation of a padded
  // row-major one passes here).
  std::sort(dims, dims + n, [&](int32_t x, int32_t y) {
    return std::llabs(out->strides[x]) < std::llabs(out->strides[y]);
  });
  int64_t span = 0;
  bool quick = true;
  for (int32_t k = 0; k < n; ++k) {
    const int32_t i = dims[k];
    const int64_t s = std::llabs(out->strides[i]);
    quick = quick && s > span;
    span += s * (out->shape[i] - 1);  // no overflow: out's span was checked
  }
  if (quick) return CT_OK;
  char sh[24 * CT_MAX_NDIM + 4], st[24 * CT_MAX_NDIM + 4];
  format_shape(sh, sizeof sh, out->ndim, out->shape);
  format_shape(st, sizeof st, out->ndim, out->strides);
  // More elements than addresses in the span: two of them share one.
  int64_t numel = 1;
  for (int32_t i = 0; i < out->ndim; ++i) numel *= out->shape[i];  // checked: no overflow
  if (numel - 1 > span)
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: %s.strides=%s with shape=%s makes elements of %s overlap each other (%" PRId64
                " elements within a span of %" PRId64 ")",
                fn, arg, st, sh, arg, numel, span + 1);
  int64_t ia[CT_MAX_NDIM] = {0}, ib[CT_MAX_NDIM] = {0};  // a witness: two indices at one address
  char wa[24 * CT_MAX_NDIM + 4], wb[24 * CT_MAX_NDIM + 4];
  // Two dims alone: |s[i]| p = |s[j]| q has its least solution p = |s[j]| / g,
  // q = |s[i]| / g (g their gcd); inside the extents, those elements meet.
  for (int32_t k = 0; k < n; ++k)
    for (int32_t l = k + 1; l < n; ++l) {
      const int32_t i = dims[k], j = dims[l];
      const int64_t si = std::llabs(out->strides[i]), sj = std::llabs(out->strides[j]);
      int64_t a = si, c = sj;
      while (c != 0) {
        const int64_t r = a % c;
        a = c;
        c = r;
      }
      const int64_t p = sj / a, q = si / a;
      if (p > out->shape[i] - 1 || q > out->shape[j] - 1) continue;
      const int64_t wi = out->strides[i] < 0 ? -p : p, wj = out->strides[j] < 0 ? q : -q;  // s[i] wi + s[j] wj = 0
      ia[i] = wi > 0 ? wi : 0, ib[i] = wi < 0 ? -wi : 0;
      ia[j] = wj > 0 ? wj : 0, ib[j] = wj < 0 ? -wj : 0;
      return fail(CT_ERR_INVALID_ARGUMENT,
                  "%s: %s.strides=%s with shape=%s makes elements of %s overlap each other (%s%s and %s%s are one address)",
                  fn, arg, st, sh, arg, arg, format_shape(wa, sizeof wa, out->ndim, ia), arg,
                  format_shape(wb, sizeof wb, out->ndim, ib));
    }
  // The exact test: two indices i != j with sum s[d] i[d] = sum s[d] j[d],
  // i.e. sum |s[d]| z[d] = 0 with |z[d]| <= shape[d] - 1, z != 0; shifted by
  // mid[d] = shape[d] - 1 that is sum |s[d]| x[d] = sum |s[d]| mid[d] with
  // 0 <= x[d] <= 2 mid[d] and x != mid (NumPy's internal-overlap problem).
  Term t[kMaxTerms];
  int m = 0;
  int64_t b = 0;
  for (int32_t k = 0; k < n; ++k) {
    const int32_t i = dims[k];
    const int64_t a = std::llabs(out->strides[i]), mid = out->shape[i] - 1;
    b += a * mid;  // <= out's span in elements
    t[m++] = Term{a, mid, mid, i, out->strides[i] < 0};
  }
  for (int k = 0; k < m; ++k) {  // 2 mid, capped by b / a (a x <= b for any solution)
    int64_t u;
    if (__builtin_mul_overflow(t[k].mid, (int64_t)2, &u)) u = INT64_MAX;
    t[k].u = std::min(u, b / t[k].a);
  }
  sort_terms(t, m);
  Solver s;
  const Answer ans = s.solve(t, m, b, true);
  if (ans == kNo) return CT_OK;
  if (ans == kUnknown)
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: could not rule out that elements of %s (shape=%s, strides=%s) overlap each other within "
                "the exact overlap test's bound of %d steps; an output that is not proven free of "
                "self-overlap is refused",
                fn, arg, sh, st, (int)kOverlapMaxWork);
  for (int k = 0; k < m; ++k) {
    const int64_t z = (s.x[k] - t[k].mid) * (t[k].neg ? -1 : 1);  // sum strides[d] z[d] = 0
    ia[t[k].dim] = z > 0 ? z : 0;
    ib[t[k].dim] = z < 0 ? -z : 0;
  }
  return fail(CT_ERR_INVALID_ARGUMENT,
              "%s: %s.strides=%s with shape=%s makes elements of %s overlap each other (%s%s and %s%s are one address)",
              fn, arg, st, sh, arg, arg, format_shape(wa, sizeof wa, out->ndim, ia), arg,
              format_shape(wb, sizeof wb, out->ndim, ib));
}

CTStatus check_meeting_overlap(const char* fn, const char* out_arg, const CTensor* out, const TensorFacts& of,
                               const char* in_arg, const CTensor* in, const TensorFacts& inf) {
  bool exact = (uintptr_t)out->data + out->byte_offset == (uintptr_t)in->data + in->byte_offset &&
               of.itemsize == inf.itemsize && out->ndim == in->ndim;
  for (int32_t i = 0; exact && i < out->ndim; ++i)
    exact = out->shape[i] == in->shape[i] && (out->shape[i] == 1 || ct_stride_of(out, i) == ct_stride_of(in, i));
  if (exact) return CT_OK;
  return check_no_shared_bytes(fn, out_arg, out, of, in_arg, in, inf,
                               "in-place needs the same data, byte_offset, element size, shape and strides");
}

CTStatus check_no_shared_bytes(const char* fn, const char* out_arg, const CTensor* out, const TensorFacts& of,
                               const char* in_arg, const CTensor* in, const TensorFacts& inf, const char* rule) {
  const Answer ans = share_bytes(out, of, in, inf);
  if (ans == kNo) return CT_OK;
  if (ans == kUnknown)
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: could not rule out that %s (bytes [%p, %p)) overlaps %s (bytes [%p, %p)) within the exact "
                "overlap test's bound of %d steps; operands that are not proven disjoint are refused (%s)",
                fn, out_arg, (void*)of.lo, (void*)of.hi, in_arg, (void*)inf.lo, (void*)inf.hi, (int)kOverlapMaxWork,
                rule);
  return fail(CT_ERR_INVALID_ARGUMENT, "%s: %s (bytes [%p, %p)) overlaps %s (bytes [%p, %p)); %s", fn, out_arg,
              (void*)of.lo, (void*)of.hi, in_arg, (void*)inf.lo, (void*)inf.hi, rule);
}

}  // namespace ct
