// Shared pieces of the `ctensor` tool (tools/ctensor.cpp: arguments, info,
// ops, limits; tools/check.cpp; tools/bench.cpp and the bench*.cc it uses).
#pragma once
#include <ctensor/ctensor.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ctool {

struct Options {
  std::string command;
  std::string device, op, category, dtype, json, csv, plot;
  uint64_t seed = 1;
  int64_t size = 0;  // 0: the default
  bool quick = false, compare = false, remeasure = false;
};

struct DtypeName {
  const char* name;
  CTDataType dt;
};
extern const DtypeName kDtypes[CT_DT_COUNT];  // in CTDtypeIndex order

struct Device {
  int32_t index = 0;
  CTDeviceInfo info{};
  std::string label;  // "cpu:0", "cuda:1"
};

// A device's measured limits (0 when not measured; probes.h says how).
struct Limits {
  double bandwidth = 0;   // bytes/s, the best streaming kernel (read, copy or triad)
  double peak_flops = 0;  // float32 FLOP/s
  std::string bandwidth_how, peak_how;  // the probe configuration that gave each figure
  std::string measured, note, cache_file;
  bool cached = false;
};

// The last-level cache size the tool goes by: what the machine reports
// (ctprobe::last_level_cache), or CT_L3_BYTES when set (a testing hook, and
// the way round a machine that reports a wrong size).
int64_t host_l3_bytes(std::string* source = nullptr);

// A loaded plugin library (ct_library_info), and the names of its ops.
struct Plugin {
  CTLibraryInfo info{};
  std::vector<int32_t> ops;
  std::vector<std::string> op_names;
};
std::vector<Plugin> plugins();
// op id -> the name of the plugin that registered it (built-ins: absent).
std::map<int32_t, std::string> plugin_of_ops();

[[noreturn]] void usage_error(const char* fmt, ...);
bool dtype_from_name(const std::string& n, CTDataType* out);
std::string dtype_name(CTDataType d);
int category_from_name(const std::string& c);
const char* category_name(int c);
const char* kind_name(int k);
std::vector<CTOpInfo> registry();
std::vector<Device> devices();
std::vector<Device> select_devices(const Options& o);
bool selected_op(const Options& o, const CTOpInfo& info);
std::vector<std::string> split(const std::string& list);  // "a,b" -> {a, b}
std::string json_escape(const std::string& s);
std::string json_num(double v);
bool write_file(const std::string& path, const std::string& text);
std::string now_string();
// The limits of a device: cached (a floor: the best this machine has shown),
// else measured now with the full probe and cached. --remeasure: measured
// now and cached in place of the old figures.
Limits device_limits(const Device& d, bool remeasure, bool quick);
// The cached limits of a device (bandwidth 0 when none).
Limits cached_limits(const Device& d);
// Measures a device's limits: `full`, every probe configuration (a few
// seconds); otherwise the short check (about a second).
Limits measure_limits(const Device& d, bool quick, bool full);
// Writes l to the cache as the device's entry, replacing the old one.
void store_limits(const Device& d, const Limits& l);

// A progress bar on stderr when it is a terminal and the run has taken more
// than a second; nothing otherwise (the rows themselves are the plain lines).
class Progress {
 public:
  explicit Progress(size_t total);
  void step(const std::string& what);
  void finish();

 private:
  size_t total_, done_ = 0;
  bool tty_, shown_ = false;
  std::chrono::steady_clock::time_point t0_;
};

int cmd_check(const Options& o);
int cmd_bench(const Options& o);

}  // namespace ctool
