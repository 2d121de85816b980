// ctensor bench — time per call, GB/s or GFLOP/s, and the fraction of the
// device's measured limit, for every op of the registry on every device.
//
// Category 1/2 ops run on n-element operands (--size, default 2^22; --quick
// 2^20); reductions reduce a (n/1024, 1024) matrix over all axes and the
// along-axis ops run along axis -1 of it. NN ops run one representative shape
// each (see build_nn); a plugin's NN op runs its plugin's large example
// (ct_op_example), a row with a rate in bytes but no %limit (its FLOPs are
// not known). Timing: 2 warm-up calls, k calls per batch so that a batch
// takes about target/5 (target 0.25 s, --quick 0.05 s), 5 batches; a row
// reports the median per-call time of the batches (and the best).
//
// A row with FLOPs (matmul, conv2d and its backwards) is compute-bound and is
// measured against the device's float32 peak; every other row is
// memory-bound, against the STREAM triad bandwidth, with bytes = the sum of
// every tensor argument's size (each read or written once).
//
// --compare: NumPy (bench/bench_compare.py through python3, or CT_PYTHON) for
// the category 1/2 ops it has, after ctensor's rows, and oneDNN called
// directly for matmul and conv2d, right after ctensor's row. ratio = baseline
// time / ctensor time (> 1: ctensor is faster).
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
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bench.h"
#include "bench_cases.h"
#include "probes.h"

namespace ctool {

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

// 2 warm-ups, k calls per batch so that a batch takes ~target/5, 5 batches.
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
  }
  const int64_t k = std::clamp<int64_t>(std::llround(target / 5 / std::max(one, 1e-9)), 1, 1000000);
  std::vector<double> per;
  for (int b = 0; b < 5; ++b) {
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
// bench
// ---------------------------------------------------------------------------

int cmd_bench(const Options& o) {
  const auto t_start = Clock::now();
  const CpuSample cpu_start = cpu_sample();
  const std::vector<Device> devs = select_devices(o);
  std::vector<CTOpInfo> ops;
  for (const CTOpInfo& info : registry())
    if (selected_op(o, info)) ops.push_back(info);
  // Default sizes reach DRAM: the operands of a category 1/2 op together
  // exceed the last-level cache (STREAM's rule is 4x; --quick settles for
  // about 1.5x, so it finishes in a minute or two).
  long llc_bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc_bytes <= 0) llc_bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  auto pow2_at_least = [](double v) { return int64_t(1) << int(std::ceil(std::log2(std::max(v, 1.0)))); };
  const int64_t n = o.size > 0 ? o.size
                  : o.quick ? std::max<int64_t>(int64_t(1) << 20, pow2_at_least(double(llc_bytes) / 8))
                            : std::max<int64_t>(int64_t(1) << 22, pow2_at_least(double(llc_bytes) / 2));
  const double target = o.quick ? 0.05 : 0.25;

  std::vector<DevOut> douts;
  for (const Device& d : devs) {
    Limits lim = device_limits(d, o.remeasure, o.quick);
    // Cached limits measured while the machine was busy read too low, and
    // every %limit would come out over 100%: a short triad checks the
    // cached memory figure, and one well above it measures the limits again.
    if (lim.cached && lim.bandwidth > 0 && d.info.device.device_type == CT_CPU) {
      const double check = ctprobe::stream_triad(std::max(1, (int)d.info.default_threads), int64_t(1) << 24, 3);
      if (check > 1.5 * lim.bandwidth) {
        std::fprintf(stderr, "ctensor: the cached memory limit of %s (%.1f GB/s, measured %s) is below a check just "
                             "now (%.1f GB/s): measuring the limits again\n",
                     d.label.c_str(), lim.bandwidth / 1e9, lim.measured.c_str(), check / 1e9);
        lim = device_limits(d, true, o.quick);
      }
    }
    douts.push_back({d, lim});
  }

  std::vector<Row> rows;
  int errors = 0, skipped = 0;
  Progress progress(devs.size() * ops.size());
  for (const DevOut& dv : douts) {
    const Device& d = dv.dev;
    const Limits& lim = dv.lim;
    progress.finish();
    std::printf("%s%s %s, %d threads: ", rows.empty() ? "" : "\n", d.label.c_str(), d.info.name,
                d.info.default_threads);
    if (lim.bandwidth > 0)
      std::printf("memory %.1f GB/s (STREAM triad), compute %.0f GFLOP/s (float32 FMA)%s\n", lim.bandwidth / 1e9,
                  lim.peak_flops / 1e9, lim.cached ? ", cached" : "");
    else
      std::printf("limits not measured (%s)\n", lim.note.c_str());
    const bool elementwise =
        std::any_of(ops.begin(), ops.end(), [](const CTOpInfo& i) { return i.category != CT_CATEGORY_NN; });
    if (d.info.device.device_type == CT_CPU && elementwise) {
      long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
      if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
      if (llc > 0 && double(n) * 4 * 3 < double(llc))
        std::printf("note: a binary float32 op's operands (%.3g MiB) fit in the %.0f MiB last-level cache: "
                    "memory-bound rows above 100%% run from cache (--size %lld reaches DRAM)\n",
                    double(n) * 12 / 1048576, double(llc) / 1048576,
                    (long long)(int64_t(1) << int(std::ceil(std::log2(double(llc) / 2)))));
    }
    print_header();
    std::fflush(stdout);
    for (size_t k = 0; k < ops.size(); ++k) {
      const CTOpInfo& info = ops[k];
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
        if (info.category == CT_CATEGORY_NN) build_nn(c, info, dt, o.quick);
        else build_elementwise(c, info, dt, n, r);
        r.shape = c.shape;
        r.bytes = c.bytes;
        r.flops = c.flops;
        r.bound = c.flops > 0 ? "compute" : c.work_known ? "memory" : "-";
        Timing t;
        if (c.error.empty()) t = time_calls(c.run, d.info.device, target);
        else t.error = c.error;
        if (!t.error.empty()) {
          r.status = "error: " + t.error;
          ++errors;
        } else {
          r.status = "ok";
          r.time_s = t.median;
          r.time_min_s = t.min;
          r.gbps = double(r.bytes) / t.median / 1e9;
          if (r.flops > 0) r.gflops = r.flops / t.median / 1e9;
          const double limit = r.flops > 0 ? lim.peak_flops : lim.bandwidth;
          if (limit > 0 && c.work_known) r.fraction = r.flops > 0 ? r.flops / t.median / limit : double(r.bytes) / t.median / limit;
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
  }
  progress.finish();
  if (o.compare) {
#ifndef CT_BENCH_DNNL
    std::printf("oneDNN baselines skipped: this tool was built without oneDNN's headers\n");
#endif
    numpy_baselines(rows, target);
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
