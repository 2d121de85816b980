// `ctensor bench --compare`: the baselines each row is compared with, and
// running the helper scripts. oneDNN is called directly for matmul and conv2d
// on the same shapes as ctensor's cases (the faster of its pipelines); NumPy
// and PyTorch through bench/bench_compare.py --serve (python3, or CT_PYTHON),
// one process for the run that times each row's case when the tool asks, so
// that the baselines run beside the row. ratio = baseline time / ctensor
// time (> 1: ctensor is faster).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// A tiny reader for the script's one-line answers: {"key": "3", "numpy_s":
// 0.01, "numpy_skip": "why", ...}.
double parse_number(const std::string& text, const std::string& field) {
  const size_t p = text.find("\"" + field + "\"");
  if (p == std::string::npos) return kNaN;
  const size_t colon = text.find(':', p);
  char* e = nullptr;
  const double v = std::strtod(text.c_str() + colon + 1, &e);
  return e == text.c_str() + colon + 1 ? kNaN : v;
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
  q << "], \"axis\": " << (r.kind == CT_KIND_ALONG_AXIS && !nn ? "-1" : "null") << ", \"domain\": \""
    << r.domain << "\"";
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
  q << ", \"device\": \"" << json_escape(r.device) << "\", \"target_s\": " << json_num(target) << "}";
  return q.str();
}

// ---------------------------------------------------------------------------
// ScriptBaselines: bench_compare.py --serve, one row at a time
// ---------------------------------------------------------------------------

ScriptBaselines::ScriptBaselines(int threads) {
  const std::string script = find_script("bench_compare.py");
  if (script.empty()) {
    note_ = "skipped: bench_compare.py not found (looked next to the tool, in ../share/ctensor and the source tree's bench/; "
            "set CT_BENCH_SCRIPTS to its folder)";
    return;
  }
  int to[2], from[2];
  if (pipe(to) != 0) {
    note_ = "skipped: cannot make a pipe";
    return;
  }
  if (pipe(from) != 0) {
    close(to[0]);
    close(to[1]);
    note_ = "skipped: cannot make a pipe";
    return;
  }
  std::signal(SIGPIPE, SIG_IGN);  // a script that dies is reported, not fatal to the tool
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to[0], 0);
  posix_spawn_file_actions_adddup2(&fa, from[1], 1);
  for (int fd : {to[0], to[1], from[0], from[1]}) posix_spawn_file_actions_addclose(&fa, fd);
  const std::string py = python();
  std::vector<char*> argv{const_cast<char*>(py.c_str()), const_cast<char*>(script.c_str()),
                          const_cast<char*>("--serve"), nullptr};
  std::fflush(stdout);
  std::fflush(stderr);
  const int err = posix_spawnp(&pid_, py.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(to[0]);
  close(from[1]);
  if (err != 0) {
    close(to[1]);
    close(from[0]);
    pid_ = -1;
    note_ = "skipped: " + py + " not found (set CT_PYTHON to a Python with NumPy)";
    return;
  }
  to_ = fdopen(to[1], "w");
  from_ = fdopen(from[0], "r");
  std::fprintf(stderr, "ctensor: timing NumPy and PyTorch beside each row with %s %s\n", py.c_str(), script.c_str());
  std::fprintf(to_, "{\"threads\": %d}\n", threads);
  std::fflush(to_);
  const std::string hello = read_line();
  if (hello.empty()) {
    const int rc = finish();
    note_ = rc == 3 ? "skipped: NumPy is not installed for " + py + " (pip install numpy, or set CT_PYTHON)"
                    : "skipped: " + py + " " + script + " --serve failed (exit status " + std::to_string(rc) + ")";
    return;
  }
  numpy_note_ = "NumPy " + parse_string(hello, "numpy_version");
  const std::string tv = parse_string(hello, "torch_version");
  torch_version_ = tv;
  if (!tv.empty()) torch_note_ = "PyTorch " + tv + " CPU, " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s");
  else torch_skip_ = "torch " + parse_string(hello, "torch_note");
}

ScriptBaselines::~ScriptBaselines() { finish(); }

bool ScriptBaselines::ok() const { return from_ != nullptr; }

std::string ScriptBaselines::read_line() {
  std::string line;
  for (int ch; (ch = std::fgetc(from_)) != EOF && ch != '\n';) line += char(ch);
  return line;
}

int ScriptBaselines::finish() {
  if (to_) std::fclose(to_);  // end of input: the script exits
  if (from_) std::fclose(from_);
  to_ = from_ = nullptr;
  int st = 0, rc = -1;
  if (pid_ > 0 && waitpid(pid_, &st, 0) == pid_) rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  pid_ = -1;
  return rc;
}

void ScriptBaselines::time(Row& r, size_t key, double target) {
  if (!ok() || (r.category == "nn" ? r.nn_inputs.empty() : r.np_shape.empty())) return;
  std::fprintf(to_, "%s\n", script_case(r, key, target).c_str());
  std::fflush(to_);
  const std::string a = read_line();
  if (a.empty()) {
    const int rc = finish();
    note_ = "stopped at " + r.op + " " + r.dtype + " (exit status " + std::to_string(rc) + ")";
    return;
  }
  const std::string label = r.op + (r.dtype == "float32" ? "" : " " + r.dtype);
  struct Side {
    const char* field;
    const char* name;
    const std::string& note;
    std::string& none;
  };
  const bool on_cpu = r.device.rfind("cpu", 0) == 0;  // else a device PyTorch runs on (cuda:N): no NumPy
  for (Side s : {Side{"numpy", "numpy", numpy_note_, numpy_none_}, Side{"torch", "pytorch", torch_note_, torch_none_}}) {
    if (s.note.empty()) continue;
    const std::string f = s.field;
    if (!on_cpu && f == "numpy") continue;
    const double t = parse_number(a, f + "_s");
    if (!(t > 0)) {
      if ((r.category != "nn" || f != "numpy") && s.none.find(label) == std::string::npos)  // once, not per round
        s.none += (s.none.empty() ? "" : ", ") + label;
      continue;
    }
    Baseline& b = r.baselines[s.name];
    if (!(b.time_s <= t)) {  // the best round
      b.time_s = t;
      b.min_s = parse_number(a, f + "_min_s");
    }
    b.note = on_cpu ? s.note : "PyTorch on " + r.device + " (" + torch_version_ + ")";
  }
}

void ScriptBaselines::end() {
  finish();  // waited for, so that its CPU time counts as the tool's, not as other load
  if (!note_.empty()) std::printf("NumPy and PyTorch baselines: %s\n", note_.c_str());
  if (!numpy_none_.empty()) std::printf("NumPy has no equivalent of: %s\n", numpy_none_.c_str());
  if (!torch_skip_.empty()) std::printf("PyTorch baselines skipped: %s\n", torch_skip_.c_str());
  if (!torch_none_.empty()) std::printf("PyTorch (%s) has no equivalent of: %s\n", torch_note_.c_str(), torch_none_.c_str());
}

}  // namespace ctool
