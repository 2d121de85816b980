// source.h — device code generated from the op description, for both GPU
// modules (OpenCL C for src/opencl, CUDA C++ through NVRTC for src/cuda):
// one template per kind (elementwise map, cast, reduction, along-axis op),
// instantiated for a (dtypes) signature with every op of that kind whose
// output rule gives the signature's output dtype. What an op computes is one
// row of ops.cc, written once in the C both dialects share: the CUDA
// dialect's prelude gives CUDA the OpenCL C built-ins the rows and math.cc
// use (as_float, convert_*, vload_half, ...), so an op's rule is never
// written a second time for a second GPU backend.
#ifndef CTENSOR_SRC_GPU_SOURCE_H_
#define CTENSOR_SRC_GPU_SOURCE_H_

#include <ctensor/plugin.h>

#include <cstdint>
#include <string>

namespace ctgpu {

// The module's host table (set by the module's ct_plugin_init): op facts
// and dtype names for the generator.
extern const CTHost* g_host;

enum class Dialect { kOpenCL, kCuda };

// What the generated source depends on besides the signature: the
// dialect, whether the device computes in double (cl_khr_fp64; every CUDA
// device), and the elements per work-item of chunked kernels (below).
struct Target {
  Dialect dialect = Dialect::kOpenCL;
  bool fp64 = false;
  // Elements per work-item of the contiguous kernels of rows with a rare
  // path (ElemRow::rare): 1024 on a CPU device (PoCL runs a work-item's
  // loop vectorised, and tests once per chunk whether its rare path is
  // needed), 1 elsewhere (a GPU wants one element per work-item).
  int64_t chunk = 1;
};

// Element classes the expressions are written for.
enum Cls { kBool = 0, kSigned = 1, kUnsigned = 2, kFloat = 3 };

// How the module stores and computes a CTDtypeIndex; ok = false for dtypes
// it does not run (float8, or float64 on a device without cl_khr_fp64).
struct TypeInfo {
  bool ok;
  int cls;
  int bits;
  const char* storage;  // the element type in buffers ("half" for float16: vload_half/vstore_half)
  const char* compute;  // what expressions see (float for float16 and bfloat16, int for bool)
  const char* uns;      // the unsigned type of the same width (integers)
  const char* why;      // when !ok: the reason
  int f8 = -1;          // a float8 dtype's format (0 e4m3fn, 1 e5m2, 2 e4m3fnuz, 3 e5m2fnuz): stored as uchar, computed in float
};
TypeInfo type_info(const Target* d, int32_t dt);

// The rows of ops.cc.
struct ElemRow {
  int32_t op;
  const char* expr[4];  // by Cls: the value of out from x (unary), a, b (binary), a, b, c (ternary); p0, p1 the params
  // Floats only, optional: {rare, fast}. `rare` is true for the few inputs
  // (huge arguments, infinities) that need the costly general `expr`;
  // `fast` is right for every other input. The contiguous kernel then
  // takes Device::chunk elements per work-item: one vectorised loop of
  // `fast` storing where !rare, and only when a rare input was seen, a
  // second loop storing `expr` where rare. A vectorised loop cannot branch
  // per element: with the general expression alone, every element pays for
  // the rare one. rare[2], optional: the first loop's `#pragma clang loop`
  // hints (default: vectorize_width(8) interleave_count(8), the best of
  // those tried for the float64 arithmetic of trig and pow on PoCL;
  // float32-only arithmetic such as mod's runs best at vectorize_width(16)).
  const char* rare[3] = {nullptr, nullptr, nullptr};
  // With rare, optional: up to four {cond, fast} whose cond depends on the
  // parameters only (the same for every element): the chunked kernel tests
  // them once, in order, and runs a first loop of the first one's `fast`
  // that holds, instead of rare[1]. (A select inside the loop would run
  // every form: PoCL does not unswitch loops.)
  const char* uniform[4][2] = {};
};
// The input whose dtype an elementwise signature is named by (where's
// condition is input 0: its data is input 1).
inline int data_slot(int num_inputs) { return num_inputs == 3 ? 1 : 0; }
// Whether the contiguous kernel of `row` for class `cls` is chunked, and
// the work-items an elementwise call (op, kind, its inputs' dtypes) takes
// for n elements.
bool chunked(const ElemRow* row, int cls);
int64_t elementwise_items(const Target* d, int32_t op, int kind, const int32_t* in_dt, int num_inputs, bool dense,
                          int64_t n);
struct ReduceRow {
  int32_t op;
  // by class group: [0] floats, [1] integers and bool. Each is four C bodies:
  // init(St* s), acc(St* s, T x, long k), merge(St* s, const St* o), fin(const St* s, long count, AF p0) -> O
  const char* body[2][4];
  // Or (body NULL) a line reduction: one work-item per output reads its N
  // elements as often as it likes (LDR(k), k in [0, N)) and returns the
  // result as O from a C body that has p0 and the order-statistic helpers
  // (ct_rank, ct_next_above, ct_nans: source.cc). Only "_r0" exists.
  const char* line[2] = {nullptr, nullptr};
};
// Whether op is a line reduction (ReduceRow::line): its launch is "_r0" alone.
bool reduce_by_line(int32_t op);
struct AlongRow {
  int32_t op;
  const char* body[2];  // [0] floats, [1] integers and bool: the loop over one line (see source.cc)
  // Or, floats only (body NULL), a line reduction and a map: expressions of
  // AF values, from which the kernels derive (along_source):
  //   m = m_init merged with every v = (AF)LDX(j) by m_merge(a, b)
  //       (associative and commutative: any grouping gives the same m)
  //   s = the sum of s_term(v, m) over the line;  f = fin(s)
  //   out(j) = out(v, m, f)
  // "_a" folds each line in order in one work-item; "_b" (GPUs, long lines)
  // takes a work-group of kLineBlock per line: each work-item folds a
  // strided share, the shares merge in a fixed tree (deterministic), three
  // sweeps of the line in one kernel.
  const char* m_init = nullptr;
  const char* m_merge = nullptr;
  const char* s_term = nullptr;
  const char* fin = nullptr;
  const char* out = nullptr;
};
// The work-items of an "_b" kernel's work-group, and the shortest line it is used for.
constexpr int kLineBlock = 256;
constexpr int64_t kLineBlockMinLen = 128;
// Whether op's along-axis kernels include "_b".
bool has_line_block(int32_t op);
const ElemRow* elem_row(int32_t op);
const ReduceRow* reduce_row(int32_t op);
const AlongRow* along_row(int32_t op);
// The helpers the expressions call (ct_floordiv, ct_clamp, ...), per class.
const char* helpers(int cls);
// The special functions (src/math/special.inc) for a float program of compute type `compute`.
std::string special_functions(const char* compute, bool fp64);
// The transcendentals float expressions call (CT_EXP, CT_SIN, ..., math.cc):
// the library's own when the compute type is float32, else the built-ins.
std::string float_math(const Target* d, bool float32);

// Sources. `kind` is the CT_KIND_* of the call (unary and unary_param share
// one program; cast has its own). The kernels are "<op name>_c" (every
// tensor contiguous), "<op name>_s" (strided), for reductions "<name>_r0"
// (one pass), "_r1" / "_r2" (partials, then their combination; CUDA also
// "_w1": the partials of a unit-stride reduced axis by warps), for
// along-axis ops "<name>_a"; the cast's are "cast_c" / "cast_s".
// The ops of a kind split in two programs per signature: those that call the special functions
// (src/math/special.inc; special = true) and the rest, so the common maps' programs do not compile the Bessel
// functions (a PoCL compile of a float unary program went from seconds to half a minute with them).
std::string elementwise_source(const Target* d, int kind, const int32_t* in_dt, int num_inputs, int32_t out_dt,
                               std::string* label, bool special = false);
// Whether op's float row calls the special functions (its program is the special one of its signature).
bool special_op(int32_t op);
std::string reduce_source(const Target* d, int32_t x_dt, int32_t out_dt, std::string* label);
std::string along_source(const Target* d, int32_t x_dt, int32_t out_dt, std::string* label);
// The index kind's kernels "ix_gather", "ix_scatter" and (integers and the
// floats the device computes) "ix_scatter_add", for data dtype dt and index
// dtype idt (int32 or int64): see source.cc.
std::string index_source(const Target* d, int32_t dt, int32_t idt, std::string* label);
// A program of hand-written kernels in the OpenCL C the dialects share (the
// NN ops' pool_kernels() and norm_kernels(), nn_kernels.h) for data dtype dt
// (float16, bfloat16, float32): the dialect's prelude (CT_INL, AF, the CUDA
// dialect's built-ins), DS (dt's storage type), ld(p, i) (an element as
// float) and st(p, i, v) (stored, rounded to nearest even), then body;
// *label = "<what> <dtype>".
std::string nn_program(const Target* d, int32_t dt, const char* body, const char* what, std::string* label);

// The op's name from the registry ("exp"), and its row (name NULL: no such op).
std::string op_name(int32_t op);
CTOpInfo op_info(int32_t op);

// Host mirrors of the kernels' geometry structs (same layout as in source.cc).
#define CTGPU_MAXD 8
struct Geo {
  int64_t shape[CTGPU_MAXD];
  int64_t st[4][CTGPU_MAXD];  // element strides: out, in0, in1, in2
  int32_t nd;
  int32_t pad;
};
struct RGeo {
  int64_t ks[CTGPU_MAXD], kx[CTGPU_MAXD], ko[CTGPU_MAXD];  // kept dims: extent, x stride, out stride
  int64_t rs[CTGPU_MAXD], rx[CTGPU_MAXD];                // reduced dims: extent, x stride
  int64_t M, N, chunk, P;  // outputs, elements per output, per partial (contiguous), partials per output
  int32_t nk, nr;
};
struct AGeo {
  int64_t ls[CTGPU_MAXD], lx[CTGPU_MAXD], lo[CTGPU_MAXD];  // the other dims: extent, x stride, out stride
  int64_t lines, len, xs, os;                          // lines, their length, x's and out's stride along the axis
  int32_t nl, pad;
};

}  // namespace ctgpu

#endif  // CTENSOR_SRC_GPU_SOURCE_H_
