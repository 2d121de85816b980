// Shared types of `ctensor bench`, across its files: bench.cpp (the command:
// the loop over devices and ops, timing, dtype choice, the load note),
// bench_cases.{h,cc} (what one row times), bench_baselines.cc (--compare:
// NumPy and PyTorch through bench_compare.py, oneDNN called directly; running the
// helper scripts) and bench_output.cc (the table, CSV, JSON and plot).
#pragma once
#include <ctensor/ctensor.h>

#include <chrono>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "tool.h"

// oneDNN called directly for --compare, where its headers are at hand.
#if !defined(CT_BENCH_NO_DNNL) && __has_include(<oneapi/dnnl/dnnl.hpp>)
#define CT_BENCH_DNNL 1
#endif

namespace ctool {

using Clock = std::chrono::steady_clock;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

const CTDataType kF16{CT_FLOAT, 16, 1}, kF32{CT_FLOAT, 32, 1}, kF64{CT_FLOAT, 64, 1}, kBool{CT_BOOL, 8, 1},
    kI64{CT_INT, 64, 1};

inline double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
inline bool is_float(CTDataType d) { return ct_dtype_index(d) >= 0 && ((CT_DTS_FLOAT >> ct_dtype_index(d)) & 1u); }
inline bool same(CTDataType a, CTDataType b) { return a.code == b.code && a.bits == b.bits; }

// "2x3": a shape's extents joined by sep (bench_cases.cc).
std::string dims(const std::vector<int64_t>& s, const char* sep = "x");

// ---------------------------------------------------------------------------
// Timing (bench.cpp)
// ---------------------------------------------------------------------------

struct Timing {
  double median = kNaN, min = kNaN;
  std::string error;
};

// 2 warm-ups, k calls per batch so that a batch takes ~target/5, 5 batches
// (a call longer than target: 1 warm-up, 3 one-call batches; longer than
// 10 target: 1 batch).
Timing time_calls(const std::function<CTStatus()>& call, CTDevice dev, double target);

// ---------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------

struct Baseline {
  double time_s = kNaN, min_s = kNaN;
  std::string note;  // oneDNN: the pipeline and implementation
};

struct Row {
  std::string device, op, category, dtype, shape, bound, status;
  double time_s = kNaN, time_min_s = kNaN, gbps = kNaN, gflops = kNaN, fraction = kNaN, flops = 0;
  uint64_t bytes = 0;        // every tensor argument once: the rate is bytes / time_s
  uint64_t working_set = 0;  // bytes of every tensor argument and the workspace
  double limit = kNaN;       // what fraction is of: bytes/s (memory-bound) or FLOP/s (compute-bound)
  std::string flag;          // why the fraction is not a plain fraction of the limit ("": it is)
  std::string size_note;     // why the row runs on fewer elements than the default ("": it does not)
  std::map<std::string, Baseline> baselines;  // "numpy", "pytorch", "onednn"
  // What bench_compare.py needs to build the same case in NumPy and PyTorch.
  int kind = 0;
  std::string out_dtype;
  std::vector<int64_t> np_shape;
  std::vector<double> params;
  std::string domain = "values";  // the first input's values (bench_cases.h's Domain)
  // NN rows, for PyTorch's same call: the inputs' shapes ({} where left out)
  // and the descriptor's fields that shape the work (kernel, stride, pad).
  std::vector<std::vector<int64_t>> nn_inputs;
  std::map<std::string, int64_t> nn_desc;
  bool ok() const { return status == "ok"; }
};

// One measurement of a device's limits during the run.
struct Probe {
  std::string when;  // "before the ops", "after elementwise", "after the ops"
  bool full = false;  // every probe configuration, or the short check
  Limits lim;
};

struct DevOut {
  Device dev;
  Limits floor;  // the cached limits (bandwidth 0: none, or --remeasure)
  std::vector<Probe> probes;
  double scale = 1;  // CT_BENCH_LIMIT_SCALE
  // What the rows are judged against: each figure the best of the floor and
  // this run's probes, times scale; *_how say which probe gave it.
  Limits lim;
};

// Sets r.limit, r.fraction and r.flag from the row's rate, the limits and the
// last-level cache size (bench.cpp). A row over its limit gets the reason:
// "working set fits in cache: N MiB < L3 M MiB" for a memory-bound row
// whose tensors fit in the L3, "limit under-measured" otherwise; a
// memory-bound row whose working set fits in the L3 says so under 100% too,
// after the row's size_note where it has one.
void judge(Row& r, const Limits& lim, int64_t l3_bytes);

// ---------------------------------------------------------------------------
// Baselines and helper scripts (bench_baselines.cc)
// ---------------------------------------------------------------------------

// NumPy and PyTorch baselines (--compare) from bench_compare.py --serve,
// one row at a time: the tool times a row, then its baselines, then both
// again, and each side keeps its better median, so a load that comes and
// goes during the run moves both sides of a ratio alike. NumPy times the
// category 1/2 rows; PyTorch (where torch is installed, on `threads`
// threads) every row it has an op for.
class ScriptBaselines {
 public:
  explicit ScriptBaselines(int threads);  // starts the script (a note says why not)
  ~ScriptBaselines();
  ScriptBaselines(const ScriptBaselines&) = delete;
  ScriptBaselines& operator=(const ScriptBaselines&) = delete;
  bool ok() const;  // the script is running
  // One round of row r's baselines: r.baselines["numpy"], ["pytorch"] keep the lower median.
  void time(Row& r, size_t key, double target);
  // Stops the script and prints why it did not run or stopped, and what had no equivalent.
  void end();

 private:
  std::string read_line();
  int finish();  // closes the pipes and waits: the script's exit status
  int pid_ = -1;
  std::FILE *to_ = nullptr, *from_ = nullptr;
  std::string note_, numpy_note_, torch_note_, torch_skip_, numpy_none_, torch_none_, torch_version_;
};

#ifdef CT_BENCH_DNNL
// The faster oneDNN pipeline for the row's op (matmul, conv2d), or a note why there is none.
Baseline onednn_baseline(const std::string& op, CTDataType dt, bool quick, double target);
#endif

// The helper script `name` (bench_compare.py, plot_bench.py), "" when not found.
std::string find_script(const std::string& name);
std::string python();  // CT_PYTHON, else python3
std::string shell_quote(const std::string& s);
int run_shell(const std::string& cmd);     // the exit status (127: not found)
std::string temp_file(const char* suffix);  // a new empty file, "" on failure

// ---------------------------------------------------------------------------
// Output (bench_output.cc)
// ---------------------------------------------------------------------------

void print_header();  // the table's column names
void print_row(const Row& r);
// The limits lines of a device's table: the L3 size (a CPU), the figures
// rows are judged against, where they come from, and the cached floor.
void print_limits(const DevOut& d, int64_t l3_bytes, const std::string& l3_source);
void print_baselines(const std::vector<Row>& rows);  // --compare: the ratios table
std::string to_json(const Options& o, const std::vector<DevOut>& devs, const std::vector<Row>& rows,
                    double other_load);
std::string to_csv(const Options& o, const std::vector<Row>& rows);
// --plot: draws o.plot from the JSON text through plot_bench.py; false on failure.
bool plot(const Options& o, const std::string& json);

}  // namespace ctool
