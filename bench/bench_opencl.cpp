// bench_opencl — the OpenCL module's overhead, measured against the same
// device's own limits in the same run:
//  - every float32 elementwise and binary op of the registry, and two
//    reductions, on opencl:0 against the device's own
//    copy (clEnqueueCopyBuffer) bandwidth: bytes moved / time, % of copy;
//  - ct_matmul against CLBlast's GEMM called directly on the same buffers and
//    command queue: the module's overhead, not the device's speed.
// Every ctensor call gets the benchmark's own cl_command_queue as its stream
// (the caller's queue, as a framework passes it). Prints a table; exits 0
// with a line saying so when no OpenCL device loaded.
//   bench_opencl [elements, default 64M] [reps, default 5]
#include <CL/cl.h>
#include <clblast.h>
#include <ctensor/ctensor.h>
#include <ctensor/ctensor_nn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Best wall time of reps runs of f, each finished with clFinish on q.
double best(cl_command_queue q, int reps, const std::function<bool()>& f) {
  if (!f() || clFinish(q) != CL_SUCCESS) return -1;  // warm-up (and the kernels' first compilation)
  double b = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    if (!f() || clFinish(q) != CL_SUCCESS) return -1;
    b = std::min(b, now() - t0);
  }
  return b;
}

// The best times of f and g over reps rounds of f then g: alternating, so
// that a slow spell of a shared host weighs on both alike.
bool best_pair(cl_command_queue q, int reps, const std::function<bool()>& f, const std::function<bool()>& g,
               double* tf, double* tg) {
  const auto once = [&](const std::function<bool()>& h) {
    const double t0 = now();
    return h() && clFinish(q) == CL_SUCCESS ? now() - t0 : -1.0;
  };
  *tf = *tg = 1e30;
  if (once(f) < 0 || once(g) < 0) return false;  // warm-ups
  for (int r = 0; r < reps; ++r) {
    const double a = once(f), b = once(g);
    if (a < 0 || b < 0) return false;
    *tf = std::min(*tf, a), *tg = std::min(*tg, b);
  }
  return true;
}

bool ok(CTStatus s, const char* what) {
  if (s == CT_OK) return true;
  std::fprintf(stderr, "bench_opencl: %s: %s\n", what, ct_last_error());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : (int64_t)64 << 20;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  // argv[3], optional: a comma-separated list of op names; only those rows
  // (and the copy they are measured against) run, and no matmul ("sum (all)"
  // and "max (all)" by those names).
  const std::string only = argc > 3 ? "," + std::string(argv[3]) + "," : "";
  const auto wanted = [&](const char* name) { return only.empty() || only.find("," + std::string(name) + ",") != std::string::npos; };
  CTDevice dev{CT_OPENCL, 0};
  CTDeviceInfo info{};
  info.struct_size = sizeof info;
  bool found = false;
  for (int32_t i = 0; i < ct_device_count(); ++i)
    if (ct_device_info(i, &info) == CT_OK && info.device.device_type == CT_OPENCL && info.device.device_id == 0) {
      found = true;
      break;
    }
  if (!found) {
    std::printf("bench_opencl: no OpenCL device (libctensor_opencl not loaded, or no platform): nothing to measure\n");
    return 0;
  }
  std::printf("device opencl:0: %s\n", info.name);
  // Buffers through ctensor; their context gives the benchmark's own queue.
  const size_t bytes = (size_t)n * 4;
  void *x = nullptr, *y = nullptr, *z = nullptr;
  if (!ok(ct_malloc(dev, bytes, &x), "ct_malloc") || !ok(ct_malloc(dev, bytes, &y), "ct_malloc") ||
      !ok(ct_malloc(dev, bytes, &z), "ct_malloc"))
    return 1;
  cl_context ctx = nullptr;
  cl_device_id did = nullptr;
  clGetMemObjectInfo((cl_mem)x, CL_MEM_CONTEXT, sizeof ctx, &ctx, nullptr);
  clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof did, &did, nullptr);
  cl_int e = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(ctx, did, 0, &e);
  if (e != CL_SUCCESS) return std::fprintf(stderr, "clCreateCommandQueue: %d\n", e), 1;
  int64_t shape[1] = {n};
  CTensor tx{x, dev, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 0}, ty{y, dev, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 0},
      tz{z, dev, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 0};
  {
    std::vector<float> h((size_t)n);
    for (int64_t i = 0; i < n; ++i) h[(size_t)i] = (float)((i % 1000) - 500) * 1e-3f;
    CTensor th{h.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 0};
    if (!ok(ct_copy(&th, &tx, q), "upload") || !ok(ct_copy(&th, &ty, q), "upload")) return 1;
    clFinish(q);
  }
  const std::function<bool()> device_copy = [&] {
    return clEnqueueCopyBuffer(q, (cl_mem)x, (cl_mem)z, 0, 0, bytes, 0, nullptr, nullptr) == CL_SUCCESS;
  };
  const double tc = best(q, reps, device_copy);
  const double copy_bw = 2.0 * (double)bytes / tc;
  std::printf("\n%zu float32 elements (%.0f MiB per operand), best of %d\n", (size_t)n, bytes / 1048576.0, reps);
  std::printf("the device's own copy (clEnqueueCopyBuffer): %.2f ms, %.1f GB/s\n", tc * 1e3, copy_bw / 1e9);
  std::printf("(each row's %% copy is against the copy timed alternately with it, so that a slow spell of a shared\n"
              "host weighs on both; the copy column is that copy's bandwidth)\n\n");
  std::printf("%-28s %10s %10s %9s %10s\n", "ctensor op on opencl:0", "ms", "GB/s", "% copy", "copy GB/s");
  struct Row {
    const char* name;
    double bytes;
    std::function<bool()> f;
  };
  int64_t one = 1;
  CTensor ts{z, dev, 0, {CT_FLOAT, 32, 1}, &one, nullptr, 0};
  int32_t axis0 = 0;
  const double B = (double)bytes;
  std::vector<Row> rows = {
      {"copy (ct_copy)", 2 * B, [&] { return ct_copy(&tx, &tz, q) == CT_OK; }},
      {"sum (all)", B, [&] { return ct_reduce(CT_OP_SUM, &tx, &axis0, 1, 0, nullptr, 0, &ts, q) == CT_OK; }},
      {"max (all)", B, [&] { return ct_reduce(CT_OP_MAX, &tx, &axis0, 1, 0, nullptr, 0, &ts, q) == CT_OK; }},
  };
  // Every float32 elementwise map and binary op of the registry that runs
  // on opencl:0 (the output float32 or bool, as the op's rule says); the
  // parameters of parametrised ops 1.5 (pow_scalar's exponent), 0.5, ...
  const CTDataType f32{CT_FLOAT, 32, 1};
  CTensor tzb = tz;  // z's buffer as n bools, for comparisons and predicates
  tzb.dtype = {CT_BOOL, 8, 1};
  const size_t first_op_row = rows.size();
  static double params[4] = {1.5, 0.5, 2.5, 3.5};
  for (int32_t op = 0; op < ct_op_count(); ++op) {
    CTOpInfo info{};
    info.struct_size = sizeof info;
    if (ct_op_info(op, &info) != CT_OK || ct_op_supported(op, dev, f32) != CT_OK) continue;
    const bool un = info.kind == CT_KIND_UNARY || info.kind == CT_KIND_UNARY_PARAM, bin = info.kind == CT_KIND_BINARY;
    if ((!un && !bin) || !wanted(info.name)) continue;
    const int32_t odt = ct_output_dtype_index(info.output_dtype, CT_DT_FLOAT32);
    if (odt != CT_DT_FLOAT32 && odt != CT_DT_BOOL) continue;
    const double ob = odt == CT_DT_BOOL ? B / 4 : B;
    CTensor* out = odt == CT_DT_BOOL ? &tzb : &tz;
    const int np = info.num_params;
    rows.push_back({info.name, (un ? B : 2 * B) + ob, [&, op, un, np, out] {
                      if (!un) return ct_binary(op, &tx, &ty, out, q) == CT_OK;
                      return (np ? ct_unary_param(op, &tx, params, np, out, q) : ct_unary(op, &tx, out, q)) == CT_OK;
                    }});
  }
  int below = 0, maps = 0;
  std::string below_names;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (i > 0 && i < first_op_row && !wanted(r.name)) continue;
    double t = 0, tcr = 0;
    if (!best_pair(q, reps, device_copy, r.f, &tcr, &t)) {
      std::printf("%-28s failed: %s\n", r.name, ct_last_error());
      continue;
    }
    const double row_copy_bw = 2.0 * (double)bytes / tcr, pct = 100.0 * r.bytes / t / row_copy_bw;
    std::printf("%-28s %10.2f %10.1f %8.0f%% %10.1f\n", r.name, t * 1e3, r.bytes / t / 1e9, pct, row_copy_bw / 1e9);
    if (i >= first_op_row) {
      ++maps;
      if (pct < 50) ++below, below_names += std::string(below_names.empty() ? "" : ", ") + r.name;
    }
  }
  std::printf("\n%d of %d float32 elementwise and binary ops at 50%% of the device's copy bandwidth or more%s%s\n",
              maps - below, maps, below ? "; below: " : "", below_names.c_str());
  ct_free(dev, x);
  ct_free(dev, y);
  ct_free(dev, z);
  if (!only.empty()) return 0;

  std::printf("\n%-22s %12s %12s %12s %8s\n", "matmul float32", "CLBlast ms", "ctensor ms", "GFLOP/s", "ratio");
  for (int64_t m : {256, 512, 1024}) {
    const size_t mb = (size_t)(m * m) * 4;
    void *a = nullptr, *b = nullptr, *c = nullptr;
    if (!ok(ct_malloc(dev, mb, &a), "ct_malloc") || !ok(ct_malloc(dev, mb, &b), "ct_malloc") ||
        !ok(ct_malloc(dev, mb, &c), "ct_malloc"))
      return 1;
    std::vector<float> h((size_t)(m * m), 0.25f);
    clEnqueueWriteBuffer(q, (cl_mem)a, CL_TRUE, 0, mb, h.data(), 0, nullptr, nullptr);
    clEnqueueWriteBuffer(q, (cl_mem)b, CL_TRUE, 0, mb, h.data(), 0, nullptr, nullptr);
    int64_t s2[2] = {m, m};
    CTensor ta{a, dev, 2, {CT_FLOAT, 32, 1}, s2, nullptr, 0}, tb{b, dev, 2, {CT_FLOAT, 32, 1}, s2, nullptr, 0},
        tc2{c, dev, 2, {CT_FLOAT, 32, 1}, s2, nullptr, 0};
    const CTMatmulDesc md{sizeof(CTMatmulDesc), CT_ACTIVATION_NONE};
    size_t ws = 0;
    if (!ok(ct_matmul_workspace_size(&md, &ta, &tb, nullptr, &tc2, &ws), "ct_matmul_workspace_size")) return 1;
    void* w = nullptr;
    if (ws && !ok(ct_malloc(dev, ws, &w), "ct_malloc")) return 1;
    size_t temp = 0;
    clblast::GemmTempBufferSize<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo,
                                       (size_t)m, (size_t)m, (size_t)m, 0, (size_t)m, 0, (size_t)m, 0, (size_t)m, &q,
                                       temp);
    cl_mem tbuf = temp ? clCreateBuffer(ctx, CL_MEM_READ_WRITE, temp, nullptr, &e) : nullptr;
    double t_blast = 0, t_ct = 0;
    // at least 15 rounds: on this shared host one GEMM's time moves by a third between calls
    if (!best_pair(
            q, std::max(reps, 15),
            [&] {
              return clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                          clblast::Transpose::kNo, (size_t)m, (size_t)m, (size_t)m, 1.0f, (cl_mem)a, 0,
                                          (size_t)m, (cl_mem)b, 0, (size_t)m, 0.0f, (cl_mem)c, 0, (size_t)m, &q,
                                          nullptr, tbuf) == clblast::StatusCode::kSuccess;
            },
            [&] { return ct_matmul(&md, &ta, &tb, nullptr, &tc2, w, ws, q) == CT_OK; }, &t_blast, &t_ct))
      return std::fprintf(stderr, "bench_opencl: matmul %lld^3 failed: %s\n", (long long)m, ct_last_error()), 1;
    const double flops = 2.0 * (double)m * (double)m * (double)m;
    std::printf("%-22s %12.2f %12.2f %12.1f %7.3fx\n", (std::to_string(m) + "^3").c_str(), t_blast * 1e3,
                t_ct * 1e3, flops / t_ct / 1e9, t_blast / t_ct);
    if (tbuf) clReleaseMemObject(tbuf);
    if (w) ct_free(dev, w);
    ct_free(dev, a);
    ct_free(dev, b);
    ct_free(dev, c);
  }
  std::printf("(ratio: CLBlast's time / ctensor's; 1.0 = no overhead)\n");
  clReleaseCommandQueue(q);
  return 0;
}
