// ctensor bench — time per call, GB/s or GFLOP/s, and the fraction of the
// device's measured limit, for every op of the registry on every device.
//
// Category 1/2 ops run on n-element operands (--size; by default each
// operand exceeds the last-level cache the machine reports, 2x, --quick
// 1.25x, except where a call there would take over 1 s, --quick 0.25 s,
// and 10x its memory time: such a row is bound by its arithmetic, runs on
// fewer elements and says so, affordable_elements); reductions reduce a
// (n/1024, 1024) matrix over all axes and the along-axis ops run along
// axis -1 of it. NN ops run one representative shape
// each (see build_nn); a plugin's NN op runs its plugin's large example
// (ct_op_example), a row with a rate in bytes but no %limit (its FLOPs are
// not known). Timing: 2 warm-up calls, k calls per batch so that a batch
// takes about target/5 (target 0.25 s, --quick 0.05 s), 5 batches (a call
// longer than target: 1 warm-up, 3 batches of one call; 10 target: 1); a row
// reports the median per-call time of the batches (and the best).
//
// A row with FLOPs (matmul, conv2d and its backwards) is compute-bound and is
// measured against the device's float32 FMA peak; every other row is
// memory-bound, against the best streaming bandwidth (probes.h), with bytes =
// the sum of every tensor argument's size (each read or written once).
//
// The limits are measured in the run (probes.h): before the first op, between
// categories and after the last; each figure is the best of those probes and
// the cached one, which is a floor (what this machine has shown before), not
// the answer. Rows print as they come, against the limits known then; when a
// later probe raises one, the table is printed again against the run's best,
// which the JSON, CSV and plot use. A row above 100% of its limit is marked
// with the reason (judge()); CT_BENCH_LIMIT_SCALE scales the limits to test it.
//
// --compare: NumPy and PyTorch (bench/bench_compare.py --serve through
// python3, or CT_PYTHON) timed beside each row they have an op for, in the
// order row, baselines, row, baselines (each side keeps its better median),
// and oneDNN called directly for matmul and conv2d, right after ctensor's
// row. ratio = baseline time / ctensor time (> 1: ctensor is faster).
//
// This file: the command (every op on every device, one row each), timing,
// the dtype of a row and the note on other load. What a row times is in
// bench_cases.{h,cc}, the baselines in bench_baselines.cc, the table, CSV,
// JSON and plot in bench_output.cc; bench.h holds what they share.
#include <ctensor/ctensor.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench.h"
#include "bench_cases.h"
#include "probes.h"

namespace ctool {

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

// 2 warm-ups, k calls per batch so that a batch takes ~target/5, 5 batches;
// a call that alone takes longer than target (a baseline 30x slower than
// the row, at sizes beyond the cache: seconds each) gets 1 warm-up and 3
// one-call batches, whose median still drops one preempted batch, and one
// longer than 10 target a single batch (--compare times both sides twice
// and keeps the better). bench_compare.py's time_call has the same rule, so
// both sides of a ratio are timed alike.
Timing time_calls(const std::function<CTStatus()>& call, CTDevice dev, double target) {
  Timing r;
  auto err = [&](CTStatus s) {
    r.error = std::string(ct_status_string(s)) + ": " + ct_last_error();
    return r;
  };
  double one = 0;
  for (int w = 0; w < 2; ++w) {
    const auto t0 = Clock::now();
    if (CTStatus s = call(); s != CT_OK) return err(s);
    ct_synchronize(dev, nullptr);
    one = seconds(t0, Clock::now());
    if (one > target) break;
  }
  const bool slow = one > target;
  const int64_t k = slow ? 1 : std::clamp<int64_t>(std::llround(target / 5 / std::max(one, 1e-9)), 1, 1000000);
  std::vector<double> per;
  for (int b = 0; b < (one > 10 * target ? 1 : slow ? 3 : 5); ++b) {
    CTStatus s = CT_OK;
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < k && s == CT_OK; ++i) s = call();
    ct_synchronize(dev, nullptr);
    const double t = seconds(t0, Clock::now());
    if (s != CT_OK) return err(s);
    per.push_back(t / double(k));
  }
  std::sort(per.begin(), per.end());
  r.median = per[per.size() / 2];
  r.min = per.front();
  return r;
}

namespace {

// CPU time of the whole machine (not idle, steal included) and of this
// process and its children, to tell how much other work ran beside the bench.
struct CpuSample {
  double busy_s = 0, ours_s = 0;
  bool ok = false;
};

CpuSample cpu_sample() {
  CpuSample s;
  std::ifstream f("/proc/stat");
  std::string cpu;
  uint64_t v[8] = {}, total = 0;
  f >> cpu;
  for (uint64_t& x : v) f >> x, total += x;
  const long hz = sysconf(_SC_CLK_TCK);
  if (cpu != "cpu" || !f || hz <= 0) return s;
  s.busy_s = double(total - v[3] - v[4]) / double(hz);  // all but idle and iowait
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage ru{};
    getrusage(who, &ru);
    s.ours_s += ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  }
  s.ok = true;
  return s;
}

// The share of the machine's CPUs other work used between a and b (0..1), or NaN.
double other_load(const CpuSample& a, const CpuSample& b, double wall) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (!a.ok || !b.ok || cpus <= 0 || wall <= 0) return kNaN;
  return std::clamp(((b.busy_s - a.busy_s) - (b.ours_s - a.ours_s)) / (wall * double(cpus)), 0.0, 1.0);
}

// Picks the row's dtype; false (with the reason) when it is not supported.
bool pick_dtype(const Options& o, const CTOpInfo& info, const Device& d, CTDataType* dt, std::string* why) {
  if (!o.dtype.empty()) {
    dtype_from_name(o.dtype, dt);
    if (ct_op_supported(info.op, d.info.device, *dt) == CT_OK) return true;
    *why = ct_last_error();
    return false;
  }
  std::vector<CTDataType> tries{kF32};
  if (info.category != CT_CATEGORY_NN) tries.insert(tries.end(), {{CT_INT, 32, 1}, kBool, {CT_INT, 8, 1}});
  for (size_t i = 0; i < tries.size(); ++i) {
    if (ct_op_supported(info.op, d.info.device, tries[i]) == CT_OK) {
      *dt = tries[i];
      return true;
    }
    if (i == 0) *why = ct_last_error();
  }
  *dt = kF32;
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------
// Limits: measured in the run, judged per row
// ---------------------------------------------------------------------------

void judge(Row& r, const Limits& lim, int64_t l3_bytes) {
  r.limit = r.fraction = kNaN;
  r.flag.clear();
  if (!r.ok() || r.bound == "-") return;  // bound "-": a plugin NN op whose work is not known, no %limit
  const bool compute = r.flops > 0;
  const double limit = compute ? lim.peak_flops : lim.bandwidth;
  const double rate = compute ? r.flops / r.time_s : double(r.bytes) / r.time_s;
  if (limit > 0) {
    r.limit = limit;
    r.fraction = rate / limit;
  }
  if (!compute && l3_bytes > 0 && r.working_set < uint64_t(l3_bytes))
    r.flag = "working set fits in cache: " + ctprobe::mib(double(r.working_set)) + " < L3 " +
             ctprobe::mib(double(l3_bytes));
  else if (r.fraction > 1)
    r.flag = "limit under-measured";
  if (!r.size_note.empty()) r.flag = r.size_note + (r.flag.empty() ? "" : "; " + r.flag);
}

namespace {

// The thread's CPU time in seconds: what a call computes, not how long the
// host's other load kept it waiting.
double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// The elements a category 1/2 row runs on by default: n (beyond the cache),
// unless a call there would take longer than budget seconds and over 10
// times what moving its bytes at the bandwidth limit takes, as the special
// functions do (igamma: 3 s per call at 100 M elements, 100x its memory
// time, and the row makes 8 calls and its baselines as many). Such a row is
// bound by its arithmetic (under 10% of the memory limit), so the cache
// does not change its rate: it runs on fewer elements, as many as budget
// allows (a multiple of 64 Ki, at least 1 Mi, at most n / 2: a call up to
// twice the budget runs at n), and says so in *note.
//
// The cost per element comes from the best of 3 calls on 1 Mi elements
// after a warm-up, where a memory-bound op runs from the cache, faster than
// at n. On the CPU those calls run on the calling thread alone (a
// CTCpuStream of 1 thread) and count that thread's CPU time, divided by the
// threads the row will have: wall-clock time there counted the host's other
// load, and on a 2-core CI host beside a compiler every one of 3 calls of
// `sum` and `add` took 30-70x its time (a thread descheduled at the join),
// which cut both. Other devices: the wall-clock time of each call.
// bandwidth 0 (not known): the budget alone.
int64_t affordable_elements(const CTOpInfo& info, CTDataType dt, int64_t n, CTDevice dev, int threads,
                            double budget, double bandwidth, std::string* note) {
  const int64_t small = int64_t(1) << 20, step = int64_t(1) << 16;
  if (n <= 4 * small) return n;
  Case c(dev);
  Row scratch;
  build_elementwise(c, info, dt, small, scratch);
  const bool cpu = dev.device_type == CT_CPU;
  CTCpuStream one = {sizeof(CTCpuStream), 1, nullptr, nullptr};
  if (cpu) c.stream = &one;
  if (!c.error.empty() || c.run() != CT_OK) return n;  // the row itself reports the error
  ct_synchronize(dev, nullptr);
  double best = kNaN;
  for (int k = 0; k < 3; ++k) {
    const auto t0 = Clock::now();
    const double c0 = cpu ? thread_cpu_seconds() : 0;
    if (c.run() != CT_OK) return n;
    ct_synchronize(dev, nullptr);
    const double t = cpu ? (thread_cpu_seconds() - c0) / std::max(1, threads) : seconds(t0, Clock::now());
    best = std::fmin(best, t);
  }
  const double per = best / double(small);
  const double memory_s = bandwidth > 0 ? double(c.bytes) / double(small) * double(n) / bandwidth : 0;
  if (!(per * double(n) > std::max(budget, 10 * memory_s))) return n;
  const int64_t cut = std::max<int64_t>(small, int64_t(budget / per) / step * step);
  if (2 * cut > n) return n;  // less than half as many: not worth a note (nor the noise of a cut to 95%)
  char buf[200];
  std::snprintf(buf, sizeof buf, "%lld elements, not %lld: a call there would take ~%.1f s (%.0f ns per element)",
                (long long)cut, (long long)n, per * double(n), per * 1e9);
  *note = buf;
  return cut;
}

// A positive number from the environment variable `name` (a testing
// hook), or fallback when it is unset or not one (which is said).
double env_positive(const char* name, double fallback) {
  const char* e = std::getenv(name);
  if (!e || !*e) return fallback;
  char* end = nullptr;
  const double f = std::strtod(e, &end);
  if (!(f > 0) || !std::isfinite(f) || !end || *end) {
    std::fprintf(stderr, "ctensor: %s=%s is not a positive number: ignored\n", name, e);
    return fallback;
  }
  return f;
}
// CT_BENCH_LIMIT_SCALE: a factor on the limits rows are judged against
// (0.001 puts every row over its limit); 1 when unset.
double limit_scale() { return env_positive("CT_BENCH_LIMIT_SCALE", 1); }

// d.lim from the floor and the probes: each figure the best of them (unscaled
// in best), then times d.scale.
void settle(DevOut& d, Limits* best = nullptr) {
  Limits l = d.floor;
  if (l.bandwidth > 0) {
    l.bandwidth_how = "cached floor, measured " + d.floor.measured;
    l.peak_how = l.bandwidth_how;
  }
  for (const Probe& p : d.probes) {
    if (p.lim.bandwidth > l.bandwidth) {
      l.bandwidth = p.lim.bandwidth;
      l.bandwidth_how = p.lim.bandwidth_how + "; " + p.when;
      l.measured = p.lim.measured;
    }
    if (p.lim.peak_flops > l.peak_flops) {
      l.peak_flops = p.lim.peak_flops;
      l.peak_how = p.lim.peak_how + "; " + p.when;
      l.measured = p.lim.measured;
    }
  }
  l.cached = false;
  l.note = d.probes.empty() ? d.floor.note : "the best of this run's probes and the cached floor";
  if (best) *best = l;
  l.bandwidth *= d.scale;
  l.peak_flops *= d.scale;
  d.lim = l;
}

// Probes d's limits now (the short check, or every configuration when
// full) and settles d.lim.
void probe(DevOut& d, const std::string& when, bool full, bool quick) {
  Probe p;
  p.when = when;
  p.full = full;
  p.lim = measure_limits(d.dev, quick, full);
  d.probes.push_back(p);
  settle(d);
}

// The probe before a device's first op: the full probe without a cached
// floor (or with --remeasure); otherwise the short check, and the full
// probe after it when the check beats the cached figures (measured while
// the machine was busy, or by an older probe).
void probe_before(DevOut& d, const Options& o) {
  // other devices: the probe through ctensor's own ops (ct_copy, ct_matmul), no cache
  if (d.dev.info.device.device_type != CT_CPU) return probe(d, "before the ops", false, o.quick);
  if (!o.remeasure) d.floor = cached_limits(d.dev);
  if (!(d.floor.bandwidth > 0)) {
    std::fprintf(stderr, "ctensor: measuring the limits of %s (%s; streaming kernels, FMA peak) ...\n",
                 d.dev.label.c_str(), o.remeasure ? "--remeasure" : "none cached");
    return probe(d, "before the ops", true, o.quick);
  }
  probe(d, "before the ops", false, o.quick);
  const Limits& c = d.probes.back().lim;
  if (c.bandwidth > 1.1 * d.floor.bandwidth || c.peak_flops > 1.1 * d.floor.peak_flops) {
    std::fprintf(stderr, "ctensor: the cached limits of %s (%.1f GB/s, %.0f GFLOP/s, measured %s) are below a "
                         "check just now (%.1f GB/s, %.0f GFLOP/s): measuring the limits again\n",
                 d.dev.label.c_str(), d.floor.bandwidth / 1e9, d.floor.peak_flops / 1e9, d.floor.measured.c_str(),
                 c.bandwidth / 1e9, c.peak_flops / 1e9);
    probe(d, "before the ops", true, o.quick);
  }
}

void print_probe(const DevOut& d) {
  const Probe& p = d.probes.back();
  std::printf("limits probed %s: memory %.1f GB/s, compute %.0f GFLOP/s (the run's best: %.1f GB/s, %.0f GFLOP/s)\n",
              p.when.c_str(), p.lim.bandwidth / 1e9, p.lim.peak_flops / 1e9, d.lim.bandwidth / d.scale / 1e9,
              d.lim.peak_flops / d.scale / 1e9);
}

}  // namespace

// ---------------------------------------------------------------------------
// bench
// ---------------------------------------------------------------------------

int cmd_bench(const Options& o) {
  const auto t_start = Clock::now();
  const CpuSample cpu_start = cpu_sample();
  const std::vector<Device> devs = select_devices(o);
  std::vector<CTOpInfo> ops;
  for (const CTOpInfo& info : registry())
    if (selected_op(o, info)) ops.push_back(info);
  // Default sizes reach DRAM: every operand of a category 1/2 op in the row's
  // dtype, a reduction's one input too, exceeds the last-level cache the
  // machine reports (2x; --quick 1.25x, so it finishes in a few minutes);
  // narrower dtypes get more elements, the same bytes. A row whose working
  // set still fits in the cache (an NN op's representative shape, a --size)
  // says so.
  std::string l3_source;
  const int64_t l3 = host_l3_bytes(&l3_source);
  const int64_t mi = int64_t(1) << 20;
  const int64_t n = o.size > 0 ? o.size
                                : std::max<int64_t>(o.quick ? mi : 4 * mi,
                                                    (int64_t(double(l3) * (o.quick ? 1.25 : 2.0) / 4) + mi) / mi * mi);
  auto elements = [&](CTDataType dt) { return o.size > 0 || dt.bits >= 32 ? n : n * (32 / std::max(8, int(dt.bits))); };
  const double target = o.quick ? 0.05 : 0.25;
  const double scale = limit_scale();
  // CT_BENCH_CALL_BUDGET: the seconds a call may take at the default size (affordable_elements)
  const double budget = env_positive("CT_BENCH_CALL_BUDGET", o.quick ? 0.25 : 1.0);

  std::unique_ptr<ScriptBaselines> script;
  if (o.compare) {
    int cpu_threads = 0;  // PyTorch runs on as many threads as the CPU backend
    for (const Device& d : devs)
      if (d.info.device.device_type == CT_CPU) cpu_threads = d.info.default_threads;
    script.reset(new ScriptBaselines(cpu_threads));
  }
  std::vector<DevOut> douts;
  std::vector<Row> rows;
  int errors = 0, skipped = 0;
  Progress progress(devs.size() * ops.size());
  for (const Device& d : devs) {
    DevOut dv;
    dv.dev = d;
    dv.scale = scale;
    probe_before(dv, o);
    progress.finish();
    std::printf("%s%s %s, %d threads\n", rows.empty() ? "" : "\n", d.label.c_str(), d.info.name,
                d.info.default_threads);
    // The host's cache: what a CPU row may run from (another device's rows are not judged by it).
    const int64_t dev_l3 = d.info.device.device_type == CT_CPU ? l3 : 0;
    print_limits(dv, dev_l3, l3_source);
    print_header();
    std::fflush(stdout);
    const size_t first = rows.size();
    for (size_t k = 0; k < ops.size(); ++k) {
      const CTOpInfo& info = ops[k];
      if (k > 0 && info.category != ops[k - 1].category && d.info.device.device_type == CT_CPU) {
        progress.finish();
        probe(dv, std::string("after ") + category_name(ops[k - 1].category), false, o.quick);
        print_probe(dv);
      }
      Row r;
      r.device = d.label;
      r.op = info.name;
      r.category = category_name(info.category);
      r.shape = "-";
      r.bound = "-";
      CTDataType dt{};
      std::string why;
      if (!pick_dtype(o, info, d, &dt, &why)) {
        r.dtype = dtype_name(dt);
        r.status = "skipped: " + why;
        ++skipped;
      } else {
        r.dtype = dtype_name(dt);
        Case c(d.info.device);
        if (info.category == CT_CATEGORY_NN) build_nn(c, info, dt, o.quick, r);
        else
          build_elementwise(c, info, dt,
                            o.size > 0 ? elements(dt)
                                       : affordable_elements(info, dt, elements(dt), d.info.device,
                                                             d.info.default_threads, budget, dv.lim.bandwidth,
                                                             &r.size_note),
                            r);
        r.shape = c.shape;
        r.bytes = c.bytes;
        r.working_set = c.bytes + c.ws_bytes;
        r.flops = c.flops;
        r.bound = c.flops > 0 ? "compute" : c.work_known ? "memory" : "-";
        Timing t;
        if (c.error.empty()) t = time_calls(c.run, d.info.device, target);
        else t.error = c.error;
        if (script && t.error.empty() &&
            (d.info.device.device_type == CT_CPU || d.info.device.device_type == CT_CUDA)) {
          // ABAB: the row, its baselines, the row again, the baselines again
          script->time(r, rows.size(), target);
          if (!r.baselines.empty()) {
            const Timing t2 = time_calls(c.run, d.info.device, target);
            if (t2.error.empty()) {  // the better median and the best batch of both rounds
              t.median = std::min(t.median, t2.median);
              t.min = std::min(t.min, t2.min);
            }
            script->time(r, rows.size(), target);
          }
        }
        if (!t.error.empty()) {
          r.status = "error: " + t.error;
          ++errors;
        } else {
          r.status = "ok";
          r.time_s = t.median;
          r.time_min_s = t.min;
          r.gbps = double(r.bytes) / t.median / 1e9;
          if (r.flops > 0) r.gflops = r.flops / t.median / 1e9;
          judge(r, dv.lim, dev_l3);
        }
      }
#ifdef CT_BENCH_DNNL
      if (o.compare && r.ok() && d.info.device.device_type == CT_CPU && (r.op == "matmul" || r.op == "conv2d")) {
        CTDataType bdt{};
        dtype_from_name(r.dtype, &bdt);
        Baseline b = onednn_baseline(r.op, bdt, o.quick, target);
        if (b.time_s > 0) r.baselines["onednn"] = b;
        else std::fprintf(stderr, "ctensor: no oneDNN baseline for %s: %s\n", r.op.c_str(), b.note.c_str());
      }
#endif
      progress.finish();
      print_row(r);
      std::fflush(stdout);
      rows.push_back(std::move(r));
      progress.step(k + 1 < ops.size() ? std::string(ops[k + 1].name) + " ..." : "");  // what runs next
    }
    if (d.info.device.device_type != CT_CPU || ops.empty()) {
      douts.push_back(std::move(dv));
      continue;
    }
    // The last probe, then every row against the run's best figures; the
    // table again when a probe after some rows raised a limit they used.
    progress.finish();
    probe(dv, "after the ops", false, o.quick);
    print_probe(dv);
    bool rose = false;
    for (size_t i = first; i < rows.size(); ++i) {
      const double before = rows[i].limit;
      judge(rows[i], dv.lim, dev_l3);
      if (std::isfinite(before) && rows[i].limit > before * 1.0005) rose = true;
    }
    if (rose) {
      std::printf("\nthe limits rose during the run; the table against the run's best:\n");
      print_limits(dv, dev_l3, l3_source);
      print_header();
      for (size_t i = first; i < rows.size(); ++i) print_row(rows[i]);
    }
    // The cache keeps the best of the floor and this run (never scaled).
    Limits best;
    settle(dv, &best);
    if (best.bandwidth > dv.floor.bandwidth || best.peak_flops > dv.floor.peak_flops) {
      best.note = "the best of this run's probes and the cached floor";
      store_limits(d, best);
    }
    douts.push_back(std::move(dv));
  }
  progress.finish();
  if (o.compare) {
#ifndef CT_BENCH_DNNL
    std::printf("oneDNN baselines skipped: this tool was built without oneDNN's headers\n");
#endif
    script->end();
    print_baselines(rows);
  }

  // Other work on the machine slows multi-threaded ops a lot (a thread waits
  // for a time slice at every barrier): say so, and record it.
  const double wall = seconds(t_start, Clock::now());
  const double load = wall > 2 ? other_load(cpu_start, cpu_sample(), wall) : kNaN;  // jiffies: too coarse below
  if (load > 0.1)
    std::printf("note: other processes (or the hypervisor's steal) used %.0f%% of this machine's CPUs during the run: "
                "times are pessimistic; rerun on an idle machine\n",
                100 * load);
  const size_t over = size_t(std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.fraction > 1; }));
  if (over)
    std::printf("note: %zu row(s) above 100%% of their limit, marked '!' with the reason: a limit is a "
                "physical ceiling, so the figure there is not a fraction of it\n",
                over);

  const size_t cut = size_t(std::count_if(rows.begin(), rows.end(), [](const Row& r) { return !r.size_note.empty(); }));
  if (cut)
    std::printf("note: %zu row(s) ran on fewer elements than the default, each saying how many and why: a call "
                "at the default size would take over %.2f s and 10x its memory time; they are bound by "
                "arithmetic, not memory, so the cache does not change their rate\n",
                cut, budget);

  int rc = errors ? 1 : 0;
  const std::string json = to_json(o, douts, rows, load);
  if (!o.json.empty() && !write_file(o.json, json)) rc = 1;
  if (!o.csv.empty() && !write_file(o.csv, to_csv(o, rows))) rc = 1;
  if (!o.plot.empty() && !plot(o, json)) rc = 1;
  std::printf("%zu rows: %zu ok, %d skipped, %d errors; %.1f s\n", rows.size(), rows.size() - skipped - errors,
              skipped, errors, seconds(t_start, Clock::now()));
  return rc;
}

}  // namespace ctool
