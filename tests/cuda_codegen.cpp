// cuda_codegen.cpp — every CUDA kernel program the CUDA module can generate,
// compiled by NVRTC as the module compiles it: needs no GPU and no driver,
// so CI proves on every run that the generator's CUDA dialect (src/gpu)
// compiles for every op, kind and dtype signature the rows and the registry
// give, and for the NN ops' programs shared with OpenCL (pooling and norms,
// src/gpu/nn_kernels.cc), whose images must hold every kernel the modules
// launch. Usage: ct_cuda_codegen [arch ...] (default: sm_90, the H100/H200's,
// and sm_80). Exit 0 when every program compiled.
#include <ctensor/plugin.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cuda/runtime.h"
#include "gpu/nn_kernels.h"

namespace {

struct Sig {
  int family;  // CT_KIND_UNARY (maps with and without parameters), BINARY, TERNARY, CAST; REDUCE, ALONG_AXIS
  std::vector<int32_t> in;
  int32_t out;
  bool operator<(const Sig& o) const { return std::tie(family, in, out) < std::tie(o.family, o.in, o.out); }
};

}  // namespace

int main(int argc, char** argv) {
  using namespace ctcu;
  ctgpu::g_host = ct_plugin_host();
  std::vector<std::string> archs;
  for (int i = 1; i < argc; ++i) archs.push_back(argv[i]);
  if (archs.empty()) archs = {"sm_90", "sm_80"};
  Device target;  // what the module's devices are, but for the arch
  target.dialect = ctgpu::Dialect::kCuda;
  target.fp64 = true;
  target.chunk = 1;

  std::set<Sig> sigs;
  const int32_t ndt = CT_DT_FLOAT8_E5M2FNUZ + 1;
  for (int32_t dt = 0; dt < ndt; ++dt) {
    if (!ctgpu::type_info(&target, dt).ok) continue;
    for (int32_t to = 0; to < ndt; ++to)
      if (ctgpu::type_info(&target, to).ok) sigs.insert({CT_KIND_CAST, {dt}, to});
    for (int32_t op = 0; op < CT_OP_END_; ++op) {
      const CTOpInfo info = ctgpu::op_info(op);
      if (!info.name || !((info.dtype_mask >> dt) & 1u)) continue;
      CTSupportQuery q{sizeof(CTSupportQuery), op, "ct_cuda_codegen", info.kind, dt, -1, 0};
      if (info.kind == CT_KIND_NN || ctgpu::supports(&target, &q, "cuda", nullptr) != CT_OK) continue;
      const int32_t out = ct_output_dtype_index(info.output_dtype, dt);
      switch (info.kind) {
        case CT_KIND_UNARY:
        case CT_KIND_UNARY_PARAM: sigs.insert({CT_KIND_UNARY, {dt}, out}); break;
        case CT_KIND_BINARY: sigs.insert({CT_KIND_BINARY, {dt, dt}, out}); break;
        case CT_KIND_TERNARY: sigs.insert({CT_KIND_TERNARY, {op == CT_OP_WHERE ? (int32_t)CT_DT_BOOL : dt, dt, dt}, out}); break;
        case CT_KIND_REDUCE: sigs.insert({CT_KIND_REDUCE, {dt}, out}); break;
        case CT_KIND_ALONG_AXIS: sigs.insert({CT_KIND_ALONG_AXIS, {dt}, out}); break;
        case CT_KIND_INDEX:  // one program per data and index dtype holds the kind's three kernels
          sigs.insert({CT_KIND_INDEX, {dt}, CT_DT_INT64});
          sigs.insert({CT_KIND_INDEX, {dt}, CT_DT_INT32});
          break;
        default: break;
      }
    }
  }
  struct Job {
    std::string label, source, arch;
    std::vector<std::string> kernels;  // names the image must hold (NN programs; the others' are checked by use)
  };
  std::vector<Job> jobs;
  for (const std::string& arch : archs)
    for (const Sig& s : sigs) {
      Job j;
      j.arch = arch;
      if (s.family == CT_KIND_REDUCE) j.source = ctgpu::reduce_source(&target, s.in[0], s.out, &j.label);
      else if (s.family == CT_KIND_ALONG_AXIS) j.source = ctgpu::along_source(&target, s.in[0], s.out, &j.label);
      else if (s.family == CT_KIND_INDEX) j.source = ctgpu::index_source(&target, s.in[0], s.out, &j.label);
      else j.source = ctgpu::elementwise_source(&target, s.family, s.in.data(), (int)s.in.size(), s.out, &j.label);
      jobs.push_back(j);
      if (s.family == CT_KIND_UNARY || s.family == CT_KIND_BINARY || s.family == CT_KIND_TERNARY) {
        j.source = ctgpu::elementwise_source(&target, s.family, s.in.data(), (int)s.in.size(), s.out, &j.label, true);
        j.label += " (special functions)";
        jobs.push_back(j);
      }
    }
  // The NN ops' programs (the OpenCL module's kernels, nn_kernels.h), and
  // the kernels nn_geometry.cc's pool_call, norm_call and attention_call name.
  const int32_t nn_dtypes[] = {CT_DT_FLOAT16, CT_DT_BFLOAT16, CT_DT_FLOAT32};
  const size_t nn_programs = 3 * (sizeof nn_dtypes / sizeof nn_dtypes[0]);
  for (const std::string& arch : archs)
    for (int32_t dt : nn_dtypes) {
      Job p{"", "", arch, {"pool_fwd", "pool_bwd", "pool_ind_check"}};
      p.source = ctgpu::nn_program(&target, dt, ctgpu::pool_kernels(), "pool2d", &p.label);
      Job n{"", "", arch, {"bn_stats", "bn_apply", "bn_bwd_stats", "bn_bwd_dx", "ln_fwd", "ln_bwd_dx", "ln_bwd_params"}};
      n.source = ctgpu::nn_program(&target, dt, ctgpu::norm_kernels(), "norms", &n.label);
      Job a{"", "", arch, {"attn_fwd"}};
      a.source = ctgpu::nn_program(&target, dt, ctgpu::attention_kernels(), "attention", &a.label);
      jobs.push_back(p);
      jobs.push_back(n);
      jobs.push_back(a);
    }
  std::atomic<size_t> next{0};
  std::atomic<int> failed{0};
  std::mutex out_mu;
  auto work = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      std::vector<unsigned char> image;
      if (compile("ct_cuda_codegen", jobs[i].source, jobs[i].label, jobs[i].arch, &image) != CT_OK || image.empty()) {
        ++failed;
        std::lock_guard<std::mutex> lock(out_mu);
        std::fprintf(stderr, "FAILED %s for %s: %s\n", jobs[i].label.c_str(), jobs[i].arch.c_str(), ct_last_error());
        continue;
      }
      for (const std::string& k : jobs[i].kernels) {  // the symbol's name, NUL-terminated, in the image
        const std::string sym = k + '\0';
        if (std::search(image.begin(), image.end(), sym.begin(), sym.end()) != image.end()) continue;
        ++failed;
        std::lock_guard<std::mutex> lock(out_mu);
        std::fprintf(stderr, "FAILED %s for %s: no kernel %s in the image\n", jobs[i].label.c_str(),
                     jobs[i].arch.c_str(), k.c_str());
      }
    }
  };
  const unsigned nt = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < nt; ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  std::printf("ct_cuda_codegen: %zu programs (%zu signatures and %zu NN programs x %zu architectures), %d failed\n",
              jobs.size(), sigs.size(), nn_programs, archs.size(), failed.load());
  return failed ? 1 : 0;
}
