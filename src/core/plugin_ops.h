// plugin_ops.h — ops that plugins add at run time (host->register_op): ids
// after the built-ins, staged while their library loads, live until it is
// unloaded; and the message for an op id that is not (or no longer) there.
#ifndef CTENSOR_SRC_CORE_PLUGIN_OPS_H_
#define CTENSOR_SRC_CORE_PLUGIN_OPS_H_

#include <ctensor/plugin.h>

#include "core/error.h"

#include <atomic>
#include <vector>

#include "core/registry.h"

namespace ct {

struct Library;

// host->register_op: validates desc, gives the op an id (the old one for
// the same op registered before by an unloaded library). Inside a load the
// op is staged for that library; otherwise it is live at once.
CTStatus register_op(const CTOpDesc* desc, int32_t* op);

// The ops a load staged become live (commit) or are dropped.
void commit_staged_ops(Library* lib);
void drop_staged_ops();
// The ops of lib stop being callable (its unload).
void retire_ops(const Library* lib);

// The ids of the ops lib registered (staged ones excluded), in id order.
std::vector<int32_t> library_ops(const Library* lib);

// Plugin op ids given so far.
int32_t plugin_op_ids();
// The live plugin ops by id - builtin_op_count() (nullptr: none, or its
// library is unloaded): op_def's lookup, one load. Ids are given up to
// kMaxPluginOps (an op loaded again gets its old id).
constexpr int32_t kMaxPluginOps = 4096;
extern std::atomic<const OpDef*> g_plugin_live[kMaxPluginOps];
// A plugin op's record whether live or not (records are never freed), or
// nullptr for an id no plugin op has.
const OpDef* plugin_op_def_any(int32_t op);

// CT_ERR_NOT_FOUND for an op id that names no op: "not an op id (0..N)",
// or "was unloaded with its library" for a plugin op.
CT_COLD CTStatus no_op(const char* fn, int32_t op);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_PLUGIN_OPS_H_
