// epoch.cc — the reader slots and the retired list of epoch-based
// reclamation (epoch.h).
#include "core/epoch.h"

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#ifdef __linux__
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace ct {

std::atomic<uint64_t> g_epoch{1};

namespace {

bool register_asymmetric_fence() {
#if defined(__linux__) && defined(__NR_membarrier) && !defined(__SANITIZE_THREAD__)
  // Readers skip their barrier only if every later heavy_fence() can run.
  const long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return false;  // (ThreadSanitizer does not model membarrier: readers keep their exchange there)
#endif
}

// The writer's half of the asymmetric fence: a full barrier on every thread
// of the process that is running now (a thread not running passed one when
// it was switched out). After it, a reader's epoch store is visible here, or
// that reader's registry loads come after our publication.
// False if it failed (the kernel documents no failure once registered):
// then the caller must assume any reader may still hold anything.
bool heavy_fence() {
#if defined(__linux__) && defined(__NR_membarrier)
  if (g_asymmetric_fence) return syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return true;
}

std::atomic<ReaderSlot*> g_slots{nullptr};  // a list that only grows; slots are reused

// Gives the slot back when its thread exits.
struct SlotOwner {
  ReaderSlot* slot = nullptr;
  ~SlotOwner() {
    if (!slot) return;
    slot->depth = 0;
    slot->epoch.store(0, std::memory_order_release);
    slot->used.store(false, std::memory_order_release);
    t_reader_slot = nullptr;
  }
};
thread_local SlotOwner t_owner;

ReaderSlot* acquire_slot() {
  for (ReaderSlot* s = g_slots.load(std::memory_order_acquire); s; s = s->next) {
    bool expected = false;
    if (!s->used.load(std::memory_order_relaxed) &&
        s->used.compare_exchange_strong(expected, true, std::memory_order_acq_rel))
      return s;
  }
  ReaderSlot* s = new ReaderSlot;  // never freed: reachable from g_slots
  s->used.store(true, std::memory_order_relaxed);
  ReaderSlot* head = g_slots.load(std::memory_order_relaxed);
  do {
    s->next = head;
  } while (!g_slots.compare_exchange_weak(head, s, std::memory_order_release, std::memory_order_relaxed));
  return s;
}

struct Retired {
  void* p;
  void (*del)(void*);
  uint64_t tag;  // the epoch it was retired in
};
std::mutex g_retired_mu;
std::vector<Retired>* g_retired = new std::vector<Retired>;  // never destroyed: exit may race readers

}  // namespace

const bool g_asymmetric_fence = register_asymmetric_fence();

__thread ReaderSlot* t_reader_slot __attribute__((tls_model("initial-exec"))) = nullptr;

ReaderSlot* acquire_reader_slot() {
  if (!t_owner.slot) t_owner.slot = acquire_slot();  // t_owner gives it back at thread exit
  t_reader_slot = t_owner.slot;
  return t_owner.slot;
}

bool wait_for_readers() {
  const ReaderSlot* self = t_reader_slot;
  // Sections that record an epoch after this increment began after it, and
  // read the registry as published before it.
  const uint64_t tag = g_epoch.fetch_add(1, std::memory_order_seq_cst);
  const bool fenced = heavy_fence();
  for (ReaderSlot* s = g_slots.load(std::memory_order_acquire); s; s = s->next) {
    if (s == self) continue;
    for (unsigned spins = 0;; ++spins) {
      const uint64_t e = s->epoch.load(std::memory_order_seq_cst);
      if (e == 0 || e > tag) break;
      if (spins < 64) std::this_thread::yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(spins < 1024 ? 20 : 500));
    }
  }
  return fenced;
}

void retire(void* p, void (*del)(void*)) {
  std::lock_guard<std::mutex> lock(g_retired_mu);
  // Sections that start after this increment read the registry published
  // before it, so they cannot see p.
  const uint64_t tag = g_epoch.fetch_add(1, std::memory_order_seq_cst);
  if (p) g_retired->push_back(Retired{p, del, tag});
  if (!heavy_fence()) return;  // no proof that readers are done: keep everything for a later call
  uint64_t oldest = UINT64_MAX;  // the oldest open section
  for (ReaderSlot* s = g_slots.load(std::memory_order_acquire); s; s = s->next) {
    const uint64_t e = s->epoch.load(std::memory_order_seq_cst);
    if (e != 0 && e < oldest) oldest = e;
  }
  size_t kept = 0;
  for (Retired& r : *g_retired) {
    if (r.tag < oldest) r.del(r.p);  // every open section began after r was replaced
    else (*g_retired)[kept++] = r;
  }
  g_retired->resize(kept);
}

}  // namespace ct
