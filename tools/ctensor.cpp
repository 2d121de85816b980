// ctensor — list, check and benchmark every op on every device.
//
//   ctensor [--plugin LIB.so]... <command> [options]
//   ctensor info  [--json FILE] [--remeasure] [--quick]
//   ctensor ops   [--category C] [--device D] [--json FILE]
//   ctensor check [--device D] [--op OP] [--dtype T] [--seed S] [--quick] [--json FILE]
//   ctensor bench [--device D] [--op OP] [--dtype T] [--size S] [--quick] [--json FILE] [--csv FILE]
//                 [--compare] [--plot FILE.png] [--remeasure]
//
// Everything is discovered through the registry (ct_op_count, ct_op_info,
// ct_op_supported) and ct_device_count/ct_device_info, so new ops, backends
// and plugins appear here with no change to the tool. A plugin is a shared
// library exporting `ct_plugin_init` (plugin.h; loaded with ct_library_load)
// that registers ops, kernels and devices through plugin.h (--plugin, or
// CT_PLUGIN_PATH; docs/writing-a-plugin.md): `info` lists the plugins loaded
// (and those of CT_PLUGIN_PATH that failed), `ops` marks their ops, `check`
// compares a plugin op with the reference its plugin registered.
// Exit status: 0 success, 1 a check failed or a run failed, 2 bad arguments
// (with the usage), a plugin that does not load included.
#include <ctensor/ctensor.h>
#include <ctensor/ctensor_nn.h>
#include <ctensor/plugin.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "probes.h"
#include "tool.h"

namespace ctool {

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

#define CT_TOOL_DTYPE_NAME_(N, i, code, bits, name) " " name  // the dtypes' names, from the header's table
const char* kUsage =
    "usage: ctensor [--plugin LIB.so]... <command> [options]\n"
    "\n"
    "commands:\n"
    "  info     version, ABI, plugins, backends, devices and their measured limits\n"
    "  ops      the op registry by category (a plugin's ops marked), with the dtypes each device runs\n"
    "  check    every op x dtype x device against the reference (a plugin op: its plugin's);\n"
    "           non-zero exit on a failure\n"
    "  bench    time per call, GB/s or GFLOP/s, and the fraction of the device's measured limit\n"
    "\n"
    "options:\n"
    "  --plugin LIB   load a plugin first (ops, kernels, devices): a shared library\n"
    "                 exporting ct_plugin_init (plugin.h); repeatable, before or\n"
    "                 after the command; CT_PLUGIN_PATH=a.so:b.so loads more\n"
    "  --device D     cpu, cpu:0, loopback:1 (backend:id), a backend (all its devices) or a device index\n"
    "                 (default: every device)\n"
    "  --op OP        one op by registry name (default: every op)\n"
    "  --category C   elementwise | broadcast_reduce | nn (or 1, 2, 3)\n"
    "  --dtype T     " CT_DTYPE_TABLE(CT_TOOL_DTYPE_NAME_) "\n"
    "  --seed S       random seed for check's inputs (default 1)\n"
    "  --size S       bench: elements of the category 1/2 operands (default: each operand larger than\n"
    "                 the L3 cache, 2x; --quick 1.25x)\n"
    "  --quick        fewer cases, sizes and repeats\n"
    "  --json FILE    also write the results as JSON\n"
    "  --csv FILE     bench: also write the rows as CSV\n"
    "  --compare      bench: also time NumPy and PyTorch's CPU op (through Python, when installed) and\n"
    "                 oneDNN directly, and print the ratios\n"
    "  --plot FILE    bench: draw the fraction of the limit per op and device (matplotlib)\n"
    "  --remeasure    measure the device limits with the full probe, replacing the cached figures\n"
    "                 (bench measures them in every run anyway; the cache is a floor)\n"
    "  -h, --help     this text\n"
    "\n"
    "environment:\n"
    "  CT_CACHE_DIR          where the limits cache (limits.tsv) lives (default ~/.cache/ctensor)\n"
    "  CT_L3_BYTES=N         take the last-level cache as N bytes instead of what the machine reports\n"
    "  CT_BENCH_LIMIT_SCALE=F  bench: judge rows against the limits times F (0 < F; for testing how rows\n"
    "                        over their limit are flagged; never written to the cache)\n"
    "  CT_BENCH_CALL_BUDGET=S  bench: the seconds a call may take at the default size before its row runs\n"
    "                        on fewer elements (default 1, --quick 0.25)\n";

[[noreturn]] void usage_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "ctensor: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n\n%s", kUsage);
  va_end(ap);
  std::exit(2);
}

std::vector<std::string> split(const std::string& list);

// Loads one plugin through ct_library_load. Any failure is a usage error
// (exit 2) that says why.
void load_plugin(const std::string& path) {
  CTLibrary* lib = nullptr;
  if (ct_library_load(path.c_str(), &lib) != CT_OK) usage_error("--plugin %s: %s", path.c_str(), ct_last_error());
}

// The libraries of one origin that did not load: the plugins of
// CT_PLUGIN_PATH (an error: the user asked for them), or the modules beside
// the library (information: a device backend without its device or driver,
// such as the OpenCL module on a machine without an OpenCL platform).
std::vector<CTLibraryFailure> failures_of(int32_t origin) {
  std::vector<CTLibraryFailure> v;
  for (int32_t i = 0, n = ct_library_failure_count(); i < n; ++i) {
    CTLibraryFailure f;
    std::memset(&f, 0, sizeof f);
    f.struct_size = sizeof f;
    if (ct_library_failure(i, &f) == CT_OK && f.origin == origin) v.push_back(f);
  }
  return v;
}
std::vector<CTLibraryFailure> plugin_failures() { return failures_of(CT_LIBRARY_PLUGIN_PATH); }

// Takes every --plugin PATH / --plugin=PATH out of argv (before or after the
// command) and loads them, after the library loaded those of CT_PLUGIN_PATH
// (':'-separated; a path there that does not load is a usage error too,
// except for `info`, which lists it and exits with 2).
std::vector<char*> load_plugins(int argc, char** argv) {
  std::vector<char*> rest;
  std::vector<std::string> paths;
  const std::vector<CTLibraryFailure> failed = plugin_failures();  // CT_PLUGIN_PATH loads here, first
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i > 0 && a == "--plugin") {
      if (i + 1 >= argc) usage_error("--plugin needs a value");
      paths.push_back(argv[++i]);
    } else if (i > 0 && a.rfind("--plugin=", 0) == 0) {
      paths.push_back(a.substr(9));
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (!failed.empty() && !(rest.size() > 1 && std::strcmp(rest[1], "info") == 0))
    usage_error("CT_PLUGIN_PATH: %s", failed[0].message);
  for (const std::string& p : paths) load_plugin(p);
  return rest;
}

std::vector<Plugin> plugins() {
  std::vector<Plugin> v;
  for (int32_t i = 0, n = ct_library_count(); i < n; ++i) {
    CTLibrary* lib = nullptr;
    Plugin p;
    p.info.struct_size = sizeof p.info;
    if (ct_library_get(i, &lib) != CT_OK || ct_library_info(lib, &p.info) != CT_OK) continue;
    for (int32_t k = 0; k < p.info.num_ops; ++k) {
      int32_t op = -1;
      CTOpInfo oi{};
      oi.struct_size = sizeof oi;
      if (ct_library_op(lib, k, &op) != CT_OK || ct_op_info(op, &oi) != CT_OK) continue;
      p.ops.push_back(op);
      p.op_names.push_back(oi.name);
    }
    v.push_back(p);
  }
  return v;
}

std::map<int32_t, std::string> plugin_of_ops() {
  std::map<int32_t, std::string> m;
  for (const Plugin& p : plugins())
    for (int32_t op : p.ops) m[op] = p.info.name;
  return m;
}

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) usage_error("no command given");
  o.command = argv[1];
  if (o.command == "-h" || o.command == "--help" || o.command == "help") {
    std::fputs(kUsage, stdout);
    std::exit(0);
  }
  if (o.command != "info" && o.command != "ops" && o.command != "check" && o.command != "bench")
    usage_error("unknown command '%s'", o.command.c_str());
  auto value = [&](int& i, const char* name) -> std::string {
    if (i + 1 >= argc) usage_error("%s needs a value", name);
    return argv[++i];
  };
  auto number = [&](const std::string& s, const char* name) -> int64_t {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(s.c_str(), &end, 0);
    if (s.empty() || *end || errno || v < 0) usage_error("%s=%s is not a non-negative integer", name, s.c_str());
    return v;
  };
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    std::string v;
    const size_t eq = a.find('=');
    const bool has_eq = a.rfind("--", 0) == 0 && eq != std::string::npos;
    if (has_eq) v = a.substr(eq + 1), a = a.substr(0, eq);
    auto val = [&](const char* n) { return has_eq ? v : value(i, n); };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--device") o.device = val("--device");
    else if (a == "--op") o.op += (o.op.empty() ? "" : ",") + val("--op");  // repeatable, or a,b,c
    else if (a == "--category") o.category = val("--category");
    else if (a == "--dtype") o.dtype = val("--dtype");
    else if (a == "--seed") o.seed = (uint64_t)number(val("--seed"), "--seed");
    else if (a == "--size") {
      o.size = number(val("--size"), "--size");
      if (o.size < 1) usage_error("--size must be at least 1");
    } else if (a == "--json") o.json = val("--json");
    else if (a == "--csv") o.csv = val("--csv");
    else if (a == "--plot") o.plot = val("--plot");
    else if (a == "--quick" && !has_eq) o.quick = true;
    else if (a == "--compare" && !has_eq) o.compare = true;
    else if (a == "--remeasure" && !has_eq) o.remeasure = true;
    else usage_error("unknown option '%s' for '%s'", argv[i], o.command.c_str());
  }
  // Options that only some commands take.
  auto only = [&](bool given, const char* opt, std::initializer_list<const char*> cmds) {
    if (!given) return;
    for (const char* c : cmds)
      if (o.command == c) return;
    usage_error("%s does not apply to '%s'", opt, o.command.c_str());
  };
  only(!o.op.empty(), "--op", {"check", "bench"});
  only(!o.dtype.empty(), "--dtype", {"check", "bench"});
  only(!o.category.empty(), "--category", {"ops", "check", "bench"});
  only(o.size != 0, "--size", {"bench"});
  only(!o.csv.empty(), "--csv", {"bench"});
  only(!o.plot.empty(), "--plot", {"bench"});
  only(o.compare, "--compare", {"bench"});
  only(o.seed != 1, "--seed", {"check"});
  only(!o.device.empty(), "--device", {"ops", "check", "bench"});
  if (!o.dtype.empty() && !dtype_from_name(o.dtype, nullptr)) usage_error("unknown dtype '%s'", o.dtype.c_str());
  for (const std::string& name : split(o.op)) {
    int32_t id;
    if (ct_op_find(name.c_str(), &id) != CT_OK) usage_error("no op named '%s' (see `ctensor ops`)", name.c_str());
  }
  if (!o.category.empty() && category_from_name(o.category) < 0)
    usage_error("unknown category '%s' (elementwise, broadcast_reduce, nn)", o.category.c_str());
  return o;
}

// ---------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------

const DtypeName kDtypes[CT_DT_COUNT] = {
#define CT_TOOL_DTYPE_(N, i, code, bits, name) {name, {code, bits, 1}},
    CT_DTYPE_TABLE(CT_TOOL_DTYPE_)
#undef CT_TOOL_DTYPE_
};

bool dtype_from_name(const std::string& n, CTDataType* out) {
  for (const auto& d : kDtypes)
    if (n == d.name) {
      if (out) *out = d.dt;
      return true;
    }
  return false;
}

std::string dtype_name(CTDataType d) {
  for (const auto& e : kDtypes)
    if (e.dt.code == d.code && e.dt.bits == d.bits) return e.name;
  return "code" + std::to_string(d.code) + "x" + std::to_string(d.bits);
}

int category_from_name(const std::string& c) {
  if (c == "elementwise" || c == "1") return CT_CATEGORY_ELEMENTWISE;
  if (c == "broadcast_reduce" || c == "2") return CT_CATEGORY_BROADCAST_REDUCE;
  if (c == "nn" || c == "3") return CT_CATEGORY_NN;
  return -1;
}

const char* category_name(int c) {
  return c == CT_CATEGORY_ELEMENTWISE ? "elementwise"
       : c == CT_CATEGORY_BROADCAST_REDUCE ? "broadcast_reduce"
       : c == CT_CATEGORY_NN ? "nn" : "other";
}

const char* kind_name(int k) {
  switch (k) {
    case CT_KIND_UNARY: return "unary";
    case CT_KIND_UNARY_PARAM: return "unary_param";
    case CT_KIND_TERNARY: return "ternary";
    case CT_KIND_CAST: return "cast";
    case CT_KIND_BINARY: return "binary";
    case CT_KIND_REDUCE: return "reduce";
    case CT_KIND_ALONG_AXIS: return "along_axis";
    case CT_KIND_NN: return "nn";
    case CT_KIND_INDEX: return "index";
    default: return "other";
  }
}

std::vector<CTOpInfo> registry() {
  std::vector<CTOpInfo> v;
  for (int32_t i = 0; i < ct_op_count(); ++i) {
    CTOpInfo info{};
    info.struct_size = sizeof info;
    if (ct_op_info(i, &info) == CT_OK) v.push_back(info);
  }
  return v;
}

std::vector<Device> devices() {
  std::vector<Device> v;
  for (int32_t i = 0; i < ct_device_count(); ++i) {
    Device d;
    d.index = i;
    d.info.struct_size = sizeof d.info;
    if (ct_device_info(i, &d.info) != CT_OK) continue;
    d.label = std::string(d.info.backend) + ":" + std::to_string(d.info.device.device_id);
    if (d.info.device.device_type == CT_CPU) d.label = "cpu:" + std::to_string(d.info.device.device_id);
    v.push_back(d);
  }
  return v;
}

std::vector<Device> select_devices(const Options& o) {
  std::vector<Device> all = devices(), out;
  for (const Device& d : all) {
    if (o.device.empty() || o.device == d.label || o.device == std::to_string(d.index) ||
        (o.device.find(':') == std::string::npos && d.label.rfind(o.device + ":", 0) == 0))
      out.push_back(d);
  }
  if (out.empty()) {
    std::string names;
    for (const Device& d : all) names += (names.empty() ? "" : ", ") + d.label;
    usage_error("no device '%s' (devices: %s)", o.device.c_str(), names.c_str());
  }
  return out;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> v;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) v.push_back(item);
  return v;
}

bool selected_op(const Options& o, const CTOpInfo& info) {
  if (!o.op.empty()) {
    const std::vector<std::string> names = split(o.op);
    if (std::find(names.begin(), names.end(), info.name) == names.end()) return false;
  }
  if (!o.category.empty() && category_from_name(o.category) != info.category) return false;
  return true;
}

std::string json_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\', r += c;
    else if ((unsigned char)c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      r += b;
    } else r += c;
  }
  return r;
}

std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) {
    std::fprintf(stderr, "ctensor: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

std::string now_string() {
  char b[32];
  std::time_t t = std::time(nullptr);
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M", std::localtime(&t));
  return b;
}

// ---------------------------------------------------------------------------
// Device limits: measured, cached per machine
// ---------------------------------------------------------------------------

constexpr const char* kProbeVersion = "probe4";  // bump when tools/probes.h changes what it measures

int64_t host_l3_bytes(std::string* source) {
  if (const char* e = std::getenv("CT_L3_BYTES"); e && *e) {
    char* end = nullptr;
    const long long v = std::strtoll(e, &end, 10);
    if (v > 0 && end && *end == '\0') {
      if (source) *source = "CT_L3_BYTES";
      return v;
    }
    std::fprintf(stderr, "ctensor: CT_L3_BYTES=%s is not a size in bytes: ignored\n", e);
  }
  static const ctprobe::CacheSize c = ctprobe::last_level_cache();
  if (source) *source = c.source;
  return c.bytes;
}

std::string cache_path() {
  const char* dir = std::getenv("CT_CACHE_DIR");
  std::string d;
  if (dir && *dir) d = dir;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) d = std::string(x) + "/ctensor";
  else if (const char* h = std::getenv("HOME"); h && *h) d = std::string(h) + "/.cache/ctensor";
  else d = "/tmp/ctensor-cache";
  return d + "/limits.tsv";
}

std::string host_name() {
  char b[256] = {};
  gethostname(b, sizeof b - 1);
  return b;
}

uint64_t host_memory_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  while (f >> key >> kb) {
    if (key == "MemTotal:") return kb * 1024;
    f.ignore(256, '\n');
  }
  return 0;
}

namespace {

double seconds_now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// The best time of `reps` runs of f (each followed by ct_synchronize).
template <class F>
double best_time(CTDevice dev, int reps, F f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = seconds_now();
    if (f() != CT_OK || ct_synchronize(dev, nullptr) != CT_OK) return -1;
    best = std::min(best, seconds_now() - t0);
  }
  return best;
}

// A device other than the host CPU, probed through the C ABI alone, so any
// backend (a module, a plugin) gets figures: bandwidth from ct_copy between
// two compact buffers (a byte read and a byte written per byte copied: the
// device's own copy where its backend hands dense copies to the driver), and
// the float32 FLOP rate of ct_matmul at n = 1024 or 2048 (a GEMM: a floor of
// the peak, not the FMA peak the CPU probe measures).
Limits measure_device_limits(const Device& d, bool quick) {
  Limits l;
  const CTDevice dev = d.info.device;
  const size_t bytes = (size_t)(quick ? 64 : 256) << 20;
  void *p = nullptr, *q = nullptr;
  if (ct_malloc(dev, bytes, &p) == CT_OK && ct_malloc(dev, bytes, &q) == CT_OK) {
    int64_t n = (int64_t)bytes;
    CTensor a{p, dev, 1, {CT_UINT, 8, 1}, &n, nullptr, 0}, b{q, dev, 1, {CT_UINT, 8, 1}, &n, nullptr, 0};
    const double t = best_time(dev, quick ? 3 : 5, [&] { return ct_copy(&a, &b, nullptr); });
    if (t > 0) {
      l.bandwidth = 2.0 * (double)bytes / t;
      l.bandwidth_how = "ct_copy of " + std::to_string(bytes >> 20) + " MiB, device to device";
    }
  }
  if (p) ct_free(dev, p);
  if (q) ct_free(dev, q);
  const int64_t m = quick ? 1024 : 2048;
  int64_t shape[2] = {m, m};
  std::vector<float> host((size_t)(m * m), 0.5f);
  void* buf[3] = {nullptr, nullptr, nullptr};
  bool ok = ct_op_supported(CT_OP_MATMUL, dev, CTDataType{CT_FLOAT, 32, 1}) == CT_OK;
  for (int i = 0; ok && i < 3; ++i) ok = ct_malloc(dev, host.size() * 4, &buf[i]) == CT_OK;
  if (ok) {
    CTensor h{host.data(), {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, shape, nullptr, 0};
    CTensor t[3];
    for (int i = 0; i < 3; ++i) {
      t[i] = CTensor{buf[i], dev, 2, {CT_FLOAT, 32, 1}, shape, nullptr, 0};
      ok = ok && ct_copy(&h, &t[i], nullptr) == CT_OK;
    }
    ok = ok && ct_synchronize(dev, nullptr) == CT_OK;
    size_t ws = 0;
    const CTMatmulDesc md{sizeof(CTMatmulDesc), CT_ACTIVATION_NONE};
    ok = ok && ct_matmul_workspace_size(&md, &t[0], &t[1], nullptr, &t[2], &ws) == CT_OK;
    void* w = nullptr;
    if (ok && ws) ok = ct_malloc(dev, ws, &w) == CT_OK;
    if (ok) {
      best_time(dev, 1, [&] { return ct_matmul(&md, &t[0], &t[1], nullptr, &t[2], w, ws, nullptr); });
      const double s = best_time(dev, quick ? 2 : 3,
                                 [&] { return ct_matmul(&md, &t[0], &t[1], nullptr, &t[2], w, ws, nullptr); });
      if (s > 0) {
        l.peak_flops = 2.0 * (double)m * (double)m * (double)m / s;
        l.peak_how = "float32 ct_matmul " + std::to_string(m) + "^3";
      }
    }
    if (w) ct_free(dev, w);
  }
  for (void* b : buf)
    if (b) ct_free(dev, b);
  l.measured = now_string();
  l.note = "probed through ctensor's own ops: ct_copy bandwidth, float32 ct_matmul rate (a floor of the peak)";
  return l;
}

}  // namespace

Limits measure_limits(const Device& d, bool quick, bool full) {
  if (d.info.device.device_type != CT_CPU) return measure_device_limits(d, quick);
  Limits l;
  const int threads = std::max(1, (int)d.info.default_threads);
  // 3 passes per configuration (the full probe with --quick: 2; it runs twice as many configurations).
  const ctprobe::Measured bw = ctprobe::memory_bandwidth(threads, host_l3_bytes(), full, full && quick ? 2 : 3);
  const ctprobe::Measured fl = ctprobe::fma_peak(threads, full && !quick ? 3 : 2, quick || !full ? 0.03 : 0.05, full);
  l.bandwidth = bw.value;
  l.bandwidth_how = bw.how;
  l.peak_flops = fl.value;
  l.peak_how = fl.how;
  l.measured = now_string();
  l.note = std::string(full ? "full probe" : "short probe") + ": the best streaming kernel (read, copy, triad) and "
           "float32 FMA, " + std::to_string(threads) + " threads at most";
  return l;
}

// The cache: one line per device, tab-separated: key, bandwidth, peak,
// measured, note, bandwidth_how, peak_how. The probe's version is part of
// the key: a changed probe measures afresh.
std::string cache_key(const Device& d) {
  return std::string(kProbeVersion) + "|" + host_name() + "|" + d.info.name + "|" +
         std::to_string(d.info.default_threads);
}

std::vector<std::vector<std::string>> cache_lines() {
  std::vector<std::vector<std::string>> v;
  std::ifstream f(cache_path());
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    std::vector<std::string> col;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, '\t')) col.push_back(c);
    v.push_back(col);
  }
  return v;
}

Limits cached_limits(const Device& d) {
  const std::string key = cache_key(d);
  for (const auto& col : cache_lines())
    if (col.size() >= 5 && col[0] == key) {
      Limits l;
      l.bandwidth = std::atof(col[1].c_str());
      l.peak_flops = std::atof(col[2].c_str());
      l.measured = col[3];
      l.note = col[4];
      if (col.size() >= 7) l.bandwidth_how = col[5], l.peak_how = col[6];
      l.cached = true;
      l.cache_file = cache_path();
      return l;
    }
  return Limits{};
}

void store_limits(const Device& d, const Limits& l) {
  if (!(l.bandwidth > 0)) return;
  const std::string path = cache_path(), key = cache_key(d);
  std::ostringstream out;
  for (const auto& col : cache_lines()) {
    if (col.empty() || col[0] == key) continue;
    for (size_t i = 0; i < col.size(); ++i) out << (i ? "\t" : "") << col[i];
    out << "\n";
  }
  out << key << "\t" << json_num(l.bandwidth) << "\t" << json_num(l.peak_flops) << "\t" << l.measured << "\t"
      << l.note << "\t" << l.bandwidth_how << "\t" << l.peak_how << "\n";
  const std::string dir = path.substr(0, path.rfind('/'));
  const std::string cmd = "mkdir -p '" + dir + "'";
  if (std::system(cmd.c_str()) == 0) write_file(path, out.str());
}

Limits device_limits(const Device& d, bool remeasure, bool quick) {
  if (!remeasure) {
    Limits c = cached_limits(d);
    if (c.bandwidth > 0) return c;
  }
  std::fprintf(stderr, "ctensor: measuring the limits of %s (streaming kernels, FMA peak) ...\n", d.label.c_str());
  Limits l = measure_limits(d, quick, true);
  store_limits(d, l);
  l.cache_file = cache_path();
  return l;
}

// ---------------------------------------------------------------------------
// info
// ---------------------------------------------------------------------------

int cmd_info(const Options& o) {
  const uint32_t v = ct_version();
  std::printf("ctensor %s (library), built against header %d.%d.%d; ABI major %u%s\n", ct_version_string(),
              CT_VERSION_MAJOR, CT_VERSION_MINOR, CT_VERSION_PATCH, (unsigned)(v / 10000),
              (v / 10000) == CT_VERSION_MAJOR ? "" : "  <- MISMATCH with this tool's header");
  std::vector<Device> devs = devices();
  std::vector<std::string> backends;
  for (const Device& d : devs)
    if (std::find(backends.begin(), backends.end(), d.info.backend) == backends.end())
      backends.push_back(d.info.backend);
  std::string bl;
  for (const std::string& b : backends) bl += (bl.empty() ? "" : ", ") + b;
  std::printf("backends with devices: %s\n", bl.c_str());
  std::printf("ops in the registry: %d\n", ct_op_count());
  // plugin libraries: what each is and brought, and those of CT_PLUGIN_PATH that failed
  const std::vector<Plugin> libs = plugins();
  const std::vector<CTLibraryFailure> failed = plugin_failures();
  std::printf("plugins loaded: %zu (plugin ABI of this library %d.%d)\n", libs.size(), CT_PLUGIN_ABI_MAJOR,
              CT_PLUGIN_ABI_MINOR);
  std::ostringstream pj;
  for (size_t i = 0; i < libs.size(); ++i) {
    const CTLibraryInfo& l = libs[i].info;
    std::string names;
    for (const std::string& n : libs[i].op_names) names += (names.empty() ? "" : ", ") + n;
    std::printf("  %s %s (ABI %u.%u) from %s\n", l.name, l.version, l.abi_version >> 16, l.abi_version & 0xffffu,
                l.path);
    std::printf("       %d op%s%s%s%s, %d device type%s, %d kernel table%s\n", l.num_ops, l.num_ops == 1 ? "" : "s",
                names.empty() ? "" : " (", names.c_str(), names.empty() ? "" : ")", l.num_devices,
                l.num_devices == 1 ? "" : "s", l.num_kernel_tables, l.num_kernel_tables == 1 ? "" : "s");
    pj << (i ? "," : "") << "\n    {\"name\": \"" << json_escape(l.name) << "\", \"version\": \"" << json_escape(l.version)
       << "\", \"path\": \"" << json_escape(l.path) << "\", \"abi_version\": \"" << (l.abi_version >> 16) << "."
       << (l.abi_version & 0xffffu) << "\", \"num_ops\": " << l.num_ops << ", \"num_devices\": " << l.num_devices
       << ", \"num_kernel_tables\": " << l.num_kernel_tables << ", \"ops\": [";
    for (size_t k = 0; k < libs[i].op_names.size(); ++k)
      pj << (k ? ", " : "") << "\"" << json_escape(libs[i].op_names[k]) << "\"";
    pj << "]}";
  }
  for (const CTLibraryFailure& m : failures_of(CT_LIBRARY_MODULE))
    std::printf("module not loaded: %s: %s\n", m.path, m.message);
  if (!failed.empty()) std::printf("plugins of CT_PLUGIN_PATH that did not load: %zu\n", failed.size());
  std::ostringstream fj;
  for (size_t i = 0; i < failed.size(); ++i) {
    std::printf("  %s: %s: %s\n", failed[i].path, ct_status_string(failed[i].status), failed[i].message);
    fj << (i ? "," : "") << "\n    {\"path\": \"" << json_escape(failed[i].path) << "\", \"status\": \""
       << ct_status_string(failed[i].status) << "\", \"message\": \"" << json_escape(failed[i].message) << "\"}";
  }
  std::printf("devices: %zu\n", devs.size());
  std::ostringstream js;
  js << "{\n  \"tool\": \"ctensor info\",\n  \"version\": \"" << ct_version_string() << "\",\n  \"abi_major\": "
     << v / 10000 << ",\n  \"plugin_abi\": \"" << CT_PLUGIN_ABI_MAJOR << "." << CT_PLUGIN_ABI_MINOR
     << "\",\n  \"op_count\": " << ct_op_count() << ",\n  \"plugins\": [" << pj.str() << (libs.empty() ? "" : "\n  ")
     << "],\n  \"plugin_failures\": [" << fj.str() << (failed.empty() ? "" : "\n  ") << "],\n  \"backends\": [";
  for (size_t i = 0; i < backends.size(); ++i) js << (i ? ", " : "") << "\"" << json_escape(backends[i]) << "\"";
  std::string l3_source;
  const int64_t l3 = host_l3_bytes(&l3_source);
  js << "],\n  \"l3_bytes\": " << l3 << ",\n  \"l3_source\": \"" << json_escape(l3_source)
     << "\",\n  \"devices\": [";
  for (size_t i = 0; i < devs.size(); ++i) {
    const Device& d = devs[i];
    const bool cpu = d.info.device.device_type == CT_CPU;
    const uint64_t mem = d.info.memory_bytes ? d.info.memory_bytes : (cpu ? host_memory_bytes() : 0);
    Limits l = device_limits(d, o.remeasure, o.quick);
    std::printf("  [%d] %-8s %s (backend %s)\n", d.index, d.label.c_str(), d.info.name, d.info.backend);
    std::printf("       compute units %d, default threads %d, memory %.1f GiB%s%s\n", d.info.compute_units,
                d.info.default_threads, mem / 1073741824.0, cpu ? ", SIMD " : "", cpu ? ctprobe::simd_level() : "");
    if (cpu) std::printf("       L3 cache %s (%s)\n", ctprobe::mib(double(l3)).c_str(), l3_source.c_str());
    if (l.bandwidth > 0)
      std::printf("       limits: memory %.1f GB/s (%s), compute %.0f GFLOP/s float32 (%s); measured %s%s\n",
                  l.bandwidth / 1e9, l.bandwidth_how.c_str(), l.peak_flops / 1e9, l.peak_how.c_str(),
                  l.measured.c_str(), l.cached ? (", cached in " + l.cache_file + " (bench measures again)").c_str() : "");
    else
      std::printf("       limits: %s\n", l.note.c_str());
    js << (i ? "," : "") << "\n    {\"index\": " << d.index << ", \"label\": \"" << json_escape(d.label)
       << "\", \"name\": \"" << json_escape(d.info.name) << "\", \"backend\": \"" << json_escape(d.info.backend)
       << "\", \"device_type\": " << d.info.device.device_type << ", \"device_id\": " << d.info.device.device_id
       << ", \"compute_units\": " << d.info.compute_units << ", \"default_threads\": " << d.info.default_threads
       << ", \"memory_bytes\": " << mem << ", \"simd\": " << (cpu ? "\"" + std::string(ctprobe::simd_level()) + "\"" : "null")
       << ", \"limits\": {\"bandwidth_Bps\": " << json_num(l.bandwidth) << ", \"peak_flops\": "
       << json_num(l.peak_flops) << ", \"bandwidth_probe\": \"" << json_escape(l.bandwidth_how)
       << "\", \"peak_probe\": \"" << json_escape(l.peak_how) << "\", \"measured\": \"" << json_escape(l.measured)
       << "\", \"cached\": "
       << (l.cached ? "true" : "false") << ", \"note\": \"" << json_escape(l.note) << "\"}}";
  }
  js << "\n  ]\n}\n";
  if (!o.json.empty() && !write_file(o.json, js.str())) return 1;
  if (!failed.empty()) {  // as for every command, a plugin that does not load is exit 2 (listed above)
    std::fprintf(stderr, "ctensor: CT_PLUGIN_PATH: %zu plugin(s) did not load (listed above)\n", failed.size());
    return 2;
  }
  return 0;
}

// ---------------------------------------------------------------------------
// ops
// ---------------------------------------------------------------------------

std::vector<std::string> supported_dtypes(const CTOpInfo& info, const Device& d) {
  std::vector<std::string> v;
  for (const auto& dt : kDtypes)
    if (ct_op_supported(info.op, d.info.device, dt.dt) == CT_OK) v.push_back(dt.name);
  return v;
}

int cmd_ops(const Options& o) {
  std::vector<Device> devs = select_devices(o);
  std::vector<CTOpInfo> reg = registry();
  const std::map<int32_t, std::string> owner = plugin_of_ops();
  std::ostringstream js;
  js << "{\n  \"tool\": \"ctensor ops\",\n  \"op_count\": " << ct_op_count() << ",\n  \"ops\": [";
  bool first = true;
  size_t listed = 0;
  for (int cat = 1; cat <= 3; ++cat) {
    if (!o.category.empty() && category_from_name(o.category) != cat) continue;
    size_t n = 0;
    for (const CTOpInfo& i : reg) n += i.category == cat;
    std::printf("category %d: %s (%zu ops)\n", cat, category_name(cat), n);
    for (const CTOpInfo& info : reg) {
      if (info.category != cat) continue;
      ++listed;
      const auto from = owner.find(info.op);
      const bool plugin = from != owner.end();
      std::printf("  %-24s %-11s %s%s%s%s\n", info.name, kind_name(info.kind), info.summary,
                  plugin ? "  [plugin " : "", plugin ? from->second.c_str() : "", plugin ? "]" : "");
      js << (first ? "" : ",") << "\n    {\"id\": " << info.op << ", \"name\": \"" << json_escape(info.name)
         << "\", \"category\": \"" << category_name(cat) << "\", \"kind\": \"" << kind_name(info.kind)
         << "\", \"summary\": \"" << json_escape(info.summary) << "\", \"plugin\": "
         << (plugin ? "\"" + json_escape(from->second) + "\"" : std::string("null")) << ", \"dtypes\": {";
      first = false;
      for (size_t k = 0; k < devs.size(); ++k) {
        std::vector<std::string> dts = supported_dtypes(info, devs[k]);
        std::string line;
        for (const std::string& s : dts) line += " " + s;
        std::printf("  %-24s %-11s   %s:%s\n", "", "", devs[k].label.c_str(), dts.empty() ? " (none)" : line.c_str());
        js << (k ? ", " : "") << "\"" << json_escape(devs[k].label) << "\": [";
        for (size_t j = 0; j < dts.size(); ++j) js << (j ? ", " : "") << "\"" << dts[j] << "\"";
        js << "]";
      }
      js << "}}";
    }
  }
  js << "\n  ]\n}\n";
  std::printf("%zu ops listed (ct_op_count() = %d; %zu from plugins)\n", listed, ct_op_count(), owner.size());
  if (!o.json.empty() && !write_file(o.json, js.str())) return 1;
  return 0;
}

// ---------------------------------------------------------------------------
// Progress on a terminal: a bar once a run has taken more than a second.
// ---------------------------------------------------------------------------

Progress::Progress(size_t total) : total_(total), tty_(isatty(2) != 0), t0_(ctprobe::Clock::now()) {}

void Progress::step(const std::string& what) {
  ++done_;
  if (!tty_ || ctprobe::since(t0_) < 1.0) return;
  const int width = 30;
  const int fill = total_ ? int(width * done_ / total_) : width;
  std::fprintf(stderr, "\r[%s%s] %zu/%zu %-28.28s", std::string(fill, '#').c_str(),
               std::string(width - fill, ' ').c_str(), done_, total_, what.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::finish() {
  if (shown_) std::fprintf(stderr, "\r%-80s\r", "");
  shown_ = false;
}

}  // namespace ctool

int main(int argc, char** argv) {
  using namespace ctool;
  std::vector<char*> args = load_plugins(argc, argv);
  Options o = parse((int)args.size(), args.data());
  if (o.command == "info") return cmd_info(o);
  if (o.command == "ops") return cmd_ops(o);
  if (o.command == "check") return cmd_check(o);
  return cmd_bench(o);
}
