// alloc_fail_hook.h — allocation failure on demand, for ct_exhaustion_tests
// only (alloc_fail_hook.cpp replaces the global operator new and delete in
// every form, and malloc and its relatives where no sanitizer owns them):
// while armed, the countdown-th allocation from then on and every one after
// it fail (operator new throws std::bad_alloc, the nothrow forms and malloc
// return NULL), on every thread.
#ifndef CTENSOR_TESTS_ALLOC_FAIL_HOOK_H_
#define CTENSOR_TESTS_ALLOC_FAIL_HOOK_H_

namespace cthook {

// From now on, allocations 0 .. countdown-1 succeed and the later ones fail.
void arm(long countdown);
// Stops failing; returns how many allocations were asked for while armed.
long disarm();
// Allocations refused since the process started.
long refused();
// Whether malloc, calloc, realloc, aligned_alloc and posix_memalign fail too
// (not in a sanitizer build, whose runtime owns them).
bool malloc_hooked();

}  // namespace cthook

#endif  // CTENSOR_TESTS_ALLOC_FAIL_HOOK_H_
