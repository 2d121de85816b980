// plugin_ops.cc — ops that plugins add at run time (host->register_op):
// checked as strictly as the built-in rows are at compile time, given ids
// after the built-ins, staged while their library loads and live until it
// is unloaded. Readers are lock-free: the id list is an immutable vector
// replaced on growth; an op's liveness is one atomic flag.
#include "core/plugin_ops.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/backends.h"
#include "core/error.h"
#include "core/library.h"
#include "core/nn_internal.h"

namespace ct {
namespace {

struct PluginOp {
  OpDef def;
  std::string name, summary, param_names, dtype_rule, tensors;
  char names[96], store[96];
  std::atomic<bool> live{false};
  bool staged = false;  // reserved by the load in progress
  bool fresh = false;   // staged with an id of its own (not an unloaded op's): dropped with it on failure
};

using OpList = std::vector<PluginOp*>;
std::atomic<const OpList*> g_ops{nullptr};
std::mutex g_ops_mu;  // writers

// Makes p callable or not: its flag, and its slot in g_plugin_live.
void set_live(PluginOp* p, bool live) {
  p->live.store(live, std::memory_order_release);
  g_plugin_live[p->def.id - builtin_op_count()].store(live ? &p->def : nullptr, std::memory_order_release);
}
thread_local std::vector<PluginOp*>* t_staged = nullptr;

const OpList* ops() { return g_ops.load(std::memory_order_acquire); }

PluginOp* plugin_op(int32_t op) {
  const OpList* l = ops();
  const int64_t i = (int64_t)op - builtin_op_count();
  return l && i >= 0 && i < (int64_t)l->size() ? (*l)[(size_t)i] : nullptr;
}

bool valid_name(const char* s) {
  size_t n = 0;
  for (; s[n]; ++n)
    if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_')) return false;
  return n >= 1 && n <= 63;
}

// param_names: "" or comma-separated items "name" or "name=default", a name
// of [a-z0-9_] and a default a finite decimal number (CTOpInfo.param_names).
bool valid_param_names(const char* s) {
  if (!*s) return true;
  for (;;) {
    const char* n = s;
    while ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_') ++s;
    if (s == n) return false;
    if (*s == '=') {
      char* end = nullptr;
      const double v = std::strtod(s + 1, &end);
      if (end == s + 1 || !std::isfinite(v)) return false;
      s = end;
    }
    if (*s == '\0') return true;
    if (*s++ != ',') return false;
  }
}

int32_t count_names(const char* s) {
  if (!*s) return 0;
  int32_t n = 1;
  for (; *s; ++s) n += *s == ',';
  return n;
}

// An NN-kind op: tensors, descriptor and the shape callback.
CTStatus check_nn(const CTOpDesc* d, const OpDef& def) {
  const char* fn = "register_op";
  if (def.num_tensors > CT_NN_MAX_TENSORS)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": %d tensor arguments, at most %d", fn, d->name,
                def.num_tensors, CT_NN_MAX_TENSORS);
  if (d->num_params != 0)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": NN ops take a descriptor, not params (num_params=%d)", fn,
                d->name, d->num_params);
  if (d->shape_rule != CT_SHAPE_CUSTOM || !d->output_shape)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": an NN plugin op needs shape_rule=CT_SHAPE_CUSTOM and an "
                                         "output_shape callback", fn, d->name);
  const bool none = d->desc_type == CT_DESC_NONE && d->desc_size == 0;
  const bool custom = d->desc_type == CT_DESC_CUSTOM && d->desc_size >= 1 && d->desc_size <= kMaxCustomDesc;
  if (!none && !custom)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": desc_type=%d desc_size=%zu: an NN plugin op has "
                                         "CT_DESC_CUSTOM with 1..%zu bytes, or CT_DESC_NONE with 0",
                fn, d->name, d->desc_type, d->desc_size, kMaxCustomDesc);
  if (d->output_dtype != CT_OUTPUT_SAME && d->output_dtype != CT_OUTPUT_NN)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": output_dtype=%d; NN plugin ops have CT_OUTPUT_SAME or "
                                         "CT_OUTPUT_NN (roles decide)", fn, d->name, d->output_dtype);
  if (d->inplace != 0)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": NN ops do not run in place (inplace=%d)", fn, d->name,
                d->inplace);
  return CT_OK;
}

// The kind's arity, parameters, shape rule and output rules, as the
// built-in rows of that kind have them.
CTStatus check_kind(const CTOpDesc* d, const OpDef& def) {
  const char* fn = "register_op";
  int32_t inputs = 1, max_params = 0, shape = CT_SHAPE_SAME;
  switch (d->kind) {
    case CT_KIND_UNARY: break;
    case CT_KIND_UNARY_PARAM: max_params = 2; break;
    case CT_KIND_TERNARY: inputs = 3; max_params = 2; shape = CT_SHAPE_BROADCAST; break;
    case CT_KIND_BINARY: inputs = 2; shape = CT_SHAPE_BROADCAST; break;
    case CT_KIND_REDUCE: max_params = 1; shape = CT_SHAPE_REDUCE; break;
    case CT_KIND_ALONG_AXIS: break;
    case CT_KIND_CAST:
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": kind cast has exactly one op (cast)", fn, d->name);
    case CT_KIND_NN: return check_nn(d, def);
    case CT_KIND_INDEX:  // its shape rules are core's, per op; a plugin adds index kernels, not index ops
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": kind index takes no new ops (a plugin may run the "
                  "built-in ones through its kernel table's index slot)", fn, d->name);
    default:
      return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": kind=%d is not a CT_KIND_*", fn, d->name, d->kind);
  }
  if (def.num_inputs != inputs || def.num_tensors != inputs + 1)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": a %s op takes %d input(s) and one output; tensors=\"%s\"", fn,
                d->name, kind_name(d->kind), inputs, d->tensors);
  if (d->num_params < (d->kind == CT_KIND_UNARY_PARAM ? 1 : 0) || d->num_params > max_params)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": num_params=%d, but a %s op takes %d..%d", fn, d->name,
                d->num_params, kind_name(d->kind), d->kind == CT_KIND_UNARY_PARAM ? 1 : 0, max_params);
  if (d->shape_rule != shape)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": shape_rule=%d, but %s ops have CTShapeRule %d", fn, d->name,
                d->shape_rule, kind_name(d->kind), shape);
  const bool reduce = d->kind == CT_KIND_REDUCE;
  const bool out_ok = d->output_dtype == CT_OUTPUT_SAME || d->output_dtype == CT_OUTPUT_BOOL ||
                      d->output_dtype == CT_OUTPUT_FLOAT || (reduce && (d->output_dtype == CT_OUTPUT_INT64 ||
                                                                        d->output_dtype == CT_OUTPUT_ACCUM));
  if (!out_ok)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": output_dtype=%d is not a rule a %s op can have", fn, d->name,
                d->output_dtype, kind_name(d->kind));
  if (d->inplace != 0 && d->inplace != 1)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": inplace=%d is not 0 or 1", fn, d->name, d->inplace);
  if (reduce && d->inplace)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": a reduction cannot run in place", fn, d->name);
  return CT_OK;
}

// The same op as `p` had (an unloaded library's op being registered again).
bool same_row(const PluginOp& p, const CTOpDesc* d) {
  const OpDef& o = p.def;
  return p.name == d->name && o.kind == d->kind && o.num_params == d->num_params &&
         p.param_names == d->param_names && p.tensors == d->tensors && o.dtypes == d->dtype_mask &&
         o.output == d->output_dtype && o.inplace == d->inplace && o.shape_rule == d->shape_rule &&
         (d->kind != CT_KIND_NN || (o.desc_type == d->desc_type && o.desc_size == (int32_t)d->desc_size));
}

bool name_taken(const char* name) {
  for (int32_t i = 0; i < builtin_op_count(); ++i)
    if (std::strcmp(op_def(i)->name, name) == 0) return true;
  if (const OpList* l = ops())
    for (const PluginOp* p : *l)
      if ((p->live.load(std::memory_order_acquire) || p->staged) && p->name == name) return true;
  return false;
}

}  // namespace

CTStatus register_op(const CTOpDesc* d, int32_t* op) {
  const char* fn = "register_op";
  if (!d || !op) return fail(CT_ERR_INVALID_ARGUMENT, "%s: desc and op must not be NULL", fn);
  if (d->struct_size < offsetof(CTOpDesc, output_shape))
    return fail(CT_ERR_ABI_VERSION, "%s: desc->struct_size=%u is smaller than any version of CTOpDesc (%zu)", fn,
                d->struct_size, offsetof(CTOpDesc, output_shape));
  // Slots past the plugin's struct_size (an older CTOpDesc: example before
  // ABI 1.2) count as NULL; a newer, larger one is read up to this size.
  CTOpDesc full;
  std::memset(&full, 0, sizeof full);
  std::memcpy(&full, d, d->struct_size < sizeof full ? d->struct_size : sizeof full);
  d = &full;
  if (!d->name || !valid_name(d->name))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: name \"%s\" must be 1..63 characters of [a-z0-9_]", fn,
                d->name ? d->name : "(null)");
  if (!d->tensors || !d->param_names)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": tensors and param_names must not be NULL (\"\" for none)", fn,
                d->name);
  if (count_names(d->param_names) != d->num_params)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": num_params=%d but param_names=\"%s\"", fn, d->name,
                d->num_params, d->param_names);
  if (!valid_param_names(d->param_names))
    return fail(CT_ERR_INVALID_ARGUMENT,
                "%s: op \"%s\": param_names=\"%s\" is not comma-separated name or name=default (a finite number)", fn,
                d->name, d->param_names);
  const uint32_t all = (1u << CT_DT_COUNT) - 1u;
  if (d->dtype_mask == 0 || (d->dtype_mask & ~all))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": dtype_mask=0x%x names no dtype, or one this library lacks", fn,
                d->name, d->dtype_mask);
  std::unique_ptr<PluginOp> p(new PluginOp);
  std::memset(&p->def, 0, sizeof p->def);
  if (!parse_tensor_spec(d->tensors, &p->def, p->names, sizeof p->names, p->store, sizeof p->store))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": tensors=\"%s\" is not \"inputs|outputs\" with known roles", fn,
                d->name, d->tensors);
  if (CTStatus s = check_kind(d, p->def)) return s;
  if (d->example && d->kind != CT_KIND_NN)
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: op \"%s\": example is for NN-kind ops (tools invent the arguments of "
                                         "a %s op themselves); leave it NULL", fn, d->name, kind_name(d->kind));

  std::lock_guard<std::mutex> lock(g_ops_mu);
  if (name_taken(d->name))
    return fail(CT_ERR_INVALID_ARGUMENT, "%s: an op named \"%s\" is registered already", fn, d->name);
  Library* lib = loading_library();
  // The same op of an unloaded library: its old id.
  const OpList* old = ops();
  PluginOp* reuse = nullptr;
  if (old)
    for (PluginOp* q : *old)
      if (!q->live.load(std::memory_order_acquire) && !q->staged && same_row(*q, d)) reuse = q;
  int32_t id;
  if (reuse) {
    id = reuse->def.id;
    p.reset();
  } else {
    if (old && old->size() >= (size_t)kMaxPluginOps)
      return fail(CT_ERR_OUT_OF_MEMORY, "%s: \"%s\" would be plugin op number %d; the library holds at most %d",
                  fn, d->name, kMaxPluginOps + 1, kMaxPluginOps);
    OpList* next = new OpList(old ? *old : OpList());
    id = builtin_op_count() + (int32_t)next->size();
    PluginOp* q = p.release();
    q->name = d->name;
    q->summary = d->summary ? d->summary : "";
    q->param_names = d->param_names;
    q->tensors = d->tensors;
    q->dtype_rule = d->dtype_rule && *d->dtype_rule ? d->dtype_rule : dtype_rule_text(d->dtype_mask, d->output_dtype);
    OpDef& o = q->def;
    o.name = q->name.c_str();
    o.summary = q->summary.c_str();
    o.kind = d->kind;
    o.num_params = d->num_params;
    o.param_names = q->param_names.c_str();
    o.dtypes = d->dtype_mask;
    o.dtype_rule = q->dtype_rule.c_str();
    o.output = d->output_dtype;
    o.inplace = d->inplace;
    o.shape_rule = d->shape_rule;
    o.desc_type = d->kind == CT_KIND_NN ? d->desc_type : CT_DESC_NONE;
    o.desc_size = d->kind == CT_KIND_NN ? (int32_t)d->desc_size : 0;
    o.tensor_names = q->names;
    o.id = id;
    next->push_back(q);
    // Old lists stay reachable: a reader may hold one.
    static std::vector<const OpList*>* retired = new std::vector<const OpList*>;
    if (old) retired->push_back(old);
    g_ops.store(next, std::memory_order_release);
    reuse = q;
  }
  reuse->def.output_shape = d->output_shape;
  reuse->def.reference = d->reference;
  reuse->def.example = d->example;
  reuse->def.owner = lib;
  if (lib) {
    reuse->fresh = reuse->def.id >= builtin_op_count() + (old ? (int32_t)old->size() : 0);
    reuse->staged = true;
    if (!t_staged) t_staged = new std::vector<PluginOp*>;
    t_staged->push_back(reuse);
  } else {
    set_live(reuse, true);
  }
  *op = id;
  return CT_OK;
}

void commit_staged_ops(Library* lib) {
  std::lock_guard<std::mutex> lock(g_ops_mu);
  if (!t_staged) return;
  for (PluginOp* p : *t_staged) {
    p->staged = false;
    p->fresh = false;
    set_live(p, true);
    ++lib->num_ops;
  }
  delete t_staged;
  t_staged = nullptr;
}

void drop_staged_ops() {
  std::lock_guard<std::mutex> lock(g_ops_mu);
  if (!t_staged) return;
  for (PluginOp* p : *t_staged) {
    p->staged = false;
    p->def.owner = nullptr;
  }
  // The ids this load added go too, so that a failed load leaves
  // ct_op_count() as it was: the list loses its tail of this load's fresh
  // ops (an op registered meanwhile outside any load keeps its id, and the
  // ones before it stay as unused ids).
  const OpList* old = ops();
  size_t keep = old ? old->size() : 0;
  while (keep > 0 && (*old)[keep - 1]->fresh &&
         std::find(t_staged->begin(), t_staged->end(), (*old)[keep - 1]) != t_staged->end())
    --keep;
  for (PluginOp* p : *t_staged) p->fresh = false;
  if (old && keep < old->size()) {
    // Readers may hold the old list or one of the dropped ops: both stay reachable.
    static std::vector<const OpList*>* dropped = new std::vector<const OpList*>;
    dropped->push_back(old);
    g_ops.store(new OpList(old->begin(), old->begin() + (std::ptrdiff_t)keep), std::memory_order_release);
  }
  delete t_staged;
  t_staged = nullptr;
}

void retire_ops(const Library* lib) {
  std::lock_guard<std::mutex> lock(g_ops_mu);
  if (const OpList* l = ops())
    for (PluginOp* p : *l)
      if (p->def.owner == lib) set_live(p, false);
}

std::vector<int32_t> library_ops(const Library* lib) {
  std::lock_guard<std::mutex> lock(g_ops_mu);
  std::vector<int32_t> ids;
  if (const OpList* l = ops())
    for (const PluginOp* p : *l)
      // Live ones only: an unloaded library's ops keep their owner pointer, and
      // a record freed by reclamation may come back at the same address.
      if (p->def.owner == lib && !p->staged && p->live.load(std::memory_order_acquire)) ids.push_back(p->def.id);
  return ids;
}

int32_t plugin_op_ids() {
  const OpList* l = ops();
  return l ? (int32_t)l->size() : 0;
}

const OpDef* plugin_op_def_any(int32_t op) {
  PluginOp* p = plugin_op(op);
  return p ? &p->def : nullptr;
}

std::atomic<const OpDef*> g_plugin_live[kMaxPluginOps];

CTStatus no_op(const char* fn, int32_t op) {
  if (const PluginOp* p = plugin_op(op))
    return fail(CT_ERR_NOT_FOUND, "%s: op=%d (%s) was unloaded with its library", fn, op, p->name.c_str());
  return fail(CT_ERR_NOT_FOUND, "%s: op=%d is not an op id (0..%d)", fn, op, op_count() - 1);
}

}  // namespace ct
