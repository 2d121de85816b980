// `ctensor bench --compare`: the baselines each row is compared with, and
// running the helper scripts. oneDNN is called directly for matmul and conv2d
// on the same shapes as ctensor's cases (the faster of its pipelines); NumPy
// times the category 1/2 rows through bench/bench_compare.py (python3, or
// CT_PYTHON), all in one run of the script. ratio = baseline time / ctensor
// time (> 1: ctensor is faster).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench.h"
#include "bench_cases.h"

#ifdef CT_BENCH_DNNL
#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>
#endif

namespace ctool {
namespace {

// ---------------------------------------------------------------------------
// oneDNN called directly (--compare): matmul and conv2d, the same shapes
// ---------------------------------------------------------------------------

#ifdef CT_BENCH_DNNL
struct DnnlPipe {
  std::vector<std::pair<dnnl::primitive, std::unordered_map<int, dnnl::memory>>> steps;
  std::string impl;
};

dnnl::engine& dnnl_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// A memory object with its own buffer; inputs get positive values (bytes 0x3c:
// 0.0115 as float32, ~1.06 as float16).
dnnl::memory dnnl_mem(const dnnl::memory::desc& d, bool input) {
  dnnl::memory m(d, dnnl_engine());
  if (input) std::memset(m.get_data_handle(), 0x3c, d.get_size());
  return m;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

// The user's layouts in and out (row-major a, b, out; NCHW x, y, OIHW w).
// conv2d: any_io = false keeps x, y in NCHW for the conv (weights reordered
// from OIHW to the conv's choice in every call, as ct_conv2d must); true lets
// the conv pick every layout and reorders x and y inside the call too.
DnnlPipe dnnl_pipe(const std::string& op, dnnl::memory::data_type t, bool quick, bool any_io) {
  using tag = dnnl::memory::format_tag;
  using md = dnnl::memory::desc;
  DnnlPipe p;
  auto& eng = dnnl_engine();
  if (op == "matmul") {
    const int64_t m = matmul_size(quick);
    md a({m, m}, t, tag::ab), b({m, m}, t, tag::ab), y({m, m}, t, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, y), user_scratchpad(), eng);
    p.impl = pd.impl_info_str();
    p.steps.push_back({dnnl::matmul(pd),
                       {{DNNL_ARG_SRC, dnnl_mem(a, true)},
                        {DNNL_ARG_WEIGHTS, dnnl_mem(b, true)},
                        {DNNL_ARG_DST, dnnl_mem(y, false)},
                        {DNNL_ARG_SCRATCHPAD, dnnl_mem(pd.scratchpad_desc(), false)}}});
    return p;
  }
  const ConvGeom g;
  md ux({g.N, g.C, g.H, g.W}, t, tag::nchw), uw({g.K, g.C, g.R, g.S}, t, tag::oihw),
      uy({g.N, g.K, g.P(), g.Q()}, t, tag::nchw);
  md ax({g.N, g.C, g.H, g.W}, t, tag::any), aw({g.K, g.C, g.R, g.S}, t, tag::any),
      ay({g.N, g.K, g.P(), g.Q()}, t, tag::any);
  dnnl::convolution_forward::desc cd(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                     any_io ? ax : ux, aw, any_io ? ay : uy, {1, 1}, {g.pad, g.pad},
                                     {g.pad, g.pad});
  dnnl::convolution_forward::primitive_desc pd(cd, user_scratchpad(), eng);
  p.impl = pd.impl_info_str();
  dnnl::memory mx = dnnl_mem(ux, true), mw = dnnl_mem(uw, true), my = dnnl_mem(uy, false);
  auto to_conv = [&](dnnl::memory user, const md& want) {
    if (want == user.get_desc()) return user;
    dnnl::memory m = dnnl_mem(want, false);
    p.steps.push_back({dnnl::reorder(user, m), {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, m}}});
    return m;
  };
  dnnl::memory cx = to_conv(mx, pd.src_desc()), cw = to_conv(mw, pd.weights_desc());
  dnnl::memory cy = pd.dst_desc() == uy ? my : dnnl_mem(pd.dst_desc(), false);
  p.steps.push_back({dnnl::convolution_forward(pd),
                     {{DNNL_ARG_SRC, cx},
                      {DNNL_ARG_WEIGHTS, cw},
                      {DNNL_ARG_DST, cy},
                      {DNNL_ARG_SCRATCHPAD, dnnl_mem(pd.scratchpad_desc(), false)}}});
  if (cy != my) p.steps.push_back({dnnl::reorder(cy, my), {{DNNL_ARG_FROM, cy}, {DNNL_ARG_TO, my}}});
  return p;
}
#endif

// ---------------------------------------------------------------------------
// Helper scripts (bench_compare.py, plot_bench.py): finding and running them
// ---------------------------------------------------------------------------

std::string exe_dir() {
  char b[4096];
  const ssize_t n = readlink("/proc/self/exe", b, sizeof b - 1);
  if (n <= 0) return "";
  std::string p(b, size_t(n));
  return p.substr(0, p.rfind('/'));
}

bool readable(const std::string& p) { return access(p.c_str(), R_OK) == 0; }

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A tiny reader for the script's flat answer: {"numpy_version": "...",
// "times": {"key": seconds, ...}, "min_times": {...}}.
std::map<std::string, double> parse_times(const std::string& text, const std::string& field) {
  std::map<std::string, double> r;
  size_t p = text.find("\"" + field + "\"");
  if (p == std::string::npos) return r;
  p = text.find('{', p);
  const size_t end = text.find('}', p);
  while (p != std::string::npos && p < end) {
    const size_t k0 = text.find('"', p);
    if (k0 == std::string::npos || k0 > end) break;
    const size_t k1 = text.find('"', k0 + 1);
    const size_t colon = text.find(':', k1);
    char* e = nullptr;
    const double v = std::strtod(text.c_str() + colon + 1, &e);
    if (e != text.c_str() + colon + 1) r[text.substr(k0 + 1, k1 - k0 - 1)] = v;
    p = size_t(e - text.c_str());
  }
  return r;
}

std::string parse_string(const std::string& text, const std::string& field) {
  size_t p = text.find("\"" + field + "\"");
  if (p == std::string::npos) return "";
  p = text.find('"', text.find(':', p));
  const size_t e = text.find('"', p + 1);
  return p == std::string::npos || e == std::string::npos ? "" : text.substr(p + 1, e - p - 1);
}

}  // namespace

// ---------------------------------------------------------------------------
// oneDNN (--compare)
// ---------------------------------------------------------------------------

#ifdef CT_BENCH_DNNL
// The faster oneDNN pipeline for the row's op, or a note why there is none.
Baseline onednn_baseline(const std::string& op, CTDataType dt, bool quick, double target) {
  Baseline best;
  dnnl::memory::data_type t;
  if (same(dt, kF32)) t = dnnl::memory::data_type::f32;
  else if (same(dt, kF16)) t = dnnl::memory::data_type::f16;
  else if (dt.code == CT_BFLOAT) t = dnnl::memory::data_type::bf16;
  else {
    best.note = "no oneDNN type for " + dtype_name(dt);
    return best;
  }
  for (bool any_io : {false, true}) {
    if (op == "matmul" && any_io) break;
    try {
      DnnlPipe p = dnnl_pipe(op, t, quick, any_io);
      dnnl::stream s(dnnl_engine());
      Timing r = time_calls(
          [&] {
            for (auto& st : p.steps) st.first.execute(s, st.second);
            s.wait();
            return CT_OK;
          },
          CTDevice{CT_CPU, 0}, target);
      if (r.median < best.time_s || !(best.time_s > 0)) {
        best.time_s = r.median;
        best.min_s = r.min;
        best.note = std::string(op == "matmul" ? "row-major" : any_io ? "any layout, reorders per call"
                                                                      : "NCHW, weights reordered per call") +
                    "; " + p.impl;
      }
    } catch (const dnnl::error& e) {
      if (!(best.time_s > 0)) best.note = std::string("oneDNN: ") + e.what();
    }
  }
  return best;
}
#endif

// ---------------------------------------------------------------------------
// Helper scripts
// ---------------------------------------------------------------------------

// The script next to an installed tool (<bindir>/../share/ctensor), in the
// install's data dir, or in the source tree's bench/ (a build tree's tool).
std::string find_script(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* d = std::getenv("CT_BENCH_SCRIPTS"); d && *d) dirs.push_back(d);
  const std::string exe = exe_dir();
#ifdef CT_BIN_TO_DATADIR  // e.g. "../share/ctensor" from file(RELATIVE_PATH ...) in CMake
  if (!exe.empty()) dirs.push_back(exe + "/" CT_BIN_TO_DATADIR);
#endif
  if (!exe.empty()) dirs.insert(dirs.end(), {exe + "/../share/ctensor", exe});
#ifdef CT_INSTALL_DATADIR
  dirs.push_back(CT_INSTALL_DATADIR);
#endif
#ifdef CT_SOURCE_DIR
  dirs.push_back(std::string(CT_SOURCE_DIR) + "/bench");
#endif
  if (!exe.empty()) dirs.push_back(exe + "/../../bench");  // build/tools/ctensor inside the source tree
  for (const std::string& d : dirs)
    if (readable(d + "/" + name)) return d + "/" + name;
  return "";
}

std::string python() {
  const char* p = std::getenv("CT_PYTHON");
  return p && *p ? p : "python3";
}

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

// The exit status of a shell command (127: not found).
int run_shell(const std::string& cmd) {
  std::fflush(stdout);
  std::fflush(stderr);
  const int st = std::system(cmd.c_str());
  if (st == -1) return 127;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

std::string temp_file(const char* suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string t = std::string(dir && *dir ? dir : "/tmp") + "/ctensor-bench-XXXXXX" + suffix;
  std::vector<char> b(t.begin(), t.end());
  b.push_back(0);
  const int fd = mkstemps(b.data(), int(std::strlen(suffix)));
  if (fd < 0) return "";
  close(fd);
  return b.data();
}

// ---------------------------------------------------------------------------
// NumPy and PyTorch (--compare), through bench_compare.py
// ---------------------------------------------------------------------------

// The JSON case bench_compare.py builds the row's call from.
std::string script_case(const Row& r, size_t key, double target) {
  std::ostringstream q;
  int64_t numel = 1;
  for (int64_t e : r.np_shape) numel *= e;
  const bool nn = r.category == "nn";
  q << "{\"key\": \"" << key << "\", \"op\": \"" << json_escape(r.op) << "\", \"kind\": \""
    << (nn ? "nn" : kind_name(r.kind)) << "\", \"dtype\": \"" << r.dtype << "\", \"out_dtype\": \""
    << r.out_dtype << "\", \"shape\": [" << dims(r.np_shape, ", ") << "], \"n\": " << numel << ", \"params\": [";
  for (size_t k = 0; k < r.params.size(); ++k) q << (k ? ", " : "") << json_num(r.params[k]);
  q << "], \"axis\": " << (r.kind == CT_KIND_ALONG_AXIS && !nn ? "-1" : "null");
  if (nn) {
    q << ", \"inputs\": [";
    for (size_t k = 0; k < r.nn_inputs.size(); ++k) q << (k ? ", " : "") << "[" << dims(r.nn_inputs[k], ", ") << "]";
    q << "], \"desc\": {";
    bool first = true;
    for (const auto& [name, v] : r.nn_desc) {
      q << (first ? "" : ", ") << "\"" << name << "\": " << v;
      first = false;
    }
    q << "}";
  }
  q << ", \"target_s\": " << json_num(target) << "}";
  return q.str();
}

// Fills rows[i].baselines[name] from the script's times under `field`.
void take_times(std::vector<Row>& rows, const std::string& text, const std::string& field,
                const std::string& min_field, const std::string& name, const std::string& note) {
  const auto med = parse_times(text, field), mins = parse_times(text, min_field);
  for (const auto& [key, t] : med) {
    const size_t i = std::strtoull(key.c_str(), nullptr, 10);
    if (i >= rows.size() || !(t > 0)) continue;
    Baseline b;
    b.time_s = t;
    b.min_s = mins.count(key) ? mins.at(key) : kNaN;
    b.note = note;
    rows[i].baselines[name] = b;
  }
}

// The requested rows a baseline has no time for: "op, op dtype, ...".
std::string missing(const std::vector<Row>& rows, const std::vector<size_t>& asked, const std::string& text,
                    const std::string& field) {
  const auto med = parse_times(text, field);
  std::string none;
  for (size_t i : asked)
    if (!med.count(std::to_string(i)))
      none += (none.empty() ? "" : ", ") + rows[i].op + (rows[i].dtype == "float32" ? "" : " " + rows[i].dtype);
  return none;
}

// NumPy baselines for the ok category 1/2 rows and PyTorch's for every ok
// row, in one run of the script.
void script_baselines(std::vector<Row>& rows, double target, int threads) {
  std::ostringstream req;
  req << "{\"threads\": " << threads << ", \"cases\": [";
  std::vector<size_t> np_rows, all_rows;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const bool nn = r.category == "nn";
    if (!r.ok() || (nn ? r.nn_inputs.empty() : r.np_shape.empty())) continue;
    req << (all_rows.empty() ? "" : ",\n ") << script_case(r, i, target);
    all_rows.push_back(i);
    if (!nn) np_rows.push_back(i);
  }
  req << "]}\n";
  if (all_rows.empty()) return;
  auto skip = [](const std::string& why) { std::printf("NumPy and PyTorch baselines skipped: %s\n", why.c_str()); };
  const std::string script = find_script("bench_compare.py");
  if (script.empty()) {
    skip("bench_compare.py not found (looked next to the tool, in ../share/ctensor and the source tree's bench/; "
         "set CT_BENCH_SCRIPTS to its folder)");
    return;
  }
  const std::string in = temp_file(".json"), out = temp_file(".json");
  if (in.empty() || out.empty() || !write_file(in, req.str())) {
    skip("cannot write a temporary file");
    return;
  }
  std::fprintf(stderr, "ctensor: timing NumPy and PyTorch baselines of %zu rows with %s ...\n", all_rows.size(),
               python().c_str());
  const int rc = run_shell(shell_quote(python()) + " " + shell_quote(script) + " < " + shell_quote(in) + " > " +
                           shell_quote(out));
  const std::string text = read_text(out);
  std::remove(in.c_str());
  std::remove(out.c_str());
  if (rc == 127) {
    skip(python() + " not found (set CT_PYTHON to a Python with NumPy)");
    return;
  }
  if (rc == 3) {
    skip("NumPy is not installed for " + python() + " (pip install numpy, or set CT_PYTHON)");
    return;
  }
  if (rc != 0) {
    skip(python() + " " + script + " failed (exit status " + std::to_string(rc) + ")");
    return;
  }
  std::string none = missing(rows, np_rows, text, "times");
  if (!none.empty()) std::printf("NumPy has no equivalent of: %s\n", none.c_str());
  take_times(rows, text, "times", "min_times", "numpy", "NumPy " + parse_string(text, "numpy_version"));
  const std::string tv = parse_string(text, "torch_version");
  if (tv.empty()) {
    std::printf("PyTorch baselines skipped: torch %s\n", parse_string(text, "torch_note").c_str());
    return;
  }
  none = missing(rows, all_rows, text, "torch_times");
  if (!none.empty()) std::printf("PyTorch (%s) has no equivalent of: %s\n", tv.c_str(), none.c_str());
  take_times(rows, text, "torch_times", "torch_min_times", "pytorch",
             "PyTorch " + tv + " CPU, " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s"));
}

}  // namespace ctool
