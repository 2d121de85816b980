// test_exhaustion.cpp — running out: of memory inside the library (every
// allocation from the n-th on refused, n = 0, 1, 2, ... until the call
// succeeds: in ct_exhaustion_tests, whose alloc_fail_hook.cpp replaces
// operator new and malloc), of workspace (every NN op, every entry point),
// of the caller's allocator (NULL, error statuses), and of address space
// (extents, strides and offsets whose byte arithmetic overflows). Each
// failure is a status and a message naming the entry point, the outputs are
// untouched, and the library works normally afterwards. In ct_tests the
// cases that need no allocation hook run too.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "guard_util.h"
#if defined(CT_ALLOC_HOOK)
#include "alloc_fail_hook.h"
#endif

using namespace ctt;
using namespace ctg;

namespace {

const CTDevice kCpu = {CT_CPU, 0};

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// The first loopback device, if the runner registered it.
bool loopback_device(CTDevice* d) {
  for (const TestDevice& t : all_devices())
    if (t.dev.device_type == CT_EXT_DEV) {
      *d = t.dev;
      return true;
    }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------
// Allocation failure inside the library (ct_exhaustion_tests only)
// ---------------------------------------------------------------------------

#if defined(CT_ALLOC_HOOK)

namespace {

struct Injected {
  int64_t calls = 0;        // (op, entry point) pairs run to success
  int64_t failures = 0;     // calls that failed because an allocation was refused
  int64_t allocating = 0;   // pairs whose call allocated at all
  int64_t partial = 0;      // NN executions that failed with outputs partly written (documented)
  std::vector<std::string> problems;
  std::vector<std::string> partial_ops;
};

const long kMaxCountdown = 20000;

// Runs call() with allocations refused from the k-th on, k = 0, 1, ...,
// until it succeeds. Each failure must be CT_ERR_OUT_OF_MEMORY with a
// message that starts with fn, and check() (the guards) must hold after it.
void until_success(const std::string& label, const std::string& fn, const std::function<CTStatus()>& call,
                   const std::function<std::string()>& check, const std::function<void()>& before, Injected* r) {
  for (long k = 0;; ++k) {
    if (k == kMaxCountdown) {
      r->problems.push_back(label + ": still failing after " + std::to_string(k) + " refused allocations");
      return;
    }
    if (before) before();
    static const bool trace = std::getenv("CT_HOOK_BACKTRACE") != nullptr;
    if (trace) std::fprintf(stderr, "==== %s countdown %ld\n", label.c_str(), k);
    struct Armed {  // disarmed however call() ends
      explicit Armed(long n) { cthook::arm(n); }
      ~Armed() { cthook::disarm(); }
    };
    CTStatus s;
    long seen;
    {
      Armed armed(k);
      s = call();
      seen = cthook::disarm();
    }
    const std::string msg = ct_last_error();
    const std::string bad = check();
    if (!bad.empty()) r->problems.push_back(label + " (countdown " + std::to_string(k) + "): " + bad);
    if (s == CT_OK) {
      ++r->calls;
      r->allocating += k > 0;
      return;
    }
    ++r->failures;
    if (s != CT_ERR_OUT_OF_MEMORY || !starts_with(msg, fn))
      r->problems.push_back(label + " (countdown " + std::to_string(k) + ", " + std::to_string(seen) +
                            " allocations asked): " + ct_status_string(s) + ": \"" + msg + "\"");
    if (seen <= k) {  // failed with no refused allocation: not ours to judge further
      r->problems.push_back(label + ": failed without a refused allocation: " + ct_status_string(s) + ": " + msg);
      return;
    }
  }
}

void exhaust_op(OpCall& c, Injected* r) {
  const std::string opn = c.f.info.name;
  for (int ei = 0; ei < E_COUNT; ++ei) {
    const Entry e = (Entry)ei;
    if (!c.entry_applies(e)) continue;
    const std::string label = opn + " [" + c.entry_name(e, c.valid) + "]";
    // The result without failures, to compare with.
    if (!c.reset_outputs()) return;
    size_t want_bytes = 0;
    if (c.invoke(e, c.valid, &want_bytes) != CT_OK) {
      r->problems.push_back(label + ": the valid call failed: " + ct_last_error());
      continue;
    }
    std::vector<std::vector<unsigned char>> want, guard;
    c.snapshot(&want);
    CTPlan* const sentinel = reinterpret_cast<CTPlan*>(static_cast<uintptr_t>(0x5A5A5A50));
    CTPlan* plan = sentinel;
    size_t bytes = 0xDEADBEEF;
    CTStatus last = CT_ERR_INTERNAL;
    auto before = [&] {
      c.reset_outputs();
      c.snapshot(&guard);
      plan = sentinel;
      bytes = 0xDEADBEEF;
    };
    auto call = [&] { return last = c.invoke(e, c.valid, &bytes, &plan); };
    auto check = [&]() -> std::string {
      // ctensor_nn.h: an NN op's execution runs oneDNN primitives, which
      // allocate as they run; when such an allocation fails after a primitive
      // has written, the call fails with CT_ERR_OUT_OF_MEMORY and its outputs
      // partly written. Counted and listed, not a failure here; everything
      // else (ctensor's own allocations, validation, plan creation) must
      // leave the outputs untouched.
      const bool executes = e == E_NN || e == E_NN_NAMED || e == E_PLAN_EXECUTE;
      if (last == CT_ERR_OUT_OF_MEMORY && executes && !c.changed_since(guard).empty()) {
        ++r->partial;
        if (r->partial_ops.empty() || r->partial_ops.back() != label) r->partial_ops.push_back(label);
        return plan != sentinel || bytes != 0xDEADBEEF ? std::string("wrote *plan or *bytes") : std::string();
      }
      if (last == CT_OK) {
        if (e == E_PLAN_CREATE) ct_plan_destroy(plan);
        if (e == E_NN_WS || e == E_NN_WS_NAMED) return bytes == want_bytes ? "" : "a different workspace size";
        std::vector<std::vector<unsigned char>> got;
        c.snapshot(&got);
        return got == want ? "" : "succeeded with other results than without refused allocations";
      }
      std::string bad = c.changed_since(guard);
      if (!bad.empty()) bad = "changed " + bad;
      if (plan != sentinel) bad += " wrote *plan";
      if (bytes != 0xDEADBEEF) bad += " wrote *bytes";
      return bad;
    };
    until_success(label, c.entry_name(e, c.valid), call, check, before, r);
  }
}

}  // namespace

TEST_CASE("exhaustion: every op and entry point with allocations refused from the n-th on", "[exhaustion]") {
  INFO("malloc hooked too: " << cthook::malloc_hooked());
  // One thread (deterministic allocation order); NN calls create their plan
  // each time (no plan cache), so plan creation runs under the countdown too.
  // (CT_EXHAUSTION_THREADS=n: n threads instead, to probe the parallel paths.)
  const char* nt = std::getenv("CT_EXHAUSTION_THREADS");
  CTCpuStream one = cpu_stream(nt ? std::atoi(nt) : 1);
  CTPlanCacheInfo pc;
  std::memset(&pc, 0, sizeof pc);
  pc.struct_size = sizeof pc;
  REQUIRE(ct_plan_cache_info(&pc) == CT_OK);
  REQUIRE(ct_plan_cache_set_capacity(0) == CT_OK);
  Injected r;
  int ops = 0;
  for (int32_t op = 0; op < ct_op_count(); ++op) {
    if (unloaded_plugin_op(op)) continue;
    OpCall c;
    std::string why;
    if (!c.build(op, kCpu, &one, &why)) {
      r.problems.push_back("op " + std::to_string(op) + ": no valid call: " + why);
      continue;
    }
    exhaust_op(c, &r);
    ++ops;
  }
  REQUIRE(ct_plan_cache_set_capacity(pc.capacity) == CT_OK);
  std::printf("exhaustion: %d ops, %lld (op, entry point) calls run to success, %lld of them allocating; "
              "%lld failing calls with a refused allocation (malloc refused too: %s); %lld NN executions failed "
              "with outputs partly written (oneDNN allocates while it runs), in:",
              ops, (long long)r.calls, (long long)r.allocating, (long long)r.failures,
              cthook::malloc_hooked() ? "yes" : "no", (long long)r.partial);
  for (const std::string& p : r.partial_ops) std::printf(" %s", p.c_str());
  std::printf("\n");
  // CT_EXHAUSTION_VERBOSE=1: every problem on stderr (the report keeps 60).
  if (std::getenv("CT_EXHAUSTION_VERBOSE"))
    for (const std::string& p : r.problems) std::fprintf(stderr, "%s\n", p.c_str());
  for (size_t i = 0; i < r.problems.size() && i < 60; ++i) UNSCOPED_INFO(r.problems[i]);
  CHECK(r.problems.empty());
  CHECK(ops >= CT_OP_END_);
  CHECK(r.failures > 0);
}

TEST_CASE("exhaustion: the memory helpers, copies and queries with allocations refused", "[exhaustion]") {
  Injected r;
  HostTensor x = HostTensor::compact(DT_F32, {2, 3});
  for (int i = 0; i < 6; ++i) x.set(i, i - 2.5);
  auto nothing = [] { return std::string(); };
  // ct_malloc on the CPU, then free what it gave.
  void* p = nullptr;
  until_success("ct_malloc(cpu, 1 MiB)", "ct_malloc", [&] { return ct_malloc(kCpu, 1 << 20, &p); },
                [&] { return std::string(); }, [&] { ct_free(kCpu, p); p = nullptr; }, &r);
  CHECK(p != nullptr);
  ct_free(kCpu, p);
  // Registry and device queries.
  int32_t id = -1;
  until_success("ct_op_find", "ct_op_find", [&] { return ct_op_find("softmax", &id); }, nothing, nullptr, &r);
  CHECK(id == CT_OP_SOFTMAX);
  CTDeviceInfo di;
  std::memset(&di, 0, sizeof di);
  di.struct_size = sizeof di;
  until_success("ct_device_info", "ct_device_info", [&] { return ct_device_info(0, &di); }, nothing, nullptr, &r);
  // Copies and casts between the CPU and the loopback (staging, temporaries).
  CTDevice lb;
  if (loopback_device(&lb)) {
    HostTensor y = HostTensor::compact(DT_F32, {2, 3});
    HostTensor z = HostTensor::compact(DT_F64, {2, 3});
    DeviceMirror dy(lb, y), dz(lb, z);
    REQUIRE(dy.status() == CT_OK);
    REQUIRE(dz.status() == CT_OK);
    CTensor xv = x.view(), yv = dy.view(), zv = dz.view();
    until_success("ct_copy cpu -> loopback", "ct_copy", [&] { return ct_copy(&xv, &yv, nullptr); }, nothing,
                  nullptr, &r);
    REQUIRE(dy.fetch() == CT_OK);
    CHECK(y.bytes() == x.bytes());
    until_success("ct_cast cpu float32 -> loopback float64", "ct_cast", [&] { return ct_cast(&xv, &zv, nullptr); },
                  nothing, nullptr, &r);
    REQUIRE(dz.fetch() == CT_OK);
    for (int i = 0; i < 6; ++i) CHECK(z.get(i) == x.get(i));
  }
  for (size_t i = 0; i < r.problems.size(); ++i) UNSCOPED_INFO(r.problems[i]);
  CHECK(r.problems.empty());
}

#endif  // CT_ALLOC_HOOK

// ---------------------------------------------------------------------------
// Workspace smaller than needed: every NN op that asks for one
// ---------------------------------------------------------------------------

TEST_CASE("exhaustion: a workspace smaller than the query said, every NN op and entry point", "[exhaustion]") {
  int checked = 0, asking = 0;
  std::vector<std::string> problems;
  for (int32_t op = 0; op < ct_op_count(); ++op) {
    if (unloaded_plugin_op(op)) continue;
    OpCall c;
    std::string why;
    if (!c.build(op, kCpu, nullptr, &why) || !c.is_nn()) continue;
    // The named query agrees with the generic one, and so does the plan.
    size_t named = 0, planned = 0;
    if (c.entry_applies(E_NN_WS_NAMED) && (c.invoke(E_NN_WS_NAMED, c.valid, &named) != CT_OK || named != c.ws_need))
      problems.push_back(std::string(c.f.info.name) + ": the named workspace query disagrees with ct_nn_workspace_size");
    if (!c.plan() || ct_plan_workspace_size(c.plan(), &planned) != CT_OK || planned != c.ws_need)
      problems.push_back(std::string(c.f.info.name) + ": the plan's workspace size disagrees with the query");
    if (c.ws_need == 0) continue;
    ++asking;
    std::vector<std::vector<unsigned char>> guard;
    REQUIRE(c.reset_outputs());
    REQUIRE(c.snapshot(&guard));
    struct Short {
      const char* what;
      std::function<void(Args&)> apply;
    };
    const Short shorts[] = {{"one byte short", [](Args& a) { a.ws_delta = -1; }},
                            {"half", [&c](Args& a) { a.ws_delta = -(int64_t)(c.ws_need - c.ws_need / 2); }},
                            {"0 bytes", [&c](Args& a) { a.ws_delta = -(int64_t)c.ws_need; }},
                            {"NULL", [](Args& a) { a.ws_null = true; }}};
    for (const Short& sh : shorts)
      for (Entry e : {E_NN, E_NN_NAMED, E_PLAN_EXECUTE}) {
        if (!c.entry_applies(e)) continue;
        Args a = c.valid;
        sh.apply(a);
        const CTStatus s = c.invoke(e, a);
        const std::string msg = ct_last_error(), fn = c.entry_name(e, a);
        const std::string changed = c.changed_since(guard);
        ++checked;
        const bool null_ws = a.ws_null;
        if ((s != CT_ERR_WORKSPACE_TOO_SMALL && !(null_ws && s == CT_ERR_INVALID_ARGUMENT)) || !starts_with(msg, fn) ||
            (!null_ws && !contains(msg, std::to_string(c.ws_need))) || !changed.empty())
          problems.push_back(std::string(c.f.info.name) + " [" + fn + "] workspace " + sh.what + ": " +
                             ct_status_string(s) + ": \"" + msg + "\"" + (changed.empty() ? "" : "; changed " + changed));
      }
    // And it still runs with the workspace it asked for.
    CHECK(c.invoke(E_NN, c.valid) == CT_OK);
  }
  std::printf("exhaustion: %d NN ops ask for a workspace on the CPU; %d short-workspace calls checked\n", asking,
              checked);
  for (const std::string& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
  CHECK(checked == asking * 4 * 3);
}

// ---------------------------------------------------------------------------
// The caller's allocator fails
// ---------------------------------------------------------------------------

namespace {

struct FailingAllocator {
  CTStatus status;  // what alloc returns
  bool set_ptr;     // whether it writes *ptr (NULL) anyway
  int calls = 0;
};

CTStatus failing_alloc(void* user, CTDevice, size_t, void*, void** ptr) {
  FailingAllocator* f = static_cast<FailingAllocator*>(user);
  ++f->calls;
  if (f->set_ptr) *ptr = nullptr;
  return f->status;
}
void failing_free(void*, CTDevice, void*, void*) {}

}  // namespace

TEST_CASE("exhaustion: the caller's allocator returns NULL or an error", "[exhaustion]") {
  CTDevice lb;
  if (!loopback_device(&lb)) {
    WARN("no loopback device: the cast between devices (the one user of temporaries here) is not run");
    return;
  }
  // A cast from the CPU to the loopback takes a temporary on the loopback
  // (its allocator); one from the loopback to the CPU a temporary on the CPU.
  HostTensor x = HostTensor::compact(DT_F32, {2, 3});
  for (int i = 0; i < 6; ++i) x.set(i, 0.25 * i);
  HostTensor lx = x, ly = HostTensor::compact(DT_F64, {2, 3}), hy = HostTensor::compact(DT_F64, {2, 3});
  DeviceMirror mlx(lb, lx), mly(lb, ly);
  REQUIRE(mlx.status() == CT_OK);
  REQUIRE(mly.status() == CT_OK);
  struct Dir {
    const char* what;
    int32_t device_type;  // whose allocator the temporary comes from
    CTensor src, dst;
    DeviceMirror* out_mirror;  // NULL: dst is on the host
    HostTensor* out;
  };
  const Dir dirs[] = {{"cpu -> loopback", CT_EXT_DEV, x.view(), mly.view(), &mly, &ly},
                      {"loopback -> cpu", CT_CPU, mlx.view(), hy.view(), nullptr, &hy}};
  const FailingAllocator kinds[] = {{CT_OK, true}, {CT_OK, false}, {CT_ERR_OUT_OF_MEMORY, true},
                                    {CT_ERR_BACKEND, false}, {-1234, false}};
  for (const Dir& d : dirs)
    for (FailingAllocator f : kinds) {
      INFO(d.what << ", the allocator returns " << f.status << (f.set_ptr ? " and writes NULL" : " and no pointer"));
      CTAllocator a;
      std::memset(&a, 0, sizeof a);
      a.struct_size = sizeof a;
      a.alloc = &failing_alloc;
      a.free = &failing_free;
      a.user = &f;
      d.out->fill_bytes(kPattern);
      if (d.out_mirror) REQUIRE(d.out_mirror->upload() == CT_OK);
      const std::vector<unsigned char> before = d.out->bytes();
      REQUIRE(ct_set_allocator(d.device_type, &a) == CT_OK);
      CTensor src = d.src, dst = d.dst;
      const CTStatus s = ct_cast(&src, &dst, nullptr);
      const std::string msg = last_error();
      REQUIRE(ct_set_allocator(d.device_type, nullptr) == CT_OK);
      CHECK(f.calls == 1);
      CHECK(s == CT_ERR_OUT_OF_MEMORY);
      CHECK(starts_with(msg, "ct_cast"));
      if (d.out_mirror) REQUIRE(d.out_mirror->fetch() == CT_OK);
      CHECK(d.out->bytes() == before);
      // The default allocator is back: the same cast runs.
      REQUIRE(ct_cast(&src, &dst, nullptr) == CT_OK);
      REQUIRE(ct_synchronize(dst.device, nullptr) == CT_OK);
      if (d.out_mirror) REQUIRE(d.out_mirror->fetch() == CT_OK);
      for (int i = 0; i < 6; ++i) CHECK(d.out->get(i) == 0.25 * i);
    }
  // Allocators the library refuses to install, with the one installed kept.
  CTAllocator bad;
  std::memset(&bad, 0, sizeof bad);
  bad.struct_size = sizeof bad;
  bad.free = &failing_free;
  CHECK(ct_set_allocator(CT_EXT_DEV, &bad) == CT_ERR_INVALID_ARGUMENT);
  CHECK(starts_with(last_error(), "ct_set_allocator"));
  bad.alloc = &failing_alloc;
  bad.struct_size = 0;
  CHECK(ct_set_allocator(CT_EXT_DEV, &bad) == CT_ERR_INVALID_ARGUMENT);
  CHECK(contains(last_error(), "struct_size"));
  CTensor src = x.view(), dst = mly.view();
  CHECK(ct_cast(&src, &dst, nullptr) == CT_OK);
}

TEST_CASE("exhaustion: every op on every other device with its allocator failing", "[exhaustion]") {
  // Ops that take temporaries on a device (GPU reduction partials, layout
  // changes) get them from the caller's allocator: with one that always
  // fails, such an op fails with CT_ERR_OUT_OF_MEMORY, its outputs
  // untouched; the others run without asking it.
  int ran = 0, refused = 0;
  std::vector<std::string> problems;
  for (const TestDevice& d : all_devices()) {
    if (d.cpu) continue;
    for (int32_t op = 0; op < ct_op_count(); ++op) {
      if (unloaded_plugin_op(op)) continue;
      OpCall c;
      std::string why;
      if (!c.build(op, d.dev, nullptr, &why)) continue;
      const Entry e = c.is_nn() ? E_NN : E_DIRECT;
      std::vector<std::vector<unsigned char>> guard;
      if (!c.reset_outputs() || !c.snapshot(&guard)) continue;
      FailingAllocator f = {CT_ERR_OUT_OF_MEMORY, true};
      CTAllocator a;
      std::memset(&a, 0, sizeof a);
      a.struct_size = sizeof a;
      a.alloc = &failing_alloc;
      a.free = &failing_free;
      a.user = &f;
      REQUIRE(ct_set_allocator(d.dev.device_type, &a) == CT_OK);
      const CTStatus s = c.invoke(e, c.valid);
      const std::string msg = last_error();
      const CTStatus sync = ct_synchronize(d.dev, nullptr);
      REQUIRE(ct_set_allocator(d.dev.device_type, nullptr) == CT_OK);
      const std::string label = d.label + " " + c.f.info.name;
      if (s == CT_OK) {
        ++ran;
        if (f.calls) problems.push_back(label + ": succeeded although its allocator failed");
        continue;
      }
      ++refused;
      const std::string changed = c.changed_since(guard);
      if (s != CT_ERR_OUT_OF_MEMORY || !starts_with(msg, c.entry_name(e, c.valid)) || !changed.empty() || sync != CT_OK)
        problems.push_back(label + ": " + ct_status_string(s) + ": \"" + msg + "\"" +
                           (changed.empty() ? "" : "; changed " + changed));
      // The default allocator is back: the op runs.
      if (c.invoke(e, c.valid) != CT_OK) problems.push_back(label + ": fails after the allocator is restored: " + last_error());
    }
  }
  std::printf("exhaustion: with a failing allocator, %d device calls refused cleanly, %d ran without temporaries\n",
              refused, ran);
  for (const std::string& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
}

// ---------------------------------------------------------------------------
// Address space: byte arithmetic that overflows is refused before it runs
// ---------------------------------------------------------------------------

TEST_CASE("exhaustion: extents, strides and offsets beyond the address space", "[exhaustion]") {
  const int64_t kHalf = (int64_t)1 << 32;
  HostTensor x = HostTensor::compact(DT_F32, {2, 3});
  HostTensor out = HostTensor::compact(DT_F32, {2, 3});
  out.fill_bytes(kPattern);
  const std::vector<unsigned char> before = out.bytes();
  struct Case {
    const char* what;
    std::vector<int64_t> shape, strides;  // strides empty: NULL
    uint64_t byte_offset;
    bool extents() const { return strides.empty() && byte_offset == 0; }  // ct_op_output_info reads only those
  };
  const Case cases[] = {
      {"extents whose product overflows int64", {kHalf, kHalf}, {}, 0},
      {"extents whose product overflows int64 late", {2, 3, kHalf, kHalf / 2, 4}, {}, 0},
      {"an element count that fits, a byte count that does not", {(int64_t)1 << 62}, {}, 0},
      {"INT64_MAX elements", {INT64_MAX}, {}, 0},
      {"stride * extent overflows", {3}, {(int64_t)1 << 62}, 0},
      {"a negative stride * extent overflows", {3}, {-((int64_t)1 << 62)}, 0},
      {"INT64_MIN stride", {2}, {INT64_MIN}, 0},
      {"strides whose sum overflows", {2, 2}, {INT64_MAX / 8, INT64_MAX / 8}, 0},
      {"byte_offset near SIZE_MAX", {2, 3}, {}, ~(uint64_t)0 - 3},
      {"byte_offset past INT64_MAX", {2, 3}, {}, (uint64_t)INT64_MAX + 5},
      {"byte_offset + span wraps", {2, 3}, {}, ~(uint64_t)0 - 64},
  };
  int checked = 0;
  for (const Case& k : cases) {
    INFO(k.what);
    std::vector<int64_t> shape = k.shape, strides = k.strides;
    CTensor bx = x.view(), bo = out.view();
    bx.ndim = (int32_t)shape.size();
    bx.shape = shape.data();
    bx.strides = strides.empty() ? nullptr : strides.data();
    bx.byte_offset = k.byte_offset;
    // The same broken tensor as each kind of argument: an input, an output,
    // a copy's source and destination, a reduction's input, a query's input.
    int32_t axis = 0;
    CTOutputInfo oi;
    std::memset(&oi, 0, sizeof oi);
    const CTOutputInfo oi0 = oi;
    struct Call {
      const char* fn;
      std::function<CTStatus()> run;
      bool touches_out;
    };
    CTensor bo2 = bx;
    bo2.data = out.buf();
    const CTensor* bxp = &bx;
    const std::vector<Call> calls = {
        {"ct_unary", [&] { return ct_unary(CT_OP_NEG, &bx, &bo, nullptr); }, true},
        {"ct_unary", [&] { CTensor xv = x.view(); return ct_unary(CT_OP_NEG, &xv, &bo2, nullptr); }, true},
        {"ct_binary", [&] { CTensor xv = x.view(); return ct_binary(CT_OP_ADD, &xv, &bx, &bo, nullptr); }, true},
        {"ct_reduce", [&] { return ct_reduce(CT_OP_SUM, &bx, &axis, 1, 0, nullptr, 0, &bo, nullptr); }, true},
        {"ct_along_axis", [&] { return ct_along_axis(CT_OP_SOFTMAX, &bx, 0, &bo, nullptr); }, true},
        {"ct_copy", [&] { return ct_copy(&bx, &bo, nullptr); }, true},
        {"ct_copy", [&] { CTensor xv = x.view(); return ct_copy(&xv, &bo2, nullptr); }, true},
        {"ct_op_output_info", [&] { return ct_op_output_info(CT_OP_NEG, nullptr, &bxp, 1, &oi, 1); }, false},
    };
    for (const Call& c : calls) {
      INFO(c.fn);
      if (!c.touches_out && !k.extents()) continue;
      const CTStatus s = c.run();
      ++checked;
      CHECK(s != CT_OK);
      CHECK(starts_with(last_error(), c.fn));
      CHECK(out.bytes() == before);
      CHECK(std::memcmp(&oi, &oi0, sizeof oi) == 0);
    }
  }
  // The NN descriptor's arithmetic: padding and dilation that overflow int64.
  OpCall conv;
  std::string why;
  REQUIRE(conv.build(CT_OP_CONV2D, kCpu, nullptr, &why));
  CTConv2dDesc d;
  std::memcpy(&d, conv.valid.desc, sizeof d);
  const CTConv2dDesc edits[] = {
      [&] { CTConv2dDesc e = d; e.pad_begin[0] = INT64_MAX; return e; }(),
      [&] { CTConv2dDesc e = d; e.pad_begin[1] = e.pad_end[1] = INT64_MAX / 2 + 1; return e; }(),
      [&] { CTConv2dDesc e = d; e.dilation[0] = INT64_MAX; return e; }(),
      [&] { CTConv2dDesc e = d; e.stride[0] = INT64_MAX; e.pad_end[0] = INT64_MAX - 4; return e; }(),
  };
  std::vector<std::vector<unsigned char>> guard;
  REQUIRE(conv.reset_outputs());
  REQUIRE(conv.snapshot(&guard));
  for (const CTConv2dDesc& e : edits)
    for (Entry en : {E_NN, E_NN_NAMED, E_PLAN_CREATE, E_NN_WS}) {
      Args a = conv.valid;
      std::memcpy(a.desc, &e, sizeof e);
      size_t bytes = 7;
      const CTStatus s = conv.invoke(en, a, &bytes);
      ++checked;
      INFO(conv.entry_name(en, a) << ": " << last_error());
      CHECK(s != CT_OK);
      CHECK(starts_with(last_error(), conv.entry_name(en, a)));
      CHECK(conv.changed_since(guard).empty());
      CHECK(bytes == 7);
    }
  // Memory the address space cannot hold.
  void* p = reinterpret_cast<void*>(0x1);
  CHECK(ct_malloc(kCpu, ~(size_t)0, &p) == CT_ERR_OUT_OF_MEMORY);
  CHECK(starts_with(last_error(), "ct_malloc"));
  CHECK(ct_malloc(kCpu, ~(size_t)0 - 4096, &p) == CT_ERR_OUT_OF_MEMORY);
  CHECK(p == reinterpret_cast<void*>(0x1));
  std::printf("exhaustion: %d address-space overflow calls checked\n", checked + 2);
}
