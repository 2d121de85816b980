/*
 * loopback.c — the loopback test backend (see loopback.h): a device type of
 * its own (CT_EXT_DEV) with two devices, its own allocator, copies, streams
 * and a handful of kernels, written against <ctensor/plugin.h> and the C
 * standard library only. It talks to ctensor solely through the CTHost table
 * it is given: it links nothing from the library.
 *
 * Device memory is host memory, but every byte is stored XORed with the
 * device's key and the device says host_accessible = 0: core must move every
 * value through the copy slot below, and a path that memcpy'd device memory
 * (or ran a CPU kernel on it) would produce wrong values that the tests see.
 */
#include "loopback.h"

#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const CTHost* g_host;
static int32_t g_perturb_op = -1; /* CT_LOOPBACK_PERTURB: a deliberately wrong kernel, for the tool's tests */

static atomic_llong c_live, c_mallocs, c_temp, c_frees, c_bad_frees, c_copies, c_kernels, c_syncs;

void ct_loopback_stats(CTLoopbackStats* s) {
  if (!s) return;
  s->live = atomic_load(&c_live);
  s->mallocs = atomic_load(&c_mallocs);
  s->temp_allocs = atomic_load(&c_temp);
  s->frees = atomic_load(&c_frees);
  s->bad_frees = atomic_load(&c_bad_frees);
  s->copies = atomic_load(&c_copies);
  s->kernels = atomic_load(&c_kernels);
  s->synchronizes = atomic_load(&c_syncs);
}

/* ------------------------------------------------------------------------ */
/* Names for messages                                                        */
/* ------------------------------------------------------------------------ */

static const char* op_name(int32_t op) {
  CTOpInfo info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (g_host && g_host->op_info(op, &info) == CT_OK && info.name) return info.name;
  return "?";
}

static const char* dt_name(int32_t dt) { return g_host ? g_host->dtype_name(dt) : "?"; }

/* ------------------------------------------------------------------------ */
/* Memory: a header with a magic and the owner, a canary after the data       */
/* ------------------------------------------------------------------------ */

#define LB_HEADER 64
#define LB_MAGIC 0x4C4F4F504D454D31ull  /* "LOOPMEM1" */
#define LB_CANARY 0xC0FFEE11DEADBEEFull

typedef struct {
  uint64_t magic;
  uint64_t bytes;
  int32_t device_id;
  int32_t temp; /* 1: from default_allocator, 0: from the malloc slot */
} Header;

static size_t round8(size_t n) { return (n + 7) & ~(size_t)7; }

static CTStatus lb_alloc(const char* fn, int32_t id, size_t bytes, int temp, void** ptr) {
  if (id < 0 || id >= CT_LOOPBACK_DEVICES)
    return g_host->set_error(CT_ERR_NOT_FOUND, "%s: the loopback backend has no device %d", fn, id);
  if (bytes > ((size_t)1 << 48))
    return g_host->set_error(CT_ERR_OUT_OF_MEMORY, "%s: %zu bytes is more than the loopback device holds", fn, bytes);
  const size_t total = (LB_HEADER + round8(bytes) + 8 + 63) & ~(size_t)63;
  unsigned char* raw = (unsigned char*)aligned_alloc(64, total);
  if (!raw)
    return g_host->set_error(CT_ERR_OUT_OF_MEMORY, "%s: the loopback device could not allocate %zu bytes", fn, bytes);
  Header h;
  h.magic = LB_MAGIC;
  h.bytes = bytes;
  h.device_id = id;
  h.temp = temp;
  memcpy(raw, &h, sizeof h);
  const uint64_t canary = LB_CANARY;
  memcpy(raw + LB_HEADER + round8(bytes), &canary, 8);
  atomic_fetch_add(&c_live, 1);
  atomic_fetch_add(temp ? &c_temp : &c_mallocs, 1);
  *ptr = raw + LB_HEADER;
  return CT_OK;
}

static void lb_release(int32_t id, void* ptr, int temp) {
  if (!ptr) return;
  unsigned char* raw = (unsigned char*)ptr - LB_HEADER;
  Header h;
  memcpy(&h, raw, sizeof h);
  if (h.magic != LB_MAGIC || h.device_id != id || h.temp != temp) {
    atomic_fetch_add(&c_bad_frees, 1);
    fprintf(stderr, "loopback: free of %p on device %d (%s) that this allocator did not hand out that way\n", ptr, id,
            temp ? "temp_free" : "ct_free");
    return;  /* leak it rather than corrupt the heap */
  }
  uint64_t canary;
  memcpy(&canary, raw + LB_HEADER + round8((size_t)h.bytes), 8);
  if (canary != LB_CANARY) {
    atomic_fetch_add(&c_bad_frees, 1);
    fprintf(stderr, "loopback: %p (%llu bytes on device %d) was written past its end\n", ptr,
            (unsigned long long)h.bytes, id);
  }
  h.magic = 0;
  memcpy(raw, &h, sizeof h);
  free(raw);
  atomic_fetch_sub(&c_live, 1);
  atomic_fetch_add(&c_frees, 1);
}

static CTStatus lb_malloc(int32_t id, size_t bytes, void** ptr) { return lb_alloc("ct_malloc", id, bytes, 0, ptr); }
static void lb_free(int32_t id, void* ptr) { lb_release(id, ptr, 0); }

static CTStatus lb_temp_alloc(void* user, CTDevice device, size_t bytes, void* stream, void** ptr) {
  (void)user;
  (void)stream;
  if (device.device_type != CT_EXT_DEV)
    return g_host->set_error(CT_ERR_INVALID_ARGUMENT, "temp_alloc: device type %d is not the loopback's", device.device_type);
  return lb_alloc("temp_alloc", device.device_id, bytes, 1, ptr);
}

static void lb_temp_free(void* user, CTDevice device, void* ptr, void* stream) {
  (void)user;
  (void)stream;
  lb_release(device.device_id, ptr, 1);
}

/* ------------------------------------------------------------------------ */
/* Devices, streams                                                          */
/* ------------------------------------------------------------------------ */

static int32_t lb_device_count(void) { return CT_LOOPBACK_DEVICES; }

static CTStatus lb_device_info(int32_t id, CTDeviceInfo* info) {
  info->device.device_type = CT_EXT_DEV;
  info->device.device_id = id;
  snprintf(info->name, sizeof info->name, "loopback test device %d (host memory, encoded, own allocator)", id);
  snprintf(info->backend, sizeof info->backend, "loopback");
  info->compute_units = 1;
  info->default_threads = 1;
  info->memory_bytes = 0;
  return CT_OK;
}

static CTStatus lb_check_stream(const char* fn, int32_t id, void* stream) {
  if (!stream) return CT_OK;
  const CTLoopbackStream* s = (const CTLoopbackStream*)stream;
  if (s->magic != CT_LOOPBACK_STREAM_MAGIC)
    return g_host->set_error(CT_ERR_INVALID_ARGUMENT,
                             "%s: stream %p is not a loopback stream (a CTLoopbackStream* with magic 0x%08X); "
                             "the loopback backend refuses it",
                             fn, stream, (unsigned)CT_LOOPBACK_STREAM_MAGIC);
  if (s->device_id != id)
    return g_host->set_error(CT_ERR_INVALID_ARGUMENT,
                             "%s: stream %p belongs to loopback device %d, not to loopback device %d", fn, stream,
                             (int)s->device_id, (int)id);
  return CT_OK;
}

static void count_on(void* stream) {
  if (stream) ((CTLoopbackStream*)stream)->ops++;
}

static CTStatus lb_synchronize(int32_t id, void* stream) {
  (void)id;
  (void)stream;
  atomic_fetch_add(&c_syncs, 1);
  return CT_OK; /* every operation is synchronous */
}

/* ------------------------------------------------------------------------ */
/* Encoded memory and strided iteration                                      */
/* ------------------------------------------------------------------------ */

/* The byte key of a device's memory; host memory has key 0. */
static unsigned char key_of(CTDevice d) {
  if (d.device_type != CT_EXT_DEV) return 0;
  return d.device_id == 0 ? 0xA5 : 0x3C;
}

/* n <= 8: one element */
static void get_bytes(void* dst, const char* src, int n, unsigned char key) {
  unsigned char* d = (unsigned char*)dst;
  for (int i = 0; i < n && i < 8; ++i) d[i] = (unsigned char)src[i] ^ key;
}
static void put_bytes(char* dst, const void* src, int n, unsigned char key) {
  const unsigned char* s = (const unsigned char*)src;
  for (int i = 0; i < n && i < 8; ++i) dst[i] = (char)(s[i] ^ key);
}

static int64_t stride_of(const CTensor* t, int32_t i) {
  if (t->strides) return t->strides[i];
  int64_t s = 1;
  for (int32_t j = i + 1; j < t->ndim; ++j) s *= t->shape[j];
  return s;
}

static char* base_of(const CTensor* t) { return (char*)t->data + t->byte_offset; }
static int itemsize_of(const CTensor* t) { return t->dtype.bits / 8; }

enum { kMaxOps = 3 };

/* An odometer over `nd` dims, moving up to kMaxOps byte pointers. */
typedef struct {
  int nd, nops;
  int64_t shape[CT_MAX_NDIM];
  int64_t st[kMaxOps][CT_MAX_NDIM];
  int64_t idx[CT_MAX_NDIM];
  char* p[kMaxOps];
} Iter;

static void iter_next(Iter* it) {
  for (int d = it->nd - 1; d >= 0; --d) {
    for (int k = 0; k < it->nops; ++k) it->p[k] += it->st[k][d];
    if (++it->idx[d] < it->shape[d]) return;
    for (int k = 0; k < it->nops; ++k) it->p[k] -= it->st[k][d] * it->shape[d];
    it->idx[d] = 0;
  }
}

/* Every operand has t[0]'s shape; returns the element count. */
static int64_t iter_same_shape(Iter* it, const CTensor* const* t, int nops) {
  int64_t n = 1;
  it->nd = t[0]->ndim;
  it->nops = nops;
  for (int d = 0; d < it->nd; ++d) {
    it->shape[d] = t[0]->shape[d];
    it->idx[d] = 0;
    n *= it->shape[d];
  }
  for (int k = 0; k < nops; ++k) {
    it->p[k] = base_of(t[k]);
    for (int d = 0; d < it->nd; ++d) it->st[k][d] = stride_of(t[k], d) * itemsize_of(t[k]);
  }
  return n;
}

/* float32 / float64 values as double */
static double ldf(const char* p, int32_t dt, unsigned char key) {
  if (dt == CT_DT_FLOAT32) {
    float f;
    get_bytes(&f, p, 4, key);
    return f;
  }
  double d;
  get_bytes(&d, p, 8, key);
  return d;
}
static void stf(char* p, int32_t dt, double v, unsigned char key) {
  if (dt == CT_DT_FLOAT32) {
    float f = (float)v;
    put_bytes(p, &f, 4, key);
  } else {
    put_bytes(p, &v, 8, key);
  }
}

/* ------------------------------------------------------------------------ */
/* Cast: every pair of the dtypes                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
  int is_float;
  double f;
  int64_t i;    /* an integer's value; a uint64's bits when is_u64 */
  int is_u64;
} Val;

static double dec_small(uint16_t h, int ebits, int mbits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t sign = (h >> (ebits + mbits)) & 1u, ex = (h >> mbits) & ((1u << ebits) - 1), m = h & ((1u << mbits) - 1);
  double r;
  if (ex == (1u << ebits) - 1) r = m ? NAN : INFINITY;
  else if (ex == 0) r = ldexp((double)m, 1 - bias - mbits);
  else r = ldexp((double)(m | (1u << mbits)), (int)ex - bias - mbits);
  return sign ? -r : r;
}

/* A double to a small IEEE format, rounding to nearest even once. */
static uint16_t enc_small(double v, int ebits, int mbits) {
  const int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias;
  const uint32_t all = (1u << ebits) - 1;
  const uint32_t sign = signbit(v) ? 1u << (ebits + mbits) : 0u;
  if (isnan(v)) return (uint16_t)(sign | (all << mbits) | (1u << (mbits - 1)));
  const double a = fabs(v);
  if (isinf(a)) return (uint16_t)(sign | (all << mbits));
  if (a == 0) return (uint16_t)sign;
  int e;
  frexp(a, &e);
  const int E = e - 1;
  const int q = (E < emin ? emin : E) - mbits;
  const double val = ldexp(nearbyint(ldexp(a, -q)), q); /* exact scaling; nearbyint rounds half to even */
  if (val >= ldexp(1.0, bias + 1)) return (uint16_t)(sign | (all << mbits));
  if (val < ldexp(1.0, emin)) return (uint16_t)(sign | (uint32_t)ldexp(val, mbits - emin));
  frexp(val, &e);
  const int E2 = e - 1;
  const uint32_t m = (uint32_t)(ldexp(val, mbits - E2) - ldexp(1.0, mbits));
  return (uint16_t)(sign | ((uint32_t)(E2 + bias) << mbits) | m);
}

/* An integer (int64, or a uint64's bits when u64) to a small format with one
 * rounding (not through a rounded double). */
static uint16_t enc_small_int(int64_t v, int u64, int ebits, int mbits) {
  const int neg = !u64 && v < 0;
  const uint64_t m = neg ? 0 - (uint64_t)v : (uint64_t)v;
  if (m < (1ull << 53)) return enc_small(neg ? -(double)m : (double)m, ebits, mbits);
  const int top = 63 - __builtin_clzll(m), shift = top - mbits;
  uint64_t keep = m >> shift;
  const uint64_t rest = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rest > half || (rest == half && (keep & 1))) ++keep;
  const double val = ldexp((double)keep, shift);
  return enc_small(neg ? -val : val, ebits, mbits);
}

static Val load_val(const unsigned char* b, int32_t dt) {
  Val v = {0, 0.0, 0, 0};
  switch (dt) {
    case CT_DT_BOOL: v.i = b[0] != 0; break;
    case CT_DT_INT8: v.i = (int8_t)b[0]; break;
    case CT_DT_INT16: { int16_t x; memcpy(&x, b, 2); v.i = x; break; }
    case CT_DT_INT32: { int32_t x; memcpy(&x, b, 4); v.i = x; break; }
    case CT_DT_INT64: memcpy(&v.i, b, 8); break;
    case CT_DT_UINT8: v.i = b[0]; break;
    case CT_DT_UINT16: { uint16_t x; memcpy(&x, b, 2); v.i = x; break; }
    case CT_DT_UINT32: { uint32_t x; memcpy(&x, b, 4); v.i = x; break; }
    case CT_DT_UINT64: memcpy(&v.i, b, 8); v.is_u64 = 1; break;
    case CT_DT_FLOAT16: { uint16_t h; memcpy(&h, b, 2); v.is_float = 1; v.f = dec_small(h, 5, 10); break; }
    case CT_DT_BFLOAT16: { uint16_t h; memcpy(&h, b, 2); v.is_float = 1; v.f = dec_small(h, 8, 7); break; }
    case CT_DT_FLOAT32: { float f; memcpy(&f, b, 4); v.is_float = 1; v.f = f; break; }
    default: v.is_float = 1; memcpy(&v.f, b, 8); break;
  }
  return v;
}

/* Float to integer: truncate toward zero, saturate, NaN gives 0 (the bits of
 * the result, as uint64). */
static uint64_t saturate(double f, int32_t dt) {
  if (isnan(f)) return 0;
  const double t = trunc(f);
  if (dt == CT_DT_INT64) {
    if (t >= 9223372036854775808.0) return (uint64_t)INT64_MAX;
    if (t < -9223372036854775808.0) return (uint64_t)INT64_MIN;
    return (uint64_t)(int64_t)t;
  }
  if (dt == CT_DT_UINT64) return t >= 18446744073709551616.0 ? UINT64_MAX : t <= 0 ? 0 : (uint64_t)t;
  double lo = 0, hi = 255;
  switch (dt) {
    case CT_DT_INT8: lo = -128; hi = 127; break;
    case CT_DT_INT16: lo = -32768; hi = 32767; break;
    case CT_DT_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
    case CT_DT_UINT16: hi = 65535; break;
    case CT_DT_UINT32: hi = 4294967295.0; break;
    default: break;
  }
  return (uint64_t)(int64_t)(t < lo ? lo : t > hi ? hi : t);
}

static int is_int_dt(int32_t dt) {
  return dt == CT_DT_INT8 || dt == CT_DT_INT16 || dt == CT_DT_INT32 || dt == CT_DT_INT64 || dt == CT_DT_UINT8 ||
         dt == CT_DT_UINT16 || dt == CT_DT_UINT32 || dt == CT_DT_UINT64;
}

static void store_val(unsigned char* b, int32_t dt, Val v) {
  if (dt == CT_DT_BOOL) {
    b[0] = v.is_float ? (v.f != 0 || isnan(v.f)) : v.i != 0;
    return;
  }
  if (is_int_dt(dt)) { /* integers: saturate floats, wrap integers */
    const uint64_t u = v.is_float ? saturate(v.f, dt) : (uint64_t)v.i;
    switch (dt) {
      case CT_DT_INT8: case CT_DT_UINT8: b[0] = (unsigned char)u; break;
      case CT_DT_INT16: case CT_DT_UINT16: { uint16_t x = (uint16_t)u; memcpy(b, &x, 2); break; }
      case CT_DT_INT32: case CT_DT_UINT32: { uint32_t x = (uint32_t)u; memcpy(b, &x, 4); break; }
      default: memcpy(b, &u, 8); break;
    }
    return;
  }
  switch (dt) {
    case CT_DT_FLOAT16: { uint16_t h = v.is_float ? enc_small(v.f, 5, 10) : enc_small_int(v.i, v.is_u64, 5, 10); memcpy(b, &h, 2); break; }
    case CT_DT_BFLOAT16: { uint16_t h = v.is_float ? enc_small(v.f, 8, 7) : enc_small_int(v.i, v.is_u64, 8, 7); memcpy(b, &h, 2); break; }
    case CT_DT_FLOAT32: { float f = v.is_float ? (float)v.f : v.is_u64 ? (float)(uint64_t)v.i : (float)v.i; memcpy(b, &f, 4); break; }
    default: { double d = v.is_float ? v.f : v.is_u64 ? (double)(uint64_t)v.i : (double)v.i; memcpy(b, &d, 8); break; }
  }
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                   */
/* ------------------------------------------------------------------------ */

/* CT_LOOPBACK_PERTURB=<op>: that op's first output element comes out wrong
 * (the tool's tests show that `ctensor check` catches a broken plugin). */
static void perturb(int32_t op, const CTensor* out, int32_t dt) {
  if (op != g_perturb_op) return;
  char* p = base_of(out);
  const unsigned char key = key_of(out->device);
  if (dt == CT_DT_FLOAT32 || dt == CT_DT_FLOAT64) stf(p, dt, ldf(p, dt, key) + 1.0, key);
  else p[0] ^= 1;
}

static int is_float_dt(int32_t dt) { return dt == CT_DT_FLOAT32 || dt == CT_DT_FLOAT64; }

static CTStatus lb_elementwise(const CTElementwiseCall* c) {
  atomic_fetch_add(&c_kernels, 1);
  count_on(c->stream);
  const CTensor* ops[2] = {c->out, c->in[0]};
  Iter it;
  const int64_t n = iter_same_shape(&it, ops, 2);
  const unsigned char key = key_of(c->out->device);
  const int32_t in_dt = c->in_dt[0], out_dt = c->out_dt;
  if (c->op == CT_OP_CAST) {
    const int isz = itemsize_of(c->in[0]), osz = itemsize_of(c->out);
    for (int64_t i = 0; i < n; ++i, iter_next(&it)) {
      unsigned char b[8];
      if (in_dt == out_dt) { /* a copy: bits as they are (NaN payloads too) */
        memcpy(it.p[0], it.p[1], (size_t)isz);
        continue;
      }
      get_bytes(b, it.p[1], isz, key);
      const Val v = load_val(b, in_dt);
      store_val(b, out_dt, v);
      put_bytes(it.p[0], b, osz, key);
    }
  } else {
    for (int64_t i = 0; i < n; ++i, iter_next(&it)) {
      const double x = ldf(it.p[1], in_dt, key);
      double y;
      switch (c->op) {
        case CT_OP_NEG: y = -x; break;
        case CT_OP_ABS: y = fabs(x); break;
        case CT_OP_EXP: y = exp(x); break;
        default: y = x < 0 ? 0.0 : x; break; /* relu: NaN and -0 stay */
      }
      stf(it.p[0], out_dt, y, key);
    }
  }
  perturb(c->op, c->out, out_dt);
  return CT_OK;
}

/* Inputs arrive as views with out's shape (stride 0 on broadcast dims). */
static CTStatus lb_binary(const CTElementwiseCall* c) {
  atomic_fetch_add(&c_kernels, 1);
  count_on(c->stream);
  const CTensor* ops[3] = {c->out, c->in[0], c->in[1]};
  for (int k = 1; k < 3; ++k)
    if (ops[k]->ndim != c->out->ndim)
      return g_host->set_error(CT_ERR_INTERNAL, "%s: loopback: input %d has %d dims, out %d (core must pass broadcast views)",
                               c->fn, k - 1, ops[k]->ndim, c->out->ndim);
  Iter it;
  const int64_t n = iter_same_shape(&it, ops, 3);
  const unsigned char key = key_of(c->out->device);
  const int32_t dt = c->in_dt[0];
  for (int64_t i = 0; i < n; ++i, iter_next(&it)) {
    const double a = ldf(it.p[1], dt, key), b = ldf(it.p[2], dt, key);
    switch (c->op) {
      case CT_OP_ADD: stf(it.p[0], dt, a + b, key); break;
      case CT_OP_MUL: stf(it.p[0], dt, a * b, key); break;
      case CT_OP_MAXIMUM: stf(it.p[0], dt, isnan(a) ? a : isnan(b) ? b : (a > b ? a : b), key); break;
      default: { const unsigned char r = a < b; put_bytes(it.p[0], &r, 1, key); break; } /* less */
    }
  }
  perturb(c->op, c->out, c->out_dt);
  return CT_OK;
}

static CTStatus lb_reduce(const CTReduceCall* c) {
  atomic_fetch_add(&c_kernels, 1);
  count_on(c->stream);
  const CTensor* x = c->x;
  const unsigned char key = key_of(c->out->device);
  const int xsz = itemsize_of(x), osz = itemsize_of(c->out);
  Iter outer, inner;
  outer.nd = inner.nd = 0;
  outer.nops = 2;
  inner.nops = 1;
  int64_t nouter = 1;
  for (int32_t d = 0; d < x->ndim; ++d) {
    Iter* it = (c->reduce_mask >> d) & 1u ? &inner : &outer;
    const int j = it->nd++;
    it->shape[j] = x->shape[d];
    it->idx[j] = 0;
    it->st[0][j] = stride_of(x, d) * xsz;
    if (it == &outer) {
      it->st[1][j] = c->out_strides[d] * osz;
      nouter *= x->shape[d];
    }
  }
  outer.p[0] = base_of(x);
  outer.p[1] = base_of(c->out);
  for (int64_t o = 0; o < nouter; ++o, iter_next(&outer)) {
    inner.p[0] = outer.p[0];
    for (int j = 0; j < inner.nd; ++j) inner.idx[j] = 0;
    double acc = c->op == CT_OP_SUM ? 0.0 : NAN;
    for (int64_t i = 0; i < c->count; ++i, iter_next(&inner)) {
      const double v = ldf(inner.p[0], c->x_dt, key);
      if (c->op == CT_OP_SUM) acc += v;
      else if (i == 0 || isnan(v) || (!isnan(acc) && v > acc)) acc = v; /* max: NaN wins */
    }
    stf(outer.p[1], c->out_dt, acc, key);
  }
  perturb(c->op, c->out, c->out_dt);
  return CT_OK;
}

/* softmax along one axis: e^(x - max) / sum(e^(x - max)), in double. */
static CTStatus lb_along_axis(const CTAlongAxisCall* c) {
  atomic_fetch_add(&c_kernels, 1);
  count_on(c->stream);
  const CTensor *x = c->x, *out = c->out;
  const unsigned char key = key_of(out->device);
  const int xsz = itemsize_of(x), osz = itemsize_of(out);
  Iter outer;
  outer.nd = 0;
  outer.nops = 2;
  int64_t nouter = 1;
  for (int32_t d = 0; d < x->ndim; ++d) {
    if (d == c->axis) continue;
    const int j = outer.nd++;
    outer.shape[j] = x->shape[d];
    outer.idx[j] = 0;
    outer.st[0][j] = stride_of(x, d) * xsz;
    outer.st[1][j] = stride_of(out, d) * osz;
    nouter *= x->shape[d];
  }
  const int64_t len = x->shape[c->axis];
  const int64_t xs = stride_of(x, c->axis) * xsz, os = stride_of(out, c->axis) * osz;
  outer.p[0] = base_of(x);
  outer.p[1] = base_of(out);
  for (int64_t o = 0; o < nouter; ++o, iter_next(&outer)) {
    double m = -INFINITY, s = 0.0;
    for (int64_t j = 0; j < len; ++j) { /* the largest; NaN if any is NaN */
      const double v = ldf(outer.p[0] + j * xs, c->x_dt, key);
      if (isnan(v) || v > m) m = isnan(m) ? m : v;
    }
    for (int64_t j = 0; j < len; ++j) s += exp(ldf(outer.p[0] + j * xs, c->x_dt, key) - m);
    for (int64_t j = 0; j < len; ++j) { /* reads x[j] before writing out[j]: in-place is fine */
      const double e = exp(ldf(outer.p[0] + j * xs, c->x_dt, key) - m);
      stf(outer.p[1] + j * os, c->out_dt, e / s, key);
    }
  }
  perturb(c->op, out, c->out_dt);
  return CT_OK;
}

/* Host <-> device and device <-> device (any ids), any strides, one dtype. */
static CTStatus lb_copy(const CTCopyCall* c) {
  atomic_fetch_add(&c_copies, 1);
  count_on(c->stream);
  const CTensor* ops[2] = {c->dst, c->src};
  Iter it;
  const int64_t n = iter_same_shape(&it, ops, 2);
  const unsigned char k = key_of(c->src->device) ^ key_of(c->dst->device);
  const int sz = itemsize_of(c->src);
  for (int64_t i = 0; i < n; ++i, iter_next(&it)) {
    unsigned char b[8];
    get_bytes(b, it.p[1], sz, k);
    memcpy(it.p[0], b, (size_t)sz);
  }
  return CT_OK;
}

/* ------------------------------------------------------------------------ */
/* What runs here                                                            */
/* ------------------------------------------------------------------------ */

static CTStatus lb_supports(const CTSupportQuery* q) {
  int ok = 0;
  if (q->dt >= 0 && q->dt < CT_DT_COUNT) {
    switch (q->kind) {
      case CT_KIND_UNARY:
        ok = (q->op == CT_OP_NEG || q->op == CT_OP_ABS || q->op == CT_OP_EXP || q->op == CT_OP_RELU) && is_float_dt(q->dt);
        break;
      case CT_KIND_CAST:  /* every cast but those from or to a float8 dtype */
        ok = q->op == CT_OP_CAST && q->out_dt < CT_DT_COUNT && !((CT_DTS_FLOAT8 >> q->dt) & 1u) &&
             (q->out_dt < 0 || !((CT_DTS_FLOAT8 >> q->out_dt) & 1u));
        break;
      case CT_KIND_BINARY:
        ok = (q->op == CT_OP_ADD || q->op == CT_OP_MUL || q->op == CT_OP_MAXIMUM || q->op == CT_OP_LESS) &&
             is_float_dt(q->dt);
        break;
      case CT_KIND_REDUCE: ok = (q->op == CT_OP_SUM || q->op == CT_OP_MAX) && is_float_dt(q->dt); break;
      case CT_KIND_ALONG_AXIS: ok = q->op == CT_OP_SOFTMAX && is_float_dt(q->dt); break;
      default: break;
    }
  }
  if (ok) return CT_OK;
  if (q->kind == CT_KIND_CAST)
    return g_host->set_error(CT_ERR_UNSUPPORTED, "%s: the loopback backend has no cast kernel from %s to %s", q->fn,
                             dt_name(q->dt), dt_name(q->out_dt));
  return g_host->set_error(CT_ERR_UNSUPPORTED,
                           "%s: the loopback backend has no %s kernel for %s (it runs neg, abs, exp, relu, add, mul, "
                           "maximum, less, sum, max and softmax on float32 and float64, and every cast but float8 ones)",
                           q->fn, op_name(q->op), dt_name(q->dt));
}

/* ------------------------------------------------------------------------ */
/* Registration                                                              */
/* ------------------------------------------------------------------------ */

static void read_perturb(void) {
  const char* name = getenv("CT_LOOPBACK_PERTURB");
  if (!name || !*name) return;
  for (int32_t op = 0; op < 100000; ++op) {
    CTOpInfo info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (g_host->op_info(op, &info) != CT_OK) break;
    if (info.name && strcmp(info.name, name) == 0) g_perturb_op = op;
  }
}

CTStatus ct_loopback_register(const CTHost* host) {
  if (!host) return CT_ERR_INVALID_ARGUMENT;
  if (host->struct_size < offsetof(CTHost, register_backend) + sizeof host->register_backend ||
      (host->abi_version >> 16) != CT_PLUGIN_ABI_MAJOR)
    return CT_ERR_ABI_VERSION;
  g_host = host;
  read_perturb();
  static CTDeviceInterface dev;
  static CTKernelInterface kern;
  memset(&dev, 0, sizeof dev);
  dev.struct_size = sizeof dev;
  dev.abi_version = CT_PLUGIN_ABI_VERSION;
  dev.device_type = CT_EXT_DEV;
  dev.name = "loopback";
  dev.data_is_address = 1;
  dev.host_accessible = 0;
  dev.device_count = &lb_device_count;
  dev.device_info = &lb_device_info;
  dev.malloc = &lb_malloc;
  dev.free = &lb_free;
  dev.copy = &lb_copy;
  dev.synchronize = &lb_synchronize;
  dev.check_stream = &lb_check_stream;
  dev.default_allocator.struct_size = sizeof(CTAllocator);
  dev.default_allocator.alloc = &lb_temp_alloc;
  dev.default_allocator.free = &lb_temp_free;
  memset(&kern, 0, sizeof kern);
  kern.struct_size = sizeof kern;
  kern.abi_version = CT_PLUGIN_ABI_VERSION;
  kern.device_type = CT_EXT_DEV;
  kern.name = "loopback";
  kern.supports = &lb_supports;
  kern.elementwise = &lb_elementwise;
  kern.binary = &lb_binary;
  kern.reduce = &lb_reduce;
  kern.along_axis = &lb_along_axis;
  return host->register_backend(&dev, &kern);
}

CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info) {
  (void)host_version; /* ct_loopback_register checks host->abi_version */
  info->abi_version = CT_PLUGIN_ABI_VERSION;
  info->name = "loopback";
  info->version = "1.0.0";
  return ct_loopback_register(host);
}
