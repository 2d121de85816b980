// source.cc — the templates: device code for one kind and dtype signature,
// with every op of the kind whose output rule (from the registry) gives the
// signature's output dtype, each op's expression taken from ops.cc. The
// text is OpenCL C; for the CUDA dialect a prelude maps the OpenCL C it uses
// onto CUDA C++ (kCudaCompat), and the kernels differ in two lines.
#include "source.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "math/float8_formats.h"

namespace ctgpu {

const CTHost* g_host = nullptr;

CTOpInfo op_info(int32_t op) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (g_host->op_info(op, &info) != CT_OK) info.name = nullptr;
  return info;
}

namespace {

// CUDA C++ for the OpenCL C built-ins the templates, rows and math use.
// Conversions as OpenCL defines them: _sat_rtz truncates and saturates (NaN
// gives 0: PTX's cvt.rzi does both), _rte rounds to nearest even (C++'s
// integer-to-float conversion on the device), _rtz toward zero. half is
// float16's storage (bits), converted by PTX's cvt. Plain char is unsigned
// on some hosts NVRTC compiles for (aarch64): int8 is schar. atomic_xchg
// (the NN kernels' error flag, nn_kernels.cc) is atomicExch: OpenCL's
// relaxed, device-wide exchange.
const char kCudaCompat[] = R"CU(
#define CT_INL static __device__ __forceinline__
#define CT_FN static __device__
#define __kernel extern "C" __global__
#define __global
#define CT_TABLE __device__ const
#define CT_TABLE_PTR
#define get_global_id(dim) ((long)blockIdx.x * (long)blockDim.x + (long)threadIdx.x)
#define get_group_id(dim) ((long)blockIdx.x)
#define get_local_id(dim) ((long)threadIdx.x)
#define __local __shared__
#define barrier(flags) __syncthreads()
typedef unsigned char uchar;
typedef signed char schar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef unsigned short half;
#undef INFINITY
#undef NAN
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fc00000)
#define LONG_MIN (-9223372036854775807L - 1L)
#define LONG_MAX 9223372036854775807L
#define ULONG_MAX 18446744073709551615UL
template <class X> CT_INL float as_float(X x) { return __uint_as_float((uint)x); }
CT_INL uint as_uint(float x) { return __float_as_uint(x); }
template <class X> CT_INL double as_double(X x) { return __longlong_as_double((long long)x); }
CT_INL long as_long(double x) { return (long)__double_as_longlong(x); }
CT_INL ulong as_ulong(double x) { return (ulong)__double_as_longlong(x); }
CT_INL float convert_float_rtz(long x) { return __ll2float_rz(x); }
CT_INL float convert_float_rtz(ulong x) { return __ull2float_rz(x); }
CT_INL float convert_float_rtz(double x) { return __double2float_rz(x); }
template <class X> CT_INL float convert_float_rte(X x) { return (float)x; }
template <class X> CT_INL double convert_double_rte(X x) { return (double)x; }
CT_INL long convert_long(float x) { return (long)x; }
CT_INL ulong convert_ulong(float x) { return (ulong)x; }
CT_INL int convert_int(float x) { return (int)x; }
CT_INL int convert_int(double x) { return (int)x; }
CT_INL int convert_int_sat_rtz(float x) { return __float2int_rz(x); }
CT_INL int convert_int_sat_rtz(double x) { return __double2int_rz(x); }
CT_INL long convert_long_sat_rtz(float x) { return __float2ll_rz(x); }
CT_INL long convert_long_sat_rtz(double x) { return __double2ll_rz(x); }
CT_INL uint convert_uint_sat_rtz(float x) { return __float2uint_rz(x); }
CT_INL uint convert_uint_sat_rtz(double x) { return __double2uint_rz(x); }
CT_INL ulong convert_ulong_sat_rtz(float x) { return __float2ull_rz(x); }
CT_INL ulong convert_ulong_sat_rtz(double x) { return __double2ull_rz(x); }
template <class X> CT_INL schar convert_schar_sat_rtz(X x) { return (schar)max(-128, min(127, convert_int_sat_rtz(x))); }
template <class X> CT_INL short convert_short_sat_rtz(X x) { return (short)max(-32768, min(32767, convert_int_sat_rtz(x))); }
template <class X> CT_INL uchar convert_uchar_sat_rtz(X x) { return (uchar)min(255u, convert_uint_sat_rtz(x)); }
template <class X> CT_INL ushort convert_ushort_sat_rtz(X x) { return (ushort)min(65535u, convert_uint_sat_rtz(x)); }
CT_INL int clamp(int x, int lo, int hi) { return min(max(x, lo), hi); }
CT_INL int atomic_xchg(volatile int* p, int v) { return atomicExch((int*)p, v); }
CT_INL uint atomic_xchg(volatile uint* p, uint v) { return atomicExch((uint*)p, v); }
CT_INL float vload_half(int, const half* p) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(*p)); return f; }
CT_INL void vstore_half_rte(float v, int, half* p) { half h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v)); *p = h; }
)CU";

// The common part: the dialect, fp64, bfloat16 conversions, the geometry
// structs. CT_INL: every helper is inlined, whatever the compiler's cost
// model says (a PoCL device keeps a work-group loop with a call in it
// scalar).
std::string prelude(const Target* d) {
  std::string s;
  if (d->dialect == Dialect::kCuda) s = kCudaCompat;
  else s = "#define CT_INL inline __attribute__((always_inline))\n#define CT_FN static\n#define CT_TABLE __constant\n"
           "#define CT_TABLE_PTR __constant\n";
  s += "#define CT_CHUNK " + std::to_string(d->chunk) + "\n";
  if (d->fp64)
    s += std::string(d->dialect == Dialect::kOpenCL ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "") +
         "#define AF double\n"
         "CT_INL float ct_d2f_odd(double x) { float f = convert_float_rtz(x); "
         "if (!isnan(x) && (double)f != x) f = as_float(as_uint(f) | 1u); return f; }\n";
  else s += "#define AF float\n";
  s += R"CL(
CT_INL float ct_l2f_odd(long x) { float f = convert_float_rtz(x); if (convert_long(f) != x) f = as_float(as_uint(f) | 1u); return f; }
CT_INL float ct_ul2f_odd(ulong x) { float f = convert_float_rtz(x); if (convert_ulong(f) != x) f = as_float(as_uint(f) | 1u); return f; }
CT_INL float ct_bf16_load(ushort v) { return as_float((uint)v << 16); }
CT_INL ushort ct_bf16(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}
typedef struct { long shape[8]; long st[4][8]; int nd; int pad; } Geo;
typedef struct { long ks[8], kx[8], ko[8], rs[8], rx[8]; long M, N, chunk, P; int nk, nr; } RGeo;
typedef struct { long ls[8], lx[8], lo[8]; long lines, len, xs, os; int nl, pad; } AGeo;
)CL";
  return s;
}

// A float8 format's decoder ct_f8d<f>(uchar) -> float (exact) and encoder
// ct_f8e<f>(float, sat) -> uchar (to nearest even, once; an overflow, or an
// infinity the format lacks: the largest finite value with its sign when
// sat, else inf (e5m2) or NaN; fnuz formats have no -0), derived from the
// format's description (src/math/float8_formats.h) as the CPU's are.
// Selects only, so PoCL's loops stay vectorised. Guarded: emitted once per
// program whichever slots use the format.
std::string f8_codec(int f) {
  using namespace ct::math;
  const F8Spec s = kF8Specs[f];
  const unsigned maxc = f8_max_code(f), nanc = f8_nan_code(f), infc = f8_inf_code(f), mmask = (1u << s.man) - 1;
  const int emin = 1 - s.bias, keep = 23 - s.man;
  char sub_scale[48];
  std::snprintf(sub_scale, sizeof sub_scale, "%af", std::ldexp(1.0, 1 - s.bias - s.man));
  const std::string nan_code = s.kind == kF8Fnuz ? std::to_string(nanc) + "u" : "(sign | " + std::to_string(nanc) + "u)";
  const std::string over = s.kind == kF8Ieee ? "(sign | " + std::to_string(infc) + "u)" : nan_code;
  std::ostringstream o;
  o << "#ifndef CT_F8_" << f << "\n#define CT_F8_" << f << "\n";
  o << "CT_INL float ct_f8d" << f << "(uchar b) {\n"
    << "  const uint s = ((uint)b & 0x80u) << 24, mag = (uint)b & 0x7fu, e = mag >> " << s.man << ", m = mag & " << mmask
    << "u;\n  const float v = e == 0 ? as_float(s | as_uint((float)m * " << sub_scale << ")) : as_float(s | ((e + "
    << (127 - s.bias) << "u) << 23) | (m << " << keep << "));\n";
  if (s.kind == kF8Ieee)
    o << "  return mag > " << maxc << "u ? as_float(s | (mag == " << infc << "u ? 0x7f800000u : 0x7fc00000u)) : v;\n}\n";
  else if (s.kind == kF8Fn)
    o << "  return mag == 0x7fu ? as_float(s | 0x7fc00000u) : v;\n}\n";
  else
    o << "  return b == 0x80 ? NAN : v;\n}\n";
  o << "CT_INL uchar ct_f8e" << f << "(float x, int sat) {\n"
    << "  uint u = as_uint(x);\n  const uint sign = (u >> 24) & 0x80u;\n  u &= 0x7fffffffu;\n"
    << "  const int e = (int)(u >> 23) - 127;\n"
    << "  /* below the format's smallest normal: units of its smallest subnormal */\n"
    << "  const uint m = (u & 0x7fffffu) | (e > -127 ? 0x800000u : 0u);\n"
    << "  const int sh = clamp(" << keep << " + " << emin << " - e, 1, 25);\n"
    << "  const uint sub = (m + (1u << (sh - 1)) - 1u + ((m >> sh) & 1u)) >> sh;\n"
    << "  /* re-biased; a mantissa carry moves into the exponent */\n"
    << "  const uint nb = u - " << ((unsigned)(127 - s.bias) << 23) << "u;\n"
    << "  const uint nor = (nb + " << (1u << (keep - 1)) << "u - 1u + ((nb >> " << keep << ") & 1u)) >> " << keep << ";\n"
    << "  const uint mag = u == 0x7f800000u ? " << (maxc + 1) << "u : e < " << emin << " ? sub : nor;\n"
    << "  const uint r = mag > " << maxc << "u ? (sat ? (sign | " << maxc << "u) : " << over << ") : "
    << (s.kind == kF8Fnuz ? "mag == 0u ? 0u : " : "") << "(sign | mag);\n"
    << "  return (uchar)(u > 0x7f800000u ? " << nan_code << " : r);\n}\n#endif\n";
  return o.str();
}

// ldK(p, i) -> the compute type, for input slot K; st(p, i, v) for out.
std::string load_fn(const TypeInfo& t, const std::string& name, const std::string& stype) {
  std::string body;
  if (t.f8 >= 0) return f8_codec(t.f8) + "CT_INL float " + name + "(__global const uchar* p, long i) { return ct_f8d" +
                        std::to_string(t.f8) + "(p[i]); }\n";
  if (std::strcmp(t.storage, "half") == 0) body = "return vload_half(0, p + i);";
  else if (t.cls == kFloat && t.bits == 16) body = "return ct_bf16_load(p[i]);";
  else if (t.cls == kBool) body = "return p[i] != 0;";
  else body = "return p[i];";
  return "CT_INL " + std::string(t.compute) + " " + name + "(__global const " + stype + "* p, long i) { " + body + " }\n";
}

std::string store_fn(const TypeInfo& t, const std::string& stype) {
  std::string body;
  if (t.f8 >= 0) {  // st, and st_sat for ct_cast_ex's CT_CAST_SATURATE
    const std::string f = std::to_string(t.f8);
    return f8_codec(t.f8) + "CT_INL void st(__global uchar* p, long i, float v) { p[i] = ct_f8e" + f +
           "(v, 0); }\nCT_INL void st_sat(__global uchar* p, long i, float v) { p[i] = ct_f8e" + f + "(v, 1); }\n";
  }
  if (std::strcmp(t.storage, "half") == 0) body = "vstore_half_rte(v, 0, p + i);";
  else if (t.cls == kFloat && t.bits == 16) body = "p[i] = ct_bf16(v);";
  else if (t.cls == kBool) body = "p[i] = (uchar)(v != 0);";
  else body = "p[i] = (" + stype + ")v;";
  return "CT_INL void st(__global " + stype + "* p, long i, " + t.compute + " v) { " + body + " }\n";
}

// The macros the expressions use, for data type t and output type o.
std::string type_macros(const TypeInfo& t, const TypeInfo& o) {
  std::ostringstream s;
  s << "#define T " << t.compute << "\n#define O " << o.compute << "\n#define OS " << o.storage << "\n";
  s << "#define BITS " << t.bits << "\n";
  if (t.cls == kFloat) {
    s << "#define UT " << t.compute << "\n#define PT " << t.compute << "\n";
    s << "#define CT_ILIM " << (std::strcmp(t.compute, "double") == 0 ? "4503599627370496.0" : "8388608.0f") << "\n";
    if (std::strcmp(t.compute, "float") == 0) s << "#define CT_TF32 1\n";
  } else {
    s << "#define UT " << t.uns << "\n#define PT " << (t.cls == kSigned ? "long" : "ulong") << "\n";
  }
  if (t.cls == kSigned) s << "#define CT_I long\n#define CT_IMIN LONG_MIN\n#define CT_IMAX LONG_MAX\n";
  else s << "#define CT_I ulong\n#define CT_IMIN 0\n#define CT_IMAX ULONG_MAX\n";
  return s.str();
}

std::string dt_name(int32_t dt) { return g_host->dtype_name(dt); }

// The conversion of a cast from t to o (of the compute types).
// To float16 and bfloat16 (stored from float), integers and float64 go to
// float rounded to odd first, so the float -> 16-bit rounding is the only
// one (round to odd keeps the sticky bit: float has 13 bits more than half).
std::string cast_expr(const TypeInfo& t, const TypeInfo& o) {
  if (o.cls == kBool) return "((int)(x != 0))";
  if (o.cls == kFloat && o.bits <= 16) {  // float16, bfloat16, float8
    if (t.cls == kSigned || t.cls == kBool) return "ct_l2f_odd((long)x)";
    if (t.cls == kUnsigned) return "ct_ul2f_odd((ulong)x)";
    if (t.bits == 64) return "ct_d2f_odd(x)";
  }
  if (t.cls == kFloat && o.cls != kFloat) return std::string("convert_") + o.storage + "_sat_rtz(x)";
  if (t.cls != kFloat && o.cls == kFloat) return std::string("convert_") + o.compute + "_rte(x)";
  return "((O)(x))";
}

const char* kInNames[3][3] = {{"x", "", ""}, {"a", "b", ""}, {"a", "b", "c"}};

// The contiguous kernel of a row with a rare path (ElemRow::rare): CT_CHUNK
// elements per work-item, `fast` stored where !rare in one vectorised loop,
// then `expr` where rare, only if there was one. The first loop skips the
// rare elements' stores and notes where they are: an output that is one of
// the inputs (in place) then still holds the rare elements' inputs, and
// the others' outputs, which the second loop must not take for inputs.
void emit_chunked(std::ostringstream& s, const std::string& expr, const ElemRow* row, int n, const TypeInfo* in) {
  const char* const* rare = row->rare;
  s << "  const long c0 = get_global_id(0) * CT_CHUNK, c1 = min(c0 + (long)CT_CHUNK, n);"
       "  /* launch() runs ceil(n / CT_CHUNK) work-items */\n";
  s << "  int any = 0;\n  uchar rare_at[CT_CHUNK];\n";
  const auto loads = [&](const char* indent) {
    for (int k = 0; k < n; ++k)
      s << indent << "const " << in[k].compute << " " << kInNames[n - 1][k] << " = ld" << k << "(q" << k << ", i);\n";
  };
  const auto first_loop = [&](const char* fast) {
    s << "#if CT_CHUNK > 1\n#pragma clang loop " << (rare[2] ? rare[2] : "vectorize_width(8) interleave_count(8)")
      << "\n#endif\n";
    s << "  for (long i = c0; i < c1; ++i) {\n";
    loads("    ");
    s << "    const int rare = " << rare[0] << ";\n    any |= rare;\n    rare_at[i - c0] = (uchar)rare;\n"
      << "    const O v = (O)(" << fast << ");\n    if (!rare) st(po, i, v);\n  }\n";
  };
  int forms = 0;  // chosen once, outside the loop: a select inside it would run every form
  for (; forms < 4 && row->uniform[forms][0]; ++forms) {
    s << (forms ? "  } else if (" : "  if (") << row->uniform[forms][0] << ") {\n";
    first_loop(row->uniform[forms][1]);
  }
  if (forms) s << "  } else {\n";
  first_loop(rare[1]);
  if (forms) s << "  }\n";
  s << "  if (any)\n    for (long i = c0; i < c1; ++i) {\n      if (!rare_at[i - c0]) continue;\n";
  loads("      ");
  s << "      st(po, i, (O)(" << expr << "));\n    }\n}\n";
}

// One elementwise kernel pair (contiguous and strided) computing `expr`
// (`chunk_row`: the row, when its contiguous kernel is chunked, else null;
// `store`: the store function).
void emit_elementwise(std::ostringstream& s, const std::string& name, const std::string& expr, int n,
                      const TypeInfo* in, bool params, bool cuda, const ElemRow* chunk_row = nullptr,
                      const char* store = "st") {
  for (int strided = 0; strided < 2; ++strided) {
    s << "__kernel void " << name << (strided ? "_s" : "_c") << "(__global OS* out, ulong oo";
    for (int k = 0; k < n; ++k) s << ", __global const S" << k << "* in" << k << ", ulong o" << k;
    if (params) s << ", PT p0, PT p1";
    s << ", long n" << (strided ? ", Geo g" : "") << ") {\n";
    s << "  __global OS* po = (__global OS*)((__global char*)out + oo);\n";
    for (int k = 0; k < n; ++k)
      s << "  __global const S" << k << "* q" << k << " = (__global const S" << k << "*)((__global const char*)in" << k
        << " + o" << k << ");\n";
    if (!strided && chunk_row) {
      emit_chunked(s, expr, chunk_row, n, in);
      continue;
    }
    s << "  long i = get_global_id(0);  /* launch() runs exactly n work-items */\n";
    if (cuda) s << "  if (i >= n) return;  /* CUDA: whole blocks */\n";
    if (strided) {
      // i's coordinates, dim by dim from the last; on CUDA in 32-bit
      // arithmetic when n fits (every extent then does): a 64-bit division
      // is a long software sequence on a GPU, a 32-bit one a few
      // instructions (OpenCL keeps its text: PoCL's programs are cached by it)
      const auto walk = [&](const char* ut, const char* indent) {
        s << indent << ut << " r = (" << ut << ")i;\n" << indent << "for (int d = g.nd - 1; d >= 0; --d) {\n" << indent
          << "  const " << ut << " e = (" << ut << ")g.shape[d], q = r / e, c = r - q * e;\n" << indent
          << "  r = q;\n" << indent << "  io += (long)c * g.st[0][d];\n";
        for (int k = 0; k < n; ++k) s << indent << "  i" << k << " += (long)c * g.st[" << (k + 1) << "][d];\n";
        s << indent << "}\n";
      };
      if (cuda) {
        s << "  long io = 0";
        for (int k = 0; k < n; ++k) s << ", i" << k << " = 0";
        s << ";\n  if (n <= 2147483647L) {\n";
        walk("uint", "    ");
        s << "  } else {\n";
        walk("long", "    ");
        s << "  }\n";
      } else {
        s << "  long r = i, io = 0";
        for (int k = 0; k < n; ++k) s << ", i" << k << " = 0";
        s << ";\n  for (int d = g.nd - 1; d >= 0; --d) {\n    long e = g.shape[d], q = r / e, c = r - q * e;\n    r = q;\n"
          << "    io += c * g.st[0][d];\n";
        for (int k = 0; k < n; ++k) s << "    i" << k << " += c * g.st[" << (k + 1) << "][d];\n";
        s << "  }\n";
      }
    }
    for (int k = 0; k < n; ++k)
      s << "  " << in[k].compute << " " << kInNames[n - 1][k] << " = ld" << k << "(q" << k << ", "
        << (strided ? "i" + std::to_string(k) : std::string("i")) << ");\n";
    s << "  " << store << "(po, " << (strided ? "io" : "i") << ", (O)(" << expr << "));\n}\n";
  }
}

}  // namespace

bool chunked(const ElemRow* row, int cls) { return row && cls == kFloat && row->rare[0]; }

int64_t elementwise_items(const Target* d, int32_t op, int kind, const int32_t* in_dt, int num_inputs, bool dense,
                          int64_t n) {
  if (!dense || kind == CT_KIND_CAST) return n;
  return chunked(elem_row(op), type_info(d, in_dt[data_slot(num_inputs)]).cls) ? (n + d->chunk - 1) / d->chunk : n;
}

std::string op_name(int32_t op) {
  const CTOpInfo info = op_info(op);
  return info.name ? info.name : "?";
}

TypeInfo type_info(const Target* d, int32_t dt) {
  switch (dt) {
    case CT_DT_BOOL: return {true, kBool, 8, "uchar", "int", "uchar", nullptr};
    case CT_DT_INT8: {
      const char* c = d->dialect == Dialect::kCuda ? "schar" : "char";
      return {true, kSigned, 8, c, c, "uchar", nullptr};
    }
    case CT_DT_INT16: return {true, kSigned, 16, "short", "short", "ushort", nullptr};
    case CT_DT_INT32: return {true, kSigned, 32, "int", "int", "uint", nullptr};
    case CT_DT_INT64: return {true, kSigned, 64, "long", "long", "ulong", nullptr};
    case CT_DT_UINT8: return {true, kUnsigned, 8, "uchar", "uchar", "uchar", nullptr};
    case CT_DT_UINT16: return {true, kUnsigned, 16, "ushort", "ushort", "ushort", nullptr};
    case CT_DT_UINT32: return {true, kUnsigned, 32, "uint", "uint", "uint", nullptr};
    case CT_DT_UINT64: return {true, kUnsigned, 64, "ulong", "ulong", "ulong", nullptr};
    case CT_DT_FLOAT16: return {true, kFloat, 16, "half", "float", "", nullptr};
    case CT_DT_BFLOAT16: return {true, kFloat, 16, "ushort", "float", "", nullptr};
    case CT_DT_FLOAT32: return {true, kFloat, 32, "float", "float", "", nullptr};
    case CT_DT_FLOAT64:
      if (d->fp64) return {true, kFloat, 64, "double", "double", "", nullptr};
      return {false, kFloat, 64, "double", "double", "", "the device has no cl_khr_fp64"};
    case CT_DT_FLOAT8_E4M3FN:
    case CT_DT_FLOAT8_E5M2:
    case CT_DT_FLOAT8_E4M3FNUZ:
    case CT_DT_FLOAT8_E5M2FNUZ: return {true, kFloat, 8, "uchar", "float", "", nullptr, dt - CT_DT_FLOAT8_E4M3FN};
    default: return {false, 0, 0, "", "", "", "the backend has no kernels for this dtype"};
  }
}

bool special_op(int32_t op) {
  const ElemRow* row = elem_row(op);
  return row && row->expr[kFloat] && std::strstr(row->expr[kFloat], "ct_sf_") != nullptr;
}

std::string elementwise_source(const Target* d, int kind, const int32_t* in_dt, int num_inputs, int32_t out_dt,
                               std::string* label, bool special) {
  const int slot = data_slot(num_inputs);
  TypeInfo in[3];
  for (int k = 0; k < num_inputs; ++k) in[k] = type_info(d, in_dt[k]);
  const TypeInfo t = in[slot], o = type_info(d, out_dt);
  const bool cuda = d->dialect == Dialect::kCuda;
  std::ostringstream s;
  s << prelude(d) << type_macros(t, o);
  for (int k = 0; k < num_inputs; ++k) {
    s << "#define S" << k << " " << in[k].storage << "\n";
    s << load_fn(in[k], "ld" + std::to_string(k), in[k].storage);
  }
  s << store_fn(o, o.storage);
  *label = std::string(kind == CT_KIND_CAST ? "cast" : kind == CT_KIND_BINARY ? "binary" : kind == CT_KIND_TERNARY ? "ternary" : "unary");
  for (int k = 0; k < num_inputs; ++k) *label += (k ? "," : " ") + dt_name(in_dt[k]);
  *label += "->" + dt_name(out_dt);
  if (kind == CT_KIND_CAST) {
    emit_elementwise(s, "cast", cast_expr(t, o), 1, in, false, cuda);
    // to float8: "cast_sat_c/_s" for ct_cast_ex's CT_CAST_SATURATE
    if (o.f8 >= 0) emit_elementwise(s, "cast_sat", cast_expr(t, o), 1, in, false, cuda, nullptr, "st_sat");
    return s.str();
  }
  if (t.cls == kFloat) s << float_math(d, std::strcmp(t.compute, "float") == 0);
  s << helpers(t.cls);
  if (t.cls == kFloat && special) s << special_functions(t.compute, d->fp64);
  // every op of this kind (and of this program: special or not) whose output rule maps the data dtype to out_dt
  for (int32_t op = 0; op < CT_OP_END_; ++op) {
    const ElemRow* row = elem_row(op);
    if (!row || !row->expr[t.cls] || special_op(op) != special) continue;
    const CTOpInfo info = op_info(op);
    if (!info.name) continue;
    const bool unary_kind = info.kind == CT_KIND_UNARY || info.kind == CT_KIND_UNARY_PARAM;
    const bool want_unary = kind == CT_KIND_UNARY || kind == CT_KIND_UNARY_PARAM;
    if (want_unary ? !unary_kind : info.kind != kind) continue;
    if (!((info.dtype_mask >> in_dt[slot]) & 1u)) continue;
    if (ct_output_dtype_index(info.output_dtype, in_dt[slot]) != out_dt) continue;
    emit_elementwise(s, info.name, row->expr[t.cls], num_inputs, in, want_unary || kind == CT_KIND_TERNARY, cuda,
                     chunked(row, t.cls) ? row : nullptr);
  }
  return s.str();
}

std::string reduce_source(const Target* d, int32_t x_dt, int32_t out_dt, std::string* label) {
  const TypeInfo t = type_info(d, x_dt), o = type_info(d, out_dt);
  std::ostringstream s;
  s << prelude(d) << type_macros(t, o) << "#define S0 " << t.storage << "\n"
    << load_fn(t, "ld0", t.storage) << store_fn(o, o.storage);
  s << R"CL(
typedef struct { AF f0, f1, f2; CT_I i0; ulong u0; long idx; } St;
CT_INL long ct_kx(const RGeo* g, long m, long* ko) {
  long r = m, x = 0, o = 0;
  for (int d = g->nk - 1; d >= 0; --d) { long e = g->ks[d], q = r / e, c = r - q * e; r = q; x += c * g->kx[d]; o += c * g->ko[d]; }
  *ko = o;
  return x;
}
CT_INL long ct_rx(const RGeo* g, long k) {
  if (g->nr == 1) return k * g->rx[0];
  long r = k, x = 0;
  for (int d = g->nr - 1; d >= 0; --d) { long e = g->rs[d], q = r / e, c = r - q * e; r = q; x += c * g->rx[d]; }
  return x;
}
CT_INL void ct_lse_add(St* s, AF m, AF t) {
  if (isnan(s->f0)) return;
  if (isnan(m)) { s->f0 = m; return; }
  if (t == 0 || m == -INFINITY || s->f0 == INFINITY) return;
  if (m == INFINITY) { s->f0 = m; s->f1 = 1; return; }
  if (m > s->f0) { s->f1 = s->f1 * exp(s->f0 - m) + t; s->f0 = m; }
  else s->f1 += t * exp(m - s->f0);
}
CT_INL AF ct_lse_fin(const St* s) {
  if (isnan(s->f0) || isinf(s->f0)) return s->f0;
  return s->f0 + log(s->f1);
}
CT_INL int ct_fbetter(AF v, long i, AF w, long j, int larger) {
  if (isnan(v) || isnan(w)) return isnan(v) && (!isnan(w) || i < j);
  if (v == w) return i < j;
  return larger ? v > w : v < w;
}
CT_INL void ct_welford(St* s, AF x) { s->f2 += 1; AF d = x - s->f0; s->f0 += d / s->f2; s->f1 += d * (x - s->f0); }
CT_INL void ct_chan(St* s, const St* o) {
  if (o->f2 == 0) return;
  if (s->f2 == 0) { *s = *o; return; }
  AF n = s->f2 + o->f2, d = o->f0 - s->f0;
  s->f0 += d * (o->f2 / n);
  s->f1 += o->f1 + d * d * (s->f2 * o->f2 / n);
  s->f2 = n;
}
CT_INL AF ct_var_fin(const St* s, long count, AF corr) {
  AF den = (AF)count - corr;
  if (den < 0) den = 0;
  return s->f1 / den;
}
)CL";
  if (d->dialect == Dialect::kCuda)  // a state from the lane `off` above (its own past the warp's end)
    s << "CT_INL St ct_shfl_down(St s, int off) {\n  St o;\n"
         "  o.f0 = __shfl_down_sync(0xffffffffu, s.f0, off);\n  o.f1 = __shfl_down_sync(0xffffffffu, s.f1, off);\n"
         "  o.f2 = __shfl_down_sync(0xffffffffu, s.f2, off);\n  o.i0 = __shfl_down_sync(0xffffffffu, s.i0, off);\n"
         "  o.u0 = __shfl_down_sync(0xffffffffu, s.u0, off);\n  o.idx = __shfl_down_sync(0xffffffffu, s.idx, off);\n"
         "  return o;\n}\n";
  *label = "reduce " + dt_name(x_dt) + "->" + dt_name(out_dt);
  const int g = t.cls == kFloat ? 0 : 1;
  // The order statistics' helpers (ReduceRow::line): keys as the CPU's sort
  // (floats by their bits, NaN above +inf, -0 as 0; integers offset to
  // unsigned), and the element of rank r by a radix select, 4 bits a pass.
  s << "#define LDR(k) ld0(q0, xb + ct_rx(g, (k)))\n#define QC " << (t.cls == kFloat ? "T" : "AF") << "\n";
  if (t.cls == kFloat)
    s << "#ifdef CT_TF32\n#define CT_KBITS 32\nCT_INL ulong ct_key(T x) { if (isnan(x)) return 0xffffffffUL; "
         "if (x == 0) x = 0; const uint u = as_uint(x); return (ulong)((u >> 31) ? ~u : (u | 0x80000000u)); }\n"
         "#else\n#define CT_KBITS 64\nCT_INL ulong ct_key(T x) { if (isnan(x)) return ~0UL; if (x == 0) x = 0; "
         "const ulong u = as_ulong(x); return (u >> 63) ? ~u : (u | 0x8000000000000000UL); }\n#endif\n"
         "CT_INL long ct_nans(__global const S0* q0, long xb, const RGeo* g) { long c = 0; "
         "for (long k = 0; k < g->N; ++k) c += isnan(LDR(k)) ? 1 : 0; return c; }\n";
  else
    s << "#define CT_KBITS BITS\nCT_INL ulong ct_key(T x) { return "
      << (t.cls == kSigned ? "((ulong)(long)x + (1UL << (BITS - 1))) & (~0UL >> (64 - BITS))" : "(ulong)x")
      << "; }\nCT_INL long ct_nans(__global const S0* q0, long xb, const RGeo* g) { return 0; }\n";
  s << R"CL(CT_INL T ct_rank(__global const S0* q0, long xb, const RGeo* g, long r, long* less, long* equal) {
  ulong prefix = 0;
  long below = 0;
  for (int shift = CT_KBITS - 4; shift >= 0; shift -= 4) {
    const ulong high = shift + 4 >= 64 ? 0UL : (~0UL << (shift + 4));
    long hist[16];
    for (int d = 0; d < 16; ++d) hist[d] = 0;
    for (long k = 0; k < g->N; ++k) { const ulong kk = ct_key(LDR(k)); if ((kk & high) == prefix) ++hist[(kk >> shift) & 15]; }
    int d = 0;
    while (d < 15 && below + hist[d] <= r) below += hist[d++];
    prefix |= (ulong)d << shift;
    if (shift == 0) { *less = below; *equal = hist[d]; }
  }
  for (long k = 0; k < g->N; ++k) { const T v = LDR(k); if (ct_key(v) == prefix) return v; }
  return (T)0;
}
CT_INL T ct_next_above(__global const S0* q0, long xb, const RGeo* g, ulong key) {
  ulong best = ~0UL;
  T v0 = (T)0;
  int have = 0;
  for (long k = 0; k < g->N; ++k) {
    const T v = LDR(k);
    const ulong kv = ct_key(v);
    if (kv > key && (!have || kv < best)) { best = kv; v0 = v; have = 1; }
  }
  return v0;
}
)CL";
  for (int32_t op = 0; op < CT_OP_END_; ++op) {
    const ReduceRow* row = reduce_row(op);
    if (!row || !row->line[g]) continue;
    const CTOpInfo info = op_info(op);
    if (!info.name || !((info.dtype_mask >> x_dt) & 1u)) continue;
    if (ct_output_dtype_index(info.output_dtype, x_dt) != out_dt) continue;
    const std::string n = info.name;
    s << "CT_INL O " << n << "_line(__global const S0* q0, long xb, const RGeo* g, AF p0) {\n" << row->line[g]
      << "\n}\n";
    s << "__kernel void " << n << "_r0(__global OS* out, ulong oo, __global const S0* in0, ulong o0, RGeo g, AF p0) {\n"
      << "  long m = get_global_id(0);\n  if (m >= g.M) return;\n"
      << "  __global OS* po = (__global OS*)((__global char*)out + oo);\n"
      << "  __global const S0* q0 = (__global const S0*)((__global const char*)in0 + o0);\n"
      << "  long ko, xb = ct_kx(&g, m, &ko);\n"
      << "  st(po, ko, " << n << "_line(q0, xb, &g, p0));\n}\n";
  }
  for (int32_t op = 0; op < CT_OP_END_; ++op) {
    const ReduceRow* row = reduce_row(op);
    if (!row || !row->body[g][0]) continue;
    const CTOpInfo info = op_info(op);
    if (!info.name || !((info.dtype_mask >> x_dt) & 1u)) continue;
    if (ct_output_dtype_index(info.output_dtype, x_dt) != out_dt) continue;
    const std::string n = info.name;
    s << "CT_INL void " << n << "_init(St* s) { " << row->body[g][0] << " }\n";
    s << "CT_INL void " << n << "_acc(St* s, T x, long k) { " << row->body[g][1] << " }\n";
    s << "CT_INL void " << n << "_merge(St* s, const St* o) { " << row->body[g][2] << " }\n";
    s << "CT_INL O " << n << "_fin(const St* s, long count, AF p0) { " << row->body[g][3] << " }\n";
    // elements [k0, k1) into *s: with unit-free strides along one reduced dim, four
    // states (independent dependency chains: k, k+1, k+2, k+3 of each step), merged in
    // order at the end; the tail and other layouts go into the first
    s << "CT_INL void " << n << "_range(St* s, __global const S0* q0, long xb, const RGeo* g, long k0, long k1) {\n"
      << "  St s1, s2, s3;\n  " << n << "_init(s);\n  " << n << "_init(&s1);\n  " << n << "_init(&s2);\n  " << n
      << "_init(&s3);\n  long k = k0;\n"
      << "  if (g->nr == 1) {\n    const long sx = g->rx[0];\n"
      << "    for (; k + 4 <= k1; k += 4) {\n"
      << "      " << n << "_acc(s, ld0(q0, xb + k * sx), k);\n"
      << "      " << n << "_acc(&s1, ld0(q0, xb + (k + 1) * sx), k + 1);\n"
      << "      " << n << "_acc(&s2, ld0(q0, xb + (k + 2) * sx), k + 2);\n"
      << "      " << n << "_acc(&s3, ld0(q0, xb + (k + 3) * sx), k + 3);\n    }\n"
      << "    for (; k < k1; ++k) " << n << "_acc(s, ld0(q0, xb + k * sx), k);\n"
      << "  } else {\n"
      << "    for (; k < k1; ++k) " << n << "_acc(s, ld0(q0, xb + ct_rx(g, k)), k);\n"
      << "  }\n"
      << "  " << n << "_merge(s, &s1);\n  " << n << "_merge(s, &s2);\n  " << n << "_merge(s, &s3);\n}\n";
    s << "__kernel void " << n << "_r0(__global OS* out, ulong oo, __global const S0* in0, ulong o0, RGeo g, AF p0) {\n"
      << "  long m = get_global_id(0);\n  if (m >= g.M) return;\n"
      << "  __global OS* po = (__global OS*)((__global char*)out + oo);\n"
      << "  __global const S0* q0 = (__global const S0*)((__global const char*)in0 + o0);\n"
      << "  long ko, xb = ct_kx(&g, m, &ko);\n  St s;\n"
      << "  " << n << "_range(&s, q0, xb, &g, 0, g.N);\n"
      << "  st(po, ko, " << n << "_fin(&s, g.N, p0));\n}\n";
    s << "__kernel void " << n << "_r1(__global St* part, __global const S0* in0, ulong o0, RGeo g) {\n"
      << "  long t = get_global_id(0);\n  if (t >= g.M * g.P) return;\n"
      << "  __global const S0* q0 = (__global const S0*)((__global const char*)in0 + o0);\n"
      << "  long m = t / g.P, p = t - m * g.P, ko, xb = ct_kx(&g, m, &ko);\n"
      << "  long k0 = p * g.chunk, k1 = min(g.N, k0 + g.chunk);\n  St s;\n"
      << "  " << n << "_range(&s, q0, xb, &g, k0, k1);\n"
      << "  part[t] = s;\n}\n";
    s << "__kernel void " << n << "_r2(__global OS* out, ulong oo, __global const St* part, RGeo g, AF p0) {\n"
      << "  long m = get_global_id(0);\n  if (m >= g.M) return;\n"
      << "  __global OS* po = (__global OS*)((__global char*)out + oo);\n"
      << "  long ko;\n  ct_kx(&g, m, &ko);\n  St s = part[m * g.P];\n"
      << "  for (long p = 1; p < g.P; ++p) { St o = part[m * g.P + p]; " << n << "_merge(&s, &o); }\n"
      << "  st(po, ko, " << n << "_fin(&s, g.N, p0));\n}\n";
    // CUDA: the partials of a reduction along a unit-stride axis by warps,
    // one warp per partial: lane j takes elements j, j + 32, ... (adjacent
    // lanes read adjacent elements), then the 32 states merge by shuffles
    // in a fixed tree, so the bits depend only on the shapes (r1's single
    // thread per partial reads 1024 elements in a row: uncoalesced).
    if (d->dialect == Dialect::kCuda)
      s << "__kernel void " << n << "_w1(__global St* part, __global const S0* in0, ulong o0, RGeo g) {\n"
        << "  const long gid = get_global_id(0), t = gid >> 5;\n  const int lane = (int)(gid & 31);\n"
        << "  if (t >= g.M * g.P) return;  /* a whole warp: t is the warp's */\n"
        << "  __global const S0* q0 = (__global const S0*)((__global const char*)in0 + o0);\n"
        << "  long m = t / g.P, p = t - m * g.P, ko, xb = ct_kx(&g, m, &ko);\n"
        << "  long k0 = p * g.chunk, k1 = min(g.N, k0 + g.chunk);\n  St s;\n  " << n << "_init(&s);\n"
        << "  for (long k = k0 + lane; k < k1; k += 32) " << n << "_acc(&s, ld0(q0, xb + k), k);\n"
        << "  for (int off = 16; off > 0; off >>= 1) { St o = ct_shfl_down(s, off); " << n << "_merge(&s, &o); }\n"
        << "  if (lane == 0) part[t] = s;\n}\n";
  }
  return s.str();
}

std::string nn_program(const Target* d, int32_t dt, const char* body, const char* what, std::string* label) {
  const TypeInfo t = type_info(d, dt);
  *label = std::string(what) + " " + dt_name(dt);
  return prelude(d) + "#define DS " + t.storage + "\n" + load_fn(t, "ld", t.storage) + store_fn(t, t.storage) + body;
}

// The index kind's two loops (plugin.h's CTIndexCall) for data dtype dt and
// index dtype idt: ix_gather (a work-item per element of out) and ix_scatter
// (a work-item per line, its K elements in order) move elements as unsigned
// integers of their size, so they run every dtype; ix_scatter_add adds in the
// compute type (float for the 16- and 8-bit floats, rounded once per add as
// the CPU's; integers wrap through their unsigned type), for the dtypes the
// device computes. An index outside [-n, n) reads 0 (gather) or is skipped:
// no access outside x or out, whatever the index holds.
std::string index_source(const Target* d, int32_t dt, int32_t idt, std::string* label) {
  const TypeInfo t = type_info(d, dt);
  const int bytes = (int)((ct_dtype_of_index(dt).bits + 7) / 8);
  const char* ms = bytes == 1 ? "uchar" : bytes == 2 ? "ushort" : bytes == 4 ? "uint" : "ulong";
  std::ostringstream s;
  s << prelude(d) << "#define MS " << ms << "\n#define IX " << (idt == CT_DT_INT32 ? "int" : "long") << "\n";
  *label = "index " + dt_name(dt) + " by " + dt_name(idt);
  const char* const args =
      "(__global MS* out, ulong oo, __global const MS* data, ulong od, __global const IX* idx, ulong oi, Geo g, "
      "long n, long axs, long items, long K, long dk, long ik";
  const char* const walk =
      "  long r = e, po = 0, pd = 0, pi = 0;\n"
      "  for (int k = g.nd - 1; k >= 0; --k) { long x = g.shape[k], q = r / x, c = r - q * x; r = q; "
      "po += c * g.st[0][k]; pd += c * g.st[1][k]; pi += c * g.st[2][k]; }\n";
  s << "__kernel void ix_gather" << args << ") {\n  long e = get_global_id(0);\n  if (e >= items) return;\n" << walk
    << "  __global MS* O = (__global MS*)((__global char*)out + oo);\n"
       "  __global const MS* D = (__global const MS*)((__global const char*)data + od);\n"
       "  __global const IX* I = (__global const IX*)((__global const char*)idx + oi);\n"
       "  long i = (long)I[pi];\n  if (i < 0) i += n;\n"
       "  O[po] = i >= 0 && i < n ? D[pd + i * axs] : (MS)0;\n}\n";
  const auto scatter = [&](const char* name, const std::string& extra, const std::string& put) {
    s << "__kernel void " << name << args << extra << ") {\n  long e = get_global_id(0);\n  if (e >= items) return;\n"
      << walk
      << "  __global OS* O = (__global OS*)((__global char*)out + oo);\n"
         "  __global const OS* D = (__global const OS*)((__global const char*)data + od);\n"
         "  __global const IX* I = (__global const IX*)((__global const char*)idx + oi);\n"
         "  for (long k = 0; k < K; ++k) {\n    long i = (long)I[pi + k * ik];\n    if (i < 0) i += n;\n"
         "    if (i < 0 || i >= n) continue;\n    const long t = po + i * axs, v = pd + k * dk;\n"
      << put << "\n  }\n}\n";
  };
  s << "#define OS MS\n";
  scatter("ix_scatter", "", "    O[t] = D[v];");
  s << "#undef OS\n";
  if (t.ok && t.cls != kBool) {
    s << "#define OS " << t.storage << "\n" << load_fn(t, "ld0", t.storage) << store_fn(t, t.storage);
    if (t.cls == kFloat) {
      scatter("ix_scatter_add", std::string(", ") + t.compute + " alpha", "    st(O, t, ld0(O, t) + alpha * ld0(D, v));");
    } else {
      const std::string u = t.uns;
      scatter("ix_scatter_add", ", ulong alpha",
              "    st(O, t, (" + std::string(t.compute) + ")((" + u + ")ld0(O, t) + (" + u + ")alpha * (" + u +
                  ")ld0(D, v)));");
    }
  }
  return s.str();
}

std::string along_source(const Target* d, int32_t x_dt, int32_t out_dt, std::string* label) {
  const TypeInfo t = type_info(d, x_dt), o = type_info(d, out_dt);
  std::ostringstream s;
  s << prelude(d) << type_macros(t, o) << "#define S0 " << t.storage << "\n"
    << load_fn(t, "ld0", t.storage) << load_fn(o, "ldo", o.storage) << store_fn(o, o.storage);
  *label = "along_axis " + dt_name(x_dt) + "->" + dt_name(out_dt);
  const int g = t.cls == kFloat ? 0 : 1;
  for (int32_t op = 0; op < CT_OP_END_; ++op) {
    const AlongRow* row = along_row(op);
    if (!row || !(row->body[g] || (g == 0 && row->out))) continue;
    const CTOpInfo info = op_info(op);
    if (!info.name || !((info.dtype_mask >> x_dt) & 1u)) continue;
    if (ct_output_dtype_index(info.output_dtype, x_dt) != out_dt) continue;
    // line l's first elements of x and out: xb, ob (as LDX and STO take them)
    const auto head = [&](const char* suffix, const char* line) {
      s << "__kernel void " << info.name << suffix
        << "(__global OS* out, ulong oo, __global const S0* in0, ulong o0, AGeo g) {\n"
        << line << "  long r = l, xb = 0, ob = 0;\n"
        << "  for (int d = g.nl - 1; d >= 0; --d) { long e = g.ls[d], q = r / e, c = r - q * e; r = q; xb += c * g.lx[d]; "
           "ob += c * g.lo[d]; }\n"
        << "  __global OS* po = (__global OS*)((__global char*)out + oo);\n"
        << "  __global const S0* q0 = (__global const S0*)((__global const char*)in0 + o0);\n"
        << "  const long len = g.len;\n"
        << "#define LDX(j) ld0(q0, xb + (j) * g.xs)\n#define STO(j, v) st(po, ob + (j) * g.os, v)\n"
        << "#define LDO(j) ldo(po, ob + (j) * g.os)\n";
    };
    const char* const tail = "#undef LDX\n#undef STO\n#undef LDO\n}\n";
    if (row->body[g]) {
      head("_a", "  long l = get_global_id(0);\n  if (l >= g.lines) return;\n");
      s << "  " << row->body[g] << "\n" << tail;
      continue;
    }
    // A line reduction and a map (AlongRow::m_init .. out): the same
    // expressions in order in one work-item (_a), over a work-group (_b).
    s << "#define CT_MM(a, b) (" << row->m_merge << ")\n#define CT_ST(v, m) (" << row->s_term
      << ")\n#define CT_FIN(s) (" << row->fin << ")\n#define CT_OUT(v, m, f) (" << row->out << ")\n";
    head("_a", "  long l = get_global_id(0);\n  if (l >= g.lines) return;\n");
    s << "  AF m = " << row->m_init << ";\n"
      << "  for (long j = 0; j < len; ++j) { const AF v = (AF)LDX(j); m = CT_MM(m, v); }\n"
      << "  AF s = 0;\n  for (long j = 0; j < len; ++j) { const AF v = (AF)LDX(j); s += CT_ST(v, m); }\n"
      << "  const AF f = CT_FIN(s);\n"
      << "  for (long j = 0; j < len; ++j) { const AF v = (AF)LDX(j); STO(j, (O)(CT_OUT(v, m, f))); }\n" << tail;
    // Work-item t folds elements t, t + B, ...; the B partial results merge
    // in a fixed tree, so every run gives the same bits. One group per line
    // (no early return: every work-item reaches every barrier). In place,
    // each element is read and then written by the same work-item, after
    // the barriers that end the line's reads by the others.
    const std::string B = std::to_string(kLineBlock);
    head("_b", ("  __local AF red[" + B + "];\n  const long l = get_group_id(0);\n  const int t = (int)get_local_id(0);\n").c_str());
    s << "  AF m = " << row->m_init << ";\n"
      << "  for (long j = t; j < len; j += " << B << ") { const AF v = (AF)LDX(j); m = CT_MM(m, v); }\n"
      << "  red[t] = m;\n  barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "  for (int w = " << kLineBlock / 2 << "; w > 0; w >>= 1) {\n"
      << "    if (t < w) { const AF a = red[t], b = red[t + w]; red[t] = CT_MM(a, b); }\n"
      << "    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n"
      << "  m = red[0];\n  barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "  AF s = 0;\n  for (long j = t; j < len; j += " << B << ") { const AF v = (AF)LDX(j); s += CT_ST(v, m); }\n"
      << "  red[t] = s;\n  barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "  for (int w = " << kLineBlock / 2 << "; w > 0; w >>= 1) {\n"
      << "    if (t < w) red[t] += red[t + w];\n    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n"
      << "  const AF f = CT_FIN(red[0]);\n"
      << "  for (long j = t; j < len; j += " << B << ") { const AF v = (AF)LDX(j); STO(j, (O)(CT_OUT(v, m, f))); }\n"
      << tail << "#undef CT_MM\n#undef CT_ST\n#undef CT_FIN\n#undef CT_OUT\n";
  }
  return s.str();
}

}  // namespace ctgpu
