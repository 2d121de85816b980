// `ctensor bench`'s output: the table's rows as they come, the --compare
// ratios table with geometric means, the JSON (always built; --json writes
// it) and CSV (--csv) files, and --plot (bench/plot_bench.py on the JSON).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench.h"
#include "probes.h"

namespace ctool {
namespace {

const char* kRowFmt = "%-24s %-8s %-28s %11s %15s %7s  %s\n";

std::string fmt_time(double s) {
  if (!(s > 0)) return "-";
  char b[32];
  if (s < 1e-6) std::snprintf(b, sizeof b, "%.1f ns", s * 1e9);
  else if (s < 1e-3) std::snprintf(b, sizeof b, "%.2f us", s * 1e6);
  else if (s < 1) std::snprintf(b, sizeof b, "%.3f ms", s * 1e3);
  else std::snprintf(b, sizeof b, "%.3f s", s);
  return b;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

std::string num_or_empty(double v) { return std::isfinite(v) ? json_num(v) : ""; }

std::string flops_str(double f) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", f);
  return b;
}

}  // namespace

void print_header() { std::printf(kRowFmt, "op", "dtype", "shape", "time/call", "rate", "%limit", "bound"); }

// A row over 100% of its limit: the figure with '!' and the reason at the
// end of the line; a memory-bound row in cache under 100%: the note in
// parentheses.
void print_row(const Row& r) {
  if (!r.ok()) {
    std::printf("%-24s %-8s %-28s %s\n", r.op.c_str(), r.dtype.c_str(), r.shape.c_str(), r.status.c_str());
    return;
  }
  const bool compute = r.bound == "compute";
  const bool over = r.fraction > 1;
  const std::string rate = compute ? fmt("%.1f GFLOP/s", r.gflops) : fmt("%.2f GB/s", r.gbps);
  std::string tail;
  for (const auto& [name, b] : r.baselines)
    if (b.time_s > 0) tail += fmt(("   " + name + " %.2fx").c_str(), b.time_s / r.time_s);
  if (!r.flag.empty()) tail += (over ? "  ! " : "  (") + r.flag + (over ? "" : ")");
  std::string bound = r.bound;
  if (!tail.empty()) bound.resize(std::max<size_t>(bound.size(), 7), ' ');  // the column, when something follows
  std::printf("%-24s %-8s %-28s %11s %15s %7s  %s%s\n", r.op.c_str(), r.dtype.c_str(), r.shape.c_str(),
              fmt_time(r.time_s).c_str(), rate.c_str(),
              std::isfinite(r.fraction) ? fmt(over ? "%.0f%%!" : "%.1f%%", 100 * r.fraction).c_str() : "-",
              bound.c_str(), tail.c_str());
}

void print_limits(const DevOut& d, int64_t l3_bytes, const std::string& l3_source) {
  if (d.dev.info.device.device_type == CT_CPU)
    std::printf("L3 cache %s (%s)\n", l3_bytes > 0 ? ctprobe::mib(double(l3_bytes)).c_str() : "unknown",
                l3_source.c_str());
  const Limits& l = d.lim;
  if (!(l.bandwidth > 0)) {
    std::printf("limits: %s\n", l.note.c_str());
    return;
  }
  std::printf("limits, the best of this run's probes and the cached floor:\n"
              "  memory  %7.1f GB/s      (%s)\n  compute %7.0f GFLOP/s  (%s)\n",
              l.bandwidth / 1e9, l.bandwidth_how.c_str(), l.peak_flops / 1e9, l.peak_how.c_str());
  if (d.floor.bandwidth > 0)
    std::printf("  cached floor %.1f GB/s, %.0f GFLOP/s (measured %s, %s)\n", d.floor.bandwidth / 1e9,
                d.floor.peak_flops / 1e9, d.floor.measured.c_str(), d.floor.cache_file.c_str());
  if (d.scale != 1)
    std::printf("  scaled by %g (CT_BENCH_LIMIT_SCALE): the figures above are the measured ones times %g\n", d.scale,
                d.scale);
}

std::string to_json(const Options& o, const std::vector<DevOut>& devs, const std::vector<Row>& rows,
                    double other_load) {
  std::ostringstream js;
  std::string l3_source;
  const int64_t l3 = host_l3_bytes(&l3_source);
  js << "{\n  \"tool\": \"ctensor bench\",\n  \"version\": \"" << json_escape(ct_version_string())
     << "\",\n  \"quick\": " << (o.quick ? "true" : "false") << ",\n  \"compare\": " << (o.compare ? "true" : "false")
     << ",\n  \"date\": \"" << json_escape(now_string()) << "\",\n  \"other_load\": " << json_num(other_load)
     << ",\n  \"l3_bytes\": " << l3 << ",\n  \"l3_source\": \"" << json_escape(l3_source)
     << "\",\n  \"devices\": [";
  // limits: what the rows are judged against (scaled); cached_floor and
  // probes: where it comes from (unscaled).
  auto figures = [](const Limits& l) {
    return "\"bandwidth_Bps\": " + json_num(l.bandwidth) + ", \"peak_flops\": " + json_num(l.peak_flops) +
           ", \"bandwidth_probe\": \"" + json_escape(l.bandwidth_how) + "\", \"peak_probe\": \"" +
           json_escape(l.peak_how) + "\", \"measured\": \"" + json_escape(l.measured) + "\"";
  };
  for (size_t i = 0; i < devs.size(); ++i) {
    const auto& d = devs[i];
    js << (i ? "," : "") << "\n    {\"label\": \"" << json_escape(d.dev.label) << "\", \"name\": \""
       << json_escape(d.dev.info.name) << "\", \"backend\": \"" << json_escape(d.dev.info.backend)
       << "\", \"threads\": " << d.dev.info.default_threads << ",\n     \"limits\": {" << figures(d.lim)
       << ", \"scale\": " << json_num(d.scale) << ", \"note\": \"" << json_escape(d.lim.note)
       << "\",\n       \"cached_floor\": ";
    if (d.floor.bandwidth > 0) js << "{" << figures(d.floor) << "}";
    else js << "null";
    js << ",\n       \"probes\": [";
    for (size_t k = 0; k < d.probes.size(); ++k)
      js << (k ? "," : "") << "\n         {\"when\": \"" << json_escape(d.probes[k].when)
         << "\", \"full\": " << (d.probes[k].full ? "true" : "false") << ", " << figures(d.probes[k].lim) << "}";
    js << "]}}";
  }
  js << "\n  ],\n  \"rows\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    js << (i ? "," : "") << "\n    {\"device\": \"" << json_escape(r.device) << "\", \"op\": \"" << json_escape(r.op)
       << "\", \"category\": \"" << r.category << "\", \"dtype\": \"" << r.dtype << "\", \"shape\": \""
       << json_escape(r.shape) << "\", \"input_domain\": \"" << r.domain << "\", \"time_s\": " << json_num(r.time_s) << ", \"time_min_s\": "
       << json_num(r.time_min_s) << ", \"bytes\": " << r.bytes << ", \"flops\": " << flops_str(r.flops)
       << ", \"working_set_bytes\": " << r.working_set << ", \"gbps\": " << json_num(r.gbps)
       << ", \"gflops\": " << json_num(r.gflops) << ", \"limit\": " << json_num(r.limit)
       << ", \"fraction\": " << json_num(r.fraction) << ", \"over_limit\": " << (r.fraction > 1 ? "true" : "false")
       << ", \"flag\": " << (r.flag.empty() ? "null" : "\"" + json_escape(r.flag) + "\"")
       << ", \"size_note\": " << (r.size_note.empty() ? "null" : "\"" + json_escape(r.size_note) + "\"")
       << ", \"bound\": \""
       << r.bound << "\", \"status\": \"" << json_escape(r.status) << "\"";
    if (o.compare) {
      js << ", \"baselines\": {";
      bool first = true;
      for (const auto& [name, b] : r.baselines) {
        if (!(b.time_s > 0)) continue;
        js << (first ? "" : ", ") << "\"" << name << "\": {\"time_s\": " << json_num(b.time_s)
           << ", \"time_min_s\": " << json_num(b.min_s) << ", \"ratio\": " << json_num(b.time_s / r.time_s)
           << ", \"note\": \"" << json_escape(b.note) << "\"}";
        first = false;
      }
      js << "}";
    }
    js << "}";
  }
  js << "\n  ]\n}\n";
  return js.str();
}

std::string to_csv(const Options& o, const std::vector<Row>& rows) {
  std::ostringstream cs;
  cs << "device,op,category,dtype,shape,time_s,time_min_s,bytes,flops,working_set_bytes,gbps,gflops,limit,fraction,"
        "bound,flag,status";
  if (o.compare) cs << ",numpy_time_s,numpy_ratio,pytorch_time_s,pytorch_ratio,onednn_time_s,onednn_ratio";
  cs << "\n";
  for (const Row& r : rows) {
    cs << csv_field(r.device) << "," << csv_field(r.op) << "," << r.category << "," << r.dtype << ","
       << csv_field(r.shape) << "," << num_or_empty(r.time_s) << "," << num_or_empty(r.time_min_s) << "," << r.bytes
       << "," << flops_str(r.flops) << "," << r.working_set << "," << num_or_empty(r.gbps) << ","
       << num_or_empty(r.gflops) << "," << num_or_empty(r.limit) << "," << num_or_empty(r.fraction) << "," << r.bound
       << "," << csv_field(r.flag) << "," << csv_field(r.status);
    if (o.compare)
      for (const char* name : {"numpy", "pytorch", "onednn"}) {
        auto it = r.baselines.find(name);
        const double t = it == r.baselines.end() ? kNaN : it->second.time_s;
        cs << "," << num_or_empty(t) << "," << num_or_empty(t / r.time_s);
      }
    cs << "\n";
  }
  return cs.str();
}

void print_baselines(const std::vector<Row>& rows) {
  std::vector<std::string> names;  // the baselines some row has
  for (const char* name : {"numpy", "pytorch", "onednn"})
    for (const Row& r : rows)
      if (r.baselines.count(name)) {
        names.push_back(name);
        break;
      }
  if (names.empty()) return;
  std::printf("\nbaselines (ratio = baseline time / ctensor time; > 1: ctensor is faster)\n");
  std::printf("%-8s %-24s %-8s %11s", "device", "op", "dtype", "ctensor");
  for (const std::string& name : names) std::printf(" %11s %7s", name.c_str(), "ratio");
  std::printf("\n");
  std::map<std::string, std::pair<double, int>> logs;  // name: (sum of log ratios, rows)
  for (const Row& r : rows) {
    if (r.baselines.empty()) continue;
    std::printf("%-8s %-24s %-8s %11s", r.device.c_str(), r.op.c_str(), r.dtype.c_str(), fmt_time(r.time_s).c_str());
    for (const std::string& name : names) {
      auto it = r.baselines.find(name);
      if (it == r.baselines.end()) {
        std::printf(" %11s %7s", "-", "-");
        continue;
      }
      const double ratio = it->second.time_s / r.time_s;
      std::printf(" %11s %7s", fmt_time(it->second.time_s).c_str(), fmt("%.2fx", ratio).c_str());
      logs[name].first += std::log(ratio);
      logs[name].second += 1;
    }
    std::printf("\n");
  }
  for (const auto& [name, l] : logs)
    std::printf("geometric mean of the %s ratios over %d rows: %.2fx\n", name.c_str(), l.second,
                std::exp(l.first / l.second));
}

// --plot: plot_bench.py draws o.plot from the JSON (o.json, or a temporary copy).
bool plot(const Options& o, const std::string& json) {
  bool ok = true;
  const std::string script = find_script("plot_bench.py");
  std::string js = o.json;
  if (js.empty()) js = temp_file(".json");
  if (script.empty()) {
    std::fprintf(stderr, "ctensor: plot_bench.py not found (next to the tool, ../share/ctensor, bench/)\n");
    ok = false;
  } else if (js.empty() || (o.json.empty() && !write_file(js, json))) {
    ok = false;
  } else {
    const int prc = run_shell(shell_quote(python()) + " " + shell_quote(script) + " " + shell_quote(js) + " " +
                              shell_quote(o.plot));
    if (prc == 127)
      std::fprintf(stderr, "ctensor: %s not found: cannot draw %s (set CT_PYTHON)\n", python().c_str(),
                   o.plot.c_str());
    else if (prc == 0)
      std::printf("plot: %s\n", o.plot.c_str());
    if (prc) ok = false;
  }
  if (o.json.empty() && !js.empty()) std::remove(js.c_str());
  return ok;
}

}  // namespace ctool
