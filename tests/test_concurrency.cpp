// test_concurrency.cpp — ct_concurrency_tests: eight threads call a mix of ops
// at once (elementwise, binary, reductions, along-axis, casts; NN ops through
// the plan cache with hits and misses; plans created, executed and destroyed,
// and one plan shared by every thread; the cache's capacity changed while
// others run; the doc plugin loaded and unloaded while others call its op;
// deliberate failures whose ct_last_error() each thread must see as its own),
// then the same calls again one thread after the other. Every result must be
// the same bits in both runs. Built on its own (not part of ct_tests) so that
// scripts/test.sh can build just the library, the plugin and this file under
// ThreadSanitizer (build-tsan).
//
// Threads and ThreadSanitizer. OpenMP's runtime (libgomp) is not built with
// TSan: its barrier synchronises through futexes and atomics TSan does not
// see, so every OpenMP region would be reported as a race between its
// workers' writes and the caller's reads. The test therefore keeps OpenMP
// out of the picture without hiding any ctensor code from TSan:
//  - categories 1 and 2 run with a CTCpuStream whose parallel_for is this
//    file's: it runs the library's parallel bodies on std::threads and joins
//    them (pthread_create/pthread_join, which TSan sees: the join is the
//    happens-before edge OpenMP's barrier gives). Those are the very bodies
//    OpenMP would run, on instrumented threads, concurrently with each other
//    and with the other seven callers;
//  - NN ops (oneDNN, and ctensor's own OpenMP loops around it) run with
//    num_threads = 1 on the same stream: an OpenMP team of one is the
//    calling thread (no worker, no barrier), so everything ctensor does
//    there is still instrumented and checked against the other callers.
// With that, ThreadSanitizer needs no suppressions for this test: it checks
// every access ctensor's own code makes (oneDNN's code is not instrumented).
// One more edge TSan cannot see is inside oneDNN: its primitive cache hands
// a primitive another thread is still creating over through a std::future
// compiled into libdnnl. TSan builds of the library therefore create NN
// plans one at a time (nn_plan_create, CT_SERIAL_ONEDNN_CREATION); plans
// still execute, hit and miss the plan cache concurrently.
// What TSan does not see is ctensor's OpenMP loops with more than one thread
// (nn_norm_direct.cc, nn_onednn_pool.cc, nn_attention.cc and the OpenMP
// branch of cpu::parallel_for): each iteration there writes only its own
// channel, plane, batch entry or chunk of the output and reads only inputs,
// and the region's implicit barrier ends before the call returns. Outside
// TSan (the Release and ASan builds' ctest) this test runs NN ops on the
// library's default OpenMP threads instead, so those loops do run from eight
// threads at once there, and their results are compared bit for bit too.
#include <ctensor/ctensor.h>

#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifndef CT_DOC_PLUGIN_PATH
#error "build with -DCT_DOC_PLUGIN_PATH=<the doc plugin (libisru.so)>"
#endif

namespace {

constexpr int kThreads = 8;
constexpr int kWorkers = 3;  // std::threads per parallel_for call
constexpr unsigned char kSentinel = 0xA5;

std::atomic<int> g_failures{0};
std::atomic<int64_t> g_parallel_calls{0};  // parallel_for calls that split the work
// The plugin in the concurrent run: loads granted and refused, isru calls
// that ran and that found the op gone.
std::atomic<int64_t> g_loads{0}, g_refused{0}, g_isru_ran{0}, g_isru_gone{0};

#define EXPECT(cond, ...)                                                  \
  do {                                                                     \
    if (!(cond)) {                                                         \
      if (g_failures.fetch_add(1) < 40) {                                  \
        std::fprintf(stderr, "%s:%d: failed: %s: ", __FILE__, __LINE__, #cond); \
        std::fprintf(stderr, __VA_ARGS__);                                 \
        std::fprintf(stderr, "\n");                                        \
      }                                                                    \
    }                                                                      \
  } while (0)

// ---- the caller's pool: std::threads, joined before returning -------------

// CTCpuStream.parallel_for: disjoint ranges of at least `grain` items covering
// [0, n), the first on the calling thread, the others on new threads.
void thread_parallel_for(void* user, int64_t n, int64_t grain, CTParallelBody body, void* ctx) {
  int64_t workers = *static_cast<const int*>(user);
  if (grain < 1) grain = 1;
  if (n / grain < workers) workers = n / grain;
  if (workers <= 1) {
    body(ctx, 0, n);
    return;
  }
  g_parallel_calls.fetch_add(1, std::memory_order_relaxed);
  std::vector<std::thread> ts;
  for (int64_t w = 1; w < workers; ++w)
    ts.emplace_back(body, ctx, n * w / workers, n * (w + 1) / workers);
  body(ctx, 0, n / workers);
  for (std::thread& t : ts) t.join();
}

// Threads of NN ops (CTCpuStream.num_threads; categories 1-2 ignore it when
// parallel_for is set): one under TSan, the library's default elsewhere.
#if defined(__SANITIZE_THREAD__)
constexpr int kNnThreads = 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr int kNnThreads = 1;
#else
constexpr int kNnThreads = 0;
#endif
#else
constexpr int kNnThreads = 0;
#endif

const int kWorkerCount = kWorkers;
// The concurrent run: the pool above for categories 1-2.
CTCpuStream g_pool = {sizeof(CTCpuStream), kNnThreads, thread_parallel_for, const_cast<int*>(&kWorkerCount)};
// The serial run: the same NN threads (so the same plans), no parallel_for.
CTCpuStream g_serial = {sizeof(CTCpuStream), kNnThreads, nullptr, nullptr};

// ---- tensors ------------------------------------------------------------------

const CTDataType kF32 = {CT_FLOAT, 32, 1}, kF16 = {CT_FLOAT, 16, 1}, kI8 = {CT_INT, 8, 1},
                 kI32 = {CT_INT, 32, 1}, kI64 = {CT_INT, 64, 1};

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 12345) {}
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * (float)((next() >> 40) * (1.0 / 16777216.0)); }
  int64_t below(int64_t n) { return (int64_t)(next() % (uint64_t)n); }
};

// A host tensor that owns its bytes (compact unless strides are given).
struct Buf {
  std::vector<int64_t> shape, strides;
  CTDataType dt{};
  std::vector<unsigned char> bytes;
  int64_t offset_elems = 0;
  CTensor t{};

  Buf(CTDataType d, std::vector<int64_t> s, std::vector<int64_t> st = {}) : shape(std::move(s)), strides(std::move(st)), dt(d) {
    const int64_t es = d.bits / 8;
    int64_t lo = 0, hi = 0, n = 1;
    for (int64_t e : shape) n *= e;
    if (strides.empty()) {
      hi = n - 1;
    } else if (n > 0) {
      for (size_t i = 0; i < shape.size(); ++i) {
        const int64_t e = (shape[i] - 1) * strides[i];
        (e < 0 ? lo : hi) += e;
      }
    }
    offset_elems = -lo;
    bytes.assign((size_t)((n > 0 ? hi - lo + 1 : 0) * es), kSentinel);
    t.data = bytes.empty() ? nullptr : bytes.data();
    t.device = {CT_CPU, 0};
    t.ndim = (int32_t)shape.size();
    t.dtype = d;
    t.shape = shape.empty() ? nullptr : shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = (uint64_t)(offset_elems * es);
  }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    return n;
  }
  // Element k in row-major order of the logical shape, as a byte pointer.
  unsigned char* at(int64_t k) {
    int64_t off = offset_elems, rem = k;
    for (size_t d = shape.size(); d-- > 0;) {
      const int64_t i = rem % shape[d];
      rem /= shape[d];
      int64_t st = 1;
      if (strides.empty())
        for (size_t e = d + 1; e < shape.size(); ++e) st *= shape[e];
      else
        st = strides[d];
      off += i * st;
    }
    return bytes.data() + off * (dt.bits / 8);
  }
  void fill(Rng& r, float lo, float hi) {
    for (int64_t k = 0; k < numel(); ++k) {
      if (dt.code == CT_FLOAT && dt.bits == 32) {
        const float v = r.uniform(lo, hi);
        std::memcpy(at(k), &v, 4);
      } else if (dt.code == CT_INT && dt.bits == 32) {
        const int32_t v = (int32_t)r.uniform(lo, hi);
        std::memcpy(at(k), &v, 4);
      } else if (dt.code == CT_INT && dt.bits == 64) {
        const int64_t v = (int64_t)r.uniform(lo, hi);
        std::memcpy(at(k), &v, 8);
      }
    }
  }
  bool untouched() const {
    for (unsigned char b : bytes)
      if (b != kSentinel) return false;
    return true;
  }
  operator CTensor*() { return &t; }
};

uint64_t fnv(const void* p, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

// ---- what one thread records: a result per call, in order -------------------

struct Record {
  std::vector<uint64_t> digests;   // output bytes (and status) of every deterministic call
  std::vector<std::string> errors; // ct_last_error() after every deliberate failure
  void add(CTStatus s, const Buf& out) {
    digests.push_back(fnv(out.bytes.data(), out.bytes.size(), fnv(&s, sizeof s)));
  }
  void add_status(CTStatus s) { digests.push_back(fnv(&s, sizeof s)); }
};

struct Shared {
  CTPlan* conv_plan = nullptr;  // one conv2d plan every thread executes
  size_t conv_plan_ws = 0;
  std::vector<uint64_t> isru_expected;  // per thread: the isru result of its input
};
Shared g_shared;

// The doc plugin's input for thread t (isru(x) = x / sqrt(1 + x^2), float32).
void isru_input(int t, Buf& x) {
  Rng r(9000 + (uint64_t)t);
  x.fill(r, -4, 4);
}

// ---- one thread's calls -----------------------------------------------------------

// A deliberate failure: status, message naming the function and the unique
// value, output untouched; the message is recorded (it must be the same text
// in both runs, whatever the other threads did in between).
void check_failure(Record& rec, CTStatus s, CTStatus want, const char* fn, const std::string& value, const Buf& out) {
  EXPECT(s == want, "%s: status %d, want %d (%s)", fn, (int)s, (int)want, ct_last_error());
  std::this_thread::yield();  // let the other threads make calls (and fail) in between
  const std::string msg = ct_last_error();
  EXPECT(msg.rfind(fn, 0) == 0, "message \"%s\" does not start with %s", msg.c_str(), fn);
  EXPECT(msg.find(value) != std::string::npos, "message \"%s\" does not name %s", msg.c_str(), value.c_str());
  EXPECT(out.untouched(), "%s: the output was written by a failed call", fn);
  rec.errors.push_back(msg);
}

void run_thread(int t, int iters, CTCpuStream* stream, bool concurrent, Record& rec) {
  const char* plugin_path = CT_DOC_PLUGIN_PATH;
  for (int i = 0; i < iters; ++i) {
    Rng r((uint64_t)t * 1000003u + (uint64_t)i);
    const int64_t sizes[] = {0, 1, 17, 4099, 70000};
    const int64_t n = sizes[(t + i) % 5];
    // Threads 0 and 1 hold the doc plugin through their iteration (when the
    // other does not: then the load is refused); the calls to it are at the end.
    CTLibrary* lib = nullptr;
    if (concurrent && t <= 1) {
      const CTStatus s = ct_library_load(plugin_path, &lib);
      EXPECT(s == CT_OK || s == CT_ERR_INVALID_ARGUMENT, "load: %d %s", (int)s, ct_last_error());
      if (s == CT_OK) {
        g_loads.fetch_add(1);
      } else {
        g_refused.fetch_add(1);
        const std::string msg = ct_last_error();
        EXPECT(msg.find("ct_library_load") == 0 && (msg.find("loaded already") != std::string::npos ||
                                                     msg.find("already in this process") != std::string::npos),
               "load refused with \"%s\"", msg.c_str());
      }
    }

    // -- unary, on a reversed strided view, and in place --
    {
      Buf x(kF32, {n}, {-2});
      x.fill(r, -3, 3);
      Buf y(kF32, {n});
      const int32_t ops[] = {CT_OP_EXP, CT_OP_TANH, CT_OP_SIGMOID, CT_OP_GELU, CT_OP_NEG};
      rec.add(ct_unary(ops[i % 5], x, y, stream), y);
      rec.add(ct_unary(CT_OP_SQUARE, y, y, stream), y);
      const double lohi[2] = {-0.5, 0.5};
      rec.add(ct_unary_param(CT_OP_CLAMP, x, lohi, 2, y, stream), y);
    }
    // -- binary with broadcasting: (m, k) op (k), float32 and int32 --
    {
      const int64_t m = 1 + r.below(300), k = 1 + r.below(257);
      Buf a(kF32, {m, k}), b(kF32, {k}), o(kF32, {m, k});
      a.fill(r, -2, 2);
      b.fill(r, -2, 2);
      const int32_t ops[] = {CT_OP_ADD, CT_OP_MUL, CT_OP_MAXIMUM, CT_OP_DIV};
      rec.add(ct_binary(ops[(t + i) % 4], a, b, o, stream), o);
      Buf ai(kI32, {m, k}), bi(kI32, {m, 1}), oi(kI32, {m, k});
      ai.fill(r, -1000, 1000);
      bi.fill(r, -1000, 1000);
      rec.add(ct_binary(CT_OP_SUB, ai, bi, oi, stream), oi);
      // -- reductions --
      const int32_t axis1 = 1, axis0 = 0;
      Buf rs(kF32, {m});
      rec.add(ct_reduce(CT_OP_SUM, a, &axis1, 1, 0, nullptr, 0, rs, stream), rs);
      Buf rm(kF32, {1, k});
      rec.add(ct_reduce(CT_OP_MEAN, a, &axis0, 1, 1, nullptr, 0, rm, stream), rm);
      Buf ri(kI64, {});
      rec.add(ct_reduce(CT_OP_SUM, ai, nullptr, 0, 0, nullptr, 0, ri, stream), ri);
      Buf am(kI64, {m});
      rec.add(ct_reduce(CT_OP_ARGMAX, a, &axis1, 1, 0, nullptr, 0, am, stream), am);
      const double ddof = 1;
      Buf rv(kF32, {k});
      rec.add(ct_reduce(CT_OP_VAR, a, &axis0, 1, 0, &ddof, 1, rv, stream), rv);
      // -- along an axis --
      Buf sm(kF32, {m, k});
      rec.add(ct_along_axis(CT_OP_SOFTMAX, a, -1, sm, stream), sm);
      Buf cs(kI64, {m, k});
      Buf ai64(kI64, {m, k});
      ai64.fill(r, -50, 50);
      rec.add(ct_along_axis(CT_OP_CUMSUM, ai64, 0, cs, stream), cs);
      // -- casts --
      Buf h(kF16, {m, k}), c8(kI8, {m, k});
      rec.add(ct_cast(a, h, stream), h);
      rec.add(ct_cast(ai, c8, stream), c8);
    }
    // -- NN ops, direct: the plan cache (shapes vary, so some miss, most hit) --
    {
      const int64_t M = 1 + (t + i) % 6, K = 8 + 8 * (i % 3), N = 16;
      Buf a(kF32, {M, K}), b(kF32, {K, N}), bias(kF32, {N}), o(kF32, {M, N});
      a.fill(r, -1, 1);
      b.fill(r, -1, 1);
      bias.fill(r, -1, 1);
      CTMatmulDesc md = {sizeof(CTMatmulDesc), i % 2 ? CT_ACTIVATION_RELU : CT_ACTIVATION_NONE};
      size_t ws = 0;
      CTStatus s = ct_matmul_workspace_size(&md, a, b, bias, o, &ws);
      rec.add_status(s);
      std::vector<unsigned char> wsb(ws + 1);
      rec.add(ct_matmul(&md, a, b, bias, o, wsb.data(), ws, stream), o);

      const int64_t H = 5 + (t + i) % 3;
      Buf x(kF32, {2, 3, H, H}), w(kF32, {4, 3, 3, 3}), y(kF32, {2, 4, H - 2, H - 2});
      x.fill(r, -1, 1);
      w.fill(r, -1, 1);
      CTConv2dDesc cd{};
      cd.struct_size = sizeof cd;
      s = ct_conv2d_workspace_size(&cd, x, w, nullptr, y, &ws);
      rec.add_status(s);
      wsb.assign(ws + 1, 0);
      rec.add(ct_conv2d(&cd, x, w, nullptr, y, wsb.data(), ws, stream), y);

      CTPool2dDesc pd{};
      pd.struct_size = sizeof pd;
      pd.kernel[0] = pd.kernel[1] = 2;
      pd.stride[0] = pd.stride[1] = 1;
      Buf py(kF32, {2, 3, H - 1, H - 1}), pi(kI64, {2, 3, H - 1, H - 1});
      s = ct_max_pool2d_workspace_size(&pd, x, py, pi, &ws);
      rec.add_status(s);
      wsb.assign(ws + 1, 0);
      rec.add(ct_max_pool2d(&pd, x, py, pi, wsb.data(), ws, stream), py);
      rec.add(CT_OK, pi);

      CTLayerNormDesc ld = {sizeof(CTLayerNormDesc), 1, 1e-5};
      Buf ly(kF32, {2, 3, H, H});
      s = ct_layer_norm_workspace_size(&ld, x, nullptr, nullptr, ly, nullptr, nullptr, &ws);
      rec.add_status(s);
      wsb.assign(ws + 1, 0);
      rec.add(ct_layer_norm(&ld, x, nullptr, nullptr, ly, nullptr, nullptr, wsb.data(), ws, stream), ly);

      // -- the shared plan, executed by every thread at once --
      Buf sx(kF32, {2, 3, 9, 9}), sw(kF32, {4, 3, 3, 3}), sy(kF32, {2, 4, 7, 7});
      sx.fill(r, -1, 1);
      sw.fill(r, -1, 1);
      const CTensor* st[] = {&sx.t, &sw.t, nullptr, &sy.t};
      std::vector<unsigned char> sws(g_shared.conv_plan_ws + 1);
      rec.add(ct_plan_execute(g_shared.conv_plan, st, 4, sws.data(), g_shared.conv_plan_ws, stream), sy);

      // -- a plan of this thread's own: created, executed twice, destroyed --
      const int64_t pm = 1 + (i % 4);
      Buf pa(kF32, {pm, K}), pb(kF32, {K, N}), po(kF32, {pm, N});
      pa.fill(r, -1, 1);
      pb.fill(r, -1, 1);
      const CTensor* pt[] = {&pa.t, &pb.t, nullptr, &po.t};
      CTPlan* plan = nullptr;
      s = ct_plan_create(CT_OP_MATMUL, &md, pt, 4, stream, &plan);
      rec.add_status(s);
      if (s == CT_OK) {
        size_t pws = 0;
        rec.add_status(ct_plan_workspace_size(plan, &pws));
        std::vector<unsigned char> pwb(pws + 1);
        rec.add(ct_plan_execute(plan, pt, 4, pwb.data(), pws, stream), po);
        pa.fill(r, -1, 1);
        rec.add(ct_plan_execute(plan, pt, 4, pwb.data(), pws, stream), po);
        ct_plan_destroy(plan);
      }
    }
    // -- the cache's capacity, changed by two threads while the others run --
    if ((t == 2 || t == 5) && i % 3 == 0) {
      const int64_t caps[] = {0, 1, 3, 1024};
      EXPECT(ct_plan_cache_set_capacity(caps[(i / 3 + t) % 4]) == CT_OK, "set_capacity: %s", ct_last_error());
      CTPlanCacheInfo info{};
      info.struct_size = sizeof info;
      EXPECT(ct_plan_cache_info(&info) == CT_OK, "cache_info: %s", ct_last_error());
      EXPECT(info.entries >= 0 && info.hits >= 0 && info.misses >= 0, "cache_info: entries %lld",
             (long long)info.entries);
    }
    // -- deliberate failures: each thread sees its own message --
    {
      const int64_t e = 1000 + 8 * i + t;  // unique to (thread, iteration)
      Buf x(kF32, {2, e}), y(kF32, {2, e + 1});
      x.fill(r, -1, 1);
      check_failure(rec, ct_unary(CT_OP_EXP, x, y, stream), CT_ERR_SHAPE_MISMATCH, "ct_unary", std::to_string(e + 1), y);
      const int32_t bad_axis = 100 + 8 * i + t;
      Buf sb(kF32, {2});
      check_failure(rec, ct_reduce(CT_OP_SUM, x, &bad_axis, 1, 0, nullptr, 0, sb, stream), CT_ERR_INVALID_ARGUMENT,
                    "ct_reduce", std::to_string(bad_axis), sb);
      const int64_t K = 3 + t, K2 = 4 + t + 8 * i;
      Buf a(kF32, {2, K}), b(kF32, {K2, 5}), o(kF32, {2, 5});
      CTMatmulDesc md = {sizeof(CTMatmulDesc), 0};
      check_failure(rec, ct_matmul(&md, a, b, nullptr, o, nullptr, 0, stream), CT_ERR_SHAPE_MISMATCH, "ct_matmul",
                    std::to_string(K2), o);
    }
    // -- the doc plugin: every thread calls isru when it finds it loaded; a
    //    call may find it gone (unloaded since the find), never half there --
    if (concurrent) {
      int32_t op = -1;
      const CTStatus f = ct_op_find("isru", &op);
      EXPECT(f == CT_OK || (f == CT_ERR_NOT_FOUND && !lib), "find: %d %s", (int)f, ct_last_error());
      if (f == CT_OK) {
        Buf x(kF32, {300}), y(kF32, {300});
        isru_input(t, x);
        const CTStatus s = ct_unary(op, x, y, stream);
        EXPECT(s == CT_OK || (s == CT_ERR_NOT_FOUND && !lib), "isru: %d %s", (int)s, ct_last_error());
        if (s == CT_OK) {
          g_isru_ran.fetch_add(1);
          EXPECT(fnv(y.bytes.data(), y.bytes.size()) == g_shared.isru_expected[(size_t)t], "isru result differs");
        } else {
          g_isru_gone.fetch_add(1);
          EXPECT(y.untouched(), "isru failed with %s but wrote its output", ct_last_error());
        }
      }
      if (lib) EXPECT(ct_library_unload(lib) == CT_OK, "unload: %s", ct_last_error());
    } else if (t <= 1) {  // the serial run: the same load, call and unload, always granted
      CTLibrary* lib = nullptr;
      EXPECT(ct_library_load(plugin_path, &lib) == CT_OK, "load: %s", ct_last_error());
      int32_t op = -1;
      EXPECT(ct_op_find("isru", &op) == CT_OK, "find: %s", ct_last_error());
      Buf x(kF32, {300}), y(kF32, {300});
      isru_input(t, x);
      EXPECT(ct_unary(op, x, y, stream) == CT_OK, "isru: %s", ct_last_error());
      EXPECT(fnv(y.bytes.data(), y.bytes.size()) == g_shared.isru_expected[(size_t)t], "isru result differs");
      EXPECT(ct_library_unload(lib) == CT_OK, "unload: %s", ct_last_error());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 12;
  if (iters < 1) {
    std::fprintf(stderr, "usage: %s [iterations per thread >= 1]\n", argv[0]);
    return 2;
  }

  // The expected isru results, with the plugin loaded once.
  {
    CTLibrary* lib = nullptr;
    if (ct_library_load(CT_DOC_PLUGIN_PATH, &lib) != CT_OK) {
      std::fprintf(stderr, "cannot load the doc plugin: %s\n", ct_last_error());
      return 1;
    }
    int32_t op = -1;
    EXPECT(ct_op_find("isru", &op) == CT_OK, "find: %s", ct_last_error());
    for (int t = 0; t < kThreads; ++t) {
      Buf x(kF32, {300}), y(kF32, {300});
      isru_input(t, x);
      EXPECT(ct_unary(op, x, y, nullptr) == CT_OK, "isru: %s", ct_last_error());
      g_shared.isru_expected.push_back(fnv(y.bytes.data(), y.bytes.size()));
    }
    EXPECT(ct_library_unload(lib) == CT_OK, "unload: %s", ct_last_error());
  }
  // The plan every thread executes at once.
  {
    Buf sx(kF32, {2, 3, 9, 9}), sw(kF32, {4, 3, 3, 3}), sy(kF32, {2, 4, 7, 7});
    const CTensor* st[] = {&sx.t, &sw.t, nullptr, &sy.t};
    CTConv2dDesc cd{};
    cd.struct_size = sizeof cd;
    if (ct_plan_create(CT_OP_CONV2D, &cd, st, 4, &g_serial, &g_shared.conv_plan) != CT_OK ||
        ct_plan_workspace_size(g_shared.conv_plan, &g_shared.conv_plan_ws) != CT_OK) {
      std::fprintf(stderr, "cannot make the shared conv2d plan: %s\n", ct_last_error());
      return 1;
    }
  }

  // The concurrent run.
  std::vector<Record> conc(kThreads), serial(kThreads);
  {
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([t, iters, &conc] { run_thread(t, iters, &g_pool, true, conc[(size_t)t]); });
    for (std::thread& th : ts) th.join();
  }
  const int64_t parallel_calls = g_parallel_calls.load();
  // The same calls, one thread after the other, on one thread each.
  ct_plan_cache_set_capacity(1024);
  for (int t = 0; t < kThreads; ++t) {
    std::thread th([t, iters, &serial] { run_thread(t, iters, &g_serial, false, serial[(size_t)t]); });
    th.join();
  }
  ct_plan_cache_set_capacity(1024);
  ct_plan_destroy(g_shared.conv_plan);

  size_t calls = 0, messages = 0;
  for (int t = 0; t < kThreads; ++t) {
    const Record &c = conc[(size_t)t], &s = serial[(size_t)t];
    EXPECT(c.digests.size() == s.digests.size(), "thread %d: %zu results, the serial run %zu", t, c.digests.size(),
           s.digests.size());
    for (size_t k = 0; k < c.digests.size() && k < s.digests.size(); ++k)
      EXPECT(c.digests[k] == s.digests[k], "thread %d: result %zu differs from the serial run's", t, k);
    EXPECT(c.errors == s.errors, "thread %d: its error messages differ from the serial run's", t);
    calls += c.digests.size();
    messages += c.errors.size();
  }
  EXPECT(parallel_calls > 0, "no op split its work over the caller's parallel_for");
  EXPECT(g_loads.load() > 0 && g_isru_ran.load() > 0, "the plugin was loaded %lld times and isru ran %lld times",
         (long long)g_loads.load(), (long long)g_isru_ran.load());
  CTPlanCacheInfo info{};
  info.struct_size = sizeof info;
  EXPECT(ct_plan_cache_info(&info) == CT_OK && info.hits > 0 && info.misses > 0,
         "the plan cache saw %lld hits and %lld misses", (long long)info.hits, (long long)info.misses);

  const int failures = g_failures.load();
  std::printf("ct_concurrency_tests: %d threads x %d iterations: %zu results and %zu error messages compared with the "
              "serial run; %lld parallel_for calls split over %d std::threads; plan cache %lld hits, %lld misses; "
              "plugin loaded %lld times (%lld loads refused while loaded), isru ran %lld times (%lld found it "
              "unloaded); %s\n",
              kThreads, iters, calls, messages, (long long)parallel_calls, kWorkers, (long long)info.hits,
              (long long)info.misses, (long long)g_loads.load(), (long long)g_refused.load(),
              (long long)g_isru_ran.load(), (long long)g_isru_gone.load(), failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
