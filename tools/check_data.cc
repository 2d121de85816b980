// check_data.cc — device tensors, uploads and downloads, random inputs and
// the comparison of `ctensor check` (declared in check_data.h).
#include "check_data.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

namespace ctool {
namespace chk {

namespace {
int64_t dtype_min(CTDataType d) {
  if (d.code == CT_BOOL) return 0;
  if (d.code == CT_UINT) return 0;
  return d.bits >= 64 ? INT64_MIN : -(int64_t(1) << (d.bits - 1));
}
int64_t dtype_max(CTDataType d) {
  if (d.code == CT_BOOL) return 1;
  if (d.code == CT_UINT) return d.bits >= 64 ? INT64_MAX : (int64_t(1) << d.bits) - 1;
  return d.bits >= 64 ? INT64_MAX : (int64_t(1) << (d.bits - 1)) - 1;
}
}  // namespace

// ---- device tensors -------------------------------------------------------

Memory::Memory(CTDevice d, size_t bytes) : dev(d) {
  if (ct_malloc(d, std::max<size_t>(bytes, 1), &p) != CT_OK) p = nullptr;
}
Memory::~Memory() { ct_free(dev, p); }

size_t itemsize(CTDataType d) { return (d.bits * d.lanes + 7) / 8; }

Tensor make_tensor(CTDevice dev, CTDataType dt, const std::vector<int64_t>& shape, Layout layout,
                   const std::vector<int64_t>& perm) {
  Tensor r;
  r.shape = shape;
  const int nd = (int)shape.size();
  r.strides.assign(nd, 0);
  int64_t elems = 1;
  for (int64_t s : shape) elems *= s;
  uint64_t offset = 0;
  if (layout == kStrided && nd > 0) {
    r.layout = "strided";
    int64_t st = 2;
    for (int d = nd - 1; d >= 0; --d) {
      r.strides[d] = st;
      st *= std::max<int64_t>(shape[d], 1);
    }
    elems = st;
    if (shape[0] > 1) {  // reverse dim 0
      offset = uint64_t((shape[0] - 1) * r.strides[0]) * itemsize(dt);
      r.strides[0] = -r.strides[0];
    }
  } else if (!perm.empty()) {
    r.layout = "perm";
    int64_t st = 1;
    for (int k = nd - 1; k >= 0; --k) {
      r.strides[perm[k]] = st;
      st *= std::max<int64_t>(shape[perm[k]], 1);
    }
  } else {
    int64_t st = 1;
    for (int d = nd - 1; d >= 0; --d) {
      r.strides[d] = st;
      st *= std::max<int64_t>(shape[d], 1);
    }
  }
  r.mem = std::make_shared<Memory>(dev, size_t(std::max<int64_t>(elems, 1)) * itemsize(dt));
  r.t.data = r.mem->p;
  r.t.device = dev;
  r.t.ndim = nd;
  r.t.dtype = dt;
  r.t.shape = r.shape.data();
  r.t.strides = r.strides.data();
  r.t.byte_offset = offset;
  return r;
}

CTensor host_view(Array& a) {
  CTensor h{};
  h.device = {CT_CPU, 0};
  h.ndim = (int32_t)a.shape.size();
  h.shape = a.shape.data();
  h.strides = nullptr;
  if (a.is_float()) {
    h.dtype = {CT_FLOAT, 64, 1};
    h.data = a.f.data();
  } else {
    h.dtype = {CT_INT, 64, 1};
    h.data = a.i.data();
  }
  return h;
}

CTStatus upload(Array& a, Tensor& t) {
  CTensor h = host_view(a);
  CTStatus s = ct_cast(&h, &t.t, nullptr);
  if (s == CT_OK && t.t.device.device_type != CT_CPU) s = ct_synchronize(t.t.device, nullptr);
  return s;
}

CTStatus download(const Tensor& t, Array& a) {
  a.reset(t.t.dtype, t.shape);
  CTensor h = host_view(a);
  CTStatus s = ct_cast(&t.t, &h, nullptr);
  if (s == CT_OK && t.t.device.device_type != CT_CPU) s = ct_synchronize(t.t.device, nullptr);
  return s;
}

// ---- inputs -----------------------------------------------------------------

void fill_random(Array& a, const std::string& name, int k, CTDataType dt, std::mt19937_64& rng) {
  const ctcheck::Domain dom = ctcheck::domain(name, k, dt);
  if (a.is_float()) {
    std::uniform_real_distribution<double> u(dom.lo, dom.hi);
    for (double& v : a.f) {
      do v = u(rng);
      while (dom.nonzero && std::fabs(v) < 1e-3 * std::max(1.0, std::fabs(dom.hi - dom.lo)));
    }
  } else if (dt.code == CT_BOOL) {
    for (int64_t& v : a.i) v = (int64_t)(rng() & 1);
  } else {
    const int64_t lo = std::max(dom.ilo, dtype_min(dt)), hi = std::min(dom.ihi, dtype_max(dt));
    std::uniform_int_distribution<int64_t> u(lo, std::max(lo, hi));
    for (int64_t& v : a.i) {
      do v = u(rng);
      while (dom.nonzero && v == 0 && (lo != 0 || hi != 0));
    }
  }
}

// ---- comparison ---------------------------------------------------------------


void compare(const Array& got, const Array& ref, const ctcheck::Tolerance& tol, const std::string& what,
             Verdict& v) {
  const int64_t n = ref.numel();
  for (int64_t k = 0; k < n; ++k) {
    double frac = 0, diff = 0;
    if (ref.is_float()) {
      const double g = got.get(k), r = ref.f[k];
      if (std::isnan(r) || std::isnan(g)) frac = (std::isnan(r) && std::isnan(g)) ? 0 : INFINITY;
      else if (std::isinf(r) || std::isinf(g)) frac = (g == r) ? 0 : INFINITY;
      else {
        diff = std::fabs(g - r);
        const double lim = tol.atol + tol.rtol * std::fabs(r);
        frac = diff == 0 ? 0 : (lim > 0 ? diff / lim : INFINITY);
      }
    } else {
      const int64_t g = got.i[k], r = ref.i[k];
      diff = g == r ? 0 : std::fabs((double)g - (double)r);
      frac = g == r ? 0 : INFINITY;
    }
    v.worst = std::max(v.worst, frac);
    v.worst_abs = std::max(v.worst_abs, diff);
    if (frac > 1 && v.ok) {
      v.ok = false;
      std::ostringstream s;
      s.precision(9);
      s << what << ": element " << k << " is " << got.get(k) << ", the reference " << ref.get(k);
      v.detail = s.str();
    }
  }
}

}  // namespace chk
}  // namespace ctool
