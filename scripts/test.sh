#!/usr/bin/env bash
# Every test: the Release build with all CTest tests (Catch2 suites, header,
# symbol and install checks, the Python bindings' pytest suite with ONNX's
# node tests), then the Catch2 suites again under AddressSanitizer +
# UndefinedBehaviorSanitizer, then `pip install .` and an import of the
# installed package from another directory.
#   scripts/test.sh            (both)
#   CT_SKIP_SANITIZERS=1 scripts/test.sh
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
