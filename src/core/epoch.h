// epoch.h — safe reclamation of what registrations replace (registry
// snapshots, backends, their caches): every entry point is a read section
// that records the epoch it started in; a replaced object is freed once no
// section that could have seen it is still open (epoch-based reclamation).
// Readers pay one atomic exchange per call and never wait; writers
// (registrations, plugin loads) never wait either. Unloading a plugin waits
// for the calls already running (wait_for_readers): its code must outlive
// them, and a call then needs no reference count on the plugin.
#ifndef CTENSOR_SRC_CORE_EPOCH_H_
#define CTENSOR_SRC_CORE_EPOCH_H_

#include <atomic>
#include <cstdint>

namespace ct {

// One per thread that ever entered the library (reused after it exits).
struct ReaderSlot {
  std::atomic<uint64_t> epoch{0};  // 0: outside any section
  std::atomic<bool> used{false};
  ReaderSlot* next = nullptr;
  int depth = 0;  // nested sections (an entry point calling another)
};

extern std::atomic<uint64_t> g_epoch;

// This thread's slot: a plain TLS pointer (initial-exec: one load, no
// __tls_get_addr or init guard on the hot path), set on the thread's first call.
extern __thread ReaderSlot* t_reader_slot __attribute__((tls_model("initial-exec")));
ReaderSlot* acquire_reader_slot();
inline ReaderSlot* reader_slot() {
  ReaderSlot* s = t_reader_slot;
  return s ? s : acquire_reader_slot();
}

// True when writers can make every running thread of the process execute a
// full memory barrier (Linux membarrier, private expedited, registered when
// the library loads): then a reader publishes its epoch with a plain store
// and the writer pays for the ordering (the asymmetric fence of liburcu's
// "memb" flavour). False where the kernel or a seccomp filter refuses it:
// readers then publish with an exchange, a full barrier of their own.
extern const bool g_asymmetric_fence;

// Open for the whole of an entry point (CT_API_BEGIN opens one).
class ReadSection {
 public:
  ReadSection() : s_(reader_slot()) {
    // The registry loads below must not be ordered before the epoch store:
    // either the writer's barrier (heavy_fence) orders them, or the
    // exchange does. Either way they see every object published before the
    // epoch we record, or the writer sees our epoch.
    if (s_->depth++ == 0) {
      const uint64_t e = g_epoch.load(std::memory_order_acquire);
      if (__builtin_expect(g_asymmetric_fence, 1)) {
        s_->epoch.store(e, std::memory_order_relaxed);
        std::atomic_signal_fence(std::memory_order_seq_cst);  // the compiler keeps the order; the writer's membarrier the CPU's
      } else {
        s_->epoch.exchange(e, std::memory_order_seq_cst);
      }
    }
  }
  ~ReadSection() {
    if (--s_->depth == 0) s_->epoch.store(0, std::memory_order_release);
  }
  ReadSection(const ReadSection&) = delete;
  ReadSection& operator=(const ReadSection&) = delete;

 private:
  ReaderSlot* s_;
};

// Returns once every section that other threads had open when it was
// called has closed (sections begun later see the registry as it is now).
// It waits: call it with no lock held that a section might take, and not
// from inside a section of this thread's other than the caller's own
// outermost one. ct_library_unload uses it so that no call can still be in
// a plugin's code when the plugin is closed: calls pay nothing for that.
// False when that could not be made sure (the writer's half of the
// asymmetric fence failed): the caller must then keep what it would free.
bool wait_for_readers();

// Frees p with del once every section open now has closed. Call after the
// object became unreachable from the published registry.
void retire(void* p, void (*del)(void*));

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_EPOCH_H_
