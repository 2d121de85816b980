#!/usr/bin/env bash
# The main job: build ctensor (library, Python module, the `ctensor` tool),
# run the examples, then on every device present:
#   ctensor info                       versions, devices, measured limits
#   ctensor check                      every op x dtype against the reference
#   ctensor bench --quick --compare    every op: time, GB/s or GFLOP/s, % of the limit,
#                                      NumPy, PyTorch and oneDNN side by side, and a plot
#   bench_opencl                       (with an OpenCL device) the module's overhead
#   scripts/run.sh [--full] [--suites]
#     --full    the full bench (more sizes/repeats) instead of --quick
#     --suites  also the detailed benchmark suites (bench/run.py: elementwise,
#               broadcast/reduce, NN against oneDNN; the Python bindings' overhead)
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD"  # cache hits across checkouts in different folders
full=0; suites=0
for a in "$@"; do
  case "$a" in
    --full) full=1 ;;
    --suites) suites=1 ;;
    --quick) ;;  # the default
    *) echo "usage: scripts/run.sh [--full] [--suites]" >&2; exit 2 ;;
  esac
done
scripts/deps.sh
# PyTorch's CPU ops are the bench's second baseline: installed here (not for
# the tests) unless CT_BENCH_TORCH=0. PyPI's wheel is ~3 GB with its CUDA
# libraries; a failed install only leaves the PyTorch column out.
if [ "${CT_BENCH_TORCH:-1}" != "0" ] && ! python3 -c "import torch" 2>/dev/null; then
  echo "deps: installing torch (PyPI; the bench's PyTorch baseline; CT_BENCH_TORCH=0 skips it)"
  python3 -m pip install -q torch || python3 -m pip install -q --break-system-packages torch ||
    echo "deps: torch could not be installed; the bench runs without its PyTorch column" >&2
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCT_BUILD_PYTHON=ON \
      -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build build -j"$(nproc)"
echo "== examples"
build/examples/ctensor_example_c
build/examples/ctensor_example_cpp
for fw in torch jax dask; do  # the framework adapters' examples, where deps.sh installed the framework
  if python3 -c "import $fw" 2>/dev/null; then
    echo "-- examples/frameworks/${fw}_example.py"
    PYTHONPATH="$PWD/build/python${PYTHONPATH:+:$PYTHONPATH}" python3 "examples/frameworks/${fw}_example.py"
  fi
done
echo "== ctensor info"
build/tools/ctensor info
echo "== ctensor check"
build/tools/ctensor check --json build/check.json
echo "== ctensor bench"
quick=--quick; [ "$full" = 1 ] && quick=""
export PYTHONPATH="$PWD/build/python${PYTHONPATH:+:$PYTHONPATH}"
build/tools/ctensor bench $quick --compare --json build/bench.json --csv build/bench.csv --plot build/bench.png
echo "bench results: build/bench.json, build/bench.csv, plot build/bench.png"
if [ -x build/bench/ct_bench_opencl ]; then
  echo "== OpenCL module overhead: ops vs the device's own copy, ct_matmul vs CLBlast on the same queue"
  build/bench/ct_bench_opencl
fi
if [ "$suites" = 1 ]; then
  q=""; [ "$full" = 1 ] || q=--quick
  echo "== elementwise suite"
  python3 bench/run.py build/bench/ct_bench_elementwise $q
  echo "== broadcast / reduce suite"
  python3 bench/run.py --suite broadcast_reduce build/bench/ct_bench_broadcast_reduce $q
  echo "== NN suite (conv, matmul vs oneDNN and NumPy)"
  python3 bench/run.py --suite nn build/bench/ct_bench_nn $q
  echo "== Python bindings: per-call overhead vs NumPy, large-array cost vs the C benchmark"
  python3 bench/bench_python.py $q
fi
