// fuzz_common.h — what the fuzz harnesses share: a reader that turns the fuzz
// input into choices, buffers placed against PROT_NONE guard pages, CTensor
// descriptors built from the input, and the checks every call must pass
// (a known status, a message on failure, no tensor written on failure, no
// input written ever).
//
// The library trusts the memory behind a valid descriptor, so a descriptor
// that could be valid is always backed by exactly its byte span, placed so
// that its last byte is the last one before a guard page (or its first byte
// the first one after a guard page): one byte beyond faults. Descriptors the
// library must refuse (a negative extent, a bad ndim or dtype, a span that
// overflows) point into a region that is PROT_NONE throughout, so any access
// to them faults too. A consistent descriptor whose span is too large to back
// gets data = NULL, which the contract makes invalid for every call that
// reads data (the workspace queries and plans read none: their huge shapes
// are fair game).
#ifndef CTENSOR_TESTS_FUZZ_FUZZ_COMMON_H_
#define CTENSOR_TESTS_FUZZ_FUZZ_COMMON_H_

#include <ctensor/ctensor.h>
#include <ctensor/plugin.h>
#include <sys/mman.h>
#include <unistd.h>

#include <climits>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#  define CT_FUZZ_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define CT_FUZZ_ASAN 1
#  endif
#endif
#ifdef CT_FUZZ_ASAN
#  include <sanitizer/asan_interface.h>
#endif

namespace fuzz {

constexpr int kMaxArgs = CT_NN_MAX_TENSORS;  // the most tensor arguments of any op

// A broken promise of the library: report it and abort, so that libFuzzer
// (or replay_main) names the input.
[[noreturn]] inline void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fputs("fuzz: library contract violated: ", stderr);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
  std::abort();
}

// What every harness does before its first call: no modules or plugins from
// the environment (a real OpenCL or CUDA driver would dereference the
// arbitrary handles the fuzzer makes), no fault injection.
inline void init_environment() {
  setenv("CT_NO_MODULES", "1", 1);
  unsetenv("CT_PLUGIN_PATH");
  unsetenv("CT_DEBUG_PERTURB");
}

// The fuzz input as a stream of choices; past its end every read is 0, so
// short inputs are the plain cases.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), n_(size) {}
  uint8_t u8() {
    if (!n_) return 0;
    --n_;
    return *p_++;
  }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= (uint32_t)u8() << (8 * i);
    return v;
  }
  uint64_t u64() { return (uint64_t)u32() | (uint64_t)u32() << 32; }
  // In [0, n), n > 0.
  uint32_t below(uint32_t n) { return n <= 256 ? u8() % n : u32() % n; }
  bool one_in(uint32_t n) { return below(n) == 0; }
  size_t left() const { return n_; }
  // Up to n raw bytes (fewer at the end of the input).
  size_t take(void* dst, size_t n) {
    const size_t k = n < n_ ? n : n_;
    if (k) std::memcpy(dst, p_, k);
    p_ += k;
    n_ -= k;
    return k;
  }

  // An integer for an extent, stride, pad or count: mostly small, sometimes
  // a value that validation must refuse or survive.
  int64_t i64() {
    static const int64_t kEdges[] = {0, -1, 1, 2, 3, 4, 7, 8, 255, 256, 65535, 65536, INT32_MAX, INT32_MIN,
                                     (int64_t)1 << 31, (int64_t)1 << 32, (int64_t)1 << 40, (int64_t)1 << 62,
                                     INT64_MAX, INT64_MIN, INT64_MAX / 3, -((int64_t)1 << 62)};
    switch (below(8)) {
      case 0: return kEdges[below(sizeof kEdges / sizeof kEdges[0])];
      case 1: return (int64_t)u64();
      default: return (int64_t)below(6) - 1;
    }
  }
  // A double for a parameter, epsilon or scale: plain values and the ones
  // that break arithmetic.
  double f64() {
    static const double kEdges[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-5, 2.0, 3.0, 6.0, 1e300, -1e300, 5e-324,
                                    __builtin_inf(), -__builtin_inf(), __builtin_nan(""), 127.0, 128.0, 255.0,
                                    256.0, -128.0, 9.2233720368547758e18, 1.8446744073709552e19, 0.1, 1e-30};
    switch (below(4)) {
      case 0: {
        double d;
        const uint64_t bits = u64();
        std::memcpy(&d, &bits, sizeof d);
        return d;
      }
      default: return kEdges[below(sizeof kEdges / sizeof kEdges[0])];
    }
  }

 private:
  const uint8_t* p_;
  size_t n_;
};

inline size_t page_size() {
  static const size_t p = (size_t)sysconf(_SC_PAGESIZE);
  return p;
}

// Memory reserved once as [guard][pages][guard], all PROT_NONE; place() opens
// just the pages a buffer needs, against one of the guards, so one byte
// beyond the buffer on that side faults. Under ASan the rest of the opened
// pages is poisoned as well.
class Guarded {
 public:
  explicit Guarded(size_t max_bytes) : pages_((max_bytes + page_size() - 1) / page_size()) {
    void* p = mmap(nullptr, (pages_ + 2) * page_size(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) die("mmap of %zu pages failed", pages_ + 2);
    base_ = static_cast<uint8_t*>(p);
  }
  ~Guarded() { munmap(base_, (pages_ + 2) * page_size()); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;

  size_t capacity() const { return pages_ * page_size(); }

  // n bytes (n + skew <= capacity()): ending at the trailing guard page
  // (at_end) or starting after the leading one; skew moves them that many
  // bytes away from the guard (a misaligned start for an element size the
  // page edge would align). n = 0 gives the guard's own address.
  uint8_t* place(size_t n, bool at_end, size_t skew) {
    const size_t ps = page_size(), total = n + skew, k = (total + ps - 1) / ps;
    const size_t lo = at_end ? 1 + pages_ - k : 1, hi = lo + k;
    if (lo != open_lo_ || hi != open_hi_) {
      if (open_hi_ > open_lo_) mprotect(base_ + open_lo_ * ps, (open_hi_ - open_lo_) * ps, PROT_NONE);
      if (k && mprotect(base_ + lo * ps, k * ps, PROT_READ | PROT_WRITE) != 0) die("mprotect failed");
      open_lo_ = lo;
      open_hi_ = hi;
    }
    uint8_t* p = at_end ? base_ + hi * ps - total : base_ + lo * ps + skew;
#ifdef CT_FUZZ_ASAN
    if (k) {
      uint8_t *first = base_ + lo * ps, *last = base_ + hi * ps;
      __asan_unpoison_memory_region(first, last - first);
      __asan_poison_memory_region(first, p - first);
      __asan_poison_memory_region(p + n, last - (p + n));
    }
#endif
    return p;
  }

 private:
  uint8_t* base_ = nullptr;
  size_t pages_;
  size_t open_lo_ = 0, open_hi_ = 0;  // the opened pages, as page indices from base_
};

// Guarded buffers handed out in turn during one execution: data spans, and
// small arrays (shapes, strides, axes, params, descriptors, out-structs).
class Pool {
 public:
  static constexpr size_t kMaxSpan = (size_t)1 << 20;    // the largest tensor span backed
  // The most elements a backed tensor may have: zero strides let a huge
  // extent fit in a small span, and an op's work grows with the elements
  // (a variance over 2^40 broadcast ints ran past the 30 s timeout).
  static constexpr int64_t kMaxElems = (int64_t)1 << 20;
  static constexpr size_t kMaxWorkspace = (size_t)64 << 20;
  static constexpr int kSpans = 64, kArrays = 256;

  static Pool& get() {
    static Pool pool;
    return pool;
  }
  // At the start of each input: every buffer may be handed out again.
  void reset() { next_span_ = next_array_ = 0; }
  // A guarded data span (n <= kMaxSpan).
  uint8_t* span(size_t n, bool at_end, size_t skew) {
    if (next_span_ == kSpans) die("harness: more than %d tensors in one execution", kSpans);
    return spans_[next_span_++]->place(n, at_end, skew);
  }
  // A small guarded array of n bytes (n <= one page), zeroed, aligned to
  // `align` (a power of two): against the guard when n is a multiple of it.
  void* array(size_t n, bool at_end, size_t align) {
    if (next_array_ == kArrays) die("harness: more than %d arrays in one execution", kArrays);
    const size_t padded = (n + align - 1) & ~(align - 1);
    if (padded > page_size()) die("harness: an array of %zu bytes", n);
    uint8_t* p = arrays_[next_array_++]->place(padded, at_end, 0);
#ifdef CT_FUZZ_ASAN
    __asan_poison_memory_region(p + n, padded - n);
#endif
    std::memset(p, 0, n);
    return p;
  }
  uint8_t* workspace(size_t n, bool at_end) { return workspace_.place(n, at_end, 0); }
  // An address inside a region that is never readable: the data of
  // descriptors the library must refuse.
  uint8_t* poison() const { return poison_ + poison_bytes_ / 2; }

 private:
  Pool() : workspace_(kMaxWorkspace) {
    for (int i = 0; i < kSpans; ++i) spans_.emplace_back(new Guarded(kMaxSpan + 64));
    for (int i = 0; i < kArrays; ++i) arrays_.emplace_back(new Guarded(page_size()));
    poison_bytes_ = 256 * page_size();
    void* p = mmap(nullptr, poison_bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) die("mmap of the poison region failed");
    poison_ = static_cast<uint8_t*>(p);
  }
  std::vector<std::unique_ptr<Guarded>> spans_, arrays_;
  Guarded workspace_;
  uint8_t* poison_ = nullptr;
  size_t poison_bytes_ = 0;
  int next_span_ = 0, next_array_ = 0;
};

// A guarded copy of n elements of T (the arrays the library reads: axes,
// params, descriptors), placed against a guard on the side the input picks.
template <class T>
T* guarded_array(Input& in, const T* src, size_t n) {
  T* p = static_cast<T*>(Pool::get().array(n * sizeof(T), !in.one_in(4), alignof(T)));
  if (n) std::memcpy(p, src, n * sizeof(T));
  return p;
}

// Entries an array needs when the caller has `real` of them and claims
// `claimed` (the library may read what is claimed; a claim past `most` or
// below 0 is one it must refuse, so only the real ones exist).
inline int32_t room(int32_t real, int32_t claimed, int32_t most) {
  return claimed > real && claimed <= most ? claimed : real;
}

// The status rules of every entry point: a status the header knows, a
// message naming the entry point exactly when it failed, never
// CT_ERR_INTERNAL (a bug by its own definition).
inline void check_status(const char* fn, CTStatus s) {
  const char* msg = ct_last_error();
  if (s > CT_OK || s < CT_ERR_INTERNAL) die("%s returned %d, not a CTStatus (message: %s)", fn, s, msg);
  if (s == CT_OK && *msg) die("%s succeeded but left the message \"%s\"", fn, msg);
  if (s != CT_OK && !std::strstr(msg, fn))
    die("%s failed with %s but its message does not name it: \"%s\"", fn, ct_status_string(s), msg);
  if (s == CT_ERR_INTERNAL) die("%s: CT_ERR_INTERNAL: %s", fn, msg);
}

// What a harness would like a tensor to be; Tensors::make may break it.
struct Want {
  int32_t ndim = 0;
  int64_t shape[CT_MAX_NDIM] = {};
  CTDataType dtype = {CT_FLOAT, 32, 1};
};

inline CTDataType dtype_of(int32_t index) { return ct_dtype_of_index(index); }

// A dtype from mask (bit i: CTDtypeIndex i), or any when mask has none.
inline CTDataType pick_dtype(Input& in, uint32_t mask) {
  int32_t set[CT_DT_COUNT], n = 0;
  for (int32_t i = 0; i < CT_DT_COUNT; ++i)
    if (mask & (1u << i)) set[n++] = i;
  return n ? dtype_of(set[in.below(n)]) : dtype_of(in.below(CT_DT_COUNT));
}

// The dtype a tensor argument of this role has (CTTensorRole), mostly.
inline CTDataType role_dtype(Input& in, int32_t role, CTDataType data, int32_t kind) {
  if (in.one_in(16)) return pick_dtype(in, 0);
  switch (role) {
    case CT_ROLE_COND: return dtype_of(CT_DT_BOOL);
    case CT_ROLE_STAT:
    case CT_ROLE_PARAM: return dtype_of(CT_DT_FLOAT32);
    case CT_ROLE_BIAS: return in.one_in(2) ? data : dtype_of(CT_DT_FLOAT32);
    case CT_ROLE_INDEX: return dtype_of(kind == CT_KIND_INDEX && in.one_in(2) ? CT_DT_INT32 : CT_DT_INT64);
    case CT_ROLE_ANY: return pick_dtype(in, 0);
    default: return data;
  }
}

// A guarded descriptor: the first `size` bytes of desc, then the input's
// bytes, with struct_size (mostly the size) in front, in a buffer of what
// that struct_size claims (at most 1 KiB, at least the size).
inline const void* guarded_desc(Input& in, const void* desc, size_t size) {
  const uint32_t struct_size = !in.one_in(4) ? (uint32_t)size : in.one_in(2) ? in.u32() : (uint32_t)in.below(512);
  size_t n = struct_size < 1024 ? struct_size : 1024;
  if (n < size) n = size;
  if (n < sizeof struct_size) n = sizeof struct_size;
  uint8_t buf[1024] = {};
  std::memcpy(buf, desc, size);
  if (n > size) in.take(buf + size, n - size);
  std::memcpy(buf, &struct_size, sizeof struct_size);
  void* p = Pool::get().array(n, !in.one_in(4), alignof(std::max_align_t));
  std::memcpy(p, buf, n);
  return p;
}

// The tensors of one execution, built from the input; after the call,
// check() holds the library to its promises about them.
class Tensors {
 public:
  static constexpr int kMax = 20;

  explicit Tensors(Input& in) : in_(in) {}

  // A tensor like w, perhaps broken; its index is count() - 1 after.
  CTensor* make(const Want& w) {
    Slot& s = next();
    CTensor& t = s.t;
    std::memset(&t, 0, sizeof t);
    t.device = device;
    t.dtype = w.dtype;
    t.ndim = w.ndim;
    int64_t shape[CT_MAX_NDIM + 1], strides[CT_MAX_NDIM + 1];
    std::memcpy(shape, w.shape, sizeof w.shape);
    shape[CT_MAX_NDIM] = 1;
    bool shape_null = false, strides_null = true, data_null = false, wild_offset = false;
    size_t skew = 0;
    // Breakage: one in four tensors has something wrong with it.
    const uint8_t broken = in_.below(4) == 0 ? in_.below(11) : 0xff;
    switch (broken) {
      case 0: {  // ndim
        static const int32_t kNdims[] = {-1, 17, 16, INT32_MIN, INT32_MAX, 5, 6, 8};
        t.ndim = in_.one_in(4) ? (int32_t)in_.u32() : kNdims[in_.below(8)];
        for (int i = 0; i <= CT_MAX_NDIM; ++i) shape[i] = in_.below(3) + 1;
        break;
      }
      case 1:
        if (t.ndim > 0) shape[in_.below(t.ndim)] = in_.i64();
        break;
      case 2: shape_null = true; break;
      case 3: {
        static const uint8_t kBits[] = {0, 1, 7, 8, 12, 16, 24, 32, 48, 64, 128, 255};
        static const uint16_t kLanes[] = {0, 1, 2, 4, 3, 65535};
        t.dtype.code = in_.one_in(2) ? in_.u8() : (uint8_t)in_.below(16);
        t.dtype.bits = kBits[in_.below(sizeof kBits)];
        t.dtype.lanes = kLanes[in_.below(6)];
        break;
      }
      case 4: {
        static const int32_t kTypes[] = {0, CT_CUDA, CT_CUDA_HOST, CT_OPENCL, CT_EXT_DEV, CT_ROCM, 99, -1, INT32_MAX};
        t.device.device_type = in_.one_in(3) ? CT_CPU : kTypes[in_.below(9)];
        t.device.device_id = in_.one_in(2) ? (int32_t)in_.u32() : (int32_t)in_.below(3) - 1;
        break;
      }
      case 5: data_null = true; break;
      case 6: wild_offset = true; break;
      case 7: skew = 1 + in_.below(7); break;
      default: break;  // 8..10: strides, below
    }
    const int32_t nd = t.ndim >= 0 && t.ndim <= CT_MAX_NDIM ? t.ndim : 0;
    // Layout: row-major (NULL or explicit), reversed, padded, broadcast (0),
    // permuted, or small arbitrary strides; huge ones when broken.
    const uint8_t layout = broken >= 8 && broken <= 10 ? 8 : in_.below(12);
    if (layout >= 4 && nd > 0) {
      strides_null = false;
      int64_t e = 1;
      for (int32_t d = nd - 1; d >= 0; --d) {
        strides[d] = e;
        const int64_t x = shape[d] > 0 && shape[d] < (1 << 20) ? shape[d] : 1;
        e *= x;
      }
      const int32_t d = in_.below(nd);
      switch (layout) {
        case 5: strides[d] = -strides[d]; break;
        case 6:
          for (int32_t i = 0; i <= d; ++i) strides[i] *= 2;
          break;
        case 7: strides[d] = 0; break;
        case 8: strides[d] = in_.i64(); break;
        case 9: {
          const int32_t d2 = in_.below(nd);
          const int64_t x = strides[d];
          strides[d] = strides[d2];
          strides[d2] = x;
          break;
        }
        case 10:
          for (int32_t i = 0; i < nd; ++i) strides[i] = (int64_t)in_.below(9) - 4;
          break;
        default: break;  // 4, 11: explicit row-major
      }
    }
    // shape and strides: exactly ndim entries against a guard (17 for an
    // ndim out of range: reading one is already a bug, but they exist).
    const size_t entries = t.ndim >= 0 && t.ndim <= CT_MAX_NDIM ? (size_t)t.ndim : CT_MAX_NDIM + 1;
    if (!shape_null && (entries || in_.one_in(2))) t.shape = guarded_array(in_, shape, entries);
    if (!strides_null) t.strides = guarded_array(in_, strides, entries);
    s.lo = nullptr;
    s.bytes = 0;
    s.alias_of = -1;
    back(s, data_null, wild_offset, skew);
    return &t;
  }

  // Exactly tensor i again (an in-place call); its index is count() - 1 after.
  CTensor* alias(int i) {
    Slot& s = next();
    s = slots_[i];
    s.alias_of = slots_[i].alias_of >= 0 ? slots_[i].alias_of : i;
    return &s.t;
  }

  int count() const { return n_; }
  // The device of the tensors make() builds (unless it breaks it).
  CTDevice device = {CT_CPU, 0};
  CTensor* at(int i) { return &slots_[i].t; }

  // Remember every backed span as it is now (make() remembers each as filled).
  void snapshot() {
    for (int i = 0; i < n_; ++i) {
      Slot& s = slots_[i];
      if (s.alias_of < 0 && s.lo) s.saved.assign(s.lo, s.lo + s.bytes);
    }
  }

  // After a call that could write the tensors with indices in `written`
  // (a bit each): check_status; on failure no tensor changed; an input that
  // shares no memory with an output never changes.
  void check(const char* fn, CTStatus s, uint32_t written) {
    check_status(fn, s);
    const char* msg = ct_last_error();
    uint32_t dirty = 0;  // the buffers an output may have written
    if (s == CT_OK)
      for (int i = 0; i < n_; ++i)
        if (written & (1u << i)) dirty |= 1u << (slots_[i].alias_of >= 0 ? slots_[i].alias_of : i);
    for (int i = 0; i < n_; ++i) {
      const Slot& t = slots_[i];
      if (t.alias_of >= 0 || !t.lo || (dirty & (1u << i))) continue;
      if (std::memcmp(t.saved.data(), t.lo, t.bytes) != 0)
        die("%s returned %s and changed tensor %d (%s): %s", fn, ct_status_string(s), i,
            written & (1u << i) ? "an output" : "an input", msg);
    }
    // A second call sees the data as the first left it.
    snapshot();
  }

 private:
  struct Slot {
    CTensor t;
    uint8_t* lo;   // the first byte of the backed span, NULL when nothing is backed
    size_t bytes;  // the span's size
    int alias_of;  // the tensor whose memory this one is, or -1
    std::vector<uint8_t> saved;
  };

  Slot& next() {
    if (n_ == kMax) die("harness: more than %d tensors", kMax);
    return slots_[n_++];
  }

  // Memory for s.t: the exact span if the descriptor could be valid, the
  // poison region if it cannot.
  void back(Slot& s, bool data_null, bool wild_offset, size_t skew) {
    CTensor& t = s.t;
    bool valid = t.ndim >= 0 && t.ndim <= CT_MAX_NDIM && (t.ndim == 0 || t.shape);
    bool empty = false, overflow = false;
    int64_t numel = 1;
    for (int32_t d = 0; valid && d < t.ndim; ++d) {
      if (t.shape[d] < 0) valid = false;
      if (t.shape[d] == 0) empty = true;
      overflow = overflow || __builtin_mul_overflow(numel, t.shape[d], &numel);
    }
    const int32_t dt = ct_dtype_index(t.dtype);
    if (dt < 0 || (overflow && !empty)) valid = false;
    const int64_t item = valid ? t.dtype.bits / 8 : 1;
    // Lowest and highest element offsets, in bytes.
    int64_t neg = 0, pos = 0;
    for (int32_t d = 0; valid && !empty && d < t.ndim; ++d) {
      int64_t stride = 1, ext;
      if (t.strides) {
        stride = t.strides[d];
      } else {
        for (int32_t e = d + 1; e < t.ndim; ++e) stride *= t.shape[e];
      }
      if (__builtin_mul_overflow(stride, t.shape[d] - 1, &ext) || __builtin_mul_overflow(ext, item, &ext) ||
          __builtin_add_overflow(ext < 0 ? neg : pos, ext, ext < 0 ? &neg : &pos))
        valid = false;
    }
    uint64_t span = 0;
    const bool fits = valid && !empty && !__builtin_sub_overflow(pos, neg, (int64_t*)&span) &&
                      span + item <= Pool::kMaxSpan && numel <= Pool::kMaxElems;
    Pool& pool = Pool::get();
    if (!valid || empty) {  // nothing may be touched: data points at nothing readable
      t.data = empty && in_.one_in(2) ? nullptr : pool.poison() + in_.below(64);
      t.byte_offset = wild_offset ? in_.u64() : in_.below(16);
      return;
    }
    if (!fits || data_null) {  // an invalid call for anything that reads data (or too much work)
      t.data = nullptr;
      t.byte_offset = wild_offset ? in_.u64() : 0;
      return;
    }
    s.bytes = span + item;
    if (skew) skew %= item;
    s.lo = pool.span(s.bytes, !skew && !in_.one_in(4), skew);
    fill(s.lo, s.bytes, t.dtype);
    s.saved.assign(s.lo, s.lo + s.bytes);
    // data + byte_offset is the element at index 0: the span's first byte
    // minus the negative strides' reach.
    const uintptr_t start = (uintptr_t)s.lo - (uintptr_t)neg;
    const uint64_t off = wild_offset ? in_.u64() : in_.one_in(2) ? 0 : in_.below(4096) % (start + 1);
    t.byte_offset = off;
    t.data = (void*)(start - (uintptr_t)off);
  }

  // Contents: zeros, ones, small integers or random bits (float NaNs and
  // infinities included); bool is only ever 0 or 1, as the ABI says.
  void fill(uint8_t* p, size_t n, CTDataType dt) {
    const uint8_t mode = in_.below(4);
    uint32_t x = in_.u32() | 1;
    const size_t item = dt.bits / 8;
    for (size_t i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      uint8_t v = mode == 0 ? 0 : mode == 1 ? (i % item == 0) : mode == 2 ? (i % item == 0 ? x % 3 : 0) : (uint8_t)x;
      if (dt.code == CT_BOOL) v &= 1;
      p[i] = v;
    }
  }

  Input& in_;
  Slot slots_[kMax];
  int n_ = 0;
};

// The stream argument of a CPU call: the library's default, one thread, a
// parallel_for of the caller's (run serially), or a bad CTCpuStream.
inline void* pick_stream(Input& in) {
  static CTCpuStream one = {sizeof(CTCpuStream), 1, nullptr, nullptr};
  static CTCpuStream two = {sizeof(CTCpuStream), 2, nullptr, nullptr};
  static CTCpuStream pool = {sizeof(CTCpuStream), 0,
                             [](void*, int64_t n, int64_t grain, CTParallelBody body, void* ctx) {
                               for (int64_t b = 0; b < n; b += grain) body(ctx, b, b + grain < n ? b + grain : n);
                             },
                             nullptr};
  static CTCpuStream bad_size = {3, 1, nullptr, nullptr};
  static CTCpuStream bad_threads = {sizeof(CTCpuStream), -7, nullptr, nullptr};
  switch (in.below(16)) {
    case 0: return nullptr;
    case 1: return &two;
    case 2: return &pool;
    case 3: return &bad_size;
    case 4: return &bad_threads;
    default: return &one;
  }
}

// A small shape with an element type: the shape the op's tensors start from.
inline Want base_want(Input& in, uint32_t mask) {
  Want w;
  w.ndim = in.below(5);
  for (int32_t d = 0; d < w.ndim; ++d) w.shape[d] = in.one_in(8) ? 0 : 1 + in.below(4);
  w.dtype = pick_dtype(in, in.one_in(16) ? 0 : mask);
  return w;
}

// A shape that mostly agrees with base: base itself, with leading dims
// dropped or extents made 1 (broadcasting), or another small shape.
inline Want like(Input& in, const Want& base, CTDataType dtype) {
  Want w = base;
  w.dtype = dtype;
  switch (in.below(8)) {
    case 0: {
      const int32_t k = in.below(w.ndim + 1);
      std::memmove(w.shape, w.shape + k, (w.ndim - k) * sizeof w.shape[0]);
      w.ndim -= k;
      break;
    }
    case 1:
      for (int32_t d = 0; d < w.ndim; ++d)
        if (in.one_in(2)) w.shape[d] = 1;
      break;
    case 2:
      w.ndim = in.below(5);
      for (int32_t d = 0; d < w.ndim; ++d) w.shape[d] = in.below(5);
      break;
    default: break;
  }
  return w;
}

// A count the library gets: mostly the right one, sometimes off or wild.
inline int32_t count_arg(Input& in, int32_t right) {
  switch (in.below(16)) {
    case 0: return (int32_t)in.i64();
    case 1: return right + 1;
    case 2: return right - 1;
    default: return right;
  }
}

// A guarded array of the real pointers, NULL up to what the caller claims.
inline const CTensor* const* pointer_array(Input& in, const CTensor* const* p, int32_t real, int32_t claimed) {
  const CTensor* all[64] = {};
  std::memcpy(all, p, real * sizeof p[0]);
  return guarded_array(in, all, room(real, claimed, 64));
}

// A descriptor of arbitrary bytes for an NN op, or none.
inline const void* desc_bytes(Input& in, size_t desc_size) {
  if (in.one_in(16)) return nullptr;
  uint8_t raw[256] = {};
  in.take(raw, desc_size < sizeof raw ? desc_size : sizeof raw);
  return guarded_desc(in, raw, desc_size < sizeof raw ? desc_size : sizeof raw);
}

// Workspace for an NN run: what the query said, sometimes less (the run
// must refuse it) or none.
inline void workspace(Input& in, CTStatus query, size_t asked, void** ws, size_t* bytes) {
  size_t n = query == CT_OK && asked <= Pool::kMaxWorkspace ? asked : in.below(256);
  if (in.one_in(8) && n) n -= 1 + in.below((uint32_t)(n < 256 ? n : 256));
  *bytes = n;
  *ws = n || in.one_in(2) ? Pool::get().workspace(n, !in.one_in(4)) : nullptr;
}

// One call of op (any id) with tensors on `device` shaped for it: the shape
// query, then the op's kind's entry point (sometimes another kind's), and
// now and then ct_copy and ct_op_reference on the same tensors.
inline void call_op(Input& in, int32_t op, CTDevice device) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (ct_op_info(op, &info) != CT_OK) {  // no such op: tensors of some kind anyway
    info.kind = 1 + in.below(9);
    info.num_inputs = 1 + in.below(3);
    info.num_outputs = 1;
    info.num_tensors = info.num_inputs + 1;
  }
  Tensors ts(in);
  ts.device = device;
  const Want base = base_want(in, info.dtype_mask);
  const CTDataType data_dt = base.dtype;
  const CTensor* args[kMaxArgs] = {};
  int idx[kMaxArgs];  // Tensors index of each argument, -1 when NULL
  const int32_t nt = info.num_tensors < kMaxArgs ? info.num_tensors : kMaxArgs;
  const int32_t nin = info.num_inputs < nt ? info.num_inputs : nt;
  auto role = [&](int32_t i) { return info.tensor_roles ? info.tensor_roles[i] : (int32_t)CT_ROLE_DATA; };
  for (int32_t i = 0; i < nt; ++i) idx[i] = -1;
  for (int32_t i = 0; i < nin; ++i) {
    if ((info.optional_mask >> i & 1u) && in.one_in(3)) continue;
    args[i] = ts.make(like(in, base, role_dtype(in, role(i), data_dt, info.kind)));
    idx[i] = ts.count() - 1;
  }

  // The arguments besides tensors, the same for the shape query and the call.
  CTOpArgs oa;
  std::memset(&oa, 0, sizeof oa);
  oa.struct_size = in.one_in(16) ? in.u32() : (uint32_t)sizeof oa;
  oa.keepdims = in.one_in(16) ? (int32_t)in.u32() : in.below(2);
  int32_t axes[64] = {};
  const int32_t naxes = in.below(4) ? in.below(4) : in.below(CT_MAX_NDIM + 3);
  for (int32_t i = 0; i < naxes; ++i) axes[i] = in.one_in(16) ? (int32_t)in.u32() : (int32_t)in.below(9) - 4;
  oa.num_axes = count_arg(in, naxes);
  oa.axes = in.one_in(4) && oa.num_axes == 0 ? nullptr : guarded_array(in, axes, room(naxes, oa.num_axes, 64));
  oa.axis = in.one_in(16) ? (int32_t)in.u32() : (int32_t)in.below(9) - 4;
  oa.dtype = pick_dtype(in, in.one_in(8) ? 1u << in.below(CT_DT_COUNT) : 0);
  if (in.one_in(32)) oa.dtype.lanes = 2;
  oa.desc = info.kind == CT_KIND_NN ? desc_bytes(in, info.desc_size) : nullptr;
  oa.extent[0] = in.one_in(2) ? 0 : in.i64();
  oa.extent[1] = in.one_in(2) ? 0 : in.i64();
  const CTOpArgs* oap = in.one_in(16) ? nullptr : guarded_array(in, &oa, 1);

  // The shape query: on failure its outputs stay as they were.
  const int32_t nout = nt - nin;
  CTOutputInfo outs[kMaxArgs];
  std::memset(outs, 0xab, sizeof outs);
  const int32_t qin = count_arg(in, nin), qout = count_arg(in, nout);
  CTOutputInfo* outp = guarded_array(in, outs, room(nout, qout, kMaxArgs));
  const CTStatus qs = ct_op_output_info(op, oap, pointer_array(in, args, nin, qin), qin, outp, qout);
  ts.check("ct_op_output_info", qs, 0);
  if (qs != CT_OK && nout > 0 && std::memcmp(outp, outs, nout * sizeof outs[0]) != 0)
    die("ct_op_output_info failed (%s) but wrote its outputs", ct_status_string(qs));

  uint32_t written = 0;
  for (int32_t i = nin; i < nt; ++i) {
    if ((info.optional_mask >> i & 1u) && in.one_in(3)) continue;
    const int32_t pick = nin ? in.below(nin) : 0;
    if (in.one_in(6) && idx[pick] >= 0) {  // in place
      args[i] = ts.alias(idx[pick]);
    } else {
      Want w = like(in, base, role_dtype(in, role(i), data_dt, info.kind));
      const CTOutputInfo& o = outp[i - nin];
      if (qs == CT_OK && !in.one_in(8) && o.ndim >= 0 && o.ndim <= CT_MAX_NDIM) {
        w.ndim = o.ndim;
        std::memcpy(w.shape, o.shape, sizeof o.shape);
        w.dtype = o.dtype;
      }
      args[i] = ts.make(w);
    }
    idx[i] = ts.count() - 1;
    written |= 1u << idx[i];
  }
  ts.snapshot();

  // Scalars: the op's count, sometimes not.
  double params[8];
  for (double& p : params) p = in.f64();
  const int32_t np = count_arg(in, info.num_params);
  const int32_t real_np = info.num_params < 8 ? info.num_params : 8;
  const double* pp = in.one_in(16) ? nullptr : guarded_array(in, params, room(real_np, np, 8));

  auto at = [&](int32_t i) -> CTensor* { return i < nt ? const_cast<CTensor*>(args[i]) : nullptr; };
  CTensor* out = nt ? at(nt - 1) : nullptr;
  const uint32_t wout = nt && idx[nt - 1] >= 0 ? 1u << idx[nt - 1] : 0;
  void* stream = pick_stream(in);
  const int32_t kind = in.one_in(8) ? 1 + in.below(9) : info.kind;
  CTStatus s;
  switch (kind) {
    case CT_KIND_UNARY: ts.check("ct_unary", ct_unary(op, at(0), out, stream), wout); break;
    case CT_KIND_UNARY_PARAM: ts.check("ct_unary_param", ct_unary_param(op, at(0), pp, np, out, stream), wout); break;
    case CT_KIND_TERNARY:
      if (in.one_in(2))
        ts.check("ct_ternary", ct_ternary(op, at(0), at(1), at(2), out, stream), wout);
      else
        ts.check("ct_ternary_param", ct_ternary_param(op, at(0), at(1), at(2), pp, np, out, stream), wout);
      break;
    case CT_KIND_CAST:
      if (in.one_in(2))
        ts.check("ct_cast", ct_cast(at(0), out, stream), wout);
      else
        ts.check("ct_cast_ex", ct_cast_ex(at(0), out, in.one_in(4) ? (int32_t)in.u32() : in.below(3), stream), wout);
      break;
    case CT_KIND_BINARY: ts.check("ct_binary", ct_binary(op, at(0), at(1), out, stream), wout); break;
    case CT_KIND_REDUCE:
      s = ct_reduce(op, at(0), oa.axes, oa.num_axes, oa.keepdims, pp, np, out, stream);
      ts.check("ct_reduce", s, wout);
      break;
    case CT_KIND_ALONG_AXIS: ts.check("ct_along_axis", ct_along_axis(op, at(0), oa.axis, out, stream), wout); break;
    case CT_KIND_INDEX: {
      CTensor* src = nin >= 3 ? at(2) : in.one_in(8) ? at(0) : nullptr;
      ts.check("ct_index", ct_index(op, at(0), oa.axis, at(1), src, pp, np, out, stream), wout);
      break;
    }
    default: {  // CT_KIND_NN and kinds that do not exist
      const int32_t n = count_arg(in, nt);
      const CTensor* const* tp = pointer_array(in, args, nt, n);
      size_t asked = 0;
      size_t* bytes = in.one_in(16) ? nullptr : guarded_array(in, &asked, 1);
      s = ct_nn_workspace_size(op, oa.desc, tp, n, bytes);
      ts.check("ct_nn_workspace_size", s, 0);
      void* ws;
      size_t wsb;
      workspace(in, s, bytes ? *bytes : 0, &ws, &wsb);
      uint32_t all_out = 0;
      for (int32_t i = nin; i < nt; ++i)
        if (idx[i] >= 0) all_out |= 1u << idx[i];
      ts.check("ct_nn", ct_nn(op, oa.desc, tp, n, ws, wsb, stream), all_out);
      break;
    }
  }
  if (in.one_in(8)) ts.check("ct_copy", ct_copy(at(0), out, stream), wout);
  if (in.one_in(16)) {
    const int32_t n = count_arg(in, nt);
    ts.check("ct_op_reference", ct_op_reference(op, pointer_array(in, args, nt, n), n, pp, oap), written);
  }
}

// A buffer for a struct the library fills up to struct_size bytes.
template <class T>
inline T* sized_struct(Input& in) {
  const uint32_t size = in.one_in(4) ? in.u32() : (uint32_t)sizeof(T);
  size_t n = size < 1024 ? size : 1024;
  if (n < sizeof(uint32_t)) n = sizeof(uint32_t);
  void* p = Pool::get().array(n, !in.one_in(4), alignof(T));
  std::memcpy(p, &size, sizeof size);
  return static_cast<T*>(p);
}

}  // namespace fuzz

#endif  // CTENSOR_TESTS_FUZZ_FUZZ_COMMON_H_
