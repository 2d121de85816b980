#!/usr/bin/env bash
# Fuzzes the C ABI with libFuzzer: builds build-fuzz with clang (ASan +
# UBSan; the library instrumented for coverage) and runs each harness of
# tests/fuzz (abi, nn, plugin) for the given seconds on a temporary copy of
# its checked-in corpus (tests/fuzz/corpus/<harness>).
#   scripts/fuzz.sh          (60 s per harness)
#   scripts/fuzz.sh 600
# Prints, per harness, the inputs it ran; exits non-zero on any crash,
# sanitizer report, broken contract (fuzz_common.h), timeout or leak, after
# printing the end of that harness's log (the input is saved under
# build-fuzz/crash-<harness>-*, and printed in base64 so that a failure on a
# machine that is gone, such as CI's, can still be replayed: base64 -d > FILE,
# then build-fuzz/tests/fuzz/fuzz_<harness> FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
export CCACHE_BASEDIR="$PWD"  # cache hits across checkouts in different folders
export CCACHE_NOHASHDIR=true
jobs=$(nproc)
harnesses=(abi nn plugin)

# Only what the harnesses need: the library and them.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCT_SANITIZE=address,undefined -DCT_FUZZ=ON -DCT_BUILD_TESTS=OFF -DCT_BUILD_PYTHON=OFF -DCT_BUILD_BENCH=OFF \
  -DCT_BUILD_EXAMPLES=OFF -DCT_BUILD_TOOLS=OFF -DCT_BUILD_CUDA=OFF -DCT_BUILD_OPENCL=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target "${harnesses[@]/#/fuzz_}"

export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export CT_NO_MODULES=1 OMP_NUM_THREADS=1
status=0
for h in "${harnesses[@]}"; do
  work=$(mktemp -d)
  stamp=$(mktemp)  # artifacts newer than this are this run's
  cp tests/fuzz/corpus/"$h"/* "$work"/
  log=build-fuzz/fuzz_$h.log
  if build-fuzz/tests/fuzz/fuzz_"$h" -max_total_time="$secs" -seed="${CT_FUZZ_SEED:-1}" -print_final_stats=1 -timeout=30 -rss_limit_mb=4096 \
       -max_len=2048 -artifact_prefix=build-fuzz/crash-"$h"- "$work" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz_$h: ${runs:-?} inputs in $secs s, no crash"
  else
    echo "fuzz_$h: FAILED (log: $log)"
    tail -n 60 "$log"
    # The failing input (-max_len=2048: at most 2.8 KB of base64).
    find build-fuzz -maxdepth 1 -name "crash-$h-*" -newer "$stamp" | while read -r f; do
      echo "fuzz_$h: input $f ($(stat -c %s "$f") bytes), base64 (replay: base64 -d > in; build-fuzz/tests/fuzz/fuzz_$h in):"
      base64 -w 76 "$f"
    done
    status=1
  fi
  rm -rf "$work" "$stamp"
done
exit $status
