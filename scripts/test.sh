#!/usr/bin/env bash
# Every test: the Release build with all CTest tests (Catch2 suites, header,
# symbol and install checks), then the Catch2 suites again under
# AddressSanitizer + UndefinedBehaviorSanitizer.
#   scripts/test.sh            (both)
#   CT_SKIP_SANITIZERS=1 scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD"  # cache hits across checkouts in different folders
export CCACHE_NOHASHDIR=true   # ... also for -g (sanitizer) builds
scripts/deps.sh
jobs=$(nproc)

echo "== Release build + ctest"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

if [ "${CT_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== ASan + UBSan build + ctest"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCT_SANITIZE=address,undefined -DCT_BUILD_BENCH=OFF -DCT_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-asan -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs"
fi
echo "== all tests passed"
