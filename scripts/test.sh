#!/usr/bin/env bash
# Every test: the Release build with all CTest tests (Catch2 suites, header,
# symbol and install checks, the Python bindings' pytest suite with ONNX's
# node tests), then the Catch2 suites again under AddressSanitizer +
# UndefinedBehaviorSanitizer, the concurrency test under ThreadSanitizer,
# then `pip install .` and an import of the installed package from another
# directory.
#   scripts/test.sh            (all of it)
#   CT_SKIP_SANITIZERS=1 scripts/test.sh   (neither the ASan + UBSan nor the ThreadSanitizer step)
#   CT_SKIP_TSAN=1 scripts/test.sh         (without the ThreadSanitizer step only)
#   CT_SKIP_FUZZ=1 scripts/test.sh         (without the fuzzing step, scripts/fuzz.sh)
#   CT_FRAMEWORKS=0 scripts/test.sh   (without torch, jax and dask: their adapters' tests are left out)
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD"  # cache hits across checkouts in different folders
export CCACHE_NOHASHDIR=true   # ... also for -g (sanitizer) builds
scripts/deps.sh
jobs=$(nproc)

echo "== Release build + ctest"
fw=ON; [ "${CT_FRAMEWORKS:-1}" = "0" ] && fw=OFF
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCT_BUILD_PYTHON=ON -DCT_FRAMEWORK_TESTS=$fw \
      -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

if [ "${CT_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== ASan + UBSan build + ctest"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCT_SANITIZE=address,undefined -DCT_BUILD_BENCH=OFF -DCT_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-asan -j"$jobs"
  # protect_shadow_gap=0: with an NVIDIA driver present, CUDA cannot map its
  # memory under ASan otherwise (the [cuda] cases on a GPU machine)
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:protect_shadow_gap=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs"
fi
if [ "${CT_SKIP_FUZZ:-0}" != "1" ]; then
  echo "== fuzzing (60 s per harness)"
  # The libFuzzer harnesses of tests/fuzz, built with clang in build-fuzz.
  scripts/fuzz.sh 60
fi
if [ "${CT_SKIP_SANITIZERS:-0}" != "1" ] && [ "${CT_SKIP_TSAN:-0}" != "1" ]; then
  echo "== ThreadSanitizer build + concurrency test"
  # Only what tests/test_concurrency.cpp needs (the library, the doc plugin, the
  # test): eight threads at once, every result compared with a serial run.
  # OpenMP is kept out of its threads (the file's head says how and why).
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCT_SANITIZE=thread \
        -DCT_BUILD_PYTHON=OFF -DCT_BUILD_BENCH=OFF -DCT_BUILD_EXAMPLES=OFF -DCT_BUILD_TOOLS=OFF \
        -DCT_BUILD_CUDA=OFF -DCT_BUILD_OPENCL=OFF >/dev/null
  cmake --build build-tsan -j"$jobs" --target ct_concurrency_tests
  ctest --test-dir build-tsan --output-on-failure -R '^concurrency$'
fi
echo "== pip install . (the Python package), then import it from elsewhere"
python3 -m pip install -q --root-user-action=ignore . || python3 -m pip install -q --break-system-packages .
(cd "$(mktemp -d)" && python3 -c "
import numpy as np, ctensor
a = np.arange(6, dtype=np.float32).reshape(2, 3)
r = ctensor.add(a, a.T.T)
assert (np.from_dlpack(r) == 2 * a).all() and ctensor.__file__.find('site-packages') >= 0, ctensor.__file__
print('installed ctensor', ctensor.__version__, 'at', ctensor.__file__)
")
echo "== all tests passed"
