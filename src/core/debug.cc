// debug.cc — test-only fault injection (CT_DEBUG_PERTURB): perturbs one op's
// output after success, so that `ctensor check`'s own tests can prove it catches
// a wrong kernel.
#include "core/debug.h"

#include <cstdlib>
#include <cstring>

#include "core/registry.h"

namespace ct {
namespace {

int32_t perturbed_op() {
  static const int32_t op = [] {
    const char* name = std::getenv("CT_DEBUG_PERTURB");
    int32_t id = -1;
    if (name && *name && ct_op_find(name, &id) != CT_OK) id = -1;
    return id;
  }();
  return op;
}

void bump_first(const CTensor* t) {
  if (!t || !t->data || t->device.device_type != CT_CPU) return;
  for (int32_t i = 0; i < t->ndim; ++i)
    if (t->shape[i] == 0) return;
  char* p = static_cast<char*>(t->data) + t->byte_offset;
  const CTDataType d = t->dtype;
  if (d.code == CT_FLOAT && d.bits == 32) {
    float v;
    std::memcpy(&v, p, 4);
    v += 1.0f;
    std::memcpy(p, &v, 4);
  } else if (d.code == CT_FLOAT && d.bits == 64) {
    double v;
    std::memcpy(&v, p, 8);
    v += 1.0;
    std::memcpy(p, &v, 8);
  } else if (d.code == CT_BOOL) {
    p[0] ^= 1;
  } else if ((d.code == CT_FLOAT || d.code == CT_BFLOAT) && d.bits == 16) {
    p[1] ^= 0x40;  // an exponent bit: a large change of the value
  } else if (d.bits == 8) {
    p[0] += 1;
  } else if (d.bits == 16) {
    int16_t v;
    std::memcpy(&v, p, 2);
    ++v;
    std::memcpy(p, &v, 2);
  } else if (d.bits == 32) {
    int32_t v;
    std::memcpy(&v, p, 4);
    ++v;
    std::memcpy(p, &v, 4);
  } else if (d.bits == 64) {
    int64_t v;
    std::memcpy(&v, p, 8);
    ++v;
    std::memcpy(p, &v, 8);
  }
}

}  // namespace

const bool g_perturb_env = [] {
  const char* v = std::getenv("CT_DEBUG_PERTURB");
  return v != nullptr && *v != '\0';
}();

CTStatus debug_perturb_env(int32_t op, const CTensor* out, CTStatus s) {
  if (s == CT_OK && op == perturbed_op()) bump_first(out);
  return s;
}

CTStatus debug_perturb_nn(int32_t op, const CTensor* const* t, int32_t num, CTStatus s) {
  if (s != CT_OK || op != perturbed_op()) return s;
  const OpDef* d = op_def(op);
  const int32_t inputs = d ? d->num_inputs : num;
  for (int32_t i = inputs; i < num; ++i)
    if (t[i]) {
      bump_first(t[i]);
      break;
    }
  return s;
}

}  // namespace ct
